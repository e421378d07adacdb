"""The verifiers adapter (forgec.adapters.verifiers_env, plugin `forgec-verifiers`) under verifiers 0.4's own rollout
machinery: rewards, conversations and end states equal `forgec eval`'s for the gold calls and for wrong calls.

verifiers pins mcp==2.0.0 and its own openai, which forgec's main venv cannot hold, so it lives in the venv made by
scripts/setup_verifiers_venv.sh ($FORGEC_VERIFIERS_VENV; .ci/run and the README's test command set it). Each test
runs tests/verifiers_driver.py there (`vf.load_environment`, `Env.serving`, `Env.run_slot`, the interception
server) against a scripted OpenAI-compatible endpoint served from this process (tests/fakeserver.py, real HTTP)
that plays forgec's oracle (the gold calls) or a wrong agent, and compares with forgec's own evaluation of the same
agents: the `forgec eval --agent oracle` command, and `runtime.eval.evaluate` for the wrong agent.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from adapterkit import REPO, WrongAgent, eval_agent, eval_oracle_cli, responder, said, write_tasks
from fakeserver import FakeServer
from servekit import compile_examples

from forgec.runtime import load

VENV = os.environ.get("FORGEC_VERIFIERS_VENV")
pytestmark = pytest.mark.skipif(not VENV, reason="FORGEC_VERIFIERS_VENV unset (run scripts/setup_verifiers_venv.sh)")


def driver(*args: str, timeout: float = 600) -> list[dict]:
    """tests/verifiers_driver.py in the verifiers venv; its JSON lines."""
    py = Path(VENV) / "bin" / "python"
    r = subprocess.run([str(py), str(REPO / "tests" / "verifiers_driver.py"), *args], capture_output=True, text=True,
                       timeout=timeout, cwd=REPO, env={**os.environ, "FORGEC_FAKE_MODEL_KEY": "fake"})
    assert r.returncode == 0, r.stderr[-4000:]
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("vf")
    path = compile_examples(root / "build", n=12)
    return path, load(path), root


@pytest.fixture(scope="module")
def endpoint(built):
    path, b, _ = built
    with FakeServer(responder(b)) as srv:
        yield srv


def test_gold_rollouts_score_and_play_as_forgec_eval_oracle(built, endpoint):
    path, b, root = built
    rows = {r["task_id"]: r for r in driver("run", str(path), endpoint.url, "oracle")}
    ref = eval_oracle_cli(path, root / "eval-oracle")
    assert sorted(rows) == sorted(ref) == sorted(t.id for t in b.tasks) and len(rows) == 36
    for tid, r in rows.items():
        e = ref[tid]
        assert r["ok"] and r["trace_ok"] and not r["errors"] and not r["trace_errors"], r
        assert r["reward"] == r["rewards"]["reward"] == e["reward"] == 1.0, tid
        info = r["info"]
        assert info["end_reason"] == e["end_reason"] == "user_stop", tid
        assert info["final_state_hash"] == e["final_state_hash"] == b.task(tid).gold_state_hash, tid
        assert (info["turns"], info["tool_calls"]) == (e["turns"], e["tool_calls"]), tid
        assert r["metrics"]["state_match"] == 1.0 and r["metrics"]["tells_told"] == 1.0, tid
        # the conversation verifiers recorded (every model call through its interception server) is eval's episode,
        # less the user's closing stop marker, which no model call carries
        assert said(r["messages"]) == said(e["messages"][:-1]), tid
        assert e["messages"][-1]["role"] == "user" and "###STOP###" in e["messages"][-1]["content"], tid
    # the model was asked with eval's system prompt and the env's tools (OpenAI format)
    req = endpoint.requests[0]
    assert req["messages"][0]["content"].startswith("You are a customer-service agent with tools.")
    tid = req["model"].split("/", 1)[1]
    assert [t["function"]["name"] for t in req["tools"]] == [t["function"]["name"] for t in b.envs[b.task(tid).env].TOOLS]


def test_wrong_calls_score_below_one_as_forgec_evaluates_them(built, endpoint):
    path, b, _ = built
    ids = [t.id for t in write_tasks(b)][::3]
    assert len(ids) >= 5
    rows = {r["task_id"]: r for r in driver("run", str(path), endpoint.url, "wrong", *ids)}
    ref = eval_agent(b, WrongAgent, ids)
    assert sorted(rows) == sorted(ref) == sorted(ids)
    for tid in ids:
        r, e = rows[tid], ref[tid]
        assert r["ok"], r
        assert r["reward"] == e.reward < 1.0, tid
        assert r["info"]["final_state_hash"] == e.final_state_hash != b.task(tid).gold_state_hash, tid
        assert r["info"]["reward_breakdown"] == e.reward_breakdown, tid
        assert r["metrics"]["state_match"] == 0.0 and r["metrics"]["tool_errors"] == e.tool_errors >= 1, tid
        assert said(r["messages"]) == said(e.messages[:-1]), tid


def test_a_rollout_verifiers_stops_early_is_scored_on_the_state_it_reached(built, endpoint):
    """verifiers' own agent timeout cuts the episode (the second model reply comes 3 s late): the rollout is still
    scored, by forgec's reward on the state reached, with the reason recorded."""
    path, b, _ = built
    # a task whose gold path writes after a lookup (the build's own: the sampler's ids change as its rules do)
    tid = next(t.id for t in b.tasks if t.env == "airline" and len(t.gold_calls) >= 2 and t.id.startswith("airline/cancel_reservation"))
    (r,) = driver("run", str(path), endpoint.url, "slow", tid, "--agent-timeout", "1.5")
    assert r["stop_condition"] == "agent_timeout" and r["trace_ok"], r
    info = r["info"]
    assert info["end_reason"] == "error" and info["error"] == "EpisodeStopped: verifiers stopped the rollout (agent_timeout)"
    assert r["rewards"]["reward"] == 0.0 and info["reward_breakdown"]["state_match"] is False
    assert info["final_state_hash"] == b.task(tid).initial_state_hash  # nothing was written yet


