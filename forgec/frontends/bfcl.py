"""BFCL-style function docs (Berkeley Function-Calling Leaderboard), usually JSON Lines.

Each record is a function (`{"name", "description", "parameters": {"type": "dict", ...}}`)
or a test entry carrying its functions (`{"id", "question", "function": [...]}`).
BFCL's type names (`dict`, `float`, `tuple`, `any`) are handled by the shared
schema converter; a `response` schema becomes `returns`. The same function
repeated across test entries is read once.
"""

from __future__ import annotations

from forgec.diagnostics import Diagnostic, error
from forgec.ir import Tool, Type

from . import codes
from .loader import Doc, join_pointer
from .openai import function_to_tool
from .schema import SchemaConverter


def read_records(doc: Doc, entries: list[tuple[object, str]], diags: list[Diagnostic], defs: dict[str, Type]) -> list[Tool]:
    """BFCL records (functions or test entries with `function`), each with its JSON pointer."""
    conv = SchemaConverter(doc, diags, defs)
    tools: list[Tool] = []
    seen: dict[str, Tool] = {}
    for rec, rp in entries:
        fns: list[tuple[object, str]]
        if isinstance(rec, dict) and "function" in rec and "name" not in rec:
            f = rec["function"]
            if isinstance(f, list):
                fns = [(x, join_pointer(rp, "function", j)) for j, x in enumerate(f)]
            else:
                fns = [(f, join_pointer(rp, "function"))]
        else:
            fns = [(rec, rp)]
        for fn, fp in fns:
            if not isinstance(fn, dict):
                diags.append(error(codes.INVALID_TOOL, f"expected a BFCL function object, found {type(fn).__name__}", doc.span(fp), help='a function is {"name": ..., "description": ..., "parameters": {"type": "dict", ...}}'))
                continue
            t = function_to_tool(conv, fn, fp, fp, "bfcl", diags)
            if t is None:
                continue
            prev = seen.get(t.name)
            if prev is not None and _same(prev, t):
                continue  # the same function documented again by another test entry
            seen.setdefault(t.name, t)
            tools.append(t)
    return tools


_NO_SOURCES = {"source": True, "params": {"__all__": {"source"}}}


def _same(a: Tool, b: Tool) -> bool:
    return a.model_dump(exclude=_NO_SOURCES) == b.model_dump(exclude=_NO_SOURCES)
