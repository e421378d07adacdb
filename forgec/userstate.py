"""A user's own initial world state: `--state ENV=FILE` and a hand-replaced `states/<env>.json`.

Tasks are only as true as the world they start from, so a given state is checked deeply
against the env's `SCHEMA` (field types, optional/null, references to other entities' keys,
key field == collection key, required fields) and every problem is reported once per field, at
the line:column of its first offending JSON value, with a count of records. Two shapes are read:
the env's own state (`{"entities": {...}, "globals": {...}}`) and a τ²-bench-style
`db.json` (top-level collections keyed by id), whose collections and fields are mapped
onto the entities by name, with a report of what mapped and what did not.

The world's own shape wins over the docs' (issue 20): fields the data has and the docs don't are
kept and learned (`learn`: nesting, lists of records, maps keyed by id, value sets) into the
effective schema (`Loaded.schema`); enums grow with the values the data uses; a field no record has
(one the synthesizer invented, say) is filled with its default; a link stored on the other side is
derived (`_derive_owners`). Writes keep the kept fields (`envrt.carry`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from forgec.codes import BAD_STATE, STATE_MAPPING
from forgec.diagnostics import Diagnostic, Span, error, info, warning
from forgec.frontends.loader import SCAN, Doc, join_pointer
from forgec.runtime.envrt import zero_value
from forgec.english import singular
from forgec.wording import norm

_MAX_INT = 2**53 - 1


class _Dups(dict):
    """A JSON object that remembers which of its keys appeared more than once (json keeps the last)."""

    dups: tuple[str, ...] = ()


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    d = _Dups(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        d.dups = tuple(k for k, _ in pairs if k in seen or seen.add(k))
    return d


@dataclass
class Loaded:
    """A validated world (None when it has errors), its diagnostics, and the mapping report lines."""

    world: dict | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    report: list[str] = field(default_factory=list)
    schema: dict | None = None  # the effective SCHEMA: the docs' plus what the data adds (kept fields, grown enums)


def read_doc(path: Path | str, text: str | None = None) -> tuple[Doc | None, list[Diagnostic]]:
    """Parse the file keeping duplicate keys visible; a syntax error is located where json stopped."""
    file = str(path)
    if text is None:
        why = not_a_state_file(path)
        if why:
            return None, [error(BAD_STATE, f"the state file {why}", Span(file), help="give a regular UTF-8 JSON file")]
    try:
        text = Path(path).read_text(encoding="utf-8") if text is None else text
    except (OSError, UnicodeDecodeError) as e:
        return None, [error(BAD_STATE, f"cannot read the state file: {e}", Span(file), help="give a UTF-8 JSON file")]
    try:
        data = json.loads(text, object_pairs_hook=_pairs)
    except ValueError as e:
        line, col = getattr(e, "lineno", 0), getattr(e, "colno", 0)
        return None, [error(BAD_STATE, f"the state file is not JSON: {getattr(e, 'msg', e)}", Span(file, line, col),
                            help="a state is a JSON object: {\"entities\": {...}, \"globals\": {...}} or a db.json of collections")]
    return Doc(file, text, "json", data), []


def not_a_state_file(path: Path | str) -> str:
    """Why `path` cannot be read as a state file ('' when it can), from `stat` alone: nothing is opened,
    so a FIFO never blocks and a /proc or /sys pseudo-file (size 0, content made up on read) is never read."""
    import stat as st

    try:
        s = os.stat(path)
    except FileNotFoundError:
        return "does not exist"
    except (OSError, ValueError) as e:
        return f"cannot be read ({getattr(e, 'strerror', None) or e})"
    if st.S_ISDIR(s.st_mode):
        return "is a folder, not a regular file"
    if not st.S_ISREG(s.st_mode):
        kind = "a FIFO" if st.S_ISFIFO(s.st_mode) else "a socket" if st.S_ISSOCK(s.st_mode) else "a device"
        return f"is {kind}, not a regular file"
    if s.st_size == 0:
        return "is empty (or a special file such as one under /proc, which reports no size)"
    return ""


_ENUM_MAX = 20  # a learned string field with at most this many distinct values (each seen 3+ times on average) is a value set


def _id_like(k: str) -> bool:
    """A map key that is a value (an id, a date), not a field name: `"9612497925"`, `"2024-05-01"`, `"#W0001"`."""
    return sum(c.isdigit() for c in k) >= 3


def learn(values: list) -> dict:
    """The type-json of the values one field holds across a world (docs/contracts.md "Type JSON", plus
    `{"type": "map", "values": T, "key_field"?: f}` for an object keyed by ids): nesting, lists of records,
    maps keyed by id and small value sets (`enum`), learned from the data. Deterministic in the values' order."""
    present = [v for v in values if v is not None]
    t = _learn(present)
    if len(present) < len(values):
        t["optional"] = True
    return t


