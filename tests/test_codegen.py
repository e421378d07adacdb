"""Codegen of hand-built env ASTs: every statement and expression kind, against hand-computed
results and states; validation; transactionality; kinds, schemas and the source map."""

from __future__ import annotations

import copy
import json

import pytest

from forgec.codegen import emit_env, load_env_module
from forgec.diagnostics import Span
from forgec.lang import ast as A
from forgec.runtime import envrt
from forgec.runtime.envrt import ToolError

F = "shop.forge"


def sp(line: int) -> Span:
    return Span(F, line, 3)


N, L = A.Name, A.Literal


def at(obj, *names):
    for n in names:
        obj = A.Attr(obj if not isinstance(obj, str) else N(obj), n)
    return obj


def b(op, l, r):
    return A.Binary(op, l, r)


def call(f, *args, **kw):
    return A.Call(f, tuple(args), tuple(A.Arg(k, v) for k, v in kw.items()))


def rec(**fields):
    return A.RecordLit(tuple(A.FieldInit(k, v) for k, v in fields.items()))


def fld(name, t, default=None):
    return A.FieldDecl(name, t, default)


def prm(name, t, default=None):
    return A.ParamDecl(name, t, default)


def tool(name, params, returns, body, ann=(), line=0):
    return A.ToolDecl(name, tuple(params), returns, "", tuple(body), None, tuple(ann), span=sp(line) if line else A.NOSPAN)


STR, INT, FLOAT, BOOL, ANY = (A.PrimType(n) for n in ("str", "int", "float", "bool", "any"))
Order, User = A.NamedType("Order"), A.NamedType("User")

