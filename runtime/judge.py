"""MEU judges: did the simulated user err in this episode? (the trainer masks such rollouts)

* `RuleJudge` is exact for scripted users: it reads the user's "My <fact> is
  <value>." statements and the agent's questions, and flags a hallucinated
  fact (not in the task), a wrong value, a fact withheld after the agent asked
  for it, a value the user cannot know (an id the agent must look up) said before
  the agent said it, and a stop while the agent was waiting for an answer.
* `LLMJudge` asks a model (through the openai client) for a JSON verdict
  `{"user_error": bool, "reason": str}`; malformed judge output is re-asked once
  and otherwise read leniently, never raised.
"""

from __future__ import annotations

import ast
import json
import random
import re
from dataclasses import asdict, dataclass, field

from forgec.runtime.llmclient import LazyClient, LLMError, RetryPolicy, chat
from forgec.runtime.reward import told
from forgec.runtime.users import CONFIRM_RE, STOP, facts_mentioned, is_question, reports_completion, say, split_name, visible_turns
from forgec.tasks import Task
from forgec.runtime.scenario import opening, proposes_write, said_facts, scenario_of


@dataclass
class JudgeVerdict:
    user_error: bool
    reason: str
    errors: list[str] = field(default_factory=list)  # one line per detected problem
    judge: str = "rule"  # "rule" | "llm"
    raw: str | None = None  # the LLM judge's raw output
    error: str | None = None  # the judge itself failed (request or parse); user_error is then False

    def to_json(self) -> dict:
        return asdict(self)


_MY_RE = re.compile(r"\b(?:My|The) ([A-Za-z0-9 #_-]{1,80}?) is (.+?)\.(?=\s+(?:My|The)\s|\s*$)", re.DOTALL)


class RuleJudge:
    """Exact judge for scripted users: compares what the user revealed with the task's user facts."""

    def judge_sync(self, task: Task, messages: list[dict]) -> JudgeVerdict:

        sc = scenario_of(task)
        facts = said_facts(sc.known)  # what the user knows, as it says it (record facts field by field)
        by_words = {" ".join(split_name(k)): k for k in facts}
        errors: list[str] = []
        turns = visible_turns(messages)
        for i, (speaker, text) in enumerate(turns):
            if speaker != "user":
                continue
            body = text.replace(STOP, "").strip()
            if i > 0:  # the opening is the task's own instruction
                for m in _MY_RE.finditer(body):
                    words, value = m.group(1).strip().lower(), m.group(2).strip()
                    name = by_words.get(words)
                    if name is None:
                        errors.append(f"hallucinated fact: the user stated its {words!r}, which the task does not give it")
                    elif value != say(facts[name]):
                        errors.append(f"wrong value: the user said its {words} is {value!r}, the task says {say(facts[name])!r}")
            heard = " ".join(t for sp, t in turns[:i] if sp == "agent")
            for h in sc.hidden:  # a value the user cannot know (looked up by the agent), said before the agent said it
                if isinstance(h, str) and len(h) > 2 and h in body and h not in heard:
                    errors.append(f"unknown info: the user stated {h!r}, which it does not know (the agent must look it up)")
            prev = turns[i - 1] if i > 0 and turns[i - 1][0] == "agent" else None
            if prev is None:
                if i == 0 and STOP in text and not body:
                    errors.append("stopped early: the user stopped before stating its request")
                continue
            agent_text = prev[1]
            waiting = is_question(agent_text) and not reports_completion(agent_text)
            stopped = STOP in text
            if stopped and waiting:
                errors.append("stopped early: the user ended the conversation while the agent was waiting for an answer")
            # a proposal of a change is confirmed or refused, not a question about the facts it mentions
            proposal = waiting and CONFIRM_RE.search(agent_text.lower()) and proposes_write(agent_text, sc.writes)
            if waiting and not stopped and not proposal:
                for name in facts_mentioned(agent_text, facts):
                    if not told(facts[name], body):
                        errors.append(f"withheld fact: the agent asked for {name!r} and the user did not give it")
        if errors:
            return JudgeVerdict(user_error=True, reason=errors[0], errors=errors, judge="rule")
        return JudgeVerdict(user_error=False, reason="the user stated only its facts, correctly, and answered what it was asked", judge="rule")

    async def judge(self, task: Task, messages: list[dict]) -> JudgeVerdict:
        return self.judge_sync(task, messages)


