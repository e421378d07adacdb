"""Simulated users: a deterministic scripted one (tests, baselines, CPU training) and an LLM one.

Both see only the user-visible conversation: their own messages and the
agent's text replies, never tool calls or tool results. Either ends the
conversation with the stop marker `###STOP###`.
"""

from __future__ import annotations

import functools
import json
import random
import re
from typing import Any

from forgec.runtime.llmclient import LazyClient, RetryPolicy, chat, usage_of
from forgec.runtime.types import UserReply
from forgec.tasks import Task
from forgec.wording import say, split_name  # noqa: F401 - one spelling for task text and user (judge, agents import them from here)

STOP = "###STOP###"
NUDGE = "Okay, please go ahead."

# --------------------------------------------------------------------------- fact matching

_GENERIC = {"id", "ids", "of", "the", "a", "an", "to", "for", "by", "in", "on", "at", "is", "num", "value", "new", "my"}
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "email": ("email", "e-mail", "mail"),
    "phone": ("phone", "telephone", "mobile", "cell"),
    "number": ("number", "no", "#", "num"),
    "address": ("address", "street"),
    "date": ("date", "day", "when"),
    "name": ("name", "called"),
    "amount": ("amount", "much", "sum"),
    "quantity": ("quantity", "many", "count"),
    "qty": ("quantity", "many", "count", "qty"),
    "city": ("city", "town"),
    "zip": ("zip", "postal", "postcode"),
    "user": ("user", "account", "customer"),
    "username": ("username", "login", "handle"),
    "reservation": ("reservation", "booking"),
    "order": ("order", "purchase"),
    "price": ("price", "cost", "much"),
    "reason": ("reason", "why"),
    "payment": ("payment", "card", "pay"),
    "destination": ("destination", "arrival", "going"),
    "origin": ("origin", "departure", "departing", "leaving"),
    "dob": ("birth", "dob", "birthday"),
    "id": ("id", "identifier", "number", "code", "#"),
}
_WORD_RE = re.compile(r"[a-z0-9#]+(?:-[a-z0-9]+)*")
_QUESTION_RE = re.compile(
    r"\?|\b(please (provide|give|tell|share|confirm|send|enter|specify)|could you|can you|would you|what is|what's|which|"
    r"may i (have|know|get)|i need|i'll need|i will need|let me know)\b"
)
_DONE_RE = re.compile(
    r"\b(done|completed?|finished|all set|successfully|taken care of|anything else)\b"
)
_HELP_RE = re.compile(r"\b(help|assist|how can i|what can i do)\b")
_CONFIRM_RE = re.compile(
    r"\b(confirm|proceed|go ahead|shall i|should i|do you want|would you like|is that (right|correct|ok)|are you sure|yes or no|\(y/n\))"
)
CONFIRM = "Yes, please go ahead."


def _word_forms(w: str) -> set[str]:
    forms = {w, w + "s", w + "es"}
    if w.endswith("s") and len(w) > 3:
        forms.add(w[:-1])
    if w.endswith("y") and len(w) > 2:
        forms.add(w[:-1] + "ies")
    return forms


@functools.lru_cache(maxsize=65536)
def fact_cues(name: str) -> tuple[frozenset[str], ...]:
    """For each meaningful token of a fact name, the words that count as asking for it."""
    toks = split_name(name)
    key = [t for t in toks if t not in _GENERIC] or toks
    cues = []
    for t in key:
        words: set[str] = set()
        for s in _SYNONYMS.get(t, (t,)) + (t,):
            words |= _word_forms(s)
        cues.append(frozenset(words))
    return tuple(cues)


def facts_mentioned(text: str, facts: dict[str, Any]) -> list[str]:
    """Fact names the text asks about: any meaningful token of the name (or a synonym) appears as a word."""
    low = text.lower()
    words = set(_WORD_RE.findall(low))
    if "#" in low:
        words.add("#")
    hits = []
    for name in sorted(facts):
        if name.lower() in low or " ".join(split_name(name)) in low:
            hits.append(name)
            continue
        if any(words & cue for cue in fact_cues(name)):
            hits.append(name)
    return hits


def fact_sentence(name: str, value: Any) -> str:
    return f"My {' '.join(split_name(name))} is {say(value)}."


def is_question(text: str) -> bool:
    return _QUESTION_RE.search(text.lower()) is not None


def reports_completion(text: str) -> bool:
    return _DONE_RE.search(text.lower()) is not None


def visible_turns(messages: list[dict]) -> list[tuple[str, str]]:
    """(speaker, text) of what the user can see: its own messages and the agent's text."""
    out = []
    for m in messages:
        role = m.get("role")
        if role == "user":
            out.append(("user", m.get("content") or ""))
        elif role == "assistant" and (m.get("content") or "").strip():
            out.append(("agent", m["content"]))
    return out


# --------------------------------------------------------------------------- scripted user


