"""`forgec play BUILD [--task ID]`: play the agent yourself, in the terminal, against the scripted user."""

from __future__ import annotations

from pathlib import Path

import typer

from forgec.commands.common import ALLOW_MODIFIED_HELP, load_build


def command(
    build: Path = typer.Argument(..., help="Build folder made by `forgec compile`."),
    task: str = typer.Option(None, "--task", "-t", help="Task id (<env>/<blueprint>); default: the first task."),
    max_turns: int = typer.Option(30, "--max-turns", help="Most agent turns before the episode ends."),
    allow_modified_build: bool = typer.Option(False, "--allow-modified-build", help=ALLOW_MODIFIED_HELP),
) -> None:
    """Play one episode as the agent (tools listed, calls typed as JSON) against the scripted user."""
    from rich.console import Console

    from forgec import diagnostics as D
    from forgec.runtime import BuildError
    from forgec.runtime.episode import EpisodeLimits, run_episode_sync
    from forgec.runtime.judge import RuleJudge
    from forgec.runtime.play import HumanAgent, help_for, result_panel, tools_table
    from forgec.runtime.users import ScriptedUser

    console = Console(highlight=False)
    b = load_build(build, allow_modified_build)
    try:
        t = b.task(task) if task else (b.tasks[0] if b.tasks else None)
    except BuildError as e:
        D.emit(e.diagnostic())
        raise typer.Exit(D.EXIT_ERRORS) from None
    if t is None:
        D.fail("empty-build", f"{build} has no tasks", str(build / "manifest.json"),
               help=f"`forgec stats {build}` and the compile report say why every blueprint was rejected")
    console.rule(f"task {t.id}")
    console.print(tools_table(b.envs[t.env].TOOLS))
    console.print(help_for(b.envs[t.env].TOOLS))

    def read_line(prompt: str) -> str:
        return console.input(f"[bold magenta]{prompt}[/]")

    human = HumanAgent(console, read_line)
    ep = run_episode_sync(b, t, human, ScriptedUser(t), judge=RuleJudge(), limits=EpisodeLimits(max_turns=max_turns))
    human.show_new(ep.messages)
    console.print(result_panel(ep))
    raise typer.Exit(D.EXIT_OK)

