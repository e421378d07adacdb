"""`forgec serve` with the real `mcp` client, over stdio and streamable HTTP, on a build of examples/.

Checked against second sources: the tool list against the example docs themselves
(OpenAI airline.json, MCP tools/list helpdesk.json) and against the build's
TOOLS; tool results against the gold results the compiler recorded by running
the blueprints; state hashes against the tasks' gold hashes; error messages
against `Env.step` called directly; scores against `forgec eval`'s reward.
"""

from __future__ import annotations

import copy
import json

import anyio
import jsonschema
import pytest
from servekit import AUTH, EXAMPLES, REPO, HttpSession, compile_examples, eval_request, http_server, stdio_client
from typer.testing import CliRunner

from forgec.cli import app
from forgec.runtime import load
from forgec.runtime.agents import oracle_final_text
from forgec.runtime.reward import compute_reward


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return compile_examples(tmp_path_factory.mktemp("serve") / "build")


@pytest.fixture(scope="module")
def build(build_dir):
    return load(build_dir)


def _write_task(b, env: str):
    """A task of `env` whose gold run changes the state (so isolation and reset are visible)."""
    return next(t for t in b.tasks if t.env == env and not t.read_only and t.gold_diff)


def _doc_tools(env: str) -> list[dict]:
    """(name, description, input schema, title, annotations, output schema) from the example doc file itself."""
    if env == "airline":
        return [{"name": t["function"]["name"], "description": t["function"]["description"], "schema": t["function"]["parameters"],
                 "title": None, "annotations": None, "output": t["function"].get("returns")}
                for t in json.loads((EXAMPLES / "airline.json").read_text())]
    return [{"name": t["name"], "description": t["description"], "schema": t["inputSchema"], "title": t.get("title"),
             "annotations": t.get("annotations"), "output": t.get("outputSchema")}
            for t in json.loads((EXAMPLES / "helpdesk.json").read_text())["tools"]]


def _same_contract(doc: dict, served: dict) -> None:
    """The served input schema states what the doc's does: the same properties, types, enums and required ones."""
    dp, sp = doc.get("properties") or {}, served.get("properties") or {}
    assert list(dp) == list(sp)
    assert sorted(doc.get("required") or []) == sorted(served.get("required") or [])
    for k in dp:
        assert sp[k].get("type") == dp[k].get("type") and sp[k].get("enum") == dp[k].get("enum"), k


def run(coro_fn, *args):
    return anyio.run(coro_fn, *args)


# --------------------------------------------------------------------------- stdio


@pytest.mark.parametrize("env", ["airline", "helpdesk"])
def test_stdio_tools_list_is_the_builds_tools_with_the_docs_schemas(build_dir, build, env):
    async def go():
        async with stdio_client(build_dir, "--env", env) as c:
            return (await c.list_tools()).tools

    tools = run(go)
    built = [t["function"] for t in build.envs[env].TOOLS]
    assert [t.name for t in tools] == [f["name"] for f in built] == [d["name"] for d in _doc_tools(env)]
    results: dict[str, list] = {}
    for task in build.tasks:
        for g in task.gold_calls if task.env == env else ():
            results.setdefault(g.tool, []).append(g.result)
    served_outputs = 0
    for t, f, d in zip(tools, built, _doc_tools(env)):
        assert t.description == f["description"] == d["description"]
        assert t.input_schema == f["parameters"]  # exactly what the env validates arguments against
        _same_contract(d["schema"], t.input_schema)
        assert t.title == d["title"]
        if d["annotations"]:  # the doc's own hints, verbatim
            assert t.annotations.model_dump(by_alias=True, exclude_none=True) == d["annotations"]
        else:
            assert t.annotations.read_only_hint == (build.envs[env].TOOL_KINDS[t.name] in ("read", "search"))
        if t.output_schema is not None:  # served only when every recorded result keeps the doc's schema
            served_outputs += 1
            want = d["output"] if d["output"].get("type") == "object" else {"type": "object", "properties": {"result": d["output"]},
                                                                             "required": ["result"]}
            assert t.output_schema == want and results[t.name]
            for r in results[t.name]:
                jsonschema.validate(r if isinstance(r, dict) else {"result": r}, want)
        elif d["output"] and results.get(t.name):
            wrapped = [r if isinstance(r, dict) else {"result": r} for r in results[t.name]]
            out = d["output"] if d["output"].get("type") == "object" else {"type": "object", "properties": {"result": d["output"]}}
            assert not all(jsonschema.Draft202012Validator(out).is_valid(r) for r in wrapped), t.name
    assert served_outputs >= 2
    if env == "helpdesk":  # the doc wraps these results in an object or promises a field the simulator does not return
        assert {t.name for t in tools if t.output_schema is None} >= {n for n in ("list_agents", "search_tickets", "delete_comment")
                                                                       if n in results}


