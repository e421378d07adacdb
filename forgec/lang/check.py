"""Resolver and type checker for .forge modules: small passes over the AST.

    load(paths)            read files/folders, parse, follow imports
    check_modules(mods)    (exported as forgec.lang.check) all passes below, over all modules
      _resolve_envs          envs by name, imports, duplicate envs
      check_env            declarations: duplicates, keys, enums, types, annotations, defaults
      check_tool           effect bodies: scopes, statement and expression types, dead code
      check_blueprint      user facts, calls, reason ops, expect/tell, edges, cycles, unused nodes

`EnvTypes` is the environment's type model (entity/record fields, key types, tool
signatures, which tools write state); other stages may import it.
Every problem is a Diagnostic; checking continues after each one (UNKNOWN types
keep one mistake from cascading).
"""

from __future__ import annotations

import difflib
import gc
import os
import re
from functools import lru_cache
from pathlib import Path

from forgec.diagnostics import Diagnostic, Span, error, warning
from forgec.lang import ast as A
from forgec.lang import codes as C
from forgec.lang import confine
from forgec.lang.builtins import BUILTINS, OPERATORS
from forgec.lang.types import (ANY, BOOL, FLOAT, INT, NULL, STR, UNKNOWN, EntRec, EntSet, EnumT, ListT, OptT,
                               Prim, RecT, RefT, Ty, elem, enum_base, is_loose, is_number, is_stringy, join,
                               strip_opt)
from forgec.lang.fmt import expr
from forgec.stdlib.ops import OPS
from forgec.lang.parse import parse

ANNOTATIONS = ("read", "search", "create", "update", "delete", "action", "conservative")
WRITE_STMTS = (A.Set, A.Insert, A.Delete, A.Append, A.Remove)
PRIMS = {"str": STR, "int": INT, "float": FLOAT, "bool": BOOL, "any": ANY}


def scalar_type(t) -> Ty:
    """The type of a scalar type expression (`str`, `enum(...)`, `int?`); no env needed.
    UNKNOWN for anything else (names, lists, records: `EnvTypes.resolve`)."""
    if isinstance(t, A.PrimType):
        return PRIMS.get(t.name, UNKNOWN)
    if isinstance(t, A.EnumType):
        return EnumT(tuple(t.values))
    if isinstance(t, A.OptionalType):
        inner = scalar_type(t.inner)
        return inner if isinstance(inner, OptT) or is_loose(inner) else OptT(inner)
    return UNKNOWN


def did_you_mean(name: str, candidates) -> str:
    m = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean `{m[0]}`?" if m else ""


# --------------------------------------------------------------------------- environment types


class EnvTypes:
    """The type model of one env: what names mean and what their fields are.

    * `resolve(t, mode)`: mode "field" (entity names are stored keys -> RefT) for entity,
      record and state fields; mode "value" (entity names are records -> EntRec) for tool
      parameters (inside the body), return types and blueprint values.
    * `fields(ty)`: field name -> type for record-like types (None otherwise).
    * `tool_result(tool)`, `param_type(p)`, `writes_state(tool)`, `key_type(entity)`.
    """

    def __init__(self, env: A.EnvDecl) -> None:
        self.env = env
        self.entities: dict[str, A.EntityDecl] = {}
        self.records: dict[str, A.RecordDecl] = {}
        self.tools: dict[str, A.ToolDecl] = {}
        for e in env.entities:
            self.entities.setdefault(e.name, e)
        for r in env.records:
            self.records.setdefault(r.name, r)
        for t in env.tools:
            self.tools.setdefault(t.name, t)
        self._fields: dict[str, dict[str, Ty]] = {}
        self._writes: dict[int, bool] = {}  # id(tool) -> writes_state (self.env keeps the tools alive)
        # what checking against this env computed (the typed AST the later passes read):
        self.types: dict[int, Ty] = {}  # id(expression) -> its type
        self.edges: dict[int, tuple[str, ...]] = {}  # id(blueprint node) -> earlier nodes it reads
        self.state = RecT("state", tuple((f.name, self.resolve(f.type, "field"), True) for f in
                                         (env.state.fields if env.state else ())))

    def key_type(self, entity: str) -> Ty:
        e = self.entities.get(entity)
        if e is None:
            return UNKNOWN
        f = next((f for f in e.fields if f.name == e.key), None)
        if f is None or not isinstance(f.type, A.PrimType):
            return STR if f is None else UNKNOWN
        return PRIMS.get(f.type.name, UNKNOWN)

    def resolve(self, t, mode: str = "value") -> Ty:
        if isinstance(t, A.PrimType):
            return PRIMS.get(t.name, UNKNOWN)
        if isinstance(t, A.NamedType):
            if t.name in self.entities:
                return RefT(t.name, self.key_type(t.name)) if mode == "field" else EntRec(t.name)
            if t.name in self.records:
                return self.record_type(t.name)
            if t.name in PRIMS:
                return PRIMS[t.name]
            return UNKNOWN
        if isinstance(t, A.EnumType):
            return EnumT(tuple(t.values))
        if isinstance(t, A.ListType):
            return ListT(self.resolve(t.item, mode))
        if isinstance(t, A.OptionalType):
            inner = self.resolve(t.inner, mode)
            return inner if isinstance(inner, OptT) or is_loose(inner) else OptT(inner)
        if isinstance(t, A.RecordType):
            return RecT("", tuple((f.name, self.resolve(f.type, mode), required(f)) for f in t.fields))
        return UNKNOWN

    def record_type(self, name: str) -> RecT:
        r = self.records[name]
        return RecT(name, tuple((f.name, _FieldRef(self, name, f.name), required(f)) for f in r.fields))

    def entity_fields(self, name: str) -> dict[str, Ty]:
        got = self._fields.get(name)
        if got is None:
            e = self.entities.get(name)
            got = {} if e is None else {f.name: self.resolve(f.type, "field") for f in reversed(e.fields)}
            self._fields[name] = got
        return got

    def record_fields(self, name: str) -> dict[str, Ty]:
        key = "record:" + name
        got = self._fields.get(key)
        if got is None:
            r = self.records.get(name)
            got = {} if r is None else {f.name: self.resolve(f.type, "field") for f in reversed(r.fields)}
            self._fields[key] = got
        return got

    def fields(self, t: Ty) -> dict[str, Ty] | None:
        t = strip_opt(t)
        if isinstance(t, EntRec):
            return self.entity_fields(t.entity)
        if isinstance(t, RecT):
            if t.name and t.name in self.records:
                return self.record_fields(t.name)
            return {n: deref(ft) for n, ft, _ in t.fields}
        return None

    def tool_result(self, tool: A.ToolDecl) -> Ty:
        return self.resolve(tool.returns, "value")

    def param_type(self, p: A.ParamDecl) -> Ty:
        return self.resolve(p.type, "value")

    def writes_state(self, tool: A.ToolDecl) -> bool:
        got = self._writes.get(id(tool))  # asked once per call node of every blueprint: walk the body once
        if got is None:
            if "conservative" in tool.annotations:
                got = False  # log-only: its ActionLog record is no state the reward compares (log_entities)
            elif tool.python is not None or tool.body is None:
                got = not any(a in ("read", "search") for a in tool.annotations)
            else:
                got = has_write(tool.body)
            self._writes[id(tool)] = got
        return got


class _FieldRef:
    """Lazy field type inside a named record (records may nest/recurse)."""

    __slots__ = ("et", "rec", "name")

    def __init__(self, et, rec, name):
        self.et, self.rec, self.name = et, rec, name

    def get(self) -> Ty:
        return self.et.record_fields(self.rec).get(self.name, UNKNOWN)

    def __eq__(self, other) -> bool:  # the same field of the same record: `Line` equals `Line`
        return isinstance(other, _FieldRef) and (self.et, self.rec, self.name) == (other.et, other.rec, other.name)

    def __hash__(self) -> int:
        return hash((self.rec, self.name))


def deref(t) -> Ty:
    return t.get() if isinstance(t, _FieldRef) else t


def required(f: A.FieldDecl) -> bool:
    """Must a value give this field (or parameter)? No default and not optional."""
    return f.default is None and not isinstance(f.type, A.OptionalType)



