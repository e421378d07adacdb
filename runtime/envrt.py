"""The tiny runtime every generated env module imports (and nothing else from forgec).

Generated modules (codegen/emit.py) are straight-line Python; what they share lives
here so it is written, tested and optimized once:

* `ToolError` — the one failure a tool call can have; `Env.step` *returns* it.
* canonical JSON (`canon`, `canonical_json`, `canon_float`) and the state hash
  (`state_hash`, a from-scratch reference; `EnvBase.state_hash` is incremental and
  must always agree with it).
* `EnvBase` — state storage (entity collections indexed by key, kept in key order),
  the undo log that makes a step transactional, per-record digest caching, the
  `fresh_id` counters and the escape-hatch bridge to `runtime.sandbox`.
* small builtins the effect language needs (`first`, `fsum`, `lt`, `add`, ...), each
  raising `ToolError` on domain failures (empty list, bad index) instead of crashing.
* `map_traceback` — turn a traceback through a generated module into `.forge` lines.

State hash (see docs/contracts.md, "State hash"): every record gets a digest
``sha256(canonical_json([entity, key, record]))``; a collection's digest is the sum of
its record digests modulo 2**256 (order-independent, so one changed record costs one
subtraction and one addition); the state hash is
``sha256(canonical_json({"entities": {E: [count, sum_hex]}, "globals": globals, "v": 1}))``,
over every entity but the env's LOG_ENTITIES (what only log-only `@conservative` tools write).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import operator
import re
import traceback as _tb
from types import ModuleType
from typing import Any, Iterable

from forgec.runtime.errors import ToolError  # re-exported: generated modules raise _rt.ToolError
from forgec.runtime import sandbox, sqlmini

__all__ = [
    "ToolError",
    "MISSING",
    "canon",
    "canon_float",
    "canonical_json",
    "jcopy",
    "state_hash",
    "record_digest",
    "EnvBase",
    "map_traceback",
]

HASH_VERSION = 1
MAX_STR = 10_000  # longest string argument accepted
MAX_LIST = 1_000  # longest list argument accepted
MAX_DEPTH = 32  # deepest nesting of an `any` argument
MAX_NUMBER = 2**53 - 1  # largest magnitude of a number argument (JSON's exactly-representable integers, RFC 7493)
_MOD = 1 << 256


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
_ABSENT: Any = object()  # a layer's "no entry" (None is a value)


# --------------------------------------------------------------------------- canonical JSON


def canon_float(x: float) -> float:
    """Round to 6 decimals so 0.1 + 0.2 and 0.3 hash alike; -0.0 -> 0.0; integral floats stay floats."""
    if x != x or x in (math.inf, -math.inf):
        raise ValueError(f"non-finite float {x!r} is not JSON")
    r = round(x, 6)
    return r + 0.0 if r else 0.0


def canon(v: Any) -> Any:
    """A copy of JSON value `v` with floats canonicalized (tuples become lists)."""
    t = type(v)
    if t is dict:  # plain scalars are kept inline (no call per string/int): the bulk of JSON
        return {(k if type(k) is str else _key_str(k)): (x if type(x) in _PLAIN else canon(x)) for k, x in v.items()}
    if t is list or t is tuple:
        return [(x if type(x) in _PLAIN else canon(x)) for x in v]
    if t is float:
        return canon_float(v)
    if t is str or t is int or t is bool or v is None:
        return v
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return canon_float(float(v))
    if isinstance(v, str):
        return str(v)
    raise TypeError(f"{type(v).__name__} is not a JSON value")


def _key_str(k: Any) -> str:
    # json.dumps would turn True into "true"; mirror that for dict keys so canon() is faithful.
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if type(k) is float:
        return json.dumps(canon_float(k))
    return str(k)


# `json.dumps` with options builds a JSONEncoder per call (half the time on a small record):
# the encoders are built once. Same output as json.dumps with the same options.
_CANON_ENC = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_DIGEST_ENC = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(v: Any) -> str:
    """`json.dumps` with sorted keys, compact separators, UTF-8 and canonical floats."""
    return _CANON_ENC.encode(canon(v))


def jcopy(v: Any) -> Any:
    """Deep copy of a JSON value (much faster than copy.deepcopy for dict/list trees)."""
    t = type(v)
    if t is dict:
        return {k: (x if type(x) in _SCALARS else jcopy(x)) for k, x in v.items()}
    if t is list:
        return [(x if type(x) in _SCALARS else jcopy(x)) for x in v]
    if t is tuple:
        return [jcopy(x) for x in v]
    return v


_SCALARS = frozenset({str, int, float, bool, type(None)})
_PLAIN = frozenset({str, int, bool, type(None)})  # scalars `canon` returns as they are (floats are rounded)


def shallow(v: Any) -> Any:
    """Copy one container level (path copying keeps undo snapshots of records valid)."""
    t = type(v)
    if t is dict:
        return dict(v)
    if t is list:
        return list(v)
    if v is None:
        raise ToolError("cannot assign into a null value", "precondition")
    raise ToolError(f"cannot assign into a {tname(v)}", "precondition")


# --------------------------------------------------------------------------- state hash


def record_digest(entity: str, key: str, record: Any) -> int:
    """The digest of one record, as an int (summed per collection mod 2**256)."""
    return int.from_bytes(hashlib.sha256(canonical_json([entity, key, record]).encode("utf-8")).digest(), "big")


def _fast_digest(entity: str, key: str, record: Any) -> int:
    """`record_digest` for records whose floats are already canonical (the Env invariant):
    the C JSON encoder alone, no Python walk."""
    return int.from_bytes(hashlib.sha256(_DIGEST_ENC.encode([entity, key, record]).encode("utf-8")).digest(), "big")


def cf(x: Any) -> Any:
    """Canonicalize a scalar about to be stored (floats rounded; everything else as is)."""
    return canon_float(x) if type(x) is float else x if type(x) in _SCALARS else canon(x)


def _combine(counts_sums: dict[str, tuple[int, int]], globals_: Any) -> str:
    top = {
        "entities": {e: [n, format(s, "064x")] for e, (n, s) in counts_sums.items()},
        "globals": globals_,
        "v": HASH_VERSION,
    }
    return hashlib.sha256(canonical_json(top).encode("utf-8")).hexdigest()


def state_hash(state: dict, log: Iterable[str] = ()) -> str:
    """The state hash computed from scratch (the reference the incremental hash must equal).
    `log`: the env's LOG_ENTITIES (records of log-only calls), left out: no state the reward compares."""
    ents = state.get("entities") or {}
    cs = {}
    log = frozenset(log)
    for e, coll in ents.items():
        if e in log:
            continue
        s = 0
        for k, rec in coll.items():
            s += record_digest(e, k, rec)
        cs[e] = (len(coll), s % _MOD)
    return _combine(cs, state.get("globals") or {})


# --------------------------------------------------------------------------- values & validation


def tname(v: Any) -> str:
    """The JSON type name of `v`, for error messages an agent can act on."""
    if v is None:
        return "null"
    t = type(v)
    if t is bool:
        return "boolean"
    if t is int:
        return "integer"
    if t is float:
        return "number"
    if t is str:
        return "string"
    if t is list or t is tuple:
        return "array"
    if t is dict:
        return "object"
    return t.__name__


def find_by(records: dict, field: str, value: Any) -> dict | None:
    """The one record whose `field` is `value` (a reference passed by name, `wording.lookup_field`); None when no
    record or more than one has it (a name two records share finds neither)."""
    hit = None
    for r in records.values():
        if isinstance(r, dict) and r.get(field) == value:
            if hit is not None:
                return None
            hit = r
    return hit


def short(v: Any, n: int = 60) -> str:
    """`v` for an error message, at most `n` characters; never raises (deep or odd values give their type)."""
    try:
        s = json.dumps(v, ensure_ascii=False, default=str) if not isinstance(v, str) else repr(v)
    except (RecursionError, ValueError, TypeError):
        s = f"<{tname(v)}>"
    if not s.isascii() and not utf8_ok(s):  # a dict key or list item with a lone surrogate: show it escaped
        s = s.encode("utf-8", "backslashreplace").decode("utf-8")
    return s if len(s) <= n else s[: n - 3] + "..."


def utf8_ok(s: str) -> bool:
    """True when `s` encodes as UTF-8: no lone surrogate (JSON allows "\\udfff"; the state hash cannot hold it)."""
    if s.isascii():  # O(1) in CPython
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def bad_text(where: str, s: str) -> ToolError:
    """The argument error for a string that is not valid Unicode text."""
    i = next(i for i, c in enumerate(s) if 0xD800 <= ord(c) <= 0xDFFF)
    return arg_error(f"{where} is not valid Unicode text: lone surrogate \\u{ord(s[i]):04x} at character {i}; send UTF-8 text")


_STRICT_ENC = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False).encode  # C speed: 4x canonical_json


def _encodable(v: Any, what: str) -> None:
    """Raise a `sandbox` ToolError unless `v` is JSON whose text encodes as UTF-8 (no lone surrogate, no NaN)."""
    try:
        _STRICT_ENC(v).encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError, RecursionError) as e:
        raise ToolError(f"{what}: {type(e).__name__}: {short(str(e), 120)}", "sandbox") from None


def check_number(v: Any, where: str) -> None:
    """Reject a non-finite or too large number with an argument error (never a tool bug later)."""
    if type(v) is float and not math.isfinite(v):
        raise arg_error(f"{where} must be a finite number, got {'NaN' if v != v else ('-' if v < 0 else '') + 'Infinity'}")
    if not -MAX_NUMBER <= v <= MAX_NUMBER:
        raise arg_error(f"{where} is out of range (numbers must be between -{MAX_NUMBER} and {MAX_NUMBER})")


def arg_error(msg: str) -> ToolError:
    return ToolError(msg, "invalid-arguments")


def unexpected_args(args: dict, known: tuple[str, ...]) -> ToolError:
    extra = sorted(str(k) for k in args if k not in known)
    exp = ", ".join(known) if known else "none"
    return arg_error(f"unexpected argument{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} (expected: {exp})")


