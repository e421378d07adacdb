"""`forgec serve-openenv BUILD [--port 8000]`: a build's tasks as an OpenEnv-compatible server (reset/step/state over
HTTP and OpenEnv's WebSocket sessions), each episode the scripted-user episode of `forgec eval`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from forgec.commands.common import ALLOW_MODIFIED_HELP, check_server_limits, load_build


def _eprint(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def command(
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile`."),
    tasks: str = typer.Option(None, "--tasks", "--env", help="Comma-separated task ids or env names to serve (default: all)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Loopback address to bind (the server has no authentication)."),
    port: int = typer.Option(8000, "--port", help="Port to bind (0: a free one; the URL is printed on stderr)."),
    max_turns: int = typer.Option(30, "--max-turns", help="Agent messages per episode, as `forgec eval --max-turns`."),
    max_tool_calls: int = typer.Option(50, "--max-tool-calls", help="Tool calls per episode, as `forgec eval --max-tool-calls`."),
    max_sessions: int = typer.Option(256, "--max-sessions", help="Most sessions (HTTP episode ids and WebSocket connections) at once."),
    idle_timeout: float = typer.Option(1800.0, "--idle-timeout", help="Seconds without a request after which an HTTP session ends."),
    body_limit: int = typer.Option(4 * 1024 * 1024, "--body-limit", help="Largest request body or WebSocket message, in bytes."),
    allowed_host: list[str] = typer.Option(None, "--allowed-host", help="Another Host header name to accept (besides the loopback names)."),
    allow_modified_build: bool = typer.Option(False, "--allow-modified-build", help=ALLOW_MODIFIED_HELP),
) -> None:
    """Serve a build's tasks as an OpenEnv environment: POST /reset, POST /step, GET /state, WS /ws (docs/adapters.md)."""
    from forgec import diagnostics as D

    check_server_limits(port, max_sessions, idle_timeout, body_limit)
    if max_turns < 1 or max_tool_calls < 0:
        D.usage_error("--max-turns must be at least 1 and --max-tool-calls at least 0")
    try:
        import gymnasium  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
        import websockets  # noqa: F401
    except ImportError as e:
        D.usage_error(f"forgec serve-openenv needs {e.name}, which is not installed", help="install the extra: pip install 'forgec[serve]'")
    from forgec.adapters.openenv import OpenEnvServer, is_loopback, serve
    from forgec.runtime import BuildError
    from forgec.runtime.episode import EpisodeLimits

    if not is_loopback(host):
        D.usage_error(f"--host {host}: serve-openenv binds a loopback address only (127.0.0.1, ::1, localhost)",
                      help="the server has no authentication; reach it from elsewhere through an SSH tunnel or a proxy you secure")
    b = load_build(build, allow_modified_build)
    ids = [x.strip() for x in tasks.split(",") if x.strip()] if tasks else None
    try:
        server = OpenEnvServer(b, ids, limits=EpisodeLimits(max_turns=max_turns, max_tool_calls=max_tool_calls),
                               max_sessions=max_sessions, idle_timeout=idle_timeout, body_limit=body_limit,
                               allowed_hosts=list(allowed_host or []))
    except BuildError as e:
        D.emit(e.diagnostic())
        raise typer.Exit(D.EXIT_ERRORS) from None
    n = len(server.task_ids)
    try:
        serve(server, host, port, announce=lambda url: _eprint(
            f"forgec serve-openenv: {n} task{'s' * (n != 1)} of {b.root.name} at {url} "
            f"(OpenEnv: POST {url}/reset, POST {url}/step, GET {url}/state, WS {url.replace('http', 'ws', 1)}/ws)"))
    except OSError as e:
        D.usage_error(f"cannot listen on {host}:{port}: {e.strerror or e}", help="choose another --port (0 picks a free one)")
    raise typer.Exit(D.EXIT_OK)
