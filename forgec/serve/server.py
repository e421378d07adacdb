"""`forgec serve`: a build's environments (one, or all of them) as an MCP server (official `mcp` SDK, low-level `Server`).

* `tools/list` lists the env's tools: name, description and the input JSON Schema
  the env validates arguments against (`TOOLS` of the generated module, derived
  from the docs); title, annotations and output schema from the original docs
  where `docmeta` finds them (else read-only/destructive hints from the tool kinds).
* `tools/call` runs `Env.step` through `runtime.toolcalls.execute`; a result is
  the JSON text plus `structuredContent` (an object result as is, anything else
  as `{"result": value}`); a rejected call is a tool error (`isError`) carrying
  the env's message, and the env is transactional, so the state is unchanged.

Sessions: over stdio the process serves one client, so there is one session
("stdio"). Over streamable HTTP every MCP session (`Mcp-Session-Id`) owns its
env, created at its first request (tools/list or tools/call) at `--task` (or `?task=ID` in the URL it
connected to). Per-session state needs the protocol's sessions, which the
2026-07-28 stateless era does not have: over HTTP `server/discover` therefore
advertises only the handshake versions, so clients negotiate the stateful
`initialize` handshake (what the SDK's `mode="auto"` does for such servers).

Several envs on one server (no --env on a multi-env build): over HTTP each env is its own endpoint,
`/mcp/<env>` (the same transport, session table and security as `/mcp`; a session stays in its env); over
stdio the one client sees every env's tools named `<env>__<tool>` until the harness plays a task, then that
env's own names (`_StdioLink`, with a tools/list_changed notification or a subscriptions/listen event).

The evaluation channel is not a tool, so the agent never sees it: over HTTP it
is `/forgec/...` routes on the same server (`evalroutes.py`); over stdio, the
process that owns the pipe sends the JSON-RPC requests `forgec/tasks`, `forgec/reset`,
`forgec/state`, `forgec/score` and the episode requests `forgec/episode/start|say|user_turn|score`
(`episodes.py`: eval's episode, the agent's calls arriving as tools/call on a session the harness named and
attached with `?session=ID`, a `Forgec-Session` header or `_meta["forgec/session"]`).
All score with `runtime.reward`, as `forgec eval`.
Both need the evaluation token (`security.py`): over HTTP as a bearer header,
over stdio as the request's `token` param; without it nothing but the tools
is reachable.
"""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ConfigDict

import forgec
from forgec.runtime.loader import BuildError
from forgec.serve.evalroutes import token_ok
from forgec.serve.sessions import Session, SessionError, SessionTable, said_to_user
from forgec.serve.docmeta import doc_meta

STDIO_SESSION = "stdio"
EVAL_METHODS = ("forgec/reset", "forgec/state", "forgec/score", "forgec/tasks", "forgec/episode/start", "forgec/episode/say",
                "forgec/episode/user_turn", "forgec/episode/score")
ENV_SEP = "__"  # a multi-env stdio server names a tool <env>__<tool> until the client plays a task
SESSION_PARAM = "session"  # /mcp?session=ID: attach the MCP client to a session the harness started (episode mode)
SESSION_HEADER = "forgec-session"  # the same as a header
SESSION_META = "forgec/session"  # the same as a request's _meta key


def mcp_tools(tools: list[dict], kinds: dict[str, str], meta: dict[str, dict] | None = None) -> list[types.Tool]:
    """The env's OpenAI-format tool schemas as MCP tools: the same input schemas; title, annotations and output
    schema from the original docs where `docmeta` found them, else read-only/destructive hints from the tool kinds."""
    out = []
    for t in tools:
        fn = t["function"]
        kind = kinds.get(fn["name"], "")
        m = (meta or {}).get(fn["name"], {})
        ann = None
        if m.get("annotations"):
            try:
                ann = types.ToolAnnotations.model_validate(m["annotations"])
            except ValueError:
                ann = None
        if ann is None:
            ann = types.ToolAnnotations(read_only_hint=kind in ("read", "search"), destructive_hint=kind == "delete",
                                        open_world_hint=False)
        schema = fn.get("parameters") or {"type": "object", "properties": {}}
        out.append(types.Tool(name=fn["name"], title=m.get("title"), description=fn.get("description") or None, input_schema=schema,
                              output_schema=m.get("output_schema"), annotations=ann))
    return out


