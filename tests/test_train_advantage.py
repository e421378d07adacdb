"""Advantage math on hand-computed batches: ERPO vs GRPO, MEU masking, zero variance, dynamic filtering."""

from __future__ import annotations

import math
import random

import pytest

from forgec.train.advantage import Rollout, compute_advantages, dynamic_filter, zero_variance_groups

EPS = 1e-4


def batch():
    rs = []
    for j, r in enumerate([1, 0, 1, 0]):
        rs.append(Rollout("A", "q1", r, group=0))
    for r in [1, 1, 1, 0]:
        rs.append(Rollout("A", "q2", r, group=1))
    for r in [1, 0, 0, 0]:
        rs.append(Rollout("B", "q3", r, group=2))
    return rs


def test_erpo_hand_computed():
    rs = batch()
    adv = compute_advantages(rs, "erpo", EPS)
    # env A: rewards 1,0,1,0,1,1,1,0 -> mean 5/8, population std sqrt(15/64)
    std_a = math.sqrt(15 / 64)
    # env B: 1,0,0,0 -> std sqrt(3/16)
    std_b = math.sqrt(3 / 16)
    want = [0.5 / (std_a + EPS), -0.5 / (std_a + EPS)] * 2
    want += [0.25 / (std_a + EPS)] * 3 + [-0.75 / (std_a + EPS)]
    want += [0.75 / (std_b + EPS)] + [-0.25 / (std_b + EPS)] * 3
    assert adv == pytest.approx(want, rel=1e-12)


def test_grpo_hand_computed():
    adv = compute_advantages(batch(), "grpo", EPS)
    s1, s2, s3 = 0.5, math.sqrt(3 / 16), math.sqrt(3 / 16)
    want = [0.5 / (s1 + EPS), -0.5 / (s1 + EPS)] * 2
    want += [0.25 / (s2 + EPS)] * 3 + [-0.75 / (s2 + EPS)]
    want += [0.75 / (s3 + EPS)] + [-0.25 / (s3 + EPS)] * 3
    assert adv == pytest.approx(want, rel=1e-12)


def test_none_is_mean_centred_only():
    adv = compute_advantages(batch(), "none", EPS)
    assert adv == pytest.approx([0.5, -0.5, 0.5, -0.5, 0.25, 0.25, 0.25, -0.75, 0.75, -0.25, -0.25, -0.25])


def test_erpo_and_grpo_differ_exactly_where_stds_differ():
    """Random batches: per rollout, ERPO == GRPO iff the env std equals the task std (or the numerator is 0)."""
    rng = random.Random(7)
    for _ in range(200):
        rs = []
        for q in range(rng.randint(1, 5)):
            env = rng.choice(["A", "B", "C"])
            for _j in range(rng.randint(2, 5)):
                rs.append(Rollout(env, f"q{q}", float(rng.choice([0, 1, 1, 0.5])), group=q))
        e = compute_advantages([Rollout(r.env, r.task_id, r.reward, group=r.group) for r in rs], "erpo", EPS)
        g = compute_advantages([Rollout(r.env, r.task_id, r.reward, group=r.group) for r in rs], "grpo", EPS)
        n = compute_advantages([Rollout(r.env, r.task_id, r.reward, group=r.group) for r in rs], "none", EPS)
        for i, r in enumerate(rs):
            env_rs = [x.reward for x in rs if x.env == r.env]
            q_rs = [x.reward for x in rs if x.task_id == r.task_id]
            std = lambda v: math.sqrt(sum((x - sum(v) / len(v)) ** 2 for x in v) / len(v))  # noqa: E731
            same_std = std(env_rs) == std(q_rs)
            if n[i] == 0:
                assert e[i] == g[i] == 0
            elif same_std:
                assert e[i] == g[i]
            else:
                assert e[i] != g[i]


def test_meu_masked_rollouts_change_nothing_else():
    base = batch()
    adv_base = compute_advantages(base, "erpo", EPS)
    for mode in ("erpo", "grpo", "none"):
        adv_base = compute_advantages(batch(), mode, EPS)
        extra = batch()
        # judged user errors with extreme rewards, in both envs and in existing groups
        extra.insert(2, Rollout("A", "q1", 1.0, masked=True, group=0))
        extra.insert(7, Rollout("A", "q2", 0.0, masked=True, group=1))
        extra.append(Rollout("B", "q3", 1.0, masked=True, group=2))
        adv = compute_advantages(extra, mode, EPS)
        masked_adv = [a for a, r in zip(adv, extra) if r.masked]
        kept_adv = [a for a, r in zip(adv, extra) if not r.masked]
        assert masked_adv == [0.0, 0.0, 0.0]
        assert kept_adv == adv_base
        # with the mask off they do count
        adv_off = compute_advantages(extra, mode, EPS, meu_mask=False)
        assert [a for a, r in zip(adv_off, extra) if not r.masked] != adv_base


