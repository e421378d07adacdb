"""The quality gate: a sampled task is emitted only if every check passes (issue 21).

A benchmark author (../shared/review/rubric.md) takes a task when a person could say it, the
gold path is what a competent agent would do, exactly one end state satisfies it and it is not
trivial, and its values respect the docs. Each check below is one of those conditions, read
from the task's own parts and from the docs (the env's types, documented values and bounds, its
tools' preconditions and effects), never from a list of domain words. A failed check names a
rejection reason; the sampler counts it (`manifest.json`: `envs.<env>.stats.sampler_rejected`,
`forgec stats`), so an env that yields few tasks says why.

The checks, in the order `check` runs them (cheapest first):

| reason               | the task is rejected when                                                            |
|----------------------|--------------------------------------------------------------------------------------|
| `names-tool`         | the instruction holds a tool identifier or all of a tool's words in a row            |
| `pipeline-words`     | the instruction speaks the pipeline's language ("returned by", "search results")     |
| `no-verb-phrase`     | an intent is not a verb phrase (it starts with a preposition, a pronoun, a gerund...)|
| `doc-preamble`       | an intent is built from a docs preamble about the tool ("this tool belongs to...")   |
| `unsourced-argument` | a write's argument is neither said by the user, nor read from an earlier node        |
| `none-of-required`   | a call passes nothing to a tool whose docs say at least one of its parameters must be given |
| `dictated-call`      | one write and nothing else: no lookup, no decision, every argument dictated          |
| `named-target`       | the lookup only finds the id of a record the tool would take by the name the user said |
| `two-ways`           | a written value could go in either of two parameters for one thing (phone / phones)  |
| `guard-holds`        | the only decision guards dictated writes and holds: never looking ends the same      |
| `single-read`        | a question answered by one list read and a selection or a count, with no total, extreme or comparison |
| `dictated-id`        | a dictated write chain where the user gives an id                                    |
| `dictated-chain`     | writes only, every argument dictated: a form filled in, no lookup or decision        |
| `dictated-numbers`   | one write dictates four or more bare numbers (coordinates, sizes, indexes): a form, not a request |
| `write-to-final`     | a write acts on a record whose state the docs make final (and the tool does not allow it) |
| `made-under-finished`| a write adds a record under one whose work is over (a subtask of a completed task)       |
| `ended-and-edited`   | one edit sets a record's status to an end and changes its other fields ("cancel it and raise its priority") |
| `deletes-default`    | a delete acts on the account's default or primary record (the default calendar) |
| `create-adds-nothing`| a create tool only overwrites a field of an existing record: the act is modelled wrongly |
| `undone-write`       | a later write restores a value an earlier write changed                              |
| `repeated-write`     | the same write twice, or one tool setting the same field of the same record again    |
| `value-outside-docs` | a written value lies outside the docs' enum, listed values or numeric bounds         |
| `said-ignored`       | the user dictates an argument the tool never reads (the end state cannot show it)     |
| `indefinite-target`  | the words say "from a project" where the write names one of several the user never said |

`Lifecycle` derives which states are final: from the env's tools (a tool that moves a record's
state field to a value by a literal `set`, under `require` preconditions on that field), and from
the docs' own words on the field ("Once closed, a ticket can no longer be changed").
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from forgec.english import ENDING_STATES, is_ending_state, plural, singular, verb_of_noun
from forgec.lang import ast as A
from forgec.wording import CALL_SWITCHES, doc_pattern, fits_doc_format, format_url_choices, is_confirm_switch, names_tool, norm
from forgec.lower import said_in
from forgec.runtime.envrt import jcopy
from forgec.tasks import state_diff

# Reasons, with what each means (printed by `forgec stats` for an env that yields few tasks).
REASONS: dict[str, str] = {
    "names-tool": "the instruction names a tool",
    "pipeline-words": "the instruction speaks the pipeline's language",
    "no-verb-phrase": "an intent is not a verb phrase",
    "doc-preamble": "an intent was built from a docs preamble about the tool",
    "unsourced-argument": "a write argument is not said by the user nor read from the records acted on",
    "dictated-call": "no lookup or decision: the user dictates every argument",
    "named-target": "the tool takes the record's name, which the user said: the lookup for its id is optional",
    "two-ways": "the tool takes the user's value in two parameters (phone and phones, a whole name and its parts): two end states satisfy it",
    "guard-holds": "a condition that guards dictated writes and holds: an agent that never looks ends in the same state",
    "single-read": "a question one read answers with no decision (the field of one named record)",
    "dictated-id": "a dictated write chain in which the user gives a record's id (a person does not know ids)",
    "dictated-chain": "writes only, every argument dictated: no lookup or decision",
    "dictated-numbers": "a write dictates four or more bare numbers (coordinates, sizes, indexes): a form read out, not a request",
    "write-to-final": "a write acts on a record in a state the docs make final",
    "made-under-finished": "a write adds a record under one whose work is over (a subtask of a completed task)",
    "ended-and-edited": "one write ends a record (its status to an end state) and edits its other fields",
    "deletes-default": "a delete acts on the account's default or primary record, which real APIs refuse",
    "create-adds-nothing": "a create tool only overwrites a field of an existing record (the act is modelled wrongly)",
    "mismatched-parents": "a write names two records where one belongs to another than the other (a repository of another organization)",
    "undone-write": "a later write undoes an earlier one",
    "repeated-write": "a write is repeated",
    "value-outside-docs": "a written value is outside the docs' enum or bounds",
    "said-ignored": "the user dictates an argument the tool never reads, so the end state cannot show it",
    "indefinite-target": "the words say \"from a project\" where the write names one of several the user never said",
    # the scenario sampler's, before the gate: explained here so `forgec stats` says them in words
    # ("no-intent:unfillable-argument": no intent could be made, most often for that reason)
    "docs-no-act": "no sentence of the tool's docs describes an act (only preambles, notes, return values)",
    "no-intent": "no write the user could ask for was made",
    "nothing-done": "every intent's condition failed, so nothing was done",
    "blind-pick": "a record picked by a rank ('my project with the latest due date') given a value made from its name",
    "unfillable-argument": "a required argument has no value the user knows or the records give",
    "default-resets": "an update leaves out a parameter whose documented default would reset a field of the record the user never asked to change",
    "untyped-argument": "a required argument the docs give no type or fields for (an opaque request body): nothing a person could be asked to fill",
    "no-lookup": "no read lists the records a write acts on, and their keys are ids a person does not know",
    "no-lookup-for-described": "a record the write needs has no search a person could describe it by",
    "write-failed": "the write fails on the world state with the values found",
    "write-would-fail": "a write hung on a condition would fail were the condition true (its premise is untrue)",
    "not-the-users-business": "the write acts on no record the user owns",
    "nothing-to-ask": "no read answers a question about the user's records",
    "no-referring-expression": "no attributes single the record out among the user's records",
    "duplicate": "the same request as an earlier task",
    "unnamed-person": "a new person would be made without their name",
    "none-of-required": "a call passes none of the parameters its docs say at least one of must be given",
    "own-privilege": "an update of the user's own account must set its role or state, which no person changes of themselves in passing",
    "subtype-tool": "a tool named for one kind of record (`delete_image_item`) where no record is of that kind and a generic tool exists",
    "unrelated-intents": "an owner's second ask is about another kind of record: two requests stitched together",
    "thin-create": "a new record would hold one optional detail and nothing the docs require: no record a person asks for",
    "unnamed-create": "a new record would be made without the name the docs let the user give it",
    "create-existing": "a create whose record key would name an existing record (the new record's key is no target)",
    "self-move": "a write names one record as both of its ends (a move from a folder into itself)",
    "action-mismatch": "a tool that does several acts (`action: create|update`) would be called with another act than the one the user asks for",
    "template-cap": "its template (the same tools called in the same order) already has its share of the env's tasks",
    "evolve-rule": "a rule of evolve.json (`forgec evolve`) rejects its family: its tasks were found defective",
    "evolve-curriculum": "evolve.json's curriculum thins out its family (the agent always or never solves it)",
}

# --------------------------------------------------------------------------- text: grammar data

# English closed-class words (determiners, pronouns, prepositions, conjunctions, auxiliaries and
# modals, sentence adverbs): none of them heads a verb phrase. The one list is forgec/english.py.
from forgec.english import CLOSED_CLASS, LIGHT_VERBS  # noqa: E402

# Self-reference of a doc to its tool: the subject of a preamble sentence, not an act a person asks for.
_PREAMBLE = re.compile(r"\b(?:this|the|that)\s+(?:tool|function|endpoint|operation|method|api|command|server|call|route)\b"
                       r"|\b(?:belongs to|is used to|can be used to|allows you to|lets you|use this)\b", re.I)

# The pipeline's own words: how a walk names a value ("the line returned by resume line").
_PIPELINE = re.compile(r"\breturned by\b|\bsearch results\b|\bthe (?:first|last) [\w ]{1,40}? in the\b|\bthat [\w ]{1,40} returns\b"
                       r"|\b(?:the )?(?:result|output|response) of\b|\bgold (?:call|path)\b|\bblueprint\b", re.I)


def verb_phrase(text: str) -> bool:
    """Whether `text` ("cancel my order ...") is a verb phrase a person would say after "Please":
    its head is an open-class word in base form (not a determiner, pronoun, preposition, auxiliary
    or sentence adverb, not a gerund or a past participle), and something follows it."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*|\S", text.strip())
    if len(words) < 2 or not words[0][0].isalpha():
        return False
    head = words[0].lower()
    if head in CLOSED_CLASS or not head.isalpha():
        return False
    if len(head) > 5 and head.endswith("ing") and head != "string":
        return False  # a gerund ("listing all ...") names an activity, not an act
    if head in LIGHT_VERBS:
        return False  # "handle updation of campaign": doc prose around a noun, no act a person names
    return True


