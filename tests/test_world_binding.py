"""Synthesis that sees the user's world (`forgec/synth/world.py`, issue 20).

A hand-written bookings API (OpenAI tools, `fixtures/world_binding/docs`) and a world in its own layout
(`world.json`: bookings with payment histories, users with payment methods keyed by id, one flagged
booking with a `flag_note`). The docs alone say "the payment will be refunded" and "flag a booking";
only the data says how: a refund entry per payment, a voucher's balance, the `flagged` status and the
`flag_note` field. The expected states below are computed by hand from world.json, not read from forgec.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forgec.build import CompileOptions, compile_build
from forgec.codegen import load_env_module

FIX = Path(__file__).parent / "fixtures" / "world_binding"


def _compile(out: Path, with_world: bool):
    states = {"bookings": FIX / "world.json"} if with_world else {}
    res = compile_build(CompileOptions(inputs=[FIX / "docs"], out=out, tasks_per_env=3, seed=1, states=states))
    assert not [d for d in res.diagnostics if d.is_error], [d.message for d in res.diagnostics if d.is_error]
    mod = load_env_module(out / "envs" / "bookings" / "env.py", name=f"world_binding_{with_world}")
    world = json.loads((out / "states" / "bookings.json").read_text())
    return mod, world, (out / "src" / "bookings" / "env.forge").read_text()


@pytest.fixture(scope="module")
def bound(tmp_path_factory):
    return _compile(tmp_path_factory.mktemp("world_on"), True)


def test_cancel_refunds_each_payment_and_credits_a_stored_balance(bound):
    mod, world, _ = bound
    env = mod.Env(world)
    res = env.step("cancel_booking", {"booking_id": "B1001", "reason": "changed plans"})
    assert type(res).__name__ != "ToolError", res
    b = env.state["entities"]["Booking"]["B1001"]
    assert b["status"] == "cancelled"
    # world.json: B1001 paid 120.5 by voucher_77 and 30.0 by card_12 -> one refund each, same order
    assert b["payment_history"][2:] == [
        {"transaction_type": "refund", "amount": 120.5, "payment_method_id": "voucher_77"},
        {"transaction_type": "refund", "amount": 30.0, "payment_method_id": "card_12"},
    ]
    pm = env.state["entities"]["PaymentMethod"]
    assert pm["voucher_77"]["balance"] == pytest.approx(10.25 + 120.5)  # the voucher keeps a balance
    assert pm["card_12"].get("balance") is None  # a card has none: nothing credited
    assert pm["voucher_78"]["balance"] == pytest.approx(0.5)  # another user's voucher: untouched


def test_a_refund_entry_already_there_is_not_refunded_again(bound):
    mod, world, _ = bound
    env = mod.Env(world)
    env.step("cancel_booking", {"booking_id": "B1005", "reason": "duplicate"})
    hist = env.state["entities"]["Booking"]["B1005"]["payment_history"]
    assert [h["transaction_type"] for h in hist] == ["payment", "refund"]
    assert env.state["entities"]["PaymentMethod"]["voucher_78"]["balance"] == pytest.approx(0.5 + 12.75)


def test_the_status_and_field_a_tool_writes_come_from_the_data(bound):
    mod, world, src = bound
    env = mod.Env(world)
    env.step("flag_booking", {"booking_id": "B1002", "note": "card declined twice"})
    b = env.state["entities"]["Booking"]["B1002"]
    assert b["status"] == "flagged"  # the one status value the data holds that says "flag"
    assert b["flag_note"] == "card declined twice"  # the data's own field for the note
    assert "@conservative" not in src.split("tool flag_booking")[0].rsplit("\n\n", 1)[-1]
    assert '// from: "world data: Booking records have status \'flagged\'"' in src


def test_without_a_world_the_env_is_the_docs_alone(tmp_path, bound):
    _, _, src = _compile(tmp_path / "plain", False)
    assert "payment_history" not in src and "flag_note" not in src
    assert "payment_history" in bound[2]


def test_a_world_that_changes_changes_the_synthesis(tmp_path):
    """The synth stage's cache key holds the world: a world without flagged records gives no 'flagged'."""
    out = tmp_path / "b"
    _compile(out, True)
    data = json.loads((FIX / "world.json").read_text())
    del data["bookings"]["B1004"]  # the only flagged booking, the only flag_note
    w = tmp_path / "w2.json"
    w.write_text(json.dumps(data))
    res = compile_build(CompileOptions(inputs=[FIX / "docs"], out=out, tasks_per_env=3, seed=1, states={"bookings": w}))
    assert not [d for d in res.diagnostics if d.is_error]
    src = (out / "src" / "bookings" / "env.forge").read_text()
    assert '"flagged"' not in src and "flag_note" not in src
