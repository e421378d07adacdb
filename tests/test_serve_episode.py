"""Episode mode of `forgec serve`: an episode driven over MCP scores what `forgec eval` scores.

For every task of a build of examples/ (`-n 12`), a harness drives the episode with the real `mcp` client,
over stdio and over streamable HTTP, on one server for all three envs: it starts the episode on a session id
it chose, gives its agent the messages and tools that come back, relays the agent's text to the simulated user
(`say` / `user_turn`), sends the agent's tool calls as MCP tools/call on that session and scores at the end.
The agent is the oracle, and a deliberately wrong variant of it (its last tool call gets a wrong argument);
`forgec eval` (runtime/eval.py's `evaluate`, the scripted user and rule judge it uses by default) plays the
same agents. Per task, the MCP score, reward breakdown, end reason, judge verdict and the whole transcript equal
eval's. Every server is started and stopped here (servekit).
"""

from __future__ import annotations

import copy
import json

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from servekit import AUTH, HttpSession, compile_examples, eval_request, http_server, stdio_client

from forgec.runtime import load
from forgec.runtime.agents import OracleAgent
from forgec.runtime.episode import AGENT_SYSTEM_PROMPT
from forgec.runtime.eval import evaluate
from forgec.runtime.judge import RuleJudge
from forgec.runtime.toolcalls import to_openai_message
from forgec.runtime.types import AgentReply, ToolCall
from forgec.runtime.users import ScriptedUser


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return compile_examples(tmp_path_factory.mktemp("episode") / "build", n=12)


@pytest.fixture(scope="module")
def build(build_dir):
    return load(build_dir)


def _wrong(v):
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return v + "_x"
    return "wrong"


class WrongOracle(OracleAgent):
    """The oracle with a wrong argument in its last tool call (the first argument: a string gets '_x', a number +1)."""

    def __init__(self, task):
        super().__init__(task)
        calls = [i for i, (kind, _) in enumerate(self._steps) if kind == "calls"]
        self._last = calls[-1] if calls else None

    def act_sync(self, messages, tools):
        r = super().act_sync(messages, tools)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if turn == self._last and r.tool_calls:
            c = r.tool_calls[-1]
            args = copy.deepcopy(c.arguments)
            if isinstance(args, dict) and args:
                k = next(iter(args))
                args[k] = _wrong(args[k])
            else:
                args = {"wrong_argument": 1}
            r = AgentReply(content=r.content, tool_calls=[*r.tool_calls[:-1], ToolCall(id=c.id, name=c.name, arguments=args)])
        return r


AGENTS = {"oracle": OracleAgent, "wrong": WrongOracle}


@pytest.fixture(scope="module")
def eval_episodes(build):
    """`forgec eval --agent oracle` (and the wrong oracle) on every task: eval's own episodes, per agent and task."""
    out = {}
    for name, agent in AGENTS.items():
        res = evaluate(build, agent, ScriptedUser, RuleJudge(), 1, concurrency=4)
        assert not res.interrupted and len(res.episodes) == len(build.tasks)
        out[name] = {e.task_id: e for e in res.episodes}
    assert all(e.reward == 1.0 for e in out["oracle"].values())
    return out


async def drive(agent, start, say, user_turn, call_tool, score) -> tuple[dict, dict, list]:
    """A harness's loop: the agent sees what the episode started with, its tool calls go over MCP, its text to the
    user goes through the episode channel; (first, score, the harness's own messages)."""
    first = await start()
    messages, tools = list(first["messages"]), first["tools"]
    done = first["done"]
    for _ in range(200):
        if done:
            break
        reply = agent.act_sync(messages, tools)
        messages.append(to_openai_message(reply.content, reply.tool_calls))
        if not reply.tool_calls:
            u = await user_turn(reply.content)
            if u["user"] is not None:
                messages.append({"role": "user", "content": u["user"]})
            done = u["done"]
            continue
        done = (await say(reply.content))["done"]
        for c in reply.tool_calls if not done else ():
            r = await call_tool(c.name, copy.deepcopy(c.arguments))
            messages.append({"role": "tool", "tool_call_id": c.id, "name": c.name, "content": r.content[0].text})
    else:
        raise AssertionError("the episode did not end")
    return first, await score(), messages