ENV = A.EnvDecl(
    name="shop",
    state=A.StateDecl((fld("now", STR, L("2024-05-15")), fld("fee", FLOAT, L(1.5)))),
    records=(A.RecordDecl("Item", (fld("sku", STR), fld("price", FLOAT), fld("qty", INT))),),
    entities=(
        A.EntityDecl("User", "user_id", (fld("user_id", STR), fld("name", STR), fld("balance", FLOAT), fld("orders", A.ListType(Order)), fld("tier", A.EnumType(("gold", "silver"))))),
        A.EntityDecl(
            "Order",
            "order_id",
            (
                fld("order_id", STR),
                fld("user_id", User),
                fld("status", A.EnumType(("pending", "shipped", "cancelled"))),
                fld("total", FLOAT),
                fld("items", A.ListType(A.NamedType("Item"))),
                fld("note", A.OptionalType(STR)),
            ),
        ),
        A.EntityDecl("Counter", "n", (fld("n", INT), fld("label", STR))),
    ),
    tools=(
        tool("get_order", [prm("order_id", Order)], Order, [A.Return(N("order_id"), sp(10))], ("read",), 9),
        tool(
            "pending_total",
            [prm("user_id", User)],
            FLOAT,
            [A.Return(call("sum", A.Where(N("Order"), b("and", b("==", at("it", "user_id"), N("user_id")), b("==", at("it", "status"), L("pending")))), at("it", "total")))],
        ),
        tool(
            "cancel",
            [prm("order_id", Order), prm("reason", STR, L("no longer needed"))],
            Order,
            [
                A.Require(b("==", at("order_id", "status"), L("pending")), "order is not pending", sp(21)),
                A.Set(at("order_id", "status"), L("cancelled"), sp(22)),
                A.Set(at("order_id", "note"), N("reason"), sp(23)),
                A.Let("u", A.Index(N("User"), at("order_id", "user_id")), sp(24)),
                A.Set(at("u", "balance"), b("+", at("u", "balance"), at("order_id", "total")), sp(25)),
                A.Return(N("order_id"), sp(26)),
            ],
            ("update",),
            20,
        ),
        tool(
            "place_order",
            [prm("user_id", User), prm("items", A.ListType(A.NamedType("Item")))],
            Order,
            [
                A.Require(b(">", call("len", N("items")), L(0)), "an order needs items"),
                A.Insert(
                    "Order",
                    (
                        A.FieldInit("user_id", N("user_id")),
                        A.FieldInit("status", L("pending")),
                        A.FieldInit("total", call("round", call("sum", N("items"), b("*", at("it", "price"), at("it", "qty"))), L(2))),
                        A.FieldInit("items", N("items")),
                    ),
                    bind="o",
                ),
                A.Append(at("user_id", "orders"), at("o", "order_id")),
                A.Return(N("o")),
            ],
        ),
        tool(
            "delete_cancelled",
            [prm("user_id", User)],
            INT,
            [
                A.Let("n", L(0)),
                A.For(
                    "o",
                    A.Where(N("Order"), b("and", b("==", at("it", "user_id"), at("user_id", "user_id")), b("==", at("it", "status"), L("cancelled")))),
                    (
                        A.Remove(at("user_id", "orders"), at("o", "order_id")),
                        A.Delete(N("o")),
                        A.Set(N("n"), b("+", N("n"), L(1))),
                    ),
                ),
                A.Return(N("n")),
            ],
        ),
        tool(
            "set_first_price",
            [prm("order_id", Order), prm("price", FLOAT)],
            Order,
            [
                A.Set(A.Attr(A.Index(at("order_id", "items"), L(0)), "price"), N("price")),
                A.Require(b("<", N("price"), L(1000)), "price too high"),
                A.Return(N("order_id")),
            ],
        ),
        tool(
            "classify",
            [prm("order_id", Order)],
            STR,
            [
                A.If(
                    b(">=", at("order_id", "total"), L(100)),
                    (A.Return(L("big")),),
                    (A.If(b(">=", at("order_id", "total"), L(20)), (A.Return(L("medium")),), (A.Return(L("small")),)),),
                )
            ],
        ),
        tool(
            "misc",
            [prm("user_id", User)],
            ANY,
            [
                A.Return(
                    rec(
                        ids=call("map", N("Order"), at("it", "order_id")),
                        upper=call("upper", at("user_id", "name")),
                        has=b("in", L("o1"), at("user_id", "orders")),
                        has_not=b("not in", L("o9"), at("user_id", "orders")),
                        n_users=call("len", N("User")),
                        not_=A.Unary("not", b("==", at("user_id", "tier"), L("gold"))),
                        neg=A.Unary("-", at("user_id", "balance")),
                        mod=b("%", L(7), L(3)),
                        div=b("/", L(7), L(2)),
                        sub=b("-", L(10), L(4)),
                        concat=b("+", L("id:"), at("user_id", "user_id")),
                        concat_num=b("+", L("n="), L(3)),
                        le=b("<=", L(2), L(2)),
                        ne=b("!=", L(1), L(2)),
                        or_=b("or", L(False), L(True)),
                        starts=call("startswith", at("user_id", "name"), L("Al")),
                        contains=call("contains", at("user_id", "name"), L("lic")),
                        first=call("first", call("sorted", call("map", N("Order"), at("it", "total")))),
                        last=call("last", call("sorted", call("map", N("Order"), at("it", "total")))),
                        desc=call("sorted", call("map", N("Order"), at("it", "total")), desc=L(True)),
                        cheapest=at(call("first", call("sorted", N("Order"), at("it", "total"))), "order_id"),
                        maxv=call("max", N("Order"), at("it", "total")),
                        minv=call("min", L(3), L(1)),
                        min_list=call("min", A.ListLit((L(5), L(4)))),
                        any_=call("any", N("Order"), b("==", at("it", "status"), L("shipped"))),
                        all_=call("all", N("Order"), b(">", at("it", "total"), L(10))),
                        count=call("count", N("Order"), b("==", at("it", "status"), L("pending"))),
                        count_all=call("count", N("Order")),
                        keys=call("keys", N("Order")),
                        rkeys=call("keys", rec(b=L(1), a=L(2))),
                        s=call("str", L(3)),
                        i=call("int", L("42")),
                        f=call("float", L("2.5")),
                        abs_=call("abs", L(-3)),
                        round_=call("round", L(2.345), L(1)),
                        exists=b("in", at("user_id", "user_id"), N("User")),
                        missing=b("in", L("nobody"), N("User")),
                        lower=call("lower", L("AbC")),
                        now=at("state", "now"),
                        idx=A.Index(A.ListLit((L(10), L(20), L(30))), L(-1)),
                        lookup=at(A.Index(N("Order"), L("o4")), "status"),
                        deref=at("user_id", "orders"),
                        owner_name=at(A.Index(N("Order"), L("o1")), "user_id", "name"),
                        nested=A.Where(call("map", N("Order"), at("it", "items")), b(">", call("len", N("it")), L(1))),
                        sum_plain=call("sum", A.ListLit((L(0.1), L(0.2)))),
                    )
                )
            ],
        ),
        tool(
            "bump_fee",
            [prm("amount", FLOAT)],
            FLOAT,
            [
                A.Require(b(">", N("amount"), L(0)), "amount must be positive"),
                A.Set(at("state", "fee"), b("+", at("state", "fee"), N("amount"))),
                A.Require(b("<", at("state", "fee"), L(10)), "fee too high"),
                A.Return(at("state", "fee")),
            ],
        ),
        tool("new_counter", [prm("label", STR)], A.NamedType("Counter"), [A.Insert("Counter", (A.FieldInit("label", N("label")),), bind="c"), A.Return(N("c"))]),
        tool(
            "transfer",
            [prm("src", User), prm("dst", User), prm("amount", FLOAT)],
            A.ListType(FLOAT),
            [
                A.Set(at("src", "balance"), b("-", at("src", "balance"), N("amount"))),
                A.Set(at("dst", "balance"), b("+", at("dst", "balance"), N("amount"))),
                A.Require(b(">=", at("src", "balance"), L(0)), "insufficient funds"),
                A.Return(A.ListLit((at("src", "balance"), at("dst", "balance")))),
            ],
        ),
        tool(
            "find",
            [prm("status", A.OptionalType(A.EnumType(("pending", "shipped", "cancelled")))), prm("limit", INT, L(10)), prm("flag", BOOL, L(False))],
            A.ListType(Order),
            [
                A.Let("xs", A.Where(N("Order"), b("or", b("==", N("status"), L(None)), b("==", at("it", "status"), N("status"))))),
                A.Return(call("map", N("xs"), at("it", "order_id"))),
            ],
        ),
        tool(
            "local_copy",
            [prm("order_id", Order)],
            ANY,
            [
                A.Let("items", at("order_id", "items")),
                A.Set(A.Attr(A.Index(N("items"), L(0)), "qty"), L(99)),
                A.Append(N("items"), rec(sku=L("X"), price=L(1.0), qty=L(1))),
                A.Return(N("items")),
            ],
        ),
        tool("broken", [prm("order_id", Order)], ANY, [A.Let("x", b("-", at("order_id", "note"), L(1)), sp(77)), A.Return(N("x"))], (), 76),
    ),
)