def not_found(entity: str, key: Any) -> ToolError:
    return ToolError(f"{entity} {short(key)} not found", "not-found")


def in_enum(v: Any, values: tuple) -> bool:
    """Enum membership that does not confuse True with 1 or 1 with 1.0."""
    tv = type(v)
    for x in values:
        if type(x) is tv and x == v:
            return True
        if tv is int and type(x) is float and x == v:
            return True
    return False


def check_value(v: Any, tj: dict, schema: dict, where: str, live: "EnvBase | None" = None, depth: int = 0) -> Any:
    """Validate `v` against type-json `tj` (see docs/contracts.md) and return a normalized copy.

    Used for nested argument types (records, lists of records, `any`); flat parameters are
    checked by straight-line generated code instead. Entity references are checked to exist
    when `live` is given.
    """
    if depth > MAX_DEPTH:
        raise arg_error(f"{where} is nested too deeply")
    if v is None:
        if tj.get("optional") or tj.get("type") == "any":
            return None
        raise arg_error(f"{where} must not be null")
    t = tj.get("type")
    if t == "str":
        if type(v) is not str:
            raise arg_error(f"{where} must be a string, got {tname(v)}")
        if len(v) > MAX_STR:
            raise arg_error(f"{where} is too long ({len(v)} > {MAX_STR} characters)")
        if not utf8_ok(v):
            raise bad_text(where, v)
        return v
    if t == "int":
        if type(v) is float and v.is_integer():
            check_number(v, where)
            return int(v)
        if type(v) is not int:
            if type(v) is float and not math.isfinite(v):
                check_number(v, where)
            raise arg_error(f"{where} must be an integer, got {tname(v)}")
        check_number(v, where)
        return v
    if t == "float":
        if type(v) is not float and type(v) is not int:
            raise arg_error(f"{where} must be a number, got {tname(v)}")
        check_number(v, where)
        return float(v)
    if t == "bool":
        if type(v) is not bool:
            raise arg_error(f"{where} must be a boolean, got {tname(v)}")
        return v
    if t == "enum":
        vals = tuple(tj["values"])
        if not in_enum(v, vals):
            raise arg_error(f"{where} must be one of {', '.join(json.dumps(x) for x in vals)}, got {short(v)}")
        return v
    if t == "list":
        if type(v) is not list:
            raise arg_error(f"{where} must be an array, got {tname(v)}")
        if len(v) > MAX_LIST:
            raise arg_error(f"{where} has too many items ({len(v)} > {MAX_LIST})")
        it = tj["items"]
        return [check_value(x, it, schema, f"{where}[{i}]", live, depth + 1) for i, x in enumerate(v)]
    if t == "ref":
        ent = tj["entity"]
        kt = schema["entities"][ent]["fields"][schema["entities"][ent]["key"]]
        k = check_value(v, {"type": kt.get("type", "str")} if kt.get("type") in ("str", "int") else {"type": "str"}, schema, where, None, depth + 1)
        if live is not None and _key(k) not in live._C[ent]:
            raise not_found(ent, k)
        return k
    if t in ("record", "object"):
        fields = schema["records"][tj["name"]]["fields"] if t == "record" else tj["fields"]
        if type(v) is not dict:
            raise arg_error(f"{where} must be an object, got {tname(v)}")
        extra = [k for k in v if k not in fields]
        if extra:
            raise arg_error(f"{where} has unexpected field{'s' if len(extra) > 1 else ''} {', '.join(map(repr, sorted(map(str, extra))))}")
        out = {}
        for name, ftj in fields.items():
            if name in v:
                out[name] = check_value(v[name], ftj, schema, f"{where}.{name}", live, depth + 1)
            elif "default" in ftj:
                out[name] = jcopy(ftj["default"])
            elif ftj.get("optional"):
                out[name] = None
            else:
                raise arg_error(f"{where} is missing field {name!r}")
        return out
    # any
    return check_json(v, where, depth)


def check_json(v: Any, where: str, depth: int = 0) -> Any:
    """Accept any JSON value within the size limits; returns a copy."""
    if depth > MAX_DEPTH:
        raise arg_error(f"{where} is nested too deeply")
    t = type(v)
    if t is str:
        if len(v) > MAX_STR:
            raise arg_error(f"{where} is too long ({len(v)} > {MAX_STR} characters)")
        if not utf8_ok(v):
            raise bad_text(where, v)
        return v
    if t is bool or v is None:
        return v
    if t is int or t is float:
        check_number(v, where)
        return v
    if t is list:
        if len(v) > MAX_LIST:
            raise arg_error(f"{where} has too many items ({len(v)} > {MAX_LIST})")
        return [check_json(x, where, depth + 1) for x in v]
    if t is dict:
        if len(v) > MAX_LIST:
            raise arg_error(f"{where} has too many fields")
        for k in v:
            if type(k) is str and not utf8_ok(k):
                raise bad_text(f"a field name in {where}", k)
        return {str(k): check_json(x, where, depth + 1) for k, x in v.items()}
    raise arg_error(f"{where} is not a JSON value ({type(v).__name__})")


def zero_value(tj: dict) -> Any:
    """The value a field gets when an insert or an empty state leaves it unset."""
    if "default" in tj:
        return jcopy(tj["default"])
    if tj.get("optional"):
        return None
    t = tj.get("type")
    return {"str": "", "int": 0, "float": 0.0, "bool": False, "list": []}.get(t, None) if t != "enum" else tj["values"][0]


def _key(k: Any) -> str:
    """Collection keys are `str(record[key_field])`."""
    return k if type(k) is str else str(k)


key = _key


def key_of(rec: Any, key_field: str) -> Any:
    """The key of an optional record (null stays null)."""
    return None if rec is None else rec[key_field]


# --------------------------------------------------------------------------- builtins
#
# The one Python implementation of every builtin and operator of the effect language.
# Generated tool bodies call these (or an inline form the differential test proves equal),
# the blueprint evaluator (forgec/lower.py) calls the same functions through the registry
# (forgec/lang/builtins.py), and the reasoning operators (stdlib/ops.py) reuse them. The
# semantics are documented in docs/language.md ("Builtins and operators"). Two kinds of
# failure, the same on every path:
# * a domain failure (division by zero, min of an empty list, int("x")) is
#   `ToolError(message, "precondition")`: the call is refused, the tool is fine;
# * a value of the wrong type (null included: `null - 1`, `sum` of text, `len(null)`) is a
#   `TypeError(message)`: a bug in the tool, which `Env.step` reports as an internal error
#   (code "internal", mapped to the .forge line) and verification flags.


def _fail(msg: str) -> ToolError:
    return ToolError(msg, "precondition")


def _wrong(msg: str) -> TypeError:
    return TypeError(msg)


def _is_num(v: Any) -> bool:
    t = type(v)
    return t is int or t is float


def _seq(xs: Any, fn: str) -> Any:
    """The list a list builtin iterates; null and scalars (strings, records too) are refused."""
    t = type(xs)
    if t is list or t is tuple:
        return xs
    if xs is None:
        raise _wrong(f"{fn}() of null")
    if t in (str, dict, int, float, bool):
        raise _wrong(f"{fn}() of {tname(xs)}")
    return xs  # another iterable: an entity's records (`env._vals(E)`)


def _each(xs: Any, per: Any, fn: str) -> Any:
    xs = _seq(xs, fn)
    return xs if per is None else map(per, xs)


def len_(v: Any) -> int:
    """`len(x)`: elements of a list, characters of a str, fields of a record."""
    t = type(v)
    if t is list or t is str or t is dict or t is tuple:
        return len(v)
    raise _wrong(f"len() of {tname(v)}")


def count_(xs: Any, per: Any = None) -> int:
    """`count(xs)` = number of elements; `count(xs, cond)` = elements whose condition holds (truthy, as in `where`)."""
    xs = _seq(xs, "count")
    if per is None:
        return len(xs) if hasattr(xs, "__len__") else sum(1 for _ in xs)
    return sum(1 for x in xs if per(x))


def sum_(xs: Any, per: Any = None) -> Any:
    """Exact sum (math.fsum), rounded to 6 decimals when a float takes part (10.1 + 20.2 == 30.3);
    nulls are skipped; an all-int list sums to an int; a bool or text is an error."""
    ints = 0
    floats: list = []
    for x in _each(xs, per, "sum"):
        t = type(x)
        if t is int:
            ints += x
        elif t is float:
            floats.append(x)
        elif x is not None:
            raise _wrong(f"sum() of a non-number {short(x)}")
    if not floats:
        return ints
    try:
        total = math.fsum([*floats, ints])
    except OverflowError:
        raise _fail("sum() out of range") from None
    if not math.isfinite(total):
        raise _fail("sum() out of range")
    return round(total, 6) + 0.0 if total else 0.0


def _ordered(vals: list, fn: str) -> list:
    """Values `min`/`max` may compare: all numbers or all strings (nulls already dropped)."""
    if all(_is_num(v) for v in vals) or all(type(v) is str for v in vals):
        return vals
    raise _wrong(f"{fn}() of values that cannot be compared")


def min_(xs: Any, per: Any = None) -> Any:
    """Smallest value, nulls skipped; the first of equal values; error when nothing is left."""
    vals = [v for v in _each(xs, per, "min") if v is not None]
    if not vals:
        raise _fail("min() of an empty list")
    return min(_ordered(vals, "min"))


def max_(xs: Any, per: Any = None) -> Any:
    """Largest value, nulls skipped; the first of equal values; error when nothing is left."""
    vals = [v for v in _each(xs, per, "max") if v is not None]
    if not vals:
        raise _fail("max() of an empty list")
    return max(_ordered(vals, "max"))


def _arg_extreme(xs: Any, per: Any, fn: str, pick: Any) -> Any:
    xs = _seq(xs, fn)
    pairs = [(x, per(x) if per is not None else x) for x in xs]
    pairs = [(x, v) for x, v in pairs if v is not None]
    if not pairs:
        raise _fail(f"{fn}() of an empty list")
    best = pick(_ordered([v for _, v in pairs], fn))
    return next(x for x, v in pairs if eq(v, best))


