"""`forgec play BUILD [--task ID]`: play the agent yourself, in the terminal, against the scripted user."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile`."),
    task: str = typer.Option(None, "--task", "-t", help="Task id (<env>/<blueprint>); default: the first task."),
    max_turns: int = typer.Option(30, "--max-turns", help="Most agent turns before the episode ends."),
) -> None:
    """Play one episode as the agent (tools listed, calls typed as JSON) against the scripted user."""
    from rich.console import Console

    from forgec.runtime import BuildError, load
    from forgec.runtime.episode import EpisodeLimits, run_episode_sync
    from forgec.runtime.judge import RuleJudge
    from forgec.runtime.play import HumanAgent, help_for, result_panel, tools_table
    from forgec.runtime.users import ScriptedUser

    console = Console(highlight=False)
    try:
        b = load(build)
        t = b.task(task) if task else (b.tasks[0] if b.tasks else None)
    except BuildError as e:
        Console(stderr=True).print(str(e), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    if t is None:
        Console(stderr=True).print(f"error[empty-build]: {build} has no tasks", markup=False)
        raise typer.Exit(1)
    console.rule(f"task {t.id}")
    console.print(tools_table(b.envs[t.env].TOOLS))
    console.print(help_for(b.envs[t.env].TOOLS))

    def read_line(prompt: str) -> str:
        return console.input(f"[bold magenta]{prompt}[/]")

    human = HumanAgent(console, read_line)
    ep = run_episode_sync(b, t, human, ScriptedUser(t), judge=RuleJudge(), limits=EpisodeLimits(max_turns=max_turns))
    human.show_new(ep.messages)
    console.print(result_panel(ep))
    raise typer.Exit(0)

