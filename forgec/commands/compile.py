"""`forgec compile DOCS... -o BUILD`: the whole pipeline, incremental and atomic."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from forgec import diagnostics as D


class DiagFormat(str, Enum):
    full = "full"
    concise = "concise"
    json = "json"


class Synth(str, Enum):
    rules = "rules"
    llm = "llm"


class Sampler(str, Enum):
    scenario = "scenario"
    walk = "walk"


class Refine(str, Enum):
    none = "none"
    llm = "llm"


def _unsafe_out(out: Path, inputs: list[Path]) -> str | None:
    """Why writing the build to `out` would destroy user files (None when it is safe).

    The build replaces `out` wholesale (atomic rename), so `out` must not hold the
    docs being compiled and must be new, empty, or an earlier forgec build.
    """
    o = out.resolve()
    for i in inputs:
        r = i.resolve()
        if r == o or o in r.parents:
            where = "is the input folder itself" if r == o else f"contains the input {str(i)!r}"
            return (f"the build folder {str(out)!r} {where}; compiling would replace the docs "
                    "with the build (choose another -o, e.g. -o build)")
    if o.is_file():
        return f"-o {str(out)!r} is a file; give a folder for the build"
    if o.is_dir() and not (o / "manifest.json").is_file() and any(o.iterdir()):
        return (f"{str(out)!r} exists and is not a forgec build (no manifest.json); compiling would replace "
                "everything in it (choose an empty or new folder, or remove it first)")
    return None


def _print_kept(console, m) -> None:
    """One line on the hand edits the build kept (the table alone does not show them)."""
    kept = [b for e in m.envs.values() for b in e.blueprints.values() if b.origin != "sampled"]
    if kept:
        ok = sum(1 for b in kept if b.task)
        console.print(f"kept {len(kept)} hand-edited or added blueprint(s): {ok} compiled to tasks, {len(kept) - ok} rejected",
                      highlight=False, markup=False)
    srcs = sorted(f"src/{n}/env.forge" for n, e in m.envs.items() if e.src_origin == "edited")
    if srcs:
        console.print(f"kept hand-edited {', '.join(srcs)} (delete it to re-synthesize from the docs)", highlight=False, markup=False)


def _print_failed(console, result) -> None:
    """Say which envs failed and that their sources (hand edits included) were kept."""
    for r in result.failed:
        console.print(f"env {r.name!r} failed: kept its previous src/ and blueprints/ ({r.kept} file(s), hand edits included); "
                      "it has no tasks until it builds again (fix the errors above and recompile)", highlight=False, markup=False)


def _usage_problem(out: Path, inputs: list[Path], tasks: int, jobs: int, min_calls: int, max_calls: int) -> str | None:
    """Bad numbers or a dangerous -o are usage errors (exit 2) before any work."""
    if tasks < 0 or jobs < 1 or not 1 <= min_calls <= max_calls:
        return ("need --tasks >= 0, --jobs >= 1 and 1 <= --min-calls <= --max-calls "
                f"(got --tasks {tasks}, --jobs {jobs}, --min-calls {min_calls}, --max-calls {max_calls})")
    return _unsafe_out(out, inputs)


def _state_problem(states: list[str]) -> str | None:
    """`--state` must be ENV=FILE, once per env, naming a regular, non-empty file (else a usage error)."""
    seen: set[str] = set()
    for s in states:
        name, eq, f = s.partition("=")
        if not (eq and name and f):
            return f"--state takes ENV=FILE (e.g. --state airline=db.json), got {s!r}"
        if name in seen:
            return f"--state names env {name!r} twice"
        from forgec.userstate import not_a_state_file

        why = not_a_state_file(f)  # from stat alone: a FIFO is never opened, /proc files never read
        if why == "does not exist":
            return f"--state {s}: no such file {f!r}"
        if why:
            return f"--state {s}: {f!r} {why}"
        seen.add(name)
    return None


def _run(opts, console, quiet: bool):
    """compile_build under a progress bar; None when interrupted (Ctrl-C)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from forgec.build import compile_build

    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
        console=console, transient=True, disable=quiet,
    ) as prog:
        bar = prog.add_task("compiling environments", total=None)

        def progress(stage: str, name: str) -> None:
            if stage == "envs":  # the docs are read once, by the build; it tells how many envs follow
                prog.update(bar, total=max(1, int(name)))
            elif stage == "env":
                prog.update(bar, advance=1, description=f"built {name}")
            elif stage == "oracle":
                prog.update(bar, description="oracle self-check")

        try:
            return compile_build(opts, progress)
        except KeyboardInterrupt:
            return None


def _interrupted(out: Path) -> None:
    """Ctrl-C: the new tree is only swapped in at the end, so BUILD is as it was."""
    import os
    import shutil

    for tmp in (out.parent / f".{out.name}.scratch-{os.getpid()}", out.parent / f".{out.name}.tmp-{os.getpid()}"):
        shutil.rmtree(tmp, ignore_errors=True)
    state = "left unchanged" if (out / "manifest.json").is_file() else "not created"
    typer.echo(f"interrupted: {out} {state}", err=True)
    raise typer.Exit(130)


