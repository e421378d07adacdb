"""One `forgec serve` for every env of a build (no --env), with the real `mcp` client.

HTTP: each env is its own endpoint, /mcp/<env> (one transport, one session table, the same security); sessions
of two envs and two sessions of one env are isolated; a session stays in its env; an unknown env is a 404 that
names the served ones. stdio: tools are named <env>__<tool> (each env its own state) until the harness plays a
task, then that env's tools under their own names, announced with notifications/tools/list_changed (which the
Python SDK's tool cache obeys). Every server here is started and stopped by the test (servekit).
"""

from __future__ import annotations

import copy
import json

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from servekit import AUTH, HttpSession, compile_examples, eval_request, http_server, stdio_client

from forgec.runtime import load
from forgec.runtime.agents import oracle_final_text


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return compile_examples(tmp_path_factory.mktemp("multi") / "build", n=4)


@pytest.fixture(scope="module")
def build(build_dir):
    return load(build_dir)


def _write_task(b, env: str):
    return next(t for t in b.tasks if t.env == env and not t.read_only and t.gold_diff)


def _names(b, env: str) -> list[str]:
    return [f["function"]["name"] for f in b.envs[env].TOOLS]


def _structured(g):
    return json.loads(json.dumps(g.result if isinstance(g.result, dict) else {"result": g.result}))


