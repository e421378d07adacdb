"""The off-policy objective and its statistics, on hand-computed values and second implementations:
decoupled PPO with the capped importance weight (TIS), tempered and chunked log-probs, micro-batches by
token budget, ERPO's environment std before filtering, and the LLM MEU judge pool in a real training run."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import threading

import pytest
import torch
from fakeserver import FakeServer
from forgec.train.advantage import Rollout, compute_advantages, dynamic_filter
from forgec.train.loss import ppo_clip_loss, sequence_logprobs
from forgec.train.tokenize import Sample

L = math.log


# ---------------------------------------------------------------- decoupled PPO + truncated IS


def test_decoupled_loss_and_is_weight_hand_computed():
    """pi_theta .6 .3 .5, pi_prox .5 .5 .5, pi_behav .25 .5 .1, C = 2: r = 1.2 .6 1, w = min(2 1 5, 2) = 2 1 2."""
    theta = torch.tensor([[L(0.6), L(0.3), L(0.5)]], requires_grad=True)
    prox = torch.tensor([[L(0.5), L(0.5), L(0.5)]])
    behav = torch.tensor([[L(0.25), L(0.5), L(0.1)]])
    mask = torch.ones(1, 3)
    for A, terms, grads in [
        # A > 0: min(r, clip(r, .8, 1.28)) = 1.2, .6, 1; every r inside or below the clip: d/dlogp = -w r A
        (1.0, [-2 * 1.2, -1 * 0.6, -2 * 1.0], [-2 * 1.2, -1 * 0.6, -2 * 1.0]),
        # A < 0: max(r, clip(r)) = 1.2, .8 (r = .6 clipped up: no gradient), 1
        (-1.0, [2 * 1.2, 1 * 0.8, 2 * 1.0], [2 * 1.2, 0.0, 2 * 1.0]),
    ]:
        theta.grad = None
        parts = ppo_clip_loss(theta, prox, torch.tensor([A]), mask, denom=3.0, eps_low=0.2, eps_high=0.28,
                              behav_logp=behav, is_cap=2.0)
        assert float(parts.loss.detach()) == pytest.approx(sum(terms) / 3, rel=1e-6)
        parts.loss.backward()
        assert theta.grad[0].tolist() == pytest.approx([g / 3 for g in grads], rel=1e-5, abs=1e-7)
    # statistics of the raw weight pi_prox / pi_behav = 2, 1, 5 (before the cap)
    assert parts.is_tokens == 3 and parts.is_weight_sum == pytest.approx(8.0) and parts.is_weight_max == pytest.approx(5.0)
    assert parts.is_capped_tokens == 1
    # k1 = log behav - log prox; k3 = rho - 1 - log rho with rho = prox / behav
    assert parts.mismatch_k1_sum == pytest.approx(L(0.5) + 0 + L(0.2), rel=1e-6)
    assert parts.mismatch_k3_sum == pytest.approx((1 - L(2)) + 0 + (4 - L(5)), rel=1e-6)


def test_the_clip_is_centred_on_the_proximal_policy_not_the_behaviour_one():
    """At the start of an update theta == prox: nothing is clipped however far the behaviour policy is
    (a ratio against pi_behav = e^1.5 would clip every token); the gradient is w * A, w capped at C."""
    theta = torch.tensor([[L(0.5), L(0.2)]], requires_grad=True)
    behav = theta.detach() - 1.5
    parts = ppo_clip_loss(theta, theta.detach(), torch.tensor([1.0]), torch.ones(1, 2), denom=2.0,
                          behav_logp=behav, is_cap=3.0)
    assert parts.clipped_tokens == 0
    parts.loss.backward()
    assert theta.grad[0].tolist() == pytest.approx([-3.0 / 2, -3.0 / 2])  # e^1.5 = 4.48 capped at 3
    # rows whose log-probs the engine did not store (behav_mask 0) get weight 1 and stay out of the stats
    theta.grad = None
    parts = ppo_clip_loss(theta, theta.detach(), torch.tensor([1.0]), torch.ones(1, 2), denom=2.0, behav_logp=behav,
                          behav_mask=torch.tensor([[1.0, 0.0]]), is_cap=3.0)
    parts.loss.backward()
    assert theta.grad[0].tolist() == pytest.approx([-3.0 / 2, -1.0 / 2]) and parts.is_tokens == 1


def test_behaviour_logprobs_mask_marks_rows_the_engine_scored():
    from forgec.train.trainer import behaviour_logprobs, collate

    a = Sample([5, 6, 7, 8], [0, 0, 1, 1], [0.0, 0.0, -0.5, -0.25])
    b = Sample([5, 9, 10], [0, 1, 1], None)
    _ids, _att, mask, _adv = collate([a, b], 0, "cpu")
    out, known = behaviour_logprobs([a, b], torch.full(mask.shape, -3.0), with_mask=True)
    assert out.tolist() == [[0.0, -0.5, -0.25], [-3.0, -3.0, -3.0]]
    assert known.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


# ---------------------------------------------------------------- log-probs: tempered, chunked


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from forgec.train.tiny import build_tiny_model
    from transformers import AutoModelForCausalLM

    path = build_tiny_model(tmp_path_factory.mktemp("tiny") / "m", seed=3)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    V = model.config.vocab_size
    ids = torch.randint(0, V, (3, 40))
    att = torch.ones_like(ids)
    att[2, 30:] = 0
    mask = torch.zeros(3, 39)
    mask[0, 5:20] = 1
    mask[1, 12:38] = 1
    mask[2, 3:9] = 1
    return model, ids, att, mask


def test_tempered_logprobs_equal_log_softmax_of_logits_over_t(tiny):
    """The trainer's log-probs at T = 0.5 are HF's log_softmax(logits / T) gathered on the same tokens, on every
    path (whole sequence, trainable positions only, chunked), and differ from the T = 1 values."""
    model, ids, att, mask = tiny
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=att).logits[:, :-1].float()
        want = torch.log_softmax(logits / 0.5, -1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        t1 = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        full = sequence_logprobs(model, ids, att, temperature=0.5)
        part = sequence_logprobs(model, ids, att, mask, temperature=0.5)
        chunked = sequence_logprobs(model, ids, att, mask, temperature=0.5, chunk_tokens=16)
    assert torch.allclose(full, want, atol=1e-5)
    assert torch.allclose(part * mask, want * mask, atol=1e-5)
    assert torch.allclose(chunked * mask, want * mask, atol=1e-5)
    assert ((want - t1).abs() * mask).max() > 0.1


def test_chunked_logprobs_and_gradients_equal_unchunked(tiny):
    """LM head on chunks of at most 16 (rows x positions) under checkpointing == one pass, values and gradients."""
    model, ids, att, mask = tiny
    grads = []
    outs = []
    for chunk in (0, 16, 7):
        model.zero_grad()
        lp = sequence_logprobs(model, ids, att, mask, temperature=0.7, chunk_tokens=chunk)
        (lp * mask).sum().backward()
        outs.append(lp.detach())
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    for lp, g in zip(outs[1:], grads[1:]):
        assert (lp - outs[0]).abs().max() < 1e-6
        # fp32 summation order: gradients up to 7 in size agree to 1e-5
        assert (g - grads[0]).abs().max() < 1e-5 * max(1.0, float(grads[0].abs().max()))
    with torch.no_grad():  # whole sequence, no mask
        assert (sequence_logprobs(model, ids, att, chunk_tokens=10) - sequence_logprobs(model, ids, att)).abs().max() < 1e-6


# ---------------------------------------------------------------- micro-batches by token budget


def test_token_budget_packing_respects_the_budget_and_keeps_the_loss(tiny):
    from forgec.train.trainer import collate, pack_by_tokens

    model, _ids, _att, _mask = tiny
    V = model.config.vocab_size
    g = torch.Generator().manual_seed(1)
    samples = []
    for i, n in enumerate([30, 7, 12, 55, 9, 21, 16, 40, 5]):
        ids = torch.randint(0, V, (n,), generator=g).tolist()
        lm = [0] * (n // 3) + [1] * (n - n // 3)
        samples.append(Sample(ids, lm, None, advantage=(-1) ** i * (0.3 + 0.1 * i)))
    budget = 64
    packed = pack_by_tokens(samples, budget)
    assert sorted(id(s) for ch in packed for s in ch) == sorted(id(s) for s in samples)
    for ch in packed:  # padded size of each micro-batch, as collate builds it; only a lone sample may exceed
        assert len(ch) * max(len(s.input_ids) for s in ch) <= budget or len(ch) == 1
    assert any(len(ch) > 1 for ch in packed) and len(packed) < len(samples)
    N = float(sum(s.num_loss_tokens for s in samples))

    def loss_and_grad(chunks):
        model.zero_grad()
        total = 0.0
        for ch in chunks:
            ids, att, mask, adv = collate(ch, 0, "cpu")
            lp = sequence_logprobs(model, ids, att, mask)
            parts = ppo_clip_loss(lp, lp.detach(), adv, mask, denom=N)
            parts.loss.backward()
            total += float(parts.loss.detach())
        return total, torch.cat([p.grad.flatten() for p in model.parameters()])

    big_loss, big_grad = loss_and_grad([samples])
    loss, grad = loss_and_grad(packed)
    assert loss == pytest.approx(big_loss, abs=1e-6)
    assert torch.allclose(grad, big_grad, atol=1e-6, rtol=1e-5)
    # the token mean: -sum_i A_i * n_i / N at ratio 1
    assert big_loss == pytest.approx(-sum(s.advantage * s.num_loss_tokens for s in samples) / N, rel=1e-5)


# ---------------------------------------------------------------- ERPO before filtering


def test_erpo_env_std_is_taken_before_dynamic_filtering():
    """Env A: groups [1,0,0,0], [0,0,0,0], [0,0,0,0]; env B: [1,1,0,0], [1,1,1,1]. Filtering keeps one group of
    each. Over every rollout: std_A = sqrt(11)/12, std_B = sqrt(3)/4 (ratio 1.567); over the kept groups only it
    would be sqrt(3)/4 and 1/2 (ratio 1.155): the environment-to-environment scaling is kept, not erased."""
    eps = 1e-4
    played = []
    for g, rs in enumerate([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]):
        played += [Rollout("A", f"a{g}", float(r), group=g) for r in rs]
    for g, rs in enumerate([[1, 1, 0, 0], [1, 1, 1, 1]]):
        played += [Rollout("B", f"b{g}", float(r), group=10 + g) for r in rs]
    groups = {}
    for r in played:
        groups.setdefault((r.task_id, r.group), []).append(r)
    kept, stats = dynamic_filter(list(groups.values()), lambda n, rnd: [], max_rounds=0)
    assert stats.filtered_groups == 3 and len(kept) == 2
    batch = [r for g in kept for r in g]
    adv = compute_advantages(batch, "erpo", eps, env_pool=played)
    std_a, std_b = math.sqrt(11) / 12, math.sqrt(3) / 4
    want = [0.75 / (std_a + eps)] + [-0.25 / (std_a + eps)] * 3 + [0.5 / (std_b + eps)] * 2 + [-0.5 / (std_b + eps)] * 2
    assert adv == pytest.approx(want, rel=1e-12)
    # the scale ratio between the environments' advantages is std_B / std_A, as over all rollouts
    assert adv[0] / adv[4] == pytest.approx((0.75 / std_a) / (0.5 / std_b), rel=1e-3)
    after = compute_advantages([Rollout(r.env, r.task_id, r.reward, group=r.group) for r in batch], "erpo", eps)
    assert after[0] != pytest.approx(adv[0], rel=1e-3)  # what the std after filtering would have given
    # masked rollouts leave the pool: masking B's all-ones group's rollouts changes std_B to the kept group's 1/2
    masked_pool = [Rollout(r.env, r.task_id, r.reward, r.group >= 11, r.group) for r in played]
    adv_m = compute_advantages(batch, "erpo", eps, env_pool=masked_pool)
    assert adv_m[4] == pytest.approx(0.5 / (0.5 + eps), rel=1e-12)


# ---------------------------------------------------------------- a real run: T < 1, token budget, LLM judge pool


def _judge_responder(seen: list, lock: threading.Lock):
    """The fake judge: a user error exactly on the thermostat env's episodes (its goals say 'degrees')."""

    def respond(body: dict) -> dict:
        prompt = body["messages"][0]["content"]
        goal = re.search(r"^Task goal: (.*)$", prompt, re.MULTILINE).group(1)
        with lock:
            seen.append(goal)
        return {"content": json.dumps({"user_error": "degrees" in goal, "reason": "fake"}), "delay": 0.05}

    return respond