def argmin_(xs: Any, per: Any = None) -> Any:
    """The element whose (per-element) value is smallest, by `min`'s rules: nulls skipped, numbers or strings
    only, the first of equal values; error when nothing is left."""
    return _arg_extreme(xs, per, "argmin", min)


def argmax_(xs: Any, per: Any = None) -> Any:
    """The element whose (per-element) value is largest, by `max`'s rules (see `argmin_`)."""
    return _arg_extreme(xs, per, "argmax", max)


def any_(xs: Any, per: Any = None) -> bool:
    """Some element (or per-element condition) is truthy; stops at the first one."""
    return any(_each(xs, per, "any"))


def all_(xs: Any, per: Any = None) -> bool:
    """Every element (or per-element condition) is truthy; stops at the first that is not."""
    return all(_each(xs, per, "all"))


def map_(xs: Any, per: Any) -> list:
    """`map(xs, e)`: the list of `e` for each element."""
    return list(_each(xs, per, "map"))


def first(xs: Any) -> Any:
    xs = _seq(xs, "first")
    if not xs:
        raise _fail("first() of an empty list")
    return xs[0]


def last(xs: Any) -> Any:
    xs = _seq(xs, "last")
    if not xs:
        raise _fail("last() of an empty list")
    return xs[-1]


def fsum(xs: Iterable) -> Any:
    """Alias of `sum_` kept for modules generated before the registry (same semantics)."""
    return sum_(xs)


def _decimal_round(x: Any, n: int) -> Any:
    """Round half to even on the decimal spelling of `x` (round(2.675, 2) == 2.68, round(0.125, 2) == 0.12)."""
    import decimal

    ctx = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_EVEN)
    d = decimal.Decimal(repr(x)) if type(x) is float else decimal.Decimal(x)
    return d.quantize(decimal.Decimal(1).scaleb(-n, ctx), context=ctx)


def round_(x: Any, n: Any = None) -> Any:
    """`round(x)`: the nearest int, ties to even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2);
    `round(x, n)`: a float with n decimals, ties to even on the decimal spelling of x."""
    if not _is_num(x):
        raise _wrong(f"round() of {short(x)}")
    if n is None:
        return int(_decimal_round(x, 0)) if type(x) is float else x
    if type(n) is not int:
        raise _wrong(f"round() digits must be an integer, got {tname(n)}")
    if n > 17:
        return float(x)
    if n < -400:
        return 0.0
    return float(_decimal_round(x, n)) + 0.0


def abs_(x: Any) -> Any:
    if not _is_num(x):
        raise _wrong(f"abs() of {tname(x)}")
    return abs(x)


# --------------------------------------------------------------------------- math (pure tools)


def _finite(r: float, fn: str) -> float:
    if not math.isfinite(r):
        raise _fail(f"{fn}() out of range")
    return r + 0.0 if r else 0.0


def _number(x: Any, fn: str) -> Any:
    if not _is_num(x):
        raise _wrong(f"{fn}() of {short(x)}")
    return x


def sqrt_(x: Any) -> float:
    """`sqrt(x)`: the square root as a float; a negative number is a domain failure."""
    _number(x, "sqrt")
    if x < 0:
        raise _fail("sqrt() of a negative number")
    try:
        return _finite(math.sqrt(x), "sqrt")
    except OverflowError:
        raise _fail("sqrt() out of range") from None


def pow_(x: Any, y: Any) -> float:
    """`pow(x, y)`: x to the power y, always a float (`pow(2, 3) == 8.0`); 0 to a negative
    power, a negative base to a fractional power and a result out of range are domain failures."""
    _number(x, "pow")
    _number(y, "pow")
    if x == 0 and y < 0:
        raise _fail("pow() of zero to a negative power")
    if x < 0 and float(y) != int(y):
        raise _fail("pow() of a negative number to a fractional power")
    try:
        return _finite(math.pow(x, y), "pow")
    except (OverflowError, ValueError):
        raise _fail("pow() out of range") from None


def log_(x: Any, base: Any = None) -> float:
    """`log(x)`: natural logarithm; `log(x, b)`: logarithm to base b. x must be > 0,
    b > 0 and b != 1 (domain failures otherwise)."""
    _number(x, "log")
    if base is not None:
        _number(base, "log")
        if base <= 0 or base == 1:
            raise _fail("log() base must be positive and not 1")
    if x <= 0:
        raise _fail("log() of a number that is not positive")
    try:
        r = math.log(x) if base is None else math.log(x) / math.log(base)
    except (OverflowError, ValueError):
        raise _fail("log() out of range") from None
    if base is not None and float(base).is_integer() and int(base) in (2, 10):
        r = math.log2(x) if int(base) == 2 else math.log10(x)  # exact for powers of the base
    return _finite(r, "log")


def _numbers(xs: Any, per: Any, fn: str) -> list:
    vals = [v for v in _each(xs, per, fn) if v is not None]
    for v in vals:
        if not _is_num(v):
            raise _wrong(f"{fn}() of a non-number {short(v)}")
    return vals


def mean_(xs: Any, per: Any = None) -> float:
    """`mean(xs)`: the arithmetic mean as a float (exact sum / count), nulls skipped;
    an empty list is a domain failure."""
    vals = _numbers(xs, per, "mean")
    if not vals:
        raise _fail("mean() of an empty list")
    try:
        return _finite(math.fsum(vals) / len(vals), "mean")
    except OverflowError:
        raise _fail("mean() out of range") from None


def median_(xs: Any, per: Any = None) -> float:
    """`median(xs)`: the middle value (mean of the two middle ones for an even count), a float."""
    vals = sorted(_numbers(xs, per, "median"))
    if not vals:
        raise _fail("median() of an empty list")
    n = len(vals)
    mid = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
    return _finite(float(mid), "median")


def stdev_(xs: Any, per: Any = None) -> float:
    """`stdev(xs)`: the sample standard deviation (divisor n - 1, as Python's
    `statistics.stdev`), nulls skipped; fewer than two values is a domain failure."""
    import statistics

    vals = _numbers(xs, per, "stdev")
    if len(vals) < 2:
        raise _fail("stdev() needs at least two values")
    try:
        return _finite(float(statistics.stdev(vals)), "stdev")
    except (OverflowError, ValueError):
        raise _fail("stdev() out of range") from None


def pstdev_(xs: Any, per: Any = None) -> float:
    """`pstdev(xs)`: the population standard deviation (divisor n, `statistics.pstdev`);
    an empty list is a domain failure."""
    import statistics

    vals = _numbers(xs, per, "pstdev")
    if not vals:
        raise _fail("pstdev() of an empty list")
    try:
        return _finite(float(statistics.pstdev(vals)), "pstdev")
    except (OverflowError, ValueError):
        raise _fail("pstdev() out of range") from None


_CALC_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|(.))")


def calc(expr: Any) -> float:
    """`calc(s)`: the value of an arithmetic expression in a str (numbers with decimals,
    `+ - * /`, unary minus, parentheses, spaces) as a float; parsed, never `eval`ed.
    A malformed expression or a division by zero is a domain failure."""
    if type(expr) is not str:
        raise _wrong(f"calc() of {short(expr)}")
    if len(expr) > 1000:
        raise _fail("calc() expression longer than 1000 characters")
    toks: list = []
    for m in _CALC_TOKEN.finditer(expr):
        if m.group(1) is not None:
            toks.append(float(m.group(1)))
        elif m.group(2) is not None:
            if m.group(2) not in "+-*/()":
                raise _fail(f"calc(): unexpected {m.group(2)!r} in the expression")
            toks.append(m.group(2))
    pos = [0]

    def peek() -> Any:
        return toks[pos[0]] if pos[0] < len(toks) else None

    def take() -> Any:
        t = peek()
        pos[0] += 1
        return t

    def expr_(depth: int) -> float:
        v = term(depth)
        while peek() in ("+", "-"):
            v = v + term(depth) if take() == "+" else v - term(depth)
        return v

    def term(depth: int) -> float:
        v = unary(depth)
        while peek() in ("*", "/"):
            op = take()
            r = unary(depth)
            if op == "/" and r == 0:
                raise _fail("calc(): division by zero")
            v = v * r if op == "*" else v / r
        return v

    def unary(depth: int) -> float:
        if depth > 100:
            raise _fail("calc(): expression nested too deeply")
        t = peek()
        if t in ("-", "+"):
            take()
            v = unary(depth + 1)
            return -v if t == "-" else v
        if t == "(":
            take()
            v = expr_(depth + 1)
            if take() != ")":
                raise _fail("calc(): missing ')'")
            return v
        if type(t) is float:
            take()
            return t
        raise _fail("calc(): expected a number" + ("" if t is None else f", found {t!r}"))

    v = expr_(0)
    if peek() is not None:
        raise _fail(f"calc(): unexpected {peek()!r}")
    return _finite(float(v), "calc")


def to_str(v: Any) -> str:
    """`str(x)` in the language: JSON spelling for booleans/null, canonical floats."""
    t = type(v)
    if t is str:
        return v
    if t is bool or v is None:
        return "true" if v is True else "false" if v is False else "null"
    if t is float:
        return repr(canon_float(v))
    if t is int:
        return str(v)
    return canonical_json(v)


def to_int(v: Any) -> int:
    """`int(x)`: numbers and booleans truncate toward zero; a numeric str is parsed; else an error."""
    try:
        if type(v) is str:
            v = v.strip()
            return int(float(v)) if ("." in v or "e" in v.lower()) else int(v)
        if v is None or type(v) in (list, dict):
            raise TypeError
        return int(v)
    except (TypeError, ValueError, OverflowError):
        raise _fail(f"int() of {short(v)}") from None


def to_float(v: Any) -> float:
    """`float(x)`: numbers, booleans and numeric strings; finite only."""
    try:
        if v is None or type(v) in (list, dict):
            raise TypeError
        r = float(v)
    except (TypeError, ValueError, OverflowError):
        raise _fail(f"float() of {short(v)}") from None
    if not math.isfinite(r):
        raise _fail(f"float() of {short(v)} is not finite")
    return r


