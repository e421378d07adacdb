"""The HTTP evaluation channel of `forgec serve --transport http`: plain routes beside `/mcp`, never tools.

The agent talks MCP on `/mcp`; the harness (trainer, evaluator) uses these
routes on the same server, keyed by the MCP session id (the `Mcp-Session-Id`
response header of the agent's connection):

    GET    /forgec/tasks                      task ids, instructions and user facts of the env
    GET    /forgec/sessions                   open sessions (id, task, calls, tool errors)
    POST   /forgec/sessions/{id}/reset        {"task": ID | null}: the session's env at that task's initial state
    GET    /forgec/sessions/{id}/state        state hash and diff from the initial state (?full=1: the state too)
    POST   /forgec/sessions/{id}/score        {"said": TEXT} or {"messages": [...]}: reward as `forgec eval` computes it
    DELETE /forgec/sessions/{id}              forget the session's env

With `--eval-token` (or $FORGEC_SERVE_EVAL_TOKEN) every route needs
`Authorization: Bearer TOKEN`, for servers bound beyond localhost.
"""

from __future__ import annotations

import hmac
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from forgec.runtime.loader import BuildError
from forgec.serve.sessions import SessionTable, said_to_user


def _err(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _body(request: Request) -> dict | JSONResponse:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        import json

        obj = json.loads(raw)
    except ValueError as e:
        return _err(400, f"the body is not JSON: {e}")
    return obj if isinstance(obj, dict) else _err(400, "the body must be a JSON object")


def routes(table: SessionTable, token: str | None = None) -> list[Route]:
    world = table.world

    def guard(fn):
        async def wrapped(request: Request):
            if token:
                got = request.headers.get("authorization", "")
                if not hmac.compare_digest(got.encode(), f"Bearer {token}".encode()):
                    return _err(401, "the evaluation channel needs Authorization: Bearer <--eval-token>")
            try:
                return await fn(request)
            except BuildError as e:
                return _err(404 if e.code in ("unknown-task", "unknown-env") else 500, f"{e.message} ({e.help})")
            except ValueError as e:
                return _err(409, str(e))
        return wrapped

    def session(request: Request, create: bool = False) -> Any:
        sid = request.path_params["sid"]
        return table.get(sid, create=create)

    async def tasks(request: Request):
        return JSONResponse([{"id": t.id, "instruction": t.instruction, "user": t.user.model_dump(mode="json"),
                              "read_only": t.read_only} for t in world.build.tasks if t.env == world.name])

    async def sessions(request: Request):
        return JSONResponse(table.list())

    async def reset(request: Request):
        body = await _body(request)
        if isinstance(body, JSONResponse):
            return body
        tid = body.get("task")
        if tid is not None and not isinstance(tid, str):
            return _err(400, "task must be a task id string or null")
        task = world.task(tid) if tid else None
        s = session(request, create=True)
        s.reset(task)
        return JSONResponse(s.state())

    async def state(request: Request):
        s = session(request)
        if s is None:
            return _err(404, f"no session {request.path_params['sid']!r} (it made no request yet, or ended)")
        return JSONResponse(s.state(full=request.query_params.get("full") in ("1", "true", "yes")))

    async def score(request: Request):
        body = await _body(request)
        if isinstance(body, JSONResponse):
            return body
        s = session(request)
        if s is None:
            return _err(404, f"no session {request.path_params['sid']!r}")
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

    base = "/forgec/sessions/{sid}"
    return [
        Route("/forgec/tasks", guard(tasks), methods=["GET"]),
        Route("/forgec/sessions", guard(sessions), methods=["GET"]),
        Route(f"{base}/reset", guard(reset), methods=["POST"]),
        Route(f"{base}/state", guard(state), methods=["GET"]),
        Route(f"{base}/score", guard(score), methods=["POST"]),
        Route(base, guard(drop), methods=["DELETE"]),
    ]
