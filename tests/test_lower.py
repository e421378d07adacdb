"""Task lowering on a hand-written env double: gold calls, hash, diff, facts, rejections."""

from __future__ import annotations

import copy
import hashlib
import json
import types

import pytest

from forgec.lang import ast as A
from forgec.lower import Rejected, dag_stats, instruction_leaks, lower_blueprint, render_instruction, state_diff


class ToolError(Exception):
    pass


WORLD = {
    "entities": {
        "User": {"u1": {"user_id": "u1", "orders": ["o1", "o2", "o3"]}},
        "Order": {
            "o1": {"order_id": "o1", "total": 30.0, "status": "pending"},
            "o2": {"order_id": "o2", "total": 12.5, "status": "pending"},
            "o3": {"order_id": "o3", "total": 99.0, "status": "delivered"},
        },
    },
    "globals": {},
}


def _hash(state):
    return hashlib.sha256(json.dumps(state, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Env:
    def __init__(self, state=None):
        self.reset(state or {})

    def reset(self, state):
        self._s = copy.deepcopy(state)

    @property
    def state(self):
        return self._s

    def state_hash(self):
        return _hash(self._s)

    def step(self, tool, args):
        ents = self._s["entities"]
        if tool == "get_user":
            u = ents["User"].get(args["user_id"])
            if u is None:
                return ToolError("no such user")
            return {**u, "orders": [dict(ents["Order"][o]) for o in u["orders"]]}
        if tool == "cancel_order":
            o = ents["Order"].get(args["order_id"])
            if o is None or o["status"] != "pending":
                return ToolError("order is not pending")
            o["status"] = "cancelled"
            return dict(o)
        return ToolError("unknown tool")


MOD = types.SimpleNamespace(Env=Env, WRITES_STATE={"get_user": False, "cancel_order": True})


def bp(*nodes, facts=(("user_id", "u1"),), goal="cancel my cheapest pending order"):
    return A.BlueprintDecl(
        name="cancel_cheapest",
        env="shop",
        user=A.UserBlock(goal=goal, facts=tuple(A.Fact(k, A.Literal(v)) for k, v in facts)),
        nodes=tuple(nodes),
    )


GET = A.CallNode("u", "get_user", (A.Arg("user_id", A.Attr(A.Name("user"), "user_id")),))
PENDING = A.ReasonNode("pending", "filter", (A.Attr(A.Name("u"), "orders"),), (A.Arg("by", A.Name("status")), A.Arg("eq", A.Literal("pending"))))
CHEAPEST = A.ReasonNode("cheapest", "argmin", (A.Name("pending"),), (A.Arg("by", A.Name("total")),))
CANCEL = A.CallNode("c", "cancel_order", (A.Arg("order_id", A.Attr(A.Name("cheapest"), "order_id")),))


def lower(b):
    return lower_blueprint(b, MOD, WORLD, env_name="shop", blueprint_path="blueprints/shop/x.forge", blueprint_hash="h", seed=7)


def test_gold_run_matches_hand_computed_end_state():
    res = lower(bp(GET, PENDING, CHEAPEST, CANCEL, A.ExpectNode(A.Binary("==", A.Attr(A.Name("c"), "status"), A.Literal("cancelled")))))
    t = res.task
    expected = copy.deepcopy(WORLD)
    expected["entities"]["Order"]["o2"]["status"] = "cancelled"  # o2 is the cheapest pending order
    assert t.gold_state_hash == _hash(expected)
    assert t.initial_state_hash == _hash(WORLD)
    assert [(g.tool, g.arguments) for g in t.gold_calls] == [("get_user", {"user_id": "u1"}), ("cancel_order", {"order_id": "o2"})]
    assert [(d.op, d.path, d.before, d.after) for d in t.gold_diff] == [("change", "/entities/Order/o2/status", "pending", "cancelled")]
    assert t.user.facts == {"user_id": "u1"}
    assert t.instruction == "I want to cancel my cheapest pending order. My user id is u1."
    assert t.id == "shop/cancel_cheapest" and not t.read_only
    # calls=2, writes=1, reasons=2, edges: pending<-u, cheapest<-pending, c<-cheapest ; depth u(1) pending(2) cheapest(3) c(4)
    s = t.stats
    assert (s.calls, s.write_calls, s.reasoning_nodes, s.inference_edges, s.depth, s.width) == (2, 1, 2, 3, 4, 1)


def test_literal_call_arguments_become_user_facts():
    cancel_lit = A.CallNode("c", "cancel_order", (A.Arg("order_id", A.Literal("o1")),))
    t = lower(bp(cancel_lit, facts=())).task
    assert t.user.facts == {"order_id": "o1"}
    assert "My order id is o1." in t.instruction


def test_unused_facts_are_not_given_to_the_user():
    t = lower(bp(GET, PENDING, CHEAPEST, CANCEL, facts=(("user_id", "u1"), ("zip", "94107")))).task
    assert t.user.facts == {"user_id": "u1"}


def test_rejections():
    with pytest.raises(Rejected) as r:
        lower(bp(A.CallNode("c", "cancel_order", (A.Arg("order_id", A.Literal("o3")),)), facts=()))
    assert r.value.reason == "gold-call-failed"
    with pytest.raises(Rejected) as r:
        lower(bp(GET))
    assert r.value.reason == "no-op"
    tie = {"entities": {"User": {"u1": {"user_id": "u1", "orders": ["o1", "o2"]}}, "Order": {
        "o1": {"order_id": "o1", "total": 5.0, "status": "pending"}, "o2": {"order_id": "o2", "total": 5.0, "status": "pending"}}}, "globals": {}}
    with pytest.raises(Rejected) as r:
        lower_blueprint(bp(GET, PENDING, CHEAPEST, CANCEL), MOD, tie, env_name="shop", blueprint_path="p", blueprint_hash="h", seed=0)
    assert r.value.reason == "ambiguous"
    with pytest.raises(Rejected) as r:
        lower(bp(GET, A.ExpectNode(A.Literal(False)), CANCEL))
    assert r.value.reason in ("expect-failed",)


def test_read_only_task_with_tell():
    t = lower(bp(GET, PENDING, A.ReasonNode("n", "count", (A.Name("pending"),)), A.TellNode(A.Name("n")), goal="how many orders are pending")).task
    assert t.read_only and t.tell == [2] and t.gold_state_hash == t.initial_state_hash


def test_state_diff_add_remove_change():
    d = state_diff({"a": {"x": 1, "y": 2}}, {"a": {"x": 1, "z": 3}, "b": []})
    assert [(e.op, e.path) for e in d] == [("remove", "/a/y"), ("add", "/a/z"), ("add", "/b")]


def test_instruction_template_and_leak_check():
    assert render_instruction("Please rebook me", "", {"reservation_id": "4WQ150"}) == "Please rebook me. My reservation id is 4WQ150."
    said = render_instruction("add a comment", "", {"body": {"text": "Any update?", "public": False}, "amount_2": 50.0, "ticket_id": "T1", "max": None})
    assert said == 'I want to add a comment. The amount is 50. The public is no. The text is "Any update?". My ticket id is T1.'
    told = render_instruction("x", "", {"cabin": "economy", "flight_number": "HAT1"}, {"cabin": ("book", "cabin"), "flight_number": ("get_flight", "flight_number")}, {"book": True})
    assert told == "I want to x. The cabin should be economy. The flight number is HAT1."
    assert render_instruction("x", "", {"item_ids": ["1", "2"]}) == "I want to x. My item ids are 1, 2."
    two = render_instruction("move credit", "", {"amount": 10.0, "amount_2": 25.0}, {"amount": ("transfer_credit", "amount"), "amount_2": ("add_credit", "amount")})
    assert two == "I want to move credit. For the transfer credit, the amount should be 10. For the add credit, the amount should be 25."

    leaks = instruction_leaks("Use cancel_order on order #W123 for 1234.5", ["cancel_order"], ["#W123", 1234.5])
    assert leaks == sorted(["names the tool 'cancel_order'", "reveals the looked-up value '#W123'", "reveals the computed value 1234.5"])


def test_dag_stats_width():
    a = A.CallNode("a", "get_user", (A.Arg("user_id", A.Literal("u1")),))
    b = A.CallNode("b", "get_user", (A.Arg("user_id", A.Literal("u1")),))
    c = A.CallNode("c", "cancel_order", (A.Arg("order_id", A.Index(A.Attr(A.Name("a"), "orders"), A.Literal(0))),))
    s = dag_stats(bp(a, b, c), MOD.WRITES_STATE)
    assert (s.depth, s.width, s.inference_edges) == (2, 2, 1)


def test_build_isolates_a_blueprint_whose_lowering_crashes(tmp_path, monkeypatch):
    """An unexpected exception in one blueprint is an internal-error diagnostic for it; the env still builds."""
    from pathlib import Path

    import forgec.build as B

    real = B.lower_blueprint
    calls = {"n": 0}

    def flaky(bp, *a, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyError("boom")
        return real(bp, *a, **kw)

    monkeypatch.setattr(B, "lower_blueprint", flaky)
    ex = Path(__file__).resolve().parent.parent / "examples" / "airline.json"
    res = B.compile_build(B.CompileOptions(inputs=[ex], out=tmp_path / "b", tasks_per_env=6, oracle_check=False))
    e = res.manifest.envs["airline"]
    assert e.rejected.get("internal-error") == 1 and e.task_count == calls["n"] - 1
    assert [d.code for d in res.diagnostics if d.is_error] == ["internal-error"]
