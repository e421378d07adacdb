"""`Env.fork()` is copy-on-write and `Env(state, trusted=True)` shares the caller's records;
both must behave exactly like independent envs built from deep-copied snapshots.

The oracle is the plain path: every fork is mirrored by `mod.Env(<JSON round trip of the
parent's state>)`, which shares nothing with anyone. Random interleavings of steps on a
parent and several (nested) forks must give the same results, states (including key
order), incremental hashes and from-scratch hashes on both sides.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forgec.codegen import emit_env, load_env_module
from forgec.runtime import envrt
from forgec.runtime.envrt import ToolError

from test_codegen import ENV, F, world  # the hand-built shop env
from test_codegen_hash import STEP  # its tools with arguments that hit, miss and alias records


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    p = tmp_path_factory.mktemp("shop_fork") / "env.py"
    p.write_text(emit_env(ENV, F))
    return load_env_module(p)


def _json(v):
    return json.loads(json.dumps(v))


def _same_result(a, b) -> bool:
    if isinstance(a, ToolError) or isinstance(b, ToolError):
        return a == b
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _check_same(env, model) -> None:
    s, m = env.state, model.state
    assert s == m
    for e in m["entities"]:  # `Entity where` iterates in key order: the order must match too
        assert list(s["entities"][e]) == list(m["entities"][e])
    h = env.state_hash()
    assert h == model.state_hash() == envrt.state_hash(s)


OPS = st.one_of(
    st.tuples(st.just("step"), st.integers(0, 7), STEP),
    st.tuples(st.just("fork"), st.integers(0, 7)),
    st.tuples(st.just("trusted"), st.integers(0, 7)),
    st.tuples(st.just("hash"), st.integers(0, 7)),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(OPS, max_size=25), warm=st.booleans())
def test_forks_behave_like_independent_envs(mod, ops, warm):
    _run_ops(mod, ops, warm)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(OPS, max_size=25), warm=st.booleans())
def test_forks_over_layered_collections_behave_like_independent_envs(mod, ops, warm, monkeypatch):
    """Every shared collection a fork writes becomes a `_Layer` (as large ones do in `forgec serve`): same results,
    states, key order and hashes as independent envs built from JSON."""
    monkeypatch.setattr(envrt, "LAYER_MIN", 0)
    _run_ops(mod, ops, warm)


def test_a_write_to_a_large_shared_collection_costs_the_record_not_the_index(mod):
    """A fork that changes one order of 5,000 holds that record and a few small dicts, not a copy of the index."""
    import tracemalloc

    w = world()
    orders = w["entities"]["Order"]
    for i in range(5000):
        orders[f"zz{i:05d}"] = {**orders["o1"], "order_id": f"zz{i:05d}"}
    base = mod.Env(w)
    base.state_hash()
    tracemalloc.start()
    try:
        m0 = tracemalloc.get_traced_memory()[0]
        f = base.fork()
        r = f.step("set_first_price", {"order_id": "zz00001", "price": 1.5})
        f.state_hash()
        cost = tracemalloc.get_traced_memory()[0] - m0
    finally:
        tracemalloc.stop()
    assert not isinstance(r, ToolError), r
    assert cost < 60_000, cost  # a copied index of 5,000 entries alone is ~300 kB (and its digest table as much)
    assert f.state["entities"]["Order"]["zz00001"]["items"][0]["price"] == 1.5
    assert base.state["entities"]["Order"]["zz00001"]["items"][0]["price"] == 10.5
    assert f.state_hash() == envrt.state_hash(f.state) and base.state_hash() == envrt.state_hash(base.state)
    assert list(f.state["entities"]["Order"]) == list(base.state["entities"]["Order"])  # key order kept


def _run_ops(mod, ops, warm):
    envs = [mod.Env(world())]
    models = [mod.Env(world())]
    if warm:  # forks of a hashed env inherit the digest caches
        envs[0].state_hash()
    for op in ops:
        i = op[1] % len(envs)
        if op[0] == "step":
            tool, args = op[2]
            r = envs[i].step(tool, _json(args))
            r2 = models[i].step(tool, _json(args))
            assert not (isinstance(r, ToolError) and r.internal), r
            assert _same_result(r, r2), (tool, args, r, r2)
        elif op[0] == "fork":
            envs.append(envs[i].fork())
            models.append(mod.Env(_json(models[i].state)))
        elif op[0] == "trusted":  # shares the records of a snapshot, copy-on-write
            envs.append(mod.Env(envs[i].snapshot(), trusted=True))
            models.append(mod.Env(_json(models[i].state)))
        else:
            envs[i].state_hash()
        for env, model in zip(envs, models):  # a write anywhere never shows up elsewhere
            _check_same(env, model)


def test_fork_shares_records_until_written(mod):
    env = mod.Env(world())
    f = env.fork()
    o1 = env.state["entities"]["Order"]["o1"]
    assert f.state["entities"]["Order"]["o1"] is o1  # O(collections): records are shared
    assert f.step("cancel", {"order_id": "o1"})["status"] == "cancelled"
    assert f.state["entities"]["Order"]["o1"] is not o1
    assert o1["status"] == world()["entities"]["Order"]["o1"]["status"]
    assert env.state == world()
    # the parent lost exclusive ownership too: its write copies, the fork keeps the old record
    o2 = f.state["entities"]["Order"]["o2"]
    assert env.step("cancel", {"order_id": "o2"})["status"] == "cancelled"
    assert f.state["entities"]["Order"]["o2"] is o2 and o2["status"] == world()["entities"]["Order"]["o2"]["status"]
    assert f.state_hash() == envrt.state_hash(f.state) and env.state_hash() == envrt.state_hash(env.state)


def test_a_held_state_view_of_the_parent_never_sees_fork_writes(mod):
    env = mod.Env(world())
    view = env.state  # callers may keep the live state (read-only) around
    f = env.fork()
    for tool, args in [("cancel", {"order_id": "o1"}), ("transfer", {"src": "u1", "dst": "u1", "amount": 1.0}),
                       ("bump_fee", {"amount": 2.5}), ("delete_cancelled", {"user_id": "u1"}),
                       ("set_first_price", {"order_id": "o2", "price": 1.5})]:
        f.step(tool, args)
    assert view == world() and f.state != world()


def test_failed_step_on_a_fork_restores_shared_records(mod):
    env = mod.Env(world())
    f = env.fork()
    h = env.state_hash()
    # place_order with no items inserts then fails its require: nothing may leak anywhere
    assert isinstance(f.step("place_order", {"user_id": "u1", "items": []}), ToolError)
    assert env.state == f.state == world() and f.state_hash() == h == envrt.state_hash(world())


def test_interrupt_mid_step_does_not_leak_into_other_envs(mod):
    """A KeyboardInterrupt after a write to a shared record rolls the record back before it propagates."""

    def boom(env, args):
        rec = env._touch("Order", env._get("Order", "o1"))
        rec["status"] = "scribbled"
        raise KeyboardInterrupt

    env = mod.Env(world())
    f = env.fork()
    f._DISPATCH = dict(f._DISPATCH, boom=boom)
    with pytest.raises(KeyboardInterrupt):
        f.step("boom", {})
    assert env.state == f.state == world()


def test_trusted_reset_equals_validating_reset_and_never_writes_the_input(mod):
    snap = _json(world())
    snap["entities"]["Counter"] = {"10": {"n": 10, "label": "ten"}, "9": {"n": 9, "label": "nine"}}  # int keys, JSON order
    plain = mod.Env(_json(snap))
    given_state = _json(plain.state)
    keep = _json(given_state)
    fast = mod.Env(given_state, trusted=True)
    _check_same(fast, plain)
    assert list(fast.state["entities"]["Counter"]) == ["9", "10"]
    for tool, args in [("cancel", {"order_id": "o1"}), ("new_counter", {"label": "x"}), ("bump_fee", {"amount": 1.0}),
                       ("place_order", {"user_id": "u2", "items": [{"sku": "A", "price": 0.1, "qty": 2}]})]:
        assert _same_result(fast.step(tool, args), plain.step(tool, args))
        _check_same(fast, plain)
    assert given_state == keep  # the caller's records were shared, never written


def test_fork_during_a_step_is_refused(mod):
    env = mod.Env(world())

    def forker(e, args):
        e._touch("Order", e._get("Order", "o1"))
        return e.fork()

    env._DISPATCH = dict(env._DISPATCH, forker=forker)
    r = env.step("forker", {})
    assert isinstance(r, ToolError) and r.internal and "fork() during a step" in r.message
    assert env.state == world()


def test_rolled_back_reinsert_does_not_make_a_shared_record_private(mod):
    """delete + insert of the same key, then a failure: the restored record is the shared one again."""

    def churn(env, args):
        old = env._get("Order", "o1")
        env._delete("Order", old)
        env._insert("Order", dict(old, status="shipped"))
        raise ToolError("changed my mind", "precondition")

    env = mod.Env(world())
    f = env.fork()
    f._DISPATCH = dict(f._DISPATCH, churn=churn)
    assert isinstance(f.step("churn", {}), ToolError)
    assert f.step("cancel", {"order_id": "o1"})["status"] == "cancelled"
    assert env.state == world() and env.state_hash() == envrt.state_hash(world())


def test_fresh_ids_follow_each_envs_own_keys_when_patterns_are_shared(mod):
    item = [{"sku": "A", "price": 1.0, "qty": 1}]
    env = mod.Env(world())
    a = env.fork()
    assert a.step("place_order", {"user_id": "u1", "items": item})["order_id"] == "o5"  # computes the pattern
    b = env.fork()  # same key set as `a` had: reuses the pattern
    assert b.step("place_order", {"user_id": "u1", "items": item})["order_id"] == "o5"
    assert env.step("delete_cancelled", {"user_id": "u1"}) == 1  # o3 gone: the parent's key set changed
    assert env.step("place_order", {"user_id": "u2", "items": item})["order_id"] == "o5"
    assert a.step("place_order", {"user_id": "u2", "items": item})["order_id"] == "o6"
    c = a.fork()
    assert c.step("new_counter", {"label": "x"}) == a.step("new_counter", {"label": "x"})
    assert c.state == a.state and c.state_hash() == a.state_hash() == envrt.state_hash(a.state)


def _naive_diff(before, after, path=""):
    """The documented diff (sorted keys, lists compared as values) with no pruning shortcuts."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for k in sorted(set(before) | set(after), key=str):
            p = f"{path}/{str(k).replace('~', '~0').replace('/', '~1')}"
            if k not in after:
                out.append(("remove", p, before[k], None))
            elif k not in before:
                out.append(("add", p, None, after[k]))
            else:
                out.extend(_naive_diff(before[k], after[k], p))
        return out
    if before != after or type(before) is not type(after):
        return [("change", path or "/", before, after)]
    return []


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, max_size=8))
def test_gold_diff_of_a_fork_run_matches_a_naive_diff(mod, steps):
    """Lowering diffs the world against a fork's state after the gold calls (forgec.lower.state_diff)."""
    from forgec.lower import state_diff

    base = mod.Env(world())
    f = base.fork()
    for tool, args in steps:
        f.step(tool, _json(args))
    got = [(d.op, d.path, d.before, d.after) for d in state_diff(world(), f.state)]
    assert got == _naive_diff(world(), _json(f.state))
    assert state_diff(world(), base.state) == []
