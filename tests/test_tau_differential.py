"""bench/tau_differential.py (issue 20): the harness that replays τ-bench's gold actions on its real tools and on
forgec's env compiled with `--state` from τ-bench's world, and compares the state changes field by field.

What is asserted holds whatever today's agreement level is: the real side's changes against values worked
out by hand from τ-bench's data files; the harness finds no difference between the real tools and themselves
and finds each kind of difference planted into one side (wrong value, extra change, missing change, error
either way); the compiled env reads the user's real fields from the --state world (hand-checked values);
an env given a wrong argument never agrees. Reads only the repository's copies (tests/corpus/README.md):
τ-bench's tools and retail's tasks_test.py (`TAU_CODE`), its data (`TAU_DATA`, .json.gz) and the tool docs
(`CORPUS`), never ../shared.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import tau_differential as T  # noqa: E402
from conftest import CORPUS, TAU_CODE, TAU_DATA  # noqa: E402

T.configure(TAU_CODE, TAU_DATA, CORPUS)


def test_reads_only_the_repository_copies():
    assert (T.TAU_ROOT, T.tau_data_dir("retail"), T.TAU_DOCS) == (TAU_CODE, TAU_DATA / "retail", CORPUS)
    assert len(T.tau_tools("retail")) == 16
    assert [t for t, _ in T.tau_tasks("retail")[:6]] == [f"tasks_test[{i}]" for i in range(6)]
    for name in ("tau_bench.envs.retail.tools", "tau_bench.envs.retail.tools.cancel_pending_order", "tau_bench.envs.tool",
                 "tau_bench.envs.retail.tasks_test", "tau_bench.types"):
        assert Path(sys.modules[name].__file__).is_relative_to(TAU_CODE), name


# Hand-checked in τ-bench's retail data (tests/corpus/tau_bench_data/retail/{users,orders}.json.gz):
# order #W6779827 is pending, of ethan_lopez_6291, paid 4079.45 with gift_card_7219486 (balance 49);
ORDER, OWNER, GIFT = "#W6779827", "ethan_lopez_6291", "gift_card_7219486"
NEW_ADDRESS = {"address1": "1 Test Way", "address2": "Unit 2", "city": "Springfield", "state": "IL", "country": "USA", "zip": "62704"}


@pytest.fixture(scope="module")
def forge(tmp_path_factory) -> T.Forge:
    return T.compile_forge("retail", tmp_path_factory.mktemp("tau-diff"))


def _one(side, calls: list[tuple[str, dict]]) -> list[T.Outcome]:
    side.start()
    return [side.call(t, a) for t, a in calls]


# ----------------------------------------------------------------------------------- the real side, by hand


def test_real_changes_of_a_cancel_are_the_hand_computed_ones():
    (out,) = _one(T.RealSide("retail"), [("cancel_pending_order", {"order_id": ORDER, "reason": "no longer needed"})])
    assert not out.err
    assert set(out.changes) == {("orders", ORDER, ("status",)), ("orders", ORDER, ("cancel_reason",)),
                                ("orders", ORDER, ("payment_history",)), ("users", OWNER, ("payment_methods", GIFT, "balance"))}
    assert out.changes[("orders", ORDER, ("status",))] == "cancelled"
    assert out.changes[("orders", ORDER, ("cancel_reason",))] == "no longer needed"
    assert out.changes[("users", OWNER, ("payment_methods", GIFT, "balance"))] == pytest.approx(49 + 4079.45)
    assert out.changes[("orders", ORDER, ("payment_history",))][-1] == {"transaction_type": "refund", "amount": 4079.45, "payment_method_id": GIFT}


def test_a_rejected_real_call_is_an_error_and_changes_nothing():
    side = T.RealSide("retail")
    first, again = _one(side, [("cancel_pending_order", {"order_id": ORDER, "reason": "no longer needed"}),
                               ("cancel_pending_order", {"order_id": ORDER, "reason": "no longer needed"})])
    assert not first.err and again.err and again.message.startswith("Error") and again.changes == {}


def test_new_ids_and_timestamps_are_wildcards():
    before = {"reservations": {"AAA111": {"id": "AAA111"}}, "users": {"u": {"reservations": ["AAA111"], "pm": {"card_1234567": {"amount": 5}}}}}

    def after(rid: str, cert: str, ts: str) -> dict:
        return {"reservations": {"AAA111": {"id": "AAA111"}, rid: {"id": rid, "created_at": ts, "cabin": "economy"}},
                "users": {"u": {"reservations": ["AAA111", rid], "pm": {"card_1234567": {"amount": 5}, cert: {"amount": 100}}}}}

    a = T.collection_changes(before, after("HATHAT", "certificate_3221322", "2024-05-15T15:00:00"), {})
    b = T.collection_changes(before, after("ZZZ999", "cert_0009999", "2026-01-01T00:00:00"), {})
    assert a == b
    assert a[("reservations", "<new:0>", ("created_at",))] == "<timestamp>"
    assert a[("users", "u", ("reservations",))] == ["AAA111", "<new-id>"]
    assert a[("users", "u", ("pm", "<new:0>", "amount"))] == 100
    # a timestamp the call was given is a value like any other
    c = T.collection_changes(before, after("HATHAT", "certificate_3221322", "2024-05-15T15:00:00"), {"when": "2024-05-15T15:00:00"})
    assert c[("reservations", "<new:0>", ("created_at",))] == "2024-05-15T15:00:00"


# ----------------------------------------------------------------------------------- the comparison itself


class Planted(T.RealSide):
    """τ-bench's own tools as the 'env', with one planted difference."""

    def __init__(self, plant):
        super().__init__("retail")
        self.plant = plant

    def step(self, tool, args):
        return self.plant(self, tool, args)


