"""A reusable OpenAI-compatible fake server for tests (real HTTP on 127.0.0.1, free port).

The official `openai` client talks to it over a real socket, so tests exercise
timeouts, retries and connection handling for real. Each POST to
`/v1/chat/completions` is answered by the next scripted reply (`script(...)`),
or, when the script is empty, by `responder(body)`; a reply is a dict:

* `{"content": "text"}` — a normal completion (`finish_reason` "stop");
* `{"tool_calls": [{"name": ..., "arguments": {...} or "raw text"}], "content": ...}` — OpenAI tool calls;
* `{"status": 429, "retry_after": 0.1, "message": "..."}` — an HTTP error with an OpenAI error body;
* `{"delay": 2.0, ...}` — sleep before answering (a slow reply; combine with any of the above);
* `{"disconnect": True}` — close the socket without answering;
* `"usage": {...}` and `"reasoning_content": "..."` are passed through.

Hermes-format tool calls are just `content` with `<tool_call>{...}</tool_call>` text.
Every request body is recorded in `server.requests`.

Use the `fake_server` fixture (`from fakeserver import fake_server`) or
`with FakeServer() as srv: ...`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest


def completion(reply: dict, model: str, n: int) -> dict:
    """An OpenAI `chat.completion` object for a scripted reply."""
    msg: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    finish = "stop"
    if reply.get("tool_calls"):
        finish = "tool_calls"
        msg["tool_calls"] = [
            {"id": tc.get("id", f"call_{n}_{i}"), "type": "function",
             "function": {"name": tc["name"], "arguments": tc["arguments"] if isinstance(tc["arguments"], str) else json.dumps(tc["arguments"])}}
            for i, tc in enumerate(reply["tool_calls"])
        ]
    if "reasoning_content" in reply:
        msg["reasoning_content"] = reply["reasoning_content"]
    usage = reply.get("usage") or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": msg, "finish_reason": reply.get("finish_reason", finish)}], "usage": usage}


class FakeServer:
    def __init__(self, responder: Callable[[dict], dict] | None = None):
        self.responder = responder or (lambda body: {"content": "ok"})
        self.requests: list[dict] = []
        self._script: deque[dict] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # ------------------------------------------------------------------ control
    def script(self, *replies: dict) -> "FakeServer":
        with self._lock:
            self._script.extend(replies)
        return self

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _next(self, body: dict) -> dict:
        with self._lock:
            self.requests.append(body)
            if self._script:
                return self._script.popleft()
        return self.responder(body)

    # ------------------------------------------------------------------ server
    def start(self) -> "FakeServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:  # quiet
                pass

            def _send(self, status: int, obj: dict, headers: dict | None = None) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model", "created": 0, "owned_by": "test"}]})
                else:
                    self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, {"error": {"message": "bad json", "type": "invalid_request_error"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                    return
                reply = server._next(body)
                if reply.get("delay"):
                    time.sleep(float(reply["delay"]))
                if reply.get("disconnect"):
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    self.connection.close()
                    self.close_connection = True
                    return
                status = int(reply.get("status", 200))
                try:
                    if status != 200:
                        headers = {"Retry-After": str(reply["retry_after"])} if "retry_after" in reply else {}
                        self._send(status, {"error": {"message": reply.get("message", f"scripted {status}"), "type": "server_error",
                                                      "code": status}}, headers)
                    else:
                        self._send(200, completion(reply, body.get("model", "fake"), len(server.requests)))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout); fine

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@pytest.fixture
def fake_server():
    srv = FakeServer().start()
    try:
        yield srv
    finally:
        srv.stop()
