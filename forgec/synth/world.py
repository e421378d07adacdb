"""Synthesis that sees the user's world (`--state ENV=FILE`, issue 20): bind the env the docs gave to
the data the user has.

The docs say what a tool does in words; a world the user brings says how it is written down: which
field a cancellation reason lands in (`cancel_reason`), which status a return leaves behind
(`"return requested"`), how a payment history records a refund. This pass runs after the rules
backend, on its `A.EnvDecl`, with the parsed state file, and rewrites only what the data shows. Each
rule reads the data's own names and values, never a domain word:

* **the field a tool writes** — a tool `V_...` acting on a record whose data has no field `p` for a
  parameter `p`, but has `V_p` (or `V_ps` for `p_ids`: `item_ids` -> `return_items`), writes there
  (sorted when every list the data holds in that field is sorted);
* **the status a tool leaves** — a write tool that sets no status, where exactly one status value the
  data uses holds a form of the tool's verb and no noun the tool's name lacks ("exchange requested" for
  `exchange_delivered_order_items`, "pending (item modified)" for `modify_pending_order_items` but not
  for `modify_pending_order_address`), sets it;
* **"only once" needs no flag** when the tool requires one status and leaves another: calling it again
  already fails, so the synthesizer's `*_done` flag (a field the data lacks) is dropped;
* **a refund appends to the history** — a tool whose doc says the payment is refunded, acting on a
  record whose data keeps a list of transactions with a kind ("payment", "refund") and an amount,
  appends one refund per payment, to the same method.

Fields a rule writes that the docs did not declare are declared from the data (types learned by
`userstate.learn`, optional), so the checker and the state loader know them. Why our own pass and not a
library: the binding is between two of forgec's own artefacts (the env AST and the world); no library
knows either.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from forgec.english import forms, lemmas, verb_base
from forgec.lang import ast as A
from forgec.wording import split_name

_SAMPLE = 5000  # records read per collection: enough to learn field names and value sets, bounded on a large world
_STATUS_FIELDS = ("status", "state")


class World:
    """What the data shows per entity: field names, a sample of each field's values."""

    def __init__(self, data: Any, entities: list[str]):
        from forgec.userstate import match_name as _match

        self.records: dict[str, list[dict]] = {}
        self._nested: dict[str, bool] = {}
        self.fields: dict[str, set[str]] = {}
        if not isinstance(data, dict):
            return
        colls = data.get("entities") if isinstance(data.get("entities"), dict) else data
        raw: dict[str, list[dict]] = {}
        for name, coll in colls.items():
            recs = coll.values() if isinstance(coll, dict) else coll if isinstance(coll, list) else ()
            rows = [r for r in recs if isinstance(r, dict)][:_SAMPLE]
            raw[name] = rows
            e = _match(name, entities)
            if e is not None and rows:
                self.records.setdefault(e, []).extend(rows)
        self._lift_nested(entities, raw)
        self.fields = {e: {f for r in rows for f in r} for e, rows in self.records.items()}

    def _lift_nested(self, entities: list[str], raw: dict[str, list[dict]]) -> None:
        """An entity with no collection whose records the data nests under a field named for it (a user's
        `payment_methods`, also where users are no entity of the env): those records are its."""
        from forgec.userstate import match_name as _match, nested_records as _nested_records

        for owner, rows in raw.items():
            names = {f: _match(f, entities) for f in {f for r in rows for f in r}}
            names = {f: e for f, e in names.items() if e is not None and (e not in self.records or self._nested.get(e))}
            for r in rows if names else ():
                for f, e in names.items():
                    if len(self.records.get(e, ())) >= _SAMPLE:
                        continue
                    recs = [x for _, x in _nested_records(r.get(f))]
                    if recs:
                        self.records.setdefault(e, []).extend(recs)
                        self._nested[e] = True

    def has(self, e: str) -> bool:
        return bool(self.records.get(e))

    def values(self, e: str, f: str) -> list:
        return [r[f] for r in self.records.get(e, ()) if f in r]

    def strings(self, e: str, f: str) -> list[str]:
        """The distinct strings a field holds, most used first (ties by value)."""
        counts: dict[str, int] = {}
        for v in self.values(e, f):
            if isinstance(v, str):
                counts[v] = counts.get(v, 0) + 1
        return sorted(counts, key=lambda v: (-counts[v], v))


