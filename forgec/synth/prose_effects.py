"""Facts read from the prose (forgec/synth/prose.py) -> statements of the effect language.

`changes` gives, per tool, the writes and preconditions its description states, each with the
sentence it came from (cited in env.forge); `cite_existing` cites the statements the name rules
wrote from prose-read states; `notes` turns the citations into `A.ToolDecl.notes`.
"""

from __future__ import annotations

import re

from forgec.lang import ast as A

from .prose import BOOL, NUMS, Fact, parse_num, cite, field_named, names_entity, once_field, read, words
from .schema import amount_param, balance_field, count_field, record_field, ref_field, strip_optional
from .names import ident
from .params import default_value


def changes(s, e, v, pmap, k: str, made: list[A.Stmt], extras: bool = True) -> list[tuple[A.Stmt, str]]:
    """The writes the description states, as (statement, sentence). A statement the name
    rules already wrote (`set line_id.plan_id = ...`) is returned as is, to be cited."""

    out: list[tuple[A.Stmt, str]] = []

    def add(st: A.Stmt, sent: str) -> None:
        same = next((x for x in made + [o for o, _ in out] if x == st or (isinstance(x, A.Set) and isinstance(st, A.Set) and x.target == st.target)), None)
        out.append((same if same is not None else st, sent))

    if extras:  # preconditions of the whole call (not of one guarded effect)
        out += _ownership(s, e, v, pmap, k) + bounds(v, pmap) + _same(s, e, v, pmap, k) + _other_states(s, e, v, pmap)
    for f in v.facts:
        if f.conditional and f.when and f.kind in ("money", "count"):
            out += _guarded(s, e, v, pmap, k, f, made)
            continue
        if f.kind == "once" and once_field(v) in e.fields:
            # "this function can only be called once": a flag on the record, checked and set
            flag = A.Attr(A.Name(k), once_field(v))
            add(A.Require(A.Unary("not", flag), f"{v.tool.name} was already done for this {' '.join(words(e.name))}"), f.sentence)
            add(A.Set(flag, A.Literal(True)), f.sentence)
            continue
        if f.conditional:
            continue
        obj = _holder(s, e, v, pmap, k, f)
        if obj is None:
            continue
        ent, ref = obj
        if f.kind == "record" and ent is e:
            name = record_field(s, v, e, f)
            if not name or name not in e.fields:
                continue
            if any(p.name == name for p in pmap.values()):
                # "stores the reason": the param rules set it; cite their statement
                done = next((x for x in made if isinstance(x, (A.Set, A.If)) and _sets(x, A.Attr(ref, name))), None)
                if done is not None:
                    out.append((done, f.sentence))
                continue
            if "now" in s.globals and strip_optional(e.fields[name].type) == A.PrimType("str"):
                add(A.Set(A.Attr(ref, name), A.Attr(A.Name("state"), "now")), f.sentence)
        elif f.kind == "assign":
            name = field_named(ent.fields, f.field)
            val = _fitting(s, ent.fields[name].type, f.value, f.amount == "clear") if name else None
            if val is not None:
                add(A.Set(A.Attr(ref, name), val), f.sentence)
        elif f.kind == "toggle":
            name = field_named(ent.fields, f.field, (BOOL,))
            if name:
                add(A.Set(A.Attr(ref, name), A.Literal(bool(f.value))), f.sentence)
        elif f.kind == "count":
            name = count_field(ent, f)
            amt = _amount(pmap, f.amount)
            if not name or name not in ent.fields or amt is None or strip_optional(ent.fields[name].type) not in NUMS:
                continue
            if not _fits_number(ent.fields[name].type, amt, pmap):
                continue
            cur = A.Attr(ref, name)
            _zero_if_null(add, cur, ent.fields[name].type, f.sentence)
            if f.sign < 0:
                add(A.Require(_enough(cur, amt, ent.fields[name].type), f"not enough {name.replace('_', ' ')}"), f.sentence)
            add(A.Set(cur, A.Binary("+" if f.sign > 0 else "-", cur, amt)), f.sentence)
        elif f.kind == "money":
            bal = field_named(ent.fields, f.field, NUMS) or balance_field(ent)
            amt = _amount(pmap, f.amount) or _total(e, k, f.amount) or _the_amount(v, pmap)
            if bal is None or amt is None or not _fits_number(ent.fields[bal].type, amt, pmap):
                continue
            cur = A.Attr(ref, bal)
            _zero_if_null(add, cur, ent.fields[bal].type, f.sentence)
            if isinstance(amt, A.Name):
                add(A.Require(A.Binary(">", amt, A.Literal(0)), "amount must be positive"), f.sentence)
            if f.sign < 0:
                add(A.Require(_enough(cur, amt, ent.fields[bal].type), "insufficient balance"), f.sentence)
            add(A.Set(cur, A.Binary("+" if f.sign > 0 else "-", cur, amt)), f.sentence)
    return out