def test_stdio_oracle_gold_calls_reach_every_gold_state_and_score_one(build_dir, build):
    """Every airline task, one server: reset through the evaluation channel, gold calls through tools/call."""
    tasks = [t for t in build.tasks if t.env == "airline"]
    assert len(tasks) >= 5

    async def go():
        out = []
        async with stdio_client(build_dir, "--env", "airline") as c:
            for t in tasks:
                st = await eval_request(c, "forgec/reset", task=t.id)
                assert st["state_hash"] == t.initial_state_hash and st["diff"] == []
                for g in t.gold_calls:
                    r = await c.call_tool(g.tool, copy.deepcopy(g.arguments))
                    assert not r.is_error, (t.id, g.tool, r.content)
                    want = g.result if isinstance(g.result, dict) else {"result": g.result}
                    assert r.structured_content == json.loads(json.dumps(want)), (t.id, g.tool)
                    assert json.loads(r.content[0].text) == json.loads(json.dumps(g.result))
                st = await eval_request(c, "forgec/state")
                sc = await eval_request(c, "forgec/score", said=oracle_final_text(t))
                out.append((t, st, sc))
        return out

    for t, st, sc in run(go):
        assert st["state_hash"] == t.gold_state_hash, t.id
        assert [d["path"] for d in st["diff"]] == [d.path for d in t.gold_diff], t.id
        ref = compute_reward(t.gold_state_hash, t.gold_state_hash, t.tell, oracle_final_text(t)).to_json()
        assert sc["reward"] == 1.0 and {k: sc[k] for k in ref} == ref, t.id


def test_stdio_bad_calls_are_tool_errors_with_the_envs_message_and_leave_the_state(build_dir, build):
    t = _write_task(build, "airline")
    g = t.gold_calls[0]
    env = build.new_env("airline", t)
    bad = [
        (g.tool, {**g.arguments, "bogus_argument": 1}),
        (g.tool, {}),
        ("get_user_details", {"user_id": "no_such_user_0"}),
        ("no_such_tool", {}),
    ]
    direct = []
    for name, args in bad[:3]:
        r = env.step(name, copy.deepcopy(args))
        assert isinstance(r, Exception)
        direct.append(getattr(r, "message", None) or str(r))

    async def go():
        async with stdio_client(build_dir, "--task", t.id) as c:
            before = await eval_request(c, "forgec/state")
            results = [await c.call_tool(n, a) for n, a in bad]
            after = await eval_request(c, "forgec/state")
            ok = await c.call_tool(g.tool, copy.deepcopy(g.arguments))
            return before, results, after, ok

    before, results, after, ok = run(go)
    assert all(r.is_error for r in results)
    assert [r.content[0].text for r in results[:3]] == direct
    assert "unknown tool 'no_such_tool'" in results[3].content[0].text
    assert before["state_hash"] == after["state_hash"] == t.initial_state_hash and after["diff"] == []
    assert after["tool_errors"] == 4 and not ok.is_error  # the session still works after the errors