CALLS = [("find_user_id_by_email", {"email": "nope@example.com"}), ("get_order_details", {"order_id": ORDER}),
         ("modify_pending_order_address", {"order_id": ORDER, **NEW_ADDRESS}),
         ("cancel_pending_order", {"order_id": ORDER, "reason": "ordered by mistake"})]


def _run(env_side) -> list[T.CallRow]:
    return T.run_domain("retail", T.RealSide("retail"), env_side, [("planted", CALLS)]).rows


def _kinds(row: T.CallRow) -> set[tuple[str, str]]:
    return {(p.kind, p.what) for p in row.problems}


def test_real_tools_agree_with_themselves_on_tasks():
    tasks = T.tau_tasks("retail")[:6] + [("planted", CALLS)]
    rep = T.run_domain("retail", T.RealSide("retail"), T.RealSide("retail"), tasks)
    assert len(rep.rows) == sum(len(a) for _, a in tasks) and all(r.agree for r in rep.rows)
    assert {"exchange_delivered_order_items", "modify_pending_order_address", "cancel_pending_order"} <= rep.write_tools
    s = T.summary(rep)
    assert s["read_leaves"] > 100 and s["read_leaves_equal"] == s["read_leaves"] and s["fields_covered"] == s["fields_real"]


def test_planted_wrong_value_is_found():
    def plant(side, tool, args):
        if tool == "modify_pending_order_address":
            args = dict(args, city="Nowhere")
        return T.RealSide.step(side, tool, args)

    rows = _run(Planted(plant))
    assert [r.agree for r in rows] == [True, True, False, True]
    assert _kinds(rows[2]) == {("wrong value", "orders.address.city")}
    assert not rows[3].clean  # the states differ from there on


def test_planted_extra_and_missing_changes_are_found():
    def extra(side, tool, args):
        out = T.RealSide.step(side, tool, args)
        if tool == "get_order_details":
            side.data["users"][OWNER]["email"] = "planted@example.com"
        return out

    rows = _run(Planted(extra))
    assert not rows[1].agree and _kinds(rows[1]) == {("extra change", "users.email")}

    def missing(side, tool, args):  # the cancel answers like the real one but writes nothing
        if tool == "cancel_pending_order":
            return T.RealSide.step(side, "get_order_details", {"order_id": args["order_id"]})
        return T.RealSide.step(side, tool, args)

    rows = _run(Planted(missing))
    assert rows[2].agree and not rows[3].agree
    assert {k for k, _ in _kinds(rows[3])} == {"missing field change"}
    assert ("missing field change", "orders.status") in _kinds(rows[3]) and ("missing field change", "users.payment_methods.*.balance") in _kinds(rows[3])