def _learn(vs: list) -> dict:
    if not vs:
        return {"type": "any"}
    kinds = {_kind(v) for v in vs}
    if kinds == {"bool"}:
        return {"type": "bool"}
    if kinds == {"int"}:
        return {"type": "int"}
    if kinds <= {"int", "float"}:
        return {"type": "float"}
    if kinds == {"string"}:
        distinct = set(vs)
        if 1 < len(distinct) <= _ENUM_MAX and len(vs) >= 3 * len(distinct):
            return {"type": "enum", "values": sorted(distinct)}
        return {"type": "str"}
    if kinds == {"list"}:
        return {"type": "list", "items": learn([x for v in vs for x in v])}
    if kinds == {"object"}:
        entries = [(k, x) for d in vs for k, x in d.items()]
        if entries and all(isinstance(x, dict) for _, x in entries):
            key_fields = None
            for k, x in entries:  # the fields holding their own map key in every entry
                kf = {f for f, y in x.items() if y == k}
                key_fields = kf if key_fields is None else key_fields & kf
            if key_fields or all(_id_like(k) for k, _ in entries):
                t = {"type": "map", "values": learn([x for _, x in entries])}
                if key_fields:
                    t["key_field"] = sorted(key_fields)[0]
                return t
        elif entries and all(_id_like(k) for k, _ in entries):
            return {"type": "map", "values": learn([x for _, x in entries])}
        names: dict[str, list] = {}
        for d in vs:
            for f, x in d.items():
                names.setdefault(f, []).append(x)
        fields = {}
        for f, xs in names.items():
            fields[f] = learn(xs)
            if len(xs) < len(vs):
                fields[f]["optional"] = True
        return {"type": "object", "fields": fields}
    return {"type": "any"}


def _leaves(t: dict, prefix: str = "") -> list[tuple[str, dict]]:
    """Every (dotted path, type) inside a learned object type (`name.first_name`)."""
    out = []
    for f, ft in (t.get("fields") or {}).items():
        out.append((prefix + f, ft))
        if ft.get("type") == "object":
            out += _leaves(ft, prefix + f + ".")
    return out


def _record_fields(t: dict, schema: dict) -> set[str] | None:
    """The field names of a (list of) record/object type, None for another type."""
    t = t.get("items", t) if t.get("type") == "list" else t
    if t.get("type") == "record":
        return set(schema.get("records", {}).get(t.get("name"), {}).get("fields", {}))
    if t.get("type") == "object":
        return set(t.get("fields") or {})
    return None


@dataclass
class _Group:
    """One problem (or one fact) about one field, across every record that has it: reported once."""

    pointer: str
    message: str
    help: str
    count: int = 0
    records: set = field(default_factory=set)
    values: dict = field(default_factory=dict)  # enum growth: value -> records using it
    type: dict | None = None  # enum growth: the (copied) enum type that grows


@dataclass
class _Context:
    """The records one `fields` dict of the schema describes (an entity, a record type, an inline object)."""

    path: str  # where it was first met, as a data path: `Reservation.flights[]`
    fields: dict  # the (copied) schema's fields dict: learned fields are added to it
    entity: str  # the top entity its records belong to
    n: int = 0
    extra: dict = field(default_factory=dict)  # field -> values (fields the data has and the docs don't)
    missing: dict = field(default_factory=dict)  # field -> [(record dict, pointer)]
    present: dict = field(default_factory=dict)  # field -> records having it


