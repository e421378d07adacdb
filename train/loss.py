"""Decoupled PPO-clip (AReaL) with a capped importance weight, clip-higher, optional KL to a reference, token-mean.

Three policies meet in an off-policy update (AReaL's decoupled PPO, arXiv 2505.24298):
the behaviour policy pi_behav that sampled the tokens (the rollout engine's stored
log-probs: vLLM, or a stale copy in asynchronous mode), the proximal policy pi_prox (the
trainer's weights at the start of the update, log-probs recomputed by the trainer), and
the policy being trained pi_theta. For every trainable token t of sequence i (advantage A_i):

    r   = pi_theta / pi_prox                        (the ratio the clip is centred on)
    w   = min(pi_prox / pi_behav, C)                (behaviour correction, truncated at C = algo.is_cap)
    l_t = -w * min(r * A_i, clip(r, 1 - eps_low, 1 + eps_high) * A_i) + beta * k3(ref, logp)

In synchronous mode pi_prox and pi_behav hold the same weights and w is exactly token-level
truncated importance sampling (TIS: the engine-vs-trainer numerical mismatch); with stale
rollouts it also corrects the staleness. Rows without stored log-probs get w = 1.
k3 = exp(ref - logp) - (ref - logp) - 1 (Schulman's unbiased, non-negative KL estimator).
The step's loss is sum_t l_t / N where N counts ALL trainable tokens of the step over every
micro-batch and process (token-mean aggregation, DAPO-style): the caller passes N, so
micro-batching and data parallelism do not change the gradient.

Log-probs are those of the sampling distribution: the logits divided by the rollout
temperature (vLLM returns the same with `--logprobs-mode processed_logprobs`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def _tempered_lp(logits: torch.Tensor, targets: torch.Tensor, temperature: float) -> torch.Tensor:
    """log softmax(logits / T)[target] in fp32 (T <= 0, greedy, counts as 1)."""
    logits = logits.float()
    if temperature > 0 and temperature != 1.0:
        logits = logits / temperature
    return torch.gather(logits, -1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)


def sequence_logprobs(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, mask: torch.Tensor | None = None,
                      temperature: float = 1.0, chunk_tokens: int = 0) -> torch.Tensor:
    """log p_T(x_t | x_<t) for t = 1..T-1: shape [B, T-1] (position t-1 holds token t), p_T = softmax(logits / T).

    With `mask` ([B, T-1], the trainable positions) the LM head runs only on the positions
    some row trains on; others are 0. Prompts are most of an agent episode, and [T, vocab]
    logits of a 150k-vocab model dominate memory and time. With `chunk_tokens` > 0 the LM
    head runs on the final hidden states chunk by chunk (at most `chunk_tokens` rows x
    positions per chunk), each chunk under activation checkpointing, so fp32 logits over
    the vocabulary never exist for more than one chunk, in forward or backward.
    """
    T1 = input_ids.shape[1] - 1
    if mask is None:
        keep = torch.arange(T1, device=input_ids.device)
    else:
        keep = mask.bool().any(0).nonzero().squeeze(-1)
        if keep.numel() == 0:
            keep = torch.zeros(1, dtype=torch.long, device=input_ids.device)
    if chunk_tokens <= 0:
        out = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                    logits_to_keep=keep if mask is not None else 0)
        logits = out.logits if mask is not None else out.logits[:, :-1, :]  # [B, K, V]: position keep[k] predicts keep[k] + 1
        lp = _tempered_lp(logits, input_ids[:, keep + 1], temperature)
    else:
        # the final (normed) hidden states; the LM head runs on no position inside the forward
        none = torch.zeros(0, dtype=torch.long, device=input_ids.device)
        out = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, logits_to_keep=none,
                    output_hidden_states=True)
        hidden = out.hidden_states[-1]
        head = _unwrap(model).get_output_embeddings()
        step = max(1, chunk_tokens // max(input_ids.shape[0], 1))
        parts = []
        for i in range(0, keep.numel(), step):
            idx = keep[i:i + step]
            h, tg = hidden[:, idx, :], input_ids[:, idx + 1]
            if torch.is_grad_enabled() and h.requires_grad:
                from torch.utils.checkpoint import checkpoint

                parts.append(checkpoint(_head_lp, head, h, tg, temperature, use_reentrant=False))
            else:
                parts.append(_head_lp(head, h, tg, temperature))
        lp = torch.cat(parts, dim=1)
    if mask is None:
        return lp
    full = torch.zeros(input_ids.shape[0], T1, dtype=lp.dtype, device=lp.device)
    return full.index_copy(1, keep, lp)


def _head_lp(head, h: torch.Tensor, targets: torch.Tensor, temperature: float) -> torch.Tensor:
    return _tempered_lp(head(h), targets, temperature)


def _unwrap(model):
    """The HF model inside a DeepSpeed engine (its forward still runs through the engine)."""
    return getattr(model, "module", model)


@dataclass
class LossParts:
    loss: torch.Tensor  # sum over tokens / denom (what backward() gets)
    pg_sum: float
    kl_sum: float
    clipped_tokens: float
    tokens: float
    approx_kl_old_sum: float
    # behaviour correction / mismatch, over tokens with stored rollout log-probs
    is_tokens: float = 0.0
    is_weight_sum: float = 0.0  # raw pi_prox / pi_behav, before the cap
    is_weight_max: float = 0.0
    is_capped_tokens: float = 0.0
    mismatch_k1_sum: float = 0.0  # log pi_behav - log pi_prox (k1 of KL(behav || prox))
    mismatch_k3_sum: float = 0.0  # rho - 1 - log rho, rho = pi_prox / pi_behav (k3 of the same KL)


def ppo_clip_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
                  denom: float, eps_low: float = 0.2, eps_high: float = 0.28,
                  ref_logp: torch.Tensor | None = None, beta: float = 0.0,
                  behav_logp: torch.Tensor | None = None, behav_mask: torch.Tensor | None = None,
                  is_cap: float = 2.0) -> LossParts:
    """Decoupled PPO (module docstring). logp/old_logp (= proximal)/ref_logp/behav_logp/mask: [B, T-1];
    advantages: [B]. `behav_mask` marks the positions whose behaviour log-prob is known (default: all
    of `mask` when `behav_logp` is given). Without `behav_logp`, w = 1: plain PPO-clip on old_logp."""
    mask = mask.to(logp.dtype)
    adv = advantages.to(logp.dtype).unsqueeze(-1)
    log_ratio = logp - old_logp
    ratio = torch.exp(log_ratio)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) * adv
    pg = -torch.minimum(unclipped, clipped)
    stats: dict[str, float] = {}
    if behav_logp is not None:
        bmask = mask if behav_mask is None else mask * behav_mask.to(logp.dtype)
        with torch.no_grad():
            d = (old_logp.detach() - behav_logp) * bmask  # log rho; 0 where unknown -> w = 1
            raw = torch.exp(d)
            w = torch.clamp(raw, max=is_cap)
            on = bmask > 0
            stats = {
                "is_tokens": float(bmask.sum()),
                "is_weight_sum": float((raw * bmask).sum()),
                "is_weight_max": float(raw[on].max()) if bool(on.any()) else 0.0,
                "is_capped_tokens": float(((raw > is_cap) & on).to(logp.dtype).sum()),
                "mismatch_k1_sum": float((-d * bmask).sum()),
                "mismatch_k3_sum": float(((raw - 1.0 - d) * bmask).sum()),
            }
        pg = w * pg
    tok = pg
    kl = torch.zeros_like(logp)
    if ref_logp is not None and beta > 0:
        dr = ref_logp - logp
        kl = torch.exp(dr) - dr - 1.0
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
            **stats,
        )


def sft_loss(logp: torch.Tensor, mask: torch.Tensor, denom: float) -> torch.Tensor:
    """Cross-entropy on trainable tokens, token-mean over the step (denom = all its tokens)."""
    return -(logp * mask.to(logp.dtype)).sum() / denom
