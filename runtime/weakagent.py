"""An oracle variant with known weaknesses (`--agent oracle-naive`): the test agent of `forgec evolve`.

It plays the oracle's dialogue (agents.oracle_script) but behaves like a literal-minded agent that
follows the docs and nothing else, so the tasks and checks that only an all-knowing oracle passes
show up as failures:

* it says the values a task checks (`tell`) only when the user asked a question;
* it acts on *a* record consistent with what the user said: among the records of the write's
  entity that agree with the gold record on every field whose value the user stated, it takes one
  by a seeded draw (per task and trial) — so an under-specified "close my ticket" may hit another
  ticket, and a superlative ("my cheapest order") it does not compute may too;
* it follows the docs: a write argument outside the tool's enum or the range its description gives
  is not sent (it says so and stops);
* it never invents a value: a write argument whose value is neither in the request, nor a fact the
  scenario gives the user, nor in a tool's result is not filled, and it tells the user it cannot go on.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from forgec.runtime.agents import oracle_script
from forgec.runtime.envrt import jcopy
from forgec.runtime.scenario import scenario_of
from forgec.runtime.types import AgentReply, ToolCall
from forgec.tasks import Task

REFUSAL = "I'm sorry, I could not complete your request:"
_QUESTION_HEAD = {"how", "what", "which", "who", "whom", "whose", "when", "where", "why", "whether", "is", "are", "was",
                  "were", "does", "do", "did", "tell", "find"}


def asks_question(task: Task) -> bool:
    """Whether the user asks for information (a read-only task, or an intent worded as a question):
    only then is an agent expected to say the values it found."""
    if task.read_only:
        return True
    for it in scenario_of(task).intents:
        words = re.findall(r"[a-z']+", it.text.lower())
        if it.text.strip().endswith("?") or (words and words[0] in _QUESTION_HEAD):
            return True
    return False


def _norm(v: Any) -> str:
    return str(v).strip().lower()


def said_values(task: Task) -> set[str]:
    """The scalar values the scenario gives the user to state (its `knows`, list members included), normalised.

    The scenario's own facts, not the task's derived `user.facts`: lowering adds every literal of the gold
    path to those, so a value the instruction never mentions would count as said."""
    out: set[str] = set()

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif v is not None and not isinstance(v, bool):
            out.add(_norm(v))

    sc = task.user.scenario
    walk(sc.known_info if sc is not None else task.user.facts)
    return out


def said_fields(rec: dict, said: set[str]) -> set[str]:
    """The fields of a record whose (scalar) value the user stated."""
    return {f for f, v in rec.items() if not isinstance(v, (dict, list, bool)) and v is not None and _norm(v) in said}


def record_of(state: dict, value: Any) -> tuple[str, str] | None:
    """(entity, key) when `value` is the key of exactly one entity's record in the state."""
    if not isinstance(value, str):
        return None
    hits = [(e, value) for e, recs in (state.get("entities") or {}).items() if isinstance(recs, dict) and value in recs]
    return hits[0] if len(hits) == 1 else None


def outside_docs(tool: dict, args: dict) -> str | None:
    """The argument a doc-following agent would not send: outside the schema's enum, or a number outside the
    range its description gives ("from 1 (lowest) to 4", "between 1 and 5", "at most 9"); None when all fit."""
    props = ((tool.get("function") or tool).get("parameters") or {}).get("properties") or {}
    for k, v in args.items():
        p = props.get(k) or {}
        if "enum" in p and v not in p["enum"]:
            return k
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            d = str(p.get("description") or "").lower()
            m = re.search(r"\bfrom (-?\d+)\D{0,20}? to (-?\d+)", d) or re.search(r"\bbetween (-?\d+) and (-?\d+)", d)
            hi = re.search(r"\bat most (-?\d+)", d)
            if (m and not float(m.group(1)) <= v <= float(m.group(2))) or (hi and v > float(hi.group(1))):
                return k
    return None


