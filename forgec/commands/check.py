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
    from forgec.swap import recover_build

    rule_files = [p for p in paths if Path(p).name == "evolve.json" and Path(p).is_file()]  # issue 26: not .forge
    files = [p for p in paths if p != "-" and p not in rule_files]
    for p in files:
        recover_build(p)  # a compile killed mid-swap: put the build back first
    given = list(files)
    files += _build_env_files(files)
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
    diags += _duplicate_blueprints(modules, given)
    for rules in [Path(p) / "evolve.json" for p in given if (Path(p) / "manifest.json").is_file()] + [Path(p) for p in rule_files]:
        if rules.is_file():  # a build's evolve.json (issue 26: `forgec evolve`'s rules), or the file itself
            from forgec.evolve import check_rules

            diags += check_rules(rules)[1]
    return drop_cascades(diags), sources


def _build_env_files(files: list[str]) -> list[str]:
    """The env file of every build blueprint folder named: `forgec check build/blueprints/airline/x.forge`
    checks x.forge against build/src/airline/env.forge, as `compile` does (an env the blueprint
    imports from elsewhere does not replace it)."""
    extra: list[str] = []
    for f in files:
        try:
            p = Path(f).resolve()
            build = next((a for a in (p, *p.parents) if (a / "manifest.json").is_file()), None)
            if build is None or p == build:
                continue
            rel = p.relative_to(build).parts
            if rel[0] != "blueprints":
                continue
            envs = [rel[1]] if len(rel) > 1 else sorted(d.name for d in p.iterdir() if d.is_dir())
        except (OSError, ValueError):
            continue
        for env in envs:
            src = build / "src" / env / "env.forge"
            if src.is_file() and str(src) not in extra:
                extra.append(str(src))
    return extra


def _duplicate_blueprints(modules, given: list[str]) -> list:
    """Blueprint names used twice for one env across the named files: the same rule and
    diagnostic as `compile` (`duplicate-blueprint`); a duplicate within one file is the checker's."""
    roots = [Path(g).resolve() for g in given]
    first: dict[tuple[str, str], str] = {}
    out = []
    for m in sorted(modules, key=lambda m: m.file):
        try:
            f = Path(m.file).resolve()
        except (OSError, ValueError):
            continue
        if not any(f == r or r in f.parents for r in roots):
            continue  # an imported file: compile does not lower its blueprints either
        for bp in m.blueprints:
            k = (bp.env, bp.name)
            if first.setdefault(k, m.file) != m.file:
                from forgec.build import duplicate_blueprint

                out.append(duplicate_blueprint(bp.env, bp, m.file))
    return out


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
    docs = [p for p in paths if Path(p).suffix.lower() in (".json", ".yaml", ".yml", ".jsonl") and Path(p).is_file()
            and Path(p).name != "evolve.json"]
    if fmt != "json" and docs:  # a common slip: checking the tool docs instead of the .forge files made from them
        typer.echo(f"note: `forgec check` reads .forge files; for tool documentation use `forgec inspect {' '.join(docs)}`", err=True)
    out = render(diags, fmt, sources)
    if out:
        typer.echo(out)
    if fmt != "json":
        typer.echo(summary_line(diags), err=True)
    raise typer.Exit(1 if has_errors(diags) else 0)