def log_entities(env: A.EnvDecl, et: "EnvTypes") -> frozenset[str]:
    """Entities only `@conservative` tools write (the synthesizer's `ActionLog`): the record of
    calls no rule could model. A log is not state the reward compares (envrt leaves it out of the
    state hash, lower out of the gold diff): else an agent scores only by repeating a log call
    with exactly the gold's arguments. An entity any other tool writes is state; an escape-hatch
    tool that writes could write anything, so then nothing is a log."""
    logged: set[str] = set()
    other: set[str] = set()
    for t in env.tools:
        cons = "conservative" in t.annotations
        if t.python is not None:
            if not cons and et.writes_state(t):
                return frozenset()
            continue
        for s in _walk(t.body or ()):
            if isinstance(s, A.Insert):
                ents = {s.entity}
            elif isinstance(s, WRITE_STMTS):
                ents = _written(et, s.target)
            else:
                continue
            (logged if cons else other).update(ents)
    if "*" in other:  # a write whose record type the checker could not tell
        return frozenset()
    return frozenset(logged - other - {"*"})


def _walk(stmts):
    for s in stmts:
        yield s
        if isinstance(s, A.For):
            yield from _walk(s.body)
        elif isinstance(s, A.If):
            yield from _walk(s.then)
            yield from _walk(s.orelse)


def _written(et: "EnvTypes", target) -> set[str]:
    """The entity whose record a set/delete/append/remove target lies in ({} for a global)."""
    node = target
    while True:
        t = strip_opt(et.types.get(id(node), UNKNOWN))
        if isinstance(t, EntRec):
            return {t.entity}
        if isinstance(node, (A.Attr, A.Index)):
            node = node.obj
            continue
        return {"*"} if is_loose(t) else set()  # a global (`state.x`) or a local value: no entity


def has_write(stmts) -> bool:
    for s in stmts:
        if isinstance(s, WRITE_STMTS):
            return True
        if isinstance(s, A.For) and has_write(s.body):
            return True
        if isinstance(s, A.If) and (has_write(s.then) or has_write(s.orelse)):
            return True
    return False


# --------------------------------------------------------------------------- type relations


def fits(src: Ty, dst: Ty, et: EnvTypes | None = None) -> bool:
    """May a value of type `src` be used where `dst` is expected?"""
    if src == dst or is_loose(src) or is_loose(dst):
        return True
    if isinstance(dst, OptT):
        return src == NULL or fits(strip_opt(src), dst.inner, et)
    if isinstance(src, OptT):
        return fits(src.inner, dst, et)  # null-ness is checked at run time
    if src == NULL:
        return isinstance(dst, EnumT) and None in dst.values
    if isinstance(dst, RefT):
        if isinstance(src, RefT):
            return src.entity == dst.entity
        return fits(src, dst.key, et)
    if isinstance(src, RefT):
        return fits(src.key, dst, et)
    if isinstance(dst, Prim):
        if isinstance(src, EnumT):
            return fits(enum_base(src.values), dst, et)
        return src == INT and dst == FLOAT
    if isinstance(dst, EnumT):
        if isinstance(src, EnumT):
            return set(src.values) <= set(dst.values)
        return fits(src, enum_base(dst.values), et)  # checked against the enum at run time
    if isinstance(dst, ListT):
        if isinstance(src, EntSet):
            return fits(EntRec(src.entity), dst.item, et)
        return isinstance(src, ListT) and fits(src.item, dst.item, et)
    if isinstance(dst, EntRec):
        return isinstance(src, EntRec) and src.entity == dst.entity
    if isinstance(dst, RecT):
        if isinstance(src, RecT) and src.name and src.name == dst.name:
            return True
        if et is None:
            return isinstance(src, RecT)
        sf, df = et.fields(src), et.fields(dst)
        if sf is None or df is None:
            return False
        req = {n for n, _, r in dst.fields if r}
        return all(n in df and fits(t, df[n], et) for n, t in sf.items()) and req <= set(sf)
    return False


def comparable(a: Ty, b: Ty) -> bool:
    if is_number(a) and is_number(b):
        return True
    a0, b0 = strip_opt(a), strip_opt(b)
    if a0 == NULL or b0 == NULL:
        return True
    return fits(a, b) or fits(b, a)


def const_value(e):
    """(known, value) for constant conditions such as `false`, `not true`, `1 == 2`."""
    if isinstance(e, A.Literal):
        return True, e.value
    if isinstance(e, A.Unary) and e.op == "not":
        k, v = const_value(e.operand)
        return (k, not v) if k else (False, None)
    if isinstance(e, A.Binary):
        if e.op in ("and", "or"):
            kl, vl = const_value(e.left)
            kr, vr = const_value(e.right)
            if e.op == "and" and ((kl and not vl) or (kr and not vr)):
                return True, False
            if e.op == "or" and ((kl and vl) or (kr and vr)):
                return True, True
            if kl and kr:
                return True, (vl and vr) if e.op == "and" else (vl or vr)
            return False, None
        if e.op in ("==", "!="):
            kl, vl = const_value(e.left)
            kr, vr = const_value(e.right)
            if kl and kr and type(vl) is type(vr):
                return True, (vl == vr) == (e.op == "==")
    return False, None


# --------------------------------------------------------------------------- expressions


