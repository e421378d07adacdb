"""`forgec stats BUILD_DIR`: per-environment DAG statistics of a build's blueprints.

Read from build/manifest.json (tasks, tool kinds) and the blueprint files
themselves (so hand edits count): calls per task, write calls, reasoning nodes,
inference edges, depth, width (all counted by `forgec.lower.dag_stats`, the function the
task files' stats come from; blueprints the manifest records as rejected have no task and are
left out of the averages), and tool coverage. Task counts come from the
manifest, so each tasks/<env>.jsonl is first checked against the SHA-256 the
manifest records; a bad build is reported with the runtime's codes
(missing-build, corrupt-build), worded as `forgec.runtime.load` words them.
"""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from pathlib import Path

import typer

from forgec.diagnostics import INTERNAL, Diagnostic, Span, error, render, warning
from forgec.manifest import build_problem, read_manifest  # noqa: F401 - read_manifest: stats reads through it


class StatsFormat(str, Enum):
    table = "table"
    json = "json"


def check_task_files(build: Path, manifest: dict) -> list[Diagnostic]:
    """corrupt-build for each env whose tasks file is missing or differs from the SHA-256 in the manifest.

    The task counts `stats` reports come from the manifest; they are only true
    while tasks/<env>.jsonl is the file the compiler wrote.
    """
    diags = []
    root = build.resolve()
    for name, rec in sorted(manifest.get("envs", {}).items()):
        trec = rec.get("tasks")
        if not isinstance(trec, dict) or not trec.get("path"):
            continue  # a build without tasks (e.g. compiled with -n 0 or hand-made) has nothing to verify
        rel, want = str(trec["path"]), str(trec.get("hash", ""))
        p = (build / rel).resolve()
        if not p.is_relative_to(root):
            diags.append(build_problem("corrupt-build", f"env {name!r}: tasks path {rel!r} points outside the build", build / "manifest.json"))
            continue
        try:
            got = hashlib.sha256(p.read_bytes()).hexdigest()
        except OSError as e:
            diags.append(build_problem("corrupt-build", f"env {name!r}: cannot read {rel}: {e.strerror or e}", build / rel))
            continue
        if got != want:
            diags.append(build_problem("corrupt-build", f"env {name!r}: {rel} does not match the SHA-256 recorded in manifest.json "
                                        f"(recorded {want[:12] or '(none)'}, file {got[:12]})", build / rel))
    return diags


def build_stats(build: Path) -> tuple[dict, list[Diagnostic]]:
    """{env: {tasks, blueprints, avg_*/max_*, coverage: {tool: calls}, covered, tools}} for a build folder."""
    from forgec import lang
    from forgec.codes import BAD_BLUEPRINT
    from forgec.diagnostics import has_errors
    from forgec.lang import ast as A
    from forgec.lower import dag_stats
    from forgec.sample import summarize_stats

    manifest, diags = read_manifest(build)
    if manifest is None:
        return {}, diags
    diags = check_task_files(build, manifest)
    if diags:
        return {}, diags
    out = {}
    for name, rec in sorted((manifest.get("envs") or {}).items()):
        tools = rec.get("tools") or {}
        writes = {t: bool(r.get("writes_state")) for t, r in tools.items()}
        rejected_bps = {n: b.get("rejected") for n, b in (rec.get("blueprints") or {}).items() if isinstance(b, dict)}
        stats = []
        coverage = {t: 0 for t in sorted(tools)}
        for f in sorted((build / "blueprints" / name).glob("*.forge")):
            mod, d = lang.parse(f.read_text(encoding="utf-8"), str(f))
            if has_errors(d):
                diags.append(warning(BAD_BLUEPRINT, f"{f.name} does not parse; left out of the statistics", Span(str(f))))
                continue
            for bp in mod.blueprints:
                if not rejected_bps.get(bp.name):  # a rejected one has no task: the averages describe the tasks
                    stats.append(dag_stats(bp, writes).model_dump())
                for n in bp.nodes:
                    if isinstance(n, A.CallNode):
                        coverage[n.tool] = coverage.get(n.tool, 0) + 1
        s = summarize_stats(stats)
        s["tasks"] = rec.get("task_count", 0)
        s["coverage"] = coverage
        s["tools"] = len(coverage)
        s["covered"] = sum(1 for c in coverage.values() if c)
        s["rejected"] = rec.get("rejected") or {}
        st = rec.get("stats") or {}
        # the sampler's rejections (the quality gate's among them: forgec/gate.py), and the walk's when it fell back
        s["sampler_rejected"] = dict(st.get("sampler_rejected") or {})
        if st.get("scenario_rejected"):
            s["scenario_rejected"] = dict(st["scenario_rejected"])
        if st.get("tools_left_out"):
            s["tools_left_out"] = dict(st["tools_left_out"])
        s["has_write"] = any(bool(r.get("writes_state")) for r in tools.values() if isinstance(r, dict))
        out[name] = s
    return out, diags


