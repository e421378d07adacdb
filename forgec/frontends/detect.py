"""Decide which format a parsed document is in, from its shape (never from its file name)."""

from __future__ import annotations

from typing import Any

from forgec.diagnostics import Diagnostic, error, warning
from forgec.ir import Tool, Type

from . import bfcl, codes, mcp, openai, openapi
from .loader import Doc, join_pointer

FORMATS_HELP = (
    "forgec reads OpenAI tool lists ([{\"type\": \"function\", \"function\": {...}}] or {\"tools\": [...]}), "
    "MCP tools/list results ({\"tools\": [{\"name\", \"inputSchema\"}]}), OpenAPI 3.x / Swagger 2.0 documents, "
    "and BFCL function docs (JSON Lines)"
)


def _is_mcp(x: Any) -> bool:
    return isinstance(x, dict) and "inputSchema" in x


def _is_openai_tool(x: Any) -> bool:
    return isinstance(x, dict) and isinstance(x.get("function"), dict) and ("type" in x or len(x) == 1)


def _is_function(x: Any) -> bool:
    return isinstance(x, dict) and isinstance(x.get("name"), str) and ("parameters" in x or "description" in x)


def _is_bfcl_entry(x: Any) -> bool:
    return isinstance(x, dict) and "function" in x and "name" not in x and isinstance(x["function"], (list, dict)) and not _is_openai_tool(x)


def _bfcl_types(fns: list[Any]) -> bool:
    """BFCL writes `"type": "dict"` where JSON Schema says object."""
    for f in fns:
        if isinstance(f, dict) and isinstance(f.get("parameters"), dict) and f["parameters"].get("type") == "dict":
            return True
    return False


def _describe(data: Any) -> str:
    if isinstance(data, dict):
        keys = sorted(map(str, data))
        return "an object with keys " + ", ".join(keys[:6]) + (", ..." if len(keys) > 6 else "") if keys else "an empty object"
    if isinstance(data, list):
        return f"a list of {len(data)} entries"
    return f"a {type(data).__name__} value"


def _entries(items: list, pointer: str) -> list[tuple[Any, str]]:
    return [(x, join_pointer(pointer, i)) for i, x in enumerate(items)]


def _read_list(doc: Doc, items: list, pointer: str, diags: list[Diagnostic], defs: dict[str, Type]) -> list[Tool] | None:
    first = next((x for x in items if isinstance(x, dict)), None)
    entries = _entries(items, pointer)
    if first is None:
        return None
    if _is_mcp(first):
        return mcp.read_items(doc, entries, diags, defs)
    if _is_openai_tool(first):
        return openai.read_items(doc, entries, diags, defs)
    if _is_bfcl_entry(first):
        return bfcl.read_records(doc, entries, diags, defs)
    if _is_function(first) or "parameters" in first:
        if doc.kind == "jsonl" or _bfcl_types(items):
            return bfcl.read_records(doc, entries, diags, defs)
        return openai.read_items(doc, entries, diags, defs)
    return None


def read_doc(doc: Doc, diags: list[Diagnostic], defs: dict[str, Type]) -> list[Tool]:
    """Detect the document's format and lower it to tools; unknown shapes give `unknown-format`."""
    data, pointer = doc.data, ""
    if isinstance(data, dict) and isinstance(data.get("result"), dict) and "jsonrpc" in data:
        data, pointer = data["result"], "/result"  # a raw JSON-RPC response to tools/list
    tools: list[Tool] | None = None
    empty = False
    if isinstance(data, dict):
        if "openapi" in data or "swagger" in data:
            tools = openapi.read_document(doc, data, diags, defs)
            empty = not tools
        elif isinstance(data.get("tools"), list) or isinstance(data.get("functions"), list):
            key = "tools" if isinstance(data.get("tools"), list) else "functions"
            items = data[key]
            empty = not items
            tools = [] if empty else _read_list(doc, items, join_pointer(pointer, key), diags, defs)
        elif _is_mcp(data):
            tools = mcp.read_items(doc, [(data, pointer)], diags, defs)
        elif _is_openai_tool(data):
            tools = openai.read_items(doc, [(data, pointer)], diags, defs)
        elif _is_bfcl_entry(data):
            tools = bfcl.read_records(doc, [(data, pointer)], diags, defs)
        elif _is_function(data):
            reader = bfcl.read_records if doc.kind == "jsonl" or _bfcl_types([data]) else None
            tools = reader(doc, [(data, pointer)], diags, defs) if reader else openai.read_items(doc, [(data, pointer)], diags, defs)
    elif isinstance(data, list):
        empty = not data
        tools = [] if empty else _read_list(doc, data, pointer, diags, defs)
    if tools is None:
        diags.append(
            error(
                codes.UNKNOWN_FORMAT,
                f"not a tool documentation format forgec knows: found {_describe(data)}",
                doc.span(pointer),
                help=FORMATS_HELP,
            )
        )
        return []
    if empty:
        diags.append(warning(codes.NO_TOOLS, "the document lists no tools", doc.span(pointer), help="add tools (or operations under `paths`), or remove the file"))
    return tools
