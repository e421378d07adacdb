"""`forgec eval BUILD --agent ... -k K`: k trials per task, pass^1..pass^k per env, run_results.json + episodes.jsonl."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer

from forgec.commands.common import ALLOW_MODIFIED_HELP, judge_for, load_build, user_factory

RUN_RESULTS_SCHEMA_VERSION = "1.0"


def _agent_factory(agent: str, o: dict):
    """The agent for each (task, trial), or a usage error for a missing/unknown option."""
    from forgec.diagnostics import usage_error
    from forgec.runtime.agents import HFAgent, OpenAIAgent, OracleAgent, RandomAgent

    if agent == "oracle":
        return OracleAgent
    if agent == "random":
        return lambda task, trial: RandomAgent(seed=o["seed"] * 1_000_003 + trial)
    if agent == "openai":
        if not (o["agent_base_url"] and o["agent_model"]):
            usage_error("--agent openai needs --agent-base-url and --agent-model")
        if o["tool_format"] not in ("openai", "hermes"):
            usage_error(f"--tool-format must be openai or hermes, not {o['tool_format']!r}")
        shared: dict = {}

        def openai_factory(task, trial):
            if "a" not in shared:  # one client (one connection pool) for all episodes, made inside the event loop
                shared["a"] = OpenAIAgent(o["agent_base_url"], o["agent_model"], o["agent_api_key"], tool_format=o["tool_format"],
                                          temperature=o["temperature"], timeout=o["timeout"], max_retries=o["max_retries"],
                                          max_tokens=o["max_new_tokens"], seed=o["seed"])
            return shared["a"]
        return openai_factory
    if agent == "hf":
        path = o["agent_path"]
        if path is None or not path.is_dir():
            usage_error("--agent hf needs --agent-path pointing to a local transformers model folder")
        loaded: dict = {}

        def hf_factory(task, trial):
            if "a" not in loaded:  # the model loads once, after the options and the build were checked
                loaded["a"] = HFAgent(str(path), temperature=o["temperature"], seed=o["seed"], max_new_tokens=o["max_new_tokens"])
            return loaded["a"]
        return hf_factory
    usage_error(f"unknown --agent {agent!r}; choose oracle, openai, hf or random")


def _metadata(build: Path, b, chosen: list, o: dict, started: float) -> dict:
    import time
    import uuid

    import forgec

    keys = ("agent", "agent_model", "tool_format", "temperature", "max_new_tokens", "user", "user_model", "judge", "judge_model",
            "k", "concurrency", "max_turns", "max_tool_calls", "max_tokens", "seed")
    args = {k: o[k] for k in keys}
    args["agent_path"] = str(o["agent_path"]) if o["agent_path"] else None
    args["tasks"] = [t.id for t in chosen] if o["tasks"] else None
    args["allow_modified_build"] = o["allow_modified_build"]
    return {
        "schema_version": RUN_RESULTS_SCHEMA_VERSION,
        "forgec_version": forgec.__version__,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "invocation_id": str(uuid.uuid4()),
        "build": str(build),
        "build_invocation_id": b.manifest.get("metadata", {}).get("invocation_id"),
        "build_modified": list(b.modified),
        "args": args,
    }


def _run(b, chosen: list, parties: tuple, o: dict, console):
    """Run k trials per task with a progress bar; episodes.jsonl grows as they finish (kept on Ctrl-C)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from forgec.runtime.episode import EpisodeLimits
    from forgec.runtime.eval import EvalResult, evaluate

    out, k = o["out"], o["k"]
    finished: list = []
    with (out / "episodes.jsonl").open("w", encoding="utf-8") as partial, \
            Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stat]}"),
                     TimeElapsedColumn(), console=console, transient=True, disable=o["quiet"]) as prog:
        bar = prog.add_task("episodes", total=len(chosen) * k, stat="")

        def on_episode(ep) -> None:
            finished.append(ep)
            partial.write(ep.dumps() + "\n")
            partial.flush()
            ok = sum(1 for e in finished if e.reward >= 1.0)
            errs = sum(1 for e in finished if e.error)
            prog.update(bar, advance=1, stat=f"reward {ok}/{len(finished)}" + (f"  errors {errs}" if errs else ""))

        limits = EpisodeLimits(max_turns=o["max_turns"], max_tool_calls=o["max_tool_calls"], max_tokens=o["max_tokens"])
        try:
            with _terminate_like_ctrl_c():
                return evaluate(b, *parties, k, [t.id for t in chosen], o["concurrency"], limits=limits, on_episode=on_episode)
        except KeyboardInterrupt:
            return EvalResult(k=k, episodes=list(finished), tasks=[t.id for t in chosen], interrupted=True)


