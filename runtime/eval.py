"""Evaluation: k trials per task, pass^k (tau2-bench's estimator), and the oracle self-check.

pass^k is the probability that *all* k i.i.d. trials of a task succeed,
estimated per task from c successes in n trials as C(c, k) / C(n, k) and
averaged over tasks (tau2-bench). Episodes run concurrently on one event loop;
a failed episode is recorded, never fatal; an interrupt (Ctrl-C) returns what
finished, marked `interrupted`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from forgec.runtime.llmclient import aclose_clients
from forgec.runtime.episode import END_ERROR, Episode, EpisodeLimits, arun_episode, run_episode_sync
from forgec.runtime.toolcalls import scrub, text_ok
from forgec.tasks import Task
from forgec.runtime.agents import OracleAgent
from forgec.runtime.users import ScriptedUser


def pass_hat_k(c: int | Sequence[int], n: int | Sequence[int], k: int) -> float:
    """tau2-bench's pass^k: C(c, k) / C(n, k) for one task, or its mean over tasks when `c` is a sequence.

    `n` is the number of trials (one int for all tasks, or one per task); every n must be >= k.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    if isinstance(c, int):
        assert isinstance(n, int)
        if n < k:
            raise ValueError(f"pass^{k} needs at least {k} trials, got {n}")
        if not 0 <= c <= n:
            raise ValueError(f"successes {c} not in [0, {n}]")
        return math.comb(c, k) / math.comb(n, k)
    cs = list(c)
    ns = [n] * len(cs) if isinstance(n, int) else list(n)
    if len(ns) != len(cs):
        raise ValueError("c and n must have the same length")
    if not cs:
        return 0.0
    return sum(pass_hat_k(ci, ni, k) for ci, ni in zip(cs, ns)) / len(cs)


def _table(episodes: list[Episode], k: int) -> dict:
    """pass^1..pass^k over tasks, using only tasks with at least j finished trials for pass^j."""
    per_task: dict[str, list[float]] = {}
    for e in episodes:
        per_task.setdefault(e.task_id, []).append(e.reward)
    out = {}
    for j in range(1, k + 1):
        cs, ns = [], []
        for rewards in per_task.values():
            if len(rewards) >= j:
                cs.append(sum(1 for r in rewards if r >= 1.0))
                ns.append(len(rewards))
        out[str(j)] = round(pass_hat_k(cs, ns, j), 6) if cs else None
    return out