def lower(s: Any) -> Any:
    """Lower-case text; null stays null; anything else is an error."""
    if type(s) is str:
        return s.lower()
    if s is None:
        return None
    raise _wrong(f"lower() of {tname(s)}")


def upper(s: Any) -> Any:
    """Upper-case text; null stays null; anything else is an error."""
    if type(s) is str:
        return s.upper()
    if s is None:
        return None
    raise _wrong(f"upper() of {tname(s)}")


def contains(hay: Any, needle: Any) -> bool:
    """Substring for strings (the needle spelled as str(x)), membership (`==`) for lists, field
    name for records; false when either side is null."""
    if hay is None:
        return False
    t = type(hay)
    if t is str:
        return needle is not None and to_str(needle) in hay
    if t is list or t is tuple:
        if type(needle) is str or needle is None:
            return needle in hay  # str/null equal only themselves: Python's `in` is `eq` here
        return any(eq(x, needle) for x in hay)
    if t is dict:
        return type(needle) is str and needle in hay
    raise _wrong(f"contains() on {tname(hay)}")


def startswith(s: Any, prefix: Any) -> bool:
    """Prefix test on the str spellings; false when either side is null."""
    if s is None or prefix is None:
        return False
    return to_str(s).startswith(to_str(prefix))


def nkey(v: Any) -> tuple:
    """Sort key putting nulls first and never comparing across types."""
    if v is None:
        return (0, 0, "")
    t = type(v)
    if t is bool:
        return (1, int(v), "")
    if t is int or t is float:
        return (2, v, "")
    if t is str:
        return (3, 0, v)
    return (4, 0, canonical_json(v))


def sorted_(xs: Iterable, key: Any = None, reverse: bool = False) -> list:
    """Stable sort: nulls, then booleans, numbers, strings, then other values (by canonical JSON)."""
    xs = _seq(xs, "sorted")
    if key is None:
        return sorted(xs, key=nkey, reverse=bool(reverse))
    return sorted(xs, key=lambda x: nkey(key(x)), reverse=bool(reverse))


def keys(v: Any) -> list:
    if type(v) is not dict:
        raise _wrong(f"keys() of {tname(v)}")
    return sorted(v)


# --------------------------------------------------------------------------- text and paths
# Strings and path-addressed trees (file systems, contents APIs): POSIX paths, never the host's
# file system; a wrong-typed argument is a TypeError like every builtin.


def _str_arg(v: Any, fn: str) -> str:
    if type(v) is not str:
        raise _wrong(f"{fn}() of {tname(v)}")
    return v


def _int_arg(v: Any, fn: str) -> int:
    if type(v) is int:
        return v
    if type(v) is float and v == int(v) and math.isfinite(v):
        return int(v)
    raise _wrong(f"{fn}() needs an integer, found {tname(v)}")


def split_(s: Any, sep: Any = None) -> list:
    """`split(s)`: words (runs of whitespace separate); `split(s, sep)`: pieces between each `sep`."""
    s = _str_arg(s, "split")
    if sep is None:
        return s.split()
    sep = _str_arg(sep, "split")
    if sep == "":
        raise _fail("split() with an empty separator")
    return s.split(sep)


def join_(xs: Any, sep: Any) -> str:
    """The elements' str spellings joined by `sep`."""
    xs = _seq(xs, "join")
    return _str_arg(sep, "join").join(to_str(x) for x in xs)


def replace_(s: Any, old: Any, new: Any, n: Any = None) -> str:
    """Every occurrence of `old` (the first `n` with `n`) replaced by `new`."""
    s, old, new = _str_arg(s, "replace"), _str_arg(old, "replace"), _str_arg(new, "replace")
    if old == "":
        raise _fail("replace() of an empty string")
    return s.replace(old, new) if n is None else s.replace(old, new, max(0, _int_arg(n, "replace")))


def endswith(s: Any, suffix: Any) -> bool:
    """Suffix test on the str spellings; false when either side is null."""
    if s is None or suffix is None:
        return False
    return to_str(s).endswith(to_str(suffix))


def slice_(xs: Any, start: Any, end: Any = None) -> Any:
    """Elements (characters) from `start` up to `end` (exclusive); negative counts from the end."""
    if type(xs) not in (list, str):
        raise _wrong(f"slice() of {tname(xs)}")
    a = _int_arg(start, "slice")
    return xs[a:] if end is None else xs[a:_int_arg(end, "slice")]


def pad_start(s: Any, n: Any) -> str:
    """`s` right-aligned in `n` characters (spaces before); longer text is kept whole."""
    return _str_arg(s, "pad_start").rjust(_int_arg(n, "pad_start"))


def pad_end(s: Any, n: Any) -> str:
    """`s` left-aligned in `n` characters (spaces after); longer text is kept whole."""
    return _str_arg(s, "pad_end").ljust(_int_arg(n, "pad_end"))


def fixed(x: Any, digits: Any) -> str:
    """A number spelled with exactly `digits` decimals, ties away from zero on its exact value."""
    import decimal

    if not _is_num(x):
        raise _wrong(f"fixed() of {tname(x)}")
    d = _int_arg(digits, "fixed")
    if not 0 <= d <= 20:
        raise _fail(f"fixed() digits must be 0..20, got {d}")
    if not math.isfinite(x):
        raise _fail("fixed() of a non-finite number")
    q = decimal.Decimal(x).quantize(decimal.Decimal(1).scaleb(-d), rounding=decimal.ROUND_HALF_UP)
    return f"{q:.{d}f}"


def json_(v: Any, indent: Any = None) -> str:
    """JSON text of a value (canonical floats), keys in their order; `indent` spaces per level."""
    v = canon(v)
    if indent is None:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(v, ensure_ascii=False, indent=_int_arg(indent, "json"))


def base64_(s: Any) -> str:
    """Base64 of the text's UTF-8 bytes."""
    import base64

    return base64.b64encode(_str_arg(s, "base64").encode("utf-8")).decode("ascii")


def _norm_parts(p: str) -> list:
    out: list = []
    for seg in p.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if out:
                out.pop()
            continue
        out.append(seg)
    return out


def path_resolve(p: Any, base: Any) -> str:
    """The normalized absolute path of `p`: `p` itself when absolute, else `p` under `base`;
    `.` and `..` resolved, repeated and trailing slashes dropped (`..` at the root stays there)."""
    p, base = _str_arg(p, "path_resolve"), _str_arg(base, "path_resolve")
    full = p if p.startswith("/") else base + "/" + p
    return "/" + "/".join(_norm_parts(full))


def dirname(p: Any) -> str:
    """The parent of a path (`/a/b` -> `/a`, `/a` -> `/`, `a` -> `.`), trailing slashes ignored."""
    p = _str_arg(p, "dirname")
    q = p.rstrip("/")
    if not q:
        return "/" if p else "."
    i = q.rfind("/")
    if i < 0:
        return "."
    return q[:i].rstrip("/") or "/"


def basename(p: Any) -> str:
    """The last name of a path (`/a/b.txt` -> `b.txt`), trailing slashes ignored; `/` -> ``."""
    q = _str_arg(p, "basename").rstrip("/")
    return q[q.rfind("/") + 1:]


def path_rel(p: Any, base: Any) -> str:
    """The relative path from `base` to `p` (both normalized; `..` steps where `p` is not under `base`)."""
    a = _norm_parts(_str_arg(base, "path_rel"))
    b = _norm_parts(_str_arg(p, "path_rel"))
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    return "/".join([".."] * (len(a) - i) + b[i:])


def _braces(pat: str) -> list:
    """Brace alternatives expanded (`*.{js,ts}` -> `*.js`, `*.ts`), innermost-first, nesting allowed."""
    m = re.search(r"\{([^{}]*,[^{}]*)\}", pat)
    if not m:
        return [pat]
    out = []
    for alt in m.group(1).split(","):
        out.extend(_braces(pat[: m.start()] + alt + pat[m.end():]))
    return out


def _seg_regex(seg: str) -> str:
    out, i = [], 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = seg.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = seg[i + 1:j]
                neg = body[:1] in ("!", "^")
                body = body[1:] if neg else body
                out.append("[" + ("^" if neg else "") + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _glob_segs(ps: list, ss: list) -> bool:
    if not ps:
        return not ss
    if ps[0] == "**":  # a trailing `**` needs one name at least (`a/**` is below `a`, not `a`)
        return len(ss) > 0 if len(ps) == 1 else any(_glob_segs(ps[1:], ss[i:]) for i in range(len(ss) + 1))
    return bool(ss) and re.fullmatch(_seg_regex(ps[0]), ss[0]) is not None and _glob_segs(ps[1:], ss[1:])


def glob_match(s: Any, pattern: Any) -> bool:
    """Glob test of a (relative) path: `*` `?` `[...]` within one name, `**` any number of
    directories (none included), `{a,b}` alternatives; names starting with `.` match like others."""
    s, pattern = _str_arg(s, "glob_match"), _str_arg(pattern, "glob_match")
    names = [x for x in s.split("/") if x not in ("", ".")]
    for pat in _braces(pattern):
        if _glob_segs([x for x in pat.split("/") if x not in ("", ".")], names):
            return True
    return False


def path_tree(nodes: Any, root: Any) -> list:
    """The nested tree below `root` of records with `path` and `kind`: per level sorted by name,
    `{name, type: kind, children: [...]}` (`children` for kind "directory" only); a node whose
    parent is not among `nodes` is left out."""
    root = "/" + "/".join(_norm_parts(_str_arg(root, "path_tree")))
    kids: dict = {}
    for n in _seq(nodes, "path_tree"):
        if type(n) is not dict or type(n.get("path")) is not str:
            raise _wrong("path_tree() needs records with a str `path`")
        kids.setdefault(dirname(n["path"]), []).append(n)

    def level(p: str, depth: int) -> list:
        if depth > 64:
            return []
        out = []
        for n in sorted(kids.get(p, ()), key=lambda n: basename(n["path"])):
            if n["path"] == p:
                continue
            e = {"name": basename(n["path"]), "type": n.get("kind")}
            if n.get("kind") == "directory":
                e["children"] = level(n["path"], depth + 1)
            out.append(e)
        return out

    return level(root, 0)


def unified_diff(old: Any, new: Any, name: Any) -> str:
    """A git-style unified diff of two texts (file `name`, 4 context lines, `Index:` header,
    `\\ No newline at end of file` markers); only the header when nothing changed."""
    import difflib

    old, new, name = _str_arg(old, "unified_diff"), _str_arg(new, "unified_diff"), _str_arg(name, "unified_diff")
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)  # a last line without "\n" differs
    out = [f"Index: {name}", "=" * 67, f"--- {name}\toriginal", f"+++ {name}\tmodified"]

    def line(mark: str, text: str) -> None:
        out.append(mark + text.removesuffix("\n"))
        if not text.endswith("\n"):
            out.append("\\ No newline at end of file")

    for grp in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(4):
        i1, i2, j1, j2 = grp[0][1], grp[-1][2], grp[0][3], grp[-1][4]
        out.append(f"@@ -{i1 + (1 if i2 > i1 else 0)},{i2 - i1} +{j1 + (1 if j2 > j1 else 0)},{j2 - j1} @@")
        for tag, x1, x2, y1, y2 in grp:
            if tag == "equal":
                for k in range(x1, x2):
                    line(" ", a[k])
                continue
            for k in range(x1, x2):
                line("-", a[k])
            for k in range(y1, y2):
                line("+", b[k])
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- SQL over state tables