def _fits_number(t, amt: A.Expr, pmap) -> bool:
    """An int field takes only int amounts (a float parameter or literal would not fit)."""

    if strip_optional(t) != A.PrimType("int"):
        return True
    if isinstance(amt, A.Literal):
        return isinstance(amt.value, int)
    if isinstance(amt, A.Name):
        p = next((p for p in pmap.values() if p.name == amt.id), None)
        return p is not None and strip_optional(p.type) == A.PrimType("int")
    return False


def _enough(cur: A.Expr, amt: A.Expr, t) -> A.Expr:
    """`cur >= amt`; a null (never set) balance holds nothing."""
    test = A.Binary(">=", cur, amt)
    return A.Binary("and", A.Binary("!=", cur, A.Literal(None)), test) if isinstance(t, A.OptionalType) else test


def bounds(v, pmap) -> list[tuple[A.Stmt, str]]:
    """"Amount must be positive and at most 500 USD" (the tool's prose, naming the parameter),
    "must be between 1 and 10" (a parameter's own description): requires on the number."""

    out = []
    for w, p in pmap.items():
        if p.optional or strip_optional(p.type) not in NUMS:
            continue
        own = [f for f in read(v.tool.param(w).description or "") if f.kind == "bound" and not f.subject] if v.tool.param(w) else []
        said = [f for f in v.facts if f.kind == "bound" and f.subject and ident(f.subject.replace(" ", "_")) in (p.name, ident(w))]
        for f in own + said:
            test = A.Binary(f.field, A.Name(p.name), A.Literal(f.value))
            word = {">": "greater than", ">=": "at least", "<": "less than", "<=": "at most"}[f.field]
            out.append((A.Require(test, f"{w} must be {word} {f.value}" if f.value or f.field not in (">",) else f"{w} must be positive"), f.sentence))
    return out


def _guarded(s, e, v, pmap, k: str, f: Fact, made) -> list[tuple[A.Stmt, str]]:
    """A money move or count that happens only in a documented state of a record:
    `if k.status == "late" { ... }` (a condition on anything else is not read: no statement)."""
    from dataclasses import replace as _replace


    subj, state = f.when
    if not subj or names_entity(subj, e.name):
        ent, ref = e, A.Name(k)
    else:
        hits = [w for w, x in v.refs.items() if names_entity(subj, x) and w in pmap and not pmap[w].optional]
        if len(hits) != 1:
            return []
        ent, ref = s.entities[v.refs[hits[0]]], A.Name(pmap[hits[0]].name)
    t = strip_optional(ent.fields["status"].type) if "status" in ent.fields else None
    norm = lambda x: re.sub(r"[^a-z0-9]", "", str(x).lower())  # noqa: E731
    hit = next((x for x in (t.values if isinstance(t, A.EnumType) else ()) if norm(x) == norm(state)), None)
    if hit is None:
        return []
    inner = changes(s, e, _Only(v, _replace(f, conditional=False, when=())), pmap, k, made, extras=False)
    body = tuple(st for st, _ in inner)
    if not body:
        return []
    return [(A.If(A.Binary("==", A.Attr(ref, "status"), A.Literal(hit)), body), f.sentence)]


