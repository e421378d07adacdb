"""An OpenEnv-compatible server for a forgec build (`forgec serve-openenv BUILD`; docs/adapters.md).

Meta's OpenEnv (`openenv-core`; the protocol below is read from 0.3.0's `openenv/core/env_server/http_server.py`,
`types.py`, `serialization.py` and `env_client.py`) serves an environment as

* `POST /reset` (body `{"seed"?, "episode_id"?, ...}`) and `POST /step` (body `{"action": {...}, ...}`), each
  answering `{"observation": {...}, "reward": float | null, "done": bool}`; `GET /state` -> `{"episode_id",
  "step_count", ...}`; `GET /health`, `GET /schema`, `GET /metadata`;
* `WS /ws`, one environment per connection, which OpenEnv's clients (`EnvClient`, `GenericEnvClient`) use: the
  client sends `{"type": "reset", "data": {...}}`, `{"type": "step", "data": ACTION}`, `{"type": "state"}`,
  `{"type": "close"}`; the server answers `{"type": "observation", "data": {"observation", "reward", "done"}}`,
  `{"type": "state", "data": STATE}` or `{"type": "error", "data": {"message", "code"}}`.

OpenEnv's own HTTP `/reset` and `/step` make a fresh environment per request; a forgec episode spans many requests,
so here `/reset` opens (or restarts) the session named by `episode_id` (a new id when none is given, returned in the
observation) and `/step` and `/state` name it (`episode_id` in the body / query): the request shapes stay OpenEnv's
(its `StepRequest` allows extra fields). `POST /close` ends a session; idle ones end after `idle_timeout`.

An episode is `forgec.gym.ForgecEnv`'s, so `forgec eval`'s: the observation is the conversation so far (eval's
system prompt, the simulated user's messages, the agent's, tool results) with the env's tools; an action is one
assistant message (`{"content": TEXT, "tool_calls": [{"name", "arguments"} | OpenAI's {"function": ...}]}`, or
`{"text": MODEL_TEXT}` with Hermes `<tool_call>` blocks); its tool calls run in the session's env, and a message
without tool calls is answered by the scripted user before the step returns. `reward` is null at reset, 0.0 until
the episode ends, then forgec's reward (gold state reached and every `tell` said, `runtime.reward`); `done` is true
once the user stopped or a turn/tool-call budget ran out (`observation.truncated` says which).

No authentication: it binds loopback only, checks Host (DNS rebinding) and Origin (browsers), and bounds bodies,
WebSocket messages and sessions.
"""

from __future__ import annotations

import asyncio
import difflib
import ipaddress
import json
import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from forgec import __version__
from forgec.gym import TRUNCATED, ForgecEnv, parse_action
from forgec.runtime.episode import EpisodeLimits
from forgec.runtime.loader import Build, BuildError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
ACTION_KEYS = frozenset({"content", "tool_calls", "text", "metadata"})
MAX_ID = 255  # OpenEnv's ResetRequest.episode_id max_length

ACTION_SCHEMA = {
    "title": "ForgecAction", "type": "object", "additionalProperties": False,
    "description": "One assistant message: content and/or tool calls, or raw model text (Hermes <tool_call> blocks).",
    "properties": {
        "content": {"type": ["string", "null"], "description": "What the assistant says to the user."},
        "tool_calls": {"type": ["array", "null"], "items": {"type": "object"},
                       "description": '[{"name": TOOL, "arguments": {...}}] or OpenAI\'s [{"function": {"name", "arguments"}}]'},
        "text": {"type": "string", "description": "Raw model output instead of content/tool_calls."},
        "metadata": {"type": "object", "description": "Ignored (OpenEnv's Action field)."},
    },
}
OBSERVATION_SCHEMA = {
    "title": "ForgecObservation", "type": "object",
    "properties": {
        "episode_id": {"type": "string"}, "task_id": {"type": "string"}, "env": {"type": "string"},
        "messages": {"type": "array", "items": {"type": "object"},
                     "description": "The conversation so far, OpenAI chat format (system, user, assistant, tool)."},
        "tools": {"type": "array", "items": {"type": "object"}, "description": "The env's tools, OpenAI format."},
        "turns": {"type": "integer"}, "tool_calls": {"type": "integer"},
        "truncated": {"type": "boolean"}, "end_reason": {"type": ["string", "null"]}, "error": {"type": ["string", "null"]},
        "reward_breakdown": {"type": ["object", "null"]},
    },
}
STATE_SCHEMA = {
    "title": "ForgecState", "type": "object",
    "properties": {"episode_id": {"type": ["string", "null"]}, "step_count": {"type": "integer", "minimum": 0},
                   "task_id": {"type": ["string", "null"]}, "env": {"type": ["string", "null"]}, "done": {"type": "boolean"},
                   "reward": {"type": ["number", "null"]}, "end_reason": {"type": ["string", "null"]}},
}


