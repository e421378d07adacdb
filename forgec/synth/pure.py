"""Pure tools: computations the docs name are reads whose result is a stdlib operation.

A calculator, a statistics helper or a unit converter changes no state: logging its calls
(the conservative fallback) makes every call a "write" the reward then checks. A tool with
no entity reference whose name or description names a standard operation (sum, mean,
standard deviation, square root, power, logarithm, rounding, percentage, min/max, absolute
value, an arithmetic expression, a conversion between named units, a currency conversion at
a given rate) becomes a `read` returning that operation of its arguments, computed by the
builtins of docs/language.md (`mean`, `stdev`, `sqrt`, `log`, `pow`, `calc`, ...).
Conversions read a table of units (factor and offset to the kind's base unit, kept as
fractions so `celsius_to_fahrenheit` is exactly `x * 1.8 + 32`). A hand-off to a human
agent changes nothing either: it returns a fixed acknowledgement.

Only the parameters' types and words decide which argument is which (`base`/`exponent`,
`part`/`whole`, the int digits of a rounding); a tool whose parameters do not fit the
operation keeps the other rules.

Two entry points: `claim` is a shape (registered last in `recognize.RECOGNIZERS`, so domain
shapes such as an account's `calculate_total` go first) and takes pure tools out of schema
inference, which would otherwise invent an entity from `sum_values(numbers)`; `pure_effect`
is also tried by `effects.build_tool` for any tool left without an entity.
"""

from __future__ import annotations

import re
from fractions import Fraction as F

from forgec import ir
from forgec.lang import ast as A

from .names import tokens
from .params import tool_doc, tool_params
from .schema import Schema, TypeMapper, no_change_desc, tool_view
from .shapes import Claim

FLOAT = A.PrimType("float")
STR = A.PrimType("str")

# unit -> (kind, factor to the kind's base unit, offset): base = value * factor + offset
UNITS: dict[str, tuple[str, F, F]] = {}


def _unit(kind: str, factor, offset, *names: str) -> None:
    for n in names:
        UNITS[n] = (kind, F(factor), F(offset))


_unit("length", 1, 0, "m", "meter", "meters", "metre", "metres")
_unit("length", 1000, 0, "km", "kilometer", "kilometers", "kilometre", "kilometres")
_unit("length", F(1, 100), 0, "cm", "centimeter", "centimeters", "centimetre", "centimetres")
_unit("length", F(1, 1000), 0, "mm", "millimeter", "millimeters", "millimetre", "millimetres")
_unit("length", F("1609.344"), 0, "mi", "mile", "miles")
_unit("length", F("0.9144"), 0, "yd", "yard", "yards")
_unit("length", F("0.3048"), 0, "ft", "foot", "feet")
_unit("length", F("0.0254"), 0, "in", "inch", "inches")
_unit("mass", 1, 0, "kg", "kilogram", "kilograms")
_unit("mass", F(1, 1000), 0, "g", "gram", "grams")
_unit("mass", F(1, 1000000), 0, "mg", "milligram", "milligrams")
_unit("mass", 1000, 0, "t", "tonne", "tonnes")
_unit("mass", F("0.45359237"), 0, "lb", "lbs", "pound", "pounds")
_unit("mass", F("0.028349523125"), 0, "oz", "ounce", "ounces")
_unit("temperature", 1, F("273.15"), "c", "celsius", "°c")
_unit("temperature", F(5, 9), F("273.15") - F(160, 9), "f", "fahrenheit", "°f")
_unit("temperature", 1, 0, "k", "kelvin")
_unit("volume", 1, 0, "l", "liter", "liters", "litre", "litres")
_unit("volume", F(1, 1000), 0, "ml", "milliliter", "milliliters", "millilitre", "millilitres")
_unit("volume", F("3.785411784"), 0, "gal", "gallon", "gallons")
_unit("volume", F("0.946352946"), 0, "qt", "quart", "quarts")
_unit("volume", F("0.473176473"), 0, "pt", "pint", "pints")
_unit("volume", F("0.2365882365"), 0, "cup", "cups")
_unit("speed", 1, 0, "m/s", "mps")
_unit("speed", F(1000, 3600), 0, "kph", "km/h", "kmh", "kmph")
_unit("speed", F("0.44704"), 0, "mph", "mi/h")
_unit("speed", F(1852, 3600), 0, "knot", "knots", "kn")
_unit("time", 1, 0, "s", "sec", "second", "seconds")
_unit("time", 60, 0, "min", "minute", "minutes")
_unit("time", 3600, 0, "h", "hr", "hour", "hours")
_unit("time", 86400, 0, "day", "days")

