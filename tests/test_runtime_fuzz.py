"""Adversarial tool calls: 10,000 random and malformed calls; nothing escapes, state changes only on success."""

from __future__ import annotations

import copy
import json
import random

import pytest
from runtime_build import make_build

from forgec.runtime import load
from forgec.runtime.agents import RandomAgent, random_arguments
from forgec.runtime.episode import run_episode
from forgec.runtime.toolcalls import MAX_ARGUMENT_CHARS, execute, parse_hermes, parse_openai_tool_calls
from forgec.runtime.types import ToolCall
from forgec.runtime.users import ScriptedUser

INJECTIONS = ["'; DROP TABLE x; --", "{{7*7}}", "${jndi:ldap://a}", "../../../etc/passwd", "<script>x</script>", "\x00\x01",
              "__class__", "constructor", "__proto__", "\ud800", "😀" * 50, "A" * (MAX_ARGUMENT_CHARS + 10), "</tool_call>", "<tool_call>"]


def fuzz_value(rng: random.Random, depth: int = 0):
    r = rng.random()
    if depth > 3 or r < 0.5:
        return rng.choice([None, True, False, 0, -1, 2**63, -(2**70), 1e308, float("nan"), float("inf"), 0.1, "", "o_1", "u_2",
                           "no_longer_needed", rng.choice(INJECTIONS), "x" * rng.randint(0, 300)])
    if r < 0.75:
        return [fuzz_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["order_id", "reason", "email", "a", "", "__init__"]): fuzz_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def fuzz_call(rng: random.Random, tools: list[dict], names: list[str], i: int) -> ToolCall:
    kind = rng.randrange(8)
    if kind == 0:  # schema-shaped random arguments for a real tool
        t = rng.choice(tools)
        return ToolCall(f"c{i}", t["function"]["name"], random_arguments(t, rng))
    if kind == 1:  # fuzzed name
        base = rng.choice(names)
        name = rng.choice([base.upper(), base + " ", " " + base, base[:-1], base + "\x00", rng.choice(INJECTIONS), "", "x" * 1000, "Env",
                           "step", "__init__", "_t_" + base, "reset", "state_hash"])
        return ToolCall(f"c{i}", name, {})
    if kind == 2:  # wrong top-level argument types
        return ToolCall(f"c{i}", rng.choice(names), rng.choice([[], [1, 2], 5, None, "null", "{}", '{"order_id": "o_1"', "x" * 20000]))
    if kind == 3:  # real tool, fuzzed values per declared parameter (+ extras)
        t = rng.choice(tools)
        props = (t["function"].get("parameters") or {}).get("properties") or {}
        args = {p: fuzz_value(rng) for p in props if rng.random() < 0.8}
        if rng.random() < 0.3:
            args[rng.choice(INJECTIONS[:9])] = fuzz_value(rng)
        return ToolCall(f"c{i}", t["function"]["name"], args)
    if kind == 4:  # deep nesting
        v: object = "x"
        for _ in range(rng.choice([5, 40, 200])):
            v = [v] if rng.random() < 0.5 else {"a": v}
        return ToolCall(f"c{i}", rng.choice(names), {"order_id": v})
    if kind == 5:  # through the Hermes text parser
        body = rng.choice([
            '{"name": "%s", "arguments": %s}' % (rng.choice(names), json.dumps(fuzz_value(rng), default=str)),
            '{"name": "%s", "arguments": {"order_id": "o_1"' % rng.choice(names),
            '{"name": 5, "arguments": {}}',
            "[" * 5000 + "]" * 5000,
            rng.choice(INJECTIONS),
        ])
        calls = parse_hermes(f"text <tool_call>{body}</tool_call>", f"h{i}").tool_calls
        return calls[0] if calls else ToolCall(f"c{i}", "", body)
    if kind == 6:  # through the OpenAI parser, arguments as raw JSON text
        raw = rng.choice(['{"order_id": "o_1", "reason": "no_longer_needed"}', "{bad", "[]", json.dumps(fuzz_value(rng), default=str),
                          '{"order_id": "' + "o" * 20000 + '"}'])
        return parse_openai_tool_calls([{"id": f"c{i}", "function": {"name": rng.choice(names), "arguments": raw}}])[0]
    # valid calls now and then, so successful writes happen too
    return rng.choice([
        ToolCall(f"c{i}", "cancel_order", {"order_id": rng.choice(["o_1", "o_3"]), "reason": "no_longer_needed"}),
        ToolCall(f"c{i}", "update_address", {"order_id": rng.choice(["o_1", "o_3"]), "address": rng.choice(["5 Pine St", "\u202e evil"])}),
        ToolCall(f"c{i}", "get_order", {"order_id": "o_2"}),
    ])


def hammer(build, env_name: str, n: int, seed: int) -> dict:
    """n fuzzed calls against fresh envs; checks the invariants and returns counts by outcome kind."""
    rng = random.Random(seed)
    tools = build.envs[env_name].TOOLS
    names = [t["function"]["name"] for t in tools]
    name_set = frozenset(names)
    tasks = [t for t in build.tasks if t.env == env_name]
    counts: dict[str, int] = {}
    env = None
    for i in range(n):
        if i % 200 == 0:
            env = build.new_env(env_name, tasks[(i // 200) % len(tasks)])
        before_hash = env.state_hash()
        before = json.dumps(env.state, sort_keys=True) if i % 10 == 0 else None  # an independent check, now and then
        call = fuzz_call(rng, tools, names, i)
        out = execute(env, call, name_set)  # must not raise
        counts[out.kind or "ok"] = counts.get(out.kind or "ok", 0) + 1
        assert isinstance(out.content, str)
        json.loads(out.content) if out.ok else None
        if not out.ok:
            assert out.kind != "env-crash", (call, out.error)
            assert env.state_hash() == before_hash, (call, out.error)
            assert before is None or json.dumps(env.state, sort_keys=True) == before
    return counts


def test_ten_thousand_fuzzed_calls_against_fixture_env(tmp_path):
    build = load(make_build(tmp_path))
    counts = hammer(build, "shop", 10_000, seed=7)
    assert sum(counts.values()) == 10_000
    # every failure path was exercised, and successes too
    for kind in ("ok", "parse", "unknown-tool", "bad-arguments", "tool-error"):
        assert counts.get(kind, 0) > 50, counts


def test_random_agent_many_calls_per_turn_episodes(tmp_path):
    build = load(make_build(tmp_path))
    for t in build.tasks:
        for s in range(10):
            ep = run_episode(build, t, RandomAgent(seed=s, max_calls=40, calls_per_turn=8), ScriptedUser(t))
            assert ep.error is None and ep.end_reason in ("user_stop", "max_tool_calls")
            # the final state is the initial state plus only the successful calls, replayed
            env = build.new_env(t.env, t)
            for e in ep.tool_events:
                if e.ok:
                    assert not isinstance(env.step(e.name, copy.deepcopy(e.arguments)), Exception)
            assert env.state_hash() == ep.final_state_hash


@pytest.mark.parametrize("text", ["", "<tool_call>", "</tool_call>", "<tool_call></tool_call>" * 100, "<think>" * 50, "<tool_call>{" * 1000])
def test_parse_hermes_never_raises(text):
    p = parse_hermes(text)
    assert isinstance(p.content, str)