@contextlib.contextmanager
def _terminate_like_ctrl_c():
    """SIGTERM (kill, a job scheduler, a container stop) and SIGHUP (the terminal closed) end the run as Ctrl-C does:
    the finished episodes and run_results.json are written, exit 130. Each is turned into SIGINT, so inside asyncio
    the runner's own SIGINT handling cancels the episodes in flight."""
    import signal

    def as_sigint(signum, frame):
        signal.raise_signal(signal.SIGINT)

    old = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            try:
                old[sig] = signal.signal(sig, as_sigint)
            except ValueError:  # not the main thread: leave the signals alone
                pass
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def _report(res, chosen: list, k: int, console) -> None:
    import json

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"pass^k ({len(chosen)} tasks x {k} trials" + (", interrupted" if res.interrupted else "") + ")")
    table.add_column("env", style="bold")
    table.add_column("tasks", justify="right")
    for j in range(1, k + 1):
        table.add_column(f"pass^{j}", justify="right")
    rows = sorted(res.pass_hat_k["per_env"].items()) + [("overall", res.pass_hat_k["overall"])]
    for env, vals in rows:
        n = len({e.task_id for e in res.episodes if env == "overall" or e.env == env})
        table.add_row(env, str(n), *[("-" if vals.get(str(j)) is None else f"{vals[str(j)]:.3f}") for j in range(1, k + 1)])
    Console().print(table)
    s = res.summary()
    console.print(f"episodes {s['episodes']}/{s['expected_episodes']}  mean reward {s['mean_reward']}  errors {s['errors']}  "
                  f"user errors (MEU) {s['user_errors']}  end reasons {json.dumps(s['end_reasons'])}")


def command(
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile`."),
    agent: str = typer.Option("oracle", "--agent", help="oracle | openai | hf | random"),
    agent_base_url: str = typer.Option(None, "--agent-base-url", help="OpenAI-compatible endpoint of the agent (--agent openai)."),
    agent_model: str = typer.Option(None, "--agent-model", help="Model name at --agent-base-url."),
    agent_api_key: str = typer.Option(None, "--agent-api-key", envvar="FORGEC_AGENT_API_KEY", help="API key (default: $OPENAI_API_KEY or none)."),
    agent_path: Path = typer.Option(None, "--agent-path", help="Local transformers model folder (--agent hf)."),
    tool_format: str = typer.Option("openai", "--tool-format", help="openai (API tools) or hermes (<tool_call> text) for --agent openai."),
    temperature: float = typer.Option(0.0, "--temperature", help="Agent sampling temperature."),
    max_new_tokens: int = typer.Option(512, "--max-new-tokens", help="Tokens an agent may generate per turn (hf; openai: max_tokens)."),
    user: str = typer.Option("scripted", "--user", help="scripted | llm"),
    user_base_url: str = typer.Option(None, "--user-base-url", help="Endpoint of the LLM user."),
    user_model: str = typer.Option(None, "--user-model", help="Model of the LLM user."),
    judge: str = typer.Option("rule", "--judge", help="rule | llm | none (MEU judge)"),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="Endpoint of the LLM judge."),
    judge_model: str = typer.Option(None, "--judge-model", help="Model of the LLM judge."),
    k: int = typer.Option(1, "-k", help="Trials per task (pass^1..pass^k)."),
    tasks: str = typer.Option(None, "--tasks", "--env", help="Comma-separated task ids or env names (default: all); --env is the same option, named as in the other commands."),
    concurrency: int = typer.Option(8, "--concurrency", "-c", help="Episodes in flight."),
    max_turns: int = typer.Option(30, "--max-turns"),
    max_tool_calls: int = typer.Option(50, "--max-tool-calls"),
    max_tokens: int = typer.Option(None, "--max-tokens", help="Agent completion-token budget per episode."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds per LLM request."),
    max_retries: int = typer.Option(4, "--max-retries", help="Retries per LLM request (429/5xx/timeouts/disconnects)."),
    seed: int = typer.Option(0, "--seed", help="Seed of random agents and sampling."),
    out: Path = typer.Option(Path("runs/eval"), "-o", "--out", help="Folder for run_results.json and episodes.jsonl."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
    allow_modified_build: bool = typer.Option(False, "--allow-modified-build", help=ALLOW_MODIFIED_HELP),
) -> None:
    """Evaluate an agent on a build: pass^1..pass^k per environment and overall."""
    import time

    from rich.console import Console

    from forgec import diagnostics as D
    from forgec.runtime import BuildError

    o = dict(locals())
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if k < 1:
        D.usage_error(f"-k must be at least 1, not {k}")
    parties = (_agent_factory(agent, o), user_factory(user, o), judge_for(judge, o))  # usage errors before the build is read
    b = load_build(build, allow_modified_build)
    try:
        chosen = b.tasks_for([x.strip() for x in tasks.split(",") if x.strip()] if tasks else None)
    except BuildError as e:
        D.emit(e.diagnostic())
        raise typer.Exit(D.EXIT_ERRORS) from None
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    metadata = _metadata(build, b, chosen, o, started)
    res = _run(b, chosen, parties, o, console)
    metadata["elapsed_s"] = round(time.time() - started, 3)
    rr, ej = res.write(out, metadata)
    _report(res, chosen, k, console)
    console.print(f"wrote {rr} and {ej}")
    raise typer.Exit(D.EXIT_INTERRUPTED if res.interrupted else D.EXIT_OK)