def world() -> dict:
    return {
        "entities": {
            "User": {
                "u1": {"user_id": "u1", "name": "Alice", "balance": 10.0, "orders": ["o1", "o2", "o3"], "tier": "gold"},
                "u2": {"user_id": "u2", "name": "Bob", "balance": 0.0, "orders": ["o4"], "tier": "silver"},
            },
            "Order": {
                "o1": {"order_id": "o1", "user_id": "u1", "status": "pending", "total": 30.5, "items": [{"sku": "A", "price": 10.5, "qty": 1}, {"sku": "B", "price": 10.0, "qty": 2}], "note": None},
                "o2": {"order_id": "o2", "user_id": "u1", "status": "pending", "total": 12.25, "items": [{"sku": "C", "price": 12.25, "qty": 1}], "note": None},
                "o3": {"order_id": "o3", "user_id": "u1", "status": "cancelled", "total": 99.0, "items": [], "note": "dup"},
                "o4": {"order_id": "o4", "user_id": "u2", "status": "shipped", "total": 150.0, "items": [{"sku": "D", "price": 150.0, "qty": 1}], "note": None},
            },
            "Counter": {"7": {"n": 7, "label": "seven"}},
        },
        "globals": {"now": "2024-05-15", "fee": 1.5},
    }


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    src = emit_env(ENV, F)
    p = tmp_path_factory.mktemp("shop") / "env.py"
    p.write_text(src)
    return load_env_module(p)


@pytest.fixture
def env(mod):
    return mod.Env(world())


def test_emit_is_deterministic_and_compiles():
    a, b_ = emit_env(ENV, F), emit_env(ENV, F)
    assert a == b_
    compile(a, "env.py", "exec")


