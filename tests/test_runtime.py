"""Runtime core: loading, tool-call parsing, reward normalization, users, judges, episodes, pass^k."""

from __future__ import annotations

import json
import math
import shutil
from itertools import combinations

import pytest
from runtime_build import INITIAL, make_build

from forgec.runtime import BuildError, load
from forgec.runtime.agents import OracleAgent, RandomAgent
from forgec.runtime.episode import (
    END_AGENT_ERROR,
    END_MAX_TOOL_CALLS,
    END_MAX_TURNS,
    END_USER_STOP,
    Episode,
    EpisodeLimits,
    arun_episode,
    run_episode,
)
from forgec.runtime.eval import evaluate, oracle_self_check, pass_hat_k
from forgec.runtime.judge import RuleJudge
from forgec.runtime.reward import compute_reward, state_diff, told
from forgec.runtime.toolcalls import execute, parse_hermes, parse_openai_tool_calls
from forgec.runtime.types import AgentReply, ToolCall, UserReply
from forgec.runtime.scenario import opening
from forgec.runtime.users import REFUSE, STOP, ScriptedUser, facts_mentioned


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return load(make_build(tmp_path_factory.mktemp("b")))


# --------------------------------------------------------------------------- loading


def test_load_reads_envs_tasks_and_file_states(build):
    assert list(build.envs) == ["shop"]
    assert [t.id for t in build.tasks] == sorted(t.id for t in build.tasks)
    t = build.task("shop/move_by_email")
    assert t.initial_state is None and t.initial_state_file == "states/move_by_email.json"
    assert build.initial_state(t) == INITIAL
    assert build.initial_state(t) is build.initial_state(t)  # cached
    env = build.new_env("shop", t)
    assert env.state == INITIAL and env.state is not build.initial_state(t)
    assert env.state_hash() == t.initial_state_hash