def call_result(out: Any) -> types.CallToolResult:
    """A `CallOutcome` as an MCP result: structured content on success, a tool error with the env's message otherwise."""
    if out.ok:
        sc = out.result if isinstance(out.result, dict) else {"result": out.result}
        return types.CallToolResult(content=[types.TextContent(type="text", text=out.content)], structured_content=sc)
    return types.CallToolResult(content=[types.TextContent(type="text", text=out.error or "error")], is_error=True)


def _session_id(ctx: Any) -> str:
    req = ctx.request
    if req is None:
        return STDIO_SESSION
    sid = req.headers.get("mcp-session-id")
    if not sid:
        raise MCPError(types.INVALID_REQUEST, "forgec serve keeps one environment per MCP session: connect with the "
                                              "initialize handshake (the SDK's mode='auto' or 'legacy'), not stateless requests")
    return sid


def _path_env(ctx: Any) -> str | None:
    """The env an HTTP request's path names (`/mcp/<env>`), None on `/mcp` and over stdio."""
    req = ctx.request
    return req.path_params.get("env") if req is not None else None


def attached_session(ctx: Any) -> str | None:
    """The session id a harness attached this MCP request to: `?session=ID` in the URL the client connected to,
    an `Forgec-Session: ID` header, or `_meta: {"forgec/session": ID}` on the request; None when none."""
    req = ctx.request
    sid = None
    if req is not None:
        sid = req.query_params.get(SESSION_PARAM) or req.headers.get(SESSION_HEADER)
    meta = getattr(ctx, "meta", None)
    if not sid and isinstance(meta, dict):
        sid = meta.get(SESSION_META)
    if sid is not None and not isinstance(sid, str):
        raise MCPError(types.INVALID_PARAMS, f"_meta[{SESSION_META!r}] must be a session id string")
    return sid or None


def _task_from_query(ctx: Any, table: SessionTable):
    req = ctx.request
    tid = req.query_params.get("task") if req is not None else None
    if not tid:
        return None
    try:
        return table.task(tid)
    except BuildError as e:
        raise MCPError(types.INVALID_PARAMS, f"{e.message} ({e.help})") from None


def _mcp_error(e: Exception) -> MCPError:
    if isinstance(e, SessionError):
        return MCPError(types.INVALID_REQUEST, f"{e.message} [{e.code}]")
    return MCPError(types.INVALID_PARAMS, f"{e.message} ({e.help})")  # BuildError


def _same_env(s: Session, env: str | None, how: str) -> Session:
    if env is not None and s.world.name != env:
        raise MCPError(types.INVALID_REQUEST, f"{how} is a session of the {s.world.name} environment, not {env}: "
                                              f"connect to /mcp/{s.world.name} [wrong-env]")
    return s


def session_for(ctx: Any, table: SessionTable) -> Session:
    """The session of this MCP request: the one a harness attached it to (`attached_session`), else the MCP
    session's own, made at its first request (in the env of the path, of `?task=`, or the only one) and an error
    once the table let it go. A session keeps its env: a request on another env's path is an error."""
    env = _path_env(ctx)
    try:
        attached = attached_session(ctx)
        if attached is not None:
            return _same_env(table.get(attached), env, f"session {attached!r}")
        sid = _session_id(ctx)
        client = ctx.request.client.host if ctx.request is not None and ctx.request.client else ""
        world = table.world_named(env) if env is not None else None
        s = table.open(sid, lambda: _task_from_query(ctx, table), client, world=world)
    except (SessionError, BuildError) as e:
        raise _mcp_error(e) from None
    return _same_env(s, env, "this MCP session")