def test_emit_is_byte_identical_across_hash_seeds():
    """String hashing is randomized per process: set-valued constants must not follow it."""
    import os
    import subprocess
    import sys

    code = "import sys; from test_codegen import ENV, F; from forgec.codegen import emit_env; sys.stdout.write(emit_env(ENV, F))"
    outs = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-c", code], cwd=os.path.dirname(__file__), env=env, capture_output=True, text=True, check=True)
        outs.add(r.stdout)
    assert len(outs) == 1 and "frozenset((" in outs.pop()


def test_read_returns_a_copy(env):
    r = env.step("get_order", {"order_id": "o2"})
    assert r == world()["entities"]["Order"]["o2"]
    r["items"][0]["price"] = 0
    r["status"] = "x"
    assert env.state == world()


def test_where_sum_lambda(env):
    assert env.step("pending_total", {"user_id": "u1"}) == 42.75
    assert env.step("pending_total", {"user_id": "u2"}) == 0


def test_update_require_set_let_lookup(env):
    r = env.step("cancel", {"order_id": "o1"})
    exp = world()
    exp["entities"]["Order"]["o1"].update(status="cancelled", note="no longer needed")
    exp["entities"]["User"]["u1"]["balance"] = 40.5
    assert r == exp["entities"]["Order"]["o1"]
    assert env.state == exp
    assert env.state_hash() == envrt.state_hash(exp)
    # a second cancel fails the require and changes nothing
    h = env.state_hash()
    err = env.step("cancel", {"order_id": "o1", "reason": "again"})
    assert isinstance(err, ToolError) and err.message == "order is not pending" and err.code == "precondition"
    assert env.state == exp and env.state_hash() == h


def test_insert_fresh_id_append(env):
    r = env.step("place_order", {"user_id": "u2", "items": [{"sku": "Z", "price": 2.5, "qty": 3}]})
    new = {"order_id": "o5", "user_id": "u2", "status": "pending", "total": 7.5, "items": [{"sku": "Z", "price": 2.5, "qty": 3}], "note": None}
    assert r == new
    exp = world()
    exp["entities"]["Order"]["o5"] = new
    exp["entities"]["User"]["u2"]["orders"] = ["o4", "o5"]
    assert env.state == exp
    assert env.state_hash() == envrt.state_hash(exp)
    assert env.step("classify", {"order_id": "o5"}) == "small"
    err = env.step("place_order", {"user_id": "u2", "items": []})
    assert isinstance(err, ToolError) and err.message == "an order needs items"


def test_for_delete_remove_counter(env):
    assert env.step("delete_cancelled", {"user_id": "u1"}) == 1
    exp = world()
    del exp["entities"]["Order"]["o3"]
    exp["entities"]["User"]["u1"]["orders"] = ["o1", "o2"]
    assert env.state == exp
    assert env.state_hash() == envrt.state_hash(exp)
    assert env.step("delete_cancelled", {"user_id": "u1"}) == 0


def test_nested_index_set_copies_the_path(env):
    before = env.step("get_order", {"order_id": "o1"})
    r = env.step("set_first_price", {"order_id": "o1", "price": 99.0})
    assert r["items"] == [{"sku": "A", "price": 99.0, "qty": 1}, {"sku": "B", "price": 10.0, "qty": 2}]
    assert before["items"][0]["price"] == 10.5  # an earlier result is not an alias
    # failing after the nested set: the record is restored exactly
    h = env.state_hash()
    snap = env.snapshot()
    err = env.step("set_first_price", {"order_id": "o1", "price": 5000.0})
    assert isinstance(err, ToolError) and err.message == "price too high"
    assert env.state == snap and env.state_hash() == h == envrt.state_hash(snap)
    # an empty list: index out of range is a ToolError, not a crash
    err = env.step("set_first_price", {"order_id": "o3", "price": 1.0})
    assert isinstance(err, ToolError) and not err.internal and "out of range" in err.message


def test_if_else_chain(env):
    assert env.step("classify", {"order_id": "o4"}) == "big"
    assert env.step("classify", {"order_id": "o1"}) == "medium"
    assert env.step("classify", {"order_id": "o2"}) == "small"


