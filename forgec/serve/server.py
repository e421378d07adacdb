"""`forgec serve`: one compiled environment as an MCP server (official `mcp` SDK, low-level `Server`).

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

The evaluation channel is not a tool, so the agent never sees it: over HTTP it
is `/forgec/...` routes on the same server (`evalroutes.py`); over stdio, the
process that owns the pipe sends the JSON-RPC requests `forgec/reset`,
`forgec/state` and `forgec/score`. Both score with `runtime.reward`, as `forgec eval`.
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

import forgec
from forgec.runtime.loader import BuildError
from forgec.serve.evalroutes import token_ok
from forgec.serve.sessions import Session, SessionError, SessionTable, said_to_user
from forgec.serve.docmeta import doc_meta

STDIO_SESSION = "stdio"
EVAL_METHODS = ("forgec/reset", "forgec/state", "forgec/score")


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


def _task_from_query(ctx: Any, table: SessionTable):
    req = ctx.request
    tid = req.query_params.get("task") if req is not None else None
    if not tid:
        return None
    try:
        return table.world.task(tid)
    except BuildError as e:
        raise MCPError(types.INVALID_PARAMS, f"{e.message} ({e.help})") from None


def session_for(ctx: Any, table: SessionTable) -> Session:
    """The session of this MCP request: made at its first request, an error once the table let it go."""
    sid = _session_id(ctx)
    client = ctx.request.client.host if ctx.request is not None and ctx.request.client else ""
    try:
        return table.open(sid, lambda: _task_from_query(ctx, table), client)
    except SessionError as e:
        raise MCPError(types.INVALID_REQUEST, f"{e.message} [{e.code}]") from None


class _EvalParams(types.RequestParams):
    """Params of the stdio evaluation requests (`forgec/reset`: task; `forgec/score`: said or messages; `forgec/state`: full)."""

    task: str | None = None
    said: str | None = None
    messages: list[dict] | None = None
    full: bool = False
    token: str | None = None


def build_server(table: SessionTable, *, transport: str, token: str, docs: list | None = None) -> Server:
    """The MCP server for one env; `table` holds its sessions; `token`: the evaluation channel's (stdio requests
    carry it as their `token` param); `docs`: the doc files for titles/annotations/output schemas."""

    world = table.world
    meta = doc_meta(world.build, world.name, world.tools, docs)
    tools = mcp_tools(world.tools, getattr(world.module, "TOOL_KINDS", {}) or {}, meta)

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        if ctx.request is None or ctx.request.headers.get("mcp-session-id"):
            session_for(ctx, table)  # the session's env exists from its first request (the harness can reset or read it)
        return types.ListToolsResult(tools=tools)

    validators = _output_validators(tools)
    warned: set[str] = set()

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        s = session_for(ctx, table)
        res = call_result(s.call(params.name, params.arguments if params.arguments is not None else {}))
        v = validators.get(params.name)
        if v is not None and not res.is_error and params.name not in warned and not v.is_valid(res.structured_content):
            warned.add(params.name)  # the recorded results kept the doc's schema, this one does not: say so, once
            eprint(f"forgec serve: warning: a result of {params.name} does not match the output schema of the docs "
                   "(MCP clients that validate results will reject it)")
        return res

    server = Server(f"forgec-{world.name}", version=forgec.__version__,
                    instructions=f"Tools of the {world.name} environment (a forgec simulation: calls change only this session's state).",
                    on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    if transport == "http":
        async def on_discover(ctx, params) -> types.DiscoverResult:
            return types.DiscoverResult(supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS), capabilities=server.get_capabilities())

        server.add_request_handler("server/discover", types.RequestParams, on_discover)
    else:
        for method in EVAL_METHODS:
            server.add_request_handler(method, _EvalParams, _stdio_eval(table, method, token))
    return server


def _output_validators(tools: list[types.Tool]) -> dict[str, Any]:
    from jsonschema.validators import validator_for

    return {t.name: validator_for(t.output_schema)(t.output_schema) for t in tools if t.output_schema is not None}


def _stdio_eval(table: SessionTable, method: str, token: str):
    async def handler(ctx, params: _EvalParams) -> dict:
        if not token_ok(token, params.token):
            raise MCPError(types.INVALID_REQUEST, f"{method} needs the evaluation token as its 'token' param (start "
                                                  "forgec serve with $FORGEC_SERVE_EVAL_TOKEN or --eval-token-file)")
        s = table.get(STDIO_SESSION)
        try:
            if method == "forgec/reset":
                s.reset(table.world.task(params.task) if params.task else None)
                return s.state()
            if method == "forgec/state":
                return s.state(full=params.full)
            said = params.said if params.said is not None else said_to_user(params.messages or [])
            return s.score(said)
        except BuildError as e:
            raise MCPError(types.INVALID_PARAMS, f"{e.message} ({e.help})") from None
        except ValueError as e:
            raise MCPError(types.INVALID_PARAMS, str(e)) from None
    return handler


async def serve_stdio(server: Server) -> None:
    """Serve on stdin/stdout; a line that is not a JSON-RPC message gets a JSON-RPC error reply (never silence)."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(_ReplyToBadLines(read, write), write, server.create_initialization_options())


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

    from forgec.serve.evalroutes import routes
    from forgec.serve.security import transport_security

    settings = transport_security(host, allowed_hosts or [])
    manager_box: list = []

    def transport_has(sid: str) -> bool:
        mgr = manager_box[0] if manager_box else None
        return sid in (getattr(mgr, "_server_instances", None) or {})

    app = server.streamable_http_app(host=host, json_response=json_response, transport_security=settings, max_request_body_size=body_limit,
                                     max_sessions=table.max_sessions, session_idle_timeout=table.idle_s,
                                     custom_starlette_routes=routes(table, token, TransportSecurityMiddleware(settings),
                                                                    transport_has))
    manager_box.append(getattr(server, "_session_manager", None))
    return RequestBodyLimitMiddleware(app, body_limit)


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
