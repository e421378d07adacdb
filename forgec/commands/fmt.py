"""`forgec fmt PATH... [--check] [--diff]`: canonical formatting of .forge files (`-`: stdin to stdout)."""

from __future__ import annotations

import difflib
import os
import sys
import tempfile
from pathlib import Path
from typing import List

import typer

from forgec.codes import IO_ERROR
from forgec.diagnostics import EXIT_ERRORS, EXIT_OK, EXIT_WOULD_REFORMAT, Span, emit, error, render
from forgec.frontends.codes import PATH_NOT_FOUND


def _files(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        q = Path(p)
        if p != "-" and q.is_dir():
            out.extend(str(f) for f in sorted(q.rglob("*.forge")) if f.is_file())
        else:
            out.append(p)
    return out


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)


def command(
    paths: List[str] = typer.Argument(..., help="Files or folders of .forge files; `-` formats stdin to stdout."),
    check: bool = typer.Option(False, "--check", help="Change nothing; exit 3 if some file would be reformatted."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff instead of writing files."),
) -> None:
    """Format .forge files canonically (exit 0 ok, 1 syntax errors, 3 with --check when files would change)."""
    from forgec.lang import format_text

    errors = changed = False
    files = _files(list(paths))
    if not files:
        typer.echo(f"no .forge files found in {', '.join(paths)}", err=True)
    for name in files:
        if name == "-":
            text, label = sys.stdin.read(), "<stdin>"
        else:
            try:
                text, label = Path(name).read_text(encoding="utf-8"), name
            except FileNotFoundError:  # same wording as compile/check for a path that is not there
                emit(error(PATH_NOT_FOUND, f"no such file or folder: {name}", Span(name), help="check the path"))
                errors = True
                continue
            except (OSError, UnicodeDecodeError) as e:
                emit(error(IO_ERROR, f"cannot read {name}: {e}", Span(name)))
                errors = True
                continue
        out, diags = format_text(text, label)
        if out is None:
            typer.echo(render(diags, "full", {label: text}), err=True)
            errors = True
            continue
        if out == text:
            if name == "-" and not (check or diff):
                sys.stdout.write(out)
            continue
        changed = True
        if diff:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), out.splitlines(True),
                                                       f"a/{label}", f"b/{label}"))
        elif check:
            typer.echo(f"would reformat {label}", err=True)
        elif name == "-":
            sys.stdout.write(out)
        else:
            _write_atomic(Path(name), out)
            typer.echo(f"reformatted {label}", err=True)
    if errors:
        raise typer.Exit(EXIT_ERRORS)
    raise typer.Exit(EXIT_WOULD_REFORMAT if (check and changed) else EXIT_OK)