def bind_world(decl: A.EnvDecl, data: Any) -> A.EnvDecl:
    """`decl` with its tools bound to the world `data` (a parsed state file); unchanged without data."""
    world = World(data, [e.name for e in decl.entities])
    if not world.records:
        return decl
    declare: dict[str, set[str]] = {}
    tools = []
    for t in decl.tools:
        tools.append(_bind_tool(t, decl, world, declare) if t.body is not None else t)
    entities = tuple(_declare(e, world, declare.get(e.name, set())) for e in decl.entities)
    return replace(decl, tools=tuple(tools), entities=entities)


# ----------------------------------------------------------------------------------------------- tools


def _target(t: A.ToolDecl, decl: A.EnvDecl, world: World) -> tuple[str, str] | None:
    """(param, entity) of the record the tool acts on: the first parameter typed as an entity the world has."""
    for p in t.params:
        ty = p.type.inner if isinstance(p.type, A.OptionalType) else p.type
        if isinstance(ty, A.NamedType) and decl.entity(ty.name) and world.has(ty.name):
            return p.name, ty.name
    return None


def _verb(t: A.ToolDecl) -> str | None:
    """The tool's verb: the first word of its name, when English knows it as a verb."""
    words = split_name(t.name)
    return verb_base(words[0]) if words and "VERB" in lemmas(words[0]) else None


def _bind_tool(t: A.ToolDecl, decl: A.EnvDecl, world: World, declare: dict[str, set[str]]) -> A.ToolDecl:
    if not ({"create", "update", "delete", "action"} & set(t.annotations)):
        return t
    target, verb = _target(t, decl, world), _verb(t)
    if target is None or verb is None:
        return t
    tp, e = target
    fields = world.fields[e]
    body = list(t.body or ())
    notes = [list(n) for n in t.notes]

    def add(stmt: A.Stmt, why: str, at: int | None = None) -> None:
        at = _before_return(body) if at is None else at
        for n in notes:
            if n[0] >= at:
                n[0] += 1
        body.insert(at, stmt)
        notes.append([at, why])

    # the field a tool writes: `set order.reason = reason` -> `cancel_reason` where the data says so
    written = set()
    for i, s in enumerate(body):
        f = _set_field(s, tp)
        if f is None:
            continue
        if f not in fields and (g := _verb_field(verb, f, fields)):
            body[i] = replace(s, target=A.Attr(A.Name(tp), g))
            declare.setdefault(e, set()).add(g)
            notes.append([i, f"world data: {e} records keep it as {g!r}"])
            f = g
        written.add(f)
    for p in t.params:
        if p.name == tp or p.name in written:
            continue
        g = _verb_field(verb, p.name, fields)
        if g is None or g in written:
            continue
        value = _param_value(p, decl)
        if value is None:
            continue
        if _all_sorted(world.values(e, g)):
            value = A.Call("sorted", (value,))
        add(A.Set(A.Attr(A.Name(tp), g), value), f"world data: {e} records keep the {p.name.replace('_', ' ')} as {g!r}")
        declare.setdefault(e, set()).add(g)
        written.add(g)

    # the status a tool leaves
    status = next((f for f in _STATUS_FIELDS if f in fields), None)
    if status and status not in written:
        v = _status_for(t, verb, world.strings(e, status))
        if v is not None:
            add(A.Set(A.Attr(A.Name(tp), status), A.Literal(v)), f"world data: {e} records have {status} {v!r}")
            declare.setdefault(e, set()).add(status)  # its enum grows with the data's values
            written.add(status)

    # "only once" needs no flag where the status already changes
    if status and leaves_required_status(body, tp, status):
        body, notes = drop_once_flags(body, notes, tp, fields)

    # a refund appends to the history
    if _says_refund(t.doc):
        for stmt in _refunds(tp, e, world, fields, decl, t.doc, declare):
            add(stmt, "world data + docs: the payment is refunded to the method that paid")
            declare.setdefault(e, set()).add(stmt.iter.source.name)  # type: ignore[union-attr]

    if body == list(t.body or ()):
        return t
    annotations = t.annotations
    if "conservative" in annotations:  # the data gave it an effect: no longer a logged call
        body, notes = _without(body, notes, lambda s: isinstance(s, A.Insert) and s.entity == "ActionLog")
        annotations = tuple(a for a in annotations if a != "conservative")
    return replace(t, body=tuple(body), annotations=annotations, notes=tuple(sorted((i, w) for i, w in notes)))