def test_expressions_and_builtins(env):
    r = env.step("misc", {"user_id": "u1"})
    assert r == {
        "ids": ["o1", "o2", "o3", "o4"],
        "upper": "ALICE",
        "has": True,
        "has_not": True,
        "n_users": 2,
        "not_": False,
        "neg": -10.0,
        "mod": 1,
        "div": 3.5,
        "sub": 6,
        "concat": "id:u1",
        "concat_num": "n=3",
        "le": True,
        "ne": True,
        "or_": True,
        "starts": True,
        "contains": True,
        "first": 12.25,
        "last": 150.0,
        "desc": [150.0, 99.0, 30.5, 12.25],
        "cheapest": "o2",
        "maxv": 150.0,
        "minv": 1,
        "min_list": 4,
        "any_": True,
        "all_": True,
        "count": 2,
        "count_all": 4,
        "keys": ["o1", "o2", "o3", "o4"],
        "rkeys": ["a", "b"],
        "s": "3",
        "i": 42,
        "f": 2.5,
        "abs_": 3,
        "round_": 2.3,
        "exists": True,
        "missing": False,
        "lower": "abc",
        "now": "2024-05-15",
        "idx": 30,
        "lookup": "shipped",
        "deref": ["o1", "o2", "o3"],
        "owner_name": "Alice",
        "nested": [[{"sku": "A", "price": 10.5, "qty": 1}, {"sku": "B", "price": 10.0, "qty": 2}]],
        "sum_plain": 0.3,
    }
    assert env.state == world()


def test_globals_set_is_transactional(env):
    assert env.step("bump_fee", {"amount": 2}) == 3.5  # an int is a valid float argument
    assert env.state["globals"]["fee"] == 3.5
    h = env.state_hash()
    err = env.step("bump_fee", {"amount": 10.0})
    assert isinstance(err, ToolError) and err.message == "fee too high"
    assert env.state["globals"]["fee"] == 3.5 and env.state_hash() == h


def test_int_keys_fresh_id(env):
    assert env.step("new_counter", {"label": "c"}) == {"n": 8, "label": "c"}
    assert env.step("new_counter", {"label": "d"}) == {"n": 9, "label": "d"}
    assert list(env.state["entities"]["Counter"]) == ["7", "8", "9"]


def test_two_record_write_rolls_back_both(env):
    assert env.step("transfer", {"src": "u1", "dst": "u2", "amount": 4.0}) == [6.0, 4.0]
    snap = env.snapshot()
    err = env.step("transfer", {"src": "u2", "dst": "u1", "amount": 100.0})
    assert isinstance(err, ToolError) and err.message == "insufficient funds"
    assert env.state == snap


def test_optional_and_default_params(env):
    assert env.step("find", {}) == ["o1", "o2", "o3", "o4"]
    assert env.step("find", {"status": None}) == ["o1", "o2", "o3", "o4"]
    assert env.step("find", {"status": "pending", "limit": 2.0}) == ["o1", "o2"]


def test_locals_have_value_semantics(env):
    r = env.step("local_copy", {"order_id": "o1"})
    assert r == [{"sku": "A", "price": 10.5, "qty": 99}, {"sku": "B", "price": 10.0, "qty": 2}, {"sku": "X", "price": 1.0, "qty": 1}]
    assert env.state == world()


@pytest.mark.parametrize(
    "tool,args,code,fragment",
    [
        ("nope", {}, "unknown-tool", "unknown tool"),
        ("get_order", {}, "invalid-arguments", "missing required argument 'order_id'"),
        ("get_order", {"order_id": "o1", "x": 1}, "invalid-arguments", "unexpected argument 'x'"),
        ("get_order", {"order_id": 5}, "invalid-arguments", "must be a string, got integer"),
        ("get_order", {"order_id": None}, "invalid-arguments", "must not be null"),
        ("get_order", {"order_id": "o9"}, "not-found", "Order 'o9' not found"),
        ("get_order", ["o1"], "invalid-arguments", "must be a JSON object"),
        ("get_order", {"order_id": "x" * 20000}, "invalid-arguments", "too long"),
        ("find", {"status": "lost"}, "invalid-arguments", "must be one of"),
        ("find", {"limit": 2.5}, "invalid-arguments", "must be an integer"),
        ("find", {"limit": True}, "invalid-arguments", "must be an integer"),
        ("find", {"flag": 1}, "invalid-arguments", "must be a boolean"),
        ("bump_fee", {"amount": "3"}, "invalid-arguments", "must be a number"),
        ("bump_fee", {"amount": float("nan")}, "invalid-arguments", "must be a finite number, got NaN"),
        ("place_order", {"user_id": "u1", "items": [{"sku": "A", "price": 1.0}]}, "invalid-arguments", "missing field 'qty'"),
        ("place_order", {"user_id": "u1", "items": [{"sku": "A", "price": 1.0, "qty": 1, "color": "red"}]}, "invalid-arguments", "unexpected field 'color'"),
        ("place_order", {"user_id": "u1", "items": [{"sku": "A", "price": 1.0, "qty": 1}] * 1001}, "invalid-arguments", "too many items"),
        ("transfer", {"src": "u1", "dst": "u9", "amount": 1.0}, "not-found", "User 'u9' not found"),
    ],
)
def test_validation_errors(env, tool, args, code, fragment):
    h = env.state_hash()
    err = env.step(tool, args)
    assert isinstance(err, ToolError), err
    assert err.code == code and fragment in err.message, (err.code, err.message)
    assert not err.internal
    assert env.state == world() and env.state_hash() == h


