"""forgec/serve/sessions.py without a transport: scoring equals `forgec eval`'s, bounded session table, world state."""

from __future__ import annotations

import copy
import json

import pytest
from runtime_build import INITIAL, make_build

from forgec.runtime import BuildError, load
from forgec.runtime.agents import OracleAgent, RandomAgent, oracle_final_text
from forgec.runtime.episode import run_episode_sync
from forgec.runtime.users import ScriptedUser
from forgec.serve.sessions import Session, SessionError, SessionTable, World, said_to_user


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    return load(make_build(tmp_path_factory.mktemp("sess") / "b"))


def test_score_equals_the_eval_episode_reward_for_oracle_and_random(shop):
    w = World(shop, "shop")
    for t in shop.tasks:
        for agent in (OracleAgent(t), RandomAgent(seed=3)):
            ep = run_episode_sync(shop, t, agent, ScriptedUser(t))
            s = Session("x", w, t)
            for e in ep.tool_events:  # replay the episode's calls, as an MCP client would send them
                s.call(e.name, copy.deepcopy(e.arguments))
            sc = s.score(said_to_user(ep.messages))
            assert {k: sc[k] for k in ep.reward_breakdown} == ep.reward_breakdown, t.id
            assert sc["state_diff"] == ep.state_diff


def test_state_diff_and_reset(shop):
    t = shop.task("shop/cancel_order")
    s = Session("x", World(shop, "shop"), t)
    assert s.state()["diff"] == [] and s.state()["state_hash"] == t.initial_state_hash
    out = s.call("cancel_order", {"order_id": "o_1", "reason": "no_longer_needed"})
    assert out.ok and s.state()["state_hash"] == t.gold_state_hash
    assert {d["path"] for d in s.state()["diff"]} == {d.path for d in t.gold_diff}
    assert s.score(oracle_final_text(t))["reward"] == 1.0
    bad = s.call("cancel_order", {"order_id": "o_1", "reason": "no_longer_needed"})  # already cancelled: a ToolError
    assert not bad.ok and bad.error == "only pending orders can be cancelled" and s.state()["state_hash"] == t.gold_state_hash
    s.reset(t)
    assert s.state()["state_hash"] == t.initial_state_hash and s.info()["calls"] == 0
    assert s.state(full=True)["state"] == INITIAL


def test_world_state_session_has_no_score(shop):
    s = Session("x", World(shop, "shop"))
    assert s.task is None and s.state()["diff"] == []
    with pytest.raises(ValueError, match="no task"):
        s.score("")


def test_world_rejects_unknown_env_and_other_envs_tasks(shop):
    with pytest.raises(BuildError, match="no environment 'shoop'"):
        World(shop, "shoop")
    with pytest.raises(BuildError, match="no task 'shop/nope'"):
        World(shop, "shop").task("shop/nope")


def test_session_table_refuses_past_its_caps_and_never_evicts_a_live_session(shop):
    t = shop.task("shop/order_total")
    tab = SessionTable(World(shop, "shop"), t, max_sessions=3, max_per_client=2, idle_s=None)
    with pytest.raises(SessionError) as e:
        tab.get("a")
    assert e.value.code == "unknown-session"
    a, b = tab.create("a", client="10.0.0.1"), tab.create("b", client="10.0.0.1")
    assert a.task is t and tab.get("a") is a
    with pytest.raises(SessionError) as e:  # a third from the same client
        tab.create("c", client="10.0.0.1")
    assert e.value.code == "client-full" and "per-client" in e.value.message
    c = tab.create("c", client="10.0.0.2")
    with pytest.raises(SessionError) as e:  # the server is full: refused, and nobody was pushed out
        tab.create("d", client="10.0.0.3")
    assert e.value.code == "server-full" and [s["session"] for s in tab.list()] == ["b", "a", "c"]
    assert tab.drop("c") and not tab.drop("c") and len(tab) == 2
    with pytest.raises(SessionError) as e:  # a dropped id is an error at its next use, never a fresh session
        tab.get("c")
    assert e.value.code == "session-expired" and "dropped" in e.value.message
    other = tab.create("e", task=shop.task("shop/cancel_order"))
    assert other.task.id == "shop/cancel_order" and b is not other and c is not other


def test_session_table_reaps_idle_sessions_and_says_so(shop):
    tab = SessionTable(World(shop, "shop"), None, max_sessions=2, idle_s=60)
    old = tab.create("old")
    tab.create("mid")
    old.last_used -= 61
    tab.create("new")  # the server was full; the idle session made room
    assert [s["session"] for s in tab.list()] == ["mid", "new"]
    with pytest.raises(SessionError) as e:
        tab.get("old")
    assert e.value.code == "session-expired" and "idle" in e.value.message
    mid = tab.get("mid")
    mid.last_used -= 61  # idle past the limit at its next call, even when nothing else reaped it
    with pytest.raises(SessionError) as e:
        tab.get("mid")
    assert e.value.code == "session-expired"


def test_said_to_user_joins_assistant_text_only():
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "A"}, {"role": "tool", "content": "T"},
            {"role": "assistant", "content": None, "tool_calls": []}, {"role": "assistant", "content": "B"}]
    assert said_to_user(msgs) == "A\n\nB"


def test_doc_meta_from_an_mcp_doc_only_where_it_still_describes_the_tool_and_the_results_keep_it(shop, tmp_path):
    from forgec.serve.docmeta import doc_meta

    tools = shop.envs["shop"].TOOLS
    fn = {t["function"]["name"]: t["function"] for t in tools}
    order = {"type": "object", "properties": {"order_id": {"type": "string"}, "total": {"type": "number"}}, "required": ["order_id", "total"]}
    doc = {"tools": [
        {"name": "get_order", "title": "Get order", "description": fn["get_order"]["description"], "inputSchema": fn["get_order"]["parameters"],
         "annotations": {"readOnlyHint": True}, "outputSchema": order},
        {"name": "cancel_order", "title": "Cancel", "description": "an edited description", "inputSchema": fn["cancel_order"]["parameters"]},
        {"name": "update_address", "title": "Move", "description": fn["update_address"]["description"],
         "inputSchema": fn["update_address"]["parameters"], "outputSchema": {**order, "required": ["order_id", "tracking_number"]}},
    ]}
    p = tmp_path / "shop_tools.json"
    p.write_text(json.dumps(doc))
    meta = doc_meta(shop, "shop", tools, [p])
    assert meta["get_order"] == {"title": "Get order", "annotations": {"readOnlyHint": True}, "output_schema": order}
    assert "cancel_order" not in meta  # the doc no longer describes the served tool
    assert meta["update_address"] == {"title": "Move"}  # its recorded results lack tracking_number: no output schema
    assert doc_meta(shop, "shop", tools) == {}  # the fixture build records no sources
