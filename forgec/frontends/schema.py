"""JSON Schema (and its dialects: OpenAPI 3.0/3.1, Swagger 2.0, BFCL) -> `ir.Type`.

One converter serves every frontend. `$ref`s are resolved against a root
(the whole document for OpenAPI, the schema itself for OpenAI/MCP, as JSON
Schema says) and inlined; a reference met again while it is being expanded
(a recursive schema) becomes `Type(kind="ref")` and the expanded schema is
stored in `definitions`, so nothing loops.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from forgec.diagnostics import Diagnostic, error, warning
from forgec.ir import Field_, Type


from . import codes
from .loader import Doc, join_pointer, unescape_pointer_token

# a JSON-Schema `pattern` that spells a UUID (8-4-4-4-12 hex groups), in any of the usual regex spellings
_UUID_PATTERN = re.compile(r"\{8\}[()]?-.*\{4\}.*\{12\}")

MAX_DEPTH = 64
MAX_NODES = 50_000  # expanded type nodes per parameter / return schema (real ones: tens to hundreds)

# type names of JSON Schema plus BFCL / language-ish aliases found in real docs
_TYPE_ALIASES = {
    "string": "string", "str": "string", "char": "string",
    "integer": "integer", "int": "integer", "long": "integer", "short": "integer", "byte": "integer",
    "number": "number", "float": "number", "double": "number",
    "boolean": "boolean", "bool": "boolean",
    "array": "array", "list": "array", "tuple": "array", "set": "array", "arraylist": "array",
    "object": "object", "dict": "object", "map": "object", "hashmap": "object",
    "null": "null", "none": "null",
    "any": "any",
    "file": "string",  # Swagger 2.0 `type: file`
}

# keys that tell something about a schema's type
_MAX_SAFE_INT = 2**53 - 1
_TYPE_KEYS = ("type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf", "properties", "items", "additionalProperties", "prefixItems")

ANY = Type(kind="any")


def jsonable(v: Any) -> Any:
    """YAML can hand us dates, bytes, sets: keep IR values plain JSON (dates -> ISO strings)."""
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((jsonable(x) for x in v), key=repr)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, bytes):
        import base64

        return base64.b64encode(v).decode("ascii")
    return str(v)


def has_type_info(schema: Any) -> bool:
    return isinstance(schema, dict) and any(k in schema for k in _TYPE_KEYS)


def _describe(schema: dict) -> str:
    d = schema.get("description")
    if not isinstance(d, str) or not d:
        d = schema.get("title") if isinstance(schema.get("title"), str) and "properties" not in schema else ""
    d = d.strip() if isinstance(d, str) else ""
    pat = _pattern(schema)
    bounds = _bounds(schema)
    if bounds and bounds not in d:
        d = f"{d} {bounds}".strip()
    example = _example(schema)
    if example and example not in d:
        d = f"{d} {example}".strip()
    return f"{d} (pattern: {pat})".strip() if pat and pat not in d else d


def _bounds(schema: dict) -> str:
    """A number's documented `minimum`/`maximum`, kept in its description as words every reader of the docs (the
    world's values, the gate) already reads: "(minimum 0, maximum 6)". Paperless's `matching_algorithm` is 0-6 in its
    schema only; the world held 54 and 91 (review 68)."""
    if schema.get("type") not in ("integer", "number"):
        return ""
    nums = [(w, _num(schema[w])) for w in ("minimum", "maximum") if isinstance(schema.get(w), (int, float)) and not isinstance(schema.get(w), bool)]
    d = schema.get("description") if isinstance(schema.get("description"), str) else ""
    if all(re.search(rf"(?<![\d.]){re.escape(n)}(?!\d|\.\d)", d) for _, n in nums):
        return ""  # the prose says them already ("Priority from 1 (lowest) to 4")
    return f"({', '.join(f'{w} {n}' for w, n in nums)})"


def _example(schema: dict) -> str:
    """A scalar's documented `example` (or first of `examples`), kept in its description as every reader of the docs
    sees it: '(example: "/movies")', "(example: 7878)". The world's values read it where nothing else says what a
    field holds (review 96: Overseerr documents an example for each of its 500 fields; its world held port 16 and a
    root folder "mobile app beta")."""
    v = schema.get("example")
    if v is None and isinstance(schema.get("examples"), list) and schema["examples"]:
        v = schema["examples"][0]
    if isinstance(v, bool) or v is None or schema.get("type") not in ("string", "integer", "number"):
        return ""
    if isinstance(v, (int, float)):
        return f"(example: {_num(v)})"
    if isinstance(v, str) and 0 < len(v) <= 60 and "\n" not in v and '"' not in v and v.strip() == v:
        return f'(example: "{v}")'
    return ""


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def _pattern(schema: dict) -> str | None:
    """A string's documented `pattern` (also of the one string variant of an `anyOf` with null), kept in its
    description so that every reader of the docs sees it: a value a task gives must match it (`mxc://...`,
    a room id `!...`). A UUID pattern becomes the `uuid` format instead."""
    alts = schema.get("anyOf") or schema.get("oneOf") or []
    for s in [schema] + [v for v in (alts if isinstance(alts, list) else []) if isinstance(v, dict)]:  # a damaged doc's `anyOf: 3` too
        p = s.get("pattern")
        if isinstance(p, str) and p and len(p) <= 240 and not _UUID_PATTERN.search(p) and s.get("type", "string") == "string":
            return p
    return None


def _norm_def_name(pointer: str) -> str:
    last = pointer.rsplit("/", 1)[-1] or "Root"
    return re.sub(r"\W+", "_", unescape_pointer_token(last)) or "Def"


class SchemaConverter:
    """Convert schemas found in one document; collects diagnostics and recursive definitions."""

    def __init__(self, doc: Doc, diags: list[Diagnostic], definitions: dict[str, Type]):
        self.doc = doc
        self.diags = diags
        self.definitions = definitions
        self._stack: list[tuple[int, str]] = []  # refs being expanded: (id(root), pointer)
        self._cache: dict[tuple[int, str], tuple[Type, int]] = {}  # ref -> (type, expanded size)
        self._ref_emits = 0
        self._def_names: dict[tuple[int, str], str] = {}
        self._obj_cache: dict[int, tuple[Any, Any, Type, int]] = {}
        self._budget = MAX_NODES  # bounds the expanded size (ref fan-out, YAML alias bombs); reset per top-level schema

    # ------------------------------------------------------------------ refs
    def _resolve(self, ref: str, root: Any) -> tuple[Any, str] | None:
        if not ref.startswith("#"):
            return None
        frag = unquote(ref[1:])
        if frag and not frag.startswith("/"):
            return None  # named anchors are not supported
        node = root
        for raw in frag.split("/")[1:]:
            tok = unescape_pointer_token(raw)
            if isinstance(node, dict):
                if tok in node:
                    node = node[tok]
                elif tok.isdigit() and int(tok) in node:  # YAML int keys (e.g. responses: 200)
                    node = node[int(tok)]
                else:
                    return None
            elif isinstance(node, list) and tok.isdigit() and int(tok) < len(node):
                node = node[int(tok)]
            else:
                return None
        return node, frag

    def resolve_ref(self, ref: str, root: Any, pointer: str, target: str) -> tuple[Any, str] | None:
        """`_resolve`, reporting an unresolved `$ref` at `pointer` (the object holding it);
        `target` says what the $ref should point at, for the help line."""
        hit = self._resolve(ref, root)
        if hit is None:
            why = "references to other files are not supported" if not ref.startswith("#") else "nothing at that path"
            self.diags.append(  # a warning: the schema is read as `any`, and the other tools still build
                warning(
                    codes.UNRESOLVED_REF,
                    f"cannot resolve `$ref: {ref}` ({why})",
                    self.doc.span(join_pointer(pointer, "$ref")),
                    help=f"point the $ref at {target}",
                )
            )
        return hit

    def _def_name(self, key: tuple[int, str]) -> str:
        name = self._def_names.get(key)
        if name is None:
            base = _norm_def_name(key[1])
            name, i = base, 2
            taken = set(self._def_names.values())
            while name in taken:
                name, i = f"{base}_{i}", i + 1
            self._def_names[key] = name
        return name

    def _ref(self, schema: dict, pointer: str, root: Any, root_pointer: str, depth: int) -> Type:
        ref = schema["$ref"]
        if not isinstance(ref, str):
            self.diags.append(error(codes.UNRESOLVED_REF, "`$ref` must be a string", self.doc.span(join_pointer(pointer, "$ref"))))
            return ANY
        hit = self.resolve_ref(ref, root, pointer, "a schema defined in this document, e.g. `#/components/schemas/Name`")
        if hit is None:
            return ANY
        target, frag = hit
        key = (id(root), frag)
        if key in self._stack:  # recursive schema: stop here, name it
            self._ref_emits += 1
            return Type(kind="ref", ref=self._def_name(key), description=_describe(schema) if isinstance(schema, dict) else "")
        cached = self._cache.get(key)
        if cached is not None:
            self._budget -= cached[1]
            return cached[0] if self._budget >= 0 else self._over_budget(pointer)
        emits, budget = self._ref_emits, self._budget
        self._stack.append(key)
        try:
            t = self.convert(target, root_pointer + frag, root, root_pointer, depth + 1)
        finally:
            self._stack.pop()
        if key in self._def_names:  # something inside referred back to us
            self.definitions.setdefault(self._def_names[key], t)
        if self._ref_emits == emits:  # self-contained: safe to reuse
            self._cache[key] = (t, budget - self._budget)
        # a sibling description overrides the referenced one (OpenAPI 3.1)
        if isinstance(schema.get("description"), str) and schema["description"].strip():
            t = t.model_copy(update={"description": schema["description"].strip()})
        return t

    # ------------------------------------------------------------------ main
    def convert(self, schema: Any, pointer: str, root: Any = None, root_pointer: str = "", depth: int = 0) -> Type:
        """Convert the schema at `pointer`; `root` is what `#/...` refs resolve against."""
        if root is None:  # a standalone schema: `#/...` refs point into the schema itself
            root, root_pointer = schema, pointer
        if depth == 0:
            self._budget = MAX_NODES
        self._budget -= 1
        if self._budget < 0:
            return self._over_budget(pointer)
        if depth > MAX_DEPTH:
            self.diags.append(warning(codes.SCHEMA_TOO_DEEP, f"schema nests deeper than {MAX_DEPTH} levels; the rest is read as `any`", self.doc.span(pointer)))
            return ANY
        if schema is True or schema == {}:
            return ANY
        if not isinstance(schema, dict):
            self.diags.append(
                error(
                    codes.INVALID_SCHEMA,
                    f"expected a schema object here, found {type(schema).__name__} {_short(schema)}",
                    self.doc.span(pointer),
                    help='write a JSON Schema object, e.g. {"type": "string"}',
                )
            )
            return ANY
        if "$ref" in schema:
            return self._ref(schema, pointer, root, root_pointer, depth)
        # YAML anchors/aliases share one dict between many places: convert it once
        hit = self._obj_cache.get(id(schema))
        if hit is not None and hit[0] is schema and hit[1] is root:
            self._budget -= hit[3]  # the reused subtree still counts at its expanded size
            return hit[2] if self._budget >= 0 else self._over_budget(pointer)
        emits, n_diags, budget = self._ref_emits, len(self.diags), self._budget
        desc = _describe(schema)
        t = self._convert_body(schema, pointer, root, root_pointer, depth, desc)
        if schema.get("nullable") is True and t.kind not in ("null", "any") and not t.nullable:
            t = t.model_copy(update={"nullable": True})
        if self._ref_emits == emits and len(self.diags) == n_diags:  # context-free result
            self._obj_cache[id(schema)] = (schema, root, t, budget - self._budget)
        return t

    def _over_budget(self, pointer: str) -> Type:
        if self._budget > -(10**8):  # first time over budget in this top-level schema: say so once
            self.diags.append(warning(codes.SCHEMA_TOO_DEEP, f"schema expands to more than {MAX_NODES} type nodes; the rest is read as `any`", self.doc.span(pointer)))
        self._budget = -(10**9)  # stay over budget until the next top-level schema
        return ANY

    def _convert_body(self, schema: dict, pointer: str, root: Any, root_pointer: str, depth: int, desc: str) -> Type:
        for comb in ("anyOf", "oneOf"):
            if comb in schema and isinstance(schema[comb], list) and schema[comb]:
                variants = [self.convert(s, join_pointer(pointer, comb, i), root, root_pointer, depth + 1) for i, s in enumerate(schema[comb])]
                return _any_of(variants, desc)
        if "allOf" in schema and isinstance(schema["allOf"], list) and schema["allOf"]:
            parts = [self.convert(s, join_pointer(pointer, "allOf", i), root, root_pointer, depth + 1) for i, s in enumerate(schema["allOf"])]
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            if has_type_info(rest):
                parts.append(self._convert_body(rest, pointer, root, root_pointer, depth, ""))
            merged = _all_of(parts, desc)
            req = rest.get("required")
            if merged.kind == "object" and isinstance(req, list) and req:
                # `{allOf: [$ref, $ref], required: [applicant_id, file]}`: the wrapper's own list counts (Onfido's
                # uploaders; review 23 saw an upload with no file)
                merged = merged.model_copy(update={"fields": tuple(f.model_copy(update={"required": True}) if f.name in req else f for f in merged.fields)})
            return merged
        if "const" in schema:
            return Type(kind="enum", values=(jsonable(schema["const"]),), description=desc)
        if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
            vals = schema["enum"]
            non_null = tuple(jsonable(v) for v in vals if v is not None)
            # integers JSON cannot carry exactly (Go's min/max time.Duration in PhotoPrism's spec): no value a
            # record holds or a person says; the env's literals are bounded to 2^53 - 1
            non_null = tuple(v for v in non_null if not (isinstance(v, int) and not isinstance(v, bool) and abs(v) > _MAX_SAFE_INT))
            if not non_null:
                return Type(kind="null", description=desc)
            return Type(kind="enum", values=non_null, nullable=len(non_null) != len(vals), description=desc)

        ty = schema.get("type")
        if isinstance(ty, list):
            names = [t for t in ty if isinstance(t, str)]
            nullable = any(_TYPE_ALIASES.get(n.lower()) == "null" for n in names)
            rest = [n for n in names if _TYPE_ALIASES.get(n.lower()) != "null"]
            if not rest:
                return Type(kind="null", description=desc)
            if len(rest) == 1:
                t = self._typed(rest[0], schema, pointer, root, root_pointer, depth, desc)
                return t.model_copy(update={"nullable": True}) if nullable else t
            variants = [self._typed(n, schema, pointer, root, root_pointer, depth, "") for n in rest]
            return Type(kind="union", variants=tuple(variants), nullable=nullable, description=desc)
        if isinstance(ty, str):
            return self._typed(ty, schema, pointer, root, root_pointer, depth, desc)
        if ty is not None:
            self.diags.append(warning(codes.UNKNOWN_TYPE, f"`type` must be a string or a list of strings, found {_short(ty)}", self.doc.span(join_pointer(pointer, "type"))))
            return Type(kind="any", description=desc)
        # no `type`: infer from structure
        if "properties" in schema or "additionalProperties" in schema:
            return self._object(schema, pointer, root, root_pointer, depth, desc)
        if "items" in schema or "prefixItems" in schema:
            return self._array(schema, pointer, root, root_pointer, depth, desc)
        return Type(kind="any", description=desc)

    def _typed(self, name: str, schema: dict, pointer: str, root: Any, root_pointer: str, depth: int, desc: str) -> Type:
        kind = _TYPE_ALIASES.get(name.lower())
        if kind is None:
            self.diags.append(
                warning(
                    codes.UNKNOWN_TYPE,
                    f"unknown type `{name}`; read as `any`",
                    self.doc.span(join_pointer(pointer, "type")),
                    help="use one of string, integer, number, boolean, array, object, null",
                )
            )
            return Type(kind="any", description=desc)
        if kind == "string":
            fmt = schema.get("format")
            if not fmt and isinstance(schema.get("pattern"), str) and _UUID_PATTERN.search(schema["pattern"]):
                fmt = "uuid"  # `^[0-9a-f]{8}-[0-9a-f]{4}-...{12}$`: the docs' id format, kept for the world's keys
            if name.lower() == "file":
                fmt = "binary"
            return Type(kind="string", format=fmt if isinstance(fmt, str) and fmt else None, description=desc)
        if kind == "object":
            return self._object(schema, pointer, root, root_pointer, depth, desc)
        if kind == "array":
            return self._array(schema, pointer, root, root_pointer, depth, desc)
        return Type(kind=kind, description=desc)

    def _object(self, schema: dict, pointer: str, root: Any, root_pointer: str, depth: int, desc: str) -> Type:
        props = schema.get("properties")
        fields: list[Field_] = []
        if isinstance(props, dict):
            req = schema.get("required")
            required = {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()
            for name, sub in props.items():
                name = str(name)
                t = self.convert(sub, join_pointer(pointer, "properties", name), root, root_pointer, depth + 1)
                fields.append(Field_(name=name, type=t, required=name in required, description=t.description, read_only=read_only(sub)))
        elif props is not None:
            self.diags.append(error(codes.INVALID_SCHEMA, f"`properties` must be an object, found {_short(props)}", self.doc.span(join_pointer(pointer, "properties"))))
        items = None
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            items = self.convert(extra, join_pointer(pointer, "additionalProperties"), root, root_pointer, depth + 1)
        return Type(kind="object", fields=tuple(fields), items=items, description=desc)

    def _array(self, schema: dict, pointer: str, root: Any, root_pointer: str, depth: int, desc: str) -> Type:
        items = schema.get("items")
        prefix = schema.get("prefixItems")
        if isinstance(items, list):  # draft-4 tuple form (and BFCL tuples)
            prefix, items = items, None
        if isinstance(prefix, list) and prefix:
            key = "prefixItems" if "prefixItems" in schema else "items"
            vs = [self.convert(s, join_pointer(pointer, key, i), root, root_pointer, depth + 1) for i, s in enumerate(prefix)]
            return Type(kind="array", items=_union(vs, ""), description=desc)
        if items is None:
            return Type(kind="array", items=None, description=desc)
        return Type(kind="array", items=self.convert(items, join_pointer(pointer, "items"), root, root_pointer, depth + 1), description=desc)


def read_only(schema: Any) -> bool:
    """Whether a property schema says `readOnly: true`, itself or in an `allOf` part (`allOf: [$ref, {readOnly}]`)."""
    if not isinstance(schema, dict):
        return False
    parts = schema.get("allOf") if isinstance(schema.get("allOf"), list) else []
    return schema.get("readOnly") is True or any(isinstance(x, dict) and x.get("readOnly") is True for x in parts)


def writable(t: Type) -> Type:
    """The type a request may send: read-only properties dropped at every depth. OpenAPI: a
    `readOnly` property "SHOULD NOT be sent as part of the request" (ids, counts, timestamps the
    server keeps); a tool input that listed them would have users set a cycle's issue counts."""
    if t.kind == "object" and any(f.read_only for f in t.fields):
        t = t.model_copy(update={"fields": tuple(f for f in t.fields if not f.read_only)})
    if t.kind == "object" and t.fields:
        fields = tuple(f.model_copy(update={"type": writable(f.type)}) for f in t.fields)
        if fields != t.fields:
            t = t.model_copy(update={"fields": fields})
    if t.kind == "array" and t.items is not None:
        items = writable(t.items)
        if items is not t.items:
            t = t.model_copy(update={"items": items})
    if t.kind == "union" and t.variants:
        vs = tuple(writable(v) for v in t.variants)
        if vs != t.variants:
            t = t.model_copy(update={"variants": vs})
    return t


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def _union(variants: list[Type], desc: str) -> Type:
    """Fold null variants into `nullable`; a single remaining variant stands alone."""
    nullable = any(v.kind == "null" or v.nullable for v in variants)
    rest: list[Type] = []
    for v in variants:
        if v.kind == "null":
            continue
        v = v.model_copy(update={"nullable": False}) if v.nullable else v
        if v not in rest:
            rest.append(v)
    if not rest:
        return Type(kind="null", description=desc)
    if any(v.kind == "any" for v in rest):
        return Type(kind="any", nullable=nullable, description=desc)
    if len(rest) > 1 and all(v.kind == "enum" for v in rest):  # `anyOf: [{const: 0}, {const: 60000}, ...]` is an enum
        return Type(kind="enum", values=tuple(dict.fromkeys(x for v in rest for x in v.values)), nullable=nullable, description=desc)
    if len(rest) == 1:
        return rest[0].model_copy(update={"nullable": nullable, "description": desc or rest[0].description})
    return Type(kind="union", variants=tuple(rest), nullable=nullable, description=desc)