def test_internal_error_maps_to_forge_line(env, mod):
    err = env.step("broken", {"order_id": "o1"})  # note is null: null - 1 is a bug in the tool
    assert isinstance(err, ToolError) and err.internal and err.code == "internal"
    assert err.where == f"{F}:77"
    assert "TypeError" in err.message and f"{F}:77" in err.message
    assert envrt.map_traceback(err.__cause__, mod)[-1] == f"{F}:77"
    text = envrt.format_mapped_traceback(err.__cause__, mod)
    assert f"[forge: {F}:77]" in text


def test_source_map_points_at_statement_lines(mod):
    lines = open(mod.__file__).read().splitlines()
    for gen_line, (f, forge_line) in mod.SOURCE_MAP.items():
        assert f == F
        assert lines[gen_line - 1].endswith(f"# forge: {F}:{forge_line}")
    # cancel's statements (lines 21-26) appear in order
    cancel = [fl for _, (_, fl) in sorted(mod.SOURCE_MAP.items()) if 20 <= fl <= 26]
    assert cancel == [20, 21, 22, 23, 24, 25, 26]


def test_tables(mod):
    assert mod.ENV_NAME == "shop"
    names = [t["function"]["name"] for t in mod.TOOLS]
    assert names == [t.name for t in ENV.tools]
    cancel = next(t for t in mod.TOOLS if t["function"]["name"] == "cancel")["function"]["parameters"]
    assert cancel["properties"]["order_id"]["type"] == "string"
    assert "Order" in cancel["properties"]["order_id"]["description"]
    assert cancel["required"] == ["order_id"]
    assert "Default" in cancel["properties"]["reason"]["description"]
    find = next(t for t in mod.TOOLS if t["function"]["name"] == "find")["function"]["parameters"]
    assert find["properties"]["status"] == {"type": "string", "enum": ["pending", "shipped", "cancelled"]}
    assert find["required"] == []
    json.dumps(mod.TOOLS)
    assert mod.TOOL_KINDS["get_order"] == "read"  # annotation
    assert mod.TOOL_KINDS["cancel"] == "update"  # annotation
    assert mod.TOOL_KINDS["pending_total"] == "read"  # inferred: no writes, scalar result
    assert mod.TOOL_KINDS["find"] == "search"  # inferred: list result
    assert mod.TOOL_KINDS["new_counter"] == "create"  # inferred: only inserts
    assert mod.TOOL_KINDS["delete_cancelled"] == "action"  # deletes and removes
    assert mod.TOOL_KINDS["transfer"] == "update"
    writes = {k for k, v in mod.WRITES_STATE.items() if v}
    # static, shared with the checker: any set/insert/delete/append/remove (local_copy only sets a local)
    assert writes == {"cancel", "place_order", "delete_cancelled", "set_first_price", "bump_fee", "new_counter", "transfer", "local_copy"}
    assert mod.SCHEMA["entities"]["Order"]["fields"]["user_id"] == {"type": "ref", "entity": "User"}
    # only cancel writes the note, and it sets status "cancelled" (the fixture world agrees: o3 alone has one)
    assert mod.SCHEMA["entities"]["Order"]["fields"]["note"] == {"type": "str", "optional": True, "only_when": {"status": ["cancelled"]}}
    assert mod.SCHEMA["records"]["Item"]["fields"]["qty"] == {"type": "int"}
    assert mod.SCHEMA["globals"]["fee"] == {"type": "float", "default": 1.5}