class ProtocolError(Exception):
    """A request the server refuses: `status` for HTTP, `code` (OpenEnv's WSErrorCode) for the WebSocket."""

    def __init__(self, status: int, message: str, code: str = "VALIDATION_ERROR"):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


@dataclass
class Session:
    env: ForgecEnv
    episode_id: str | None = None
    steps: int = 0
    used: float = field(default_factory=time.monotonic)


def action_reply(action: Any, turn: int) -> Any:
    """The `AgentReply` of an OpenEnv action; a ProtocolError (422) saying the accepted shapes for anything else."""
    shapes = '{"content": TEXT, "tool_calls": [{"name": TOOL, "arguments": {...}}]} or {"text": MODEL_TEXT}'
    if not isinstance(action, dict):
        raise ProtocolError(422, f"an action is a JSON object, {shapes}; got {type(action).__name__}")
    extra = sorted(set(action) - ACTION_KEYS)
    if extra:
        raise ProtocolError(422, f"unknown action field(s) {', '.join(map(repr, extra))}: an action is {shapes}")
    if "text" in action:
        if "content" in action or "tool_calls" in action:
            raise ProtocolError(422, "an action has either `text` (raw model output) or `content`/`tool_calls`, not both")
        if not isinstance(action["text"], str):
            raise ProtocolError(422, f"`text` is a string, not {type(action['text']).__name__}")
        return parse_action(action["text"], turn)
    if "content" not in action and "tool_calls" not in action:
        raise ProtocolError(422, f"the action says nothing: it is {shapes}")
    if action.get("content") is not None and not isinstance(action["content"], str):
        raise ProtocolError(422, f"`content` is a string, not {type(action['content']).__name__}")
    if action.get("tool_calls") is not None and not isinstance(action["tool_calls"], list):
        raise ProtocolError(422, f"`tool_calls` is a list of calls, not {type(action['tool_calls']).__name__}")
    return parse_action({"content": action.get("content") or "", "tool_calls": action.get("tool_calls") or []}, turn)


