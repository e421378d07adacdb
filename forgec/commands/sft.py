"""`forgec sft BUILD`: supervised warm start on oracle trajectories (same template, masks, DeepSpeed)."""

from __future__ import annotations

from pathlib import Path

import typer

from forgec.commands.common import ALLOW_MODIFIED_HELP, SET_HELP, build_failed, check_build, load_or_exit, show_config


def command(
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile`."),
    config: str = typer.Option(None, "--config", "-c", help="train.yaml, or a shipped config name (cpu-tiny, ...)."),
    set_: list[str] = typer.Option([], "--set", help=SET_HELP),
    output: str = typer.Option(None, "--output", "-o", help="Output folder; the warm-started model is written to OUTPUT/final."),
    show: bool = typer.Option(False, "--show-config", help="Print the config reference and the resolved config, then exit."),
    allow_modified_build: bool = typer.Option(False, "--allow-modified-build", help=ALLOW_MODIFIED_HELP),
) -> None:
    """Warm-start a policy on the build's oracle trajectories (SFT); writes OUTPUT/final for `forgec train --set model.path=...`."""
    cfg = load_or_exit(config, set_, output)
    if show:
        show_config(cfg)
        return
    check_build(build, allow_modified_build)  # before torch and DeepSpeed start
    from forgec.runtime.loader import BuildError

    try:
        from forgec.train.sft import run_sft  # imports torch lazily

        res = run_sft(cfg, str(build), allow_modified_build=allow_modified_build)
    except BuildError as e:
        build_failed(e)
    if res.get("rank", 0) == 0:
        typer.echo(f"done: {res['steps']} SFT steps on {res['sequences']} sequences, final loss {res['loss']:.4f}, model {res['final']}")
