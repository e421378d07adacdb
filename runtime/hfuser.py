"""A simulated user played by a local transformers model, and the user-error rate (issue 26).

`forgec sft-user` fine-tunes a model on the scripted user's dialogues; `HFUser` plays a task's user
with such a model in-process (the prompt is `LLMUser`'s: the same system prompt, the agent speaking as
`user`), so its errors can be measured on CPU without a server. Served by vLLM, the same folder is an
OpenAI-compatible endpoint for `--user llm` / `rollout.user: llm` (docs/evolve.md).

`user_errors` adds rule checks to the MEU judge's verdict, each on the visible conversation: an
unknown volunteered (a value the scenario keeps from the user said before the agent said it), a write
confirmed that serves no intent (a "yes" to a proposal naming none of the task's writes with its
arguments), a fact contradicted (a known fact named with another value), a matching write not
confirmed, and no stop after the agent reported it was done (the last reply of a cut conversation).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import defaultdict
from typing import Any

from forgec.runtime.judge import RuleJudge
from forgec.runtime.reward import told
from forgec.runtime.scenario import opening, proposal_matches, proposes_write, scenario_of
from forgec.runtime.types import UserReply
from forgec.runtime.users import CONFIRM_RE, STOP, flip_roles, is_question, reports_completion, user_system_prompt, visible_turns

_MODELS: dict[str, tuple[Any, Any]] = {}
_LOCK = threading.Lock()
GREETING = "Hi! How can I help you today?"  # what LLMUser puts first when the agent has not spoken yet
_YES = re.compile(r"^\s*(?:yes|yeah|yep|sure|ok(?:ay)?|please (?:go ahead|do)|go ahead|correct|that's right)\b", re.I)


def _load(path: str) -> tuple[Any, Any]:
    with _LOCK:
        if path not in _MODELS:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            tok = AutoTokenizer.from_pretrained(path)
            model = AutoModelForCausalLM.from_pretrained(path)
            model.eval()
            _MODELS[path] = (tok, model)
        return _MODELS[path]


def user_conversation(task: Any, messages: list[dict]) -> list[dict]:
    """The conversation as the user model sees it (and is trained on): roles flipped, a greeting first."""
    convo = flip_roles(messages)
    if not convo or convo[0]["role"] != "user":
        convo.insert(0, {"role": "user", "content": GREETING})
    return convo


class HFUser:
    """The user of one task, played by a local causal LM (greedy), prompted as `LLMUser` is."""

    def __init__(self, task: Any, model_path: str, *, max_new_tokens: int = 64, max_turns: int = 10):
        self.task, self.path = task, str(model_path)
        self.max_new_tokens, self.max_turns = max_new_tokens, max_turns
        self.system_prompt = user_system_prompt(task)

    def reply_sync(self, messages: list[dict]) -> UserReply:
        import torch

        from forgec.train.template import end_of_turn, end_of_turn_id, render_segments
        from forgec.train.tokenize import tokenize_text

        n_user = sum(1 for s, _ in visible_turns(messages) if s == "user")
        if n_user == 0:
            return UserReply(opening(self.task))  # LLMUser opens with the request too
        if n_user > self.max_turns:
            return UserReply(STOP, stop=True)
        tok, model = _load(self.path)
        segs = render_segments(user_conversation(self.task, messages), None, self.system_prompt, add_generation_prompt=True, tokenizer=tok)
        ids = [i for s in segs for i in tokenize_text(tok, s.text)]
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        with torch.no_grad():
            x = torch.tensor([ids])
            out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=self.max_new_tokens, do_sample=False,
                                 pad_token_id=pad, eos_token_id=end_of_turn_id(tok))
        text = tok.decode(out[0, len(ids):].tolist(), skip_special_tokens=False).split(end_of_turn(tok))[0].strip()
        if STOP in text:
            return UserReply(text.replace(STOP, "").strip() or STOP, stop=True)
        return UserReply(text)

    async def reply(self, messages: list[dict]) -> UserReply:
        return await asyncio.to_thread(self.reply_sync, messages)


def user_errors(task: Any, messages: list[dict]) -> list[str]:
    """The rule checks' findings on one episode (empty: none), each a short sentence with the evidence."""
    sc = scenario_of(task)
    out: list[str] = []
    hidden = [v for v in sc.hidden if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v).strip()]
    turns = visible_turns(messages)
    last_agent, agent_said = "", ""
    for i, (who, text) in enumerate(turns):
        if who == "agent":
            last_agent, agent_said = text, agent_said + " " + text
            continue
        if i == 0 or STOP in text:
            continue  # the opening is the task's own request; a stop is the judge's to check (stopped early)
        for v in hidden:
            if told(v, text) and not told(v, agent_said):
                out.append(f"volunteered an unknown: {v!r} in {text!r}")
        matching = any(proposal_matches(last_agent, w) for w in sc.writes)
        if _YES.match(text) and proposes_write(last_agent, sc.writes) and not matching:
            out.append(f"confirmed a write that serves no intent: {last_agent!r}")
        if matching and CONFIRM_RE.search(last_agent.lower()) and not _YES.match(text):
            out.append(f"did not confirm a write it asked for: {text!r}")
        if reports_completion(last_agent) and not is_question(last_agent) and i == len(turns) - 1:
            out.append(f"did not stop when the agent was done: {text!r}")
        for k, v in sc.known.items():
            name = " ".join(k.split("_"))
            m = re.search(rf"\b{re.escape(name)} is ([^.,;]+)", text, re.I)
            if m and not isinstance(v, (dict, list)) and not told(v, m.group(1)):
                out.append(f"contradicted a fact: {name} is {m.group(1)!r}, not {v!r}")
    return out


def user_error_rates(build: Any, tasks: list[Any], user_factory: Any, agent_factory: Any) -> dict[str, dict]:
    """Per env: episodes, the MEU judge's user errors, the rule checks' errors, and the rate of episodes with either."""
    from forgec.runtime.episode import run_episode

    judge = RuleJudge()
    per: dict[str, dict] = defaultdict(lambda: {"episodes": 0, "judge": 0, "rules": 0, "either": 0})
    for t in tasks:
        agent = agent_factory(t)
        ep = run_episode(build, t, agent, user_factory(t), judge=judge, limits=agent.limits())
        j = bool(ep.judge and ep.judge.user_error)
        r = bool(user_errors(t, ep.messages))
        row = per[t.env]
        row["episodes"] += 1
        row["judge"] += j
        row["rules"] += r
        row["either"] += j or r
    return {env: {**row, "rate": round(row["either"] / row["episodes"], 4)} for env, row in sorted(per.items())}