# a unit named in prose (one letter and "in" are too common to count as a mention)
_PROSE_UNIT = {n for n in UNITS if len(n) > 2 and n not in ("min", "day", "days", "cup", "cups")} | {"km", "kg", "mph", "kph", "ml", "lb", "oz", "ft", "mi", "mm", "cm"}

# operations a name or description may name: (op, pattern), most specific first
_OPS: list[tuple[str, re.Pattern]] = [
    (op, re.compile(p))
    for op, p in (
        ("stdev", r"standard[ _-]?deviation|\bstd[ _]?dev\b|\bstdev\b"),
        ("median", r"\bmedian\b"),
        ("mean", r"\bmean\b|\baverage\b|\bavg\b"),
        ("sqrt", r"square[ _-]?root|\bsqrt\b"),
        ("log", r"\blogarithm\b|\blog(?:10|2)?\b|\bln\b"),
        ("pow", r"\bpower\b|\bexponent\b|\braises?\b"),
        ("abs", r"\babsolute\b|\babs\b"),
        ("percent_of", r"\bpercent(?:age)? of (?:a|an|the)? ?(?:value|number|amount|total)|\bpercent of\b"),
        ("percentage", r"\bpercent(?:age)?\b"),
        ("round", r"\bround(?:s|ing|ed)?\b"),
        ("min", r"\bmin(?:imum)?\b|\bsmallest\b|\blowest\b"),
        ("max", r"\bmax(?:imum)?\b|\blargest\b|\bhighest\b|\bbiggest\b"),
        ("sub", r"\bsubtract|\bdifference\b|\bminus\b"),
        ("mul", r"\bmultipl|\bproduct\b|\btimes\b"),
        ("div", r"\bdivid|\bquotient\b"),
        ("sum", r"\bsum\b|\badd(?:s|ed)?(?: up)?\b|\bplus\b"),
    )
]

_HANDOFF = re.compile(r"\b(transfer|hand(?:s|ing)?[ -]?(?:off|over)|escalat\w*|connect)\b[^.]*\b(human|live|real|support)\s+(agent|person|representative|operator|staff)")
_EXPR = re.compile(r"\b(calculat\w*|evaluat\w*|comput\w*|work(?:s)? out)\b")


def _num(p) -> bool:
    return isinstance(p.type, A.PrimType) and p.type.name in ("int", "float")


def _numlist(p) -> bool:
    return isinstance(p.type, A.ListType) and isinstance(p.type.item, A.PrimType) and p.type.item.name in ("int", "float")


def _strish(p) -> bool:
    return isinstance(p.type, A.PrimType) and p.type.name == "str" or isinstance(p.type, A.EnumType) and all(isinstance(x, str) for x in p.type.values)


def _words(p) -> set[str]:
    return set(tokens(p.wire)) | set(re.findall(r"[a-z]+", (p.doc or "").lower()))


def _named(ps, *words: str):
    """The param whose name (else description) carries one of `words`."""
    for test in (lambda p: set(tokens(p.wire)), _words):
        hit = [p for p in ps if test(p) & set(words)]
        if len(hit) == 1:
            return hit[0]
    return None


def _structured(t: ir.Type) -> bool:
    """An object, ref or union anywhere in `t` (a list of objects too): a pure computation takes plain
    values, and a record its params would need is no state this claim declares."""
    if t.kind in ("object", "ref", "union"):
        return True
    return t.kind == "array" and t.items is not None and _structured(t.items)


def claim(env, taken: frozenset):
    """The pure tools of `env` as a shape claim (reads; no state)."""

    c = Claim(shape="pure")
    sch = Schema(env)
    tm = TypeMapper(sch)
    for t in env.tools:
        if t.name in taken or any(_structured(p.type) for p in t.params):
            continue
        v = tool_view(t, 0)
        params = tool_params(sch, v, tm)
        got = pure_effect(sch, v, {p.wire: p for p in params})
        if got is None:
            continue
        body, ret = got
        c.tools[t.name] = A.ToolDecl(name=v.name, params=tuple(A.ParamDecl(p.name, p.type, p.default, p.doc) for p in params),
                                     returns=ret, doc=tool_doc(t.description), body=tuple(body),
                                     annotations=("read",) + ((A.wire_annotation(t.wire_name),) if t.wire_name else ()))
    return c if c.tools else None


