"""Episode -> token sequence(s) + loss mask over exactly the agent-generated tokens.

Two sources of assistant tokens:
* the rollout recorded them (`AgentReply.prompt_token_ids`, `.token_ids`): used verbatim;
  with interleaved thinking every turn's prompt extends the previous turn's prompt +
  generation, so the whole episode is ONE sequence (checked, not assumed);
* no ids (oracle/SFT trajectories, API agents): the conversation is rendered with the
  training template segment by segment, exactly as the rollout backends build prompts,
  and the assistant segments (body + end-of-turn token) are the trainable ones. The
  template is the tokenizer's own chat template when it has one (the format the model
  was tuned and is served with), else the built-in ChatML (train/template.py).

System, user, tool-result and template tokens (`<|im_start|>assistant\\n`, the newline
after `<|im_end|>`, or their counterparts in the model's template) never enter the loss.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from forgec.train.template import render_segments


@dataclass
class Sample:
    """One training sequence."""

    input_ids: list[int]
    loss_mask: list[int]  # 1 = agent-generated token (its logprob is trained)
    rollout_logprobs: list[float] | None = None  # per position (0.0 where mask is 0), when the rollout gave them
    advantage: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)  # env, task_id, group, index, reward

    @property
    def num_loss_tokens(self) -> int:
        return sum(self.loss_mask)


@functools.lru_cache(maxsize=8192)
def _encode(tokenizer: Any, text: str) -> tuple[int, ...]:
    return tuple(tokenizer(text, add_special_tokens=False)["input_ids"])


def tokenize_text(tokenizer: Any, text: str) -> list[int]:
    """Template text -> ids, never adding BOS/EOS of its own.

    Cached: every episode of an env re-renders the same system+tools header and template pieces.
    """
    return list(_encode(tokenizer, text)) if text else []


def replies_to_samples(replies: list[Any]) -> list[Sample]:
    """Rollout replies carrying token ids -> as few sequences as possible, ids verbatim.

    A reply whose prompt extends the running sequence is appended to it; otherwise
    (dropped thinking, a context reset) a new sequence starts.
    """
    samples: list[Sample] = []
    seq: list[int] = []
    mask: list[int] = []
    lps: list[float] = []
    for r in replies:
        prompt = list(r.prompt_token_ids or [])
        gen = list(r.token_ids or [])
        if not gen:
            continue
        if seq and prompt[: len(seq)] != seq:
            samples.append(Sample(seq, mask, lps))
            seq, mask, lps = [], [], []
        new_prompt = prompt[len(seq):]
        seq = seq + new_prompt + gen
        mask = mask + [0] * len(new_prompt) + [1] * len(gen)
        glp = list(r.logprobs) if r.logprobs is not None and len(r.logprobs) == len(gen) else [0.0] * len(gen)
        lps = lps + [0.0] * len(new_prompt) + glp
    if seq:
        samples.append(Sample(seq, mask, lps))
    return samples


def messages_to_samples(tokenizer: Any, messages: list[dict], tools: list[dict] | None, system: str | None,
                        keep_thinking: bool = True) -> list[Sample]:
    """Render + tokenize a conversation (no rollout ids); trainable = assistant segments.

    Rendered in the tokenizer's own chat template when it has one (see train/template.py).

    With keep_thinking=False the context of each assistant turn differs (earlier
    reasoning dropped), so each assistant turn becomes its own sample.
    """
    assistant_idx = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if not assistant_idx:
        return []
    cuts = [assistant_idx[-1]] if keep_thinking else assistant_idx
    samples = []
    for cut in cuts:
        segs = render_segments(messages[: cut + 1], tools, system, keep_thinking=keep_thinking, tokenizer=tokenizer)
        ids: list[int] = []
        mask: list[int] = []
        for s in segs:
            t = tokenize_text(tokenizer, s.text)
            trainable = s.trainable and (keep_thinking or s.message == cut)
            ids += t
            mask += [1 if trainable else 0] * len(t)
        # drop the template text after the last end-of-turn token (ChatML's newline)
        while mask and mask[-1] == 0:
            ids.pop()
            mask.pop()
        samples.append(Sample(ids, mask, None))
    return samples


def episode_to_samples(tokenizer: Any, messages: list[dict], replies: list[Any], tools: list[dict] | None,
                       system: str | None, keep_thinking: bool = True) -> list[Sample]:
    """Training samples of one episode: rollout ids when every reply has them, else rendering."""
    gen = [r for r in replies if getattr(r, "token_ids", None)]
    if gen and all(getattr(r, "prompt_token_ids", None) for r in gen):
        return replies_to_samples(gen)
    return messages_to_samples(tokenizer, messages, tools, system, keep_thinking)


def masked_spans(sample: Sample) -> list[list[int]]:
    """Contiguous runs of trainable token ids (one per assistant turn)."""
    spans: list[list[int]] = []
    cur: list[int] = []
    for tok, m in zip(sample.input_ids, sample.loss_mask):
        if m:
            cur.append(tok)
        elif cur:
            spans.append(cur)
            cur = []
    if cur:
        spans.append(cur)
    return spans
