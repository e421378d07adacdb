"""The .forge language: parse, check, format.

    parse(text, filename) -> (Module, diagnostics)      never raises
    format(module) -> str                               canonical text, comments kept
    format_text(text, filename) -> (str | None, diagnostics)
    check(modules) -> diagnostics                        resolve + type check across modules
    check.check_typed(modules) -> (diagnostics, Typed)   also the typed AST: every expression's type, every node's edges
    load(paths) -> (modules, diagnostics)               read files/folders (sorted), parse

`forgec.lang.check` is also the checker module (callable): its `EnvTypes` is the
environment type model (entity/record fields, key types, tool signatures, which tools
write state) and `node_refs` gives a blueprint node's inference edges.
"""

from __future__ import annotations

from forgec.lang import check  # noqa: F401  (a callable module: check(modules))
from forgec.lang.check import EnvTypes, load
from forgec.lang.fmt import format, format_text
from forgec.lang.parse import parse

__all__ = ["parse", "format", "format_text", "check", "load", "EnvTypes", "type_of_tool_result"]


def type_of_tool_result(env, tool):
    """The checker's type of `tool`'s result in `env` (entity names are records)."""
    return EnvTypes(env).tool_result(tool)