# --------------------------------------------------------------------------- values the docs allow

_LISTED = re.compile(r"(?:^\s*|\b(?:one of|either|(?:possible|allowed|valid|accepted|supported) values?(?: (?:are|is|include))?|(?:available )?options?(?: are)?|choices?|must be|can be)\b[:\s]*|(?<=\w):\s+)"
                     r"((?:[`'\"][^`'\"\n]{1,40}[`'\"][\s,/|]*(?:or\s+|and\s+)?){2,})", re.I)
_QUOTED = re.compile(r"[`'\"]([^`'\"\n]{1,40})[`'\"]")
_CLAUSE_VALUE = re.compile(r"(?:^\s*|[,;]\s*)[`'\"]([^`'\"\n\s]{1,30})[`'\"](?=\s)")


_CODE_PAIR = re.compile(r"(?<![\w.])(-?\d+)\s*(?:=|:|-|means|for)\s*([A-Za-z][A-Za-z ]{0,30}?)(?=\s*[,;.()]|\s+or\b|\s*$)")


def code_labels(doc: str) -> dict[int, str]:
    """{code: label} of a number the docs give as a list of codes ("Matching algorithm: 0=None, 1=Any word, 2=All
    words"): the user says the label ("Any word"), as the product shows it; at least two pairs, each code once."""
    pairs = _CODE_PAIR.findall(doc or "")
    out = {int(c): lab.strip() for c, lab in pairs}
    return out if len(pairs) >= 2 and len(out) == len(pairs) else {}


# a short code and what it stands for, two or more in a series: "u for user entity, g for group entity"
_FOR_CODES = re.compile(r"(?:^|(?<=[\s,;:]))([a-z]{1,3})\s+for\s+[A-Za-z][\w ]{0,30}?(?=\s*(?:[,;.]|$|\bor\b|\band\b))")


def documented_values(doc: str, names: frozenset = frozenset()) -> list[str]:
    """The values a parameter's or field's doc lists for it ("one of 'celsius', 'fahrenheit'";
    "either `asc` or `desc`"); [] when the doc lists none, or when what it lists are `names` of
    fields or parameters ("either `content_base64` or `file_path` must be given" lists fields)."""
    return list(_listed(doc or "", frozenset(names)))


_EXAMPLES = re.compile(r"\b(?:e\.g\.?|eg\.|for example|such as|like)[:,]?\s*((?:[`'\"][^`'\"\n]{1,30}[`'\"][\s,/|]*(?:or\s+|and\s+)?){2,})", re.I)


@functools.lru_cache(maxsize=8192)
def documented_examples(doc: str) -> tuple[str, ...]:
    """Values a doc gives as examples ("Name of the emoji (e.g. 'thumbsup', 'rocket', 'eyes')"): not the
    only ones allowed (the gate never holds a value to them), but what a person asks for when the
    field's meaning is nothing a generator knows. Short words only; a path or an id is no example to reuse."""
    m = _EXAMPLES.search(doc or "")
    if m:
        found = _QUOTED.findall(m.group(1))
    elif (b := _BARE_EXAMPLES.search(doc or "")):
        found = [v.rstrip(".") for v in re.split(r",?\s+or\s+|,\s*", b.group(1)) if v.rstrip(".") not in ("", "etc")]  # "(e.g., valkey, pg, mysql, etc.)"
    elif (b := _ETC_EXAMPLES.search(doc or "")) and not _NAMES_FIELDS.search(doc[:b.start()]):
        found = [v for v in re.split(r",\s*", b.group(1)) if v]  # "Genre (fiction, non-fiction, sci-fi, fantasy, etc.)"
    else:
        return ()
    vals = tuple(dict.fromkeys(v for v in found if len(v.split()) <= 3 and not re.search(r"[/\\@:]|\d{3,}", v)))
    if vals and all(_PROPER_NAME.fullmatch(v) for v in vals):
        return ()  # every one a named thing of the real world ("The Witcher", "Dune Chronicles"), not "Quick", "Healthy"
    return vals if len(vals) >= 2 else ()


# a named thing of the real world ("The Witcher", "Dune Chronicles"): an example of the form, not a value to give a
# made-up record (review 82: a new book "Golden Forest" by Patricia Stewart filed under Frank Herbert's series)
_PROPER_NAME = re.compile(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)+")


# unquoted examples: two or more single tokens after the lead, closed by "etc", a parenthesis or the
# sentence's end ("The engine slug (e.g., valkey, pg, mysql, etc.)", "such as s-1vcpu-2gb or s-2vcpu-4gb");
# a lead followed by prose ("e.g. when the user asks") lists nothing
_BARE_TOKEN = r"[A-Za-z0-9][\w.-]{0,24}"
_BARE_EXAMPLES = re.compile(r"\b(?:e\.g\.?|eg\.|for example|such as)[:,]?\s+"
                            rf"({_BARE_TOKEN}(?:(?:,\s*|,?\s+or\s+){_BARE_TOKEN})+)(?:,?\s*etc\.?)?\s*(?:$|[);]|\.(?:\s|$))")


# a parenthesized list closed by "etc." with no lead: examples of an open set ("Language code (uk, en, ru, etc.)");
# "that is" before it is no value ("(i.e., System.History, AcceptanceCriteria, etc.)")
_ETC_EXAMPLES = re.compile(rf"\(\s*(?:i\.e\.,?\s*)?({_BARE_TOKEN}(?:,\s*{_BARE_TOKEN})+),?\s*etc\.?\s*\)")
# a list after "fields" names other fields, not this one's values ("Multi-line text fields (i.e., System.History, ...)")
_NAMES_FIELDS = re.compile(r"\b(?:fields?|parameters?|properties|attributes?|columns?)\s*$", re.I)


# a bare list of three or more lower-case values after a lead ("Filter: draft, pending, confirmed,
# processing, completed, cancelled"; "one of low, medium or high"; "status (open, closed, merged)"; "New status — a, b, or c")
_BARE_LISTED = re.compile(r"(?:\b(?:one of|filter|(?:possible |allowed |valid )?values?|options?|status(?:es)?|states?|types?)\s*[:—–]?\s+|\()"
                          r"([a-z][a-z_-]{1,20}(?:,\s*[a-z][a-z_-]{1,20}){1,}(?:,?\s+(?:or|and)\s+[a-z][a-z_-]{1,20})?)\s*(?:$|[.);])", re.I)


# a state's values in parentheses after its noun, capitalized as the product shows them ("Filter by status (Draft,
# Submitted, Partially Depreciated, Scrapped, Sold)"): ERPNext-style docs, where a lower-case list reads `_BARE_LISTED`.
# A value may hold lower-case joining words ("To Deliver and Bill"); a closing "etc." leaves the list as the states the
# docs name (a record is generated in one of them, never in an invented "active")
_PAREN_VALUE = r"[A-Z][a-z]+(?: (?:[A-Z][a-z]+|and|or|to|of|for|in|on|by))*(?: [A-Z][a-z]+)?"
_PAREN_LISTED = re.compile(rf"\b(?i:status(?:es)?|states?|stages?|types?|kinds?|priorit(?:y|ies))\s*\(((?:{_PAREN_VALUE})"
                           rf"(?:,\s*{_PAREN_VALUE}){{2,}})(?:,?\s*etc\.?)?\)")


@functools.lru_cache(maxsize=8192)
def _listed(doc: str, names: frozenset) -> tuple[str, ...]:
    m = _LISTED.search(doc)
    if not m and (pl := _PAREN_LISTED.search(doc)):
        vals = [v.strip() for v in pl.group(1).split(",")]
        if len(set(vals)) == len(vals) and not any(v in names for v in vals):
            return tuple(vals)
    if not m and (b := _BARE_LISTED.search(doc)) and not re.search(r"comma[- ]separated|\bfields?\b|\bcolumns?\b", doc, re.I):
        vals = [v for v in re.split(r",?\s+(?:or|and)\s+|,\s*", b.group(1)) if v]
        if vals and vals[-1] == "etc":
            return ()  # "Genre (fiction, sci-fi, fantasy, etc.)": examples of an open set, no list of allowed values
        if len(vals) >= 3 and len(set(vals)) == len(vals) and not any(v in names for v in vals) and all(v == v.lower() for v in vals):
            return tuple(vals)
    if not m and len(short := _FOR_CODES.findall(doc)) >= 2 and len(set(short)) == len(short) and not any(v in names for v in short):
        return tuple(short)  # "the entity's type, u for user entity, g for group entity" (Harbor): "u" or "g", never "custom"
    if not m:
        # "'auto' (default) attaches a PDF, 'linked_url' bookmarks it, 'none' skips": values opening its clauses
        clauses = _CLAUSE_VALUE.findall(doc)
        if len(clauses) >= 2 and _CLAUSE_VALUE.match(doc) and not any(v in names for v in clauses):
            return tuple(dict.fromkeys(clauses))
        return ()
    out: list[str] = []
    for v in _QUOTED.findall(m.group(1)):
        if v not in out:
            out.append(v)
    if any(v in names for v in out):
        return ()
    if any(re.search(r"YYYY|MM-DD|HH:MM", v) for v in out):
        return ()  # '"YYYY-MM-DD", "today", "yesterday"' is a date's grammar, no list of values (review 64: completed "YYYY-MM-DD")
    return tuple(out) if len(out) >= 2 else ()


