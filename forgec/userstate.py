"""A user's own initial world state: `--state ENV=FILE` and a hand-replaced `states/<env>.json`.

Tasks are only as true as the world they start from, so a given state is checked deeply
against the env's `SCHEMA` (field types, enums, optional/null, references to other
entities' keys, key field == collection key, no unknown or missing fields) and every
problem is reported at the line:column of the offending JSON value. Two shapes are read:
the env's own state (`{"entities": {...}, "globals": {...}}`) and a τ²-bench-style
`db.json` (top-level collections keyed by id), whose collections and fields are mapped
onto the entities by name, with a report of what mapped and what did not.
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
from forgec.synth.names import singular
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


class _Checker:
    """Walks a world against a SCHEMA; `where(pointer)` locates a value in the user's file."""

    def __init__(self, schema: dict, doc: Doc, world: dict, pointer_of: Callable[..., str]):
        self.schema, self.doc, self.world, self.ptr = schema, doc, world, pointer_of
        self.diags: list[Diagnostic] = []

    def bad(self, pointer: str, msg: str, help: str = "") -> None:
        self.diags.append(error(BAD_STATE, msg, value_span(self.doc, pointer), help=help))

    def value(self, v: Any, t: dict, pointer: str, what: str) -> None:
        """One value against one type-json (docs/contracts.md "Type JSON")."""
        k = t.get("type")
        if v is None:
            if not t.get("optional") and k != "any":
                self.bad(pointer, f"{what} is null but its type {k} is not optional", "give a value, or declare the field `T?`")
            return
        if k == "any":
            return
        if k == "str" and not isinstance(v, str) or k == "bool" and not isinstance(v, bool):
            self.bad(pointer, f"{what} must be a {k}, got {_kind(v)} {_short(v)}")
        elif k == "int" and (isinstance(v, bool) or not isinstance(v, int) or abs(v) > _MAX_INT):
            self.bad(pointer, f"{what} must be an int (|n| <= 2**53-1), got {_kind(v)} {_short(v)}")
        elif k == "float" and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or abs(v) > _MAX_INT):
            self.bad(pointer, f"{what} must be a finite number, got {_kind(v)} {_short(v)}")
        elif k == "enum" and v not in t.get("values", []):
            vals = ", ".join(repr(x) for x in t.get("values", []))
            self.bad(pointer, f"{what} is {_short(v)}, not one of the allowed values", f"use one of: {vals}")
        elif k == "list":
            if not isinstance(v, list):
                self.bad(pointer, f"{what} must be a list, got {_kind(v)} {_short(v)}")
                return
            for i, x in enumerate(v):
                self.value(x, t.get("items", {"type": "any"}), join_pointer(pointer, i), f"{what}[{i}]")
        elif k == "ref":
            self.ref(v, t["entity"], pointer, what)
        elif k in ("record", "object"):
            fields = t.get("fields") if k == "object" else self.schema.get("records", {}).get(t.get("name"), {}).get("fields", {})
            if not isinstance(v, dict):
                self.bad(pointer, f"{what} must be an object, got {_kind(v)} {_short(v)}")
                return
            self.fields(v, fields or {}, lambda f: join_pointer(pointer, f), pointer, what)

    def ref(self, v: Any, entity: str, pointer: str, what: str) -> None:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            self.bad(pointer, f"{what} must be the key of a {entity}, got {_kind(v)} {_short(v)}")
        elif str(v) not in self.world["entities"].get(entity, {}):
            self.bad(pointer, f"{what} refers to {entity} {_short(v)}, which is not in the state",
                     f"add a {entity} with that key, or refer to an existing one")

    def fields(self, rec: dict, fields: dict, fptr: Callable[[str], str], at: str, what: str) -> None:
        """Required fields present (defaults and optionals filled in), no unknown field, each value typed."""
        for f in sorted(set(rec) - set(fields)):
            self.bad(fptr(f), f"{what} has an unknown field {f!r}", f"known fields: {', '.join(fields) or '(none)'}")
        for f, t in fields.items():
            if f not in rec:
                if "default" in t:
                    rec[f] = json.loads(json.dumps(t["default"]))
                elif t.get("optional"):
                    rec[f] = None
                else:
                    self.bad(at, f"{what} lacks the required field {f!r}", f"add \"{f}\": <{t.get('type')}>")
                continue
            self.value(rec[f], t, fptr(f), f"{what}.{f}")
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
                if not isinstance(rec, dict):
                    self.bad(self.ptr(e, k), f"{what} must be an object, got {_kind(rec)}")
                    continue
                self.fields(rec, ents[e]["fields"], lambda f, e=e, k=k: self.ptr(e, k, f), self.ptr(e, k), what)
                if key_field in rec and str(rec[key_field]) != k:
                    self.bad(self.ptr(e, k, key_field), f"{what}.{key_field} is {_short(rec[key_field])}, but the record is stored under {k!r}",
                             f"a record's key field must equal its key in the collection ({key_field!r})")
        globs = self.world.setdefault("globals", {})
        self.fields(globs, self.schema.get("globals", {}), lambda f: join_pointer("/globals", f), "/globals", "globals")


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
    return {dict: "object", list: "list", str: "string", bool: "bool", int: "int", float: "float", type(None): "null"}.get(type(v), type(v).__name__)


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
    c = _Checker(schema, doc, world, ptr)
    c.run()
    out.diagnostics.extend(c.diags)
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
                          f"{', '.join(sorted(mapped)) or '(none)'}; not mapped (left out): {', '.join(sorted(unmapped)) or '(none)'}")
        if unmapped:
            out.diagnostics.append(warning(STATE_MAPPING, f"{coll_name} -> {e}: field(s) {', '.join(sorted(unmapped))} match no field of {e} and are left out",
                                           value_span(doc, cp), help=f"{e}'s fields: {', '.join(fields)}"))
    for e in [e for e in ents if e not in seen]:
        out.report.append(f"{e}: no collection in the file (starts empty)")

    def ptr(e: str, k: str, f: str | None = None) -> str:
        rp, names = where.get((e, k), (join_pointer("", e, k), {}))
        return rp if f is None else (join_pointer(rp, names[f]) if f in names else rp)

    out.diagnostics.append(info(STATE_MAPPING, "mapped the collections onto the entities: " + "; ".join(out.report), Span(doc.file)))
    return _finish(schema, doc, world, ptr, out)


def _map_record(raw: dict, fields: list[str], mapped: set[str], unmapped: set[str]) -> tuple[dict, dict[str, str]]:
    """A db record's fields renamed onto the entity's (by `norm`); the others are left out and noted."""
    rec: dict = {}
    names: dict[str, str] = {}
    by_norm = {norm(f): f for f in fields}
    for name, v in raw.items():
        f = by_norm.get(norm(name))
        if f is None:
            unmapped.add(name)
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
