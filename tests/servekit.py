"""Test helpers for `forgec serve`: a compiled examples build, the server as a subprocess, real `mcp` clients.

Every server is started by the test that needs it and always stopped (`http_server`
kills its process group in `finally`); stdio servers end with their client.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

import mcp_types as types

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
_ANY = TypeAdapter(dict)
TOKEN = "forgec-test-eval-token-0123456789"  # the harness's evaluation token ($FORGEC_SERVE_EVAL_TOKEN of the servers started here)
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def compile_examples(out: Path, n: int = 8) -> Path:
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(EXAMPLES), "-o", str(out), "-n", str(n), "-q"],
                       capture_output=True, text=True, timeout=600, cwd=REPO)
    assert r.returncode == 0 and (out / "manifest.json").is_file(), r.stderr[-3000:]
    return out


def stdio_client(build: Path, *args: str, **client_kwargs) -> Client:
    """`forgec serve BUILD ARGS` over stdio, started by the SDK client (`client_kwargs`: the Client's, e.g. message_handler)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "FORGEC_SERVE_EVAL_TOKEN": TOKEN}
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "forgec", "serve", str(build), *args], env=env,
                                        cwd=str(REPO)), **client_kwargs)


async def eval_request(client: Client, method: str, **params) -> dict:
    """A stdio evaluation request (`forgec/reset|state|score`): JSON-RPC on the same pipe, not a tool, carrying the token."""
    params.setdefault("token", TOKEN)
    return await client.session.send_request(types.Request[dict, str](method=method, params=params), _ANY)


@contextlib.contextmanager
def listening(cmd: list[str], *, what: str, timeout: float = 60.0, env: dict | None = None, seen: list | None = None):
    """`python -m forgec CMD` as a subprocess (its own process group) that prints "... at http://..." on
    stderr once listening; yields that URL, what it printed before goes to `seen`; always stopped."""
    p = subprocess.Popen([sys.executable, "-m", "forgec", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         cwd=REPO, start_new_session=True, env=env)
    try:
        url, t0 = None, time.monotonic()
        seen = seen if seen is not None else []
        while url is None:
            line = p.stderr.readline()
            if not line:
                raise AssertionError(f"{what} exited with {p.wait()} before listening:\n{''.join(seen)}")
            seen.append(line)
            if " at http://" in line:
                url = line.split(" at ", 1)[1].split()[0]
            assert time.monotonic() - t0 < timeout, "".join(seen)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        p.stderr.close()


@contextlib.contextmanager
def http_server(build: Path, *args: str, timeout: float = 60.0, token: str | None = TOKEN, seen: list | None = None):
    """`forgec serve BUILD ARGS --transport http --port 0` as a subprocess with `token` as $FORGEC_SERVE_EVAL_TOKEN
    (None: none, the server makes one); yields the /mcp URL; what it printed before listening goes to `seen`."""
    env = {k: v for k, v in os.environ.items() if k != "FORGEC_SERVE_EVAL_TOKEN"}
    if token is not None:
        env["FORGEC_SERVE_EVAL_TOKEN"] = token
    with listening(["serve", str(build), *args, "--transport", "http", "--port", "0"], what="forgec serve", timeout=timeout,
                   env=env, seen=seen) as url:
        yield url


class HttpSession:
    """One MCP client over streamable HTTP, recording its `Mcp-Session-Id` (the key of the evaluation channel)."""

    def __init__(self, url: str):
        self.url, self.base, self.session_id = url, url.rsplit("/mcp", 1)[0], None
        self._stack = contextlib.AsyncExitStack()

    async def _hook(self, resp) -> None:
        sid = resp.headers.get("mcp-session-id")
        if sid:
            self.session_id = sid

    async def __aenter__(self) -> "HttpSession":
        self.http = await self._stack.enter_async_context(httpx2.AsyncClient(event_hooks={"response": [self._hook]}, timeout=60))
        self.client = await self._stack.enter_async_context(Client(streamable_http_client(self.url, http_client=self.http)))
        return self

    async def __aexit__(self, *exc) -> None:
        await self._stack.aclose()
