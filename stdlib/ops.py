"""Reasoning-node operators: the `reason x = op(...)` vocabulary of blueprints.

One table (`OPS`) serves the checker (arity, keyword names and kinds, result
type rule), the sampler (which operators fit a list/number output) and the
lowering (the Python implementation that computes a gold answer).

Operators refuse ambiguous answers (`Ambiguous`): a task whose argmin has a tie
cannot have a unique gold state, so lowering rejects it rather than guess.

Where an operator shares a meaning with the expression language (`sum`, `contains`, the
comparisons of `filter`/`compare`) it calls the same runtime function as a tool body and
a blueprint expression (forgec.lang.builtins registry -> runtime/envrt.py), so
`reason s = sum(xs)` and `tell sum(xs)` cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from forgec.runtime import envrt as _rt


class Ambiguous(Exception):
    """The operator's answer is not unique (tie in argmin/argmax, empty first/last...)."""


class OpError(Exception):
    """The operator cannot be applied to these values (wrong shape, missing field)."""


@dataclass(frozen=True)
class KwSpec:
    name: str
    kind: str  # "field" (bare identifier naming a field of the element), "value" (any expr), "bool", "str"
    required: bool = False
    doc: str = ""


@dataclass(frozen=True)
class OpSpec:
    name: str
    positional: int  # number of positional (expression) arguments
    kwargs: tuple[KwSpec, ...]
    # result rule for the checker: "elem" (element of arg 0), "list" (same list type as arg 0),
    # "int", "number", "bool", "field_list" (list of the `by` field's type), "number_of_field"
    result: str
    doc: str
    impl: Callable[..., Any] = field(repr=False, default=None)  # type: ignore[assignment]
    # which output shapes the sampler may apply it to: "list_of_records", "list", "number"
    applies_to: tuple[str, ...] = ("list_of_records",)

    def kw(self, name: str) -> KwSpec | None:
        return next((k for k in self.kwargs if k.name == name), None)


_CMP = {"eq": _rt.eq, "ne": _rt.ne, "lt": _rt.lt, "le": _rt.le, "gt": _rt.gt, "ge": _rt.ge}  # the `==`.. operators
_CMP_SYMBOL = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def _list(xs: Any, op: str) -> list:
    if not isinstance(xs, list):
        raise OpError(f"{op} expects a list, got {type(xs).__name__}")
    return xs


def _get(x: Any, by: str | None, op: str) -> Any:
    if by is None:
        return x
    if not isinstance(x, dict) or by not in x:
        raise OpError(f"{op}: element has no field {by!r}")
    return x[by]


def _by(by: str | None, op: str):
    return None if by is None else (lambda x: _get(x, by, op))


def _arg_extreme(xs: Any, by: str | None, op: str) -> Any:
    """The builtin `argmin`/`argmax` (envrt: nulls skipped, numbers or strings only), refusing a tie as `==` sees one."""
    xs = _list(xs, op)
    per = _by(by, op)
    try:
        best = (_rt.argmin_ if op == "argmin" else _rt.argmax_)(xs, per)
    except _rt.ToolError as e:
        if "empty list" in e.message:
            raise Ambiguous(f"{op} of a list with no value to compare") from None
        raise
    b = per(best) if per is not None else best
    ties = sum(1 for x in xs if _rt.eq(per(x) if per is not None else x, b))
    if ties > 1:
        raise Ambiguous(f"{op}: {ties} elements tie at {b!r}")
    return best


def argmin(xs, by=None):
    return _arg_extreme(xs, by, "argmin")


def argmax(xs, by=None):
    return _arg_extreme(xs, by, "argmax")


def filter_(xs, by=None, **cmp):
    xs = _list(xs, "filter")
    if len(cmp) != 1:
        raise OpError("filter takes exactly one comparison keyword (eq, ne, lt, le, gt, ge)")
    (name, value), = cmp.items()
    if name not in _CMP:
        raise OpError(f"filter: unknown comparison {name!r}")
    f = _CMP[name]
    try:
        return [x for x in xs if f(_get(x, by, "filter"), value)]
    except (_rt.ToolError, TypeError) as e:
        raise OpError(f"filter: {e}") from None


def count(xs):
    """The builtin `count` (envrt.count_)."""
    return _rt.count_(_list(xs, "count"))