def _same_as_eval(build, task, first, sc, ep, harness_messages):
    """The MCP episode is eval's episode: first turn, reward, breakdown, end, judge, transcript."""
    rec = ep.to_json()
    tools = build.envs[task.env].TOOLS
    assert first["system_prompt"] == AGENT_SYSTEM_PROMPT and first["tools"] == json.loads(json.dumps(tools))
    assert first["messages"] == rec["messages"][:2] and [m["role"] for m in first["messages"]] == ["system", "user"]
    assert sc["reward"] == ep.reward, task.id
    assert {k: sc[k] for k in ep.reward_breakdown} == ep.reward_breakdown, task.id
    assert sc["end_reason"] == ep.end_reason and sc["done"], task.id
    assert sc["state_diff"] == rec["state_diff"] and sc["user_error"] == ep.user_error, task.id
    assert sc["judge"] == rec["judge"], task.id
    got = sc["episode"]
    assert got["messages"] == rec["messages"], task.id  # the whole transcript, tool call ids included
    for k in ("turns", "tool_calls", "tool_errors", "final_state_hash", "reward", "reward_breakdown", "end_reason", "error"):
        assert got[k] == rec[k], (task.id, k)
    assert [(e["name"], e["arguments"], e["ok"], e["result"], e["error"]) for e in got["tool_events"]] == \
           [(e["name"], e["arguments"], e["ok"], e["result"], e["error"]) for e in rec["tool_events"]], task.id
    # what the harness kept of the conversation is eval's, but for tool errors' text (MCP's isError text has no "Error: ")
    assert [m for m in harness_messages if m["role"] != "tool"] == [m for m in rec["messages"] if m["role"] != "tool"], task.id


def test_over_stdio_every_task_scores_what_forgec_eval_scores(build_dir, build, eval_episodes):
    """One stdio server for all three envs (no --env); each episode on its own session id, one after another."""
    async def go():
        out = {}
        async with stdio_client(build_dir) as c:
            for name, agent_cls in AGENTS.items():
                for i, t in enumerate(build.tasks):
                    sid = f"{name}-{i}"

                    async def start(t=t, sid=sid):
                        return await eval_request(c, "forgec/episode/start", task=t.id, session=sid)

                    async def say(text, sid=sid):
                        return await eval_request(c, "forgec/episode/say", session=sid, content=text)

                    async def user_turn(text, sid=sid):
                        return await eval_request(c, "forgec/episode/user_turn", session=sid, content=text)

                    async def score(sid=sid):
                        return await eval_request(c, "forgec/episode/score", session=sid)

                    out[name, t.id] = await drive(agent_cls(t), start, say, user_turn, c.call_tool, score)
                    if i == 0 and name == "oracle":  # the connection now plays an airline task: airline's own tool names
                        listed = [x.name for x in (await c.list_tools()).tools]
                        assert listed == [f["function"]["name"] for f in build.envs[t.env].TOOLS]
        return out

    out = anyio.run(go)
    for (name, tid), (first, sc, msgs) in out.items():
        _same_as_eval(build, build.task(tid), first, sc, eval_episodes[name][tid], msgs)
    wrong = [sc["reward"] for (name, _), (_, sc, _) in out.items() if name == "wrong"]
    assert sum(wrong) < len(wrong) / 2  # the wrong variant fails most tasks, over MCP as in eval


def test_over_http_every_task_scores_what_forgec_eval_scores(build_dir, build, eval_episodes):
    """One HTTP server for all three envs; each episode starts on POST /forgec/episode with the harness's session id and
    its agent connects to /mcp/<env>?session=ID (the real SDK client); four episodes at a time."""
    async def one(base, name, agent_cls, t, sid, out):
        async with httpx2.AsyncClient(base_url=base, headers=AUTH, timeout=60) as h:
            first = (await h.post("/forgec/episode", json={"task": t.id, "session": sid})).json()
            assert first["session"] == sid and first["mcp"] == f"/mcp/{t.env}?session={sid}"
            async with HttpSession(base + first["mcp"]) as mc:
                async def start():
                    return first

                async def say(text):
                    return (await h.post(f"/forgec/episode/{sid}/say", json={"content": text})).json()

                async def user_turn(text):
                    return (await h.post(f"/forgec/episode/{sid}/user_turn", json={"content": text})).json()

                async def score():
                    return (await h.post(f"/forgec/episode/{sid}/score", json={})).json()

                out[name, t.id] = await drive(agent_cls(t), start, say, user_turn, mc.client.call_tool, score)
                assert mc.session_id != sid  # the SDK chose its own MCP session id; the query attached it to ours
            listing = {s["session"]: s for s in (await h.get("/forgec/sessions")).json()}
            assert listing[sid]["episode"]["done"] and mc.session_id not in listing

    async def go(url):
        base = url.rsplit("/mcp", 1)[0]
        out = {}
        jobs = [(name, a, t, f"{name}-{i}") for name, a in AGENTS.items() for i, t in enumerate(build.tasks)]
        for k in range(0, len(jobs), 4):
            async with anyio.create_task_group() as tg:
                for job in jobs[k:k + 4]:
                    tg.start_soon(one, base, *job, out)
        return out

    with http_server(build_dir) as url:
        out = anyio.run(go, url)
    assert len(out) == 2 * len(build.tasks)
    for (name, tid), (first, sc, msgs) in out.items():
        _same_as_eval(build, build.task(tid), first, sc, eval_episodes[name][tid], msgs)