@functools.lru_cache(maxsize=8192)
def documented_bounds(text: str) -> tuple[float, float]:
    """(low, high) a number may take from the docs ("at most 500", "between 1 and 5", "(0-100)")."""
    lo, hi = float("-inf"), float("inf")
    t = (text or "").lower()
    m = (re.search(r"\bat most (?:\$)?(-?\d+(?:\.\d+)?)", t) or re.search(r"<=\s*(-?\d+(?:\.\d+)?)", t)
         or re.search(r"\b(?:up to|maximum(?: of)?|max(?:imum)? value(?: is)?|no more than) (?:\$)?(-?\d+(?:\.\d+)?)", t))
    if m:
        hi = float(m.group(1))
    m = re.search(r"\b(?:at least|minimum(?: of)?|no less than) (?:\$)?(-?\d+(?:\.\d+)?)", t) or re.search(r">=\s*(-?\d+(?:\.\d+)?)", t)
    if m:
        lo = float(m.group(1))
    m = (re.search(r"\bfrom (-?\d+(?:\.\d+)?)\s*(?:\([^)]*\)\s*)?to (-?\d+(?:\.\d+)?)", t) or re.search(r"\bbetween (-?\d+(?:\.\d+)?) and (-?\d+(?:\.\d+)?)", t)
         or re.search(r"\((-?\d+)\s*-\s*(-?\d+)\)", t))
    if m and float(m.group(1)) < float(m.group(2)):
        lo, hi = float(m.group(1)), float(m.group(2))
    if re.search(r"\bmust be positive\b|\bpositive (?:number|integer|amount)\b|> ?0\b|\bgreater than 0\b", t):
        lo = max(lo, 0.0)
    return lo, hi


# --------------------------------------------------------------------------- the lifecycle

# What a doc says of a state after which nothing may change: English, not a domain.
_FINAL_PROSE = re.compile(r"\b(?:can ?not|can't|may not|no longer|cannot)\s+(?:be\s+)?(?:changed|modified|edited|updated|reopened|undone|restored|used)\b"
                          r"|\b(?:is|are)\s+(?:final|terminal|permanent|irreversible|read-only|immutable)\b|\bterminal (?:state|status)\b", re.I)


@dataclass
class Lifecycle:
    """Which values of which state fields are final, and which tools the docs allow to act there.

    `final[(entity, field)]` is the set of final values; `allows[tool]` the (entity, field, value)
    a tool's own preconditions accept (or its docs name), so that a write there is allowed."""

    final: dict[tuple[str, str], set] = field(default_factory=dict)
    allows: dict[str, set] = field(default_factory=dict)
    lexical: dict[tuple[str, str], set] = field(default_factory=dict)  # final by the word alone: a delete may still act
    deletes: set = field(default_factory=set)  # tools that remove their record (cleaning up a closed one is fine)

    @classmethod
    def of(cls, env: A.EnvDecl) -> "Lifecycle":
        """Read the lifecycle from the env: each tool's literal moves of a field of its target record
        (`set rec.status = "cancelled"`), the values its `require`s accept as sources, and the docs'
        own sentences on a field's values. A value is final when some tool moves records into it,
        none moves them out of it to another value, and no tool sets the field freely (from an
        argument: then the docs allow any change); or when the field's doc says so in plain words."""
        lc = cls()
        ents = {e.name: e for e in env.entities}
        moves: dict[tuple[str, str], list[tuple[str, Any, frozenset | None]]] = {}
        free: set[tuple[str, str]] = set()
        for t in env.tools:
            if not t.body:
                continue
            bound = _bound_records(t, ents)
            reqs = _requires(t.body, bound)
            for name, ent, fname, value in _sets(t.body, bound):
                key = (ent, fname)
                if value is _FREE:
                    free.add(key)
                    continue
                moves.setdefault(key, []).append((t.name, value, reqs.get((name, fname))))
            for (name, fname), ok in reqs.items():
                if name in bound and not isinstance(ok, _Except):  # "require status == 'resolved'": allowed there
                    lc.allows.setdefault(t.name, set()).update((bound[name], fname, v) for v in ok)
        for key, ms in moves.items():
            if key in free:
                continue
            ent, fname = key
            fdecl = next((f for f in ents[ent].fields if f.name == fname), None)
            values = _field_values(fdecl) if fdecl is not None else []
            if not values:
                continue  # a state field has documented values (an enum, a list in its doc); a flag or a counter is no lifecycle
            targets = {v for _, v, _ in ms}
            leaving: set = set()
            for _, to, src in ms:
                leaving |= _accepts(src, set(values) | targets) - {to}
            fin = {v for v in targets if v not in leaving}
            if fin:
                lc.final[key] = fin
        for key, values in _state_fields(env, ents).items():  # "completed", "cancelled": an ending state in plain English
            ends = {v for v in values if isinstance(v, str) and (v.lower().replace("-", "_") in ENDING_STATES or is_ending_state(v))}
            leaving = set()
            for _t, to, src in moves.get(key, []):
                if src is not None and not isinstance(src, _Except):  # "reopen a closed issue": it requires that state
                    leaving |= set(src) - {to}
            if ends - leaving:
                lc.lexical.setdefault(key, set()).update(ends - leaving)
        for e in env.entities:  # the docs' own words: "closed: can no longer be changed"
            for f in e.fields:
                for v in _field_values(f):
                    if _final_in_prose(f.doc, v):
                        lc.final.setdefault((e.name, f.name), set()).add(v)
        # tools that remove their record (a hard delete: cleaning up a closed record is fine; a cancel that only
        # sets a state is no delete here, and cancelling a completed order is not)
        lc.deletes = {t.name for t in env.tools if t.body and any(isinstance(x, A.Delete) for x in _walk_stmts(t.body))}
        for t in env.tools:  # a tool whose own doc names a final value acts there on purpose ("reopen a closed ticket")
            sets = {(ent, fname, v) for name, ent, fname, v in _sets(t.body, _bound_records(t, ents))}
            for (ent, fname), vals in list(lc.final.items()) + list(lc.lexical.items()):
                for v in vals:
                    if (ent, fname, v) not in sets and _doc_allows(t.doc, v):
                        lc.allows.setdefault(t.name, set()).add((ent, fname, v))
        return lc

    def final_state(self, tool: str, ent: str, rec: dict) -> tuple[str, Any] | None:
        """(field, value) when `rec` of `ent` is in a final state `tool` is not allowed to act in."""
        lexical = {} if tool in self.deletes else self.lexical  # a closed record may still be cleaned up
        for e, fname in sorted(set(self.final) | set(lexical), key=str):
            vals = self.final.get((e, fname), set()) | lexical.get((e, fname), set())
            if e == ent and rec.get(fname) in vals and (e, fname, rec.get(fname)) not in self.allows.get(tool, set()):
                return fname, rec.get(fname)
        return None


_FREE = object()


def _state_fields(env: A.EnvDecl, ents: dict) -> dict[tuple[str, str], list]:
    """(entity, field) -> documented values of each status-like field (`status`, `state`, `order_status`)."""
    out = {}
    for e in env.entities:
        for f in e.fields:
            if re.search(r"(^|_)(status|state)$", norm(f.name)):  # `fulfillmentOrderStatus` too (review 27)
                vals = _field_values(f)
                if not vals and A.strip_optional(f.type) == A.PrimType("str"):
                    # "state: Deployment state" with no values documented: whatever the world holds there, an ending
                    # word ("closed") reads as final (review 50: a closed deployment cancelled)
                    vals = sorted(ENDING_STATES)
                if vals:
                    out[(e.name, f.name)] = vals
    return out


def _field_values(f: A.FieldDecl) -> list:
    t = A.strip_optional(f.type)
    if isinstance(t, A.EnumType):
        return list(t.values)
    return documented_values(f.doc)


def _final_in_prose(doc: str, value: Any) -> bool:
    """The field's doc says `value` is final: a sentence naming the value and saying it cannot change."""
    if not isinstance(value, str) or not doc:
        return False
    v = value.lower().replace("_", " ")
    for sent in re.split(r"(?<=[.;])\s+", doc):
        s = sent.lower().replace("_", " ")
        if re.search(rf"\b{re.escape(v)}\b", s) and _FINAL_PROSE.search(s):
            return True
    return False


_NEGATION = re.compile(r"\b(?:not|no|never|cannot|can't|fails?|error|unless|only|must|already|except)\b", re.I)


def _doc_allows(doc: str, value: Any) -> bool:
    """A sentence of the tool's doc names `value` without a negation or a condition ("Reopens a closed
    ticket"), not "Fails if the reservation is cancelled"."""
    if not isinstance(value, str) or not doc:
        return False
    v = value.lower().replace("_", " ")
    return any(re.search(rf"\b{re.escape(v)}\b", sent.lower().replace("_", " ")) and not _NEGATION.search(sent)
               for sent in re.split(r"(?<=[.;])\s+", doc))


def _bound_records(t: A.ToolDecl, ents: dict[str, A.EntityDecl]) -> dict[str, str]:
    """Names in the tool's body bound to one record of an entity: its entity-typed parameters."""
    out = {}
    for p in t.params:
        pt = A.strip_optional(p.type)
        if isinstance(pt, A.NamedType) and pt.name in ents:
            out[p.name] = pt.name
    return out


