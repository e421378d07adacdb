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

from forgec import __version__

app = typer.Typer(
    name="forgec",
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
        try:
            m = importlib.import_module(f"forgec.commands.{mod}")
        except ModuleNotFoundError as e:
            if e.name == f"forgec.commands.{mod}":
                continue  # command not built yet
            raise
        app.command(name, help=(m.command.__doc__ or "").strip().split("\n")[0])(m.command)


_register()


def main() -> None:
    """Entry point: no traceback reaches the user (exit codes: `forgec.diagnostics.EXIT_*`, README "Exit codes").

    typer runs in standalone mode, its public contract: it prints usage errors
    (unknown option, missing argument, bad value) and exits 2, and exits 130 on
    Ctrl-C. Anything else that escapes a command is a bug: `internal-error`, exit 2.
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