def test_stdio_score_without_a_task_and_unknown_task_are_request_errors(build_dir):
    from mcp.shared.exceptions import MCPError

    async def go():
        async with stdio_client(build_dir, "--env", "helpdesk") as c:
            with pytest.raises(MCPError, match="no task"):
                await eval_request(c, "forgec/score", said="")
            with pytest.raises(MCPError, match="no task 'helpdesk/nope'"):
                await eval_request(c, "forgec/reset", task="helpdesk/nope")
            with pytest.raises(MCPError, match="belongs to environment 'airline'"):
                await eval_request(c, "forgec/reset", task=next(t for t in load(build_dir).tasks if t.env == "airline").id)

    run(go)


# --------------------------------------------------------------------------- HTTP


def test_http_concurrent_sessions_are_isolated_and_scored_like_eval(build_dir, build):
    t = _write_task(build, "airline")
    import httpx2

    async def agent(url, calls, results):
        async with HttpSession(url) as s:
            for g in calls:
                results.append(await s.client.call_tool(g.tool, copy.deepcopy(g.arguments)))
            tools = (await s.client.list_tools()).tools  # a session that only lists tools has its env too
            return s.session_id, tools

    async def go(url):
        ra, rb = [], []
        out = {}

        async def one(name, calls, res):
            out[name] = await agent(url, calls, res)

        reads = [g for g in t.gold_calls if g.tool.startswith(("get_", "list_", "search_"))][:1] or t.gold_calls[:0]
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "a", t.gold_calls, ra)
            tg.start_soon(one, "b", reads, rb)
        (sa, tools_a), (sb, tools_b) = out["a"], out["b"]
        async with httpx2.AsyncClient(base_url=url.rsplit("/mcp", 1)[0], headers=AUTH) as h:
            listing = (await h.get("/forgec/sessions")).json()
            st_a = (await h.get(f"/forgec/sessions/{sa}/state")).json()
            st_b = (await h.get(f"/forgec/sessions/{sb}/state")).json()
            msgs = [{"role": "user", "content": t.instruction}, {"role": "assistant", "content": oracle_final_text(t)}]
            sc_a = (await h.post(f"/forgec/sessions/{sa}/score", json={"messages": msgs})).json()
            sc_b = (await h.post(f"/forgec/sessions/{sb}/score", json={"said": oracle_final_text(t)})).json()
            reset = (await h.post(f"/forgec/sessions/{sa}/reset", json={"task": t.id})).json()
        return sa, sb, tools_a, tools_b, listing, st_a, st_b, sc_a, sc_b, reset, ra, rb

    with http_server(build_dir, "--task", t.id) as url:
        sa, sb, tools_a, tools_b, listing, st_a, st_b, sc_a, sc_b, reset, ra, rb = run(go, url)
    assert sa and sb and sa != sb
    built = [(f["function"]["name"], f["function"]["description"], f["function"]["parameters"]) for f in build.envs["airline"].TOOLS]
    assert [(x.name, x.description, x.input_schema) for x in tools_a] == [(x.name, x.description, x.input_schema) for x in tools_b] == built
    assert {s["session"] for s in listing} == {sa, sb} and all(s["task"] == t.id for s in listing)
    assert not any(r.is_error for r in ra + rb)
    assert st_a["state_hash"] == t.gold_state_hash and st_a["diff"]
    assert st_b["state_hash"] == t.initial_state_hash and st_b["diff"] == []  # A's writes are not B's
    assert sc_a["reward"] == 1.0 and sc_a["state_match"] and sc_a["state_diff"] is None
    assert sc_b["reward"] == 0.0 and not sc_b["state_match"] and sc_b["state_diff"]["missing"]
    assert reset["state_hash"] == t.initial_state_hash and reset["calls"] == 0