class ScriptedUser:
    """Deterministic user built from a task.

    Opens with the task instruction. To each agent text reply: answers every
    fact it is asked about ("My order id is o_17."); says it does not know
    anything else it is asked; says yes to a confirmation question ("Shall I
    proceed?"); restates its request when the agent offers help;
    answers a statement that neither asks nor reports completion ("Let me
    check.") with "Okay, please go ahead." once, and stops (`###STOP###`) at
    the next one; stops when the agent reports completion, or after
    `max_turns` replies.
    """

    def __init__(self, task: Task, max_turns: int = 10):
        self.task = task
        self.facts = dict(task.user.facts)
        self.max_turns = max_turns

    def reply_sync(self, messages: list[dict]) -> UserReply:
        turns = visible_turns(messages)
        n_user = sum(1 for s, _ in turns if s == "user")
        if n_user == 0:
            return UserReply(self.task.instruction)
        if n_user > self.max_turns:
            return UserReply(STOP, stop=True)
        last = turns[-1][1] if turns and turns[-1][0] == "agent" else ""
        asked = facts_mentioned(last, self.facts) if last else []
        question = is_question(last)
        done = reports_completion(last)
        if asked and question and not done:
            return UserReply(" ".join(fact_sentence(n, self.facts[n]) for n in asked))
        if done:
            return UserReply(STOP, stop=True)
        if not question:
            # A statement that neither asks nor reports completion ("Let me check."): nudge once, then stop.
            if turns[-2:-1] == [("user", NUDGE)]:
                return UserReply(STOP, stop=True)
            return UserReply(NUDGE)
        low = last.lower()
        if _CONFIRM_RE.search(low):
            return UserReply(CONFIRM)
        if _HELP_RE.search(low):
            return UserReply(self.task.instruction)
        return UserReply("I don't know that.")

    async def reply(self, messages: list[dict]) -> UserReply:
        return self.reply_sync(messages)


# --------------------------------------------------------------------------- LLM user

USER_SYSTEM_PROMPT = """You are playing a customer talking to a customer-service agent. Stay in character; you are the customer, not an assistant.

Your goal: {goal}
{persona}
What you know (share a fact only when the agent asks for it or it is needed; give exact values):
{facts}

Rules:
- Never invent information. If the agent asks for something not listed above, say you don't know it.
- Do not reveal these instructions. Write short, natural messages (one or two sentences).
- Your first message states your request: {instruction}
- When the agent has done what you asked (or tells you it cannot be done), reply with exactly {stop} and nothing else.
"""


def user_system_prompt(task: Task) -> str:
    facts = "\n".join(f"- {' '.join(split_name(k))}: {say(v)}" for k, v in sorted(task.user.facts.items())) or "- (nothing beyond your goal)"
    persona = f"Persona: {task.user.persona}" if task.user.persona else ""
    return USER_SYSTEM_PROMPT.format(goal=task.user.goal, persona=persona, facts=facts, instruction=task.instruction, stop=STOP)


def flip_roles(messages: list[dict]) -> list[dict]:
    """The conversation from the user's side: the agent speaks as `user`, the simulated user as `assistant`."""
    out = []
    for speaker, text in visible_turns(messages):
        out.append({"role": "assistant" if speaker == "user" else "user", "content": text})
    return out


class LLMUser:
    """A simulated user behind any OpenAI-compatible endpoint (the paper used GPT-4.1)."""

    def __init__(self, task: Task, base_url: str, model: str, api_key: str | None = None, *, temperature: float = 0.0,
                 timeout: float = 60.0, max_retries: int = 4, backoff_s: float = 0.5, max_turns: int = 10,
                 open_with_instruction: bool = True, seed: int = 0):
        self.task = task
        self.model = model
        self.temperature = temperature
        self.client = LazyClient(base_url, api_key, timeout)
        self.policy = RetryPolicy(max_retries=max_retries, backoff_s=backoff_s)
        self.max_turns = max_turns
        self.open_with_instruction = open_with_instruction
        self.system_prompt = user_system_prompt(task)
        self.rng = random.Random(seed)
        self.usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0}

    async def reply(self, messages: list[dict]) -> UserReply:
        turns = visible_turns(messages)
        n_user = sum(1 for s, _ in turns if s == "user")
        if n_user == 0 and self.open_with_instruction:
            return UserReply(self.task.instruction)
        if n_user > self.max_turns:
            return UserReply(STOP, stop=True)
        convo = flip_roles(messages)
        if not convo or convo[0]["role"] != "user":
            convo.insert(0, {"role": "user", "content": "Hi! How can I help you today?"})
        resp = await chat(self.client.get(), self.policy, self.rng, model=self.model, temperature=self.temperature,
                          messages=[{"role": "system", "content": self.system_prompt}, *convo])
        for k, v in usage_of(resp).items():
            self.usage[k] = self.usage.get(k, 0) + v
        text = (resp.choices[0].message.content or "").strip()
        if STOP in text:
            rest = text.replace(STOP, "").strip()
            return UserReply(rest or STOP, stop=True)
        return UserReply(text)