class Checker:
    """Expression typing shared by tool bodies and blueprints; `mode` is "tool" or "blueprint"."""

    def __init__(self, et: EnvTypes | None, diags: list[Diagnostic], mode: str) -> None:
        self.et = et
        self.diags = diags
        self.mode = mode
        self.later_nodes: set[str] = set()  # blueprint: names of nodes defined later (edges checked elsewhere)
        self.facts: dict[str, Ty] = {}
        self.types: dict[int, Ty] = et.types if et is not None else {}  # every typed expression, by id

    def err(self, code, msg, node, help="") -> None:
        self.diags.append(error(code, msg, getattr(node, "span", None), help))

    def warn(self, code, msg, node, help="") -> None:
        self.diags.append(warning(code, msg, getattr(node, "span", None), help))

    # ---- helpers

    def expect(self, e, scope, dst: Ty, what: str, code=C.TYPE_MISMATCH) -> Ty:
        t = self.ty(e, scope)
        if not self.enum_literal(e, dst) and not fits(t, dst, self.et):
            self.err(code, f"{what}: expected {dst}, found {t}", e, self.mismatch_help(t, dst))
        return t

    def mismatch_help(self, t: Ty, dst: Ty) -> str:
        if isinstance(strip_opt(t), EntRec) and isinstance(strip_opt(dst), (RefT, Prim)):
            e = strip_opt(t).entity
            key = self.et.entities[e].key if self.et and e in self.et.entities else "key"
            return f"pass the record's key: `.{key}`"
        if is_number(t) and strip_opt(dst) == STR:
            return "convert with str(...)"
        if is_stringy(t) and is_number(dst):
            return "convert with int(...) or float(...)"
        return ""

    def enum_literal(self, e, dst: Ty) -> bool:
        """Report a literal that is not in the enum `dst`; True when it handled the check."""
        d = strip_opt(dst)
        if isinstance(d, ListT) and isinstance(e, A.ListLit):
            for item in e.items:
                self.enum_literal(item, d.item)
            return False
        if not isinstance(d, EnumT) or not isinstance(e, A.Literal) or e.value is None:
            return False
        if e.value not in d.values or type(e.value) not in {type(v) for v in d.values}:
            self.err(C.ENUM_VALUE, f"{e.value!r} is not a value of {d}", e,
                     did_you_mean(str(e.value), [str(v) for v in d.values]) or f"one of {', '.join(map(repr, d.values))}")
        return True

    def bool_cond(self, e, scope, what: str) -> None:
        t = self.ty(e, scope)
        if not (strip_opt(t) == BOOL or is_loose(t)):
            self.err(C.TYPE_MISMATCH, f"{what} must be a bool, found {t}", e)

    def fields_of(self, t: Ty):
        if self.et is None:
            t = strip_opt(t)
            return {n: deref(ft) for n, ft, _ in t.fields} if isinstance(t, RecT) else None
        return self.et.fields(t)

    # ---- typing

    def ty(self, e, scope: dict) -> Ty:
        """The type of expression `e`, also recorded in the typed AST (`types`, by id)."""
        f = _TY_RULES.get(type(e))
        if f is None:
            f = _TY_RULES[type(e)] = getattr(Checker, "_" + type(e).__name__, None) or _untyped
        t = f(self, e, scope)
        self.types[id(e)] = t
        return t

    def _Literal(self, e, scope):
        v = e.value
        if v is None:
            return NULL
        if isinstance(v, bool):
            return BOOL
        if isinstance(v, int):
            return INT
        if isinstance(v, float):
            return FLOAT
        if isinstance(v, str):
            return STR
        return ANY

    def _Name(self, e, scope):
        t = scope.get(e.id)
        if t is not None:
            return t
        if self.mode == "tool" and self.et is not None:
            if e.id in self.et.entities:
                return EntSet(e.id)
            if e.id == "state":
                return self.et.state
            cands = list(scope) + list(self.et.entities) + ["state"]
            self.err(C.UNKNOWN_NAME, f"unknown name '{e.id}'", e, did_you_mean(e.id, cands))
            return UNKNOWN
        if self.mode == "blueprint":
            if e.id in self.later_nodes:
                return UNKNOWN  # reported by the edge pass
            self.err(C.UNKNOWN_NODE, f"no node named '{e.id}' before this point", e,
                     did_you_mean(e.id, list(scope)) or "nodes are defined with `call x = ...` or `reason x = ...`")
            return UNKNOWN
        self.err(C.UNKNOWN_NAME, f"unknown name '{e.id}'", e, did_you_mean(e.id, list(scope)))
        return UNKNOWN

    def _Attr(self, e, scope):
        if self.mode == "blueprint" and isinstance(e.obj, A.Name) and e.obj.id == "user" and "user" not in scope:
            t = self.facts.get(e.name)
            if t is None:
                self.err(C.UNKNOWN_FACT, f"the user block has no fact '{e.name}'", e,
                         did_you_mean(e.name, self.facts) or f"add `knows {e.name} = ...` to the user block")
                return UNKNOWN
            return t
        base = self.ty(e.obj, scope)
        b = strip_opt(base)
        if is_loose(b):
            return UNKNOWN
        if isinstance(b, RefT):
            self.err(C.REFERENCE_FIELD, f"this value is a key of {b.entity}, not the record; it has no field '{e.name}'",
                     e, f"look the record up: `{b.entity}[{_short(e.obj)}].{e.name}`")
            return UNKNOWN
        fields = self.fields_of(b)
        if fields is None:
            help = "use map(xs, it.field) to get a field of every element" if elem(b) is not None else ""
            self.err(C.TYPE_MISMATCH, f"{base} has no fields (accessing '{e.name}')", e, help)
            return UNKNOWN
        t = fields.get(e.name)
        if t is None:
            self.err(C.UNKNOWN_FIELD, f"{b} has no field '{e.name}'", e,
                     did_you_mean(e.name, fields) or f"fields: {', '.join(sorted(fields))}")
            return UNKNOWN
        return deref(t)

    def _Index(self, e, scope):
        base = self.ty(e.obj, scope)
        b = strip_opt(base)
        if isinstance(b, EntSet):
            kt = self.et.key_type(b.entity) if self.et else UNKNOWN
            self.expect_key(e.index, scope, b.entity, kt)
            return EntRec(b.entity)
        it = self.ty(e.index, scope)
        if isinstance(b, ListT):
            if not (strip_opt(it) == INT or is_loose(it)):
                self.err(C.TYPE_MISMATCH, f"list index must be an int, found {it}", e.index)
            return b.item
        if is_loose(b):
            return UNKNOWN
        self.err(C.TYPE_MISMATCH, f"{base} cannot be indexed", e)
        return UNKNOWN

    def expect_key(self, e, scope, entity: str, kt: Ty) -> None:
        t = self.ty(e, scope)
        t0 = strip_opt(t)
        if isinstance(t0, EntRec) and t0.entity == entity:
            return
        if not fits(t, kt, self.et):
            self.err(C.TYPE_MISMATCH, f"key of {entity} must be {kt}, found {t}", e, self.mismatch_help(t, kt))

    def _Unary(self, e, scope):
        t = self.ty(e.operand, scope)
        if e.op == "not":
            if not (strip_opt(t) == BOOL or is_loose(t)):
                self.err(C.TYPE_MISMATCH, f"`not` needs a bool, found {t}", e.operand)
            return BOOL
        if not is_number(t):
            self.err(C.TYPE_MISMATCH, f"unary `-` needs a number, found {t}", e.operand)
            return UNKNOWN
        return strip_opt(t) if strip_opt(t) in (INT, FLOAT) else UNKNOWN

    def _Binary(self, e, scope):
        op = e.op
        lt, rt = self.ty(e.left, scope), self.ty(e.right, scope)
        if op in ("and", "or"):
            for side, t in ((e.left, lt), (e.right, rt)):
                if not (strip_opt(t) == BOOL or is_loose(t)):
                    self.err(C.TYPE_MISMATCH, f"`{op}` needs bools, found {t}", side)
            return BOOL if strip_opt(lt) == strip_opt(rt) == BOOL else UNKNOWN  # Python's and/or returns a side
        if op in ("==", "!="):
            if not (self.enum_literal(e.right, lt) or self.enum_literal(e.left, rt)) and not comparable(lt, rt):
                self.err(C.TYPE_MISMATCH, f"comparing {lt} with {rt} is always {'false' if op == '==' else 'true'}", e,
                         self.mismatch_help(lt, rt) or self.mismatch_help(rt, lt))
            return BOOL
        rule = OPERATORS[op].rule if op in OPERATORS else None
        if rule is not None:  # ordering and arithmetic: the registry's rule (forgec/lang/builtins.py)
            r = rule(lt, rt)
            if isinstance(r, str):
                self.err(C.TYPE_MISMATCH, r, e)
                return OPERATORS[op].error_type
            return r
        if op in ("in", "not in"):
            r = strip_opt(rt)
            if isinstance(r, EntSet):
                kt = self.et.key_type(r.entity) if self.et else UNKNOWN
                if not (fits(lt, kt, self.et) or (isinstance(strip_opt(lt), EntRec))):
                    self.err(C.TYPE_MISMATCH, f"`{op} {r.entity}` tests a key ({kt}), found {lt}", e.left)
                return BOOL
            if is_stringy(r) and not isinstance(r, EnumT) and not is_loose(r):
                if not is_stringy(lt):
                    self.err(C.TYPE_MISMATCH, f"substring test needs a str, found {lt}", e.left)
                return BOOL
            it = elem(r)
            if it is None:
                self.err(C.TYPE_MISMATCH, f"`{op}` needs a list, str or entity on the right, found {rt}", e.right)
                return BOOL
            if not self.enum_literal(e.left, it) and not comparable(lt, it):
                self.err(C.TYPE_MISMATCH, f"a {lt} is never in a list of {it}", e)
            return BOOL
        self.err(C.TYPE_MISMATCH, f"unknown operator {op!r}", e)
        return UNKNOWN

    def _ListLit(self, e, scope):
        t = UNKNOWN
        for x in e.items:
            t = join(t, self.ty(x, scope))
        return ListT(t)

    def _RecordLit(self, e, scope):
        seen = set()
        fields = []
        for f in e.fields:
            if f.name in seen:
                self.err(C.DUPLICATE, f"field '{f.name}' given twice", f)
            seen.add(f.name)
            fields.append((f.name, self.ty(f.value, scope), True))
        return RecT("", tuple(fields))

    def _Where(self, e, scope):
        st = self.ty(e.source, scope)
        it = elem(st)
        if it is None:
            self.err(C.TYPE_MISMATCH, f"`where` filters a list or an entity, found {st}", e.source)
            it = UNKNOWN
        self.bool_cond(e.pred, {**scope, "it": it}, "a `where` condition")
        return ListT(it)

    def _Call(self, e, scope):
        b = BUILTINS.get(e.func)
        if b is None:
            self.err(C.UNKNOWN_FUNCTION, f"unknown function '{e.func}'", e,
                     did_you_mean(e.func, BUILTINS) or "builtins: " + ", ".join(sorted(BUILTINS)))
            for a in e.args:
                self.ty(a, scope)
            return UNKNOWN
        n = len(e.args)
        if not b.min_args <= n <= b.max_args:
            want = str(b.min_args) if b.min_args == b.max_args else f"{b.min_args} to {b.max_args}"
            self.err(C.ARITY, f"{e.func} takes {want} argument(s), got {n}", e)
        for k in e.kwargs:
            if k.name not in b.kwargs:
                self.err(C.UNKNOWN_ARG, f"{e.func} has no keyword '{k.name}'", k,
                         did_you_mean(k.name, b.kwargs) or ("" if b.kwargs else f"{e.func} takes no keywords"))
            else:
                self.bool_cond(k.value, scope, f"{e.func}'s `{k.name}`")
        if e.func in ("fresh_id", "keys") and e.args:
            a0 = e.args[0]
            if self.mode == "tool" and isinstance(a0, A.Name) and self.et is not None and a0.id not in scope:
                if a0.id not in self.et.entities:
                    self.err(C.UNKNOWN_ENTITY, f"unknown entity '{a0.id}'", a0, did_you_mean(a0.id, self.et.entities))
                    return UNKNOWN
                kt = self.et.key_type(a0.id)
                return kt if e.func == "fresh_id" else ListT(kt)
        types = []
        for i, a in enumerate(e.args):
            if i == b.lambda_arg and types:
                it = elem(types[0])
                if it is not None and not (e.func in ("min", "max") and is_loose(types[0])):
                    types.append(self.ty(a, {**scope, "it": it}))
                    continue
            types.append(self.ty(a, scope))
        if len(types) < b.min_args:
            return UNKNOWN
        r = b.rule(types[: b.max_args])
        if isinstance(r, str):
            self.err(C.TYPE_MISMATCH, r, e)
            return UNKNOWN
        return r