class _Checker:
    """Walks a world against a SCHEMA; `where(pointer)` locates a value in the user's file.

    What does not fit is grouped per field (one diagnostic per field and problem, with a count of records);
    fields the data has and the docs don't are kept and learned (`schema`); enums grow with the values the
    data uses; a required field no record of a collection has is filled with its default (the docs', or the
    synthesizer's, field is not in this world), one a few records lack is an error."""

    def __init__(self, schema: dict, doc: Doc, world: dict, pointer_of: Callable[..., str]):
        self.schema = json.loads(json.dumps(schema))  # the effective schema: the docs' plus what the data adds
        self.doc, self.world, self.ptr = doc, world, pointer_of
        self.diags: list[Diagnostic] = []
        self.groups: dict[tuple, _Group] = {}
        self.ctxs: dict[int, _Context] = {}
        self.rec_id: tuple = ()  # the top record being walked: (entity, key)
        self.path = ""  # its data path pattern: `Reservation.flights[]`

    def bad(self, pointer: str, msg: str, help: str = "", group: tuple | None = None) -> None:
        """One problem; with `group` (what, field), every later one of that group only counts."""
        if group is None:
            self.diags.append(error(BAD_STATE, msg, value_span(self.doc, pointer), help=help))
            return
        g = self.groups.get(group)
        if g is None:
            g = self.groups[group] = _Group(pointer, msg, help)
        g.count += 1
        g.records.add(self.rec_id)

    def value(self, v: Any, t: dict, pointer: str, what: str, path: str) -> None:
        """One value against one type-json (docs/contracts.md "Type JSON")."""
        k = t.get("type")
        if v is None:
            if not t.get("optional") and k != "any":
                self.bad(pointer, f"{what} is null but its type {k} is not optional", "give a value, or declare the field `T?`", ("null", path))
            return
        if k == "any":
            self.plain(v, pointer, what, path)
            return
        if k == "str" and not isinstance(v, str) or k == "bool" and not isinstance(v, bool):
            self.bad(pointer, f"{what} must be a {k}, got {_kind(v)} {_short(v)}", group=("type", path))
        elif k == "int" and (isinstance(v, bool) or not isinstance(v, int) or abs(v) > _MAX_INT):
            self.bad(pointer, f"{what} must be an int (|n| <= 2**53-1), got {_kind(v)} {_short(v)}", group=("type", path))
        elif k == "float" and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or abs(v) > _MAX_INT):
            self.bad(pointer, f"{what} must be a finite number, got {_kind(v)} {_short(v)}", group=("type", path))
        elif k == "enum" and v not in t.get("values", []):
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):  # the data's own value: the enum grows
                g = self.groups.get(("enum", path))
                if g is None:
                    g = self.groups[("enum", path)] = _Group(pointer, "", "", type=t)
                g.values.setdefault(v, set()).add(self.rec_id)
                g.records.add(self.rec_id)
            else:
                self.bad(pointer, f"{what} is {_short(v)}, not one of the allowed values", group=("type", path))
        elif k == "list":
            if not isinstance(v, list):
                self.bad(pointer, f"{what} must be a list, got {_kind(v)} {_short(v)}", group=("type", path))
                return
            it = t.get("items", {"type": "any"})
            for i, x in enumerate(v):
                self.value(x, it, join_pointer(pointer, i), f"{what}[{i}]", path + "[]")
        elif k == "ref":
            self.ref(v, t["entity"], pointer, what, path)
        elif k in ("record", "object"):
            fields = t.get("fields") if k == "object" else self.schema.get("records", {}).get(t.get("name"), {}).get("fields")
            if not isinstance(v, dict):
                self.bad(pointer, f"{what} must be an object, got {_kind(v)} {_short(v)}", group=("type", path))
                return
            if fields is None:
                fields = t["fields"] = {}
            self.fields(v, fields, lambda f: join_pointer(pointer, f), pointer, what, path)
        else:
            self.plain(v, pointer, what, path)

    def plain(self, v: Any, pointer: str, what: str, path: str) -> None:
        """A value of no declared type (a kept field, `any`): only what every state must hold (finite numbers)."""
        if isinstance(v, dict):
            for f, x in v.items():
                self.plain(x, join_pointer(pointer, f), f"{what}.{f}", f"{path}.{f}")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                self.plain(x, join_pointer(pointer, i), f"{what}[{i}]", path + "[]")
        elif isinstance(v, float) and (not math.isfinite(v) or abs(v) > _MAX_INT) or type(v) is int and abs(v) > _MAX_INT:
            self.bad(pointer, f"{what} must be a finite number within ±(2**53-1), got {_short(v)}", group=("number", path))

    def ref(self, v: Any, entity: str, pointer: str, what: str, path: str) -> None:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            self.bad(pointer, f"{what} must be the key of a {entity}, got {_kind(v)} {_short(v)}", group=("type", path))
        elif str(v) not in self.world["entities"].get(entity, {}):
            self.bad(pointer, f"{what} refers to {entity} {_short(v)}, which is not in the state",
                     f"add a {entity} with that key, or refer to an existing one", ("ref", path))

    def fields(self, rec: dict, fields: dict, fptr: Callable[[str], str], at: str, what: str, path: str) -> None:
        """Required fields present (defaults and optionals filled in), unknown fields kept, each value typed."""
        c = self.ctxs.get(id(fields))
        if c is None:
            c = self.ctxs[id(fields)] = _Context(path, fields, self.rec_id[0] if self.rec_id else "")
        c.n += 1
        for f in rec:
            if f not in fields:
                c.extra.setdefault(f, []).append(rec[f])
                self.plain(rec[f], fptr(f), f"{what}.{f}", f"{path}.{f}")
        for f, t in fields.items():
            if f not in rec:
                if "default" in t:
                    rec[f] = json.loads(json.dumps(t["default"]))
                elif t.get("optional"):
                    rec[f] = None
                else:
                    c.missing.setdefault(f, []).append((rec, at, what, self.rec_id))
                continue
            c.present[f] = c.present.get(f, 0) + 1
            self.value(rec[f], t, fptr(f), f"{what}.{f}", f"{path}.{f}")
        for d in getattr(rec, "dups", ()):
            self.bad(fptr(d), f"{what} has the field {d!r} twice (JSON keeps only the last)")

    def run(self) -> None:
        ents = self.schema.get("entities", {})
        for e, coll in self.world["entities"].items():
            key_field = ents[e]["key"]
            for d in getattr(coll, "dups", ()):
                self.bad(self.ptr(e, d), f"{e} {d!r} appears twice in the collection (JSON keeps only the last)",
                         "every record needs its own key")
            for k, rec in coll.items():
                what = f"{e}[{k!r}]"
                self.rec_id = (e, k)
                if not isinstance(rec, dict):
                    self.bad(self.ptr(e, k), f"{what} must be an object, got {_kind(rec)}", group=("type", e))
                    continue
                self.fields(rec, ents[e]["fields"], lambda f, e=e, k=k: self.ptr(e, k, f), self.ptr(e, k), what, e)
                if key_field in rec and str(rec[key_field]) != k:
                    self.bad(self.ptr(e, k, key_field), f"{what}.{key_field} is {_short(rec[key_field])}, but the record is stored under {k!r}",
                             f"a record's key field must equal its key in the collection ({key_field!r})")
        self.rec_id = ("globals", "")
        globs = self.world.setdefault("globals", {})
        self.fields(globs, self.schema.setdefault("globals", {}), lambda f: join_pointer("/globals", f), "/globals", "globals", "globals")
        self.finish()

    def finish(self) -> None:
        """Turn the groups into one diagnostic per field; fill fields no record has; learn the kept fields."""
        totals = {e: len(c) for e, c in self.world["entities"].items()}
        notes: list[str] = []
        for c in self.ctxs.values():
            for f in sorted(c.missing, key=list(c.fields).index):
                miss = c.missing[f]
                t = c.fields[f]
                if c.present.get(f, 0) == 0:
                    zero = zero_value(t)
                    for rec, *_ in miss:
                        rec[f] = json.loads(json.dumps(zero))
                    t["optional"] = True  # this world does not have the field: no record of it may be required to
                    self.diags.append(warning(STATE_MAPPING, f"{c.path}.{f}: no record has this field ({len(miss)} record(s)); "
                                              f"filled with {_short(zero)}", value_span(self.doc, miss[0][1]),
                                              help=self._near(c, f, t)))
                    continue
                rec, at, what, rid = miss[0]
                n_rec = len({m[3] for m in miss})
                more = f" (and {n_rec - 1} more of {totals.get(c.entity, n_rec)} {c.entity} records)" if n_rec > 1 else ""
                self.diags.append(error(BAD_STATE, f"{what} lacks the required field {f!r}{more}", value_span(self.doc, at),
                                        help=f"add \"{f}\": <{t.get('type')}>"))
            for f, vals in c.extra.items():
                t = self._as_ref(f, learn(vals), vals)
                if len(vals) < c.n:
                    t["optional"] = True
                t["learned"] = True
                c.fields[f] = t
                notes.append(f"{c.path}.{f} ({_type_name(t)})")
        for (kind, path), g in self.groups.items():
            if kind == "enum":
                t = g.type
                new = sorted(g.values, key=lambda v: (str(type(v)), v))
                t["values"] = list(t.get("values", [])) + new
                used = ", ".join(f"{_short(v)} ({len(g.values[v])} record(s))" for v in new)
                self.diags.append(warning(STATE_MAPPING, f"{path}: the data uses {used}, which the docs do not list; the allowed "
                                          f"values grow to {', '.join(_short(v) for v in t['values'])}", value_span(self.doc, g.pointer),
                                          help="a value your world uses is a state of it; correct it in the file if it is a typo"))
                continue
            e = next(iter(g.records))[0] if g.records else ""
            more = f" (and {len(g.records) - 1} more of {totals.get(e, len(g.records))} {e} records)" if len(g.records) > 1 else (
                f" ({g.count} values)" if g.count > 1 else "")
            self.diags.append(error(BAD_STATE, g.message + more, value_span(self.doc, g.pointer), help=g.help))
        if notes:
            self.diags.append(info(STATE_MAPPING, "kept the fields the data has and the docs don't (carried through every write): "
                                   + ", ".join(notes), Span(self.doc.file)))

    def _as_ref(self, f: str, t: dict, vals: list) -> dict:
        """A kept field whose name names an entity (or its key) and whose every value is a key of it is a reference:
        `Order.user_id` -> `{"type": "ref", "entity": "User"}` (lists of keys alike)."""
        items = t.get("type") == "list"
        st = t.get("items", {}) if items else t
        if st.get("type") not in ("str", "enum", "int"):
            return t
        xs = [x for v in vals for x in (v if items and isinstance(v, list) else [v]) if x is not None]
        ents = self.schema.get("entities", {})
        for e in sorted(ents):
            coll = self.world["entities"].get(e) or {}
            names = {norm(e), norm(singular(ents[e]["key"])), norm(ents[e]["key"])}
            if coll and xs and any(n and n in norm(singular(f)) for n in names) and all(str(x) in coll for x in xs):
                ref = {"type": "ref", "entity": e, **{k: v for k, v in st.items() if k == "optional"}}
                return dict(t, items=ref) if items else ref
        return t

    def _near(self, c: _Context, f: str, t: dict) -> str:
        """Where the data may hold what the docs call `f`: a nested field of that name, or a kept field of the same shape."""
        hints = []
        for g, vals in c.extra.items():
            lt = learn(vals)
            hints += [f"{g}.{p}" for p, _ in _leaves(lt) if p.rsplit(".", 1)[-1] == f]
            want, got = _record_fields(t, self.schema), _record_fields(lt, self.schema)
            if want and got and want <= got and (t.get("type") == "list") == (lt.get("type") == "list"):
                hints.append(g)
        return (f"the data has {', '.join(sorted(hints))}; " if hints else "") + "the env's tools see the filled value"


