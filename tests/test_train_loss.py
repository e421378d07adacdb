"""PPO-clip loss on hand-computed values; token-mean aggregation; config loading and docs sync."""

from __future__ import annotations

import math

import pytest
import torch

from forgec.train.loss import ppo_clip_loss, sft_loss


def test_ppo_clip_hand_computed():
    # one sequence, 4 token positions, the 4th masked out
    logp = torch.tensor([[math.log(0.5), math.log(0.9), math.log(0.1), math.log(0.3)]])
    old = torch.tensor([[math.log(0.5), math.log(0.6), math.log(0.2), math.log(0.3)]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
    # ratios: 1.0, 1.5, 0.5
    for A, want_terms, clipped in [
        (2.0, [-2.0, -(1.28 * 2.0), -(0.5 * 2.0)], 1),  # A>0: min(r A, clip(r) A) -> 1.5 clipped to 1.28
        (-1.0, [1.0, 1.5, 0.8], 1),  # A<0: 0.5 clipped up to 0.8; -min(-r, -clip) = max(r, clip)
    ]:
        parts = ppo_clip_loss(logp, old, torch.tensor([A]), mask, denom=3.0, eps_low=0.2, eps_high=0.28)
        assert float(parts.loss) == pytest.approx(sum(want_terms) / 3.0, rel=1e-6)
        assert parts.tokens == 3.0 and parts.clipped_tokens == clipped


def test_kl_term_is_k3_estimator():
    logp = torch.tensor([[math.log(0.5), math.log(0.2)]])
    ref = torch.tensor([[math.log(0.25), math.log(0.4)]])
    mask = torch.ones(1, 2)
    parts = ppo_clip_loss(logp, logp.clone(), torch.tensor([0.0]), mask, denom=2.0, ref_logp=ref, beta=0.1)
    k3 = lambda p, q: q / p - math.log(q / p) - 1  # noqa: E731  (exp(ref-logp) - (ref-logp) - 1)
    want = 0.1 * (k3(0.5, 0.25) + k3(0.2, 0.4)) / 2
    assert float(parts.loss) == pytest.approx(want, rel=1e-6)
    assert parts.kl_sum == pytest.approx(k3(0.5, 0.25) + k3(0.2, 0.4), rel=1e-6)


def test_token_mean_is_independent_of_micro_batching():
    """Sum of micro-batch losses with the step's token count as denominator == one big batch's token mean."""
    torch.manual_seed(0)
    w = torch.randn(5, requires_grad=True)
    lens = [3, 7, 2, 5]
    seqs = [torch.randn(n, 5) for n in lens]
    adv = [0.5, -1.0, 2.0, 0.1]

    def logp_of(x):
        return torch.log_softmax(torch.stack([x @ w, torch.zeros(len(x))], -1), -1)[:, 0].unsqueeze(0)

    N = sum(lens)
    total = 0
    for x, a in zip(seqs, adv):
        lp = logp_of(x)
        total = total + ppo_clip_loss(lp, lp.detach(), torch.tensor([a]), torch.ones_like(lp), denom=N).loss
    g_micro = torch.autograd.grad(total, w)[0]
    # reference: explicit per-token mean of -A * ratio over all tokens (ratio = 1 at the start)
    ref = sum((-a * torch.exp(logp_of(x) - logp_of(x).detach())).sum() for x, a in zip(seqs, adv)) / N
    g_ref = torch.autograd.grad(ref, w)[0]
    assert torch.allclose(g_micro, g_ref, atol=1e-6)
    # not the per-sequence mean (which weights short sequences more)
    seq_mean = sum((-a * torch.exp(logp_of(x) - logp_of(x).detach())).mean() for x, a in zip(seqs, adv)) / len(seqs)
    assert not torch.allclose(torch.autograd.grad(seq_mean, w)[0], g_ref, atol=1e-4)


def test_sft_loss_is_masked_token_mean_nll():
    logp = torch.log(torch.tensor([[0.5, 0.25, 0.1]]))
    mask = torch.tensor([[0.0, 1.0, 1.0]])
    assert float(sft_loss(logp, mask, denom=2.0)) == pytest.approx(-(math.log(0.25) + math.log(0.1)) / 2)


# ---------------------------------------------------------------- config


def test_shipped_configs_validate_and_overrides_apply():
    from forgec.train.config import load_config

    for name in ("cpu-tiny", "qwen3-8b-zero3", "qwen3-30b-a3b-zero3"):
        cfg = load_config(name)
        assert cfg.deepspeed.config in ("ds_zero2.json", "ds_zero3.json")
    cfg = load_config("cpu-tiny", ["algo.advantage=grpo", "algo.beta=0.05", "rollout.backend=vllm", "optim.steps=7",
                                   "template.keep_thinking=false"])
    assert (cfg.algo.advantage, cfg.algo.beta, cfg.rollout.backend, cfg.optim.steps, cfg.template.keep_thinking) == ("grpo", 0.05, "vllm", 7, False)


@pytest.mark.parametrize("bad, needle", [
    (["algo.advantage=ppo"], "algo.advantage"),
    (["optim.steps=0"], "optim.steps"),
    (["algo.nope=1"], "algo.nope"),
    (["rollout"], "key=value"),
])
def test_bad_overrides_are_clear_errors(bad, needle):
    from forgec.train.config import ConfigError, load_config

    with pytest.raises(ConfigError) as e:
        load_config("cpu-tiny", bad)
    assert needle in str(e.value)


def test_every_config_field_has_help_and_docs_are_in_sync(repo):
    from pydantic import BaseModel

    from forgec.train.config import TrainConfig, training_doc

    for name, f in TrainConfig.model_fields.items():
        assert f.description, name
        if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel):
            for sub, g in f.annotation.model_fields.items():
                assert g.description, f"{name}.{sub}"
    assert (repo / "docs" / "training.md").read_text() == training_doc(), "regenerate: python -m forgec.train.config > docs/training.md"


def test_cli_help_does_not_import_torch(repo):
    import subprocess
    import sys

    code = "import sys, forgec.cli; assert 'torch' not in sys.modules, 'torch imported'; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo)
    assert out.returncode == 0, out.stderr


def test_masked_logprobs_equal_full_logprobs_on_trainable_positions():
    """The LM head on trainable positions only (logits_to_keep) gives the same logprobs there."""
    from transformers import AutoModelForCausalLM, Qwen3Config

    from forgec.train.loss import sequence_logprobs

    torch.manual_seed(0)
    cfg = Qwen3Config(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1, head_dim=16, max_position_embeddings=128)
    model = AutoModelForCausalLM.from_config(cfg).eval()
    ids = torch.randint(0, 97, (3, 20))
    att = torch.ones_like(ids)
    att[2, 15:] = 0
    mask = torch.zeros(3, 19)
    mask[0, 5:9] = 1
    mask[1, 12:18] = 1
    mask[2, 3:4] = 1
    with torch.no_grad():
        full = sequence_logprobs(model, ids, att)
        part = sequence_logprobs(model, ids, att, mask)
    assert torch.allclose(full * mask, part * mask, atol=1e-5)
    assert (part[mask.bool().any(0).logical_not().unsqueeze(0).expand_as(part)] == 0).all()
