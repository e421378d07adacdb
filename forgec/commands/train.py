"""`forgec train BUILD`: ERPO/GRPO on DeepSpeed (see docs/training.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from forgec.commands.common import ALLOW_MODIFIED_HELP, SET_HELP, build_failed, check_build, load_or_exit, show_config


def command(
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile`."),
    config: str = typer.Option(None, "--config", "-c", help="train.yaml, or a shipped config name: cpu-tiny, qwen3-8b-zero3, qwen3-30b-a3b-zero3."),
    set_: list[str] = typer.Option([], "--set", help=SET_HELP),
    output: str = typer.Option(None, "--output", "-o", help="Output folder (same as --set output=...)."),
    resume: bool = typer.Option(False, "--resume", help="Continue from the newest complete checkpoint in the output folder."),
    show: bool = typer.Option(False, "--show-config", help="Print the config reference and the resolved config, then exit."),
    allow_modified_build: bool = typer.Option(False, "--allow-modified-build", help=ALLOW_MODIFIED_HELP),
) -> None:
    """Train a policy on a build with ERPO (or GRPO) on DeepSpeed; run under `deepspeed`/`torchrun` for several processes."""
    cfg = load_or_exit(config, set_, output)
    if show:
        show_config(cfg)
        return
    check_build(build, allow_modified_build)  # before torch and DeepSpeed start
    from forgec.runtime.loader import BuildError
    from forgec.train.cluster import StartupError

    try:
        from forgec.train.trainer import Trainer  # imports torch lazily

        trainer = Trainer(cfg, str(build), resume=resume, allow_modified_build=allow_modified_build)
        last = trainer.run()
    except BuildError as e:
        build_failed(e)
    except StartupError as e:  # launch/layout/template checks: a diagnostic naming the fix, exit 1
        from forgec.diagnostics import fail

        fail("train-config", str(e))
    if trainer.rank == 0 and last:
        typer.echo(f"done: {cfg.optim.steps} steps, last reward_mean {last.get('reward_mean', 0):.3f}, output {cfg.output}")
    elif trainer.rank == 0:  # --resume of a finished run: say so instead of exiting silently
        typer.echo(f"nothing to do: {cfg.output} is already at step {trainer.start_step} of {cfg.optim.steps} "
                   "(raise --set optim.steps=N to train further)")