def _type_name(t: dict) -> str:
    k = t.get("type")
    if k == "list":
        return f"list of {_type_name(t.get('items', {}))}"
    if k == "map":
        return f"map of {_type_name(t.get('values', {}))}" + (f" keyed by {t['key_field']}" if t.get("key_field") else "")
    if k == "object":
        return "record"
    return k + ("?" if t.get("optional") else "")


def _derive_owners(schema: dict, world: dict, diags: list[Diagnostic], file: str) -> None:
    """Ownership stored on the other side: a declared `Line.customer_id: Customer` no Line has, from a list of
    Line keys in each Customer (`Customer.line_ids`); a declared `Customer.lines: list[Line]` no Customer has,
    from the Lines' field holding a Customer key (`Line.customer_id`). Only a field no record has is derived."""
    ents = schema.get("entities", {})
    colls = world["entities"]
    for kind, e in [(kind, e) for kind in ("ref", "list") for e in colls]:  # a link derived first can give a list
        coll = colls[e]
        if not coll:
            continue
        for f, t in ents[e]["fields"].items():
            if t.get("type") != kind or any(f in r for r in coll.values() if isinstance(r, dict)):
                continue
            if t.get("type") == "ref" and t["entity"] in colls:
                found = _inverse_list(colls[t["entity"]], coll, e)
                if found:
                    g, owner = found
                    okf = ents[t["entity"]]["key"]
                    for k, o in owner.items():
                        coll[k][f] = colls[t["entity"]][o].get(okf, o)
                    diags.append(info(STATE_MAPPING, f"{e}.{f}: taken from {t['entity']}.{g} (the data stores the link on the other side; "
                                      f"{len(owner)} of {len(coll)} {e} records)", Span(file)))
            elif t.get("type") == "list" and t.get("items", {}).get("type") == "ref" and t["items"]["entity"] in colls:
                child = t["items"]["entity"]
                found = _back_ref(colls[child], coll, e, ents[child]["key"])
                if found:
                    g, lists = found
                    for k in coll:
                        if isinstance(coll[k], dict):
                            coll[k][f] = lists.get(k, [])
                    diags.append(info(STATE_MAPPING, f"{e}.{f}: taken from {child}.{g} (the data stores the link on the other side; "
                                      f"{sum(map(len, lists.values()))} {child} records)", Span(file)))


