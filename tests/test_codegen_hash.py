"""The incremental state hash equals a from-scratch computation after any sequence of steps
(successful, failing, inserting, deleting), and a failing step never changes the state."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forgec.codegen import emit_env, load_env_module
from forgec.runtime import envrt
from forgec.runtime.envrt import ToolError

from test_codegen import ENV, F, world  # the hand-built shop env

USERS = st.sampled_from(["u1", "u2", "u9"])
ORDERS = st.sampled_from(["o1", "o2", "o3", "o4", "o5", "o6", "zz"])
MONEY = st.sampled_from([0.1, 0.2, 1.0, 2.5, 7.25, 100.0, -1.0])
ITEM = st.fixed_dictionaries({"sku": st.sampled_from(["A", "B"]), "price": MONEY, "qty": st.integers(0, 3)})

STEP = st.one_of(
    st.tuples(st.just("cancel"), st.fixed_dictionaries({"order_id": ORDERS})),
    st.tuples(st.just("place_order"), st.fixed_dictionaries({"user_id": USERS, "items": st.lists(ITEM, max_size=2)})),
    st.tuples(st.just("delete_cancelled"), st.fixed_dictionaries({"user_id": USERS})),
    st.tuples(st.just("set_first_price"), st.fixed_dictionaries({"order_id": ORDERS, "price": st.sampled_from([1.5, 0.1 + 0.2, 5000.0])})),
    st.tuples(st.just("bump_fee"), st.fixed_dictionaries({"amount": MONEY})),
    st.tuples(st.just("new_counter"), st.fixed_dictionaries({"label": st.text(max_size=3)})),
    st.tuples(st.just("transfer"), st.fixed_dictionaries({"src": USERS, "dst": USERS, "amount": MONEY})),
    st.tuples(st.just("get_order"), st.fixed_dictionaries({"order_id": ORDERS})),
    st.tuples(st.just("misc"), st.fixed_dictionaries({"user_id": USERS})),
)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    p = tmp_path_factory.mktemp("shop_hash") / "env.py"
    p.write_text(emit_env(ENV, F))
    return load_env_module(p)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, max_size=12))
def test_incremental_hash_matches_scratch(mod, steps):
    env = mod.Env(world())
    env.state_hash()  # warm the per-record cache so later hashes are incremental
    for tool, args in steps:
        before = json.loads(json.dumps(env.state))
        h0 = env.state_hash()
        r = env.step(tool, args)
        assert not (isinstance(r, ToolError) and r.internal), r
        if isinstance(r, ToolError):
            assert env.state == before and env.state_hash() == h0
        h = env.state_hash()
        assert h == envrt.state_hash(env.state)
        assert h == mod.Env(json.loads(json.dumps(env.state))).state_hash()
        if isinstance(r, ToolError) or (tool in ("get_order", "misc")):
            assert h == h0


def test_hash_cache_survives_rollback_of_insert_and_delete(mod):
    env = mod.Env(world())
    h0 = env.state_hash()
    # insert then fail in the same step: the undo removes the record again
    err = env.step("place_order", {"user_id": "u1", "items": []})
    assert isinstance(err, ToolError)
    assert env.state_hash() == h0 == envrt.state_hash(world())
    assert env.step("delete_cancelled", {"user_id": "u1"}) == 1
    assert env.state_hash() == envrt.state_hash(env.state) != h0


def test_hash_distinguishes_states():
    a, b = world(), world()
    b["entities"]["Order"]["o1"]["status"] = "shipped"
    c = world()
    c["globals"]["fee"] = 2.0
    d = world()  # the same record moved to another collection key must not collide
    d["entities"]["Counter"] = {"8": {"n": 8, "label": "seven"}}
    hs = {envrt.state_hash(x) for x in (a, b, c, d)}
    assert len(hs) == 4


def test_fork_is_independent_and_keeps_hashes_exact(mod):
    env = mod.Env(world())
    env.state_hash()
    f = env.fork()
    assert f.step("cancel", {"order_id": "o1"})["status"] == "cancelled"
    assert env.state == world() and env.state_hash() == envrt.state_hash(world())
    assert f.state_hash() == envrt.state_hash(f.state) != env.state_hash()
    assert env.step("place_order", {"user_id": "u1", "items": [{"sku": "A", "price": 1.0, "qty": 1}]})["order_id"] == "o5"
    assert "o5" not in f.state["entities"]["Order"]
