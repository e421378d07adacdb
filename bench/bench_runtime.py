"""Runtime benchmark: episode throughput and the environment's share of episode time.

    python bench/bench_runtime.py [--build BUILD] [--seconds 3]

Without --build, compiles examples/ into a temporary folder (falls back to the
hand-made test build when the compiler fails). Prints a table against the
issue's goals:
* oracle agent + scripted user, one core: >= 1,000 episodes/s;
* with an agent that answers after a fixed 50 ms: environment < 1% of episode time.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def get_build(arg: str | None):
    from forgec.runtime import BuildError, load

    if arg:
        return load(arg), arg
    tmp = Path(tempfile.mkdtemp(prefix="bench_runtime_"))
    out = tmp / "build"
    subprocess.run([sys.executable, "-m", "forgec", "compile", str(REPO / "examples"), "-o", str(out), "-q", "--no-oracle"],
                   capture_output=True, text=True)
    try:
        b = load(out)
        if b.tasks:
            return b, "examples (compiled)"
    except BuildError:
        pass
    sys.path.insert(0, str(REPO / "tests"))
    from runtime_build import make_build

    return load(make_build(tmp / "fixture")), "tests/runtime_build.py fixture (compile failed)"


class SlowOracle:
    """The oracle, answering after a fixed delay (a stand-in for a model endpoint)."""

    def __init__(self, task, delay: float):
        from forgec.runtime.agents import OracleAgent

        self.inner = OracleAgent(task)
        self.delay = delay

    async def act(self, messages, tools):
        await asyncio.sleep(self.delay)
        return self.inner.act_sync(messages, tools)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--slow-episodes", type=int, default=40)
    args = ap.parse_args()

    from forgec.runtime.agents import OracleAgent
    from forgec.runtime.episode import arun_episode, run_episode_sync
    from forgec.runtime.eval import evaluate, oracle_self_check
    from forgec.runtime.judge import RuleJudge
    from forgec.runtime.users import ScriptedUser

    build, source = get_build(args.build)
    tasks = build.tasks
    calls = sum(len(t.gold_calls) for t in tasks) / len(tasks)
    print(f"build: {source}: {len(build.envs)} envs, {len(tasks)} tasks, {calls:.1f} gold calls/task")

    # 1. oracle + scripted user, synchronous driver, this one process (one core)
    rows = []
    for label, judge in (("oracle+scripted, sync", None), ("oracle+scripted+rule judge, sync", RuleJudge())):
        for t in tasks:  # warm-up: the first env per initial state is built from JSON, later ones are forks
            run_episode_sync(build, t, OracleAgent(t), ScriptedUser(t), judge=judge)
        n, t0, c0 = 0, time.perf_counter(), time.process_time()
        env_s = 0.0
        while time.perf_counter() - t0 < args.seconds:
            for t in tasks:
                ep = run_episode_sync(build, t, OracleAgent(t), ScriptedUser(t), judge=judge)
                assert ep.reward == 1.0, (t.id, ep.reward_breakdown, ep.error)
                env_s += ep.timings["env_s"]
                n += 1
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        # per core = per CPU-second of this single-threaded process (robust to other load on the machine)
        rows.append((f"{label}: episodes/s per core (CPU time)", f"{n / cpu:,.0f}", ">= 1,000", n / cpu >= 1000))
        rows.append((f"{label}: episodes/s (wall)", f"{n / dt:,.0f}", "(info)", None))
        rows.append((f"{label}: env share", f"{100 * env_s / dt:.0f}%", "(info)", None))

    # env creation: built from JSON vs forked from the pristine env of the same initial state
    t = tasks[0]
    mod = build.envs[t.env]
    state = build.initial_state(t)
    reps = 50
    t0 = time.perf_counter()
    for _ in range(reps):
        mod.Env(state).state_hash()
    fresh = (time.perf_counter() - t0) / reps
    build.new_env(t.env, t)
    t0 = time.perf_counter()
    for _ in range(reps * 20):
        build.new_env(t.env, t).state_hash()
    fork = (time.perf_counter() - t0) / (reps * 20)
    n_rec = sum(len(c) for c in state.get("entities", {}).values())
    rows.append((f"new env + hash ({n_rec} records): from JSON / forked", f"{fresh * 1e3:.2f} / {fork * 1e3:.3f} ms", "(info)", None))

    # 2. the same through asyncio (evaluate, 8 in flight)
    reps = max(1, int(2000 / len(tasks)))
    t0 = time.perf_counter()
    res = evaluate(build, OracleAgent, ScriptedUser, None, k=reps, concurrency=8)
    dt = time.perf_counter() - t0
    rows.append(("oracle+scripted, evaluate(concurrency=8): episodes/s", f"{len(res.episodes) / dt:,.0f}", "(info)", None))

    # 3. oracle self-check as the compiler runs it
    t0 = time.perf_counter()
    rep = oracle_self_check(build)
    dt = time.perf_counter() - t0
    rows.append((f"oracle_self_check: {rep['tasks']} tasks", f"{dt * 1000:.0f} ms", "pass rate 1.0", rep["pass_rate"] == 1.0))

    # 4. environment share with an agent that answers after 50 ms
    async def slow_run():
        eps = []
        for i in range(args.slow_episodes):
            t = tasks[i % len(tasks)]
            eps.append(await arun_episode(build, t, SlowOracle(t, 0.05), ScriptedUser(t)))
        return eps

    eps = asyncio.run(slow_run())
    total = sum(e.timings["total_s"] for e in eps)
    env = sum(e.timings["env_s"] for e in eps)
    share = 100 * env / total
    rows.append((f"50 ms agent: env share of episode time ({len(eps)} episodes)", f"{share:.3f}%", "< 1%", share < 1.0))
    overhead = sum(e.timings["total_s"] - e.timings["agent_s"] for e in eps) / total * 100
    rows.append(("50 ms agent: all non-agent time (env+user+loop)", f"{overhead:.3f}%", "(info)", None))

    w = max(len(r[0]) for r in rows)
    print(f"{'metric':<{w}}  {'measured':>12}  {'goal':>14}  ok")
    print("-" * (w + 36))
    for name, val, goal, ok in rows:
        print(f"{name:<{w}}  {val:>12}  {goal:>14}  {'' if ok is None else ('yes' if ok else 'NO')}")


if __name__ == "__main__":
    main()
