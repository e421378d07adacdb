"""The `forgec` command line: typer commands only, each in forgec/commands/<name>.py.

Each command module exposes `command` (a typer-annotated function). Heavy
imports (torch, transformers) happen inside the command bodies so that
`forgec compile/check/fmt/inspect` never import torch. Exit codes: 0 clean,
1 diagnostics with errors, 2 usage or internal error, 3 `fmt --check` found
changes, 130 interrupted (`forgec.diagnostics.EXIT_*`).
"""

from __future__ import annotations

import importlib
import os
import sys

import typer
from typer.core import TyperCommand, TyperGroup

from forgec import __version__

# click's UsageError, from whichever click typer uses (its vendored copy since 0.20, click before):
# found through the public `typer.BadParameter`, so forgec needs no undeclared `click` import.
_USAGE_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def _usage_diagnostic(e: Exception, ctx) -> None:
    """A parser usage error (unknown option/command, missing argument, bad value) as an `error[usage]`, exit 2."""
    from forgec import codes  # noqa: F401 - registers `usage`
    from forgec import diagnostics as D

    ctx = getattr(e, "ctx", None) or ctx
    what = "commands" if isinstance(ctx.command, TyperGroup) else "options"
    usage = " ".join(ctx.get_usage().split())
    D.emit(D.error("usage", e.format_message(), help=f"{usage}; `{ctx.command_path} --help` lists the {what}"))
    raise typer.Exit(D.EXIT_USAGE)


def _parse_guarded(parse, ctx, args):
    try:
        return parse(ctx, args)
    except _USAGE_ERROR as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # bare `forgec`: the help itself, exit 2
            raise
        _usage_diagnostic(e, ctx)


class _Command(TyperCommand):
    """A command whose usage errors go through the diagnostics renderer (same look as every other error)."""

    def parse_args(self, ctx, args):
        return _parse_guarded(super().parse_args, ctx, args)


class _Group(TyperGroup):
    def parse_args(self, ctx, args):
        return _parse_guarded(super().parse_args, ctx, args)

    def resolve_command(self, ctx, args):
        return _parse_guarded(super().resolve_command, ctx, args)


app = typer.Typer(
    name="forgec",
    cls=_Group,
    help="Compile tool documentation into verifiable RL environments, then evaluate and train agents on them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# (command name, module under forgec.commands)
COMMANDS = [
    ("inspect", "inspect"),
    ("check", "check"),
    ("fmt", "fmt"),
    ("compile", "compile"),
    ("verify", "verify"),
    ("graph", "graph"),
    ("sample", "sample"),
    ("stats", "stats"),
    ("play", "play"),
    ("eval", "eval"),
    ("train", "train"),
    ("sft", "sft"),
    ("evolve", "evolve"),
    ("sft-user", "sft_user"),
    ("serve", "serve"),
    ("serve-openenv", "serve_openenv"),
    ("export", "export"),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"forgec {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """forgec: tool docs -> environments -> blueprints -> tasks -> agents."""


def _register() -> None:
    for name, mod in COMMANDS:
        m = importlib.import_module(f"forgec.commands.{mod}")
        app.command(name, cls=_Command, help=(m.command.__doc__ or "").strip().split("\n")[0])(m.command)


_register()


def main() -> None:
    """Entry point: no traceback reaches the user (exit codes: `forgec.diagnostics.EXIT_*`, README "Exit codes").

    typer runs in standalone mode (its public contract: exit 130 on Ctrl-C); usage
    errors (unknown option, missing argument, bad value) are `error[usage]`
    diagnostics, exit 2 (`_Command`/`_Group`). Anything else that escapes a
    command is a bug: `internal-error`, exit 2.
    """
    from forgec import diagnostics as D

    try:
        app()
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int) and e.code in D.EXIT_CODES:
            raise
        # not a status forgec uses: code from a build (an env module, a tool body) called sys.exit
        D.emit(D.error(D.INTERNAL, f"something called sys.exit({e.code!r}) inside forgec",
                       help="a generated env module or tool body of the build may have called it; run `forgec verify BUILD`"))
        sys.exit(D.EXIT_INTERNAL)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(D.EXIT_INTERRUPTED)
    except Exception as e:  # noqa: BLE001
        D.emit(D.error(D.INTERNAL, f"{type(e).__name__}: {e}",
                       help="this is a bug in forgec; please report it with the input that caused it (FORGEC_DEBUG=1 prints the traceback)"))
        if "--debug" in sys.argv or os.environ.get("FORGEC_DEBUG"):
            import traceback

            traceback.print_exc()
        sys.exit(D.EXIT_INTERNAL)
    sys.exit(D.EXIT_OK)


if __name__ == "__main__":
    main()