def test_limits_end_the_episode_as_in_eval_and_later_calls_are_refused(build_dir, build):
    """max_tool_calls=1 for a task whose oracle makes more calls: eval's end (max_tool_calls, reward 0); a call after the
    end is a tool error and leaves the state; max_turns=1 ends at the second turn; bad input is a request error."""
    t = next(x for x in build.tasks if len(x.gold_calls) >= 2 and not x.read_only)

    async def go():
        async with stdio_client(build_dir, "--env", t.env) as c:
            first = await eval_request(c, "forgec/episode/start", task=t.id, session="lim", max_tool_calls=1)
            g = t.gold_calls
            await eval_request(c, "forgec/episode/say", session="lim", content="")
            r1 = await c.call_tool(g[0].tool, copy.deepcopy(g[0].arguments))
            r2 = await c.call_tool(g[1].tool, copy.deepcopy(g[1].arguments))
            st = await eval_request(c, "forgec/state")
            r3 = await c.call_tool(g[1].tool, copy.deepcopy(g[1].arguments))
            st3 = await eval_request(c, "forgec/state")
            sc = await eval_request(c, "forgec/episode/score", session="lim")
            await eval_request(c, "forgec/episode/start", task=t.id, session="turns", max_turns=1)
            u1 = await eval_request(c, "forgec/episode/user_turn", session="turns", content="Hello, what can I do?")
            u2 = await eval_request(c, "forgec/episode/user_turn", session="turns", content="Anything else?")
            errors = []
            for method, params in [("forgec/episode/start", {"task": "airline/nope"}),
                                   ("forgec/episode/start", {"task": t.id, "session": "bad id with spaces"}),
                                   ("forgec/episode/start", {"task": t.id, "max_turns": 0}),
                                   ("forgec/episode/start", {}),
                                   ("forgec/episode/user_turn", {"session": "never-started", "content": "hi"}),
                                   ("forgec/episode/say", {"session": "turns"})]:
                with pytest.raises(MCPError) as e:
                    await eval_request(c, method, **params)
                errors.append(str(e.value))
            await eval_request(c, "forgec/reset", task=t.id)  # a reset ends the episode: the session is a plain one again
            with pytest.raises(MCPError, match="plays no episode"):
                await eval_request(c, "forgec/episode/score")
            return first, r1, r2, st, r3, st3, sc, u1, u2, errors

    first, r1, r2, st, r3, st3, sc, u1, u2, errors = anyio.run(go)
    assert not first["done"] and not r1.is_error
    assert r2.is_error and "budget" in r2.content[0].text
    assert r3.is_error and "episode ended (max_tool_calls)" in r3.content[0].text and st3["state_hash"] == st["state_hash"]
    assert sc["end_reason"] == "max_tool_calls" and sc["episode"]["tool_calls"] == 1 and sc["done"]
    assert sc["state_match"] == (st["state_hash"] == t.gold_state_hash) and sc["final_state_hash"] == st["state_hash"]
    assert not u1["done"] and u1["user"] and u2["done"] and u2["end_reason"] == "max_turns" and u2["user"] is None
    assert "no task 'airline/nope'" in errors[0] and "session id is 1-128 characters" in errors[1]
    assert "max_turns must be a positive integer" in errors[2] and "needs a task id" in errors[3]
    assert "no session 'never-started'" in errors[4] and "content" in errors[5]
    assert not any("Traceback" in e for e in errors)


