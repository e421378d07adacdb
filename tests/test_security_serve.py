"""`forgec serve` against a hostile agent and a hostile local client (issue 25, docs/security.md "forgec serve").

The agent under training talks MCP; its code may also make HTTP requests on this machine. It must get
nothing but `/mcp` tools: every evaluation route without the token, with a wrong one, through a foreign
Host (DNS rebinding) or a cross-origin browser post is refused, and nothing of the state or the gold
answer comes back. Sessions are bounded (caps refuse, never evict; an unknown or ended session is an
error, never a fresh one), bodies are bounded, and each session's python tools run in their own
sandbox worker. Every server here is started by the test and stopped by it (servekit.http_server).
"""

from __future__ import annotations

import gc
import json
import os
import select
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import anyio
import httpx2
import pytest
from servekit import AUTH, REPO, TOKEN, HttpSession, compile_examples, http_server

from forgec.runtime import load

ROUTES = [("GET", "/forgec/tasks"), ("GET", "/forgec/sessions"), ("POST", "/forgec/sessions/{sid}/reset"),
          ("GET", "/forgec/sessions/{sid}/state"), ("GET", "/forgec/sessions/{sid}/state?full=1"),
          ("POST", "/forgec/sessions/{sid}/score"), ("DELETE", "/forgec/sessions/{sid}"),
          ("POST", "/forgec/episode"), ("POST", "/forgec/episode/{sid}/say"), ("POST", "/forgec/episode/{sid}/user_turn"),
          ("POST", "/forgec/episode/{sid}/score"), ("GET", "/forgec/episode/{sid}")]


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return compile_examples(tmp_path_factory.mktemp("secserve") / "build", n=4)


@pytest.fixture(scope="module")
def build(build_dir):
    return load(build_dir)


def _task(build, env="airline"):
    return next(t for t in build.tasks if t.env == env and not t.read_only and t.gold_diff)


def _secrets_of(t) -> list[str]:
    """Strings that would betray the score or the gold answer if a response carried them."""
    return [t.gold_state_hash, t.initial_state_hash, '"state_hash"', '"reward"', '"tells_told"']


def _agent_session(url: str, t) -> str:
    async def go():
        async with HttpSession(url) as s:
            await s.client.call_tool(t.gold_calls[0].tool, dict(t.gold_calls[0].arguments))
            return s.session_id
    return anyio.run(go)


def test_a_hostile_agent_without_the_token_gets_nothing_from_the_evaluation_channel(build_dir, build):
    """No token configured: the server makes one, prints it once on stderr (the harness's copy), and every route refuses
    a client without it (no header, a wrong token, the token in the query string, a foreign Host with the right token,
    a cross-origin text/plain post, a CORS preflight). Only the printed token opens the channel."""
    t = _task(build)
    seen: list[str] = []
    with http_server(build_dir, "--task", t.id, token=None, seen=seen) as url:
        printed = [ln.split("evaluation token: ", 1)[1].strip() for ln in seen if "evaluation token: " in ln]
        assert len(printed) == 1 and len(printed[0]) >= 32
        sid = _agent_session(url, t)
        base = url.rsplit("/mcp", 1)[0]
        host = base.split("//", 1)[1]
        tries = []
        with httpx2.Client(base_url=base, timeout=30) as h:
            for method, route in ROUTES:
                path = route.format(sid=sid)
                body = json.dumps({"said": "x", "task": t.id})
                json_h = {"content-type": "application/json"}
                for headers, extra in [
                    ({}, ""),
                    ({"Authorization": "Bearer wrong-token-wrong-token"}, ""),
                    ({"Authorization": f"Bearer {printed[0][:-1]}"}, ""),  # one character short
                    ({}, ("&" if "?" in path else "?") + f"token={printed[0]}"),
                    ({"Authorization": f"Bearer {printed[0]}", "Host": "evil.example:80"}, ""),  # DNS rebinding
                    ({"Authorization": f"Bearer {printed[0]}", "Origin": "http://evil.example"}, ""),
                ]:
                    r = h.request(method, path + extra, content=body if method == "POST" else None, headers={**json_h, **headers})
                    tries.append((method, path, headers.get("Host") or headers.get("Origin") or extra or headers.get("Authorization", ""), r))
                if method == "POST":  # a browser's "simple" cross-origin post: text/plain, no preflight
                    r = h.post(path, content=body, headers={"content-type": "text/plain", "Origin": "http://evil.example",
                                                             "Authorization": f"Bearer {printed[0]}"})
                    tries.append((method, path, "text/plain", r))
                r = h.options(path, headers={"Origin": "http://evil.example", "Access-Control-Request-Method": method})
                tries.append(("OPTIONS", path, "preflight", r))
            ok = h.get(f"/forgec/sessions/{sid}/state", headers={"Authorization": f"Bearer {printed[0]}"})
    for method, path, how, r in tries:
        assert r.status_code in (400, 401, 403, 405, 421), (method, path, how, r.status_code, r.text[:200])
        assert not any(s in r.text for s in _secrets_of(t)), (method, path, how)
        assert not any(k.lower().startswith("access-control-allow") for k in r.headers), (method, path, how)
    assert {r.status_code for *_, r in tries} >= {401, 421, 403}
    assert ok.status_code == 200 and ok.json()["initial_state_hash"] == t.initial_state_hash  # the harness's token works


