"""`forgec stats BUILD_DIR`: per-environment DAG statistics of a build's blueprints.

Read from build/manifest.json (tasks, tool kinds) and the blueprint files
themselves (so hand edits count): calls per task, write calls, reasoning nodes,
inference edges, depth, width, and tool coverage.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from forgec.diagnostics import INTERNAL, Diagnostic, Span, error, render, warning


def build_stats(build: Path) -> tuple[dict, list[Diagnostic]]:
    """{env: {tasks, blueprints, avg_*/max_*, coverage: {tool: calls}, covered, tools}} for a build folder."""
    from forgec import lang
    from forgec.codes import BAD_BLUEPRINT, NO_BUILD
    from forgec.diagnostics import has_errors
    from forgec.lang import ast as A
    from forgec.sample import blueprint_stats, summarize_stats

    mpath = build / "manifest.json"
    if not mpath.is_file():
        return {}, [error(NO_BUILD, f"{build} has no manifest.json", Span(str(build)), "run `forgec compile DOCS -o BUILD` first")]
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    diags: list[Diagnostic] = []
    out = {}
    for name, rec in sorted((manifest.get("envs") or {}).items()):
        tools = rec.get("tools") or {}
        writes = {t: bool(r.get("writes_state")) for t, r in tools.items()}
        stats = []
        coverage = {t: 0 for t in sorted(tools)}
        for f in sorted((build / "blueprints" / name).glob("*.forge")):
            mod, d = lang.parse(f.read_text(encoding="utf-8"), str(f))
            if has_errors(d):
                diags.append(warning(BAD_BLUEPRINT, f"{f.name} does not parse; left out of the statistics", Span(str(f))))
                continue
            for bp in mod.blueprints:
                stats.append(blueprint_stats(bp, writes))
                for n in bp.nodes:
                    if isinstance(n, A.CallNode):
                        coverage[n.tool] = coverage.get(n.tool, 0) + 1
        s = summarize_stats(stats)
        s["tasks"] = rec.get("task_count", 0)
        s["coverage"] = coverage
        s["tools"] = len(coverage)
        s["covered"] = sum(1 for c in coverage.values() if c)
        s["rejected"] = rec.get("rejected") or {}
        out[name] = s
    return out, diags


def command(
    build: Path = typer.Argument(..., help="A build folder (forgec compile -o BUILD)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    coverage: bool = typer.Option(False, "--coverage", help="Also print per-tool call counts."),
) -> None:
    """Per-env statistics of a build: tasks, calls/task, reasoning nodes, inference edges, depth, width, coverage."""
    try:
        stats, diags = build_stats(build)
        if any(d.is_error for d in diags):
            typer.echo(render(diags, "full"), err=True)
            raise typer.Exit(1)
        if json_out:
            typer.echo(json.dumps(stats, indent=2, sort_keys=True))
        else:
            from rich.console import Console
            from rich.table import Table

            table = Table(title=f"forgec stats {build}")
            cols = ("env", "tasks", "blueprints", "calls/task", "writes", "reasoning", "inference edges", "depth", "width", "tools covered")
            for c in cols:
                table.add_column(c, justify="left" if c == "env" else "right")
            for name, s in stats.items():
                table.add_row(name, str(s["tasks"]), str(s["blueprints"]), f"{s['avg_calls']:.2f}", f"{s['avg_write_calls']:.2f}",
                              f"{s['avg_reasoning_nodes']:.2f}", f"{s['avg_inference_edges']:.2f}", f"{s['avg_depth']:.2f}",
                              f"{s['avg_width']:.2f}", f"{s['covered']}/{s['tools']}")
            console = Console(width=max(Console().width, 130))
            console.print(table)
            if coverage:
                for name, s in stats.items():
                    cov = Table(title=f"{name}: calls per tool")
                    cov.add_column("tool")
                    cov.add_column("calls", justify="right")
                    for t, c in sorted(s["coverage"].items(), key=lambda x: (-x[1], x[0])):
                        cov.add_row(t, str(c))
                    console.print(cov)
        if diags:
            typer.echo(render(diags, "concise"), err=True)
    except typer.Exit:
        raise
    except Exception as e:  # noqa: BLE001 - a bug becomes a diagnostic and exit 2, never a traceback
        typer.echo(render([error(INTERNAL, f"{type(e).__name__}: {e}", Span(str(build)))], "concise"), err=True)
        raise typer.Exit(2)
    raise typer.Exit(0)
