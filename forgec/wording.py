"""How names and values are said to a person: one spelling for the task text and the simulated user.

The instruction a task carries (forgec/lower.py, forgec/refine.py) and what the scripted user
says during an episode (runtime/users.py) must state a fact the same way, or the judge and the
agent see two different values for one fact. Both import these functions; the runtime's
oracle agent checks its text with the same `names_tool` rule, which is why they live here, below
both the compiler and the runtime (word forms, such as the participle a proposal says: forgec/english.py).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from forgec.english import FIELD_ABBREVIATIONS, FIELD_ABBREVIATIONS_BEFORE, lemmas


@functools.lru_cache(maxsize=65536)
def norm(name: str) -> str:
    """`orderId`, `OrderID`, `order-id` and `order_id` all become `order_id`; `similarURLs` -> `similar_urls`."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z](?:[a-z]{2,}|[a-rt-z]))", r"\1_\2", s)  # `HTTPServer` splits, a plural acronym (`URLs`, `IDs`) does not
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


@functools.lru_cache(maxsize=65536)
def _split(name: str) -> tuple[str, ...]:
    return tuple(w for w in norm(name).split("_") if w)


def split_name(name: str) -> list[str]:
    """`reservation_id` -> ["reservation", "id"]; `orderId` -> ["order", "id"]."""
    return list(_split(name))


def humanize(name: str) -> str:
    """`user_id` -> "user id", `orderId` -> "order id"; a field named by a function word (`from`, `to`,
    `which`) is said as a field, quoted: 'the "from" field' (blind review 24: "change the from of my template")."""
    words = _unabbreviated(_split(name))
    if words and (m := _NUMBERED.fullmatch(words[-1])) and "NOUN" in lemmas(m.group(1)):
        # BoondManager's `email1`, `phone2`, `address_line1`: the field's noun and its place, never "set their email1"
        # (review 80); an acronym with a number (`oauth2`, `ipv4`) is no English noun and stays as written
        n = int(m.group(2))
        if len(words) > 1:
            words = words[:-1] + (m.group(1), str(n))
        else:
            words = ((), ("second",), ("third",))[n - 1] + (m.group(1),)
    if len(words) == 1 and words[0] in _FUNCTION_WORDS:
        return f'"{words[0]}" field'
    if len(words) == 2 and words[1] in ("on", "at") and (words[0] in ("due", "start", "starts", "end", "ends", "expires") or words[0].endswith("ed")):
        return f"{words[0]} {'date' if words[1] == 'on' else 'time'}"  # `due_on`: "the due date", not "the due on" (review 29)
    return " ".join(words)


def _unabbreviated(words: tuple[str, ...]) -> tuple[str, ...]:
    """`exp_start_date` -> expected start date, `qty` -> quantity (english.FIELD_ABBREVIATIONS); others as they are."""
    out = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        by_next = FIELD_ABBREVIATIONS_BEFORE.get(w)
        full = (by_next.get(nxt) or w) if by_next is not None else FIELD_ABBREVIATIONS.get(w, w)
        out.append(full)
    return tuple(out)


_NUMBERED = re.compile(r"([a-z]{3,})([1-3])")
_FUNCTION_WORDS = frozenset("from to which what who whom whose where when if for in on at by with of as into onto via per than".split())


def say(value: Any) -> str:
    """A value as a person would type it: exact numbers (no exponent rounding), yes/no, sorted fields."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))  # 100.0 is said "100"
    if isinstance(value, (int, float)):
        return json.dumps(value)  # shortest exact spelling: 1234567.5, not 1.23457e+06
    if isinstance(value, list):
        return ", ".join(say(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return "; ".join(f"{humanize(str(k))}: {say(v)}" for k, v in sorted(value.items()))
    return json.dumps(value, sort_keys=True, default=str)


def names_tool(text: str, tools: list[str]) -> bool:
    """Whether `text` names a tool: its identifier, or all its words in a row (verb-particle
    names such as check_in excepted: "check in" is plain English)."""
    return _tool_pattern(tuple(tools)).search(text.lower()) is not None


@functools.lru_cache(maxsize=256)
def _tool_pattern(tools: tuple[str, ...]) -> re.Pattern:
    alts = []
    for t in tools:
        if not re.fullmatch(r"[a-z]+", t):  # a tool called `todo` or `search` is a plain word a person says
            alts.append(re.escape(t.lower()))
        ws = split_name(t)
        if len(ws) < 2 or (len(ws) == 2 and ws[1] in ("in", "out", "up", "off", "on", "down", "over", "back", "away")):
            continue
        alts.append(r"[\s_-]+".join(map(re.escape, ws)))
    return re.compile(r"(?<![\w])(?:" + "|".join(alts) + r")(?![\w])") if alts else re.compile(r"(?!x)x")


_DOC_PATTERN = re.compile(r"\(pattern: (.+)\)\s*$")  # the docs' JSON-Schema pattern, kept in the description (frontends/schema.py)


def pattern_text(doc: str) -> str | None:
    """The JSON-Schema `pattern` a parameter's doc ends with, as written, or None."""
    m = _DOC_PATTERN.search(doc or "")
    return m.group(1) if m else None