class _Only:
    """A view of `v` whose facts are just one (to build the statements of a guarded fact)."""

    def __init__(self, v, fact: Fact) -> None:
        self._v, self.facts = v, (fact,)

    def __getattr__(self, name):
        return getattr(self._v, name)


def _other_states(s, e, v, pmap) -> list[tuple[A.Stmt, str]]:
    """"Fails if the patron is `blocked`" in a tool about a book: the state of another record
    the tool is passed (its own record's states are the status preconditions)."""

    out = []
    for f in v.facts:
        if f.kind not in ("forbid", "require") or not f.subject or names_entity(f.subject, e.name):
            continue
        hits = [w for w, ent in v.refs.items() if names_entity(f.subject, ent) and w in pmap and not pmap[w].optional]
        if len(hits) != 1:
            continue
        ent = s.entities[v.refs[hits[0]]]
        t = strip_optional(ent.fields["status"].type) if "status" in ent.fields else None
        vals = t.values if isinstance(t, A.EnumType) else ()
        norm = lambda x: re.sub(r"[^a-z0-9]", "", str(x).lower())  # noqa: E731
        what = " ".join(words(ent.name))
        st = A.Attr(A.Name(pmap[hits[0]].name), "status")
        for w in (f.value if f.kind == "forbid" else (f.value,)):
            hit = next((x for x in vals if norm(x) == norm(w)), None)
            if hit is None:
                continue
            if f.kind == "forbid":
                out.append((A.Require(A.Binary("!=", st, A.Literal(hit)), f"{what} is {hit}"), f.sentence))
            else:
                out.append((A.Require(A.Binary("==", st, A.Literal(hit)), f"{what} is not {hit}"), f.sentence))
    return out


def _same(s, e, v, pmap, k: str) -> list[tuple[A.Stmt, str]]:
    """"new items of the same product type", "another plan of the same plan type": the new
    record(s) and the old share that field — `x` and `new_x` parameters (lists pairwise), or a
    parameter and the record the tool's own record references now (read before it changes)."""

    facts = [f for f in v.facts if f.kind == "same"]
    for w in pmap:
        if v.tool.param(w):
            facts += [f for f in read(v.tool.param(w).description or "") if f.kind == "same"]
    out = []
    for f in facts:
        for w, p in pmap.items():
            if not w.startswith("new_") or p.optional or w[4:] not in pmap or pmap[w[4:]].optional:
                continue
            t = strip_optional(p.type)
            ent = t.item.name if isinstance(t, A.ListType) and isinstance(t.item, A.NamedType) else t.name if isinstance(t, A.NamedType) else None
            fld = _same_field(s, ent, f.field)
            if fld is None:
                continue
            old, new = A.Name(pmap[w[4:]].name), A.Name(p.name)
            if isinstance(t, A.ListType):
                test = A.Binary("==", A.Call("map", (new, A.Attr(A.Name("it"), fld))), A.Call("map", (old, A.Attr(A.Name("it"), fld))))
            else:
                test = A.Binary("==", A.Attr(new, fld), A.Attr(old, fld))
            out.append((A.Require(test, f"each {w} must have the same {fld.replace('_', ' ')} as its {w[4:]}"), f.sentence))
        for w, ent in v.refs.items():
            if w not in pmap or pmap[w].optional or ("new_" + w) in pmap or w.startswith("new_") and w[4:] in pmap:
                continue
            cur = ref_field(e, ent)
            fld = _same_field(s, ent, f.field)
            if cur is None or fld is None:
                continue
            now = A.Attr(A.Index(A.Name(ent), A.Attr(A.Name(k), cur)), fld)
            test = A.Binary("==", A.Attr(A.Name(pmap[w].name), fld), now)
            if isinstance(e.fields[cur].type, A.OptionalType):  # none yet: nothing to match
                test = A.Binary("or", A.Binary("==", A.Attr(A.Name(k), cur), A.Literal(None)), test)
            out.append((A.Require(test, f"{w} must have the same {fld.replace('_', ' ')} as the current one"), f.sentence))
    return out


