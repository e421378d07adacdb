"""A fleet of rollout servers behind a client-side router (one `Fleet` per trainer process).

Why client-side: every trainer process already holds the episodes it rolls out, so it can
route without a proxy hop. The rules:

* **least loaded**: a new episode goes to the live server with the fewest episodes pinned
  to it (ties: fewest requests in flight, then fewest requests so far, then list order);
* **affinity**: every request of one episode goes to the server the episode was pinned to,
  so its growing prompt hits that server's prefix cache;
* **failover**: a connection error, a timeout or a 5xx takes the server out (`alive=False`,
  the error kept); the episode's request is retried on the least-loaded live server and the
  episode stays there. Prompts are token ids (the whole context each turn), so a request is
  self-contained and the episode loses nothing but its prefix cache. `probe()` (run before
  each weight sync) brings a server back once it answers `/health` again.
* **pause**: while weights are being synced (`pause()`/`resume()`), requests wait instead of
  counting a restarting server as dead (asynchronous rollouts keep generating around syncs).

Accounting per server (`take_stats()` returns and resets the step's window): requests,
generated tokens, busy seconds (time with at least one request in flight) and the policy
version it served. An episode's view (`EpisodeEngine`) records the versions it was served
with; the episode's policy version is the oldest of them.

The engines behind the endpoints are anything with `async generate(prompt_ids, sampling,
seed) -> (ids, logprobs)`: `VLLMEngine` (HTTP) or `HFEngine` (the local model, as one
endpoint named `local`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from forgec.train.rollout import VLLMEngine, http_json, reload_remote, server_healthy, set_weight_version, weight_version


def is_server_failure(exc: BaseException) -> bool:
    """A failure of the server (dead, unreachable, too slow, 5xx), not of the request."""
    try:
        import openai

        if isinstance(exc, (openai.APIConnectionError, openai.APITimeoutError)):
            return True
        if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
            return True
    except ImportError:  # pragma: no cover - openai is a dependency
        pass
    return isinstance(exc, (ConnectionError, TimeoutError, asyncio.TimeoutError))


class NoServerLeft(RuntimeError):
    """Every server of the fleet is out; the message lists why each was taken out."""


@dataclass
class Endpoint:
    name: str  # the base URL, or `local`
    engine: Any
    alive: bool = True
    error: str | None = None
    episodes: int = 0  # episodes pinned now
    in_flight: int = 0
    requests: int = 0  # all time (tie-break)
    version: int = 0  # policy version the server serves
    # the current accounting window
    w_requests: int = 0
    w_tokens: int = 0
    w_busy: float = 0.0
    w_failures: int = 0
    _busy_since: float | None = None

    def begin(self) -> None:
        if self.in_flight == 0:
            self._busy_since = time.perf_counter()
        self.in_flight += 1
        self.requests += 1
        self.w_requests += 1

    def end(self, tokens: int) -> None:
        self.in_flight -= 1
        self.w_tokens += tokens
        if self.in_flight == 0 and self._busy_since is not None:
            self.w_busy += time.perf_counter() - self._busy_since
            self._busy_since = None


class Fleet:
    """Routes episodes over endpoints; thread-safe (the asynchronous producer runs in its own thread)."""

    def __init__(self, engines: dict[str, Any], version: int = 0):
        if not engines:
            raise ValueError("a fleet needs at least one endpoint")
        self.endpoints = [Endpoint(name, eng, version=version) for name, eng in engines.items()]
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()
        self._window_start = time.perf_counter()
        self.failovers = 0

    @classmethod
    def of_urls(cls, urls: list[str], model: str, eos_token_id: int, timeout: float = 300.0, max_retries: int = 0) -> "Fleet":

        return cls({u: VLLMEngine(u, model, eos_token_id, timeout=timeout, max_retries=max_retries) for u in urls})

    # ------------------------------------------------------------ routing

    def live(self) -> list[Endpoint]:
        return [e for e in self.endpoints if e.alive]

    def assign(self, previous: Endpoint | None = None) -> Endpoint:
        with self._lock:
            if previous is not None:
                previous.episodes -= 1
            live = [(i, e) for i, e in enumerate(self.endpoints) if e.alive]
            if not live:
                why = "; ".join(f"{e.name}: {e.error}" for e in self.endpoints)
                raise NoServerLeft(f"every rollout server is out ({why})")
            _, ep = min(live, key=lambda x: (x[1].episodes, x[1].in_flight, x[1].requests, x[0]))
            ep.episodes += 1
            return ep

    def release(self, ep: Endpoint | None) -> None:
        if ep is not None:
            with self._lock:
                ep.episodes -= 1

    def take_out(self, ep: Endpoint, exc: BaseException) -> None:
        with self._lock:
            if ep.alive:
                ep.alive = False
                ep.error = f"{type(exc).__name__}: {exc}"
            ep.w_failures += 1

    def episode(self) -> "EpisodeEngine":
        return EpisodeEngine(self)

    # ------------------------------------------------------------ syncs

    def pause(self) -> None:
        self._open.clear()

    def resume(self) -> None:
        self._open.set()

    @property
    def paused(self) -> bool:
        return not self._open.is_set()

    async def wait_open(self) -> None:
        while not self._open.is_set():
            await asyncio.sleep(0.02)

    def probe(self, health: Any = None) -> list[str]:
        """Bring back servers that answer again (`health(name) -> bool`, default GET /health); returns them."""

        health = health or server_healthy
        back = []
        for e in self.endpoints:
            if not e.alive and e.name != "local" and health(e.name):
                with self._lock:
                    e.alive, e.error = True, None
                back.append(e.name)
        return back

    def set_version(self, version: int, names: list[str] | None = None) -> None:
        for e in self.endpoints:
            if names is None or e.name in names:
                e.version = version

    # ------------------------------------------------------------ accounting

    def take_stats(self) -> dict:
        """The window since the last call: per server tokens/s, busy share, requests; resets the window."""
        now = time.perf_counter()
        span = max(now - self._window_start, 1e-9)
        out: dict[str, dict] = {}
        with self._lock:
            for e in self.endpoints:
                busy = e.w_busy + ((now - e._busy_since) if e._busy_since is not None else 0.0)
                if e._busy_since is not None:
                    e._busy_since = now
                out[e.name] = {"tokens": e.w_tokens, "requests": e.w_requests, "busy_s": busy, "window_s": span,
                               "tokens_per_s": e.w_tokens / span, "busy_share": min(busy / span, 1.0), "failures": e.w_failures,
                               "alive": e.alive, "version": e.version}
                e.w_tokens = e.w_requests = e.w_failures = 0
                e.w_busy = 0.0
            self._window_start = now
        return out


@dataclass
class EpisodeEngine:
    """One episode's view of the fleet: pinned to one server, failing over when it dies."""

    fleet: Fleet
    endpoint: Endpoint | None = None
    versions: list[int] = field(default_factory=list)
    gen_s: float = 0.0
    failovers: int = 0
    servers: list[str] = field(default_factory=list)

    async def generate(self, prompt_ids: list[int], sampling: Any, seed: int) -> tuple[list[int], list[float]]:
        while True:
            await self.fleet.wait_open()
            if self.endpoint is None or not self.endpoint.alive:
                prev, self.endpoint = self.endpoint, None
                self.endpoint = self.fleet.assign(prev)
                if not self.servers or self.servers[-1] != self.endpoint.name:
                    self.servers.append(self.endpoint.name)
            ep = self.endpoint
            version = ep.version
            ep.begin()
            t0 = time.perf_counter()
            ids: list[int] = []
            try:
                ids, lps = await ep.engine.generate(prompt_ids, sampling, seed)
            except Exception as e:  # noqa: BLE001 - classified below
                if not is_server_failure(e):
                    raise
                if self.fleet.paused:
                    continue  # a server restarting for a weight sync: wait and ask it again
                self.fleet.take_out(ep, e)
                self.failovers += 1
                self.fleet.failovers += 1
                continue
            finally:
                ep.end(len(ids))
                self.gen_s += time.perf_counter() - t0
            self.versions.append(version)
            return ids, lps

    def release(self) -> None:
        self.fleet.release(self.endpoint)
        self.endpoint = None

    @property
    def version(self) -> int | None:
        return min(self.versions) if self.versions else None