def _walk_stmts(body) -> list:
    out = []
    for s in body or ():
        out.append(s)
        if isinstance(s, A.If):
            out += _walk_stmts(s.then) + _walk_stmts(s.orelse)
        elif isinstance(s, A.For):
            out += _walk_stmts(s.body)
    return out


def _sets(body, bound: dict[str, str]):
    """(record name, entity, field, literal value or _FREE) of each `set rec.field = ...` on a bound record."""
    for s in _walk_stmts(body):
        if isinstance(s, A.Set) and isinstance(s.target, A.Attr) and isinstance(s.target.obj, A.Name) and s.target.obj.id in bound:
            name = s.target.obj.id
            v = s.value.value if isinstance(s.value, A.Literal) else _FREE
            yield name, bound[name], s.target.name, v


def _requires(body, bound: dict[str, str]) -> dict[tuple[str, str], frozenset]:
    """(record name, field) -> the values the tool's top-level `require`s accept for a bound record's
    field: a `frozenset` (== / in a literal), or an `_Except` (!= / not in: any value but these)."""
    only: dict[tuple[str, str], frozenset] = {}
    but: dict[tuple[str, str], frozenset] = {}
    for s in body or ():
        if not isinstance(s, A.Require):
            continue
        for cond in _conjuncts(s.cond):
            if not (isinstance(cond, A.Binary) and isinstance(cond.left, A.Attr) and isinstance(cond.left.obj, A.Name)
                    and cond.left.obj.id in bound):
                continue
            key = (cond.left.obj.id, cond.left.name)
            if isinstance(cond.right, A.Literal):
                lits = frozenset([cond.right.value])
            elif isinstance(cond.right, A.ListLit) and all(isinstance(i, A.Literal) for i in cond.right.items):
                lits = frozenset(i.value for i in cond.right.items)
            else:
                continue
            if cond.op in ("==", "in"):
                only[key] = lits if key not in only else only[key] & lits
            elif cond.op in ("!=", "not in"):
                but[key] = but.get(key, frozenset()) | lits
    out: dict[tuple[str, str], frozenset] = dict(only)
    for key, lits in but.items():
        out[key] = only[key] - lits if key in only else _Except(lits)
    return out


class _Except(frozenset):
    """Any value but these (a `require x != "a"`)."""


def _accepts(src: frozenset | None, values: set) -> set:
    """The values a precondition accepts among `values` (None: no precondition, all of them)."""
    if src is None:
        return set(values)
    if isinstance(src, _Except):
        return set(values) - set(src)
    return set(src)


def _conjuncts(e):
    if isinstance(e, A.Binary) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


# --------------------------------------------------------------------------- the task under review


@dataclass
class Candidate:
    """What the gate reads of a sampled task: its words, its nodes, what the user knows, and its
    writes as run (tool, argument values) in order."""

    instruction: str
    intents: list[str]
    nodes: tuple
    facts: dict[str, Any]
    writes: list[tuple[str, dict]]
    read_only: bool = False
    identity: Any = None  # the asking user's own key (their record in the world), when the env has users


@dataclass
class Gate:
    """The gate of one env: built once, then `check(candidate)` per sampled task."""

    env: A.EnvDecl
    module: Any
    world: dict
    writes: dict[str, bool]
    fresh: Any = None  # () -> a new Env on the world state (the sampler's fork); default: module.Env(copy of world)
    lifecycle: Lifecycle = None  # type: ignore[assignment]
    # the caller's account every tool takes (`account`, `user_google_email`), as the sampler found it: who asks, said
    # once, no request (exempt from `said-ignored`)
    session: frozenset = frozenset()

    def __post_init__(self) -> None:
        from forgec.synth.acts import acts_view  # here: forgec.synth imports this module

        self.env = acts_view(self.env)  # each act of a split tool (`@case`) by its own docs
        if self.lifecycle is None:
            self.lifecycle = Lifecycle.of(self.env)
        self.tool_names = sorted(t.name for t in self.env.tools)
        self.tools = {t.name: t for t in self.env.tools}
        self.ents = {e.name: e for e in self.env.entities}
        self.either = {t.name: _either_or(t, frozenset(p.name for p in t.params)) for t in self.env.tools}  # read once, not per task
        self.by_name = {t.name: name_addressed(t, self.env) for t in self.env.tools}
        self.doc_constants = _doc_constants(self.env)

        self._keys: dict[str, list[dict]] | None = None
        self._reads: dict[str, frozenset[str]] = {}

    def check(self, c: Candidate) -> str | None:
        """The first reason the task fails, or None when it passes every check."""
        for fn in (check_tool_words, check_pipeline, check_repeated_phrase, check_makes_existing, check_verb_phrases, check_preamble,
                   check_one_required):
            why = fn(c, self)
            if why:
                return why
        if c.read_only or not c.writes:
            return check_single_read(c, self) if c.read_only else None
        for fn in (check_sources, check_dictated, check_numbers, check_two_ways):
            why = fn(c, self)
            if why:
                return why
        trace = self.replay(c.writes)
        if trace is None:
            return None  # the sampler already ran these writes; a replay that fails is its business
        why = check_ignored(c, self)
        if why:
            return why
        for fn in (check_final, check_create, check_undone, check_repeated, check_values, check_parents, check_made_under_finished,
                   check_self_move, check_indefinite):
            why = fn(c, self, trace)
            if why:
                return why
        return None

    def named_in(self, key: Any, said: set[str]) -> bool:
        """Whether a record whose key is `key` has a name or title the user said."""
        if self._keys is None:
            self._keys = {}
            for table in (self.world.get("entities") or {}).values():
                for k, rec in (table.items() if isinstance(table, dict) else ()):
                    if isinstance(rec, dict):
                        self._keys.setdefault(str(k), []).append(rec)
        return any(_NAMEISH.search(norm(f)) and json.dumps(v, sort_keys=True) in said
                   for rec in self._keys.get(str(key), ()) for f, v in rec.items())

    def reads(self, t: A.ToolDecl) -> frozenset[str]:
        """The parameter names a tool's body refers to (computed once per tool)."""
        got = self._reads.get(t.name)
        if got is None:
            got = self._reads[t.name] = frozenset(x.id for x in A.walk(t.body) if isinstance(x, A.Name))
        return got

    def replay(self, writes: list[tuple[str, dict]]) -> list[tuple[str, dict, dict, dict, list]] | None:
        """(tool, args, state before, state after, diff) of each write, run from the world state.
        States are copy-on-write forks (cheap); the diff is `forgec.tasks.state_diff` (unchanged
        subtrees pruned), so a check reads only what a write changed."""

        env = self.fresh() if self.fresh is not None else self.module.Env(copy.deepcopy(self.world))
        snaps = []
        for tool, args in writes:
            snaps.append(env.fork() if hasattr(env, "fork") else self.module.Env(jcopy(env.state)))
            r = env.step(tool, jcopy(args))
            if isinstance(r, BaseException):
                return None
        states = [sn.state for sn in snaps] + [env.state]
        return [(tool, args, states[i], states[i + 1], state_diff(states[i], states[i + 1]))
                for i, (tool, args) in enumerate(writes)]

    def targets(self, tool: str, args: dict, diff: list) -> list[tuple[str, Any]]:
        """(entity, key) of the records a write acts on: named by an entity-typed argument, or changed."""
        out: list[tuple[str, Any]] = []
        t = self.tools.get(tool)
        for p in (t.params if t else ()):
            pt = A.strip_optional(p.type)
            if isinstance(pt, A.NamedType) and pt.name in self.ents and p.name in args and isinstance(args[p.name], (str, int)):
                out.append((pt.name, args[p.name]))
        for d in diff:
            parts = d.path.split("/")
            if len(parts) >= 4 and parts[1] == "entities" and (parts[2], _unescape(parts[3])) not in out:
                out.append((parts[2], _unescape(parts[3])))
        return out


# --------------------------------------------------------------------------- the checks


def check_tool_words(c: Candidate, g: Gate) -> str | None:
    """`names-tool`: the instruction holds a tool's identifier or all its words in a row ("cancel
    pending order" for cancel_pending_order; verb-particle names such as check_in excepted). A
    person asks for an act, not for a function."""
    return "names-tool" if names_tool(c.instruction, g.tool_names) else None


def check_pipeline(c: Candidate, g: Gate) -> str | None:
    """`pipeline-words`: the instruction speaks of the sampler's plumbing ("the line returned by
    resume line", "the flights that get balance returns", "the first X in the Y", "search results")."""
    return "pipeline-words" if _PIPELINE.search(c.instruction) else None


_TWICE = re.compile(r"\b(from|to|in|into|for|on|of) (?:the |a |an )?(\w+) \1 (?:my|the|your) (?:\w+ )?\2\b", re.I)


def check_repeated_phrase(c: Candidate, g: Gate) -> str | None:
    """`garbled`: a summary's own place said again by the realizer ("remove user from project from my
    project", "link a new user to project to my project": review 22). The sentence is broken English."""
    return "garbled" if _TWICE.search(c.instruction) else None


_MAKES_OWN = re.compile(r"\b(?:create|make|build|generate)\s+(?:a\s+new\s+)?my\s+(?:[\w-]+\s+){1,3}?called\b", re.I)


def check_makes_existing(c: Candidate, g: Gate) -> str | None:
    """`garbled`: a record the user already has is what they ask to create ("create my project called X called
    Y to the resource called Z", review 39: a create whose docs name nothing new in English said of its parent)."""
    return "garbled" if _MAKES_OWN.search(c.instruction) else None