def _any_of(variants: list[Type], desc: str) -> Type:
    """anyOf/oneOf: when a branch is an object, the value is that object (`FlightInfo | dict`
    is a FlightInfo to the env, not `any`); other unions go through `_union`."""
    objs = [v for v in variants if v.kind == "object"]
    if not objs:
        return _union(variants, desc)
    nullable = any(v.kind == "null" or v.nullable for v in variants)
    t = _richest_object(objs)
    return t.model_copy(update={"nullable": nullable, "description": desc or t.description})


def _same_type(a: Type, b: Type) -> bool:
    """Equal up to descriptions (two branches that spell the same field the same way)."""
    strip = {"description": "", "nullable": False}
    return a.model_copy(update=strip).model_dump(exclude={"description"}) == b.model_copy(update=strip).model_dump(exclude={"description"})


def _richest_object(objs: list[Type]) -> Type:
    """The object branch with the most fields; the field-bearing branches merged when every
    field they share has one type (a field is then required only where all of them require it)."""
    best = max(objs, key=lambda o: len(o.fields))  # first of the richest on ties
    rich = [o for o in objs if o.fields]
    if len(rich) < 2:
        return best.model_copy(update={"nullable": False})
    merged: dict[str, Field_] = {}
    for o in rich:
        for f in o.fields:
            prev = merged.get(f.name)
            if prev is not None and not _same_type(prev.type, f.type):
                return best.model_copy(update={"nullable": False})  # incompatible: keep the richest
            merged.setdefault(f.name, f)
    fields = tuple(f.model_copy(update={"required": all(any(g.name == f.name and g.required for g in o.fields) for o in rich)}) for f in merged.values())
    items = next((o.items for o in objs if o.items is not None), None)
    return Type(kind="object", fields=fields, items=items, description=best.description)


def _all_of(parts: list[Type], desc: str) -> Type:
    """allOf: merge object parts field by field; otherwise the most specific part wins."""
    objs = [p for p in parts if p.kind == "object"]
    if objs and len(objs) == len([p for p in parts if p.kind != "any"]):
        fields: dict[str, Field_] = {}
        items = None
        for o in objs:
            for f in o.fields:
                prev = fields.get(f.name)
                fields[f.name] = f if prev is None else f.model_copy(update={"required": f.required or prev.required})
            items = items or o.items
        d = desc or next((o.description for o in objs if o.description), "")
        return Type(kind="object", fields=tuple(fields.values()), items=items, description=d)
    specific = [p for p in parts if p.kind != "any"]
    if not specific:
        return Type(kind="any", description=desc)
    t = specific[0]
    return t.model_copy(update={"description": desc or t.description})
