"""The one meaning of every builtin and operator of .forge expressions.

`BUILTINS` and `OPERATORS` are the registry (the shape of Jinja's `environment.filters`
and of `stdlib/ops.py` `OpSpec`): each entry holds the name, arity, the checker's type
rule, and `impl`, the Python implementation in `forgec.runtime.envrt`. Generated tool
bodies call `_rt.<impl name>` (`codegen_form`), or an inline Python form the emitter only
uses where it equals the call (tests/test_builtins_differential.py checks both); the
blueprint evaluator (`forgec.lower.eval_expr`) calls `impl` itself. Adding a builtin is
adding one entry here (and its function in envrt).

`lambda_arg` is the index of an argument evaluated once per element of argument 0
with `it` bound to the element (`map(xs, it.price)`, `sum(xs, it.qty * it.price)`);
`impl(xs, per)` gets it as a function of the element. A rule gets the argument types
(the lambda's type in its place) and returns the result type, or a string: the error
message for a type mismatch. Semantics: docs/language.md, "Builtins and operators".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from forgec.runtime import envrt as _rt
from forgec.lang.types import (ANY, BOOL, FLOAT, INT, STR, UNKNOWN, EntSet, ListT, OptT, RecT, Ty, elem, is_loose,
                               is_number, is_stringy, join, num_type, strip_opt)
from forgec.lang import ast as A


@dataclass(frozen=True)
class Builtin:
    name: str
    min_args: int
    max_args: int
    rule: Callable[[list[Ty]], "Ty | str"]
    doc: str
    lambda_arg: int | None = None
    kwargs: tuple[str, ...] = ()
    impl: Callable[..., Any] | None = None  # envrt function; None: needs the env (fresh_id)
    env_only: bool = False  # reads the env's collections (`fresh_id(E)`): tool bodies only

    @property
    def codegen_form(self) -> str:
        """The runtime function generated code calls: `_rt.<name>`."""
        return f"_rt.{self.impl.__name__}" if self.impl is not None else ""

    def per_element(self, args: "tuple | list") -> bool:
        """Is argument `lambda_arg` evaluated per element? Always when given, except that
        `min(a, b)`/`max(a, b)` whose second argument does not mention `it` are two values."""
        if self.lambda_arg is None or len(args) <= self.lambda_arg:
            return False
        return self.name not in ("min", "max") or mentions_it(args[self.lambda_arg])


def _num(t: Ty) -> Ty:
    return num_type(t)  # INT/FLOAT only when every value is one (codegen relies on it)


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


def _floatfn(name):
    def rule(a):  # sqrt, pow, log: numbers in, a float out
        bad = next((x for x in a if not is_number(x)), None)
        return FLOAT if bad is None else f"{name} expects numbers, found {bad}"

    return rule


def _stat(name):
    def rule(a):  # mean, median, stdev, pstdev: a list of numbers (or per-element numbers) in, a float out
        e = _list_of(a[0], name)
        if isinstance(e, str):
            return e
        v = a[1] if len(a) > 1 else e
        return FLOAT if is_number(v) else f"{name} expects numbers, found {v}"

    return rule


def _calc(a):
    return FLOAT if is_stringy(a[0]) else f"calc expects an arithmetic expression str, found {a[0]}"


def _strfn(name):
    def rule(a):  # null stays null; a loose argument may be anything
        if not is_stringy(a[0]):
            return f"{name} expects a str, found {a[0]}"
        return UNKNOWN if is_loose(a[0]) else OptT(STR) if isinstance(a[0], OptT) else STR

    return rule


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


def _sig(name: str, result, *want: str):
    """A rule from argument kinds ("str", "int", "num", "list", "seq": list or str, "any"): each
    argument must fit (a loose or optional one may); the result type, or "same" as argument 0."""
    def fits(k: str, t: Ty) -> bool:
        t0 = strip_opt(t)
        if is_loose(t0) or k == "any":
            return True
        if k == "str":
            return is_stringy(t0)
        if k == "int":
            return t0 == INT
        if k == "num":
            return is_number(t0)
        if k == "list":
            return elem(t0) is not None
        return elem(t0) is not None or is_stringy(t0)  # seq

    def rule(a):
        for i, (k, t) in enumerate(zip(want, a)):
            if not fits(k, t):
                return f"{name} expects {k} as argument {i + 1}, found {t}"
        if result == "same":
            t0 = strip_opt(a[0])
            return UNKNOWN if is_loose(t0) else (STR if is_stringy(t0) else t0)
        return result

    return rule


def mentions_it(e: Any) -> bool:
    """Does `e` read `it` of the enclosing per-element argument? (`it` inside a `where` or a
    nested per-element argument is that construct's own element.)"""

    if isinstance(e, A.Name):
        return e.id == "it"
    if isinstance(e, A.Where):
        return mentions_it(e.source)
    if isinstance(e, A.Call):
        b = BUILTINS.get(e.func)
        if b is not None and b.per_element(e.args):
            rest = [a for i, a in enumerate(e.args) if i != b.lambda_arg]
        else:
            rest = list(e.args)
        return any(mentions_it(x) for x in rest) or any(mentions_it(k.value) for k in e.kwargs)
    if isinstance(e, A.Attr):
        return mentions_it(e.obj)
    if isinstance(e, A.Index):
        return mentions_it(e.obj) or mentions_it(e.index)
    if isinstance(e, A.Unary):
        return mentions_it(e.operand)
    if isinstance(e, A.Binary):
        return mentions_it(e.left) or mentions_it(e.right)
    if isinstance(e, A.ListLit):
        return any(mentions_it(x) for x in e.items)
    if isinstance(e, A.RecordLit):
        return any(mentions_it(f.value) for f in e.fields)
    return False


BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in (
        Builtin("len", 1, 1, _len, "number of elements of a list / characters of a str / fields of a record",
                impl=_rt.len_),
        Builtin("sum", 1, 2, _sum, "exact sum of the numbers (or per-element values), nulls skipped; "
                "a float result is rounded to 6 decimals", 1, impl=_rt.sum_),
        Builtin("min", 1, 2, _minmax("min"), "smallest element / per-element value, nulls skipped; "
                "min(a, b) of two values", 1, impl=_rt.min_),
        Builtin("max", 1, 2, _minmax("max"), "largest element / per-element value, nulls skipped; "
                "max(a, b) of two values", 1, impl=_rt.max_),
        Builtin("argmin", 1, 2, _firstlast("argmin"), "the element with the smallest value (or per-element value), by "
                "min's rules: nulls skipped, the first of equal values", 1, impl=_rt.argmin_),
        Builtin("argmax", 1, 2, _firstlast("argmax"), "the element with the largest value (or per-element value), by "
                "max's rules", 1, impl=_rt.argmax_),
        Builtin("any", 1, 2, _anyall("any"), "some element (or per-element condition) is true", 1, impl=_rt.any_),
        Builtin("all", 1, 2, _anyall("all"), "every element (or per-element condition) is true", 1, impl=_rt.all_),
        Builtin("map", 2, 2, _map, "list of the per-element expression", 1, impl=_rt.map_),
        Builtin("fresh_id", 1, 1, _fresh, "a new key for Entity, deterministic (prefix + counter)", env_only=True),
        Builtin("round", 1, 2, _round, "round half-even on the decimal spelling to n digits (int without n)",
                impl=_rt.round_),
        Builtin("abs", 1, 1, _abs, "absolute value", impl=_rt.abs_),
        Builtin("str", 1, 1, _conv(STR), "text of a value (JSON spelling for true/false/null)", impl=_rt.to_str),
        Builtin("int", 1, 1, _conv(INT), "integer of a number or numeric str (ToolError otherwise)", impl=_rt.to_int),
        Builtin("float", 1, 1, _conv(FLOAT), "float of a number or numeric str (ToolError otherwise)",
                impl=_rt.to_float),
        Builtin("lower", 1, 1, _strfn("lower"), "lower-case str (null stays null)", impl=_rt.lower),
        Builtin("upper", 1, 1, _strfn("upper"), "upper-case str (null stays null)", impl=_rt.upper),
        Builtin("contains", 2, 2, _contains, "substring test on str, membership on lists (false on null)",
                impl=_rt.contains),
        Builtin("startswith", 2, 2, _startswith, "str prefix test (false on null)", impl=_rt.startswith),
        Builtin("first", 1, 1, _firstlast("first"), "first element (ToolError when empty)", impl=_rt.first),
        Builtin("last", 1, 1, _firstlast("last"), "last element (ToolError when empty)", impl=_rt.last),
        Builtin("sorted", 1, 2, _sorted, "stable ascending sort by the per-element key (desc: true for descending)",
                1, ("desc",), impl=_rt.sorted_),
        Builtin("keys", 1, 1, _keys, "keys of all records of an entity (key order), field names of a record",
                impl=_rt.keys),
        Builtin("count", 1, 2, _count, "number of elements (satisfying the per-element condition)", 1,
                impl=_rt.count_),
        Builtin("split", 1, 2, _sig("split", ListT(STR), "str", "str"), "pieces of a str between each separator "
                "(words when none is given)", impl=_rt.split_),
        Builtin("join", 2, 2, _sig("join", STR, "list", "str"), "the elements' str spellings joined by a separator",
                impl=_rt.join_),
        Builtin("replace", 3, 4, _sig("replace", STR, "str", "str", "str", "int"), "every occurrence of a str "
                "replaced (the first n with a 4th argument)", impl=_rt.replace_),
        Builtin("endswith", 2, 2, _startswith, "str suffix test (false on null)", impl=_rt.endswith),
        Builtin("slice", 2, 3, _sig("slice", "same", "seq", "int", "int"), "elements (characters) from start to "
                "end, exclusive; negative counts from the end", impl=_rt.slice_),
        Builtin("pad_start", 2, 2, _sig("pad_start", STR, "str", "int"), "right-aligned in n characters",
                impl=_rt.pad_start),
        Builtin("pad_end", 2, 2, _sig("pad_end", STR, "str", "int"), "left-aligned in n characters", impl=_rt.pad_end),
        Builtin("fixed", 2, 2, _sig("fixed", STR, "num", "int"), "a number with exactly n decimals (ties away from 0)",
                impl=_rt.fixed),
        Builtin("json", 1, 2, _sig("json", STR, "any", "int"), "JSON text of a value (indent spaces per level)",
                impl=_rt.json_),
        Builtin("base64", 1, 1, _sig("base64", STR, "str"), "base64 of the text's UTF-8 bytes", impl=_rt.base64_),
        Builtin("path_resolve", 2, 2, _sig("path_resolve", STR, "str", "str"), "normalized absolute path: the path "
                "itself when absolute, else under the base", impl=_rt.path_resolve),
        Builtin("dirname", 1, 1, _sig("dirname", STR, "str"), "parent path (/a/b -> /a)", impl=_rt.dirname),
        Builtin("basename", 1, 1, _sig("basename", STR, "str"), "last name of a path (/a/b.txt -> b.txt)",
                impl=_rt.basename),
        Builtin("path_rel", 2, 2, _sig("path_rel", STR, "str", "str"), "relative path from a base to a path",
                impl=_rt.path_rel),
        Builtin("glob_match", 2, 2, _sig("glob_match", BOOL, "str", "str"), "glob test of a relative path "
                "(* ? [..] {a,b} within a name, ** across directories)", impl=_rt.glob_match),
        Builtin("path_tree", 2, 2, _sig("path_tree", ListT(ANY), "list", "str"), "nested {name, type, children} "
                "tree below a root of records with path and kind", impl=_rt.path_tree),
        Builtin("unified_diff", 3, 3, _sig("unified_diff", STR, "str", "str", "str"), "git-style unified diff of two "
                "texts for a file name", impl=_rt.unified_diff),
        Builtin("sqrt", 1, 1, _floatfn("sqrt"), "square root, a float (a negative number is an error)", impl=_rt.sqrt_),
        Builtin("pow", 2, 2, _floatfn("pow"), "x to the power y, a float (0 to a negative power is an error)",
                impl=_rt.pow_),
        Builtin("log", 1, 2, _floatfn("log"), "natural logarithm, or to base b (x > 0; b > 0, b != 1)", impl=_rt.log_),
        Builtin("mean", 1, 2, _stat("mean"), "arithmetic mean of the numbers (per-element values), nulls skipped", 1,
                impl=_rt.mean_),
        Builtin("median", 1, 2, _stat("median"), "middle value (mean of the two middle ones), nulls skipped", 1,
                impl=_rt.median_),
        Builtin("stdev", 1, 2, _stat("stdev"), "sample standard deviation (n - 1), at least two values", 1,
                impl=_rt.stdev_),
        Builtin("pstdev", 1, 2, _stat("pstdev"), "population standard deviation (n)", 1, impl=_rt.pstdev_),
        Builtin("calc", 1, 1, _calc, "value of an arithmetic expression str (+ - * / parentheses decimals), "
                "parsed, never eval'd", impl=_rt.calc),
        Builtin("sql_kind", 1, 1, _sig("sql_kind", STR, "str"), "select | insert | update | delete | create: the "
                "statement's kind (another statement is an error naming the SQL subset)", impl=_rt.sql_kind),
        Builtin("sql_table", 1, 1, _sig("sql_table", STR, "str"), "the table a SQL statement names", impl=_rt.sql_table),
        Builtin("sql_select", 2, 2, _sig("sql_select", ListT(ANY), "any", "str"), "rows a SELECT returns from a table "
                "record {name, columns, rows} (SQLite semantics)", impl=_rt.sql_select),
        Builtin("sql_write", 2, 2, _sig("sql_write", RecT("", (("rows", ListT(ANY), True), ("affected", INT, True))),
                "any", "str"), "{rows, affected}: a table's rows after an INSERT, UPDATE or DELETE", impl=_rt.sql_write),
        Builtin("sql_create", 1, 1, _sig("sql_create", RecT("", (("name", STR, True), ("columns", ListT(ANY), True),
                ("if_not_exists", BOOL, True))), "str"), "{name, columns, if_not_exists} of a CREATE TABLE",
                impl=_rt.sql_create),
    )
}