def test_the_agents_mcp_surface_is_the_envs_tools_only(build_dir, build):
    t = _task(build)

    async def go(url):
        async with HttpSession(url) as s:
            names = [x.name for x in (await s.client.list_tools()).tools]
            probes = [await s.client.call_tool(n, {"task": t.id, "said": "x"}) for n in
                      ("forgec/score", "forgec/state", "score", "state", "__state__", "gold")]
            return names, probes

    with http_server(build_dir, "--task", t.id) as url:
        names, probes = anyio.run(go, url)
    assert names == [f["function"]["name"] for f in build.envs["airline"].TOOLS]
    for r in probes:
        assert r.is_error and "unknown tool" in r.content[0].text
        assert not any(s in r.content[0].text for s in _secrets_of(t))


def test_an_agent_attached_to_an_episode_sees_its_envs_tools_only_and_cannot_attach_elsewhere(build_dir, build):
    """Episode mode: the harness starts the episode (token); the agent's MCP client attached with ?session=ID gets the
    env's tools and nothing of the episode channel; a made-up id, or an id on another env's path, is an error that
    makes no session; a Forgec-Session header attaches as the query does."""
    t = _task(build)

    async def go(url):
        base = url.rsplit("/mcp", 1)[0]
        async with httpx2.AsyncClient(base_url=base, headers=AUTH, timeout=60) as h:
            first = (await h.post("/forgec/episode", json={"task": t.id, "session": "ep-sec-1"})).json()
            async with HttpSession(base + first["mcp"]) as s:
                names = [x.name for x in (await s.client.list_tools()).tools]
                probes = [await s.client.call_tool(n, {"task": t.id, "session": "ep-sec-1"}) for n in
                          ("forgec/episode/score", "forgec/episode/user_turn", "score", "user_turn")]
            errors = []
            for u in (f"{base}/mcp?session=ep-sec-2", f"{base}/mcp/helpdesk?session=ep-sec-1"):
                async with HttpSession(u) as s:
                    try:
                        await s.client.list_tools()
                        errors.append(None)
                    except Exception as e:  # noqa: BLE001 - an MCPError (or the SDK's group of one): read below
                        errors.append(str(e))
            import mcp_types as types
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            async with httpx2.AsyncClient(headers={"Forgec-Session": "ep-sec-1"}, timeout=60) as hh:
                async with Client(streamable_http_client(f"{base}/mcp/airline", http_client=hh)) as c:
                    g = t.gold_calls[0]
                    by_header = await c.call_tool(g.tool, dict(g.arguments))
            assert isinstance(by_header, types.CallToolResult)
            listing = (await h.get("/forgec/sessions")).json()
        return first, names, probes, errors, by_header, listing

    with http_server(build_dir) as url:
        first, names, probes, errors, by_header, listing = anyio.run(go, url)
    assert not any(s in json.dumps(first) for s in _secrets_of(t))  # the first turn carries no gold
    assert names == [f["function"]["name"] for f in build.envs["airline"].TOOLS]
    for r in probes:
        assert r.is_error and "unknown tool" in r.content[0].text and not any(s in r.content[0].text for s in _secrets_of(t))
    assert "no session 'ep-sec-2'" in errors[0] and "wrong-env" in errors[1]
    assert not by_header.is_error
    held = {s["session"]: s for s in listing}
    ep = held["ep-sec-1"]["episode"]  # the 4 probes were the agent's calls (failed, as in eval) and the header's call joined them
    assert "ep-sec-2" not in held and ep["tool_calls"] == 5 and ep["tool_errors"] == 4


