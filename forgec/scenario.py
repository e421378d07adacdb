"""Intent-first task sampling: the task, not the walk, is the unit of design (issue 11).

A task is a user scenario, as in τ²-bench's `user_scenario`: who calls (a record of the
env's user-like entity, or the session owner when there is none), what they know (their
login id or the facts a lookup tool takes, and natural attributes of their records), what
they do not know (internal ids of their records), and 1-3 intents in order, some with a
condition. The gold path is derived, not walked:

* the user's records of an entity are looked up through the tool graph (a tool that lists
  them by the user's key; or the user's record, whose list of keys is fetched one by one;
  or, for the session owner, a tool that lists them all);
* the record an intent acts on is named by a referring expression: the fewest natural
  attributes that single it out among the user's records (`filter` reasoning nodes, then
  `first`), or a superlative (`argmin`/`argmax`, "my most expensive reservation");
* each argument comes from a user fact, the acted-on record, or a reasoning node over
  described records (a new flight, named by its attributes among the search results);
* a condition ("if it cost more than $300") is a `compare` reasoning node pinned by
  `expect`; the write is in the gold path only when it holds.

Coherence is checked at sampling time, each failure a counted rejection reason: a write
must change the state and none may be redundant (leaving any single write out must not
reach the gold state: re-run), arguments read only the user's facts and records
(`unrelated-argument`), values stay in plausible ranges (`implausible-value`), and the
instruction names no tool (`tool-words`). The wording is deterministic first-person
templates (forgec/wording.py) with verbs and nouns from the docs.
"""

from __future__ import annotations

import contextvars
import datetime
import functools
import html
import json
import math
import os
import random
import re
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import Any

from forgec.english import CLOSED_CLASS, DESTINATION_PARAM, MOVING_VERBS, SUBSET_WORDS, is_ending_state, is_plural, language_name, participle, plural, singular
from forgec.english import ARGUMENT_ADJECTIVES, GRANTING_VERBS, PREPOSITIONS, as_state, lemmas, verb_lemma
from forgec.stdlib.values import FINISHED_WORDS, HOST_NAME, ITERATIONS, free_host_names, is_message, MINOR_UNITS_DOC, ORG_WORDS, RANKS, SET_UP
from forgec.english import with_article as _a
from forgec.graph import ToolGraph, prim_class, record_fields, strip_optional
from forgec.lang import ast as A
from forgec.runtime.envrt import jcopy
from forgec.sample import (SampleConfig, SampledBlueprint, SampleResult, blueprint_stats, format_blueprint_text, literal_expr,
                           superlative)
from forgec.stdlib import ops as OPS
from forgec.stdlib.values import INTEGRAL, TEXTY, titled_by_doc, documented_extensions, documented_values, real_values, slugify, fit_extension, gone as record_gone, is_file_field, is_person, is_person_record, placeholder_name, is_problem, number_meaning_known, said_value, said_when, span_pairs, world_of, topic_filler, topic_named
from forgec.synth import policy
from forgec.synth.names import after_kind
from forgec.synth.schema import NAMES_TARGET
from forgec.synth.schema import TODAY_DEFAULT, INFERRED_STATUS_DOC, MUST_BE_TRUE as _MUST_BE_TRUE, id_stem, session_names, shapes_request
from forgec.reasons import ask_why, reason_for, record_traits, said_hints, world_traits
from forgec.realize import clause as realized_clause, doc_verb, is_verb, name_verb
from forgec.wording import CALL_SWITCHES, PREVIEW_SWITCHES, doc_pattern, fits_doc_format, format_url_choices, humanize, is_confirm_switch, lookup_field, names_tool, norm, say, split_name
from forgec.gate import Gate, Lifecycle, candidate_of, code_labels, dictates_an_id, documented_examples, is_dictated_chain, is_default_record
from forgec.devicewords import control_phrase, fold_said, unit_of
from forgec.lower import flatten_facts, said_in

_USERISH = ("user", "customer", "member", "client", "account", "person", "profile", "patient", "owner", "guest", "passenger")
_MONEY = re.compile(r"(^|_)(price|cost|fare|total|amount|balance|fee|refund|spent|paid)(_|$)")
_NOT_MONEY = re.compile(r"(count|bags|baggages|items|nights|seats|passengers|quantity|tickets|connections)$")


def is_money(name: str) -> bool:
    """A field or parameter that holds an amount of money (`total_price`, not `total_baggages`)."""
    n = norm(name)
    last = n.split("_")[-1]
    if last.endswith("s") and last != "plus" and singular(last) != last and singular(last) not in _MONEY_NOUNS:
        return False  # `total_mailpieces`, `total_connections`: a count of things, not an amount (Lob)
    return bool(_MONEY.search(n)) and not _NOT_MONEY.search(n)


_MONEY_NOUNS = {"price", "cost", "fare", "total", "amount", "balance", "fee", "refund", "charge", "tax", "payment", "earning",
                "saving", "sale", "fund", "spent", "paid", "subtotal", "discount", "credit", "debit"}


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][\d:]+)?$")
_TIME_OF_DAY = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?")  # a bare "16:00"
_SECRET = re.compile(r"(^|_)(id|ids|key|hash|token|password|secret|uuid|sha|etag)$")
_COUNTISH = re.compile(r"(^|_)(count|quantity|qty|seats|bags|baggages?|passengers|guests|nights|copies|tickets|items|units|number)(_|$)|s$")


# what a person compares records by besides money and dates: how many of something a record holds ("the
# reservation with the most bags"); not a setting ("max parallel tasks"), a level ("volume percent") or a serial
# and how good it is ("only if its rating is above 3"); a priority or severity number is not: which way is urgent
# differs by product (Linear's "Priority (0-4)" has 1 = urgent, 0 = none), so "only if its priority is less than 1"
# says nothing a person means (review 51)
_HELD_COUNT = re.compile(r"^(?!(max|min|limit|default)_).*(^|_)(count|quantity|qty|seats|bags|baggages?|passengers|guests|nights|copies|tickets|items|units"
                         r"|rating|stars)$")


def _comparable(f: str) -> bool:
    n = norm(f)  # a bare `count` or `total_count` is a page's size, not something the record holds (Lob)
    return is_money(n) or (_HELD_COUNT.search(n) is not None and n not in ("count", "total_count", "total", "item_count"))


class _Skip(Exception):
    """This attempt cannot make a task; `reason` is counted like the walk sampler's rejections."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# a parameter that says where the record acted on is: "Mailbox containing the email", "the folder in which the note is"
_LOCATES = re.compile(r"\b(?:containing|that contains|which contains|in which the|where the \w+ (?:is|lives))\b", re.I)


def looks_like_id(v: Any) -> bool:
    """Ids and codes a person does not know (`#W0001234`, `HAT754`, `5f2c...`), not dates or words."""
    if not isinstance(v, str):
        return False
    s = v.strip()
    if _DATE.match(s) or re.fullmatch(r"\d{1,2}:\d{2}", s):
        return False
    return len(s) >= 4 and " " not in s and any(c.isdigit() for c in s)


# --------------------------------------------------------------------------- the env, seen from a user


class _Model:
    """What the sampler needs to know about an env once: its user entity, how a user's records
    are looked up (tried by execution on the world state), and which fields a person can name."""

    @staticmethod
    def _catalog(env: A.EnvDecl) -> set[str]:
        """Entities no tool makes, changes or deletes (a cinema's movies, a city's restaurants): what the user finds
        and buys from, "the movie starring X", never "my movie" (an SGD catalog read as the user's own records)."""
        written: set[str] = set()
        for t in env.tools:
            named = {p.name: strip_optional(p.type).name for p in t.params if isinstance(strip_optional(p.type), A.NamedType)}
            for n in A.walk(t.body):
                if isinstance(n, A.Insert):
                    written.add(n.entity)
                elif isinstance(n, (A.Set, A.Delete)):
                    root = n.target
                    while isinstance(root, (A.Attr, A.Index)):
                        root = root.obj
                    if isinstance(root, A.Name) and root.id in named:
                        written.add(named[root.id])
            ret = t.returns.inner if isinstance(t.returns, A.OptionalType) else t.returns
            ret = ret.item if isinstance(ret, A.ListType) else ret
            if isinstance(ret, A.NamedType) and re.search(r"\b(?:your|you|my|mine|own)\b", t.doc or "", re.I):
                written.add(ret.name)  # "List your stories": the docs say whose they are
        return {e.name for e in env.entities} - written

    def subtype(self, tool: str, ent: str) -> tuple[str, str] | None:
        """(type field, value) a tool named for one kind of its records acts on: `delete_image_item` on items whose
        `type` is "image" (review 27: per-type delete tools used on an item of another type). A named kind no record
        has, beside a generic tool of the same verb, leaves the tool to those records: `_Skip("subtype-tool")`."""
        d = self.decl.get(ent)
        if d is None:
            return None
        ews = set(norm(ent).split("_")) | {singular(w) for w in norm(ent).split("_")}
        verb = name_verb(tool)
        toks = [w for w in norm(tool).split("_") if w and not w.isdigit()]
        head = norm(ent).split("_")[-1]
        at = next((i for i, w in enumerate(toks) if singular(w) == head or w == head), None)
        if at is None or self.kinds.get(tool) not in ("update", "delete", "cancel", "action") or verb not in toks[:at]:
            return None  # `create_article` on a ticket makes an article: no kind of ticket
        mods = [w for w in toks[toks.index(verb) + 1:at] if w not in ews and w not in CLOSED_CLASS]
        tf = next((f.name for f in d.fields if re.fullmatch(r"(\w+_)?(type|kind)", norm(f.name))), None)
        if not mods or tf is None:
            return None
        vals = {str(r.get(tf)).lower().replace(" ", "_") for r in (self.ents.get(ent) or {}).values() if r.get(tf) is not None}
        hit = next((m for m in ("_".join(mods), *mods) if m in vals), None)
        if hit is not None:
            return tf, hit.replace("_", " ") if hit.replace("_", " ") in {str(r.get(tf)).lower() for r in (self.ents.get(ent) or {}).values()} else hit
        generic = any(name_verb(o) == verb and o != tool and not [w for w in norm(o).split("_") if w != verb and w not in ews
                      and singular(w) not in ews and w not in CLOSED_CLASS and not w.isdigit()] for o in self.tools)
        if generic:
            raise _Skip("subtype-tool")
        return None

    def is_person(self, ent: str | None) -> bool:
        """Whether records of `ent` stand for people (its noun, or a first and a last name): "their", not "its"."""
        d = self.decl.get(ent or "")
        return is_person_record(ent, [f.name for f in d.fields] if d else ())

    def __init__(self, env: A.EnvDecl, module: Any, world: dict, graph: ToolGraph, policy: str = ""):
        self.env, self.module, self.world = env, module, world
        # the docs prescribe what "my ..." means ("For “my …” requests, first call GET /me and pass createdBy"):
        # the records are then "the workspace called X", never "my" without that lookup (review 26, Postman)
        self.my_prescribed = any(_MY_PRESCRIBED.search(t.doc or "") for t in env.tools)
        self.catalog = self._catalog(env)
        self.lifecycle = Lifecycle.of(env)  # the states the docs make final: no write is aimed at a record in one
        self.ents: dict[str, dict] = world.get("entities", {}) or {}
        self.decl = {e.name: e for e in env.entities}
        log = frozenset(getattr(module, "LOG_TOOLS", None) or ())  # log-only tools: neither a lookup nor a write to ask for
        self.tools = {t.name: t for t in env.tools if t.name in set(graph.tools) and t.name not in log}
        ws = getattr(module, "WRITES_STATE", None) or {}
        self.writes = {t: bool(ws.get(t, graph.writes(t))) for t in self.tools}
        self.kinds = getattr(module, "TOOL_KINDS", None) or {}
        self.base = module.Env(world)
        self.base_hash = self.base.state_hash()
        self._fork = getattr(self.base, "fork", None)
        keys = Counter(norm(e.key) for e in env.entities)
        # a key name several entities share (`id`) names none of them: a bare `id` of `share_email` is no
        # template's (blind review 24: a template id shared as an email, duplicated as an automation)
        # ... and a one-word key (`name`, DigitalOcean's Kafka topics) that other records hold as their own field is
        # their own name there, never a topic's: every droplet's `Name` had been read as a reference, so no droplet
        # could be named
        own = Counter(norm(f.name) for e in env.entities for f in e.fields if f.name != e.key and "_" not in norm(f.name))
        self.key_names = {norm(e.key): e.name for e in env.entities if keys[norm(e.key)] == 1 and not own[norm(e.key)]}
        for e in env.entities:
            self.key_names.setdefault(norm(e.name) + "_id", e.name)
        self._natural: dict[str, list[str]] = {}
        self._links: dict[str, tuple | None] = {}
        self._tool_docs: str | None = None  # every tool's doc, lower-cased (`_said_states`)
        self.policy_text = policy  # the env's policy pages: docs a person reads too
        self.session = session_names([[(p.name, prim_class(strip_optional(p.type)) == "str") for p in t.params] for t in env.tools])
        self.child_counts: dict[tuple[str, Any], int] = {}  # (parent lister, parent key) -> records it lists
        self._keyent: dict[tuple, str | None] = {}
        self._owned: dict[str, dict[str, list[str]]] = {}
        self.user = self._user_entity()
        self.owner_field = {e.name: self._owner_field(e) for e in env.entities}
        self.user_list_field = self._user_list_fields()
        if self.user is not None and not self._user_asks():
            self.user = None  # the user-like records are part of the state (a site's accounts): its owner asks
            self._keyent.clear()
        if self.user is None:  # a store with no user (a knowledge graph): `entityName` and a relation's `from`/`to` name nodes
            for e in env.entities:
                self.key_names.setdefault(norm(e.name) + "_" + norm(e.key), e.name)
                for f in e.fields:
                    ft = strip_optional(f.type)
                    if f.name != e.key and isinstance(ft, A.NamedType) and ft.name in self.decl:
                        self.key_names.setdefault(norm(f.name), ft.name)
        self.getter: dict[str, str] = {}  # entity -> read tool taking its key, returning the record
        self.getters: dict[str, list[str]] = {}  # entity -> every such read tool, in tool order
        self.lister_by_user: dict[str, tuple[str, str]] = {}  # entity -> (read tool, its user-key param)
        self.lister_all: dict[str, str] = {}  # entity -> read tool with no required params listing its records
        self.lister_args: dict[str, dict] = {}  # entity -> the fixed arguments its lister takes (`status: "all"`)
        self.lister_session: dict[str, tuple[str, ...]] = {}  # entity -> the caller's account params its lister takes
        self.lister_widen: dict[str, dict] = {}  # entity -> the switches that make its lister show every record
        self.lister_path: dict[str, str] = {}  # entity -> the field of the lister's result holding the list (`read_graph().nodes`)
        # (entity, tool family) -> (lister, its fixed arguments, its result's list field): a second product's own list of
        # what the world holds as one entity (DigitalOcean's `doks-list-clusters` beside `db-cluster-list`)
        self.family_lister: dict[tuple[str, str], tuple[str, dict, str | None]] = {}
        # entity -> (read tool, its parent-key param, parent entity): the records inside one parent record
        # (`list_cards(board_id)`, `get_channel_messages(channelId)`), found by probing like the others
        self.lister_by_parent: dict[str, tuple[str, str, str]] = {}
        self._nouns: dict[str, str] = {}  # entity -> what a person calls it (`noun`)
        self._doc_text: str | None = None  # the tools' docs, lower-cased (`_spelled_apart`)
        self.locator: tuple[str, list[str]] | None = None  # (read tool, user fields it takes) -> the user's key
        self._probe()
        self.owner_field = {e.name: self._owner_field(e) for e in env.entities}
        self.user_list_field = self._user_list_fields()

    def fresh(self) -> Any:
        return self._fork() if self._fork is not None else self.module.Env(self.world)

    # ----- types
    def key_entity(self, name: str, t: A.TypeExpr) -> str | None:
        k = (name, t)
        if k not in self._keyent:
            self._keyent[k] = self._key_entity(name, t)
        return self._keyent[k]

    def _key_entity(self, name: str, t: A.TypeExpr) -> str | None:
        t = strip_optional(t)
        item = strip_optional(t.item) if isinstance(t, A.ListType) else t
        if isinstance(item, A.NamedType) and item.name in self.decl:
            return item.name
        if prim_class(item) in ("str", "num"):
            n = norm(name)
            return self.key_names.get(n) or (self.key_names.get(singular(n)) if isinstance(t, A.ListType) else None)
        return None

    def link_of(self, tool: A.ToolDecl) -> tuple[str, str, bool] | None:
        """(member param, the list field of the record acted on, adding) of a tool whose effect puts records named by
        one param into a list of the record another param names, or takes them out (`firewall_add_droplets`, read from
        its body as `schema._links` wrote it): the user names the members, and a removal names one that is there."""
        if tool.name not in self._links:
            self._links[tool.name] = None
            nodes = list(A.walk(tool.body or ()))
            names = {q.name for q in tool.params}
            if not any(isinstance(n, (A.Insert, A.Delete)) for n in nodes):
                moves = [n for n in nodes if isinstance(n, (A.Append, A.Remove)) and isinstance(n.target, A.Attr)
                         and isinstance(n.target.obj, A.Name) and n.target.obj.id in names]
                owners = {n.target.obj.id for n in moves}
                members = [q for q in tool.params if q.name not in owners and self.key_entity(q.name, q.type) is not None
                           and any(isinstance(x, A.Name) and x.id == q.name for n in nodes if isinstance(n, A.For) for x in A.walk(n.iter))
                           | any(isinstance(x, A.Name) and x.id == q.name for n in moves for x in A.walk(n.value))]
                if len(owners) == 1 and len(members) == 1 and len({n.target.name for n in moves}) == 1:
                    self._links[tool.name] = (members[0].name, moves[0].target.name, isinstance(moves[0], A.Append))
        return self._links[tool.name]

    def container(self, child: str, parent: str) -> str | None:
        """The field of `child` records holding the key of the `parent` record they live in (a merge
        request's `project_id`), if any: a tool taking both keys means that parent, never another."""
        if child == parent or child not in self.decl:
            return None
        for f in self.decl[child].fields:  # a required reference: a ticket's optional `assignee_id` is no home
            if f.name != self.decl[child].key and not isinstance(f.type, (A.ListType, A.OptionalType)) \
                    and self.key_entity(f.name, f.type) == parent:
                return f.name
        return None

    def required(self, t: A.ToolDecl) -> list[A.ParamDecl]:
        return [p for p in t.params if p.default is None and not isinstance(p.type, A.OptionalType)]

    def batch_items(self, t: A.ToolDecl) -> tuple | None:
        """The fields of the records a batch tool takes (its one required param a list of records: Todoist's
        `items`), else None."""
        req = self.required(t)
        bt = strip_optional(req[0].type) if len(req) == 1 else None
        return record_fields(self.env, strip_optional(bt.item)) if isinstance(bt, A.ListType) else None

    def body_items(self, t: A.ToolDecl) -> tuple | None:
        """The fields of the one record an RPC-style write takes as its only parameter (Outline's
        `groupsUpdate(body: {id, name})`), else None."""
        if len(t.params) != 1:
            return None
        bt = strip_optional(t.params[0].type)
        return record_fields(self.env, bt) if isinstance(bt, A.NamedType) else None

    def title_field(self, ent: str) -> str | None:
        """The field a record of `ent` is called by (`name`, `title`, `subject`, `display_name`, a `content` its doc
        calls the title), if it has one."""
        docs = {f.name: f.doc or "" for f in self.decl[ent].fields} if ent in self.decl else {}
        return next((f for f in self.natural_fields(ent) if re.search(r"(^|_)(name|title|subject|display_name)$", norm(f))), None) or \
            next((f for f in self.natural_fields(ent) if titled_by_doc(f, docs.get(f, ""))), None)

    def entity_of(self, rec: Any) -> str | None:
        if not isinstance(rec, dict):
            return None
        best, score = None, 0
        for e in self.env.entities:
            if e.key in rec and isinstance(rec[e.key], (str, int)) and not isinstance(rec[e.key], bool):
                s = len({f.name for f in e.fields} & rec.keys())
                if s > score:
                    best, score = e.name, s
        return best

    def noun(self, ent: str) -> str:
        """What a person calls a record of `ent`: the entity's name, unless every parameter passing one is named for
        another noun and the tools' docs act on that noun (Overseerr's `sliderId` in "Update a single slider", of
        an entity named for its path `/settings/discover`: "my slider called X", not "my discover called X")."""
        if ent not in self._nouns:
            self._nouns[ent] = self._spoken_noun(ent)
        return self._nouns[ent]

    def _spoken_noun(self, ent: str) -> str:
        from forgec.realize import object_nouns  # noqa: PLC0415

        own = humanize(ent)
        if (kind := self._docs_kind(ent, own)) is not None:
            return kind
        if (apart := self._spelled_apart(own)) is not None:
            return apart
        if self.decl[ent].key.lower() not in ("id", "key", "uuid", "gid"):
            return own
        stems, objs = set(), set()
        for t in self.env.tools:
            for p in t.params:
                if self.key_entity(p.name, p.type) == ent:
                    st = id_stem(p.name)  # the schema's own reading of `sliderId`, `tag_gid`
                    stems.add(st[0][0] if st and len(st[0]) == 1 else "")
                    objs.update(object_nouns(t.doc or "")[-1:])
        if len(stems) != 1 or "" in stems:
            return own
        stem = stems.pop()
        if stem in norm(ent).split("_") or singular(stem) not in {singular(o) for o in objs} or singular(own.split()[-1]) in {singular(o) for o in objs}:
            return own
        return humanize(stem)

    def _spelled_apart(self, own: str) -> str | None:
        """The docs' two-word spelling of a one-word kind: DigitalOcean's `Nodepool` (from `doks-list-nodepools`) is "a
        node pool" in its docs' sentences, and a person says it that way (review 95: "the nodepool called X")."""
        if " " in own or len(own) < 6:
            return None
        if self._doc_text is None:
            self._doc_text = " ".join((t.doc or "") for t in self.env.tools).lower()
        return next((f"{own[:i]} {own[i:]}" for i in range(3, len(own) - 2)
                     if re.search(rf"\b{own[:i]} {own[i:]}s?\b", self._doc_text)), None)

    def _docs_kind(self, ent: str, own: str) -> str | None:
        """The docs' own name for the kind, where they always qualify the entity's one-word noun: Instana's
        `Configuration` is "the Apdex configuration" in every field and parameter doc that names it, beside SLI,
        maintenance and service configurations (review 85: "delete my configuration called X" named no kind). Read
        from the docs of its fields and of the parameters that take its key; the qualifier keeps the docs' case."""
        if " " in own:
            return None
        texts = [f.doc or "" for f in self.decl[ent].fields] + [p.doc or "" for t in self.env.tools for p in t.params
                                                                  if self.key_entity(p.name, p.type) == ent]
        noun = rf"{re.escape(own)}s?\b"
        said = sum(len(re.findall(rf"\b{noun}", x, re.I)) for x in texts)
        quals = Counter(m.group(1) for x in texts for m in re.finditer(rf"\b([A-Za-z][A-Za-z0-9-]+)\s+{noun}", x, re.I)
                        if m.group(1).lower() not in CLOSED_CLASS and m.group(1).lower() not in ARGUMENT_ADJECTIVES
                        and m.group(1).lower() not in ("new", "current", "default", "single", "each", "given", "target", "parent", "child"))
        if not quals or said < 2:
            return None
        (qual, n), = quals.most_common(1)
        same = sum(c for q, c in quals.items() if q.lower() == qual.lower())
        if same < 2 or same < 0.75 * said or verb_lemma(qual.lower()) == qual.lower() and not qual[:1].isupper():
            return None
        docs = [(t.doc or "").lower() for t in self.env.tools]
        if qual.lower() in self.env.name.lower() or sum(1 for d in docs if re.search(rf"\b{re.escape(qual.lower())}\b", d)) * 3 > len(docs):
            return None  # the product itself ("the Xero employee", "a Shopify customer"): every tool's docs name it
        lower = any(q.lower() == qual.lower() and q[:1].islower() for q in quals)  # "Service configuration" opening a sentence
        return f"{qual.lower() if lower else qual} {own}"

    def written_entity(self, tool: A.ToolDecl, rec: dict | None) -> str | None:
        """What `tool`'s values are about: the record it acts on (an issue a comment goes on), else the
        entity whose record it makes (its first `insert`)."""
        return (self.entity_of(rec) if rec else None) or next((n.entity for n in A.walk(tool) if isinstance(n, A.Insert)), None)

    def returned_entity(self, tool: A.ToolDecl) -> str | None:
        """The entity whose record `tool` returns (what a create makes), if it is one of the env's."""
        ret = strip_optional(tool.returns) if tool.returns is not None else None
        if isinstance(ret, A.ListType) and self.kinds.get(tool.name) == "create":
            ret = strip_optional(ret.item)  # a batch create (`create_projects(items) -> list[Project]`) makes projects
        return ret.name if isinstance(ret, A.NamedType) and ret.name in self.decl else None

    def required_by_record(self, tool: A.ToolDecl) -> set[str]:
        """The fields the record a create makes always has, where the request leaves them optional (Overseerr's
        `addSlider(title?, type?, data?)` makes a slider whose schema requires `type`): a request without them makes
        a record the docs never show (review 39: "a slider with no type"). Switches and states are not asked for."""
        made = self.decl.get(self.written_entity(tool, None) or self.returned_entity(tool) or "")
        if made is None or self.kinds.get(tool.name) != "create":
            return set()
        return {f.name for f in made.fields if f.name != made.key and f.default is None and not isinstance(f.type, A.OptionalType)
                and strip_optional(f.type) != A.PrimType("bool") and not is_status(f.name)
                and not (isinstance(f.type, A.NamedType) and f.type.name in self.decl)}

    def _documented_any(self, f: A.FieldDecl, vals: list[str]) -> bool:
        """Whether the docs name any of a field's values (its own doc, or a same-named parameter's: "Filter: draft,
        pending, confirmed")."""
        text = " ".join([f.doc or ""] + [p.doc or "" for t in self.env.tools for p in t.params if p.name == f.name]).lower()
        return any(re.search(rf"\b{re.escape(v.lower())}\b", text) for v in set(vals))

    def _said_states(self, vals: list[str]) -> bool:
        """Whether every state in `vals` is a word some tool's doc (or the env's policy page) says ("Approve a
        timesheet": approved; "the order status will be changed to 'exchange requested'")."""
        if self._tool_docs is None:  # joined once: asked per field and per condition
            self._tool_docs = " ".join([(t.doc or "").lower() for t in self.env.tools] + [(self.policy_text or "").lower()])
        return all(re.search(rf"(?<!\w){re.escape(v.lower())}(?!\w)", self._tool_docs) for v in set(vals))

    def natural_fields(self, ent: str) -> list[str]:
        """Fields a person can name a record by: scalars that are not keys, references or ids."""
        if ent not in self._natural:
            self._natural[ent] = self._natural_fields(ent)
        return self._natural[ent]

    def _natural_fields(self, ent: str) -> list[str]:
        e = self.decl[ent]
        out = []
        others = {"_".join(singular(w) for w in norm(x.name).split("_")) for x in self.env.entities}
        for f in e.fields:
            t = strip_optional(f.type)
            named_key = f.name == e.key and t == A.PrimType("str") and norm(f.name) in (f"{norm(ent)}_name", f"{norm(ent)}_title")
            # (ERPNext's projects keyed by `project_name` "Admin dashboard": "my project called X", never "my open
            # project ending 2023-12-15", review 75)
            if (f.name == e.key and not named_key) or _SECRET.search(norm(f.name)) or (self.key_entity(f.name, f.type) and not named_key):
                continue
            if _qualifies_another(f, e):
                continue  # "How many minutes to ignore the issue when ignoreMode is 'forDuration'": a setting of another
                # setting, nothing a person asks of their record (review 34: "how many ignore duration minutes")
            if _CONTENT_FIELD.search(norm(f.name)) and not titled_by_doc(f.name, f.doc or ""):
                continue  # what was written about a record, not how its owner names it (a Todoist task's `content` is
                # "The task title/content.": what it is called) ("whose information comments is", review 34)
            lead = re.match(r"\s*(?:the |an? )?([A-Za-z]+) ([a-z]+)", f.doc or "")
            if lead and singular(lead.group(1).lower()) in others and singular(lead.group(1).lower()) != norm(ent).split("_")[-1] \
                    and singular(lead.group(2)) in norm(f.name).split("_"):
                continue  # a mailbox's `subject` whose doc says "Email subject": another record's field merged in (review 37:
                # "my mailbox with the subject X")
            if re.search(r"(^|_)uris?$", norm(f.name)):
                continue  # "the device with the spotify:track:... uri": an address the system keeps, not a name (review 22)
            if re.search(r"(^|_)(mode|strategy|policy|behaviou?r|options?|operation|propagate|format|encoding)$", norm(f.name)):
                continue  # how a call does its work (`propagate_mode: change_all`), not what the record is (review 16)
            fw = norm(f.name).split("_")
            if len(fw) > 1 and fw[-1] in ("name", "title", "subject", "label") and \
                    "_".join(singular(w) for w in fw[:-1]) in others and "_".join(singular(w) for w in fw[:-1]) != norm(ent):
                continue  # a ticket's `article_subject` is its article's, not what the ticket is called (review 21)
            if isinstance(t, A.PrimType) and re.search(r"(^|_)(type|kind)$", norm(f.name)) and not documented_values(f.doc or ""):
                continue  # a `type` the docs never enumerate holds a made-up "custom"/"standard": nobody's name for it (review 31)
            if isinstance(t, A.PrimType) and re.search(r"(^|_)categor(y|ies)$", norm(f.name)) and not documented_values(f.doc or "") \
                    and not any(re.search(r"(^|_)(price|cost|amount)$", norm(x.name)) for x in e.fields):
                continue  # a shop's goods have categories anyone names ("electronics"); a password item's made-up "grocery"
                # is no 1Password category (review 71)
            present = [r[f.name] for r in (self.ents.get(ent) or {}).values() if r.get(f.name) is not None]
            if isinstance(t, A.PrimType) and t.name == "str" and topic_filler(f.name, present, ent) and not titled_by_doc(f.name, f.doc or ""):
                continue  # a string of unknown meaning filled with topic phrases: nothing a person names or asks
            vals = [x for x in present if isinstance(x, str)]
            if vals and not re.search(r"file|document|attachment|media|upload|path", norm(ent)) and \
                    sum(bool(re.search(r"\.[a-z0-9]{2,4}$", x)) for x in vals) * 2 > len(vals):
                continue  # "my subscriber with the eat.xls file": a file name names a file, not the record it hangs on
            if isinstance(t, A.PrimType) and t.name in ("int", "float") and not number_meaning_known(f.name, f.doc or "", t.name):
                continue  # a number nothing says the meaning of ("the rule with the highest account")
            if isinstance(t, A.PrimType) and t.name == "str" and is_status(f.name) and vals and not self._documented_any(f, vals):
                continue  # "my order with the inactive payment status": a state the docs never name is the world's guess (review 26)
            if not is_status(f.name) and any(_API_TOKEN.fullmatch(str(x)) for x in list(getattr(t, "values", ()) or ()) + vals):
                continue  # "the asset whose asset type is userUploaded": a camelCase enum is the API's token, no word a person says (review 39)
            if "resource" in norm(f.name).split("_") and "resource" not in norm(ent).split("_"):
                continue  # `resource_subtype`, `resource_type`: the API's bookkeeping of what kind of object it is (review 39)
            if isinstance(t, A.EnumType) and f.doc == INFERRED_STATUS_DOC and not self._said_states(vals):
                continue  # "my active timesheet": the state a record starts in before any verb acts, which no doc names (review 39)
            if _schema_phrase(f.name):
                continue  # "my replication policy with the highest dest namespace replace count": the schema's words (review 71)
            head = humanize(norm(f.name)).split()[-1:]
            if head and (pos := lemmas(head[0])) and "NOUN" not in pos:
                continue  # `created`, `completed`: a participle is no noun a person says ("what created the epic has")
            if isinstance(t, A.EnumType) or (isinstance(t, A.PrimType) and t.name in ("str", "int", "float")):
                out.append(f.name)
        who = [f for f in out if _PERSON_KEY.search(norm(f))]
        if is_person(ent) and who:
            return who  # a person is named by their name, email or login, not "my user with the Flowers-Fox organization" (review 21)
        return out

    # ----- who the user is
    def _user_entity(self) -> str | None:
        refs = Counter()
        for e in self.env.entities:
            for f in e.fields:
                k = self.key_entity(f.name, f.type)
                if k and k != e.name:
                    refs[k] += 1
        cands = [e.name for e in self.env.entities if norm(e.name) in _USERISH and self.ents.get(e.name)]
        if not cands:
            return None
        return max(cands, key=lambda n: (refs[n], -cands.index(n)))

    def _user_asks(self) -> bool:
        """Who asks (issue 21): a record of the user-like entity is the caller only when the env
        serves such users, i.e. when its writes act on the records users own (a reservation with
        its `user_id`, a user's list of order ids) or name the user. When at most a third of the
        writes do (a site's accounts, a chat's members, an email account: records the person
        at the keyboard manages among their other things), the caller is whoever owns the
        state, as on an API with no user entity at all."""
        tools = [t for t in self.tools.values() if self.writes.get(t.name)
                 and not (self.kinds.get(t.name) == "action" and "conservative" in t.annotations)]
        if not tools:
            return True  # nothing to do but ask: the user's own records are what one asks about
        if not any(self.owner_field.values()) and not self.user_list_field:
            return False  # the user owns no records: they are records themselves
        mine = 0
        for t in tools:
            for p in t.params:
                ke = self.key_entity(p.name, p.type)
                if ke == self.user or (ke and not isinstance(strip_optional(p.type), A.ListType) and (self.owner_field.get(ke) or ke in self.user_list_field)):
                    mine += 1
                    break
            else:
                mine += _mentions_user(self, t)
        return 3 * mine > len(tools)

    def _owner_field(self, e: A.EntityDecl) -> str | None:
        if self.user is None or e.name == self.user:
            return None
        for f in e.fields:
            if not isinstance(strip_optional(f.type), A.ListType) and self.key_entity(f.name, f.type) == self.user:
                if re.search(r"\bassign|\bwatch|\breview", f"{humanize(norm(f.name))} {f.doc or ''}", re.I):
                    continue  # "ID of the member to assign to the card": who works on it, not whose it is (Trello)
                return f.name
        return None

    def _user_list_fields(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.user is None:
            return out
        for f in self.decl[self.user].fields:
            t = strip_optional(f.type)
            if isinstance(t, A.ListType):
                k = self.key_entity(f.name, f.type)
                if k and k != self.user:
                    out.setdefault(k, f.name)
        return out

    def owned(self, ukey: str) -> dict[str, list[str]]:
        """entity -> keys of the user's records (in the order the user's record lists them), on the world state."""
        if ukey not in self._owned:
            self._owned[ukey] = self._owned_records(ukey)
        return self._owned[ukey]

    def _owned_records(self, ukey: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        urec = (self.ents.get(self.user) or {}).get(ukey) or {}
        for ent, fld in self.user_list_field.items():
            ks = [str(k) for k in urec.get(fld) or [] if str(k) in (self.ents.get(ent) or {})]
            if ks:
                out[ent] = ks
        for ent, fld in self.owner_field.items():
            if fld and ent not in out:
                ks = [k for k, r in (self.ents.get(ent) or {}).items() if str(r.get(fld)) == ukey]
                if ks:
                    out[ent] = ks
        return out

    # ----- lookups, found by running the read tools once
    def _probe(self) -> None:
        ukeys = sorted(self.ents.get(self.user) or {})[:3] if self.user else []

        def lister_first(item):  # `get_projects` lists; `get_project_by_name_and_version` called bare only happens to (review 15)
            ws = norm(item[0]).split("_")
            # then the plainest: fewest required params, fewest words in the name (`get_categories` before
            # `get_empty_categories`, which lists only some: blind review 20), fewest params
            # ... and a list of some of the records (`documentsArchived`, `documentsDrafts`, `list_deleted_files`) after the
            # list of them all (review 49: a document found among the archived ones, which the user never said it was)
            subset = any(w.endswith("ed") and len(w) > 4 or w in SUBSET_WORDS for w in ws)
            # ... and a read whose docs demand one of its criteria ("At least one of these parameters must be provided",
            # Outline's `documents.info`) after the list that needs none (`documents.list`): called bare, it is refused
            demands = bool(re.search(r"\bat least one\b", item[1].doc or "", re.I)) or any(
                re.search(r"\b(?:one of|at least one)\b.{0,60}\bmust\b", f.doc or "", re.I)  # "One of id or documentId must be
                for q in item[1].params for f in (record_fields(self.env, strip_optional(q.type)) or ()))  # provided" (shares.info)
            return (demands, bool(set(ws) & {"by", "find", "lookup", "search", "query"}), subset, len(self.required(item[1])), len(ws),
                    len(item[1].params), item[0])

        cands: dict[str, list[tuple[str, str, str]]] = {}
        for name, t in sorted(self.tools.items(), key=lister_first):
            if self.writes[name]:
                continue
            if set(norm(name).split("_")) & {"current", "me", "self", "whoami", "authenticated", "my"}:
                continue  # `get_current_user` reads the caller's own record, however it is typed: no list of users (review 21)
            if name_verb(name) in ("create", "new", "init", "initialize", "start", "begin", "generate", "make", "open"):
                continue  # `createNativeRecoveryFlow` (a GET) starts one new flow: no list of the flows there are (review 27)
            req = self.required(t)
            # the caller's account every tool takes (`list_emails(account)`): said once by the user, no filter of
            # the lister's own (the records of the account asked from); a stand-in value while probing
            sess = tuple(p.name for p in req if p.name in self.session and prim_class(strip_optional(p.type)) == "str")
            rest = [p for p in req if p.name not in sess]
            every = _every_choice(rest)
            # a switch that widens the list past what it shows by default ("Show all tasks (pending and completed)",
            # "Whether to include drill incidents"): on, as an agent passes it to see every record the user may mean
            # (review 47: eleven gold lists returned records the docs' default leaves out)
            widen = {p.name: True for p in t.params if p not in req and strip_optional(p.type) == A.PrimType("bool") and _widens(p.doc or "", t)}
            if not rest or every:
                r = self._try(name, {**dict(every), **{k: "default" for k in sess}, **widen})
                # a list, or lists inside a result (`read_graph() -> {nodes: [...], relations: [...]}`)
                found = [(None, r)] if isinstance(r, list) else sorted(r.items()) if isinstance(r, dict) else []
                for path, lst in found:
                    if isinstance(lst, list) and lst and isinstance(lst[0], dict):
                        ent = self.entity_of(lst[0])
                        if ent and ent in self.lister_all and _points_to(self.tools[self.lister_all[ent]].doc, name) \
                                and not _points_to(t.doc, self.lister_all[ent]):
                            # (two docs that name each other say each does what the other does not, "Rather than X for the
                            # supplier invoices" both ways: the plainer stays; review 92 found client invoices among supplier ones)
                            del self.lister_all[ent]  # the docs of the first send a reader here for "the list of records
                            self.lister_args.pop(ent, None)  # themselves" (review 38: Boond's reporting tools name
                            self.lister_path.pop(ent, None)  # `boond_projects_search`): the docs' own choice
                        if ent and ent not in self.lister_all:
                            self.lister_all[ent] = name
                            self.lister_args[ent] = dict(every)
                            if sess:
                                self.lister_session[ent] = sess
                            if widen:
                                self.lister_widen[ent] = widen
                            if path is not None:
                                self.lister_path[ent] = path
                        elif ent and not sess and (fam := tool_family(name)) and fam != tool_family(self.lister_all[ent]):
                            self.family_lister.setdefault((ent, fam), (name, dict(every), path))
                continue
            if len(req) != 1:
                self._probe_locator(name, req)
                continue
            p = req[0]
            ke = self.key_entity(p.name, p.type)
            if ke is None or isinstance(strip_optional(p.type), A.ListType):
                self._probe_locator(name, req)
                continue
            if ke == self.user:
                for uk in ukeys:
                    r = self._try(name, {p.name: uk})
                    if isinstance(r, list) and r and isinstance(r[0], dict):
                        ent = self.entity_of(r[0])
                        if ent and ent != self.user and _names_entity(name, ent):
                            self.lister_by_user.setdefault(ent, (name, p.name))
                            break
                    elif isinstance(r, dict) and self.entity_of(r) == self.user:
                        self.getter.setdefault(self.user, name)
                        break
            else:
                for k in sorted(self.ents.get(ke) or {})[:4]:
                    r = self._try(name, {p.name: self.ents[ke][k].get(self.decl[ke].key, k)})
                    if isinstance(r, dict) and self.entity_of(r) == ke:
                        self.getter.setdefault(ke, name)
                        self.getters.setdefault(ke, []).append(name)
                        break
                    if isinstance(r, list) and r and isinstance(r[0], dict):
                        child = self.entity_of(r[0])
                        if child and child not in (ke, self.user) and _names_entity(name, child):
                            cands.setdefault(child, []).append((name, p.name, ke))
                            break
        for child, found in cands.items():  # a list inside a parent the user can find (Asana's tasks by workspace, not by a project nothing lists)
            self.lister_by_parent[child] = next((c for c in found if c[2] in self.lister_all), found[0])

    def _probe_locator(self, name: str, req: list[A.ParamDecl]) -> None:
        """A read that finds the user's key from what a person knows (email; name + zip)."""
        if self.user is None or self.locator is not None:
            return
        urecs = self.ents.get(self.user) or {}
        ufields = {f.name for f in self.decl[self.user].fields}
        if not urecs or not all(p.name in ufields or any(p.name in (v if isinstance(v, dict) else {}) for v in next(iter(urecs.values())).values()) for p in req):
            return
        uk, urec = sorted(urecs.items())[0]
        args = {p.name: _field_anywhere(urec, p.name) for p in req}
        if any(v is None for v in args.values()):
            return
        r = self._try(name, args)
        if r == urec.get(self.decl[self.user].key, uk) or (isinstance(r, dict) and self.entity_of(r) == self.user):
            self.locator = (name, [p.name for p in req])

    def _try(self, tool: str, args: dict) -> Any:
        try:
            r = self.base.step(tool, jcopy(args))
        except Exception:  # noqa: BLE001 - a probe that crashes is just not a lookup
            return None
        if self.base.state_hash() != self.base_hash:  # a "read" that writes: not a lookup
            self.base = self.module.Env(self.world)
            self._fork = getattr(self.base, "fork", None)
            self.writes[tool] = True
            return None
        return None if isinstance(r, BaseException) else r


_ADDRESS = ("address1", "address2", "street", "city", "state", "zip", "zipcode", "postal_code", "country")


def tool_family(tool: str) -> str:
    """The product a tool's name puts it in: the words before its verb (`doks_upgrade_cluster` -> "doks",
    `db_cluster_list` -> "db"), "" when the name starts with its verb (`list_issues`). Two families listing
    what the world holds as one entity are two products (a database cluster is no Kubernetes cluster)."""
    ws = norm(tool).split("_")
    verb = name_verb(tool)
    if not verb or not ws or ws[0] == verb or len(ws) < 3:
        return ""
    return ws[0]


def _names_entity(tool: str, ent: str) -> bool:
    """Whether a read taking one record's key is named for the records it lists (`get_user_orders` lists
    orders), or for nothing but its act (`get_children`): `list_credit_balances(customer)` is no list of a
    customer's transactions, whatever its synthesized body returns (blind review 24)."""
    words = [singular(w) for w in norm(tool).split("_")]
    ws = set(words)
    head = singular(norm(ent).split("_")[-1])
    obj = [w for w in words[:next((i for i, w in enumerate(words) if w in PREPOSITIONS and i), len(words))]
           if w not in ("list", "all", "page", "paginated", "detail", "details", "info")]
    if head in ws and obj and obj[-1] != head and obj[-1] not in singular(norm(ent)).split("_"):
        return False  # `get_project_task_counts` lists counts, not tasks: the object named last is what it lists
    return head in ws or not (ws - CLOSED_CLASS - {"get", "list", "fetch", "read", "show", "find", "all", "by", "for", "of", "id"}
                              - {singular(w) for w in norm(ent).split("_")})


def _address(vals: list) -> tuple[list, str] | None:
    """Address parts among the values ("address1", "city", "zip", ...) as one line a person says:
    "to 725 Maple Ave, Apt 2, Austin, TX 52561, USA"."""
    got = {norm(k): (k, v) for k, v in vals if norm(k) in _ADDRESS and isinstance(v, str) and v}
    if not ({"city"} <= got.keys() and got.keys() & {"address1", "street"}):
        return None
    first = [got[k][1] for k in ("address1", "street", "address2", "city") if k in got]
    tail = " ".join(got[k][1] for k in ("state", "zip", "zipcode", "postal_code") if k in got)
    line = ", ".join(first + ([tail] if tail else []) + ([got["country"][1]] if "country" in got else []))
    return list(got.values()), "to " + line


def _login_of(full: str, rng: random.Random) -> str:
    """A new account's login made of its person's name: "Emily Bridges" -> "emily_bridges15" (review 71)."""
    return f"{full.lower().replace(' ', rng.choice(['.', '_']))}{rng.randint(1, 99)}"


def _person_name(u: dict) -> str:
    """"Ada Lovelace" from `name` (a string, or a record of first/last name) or `first_name` + `last_name`."""
    n = u.get("name")
    src = n if isinstance(n, dict) else u
    if isinstance(n, str):
        return n
    return " ".join(str(src[k]) for k in ("first_name", "firstName", "firstname", "last_name", "lastName", "lastname") if isinstance(src.get(k), str))


def _inner_values(rec: dict, name: str) -> list:
    """Scalar values of field `name` (or its singular) inside the record's lists of records:
    `branch_name` of each of a repo's `branches`, `file` of each of its `files`."""
    want = {norm(name), singular(norm(name))}
    if set(norm(name).split("_")) & TEXTY:
        return []  # a task's new description is not one of its files' descriptions: free text is made, not found
    out = []
    for v in rec.values():
        if isinstance(v, list):
            for x in v:
                if isinstance(x, dict):
                    out += [y for k, y in x.items() if norm(k) in want and isinstance(y, (str, int)) and not isinstance(y, bool)]
    return out


def _field_anywhere(rec: dict, name: str) -> Any:
    if name in rec:
        return rec[name]
    for v in rec.values():
        if isinstance(v, dict) and name in v:
            return v[name]
    return None


# --------------------------------------------------------------------------- referring expressions


@dataclass(frozen=True)
class Referring:
    """How a person names one record among theirs: `attrs` (field, value) that single it out, or a
    superlative `op` (argmin/argmax) by `by` (optionally among those matching `attrs`)."""

    attrs: tuple[tuple[str, Any], ...] = ()
    op: str = ""
    by: str = ""


def _matches(rec: dict, attrs) -> bool:
    return all(rec.get(f) == v and type(rec.get(f)) is type(v) for f, v in attrs)


def select(records: list[dict], ref: Referring) -> list[int]:
    """Indices of the records `ref` names (exactly one for a good expression): the second
    implementation, used by the tests, of what the reasoning nodes compute."""
    idx = [i for i, r in enumerate(records) if _matches(r, ref.attrs)]
    if ref.op:
        vals = [records[i].get(ref.by) for i in idx]
        if not vals or any(not _orderable(v) for v in vals):
            return []
        best = (min if ref.op == "argmin" else max)(vals)
        idx = [i for i, v in zip(idx, vals) if v == best]
    return idx


def _orderable(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) or (isinstance(v, str) and bool(_DATE.match(v)))


_CONTENT_FIELD = re.compile(r"(^|_)(reason|note|notes|comments?|text|body|description|content|message|resolution|args|query|pattern|summary"
                            r"|details?|remarks?|information|info|instructions?|explanation)$")
_STAMP = re.compile(r"^(?:date_|first_|originally_)?(?:created|updated|modified|archived|deleted|completed|closed|synced|indexed|last_(?:used|login|seen|modified|updated|accessed|run|activity|sync|active)\w*)(?:_(?:at|on|time|date|timestamp|ts))?$"
                    r"|^(?:creation|modification|update|archive|deletion)_(?:time|date|timestamp)$")
_SETTING = re.compile(r"(^|_)(currency|currency_code|colou?r|time_?zone|locale|language|visibility|icon|avatar|theme|sort|sort_order|position)$")


def refer(records: list[dict], target: int, fields: list[str], rng: random.Random, superlatives: bool = True,
          status_last: bool = False, newest: bool = True) -> Referring | None:
    """The fewest natural attributes that single out `records[target]`, or a superlative
    (about a third of the time when one exists); None when nothing names it uniquely."""
    rec = records[target]
    # a number singles a record out only as a superlative ("my most expensive order"): "the template with a slide index
    # of 27", "the token with 48 expires in days" are not how a person names a thing
    usable = [f for f in fields if _sayable(rec.get(f)) and not (isinstance(rec.get(f), (int, float)) and not isinstance(rec.get(f), bool))
              and not (isinstance(rec.get(f), str) and "\n" in rec[f])  # a signature over two lines names no record
              and not (isinstance(rec.get(f), str) and _TIME_OF_DAY.fullmatch(rec[f]))]  # nor a bare "16:00" (review 31)
    # "my order whose ship from country code is "PK"": a code the system keeps is no way a person names their record
    usable = [f for f in usable if not (re.search(r"(^|_)codes?$", norm(f)) and isinstance(rec.get(f), str) and len(rec[f]) <= 3)]
    # nor a setting the system keeps ("my service whose currency is CAD with the red color", review 33), nor a rule's
    # condition ("my rule whose filter subject is X"): a person may ask what they are, but names the record otherwise
    usable = [f for f in usable if not _SETTING.search(norm(f)) and (not _CONTENT_FIELD.search(norm(f)) or f in _TITLE_FIELDS.get()) and not re.match(r"(filter|match|default|assign|action)_", norm(f))]
    # a status of one of its parts ("my bookmark with the failure summarization status", review 34) is the system's
    # bookkeeping; the record's own `status` is how its owner knows it
    usable = [f for f in usable if not (is_status(f) and norm(f) not in ("status", "state"))]
    # "my sales order whose status is "To Deliver and Bill"": a workflow's step names no order its owner knows (review 75)
    usable = [f for f in usable if not (is_status(f) and isinstance(rec.get(f), str) and len(rec[f].split()) > 2)]
    # "my pending order" beside another in "pending (items modified)": the second is pending too, to its owner (review 70)
    usable = [f for f in usable if not (is_status(f) and isinstance(rec.get(f), str) and any(
        isinstance(r.get(f), str) and r[f] != rec[f] and r[f].lower().startswith(rec[f].lower() + " ") for r in records))]
    # when the system stamped it (created, updated, archived, last used) is no attribute a person names a record by
    # ("my module starting X and whose archived time is Y", review 51); it still orders them ("my oldest module")
    usable = [f for f in usable if not _STAMP.search(norm(f))]
    if is_person_record(None, fields):  # a person is called by their name, not "called "Data engineer"" (their title)
        usable = [f for f in usable if norm(f) not in ("title", "job_title", "position")]
    if any(_own_name(f) and norm(f) not in ("subject", "label") for f in fields):
        # a record with a `title` is not "called" its `subject` (review 26: a deck named by an email-like subject,
        # another deck titled the same): the subject is no name a person uses beside the title
        usable = [f for f in usable if norm(f) not in ("subject", "label")]
    order = sorted(usable, key=lambda f: ((9 if status_last and is_status(f) else _attr_rank(f, rec.get(f))), rng.random()))
    if len(records) == 1:  # the only one: still named by its name when it has one ("the cycle called X", not "the cycle in ...")
        named = next((f for f in order if _own_name(f) and isinstance(rec.get(f), str)), None)
        return Referring(((named, rec[named]),)) if named else Referring()
    sup = []
    if superlatives and not _mixed_units(records):  # 82.45 EUR is no "lowest" beside 98.96 JPY
        said = {(op, g): superlative(op, g, "x") for op in ("argmin", "argmax") for g in fields}  # once per call, not per pair
        for f in fields:
            if not (_comparable(f) or all(isinstance(r.get(f), str) for r in records)) or norm(f).split("_")[0] in PREPOSITIONS:
                continue  # ("the application with the earliest from date", review 35: a bound's name, no attribute)  # the cheapest, the newest: "the device with the lowest volume percent" picks nothing a person means (review 22)
            vals = [r.get(f) for r in records]
            if all(isinstance(x, str) and _TIME_OF_DAY.fullmatch(x) for x in vals) and any(
                    len({r.get(g) for r in records}) > 1 and all(isinstance(r.get(g), str) and _DATE.match(r[g]) for r in records)
                    for g in fields if g != f):
                continue  # "my earliest alarm" by its time of day while the alarms fall on several dates: the earliest time,
                # or the first to ring? (review 68: two readings, one checked)
            if norm(f) in ("date", "day") and any(g != f and all(isinstance(r.get(g), str) and _TIME_OF_DAY.fullmatch(r[g])
                                                                for r in records) for g in fields):
                continue  # ... and by its date, said "my earliest alarm" too, beside a time of day: the same two readings
            ws = norm(f).split("_")
            if len(ws) > 1 and ws[0] not in ("number", "num", "no", "count") and is_plural(ws[-1]) and all(isinstance(v, int) for v in vals):
                continue  # "the reservation with the fewest nonfree baggages": a qualified count splits one quantity for
                # the books; a person ranks by the things themselves ("the most items"), not by a share of them (review 59)
            if all(_orderable(v) for v in vals) and len({type(v) for v in vals} - {int, float}) <= 1:
                for op in ("argmin", "argmax"):
                    if not newest and re.match(r"the (?:most recent|newest|latest)", said[(op, f)]):
                        continue  # (`newest`: no "most recent" for a delete)
                    ref = Referring((), op, f)
                    # "the most recent bookmark" by `firstCreatedAt` when `createdAt` says another (review 54): words two
                    # fields share must pick one record
                    twins = [g for g in fields if g != f and said[(op, g)] == said[(op, f)]]
                    if said[(op, f)] == "the most recent x":  # ... and "my most recent bookmark" may be the one changed last
                        # (review 72: by `createdAt` a no-op, by `modifiedAt` an archived one deleted): both must agree
                        twins += [g for g in fields if g != f and said[(op, g)] == "the most recently updated x"]
                    if select(records, ref) == [target] and all(select(records, Referring((), op, g)) == [target] for g in twins
                                                                if all(_orderable(r.get(g)) for r in records)):
                        sup.append(ref)
    if sup and rng.random() < 0.35:
        return sup[rng.randrange(len(sup))]
    part = {f: re.sub(r"^(first|given)_?name$", "first", re.sub(r"^(last|family|sur)_?name$|^surname$", "last", norm(f))) for f in fields}
    parts = {part[f]: f for f in order}
    if {"first", "last"} <= set(part.values()) and not {"first", "last"} <= set(parts):
        order = [f for f in order if part[f] not in ("first", "last")]  # half a person's name ("my user called Sanders") names no one
    for f in order:
        if isinstance(rec[f], str) and _DATE.match(rec[f]):
            continue  # "my project on 2023-08-05": a date names a record only beside what it is ("my order from May 3")
        if "first" in parts and "last" in parts and f in (parts["first"], parts["last"]):
            ref = Referring(((parts["first"], rec[parts["first"]]), (parts["last"], rec[parts["last"]])))
            if select(records, ref) == [target]:
                return ref  # a person is called by their whole name: "my user called Tara Lewis", not "called Tara"
            continue
        if is_status(f) and any(_own_name(g) and isinstance(rec.get(g), str) and rec[g] for g in order):
            continue  # "the opened merge request": a record with a title is named by it, not by its state alone (reviews
            # 86 and 90); a state still narrows a name ("my open issue called X")
        ref = Referring(((f, rec[f]),))
        if select(records, ref) == [target]:
            return ref
    # the two ends of what the record is (an absence "starting X and ending Y", a stay), not a start and a deadline
    spans = {frozenset((a, b)) for a, b in span_pairs(tuple(order))
             if set(norm(b).split("_")) & {"end", "ending", "ends", "to", "until", "arrival", "checkout", "out", "close", "closes"}}
    for i, f in enumerate(order):
        for g in order[i + 1:]:
            if all(isinstance(rec[x], str) and _DATE.match(rec[x]) for x in (f, g)) and frozenset((f, g)) not in spans:
                continue  # "my issue starting X and whose target date is Y" (review 51); a span's two ends name it
            ref = Referring(((f, rec[f]), (g, rec[g])))
            if select(records, ref) == [target]:
                return ref
    if superlatives and not sup:  # "my most expensive pending order": a superlative among those sharing one attribute
        for f in order:
            if not isinstance(rec[f], str) or _DATE.match(rec[f]):
                continue
            group = [r for r in records if r.get(f) == rec[f]]
            if len(group) < 2 or _mixed_units(group):
                continue
            for g in fields:
                vals = [r.get(g) for r in group]
                if g != f and _comparable(g) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
                    for op in ("argmax", "argmin"):
                        ref = Referring(((f, rec[f]),), op, g)
                        if select(records, ref) == [target]:
                            return ref
    return sup[0] if sup else None


_UNIT_FIELD = re.compile(r"(^|_)(currency|currency_code|unit|units)$")


def _mixed_units(records: list[dict]) -> bool:
    """Do the records give their amounts in more than one currency or unit (a `currency` field with two values)?
    Then no amount of one is ranked against or added to another's (blind review 20: JPY, EUR and USD summed)."""
    for f in {f for r in records for f in r if _UNIT_FIELD.search(norm(f))}:
        if len({str(r.get(f)).lower() for r in records if r.get(f) is not None}) > 1:
            return True
    return False


_ID_NAME = re.compile(r"(^|_)(id|ids|uuid|gid|guid|uid)$")
_ID_DOC = re.compile(r"\b(?:id|ids|identifier|identifiers)\b", re.I)


def _natural_key(m: "_Model", ent: str) -> bool:
    """Whether `ent`'s key is a name a person says (a path, a name, a slug), not an id."""
    return re.search(r"(path|name|title|slug|file|dir|directory|folder|url|email)$", norm(m.decl[ent].key)) is not None


def _in_scope(sc: "_Scenario", ent: str) -> str:
    """" in my board called Roadmap" for records listed inside a parent record, else nothing."""
    return f" {sc.scope_prep.get(ent, 'in')} {sc.scope[ent]}" if ent in sc.scope else ""


def _sayable(v: Any) -> bool:
    if isinstance(v, bool) or v is None:
        return False
    if isinstance(v, (int, float)):
        return True
    # nobody names a record by its link, or by the minute it was made ("my project from 2023-07-06T16:35:00")
    return isinstance(v, str) and 0 < len(v) <= 40 and not looks_like_id(v) and "://" not in v and not _CLOCK.search(v)


_CLOCK = re.compile(r"\d[T ]\d{2}:\d{2}")


def _attr_rank(f: str, v: Any) -> int:
    """Which attributes a person names first: a status, a date, a name/title, a kind, then amounts."""
    n = norm(f)
    if n in ("status", "state") or n.endswith("_status"):
        return 0
    if isinstance(v, str) and _DATE.match(v):
        return 1
    if _NAME_PART.match(n):
        return -1  # a person by their whole name first: "my resource called Tara Lewis", not "my resource in Portland"
    if _own_name(f) or re.search(r"(^|_)(destination|origin|city|product|genre|cabin|type|category)$", n):
        return 1
    if re.search(r"_(name|title|subject)$", n):
        return 2  # another thing's name or subject (`article_subject`): no way to name the record itself (blind review 21)
    if isinstance(v, str):
        return 2
    return 3


_CONDITION_FIELD = re.compile(r"(^|_)(status|state|stage|phase|priority|severity|urgency)$")


# what a record's own field grants its holder: the words of authorization in English, whatever the API
_PRIVILEGE_WORDS = frozenset({"role", "roles", "permission", "permissions", "privilege", "privileges", "admin", "access", "scope", "scopes"})


def is_status(f: str) -> bool:
    n = norm(f)
    return n in ("status", "state") or n.endswith("_status")


def describe(noun: str, ref: Referring, mine: bool = True, rng: random.Random | None = None, definite: bool = False) -> str:
    """The words for a referring expression: "my confirmed reservation", "my order from 2024-05-17",
    "my most expensive reservation", "the flight to LAX on 2024-05-17"."""
    det = "my" if mine and not any(norm(f) in _BY_PERSON for f, _ in ref.attrs) else "the"  # "the comment by X", never
    # "my comment by X": the user did not write what another person did (review 77)
    states = [(f, v) for f, v in ref.attrs if is_status(f) and isinstance(v, str) and not re.fullmatch(r"[A-Z]{2}", v)]  # "OR" is a place
    # one state is said as an adjective ("my confirmed order"); a second one after the noun ("... with the
    # pending payment status"), never "my inactive active order"
    first = next(((f, v) for f, v in states if norm(f) in ("status", "state")), states[0] if states else None)
    if first and (norm(first[0]) not in ("status", "state") or not _adjectival(first[1])):
        # a crawl status "success" is no adjective ("my success bookmark"), and "my pending bookmark" does not say which
        # of its states is pending (review 30): only the record's own `status` reads before the noun; others after it
        first = None
    adj = [say(first[1]).replace("_", " ")] if first else []
    if adj and re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*|[A-Z]{3,}(?: [A-Z]{3,})*", adj[0]):
        adj = [adj[0].lower()]  # a product shows the state as "Draft", "Pending Review", "ARCHIVED"; a person writes "my draft order"
    rest = [(f, v) for f, v in ref.attrs if (f, v) != first]
    own = {f"{norm(noun).replace(' ', '_')}_{w}" for w in ("name", "title")}
    rest = [("name" if norm(f) in own else f, v) for f, v in rest]  # a project's `project_name` is what it is called
    kind = next(((f, v) for f, v in rest if re.search(r"(^|_)(category|cuisine|genre|kind|type)$", norm(f)) and isinstance(v, str)
                 and re.fullmatch(r"[A-Z][A-Za-z-]*(?: [A-Z][A-Za-z-]*)?", v)), None)
    if kind:  # a documented kind said as an adjective: "the Indian restaurant", not "whose category is "Indian""
        adj.append(kind[1])
        rest.remove(kind)
    head = " ".join(adj + [noun])
    if ref.op:
        core = superlative(ref.op, ref.by, head)  # "the cheapest reservation"
        core = re.sub(r"^the ", det + " ", core)
    elif not mine and not definite and not any(_own_name(f) or re.search(r"(^|_)(first|last|given|family|sur)_?name$", norm(f)) for f, _ in rest):
        core = _a(head)  # "reserve a Take-out restaurant in Chicago, IL": one the user does not know yet, not "the" one
        # as if they did (review 49: "a property visit in the home in Chicago")
    else:
        core = f"{det} {head}"
    first = next(((f, v) for f, v in rest if re.fullmatch(r"(first|given)_?name", norm(f))), None)
    last = next(((f, v) for f, v in rest if re.fullmatch(r"(last|family|sur)_?name|surname", norm(f))), None)
    if first and last:  # "the candidate called Tara Lewis", not "with the tara first name and the lewis last name"
        rest = [x for x in rest if x not in (first, last)] + [("name", f"{first[1]} {last[1]}")]
    label = next(((f, v) for f, v in rest if _own_name(f) and isinstance(v, str) and re.search(r"\bending in \d{2,4}$", v)), None)
    if label and not ref.op and not adj and len(rest) == 1:
        return f"{det} {label[1]}"  # a card's label names it as a person does: "my Amex ending in 3785"
    quals = [qualifier(f, v) for f, v in rest]
    if is_problem(noun):  # "the issue reported by X": "the issue by X saying ..." read as an issue named by its text (review 78)
        quals = ["reported " + q if q.startswith("by ") else q for q in quals]
    ons = [i for i, q in enumerate(quals) if q.startswith("on ")]
    spans = any(q.startswith(("starting ", "ending ", "due ")) for q in quals)
    for i in ons[0 if spans else 1:]:  # nor "my module on 2023-08-07 starting 2024-05-19"  # "my invoice on 2023-08-28 whose expected payment date is 2023-11-02", never "on X on Y" (review 34)
        quals[i] = f"whose {humanize(norm(rest[i][0]))} is {say(rest[i][1])[:10]}"
    own = next((i for i, (f, v) in enumerate(rest) if norm(f) in ("owner", "owner_login", "owner_name") and isinstance(v, str)), None)
    home = next((i for i, q in enumerate(quals) if q.startswith("in the ")), None)
    if own is not None and home is not None:  # `list_issues(owner, repo)`: the owner is the repository's ("in the repo
        quals[home] += f" owned by {say(rest[own][1])}"  # "api" owned by msutton"), not the issue's ("with the msutton owner")
        quals[own] = ""
        quals = [q for q in quals if q]
    place = [q for q in quals if q.startswith(("from ", "to ", "on "))]
    within = [q for q in quals if q.startswith("in the ") and q not in place]
    other = [q for q in quals if q not in place and q not in within]
    if place:
        core += " " + " ".join(place)
    # "in Seattle, WA" before what it has; the "with"s said once: "with 3 beds and 2 baths", never
    # "and with 3 beds and with 2 baths"
    at = [q for q in other if q.startswith("in ")]
    withs = [q[5:] for q in other if q.startswith("with ")]
    other = [q for q in other if q not in at and not q.startswith("with ")]
    other = sorted(other, key=lambda q: (q.startswith("whose "), q.startswith("ending ")))  # "starting X and ending Y"
    if at:
        core += " " + " ".join(at)
    if other:
        core += " " + " and ".join(other)
    if withs:
        core += " with " + (", ".join(withs[:-1]) + " and " if len(withs) > 1 else "") + withs[-1]
    if within:
        core += " " + " ".join(within)
    return core


_ADJ_END = re.compile(r"(?:ed|ing|ive|al|able|ible|ent|ant|ic|ous|ful|less|ary|ory)$")


def _adjectival(v: str) -> bool:
    """Whether a state value reads before a noun ("pending", "archived", "active", "open", "draft"): a participle or
    an adjective by its ending (general English morphology), or one of the few short state words."""
    ws = say(v).replace("_", " ").replace("-", " ").lower().split()
    return bool(ws) and all(_ADJ_END.search(w) or (w.startswith("un") and "VERB" in lemmas(w[2:])) or w in ("open", "new", "draft", "live", "done", "due", "idle", "online", "offline", "ready", "busy", "free", "paid", "unpaid", "late", "overdue", "inactive", "not", "in", "progress")
                            for w in ws)


_BARE_SCOPE = re.compile(r"\b(from|in|into|to|on|for) (?:an? )?([a-z]+) (?:in|inside|from|for|of) ((?:the|my) \2 called \"[^\"]+\")")


_COUNT_AFTER = re.compile(r"\b(?P<obj>[a-z]+s) (?P<mid>(?:for|to|of|on|in|at)\b[^.;:!?]*?),? with (?P<n>\d+) (?P<noun>[a-z]+)\b")


def count_first(text: str) -> str:
    """The number of the things asked for goes before them: "purchase tickets for a Music event on 2024-05-23 with 1
    ticket" -> "purchase 1 ticket for a Music event on 2024-05-23" (review 52)."""
    def fix(m: re.Match) -> str:
        if singular(m.group("obj")) != singular(m.group("noun")):
            return m.group(0)
        return f"{m.group('n')} {m.group('noun')} {m.group('mid')}"
    return _COUNT_AFTER.sub(fix, text)


def merge_bare_scope(text: str) -> str:
    """One place said once: the docs' bare "from project" followed by the scope "in the project called X"
    becomes "from the project called X"."""
    return _BARE_SCOPE.sub(r"\1 \3", text)


def _askable_name(f: str) -> bool:
    """Whether a person can say a field's name in a question: at most two words ("pull count", "due date"), and
    not a bare function word (`from`, `to`): a longer name is the schema's ("dest namespace replace count")."""
    n = norm(f)
    if n in CLOSED_CLASS or n in PREPOSITIONS or n.split("_")[0] in PREPOSITIONS:
        return False  # "what to date the application has": a bound's name (`to_date`, `from_date`) is no thing to ask about
    ws = [w for w in re.sub(r"^(?:number|num|no)_of_", "", n).split("_") if w and w not in ("is", "has")]
    return 0 < len(ws) <= 2 or (len(ws) == 3 and ws[-1] in ("date", "time", "day", "price", "amount", "total", "cost", "fee", "name",
                                                            "address", "email", "phone"))


def _schema_phrase(f: str) -> bool:
    """Whether a field's name is the schema's phrase, not a person's words: more than two words that name no date,
    price or name ("dest namespace replace count"); a bound (`from_date`) is said by its value ("from 2024-05-01")."""
    ws = norm(f).split("_")
    if len(ws) > 1 and ws[0] == "resource" and ws[-1] in ("type", "subtype", "kind", "class"):
        return True  # Asana's `resource_subtype` "default_task": REST's word for the record's own kind, no person's
        # ("set its resource subtype to default task", review 92)
    return not _askable_name(f) and ws[0] not in PREPOSITIONS


def _qualifies_another(f, e) -> bool:
    """Whether a field's doc names another field of its record as what it depends on or qualifies ("when
    ignoreMode is 'forDuration'", "time window in minutes for ignoreCount")."""
    doc = f.doc or ""
    others = [x.name for x in e.fields if x.name != f.name and len(re.findall(r"[A-Z]|_", x.name.lstrip("_"))) >= 1]
    return any(re.search(rf"\b(?:when|if|with|for) `?{re.escape(o)}`?\b", doc) for o in others)


def _verb_phrase_name(f: str) -> bool:
    """Whether a field's name reads as a verb phrase with a tail (`expires_in_days`, `remaining_until_reset`): a
    verb form that is no noun opens it and a preposition follows, so no question can say it as a thing."""
    ws = humanize(norm(f)).split()
    if len(ws) < 3 or ws[1] not in PREPOSITIONS:
        return False
    pos = lemmas(ws[0])
    return "VERB" in pos and "NOUN" not in pos


def _own_name(f: str) -> bool:
    """Whether field `f` is what its record is called (`name`, `title`, `displayName`), not a name it
    holds of something else (`author_name`, `new_name`, `embedding_function_name`)."""
    n = norm(f)
    if f in _TITLE_FIELDS.get():
        return True
    return n in ("name", "title", "subject", "label") or re.fullmatch(r"(display|full|file|first|last|short|nick|friendly|entity|object|resource|record)_?name", n) is not None


# a flag saying the product made or guards a record (`isBuiltIn`, `system`, `readOnly`, `locked`)
_SYSTEM_FLAG = re.compile(r"^(?:is_)?(?:built_?in|system|system_defined|predefined|read_?only|locked|protected)$")


def product_owned(rec: dict) -> bool:
    """Whether the product made or guards a record: a true `isBuiltIn`/`system`/`readOnly`/`locked` flag, or a
    `wellknownListName` other than `none` (Microsoft To Do's default and flagged-emails lists, which "cannot be
    deleted")."""
    flags, known = _product_fields(frozenset(rec))
    return any(rec.get(f) is True for f in flags) or any(
        str(rec.get(f) or "none").lower() not in ("none", "unknown", "unknownfuturevalue", "") for f in known)


@functools.lru_cache(maxsize=512)
def _product_fields(names: frozenset) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(system flags, well-known names) among a record's field names: read once per record shape (`pick` asks it of
    every candidate record)."""
    return (tuple(f for f in names if _SYSTEM_FLAG.search(norm(f))),
            tuple(f for f in names if re.search(r"(^|_)well_?known(_|$)", norm(f))))


# who made a record, said as a person does after its noun: "the comment by Tammie Lee", "the issue reported by X"
_BY_PERSON = {"author": "by", "author_name": "by", "authored_by": "by", "creator": "created by", "created_by": "created by",
              "creator_name": "created by", "reporter": "reported by", "reported_by": "reported by", "submitter": "submitted by",
              "submitted_by": "submitted by", "opened_by": "opened by"}


def qualifier(f: str, v: Any) -> str:
    """One attribute as a person says it after the noun: "from 2024-05-17", "to LAX", "with 2 seats",
    "for $580.52", "called \"Dune\"", "with the business cabin"."""
    n = norm(f)
    w = humanize(n)
    if isinstance(v, str) and _DATE.match(v):
        if re.search(r"(^|_)due(_|$)", n):
            return f"due {v[:10]}"  # "my issue due 2024-07-05": a deadline, not an end
        if re.search(r"(^|_)(end|ends|until|to|expires?|expiry|finish)(_|$)", n):
            return f"ending {v[:10]}"  # "from 2024-06-01 ending 2024-06-05", never "on X on Y"
        if re.search(r"(^|_)(start|starts|from|begin|since)(_|$)", n):
            return f"starting {v[:10]}"
        return f"from {v}" if re.search(r"(created|placed|ordered|submitted|opened)", n) else f"on {v}"
    if lang := language_name(n, v):
        return f"in {lang}"  # "my book in Russian", not "with the ru language"
    if n in ("destination", "to", "to_city", "arrival_airport"):
        return f"to {v}"
    if n in ("origin", "from", "from_city", "departure_airport"):
        return f"from {v}"
    if n in ("location", "city", "town", "area", "neighborhood", "neighbourhood", "region") and isinstance(v, str) and v[:1].isupper():
        return f"in {v}"  # "the restaurant in Berkeley, CA", not "whose location is ..."
    if n in _CONTAINERS and isinstance(v, str) and not looks_like_id(v):
        return f'in the {w} "{v}"'  # "my task called X in the workspace "Acme"", not "whose workspace is"
    if is_money(n) and isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"with a {w} of {money(v, n)}"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if n.startswith(("number_of_", "num_of_", "no_of_")):
            w = humanize(n.split("_of_", 1)[1])
            return f"with {say(v)} {singular(w) if v == 1 else w}"
        return f"with {say(v)} {w}" if _COUNTISH.search(n) else f"with a {w} of {say(v)}"
    if isinstance(v, str) and (by := _BY_PERSON.get(n)) is not None and v[:1].isupper():
        return f"{by} {v}"  # "the comment by Tammie Lee", "the issue reported by X", not "whose author name is" (reviews 73-77)
    if isinstance(v, str) and n in ("branch", "branch_name", "ref_name") and not looks_like_id(v):
        return f'on the "{v}" branch'  # "my hotspot on the "fix/api-docs" branch", not "whose branch is"
    if isinstance(v, str) and n in ("vendor", "vendor_name", "supplier", "supplier_name", "seller", "merchant", "merchant_name") \
            and v[:1].isupper():
        return f"from {v}"  # "my purchase order from Acme Ltd", not "whose vendor is"
    if n == "subject":
        return f'with the subject "{v}"'  # a message has a subject; it is not "called" it (review 31)
    if n in ("intent", "purpose", "goal") and isinstance(v, str) and re.fullmatch(r"[a-z]+", v):
        return f"to {v}" if is_verb(v) else f"for {v}"  # "a home in Chicago to rent", not "with the rent intent" (review 56)
    if _own_name(f):
        return f"called \"{v}\""  # the record's own name; a `new_name` or `embedding_function_name` is not what it is called
    if isinstance(v, str) and re.search(r"(^|_)(address|address1|line1|line_1|street)$", n):
        return f"shipping to {v}" if "ship" in n or "deliver" in n else f"at {v}"  # "my address at 1646 Brown Dam"
    if isinstance(v, str) and not re.fullmatch(r"[a-z][a-z_ -]*", v) or len(str(v).split()) > 3:
        return f"whose {w} is \"{v}\""  # a file name, a code, a proper name: quoted, not "with the tax documents.pdf original filename" (review 23)
    if isinstance(v, str) and _is_state_field(n) and re.fullmatch(r"[a-z]+", v) and (state := as_state(v)) != v:
        return f"that is {state}"  # "my page that is published", not "with the publish status" (review 95)
    if n.endswith("_name"):
        w = humanize(n.removesuffix("_name"))  # `embedding_function_name` "openai": "with the openai embedding function"
    return f"with the {say(v).replace('_', ' ')} {w}"


def money(v: Any, name: str | None = None) -> str:
    """$580.50, $1,200, $50 (cents only when there are some); an amount the docs give in minor units
    ("Amount in pence") is said in the major one: 2735 -> £27.35 (blind review 25: "$3" sent as 3 pence)."""
    sym = "$"
    minor = _MINOR_UNITS.get().get(norm(name)) if name else None
    if minor is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
        v, sym = v / 100, minor or "$"
    if isinstance(v, float) and not v.is_integer():
        return f"{sym}{v:,.2f}"
    return f"{sym}{int(v):,}"


# the money fields and parameters of the env being sampled whose docs give them in minor units -> the symbol to say
_MINOR_UNITS: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("forgec_minor_units", default={})
_MINOR_DOC = MINOR_UNITS_DOC  # one pattern for the world's amounts and the task's (stdlib.values)


def coded_numbers(env: A.EnvDecl) -> dict[str, dict[int, str]]:
    """{number name: {code: label}} over the env's parameters and fields (`code_labels`)."""
    out: dict[str, dict[int, str]] = {}
    for t in env.tools:
        for p in t.params:
            if (labels := code_labels(p.doc or "")) and strip_optional(p.type) in (A.PrimType("int"), A.PrimType("float")):
                out.setdefault(norm(p.name), labels)
    for e in env.entities:
        for f in e.fields:
            if (labels := code_labels(f.doc or "")) and strip_optional(f.type) in (A.PrimType("int"), A.PrimType("float")):
                out.setdefault(norm(f.name), labels)
    return out


# the text fields of the env being sampled whose docs call them their record's name (Todoist's `content`, "The task
# title/content."): names, not notes (`stdlib.values.titled_by_doc`)
_TITLE_FIELDS: contextvars.ContextVar[frozenset] = contextvars.ContextVar("forgec_title_fields", default=frozenset())


# the coded numbers of the env being sampled (`coded_numbers`), said by their labels
_CODES: contextvars.ContextVar[dict[str, dict[int, str]]] = contextvars.ContextVar("forgec_codes", default={})


def minor_units(env: A.EnvDecl) -> dict[str, str]:
    """{money name: symbol} for the amounts the docs give in minor units: each field's or parameter's own doc,
    or a tool's doc saying it of all its amounts ("Amounts are in the smallest currency unit (e.g., cents)")."""
    out: dict[str, str] = {}

    def sym(m: re.Match) -> str:
        return "£" if m.group(1).lower() == "pence" else "$" if m.group(1).lower() == "cents" else ""

    for t in env.tools:
        whole = _MINOR_DOC.search(t.doc or "")
        for p in t.params:
            m = _MINOR_DOC.search(p.doc or "") or (whole if is_money(norm(p.name)) else None)
            if m and is_money(norm(p.name)):
                out.setdefault(norm(p.name), sym(m))
    for e in env.entities:
        for f in e.fields:
            m = _MINOR_DOC.search(f.doc or "")
            if m and is_money(norm(f.name)):
                out.setdefault(norm(f.name), sym(m))
    return out


# --------------------------------------------------------------------------- one scenario under construction


@dataclass
class _Intent:
    kind: str  # create | update | cancel | status | money | question
    text: str
    condition: str = ""
    tool: str = ""
    done: bool = True  # False: its condition does not hold, the write is not in the gold path
    ground: tuple = ()  # (verb, doc, entity, record, described, args): what forgec.reasons grounds the reason in


class _Scenario:
    """Nodes executed so far (on a private fork), the user's facts, and the intents' words."""

    def __init__(self, m: _Model, rng: random.Random, ukey: str | None):
        self.m, self.rng, self.ukey = m, rng, ukey
        self.family = ""  # the tool family of the write being asked for (`tool_family`): its records are listed by its own lister
        self.env = m.fresh()
        self.nodes: list[A.BlueprintNode] = []
        self.values: dict[str, Any] = {}
        self.reads: dict[str, str] = {}  # a read call's tool and arguments -> the node that made it (asked once)
        self.facts: dict[str, Any] = {}
        self.postal: dict[str, Any] = {}  # the new address the user gives, by parameter name: one per person and task
        self.said_addresses: set[str] = set()  # address lines already said in this task
        self.names: set[str] = set()
        self.intents: list[_Intent] = []
        self.unknown: list[str] = []
        self.roots: set[str] = set()  # nodes about the user's own or described records
        self.writes: list[tuple[str, dict]] = []
        self.lists: dict[str, tuple[A.Expr, list]] = {}  # entity -> (expr, records) of the user's records
        # entity -> (writes done when it was listed, its records in the state then): a list looked up before a
        # write is used again while only the records the task acts on changed (an agent does not list again)
        self.listed_at: dict[str, tuple[int, dict | None]] = {}
        self.scope: dict[str, str] = {}  # entity -> the words for the parent record its list is inside
        self.prefilter: dict[str, tuple] = {}  # entity -> the (field, value)s a search for it was called with (said first)
        self.sought: dict[str, Any] = {}  # entity -> the key of the record a text search was made for (the one picked)
        self.scope_prep: dict[str, str] = {}  # entity -> "in" (a board's cards) or "for" (a person's checks)
        self.user_expr: A.Expr | None = None  # how the blueprint refers to the user's key
        self.user_node: str | None = None
        self.targets: set = set()  # (entity, key) of records an intent already acts on
        self.described: tuple | None = None  # (node, entity, record) of the last record the user described
        self.place: tuple | None = None  # (city, state, zip prefix) the scenario's addresses use
        self.session: dict[str, Any] = {}  # the caller's account on every tool (`user_google_email`): one value, said once
        self.said_of: dict[str, tuple[str, Any]] = {}  # a said phrase ('notes "..."') -> (field, value) it gives
        self.why = ""  # why the user calls (the user block's `reason`)
        self.ask_why = ""  # why the user asks (a question's reason, set by the sampler's question())

    # ----- names, facts
    def fresh(self, base: str) -> str:
        base = re.sub(r"[^a-z0-9_]+", "_", norm(base)).strip("_")[:32] or "x"
        if base[0].isdigit() or base in ("user", "call", "reason", "expect", "tell", "knows", "goal", "persona", "it",
                                         "state", "for", "in", "not", "and", "or", "true", "false", "null", "if", "else"):
            base = "my_" + base
        name, i = base, 2
        while name in self.names or name in self.m.tools:
            name, i = f"{base}_{i}", i + 1
        self.names.add(name)
        return name

    def fact(self, name: str, value: Any) -> A.Expr:
        base = re.sub(r"[^a-z0-9_]+", "_", norm(name)).strip("_") or "x"
        if base[0].isdigit():
            base = "f_" + base
        k, i = base, 2
        while k in self.facts and self.facts[k] != value:
            k, i = f"{base}_{i}", i + 1
        self.facts[k] = value
        return A.Attr(A.Name("user"), k)

    # ----- execution
    def call(self, tool: str, args: dict[str, tuple[A.Expr, Any]], base: str) -> tuple[str, Any]:
        values = {k: v for k, (_, v) in args.items()}
        writes = self.m.writes.get(tool, False)
        h0 = self.env.state_hash() if writes else None
        r = self.env.step(tool, jcopy(values))
        if isinstance(r, BaseException):
            raise _Skip("write-failed" if writes else "lookup-failed")
        read_key = None
        if writes:
            if self.env.state_hash() == h0:
                raise _Skip("no-op-write")
            self.writes.append((tool, values))
        else:  # the same read giving the same answer is asked once: its earlier node serves (review 30: five
            read_key = json.dumps([tool, values], sort_keys=True, default=str)  # bookmarks fetched again for a second intent)
            prev = self.reads.get(read_key)
            if prev is not None and self.values.get(prev) == r and any(isinstance(n, A.CallNode) and n.name == prev for n in self.nodes):
                return prev, self.values[prev]  # (a node an abandoned attempt made and dropped serves nothing)
        name = self.fresh(base)
        self.nodes.append(A.CallNode(name, tool, tuple(A.Arg(k, e) for k, (e, _) in args.items())))
        self.values[name] = r
        if read_key is not None:
            self.reads[read_key] = name
        return name, r

    def remember(self, ent: str, lst: tuple[A.Expr, list]) -> None:
        self.lists[ent] = lst
        tbl = (self.env.state.get("entities") or {}).get(ent)
        self.listed_at[ent] = (len(self.writes), jcopy(tbl) if isinstance(tbl, dict) else None)

    def listed(self, ent: str, stale_ok: bool = True, field: str | None = None) -> tuple[A.Expr, list] | None:
        """The list of `ent` looked up earlier, if it still serves: no write since, or (`stale_ok`) every
        record changed since is one an intent acted on and none was added, or (`field`) none was added and
        each left still has the `field` it had (names to check a new one against: an agent that just changed a task's
        priority, or deleted a label, does not list them again to see whether a name is free, reviews 49 and 52; the
        caller leaves out the names of the records removed since, `unless_exists`).
        Otherwise the agent lists again."""
        if ent not in self.lists:
            return None
        n, snap = self.listed_at.get(ent, (len(self.writes), None))
        if n == len(self.writes):
            return self.lists[ent]
        cur = (self.env.state.get("entities") or {}).get(ent)
        if snap is not None and cur == snap:  # the writes since touched none of them: the list is still exact
            return self.lists[ent]
        acted = {str(k) for e, k in self.targets if e == ent}
        if field is not None and snap is not None and isinstance(cur, dict) and set(cur) <= set(snap) and all(
                isinstance(cur[k], dict) and isinstance(r, dict) and (cur[k].get(field) == r.get(field) or str(k) in acted)
                for k, r in snap.items() if k in cur):
            return self.lists[ent]  # (a record the task renamed has the name the agent gave it: no second listing to learn
            # it, review 77; `unless_exists` checks the name against the names now)
        if stale_ok and snap is not None and isinstance(cur, dict) and (set(cur) <= set(snap) or field is None and _added_apart(cur, snap)):
            if all(k in acted or cur.get(k) == r for k, r in snap.items()):
                return self.lists[ent]  # (records this task made since are the agent's own: finding another by its
                # name in the first list gives the same record, review 85: no second listing after a create)
        del self.lists[ent]
        return None

    def reason(self, op: str, args: tuple, arg_values: list, kwargs: dict[str, Any], base: str) -> tuple[str, Any]:
        spec = OPS.OPS[op]
        kw_ast, kw_vals = [], {}
        for k, v in kwargs.items():
            if spec.kw(k) is not None and spec.kw(k).kind == "field":
                kw_ast.append(A.Arg(k, A.Name(v)))
                kw_vals[k] = v
            else:
                expr, val = v
                kw_ast.append(A.Arg(k, expr))
                kw_vals[k] = val
        try:
            value = OPS.apply(op, list(arg_values), kw_vals)
        except (OPS.Ambiguous, OPS.OpError):
            raise _Skip("ambiguous") from None
        name = self.fresh(base)
        self.nodes.append(A.ReasonNode(name, op, tuple(args), tuple(kw_ast)))
        self.values[name] = value
        self.roots.add(name)
        return name, value


# --------------------------------------------------------------------------- the sampler


_FREE_TEXT = re.compile(r"^(q|query|search|search_query|search_term|search_text|keyword|keywords|term|text|query_string)$")
_QUERY_LANGUAGE = re.compile(r"\b(?:jql|cql|sql|lucene|kql|query language|syntax|expression|regex|operator)", re.I)


def _free_text(p: A.ParamDecl) -> bool:
    """A required string a search matches records' text with (`query`, "Search query"), not a query language
    (JQL, CQL, SQL: a title alone is no query there) nor a key."""
    return strip_optional(p.type) == A.PrimType("str") and _FREE_TEXT.match(norm(p.name)) is not None \
        and not _QUERY_LANGUAGE.search(p.doc or "")


_BODY_PARAM = re.compile(r"^(body|data|input|params|payload|request|fields|properties|attributes|values|item|items|record|object|info|details|metadata|meta)$"
                         r"|_(data|input|body|params|payload|request|fields|attributes|details|info)$")
_MAX_OPTIONAL = 2  # optional arguments one request sets


_SERVER_SET = re.compile(r"^(id|uuid|etag|e_tag|odata_\w+)$|(^|_)(created|modified|updated|last_modified|last_updated|"
                         r"last_edited|change_key)(_at|_on|_date|_time|_date_time|_datetime|_by)?$"
                         r"|(^|_)(creation|update|modification)_(time|date|timestamp|at)$")  # Harbor's label `creation_time` (review 89)


def _one_more_optional(t: A.TypeExpr, n_set: int, name: str = "") -> bool:
    """Whether a request that already sets `n_set` optional values asks for one more of type `t`:
    a person asks for one or two things at once, never flips an optional switch, and never says what
    the server keeps (the record's own `id`, `lastModifiedDateTime`, an `etag`: Microsoft Graph's
    bodies list them as writable, review of ms_365 had a user say "with id ID-765835")."""
    return n_set < _MAX_OPTIONAL and strip_optional(t) != A.PrimType("bool") and not _SERVER_SET.search(norm(name))

# the parameters a new message or record is made of (not how it is sent): its recipient, subject, text, title
_MEMBERSHIP = re.compile(r"\b(?:add|remove|link|unlink|invite|kick|assign|unassign)\w*\b[\w ]{0,30}\b(?:users?|members?|people|persons?)\b|\bmembers?\b", re.I)
_PERSON_KEY = re.compile(r"(^|_)(name|firstname|lastname|surname|email|e_?mail|login|username|handle)$")
_PERSON_NAME_PARAM = re.compile(r"^(first|last|given|family|full|display)?_?name$|^(first|last|sur)name$")
_NAME_PART = re.compile(r"^(first|last|given|family|sur)_?name$")
_LOGIN_NAME = re.compile(r"^(user_?name|login|handle|real_?name|full_?name)$")


_CONTAINERS = {"workspace", "project", "board", "folder", "team", "space", "channel", "section", "calendar", "repository",
               "repo", "organization", "organisation", "notebook", "album", "playlist", "collection", "group"}
_ROW_OPS = {"update", "add", "delete", "remove", "create", "modify", "edit", "patch", "set", "upsert", "replace"}
_TEST_ONLY = re.compile(r"\bsandbox\b|\b(?:only|solely) (?:for|in|used for|available for) (?:testing|test|development)\b|\bfor testing purposes\b", re.I)
_MY_PRESCRIBED = re.compile(r"""(?:for|when|if)\b[^.\n]{0,40}?["“'‘`]my\b""", re.I)


def _names_record(f: A.FieldDecl | A.ParamDecl) -> bool:
    """Whether a field of a new record is what it is called: `name`, `title`, `display_name`, a person's first
    or last name (a `subject` or `label` is what it is about, not its name)."""
    n = norm(f.name)
    return prim_class(strip_optional(f.type)) == "str" and (
        (_own_name(f.name) and n not in ("subject", "label")) or _PERSON_NAME_PARAM.search(n) is not None)


def _tool_noun(tool: str) -> str:
    """The last word of a tool's name (`create_user` -> `user`), what it makes when no entity says."""
    return (norm(tool).split("_") or [""])[-1]


_RECIPIENTS = re.compile(r"^(to|recipients?|emails?|to_emails?|to_addresses)$")
_CONTENT_PARAM = re.compile(r"(^|_)(to|recipients?|subject|body|text|content|message|title|summary|description)$")
_OPENERS = ["I'd like to", "Could you please", "I want to", "Please"]
_CANCEL_VERBS = {"cancel", "delete", "remove", "close", "revoke", "withdraw", "archive", "drop", "unsubscribe", "terminate", "discard"}
_CHANGE_VERBS = {"change", "update", "modify", "set", "edit", "move", "rename", "replace", "patch", "switch"}


def _fit_pattern(v: str, rx: Any) -> Any:
    """`v`, or the nearest spelling of it the docs' pattern (`wording.doc_pattern`) allows (a phone "+1-643-822-1034"
    where the pattern is `^[0-9]*$` is "16438221034"), else _NONE."""
    for cand in (v, re.sub(r"\D", "", v), re.sub(r"[^\w\s]", "", v).strip(), re.sub(r"\s+", "-", v.strip())):
        if cand and rx.search(cand) is not None:  # JSON Schema: a pattern matches anywhere unless anchored
            return cand
    return _NONE


def _placeholder(v: Any, ent: str, key: str) -> bool:
    """A name made of the entity's noun and a number (`branch_76`): generated, never what a person calls a
    record. A path-like key (the git server's `repo_path` "repo_01852") is said as it is."""
    if re.search(r"(path|file|dir|directory|folder|url)$", norm(key)) or singular(norm(ent).split("_")[-1]) in ITERATIONS:
        return False  # ... and "Sprint 12" is how a team names its sprints
    return isinstance(v, str) and re.fullmatch(rf"{re.escape(norm(ent))}s?[_-]?\d+", norm(v)) is not None


def _moves(tool: A.ToolDecl, p: A.ParamDecl) -> bool:
    """Whether `p` names where a record goes (`move_card(card_id, list_id)`, a `target_project_id`),
    not the record it already lives in."""
    return _doc_verb(tool.doc) in MOVING_VERBS or bool(
        DESTINATION_PARAM.search(norm(p.name)) or re.search(r"\b(new|target|destination)\b", p.doc or "", re.I))


def _doc_verb(doc: str) -> str:
    """The main verb of the doc's first sentence that describes an act (forgec/realize.py), or ""."""
    return doc_verb(doc or "")


# "<verb> <noun phrase>" with no determiner (a summary's "Create monitor", "Generate SDK token"): group 2 is the phrase
_BARE_NP = re.compile(r"^(\w+) (?!(?:a|an|the|my|your|our|all|some|one|this|these|those|each|every|any|its|their|new|another|"
                      r"to|in|on|for|from|with|by|of|into|at|about|up|out|off|back)\b)"
                      r"((?:[A-Za-z][\w-]* ){0,2}[A-Za-z][\w-]*)(?=$| (?:in|on|for|to|from|with|by|of|into)\b)")


# what a delete takes with the record ("and all its reviews", "along with its associated files"): the tool's doing
_CASCADE = re.compile(r"\s*,?\s+(?:and|along with|together with|including|plus)\s+(?:all\s+)?(?:of\s+)?(?:its|their|the associated|"
                      r"associated|the related|related|any|every)\b")


def _defaults_to_field(doc: str, rec: dict) -> bool:
    """Whether a parameter's doc says its default is a field of the record acted on ("Reminder title (defaults
    to email subject)", "Defaults to the issue's title")."""
    m = re.search(r"\bdefaults?\s+(?:to|is)\s+(?:the\s+|its\s+)?((?:[\w']+\s+){0,2}[\w']+)", doc, re.I)
    if not m:
        return False
    last = re.sub(r"'s$", "", m.group(1).split()[-1].lower())
    return any(norm(k).split("_")[-1] == last for k in rec)


# a text parameter whose docs ask for markup, not plain text ("in Confluence Storage Format (XHTML)", "HTML body")
# (only where the docs demand it: "html content of the comment" takes plain words as well, and a wrapper the user never
# asked for is a second end state, review 83)
_MARKUP_DOC = re.compile(r"\bstorage\s+format\b|\bmust\s+(?:be|use)\s+(?:valid\s+)?x?html\b|\bin\s+x?html\s+format\b|\(xhtml\)|"
                         r"\bhtml-like\s+formatted\b", re.I)


_MANY = re.compile(r"\b(?:one or more|one or many|multiple|several|many|a batch of|a list of|a set of)\s+((?:new|existing)\s+)?([a-z]+)\b"
                   r"(?:(\s+(?:to|in|into|from|for|on|under|within)\s+)([a-z]+)\b)?", re.I)


def _one_of_many(doc: str) -> str:
    """A batch tool's doc said of the one record a task sends: "Update multiple existing projects with new values" ->
    "Update an existing project with new values", "Add one or more new sections to projects" -> "Add a new section to
    a project" (Todoist: "update multiple for my project called X", "add a new section ... to projects for the project
    called X"). Only a plural noun is made one; the rest of the doc is as written."""
    def one(mm: re.Match) -> str:
        noun = mm.group(2)
        if not is_plural(noun) or "NOUN" not in lemmas(singular(noun)):
            return mm.group(0)
        out = _a((mm.group(1) or "") + singular(noun))
        if mm.group(3):
            where = mm.group(4)
            out += mm.group(3) + (_a(singular(where)) if is_plural(where) and "NOUN" in lemmas(singular(where)) else where)
        return out
    return _MANY.sub(one, doc or "", count=1)


def _clause(doc: str) -> str:
    """The verb phrase of the doc's first sentence that describes an act, found by grammar
    (forgec/realize.py): "cancel a confirmed reservation", "switch branches"; "" when none has one."""
    c = realized_clause(doc or "")
    return c.text if c else ""


_SUPERLATIVE = re.compile(r"\b(?:earliest|latest|soonest|oldest|newest|most|least|highest|lowest|largest|smallest|biggest|"
                          r"cheapest|priciest|longest|shortest|fewest|greatest|best|worst)\b")


def _prenominal_state(v: str) -> bool:
    """Whether a state reads before its record's noun ("all my open tickets", "my archived notes", "in progress"):
    a word that describes, not an outcome's noun ("all my failure bookmarks", review 87)."""
    w = say(v).replace("_", " ").strip().lower()
    return " " in w or bool(set(lemmas(w)) - {"NOUN"})


def _ended(rec: dict) -> bool:
    """A record whose state is one that ends it (`status: "cancelled"`, "completed", "closed")."""
    return any(isinstance(v, str) and re.search(r"(?:^|_)(?:status|state)$", norm(k)) and is_ending_state(v) for k, v in rec.items())


def _added_apart(cur: dict, snap: dict) -> bool:
    """The records in `cur` that `snap` lacks (the ones this task made) share no text value with a record of `snap`
    in the same field: none of them could be the one a name found in the earlier list points to."""
    added = [r for k, r in cur.items() if k not in snap and isinstance(r, dict)]
    olds = [o for o in snap.values() if isinstance(o, dict)]

    def naming(f: str) -> bool:  # a field whose values tell records apart (a name, a title), not a status many share
        vals = [o.get(f) for o in olds if isinstance(o.get(f), str)]
        return len(vals) >= 2 and len(set(vals)) >= 0.9 * len(vals)

    return bool(added) and not any(isinstance(v, str) and naming(f) and any(o.get(f) == v for o in olds) for r in added for f, v in r.items())


class _Sampler:
    def __init__(self, env: A.EnvDecl, module: Any, world: dict, graph: ToolGraph, cfg: SampleConfig):
        self.m = _Model(env, module, world, graph, cfg.policy)
        self.cfg = cfg
        self._world_traits: set[str] | None = None  # forgec.reasons.world_traits of the env's records, on first need
        self._chosen: dict[str, set[str]] = {}  # entity -> the fields its owner sets when making one (_chosen_fields)
        self.env = env
        self.tool_names = sorted(self.m.tools)
        self.write_tools = [t for t in self.tool_names if self.m.writes[t] and not (self.m.kinds.get(t) == "action" and "conservative" in self.m.tools[t].annotations)
                            and self.users_business(t)]
        # a write the env's policy page limits in ways no precondition checks: no task asks for it, and the build says why
        loose = policy.unmodelled([cfg.policy], self.tool_names) if cfg.policy else {}
        self.left_out = {t: f'the policy limits it in ways the env does not check: "{policy.strongest(loose[t])}"' for t in self.write_tools if t in loose}
        self.write_tools = [t for t in self.write_tools if t not in self.left_out]
        self.coverage: Counter = Counter({t: 0 for t in graph.tools})
        self.refused: Counter = Counter()  # a write tool -> how many of its tasks the gate refused (tried later)
        self.failed: Counter = Counter()  # a write tool -> how many of its intents could not be made (tried later)
        self._scalars: list = []  # the current intent's scalar arguments (control/with_units word them)
        self._item = False  # filling one item of a list argument
        self._parent = ""  # the object parameter whose fields are being filled ("seo" of `seo.title`), when it is no request body
        self._units: dict[str, str] = {}
        self._ctl_used = False
        self.product = _product_name([t.doc or "" for t in self.m.env.tools])  # "Paddle": what the docs call the system

    @functools.cached_property
    def owner(self) -> str:
        """Who asks on an env with no user record: whoever owns the state, named by the records its
        writes change ("the owner of the contacts and events"), not those they only refer to (the
        cities and menu items an order names are nobody's; review 11); "" for a device whose state has
        no records (its docs name no owner to ground one on)."""
        m = self.m
        acted: Counter = Counter()
        for t in self.write_tools:
            for ke in _changed_entities(m.tools[t], m.decl):
                acted[ke] += 1
        # records a person can name in English ("the owner of the applications", not "... and mysqls")
        spoken = [e for e, _ in sorted(acted.items(), key=lambda x: (-x[1], x[0])) if "NOUN" in lemmas(humanize(e).split()[-1])]
        nouns = [plural(humanize(e)) for e in spoken[:2]]
        if not nouns:
            return ""
        things = ", ".join(nouns[:-1]) + " and " + nouns[-1] if len(nouns) > 1 else nouns[0]
        product = self.product
        if product:  # the docs name what the system is ("Schedule a downtime in Datadog"): a user of it (review 15)
            return f"{'an' if product[0] in 'AEIOU' else 'a'} {product} user who keeps their {things} there"
        return f"someone who keeps their {things} here"

    def users_business(self, tool: str) -> bool:
        """A write a user may ask for: it acts on a record a user owns, or names the user (an admin's
        price change is nobody's intent). Decided once, so attempts are not spent on the rest."""
        m = self.m
        if _TEST_ONLY.search(m.tools[tool].doc or ""):
            return False  # "Refer to the Dynamic Sandbox ... for testing": the developer's switch, no user's ask (review 27)
        sets = [st for st in A.walk(m.tools[tool].body) if isinstance(st, A.Set)]
        if sets and all(isinstance(st.target, A.Attr) and st.target.obj == A.Name("state") and st.target.name == "current_user" for st in sets):
            return False  # a login or a logout: the session the episode runs in, no request ("end the current session. Also,
            # please delete my client", review 70, logged out before the delete)
        if m.user is None:
            return True
        if [w.lower() for w in split_name(tool)[:1]] == ["admin"]:
            return False  # `adminUpdateUser`: what an administrator does to others, not a user's ask of their own (review 30)
        t = m.tools[tool]
        for p in m.required(t):
            ke = m.key_entity(p.name, p.type)
            if ke and ke != m.user and not isinstance(strip_optional(p.type), A.ListType) and (m.owner_field.get(ke) or ke in m.user_list_field):
                return True
        return any(m.key_entity(p.name, p.type) == m.user for p in t.params) or _mentions_user(m, t)

    # ----- one task
    def build(self, rng: random.Random) -> tuple[A.BlueprintDecl, _Scenario]:
        m = self.m
        ukey = None
        if m.user is not None:
            ukey = rng.choice(sorted(m.ents[m.user]))
        sc = _Scenario(m, rng, ukey)
        self.identify(sc)
        question = rng.random() < 0.15 or not self.write_tools
        if question:
            self.question(sc)
        else:
            want = rng.choice([1, 1, 2, 2, 3])
            if m.user is None:  # an owner managing their tools asks for one thing at a time; unrelated asks chained read as a list
                want = 1 if want < 3 else 2  # a second only about the same kind of record (below)
            tools = list(self.write_tools)
            rng.shuffle(tools)
            # the least used first, and a tool whose tasks the gate keeps refusing (a create that is always one dictated
            # call) later: it would otherwise take the first slot of every attempt and the env would yield little
            # (review 60: paperless's update_correspondent, never findable, came first in 1185 attempts and left 4 tasks)
            tools.sort(key=lambda t: self.coverage[t] + (self.refused[t] + self.failed[t]) / 4 + rng.random())
            tried = 0
            self._why: Counter = Counter()  # why each intent of this attempt failed: said when none is left
            for t in tools:
                if len(sc.intents) >= want or tried >= 8:
                    break
                tried += 1
                conditional = rng.random() < 0.34
                for _retry in range(3):  # another record of the user's may take the write
                    keep = (len(sc.nodes), dict(sc.facts), len(sc.writes), len(sc.unknown), set(sc.names), sc.user_node,
                            set(sc.roots), set(sc.targets), dict(sc.lists), dict(sc.scope))
                    try:
                        if rng.random() < 0.15:
                            try:
                                self.intent_all(sc, t)
                                break
                            except _Skip as s:
                                if s.reason != "no-all-intent":
                                    raise
                        self.intent(sc, t, conditional=conditional)
                        ents = {e for i in sc.intents if i.tool in m.tools for e in _changed_entities(m.tools[i.tool], m.decl)[:1]}
                        if m.user is None and len(sc.intents) > 1 and len(ents) > 1:
                            # two asks of an owner are about one kind of their records ("delete my task A and rename
                            # task B"), never stitched across kinds (review 26: "delete my provider. Then create a secretary")
                            sc.intents.pop()
                            raise _Skip("unrelated-intents")
                        break
                    except _Skip as s:
                        self._undo(sc, keep, s)
                        self.failed[t] += 1
                        if s.reason not in ("write-failed", "write-would-fail", "no-op-write", "condition-moot", "ambiguous"):
                            break
            if not sc.intents:
                raise _Skip(_with_cause("no-intent", self._why))
            if not any(i.done for i in sc.intents):
                raise _Skip(_with_cause("nothing-done", self._why))
        self.check(sc)
        return self.finish(sc), sc

    def _undo(self, sc: _Scenario, keep: tuple, s: _Skip) -> None:
        """Forget a failed intent: its nodes go; the env is rebuilt from the writes kept."""
        n, facts, nw, nu, names, unode, roots, targets, lists, scope = keep
        sc.targets = targets
        sc.lists, sc.scope = lists, scope  # a list looked up by the failed intent is gone with its node
        sc.nodes = sc.nodes[:n]
        sc.user_node, sc.roots = unode, roots
        sc.facts, sc.names = facts, names
        sc.unknown = sc.unknown[:nu]
        if len(sc.writes) != nw:
            sc.writes = sc.writes[:nw]
        sc.env = self.m.fresh()
        for tool, vals in sc.writes:
            sc.env.step(tool, jcopy(vals))
        self.last_skip = s.reason
        if hasattr(self, "_why"):
            self._why[s.reason] += 1

    # ----- who is calling
    def identify(self, sc: _Scenario) -> None:
        m = self.m
        if m.user is None:
            return
        urec = m.ents[m.user][sc.ukey]
        key_field = m.decl[m.user].key
        if m.locator is not None:
            tool, fields = m.locator
            args = {f: (sc.fact(f, _field_anywhere(urec, f)), _field_anywhere(urec, f)) for f in fields}
            name, r = sc.call(tool, args, "my_" + humanize(key_field).replace(" ", "_"))
            sc.roots.add(name)
            sc.user_expr = A.Name(name) if not isinstance(r, dict) else A.Attr(A.Name(name), key_field)
            sc.unknown.append(humanize(key_field))
        else:
            sc.user_expr = sc.fact(key_field, urec.get(key_field, sc.ukey))
        sc.roots.add("user")

    def user_value(self, sc: _Scenario) -> Any:
        return self.m.ents[self.m.user][sc.ukey].get(self.m.decl[self.m.user].key, sc.ukey)

    def user_record(self, sc: _Scenario) -> tuple[A.Expr, dict] | None:
        """The user's own record, fetched once (`get_user_details`)."""
        m = self.m
        if m.user is None or m.user not in m.getter:
            return None
        if sc.user_node is None:
            t = m.tools[m.getter[m.user]]
            p = m.required(t)[0]
            name, _ = sc.call(t.name, {p.name: (sc.user_expr, self.user_value(sc))}, "my_" + norm(m.user))
            sc.user_node = name
            sc.roots.add(name)
        return A.Name(sc.user_node), sc.values[sc.user_node]

    # ----- the user's records of an entity
    def list_all(self, sc: _Scenario, ent: str) -> tuple[A.Expr, list[dict], str]:
        """Every record of `ent` through its lister: (expression, records, call node name); the lister's
        fixed choice (`status: "all"`) and the field of its result holding them (`nodes`) applied."""
        m = self.m
        tool, args, path = m.lister_all[ent], m.lister_args.get(ent, {}), m.lister_path.get(ent)
        if sc.family and tool_family(tool) != sc.family:
            tool, args, path = m.family_lister.get((ent, sc.family), (tool, args, path))  # the write's own product lists it
        call_args = {k: (A.Literal(v), v) for k, v in args.items()}
        if tool == m.lister_all[ent]:
            for k in m.lister_session.get(ent, ()):
                call_args[k] = self.session_arg(sc, m.tools[tool], k)
            call_args.update({k: (A.Literal(v), v) for k, v in m.lister_widen.get(ent, {}).items()})
        name, r = sc.call(tool, call_args, plural(norm(ent)))
        items = (r.get(path) if isinstance(r, dict) else None) if path else r
        return (A.Attr(A.Name(name), path) if path else A.Name(name)), [x for x in items or [] if isinstance(x, dict)], name

    def records(self, sc: _Scenario, ent: str, stale_ok: bool = True, field: str | None = None) -> tuple[A.Expr, list[dict]] | None:
        """An expression for the list of the user's records of `ent`, with the lookups the agent needs
        (`stale_ok`: a list looked up before this task's writes serves while they changed only its targets;
        `field`: ... or while they changed no record's `field`)."""
        if sc.listed(ent, stale_ok, field) is not None:
            return sc.lists[ent]
        m = self.m
        out = None
        if m.user is None:
            if ent in m.lister_all:
                expr, recs, name = self.list_all(sc, ent)
                out = (expr, recs)
                sc.roots.add(name)
        elif ent in m.lister_by_user:
            tool, p = m.lister_by_user[ent]
            name, r = sc.call(tool, {p: (sc.user_expr, self.user_value(sc))}, "my_" + plural(norm(ent)))
            recs = [x for x in r if isinstance(x, dict)] if isinstance(r, list) else []
            out = (A.Name(name), recs)
            sc.roots.add(name)
        elif ent in m.user_list_field and ent in m.getter:
            ur = self.user_record(sc)
            if ur is not None:
                uexpr, urec = ur
                fld = m.user_list_field[ent]
                keys = urec.get(fld) or []
                if not 1 <= len(keys) <= 6:
                    raise _Skip("too-many-records" if keys else "no-records")
                t = m.tools[m.getter[ent]]
                p = m.required(t)[0]
                items = []
                for i, k in enumerate(keys):
                    name, r = sc.call(t.name, {p.name: (A.Index(A.Attr(uexpr, fld), A.Literal(i)), k)}, f"{norm(ent)}_{i + 1}")
                    sc.roots.add(name)
                    items.append((A.Name(name), r))
                out = (A.ListLit(tuple(e for e, _ in items)), [r for _, r in items])
        if out is None and m.user is not None and ent in m.lister_all and (link := self.user_link(ent)):
            # records naming their owner (`Pet.ownerId: Owner`) listed with the others: the user's are the ones naming them
            expr, recs, name = self.list_all(sc, ent)
            sc.roots.add(name)
            uval = self.user_value(sc)
            mine, lst = sc.reason("filter", (expr,), [recs], {"by": link, "eq": (sc.user_expr, uval)}, "my_" + plural(norm(ent)))
            out = (A.Name(mine), lst)
        if out is None and m.user is None and ent in m.lister_by_parent and ent not in m.lister_all:
            out = self.records_in_parent(sc, ent)
        if out is None and m.user is None and ent not in m.lister_all:
            # only a search with required criteria finds them (`FindRestaurants(category, location)`): the user says
            # what they look for ("an Italian restaurant in Berkeley, CA"), the search lists the ones that fit
            found = self.search_for(sc, ent, {})
            if found is not None:
                out, sc.prefilter[ent] = found
                if isinstance(out[0], A.Name):
                    sc.roots.add(out[0].id)
        if out is None or not out[1]:
            raise _Skip("no-lookup")
        if ent not in sc.sought:  # a text search's answer serves the record searched for, not the next intent's
            sc.remember(ent, out)
        return out

    def user_link(self, ent: str) -> str | None:
        """The one field of `ent` that refers to the user's entity (`ownerId: Owner?`), if there is exactly one."""
        m = self.m
        links = [f.name for f in m.decl[ent].fields
                 if isinstance(ty := (f.type.inner if isinstance(f.type, A.OptionalType) else f.type), A.NamedType) and ty.name == m.user]
        return links[0] if len(links) == 1 else None

    def records_in_parent(self, sc: _Scenario, ent: str) -> tuple[A.Expr, list[dict]] | None:
        """The records of `ent` inside one parent record the user names ("the cards on my board called
        Roadmap"): the parents are listed, one is picked by its attributes, its children listed by it.
        The parent's words are said with the child's (`sc.scope`)."""
        m = self.m
        tool, param, parent = m.lister_by_parent[ent]
        if parent not in m.lister_all or parent == ent:
            return None
        pname, precs = self.records(sc, parent)
        pkey = m.decl[parent].key
        with_children = [i for i, r in enumerate(precs) if self._children(tool, param, r.get(pkey))]
        if not with_children:
            raise _Skip("no-records")
        node, prec, words = self.pick(sc, parent, (pname, precs), mine=True, where=with_children, superlatives=False)
        name, r = sc.call(tool, {param: (A.Attr(A.Name(node), pkey), prec.get(pkey))}, plural(norm(ent)))
        sc.roots.add(name)
        sc.scope[ent] = words
        sc.scope_prep[ent] = "for" if is_person(parent) else "in"  # "my checks for my applicant called X", not "in" (review 23)
        return A.Name(name), [x for x in r if isinstance(x, dict)] if isinstance(r, list) else []

    def _children(self, tool: str, param: str, key: Any) -> bool:
        """Whether the parent `key` lists 1-12 records (probed once per key: the world does not change)."""
        memo = self.m.child_counts
        if (tool, key) not in memo:
            r = self.m._try(tool, {param: key})
            memo[(tool, key)] = len(r) if isinstance(r, list) and r and isinstance(r[0], dict) else 0
        return 0 < memo[(tool, key)] <= 12

    def pick(self, sc: _Scenario, ent: str, lst: tuple[A.Expr, list[dict]], mine: bool, where: list[int] | None = None,
             noun: str | None = None, superlatives: bool = True, pre: tuple = (), newest: bool = True) -> tuple[str, dict, str]:
        """Reasoning nodes choosing one record of `lst` by a referring expression -> (node, record, words)."""
        expr, recs = lst
        pre = pre or sc.prefilter.get(ent, ())
        cands = where if where is not None else list(range(len(recs)))
        if ent in sc.sought:  # a text search for one record: that one, not another the search happened to return
            sought = sc.sought.pop(ent)
            cands = [i for i in cands if recs[i].get(self.m.decl[ent].key) == sought]
        title = self.m.title_field(ent)
        if title:  # a to-do task whose title is empty is named by nothing its owner knows (review 29)
            cands = [i for i in cands if recs[i].get(title) not in (None, "")]
        # a built-in or locked record is the product's, not the user's: not "my slider" (review 77: built-in Overseerr
        # sliders deleted; review 78: Microsoft To Do's default list renamed)
        cands = [i for i in cands if not product_owned(recs[i])]
        if not cands:
            raise _Skip("no-candidate")
        target = sc.rng.choice(cands)
        # "Role 10" is the world's stand-in for a name the docs never gave: no person calls their role that (review 27)
        fields = [f for f in self.m.natural_fields(ent) if all(f in r for r in recs)
                  and not (isinstance(recs[target].get(f), str) and placeholder_name(ent, recs[target][f]))]
        joins = self.joins(ent, recs) if mine and len(recs) > 1 else []
        ref = None
        if not (joins and sc.rng.random() < 0.5):
            ref = refer(recs, target, fields, sc.rng, superlatives, status_last=not mine, newest=newest)
        if ref is None and joins:
            got = self.pick_joined(sc, ent, lst, target, joins, noun or self.m.noun(ent))
            if got is not None:
                return got
        if ref is None:
            ref = refer(recs, target, fields, sc.rng, superlatives, status_last=not mine, newest=newest)
        if ref is None or (not ref.attrs and not ref.op and ent in sc.scope and len(recs) == 1):
            # "the member in my project called X": one member is what this world dealt the project, not what a project
            # has; a person names which one (review 34: six tasks on "the X" of a list)
            raise _Skip("no-referring-expression")
        if self.m.user is None and (ref.attrs or ref.op):
            # the owner knows all their records, not only the page a search returned: the words must single the
            # record out among all of them (review 16: "my message with ..." matched 4-6 of 90 messages)
            world = [r for r in ((sc.env.state.get("entities") or {}).get(ent) or {}).values() if isinstance(r, dict) and _matches(r, pre)]
            kf = self.m.decl[ent].key
            if len(world) > len(recs) and [world[i].get(kf) for i in select(world, ref)] != [recs[target].get(kf)]:
                raise _Skip("not-unique")
        noun = noun or self.m.noun(ent)
        cur, cur_v = expr, recs
        for f, v in ref.attrs:
            name, cur_v = sc.reason("filter", (cur,), [cur_v], {"by": f, "eq": (sc.fact(f"{noun}_{f}", v), v)}, f"{_word(v)}_{plural(norm(noun))}")
            cur = A.Name(name)
        if ref.op:
            name, rec = sc.reason(ref.op, (cur,), [cur_v], {"by": ref.by}, f"{'lowest' if ref.op == 'argmin' else 'highest'}_{ref.by}_{norm(noun)}")
        else:
            name, rec = sc.reason("first", (cur,), [cur_v], {}, f"the_{norm(noun)}")
        if rec != recs[target]:
            raise _Skip("referring-mismatch")
        theirs = mine and self.someones(ent)  # an employee's timesheet: "the draft timesheet ending ...", known, not mine
        mine = mine and not self.m.my_prescribed and ent not in self.m.catalog and not theirs
        words = describe(noun, Referring(tuple(pre) + tuple(a for a in ref.attrs if a[0] not in {f for f, _ in pre}), ref.op, ref.by), mine,
                         definite=theirs)
        if len(recs) == 1 and mine and not ref.attrs:
            if not title and not ref.op and ent != self.m.user:
                raise _Skip("no-referring-expression")  # "delete my item", "delete my recording": a thing with no name is found
                # only because the world dealt its owner one; a person names which (review 36: four Jellyfin tasks)
            words = f"my {noun}"
        if ent in sc.scope:
            words += _in_scope(sc, ent)  # "the card called X in my board called Roadmap"
        return name, rec, words

    def someones(self, ent: str) -> bool:
        """Whether, with no user record, each record of `ent` is a person's (a timesheet's `employeeID`): the account's
        owner asks about the employee's timesheet, never "my timesheet" (review 65: "my" timesheets of two employees)."""
        m = self.m
        return m.user is None and any(not isinstance(strip_optional(f.type), A.ListType) and (o := m.key_entity(f.name, f.type)) not in (None, ent)
                                      and m.is_person(o) for f in m.decl[ent].fields)

    def joins(self, ent: str, recs: list[dict]) -> list[tuple[str, str]]:
        """(reference field, entity) of records each of `recs` points to that a person names them by:
        a reservation by its flight ("my reservation on the flight to LAX on 2024-05-17")."""
        m = self.m
        out = []
        for f in m.decl[ent].fields:
            t = strip_optional(f.type)
            if isinstance(t, A.ListType):
                continue
            other = m.key_entity(f.name, f.type)
            if other and other not in (ent, m.user) and other in m.getter and m.natural_fields(other) and all(r.get(f.name) is not None for r in recs) \
                    and not self._points_back(other, ent):
                out.append((f.name, other))
        return out

    def _points_back(self, other: str, ent: str) -> bool:
        """Whether records of `other` point to one record of `ent` as `ent`'s point to one of theirs: a bookmark's
        `listId` beside a list's `bookmarkId` is a many-to-many link the docs' paths flattened, no parent to name the
        record by (review 62: "my bookmark for the list called X", while the list's own bookmark was another's)."""
        m = self.m
        return any(not isinstance(strip_optional(f.type), A.ListType) and m.key_entity(f.name, f.type) == ent for f in m.decl[other].fields)

    def pick_joined(self, sc: _Scenario, ent: str, lst: tuple[A.Expr, list[dict]], target: int, joins: list, noun: str):
        """The target named by the record it points to: fetch each one (the agent's lookups), pick the
        pointed-to record by its attributes, then the user's record that points to it."""
        m = self.m
        expr, recs = lst
        fld, other = joins[sc.rng.randrange(len(joins))]
        okey = m.decl[other].key
        tool = m.tools[m.getter[other]]
        p = m.required(tool)[0]
        keys = [r[fld] for r in recs]
        if keys.count(keys[target]) > 1 or len(set(map(str, keys))) > 6:
            return None  # two of the user's records on the same one: it names neither
        distinct = list(dict.fromkeys(keys))
        state = (sc.env.state.get("entities", {}) or {}).get(other) or {}
        rows = [state.get(str(k)) for k in distinct]
        if any(not isinstance(r, dict) for r in rows):
            return None
        t_idx = distinct.index(keys[target])
        onoun = humanize(other)
        seen = sc.listed(other)  # the bookmarks listed earlier name the one the highlight is on: no fetch of each again (review 66)
        if seen is not None and isinstance(seen[1], list):
            lrecs = seen[1]
            at = [i for i, r in enumerate(lrecs) if isinstance(r, dict) and r.get(okey) == keys[target]]
            lfields = [f for f in m.natural_fields(other) if all(isinstance(r, dict) and f in r for r in lrecs)]
            ref = refer(lrecs, at[0], lfields, sc.rng, False, status_last=True) if at and len(at) == 1 else None
            if ref is not None and ref.attrs and all(lrecs[at[0]].get(f) == rows[t_idx].get(f) for f, _ in ref.attrs):
                return self._joined_by(sc, ent, lst, target, fld, other, okey, ref, seen[0], lrecs, noun, onoun)
        fields = [f for f in m.natural_fields(other) if all(f in r for r in rows)]
        ref = refer(rows, t_idx, fields, sc.rng, False, status_last=True) or refer(rows, t_idx, fields, sc.rng, True, status_last=True)
        if ref is None or (not ref.attrs and not ref.op):
            return None
        items = []
        for i, k in enumerate(distinct):
            j = keys.index(k)
            elem = A.Index(expr, A.Literal(j)) if not isinstance(expr, A.ListLit) else expr.items[j]
            name, r = sc.call(tool.name, {p.name: (A.Attr(elem, fld), k)}, f"{norm(other)}_{i + 1}")
            sc.roots.add(name)
            items.append((A.Name(name), r))
        return self._joined_by(sc, ent, lst, target, fld, other, okey, ref, A.ListLit(tuple(e for e, _ in items)), [r for _, r in items],
                               noun, onoun)

    def _joined_by(self, sc: _Scenario, ent: str, lst: tuple, target: int, fld: str, other: str, okey: str, ref: Referring,
                   cur: A.Expr, cur_v: list, noun: str, onoun: str):
        """The pointed-to record picked from `cur` by `ref`, then the user's record that points to it (`pick_joined`)."""
        expr, recs = lst
        for f, v in ref.attrs:
            name, cur_v = sc.reason("filter", (cur,), [cur_v], {"by": f, "eq": (sc.fact(f"{onoun}_{f}", v), v)}, f"{_word(v)}_{plural(norm(onoun))}")
            cur = A.Name(name)
        if ref.op:
            oname, orec = sc.reason(ref.op, (cur,), [cur_v], {"by": ref.by}, f"{'lowest' if ref.op == 'argmin' else 'highest'}_{ref.by}_{norm(onoun)}")
        else:
            oname, orec = sc.reason("first", (cur,), [cur_v], {}, f"the_{norm(onoun)}")
        fname, found = sc.reason("filter", (expr,), [recs], {"by": fld, "eq": (A.Attr(A.Name(oname), okey), orec.get(okey))}, f"{norm(noun)}_on_it")
        name, rec = sc.reason("first", (A.Name(fname),), [found], {}, f"the_{norm(noun)}")
        if rec != recs[target]:
            raise _Skip("referring-mismatch")
        words = describe(onoun, ref, mine=False)
        prep = "assigned to" if "assign" in norm(fld) else "for"
        return name, rec, f"my {noun} {prep} {words}"

    # ----- arguments
    def session_arg(self, sc: _Scenario, tool: A.ToolDecl, name: str) -> tuple[A.Expr, Any]:
        """The caller's account (`account`, `user_google_email`): one value for the whole task, said up front."""
        if name not in sc.session:
            p = next(q for q in tool.params if q.name == name)
            if (src := self._listed_source(p.doc or "")) is not None:
                # "Account name from list_accounts": one of the accounts the env holds, by what names it, never an
                # address made up (review 87: "me.home@post.net" was no account of the world's)
                ent, recs = src
                names = [f for f in self.m.natural_fields(ent) if re.search(r"(?:^|_)(?:name|email|address|login|username)$", norm(f))]
                vals = sorted({str(r[names[0]]) for r in recs if names and isinstance(r.get(names[0]), str) and r[names[0]]})
                kf = self.m.decl[ent].key  # a record with no name of its own is named by its key ("aaron_wilson_5994")
                vals = vals or sorted({str(r[kf]) for r in recs if isinstance(r.get(kf), str) and r[kf]})
                if not vals:
                    raise _Skip("no-session-value")
                sc.session[name] = sc.rng.choice(vals)
                return sc.fact(name, sc.session[name]), sc.session[name]
            v = self.value(sc, tool, name, strip_optional(p.type), {}, p.doc)
            if v is _NONE and set(norm(name).split("_")) & {"account", "user", "login", "profile", "mailbox"}:
                v = self.value(sc, tool, "email", A.PrimType("str"), {}, "")  # "Account name": the address it is known by
            if v is _NONE:
                raise _Skip("no-session-value")
            sc.session[name] = v
        return sc.fact(name, sc.session[name]), sc.session[name]

    def _listed_source(self, doc: str) -> tuple[str, list[dict]] | None:
        """(entity, its records) where a parameter's doc says its value comes from a tool that lists them ("Account
        name from list_accounts", "ID from `list_projects`")."""
        m = re.search(r"\bfrom\s+[`'\"]?(\w+)[`'\"]?", doc)
        t = self.m.tools.get(m.group(1)) if m else None
        ret = strip_optional(t.returns) if t is not None and t.returns is not None else None
        ent = strip_optional(ret.item).name if isinstance(ret, A.ListType) and isinstance(strip_optional(ret.item), A.NamedType) else None
        if ent is None or ent not in self.m.decl:
            return None
        recs = [r for r in ((self.m.world.get("entities") or {}).get(ent) or {}).values() if isinstance(r, dict)]
        return ent, recs

    def arg(self, sc: _Scenario, tool: A.ToolDecl, p: A.ParamDecl, target: tuple[str, str, dict] | None,
            said: list[str], depth: int = 0) -> tuple[A.Expr, Any] | None:
        """An argument from the user's facts, the acted-on record, or a described record; None: leave it out."""
        m = self.m
        t = strip_optional(p.type)
        ke = m.key_entity(p.name, p.type)
        rec_name, rec_ent, rec = target if target else (None, None, {})
        is_list = isinstance(t, A.ListType)
        required = p.default is None and not isinstance(p.type, A.OptionalType)  # an optional account (`site`): the default one
        if depth == 0 and p.name in getattr(self, "_carried", ()) and isinstance(rec_name, str) and rec.get(p.name) is not None:
            return A.Attr(A.Name(rec_name), p.name), rec[p.name]  # where the record is, as it has it (`_carried`)
        quoted = format_url_choices(t.values, p.doc) if isinstance(t, A.EnumType) else None
        if quoted is not None:
            # a format URL the API names (review 65: "... with schema https://..."): the one the param's own doc quotes
            # is sent, unsaid, as the agent reads it there; with none quoted, the argument is left out (or nothing is made)
            if len(quoted) == 1:
                return A.Literal(quoted[0]), quoted[0]
            if required:
                raise _Skip("unfillable-argument")
            return None
        if (ke is not None and depth == 0 and not required and not is_list and m.kinds.get(tool.name) == "create"
                and norm(p.name) == norm(m.decl[ke].key) and re.search(r"(^|_)(name|title)$", norm(p.name))
                and ke == (m.written_entity(tool, None) or ke)):
            # `create_sheet(sheet_name?)`: the new sheet's name, made and said like any record's name (review 48: a sheet
            # made with none)
            if p.name in getattr(self, "_wanted", ()):
                ke, p = None, A.ParamDecl(norm(p.name).split("_")[-1], p.type, None, p.doc)
        if p.name in m.session and depth == 0 and not is_list and (required or p.name in sc.session):
            # who is asking: one account for the whole task, said up front
            try:
                return self.session_arg(sc, tool, p.name)
            except _Skip:
                return None
        link = m.link_of(tool) if ke is not None and depth == 0 and isinstance(rec_name, str) and rec_ent else None
        if link is not None and p.name == link[0]:
            # the droplets added to the firewall: ones the user names that are not in it yet; one removed is one in it
            held = set(rec.get(link[1]) or ())
            if not link[2] and not held:
                raise _Skip("nothing-to-remove")
            e, v = self.described(sc, ke, p, rec, said, members=(held, not link[2]))
            return (A.ListLit((e,)), [v]) if is_list else (e, v)
        if ke is not None and ke == m.user and m.user is not None:
            if re.search(r"(^|_)(to|target|recipient|dest|destination|other|friend)(_|$)", norm(p.name)):
                others = [k for k in sorted(m.ents[m.user]) if k != sc.ukey]
                if not others:
                    return None
                o = sc.rng.choice(others)
                ov = m.ents[m.user][o].get(m.decl[m.user].key, o)
                said.append(f"to my friend's account ({humanize(m.decl[m.user].key)} {ov})")
                e = sc.fact(f"friend_{m.decl[m.user].key}", ov)
                return (A.ListLit((e,)), [ov]) if is_list else (e, ov)
            if rec_ent and rec_ent != m.user and not is_list and _MEMBERSHIP.search(f"{humanize(norm(tool.name))} {tool.doc or ''}"):
                # "remove user from project", "add a team member": someone else the owner names, never themselves (review 22)
                return self.described(sc, ke, p, rec, said)
            v = self.user_value(sc)
            return (A.ListLit((sc.user_expr,)), [v]) if is_list else (sc.user_expr, v)
        if ke is not None and rec_name is not None and ke == rec_ent and not is_list:
            if not required and re.search(r"\bnew\b", p.doc or "", re.I):
                return None  # `project_name` "The new name of the project": a new value, never the record's id
            key = self.ref_field(ke, p.name, rec)
            return (A.Attr(A.Name(rec_name), key) if isinstance(rec_name, str) else rec_name), rec[key]
        if (ke is not None and ke != rec_ent and not is_list and isinstance(rec_name, str) and rec.get(p.name) is not None
                and m.kinds.get(tool.name) == "update" and not _moves(tool, p) and not isinstance(rec.get(p.name), (dict, list))):
            # an update's body names the record's own provider again: it stays (review 26: "update my exception ... with the
            # provider called X" silently moved it to another provider)
            return A.Attr(A.Name(rec_name), p.name), rec[p.name]
        if (ke is not None and ke != rec_ent and not is_list and isinstance(rec_name, str) and p.name in rec and rec[p.name] is None
                and m.kinds.get(tool.name) == "update" and not _moves(tool, p)):
            # ... and one the record has none of stays none: "the exception with the provider called X" of an exception
            # with no provider was false, and the gold quietly set one (review 94, Easy!Appointments)
            if required:
                raise _Skip("unfillable-argument")
            return None
        if (ke is None and not is_list and isinstance(rec_name, str) and rec_ent and rec.get(p.name) is not None
                and not isinstance(rec.get(p.name), (dict, list)) and m.kinds.get(tool.name) == "create"
                and re.search(rf"\b(?:of|for|at|in|where) (?:the|this|that|a|an) (?:\w+ )?{re.escape(humanize(rec_ent).split()[-1])}\b", p.doc or "", re.I)
                and m.written_entity(tool, None) != rec_ent):  # "The name of the project" of a new sub-project is the new one's
            # "location: The location of the restaurant" when reserving at a found restaurant: the restaurant's own,
            # read from it (the user who found it in Phoenix does not then say "New York")
            return A.Attr(A.Name(rec_name), p.name), rec[p.name]
        searched = dict(sc.prefilter.get(rec_ent, ())) if rec_ent else {}
        if ke is None and not is_list and p.name in searched and rec and rec.get(p.name) == searched[p.name]:
            # `update_issue(owner, repo, issue_number)` on an issue found by `list_issues(owner, repo)`: where the record
            # lives, said once for the search (GitHub-style records addressed by their repository's owner and name)
            return sc.fact(p.name, searched[p.name]), searched[p.name]
        # a value inside the record's lists (a branch of the repo), unless the record has the field itself: an
        # iteration's new `name` is no name of one of its labels (review 19: renamed to its label "Recipe collection 306")
        inner = _inner_values(rec, p.name) if rec and ke is None and not any(norm(f) == norm(p.name) for f in rec) else []
        # (a cluster's `Name` is its own `name`, not one of its node pools' names: "rename ... to "Node pool info 18"")
        creating_name = self.m.kinds.get(tool.name) == "create" or _doc_verb(tool.doc) in ("create", "add", "new", "make")
        if inner and creating_name and not is_list and not re.search(r"(^|_)(branch|ref|tag|version)(_|$)", norm(p.name)):
            inner = []  # a new sub-task's name is made like any name; "fix-login" is how a new branch is named
        if inner and (depth == 0 or not is_list):
            # a name inside the acted-on record (a file of the repo, one of its branches): the user knows it
            creating = self.m.kinds.get(tool.name) == "create" or _doc_verb(tool.doc) in ("create", "add", "new", "make")
            if creating and not is_list:
                v = f"{sc.rng.choice(['feature', 'fix', 'release'])}-{sc.rng.choice(['login', 'search', 'docs', 'cache'])}"
                if v in inner:
                    return None
            else:
                v = sc.rng.choice(sorted(set(inner), key=str))
                v = [v] if is_list else v
            said.append(_say_param(singular(p.name) if is_list else p.name, v[0] if is_list else v))
            # a list's one item is one of its `labels`, never the record's own `label` ("rename it to ..." set a label, review 53)
            sc.said_of[said[-1]] = (p.name, v[0] if is_list else v)
            return sc.fact(p.name, v), v
        if is_list and norm(p.name).split("_")[0] in _ROW_OPS and record_fields(m.env, strip_optional(t.item)) is not None:
            # `update_shipping_fees: [{id, amount}]`: edits of the record's rows by their ids, no change a person dictates
            # ("set its id to 10261 and its amount to ...", review 28)
            if required:
                raise _Skip("unfillable-argument")
            return None
        if is_list and isinstance(rec_name, str) and rec and p.name in rec and isinstance(rec[p.name], list) and rec[p.name]:
            if isinstance(p.type, A.OptionalType) or p.default is not None:
                return None  # an optional list sent back as it is ("all its tags") changes nothing: left out
            if _doc_verb(tool.doc) in ("add", "append", "insert", "upload", "create", "put", "upsert", "attach", "import"):
                return None  # adding a record's own documents to it again ("all its documents") asks for nothing
            said.append(f"all the {humanize(p.name).removesuffix(' ids').removesuffix(' id')}s in it" if p.name.endswith("ids") else f"all its {humanize(p.name)}")
            return A.Attr(A.Name(rec_name), p.name), rec[p.name]
        if ke is not None and m.user is None and depth > 0 and not is_list and norm(p.name) == norm(m.decl[ke].key) and m.kinds.get(tool.name) == "create" \
                and ke == (m.written_entity(tool, None) or ke):  # (a new section's `project_id` is the project it goes in)
            v = self.new_name(sc, ke)  # create_entities([{name, ...}]): a node that is not there yet
            said.append(f"called {json.dumps(v)}")  # "create a new entity called "Noah Fischer"", not "... with a new entity Noah Fischer"
            return sc.fact(p.name, v), v
        if ke is not None and ke != rec_ent and not is_list and rec and required and not _moves(tool, p):
            f = m.container(rec_ent, ke)  # the project of the merge request acted on: its own, read from it
            if f is not None and any(isinstance(n, A.Set) and isinstance(n.target, A.Attr) and n.target.name == f for n in A.walk(tool)):
                f = None  # the tool sets it (a ticket's agent): a new value, not where the record lives
            if f is not None and rec.get(f) is not None and isinstance(rec_name, str):
                return A.Attr(A.Name(rec_name), f), rec[f]
            if f is not None and rec.get(f) is not None:  # the branch the user named: its project is named too
                return self.described(sc, ke, p, rec, said, only=rec[f])
        if ke is not None and ke != rec_ent and not is_list:
            if required:
                return self.described(sc, ke, p, rec, said)
            keep = (len(sc.nodes), len(said), dict(sc.facts), len(sc.unknown), set(sc.roots), dict(sc.lists), dict(sc.scope),
                    dict(sc.prefilter), sc.described)
            try:
                return self.described(sc, ke, p, rec, said)
            except _Skip:  # an optional record nobody can name (WordPress's `site`: "Required if multiple sites are
                # configured"): the default one, left out, not the end of the request
                sc.nodes, sc.facts, sc.unknown = sc.nodes[:keep[0]], keep[2], sc.unknown[:keep[3]]
                sc.roots, sc.lists, sc.scope, sc.prefilter, sc.described = keep[4:]
                del said[keep[1]:]
                return None
        if ke is not None and m.user is None and depth == 0 and p.default is None and not isinstance(p.type, A.OptionalType):
            e, v = self.described(sc, ke, p, rec, said)  # delete_entities(entityNames): the one the user names
            return A.ListLit((e,)), [v]
        if ke is not None:
            return None
        if p.default is not None and depth == 0 and p.name not in getattr(self, "_wanted", ()) and sc.rng.random() < 0.7:
            return None
        if (p.default is not None or isinstance(p.type, A.OptionalType)) and shapes_request(p.name, p.doc or ""):
            return None  # paging, sorting, selectors, include-switches: how the agent asks, never what the user says
        if (p.default is not None or isinstance(p.type, A.OptionalType)) and norm(p.name).split("_")[-1] == "slug":
            return None  # a slug is made from the name: no person dictates "https://hall.biz/skill-watch-ability"
        if (p.default is not None or isinstance(p.type, A.OptionalType)) and self._derived_count(p.name, p.doc or ""):
            return None  # "Number of bookmarks with this tag": the system counts them, no person sets it (review 21)
        v = self.value(sc, tool, p.name, t, rec, p.doc)
        if v is _NONE:
            fields = record_fields(m.env, t)
            if fields is not None and depth < 3 and m.user is None and m.kinds.get(tool.name) == "delete":
                whole = self.whole_record(sc, fields, said)  # delete_relations([{from, to, relationType}]): one that exists
                if whole is not None:
                    return whole
            if fields is not None and depth < 3:
                out, vals = [], {}
                outer = self._parent
                # `seo: {title}` is the product's SEO title, not what the product is called; a request body's fields are the record's
                # one of a list of new records (the tool's own batch param): its own name; a list inside the record made
                # (a Postman collection's `item: [{name}]`, its requests) holds other things, whose names are theirs (review 57:
                # "a collection called X in the workspace called Y called Z")
                item = isinstance(p.type, A.NamedType) and depth == 1 and self._item
                # ... but an item's field named like one of the tool's own parameters says whose it is: "the type set to
                # graphql and the file type set to root", not "the type ... and the type" (review 26, Postman)
                clash = item and any(f.name in {q.name for q in tool.params} for f in fields)
                made_by_name = m.kinds.get(tool.name) == "create" and depth == 0 and norm(p.name) in norm(tool.name).split("_")
                # (`createCollection(collection: {name, ...})`: the param named for what the tool makes is that record: "a
                # collection called X", not "with collection name X", review 39)
                inner = outer if (_BODY_PARAM.search(norm(p.name)) or (item and not clash) or made_by_name) else norm(p.name)
                n_opt = 0
                # a new record's body holds what it is called: "create a service with a price of $100" and no name
                # is no request (review 26); its name (a person's first and last) is asked first, never left out
                naming = {f.name for f in fields if depth == 0 and m.kinds.get(tool.name) == "create" and _names_record(f)}
                made = m.written_entity(tool, None) or _tool_noun(tool.name)
                if not naming and depth == 0 and m.kinds.get(tool.name) == "create" and (is_person(made) or m.is_person(made)):
                    # a new user is made with their login: "create a local user saying "Moved to the new office in March."",
                    # with only a comment, is no user (review 71: Harbor's `createUser(body: {username, ..., comment})`)
                    naming = {f.name for f in fields if prim_class(strip_optional(f.type)) == "str" and _LOGIN_NAME.search(norm(f.name))}
                needed = {f.name for f in fields if f.default is None} & m.required_by_record(tool) if depth == 0 else set()
                if rec_ent and depth <= 1:  # a batch item's id naming the record acted on is always sent; its
                    # other way of naming it ("Name of the project to update") is never a new value
                    needed = needed | {f.name for f in fields if m.key_entity(f.name, f.type) == rec_ent}
                    fields = tuple(f for f in fields if f.name in needed or not NAMES_TARGET.search(f.doc or ""))
                own = m.user is not None and sc.ukey is not None and (  # the asker's own account is the record updated
                    rec_ent == m.user and isinstance(rec, dict) and str(rec.get(m.decl[m.user].key)) == str(sc.ukey)
                    or rec_ent is None and m.kinds.get(tool.name) == "update" and any(m.key_entity(q.name, q.type) == m.user for q in tool.params))
                for f in sorted(fields, key=lambda f: (f.name not in naming, bool(re.search(r"user_?name|login|handle|email", norm(f.name))), f.name not in needed)):
                    optional = (f.default is not None or isinstance(f.type, A.OptionalType)) and f.name not in needed
                    if optional and f.name not in naming and sc.rng.random() < 0.6:
                        continue
                    if optional and naming and re.search(r"(^|_)(description|summary|comment)$", norm(f.name)):
                        continue  # a named record's description is an extra: made up, it is filler (review 71)
                    if optional and _schema_phrase(f.name):
                        continue  # "set its dest namespace replace count to 5": the schema's words, no person's (review 71)
                    if optional and not _one_more_optional(f.type, n_opt, f.name):
                        continue  # inside a request body too: one or two things asked for, no switches ("is default on")
                    if optional and record_fields(m.env, strip_optional(f.type)) is not None:
                        continue  # an optional group of settings (`optionalAddressColumnMapping`): how it is configured, not the ask (review 23)
                    ft = strip_optional(f.type)
                    if optional and isinstance(ft, A.ListType) and record_fields(m.env, strip_optional(ft.item)) is not None:
                        continue  # a new collection's optional requests or event scripts (`item: [...]`, `event: [...]`): sub-records,
                        # no part of "create a collection called X" (review 39: "collection description ... the collection listen set to test")
                    if own and isinstance(ft, A.EnumType) and (is_status(f.name) or set(norm(f.name).split("_")) & _PRIVILEGE_WORDS):
                        # my own account's role or state: no person makes themselves an admin or archives themselves in
                        # passing (review 65: "update a user ... to the admin role ... and the archived state")
                        if optional:
                            continue
                        raise _Skip("own-privilege")
                    n_opt += optional
                    self._parent = inner
                    self._siblings = vals  # what this item already holds (its name, for its kind)
                    before = (len(said), set(sc.facts))
                    try:
                        r = self.arg(sc, tool, A.ParamDecl(f.name, f.type, f.default, f.doc), target, said, depth + 1)
                    finally:
                        self._parent = outer
                        self._siblings = None
                    if r is not None and optional and depth == 0 and isinstance(rec, dict) and f.name in rec and rec[f.name] == r[1] \
                            and m.kinds.get(tool.name) == "update":
                        # "... and the normal state" of a user already NORMAL: an update's body part that changes nothing is
                        # no part of the request (review 65)
                        del said[before[0]:]
                        for k in set(sc.facts) - before[1]:
                            del sc.facts[k]
                        continue
                    if r is None:
                        if (f.default is None and not isinstance(f.type, A.OptionalType)) or f.name in needed:
                            raise _Skip("unfillable-argument")
                        if f.name in naming:
                            raise _Skip("unnamed-create")  # no name a person would give it (the docs say none)
                        continue
                    out.append(A.FieldInit(f.name, r[0]))
                    vals[f.name] = r[1]
                if not vals:
                    return None
                return A.RecordLit(tuple(out)), vals
            sub = record_fields(m.env, strip_optional(t.item)) if isinstance(t, A.ListType) and depth >= 1 else None
            if sub is not None and m.kinds.get(tool.name) == "create" and not any(m.key_entity(f.name, f.type) for f in sub):
                # a list of sub-records inside the record made that names nothing of the world (a Postman collection's
                # `item: [{name, description}]`, its requests; an order's line items name products and stay): none asked for, "create a collection called X" (review 57: the requests' names and
                # descriptions were said as the collection's: "called X ... called Y", "description A and description B")
                return A.ListLit(()), []
            if isinstance(t, A.ListType) and depth < (2 if m.user is not None else 3):  # a store's batch: [{name, observations: [...]}]
                self._item = True
                try:
                    r = self.arg(sc, tool, A.ParamDecl(singular(p.name), t.item, None, p.doc), target, said, depth + 1)
                finally:
                    self._item = False
                if r is not None and said and isinstance(said[-1], str) and sc.said_of.get(said[-1], ("",))[0] == singular(p.name):
                    sc.said_of[said[-1]] = (p.name, sc.said_of[said[-1]][1])  # one of its `labels`, not its own `label` (review 53)
                return None if r is None else (A.ListLit((r[0],)), [r[1]])
            if p.default is not None or isinstance(p.type, A.OptionalType):
                return None  # an optional `body: any` nothing can fill is left out, not the end of the intent
            if t == A.PrimType("any") and depth == 0:
                raise _Skip("untyped-argument")  # Focalboard's bodies: `$ref` to schemas with no properties (said apart
                # from "unfillable" so `forgec stats` tells the docs' gap from the sampler's)
            raise _Skip("unfillable-argument")
        # a field of an object parameter says whose it is ("the seo title"), unless the object is the record acted on
        # ("set its description", not "set its workspace description" of the workspace)
        whose = f"{self._parent}_{p.name}" if self._parent and depth and norm(self._parent) != norm(rec_ent or "") else p.name
        made = m.returned_entity(tool) if m.kinds.get(tool.name) == "create" and not depth else None
        if made and isinstance(v, str) and norm(p.name) == norm(made).split("_")[-1] and not looks_like_id(v) \
                and not (norm(p.name) in _SAID_TEXT and " " in v.strip()):  # a new note's `note` is its text: 'saying "..."'
            said.append(f'called "{v}"')  # `create_branch(branch)`: the new branch's name, "a branch called fix/x", not "with branch" (review 57)
        else:
            said.append(_say_param(whose, v))
        sc.said_of[said[-1]] = (whose, v)
        return sc.fact(p.name, v), v

    def _derived_count(self, name: str, doc: str) -> bool:
        """Whether a number counts other records of the env (`bookmark_count`, "Number of bookmarks with this
        tag", `num_members`): the system keeps it as they come and go, so it is never a value a user gives."""
        ws = norm(name).split("_")
        m = re.match(r"\s*(?:the\s+)?(?:total\s+)?(?:number|count) of (\w+)", doc, re.I)
        if m:
            noun = m.group(1)
        elif len(ws) > 1 and ws[-1] in ("count", "total"):
            noun = ws[-2]
        elif len(ws) > 1 and ws[0] in ("num", "number", "count", "n"):
            noun = ws[-1]
        else:
            return False
        heads = {singular(norm(e.name).split("_")[-1]) for e in self.m.env.entities}
        return singular(noun.lower()) in heads
    def described(self, sc: _Scenario, ent: str, p: A.ParamDecl, rec: dict, said: list[str], only: Any = None,
                  members: tuple[set, bool] | None = None) -> tuple[A.Expr, Any]:
        """A record the user describes (the new flight): looked up, then named by its attributes
        (the search's own criteria first: "the flight from JFK to LAX on 2024-05-17 leaving at 09:00")."""
        m = self.m
        pre: tuple = ()
        if ent in m.lister_all and sc.listed(ent) is not None:
            lst = sc.lists[ent]  # already listed (for this intent's guard, or an earlier one): an agent does not list again
        elif ent in m.lister_all:
            expr, recs, _ = self.list_all(sc, ent)
            lst = (expr, recs)
            sc.remember(ent, lst)
        else:
            found = self.search_for(sc, ent, rec)
            lst, pre = (found[0], found[1]) if found else (None, ())
        if (lst is None or not lst[1]) and m.user is None:
            return self.named_node(sc, ent, said, home=rec)
        if (lst is None or not lst[1]) and re.search(r"(payment|card|voucher|coupon|certificate|wallet)", norm(ent)):
            # a payment instrument the user holds: they tell which one (τ-bench users do), nothing to look up
            keys = sorted((m.ents.get(ent) or {}))
            if not keys:
                raise _Skip("no-lookup-for-described")
            k = sc.rng.choice(keys)
            v = (m.ents[ent][k]).get(m.decl[ent].key, k)
            said.append(f"paying with my {humanize(ent)} {v}")
            return sc.fact(p.name, v), v
        if lst is None or not lst[1]:
            raise _Skip("no-lookup-for-described")
        recs = lst[1]
        cur = rec.get(p.name)
        where = [i for i, r in enumerate(recs) if r.get(m.decl[ent].key) != cur]
        inside = m.container(ent, m.entity_of(rec)) if rec else None
        if inside is not None:  # the issue to link or react to is one of the acted-on project's, not any project's
            home = rec.get(m.decl[m.entity_of(rec)].key)
            where = [i for i in where if recs[i].get(inside) == home]
        if only is not None:  # the record the acted-on one lives in
            where = [i for i, r in enumerate(recs) if r.get(m.decl[ent].key) == only]
        if members is not None:  # (`link_of`): one of the record's members, or one that is not yet
            where = [i for i in where if (recs[i].get(m.decl[ent].key) in members[0]) == members[1]]
            if not where:
                raise _Skip("no-candidate")
        sc.roots.add(lst[0].id if isinstance(lst[0], A.Name) else "")
        name, r, words = self.pick(sc, ent, lst, mine=False, where=where, superlatives=True, pre=pre)
        if only is not None:
            said.append(f"in {words}")  # "the branch X in the project called Y": where it is, not something to change
        else:
            said.append(("described", humanize(ent), words))
            sc.described = (name, ent, r)
            if getattr(self, "_about", None) is None and not rec and not (is_person(ent) or m.is_person(ent)) and (about := _name_of(r)):
                # a comment made on the document "Book club" is about it, not about a press release (review 49)
                self._about = about
        key = self.ref_field(ent, p.name, r)
        if key == m.decl[ent].key:
            sc.unknown.append(humanize(key))
        return A.Attr(A.Name(name), key), r[key]

    def ref_field(self, ent: str, pname: str, rec: dict) -> str:
        """The field of `rec` a reference parameter passes: its key, or its `name` where the parameter is the record's
        name (Harbor's `project_name`, wording.lookup_field) and no other record of the world has that name."""
        d = self.m.decl[ent]
        by = lookup_field(pname, d.key, {f.name: (strip_optional(f.type).name if isinstance(strip_optional(f.type), A.PrimType) else "") for f in d.fields})
        v = rec.get(by) if by else None
        if isinstance(v, str) and v and sum(1 for r in self.m.ents.get(ent, {}).values() if isinstance(r, dict) and r.get(by) == v) == 1:
            return by
        return d.key

    def search_for(self, sc: _Scenario, ent: str, rec: dict) -> tuple[tuple[A.Expr, list[dict]], tuple] | None:
        """A search tool for `ent` whose required params the acted-on record (or a record of `ent`)
        answers: search_flights(origin, destination, date) for a flight like the one booked."""
        m = self.m
        titles = [f for f in [m.title_field(ent)] if f]
        for name, t in sorted(m.tools.items()):
            if m.writes[name] or not m.required(t):
                continue
            req = m.required(t)
            if any(m.key_entity(p.name, p.type) for p in req):
                continue
            # a search by free text (`search(query)`, "Search query"): the user's words for the record are the
            # query, its title (Notion, Zotero, Paperless: the only way to find a page is to search for it)
            text = [p for p in req if _free_text(p) and titles]
            if len(text) > 1:
                continue
            pool = [r for r in (m.ents.get(ent) or {}).values()]
            if text:
                pool = [dict(r, **{text[0].name: r[titles[0]]}) for r in pool if isinstance(r.get(titles[0]), str) and r[titles[0]].strip()
                        and not looks_like_id(r[titles[0]])]
            sc.rng.shuffle(pool)
            like = None
            cur_key = rec.get(m.decl[ent].key) if rec else None
            if cur_key is None and rec:
                for f, v in rec.items():
                    if m.key_entity(f, A.PrimType("str")) == ent:
                        cur_key = v
            base_rec = (m.ents.get(ent) or {}).get(str(cur_key)) if cur_key is not None else None
            if base_rec and text:
                base_rec = dict(base_rec, **{text[0].name: base_rec.get(titles[0])}) if isinstance(base_rec.get(titles[0]), str) else None
            for cand in ([base_rec] if base_rec else []) + pool[:3]:
                if all(p.name in cand and fits_doc_format(cand[p.name], p.doc or "") for p in req):
                    like = cand
                    break
            if like is None:
                continue
            used = list(req)
            r = sc.env.step(name, jcopy({p.name: like[p.name] for p in used}))
            if not isinstance(r, list) or not r or not isinstance(r[0], dict) or m.entity_of(r[0]) != ent:
                continue
            key = m.decl[ent].key
            if text:
                if not any(isinstance(x, dict) and x.get(key) == like.get(key) for x in r):
                    continue
                used = [p for p in req if p not in text]
                args = {p.name: (sc.fact(p.name, like[p.name]), like[p.name]) for p in used}
                args[text[0].name] = (sc.fact(f"{norm(m.noun(ent))}_{titles[0]}", like[titles[0]]), like[titles[0]])
                node, r = sc.call(name, {q.name: args[q.name] for q in req}, plural(norm(ent)))
                sc.sought[ent] = like.get(key)  # the one searched for is the one acted on, and it is named by its title
                return (A.Name(node), r), tuple((p.name, like[p.name]) for p in used) + ((titles[0], like[titles[0]]),)
            # the user says what they look for until it is the one they mean: "a psychologist in Berkeley, CA who
            # accepts insurance" (an optional filter the record answers narrows the list, or lets it in at all
            # where a filter's default would leave it out)
            opt = [p for p in t.params if p not in req and p.name in like and not isinstance(like[p.name], (dict, list))
                   and isinstance(A.strip_optional(p.type), (A.EnumType, A.PrimType))
                   and fits_doc_format(like[p.name], p.doc or "")]  # a date in the search's own format, or not at all (review 56)
            sc.rng.shuffle(opt)
            for p in opt:
                if len(r) == 1 and any(x.get(key) == like.get(key) for x in r if isinstance(x, dict)):
                    break
                r2 = sc.env.step(name, jcopy({q.name: like[q.name] for q in used + [p]}))
                if isinstance(r2, list) and r2 and any(isinstance(x, dict) and x.get(key) == like.get(key) for x in r2) and len(r2) < len(r) \
                        or not any(isinstance(x, dict) and x.get(key) == like.get(key) for x in r):
                    if isinstance(r2, list) and r2:
                        used.append(p)
                        r = r2
            args = {p.name: (sc.fact(p.name, like[p.name]), like[p.name]) for p in used}  # facts only for the search used
            node, r = sc.call(name, args, plural(norm(ent)))
            return (A.Name(node), r), tuple((p.name, like[p.name]) for p in used)
        return None

    def value(self, sc: _Scenario, tool: A.ToolDecl, name: str, t: A.TypeExpr, rec: dict, doc: str) -> Any:
        """A plausible literal for a parameter that matches the pattern its docs give, if any
        (`mxc://...`: an https link is no media URL): else none (left out, or nothing to ask).
        A postal address the user gives twice in one task is the same one: a person who moves has one new address
        (review 59: "ship my order to 588 Maple St ... then make 676 Cedar Ave my default address")."""
        if _READ_ONLY.search(doc or ""):
            return _NONE  # "hexColor: Read-only": the service sets it, no request does (review 75)
        postal = _postal_params(tool)
        if name in postal and name in sc.postal and sc.postal[name] != (rec or {}).get(name, _NONE):
            return sc.postal[name]
        v = self._value(sc, tool, name, t, rec, doc)
        if name in postal and v is not _NONE:
            sc.postal[name] = v
        if isinstance(v, str) and re.fullmatch(r"[A-Z][A-Za-z ]* \d+", v) and any(placeholder_name(e.name, v) for e in self.m.env.entities):
            return _NONE  # "Broadcast 45" is the world's stand-in for a name nothing gave, never a new one (review 24)
        rx = doc_pattern(doc or "") if isinstance(v, str) else None
        if rx is not None:
            return _fit_pattern(v, rx)
        return v

    def _value(self, sc: _Scenario, tool: A.ToolDecl, name: str, t: A.TypeExpr, rec: dict, doc: str) -> Any:
        """A plausible literal for a parameter (never copied from an unrelated record's field)."""
        rng = sc.rng
        n = norm(name)
        cur = rec.get(name, _NONE) if rec else _NONE
        if cur is _NONE and rec:  # `Name` sent for the record's `name` (DigitalOcean's requests are PascalCase): its twin
            cur = next((v for f, v in rec.items() if norm(f) == n), _NONE)
        text = (doc or "") + " " + (tool.doc or "")
        if isinstance(t, A.EnumType):
            vals = [v for v in real_values(t.values) if v != cur and v != "other"] or [v for v in t.values if v != cur]
            if self.m.kinds.get(tool.name) == "create" and is_status(name):
                vals = [v for v in vals if not (isinstance(v, str) and is_ending_state(v))]  # a new project is never made
                # already cancelled or closed (review 66)
            return rng.choice(vals) if vals else _NONE
        if isinstance(t, A.ListType) and t.item == A.PrimType("str") and _RECIPIENTS.search(n):
            # `to: list[str]` "List of recipient email addresses": someone else's address, never the sender's own
            who = (said_value("full_name", "", rng) or "").lower().replace(" ", ".")
            return [f"{who}@{rng.choice(['mail.com', 'inbox.org', 'post.net'])}"] if re.fullmatch(r"[a-z'-]+\.[a-z'.-]+", who) else _NONE
        if not isinstance(t, A.PrimType):
            return _NONE
        if isinstance(cur, str) and cur and rec and is_person_record(self.m.written_entity(tool, rec), list(rec)) and (
                _PERSON_NAME_PARAM.match(n) or _NAME_PART.match(n)):
            return _NONE  # "rename Shannon Washington to Juan Hunt": a person does not become another (review 70)
        if t.name == "bool":
            if _MUST_BE_TRUE.search(doc or ""):
                return True
            return (not cur) if isinstance(cur, bool) else rng.random() < 0.5
        text += " " + " ".join(f.doc for e in self.m.env.entities for f in e.fields if f.name == name and f.doc)
        lo, hi = _bounds(text, n)
        if t.name in ("int", "float"):
            nums = [x for x in documented_examples(doc or "") if re.fullmatch(r"\d+(?:\.\d+)?", x)]
            if len(nums) >= 2:  # "Order in series (e.g. 1, 2, 3)": one of them, not 50 (review 49)
                opts = [(int(float(x)) if t.name == "int" else float(x)) for x in nums]
                opts = [v for v in opts if v != cur and lo <= v <= hi]
                if opts:
                    return rng.choice(opts)
        if t.name in ("int", "float") and _LIST_POSITION.fullmatch(n) and (not doc or _POSITION_DOC.search(doc)):
            return _NONE  # "update my label with order 3": a place in a list the app keeps is no value a person gives (review 75)
        if t.name in ("int", "float") and norm(name) in _MINOR_UNITS.get():  # pence: a refund of £5-£25, not of 1p
            opts = [(v if t.name == "int" else float(v)) for v in (500, 1000, 1500, 2000, 2500) if lo <= v <= hi and v != cur]
            return rng.choice(opts) if opts else _NONE
        if t.name == "float" and set(n.split("_")) & INTEGRAL:  # a priority typed `number` is 1-4, not 50.0 (review 32)
            v = self._value(sc, tool, name, A.PrimType("int"), {**(rec or {}), name: int(cur)} if isinstance(cur, float) and cur.is_integer() else rec, doc)
            return float(v) if isinstance(v, int) and not isinstance(v, bool) else v
        if t.name in ("int", "float") and re.search(r"(^|_)(state|status|stage|phase|type|kind)(_of)?$", n) \
                and not re.search(r"\b\d+\s*(?:=|:|-|means)\s*[A-Za-z]", text):
            return _NONE  # "set its state to 2": a code whose meaning the docs never give is nothing a person asks for (review 34)
        if t.name == "int":
            if isinstance(cur, int) and not isinstance(cur, bool) and cur < 5:
                top = 4 if set(n.split("_")) & RANKS else 5  # "set its priority to 5" on a 1-4 scale (review 71)
                opts = [v for v in (cur + 1, cur + 2, cur - 1) if max(lo, 0) <= v <= min(hi, top)]
            elif isinstance(cur, int) and not isinstance(cur, bool):
                opts = [v for v in range(int(max(lo, 1)), int(min(hi, 3)) + 1) if v != cur]
            else:
                opts = list(range(int(max(lo, 1)), int(min(hi, 4)) + 1))
            return rng.choice(opts) if opts else _NONE
        if t.name == "float":
            opts = [v for v in (20.0, 25.0, 50.0, 75.0, 100.0, 150.0) if lo <= v <= hi and v != cur]
            if not opts and 0 < hi <= 1:  # a fraction ("a position from 0 to 1"): halfway or all the way
                opts = [v for v in (0.5, 1.0) if lo <= v <= hi and v != cur]
            return rng.choice(opts) if opts else _NONE
        if t.name == "str" and cur is not _NONE and _PERSON_NAME_PARAM.search(n) and is_person(self.m.written_entity(tool, rec)):
            return _NONE  # a person keeps their name: "set the first name of Carol Carlson to Ryan" is another person (review 23)
        if t.name == "str":
            from forgec.gate import documented_values  # the docs list the values ("one of 'celsius', 'fahrenheit'"): one of them
            from forgec.stdlib.sql_state import sql_arg  # a SQL statement over the state's tables

            listed = [v for v in documented_values(doc or "", frozenset(q.name for q in tool.params)) if v != cur]
            if re.search(r"(^|_)(uris?|urls?|ids?)$", n) and all(re.fullmatch(r"[a-z]+", v) for v in listed):
                listed = []  # "URI of the context to play (album, artist, playlist)": kinds of URI, not a URI (review 22)
            if listed:
                return rng.choice(listed)
            examples = [v for v in documented_examples(doc or "") if v != cur]
            noun = self.m.written_entity(tool, rec)
            if not examples and noun:  # the rename's own parameter gives none; the field's doc (from the create) does
                ent = next((e for e in self.m.env.entities if e.name == noun), None)
                fdoc = next((f.doc for f in (ent.fields if ent else ()) if f.name == name and f.doc), "")
                examples = [v for v in documented_examples(fdoc) if v != cur]
            if examples and _own_name(name) and noun:  # a new name no other record of its kind has
                taken = {str(r.get(name)).lower() for r in ((sc.env.state.get("entities") or {}).get(noun) or {}).values() if isinstance(r, dict)}
                examples = [v for v in examples if v.lower() not in taken]
                if not examples:
                    return _NONE  # every name the docs give is taken: a made-up one would not fit their domain
            if examples:  # "Name of the emoji (e.g. 'thumbsup', 'rocket', 'eyes')": an emoji, not a made-up title
                return rng.choice(examples)
            if re.search(r"(^|_)(type|kind)$", n) and not re.search(r"(^|_)(mime|content|media|file)_type$", n):
                return _NONE  # "with the event type set to standard": a kind the docs never list is a made-up word (review 71)

            v = sql_arg(name, doc or "", sc.env.state.get("entities", {}), rng)
            if v is not None:
                return v
            when = said_when(name, doc or "", rng)  # a day or time the user asks for, in the docs' format
            known = {**(rec or {}), **getattr(self, "_said_now", {})}  # the record's dates and those this request sets
            if when is not None and known and set(n.split("_")) & _END_WORDS:
                # a sprint's new end a few weeks after its start, not 51 weeks (review 41); a deadline after the
                # planned start set beside it (review 46: a deadline three weeks before the new start)
                when = _after_start(when, known, n, rng)
            if when is not None and when != cur:
                return when
            if re.search(r"(^|_)(owner|assignee|customer|reviewer|member|agent|requester|recipient|contact|user)s?$", n) and re.search(r"\bemail\b", doc or "", re.I):
                # "New owner (email or login)": a person the system knows, said by their address (blind review 21:
                # tickets handed to an address no user has, so to nobody)
                known = sorted({r["email"] for coll in (sc.env.state.get("entities") or {}).values() if isinstance(coll, dict)
                                for r in coll.values() if isinstance(r, dict) and isinstance(r.get("email"), str) and "@" in r["email"]} - {cur})
                if known:
                    return rng.choice(known)
            if not rec and self.m.kinds.get(tool.name) == "create" and re.search(r"(^|_)(user_?name|login|handle)$|email", n):
                # a new person's login and address are made of the name they were just given ("username rachel_cook15,
                # realname "Emily Bridges" and email me.home@post.net" was three people, review 71)
                given = {**(getattr(self, "_said_now", None) or {}), **(getattr(self, "_siblings", None) or {})}
                whole = next((v for k, v in given.items() if isinstance(v, str) and re.fullmatch(r"(full|real|display)?_?name", norm(k))), None) \
                    or _person_name({k: v for k, v in given.items() if _NAME_PART.match(norm(k)) and isinstance(v, str)})
                if whole and re.fullmatch(r"[A-Za-z'-]+(?: [A-Za-z'-]+)+", whole):
                    stem = re.sub(r"[^a-z. ]", "", whole.lower())
                    if "email" in n:
                        return f"{stem.replace(' ', '.')}@{rng.choice(['mail.com', 'inbox.org', 'post.net'])}"
                    return _login_of(stem, rng)
            me = None  # the requester's own record, when this value is theirs to change
            if re.search(r"(^|_)(user_?name|login|handle)$", n) and self.m.user:
                if rec and str(rec.get(self.m.decl[self.m.user].key)) == str(sc.ukey):
                    me = rec
                elif not rec and any(self.m.key_entity(q.name, q.type) == self.m.user for q in tool.params):
                    users = self.m.ents.get(self.m.user) or {}
                    me = users.get(str(sc.ukey)) or users.get(sc.ukey)  # `PUT /users/{user_id}` with my id: the body is about me
            if me:
                full = _person_name({k: me[k] for k in ("first_name", "firstName", "firstname", "last_name", "lastName", "lastname", "name") if isinstance(me.get(k), str)})
                if full and re.fullmatch(r"[A-Za-z]+(?: [A-Za-z]+)+", full):  # my own new handle is made of my name, not a stranger's
                    return f"{full.lower().replace(' ', rng.choice(['.', '_', '']))}{rng.randint(1, 99)}"
            elif re.search(r"(^|_)(user_?name|login|handle)$", n) and not rec and self.m.kinds.get(tool.name) == "create":
                full = said_value("full_name", "", rng) or ""  # a new account's login, made of a person's name (review 71)
                if re.fullmatch(r"[A-Za-z]+(?: [A-Za-z]+)+", full):
                    return _login_of(full, rng)
            if "email" in n:
                u = (self.m.ents.get(self.m.user) or {}).get(sc.ukey or "", {}) if self.m.user else {}
                parts = ("first_name", "firstName", "firstname", "last_name", "lastName", "lastname")  # Zammad's `firstname` too
                if not u and rec and any(isinstance(rec.get(f), str) for f in parts):
                    u = {"name": _person_name({k: rec[k] for k in parts if k in rec})}
                elif not u and rec and isinstance(rec.get("name"), str) and re.fullmatch(r"[A-Z][a-z'-]+(?: [A-Z][a-z'-]+)+", rec["name"]) \
                        and is_person(self.m.written_entity(tool, rec)):
                    u = {"name": rec["name"]}  # a subscriber called Kristy Lopez gets kristy.lopez.work@..., not "me.work@..." (review 42)
                if not u and not rec and self.m.kinds.get(tool.name) == "create" and is_person(self.m.written_entity(tool, None)):
                    # a new subscriber called Suzanne Jackson gets suzanne.jackson.work@..., never the user's own "me.work@..."
                    # (review 76 packet); before her name is said, nothing says whose address it is
                    now = getattr(self, "_said_now", None) or {}
                    nm = next((v for k, v in now.items() if isinstance(v, str) and (norm(k) in ("name", "full_name", "display_name")
                               or _PERSON_NAME_PARAM.search(norm(k))) and re.fullmatch(r"[A-Z][a-z'-]+(?: [A-Z][a-z'-]+)+", v)), None)
                    if nm is None:
                        return _NONE
                    u = {"name": nm}
                if not u and (site := _site_of(rec)) and norm(self.m.written_entity(tool, rec) or "").split("_")[-1] in ORG_WORDS:
                    return f"{rng.choice(['contact', 'info', 'hello'])}@{site}.com"  # a company's address is at its own name (review 43)
                who = (str(u.get("name") or u.get("first_name") or "me")).lower().replace(" ", ".")  # the person whose email it is
                mine = bool(self.m.user) and self.m.written_entity(tool, rec) == self.m.user \
                    and str((rec or {}).get(self.m.decl[self.m.user].key)) == str(sc.ukey)
                if who == "me" and rec and not mine and is_person(self.m.written_entity(tool, rec)):
                    # another user's new address is theirs, not "me.work@mail.com" (review 71): by their login, or none
                    login = next((str(rec[k]) for k in rec if re.search(r"(^|_)(user_?name|login|handle)$", norm(k)) and isinstance(rec[k], str)), "")
                    who = ".".join(re.findall(r"[a-z]+", login.lower())[:2])
                    if not who:
                        return _NONE
                return f"{who}.{rng.choice(['home', 'work', 'new'])}@{rng.choice(['mail.com', 'inbox.org', 'post.net'])}"
            if re.search(r"(^|_)(website|web_site|homepage|home_page|site_url)$", n) and (site := _site_of(rec)):
                return f"https://www.{site}.com"  # a company's new website is at its own name, not Faker's "brown.com/way-what-wear"
            if self.m.user is None and (re.search(r"(observation|fact)$", n) or (n.endswith("content") and "observation" in text.lower())):
                return rng.choice(_PHRASES["observation"])  # what a memory store keeps about someone
            if re.search(r"(reason|thought|resolution)$", n):
                return rng.choice(_PHRASES.get(n.split("_")[-1], _PHRASES["reason"]))
            about = getattr(self, "_about", None)
            if re.fullmatch(r"(file_?)?(path|file|filename|file_name)", n) and isinstance(about, str) and about.strip():
                # the new book's file is named for it ("/books/winter_letter.epub"), in a type the docs allow, not a
                # file about another topic ("/reports/reading_list.pdf", review 49)
                exts = documented_extensions(doc or "") or documented_extensions(tool.doc or "") or ("pdf",)
                stem = slugify(about).replace("-", "_")
                if stem:
                    return f"{stem}.{rng.choice(exts)}" if "/" not in str(cur) else f"{str(cur).rsplit('/', 1)[0]}/{stem}.{rng.choice(exts)}"
            if not re.search(r"(address|street|address1|address2|address_line_2|line2|apartment|suite|unit|city|zip|zipcode|postal_code|state|province|region|country|destination|dest|new_path|target|to)$", n) or re.search(r"assign|(ip|email|mac|web)_?address$", n):
                noun = written = self.m.written_entity(tool, rec)
                made_ent = next((x.entity for x in A.walk(tool) if isinstance(x, A.Insert)), None)
                if rec and made_ent and made_ent != noun and is_problem(noun) and _own_name(name) and _name_of(rec) and \
                        norm(name) in ("title", "subject"):
                    return f"Re: {_name_of(rec)}"  # an article added to a ticket is about that ticket, not another problem (review 21)
                asked_as = (noun, written)  # the record acted on: what a value falls back to being about
                if made_ent and made_ent != noun and noun and _own_name(name) and any(
                        isinstance(x, A.Insert) and x.entity == made_ent and any(_own_name(fi.name) and (
                            fi.value == A.Name(name) or isinstance(fi.value, A.Attr) and fi.value.name == name) for fi in x.fields)
                        for x in A.walk(tool)):
                    noun = made_ent  # the new record's own name is one of its kind (a fix version "2.14.0"), whatever it is made in
                    # (review 68: a fix version "Website redesign" in the project "Kitchen renovation")
                elif made_ent and made_ent != noun and noun and (is_person(noun) or norm(noun).split("_")[-1] in ORG_WORDS):
                    fed = {y.id for x in A.walk(tool) if isinstance(x, A.Insert) and x.entity == made_ent
                           for fi in x.fields for y in A.walk(fi.value) if isinstance(y, A.Name)}
                    if name in fed and any(_own_name(q.name) for q in tool.params if q.name in fed) or (
                            norm(noun).split("_")[-1] in ORG_WORDS and (_own_name(name) or norm(name) == "description")):
                        # (a collection made in a workspace by a body `collection: {info: {name, description}}` too,
                        # review 57: Postman collections named "Holt Ltd", described "Long-time customer since 2019.")
                        if name not in fed:
                            written = made_ent  # ... and named as its own kind is (a topic), not as the workspace is
                        noun = made_ent  # a named thing made in a workspace (a tag) is named and noted like a tag, not like the workspace's
                        # company; a reply on a ticket stays about the ticket
                if made_ent and _own_name(name) and singular(norm(made_ent).split("_")[-1]) in ITERATIONS:
                    noun = made_ent  # a new cycle made in a project is "Cycle 12" whatever feeds its name, not a part of the
                    # project ("Marketing site v2 questions")
                taken = set()
                if _own_name(name) and noun:  # a new name is one no other record of its kind has (else "my X called Y" is two)
                    taken = {str(r.get(name)).lower() for r in ((sc.env.state.get("entities") or {}).get(noun) or {}).values() if isinstance(r, dict)}
                    # ... nor had before this task: "delete X, then rename Y to X" reads as a slip (the world it starts from)
                    taken |= {str(r.get(name)).lower() for r in (self.m.ents.get(noun) or {}).values() if isinstance(r, dict)}
                for _try in range(4):
                    made = said_value(name, doc or "", rng, about=getattr(self, "_about", None) or _name_of(rec), noun=noun,
                                      topical=written is None or n.endswith("title") or topic_named(written, [e.name for e in self.m.env.entities]),
                                      taken=frozenset(taken), configured=SET_UP.search(text) is not None,
                                      renaming=cur if isinstance(cur, str) and _own_name(name) and made_ent is None else None,
                                      inside=_name_of(rec) if rec and made_ent and (made_ent != asked_as[0] or self.m.kinds.get(tool.name) == "create")
                                      and asked_as[0]  # (a sub-project made under a project is a part of it too, review 90)
                                      and not (is_person(asked_as[0]) or self.m.is_person(asked_as[0])) else None)  # a new record
                    # made under the one acted on (a tag in a workspace) renames nothing
                    if made is None and (noun, written) != asked_as:
                        if norm(name) == "description":
                            break  # no description of the made kind: none asked for, never a note on the workspace's company
                            # (review 58: a Postman collection "described" as "Prefers to be contacted by email.")
                        noun, written = asked_as  # nothing a record of the made kind is called: as before, the workspace's words
                        continue
                    if isinstance(made, str) and is_file_field(name):
                        made = fit_extension(made, f"{doc or ''} {tool.doc}", rng)  # "The valid file types are: jpg, png and pdf" (the tool's doc)
                    made = _in_style_of(made, taken, rng) if _own_name(name) else made
                    if made is None or (made != cur and made.lower() not in taken):
                        break
                if made is not None and made != cur and made.lower() not in taken:
                    return made
            if re.search(r"(address|street|address1)$", n) and not re.search(r"(ip|email|mac|wallet|web|e_mail)_?address$", n):
                return f"{rng.randint(10, 990)} {rng.choice(['Oak', 'Maple', 'Cedar', 'Lake', 'Hill'])} {rng.choice(['St', 'Ave', 'Rd'])}"
            if re.search(r"(address2|address_line_2|line2|apartment|suite|unit)$", n):
                return f"Apt {rng.randint(1, 40)}"
            place = sc.place or rng.choice(_PLACES)  # one city, its state and zip for the whole scenario
            sc.place = place
            postal = any(norm(q.name) in ("city", "zip", "zipcode", "postal_code", "address1") for q in tool.params)
            if n in ("state", "province", "region") and postal:
                return place[1]
            if n.endswith("country") and postal:
                return "USA"
            if re.search(r"(city)$", n):
                return place[0]
            if re.search(r"(zip|zipcode|postal_code)$", n):
                return f"{int(place[2]) + rng.randint(0, 8):05d}"
            if rec and re.search(r"(destination|dest|new_path|target|to)$", n) and not re.search(r"(assign|sent|send|reply|email|mail)", n):
                k = next((v for v in rec.values() if isinstance(v, str) and v.startswith("/")), None)
                if k:
                    return f"{k.rsplit('/', 1)[0]}/{rng.choice(['archive', 'old'])}-{k.rsplit('/', 1)[-1]}"
            if re.search(r"(^|_)(iteration|area|sprint|team|org|organization|category|menu|breadcrumb|node)_path$", n):
                return said_value(name, doc or "", rng) or _NONE  # a place in the product's hierarchy, not a file (review 32)
            if re.search(r"(path|file|filename)$", n):
                return fit_extension(rng.choice(["notes/todo.txt", "reports/summary.md", "docs/plan.md"]), f"{doc or ''} {tool.doc}", rng)
            top = next((q for q in tool.params if q.name == name), None)
            if top is not None and (top.default is not None or isinstance(top.type, A.OptionalType)):
                return _NONE  # an optional string nothing says the meaning of: left out, not filled with a word in use
            if self.m.user is None and re.search(r"(type|kind|category|class|role)$", n):
                # a store's categories (a node's entityType, a relation's relationType): one in use; any other
                # string of unknown meaning (a version, a group, a document) is not made up from words in use
                used = sorted({r[name] for e in self.m.decl.values() if name != e.key and any(f.name == name for f in e.fields)
                               for r in (self.m.ents.get(e.name) or {}).values() if isinstance(r.get(name), str)})
                new = next((v for k, v in (getattr(self, "_siblings", None) or {}).items() if _own_name(k) and isinstance(v, str)), None)
                if new is not None and 2 <= len(used) <= 12:
                    # a new node called "Ines Moreau" is of the kind the store gives the other people in it, not "place"
                    # (review 41); read from the world: the kinds of the records whose names are shaped like the new one's
                    alike = {r[name] for e in self.m.decl.values() if any(f.name == name for f in e.fields)
                             for r in (self.m.ents.get(e.name) or {}).values()
                             if isinstance(r.get(name), str) and _person_like(_name_of(r)) == _person_like(new)}
                    if len(alike) == 1:
                        return alike.pop()
                if 2 <= len(used) <= 12:
                    return rng.choice(used)
            return _NONE
        return _NONE

    # ----- one intent
    def intent(self, sc: _Scenario, tool: str, conditional: bool) -> None:
        m = self.m
        t = m.tools[tool]
        sc.family = tool_family(tool)
        target_param = None
        made = m.returned_entity(t) if m.kinds.get(tool) == "create" else None
        for p in m.required(t):
            ke = m.key_entity(p.name, p.type)
            if ke is not None and ke == made and p.name == m.decl[ke].key:
                raise _Skip("create-existing")  # `item_create(item_code)`: the new record's own key names no record to act on
            if ke is not None and not isinstance(strip_optional(p.type), A.ListType) and (ke != m.user or m.user is None):
                if m.user is not None and not (m.owner_field.get(ke) or ke in m.user_list_field):
                    continue  # not a record a user owns (the flight to book on): described, below
                if target_param is not None and not m.container(ke, target_param[1]):
                    continue
                target_param = (p, ke)  # a record inside the one found so far (the merge request of a project): it is acted on
        if target_param is None and m.kinds.get(tool) in ("update", "delete"):
            # a batch (`update_projects(items: [{id, color}])`): the record an item's id names is the one acted on
            for f in m.batch_items(t) or m.body_items(t) or ():  # ... or the one body's (Outline's `{id, name}`)
                ke = m.key_entity(f.name, f.type)
                if ke is not None and ke != m.user and not isinstance(strip_optional(f.type), A.ListType):
                    target_param = (A.ParamDecl(f.name, f.type, None, f.doc), ke)
                    break
        about_user = any(m.key_entity(p.name, p.type) == m.user for p in t.params) or _mentions_user(m, t)
        if m.user is not None and target_param is None and not about_user:
            raise _Skip("not-the-users-business")
        if m.user is not None and target_param is None and m.kinds.get(tool) == "delete" and made is None:
            # deleting the user's own record (`deleteOwner(ownerId)` by the owner) ends their business here: nobody
            # asks it beside other errands ("delete an owner, then delete my pet": blind review 20)
            raise _Skip("deletes-the-user")
        target = None
        looked = None  # a record named by its key, read before the write to judge a condition on it
        twords = ""
        if target_param is not None:
            p, ent = target_param
            if m.user is not None and ent not in m.owned(sc.ukey) and ent != m.user:
                if not (m.owner_field.get(ent) or ent in m.user_list_field):
                    raise _Skip("not-the-users-record")
            try:
                lst = self.records(sc, ent)
                kf = m.decl[ent].key
                fresh = [i for i, r in enumerate(lst[1]) if (ent, r.get(kf)) not in sc.targets and not record_gone(r)]  # no write to a deleted record
                fresh = [i for i in fresh if not m.lifecycle.final_state(tool, ent, lst[1][i])]
                born = {str(k) for k in (m.ents.get(ent) or {})}
                if born:  # a record this task made is made as wanted: "create task X, then set task X's progress" is
                    fresh = [i for i in fresh if str(lst[1][i].get(kf)) in born]  # one create (ERPNext, this session)
                if m.kinds.get(tool) == "update":  # no edit of a task already done ("lower the priority of my task X" while it
                    takes = {norm(q.name) for q in m.tools[tool].params}  # is completed, review 68), unless the edit is of that
                    fresh = [i for i in fresh if not any(x not in takes for x in _done_flags(lst[1][i]))]  # very flag
                if tool in m.lifecycle.deletes:  # the default calendar is never deleted (review 29)
                    fresh = [i for i in fresh if not is_default_record(lst[1][i])]
                sub = m.subtype(tool, ent)
                if sub is not None:  # `delete_image_item` deletes image items only
                    fresh = [i for i in fresh if str(lst[1][i].get(sub[0], "")).lower() == sub[1]]
                # "delete my most recently updated project": what was just made or touched is what a person keeps; they
                # clear out the old and the stale, or name the one they mean (review 89)
                # ... and a record with a title is changed by its title, not by a rank ("add a note to the issue with the
                # latest due date", review 90); a clean-up may still go by age ("delete my oldest robot")
                name, rec, twords = self.pick(sc, ent, lst, mine=True, where=fresh, newest=tool not in m.lifecycle.deletes,
                                              superlatives=tool in m.lifecycle.deletes or not m.title_field(ent))
                target = (name, ent, rec)
                sc.targets.add((ent, rec.get(kf)))
                if m.user is not None or looks_like_id(rec.get(kf)):  # a key a person knows (a setting's name) is not unknown
                    sc.unknown.append(humanize(m.decl[ent].key))
            except _Skip:
                if m.user is not None:
                    raise
                sc.tool = tool
                # a create names a new record of the kind it makes; a booking with a found provider names that one
                target, twords = self.named_by_key(sc, ent, m.kinds.get(tool) == "create" and m.returned_entity(t) in (None, "", ent))
                looked = self.look_before(sc, target, ent) if conditional and m.kinds.get(tool) != "create" else None
        said: list[str] = []
        args: dict[str, tuple[A.Expr, Any]] = {}
        n0 = len(sc.nodes)
        optional = [p for p in t.params if p.default is not None or isinstance(p.type, A.OptionalType)]
        # a person asks for one or two things at once ("make it private and rename it"), never a dozen settings:
        # the required arguments in the docs' order, then the optional ones in a random order, two at most
        order = [p for p in t.params if p not in optional] + sc.rng.sample(optional, len(optional))
        # an end after the start it follows; a new record's name before its description, which is about it (review 47:
        # "a task called Benefits enrollment with description about the garden project")
        order.sort(key=lambda p: (bool(set(norm(p.name).split("_")) & _END_WORDS), not (_own_name(p.name) and p not in optional)))
        # what a new message or record is made of (its recipient, subject, body, title) is asked for first:
        # "send an email" with none of them is no request (review 15: an email with no recipient, subject or body)
        making = m.kinds.get(tool) == "create" or _doc_verb(t.doc) in ("send", "create", "post", "compose", "draft", "add", "write", "reply")
        self._wanted = {p.name for p in optional if making and _CONTENT_PARAM.search(norm(p.name))}
        if any(_own_name(p.name) for p in t.params):  # a named record's description is an extra, not what it is made of: "a
            # preheat policy called X with description "Updated the team offsite with the latest numbers."" (review 71)
            self._wanted = {w for w in self._wanted if not re.search(r"(^|_)(description|summary)$", norm(w))}
        made_ent = m.returned_entity(t) or _tool_noun(tool)
        if making and target is None and (is_person(made_ent) or m.is_person(made_ent)):
            # a new user or contact is made with their name (review 21: "create a new user with mobile ... and login ...")
            self._wanted |= {p.name for p in optional if _PERSON_NAME_PARAM.search(norm(p.name))}
        named_by = {p.name for p in optional if _names_record(p) and not _PERSON_NAME_PARAM.search(norm(p.name))
                    and not (target is not None and _defaults_to_field(p.doc or "", target[2] if len(target) > 2 and isinstance(target[2], dict) else {}))}
        if m.kinds.get(tool) == "create":  # `create_sheet(sheet_name?)`: the new sheet's own name (review 48: a sheet made with none)
            named_by |= {p.name for p in optional if prim_class(strip_optional(p.type)) == "str"
                         and re.fullmatch(rf"{re.escape(norm(str(made_ent)))}_(name|title)", norm(p.name))}
        if m.kinds.get(tool) == "create" and named_by and not self._wanted & {p.name for p in optional if _PERSON_NAME_PARAM.search(norm(p.name))}:
            self._wanted |= named_by  # a new service is made with its name: "create a service with a price of $100" (review 26)
        needed = m.required_by_record(t) & {p.name for p in optional if p.default is None}  # what the new record always has
        if m.kinds.get(tool) == "create":  # "Create a new wiki in the project": the project it goes in is named, not left to
            # a server default the user never chose (reviews 86: "in the project for the repository" with no project sent)
            for p in optional:
                home = m.key_entity(p.name, p.type)
                if home and home != made_ent and re.search(rf"\b(?:in|into|under|within|inside)\s+(?:(?:an?|the|your|my|existing|specified|given)\s+)*"
                                                           rf"{re.escape(m.noun(home))}\b", t.doc or "", re.I):
                    needed.add(p.name)
            # a day the docs default to "today's date if not provided" is said: the user's today and the world's
            # differ, and an agent that fills in the date it sees made another end state (review 90: five restaurant
            # bookings with no date)
            needed |= {p.name for p in optional if TODAY_DEFAULT.search(p.doc or "")}
        # where the record acted on is, which it keeps itself ("mailbox: Mailbox containing the email"), goes with the
        # call as the record has it: the agent reads it off the record, the user never says it (review 91: five email
        # tasks that left the mailbox at INBOX for emails filed elsewhere, where the docs ask for the real folder)
        self._carried = {p.name for p in optional if target is not None and isinstance(target[2], dict) and isinstance(target[0], str)
                         and _LOCATES.search(p.doc or "") and target[2].get(p.name) not in (None, "")
                         and not isinstance(target[2].get(p.name), (dict, list)) and any(fd.name == p.name for fd in m.decl[target[1]].fields)}
        needed |= self._carried
        # and the request gives it no default for is asked for (a `baggage_count = 0` already has its value)
        self._wanted |= needed
        optional = [p for p in optional if p.name not in needed]
        # a new name before what is said about it; a message's recipient before its subject and body, which two
        # optional values may fill: "send an email about X saying Y" to nobody (review 71)
        person_made = making and (is_person(made_ent) or m.is_person(made_ent))
        # (a new person's email is no recipient: their name first, which their address is made of)
        order.sort(key=lambda p: (p in optional, p.name not in self._wanted, person_made or not _RECIPIENTS.search(norm(p.name)), not _own_name(p.name)))

        def whole_or_parts(name: str, given: dict) -> bool:
            """Whether a person's name is already given the other way: whole (`fullName`) beside its parts
            (`firstName`, `lastName`), which would each be made up apart."""
            if not person_made or not _PERSON_NAME_PARAM.search(norm(name)):
                return False
            part = _NAME_PART.match(norm(name)) is not None
            return any(_PERSON_NAME_PARAM.search(norm(q)) and (_NAME_PART.match(norm(q)) is not None) != part for q in given)
        n_opt = 0
        self._about = None
        plain = {tuple(w for w in norm(q.name).split("_") if w != "html") for q in t.params if "html" not in norm(q.name).split("_")}
        # the words of the record made or acted on: a `<word>_url` of its own is its address, another's is pasted
        own_words = set(norm(str(made_ent or "")).split("_")) | (set(norm(str(target[1])).split("_")) if target is not None else set())
        for p in order:
            if p in optional and "html" in norm(p.name).split("_") and tuple(w for w in norm(p.name).split("_") if w != "html") in plain:
                continue  # `html_text` beside `text`: the same words in markup, not a second thing to say (review 29)
            if p in optional and re.search(r"(^|_)(icon|avatar|logo|thumbnail|banner|favicon)(_url|_uri)?$", norm(p.name)):
                continue  # "with display icon url https://..." is a picture's address nobody dictates (review 34)
            if p in optional and norm(p.name) == "title" and (person_made or target is not None and (is_person(str(target[1])) or m.is_person(target[1]))):
                continue  # a person's title is their job's, not what they are called ("rename my candidate Seth Burns to
                # "Billing update draft"": read-through, this session)
            art = norm(p.name).split("_")[0]
            if p in optional and "_" in norm(p.name) and any(re.fullmatch(rf"{re.escape(art)}_(sha|hash|url|uri)", norm(q.name)) for q in t.params) \
                    and art not in own_words:
                continue  # `commit_sha`, `commit_message`, `commit_branch`: what another system made (a commit), pasted by
                # whoever has it; made up, "commit message "Notes from the tax documents meeting."" (review 49)
            if p in optional and (mu := re.fullmatch(r"([a-z]+)_(url|uri|link)", norm(p.name))) and mu.group(1) not in (
                    "web", "website", "home", "homepage", "site", "public", "external") and mu.group(1) not in own_words:
                continue  # "set its commit url to https://gutierrez.com/family-trip": the address of another thing (a commit,
                # an image) a person would paste, not one made up (review 49)
            if p in optional and _schema_phrase(p.name):
                continue  # "set its dest namespace replace count to 5": the schema's words, no person's (review 71)
            if p in optional and not _one_more_optional(p.type, n_opt, p.name) and not (
                    norm(p.name) in ("body", "text", "content", "message") and any(norm(k) == "subject" for k in args)):
                # (a message given its subject is given its text: "a draft to X with subject Y" left the body to
                # guess, and the check held it empty, review 77)
                continue  # an optional switch ("is primary off", "redirect new handle on") is the agent's business, not the ask
            if p in optional and whole_or_parts(p.name, args):
                continue  # "a contact called Barry Valdez with first name Ashley": one name, whole or in parts (review 40)
            if strip_optional(p.type) == A.PrimType("bool") and norm(p.name) in CALL_SWITCHES:
                continue  # a required `confirm` is set below as the agent sets it, never said ("with confirm on", review 30)
            if p in optional and target is not None and _defaults_to_field(p.doc or "", target[2] if len(target) > 2 and isinstance(target[2], dict) else {}):
                continue  # "Reminder title (defaults to email subject)": the record acted on gives it; a made-up title would
                # be about something else than the email (review 46 packet: "a reminder called X from my email about Y")
            self._said_now = {k: v[1] for k, v in args.items()}
            r = self.arg(sc, t, p, target, said)
            if r is not None and isinstance(r[1], str) and r[1] and not r[1].startswith("<") and _MARKUP_DOC.search(p.doc or "") \
                    and not isinstance(strip_optional(p.type), A.EnumType) and not re.search(r"(^|_)(format|type|mode|kind)$", norm(p.name)):
                # "Content of the page in Confluence Storage Format (XHTML) ... plain text will be displayed literally":
                # the user says the words, the agent sends them as markup (review 82: five Confluence pages and comments
                # whose gold held bare text); in the one tag the docs allow when they list some (Asana's `<body>`)
                tag = "body" if "<body>" in (p.doc or "") and "<p>" not in (p.doc or "") else "p"
                r = (A.Binary("+", A.Binary("+", A.Literal(f"<{tag}>"), r[0]), A.Literal(f"</{tag}>")),
                     f"<{tag}>{html.escape(r[1], quote=False)}</{tag}>")
            if r is None:
                if p not in optional:  # what the new record must have and nobody can say: no request to make (review 39)
                    raise _Skip("unfillable-argument")
                continue
            args[p.name] = r
            n_opt += p in optional
            if _own_name(p.name) and isinstance(r[1], str) and not looks_like_id(r[1]) and (
                    target is None or m.kinds.get(tool) == "create" or r[1] != _name_of(target[2] if isinstance(target, tuple) and len(target) > 2 and isinstance(target[2], dict) else {})):
                # a new label called "Q3 goals": its description is about Q3 goals, not another topic; a project renamed
                # "Fitness plan" is described as one, not with "Notes from the thesis draft meeting." (review 34)
                self._about = r[1]
        if making and not is_message(str(made_ent or "")) and not is_problem(str(made_ent or "")):  # a new task's `subject` is
            # what it is called (a ticket stays "about" its problem): 'a new task
            # called "X"', not 'a new task about "X"' (ERPNext)
            said[:] = ['called ' + x.removeprefix("about ") if isinstance(x, str) and x.startswith('about "') else x for x in said]
        elif any(isinstance(x, str) and x.startswith("saying ") for x in said):
            # a message given its text is given its subject as a subject: 'a draft with the subject "X" ..., saying "Y"'
            # ("a draft about X" read as its topic, and the check held X as the subject, review 77)
            said[:] = ['with the subject ' + x.removeprefix("about ") if isinstance(x, str) and x.startswith('about "') else x for x in said]
        self._said_now = {}
        for p in t.params:  # the docs' two-step calls: the gold applies ("preview=True (default) returns a preview";
            # "confirm=true to apply"), as an agent does after previewing or confirming (review 28)
            if strip_optional(p.type) == A.PrimType("bool") and norm(p.name) in PREVIEW_SWITCHES and isinstance(p.default, A.Literal) and p.default.value is True:
                args[p.name] = (A.Literal(False), False)
            elif strip_optional(p.type) == A.PrimType("bool") and is_confirm_switch(p.name) and p.name not in args:
                args[p.name] = (A.Literal(True), True)
        args = {p.name: args[p.name] for p in t.params if p.name in args}  # the call in the docs' order
        if target is not None and m.kinds.get(tool) == "update" and isinstance(target[2], dict) and (done := _done_flags(target[2])) \
                and not any(norm(a) in done for a in args):
            raise _Skip("edit-of-done-record")  # "change the priority of my task X" while X is completed: only its reopening
            # is a change a person asks of a finished task (review 79: Dex's priorities set on completed tasks)
        if target is not None and m.kinds.get(tool) == "update" and isinstance(target[2], dict) and (
                reset := _reset_by_default(t, args, target[2], str(target[1]))):
            raise _Skip("default-resets")  # BFCL's `update_project(status="active" by default)` called without it: by the
            # docs the call makes an "on hold" project active, which the user never asked (review 92)
        n1 = len(sc.nodes)
        self.plausible(t, args, target[2] if target and isinstance(target[2], dict) else None)
        kind = self.kind_of(t, args, target)
        if kind == "create" and target is None and t.params and not args:
            raise _Skip("empty-create")  # "create an account." with nothing in it is no request (review 21)
        pt = {p.name: p.type for p in t.params}

        def content(n: str, v: Any, ty: Any) -> bool:  # a value of the new record itself, not where it goes
            if isinstance(v, dict):
                return any(not m.key_entity(k, A.PrimType("str")) and not (isinstance(x, str) and looks_like_id(x)) for k, x in v.items())
            return not m.key_entity(n, ty)
        if m.kinds.get(tool) == "create" and not any(content(n, v, pt[n]) for n, (_, v) in args.items()) and \
                any(not m.key_entity(p.name, p.type) for p in t.params):
            raise _Skip("empty-create")  # "create a new schedule in my project" and nothing of the schedule (review 22)
        if target is not None and m.kinds.get(tool) == "update" and _doc_verb(t.doc) in _CHANGE_VERBS and \
                not any(content(n, v, pt[n]) for n, (_, v) in args.items()):
            raise _Skip("empty-update")  # "update the details of my project called X." with no change named
        person_names = {n for n in self._wanted if _PERSON_NAME_PARAM.search(norm(n))}
        if making and target is None and person_names and not person_names & set(args):
            raise _Skip("unnamed-person")
        if m.kinds.get(tool) == "create" and named_by and not named_by & set(args) and not person_names & set(args):
            raise _Skip("unnamed-create")
        if m.kinds.get(tool) == "create":  # "Asset 15": the world's stand-in for a name, not one a person gives (review 29)
            inserted = m.written_entity(t, None) or made_ent
            for n in [x for x in args if re.search(r"(^|_)(name|title)$", norm(x))]:
                e, v = args[n]
                own = set(norm(n).split("_")) - {"name", "title"} <= set(norm(str(inserted)).split("_"))
                if not own and not (isinstance(e, A.Attr) and isinstance(e.obj, A.Name) and e.obj.id == "user"):
                    continue  # the restaurant the search found is named as the world names it; only the new record's name is the user's
                if placeholder_name(inserted, v):
                    raise _Skip("unnamed-create")
        gives = {verb_lemma(w) for w in split_name(tool)} | {_doc_verb(t.doc)}
        if gives & GRANTING_VERBS and any(e == sc.user_expr for e, _ in args.values()) and any(
                is_money(n) and isinstance(v, (int, float)) and not isinstance(v, bool) for n, (_, v) in args.items()):
            raise _Skip("self-grant")  # "send a certificate to my account with $25": nobody names what they are given
        opt_names = {p.name for p in optional}
        if m.kinds.get(tool) == "create" and target is None and t.params and all(n in opt_names or m.key_entity(n, pt[n]) for n in args) \
                and sum(1 for n in args if not m.key_entity(n, pt[n])) < 2:
            # "create a new invoice with buyer street "410 Lake Ave"": one optional detail is no record anyone asks for (review 28)
            raise _Skip("thin-create")
        body_parts = [k for n, (_, v) in args.items() if isinstance(v, dict) for k in v]
        if m.kinds.get(tool) == "create" and target is None and body_parts and len(body_parts) + sum(
                1 for n, (_, v) in args.items() if not isinstance(v, dict) and not m.key_entity(n, pt[n])) < 2 \
                and not any(_own_name(k) or _PERSON_NAME_PARAM.search(norm(k)) for k in body_parts):
            raise _Skip("thin-create")  # "create an appointment with meeting link X": no time, customer or service (review 72)
        cond_text, holds = "", True
        on_new = (any(isinstance(x, tuple) for x in said) and sc.described is not None and sc.rng.random() < 0.5
                  and re.search(r"\b(price|prices|cost|fare|charged?|pay|paid|total)\b", t.doc or "") is not None)  # money is at stake
        # a new record made under one the user names is asked for, not made to hang on the parent's state ("create a
        # subtask for my task X, but only if it is blocked", review 52: a condition with no motive)
        if conditional and ((target is not None and m.kinds.get(tool) != "create") or on_new):
            if on_new:  # "if the new flight's price is less than $300": judged on the record the user described
                c = self.condition(sc, sc.described, set(), whose=f"the {humanize(sc.described[1])}'s")
            else:
                c = self.condition(sc, looked or target, {n for name, (_, v) in args.items() for n, _x in _scalar_items(name, v)},
                                   said_words=twords, verb=_doc_verb(t.doc) or name_verb(tool) or "")  # "my confirmed reservation" is no condition on its status
                # (the tool's name when the docs' sentence has no imperative: listmonk's "deletes specified campaign" made the
                # delete an edit, and "delete my campaign, but only if its status is running" was asked, review 84)
            if c is None and looked is not None:  # no condition to judge: the look was for nothing
                sc.nodes = [n for n in sc.nodes if not (isinstance(n, A.CallNode) and n.name == looked[0])]
            if c is not None:
                cond_text, holds = c
                if on_new:
                    n1 = n0  # the described record's lookups stay: the condition reads them
        if not cond_text and target is None and kind == "create" and (conditional or sc.rng.random() < 0.5):
            c = self.unless_exists(sc, t, args, said)  # "add a tag "Q3", unless I already have one called that"
            if c is not None:
                cond_text, holds = c
        vals = [(k, v) for k, (e, v) in args.items() if isinstance(e, A.Attr) and isinstance(e.obj, A.Name) and e.obj.id == "user" and e != sc.user_expr]
        base = _participle_base(tool, target[1] if target else "")
        checked = False
        if holds and target is not None and isinstance(target[0], str) and looked is None and isinstance(target[2], dict):
            # the read the docs name, of those that return the record (Boond's `boond_companies_orders` returns an
            # order too, but the delete says "after checking the ID with `boond_orders_get`": review 61)
            g = next((x for x in m.getters.get(target[1], ()) if x != tool and _points_to(t.doc, x)), None) or next((
                x for x in sorted(m.tools) if x != tool and not m.writes.get(x) and _points_to(t.doc, x)
                and [A.strip_optional(q.type) for q in m.required(m.tools[x])] == [A.NamedType(target[1])]), None)
            # (... or any read the docs name that takes just the record: Boond's `boond_candidates_get` reads one of its
            # tabs, so no probe finds it a getter, yet the delete says to check the ID with it: review 80)
            if g:  # "Delete a candidate, after checking its ID with `boond_candidates_get`",
                key = m.decl[target[1]].key  # "use get_branch ... before deletion": the docs' own procedure (review 38)
                kp = m.required(m.tools[g])[0].name
                sc.call(g, {kp: (A.Attr(A.Name(target[0]), key), target[2].get(key))}, f"checked_{norm(target[1])}")
                checked = True
        if holds and not checked and kind == "cancel" and _BEFORE_DELETING.search(t.doc or ""):
            # "use `get_branch` or `list_branches` before deletion": the docs' own check of what is deleted, made with the
            # same arguments (review 44: GitLab's branch deleted unchecked); the first named read that takes them
            named = sorted((x for x in m.tools if x != tool and not m.writes.get(x) and _points_to(t.doc, x)), key=lambda x: t.doc.find(x))
            g = next((x for x in named if m.required(m.tools[x]) and all(q.name in args for q in m.required(m.tools[x]))), None)
            if g is not None:
                sc.call(g, {q.name: args[q.name] for q in m.required(m.tools[g])}, f"checked_{norm(g)}")
        if holds:
            sc.call(tool, args, base)  # first: a write that fails needs no words
            if kind == "update" and target is not None:
                self.applied(sc, target, args, t)
        elif isinstance((sc.env.fork() if hasattr(sc.env, "fork") else m.module.Env(jcopy(sc.env.state))).step(
                tool, {k: jcopy(v) for k, (_, v) in args.items()}), BaseException):
            # "remove my bookmark from the list X, but only if it is archived": a request the docs would refuse were
            # its condition true (the bookmark is in another list) rests on something untrue (review 63)
            raise _Skip("write-would-fail")
        own = _name_of(target[2]) if target is not None and isinstance(target[2], dict) else None
        if own and _SUPERLATIVE.search(re.sub(r'"[^"]*"', "", twords or "")) and any(
                isinstance(v, str) and own.lower() in v.lower() for _k, (_e, v) in args.items()):
            raise _Skip("blind-pick")  # "rename my project with the latest due date to "Checkout service v2"": a value made
            # from the name of a record the user picked by a rank knows which one it is; they would name it (review 90)
        self._scalars = [(n, v) for name, (_, val) in args.items() for n, v in _scalar_items(name, val)]  # for `control`
        self._ctl_used = False
        text = self.words(sc, t, kind, twords, said, target, vals)
        if self._ctl_used or (target is None and kind in ("update", "money", "status") and not any(m.ents.values())):
            kind = "control"  # a device control (an env with no records): its own reasons
        intent = _Intent(kind, text, cond_text, tool, holds,
                         (_doc_verb(t.doc), t.doc or "", target[1] if target else "", target[2] if target else None,
                          sc.described[1:] if sc.described and any(isinstance(x, tuple) for x in said) else None,
                          {k: v for k, (_, v) in args.items()}))
        if not holds:
            # the agent must judge the condition, not find the write impossible: it would succeed
            probe = sc.env.fork() if hasattr(sc.env, "fork") else None
            if probe is not None:
                h0 = probe.state_hash()
                r = probe.step(tool, jcopy({k: v for k, (_, v) in args.items()}))
                if isinstance(r, BaseException) or probe.state_hash() == h0:
                    raise _Skip("condition-moot")
            # lookups only the write needed (the new agent, the new flight) go with it
            sc.nodes, gone = _drop_lookups(sc.nodes, n0, n1)
            for ent_, (e_, _r) in list(sc.lists.items()):  # a list read only for the write left out is read no more
                if _roots(e_) & gone:
                    del sc.lists[ent_]
        sc.intents.append(intent)

    def applied(self, sc: _Scenario, target: tuple, args: dict, tool: A.ToolDecl | None = None) -> None:
        """An update asks for something, and gets it: each value the user gives shows in the record
        after the write (a tool that ignores `status`, or a change with no value, is no task)."""
        _, ent, before = target
        key = self.m.decl[ent].key
        given = [v for name, (_, v) in args.items() for n, v in _scalar_items(name, v)
                 if n != key and not isinstance(v, bool) and isinstance(v, (str, int, float)) and v != before.get(key)]
        if not given:
            raise _Skip("nothing-to-change")  # "update the details of my project" with no detail
        after = ((sc.env.state.get("entities") or {}).get(ent) or {}).get(str(before.get(key))) or {}
        changed = [x for f, x in after.items() if before.get(f) != x]
        flat = [x for v in changed for _, x in _scalar_items("", v)]
        # the card a change is paid with ("The payment method id to pay ...") says how, not what changes: it need not show
        paying = {p.name for p in (tool.params if tool else ()) if re.search(r"\b(?:pay|pays|paid|payment|charged?|billed?)\b", p.doc or "", re.I)
                  and self.m.key_entity(p.name, p.type) not in (None, ent)}
        how = {x for name, (_, val) in args.items() if name in paying for _, x in _scalar_items(name, val)}
        given = [v for v in given if v not in how]
        # a field the tool takes whole and the user passes again as it was (τ-bench's `flights` with a new cabin)
        kept = {x for name, (_, val) in args.items() if before.get(name) == val and isinstance(val, list) and val
                and all(isinstance(r, dict) for r in val) for _, x in _scalar_items(name, val)}  # (records, not the ids acted on)
        # a member taken out of the record's list (`firewall_remove_droplets`): asked for, and gone from the list
        out = {x for f, was in before.items() if isinstance(was, list) and isinstance(after.get(f), list)
               for x in was if not isinstance(x, (dict, list)) and x not in after[f]}
        for v in given:
            if not any(v == x or (isinstance(x, str) and isinstance(v, str) and v in x) for x in flat) and v not in kept and v not in out:
                raise _Skip("said-unapplied")  # the user asked for it; the tool's model does not do it

    def intent_all(self, sc: _Scenario, tool: str) -> None:
        """"close all my resolved tickets": a filter a person says, then the write once per record it keeps."""
        m = self.m
        t = m.tools[tool]
        req = m.required(t)
        if m.user is None or len(req) != 1 or len(t.params) != 1:
            raise _Skip("no-all-intent")
        p = req[0]
        ent = m.key_entity(p.name, p.type)
        if not ent or ent == m.user or isinstance(strip_optional(p.type), A.ListType) or not (m.owner_field.get(ent) or ent in m.user_list_field):
            raise _Skip("no-all-intent")
        expr, recs = self.records(sc, ent, stale_ok=False)
        kf = m.decl[ent].key
        stat = [f for f in m.natural_fields(ent) if is_status(f) and all(isinstance(r.get(f), str) for r in recs)]
        if not stat or len([f for f in m.natural_fields(ent) if is_status(f)]) > 1:
            raise _Skip("no-all-intent")  # "all my failure bookmarks" beside a crawl, a tagging and an embedding status:
            # which one is meant (review 87)
        f = stat[0]
        groups = Counter(r[f] for r in recs)
        # a state said before the noun is a word that describes ("open", "archived"), not an outcome's noun ("failure")
        vals = sorted(v for v, c in groups.items() if c >= 2 and not any((ent, r.get(kf)) in sc.targets for r in recs if r[f] == v)
                      and _prenominal_state(v))
        if not vals:
            raise _Skip("no-all-intent")
        v = sc.rng.choice(vals)
        noun = humanize(ent)
        fname, kept = sc.reason("filter", (expr,), [recs], {"by": f, "eq": (sc.fact(f"{noun}_{f}", v), v)}, f"{_word(v)}_{plural(norm(noun))}")
        base = _participle_base(tool, ent)
        for i, r in enumerate(kept):
            sc.call(tool, {p.name: (A.Attr(A.Index(A.Name(fname), A.Literal(i)), kf), r[kf])}, base)
            sc.targets.add((ent, r[kf]))
        sc.unknown.append(humanize(kf))
        twords = f"all my {say(v).replace('_', ' ')} {plural(noun)}"
        kind = self.kind_of(t, {p.name: (None, None)}, (fname, ent, kept[0]))
        self._scalars = []  # nothing said but the filter
        text = self.words(sc, t, kind, twords, [], (fname, ent, kept[0]), [])
        sc.intents.append(_Intent(kind, text, "", tool, True, (_doc_verb(t.doc), t.doc or "", ent, kept[0], None, {})))

    def new_name(self, sc: _Scenario, ent: str) -> str:
        recs = (sc.env.state.get("entities", {}) or {}).get(ent) or {}
        free = [n for n in _NEW_NAMES if n not in recs]
        if not free:
            raise _Skip("exists")
        return sc.rng.choice(free)

    def whole_record(self, sc: _Scenario, fields: tuple, said: list[str]) -> tuple[A.Expr, Any] | None:
        """A record argument naming one stored record by all its fields (a relation: from, to, type)."""
        names = [f.name for f in fields]
        for e in sorted(self.m.decl):
            recs = list(((sc.env.state.get("entities", {}) or {}).get(e) or {}).values())
            if len(names) < 2 or not recs or not all(all(isinstance(r.get(f), (str, int, float)) for f in names) for r in recs):
                continue
            rec = sc.rng.choice(recs)
            said.append(f"the {humanize(e)} " + " ".join(say(rec[f]).replace("_", " ") for f in names))
            return A.RecordLit(tuple(A.FieldInit(f, sc.fact(f, rec[f])) for f in names)), {f: rec[f] for f in names}
        return None

    def named_node(self, sc: _Scenario, ent: str, said: list[str], home: dict | None = None) -> tuple[A.Expr, Any]:
        """A record of a store with no lookup listing them (a knowledge graph's node), named by a key a
        person knows ("the person Dana Sato"), other than the ones this task already names."""
        m = self.m
        key = m.decl[ent].key
        recs = (sc.env.state.get("entities", {}) or {}).get(ent) or {}
        known = [v for v in sc.facts.values() if isinstance(v, str)]
        vals = [k for k in sorted(recs) if recs[k].get(key, k) not in known]
        inside = m.container(ent, m.entity_of(home)) if home else None
        if inside is not None:  # the branch to delete is one of the acted-on project's
            hk = home.get(m.decl[m.entity_of(home)].key)
            vals = [k for k in vals if recs[k].get(inside) == hk]
        if not vals or sum(looks_like_id(v) for v in vals) * 2 > len(vals):
            raise _Skip("no-lookup-for-described")
        vals = [k for k in vals if not _placeholder(recs[k].get(key, k), ent, key)]  # "the branch branch_76" is no name a person uses
        if not vals:
            raise _Skip("no-lookup-for-described")
        rec = recs[sc.rng.choice(vals)]
        kind = next((rec[f] for f in m.natural_fields(ent) if re.search(r"(type|kind|category)$", norm(f)) and isinstance(rec.get(f), str)), None)
        noun = kind.replace("_", " ") if kind and len(kind) < 20 else humanize(ent)
        said.append(_by_key(noun, rec.get(key)))
        return sc.fact(key, rec.get(key)), rec.get(key)

    def named_by_key(self, sc: _Scenario, ent: str, create: bool) -> tuple[tuple, str]:
        """The session owner names a record by a key a person knows (a path, a name), not an id:
        "the file /project/README.md"; a new one gets a new key next to an existing one."""
        m = self.m
        key = m.decl[ent].key
        recs = (sc.env.state.get("entities", {}) or {}).get(ent) or {}
        vals = sorted(recs)
        natural_key = re.search(r"(path|name|title|slug|file|dir|directory|folder|url)$", norm(key))
        if not vals or (sum(looks_like_id(v) for v in vals) * 2 > len(vals) and not natural_key):
            raise _Skip("no-lookup")  # ids the owner never sees; a path or name is theirs to say
        vals = [v for v in vals if not _placeholder(recs[v].get(key, v), ent, key)] or vals
        k = sc.rng.choice(vals)
        if _placeholder(recs[k].get(key, k), ent, key):
            raise _Skip("no-lookup")  # "the branch branch_76": a made-up key, no name a person uses
        rec = recs[k]
        noun = rec.get("kind") if isinstance(rec.get("kind"), str) and len(rec.get("kind")) < 20 else humanize(ent)
        if create:
            parent = k if str(rec.get("kind", "directory")) == "directory" else k.rsplit("/", 1)[0]
            dirs = "directory" in (m.tools[sc.tool].doc or "").lower() and "file" not in _clause(m.tools[sc.tool].doc)
            names = ['drafts', 'old-reports', 'archive-2'] if dirs else ['notes.md', 'ideas.txt', 'summary.md']
            newk = f"{parent.rstrip('/')}/{sc.rng.choice(names)}" if "/" in k else f"{k} copy"
            if newk in recs:
                raise _Skip("exists")
            noun = "file" if "." in newk.rsplit("/", 1)[-1] else ("directory" if "/" in newk else humanize(ent))
            e = sc.fact(key, newk)
            return (e, ent, {key: newk}), f"a new {noun} {newk}"
        e = sc.fact(key, rec.get(key, k))
        return (e, ent, rec), _by_key(noun, rec.get(key, k))

    def condition(self, sc: _Scenario, target: tuple[str, str, dict], changed: set[str] = frozenset(),
                  whose: str = "its", said_words: str = "", verb: str = "") -> tuple[str, bool] | None:
        """"if its total price is more than $300": a `compare` node pinned by `expect` (never on a
        field the write itself changes)."""
        name, ent, rec = target
        if not isinstance(name, str):
            return None
        nums = [f for f in self.m.natural_fields(ent) if isinstance(rec.get(f), (int, float)) and not isinstance(rec.get(f), bool) and f not in changed]
        money_f = [f for f in nums if _comparable(f) and _askable_name(f)]  # not "its dest namespace replace count" (review 52)
        if not money_f:  # no amount to compare: a documented state to check; "only if its max parallel tasks is less
            # than 40" or "if its volume is over 90" is a threshold nobody's request hangs on (review 22)
            stem = verb.lower()[:max(4, len(verb) - 1)] if verb else None
            cats = [(f, vs) for f, vs in self.state_fields(ent, rec, changed) if not said_in(said_words, rec[f])
                    and not (stem and stem in f"{norm(f)} {rec[f]}".lower())]  # "expire my token, but only if it is expired" (review 22)
            return self.state_condition(sc, target, cats, whose, edit=verb.lower() not in _CANCEL_VERBS) if cats else None
        f = sc.rng.choice(money_f)
        v = rec[f]
        holds = sc.rng.random() < 0.6
        op = sc.rng.choice([">", "<"])
        if verb.lower() in _CANCEL_VERBS and not is_money(f):
            op = "<"  # a record let go of is one little used: "only if its pull count is less than 6", never more (review 66)
        step = 50 if abs(v) >= 100 else 10 if abs(v) >= 10 else 1
        if (op == ">") == holds:
            th = (v // step) * step if (v // step) * step < v else v - step
        else:
            th = (v // step + 1) * step
        th = int(th) if float(th).is_integer() else th
        doc = " ".join([fd.doc for fd in self.m.decl[ent].fields if fd.name == f and fd.doc]
                       + [q.doc for t in self.m.env.tools for q in t.params if q.name == f and q.doc])  # the tools' "Priority (0-10)" too
        lo, hi = _bounds(doc, f)
        if not lo < th < hi or th < 0:
            return None  # "priority more than 5" on a 1-4 scale is no condition
        if th <= max(lo, 0) + (1 if op == "<" and isinstance(v, int) else 0):
            # "less than 0" can never hold (review 47), nor "its seats are less than 1" for a count a record always has one
            # of; "its quantity is more than 0" holds for every record: no decision either way (ERPNext)
            return None
        if not ((v > th) if op == ">" else (v < th)) == holds:
            return None
        fe = sc.fact(f"{norm(ent)}_{f}_limit", th)
        cname, cv = sc.reason("compare", (A.Attr(A.Name(name), f), fe), [v, th], {"op": (A.Literal(op), op)}, f"{f}_check")
        sc.nodes.append(A.ExpectNode(A.Binary("==", A.Name(cname), A.Literal(bool(cv)))))
        amount = money(th, f) if is_money((f)) else say(th)
        word = "more" if op == ">" else "less"
        said_f = humanize(f)
        be = "are" if said_f.split() and is_plural(said_f.split()[-1]) and not said_f.endswith(("status", "news")) else "is"
        return f"{whose} {said_f} {be} {word} than {amount}", holds  # "its seats are less than 3"

    def state_fields(self, ent: str, rec: dict, changed: set[str]) -> list[tuple[str, tuple]]:
        """Fields a condition can name by state: an enum the docs list (`status: open|closed`, two values
        or more), or a flag that reads as an adjective (`is_archived`, `enabled`): (field, its values)."""
        out = []
        for fd in self.m.decl[ent].fields:
            f, v, t = fd.name, rec.get(fd.name), strip_optional(fd.type)
            if f in changed or f == self.m.decl[ent].key or _SECRET.search(norm(f)):
                continue
            if (isinstance(t, A.EnumType) and isinstance(v, str) and v in t.values and 2 <= len(t.values) <= 8 and f in self.m.natural_fields(ent)
                    and _CONDITION_FIELD.search(norm(f)) and not re.match(r"(reviewer|assignee|author|owner|user|member|parent)_", norm(f))
                    and not (is_status(f) and norm(f) not in ("status", "state"))):  # "only if its embedding status is success": a part's bookkeeping (review 34)
                # where a record stands (its status, stage, priority): a person's condition; its merge method, a
                # board's type or a reviewer's state is a setting nobody makes a request hang on (reviews 17, 18)
                vals = tuple(real_values(t.values))  # never "only if its status is STATUS_UNSPECIFIED" (review 43)
                if fd.doc == INFERRED_STATUS_DOC:
                    # a status the synthesizer inferred from verbs: only the states some doc says ("approved"), never
                    # the "active" a record starts in (review 38: "only if its status is active" on a merge request)
                    vals = tuple(x for x in vals if self.m._said_states([str(x)]))
                    if v not in vals or len(vals) < 2:
                        continue
                out.append((f, vals))
            elif isinstance(v, bool) and _condition_flag(f):
                out.append((f, (True, False)))
        return out

    def state_condition(self, sc: _Scenario, target: tuple[str, str, dict], cats: list, whose: str, edit: bool = False) -> tuple[str, bool] | None:
        """"only if its status is open", "only if it is not archived": a `compare` of a state field with
        the value the user names, pinned by `expect` (a lookup and a decision before the write). An edit is
        asked of a record still going ("only if it is not completed"), never only of a finished one ("change the
        priority of my task, but only if it is completed", review 49); a delete may be of either."""
        name, ent, rec = target
        f, values = sc.rng.choice(cats)
        v = rec[f]
        ending_flag = edit and isinstance(v, bool) and is_ending_state(_flag_word(f))
        if edit and not isinstance(v, bool):
            values = [x for x in values if not (isinstance(x, str) and is_ending_state(x))]
            if not values:
                return None
        if not edit and not isinstance(v, bool):
            # a delete hangs on the record being out of use: "only if it is still pending", "only if it is archived", never
            # "only if it is active" (review 66: a product deleted only if active)
            values = [x for x in values if not (isinstance(x, str) and say(x).lower().replace(" ", "_").replace("-", "_") in _IN_USE_STATES)]
            if not values:
                return None
        holds = sc.rng.random() < 0.6
        if ending_flag:
            want = False
        elif not edit and isinstance(v, bool):
            # a record let go of because it is no longer needed is one not in use: "only if it is not enabled", "only if
            # it is archived", never "only if it is enabled" (review 57: "Since I no longer need it ... but only if it
            # is enabled")
            word = _flag_word(f)
            want = is_ending_state(word) or word in _IDLE_FLAGS
        elif v in values:
            want = v if holds else sc.rng.choice([x for x in values if x != v] or [v])
        else:
            want = sc.rng.choice(values)
        holds = want == v
        if isinstance(v, bool):
            if whose != "its":
                return None
            fe: A.Expr = A.Literal(want)
            text = f"it is {'' if want else 'not '}{_flag_word(f)}"
        else:
            fe = sc.fact(f"{norm(ent)}_{f}_wanted", want)
            said = _spoken(want)
            state = as_state(said) if isinstance(want, str) else said
            # "only if it is published", not "only if its status is publish" (review 95: WordPress's enum is a verb)
            text = f"it is {state}" if state != said and whose == "its" else f"{whose} {humanize(f)} is {state}"
        cname, cv = sc.reason("compare", (A.Attr(A.Name(name), f), fe), [v, want], {"op": (A.Literal("=="), "==")}, f"{f}_check")
        if bool(cv) != holds:
            return None
        sc.nodes.append(A.ExpectNode(A.Binary("==", A.Name(cname), A.Literal(bool(cv)))))
        return text, holds

    def look_before(self, sc: _Scenario, target: tuple, ent: str) -> tuple | None:
        """A record the user names by its key, read by the env's getter so a condition can be judged on it
        ("delete the file notes.md, but only if it is not locked"): the target as a looked-up record, or
        None when the env has no getter for it (the caller drops the call if no condition comes of it)."""
        m = self.m
        if ent not in m.getter or not isinstance(target[2], dict):
            return None
        t = m.tools[m.getter[ent]]
        req = m.required(t)
        key = m.decl[ent].key
        if len(req) != 1 or key not in target[2]:
            return None
        gname, grec = sc.call(t.name, {req[0].name: (target[0], target[2][key])}, "the_" + norm(ent))
        if not isinstance(grec, dict) or m.entity_of(grec) != ent:
            sc.nodes.pop()
            return None
        return gname, ent, grec

    def dictates_a_record_key(self, decl: A.BlueprintDecl) -> bool:
        """Whether the user gives a call the key of a record other than their own account ("the document
        with id 25", "post 100"): a person names their records, the agent looks the key up. A read counts too: a
        lookup by an id the user dictates ("my config ... whose id is config_51770") is the same unknown id."""
        m = self.m
        own = {m.decl[m.user].key} if m.user is not None else set()
        if m.locator is not None:
            own |= set(m.locator[1])
        for n in decl.nodes:
            if not isinstance(n, A.CallNode) or n.tool not in m.tools:
                continue
            params = {p.name: p for p in m.tools[n.tool].params}
            for a in n.args:
                p = params.get(a.name)
                if p is None or a.name in own or not (isinstance(a.value, A.Attr) and isinstance(a.value.obj, A.Name) and a.value.obj.id == "user"):
                    continue
                ke = m.key_entity(p.name, p.type)
                if ke is not None and ke != m.user and not _natural_key(m, ke):
                    return True
                if ke is None and (_ID_NAME.search(norm(p.name)) or _ID_DOC.search(p.doc or "")):
                    return True  # `id`, `post` "The ID of the post", `tags` "Tag IDs": keys the agent looks up
        return False

    def unless_exists(self, sc: _Scenario, t: A.ToolDecl, args: dict, said: list) -> tuple[str, bool] | None:
        """"if I don't already have a tag called "Q3"": before a create, the agent lists the records of the
        kind it makes and counts those with the new one's name (a lookup and a decision, where the bare
        create is a form filled in). Holds when none has it; when one does, the create is left out."""
        m = self.m
        ent = m.returned_entity(t)
        if ent is None:
            return None
        names = {f.name for f in m.decl[ent].fields}
        flat = dict(args)
        if len(args) == 1 and isinstance((one := next(iter(args.values())))[0], A.ListLit) and len(one[0].items) == 1 \
                and isinstance(one[0].items[0], A.RecordLit) and isinstance(one[1], list) and len(one[1]) == 1 and isinstance(one[1][0], dict):
            # a batch create of one (`create_projects(items: [{name: "Garden"}])`): the new record's own fields
            flat = {fi.name: (fi.value, one[1][0].get(fi.name)) for fi in one[0].items[0].fields}
        named = [(k, v) for k, (e, v) in flat.items() if k in names and isinstance(v, str) and 0 < len(v) <= 40
                 and _own_name(k) and norm(k) not in ("subject", "label") and not _NAME_PART.match(norm(k))  # no one is "called" their first name
                 and _roots(e) == {"user"}]  # the record's own name, not its
        # `author_name`; two emails may share a subject ("send it unless I have a message with that subject" is no request)
        if not named:
            return None
        fld, val = named[0]
        try:
            expr, recs = self.records(sc, ent, stale_ok=False, field=fld)
        except _Skip:
            return None
        if not recs or not all(fld in r for r in recs):
            return None
        cur = (sc.env.state.get("entities") or {}).get(ent)
        key = m.decl[ent].key
        kept = {str(k) for k in cur} if isinstance(cur, dict) else None
        gone = {r.get(fld) for r in recs if kept is not None and str(r.get(key)) not in kept}
        if val in gone:
            return None  # a name freed by this task's delete: the list read before it would say it is taken
        now = {r.get(fld) for r in cur.values() if isinstance(r, dict)} if isinstance(cur, dict) else None
        if now is not None and (val in now) != any(r.get(fld) == val for r in recs):
            return None  # a name this task's rename gave or took: the list read before it says otherwise
        taken = sorted({r[fld] for r in recs if isinstance(r.get(fld), str) and 0 < len(r[fld]) <= 40} - {val} - gone)
        if now is not None:
            taken = [x for x in taken if x in now]  # a name renamed away is free now
        e_old = flat[fld][0]
        about_it = any(k != fld and isinstance(v, str) and (str(val).lower() in v.lower() or slugify(str(val)).replace("-", "_") in v.lower())
                       for k, (_, v) in flat.items())
        if taken and fld in args and sc.rng.random() < 0.4 and isinstance(e_old, A.Attr) and isinstance(e_old.obj, A.Name) and e_old.obj.id == "user" \
                and not about_it:  # (a description about the new name stays about it: review 49, "a task called "Tax documents
            # 2025" with description "Notes from the community event archive meeting."")
            # one already has that name: the agent must find it and leave the create out (the guard is tested)
            new = sc.rng.choice(taken)
            said[:] = [x.replace(json.dumps(val), json.dumps(new)).replace(str(val), str(new)) if isinstance(x, str) else x for x in said]
            sc.facts[e_old.name] = new
            args[fld] = (e_old, new)
            val = new
        noun = humanize(ent)
        fname, same = sc.reason("filter", (expr,), [recs], {"by": fld, "eq": (sc.fact(fld, val), val)}, f"{plural(norm(ent))}_named_so")
        cname, n = sc.reason("count", (A.Name(fname),), [same], {}, f"n_{plural(norm(ent))}_named_so")
        kname, none_yet = sc.reason("compare", (A.Name(cname), A.Literal(0)), [n, 0], {"op": (A.Literal("=="), "==")}, "none_named_so")
        sc.nodes.append(A.ExpectNode(A.Binary("==", A.Name(kname), A.Literal(bool(none_yet)))))
        last = noun.split()[-1] if noun.split() else noun
        some = f"any {noun}" if any(x != last for x in lemmas(last).get("NOUN", ())) else _a(noun)  # "any media", not "a media" (review 69)
        return f"I don't already have {some} called {json.dumps(val)}", bool(none_yet)

    def plausible(self, t: A.ToolDecl, args: dict, rec: dict | None = None) -> None:
        """Values a person would ask for: a few bags, not 20; amounts within what the docs allow; a
        part no larger than its total (3 non-free bags of 2 in all); a new start no later than the record's own
        end (review 31: an absence moved to start 2024-05-26 while it ends 2024-03-31)."""
        flat = {norm(n): v for name, (_, val) in args.items() for n, v in _scalar_items(name, val)}
        if rec is None:  # a new record: a span is given whole ("end time 13:00" with no start time left the start empty, which
            takable = set(flat)  # the docs read as a day off; review 70)
            for p in t.params:
                pt = strip_optional(p.type)
                takable |= {norm(f.name) for f in pt.fields} if isinstance(pt, A.RecordType) else {norm(p.name)}
            for a, b in span_pairs(tuple(sorted(takable))):
                if (a in flat) != (b in flat) and (a in _OCCASION_TIME or b in _OCCASION_TIME):
                    raise _Skip("half-a-span")
        if rec is not None and any(k in flat for k in ("city", "town")) and any(
                norm(k) in ("state", "province", "region", "zip", "zip_code", "zipcode", "postal_code", "postcode") and norm(k) not in flat
                and rec.get(k) not in (None, "") for k in rec):
            raise _Skip("partial-address")  # a new city with the old state: "Boston", "TX" (review 70)
        for n, v in (rec or {}).items():
            if isinstance(v, (str, int, float)) and norm(n) not in flat and any(norm(n) in pair for pair in span_pairs(tuple(flat) + (norm(n),))):
                flat[norm(n)] = v  # the end the change leaves as it is
        for n, v in flat.items():
            if n.startswith("total_") and isinstance(v, (int, float)):
                rest = n.removeprefix("total_")
                if any(o != n and o.endswith(rest) and isinstance(x, (int, float)) and x > v for o, x in flat.items()):
                    raise _Skip("implausible-value")
        for a, b in span_pairs(tuple(flat)):  # "start 2024-06-10 ... end date 2024-05-30": a span never ends before it starts
            x, y = flat[a], flat[b]
            ordered = (isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool) and not isinstance(y, bool)) or (
                isinstance(x, str) and isinstance(y, str) and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?|\d{1,2}:\d{2}(?::\d{2})?", z) for z in (x, y)))
            if ordered and y < x:  # dates, times and numbers; `from_user_id`/`to_user_id` are no span
                raise _Skip("implausible-value")
        pair = re.compile(r"^(source|src|from|target|to|dest|destination|other|related|linked)_")
        for a, x in flat.items():  # `issue_iid` and `target_issue_iid` the same issue: a record linked to itself
            b = pair.sub("", a)
            if b != a and b in flat and flat[b] == x and x not in (None, "", True, False):
                raise _Skip("self-link")
        for k, (_, v) in args.items():
            for name, x in _scalar_items(k, v):
                n = norm(name)
                if isinstance(x, int) and not isinstance(x, bool) and _COUNTISH.search(n) and not 0 <= x <= 9 \
                        and self.m.key_entity(name, A.PrimType("int")) is None and not re.search(r"(^|_)ids$", n):
                    # (`issue_number` 2042 names an issue; each of `DropletIDs` names a droplet)
                    raise _Skip("implausible-value")
                if isinstance(x, (int, float)) and not isinstance(x, bool):
                    lo, hi = _bounds((t.doc or "") + " " + " ".join(p.doc for p in t.params), n)
                    if not lo <= x <= hi:
                        raise _Skip("implausible-value")

    def kind_of(self, t: A.ToolDecl, args: dict, target) -> str:
        verb = _doc_verb(t.doc) or name_verb(t.name)
        k = self.m.kinds.get(t.name, "")
        scalars = [(n, v) for name, (_, val) in args.items() for n, v in _scalar_items(name, val)]
        if k == "delete" or (verb in _CANCEL_VERBS and not (k == "update" and re.search(r"\b(?:from|as)\b", _clause(t.doc)))):
            return "cancel"  # "remove the current user as owner of my story" takes something off the record: no cancellation
        if k == "create":
            return "create"
        if any(is_money((n)) and isinstance(v, (int, float)) and not isinstance(v, bool) and not self._unit(t, n) for n, v in scalars) and target is None:
            return "money"
        value_args = [n for n, (e, _) in args.items() if isinstance(e, (A.Attr, A.RecordLit)) and _roots(e) == {"user"}
                      or isinstance(e, (A.ListLit, A.RecordLit)) and "user" in _roots(e)]  # a batch item holding what the user said (Todoist's
        # `update_tasks(tasks: [{id, content}])`): a change, not a status ("my task called X called Y", this session)
        if not value_args and target is not None and len(args) <= 1:
            return "status"
        return "update"

    def _unit(self, t: A.ToolDecl, name: str) -> str | None:
        """The physical unit a number of `t` is in (gallons of fuel are no money)."""

        return unit_of(name, next((p.doc or "" for p in t.params if p.name == name), ""), t.doc or "")

    # ----- words
    def words(self, sc: _Scenario, t: A.ToolDecl, kind: str, twords: str, said: list, target, vals: list) -> str:
        """One intent in the user's words, verbs and nouns from the docs, never the tool's name."""
        described = [x for x in said if isinstance(x, tuple)]
        plain = [x for x in said if not isinstance(x, tuple)]
        addr = _address(vals)
        if addr:  # address1, city, zip... said as one address
            parts, line = addr
            if line in sc.said_addresses:
                line = "to the same address"  # the one new home, said once: "... and my default address to the same address"
            sc.said_addresses.add(addr[1])
            # each part's own phrase ("in Seattle", "the wa state", '"Apt 2"') goes: the line says them all
            plain = [x for x in plain if not any(re.search(rf"(?<![\w-]){re.escape(say(v).lower())}(?![\w-])", x.lower()) for _, v in parts)] + [line]
            vals = [(k, v) for k, v in vals if (k, v) not in parts]
        clause = _clause(_one_of_many(t.doc) if self.m.batch_items(t) is not None else t.doc)
        if self.product and clause:  # "update a customer in Paddle": the user is in Paddle already (review 24)
            clause = re.sub(rf"\s+(?:in|on|from|to|via|using|with)\s+(?:the\s+)?{re.escape(self.product)}\b(?:'s)?", "", clause)
            if clause.split()[0].lower() == self.product.lower():
                clause = ""  # "Resend dashboard URL": the product's name is no verb (review 24: "resend dashboard URL for my broadcast")
        named = {w for p in t.params if (st := id_stem(p.name)) for w in st[0]}  # "in a 1Password vault" with a `vaultId`: the
        clause = re.sub(r"\s+(?:in|on|from)\s+(?:a|an|the)\s+[A-Z0-9][\w-]*\s+([a-z]+)\b",  # vault is said by its name
                        lambda mm: "" if singular(mm.group(1)) in named else mm.group(0), clause or "")
        if re.search(r"\b(?:OR|AND)\b", clause):
            clause = ""  # "by either contact id OR email": the docs' notation, not a person's words
        if clause and (self.m.batch_items(t) is not None or self.m.link_of(t) is not None):
            # a batch tool sent one record ("Create new projects" with one project): "create a new project"; a link
            # sent one member ("Adds one or more droplets to a firewall" with one: "add a droplet to ...")
            ws = clause.split()
            if len(ws) > 2 and ws[1].lower() in ("a", "an"):
                ws = [ws[0], *ws[2:]]  # "create a new personal labels": the realizer's article on the docs' plural
            while len(ws) > 2 and ws[1].lower() in ("multiple", "several", "many", "some", "one", "or", "more", "any"):
                ws = [ws[0], *ws[2:]]  # "Create multiple new entities" with one: "create a new entity" (review 41)
            head = next((i for i, w in enumerate(ws[1:5], 1) if w.isalpha() and w.islower() and is_plural(w) and "NOUN" in lemmas(w)), None)
            if head is not None and all(w.isalpha() and w not in CLOSED_CLASS for w in ws[1:head]):
                clause = " ".join([ws[0], _a(" ".join(ws[1:head] + [singular(ws[head])])), *ws[head + 1:]])
        if clause:  # "purchase tickets for an event on a date in a city": the date and the city are said with their values
            said_params = {norm(p.name).split("_")[-1] for p in t.params}  # said, or read from the record acted on
            clause = re.sub(r"\s+(?:on|in|at|for|with|from|to|of)\s+(?:a|an|the|some)\s+([a-z]+)\b(?=\s+(?:on|in|at|for|with|from|to|of)\b|$)",
                            lambda mm: "" if singular(mm.group(1)) in said_params or mm.group(1) in said_params else mm.group(0), clause)
        lead = re.match(r"^\s*((?:[A-Za-z]+,\s*)*[A-Za-z]+,?\s+or\s+[A-Za-z]+)\b", t.doc or "")
        verbs = [w.lower() for w in re.findall(r"[A-Za-z]+", lead.group(1)) if w.lower() != "or"] if lead else []
        if clause:  # "Add or remove a watcher", "Create, update, or delete a version", `action: "remove"`: the value chosen is the request's verb
            first = clause.split()[0].lower() if clause.split() else ""
            pick = next(((n, v) for n, v in vals if isinstance(v, str) and (v.lower() in verbs or v.lower() == first)), None)
            if pick is not None:
                if verbs and pick[1].lower() in verbs:
                    alts = "|".join(map(re.escape, verbs))
                    clause = re.sub(rf"^(?:{alts})(?:,?\s*(?:or\s+)?(?:{alts}))*\b", pick[1].lower(), clause, count=1, flags=re.I)
                plain = [x for x in plain if not re.search(rf"\b{re.escape(pick[1])}\b", x, re.I)]
                vals = [x for x in vals if x is not pick]
            elif any(norm(n) in ("action", "operation", "op") and isinstance(v, str) for n, v in vals):
                # "with the update action": the act chosen is not the one said; "set its action to unread": the
                # schema's word for the act, no person's (a flag an `action` sets is said by a tool of its own)
                raise _Skip("action-mismatch")  # "create a Redmine project ... with the update action": the act chosen is not the one said
        ent_noun = self.m.noun(target[1]) if target else ""
        opts = []
        ctl = None if target else self.control(t, plain, vals)
        if ctl:
            opts.append(ctl)
        if clause:
            c = clause  # already in the base form: "Switches branches" -> "switch branches"
            new_noun = humanize(self.m.returned_entity(t) or "") if kind == "create" else ""
            if new_noun:  # an API's summary "Create Item": "create a new item"
                c = re.sub(rf"^(\w+)\s+{re.escape(new_noun)}\b(?!')", lambda mm: f"{mm.group(1)} a new {new_noun.lower()}", c, count=1, flags=re.I)
                # ERPNext's "Create a new Task": the docs' capitalized type name, a person's "a new task"
                c = re.sub(rf"\b(a new|an?|the) ({re.escape(new_noun)})\b", lambda mm: mm.group(0) if mm.group(2).isupper() else
                           f"{mm.group(1)} {new_noun.lower()}", c, count=1, flags=re.I)
            if kind == "create" and (bare_np := _BARE_NP.match(c)) and not is_plural(bare_np.group(2)) \
                    and "NOUN" in lemmas(bare_np.group(2).split()[-1].lower()):  # "Bulk Verify" is no noun phrase
                # an operation's summary "Create monitor", "Upload document": a new one is "a monitor" (review 23)
                c = f"{bare_np.group(1)} {_a(bare_np.group(2))}{c[bare_np.end():]}"
            elif (bare_np := _BARE_NP.match(c)) and c[bare_np.end():].startswith(" of ") and not is_plural(bare_np.group(2)) \
                    and "NOUN" in lemmas(bare_np.group(2).split()[-1].lower()):
                c = f"{bare_np.group(1)} the {bare_np.group(2)}{c[bare_np.end():]}"  # "Update reading status of a book": the docs'
                # headline style; a person says "update the reading status of my book"
            c, plain = self.with_units(t, c, plain)
            for x in list(plain):  # "add an external link to my story ... with external link https://...": the clause's
                # object is the value said, once: "add the external link https://... to my story" (Shortcut)
                said_as = re.fullmatch(r"([a-z][a-z ]{2,40}?) (https?://\S+|\"[^\"]+\")", x) if isinstance(x, str) else None
                if said_as and (obj := re.search(rf"\b(?:a|an) {re.escape(said_as.group(1))}\b", c)):
                    c = c[:obj.start()] + f"the {said_as.group(1)} {said_as.group(2)}" + c[obj.end():]
                    plain.remove(x)
            c = re.sub(r"\b(a|an|the|one|this)\s+(user|customer|member|client|account holder|person)'s\b", "my", c)
            c = re.sub(r"\bfor (a|an|the) (user|customer|member|client)\b", "for me", c)
            who = next(((k, v) for k, v in vals if isinstance(v, str) and re.search(r"(^|_)(assignee|assigned_to|user|owner|member|login)(_|$)", norm(k))), None)
            if who is not None and re.search(r"\bto (a|an|the) (user|member|person|assignee)\b", c):
                # "Assign an issue to a user" with `assignee` X: "assign my issue ... to X", not "to my account with assignee
                # X" (review 70)
                c = re.sub(r"\bto (a|an|the) (user|member|person|assignee)\b", f"to {say(who[1])}", c, count=1)
                plain = [x for x in plain if say(who[1]) not in x]
            c = re.sub(r"\b(of|to) (a|an|the) (user|customer|member|client)\b", lambda mm: mm.group(0) if target and ent_noun == mm.group(3)
                       else f"{mm.group(1)} my account", c)  # the user acted on is no account of mine ("update profile fields
            # of my account for my oldest user", review 86): the record goes where the docs' noun is
            friend = next((x for x in plain if x.startswith("to my friend")), None)
            if friend and re.search(r"\bto another(?:'s| user's| user)?", c):
                c = re.sub(r"\bto another(?:'s| user's| user)?(?: \w+)?", friend, c, count=1)
                plain.remove(friend)
            if target and ent_noun and ent_noun not in c and len(twords.split()) >= 3 and twords.split()[-2] in c:
                ent_noun = twords.split()[-2]  # a record named by its key: "the file /a/b.md"
            # "create a new sub-task story" under a story: the clause's story (said with "a") is the new one, not the parent
            new_word = r"(?:new\s+)?" if self.m.returned_entity(t) in (None, "") else r"new\s+"
            same = (target and (kind == "create" or self.m.kinds.get(t.name) == "create") and ent_noun
                    and (self.m.returned_entity(t) == target[1] or re.match(rf"\w+\s+(?:a|an)\s+{new_word}(?:[\w-]+\s+)?{re.escape(ent_noun)}\b", c)))
            # ("refund a payment" makes a refund: the payment is the one acted on, not a new one)
            anchor = len(c) if same else None  # where the new record's name goes ("a new sub-task story called X for ...")
            if same:
                c = f"{c} for \x00"
            elif target and ent_noun:
                pat = _noun_pattern(ent_noun, 3, False)
                own = None if pat.search(c) else _possessive_pattern(ent_noun).search(c)
                if (compound := re.fullmatch(rf"(\w+) (?:(?:a|an|the) )?((?i:{re.escape(ent_noun)}) ([a-z]+))", c)) and ent_noun in twords \
                        and compound.group(2)[:1].isupper() and "NOUN" in lemmas(compound.group(3)) and not is_plural(compound.group(3)) and kind != "update" \
                        and compound.group(3) not in {w for f in self.m.decl[target[1]].fields for w in humanize(norm(f.name)).split()}:
                    # (not a part of it the docs name: "Update task status", "Delete issue comment")
                    # "Delete Radarr instance" on a `Radarr`: a product's name is no kind a person says alone; the docs'
                    # compound is ("delete my Radarr instance called X", not "delete my radarr called X instance", review 96)
                    c = f"{compound.group(1)} \x00"
                    twords = twords.replace(ent_noun, compound.group(2), 1)
                elif own:  # "add a note to an incident's timeline" -> "... to the timeline of my incident called X"
                    c = c[:own.start()] + f"the {own.group(2)} of \x00" + c[own.end():]
                elif pat.search(c) and not _modifies_next(c[pat.search(c).end():]):
                    c = _put_record(c, pat.search(c), 0, "\x00")  # held apart: a described noun inside it stays
                elif (bare := _bare_object(ent_noun).search(c)) is not None and not _modifies_next(c[bare.end():]):
                    c = _put_record(c, bare, 1, "\x00")  # "delete incomplete tasks" -> "delete my task called X"
                elif (own_word := re.fullmatch(r"(\w+) (?:a|an|the) ([a-z]+)", c)) and re.search(rf"\b{re.escape(ent_noun)}\b", twords) \
                        and not is_plural(own_word.group(2)) and not (
                            kind == "create" and self.m.returned_entity(t) not in (None, "", target[1])):
                    # (not when the clause's object is what the call makes: "Place the order" with a saved card makes
                    # an order; the card is not "the order called X", review 32)
                    # "Delete a contact" on a person: the docs' own word for the record ("delete my contact called X", review 23)
                    c = f"{own_word.group(1)} " + re.sub(rf"\b{re.escape(ent_noun)}\b", own_word.group(2), twords, count=1)
                    twords = ""
                elif (spaced := re.fullmatch(r"(\w+) (?:a|an|the) ([a-z]+(?: [a-z]+){1,2})", c)) and \
                        spaced.group(2).replace(" ", "") == ent_noun.replace(" ", "") and ent_noun in twords:
                    # "Delete a node pool" on a `Nodepool`: the docs' spelling of the kind is the one said ("delete my node
                    # pool called X", not "delete a node pool for my nodepool called X")
                    c = f"{spaced.group(1)} \x00"
                    twords = twords.replace(ent_noun, spaced.group(2), 1)
                elif (named := re.fullmatch(rf"(\w+) (?:a|an|the) (?:[A-Z][\w-]*\s+)+{re.escape(ent_noun.split()[-1])}", c)) or (
                        kind != "create" and self.m.kinds.get(t.name) != "create"
                        and (named := re.fullmatch(rf"(\w+) (?:a|an|the) (?:[a-z]+\s+){{1,2}}{re.escape(ent_noun.split()[-1])}", c))):
                    # "Delete a DigitalOcean Kubernetes cluster" on a doks cluster: the docs' proper name for the kind is
                    # the record's kind ("delete my doks cluster called X", not "... a DigitalOcean Kubernetes cluster for
                    # my doks cluster called X"); so is the docs' longer name of a record acted on ("Delete a database
                    # cluster" on a db cluster, review 95)
                    c = f"{named.group(1)} \x00"
                elif (alias := re.fullmatch(rf"(\w+) (?:a|an|the) {re.escape(ent_noun)} ([a-z]+)", c)) and "NOUN" in lemmas(alias.group(2)) \
                        and any(isinstance(n, A.Delete) and isinstance(n.target, A.Name) and n.target.id in
                                {p.name for p in t.params if isinstance(strip_optional(p.type), A.NamedType) and strip_optional(p.type).name == target[1]}
                                for n in A.walk(t)):
                    # "Deletes a website configuration ... using the specified website ID" removes the website: the docs'
                    # other name for the record itself, "delete my website called X" (review 77: "delete a website
                    # configuration using my website called X")
                    c = f"{alias.group(1)} \x00"
                else:  # the record is not in the docs' clause: the docs' own preposition for it ("using a saved card"),
                    # else a new one goes in it, a change is for it
                    prep = re.search(rf"\b(using|with|via|from|on|to|for|in|into)\s+(?:(?:a|an|the|your|one of the)\s+)?(?:\w+\s+)?{re.escape(ent_noun)}s?\b",
                                     (t.doc or "").split(". ")[0], re.I)
                    prep = prep.group(1).lower() if prep else ('in' if kind == 'create' or self.m.kinds.get(t.name) == 'create' else 'for')
                    c = f"{c} {prep} \x00"
            made = humanize(self.m.returned_entity(t) or "") if kind == "create" else ""
            for _, noun, words in list(described):
                if noun == made:  # a new collection inside one the user names: the docs' "a new collection" is the new one
                    described.remove((_, noun, words))
                    plain.append("inside " + words.replace("my ", "my ", 1))
                    continue
                pat = _noun_pattern(noun, 2, True)
                if (pm := pat.search(c)) and not _modifies_next(c[pm.end():]):
                    c = pat.sub(lambda _m: words, c, count=1)
                    described.remove((_, noun, words))
            c = c.replace("\x00", twords)
            if kind == "cancel" and twords and twords in c and _CASCADE.match(c[c.index(twords) + len(twords):]):
                # "Delete a book and all its reviews, quotes, and tags": what the tool takes with the record, not the ask,
                # and the kinds it lists may be none this world holds (review 45): the clause ends at the record
                c = c[:c.index(twords) + len(twords)]
            for pn in set(re.findall(r"\b(?:my|the) (?:(?!called\b)[a-z]+ )?((?!called\b)[a-z]+) (?:called\b|\")", twords)):
                # "delete my group in my board called X from a Miro board": the record's own board is said already; so is
                # the repo in 'my issue ... in the repo "X" owned by Y in a GitHub repository' (review 53: a short form
                # of the docs' noun is the same place)
                same = rf"(?:{re.escape(pn)}|{re.escape(pn)}[a-z]+)" if len(pn) >= 4 else re.escape(pn)
                c = re.sub(rf"\s+(?:from|in|on|of|inside|within|into|to|for)\s+(?:a|an|the|one)\s+(?:[A-Z][\w-]*\s+){{0,3}}{same}\b(?!\s+(?:called\b|\"))", "", c, count=1)
                # ("create a new node pool in a DigitalOcean Kubernetes cluster ... in my doks cluster called X", "create a
                # database user for a cluster in my db cluster called X", review 95)
            made_here = kind == "create" or self.m.kinds.get(t.name) == "create"
            # a new record is made for the records it names: "create a check for the applicant called X", not "with" (review 23)
            rest = [("for " + w if made_here and w.startswith(("the ", "my ")) else w) for _, _, w in described] + plain
            amt = next((x for x in plain if x.startswith(("$", "£"))), None)
            if target and kind == "update" and twords and twords in c and (tail := re.fullmatch(r"(?: [a-z]+){1,2}", c[c.index(twords) + len(twords):])) \
                    and not set(tail.group(0).split()) & (PREPOSITIONS | CLOSED_CLASS):
                c = c[:c.index(twords) + len(twords)]  # "Update task content" -> "update my task called X content": the noun the docs
                # named after the record's is a part of it the settings below say; the clause ends at the record (review 36)
            if kind == "money" and amt:
                c = re.sub(r"^(\w+) ", lambda mm: f"{mm.group(1)} {amt} of ", c, count=1)
                rest.remove(amt)
            elif (len(plain) == 1 and not described and kind == "update" and len(vals) == 1 and target and twords
                  and _own_name(vals[0][0]) and isinstance(vals[0][1], str) and _doc_verb(c) in _CHANGE_VERBS):
                c = f"rename {twords} to {json.dumps(vals[0][1])}"  # "update my cluster called X to "Y"" does not say what changes
                rest = []
            elif len(plain) == 1 and not described and kind == "update" and len(vals) == 1 and _doc_verb(c) in _CHANGE_VERBS:
                v = vals[0][1]
                to = " to " + (money(v, vals[0][0]) if is_money((vals[0][0])) and isinstance(v, (int, float)) else _spoken(v) if isinstance(v, str) and re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)+|[A-Z][A-Z0-9_]+", v)
                               else say(v).replace("_", " ") if isinstance(v, str) and re.fullmatch(r"[a-z_]+", v)
                               else f'"{v}"' if isinstance(v, str) and " " in v.strip() else say(v))  # words the user wrote are quoted
                if to.startswith(" to to "):
                    to = f' to "{to[4:]}"'  # `TO_REVIEW`: 'to "to review"', never "to to review" (review 70)
                elif _is_state_field(norm(vals[0][0])) and re.fullmatch(r" to [a-z]+", to):
                    to = " to " + as_state(to[4:])  # "change the status of my page to published" (review 95)
                if vals[0][0] in self._units and not isinstance(v, bool) and isinstance(v, (int, float)):
                    to = f" to {say(v)} {self._units[vals[0][0]]}"  # "set the temperature the thermostat aims for to 25 degrees"
                m_of = re.match(rf"^(.*?) (of|for|on) ({re.escape(twords)})$", c) if twords and re.search(r"\b(from|to|on|for)\b", twords) else None
                # "set the number of bags of my reservation for the flight from DFW to 1" reads as a route:
                # the value goes first, "... to 1 for my reservation for the flight from DFW"
                c = f"{m_of.group(1)}{to} for {m_of.group(3)}" if m_of else c + to
                w = humanize(norm(vals[0][0]))
                bare = twords and re.fullmatch(rf"\w+(?: (?:a|an|the))? {re.escape(twords)}{re.escape(to)}", c)  # "update my filter called X": what of it?
                other = re.match(rf"^\w+ (?:the|its) ([\w ]+?) (?:of|for|on) {re.escape(twords)}", c) if twords else None
                fnames = {humanize(norm(f.name)) for f in (self.m.decl[target[1]].fields if target and target[1] in self.m.decl else ())
                          if f.name != vals[0][0]}
                if other and other.group(1) != w and other.group(1) in fnames:
                    # the docs' "Update an existing product's name, description, status" cut at its first field: the change
                    # is to another ("update the name of my product to archived" set its status, review 26)
                    c = f"assign {twords}{to}" if w in ("assigned to", "assignee") else f"change the {w} of {twords}{to}"  # not "change the assigned to of"
                elif not re.search(rf"\b{re.escape(w)}\b", re.sub(r'"[^"]*"', "", c)) and twords and (bare or re.search(r"\b(details|information|info|data|settings|properties|attributes|fields|metadata)\b", c)
                                              or not _own_name(vals[0][0]) and re.match(rf"\w+ {re.escape(twords)}", c)):
                    # "update my topic called X to "..."" names no field; only a new name goes without one (review 24)
                    # "update my filter called X to "..."" names no field, nor does "update the details of my project to ...": say which;
                    # the field's word inside a quoted name or value is no field named ("my task called "Release notes" to "..."")
                    c = f"assign {twords}{to}" if w in ("assigned to", "assignee") else f"change the {w} of {twords}{to}"  # not "change the assigned to of"
                rest = []
            call = next((x for x in rest if x.startswith("called ")), None)
            hit = re.search(rf"\b{re.escape(made)}\b", c) if made and call else None
            if call and hit is None and anchor is not None:
                c = c[:anchor] + " " + call + c[anchor:]
                rest = [x for x in rest if x is not call]
            elif hit and hit.end() < len(c):  # "create a new collection called "X" in my library", not "... library called "X""
                end = hit.end()
                nxt = re.match(r" ([a-z]+)\b", c[end:])
                if nxt and nxt.group(1) not in CLOSED_CLASS and "NOUN" in lemmas(nxt.group(1)):
                    end += nxt.end()  # "the media library called X", not "the media called X library" (review 32)
                c = c[:end] + " " + call + c[end:]
                rest = [x for x in rest if x is not call]
            elif call and twords and kind == "create" and (scope := re.search(rf"\s(?:in|inside|into|for|under|within|on|to)\s+{re.escape(twords)}", c)):
                # the docs' noun for the new record differs from the entity's ("an API specification" for a Spec): its name
                # still follows it, before the record it goes in (review 26: 'in the workspace called "A" called "B"')
                c = c[:scope.start()] + " " + call + c[scope.start():]
                rest = [x for x in rest if x is not call]
            if target and kind == "update" and rest and (two := re.match(r"^(\w+) and \w+ ", c)) and twords in c:
                c = f"{two.group(1)} {twords}"  # "update and request shipment for my order: set ...": the settings say what
            if target and kind == "update" and rest:
                # "update the property of the workspace called X: set ..." echoes the docs; the settings say what changes
                c = re.sub(rf"^(\w+) (?:(?:the|its|a|an|some|any) )?(?:{re.escape(ent_noun) + ' ' if ent_noun else ''})?(?:details?|information|info|data|settings?|propert(?:y|ies)|attributes?|fields?|metadata|configuration|config) (?:of|on|for) ", r"\1 ", c)
                # ... and so does "modify subscriber data for my subscriber called X" (review 76)
            if rest and target and kind == "update" and _doc_verb(c) in _CHANGE_VERBS - {"rename"} and any(x in sc.said_of for x in rest):
                sets = [x for x in rest if x in sc.said_of]  # "update my task called X: set its notes to "..." and ..."
                c += _join_said(c, [x for x in rest if x not in sc.said_of], to=False) + ": " + _settings([sc.said_of[x] for x in sets], self._units, self.m.is_person(target[1]))
            elif rest and target and self.m.kinds.get(t.name) == "update" and sum(1 for x in rest if isinstance(x, str) and x.startswith("called ")) == 1 \
                    and _doc_verb(c) in ("update", "edit", "modify", "change"):
                new = next(x for x in rest if isinstance(x, str) and x.startswith("called "))
                c = re.sub(r"^\w+", "rename", c, count=1) + " to " + new.removeprefix("called ")  # "rename my label called X to Y",
                # not "update my label called X renamed to Y" (review 40), and the other settings after it ("..., with order 4")
                if len(rest) > 1:
                    c += "," + _join_said(c, [x for x in rest if x is not new])
            elif rest:
                if target and kind != "create" and self.m.kinds.get(t.name) != "create" and _doc_verb(c) not in ("create", "add", "new", "make", "insert"):
                    # a record that has a name gets a new one: 'renamed to "X"', not a second 'called'; a page made in a
                    # section is called what it is called ("create a new page ... renamed to X", review 34)
                    new = "to " if _doc_verb(c) == "rename" else "renamed to "  # "rename my session called X to "Y""
                    rest = [new + x.removeprefix("called ") if x.startswith("called ") else x for x in rest]
                c += _join_said(c, rest, to=kind == "update" and _doc_verb(c) in _CHANGE_VERBS)
            opts.append(c)
        verb = _doc_verb(t.doc) or name_verb(t.name)
        all_said = [w for _, _, w in [x for x in said if isinstance(x, tuple)]] + [x for x in said if not isinstance(x, tuple)]
        if target:
            if kind == "cancel":
                named = next((w for w in re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", t.name).lower()) if w in _CANCEL_VERBS), None)
                # `boond_candidates_delete` with docs in French: its name's verb ("delete my candidate"), not "cancel my candidate"
                opts.append(f"{verb if verb in _CANCEL_VERBS else named or ('delete' if self.m.kinds.get(t.name) == 'delete' else 'cancel')} {twords}{_join_said('', all_said)}")
            elif verb and (kind == "create" or self.m.kinds.get(t.name) == "create") and (made := self.m.returned_entity(t)) \
                    and made != target[1] and self.m.noun(made):
                # a record made inside the one named, docs in a language the realizer cannot read (`boond_deliveries_create`,
                # "Crée une prestation"): "create a new delivery called Y for the project called X", not "create the project
                # called X called Y" (review 75)
                call = next((x for x in all_said if x.startswith("called ")), None)
                rest = [x for x in all_said if x is not call]
                opts.append(f"{verb} a new {self.m.noun(made)}{' ' + call if call else ''} for {twords}{_join_said('', rest)}")
            elif kind == "update" and all_said and all(x in sc.said_of for x in all_said):
                opts.append(f"change {twords}: {_settings([sc.said_of[x] for x in all_said], self._units, self.m.is_person(target[1]))}")
            elif kind == "update" and all_said:
                opts.append(f"change {twords}: {', '.join('renamed to ' + x.removeprefix('called ') if x.startswith('called ') else x for x in all_said)}")
            elif verb:
                opts.append(f"{verb} {twords}{_join_said('', all_said)}")
        elif verb and ent_noun:
            opts.append(f"{verb} a new {ent_noun}{_join_said('', all_said)}".replace("  ", " "))
        if not opts:
            raise _Skip("docs-no-act")  # no sentence of the docs, nor the tool's name, says what it does
        for o in opts:
            if not names_tool(o, self.tool_names):
                self._ctl_used = o == ctl
                return self._permanently(t, o, target[1] if target else None)
        raise _Skip("tool-words")

    def _permanently(self, t: A.ToolDecl, words: str, ent: str | None) -> str:
        """"permanently delete ..." where the docs say so and another tool only trashes or archives the record: Gmail's
        `delete_message` ("Immediately and permanently delete a message") beside `trash_message`. Plain "delete my
        message" reads as trashing it, whose end state is another (review 77)."""
        if not re.match(r"(?:delete|remove|erase|purge)\b", words) or not re.search(r"\bpermanently\b|\bcannot be undone\b|\bhard[- ]delete",
                                                                                   t.doc or "", re.I):
            return words
        if ent is None:
            return words
        gentle = any(o.name != t.name and self.m.kinds.get(o.name) in ("delete", "update") and any(
            strip_optional(q.type) == A.NamedType(ent) for q in o.params) and re.match(
            r"\s*(?:move|moves|send|sends)\b[^.]{0,40}\btrash\b|\s*(?:archive|archives)\b", o.doc or "", re.I) for o in self.env.tools)
        return "permanently " + words if gentle else words

    def with_units(self, t: A.ToolDecl, c: str, plain: list) -> tuple[str, list]:
        """Numbers in their unit: "climb to a hover altitude of 20 meters", "set the cabin
        temperature to 25 degrees"; a number the clause does not name is said "a speed of 50 km/h"."""

        docs = {p.name: p.doc or "" for p in t.params}
        self._units = {}
        for k, v in getattr(self, "_scalars", None) or []:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            unit = unit_of(k, docs.get(k, ""), t.doc or "")
            if unit is not None:
                self._units[k] = unit
            old = _say_param(k, v)
            head = humanize(norm(k)).split()[-1]
            rng_m = re.search(rf"\b(?:a|an|the) (?:[a-z]+ )?{re.escape(head)} from [\d.]+(?: to [\d.]+)?$", c)
            if rng_m and old in plain:  # "to a position from 0" (the docs' range, cut): "to a position of 0.5"
                plain = [x for x in plain if x != old]
                c = c[:rng_m.start()] + re.sub(r" from [\d.]+(?: to [\d.]+)?$", "", rng_m.group(0)) + f" of {say(v)}" + (f" {unit}" if unit else "")
                continue
            if unit is None or old not in plain:
                continue
            w = humanize(norm(k))
            head = w.split()[-1]
            num = f"{say(v)} {unit}"
            pat = re.compile(rf"\b(?:a|an|the) (?:[a-z]+ )?{re.escape(head)}\b(?! of\b)")
            mm = pat.search(c)
            plain = [x for x in plain if x != old]
            if mm:
                prep = " to " if _doc_verb(c) in _CHANGE_VERBS and not re.search(r"\bto\s*$", c[:mm.start()]) else " of "
                c = c[:mm.end()] + prep + num + c[mm.end():]
            elif re.search(rf"\bat an? (?:[a-z]+ )?{re.escape(head)}\b", t.doc or "", re.I):  # "on or off at a speed"
                c = f"{c} at {num}"
            else:
                plain.append(f"{_a(w)} of {num}")
        return c, plain

    def control(self, t: A.ToolDecl, plain: list, vals: list) -> str | None:
        """A device control in the user's words ("lock the driver door", "turn cruise control off
        with speed 100"): the bool/enum argument becomes the docs' verb (forgec/devicewords.py)."""

        docs = {p.name: p.doc or "" for p in t.params}
        for p in t.params:
            for f in record_fields(self.m.env, strip_optional(p.type)) or ():
                docs.setdefault(f.name, f.doc or "")
        flat = list(getattr(self, "_scalars", None) or vals)
        scalars = [(k, v, docs.get(k, "")) for k, v in flat if isinstance(v, (bool, str))]
        got = control_phrase(t.doc or "", scalars)
        if got is None:
            return None
        phrase, used = got
        if names_tool(phrase, self.tool_names):  # "close the garage door" names garage_door: "close the door"
            phrase = re.sub(r"\b(the|my) (?:[a-z]+ )+([a-z]+)$", r"\1 \2", phrase)
        rest = [x for x in plain if not any(x == _say_param(k, v) for k, v in flat if k in used)]
        phrase, rest = fold_said(phrase, rest)
        phrase, rest = self.with_units(t, phrase, rest)
        return phrase + _join_said(phrase, rest, to=False)

    # ----- read-only tasks
    def ask_by_key(self, sc: _Scenario) -> bool:
        """A question about a record the user names by its key, through a read taking a list of keys
        (a knowledge graph's open_nodes(names)): "what the entity type of the person Dana Sato is"."""
        m = self.m
        for name, t in sorted(m.tools.items()):
            req = m.required(t)
            if m.writes[name] or len(req) != 1 or not isinstance(strip_optional(req[0].type), A.ListType):
                continue
            ke = m.key_entity(req[0].name, req[0].type)
            if ke is None:
                continue
            said: list[str] = []
            e, v = self.named_node(sc, ke, said)
            probe = sc.env.step(name, jcopy({req[0].name: [v]}))
            path = next((f for f, xs in probe.items() if isinstance(xs, list) and xs and isinstance(xs[0], dict) and m.entity_of(xs[0]) == ke), None) if isinstance(probe, dict) else None
            if path is None:
                continue
            cname, r = sc.call(name, {req[0].name: (A.ListLit((e,)), [v])}, "found")
            rname, rec = sc.reason("first", (A.Attr(A.Name(cname), path),), [r[path]], {}, "the_" + norm(ke))
            lists = [f.name for f in m.decl[ke].fields if isinstance(strip_optional(f.type), A.ListType) and rec.get(f.name) and all(_sayable(x) for x in rec[f.name])]
            show = [f for f in m.natural_fields(ke) if _sayable(rec.get(f))] + lists
            if not show:
                raise _Skip("nothing-to-tell")
            f = sc.rng.choice(show)
            sc.nodes.append(A.TellNode(A.Attr(A.Name(rname), f)))
            text = f"what {humanize(f)} are noted for {said[0]}" if f in lists else f"what the {humanize(f)} of {said[0]} is"
            sc.intents.append(_Intent("question", text, tool=""))
            return True
        return False

    def ask_state(self, sc: _Scenario) -> bool:  # noqa: C901 - one walk over the reads
        """A question about a device's current state, through a read returning it ("what the fuel
        level is", "whether the garage light is on"): envs with no records (a car, a home hub) have
        nothing else to ask. A read taking a choice (`displayCarStatus(option: "fuel"|...)`) is asked
        with the choice the user names (the fuel level, asked with option "fuel")."""

        m = self.m
        reads = []
        for name, t in sorted(m.tools.items()):
            req = m.required(t)
            if m.writes[name] or len(req) > 1 or any(m.key_entity(p.name, p.type) for p in t.params):
                continue
            if req and not isinstance(strip_optional(req[0].type), A.EnumType):
                continue
            reads.append((name, req[0] if req else None))
        sc.rng.shuffle(reads)
        for name, p in reads:
            opts = [None] if p is None else list(strip_optional(p.type).values)
            opt = sc.rng.choice(opts)
            r = sc.env.step(name, jcopy({p.name: opt} if p is not None else {}))
            if not isinstance(r, dict):
                continue
            leaves = [((k,), v) for k, v in r.items()] + [((k, k2), v2) for k, v in r.items() if isinstance(v, dict) for k2, v2 in v.items()]
            leaves = [(path, v) for path, v in leaves if (isinstance(v, bool) and len(humanize(norm(path[-1])).split()) > 1) or _sayable(v)]
            leaves = [(path, v) for path, v in leaves if not topic_filler(path[-1], [v])]  # "the current user is marketing campaign"
            # a state field named as some tool's parameter (`which`, `percent`, `temp_f`) holds that call's argument,
            # not the device's state ("what the which is": blind review 24)
            said_params = {q.name for t2 in m.tools.values() for q in t2.params}
            leaves = [(path, v) for path, v in leaves if path[-1] not in said_params]
            if opt is not None:  # the choice the user names is said: its word is in the field's name
                stem = singular(norm(str(opt)))
                leaves = [(path, v) for path, v in leaves if stem in {singular(w) for w in humanize(norm(path[-1])).split()}]
            asks = []
            for path, v in sorted(leaves, key=str):
                w = humanize(norm(path[-1]))
                ws = w.split()
                text = f"whether the {' '.join(ws[:-1])} is {ws[-1]}" if isinstance(v, bool) else f"what the {w} is"
                if opt is not None and not said_in(text, opt):
                    text += f" for the {say(opt).replace('_', ' ')}"  # "what the headlight mode is for the headlights"
                if not names_tool(text, self.tool_names):  # "the thermostat power" names thermostat_power
                    asks.append((path, text))
            if not asks:
                continue
            path, text = sc.rng.choice(asks)
            args = {p.name: (sc.fact(p.name, opt), opt)} if p is not None else {}
            cname, _ = sc.call(name, args, "state")
            e: A.Expr = A.Name(cname)
            for f in path:
                e = A.Attr(e, f)
            sc.nodes.append(A.TellNode(e))
            sc.why = sc.why or sc.rng.choice(["I want to double-check before I head out", "I want to be sure before I leave", "I'm about to set off"])
            sc.intents.append(_Intent("question", text, tool=""))
            return True
        return False

    def _chosen_fields(self, ent: str) -> set[str]:
        """The fields of `ent` its owner sets when making one: the params of the tools that insert it; a status is not
        one (it starts where I set it and moves on without me). Computed once per entity."""
        m = self.m
        if ent not in self._chosen:
            self._chosen[ent] = {norm(p.name) for t in m.tools.values() if m.kinds.get(t.name) == "create" and m.written_entity(t, None) == ent
                                 for p in t.params if not is_status(p.name)}
        return self._chosen[ent]

    def documented_states(self, ent: str, f: str) -> bool:
        """Whether a status field's values are the docs' own (an enum on the record's field), so a count
        by status asks about states the API has, not words the world drew."""
        fd = next((x for x in self.m.decl[ent].fields if x.name == f), None)
        return fd is not None and isinstance(A.strip_optional(fd.type), A.EnumType)

    def question(self, sc: _Scenario) -> None:
        m = self.m
        ents = sorted(m.owned(sc.ukey)) if m.user is not None else sorted(set(m.lister_all) | set(m.lister_by_parent))
        ents = [e for e in ents if e in m.lister_by_user or (e in m.user_list_field and e in m.getter)
                or (m.user is None and (e in m.lister_all or m.lister_by_parent.get(e, ("", "", ""))[2] in m.lister_all))]
        device = not any(not e.name.startswith("ActionLog") for e in m.env.entities)  # no records: a car, a home hub
        if not ents and m.user is None and (self.ask_by_key(sc) or (device and self.ask_state(sc))):
            return
        if not ents:
            raise _Skip("nothing-to-ask")
        ent = sc.rng.choice(ents)
        expr, recs = self.records(sc, ent, stale_ok=False)
        noun = humanize(ent)
        fields = [f for f in m.natural_fields(ent) if all(f in r for r in recs)]
        nums = [f for f in fields if all(isinstance(r.get(f), (int, float)) and not isinstance(r.get(f), bool) for r in recs)]
        stat = [f for f in fields if is_status(f) and all(isinstance(r.get(f), str) for r in recs) and self.documented_states(ent, f)]
        if ent in m.lister_args and m.lister_args[ent]:  # `list_tasks(status: ...)` filters by it: a count is one dictated call
            stat = []  # (blind review 14: "how many of my tasks are in progress" through status "all" and a count, rejected)
        lt = m.tools.get(m.lister_all.get(ent, ""))
        if lt is not None:  # an optional `status` filter on the lister too: the count is one call the user dictates (review 30)
            stat = [f for f in stat if not any(norm(p.name) == norm(f) for p in lt.params)]
        roll = sc.rng.random()
        whose = "my" if m.user is not None or self.owner else "the"  # the owner of the work items asks of "my work items"
        # a bare `total` is money beside a currency or a price; on an invitation it is a paging count (review 29)
        priced = any(re.search(r"(^|_)(currency|price|amount|cost)($|_)", norm(k)) for r in recs[:1] for k in r if norm(k) != "total")
        money = [x for x in nums if is_money(x) and (norm(x) != "total" or priced)]
        if stat and roll < 0.35 and len(recs) <= 20:  # counting 90 downtimes by hand is no question a person asks an agent
            f = stat[0]
            # a state a person says ("closed", "in progress"), not the system's label ("pending (items modified)",
            # "return requested": 4 rejections in reviews 67 and 70, τ-bench retail)
            said = sorted({r[f] for r in recs if not _predicate(_spoken(r[f]), f).startswith('in the "')})
            if not said:
                raise _Skip("no-spoken-state")
            v = sc.rng.choice(said)
            if all(r[f] == v for r in recs):
                raise _Skip("nothing-to-tell")  # every one of them is: counting needs no look at each record
            name, lst = sc.reason("filter", (expr,), [recs], {"by": f, "eq": (sc.fact(f"{norm(ent)}_{f}", v), v)}, f"{_word(v)}_{plural(norm(ent))}")
            cname, _ = sc.reason("count", (A.Name(name),), [lst], {}, f"n_{plural(norm(ent))}")
            sc.nodes.append(A.TellNode(A.Name(cname)))
            text = f"how many of {whose} {plural(noun)}{_in_scope(sc, ent)} are {_predicate(_spoken(v), f)}"
            sc.ask_why = (ask_why(set().union(*map(record_traits, recs)), noun, "count") if m.user is not None else "") or (f"I'm going over where {whose} {plural(noun)} stand" if whose == "my" else "")
        elif money and roll < 0.7 and not _mixed_units(recs):
            f = sc.rng.choice(money)
            src, vals, adj = expr, recs, ""
            if any(record_gone(r) for r in recs):
                raise _Skip("gone-in-total")  # a total over records some of which are cancelled or deleted has two answers (review 23)
            if stat and sc.rng.random() < 0.5 and re.search(r"pay|financ|billing|charge", stat[0]):  # "how much did I spend on my paid orders?"
                g = stat[0]  # (a payment's state only: "my rendered checks" is no spending, review 23)
                pick = [v for v in sorted({r[g] for r in recs}) if 0 < sum(r[g] == v for r in recs) < len(recs)]
                if pick:
                    v = sc.rng.choice(pick)
                    fname, vals = sc.reason("filter", (expr,), [recs], {"by": g, "eq": (sc.fact(f"{norm(ent)}_{g}", v), v)}, f"{_word(v)}_{plural(norm(ent))}")
                    src, adj = A.Name(fname), say(v).replace("_", " ") + " "
            cname, total = sc.reason("sum", (src,), [vals], {"by": f}, f"total_{f}")
            if total in (0, None):
                raise _Skip("nothing-to-tell")
            sc.nodes.append(A.TellNode(A.Name(cname)))
            words = humanize(norm(f))
            if len(money) > 1 or words.split()[-1:] != [words] and not re.fullmatch(r"(?:total )?(?:price|amount|cost|value)|total", words):
                # a record with more than a price: which amount is summed ("the gross purchase amounts of my assets")
                text = f"how much the {plural(words)} of {whose} {adj}{plural(noun)}{_in_scope(sc, ent)} come to in total"
            else:
                text = f"how much {whose} {adj}{plural(noun)}{_in_scope(sc, ent)} come to in total"
            sc.why = ""  # "I want to compare my spending ..." fit a shop's orders, not "how much my assets come to" (review 34)
        else:
            name, rec, words = self.pick(sc, ent, (expr, recs), mine=m.user is not None)
            if _SUPERLATIVE.search(re.sub(r'"[^"]*"', "", words)) and any(record_gone(r) or _ended(r) for r in recs):
                raise _Skip("gone-in-superlative")  # "the project with the earliest due date" among some cancelled: two
                # answers, with them and without (review 85)
            show = [f for f in fields if _sayable(rec.get(f)) and humanize(f) not in words and say(rec.get(f)) not in words
                    and not _own_name(f) and "html" not in norm(f).split("_")  # "what the name of the state in my project is": a person names what they ask about; markup is no answer
                    and not _verb_phrase_name(f)  # "how many expires in days my token has": a field named by a verb phrase (review 34)
                    and _askable_name(f)]  # "the dest namespace replace count of the policy", "the "from" field": schema words
            if whose == "my":  # what I chose when I made it (its origin, its cabin, its title) I know: a person asks what the
                # system decided or keeps (a status, a total, a date set for them), not their own choices (review 60:
                # "what the origin of my reservation ... is")
                chosen = self._chosen_fields(ent)
                show = [f for f in show if norm(f) not in chosen]
            if re.search(r"\b(?:earliest|latest|soonest|oldest|newest|most recent)\b", words):
                # "what end date the project with the earliest due date has": one date asked by another is a pairing of
                # columns, no question a person has (review 37); its status or owner is
                show = [f for f in show if not (isinstance(rec.get(f), str) and _DATE.match(rec[f]))]
            if not show:
                raise _Skip("nothing-to-tell")
            f = sc.rng.choice(show)
            sc.nodes.append(A.TellNode(A.Attr(A.Name(name), f)))
            w = humanize(f)
            if (bound := re.fullmatch(r"(max|min|maximum|minimum) (\w+)", w)) and isinstance(rec.get(f), int) and is_plural(bound.group(2)):
                # "how many nodes my node pool can have at most", not "how many max nodes the nodepool has" (review 95)
                text = f"how many {bound.group(2)} {words} can have at {'most' if bound.group(1).startswith('max') else 'least'}"
            elif _COUNTISH.search(norm(f)) and isinstance(rec.get(f), int) and is_plural(w):
                text = f"how many {w} {words} has"
            elif isinstance(rec.get(f), str) and _DATE.match(rec[f]):
                when = _when_done(f)
                text = f"when {words} was {when}" if when else f"what the {w} of {words} is"
            elif isinstance(rec.get(f), bool):  # "whether my reservation has insurance", not "what the insurance of ... is" (review 60)
                adj = _flag_word(f)
                text = f"whether {words} is {adj}" if adj else f"whether {words} has {w}"
            else:
                text = f"what the {w} of {words} is"
            # a lost confirmation is no reason to ask about a cancelled one
            sc.ask_why = ask_why(record_traits(rec), noun, "detail") if m.user is not None and not record_gone(rec) else ""
        sc.intents.append(_Intent("question", text, tool=""))

    # ----- coherence
    def check(self, sc: _Scenario) -> None:
        """Rejection reasons a task can still have after construction (counted in the summary)."""
        m = self.m
        if sc.writes:
            gold = sc.env.state_hash()
            if gold == m.base_hash:
                raise _Skip("no-op")
            if len(sc.writes) > 1:
                for i in range(len(sc.writes)):
                    env = m.fresh()
                    for j, (tool, vals) in enumerate(sc.writes):
                        if j != i:
                            env.step(tool, jcopy(vals))
                    if env.state_hash() == gold:
                        raise _Skip("redundant-write")
        for n in sc.nodes:
            if isinstance(n, A.CallNode) and m.writes.get(n.tool):
                for a in n.args:
                    for root in _roots(a.value):
                        if root != "user" and root not in sc.roots:
                            raise _Skip("unrelated-argument")

    # ----- the blueprint
    def finish(self, sc: _Scenario) -> A.BlueprintDecl:
        m = self.m
        goal = self.instruction(sc)

        if not all(said_in(goal, v, n) for _, n, v in flatten_facts(sc.facts) if v is not None):
            raise _Skip("fact-unsaid")  # every fact the user knows is in the instruction, said once
        persona = self.persona(sc)
        facts = tuple(A.Fact(k, literal_expr(v)) for k, v in sorted(sc.facts.items()))
        texts = [" ".join(i.text.split()).lower() for i in sc.intents]
        if len(set(texts)) != len(texts):
            raise _Skip("repeated-intent")
        tools = [i.tool for i in sc.intents if i.tool] or ["question"]
        base = "_".join(dict.fromkeys(tools))[:60]
        user = _user_block(goal, persona, facts, sc)
        return A.BlueprintDecl(base, m.env.name, user, tuple(sc.nodes))

    def persona(self, sc: _Scenario) -> str:
        m = self.m
        if m.user is None:
            return self.owner
        u = m.ents[m.user][sc.ukey]
        name = _person_name(u)
        tier = next((u[f] for f in ("membership", "tier", "plan", "level", "status") if isinstance(u.get(f), str)), None)
        who = str(name) if name else f"a {humanize(m.user)}"
        return f"{who}, {_a(say(tier).replace('_', ' ') + ' member')}" if tier else who

    def grounded(self, it: _Intent, salt: int) -> str:
        """Why the user calls, from the first intent's kind, verb, noun and target record (forgec.reasons); "" when none fits."""
        if not it.ground:
            return ""
        verb, doc, ent, rec, described, args = it.ground
        if self._world_traits is None:  # what the env's records are (priced goods, journeys): a few of each entity's
            self._world_traits = world_traits((humanize(e), r) for e in sorted(self.m.ents)
                                              for _, r in sorted(self.m.ents[e].items(), key=lambda kv: str(kv[0]))[:3])
        linked = self._linked(ent, rec)
        hint = {"own": ent == self.m.user, "owner": self.m.user is not None}  # whose record it is; and what the referring
        # expression says of it ("the flight to JFK", "on 2024-05-17")
        hint.update(said_hints(it.text))
        tool = self.m.tools.get(it.tool)
        if tool is not None:  # what the docs say a priority's numbers mean ("lower number = higher priority")
            doc = " ".join([doc or ""] + [p.doc or "" for p in tool.params if re.search(r"priority|urgency", norm(p.name))]
                           + [f.doc or "" for f in (self.m.decl[ent].fields if ent in self.m.decl else ()) if re.search(r"priority|urgency", norm(f.name))])
        return reason_for(it.kind, verb, doc, ent, rec, described, args, self._world_traits, salt + zlib.crc32(it.text.encode()), hint, linked)

    def _linked(self, ent: str, rec: Any) -> list[tuple[str, dict]]:
        """The records `rec` points to by its reference fields, with their nouns: a reservation's flight (by its
        `flight_number`) tells that the reservation is a trip (forgec.reasons.record_traits)."""
        m = self.m
        if not isinstance(rec, dict) or ent not in m.decl:
            return []
        out = []
        for f in m.decl[ent].fields:
            ft = strip_optional(f.type)
            if f.name != m.decl[ent].key and isinstance(ft, A.NamedType) and ft.name in m.decl and ft.name != m.user:
                other = (m.ents.get(ft.name) or {}).get(rec.get(f.name)) if isinstance(rec.get(f.name), (str, int)) else None
                if isinstance(other, dict):
                    out.append((humanize(ft.name), other))
        return out

    def instruction(self, sc: _Scenario) -> str:
        """The whole instruction: who I am, why I call, then each intent (and its condition) in order."""
        rng = sc.rng
        m = self.m
        parts = []
        if m.user is not None:
            u = m.ents[m.user][sc.ukey]
            name = _person_name(u)
            ident = []
            if m.locator is not None:
                ident = [f"my {humanize(f)} is {_q(sc.facts.get(norm(f), _field_anywhere(u, f)))}" for f in m.locator[1]]
            else:
                kf = m.decl[m.user].key
                ident = [f"my {humanize(kf)} is {say(u.get(kf, sc.ukey))}"]
            lead = f"I'm {name}; " if name else "Hi, "
            parts.append((lead + " and ".join(ident) + ".").replace("Hi, my", "Hi, my"))
        for k, v in sc.session.items():  # "My Google email is me@mail.com." before what they want
            words = humanize(norm(k)).split()
            while len(words) > 1 and words[0].lower() in ("user", "my", "current", "your"):
                words = words[1:]  # `user_google_email`: the parameter's "user" is the speaker (review 48: "my user google email")
            parts.append(f"My {' '.join(words)} is {say(v)}.")
        first = sc.intents[0]
        own = re.search(r"because (.+?)(?:,|$)|\(reason: ([^)]+)\)", first.text)
        salt = None if own or sc.why else rng.randrange(3)  # the draw the old fixed phrasings took: the stream stays as it was
        # a condition doubts what a motive asserts: "Since the problem came back, reopen my issue, but only if it is not
        # confirmed" (review 72); a conditional first request is asked without one
        reason = "" if own else sc.why or sc.ask_why or (self.grounded(first, salt or 0) if not first.condition else "")
        sc.why = reason or (own.group(1) or own.group(2) if own else "")
        sentences = []
        for i, it in enumerate(sc.intents):
            if it.kind == "question":
                ask = rng.choice(['Could you tell me', 'Can you check', 'Can you look up'])
                s = f"{reason[0].upper()}{reason[1:]}. {ask} {it.text}?" if reason else f"{ask} {it.text}?"
                reason = ""
            else:
                opener = rng.choice(_OPENERS) if i == 0 else rng.choice(["Also, please", "After that, please", "Then I'd like to", "And please"])
                s = f"{opener} {it.text}"
                if it.condition:  # a record to be made is no "it" to leave as it is (review 69): "otherwise don't"
                    s += f", but only if {it.condition}; " + ("otherwise don't" if it.kind == "create" else "otherwise leave it as it is")
                s += "" if re.search(r"[.!?][\"']$", s) else "."  # 'saying "Done."' ends the sentence already
            sentences.append(s)
        if sentences and reason and sc.intents[0].condition:
            # the motive before a conditional request, not after its "otherwise" ("... otherwise leave it as it is — I no
            # longer need it" read as the reason for leaving it, review 49)
            s0 = sentences[0]
            sentences[0] = f"Since {reason}, {s0 if s0.startswith('I') else s0[:1].lower() + s0[1:]}"
        elif sentences and reason:
            s0 = sentences[0]
            sentences[0] = f"{s0} — {reason}." if s0.endswith(('"', "'")) else s0[:-1] + f" — {reason}" + s0[-1]
        text = re.sub(r"\.(?=:)", "", " ".join(parts + sentences))  # 'whose name is "X".: set its ...' (review 23)
        # the docs' bare "from project" and the scope's "in the project called X" are one place: "delete the branch
        # design-review from the project called X", not "from project in the project called X" (review 34)
        text = count_first(merge_bare_scope(text))
        if not m.user:
            text = text[0].upper() + text[1:]
        return text



_NONE = object()
# a record's place among its siblings (`order`, `childOrder`, `sort_order`, `position`), when its doc (if any) says so:
# "Polynomial order" is no place in a list
_READ_ONLY = re.compile(r"(?:\bread-?only\b|(?<!for )\bread only\b)(?! (?:access|mode|scope|token|permission|transaction|replica|flag))", re.I)
_LIST_POSITION = re.compile(r"(?:child_|item_|sort_|display_|day_)?(?:order|position)")
_POSITION_DOC = re.compile(r"\b(position|order(ing)?|sibling|sort)", re.I)

_NEW_NAMES = ["Maya Lindqvist", "Tomas Reyes", "Grace Adeyemi", "Noah Fischer", "Ines Moreau", "Ravi Menon"]


_END_WORDS = {"end", "ends", "deadline", "due", "until", "finish", "finishes"}


def _after_start(when: str, rec: dict, n: str, rng: random.Random) -> str:
    """A new end (`endDate`, `end_time`) for a record that has a start: one to four weeks after it, in the format
    `when` was made in; `when` as it is where the record has no start date to read."""
    start = next((v for k, v in rec.items() if norm(k).split("_") == ["start" if w == "end" else w for w in n.split("_")]), None)
    if start is None:  # `deadline` beside `planned_start_date`: the start the record (or this request) has
        start = max((v for k, v in rec.items() if set(norm(k).split("_")) & {"start", "begin", "starts", "begins"}
                     and isinstance(v, str) and re.match(r"\d{4}-\d{2}-\d{2}", v)), default=None)
    m0, m1 = (re.match(r"\d{4}-\d{2}-\d{2}", x) if isinstance(x, str) else None for x in (start, when))
    if not (m0 and m1):
        return when
    try:
        d = datetime.date.fromisoformat(m0.group(0)) + datetime.timedelta(days=rng.choice([7, 14, 21, 28]))
    except ValueError:
        return when
    return d.isoformat() + when[10:]


@functools.lru_cache(maxsize=1)
def _first_names() -> frozenset[str]:
    """Given names Faker knows in a few locales, and those of the new people this sampler names."""
    import importlib
    out = {n.split()[0] for n in _NEW_NAMES}
    for loc in ("en_US", "de_DE", "es_ES", "fr_FR", "it_IT", "sv_SE", "en_IN", "nl_NL"):
        prov = importlib.import_module(f"faker.providers.person.{loc}").Provider
        for attr in ("first_names", "first_names_male", "first_names_female"):
            names = getattr(prov, attr, ())
            out |= set(names.keys() if isinstance(names, dict) else names)
    return frozenset(out)


def _person_like(v: Any) -> bool:
    """Whether a name is a person's ("Alice Shah"): two or three capitalized words, the first a given name."""
    return isinstance(v, str) and re.fullmatch(r"[A-Z][a-z'-]+(?: [A-Z][a-z'-]+){1,2}", v) is not None and v.split()[0] in _first_names()
# (city, state, the city's first ZIP code): a new ZIP is a few above it, still in the city (review 70: "Boston, MA 02170"
# is Quincy, from a 3-digit prefix and a random 10-99)
_PLACES = [("Austin", "TX", "78701"), ("Denver", "CO", "80202"), ("Seattle", "WA", "98101"), ("Boston", "MA", "02108")]

_PHRASES = {  # what a person says where a value is their own words (other text: `stdlib.values.said_value`)
    "observation": ["Prefers tea over coffee", "Moved to Berlin last month", "Is learning Japanese", "Presented at the spring conference"],
    "reason": ["I no longer need it", "my plans changed", "I found a better option"],
    "resolution": ["Reset the password and it works now", "The refund went through", "Cleared the cache; fixed"],
    "thought": ["Check the order status first"],
}


def _site_of(rec: dict | None) -> str | None:
    """The web name a named record's site and mail would have ("Carter Ltd" -> carter-ltd), or None (no name, or too long)."""
    own = _name_of(rec) if rec else None
    site = slugify(own) if isinstance(own, str) else ""
    return site if site and len(site) <= 30 else None


def _name_of(rec: dict | None) -> str | None:
    """What the record acted on is called (its name, title or subject), for values said about it."""
    items = sorted((rec or {}).items(), key=lambda kv: not _own_name(kv[0]))  # its own `title` before an `article_subject`
    for k, v in items:
        if isinstance(v, str) and re.search(r"(^|_)(name|title|subject)$", norm(k)) and 0 < len(v) <= (80 if _own_name(k) else 40) and not looks_like_id(v):
            return v
    return None


def _bounds(text: str, n: str) -> tuple[float, float]:
    """(low, high) a number may take, from the docs: "at most 500", "(0 < amount <= 200)", "from 1 to 5"."""
    lo, hi = float("-inf"), float("inf")
    t = text.lower()
    m = re.search(r"at most (?:\$)?(\d+(?:\.\d+)?)", t) or re.search(r"<=\s*(\d+(?:\.\d+)?)", t) or re.search(r"(?:up to|maximum(?: of)?|no more than) (?:\$)?(\d+(?:\.\d+)?)", t)
    if m:
        hi = float(m.group(1))
    m = (re.search(r"from (\d+)\s*(?:\([^)]*\)\s*)?to (\d+)", t) or re.search(r"between (\d+) and (\d+)", t)
         or re.search(r"\((\d+)\s*-\s*(\d+)\)", t) or re.search(r"\b(\d+)\s*-\s*(\d+);", t))
    if m and float(m.group(1)) < float(m.group(2)) <= 100:
        lo, hi = float(m.group(1)), float(m.group(2))
    if re.search(r"must be positive|positive|> ?0|greater than 0", t):
        lo = max(lo, 0.01)
    return lo, hi


def _scalar_items(name: str, v: Any):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _scalar_items(k, x)
    elif isinstance(v, list):
        for x in v:
            yield from _scalar_items(name, x)
    else:
        yield name, v


_DONE_WORDS = frozenset(FINISHED_WORDS - {"closed"} | {"checked"})  # (a closed record is gone already: `record_gone`)


def _done_flags(rec: dict) -> list[str]:
    """The record's own true flags saying its work is over (`completed`, `is_done`, `checked`), by name."""
    return [norm(k) for k, v in rec.items() if v is True and re.sub(r"^(?:is|has_been)_", "", norm(k)) in _DONE_WORDS]


# the times of day that bound one occasion (a start time needs its end time, and the other way round)
_OCCASION_TIME = frozenset({"start_time", "end_time", "starttime", "endtime", "start", "end"})


def _drop_lookups(nodes: list, n0: int, n1: int) -> tuple[list, set[str]]:
    """`nodes` without the lookups `nodes[n0:n1]` made for a write left out, and the names dropped. A lookup a later
    node reads stays, with what it reads in turn: "unless I already have a collection called X" counts the very list
    the parent lookup read (a zotero blueprint named a node it had dropped: `unknown-node`)."""
    needed = set().union(*(_roots(n) for n in nodes[n1:]))
    stay: set[int] = set()
    for n in reversed(nodes[n0:n1]):
        if getattr(n, "name", None) in needed:
            stay.add(id(n))
            needed |= _roots(n)
    gone = {n.name for n in nodes[n0:n1] if isinstance(n, (A.CallNode, A.ReasonNode)) and id(n) not in stay}
    return nodes[:n0] + [n for n in nodes[n0:n1] if id(n) in stay] + nodes[n1:], gone


def _roots(e: Any) -> set[str]:
    out = set()
    for n in A.walk(e):
        if isinstance(n, A.Name):
            out.add(n.id)
    return out


def _word(v: Any) -> str:
    s = re.sub(r"[^a-z0-9]+", "_", str(v).lower()).strip("_")[:20]
    return s or "matching"


def _q(v: Any) -> str:
    return say(v)


def _when_done(field: str) -> str | None:
    """The act a date field records, as a participle: `created_at` -> "created", `updateTime` ->
    "updated" (asked "when was it created?", not "what created at it has"); None for other dates."""
    ws = humanize(field).split()
    if len(ws) != 2 or ws[1] not in ("at", "on", "time", "date"):
        return None
    if ws[0].endswith("ed"):
        return ws[0]
    if is_verb(ws[0]) and ws[0] in ("create", "update", "modify", "publish", "delete", "complete", "archive", "submit", "approve"):
        return participle(ws[0])
    return None


_EVERY = ("all", "any", "every", "everything", "*")


_WIDENS = re.compile(r"\b(?:(?:whether|if) to include|includ(?:e|es|ing)\b(?! only)|show all|list all|return all|also (?:show|return|list))", re.I)


def _widens(doc: str, tool: A.ToolDecl) -> bool:
    """Whether a lister's switch shows more of its own records than its default ("Show all tasks (pending and
    completed)", "Whether to include drill incidents"): the switch's doc names the records the tool returns, so
    "Whether to include the original markup in the response" is no such switch."""
    m = _WIDENS.search(doc)
    ret = strip_optional(tool.returns) if tool.returns is not None else None
    ret = ret.item if isinstance(ret, A.ListType) else None
    if not m or not isinstance(ret, A.NamedType):
        return False
    noun = humanize(ret.name).split()[-1].lower()
    return re.search(rf"\b(?:{re.escape(noun)}|{re.escape(plural(noun))})\b", doc[m.start():m.end() + 60], re.I) is not None
_NARROWS = re.compile(r"^\s*if (?:set(?: to)?|true)\b,?[^.]{0,60}\b(?:only\b|(?:will|are|is) not (?:be )?(?:included|returned|shown)|excluded?\b|omit)", re.I)


def _every_choice(req: list) -> dict:
    """Required parameters that are each a documented choice with an "all" value (`list_tasks(status:
    "all"|"pending"|...)`, GitHub's `state=all`): the arguments that make the read a lister of every
    record, or {} when any required parameter is something else."""
    out = {}
    for p in req:
        t = strip_optional(p.type)
        v = next((x for x in getattr(t, "values", ()) if isinstance(x, str) and x.lower() in _EVERY), None) if isinstance(t, A.EnumType) else None
        if v is None and isinstance(t, A.EnumType) and len(t.values) == 1:
            v = t.values[0]  # `apiVersion: "1.0"`: no choice at all
        if v is None and t == A.PrimType("bool") and _MUST_BE_TRUE.search(p.doc or ""):
            v = True  # Nextcloud's `OCS-APIRequest` "Required to be true for the API request to pass"
        if v is None and t == A.PrimType("bool") and _NARROWS.search(p.doc or ""):
            v = False  # "If true, inactive projects will not be included": off, the listing holds every record (review 38)
        if v is None:
            return {}
        out[p.name] = v
    return out


# `userUploaded`, `precrawledArchive`, `MEMO_COMMENT`: an identifier, not English (review 49: "my notification whose type
# is "MEMO_COMMENT"")
_API_TOKEN = re.compile(r"[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


# a record so flagged is gone for its owner: "only if it is not deleted" is bookkeeping, no condition a person sets
# (review 38); "not archived", "not closed" are states a person sees
_ERASED = {"delete", "remove", "erase", "destroy", "purge", "trash", "drop"}


# flags whose true side means a record is out of use (the side a delete "because I no longer need it" asks for)
# the states that say a record is in use (general English): no delete hangs on one
_IN_USE_STATES = frozenset({"active", "enabled", "published", "live", "running", "online", "open", "available", "visible", "public",
                            "in_use", "current"})
_IDLE_FLAGS = frozenset({"disabled", "inactive", "paused", "suspended", "stopped", "muted", "hidden", "unused", "deprecated",
                         "expired", "blocked", "locked", "offline", "idle", "dormant", "retired"})


def _condition_flag(field: str) -> str:
    """The adjective of a flag a person makes a request hang on ("only if it is not archived"), or "" for a flag
    that says the record is gone (`deleted`, `is_removed`)."""
    w = _flag_word(field)
    return "" if set(lemmas(w).get("VERB", ())) & _ERASED else w


_BEFORE_DELETING = re.compile(r"\bbefore (?:the )?(?:deletion|deleting|removal|removing|you delete)\b|\bafter (?:confirming|checking)\b", re.I)


def _reset_by_default(t: A.ToolDecl, args: dict, rec: dict, ent: str) -> str | None:
    """The field of the record an update leaves to a parameter's documented default that is not the record's value
    (`status: ... = "active"` on an "on hold" project): the docs say the call sets it, though the user asked no such
    change. A parameter names a field by its name, or by the record's kind and the field (`project_name`)."""
    for p in t.params:
        if p.name in args or not isinstance(p.default, A.Literal) or p.default.value in (None, "", [], {}) or (
                isinstance(p.default.value, str) and p.default.value.lower() in ("null", "none")):  # BFCL's `"default": "null"`
            continue
        rest = after_kind(ent, p.name)
        field = next((f for f in rec if norm(f) == norm(p.name) or (rest is not None and norm(f) == rest)), None)
        if field is not None and not isinstance(rec[field], (dict, list)) and rec[field] != p.default.value:
            return field
    return None


def _points_to(doc: str | None, tool: str) -> bool:
    """Whether a tool's doc names `tool` ("Rather than: `boond_projects_search` for the records themselves"):
    the docs send a reader to that tool for what this one does not do."""
    return bool(doc) and re.search(rf"(?<![\w.-]){re.escape(tool)}(?![\w-])", doc) is not None


def _flag_word(field: str) -> str:
    """The adjective a boolean field states (`is_archived` -> "archived", `enabled` -> "enabled",
    `isPublic` -> "public"), or "" when its name is no state (`include_drafts`, `notify`)."""
    ws = humanize(norm(field)).split()
    if len(ws) == 2 and ws[0] in ("is", "was"):
        w = ws[1]
    elif len(ws) == 1:
        w = ws[0]
    else:
        return ""
    pos = lemmas(w)
    return w if (w.endswith("ed") and "VERB" in pos) or ("ADJ" in pos and "NOUN" not in pos) else ""


def _predicate(v: str, field: str) -> str:
    """A state said after "are": an adjective or a participle as it is ("are closed", "are pending"); a word
    English also uses as a noun, or none it knows, as a state ("are in the future state", not "are future")."""
    if " " in v:
        ws = v.split()
        rest = [w for w in ws if w not in PREPOSITIONS]
        if ws[0] in PREPOSITIONS or all(w.isalpha() and lemmas(w) and ("NOUN" not in lemmas(w) or w.endswith("ed")) for w in rest):
            return v  # "in progress", "on hold", "checked in"
        return f'in the "{v}" {"status" if "status" in norm(field) else "state"}'  # not "are return requested" (review 67)
    pos = set(lemmas(v))
    if pos and ("NOUN" not in pos or v.endswith("ed")):
        return v
    return f"in the {v} {'status' if 'status' in norm(field) else 'state'}"


_HANDLE = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)+")


def _in_style_of(made: Any, taken: set[str], rng: random.Random) -> Any:
    """A new record's name in the style its kind's names share: where every one is a handle ("staging-db",
    "rebecca_anderson_7"), a person's name or a topic is made one too ("jacqueline_tate"; review 95: a database user
    "Rebecca Anderson" beside logins). The world's names are the user's data, the one style rule this knows."""
    if not isinstance(made, str) or len(taken) < 3 or not all(_HANDLE.fullmatch(x) for x in taken) or _HANDLE.fullmatch(made):
        return made
    if all(HOST_NAME.fullmatch(x) for x in taken):  # servers named by stage and role: another one of them ("qa-search")
        free = free_host_names(taken)
        return rng.choice(free) if free else made
    sep = "_" if sum("_" in x for x in taken) * 2 > len(taken) else "-"
    return re.sub(r"[^a-z0-9]+", sep, made.lower()).strip(sep) or made


def _is_state_field(n: str) -> bool:
    """Whether a field (by its normalized name) holds a record's state: `status`, `state`, `post_status`."""
    return re.search(r"(^|_)(status|state)$", n) is not None


def _by_key(noun: str, v: Any) -> str:
    """A record named by its key: a path or a person's name as it is ("the file /a/b.md", "the person Dana Sato"),
    a name of another shape quoted ('the topic called "annual-report"', not "the topic annual-report in the db
    cluster", review 95)."""
    if isinstance(v, str) and "/" not in v and not re.fullmatch(r"[A-Z][\w'-]*(?: [A-Z][\w'-]*)*|\S+\.\w{1,5}", v):
        return f'the {noun} called "{v}"'
    return f"the {noun} {v}"


def _spoken(v: Any) -> str:
    """A documented value as a person says it: `ACTIVE` -> "active", `in_progress` -> "in progress"
    (an all-caps constant is the API's spelling, not the user's); anything else as `say` spells it."""
    s = say(v)
    if re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)+", s):  # `byDesign`, `inProgress`: the API's spelling of "by design"
        return humanize(norm(s))
    if re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*", s):  # `Draft`, `On Leave`: a state word in title case, said in lower case
        return s.lower()
    return s.lower().replace("_", " ") if re.fullmatch(r"[A-Z][A-Z0-9_]+", s) or re.fullmatch(r"[a-z_]+", s) else s


def _postal_params(tool: A.ToolDecl) -> frozenset[str]:
    """The parameters of a tool that together give a postal address (a city beside a zip or postal code or a
    street line), flat or as an address record's fields; none when the tool takes no such address."""
    names = {p.name for p in tool.params}
    names |= {f.name for p in tool.params for f in (getattr(strip_optional(p.type), "fields", None) or ())}
    return _postal_names(frozenset(names))


@functools.lru_cache(maxsize=1024)
def _postal_names(names: frozenset[str]) -> frozenset[str]:
    """`_postal_params` on the names alone: cached by them, not by hashing the whole tool (asked per argument)."""
    ws = {n: set(norm(n).split("_")) for n in names}
    has_city = any(w & {"city", "town"} for w in ws.values())
    has_line = any(w & {"zip", "zipcode", "postcode", "postal", "street", "address1", "line1"} for w in ws.values())
    if not (has_city and has_line):
        return frozenset()
    return frozenset(n for n, w in ws.items() if w & {"address", "address1", "address2", "line1", "line2", "street", "city", "town", "state",
                                                       "province", "region", "zip", "zipcode", "postcode", "postal", "country"})


# the params that hold what a message says ("saying ..."), and the words that may qualify them (`comment_text`)
_SAID_TEXT = {"body", "content", "text", "message", "comment", "note", "contents"}
_SAID_OF = {"reply", "post", "email", "mail", "chat", "issue", "task", "review", "new", "main", "full", "plain", "rich"}


def _say_param(name: str, v: Any) -> str:
    n = norm(name)
    if re.search(r"_(html|markdown|md|plain|raw)$", n) and n.count("_") >= 1:
        n = re.sub(r"_(html|markdown|md|plain|raw)$", "", n)  # `comment_html`: "saying ...", not "with comment html" (review 34)
    w = humanize(n)
    if _RECIPIENTS.search(n) and isinstance(v, list) and v and all(isinstance(x, str) and "@" in x for x in v):
        return "to " + " and ".join(v)  # "send an email to ana@example.com", not 'with "to" field ...'
    if isinstance(v, bool):
        return f"{w} {'on' if v else 'off'}"
    if is_money(n) and isinstance(v, (int, float)):
        return f"{money(v, n)}" if n in ("amount", "total") else f"a {w} of {money(v, n)}"
    if isinstance(v, int) and _COUNTISH.search(n):
        if n in ("quantity", "qty", "number", "count"):
            return f"{w} {v}"
        if n.startswith(("number_of_", "num_of_", "no_of_")):  # "4 tickets", not "4 number of tickets"
            w = humanize(n.split("_of_", 1)[1])
            return f"{v} {singular(w) if v == 1 else w}"
        if v == 1:
            w = singular(w)
        return f"{v} {w}" if not n.endswith(("count", "number")) else f"the {w} set to {v}"
    if isinstance(v, str):
        if lang := language_name(n, v):
            return f"in {lang}"  # "a book in Russian", not "the ru language" (review 49)
        vv = v.replace("_", " ") if re.fullmatch(r"[a-z_]+", v) else _spoken(v)
        if n == "subject" or n.endswith("_subject") and not _own_name(name):
            return f'about "{v}"'  # "an email about "X"": a message is not "called" its subject (review 31); nor an article's
        if _own_name(name) and not n.endswith(("first_name", "last_name", "firstname", "lastname")):
            return f"called \"{v}\""  # "a new tag called "Q3"", not "with name Q3"
        if _PERSON_NAME_PARAM.search(n.split("_", 1)[-1] if n.count("_") > 1 else n):
            return f"{w} \"{v}\""  # a person's name keeps its capitals: 'first name "Michelle"' (review 23: "michelle")
        if n.split("_")[-1] in _SAID_TEXT and set(n.split("_")[:-1]) <= _SAID_TEXT | _SAID_OF and " " in v.strip():
            # `text`, `comment_body`, `reply_text`; never `anchor_text` or `alt_text`, a text about another (review 61:
            # 'a comment saying "X" saying "Y"' with the body in Outline's `anchorText`)
            return f"saying \"{v}\""  # "a note saying "...", not "with body "...""
        if re.fullmatch(r"\d{1,2}:\d\d", v) and re.search(r"(^|_)time$", n) and not re.search(r"(end|stop|finish|until)", n):
            return f"at {v}"  # "3 seats at 14:00", not "with time 14:00"
        dt = re.fullmatch(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)(?::00(?:\.0+)?)?(Z|[+-]00:?00)?", v)
        if dt:  # "with event time 2024-05-17 at 18:30", not "2024-05-17T18:30:00" read out (review 16)
            lead = f"{humanize(n[:-3])} on" if n.endswith("_at") else w  # starts_at: "starts on 2024-05-29 at 18:00"
            return f"{lead} {dt.group(1)} at {dt.group(2)}" + (" UTC" if dt.group(3) else "")
        if re.fullmatch(r"\d{4}-\d\d-\d\d", v) and re.search(r"(^|_)(date|day)$", n) and not re.search(r"(due|deadline|end|expir|until|target|start|birth|release|publish|launch|effective|renew|invoice|"
                                                                                           r"issue|posting|hire|close|complet|resol|created|updated|modified|last|next)", n):
            return f"on {v}"  # not "create a fix version ... on 2024-05-23" for its release date (review 75)  # "buy two tickets ... on 2024-05-20"
        if re.search(r"(reason)$", n):
            return f"because {_first_person(vv)}" if re.match(r"(no longer|ordered|bought|made|changed|wrong|damaged|defective|late)", vv) else f"(reason: {vv})"
        if (cont := re.fullmatch(r"(list|folder|calendar|group|notebook|mailbox)_name", n)) and v[:1].isupper():
            return f'in my "{v}" {cont.group(1)}'  # "in my "Work" list", not "with the list name set to work" (review 90)
        if " " in v.strip():
            return f"{w} \"{v}\""
        if re.fullmatch(r"[a-z_ ]+", vv) and (" " in w or w in ("name", "type", "kind", "mode", "format", "value", "names", "types")):
            return f"the {w} set to {vv}"  # not "the watchlist aml report name" (review 23)
        if w in ("status", "state") and re.fullmatch(r"[a-z]+", vv) and (state := as_state(vv)) != vv:
            return f"the {w} set to {state}"  # "with the status set to published", not "with the publish status" (review 95)
        if w in ("status", "state") and re.fullmatch(r"[a-z ]+", vv) and (" " in vv or vv.endswith("ing")):
            return f"the {w} set to {vv}"  # "with the reading status" reads as a kind of status, not status "reading"
        if w in ("priority", "severity", "urgency", "importance") and re.fullmatch(r"[a-z_ ]+", vv):
            return f"{vv} {w}"  # "with low priority", not "with the low priority" (review 50)
        return f"the {vv} {w}" if re.fullmatch(r"[a-z_ ]+", vv) else f"{w} {vv}"  # "the front side", "the basic economy cabin"
    return f"{w} {say(v)}"


def _set_value(name: str, v: Any, units: dict) -> str:
    """A new value as a person says it after "to": "in progress", "$25.00", "3 degrees", "the text" quoted."""
    n = norm(name)
    if is_money(n) and isinstance(v, (int, float)) and not isinstance(v, bool):
        return money(v, n)
    if isinstance(v, (int, float)) and not isinstance(v, bool) and name in units:
        return f"{say(v)} {units[name]}"
    if isinstance(v, (int, float)) and not isinstance(v, bool) and (label := _CODES.get().get(n, {}).get(v)):
        return f'"{label}"'  # "set its matching algorithm to "Any word"", not "to 1" (review 68: a raw code)
    if isinstance(v, str) and (dt := re.fullmatch(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)(?::00(?:\.0+)?)?(Z|[+-]00:?00)?", v)):
        return f"{dt.group(1)} at {dt.group(2)}" + (" UTC" if dt.group(3) else "")  # "to 2024-06-06 at 13:30", not the
        # ISO string read out ("to 2024-06-06T13:30:00", Jira sprints)
    if isinstance(v, str):
        if lang := language_name(n, v):
            return lang  # "set its language to Russian"
        if re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)+|[A-Z][A-Z0-9_]+|[a-z_]+", v) and not _own_name(name):
            sp = _spoken(v)  # a documented choice: `IN_PROGRESS` -> in progress; `TO_REVIEW` quoted after "to" (review 70:
            if _is_state_field(n) and re.fullmatch(r"[a-z]+", sp):
                sp = as_state(sp)  # "set its status to published", not "to publish" (review 95)
            return f'"{sp}"' if sp.split()[0] == "to" else sp  # "to to review")
        return f'"{v}"'  # words the user wrote are quoted
    return say(v)


def _first_person(reason: str) -> str:
    """A documented reason as a clause, its words kept as the docs spell them (the agent passes that value):
    τ-bench's enum "ordered by mistake" -> "it was ordered by mistake", "no longer needed" -> "it is no longer
    needed" ("because ordered by mistake" is no English, review 53)."""
    if re.fullmatch(r"no longer \w+ed\b.*", reason):
        return f"it is {reason}"
    if re.fullmatch(r"\w+ed by mistake.*", reason):
        return f"it was {reason}"
    if re.fullmatch(r"\w+ed (?:my|the) .+", reason):
        return f"I {reason}"  # "changed my mind"
    if re.fullmatch(r"damaged|defective|broken|late", reason):
        return f"it {'arrived' if reason == 'late' else 'is'} {reason}"
    return reason


def _settings(pairs: list[tuple[str, Any]], units: dict | None = None, person: bool = False) -> str:
    """The changes of one update as a clause: 'rename it to "X" and set its notes to "..." and its
    priority to high' (issue 21: sentences, not `notes "..."` slots); a person is "them", "their" (review 26:
    "set its email" of a secretary)."""
    units = units or {}
    it, its = ("them", "their") if person else ("it", "its")
    parts, sets = [], []
    for name, v in pairs:
        n = norm(name)
        if n.startswith(("new_", "updated_")) and len(n.split("_")) > 1:
            # `new_alarm_time` is the alarm time's next value: "set its alarm time to 07:30", never "its new alarm time"
            # (review 33); `new_title` renames it
            n = n.split("_", 1)[1]
            name = n
        if _own_name(name) and isinstance(v, str) and not n.endswith(("first_name", "last_name", "firstname", "lastname")):
            parts.append(f'rename {it} to "{v}"')
        elif re.fullmatch(r"(?:.*_)?assigned_to|assignee", n) and isinstance(v, str):
            parts.append(f"assign {it} to {v}")  # "set its assigned to to X" (review 34)
        elif isinstance(v, bool) and n.startswith("is_"):
            parts.append(f"make {it} {'' if v else 'no longer '}{humanize(n[3:])}")  # is_private: "make it private"
        elif isinstance(v, bool):
            parts.append(f"turn {humanize(n)} {'on' if v else 'off'}")
        else:
            sets.append(f"{its} {humanize(n)} to {_set_value(name, v, units)}")
    if sets:
        parts.append("set " + (", ".join(sets[:-1]) + " and " if len(sets) > 1 else "") + sets[-1])
    return " and ".join(parts) if len(parts) <= 2 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _join_said(c: str, said: list[str], to: bool = True) -> str:
    if not said:
        return ""
    called = [s for s in said if s.startswith(("called ", "about \"", "renamed to ", "on ", 'to "', "inside ", "in the ", "in my ", "for the ", "for my "))]
    lead = [s for s in said if s.startswith(("because", "to ", "all ", "(", "paying with", "at ")) and s not in called]  # 'a new tag called "Q3"', never 'with called'
    saying = [s for s in said if s.startswith("saying ")]  # 'a comment saying "..."' ends the phrase
    rest = [s for s in said if s not in lead and s not in called and s not in saying]
    rest = [s[5:] if s.startswith("with the ") else s for s in rest]  # 'with the subject "X"' joins the other "with"s
    # the new record's own name follows it, before the place it goes: 'a new work item called "X" for the organization
    # called "Y"', never '... for the organization called "Y" called "X"' (review 34)
    called = sorted(called, key=lambda s: 0 if s.startswith(("called ", "about \"")) else 1)
    out = "".join(" " + s for s in called)
    if rest:
        first = rest[0]
        if to and first.startswith(("the ", "my ")) and not first.startswith(("the new", "the number")):
            out += f" to {first}" if not re.search(r"\b(to|with|for)\s*$", c) else f" {first}"
            rest = rest[1:]
        if rest:
            out += " with " + ", ".join(rest[:-1]) + (" and " if len(rest) > 1 else "") + rest[-1]
    to_whom = [s for s in lead if s.startswith("to ")]  # the recipient before what is said to them: 'a draft with the
    for s in to_whom:                                    # subject "X" to a@b.com, saying "..."', not '... saying "..." to a@b.com'
        out += " " + s
    for s in saying:
        out += (", " if rest or to_whom else " ") + s
    for s in lead:
        if s not in to_whom:
            out += f", {s}" if s.startswith(("all ", "paying with")) else " " + s
    return out


@functools.lru_cache(maxsize=256)
def _possessive_pattern(noun: str) -> re.Pattern:
    """"an existing incident's timeline", "the product's name", "a note's title or text": the docs' noun owning a
    thing or two (group 2), said "the title or text of my note called X", not "the title of my note ... or text"."""
    return re.compile(rf"\b(a|an|the|one|this|that|each)\s+(?:(?!(?:of|to|for|a|an|the|from|in|on)\b)[a-z-]+\s+){{0,2}}?"
                      rf"(?i:{re.escape(noun)})'s ((?:[a-z-]+ ){{0,2}}?[a-z-]+(?: (?:or|and) [a-z-]+)?)(?=$|[,.;]|\s+(?:of|to|for|from|in|on|with|by|and|or|as)\b)")


# nouns that only say "one of them" after the record's own noun ("a media item", "a calendar entry")
_GENERIC_HEADS = frozenset({"item", "items", "entry", "entries", "record", "records", "object", "objects", "resource", "resources"})


@functools.lru_cache(maxsize=1024)
def _put_record(c: str, m: re.Match, group: int, words: str) -> str:
    """`c` with the noun phrase `m` matched (its `group`) replaced by the user's words for the record; a noun that only
    modifies the docs' object ("purchase movie tickets") keeps the object: "purchase tickets for the movie ...", not
    "purchase the movie ... tickets"."""
    head = re.match(r"\s+([a-z]+)(?=\s|$)", c[m.end(group):])
    if head and head.group(1) in _GENERIC_HEADS:
        # "Deletes a media item": the record's noun is the thing; "my media called X", not "my media called X item" (review 69)
        return c[:m.start(group)] + words + c[m.end(group) + head.end():]
    if head and head.group(1) not in CLOSED_CLASS and is_plural(head.group(1)) and "NOUN" in lemmas(head.group(1)):
        return c[:m.start(group)] + head.group(1) + " for " + words + c[m.end(group) + head.end():]
    if head and head.group(1) not in CLOSED_CLASS and set(lemmas(head.group(1))) == {"NOUN"} and group == 0:
        # "delete a website configuration from the system": the record's noun only modifies the object, which stays
        # whole ("the configuration of my website called X"), not "my website called X configuration" (review 42)
        return c[:m.start(group)] + "the " + head.group(1) + " of " + words + c[m.end(group) + head.end():]
    return c[:m.start(group)] + words + c[m.end(group):]


def _modifies_next(rest: str) -> bool:
    """Whether the noun before `rest` modifies the next one ("create project webhook policy": the project's
    policy, not the project): then the user's record is not put in its place ("create my oldest project webhook
    policy", review 71)."""
    m = re.match(r"\s+([a-z]+)\b", rest)
    w = m.group(1) if m else ""
    return bool(w) and w not in CLOSED_CLASS and ("NOUN" in lemmas(w) or not lemmas(w)) and not is_verb(w)  # "webhook": no lexicon word


def _bare_object(noun: str) -> re.Pattern:
    """The docs' verb phrase with a bare plural object ("delete incomplete tasks", "archive old
    projects"): the object (group 1), up to two modifiers before the noun, to put the user's record in."""
    # or a bare singular right after the verb, as an API's summary puts it ("Delete Item", "Update Item")
    return re.compile(rf"^\w+\s+((?:(?!(?:of|to|for|from|in|on|and|but|with|all|any|my)\b)[A-Za-z-]+\s+){{0,2}}?(?i:{re.escape(noun)})(?:s|es)\b"
                      rf"|(?i:{re.escape(noun)})\b)(?!')")


def _noun_pattern(noun: str, gap: int, described: bool) -> re.Pattern:
    """"a confirmed reservation", "the repository": a noun phrase of the docs to put the user's words in."""
    if described:  # "an agent of the ticket's team" -> the agent the user named
        return re.compile(rf"\b(a|an|another|the|one|some)\s+(?:(?!(?:of|to|for|a|an|the|from|in|on)\b)[A-Za-z0-9-]+\s+){{0,{gap}}}?"
                          rf"(?i:{re.escape(noun)})\b(?!')(?: of (?:the|a|an|its) [\w']+ \w+)?")
    return re.compile(rf"\b(a|an|the|one|this|that)\s+(?:(?!(?:of|to|for|a|an|the|from|in|on)\b)[A-Za-z0-9-]+\s+){{0,{gap}}}?"
                      rf"(?i:{re.escape(noun)})(?:s|es|sitory|sitories)?\b(?!')")


def _changed_entities(t: A.ToolDecl, decl: dict) -> list[str]:
    """The entities a tool's body changes (inserts into, sets a field of, deletes from, appends to),
    read from its statements: names bound to a record are followed through params, `let` and `for`."""
    bound: dict[str, str] = {}
    for p in t.params:
        pt = A.strip_optional(p.type)
        if isinstance(pt, A.NamedType) and pt.name in decl:
            bound[p.name] = pt.name
    out: list[str] = []

    def root(e: Any) -> str | None:
        while isinstance(e, (A.Attr, A.Index)):
            if isinstance(e, A.Index) and isinstance(e.obj, A.Name) and e.obj.id in decl:
                return e.obj.id  # `Cache[key]`
            e = e.obj
        if isinstance(e, A.Where) and isinstance(e.source, A.Name) and e.source.id in decl:
            return e.source.id
        return bound.get(e.id) if isinstance(e, A.Name) else None

    for x in A.walk(t.body or ()):
        if isinstance(x, A.Let):
            r = x.value.entity if isinstance(x.value, A.Insert) else root(x.value)
            if r:
                bound[x.name] = r
        elif isinstance(x, A.For) and root(x.iter):
            bound[x.var] = root(x.iter)
        if isinstance(x, A.Insert) and x.entity in decl:
            out.append(x.entity)
            if x.bind:
                bound[x.bind] = x.entity
        elif isinstance(x, (A.Set, A.Delete)) or type(x).__name__ == "Append":
            r = root(x.target)
            if r:
                out.append(r)
    return list(dict.fromkeys(out))


def _mentions_user(m: _Model, t: A.ToolDecl) -> bool:
    """A write whose body record names the user (`body.user_id`)."""
    if m.user is None:
        return True
    for p in t.params:
        fields = record_fields(m.env, strip_optional(p.type)) or ()
        if any(m.key_entity(f.name, f.type) == m.user for f in fields):
            return True
    return False


def _with_cause(reason: str, why: Counter) -> str:
    """"no-intent:unfillable-argument": an attempt that made no intent, with what stopped its
    intents most often (ties by name), so an env that yields few tasks says why (`forgec stats`)."""
    if not why:
        return reason
    return f"{reason}:{min(why.items(), key=lambda x: (-x[1], x[0]))[0]}"


_PRODUCT = re.compile(r"\b(?:in|on|from|to|with|via|using|of)\s+(?:the\s+|your\s+|a\s+)?([A-Z][A-Za-z0-9]*[a-z0-9][A-Za-z0-9]*(?:\s[A-Z][A-Za-z0-9]+)?)\b")


def _product_name(docs: list[str]) -> str | None:
    """The product the docs say they work in: the proper noun most tool docs end on ("... in Datadog",
    "... from Todoist", "Search tasks in Asana"), when at least a quarter of them (and two) name it."""
    seen: Counter = Counter()
    for d in docs:
        seen.update({m.group(1) for m in _PRODUCT.finditer(d) if m.group(1).split()[0].lower() not in CLOSED_CLASS})
    if not seen:
        return None
    name, n = seen.most_common(1)[0]
    return name if n >= 2 and 4 * n >= len(docs) else None


def _participle_base(tool: str, ent: str) -> str:

    parts = norm(tool).split("_")
    return participle(parts[0]) + "_" + (norm(ent) if ent else parts[-1])


def _user_block(goal: str, persona: str, facts: tuple, sc: _Scenario) -> A.UserBlock:
    """The blueprint's `user { ... }`: the scenario clauses when the language has them."""
    fields = getattr(A.UserBlock, "__dataclass_fields__", {})
    kw: dict[str, Any] = {"goal": goal, "persona": persona, "facts": facts}
    if "reason" in fields and sc.why:
        kw["reason"] = sc.why
    if "unknown" in fields:
        said = {" ".join(re.split(r"[\s_\-]+", f.name.strip().lower())) for f in facts}
        kw["unknown"] = tuple(u for u in dict.fromkeys(sc.unknown) if " ".join(u.lower().split()) not in said)
    if "intents" in fields and hasattr(A, "Intent"):
        kw["intents"] = tuple(A.Intent(i.text, i.condition) for i in sc.intents)
    return A.UserBlock(**kw)


# --------------------------------------------------------------------------- entry point


def sample_scenarios(env: A.EnvDecl, module: Any, world_state: dict, graph: ToolGraph, config: SampleConfig | None = None) -> SampleResult:
    """Up to `config.tasks_per_env` user-scenario blueprints for `env` (seeded, deterministic)."""
    cfg = config or SampleConfig()
    token = _MINOR_UNITS.set(minor_units(env))
    codes = _CODES.set(coded_numbers(env))
    titles = _TITLE_FIELDS.set(frozenset(f.name for e in env.entities for f in e.fields if titled_by_doc(f.name, f.doc or "")))
    try:
        with world_of({e.name: {"doc": e.doc} for e in env.entities}):  # a software team's new project is "Payments API" (stdlib.values)
            return _sample_scenarios(env, module, world_state, graph, cfg)
    finally:
        _TITLE_FIELDS.reset(titles)
        _CODES.reset(codes)
        _MINOR_UNITS.reset(token)


def _sample_scenarios(env: A.EnvDecl, module: Any, world_state: dict, graph: ToolGraph, cfg: SampleConfig) -> SampleResult:
    from forgec.synth.acts import acts_view  # here: forgec.synth imports this module

    env = acts_view(env)  # each act of a split tool (`@case`) by its own docs
    s = _Sampler(env, module, world_state, graph, cfg)

    gate = Gate(env, module, world_state, s.m.writes, fresh=s.m.fresh, session=frozenset(s.m.session))  # every task passes it, or is counted by reason
    max_attempts = cfg.max_attempts or 12 * max(1, cfg.tasks_per_env)
    seen: set[tuple] = set()
    families: Counter = Counter()  # a benchmark wants many kinds of task, not one template filled 120 times
    family_cap = max(4, math.ceil(cfg.family_share * cfg.tasks_per_env))
    counters: Counter = Counter()
    rejected: Counter = Counter()
    out: list[SampledBlueprint] = []
    attempts = 0
    while len(out) < cfg.tasks_per_env and attempts < max_attempts:
        if attempts >= 300 and not out:
            break
        attempts += 1
        rng = random.Random(f"forgec-scenario:{env.name}:{cfg.seed}:{attempts}")
        try:
            decl, sc = s.build(rng)
        except _Skip as r:
            rejected[r.reason] += 1
            continue
        except Exception as e:  # noqa: BLE001 - an env the sampler does not understand: count, keep going
            if os.environ.get("FORGEC_DEBUG"):
                raise
            rejected[f"internal:{type(e).__name__}"] += 1
            continue
        cand = candidate_of(decl.user.goal, [i.text for i in sc.intents if i.kind != "question"], decl.nodes, sc.facts,
                            sc.writes, read_only=not sc.writes, identity=sc.ukey if s.m.user is not None else None)
        why = gate.check(cand)
        if why:
            rejected[why] += 1
            s.refused.update({i.tool for i in sc.intents if i.tool in s.m.writes})
            continue
        # the same request, however it is opened ("Could you tell me" / "Can you check"), is one task
        who = None if not sc.writes else sc.ukey  # the same question is one task, whoever asks it (a template, not a new task)
        # ... and the same words are one request, whichever tool the gold path takes (review 27: one "delete my item
        # called X" three times, with three different per-type delete tools)
        key = (who, tuple((i.kind, i.text, i.condition) for i in sc.intents))
        if key in seen:
            rejected["duplicate"] += 1
            continue
        seen.add(key)
        if is_dictated_chain(cand, gate):  # a form the user fills in: no lookup, no decision (rubric 3)
            rejected["dictated-id" if dictates_an_id(cand) else "dictated-chain"] += 1
            continue
        if s.dictates_a_record_key(decl):  # "add a note to the document with id 25": nobody knows that
            rejected["dictated-id"] += 1
            continue
        why = cfg.evolve.verdict(decl, attempts) if cfg.evolve is not None else None  # issue 26: evolve.json (forgec/evolve.py)
        if why:
            rejected[why] += 1
            continue
        family = tuple(n.tool for n in decl.nodes if isinstance(n, A.CallNode))  # a template: the same calls in the same order
        if families[family] >= family_cap:
            rejected["template-cap"] += 1
            continue
        families[family] += 1
        _emit(s, env, cfg, decl, sc, attempts, counters, out)
    return SampleResult(out, dict(sorted(s.coverage.items())), dict(sorted(rejected.items())), attempts, 0, dict(sorted(s.left_out.items())))


def _emit(s: "_Sampler", env: A.EnvDecl, cfg: SampleConfig, decl: A.BlueprintDecl, sc: "_Scenario", attempts: int,
          counters: Counter, out: list) -> None:
    """Name a gated scenario, count its coverage and append its blueprint (text with its header) to `out`."""
    counters[decl.name] += 1
    name = f"{decl.name}_{counters[decl.name]}"
    decl = A.BlueprintDecl(name, decl.env, decl.user, decl.nodes)
    stats = blueprint_stats(decl, s.m.writes)
    for n in decl.nodes:
        if isinstance(n, A.CallNode) and n.tool in s.coverage:
            s.coverage[n.tool] += 1
    header = [f"scenario sampled by forgec: env {env.name}, seed {cfg.seed}, attempt {attempts}",
              "stats: " + ", ".join(f"{k} {v}" for k, v in stats.items())]
    if sc.unknown:
        header.append("the user does not know: " + ", ".join(dict.fromkeys(sc.unknown)))
    for i in sc.intents:
        header.append(f"intent ({i.kind}{', condition holds' if i.condition and i.done else ', condition fails' if i.condition else ''}): {i.text}")
    header = [" ".join(h.split()) for h in header]  # a comment is one line: a value's newline would end it (DigitalOcean)
    text = format_blueprint_text(decl, header, f"{name}.forge")
    out.append(SampledBlueprint(name, decl, text, stats))