def check_verb_phrases(c: Candidate, g: Gate) -> str | None:
    """`no-verb-phrase`: every intent the user states is a verb phrase ("cancel my order"), not a
    fragment cut from a doc at the wrong place ("after all tasks are done and approved ...")."""
    for text in c.intents:
        if text and not verb_phrase(text):
            return "no-verb-phrase"
    return None


def check_preamble(c: Candidate, g: Gate) -> str | None:
    """`doc-preamble`: no intent is built from a docs sentence about the tool itself ("this tool
    belongs to the vehicle control system", "use this tool to ...")."""
    for text in c.intents:
        if _PREAMBLE.search(text or ""):
            return "doc-preamble"
    return None


_ONE_REQUIRED = re.compile(r"\bat least one of (?:these|the|them)\b[^.]*?\b(?:must|should|is required|are required|has to)\b", re.I)


def _empty(v: Any) -> bool:
    return v is None or (isinstance(v, (dict, list, str)) and not v) or (isinstance(v, dict) and all(_empty(x) for x in v.values()))


def check_one_required(c: Candidate, g: Gate) -> str | None:
    """`none-of-required`: a call that passes nothing to a tool whose docs say "At least one of these parameters must be
    provided" (review 67: Outline's `documentsInfo {}` read as a list of every document) breaks the docs."""
    for n in c.nodes:
        if isinstance(n, A.CallNode):
            t = g.tools.get(n.tool)
            if t is not None and t.params and _ONE_REQUIRED.search(" ".join([t.doc or ""] + [p.doc or "" for p in t.params])):
                if all(isinstance(a.value, A.Literal) and _empty(a.value.value) for a in n.args):
                    return "none-of-required"
    return None


def check_sources(c: Candidate, g: Gate) -> str | None:
    """`unsourced-argument`: each argument of a write is a fact the user knows (`user.x`), a value
    read from an earlier node (a record looked up or acted on, a reasoning node's result), or a
    literal the instruction says. Nothing comes from nowhere."""

    defined: set[str] = set()
    for n in c.nodes:
        if isinstance(n, A.CallNode):
            if g.writes.get(n.tool):
                for a in n.args:
                    if isinstance(a.value, A.Literal) and isinstance(a.value.value, bool) and (norm(a.name) in CALL_SWITCHES or is_confirm_switch(a.name)):
                        continue  # `preview=false`, `confirm=true`: how the docs say a change is applied, not a value of the user's
                    if not _sourced(a.value, defined, c, lambda text, v: v in g.doc_constants or said_in(text, v)):
                        return "unsourced-argument"
            defined.add(n.name)
        elif isinstance(n, A.ReasonNode):
            defined.add(n.name)
    return None




def _doc_constants(env: A.EnvDecl) -> frozenset:
    """Format URLs the docs name for a field (`schema: "https://.../collection.json" | ...`, the one its doc quotes): sent
    as the docs say, never said by a user (the sampler's `arg`, review 65)."""
    out = set()
    for fields in [e.fields for e in env.entities] + [r.fields for r in env.records]:
        for f in fields:
            t = A.strip_optional(f.type)
            quoted = format_url_choices(t.values, f.doc) if isinstance(t, A.EnumType) else None
            if quoted is not None and len(quoted) == 1:
                out.add(quoted[0])
    return frozenset(out)


def _sourced(e: Any, defined: set[str], c: Candidate, said_in) -> bool:
    if isinstance(e, A.Literal):
        return e.value is None or said_in(c.instruction, e.value)
    if isinstance(e, A.Attr) and isinstance(e.obj, A.Name) and e.obj.id == "user":
        return e.name in c.facts
    if isinstance(e, A.Name):
        return e.id in defined
    if isinstance(e, (A.ListLit,)):
        return all(_sourced(i, defined, c, said_in) for i in e.items)
    if isinstance(e, A.RecordLit):
        return all(_sourced(f.value, defined, c, said_in) for f in e.fields)
    roots = [n for n in A.walk(e) if isinstance(n, A.Name)]
    return all(r.id in defined or r.id == "user" for r in roots) and all(
        _sourced(n, defined, c, said_in) for n in A.walk(e) if isinstance(n, A.Attr) and isinstance(n.obj, A.Name) and n.obj.id == "user")


def check_dictated(c: Candidate, g: Gate) -> str | None:
    """`dictated-call`: the task needs a lookup or a decision. One write and nothing else (no read
    call, no reasoning node) is a form the user fills in: every argument dictated. Several
    dictated writes in order are left to the other checks (each act is still the user's). The
    user's own key, looked up from their email or name at login, counts as said.

    Two lookups that cannot change the outcome do not count either (review 42):
    `named-target`, a record id found by a list read where the tool takes the record's name as
    well ("Either 'id' or the 'name' to identify the target", "ID or name of the project") and the
    user said that name; `guard-holds`, a decision that only guards dictated writes and holds
    ("create the label X, unless I already have one called X" where none is): an agent that never
    looks ends in the same state."""
    calls = [n for n in c.nodes if isinstance(n, A.CallNode)]
    ops = {n.op for n in c.nodes if isinstance(n, A.ReasonNode)}
    if not ops and len(calls) == 1 and g.writes.get(calls[0].tool):
        return "dictated-call"
    if len(calls) > len(c.writes) and c.writes and all(args for _t, args in c.writes):
        said = {json.dumps(v, sort_keys=True) for v in _scalars(list(c.facts.values()))}
        if c.identity is not None:
            # the user's own key, found from their email at login, is who asks, not a lookup the request needs: login
            # then "make 12 Oak St my default address" is a form filled in (review 60: 4 of 18 retail tasks)
            said.add(json.dumps(c.identity, sort_keys=True))
        unsaid = [(tool, path, v) for tool, args in c.writes for path, v in _paths(args) if json.dumps(v, sort_keys=True) not in said]
        plain = not unsaid
        if not all(path in g.by_name.get(tool, ()) and g.named_in(v, said) for tool, path, v in unsaid):
            return None
        if not ops & DECISION_OPS:
            # a lookup that only finds what the user said: "delete my collection called X" when the collection's
            # key is its name; the list read decides nothing, every value written was dictated (review 17)
            return "dictated-call" if plain else "named-target"
        guards = [n.cond for n in c.nodes if isinstance(n, A.ExpectNode)]
        if guards and not any(isinstance(n, A.TellNode) for n in c.nodes) and all(
                isinstance(e, A.Binary) and e.op == "==" and isinstance(e.right, A.Literal) and e.right.value is True for e in guards):
            return "guard-holds"
    return None


_WHOLE_NAME = {"name", "full_name", "fullname", "display_name"}


def check_two_ways(c: Candidate, g: Gate) -> str | None:
    """`two-ways`: the user's value can go into the tool two ways, so more than one end state satisfies the request
    (review 42: a contact's number as `phone` or as `phones: [...]`, a name as `fullName` or as first and last name).
    A write that fills one of a tool's two parameters for the same thing (a word and its plural, a whole name
    and its parts) is refused; the sampler then asks for something else."""
    for tool, args in c.writes:
        t = g.tools.get(tool)
        if t is None:
            continue
        params = {norm(p.name) for p in t.params}
        parts = ({"first_name", "last_name"} <= params or {"given_name", "family_name"} <= params) and params & _WHOLE_NAME
        for k in args:
            n = norm(k)
            twin = singular(n) if n != singular(n) else plural(n)
            if twin != n and twin in params:
                return "two-ways"
            if parts and (n in _WHOLE_NAME or n in ("first_name", "last_name", "given_name", "family_name")):
                return "two-ways"
    return None


def _paths(v: Any, path: str = "") -> list[tuple[str, Any]]:
    """(path, scalar) of each scalar inside a call's arguments, the leaves `_scalars` gives, named by where they sit
    (a list of records is one path: `items.id`)."""
    if isinstance(v, dict):
        return [pair for k, x in v.items() for pair in _paths(x, f"{path}.{k}" if path else k)]
    if isinstance(v, (list, tuple)):
        return [pair for x in v for pair in _paths(x, path)]
    return [(path, v)]


_ID_OR_NAME = re.compile(r"\b(?:id|identifier|key|slug)\s+or\s+(?:the\s+)?(?:full\s+|display\s+|exact\s+)?name\b|\bname\s+or\s+(?:id|identifier)\b", re.I)
_EITHER_PAIR = re.compile(r"\beither\s+['\"`]?(\w+)['\"`]?\s+or\s+(?:the\s+)?['\"`]?(\w+)['\"`]?", re.I)
_NAMEISH = re.compile(r"(?:^|_)(?:name|title)$")


# "pass parent_collection as either a collection key (...), a collection name, or a path", "parent: key, name or path"
_KEY_THEN_NAME = re.compile(r"\b(?:id|key|identifier|slug)\b[^.;]{0,80}?(?:\bor|,)\s+(?:an?\s+|the\s+)?(?:[a-z]+\s+)?name\b", re.I)


def _said_by_name(doc: str, param: str) -> bool:
    """Whether the tool's description says `param` takes a record's key or its name (Zotero's `create_collection`:
    "pass parent_collection ... as either a collection key (...), a collection name, or a 'Parent/Child' path";
    review 56: two sub-collection tasks whose lookup of the parent's key the docs make needless)."""
    for m in re.finditer(rf"(?<![\w]){re.escape(param)}(?![\w])", doc):
        sentence = re.split(r"(?<=[a-z0-9)'\"])\.\s", doc[m.end():], maxsplit=1)[0]
        if _KEY_THEN_NAME.search(sentence):
            return True
    return False