def test_load_rejects_other_versions_and_broken_builds(tmp_path):
    with pytest.raises(BuildError) as e:
        load(make_build(tmp_path / "old", forgec_version="0.0.1"))
    assert "build-version-mismatch" in str(e.value) and "0.0.1" in str(e.value) and "help:" in str(e.value)
    with pytest.raises(BuildError, match="schema version 2.0"):
        load(make_build(tmp_path / "new", schema_version="2.0"))
    with pytest.raises(BuildError, match="does not exist"):
        load(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BuildError, match="no manifest.json"):
        load(tmp_path / "empty")
    b = make_build(tmp_path / "corrupt")
    with (b / "tasks" / "shop.jsonl").open("a") as f:
        f.write('{"id": "shop/x"\n')
    with pytest.raises(BuildError) as e:
        load(b, allow_modified_build=True)  # past the integrity check, to the line-level error
    assert "shop.jsonl:6" in str(e.value)
    d = e.value.diagnostic()
    assert d.code == "corrupt-build" and d.span.file.endswith("shop.jsonl") and d.span.line == 6 and d.is_error
    b2 = make_build(tmp_path / "badtask")
    lines = (b2 / "tasks" / "shop.jsonl").read_text().splitlines()
    obj = json.loads(lines[0])
    del obj["gold_state_hash"]
    (b2 / "tasks" / "shop.jsonl").write_text(json.dumps(obj) + "\n")
    with pytest.raises(BuildError, match="gold_state_hash"):
        load(b2, allow_modified_build=True)
    b3 = make_build(tmp_path / "badenv")
    (b3 / "envs" / "shop" / "env.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(BuildError, match="failed to import: RuntimeError: boom"):
        load(b3, allow_modified_build=True)
    b4 = make_build(tmp_path / "badmanifest")
    (b4 / "manifest.json").write_text("{not json")
    with pytest.raises(BuildError, match="not valid JSON"):
        load(b4)


# --------------------------------------------------------------------------- tool calls


def test_parse_hermes_several_calls_think_and_malformed():
    text = ('<think>I should look it up</think>Let me check.\n<tool_call>\n{"name": "get_order", "arguments": {"order_id": "o_1"}}\n</tool_call>'
            '<tool_call>{"name": "list_orders", "arguments": "{\\"user_id\\": \\"u_2\\"}"}</tool_call>'
            '<tool_call>{"name": "cancel_order", "arguments": {"order_id": </tool_call>'
            '<tool_call>["not", "an", "object"]</tool_call><tool_call>{"name": "get_order", "arguments": {"order_id": "o_9"')
    p = parse_hermes(text, "c")
    assert p.reasoning == "I should look it up"
    assert p.content == "Let me check."
    assert [c.name for c in p.tool_calls] == ["get_order", "list_orders", "cancel_order", "", "get_order"]
    assert p.tool_calls[0].arguments == {"order_id": "o_1"}
    assert p.tool_calls[1].arguments == {"user_id": "u_2"}  # arguments given as a JSON string
    assert isinstance(p.tool_calls[2].arguments, str)  # malformed: raw text kept
    assert isinstance(p.tool_calls[3].arguments, str)
    assert isinstance(p.tool_calls[4].arguments, str)  # unterminated
    assert [c.id for c in p.tool_calls] == ["c_0", "c_1", "c_2", "c_3", "c_4"]


def test_parse_hermes_wrapped_and_listed_calls():
    p = parse_hermes('<tool_call>{"type": "function", "function": {"name": "get_order", "arguments": {"order_id": "o_1"}}}</tool_call>'
                     '<tool_call>[{"name": "a", "arguments": {}}, {"name": "b", "parameters": {"x": 1}}]</tool_call>'
                     '<tool_call>{"name": 7, "arguments": {}}</tool_call>', "c")
    assert [(c.id, c.name, c.arguments) for c in p.tool_calls][:3] == [("c_0", "get_order", {"order_id": "o_1"}), ("c_1_0", "a", {}),
                                                                      ("c_1_1", "b", {"x": 1})]
    assert p.tool_calls[3].name == "" and isinstance(p.tool_calls[3].arguments, str)


def test_parse_openai_tool_calls_dicts():
    calls = parse_openai_tool_calls([
        {"id": "a", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "o_1"}'}},
        {"id": "b", "type": "function", "function": {"name": "get_order", "arguments": "{oops"}},
        {"type": "function", "function": {"name": None, "arguments": None}},
    ])
    assert calls[0] == ToolCall("a", "get_order", {"order_id": "o_1"})
    assert calls[1].arguments == "{oops"
    assert calls[2].name == "" and calls[2].id == "call_2" and calls[2].arguments == {}


def test_execute_errors_leave_state_unchanged(build):
    t = build.task("shop/cancel_order")
    env = build.new_env("shop", t)
    names = frozenset(x["function"]["name"] for x in build.envs["shop"].TOOLS)
    h0 = env.state_hash()
    cases = {
        "parse": ToolCall("1", "", "{not json"),
        "unknown-tool": ToolCall("2", "drop_database", {}),
        "bad-arguments": ToolCall("3", "cancel_order", "[1, 2]"),
        "tool-error": ToolCall("4", "cancel_order", {"order_id": "o_2", "reason": "no_longer_needed"}),  # shipped
    }
    for kind, call in cases.items():
        out = execute(env, call, names)
        assert not out.ok and out.kind == kind and out.content.startswith("Error: ")
        assert env.state_hash() == h0
    for args in ({"order_id": 5, "reason": "no_longer_needed"}, {"order_id": "o_1"}, {"order_id": "o_1", "reason": "bored"},
                 {"order_id": "o_1", "reason": "no_longer_needed", "x": 1}, {"order_id": "x" * 20000, "reason": "no_longer_needed"}):
        out = execute(env, ToolCall("5", "cancel_order", args), names)
        assert not out.ok, args
        assert env.state_hash() == h0
    huge = execute(env, ToolCall("6", "cancel_order", {"order_id": "o_1", "reason": "x" * 20000}), names)
    assert huge.kind == "bad-arguments" and "too large" in huge.error
    ok = execute(env, ToolCall("7", "cancel_order", {"order_id": "o_1", "reason": "no_longer_needed"}), names)
    assert ok.ok and json.loads(ok.content)["status"] == "cancelled"
    assert env.state_hash() == t.gold_state_hash


# --------------------------------------------------------------------------- reward


@pytest.mark.parametrize("value,text,expected", [
    (1234.5, "The total is 1,234.50 dollars.", True),
    (1234.5, "It costs $1234.5.", True),
    (1234.5, "It costs 1234.", False),
    (1234.5, "It costs 12345.", False),
    (89, "Your total was 89.00.", True),
    (89, "Your total was 890.", False),
    (45.99, "Desk Lamp at 45.99", True),
    (45.994, "about 45.99", True),  # written to 2 decimals: rounds to what was written
    (45.99, "about 46", False),
    ("Desk Lamp", "the cheapest is the desk lamp.", True),
    ("Desk Lamp", "the cheapest is the desk lampshade.", False),
    ("o_1", "order o_12 is done", False),
    ("o_1", "order o_1 is done", True),
    (True, "Yes, it is refundable.", True),
    (False, "It is refundable.", False),
    ("1,234.50", "total 1234.5", True),
    ([1, "Oak Chair"], "1 Oak Chair", True),
    ({"name": "Oak Chair", "price": 2999.0}, "Oak Chair costs 2,999", True),
    ({"name": "Oak Chair", "price": 2999.0}, "Oak Chair", False),
])
def test_told_normalizes_numbers_and_strings(value, text, expected):
    assert told(value, text) is expected


def test_compute_reward_needs_state_and_every_tell():
    assert compute_reward("h", "h", [1234.5, "Desk Lamp"], "desk lamp: 1,234.50").reward == 1.0
    rb = compute_reward("h", "h", [1234.5, "Desk Lamp"], "1,234.50")
    assert rb.reward == 0.0 and rb.tells_told == [True, False]
    assert compute_reward("h", "g", [], "").reward == 0.0


def test_state_diff_matches_task_gold_diff(build):
    t = build.task("shop/cancel_order")
    env = build.new_env("shop", t)
    env.step("cancel_order", {"order_id": "o_1", "reason": "no_longer_needed"})
    assert state_diff(INITIAL, env.state) == [d.model_dump() for d in t.gold_diff]


# --------------------------------------------------------------------------- scripted user / judge


def _convo(*turns):
    msgs = [{"role": "system", "content": "s"}]
    for role, text in turns:
        msgs.append({"role": role, "content": text})
    return msgs


def test_scripted_user_answers_known_facts_only(build):
    t = build.task("shop/move_by_email")  # facts: email, address
    u = ScriptedUser(t, max_turns=3)
    first = u.reply_sync(_convo())
    assert first == UserReply(opening(t)) == UserReply(t.instruction)  # a task without a scenario opens with its instruction
    r = u.reply_sync(_convo(("user", first.content), ("assistant", "Could you give me the e-mail on your account?")))
    assert r.content == "My email is alan@example.com." and not r.stop
    r = u.reply_sync(_convo(("user", "x"), ("assistant", "What is your phone number?")))
    assert r.content == "I don't know that."
    r = u.reply_sync(_convo(("user", "x"), ("assistant", "Hi! How can I help you today?")))
    assert r.content == opening(t)
    r = u.reply_sync(_convo(("user", "x"), ("assistant", "Your address has been updated. Anything else?")))
    assert r.stop and r.content == STOP
    r = u.reply_sync(_convo(("user", "x"), ("assistant", "I will update the address of order o_3 to 9 Oak Rd. Shall I proceed?")))
    assert r.content == "Yes, please go ahead." and not r.stop  # the task's gold write, every argument said
    r = u.reply_sync(_convo(("user", "x"), ("assistant", "I will update the address of order o_1 to 9 Oak Rd. Shall I proceed?")))
    assert r.content == REFUSE and not r.stop  # another order: not what the user asked for
    r = u.reply_sync(_convo(("user", "x"), ("assistant", "I will cancel order o_3. Shall I proceed?")))
    assert r.content == REFUSE
    r = u.reply_sync(_convo(("user", "x"), ("assistant", "Let me look into it.")))
    assert r.content == "Okay, please go ahead." and not r.stop
    r = u.reply_sync(_convo(("user", "x"), ("assistant", "Let me look into it."), ("user", r.content), ("assistant", "Still looking.")))
    assert r.stop
    long = [("user", "x"), ("assistant", "What is your phone number?")] * 4
    assert u.reply_sync(_convo(*long)).stop  # bounded


def test_facts_mentioned_uses_name_tokens_and_synonyms():
    facts = {"reservation_id": "4WQ150", "email": "a@b.c", "origin_city": "NYC"}
    assert facts_mentioned("What's your booking number?", facts) == ["reservation_id"]
    assert facts_mentioned("Which city are you departing from?", facts) == ["origin_city"]
    assert facts_mentioned("Please provide your reservation id and e-mail", facts) == ["email", "reservation_id"]
    assert facts_mentioned("How is the weather?", facts) == []


def test_rule_judge_flags_user_errors(build):
    t = build.task("shop/move_by_email")
    j = RuleJudge()
    good = _convo(("user", t.instruction), ("assistant", "What is your email?"), ("user", "My email is alan@example.com."),
                  ("assistant", "Done, the address has been updated."), ("user", STOP))
    assert not j.judge_sync(t, good).user_error
    lie = _convo(("user", t.instruction), ("assistant", "What is your email?"), ("user", "My email is bob@example.com."))
    v = j.judge_sync(t, lie)
    assert v.user_error and "wrong value" in v.reason
    halluc = _convo(("user", t.instruction), ("assistant", "What is your phone?"), ("user", "My phone is 555-1234."))
    assert "hallucinated fact" in j.judge_sync(t, halluc).reason
    withheld = _convo(("user", t.instruction), ("assistant", "Can you tell me your email?"), ("user", "I don't know that."))
    assert "withheld fact" in j.judge_sync(t, withheld).reason
    early = _convo(("user", t.instruction), ("assistant", "Which address should I use?"), ("user", STOP))
    assert "stopped early" in j.judge_sync(t, early).reason


# --------------------------------------------------------------------------- episodes


def test_oracle_scores_one_on_every_task_sync_and_async(build):
    import asyncio

    rep = oracle_self_check(build)
    assert rep["pass_rate"] == 1.0 and rep["failures"] == [] and rep["tasks"] == 5
    for t in build.tasks:
        ep = run_episode(build, t, OracleAgent(t), ScriptedUser(t), judge=RuleJudge())
        assert ep.reward == 1.0 and ep.end_reason == END_USER_STOP and not ep.user_error, ep.to_json()
        assert ep.final_state_hash == t.gold_state_hash
        aep = asyncio.run(arun_episode(build, t, OracleAgent(t), ScriptedUser(t), judge=RuleJudge()))
        assert aep.reward == 1.0
        a, b = ep.to_json(), aep.to_json()
        for d in (a, b):
            d.pop("timings")
            for e in d["tool_events"]:
                e.pop("seconds")
        assert a == b


def test_oracle_without_tells_fails_read_only_tasks(build):
    t = build.task("shop/desk_price")

    class Mute(OracleAgent):
        def act_sync(self, messages, tools):
            r = super().act_sync(messages, tools)
            return AgentReply(content="Done.") if not r.tool_calls else r

    ep = run_episode(build, t, Mute(t), ScriptedUser(t))
    assert ep.reward == 0.0 and ep.reward_breakdown["state_match"] and ep.reward_breakdown["tells_told"] == [False]


def test_wrong_write_records_diff_against_gold(build):
    t = build.task("shop/move_by_email")

    class Wrong(OracleAgent):
        def act_sync(self, messages, tools):
            if not any(m.get("tool_calls") for m in messages if m["role"] == "assistant"):
                return AgentReply(tool_calls=[ToolCall("c", "update_address", {"order_id": "o_1", "address": "9 Oak Rd"})])
            return AgentReply(content="Done.")

    ep = run_episode(build, t, Wrong(t), ScriptedUser(t))
    assert ep.reward == 0.0
    assert [m["path"] for m in ep.state_diff["missing"]] == ["/entities/Order/o_3/address"]
    assert [m["path"] for m in ep.state_diff["extra"]] == ["/entities/Order/o_1/address"]


def test_random_agent_scores_near_zero(build):
    rewards = [run_episode(build, t, RandomAgent(seed=s), ScriptedUser(t)).reward for t in build.tasks for s in range(20)]
    assert sum(rewards) / len(rewards) <= 0.1


def test_limits_and_failures_end_only_the_episode(build):
    t = build.task("shop/cancel_order")

    class Looper:
        def act_sync(self, messages, tools):
            return AgentReply(tool_calls=[ToolCall("c", "get_order", {"order_id": "o_1"})] * 3)

    ep = run_episode(build, t, Looper(), ScriptedUser(t), limits=EpisodeLimits(max_turns=100, max_tool_calls=7))
    assert ep.end_reason == END_MAX_TOOL_CALLS and ep.tool_calls == 7
    # every tool call got a tool message, so the transcript is valid for the next request
    ids = [c["id"] for m in ep.messages if m.get("tool_calls") for c in m["tool_calls"]]
    assert len([m for m in ep.messages if m["role"] == "tool"]) == len(ids) == 9

    class Chatter:
        def act_sync(self, messages, tools):
            return AgentReply(content="What is your order id?")

    ep = run_episode(build, t, Chatter(), ScriptedUser(t, max_turns=100), limits=EpisodeLimits(max_turns=4))
    assert ep.end_reason == END_MAX_TURNS and ep.turns == 4

    class Verbose:
        def act_sync(self, messages, tools):
            return AgentReply(tool_calls=[ToolCall("c", "get_order", {"order_id": "o_1"})], usage={"prompt_tokens": 50, "completion_tokens": 40})

    ep = run_episode(build, t, Verbose(), ScriptedUser(t), limits=EpisodeLimits(max_tokens=100))
    assert ep.end_reason == "max_tokens" and ep.tokens == {"prompt_tokens": 150, "completion_tokens": 120} and ep.tool_calls == 2

    class Crasher:
        def act_sync(self, messages, tools):
            raise RuntimeError("boom")

    ep = run_episode(build, t, Crasher(), ScriptedUser(t))
    assert ep.end_reason == END_AGENT_ERROR and "boom" in ep.error and ep.reward == 0.0

    class Failing:
        def act_sync(self, messages, tools):
            return AgentReply(error="HTTP 500 (after 5 attempts)")

    ep = run_episode(build, t, Failing(), ScriptedUser(t))
    assert ep.end_reason == END_AGENT_ERROR and ep.error.startswith("HTTP 500")


def test_episode_json_is_strict_even_with_nan_arguments(build):
    t = build.task("shop/desk_price")

    class NaNAgent:
        def act_sync(self, messages, tools):
            if len(messages) < 3:
                return AgentReply(tool_calls=[ToolCall("c", "search_products", {"max_price": float("nan")})])
            return AgentReply(content="Done.")

    ep = run_episode(build, t, NaNAgent(), ScriptedUser(t))
    text = ep.dumps()
    assert "NaN" in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert ep.tool_events[0].ok is False


def test_episode_json_roundtrip(build):
    t = build.task("shop/cheapest_item")
    ep = run_episode(build, t, OracleAgent(t), ScriptedUser(t), judge=RuleJudge())
    d = json.loads(ep.dumps())
    back = Episode.from_json(d)
    assert back.to_json() == ep.to_json()
    assert back.judge.user_error is False and next(r for r in back.replies if r.tool_calls).tool_calls[0].name == "search_products"


# --------------------------------------------------------------------------- pass^k


def _brute_pass_hat_k(c, n, k):
    """Fraction of k-subsets of n trials (c successes) that are all successes: an independent count."""
    trials = [1] * c + [0] * (n - c)
    subsets = list(combinations(range(n), k))
    return sum(all(trials[i] for i in s) for s in subsets) / len(subsets)


def test_pass_hat_k_against_hand_values():
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(3, 4, 1) == 0.75
    assert pass_hat_k(3, 4, 2) == 0.5  # C(3,2)/C(4,2) = 3/6
    assert pass_hat_k(3, 4, 3) == 0.25  # 1/4
    assert pass_hat_k(3, 4, 4) == 0.0
    assert pass_hat_k(2, 5, 2) == 0.1  # 1/10
    assert pass_hat_k([4, 3, 0], 4, 2) == pytest.approx((1 + 0.5 + 0) / 3)
    for n in range(1, 7):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert math.isclose(pass_hat_k(c, n, k), _brute_pass_hat_k(c, n, k))
    with pytest.raises(ValueError):
        pass_hat_k(1, 2, 3)


def test_evaluate_concurrent_pass_hat_k(build, tmp_path):
    flaky_ids = {"shop/cancel_order"}

    def agent_factory(task, trial):
        if task.id in flaky_ids and trial % 2 == 1:
            return RandomAgent(seed=trial)  # fails these trials
        return OracleAgent(task)

    seen = []
    res = evaluate(build, agent_factory, ScriptedUser, RuleJudge(), k=4, concurrency=3, on_episode=seen.append)
    assert len(res.episodes) == len(seen) == 20
    assert [(e.task_id, e.trial) for e in res.episodes] == sorted((t.id, i) for t in build.tasks for i in range(4))
    # cancel_order: 2 of 4 succeed; the other four tasks: 4 of 4
    expect = {j: (4 * pass_hat_k(4, 4, j) + pass_hat_k(2, 4, j)) / 5 for j in range(1, 5)}
    assert res.pass_hat_k["overall"] == {str(j): pytest.approx(v) for j, v in expect.items()}
    assert res.pass_hat_k["per_env"]["shop"] == res.pass_hat_k["overall"]
    rr, ej = res.write(tmp_path, {"invocation_id": "x"})
    data = json.loads(rr.read_text())
    assert data["metadata"] == {"invocation_id": "x"} and data["pass_hat_k"]["overall"]["2"] == pytest.approx(expect[2])
    assert len(ej.read_text().splitlines()) == 20


def test_evaluate_survives_a_failing_factory(build):
    def factory(task):
        if task.id == "shop/desk_price":
            raise OSError("model folder missing")
        return OracleAgent(task)

    res = evaluate(build, factory, ScriptedUser, None, k=1)
    bad = [e for e in res.episodes if e.error]
    assert [e.task_id for e in bad] == ["shop/desk_price"] and "model folder missing" in bad[0].error
    assert res.pass_hat_k["overall"]["1"] == pytest.approx(0.8)


def test_evaluate_subset_and_env_selection(build):
    res = evaluate(build, OracleAgent, ScriptedUser, None, k=1, tasks=["shop/order_total"])
    assert res.tasks == ["shop/order_total"] and res.pass_hat_k["overall"]["1"] == 1.0
    res = evaluate(build, OracleAgent, ScriptedUser, None, k=1, tasks=["shop"])
    assert len(res.tasks) == 5
    with pytest.raises(BuildError, match="no task"):
        evaluate(build, OracleAgent, ScriptedUser, None, k=1, tasks=["shop/nope"])


def test_copy_of_build_loads_side_by_side(build, tmp_path):
    other = tmp_path / "copy"
    shutil.copytree(build.root, other)
    b2 = load(other)
    assert b2.envs["shop"] is not build.envs["shop"]
    assert oracle_self_check(b2)["pass_rate"] == 1.0


# --------------------------------------------------------------------------- properties

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-10**9, max_value=10**9), st.integers(min_value=0, max_value=99))
def test_told_money_in_any_common_format(units, cents):
    v = units + (cents / 100 if units >= 0 else -cents / 100)
    for text in (f"{v:,.2f}", f"{v:.2f}", f"total: {v:,.2f} USD", repr(v), f"${v:,.2f}." if v >= 0 else f"{v:,.2f}."):
        assert told(v, text), (v, text)
    assert not told(v, f"{v + 1:,.2f}")
    assert not told(v, f"{v:,.2f}"[:-1] + "9") or f"{v:,.2f}".endswith("9")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=48, max_codepoint=122), min_size=1, max_size=12))
def test_told_strings_need_word_boundaries(word):
    word = word.strip()
    if not word or not word[0].isalnum() or not word[-1].isalnum():
        return
    assert told(word, f"It is {word.upper()}.")
    assert not told(word, f"zz{word}zz")  # only inside a longer word: not told
