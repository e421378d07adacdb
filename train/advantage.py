"""Advantages: ERPO (per-environment std), GRPO (per-task std), none; MEU mask; dynamic filtering.

Notation: environment e, task (question) q, rollout j, reward R_qj, MEU mask m_qj
(1 = the judge found a user error: the rollout is out). Over UNMASKED rollouts only:

    erpo:  A_qj = (R_qj - mean_j R_qj) / (std{R_q'j' : q' in e} + eps)
    grpo:  A_qj = (R_qj - mean_j R_qj) / (std_j R_qj + eps)
    none:  A_qj =  R_qj - mean_j R_qj

std is the population std (ddof=0). ERPO's environment std is taken over EVERY unmasked
rollout of the environment played in the step (`env_pool`: kept groups, groups dynamic
filtering dropped, refills), as the AutoForge paper normalises over all questions and
trajectories of the environment: taken over the kept groups only it would be computed after
filtering removed every zero-variance group, which pulls every environment's std toward the
same value and erases the environment-to-environment scaling. Filtering then only drops
groups with no signal (their advantages are 0 either way). Masked rollouts get A = 0 and
weight 0: they are not in any mean, std, or the loss's token denominator.
Pure Python (no torch) so the math is testable by hand.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Literal, TypeVar

Mode = Literal["erpo", "grpo", "none"]
G = TypeVar("G")


@dataclass
class Rollout:
    env: str
    task_id: str
    reward: float
    masked: bool = False  # MEU: judged a simulated-user error
    group: int = 0  # index of the (task, step) group; equal task ids in one batch are different groups
    advantage: float = 0.0


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _std(xs: list[float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def _groups(rollouts: Iterable[Rollout]) -> dict[tuple[str, int], list[Rollout]]:
    out: dict[tuple[str, int], list[Rollout]] = defaultdict(list)
    for r in rollouts:
        out[(r.task_id, r.group)].append(r)
    return out


def compute_advantages(rollouts: list[Rollout], mode: Mode = "erpo", eps: float = 1e-4, meu_mask: bool = True,
                       env_pool: list[Rollout] | None = None) -> list[float]:
    """Set and return `advantage` for every rollout (in order).

    `env_pool`: every rollout of the step before dynamic filtering (ERPO's environment std is
    taken over its unmasked ones); None = `rollouts` themselves.
    """
    live = [r for r in rollouts if not (meu_mask and r.masked)]
    pool = live if env_pool is None else [r for r in env_pool if not (meu_mask and r.masked)]
    env_std = {}
    by_env: dict[str, list[float]] = defaultdict(list)
    for r in pool:
        by_env[r.env].append(r.reward)
    for e, rs in by_env.items():
        env_std[e] = _std(rs)
    for r in rollouts:
        r.advantage = 0.0
    for (_task, _g), members in _groups(live).items():
        rs = [r.reward for r in members]
        base = _mean(rs)
        if mode == "erpo":
            if members[0].env not in env_std:
                raise ValueError(f"env_pool has no unmasked rollout of environment {members[0].env!r}")
            denom = env_std[members[0].env] + eps
        elif mode == "grpo":
            denom = _std(rs) + eps
        elif mode == "none":
            denom = 1.0
        else:
            raise ValueError(f"unknown advantage mode {mode!r}")
        for r in members:
            r.advantage = (r.reward - base) / denom
    return [r.advantage for r in rollouts]


def zero_variance_groups(rollouts: list[Rollout], meu_mask: bool = True) -> list[tuple[str, int]]:
    """Groups whose unmasked rollouts all share one reward (or that have < 2 unmasked): no signal."""
    out = []
    for key, members in sorted(_groups(rollouts).items()):
        rs = [r.reward for r in members if not (meu_mask and r.masked)]
        if len(rs) < 2 or max(rs) == min(rs):
            out.append(key)
    return out


def advantage_stats(rollouts: list[Rollout], meu_mask: bool = True) -> dict[str, float]:
    live = [r.advantage for r in rollouts if not (meu_mask and r.masked)]
    if not live:
        return {"adv_mean": 0.0, "adv_std": 0.0, "adv_min": 0.0, "adv_max": 0.0, "adv_nonzero_frac": 0.0}
    return {
        "adv_mean": _mean(live),
        "adv_std": _std(live),
        "adv_min": min(live),
        "adv_max": max(live),
        "adv_nonzero_frac": sum(1 for a in live if abs(a) > 1e-12) / len(live),
    }


def has_signal(group: list[Rollout], meu_mask: bool = True) -> bool:
    rs = [r.reward for r in group if not (meu_mask and r.masked)]
    return len(rs) >= 2 and max(rs) != min(rs)


@dataclass
class FilterStats:
    filtered_groups: int = 0  # zero-variance groups dropped (all rounds)
    refill_rounds: int = 0  # extra rollout rounds run
    refilled_groups: int = 0  # groups with signal that the refill rounds contributed
    short_groups: int = 0  # how many groups the batch is still short after the bound


def dynamic_filter(groups: list[G], refill: Callable[[int, int], list[G]], max_rounds: int, meu_mask: bool = True,
                   rollouts_of: Callable[[G], list[Rollout]] | None = None) -> tuple[list[G], FilterStats]:
    """Drop zero-variance groups; ask `refill(n, round)` for n new groups, at most `max_rounds` times.

    A group is a list of rollouts, or anything `rollouts_of` maps to one (the trainer's groups
    carry their episodes too). Returns the kept groups (never more than the original count,
    in order: kept originals first, then refills) and the counts to log.
    """
    signal = (lambda g: has_signal(g, meu_mask)) if rollouts_of is None else (lambda g: has_signal(rollouts_of(g), meu_mask))
    target = len(groups)
    stats = FilterStats()
    kept = [g for g in groups if signal(g)]
    stats.filtered_groups = target - len(kept)
    rnd = 0
    while len(kept) < target and rnd < max_rounds:
        rnd += 1
        new = refill(target - len(kept), rnd)
        good = [g for g in new if signal(g)]
        stats.filtered_groups += len(new) - len(good)
        good = good[: target - len(kept)]
        stats.refilled_groups += len(good)
        kept += good
    stats.refill_rounds = rnd
    stats.short_groups = target - len(kept)
    return kept, stats