class _EvalParams(types.RequestParams):
    """Params of the stdio evaluation requests (`forgec/reset`: task; `forgec/score`: said or messages; `forgec/state`:
    full; `forgec/tasks`: env; `forgec/episode/*`: session, task, content, max_turns, max_tool_calls)."""

    model_config = ConfigDict(alias_generator=None, populate_by_name=True)  # the names as written (max_turns), as over HTTP

    task: str | None = None
    said: str | None = None
    messages: list[dict] | None = None
    full: bool = False
    token: str | None = None
    session: str | None = None
    content: str | None = None
    env: str | None = None
    max_turns: int | None = None
    max_tool_calls: int | None = None


class _Catalog:
    """The MCP tools of every served env (name -> list), their output-schema validators, and for a multi-env stdio
    connection not yet playing a task, all of them named `<env>__<tool>`."""

    def __init__(self, table: SessionTable, docs: list | None):
        self.tools: dict[str, list[types.Tool]] = {}
        self.validators: dict[str, dict[str, Any]] = {}
        for name, w in table.worlds.items():
            meta = doc_meta(w.build, name, w.tools, docs)
            kinds = dict(getattr(w.module, "TOOL_KINDS", {}) or {})
            served: dict[str, set] = {}
            for n, wn in (getattr(w.module, "WIRE_NAMES", None) or {}).items():
                if n in kinds:
                    served.setdefault(wn, set()).add(kinds[n])
            kinds |= {wn: next(iter(ks)) if len(ks) == 1 else "action" for wn, ks in served.items()}  # as served: acts of one tool that differ act
            self.tools[name] = mcp_tools(w.tools, kinds, meta)
            self.validators[name] = _output_validators(self.tools[name])
        self.prefixed = [t.model_copy(update={"name": f"{env}{ENV_SEP}{t.name}"}) for env, ts in self.tools.items() for t in ts]


class _StdioLink:
    """The one client of a stdio server: which session its tools/call reach (`current`), and, on a multi-env server,
    the `<env>__<tool>` sessions it uses before it plays a task. Playing a task (forgec/reset with a task,
    forgec/episode/start) makes that session current; its env's tools are then served under their own names and the
    client is told with notifications/tools/list_changed."""

    def __init__(self, table: SessionTable):
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        self.table = table
        self.current: str | None = STDIO_SESSION if table.world is not None else None
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus, max_subscriptions=16)  # subscriptions/listen (2026-07-28 clients)

    def session(self, ctx: Any) -> Session | None:
        try:
            attached = attached_session(ctx)
            if attached is not None:
                return self.table.get(attached)
            return self.table.get(self.current) if self.current is not None else None
        except SessionError as e:
            raise _mcp_error(e) from None

    def env(self) -> str | None:
        s = self.table._s.get(self.current) if self.current is not None else None
        return s.world.name if s is not None else None

    async def bind(self, sid: str, ctx: Any) -> None:
        before = self.env()
        self.current = sid
        if self.table.multi and self.env() != before:
            try:  # a handshake-era client hears it on the connection (a 2026-07-28 one through subscriptions/listen)
                await ctx.session.send_tool_list_changed()
            except Exception:  # noqa: BLE001 - the client went away: nothing to tell
                pass
            await self.bus.publish(_tools_list_changed())

    def resolve(self, ctx: Any, name: str) -> tuple[Session | None, str, str | None]:
        """(session, tool name in its env, error text) for a stdio tools/call of `name`."""
        s = self.session(ctx)
        if not self.table.multi:
            return s, name, None
        env, sep, tool = name.partition(ENV_SEP)
        if sep and env in self.table.worlds:
            if s is None:  # not playing a task: each env's tools reach that env's own session
                try:
                    s = self.table.open(f"{STDIO_SESSION}:{env}", lambda: None, world=self.table.worlds[env])
                except SessionError as e:
                    raise _mcp_error(e) from None
            elif s.world.name != env:
                return s, name, (f"unknown tool {name!r}: this connection now plays a task of {s.world.name}, whose tools "
                                 "are served under their own names (tools/list)")
            return s, tool, None
        if s is None:
            return None, name, (f"unknown tool {name!r}: this server serves {len(self.table.worlds)} environments "
                                f"({', '.join(self.table.worlds)}); over stdio their tools are named <env>{ENV_SEP}<tool> "
                                "(tools/list) until the harness starts a task")
        return s, name, None


