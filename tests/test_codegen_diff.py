"""Differential test: random typed expressions evaluated by the generated code and by a small
reference interpreter written here from the documented semantics (docs/contracts.md) must
agree on the value, or both fail with a ToolError."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forgec.codegen import emit_env, load_env_module
from forgec.lang import ast as A
from forgec.runtime.envrt import ToolError

N, L = A.Name, A.Literal
ORDERS = {
    "o1": {"order_id": "o1", "status": "pending", "total": 30.5, "qty": 1},
    "o2": {"order_id": "o2", "status": "shipped", "total": 12.25, "qty": 2},
    "o3": {"order_id": "o3", "status": "pending", "total": 99.0, "qty": 3},
    "o4": {"order_id": "o4", "status": "cancelled", "total": 150.0, "qty": 0},
}
STATE = {"entities": {"Order": ORDERS}, "globals": {}}
ORDER = A.EntityDecl(
    "Order",
    "order_id",
    (A.FieldDecl("order_id", A.PrimType("str")), A.FieldDecl("status", A.PrimType("str")), A.FieldDecl("total", A.PrimType("float")), A.FieldDecl("qty", A.PrimType("int"))),
)


class RefError(Exception):
    pass


def ref(e, it=None):
    """The reference interpreter (expressions only, no state writes)."""
    if isinstance(e, A.Literal):
        return e.value
    if isinstance(e, A.Name):
        if e.id == "it":
            return it
        return [ORDERS[k] for k in sorted(ORDERS)]
    if isinstance(e, A.Attr):
        return ref(e.obj, it)[e.name]
    if isinstance(e, A.Unary):
        v = ref(e.operand, it)
        return (not v) if e.op == "not" else -v
    if isinstance(e, A.Binary):
        if e.op == "and":
            return ref(e.left, it) and ref(e.right, it)
        if e.op == "or":
            return ref(e.left, it) or ref(e.right, it)
        a, b = ref(e.left, it), ref(e.right, it)
        if e.op == "+":
            if isinstance(a, str) or isinstance(b, str):
                return _s(a) + _s(b)
            return a + b
        if e.op in ("/", "%") and b == 0:
            raise RefError("division by zero")
        return {"-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b, "%": lambda: a % b, "==": lambda: a == b, "!=": lambda: a != b,
                "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b, "in": lambda: a in b}[e.op]()
    if isinstance(e, A.Where):
        return [x for x in ref(e.source, it) if ref(e.pred, x)]
    if isinstance(e, A.ListLit):
        return [ref(x, it) for x in e.items]
    if isinstance(e, A.Call):
        f, args = e.func, e.args
        if f == "len":
            return len(ref(args[0], it))
        if f == "count":
            return sum(1 for x in ref(args[0], it) if ref(args[1], x))
        if f in ("sum", "min", "max", "map") and len(args) == 2:
            vals = [ref(args[1], x) for x in ref(args[0], it)]
            if f == "map":
                return vals
            if f == "sum":
                t = sum(vals)
                return round(t, 6) if isinstance(t, float) else t
            if not vals:
                raise RefError("empty")
            return min(vals) if f == "min" else max(vals)
        if f in ("any", "all"):
            xs = ref(args[0], it)
            return (any if f == "any" else all)(ref(args[1], x) for x in xs)
        if f in ("first", "last"):
            xs = ref(args[0], it)
            if not xs:
                raise RefError("empty")
            return xs[0] if f == "first" else xs[-1]
        if f == "sorted":
            xs = ref(args[0], it)
            return sorted(xs, key=lambda x: ref(args[1], x))
        if f == "abs":
            return abs(ref(args[0], it))
        if f in ("lower", "upper"):
            s = ref(args[0], it)
            return s.lower() if f == "lower" else s.upper()
        if f == "contains":
            return ref(args[1], it) in ref(args[0], it)
        if f == "startswith":
            return ref(args[0], it).startswith(ref(args[1], it))
        if f == "str":
            return _s(ref(args[0], it))
        if f == "round":
            return round(ref(args[0], it), ref(args[1], it))
    raise AssertionError(f"no reference for {e!r}")


def _canonical(v):
    """Documented result semantics: floats come back rounded to 6 decimals."""
    if isinstance(v, float):
        return round(v, 6) + 0.0
    if isinstance(v, list):
        return [_canonical(x) for x in v]
    if isinstance(v, dict):
        return {k: _canonical(x) for k, x in v.items()}
    return v


def _s(v):
    return "true" if v is True else "false" if v is False else str(v)


# ---------------------------------------------------------------- typed expression strategies

def _it(f):
    return A.Attr(N("it"), f)


ORD_LIST = st.deferred(lambda: st.one_of(st.just(N("Order")), st.builds(A.Where, st.just(N("Order")), PRED), st.builds(lambda p: A.Call("sorted", (N("Order"), p)), st.sampled_from([_it("total"), _it("qty"), _it("status")]))))
PRED = st.deferred(lambda: st.one_of(
    st.builds(lambda s: A.Binary("==", _it("status"), L(s)), st.sampled_from(["pending", "shipped", "cancelled", "lost"])),
    st.builds(lambda op, v: A.Binary(op, _it("total"), L(v)), st.sampled_from(["<", "<=", ">", ">="]), st.sampled_from([12.25, 50.0, 99.0])),
    st.builds(lambda op, v: A.Binary(op, _it("qty"), v), st.sampled_from(["==", "!=", "<", ">="]), INT),
    st.builds(lambda a, b: A.Binary("and", a, b), PRED, PRED),
    st.builds(lambda a: A.Unary("not", a), PRED),
))
INT = st.deferred(lambda: st.one_of(
    st.builds(L, st.integers(-3, 5)),
    st.builds(lambda x: A.Call("len", (x,)), ORD_LIST),
    st.builds(lambda x, p: A.Call("count", (x, p)), ORD_LIST, PRED),
    st.builds(lambda op, a, b: A.Binary(op, a, b), st.sampled_from(["+", "-", "*", "%"]), INT, INT),
    st.builds(lambda a: A.Call("abs", (a,)), INT),
    st.builds(lambda x: A.Call("sum", (x, _it("qty"))), ORD_LIST),
    st.builds(lambda a: A.Unary("-", a), INT),
))
FLOAT = st.deferred(lambda: st.one_of(
    st.builds(L, st.sampled_from([0.1, 0.2, 2.5, -1.75])),
    st.builds(lambda x, f: A.Call(f, (x, _it("total"))), ORD_LIST, st.sampled_from(["sum", "min", "max"])),
    st.builds(lambda op, a, b: A.Binary(op, a, b), st.sampled_from(["+", "-", "*", "/"]), FLOAT, st.one_of(FLOAT, INT)),
    st.builds(lambda a, n: A.Call("round", (a, L(n))), FLOAT, st.integers(0, 3)),
    st.builds(lambda x: A.Attr(A.Call("first", (x,)), "total"), ORD_LIST),
))
STR = st.deferred(lambda: st.one_of(
    st.builds(L, st.sampled_from(["a", "Pend", "o1", ""])),
    st.builds(lambda x: A.Attr(A.Call("last", (x,)), "status"), ORD_LIST),
    st.builds(lambda f, a: A.Call(f, (a,)), st.sampled_from(["lower", "upper"]), STR),
    st.builds(lambda a, b: A.Binary("+", a, b), STR, st.one_of(STR, INT, BOOL)),
    st.builds(lambda a: A.Call("str", (a,)), INT),
))
BOOL = st.deferred(lambda: st.one_of(
    st.builds(L, st.booleans()),
    st.builds(lambda op, a, b: A.Binary(op, a, b), st.sampled_from(["<", "<=", "==", "!="]), INT, INT),
    st.builds(lambda op, a, b: A.Binary(op, a, b), st.sampled_from(["and", "or"]), BOOL, BOOL),
    st.builds(lambda a: A.Unary("not", a), BOOL),
    st.builds(lambda f, x, p: A.Call(f, (x, p)), st.sampled_from(["any", "all"]), ORD_LIST, PRED),
    st.builds(lambda f, a, b: A.Call(f, (a, b)), st.sampled_from(["contains", "startswith"]), STR, STR),
    st.builds(lambda a, x: A.Binary("in", a, A.Call("map", (x, _it("status")))), STR, ORD_LIST),
))
EXPR = st.one_of(INT, FLOAT, STR, BOOL, st.builds(lambda x: A.Call("map", (x, _it("order_id"))), ORD_LIST))

_counter = itertools.count()


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("diff")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(exprs=st.lists(EXPR, min_size=1, max_size=12))
def test_generated_code_agrees_with_reference(tmp, exprs):
    tools = tuple(A.ToolDecl(f"t{i}", (), A.PrimType("any"), "", (A.Return(e),)) for i, e in enumerate(exprs))
    env = A.EnvDecl("diff", None, (), (ORDER,), tools)
    p = tmp / f"env_{next(_counter)}.py"
    p.write_text(emit_env(env, "diff.forge"))
    mod = load_env_module(p)
    e = mod.Env(STATE)
    for i, x in enumerate(exprs):
        try:
            want, failed = _canonical(ref(x)), False
        except (RefError, ZeroDivisionError, TypeError, ValueError):
            want, failed = None, True
        got = e.step(f"t{i}", {})
        if failed:
            assert isinstance(got, ToolError) and not got.internal, (x, got)
        else:
            assert not isinstance(got, ToolError), (x, got)
            assert type(got) is type(want) or (isinstance(want, (int, float)) and isinstance(got, (int, float))), (x, got, want)
            if isinstance(want, float):
                assert math.isclose(got, want, rel_tol=0, abs_tol=0) or got == want, (x, got, want)
            else:
                assert got == want, (x, got, want)
    assert e.state_hash() == mod.Env(STATE).state_hash()