def pure_effect(s, v, pmap) -> tuple[list[A.Stmt], A.TypeExpr] | None:
    """The body of a pure tool, or None when the docs name no operation its params fit."""
    if v.target or v.refs or v.list_refs or v.child or v.global_name:
        return None
    ps = list(pmap.values())
    if any(not (_num(p) or _numlist(p) or _strish(p) or p.optional) for p in ps):
        return None
    name = " ".join(tokens(v.tool.name))
    desc = " ".join((v.tool.description or "").lower().split())
    text = f"{name} {desc}"
    if _HANDOFF.search(text) and all(_strish(p) or p.optional for p in ps):
        return [A.Return(A.Literal("Transfer successful"))], STR
    body = _conversion(v, ps, name, desc)
    if body is None:
        body = _expression(ps, text)
    if body is None:
        for t in (name, desc):
            for op, pat in _OPS:
                if pat.search(t):
                    body = _operation(op, ps, text)
                    if body is not None:
                        break
            if body is not None:
                break
    if body is None:
        return _unchanged(v, ps)
    stmts, expr = body
    return stmts + [A.Return(_wrap(v, expr))], _wrap_type(v)


_NOTHING = re.compile(r"\b(changes nothing|does not (?:change|modify|store|save)|doesn't (?:change|modify)|read[- ]only|without (?:changing|modifying|saving))\b")


def _unchanged(v, ps):
    """Documented as changing nothing: a read whose result is a deterministic function of its
    arguments — `think` echoes its one text; another tool returns its arguments as a record
    (what it computes is not a named operation, so nothing more is claimed)."""

    req = [p for p in ps if not p.optional]
    desc = v.tool.description or ""
    if not (no_change_desc(desc) or _NOTHING.search(desc.lower())) or not req:
        return None
    if len(req) == 1 and req[0].type == STR:
        return [A.Return(N(req[0].name))], STR
    fields = tuple(A.FieldDecl(p.name, p.type) for p in ps)
    return [A.Return(A.RecordLit(tuple(A.FieldInit(p.name, N(p.name)) for p in ps)))], A.RecordType(fields)


def _result_field(v) -> str | None:
    """The one number field of a documented result object (`{"result": float}`)."""
    r = v.tool.returns
    if r is not None and r.kind == "object" and len(r.fields) == 1 and r.fields[0].type.kind in ("number", "integer", "any"):
        n = r.fields[0].name
        return n if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) else None
    return None


def _wrap(v, expr: A.Expr) -> A.Expr:
    f = _result_field(v)
    return A.RecordLit((A.FieldInit(f, expr),)) if f else expr


def _wrap_type(v) -> A.TypeExpr:
    f = _result_field(v)
    return A.RecordType((A.FieldDecl(f, FLOAT),)) if f else FLOAT


def N(x: str) -> A.Name:
    return A.Name(x)


def call(f: str, *args: A.Expr) -> A.Call:
    return A.Call(f, tuple(args))


def bin_(op: str, a: A.Expr, b: A.Expr) -> A.Binary:
    return A.Binary(op, a, b)


def _expression(ps, text: str):
    """`calculate(expression)`: an arithmetic expression in a str, parsed by `calc`."""
    strs = [p for p in ps if _strish(p) and not p.optional]
    if len(strs) != 1 or len([p for p in ps if not p.optional]) != 1 or not _EXPR.search(text):
        return None
    p = strs[0]
    if not (_words(p) & {"expression", "expr", "formula", "arithmetic"} or re.search(r"\b(arithmetic|mathematical) expression\b", text)):
        return None
    return [], call("calc", N(p.name))


def _digits(ps, skip):
    """The int param giving decimal places (`precision`, `decimal_places`, `digits`)."""
    for p in ps:
        if p is not skip and isinstance(p.type, A.PrimType) and p.type.name == "int" and not p.optional:
            if set(tokens(p.wire)) & {"precision", "decimals", "decimal", "digits", "places", "ndigits"}:
                return p
    return None


