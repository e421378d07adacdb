"""`forgec verify BUILD`: run every tool of every generated env and report which behave."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer


class VerifyFormat(str, Enum):
    table = "table"
    json = "json"


def _env_modules(build: Path, only: list[str]) -> list[tuple[str, Path, Path | None]]:
    """(env name, env.py, env.forge or None) for each env of a build (or one env.py file)."""
    if build.is_file() and build.suffix == ".py":
        forge = build.with_name("env.forge")
        return [(build.parent.name, build, forge if forge.is_file() else None)]
    out = []
    envs = build / "envs"
    for d in sorted(p for p in envs.iterdir() if p.is_dir()) if envs.is_dir() else []:
        if only and d.name not in only:
            continue
        py = d / "env.py"
        if py.is_file():
            src = build / "src" / d.name / "env.forge"
            out.append((d.name, py, src if src.is_file() else None))
    return out


def _env_decl(forge: Path | None):
    """The checked EnvDecl for locations in the report (None when the source is absent or broken)."""
    if forge is None:
        return None
    try:
        from forgec.lang import parse

        mod, diags = parse(forge.read_text(encoding="utf-8"), str(forge))
        return mod.envs[0] if mod.envs and not any(d.is_error for d in diags) else None
    except Exception:  # noqa: BLE001 - locations are optional
        return None


def command(
    build: Path = typer.Argument(..., help="A build folder (build/envs/<env>/env.py) or one generated env.py."),
    env: Optional[List[str]] = typer.Option(None, "--env", help="Only these environments (repeatable)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample states and generated calls."),
    calls: int = typer.Option(20, "--calls", min=1, help="Valid calls per tool."),
    format: VerifyFormat = typer.Option(VerifyFormat.table, "--format", help="table (per tool + per kind) or json."),
) -> None:
    """Verify generated environments: valid calls per tool, determinism, state effects (exit 1 if any tool fails)."""
    from forgec.codegen import load_env_module
    from forgec.codegen.verify import render_table, verify_env

    from forgec import diagnostics as D

    from forgec.swap import recover_build; recover_build(build)  # noqa: E702 - a compile killed mid-swap
    if not build.exists():
        D.fail("missing-build", f"{str(build)!r} does not exist", help="create it with `forgec compile DOCS -o BUILD`")
    mods = _env_modules(build, list(env or []))
    if not mods:
        if env and (build / "envs").is_dir():
            have = ", ".join(sorted(d.name for d in (build / "envs").iterdir() if (d / "env.py").is_file()))
            D.fail("unknown-env", f"{str(build)!r} has no environment named {', '.join(env)}", str(build),
                   help=f"its environments are: {have}")
        D.fail("missing-build", f"{str(build)!r} is not a forgec build (no envs/<env>/env.py)", str(build),
               help="create it with `forgec compile DOCS -o BUILD`")
    reports = []
    for name, py, forge in mods:
        try:
            module = load_env_module(py)
        except Exception as e:  # noqa: BLE001 - a broken module is a finding, not a crash
            D.fail("corrupt-build", f"environment {name!r} failed to import: {type(e).__name__}: {e}", str(py),
                   help="recompile with `forgec compile DOCS -o BUILD`")
        reports.append(verify_env(module, _env_decl(forge), seed=seed, calls_per_tool=calls))
    if format == VerifyFormat.json:
        typer.echo(json.dumps([r.to_json() for r in reports], indent=2, sort_keys=True))
    else:
        typer.echo(render_table(reports))
        typer.echo("calls: valid calls made per tool; errors: of those, calls the tool refused with a domain error (e.g. cancelling twice), which is expected, not a failure")
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)