def test_made_up_session_ids_evict_nobody_and_ended_sessions_are_errors(build_dir, build):
    """1,000 made-up ids through the (authorized) channel are 404s and the real session keeps its state; a dropped
    session's next tool call is an error, never a fresh env at the initial state."""
    t = _task(build)

    from mcp.shared.exceptions import MCPError

    async def go(url):
        base = url.rsplit("/mcp", 1)[0]
        async with HttpSession(url) as s:
            for g in t.gold_calls:
                assert not (await s.client.call_tool(g.tool, dict(g.arguments))).is_error
            async with httpx2.AsyncClient(base_url=base, headers=AUTH, timeout=60) as h:
                codes = set()
                for i in range(1000):
                    r = await h.post(f"/forgec/sessions/made-up-{i}/reset", json={"task": None})
                    codes.add(r.status_code)
                st = (await h.get(f"/forgec/sessions/{s.session_id}/state")).json()
                dropped = (await h.delete(f"/forgec/sessions/{s.session_id}")).json()
                try:
                    r = await s.client.call_tool(t.gold_calls[0].tool, dict(t.gold_calls[0].arguments))
                    after = r.content[0].text if r.is_error else "no error"
                except MCPError as e:
                    after = str(e)
                gone = await h.get(f"/forgec/sessions/{s.session_id}/state")
            return codes, st, dropped, after, gone

    with http_server(build_dir, "--task", t.id) as url:
        codes, st, dropped, after, gone = anyio.run(go, url)
    assert codes == {404}
    assert st["state_hash"] == t.gold_state_hash  # nobody was evicted
    assert dropped == {"dropped": True}
    assert "session-expired" in after and "dropped" in after
    assert gone.status_code == 410 and gone.json()["code"] == "session-expired"


def test_the_session_cap_refuses_new_sessions_with_a_clear_error(build_dir, build):
    t = _task(build)

    async def go(url):
        async with HttpSession(url) as a, HttpSession(url) as b:
            await a.client.list_tools()
            await b.client.list_tools()
            err = None
            try:
                async with HttpSession(url) as c:
                    await c.client.list_tools()
            except Exception as e:  # noqa: BLE001 - the third client is refused by the SDK or by forgec: either is an error
                err = e
            first = await a.client.call_tool(t.gold_calls[0].tool, dict(t.gold_calls[0].arguments))
            return err, first

    with http_server(build_dir, "--task", t.id, "--max-sessions", "2") as url:
        err, first = anyio.run(go, url)
    assert err is not None
    assert not first.is_error  # the live sessions still work


def test_bodies_are_bounded_on_every_route(build_dir, build):
    t = _task(build)
    with http_server(build_dir, "--task", t.id, "--body-limit", "4096") as url:
        sid = _agent_session(url, t)
        base = url.rsplit("/mcp", 1)[0]
        big = json.dumps({"said": "x" * 20_000})
        with httpx2.Client(base_url=base, headers={**AUTH, "content-type": "application/json"}, timeout=30) as h:
            score = h.post(f"/forgec/sessions/{sid}/score", content=big)
            mcp = h.post("/mcp", content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": "y" * 20_000}}),
                         headers={"accept": "application/json, text/event-stream"})
            small = h.post(f"/forgec/sessions/{sid}/score", content=json.dumps({"said": "x"}))
            deep = h.post(f"/forgec/sessions/{sid}/score", content="[" * 1900 + "]" * 1900)
            deeper = h.post(f"/forgec/sessions/{sid}/reset", content='{"task": ' + "[" * 1500 + "]" * 1500 + "}")
    assert score.status_code == 413 and mcp.status_code == 413
    assert small.status_code == 200 and "reward" in small.json()
    assert deep.status_code == 400 and deeper.status_code == 400


def test_idle_sessions_are_reaped_and_their_next_call_is_an_error(build_dir, build):
    t = _task(build)

    async def go(url):
        async with HttpSession(url) as s:
            first = await s.client.call_tool(t.gold_calls[0].tool, dict(t.gold_calls[0].arguments))
            await anyio.sleep(2.5)
            try:
                late = await s.client.call_tool(t.gold_calls[0].tool, dict(t.gold_calls[0].arguments))
                return first, late.is_error, late.content[0].text
            except Exception as e:  # noqa: BLE001 - the SDK may have dropped the transport session too: also an error
                return first, True, str(e)

    with http_server(build_dir, "--task", t.id, "--idle-timeout", "1") as url:
        first, late_error, text = anyio.run(go, url)
    assert not first.is_error and late_error, text