def test_reset_state_and_hash(mod):
    e = mod.Env()
    assert e.state == {"entities": {"User": {}, "Order": {}, "Counter": {}}, "globals": {"now": "2024-05-15", "fee": 1.5}}
    w = world()
    e.reset(w)
    w["entities"]["User"]["u1"]["name"] = "changed"  # reset deep-copies
    assert e.state == world()
    assert e.state_hash() == envrt.state_hash(world())
    # float canonicalization: 0.1 + 0.2 hashes like 0.3
    w2 = world()
    w2["entities"]["User"]["u2"]["balance"] = 0.1 + 0.2
    w3 = world()
    w3["entities"]["User"]["u2"]["balance"] = 0.3
    assert mod.Env(w2).state_hash() == mod.Env(w3).state_hash() == envrt.state_hash(w3)
    with pytest.raises(ValueError):
        mod.Env({"entities": {"Order": {"oX": {"order_id": "o1"}}}})
    with pytest.raises(ValueError):
        mod.Env({"entities": {"Ghost": {}}})


def test_state_hash_definition_is_independent():
    """Recompute the documented hash with nothing but hashlib/json (docs/contracts.md)."""
    import hashlib

    def cj(v):
        return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    st = world()
    ents = {}
    for e, coll in st["entities"].items():
        s = sum(int.from_bytes(hashlib.sha256(cj([e, k, r]).encode()).digest(), "big") for k, r in coll.items()) % (1 << 256)
        ents[e] = [len(coll), format(s, "064x")]
    expected = hashlib.sha256(cj({"entities": ents, "globals": st["globals"], "v": 1}).encode()).hexdigest()
    assert envrt.state_hash(st) == expected


def test_collections_iterate_in_key_order(mod):
    w = world()
    w["entities"]["Order"] = dict(reversed(list(w["entities"]["Order"].items())))
    e = mod.Env(w)
    assert e.step("misc", {"user_id": "u1"})["ids"] == ["o1", "o2", "o3", "o4"]
    # an insert whose key sorts first keeps iteration in key order
    w = world()
    w["entities"]["Order"] = {k.replace("o", "p"): dict(v, order_id=k.replace("o", "p")) for k, v in w["entities"]["Order"].items()}
    w["entities"]["Order"]["a0"] = dict(w["entities"]["Order"]["p1"], order_id="a0")
    e = mod.Env(copy.deepcopy(w))
    assert list(e.state["entities"]["Order"]) == ["a0", "p1", "p2", "p3", "p4"]


def test_fresh_id_is_a_function_of_the_state(mod):
    env = mod.Env(world())
    item = [{"sku": "Z", "price": 1.0, "qty": 1}]
    assert env.step("place_order", {"user_id": "u2", "items": item})["order_id"] == "o5"
    assert env.step("cancel", {"order_id": "o5"})["status"] == "cancelled"
    assert env.step("delete_cancelled", {"user_id": "u2"}) == 1
    # o5 is gone: the next id is again max + 1, exactly what a fresh Env on this state gives
    twin = mod.Env(env.snapshot())
    assert env.step("place_order", {"user_id": "u2", "items": item})["order_id"] == "o5"
    assert twin.step("place_order", {"user_id": "u2", "items": item})["order_id"] == "o5"
    assert env.state_hash() == twin.state_hash()
    # a failed create does not consume an id
    assert isinstance(env.step("place_order", {"user_id": "u2", "items": []}), ToolError)
    assert env.step("place_order", {"user_id": "u2", "items": item})["order_id"] == "o6"