def test_http_one_endpoint_per_env_sessions_isolated(build_dir, build):
    ta, th = _write_task(build, "airline"), _write_task(build, "helpdesk")
    tb = next(t for t in build.tasks if t.env == "bookstore")

    async def agent(url, calls):
        async with HttpSession(url) as s:
            names = [x.name for x in (await s.client.list_tools()).tools]
            results = [await s.client.call_tool(g.tool, copy.deepcopy(g.arguments)) for g in calls]
            return s.session_id, names, results

    async def go(url):
        out = {}

        async def one(key, u, calls):
            out[key] = await agent(u, calls)

        async with anyio.create_task_group() as tg:  # three sessions at once: airline (gold), helpdesk (gold), airline (none)
            tg.start_soon(one, "a", f"{url}/airline?task={ta.id}", ta.gold_calls)
            tg.start_soon(one, "h", f"{url}/helpdesk?task={th.id}", th.gold_calls)
            tg.start_soon(one, "c", f"{url}/airline?task={ta.id}", [])
        base = url.rsplit("/mcp", 1)[0]
        async with httpx2.AsyncClient(base_url=base, headers=AUTH, timeout=60) as h:
            states = {k: (await h.get(f"/forgec/sessions/{sid}/state")).json() for k, (sid, _, _) in out.items()}
            listing = (await h.get("/forgec/sessions")).json()
            tasks = (await h.get("/forgec/tasks")).json()
            helpdesk_tasks = (await h.get("/forgec/tasks?env=helpdesk")).json()
            no_env_tasks = await h.get("/forgec/tasks?env=nope")
            async with HttpSession(f"{url}/airline") as s:  # a session stays in its env: its id on /mcp/helpdesk is refused
                await s.client.list_tools()
                raw = await h.post("/mcp/helpdesk", json={"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}},
                                   headers={"mcp-session-id": s.session_id, "accept": "application/json, text/event-stream",
                                            "mcp-protocol-version": s.client.session.protocol_version})
            reset_other_env = await h.post(f"/forgec/sessions/{out['a'][0]}/reset", json={"task": th.id})
        async with HttpSession(f"{url}?task={tb.id}") as s:  # /mcp with a task names its env
            by_task = [x.name for x in (await s.client.list_tools()).tools]
        async with Client(url) as c:  # /mcp with nothing to name an env
            with pytest.raises(MCPError, match="serves 3 environments.*connect to /mcp/<env>"):
                await c.list_tools()
        return out, states, listing, tasks, helpdesk_tasks, no_env_tasks, raw, reset_other_env, by_task

    seen: list[str] = []
    with http_server(build_dir, seen=seen) as url:
        out, states, listing, tasks, helpdesk_tasks, no_env_tasks, raw, reset_other_env, by_task = anyio.run(go, url)
    assert "3 environments" in "".join(seen) and "/mcp/<env>" in "".join(seen)
    assert out["a"][1] == out["c"][1] == _names(build, "airline") and out["h"][1] == _names(build, "helpdesk")
    for k, t in (("a", ta), ("h", th)):
        assert [r.structured_content for r in out[k][2]] == [_structured(g) for g in t.gold_calls]
    assert states["a"]["state_hash"] == ta.gold_state_hash and states["h"]["state_hash"] == th.gold_state_hash
    assert states["c"]["state_hash"] == ta.initial_state_hash and states["c"]["diff"] == []  # a's writes are not c's
    assert {s["session"]: s["env"] for s in listing} == {out["a"][0]: "airline", out["h"][0]: "helpdesk", out["c"][0]: "airline"}
    assert raw.status_code == 200
    assert [x["id"] for x in tasks] == [t.id for t in build.tasks] and {x["env"] for x in helpdesk_tasks} == {"helpdesk"}
    assert no_env_tasks.status_code == 404 and "no environment 'nope'" in no_env_tasks.json()["error"]
    assert "wrong-env" in raw.text and "connect to /mcp/airline" in raw.text and '"tools"' not in raw.text
    assert reset_other_env.status_code == 404 and "belongs to environment 'helpdesk'" in reset_other_env.json()["error"]
    assert by_task == _names(build, "bookstore")


def test_http_unknown_env_is_a_clear_error_behind_the_same_host_checks(build_dir):
    async def sdk(url):
        err = None
        try:
            async with Client(f"{url}/airlines") as c:
                await c.list_tools()
        except Exception as e:  # noqa: BLE001 - the SDK raises (an HTTP error inside a group): the test reads it below
            err = e
        return err

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    hdr = {"accept": "application/json, text/event-stream"}
    with http_server(build_dir) as url:
        err = anyio.run(sdk, url)
        with httpx2.Client(timeout=30) as h:
            r = h.post(f"{url}/airlines", json=init, headers=hdr)
            foreign = h.post(f"{url}/airlines", json=init, headers={**hdr, "Host": "evil.example"})
            foreign_known = h.post(f"{url}/airline", json=init, headers={**hdr, "Host": "evil.example"})
            ok = h.post(f"{url}/airline", json=init, headers=hdr)
    assert err is not None
    assert r.status_code == 404
    msg = r.json()["error"]["message"]
    assert "no environment 'airlines'" in msg and "airline, bookstore, helpdesk" in msg and "unknown-env" in msg
    assert foreign.status_code == foreign_known.status_code == 421 and "airline" not in foreign.text
    assert ok.status_code == 200 and ok.json()["result"]["serverInfo"]["name"] == "forgec"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio_prefixed_tools_then_one_envs_own_names_once_a_task_is_played(build_dir, build, mode):
    """`mode`: the SDK's default (it negotiates the 2026-07-28 protocol over stdio: the change comes on a
    subscriptions/listen stream) and the initialize handshake (a notifications/tools/list_changed message)."""
    ta, th = _write_task(build, "airline"), _write_task(build, "helpdesk")
    changes: list[str] = []

    async def on_message(msg) -> None:
        method = getattr(getattr(msg, "root", msg), "method", None)
        if method == "notifications/tools/list_changed":
            changes.append(method)

    async def listen(c, *, task_status=anyio.TASK_STATUS_IGNORED):
        async with c.listen(tools_list_changed=True) as sub:
            task_status.started()
            async for event in sub:
                changes.append(type(event).__name__)

    async def wait_for(n):
        with anyio.fail_after(10):
            while len(changes) < n:
                await anyio.sleep(0.02)

    async def body(c):
        caps = c.server_capabilities
        listed = [x.name for x in (await c.list_tools()).tools]
        prefixed = [await c.call_tool(f"airline__{g.tool}", copy.deepcopy(g.arguments)) for g in ta.gold_calls]
        prefixed += [await c.call_tool(f"helpdesk__{g.tool}", copy.deepcopy(g.arguments)) for g in th.gold_calls]
        bare = await c.call_tool(ta.gold_calls[0].tool, copy.deepcopy(ta.gold_calls[0].arguments))
        unknown_env = await c.call_tool("airlines__get_user_details", {})
        with pytest.raises(MCPError, match="plays no task yet"):
            await eval_request(c, "forgec/state")
        with pytest.raises(MCPError, match="name the task"):
            await eval_request(c, "forgec/reset")
        reset = await eval_request(c, "forgec/reset", task=ta.id)  # a fresh session: the prefixed calls were elsewhere
        await wait_for(1)
        after = [x.name for x in (await c.list_tools()).tools]
        own = [await c.call_tool(g.tool, copy.deepcopy(g.arguments)) for g in ta.gold_calls]
        other = await c.call_tool(f"helpdesk__{th.gold_calls[0].tool}", copy.deepcopy(th.gold_calls[0].arguments))
        same_env_prefixed = await c.call_tool("airline__no_such_tool", {})
        state = await eval_request(c, "forgec/state")
        score = await eval_request(c, "forgec/score", said=oracle_final_text(ta))
        again = await eval_request(c, "forgec/reset", task=ta.id)  # the same env: nothing changed, nothing said
        first = await eval_request(c, "forgec/episode/start", task=th.id, session="hd-1")
        await wait_for(2)
        after_episode = [x.name for x in (await c.list_tools()).tools]
        tasks = (await eval_request(c, "forgec/tasks", env="bookstore"))["tasks"]
        return (caps, listed, prefixed, bare, unknown_env, reset, after, own, other, same_env_prefixed, state, score, again,
                first, after_episode, tasks)

    async def go():
        if mode == "legacy":
            async with stdio_client(build_dir, mode="legacy", message_handler=on_message) as c:
                return await body(c)
        async with stdio_client(build_dir) as c:
            async with anyio.create_task_group() as tg:
                await tg.start(listen, c)
                out = await body(c)
                tg.cancel_scope.cancel()
            return out

    (caps, listed, prefixed, bare, unknown_env, reset, after, own, other, same_env_prefixed, state, score, again, first,
     after_episode, tasks) = anyio.run(go)
    envs = sorted(build.envs)
    assert listed == [f"{e}__{n}" for e in envs for n in _names(build, e)]
    assert caps.tools.list_changed
    assert [r.structured_content for r in prefixed] == [_structured(g) for g in (*ta.gold_calls, *th.gold_calls)]
    assert bare.is_error and "named <env>__<tool>" in bare.content[0].text
    assert unknown_env.is_error and "unknown tool 'airlines__get_user_details'" in unknown_env.content[0].text
    assert reset["state_hash"] == ta.initial_state_hash and reset["diff"] == []
    assert len(changes) == 2, changes  # once for airline, once for helpdesk; not for the second airline reset
    assert after == _names(build, "airline") and after_episode == _names(build, "helpdesk")
    assert not any(r.is_error for r in own) and state["state_hash"] == ta.gold_state_hash and score["reward"] == 1.0
    assert again["state_hash"] == ta.initial_state_hash
    assert other.is_error and "now plays a task of airline" in other.content[0].text
    assert same_env_prefixed.is_error and "unknown tool 'no_such_tool'" in same_env_prefixed.content[0].text
    assert first["env"] == "helpdesk" and first["session"] == "hd-1" and first["messages"][1]["role"] == "user"
    assert [t["id"] for t in tasks] == [t.id for t in build.tasks if t.env == "bookstore"]