_TY_RULES: dict = {}  # expression class -> Checker._<Class> (looked up once per class)


def _untyped(ck, e, scope) -> Ty:
    return UNKNOWN


def _short(e) -> str:

    return expr(e)


# --------------------------------------------------------------------------- tool bodies


def check_tool(et: EnvTypes, tool: A.ToolDecl, diags: list[Diagnostic]) -> None:
    ck = Checker(et, diags, "tool")
    scope: dict[str, Ty] = {}
    for p in tool.params:
        scope.setdefault(p.name, et.param_type(p))
    ret = et.tool_result(tool)
    for p in tool.params:
        if p.default is not None:
            ck.expect(p.default, {}, et.param_type(p), f"default of parameter '{p.name}'")
    if tool.body is None:
        return
    _block(ck, tool.body, scope, ret)


def _block(ck: Checker, stmts, scope: dict, ret: Ty) -> bool:
    """Check statements; True when the block always ends (return / failing require)."""
    done = False
    for s in stmts:
        if done:
            if done != "fails":  # after an always-failing require the error says enough
                ck.warn(C.UNREACHABLE, "this statement is never executed", s,
                        "it follows a `return` on every path")
            return True
        done = _stmt(ck, s, scope, ret)
    return bool(done)


def _stmt(ck: Checker, s, scope: dict, ret: Ty) -> bool:
    et = ck.et
    t = type(s)
    if t is A.Require:
        ck.bool_cond(s.cond, scope, "a `require` condition")
        known, v = const_value(s.cond)
        if known and not v:
            ck.err(C.ALWAYS_FAILS, f"this require always fails: \"{s.message}\"", s,
                   "a tool that can never succeed cannot be part of a task; fix the condition")
            return "fails"
        return False
    if t is A.Let:
        _rebind(scope, s.name, ck.ty(s.value, scope))
        return False
    if t is A.Return:
        ck.expect(s.value, scope, ret, "returned value", C.RETURN_TYPE)
        return True
    if t is A.Insert:
        _insert(ck, s, scope)
        return False
    if t is A.Set:
        _set(ck, s, scope)
        return False
    if t is A.Delete:
        tt = ck.ty(s.target, scope)
        if not (isinstance(strip_opt(tt), EntRec) or is_loose(tt)):
            ck.err(C.BAD_TARGET, f"`delete` removes an entity record, found {tt}", s.target,
                   "look the record up first: `delete Entity[key]`")
        return False
    if t in (A.Append, A.Remove):
        tt = ck.ty(s.target, scope)
        if not isinstance(s.target, (A.Attr, A.Index)):
            ck.err(C.BAD_TARGET, f"`{'append' if t is A.Append else 'remove'}` changes a list field (`x.items`)", s.target)
        it = elem(tt) if not isinstance(strip_opt(tt), EntSet) else None
        if it is None:
            if not is_loose(tt):
                ck.err(C.BAD_TARGET, f"target is not a list field, found {tt}", s.target)
            ck.ty(s.value, scope)
        else:
            ck.expect(s.value, scope, it, "list element")
        return False
    if t is A.For:
        it = ck.ty(s.iter, scope)
        el = elem(it)
        if el is None:
            ck.err(C.TYPE_MISMATCH, f"`for` iterates over a list or entity, found {it}", s.iter)
            el = UNKNOWN
        _rebind(scope, s.var, el)  # names are function scoped (as in the generated Python)
        _block(ck, s.body, scope, ret)
        return False
    if t is A.If:
        ck.bool_cond(s.cond, scope, "an `if` condition")
        a = _block(ck, s.then, scope, ret)
        b = _block(ck, s.orelse, scope, ret) if s.orelse else False
        return a and b
    return False


def _rebind(scope: dict, name: str, t: Ty) -> None:
    """Bind a local. A name bound again to another type has either type from then on (a loop may
    run the second binding or not): UNKNOWN, unless one side is unknown. Codegen picks its fast
    code from these types, so they must hold on every path."""
    old = scope.get(name)
    if old is not None and old != t:
        t = old if t == UNKNOWN else t if old == UNKNOWN else UNKNOWN
    scope[name] = t


def _insert(ck: Checker, s: A.Insert, scope: dict) -> None:
    et = ck.et
    ent = et.entities.get(s.entity)
    if ent is None:
        ck.err(C.UNKNOWN_ENTITY, f"unknown entity '{s.entity}'", s, did_you_mean(s.entity, et.entities))
        for f in s.fields:
            ck.ty(f.value, scope)
    else:
        fields = et.entity_fields(s.entity)
        seen = set()
        for f in s.fields:
            if f.name in seen:
                ck.err(C.DUPLICATE, f"field '{f.name}' given twice", f)
            seen.add(f.name)
            ft = fields.get(f.name)
            if ft is None:
                ck.err(C.UNKNOWN_FIELD, f"{s.entity} has no field '{f.name}'", f, did_you_mean(f.name, fields))
                ck.ty(f.value, scope)
                continue
            ck.expect(f.value, scope, ft, f"field '{f.name}' of {s.entity}")
        # an omitted key gets fresh_id(E); other omitted required fields get a zero value
        missing = [fd.name for fd in ent.fields if required(fd) and fd.name not in seen and fd.name != ent.key]
        if missing:
            ck.warn(C.MISSING_FIELD, f"insert {s.entity} leaves out {', '.join(missing)}: they get zero values", s,
                    "give every field that has no default (the key may be omitted: it gets fresh_id)")
    if s.bind:
        _rebind(scope, s.bind, EntRec(s.entity))


def _set(ck: Checker, s: A.Set, scope: dict) -> None:
    target = s.target
    if isinstance(target, A.Attr):
        base = ck.ty(target.obj, scope)
        b = strip_opt(base)
        if isinstance(b, EntRec) and ck.et.entities.get(b.entity) and ck.et.entities[b.entity].key == target.name:
            ck.err(C.SET_KEY, f"'{target.name}' is the key of {b.entity} and cannot be changed", target,
                   f"insert a new {b.entity} (and delete the old one) instead")
            ck.ty(s.value, scope)
            return
        ft = ck.ty(target, scope)
        ck.expect(s.value, scope, ft, f"value for '{target.name}'")
        return
    if isinstance(target, A.Index):
        ft = ck.ty(target, scope)
        ck.expect(s.value, scope, ft, "value for the list element")
        return
    ck.err(C.BAD_TARGET, "`set` assigns a field (`x.f = ...`) or a list element (`x.items[0] = ...`)", target,
           "use `let` for a local variable")
    ck.ty(s.value, scope)


# --------------------------------------------------------------------------- declarations


