"""Tool calls per second through `forgec serve` (MCP over stdio and streamable HTTP) next to direct `Env.step`.

    python bench/bench_serve.py [--build BUILD] [--env airline] [--calls 2000] [--sessions 4]

Every path runs the same calls: the gold calls of the env's tasks (reads and
writes, in task order, cycled), each path on its own env started at the env's
world state. Paths:

* `Env.step` — the generated module, in process (what `forgec eval` calls);
* `Session.call` — the server's in-process path (argument checks, result text), no transport;
* MCP stdio — the real `mcp` client, `forgec serve` as a subprocess, one call at a time;
* MCP HTTP — the same over streamable HTTP on 127.0.0.1, one session, one call at a time;
* MCP HTTP xN — N sessions calling concurrently (aggregate calls/s);
* TypeScript SDK, stdio and HTTP — the official `@modelcontextprotocol/sdk` client (`bench/mcp_ts_client.mjs`, run by
  node) where node and the SDK are here (`$FORGEC_MCP_SERVERS` or `.mcp-servers/`, made by scripts/setup_mcp_servers.sh).

Without --build, examples/ is compiled into a temporary folder first.
"""

from __future__ import annotations

import argparse
import copy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


def _calls(build, env: str, n: int) -> list[tuple[str, dict]]:
    gold = [(g.tool, g.arguments) for t in build.tasks if t.env == env for g in t.gold_calls]
    return [(name, copy.deepcopy(args)) for name, args in (gold * (n // max(1, len(gold)) + 1))[:n]]


def bench_direct(build, env: str, calls) -> float:
    from forgec.serve.sessions import World

    e = World(build, env).new_env(None)
    t0 = time.perf_counter()
    for name, args in calls:
        e.step(name, copy.deepcopy(args))
    return len(calls) / (time.perf_counter() - t0)


def bench_session(build, env: str, calls) -> float:
    from forgec.serve.sessions import Session, World

    s = Session("bench", World(build, env))
    t0 = time.perf_counter()
    for name, args in calls:
        s.call(name, copy.deepcopy(args))
    return len(calls) / (time.perf_counter() - t0)


async def _drive(client, calls) -> float:
    await client.call_tool(*calls[0])  # warm
    t0 = time.perf_counter()
    for name, args in calls:
        await client.call_tool(name, args)
    return len(calls) / (time.perf_counter() - t0)


def bench_stdio(build_dir: Path, env: str, calls) -> float:
    import anyio
    from servekit import stdio_client

    async def go():
        async with stdio_client(build_dir, "--env", env) as c:
            return await _drive(c, calls)

    return anyio.run(go)


def bench_http(build_dir: Path, env: str, calls, sessions: int) -> tuple[float, float]:
    import anyio
    from servekit import HttpSession, http_server

    async def one(url):
        async with HttpSession(url) as s:
            return await _drive(s.client, calls)

    async def many(url):
        async with HttpSession(url) as warm:
            await warm.client.list_tools()
        done: list[float] = []
        per = calls[: max(1, len(calls) // sessions)]

        async def worker():
            async with HttpSession(url) as s:
                await s.client.call_tool(*per[0])
                done.append(time.perf_counter())
                for name, args in per:
                    await s.client.call_tool(name, args)
                done.append(time.perf_counter())

        t0 = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(sessions):
                tg.start_soon(worker)
        return sessions * len(per) / (time.perf_counter() - t0)

    with http_server(build_dir, "--env", env) as url:
        single = anyio.run(one, url)
        multi = anyio.run(many, url)
    return single, multi


def _sdk_root() -> Path | None:
    import os
    import shutil

    for root in (os.environ.get("FORGEC_MCP_SERVERS"), str(REPO / ".mcp-servers")):
        if root and (Path(root) / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir() and shutil.which("node"):
            return Path(root)
    return None


def bench_ts(build_dir: Path, env: str, calls, root: Path) -> tuple[float, float]:
    """(stdio, HTTP) calls/s of the TypeScript SDK client."""
    import json
    import os

    from servekit import TOKEN, http_server

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(calls, f)
    envv = {**os.environ, "MCP_SDK_ROOT": str(root), "FORGEC_PYTHON": sys.executable, "FORGEC_SERVE_EVAL_TOKEN": TOKEN}
    script = str(REPO / "bench" / "mcp_ts_client.mjs")

    def run(*args: str) -> float:
        r = subprocess.run(["node", script, *args], capture_output=True, text=True, env=envv, timeout=600, cwd=REPO)
        if r.returncode != 0:
            raise RuntimeError(r.stderr[-2000:])
        return json.loads(r.stdout.strip().splitlines()[-1])["calls_per_s"]

    try:
        stdio = run("--stdio", str(build_dir), env, f.name)
        with http_server(build_dir, "--env", env) as url:
            http = run(url, f.name)
    finally:
        os.unlink(f.name)
    return stdio, http


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", type=Path, help="a build folder (default: compile examples/ into a temporary one)")
    ap.add_argument("--env", default="airline")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--sessions", type=int, default=4)
    a = ap.parse_args()

    from rich.console import Console
    from rich.table import Table

    from forgec.runtime import load

    tmp = None
    if a.build is None:
        tmp = tempfile.TemporaryDirectory()
        a.build = Path(tmp.name) / "build"
        subprocess.run([sys.executable, "-m", "forgec", "compile", str(REPO / "examples"), "-o", str(a.build), "-q", "-n", "20"],
                       check=True, capture_output=True)
    b = load(a.build)
    calls = _calls(b, a.env, a.calls)
    rows = [("Env.step (in process)", bench_direct(b, a.env, calls)),
            ("Session.call (server path, no transport)", bench_session(b, a.env, calls)),
            ("MCP stdio (mcp client, subprocess)", bench_stdio(a.build, a.env, calls))]
    single, multi = bench_http(a.build, a.env, calls, a.sessions)
    rows += [("MCP streamable HTTP, 1 session", single), (f"MCP streamable HTTP, {a.sessions} sessions concurrently", multi)]
    root = _sdk_root()
    if root is not None:
        ts_stdio, ts_http = bench_ts(a.build, a.env, calls, root)
        rows += [("MCP stdio, TypeScript SDK (node)", ts_stdio), ("MCP streamable HTTP, TypeScript SDK (node)", ts_http)]
    else:
        print("TypeScript SDK rows left out: no node, or no @modelcontextprotocol/sdk (scripts/setup_mcp_servers.sh)")
    t = Table(title=f"tool calls/s, env {a.env}, {len(calls)} gold calls (reads and writes) per path")
    for c in ("path", "calls/s", "µs/call", "vs Env.step"):
        t.add_column(c, justify="left" if c == "path" else "right")
    base = rows[0][1]
    for name, rate in rows:
        t.add_row(name, f"{rate:,.0f}", f"{1e6 / rate:,.1f}", f"{base / rate:,.0f}x")
    Console().print(t)
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