def doc_pattern(doc: str) -> Any:
    """The compiled JSON-Schema `pattern` a parameter's doc ends with, or None (none, or one no library reads).
    The pattern is ECMA-262 (`\\p{L}` included): the `regex` library reads it where Python's `re` cannot."""
    text = pattern_text(doc)
    return _compiled(text) if text else None


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Any:
    import regex  # noqa: PLC0415 - a well-kept superset of `re` (Unicode classes), loaded where a doc has a pattern

    try:
        return regex.compile(pattern)
    except regex.error:
        return None


# A date format a parameter's doc states ("formatted as 'MM/DD/YYYY'", "in the format YYYY-MM-DD") and the shape a
# value in it has. Two tools of one API may state two formats for one field (SGD: `FindEvents(date)` MM/DD/YYYY,
# `BuyEventTickets(date)` YYYY-MM-DD); a value is sent only where it fits.
_DATE_FORMATS = (
    (re.compile(r"\bmm/dd/yyyy\b", re.I), re.compile(r"\d{2}/\d{2}/\d{4}")),
    (re.compile(r"\bdd/mm/yyyy\b", re.I), re.compile(r"\d{2}/\d{2}/\d{4}")),
    (re.compile(r"\byyyy-mm-dd\b", re.I), re.compile(r"\d{4}-\d{2}-\d{2}")),
    (re.compile(r"\bhh:mm\b", re.I), re.compile(r"\d{1,2}:\d{2}")),
)


def format_url_choices(values: Any, doc: str) -> list[str] | None:
    """An enum of URLs (`info.schema: "https://.../collection.json" | ...`) is a format the API names, never a user's
    choice: the values the field's own doc quotes (the one to send), or None when the values are not all URLs. One
    rule for the sampler (sent unsaid) and the gate (a sourced constant), review 65."""
    if not values or not all(isinstance(x, str) and re.match(r"https?://", x) for x in values):
        return None
    return [x for x in values if x in (doc or "")]


def fits_doc_format(value: Any, doc: str) -> bool:
    """Whether `value` is written in the date or time format the doc states (true when it states none)."""
    if not isinstance(value, str):
        return True
    stated = [shape for said, shape in _DATE_FORMATS if said.search(doc or "")]
    return not stated or any(shape.fullmatch(value) for shape in stated)


# The docs' two-step calls (review 28): a preview/dry-run switch and a confirmation. The agent sets them as the docs
# say to apply a change; they are no record field, no user fact and no words of the request. One table for the
# schema (request params), the sampler (set, never said), the gate and the lowering.
PREVIEW_SWITCHES = frozenset({"preview", "dry_run", "dryrun", "simulate", "validate_only"})
CONFIRM_SWITCHES = frozenset({"confirm", "confirmed"})
CALL_SWITCHES = PREVIEW_SWITCHES | CONFIRM_SWITCHES


def is_confirm_switch(name: str) -> bool:
    """`confirm`, `confirmed`, `confirm_delete`, `confirmDeletion`: the switch a destructive call is made with once the
    agent has made sure, nothing the user tells."""
    n = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    return n in CONFIRM_SWITCHES or n.split("_")[0] in ("confirm", "confirmed")


def lookup_field(param: str, key: str, fields: dict[str, str]) -> str | None:
    """The field a reference parameter finds its record by when that is not the key: Harbor's `project_name` "The
    name of the project" names a project keyed by `project_id`; a person (and an agent) passes the name (review 52:
    the gold passed "project_01119" where the user had said "Design review"). `fields`: the record's field names and
    their type names. None when the parameter names no record's `name`, or the key is a name already."""
    if split_name(param)[-1:] != ["name"] or split_name(key)[-1:] in (["name"], ["title"], ["path"]) or norm(param) == norm(key):
        return None
    return "name" if fields.get("name") == "str" else None