def _prefer(names: list[str], entity: str) -> list[str]:
    """Candidate fields, those whose name names the entity first (`line_ids` for Line), then by name."""
    stem = norm(entity)
    return sorted(names, key=lambda g: (stem not in norm(g), g))


def _inverse_list(owners: dict, children: dict, child: str) -> tuple[str, dict] | None:
    """A field of the owners listing child keys, each child under at most one owner: (field, child key -> owner key)."""
    names = {g for r in owners.values() if isinstance(r, dict) for g, v in r.items() if isinstance(v, (list, dict)) and v}
    for g in _prefer(list(names), child):
        owner: dict = {}
        ok = True
        for ok_, r in owners.items():
            v = r.get(g) if isinstance(r, dict) else None
            keys = list(v) if isinstance(v, (list, dict)) else []
            for x in keys:
                if isinstance(x, bool) or not isinstance(x, (str, int)) or str(x) not in children or str(x) in owner:
                    ok = False
                    break
                owner[str(x)] = ok_
            if not ok:
                break
        if ok and owner:
            return g, owner
    return None


def _back_ref(children: dict, owners: dict, owner: str, child_key: str) -> tuple[str, dict] | None:
    """A field of the children holding an owner key in every child that has it (at least half of them):
    (field, owner key -> child keys in collection order)."""
    names = {g for r in children.values() if isinstance(r, dict) for g, v in r.items() if isinstance(v, (str, int)) and not isinstance(v, bool)}
    for g in _prefer(list(names), owner):
        lists: dict = {}
        ok, n = True, 0
        for ck, r in children.items():
            v = r.get(g) if isinstance(r, dict) else None
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (str, int)) or str(v) not in owners:
                ok = False
                break
            n += 1
            lists.setdefault(str(v), []).append(r.get(child_key, ck))
        if ok and n * 2 >= len(children):
            return g, lists
    return None



