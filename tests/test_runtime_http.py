"""The real openai client over real HTTP against tests/fakeserver.py: agents, LLM user, LLM judge, retries."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from fakeserver import FakeServer, fake_server  # noqa: F401 - fixture
from runtime_build import make_build

from forgec.runtime import load
from forgec.runtime.agents import OpenAIAgent, OracleAgent, oracle_final_text
from forgec.runtime.scenario import opening
from forgec.runtime.episode import END_AGENT_ERROR, END_USER_FAILURE, END_USER_STOP, arun_episode
from forgec.runtime.eval import evaluate
from forgec.runtime.judge import LLMJudge, RuleJudge
from forgec.runtime.llmclient import aclose_clients
from forgec.runtime.users import STOP, LLMUser, ScriptedUser


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return load(make_build(tmp_path_factory.mktemp("b")))


def oracle_model(build, fmt: str):
    """A fake 'model' that answers like the oracle for whichever task the conversation is about."""

    def task_of(body):
        first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return next(t for t in build.tasks if opening(t) == first_user)  # the scripted user opens with reason + request

    def respond(body):
        t = task_of(body)
        msgs = body["messages"]
        if fmt == "openai":
            if not any(m["role"] == "tool" for m in msgs):
                return {"tool_calls": [{"name": g.tool, "arguments": g.arguments} for g in t.gold_calls]}
            return {"content": oracle_final_text(t)}
        if not any("<tool_response>" in (m.get("content") or "") for m in msgs):
            calls = "".join(f'<tool_call>\n{json.dumps({"name": g.tool, "arguments": g.arguments})}\n</tool_call>\n' for g in t.gold_calls)
            return {"content": "<think>look it up</think>" + calls}
        return {"content": "<think>now answer</think>" + oracle_final_text(t)}

    return respond


def run(coro):
    """asyncio.run, closing the HTTP clients that ran on the loop before it closes."""

    async def main():
        try:
            return await coro
        finally:
            await aclose_clients()

    return asyncio.run(main())


@pytest.mark.parametrize("fmt", ["openai", "hermes"])
def test_openai_agent_full_episode_both_formats(build, fake_server, fmt):
    fake_server.responder = oracle_model(build, fmt)
    t = build.task("shop/move_by_email")
    agent = OpenAIAgent(fake_server.url, "m", tool_format=fmt, timeout=5)
    ep = run(arun_episode(build, t, agent, ScriptedUser(t), judge=RuleJudge()))
    assert ep.reward == 1.0 and ep.end_reason == END_USER_STOP, ep.to_json()
    assert ep.tool_calls == 3 and ep.tool_errors == 0
    assert ep.tokens == {"prompt_tokens": 20, "completion_tokens": 10}
    first, second = fake_server.requests
    if fmt == "openai":
        assert [x["function"]["name"] for x in first["tools"]] == [x["function"]["name"] for x in build.envs["shop"].TOOLS]
        fake_server.reset()
        fake_server.responder = lambda body: (
            {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "o_1"}}], "reasoning_content": "thinking"}
            if len(body["messages"]) < 4 else {"content": "Done."})
        ep2 = run(arun_episode(build, t, agent, ScriptedUser(t)))
        assert ep2.messages[2]["reasoning_content"] == "thinking" and ep2.replies[0].reasoning == "thinking"
        assert all("reasoning_content" not in m for m in fake_server.requests[1]["messages"])  # not sent back to the API
        tool_msgs = [m for m in second["messages"] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_msgs] == [c["id"] for c in second["messages"][2]["tool_calls"]]
    else:
        assert "tools" not in first
        assert first["messages"][0]["role"] == "system" and "<tools>" in first["messages"][0]["content"]
        assert '"find_user_by_email"' in first["messages"][0]["content"]
        assert second["messages"][2]["content"].count("<tool_call>") == 3  # our calls re-rendered as Hermes text
        assert second["messages"][3]["role"] == "user" and second["messages"][3]["content"].count("<tool_response>") == 3
        assert ep.replies[0].reasoning == "look it up" and "<tool_call>" in ep.replies[0].raw
        # interleaved thinking: the earlier turn's reasoning is in the episode and back in the next prompt
        assert ep.messages[2]["reasoning_content"] == "look it up"
        assert second["messages"][2]["content"].startswith("<think>\nlook it up\n</think>")


def test_openai_format_malformed_calls_become_tool_errors(build, fake_server):
    t = build.task("shop/cancel_order")
    fake_server.script(
        {"tool_calls": [{"name": "cancel_order", "arguments": "{not json"}, {"name": "nuke", "arguments": {}},
                        {"name": "cancel_order", "arguments": {"order_id": 7, "reason": "no_longer_needed"}}]},
        {"tool_calls": [{"name": "cancel_order", "arguments": {"order_id": "o_1", "reason": "no_longer_needed"}}]},
        {"content": "Your order has been cancelled."},
    )
    ep = run(arun_episode(build, t, OpenAIAgent(fake_server.url, "m", timeout=5), ScriptedUser(t)))
    assert ep.reward == 1.0 and ep.tool_calls == 4 and ep.tool_errors == 3
    assert [e.kind for e in ep.tool_events] == ["bad-arguments", "unknown-tool", "tool-error", ""]
    sent = fake_server.requests[1]["messages"]
    assert [m["content"].startswith("Error:") for m in sent if m["role"] == "tool"] == [True, True, True]


def test_retries_on_429_500_and_disconnect(build, fake_server):
    fake_server.responder = oracle_model(build, "openai")
    fake_server.script({"status": 429, "retry_after": 0.05}, {"status": 500}, {"disconnect": True}, {"status": 503})
    t = build.task("shop/cancel_order")
    agent = OpenAIAgent(fake_server.url, "m", timeout=5, max_retries=4, backoff_s=0.01)
    ep = run(arun_episode(build, t, agent, ScriptedUser(t)))
    assert ep.reward == 1.0 and ep.error is None
    assert len(fake_server.requests) == 6  # 4 failures + 2 real turns


def test_persistent_failure_ends_only_the_episode_with_error(build, fake_server):
    t = build.task("shop/cancel_order")
    fake_server.responder = lambda body: {"status": 500, "message": "overloaded"}
    ep = run(arun_episode(build, t, OpenAIAgent(fake_server.url, "m", timeout=5, max_retries=2, backoff_s=0.01), ScriptedUser(t)))
    assert ep.end_reason == END_AGENT_ERROR and ep.reward == 0.0
    assert "HTTP 500" in ep.error and "after 3 attempts" in ep.error
    fake_server.reset()
    fake_server.responder = lambda body: {"status": 400, "message": "bad model"}
    ep = run(arun_episode(build, t, OpenAIAgent(fake_server.url, "m", timeout=5, max_retries=4, backoff_s=0.01), ScriptedUser(t)))
    assert "HTTP 400" in ep.error and "after 1 attempt" in ep.error and len(fake_server.requests) == 1


def test_slow_replies_time_out_then_recover(build, fake_server):
    t = build.task("shop/cancel_order")
    fake_server.responder = lambda body: {"content": "slow", "delay": 1.0}
    t0 = time.perf_counter()
    ep = run(arun_episode(build, t, OpenAIAgent(fake_server.url, "m", timeout=0.25, max_retries=1, backoff_s=0.01), ScriptedUser(t)))
    assert time.perf_counter() - t0 < 1.5
    assert ep.end_reason == END_AGENT_ERROR and "Timeout" in ep.error and "after 2 attempts" in ep.error
    fake_server.reset()
    fake_server.responder = oracle_model(build, "openai")
    fake_server.script({"content": "x", "delay": 1.0})  # first attempt times out, the retry answers
    ep = run(arun_episode(build, t, OpenAIAgent(fake_server.url, "m", timeout=0.25, max_retries=2, backoff_s=0.01), ScriptedUser(t)))
    assert ep.reward == 1.0


def user_model(build):
    def respond(body):
        sys = body["messages"][0]["content"]
        last = body["messages"][-1]
        assert last["role"] == "user"  # the agent speaks as `user` from the simulated user's side
        if "completed" in last["content"]:
            return {"content": STOP}
        if "email" in last["content"]:
            return {"content": "It's alan@example.com." if "alan@example.com" in sys else "I don't know."}
        return {"content": "Sorry?"}

    return respond


def test_llm_user_and_llm_judge_over_http(build):
    t = build.task("shop/move_by_email")
    with FakeServer(user_model(build)) as usr, FakeServer() as jdg:
        jdg.script({"content": 'Verdict:\n```json\n{"user_error": false, "reason": "the customer only gave its email"}\n```'})

        class AskingOracle(OracleAgent):
            """Asks for the email, then makes the gold calls in one turn and reports."""

            def act_sync(self, messages, tools):
                from forgec.runtime.types import AgentReply, ToolCall

                turn = sum(1 for m in messages if m["role"] == "assistant")
                if turn == 0:
                    return AgentReply(content="What is the email on your account?")
                if turn == 1:
                    return AgentReply(tool_calls=[ToolCall(f"c{i}", g.tool, dict(g.arguments)) for i, g in enumerate(self.task.gold_calls)])
                return AgentReply(content=oracle_final_text(self.task))

        ep = run(arun_episode(build, t, AskingOracle(t), LLMUser(t, usr.url, "u", timeout=5), judge=LLMJudge(jdg.url, "j", timeout=5)))
        assert ep.reward == 1.0 and ep.end_reason == END_USER_STOP
        users = [m["content"] for m in ep.messages if m["role"] == "user"]
        assert users == [opening(t), "It's alan@example.com.", STOP]
        sys_prompt = usr.requests[0]["messages"][0]["content"]
        assert "alan@example.com" in sys_prompt and "9 Oak Rd" in sys_prompt and t.user.goal in sys_prompt and STOP in sys_prompt
        assert all(m["role"] != "tool" for r in usr.requests for m in r["messages"])  # the user never sees tools
        assert ep.judge.judge == "llm" and ep.judge.user_error is False and "email" in ep.judge.reason
        judge_prompt = jdg.requests[0]["messages"][0]["content"]
        assert "CUSTOMER: It's alan@example.com." in judge_prompt and "AGENT: What is the email" in judge_prompt


def test_llm_judge_is_robust_to_malformed_output(build):
    t = build.task("shop/cancel_order")
    msgs = [{"role": "user", "content": t.instruction}, {"role": "assistant", "content": "Done."}, {"role": "user", "content": STOP}]
    with FakeServer() as srv:
        srv.script({"content": "Hmm, hard to say."}, {"content": "{'user_error': True, 'reason': 'invented a fact'}"})
        v = run(LLMJudge(srv.url, "j", timeout=5).judge(t, msgs))
        assert v.user_error is True and v.reason == "invented a fact" and len(srv.requests) == 2
        srv.reset()
        srv.script({"content": "no idea"}, {"content": "still no idea"})
        v = run(LLMJudge(srv.url, "j", timeout=5).judge(t, msgs))
        assert v.user_error is False and v.error == "unparseable judge output"
        srv.reset()
        srv.script({"content": "user_error: yes, the customer contradicted itself"})
        assert run(LLMJudge(srv.url, "j", timeout=5).judge(t, msgs)).user_error is True
        srv.reset()
        srv.responder = lambda body: {"status": 503}
        v = run(LLMJudge(srv.url, "j", timeout=5, max_retries=1, backoff_s=0.01).judge(t, msgs))
        assert v.user_error is False and "HTTP 503" in v.error


def test_llm_user_failure_is_recorded(build):
    t = build.task("shop/cancel_order")
    with FakeServer(lambda body: {"disconnect": True}) as usr:
        ep = run(arun_episode(build, t, OracleAgent(t), LLMUser(t, usr.url, "u", timeout=2, max_retries=1, backoff_s=0.01)))
    # the opening message is the instruction (no request); the reply after the oracle's report fails
    assert ep.end_reason == END_USER_FAILURE and "Connection" in ep.error


def test_concurrent_eval_against_endpoint_isolates_failures(build):
    respond = oracle_model(build, "openai")

    def flaky(body):
        r = respond(body)
        first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if first_user == opening(build.task("shop/order_total")):  # every request of task order_total fails
            return {"status": 500, "delay": 0.2}
        return {**r, "delay": 0.2}

    with FakeServer(flaky) as srv:
        shared = OpenAIAgent(srv.url, "m", timeout=5, max_retries=1, backoff_s=0.01)
        t0 = time.perf_counter()
        res = evaluate(build, lambda task: shared, ScriptedUser, RuleJudge(), k=2, concurrency=10)
        wall = time.perf_counter() - t0
    assert len(res.episodes) == 10
    bad = [e for e in res.episodes if e.task_id == "shop/order_total"]
    assert all(e.end_reason == END_AGENT_ERROR for e in bad)
    assert all(e.reward == 1.0 for e in res.episodes if e.task_id != "shop/order_total")
    assert res.pass_hat_k["overall"]["1"] == pytest.approx(0.8) and res.pass_hat_k["overall"]["2"] == pytest.approx(0.8)
    assert wall < 3.0, wall  # sequentially this is >= 10 episodes x 2 requests x 0.2 s = 4 s


def test_cli_eval_with_openai_agent(build, tmp_path):
    from typer.testing import CliRunner

    from forgec.cli import app

    with FakeServer(oracle_model(build, "hermes")) as srv:
        out = tmp_path / "run"
        r = CliRunner().invoke(app, ["eval", str(build.root), "--agent", "openai", "--agent-base-url", srv.url, "--agent-model", "m",
                                     "--tool-format", "hermes", "-k", "2", "--tasks", "shop/cancel_order,shop/desk_price", "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    data = json.loads((out / "run_results.json").read_text())
    assert data["pass_hat_k"]["overall"] == {"1": 1.0, "2": 1.0}
    assert data["metadata"]["args"]["tool_format"] == "hermes" and data["metadata"]["forgec_version"]
    eps = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert [(e["task_id"], e["trial"]) for e in eps] == [("shop/cancel_order", 0), ("shop/cancel_order", 1), ("shop/desk_price", 0), ("shop/desk_price", 1)]
    r = CliRunner().invoke(app, ["eval", str(build.root), "--agent", "openai"])
    assert r.exit_code == 2 and "needs --agent-base-url" in r.output  # a usage error


def interrupt_slow_eval(build, tmp_path, sig, after: int, wait: float = 60):
    """`forgec eval` (oracle answers, 0.3 s each) in a subprocess, sent `sig` once `after` episodes are on disk
    (a state, not a fixed time); returns (returncode, stderr, run folder)."""
    import os
    import subprocess
    import sys

    respond = oracle_model(build, "openai")
    with FakeServer(lambda body: {**respond(body), "delay": 0.3}) as srv:
        out = tmp_path / "run"
        p = subprocess.Popen([sys.executable, "-m", "forgec", "eval", str(build.root), "--agent", "openai", "--agent-base-url", srv.url,
                              "--agent-model", "m", "-k", "8", "--concurrency", "2", "-o", str(out), "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.time() + wait
        while time.time() < deadline:
            f = out / "episodes.jsonl"
            if f.exists() and len(f.read_text().splitlines()) >= after:
                break
            time.sleep(0.05)
        p.send_signal(sig)
        _, err = p.communicate(timeout=wait)
    return p.returncode, err, out


def test_ctrl_c_writes_what_finished(build, tmp_path):
    """SIGINT during `forgec eval` against a slow endpoint: exit 130, finished episodes and run_results.json written."""
    import signal

    rc, err, out = interrupt_slow_eval(build, tmp_path, signal.SIGINT, after=3)
    assert rc == 130, err[-2000:]
    data = json.loads((out / "run_results.json").read_text())
    assert data["interrupted"] is True
    eps = (out / "episodes.jsonl").read_text().splitlines()
    assert 3 <= len(eps) < 40 and data["summary"]["episodes"] == len(eps)
    assert all(json.loads(e)["reward"] == 1.0 for e in eps)  # only finished episodes, none cut short


def test_cli_eval_with_llm_user_and_llm_judge(build, tmp_path):
    from typer.testing import CliRunner

    from forgec.cli import app

    with FakeServer(user_model(build)) as usr, FakeServer(lambda body: {"content": '{"user_error": false, "reason": "ok"}'}) as jdg:
        out = tmp_path / "run"
        r = CliRunner().invoke(app, ["eval", str(build.root), "--agent", "oracle", "--user", "llm", "--user-base-url", usr.url,
                                     "--user-model", "u", "--judge", "llm", "--judge-base-url", jdg.url, "--judge-model", "j",
                                     "-k", "2", "-o", str(out), "-q"])
        assert r.exit_code == 0, r.output
        n_user, n_judge = len(usr.requests), len(jdg.requests)
    data = json.loads((out / "run_results.json").read_text())
    assert data["pass_hat_k"]["overall"] == {"1": 1.0, "2": 1.0}
    eps = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    # one LLM-user request per reply after the (scripted) opening: the oracle's questions, proposals and report
    assert n_user == sum(sum(m["role"] == "user" for m in e["messages"]) - 1 for e in eps) and n_user >= 10
    assert n_judge == 10  # one verdict per episode
    assert all(e["judge"]["judge"] == "llm" and e["judge"]["user_error"] is False for e in eps)