def _operation(op: str, ps, text: str):
    """`op` of the params; a documented precision param (`logarithm(value, base, precision)`)
    rounds the result to that many places."""
    d = _digits([p for p in ps if _num(p) and not p.optional], None) if op not in ("round", "sqrt") else None
    got = _operation_core(op, [p for p in ps if p is not d], text)
    if got is None or d is None:
        return got
    stmts, e = got
    return stmts, call("round", e, N(d.name))


def _operation_core(op: str, ps, text: str):
    nums = [p for p in ps if _num(p) and not p.optional]
    lists = [p for p in ps if _numlist(p) and not p.optional]
    other = [p for p in ps if not p.optional and p not in nums and p not in lists]
    if other:
        return None
    if op in ("stdev", "median", "mean") or (op in ("sum", "min", "max") and lists):
        if len(lists) != 1 or nums and op != "mean":
            return None
        fn = {"stdev": "pstdev" if "population" in text else "stdev"}.get(op, op)
        return [], call(fn, N(lists[0].name))
    if lists:
        return None
    if op == "sqrt" and nums:
        x = next((p for p in nums if p is not _digits(nums, None)), None)
        d = _digits(nums, x)
        if x is None or len(nums) > 1 + (d is not None):
            return None
        e = call("sqrt", N(x.name))
        return [], call("round", e, N(d.name)) if d else e
    if op == "round":
        d = _digits(nums, None)
        xs = [p for p in nums if p is not d]
        if len(xs) != 1:
            return None
        return [], call("round", N(xs[0].name), N(d.name)) if d else call("round", N(xs[0].name))
    if op == "abs" and len(nums) == 1:
        return [], call("abs", N(nums[0].name))
    if op == "log" and 1 <= len(nums) <= 2:
        b = _named(nums, "base") if len(nums) == 2 else None
        if len(nums) == 2 and b is None:
            return None
        x = next(p for p in nums if p is not b)
        if b:
            return [], call("log", N(x.name), N(b.name))
        base = 10 if re.search(r"log10|base 10|common log", text) else 2 if re.search(r"log2|base 2|binary log", text) else None
        return [], call("log", N(x.name), A.Literal(base)) if base else call("log", N(x.name))
    if len(nums) != 2:
        return None
    a, b = nums
    if op == "pow":
        e = _named(nums, "exponent", "exp", "power", "n")
        if e is not None:
            a, b = (b, a) if e is a else (a, b)
        return [], call("pow", N(a.name), N(b.name))
    if op == "percent_of":
        pct = _named(nums, "percent", "percentage", "pct", "rate")
        if pct is None:
            return None
        val = a if pct is b else b
        return [], bin_("/", bin_("*", N(val.name), N(pct.name)), A.Literal(100))
    if op == "percentage":
        whole = _named(nums, "whole", "total", "of", "denominator", "base")
        if whole is not None:
            a, b = (b, a) if whole is a else (a, b)
        return [], bin_("*", bin_("/", N(a.name), N(b.name)), A.Literal(100))
    if op in ("min", "max"):
        return [], call(op, N(a.name), N(b.name))
    sym = {"sub": "-", "mul": "*", "div": "/", "sum": "+"}.get(op)
    if sym is None:
        return None
    if op == "div":
        d = _named(nums, "divisor", "denominator", "by")
        if d is not None:
            a, b = (b, a) if d is a else (a, b)
    return [], bin_(sym, N(a.name), N(b.name))


# --------------------------------------------------------------------------- conversions