def test_training_run_with_tempered_rollouts_token_budget_and_an_llm_judge_pool(tmp_path):
    """forgec train at T = 0.7 (hf backend), micro-batches by token budget, MEU by an LLM judge on a pool of two
    fake OpenAI servers: the stored and recomputed log-probs agree (IS weight 1, mismatch KL ~ 0, which fails if
    either side forgets the temperature), both servers judge, and the masked rate is logged per env."""
    from forgec.train.toybuild import make_toy_build

    make_toy_build(tmp_path / "build", tasks_per_env=4)
    seen: list = []
    lock = threading.Lock()
    with FakeServer(_judge_responder(seen, lock)) as j1, FakeServer(_judge_responder(seen, lock)) as j2:
        sets = ["optim.steps=2", "rollout.tasks_per_step=4", "rollout.group_size=2", "rollout.max_new_tokens=24",
                "rollout.max_turns=2", "rollout.temperature=0.7", "algo.dynamic_filtering=false", "checkpoint.every=0",
                "checkpoint.export_hf=false", "logging.tensorboard=false", "optim.micro_batch_tokens=400",
                "rollout.judge=llm", f"rollout.judge_base_urls=[{j1.url}, {j2.url}]", "rollout.judge_model=j"]
        env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu", PYTHONUNBUFFERED="1")
        r = subprocess.run([sys.executable, "-m", "forgec", "train", "build", "-c", "cpu-tiny", "-o", "rl",
                            *[y for s in sets for y in ("--set", s)]], check=False, cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        assert j1.requests and j2.requests  # the pool spread the episodes
    recs = [json.loads(x) for x in (tmp_path / "rl" / "metrics.jsonl").read_text().splitlines()]
    assert len(recs) == 2 and len(seen) == sum(x["episodes"] for x in recs) == 16
    for m in recs:
        assert m["meu_masked_env"] == {"lights": 0.0, "thermostat": 1.0}
        assert m["meu_masked"] == 4
        # only lights episodes train; their stored (tempered) log-probs equal the trainer's recomputation
        assert m["is_tokens"] == m["loss_tokens"] > 0
        assert abs(m["is_weight_mean"] - 1.0) < 1e-4 and m["is_weight_max"] < 1.001 and m["is_capped_frac"] == 0.0
        assert abs(m["mismatch_kl_k1"]) < 1e-4 and 0.0 <= m["mismatch_kl_k3"] < 1e-6
        assert m["micro_batches"] >= 2 and math.isfinite(m["loss"])


UPDATE_SCRIPT = r'''
import json, os, sys
os.environ.update(DS_ACCELERATOR="cpu", HF_HUB_OFFLINE="1")
from forgec.train.trainer import Trainer, ds_config, init_distributed, load_model, make_engine, prepare_environment
prepare_environment()
init_distributed()
import torch
from forgec.train.config import load_config
from forgec.train.tokenize import Sample

torch.set_num_threads(1)
g = torch.Generator().manual_seed(5)
samples = []
for i, n in enumerate([30, 7, 12, 55, 9, 21, 16, 40, 5, 26]):
    ids = torch.randint(0, 700, (n,), generator=g).tolist()
    samples.append(Sample(ids, [0] * (n // 3) + [1] * (n - n // 3), None, advantage=(-1) ** i * (0.3 + 0.1 * i)))
out = {}
for mode, sets in (("count", ["optim.micro_batches=3"]), ("budget", ["optim.micro_batch_tokens=60"])):
    cfg = load_config("cpu-tiny", sets + ["rollout.temperature=0.8", "algo.logprob_chunk_tokens=64"])
    conf = ds_config(cfg, 1, cfg.optim.micro_batches)
    eng = make_engine(cfg, load_model(sys.argv[1], cfg, conf), conf, 1e-2, 10)
    t = Trainer.__new__(Trainer)  # the real update on a real engine, without rollouts
    t.cfg, t.engine, t.world, t.pad_id, t.device, t.ref, t.steps_per_update = cfg, eng, 1, 0, eng.device, None, 1
    before = torch.cat([p.detach().flatten().clone() for p in eng.module.parameters()])
    m = t.update(samples)
    after = torch.cat([p.detach().flatten() for p in eng.module.parameters()])
    out[mode] = {"loss": m["loss"], "grad_norm": m["grad_norm"], "micro_batches": m["micro_batches"],
                 "moved": float((after - before).abs().max()),
                 "params": after.tolist()}
print(json.dumps(out))
'''


def test_token_budget_update_equals_fixed_micro_batches_under_deepspeed(tiny, tmp_path):
    """Trainer.update on a real DeepSpeed ZeRO-2 engine: micro-batches packed under a 60-token budget (a variable
    count, the boundary set by hand) take the same optimizer step as exactly 3 micro-batches."""
    model, *_ = tiny
    model.save_pretrained(tmp_path / "m")
    (tmp_path / "s.py").write_text(UPDATE_SCRIPT)
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu", MASTER_PORT=str(29000 + os.getpid() % 1000))
    r = subprocess.run([sys.executable, str(tmp_path / "s.py"), str(tmp_path / "m")], check=False, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    count, budget = out["count"], out["budget"]
    assert count["micro_batches"] == 3 and budget["micro_batches"] > 3
    assert count["moved"] > 1e-4  # the step changed the weights
    assert budget["loss"] == pytest.approx(count["loss"], rel=1e-6, abs=1e-9)
    # the accumulated gradient is the same (its norm, before clipping) ...
    assert budget["grad_norm"] == pytest.approx(count["grad_norm"], rel=1e-5)
    # ... and so is the step, up to fp32 summation order (Adam's first step is ~lr * sign(g), so a gradient
    # element near 0 amplifies that noise; a step taken at the wrong boundary or scale would differ by ~lr)
    diff = max(abs(a - b) for a, b in zip(count["params"], budget["params"]))
    assert diff < 1e-2 * count["moved"]


@pytest.mark.parametrize("bad, needle", [
    (["rollout.top_p=0.9"], "top_p=0.9 is not supported for training"),
    (["rollout.judge=llm"], "judge=llm needs rollout.judge_base_urls"),
    (["algo.is_cap=0.5"], "algo.is_cap"),
])
def test_objective_config_refusals_are_clear(bad, needle):
    from forgec.train.config import ConfigError, load_config

    with pytest.raises(ConfigError) as e:
        load_config("cpu-tiny", bad)
    assert needle in str(e.value)