def test_http_bad_call_and_evaluation_channel_errors(build_dir, build):
    t = _write_task(build, "helpdesk")
    import httpx2

    async def go(url):
        async with HttpSession(url) as s:
            r = await s.client.call_tool(t.gold_calls[0].tool, {"definitely_not_a_param": 1})
            sid = s.session_id
        base = url.rsplit("/mcp", 1)[0]
        async with httpx2.AsyncClient(base_url=base) as h:
            auth = {"Authorization": "Bearer sesame-sesame-sesame"}
            no_auth = (await h.get(f"/forgec/sessions/{sid}/state")).status_code
            st = (await h.get(f"/forgec/sessions/{sid}/state?full=1", headers=auth)).json()
            missing = await h.get("/forgec/sessions/nope/state", headers=auth)
            bad_task = await h.post(f"/forgec/sessions/{sid}/reset", json={"task": "helpdesk/nope"}, headers=auth)
            bad_body = await h.post(f"/forgec/sessions/{sid}/score", content=b"[1,", headers=auth)
            tasks = (await h.get("/forgec/tasks", headers=auth)).json()
            dropped = (await h.delete(f"/forgec/sessions/{sid}", headers=auth)).json()
        return r, no_auth, st, missing, bad_task, bad_body, tasks, dropped

    with http_server(build_dir, "--task", t.id, "--eval-token", "sesame-sesame-sesame") as url:
        r, no_auth, st, missing, bad_task, bad_body, tasks, dropped = run(go, url)
    assert r.is_error and "definitely_not_a_param" in r.content[0].text
    assert no_auth == 401
    assert st["state_hash"] == t.initial_state_hash and st["tool_errors"] == 1
    assert st["state"] == build.initial_state(t)
    assert missing.status_code == 404 and bad_task.status_code == 404 and "helpdesk/nope" in bad_task.json()["error"]
    assert bad_body.status_code == 400
    assert [x["id"] for x in tasks] == [x.id for x in build.tasks if x.env == "helpdesk"]
    assert dropped == {"dropped": True}


def test_http_task_from_the_url(build_dir, build):
    t = _write_task(build, "bookstore")

    async def go(url):
        async with HttpSession(f"{url}?task={t.id}") as s:
            for g in t.gold_calls:
                assert not (await s.client.call_tool(g.tool, copy.deepcopy(g.arguments))).is_error
            import httpx2

            async with httpx2.AsyncClient(base_url=s.base, headers=AUTH) as h:
                return (await h.get(f"/forgec/sessions/{s.session_id}/state")).json()

    async def stateless(url):
        from mcp import Client
        from mcp.shared.exceptions import MCPError

        async with Client(url, mode="2026-07-28") as c:  # the stateless protocol era: no session to keep an env in
            n = len((await c.list_tools()).tools)
            with pytest.raises(MCPError, match="one environment per MCP session"):
                await c.call_tool(t.gold_calls[0].tool, t.gold_calls[0].arguments)
            return n

    with http_server(build_dir, "--env", "bookstore") as url:
        st = run(go, url)
        n = run(stateless, url)
    assert st["task"] == t.id and st["state_hash"] == t.gold_state_hash
    assert n == len(build.envs["bookstore"].TOOLS)


# --------------------------------------------------------------------------- CLI errors


@pytest.mark.parametrize("args,code,fragment", [
    (["--env", "airlines"], 1, "error[unknown-env]"),
    (["--task", "airline/nope"], 1, "error[unknown-task]"),
    (["--env", "helpdesk", "--task", "AIRLINE"], 1, "error[unknown-task]"),
    (["--user", "llm"], 2, "--user llm needs --user-base-url"),  # (no --env on a multi-env build serves them all: test_serve_multi.py)
    (["--judge", "gpt"], 2, "unknown --judge 'gpt'"),
    (["--env", "airline", "--port", "70000"], 2, "--port must be between"),
    (["--env", "airline", "--docs", "/nonexistent/tools.json"], 2, "--docs: no such file"),
])
def test_cli_bad_input_is_a_diagnostic(build_dir, build, args, code, fragment):
    if "AIRLINE" in args:
        args = [a if a != "AIRLINE" else next(t.id for t in build.tasks if t.env == "airline") for a in args]
        fragment = "belongs to environment 'airline'"
    r = CliRunner().invoke(app, ["serve", str(build_dir), *args])
    assert r.exit_code == code, r.output
    assert fragment in r.output and "Traceback" not in r.output


def test_cli_missing_build(tmp_path):
    r = CliRunner().invoke(app, ["serve", str(tmp_path / "nope"), "--env", "x"])
    assert r.exit_code == 1 and "error[missing-build]" in r.output and "Traceback" not in r.output
    assert REPO.is_dir()