@dataclass
class EvalResult:
    k: int
    episodes: list[Episode]  # sorted by (task_id, trial)
    tasks: list[str]
    interrupted: bool = False
    pass_hat_k: dict = field(default_factory=dict)  # {"overall": {"1": x, ...}, "per_env": {env: {"1": x, ...}}}

    def __post_init__(self) -> None:
        self.episodes.sort(key=lambda e: (e.task_id, e.trial))
        if not self.pass_hat_k:
            envs = sorted({e.env for e in self.episodes})
            self.pass_hat_k = {
                "overall": _table(self.episodes, self.k),
                "per_env": {env: _table([e for e in self.episodes if e.env == env], self.k) for env in envs},
            }

    def summary(self) -> dict:
        eps = self.episodes
        ends: dict[str, int] = {}
        for e in eps:
            ends[e.end_reason] = ends.get(e.end_reason, 0) + 1
        return {
            "tasks": len(self.tasks),
            "episodes": len(eps),
            "expected_episodes": len(self.tasks) * self.k,
            "mean_reward": round(sum(e.reward for e in eps) / len(eps), 6) if eps else None,
            "errors": sum(1 for e in eps if e.error),
            "user_errors": sum(1 for e in eps if e.user_error),
            "end_reasons": dict(sorted(ends.items())),
            "tokens": {
                "prompt_tokens": sum(e.tokens.get("prompt_tokens", 0) for e in eps),
                "completion_tokens": sum(e.tokens.get("completion_tokens", 0) for e in eps),
            },
        }

    def to_json(self, metadata: dict | None = None) -> dict:
        """run_results.json: a dbt-style `metadata` block, top-level `pass_hat_k`, a summary and per-task results."""
        per_task = []
        for tid in self.tasks:
            rs = [e for e in self.episodes if e.task_id == tid]
            per_task.append({
                "task_id": tid,
                "env": rs[0].env if rs else tid.split("/")[0],
                "trials": len(rs),
                "successes": sum(1 for e in rs if e.reward >= 1.0),
                "rewards": [e.reward for e in rs],
                "end_reasons": [e.end_reason for e in rs],
                "user_errors": [e.user_error for e in rs],
            })
        return {
            "metadata": dict(metadata or {}),
            "k": self.k,
            "interrupted": self.interrupted,
            "pass_hat_k": self.pass_hat_k,
            "summary": self.summary(),
            "results": per_task,
        }

    def write(self, out_dir: str | Path, metadata: dict | None = None) -> tuple[Path, Path]:
        """Write run_results.json and episodes.jsonl (sorted by task and trial) into `out_dir`."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        rr, ej = out / "run_results.json", out / "episodes.jsonl"
        tmp = ej.with_suffix(".jsonl.tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for e in self.episodes:
                f.write(e.dumps() + "\n")
        tmp.replace(ej)
        text = json.dumps(self.to_json(metadata), indent=2, sort_keys=True, ensure_ascii=False)
        if not text_ok(text):  # metadata from argv (undecodable bytes arrive as lone surrogates): keep the file UTF-8
            text = scrub(text)
        rr.write_text(text + "\n", encoding="utf-8")
        return rr, ej


def _call_factory(factory: Callable, task: Task, trial: int) -> Any:
    """Factories take (task) or (task, trial); the trial lets a factory vary seeds across trials."""
    try:
        params = [p for p in inspect.signature(factory).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):
        params = []
    return factory(task, trial) if len(params) >= 2 else factory(task)


async def aevaluate(build: Any, agent_factory: Callable, user_factory: Callable, judge: Any, k: int, tasks: list[str] | None = None,
                    concurrency: int = 8, *, limits: EpisodeLimits = EpisodeLimits(), on_episode: Callable[[Episode], None] | None = None) -> EvalResult:
    """Async `evaluate`: k trials of every task, at most `concurrency` episodes in flight."""
    chosen = build.tasks_for(tasks)
    sem = asyncio.Semaphore(max(1, concurrency))
    done: list[Episode] = []

    async def one(task: Task, trial: int) -> None:
        async with sem:
            try:
                agent = _call_factory(agent_factory, task, trial)
                user = _call_factory(user_factory, task, trial)
            except Exception as e:  # noqa: BLE001 - a party that cannot be made fails its episode, not the run
                ep = Episode(task_id=task.id, env=task.env, seed=trial, trial=trial, end_reason=END_ERROR,
                             error=f"cannot create agent/user: {type(e).__name__}: {e}")
            else:
                ep = await arun_episode(build, task, agent, user, judge=judge, limits=limits, seed=trial, trial=trial)
            done.append(ep)
            if on_episode is not None:
                on_episode(ep)

    jobs = [asyncio.ensure_future(one(t, trial)) for t in chosen for trial in range(k)]
    interrupted = False
    try:
        await asyncio.gather(*jobs)
    except (asyncio.CancelledError, KeyboardInterrupt):
        interrupted = True
        for j in jobs:
            j.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
    finally:
        await aclose_clients()
    return EvalResult(k=k, episodes=done, tasks=[t.id for t in chosen], interrupted=interrupted)


def evaluate(build: Any, agent_factory: Callable, user_factory: Callable, judge: Any, k: int, tasks: list[str] | None = None,
             concurrency: int = 8, *, limits: EpisodeLimits = EpisodeLimits(), on_episode: Callable[[Episode], None] | None = None) -> EvalResult:
    """Run k trials of every task (or of `tasks`: ids or env names) and compute pass^1..pass^k per env and overall."""
    return asyncio.run(aevaluate(build, agent_factory, user_factory, judge, k, tasks, concurrency, limits=limits, on_episode=on_episode))


def oracle_self_check(build: Any, tasks: list[str] | None = None) -> dict:
    """Run the oracle agent with the scripted user on every task; every valid task must score 1.0.

    In-process and synchronous (no event loop): the compiler calls it at the end
    of `forgec compile` and records the result in the manifest, so the result
    holds no timings and is deterministic. `per_env[env]` has tasks, passed,
    pass_rate and failures ("<task id>: <reason>"); top-level `failures` has the
    details (failed calls, state diff against gold).
    """

    failures = []
    chosen = build.tasks_for(tasks)
    per_env: dict[str, dict[str, int]] = {}
    for t in chosen:
        agent = OracleAgent(t)
        ep = run_episode_sync(build, t, agent, ScriptedUser(t), limits=agent.limits())
        pe = per_env.setdefault(t.env, {"tasks": 0, "passed": 0, "pass_rate": 1.0, "failures": []})
        pe["tasks"] += 1
        if ep.reward >= 1.0:
            pe["passed"] += 1
            pe["pass_rate"] = round(pe["passed"] / pe["tasks"], 6)
            continue
        rb = ep.reward_breakdown
        if ep.error:
            reason = f"{ep.end_reason}: {ep.error}"
        elif not rb.get("state_match"):
            d = ep.state_diff or {}
            reason = f"final state differs from gold ({len(d.get('missing', []))} missing, {len(d.get('extra', []))} extra changes)"
        else:
            untold = [i for i, ok in enumerate(rb.get("tells_told", [])) if not ok]
            reason = f"tell values not recognised as told: {untold}"
        bad_calls = [f"{e.name}: {e.error}" for e in ep.tool_events if not e.ok]
        pe["pass_rate"] = round(pe["passed"] / pe["tasks"], 6)
        pe["failures"].append(f"{t.id}: {reason}")
        failures.append({"task_id": t.id, "reason": reason, "end_reason": ep.end_reason, "failed_calls": bad_calls[:5],
                         "state_diff": ep.state_diff})
    n = len(chosen)
    passed = n - len(failures)
    return {
        "tasks": n,
        "passed": passed,
        "pass_rate": round(passed / n, 6) if n else 1.0,
        "per_env": dict(sorted(per_env.items())),
        "failures": failures,
    }
