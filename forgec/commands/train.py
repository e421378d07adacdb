"""`forgec train BUILD`: ERPO/GRPO on DeepSpeed (see docs/training.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from forgec.train.config import TrainConfig


def _keys() -> str:
    from pydantic import BaseModel

    keys = []
    for name, f in TrainConfig.model_fields.items():
        ann = f.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            keys += [f"{name}.{k}" for k in ann.model_fields]
        else:
            keys.append(name)
    return ", ".join(keys)


SET_HELP = "Override a config field, KEY=VALUE (YAML value); repeatable. `--show-config` prints every field with its help. Keys: " + _keys()


def load_or_exit(config: str | None, overrides: list[str], output: str | None):
    from forgec.train.config import ConfigError, load_config

    try:
        sets = list(overrides) + ([f"output={output}"] if output else [])
        return load_config(config, sets)
    except ConfigError as e:
        from forgec.diagnostics import fail

        fail("train-config", str(e), help=_did_you_mean(str(e)))


def _did_you_mean(message: str) -> str:
    """`optim.stepz: Extra inputs are not permitted` -> a help naming `optim.steps` ("" when nothing is near)."""
    import difflib
    import re

    keys = _keys().split(", ")
    hints = []
    for bad in re.findall(r"^\s*([\w.]+): Extra inputs are not permitted", message, flags=re.M):
        near = difflib.get_close_matches(bad, keys, n=1, cutoff=0.6)
        if near:
            hints.append(f"`{bad}` -> `{near[0]}`")
    return ("did you mean " + ", ".join(hints) + "?") if hints else ""


ALLOW_MODIFIED_HELP = ("Train on the build even if generated files (env modules, states, tasks) differ from manifest.json "
                       "or are missing; without it such a build is refused (corrupt-build).")


def build_failed(e) -> None:
    """A `BuildError` from loading the build: its diagnostic on stderr, exit 1."""
    from forgec import diagnostics as D

    D.emit(e.diagnostic())
    raise typer.Exit(D.EXIT_ERRORS) from None


def check_build(build: Path, allow_modified_build: bool) -> None:
    """Verify the build against its manifest (a few ms) so a tampered build fails before torch loads."""
    from forgec.runtime.loader import BuildError, load

    try:
        load(build, allow_modified_build=allow_modified_build)
    except BuildError as e:
        build_failed(e)


def show_config(cfg) -> None:
    import yaml

    from forgec.train.config import config_help_markdown

    typer.echo(config_help_markdown())
    typer.echo("## Resolved configuration\n")
    typer.echo(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=True))
    from forgec.train.cluster import plan_text

    typer.echo(plan_text(cfg))


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

    try:
        from forgec.train.trainer import Trainer  # imports torch lazily

        trainer = Trainer(cfg, str(build), resume=resume, allow_modified_build=allow_modified_build)
        last = trainer.run()
    except BuildError as e:
        build_failed(e)
    if trainer.rank == 0 and last:
        typer.echo(f"done: {cfg.optim.steps} steps, last reward_mean {last.get('reward_mean', 0):.3f}, output {cfg.output}")
    elif trainer.rank == 0:  # --resume of a finished run: say so instead of exiting silently
        typer.echo(f"nothing to do: {cfg.output} is already at step {trainer.start_step} of {cfg.optim.steps} "
                   "(raise --set optim.steps=N to train further)")