# --------------------------------------------------------------------------- operators


@dataclass(frozen=True)
class Operator:
    """A binary or unary operator: `impl` (envrt) is its meaning; `py` is the Python operator the
    emitter may write inline instead when both operand types make it equal to `impl`
    (`inline`: "int" both ints, "num_str" two numbers or two strs, "eq" scalars equal under
    Python's `==`, "always" any values); "and"/"or" short-circuit and have no `impl`."""

    symbol: str
    impl: Callable[..., Any] | None
    doc: str
    py: str = ""
    inline: str = ""
    # the checker's type rule for operators whose typing needs no context (ordering, arithmetic):
    # operand types -> result type, or the error message (the result is then `error_type`)
    rule: Callable[[Ty, Ty], "Ty | str"] | None = None
    error_type: Ty = UNKNOWN

    @property
    def codegen_form(self) -> str:
        return f"_rt.{self.impl.__name__}" if self.impl is not None else ""


def _ordering(op: str):
    def rule(lt: Ty, rt: Ty) -> "Ty | str":
        if (is_number(lt) and is_number(rt)) or (is_stringy(lt) and is_stringy(rt)):
            return BOOL
        return f"`{op}` compares two numbers or two strings, found {lt} and {rt}"

    return rule


def _arith_type(lt: Ty, rt: Ty) -> Ty:
    """Two numbers: int of two ints, float when a float is involved, UNKNOWN when a side is only
    "a number" (an enum of numbers, a key, an unknown). Codegen writes Python's operator inline and
    skips conversions on these types, so they must hold for every value."""
    a, b = num_type(lt), num_type(rt)
    if a == UNKNOWN or b == UNKNOWN:
        return UNKNOWN
    return INT if a == b == INT else FLOAT


