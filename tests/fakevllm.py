"""A tiny fake of the parts of a vLLM OpenAI server the rollout fleet uses (real HTTP on 127.0.0.1).

* `POST /v1/completions` (token ids in, `token_ids` + `logprobs.token_logprobs` out): the reply is
  a pure function of the prompt and the loaded weights' version, so a test can tell which
  weights served a request; every prompt is recorded with the server's name;
* `POST /collective_rpc` with `reload_weights`: loads `<weights_path>/version` (an integer file; without
  one the version goes up by one);
  `refuse_reload=True` answers 404 like a server without VLLM_SERVER_DEV_MODE;
* `GET /health`; `POST /reset_prefix_cache` answers `{"success": false}` while a completion is in flight
  (as vLLM 0.32 does while requests hold cache blocks) and true otherwise;
* `POST /pause?mode=wait` (waits for in-flight completions, then holds new ones until `POST /resume`),
  `POST /update_weight_version`, `GET /weight_info`, `POST /sleep`, `POST /wake_up`; `calls` records
  every control call in order (`no_pause=True` answers 404 to /pause like an older vLLM);
* the weight-transfer control plane (`/init_weight_transfer_engine`, `/start_weight_update`, `/update_weights`,
  `/finish_weight_update` with its weight_version, `GET /get_world_size`): bodies kept in `bodies`;
* `delay` seconds before each completion (concurrency shows up), `hang=True` never answers in time;
* `kill()` closes the listening socket: new connections are refused, like a dead server.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class FakeVLLM:
    def __init__(self, name: str = "s", eos: int = 0, delay: float = 0.0, port: int = 0, capacity: int = 0, tokens: int = 3):
        self.name, self.eos, self.delay, self.tokens = name, eos, delay, tokens
        # capacity > 0: at most this many requests generate at once (an engine's batch limit); the rest queue
        self._slots = threading.Semaphore(capacity) if capacity else None
        self.version = 0
        self.hang = False
        self.refuse_reload = False
        self.prompts: list[list[int]] = []
        self.reloads: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.calls: list[str] = []  # control routes in the order they were called
        self.no_pause = False
        self.weight_version: str | None = None
        self.sleeping = False
        self.reset_refusals = 0  # /reset_prefix_cache answers that said success=false
        self.world_size = 1  # workers (TP x PP x DP) reported by /get_world_size
        self.bodies: list[tuple[str, dict]] = []
        self._open = threading.Event()
        self._open.set()
        self._lock = threading.Lock()
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, prompt: list[int], max_tokens: int) -> tuple[list[int], list[float]]:
        n = max(1, min(max_tokens, self.tokens))
        ids = [1 + (self.version * 7 + len(prompt) + k) % 50 for k in range(n - 1)] + [self.eos]
        return ids, [-0.5 - 0.1 * self.version] * n

    def start(self) -> "FakeVLLM":
        fake = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _send(self, code: int, obj: dict) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/health":
                    self._send(200, {})
                elif self.path == "/weight_info":
                    self._send(200, {"weight_version": fake.weight_version})
                elif self.path.startswith("/get_world_size"):
                    self._send(200, {"world_size": fake.world_size})
                else:
                    self._send(404, {"error": "no"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                route = self.path.split("?")[0]
                if route != "/v1/completions":
                    fake.calls.append(self.path if route == "/wake_up" else route)
                if route == "/pause" and not fake.no_pause:
                    fake._open.clear()
                    while fake.in_flight:  # mode=wait: in-flight requests finish on the old weights
                        time.sleep(0.005)
                    self._send(200, {"status": "paused"})
                    return
                if route == "/resume" and not fake.no_pause:
                    fake._open.set()
                    self._send(200, {"status": "resumed"})
                    return
                if route == "/update_weight_version":
                    fake.weight_version = body.get("new_version")
                    self._send(200, {"success": True, "new_version": fake.weight_version})
                    return
                if route in ("/init_weight_transfer_engine", "/start_weight_update", "/update_weights", "/finish_weight_update"):
                    fake.bodies.append((route, body))
                    if route == "/finish_weight_update" and body.get("weight_version") is not None:
                        fake.weight_version = body["weight_version"]
                    self._send(200, {"message": "ok"})
                    return
                if route in ("/sleep", "/wake_up"):
                    fake.sleeping = route == "/sleep"
                    self._send(200, {"status": "sleeping" if fake.sleeping else "awake"})
                    return
                if self.path == "/v1/completions":
                    fake._open.wait(60.0)
                    with fake._lock:
                        fake.prompts.append(list(body["prompt"]))
                        fake.in_flight += 1
                        fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                    try:
                        if fake._slots is not None:
                            with fake._slots:
                                time.sleep(fake.delay)
                        else:
                            time.sleep(60.0 if fake.hang else fake.delay)
                        ids, lps = fake.reply(body["prompt"], int(body.get("max_tokens", 16)))
                    finally:
                        with fake._lock:
                            fake.in_flight -= 1
                    self._send(200, {"id": "cmpl", "object": "text_completion", "created": 0, "model": body.get("model"),
                                     "choices": [{"index": 0, "text": "", "finish_reason": "stop", "token_ids": ids,
                                                  "logprobs": {"token_logprobs": lps, "tokens": [str(i) for i in ids],
                                                               "top_logprobs": None, "text_offset": [0] * len(ids)}}],
                                     "usage": {"prompt_tokens": len(body["prompt"]), "completion_tokens": len(ids),
                                               "total_tokens": len(body["prompt"]) + len(ids)}})
                elif self.path == "/collective_rpc" and body.get("method") == "reload_weights" and not fake.refuse_reload:
                    vf = Path(body["kwargs"]["weights_path"]) / "version"
                    fake.version = int(vf.read_text()) if vf.exists() else fake.version + 1
                    fake.reloads.append(body["kwargs"]["weights_path"])
                    self._send(200, {"results": [None]})
                elif self.path == "/reset_prefix_cache":
                    ok = fake.in_flight == 0
                    fake.reset_refusals += not ok
                    self._send(200, {"success": ok})
                else:
                    self._send(404, {"error": "not found"})

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # many clients connect at once (the default backlog of 5 refuses them)

        self._httpd = Server(("127.0.0.1", self._port), H)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def kill(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def revive(self) -> None:
        """Listen again on the same port (a restarted server)."""
        self._port = self.port
        self.start()

    def __enter__(self) -> "FakeVLLM":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.kill()


def port_is_closed(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0
