"""`forgec serve BUILD [--env NAME] [--task ID] [--transport stdio|http]`: a build's environments as an MCP server.

With no --env and no --task, a build with several environments is served whole: over HTTP each env is its
own endpoint, /mcp/<env>; over stdio the tools are named <env>__<tool> until the harness plays a task
(docs/serve.md, "One server for all envs")."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from forgec.commands.common import ALLOW_MODIFIED_HELP, check_server_limits, load_build


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def _pick(b, env: str | None, task: str | None):
    """The Worlds (one, or every env of the build when neither --env nor --task names one) and the default task the
    options name; bad names exit 1 with the build's diagnostics."""
    from forgec import diagnostics as D
    from forgec.runtime import BuildError
    from forgec.serve.sessions import World

    try:
        t = b.task(task) if task else None
        name = env or (t.env if t else None)
        if name is None and not b.envs:
            D.usage_error("the build has no environments to serve")
        names = [name] if name is not None else sorted(b.envs)
        worlds = [World(b, n) for n in names]
        if t is not None:
            t = worlds[0].task(t.id)
        for w in worlds:
            w.world_state()  # a missing/changed world state is reported now, not at the first call
    except BuildError as e:
        D.emit(e.diagnostic())
        raise typer.Exit(D.EXIT_ERRORS) from None
    return worlds, t


def _episode_config(o: dict):
    """The simulated user and judge episodes are played with: `forgec eval`'s own factories for the same options."""
    from forgec.commands.common import judge_for, user_factory
    from forgec.serve.episodes import EpisodeConfig

    o = {"timeout": 60.0, "max_retries": 4, "seed": 0, **o}
    user = user_factory(o["user"], o)
    return EpisodeConfig(user_factory=(lambda task: user(task, 0)) if o["user"] == "llm" else user, judge=judge_for(o["judge"], o))


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
    user: str = typer.Option("scripted", "--user", help="Episode mode: the simulated user, scripted or llm (as forgec eval)."),
    user_base_url: str = typer.Option(None, "--user-base-url", help="Endpoint of the LLM user (--user llm)."),
    user_model: str = typer.Option(None, "--user-model", help="Model of the LLM user (--user llm)."),
    judge: str = typer.Option("rule", "--judge", help="Episode mode: the MEU judge, rule, llm or none (as forgec eval)."),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="Endpoint of the LLM judge (--judge llm)."),
    judge_model: str = typer.Option(None, "--judge-model", help="Model of the LLM judge (--judge llm)."),
    allow_modified_build: bool = typer.Option(False, "--allow-modified-build", help=ALLOW_MODIFIED_HELP),
) -> None:
    """Serve a build's environments over MCP (tools/list, tools/call): the one --env (or --task) names, else every
    env of the build; with an evaluation side channel the agent cannot reach (it needs a token; see docs/security.md)
    and an episode mode that plays `forgec eval`'s episode (docs/serve.md)."""
    from forgec import diagnostics as D

    check_server_limits(port, max_sessions, idle_timeout, body_limit)
    if max_sessions_per_client is not None and max_sessions_per_client < 1:
        D.usage_error(f"--max-sessions-per-client must be at least 1, not {max_sessions_per_client}")
    try:
        import mcp  # noqa: F401
    except ImportError:
        D.usage_error("forgec serve needs the MCP SDK, which is not installed",
                      help="install the extra: pip install 'forgec[serve]'")
    episodes = _episode_config({"user": user, "user_base_url": user_base_url, "user_model": user_model, "judge": judge,
                                "judge_base_url": judge_base_url, "judge_model": judge_model})
    b = load_build(build, allow_modified_build)
    worlds, t = _pick(b, env, task)

    import anyio

    from forgec.serve.server import STDIO_SESSION, build_server, eprint, http_app, serve_http, serve_stdio
    from forgec.serve.sessions import SessionTable

    from forgec.serve.security import TokenError, exposure_warning, resolve_token

    try:
        token, token_from = resolve_token(eval_token, None, eval_token_file)
    except TokenError as e:
        D.usage_error(str(e), help="the token guards the score and the gold state from the agent (docs/security.md)")
    stdio = transport is Transport.stdio
    table = SessionTable(worlds, t, max_sessions=max_sessions, max_per_client=max_sessions_per_client,
                         idle_s=None if stdio else idle_timeout, episodes=episodes)
    if docs:
        missing = [str(p) for p in docs if not p.is_file()]
        if missing:
            D.usage_error(f"--docs: no such file: {', '.join(missing)}")
    server = build_server(table, transport=transport.value, token=token, docs=docs or None)
    if table.world is not None:
        w = table.world
        what = f"{w.name} ({len(w.tools)} tools, {'task ' + t.id if t else 'world state'})"
    else:
        what = f"{len(worlds)} environments ({', '.join(f'{w.name}: {len(w.tools)} tools' for w in worlds)})"
    if token_from == "new":  # printed once, on stderr: the agent reads stdout (stdio) or the network, never this
        eprint(f"forgec serve: evaluation token: {token}")
    if stdio:
        if table.world is not None:
            table.create(STDIO_SESSION)
            eprint(f"forgec serve: {what} on stdio")
        else:
            eprint(f"forgec serve: {what} on stdio, tools named <env>__<tool> until a task is played")
        anyio.run(lambda: serve_stdio(server, tools_change=table.multi))
        raise typer.Exit(D.EXIT_OK)
    warn = exposure_warning(host)
    if warn:
        eprint(f"forgec serve: warning: {warn}")
    app = http_app(server, table, host=host, token=token, body_limit=body_limit, allowed_hosts=list(allowed_host or []),
                   json_response=not sse_responses)
    try:
        per_env = "" if table.world is not None else f"one env per path, /mcp/<env> for {', '.join(table.worlds)}; "
        serve_http(app, host, port, announce=lambda url: eprint(f"forgec serve: {what} at {url} ({per_env}"
                                                                 f"evaluation channel: {url[:-4]}/forgec/sessions, "
                                                                 "Authorization: Bearer <token>)"))
    except OSError as e:
        D.usage_error(f"cannot listen on {host}:{port}: {e.strerror or e}", help="choose another --port (0 picks a free one)")
    raise typer.Exit(D.EXIT_OK)
