"""Effects read from the prose: tool and parameter descriptions, sentence by sentence.

Names say little about what a write does: `suspend_line` may set a status *and* record a
date, `make_payment` may move money *and* close a bill, `enable_roaming` flips a flag. The
descriptions say it in a handful of phrasings that recur across doc styles. This module
reads them into `Fact`s (pure text, no schema), which `schema.py` uses to declare state
(status values, recorded fields, flags, balances, counters) and to pick the record a tool
changes, and `effects.py` turns into statements, each citing the sentence it came from
(`// from: "Sets the line status to Suspended"` in env.forge).

Patterns (each has fixtures from at least two differently written doc sources in
tests/fixtures/prose/ and the shared corpus):

* status     "sets/changes/updates the X status to Y", "marks the X as Y",
             "the X status will be changed to 'Y'", "reverts/rolls back the X to Y" (an earlier state)
* record     "records/stores/saves [the] F [as today's date | on the X]"
* toggle     "enable/disable F", "turn(s) F on/off", "turn(s) on/off F"
* money      "refunds/adds/credits/deducts/charges/withdraws the amount to/from the X's balance"
* count      "adds N U of D to the X's F", "increases/decreases/reduces the X's F by N"
* require    "only a/an Y X can ...", "the X must be Y", "only if it is Y", "only in Y status", "can only be ... once"
* assign     "sets data_refuelled_gb to 0", "frozen_on is cleared" (a documented field, a literal that fits)
* values     "either 'a' or 'b'", "one of: a, b, c", "can only be 'a' or 'b'" (parameters)
* once       "this function can only be called once", "can be used only once per member" (a flag)
* forbid     "cannot be moved ... while it is Suspended", "not allowed if the member is `frozen`",
             "If the order is already processed or delivered, it cannot be cancelled", "(non-completed)"
* owns       "The customer who owns the line." (a parameter), "The rental must belong to the member."
* same       "new items of the same product type", "another plan of the same plan type"
* returns    "Returns the customer id", "Responds with the member's ID" (a lookup by its params)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from forgec.english import singular
from forgec.lang import ast as A

from .names import ident, snake, tokens


@dataclass(frozen=True)
class Fact:
    """One thing a sentence says a tool does (or needs)."""

    kind: str  # status | record | toggle | money | count | require | once | same
    sentence: str  # the sentence, as written (cited in env.forge)
    subject: str = ""  # noun phrase of the record it is about ("line", "payment method"); "" = the tool's record
    field: str = ""  # field phrase ("suspension_start_date", "roaming", "balance", "data_refuelled_gb")
    value: object = None  # status value, bool, "now", a param phrase, or a number
    sign: int = 0  # +1 / -1 for money and counts
    amount: str = ""  # the amount phrase ("amount", "gb_amount", "total", "1")
    conditional: bool = False  # "... if the payment was made with a gift card": a condition not read
    when: tuple = ()  # (subject, state) of a condition that is a record's state: "if the rental is `late`"


# --------------------------------------------------------------------------- sentences

_ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|no)\.", re.I)


def sentences(text: str) -> list[str]:
    """The sentences of a description (`e.g.` and decimals do not end one; `;` does)."""
    t = " ".join((text or "").split())
    if not t:
        return []
    t = _ABBREV.sub(lambda m: m.group(0).replace(".", "\0"), t)
    parts = re.split(r"(?<=[.!?;])\s+(?=\S)", t)
    out = []
    for p in parts:
        p = p.replace("\0", ".").strip()
        if p:
            out.append(p)
    return out


# a state value: quoted, or one capitalized word (plus capitalized words after it), or one word
_QVAL = r"(?:'(?P<q1>[^']{1,40})'|\"(?P<q2>[^\"]{1,40})\"|`(?P<q3>[^`]{1,40})`|(?P<w>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*|[a-z][\w-]*?n[\'\u2019]t\s+[a-z][\w-]*|[a-z][\w-]*))"
# (a contraction is one value with the word it governs: "as won't fix", never "won": review 70, SonarQube)
_ART = r"(?:the\s+|a\s+|an\s+|its\s+|their\s+|this\s+|that\s+)?"
_SUBJ = r"(?P<subj>[a-z][a-z_ ]{0,30}?)"
_NOT_VALUES = {"the", "a", "an", "be", "it", "its", "their", "given", "new", "value", "provided", "specified", "requested", "true", "false", "null", "none", "done", "used", "to", "as", "in", "on", "set", "changed", "within", "positive", "negative", "empty", "between", "at", "greater", "less", "more", "no", "non-negative", "strictly", "up", "one", "kept", "left", "unchanged", "same", "still"}  # "the status will be kept 'pending'": no change


def _val(m: re.Match) -> str | None:
    v = m.group("q1") or m.group("q2") or m.group("q3") or m.group("w")
    if v is None or v.lower() in _NOT_VALUES:
        return None
    return v


def _subj(x: str | None) -> str:
    x = (x or "").strip().lower()
    x = re.sub(r"^(?:the|a|an|its|their|this|that)\s+", "", x)
    return "" if x in ("it", "them", "this", "that", "one") else x


_STATUS_SET = re.compile(rf"\b(?:sets?|changes?|updates?|moves?|puts?|switch(?:es)?)\s+{_ART}(?:{_SUBJ}(?:'s)?\s+)?status\s+(?:to|as|into)\s+{_QVAL}")
_STATUS_WILL = re.compile(rf"\b{_ART}(?:{_SUBJ}(?:'s)?\s+)?status\s+(?:will\s+be|is|gets|becomes|will\s+become)\s+(?:changed\s+|set\s+|updated\s+|moved\s+)?(?:to\s+)?{_QVAL}")
_MARKS = re.compile(rf"\bmarks?\s+{_ART}{_SUBJ}?\s*as\s+{_QVAL}")
_MARKED = re.compile(rf"\b{_ART}{_SUBJ}\s+(?:is|are|will\s+be|gets|get)\s+marked\s+(?:as\s+)?{_QVAL}")
_MOVES = re.compile(rf"\b(?:moves?|transitions?|puts?|brings?)\s+{_ART}{_SUBJ}?\s*(?:in)?to\s+(?:the\s+|a\s+|an\s+)?{_QVAL}\s+(?:state|status|stage)\b")
# "Revert a payroll timesheet to draft", "Rolls the invoice back to Pending": going back names an earlier state
_REVERTS = re.compile(rf"\b(?:reverts?|rolls?\s+back)\s+{_ART}{_SUBJ}?\s*(?:back\s+)?to\s+{_QVAL}(?=\s*(?:[.,;]|$|\b(?:in|by|via|from|status|state)\b))")
_LIT = r"(?P<val>-?\d+(?:\.\d+)?|true|false|zero|null|none|empty|'[^']{0,40}'|`[^`]{0,40}`|\"[^\"]{0,40}\")"
_ASSIGN = re.compile(rf"\b(?:sets?|resets?|changes?|updates?)\s+(?:the\s+|its\s+)?(?:(?P<subj>[a-z][a-z ]{{0,30}}?)'s\s+)?(?P<field>[a-z][a-z0-9_]*(?:\s+[a-z][a-z0-9_]*)?)\s+(?:back\s+)?to\s+{_LIT}(?=\s*(?:[.,;]|$|\band\b))")
_ASSIGN_WILL = re.compile(rf"\b(?:the\s+|its\s+)?(?:(?P<subj>[a-z][a-z ]{{0,30}}?)'s\s+)?(?P<field>[a-z][a-z0-9]*_[a-z0-9_]+)\s+(?:is|will\s+be|gets)\s+(?:set|reset|changed)\s+(?:back\s+)?to\s+{_LIT}(?=\s*(?:[.,;]|$|\band\b))")
_CLEAR = re.compile(r"\b(?:clears?|empties|erases?)\s+(?:the\s+|its\s+)?(?:(?P<subj>[a-z][a-z ]{0,30}?)'s\s+)?(?P<field>[a-z][a-z0-9]*_[a-z0-9_]+)\b")
_CLEAR_WILL = re.compile(r"\b(?:the\s+|its\s+)?(?:(?P<subj>[a-z][a-z ]{0,30}?)'s\s+)?(?P<field>[a-z][a-z0-9]*_[a-z0-9_]+)\s+(?:is|will\s+be|gets)\s+(?:cleared|emptied|erased)\b")
_RECORD = re.compile(
    r"\b(?:records?|stores?|saves?|stamps?)\s+(?:the\s+|its\s+|their\s+|a\s+)?(?:new\s+|given\s+)?"
    r"(?P<field>[a-z][a-z0-9_]*(?:\s+[a-z][a-z0-9_]*){0,2}?)"
    r"(?:\s+(?:as|to)\s+(?P<what>today's\s+date|the\s+current\s+(?:date|time)|the\s+date|now|the\s+time))?"
    r"(?:\s+(?:on|in|for|with)\s+(?P<subj>(?:the\s+|its\s+)?[a-z][a-z ]{0,30}?))?(?=\s*(?:[,.;]|$|\band\b|\bso\b|\bwhen\b))"
)
_TOGGLE_A = re.compile(r"\b(?P<verb>enables?|disables?|turns?\s+on|turns?\s+off|switch(?:es)?\s+on|switch(?:es)?\s+off)\s+(?:the\s+)?(?P<thing>[a-z][a-z_ -]{1,30}?)(?:\s+(?:for|on|of)\s+(?P<subj>(?:the\s+|a\s+|an\s+)?[a-z][a-z ]{0,30}?))?(?=\s*(?:[,.;]|$|\band\b))")
_TOGGLE_B = re.compile(r"\b(?:turns?|switch(?:es)?)\s+(?:the\s+)?(?P<thing>[a-z][a-z_ -]{1,30}?)\s+(?P<onoff>on|off)\b(?:\s+(?:for|on|of)\s+(?P<subj>(?:the\s+|a\s+|an\s+)?[a-z][a-z ]{0,30}?))?(?=\s*(?:[,.;]|$|\band\b))")
_MONEY = re.compile(
    r"\b(?P<verb>refund|add|credit|deposit|return|deduct|charge|debit|withdraw|subtract|take)(?:s|ed|es)?\s+"
    r"(?:the\s+|its\s+|their\s+)?(?!(?:is|are|was|will|be|being)\b)(?P<what>[a-z_]+(?:\s+[a-z_]+)?|\d+(?:\.\d+)?)\s+(?P<dir>to|from|into|onto|against|on)\s+"
    r"(?P<dest>[a-z][a-z' _]{0,40}?)(?=\s*(?:[,.;]|$|\band\b|\bif\b|\bwhen\b|\bunless\b))"
)
_MONEY_WILL = re.compile(r"\b(?:the\s+)?(?P<what>refund|amount|total|payment)\s+(?:will\s+be|is)\s+(?P<verb>added|credited|refunded|returned|deducted|charged|debited|withdrawn)\s+(?P<dir>to|from|into|onto)\s+(?P<dest>[a-z][a-z' _]{0,40}?)(?=\s*(?:[,.;]|$|\band\b|\bif\b|\bwhen\b|\bunless\b|\bimmediately\b))")
_N = r"(?P<n>\d+(?:\.\d+)?|one|two|three|four|five|ten|[a-z0-9]+_[a-z0-9_]+|the\s+amount|the\s+quantity)"
_COUNT_TO = re.compile(r"\b(?P<verb>adds?|gives?|grants?|removes?|takes?|subtracts?|deducts?)\s+" + _N + r"\s+(?:[a-z]+\s+)?(?:of\s+(?P<stuff>[a-z ]+?)\s+)?(?P<dir>to|from)\s+(?:the\s+|its\s+)?(?:(?P<subj>[a-z][a-z ]{0,30}?)'s\s+)?(?P<field>[a-z][a-z0-9_]*)\b")
_COUNT_BY = re.compile(r"\b(?P<verb>increases?|increments?|raises?|decreases?|decrements?|reduces?|lowers?)\s+(?:the\s+|its\s+)?(?:(?P<subj>[a-z][a-z ]{0,30}?)'s\s+)?(?P<field>[a-z][a-z0-9_ ]{0,30}?)\s+by\s+(?:the\s+)?(?:(?:ordered|given|requested|specified|returned|purchased)\s+)?(?P<n>[a-z_0-9]+(?:\.\d+)?)")
_ONLY_A = re.compile(rf"\bonly\s+(?:a\s+|an\s+|the\s+)?{_QVAL}\s+(?P<subj>[a-z][a-z ]{{0,30}}?)\s+(?:can|may)\b")
_MUST_BE = re.compile(rf"\b(?:the\s+|it\s+|its\s+)?(?P<subj>[a-z][a-z ]{{0,30}}?)?\s*(?:must|has\s+to|needs\s+to)\s+be\s+(?:in\s+(?:the\s+)?)?(?:status\s+)?{_QVAL}")
_ONLY_IF = re.compile(rf"\bonly\s+(?:be\s+[a-z]+\s+)?(?:if|when)\s+(?:it|the\s+(?P<subj>[a-z][a-z ]{{0,30}}?)|its\s+status)\s+is\s+(?:in\s+)?(?:status\s+)?{_QVAL}")
# "Update an existing Sales Order (only in Draft status)", "works only for records in the Open state"
_ONLY_IN = re.compile(rf"\bonly\s+(?:works\s+)?(?:(?:for|on)\s+(?P<subj>[a-z][a-z ]{{0,30}}?)\s+)?(?:in|when\s+in)\s+(?:the\s+)?{_QVAL}\s+(?:status|state|stage)\b")
_VALS = r"(?P<vals>[\w`'\" -]{1,60}?)"
_FORBID = (
    # "A line cannot be moved to another plan while it is Suspended", "not allowed if the member is `frozen`"
    re.compile(rf"\b(?:cannot|can't|can\s+not|may\s+not|must\s+not|is\s+not\s+(?:allowed|possible|permitted)|not\s+(?:allowed|possible|permitted))\b[^.;]*?\b(?:if|when|while)\s+(?:it|the\s+(?P<subj>[a-z][a-z ]{{0,30}}?)|its\s+status)\s+is\s+(?:already\s+|still\s+)?(?:in\s+)?{_VALS}(?=\s*(?:[.;,]|$))", re.I),
    # "Once suspended, a line cannot be refuelled"
    re.compile(rf"\bonce\s+{_VALS}\s*,\s*(?:a\s+|an\s+|the\s+)?(?:it|(?P<subj>[a-z][a-z ]{{0,30}}?))\s+(?:cannot|can't|can\s+not|may\s+not)\b", re.I),
    # "Fails if the ticket is closed", "Returns an error when it is already cancelled"
    re.compile(rf"\b(?:fails?|errors?|is\s+rejected|returns\s+an\s+error|raises\s+an\s+error)\s+(?:if|when|while)\s+(?:it|the\s+(?P<subj>[a-z][a-z ]{{0,30}}?))\s+is\s+(?:already\s+|still\s+)?{_VALS}(?=\s*(?:[.;,]|$))", re.I),
    # "completed tasks only allow updating summary and related files": a state in which the tool's change is refused
    # (over-strict for the few fields named, which no task needs)
    re.compile(r"\b(?P<vals>[a-z]+ed|done|closed|final|archived)\s+(?P<subj>[a-z]+)\s+(?:only\s+allow|can\s+only\s+have|may\s+only\s+have)\s+(?:updating|changing|editing|modifying|updates|changes|edits)\b", re.I),
    # "does not allow deleting completed tasks", "won't cancel shipped orders": the state as the object's adjective
    re.compile(r"\b(?:does\s+not|doesn't|do\s+not|don't|will\s+not|won't|cannot|can't)\s+(?:allow\s+|permit\s+|support\s+)?(?:[a-z]+ing|delete|remove|cancel|close|archive|modify|edit|update|change)\s+(?:any\s+|the\s+)?(?P<vals>(?:[a-z]+ed|active|done|open|closed|finished|complete|final)(?:\s+or\s+(?:[a-z]+ed|done|open|closed|complete))?)\s+(?P<subj>[a-z]+)(?=\s*(?:[.;,]|$|\b(?:and|but|to|from|ensuring)\b))", re.I),
    # "Only works on submitted (non-completed) Sales Orders": a state the record must not be in, as "non-" its name
    # (kept only where it names a documented state)
    re.compile(r"\bnon-(?P<vals>[A-Za-z]+)\b(?P<subj>)"),
    # "If the order is already processed or delivered, it cannot be cancelled"
    re.compile(rf"\b(?:if|when|while)\s+(?:it|the\s+(?P<subj>[a-z][a-z ]{{0,30}}?))\s+is\s+(?:already\s+|still\s+)?{_VALS}\s*,\s*(?:it|they)\s+(?:cannot|can't|can\s+not|may\s+not)\b", re.I),
)
# ownership: "The customer who owns the line." / "The owner of the line." (said of a parameter),
# "The rental must belong to the member."
_OWNS = re.compile(r"\b(?:(?:who|that|which)\s+owns|the\s+owner\s+of|must\s+own|is\s+the\s+owner\s+of)\s+(?:the|this|that)\s+(?P<b>[a-z][a-z ]{0,30}?)(?=\s*(?:[.,;]|$|\band\b|\bto\b|\bbeing\b))")
_BELONGS = re.compile(r"\b(?:the\s+|this\s+)?(?P<b>[a-z][a-z ]{0,30}?)\s+(?:must|should|has\s+to|needs\s+to)\s+belong\s+to\s+(?:the\s+|this\s+)?(?P<a>[a-z][a-z ]{0,30}?)(?=\s*(?:[.,;]|$))")
# numeric bounds: "Amount must be positive and at most 500 USD", "must be between 1 and 10"
_BOUND_HEAD = re.compile(r"(?:^|\b(?:the\s+)?(?P<subj>[a-z][a-z0-9_]*(?:\s+[a-z][a-z0-9_]*)?)\s+)(?:must|should|has\s+to|needs\s+to)\s+be\s+(?P<rest>[^.;]*)")
_BOUNDS = (
    (re.compile(r"^\s*(?:strictly\s+)?positive\b"), ">", 0),
    (re.compile(r"^\s*(?:non-?negative|zero\s+or\s+more)\b"), ">=", 0),
    (re.compile(r"^\s*(?:at\s+least|no\s+less\s+than|not\s+less\s+than|a\s+minimum\s+of)\s+\$?(?P<n>\d+(?:\.\d+)?)"), ">=", None),
    (re.compile(r"^\s*(?:at\s+most|no\s+more\s+than|not\s+more\s+than|up\s+to|a\s+maximum\s+of)\s+\$?(?P<n>\d+(?:\.\d+)?)"), "<=", None),
    (re.compile(r"^\s*(?:greater|more|larger|higher)\s+than\s+\$?(?P<n>\d+(?:\.\d+)?)"), ">", None),
    (re.compile(r"^\s*(?:less|fewer|smaller|lower)\s+than\s+\$?(?P<n>\d+(?:\.\d+)?)"), "<", None),
)
_BETWEEN = re.compile(r"^\s*between\s+\$?(?P<a>\d+(?:\.\d+)?)\s+and\s+\$?(?P<b>\d+(?:\.\d+)?)")


def _bounds(low: str, sent: str) -> list[Fact]:
    out: list[Fact] = []
    for m in _BOUND_HEAD.finditer(low):
        subj = _subj(m.group("subj"))
        for part in re.split(r"\s*(?:,\s*and|\band\b|,)\s*(?=(?:at|no|not|positive|non|greater|more|less|fewer|between|strictly|a\s+m))", m.group("rest")):
            b = _BETWEEN.match(part)
            if b:
                out += [Fact("bound", sent, subj, ">=", parse_num(b.group("a"))), Fact("bound", sent, subj, "<=", parse_num(b.group("b")))]
                continue
            for rx, op, n in _BOUNDS:
                hit = rx.match(part)
                if hit:
                    out.append(Fact("bound", sent, subj, op, n if n is not None else parse_num(hit.group("n"))))
                    break
    return out


_SAME = re.compile(r"\b(?:of|with|from|in|on|have|has|share)\s+the\s+same\s+(?P<f>[a-z][a-z_]*(?:\s+[a-z][a-z_]*){0,2}?)(?=\s*(?:as\b|[.,;]|$|\band\b))")
_RETURNS = re.compile(r"\b(?:returns?|gives?\s+back|responds\s+with|yields?)\s+(?:the\s+|its\s+|their\s+|a\s+|an\s+)?(?:matching\s+)?(?P<subj>[a-z][a-z ]{0,30}?)(?:'s)?\s+(?P<what>ids?|identifiers?|keys?|records?|details|profiles?)\b")
_ONCE = re.compile(r"\b(?:only\s+(?:be\s+)?[a-z ]{0,30}?\s*once|(?:can|may)\s+only\s+be\s+[a-z ]{0,30}?\bonce|at\s+most\s+once)\b")
_ONE_OF = re.compile(r"\b(?:either|one\s+of|only\s+be|must\s+be|should\s+be|allowed\s+values?\s+(?:are|is))\b[:\s]*(?=(?P<rest>.*)$)")
_QUOTED = re.compile(r"'([^']{1,60})'|\"([^\"]{1,60})\"|`([^`]{1,60})`")

_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10}
_CREDIT_STEMS = ("refund", "add", "credit", "deposit", "return", "give", "grant")  # the rest debit


def read_sentence(sent: str) -> list[Fact]:
    """Every fact one sentence states (a sentence may state several: "sets X and records Y")."""
    out: list[Fact] = []
    low = sent.lower()
    for rx in (_STATUS_SET, _STATUS_WILL, _MARKS, _MARKED, _MOVES, _REVERTS):
        # match on the original text so a value keeps its documented spelling ("Suspended")
        for m in rx.finditer(_lower_but_values(sent)):
            v = _val(m)
            if v is not None and not (rx in (_MARKS, _MARKED) and _subj(m.group("subj")) in ("read", "done")):
                out.append(Fact("status", sent, _subj(m.group("subj")), "status", v))
    for rx in (_ASSIGN, _ASSIGN_WILL):
        for m in rx.finditer(_lower_but_values(sent)):
            if "status" not in m.group("field").split():
                out.append(Fact("assign", sent, _subj(m.group("subj")), m.group("field"), _literal(m.group("val"))))
    for rx in (_CLEAR, _CLEAR_WILL):
        for m in rx.finditer(low):
            out.append(Fact("assign", sent, _subj(m.group("subj")), m.group("field"), None, amount="clear"))
    for m in _RECORD.finditer(low):
        f = m.group("field").strip()
        if f in ("status", "it", "them", "the", "a") or f.startswith("status ") or " or " in f:
            continue
        what = m.group("what")
        out.append(Fact("record", sent, _subj(m.group("subj")), f, "now" if what else None))
    for m in _TOGGLE_A.finditer(low):
        on = not re.match(r"disables?|turns?\s+off|switch(?:es)?\s+off", m.group("verb"))
        out.append(Fact("toggle", sent, _subj(m.group("subj")), m.group("thing").strip(), on))
    for m in _TOGGLE_B.finditer(low):
        out.append(Fact("toggle", sent, _subj(m.group("subj")), m.group("thing").strip(), m.group("onoff") == "on"))
    for rx in (_MONEY, _MONEY_WILL):
        for m in rx.finditer(low):
            verb, what, dest = m.group("verb"), m.group("what"), m.group("dest").strip()
            if not re.search(r"(?:\b|_)(balance|card|credit|wallet|account|payment method|bill|funds)(?:\b|_)", dest):
                continue
            sign = 1 if verb.startswith(_CREDIT_STEMS) else -1
            subj, _, fld = dest.partition("'s ")
            out.append(Fact("money", sent, _subj(subj if fld else dest), fld.strip() or "balance", None, sign, what, _cond(low, m), _when(sent, m)))
    for m in _COUNT_TO.finditer(low):
        if any(f.kind == "money" for f in out):
            continue
        sign = 1 if m.group("dir") == "to" else -1
        out.append(Fact("count", sent, _subj(m.group("subj")), m.group("field"), m.group("stuff"), sign, re.sub(r"^the\s+", "", m.group("n")), _cond(low, m), _when(sent, m)))
    for m in _COUNT_BY.finditer(low):
        sign = 1 if re.match(r"increase|increment|raise", m.group("verb")) else -1
        out.append(Fact("count", sent, _subj(m.group("subj")), m.group("field").strip(), None, sign, m.group("n"), _cond(low, m), _when(sent, m)))
    for rx in (_ONLY_A, _MUST_BE, _ONLY_IF, _ONLY_IN):
        for m in rx.finditer(_lower_but_values(sent)):
            v = _val(m)
            if v is not None:
                out.append(Fact("require", sent, _subj(m.groupdict().get("subj")), "status", v))
    if _ONCE.search(low):
        out.append(Fact("once", sent))
    for rx in _FORBID:
        for m in rx.finditer(sent):
            vals = [x.strip(" `'\"") for x in re.split(r",|\bor\b|\band\b", m.group("vals"))]
            vals = [x for x in vals if x and x.lower() not in _NOT_VALUES]
            if vals:
                out.append(Fact("forbid", sent, _subj(m.group("subj")), "status", tuple(vals)))
    out += _bounds(low, sent)
    for m in _SAME.finditer(low):
        out.append(Fact("same", sent, "", m.group("f").strip()))
        more = re.match(r"\s*(?:and|,)\s+(?:the\s+)?(?P<g>[a-z][a-z_]*)\b", low[m.end():])
        if more:  # "the same origin and destination": both
            out.append(Fact("same", sent, "", more.group("g")))
    for m in _OWNS.finditer(low):
        out.append(Fact("owns", sent, "", m.group("b").strip()))
    for m in _BELONGS.finditer(low):
        out.append(Fact("owns", sent, _subj(m.group("a")), _subj(m.group("b"))))
    for m in _RETURNS.finditer(low):
        key = re.match(r"ids?|identifiers?|keys?", m.group("what")) is not None
        out.append(Fact("returns", sent, _subj(m.group("subj")), "key" if key else "record"))
    # "can only be cancelled if its status is 'pending'": the state required, not one the call sets
    needed = {f.value for f in out if f.kind == "require"}
    return [f for f in out if not (f.kind == "status" and f.value in needed and re.search(r"\b(if|when|unless|only)\b", low))]


def _literal(x: str):
    x = x.strip()
    if x[:1] in "'`\"":
        return x[1:-1]
    if x in ("true", "false"):
        return x == "true"
    if x == "zero":
        return 0
    if x in ("null", "none", "empty"):
        return None
    return parse_num(x)


_WHEN = re.compile(rf"^\W*(?:\w+\W+){{0,3}}?(?:if|when|only\s+when)\s+(?:it|the\s+(?P<subj>[a-z][a-z ]{{0,30}}?)|its\s+status)\s+(?:is|was)\s+(?:already\s+|still\s+)?{_QVAL}(?=\s*(?:[.;,]|$))")


def _when(sent: str, m: re.Match) -> tuple:
    """"... to the member's wallet_balance if the rental is `late`": (subject, state), when the
    condition right after the effect is a record's state (read against its status enum later)."""
    w = _WHEN.match(_lower_but_values(sent)[m.end():])
    if w is None or _val(w) is None:
        return ()
    return (_subj(w.group("subj")), _val(w))