def test_names_that_are_not_python_identifiers(tmp_path):
    """MCP/OpenAPI names (dashes, dots, keywords) and quote-laden docs still give valid code."""
    weird = A.EnvDecl(
        "we-ird",
        None,
        (),
        (A.EntityDecl("Thing", "id", (fld("id", STR), fld("class", STR), fld("from", INT))),),
        (
            A.ToolDecl(
                "get-thing.v2",
                (prm("from", INT), prm("class", STR), prm("thing", A.NamedType("Thing"))),
                ANY,
                'Doc with "quotes" and a \\ backslash, ending in a quote"',
                (A.Return(rec(total=b("+", N("from"), at("thing", "from")), cls=N("class"), mx=call("max", N("from"), at("thing", "from")))),),
            ),
        ),
        doc='env doc """ with triple quotes',
    )
    p = tmp_path / "env.py"
    p.write_text(emit_env(weird, "we-ird.forge"))
    m = load_env_module(p)
    e = m.Env({"entities": {"Thing": {"t1": {"id": "t1", "class": "x", "from": 5}}}})
    assert e.step("get-thing.v2", {"from": 2, "class": "c", "thing": "t1"}) == {"total": 7, "cls": "c", "mx": 5}
    assert m.TOOLS[0]["function"]["description"].endswith('quote"')
    assert '"""' in m.__doc__


def test_tool_error_pickles_and_odd_tool_names(env):
    import pickle

    err = env.step("get_order", {"order_id": "o9"})
    back = pickle.loads(pickle.dumps(err))
    assert back == err and back.code == "not-found" and back.internal is False
    assert env.step(["get_order"], {}).code == "unknown-tool"
    assert env.step(None, {}).code == "unknown-tool"


def test_results_have_canonical_floats(tmp_path):
    env = A.EnvDecl(
        "f",
        None,
        (),
        (),
        (
            A.ToolDecl("noisy", (), ANY, "", (A.Return(rec(x=b("+", L(0.1), L(0.2)), xs=A.ListLit((b("*", L(1.1), L(3)),)))),)),
            A.ToolDecl("scalar", (), FLOAT, "", (A.Return(b("+", L(0.1), L(0.2))),)),
        ),
    )
    p = tmp_path / "env.py"
    p.write_text(emit_env(env, "f.forge"))
    e = load_env_module(p).Env()
    assert e.step("noisy", {}) == {"x": 0.3, "xs": [3.3]}  # not 0.30000000000000004 / 3.3000000000000003
    assert e.step("scalar", {}) == 0.3


# --------------------------------------------------------------------------- codegen reads the checker's types

TYPED_ENV = '''
env typed {
  entity Item key id { id: str  price: float  level: enum(1, 2) }
  @read
  tool total_as_float() -> any {
    let x = 0
    for o in Item { let x = x + o.price }
    return float(x)
  }
  @read
  tool level_as_float(i: Item) -> any { return float(abs(i.level)) }
  @read
  tool lower_as_str(n: str?) -> any { return str(lower(n)) }
  @read
  tool plus(a: str?, b: int) -> any { return a + b }
}
'''


def test_codegen_uses_the_checkers_types_and_they_hold_on_every_path(tmp_path):
    """The emitter skips `float(x)` / `str(x)` when the checker says x already is one, so the
    checker's types must hold for every value: a name bound in a loop to another type, an enum
    of ints, `lower` of a null. Expected values are Python's own float()/str() of the values."""
    from forgec import lang
    from forgec.lang.check import check_typed

    m, d = lang.parse(TYPED_ENV, "typed.forge")
    diags, typed = check_typed([m])
    assert not d and not [x for x in diags if x.is_error], diags
    env_decl = m.envs[0]
    src = emit_env(env_decl, "typed.forge", typed.envs["typed"])
    assert src == emit_env(env_decl, "typed.forge")  # the types it computes itself are the same
    p = tmp_path / "env.py"
    p.write_text(src)
    mod = load_env_module(p)
    empty = mod.Env({"entities": {"Item": {}}})
    got = empty.step("total_as_float", {})
    assert got == 0.0 and type(got) is float  # the loop never ran: x is the int 0
    one = mod.Env({"entities": {"Item": {"i1": {"id": "i1", "price": 2.5, "level": 1}}}})
    got = one.step("total_as_float", {})
    assert got == 2.5 and type(got) is float
    got = one.step("level_as_float", {"i": "i1"})
    assert got == 1.0 and type(got) is float
    assert one.step("lower_as_str", {"n": None}) == "null" and one.step("lower_as_str", {"n": "AbC"}) == "abc"
    assert one.step("plus", {"a": "n", "b": 1}) == "n1"
