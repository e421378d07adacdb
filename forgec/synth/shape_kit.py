"""Helpers for shapes whose model is written as `.forge` text (repository, SQL tables, kernels).

A shape knows its state and its tool bodies as small `.forge` templates: that is the
language a person editing the env reads, and the checker validates it. `forge_claim` parses
one such env text and turns it into a `Claim` (schema Entities/Records/Fields plus the
claimed `ToolDecl`s). `signature` writes a documented tool's parameter list from the IR, so a
claimed tool keeps its wire names, types, defaults and docs while its body is the shape's.
"""

from __future__ import annotations

import json
import re

from forgec import ir, lang
from forgec.diagnostics import has_errors, render
from forgec.lang import ast as A

from .names import ident
from .schema import Entity, Field, Record
from .shapes import Claim


def q(s: str) -> str:
    """A `.forge` string literal (JSON escapes are the language's escapes)."""
    return json.dumps(" ".join((s or "").split()), ensure_ascii=False)


def prim(t: ir.Type | None) -> str:
    """The forge spelling of a scalar/list IR type; `any` for what a shape does not model."""
    if t is None:
        return "any"
    k = t.kind
    if k == "string":
        return "str"
    if k == "integer":
        return "int"
    if k == "number":
        return "float"
    if k == "boolean":
        return "bool"
    if k == "enum":
        vals = [v for v in t.values if isinstance(v, str)]
        return f"enum({', '.join(q(v) for v in vals)})" if vals and len(vals) == len(t.values) else "str"
    if k == "array":
        return f"list[{prim(t.items)}]"
    if k in ("union", "anyof", "oneof") and t.variants:
        non_null = [v for v in t.variants if v.kind != "null"]
        if len(non_null) == 1:
            return prim(non_null[0])
    return "any"


def quoted_choices(text: str) -> list[str]:
    """Values the prose lists in quotes ("'local', 'remote' or 'all'") — an enum the docs state."""
    vals = re.findall(r"""['"`]([A-Za-z][\w-]*)['"`]""", text or "")
    out: list[str] = []
    for v in vals:
        if v not in out:
            out.append(v)
    return out if len(out) >= 2 else []


def param_decl(p: ir.Param, type_text: str | None = None) -> str:
    """One parameter in `.forge` syntax: name, type (optional when not required), default, doc."""
    t = type_text or prim(p.type)
    name = ident(p.name)
    optional = not p.required and not p.has_default
    if p.type is not None and p.type.nullable and not t.endswith("?"):
        t += "?"
    out = f"{name}: {t}"
    if p.has_default and p.default is not None and isinstance(p.default, (str, int, float, bool)):
        out += f" = {json.dumps(p.default)}"
    elif p.has_default or optional:
        if not t.endswith("?"):
            out = f"{name}: {t}?"
        out += " = null"
    doc = p.description or p.name.replace("_", " ").capitalize()
    return f"{out} {q(doc)}"


def signature(tool: ir.Tool, overrides: dict[str, str]) -> str:
    """`name(params)` for a documented tool; `overrides` gives a param's forge type by wire name."""
    ps = [param_decl(p, overrides.get(p.name)) for p in tool.params]
    return f"{ident(tool.name)}({', '.join(ps)})"


def _field(f: A.FieldDecl) -> Field:
    return Field(f.name, f.type, f.doc or "", f.default)


def forge_claim(shape: str, text: str, claimed: dict[str, str], file: str) -> Claim:
    """Parse and check the shape's env text; the Claim for the tools named in `claimed`
    (documented name -> identifier in the text). A template that does not check is a bug in
    the shape, reported with the text so it is found in tests, never silently dropped."""
    mod, diags = lang.parse(text, file)
    if not has_errors(diags):
        diags += lang.check([mod])
    if has_errors(diags):
        raise AssertionError(f"shape `{shape}` wrote a model that does not check:\n{render(diags, 'concise', {file: text})}\n{text}")
    env = mod.envs[0]
    c = Claim(shape=shape)
    for r in env.records:
        c.records[r.name] = Record(r.name, {f.name: _field(f) for f in r.fields}, r.doc or "")
    for e in env.entities:
        kf = next((f for f in e.fields if f.name == e.key), None)
        kt = "int" if kf is not None and isinstance(kf.type, A.PrimType) and kf.type.name == "int" else "str"
        c.entities[e.name] = Entity(e.name, e.key, kt, {f.name: _field(f) for f in e.fields}, e.doc or "")
    if env.state is not None:
        for f in env.state.fields:
            c.globals[f.name] = _field(f)
    by_ident = {t.name: t for t in env.tools}
    for wire, name in claimed.items():
        c.tools[wire] = by_ident[name]
    return c