def value_span(doc: Doc, pointer: str) -> Span:
    """Where the JSON value at `pointer` starts (the loader's spans point at a member's key)."""
    span = doc.span(pointer)  # locates (and scans) the path lazily
    loc = (doc._locators or {}).get("")
    hit = loc.spans.get(pointer) if loc is not None else None
    if hit is None:
        return span
    start = hit[2]
    end = start + 1 if doc.text[start] in "{[" else SCAN(doc.text, start)[1]
    (line, col), (end_line, end_col) = doc._line_col(start), doc._line_col(end)
    return Span(doc.file, line, col, end_line, end_col, pointer=pointer)


def _kind(v: Any) -> str:
    k = _KINDS.get(type(v))
    return k if k is not None else "object" if isinstance(v, dict) else type(v).__name__


_KINDS = {dict: "object", _Dups: "object", list: "list", str: "string", bool: "bool", int: "int", float: "float", type(None): "null"}


def _short(v: Any) -> str:
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 40 else s[:37] + "..."


def _native(schema: dict, doc: Doc) -> Loaded:
    """The env's own layout: every declared entity a collection keyed by its key field."""
    data = doc.data
    out = Loaded(None)
    ents = data.get("entities")
    if not isinstance(ents, dict):
        out.diagnostics.append(error(BAD_STATE, "\"entities\" must be an object of collections", value_span(doc, "/entities")))
        return out
    for k in sorted(set(data) - {"entities", "globals"}):
        out.diagnostics.append(error(BAD_STATE, f"unknown top-level key {k!r}", value_span(doc, join_pointer("", k)),
                                     help="a state has only \"entities\" and \"globals\""))
    world: dict = {"entities": {}, "globals": data.get("globals") if isinstance(data.get("globals"), dict) else {}}
    for e, coll in ents.items():
        if e not in schema["entities"]:
            out.diagnostics.append(error(BAD_STATE, f"unknown entity {e!r}", value_span(doc, join_pointer("/entities", e)),
                                         help=f"the env's entities: {', '.join(schema['entities'])}"))
        elif not isinstance(coll, dict):
            out.diagnostics.append(error(BAD_STATE, f"collection {e!r} must be an object keyed by {schema['entities'][e]['key']!r}",
                                         value_span(doc, join_pointer("/entities", e))))
        else:
            world["entities"][e] = coll
    for e in schema["entities"]:
        world["entities"].setdefault(e, {})
    return _finish(schema, doc, world, lambda e, k, f=None: join_pointer("/entities", e, k, *(() if f is None else (f,))), out)


