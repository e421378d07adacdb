"""Token-level PPO-clip loss with clip-higher, optional KL to a frozen reference, token-mean.

For every trainable token t of every sequence i (advantage A_i, ratio r = exp(logp - logp_old)):

    l_t = -min(r * A_i, clip(r, 1 - eps_low, 1 + eps_high) * A_i) + beta * k3(ref, logp)

with k3 = exp(ref - logp) - (ref - logp) - 1 (Schulman's unbiased, non-negative KL
estimator). The step's loss is sum_t l_t / N where N counts ALL trainable tokens of the
step over every micro-batch and process (token-mean aggregation, DAPO-style): the caller
passes N, so micro-batching and data parallelism do not change the gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def sequence_logprobs(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """log p(x_t | x_<t) for t = 1..T-1: shape [B, T-1] (position t-1 holds token t).

    With `mask` ([B, T-1], the trainable positions) the LM head runs only on the positions
    some row trains on (HF `logits_to_keep` with indices); others are 0. Prompts are most of
    an agent episode, and [T, vocab] logits of a 150k-vocab model dominate memory and time.
    """
    if mask is None:
        out = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
        logits = out.logits[:, :-1, :].float()
        targets = input_ids[:, 1:].unsqueeze(-1)
        picked = torch.gather(logits, -1, targets).squeeze(-1)
        return picked - torch.logsumexp(logits, dim=-1)
    keep = mask.bool().any(0).nonzero().squeeze(-1)
    if keep.numel() == 0:
        keep = torch.zeros(1, dtype=torch.long, device=input_ids.device)
    out = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, logits_to_keep=keep)
    logits = out.logits.float()  # [B, K, V]: position keep[k] predicts token keep[k] + 1
    targets = input_ids[:, keep + 1].unsqueeze(-1)
    lp = torch.gather(logits, -1, targets).squeeze(-1) - torch.logsumexp(logits, dim=-1)
    full = torch.zeros(input_ids.shape[0], input_ids.shape[1] - 1, dtype=lp.dtype, device=lp.device)
    return full.index_copy(1, keep, lp)


@dataclass
class LossParts:
    loss: torch.Tensor  # sum over tokens / denom (what backward() gets)
    pg_sum: float
    kl_sum: float
    clipped_tokens: float
    tokens: float
    approx_kl_old_sum: float


def ppo_clip_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
                  denom: float, eps_low: float = 0.2, eps_high: float = 0.28,
                  ref_logp: torch.Tensor | None = None, beta: float = 0.0) -> LossParts:
    """logp/old_logp/ref_logp/mask: [B, T-1]; advantages: [B]. Returns the summed loss / denom."""
    mask = mask.to(logp.dtype)
    adv = advantages.to(logp.dtype).unsqueeze(-1)
    log_ratio = logp - old_logp
    ratio = torch.exp(log_ratio)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) * adv
    pg = -torch.minimum(unclipped, clipped)
    tok = pg
    kl = torch.zeros_like(logp)
    if ref_logp is not None and beta > 0:
        d = ref_logp - logp
        kl = torch.exp(d) - d - 1.0
        tok = tok + beta * kl
    loss = (tok * mask).sum() / denom
    with torch.no_grad():
        was_clipped = ((adv > 0) & (ratio > 1.0 + eps_high)) | ((adv < 0) & (ratio < 1.0 - eps_low))
        return LossParts(
            loss=loss,
            pg_sum=float((pg * mask).sum()),
            kl_sum=float((kl * mask).sum()),
            clipped_tokens=float((was_clipped.to(mask.dtype) * mask).sum()),
            tokens=float(mask.sum()),
            approx_kl_old_sum=float((-log_ratio * mask).sum()),
        )


def sft_loss(logp: torch.Tensor, mask: torch.Tensor, denom: float) -> torch.Tensor:
    """Cross-entropy on trainable tokens, token-mean over the step (denom = all its tokens)."""
    return -(logp * mask.to(logp.dtype)).sum() / denom
