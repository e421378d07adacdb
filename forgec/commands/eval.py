"""`forgec eval BUILD --agent ... -k K`: k trials per task, pass^1..pass^k per env, run_results.json + episodes.jsonl."""

from __future__ import annotations

from pathlib import Path

import typer

RUN_RESULTS_SCHEMA_VERSION = "1.0"


def _fail(msg: str, code: int | None = None) -> None:
    """Print msg and exit: 2 for usage errors (documented contract), else 1 (or `code`)."""
    from rich.console import Console

    Console(stderr=True).print(msg, markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code if code is not None else (2 if msg.startswith("error[usage]") else 1))


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
) -> None:
    """Evaluate an agent on a build: pass^1..pass^k per environment and overall."""
    import json
    import time
    import uuid

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    import forgec
    from forgec.runtime import BuildError, load
    from forgec.runtime.agents import HFAgent, OpenAIAgent, OracleAgent, RandomAgent
    from forgec.runtime.episode import EpisodeLimits
    from forgec.runtime.eval import EvalResult, evaluate
    from forgec.runtime.judge import LLMJudge, RuleJudge
    from forgec.runtime.users import LLMUser, ScriptedUser

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if k < 1:
        _fail("error[usage]: -k must be at least 1")
    try:
        b = load(build)
        chosen = b.tasks_for([x.strip() for x in tasks.split(",") if x.strip()] if tasks else None)
    except BuildError as e:
        _fail(str(e))

    # ---- parties
    if agent == "oracle":
        agent_factory = OracleAgent
    elif agent == "random":
        def agent_factory(task, trial):
            return RandomAgent(seed=seed * 1_000_003 + trial)
    elif agent == "openai":
        if not (agent_base_url and agent_model):
            _fail("error[usage]: --agent openai needs --agent-base-url and --agent-model")
        if tool_format not in ("openai", "hermes"):
            _fail("error[usage]: --tool-format must be openai or hermes")
        shared: dict = {}

        def agent_factory(task, trial):
            if "a" not in shared:  # one client (one connection pool) for all episodes, made inside the event loop
                shared["a"] = OpenAIAgent(agent_base_url, agent_model, agent_api_key, tool_format=tool_format, temperature=temperature,
                                          timeout=timeout, max_retries=max_retries, max_tokens=max_new_tokens, seed=seed)
            return shared["a"]
    elif agent == "hf":
        if agent_path is None or not agent_path.is_dir():
            _fail("error[usage]: --agent hf needs --agent-path pointing to a local transformers model folder")
        hf = HFAgent(str(agent_path), temperature=temperature, seed=seed, max_new_tokens=max_new_tokens)

        def agent_factory(task, trial):
            return hf
    else:
        _fail(f"error[usage]: unknown --agent {agent!r}; choose oracle, openai, hf or random")

    if user == "scripted":
        user_factory = ScriptedUser
    elif user == "llm":
        if not (user_base_url and user_model):
            _fail("error[usage]: --user llm needs --user-base-url and --user-model")

        def user_factory(task, trial):
            return LLMUser(task, user_base_url, user_model, timeout=timeout, max_retries=max_retries, seed=seed * 1_000_003 + trial)
    else:
        _fail(f"error[usage]: unknown --user {user!r}; choose scripted or llm")

    if judge == "rule":
        judge_obj = RuleJudge()
    elif judge == "none":
        judge_obj = None
    elif judge == "llm":
        if not (judge_base_url and judge_model):
            _fail("error[usage]: --judge llm needs --judge-base-url and --judge-model")
        judge_obj = LLMJudge(judge_base_url, judge_model, timeout=timeout, max_retries=max_retries, seed=seed)
    else:
        _fail(f"error[usage]: unknown --judge {judge!r}; choose rule, llm or none")

    # ---- run
    out.mkdir(parents=True, exist_ok=True)
    partial = (out / "episodes.jsonl").open("w", encoding="utf-8")
    finished: list = []
    started = time.time()
    metadata = {
        "schema_version": RUN_RESULTS_SCHEMA_VERSION,
        "forgec_version": forgec.__version__,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "invocation_id": str(uuid.uuid4()),
        "build": str(build),
        "build_invocation_id": b.manifest.get("metadata", {}).get("invocation_id"),
        "args": {"agent": agent, "agent_model": agent_model, "agent_path": str(agent_path) if agent_path else None, "tool_format": tool_format,
                 "temperature": temperature, "max_new_tokens": max_new_tokens, "user": user, "user_model": user_model, "judge": judge, "judge_model": judge_model, "k": k,
                 "tasks": [t.id for t in chosen] if tasks else None, "concurrency": concurrency, "max_turns": max_turns,
                 "max_tool_calls": max_tool_calls, "max_tokens": max_tokens, "seed": seed},
    }
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stat]}"),
                  TimeElapsedColumn(), console=console, transient=True, disable=quiet) as prog:
        bar = prog.add_task("episodes", total=len(chosen) * k, stat="")

        def on_episode(ep) -> None:
            finished.append(ep)
            partial.write(ep.dumps() + "\n")
            partial.flush()
            ok = sum(1 for e in finished if e.reward >= 1.0)
            errs = sum(1 for e in finished if e.error)
            prog.update(bar, advance=1, stat=f"reward {ok}/{len(finished)}" + (f"  errors {errs}" if errs else ""))

        limits = EpisodeLimits(max_turns=max_turns, max_tool_calls=max_tool_calls, max_tokens=max_tokens)
        try:
            res = evaluate(b, agent_factory, user_factory, judge_obj, k, [t.id for t in chosen], concurrency, limits=limits,
                           on_episode=on_episode)
        except KeyboardInterrupt:
            res = EvalResult(k=k, episodes=list(finished), tasks=[t.id for t in chosen], interrupted=True)
    partial.close()
    metadata["elapsed_s"] = round(time.time() - started, 3)
    rr, ej = res.write(out, metadata)

    # ---- report
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
    console.print(f"wrote {rr} and {ej}")
    raise typer.Exit(130 if res.interrupted else 0)