class OpenEnvServer:
    """The sessions and the protocol; `app()` is the Starlette app. Episode work runs on one worker thread (the
    build's envs are not shared across threads), so the event loop stays free for other connections."""

    def __init__(self, build: Build, tasks: list[str] | None = None, *, limits: EpisodeLimits = EpisodeLimits(),
                 max_sessions: int = 256, idle_timeout: float = 1800.0, body_limit: int = 4 * 1024 * 1024,
                 allowed_hosts: list[str] | tuple[str, ...] = ()):
        self.build = build
        self.task_ids = [t.id for t in build.tasks_for(tasks)]  # an unknown id or env name: BuildError unknown-task
        if not self.task_ids:
            raise BuildError("empty-build", "the build has no tasks to serve", str(build.root),
                             help="recompile with `forgec compile DOCS -o BUILD -n N`")
        self.limits, self.max_sessions, self.idle_timeout, self.body_limit = limits, max_sessions, idle_timeout, body_limit
        self.hosts = {h.lower().strip("[]") for h in (*LOOPBACK_NAMES, *allowed_hosts)}
        self.sessions: dict[str, Session] = {}  # HTTP sessions by episode_id
        self.sockets = 0  # live WebSocket sessions
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="forgec-openenv")

    # ------------------------------------------------------------------ the protocol, on the worker thread

    def _new_env(self) -> ForgecEnv:
        return ForgecEnv(self.build, list(self.task_ids), limits=self.limits)

    def reset(self, s: Session, data: dict) -> dict:
        task, seed = data.get("task"), data.get("seed")
        if task is not None and (not isinstance(task, str) or task not in self.task_ids):
            near = difflib.get_close_matches(task, self.task_ids, n=3) if isinstance(task, str) else []
            raise ProtocolError(422, f"no task {str(task)[:120]!r} is served here"
                                     + (f"; did you mean {', '.join(near)}?" if near else "")
                                     + f" (GET /tasks lists the {len(self.task_ids)} served)")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ProtocolError(422, f"`seed` is a non-negative integer, not {seed!r}")
        s.env.reset(seed=seed, options={"task": task} if task else None)
        s.steps = 0
        return self.result(s, None)

    def step(self, s: Session, action: Any) -> dict:
        env = s.env
        if env.episode is None:
            raise ProtocolError(409, "no episode yet: reset first", "EXECUTION_ERROR")
        if env.episode.end_reason:
            raise ProtocolError(409, f"the episode is over ({env.episode.end_reason}): reset to start another", "EXECUTION_ERROR")
        reply = action_reply(action, env.episode.turns)
        _, reward, _, _, _ = env.step(reply)
        s.steps += 1
        return self.result(s, float(reward))

    def observation(self, s: Session) -> dict:
        ep = s.env.episode
        done = bool(ep.end_reason)
        return {"episode_id": s.episode_id, "task_id": ep.task_id, "env": ep.env, "messages": [dict(m) for m in ep.messages],
                "tools": s.env.tools(), "turns": ep.turns, "tool_calls": ep.tool_calls,
                "truncated": ep.end_reason in TRUNCATED, "end_reason": ep.end_reason or None, "error": ep.error,
                "reward_breakdown": dict(ep.reward_breakdown) if done else None}

    def result(self, s: Session, reward: float | None) -> dict:
        """OpenEnv's `serialize_observation` shape."""
        return {"observation": self.observation(s), "reward": reward, "done": bool(s.env.episode.end_reason)}

    def state(self, s: Session) -> dict:
        ep = s.env.episode
        done = bool(ep and ep.end_reason)
        return {"episode_id": s.episode_id, "step_count": s.steps, "task_id": ep.task_id if ep else None,
                "env": ep.env if ep else None, "done": done, "reward": float(ep.reward) if done else None,
                "end_reason": (ep.end_reason or None) if ep else None}

    async def _run(self, fn: Callable, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._worker, fn, *args)

    # ------------------------------------------------------------------ sessions

    def _reap(self) -> None:
        now = time.monotonic()
        for sid in [k for k, s in self.sessions.items() if now - s.used > self.idle_timeout]:
            self.sessions.pop(sid).env.close()

    def _make_room(self) -> None:
        self._reap()
        if len(self.sessions) + self.sockets >= self.max_sessions:
            raise ProtocolError(503, f"server full: {self.max_sessions} sessions are open (close one: POST /close, or wait "
                                     f"for idle ones to expire after {self.idle_timeout:g} s)", "CAPACITY_REACHED")

    def _session(self, sid: Any) -> Session:
        if not isinstance(sid, str) or not sid:
            raise ProtocolError(400, "name the session: `episode_id`, as /reset returned it in the observation")
        self._reap()
        s = self.sessions.get(sid)
        if s is None:
            raise ProtocolError(404, f"no open episode {sid[:80]!r}: it was never reset, was closed, or expired after "
                                     f"{self.idle_timeout:g} s idle; POST /reset starts one")
        s.used = time.monotonic()
        return s

    # ------------------------------------------------------------------ HTTP

    def _guard(self, headers: Any) -> None:
        """Host (DNS rebinding) and Origin (a browser page) must be this server's."""
        host = (headers.get("host") or "").lower()
        name = host.rsplit("]", 1)[0].lstrip("[") if host.startswith("[") else host.split(":")[0]
        if name not in self.hosts:
            raise ProtocolError(403, f"Host {host[:80]!r} is not served here (allowed: {', '.join(sorted(self.hosts))})", "SESSION_ERROR")
        origin = headers.get("origin")
        if origin is not None:
            from urllib.parse import urlsplit

            oname = (urlsplit(origin).hostname or "").lower()
            if oname not in self.hosts:
                raise ProtocolError(403, f"Origin {origin[:80]!r} may not use this server", "SESSION_ERROR")

    async def _body(self, request: Request) -> dict:
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise ProtocolError(415, f"send JSON (Content-Type: application/json), not {ctype or 'no content type'!r}")
        size = request.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > self.body_limit:
            raise ProtocolError(413, f"body of {size} bytes is over the limit of {self.body_limit}")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > self.body_limit:
                raise ProtocolError(413, f"body over the limit of {self.body_limit} bytes")
        if not raw:
            return {}
        try:
            data = json.loads(raw)
        except ValueError as e:
            raise ProtocolError(400, f"the body is not JSON: {e}") from None
        if not isinstance(data, dict):
            raise ProtocolError(422, f"the body is a JSON object, not {type(data).__name__}")
        return data

    def _http(self, handler: Callable) -> Callable:
        async def endpoint(request: Request) -> Response:
            try:
                self._guard(request.headers)
                return JSONResponse(await handler(request))
            except ProtocolError as e:
                return JSONResponse({"detail": e.message, "code": e.code}, status_code=e.status)
            except BuildError as e:
                return JSONResponse({"detail": e.message, "code": "VALIDATION_ERROR"}, status_code=422)
        return endpoint

    async def _reset(self, request: Request) -> dict:
        data = await self._body(request)
        sid = data.get("episode_id")
        if sid is not None and (not isinstance(sid, str) or not 0 < len(sid) <= MAX_ID):
            raise ProtocolError(422, f"`episode_id` is a string of 1 to {MAX_ID} characters")
        s = self.sessions.get(sid) if sid else None
        fresh = s is None
        if fresh:
            self._make_room()
            s = Session(self._new_env(), sid or uuid.uuid4().hex)
            self.sessions[s.episode_id] = s
        s.used = time.monotonic()
        try:
            return await self._run(self.reset, s, data)
        except (ProtocolError, BuildError):
            if fresh:  # a refused reset opens no session
                self.sessions.pop(s.episode_id, None)
            raise

    async def _step(self, request: Request) -> dict:
        data = await self._body(request)
        if "action" not in data:
            raise ProtocolError(422, 'the body is {"action": {...}, "episode_id": ID}: `action` is missing')
        s = self._session(data.get("episode_id"))
        return await self._run(self.step, s, data["action"])

    async def _state(self, request: Request) -> dict:
        return await self._run(self.state, self._session(request.query_params.get("episode_id")))

    async def _close(self, request: Request) -> dict:
        s = self._session((await self._body(request)).get("episode_id"))
        self.sessions.pop(s.episode_id, None)
        s.env.close()
        return {"closed": s.episode_id}

    async def _health(self, request: Request) -> dict:
        return {"status": "healthy"}

    async def _schema(self, request: Request) -> dict:
        return {"action": ACTION_SCHEMA, "observation": OBSERVATION_SCHEMA, "state": STATE_SCHEMA}

    async def _metadata(self, request: Request) -> dict:
        return {"name": f"forgec:{self.build.root.name}", "version": __version__, "author": None, "documentation_url": None,
                "readme_content": None,
                "description": f"{len(self.task_ids)} forgec tasks of {len(self.build.envs)} env(s) "
                               f"({', '.join(sorted(self.build.envs))}) with a scripted user; reward as `forgec eval`."}

    async def _tasks(self, request: Request) -> dict:
        return {"tasks": list(self.task_ids)}

    # ------------------------------------------------------------------ WebSocket (OpenEnv's client protocol)

    async def _ws(self, ws: WebSocket) -> None:
        try:
            self._guard(ws.headers)
        except ProtocolError:
            await ws.close(code=1008)
            return
        await ws.accept()
        try:
            self._make_room()
        except ProtocolError as e:
            await ws.send_json({"type": "error", "data": {"message": e.message, "code": e.code}})
            await ws.close()
            return
        self.sockets += 1
        s = Session(self._new_env())
        try:
            while True:
                try:
                    raw = await ws.receive_text()
                except WebSocketDisconnect:
                    return
                try:
                    msg = json.loads(raw)
                except ValueError as e:
                    await ws.send_json({"type": "error", "data": {"message": f"Invalid JSON: {e}", "code": "INVALID_JSON"}})
                    continue
                kind = msg.get("type") if isinstance(msg, dict) else None
                data = msg.get("data", {}) if isinstance(msg, dict) else None
                try:
                    if kind == "close":
                        return
                    if kind == "reset":
                        data = data or {}
                        if not isinstance(data, dict):
                            raise ProtocolError(422, "reset data is a JSON object")
                        sid = data.get("episode_id")
                        if sid is not None and (not isinstance(sid, str) or not 0 < len(sid) <= MAX_ID):
                            raise ProtocolError(422, f"`episode_id` is a string of 1 to {MAX_ID} characters")
                        s.episode_id = sid or uuid.uuid4().hex
                        out = {"type": "observation", "data": await self._run(self.reset, s, data)}
                    elif kind == "step":
                        out = {"type": "observation", "data": await self._run(self.step, s, data)}
                    elif kind == "state":
                        out = {"type": "state", "data": await self._run(self.state, s)}
                    else:
                        raise ProtocolError(400, f"Unknown message type: {kind!r} (reset, step, state, close)", "UNKNOWN_TYPE")
                except ProtocolError as e:
                    out = {"type": "error", "data": {"message": e.message, "code": e.code}}
                except BuildError as e:
                    out = {"type": "error", "data": {"message": e.message, "code": "VALIDATION_ERROR"}}
                await ws.send_json(out)
        finally:
            self.sockets -= 1
            s.env.close()
            if ws.client_state.name == "CONNECTED":
                await ws.close()

    def app(self) -> Starlette:
        r = self._http
        return Starlette(routes=[
            Route("/reset", r(self._reset), methods=["POST"]),
            Route("/step", r(self._step), methods=["POST"]),
            Route("/state", r(self._state), methods=["GET"]),
            Route("/close", r(self._close), methods=["POST"]),
            Route("/health", r(self._health), methods=["GET"]),
            Route("/schema", r(self._schema), methods=["GET"]),
            Route("/metadata", r(self._metadata), methods=["GET"]),
            Route("/tasks", r(self._tasks), methods=["GET"]),
            WebSocketRoute("/ws", self._ws),
        ])

    def close(self) -> None:
        for s in self.sessions.values():
            s.env.close()
        self.sessions.clear()
        self._worker.shutdown(wait=False, cancel_futures=True)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket with `IPPROTO_TCP` as its protocol, so asyncio sets TCP_NODELAY on every
    accepted connection (with proto 0 it does not, and Nagle's algorithm delays small responses)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    fam, _, _, _, addr = infos[0]
    sock = socket.socket(fam, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(addr)
    sock.listen(128)
    return sock


def serve(server: OpenEnvServer, host: str = "127.0.0.1", port: int = 8000, *,
          announce: Callable[[str], None] | None = None) -> None:
    """Serve on host:port (loopback only; port 0 picks a free one) until SIGINT/SIGTERM; `announce(url)` once bound."""
    import uvicorn

    if not is_loopback(host):
        raise ValueError(f"{host!r} is not a loopback address: the OpenEnv server has no authentication")
    sock = listening_socket(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    if announce is not None:
        announce(f"http://{shown}:{bound}")
    cfg = uvicorn.Config(server.app(), log_level="warning", access_log=False, lifespan="off", ws="websockets-sansio",
                         ws_max_size=server.body_limit)
    try:
        uvicorn.Server(cfg).run(sockets=[sock])
    finally:
        server.close()