def test_planted_errors_either_way_are_found():
    def refuse(side, tool, args):
        return "Error: planted" if tool == "get_order_details" else T.RealSide.step(side, tool, args)

    rows = _run(Planted(refuse))
    assert not rows[1].agree and [p.kind for p in rows[1].problems] == ["env error"] and rows[1].leaves[1] == 0

    def accept(side, tool, args):  # finds a user the real tool does not
        return "sara_doe_496" if tool == "find_user_id_by_email" else T.RealSide.step(side, tool, args)

    rows = _run(Planted(accept))
    assert not rows[0].agree and [p.kind for p in rows[0].problems] == ["env accepted a rejected call"]
    assert all(r.agree for r in rows[1:])


# ----------------------------------------------------------------------------------- the compiled env


def test_compiled_env_maps_onto_tau_collections(forge):
    assert {forge.ent_to_coll[e] for e in forge.ent_to_coll if not forge.ent_to_coll[e].startswith("<")} == {"users", "orders", "products"}


def test_get_user_details_reads_the_users_real_fields(forge):
    # users.json, aarav_anderson_8794: Aarav Anderson, 931 Maple Drive Philadelphia PA 19031, one gift card (balance 17), 5 orders
    env = T.ForgeSide(forge)
    (out,) = _one(env, [("get_user_details", {"user_id": "aarav_anderson_8794"})])
    assert not out.err and out.changes == {}
    u = out.output
    assert u["email"] == "aarav.anderson9752@example.com"
    assert u["name"] == {"first_name": "Aarav", "last_name": "Anderson"}
    assert u["address"]["address1"] == "931 Maple Drive" and u["address"]["zip"] == "19031" and u["address"]["city"] == "Philadelphia"
    assert u["payment_methods"]["gift_card_7245904"]["balance"] == 17
    assert u["orders"] == ["#W4316152", "#W9311069", "#W9300146", "#W3220203", "#W3470184"]
    (missing,) = _one(env, [("get_user_details", {"user_id": "no_such_user_0000"})])
    assert missing.err


def test_env_given_a_wrong_argument_never_agrees(forge):
    class Wrong(T.ForgeSide):
        def step(self, tool, args):
            if tool == "modify_pending_order_address":
                args = dict(args, city="Nowhere")
            return super().step(tool, args)

    rows = _run(Wrong(forge))
    assert len(rows) == len(CALLS) and not any(p.kind == "harness error" for r in rows for p in r.problems)
    assert not rows[2].agree
    assert any(p.what == "orders.address.city" and p.kind in ("wrong value", "missing field change") for p in rows[2].problems)


def test_harness_runs_the_first_retail_tasks_against_the_env(forge):
    tasks = T.tau_tasks("retail")[:4]
    rep = T.run_domain("retail", T.RealSide("retail"), T.ForgeSide(forge), tasks)
    assert len(rep.rows) == sum(len(a) for _, a in tasks)
    assert not [p for r in rep.rows for p in r.problems if p.kind == "harness error"]
    text = T.render(rep)
    assert "| get_order_details | read |" in text and "field coverage" in text


def test_env_cancel_refunds_like_the_real_one_from_the_world_alone(forge):
    """The docs say "the payment will be refunded ... added to the user's gift card balance"; the world's data
    says how (a payment history with payment/refund entries, a balance on gift cards): the env's cancel of
    ORDER changes the history and the gift card exactly as the hand-computed real change above. Only the
    field τ-bench names `cancel_reason` differs: neither its docs nor its data name it (the env keeps `reason`)."""
    (out,) = _one(T.ForgeSide(forge), [("cancel_pending_order", {"order_id": ORDER, "reason": "no longer needed"})])
    assert not out.err
    assert out.changes[("orders", ORDER, ("status",))] == "cancelled"
    assert out.changes[("users", OWNER, ("payment_methods", GIFT, "balance"))] == pytest.approx(49 + 4079.45)
    assert out.changes[("orders", ORDER, ("payment_history",))][-1] == {"transaction_type": "refund", "amount": 4079.45, "payment_method_id": GIFT}
    assert ("orders", ORDER, ("cancel_reason",)) not in out.changes and out.changes[("orders", ORDER, ("reason",))] == "no longer needed"