FEW_TASKS = 50  # issue 21: an env with a write tool yields at least this many tasks, or says why


def top_reasons(rejected: dict[str, int], k: int = 3) -> str:
    """"names-tool 40, dictated-call 12": the k most frequent rejection reasons."""
    return ", ".join(f"{r} {n}" for r, n in sorted(rejected.items(), key=lambda x: (-x[1], x[0]))[:k])


def _said(rej: dict[str, int], reasons: dict[str, str], k: int = 3) -> str:
    """"no-intent 251 (no write the user could ask for was made: most often, a required argument has
    no value ...)": the k most frequent reasons in words; "no-intent:X" counts say their cause X."""
    out = []
    for r, n in sorted(rej.items(), key=lambda x: (-x[1], x[0]))[:k]:
        head, _, cause = r.partition(":")
        words = reasons.get(head, "")
        if cause:
            words = (words + ": most often, " if words else "most often, ") + reasons.get(cause, cause)
        out.append(f"{r} {n}" + (f" ({words})" if words else ""))
    return "; ".join(out)


def few_tasks_lines(stats: dict) -> list[str]:
    """One line per env with a write tool and fewer than FEW_TASKS tasks: why (the top rejection reasons)."""
    from forgec.gate import REASONS

    out = []
    for name, s in stats.items():
        if not s.get("has_write") or s.get("tasks", 0) >= FEW_TASKS:
            continue
        if not any((s.get("scenario_rejected"), s.get("sampler_rejected"), s.get("rejected"))):
            out.append(f"{name}: {s.get('tasks', 0)} tasks; the sampler found nothing to reject (no scenario fits these tools)")
            continue
        parts = []
        if s.get("scenario_rejected"):  # the scenario sampler made nothing: the walks' were a fallback
            parts.append("scenario sampler: " + _said(s["scenario_rejected"], REASONS))
            parts.append("walk fallback: " + (_said({**(s.get("sampler_rejected") or {}), **(s.get("rejected") or {})}, REASONS) or "nothing rejected"))
        else:
            rej: dict[str, int] = {}
            for d in (s.get("sampler_rejected") or {}, s.get("rejected") or {}):
                for r, n in d.items():
                    rej[r] = rej.get(r, 0) + n
            parts.append("most rejected: " + _said(rej, REASONS))
        if s.get("tools_left_out"):
            parts.append("writes left out: " + "; ".join(f"{t} ({why})" for t, why in s["tools_left_out"].items()))
        out.append(f"{name}: {s.get('tasks', 0)} tasks; " + " | ".join(parts))
    return out


def command(
    build: Path = typer.Argument(..., help="A build folder (forgec compile -o BUILD)."),
    format: StatsFormat = typer.Option(StatsFormat.table, "--format", help="table or json (as in `forgec verify`/`graph`)."),
    json_out: bool = typer.Option(False, "--json", hidden=True, help="Same as --format json (kept for old scripts)."),
    coverage: bool = typer.Option(False, "--coverage", help="Also print per-tool call counts."),
) -> None:
    """Per-env statistics of a build: tasks, calls/task, reasoning nodes, inference edges, depth, width, coverage."""
    try:
        stats, diags = build_stats(build)
        if any(d.is_error for d in diags):
            typer.echo(render(diags, "full"), err=True)
            raise typer.Exit(1)
        if json_out or format == StatsFormat.json:
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
            for line in few_tasks_lines(stats):
                console.print(line, markup=False, highlight=False)
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