def name_addressed(t: A.ToolDecl, env: A.EnvDecl) -> frozenset[str]:
    """Argument paths (`project`, `items.id`) where the docs let a record be named instead of given by
    id: the parameter's own doc ("ID or name of the project"), its name (`workspaceIdOrName`), or
    the tool's "Either 'id' or the 'name' to identify the target" over two of its fields."""
    out: set[str] = set()
    pairs = [(m.group(1), m.group(2)) for x in [t.doc or ""] + [p.doc or "" for p in t.params] for m in _EITHER_PAIR.finditer(x)]

    def scan(fields, pre: str) -> None:
        names = {f.name for f in fields}
        for f in fields:
            n = norm(f.name)
            if _ID_OR_NAME.search(f.doc or "") or "id_or_name" in n or "name_or_id" in n or _said_by_name(t.doc or "", f.name):
                out.add(pre + f.name)
        for a, b in pairs:
            if a in names and b in names and _NAMEISH.search(norm(b)) and not _NAMEISH.search(norm(a)):
                out.add(pre + a)
        for f in fields:
            inner = A.strip_optional(f.type)
            inner = A.strip_optional(inner.item) if isinstance(inner, A.ListType) else inner
            rec = env.record(inner.name) if isinstance(inner, A.NamedType) else None
            if rec is not None and not pre:
                scan(rec.fields, f"{f.name}.")
    scan(t.params, "")
    return frozenset(out)


def check_numbers(c: Candidate, g: Gate) -> str | None:
    """`dictated-numbers`: a person asks for a shape, a table or a line by what it is for, not by reading out
    "slide index 3, left 75, top 150, width 100, height 20" (blind review 26). A write whose user-said
    arguments hold four or more numbers that are no amount of money is a form read out, not a request."""
    said = {json.dumps(v, sort_keys=True) for v in _scalars(list(c.facts.values()))
            if isinstance(v, (int, float)) and not isinstance(v, bool)}
    for _t, args in c.writes:
        nums = [k for k, v in args.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
                and json.dumps(v, sort_keys=True) in said and not _MONEY.search(norm(k))]
        if len(nums) >= 4:
            return "dictated-numbers"
    return None


_MONEY = re.compile(r"(^|_)(amount|price|cost|total|fee|balance|budget|salary|rate)s?($|_)")


def _scalars(v: Any) -> list:
    """The scalar values inside `v` (lists and records opened)."""
    if isinstance(v, dict):
        return [x for y in v.values() for x in _scalars(y)]
    if isinstance(v, (list, tuple)):
        return [x for y in v for x in _scalars(y)]
    return [v]


# reasoning that decides something (counts, totals, extremes, comparisons); `filter`/`first`/`pluck` only select
DECISION_OPS = {"count", "sum", "argmin", "argmax", "sort", "contains", "compare"}


def check_single_read(c: Candidate, g: Gate) -> str | None:
    """`single-read`: a question answered by one list read and a selection (the field of the record the
    user just named) asks the agent to copy a value; a question needs a second read or a decision (a
    count, a total, an extreme). A device's current state, read whole ("is the garage light on?"), is
    not a selection: nothing else tells the user."""
    calls = [n for n in c.nodes if isinstance(n, A.CallNode)]
    ops = {n.op for n in c.nodes if isinstance(n, A.ReasonNode)}
    if len(calls) <= 1 and ops and not ops & (DECISION_OPS - {"count"}):
        # ... nor is a count of one list's records in a state ("how many of my notifications are unread?": one call
        # with the user's own name, then a tally; review 49 judged it trivial); an extreme or a total decides more
        return "single-read"
    return None


def is_dictated_chain(c: Candidate, g: Gate) -> bool:
    """Writes only, in order, every argument the user's: no read call, no reasoning node, no argument
    taken from another call's result. A form filled in several times: rubric 3 calls it trivial, so the
    sampler never keeps one (`scenario.sample_scenarios`)."""
    calls = [n for n in c.nodes if isinstance(n, A.CallNode)]
    if not calls or any(isinstance(n, A.ReasonNode) for n in c.nodes) or not all(g.writes.get(n.tool) for n in calls):
        return False
    names = {n.name for n in calls}
    return not any(isinstance(x, A.Name) and x.id in names for n in calls for a in n.args for x in A.walk(a.value))


_ID_ARG = re.compile(r"(?:^|_)(?:id|ids|uuid|gid|guid|uid|identifier|key)$")


def dictates_an_id(c: Candidate) -> bool:
    """Whether the user dictates an identifier (`id`, `commentId`, `body.id`): a person names their records,
    they do not know the ids (counted apart from other dictated chains, to say which fails more)."""
    def said_ids(name: str, e: Any) -> bool:
        if isinstance(e, A.RecordLit):
            return any(said_ids(f.name, f.value) for f in e.fields)
        return bool(_ID_ARG.search(norm(name))) and isinstance(e, A.Attr) and isinstance(e.obj, A.Name) and e.obj.id == "user"
    return any(said_ids(a.name, a.value) for n in c.nodes if isinstance(n, A.CallNode) for a in n.args)


def check_ignored(c: Candidate, g: Gate) -> str | None:
    """`said-ignored`: every argument the user dictates to a write is one its tool reads. A value
    the tool never looks at (the shape's `top` an env does not keep) is asked for and then lost: the
    checked end state cannot tell whether the agent passed it (review 10: "gold drops top")."""
    for n in c.nodes:
        if not isinstance(n, A.CallNode) or not g.writes.get(n.tool):
            continue
        t = g.tools.get(n.tool)
        if t is None or t.body is None:
            continue  # a python body: what it reads is not visible here
        read = g.reads(t)
        for a in n.args:
            if a.name not in read and a.name not in getattr(g, "session", ()) and any(isinstance(x, A.Name) and x.id == "user" for x in A.walk(a.value)):
                return "said-ignored"
    return None


def check_final(c: Candidate, g: Gate, trace: list) -> str | None:
    """`write-to-final`: no write acts on a record whose state the docs make final (`Lifecycle`:
    a sink of the tools' literal moves, or a value the field's doc says cannot change), unless the
    tool's own preconditions accept that state or its doc names it ("reopen a closed ticket")."""
    for tool, args, before, after, diff in trace:
        recs = before.get("entities") or {}
        for ent, key in g.targets(tool, args, diff):
            coll = recs.get(ent) or {}
            rec = coll.get(key) if key in coll else coll.get(str(key))  # state keys are strings; an id argument may be a number
            if isinstance(rec, dict) and g.lifecycle.final_state(tool, ent, rec):
                return "write-to-final"
            if isinstance(rec, dict) and tool in g.lifecycle.deletes and is_default_record(rec):
                return "deletes-default"
            if isinstance(rec, dict) and _put_away(rec) and not _RESTORES.search(tool + " " + (g.tools[tool].doc or "" if tool in g.tools else "")):
                return "write-to-final"  # an archived or deleted project takes no new issues (review 13)
        if any(_ends(str(k), v) for k, v in args.items()) and _ended_and_edited(diff):
            return "ended-and-edited"  # an edit that sets an end status (not a cancel tool with its documented extras)
    return None


_STATUS_FIELD = re.compile(r"(?:\w+_)?(?:status|state)", re.I)


def _ends(field: str, value: Any) -> bool:
    """Whether `field` is a status set to an end state ("Cancelled")."""
    return _STATUS_FIELD.fullmatch(field) is not None and isinstance(value, str) and is_ending_state(value)


_BOOKKEEPING = re.compile(r"(^|_)(updated|modified|changed|closed|cancell?ed|completed|ended|finished|resolved)(_?(at|on|date|time|by))?$|(^|_)version$", re.I)


def _ended_and_edited(diff) -> bool:
    """One write that sets a record's status to an end ("Cancelled") and changes another of its fields (review 57: "set
    its status to Cancelled and its assignment priority to Medium"): nobody edits what they are ending in the same breath."""
    by_rec: dict[tuple, list[tuple[str, Any]]] = {}
    for d in diff:
        parts = d.path.split("/")
        if len(parts) == 5 and parts[1] == "entities" and d.op in ("change", "add"):
            by_rec.setdefault((parts[2], parts[3]), []).append((_unescape(parts[4]), d.after))
    for changes in by_rec.values():
        ended = [f for f, v in changes if _ends(f, v)]
        others = [f for f, _v in changes if f not in ended and not _BOOKKEEPING.search(f)]
        if ended and others:
            return True
    return False


_DEFAULT_FLAG = re.compile(r"^(?:is_?)?(?:default|primary)(?:_?[a-z]+)?$", re.I)


def is_default_record(rec: dict) -> bool:
    """A record flagged as the account's default or primary one (`isDefaultCalendar`, `is_primary`): real
    APIs refuse to delete it ("the default calendar cannot be deleted", review 29), so no task asks to."""
    return any(v is True and isinstance(k, str) and _DEFAULT_FLAG.match(k) is not None for k, v in rec.items())


_PUT_AWAY = re.compile(r"^(?:is_?)?(?:archived|deleted|trashed|disabled)$", re.I)
_RESTORES = re.compile(r"\b(?:un(?:archive|delete|trash)|restore|recover|reactivate|enable)\w*", re.I)


