"""The HTTP evaluation channel of `forgec serve --transport http`: plain routes beside `/mcp`, never tools.

The agent talks MCP on `/mcp`; the harness (trainer, evaluator) uses these
routes on the same server, keyed by the MCP session id (the `Mcp-Session-Id`
response header of the agent's connection):

    GET    /forgec/tasks                      task ids, envs, instructions and user facts (?env=NAME: one env's)
    GET    /forgec/sessions                   open sessions (id, env, task, calls, tool errors, episode)
    POST   /forgec/sessions/{id}/reset        {"task": ID | null}: the session's env at that task's initial state
    GET    /forgec/sessions/{id}/state        state hash and diff from the initial state (?full=1: the state too)
    POST   /forgec/sessions/{id}/score        {"said": TEXT} or {"messages": [...]}: reward as `forgec eval` computes it
    DELETE /forgec/sessions/{id}              forget the session's env

Episode mode (`episodes.py`): the episode `forgec eval` runs, the agent's tool calls arriving on `/mcp/<env>?session=ID`:

    POST   /forgec/episode                    {"task": ID, "session": ID?}: start; eval's first-turn messages and tools
    POST   /forgec/episode/{id}/say           {"content": TEXT}: an assistant message whose tool calls follow
    POST   /forgec/episode/{id}/user_turn     {"content": TEXT}: an assistant message for the user; the user's answer
    POST   /forgec/episode/{id}/score         the reward `forgec eval` gives the episode, the judge, the episode record
    GET    /forgec/episode/{id}               the transcript so far

The channel is closed by default (issue 25: an agent under training whose tool
calls or code can reach the score and the gold state is reward hacking by
construction). Every route needs `Authorization: Bearer TOKEN` (the token
`forgec serve` generated or was given), is held to the same Host/Origin rules
as `/mcp` (no DNS rebinding, no CORS: a browser page cannot read or post), and
takes JSON bodies only (`Content-Type: application/json`, so a cross-origin
`text/plain` form post is refused before it is read). Bodies are bounded by
the server-wide limit (`security.body_limit`).
"""

from __future__ import annotations

import hmac
import inspect
import json
import uuid
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from forgec.runtime.loader import BuildError
from forgec.serve.episodes import check_session_id, start_episode
from forgec.serve.sessions import SessionError, SessionTable, said_to_user

_STATUS = {"unknown-session": 404, "session-expired": 410, "server-full": 503, "client-full": 429, "session-exists": 409,
           "no-episode": 409, "no-env": 400}


class _BadRequest(ValueError):
    """A body the route cannot use (400), as opposed to a request the session's state refuses (409)."""


def _err(status: int, message: str, code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, **({"code": code} if code else {})}, status_code=status)


async def _body(request: Request) -> dict | JSONResponse:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        obj = json.loads(raw)
    except RecursionError:
        return _err(400, "the body is nested too deeply")
    except ValueError as e:
        return _err(400, f"the body is not JSON: {e}")
    return obj if isinstance(obj, dict) else _err(400, "the body must be a JSON object")


def token_ok(token: str, got: str | None) -> bool:
    """Constant-time check of a presented token (a bearer header's or a stdio request's) against `token`."""
    return isinstance(got, str) and hmac.compare_digest(got.encode("utf-8", "replace"), token.encode())


