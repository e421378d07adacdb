"""`forgec evolve BUILD --agent ... -k K --rounds N`: evaluate, classify failures, write evolve.json, recompile (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from forgec.commands.common import check_build, judge_for, user_factory

AGENTS = ("oracle", "oracle-naive", "oracle-hedge", "random", "openai", "hf")


def _agents(names: str, o: dict) -> dict:
    """name -> factory(build) -> factory(task, trial); usage errors before the build is read."""
    from forgec.diagnostics import usage_error

    out = {}
    for name in [x.strip() for x in names.split(",") if x.strip()]:
        if name == "oracle":
            from forgec.runtime.agents import OracleAgent

            out[name] = lambda b: OracleAgent
        elif name == "oracle-naive":
            from forgec.runtime.weakagent import NaiveOracle

            out[name] = lambda b: (lambda task, trial: NaiveOracle(task, trial, b.initial_state(task)))
        elif name == "oracle-hedge":
            from forgec.runtime.weakagent import HedgeOracle

            out[name] = lambda b: (lambda task, trial: HedgeOracle(task))
        elif name == "random":
            from forgec.runtime.agents import RandomAgent

            out[name] = lambda b: (lambda task, trial: RandomAgent(seed=o["seed"] * 1_000_003 + trial))
        elif name == "openai":
            if not (o["agent_base_url"] and o["agent_model"]):
                usage_error("--agent openai needs --agent-base-url and --agent-model")
            from forgec.runtime.agents import OpenAIAgent

            def openai(b, shared: dict = {}):  # noqa: B006 - one client per run
                def make(task, trial):
                    if "a" not in shared:
                        shared["a"] = OpenAIAgent(o["agent_base_url"], o["agent_model"], tool_format=o["tool_format"],
                                                  temperature=o["temperature"], timeout=o["timeout"], seed=o["seed"])
                    return shared["a"]
                return make
            out[name] = openai
        elif name == "hf":
            if o["agent_path"] is None or not o["agent_path"].is_dir():
                usage_error("--agent hf needs --agent-path pointing to a local transformers model folder")
            from forgec.runtime.agents import HFAgent

            def hf(b, held: dict = {}):  # noqa: B006 - the model loads once per run
                if "a" not in held:
                    held["a"] = HFAgent(str(o["agent_path"]), temperature=o["temperature"], seed=o["seed"])
                return lambda task, trial: held["a"]
            out[name] = hf
        else:
            usage_error(f"unknown --agent {name!r}; choose from {', '.join(AGENTS)} (comma-separated for several)")
    if not out:
        usage_error("--agent names no agent")
    return out


def compile_again(build_dir: Path, inputs: list[Path]) -> Any:
    """Recompile the build with the options its manifest records (incremental; evolve.json is read from it)."""
    from forgec.build import CompileOptions, compile_build

    m = json.loads((build_dir / "manifest.json").read_text(encoding="utf-8"))
    o = m.get("metadata", {}).get("options", {})
    keys = ("seed", "state_size", "tasks_per_env", "min_calls", "max_calls", "synth", "verify_calls", "refine", "sampler")
    return compile_build(CompileOptions(inputs=list(inputs), out=build_dir, **{k: o[k] for k in keys if k in o}))


def _table(rr, shift: list, console) -> None:
    from rich.table import Table

    console.print(f"[bold]round {rr.round}[/bold]: {rr.tasks} tasks, {rr.episodes} episodes; failure classes "
                  + ", ".join(f"{c} {n}" for c, n in rr.classes.items()))
    t = Table(title=f"round {rr.round}: pass rate by family")
    for c in ("env", "family (kind|tools|condition)", "pass rate"):
        t.add_column(c)
    for env, fams in rr.pass_by_family.items():
        for fid, p in fams.items():
            t.add_row(env, fid, f"{p:.2f}")
    console.print(t)
    for a in rr.added:
        console.print(f"  rule added: {a['env']} {a['action']} {a['family']} ({a.get('class')}, {a.get('detector', '')}"
                      f"{', weight ' + str(a['weight']) if a['action'] == 'weight' else ''}; evidence {', '.join(a['evidence'][:3]) or '-'})")
    for f, b, a in shift[:20]:
        console.print(f"  task mix: {f}: {b} -> {a}")
    if len(shift) > 20:
        console.print(f"  task mix: {len(shift) - 20} more families changed (--report lists them all)")


def command(
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile` (evolve.json is written into it)."),
    agent: str = typer.Option("oracle-naive", "--agent", help="Comma-separated: " + " | ".join(AGENTS) + " (two doc-following agents that disagree are evidence too)."),
    agent_base_url: str = typer.Option(None, "--agent-base-url", help="Endpoint of --agent openai."),
    agent_model: str = typer.Option(None, "--agent-model", help="Model at --agent-base-url."),
    agent_path: Path = typer.Option(None, "--agent-path", help="Local transformers model folder (--agent hf)."),
    tool_format: str = typer.Option("openai", "--tool-format", help="openai or hermes (--agent openai)."),
    temperature: float = typer.Option(0.0, "--temperature"),
    user: str = typer.Option("scripted", "--user", help="scripted | llm"),
    user_base_url: str = typer.Option(None, "--user-base-url"),
    user_model: str = typer.Option(None, "--user-model"),
    judge: str = typer.Option("rule", "--judge", help="rule | llm | none (MEU judge: user errors)"),
    judge_base_url: str = typer.Option(None, "--judge-base-url"),
    judge_model: str = typer.Option(None, "--judge-model"),
    k: int = typer.Option(4, "-k", help="Trials per task (pass^k)."),
    rounds: int = typer.Option(1, "--rounds", help="Evaluate -> rules -> recompile rounds."),
    docs: list[Path] = typer.Option(None, "--docs", help="The tool docs the build was compiled from (default: the manifest's sources)."),
    concurrency: int = typer.Option(8, "--concurrency"),
    timeout: float = typer.Option(60.0, "--timeout"),
    max_retries: int = typer.Option(4, "--max-retries"),
    seed: int = typer.Option(0, "--seed"),
    report: Path = typer.Option(None, "--report", help="Write every round's verdicts and rules added as JSON here."),
) -> None:
    """Close the loop: evaluate an agent, classify each failure (user error, task defect, check defect, agent error), write rules to BUILD/evolve.json, recompile."""
    from rich.console import Console

    from forgec import diagnostics as D
    from forgec.evolve import RULES_FILE, analyse, check_rules, evaluate_round, mix_buckets, mix_shift, write_rules
    from forgec.runtime import BuildError

    o = dict(locals())
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if k < 1 or rounds < 1:
        D.usage_error("-k and --rounds must be at least 1")
    agents = _agents(agent, o)
    uf, jd = user_factory(user, o), judge_for(judge, o)
    check_build(build, False)  # missing, corrupt or tampered: the same diagnostics as `forgec eval`
    sources = list(docs or [])
    if not sources:
        m = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
        sources = sorted({Path(s) for e in m.get("envs", {}).values() for s in e.get("sources", [])})
    missing = [s for s in sources if not s.exists()]
    if missing:
        D.usage_error(f"the docs to recompile from are not here: {', '.join(map(str, missing))}", help="pass them with --docs")
    rules_path = build / RULES_FILE
    log = []
    for r in range(1, rounds + 1):
        old: dict = {}
        if rules_path.is_file():
            doc, diags = check_rules(rules_path)
            if diags:
                for d in diags:
                    D.emit(d)
                raise typer.Exit(D.EXIT_ERRORS)
            old = {env: body["rules"] for env, body in doc["envs"].items()}
        try:
            b, eps = evaluate_round(build, agents, k, uf, jd, concurrency=concurrency)
        except BuildError as e:
            D.emit(e.diagnostic())
            raise typer.Exit(D.EXIT_ERRORS) from None
        rr, new = analyse(build, b, eps, r, old)
        write_rules(rules_path, new)
        res = compile_again(build, sources)
        for d in res.diagnostics:
            if d.severity == D.Severity.ERROR:
                D.emit(d)
        from forgec.runtime import load

        from forgec.runtime.curriculum import coarse_id, family_of

        after: dict = {}
        for t in load(build).tasks:
            key = f"{t.env} {coarse_id(family_of(t))}"
            after[key] = after.get(key, 0) + 1
        shift = mix_shift(rr.mix, after)
        _table(rr, shift, console)
        buckets = {"before": mix_buckets(rr.mix, rr.pass_by_family), "after": mix_buckets(after, rr.pass_by_family)}
        console.print("  task mix by this round's pass rate (share of tasks): " + "; ".join(
            f"{k} {buckets['before'][k]:.2f} -> {buckets['after'][k]:.2f}" for k in buckets["before"]))
        log.append({"round": r, "classes": rr.classes, "pass_by_family": rr.pass_by_family, "added": rr.added,
                    "mix_shift": shift, "mix_buckets": buckets, "verdicts": [v.to_json() for v in rr.verdicts]})
        if report:  # after every round, so a failed recompile still leaves what was found
            report.write_text(json.dumps(log, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
        if not res.ok:
            raise typer.Exit(D.EXIT_ERRORS)
    console.print(f"rules in {rules_path}")
