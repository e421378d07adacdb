"""Builtin functions of .forge expressions: signatures and typing rules for the checker.

`lambda_arg` is the index of an argument evaluated once per element of argument 0
with `it` bound to the element (`map(xs, it.price)`, `sum(xs, it.qty * it.price)`).
A rule gets the argument types (the lambda's type in its place) and returns the
result type, or a string: the error message for a type mismatch.
The runtime semantics are in docs/language.md; codegen implements them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from forgec.lang.types import (ANY, BOOL, FLOAT, INT, STR, UNKNOWN, EntSet, ListT, Ty, elem, is_loose,
                               is_number, is_stringy, join, strip_opt)


@dataclass(frozen=True)
class Builtin:
    name: str
    min_args: int
    max_args: int
    rule: Callable[[list[Ty]], "Ty | str"]
    doc: str
    lambda_arg: int | None = None
    kwargs: tuple[str, ...] = ()


def _num(t: Ty) -> Ty:
    t = strip_opt(t)
    return t if t in (INT, FLOAT) else (FLOAT if not is_loose(t) else UNKNOWN)


def _list_of(t: Ty, what: str):
    e = elem(t)
    return e if e is not None else f"{what} expects a list, found {t}"


def _len(a):
    t = strip_opt(a[0])
    return INT if (elem(t) is not None or is_stringy(t)) else f"len expects a list or str, found {a[0]}"


def _sum(a):
    e = _list_of(a[0], "sum")
    if isinstance(e, str):
        return e
    v = a[1] if len(a) > 1 else e
    return _num(v) if is_number(v) else f"sum adds numbers, found {v}"


def _minmax(name):
    def rule(a):
        if elem(a[0]) is not None and not is_loose(a[0]):
            v = a[1] if len(a) > 1 else elem(a[0])
            return v
        if len(a) >= 2 and all(is_number(x) for x in a):
            r = _num(a[0])
            for x in a[1:]:
                r = join(r, _num(x))
            return r
        if len(a) == 1 and is_loose(a[0]):
            return UNKNOWN
        return f"{name} expects a list (or two numbers), found {', '.join(map(str, a))}"

    return rule


def _anyall(name):
    def rule(a):
        e = _list_of(a[0], name)
        if isinstance(e, str):
            return e
        v = a[1] if len(a) > 1 else e
        return BOOL if (strip_opt(v) == BOOL or is_loose(v)) else f"{name} needs booleans, found {v}"

    return rule


def _map(a):
    e = _list_of(a[0], "map")
    return e if isinstance(e, str) else ListT(a[1])


def _round(a):
    if not is_number(a[0]):
        return f"round expects a number, found {a[0]}"
    if len(a) > 1 and not (strip_opt(a[1]) == INT or is_loose(a[1])):
        return f"round's digits must be an int, found {a[1]}"
    return INT if len(a) == 1 else FLOAT


def _abs(a):
    return _num(a[0]) if is_number(a[0]) else f"abs expects a number, found {a[0]}"


def _conv(res: Ty):
    return lambda a: res


def _strfn(name):
    return lambda a: STR if is_stringy(a[0]) else f"{name} expects a str, found {a[0]}"


def _contains(a):
    t = strip_opt(a[0])
    if is_stringy(t):
        return BOOL if is_stringy(a[1]) else f"contains on a str needs a str, found {a[1]}"
    return BOOL if elem(t) is not None else f"contains expects a list or str, found {a[0]}"


def _startswith(a):
    return BOOL if is_stringy(a[0]) and is_stringy(a[1]) else "startswith expects two strings"


def _firstlast(name):
    def rule(a):
        e = _list_of(a[0], name)
        return e

    return rule


def _sorted(a):
    e = _list_of(a[0], "sorted")
    if isinstance(e, str):
        return e
    return ListT(e)


def _count(a):
    e = _list_of(a[0], "count")
    if isinstance(e, str):
        return e
    if len(a) > 1 and not (strip_opt(a[1]) == BOOL or is_loose(a[1])):
        return f"count's condition must be a bool, found {a[1]}"
    return INT


def _keys(a):
    t = strip_opt(a[0])
    if isinstance(t, EntSet) or is_loose(t):
        return ListT(ANY)  # refined to the key type by the checker
    return f"keys expects an entity name, found {a[0]}"


def _fresh(a):
    t = strip_opt(a[0])
    if isinstance(t, EntSet) or is_loose(t):
        return STR  # refined to the key type by the checker
    return f"fresh_id expects an entity name, found {a[0]}"


BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in (
        Builtin("len", 1, 1, _len, "number of elements of a list / characters of a str"),
        Builtin("sum", 1, 2, _sum, "sum of the numbers (or of the per-element expression)", 1),
        Builtin("min", 1, 2, _minmax("min"), "smallest element / per-element value; min(a, b) of numbers", 1),
        Builtin("max", 1, 2, _minmax("max"), "largest element / per-element value; max(a, b) of numbers", 1),
        Builtin("any", 1, 2, _anyall("any"), "some element (or per-element condition) is true", 1),
        Builtin("all", 1, 2, _anyall("all"), "every element (or per-element condition) is true", 1),
        Builtin("map", 2, 2, _map, "list of the per-element expression", 1),
        Builtin("fresh_id", 1, 1, _fresh, "a new key for Entity, deterministic (prefix + counter)"),
        Builtin("round", 1, 2, _round, "round half-even to n digits (int without n)"),
        Builtin("abs", 1, 1, _abs, "absolute value"),
        Builtin("str", 1, 1, _conv(STR), "text of a value"),
        Builtin("int", 1, 1, _conv(INT), "integer of a number or numeric str (ToolError otherwise)"),
        Builtin("float", 1, 1, _conv(FLOAT), "float of a number or numeric str (ToolError otherwise)"),
        Builtin("lower", 1, 1, _strfn("lower"), "lower-case str"),
        Builtin("upper", 1, 1, _strfn("upper"), "upper-case str"),
        Builtin("contains", 2, 2, _contains, "substring test on str, membership on lists"),
        Builtin("startswith", 2, 2, _startswith, "str prefix test"),
        Builtin("first", 1, 1, _firstlast("first"), "first element (ToolError when empty)"),
        Builtin("last", 1, 1, _firstlast("last"), "last element (ToolError when empty)"),
        Builtin("sorted", 1, 2, _sorted, "ascending by the per-element key (desc: true for descending)", 1, ("desc",)),
        Builtin("keys", 1, 1, _keys, "keys of all records of an entity, in key order"),
        Builtin("count", 1, 2, _count, "number of elements (satisfying the per-element condition)", 1),
    )
}