def _finish(schema: dict, doc: Doc, world: dict, ptr: Callable[..., str], out: Loaded) -> Loaded:
    _derive_owners(schema, world, out.diagnostics, doc.file)
    c = _Checker(schema, doc, world, ptr)
    c.run()
    out.diagnostics.extend(c.diags)
    out.schema = c.schema
    if not any(d.is_error for d in out.diagnostics):
        out.world = json.loads(json.dumps(world, sort_keys=True))  # plain dicts, canonical order
    return out


def _match(name: str, candidates: list[str]) -> str | None:
    """The candidate named like `name`: case, separators and plural/singular ignored."""
    want = {norm(name), norm(singular(name))}
    for c in candidates:
        if {norm(c), norm(singular(c))} & want:
            return c
    return None


def match_name(name: str, candidates: list[str]) -> str | None:
    """The entity a collection or field name denotes (`users` -> User): the public name of `_match`."""
    return _match(name, candidates)


def nested_records(v: Any) -> list[tuple[str | None, dict]]:
    """The records of a nested collection (the public name of `_nested_records`)."""
    return _nested_records(v)


def _db(schema: dict, doc: Doc) -> Loaded:
    """A τ²-style db.json: collections (objects keyed by id, or lists) mapped onto entities by name."""
    out = Loaded(None)
    ents = schema["entities"]
    world: dict = {"entities": {e: {} for e in ents}, "globals": {}}
    where: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}  # (entity, key) -> (record pointer, field -> raw name)
    seen: set[str] = set()
    for coll_name, coll in doc.data.items():
        cp = join_pointer("", coll_name)
        e = _match(coll_name, list(ents))
        if e is None or not isinstance(coll, (dict, list)):
            out.report.append(f"{coll_name}: not mapped (no entity of that name)")
            out.diagnostics.append(warning(STATE_MAPPING, f"collection {coll_name!r} maps to no entity; it is left out",
                                           value_span(doc, cp), help=f"the env's entities: {', '.join(ents)}"))
            continue
        key_field, fields = ents[e]["key"], ents[e]["fields"]
        seen.add(e)
        items = coll.items() if isinstance(coll, dict) else ((None, r) for r in coll)
        unmapped: set[str] = set()
        mapped: set[str] = set()
        for i, (k, raw) in enumerate(items):
            rp = join_pointer(cp, k if k is not None else i)
            if not isinstance(raw, dict):
                out.diagnostics.append(error(BAD_STATE, f"{coll_name} record {k or i!r} must be an object", value_span(doc, rp)))
                continue
            rec, names = _map_record(raw, list(fields), mapped, unmapped)
            if k is None:
                k = str(rec.get(key_field, ""))
            rec.setdefault(key_field, k)
            if k in world["entities"][e]:
                out.diagnostics.append(error(BAD_STATE, f"{e} {k!r} appears twice in {coll_name!r}", value_span(doc, rp),
                                             help="every record needs its own key"))
                continue
            world["entities"][e][k] = rec
            where[(e, k)] = (rp, names)
        for d in getattr(coll, "dups", ()):
            out.diagnostics.append(error(BAD_STATE, f"{e} {d!r} appears twice in {coll_name!r} (JSON keeps only the last)",
                                         value_span(doc, join_pointer(cp, d)), help="every record needs its own key"))
        out.report.append(f"{coll_name} -> {e}: {len(world['entities'][e])} record(s); fields mapped: "
                          f"{', '.join(sorted(mapped)) or '(none)'}; kept as they are (not in the docs): {', '.join(sorted(unmapped)) or '(none)'}")
    for e in [e for e in ents if e not in seen]:
        n, found_in = _lift_nested(schema, world, e)
        if n:
            out.report.append(f"{e}: {n} record(s) found nested in other records ({', '.join(found_in)})")
        else:
            out.report.append(f"{e}: no collection in the file (starts empty)")
    _flatten_nested_fields(schema, world)

    def ptr(e: str, k: str, f: str | None = None) -> str:
        rp, names = where.get((e, k), (join_pointer("", e, k), {}))
        return rp if f is None else (join_pointer(rp, names[f]) if f in names else rp)

    out.diagnostics.append(info(STATE_MAPPING, "mapped the collections onto the entities: " + "; ".join(out.report), Span(doc.file)))
    return _finish(schema, doc, world, ptr, out)


def _nested_records(v: Any) -> list[tuple[str | None, dict]]:
    """The records of a nested collection: a list of objects, or an object keyed by id whose values are objects."""
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        return [(None, x) for x in v]
    if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
        return [(str(k), x) for k, x in v.items()]
    return []