def _draw(*parts: Any) -> int:
    return int.from_bytes(hashlib.sha256(json.dumps(parts, default=str).encode()).digest()[:8], "big")


class NaiveOracle:
    """The oracle with the three weaknesses above; stateless between calls like every agent."""

    def __init__(self, task: Task, trial: int, initial_state: dict):
        self.task, self.trial, self.state = task, trial, initial_state
        self.ask = asks_question(task)
        self._steps = oracle_script(task if self.ask else task.model_copy(update={"tell": []}))
        self.said = said_values(task)

    def limits(self, base: Any = None) -> Any:
        from dataclasses import replace

        from forgec.runtime.episode import EpisodeLimits

        base = base or EpisodeLimits()
        return replace(base, max_turns=max(base.max_turns, len(self._steps) + 3),
                       max_tool_calls=max(base.max_tool_calls, len(self.task.gold_calls)))

    def _target(self, name: str, value: Any) -> Any:
        """The record this agent picks for a write argument that names one."""
        hit = record_of(self.state, value)
        if hit is None:
            return value
        ent, key = hit
        recs = self.state["entities"][ent]
        fields = said_fields(recs[key], self.said)
        if not fields:
            return value  # nothing said singles out any record: it acts as told by the lookups
        cands = sorted(k for k, r in recs.items() if isinstance(r, dict) and all(r.get(f) == recs[key].get(f) for f in fields))
        return cands[_draw(self.task.id, self.trial, name) % len(cands)] if cands else value

    def act_sync(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        if any(m.get("role") == "assistant" and str(m.get("content") or "").startswith(REFUSAL) for m in messages):
            return AgentReply(content=REFUSAL + " nothing more was done.")
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if turn >= len(self._steps):
            return AgentReply(content=self._steps[-1][1])
        kind, what = self._steps[turn]
        if kind == "say":
            return AgentReply(content=what)
        text, gold = what
        # what it can know: the request, the tools' results and the facts the scenario gives the user (a value the
        # scenario never mentions it would not know to ask for)
        first = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        seen = " ".join([first, *self.said] + [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]).lower()
        calls = []
        for i, g in enumerate(gold):
            args = jcopy(g.arguments)
            if g.write:
                args = {k: self._target(k, v) for k, v in args.items()}
                missing = [k for k, v in args.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)
                           and _norm(v) not in seen]
                if missing:
                    return AgentReply(content=f"{REFUSAL} I do not have the {', '.join(missing)} it needs.")
                bad = outside_docs(next((t for t in tools if (t.get("function") or t).get("name") == g.tool), {}), args)
                if bad:
                    return AgentReply(content=f"{REFUSAL} the documentation does not allow that {bad}.")
            calls.append(ToolCall(id=f"call_{turn}_{i}", name=g.tool, arguments=args))
        return AgentReply(content=text, tool_calls=calls)

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        return self.act_sync(messages, tools)


class HedgeOracle:
    """`--agent oracle-hedge`: the oracle, except that its answer is a near miss that hedges: it names the other
    candidates of each `tell` value (the same field of the other records it read, `reward.tell_competitors`)
    before gold's: "It is 2, or 3.". `told` finds a value anywhere in what was said, so this passes an untightened
    check; it is the exploit `forgec evolve`'s `tell-loose` detector finds and `tighten-tell` closes."""

    def __init__(self, task: Task):
        from forgec.runtime.agents import OracleAgent, oracle_final_text, say
        from forgec.runtime.reward import tell_competitors

        self._oracle = OracleAgent(task)
        steps = self._oracle._steps
        others = tell_competitors(task)
        if task.tell and others and steps and steps[-1] == ("say", oracle_final_text(task)):
            gold = "; ".join(say(v) for v in task.tell)
            steps[-1] = ("say", f"Here is what you asked for: {', '.join(say(v) for v in others)}, or {gold}. "
                                + oracle_final_text(task.model_copy(update={"tell": []})))
        self.limits = self._oracle.limits

    def act_sync(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        return self._oracle.act_sync(messages, tools)

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        return self.act_sync(messages, tools)