# ---------------------------------------------------------------- weight sync to every server


def sync_servers(targets: dict[str, Any], weights_dir: Any, mode: str = "auto", version: int | None = None,
                 retries: int = 20) -> dict[str, str]:
    """Every server loads the weights saved in `weights_dir`, in parallel.

    `targets`: URL -> the `VLLMServer` this process started (reload, or restart), or None for a
    server given by URL (reload only: `/collective_rpc reload_weights`, needs VLLM_SERVER_DEV_MODE=1
    and read access to `weights_dir`). A reload pauses the server's generation, checks that its prefix
    cache was reset (else "error: StaleCacheError ...": the caller takes it out) and stamps `version`
    on it. Returns URL -> "reload" | "restart" | "error: why".
    """
    from concurrent.futures import ThreadPoolExecutor


    def one(item: tuple[str, Any]) -> tuple[str, str]:
        url, srv = item
        try:
            if srv is not None:
                how = srv.sync(weights_dir, "reload" if mode == "nccl" else mode, version)
                if how == "restart" and version is not None:
                    set_weight_version(url, version)
                return url, how
            if mode == "restart":
                return url, "error: restart needs a server this trainer started (use reload for servers given by URL)"
            return url, ("reload" if reload_remote(url, weights_dir, retries, version) is not None else "error: the server refused reload_weights "
                         "(start it with VLLM_SERVER_DEV_MODE=1; it must read rollout.sync_dir)")
        except Exception as e:  # noqa: BLE001 - a dead server is reported, the others still sync
            return url, f"error: {type(e).__name__}: {e}"

    if not targets:
        return {}
    with ThreadPoolExecutor(min(len(targets), 16)) as ex:
        return dict(ex.map(one, targets.items()))