def test_non_loopback_bind_warns_and_a_short_token_is_refused(build_dir):
    from typer.testing import CliRunner

    from forgec.cli import app
    from forgec.serve.security import exposure_warning, transport_security

    assert exposure_warning("127.0.0.1") is None and exposure_warning("::1") is None
    assert "plain HTTP" in exposure_warning("0.0.0.0") and "TLS" in exposure_warning("10.1.2.3")
    s = transport_security("10.1.2.3", ["rl.example.org"])
    assert "10.1.2.3:*" in s.allowed_hosts and "rl.example.org:*" in s.allowed_hosts and "evil.example:*" not in s.allowed_hosts
    r = CliRunner().invoke(app, ["serve", str(build_dir), "--env", "airline", "--eval-token", "short"])
    assert r.exit_code == 2 and "at least 16 characters" in r.output and "Traceback" not in r.output


def test_token_file_is_created_private_and_read_back(tmp_path):
    from forgec.serve.security import TokenError, resolve_token

    p = tmp_path / "tok"
    tok, where = resolve_token(None, None, p)
    assert p.stat().st_mode & 0o777 == 0o600 and p.read_text().strip() == tok and "written" in where
    assert resolve_token(None, None, p)[0] == tok  # a second server (or the harness) reads the same one
    p.chmod(0o644)
    with pytest.raises(TokenError, match="readable by other users"):
        resolve_token(None, None, p)


# --------------------------------------------------------------------------- stdio


def _stdio(build_dir, *args, env_token: str | None = TOKEN):
    env = {k: v for k, v in os.environ.items() if k != "FORGEC_SERVE_EVAL_TOKEN"}
    if env_token:
        env["FORGEC_SERVE_EVAL_TOKEN"] = env_token
    return subprocess.Popen([sys.executable, "-m", "forgec", "serve", str(build_dir), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=env)


def _reply(p, timeout=20.0) -> dict:
    t0 = time.monotonic()
    buf = b""
    while time.monotonic() - t0 < timeout:
        r, _, _ = select.select([p.stdout], [], [], 0.2)
        if r:
            ch = os.read(p.stdout.fileno(), 65536)
            if not ch:
                break
            buf += ch
            if b"\n" in buf:
                return json.loads(buf.split(b"\n", 1)[0])
    raise AssertionError(f"no reply within {timeout} s (got {buf[:200]!r})")


def _send(p, obj_or_text) -> None:
    line = obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)
    p.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
    p.stdin.flush()


