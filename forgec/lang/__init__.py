"""The .forge language: parse, check, format.

    parse(text, filename) -> (Module, diagnostics)      never raises
    format(module) -> str                               canonical text, comments kept
    format_text(text, filename) -> (str | None, diagnostics)
    check(modules) -> diagnostics                        resolve + type check across modules
    load(paths) -> (modules, diagnostics)               read files/folders, follow imports

The checker's type model (`EnvTypes`, `Ty`) lives in forgec.lang.check / forgec.lang.types.
"""

from __future__ import annotations

from forgec.lang.parse import parse

__all__ = ["parse", "format", "format_text", "check", "load"]


def __getattr__(name):  # lazy: `forgec.lang.parse` stays importable without the checker/formatter
    if name in ("format", "format_text"):
        from forgec.lang import fmt

        return getattr(fmt, name)
    if name in ("check", "load", "EnvTypes"):
        from forgec.lang import check as _check

        return getattr(_check, name if name != "check" else "check_modules")
    raise AttributeError(name)
