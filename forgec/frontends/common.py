"""Helpers shared by the frontends: identifiers, sources, object schema -> params."""

from __future__ import annotations

import keyword
import re
from typing import Any

from forgec.diagnostics import Diagnostic, error, warning
from forgec.ir import Param, Source, Tool, Type

from . import codes
from .loader import Doc, join_pointer
from .schema import SchemaConverter, has_type_info, jsonable, read_only, writable

_NON_ID = re.compile(r"[^0-9A-Za-z_]+")


def identifier(name: str) -> str:
    """Normalize any string to a Python-style identifier (non-alphanumerics -> `_`)."""
    s = _NON_ID.sub("_", name).strip("_")
    s = re.sub(r"_+", "_", s)
    if not s:
        return "_"
    if s[0].isdigit():
        s = "_" + s
    return s


def is_identifier(name: str) -> bool:
    return name.isidentifier() and name.isascii() and not keyword.iskeyword(name)


def source(doc: Doc, pointer: str) -> Source:
    span = doc.span(pointer)
    return Source(file=doc.file, line=span.line, col=span.col, pointer=pointer)


def tool_name(doc: Doc, raw: Any, pointer: str, diags: list[Diagnostic]) -> str | None:
    """Validate a tool name; non-identifiers are normalized with a warning."""
    if not isinstance(raw, str) or not raw.strip():
        diags.append(
            error(
                codes.MISSING_NAME,
                "tool has no name" if raw is None else f"tool name must be a non-empty string, found {raw!r:.40}",
                doc.span(pointer),
                help='give every tool a "name", e.g. "get_user"',
            )
        )
        return None
    return _as_identifier(doc, raw, pointer, diags, codes.RENAMED_TOOL, "tool name")


def text(v: Any) -> str:
    return v.strip() if isinstance(v, str) else ""


def object_params(
    conv: SchemaConverter,
    schema: Any,
    pointer: str,
    diags: list[Diagnostic],
    root: Any = None,
    root_pointer: str = "",
) -> tuple[Param, ...]:
    """Parameters from an object schema (`parameters` / `inputSchema`): one Param per property."""
    doc = conv.doc
    if schema is None:
        return ()
    if not isinstance(schema, dict):
        diags.append(error(codes.INVALID_SCHEMA, f"parameters must be a JSON Schema object, found {type(schema).__name__}", doc.span(pointer), help='write {"type": "object", "properties": {...}}'))
        return ()
    if root is None:  # JSON Schema: `#/$defs/...` inside inputSchema/parameters is relative to it
        root, root_pointer = schema, pointer
    if "$ref" in schema or "allOf" in schema:  # a whole-object ref: resolve, then read its fields
        t = conv.convert(schema, pointer, root, root_pointer)
        return tuple(Param(name=f.name, type=f.type, required=f.required, description=f.description, source=source(doc, pointer)) for f in t.fields)
    ty = schema.get("type")
    if ty is not None and ty not in ("object", "dict"):
        diags.append(
            error(
                codes.INVALID_SCHEMA,
                f"parameters must be an object schema, found `type: {ty}`",
                doc.span(join_pointer(pointer, "type")),
                help='tool arguments are named: {"type": "object", "properties": {...}}',
            )
        )
        return ()
    props = schema.get("properties", {})
    if props is None:
        props = {}
    if not isinstance(props, dict):
        diags.append(error(codes.INVALID_SCHEMA, f"`properties` must be an object, found {type(props).__name__}", doc.span(join_pointer(pointer, "properties"))))
        return ()
    req = schema.get("required")
    required = {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()
    for i, r in enumerate(req if isinstance(req, list) else []):
        if isinstance(r, str) and r not in props:
            diags.append(
                warning(
                    codes.UNKNOWN_REQUIRED,
                    f"`required` lists `{r}`, which is not among the parameters",
                    doc.span(join_pointer(pointer, "required", i)),
                    help="fix the spelling or document the parameter under `properties`",
                )
            )
    params: list[Param] = []
    for name, sub in props.items():
        name = str(name)
        p = join_pointer(pointer, "properties", name)
        if read_only(sub):  # the server sets it; an input that takes it is documented as ignored
            continue
        if isinstance(sub, dict) and not has_type_info(sub) and sub:
            diags.append(
                warning(
                    codes.MISSING_TYPE,
                    f"parameter `{name}` has no type; it is read as `any`",
                    doc.span(p),
                    help='add a "type" (string, integer, number, boolean, array, object) or an "enum"',
                )
            )
        t = conv.convert(sub, p, root, root_pointer)
        params.append(make_param(doc, param_name(doc, name, p, diags), t, name in required, sub, p, "arg"))
    return tuple(params)


def param_name(doc: Doc, raw: str, pointer: str, diags: list[Diagnostic]) -> str:
    """Parameter names become identifiers in .forge and Python; others are normalized with a warning."""
    return _as_identifier(doc, raw, pointer, diags, codes.RENAMED_PARAM, "parameter name")


def _as_identifier(doc: Doc, raw: str, pointer: str, diags: list[Diagnostic], code: str, what: str) -> str:
    """`raw` itself when it is an identifier; else its normalized form (a keyword gets `_`), with a warning."""
    if is_identifier(raw):
        return raw
    new = identifier(raw)
    if keyword.iskeyword(new):
        new += "_"
    diags.append(warning(code, f"{what} `{raw}` is not an identifier; it is read as `{new}`", doc.span(pointer)))
    return new


def make_param(doc: Doc, name: str, t: Type, required: bool, schema: Any, pointer: str, location: str, description: str = "") -> Param:
    has_default = isinstance(schema, dict) and "default" in schema
    return Param(
        name=name,
        type=writable(t),
        required=required,
        default=jsonable(schema.get("default")) if has_default else None,
        has_default=has_default,
        description=description or t.description,
        location=location,  # type: ignore[arg-type]
        source=source(doc, pointer),
    )


def make_tool(doc: Doc, pointer: str, **kw: Any) -> Tool:
    return Tool(source=source(doc, pointer), **kw)


_WIRE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def wire_of(raw: Any, name: str | None) -> str | None:
    """The docs' tool name where it differs from the identifier `name` and an agent can still call it by it (the
    OpenAI and MCP function-name alphabet: letters, digits, `_`, `-`): `find-projects`. A name with other characters
    (`math.factorial`, spaces) is served as its identifier."""
    if isinstance(raw, str) and name and raw != name and _WIRE.fullmatch(raw):
        return raw
    return None