def test_zero_variance_groups_get_zero_and_no_nan():
    rs = [Rollout("A", "q1", 1.0, group=0) for _ in range(4)] + [Rollout("A", "q2", 0.0, group=1) for _ in range(4)]
    for mode in ("erpo", "grpo", "none"):
        adv = compute_advantages(rs, mode, EPS)
        assert adv == [0.0] * 8
    # an env whose every reward is equal: std 0, advantages 0 (no division blow-up)
    rs = [Rollout("B", "q", 0.0, group=0) for _ in range(3)]
    assert compute_advantages(rs, "erpo", EPS) == [0.0] * 3
    # one masked rollout leaves a single live one: no signal
    rs = [Rollout("C", "q", 1.0, group=0), Rollout("C", "q", 0.0, masked=True, group=0)]
    assert zero_variance_groups(rs) == [("q", 0)]
    assert zero_variance_groups(rs, meu_mask=False) == []


def test_equal_task_ids_in_different_groups_are_separate_questions():
    rs = [Rollout("A", "q", 1.0, group=0), Rollout("A", "q", 0.0, group=0), Rollout("A", "q", 1.0, group=1), Rollout("A", "q", 1.0, group=1)]
    adv = compute_advantages(rs, "none", EPS)
    assert adv == [0.5, -0.5, 0.0, 0.0]


def _group(task, rewards, masked=()):
    return [Rollout("A", task, r, masked=i in masked) for i, r in enumerate(rewards)]


def test_dynamic_filter_refills_up_to_the_bound():
    groups = [_group("a", [1, 0]), _group("b", [1, 1]), _group("c", [0, 0]), _group("d", [0, 1])]
    calls = []

    def refill(n, rnd):
        calls.append((n, rnd))
        # round 1: one good, one flat; round 2: one good
        return [_group(f"r{rnd}", [0, 1]), _group("flat", [1, 1])][:n] if rnd == 1 else [_group("r2", [1, 0])][:n]

    kept, st = dynamic_filter(groups, refill, max_rounds=3)
    assert [g[0].task_id for g in kept] == ["a", "d", "r1", "r2"]
    assert calls == [(2, 1), (1, 2)]
    assert (st.filtered_groups, st.refill_rounds, st.refilled_groups, st.short_groups) == (3, 2, 2, 0)


def test_dynamic_filter_stops_at_bound_and_reports_shortfall():
    groups = [_group("a", [1, 1]), _group("b", [0, 0]), _group("c", [1, 0])]
    kept, st = dynamic_filter(groups, lambda n, rnd: [_group("z", [0, 0]) for _ in range(n)], max_rounds=2)
    assert [g[0].task_id for g in kept] == ["c"]
    assert (st.filtered_groups, st.refill_rounds, st.refilled_groups, st.short_groups) == (6, 2, 0, 2)
    kept, st = dynamic_filter(groups, lambda n, rnd: pytest.fail("no refill with bound 0"), max_rounds=0)
    assert st.short_groups == 2


def test_dynamic_filter_on_groups_that_carry_more_than_rollouts():
    """The trainer's groups hold episodes too: `rollouts_of` reaches the rewards, the objects come back as given."""
    class Carrier:
        def __init__(self, name, rewards, masked=()):
            self.name, self.rollouts = name, _group(name, rewards, masked)

    # "m": the only differing reward is masked (MEU), so the group has no signal
    groups = [Carrier("a", [1, 1]), Carrier("b", [0, 1]), Carrier("m", [0, 1, 1], masked=(0,))]
    kept, st = dynamic_filter(groups, lambda n, rnd: [Carrier(f"r{i}", [1, 0]) for i in range(n)], max_rounds=1,
                              rollouts_of=lambda g: g.rollouts)
    assert [g.name for g in kept] == ["b", "r0", "r1"] and all(isinstance(g, Carrier) for g in kept)
    assert (st.filtered_groups, st.refill_rounds, st.refilled_groups, st.short_groups) == (2, 1, 2, 0)
    kept, _ = dynamic_filter(groups, lambda n, rnd: [], max_rounds=0, meu_mask=False, rollouts_of=lambda g: g.rollouts)
    assert [g.name for g in kept] == ["b", "m"]
