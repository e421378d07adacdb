"""OpenAI function-calling docs: `[{"type": "function", "function": {...}}]`, bare functions, `{"tools": [...]}`.

A function object may carry a top-level `"returns"` JSON Schema beside
`"parameters"` (not part of OpenAI's API, but the natural place to document a
result; `"response"` is accepted too, as BFCL writes it).
"""

from __future__ import annotations

from typing import Any

from forgec.diagnostics import Diagnostic, error, warning
from forgec.ir import Tool, Type

from . import codes
from .common import make_tool, object_params, text, tool_name, wire_of
from .loader import Doc, join_pointer
from .schema import SchemaConverter


def function_to_tool(conv: SchemaConverter, fn: dict, pointer: str, tool_pointer: str, fmt: str, diags: list[Diagnostic]) -> Tool | None:
    """One function object (`name`, `description`, `parameters`, optional `returns`/`response`)."""
    doc = conv.doc
    name = tool_name(doc, fn.get("name"), join_pointer(pointer, "name") if "name" in fn else pointer, diags)
    if name is None:
        return None
    params = object_params(conv, fn.get("parameters"), join_pointer(pointer, "parameters"), diags)
    returns: Type | None = None
    for key in ("returns", "response"):
        if key in fn and fn[key] is not None:
            returns = conv.convert(fn[key], join_pointer(pointer, key))
            break
    return make_tool(doc, tool_pointer, name=name, description=text(fn.get("description")), params=params, returns=returns, format=fmt,  # type: ignore[arg-type]
                     wire_name=wire_of(fn.get("name"), name))


def read_items(doc: Doc, entries: list[tuple[Any, str]], diags: list[Diagnostic], defs: dict[str, Type], fmt: str = "openai") -> list[Tool]:
    """OpenAI tool objects and/or bare function objects, each with its JSON pointer."""
    conv = SchemaConverter(doc, diags, defs)
    tools: list[Tool] = []
    for item, p in entries:
        if isinstance(item, dict) and isinstance(item.get("function"), dict):
            if item.get("type", "function") != "function":
                diags.append(warning(codes.INVALID_TOOL, f"tool of type `{item.get('type')}` is not a function tool; skipped", doc.span(join_pointer(p, "type"))))
                continue
            t = function_to_tool(conv, item["function"], join_pointer(p, "function"), p, fmt, diags)
        elif isinstance(item, dict) and ("name" in item or "parameters" in item):
            t = function_to_tool(conv, item, p, p, fmt, diags)
        else:
            diags.append(
                error(
                    codes.INVALID_TOOL,
                    f"expected a tool object ({{\"type\": \"function\", \"function\": {{...}}}} or a function with a name), found {_kind(item)}",
                    doc.span(p),
                    help="each entry of the list must describe one function",
                )
            )
            continue
        if t is not None:
            tools.append(t)
    return tools


def _kind(v: Any) -> str:
    if isinstance(v, dict):
        return "an object with keys " + ", ".join(sorted(map(str, v))[:5]) if v else "an empty object"
    return type(v).__name__ if v is not None else "null"