def check_env(env: A.EnvDecl, diags: list[Diagnostic]) -> EnvTypes:
    et = EnvTypes(env)
    err = lambda code, msg, node, help="": diags.append(error(code, msg, getattr(node, "span", None), help))  # noqa: E731

    def dup(items, what):
        seen: dict[str, object] = {}
        for it in items:
            if it.name in seen:
                err(C.DUPLICATE, f"{what} '{it.name}' is declared twice", it,
                    f"first declared at line {seen[it.name].span.line}" if getattr(seen[it.name], "span", None) and seen[it.name].span.line else "")
            else:
                seen[it.name] = it

    dup(list(env.entities) + list(env.records), "type")
    dup(env.tools, "tool")

    def check_type(t, ctx: str) -> None:
        if isinstance(t, A.NamedType):
            if t.name not in et.entities and t.name not in et.records and t.name not in PRIMS:
                err(C.UNKNOWN_TYPE, f"unknown type '{t.name}' ({ctx})", t,
                    did_you_mean(t.name, list(et.entities) + list(et.records) + list(PRIMS))
                    or "declare it with `entity` or `record`")
        elif isinstance(t, A.EnumType):
            vals = t.values
            if not vals:
                err(C.BAD_ENUM, "an enum needs at least one value", t)
            elif len(set(map(repr, vals))) != len(vals):
                err(C.BAD_ENUM, "enum values repeat", t)
            elif len({type(v) for v in vals} - {int, float, type(None)}) + (
                    1 if any(type(v) in (int, float) for v in vals) else 0) > 1:
                err(C.BAD_ENUM, "enum values mix types", t)
        elif isinstance(t, A.ListType):
            check_type(t.item, ctx)
        elif isinstance(t, A.OptionalType):
            check_type(t.inner, ctx)
        elif isinstance(t, A.RecordType):
            dup(t.fields, "field")
            for f in t.fields:
                check_type(f.type, ctx)

    def check_fields(fields, owner: str) -> None:
        dup(fields, "field")
        ck = Checker(et, diags, "tool")
        for f in fields:
            check_type(f.type, f"field '{f.name}' of {owner}")
            if f.default is not None:
                ck.expect(f.default, {}, et.resolve(f.type, "field"), f"default of '{f.name}'")

    if env.state is not None:
        check_fields(env.state.fields, "state")
    for r in env.records:
        check_fields(r.fields, r.name)
    for e in env.entities:
        check_fields(e.fields, e.name)
        kf = next((f for f in e.fields if f.name == e.key), None)
        if kf is None:
            err(C.KEY_FIELD, f"key '{e.key}' of {e.name} is not one of its fields", e,
                did_you_mean(e.key, [f.name for f in e.fields]) or f"add `{e.key}: str`")
        elif not (isinstance(kf.type, A.PrimType) and kf.type.name in ("str", "int")):
            err(C.KEY_FIELD, f"key '{e.key}' of {e.name} must be a required str or int field", kf)
    for t in env.tools:
        dup(t.params, "parameter")
        for a in t.annotations:
            if a.startswith("wire(") and A.tool_wire_name(t) != t.name:
                continue  # @wire("find-projects"): the docs' name the tool is served by
            if a.startswith("case(") and A.tool_case(t) is not None:
                continue  # @case("operation=create"): one act of the tool served by its @wire name
            if a not in ANNOTATIONS:
                diags.append(warning(C.UNKNOWN_ANNOTATION, f"unknown annotation '@{a}'", t.span,
                                     did_you_mean(a, ANNOTATIONS) or "known: " + " ".join("@" + x for x in ANNOTATIONS)))
        for p in t.params:
            check_type(p.type, f"parameter '{p.name}' of {t.name}")
        check_type(t.returns, f"result of {t.name}")
        check_tool(et, t, diags)
    _check_served_names(env, diags)
    return et


def _check_served_names(env: A.EnvDecl, diags: list) -> None:
    """Tools that share a served name are the acts of one docs' tool: each has a `@case` on the same selector, with
    a value of its own, and none takes the selector as a parameter (the call's selector picks the tool)."""
    by_wire: dict[str, list] = {}
    for t in env.tools:
        by_wire.setdefault(A.tool_wire_name(t), []).append(t)
    for wire, ts in by_wire.items():
        cases = [A.tool_case(t) for t in ts]
        if all(c is None for c in cases) and len({t.name for t in ts}) == 1:
            continue  # one tool, or one name twice (`duplicate-name`)
        params = {c[0] for c in cases if c is not None}
        for t, c in zip(ts, cases):
            if c is None:
                diags.append(error(C.SERVED_NAME, f"tool '{t.name}' is served as '{wire}', which {len(ts) - 1} other tool(s) are served as too, and has no @case", t.span,
                                   f'add `@case("{next(iter(params), "action")}=<value>")` naming the act it is, or give it a `@wire` of its own'))
            elif len(params) > 1:
                diags.append(error(C.SERVED_NAME, f"the tools served as '{wire}' pick their act by different parameters ({', '.join(sorted(params))})", t.span,
                                   "use one selector parameter for all of them"))
            elif [x for x in cases if x == c][1:]:
                diags.append(error(C.SERVED_NAME, f"two tools served as '{wire}' are both its act '{c[0]}={c[1]}'", t.span, "give each a value of its own"))
            elif any(A.wire_name(p.name, {q.name for q in t.params}) == c[0] for p in t.params):
                diags.append(error(C.SERVED_NAME, f"tool '{t.name}' takes '{c[0]}' as a parameter, which is its @case selector", t.span,
                                   "drop the parameter: the selector's value is what picks this tool"))


# --------------------------------------------------------------------------- blueprints


def _names(e, out: list) -> None:
    """Free names of an expression (with their nodes), in source order."""
    t = type(e)
    if t is A.Name:
        out.append(e)
    elif t is A.Attr:
        _names(e.obj, out)
    elif t is A.Index:
        _names(e.obj, out)
        _names(e.index, out)
    elif t is A.Unary:
        _names(e.operand, out)
    elif t is A.Binary:
        _names(e.left, out)
        _names(e.right, out)
    elif t is A.ListLit:
        for x in e.items:
            _names(x, out)
    elif t is A.RecordLit:
        for f in e.fields:
            _names(f.value, out)
    elif t is A.Where:
        _names(e.source, out)
        _names(e.pred, out)
    elif t is A.Call:
        for x in e.args:
            _names(x, out)
        for k in e.kwargs:
            _names(k.value, out)


def node_refs(n, ops=None) -> list:
    """Names a blueprint node reads (its inference edges), skipping `by: field` keywords."""
    out: list = []
    if isinstance(n, A.CallNode):
        for a in n.args:
            _names(a.value, out)
    elif isinstance(n, A.ReasonNode):
        if ops is None:
            from forgec.stdlib.ops import OPS as ops
        spec = ops.get(n.op)
        for a in n.args:
            _names(a, out)
        for k in n.kwargs:
            ks = spec.kw(k.name) if spec else None
            if ks is not None and ks.kind == "field" and isinstance(k.value, A.Name):
                continue
            _names(k.value, out)
    elif isinstance(n, A.ExpectNode):
        _names(n.cond, out)
    elif isinstance(n, A.TellNode):
        _names(n.value, out)
    return [x for x in out if x.id not in ("it", "user")]


def node_reads(n, defined) -> tuple[str, ...]:
    """The inference edges of blueprint node `n`: the distinct names in `defined` (the nodes
    before it) that it reads, in source order. The one definition every pass counts with."""
    return tuple(dict.fromkeys(r.id for r in node_refs(n) if r.id in defined))


def blueprint_edges(bp: A.BlueprintDecl, refs: list | None = None) -> list[tuple[str, ...]]:
    """`node_reads` of every node of `bp` (index-aligned with `bp.nodes`); no env needed.
    `refs`: the nodes' `node_refs`, when the caller has them already (the checker)."""
    defined: set[str] = set()
    out = []
    for i, n in enumerate(bp.nodes):
        reads: list[str] = []
        for r in (node_refs(n) if refs is None else refs[i]):
            if r.id in defined and r.id not in reads:
                reads.append(r.id)
        out.append(tuple(reads))
        name = getattr(n, "name", None)
        if name is not None:
            defined.add(name)
    return out


def user_reads(n) -> list[str]:
    """Names of the `user.<fact>` a blueprint node reads (field keywords such as `by:` read none)."""

    if isinstance(n, A.CallNode):
        exprs = [a.value for a in n.args]
    elif isinstance(n, A.ReasonNode):
        spec = OPS.get(n.op)
        exprs = list(n.args) + [k.value for k in n.kwargs
                                if not (spec and spec.kw(k.name) and spec.kw(k.name).kind == "field")]
    else:
        exprs = [n.cond] if isinstance(n, A.ExpectNode) else [n.value] if isinstance(n, A.TellNode) else []
    return [x.name for e in exprs for x in A.walk(e)
            if type(x) is A.Attr and type(x.obj) is A.Name and x.obj.id == "user"]


def _is_literal(e) -> bool:
    if isinstance(e, A.Literal):
        return True
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.Literal):
        return True
    if isinstance(e, A.ListLit):
        return all(_is_literal(x) for x in e.items)
    if isinstance(e, A.RecordLit):
        return all(_is_literal(f.value) for f in e.fields)
    return False