def _same_field(s, ent: str | None, phrase: str) -> str | None:
    """The field "the same F" names on `ent`: a field, or the reference to an entity F names."""


    if ent is None or ent not in s.entities:
        return None
    e = s.entities[ent]
    hit = field_named({n: f for n, f in e.fields.items() if n != e.key}, phrase)
    if hit is None:
        others = [x for x in s.entities if x != ent and names_entity(phrase, x)]
        hit = ref_field(e, others[0]) if len(others) == 1 else None
    # a category (enum, flag, reference): free text ("the same origin") is left out, as the
    # verifier's random alternatives would almost never share it (docs/synthesis.md, limits)
    t = strip_optional(e.fields[hit].type) if hit else None
    return hit if isinstance(t, (A.EnumType, A.NamedType)) or t == BOOL else None


def _ownership(s, e, v, pmap, k: str) -> list[tuple[A.Stmt, str]]:
    """"The customer who owns the line" (a parameter's description), "The rental must belong to
    the member": the owned record's reference to its owner is the owner passed."""

    records = {v.key_param: (e.name, k)} if v.key_param in pmap else {}
    for w, ent in v.refs.items():
        if w in pmap and not pmap[w].optional:
            records[w] = (ent, pmap[w].name)
    claims = []  # (owner wire, owned phrase, sentence)
    for w in records:
        for f in read(v.tool.param(w).description or "") if v.tool.param(w) else ():
            if f.kind == "owns" and not f.subject:
                claims.append((w, f.field, f.sentence))
    for f in v.facts:
        if f.kind == "owns" and f.subject:
            owner = [w for w, (ent, _n) in records.items() if names_entity(f.subject, ent)]
            if len(owner) == 1:
                claims.append((owner[0], f.field, f.sentence))
    out = []
    for ow, phrase, sent in claims:
        oent, oname = records[ow]
        owned = [(ent, n) for w, (ent, n) in records.items() if w != ow and names_entity(phrase, ent)]
        if len(owned) != 1:
            continue
        went, wname = owned[0]
        fld = ref_field(s.entities[went], oent)
        if fld is None:
            continue
        key = s.entities[oent].key
        what = " ".join(words(went))
        out.append((A.Require(A.Binary("==", A.Attr(A.Name(wname), fld), A.Attr(A.Name(oname), key)), f"the {what} is not the {' '.join(words(oent))}'s"), sent))
    return out


def _zero_if_null(add, cur: A.Expr, t, sent: str) -> None:
    """A documented-optional counter or balance (`ride_count: int?`) counts from zero."""
    if isinstance(t, A.OptionalType):
        zero = A.Literal(0.0 if t.inner == A.PrimType("float") else 0)
        add(A.If(A.Binary("==", cur, A.Literal(None)), (A.Set(cur, zero),)), sent)


def _sets(st, target) -> bool:
    if isinstance(st, A.Set):
        return st.target == target
    return isinstance(st, A.If) and len(st.then) == 1 and _sets(st.then[0], target)


def _holder(s, e, v, pmap, k, f):
    """(entity, expression) of the record a fact writes: the tool's record or a referenced one."""
    if f.kind not in ("record", "toggle", "count", "money", "assign"):
        return None
    if not f.subject or names_entity(f.subject, e.name):
        if f.kind == "money" and not f.subject:
            return None
        return e, A.Name(k)
    hits = [w for w, ent in v.refs.items() if names_entity(f.subject, ent) and w in pmap and not pmap[w].optional]
    if len(hits) != 1:
        return None
    return s.entities[v.refs[hits[0]]], A.Name(pmap[hits[0]].name)