def _put_away(rec: dict) -> bool:
    """Whether a record is flagged archived, deleted or trashed (`archived: true`, `isDeleted: true`)."""
    return any(v is True and _PUT_AWAY.match(k.replace("_", "")) for k, v in rec.items())


def _val(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def check_undone(c: Candidate, g: Gate, trace: list) -> str | None:
    """`undone-write`: no later write restores a value an earlier write changed (on, then off;
    suspend, then resume; +50 then -50): the task would ask for two acts that cancel out."""
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    count: dict[str, int] = {}
    for *_, diff in trace:
        for d in diff:
            first.setdefault(d.path, _val(d.before) if d.op != "add" else "<absent>")
            last[d.path] = _val(d.after) if d.op != "remove" else "<absent>"
            count[d.path] = count.get(d.path, 0) + 1
    for p, n in count.items():
        if n >= 2 and last[p] == first[p] and not _stamp(p):
            return "undone-write"
    return None


def check_repeated(c: Candidate, g: Gate, trace: list) -> str | None:
    """`repeated-write`: no write is made twice (same tool, same arguments), and no tool sets the
    same field of the same record twice (two baggage changes, two payment requests on one
    record): the later one makes the earlier pointless."""
    seen: set[str] = set()
    set_by: set[tuple[str, str]] = set()
    for tool, args, _, _, diff in trace:
        k = _val([tool, args])
        if k in seen:
            return "repeated-write"
        seen.add(k)
        for d in diff:
            if d.op != "change" or _stamp(d.path):
                continue  # a timestamp every write moves; an added record is new each time
            if (tool, d.path) in set_by:
                return "repeated-write"
            set_by.add((tool, d.path))
    return None


def _stamp(path: str) -> bool:
    last = norm(path.rsplit("/", 1)[-1])
    return last.endswith(("_at", "_time", "timestamp", "_date", "_on")) or last in ("updated", "modified", "version", "etag")


def check_parents(c: Candidate, g: Gate, trace: list) -> str | None:
    """`mismatched-parents`: a write that names a record and its parent's kind names the parent the record has
    (review 32: a pull request in repository "billing-update" of organization "Miller-Ball", whose repository
    belongs to another organization)."""
    for tool, args, before, _, _ in trace:
        named = _record_args(g, tool, args)
        for e1, k1 in named:
            rec = ((before.get("entities") or {}).get(e1) or {}).get(str(k1))
            if not isinstance(rec, dict):
                continue
            for e2, k2 in named:
                if e2 == e1:
                    continue
                ups = [f.name for f in g.ents[e1].fields if A.strip_optional(f.type) == A.NamedType(e2)]
                if len(ups) == 1 and rec.get(ups[0]) not in (None, "") and str(rec.get(ups[0])) != str(k2):
                    return "mismatched-parents"
    return None


_FINISHED_FLAG = re.compile(r"^(?:is_?)?(?:completed|complete|done|finished|closed|resolved)$", re.I)


def check_made_under_finished(c: Candidate, g: Gate, trace: list) -> str | None:
    """`made-under-finished`: a write that adds a record names no record whose work is over as its parent (review
    97: "create a new subtask ... for my task called X" where X is completed). A finished record is flagged done
    (`completed: true`) or has an end status ("Closed")."""
    for tool, args, before, _after, diff in trace:
        if not any(d.op == "add" and d.path.count("/") == 3 for d in diff):
            continue  # no new record
        for ent, key in _record_args(g, tool, args):
            rec = ((before.get("entities") or {}).get(ent) or {}).get(str(key))
            if isinstance(rec, dict) and any(
                    (v is True and isinstance(k, str) and _FINISHED_FLAG.match(k.replace("_", ""))) or _ends(str(k), v) for k, v in rec.items()):
                return "made-under-finished"
    return None


def check_self_move(c: Candidate, g: Gate, trace: list) -> str | None:
    """`self-move`: a write that names one record as both ends of a move ("move emails from my mailbox" to that same
    mailbox, review 37: `bulk_move(sourceMailbox=X, targetMailbox=X)`) changes nothing a person asked for."""
    for tool, args, _, _, _ in trace:
        ends: dict[str, list] = {}
        for ent, key in _record_args(g, tool, args):
            ends.setdefault(ent, []).append(str(key))
        if any(len(set(ks)) < len(ks) for ks in ends.values()):
            return "self-move"
    return None


# the noun ends the phrase: "on a flight from MIA to EWR" is a record described (the search decides it), "from a project"
# says nothing of which
_INDEFINITE = re.compile(r"\b(?:from|to|in|into|on|of|for)\s+(?:a|an|one of my)\s+([a-z]+)(?=\s*(?:[,.;!?]|$|\b(?:but|and|then|unless|otherwise)\b))")


def check_indefinite(c: Candidate, g: Gate, trace: list) -> str | None:
    """`indefinite-target`: the instruction says "remove my task ... from a project" while the write names one of
    several projects the user never said (review 81: the task was in three; three end states satisfy it)."""
    said = {json.dumps(v, sort_keys=True) for v in _scalars(list(c.facts.values()))}
    nouns = {singular(m.group(1)) for text in c.intents for m in _INDEFINITE.finditer(text.lower())}
    if not nouns:
        return None
    for tool, args, before, _after, _diff in trace:
        for ent, key in _record_args(g, tool, args):
            if norm(ent).split("_")[-1] not in nouns or json.dumps(key, sort_keys=True) in said or g.named_in(key, said):
                continue
            if len([r for r in ((before.get("entities") or {}).get(ent) or {}).values() if isinstance(r, dict)]) > 1:
                return "indefinite-target"
    return None


def _record_args(g: Gate, tool: str, args: dict) -> list[tuple[str, Any]]:
    """(entity, key) for each argument of `tool` that names one record of the world."""
    t = g.tools.get(tool)
    out = []
    for p in (t.params if t else ()):
        pt = A.strip_optional(p.type)
        v = args.get(p.name)
        if isinstance(pt, A.NamedType) and pt.name in g.ents and isinstance(v, (str, int)) and not isinstance(v, bool):
            out.append((pt.name, v))
    return out


def check_values(c: Candidate, g: Gate, trace: list) -> str | None:
    """`value-outside-docs`: every field a write sets holds a value the docs allow: a member of its
    enum or of the values its doc lists ("one of 'celsius', 'fahrenheit'"), a number inside its
    documented bounds; and every argument likewise for its parameter's type and doc."""
    for tool, args, before, after, diff in trace:
        t = g.tools.get(tool)
        names = frozenset(p.name for p in (t.params if t else ()))
        for a, b in g.either.get(tool, ()):
            if a not in args and b not in args:
                return "value-outside-docs"  # "Either 'file' or 'file_path' must be provided" and neither is (review 30)
        for p in (t.params if t else ()):
            if p.name in args and not (_allowed(args[p.name], p.type, p.doc, names) and fits_doc_format(args[p.name], p.doc or "")):
                return "value-outside-docs"  # (a date not in the format the doc states: "2024-05-23" for 'MM/DD/YYYY')
        if _was_below_now(args):
            return "value-outside-docs"
        if _names_no_record(t, args, before, diff, g) or _outside_its_case(t, args):
            return "value-outside-docs"
        if _elsewhere(tool, t, args, before):
            return "value-outside-docs"
        for d in diff:
            parts = d.path.split("/")
            if len(parts) < 4 or parts[1] != "entities" or d.op == "remove":
                continue
            decl = g.ents.get(parts[2])
            rec = ((after.get("entities") or {}).get(parts[2]) or {}).get(_unescape(parts[3])) if decl else None
            if not isinstance(rec, dict):
                continue
            fields = [f for f in decl.fields if len(parts) == 4 or f.name == _unescape(parts[4])]
            fnames = frozenset(f.name for f in decl.fields)
            for f in fields:
                if not _allowed(rec.get(f.name), f.type, f.doc, fnames):
                    return "value-outside-docs"
    return None


def _names_no_record(t: Any, args: dict, before: dict, diff: list, g: "Gate") -> bool:
    """A string argument named for a kind of record the world holds (`default_branch`, `target_branch`) whose value
    no record of that kind has: "change the default branch to develop" in a project with no `develop` (review 80:
    GitLab refuses it). Not a new record's own name (`new_branch`), nor where the call makes a record of that kind."""
    made = {d.path.split("/")[2] for d in diff if d.op == "add" and d.path.count("/") == 3 and d.path.startswith("/entities/")}
    ents = before.get("entities") or {}
    for p in (t.params if t else ()):
        v = args.get(p.name)
        ws = norm(p.name).split("_")
        if not isinstance(v, str) or len(ws) < 2 or ws[0] in ("new", "name", "names") or ws[-1] in ("name", "id", "ids", "key", "title"):
            continue
        kind = next((e for e in g.ents if norm(e) == singular(ws[-1])), None)
        recs = [r for r in (ents.get(kind) or {}).values() if isinstance(r, dict)] if kind and kind not in made else []
        if recs and not any(v == x for r in recs for x in r.values() if isinstance(x, str)) and v not in (ents.get(kind) or {}):
            return True
    return False


_ONLY_FOR = re.compile(r"\((?P<req>only|required)\s+(?:for|with|when)\s+(?:the\s+)?['\"`]?(?P<v>[\w-]+)['\"`]?(?:\s+(?:action|type|mode))?\)", re.I)


def _outside_its_case(t: Any, args: dict) -> bool:
    """An argument the docs give for one value of another parameter only: Azure DevOps' `mappedPath` "(only for
    codeWiki)" sent with `type: projectWiki`, or `repositoryId` "(required for codeWiki)" left out of one (review 81)."""
    params = list(t.params if t else ())
    heads = {norm(q.name).split("_")[0]: q.name for q in params}
    for k, v in args.items():
        ws = norm(k).split("_")
        act = verb_of_noun(ws[0]) if len(ws) >= 2 else None
        if v is not None and act and act != ws[0] and act in heads and args.get(heads[act]) is None:
            # ERPNext's `assignment_priority` "Native ToDo priority" of the `assign_to` workflow, sent with no one assigned
            # (review 82: three tasks, each read as the task's own `priority` too): a setting of another parameter's act
            # goes with that act
            return True
    for p in params:
        m = _ONLY_FOR.search(p.doc or "")
        if not m:
            continue
        v = m.group("v").lower()
        other = next((q for q in params if q.name != p.name and isinstance(A.strip_optional(q.type), A.EnumType)
                      and v in {str(x).lower() for x in A.strip_optional(q.type).values}), None)
        if other is None or not isinstance(args.get(other.name), str):
            continue
        case = args[other.name].lower() == v
        if m.group("req").lower() == "only" and p.name in args and args[p.name] is not None and not case:
            return True
        if m.group("req").lower() == "required" and case and args.get(p.name) is None:
            return True
    return False


_WHERE_WHEN = re.compile(r"(^|_)(location|city|area|venue|address|date|time)$", re.I)


def _elsewhere(tool: str, t: Any, args: dict, before: dict) -> bool:
    """A booking of a record the world holds, sent with a place or a time the record does not have: tickets for
    a film that plays in New York, bought "in Berkeley" (review 35: six SGD tasks). Only a make (not an update,
    whose args are the new values) and only where the record itself has that field."""
    from forgec.realize import doc_verb, name_verb

    verb = doc_verb((t.doc if t else "") or "") or name_verb(tool)
    if verb in ("update", "edit", "modify", "change", "set", "rename", "move", "patch", "reschedule", "replace"):
        return False
    ents = [c for c in (before.get("entities") or {}).values() if isinstance(c, dict)]
    for k, v in args.items():
        if not isinstance(v, (str, int)) or isinstance(v, bool):
            continue
        for coll in ents:
            rec = coll.get(str(v)) if isinstance(coll.get(str(v)), dict) else coll.get(v) if isinstance(coll.get(v), dict) else None
            if rec is None:
                continue
            for k2, v2 in args.items():
                if k2 != k and _WHERE_WHEN.search(k2) and k2 in rec and rec[k2] is not None and isinstance(v2, (str, int, float)) \
                        and not isinstance(v2, bool) and str(rec[k2]) != str(v2):
                    return True
    return False


_WAS_PRICE = re.compile(r"^(?:compare_?at|original|regular|list|was|old)_?price$", re.I)


def _was_below_now(args: dict) -> bool:
    """A "compare at" (original, regular, list) price is what the item cost before: above its price, never below
    (review 34: a variant at $25 "compare at $5")."""
    for body in [args] + [v for v in args.values() if isinstance(v, dict)]:
        now = body.get("price")
        was = next((v for k, v in body.items() if _WAS_PRICE.match(k)), None)
        if isinstance(now, (int, float)) and isinstance(was, (int, float)) and not isinstance(now, bool) and not isinstance(was, bool) and was <= now:
            return True
    return False


_EITHER = re.compile(r"\beither\s+['\"`]?(\w+)['\"`]?\s+or\s+['\"`]?(\w+)['\"`]?\s+(?:must|is required|are required|should)\b", re.I)


_ONE_OF_PAIR = re.compile(r"\b(?:exactly\s+)?one\s+of\s+\W*(\w+)\W*\s+or\s+\W*(\w+)\W*\s+(?:is\s+)?(?:required|must|needed)", re.I)
_UNLESS_OTHER = re.compile(r"\brequired\b[^.]{0,60}?\b(?:if|when)\s+\W*(\w+)\W*\s+is\s+(?:not|n't)\s+(?:provided|given|set|specified|passed)|"
                           r"\brequired\b[^.]{0,60}?\bunless\s+\W*(\w+)\W*\s+is\s+(?:provided|given|set|specified|passed)", re.I)


def _either_or(t: Any, names: frozenset) -> list[tuple[str, str]]:
    """Pairs of parameters the docs say one of must be given ("Either 'file' or 'file_path' must be provided")."""
    if t is None:
        return []
    texts = [t.doc or ""] + [p.doc or "" for p in t.params]
    pairs = {(m.group(1), m.group(2)) for x in texts for m in _EITHER.finditer(x) if m.group(1) in names and m.group(2) in names}
    for x in texts:  # "Exactly one of ``user_id`` or ``group_id`` required"
        pairs |= {(m.group(1), m.group(2)) for m in _ONE_OF_PAIR.finditer(x) if m.group(1) in names and m.group(2) in names}
    for p in t.params:  # `project_id` "Required for create if ``issue_id`` is not provided": one of the two
        for m in _UNLESS_OTHER.finditer(p.doc or ""):
            q = m.group(1) or m.group(2)
            if q in names and q != p.name:
                pairs.add((p.name, q))
    return sorted(pairs)


def _unescape(k: str) -> str:
    return k.replace("~1", "/").replace("~0", "~")


def _allowed(v: Any, t: A.TypeExpr, doc: str, names: frozenset | set = frozenset()) -> bool:
    """`v` is a value the type and the doc allow (enum, listed values that are not `names`, bounds)."""
    t = A.strip_optional(t)
    if v is None:
        return True
    if isinstance(t, A.EnumType):
        return v in t.values
    if isinstance(t, A.PrimType) and t.name == "str" and isinstance(v, str):
        if not _fits_pattern(v, doc):
            return False  # `id="jacob_romero_6995"` where the docs' pattern is `^\d+$` (review 29)
        vals = documented_values(doc, names)
        return not vals or v in vals or v == ""  # "" is a string left unset (Joplin's `item_type` on a note)
    if isinstance(t, A.PrimType) and t.name in ("int", "float") and isinstance(v, (int, float)) and not isinstance(v, bool):
        lo, hi = documented_bounds(doc)
        return lo <= v <= hi
    if isinstance(t, A.ListType) and isinstance(v, list):
        return all(_allowed(x, t.item, "") for x in v)
    return True


def _fits_pattern(v: str, doc: str) -> bool:
    """`v` matches the JSON-Schema `pattern` the reader kept in the doc (`wording.doc_pattern`); none says nothing."""
    rx = doc_pattern(doc)
    return v == "" or rx is None or rx.search(v) is not None


def check_create(c: Candidate, g: Gate, trace: list) -> str | None:
    """`create-adds-nothing`: a tool whose doc says it creates something adds a record or an item to a
    list, with something of the user's in it (not only the keys of where it goes); one that only overwrites a field of an existing record ("Create a new page in the section"
    stored as the section's `contentUrl`, review 29) models the act wrongly, and the task would grade it so."""
    from forgec.realize import doc_verb, name_verb  # the realizer's verbs (imported late: realize is the text layer)
    for tool, args, before, _after, diff in trace:
        t = g.tools.get(tool)
        if t is None:
            continue
        verb = doc_verb(t.doc or "") or name_verb(tool)
        if args and len(t.params) == len(args) and _made_from_context(t, g):
            colls = [c for c in (before.get("entities") or {}).values() if isinstance(c, dict)]
            if all(isinstance(v, (str, int)) and any(str(v) in c for c in colls) for v in args.values()):
                # "Place the order using a saved card": the order is the basket the world never held; a task
                # placing it with a card alone makes an empty order (review 34: food402, 8 of 8 rejected)
                return "create-adds-nothing"
        if verb in ("create", "add", "post", "send", "submit", "upload", "publish", "write") and args and len(t.params) == len(args):
            colls = [c for c in (before.get("entities") or {}).values() if isinstance(c, dict)]  # a key lookup per value, no set of every key
            if all(isinstance(v, (str, int)) and any(str(v) in c for c in colls) for v in args.values()):
                return "create-adds-nothing"  # "post my card": a comment posted with no text, only the card's keys
        if verb != "create" or not diff:
            continue  # "add credit" may well raise a balance; only a "create" must make something
        grows = any(d.op == "add" or not isinstance(d.after, (str, type(None))) or d.path.count("/") <= 3 for d in diff)
        if not grows:
            return "create-adds-nothing"
    return None


def _made_from_context(t: A.ToolDecl, g: Gate) -> bool:
    """Whether a create's doc acts on the very record it makes as one already there ("Place the order", "Submit
    the cart"): it is made from a context (a basket, a draft) the call does not carry."""
    from forgec.realize import clause

    made = next((x.entity for x in A.walk(t) if isinstance(x, A.Insert)), None)
    cl = clause(t.doc or "")
    if made is None or cl is None:
        return False
    m = re.match(r"\w+ (?:the|your|my|this|current) ([a-z]+(?: [a-z]+)?)$", cl.text)
    return m is not None and m.group(1).split()[-1] in {w.lower() for w in re.findall(r"[A-Z][a-z]+", made)}


def candidate_of(instruction: str, intents: list[str], nodes: tuple, facts: dict, writes: list, read_only: bool,
                 identity: Any = None) -> Candidate:
    """A `Candidate` from a sampler's parts (keeps callers free of the dataclass's field order)."""
    return Candidate(instruction, list(intents), tuple(nodes), dict(facts), list(writes), read_only, identity)