def check_blueprint(bp: A.BlueprintDecl, et: EnvTypes | None, env_names, diags: list[Diagnostic]) -> None:

    err = lambda code, msg, node, help="": diags.append(error(code, msg, getattr(node, "span", None), help))  # noqa: E731
    if et is None:
        err(C.UNKNOWN_ENV, f"blueprint '{bp.name}' is for env '{bp.env}', which no loaded file declares", bp,
            did_you_mean(bp.env, env_names) or f'import the file that declares `env {bp.env}`: import "path/env.forge"')
        return
    ck = Checker(et, diags, "blueprint")
    # user facts
    seen_f: set[str] = set()
    for f in bp.user.facts:
        if f.name in seen_f:
            err(C.DUPLICATE, f"fact '{f.name}' is declared twice", f)
        seen_f.add(f.name)
        if not _is_literal(f.value):
            err(C.FACT_LITERAL, f"fact '{f.name}' must be a literal", f.value,
                "facts are what the user knows up front: strings, numbers, lists/records of them")
            ck.facts[f.name] = UNKNOWN
        else:
            ck.facts[f.name] = ck.ty(f.value, {})
    _check_scenario(bp.user, seen_f, err, diags)
    # names, duplicates, edges
    index: dict[str, int] = {}
    for i, n in enumerate(bp.nodes):
        name = getattr(n, "name", None)
        if name is None:
            continue
        if name in index:
            err(C.DUPLICATE, f"node '{name}' is defined twice", n, f"first defined by node {index[name] + 1}")
        else:
            index[name] = i
    refs = [node_refs(n, OPS) for n in bp.nodes]
    for n, reads in zip(bp.nodes, _edges(bp, index, refs, diags)):
        et.edges[id(n)] = reads
    used: set[str] = {r.id for rs in refs for r in rs}
    scope: dict[str, Ty] = {}
    writes = tells = False
    ck.later_nodes = set(index)  # names defined at or after the current node
    for i, n in enumerate(bp.nodes):
        if i:
            prev = getattr(bp.nodes[i - 1], "name", None)
            if prev is not None and index.get(prev) == i - 1:
                ck.later_nodes.discard(prev)
        if isinstance(n, A.CallNode):
            tool = et.tools.get(n.tool)
            res = _call_node(ck, n, tool, scope)
            if tool is None or et.writes_state(tool):
                writes = True  # (an unknown tool is reported already; do not guess its effect)
            elif tool is not None and n.name not in used:
                diags.append(warning(C.UNUSED_NODE, f"the result of read-only call '{n.name}' is never used", n.span,
                                     "use it in a later argument, `expect` or `tell`, or remove the call"))
            scope.setdefault(n.name, res)
        elif isinstance(n, A.ReasonNode):
            res = _reason_node(ck, n, scope, OPS)
            if n.name not in used:
                diags.append(warning(C.UNUSED_NODE, f"reasoning node '{n.name}' is never used", n.span,
                                     "use it in a later argument, `expect` or `tell`, or remove it"))
            scope.setdefault(n.name, res)
        elif isinstance(n, A.ExpectNode):
            ck.bool_cond(n.cond, scope, "an `expect` condition")
            known, v = const_value(n.cond)
            if known and not v:
                err(C.ALWAYS_FAILS, "this expectation is always false", n)
        elif isinstance(n, A.TellNode):
            tells = True
            ck.ty(n.value, scope)
    if not writes and not tells and bp.nodes is not None:
        diags.append(warning(C.NO_EFFECT, f"blueprint '{bp.name}' changes no state and tells the user nothing", bp.span,
                             "add a call to a state-changing tool, or `tell` the answer the user asked for"))


def _words(s: str) -> str:
    """`order_id`, `Order ID`, `order-id` -> `order id`: how a fact name and an unknown compare."""
    return " ".join(re.split(r"[\s_\-]+", s.strip().lower()))


def _check_scenario(u: A.UserBlock, facts: set[str], err, diags: list[Diagnostic]) -> None:
    """The scenario clauses: a reason said in words, each unknown and intent said once and
    non-empty, no unknown that is also a `knows` fact, at most three intents."""
    if u.reason and not u.reason.strip():
        err(C.USER_CLAUSE, "the reason is blank", A.Said("", getattr(u.reason, "span", None) or u.span),
            'say why the user calls: `reason "the kettle arrived broken"`')
    known = {_words(f): f for f in facts}
    seen: set[str] = set()
    for x in u.unknown:
        at = A.Said("", getattr(x, "span", None) or u.span)  # a node-like holder of the span
        w = _words(x)
        if not w:
            err(C.USER_CLAUSE, "an `unknown` is empty", at, 'say what the user does not know: `unknown "order id"`')
        elif w in known:
            err(C.UNKNOWN_IS_KNOWN, f"the user does not know '{x}', but `knows {known[w]}` says it does", at,
                f"remove `unknown \"{x}\"` or the `knows {known[w]}` fact")
        elif w in seen:
            err(C.USER_CLAUSE, f"`unknown \"{x}\"` is said twice", at)
        seen.add(w)
    seen = set()
    for it in u.intents:
        w = " ".join(it.text.split()).lower()
        if not w:
            err(C.USER_CLAUSE, "an `intent` is empty", it, 'say what the user wants: `intent "return the kettle"`')
        elif w in seen:
            err(C.USER_CLAUSE, f"intent \"{it.text}\" is said twice", it)
        elif it.condition and not it.condition.strip():
            err(C.USER_CLAUSE, "the intent's condition is blank", it, 'write `if "the refund is more than $50"`, or drop the `if`')
        seen.add(w)
    if len(u.intents) > 3:
        diags.append(warning(C.MANY_INTENTS, f"the user has {len(u.intents)} intents; a person asks for one to three in a call",
                             u.intents[3].span, "split the scenario into two blueprints"))


