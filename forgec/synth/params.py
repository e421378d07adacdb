"""What a tool's documented parameters become in the `.forge` signature: names, types, defaults.

Split out of `effects.py` so that the shapes (`pure.py`) and the prose rules (`prose_effects.py`)
can build signatures and defaults without importing the effect rules that import them.
"""

from __future__ import annotations

from dataclasses import dataclass

from forgec import ir
from forgec.english import singular
from forgec.lang import ast as A

from . import prose
from .names import ident, pascal, snake
from .schema import Schema, batch_key, body_with_key, gives_new_name, is_body, ToolView, TypeMapper, strip_optional

STR = A.PrimType("str")
NULL = A.Literal(None)


def lit(v) -> A.Literal:
    return A.Literal(v)


@dataclass
class ParamOut:
    name: str
    wire: str
    type: A.TypeExpr
    default: A.Expr | None
    doc: str
    optional: bool


def default_value(s: Schema, t: A.TypeExpr, depth: int = 0) -> A.Expr:
    """A literal of type `t` for fields nobody supplies (null for optionals and references)."""
    if isinstance(t, A.OptionalType):
        return NULL
    if isinstance(t, A.PrimType):
        return {"str": lit(""), "int": lit(0), "float": lit(0.0), "bool": lit(False)}.get(t.name, NULL)
    if isinstance(t, A.EnumType):
        return lit(t.values[0])
    if isinstance(t, A.ListType):
        return A.ListLit(())
    if isinstance(t, A.RecordType):
        return A.RecordLit(tuple(A.FieldInit(f.name, default_value(s, f.type, depth + 1)) for f in t.fields))
    if isinstance(t, A.NamedType):
        rec = s.records.get(t.name)
        if rec is not None and depth < 4:
            inits = tuple(A.FieldInit(f.name, default_value(s, f.type, depth + 1)) for f in rec.fields.values())
            # a record holding a required reference (or too deep) has no default: null, and
            # fix_required_refs makes the field optional
            if any(i.value == NULL and not isinstance(f.type, A.OptionalType) for i, f in zip(inits, rec.fields.values())):
                return NULL
            return A.RecordLit(inits)
        return NULL
    return NULL


def param_name(s: Schema, wire: str) -> str:
    """The identifier of a param; `state` would hide the globals when the env has some."""
    name = ident(wire)
    if (name == "state" and s.globals) or name in s.entities or name in s.records:
        return name + "_"  # `Prefix: str` would hide the entity Prefix (`fresh_id(Prefix)`, `Prefix where ...`)
    return name


def tool_params(s: Schema, v: ToolView, tm: TypeMapper) -> list[ParamOut]:
    out: list[ParamOut] = []
    for p in v.tool.params:
        name = param_name(s, p.name)
        if p.name == v.key_param and v.target:
            ty: A.TypeExpr = A.NamedType(v.target)
        elif p.name in v.refs:
            ty = A.NamedType(v.refs[p.name])
        elif p.name in v.list_refs:
            ty = A.ListType(A.NamedType(v.list_refs[p.name]))
        elif p.name == v.fresh_key and v.target:
            ty = A.PrimType(s.entities[v.target].key_type)
        elif p.type.kind == "object" and p.type.fields:
            # a request body is the tool's own shape (`cancel_order`'s body is no `create_order` body)
            hint = f"{v.target or v.name}_{p.name}"
            if is_body(v, p) and _other_shape(s, hint, p.type):
                hint = f"{v.name}_{p.name}"
            ty = tm.map(p.type, hint)
            if v.kind in ("update", "delete", "read") and v.target and v.key_param is None and body_with_key(v) is p \
                    and isinstance(strip_optional(ty), A.NamedType) and (rec := s.records.get(strip_optional(ty).name)) is not None:
                idf = batch_key(s, v, p)
                if idf in rec.fields:  # Outline's `{id, title}`: the body's id names the document acted on
                    old = rec.fields[idf].type
                    rec.fields[idf].type = A.OptionalType(A.NamedType(v.target)) if isinstance(old, A.OptionalType) else A.NamedType(v.target)
        elif p.type.kind == "array" and p.type.items is not None and p.type.items.kind == "object" and p.type.items.fields:
            # a batch of new or changed records is the tool's own shape too: Todoist's `create_projects(items)` and
            # `update_tasks(items)` items are no one `Item` holding every tool's fields, each of them optional
            # (a shape met again, like a reservation's `passengers`, keeps its one record)
            hint = p.name
            if _other_shape(s, singular(snake(hint)), p.type.items):
                hint = f"{v.target or v.name}_{p.name}"
                if _other_shape(s, singular(snake(hint)), p.type.items):
                    hint = f"{v.name}_{p.name}"
            ty = tm.map(p.type, hint)
            if v.kind in ("update", "delete") and v.target and isinstance(ty, A.ListType) and isinstance(ty.item, A.NamedType) \
                    and (rec := s.records.get(ty.item.name)) is not None:
                idf = batch_key(s, v, p)
                if idf in rec.fields:  # the item's `id` names a project: typed so, for the agent and the sampler
                    old = rec.fields[idf].type
                    rec.fields[idf].type = A.OptionalType(A.NamedType(v.target)) if isinstance(old, A.OptionalType) else A.NamedType(v.target)
        else:
            ty = A.PrimType("str") if gives_new_name(p) else tm.field_type(p.name, p.type)
            closed = (prose.allowed_values(p.description or "") or prose.allowed_for(v.tool.description or "", p.name)) if ty == STR else None
            if closed:
                ty = A.EnumType(closed[0])  # "either 'lost device' or 'travel'": a closed set
        default: A.Expr | None = None
        optional = not p.required
        if optional and is_body(v, p) and v.kind in ("create", "update"):
            optional = False  # a spread request body is always sent (its fields carry the optionality)
        if optional and v.target and v.key_param is None and body_with_key(v) is p and v.kind in ("update", "delete", "read"):
            optional = False  # the body names the record acted on (Outline's `documents.delete({id})`): always sent
        if optional:
            dv = p.default if p.has_default else None
            if dv is not None and fits(ty, dv):
                default = lit(dv)
            else:
                if not isinstance(ty, A.OptionalType):
                    ty = A.OptionalType(ty)
                default = NULL
        out.append(ParamOut(name, p.name, ty, default, (p.description or "").strip(), optional and (default is NULL)))
    return out


def _other_shape(s: Schema, hint: str, t: ir.Type) -> bool:
    """Whether the record `hint` names already holds another tool's body of other fields
    (`cancel_order`'s body `{reason}` is no `create_order` body `{user_id, items}`)."""

    name = pascal(singular(snake(hint)))
    rec = s.records.get(name + "Info" if name in s.entities else name)
    return rec is not None and set(rec.fields) != {ident(snake(f.name)) for f in t.fields}


def fits(t: A.TypeExpr, v) -> bool:
    t = strip_optional(t)
    if isinstance(t, A.PrimType):
        return {
            "str": isinstance(v, str),
            "int": isinstance(v, int) and not isinstance(v, bool),
            "float": isinstance(v, (int, float)) and not isinstance(v, bool),
            "bool": isinstance(v, bool),
        }.get(t.name, False)
    if isinstance(t, A.EnumType):
        return v in t.values
    return False


# --------------------------------------------------------------------------- per kind


def tool_doc(desc: str) -> str:
    d = " ".join((desc or "").split())
    return d
