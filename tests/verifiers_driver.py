"""Runs in the verifiers venv ($FORGEC_VERIFIERS_VENV, not the main one): plays a build's tasks through verifiers'
own rollout machinery (`vf.load_environment` of the `forgec-verifiers` plugin, `Env.serving`, `Env.run_slot`, the
interception server) against an OpenAI-compatible endpoint, and prints one JSON line per episode.

    python tests/verifiers_driver.py run BUILD BASE_URL MODEL_PREFIX [TASK ...]
        the model of a task's rollouts is MODEL_PREFIX/<task id> (a scripted endpoint picks its replies by it);
        --max-turns N: the episode's budget; --agent-max-turns N, --agent-timeout S: verifiers' own limits on the agent seat
    python tests/verifiers_driver.py load BUILD [--env E] [--tasks T ...] [--plugin] [--harness ID]
        load the env and print its task ids, or the error (type and message) it raised
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys


def _episode_row(task_id: str, ep) -> dict:
    tr = ep.traces[0] if ep.traces else None
    return {
        "task_id": task_id, "ok": ep.ok, "errors": [f"{e.type}: {e.message}" for e in ep.errors],
        "reward": tr.reward if tr else None,
        "rewards": {k: (None if r is None else r.value) for k, r in tr.rewards.items()} if tr else {},
        "metrics": dict(tr.metrics) if tr else {},
        "info": tr.info.get("forgec") if tr else None,
        "trace_ok": tr.ok if tr else None,
        "trace_errors": [f"{e.type}: {e.message}" for e in tr.errors] if tr else [],
        "stop_condition": tr.stop_condition if tr else None,
        "num_turns": tr.num_turns if tr else 0,
        "messages": [m.model_dump(mode="json", exclude_none=True) for m in tr.messages] if tr else [],
    }


async def run(args) -> None:
    import verifiers.v1 as vf

    from forgec.adapters.verifiers_env import load_environment

    agent = {"max_turns": args.agent_max_turns} if args.agent_max_turns else {}
    if args.agent_timeout:
        agent["timeout"] = {"rollout": args.agent_timeout}
    env = load_environment(args.build, tasks=args.tasks or None, max_turns=args.max_turns, agent=agent)
    client = vf.EvalClientConfig(base_url=args.base_url, api_key_var="FORGEC_FAKE_MODEL_KEY")
    async with env.serving():
        for task in env.taskset:
            ctx = vf.ModelContext(model=f"{args.prefix}/{task.data.id}", client=client)
            (slot,) = env.slots(task, 1)
            ep = await env.run_slot(slot, ctx)
            print(json.dumps(_episode_row(task.data.id, ep)), flush=True)


def load(args) -> None:
    import verifiers.v1 as vf

    try:
        if args.plugin:  # the id path verifiers' own CLI takes: --env.taskset.id forgec-verifiers
            cfg = vf.resolve_env_config({"taskset": {"id": "forgec-verifiers", "build": args.build, "tasks": args.tasks or []}})
            env = vf.load_environment(cfg)
        else:
            from forgec.adapters.verifiers_env import load_environment

            agent = {"harness": {"id": args.harness}} if args.harness else None
            env = load_environment(args.build, env=args.env, tasks=args.tasks or None, agent=agent)
        ids = [t.data.id for t in env.taskset]
        print(json.dumps({"env": type(env).__name__, "config": type(env.config).__name__,
                          "harness": type(env._harnesses["agent"]).__name__, "tasks": ids,
                          "prompt": [m.model_dump(mode="json") for m in next(iter(env.taskset)).data.prompt]}))
    except Exception as e:  # noqa: BLE001 - the test reads what was raised
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("build")
    r.add_argument("base_url")
    r.add_argument("prefix")
    r.add_argument("tasks", nargs="*")
    r.add_argument("--max-turns", type=int, default=30, help="the episode's budget (forgec's)")
    r.add_argument("--agent-max-turns", type=int, default=0, help="verifiers' own turn limit of the agent seat")
    r.add_argument("--agent-timeout", type=float, default=0, help="verifiers' own time limit of the agent seat (s)")
    lo = sub.add_parser("load")
    lo.add_argument("build")
    lo.add_argument("--env")
    lo.add_argument("--tasks", nargs="*")
    lo.add_argument("--plugin", action="store_true")
    lo.add_argument("--harness", help="another harness id for the agent seat")
    args = p.parse_args()
    os.environ.setdefault("FORGEC_FAKE_MODEL_KEY", "fake")
    if args.cmd == "run":
        asyncio.run(run(args))
    else:
        load(args)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
