"""`forgec sample PATH`: sample task blueprints for each environment and write them as .forge files.

PATH is a build folder (its generated modules and world states are used as
they are), tool docs or .forge files (compiled in memory first). Output:
`DIR/<env>/<name>.forge`, one formatted blueprint per file, and a summary table.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from forgec.diagnostics import INTERNAL, Span, error, has_errors, info, render, usage_error, warning


class SampleFormat(str, Enum):
    table = "table"
    json = "json"


def command(
    path: Path = typer.Argument(..., help="A build folder, tool docs, or .forge files."),
    env: Optional[str] = typer.Option(None, "--env", help="Only this environment."),
    n: int = typer.Option(120, "-n", "--tasks", min=0, help="Blueprints per environment."),
    seed: int = typer.Option(0, "--seed", help="Sampling seed (same seed, same inputs -> byte-identical files)."),
    output: Path = typer.Option(Path("blueprints"), "-o", "--output", help="Folder for <env>/<name>.forge files."),
    min_calls: int = typer.Option(3, "--min-calls", min=1, help="Fewest tool calls per blueprint."),
    max_calls: int = typer.Option(8, "--max-calls", min=1, help="Most tool calls per blueprint."),
    read_only_ratio: float = typer.Option(0.1, "--read-only-ratio", min=0.0, max=1.0, help="Share of read-only tasks (ending in `tell`)."),
    state_size: int = typer.Option(30, "--state-size", min=1, help="World-state size when compiling docs/.forge input."),
    format: SampleFormat = typer.Option(SampleFormat.table, "--format", help="Summary as a table or json (as in `forgec verify`/`graph`/`stats`)."),
    json_out: bool = typer.Option(False, "--json", hidden=True, help="Same as --format json (kept for old scripts)."),
) -> None:
    """Sample task blueprints (execution-guided random walks over the tool graph) into .forge files."""
    import json

    from rich.console import Console
    from rich.table import Table

    from forgec.codes import SAMPLE_SHORTFALL, UNCOVERED_TOOL
    from forgec.envsource import load_envs
    from forgec.graph import build_graph
    from forgec.sample import SampleConfig, sample_blueprints

    json_out = json_out or format == SampleFormat.json
    try:
        if max_calls < min_calls:  # a usage error, exit 2 like typer's own option checks and `forgec eval`
            usage_error(f"--max-calls ({max_calls}) must be >= --min-calls ({min_calls})")
        envs, diags = load_envs(path, env, with_module=True, seed=seed, state_size=state_size)
        if has_errors(diags):
            typer.echo(render(diags, "full"), err=True)
            raise typer.Exit(1)
        summary = {}
        for le in envs:
            name = le.decl.name
            g = build_graph(le.decl, exclude=le.exclude, writes=le.writes)
            cfg = SampleConfig(tasks_per_env=n, min_calls=min_calls, max_calls=max_calls, read_only_ratio=read_only_ratio, seed=seed)
            res = sample_blueprints(le.decl, le.module, le.world, g, cfg)
            folder = output / name
            folder.mkdir(parents=True, exist_ok=True)
            for b in res.blueprints:
                (folder / f"{b.name}.forge").write_text(b.text, encoding="utf-8")
            if le.origin != "build":
                # the env the blueprints are for, so `forgec check DIR` resolves them (a build has it in src/)
                from forgec import lang
                from forgec.lang import ast as A

                (folder / "env.forge").write_text(lang.format(A.Module("env.forge", (le.decl,))), encoding="utf-8")
            k = max(1, len(res.blueprints))
            avg = {s: round(sum(b.stats[s] for b in res.blueprints) / k, 2) for s in
                   ("calls", "write_calls", "reasoning_nodes", "inference_edges", "depth", "width")}
            covered = sorted(t for t, c in res.coverage.items() if c)
            summary[name] = {"blueprints": len(res.blueprints), "attempts": res.attempts, "avg": avg,
                             "coverage": res.coverage, "rejected": res.rejected, "folder": str(folder)}
            if len(res.blueprints) < n:
                reasons = ", ".join(f"{r} {c}" for r, c in sorted(res.rejected.items(), key=lambda x: -x[1]))
                diags.append(warning(SAMPLE_SHORTFALL, f"env {name!r}: {len(res.blueprints)} of {n} blueprints (rejected: {reasons})", Span(str(path))))
            for t in sorted(set(res.coverage) - set(covered)):
                diags.append(info(UNCOVERED_TOOL, f"env {name!r}: tool {t!r} is in no blueprint", Span(str(path))))
        if json_out:
            typer.echo(json.dumps(summary, indent=2, sort_keys=True))
        else:
            table = Table(title=f"forgec sample (seed {seed})")
            for col in ("env", "blueprints", "calls", "writes", "reasoning", "inference edges", "depth", "width", "tools covered"):
                table.add_column(col, justify="left" if col == "env" else "right")
            for name, s in summary.items():
                a = s["avg"]
                cov = s["coverage"]
                table.add_row(name, str(s["blueprints"]), str(a["calls"]), str(a["write_calls"]), str(a["reasoning_nodes"]),
                              str(a["inference_edges"]), str(a["depth"]), str(a["width"]),
                              f"{sum(1 for c in cov.values() if c)}/{len(cov)}")
            Console(width=max(Console().width, 120)).print(table)
            for name, s in summary.items():
                typer.echo(f"wrote {s['blueprints']} blueprints to {s['folder']}/")
        shown = [d for d in diags if d.severity.value != "info"] if not json_out else diags
        if shown:
            typer.echo(render(shown, "concise"), err=True)
    except typer.Exit:
        raise
    except Exception as e:  # noqa: BLE001 - a bug becomes a diagnostic and exit 2, never a traceback
        typer.echo(render([error(INTERNAL, f"{type(e).__name__}: {e}", Span(str(path)))], "concise"), err=True)
        raise typer.Exit(2)
    raise typer.Exit(0)
