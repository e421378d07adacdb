"""`forgec inspect PATH...`: read tool docs and show the typed IR (tables or JSON)."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from forgec.diagnostics import (EXIT_ERRORS, EXIT_INTERNAL, EXIT_OK, INTERNAL, Diagnostic, fail, has_errors, render, sort_key,
                                summary_line, usage_error)
from forgec.ir import Environment, Tool


class DiagFormat(str, Enum):
    full = "full"
    concise = "concise"
    json = "json"


_HINT_LABELS = (
    ("readOnlyHint", True, "read-only"),
    ("destructiveHint", True, "destructive"),
    ("idempotentHint", True, "idempotent"),
    ("openWorldHint", True, "open-world"),
    ("deprecated", True, "deprecated"),
)


def document(envs: list[Environment], diags: list[Diagnostic]) -> dict[str, Any]:
    """The stable `--json` document: the IR of every environment plus the diagnostics."""
    return {
        "environments": [e.model_dump(mode="json") for e in envs],
        "diagnostics": [d.to_json() for d in sorted(diags, key=sort_key)],
    }


def tool_hints(t: Tool) -> str:
    """Kind hints for the table: HTTP method/path and MCP annotations."""
    out = []
    if t.http_method:
        out.append(f"{t.http_method} {t.http_path or ''}".strip())
    for key, val, label in _HINT_LABELS:
        if t.annotations.get(key) is val:
            out.append(label)
    return ", ".join(out)


def _params_cell(t: Tool) -> str:
    if not t.params:
        return "-"
    lines = []
    for p in t.params:
        mark = "*" if p.required else ""
        default = f" = {json.dumps(p.default)}" if p.has_default else ""
        where = f" ({p.location})" if p.location not in ("arg",) else ""
        lines.append(f"{p.name}{mark}: {p.type.short()}{default}{where}")
    return "\n".join(lines)


def _print_tables(envs: list[Environment]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(soft_wrap=False)
    for env in envs:
        fmts = sorted({t.format for t in env.tools})
        table = Table(
            title=f"[bold]{escape(env.name)}[/bold]: {len(env.tools)} tools ({', '.join(fmts)}) from {escape(', '.join(env.sources))}",
            title_justify="left",
            show_lines=True,
        )
        table.add_column("tool", style="bold cyan", no_wrap=True)
        table.add_column("params (* = required)", overflow="fold")
        table.add_column("returns", overflow="fold")
        table.add_column("hints", style="magenta")
        for t in env.tools:
            # type names contain [...] which rich would read as markup
            table.add_row(escape(t.name), escape(_params_cell(t)), escape(t.returns.short() if t.returns else "-"), escape(tool_hints(t)))
        console.print(table)
        if env.definitions:
            console.print(escape("  definitions: " + ", ".join(f"{k} = {v.short()}" for k, v in sorted(env.definitions.items()))))


def command(
    paths: list[Path] = typer.Argument(..., metavar="PATH", help="Tool documentation files or folders (JSON, YAML, JSON Lines)."),
    env: str | None = typer.Option(None, "--env", help="Name of the environment (all docs read become one environment)."),
    as_json: bool = typer.Option(False, "--json", help="Print the IR and diagnostics as one JSON document on stdout."),
    fmt: DiagFormat = typer.Option(DiagFormat.full, "--format", help="Diagnostics format: full, concise or json."),
) -> None:
    """Read tool documentation and show the typed tools per environment (or --json)."""
    from forgec.frontends import read_paths

    for p in paths:
        if p.is_dir() and (p / "manifest.json").is_file() and (p / "envs").is_dir():
            usage_error(f"{str(p)!r} is a forgec build, not tool documentation",
                        help=f"inspect the docs it was compiled from; for the build use `forgec stats {p}`, "
                             f"`forgec verify {p}` or `forgec check {p}`")
    try:
        envs, diags = read_paths(list(paths), env_name=env)
    except Exception as e:  # noqa: BLE001 - exit 2, never a traceback
        fail(INTERNAL, f"{type(e).__name__}: {e}", help="this is a bug in forgec; please report it with the input that caused it",
             status=EXIT_INTERNAL)
    if as_json:
        sys.stdout.write(json.dumps(document(envs, diags), indent=2, ensure_ascii=False) + "\n")
    else:
        _print_tables(envs)
        if diags:
            sys.stderr.write(render(diags, fmt.value) + "\n")
            if fmt != DiagFormat.json:
                sys.stderr.write(summary_line(diags) + "\n")
    if any(d.code == INTERNAL for d in diags):
        raise typer.Exit(EXIT_INTERNAL)
    raise typer.Exit(EXIT_ERRORS if has_errors(diags) else EXIT_OK)
