"""The `forgec` command line: typer commands only, each in forgec/commands/<name>.py.

Each command module exposes `command` (a typer-annotated function). Heavy
imports (torch, transformers) happen inside the command bodies so that
`forgec compile/check/fmt/inspect` never import torch. Exit codes: 0 clean,
1 diagnostics with errors, 2 internal error, 3 `fmt --check` found changes.
"""

from __future__ import annotations

import importlib
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


def _click_error_types() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """Usage-error and abort classes of both click and typer's vendored copy.

    typer >= 0.20 raises its own `typer._click` exceptions, which are not
    subclasses of `click`'s; checking only `click` turned every usage error
    (missing argument, unknown option) into a fake internal error.
    """
    import click

    usage: list[type] = [click.exceptions.ClickException]
    aborts: list[type] = [click.exceptions.Abort, typer.Abort]
    try:
        from typer._click import exceptions as tce

        usage.append(tce.ClickException)
        if hasattr(tce, "Abort"):
            aborts.append(tce.Abort)
    except ImportError:
        pass
    return tuple(usage), tuple(aborts)


def main() -> None:
    """Entry point: no traceback reaches the user; internal errors exit 2."""
    try:
        rc = app(standalone_mode=False)
    except SystemExit:
        raise
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception as e:  # noqa: BLE001
        usage_errors, aborts = _click_error_types()
        if isinstance(e, usage_errors):
            e.show()  # usage text + "Error: ..." (the help itself for a bare `forgec`)
            sys.exit(e.exit_code if e.exit_code != 1 else 2)
        if isinstance(e, aborts):
            sys.stderr.write("aborted\n")
            sys.exit(130)
        sys.stderr.write(f"error[internal-error]: {type(e).__name__}: {e}\n  = help: this is a bug in forgec; please report it with the input that caused it\n")
        if "--debug" in sys.argv or __import__("os").environ.get("FORGEC_DEBUG"):
            import traceback

            traceback.print_exc()
        sys.exit(2)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
