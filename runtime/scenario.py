"""The user scenario a task's simulated user plays, and how proposals of writes are read.

Schema 1.1 tasks carry `user.scenario` (τ²-bench's user_scenario); 1.0 tasks, and 1.1 tasks
whose blueprint said no `reason`/`unknown`/`intent`, get sensible defaults derived here from
the goal, the facts and the gold calls, so the scripted user and the oracle agent play every
task the same way:

* known_info: the scenario's, plus the task's told facts (the user can always say those);
* unknown_info: the scenario's, else the id-like arguments of gold calls whose values the
  user does not know (they are looked up by the agent: "reservation id");
* intents: the scenario's, else one per gold write ("cancel order"), or, for a read-only
  task, the goal itself.

`proposal_matches` is the one reading of "the agent proposes this write" that the scripted
user (confirm or refuse), the rule judge and the tests share.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from forgec.english import forms
from forgec.runtime.reward import ToldIndex, told
from forgec.tasks import GoldCall, ScenarioIntent, Task
from forgec.wording import humanize, split_name

# the last word of a parameter name that makes its value an internal identifier
_ID_TAIL = {"id", "ids", "key", "uuid", "guid", "ref", "code", "number", "no", "num"}
_GENERIC = {"id", "ids", "of", "the", "a", "an", "to", "for", "by", "in", "on", "at", "is", "new", "my", "get", "set", "do"}
# verbs an agent uses when it proposes to change something (a proposal naming none of the task's
# writes but one of these is a write the user did not ask for)
WRITE_VERBS = frozenset(
    "add append assign book buy cancel change charge check close create delete disable downgrade edit enable exchange "
    "insert issue modify move open order pay place post purchase put refund register remove rename replace reset "
    "return revoke schedule send set submit switch transfer update upgrade upload write reopen resolve archive restore "
    "approve reject activate deactivate suspend block unblock link unlink tag rate mark lock unlock pause resume "
    "reserve rebook reschedule renew extend apply redeem withdraw deposit".split()
)
_WORD_RE = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Scenario:
    persona: str
    reason: str
    known: dict[str, Any]
    unknown: tuple[str, ...]
    instructions: str
    intents: tuple[ScenarioIntent, ...]
    writes: tuple[GoldCall, ...]  # the gold write calls, in order: what the user will confirm
    hidden: tuple[Any, ...]  # values the user never says (the values of derived unknowns)


def write_calls(task: Task) -> tuple[GoldCall, ...]:
    """The gold calls the user confirms: schema 1.1 marks them (`write`, from the env's
    WRITES_STATE); for 1.0 tasks a call counts as a write when its tool's name starts with a write
    verb (`cancel_order`, `book_reservation`) or any verb that is not plainly a read (`get_`,
    `list_`, ...). Read-only tasks have none."""
    calls = task.gold_calls
    if any(g.write is not None for g in calls):
        return tuple(g for g in calls if g.write)
    if task.read_only:
        return ()
    return tuple(g for g in calls if _tool_kind(g.tool) != "read") or calls[-1:]


_READ_VERBS = frozenset("get list search find lookup look fetch read show view query describe count retrieve check calculate "
                        "compute estimate browse inspect see".split())


@functools.lru_cache(maxsize=4096)
def _tool_kind(tool: str) -> str:
    words = split_name(tool)
    if not words:
        return "?"
    if words[0] in WRITE_VERBS and not (words[0] == "check" and words[1:2] != ["in"]):
        return "write"
    if words[0] in _READ_VERBS:
        return "read"
    return "?"


def arg_leaves(v: Any, out: list) -> None:
    if isinstance(v, dict):
        for x in v.values():
            arg_leaves(x, out)
    elif isinstance(v, list):
        for x in v:
            arg_leaves(x, out)
    else:
        out.append(v)


def _is_id_name(name: str) -> bool:
    w = split_name(name)
    return bool(w) and w[-1] in _ID_TAIL


_RECENT: "OrderedDict[int, tuple[Task, Scenario]]" = OrderedDict()
_LOCK = threading.Lock()


def scenario_of(task: Task) -> Scenario:
    """The task's scenario with defaults for what it does not say (1.0 tasks have none). The agent,
    the user and the judge of one episode ask for the same task: the last few are kept (by identity)."""
    with _LOCK:
        hit = _RECENT.get(id(task))
    if hit is not None and hit[0] is task:
        return hit[1]
    sc = _scenario(task)
    with _LOCK:
        _RECENT[id(task)] = (task, sc)
        if len(_RECENT) > 64:
            _RECENT.popitem(last=False)
    return sc


def _scenario(task: Task) -> Scenario:
    s = task.user.scenario
    known = dict(s.known_info) if s else {}
    known.update(task.user.facts)
    known = {k: v for k, v in known.items() if v is not None}
    known_vals: list = []
    arg_leaves(list(known.values()), known_vals)
    said = {str(v).lower() for v in known_vals if v is not None}
    unknown: list[str] = list(s.unknown_info) if s else []
    hidden: list[Any] = []
    known_words = {humanize(k) for k in known}
    for g in task.gold_calls:
        for name, v in g.arguments.items():
            if not _is_id_name(name) or isinstance(v, (bool, dict)) or v is None:
                continue
            vals = v if isinstance(v, list) else [v]
            if any(str(x).lower() in said for x in vals):
                continue  # the user knows it (it is a fact)
            hidden.extend(x for x in vals if not isinstance(x, (bool, dict, list)) and x is not None)
            if not (s and s.unknown_info):
                words = humanize(name)
                if words not in known_words and words not in unknown:
                    unknown.append(words)
    unknown = [u for u in unknown if humanize(u) not in known_words]  # known wins (the checker's unknown-is-known)
    writes = write_calls(task)
    intents = tuple(s.intents) if s and s.intents else ()
    if not intents:
        if writes:
            intents = tuple(ScenarioIntent(text=humanize(g.tool)) for g in writes)
        else:
            intents = (ScenarioIntent(text=(s.task_instructions if s and s.task_instructions else task.user.goal)),)
    return Scenario(
        persona=(s.persona if s and s.persona else task.user.persona),
        reason=s.reason_for_call if s else "",
        known=known,
        unknown=tuple(unknown),
        instructions=(s.task_instructions if s and s.task_instructions else task.user.goal),
        intents=intents,
        writes=writes,
        hidden=tuple(dict.fromkeys(hidden)),
    )


def said_index(facts: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """Facts as a person says them: said name -> (fact, value). A record of scalars (a request body
    `body = {stars: 4}`) is said field by field ("stars"); a field name another fact already has
    keeps its record's name ("body_2_amount"). The scripted user answers, the oracle asks and the
    rule judge checks these."""
    out: dict[str, tuple[str, Any]] = {}
    def flat(v: Any) -> bool:
        return isinstance(v, dict) and bool(v) and all(not isinstance(x, (dict, list)) for x in v.values())
    for k in sorted(facts):
        if not flat(facts[k]):
            out[k] = (k, facts[k])
    for k in sorted(facts):
        v = facts[k]
        if flat(v):
            for sub in sorted(v):
                if sub in out and out[sub][1] == v[sub]:
                    continue  # the same value under the same name (`user_id` and `body.user_id`): said once
                name = sub if sub not in out and sub not in facts else f"{k}_{sub}"
                out[name] = (k, v[sub])
    return out


def said_names(facts: dict[str, Any]) -> dict[str, list[str]]:
    """fact -> the said names that tell it (`said_index`), shared names included."""
    idx = said_index(facts)
    out: dict[str, list[str]] = {}
    for n, (k, _) in idx.items():
        out.setdefault(k, []).append(n)
    for k, v in facts.items():
        if isinstance(v, dict):
            for sub, x in v.items():
                if sub in idx and idx[sub][0] != k and idx[sub][1] == x and sub not in out.get(k, []):
                    out.setdefault(k, []).append(sub)
    return out


# (not "address": a new shipping address is a detail of the change, asked for when the change needs it)
_PERSONAL = frozenset(("name", "email", "phone", "zip", "postal", "user", "username", "account", "customer", "member", "login",
                       "birth", "dob", "passport", "mobile"))


def is_personal(name: str) -> bool:
    """A fact that identifies the user (`user_id`, `email`, `zip_code`): what the agent asks for first."""
    return any(w in _PERSONAL for w in split_name(name))


def said_facts(facts: dict[str, Any]) -> dict[str, Any]:
    return {n: v for n, (_, v) in said_index(facts).items()}


def _end(text: str) -> str:
    """`text` ending in one mark: "." unless it already ends in "?" or "!" (never "?.")."""
    text = text.rstrip().rstrip(".").rstrip()
    return text + ("" if text.endswith(("?", "!")) else ".")


def _sentence(text: str) -> str:
    """`text` as one sentence: capitalized, ending in "." unless it already ends in "?" or "!" (no "?.")."""
    text = " ".join(text.split()).rstrip(".").rstrip()
    return _end(text[:1].upper() + text[1:]) if text else ""


def opening(task: Task) -> str:
    """The user's first message: the reason for the call first, then what they want (the goal in
    their voice). Facts are not listed: the user tells them when asked. A task without a scenario
    (schema 1.0, hand-assembled builds) opens with its instruction, as it always did."""
    if task.user.scenario is None:
        return task.instruction
    sc = scenario_of(task)
    goal = " ".join(sc.instructions.split()).rstrip(".")
    if goal and not goal.lower().startswith(("i ", "i'", "please", "can ", "could ", "hi", "hello")):
        goal = "I want to " + goal[0].lower() + goal[1:]
    parts = []
    reason = sc.reason.strip()
    if reason and reason.lower().rstrip(".") not in goal.lower():
        keep = re.match(r"(I\b|I'|[A-Z]{2}|[A-Z][a-z]*[A-Z])", reason)  # "I am ...", "UPS lost ...": keep the capital
        first = reason if keep else reason[0].lower() + reason[1:]
        parts.append(_sentence(reason) if reason.lower().startswith(("hi", "hello")) else "Hi, " + _end(first))
    if goal:
        parts.append(_sentence(goal))
    return " ".join(parts) or task.instruction


# --------------------------------------------------------------------------- proposals


@functools.lru_cache(maxsize=4096)
def tool_cues(tool: str) -> tuple[frozenset[str], ...]:
    """The meaningful words of a tool name (each with its inflections): what naming the action means."""
    words = [w for w in split_name(tool) if w not in _GENERIC] or split_name(tool)
    return tuple(forms(w) for w in words)  # "cancel": cancels, cancelled, cancelling, ...


def names_action(text: str, tool: str) -> bool:
    """The text names the tool's action: its first meaningful word (the verb) and at least half
    of its words, inflected ("cancelled the order" names cancel_order)."""
    words = set(_WORD_RE.findall(text.lower()))
    cues = tool_cues(tool)
    if not cues:
        return False
    hits = sum(1 for c in cues if words & c)
    return bool(words & cues[0]) and hits * 2 >= len(cues)


def states_arguments(text: str, args: dict[str, Any]) -> bool:
    """Every argument value of the call is said in the text: ids and numbers exactly (numbers in
    any spelling), an enum-like `no_longer_needed` also as "no longer needed", free text (four
    words or more) by most of its words, since an agent may paraphrase a comment."""
    leaves: list = []
    arg_leaves([v for v in args.values()], leaves)
    index = _told_index(text)
    words: set[str] | None = None
    for v in leaves:
        if v is None or isinstance(v, bool) or told(v, index):
            continue
        if isinstance(v, str):
            spaced = re.sub(r"[_\-]+", " ", v).strip()
            if spaced != v and told(spaced, index):
                continue
            ws = _WORD_RE.findall(v.lower())
            if words is None:
                words = set(_WORD_RE.findall(text.lower()))
            if len(ws) >= 4 and sum(w in words for w in ws) >= 0.6 * len(ws):
                continue
        return False
    return True


@functools.lru_cache(maxsize=512)
def _told_index(text: str) -> ToldIndex:
    """One parse of a text for many `told` checks (a proposal is checked against every write)."""
    return ToldIndex(text)


def proposal_matches(text: str, call: GoldCall) -> bool:
    return names_action(text, call.tool) and states_arguments(text, call.arguments)


def proposes_write(text: str, writes: tuple[GoldCall, ...]) -> bool:
    """The text proposes a change: it names one of the task's writes or a write verb."""
    words = set(_WORD_RE.findall(text.lower()))
    if any(names_action(text, g.tool) for g in writes):
        return True
    if any(w in _TEXT_VERBS for w in words):
        return True
    return _AMBIGUOUS_RE.search(text.lower()) is not None


# words that are write verbs in a tool name but often nouns in a sentence ("look up your order",
# "the book you bought"): in text they propose a change only as a verb ("order a", "book the", "check in")
_AMBIGUOUS = frozenset("book order return check post rate tag mark set open put move place charge issue".split())
_TEXT_VERBS = WRITE_VERBS - _AMBIGUOUS
_AMBIGUOUS_RE = re.compile(r"\b(?:i(?:'ll| will| can| would)?|let me|shall i|should i|to)\s+(?:" + "|".join(sorted(_AMBIGUOUS - {"check"}))
                           + r")\b|\bcheck(?:ing)?\s+(?:you\s+)?(?:in|out)\b")


def action_phrase(tool: str) -> str:
    """`cancel_pending_order` -> "cancel pending order" (the tool's words, said as an action)."""
    return humanize(tool)