def _before_return(body: list) -> int:
    return len(body) - 1 if body and isinstance(body[-1], A.Return) else len(body)


def _set_field(s: A.Stmt, tp: str) -> str | None:
    if isinstance(s, A.Set) and isinstance(s.target, A.Attr) and isinstance(s.target.obj, A.Name) and s.target.obj.id == tp:
        return s.target.name
    return None


def _verb_field(verb: str, name: str, fields: set[str]) -> str | None:
    """The data's field for parameter `name` written by a tool of `verb`: `cancel_reason` for (cancel,
    reason), `return_items` for (return, item_ids), `exchange_new_items` for (exchange, new_item_ids)."""
    bases = [name]
    for suffix, repl in (("_ids", "s"), ("_id", "")):
        if name.endswith(suffix) and len(name) > len(suffix):
            bases.append(name[: -len(suffix)] + repl)
    for v in sorted(forms(verb, "VERB")):
        for b in bases:
            if f"{v}_{b}" in fields:
                return f"{v}_{b}"
    return None


def _param_value(p: A.ParamDecl, decl: A.EnvDecl) -> A.Expr | None:
    """What the data stores for a parameter: its key for a record, the keys for a list of records."""
    ty = p.type.inner if isinstance(p.type, A.OptionalType) else p.type
    if isinstance(ty, A.NamedType):
        ent = decl.entity(ty.name)
        return A.Attr(A.Name(p.name), ent.key) if ent else A.Name(p.name)
    if isinstance(ty, A.ListType) and isinstance(ty.item, A.NamedType):
        ent = decl.entity(ty.item.name)
        return A.Call("map", (A.Name(p.name), A.Attr(A.Name("it"), ent.key))) if ent else A.Name(p.name)
    if isinstance(ty, (A.PrimType, A.EnumType)) or (isinstance(ty, A.ListType) and isinstance(ty.item, A.PrimType)):
        return A.Name(p.name)
    return None


def _all_sorted(values: list) -> bool:
    lists = [v for v in values if isinstance(v, list) and len(v) > 1]
    try:
        return len(lists) >= 3 and all(v == sorted(v) for v in lists)
    except TypeError:
        return False


def _status_for(t: A.ToolDecl, verb: str, values: list[str]) -> str | None:
    """The one status value the data uses that says this tool's act: it holds a form of the verb, and
    every other word of it is in the tool's name or is a participle ("requested")."""
    verb_forms = forms(verb, "VERB")
    name_words = {w for n in split_name(t.name) for w in forms(n)}
    found = []
    for v in values:
        words = _words(v)
        if not any(w in verb_forms for w in words):
            continue
        rest = [w for w in words if w not in verb_forms]
        if all(w in name_words or _participle(w) for w in rest):
            found.append(v)
    return found[0] if len(found) == 1 else None


def _words(s: str) -> list[str]:
    """The runs of letters of `s`, lower-cased ("pending (item modified)" -> pending, item, modified)."""
    return re.findall(r"[a-z]+", s.lower())


def _participle(w: str) -> bool:
    base = verb_base(w)
    return base != w and w.endswith(("ed", "en")) and "VERB" in lemmas(base)