def _cond(low: str, m: re.Match) -> bool:
    """A condition after the effect ("... immediately if the payment was made by gift card")."""
    return bool(re.search(r"\b(if|unless|otherwise|when)\b", low[m.end():]))


def _lower_but_values(sent: str) -> str:
    """Lower-case the words a pattern keys on, keep capitalized state names and quotes as
    written: "Sets the line status to Suspended" -> "sets the line status to Suspended"."""
    def low(m: re.Match) -> str:
        w = m.group(0)
        return w.lower() if m.start() == 0 or not w[:1].isupper() or w.isupper() else w
    return re.sub(r"[A-Za-z][\w-]*", low, sent)


@lru_cache(maxsize=4096)
def read(description: str) -> tuple[Fact, ...]:
    """The facts of a whole description, in sentence order."""
    out: list[Fact] = []
    for sent in sentences(description):
        out += read_sentence(sent)
    return tuple(out)


@lru_cache(maxsize=4096)
def allowed_values(description: str) -> tuple[tuple[str, ...], str] | None:
    """"either 'a' or 'b'", "one of: a, b, c", "can only be 'x' or 'y'" in a parameter's
    description -> (the values, the sentence); None when it lists no closed set."""
    for sent in sentences(description):
        for m in _ONE_OF.finditer(sent.lower()):
            got = _closed_set(sent[len(sent) - len(m.group("rest")):], m.group(0).lower())
            if got:
                return got, sent
        m = _LEADING_LIST.match(sent)  # a description that opens with the values: '"user", "group", or "default" to ...'
        if m:
            return tuple(dict.fromkeys(a or b or c for a, b, c in _QUOTED.findall(m.group(0)))), sent
        m = _PAREN_LIST.search(sent)  # the values in parentheses: 'Type of connector ("straight", "elbow", "curved")'
        if m and not re.search(r"\b(e\.?g|i\.?e|for example|such as|like|example)\b", sent[: m.start() + 12], re.I):
            return tuple(dict.fromkeys(a or b or c for a, b, c in _QUOTED.findall(m.group(0)))), sent
    return None