def test_load_environment_by_function_and_by_plugin_id_and_its_errors(built):
    path, b, _ = built
    from forgec.export.hf import prompt_messages

    (fn,) = driver("load", str(path), "--env", "helpdesk")
    assert (fn["env"], fn["config"], fn["harness"]) == ("ForgecEnv", "ForgecEnvConfig", "ForgecHarness")
    assert fn["tasks"] == [t.id for t in b.tasks if t.env == "helpdesk"]
    first = b.task(fn["tasks"][0])
    assert [(m["role"], m["content"]) for m in fn["prompt"]] == [(m["role"], m["content"]) for m in prompt_messages(first)]
    (plug,) = driver("load", str(path), "--plugin", "--tasks", "bookstore", "airline/question_1")
    assert plug["env"] == "ForgecEnv" and plug["tasks"] == [t.id for t in b.tasks if t.env == "bookstore"] + ["airline/question_1"]

    (missing,) = driver("load", str(path.parent / "no-such-build"))
    assert missing["error"] == "BuildError" and "missing-build" in missing["message"]
    (env,) = driver("load", str(path), "--env", "airlines")
    assert env["error"] == "BuildError" and "no environment 'airlines'" in env["message"] and "airline, bookstore, helpdesk" in env["message"]
    (task,) = driver("load", str(path), "--tasks", "airline/cancel_reservation_9")
    assert task["error"] == "BuildError" and "no task 'airline/cancel_reservation_9'" in task["message"]
    assert "did you mean" in task["message"]
    (other,) = driver("load", str(path), "--env", "airline", "--tasks", "helpdesk")
    assert other["error"] == "BuildError" and "is not a task of environment 'airline'" in other["message"]
    (harness,) = driver("load", str(path), "--harness", "null")  # verifiers' tool-less chat loop has no forgec tools
    assert harness["error"] == "ValueError" and "runs harness 'null'" in harness["message"]


def test_verifiers_own_eval_cli_runs_the_plugin(built, endpoint, tmp_path):
    """`vf-eval forgec-verifiers --env.taskset.build BUILD ...`: verifiers' CLI finds the plugin by its id and writes
    traces whose rewards and end states are `forgec eval`'s."""
    path, b, root = built
    ref = eval_oracle_cli(path, root / "eval-oracle-cli")
    exe = Path(VENV) / "bin" / "vf-eval"
    r = subprocess.run([str(exe), "forgec-verifiers", "--env.taskset.build", str(path), "--env.taskset.tasks", "helpdesk",
                        "-m", "oracle", "--client.base-url", endpoint.url, "--client.api-key-var", "FORGEC_FAKE_MODEL_KEY",
                        "--push", "False", "-o", str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                       env={**os.environ, "FORGEC_FAKE_MODEL_KEY": "fake"})
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    (traces,) = tmp_path.glob("*/traces.jsonl")
    eps = [json.loads(line) for line in traces.read_text(encoding="utf-8").splitlines()]
    helpdesk = sorted(t.id for t in b.tasks if t.env == "helpdesk")
    assert sorted(e["task"]["data"]["id"] for e in eps) == helpdesk
    for e in eps:
        (tr,) = e["traces"]
        tid = e["task"]["data"]["id"]
        assert e["ok"] and tr["rewards"]["reward"]["score"] == ref[tid]["reward"] == 1.0, tid
        assert tr["info"]["forgec"]["final_state_hash"] == ref[tid]["final_state_hash"], tid