def sum_(xs, by=None):
    """The builtin `sum` (envrt.sum_) of the `by` fields: exact, nulls skipped, floats to 6 decimals."""
    xs = _list(xs, "sum")
    try:
        return _rt.sum_([_get(x, by, "sum") for x in xs])
    except (_rt.ToolError, TypeError) as e:
        raise OpError(str(e)) from None


def first(xs):
    """The builtin `first` (envrt.first); an empty list has no answer."""
    if not _list(xs, "first"):
        raise Ambiguous("first of an empty list")
    return _rt.first(xs)


def last(xs):
    """The builtin `last` (envrt.last); an empty list has no answer."""
    if not _list(xs, "last"):
        raise Ambiguous("last of an empty list")
    return _rt.last(xs)


def sort(xs, by=None, desc=False):
    """The builtin `sorted` (envrt.sorted_: nulls, booleans, numbers, strings, then the rest); equal keys (as the
    sort orders them: true and 1 differ, 1 and 1.0 do not) make the order ambiguous."""
    xs = _list(xs, "sort")
    per = _by(by, "sort")
    keys = [_rt.nkey(per(x) if per is not None else x) for x in xs]
    if len(set(keys)) != len(keys):
        raise Ambiguous("sort: equal keys make the order ambiguous")
    return _rt.sorted_(xs, per, bool(desc))


def pluck(xs, by=None):
    xs = _list(xs, "pluck")
    return [_get(x, by, "pluck") for x in xs]


def contains(xs, value=None):
    """The builtin `contains` (envrt.contains) on a list or str."""
    if not isinstance(xs, str):
        _list(xs, "contains")
    return _rt.contains(xs, value)


def compare(a, b, op="eq"):
    op = _CMP_SYMBOL.get(op, op)
    if op not in _CMP:
        raise OpError(f"compare: unknown comparison {op!r}")
    try:
        return bool(_CMP[op](a, b))
    except (_rt.ToolError, TypeError) as e:
        raise OpError(f"compare: {e}") from None


_BY = KwSpec("by", "field", False, "field of the element to compare")
_BY_REQ = KwSpec("by", "field", True, "field of the element")

OPS: dict[str, OpSpec] = {
    s.name: s
    for s in (
        OpSpec("argmin", 1, (_BY,), "elem", "element with the smallest `by` (unique)", argmin),
        OpSpec("argmax", 1, (_BY,), "elem", "element with the largest `by` (unique)", argmax),
        OpSpec(
            "filter",
            1,
            (_BY,) + tuple(KwSpec(c, "value") for c in _CMP),
            "list",
            "elements whose `by` compares true with exactly one of eq/ne/lt/le/gt/ge",
            filter_,
            ("list_of_records", "list"),
        ),
        OpSpec("count", 1, (), "int", "number of elements", count, ("list_of_records", "list")),
        OpSpec("sum", 1, (_BY,), "number_of_field", "sum of `by` (or of the numbers)", sum_, ("list_of_records", "list")),
        OpSpec("first", 1, (), "elem", "first element", first, ("list_of_records", "list")),
        OpSpec("last", 1, (), "elem", "last element", last, ("list_of_records", "list")),
        OpSpec("sort", 1, (_BY, KwSpec("desc", "bool")), "list", "sorted by `by` (no ties)", sort),
        OpSpec("pluck", 1, (_BY_REQ,), "field_list", "list of the `by` field of each element", pluck),
        OpSpec("contains", 1, (KwSpec("value", "value", True),), "bool", "whether the list holds `value`", contains, ("list",)),
        OpSpec("compare", 2, (KwSpec("op", "str"),), "bool", "compare two values (op: == != < <= > >=)", compare, ("number",)),
    )
}


def apply(op: str, args: list, kwargs: dict) -> Any:
    """Run operator `op`; `kwargs` holds field names as strings for `field` keywords."""
    spec = OPS.get(op)
    if spec is None:
        raise OpError(f"unknown operator {op!r}")
    if len(args) != spec.positional:
        raise OpError(f"{op} takes {spec.positional} positional argument(s), got {len(args)}")
    try:
        return spec.impl(*args, **kwargs)
    except _rt.ToolError as e:  # a runtime builtin refused the values
        raise OpError(f"{op}: {e.message}") from None
    except (TypeError, ValueError) as e:  # e.g. argmax over [None, 1.5]: a bad blueprint, not a compiler crash
        raise OpError(f"{op}: {e}") from None