def test_stdio_unreadable_messages_get_an_error_reply_and_the_eval_requests_need_the_token(build_dir, build):
    t = _task(build)
    p = _stdio(build_dir, "--task", t.id)
    try:
        _send(p, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "0"}}})
        assert "result" in _reply(p)
        _send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        bad_lines = ['{"jsonrpc": "2.0", "id": ' + "[" * 5000 + "]" * 5000 + ', "method": "tools/list"}',
                     '{"jsonrpc": "2.0", "id": "\\udfff", "method": "tools/list"}',
                     "this is not json",
                     '{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": ' + "[" * 5000 + "]" * 5000 + "}"]
        replies = []
        for line in bad_lines:
            _send(p, line)
            replies.append(_reply(p))
        _send(p, {"jsonrpc": "2.0", "id": 1, "method": "forgec/state", "params": {"full": True}})
        no_token = _reply(p)
        _send(p, {"jsonrpc": "2.0", "id": 2, "method": "forgec/score", "params": {"said": "x", "token": "wrong-" + TOKEN}})
        wrong = _reply(p)
        episode_tries = []
        for i, (method, params) in enumerate([("forgec/episode/start", {"task": t.id, "session": "agent-made"}),
                                              ("forgec/episode/score", {"token": "wrong-" + TOKEN}),
                                              ("forgec/episode/user_turn", {"content": "hi"}),
                                              ("forgec/tasks", {})]):
            _send(p, {"jsonrpc": "2.0", "id": 100 + i, "method": method, "params": params})
            episode_tries.append(_reply(p))
        _send(p, {"jsonrpc": "2.0", "id": 3, "method": "forgec/state", "params": {"token": TOKEN}})
        right = _reply(p)
        _send(p, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
        still = _reply(p)
    finally:
        p.kill()
        p.wait()
        p.stdin.close()
        p.stdout.close()
        p.stderr.close()
    for r in replies:
        assert "error" in r, r
    for r in (no_token, wrong, *episode_tries):
        assert "error" in r and "token" in r["error"]["message"] and t.initial_state_hash not in json.dumps(r)
        assert t.instruction not in json.dumps(r)  # not even the task (the user's opening) leaks
    assert right["result"]["state_hash"] == t.initial_state_hash
    assert still["id"] == 4 and still["result"]["tools"]


# --------------------------------------------------------------------------- sessions in memory


def _big_world(state: dict, target_bytes: int) -> dict:
    """`state` with its records cloned under new keys until its JSON is `target_bytes` long."""
    ents = {e: dict(c) for e, c in state["entities"].items()}
    n = 0
    while len(json.dumps(ents)) < target_bytes:
        for e, coll in state["entities"].items():
            for k, rec in coll.items():
                key_field = next(f for f, v in rec.items() if v == k)
                ents[e][f"{k}x{n}"] = {**rec, key_field: f"{k}x{n}"}
        n += 1
    return {"entities": ents, "globals": state.get("globals", {})}


def test_a_thousand_sessions_share_one_world(build_dir, build):
    """1,000 sessions on a 4 MB world state, each with one write of its own: the first session holds the world; each
    further one costs its writes (the changed record, over a layer of the shared collection), not a copy."""
    from forgec.serve.sessions import SessionTable, World

    w = World(build, "airline")
    w._world = _big_world(w.world_state(), 4_000_000)
    users = sorted(w._world["entities"]["User"])
    tab = SessionTable(w, None, max_sessions=2000, idle_s=None)
    gc.collect()
    tracemalloc.start()
    try:
        m0 = tracemalloc.get_traced_memory()[0]
        first = tab.create("s0")
        assert first.call("update_user_email", {"user_id": users[0], "email": "s0@example.com"}).ok
        gc.collect()
        one = tracemalloc.get_traced_memory()[0] - m0
        for i in range(1, 1000):
            s = tab.create(f"s{i}")
            assert s.call("update_user_email", {"user_id": users[i % len(users)], "email": f"s{i}@example.com"}).ok
        gc.collect()
        total = tracemalloc.get_traced_memory()[0] - m0
    finally:
        tracemalloc.stop()
    writes = 999 * 2_000  # each further session's own copy of the record it changed (~1 kB) and its small dicts
    assert one > 8_000_000, one  # the world, once
    assert total <= 1.5 * one + writes, (total, one, writes)
    assert tab.get("s0").state()["diff"] and tab.get("s1").env.state["entities"]["User"][users[0]]["email"] != "s0@example.com"


def test_each_session_has_its_own_python_tool_worker(tmp_path):
    """A hostile python body that stashes its argument in the worker (a module attribute) cannot hand one session's
    argument to another session of the same env: each session's tools run in their own sandbox worker."""
    from forgec.codegen import emit_env, load_env_module
    from forgec.lang import ast as A
    from forgec.runtime import sandbox
    from forgec.serve.sessions import SessionTable, World

    ok, why = sandbox.availability()
    assert ok, why
    body = ("import collections\nprev = getattr(collections, 'forgec_stash', None)\n"
            "collections.forgec_stash = x\nreturn repr(prev)\n")
    tool = A.ToolDecl("stash", (A.ParamDecl("x", A.PrimType("str")),), A.PrimType("any"), "", None, body, ("read",))
    p = tmp_path / "env.py"
    p.write_text(emit_env(A.EnvDecl("stashy", None, (), (), (tool,)), "stashy.forge"))
    mod = load_env_module(p)
    fake = SimpleNamespace(envs={"stashy": mod}, manifest={"envs": {}}, root=Path(tmp_path), modified=False,
                           world_state=lambda name: {"entities": {}, "globals": {}})
    tab = SessionTable(World(fake, "stashy"), None, idle_s=None)
    a, b = tab.create("a"), tab.create("b")
    try:
        ra1 = a.call("stash", {"x": "secret-of-a"})
        rb1 = b.call("stash", {"x": "b"})
        ra2 = a.call("stash", {"x": "a2"})
        workers = {a.env._TENANT, b.env._TENANT} & set(sandbox._POOL)
    finally:
        tab.drop("a")
        tab.drop("b")
    assert len(workers) == 2 and not workers & set(sandbox._POOL)  # two workers while the sessions lived; none after
    assert ra1.ok and rb1.ok and ra2.ok, (ra1, rb1, ra2)
    assert ra1.result == "None" and rb1.result == "None"  # b never sees a's argument
    assert ra2.result == "'secret-of-a'"  # (the stash works: a sees its own)