def _amount(pmap, phrase: str) -> A.Expr | None:

    n = parse_num(phrase)
    if n is not None:
        return A.Literal(n)
    p = pmap.get(phrase) or next((p for p in pmap.values() if p.name == ident(phrase)), None)
    if p is None or p.optional or strip_optional(p.type) not in NUMS:
        return None
    return A.Name(p.name)


def _fitting(s, t, value, clear: bool) -> A.Expr | None:
    """The literal "sets F to V" / "clears F" writes, when it fits F's type (else no statement)."""

    if clear or value is None:
        return A.Literal(None) if isinstance(t, A.OptionalType) else (default_value(s, t) if clear else None)
    b = strip_optional(t)
    if isinstance(value, bool):
        return A.Literal(value) if b == BOOL else None
    if isinstance(value, (int, float)):
        return A.Literal(float(value) if b == A.PrimType("float") else value) if b in NUMS and not (b == A.PrimType("int") and isinstance(value, float)) else None
    if b == A.PrimType("str") or (isinstance(b, A.EnumType) and value in b.values):
        return A.Literal(value)
    return None


def _the_amount(v, pmap) -> A.Expr | None:
    """"Add travel credit to a user's balance" with one `amount` parameter: that amount."""

    got = amount_param(v)
    if got is None or len(got[0]) != 1 or got[0][0] not in pmap:
        return None
    return _amount(pmap, got[0][0])


def moves_money(s, e, v, pmap, k: str) -> bool:
    """Whether the description's money moves become statements (then the name rule stays out)."""
    return any(isinstance(st, (A.Set, A.If)) and why in {f.sentence for f in v.facts if f.kind == "money"} for st, why in changes(s, e, v, pmap, k, []))


def _total(e, k: str, phrase: str) -> A.Expr | None:
    """"refunds the total / the price / the refund": the record's own total."""
    if phrase not in ("total", "price", "refund", "total price", "cost", "amount"):
        return None
    f = next((f for f in ("total", "total_price", "amount", "price", "cost") if f in e.fields and e.fields[f].type in NUMS), None)  # never null
    return A.Attr(A.Name(k), f) if f else None


def notes(body, cited) -> tuple[tuple[int, str], ...]:
    """`A.ToolDecl.notes`: one citation per statement (the first sentence that gave it); a run
    of statements read from one sentence cites it once, before the first."""
    first: dict[int, str] = {}
    for i, st in enumerate(body):
        for x, why in cited:
            if x is st and i not in first:
                first[i] = cite(why)
    return tuple((i, w) for i, w in sorted(first.items()) if first.get(i - 1) != w)


def cite_existing(v, body) -> list[tuple[A.Stmt, str]]:
    """Citations for statements the name rules wrote from prose-read state words: the status
    after ("Sets the line status to Suspended") and before ("The line must be Active")."""
    out = []
    for st in body:
        if isinstance(st, A.Require) and isinstance(st.cond, A.Binary) and st.cond.op == "!=" and isinstance(st.cond.right, A.Literal) and f"forbid:{st.cond.right.value}" in v.cites:
            out.append((st, v.cites[f"forbid:{st.cond.right.value}"]))
        if isinstance(st, A.Let) and st.name == "found" and "returns_key" in v.cites:
            out.append((st, v.cites["returns_key"]))
        if isinstance(st, A.Set) and isinstance(st.target, A.Attr) and st.target.name == "status" and "status_post" in v.cites and st.value == A.Literal(v.status_post):
            out.append((st, v.cites["status_post"]))
        if isinstance(st, A.Require) and "status_pre" in v.cites and isinstance(st.cond, A.Binary) and st.cond.right == A.Literal(v.status_pre):
            out.append((st, v.cites["status_pre"]))
    return out
