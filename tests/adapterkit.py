"""What the adapter tests (verifiers, OpenEnv) share: scripted agents, a scripted OpenAI-compatible endpoint that plays
them, and the reference scores from forgec's own evaluation of the same agents.

The endpoint (tests/fakeserver.py, a real HTTP server) picks its reply by the request's `model`, `MODE/<task id>`
(or plain `MODE`: the task is the one whose opening the conversation starts with):
`oracle` plays `OracleAgent` (the gold calls, as a dialogue), `wrong` plays `WrongAgent`, `slow` the oracle with every
reply after the first 3 s late. Both agents are stateless (their reply follows from the messages so far), so the same
conversation gets the same reply wherever it is played.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from forgec.runtime.agents import OracleAgent
from forgec.runtime.eval import evaluate
from forgec.runtime.scenario import opening
from forgec.runtime.types import AgentReply, ToolCall
from forgec.runtime.users import ScriptedUser

REPO = Path(__file__).resolve().parent.parent


def _skew(v):
    """`v` with every string ("-x" appended) and whole number (+1) changed, nested values too."""
    if isinstance(v, str):
        return v + "-x"
    if isinstance(v, int) and not isinstance(v, bool):
        return v + 1
    if isinstance(v, dict):
        return {k: _skew(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_skew(x) for x in v]
    return v


class WrongAgent:
    """Makes the task's first gold write with every argument value changed (strings "-x" appended, whole numbers
    +1: ids and values the task did not ask for), then says the request is done."""

    def __init__(self, task):
        self.task = task

    def act_sync(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        if not any(m.get("role") == "assistant" for m in messages):
            g = next(g for g in self.task.gold_calls if g.write)
            args = _skew(g.arguments)
            return AgentReply(content="I'll take care of that.", tool_calls=[ToolCall(id="call_0_0", name=g.tool, arguments=args)])
        return AgentReply(content="All done: your request has been completed.")

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        return self.act_sync(messages, tools)


AGENTS = {"oracle": OracleAgent, "slow": OracleAgent, "wrong": WrongAgent}


def reply_dict(r: AgentReply) -> dict:
    """An AgentReply as a fakeserver reply (content and OpenAI tool calls) or as an OpenEnv/gym action."""
    out: dict = {"content": r.content or ""}
    if r.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in r.tool_calls]
    return out


def responder(build):
    """The fakeserver responder playing AGENTS by the request's model `MODE/<task id>`."""

    by_opening = {opening(t): t for t in build.tasks}
    assert len(by_opening) == len(build.tasks)

    def respond(body: dict) -> dict:
        mode, _, tid = body["model"].partition("/")
        task = build.task(tid) if tid else by_opening[next(m["content"] for m in body["messages"] if m["role"] == "user")]
        r = AGENTS[mode](task).act_sync(body["messages"], body.get("tools") or [])
        out = reply_dict(r)
        if mode == "slow" and any(m.get("role") == "assistant" for m in body["messages"]):
            out["delay"] = 3.0
        return out

    return respond


def write_tasks(build) -> list:
    """Tasks with a gold write (what WrongAgent gets wrong)."""
    return [t for t in build.tasks if any(g.write for g in t.gold_calls)]


def eval_oracle_cli(build_dir: Path, out: Path) -> dict[str, dict]:
    """`forgec eval BUILD --agent oracle -k 1` (the command itself): its episodes by task id."""
    r = subprocess.run([sys.executable, "-m", "forgec", "eval", str(build_dir), "--agent", "oracle", "-k", "1", "-o", str(out)],
                       capture_output=True, text=True, timeout=600, cwd=REPO)
    assert r.returncode == 0, r.stderr[-3000:]
    eps = [json.loads(line) for line in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    results = json.loads((out / "run_results.json").read_text(encoding="utf-8"))["results"]
    assert {x["task_id"]: x["rewards"] for x in results} == {e["task_id"]: [e["reward"]] for e in eps}
    return {e["task_id"]: e for e in eps}


def eval_agent(build, agent_cls, tasks: list[str]) -> dict[str, object]:
    """forgec's evaluation (`runtime.eval.evaluate`, what `forgec eval` runs) of `agent_cls` with the scripted user."""
    res = evaluate(build, agent_cls, ScriptedUser, None, 1, tasks)
    return {e.task_id: e for e in res.episodes}


def said(messages: list[dict]) -> list[tuple]:
    """A conversation as (role, text, tool names) triples: what two records of one episode must agree on."""
    out = []
    for m in messages:
        names = tuple((c.get("function") or c).get("name") for c in m.get("tool_calls") or [])
        out.append((m["role"], (m.get("content") or "").strip(), names))
    return out