def leaves_required_status(body: list, tp: str, status: str) -> bool:
    """Does the tool require `tp.status == A` and set `tp.status = B` (B != A)?"""
    need = {s.cond.right.value for s in body if isinstance(s, A.Require) and isinstance(s.cond, A.Binary)
            and s.cond.op == "==" and isinstance(s.cond.right, A.Literal) and _is_attr(s.cond.left, tp, status)}
    sets = {s.value.value for s in body if isinstance(s, A.Set) and _is_attr(s.target, tp, status) and isinstance(s.value, A.Literal)}
    return bool(need) and bool(sets) and not (need & sets)


def _is_attr(e: A.Expr, obj: str, name: str) -> bool:
    return isinstance(e, A.Attr) and isinstance(e.obj, A.Name) and e.obj.id == obj and e.name == name


def drop_once_flags(body: list, notes: list, tp: str, fields: set[str]) -> tuple[list, list]:
    """Without the `require not tp.X_done` / `set tp.X_done = true` pair for a flag the data lacks."""
    flags = {s.target.name for s in body if isinstance(s, A.Set) and isinstance(s.target, A.Attr)
             and isinstance(s.target.obj, A.Name) and s.target.obj.id == tp and s.target.name.endswith("_done")
             and s.target.name not in fields and isinstance(s.value, A.Literal) and s.value.value is True}
    if not flags:
        return body, notes

    def is_flag(s: A.Stmt) -> bool:
        if isinstance(s, A.Set):
            return any(_is_attr(s.target, tp, f) for f in flags)
        if isinstance(s, A.Require) and isinstance(s.cond, A.Unary) and s.cond.op == "not":
            return any(_is_attr(s.cond.operand, tp, f) for f in flags)
        return False

    return _without(body, notes, is_flag)


def _without(body: list, notes: list, drop) -> tuple[list, list]:
    """`body` without the statements `drop` picks, its citations moved to the statements' new places."""
    keep = [i for i, s in enumerate(body) if not drop(s)]
    new_index = {old: new for new, old in enumerate(keep)}
    return [body[i] for i in keep], [[new_index[i], w] for i, w in notes if i in new_index]


def _says_refund(doc: str) -> bool:
    return any(w in forms("refund", "VERB") for w in _words(doc))


def _refunds(tp: str, e: str, world: World, fields: set[str], decl: A.EnvDecl, doc: str,
             declare: dict[str, set[str]]) -> list[A.Stmt]:
    """`for p in tp.H where it.K == "payment" { append {K: "refund", ...p's amount and method} to tp.H }` for
    the record's transaction list H: dicts with one string field K whose values include "payment" and
    "refund" (a kind), a number field (the amount) and the other fields copied as they are. Where an entry
    names a record (its field is an entity's key) whose data holds a number the tool's doc names ("added to
    the user's gift card balance"), that number is credited, when the record has it."""
    out = []
    for h in sorted(fields):
        rows = [x for v in world.values(e, h) if isinstance(v, list) for x in v if isinstance(x, dict)]
        if not rows:
            continue
        kinds = [k for k in sorted({k for r in rows for k in r}) if {"payment", "refund"} <= {r.get(k) for r in rows if isinstance(r.get(k), str)}]
        if len(kinds) != 1:
            continue
        k = kinds[0]
        keys = sorted({f for r in rows for f in r} - {k})
        if not any(isinstance(r.get(f), (int, float)) and not isinstance(r.get(f), bool) for r in rows for f in keys):
            continue
        init = (A.FieldInit(k, A.Literal("refund")),) + tuple(A.FieldInit(f, A.Attr(A.Name("p"), f)) for f in keys)
        src = A.Where(A.Attr(A.Name(tp), h), A.Binary("==", A.Attr(A.Name("it"), k), A.Literal("payment")))
        loop: list[A.Stmt] = [A.Append(A.Attr(A.Name(tp), h), A.RecordLit(init))]
        amount = next((f for f in keys if all(isinstance(r.get(f), (int, float)) and not isinstance(r.get(f), bool)
                                               for r in rows if f in r)), None)
        credit = _credit(keys, amount, world, decl, doc, declare)
        if credit:
            loop.append(credit)
        out.append(A.For("p", src, tuple(loop)))
    return out


