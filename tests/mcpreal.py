"""A real MCP server over stdio, for differential tests (the real implementation of documented tools).

`McpServer("filesystem", root_dir)` / `McpServer("memory", memory_file=...)` starts the npm
server (installed by scripts/setup_mcp_servers.sh; FORGEC_MCP_SERVERS names another dir),
does the `initialize` handshake and answers `call(tool, args)` with the `tools/call` result.
Servers are always stopped (context manager; `close()`), and only speak over pipes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVERS = {"filesystem": "server-filesystem", "memory": "server-memory"}


def servers_dir() -> Path:
    return Path(os.environ.get("FORGEC_MCP_SERVERS") or REPO / ".mcp-servers")


def server_script(kind: str) -> Path:
    """The server's entry point; a clear failure (not a skip) when it is not installed."""
    p = servers_dir() / "node_modules" / "@modelcontextprotocol" / SERVERS[kind] / "dist" / "index.js"
    if not p.is_file() or shutil.which("node") is None:
        raise RuntimeError(f"the real MCP {kind} server is not installed at {p} (or node is missing): run `bash scripts/setup_mcp_servers.sh` (CI does) or set FORGEC_MCP_SERVERS")
    return p


class McpError(Exception):
    """A JSON-RPC error answer (the call itself failed, not the tool)."""


class McpServer:
    def __init__(self, kind: str, *args: str, env: dict[str, str] | None = None, timeout: float = 30.0):
        script = server_script(kind)
        full_env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")} | (env or {})
        self.timeout = timeout
        self.proc = subprocess.Popen(["node", str(script), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=full_env, text=True, bufsize=1)
        self._id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "forgec-tests", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, msg: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self._id += 1
        rid = self._id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise McpError(f"server exited during {method}")
            msg = json.loads(line)
            if msg.get("id") != rid:
                continue  # a notification or log message
            if "error" in msg:
                raise McpError(msg["error"].get("message", str(msg["error"])))
            return msg["result"]

    def tools(self) -> list[dict]:
        return self.request("tools/list", {})["tools"]

    def call(self, tool: str, args: dict) -> tuple[bool, str, dict | None]:
        """(is_error, text of the content blocks, structuredContent) of one tools/call."""
        r = self.request("tools/call", {"name": tool, "arguments": args})
        text = "\n".join(c.get("text", "") for c in r.get("content", []) if c.get("type") == "text")
        return bool(r.get("isError")), text, r.get("structuredContent")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except Exception:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "McpServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