def _tools_list_changed():
    from mcp.server.subscriptions import ToolsListChanged

    return ToolsListChanged()


def build_server(table: SessionTable, *, transport: str, token: str, docs: list | None = None) -> Server:
    """The MCP server for the envs of `table` (one, or every env of a build); `token`: the evaluation channel's
    (stdio requests carry it as their `token` param); `docs`: the doc files for titles/annotations/output schemas."""

    catalog = _Catalog(table, docs)
    warned: set[tuple[str, str]] = set()
    link = _StdioLink(table) if transport != "http" else None

    def listed(ctx) -> list[types.Tool]:
        if link is not None:
            s = link.session(ctx)
            return catalog.tools[s.world.name] if s is not None else catalog.prefixed
        req = ctx.request
        if req is not None and (req.headers.get("mcp-session-id") or attached_session(ctx)):
            return catalog.tools[session_for(ctx, table).world.name]  # the session's env exists from its first request
        env = _path_env(ctx) or (table.world.name if table.world is not None else None)
        if env is None:
            tq = _task_from_query(ctx, table)
            env = tq.env if tq is not None else None
        if env is None:
            raise MCPError(types.INVALID_REQUEST, f"this server serves {len(table.worlds)} environments: connect to "
                                                  f"/mcp/<env> ({', '.join(table.worlds)})")
        return catalog.tools[env]

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed(ctx))

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        if link is not None:
            s, name, err = link.resolve(ctx, name)
            if err is not None:
                if s is not None:
                    s.errors += 1
                return types.CallToolResult(content=[types.TextContent(type="text", text=err)], is_error=True)
            if s is None:
                raise MCPError(types.INVALID_REQUEST, "no session")  # pragma: no cover - resolve returns an error text
        else:
            s = session_for(ctx, table)
        res = call_result(s.call(name, params.arguments if params.arguments is not None else {}))
        env = s.world.name
        v = catalog.validators[env].get(name)
        if v is not None and not res.is_error and (env, name) not in warned and not v.is_valid(res.structured_content):
            warned.add((env, name))  # the recorded results kept the doc's schema, this one does not: say so, once
            eprint(f"forgec serve: warning: a result of {name} does not match the output schema of the docs "
                   "(MCP clients that validate results will reject it)")
        return res

    if table.world is not None:
        name = f"forgec-{table.world.name}"
        instructions = f"Tools of the {table.world.name} environment (a forgec simulation: calls change only this session's state)."
    else:
        envs = ", ".join(table.worlds)
        name = "forgec"
        instructions = (f"Tools of the environments {envs} (a forgec simulation: calls change only this session's state). "
                        f"Over HTTP each environment is its own endpoint, /mcp/<env>; over stdio the tools are named "
                        f"<env>{ENV_SEP}<tool> until the harness starts a task.")
    server = Server(name, version=forgec.__version__, instructions=instructions, on_list_tools=on_list_tools,
                    on_call_tool=on_call_tool, on_subscriptions_listen=link.listen if link is not None and table.multi else None)
    if transport == "http":
        async def on_discover(ctx, params) -> types.DiscoverResult:
            return types.DiscoverResult(supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS), capabilities=server.get_capabilities())

        server.add_request_handler("server/discover", types.RequestParams, on_discover)
    else:
        for method in EVAL_METHODS:
            server.add_request_handler(method, _EvalParams, _stdio_eval(table, method, token, link))
    return server


def _output_validators(tools: list[types.Tool]) -> dict[str, Any]:
    from jsonschema.validators import validator_for

    return {t.name: validator_for(t.output_schema)(t.output_schema) for t in tools if t.output_schema is not None}