def _plus(lt: Ty, rt: Ty) -> "Ty | str":
    if is_number(lt) and is_number(rt):
        return _arith_type(lt, rt)
    if is_stringy(lt) or is_stringy(rt):
        # `+` with a string concatenates, the other side spelled as str(x); a loose side may be a list
        sure = (is_stringy(lt) and not is_loose(lt)) or (is_stringy(rt) and not is_loose(rt))
        return STR if sure else UNKNOWN
    l0, r0 = strip_opt(lt), strip_opt(rt)
    if elem(l0) is not None and elem(r0) is not None:
        return ListT(join(elem(l0), elem(r0)))
    return f"cannot add {lt} and {rt}"


def _arith(op: str):
    def rule(lt: Ty, rt: Ty) -> "Ty | str":
        if not (is_number(lt) and is_number(rt)):
            return f"`{op}` needs numbers, found {lt} and {rt}"
        if op == "/":
            return FLOAT
        return _arith_type(lt, rt)

    return rule


OPERATORS: dict[str, Operator] = {
    o.symbol: o
    for o in (
        Operator("==", _rt.eq, "JSON equality: 1 == 1.0, true != 1, null == null, lists/records element-wise", "==", "eq"),
        Operator("!=", _rt.ne, "not ==", "!=", "eq"),
        Operator("<", _rt.lt, "two numbers or two strs; false when a side is null", "<", "num_str", _ordering("<"), BOOL),
        Operator("<=", _rt.le, "two numbers or two strs; false when a side is null", "<=", "num_str", _ordering("<="), BOOL),
        Operator(">", _rt.gt, "two numbers or two strs; false when a side is null", ">", "num_str", _ordering(">"), BOOL),
        Operator(">=", _rt.ge, "two numbers or two strs; false when a side is null", ">=", "num_str", _ordering(">="), BOOL),
        Operator("in", _rt.in_, "contains(right, left)"),
        Operator("not in", _rt.not_in, "not contains(right, left)"),
        Operator("+", _rt.add, "numbers add, lists concatenate, a str on either side concatenates text", "+", "int", _plus),
        Operator("-", _rt.sub, "numbers", "-", "int", _arith("-")),
        Operator("*", _rt.mul, "numbers", "*", "int", _arith("*")),
        Operator("/", _rt.div, "true division (7 / 2 == 3.5); by zero is an error", rule=_arith("/")),
        Operator("%", _rt.mod, "remainder with the divisor's sign (-7 % 3 == 2); by zero is an error",
                 rule=_arith("%")),
        Operator("and", None, "short-circuit; the value of the side that decides (a false/null side is false)"),
        Operator("or", None, "short-circuit; the value of the side that decides"),
    )
}

UNARY: dict[str, Operator] = {
    "-": Operator("-", _rt.neg, "negation of a number", "-", "num"),
    "not": Operator("not", _rt.not_, "true when the operand is false or null", "not", "always"),
}


def _registry_is_runtime() -> None:
    """Every `impl` is the envrt function of the same name, so `codegen_form` calls it."""
    for entry in (*BUILTINS.values(), *OPERATORS.values(), *UNARY.values()):
        if entry.impl is not None and getattr(_rt, entry.impl.__name__, None) is not entry.impl:
            raise AssertionError(f"{entry!r}: impl is not envrt.{entry.impl.__name__}")


_registry_is_runtime()
