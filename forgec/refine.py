"""`--refine llm`: rewrite template instructions in a natural user voice, without leaking.

The deterministic template (forgec.lower.render_instruction) is always computed
first; the model only rephrases it. A rephrasing is accepted only when it keeps
every user fact verbatim and passes `instruction_leaks` (no tool names, no value
the agent must look up or compute, such as an internal id the user does not know) and names
no tool by its words in a row ("cancel pending order"; verb-particle names like check_in excepted); otherwise the template stays and the reason
is recorded. Requests go through the same cached client as LLM synthesis, so a
rebuild is reproducible offline.
"""

from __future__ import annotations

import json
import re
from typing import Any

from forgec.lower import flatten_facts, instruction_leaks
from forgec.wording import names_tool
from forgec.wording import say
from forgec.synth.llm import Chat, LLMError

def _states(text: str, item: str) -> bool:
    """The text gives a value for `item` ("order id is #W1", "order id: #W1", "order id #W1")."""
    words = r"[\s_-]+".join(map(re.escape, item.lower().split()))
    return re.search(rf"\b{words}\s*(?:is|was|=|:|#)?\s*[\"'#]?[A-Za-z0-9_#-]*\d", text.lower()) is not None


SYSTEM = (
    "You rewrite task instructions for a simulated customer talking to a support agent. "
    "Rewrite the instruction in the customer's own voice (first person, natural, one short paragraph). "
    "Keep every fact value exactly as written (ids, numbers, names). Do not add facts, do not name any "
    "software tool or function, do not mention anything the customer would not know. Reply with the "
    "rewritten instruction only."
)


def refine_instruction(instruction: str, facts: dict[str, Any], persona: str, tools: list[str], hidden: list[Any], chat: Chat,
                       unknown: list[str] = ()) -> tuple[str, str | None]:
    """(instruction, rejection reason or None); falls back to `instruction` on any problem."""
    user = json.dumps({"instruction": instruction, "persona": persona}, ensure_ascii=False, sort_keys=True)
    try:
        reply = chat([{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}])
    except LLMError as e:
        return instruction, f"request failed: {e}"
    text = " ".join((reply or "").strip().strip('"').split())
    if not text:
        return instruction, "empty reply"
    if not text.isascii() and any(0xD800 <= ord(c) <= 0xDFFF for c in text):  # "\udfff" in the LLM's JSON: not UTF-8 text
        return instruction, "reply is not valid Unicode text (a lone surrogate)"
    low = text.lower()  # a value is said as the template says it: `basic_economy` as "basic economy"
    missing = sorted({k for k, _n, v in flatten_facts(facts) if not isinstance(v, bool)
                      and say(v).lower() not in low and say(v).lower().replace("_", " ") not in low})
    if missing:
        return instruction, f"drops the fact(s) {', '.join(missing)}"
    said = {say(v) for _k, _n, v in flatten_facts(facts) if not isinstance(v, (dict, list))}
    hidden = [h for h in hidden if isinstance(h, (dict, list)) or say(h) not in said]  # $50 the user moves is no computed value leaked
    leaks = instruction_leaks(text, tools, hidden)
    named = [t for t in tools if names_tool(text, [t])]
    if named:  # "cancel pending order": a tool's words in a row name it as surely as its identifier
        leaks = sorted(set(leaks) | {f"names the tool {t!r}" for t in named})
    told = [u for u in unknown if _states(text, u)]
    if told:  # "my reservation id is ...": the scenario says the user does not know it
        leaks = sorted(set(leaks) | {f"states the unknown {u!r}" for u in told})
    if leaks:
        return instruction, "; ".join(leaks)
    return text, None