def _stdio_eval(table: SessionTable, method: str, token: str, link: _StdioLink):
    from forgec.serve.episodes import start_episode

    async def handler(ctx, params: _EvalParams) -> Any:
        if not token_ok(token, params.token):
            raise MCPError(types.INVALID_REQUEST, f"{method} needs the evaluation token as its 'token' param (start "
                                                  "forgec serve with $FORGEC_SERVE_EVAL_TOKEN or --eval-token-file)")
        try:
            if method == "forgec/tasks":
                return {"tasks": table.tasks_listing(params.env)}
            if method == "forgec/episode/start":
                if not params.task:
                    raise ValueError("forgec/episode/start needs a task id: {\"task\": \"<env>/<blueprint>\"}")
                sid = params.session or link.current or STDIO_SESSION
                s, first = await start_episode(table, sid, table.task(params.task), max_turns=params.max_turns,
                                               max_tool_calls=params.max_tool_calls)
                await link.bind(sid, ctx)
                return first
            if method.startswith("forgec/episode/"):
                sid = params.session or link.current
                if sid is None:
                    raise ValueError("no episode: start one with forgec/episode/start")
                s = table.with_episode(sid)
                if method == "forgec/episode/say":
                    return {"session": sid, **s.episode.say(_text(params.content))}
                if method == "forgec/episode/user_turn":
                    return {"session": sid, **await s.episode.user_turn(_text(params.content))}
                return {"session": sid, **await s.episode.score(s.world.build, s.env)}
            if method == "forgec/reset":
                t = table.task(params.task) if params.task else None
                if t is None and table.world is None:
                    raise ValueError(f"this server serves {len(table.worlds)} environments: name the task to reset to")
                sid = link.current or STDIO_SESSION
                if table.held(sid):
                    s = table.get(sid)
                    s.reset(t, world=table.worlds[t.env] if t is not None else None)
                else:
                    s = table.create(sid, task=t)
                await link.bind(sid, ctx)
                return s.state()
            s = link.session(ctx)
            if s is None:
                raise ValueError("this connection plays no task yet: send forgec/reset {\"task\": ID} or forgec/episode/start")
            if method == "forgec/state":
                return s.state(full=params.full)
            said = params.said if params.said is not None else said_to_user(params.messages or [])
            return s.score(said)
        except (BuildError, SessionError) as e:
            raise _mcp_error(e) from None
        except ValueError as e:
            raise MCPError(types.INVALID_PARAMS, str(e)) from None
    return handler


def _text(content: str | None) -> str:
    if content is None:
        raise ValueError("content (the assistant's text) is required; send \"\" for a message with no text")
    return content


async def serve_stdio(server: Server, *, tools_change: bool = False) -> None:
    """Serve on stdin/stdout; a line that is not a JSON-RPC message gets a JSON-RPC error reply (never silence).
    `tools_change`: advertise tools.listChanged (a multi-env server's tools change when the client plays a task)."""
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.stdio import stdio_server

    opts = server.create_initialization_options(NotificationOptions(tools_changed=tools_change))
    async with stdio_server() as (read, write):
        await server.run(_ReplyToBadLines(read, write), write, opts)


class _ReplyToBadLines:
    """The SDK's stdio read stream, where a line it could not parse (deep nesting, a lone surrogate in the id, not
    JSON) arrives as an exception the server drops, so the client waits forever: answer it with a JSON-RPC error
    (id null, as the spec says when the id cannot be read) and go on."""

    def __init__(self, read: Any, write: Any):
        self._read, self._write = read, write

    def __aiter__(self):
        return self

    async def __anext__(self):
        from mcp.shared.message import SessionMessage

        while True:
            item = await self._read.__anext__()
            if not isinstance(item, Exception):
                return item
            err = types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
                code=types.PARSE_ERROR, message="the message is not a JSON-RPC message forgec serve can read "
                                                "(not JSON, nested too deeply, or an id that is not valid text)"))
            try:
                await self._write.send(SessionMessage(err))
            except Exception:  # noqa: BLE001 - the client went away: nothing to answer
                pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._read, name)

    async def __aenter__(self):
        await self._read.__aenter__()
        return self

    async def __aexit__(self, *exc):
        return await self._read.__aexit__(*exc)