_PAREN_LIST = re.compile(r"""\(\s*(?:(?:'[^'\n]{1,40}'|"[^"\n]{1,40}"|`[^`\n]{1,40}`)\s*,\s*)+(?:or\s+)?(?:'[^'\n]{1,40}'|"[^"\n]{1,40}"|`[^`\n]{1,40}`)\s*\)""")


_LEADING_LIST = re.compile(r"""\s*(?:(?:'[^'\n]{1,40}'|"[^"\n]{1,40}"|`[^`\n]{1,40}`)\s*,\s*)+(?:or\s+)?(?:'[^'\n]{1,40}'|"[^"\n]{1,40}"|`[^`\n]{1,40}`)""")


@lru_cache(maxsize=4096)
def allowed_for(description: str, param: str) -> tuple[tuple[str, ...], str] | None:
    """A closed set the *tool's* prose states for one parameter: "The reason can only be either
    'no longer needed' or 'ordered by mistake'" -> the values for `reason`."""
    pw = [w for w in words(param) if w not in ("id",)]
    for sent in sentences(description):
        for m in _ONE_OF.finditer(sent.lower()):
            before = words(re.sub(r"[^a-z0-9_ ]", " ", sent.lower()[: m.start()]))
            if not pw or not any(before[i : i + len(pw)] == pw for i in range(len(before) - len(pw) + 1)):
                continue
            got = _closed_set(sent[len(sent) - len(m.group("rest")):], m.group(0).lower())
            if got:
                return got, sent
    return None


