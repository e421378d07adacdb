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
from forgec.serve.sessions import Session, SessionTable, World, said_to_user


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


def test_session_table_creates_lazily_and_drops_least_recently_used(shop):
    t = shop.task("shop/order_total")
    tab = SessionTable(World(shop, "shop"), t, max_sessions=3, idle_s=None)
    assert tab.get("a", create=False) is None
    a, b, c = tab.get("a"), tab.get("b"), tab.get("c")
    assert a.task is t and tab.get("a") is a  # touching a makes b the oldest
    tab.get("d")
    assert [s["session"] for s in tab.list()] == ["c", "a", "d"]
    assert tab.drop("c") and not tab.drop("c") and len(tab) == 2
    other = tab.get("e", task=shop.task("shop/cancel_order"))
    assert other.task.id == "shop/cancel_order" and b is not other


def test_session_table_reaps_idle_sessions(shop):
    tab = SessionTable(World(shop, "shop"), None, idle_s=60)
    old = tab.get("old")
    old.last_used -= 61
    tab.get("new")
    assert [s["session"] for s in tab.list()] == ["new"]


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