JUDGE_PROMPT = """You audit a simulated customer in a conversation with a customer-service agent.
The customer was instructed with the task below. Decide whether the CUSTOMER (not the agent) made an error:
- stated a fact that is not in its known facts, or a wrong value for a known fact (hallucination);
- refused or failed to give a known fact the agent asked for (withholding);
- contradicted itself;
- ended the conversation (the marker {stop}) before the agent finished or while the agent was waiting for an answer;
- stated a value of something it does not know (listed below), or confirmed a change it did not want.
Agent mistakes are NOT customer errors. Saying it does not know an unknown item, and refusing a change
that is not one of its intents, are correct.

Task goal: {goal}
Customer's first message: {instruction}
Known facts:
{facts}
Does not know: {unknown}
Intents: {intents}

Conversation:
{transcript}

Answer with one JSON object and nothing else: {{"user_error": true or false, "reason": "<one sentence>"}}"""


def judge_prompt(task: Task, messages: list[dict]) -> str:

    sc = scenario_of(task)
    facts = "\n".join(f"- {k}: {json.dumps(v, ensure_ascii=False)}" for k, v in sorted(sc.known.items())) or "- (none)"
    transcript = "\n".join(f"{'CUSTOMER' if s == 'user' else 'AGENT'}: {t}" for s, t in visible_turns(messages))
    intents = "; ".join(i.text + (f" (only if {i.condition})" if i.condition else "") for i in sc.intents) or "(none)"
    return JUDGE_PROMPT.format(stop=STOP, goal=task.user.goal, instruction=opening(task), facts=facts, transcript=transcript,
                               unknown=", ".join(sc.unknown) or "(nothing listed)", intents=intents)


_JSON_OBJ_RE = re.compile(r"\{.*\}", re.DOTALL)
_BOOL_RE = re.compile(r"[\"']?user_error[\"']?\s*[:=]\s*[\"']?(true|false|yes|no)\b", re.IGNORECASE)


def parse_verdict(text: str) -> tuple[bool, str] | None:
    """(user_error, reason) from a judge's output: a JSON object (possibly fenced or wrapped in prose),
    else a `user_error: true|false` pair; None when neither is there."""
    text = text or ""
    m = _JSON_OBJ_RE.search(text)
    if m:
        for cand in (m.group(0), m.group(0).replace("'", '"'), None):
            try:
                obj = json.loads(cand) if cand is not None else ast.literal_eval(m.group(0))  # Python-style dicts
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(obj, dict) and "user_error" in obj:
                ue = obj["user_error"]
                if isinstance(ue, str):
                    ue = ue.strip().lower() in ("true", "yes", "1")
                return bool(ue), str(obj.get("reason", ""))
    b = _BOOL_RE.search(text)
    if b:
        return b.group(1).lower() in ("true", "yes"), text.strip()[:300]
    return None


class LLMJudge:
    """An LLM judge behind an OpenAI-compatible endpoint, with a structured JSON verdict."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *, timeout: float = 60.0, max_retries: int = 4,
                 backoff_s: float = 0.5, parse_retries: int = 1, seed: int = 0):
        self.model = model
        self.client = LazyClient(base_url, api_key, timeout)
        self.policy = RetryPolicy(max_retries=max_retries, backoff_s=backoff_s)
        self.parse_retries = parse_retries
        self.rng = random.Random(seed)

    async def judge(self, task: Task, messages: list[dict]) -> JudgeVerdict:
        prompt = [{"role": "user", "content": judge_prompt(task, messages)}]
        raw = ""
        for _ in range(self.parse_retries + 1):
            try:
                resp = await chat(self.client.get(), self.policy, self.rng, model=self.model, temperature=0.0, messages=prompt)
            except LLMError as e:
                return JudgeVerdict(user_error=False, reason="judge request failed", judge="llm", error=str(e))
            raw = resp.choices[0].message.content or ""
            parsed = parse_verdict(raw)
            if parsed is not None:
                ue, reason = parsed
                return JudgeVerdict(user_error=ue, reason=reason, errors=[reason] if ue else [], judge="llm", raw=raw)
            prompt = prompt[:1] + [{"role": "assistant", "content": raw},
                                   {"role": "user", "content": 'Reply with only the JSON object: {"user_error": true|false, "reason": "..."}'}]
        return JudgeVerdict(user_error=False, reason="judge output unparseable", judge="llm", raw=raw, error="unparseable judge output")
