"""MCP `tools/list` results: `{"tools": [{name, title?, description, inputSchema, outputSchema?, annotations?}]}`.

`annotations` (readOnlyHint, destructiveHint, idempotentHint, openWorldHint,
title) are kept verbatim: synthesis uses them to tell reads from writes.
`outputSchema` becomes the tool's `returns`.
"""

from __future__ import annotations

from typing import Any

from forgec.diagnostics import Diagnostic, error, warning
from forgec.ir import Tool, Type

from . import codes
from .common import make_tool, object_params, text, tool_name, wire_of
from .loader import Doc, join_pointer
from .schema import SchemaConverter

_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def _annotations(doc: Doc, tool: dict, pointer: str, diags: list[Diagnostic]) -> dict[str, Any]:
    ann = tool.get("annotations")
    out: dict[str, Any] = {}
    if isinstance(ann, dict):
        for k in sorted(ann, key=str):
            v = ann[k]
            if k in _HINTS and not isinstance(v, bool):
                diags.append(warning(codes.INVALID_TOOL, f"annotation `{k}` must be true or false, found {v!r:.30}; ignored", doc.span(join_pointer(pointer, "annotations", k))))
                continue
            if isinstance(v, (str, int, float, bool)) or v is None:
                out[str(k)] = v
    elif ann is not None:
        diags.append(warning(codes.INVALID_TOOL, "`annotations` must be an object; ignored", doc.span(join_pointer(pointer, "annotations"))))
    if isinstance(tool.get("title"), str) and "title" not in out:
        out["title"] = tool["title"]
    return out


def read_items(doc: Doc, entries: list[tuple[Any, str]], diags: list[Diagnostic], defs: dict[str, Type]) -> list[Tool]:
    """MCP tool objects, each with its JSON pointer."""
    conv = SchemaConverter(doc, diags, defs)
    tools: list[Tool] = []
    for item, p in entries:
        if not isinstance(item, dict):
            diags.append(error(codes.INVALID_TOOL, f"expected an MCP tool object, found {type(item).__name__}", doc.span(p), help="each entry of `tools` needs `name` and `inputSchema`"))
            continue
        name = tool_name(doc, item.get("name"), join_pointer(p, "name") if "name" in item else p, diags)
        if name is None:
            continue
        params = object_params(conv, item.get("inputSchema"), join_pointer(p, "inputSchema"), diags)
        returns = None
        if item.get("outputSchema") is not None:
            returns = conv.convert(item["outputSchema"], join_pointer(p, "outputSchema"))
        tools.append(
            make_tool(
                doc,
                p,
                name=name,
                description=text(item.get("description")),
                params=params,
                returns=returns,
                annotations=_annotations(doc, item, p, diags),
                format="mcp",
                wire_name=wire_of(item.get("name"), name),
            )
        )
    return tools