def _sql(fn, *args: Any) -> Any:
    """Run a runtime/sqlmini function; a statement outside the subset (or one SQLite refuses)
    is a precondition failure whose message names the supported subset."""

    for a in args[-1:]:
        if type(a) is not str:
            raise _wrong(f"{fn} expects a SQL string, got {tname(a)}")
    try:
        return getattr(sqlmini, fn)(*args)
    except sqlmini.SqlError as e:
        raise _fail(str(e)) from None


def sql_kind(query: Any) -> str:
    """`sql_kind(q)`: select | insert | update | delete | create."""
    return _sql("statement_kind", query)


def sql_table(query: Any) -> str:
    """`sql_table(q)`: the table a statement names."""
    return _sql("table_of", query)


def sql_select(table: Any, query: Any) -> list:
    """`sql_select(t, q)`: the rows (dicts, SQLite's column names) a SELECT on table record t returns."""
    return _sql("select", table, query)


def sql_write(table: Any, query: Any) -> dict:
    """`sql_write(t, q)`: {rows: t's rows after an INSERT/UPDATE/DELETE, affected: the row count}."""
    return _sql("write", table, query)


def sql_create(query: Any) -> dict:
    """`sql_create(q)`: {name, columns, if_not_exists} of a CREATE TABLE."""
    return _sql("create", query)


# ---- operators


def eq(a: Any, b: Any) -> bool:
    """`==`: JSON equality. Numbers compare by value (1 == 1.0); a boolean equals only a boolean
    (true != 1); lists and records compare element by element; null equals only null."""
    ta, tb = type(a), type(b)
    if ta is tb and (ta is str or ta is int or ta is bool or a is None):
        return a == b
    if (ta is bool) != (tb is bool):
        return False
    if ta in (list, tuple) and tb in (list, tuple):
        return len(a) == len(b) and all(eq(x, y) for x, y in zip(a, b))
    if ta is dict and tb is dict:
        return a.keys() == b.keys() and all(eq(a[k], b[k]) for k in a)
    if ta is dict or tb is dict or ta in (list, tuple) or tb in (list, tuple):
        return False
    return a == b


def ne(a: Any, b: Any) -> bool:
    return not eq(a, b)


def _order(a: Any, b: Any) -> bool:
    """May `a` and `b` be ordered? False on null; ToolError unless two numbers or two strings."""
    if a is None or b is None:
        return False
    if (_is_num(a) and _is_num(b)) or (type(a) is str and type(b) is str):
        return True
    raise _wrong(f"cannot compare {tname(a)} with {tname(b)}")


def lt(a: Any, b: Any) -> bool:
    """Ordering comparisons: two numbers or two strings; false when either side is null (SQL-like)."""
    return _order(a, b) and a < b


def le(a: Any, b: Any) -> bool:
    return _order(a, b) and a <= b


def gt(a: Any, b: Any) -> bool:
    return _order(a, b) and a > b


def ge(a: Any, b: Any) -> bool:
    return _order(a, b) and a >= b


def in_(a: Any, b: Any) -> bool:
    """`a in b` = contains(b, a)."""
    return contains(b, a)


def not_in(a: Any, b: Any) -> bool:
    return not contains(b, a)


def _nums(a: Any, b: Any, verb: str) -> None:
    if a is None or b is None:
        raise _wrong(f"cannot {verb} null")
    if not (_is_num(a) and _is_num(b)):
        raise _wrong(f"cannot {verb} {tname(a)} and {tname(b)}")


def _arith(a: Any, b: Any, verb: str, fn: Any, by_zero: bool = False) -> Any:
    """Two numbers (never bools) through `fn`; dividing by zero and non-finite results are domain errors."""
    _nums(a, b, verb)
    if by_zero and b == 0:
        raise _fail("division by zero")
    try:
        r = fn(a, b)
    except OverflowError:
        raise _fail("number out of range") from None
    if type(r) is float and not math.isfinite(r):
        raise _fail("number out of range")
    return r


def add(a: Any, b: Any) -> Any:
    """`+`: numbers add, lists concatenate, and a string on either side concatenates text."""
    ta, tb = type(a), type(b)
    if ta is str or tb is str:
        return to_str(a) + to_str(b)
    if ta is list and tb is list:
        return a + b
    return _arith(a, b, "add", operator.add)


def sub(a: Any, b: Any) -> Any:
    return _arith(a, b, "subtract", operator.sub)


def mul(a: Any, b: Any) -> Any:
    return _arith(a, b, "multiply", operator.mul)


def div(a: Any, b: Any) -> float:
    """`/`: true division (7 / 2 == 3.5, 4 / 2 == 2.0); dividing by zero is an error."""
    return _arith(a, b, "divide", operator.truediv, True)


def mod(a: Any, b: Any) -> Any:
    """`%`: remainder with the sign of the divisor (-7 % 3 == 2); by zero is an error."""
    return _arith(a, b, "divide", operator.mod, True)


def not_(a: Any) -> bool:
    """`not`: true when the operand is false, null (or another false-like value: 0, "", [])."""
    return not a


def neg(a: Any) -> Any:
    """Unary `-` of a number."""
    if not _is_num(a):
        raise _wrong(f"cannot negate {tname(a)}")
    return -a


def index(obj: Any, i: Any) -> Any:
    """`x[i]` for lists (ToolError when out of range) and records/dicts (ToolError when missing)."""
    t = type(obj)
    if t is list or t is str:
        if type(i) is not int:
            raise ToolError(f"list index must be an integer, got {tname(i)}", "precondition")
        if -len(obj) <= i < len(obj):
            return obj[i]
        raise ToolError(f"index {i} out of range (length {len(obj)})", "precondition")
    if t is dict:
        k = _key(i)
        if k in obj:
            return obj[k]
        raise ToolError(f"no entry {short(i)}", "not-found")
    raise ToolError(f"cannot index {tname(obj)}", "precondition")


def slot(obj: Any, i: Any) -> Any:
    """The container slot an assignment `x[i] = v` writes (validated like `index`)."""
    t = type(obj)
    if t is list:
        if type(i) is not int or not -len(obj) <= i < len(obj):
            raise ToolError(f"index {short(i)} out of range (length {len(obj)})", "precondition")
        return i
    if t is dict:
        return _key(i)
    raise ToolError(f"cannot index {tname(obj)}", "precondition")


def carry(old: Any, new: Any, declared: tuple) -> Any:
    """A record (or list of records) written over `old` keeps the fields of `old` its type does not declare:
    fields a user's world has and the docs don't (`--state`) survive every write. In a list, a new element takes
    the extras of the first unused old element equal to it on every declared field (the element the write kept)."""
    if type(new) is dict:
        if type(old) is not dict or not old.keys() - declared:
            return new
        out = {k: v for k, v in old.items() if k not in declared and k not in new}
        out.update(new)
        return out
    if type(new) is list and type(old) is list and old:
        pool = [o for o in old if type(o) is dict and o.keys() - declared]
        if not pool:
            return new
        out = []
        for x in new:
            if type(x) is dict:
                for i, o in enumerate(pool):
                    if all(o.get(f, _ABSENT) == x.get(f, _ABSENT) for f in declared if f in x or f in o):
                        x = carry(pool.pop(i), x, declared)
                        break
            out.append(x)
        return out
    return new


def remove_one(xs: Any, v: Any) -> list:
    """`remove v from xs`: a new list without the first occurrence (ToolError when absent)."""
    if type(xs) is not list:
        raise ToolError(f"cannot remove from {tname(xs)}", "precondition")
    for i, x in enumerate(xs):
        if x == v:
            return xs[:i] + xs[i + 1 :]
    raise ToolError(f"{short(v)} is not in the list", "precondition")


def append_one(xs: Any, v: Any) -> list:
    if xs is None:
        return [v]
    if type(xs) is not list:
        raise ToolError(f"cannot append to {tname(xs)}", "precondition")
    return xs + [v]


def getf(obj: Any, name: str) -> Any:
    """`x.f` when the static type of `x` is unknown: ToolError (not KeyError) on null or missing."""
    if type(obj) is dict:
        if name in obj:
            return obj[name]
        raise ToolError(f"no field {name!r}", "precondition")
    if obj is None:
        raise ToolError(f"cannot read field {name!r} of null", "precondition")
    raise ToolError(f"cannot read field {name!r} of {tname(obj)}", "precondition")