def _credit(keys: list[str], amount: str | None, world: World, decl: A.EnvDecl, doc: str,
            declare: dict[str, set[str]]) -> A.Stmt | None:
    """`if p.M in E { let m = E[p.M]  if m.B != null { set m.B = round(m.B + p.amount, 2) } }` for the entry's
    field M keying entity E whose data holds a number B named in the doc (rounded as the data's are)."""
    if amount is None:
        return None
    doc_words = set(_words(doc))
    for f in keys:
        ent = next((x for x in decl.entities if x.key == f and world.has(x.name)), None)
        if ent is None:
            continue
        nums = sorted({b for r in world.records[ent.name] for b, v in r.items()
                       if isinstance(v, (int, float)) and not isinstance(v, bool)})
        named = [b for b in nums if set(split_name(b)) <= doc_words]
        if len(named) != 1:
            continue
        b = named[0]
        declare.setdefault(ent.name, set()).add(b)
        m = A.Name("m")
        total = A.Binary("+", A.Attr(m, b), A.Attr(A.Name("p"), amount))
        if _cents(world.values(ent.name, b)):
            total = A.Call("round", (total, A.Literal(2)))
        inner = A.If(A.Binary("!=", A.Attr(m, b), A.Literal(None)), (A.Set(A.Attr(m, b), total),))
        return A.If(A.Binary("in", A.Attr(A.Name("p"), f), A.Name(ent.name)),
                    (A.Let("m", A.Index(A.Name(ent.name), A.Attr(A.Name("p"), f))), inner))
    return None


def _cents(values: list) -> bool:
    """Do the data's amounts all have at most two decimals (money)?"""
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return len(nums) >= 3 and all(abs(round(v, 2) - v) < 1e-9 for v in nums)


# ----------------------------------------------------------------------------------------------- entities


def _declare(ent: A.EntityDecl, world: World, names: set[str]) -> A.EntityDecl:
    """The entity with the data's fields a rule writes declared (optional, typed from the data)."""
    from forgec.userstate import learn

    have = {f.name for f in ent.fields}
    grown = []
    for f in ent.fields:  # an enum the data uses more values of grows (a status the docs never list)
        ty = f.type.inner if isinstance(f.type, A.OptionalType) else f.type
        if f.name in names and isinstance(ty, A.EnumType):
            extra = tuple(v for v in world.strings(ent.name, f.name) if v not in ty.values)
            if extra:
                nty = A.EnumType(ty.values + extra)
                f = replace(f, type=A.OptionalType(nty) if isinstance(f.type, A.OptionalType) else nty)
        grown.append(f)
    ent = replace(ent, fields=tuple(grown))
    new = []
    for f in sorted(names - have):
        vals = [r.get(f) for r in world.records.get(ent.name, ())]
        ty = _type(learn(vals))
        if isinstance(ty, A.ListType):  # a list the record lacks is an empty one
            new.append(A.FieldDecl(f, ty, A.ListLit(()), "kept from the world's data"))
        else:
            new.append(A.FieldDecl(f, A.OptionalType(ty), A.Literal(None), "kept from the world's data"))
    return replace(ent, fields=ent.fields + tuple(new)) if new else ent


def _type(t: dict) -> A.TypeExpr:
    kind = t.get("type")
    if kind in ("str", "enum"):
        return A.PrimType("str")
    if kind in ("int", "float"):  # a number the world keeps may take a fraction from a write (a refund of 12.5)
        return A.PrimType("float")
    if kind == "bool":
        return A.PrimType(kind)
    if kind == "list":
        return A.ListType(_type(t.get("items", {})))
    if kind == "object":
        fields = []
        for f, ft in sorted(t.get("fields", {}).items()):
            ty = _type(ft)
            if ft.get("optional") and not isinstance(ty, A.OptionalType):
                ty = A.OptionalType(ty)
            fields.append(A.FieldDecl(f, ty))
        return A.RecordType(tuple(fields))
    return A.PrimType("any")