def _conversion(v, ps, name: str, desc: str):
    text = f"{name} {desc}"
    if not re.search(r"\bconver|\bto\b|\binto\b|\bexchange\b", text):
        return None
    nums = [p for p in ps if _num(p) and not p.optional]
    units = [p for p in ps if _strish(p) and not p.optional]
    if len(nums) == 2 and not units and re.search(r"\b(currency|currencies|money|exchange)\b", text):
        rate = _named(nums, "rate", "exchange")  # currency: only at a rate the caller gives
        if rate is not None:
            amt = nums[0] if rate is nums[1] else nums[1]
            return [], bin_("*", N(amt.name), N(rate.name))
        return None
    if len(nums) != 1:
        return None
    x = nums[0]
    if len(units) == 2:
        return _table(x, units, text)
    if not units:
        m = re.search(r"\b([a-z/°]+)\s+(?:to|into|in)\s+([a-z/°]+)\b", name) or None
        pair = _pair(m) if m else None
        if pair is None:
            m = re.search(r"\bfrom\s+([a-z/°]+)\s+(?:to|into)\s+([a-z/°]+)|\b([a-z/°]+)\s+(?:temperature|value|amount|distance|reading)?\s*into\s+([a-z/°]+)", desc)
            if m:
                pair = _pair_of(*(g for g in m.groups() if g is not None))
        if pair is None:
            return None
        (ka, fa, oa), (kb, fb, ob) = pair
        k = fa / fb
        c = (oa - ob) / fb
        e: A.Expr = bin_("*", N(x.name), A.Literal(_lit(k))) if k != 1 else N(x.name)
        if c:
            e = bin_("+", e, A.Literal(_lit(c)))
        return [], e
    return None


def _lit(q: F):
    return int(q) if q.denominator == 1 else float(q)


def _pair(m):
    return _pair_of(m.group(1), m.group(2))


def _pair_of(a: str, b: str):
    ua, ub = UNITS.get(a), UNITS.get(b)
    if ua is None or ub is None or ua[0] != ub[0] or a == b:
        return None
    return ua, ub


def _table(x, units, text: str):
    """Two unit params: a table of the units (enum values, else the kinds the docs name)."""
    src, dst = _order_units(units)
    enums = [p.type.values for p in (src, dst) if isinstance(p.type, A.EnumType)]
    if enums:
        names = list(dict.fromkeys(u for vals in enums for u in vals))
        rows = [([u], UNITS.get(u.lower())) for u in names]
        if any(r is None for _, r in rows):
            return None
    else:
        mentioned = {UNITS[w][0] for w in re.findall(r"[a-z/°]+", text) if w in _PROSE_UNIT}
        if not mentioned:
            return None
        grouped: dict[tuple, list[str]] = {}
        for u, r in UNITS.items():
            if r[0] in mentioned:
                grouped.setdefault(r, []).append(u)
        rows = [(us, r) for r, us in grouped.items()]
    if len(rows) < 2:
        return None
    lit = lambda us, r: A.RecordLit((A.FieldInit("names", A.ListLit(tuple(A.Literal(u) for u in us))), A.FieldInit("kind", A.Literal(r[0])),
                                     A.FieldInit("factor", A.Literal(_lit(r[1]) if r[1].denominator == 1 else float(r[1]))),
                                     A.FieldInit("offset", A.Literal(float(r[2])))))
    table = A.ListLit(tuple(lit(us, r) for us, r in rows))

    def key(p):
        return N(p.name) if isinstance(p.type, A.EnumType) else call("lower", N(p.name))

    pick = lambda var, p: A.Where(N("units"), bin_("in", key(p), A.Attr(N("it"), "names")))
    stmts: list[A.Stmt] = [
        A.Let("units", table),
        A.Let("src", pick("src", src)),
        A.Let("dst", pick("dst", dst)),
        A.Require(bin_(">", call("len", N("src")), A.Literal(0)), f"unknown unit for {src.wire}"),
        A.Require(bin_(">", call("len", N("dst")), A.Literal(0)), f"unknown unit for {dst.wire}"),
        A.Let("a", call("first", N("src"))),
        A.Let("b", call("first", N("dst"))),
        A.Require(bin_("==", A.Attr(N("a"), "kind"), A.Attr(N("b"), "kind")), "cannot convert between units of different kinds"),
    ]
    base = bin_("+", bin_("*", N(x.name), A.Attr(N("a"), "factor")), A.Attr(N("a"), "offset"))
    return stmts, bin_("/", bin_("-", base, A.Attr(N("b"), "offset")), A.Attr(N("b"), "factor"))


def _order_units(units):
    """(source, target) unit params: by their words (`from`/`in`/`source` vs `to`/`out`/`target`), else order."""
    a, b = units
    src_w = {"from", "in", "input", "source", "src", "original"}
    dst_w = {"to", "out", "output", "target", "dest", "destination", "wanted"}
    ta, tb = set(tokens(a.wire)), set(tokens(b.wire))
    if ta & dst_w or tb & src_w:
        return b, a
    return a, b
