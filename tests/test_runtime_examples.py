"""The runtime on a real build: `forgec compile examples/` (oracle = 1.0, random ~ 0, 10,000 fuzzed calls)."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
from test_runtime_fuzz import INJECTIONS, fuzz_value

from conftest import EXAMPLES

from forgec.runtime import BuildError, load
from forgec.runtime.agents import OracleAgent, RandomAgent, random_arguments
from forgec.runtime.eval import evaluate, oracle_self_check
from forgec.runtime.judge import RuleJudge
from forgec.runtime.toolcalls import execute, parse_hermes
from forgec.runtime.types import ToolCall
from forgec.runtime.users import ScriptedUser


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("ex") / "build"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(EXAMPLES), "-o", str(out), "-q", "--no-oracle"],
                       capture_output=True, text=True, timeout=600)
    assert (out / "manifest.json").is_file(), r.stderr[-3000:]
    b = load(out)
    assert len(b.envs) >= 3 and len(b.tasks) >= 100, (list(b.envs), len(b.tasks))
    return b


def test_oracle_scores_one_on_every_example_task(build):
    rep = oracle_self_check(build)
    assert rep["failures"] == [] and rep["pass_rate"] == 1.0 and rep["tasks"] == len(build.tasks)
    res = evaluate(build, OracleAgent, ScriptedUser, RuleJudge(), k=1, concurrency=8)
    assert res.pass_hat_k["overall"]["1"] == 1.0
    assert set(res.pass_hat_k["per_env"]) == set(build.envs)
    assert all(v["1"] == 1.0 for v in res.pass_hat_k["per_env"].values())
    # the oracle gives the scripted user no reason to err, and the judge agrees
    assert not any(e.user_error for e in res.episodes)
    assert all(e.end_reason == "user_stop" and e.error is None for e in res.episodes)


def test_random_agent_scores_near_zero_on_examples(build):
    res = evaluate(build, lambda task, trial: RandomAgent(seed=trial, max_calls=8), ScriptedUser, None, k=2, concurrency=8)
    assert res.summary()["errors"] == 0
    assert res.pass_hat_k["overall"]["1"] <= 0.05, res.pass_hat_k


def test_eval_is_deterministic_apart_from_timings(build):
    ids = [t.id for t in build.tasks[::25]]

    def strip(res):
        out = []
        for e in res.episodes:
            d = e.to_json()
            d.pop("timings")
            for ev in d["tool_events"]:
                ev.pop("seconds")
            out.append(json.dumps(d, sort_keys=True))
        return out

    a = evaluate(build, lambda t, i: RandomAgent(seed=i), ScriptedUser, RuleJudge(), k=2, tasks=ids, concurrency=4)
    b = evaluate(build, lambda t, i: RandomAgent(seed=i), ScriptedUser, RuleJudge(), k=2, tasks=ids, concurrency=1)
    assert strip(a) == strip(b)


def _fuzz_call(rng, tools, gold, i):
    names = [t["function"]["name"] for t in tools]
    k = rng.randrange(6)
    if k == 0:
        t = rng.choice(tools)
        return ToolCall(f"c{i}", t["function"]["name"], random_arguments(t, rng))
    if k == 1:
        t = rng.choice(tools)
        props = (t["function"].get("parameters") or {}).get("properties") or {}
        args = {p: fuzz_value(rng) for p in props if rng.random() < 0.8}
        if rng.random() < 0.3:
            args[rng.choice(INJECTIONS[:9])] = fuzz_value(rng)
        return ToolCall(f"c{i}", t["function"]["name"], args)
    if k == 2:
        return ToolCall(f"c{i}", rng.choice([rng.choice(names).upper(), rng.choice(INJECTIONS), "", "_rollback", "step", "__init__"]), {})
    if k == 3:
        return ToolCall(f"c{i}", rng.choice(names), rng.choice([[], 7, None, "{", "x" * 20000]))
    if k == 4:
        g = rng.choice(gold)
        body = json.dumps({"name": g.tool, "arguments": g.arguments})
        body = body[: rng.randint(0, len(body))] if rng.random() < 0.5 else body
        calls = parse_hermes(f"<tool_call>{body}</tool_call>", f"h{i}").tool_calls
        return calls[0]
    g = rng.choice(gold)  # a gold call, possibly with one argument mutated
    args = dict(g.arguments)
    if args and rng.random() < 0.5:
        args[rng.choice(sorted(args))] = fuzz_value(rng)
    return ToolCall(f"c{i}", g.tool, args)


def test_ten_thousand_fuzzed_calls_against_every_example_env(build):
    rng = random.Random(11)
    envs = sorted(build.envs)
    per_env = 10_000 // len(envs) + 1
    counts: dict[str, int] = {}
    for name in envs:
        tools = build.envs[name].TOOLS
        tasks = [t for t in build.tasks if t.env == name]
        gold = [g for t in tasks for g in t.gold_calls]
        names = frozenset(t["function"]["name"] for t in tools)
        env = None
        for i in range(per_env):
            if i % 250 == 0:
                env = build.new_env(name, tasks[(i // 250) % len(tasks)])
            before = env.state_hash()
            check_full = i % 10 == 0
            snap = json.dumps(env.state, sort_keys=True) if check_full else None
            call = _fuzz_call(rng, tools, gold, i)
            out = execute(env, call, names)  # never raises
            counts[out.kind or "ok"] = counts.get(out.kind or "ok", 0) + 1
            if not out.ok:
                assert out.kind != "env-crash", (name, call, out.error)
                assert env.state_hash() == before, (name, call, out.error)
                if check_full:
                    assert json.dumps(env.state, sort_keys=True) == snap, (name, call)
            else:
                json.loads(out.content)
    assert sum(counts.values()) >= 10_000
    assert counts.get("ok", 0) > 100 and counts.get("tool-error", 0) > 1000, counts


def test_version_mismatch_on_a_real_build(build, tmp_path):
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(build.root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    m["metadata"]["forgec_version"] = "9.9.9"
    (copy / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BuildError, match="made by forgec 9.9.9"):
        load(copy)


def test_forked_envs_stay_isolated(build):
    """Envs are forks of one pristine env per initial state: writes in one never reach another."""
    t = next(t for t in build.tasks if not t.read_only)
    a, b_ = build.new_env(t.env, t), build.new_env(t.env, t)
    fresh = build.envs[t.env].Env(build.initial_state(t))
    for g in t.gold_calls:
        assert not isinstance(a.step(g.tool, json.loads(json.dumps(g.arguments))), Exception)
    assert a.state_hash() == t.gold_state_hash
    assert b_.state == fresh.state and b_.state_hash() == fresh.state_hash() == t.initial_state_hash
    c = build.new_env(t.env, t)
    assert c.state_hash() == t.initial_state_hash and json.dumps(c.state, sort_keys=True) == json.dumps(fresh.state, sort_keys=True)
    # random writes in many episodes, then the oracle still scores 1.0 everywhere
    evaluate(build, lambda task, trial: RandomAgent(seed=100 + trial, max_calls=10, calls_per_turn=3), ScriptedUser, None, k=1,
             tasks=[t.id for t in build.tasks[::3]])
    assert oracle_self_check(build)["pass_rate"] == 1.0
