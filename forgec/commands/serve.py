"""`forgec serve BUILD --env NAME [--task ID] [--transport stdio|http]`: one environment as an MCP server."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from forgec.commands.common import ALLOW_MODIFIED_HELP, load_build


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def _pick(b, env: str | None, task: str | None):
    """The World and default task the options name; bad names exit 1 with the build's diagnostics."""
    from forgec import diagnostics as D
    from forgec.runtime import BuildError
    from forgec.serve.sessions import World

    try:
        t = b.task(task) if task else None
        name = env or (t.env if t else None)
        if name is None:
            if len(b.envs) != 1:
                D.usage_error(f"the build has {len(b.envs)} environments; name one with --env",
                              help=f"environments: {', '.join(sorted(b.envs)) or '(none)'}")
            name = next(iter(b.envs))
        w = World(b, name)
        if t is not None:
            t = w.task(t.id)
        w.world_state()  # a missing/changed world state is reported now, not at the first call
    except BuildError as e:
        D.emit(e.diagnostic())
        raise typer.Exit(D.EXIT_ERRORS) from None
    return w, t


def command(
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile`."),
    env: str = typer.Option(None, "--env", "-e", help="Environment to serve (default: the task's, or the build's only one)."),
    task: str = typer.Option(None, "--task", "-t", help="Task id <env>/<blueprint>: sessions start at its initial state "
                                                         "(default: the env's world state)."),
    transport: Transport = typer.Option(Transport.stdio, "--transport", help="stdio (one client, this process) or http "
                                                                              "(streamable HTTP, one env per MCP session)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (--transport http)."),
    port: int = typer.Option(8000, "--port", help="Port to bind (--transport http; 0: a free one, printed on stderr)."),
    eval_token: str = typer.Option(None, "--eval-token", envvar="FORGEC_SERVE_EVAL_TOKEN", show_envvar=True,
                                   help="Token the evaluation channel requires (/forgec routes; stdio forgec/* requests). "
                                        "Prefer the env var or --eval-token-file: argv is visible to other local users. "
                                        "Default: a new one, printed once on stderr."),
    eval_token_file: Path = typer.Option(None, "--eval-token-file", help="Read the token from this file, or create it "
                                                                         "(mode 0600) with a new token."),
    max_sessions: int = typer.Option(1000, "--max-sessions", help="Most sessions at once; a new one past it is refused "
                                                                  "(idle ones are reaped first)."),
    max_sessions_per_client: int = typer.Option(None, "--max-sessions-per-client",
                                                help="Most sessions one client address may hold (default: --max-sessions)."),
    idle_timeout: float = typer.Option(1800.0, "--idle-timeout", help="Seconds without a call after which a session ends."),
    body_limit: int = typer.Option(4 * 1024 * 1024, "--body-limit", help="Largest request body in bytes, every route."),
    allowed_host: list[str] = typer.Option(None, "--allowed-host", help="Another Host header value to accept (a name "
                                                                        "clients use to reach a non-loopback bind)."),
    docs: list[Path] = typer.Option(None, "--docs", help="Read titles, annotations and output schemas from these tool docs "
                                                          "(default: what `forgec compile` recorded in the build)."),
    sse_responses: bool = typer.Option(False, "--sse-responses", help="HTTP: answer each POST with an SSE stream (the SDK's "
                                                                      "default) instead of one JSON body; slower, and forgec's "
                                                                      "tools send nothing to stream."),
    allow_modified_build: bool = typer.Option(False, "--allow-modified-build", help=ALLOW_MODIFIED_HELP),
) -> None:
    """Serve one environment of a build over MCP (tools/list, tools/call), with an evaluation side channel the agent
    cannot reach (it needs a token; see docs/security.md)."""
    from forgec import diagnostics as D

    if not 0 <= port <= 65535:
        D.usage_error(f"--port must be between 0 and 65535, not {port}")
    if max_sessions < 1:
        D.usage_error(f"--max-sessions must be at least 1, not {max_sessions}")
    if max_sessions_per_client is not None and max_sessions_per_client < 1:
        D.usage_error(f"--max-sessions-per-client must be at least 1, not {max_sessions_per_client}")
    if not idle_timeout > 0:
        D.usage_error(f"--idle-timeout must be a positive number of seconds, not {idle_timeout}")
    if body_limit < 1024:
        D.usage_error(f"--body-limit must be at least 1024 bytes, not {body_limit}")
    try:
        import mcp  # noqa: F401
    except ImportError:
        D.usage_error("forgec serve needs the MCP SDK, which is not installed",
                      help="install the extra: pip install 'forgec[serve]'")
    b = load_build(build, allow_modified_build)
    w, t = _pick(b, env, task)

    import anyio

    from forgec.serve.server import STDIO_SESSION, build_server, eprint, http_app, serve_http, serve_stdio
    from forgec.serve.sessions import SessionTable

    from forgec.serve.security import TokenError, exposure_warning, resolve_token

    try:
        token, token_from = resolve_token(eval_token, None, eval_token_file)
    except TokenError as e:
        D.usage_error(str(e), help="the token guards the score and the gold state from the agent (docs/security.md)")
    stdio = transport is Transport.stdio
    table = SessionTable(w, t, max_sessions=max_sessions, max_per_client=max_sessions_per_client,
                         idle_s=None if stdio else idle_timeout)
    if docs:
        missing = [str(p) for p in docs if not p.is_file()]
        if missing:
            D.usage_error(f"--docs: no such file: {', '.join(missing)}")
    server = build_server(table, transport=transport.value, token=token, docs=docs or None)
    what = f"{w.name} ({len(w.tools)} tools, {'task ' + t.id if t else 'world state'})"
    if token_from == "new":  # printed once, on stderr: the agent reads stdout (stdio) or the network, never this
        eprint(f"forgec serve: evaluation token: {token}")
    if stdio:
        table.create(STDIO_SESSION)
        eprint(f"forgec serve: {what} on stdio")
        anyio.run(serve_stdio, server)
        raise typer.Exit(D.EXIT_OK)
    warn = exposure_warning(host)
    if warn:
        eprint(f"forgec serve: warning: {warn}")
    app = http_app(server, table, host=host, token=token, body_limit=body_limit, allowed_hosts=list(allowed_host or []),
                   json_response=not sse_responses)
    try:
        serve_http(app, host, port, announce=lambda url: eprint(f"forgec serve: {what} at {url} "
                                                                 f"(evaluation channel: {url[:-4]}/forgec/sessions, "
                                                                 "Authorization: Bearer <token>)"))
    except OSError as e:
        D.usage_error(f"cannot listen on {host}:{port}: {e.strerror or e}", help="choose another --port (0 picks a free one)")
    raise typer.Exit(D.EXIT_OK)