def server_versions(urls: list[str]) -> dict[str, str | None]:
    """The policy version each server reports itself (`/weight_info`), in parallel; None where it cannot say."""
    from concurrent.futures import ThreadPoolExecutor

    if not urls:
        return {}
    with ThreadPoolExecutor(min(len(urls), 16)) as ex:
        return dict(zip(urls, ex.map(weight_version, urls)))


def fingerprint(url: str, model: str, prompt_ids: list[int], tokens: int = 4, timeout: float = 60.0) -> tuple[list[int], list[float]] | None:
    """Greedy ids and log-probs of a fixed prompt: what the served weights say (None when unreachable)."""
    import json


    body = {"model": model, "prompt": prompt_ids, "max_tokens": tokens, "temperature": 0, "logprobs": 1,
            "return_token_ids": True, "skip_special_tokens": False}
    try:
        code, text = http_json("POST", url.rstrip("/") + "/completions", body, timeout=timeout)
    except OSError:
        return None
    if code != 200:
        return None
    ch = json.loads(text)["choices"][0]
    lps = [float(x or 0.0) for x in ((ch.get("logprobs") or {}).get("token_logprobs") or [])]
    return list(ch.get("token_ids") or []), lps


def fleet_consistent(urls: list[str], model: str, prompt_ids: list[int], tol: float = 1e-2) -> bool:
    """After a sync: every server serves the same weights (same greedy ids, log-probs within `tol`)."""
    fps = [fingerprint(u, model, prompt_ids) for u in urls]
    if any(f is None for f in fps):
        return False
    ids0, lp0 = fps[0]
    return all(ids == ids0 and len(lp) == len(lp0) and all(abs(a - b) <= tol for a, b in zip(lp, lp0)) for ids, lp in fps[1:])