# --------------------------------------------------------------------------- fresh ids

_ID_RE = re.compile(r"^(.*?)(\d+)$")


def next_id_pattern(keys_: Iterable[str], entity: str, int_key: bool) -> tuple[str, int, int]:
    """(prefix, next number, digit width) continuing the dominant id format of existing keys."""
    if int_key:
        nums = [int(k) for k in keys_ if _is_int(k)]
        return ("", (max(nums) + 1) if nums else 1, 0)
    groups: dict[str, list[tuple[int, int]]] = {}
    allnums = []
    for k in keys_:
        m = _ID_RE.match(k)
        if m:
            groups.setdefault(m.group(1), []).append((int(m.group(2)), len(m.group(2))))
            allnums.append(int(m.group(2)))
    if groups:
        prefix, items = max(groups.items(), key=lambda kv: (len(kv[1]), kv[0]))
        if len(items) >= 2 or len(groups) == 1:
            width = max(w for _, w in items)
            return (prefix, max(n for n, _ in items) + 1, width)
    base = re.sub(r"[^a-z0-9]+", "_", entity.lower()).strip("_") or "id"
    return (base + "_", (max(allnums) + 1) if allnums else 1, 4)


def _is_int(k: str) -> bool:
    try:
        int(k)
        return True
    except ValueError:
        return False


def format_id(prefix: str, n: int, width: int) -> str:
    return f"{prefix}{n:0{width}d}" if width else f"{prefix}{n}"


class _KeySet:
    """Stands for one key set of one collection: envs whose collection has this very key set
    (a parent and its forks, until either inserts or deletes) share the object, so the id
    pattern `_fresh_id` derives from the keys is computed once for all of them."""

    __slots__ = ("pattern",)

    def __init__(self) -> None:
        self.pattern: tuple | None = None


# --------------------------------------------------------------------------- Env base


class _Layer:
    """A fork's view of a large shared collection (or digest table): the shared dict `base`, never changed,
    under this env's own entries (`own`: replaced or new keys) and deletions (`gone`).

    Why not a copy: `forgec serve` forks one world per session, and a session that writes one record of a
    100,000-record collection must cost that record, not a copy of the collection's index (issue 25:
    1,000 sessions on a 4 MB world within 1.5x one session plus their writes). Collections of up to
    `LAYER_MIN` records are copied instead (a small copy is cheaper than a layer's Python-level reads).
    Iteration is always in key order (`sortkey` orders new keys among the base's); `values()` and friends
    return lists.
    """

    __slots__ = ("base", "own", "gone", "sortkey", "_new", "_order")

    def __init__(self, base: dict, sortkey: Any = None, own: dict | None = None, gone: set | None = None):
        self.base, self.sortkey = base, sortkey
        self.own = own if own is not None else {}
        self.gone = gone if gone is not None else set()
        self._new = sum(1 for k in self.own if k not in base)
        self._order: list | None = None

    def copy(self) -> "_Layer":
        return _Layer(self.base, self.sortkey, dict(self.own), set(self.gone))

    def get(self, k: Any, default: Any = None) -> Any:
        v = self.own.get(k, _ABSENT)
        if v is not _ABSENT:
            return v
        if k in self.gone:
            return default
        return self.base.get(k, default)

    def __contains__(self, k: Any) -> bool:
        return k in self.own or (k not in self.gone and k in self.base)

    def __getitem__(self, k: Any) -> Any:
        v = self.get(k, _ABSENT)
        if v is _ABSENT:
            raise KeyError(k)
        return v

    def __setitem__(self, k: Any, v: Any) -> None:
        if k not in self.own and k not in self.base:
            self._new += 1
            self._order = None
        elif k in self.gone:
            self._order = None
        self.gone.discard(k)
        self.own[k] = v

    def __delitem__(self, k: Any) -> None:
        if k in self.own:
            del self.own[k]
            if k in self.base:
                self.gone.add(k)
            else:
                self._new -= 1
        elif k in self.base and k not in self.gone:
            self.gone.add(k)
        else:
            raise KeyError(k)
        self._order = None

    def pop(self, k: Any, default: Any = _ABSENT) -> Any:
        v = self.get(k, _ABSENT)
        if v is _ABSENT:
            if default is _ABSENT:
                raise KeyError(k)
            return default
        del self[k]
        return v

    def __len__(self) -> int:
        return len(self.base) - len(self.gone) + self._new

    def keys(self) -> list:
        if self._order is None:
            gone = self.gone
            ks = [k for k in self.base if k not in gone] if gone else list(self.base)
            if self._new:
                ks += [k for k in self.own if k not in self.base]
                ks.sort(key=(lambda k: self.sortkey((k, None))) if self.sortkey is not None else None)
            self._order = ks
        return self._order

    def __iter__(self):
        return iter(self.keys())

    def __reversed__(self):
        return reversed(self.keys())

    def values(self) -> list:
        get = self.get
        return [get(k) for k in self.keys()]

    def items(self) -> list:
        get = self.get
        return [(k, get(k)) for k in self.keys()]

    def as_dict(self) -> dict:
        """The view as a plain dict in key order (`dict(self.items())`); at C speed when no key was added
        (the base is in key order and replacing a value keeps its place): a fork's `state` on a large
        world costs a dict copy, not a Python-level walk of every key (bench/bench_state.py)."""
        if self._new:
            return dict(self.items())
        d = dict(self.base)
        d.update(self.own)
        for k in self.gone:
            del d[k]
        return d


LAYER_MIN = 512  # a fork copies a shared collection of up to this many records; over it, it layers it



def tool_ident(module: Any, name: str, args: Any = None) -> str:
    """The tool a served name is (`find-projects` -> `find_projects`, the module's `WIRE_NAMES` read backwards): the
    name every other table of the module (TOOL_KINDS, WRITES_STATE, TOOL_PARAMS) and the manifest use. A name
    served by several acts (`CASES`) is the act its call's selector names (`operation: "create"`)."""
    case = (getattr(module, "CASES", None) or {}).get(name)
    if case is not None:
        pick = args.get(case["param"]) if isinstance(args, dict) else None
        return case["tools"].get(pick, next(iter(case["tools"].values()))) if isinstance(pick, str) else next(iter(case["tools"].values()))
    for ident, wire in (getattr(module, "WIRE_NAMES", None) or {}).items():
        if wire == name:
            return ident
    return name


def case_dispatch(cases: dict) -> dict[str, Any]:
    """Served name -> step function for each docs' tool split into acts (forgec/synth/cases.py): the call's selector
    (`operation: "create"`) picks the act's tool, looked up in the env's dispatch at call time (a withheld act is
    unknown), which gets the other arguments. An argument that only another act takes is valid on the one schema
    agents see, so it is dropped, not refused; one no act takes is left for the act to refuse."""
    out: dict[str, Any] = {}
    for wire, case in cases.items():
        param, tools, takes = case["param"], dict(case["tools"]), {k: frozenset(v) for k, v in case["takes"].items()}
        known = frozenset().union(*takes.values()) if takes else frozenset()

        def route(env: Any, args: Any, _param=param, _tools=tools, _takes=takes, _known=known) -> Any:
            if not isinstance(args, dict):
                raise arg_error("arguments must be a JSON object")
            pick = args.get(_param)
            ident = _tools.get(pick) if isinstance(pick, str) else None
            if ident is None:
                raise arg_error(f"{_param!r} must be one of {', '.join(map(repr, _tools))}" + ("" if _param in args else f" (missing {_param!r})"))
            fn = env._DISPATCH.get(ident)
            if fn is None:
                raise ToolError(f"unknown tool {short(ident)}", "unknown-tool")
            own = _takes.get(ident, frozenset())
            return fn(env, {k: v for k, v in args.items() if k != _param and (k in own or k not in _known)})

        out[wire] = route
    return out