def http_app(server: Server, table: SessionTable, *, host: str, token: str, body_limit: int,
             allowed_hosts: list[str] | None = None, json_response: bool = True):
    """The Starlette app: `/mcp` and the `/forgec` routes, both held to one Host/Origin policy, every body bounded.

    `json_response`: a POST is answered with one `application/json` body (the spec lets a server choose it) rather
    than an SSE stream per request; a tool call sends no notification or server request in between, so nothing is
    lost, and per call it costs a third of the stream (bench/bench_serve.py). The GET stream stays available."""
    from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware
    from starlette.routing import Route

    from forgec.serve.evalroutes import routes
    from forgec.serve.security import transport_security

    settings = transport_security(host, allowed_hosts or [])
    manager_box: list = []

    def transport_has(sid: str) -> bool:
        mgr = manager_box[0] if manager_box else None
        return sid in (getattr(mgr, "_server_instances", None) or {})

    security = TransportSecurityMiddleware(settings)
    app = server.streamable_http_app(host=host, json_response=json_response, transport_security=settings, max_request_body_size=body_limit,
                                     max_sessions=table.max_sessions, session_idle_timeout=table.idle_s,
                                     custom_starlette_routes=routes(table, token, security, transport_has))
    manager_box.append(getattr(server, "_session_manager", None))
    mcp_endpoint = next(r.endpoint for r in app.routes if getattr(r, "path", None) == "/mcp")
    app.router.routes.append(Route("/mcp/{env}", endpoint=_EnvEndpoint(mcp_endpoint, table, security)))
    return RequestBodyLimitMiddleware(app, body_limit)


class _EnvEndpoint:
    """`/mcp/<env>`: the same MCP endpoint as `/mcp` (one transport, one session table, the same Host/Origin checks),
    its sessions in env <env>; an env the server does not serve is a 404 naming the ones it does (after the same
    Host/Origin checks, so a foreign page learns nothing)."""

    def __init__(self, endpoint: Any, table: SessionTable, security: Any):
        self.endpoint, self.table, self.security = endpoint, table, security

    async def __call__(self, scope, receive, send) -> None:
        from starlette.requests import Request
        from starlette.responses import JSONResponse

        env = scope.get("path_params", {}).get("env")
        if env in self.table.worlds:
            await self.endpoint(scope, receive, send)
            return
        request = Request(scope, receive)
        refused = await self.security.validate_request(request, is_post=request.method == "POST")
        if refused is None:
            msg = (f"this server serves no environment {env!r}: connect to /mcp/<env> for one of "
                   f"{', '.join(self.table.worlds)} [unknown-env]")
            refused = JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": types.INVALID_PARAMS, "message": msg}},
                                   status_code=404)
        await refused(scope, receive, send)


def listening_socket(host: str, port: int) -> Any:
    """The bound, listening TCP socket `serve_http` serves on.

    Made with `IPPROTO_TCP` as its protocol: an accepted connection inherits the listener's protocol number, and
    asyncio sets TCP_NODELAY only on sockets whose `proto` is IPPROTO_TCP. Made with proto 0, every connection kept
    Nagle's algorithm, which holds the small SSE frames of a response until the client's delayed ACK (~40 ms):
    30-40 calls/s for the MCP TypeScript SDK."""
    import socket

    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(fam, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def serve_http(app: Any, host: str, port: int, *, announce=None) -> None:
    """Serve `app` with uvicorn on host:port (port 0: a free one); `announce(url)` once the socket is bound.
    Every accepted connection has TCP_NODELAY (`listening_socket`)."""
    import uvicorn

    sock = listening_socket(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    if announce is not None:
        announce(f"http://{shown}:{bound}/mcp")
    cfg = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    uvicorn.Server(cfg).run(sockets=[sock])


def eprint(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()