def _edges(bp, index: dict[str, int], refs: list, diags: list[Diagnostic]) -> list[tuple[str, ...]]:
    """Forward references and cycles in the inference graph; returns each node's inference
    edges (the earlier nodes it reads: `blueprint_edges`, computed from the same refs)."""
    graph: dict[int, set[int]] = {}
    backward_only = True
    edges = []
    for i, rs in enumerate(refs):
        reads: list[str] = []
        for r in rs:
            j = index.get(r.id)
            if j is not None:
                graph.setdefault(i, set()).add(j)
                if j < i:
                    if r.id not in reads:
                        reads.append(r.id)
                else:
                    backward_only = False
        edges.append(tuple(reads))
    if backward_only:
        return edges  # every edge points to an earlier node: no forward reference, no cycle
    # cycles: strongly connected components (iterative Tarjan), sizes > 1 or self loops
    in_cycle: set[int] = set()
    idx: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on: set[int] = set()
    counter = 0
    for root in sorted(graph):
        if root in idx:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        idx[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in idx:
                    idx[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], idx[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == idx[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1 or v in graph.get(v, ()):
                    in_cycle.update(comp)
                    first = min(comp)
                    names = " -> ".join(bp.nodes[k].name for k in sorted(comp)) + " -> " + bp.nodes[first].name
                    diags.append(error(C.CYCLE, f"nodes depend on each other in a cycle: {names}",
                                       bp.nodes[first].span, "an inference edge must point to an earlier node"))
    for i, rs in enumerate(refs):
        if i in in_cycle:
            continue
        for r in rs:
            j = index.get(r.id)
            if j is not None and j >= i:
                diags.append(error(C.FORWARD_REF, f"'{r.id}' is defined later (node {j + 1}), after its use here", r.span,
                                   "move this node after the one it uses"))
    return edges


def _call_node(ck: Checker, n: A.CallNode, tool, scope) -> Ty:
    et = ck.et
    if tool is None:
        ck.err(C.UNKNOWN_TOOL, f"env '{et.env.name}' has no tool '{n.tool}'", n, did_you_mean(n.tool, et.tools))
        for a in n.args:
            ck.ty(a.value, scope)
        return UNKNOWN
    params = {p.name: p for p in tool.params}
    given: set[str] = set()
    for a in n.args:
        if a.name in given:
            ck.err(C.DUP_ARG, f"argument '{a.name}' given twice", a)
        given.add(a.name)
        p = params.get(a.name)
        if p is None:
            ck.err(C.UNKNOWN_ARG, f"tool '{tool.name}' has no parameter '{a.name}'", a,
                   did_you_mean(a.name, params) or f"parameters: {', '.join(params) or '(none)'}")
            ck.ty(a.value, scope)
            continue
        _wire_arg(ck, a.value, p, scope)
    missing = [p.name for p in tool.params if required(p)
               and p.name not in given]
    if missing:
        ck.err(C.MISSING_ARG, f"call to '{tool.name}' is missing {', '.join(missing)}", n)
    return et.tool_result(tool)


def _wire_arg(ck: Checker, e, p: A.ParamDecl, scope) -> None:
    """Entity-typed params take the entity's key or a record of that entity."""
    et = ck.et
    pt = et.param_type(p)
    base = strip_opt(pt)
    if isinstance(base, EntRec):
        t = ck.ty(e, scope)
        t0 = strip_opt(t)
        if (isinstance(t0, EntRec) and t0.entity == base.entity) or (t0 == NULL and isinstance(pt, OptT)):
            return
        kt = et.key_type(base.entity)
        if not fits(t, kt, et):
            ck.err(C.TYPE_MISMATCH, f"argument '{p.name}': expected a {base.entity} key ({kt}) or record, found {t}", e,
                   ck.mismatch_help(t, kt))
        return
    if isinstance(base, ListT) and isinstance(base.item, EntRec):
        pt = ListT(RefT(base.item.entity, et.key_type(base.item.entity)))
        t = ck.ty(e, scope)
        el = elem(t)
        if el is not None and isinstance(strip_opt(el), EntRec) and strip_opt(el).entity == base.item.entity:
            return
        if not fits(t, pt, et):
            ck.err(C.TYPE_MISMATCH, f"argument '{p.name}': expected {pt}, found {t}", e)
        return
    ck.expect(e, scope, pt, f"argument '{p.name}'")


def _reason_node(ck: Checker, n: A.ReasonNode, scope, ops) -> Ty:
    spec = ops.get(n.op)
    if spec is None:
        ck.err(C.UNKNOWN_OP, f"unknown reasoning operator '{n.op}'", n,
               did_you_mean(n.op, ops) or "operators: " + ", ".join(sorted(ops)))
        for a in n.args:
            ck.ty(a, scope)
        return UNKNOWN
    if len(n.args) != spec.positional:
        ck.err(C.ARITY, f"{n.op} takes {spec.positional} positional argument(s), got {len(n.args)}", n)
    types = [ck.ty(a, scope) for a in n.args]
    a0 = types[0] if types else UNKNOWN
    el = elem(a0)
    if spec.positional == 1 and el is None:
        ck.err(C.TYPE_MISMATCH, f"{n.op} expects a list, found {a0}", n.args[0] if n.args else n)
        el = UNKNOWN
    el = el if el is not None else UNKNOWN
    given: dict[str, object] = {}
    by_t: Ty | None = None
    for k in n.kwargs:
        if k.name in given:
            ck.err(C.DUP_ARG, f"keyword '{k.name}' given twice", k)
        given[k.name] = k
        ks = spec.kw(k.name)
        if ks is None:
            ck.err(C.UNKNOWN_ARG, f"{n.op} has no keyword '{k.name}'", k,
                   did_you_mean(k.name, [x.name for x in spec.kwargs]) or
                   (f"keywords: {', '.join(x.name for x in spec.kwargs)}" if spec.kwargs else f"{n.op} takes no keywords"))
            ck.ty(k.value, scope)
            continue
        if ks.kind == "field":
            if not isinstance(k.value, A.Name):
                ck.err(C.FIELD_ARG, f"`{k.name}:` takes a bare field name of the elements", k.value,
                       f"write `{k.name}: {k.value.value}`" if isinstance(k.value, A.Literal) and isinstance(k.value.value, str) else "")
                continue
            if is_loose(el):
                by_t = UNKNOWN
                continue
            fields = ck.fields_of(el)
            if fields is None:
                ck.err(C.FIELD_ARG, f"`{k.name}: {k.value.id}` needs records, but the elements are {el}", k.value)
                by_t = UNKNOWN
                continue
            ft = fields.get(k.value.id)
            if ft is None:
                ck.err(C.UNKNOWN_FIELD, f"{el} has no field '{k.value.id}'", k.value,
                       did_you_mean(k.value.id, fields) or f"fields: {', '.join(sorted(fields))}")
                by_t = UNKNOWN
                continue
            by_t = deref(ft)
        elif ks.kind == "bool":
            ck.bool_cond(k.value, scope, f"`{k.name}:`")
        elif ks.kind == "str":
            t = ck.ty(k.value, scope)
            if not is_stringy(t):
                ck.err(C.TYPE_MISMATCH, f"`{k.name}:` takes a str, found {t}", k.value)
            if n.op == "compare" and isinstance(k.value, A.Literal) and k.value.value not in (
                    "==", "!=", "<", "<=", ">", ">=", "eq", "ne", "lt", "le", "gt", "ge"):
                ck.err(C.TYPE_MISMATCH, f"unknown comparison {k.value.value!r}", k.value, "one of == != < <= > >=")
    for ks in spec.kwargs:
        if ks.required and ks.name not in given:
            ck.err(C.MISSING_ARG, f"{n.op} needs `{ks.name}:`", n)
    cmp_tgt = by_t if by_t is not None else el
    for k in n.kwargs:
        ks = spec.kw(k.name)
        if ks is not None and ks.kind == "value":
            target = el if n.op == "contains" else cmp_tgt
            t = ck.ty(k.value, scope)
            if not ck.enum_literal(k.value, target) and not comparable(t, target):
                ck.err(C.TYPE_MISMATCH, f"`{k.name}:` compares with {target}, found {t}", k.value)
    if n.op == "filter":
        cmps = [k for k in n.kwargs if k.name in ("eq", "ne", "lt", "le", "gt", "ge")]
        if len(cmps) != 1:
            ck.err(C.ARITY, f"filter takes exactly one of eq ne lt le gt ge, got {len(cmps)}", n)
    if n.op == "compare" and len(types) == 2 and not comparable(types[0], types[1]):
        ck.err(C.TYPE_MISMATCH, f"compare needs comparable values, found {types[0]} and {types[1]}", n)
    r = spec.result
    if r == "elem":
        return el
    if r == "list":
        return ListT(el)
    if r == "int":
        return INT
    if r == "number":
        return FLOAT
    if r == "bool":
        return BOOL
    if r == "field_list":
        return ListT(by_t if by_t is not None else UNKNOWN)
    if r == "number_of_field":
        t = by_t if by_t is not None else el
        if not is_number(t):
            ck.err(C.TYPE_MISMATCH, f"{n.op} adds numbers, found {t}", n)
        return strip_opt(t) if strip_opt(t) in (INT, FLOAT) else UNKNOWN
    return UNKNOWN


# --------------------------------------------------------------------------- modules


def _resolve_import(mod: A.Module, imp: A.Import) -> str:
    base = os.path.dirname(mod.file) if mod.file not in ("<input>", "-", "<stdin>") else "."
    return _norm(os.path.join(base, imp.path))


@lru_cache(maxsize=65536)
def _norm(file: str) -> str:
    """Absolute, normalized path (no symlink resolution: no syscalls on the hot path)."""
    return os.path.normpath(os.path.abspath(file))


def _guarded(fn, node, diags: list[Diagnostic]):
    """Run one declaration's checks; absurdly deep nesting becomes a diagnostic, not a crash."""
    try:
        return fn()
    except RecursionError:
        diags.append(error(C.TOO_DEEP, f"'{node.name}' nests expressions or blocks too deeply to check", node.span,
                           "split it with `let` bindings"))
        return None


class Typed:
    """The typed AST: what checking computed, for every later pass to read instead of re-deriving.

    `envs[name]` is the env's `EnvTypes`; its `types` map id(expression) -> type for every
    expression the checker typed (tool bodies, defaults, blueprints checked against it) and its
    `edges` map id(blueprint node) -> the earlier nodes it reads (`blueprint_edges`). Keyed by
    identity, not equality (the same text may have two types in two scopes); `modules` keeps the
    typed nodes alive, so an id names one node for this object's lifetime."""

    __slots__ = ("modules", "envs")

    def __init__(self, modules: list, envs: dict[str, EnvTypes]) -> None:
        self.modules, self.envs = modules, envs

    def type_of(self, env: str, e) -> Ty | None:
        et = self.envs.get(env)
        return None if et is None else et.types.get(id(e))

    def edges_of(self, env: str, node) -> tuple[str, ...] | None:
        et = self.envs.get(env)
        return None if et is None else et.edges.get(id(node))


def check_modules(modules: list[A.Module], roots=None, checked: dict[str, EnvTypes] | None = None) -> list[Diagnostic]:
    """Resolve and check `modules` together (imports among them, else read from disk, only inside
    `roots`: see forgec/lang/confine.py; default: each module's build, else its folder).
    `checked`: EnvTypes of envs already checked (`check_typed(...)[1].envs`), see `check_typed`."""
    return check_typed(modules, roots, checked)[0]


def check_typed(modules: list[A.Module], roots=None, checked: dict[str, EnvTypes] | None = None) -> tuple[list[Diagnostic], Typed]:
    """`check_modules`, also returning the typed AST (`Typed`) of every env and blueprint.

    `checked`: name -> the EnvTypes an earlier check returned for an env. An env declaration that is
    that EnvTypes' very `env` object is not checked again (its diagnostics were reported then); the
    blueprints are checked against it, adding their types and edges to it. So a compile checks each
    env once: the check stage types it, codegen reads the types, the lower stage checks blueprints
    against them."""
    gc_was_on = gc.isenabled()
    gc.disable()  # short-lived acyclic data: the cyclic GC would only rescan the live ASTs
    try:
        diags, types, mods = _check_modules(modules, roots, checked or {})
        return diags, Typed(mods, types)
    finally:
        if gc_was_on:
            gc.enable()


def _check_modules(modules: list[A.Module], roots=None, checked: dict[str, EnvTypes] | None = None
                   ) -> tuple[list[Diagnostic], dict[str, EnvTypes], list[A.Module]]:
    checked = checked or {}
    diags: list[Diagnostic] = []
    by_path: dict[str, A.Module] = {}
    for m in modules:
        by_path.setdefault(_norm(m.file), m)
    # follow imports that are not among the given modules
    queue = list(by_path.values())
    while queue:
        m = queue.pop(0)
        for imp in m.imports:
            p = Path(_resolve_import(m, imp))
            if str(p) in by_path:
                continue
            if roots is None:
                roots = confine.default_roots(x.file for x in modules)
            why = confine.import_error(imp.path, str(p), roots)
            if why is not None:  # never read (so never shown) a file outside the build
                diags.append(error(C.IMPORT_OUTSIDE, f"cannot import '{_shown(imp.path)}': {why}", imp.span,
                                   "import .forge files of this build by a path relative to the importing file"))
                continue
            if not p.is_file():
                diags.append(error(C.IMPORT_NOT_FOUND, f"cannot find imported file '{imp.path}'", imp.span,
                                   f"looked for {p}"))
                continue
            from forgec.lang.parse import parse

            try:
                text = p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                diags.append(error(C.IMPORT_NOT_FOUND, f"cannot read imported file '{imp.path}': {e}", imp.span))
                continue
            sub, sd = parse(text, str(p))
            diags.extend(sd)
            by_path[str(p)] = sub
            queue.append(sub)
    given = {_norm(m.file) for m in modules}
    envs: dict[str, A.EnvDecl] = {}
    all_mods = list(by_path.values())
    for m in all_mods:
        for e in m.envs:
            if e.name in envs:
                if _norm(m.file) in given:
                    diags.append(error(C.DUPLICATE, f"env '{e.name}' is declared twice", e.span,
                                       f"also declared in {envs[e.name].span.file}"))
                continue
            envs[e.name] = e
    types: dict[str, EnvTypes] = {}
    for m in all_mods:
        own = _norm(m.file) in given
        for e in m.envs:
            if envs.get(e.name) is not e:
                continue
            done = checked.get(e.name)
            if done is not None and done.env is e:
                types[e.name] = done  # checked once already (the compile's check stage): not again
            else:
                types[e.name] = _guarded(lambda: check_env(e, diags if own else []), e, diags) or EnvTypes(e)
    for m in all_mods:
        if _norm(m.file) not in given:
            continue
        seen: dict[str, A.BlueprintDecl] = {}
        for b in m.blueprints:
            if b.name in seen:
                diags.append(error(C.DUPLICATE, f"blueprint '{b.name}' is declared twice in this file", b.span))
            seen[b.name] = b
            _guarded(lambda: check_blueprint(b, types.get(b.env), list(envs), diags), b, diags)
    return diags, types, all_mods


def link_outside(path) -> Diagnostic:
    """A .forge file found in a folder that is a symlink leading outside the folders read (`check` and `compile`)."""
    return error(C.IMPORT_OUTSIDE, f"{path} is a symlink that leads outside the folders being read; it was not read", Span(str(path)))


def load(paths, roots=None) -> tuple[list[A.Module], list[Diagnostic]]:
    """Read .forge files (folders recursively, sorted), parse them, and follow their imports
    (imported files come after the named ones; each file once). Missing imports are
    reported by `check`, which resolves them. Imports are followed, and files found in a
    folder read, only inside `roots` (default: each path's build, else the path itself;
    forgec/lang/confine.py): a symlink that leads outside is skipped with a diagnostic."""
    files: list[str] = []
    diags: list[Diagnostic] = []
    roots = [confine.root_of(p) for p in paths] if roots is None else list(roots)
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for q in sorted(p.rglob("*.forge")):
                if not q.is_file():
                    continue
                if not confine.within(q, roots):
                    diags.append(link_outside(q))
                    continue
                files.append(str(q))
        elif p.is_file():
            files.append(str(p))
        else:
            diags.append(error(C.IMPORT_NOT_FOUND, f"no such file or folder: {p}", Span(str(p))))
    mods: list[A.Module] = []
    seen: set[str] = set()
    queue = list(files)
    gc_was_on = gc.isenabled()
    gc.disable()  # many long-lived acyclic ASTs: young-generation GC passes would rescan them
    try:
        _load_queue(queue, seen, mods, diags, roots)
    finally:
        if gc_was_on:
            gc.enable()
    return mods, diags


def _load_queue(queue: list[str], seen: set[str], mods: list, diags: list, roots: list) -> None:

    while queue:
        f = queue.pop(0)
        key = _norm(f)
        if key in seen:
            continue
        seen.add(key)
        try:
            text = Path(f).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            diags.append(error(C.IMPORT_NOT_FOUND, f"cannot read {f}: {e}", Span(f)))
            continue
        m, d = parse(text, f)
        mods.append(m)
        diags.extend(d)
        for imp in m.imports:
            target = _resolve_import(m, imp)
            if target not in seen and confine.import_error(imp.path, target, roots) is None and os.path.isfile(target):
                queue.append(target)


def _shown(path: str) -> str:
    """An import path for a message: long ones cut (a 100k-character path is not repeated in full)."""
    return path if len(path) <= 120 else path[:117] + "..."


def check(modules: list[A.Module], roots=None, checked: dict[str, EnvTypes] | None = None) -> list[Diagnostic]:
    return check_modules(modules, roots, checked)


def drop_cascades(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Drop checker diagnostics on constructs that span a syntax error: the parser
    repaired them, so their 'missing argument' or 'unused' is noise."""
    bad: dict[str, set[int]] = {}
    for d in diags:
        if d.code in _SYNTAX_CODES and d.span is not None:
            bad.setdefault(d.span.file, set()).add(d.span.line)
    if not bad:
        return diags
    out = []
    for d in diags:
        s = d.span
        if d.code not in _SYNTAX_CODES and s is not None and s.file in bad and s.line:
            last = max(s.end_line, s.line)
            if any(s.line <= ln <= last for ln in bad[s.file]):
                continue
        out.append(d)
    return out


_SYNTAX_CODES = frozenset({C.SYNTAX, C.UNEXPECTED_CHAR, C.UNTERMINATED_STRING})


class _CallableModule(__import__("types").ModuleType):
    """`forgec.lang.check` is both this module (EnvTypes, Checker, ...) and the checker:
    `forgec.lang.check(modules)`. A package attribute cannot be both otherwise, because
    importing the submodule rebinds the package attribute to the module."""

    def __call__(self, modules: list[A.Module], roots=None, checked: dict[str, EnvTypes] | None = None) -> list[Diagnostic]:
        return check_modules(modules, roots, checked)


__import__("sys").modules[__name__].__class__ = _CallableModule


__all__ = ["check", "check_modules", "check_typed", "Typed", "drop_cascades", "load", "EnvTypes", "Checker", "fits", "node_refs", "node_reads", "blueprint_edges", "user_reads",
           "did_you_mean"]
