"""The checker's type model: small frozen values, compared structurally.

    Prim("str"|"int"|"float"|"bool"|"null"|"any")   ANY/UNKNOWN are compatible with everything
    EnumT(values)                                   enum("a", "b")
    ListT(item)   OptT(inner)
    EntRec(entity)      a record of an entity (tool params inside the body, `Entity[k]`, query results)
    RefT(entity, key)   a stored key referencing an entity (entity-typed fields); behaves like `key`
    RecT(name, fields)  a named record, `state`, an inline `{...}` record, or a record literal
    EntSet(entity)      a bare entity name: the list of all its records (also the target of `in`, `[k]`)

UNKNOWN marks an expression whose type could not be computed because of an
earlier error; it is silently compatible so one mistake reports once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True, slots=True)
class Prim:
    name: str

    def __str__(self) -> str:
        return "<unknown>" if self.name == "?" else self.name


@dataclass(frozen=True, slots=True)
class EnumT:
    values: tuple

    def __str__(self) -> str:
        import json

        return "enum(" + ", ".join(json.dumps(v) for v in self.values) + ")"


@dataclass(frozen=True, slots=True)
class ListT:
    item: "Ty"

    def __str__(self) -> str:
        return f"list[{self.item}]"


@dataclass(frozen=True, slots=True)
class OptT:
    inner: "Ty"

    def __str__(self) -> str:
        return f"{self.inner}?"


@dataclass(frozen=True, slots=True)
class EntRec:
    entity: str

    def __str__(self) -> str:
        return self.entity


@dataclass(frozen=True, slots=True)
class RefT:
    entity: str
    key: "Ty"

    def __str__(self) -> str:
        return f"{self.key} (key of {self.entity})"


@dataclass(frozen=True, slots=True)
class RecT:
    name: str  # "" for inline records and record literals
    fields: tuple  # ((name, Ty, required: bool), ...)

    def __str__(self) -> str:
        if self.name:
            return self.name
        return "{" + ", ".join(f"{n}: {t}" for n, t, _ in self.fields) + "}"

    def field(self, name: str):
        for n, t, _ in self.fields:
            if n == name:
                return t
        return None


@dataclass(frozen=True, slots=True)
class EntSet:
    entity: str

    def __str__(self) -> str:
        return f"list[{self.entity}]"


Ty = Union[Prim, EnumT, ListT, OptT, EntRec, RefT, RecT, EntSet]

STR, INT, FLOAT, BOOL, NULL, ANY = (Prim(n) for n in ("str", "int", "float", "bool", "null", "any"))
UNKNOWN = Prim("?")
NUMBERS = (INT, FLOAT)


def strip_opt(t: Ty) -> Ty:
    while isinstance(t, OptT):
        t = t.inner
    return t


def is_loose(t: Ty) -> bool:
    return t is UNKNOWN or t == UNKNOWN or t == ANY


def is_number(t: Ty) -> bool:
    t = strip_opt(t)
    if isinstance(t, RefT):
        t = t.key
    if isinstance(t, EnumT):
        return bool(t.values) and all(type(v) in (int, float) for v in t.values)
    return t in NUMBERS or is_loose(t)


def is_stringy(t: Ty) -> bool:
    t = strip_opt(t)
    if isinstance(t, RefT):
        t = t.key
    if isinstance(t, EnumT):
        return all(isinstance(v, str) for v in t.values)
    return t == STR or is_loose(t)


def num_type(t: Ty) -> Ty:
    """INT or FLOAT when every non-null value of `t` is one, else UNKNOWN. Codegen inlines
    Python arithmetic and skips conversions on these types, so "a number" is not enough."""
    t = strip_opt(t)
    return t if t in NUMBERS else UNKNOWN


def value_class(t: Ty) -> str | None:
    """Coarse class of a scalar type for matching values across tools: "str", "num", "bool",
    "any", or None (not a scalar). An enum is the class of its first value; a key, its key's."""
    t = strip_opt(t)
    if isinstance(t, RefT):
        t = strip_opt(t.key)
    if isinstance(t, EnumT):
        v = t.values[0] if t.values else ""
        return "bool" if isinstance(v, bool) else "num" if isinstance(v, (int, float)) else "str"
    return {STR: "str", INT: "num", FLOAT: "num", BOOL: "bool", ANY: "any"}.get(t) if isinstance(t, Prim) else None


def elem(t: Ty) -> Ty | None:
    """The element type of a list-like type (None when `t` is not a list)."""
    t = strip_opt(t)
    if isinstance(t, ListT):
        return t.item
    if isinstance(t, EntSet):
        return EntRec(t.entity)
    if is_loose(t):
        return UNKNOWN
    return None


def enum_base(values: tuple) -> Ty:
    values = tuple(v for v in values if v is not None)  # `null` in an enum: the value may be null
    if all(isinstance(v, bool) for v in values):
        return BOOL
    if all(isinstance(v, str) for v in values):
        return STR
    if all(type(v) is int for v in values):
        return INT
    return FLOAT


def join(a: Ty, b: Ty) -> Ty:
    """The common type of two list items / branches (for list literals)."""
    if a == b:
        return a
    if is_loose(a):
        return b
    if is_loose(b):
        return a
    if a == NULL:
        return b if isinstance(b, OptT) else OptT(b)
    if b == NULL:
        return a if isinstance(a, OptT) else OptT(a)
    if {a, b} == {INT, FLOAT}:
        return UNKNOWN  # an int or a float: no one type holds for every element
    if isinstance(a, EnumT) and isinstance(b, EnumT):
        return EnumT(tuple(dict.fromkeys(a.values + b.values)))
    return ANY