def _closed_set(rest: str, lead: str) -> tuple[str, ...] | None:
    quoted = [a or b or c for a, b, c in _QUOTED.findall(rest)]
    if len(quoted) >= 2 and re.fullmatch(r"[\s,:]*(?:(?:'[^']*'|\"[^\"]*\"|`[^`]*`)\s*(?:,\s*(?:or\s+)?|\bor\b|\band\b)?\s*)+[.;]?\s*", rest):
        return tuple(dict.fromkeys(quoted))
    if "one of" in lead or "allowed" in lead:
        items = [x.strip(" .;`'\"") for x in re.split(r",|\bor\b", rest)]
        if len(items) >= 2 and all(re.fullmatch(r"[A-Za-z0-9_-]{1,30}", x) for x in items):
            return tuple(dict.fromkeys(items))
    return None


def parse_num(x: str):
    if re.fullmatch(r"\d+", x or ""):
        return int(x)
    if re.fullmatch(r"\d+\.\d+", x or ""):
        return float(x)
    return _NUMBER_WORDS.get(x or "")


# --------------------------------------------------------------------------- matching names


def words(x: str) -> list[str]:

    return [singular(w) for w in tokens(x.replace("'s", "").replace("-", "_"))]


def names_entity(phrase: str, entity: str) -> bool:
    """Whether a noun phrase names the entity: "line" ~ Line, "payment method" ~ PaymentMethod,
    "the customer's line" ~ Line (its head noun), "gift card balance" ~ GiftCard."""
    pw, ew = words(phrase), words(entity)
    if not pw or not ew:
        return False
    n = len(ew)
    return any(pw[i : i + n] == ew for i in range(len(pw) - n + 1))


