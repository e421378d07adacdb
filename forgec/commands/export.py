"""`forgec export hf|tau2 BUILD -o DIR`: a build's tasks in another stack's format (hf: Parquet that `datasets.load_dataset`
loads; tau2: τ²-bench's tasks.json/db.json/policy.md per domain)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from forgec.commands.common import ALLOW_MODIFIED_HELP, load_build



class Format(str, Enum):
    hf = "hf"
    tau2 = "tau2"


def command(
    format: Format = typer.Argument(..., metavar="FORMAT", help="hf: a Hugging Face dataset folder (Parquet); tau2: τ²-bench's domain layout (docs/export.md)."),
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile`."),
    output: Path = typer.Option(..., "--output", "-o", help="Folder to write (replaced as a whole if it holds a previous export)."),
    allow_modified_build: bool = typer.Option(False, "--allow-modified-build", help=ALLOW_MODIFIED_HELP),
) -> None:
    """Export a build's tasks for another stack (hf: Parquet for `datasets.load_dataset`; tau2: τ²-bench's layout)."""
    from forgec import diagnostics as D
    from forgec.export import MARKER
    from forgec.export.hf import export_hf

    out, root = output.resolve(), build.resolve()
    if out == root or out.is_relative_to(root) or root.is_relative_to(out):
        D.usage_error(f"-o {output} overlaps the build {build}", help="export to a folder outside the build")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        D.usage_error(f"-o {output} exists and is not a previous `forgec export` folder",
                      help="the export replaces -o as a whole: give a new or empty folder")
    b = load_build(build, allow_modified_build)
    if format is Format.tau2:
        from forgec.export.tau2 import export_tau2

        counts = export_tau2(b, output)
        typer.echo(f"exported {sum(counts.values())} tasks of {len(counts)} env(s) to {output}/domains/<env>/ (τ²-bench layout)")
        return
    counts = export_hf(b, output)
    if not any(counts.values()):
        D.emit(D.warning("empty-build", f"{build} has no tasks: the export has the schema and no rows, which "
                         "`datasets.load_dataset` refuses (an empty split)", D.Span(str(build / "manifest.json")),
                         help=f"`forgec stats {build}` and the compile report say why every blueprint was rejected"))
    typer.echo(f"exported {sum(counts.values())} tasks of {len(counts)} env(s) to {output} "
               f"(load: datasets.load_dataset({str(output)!r}, split='train'))")
