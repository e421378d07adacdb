"""`forgec check PATH...`: parse, resolve and type-check .forge files (never touches the network)."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import List

import typer

from forgec.diagnostics import INTERNAL, Span, error, has_errors, render, summary_line


class DiagFormat(str, Enum):
    full = "full"
    concise = "concise"
    json = "json"


def run_check(paths: list[str], stdin_text: str | None = None):
    """Load (files, folders, `-`), check, and return (diagnostics, sources) for rendering."""
    from forgec.lang import check, load, parse
    from forgec.lang.check import drop_cascades

    from forgec.lang.confine import root_of

    files = [p for p in paths if p != "-"]
    roots = [root_of(p) for p in files] + ([Path.cwd()] if "-" in paths else [])  # imports stay inside these
    modules, diags = load(files, roots) if files else ([], [])
    sources: dict[str, str] = {}
    if "-" in paths:
        text = stdin_text if stdin_text is not None else sys.stdin.read()
        m, d = parse(text, "<stdin>")
        modules.append(m)
        diags += d
        sources["<stdin>"] = text
    diags += check(modules, roots)
    return drop_cascades(diags), sources


def _any_forge(paths) -> bool:
    from pathlib import Path

    return any(p == "-" or Path(p).is_file() or next(Path(p).rglob("*.forge"), None) is not None for p in paths)


def command(
    paths: List[str] = typer.Argument(..., help="Files or folders of .forge files (`-` reads stdin)."),
    format: DiagFormat = typer.Option(DiagFormat.full, "--format", help="full (with source lines), concise, or json."),
) -> None:
    """Check .forge files: syntax, names, types, blueprint graphs (exit 0 clean, 1 errors, 2 internal error)."""
    try:
        diags, sources = run_check(list(paths))
    except Exception as e:  # noqa: BLE001 - a bug must not look like a clean check
        diags, sources = [error(INTERNAL, f"{type(e).__name__}: {e}", Span("<forgec>"))], {}
        typer.echo(render(diags, "concise"), err=True)
        raise typer.Exit(2)
    fmt = format.value
    if fmt != "json" and not diags and not _any_forge(paths):
        typer.echo(f"no .forge files found in {', '.join(paths)}", err=True)
    docs = [p for p in paths if Path(p).suffix.lower() in (".json", ".yaml", ".yml", ".jsonl") and Path(p).is_file()]
    if fmt != "json" and docs:  # a common slip: checking the tool docs instead of the .forge files made from them
        typer.echo(f"note: `forgec check` reads .forge files; for tool documentation use `forgec inspect {' '.join(docs)}`", err=True)
    out = render(diags, fmt, sources)
    if out:
        typer.echo(out)
    if fmt != "json":
        typer.echo(summary_line(diags), err=True)
    raise typer.Exit(1 if has_errors(diags) else 0)