def field_named(fields, phrase: str, types=None) -> str | None:
    """The field a phrase names: exactly (`data_refuelled_gb`), or one whose words contain the
    phrase's words (`roaming` -> `roaming_enabled`); `types` filters on the field's type."""

    ok = (lambda f: True) if types is None else (lambda f: A.strip_optional(f.type) in types)
    exact = ident(snake(phrase.replace(" ", "_")))
    if exact in fields and ok(fields[exact]):
        return exact
    if "_" in phrase.strip():
        return None  # a documented identifier names that field or none
    pw = [w for w in words(phrase) if w not in ("the", "a", "an", "of", "its")]
    if not pw:
        return None
    hits = [n for n, f in fields.items() if ok(f) and set(pw) <= set(words(n))]
    if len(hits) == 1:
        return hits[0]
    head = [n for n, f in fields.items() if ok(f) and pw[-1] in words(n)]
    return head[0] if len(head) == 1 else None


def once_field(v) -> str:
    """The flag a tool documented as usable only once sets on its record."""

    return ident(f"{v.name}_done")


def amounts(facts) -> set[str]:
    """Parameter names a description moves into a balance or a counter ("adds gb_amount GB")."""
    return {f.amount for f in facts if f.kind in ("money", "count") and f.amount and not f.conditional}


