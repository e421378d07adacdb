"""`forgec serve-openenv` (forgec.adapters.openenv): OpenEnv's reset/step/state over HTTP and its WebSocket session
protocol, each episode the scripted-user episode of `forgec eval`: gold episodes score 1.0 with eval's conversations
and end states, wrong calls score what forgec's evaluation gives them, bad requests get a clear error and leave the
session usable. OpenEnv's own client (`GenericEnvClient`, openenv-core 0.3.0) plays episodes from the venv of
scripts/setup_verifiers_venv.sh when $FORGEC_VERIFIERS_VENV is set (openenv-core pulls gradio and downgrades pillow,
so it stays out of the main venv); the rest uses httpx and `websockets` against the protocol read from its source.
Every server is a subprocess started by the test and always stopped."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from adapterkit import REPO, WrongAgent, eval_agent, eval_oracle_cli, reply_dict, said, write_tasks
from servekit import compile_examples, listening
from websockets.sync.client import connect

from forgec.runtime import load
from forgec.runtime.agents import OracleAgent

VENV = os.environ.get("FORGEC_VERIFIERS_VENV")


@contextlib.contextmanager
def openenv_server(build: Path, *args: str, timeout: float = 60.0):
    """`forgec serve-openenv BUILD ARGS --port 0` as a subprocess; yields its base URL (from the line it prints on
    stderr once listening); always stopped."""
    with listening(["serve-openenv", str(build), *args, "--port", "0"], what="serve-openenv", timeout=timeout) as url:
        yield url


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("openenv")
    path = compile_examples(root / "build", n=12)
    return path, load(path), root


@pytest.fixture(scope="module")
def url(built):
    with openenv_server(built[0]) as u:
        yield u


@pytest.fixture(scope="module")
def eval_ref(built):
    path, _, root = built
    return eval_oracle_cli(path, root / "eval-oracle")


def play(client: httpx.Client, url: str, b, tid: str, agent_cls) -> tuple[dict, str, int]:
    r = client.post(f"{url}/reset", json={"task": tid})
    assert r.status_code == 200, r.text
    r = r.json()
    assert r["reward"] is None and r["done"] is False
    obs = r["observation"]
    assert obs["task_id"] == tid and [m["role"] for m in obs["messages"]] == ["system", "user"]
    assert obs["tools"] == b.envs[b.task(tid).env].TOOLS
    sid, agent, steps = obs["episode_id"], agent_cls(b.task(tid)), 0
    while not r["done"]:
        obs = r["observation"]
        action = reply_dict(agent.act_sync(obs["messages"], obs["tools"]))
        resp = client.post(f"{url}/step", json={"action": action, "episode_id": sid})
        assert resp.status_code == 200, resp.text
        r = resp.json()
        steps += 1
        assert r["observation"]["episode_id"] == sid and steps < 60
        if not r["done"]:
            assert r["reward"] == 0.0
    return r, sid, steps


def test_gold_episodes_over_http_score_and_play_as_forgec_eval_oracle(built, url, eval_ref):
    _, b, _ = built
    with httpx.Client(timeout=60) as c:
        assert c.get(f"{url}/tasks").json()["tasks"] == [t.id for t in b.tasks]
        for t in b.tasks:
            r, sid, steps = play(c, url, b, t.id, OracleAgent)
            e = eval_ref[t.id]
            obs = r["observation"]
            assert r["done"] is True and r["reward"] == e["reward"] == 1.0, t.id
            assert obs["end_reason"] == e["end_reason"] == "user_stop" and obs["truncated"] is False
            assert obs["reward_breakdown"]["final_state_hash"] == e["final_state_hash"] == t.gold_state_hash
            assert said(obs["messages"]) == said(e["messages"]), t.id  # the whole conversation, the user's stop included
            st = c.get(f"{url}/state", params={"episode_id": sid}).json()
            assert st == {"episode_id": sid, "step_count": steps, "task_id": t.id, "env": t.env, "done": True, "reward": 1.0,
                          "end_reason": "user_stop"}
            assert c.post(f"{url}/close", json={"episode_id": sid}).json() == {"closed": sid}


def test_wrong_calls_score_below_one_as_forgec_evaluates_them(built, url):
    _, b, _ = built
    ids = [t.id for t in write_tasks(b)][1::4]
    ref = eval_agent(b, WrongAgent, ids)
    with httpx.Client(timeout=60) as c:
        for tid in ids:
            r, _, _ = play(c, url, b, tid, WrongAgent)
            e = ref[tid]
            assert r["done"] and r["reward"] == e.reward < 1.0, tid
            assert r["observation"]["reward_breakdown"] == e.reward_breakdown, tid
            assert said(r["observation"]["messages"]) == said(e.messages), tid


def test_sessions_are_isolated(built, url):
    """Two episodes of one task, stepped in turn: the oracle's reaches gold, the wrong agent's does not."""
    _, b, _ = built
    tid = write_tasks(b)[0].id
    with httpx.Client(timeout=60) as c:
        rs = [c.post(f"{url}/reset", json={"task": tid}).json() for _ in range(2)]
        sids = [r["observation"]["episode_id"] for r in rs]
        agents = [OracleAgent(b.task(tid)), WrongAgent(b.task(tid))]
        assert sids[0] != sids[1]
        while not all(r["done"] for r in rs):
            for i in range(2):
                if not rs[i]["done"]:
                    o = rs[i]["observation"]
                    a = reply_dict(agents[i].act_sync(o["messages"], o["tools"]))
                    rs[i] = c.post(f"{url}/step", json={"action": a, "episode_id": sids[i]}).json()
        assert [r["reward"] for r in rs][0] == 1.0 and rs[1]["reward"] < 1.0


def test_websocket_protocol_as_openenv_clients_speak_it(built, url):
    _, b, _ = built
    tid = next(t.id for t in b.tasks if t.env == "helpdesk")
    agent = OracleAgent(b.task(tid))
    with connect(url.replace("http", "ws", 1) + "/ws") as ws:
        def ask(msg) -> dict:
            ws.send(msg if isinstance(msg, str) else json.dumps(msg))
            return json.loads(ws.recv())

        assert ask({"type": "state"}) == {"type": "state", "data": {"episode_id": None, "step_count": 0, "task_id": None,
                                                                      "env": None, "done": False, "reward": None, "end_reason": None}}
        early = ask({"type": "step", "data": {"content": "hi"}})
        assert early["type"] == "error" and early["data"]["code"] == "EXECUTION_ERROR" and "reset first" in early["data"]["message"]
        assert ask("{not json")["data"]["code"] == "INVALID_JSON"
        assert ask({"type": "jump"})["data"]["code"] == "UNKNOWN_TYPE"
        bad = ask({"type": "reset", "data": {"task": tid + "x"}})
        assert bad["type"] == "error" and "did you mean" in bad["data"]["message"]
        r = ask({"type": "reset", "data": {"task": tid, "episode_id": "ep-1"}})
        assert r["type"] == "observation" and set(r["data"]) == {"observation", "reward", "done"}
        assert r["data"]["observation"]["episode_id"] == "ep-1"
        nonsense = ask({"type": "step", "data": {"contents": "hi"}})
        assert nonsense["data"]["code"] == "VALIDATION_ERROR" and "'contents'" in nonsense["data"]["message"]
        steps = 0
        while not r["data"]["done"]:
            o = r["data"]["observation"]
            r = ask({"type": "step", "data": reply_dict(agent.act_sync(o["messages"], o["tools"]))})
            assert r["type"] == "observation"
            steps += 1
        assert r["data"]["reward"] == 1.0
        st = ask({"type": "state"})["data"]
        assert (st["episode_id"], st["step_count"], st["done"], st["reward"]) == ("ep-1", steps, True, 1.0)
        ws.send(json.dumps({"type": "close"}))


def test_bad_requests_get_clear_errors_and_leave_the_session_usable(built, url):
    _, b, _ = built
    tid = b.tasks[0].id
    with httpx.Client(timeout=60) as c:
        assert c.get(f"{url}/health").json() == {"status": "healthy"}
        schema = c.get(f"{url}/schema").json()
        assert set(schema) == {"action", "observation", "state"} and "tool_calls" in schema["action"]["properties"]
        assert c.get(f"{url}/metadata").json()["name"] == "forgec:build"
        r = c.post(f"{url}/reset", json={"task": tid, "episode_id": "mine", "seed": 3})
        assert r.status_code == 200 and r.json()["observation"]["episode_id"] == "mine"

        def refused(status: int, fragment: str, resp: httpx.Response) -> None:
            assert resp.status_code == status, resp.text
            assert fragment in resp.json()["detail"], resp.text

        refused(400, "episode_id", c.post(f"{url}/step", json={"action": {"content": "hi"}}))
        refused(404, "no open episode 'theirs'", c.post(f"{url}/step", json={"action": {"content": "hi"}, "episode_id": "theirs"}))
        refused(422, "`action` is missing", c.post(f"{url}/step", json={"episode_id": "mine"}))
        refused(422, "unknown action field(s) 'contnt'", c.post(f"{url}/step", json={"action": {"contnt": "hi"}, "episode_id": "mine"}))
        refused(422, "`tool_calls` is a list", c.post(f"{url}/step", json={"action": {"tool_calls": "x"}, "episode_id": "mine"}))
        refused(422, "either `text`", c.post(f"{url}/step", json={"action": {"text": "a", "content": "b"}, "episode_id": "mine"}))
        refused(422, "did you mean", c.post(f"{url}/reset", json={"task": tid[:-1] + "9", "episode_id": "typo"}))
        refused(404, "no open episode 'typo'", c.get(f"{url}/state", params={"episode_id": "typo"}))  # a refused reset opens none
        refused(422, "`seed` is a non-negative integer", c.post(f"{url}/reset", json={"seed": -1}))
        refused(400, "not JSON", c.post(f"{url}/step", content=b"{", headers={"content-type": "application/json"}))
        refused(415, "Content-Type: application/json", c.post(f"{url}/step", content=b"{}", headers={"content-type": "text/plain"}))
        refused(413, "over the limit", c.post(f"{url}/step", content=b" " * (4 * 1024 * 1024 + 1), headers={"content-type": "application/json"}))
        refused(403, "Host 'evil.example'", c.get(f"{url}/health", headers={"host": "evil.example"}))
        refused(403, "Origin 'http://evil.example'", c.post(f"{url}/reset", json={}, headers={"origin": "http://evil.example"}))
        # none of that touched the episode: it still plays to gold, and the model's raw text is an action too
        agent = OracleAgent(b.task(tid))
        r = c.get(f"{url}/state", params={"episode_id": "mine"}).json()
        assert r["step_count"] == 0 and r["task_id"] == tid
        obs = c.post(f"{url}/reset", json={"task": tid, "episode_id": "mine"}).json()
        while not obs["done"]:
            o = obs["observation"]
            reply = agent.act_sync(o["messages"], o["tools"])
            text = (reply.content or "") + "".join(
                "\n<tool_call>" + json.dumps({"name": x.name, "arguments": x.arguments}) + "</tool_call>" for x in reply.tool_calls)
            obs = c.post(f"{url}/step", json={"action": {"text": text}, "episode_id": "mine"}).json()
        assert obs["reward"] == 1.0
        refused(409, "the episode is over (user_stop)", c.post(f"{url}/step", json={"action": {"content": "hi"}, "episode_id": "mine"}))
        c.post(f"{url}/close", json={"episode_id": "mine"})
        refused(404, "no open episode 'mine'", c.get(f"{url}/state", params={"episode_id": "mine"}))


def test_sessions_are_capped(built):
    path = built[0]
    with openenv_server(path, "--max-sessions", "2", "--tasks", "bookstore") as u, httpx.Client(timeout=30) as c:
        assert len(c.get(f"{u}/tasks").json()["tasks"]) == sum(t.env == "bookstore" for t in built[1].tasks)
        assert all(c.post(f"{u}/reset", json={}).status_code == 200 for _ in range(2))
        full = c.post(f"{u}/reset", json={})
        assert full.status_code == 503 and "server full: 2 sessions" in full.json()["detail"]
        with connect(u.replace("http", "ws", 1) + "/ws") as ws:
            msg = json.loads(ws.recv())
            assert msg["type"] == "error" and msg["data"]["code"] == "CAPACITY_REACHED"


def test_cli_errors_are_diagnostics_without_tracebacks(built, tmp_path):
    path = built[0]

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "forgec", "serve-openenv", *args], capture_output=True, text=True,
                              timeout=120, cwd=REPO)

    for args, code, fragment in [
        ((str(tmp_path / "nope"),), 1, "error[missing-build]"),
        ((str(path), "--tasks", "airline/nope"), 1, "error[unknown-task]: no task 'airline/nope'"),
        ((str(path), "--host", "0.0.0.0"), 2, "binds a loopback address only"),
        ((str(path), "--port", "70000"), 2, "--port must be between 0 and 65535"),
        ((str(path), "--max-sessions", "0"), 2, "--max-sessions must be at least 1"),
    ]:
        r = run(*args)
        assert r.returncode == code and fragment in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


@pytest.mark.skipif(not VENV, reason="FORGEC_VERIFIERS_VENV unset (run scripts/setup_verifiers_venv.sh: it holds openenv-core)")
def test_openenv_own_client_plays_gold_and_wrong_episodes(built, url, eval_ref):
    """openenv-core's GenericEnvClient (async, and its .sync() wrapper) over the WebSocket protocol."""
    path, b, _ = built
    gold = [next(t.id for t in b.tasks if t.env == env) for env in sorted(b.envs)] + [b.tasks[-1].id]
    wrong = [t.id for t in write_tasks(b)][2::7]
    ref = eval_agent(b, WrongAgent, wrong)

    def driver(mode: str, ids: list[str]) -> list[dict]:
        r = subprocess.run([str(Path(VENV) / "bin" / "python"), str(REPO / "tests" / "openenv_driver.py"), url, str(path), mode, *ids],
                           capture_output=True, text=True, timeout=600, cwd=REPO)
        assert r.returncode == 0, r.stderr[-4000:]
        return [json.loads(line) for line in r.stdout.splitlines()]

    for row in driver("oracle", gold) + driver("sync-oracle", gold[:2]):
        e = eval_ref[row["task_id"]]
        assert row["done"] and row["reward"] == e["reward"] == 1.0, row["task_id"]
        assert row["reward_breakdown"]["final_state_hash"] == e["final_state_hash"]
        assert said(row["messages"]) == said(e["messages"])
        st = row["state"]
        assert st["step_count"] == row["steps"] and st["done"] and st["reward"] == 1.0 and st["episode_id"]
    rows = driver("oracle", gold[:1])
    assert "the episode is over (user_stop)" in rows[0]["after_done"] and "EXECUTION_ERROR" in rows[0]["after_done"]
    for row in driver("wrong", wrong):
        assert row["reward"] == ref[row["task_id"]].reward < 1.0
        assert row["reward_breakdown"] == ref[row["task_id"]].reward_breakdown