def test_http_episode_routes_need_the_token_and_say_what_is_wrong(build_dir, build):
    t = next(x for x in build.tasks if x.env == "bookstore")

    async def go(url):
        base = url.rsplit("/mcp", 1)[0]
        async with httpx2.AsyncClient(base_url=base, timeout=60) as h:
            no_token = await h.post("/forgec/episode", json={"task": t.id, "session": "x1"})
            started = (await h.post("/forgec/episode", json={"task": t.id}, headers=AUTH)).json()
            sid = started["session"]
            bad = {
                "unknown task": await h.post("/forgec/episode", json={"task": "bookstore/nope"}, headers=AUTH),
                "no task": await h.post("/forgec/episode", json={"session": "x2"}, headers=AUTH),
                "bad id": await h.post("/forgec/episode", json={"task": t.id, "session": "a/b"}, headers=AUTH),
                "bad limit": await h.post("/forgec/episode", json={"task": t.id, "max_tool_calls": "many"}, headers=AUTH),
                "no content": await h.post(f"/forgec/episode/{sid}/user_turn", json={"text": "hi"}, headers=AUTH),
                "unknown session": await h.post("/forgec/episode/nope/score", json={}, headers=AUTH),
                "not an episode": None,
            }
            async with HttpSession(url) as plain:  # a plain MCP session: no episode on it
                await plain.client.list_tools()
                bad["not an episode"] = await h.post(f"/forgec/episode/{plain.session_id}/score", json={}, headers=AUTH)
            from mcp import Client

            attach_err = None
            async with Client(f"{base}/mcp/bookstore?session=made-up-id") as c:
                try:
                    await c.list_tools()
                except MCPError as e:
                    attach_err = str(e)
            transcript = (await h.get(f"/forgec/episode/{sid}", headers=AUTH)).json()
            listing = (await h.get("/forgec/sessions", headers=AUTH)).json()
        return no_token, started, bad, attach_err, transcript, listing

    with http_server(build_dir, "--env", "bookstore") as url:
        no_token, started, bad, attach_err, transcript, listing = anyio.run(go, url)
    assert no_token.status_code == 401
    assert len(started["session"]) == 32 and started["env"] == "bookstore" and started["mcp"].startswith("/mcp/bookstore?session=")
    want = {"unknown task": 404, "no task": 400, "bad id": 400, "bad limit": 400, "no content": 400, "unknown session": 404,
            "not an episode": 409}
    assert {k: r.status_code for k, r in bad.items()} == want
    assert "bookstore/nope" in bad["unknown task"].json()["error"] and "plays no episode" in bad["not an episode"].json()["error"]
    assert attach_err is not None and "no session 'made-up-id'" in attach_err  # attaching never makes a session
    assert "made-up-id" not in {s["session"] for s in listing}
    assert transcript["messages"] == started["messages"] and transcript["turns"] == 0


def test_stdio_one_pipe_drives_two_episodes_by_meta(build_dir, build):
    """`_meta: {"forgec/session": ID}` on a tools/call reaches that episode, whichever the connection started last."""
    t1, t2 = [x for x in build.tasks if x.env == "helpdesk" and x.gold_calls][:2]

    async def go():
        async with stdio_client(build_dir, "--env", "helpdesk") as c:
            await eval_request(c, "forgec/episode/start", task=t1.id, session="one")
            await eval_request(c, "forgec/episode/start", task=t2.id, session="two")  # the connection's current one
            g = t1.gold_calls[0]
            r = await c.call_tool(g.tool, copy.deepcopy(g.arguments), meta={"forgec/session": "one"})
            bad = None
            try:
                await c.call_tool(g.tool, copy.deepcopy(g.arguments), meta={"forgec/session": "three"})
            except MCPError as e:
                bad = str(e)
            one = await eval_request(c, "forgec/episode/score", session="one")
            two = await eval_request(c, "forgec/episode/score", session="two")
            return g, r, bad, one, two

    g, r, bad, one, two = anyio.run(go)
    assert not r.is_error and r.structured_content == json.loads(json.dumps(g.result if isinstance(g.result, dict) else {"result": g.result}))
    assert bad is not None and "no session 'three'" in bad
    assert one["tool_calls"] == 1 and one["episode"]["tool_events"][0]["name"] == g.tool and two["tool_calls"] == 0