def _table(out: Path, m):
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"forgec build -> {escape(D.safe_text(str(out)))}", caption="ok: verified tools · bps: blueprints · rej: rejected\ncalls, reason(ing nodes), (inference) edges: means per task")
    for c in ("env", "tools", "ok", "bps", "tasks", "rej", "calls", "reason", "edges", "oracle"):
        t.add_column(c, justify="right" if c != "env" else "left")
    for name, e in m.envs.items():
        verified = sum(1 for r in e.tools.values() if r.verified)
        oracle = e.oracle.get("pass_rate")
        t.add_row(
            escape(f"{name} (failed)" if e.failed else name),
            str(len(e.tools)),
            str(verified),
            str(len(e.blueprints)),
            str(e.task_count),
            str(sum(e.rejected.values())),
            f"{e.stats.get('avg_calls', 0):.2f}",
            f"{e.stats.get('avg_reasoning_nodes', 0):.2f}",
            f"{e.stats.get('avg_inference_edges', 0):.2f}",
            "-" if oracle is None else f"{oracle:.2f}",
        )
    return t


def _report(result, console, out: Path, fmt: str, quiet: bool) -> None:
    """Diagnostics, the summary table, what was kept, and the counts line."""
    diags = result.diagnostics
    shown = [d for d in diags if d.is_error or (not quiet and (d.severity == D.Severity.WARNING or d.code == "state-mapping"))]
    if fmt == "json":
        print(D.render(shown, "json"))
    elif shown:
        # the renderer every command uses (`forgec check` too), printed as plain text: no rich markup or
        # emoji codes, text from the docs escaped (D.safe_text), never broken at the console width
        typer.echo(D.render(shown, fmt), err=True)
    m = result.manifest
    if m is not None and m.envs and fmt != "json":
        console.print(_table(out, m))
        _print_kept(console, m)
    if fmt != "json":
        _print_failed(console, result)
        console.print(D.summary_line(diags))


def command(
    inputs: list[Path] = typer.Argument(..., help="Tool documentation files or folders (OpenAI, MCP, OpenAPI/Swagger, BFCL)."),
    out: Path = typer.Option(Path("build"), "-o", "--out", help="Build folder (written atomically; hand-edited .forge files in it are kept)."),
    seed: int = typer.Option(0, "--seed", help="Seed for world states, sampling and verification: same inputs + seed give a byte-identical build."),
    state_size: int = typer.Option(30, "--state-size", help="Records per entity in each environment's world state."),
    tasks: int = typer.Option(120, "--tasks", "-n", help="Blueprints to sample per environment."),
    min_calls: int = typer.Option(3, "--min-calls", help="Fewest tool calls in a sampled blueprint."),
    max_calls: int = typer.Option(8, "--max-calls", help="Most tool calls in a sampled blueprint."),
    jobs: int = typer.Option(1, "-j", "--jobs", help="Environments built in parallel (processes)."),
    env: str = typer.Option(None, "--env", help="Name of the environment when the inputs form exactly one."),
    synth: Synth = typer.Option(Synth.rules, "--synth", help="Synthesis backend: rules (deterministic, offline) or llm."),
    llm_base_url: str = typer.Option(None, "--llm-base-url", help="OpenAI-compatible endpoint for --synth llm."),
    llm_model: str = typer.Option(None, "--llm-model", help="Model name for --synth llm."),
    refine: Refine = typer.Option(Refine.none, "--refine", help="Instruction wording: none (deterministic templates) or llm (rephrased through --llm-base-url/--llm-model, cached, leak-checked)."),
    sampler: Sampler = typer.Option(Sampler.scenario, "--sampler", help="Task sampler: scenario (a user, their records and 1-3 intents worded as a person asks) or walk (AutoForge's random walks over the tool graph)."),
    no_oracle: bool = typer.Option(False, "--no-oracle", help="Skip the oracle self-check at the end."),
    fmt: DiagFormat = typer.Option(DiagFormat.full, "--format", help="Diagnostics format: full, concise or json."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Only print diagnostics with errors and the summary."),
    state: list[str] = typer.Option([], "--state", help="ENV=FILE: start ENV from this JSON world (its entities, or a τ²-style db.json of collections), validated; repeatable."),
) -> None:
    """Compile tool docs into environments, blueprints and tasks under BUILD."""
    from rich.console import Console

    from forgec.build import CompileOptions
    from forgec.diagnostics import usage_error

    synth, refine, fmt = synth.value, refine.value, fmt.value
    problem = _usage_problem(out, list(inputs), tasks, jobs, min_calls, max_calls) or _state_problem(state)
    if problem:
        usage_error(problem)
    console = Console(stderr=True, emoji=False)  # `:skull:` in a name stays text
    if not console.is_terminal and console.width < 120:
        console.width = 120  # logs and CI: keep the summary table readable
    llm = None
    if synth == "llm" or refine == "llm":
        from forgec.synth.llm import LLMConfig

        if not (llm_base_url and llm_model):
            usage_error("--synth llm and --refine llm need --llm-base-url and --llm-model")
        llm = LLMConfig(base_url=llm_base_url, model=llm_model)
    opts = CompileOptions(inputs=list(inputs), out=out, seed=seed, state_size=state_size, tasks_per_env=tasks,
                          min_calls=min_calls, max_calls=max_calls, jobs=jobs, synth=synth, llm=llm, env_name=env,
                          oracle_check=not no_oracle, refine=refine, sampler=sampler.value,
                          states={n: Path(f) for n, _, f in (s.partition("=") for s in state)})
    result = _run(opts, console, quiet)
    if result is None:
        _interrupted(out)
    _report(result, console, out, fmt, quiet)
    raise typer.Exit(1 if D.has_errors(result.diagnostics) else 0)
