"""`forgec sft-user BUILD`: fine-tune the simulated-user LLM on the scripted user's dialogues (issue 26; same trainer and configs as `forgec sft`)."""

from __future__ import annotations

from pathlib import Path

import typer

from forgec.commands.common import ALLOW_MODIFIED_HELP, SET_HELP, build_failed, check_build, load_or_exit, show_config


def command(
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile`."),
    config: str = typer.Option(None, "--config", "-c", help="train.yaml, or a shipped config name (cpu-tiny, ...)."),
    set_: list[str] = typer.Option([], "--set", help=SET_HELP),
    output: str = typer.Option(None, "--output", "-o", help="Output folder; the user model is written to OUTPUT/final."),
    show: bool = typer.Option(False, "--show-config", help="Print the config reference and the resolved config, then exit."),
    allow_modified_build: bool = typer.Option(False, "--allow-modified-build", help=ALLOW_MODIFIED_HELP),
) -> None:
    """Fine-tune the simulated user on the scripted user's dialogues (its turns are the targets); writes OUTPUT/final for `--user llm`."""
    cfg = load_or_exit(config, set_, output)
    if show:
        show_config(cfg)
        return
    check_build(build, allow_modified_build)  # before torch and DeepSpeed start
    from forgec.runtime.loader import BuildError

    try:
        from forgec.train.sft import run_sft  # imports torch lazily

        res = run_sft(cfg, str(build), allow_modified_build=allow_modified_build, role="user")
    except BuildError as e:
        build_failed(e)
    if res.get("rank", 0) == 0:
        typer.echo(f"done: {res['steps']} SFT steps on {res['sequences']} user dialogues, final loss {res['loss']:.4f}, user model {res['final']}")