def returned(facts, entities) -> tuple[str, Fact] | None:
    """(entity, fact) a lookup says it returns ("Returns the customer id" -> Customer)."""
    for f in facts:
        if f.kind == "returns" and f.subject:
            hits = [e for e in entities if names_entity(f.subject, e)]
            if len(hits) >= 1:
                return max(hits, key=lambda e: len(words(e))), f
    return None


def says_own_change(v) -> bool:
    """Whether the description says how the tool's own record changes (its status, a recorded
    value, a flag, a count, a balance): then a record passed along (the owner's id) is no new
    value. Changes said only of other records ("increments the agent's open_tickets") are not."""
    return any(f.kind in ("status", "record", "toggle", "assign", "count", "money") and (not f.conditional or f.when)
               and (not f.subject or (v.target and names_entity(f.subject, v.target))) for f in v.facts)


def state_facts(facts) -> list[Fact]:
    """The facts that change state (not preconditions)."""
    return [f for f in facts if f.kind in ("status", "record", "toggle", "money", "count", "assign")]


def cite(text: str) -> str:
    """A sentence, shortened for a one-line comment."""
    t = " ".join(text.split())
    return t if len(t) <= 160 else t[:157].rstrip() + "..."


BOOL = A.PrimType("bool")
NUMS = (A.PrimType("int"), A.PrimType("float"))


__all__ = ["Fact", "read", "read_sentence", "sentences", "allowed_values", "allowed_for", "names_entity", "field_named", "state_facts",
           "amounts", "once_field", "returned", "says_own_change", "cite"]