def routes(table: SessionTable, token: str, security: Any = None,
           transport_has: Callable[[str], bool] = lambda sid: False) -> list[Route]:
    """The `/forgec` routes; `security`: the SDK's TransportSecurityMiddleware `/mcp` uses (Host, Origin,
    Content-Type); `transport_has(sid)`: whether the MCP transport issued `sid` (so reset may make its env)."""
    if not token:
        raise ValueError("the evaluation channel needs a token")
    bearer = f"Bearer {token}"

    def guard(fn):
        async def wrapped(request: Request):
            if security is not None:
                refused = await security.validate_request(request, is_post=request.method == "POST")
                if refused is not None:
                    return refused
            if not token_ok(bearer, request.headers.get("authorization")):
                return _err(401, "the evaluation channel needs Authorization: Bearer <token> (printed by forgec serve "
                                 "at start, or given with --eval-token-file / $FORGEC_SERVE_EVAL_TOKEN)")
            try:
                return await fn(request)
            except SessionError as e:
                return _err(_STATUS.get(e.code, 400), e.message, e.code)
            except BuildError as e:
                return _err(404 if e.code in ("unknown-task", "unknown-env") else 500, f"{e.message} ({e.help})")
            except _BadRequest as e:
                return _err(400, str(e))
            except ValueError as e:
                return _err(409, str(e))
            except RecursionError:
                return _err(400, "the request is nested too deeply")
        return wrapped

    async def tasks(request: Request):

        return JSONResponse(table.tasks_listing(request.query_params.get("env")))

    async def sessions(request: Request):
        return JSONResponse(table.list())

    async def reset(request: Request):
        body = await _body(request)
        if isinstance(body, JSONResponse):
            return body
        tid = body.get("task")
        if tid is not None and not isinstance(tid, str):
            return _err(400, "task must be a task id string or null")
        sid = request.path_params["sid"]
        if not table.held(sid) and transport_has(sid):  # an MCP session that made no tool request yet
            task = table.task(tid) if tid else None
            s = table.create(sid, task=task, client=request.client.host if request.client else "")
        else:
            s = table.get(sid)
            task = s.world.task(tid) if tid else None  # a session keeps its env (its client listed that env's tools)
        s.reset(task)
        return JSONResponse(s.state())

    async def state(request: Request):
        s = table.get(request.path_params["sid"])
        return JSONResponse(s.state(full=request.query_params.get("full") in ("1", "true", "yes")))

    async def score(request: Request):
        body = await _body(request)
        if isinstance(body, JSONResponse):
            return body
        s = table.get(request.path_params["sid"])
        said = body.get("said")
        if said is None:
            msgs = body.get("messages") or []
            if not isinstance(msgs, list):
                return _err(400, "messages must be a list of OpenAI chat messages")
            said = said_to_user(msgs)
        if not isinstance(said, str):
            return _err(400, "said must be a string")
        return JSONResponse(s.score(said))

    async def drop(request: Request):
        return JSONResponse({"dropped": table.drop(request.path_params["sid"])})

    async def episode_start(request: Request):
        body = await _body(request)
        if isinstance(body, JSONResponse):
            return body
        tid, sid = body.get("task"), body.get("session")
        if not isinstance(tid, str) or not tid:
            return _err(400, 'start an episode with {"task": "<env>/<blueprint>", "session": ID (optional)}')
        if sid is None:
            sid = uuid.uuid4().hex
        try:
            check_session_id(sid)
            task = table.task(tid)
        except ValueError as e:
            raise _BadRequest(str(e)) from None
        try:
            s, first = await start_episode(table, sid, task, client=request.client.host if request.client else "",
                                           max_turns=body.get("max_turns"), max_tool_calls=body.get("max_tool_calls"))
        except ValueError as e:
            raise _BadRequest(str(e)) from None
        return JSONResponse({**first, "mcp": f"/mcp/{s.world.name}?session={sid}"})

    def _content(body: dict) -> str:
        c = body.get("content")
        if not isinstance(c, str):
            raise _BadRequest('send {"content": TEXT}, the assistant message\'s text ("" for none)')
        return c

    async def _on_episode(request: Request, act) -> JSONResponse:
        """A POST to a live episode: the body read, the session found, `act(session, body)` answered."""
        body = await _body(request)
        if isinstance(body, JSONResponse):
            return body
        sid = request.path_params["sid"]
        got = act(table.with_episode(sid), body)
        return JSONResponse({"session": sid, **(await got if inspect.isawaitable(got) else got)})

    async def episode_say(request: Request):
        return await _on_episode(request, lambda s, body: s.episode.say(_content(body)))

    async def episode_user_turn(request: Request):
        return await _on_episode(request, lambda s, body: s.episode.user_turn(_content(body)))

    async def episode_score(request: Request):
        return await _on_episode(request, lambda s, body: s.episode.score(s.world.build, s.env))

    async def episode_get(request: Request):
        sid = request.path_params["sid"]
        s = table.with_episode(sid)
        return JSONResponse({"session": sid, **s.episode.status(), "messages": s.episode.ep.messages})

    base = "/forgec/sessions/{sid}"
    ep = "/forgec/episode/{sid}"
    return [
        Route("/forgec/episode", guard(episode_start), methods=["POST"]),
        Route(f"{ep}/say", guard(episode_say), methods=["POST"]),
        Route(f"{ep}/user_turn", guard(episode_user_turn), methods=["POST"]),
        Route(f"{ep}/score", guard(episode_score), methods=["POST"]),
        Route(ep, guard(episode_get), methods=["GET"]),
        Route("/forgec/tasks", guard(tasks), methods=["GET"]),
        Route("/forgec/sessions", guard(sessions), methods=["GET"]),
        Route(f"{base}/reset", guard(reset), methods=["POST"]),
        Route(f"{base}/state", guard(state), methods=["GET"]),
        Route(f"{base}/score", guard(score), methods=["POST"]),
        Route(base, guard(drop), methods=["DELETE"]),
    ]