class EnvBase:
    """State storage shared by every generated `Env` (the subclass adds schema and tools).

    Invariants: every float stored in the state is canonical (`canon_float`), so record
    digests use the C JSON encoder directly; `self._C[E]` is the dict of records of entity E keyed by
    `str(record[key])`, in key order (`_unsorted` marks collections to re-sort before
    the next ordered read); records are mutated in place only after `_touch` saved a
    shallow snapshot, and nested containers are never mutated in place (codegen copies
    the path), so the snapshot restores the record exactly.

    Copy-on-write (`fork`, `Env(state, trusted=True)`): record objects may be shared with
    other envs (or with the caller's state). `_own` is None when every record is private,
    else the set of `(E, key)` whose record object this env alone holds. A step writes
    a shared record in place (so every alias the generated code holds sees the write)
    and, when it commits, moves the new content into a private copy and restores the
    shared object from the undo snapshot: other holders never observe the write. Nested
    containers can be shared freely because nobody mutates them in place.
    """

    ENV_NAME = ""
    SCHEMA: dict = {}
    _DISPATCH: dict = {}
    _KEYS: dict = {}  # entity -> key field
    _INT_KEYS: frozenset = frozenset()
    _LOG: frozenset = frozenset()  # LOG_ENTITIES: not in the state hash
    PYTHON_TOOLS: dict = {}
    _MODULE: ModuleType | None = None
    _TENANT: str | None = None  # the sandbox worker's owner for python tools (None: this env module)

    def __init__(self, state: dict | None = None, *, trusted: bool = False):
        self.reset(state if state is not None else {}, trusted=trusted)

    # ---- state
    def reset(self, state: dict, *, trusted: bool = False) -> None:
        """Replace the state with a deep copy of `state` (missing collections/globals are filled in).

        `trusted=True` is the fast path for a state that is already canonical: what
        `Env.state` / `snapshot()` give, or their JSON round trip (every declared field
        present, canonical floats, collection keys `str(record[key])`). It skips the
        validation and the deep copy: the records are shared copy-on-write with `state`,
        so the env never changes them, and the caller must not change them either.
        """
        if not isinstance(state, dict):
            raise TypeError("state must be a dict")
        if trusted:
            return self._reset_trusted(state)
        ents = state.get("entities") or {}
        C: dict[str, dict] = {}
        sch = self.SCHEMA.get("entities", {})
        for e, kf in self._KEYS.items():
            fdecl = sch.get(e, {}).get("fields", {})
            coll = ents.get(e) or {}
            if type(coll) is not dict:
                raise ValueError(f"state: entities.{e} must be an object keyed by {kf}")
            items = []
            for k, rec in coll.items():
                if type(rec) is not dict:
                    raise ValueError(f"state: entities.{e}.{k} must be an object")
                rec = canon(rec)  # stored floats are canonical: hashing needs no Python walk
                if kf not in rec:  # the collection key is the record's key
                    rec[kf] = int(k) if e in self._INT_KEYS and _is_int(k) else k
                if _key(rec[kf]) != k:
                    raise ValueError(f"state: entities.{e}.{k} has {kf}={rec[kf]!r}; collection keys are str(record[{kf!r}])")
                if len(rec) < len(fdecl):  # absent optional fields read as null / defaults
                    for f, ftj in fdecl.items():
                        if f not in rec:
                            rec[f] = zero_value(ftj)
                items.append((k, rec))
            items.sort(key=self._sortkey(e))
            C[e] = dict(items)
        for e in ents:
            if e not in C:
                raise ValueError(f"state: unknown entity {e!r} (declared: {', '.join(self._KEYS) or 'none'})")
        G = {}
        gdecl = self.SCHEMA.get("globals", {})
        gin = state.get("globals") or {}
        for name, tj in gdecl.items():
            G[name] = canon(gin[name]) if name in gin else canon(zero_value(tj))
        for name in gin:
            if name not in G:
                G[name] = canon(gin[name])
        try:  # the state hash must always encode: refuse a lone surrogate ("\udfff" in a state file) here
            _STRICT_ENC({"entities": C, "globals": G}).encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"state: holds text that is not valid Unicode ({short(e.object[e.start:e.end])}, "
                             "a lone surrogate); states are UTF-8 JSON") from None
        self._install(C, G, None)

    def _reset_trusted(self, state: dict) -> None:
        """`reset` of a canonical state: collections re-keyed in key order, records shared."""
        ents = state.get("entities") or {}
        C: dict[str, dict] = {}
        for e in self._KEYS:
            coll = ents.get(e) or {}
            # str keys are unique, so sorting (key, record) pairs never compares records
            C[e] = dict(sorted(coll.items(), key=self._sortkey(e)) if e in self._INT_KEYS else sorted(coll.items()))
        for e in ents:
            if e not in C:
                raise ValueError(f"state: unknown entity {e!r} (declared: {', '.join(self._KEYS) or 'none'})")
        G = dict(state.get("globals") or {})
        for name, tj in self.SCHEMA.get("globals", {}).items():
            if name not in G:
                G[name] = canon(zero_value(tj))
        self._install(C, G, set())

    def _install(self, C: dict, G: dict, own: "set | None") -> None:
        self._C = C
        self._G = G
        self._state = {"entities": C, "globals": G}
        self._own = own  # None: every record is private; else the (E, key)s whose record is private
        self._shared: set = set()  # entities whose collection dict (and digest table) a fork shares: copy before changing
        self._layered = False  # some collection is a `_Layer`: `state` builds plain dicts for readers
        self._mat: dict | None = None  # that state, until the next change of a collection
        self._cow: list = []  # shared records written by the running step: (E, key, record, snapshot)
        self._undo: list = []
        self._touched: set = set()
        self._unsorted: set = set()
        self._ids: dict[str, list] = {}
        self._keysets = {e: _KeySet() for e in C}
        self._issued: set = set()
        self._digests: dict[str, dict[str, int]] | None = None
        self._sums: dict[str, int] = {}
        self._dirty: set = set()
        self._hash: str | None = None

    @property
    def state(self) -> dict:
        """The live state (read-only for callers; mutate only through `step`)."""
        for e in tuple(self._unsorted):
            self._resort(e)
        if not self._layered:
            return self._state
        if self._mat is None:  # JSON encoders, diffs and the sandbox read plain dicts; records are shared, not copied
            self._mat = {"entities": {e: (c if type(c) is dict else c.as_dict()) for e, c in self._C.items()},
                         "globals": self._G}
        return self._mat

    def snapshot(self) -> dict:
        """A deep copy of the state, safe to keep."""
        return jcopy(self.state)

    def fork(self) -> "EnvBase":
        """An independent Env with this state and its hash caches, copy-on-write at two levels.

        O(number of collections): collection dicts and their digest tables are shared with
        this env until either side changes one (`_own_coll` copies it then, one C-level
        `dict()`), and records are shared until either env writes one (see the class
        docstring). A fork that reads costs a few small dicts; one that writes costs the
        collections it wrote to (their key index, not their records) plus the records it
        changed. `forgec serve` keeps a thousand sessions on one world state this way.
        """
        if self._undo:
            raise RuntimeError("fork() during a step")
        for e in tuple(self._unsorted):  # shared collections must already be in key order
            self._resort(e)
        new = object.__new__(type(self))
        new._C = dict(self._C)
        new._G = dict(self._G)  # one level: nested containers are never mutated in place
        new._state = {"entities": new._C, "globals": new._G}
        self._own = set()  # from now on every record is shared, on both sides
        new._own = set()
        self._shared = set(self._C)  # and every collection dict and digest table
        new._shared = set(self._C)
        new._cow, new._undo, new._touched, new._issued = [], [], set(), set()
        new._unsorted = set()
        new._ids = {e: list(st) for e, st in self._ids.items()}  # id patterns are a function of the state
        new._keysets = dict(self._keysets)  # same key sets: id patterns computed by either are shared
        new._digests = dict(self._digests) if self._digests is not None else None
        new._sums = dict(self._sums)
        new._dirty = set(self._dirty)
        new._hash = self._hash
        new._layered, new._mat = self._layered, None
        return new

    def _own_coll(self, e: str) -> Any:
        """The collection of `e` for changing: a private copy (or, over `LAYER_MIN` records, a `_Layer` over the
        shared dict) first if a fork shares it, and the same for its digest table."""
        self._mat = None
        if e in self._shared:
            self._shared.discard(e)
            self._C[e] = self._private(self._C[e], self._sortkey(e))
            if self._digests is not None and e in self._digests:
                self._digests[e] = self._private(self._digests[e], None)
        return self._C[e]

    def _private(self, coll: Any, sortkey: Any) -> Any:
        if type(coll) is _Layer:
            return coll.copy()  # a layer two forks hold: each gets its own entries over the same base
        if len(coll) <= LAYER_MIN:
            return dict(coll)
        self._layered = True
        return _Layer(coll, sortkey)

    def _sortkey(self, e: str):
        if e in self._INT_KEYS:
            return lambda kv: (0, int(kv[0]), "") if _is_int(kv[0]) else (1, 0, kv[0])
        return lambda kv: kv[0]

    def _resort(self, e: str) -> None:
        self._unsorted.discard(e)
        if type(self._C[e]) is _Layer:
            return  # a layer iterates in key order already
        coll = self._own_coll(e)
        items = sorted(coll.items(), key=self._sortkey(e))
        coll.clear()
        coll.update(items)
        self._unsorted.discard(e)

    def _vals(self, e: str):
        """The records of `e` in key order (the source of `Entity where ...`)."""
        if e in self._unsorted:
            self._resort(e)
        return self._C[e].values()

    # ---- hashing
    def state_hash(self) -> str:
        """SHA-256 state hash (see module docstring), incremental: only touched records are rehashed."""
        if self._digests is None:
            self._digests = {}
            for e, coll in self._C.items():
                if e in self._LOG:
                    continue
                d = {k: _fast_digest(e, k, r) for k, r in coll.items()}
                self._digests[e] = d
                self._sums[e] = sum(d.values()) % _MOD
            self._dirty.clear()
            self._hash = None
        elif self._dirty:
            for e, k in self._dirty:
                if e in self._LOG:
                    continue
                if e in self._shared:  # a fork's digest table: copy it (with its collection) before changing it
                    self._own_coll(e)
                d = self._digests[e]
                old = d.pop(k, None)
                s = self._sums[e]
                if old is not None:
                    s -= old
                rec = self._C[e].get(k)
                if rec is not None:
                    new = _fast_digest(e, k, rec)
                    d[k] = new
                    s += new
                self._sums[e] = s % _MOD
            self._dirty.clear()
            self._hash = None
        if self._hash is None:
            self._hash = _combine({e: (len(self._C[e]), self._sums[e]) for e in self._C if e not in self._LOG}, self._G)
        return self._hash

    # ---- transactional primitives (called by generated code)
    def _get(self, e: str, k: Any) -> dict:
        rec = self._C[e].get(k if type(k) is str else _key(k))
        if rec is None:
            raise not_found(e, k)
        return rec

    def _touch(self, e: str, rec: dict) -> dict:
        k = _key(rec[self._KEYS[e]])
        tk = (e, k)
        if tk not in self._touched:
            self._touched.add(tk)
            snap = dict(rec)
            self._undo.append((0, rec, snap))
            if self._own is not None and tk not in self._own:  # shared: made private at commit
                self._cow.append((e, k, rec, snap))
        self._dirty.add(tk)
        self._hash = None
        return rec

    def _touch_any(self, obj: Any) -> bool:
        """Touch `obj` if it is a live record of some entity (static type unknown); False if a plain value."""
        if type(obj) is not dict:
            return False
        for e, kf in self._KEYS.items():
            if kf in obj and self._C[e].get(_key(obj[kf])) is obj:
                self._touch(e, obj)
                return True
        return False

    def _touch_globals(self) -> dict:
        if ("", "") not in self._touched:
            self._touched.add(("", ""))
            self._undo.append((1, self._G, dict(self._G)))
        self._hash = None
        return self._G

    def _insert(self, e: str, rec: dict) -> dict:
        coll = self._own_coll(e)
        k = _key(rec[self._KEYS[e]])
        if k in coll:
            raise ToolError(f"{e} {short(rec[self._KEYS[e]])} already exists", "precondition")
        last = next(reversed(coll), None) if coll and type(coll) is dict else None  # a layer keeps key order itself
        coll[k] = rec
        self._undo.append((2, e, k))
        self._keysets[e] = _KeySet()
        if self._own is not None:
            self._own.add((e, k))
        if e in self._ids:
            self._id_inserted(e, k)
        if last is not None and e not in self._unsorted:
            sk = self._sortkey(e)
            if sk((k, None)) < sk((last, None)):
                self._unsorted.add(e)
        self._dirty.add((e, k))
        self._hash = None
        return rec

    def _delete(self, e: str, rec: dict) -> None:
        k = _key(rec[self._KEYS[e]])
        coll = self._own_coll(e)
        if coll.get(k) is not rec:
            raise not_found(e, rec[self._KEYS[e]])
        del coll[k]
        self._undo.append((3, e, k, rec))
        self._keysets[e] = _KeySet()
        if self._own is not None:
            self._own.discard((e, k))
        self._ids.pop(e, None)  # the largest id may be gone: recompute when next needed
        self._dirty.add((e, k))
        self._hash = None

    def _delete_any(self, obj: Any) -> None:
        if type(obj) is dict:
            for e, kf in self._KEYS.items():
                if kf in obj and self._C[e].get(_key(obj[kf])) is obj:
                    return self._delete(e, obj)
        raise ToolError("delete: not a record of this environment", "precondition")

    def _fresh_id(self, e: str) -> Any:
        """A new key for `e`: the dominant existing id format with (largest number + 1).

        A pure function of the current state (plus the ids already issued in this step),
        so the same call on equal states gives the same id, whatever happened before.
        The (prefix, next, width) pattern is cached and kept exact by `_insert`/`_delete`.
        """
        st = self._ids.get(e)
        if st is None:
            ks = self._keysets[e]
            if ks.pattern is None:
                ks.pattern = next_id_pattern(self._C[e].keys(), e, e in self._INT_KEYS)
            st = list(ks.pattern)
            self._ids[e] = st
        prefix, n, width = st
        coll = self._C[e]
        intk = e in self._INT_KEYS
        while True:
            k = n if intk else format_id(prefix, n, width)
            ks = _key(k)
            if ks not in coll and (e, ks) not in self._issued:
                break
            n += 1
        self._issued.add((e, ks))
        self._undo.append((4,))  # makes the step clean up `_issued` at its end
        return k

    def _id_inserted(self, e: str, k: str) -> None:
        st = self._ids.get(e)
        if st is None:
            return
        if e in self._INT_KEYS:
            if _is_int(k):
                st[1] = max(st[1], int(k) + 1)
            return
        m = _ID_RE.match(k)
        if m and m.group(1) == st[0]:
            st[1] = max(st[1], int(m.group(2)) + 1)
        else:
            del self._ids[e]  # another format may now dominate: recompute when next needed

    def _rollback(self) -> None:
        self._mat = None
        for entry in reversed(self._undo):
            tag = entry[0]
            if tag == 0 or tag == 1:
                obj, snap = entry[1], entry[2]
                obj.clear()
                obj.update(snap)
            elif tag == 2:
                self._C[entry[1]].pop(entry[2], None)
                self._keysets[entry[1]] = _KeySet()
                if self._own is not None:
                    self._own.discard((entry[1], entry[2]))
            elif tag == 3:
                self._C[entry[1]][entry[2]] = entry[3]  # may be a shared record: not owned
                self._keysets[entry[1]] = _KeySet()
                self._unsorted.add(entry[1])
        self._undo.clear()
        self._cow.clear()  # the shared records were restored in place above
        self._touched.clear()
        self._issued.clear()
        self._ids.clear()  # undone inserts/deletes: recompute id patterns when next needed
        self._hash = None

    # ---- stepping
    def step(self, tool: str, args: dict) -> Any:  # `tool`: its name, or the docs' name it is served by (`WIRE_NAMES`)
        """Run one tool call: its JSON result, or a `ToolError` instance (state unchanged)."""
        fn = self._DISPATCH.get(tool) if type(tool) is str else None
        if fn is None:
            return ToolError(f"unknown tool {short(tool)}", "unknown-tool")
        try:
            result = fn(self, args)
        except ToolError as e:
            if self._undo:
                self._rollback()
            return e.with_traceback(None)
        except ZeroDivisionError:
            if self._undo:
                self._rollback()
            return ToolError("division by zero", "precondition")
        except RecursionError:
            if self._undo:
                self._rollback()
            return ToolError("internal error: recursion too deep", "internal", internal=True)
        except Exception as exc:  # noqa: BLE001 - a bug in a tool must not kill the episode
            if self._undo:
                self._rollback()
            return self._internal_error(tool, exc)
        except BaseException:  # KeyboardInterrupt mid-step: shared records must not keep the write
            if self._undo:
                self._rollback()
            raise
        if self._undo:
            if self._cow:
                self._commit_cow()
            self._undo.clear()
            self._touched.clear()
            self._issued.clear()
        return result

    def _commit_cow(self) -> None:
        """Move this step's writes to shared records into private copies; restore the shared ones."""
        own = self._own
        for e, k, rec, snap in self._cow:
            coll = self._own_coll(e)
            if coll.get(k) is rec:  # still in the state (not deleted or replaced in this step)
                coll[k] = dict(rec)
                own.add((e, k))
            rec.clear()
            rec.update(snap)
        self._cow.clear()

    def _internal_error(self, tool: str, exc: BaseException) -> ToolError:
        where = ""
        if self._MODULE is not None:
            frames = map_traceback(exc, self._MODULE)
            if frames:
                where = frames[-1]
        msg = f"internal error in {tool}: {type(exc).__name__}: {exc}"
        err = ToolError(msg + (f" (at {where})" if where else ""), "internal", internal=True, where=where)
        err.__cause__ = exc
        return err

    # ---- escape hatch
    def _run_python(self, tool: str, params: dict, writes: bool) -> Any:
        """Run a `python` tool in the sandbox worker; apply its new state (if any) as touched records."""

        spec = self.PYTHON_TOOLS[tool]
        # one worker per env module, or per tenant (`forgec serve` gives each session its own)
        result, new_state = sandbox.shared(self._TENANT or type(self).__module__).call(
            tool, spec["source"], tuple(spec["params"]), params, self.state, spec.get("line", 0), spec.get("file", ""), writes, self.state_hash()
        )
        if new_state is not None:
            if not writes:
                raise ToolError(f"{tool} is a read tool but changed the state", "sandbox")
            _encodable(new_state, f"{tool} wrote a value the state cannot hold")  # the state hash must always encode
            self._apply_state(new_state)
        try:
            out = canon(result)
        except (TypeError, ValueError) as e:
            raise ToolError(f"{tool} returned a non-JSON value: {e}", "sandbox", internal=True) from None
        _encodable(out, f"{tool} returned a value that is not UTF-8 text")
        return out

    def _apply_state(self, new: Any) -> None:
        """Replace the state by `new` record by record (only changed records are touched)."""
        if not isinstance(new, dict) or not isinstance(new.get("entities", {}), dict):
            raise ToolError("python tool returned a malformed state", "sandbox")
        nents = new.get("entities") or {}
        for e in nents:
            if e not in self._C:
                raise ToolError(f"python tool created unknown entity {e!r}", "sandbox")
        for e, coll in self._C.items():
            ncoll = nents.get(e, {})
            if not isinstance(ncoll, dict):
                raise ToolError(f"python tool returned a malformed {e} collection", "sandbox")
            kf = self._KEYS[e]
            for k in [k for k in coll if k not in ncoll]:
                self._delete(e, coll[k])
            for k, nrec in ncoll.items():
                if not isinstance(nrec, dict) or _key(nrec.get(kf)) != k:
                    raise ToolError(f"python tool returned a malformed {e} record {k!r}", "sandbox")
                old = coll.get(k)
                if old is None:
                    self._insert(e, canon(nrec))
                elif old != nrec:
                    self._touch(e, old)
                    old.clear()
                    old.update(canon(nrec))
        ng = new.get("globals") or {}
        if ng != self._G:
            self._touch_globals()
            self._G.clear()
            self._G.update(canon(ng))