def _lift_nested(schema: dict, world: dict, e: str) -> tuple[int, list[str]]:
    """An entity the file has no collection for, whose records the data nests inside others (a user's
    `payment_methods` keyed by id, an order's `items`, a product's `variants` holding `item_id`s):
    each nested record becomes one of the entity's too, keyed by its key field (or its `id`, or the
    key it is stored under), with a link back to its owner (the declared reference, else the owner's key name). The nested
    copy stays where it is (the data's own shape); the first record seen for a key wins. -> (records
    lifted, the owner.field collections they came from). Without this,
    every call naming one failed `not-found` (issue 20: 29 + 18 + 9 τ-bench calls on payment methods,
    617 on items)."""
    ents = schema["entities"]
    key = ents[e]["key"]
    fields = list(ents[e]["fields"])
    found = 0
    where: list[str] = []
    # collections named for the entity first (a user's `payment_methods`), then any holding its key (an order's
    # `payment_history` entries name a payment method, but are payments): the first record for a key wins
    for by_name, owner in [(n, o) for n in (True, False) for o in sorted(world["entities"])]:
        if owner == e:
            continue
        okey = ents.get(owner, {}).get("key")
        # the link back: the field the docs declare for it, else the owner's key name (`user_id`), kept like any data field
        back = next((f for f, t in ents[e]["fields"].items() if t.get("type") == "ref" and t.get("entity") == owner), okey)
        for ok, orec in sorted(world["entities"][owner].items()):
            if not isinstance(orec, dict):
                continue
            for fname, v in orec.items():
                recs = _nested_records(v)
                if not recs:
                    continue
                named = {norm(fname), norm(singular(fname))} & {norm(e)}
                keyed = all(any(norm(k) == norm(key) for k in r) for _, r in recs)
                if not (named if by_name else keyed and not named):
                    continue
                for nk, raw in recs:
                    rec, _ = _map_record(raw, fields, set(), set())
                    k = rec.get(key, raw.get("id", nk))
                    if k is None or not isinstance(k, (str, int)) or isinstance(k, bool):
                        continue
                    k = str(k)
                    rec.setdefault(key, k)
                    if back and back not in rec:
                        rec[back] = orec.get(okey, ok)
                    if k not in world["entities"][e]:
                        world["entities"][e][k] = rec
                        found += 1
                if f"{owner}.{fname}" not in where:
                    where.append(f"{owner}.{fname}")
    return found, where


def _flatten_nested_fields(schema: dict, world: dict) -> None:
    """A field the docs declare at the top of a record (`first_name`) that the data keeps inside a
    nested object (`name.first_name`) is also given at the top, so the docs' lookups (find a user by
    first and last name) read it. Only when exactly one nested object holds it, and the record lacks it."""
    for e, coll in world["entities"].items():
        declared = schema["entities"].get(e, {}).get("fields", {})
        for rec in coll.values():
            if not isinstance(rec, dict):
                continue
            for f in declared:
                if f in rec:
                    continue
                holders = [v for v in rec.values() if isinstance(v, dict) and f in v and not isinstance(v[f], (dict, list))]
                if len(holders) == 1:
                    rec[f] = holders[0][f]


def _map_record(raw: dict, fields: list[str], mapped: set[str], unmapped: set[str]) -> tuple[dict, dict[str, str]]:
    """A db record's fields renamed onto the entity's (by `norm`); the others are kept under their own names."""
    rec: dict = {}
    names: dict[str, str] = {}
    by_norm = {norm(f): f for f in fields}
    for name, v in raw.items():
        f = by_norm.get(norm(name))
        if f is None or f in rec:
            unmapped.add(name)
            rec[name], names[name] = v, name
            continue
        mapped.add(name if name == f else f"{name}->{f}")
        rec[f], names[f] = v, name
    return rec, names


def load_state(schema: dict, path: Path | str, text: str | None = None) -> Loaded:
    """Read, map (db.json) and validate a user's state for an env with this SCHEMA."""
    doc, diags = read_doc(path, text)
    if doc is None:
        return Loaded(None, diags)
    return load_doc(schema, doc)


def load_doc(schema: dict, doc: Doc) -> Loaded:
    """Map (db.json) and validate an already parsed state file (`read_doc`)."""
    if not isinstance(doc.data, dict):
        return Loaded(None, [error(BAD_STATE, f"a state must be a JSON object, got {_kind(doc.data)}", value_span(doc, ""))])
    if "entities" in doc.data and not any(_match(k, list(schema["entities"])) for k in doc.data if k != "entities"):
        return _native(schema, doc)
    return _db(schema, doc)
