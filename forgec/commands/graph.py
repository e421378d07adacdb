"""`forgec graph PATH`: the tool dependency graph of each environment (DOT, Mermaid, JSON or PNG).

PATH is tool documentation (read and synthesized on the fly), a build folder
(build/manifest.json), or .forge files/folders, read by `forgec.envsource.load_envs`
(shared with `forgec sample`, which also needs each env's generated module and world state).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer

from forgec.diagnostics import INTERNAL, Span, error, has_errors, render, usage_error, warning


class GraphFormat(str, Enum):
    dot = "dot"
    mermaid = "mermaid"
    json = "json"
    png = "png"


def render_graph(g: Any, fmt: str) -> str:
    if fmt == "dot":
        return g.to_dot()
    if fmt == "mermaid":
        return g.to_mermaid()
    return json.dumps(g.to_json(), indent=2, sort_keys=True) + "\n"


def command(
    path: Path = typer.Argument(..., help="Tool docs (file or folder), a build folder, or .forge files."),
    env: Optional[str] = typer.Option(None, "--env", help="Only this environment."),
    format: GraphFormat = typer.Option(GraphFormat.dot, "--format", help="dot, mermaid, json, or png (needs Graphviz)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write here (default: stdout; png needs -o)."),
) -> None:
    """Print the tool dependency graph: which tool outputs feed which parameters (read tools blue, writes orange)."""
    from forgec.codes import GRAPHVIZ_MISSING, NO_EDGES
    from forgec.graph import build_graph

    if format == GraphFormat.png and output is None:  # a usage error, exit 2 like typer's own option checks
        usage_error("--format png needs -o FILE (a picture cannot go to the terminal)")
    try:
        from forgec.envsource import load_envs  # lazy: the CLI imports every command at start

        envs, diags = load_envs(path, env)
        if has_errors(diags):
            typer.echo(render(diags, "full"), err=True)
            raise typer.Exit(1)
        texts = []
        for le in envs:
            g = build_graph(le.decl, exclude=le.exclude, writes=le.writes)
            if not g.edges():
                diags.append(warning(NO_EDGES, f"env {le.decl.name!r}: no tool output feeds another tool", Span(str(path))))
            texts.append((le.decl.name, g))
        if format == GraphFormat.png:
            dot = shutil.which("dot")
            if dot is None:
                typer.echo(render([error(GRAPHVIZ_MISSING, "Graphviz `dot` is not installed; cannot render PNG", None,
                                         "install graphviz, or use --format dot / mermaid")], "full"), err=True)
                raise typer.Exit(1)
            for i, (name, g) in enumerate(texts):
                target = output if len(texts) == 1 else output.with_name(f"{output.stem}_{name}{output.suffix}")
                subprocess.run([dot, "-Tpng", "-o", str(target)], input=g.to_dot().encode(), check=True)
                typer.echo(f"wrote {target}", err=True)
        else:
            if format == GraphFormat.json and len(texts) > 1:
                body = json.dumps({n: g.to_json() for n, g in texts}, indent=2, sort_keys=True) + "\n"
            elif format == GraphFormat.mermaid and texts:
                from forgec.graph import mermaid_of

                body = mermaid_of(texts)  # one flowchart, a subgraph per env (concatenated charts are not Mermaid)
            else:
                body = "".join(render_graph(g, format.value) for _, g in texts)
            if output is None:
                typer.echo(body, nl=False)
            else:
                output.write_text(body, encoding="utf-8")
                typer.echo(f"wrote {output}", err=True)
        if diags:
            typer.echo(render([d for d in diags if d.severity.value != "info"], "concise"), err=True)
    except typer.Exit:
        raise
    except Exception as e:  # noqa: BLE001 - a bug becomes a diagnostic and exit 2, never a traceback
        typer.echo(render([error(INTERNAL, f"{type(e).__name__}: {e}", Span(str(path)))], "concise"), err=True)
        raise typer.Exit(2)
    raise typer.Exit(0)


__all__ = ["command", "render_graph"]
