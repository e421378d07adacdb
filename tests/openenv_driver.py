"""Runs in the venv holding openenv-core ($FORGEC_VERIFIERS_VENV; openenv-core cannot join the main venv): plays
episodes on a running `forgec serve-openenv` with OpenEnv's own client, `GenericEnvClient` (its WebSocket session
protocol), the agent being forgec's oracle (`OracleAgent`, the gold calls) or tests/adapterkit.py's WrongAgent.
Prints one JSON line per episode.

    python tests/openenv_driver.py URL BUILD MODE TASK_ID ...     (MODE: oracle | wrong | sync-oracle)
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _action(reply) -> dict:
    return {"content": reply.content or "", "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in reply.tool_calls]}


def _row(tid: str, r, steps: int, state: dict, after: str) -> dict:
    o = r.observation
    return {"task_id": tid, "reward": r.reward, "done": r.done, "steps": steps, "state": state, "end_reason": o["end_reason"],
            "reward_breakdown": o["reward_breakdown"], "messages": o["messages"], "after_done": after}


async def play(url: str, agent, tid: str) -> dict:
    from openenv.core.generic_client import GenericEnvClient

    async with GenericEnvClient(base_url=url) as env:
        r = await env.reset(task=tid)
        assert r.reward is None and not r.done and r.observation["task_id"] == tid
        steps = 0
        while not r.done:
            r = await env.step(_action(agent.act_sync(r.observation["messages"], r.observation["tools"])))
            steps += 1
        state = await env.state()
        try:
            await env.step({"content": "anything else?"})
            after = "accepted"
        except RuntimeError as e:  # GenericEnvClient raises the server's error message
            after = str(e)
        return _row(tid, r, steps, state, after)


def play_sync(url: str, agent, tid: str) -> dict:
    """The same through OpenEnv's synchronous wrapper (`.sync()`)."""
    from openenv.core.generic_client import GenericEnvClient

    with GenericEnvClient(base_url=url).sync() as env:
        r = env.reset(task=tid)
        steps = 0
        while not r.done:
            r = env.step(_action(agent.act_sync(r.observation["messages"], r.observation["tools"])))
            steps += 1
        return _row(tid, r, steps, env.state(), "")


def main() -> None:
    from adapterkit import AGENTS

    from forgec.runtime import load

    url, build, mode, *ids = sys.argv[1:]
    b = load(build)
    for tid in ids:
        if mode.startswith("sync-"):
            row = play_sync(url, AGENTS[mode[5:]](b.task(tid)), tid)
        else:
            row = asyncio.run(play(url, AGENTS[mode](b.task(tid)), tid))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