# --------------------------------------------------------------------------- tracebacks


def map_traceback(exc_or_tb: Any, module: ModuleType) -> list[str]:
    """`.forge` locations (`file:line`) of the frames of a traceback that ran through `module`.

    SOURCE_MAP maps generated line -> (forge file, forge line) for every statement's first
    line; a frame inside a multi-line statement maps to the nearest preceding entry.
    """
    tb = exc_or_tb.__traceback__ if isinstance(exc_or_tb, BaseException) else exc_or_tb
    smap = getattr(module, "SOURCE_MAP", None) or {}
    path = getattr(module, "__file__", None)
    if not smap or tb is None:
        return []
    lines = sorted(smap)
    out = []
    for fs in _tb.extract_tb(tb):
        if path is not None and fs.filename != path:
            continue
        i = bisect.bisect_right(lines, fs.lineno) - 1
        if i >= 0:
            f, ln = smap[lines[i]]
            out.append(f"{f}:{ln}")
    return out


def format_mapped_traceback(exc: BaseException, module: ModuleType) -> str:
    """The Python traceback with each generated-module frame annotated by its `.forge` line."""
    smap = getattr(module, "SOURCE_MAP", None) or {}
    path = getattr(module, "__file__", None)
    lines = sorted(smap)
    out = ["Traceback (most recent call last):"]
    for fs in _tb.extract_tb(exc.__traceback__):
        note = ""
        if fs.filename == path and lines:
            i = bisect.bisect_right(lines, fs.lineno) - 1
            if i >= 0:
                f, ln = smap[lines[i]]
                note = f"  [forge: {f}:{ln}]"
        out.append(f'  File "{fs.filename}", line {fs.lineno}, in {fs.name}{note}')
        if fs.line:
            out.append(f"    {fs.line}")
    out.append(f"{type(exc).__name__}: {exc}")
    return "\n".join(out)
