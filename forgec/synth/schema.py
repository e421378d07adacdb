"""State schema inference: ToolDoc IR -> entities, keys, fields, relations, records, globals.

The rules backend reads only what the docs say (names, types, enums, HTTP paths,
MCP annotations, descriptions) and decides, per environment:

* which **entities** exist and their **key field** — from id-like names (`order_id`,
  `orderId`, `item_ids`, `{kernel_id}` path params, `ticket_id: integer` -> int key),
  path collections (`/api/sessions/{session}` -> Session), name-like keys that several
  tools share (`repo_path`, `branch_name`), and the nouns of list/search/create tools;
* their **fields** — from documented return schemas, then from parameters of
  create/update tools (`modify_user_address(user_id, address1, ...)` -> `address: Address`),
  then from search filters (`find_user_id_by_email(email)` -> `email: str`);
* **relations** — a field `user_id` inside Order -> `user_id: User`; `reservations: list[str]`
  of ids -> `list[Reservation]`; "details of a user, including their orders" -> `orders: list[Order]`;
* **status enums** — from status adjectives in tool names (`cancel_pending_order` -> "pending")
  and quoted target states in descriptions ("status will be changed to 'return requested'");
* **globals** (`state { ... }`) — singletons read by parameterless tools (`/api/status`,
  `/api/me`), and a clock `now` when a tool asks for the current time.

Everything here is deterministic: dicts keep insertion order and the input order of
tools is the only order used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from forgec import ir
from forgec.english import DETERMINERS, ENGAGING_VERBS, OPPOSITE_VERBS, PREPOSITIONS, UNNAMED_RECORDS, act_noun, participle, verb_lemma, verb_of_noun, is_plural, lemmas, is_verb, plural, singular
from forgec.stdlib.values import is_person
from forgec.wording import CALL_SWITCHES, humanize, pattern_text
from forgec.lang import ast as A

from . import prose
from .names import RESERVED, after_kind, entity_name, ident, pascal, snake, tokens

# --------------------------------------------------------------------------- lexicon

READ_VERBS = {"get", "fetch", "retrieve", "show", "shows", "describe", "read", "view", "inspect", "check", "load", "display", "lookup", "returns", "return_"}
SEARCH_VERBS = {"search", "find", "list", "lists", "query", "filter", "browse", "scan", "look"}
CREATE_VERBS = {"create", "creates", "add", "adds", "new", "book", "make", "register", "insert", "post", "append", "issue", "submit", "upload", "start", "open", "generate", "schedule", "place", "send", "commit", "records", "record", "copy", "duplicate", "clone", "reserve", "enroll", "invite", "buy", "purchase", "rent"}
UPDATE_VERBS = {"update", "updates", "modify", "edit", "change", "set", "rename", "patch", "move", "assign", "replace", "exchange", "upgrade", "downgrade", "switch", "switches", "checkout", "restore", "toggle", "enable", "disable", "mark", "return", "save", "apply", "approve", "reject", "pay", "refund", "confirm", "activate", "deactivate", "reopen", "resolve", "deposit", "withdraw", "charge", "transfer", "checkin", "ship", "suspend", "complete", "publish", "unassign"}
DELETE_VERBS = {"delete", "deletes", "remove", "removes", "cancel", "kill", "destroy", "drop", "close", "revoke", "terminate", "unregister", "erase", "purge", "archive", "unsubscribe"}
ALL_VERBS = READ_VERBS | SEARCH_VERBS | CREATE_VERBS | UPDATE_VERBS | DELETE_VERBS
# verbs that also name the thing they create (`git_commit` creates a Commit)
NOUN_VERBS = {"commit", "post", "record", "upload", "comment", "note", "tag", "bookmark", "message"}

STOP = {"all", "by", "details", "detail", "info", "information", "of", "the", "a", "an", "for", "to", "with", "from", "in", "on", "and", "or", "my", "current", "id", "ids", "data", "entire", "whole", "specific", "existing", "new"}
STATUS_WORDS = {"pending", "delivered", "active", "inactive", "open", "closed", "draft", "published", "processed", "shipped", "completed", "confirmed", "cancelled", "canceled", "expired", "paid", "unpaid", "approved", "rejected", "archived", "running", "stopped", "suspended", "scheduled", "booked", "locked", "unlocked", "failed", "succeeded", "enabled", "disabled", "resolved", "unresolved", "assigned", "unassigned", "overdue", "returned", "refunded"}
# past tense of verbs whose effect is a status change
STATUS_AFTER = {"cancel": "cancelled", "close": "closed", "archive": "archived", "approve": "approved", "reject": "rejected", "confirm": "confirmed", "activate": "active", "deactivate": "inactive", "refund": "refunded", "pay": "paid", "resolve": "resolved", "reopen": "open", "terminate": "terminated", "revoke": "revoked", "enable": "enabled", "disable": "disabled", "return": "returned", "checkin": "checked_in", "ship": "shipped", "suspend": "suspended", "assign": "assigned", "unassign": "unassigned", "complete": "completed", "publish": "published"}
# verbs whose status change is used only when the entity's documented status enum has the
# value (`assign_ticket` sets the assignee; "assigned" is a status only if the docs say so)
STATUS_IF_DOCUMENTED = {"checkin", "ship", "suspend", "assign", "unassign", "complete", "publish", "return"}
# verbs that move a record to another status, not out of existence
STATUS_VERBS = {"cancel", "close", "archive", "approve", "reject", "confirm", "activate", "deactivate", "refund", "pay", "resolve", "reopen", "terminate", "revoke"} | STATUS_IF_DOCUMENTED
MODIFIER_PARAMS = {"limit", "offset", "page", "page_size", "per_page", "max_count", "count", "max_results", "sort", "sort_by", "order_by", "cursor", "context_lines", "format", "verbose", "include", "fields", "hash", "timeout", "ordering"}
# A parameter that pages, sorts or text-searches the results is no field of the records. Read from the docs' own
# sentence ("Number of issues to return", "Page token for the next page", "Cursor for pagination"), else the
# name (snake-cased: `pageToken`, `PerPage`, `maxResults` are the same words).
_RESULTS_DOC = re.compile(
    r"\b(?:pagination|paginate|paging|per[ -]page|cursor|offset|next[ -]page|page[ -](?:token|number|size)|"
    r"(?:max(?:imum)?|number|count|how many)\b[^.;]{0,30}?\b(?:to (?:return|fetch|retrieve|list|show)|returned|per (?:page|request|call))|"
    r"sort(?:ed|ing)? (?:by|order)|order(?:ed|ing)? by|sort order|search (?:query|string|term|text)|query string|free[- ]text)\b", re.I)
QUERY_PARAMS = {"q", "query", "search", "search_query", "search_term", "keyword", "keywords", "page_token", "next_page_token",
                # cursors and OData paging (`starting_after`, `$skip`, `$top`): where a listing starts, not a field
                "starting_after", "ending_before", "after", "before", "skip", "top", "skiptoken", "continuation_token"}


# how a request is made, not what a record holds: selectors, masks, dry runs, "include archived" switches
# (`label_selector`, `updateMask`, `dry_run`, `all_namespaces`, `include_archived`), by the name's words or its doc
REQUEST_WORDS = {"selector", "selectors", "mask", "filter", "filters", "pattern", "patterns", "regex", "glob"}  # "name_pattern": how a search matches (review 29)
REQUEST_PARAMS = {"all_namespaces", "minified", "pretty", "expand", "embed", "force"} | CALL_SWITCHES  # how a call is made, never a record's field (review 28)
_REQUEST_DOC = re.compile(r"\b(?:dry[- ]run|field mask|(?:label|field) selector|selector to filter|"
                          r"whether to (?:include|return|show|expand)|if (?:set|true),? (?:also )?(?:include|return|show)s?|"
                          # how a search is made, not what a record holds: "Which date field to filter on", "Type of
                          # content to search", "how to match" (blind review 20: asked back as "the date field of the record")
                          r"which \w+(?: \w+)? (?:field|attribute|column) to|(?:type|kind) of \w+ to search|how to match|"
                          r"(?:optional )?fields to (?:include|return)|"
                          # "The start date and time of the query window", "The text to search for within the title":
                          # where and what a search looks, no value a record holds (calendar events: every event held them)
                          r"(?:query|search|time) window|window to search|(?:text|string|term|words?) to search for|"
                          # "Match only in subject field", "Match any sender from this domain": how a search matches
                          r"match (?:only|any|all|exactly)\b|match exact|\bto match\b|(?:query|search|matching) mode\b|"
                          # "Only emails larger than this size in KB", "True for unread only": which records a bulk call touches
                          r"only \w+ (?:larger|smaller|older|newer|before|after) than|true for \w+ only|"
                          # "If true, inactive projects will not be included in the result set", "If true, only root
                          # projects will be returned": a switch on what a listing returns (review 38)
                          r"if (?:set(?: to)?|true)\b,?[^.]{0,60}\b(?:will|are|is) (?:not )?(?:be )?(?:included|returned|excluded|shown|omitted)\b|"
                          # "Filter for projects owned by current user", "Current user's password": who calls, which is no
                          # value a record holds (review 38: "only if it is not owned" on "my project")
                          r"(?:filter|limit|return|only|restrict)\w*\b[^.]{0,60}\b(?:the )?(?:current|authenticated|calling|logged[- ]in) user\b|"
                          r"^\s*(?:the )?(?:current|authenticated|calling) user's)", re.I)


def is_modifier(p: ir.Param) -> bool:
    """Whether a parameter shapes the request (pages, sorts, text-searches, selects, masks, dry-runs)
    rather than naming a field of the records."""
    if p.type.values and {str(x).lower() for x in p.type.values} <= {"asc", "desc", "ascending", "descending"}:
        return True  # a sort direction
    if p.type.values and any(re.search(r"(?:^|_)(?:by|to|for)_me$|^(?:mine|me)$", str(x).lower()) for x in p.type.values):
        return True  # `scope: created_by_me|assigned_to_me|all`: who calls, no state of a record (review 38)
    if plumbing(p):
        return True  # `apiVersion: "1.0"`, `OCS-APIRequest: true`: the request's envelope, no field of a record
    if p.type.values and len(p.type.values) > 1 and {str(x).lower() for x in p.type.values} <= _OUTPUT_FORMATS:
        return True  # `response_format: markdown|json`: how the answer is written, not what a record holds
    if p.type.values and (tokens(p.name)[-1:] in (["detail"], ["verbosity"]) or tokens(p.name)[-2:] == ["detail", "level"]
                          or len({str(x).lower() for x in p.type.values} & _DETAIL_LEVELS) >= 2):
        return True  # `detail: keys_only|summary|full`: how much of each record the answer shows (review 56: Zotero's
        # collection listing filtered items by a `detail` "field" and ignored the collection)
    if p.type.kind == "number" and snake(p.name) in _CURSOR_WORDS:  # a fractional `top` is a position (a shape's top
        return bool(_RESULTS_DOC.search(p.description or ""))           # edge), unless its doc counts results
    return shapes_request(p.name, p.description or "", p.type.kind in ("integer", "number", "string"))


_DETAIL_LEVELS = {"summary", "full", "minimal", "verbose", "compact", "brief", "keys_only", "ids_only"}
_OUTPUT_FORMATS = {"markdown", "md", "json", "html", "text", "plain", "csv", "xml", "yaml", "concise", "detailed"}
_PAGING = {"page", "offset", "cursor", "page_number", "page_token"}
# a filter the docs say falls back to today ("If not provided, defaults to current date"): the env needs a clock, and
# the filter reads today's records when left out (effects._filters)
TODAY_DEFAULT = re.compile(r"\bdefaults?\s+(?:is\s+|to\s+)?(?:the\s+)?(?:current\s+(?:date|day)|today(?:'s date)?)\b", re.I)
# a Django field lookup closing a query parameter's name (the filter syntax of Django REST framework APIs)
_LOOKUP = re.compile(r"\w__(?:i?exact|i?contains|i?startswith|i?endswith|gte?|lte?|in|isnull|range|i?regex|year|month|day|date|id|id__in|id__all|id__none)$")
_CURSOR_WORDS = {"after", "before", "skip", "top"}  # OData/Stripe cursors by name, but also plain words


def pages_with(t: ir.Tool, p: ir.Param) -> bool:
    """`length`/`start`/`size` beside a `page` or `offset` param: how much of the listing to return
    (`GET /appointments?page=&length=`), not a field of the records."""
    return (p.type.kind in ("integer", "number") and tokens(p.name)[-1:] in (["length"], ["size"], ["start"], ["skip"], ["count"], ["per"])
            and any(snake(q.name) in _PAGING for q in t.params if q is not p))


def shapes_request(name: str, doc: str, scalar: bool = True) -> bool:
    """`is_modifier` by a parameter's name and doc alone (the scenario sampler reads typed params: a
    person never dictates one of these, "offset 75")."""
    n = snake(name)
    if name in MODIFIER_PARAMS or n in MODIFIER_PARAMS or n in QUERY_PARAMS or n in REQUEST_PARAMS:
        return True
    if _LOOKUP.search(name):
        return True  # Django REST's `name__iexact`, `created__gte`: a filter on `name`, never a field of its own (review 68)
    toks = tokens(name)
    if toks and (toks[-1] in REQUEST_WORDS or toks[0] in ("include", "exclude", "with")):
        return True
    if toks == ["all"] or re.match(r"\s*shows? all\b", doc, re.I):
        return True  # Dex's `list_tasks(all)` "Show all tasks (pending and completed)": which records a listing shows, no
        # field of one (review 77: `list_tasks(all=true)` showed the 43 tasks whose stored `all` was true)
    if toks in (["state", "event"], ["status", "event"]):
        return True  # GitLab's `state_event: close | reopen`: the act an update performs, no state a record holds
    if toks in (["asc"], ["desc"]) or "facet" in toks or "facets" in toks or toks[-2:] in (["in", "last"], ["within", "last"]):
        return True  # SonarQube's `asc`, `facets`, `facet_mode`, `created_in_last`: how results are ordered, counted or
        # windowed (review 77: issues holding all three)
    if len(toks) == 1 and toks[0] in ("delete", "remove", "destroy", "purge", "erase", "trash"):
        return True  # `update_task(delete)` "Set to true to delete the task": what the call does, no flag a record keeps
    if len(toks) >= 2 and toks[-1] == "mode" and set(lemmas(toks[0])) == {"VERB"}:
        return True  # Zotero's `attach_mode` "'auto' attaches an OA PDF": how the call does its work; a `payment_mode`
        # or `transport_mode` (nouns) is what the record is
    if toks and toks[-1] == "reason" and re.search(r"\baudit\b", doc, re.I):
        return True  # "Reason for the action (audit log)": said to the log, not kept on the channel
    if toks in (["since"], ["until"]):
        return True  # `list_issues(since)`, documented or not: where a listing starts, never a place or a record's field
    if toks in (["from"], ["to"]) and re.search(r"\b(?:timestamp|date|time)\b", doc, re.I):
        return True  # "Timestamp to list deployments from": where a listing starts, no field (a trip's `from` is a place)
    if len(toks) > 1 and (toks[-1] in ("any", "not", "ne", "nin", "contains", "icontains") or toks[0] == "opt"):
        # `assignee_any`, `assignee_not` (Asana): a test on another field, `opt_fields`: what the reply holds; no field
        # of the records (review 31: tasks holding "assignee_any": "kitchen renovation")
        return True
    if len(toks) > 1 and "query" in (toks[0], toks[-1]):
        return True  # `queryStartDate`: where a listing starts (review 27); `subjectQuery`: text searched for (review 37)
    if toks and toks[0] == "show" and toks[-1] not in ("date", "time", "type", "name", "id", "start", "end", "format"):
        return True  # `show_details` asks for more output; a movie's `show_date`, `show_time`, `show_type` are the showing's
    if (len(toks) > 1 and toks[0] == "sort") or toks[:2] == ["order", "by"] or set(toks) & {"ascending", "descending"}:
        return True  # `sort_ascending`, `sort_by`, `order_by`: how the list is ordered, never a field it filters on (review 48:
        # Asana's search kept only tasks whose `sort_ascending` was false)
    if len(toks) == 2 and toks[0] in ("search", "match", "sort", "filter", "query", "q") and toks[1] in ("type", "mode", "field", "kind"):
        return True  # `search_type`, `match_mode`, `qmode`: how the search runs
    if toks and (toks[0] == "if" or toks[:2] in (["create", "missing"], ["on", "conflict"], ["replace", "existing"], ["skip", "existing"])
                 or toks[:2] == ["search", "all"]):
        # `if_exists`, `If_Match`, `ifNotExists`, `create_missing_collections`, `search_all_libraries`: what the call
        # does when something is there or not, or where it looks; no field of the record (review 56: Zotero items
        # holding `if_exists` and `create_missing_collections`)
        return True
    if toks and toks[-1] in ("field", "column") and re.search(rf"\b{toks[-1]}\b", doc, re.I):
        return True  # `date_field` "Optional explicit date field override": which field the search reads, no value of one
    if _REQUEST_DOC.search(doc):
        return True
    return scalar and bool(_RESULTS_DOC.search(doc))


KEYISH_SUFFIX = {"name", "number", "code", "path", "slug", "sku", "handle", "key"}
QUALIFIERS = {"new", "old", "target", "source", "base", "parent", "current", "original", "selected", "primary", "from", "to", "other", "src", "dst"}

GENERIC_KEYS = {"id", "uuid", "gid", "guid", "uid", "key", "name", "sid"}
BODY_PARAMS = {"body", "model", "payload", "data", "request", "input", "params"}
BALANCE_FIELDS = ("balance", "credit", "credits", "travel_credit", "store_credit", "funds", "wallet_balance")
AMOUNT_PARAMS = ("amount", "value", "credit", "sum")

KINDS = ("read", "search", "create", "update", "delete", "action")


# --------------------------------------------------------------------------- data


@dataclass
class Field:
    name: str
    type: A.TypeExpr
    doc: str = ""
    default: A.Expr | None = None


@dataclass
class Entity:
    name: str
    key: str
    key_type: str = "str"  # "str" | "int"
    fields: dict[str, Field] = field(default_factory=dict)
    doc: str = ""
    aliases: list[str] = field(default_factory=list)  # wire names of params that denote one of these
    synthetic_key: bool = False
    documented: set[str] = field(default_factory=set)  # the fields a documented return schema gives it (its own words)


@dataclass
class Record:
    name: str
    fields: dict[str, Field] = field(default_factory=dict)
    doc: str = ""


@dataclass
class ToolView:
    """Per-tool facts shared by schema inference and effect synthesis."""

    tool: ir.Tool
    name: str  # identifier
    kind: str
    toks: list[str]  # name tokens without the env-wide prefix
    verb: str | None
    nouns: list[str]  # name tokens that are not verb/stop words (before any "by")
    by: list[str]  # tokens after "by" (find_user_id_by_email -> ['email'])
    target: str | None = None  # entity the tool is about
    key_param: str | None = None  # param bound to the target record
    refs: dict[str, str] = field(default_factory=dict)  # param -> entity (entity-typed params)
    list_refs: dict[str, str] = field(default_factory=dict)  # param -> entity (list of keys)
    fresh_key: str | None = None  # create tools: param supplying the new key
    status_pre: str | None = None
    status_post: str | None = None
    status_flag: str | None = None  # the record's own bool for `status_post` (`isArchived` for "archived"): set, no status made up
    flag_on: bool = True  # what `status_flag` is set to: false for the undoing verb of a pair (`untrash_message`)
    status_allowed: list[str] = field(default_factory=list)  # "a confirmed reservation": required before
    status_forbidden: list[str] = field(default_factory=list)  # "checked-in reservations cannot be cancelled"
    field_noun: str | None = None  # get_order_status -> "status"
    group: tuple[str, str, tuple[str, ...]] | None = None  # (field, Record, params) grouped update
    global_name: str | None = None  # singleton read
    child: tuple[str, str] | None = None  # (entity, ref field) listed by this read
    flag_preds: dict[str, tuple[str, str, Any]] = field(default_factory=dict)  # bool filter -> (field, op, number)
    facts: tuple = ()  # prose.Fact per sentence of the description (forgec/synth/prose.py)
    cites: dict[str, str] = field(default_factory=dict)  # "status_post"/"status_pre" -> the sentence it was read from
    cited: list = field(default_factory=list)  # (statement, sentence) written from the prose, for env.forge comments
    link: tuple[str, str, bool] | None = None  # (member param, list field, adding): `firewall_add_droplets` (`_links`)


@dataclass
class Schema:
    env: ir.Environment
    entities: dict[str, Entity] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    globals: dict[str, Field] = field(default_factory=dict)
    views: dict[str, ToolView] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    session: frozenset = frozenset()  # session_params(env): the caller's account, on every tool
    _owners: dict | None = None
    _alias: dict = field(default_factory=dict)
    _alias_sig: tuple | None = None
    _lists_at: dict | None = None  # GET path -> the list fields its documented record has (`_nested_collection`)

    def list_owners(self, ename: str) -> list[tuple[str, str]]:
        """(entity, field) pairs whose field is a `list[ename]` (computed once, after inference)."""
        if self._owners is None:
            self._owners = {}
            for other in self.entities.values():
                for fname, f in other.fields.items():
                    t = strip_optional(f.type)
                    if isinstance(t, A.ListType) and isinstance(t.item, A.NamedType):
                        self._owners.setdefault(t.item.name, []).append((other.name, fname))
        return self._owners.get(ename, [])

    def ref_of(self, name: str) -> str | None:
        """Entity denoted by an id-like name (`order_id`, `orderId`, `new_item_ids`), if any."""
        sig = (len(self.entities), sum(len(e.aliases) for e in self.entities.values()), tuple(e.key for e in self.entities.values()))
        if self._alias_sig != sig:
            self._alias = {}
            for e in self.entities.values():
                for a in e.aliases:
                    self._alias.setdefault(a, e.name)
                if e.key not in GENERIC_KEYS:
                    self._alias.setdefault(e.key, e.name)
            self._alias_sig = sig
        hit = self._alias.get(name)
        if hit is not None:
            return hit
        stem = id_stem(name)
        if stem:
            cand = entity_name(stem[0])
            if cand in self.entities:
                return cand
        t = tokens(name)
        if len(t) == 2 and t[0] in QUALIFIERS and t[0] not in ("new", "old", "current") and entity_name(t[1:]) in self.entities:
            return entity_name(t[1:])  # `parent_collection`, `target_folder`: another record of that kind, by its key
        return None


# --------------------------------------------------------------------------- names -> meaning


# the words an identifier's name ends in: `order_id`, `task_gid` (Asana), `user_guid`, `file_uid`, `page_identifier`
ID_TOKENS = ("id", "uuid", "gid", "guid", "uid", "identifier", "iid", "sid")  # `iid`: GitLab's id of a record within its project


# which id of a record an id names (`storyPublicId`, `orderExternalId`): English adjectives of identifiers, not nouns
ID_KINDS = {"public", "external", "internal", "global", "local", "unique", "primary", "numeric", "short", "display", "system"}


def id_stem(name: str) -> tuple[list[str], bool] | None:
    """`order_id` -> (['order'], False); `new_item_ids` -> (['item'], True); `id` -> None."""
    t = tokens(name)
    if len(t) < 2:
        return None
    last = t[-1]
    if last in ID_TOKENS:
        stem, many = t[:-1], False
    elif is_plural(last) and singular(last) in ID_TOKENS:
        stem, many = t[:-1], True
    else:
        return None
    while len(stem) > 1 and stem[0] in QUALIFIERS:
        stem = stem[1:]
    while len(stem) > 1 and stem[-1] in ID_KINDS:
        stem = stem[:-1]  # `storyPublicId`: the story's public id, not a "story public"
    if not stem or stem[-1] in STOP:
        return None
    return stem, many


def keyish_stem(name: str) -> list[str] | None:
    """`branch_name` -> ['branch'], `flight_number` -> ['flight'], `repo_path` -> ['repo']."""
    t = tokens(name)
    if len(t) >= 2 and t[-1] in KEYISH_SUFFIX:
        stem = t[:-1]
        while len(stem) > 1 and stem[0] in QUALIFIERS:
            stem = stem[1:]
        return stem
    return None


def common_prefix(names: list[str]) -> int:
    """Number of leading tokens shared by every tool name (`git_`), kept only when >= 2 tools."""
    if len(names) < 2:
        return 0
    toks = [tokens(n) for n in names]
    n = 0
    while all(len(t) > n + 1 for t in toks) and len({t[n] for t in toks}) == 1 and toks[0][n] not in ALL_VERBS:
        n += 1
    return n


def _first_word(text: str) -> str:
    m = re.match(r"\s*([A-Za-z]+)", text or "")
    return m.group(1).lower() if m else ""


# the last word of a namespace that qualifies an operation name (`issue_fields_api.IssueFieldsApi.get_fields`,
# `ApplicationSettingsApi.get_configs`, `user_controller_create_user`): generated clients name operations so
_QUALIFIER_TAILS = frozenset({"api", "apis", "controller", "service", "resource", "endpoint", "endpoints"})


def name_tokens(name: str, prefix: int = 0) -> list[str]:
    """The operation's own words: the name less the env's common prefix and less a namespace ending in
    `api`/`controller`/`service` when a verb follows it (`issue_priorities_api.get_priorities` gets
    priorities; its first word `issue` is no verb here). Why: generated clients (BFCL's live functions,
    OpenAPI generators) qualify every operation by its tag, and that tag's first word decided the kind."""
    toks = tokens(name)[prefix:] or tokens(name)
    qual = [i for i, w in enumerate(toks[:-1]) if w in _QUALIFIER_TAILS and toks[i + 1] in ALL_VERBS and i > 0]
    if qual:
        return toks[qual[-1] + 1:]
    # a numbered service (Schema-Guided Dialogue's `Restaurants_2_ReserveRestaurant`, `Payment_1_MakePayment`)
    num = next((i for i, w in enumerate(toks[:3]) if w.isdigit() and 0 < i < len(toks) - 1 and toks[0] not in ALL_VERBS and (toks[i + 1] in ALL_VERBS or is_verb(toks[i + 1]))), None)
    return toks[num + 1:] if num is not None else toks


def classify(tool: ir.Tool, prefix: int = 0) -> str:
    """Tool kind from HTTP method, MCP annotations, the name's verb, the description's verb."""
    toks = name_tokens(tool.name, prefix)
    ann = tool.annotations or {}
    read_only = ann.get("readOnlyHint")
    destructive = ann.get("destructiveHint")
    verb = _verb(toks, tool.description)
    m = (tool.http_method or "").upper()
    rpc = rpc_method(tool)
    if rpc is not None:
        m = ""  # `POST /documents.list`: the method's name says what it does, not the POST every method shares
        verb = _verb(rpc, tool.description)
        toks = rpc
    if m:
        verb = None
    if m:
        segs = [s for s in (tool.http_path or "").split("/") if s]
        last_is_param = bool(segs) and segs[-1].startswith("{")
        after_param = any(s.startswith("{") for s in segs[:-1]) and not last_is_param
        if m == "GET" or m == "HEAD":
            if last_is_param:
                return "read"
            ret = tool.returns
            if ret is not None and ret.kind == "array":
                return "search"
            return "search" if is_plural(segs[-1] if segs else "") and ret is None else "read"
        if m == "DELETE":
            return "delete"
        if m in ("PUT", "PATCH"):
            return "update"
        if m == "POST":
            if segs and not last_is_param and tokens(segs[-1])[-1:] and tokens(segs[-1])[-1] in ("delete", "remove", "destroy", "erase", "purge"):
                return "delete"  # `POST /subscribers/query/delete` ("bulk deletes based on an arbitrary SQL expression"):
                # a command the path names, no new subscriber (review 97: a blank record made by a delete); a `cancel`,
                # `close` or `archive` command is an action on the record (its status), not a removal
            if after_param and is_plural(segs[-1]):
                return "create"  # POST /books/{id}/reviews: a nested collection
            if after_param and verb not in CREATE_VERBS:
                return "action"
            if last_is_param:
                return "update" if verb in UPDATE_VERBS else "action"
            return "create"
    if read_only is True:
        return "search" if verb in SEARCH_VERBS or _list_desc(tool.description) else "read"
    kind = _kind_of_verb(verb, toks)
    if kind == "read" and _list_desc(tool.description):
        kind = "search"
    if kind in ("read", "search") and read_only is False:
        kind = "action"
    if destructive is True and kind in ("read", "search", "create"):
        kind = "delete" if verb in DELETE_VERBS else "update"
    if kind == "action" and no_change_desc(tool.description):
        return "action"
    return kind


def _kind_of_verb(verb: str | None, toks: list[str]) -> str:
    if verb is None:
        return "action"
    if verb in SEARCH_VERBS:
        return "search"
    if verb in READ_VERBS:
        return "read"
    if verb in CREATE_VERBS:
        return "create"
    if verb in DELETE_VERBS:
        return "delete"
    if verb in UPDATE_VERBS:
        return "update"
    return "action"


# a controller's actions, named after the resource (`collective-index`, `page-create`); not `borrow_book`
_ACTION_LAST = {"index", "create", "update", "delete", "destroy", "show", "list", "trash", "restore", "get", "search"}


# a name that ends in one of these after its resource's words (`purchase_order_get`) is resource-first
_RESOURCE_FIRST = {"get", "create", "update", "delete", "destroy", "show"}


def _noun_first(word: str) -> bool:
    """Whether a name's first word reads as a noun (`purchase`, `journal`, `sales`), by English's own
    part-of-speech tables (lemminflect), so that `purchase_order_get` is a get of a purchase order."""
    from forgec.english import lemmas

    return "NOUN" in lemmas(word) or word not in ALL_VERBS


def _verb(toks: list[str], description: str) -> str | None:
    if toks[:1] == ["checkin"] or toks[:2] == ["check", "in"]:
        return "checkin"  # check_in / checkIn / check-in: a status change, not a read
    if len(toks) > 2 and toks[-1] in _RESOURCE_FIRST and toks[0] not in _RESOURCE_FIRST and _noun_first(toks[0]):
        return toks[-1]  # `purchase_order_get`, `sales_invoice_create`: the resource, then its action ("purchase" names the order)
    if toks[:1] == ["open"] and _first_word(description) in READ_VERBS - {"check", "load"}:
        return _first_word(description)  # "open" views as often as it makes (open_task_details: "Get details of a task"):
        # the docs' own first verb says which (an account or a ticket is opened by a doc that says "Create"/"Open")
    if toks and toks[0] in ALL_VERBS:
        return toks[0]
    if len(toks) > 1 and toks[-1] in _ACTION_LAST:
        return "list" if toks[-1] == "index" else toks[-1]  # `collective-index`, `page-create`: the resource, then its action (Rails, Nextcloud)
    if toks and len(toks[0]) > 4 and toks[0].startswith("un") and (toks[0][2:] in ALL_VERBS or is_verb(toks[0][2:])):
        return "restore"  # `untrash_thread`, `unarchive_project`: undoes a change (the docs' "remove from the trash" is no delete)
    if re.match(r"\s*check[ -]?in\b", description or "", re.I):
        return "checkin"
    w = _first_word(description)
    if w in ALL_VERBS:
        return {"shows": "show", "lists": "list", "adds": "add", "creates": "create", "records": "record", "switches": "switch", "deletes": "delete", "removes": "remove", "updates": "update"}.get(w, w)
    return None


def _list_desc(desc: str) -> bool:
    """A doc that opens by listing ("List ...", "Retrieve a list of all projects", "Returns all tags"): a search,
    whatever verb the name has (`get_projects` with switch params was a read of nothing, review 38)."""
    return bool(re.match(r"\s*(list|search|find|query)\b", desc or "", re.I)) or bool(
        re.match(r"\s*(?:retrieves?|gets?|returns?|fetch(?:es)?)\s+(?:a\s+(?:paginated\s+)?list\s+of|all)\b", desc or "", re.I))


def no_change_desc(desc: str) -> bool:
    return bool(re.search(r"(not|never)\s+(obtain new information or )?change the (database|state)", desc or "", re.I))


# --------------------------------------------------------------------------- IR types -> forge types


class TypeMapper:
    """Maps IR types to forge types, creating record declarations for nested objects."""

    def __init__(self, schema: Schema):
        self.s = schema
        self._open_refs: dict[str, str] = {}  # recursive definitions being mapped -> their record

    def map(self, t: ir.Type | None, hint: str, depth: int = 0) -> A.TypeExpr:
        if t is None:
            return A.PrimType("any")
        inner = self._map(t, hint, depth)
        if t.nullable and not isinstance(inner, A.OptionalType):
            return A.OptionalType(inner)
        return inner

    def _map(self, t: ir.Type, hint: str, depth: int) -> A.TypeExpr:
        k = t.kind
        if k == "string":
            return A.PrimType("str")
        if k == "integer":
            return A.PrimType("int")
        if k == "number":
            return A.PrimType("float")
        if k == "boolean":
            return A.PrimType("bool")
        if k == "enum":
            vals = tuple(v for v in t.values if v is not None)
            if not vals:
                return A.PrimType("str")
            kinds = {type(v) for v in vals}
            if len(kinds) == 1 and kinds <= {str, int, float, bool}:
                return A.EnumType(tuple(dict.fromkeys(vals)))
            return A.PrimType("str")
        if k == "array":
            return A.ListType(self.map(t.items, singular(snake(hint) or "item"), depth + 1) if t.items else A.PrimType("any"))
        if k == "object":
            if not t.fields or depth > 4:
                return A.PrimType("any")
            return A.NamedType(self.record(hint, t, depth))
        if k == "union":
            vs = [v for v in t.variants if v.kind != "null"]
            opt = len(vs) != len(t.variants)
            if len(vs) == 1:
                inner = self._map(vs[0], hint, depth)
                return A.OptionalType(inner) if opt and not isinstance(inner, A.OptionalType) else inner
            return A.OptionalType(A.PrimType("any")) if opt else A.PrimType("any")
        if k == "ref" and t.ref and t.ref in self.s.env.definitions:
            return self._map_ref(t.ref, depth)
        return A.PrimType("any")

    def _map_ref(self, ref: str, depth: int) -> A.TypeExpr:
        """A recursive schema's ref, met inside its own expansion, names the record being built
        (`record Node { children: list[Node]? }`) rather than being cut to `any`."""
        if ref in self._open_refs:
            return A.NamedType(self._open_refs[ref])
        d = self.s.env.definitions[ref]
        if d.kind != "object" or not d.fields:
            return self._map(d, ref, depth + 1) if depth <= 4 else A.PrimType("any")
        name = pascal(singular(snake(ref))) or "Value"
        self._open_refs[ref] = name + "Info" if name in self.s.entities else name  # as `record` names it
        try:
            return A.NamedType(self.record(ref, d, depth + 1))
        finally:
            del self._open_refs[ref]

    def record(self, hint: str, t: ir.Type, depth: int = 0) -> str:
        """Declare (or merge into) record `Pascal(hint)` with the object's fields."""
        name = pascal(singular(snake(hint))) or "Value"
        if name in self.s.entities:
            name += "Info"
        fields: dict[str, Field] = {}
        for f in t.fields:
            fname = ident(snake(f.name)) if not _is_ident(f.name) else ident(f.name)
            ftype = self.field_type(f.name, f.type, depth + 1)
            if not f.required and not isinstance(ftype, A.OptionalType):
                ftype = A.OptionalType(ftype)
            fields.setdefault(fname, Field(fname, ftype, f.description or f.type.description))
        rec = self.s.records.get(name)
        if rec is None:
            self.s.records[name] = Record(name, fields, t.description)
        else:
            for fname, f in fields.items():
                if fname not in rec.fields:
                    rec.fields[fname] = Field(fname, _optional(f.type), f.doc)
            for fname, f in rec.fields.items():
                if fname not in fields:
                    f.type = _optional(f.type)
        return name

    def field_type(self, name: str, t: ir.Type, depth: int = 0) -> A.TypeExpr:
        """Type of a field/param named `name`: ids of known entities become references."""
        ent = self.s.ref_of(name)
        base = t
        opt = t.nullable
        if t.kind == "union":
            vs = [v for v in t.variants if v.kind != "null"]
            opt = opt or len(vs) != len(t.variants)
            base = vs[0] if len(vs) == 1 else t
        if ent and base.kind in ("string", "integer"):
            ty: A.TypeExpr = A.NamedType(ent)
            return A.OptionalType(ty) if opt else ty
        if ent and base.kind == "array" and base.items is not None and base.items.kind in ("string", "integer"):
            ty = A.ListType(A.NamedType(ent))
            return A.OptionalType(ty) if opt else ty
        # `reservations: list[str]` inside a record: a list of keys of entity Reservation
        if base.kind == "array" and base.items is not None and base.items.kind in ("string", "integer"):
            cand = pascal(singular(snake(name)))
            if cand in self.s.entities:
                ty = A.ListType(A.NamedType(cand))
                return A.OptionalType(ty) if opt else ty
        return self.map(t, name, depth)


def _is_ident(s: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s)) and s not in RESERVED


def _optional(t: A.TypeExpr) -> A.TypeExpr:
    return t if isinstance(t, A.OptionalType) else A.OptionalType(t)


strip_optional = A.strip_optional  # one definition, in the AST module


# --------------------------------------------------------------------------- inference


def _integral_ids(env: ir.Environment) -> ir.Environment:
    """An identifier typed `number` (a TypeScript server's `z.number()`: paperless's `update_tag(id: number)`) is an
    integer: no record is numbered 3.5. Read as `integer` it binds to its record like any other id, where as a
    float no key rule took it and the tool only logged its calls."""
    def fix(p: ir.Param) -> ir.Param:
        t = p.type
        if not (p.name.lower() in ID_TOKENS or id_stem(p.name)):
            return p
        if t.kind == "number":
            return p.model_copy(update={"type": t.model_copy(update={"kind": "integer"})})
        if t.kind == "array" and t.items is not None and t.items.kind == "number":
            return p.model_copy(update={"type": t.model_copy(update={"items": t.items.model_copy(update={"kind": "integer"})})})
        return p

    tools = tuple(t.model_copy(update={"params": tuple(fix(p) for p in t.params)}) if any(fix(p) is not p for p in t.params) else t
                  for t in env.tools)
    return env.model_copy(update={"tools": tools}) if any(a is not b for a, b in zip(tools, env.tools)) else env


def infer_schema(env: ir.Environment) -> Schema:
    env = _integral_ids(env)
    s = Schema(env, session=session_params(env))
    tools = list(env.tools)
    prefix = common_prefix([t.name for t in tools])
    cp = _common_path(tools)
    for t in tools:
        s.views[t.name] = tool_view(t, prefix, cp)
    if env.policy:  # a policy page's rules for a tool are read like its description's (forgec/synth/policy.py)
        from .policy import facts_for

        for name, facts in facts_for(env).items():
            s.views[name].facts = tuple(s.views[name].facts) + facts
    _discover_entities(s)
    _bind_tools(s)
    _bind_by_return_shape(s)
    _own_codes(s)
    _split_kinds(s)
    _links(s)
    _gather_fields(s)
    _name_keys(s)
    _status_fields(s)
    _children(s)
    _globals(s)
    _finish_entities(s)
    return s


_FILE_EXTENSIONS = {"yaml", "yml", "json", "xml", "txt", "csv", "html", "htm", "md", "js", "css", "png", "jpg", "jpeg", "gif", "svg",
                    "pdf", "zip", "gz", "tar", "ico", "proto", "wsdl", "rss", "atom", "ics"}
_RPC_VERBS = {"info": "get", "show": "get", "retrieve": "get", "read": "get", "list": "list", "search": "search"}


def rpc_method(t: ir.Tool) -> list[str] | None:
    """The words of an RPC-style method (`POST /collections.addUser`, Outline; `/conversations.list`, Slack's
    Web API): verb first, then what it acts on, then the resource ("add user to collection"); None for a REST
    path. Every such method is a POST, so the HTTP verb says nothing of reads and writes (Outline: all 113
    methods were writes, `documents.list` a create)."""
    last = [x for x in (t.http_path or "").split("/") if x][-1:]
    if not last or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*\.[A-Za-z][A-Za-z0-9_]*", last[0]) or (t.http_method or "").upper() not in ("POST", "GET"):
        return None
    res, meth = last[0].split(".", 1)
    mt, rt = tokens(meth), [singular(w) for w in tokens(res)]
    if not mt:
        return None
    verb = _RPC_VERBS.get(mt[0], mt[0])
    if verb not in ALL_VERBS and ((t.http_method or "").upper() != "POST" or meth.lower() in _FILE_EXTENSIONS):
        return None  # `GET /api/spec.yaml` is a file, not a method
        return ["list"] + mt  # `collections.memberships`: the memberships (of the collection its `id` names)
    obj = mt[1:]
    if not obj:
        return [verb] + (rt if verb not in ("list", "search") else [plural(rt[-1])] if rt else [])
    return [verb] + obj + (["from"] if verb in ("remove", "delete") else ["to"]) + rt


def _http_tokens(t: ir.Tool, common: int) -> list[str] | None:
    if not t.http_path or not t.http_method:
        return None
    if (rpc := rpc_method(t)) is not None:
        return rpc
    segs = [x for x in t.http_path.split("/") if x and not x.startswith("{")]
    verbmap = {"GET": "get", "POST": "post", "PUT": "save", "PATCH": "update", "DELETE": "delete", "HEAD": "get"}
    out = [verbmap.get(t.http_method.upper(), t.http_method.lower())]
    for seg in segs[common:]:
        out += tokens(seg)
    return out


def _common_path(tools: list[ir.Tool]) -> int:
    paths = [[x for x in (t.http_path or "").split("/") if x and not x.startswith("{")] for t in tools if t.http_path]
    if len(paths) < 2:
        return 0
    n = 0
    while all(len(p) > n + 1 for p in paths) and len({p[n] for p in paths}) == 1:
        n += 1
    return n


def tool_view(t: ir.Tool, prefix: int, common_path: int = 0) -> ToolView:
    toks = _http_tokens(t, common_path) or name_tokens(t.name, prefix)
    kind = classify(t, prefix)
    verb = _verb(toks, t.description)
    if t.http_method:
        segs = [x for x in (t.http_path or "").split("/") if x]
        if kind == "action" and segs and not segs[-1].startswith("{") and tokens(segs[-1])[-1:] and (tokens(segs[-1])[-1] in ALL_VERBS or tokens(segs[-1])[-1] in ("credit", "deposit", "refund", "charge")):
            verb = tokens(segs[-1])[-1]  # POST /orders/{id}/pay
    body = toks
    by: list[str] = []
    if "by" in body:
        i = body.index("by")
        body, by = body[:i], body[i + 1 :]
    if "with" in body[1:]:
        body = body[: body.index("with", 1)]  # `create_project_with_issues` makes a project
    for prep in ("to", "from", "into", "onto"):
        if prep in body[1:]:
            body = body[: body.index(prep, 1)]  # `add_tag_to_task`: the thing added is a tag; the task is where
    for prep in ("in", "within", "inside"):
        if prep in body[2:-1]:
            body = body[: body.index(prep, 2)]  # `list_docs_in_folder` lists docs; the folder is where (review 48)
    nouns = _nouns(body, verb, by_name=not t.http_method)
    if len(nouns) >= 2 and singular(nouns[-1]) in ("type", "kind") and re.search(
            rf"\b{re.escape(singular(nouns[-2]))}[ _-]?ids?\b", t.description or "", re.I):
        nouns = nouns[:-1]  # "List the name and product id of all product types": the products themselves (τ-bench)
    if not nouns and verb in NOUN_VERBS and kind == "create":
        nouns = [verb]
    v = ToolView(t, ident(t.name), kind, toks, verb, nouns, by)
    v.facts = prose.read(t.description or "")
    return v


def _nouns(body: list[str], verb: str | None, by_name: bool = True) -> list[str]:
    """The name's nouns: its words less the stop words and the verbs, except that a verb-like word
    ending a name that another verb opens is its object (`create_issue`, `issue_refund`,
    `post_comment`: the thing made is an issue, a refund, a comment)."""
    last = len(body) - 1
    if by_name and verb is not None and len(body) > 2 and body[-1] == verb and verb in _RESOURCE_FIRST and body[0] != verb:
        return [w for w in body[:-1] if w not in STOP]  # `purchase_order_get`: every word before the action names the resource
    opened = by_name and bool(body) and body[0] in ALL_VERBS and body[0] != body[-1]  # not `POST .../batchDelete`
    # a REST path's plural segment is its collection (`GET /lists`, `POST /posts`): a noun, though "list" is a verb too
    return [w for i, w in enumerate(body) if w not in STOP and (w not in ALL_VERBS or (opened and i == last and i > 0)
                                                                or (not by_name and i > 0 and is_plural(w)))]


def _all_params(t: ir.Tool):
    """(name, type, depth) of params and of fields of object params (one level, arrays too)."""
    for p in t.params:
        yield p.name, p.type, 0
        ty = p.type.items if p.type.kind == "array" and p.type.items is not None else p.type
        if ty.kind == "object":
            for f in ty.fields:
                yield f.name, f.type, 1


def _scalar_kind(t: ir.Type) -> str:
    if t.kind == "array" and t.items is not None:
        return _scalar_kind(t.items)
    if t.kind == "union":
        vs = [v for v in t.variants if v.kind != "null"]
        return _scalar_kind(vs[0]) if len(vs) == 1 else "any"
    return t.kind


def _add_entity(s: Schema, name: str, key: str, key_type: str = "str", alias: str | None = None, synthetic: bool = False) -> Entity:
    e = s.entities.get(name)
    if e is None:
        e = Entity(name, ident(key), key_type, synthetic_key=synthetic)
        s.entities[name] = e
    elif e.synthetic_key and not synthetic:
        e.key, e.key_type, e.synthetic_key = ident(key), key_type, False
    if alias and alias not in e.aliases:
        e.aliases.append(alias)
    return e


# path params that choose a kind, a state or a form (`{type}`, `{status}`, `{format}`), not a record
PATH_CHOICES = {"type", "kind", "status", "state", "category", "format", "mode", "action", "period", "interval", "scope", "level"}


def _path_entities(t: ir.Tool):
    """(entity name, path param) for each `{param}` in an HTTP path, named by the preceding segment."""
    segs = [x for x in (t.http_path or "").split("/") if x]
    prev = None
    for seg in segs:
        if seg.startswith("{") and seg.endswith("}"):
            p = seg[1:-1]
            stem = id_stem(p)
            if p.lower() in PATH_CHOICES and (prev is None or singular(snake(prev)) != p.lower()):
                continue  # `/maintenance/subscribers/{type}`, `/request/{requestId}/{status}`: a choice of kind or state
                # the call makes, never the key of a subscriber or a request (only `/types/{type}` is a type's own)
            if prev is not None:
                yield pascal(singular(snake(prev))), p
            elif stem:
                yield entity_name(stem[0]), p
        else:
            prev = seg


def _discover_entities(s: Schema) -> None:
    """Run the entity rules in order: each adds entities (and aliases) the earlier ones missed."""
    _made_of_found(s)
    for rule in ENTITY_RULES:
        rule(s)


def _made_of_found(s: Schema) -> None:
    """A create named for what another tool finds makes what its docs say it makes: `ReserveRestaurant` ("Make a
    table reservation at a specified restaurant") beside `FindRestaurants` makes a reservation at a found restaurant,
    not a new restaurant (SGD: every reservation failed as "Restaurant already exists")."""
    from forgec.realize import sentences

    found = {singular((_head_nouns(v.nouns) or v.nouns)[-1]) for v in s.views.values() if v.kind == "search" and v.nouns}  # `room_list`: rooms
    for v in s.views.values():
        if v.kind != "create" or not v.nouns or singular(v.nouns[-1]) not in found:
            continue
        sent = (sentences(v.tool.description or "") or [""])[0]
        words = re.findall(r"[A-Za-z][A-Za-z'-]*|\S", sent)[1:]  # the object of its first sentence's verb
        obj: list[str] = []
        for w in words:
            lw = w.lower()
            if lw in PREPOSITIONS or not lw.isalpha():
                break
            if lw not in DETERMINERS:
                obj.append(lw)
        head = singular(obj[-1]) if obj else ""
        params = {singular(w) for p in v.tool.params for w in tokens(p.name)}
        # the made thing is an act's noun ("a reservation", "a booking", "a purchase"), not a count the call takes
        # ("Book seats on a flight": `seats` is how many, the booking is a reservation found elsewhere)
        if singular(v.nouns[-1]) in {singular(w) for w in obj}:
            first = sent.split()[0] if sent.split() else ""
            verb = v.verb if v.verb in ENGAGING_VERBS else (verb_lemma(first) or "")
            act = act_noun(verb) if verb in ENGAGING_VERBS else None
            if act:  # "Reserves a meeting room" beside the rooms list: a reservation of a found room
                v.nouns = [act]
            continue  # "Create a new Asset record": the asset is the made thing, "record" only says it is one
        if head and head != singular(v.nouns[-1]) and head not in found and head.isalpha() and len(head) > 2 \
                and head not in STOP and head not in params and singular(head) not in params and verb_of_noun(head):
            v.nouns = [head]


def _entities_from_paths(s: Schema) -> None:
    """HTTP path params: /api/kernels/{kernel_id} -> Kernel keyed by kernel_id."""
    for t in s.env.tools:
        for ename, p in _path_entities(t):
            par = t.param(p)
            # an id in a path typed `number` is a whole number too (Overseerr's `/settings/discover/{sliderId}`:
            # review 32 saw "discover_14773" sent where the docs want a number)
            kt = "int" if par is not None and _scalar_kind(par.type) in ("integer", "number") else "str"
            _add_entity(s, ename, p, kt, alias=p)


def _entities_from_described_ids(s: Schema) -> None:
    """An id param whose stem no tool name uses, and whose description mentions exactly one
    other id kind of the env (and not its own), is an alias of that kind."""
    tools = list(s.env.tools)
    stems: dict[str, set[str]] = {}
    for t in tools:
        for name, _ty, _depth in _all_params(t):
            st = id_stem(name)
            if st:
                stems.setdefault("_".join(st[0]), set()).add(name)
    words = {k.split("_")[-1]: k for k in stems}
    name_words = {singular(w) for t in tools for w in tokens(t.name)} | {singular(w) for t in tools for w in tokens(t.http_path or "")}
    for t in tools:
        for name, ty, _depth in _all_params(t):
            st = id_stem(name)
            if not st or s.ref_of(name) or any(w in name_words for w in st[0]):
                continue
            desc = next((p.description for p in t.params if p.name == name), "") or ""
            if re.search(rf"\b{re.escape(' '.join(st[0]))}\b", desc.lower()):
                continue  # "The payment id stored in user profile" names its own kind: not a User
            said = [w for w in re.findall(r"[a-z]+", desc.lower()) if w in words and words[w] != "_".join(st[0])]
            kind = re.search(r"\b([a-z]+) (?:ids?|iids?|uuids?|identifiers?)\b", desc.lower())
            if kind and kind.group(1) not in DETERMINERS | {"of", "unique", "numeric", "internal", "external"} and (
                    len(set(said)) != 1 or singular(kind.group(1)) != singular(said[0])):
                continue  # "Array of user IDs to assign issue to": ids of users (no kind here), not of issues (review 63)
            if len(set(said)) == 1:
                other = words[said[0]]
                first = sorted(stems[other])[0]
                # the key's type is that of the kind's own id params (GitLab's `issue_iid: string`, 17 tools), not of
                # the param that only mentions it (`noteable_iid: number`): gold calls then send what the docs ask
                own = [ty2 for t2 in tools for n2, ty2, _d in _all_params(t2) if n2 in stems[other]]
                kt = "int" if all(_scalar_kind(x) in ("integer", "number") for x in own or [ty]) else "str"
                ent = entity_name(other.split("_"))
                _add_entity(s, ent, first if not first.endswith("ids") else other + "_id", kt)
                s.entities[ent].aliases.append(name)


def _entities_from_ids(s: Schema) -> None:
    """id-like params and nested param fields: order_id, orderId, item_ids, ticket_id: integer."""
    for t in s.env.tools:
        for name, ty, _depth in _all_params(t):
            st = id_stem(name)
            if not st or s.ref_of(name):
                if st and s.ref_of(name):
                    e = s.entities[s.ref_of(name)]
                    if name not in e.aliases:
                        e.aliases.append(name)
                continue
            kt = "int" if _scalar_kind(ty) in ("integer", "number") else "str"
            if st[0] in (["parent"], ["child"]) and (kind := re.search(rf"\b{st[0][0]} ([a-z]+) (?:ids?|uuids?|identifiers?)\b",
                                                                        (ty.description or "").lower())):
                # dex's `parent_id` "Parent task ID": a task (the world's parent tasks were records of a made-up
                # `Parent`, review 96); a later rule keys the task as its docs do
                _add_entity(s, entity_name([singular(kind.group(1))]), f"{singular(kind.group(1))}_id", kt, alias=name, synthetic=True)
                continue
            key = snake(name) if not st[1] else "_".join(st[0]) + "_id"
            _add_entity(s, _id_entity_name(s, name, st[0]), key, kt, alias=name)


def _entities_from_found_names(s: Schema) -> None:
    """A name another tool takes that names what a search finds, in the search's own words: `ScheduleVisit
    (property_name)` beside `FindHomeByArea` ("Search for a property to rent or buy") visits a found Home, by
    its name; `BookAppointment(therapist_name)` beside `FindProvider` ("Discover therapists") books a found
    Provider. The found record is keyed by that name, so the booking looks it up (SGD homes/services: no
    search result carried a name, and no task could be made)."""
    from forgec.realize import object_nouns

    tool_nouns = {singular(n) for v in s.views.values() for n in v.nouns}
    found: dict[str, str] = {}
    for v in s.views.values():
        if v.kind != "search" or not v.nouns:
            continue
        obj = object_nouns(v.tool.description or "")
        if obj and singular(obj[-1]) not in tool_nouns:
            ent = _noun_entity_name(s, v.nouns)
            if ent:
                found.setdefault(singular(obj[-1]), ent)
    for t in s.env.tools:
        if s.views[t.name].kind == "search":
            continue
        for p in t.params:
            stem = keyish_stem(p.name)
            if not stem or tokens(p.name)[-1] != "name" or _scalar_kind(p.type) != "string" or s.ref_of(p.name):
                continue
            ent = found.get(singular(stem[-1]))
            if ent:
                _add_entity(s, ent, p.name, "str", alias=p.name)


def _entities_from_keyish_names(s: Schema) -> None:
    """Name-like keys: shared by many tools (repo_path), or naming a tool's noun (branch_name)."""
    tools = list(s.env.tools)
    counts: dict[str, int] = {}
    for t in tools:
        for p in t.params:
            if keyish_stem(p.name) and _scalar_kind(p.type) in ("string", "integer"):
                counts[p.name] = counts.get(p.name, 0) + 1
    tool_nouns = {n for v in s.views.values() for n in v.nouns}
    for t in tools:
        for name, ty, depth in _all_params(t):
            stem = keyish_stem(name)
            if not stem or _scalar_kind(ty) not in ("string", "integer") or s.ref_of(name):
                continue
            head = singular(stem[-1])
            shared = depth == 0 and counts.get(name, 0) >= max(2, (len(tools) + 1) // 2)
            if shared or head in {singular(n) for n in tool_nouns}:
                kt = "int" if _scalar_kind(ty) == "integer" else "str"
                known = s.entities.get(entity_name(stem))
                if known is not None and not known.synthetic_key and known.key_type != kt and \
                        {known.key, *known.aliases} & {n2 for n2, _t, _d in _all_params(t)} - {name}:
                    continue  # Overseerr's `activeProfileName` (a string) beside `activeProfileId` (a number): the
                    # profile's name, a field of its own, not another spelling of the profile's numeric key (review 96);
                    # alone (Harbor's `delete_project(project_name)`) a name addresses the record
                _add_entity(s, entity_name(stem), name, kt, alias=name)


def _head_nouns(nouns: list[str]) -> list[str]:
    """A name's nouns up to its head: status words out, a trailing `list` dropped (`purchase_invoice_list`). A trailing
    `type` stays: `get_link_types` lists the kinds of link, not links (review 48: links looked up in a list of types)."""
    ns = [n for n in nouns if n not in STATUS_WORDS]
    while len(ns) > 1 and ns[-1] == "list":
        ns = ns[:-1]
    return ns


def _shared_heads(s: Schema) -> set[str]:
    """Head nouns that several kinds of record share by their modifier: `journal_entry_list`,
    `payment_entry_list`, `stock_entry_list` are three doctypes, not one `Entry` (review 29: "my entries"
    spanned four of them). Such a head keeps its modifier in the entity's name."""
    mods: dict[str, set[str]] = {}
    for v in s.views.values():
        ns = _head_nouns(v.nouns)
        if v.kind in ("search", "create", "read") and len(ns) >= 2 and ns[-2] not in STOP and "NOUN" in lemmas(ns[-2]):
            # a noun modifier names a kind of record (a journal entry); an adjective a way to find one
            # (`search_direct_flight`, `search_onestop_flight` search one table of flights)
            mods.setdefault(singular(ns[-1]), set()).add(singular(ns[-2]))
    return {h for h, m in mods.items() if len(m) >= 2}


def _entities_from_tool_nouns(s: Schema) -> None:
    """Nouns of list/search/create tools without an id param: search_direct_flight -> Flight."""
    shared = _shared_heads(s)
    for v in s.views.values():
        if v.kind not in ("search", "create") or not v.nouns:
            continue
        if any(_param_entity(s, p.name) for p in v.tool.params) and v.kind == "search":
            continue
        noun = _noun_entity_name(s, v.nouns)
        ns = _head_nouns(v.nouns)
        if noun is not None and len(ns) >= 2 and singular(ns[-1]) in shared and ns[-2] not in STOP and "NOUN" in lemmas(ns[-2]) \
                and not (noun in s.entities and not s.entities[noun].synthetic_key and noun == entity_name(ns[-1:])):
            # JournalEntry beside PaymentEntry; but a text channel and a forum channel that every tool addresses by one
            # `channelId` are channels (Discord: a channel made by `create_text_channel` was deleted by no tool)
            noun = entity_name(ns[-2:])
        if noun is None or noun in s.entities:
            continue
        if v.kind == "create" and singular(v.nouns[-1]) in ("credit", "balance", "fund", "money", "point", "deposit") and any(s.ref_of(p.name) for p in v.tool.params):
            continue
        if v.kind == "create" and _prose_subject(s, v, [s.ref_of(p.name) for p in v.tool.params if s.ref_of(p.name)]):
            continue  # "Changes the bill status to ...": a change of the bill, no new record
        key = _key_for_noun(s, singular(v.nouns[-1]))
        _add_entity(s, noun, key or f"{snake(noun)}_id", synthetic=key is None)


# The entity rules, in the order they run: documented addresses (paths) first, then names.
ENTITY_RULES = (
    _entities_from_paths,
    _entities_from_described_ids,
    _entities_from_ids,
    _entities_from_found_names,
    _entities_from_keyish_names,
    _entities_from_tool_nouns,
)


def _id_entity_name(s: Schema, name: str, stem: list[str]) -> str:
    """`payment_id` inside the items of `payment_methods: [{payment_id, amount}]` denotes a
    PaymentMethod (the list names what the id is the key of); else the stem (`Payment`)."""
    for t in s.env.tools:
        for p in t.params:
            pt = p.type
            if pt.kind != "array" or pt.items is None or pt.items.kind != "object":
                continue
            ptoks = tokens(p.name)
            if len(ptoks) == len(stem) + 1 and ptoks[: len(stem)] == stem and any(f.name == name for f in pt.items.fields):
                return entity_name(ptoks)
    return entity_name(stem)


def _noun_entity_name(s: Schema, nouns: list[str]) -> str | None:
    """Entity for the nouns of a tool name: the longest known suffix, else the head noun."""
    for i in range(len(nouns)):
        cand = entity_name(nouns[i:])
        if cand in s.entities:
            return cand
    ns = _head_nouns(nouns)
    if not ns:
        return None
    head = entity_name(ns[-2:] if len(ns) >= 2 and singular(ns[-1]) in ("type", "kind") else ns[-1:])  # a LinkType, not a Type
    for i in range(len(ns)):
        cand = entity_name(ns[i:])
        if cand in s.entities:
            return cand
    return head


def _key_for_noun(s: Schema, noun: str) -> str | None:
    """A documented key-like field for an entity named only by a tool noun (flights[].flight_number)."""
    for t in s.env.tools:
        for name, _ty, _d in _all_params(t):
            stem = keyish_stem(name) or (id_stem(name) or ([], False))[0]
            if stem and singular(stem[-1]) == noun and len(stem) == 1:
                return snake(name)
    return None


def _param_entity(s: Schema, pname: str) -> str | None:
    return s.ref_of(pname)


def _bind_tools(s: Schema) -> None:
    """Decide each tool's target entity, key param, entity-typed params and status words."""
    for v in s.views.values():
        _bind_refs(s, v)
        named = _noun_entity_name(s, v.nouns) if v.nouns else None
        named = _longer_named(s, named, v) or named
        owner = _path_owner(s, v.tool)
        if owner is not None and (v.kind in ("read", "update", "delete", "action") or v.kind == "search" and owner[0] in v.refs):
            # (a list under it too: `GET /replication/executions/{id}/tasks` lists an execution's tasks, whatever
            # other record's key is also called `id`, review 31)
            v.refs[owner[0]] = owner[1]  # `PUT /campaigns/{id}/status`: the id after `campaigns` is a campaign's
        elif named in s.entities and v.kind in ("read", "update", "delete", "action") and set(v.refs) <= set(ID_TOKENS):
            # `delete_issue(id)`, `PUT /campaigns/{id}`: a bare `id` addresses the record the name names (not
            # another record whose key happens to be called `id`)
            bare = next((p for p in v.tool.params if p.name.lower() in ID_TOKENS and p.required and _scalar_kind(p.type) in ("string", "integer")), None)
            if bare is not None:
                v.refs[bare.name] = named
        _bind_named_target(s, v, named)
        if (v.kind == "read" and v.refs and named in s.entities and named not in v.refs.values() and (is_plural(v.nouns[-1]) or v.verb == "list")
                and not (v.field_noun or "") and (_points_to(s, v, set(v.refs.values())) or not any(
                    _find([singular(w) for w in v.toks], [singular(w) for w in tokens(e)]) is not None for e in v.refs.values()))):
            # `list_documents(applicant_id)`: the documents of an applicant are searched (blind review 23: an
            # applicant held every document's, check's and monitor's fields, read from these lists' returns);
            # `GET /events/{event}/tags` names the event too: its tags are read from it
            v.kind, v.target = "search", named
            continue
        child = _nested_collection(s, v)
        if child is not None:
            v.kind, v.target = "search", child  # `GET /app/{app_id}/endpoint`: the app's endpoints (Svix, blind pool 6)
            continue
        if v.kind in ("read", "update", "delete", "action") and v.refs:
            _bind_key_param(s, v)
        elif v.kind in ("read",) and not v.refs and named in s.entities and not any(p.required and not plumbing(p) for p in v.tool.params) and (
                not v.tool.params or is_plural(v.nouns[-1])):
            # `get_products(searchTitle?, limit?)`: a plural noun and nothing required lists the records
            v.target = named
            v.kind = "search"
        if v.kind == "search" and v.target is None and named and named in s.entities:
            v.target = named
        if v.kind in ("update", "delete") and v.target is None and not v.refs and named in s.entities and _batch_of(v, named):
            v.target = named  # Todoist's `update_projects(items: [{id, color}])`: each item names a project by its id
        elif v.kind in ("update", "delete") and v.target is None and not v.refs and named in s.entities and (bk := body_with_key(v)) is not None \
                and entity_name([singular(tokens(v.tool.name)[0])]) in (named, None if tokens(v.tool.name)[0] in ALL_VERBS else named) and not (v.kind == "delete" and any(
                    ident(f.name) != "id" and (id_stem(f.name) or keyish_stem(f.name)) for f in bk.type.fields)):
            v.target = named  # Outline's `documents.update({id, title})`: the body's id names the document, the record its
            # name opens with; `collections.remove_user({id, userId})` takes a user off a collection: no delete of either
        if v.kind in ("read", "search") and v.target in (None, named) and not v.refs and named in s.entities \
                and (bk := body_with_key(v)) is not None and any(ident(f.name) == "id" and f.required for f in bk.type.fields) \
                and entity_name([singular(tokens(v.tool.name)[0])]) == named and not _list_desc(v.tool.description):
            v.kind, v.target = "read", named  # `groups.info({id})` (its schema requires the id) reads the group the id names:
            # called bare it had listed them all, and the gold lookups broke its docs (review 93)
        if v.kind in ("read", "search") and v.target is None and not v.refs and v.tool.params:
            got = prose.returned(v.facts, list(s.entities))
            if got:
                # "Look up the customer who owns a phone number. Returns the customer id."
                v.target, v.kind = got[0], "search"
                v.cites["returns_key" if got[1].field == "key" else "returns"] = got[1].sentence


def _head_at(nouns: list[str], head: str) -> int | None:
    """Index of the last token of `nouns` that is `head` (singular or plural)."""
    at = [i for i, n in enumerate(nouns) if singular(n) == head]
    return at[-1] if at else None


def _split_kinds(s: Schema) -> None:
    """Two kinds of record that share a head noun are two entities when each is addressed by its own key: DigitalOcean's
    `db_cluster_*(id)` ("a database cluster") and `doks_*_cluster(ClusterID)` ("a Kubernetes cluster"), Harbor's
    preheat, webhook and replication policies (review 55: a Valkey database cluster "upgraded" with the Kubernetes
    tool). The tools are grouped by the word before the head in their names; groups split only when their key params
    are disjoint, so kinds every tool addresses by one key (Discord's text and forum channels by `channelId`) stay one."""
    for ent in list(s.entities.values()):
        head = singular(tokens(ent.name)[-1].lower()) if tokens(ent.name) else ""
        groups: dict[str, list[ToolView]] = {}
        for v in s.views.values():
            if v.target != ent.name or not v.nouns:
                continue
            i = _head_at(v.nouns, head)
            q = v.nouns[i - 1] if i else ""
            if not q.isalpha() or q in STOP or q in STATUS_WORDS or ("NOUN" in lemmas(q) and singular(q) != q):
                continue  # a plural before the head is the parent's collection (`/boards/{board}/members`), not a kind
            groups.setdefault(q, []).append(v)
        keyed = {q: {v.key_param for v in g if v.key_param} for q, g in groups.items()}
        keyed = {q: k for q, k in keyed.items() if k and len(groups[q]) >= 2}
        if len(keyed) < 2 or any(a & b for a in keyed.values() for b in keyed.values() if a is not b):
            continue
        # named by the tool names' own word ("DB cluster", "DOKS cluster"): the tools then read as acting on it
        names = {q: entity_name([q, head]) for q in keyed}
        if len(set(names.values())) < len(names) or any(n in s.entities for n in names.values()):
            continue
        for q, name in names.items():
            params = {p.name for t in s.env.tools if q in s.views[t.name].nouns for p in t.params}
            moved = [a for a in ent.aliases if a in params] + sorted(keyed[q] - set(ent.aliases))
            key = next((k for k in sorted(keyed[q]) if k.lower() not in ID_TOKENS), None)
            new = _add_entity(s, name, key or f"{snake(name)}_id", ent.key_type, synthetic=key is None)
            for a in moved:
                if a in ent.aliases and a.lower() not in ID_TOKENS:
                    ent.aliases.remove(a)
                if a not in new.aliases:
                    new.aliases.append(a)
            for v in groups[q]:
                v.target = name
            for v in s.views.values():
                if q in v.nouns:
                    for pn, en in list(v.refs.items()):
                        if en == ent.name and pn in moved:
                            v.refs[pn] = name
            s.notes.append(f"{ent.name}: the {name} kind split off (its tools' own key {', '.join(sorted(keyed[q]))})")
        s._alias_sig = None


# the verbs that put an existing record in another's list, and take it out ("add droplets to a firewall")
# ("assign a ticket to an agent" sets the ticket's one assignee: no list, `effects._param_changes`)
LINK_VERBS = {"add", "attach", "link", "include", "invite", "associate"}
UNLINK_VERBS = {"remove", "detach", "unlink", "exclude", "dissociate", "uninvite"}
# a membership's own settings, sent beside the two keys (`collections.add_user({id, userId, permission})`)
_LINK_EXTRAS = {"permission", "permissions", "role", "roles", "position", "index", "section", "access", "level", "type"}


def _links(s: Schema) -> None:
    """`firewall_add_droplets(ID, DropletIDs)`, `add_item_to_playlist(playlist_id, ids)`, `removeUser(id, userId)`: the
    records named join (or leave) the list of the one record the tool is about; neither is made or deleted. Read as
    an update of that container whose effect appends (removes) the members' keys. Before, such a tool made a blank
    droplet holding the firewall's id (DigitalOcean: every droplet's `ID` was a firewall's). Found by the name's
    words (the verb, the members' noun, the container's noun) and the params' keys, on any API; a member that holds
    its one link itself (a bookmark's `listId`) keeps that model (`effects._unlink`)."""
    for v in s.views.values():
        said = re.match(r"\s*([A-Za-z]+)", v.tool.description or "")
        verb = v.verb if v.verb in LINK_VERBS | UNLINK_VERBS else verb_lemma(said.group(1).lower()) if said else None
        # (Plane's `delete_module_issue`: "Remove an issue from a module", the docs' own verb)
        if verb not in LINK_VERBS | UNLINK_VERBS or v.kind not in ("create", "update", "delete", "action") or v.link:
            continue
        got = _link_of(s, v)
        if got is None:
            continue
        cp, c, mp, m = got
        e = s.entities[c]
        fname = _member_field(s, e, mp, m)
        if fname is None:
            continue
        if fname not in e.fields:
            item = A.NamedType(m) if m else A.PrimType("str")
            e.fields[fname] = Field(fname, A.OptionalType(A.ListType(item)), f"the {plural(' '.join(tokens(m or mp)))} in the {' '.join(tokens(c))}")
        v.kind, v.target, v.key_param = "update", c, cp
        v.refs[cp] = c
        if m is not None:  # the members are records of their kind, by their keys (`project_id: Project`)
            (v.list_refs if v.tool.param(mp).type.kind == "array" else v.refs)[mp] = m
        v.link = (mp, fname, verb in LINK_VERBS)
        s.notes.append(f"{v.tool.name}: {'adds' if verb in LINK_VERBS else 'removes'} {mp} {'to' if verb in LINK_VERBS else 'from'} {c}.{fname}")


def _link_of(s: Schema, v: ToolView) -> tuple[str, str, str, str | None] | None:
    """(container param, container entity, member param, member entity or None for plain values) of a link tool."""
    name = [singular(w) for w in (v.toks or tokens(v.tool.name))]
    desc = (v.tool.description or "").split(".")[0].lower()

    def said(ent_or_words) -> bool:
        ws = [singular(w) for w in (tokens(ent_or_words) if isinstance(ent_or_words, str) else ent_or_words)]
        return bool(ws) and (_find(name, ws) is not None or re.search(rf"\b{re.escape(' '.join(ws))}s?\b", desc) is not None)

    req = [p for p in v.tool.params if p.required and not plumbing(p) and p.name not in s.session]
    bound = {**v.refs, **({v.key_param: v.target} if v.key_param and v.target else {})}
    conts = [(p.name, ent) for p, ent in ((p, bound.get(p.name)) for p in req) if ent and p.type.kind != "array" and said(ent)]
    members = []
    for p in req:
        ent = v.list_refs.get(p.name) or v.refs.get(p.name)
        stem = id_stem(p.name)
        if ent is None and stem is not None and entity_name(stem[0]) in s.entities:
            ent = entity_name(stem[0])
        if ent is None and p.type.kind == "array" and entity_name(tokens(singular(p.name))) in s.entities and \
                re.search(r"\b(?:ids?|uuids?|keys?|identifiers?)\b", p.description or "", re.I):
            ent = entity_name(tokens(singular(p.name)))  # Plane's `issues: "Array of issue UUIDs"`
        words = tokens(ent) if ent else (stem[0] if stem else tokens(singular(p.name)))
        if said(words):
            members.append((p.name, ent))
    def where(ent: str) -> bool:  # "to a firewall", "from a list", `remove_bookmark_from_list`: the record that holds
        ws = [singular(w) for w in tokens(ent)]
        at = _find(name, ws)
        if at is not None and any(w in ("to", "from", "into", "onto") for w in name[:at]):
            return True
        return re.search(rf"\b(?:to|from|into|onto)\s+(?:(?:an?|the|its|this|that|your|one or more)\s+)?(?:[\w-]+\s+)?"
                         rf"{re.escape(' '.join(ws))}s?\b", desc) is not None

    if any(where(c) for _, c in conts):
        conts = [(cp, c) for cp, c in conts if where(c)]  # (a bookmark removed from a list: the list holds it)
    for cp, c in conts:
        ms = [(mp, m) for mp, m in members if mp != cp and m != c and not (m and where(m))]
        if len(ms) != 1:
            continue
        mp, m = ms[0]
        rest = [p for p in req if p.name not in (cp, mp) and p.name not in bound]  # (where the container lives: `project_id`)
        if any(not (set(tokens(p.name)) & _LINK_EXTRAS or p.type.kind in ("boolean", "enum")) for p in rest):
            continue  # `add_comment(page_id, content)`: a new record with what it holds, no link
        if m is not None and _holds_its_link(s, v, m, c):
            continue  # a bookmark's own `listId`: the member holds its one link (`effects._unlink`)
        mparam = v.tool.param(mp)
        if m is None and (mparam is None or mparam.type.kind != "array"):
            continue
        return cp, c, mp, m
    return None


def _holds_its_link(s: Schema, v: ToolView, m: str, c: str) -> bool:
    """Whether records of `m` keep their one `c` themselves: a field of that type, a create or an update of them
    that takes a `c` (`create_bookmark(list_id)`), or a documented return that names one. (Fields are gathered after
    `_links`, so the tools and returns are read too.)"""
    if any(strip_optional(f.type) == A.NamedType(c) for f in s.entities[m].fields.values()):
        return True
    for o in s.views.values():
        if o.target != m:
            continue
        if o is not v and o.kind in ("create", "update") and c in o.refs.values():
            return True
        obj = unwrap_return(s, o.tool.returns) if o.tool.returns is not None else None
        if obj is not None and any(s.ref_of(f.name) == c for f in obj.fields):
            return True
    return False


def _member_field(s: Schema, e: Entity, mp: str, m: str | None) -> str | None:
    """The list field of container `e` that holds the members: one the docs name like the param (`DropletIDs`),
    one typed as a list of them, else a new `<members>_ids`; plain values only into a list the docs give it."""
    same = field_named(e, ident(mp))
    if same is not None and isinstance(strip_optional(e.fields[same].type), A.ListType):
        return same
    if m is not None:
        typed = [f for f, fd in e.fields.items() if strip_optional(fd.type) == A.ListType(A.NamedType(m))]
        if len(typed) == 1:
            return typed[0]
        if same is not None:
            return None
        return ident(snake(m) + "_ids")
    others = [p for t in s.env.tools for p in t.params if p.name == mp and p.type.kind == "array" and s.views[t.name].target == e.name and t.name]
    return ident(mp) if others else None


def _points_to(s: Schema, v: ToolView, parents: set[str]) -> bool:
    """Whether the records a tool returns each point to one of `parents` (`GET /Services/{sid}/RateLimits`
    returns rate limits with a `service_sid`): they are children listed by their parent."""
    obj = unwrap_return(s, v.tool.returns) if v.tool.returns is not None else None
    return obj is not None and any(s.ref_of(f.name) in parents for f in obj.fields)


def _nested_collection(s: Schema, v: ToolView) -> str | None:
    """The entity a REST collection nested in a record lists: `GET /parents/{pid}/children` with a list return
    lists children (an entity named by the last segment). None when the parent's own record documents a list of
    them (`GET /events/{event}/tags` reads the event's `tags`), or the path is not of that form."""
    segs = [x for x in (v.tool.http_path or "").split("/") if x]
    if v.kind not in ("read", "search") or v.tool.http_method != "GET" or len(segs) < 2 or segs[-1].startswith("{") or not segs[-2].startswith("{"):
        return None
    pname = segs[-2][1:-1]
    parent = v.refs.get(pname)
    child = entity_name([singular(w) for w in tokens(segs[-1])])
    if parent is None or child not in s.entities or child == parent or v.tool.returns is None or not _returns_list(s, v.tool.returns):
        return None
    holds = _lists_at(s).get("/".join(segs[:-1]), set())  # the parent's own resource: `GET /events/{event}`
    return None if snake(segs[-1]) in holds or plural(snake(segs[-1])) in holds else child


def _lists_at(s: Schema) -> dict[str, set[str]]:
    """{GET path: the list fields of the record it returns}, computed once per schema (read per view)."""
    if s._lists_at is None:
        s._lists_at = {}
        for t in s.env.tools:
            if t.http_method == "GET" and t.returns is not None and (obj := unwrap_return(s, t.returns)) is not None:
                key = "/".join(x for x in (t.http_path or "").split("/") if x)
                s._lists_at.setdefault(key, set()).update(snake(f.name) for f in obj.fields if f.type.kind == "array")
    return s._lists_at


def _bind_by_return_shape(s: Schema) -> None:
    """A list named by a synonym (`v1_application_list` beside `/app/{app_id}`) lists the records whose getter
    returns the same documented shape: a read bound to nothing, with no required argument, whose items have the
    fields another tool's record has, searches those records (blind pool 6: Svix listed no apps)."""
    shapes: dict[frozenset, str] = {}
    for v in s.views.values():
        if v.target and v.kind in ("read", "create") and v.tool.returns is not None and v.tool.returns.kind != "array":
            obj = unwrap_return(s, v.tool.returns)
            if obj is not None and len(obj.fields) >= 3 and not any(f.type.kind == "array" for f in obj.fields if snake(f.name) in ("data", "items", "results")):
                shapes.setdefault(frozenset(f.name for f in obj.fields), v.target)
    for v in s.views.values():
        if v.target is not None or v.kind not in ("read", "search") or v.tool.returns is None or v.refs:
            continue
        if any(p.required and not plumbing(p) for p in v.tool.params) or not _returns_list(s, v.tool.returns):
            continue
        obj = unwrap_return(s, v.tool.returns)
        ent = shapes.get(frozenset(f.name for f in obj.fields)) if obj is not None else None
        if ent is not None:
            v.target, v.kind = ent, "search"


def _returns_list(s: Schema, ret: ir.Type) -> bool:
    """Whether a documented return is a list of records, bare or in a page (`{data: [...], iterator, done}`)."""
    if ret.kind == "array":
        return True
    obj = s.env.definitions.get(ret.ref) if ret.kind == "ref" else ret
    return obj is not None and obj.kind == "object" and sum(f.type.kind == "array" for f in obj.fields) == 1


def plumbing(p: ir.Param) -> bool:
    """A required parameter that carries no choice: one allowed value (`apiVersion: "1.0"`) or a switch the
    docs say must be on (Nextcloud's `OCS-APIRequest` "Required to be true for the API request to pass")."""
    t = p.type
    return (t.kind == "enum" and len(t.values or ()) == 1) or (
        t.kind == "boolean" and MUST_BE_TRUE.search(p.description or "") is not None)


MUST_BE_TRUE = re.compile(r"\brequired to be true\b|\bmust (?:always )?be true\b", re.I)  # a switch with no choice (the sampler reads it too)


def _path_owner(s: Schema, t: ir.Tool) -> tuple[str, str] | None:
    """(param, entity) for a bare id in an HTTP path (`/campaigns/{id}/status`): the segment before it names
    whose id it is, when that is a known entity."""
    segs = [x for x in (t.http_path or "").split("/") if x]
    for i, seg in enumerate(segs[1:], 1):
        name = seg[1:-1] if seg.startswith("{") and seg.endswith("}") else None
        if name and name.lower() in ID_TOKENS and not segs[i - 1].startswith("{") and t.param(name) is not None:
            ent = entity_name([singular(w) for w in tokens(segs[i - 1])])
            if ent in s.entities:
                return name, ent
    return None


def gives_new_name(p: ir.Param) -> bool:
    """A name or title param its doc calls "the new name" (`project_name: "The new name of the project."`): a value
    the record is given, never the record it names."""
    return tokens(p.name)[-1:] in (["name"], ["title"]) and _scalar_kind(p.type) == "string" and \
        re.match(r"\s*(?:the\s+)?(?:new|updated)\b", p.description or "", re.I) is not None


def _bind_refs(s: Schema, v: ToolView) -> None:
    """Params that denote an entity: a key (`refs`) or a list of keys (`list_refs`)."""
    for p in v.tool.params:
        if gives_new_name(p):
            continue  # `update_project(project_name: "The new name of the project")`: the name it is given, not the
            # project it names (review 92: a rename read as a second project, and its documented default lost)
        ent = _described_owner(s, p, v.tool.name, v.kind) or s.ref_of(p.name)
        sk = _scalar_kind(p.type)
        if (ent is None and sk in ("integer", "number") and len(tokens(p.name)) <= 2 and entity_name(tokens(singular(p.name))) in s.entities
                and not _attribute_doc(p)):
            ent = entity_name(tokens(singular(p.name)))  # `correspondent: number`, `storage_path: number`: a record by its numeric id
            sk = "integer"
        elif ent is None and sk == "string" and p.type.kind != "array" and _names_the_record(s, p) and not (
                v.kind == "create" and set(tokens(singular(p.name))) <= {singular(w) for w in tokens(v.tool.name)}):
            ent = entity_name(tokens(singular(p.name)))  # `search_tasks(workspace: "The workspace to search in")`: a workspace, by its key
        if ent is None:
            continue
        if sk == "number" and (id_stem(p.name) or p.name.lower() in ID_TOKENS or s.ref_of(p.name) == ent):
            sk = "integer"  # `pullRequestId: number` (a zod `z.number()` schema), `issue_number: number` naming an issue by
            # its key: an id is a whole number
        if p.type.kind == "array" and sk in ("string", "integer"):
            v.list_refs[p.name] = ent
        elif sk in ("string", "integer") and p.type.kind != "array":
            v.refs[p.name] = ent


def _own_codes(s: Schema) -> None:
    """Plane's `create_project(identifier: "The identifier of the project ... derived from the name")`: a bare id
    param of a create that names the kind it makes is the new record's own code, not a record it is made for (review
    72: a new project was given another project's id as its identifier)."""
    for v in s.views.values():
        if v.kind != "create" or v.target is None:
            continue
        for pname, ent in list(v.refs.items()):
            p = v.tool.param(pname)
            if ent == v.target and pname.lower() in ID_TOKENS and p is not None and p.type.kind == "string" and p.name != v.key_param:
                del v.refs[pname]


def _names_the_record(s: Schema, p: ir.Param) -> bool:
    """Whether a string param called by a record's own noun (`workspace`, `customer`) passes that record by its
    key: its doc calls it the record itself ("The workspace to search in"), or, where records are keyed by their
    names, its name or id ("Customer name (ID)"); never a type, group or title of it (review 35: Asana tasks
    searched in a "workspace" holding a company name the workspace list never returns; ERPNext orders whose
    customer nothing could fill)."""
    ws = tokens(singular(p.name))
    ent = entity_name(ws) if 1 <= len(ws) <= 2 else None
    if ent not in s.entities or _attribute_doc(p):
        return False
    key = tokens(s.entities[ent].key)
    d = (p.description or "").strip().lower()
    noun = re.escape(" ".join(ws))
    by_name = bool(key) and key[-1] in ("name", "title")  # a record keyed by its name is passed by it: "Customer name (ID)"
    said = "(?: name| id)?" if by_name else ""
    other = "type|kind|group|slug|title|label" + ("" if by_name else "|name")
    return bool(re.match(rf"(?:the |an? |which |target )?{noun}{said}\b(?! (?:{other})\b)", d))


def _described_owner(s: Schema, p: ir.Param, tool: str = "", kind: str = "") -> str | None:
    """The entity a bare `id` param's own doc names: `create_document_note(id: "The document ID")` takes a
    document, whatever other record is keyed by `id` (review of paperless: a user's id was sent as the
    document's). Only "the X ID" / "ID of the X" with X a known entity; a bare `name` only as "X name" where the
    tool's own name says X and a required `name` finds a record (ERPNext's `purchase_order_get(name: "Purchase Order
    name (e.g. PO-00001)")`), never a new record's name (Redmine's `manage_redmine_project(name: "Project name")`)."""
    d = (p.description or "").strip().lower()
    if p.name.lower() == "name" and tool and kind in ("read", "delete", "update") and p.required:
        m = re.match(r"(?:the )?((?:[a-z]+ ){1,3})name\b", d)
        raw = m.group(1).split() if m else []
        named = set(tokens(tool)) | {singular(w) for w in tokens(tool)}
        for ws in (raw, [singular(w) for w in raw]):  # "Sales Order" is a SalesOrder, not a "sale order"
            if ws and entity_name(ws) in s.entities and set(ws) <= named:
                return entity_name(ws)
        return None
    if p.name.lower() not in ID_TOKENS:
        return None
    # "ID of the X" first: "the id of the comment" would read as an X called "the" by the other form; the noun
    # phrase ends where a clause begins ("the comment to update", "the website alert configuration to be updated")
    m = re.match(r"(?:the |an? )?(?:(?:universally )?unique )?(?:id|uuid|identifier) (?:\((?:uuid|guid|id)\) )?(?:of|for) (?:the |an? )?((?:(?!(?:to|that|which|whose|you|in|on|for|of|from|by|with|be)\b)[a-z]+ ?){1,4})", d)
    named = {singular(w) for w in tokens(tool)}
    if m is None:
        m, named = re.match(r"(?:the |an? )?([a-z]+(?: [a-z]+)?) (?:id|uuid|gid|identifier)\b", d), None
    if not m:
        return None
    ws = [singular(w) for w in m.group(1).split()]
    for i in range(len(ws)):  # "blog post", then "post": the head noun is the last
        ent = entity_name(ws[i:])
        # ... and in the "ID of the X" form, the tool's own name says X too (`wp_update_comment`): Instana's "the
        # identifier of the infrastructure alert configuration" is no `Configuration` record of another tool's
        if ent in s.entities and (named is None or set(ws[i:]) <= named):
            return ent
    return None


def _attribute_doc(p: ir.Param) -> bool:
    """Does the param's doc call it an attribute of something else ("Zone order", "Display order": a zone's
    sort position, not an order's id)? A short phrase ending in the param's own words, opened by a noun or
    adjective rather than an article, and saying nothing of an id."""
    words = re.findall(r"[a-z]+", p.description.lower())
    own = tokens(p.name)
    return (1 < len(words) <= 3 and words[-len(own):] == own and words[0] not in DETERMINERS
            and not set(words) & {"id", "ids", "identifier", "key", "number"})


# "ID of the project to update", "Name of the task to retrieve (if ID not provided)": which record, not a new value
NAMES_TARGET = re.compile(r"\b(?:id|name|title|key)\b[^.]{0,20}?\bof the \w+(?: \w+)? to (?:update|delete|remove|retrieve|get|move|close|"
                          r"complete|reopen|archive|rename|change|edit|modify)\b", re.I)


def batch_key(s: Schema, v: ToolView, p: ir.Param) -> str | None:
    """The item field that names the record a batch update or delete acts on: `id`, `<entity>_id` or the
    entity's key (Todoist's `update_projects(items: [{id, name, color}])`), else None; for a body that holds one
    record's key (`body_with_key`), the body's own field."""
    if v.target is None:
        return None
    e = s.entities[v.target]
    fields = p.type.items.fields if p.type.kind == "array" and p.type.items is not None else p.type.fields
    names = {ident(f.name): f for f in fields or ()}
    for cand in (e.key, f"{snake(e.name)}_id", "id"):
        if cand in names and names[cand].type.kind in ("string", "integer", "number"):
            return cand
    return None


def body_with_key(v: ToolView) -> ir.Param | None:
    """The one param of an RPC-style write that is an object naming the record by its `id` (Outline's
    `POST /documents.update` with `{id, title, text}`, `POST /collections.delete` with `{id}`): the record the id names
    is acted on, and the body's other fields are its new values. Before, 41 of Outline's writes only logged."""
    ps = [p for p in v.tool.params if p.location not in ("header", "cookie")]
    if len(ps) != 1 or ps[0].type.kind != "object" or not ps[0].type.fields:
        return None
    return ps[0] if any(ident(f.name) == "id" for f in ps[0].type.fields) else None


def _batch_of(v: ToolView, named: str | None = None) -> bool:
    """Whether a write's one required param is a batch (`items: [{id, ...}]`) whose items name records by `id`;
    the batch may be named for the records themselves (Todoist's `update_tasks(tasks: [{id, content}])`)."""
    req = [p for p in v.tool.params if p.required]
    it = req[0].type.items if len(req) == 1 and req[0].type.kind == "array" else None
    own = named is not None and is_plural(req[0].name) and tokens(singular(req[0].name)) == tokens(named) if req else False
    return it is not None and it.kind == "object" and (snake(req[0].name) in BATCH_PARAMS or own) and any(
        ident(f.name) == "id" or tokens(f.name)[-1:] == ["id"] for f in it.fields)


def _bind_named_target(s: Schema, v: ToolView, named: str | None) -> None:
    """Searches and creates are about the entity their name names; a create names its fresh key."""
    if v.kind in ("search", "create"):
        v.target = named if named in s.entities else None
        if v.kind == "create" and v.target is None and v.refs:
            # `git_add(repo_path, files)`, `add_travel_credit(user_id)`: no record is named, so it changes the record
            v.kind = "update"
        elif v.kind == "search" and v.target is None and len(v.refs) == 1:
            v.kind = "read"
    if v.kind == "create" and v.target:
        e = s.entities[v.target]
        own = [pname for pname, ent in v.refs.items() if ent == v.target and (pname == e.key or pname in e.aliases)]
        # the key itself before an alias, and never a qualified one: `create_sheet(sheet_name, source_sheet_name)`
        # names the new sheet by `sheet_name` and copies the one `source_sheet_name` names (review 48)
        own.sort(key=lambda pname: (pname != e.key, tokens(pname)[0] in QUALIFIERS))
        if own and not (tokens(own[0])[0] in QUALIFIERS and len(tokens(own[0])) > 1):
            v.fresh_key = own[0]
            del v.refs[own[0]]


def _holds(s: Schema, holder: str, ent: str) -> bool:
    """Whether records of `holder` point to one of `ent`: a create named for `holder` takes a key of `ent`."""
    return any(v.kind == "create" and v.nouns and _noun_entity_name(s, v.nouns) == holder
               and any(s.ref_of(p.name) == ent for p in v.tool.params) for v in s.views.values())


def _names_a_place(v: ToolView, ents) -> bool:
    """Whether the tool's name says where its thing goes, by an entity after `to`/`into`/`onto`
    (`add_tag_to_task`, `move_card_to_list`)."""
    for prep in ("to", "into", "onto"):
        if prep in v.toks[1:]:
            after = v.toks[v.toks.index(prep, 1) + 1:]
            if any(_find(after, tokens(e)) is not None for e in ents):
                return True
    return False


def named_for_another(s: Schema, v: ToolView) -> str | None:
    """The noun a write tool is named for when that is not the record it was bound to: `updateCampaignById`
    bound to a Subscriber (no Campaign record was found), `deleteBounces` on a Subscriber. None when the
    name, its first sentence or the record's fields name the target, or the name has no noun. Effect
    synthesis logs such a tool's calls instead of writing a guess into the wrong records."""
    if not v.target or v.target not in s.entities:
        return None
    ent = s.entities[v.target]
    want = [singular(w) for w in tokens(v.target)]
    segs = [x for x in (v.tool.http_path or "").split("/") if x]
    if v.kind == "delete" and len(segs) >= 2 and segs[-2].startswith("{") and not segs[-1].startswith("{"):
        last = [singular(w) for w in tokens(segs[-1])]
        if last and _find(last, want) is None and not set(tokens(segs[-1])) & (ALL_VERBS | {v.verb}):
            return " ".join(tokens(segs[-1]))  # DELETE /subscribers/{id}/bounces removes the bounces, not the subscriber
    nouns = [n for n in v.nouns if n != v.verb and n != v.toks[0]]  # `git_reset`: the one word is its verb
    if not nouns or set(nouns) & (set(BALANCE_FIELDS) | set(AMOUNT_PARAMS) | {"money", "fund"}):
        return None  # `transfer_funds(from_account_id, ...)`: the name says what moves, an amount, not a record
    head = _noun_entity_name(s, nouns)
    if v.verb in CREATE_VERBS and v.kind != "create" and head in s.entities and head != v.target and \
            _find([singular(w) for w in v.toks], want) is None:  # `erpnext_sales_order_submit` submits the sales order
        return f"a new {humanize(head)}"  # `create_specific_calendar_event(calendarId, body)` makes an event
    if v.kind == "create" and _names_a_place(v, [e for e in v.refs.values() if e != v.target]) and (
            v.fresh_key or any(e == v.target for e in v.refs.values())):
        return "a link between records"  # `add_tag_to_task(task_gid, tag_gid)`: an existing tag goes onto a task
    if v.kind == "delete" and "from" in v.toks[2:]:
        cut = v.toks.index("from", 2)
        after = [singular(w) for w in v.toks[cut + 1:]]
        if any(_find(after, [singular(w) for w in tokens(e)]) is not None for e in [v.target, *v.refs.values()]):
            # `remove_tag_from_task(task_gid, tag_gid)`: the tag comes off the task; neither record is deleted
            return " ".join(v.toks[1:cut]) + " taken off a " + " ".join(v.toks[cut + 1:])
    # a kind split off by its name's word is named with the verb between (`doks_delete_cluster`: a DoksCluster)
    named = _find([singular(w) for w in v.toks], want) is not None or len(want) > 1 and set(want) <= {singular(w) for w in v.toks}
    if v.kind == "delete" and not named:
        return " ".join(nouns)  # `delete_documents(collection_name, ids)` removes documents, never the collection
    undo = next((t for t in v.toks if (base := _undone(t)) and base[:4] not in v.target.lower()), None)
    if v.kind == "delete" and undo is not None:
        return f"a link the {undo} undoes"  # `stories_unassign_current_user`: the user leaves the story, which stays (review 69)
    if v.kind == "delete" and (part := _part_deleted(v, want, ent)):
        return part  # `delete_user_image(user_id)` removes the user's image, never the user (jellyfin)
    if named or any(_find(v.toks, tokens(a)) is not None for a in ent.aliases if a not in GENERIC_KEYS):
        return None
    first = re.split(r"(?<=[a-z0-9)])\.(?:\s|$)", (v.tool.description or "").strip(), maxsplit=1)[0]
    if v.kind != "delete" and _find([singular(w) for w in tokens(first)], want) is not None:
        return None  # a delete must be named for what it removes: "Delete documents from a collection" keeps the collection
    fields = {w for f in ent.fields for w in tokens(f)}
    if all(singular(n) in fields or n in fields for n in nouns):
        return None  # `update_user_address`: the name's noun is a field of the record
    return " ".join(nouns)


def _longer_named(s: Schema, named: str | None, v: ToolView) -> str | None:
    """The one entity the tool's words name more closely than `named` does: Microsoft Graph's
    `list-planner-task-messages` lists `PlannerTaskChatMessage`s (its delete takes `plannerTaskChatMessageId`), not
    mail `Message`s nor `PlannerTask`s (review 78: mail replies "to my message in my planner task"). The tool's noun
    words, in order, are inside the entity's name, which ends with the same head noun."""
    if named not in s.entities or not v.nouns:
        return None
    words = [singular(w) for w in v.nouns]
    head = words[-1]
    base = [singular(w) for w in tokens(named)]
    if len(words) <= len(base):
        return None  # the tool says no more than the entity's own name (`list_documents` of Document)
    found = []
    for e in s.entities:
        et = [singular(w) for w in tokens(e)]
        if e == named or len(et) <= len(words) or et[-1] != head:
            continue
        it = iter(et)
        if all(w in it for w in words):  # the tool's words in order inside the entity's name
            found.append(e)
    return found[0] if len(found) == 1 else None


def _bind_key_param(s: Schema, v: ToolView) -> None:
    """The ref param that addresses the record a read/change is about; then its status words.

    A path ending in a param addresses that resource (DELETE /contents/{path}/checkpoints/{checkpoint_id}
    deletes the checkpoint); else the entity named in the tool name, then path params, then
    the first required one."""
    t = v.tool
    cands = list(v.refs.items())
    pick = None
    segs = [x for x in (t.http_path or "").split("/") if x]
    if segs and segs[-1].startswith("{"):
        pick = next(((pn, en) for pn, en in cands if pn == segs[-1][1:-1]), None)
    named = sorted(((pos, pname, ent) for pname, ent in (cands if pick is None else ()) if (pos := _find(v.toks, tokens(ent))) is not None),
                   key=lambda x: x[0])
    if named:
        # the head noun is the last (`delete_calendar_event`: an event), unless an earlier one holds it as an
        # attribute (`change_reservation_flight`: a reservation's flight is changed, as `book_reservation(flight_number)` shows)
        _, pname, ent = named[-1]
        holder = next((x for x in named[:-1] if _holds(s, x[2], ent)), None)
        pick = (holder[1], holder[2]) if holder else (pname, ent)
    if pick is None:
        last = [x[1:-1] for x in (t.http_path or "").split("/") if x.startswith("{")]
        for pname, ent in cands:
            if last and pname == last[-1]:
                pick = (pname, ent)
    said = _prose_subject(s, v, [en for _pn, en in cands])
    if said and pick is not None and (segs or not _prose_subject(s, v, [en for _pn, en in cands], own=True) or _prose_names(v, pick[1])):
        said = None  # the name's record stays: the prose changes it too, or only counts/pays on another
    if said:
        # "Sets the line status ...", "Stores the plan_id on the line": the record the prose changes
        pick = next((pn, en) for pn, en in cands if en == said)
    if pick is None:
        req = [(pn, en) for pn, en in cands if (t.param(pn) and t.param(pn).required)]
        pick = (req or cands)[0]
    longer = _longer_named(s, pick[1], v)
    if longer is not None and any(en == longer for _pn, en in cands):
        pick = next((pn, en) for pn, en in cands if en == longer)  # `delete_planner_task_message(plannerTaskId,
        # plannerTaskChatMessageId)` deletes the chat message, not the planner task it is in
    v.key_param, v.target = pick
    del v.refs[pick[0]]
    _status_words(s, v)
    _prose_status(s, v)
    if v.kind == "delete" and not v.status_post and any(f.kind in ("toggle", "record", "count") for f in v.facts) and not re.search(r"\b(delete|remove|destroy|erase)", (t.description or "").lower()):
        v.kind = "update"  # DELETE /members/{id}/autopay "Switches autopay off": the member stays
    if v.kind == "action" and (v.status_post or prose.state_facts(v.facts)):
        v.kind = "delete" if v.verb in ("cancel", "close", "archive", "terminate", "revoke") else "update"


def _prose_names(v: ToolView, ent: str) -> bool:
    """Whether some state change in the description is said of `ent`'s records."""
    return any(f.subject and prose.names_entity(f.subject, ent) for f in prose.state_facts(v.facts))


def _prose_subject(s: Schema, v: ToolView, ents: list[str], own: bool = False) -> str | None:
    """The one entity among `ents` that the description's state changes name ("Sets the line
    status to ...", "Turn roaming on for a line"); money moves name the payer, so count last.
    `own`: only changes of the record itself (status, recorded values, flags, assignments), not
    the counts and money a tool moves on other records ("increments the agent's open_tickets")."""
    facts = [f for f in prose.state_facts(v.facts) if f.subject and (not f.conditional or f.when)]
    if own:
        facts = [f for f in facts if f.kind in ("status", "record", "toggle", "assign")]
    for group in ([f for f in facts if f.kind != "money"], [f for f in facts if f.kind == "money"]):
        hit = {e for f in group for e in ents if prose.names_entity(f.subject, e)}
        if len(hit) == 1:
            return hit.pop()
        if hit:
            return None
    return None


def _prose_values(s: Schema) -> set[str]:
    """Every state value a description says some record is set to (normalized; once per schema)."""
    got = s.__dict__.get("_prose_values")
    if got is None:
        got = s.__dict__["_prose_values"] = {_norm(str(f.value)) for v in s.views.values() for f in v.facts if f.kind == "status"}
    return got


def _prose_status(s: Schema, v: ToolView) -> None:
    """"Sets the line status to Suspended" -> the state after; "The line must be Active",
    "Only an Active line can be ..." -> the state before; each remembers its sentence."""
    if v.kind == "create" or v.target is None:
        return
    mine = [f for f in v.facts if not f.conditional and (not f.subject or prose.names_entity(f.subject, v.target))]
    post = [f for f in mine if f.kind == "status"]
    if post:
        f = post[-1]
        # the state the docs name wins over the verb's ("Calls a ride off. Rental status is set
        # to `finished`": not "cancelled"), spelled as the docs spell it (the enum's spelling wins later)
        v.status_post = str(f.value)
        v.cites["status_post"] = f.sentence
    known = _prose_values(s) | {_norm(x) for x in STATUS_WORDS} | {_norm(x) for x in _status_enum(s, v.target) or ()}
    marked = lambda f: str(f.value)[:1].isupper() or re.search(rf"['\"`]{re.escape(str(f.value))}['\"`]", f.sentence)  # noqa: E731
    pre = [f for f in mine if f.kind == "require" and (_norm(str(f.value)) in known or marked(f)) and _norm(str(f.value)) != _norm(v.status_post or "")]
    if pre and v.status_pre is None and not v.status_allowed:
        v.status_pre = str(pre[0].value)
        v.cites["status_pre"] = pre[0].sentence


def _prose_forbidden(s: Schema, v: ToolView) -> None:
    """"cannot be moved ... while it is Suspended": documented states the change is refused in."""
    vals = _status_enum(s, v.target) or ()
    for f in v.facts:
        if f.kind != "forbid" or (f.subject and not prose.names_entity(f.subject, v.target)):
            continue
        for w in f.value:
            hit = next((x for x in vals if _norm(x) == _norm(w)), None)
            if hit is not None and hit not in v.status_forbidden and hit != v.status_pre and hit not in v.status_allowed:
                v.status_forbidden.append(hit)
                v.cites[f"forbid:{hit}"] = f.sentence


_NOT_A_PART = frozenset({"id", "ids", "key", "keys", "record", "records", "entry", "entries", "permanently", "forever", "now"})


def _part_deleted(v: ToolView, want: list[str], ent: Entity) -> str | None:
    """What a delete named `<record> <part>` removes when that is a part of the record, not the record:
    `delete_user_image(user_id)`, `delete_user_item_rating(item_id, user_id)`, `DELETE .../accounts/{number}/username`
    (a noun follows the record's name, before any `by`/`from`). None when the name ends with the record's name or
    what follows is no noun (`delete_task_permanently`, `delete_user_by_id`)."""
    i = _find(v.toks, want)
    if i is None:
        return None
    rest: list[str] = []
    for w in v.toks[i + len(want):]:
        if w in PREPOSITIONS or w == "by":
            break
        rest.append(w)
    if not rest or rest[0] in _NOT_A_PART or "NOUN" not in lemmas(rest[0]) or rest[0] in {w for a in ent.aliases for w in tokens(a)}:
        return None
    if _names_an_act(rest[0]) or rest[0] == v.verb or verb_lemma(rest[0]) == v.verb:  # (`..._card_archive`: the verb, last)
        return None  # `project_management`, `package_installation`: the act on the record, no part of it
    return " ".join(want + rest)


def _names_an_act(noun: str) -> bool:
    """Whether `noun` is the dictionary's noun of an act ("management" of manage, "installation" of install)."""
    for suf in ("ment", "ation"):  # (not "-ing": a rating, a booking are things as much as acts)
        if noun.endswith(suf) and len(noun) > len(suf) + 2:
            stem = noun[: -len(suf)]
            if any(is_verb(c) and act_noun(c) == noun for c in (stem, stem + "e")):
                return True
    return False


def _find(toks: list[str], sub: list[str]) -> int | None:
    if not sub:
        return None
    sub = sub[:-1] + [singular(sub[-1])]
    st = [singular(x) for x in toks]
    return next((i for i in range(len(st) - len(sub) + 1) if st[i : i + len(sub)] == sub), None)


def _contains(toks: list[str], sub: list[str]) -> bool:
    if not sub:
        return False
    sub = sub[:-1] + [singular(sub[-1])]
    st = [singular(x) for x in toks]
    return any(st[i : i + len(sub)] == sub for i in range(len(st) - len(sub) + 1))


def _status_words(s: Schema, v: ToolView) -> None:
    """`cancel_pending_order` -> pre "pending", post "cancelled"; `get_order_status` -> field noun."""
    et = [singular(x) for x in tokens(v.target or "")]
    st = [singular(x) for x in v.toks]
    pos = next((i for i in range(len(st) - len(et) + 1) if et and st[i : i + len(et)] == et), None)
    if pos is None and not (v.verb in STATUS_VERBS and v.verb not in ("pay", "refund", "return") and len(v.tool.params) == 1):
        return  # `check_in(reservation_id)` names no entity, but its one param is the record
    if pos is not None:
        before = v.toks[:pos]
        after = [w for w in v.toks[pos + len(et) :] if w not in STOP]
        if after and v.verb and singular(after[-1]) == singular(v.verb):  # `customer_update`: the verb comes last, no field
            after = after[:-1]
        if before and before[-1] in STATUS_WORDS:
            v.status_pre = before[-1]
        if after:
            v.field_noun = snake("_".join(after))
    desc = v.tool.description or ""
    m = re.search(r"status\s+(?:will\s+be\s+|is\s+)?(?:changed|set|updated|moved)\s+to\s+['\"]([^'\"]{1,40})['\"]", desc, re.I)
    if m and v.kind in ("update", "delete", "action"):
        v.status_post = m.group(1)
    elif v.verb in STATUS_AFTER and v.kind in ("delete", "update", "action") and v.verb in STATUS_VERBS:
        v.status_post = STATUS_AFTER[v.verb]
    if v.status_post and v.kind == "delete" and v.verb in ("cancel", "close", "archive", "revoke", "terminate"):
        pass
    if v.status_post and v.kind == "delete" and not v.field_noun:
        v.kind = "delete"  # a cancellation: kept as `delete` kind, effect is a status change


def _name_keys(s: Schema) -> None:
    """A record every tool addresses by its name (`delete_label(name)`, `get_rule(name)`) and that no doc gives an id:
    the name is its key. Before, labels got a made-up `label_id` the tools took in the name's place, and the gold
    deleted "label_31919" where the user said "Garden project" (review 52)."""
    for e in s.entities.values():
        if not e.synthetic_key:
            continue
        own_key = next((f for f in (f"{snake(e.name)}_key", "key") if f in e.fields and strip_optional(e.fields[f].type) == A.PrimType("str")), None)
        if own_key is not None:
            # Zotero's collections carry "the 8-character key of the collection": that is the key the tools pass (review
            # 54: a sub-collection's parent was given as the made-up `collection_id`)
            if e.key not in e.aliases:
                e.aliases.append(e.key)
            e.fields.pop(own_key)
            e.key = own_key
            continue
        addressed = {ident(v.key_param) for v in s.views.values() if v.target == e.name and v.key_param}
        if len(addressed) != 1:
            continue
        p = next(iter(addressed))
        f = e.fields.get(p)
        if f is None or p == e.key or strip_optional(f.type) != A.PrimType("str") or tokens(p)[-1:] not in (["name"], ["title"]):
            continue
        if e.key not in e.aliases:
            e.aliases.append(e.key)
        e.fields.pop(p)
        e.key = p
        for v in s.views.values():
            if v.target == e.name and v.kind == "create" and not v.fresh_key and any(ident(q.name) == p for q in v.tool.params):
                v.fresh_key = next(q.name for q in v.tool.params if ident(q.name) == p)  # `create_label(name)` names the new one


def _gather_fields(s: Schema) -> None:
    """Run the field rules in order; they share one TypeMapper (records it declares are reused)."""
    tm = TypeMapper(s)
    for rule in FIELD_RULES:
        rule(s, tm)


def _fields_from_returns(s: Schema, tm: TypeMapper) -> None:
    """Documented returns of reads/searches/creates describe their entity."""
    for v in s.views.values():
        ret = v.tool.returns
        if v.target is None or ret is None:
            continue
        obj = unwrap_return(s, ret)
        if obj is None or (v.field_noun and v.kind == "read"):
            continue
        names = [f.name for f in obj.fields]
        owner = _return_owner(s, v, names)
        if owner is None:
            continue
        named = _noun_entity_name(s, v.nouns) if v.nouns else None
        if named in s.entities and named != owner and owner == v.target:
            continue  # `UpdateChallengePasskeys` on a service returns the challenge (blind review 24: a service held them all)
        e = s.entities[owner]
        if not e.doc and obj.description and owner == v.target:
            # what the docs say a record of this kind is ("The Client holds information about a device which can
            # receive notifications"): a client that is a device is named as one, not as a person (values.is_machine)
            e.doc = " ".join(obj.description.split())
        if e.key not in names:
            _adopt_documented_key(e, names)
        for f in obj.fields:
            fname = ident(f.name)
            if field_named(e, fname) is not None:
                continue
            ftype = tm.field_type(f.name, f.type) if fname != e.key else A.PrimType(e.key_type)
            if fname != e.key and not f.required and not isinstance(ftype, A.OptionalType):
                ftype = A.OptionalType(ftype)
            e.fields[fname] = Field(fname, ftype, f.description)
        if len(obj.fields) >= 3:
            e.documented |= {ident(f.name) for f in obj.fields}


def _held_elsewhere(s: Schema, e: Entity, p: ir.Param, search: bool = False) -> bool:
    """Whether a write's param is no field of a record whose return schema the docs give: the schema holds it
    inside a part (Karakeep's `createBookmark(url, assetType)`, returned as `content.url`, `content.assetType`) or
    not at all (`crawlPriority`, a choice for the request). Merged flat, it made records the docs never show, and
    tasks that named bookmarks by them ("my bookmark with the image asset type", review 39)."""
    if len(e.documented) < 3:
        return False
    name = ident(p.name)
    if name in e.documented or field_named(e, name) is not None or name == e.key or name in e.aliases:
        return False
    if any(name in _part_fields(s, f) for f in e.fields.values()):
        return True  # a value the record keeps inside a part
    if search and p.type.kind == "string" and not p.type.values:
        return False  # "Member search by e-mail": a text the record is found by is the record's, documented or not
    # a write's choice the record never shows (`crawlPriority: low|normal`, a flag, another record's id) is the
    # request's; its text (a comment's `text`, kept as rich `data`) is still what the user says
    return p.type.kind in ("enum", "boolean") or bool(p.type.values) or s.ref_of(p.name) is not None


def _part_fields(s: Schema, f: Field) -> set[str]:
    """The field names inside a record-typed field (or a list of records): `content` -> {type, url, assetType, ...}."""
    t = strip_optional(f.type)
    t = t.item if isinstance(t, A.ListType) else t
    if isinstance(t, A.NamedType) and t.name in s.records:
        return set(s.records[t.name].fields)
    return set()


def _adopt_documented_key(e: Entity, names: list[str]) -> None:
    """The documented record calls its key `id` (or the alias itself): use that name."""
    if "id" in names:
        if e.key not in e.aliases:
            e.aliases.append(e.key)
        e.key = "id"
        return
    for a in e.aliases:
        if a in names:
            e.key = ident(a)
            return
    same = next((n for n in names if tokens(n) == tokens(e.key)), None)
    if same is not None:
        if e.key not in e.aliases:
            e.aliases.append(e.key)
        e.key = ident(same)  # `paymentId` in the path, `payment_id` in the record: the record's spelling
        return
    last = tokens(e.key)[-1:]
    if last and last[0] in ("sid", "uuid", "guid") and last[0] in names:
        if e.key not in e.aliases:
            e.aliases.append(e.key)
        e.key = last[0]  # Twilio's `ServiceSid` in the path is the record's `sid` (blind review 24: two keys per service)


def _fields_from_including(s: Schema, tm: TypeMapper) -> None:
    """"details of a user, including their orders" -> User.orders: list[Order]."""
    for v in s.views.values():
        if v.target is None or v.kind not in ("read",):
            continue
        for m in re.finditer(r"including (?:their|its|the)\s+([a-z ]+)", v.tool.description or "", re.I):
            for w in re.split(r",|\band\b", m.group(1)):
                w = w.strip().split(" ")[-1] if w.strip() else ""
                cand = pascal(singular(w)) if w else ""
                if cand in s.entities and cand != v.target:
                    fname = plural(snake(cand)).replace("__", "_")
                    s.entities[v.target].fields.setdefault(fname, Field(fname, A.ListType(A.NamedType(cand)), f"the {fname} of this {v.target}"))


def _fields_from_listed_attributes(s: Schema, tm: TypeMapper) -> None:
    """"List the name and product id of all product types", "List all airports and their
    cities": documented attributes of a searched entity with no schema."""
    for v in s.views.values():
        if v.kind != "search" or not v.target:
            continue
        desc = (v.tool.description or "").lower()
        e = s.entities[v.target]
        phrases: list[str] = []
        m = re.match(r"\s*list (?:the )?([a-z ,]+?) of (?:all )?", desc)
        if m:
            phrases += re.split(r",|\band\b", m.group(1))
        phrases += re.findall(r"\band their ([a-z]+)", desc)
        for ph in phrases:
            name = _attribute_name(s, e, ph)
            if name is not None:
                e.fields[name] = Field(name, A.PrimType("str"), f"from the description of {v.tool.name}")
        for ph, many in _returned_attributes(v.tool.description or "", tokens(v.target)):
            name = _attribute_name(s, e, ph, keep_plural=many)
            if name is not None and not any(set(tokens(f)) & ({singular(w) for w in tokens(name)} | set(tokens(name))) for f in e.fields):
                # a field that shares a word is that attribute already ("seats left" is `seats_available`)
                e.fields[name] = Field(name, A.ListType(A.PrimType("str")) if many else A.PrimType("str"), f"from the description of {v.tool.name}")


_RETURNS_LIST = re.compile(r"\breturn(?:s|ing)\s+(?:the\s+|their\s+|each\s+\w+'s\s+)?([a-z_ ,]+?,\s*(?:and\s+)?[a-z_ ]+?)"
                           r"(?:\s+(?:for|of)\s+(?:each|every|all|them)\b|\s*[.;:(]|$)", re.I)


def _returned_attributes(desc: str, own: list[str]) -> list[tuple[str, bool]]:
    """"Returns vault IDs, names, descriptions, and types", "returning id, title, category, tags, and updatedAt for
    each": the attributes a listing's own sentence says each record carries (1Password's vaults had no name a person
    could call one by, and no task could be made). Only a list of two or more short phrases; the record's own noun in
    front is dropped ("vault IDs"); where most are plural the plurals are the records' ("names"), else a plural is a
    list field's own name ("tags") and is kept."""
    m = _RETURNS_LIST.search(desc)
    if m is None:
        return []
    parts = [p.strip() for p in re.split(r",|\band\b", m.group(1)) if p.strip()]
    parts = [" ".join(p.split()[len(own):]) if [singular(w.lower()) for w in p.split()[:len(own)]] == own else p for p in parts]
    if any(p.split()[0].lower() in ("not", "no", "fewer", "more", "less", "only", "also") for p in parts if p):
        return []  # "adding topic words usually returns fewer results, not more" (Zotero): a comparison, no attributes
    if len(parts) < 2 or any(not p or len(p.split()) > 2 for p in parts):
        return []  # "every flight with its price per economy seat, seats left and status": a sentence, no list of attributes
    most_plural = sum(is_plural(p.split()[-1]) for p in parts) * 2 > len(parts)
    return [(p, not most_plural and is_plural(p.split()[-1])) for p in parts]


def _attribute_name(s: Schema, e: Entity, phrase: str, keep_plural: bool = False) -> str | None:
    """The new field a listed phrase names, or None when it is a key, an entity or known."""
    if re.search(r"\bids?\s*$", phrase, re.I):
        return None  # "product id": the key itself
    w = [x for x in phrase.split() if x not in STOP]
    if not w:
        return None
    last = w[-1] if keep_plural or not is_plural(w[-1].lower()) else singular(w[-1].lower())  # `updatedAt` keeps its case
    name = ident(snake("_".join(w[:-1] + [last])))
    if pascal(name) in s.entities or pascal(name) in s.records:
        return None  # "List all reservations of a user": the listed entity, not an attribute
    if name == e.key or name in e.aliases or s.ref_of(name) or name in e.fields or len(w) > 2:
        return None
    return name


def _price_fields(s: Schema, tm: TypeMapper) -> None:
    """"the item price difference": `<entity> price|cost` in any description is a float field."""
    for v in s.views.values():
        text = " ".join([v.tool.description or ""] + [p.description or "" for p in v.tool.params]).lower()
        for word, attr in re.findall(r"\b([a-z]+) (price|cost)\b", text):
            ent = pascal(singular(word))
            if ent in s.entities and attr not in s.entities[ent].fields:
                s.entities[ent].fields[attr] = Field(attr, A.PrimType("float"), f"the {word} {attr} (from the description of {v.tool.name})")


def _fields_from_create_params(s: Schema, tm: TypeMapper) -> None:
    """Parameters of create tools are fields of the created entity."""
    for v in s.views.values():
        if v.kind == "create" and v.target:
            e = s.entities[v.target]
            for _path, p in flat_params(v):
                if p.name == v.fresh_key or p.name in v.refs or lines_field(s, e, p) is not None or _held_elsewhere(s, e, p):
                    continue
                it = p.type.items
                if p.type.kind == "array" and it is not None and it.kind == "object" and (
                        tokens(singular(p.name)) == tokens(v.target) or snake(p.name) in BATCH_PARAMS):
                    # `create_issues(issues: [{title, ...}])`, Todoist's `create_projects(items: [{name, color}])`: a
                    # batch of new records, each with these fields (not a field `items` of the record)
                    for f in it.fields:
                        _param_field(s, tm, e, ir.Param(name=f.name, type=f.type, required=False, description=f.description), optional=True)
                    continue
                _param_field(s, tm, e, p, optional=not p.required)


def _fields_from_update_params(s: Schema, tm: TypeMapper) -> None:
    """Update tools set fields (grouped under the field the name mentions); a status-changing
    delete records its extra params as optional fields."""
    for v in s.views.values():
        if v.kind not in ("update", "delete", "action") or v.target is None or v.link:
            continue  # (a link's members go in the list `_links` gave the container, nowhere else)
        e = s.entities[v.target]
        extra = _update_extra_params(s, v, e)
        extra = _group_params(s, tm, v, e, extra)
        if v.kind == "update":
            for p in extra:
                if snake(p.name) in BATCH_PARAMS and p.type.kind == "array":
                    continue  # `update_projects(items: [{id, color}])`: the records changed, no field `items` of one
                if not _held_elsewhere(s, e, p):
                    _param_field(s, tm, e, p, optional=False)
            _update_ref_fields(v, e)
        elif v.kind == "delete" and v.status_post:
            for p in extra:
                _param_field(s, tm, e, p, optional=True)


def _update_extra_params(s: Schema, v: ToolView, e: Entity) -> list[ir.Param]:
    """The params of a change that carry new values (not the key, refs, modifiers, amounts
    moved into a balance, or `new_x` when `x` is also there)."""
    extra = [p for _path, p in flat_params(v) if p.name != v.key_param and p.name not in v.refs and not is_modifier(p)]
    if balance_field(e) or any(balance_field(s.entities[x]) for x in v.refs.values()):
        extra = [p for p in extra if p.name not in AMOUNT_PARAMS]
    extra = [p for p in extra if p.name not in prose.amounts(v.facts)]  # "adds gb_amount GB to ...": moved, not stored
    return [p for p in extra if not (p.name.startswith("new_") and any(q.name == p.name[4:] for q in extra))]


def _group_params(s: Schema, tm: TypeMapper, v: ToolView, e: Entity, extra: list[ir.Param]) -> list[ir.Param]:
    """`modify_user_address(user_id, address1, city, ...)`: three or more primitive params
    become one record field named by the tool (`address: Address`); returns the rest."""
    # top-level params only: a field of a request body is set through the body, not as its own argument
    prims = [p for p in extra if p.type.kind in ("string", "integer", "number", "boolean", "enum") and v.tool.param(p.name) is p]
    noun = v.field_noun
    if not (v.kind == "update" and noun and len(prims) >= 3 and noun not in e.fields and not any(p.name == noun for p in extra)):
        return extra
    if sum(tokens(p.name)[:1] == ["new"] for p in prims) * 2 > len(prims):
        return extra  # `calendar_event_edit(new_title, new_start_date, ...)`: the event's own fields, not an "edit" record
    rname = pascal(singular(noun))
    if rname in s.entities:
        rname += "Info"
    have = s.records.get(rname)
    if have is not None and set(have.fields) != {ident(p.name) for p in prims}:
        rname = pascal(singular(e.name)) + rname  # another tool's group of other fields: this entity's own record
        while rname in s.entities or (rname in s.records and set(s.records[rname].fields) != {ident(p.name) for p in prims}):
            rname += "Info"  # `VendorCredit` is an entity too (QuickBooks, blind pool 21: "declared twice")
    rec = s.records.setdefault(rname, Record(rname, {}, f"{noun.replace('_', ' ')} (grouped from {v.tool.name})"))
    for p in prims:
        fname = ident(p.name)
        rec.fields.setdefault(fname, Field(fname, tm.field_type(p.name, p.type), p.description))
    e.fields.setdefault(ident(noun), Field(ident(noun), A.NamedType(rname), f"set by {v.tool.name}"))
    v.group = (ident(noun), rname, tuple(p.name for p in prims))
    return [p for p in extra if p not in prims]


def _update_ref_fields(v: ToolView, e: Entity) -> None:
    """A reference param naming the field (`modify_pending_order_payment(payment_method_id)`)."""
    noun = v.field_noun
    for pname, ent in v.refs.items():
        if ref_field(e, ent) is not None and ident(pname) not in e.fields:
            continue
        if noun and _contains(tokens(ent), tokens(noun)[:1]) or len(v.tool.params) == 2:
            e.fields.setdefault(ident(pname), Field(ident(pname), A.NamedType(ent), v.tool.params and (v.tool.param(pname).description or "")))


def _fields_from_search_filters(s: Schema, tm: TypeMapper) -> None:
    """Search filters are fields of the searched entity (email, origin, date, ...)."""
    for v in s.views.values():
        if v.kind != "search" or v.target is None:
            continue
        e = s.entities[v.target]
        for p in v.tool.params:
            if is_modifier(p) or p.name == e.key or pages_with(v.tool, p):
                continue
            if (p.type.kind == "array" and p.name not in v.refs) or p.type.kind == "object":
                continue  # `states: [..]`, `teamIds: [..]`: a membership test on one value, not a list field of the record
            if p.type.kind == "union" and p.name not in v.refs and _has_array(p.type):
                continue  # SonarQube's `severities: [..] | "A,B"`: the same membership test, one value or many (review 77:
                # issues holding `severities`, `statuses`, `assignees` beside their own `severity`)
            if range_field(p.name) or field_path(s, e, ident(p.name)) is not None:
                continue
            if _shapes_the_search(p, v.tool):
                continue  # `keywordsType` "the field `keywords` targets", `geoDistance`: how to search, not what a record holds
            if p.name in v.refs:
                if v.refs[p.name] == v.target:  # `list_payments(paymentId)`: the record's own key, no field pointing at itself
                    if ident(p.name) not in e.aliases and ident(p.name) != e.key:
                        e.aliases.append(ident(p.name))
                    continue
                e.fields.setdefault(ident(p.name), Field(ident(p.name), A.NamedType(v.refs[p.name]), p.description))
                continue
            if p.type.kind in ("boolean", "union") and re.match(r"\s*(?:filter to only|return only)\b", p.description or "", re.I):
                continue  # "Filter to only blocked tasks (tasks with incomplete blockers)", "Return only issues on the
                # specified components": a switch on which records a listing shows; no field of its own (review 77: Dex
                # tasks `blocked` with no blocker)
            cond = _flag_condition(e, p)
            if cond is not None:
                v.flag_preds[p.name] = cond  # `in_stock` "only books with stock > 0": a test, not a field
                continue
            if _held_elsewhere(s, e, p, search=True):
                continue  # a filter on what the documented record does not hold (Karakeep's `favourited` on a tag)
            if p.type.values and any(str(x).lower() in QUANTIFIERS for x in p.type.values):
                # `state: opened|closed|merged|all`: "all" asks for every record, no record is in it
                p = p.model_copy(update={"type": p.type.model_copy(update={"values": tuple(x for x in p.type.values if str(x).lower() not in QUANTIFIERS)})})
            _param_field(s, tm, e, p, optional=False)


BATCH_PARAMS = {"items", "records", "entries", "objects", "batch"}  # a write's list of records to make or change, one call
QUANTIFIERS = {"all", "any", "both", "either", "*", "dontcare"}  # `dontcare`: the SGD docs' "any value"
_SEARCH_QUALIFIER = re.compile(r"(type|mode|operator|dynamic|match|strategy|scope|distance|radius|period)$", re.I)


def _has_array(t: ir.Type, depth: int = 0) -> bool:
    """Whether a union takes a list among its forms (`string[] | string | null`)."""
    return depth < 4 and (t.kind == "array" or any(_has_array(v, depth + 1) for v in t.variants))


def _shapes_the_search(p: ir.Param, tool: ir.Tool) -> bool:
    """A search parameter that qualifies another one or the query itself, not a field of the records:
    its doc names another parameter in backticks ("Champ ciblé par `keywords`", "Requires `geoDistance`"),
    or its name is another parameter's name plus a qualifier (`keywordsType`, `perimeterManagersType`)."""
    others = [q.name for q in tool.params if q.name != p.name]
    doc = p.description or ""
    if any(f"`{o}`" in doc for o in others):
        return True
    for tick in re.findall(r"`([A-Za-z_]{3,})\*`", doc):  # "`perimeter*`": the parameters starting so
        if any(o.startswith(tick) for o in others):
            return True
    low = p.name.lower()
    return any(low.startswith(o.lower()) and _SEARCH_QUALIFIER.search(p.name[len(o):] or "") for o in others if len(o) >= 3)


def _parent_refs_of_creates(s: Schema, tm: TypeMapper) -> None:
    """Creates referencing a parent: book_reservation(user_id) -> Reservation.user_id: User."""
    for v in s.views.values():
        if v.kind == "create" and v.target:
            for pname, ent in v.refs.items():
                s.entities[v.target].fields.setdefault(ident(pname), Field(ident(pname), A.NamedType(ent), ""))


ONCE_DOC = "(documented as allowed once)"  # the doc of a `*_done` flag (rules._drop_unused_once_flags finds them by it)


def _fields_from_prose(s: Schema, tm: TypeMapper) -> None:
    """State the descriptions name: "records suspension_start_date as today's date" (a date,
    null until recorded), "Turn on roaming" (a flag), "Adds gb_amount GB ... to the line's
    data_refuelled_gb" (a counter), "Deducts the amount from the payment method's balance"."""
    for v in s.views.values():
        if v.target is None or v.kind not in ("update", "delete", "action"):
            continue
        for p in v.tool.params:  # "The hold reason should be either ...": the field it fills holds one of those
            f = s.entities[v.target].fields.get(ident(p.name))
            closed = prose.allowed_for(v.tool.description or "", p.name) if f is not None and f.type == A.PrimType("str") else None
            if closed:
                f.type = A.EnumType(closed[0])
        if any(f.kind == "once" for f in v.facts) and v.key_param:
            name = prose.once_field(v)
            s.entities[v.target].fields.setdefault(name, Field(name, A.PrimType("bool"), f"{v.tool.name} was used on this record {ONCE_DOC}"))
        for f in v.facts:
            if f.conditional:
                continue
            e = _fact_entity(s, v, f)
            if e is None:
                continue
            if f.kind == "record":
                name = record_field(s, v, e, f)
                if name and name not in e.fields:
                    p = next((p for p in v.tool.params if ident(p.name) == name), None)
                    if p is not None:
                        _param_field(s, tm, e, p, optional=False)
                    elif f.value == "now" or {"date", "time"} & set(tokens(name)):
                        e.fields[name] = Field(name, A.OptionalType(A.PrimType("str")), f"recorded by {v.tool.name}")
                if name and (f.value == "now" or (name not in [ident(p.name) for p in v.tool.params] and {"date", "time"} & set(tokens(name)))):
                    s.globals.setdefault("now", Field("now", A.PrimType("str"), "the clock: time is a state value", A.Literal("2024-05-15T12:00:00")))
            elif f.kind == "toggle":
                if any(prose.names_entity(f.field, x) for x in s.entities):
                    continue  # "Enables the user": a state of the record, not a flag
                name = prose.field_named(e.fields, f.field, (prose.BOOL,))
                if name is None:  # "Turns email_alerts off": that field; "Turn on roaming": roaming_enabled
                    # the head word ("international roaming" -> roaming_enabled; "auto-renewal" is one word)
                    name = ident(f.field) if "_" in f.field and " " not in f.field else ident(snake(f.field.split()[-1].replace("-", "_"))) + "_enabled"
                e.fields.setdefault(name, Field(name, A.PrimType("bool"), f"on/off, switched by {v.tool.name}"))
            elif f.kind == "count":
                name = count_field(e, f)
                amt = next((p for p in v.tool.params if ident(p.name) == ident(f.amount)), None)
                if name and name not in e.fields:
                    t = A.PrimType("float") if amt is not None and amt.type.kind == "number" else A.PrimType("int")
                    e.fields[name] = Field(name, t, f"counted by {v.tool.name}")
            elif f.kind == "money":
                named = ident(f.field) if "_" in f.field and " " not in f.field else None  # "the patron's fine_balance"
                if named and named not in e.fields:
                    e.fields[named] = Field(named, A.PrimType("float"), f"money moved by {v.tool.name}")
                elif not named and not balance_field(e) and not prose.field_named(e.fields, f.field, prose.NUMS):
                    e.fields["balance"] = Field("balance", A.PrimType("float"), f"money moved by {v.tool.name}")


def _fact_entity(s: Schema, v: ToolView, f) -> Entity | None:
    """The record a fact is about: the tool's own, or the one a parameter references."""
    if not f.subject or prose.names_entity(f.subject, v.target):
        return s.entities[v.target] if f.kind != "money" or f.subject else None
    hits = [ent for ent in dict.fromkeys(list(v.refs.values()) + list(v.list_refs.values())) if prose.names_entity(f.subject, ent)]
    return s.entities[hits[0]] if len(hits) == 1 else None


def record_field(s: Schema, v: ToolView, e: Entity, f) -> str | None:
    """The field a "records X" sentence names: a documented identifier (`suspension_start_date`),
    a parameter ("stores the reason" -> `reason`), an existing field, or "the date" -> `<verb>_date`."""
    phrase = re.sub(r"^(?:new|given|current)\s+", "", f.field)
    if "_" in phrase and " " not in phrase:
        return ident(phrase)
    name = ident(snake(phrase.replace(" ", "_")))
    if any(ident(p.name) == name for p in v.tool.params):
        return name
    hit = prose.field_named(e.fields, phrase)
    if hit:
        return hit
    if phrase in ("date", "time", "timestamp", "date and time"):
        return ident(snake(f"{v.verb or v.name}_date"))
    return None


def count_field(e: Entity, f) -> str | None:
    """The counter a "adds N GB of data to the line's F" / "increases F by N" names."""
    phrase = f.field
    if prose.names_entity(phrase, e.name) and f.value:
        phrase = str(f.value)  # "adds 2 GB of data to the line": the counter is the data
    hit = prose.field_named(e.fields, phrase, prose.NUMS)
    if hit:
        return hit
    if "_" in phrase and " " not in phrase:
        return ident(phrase)
    if f.value and not prose.names_entity(phrase, e.name):
        return None
    return ident(snake(phrase.replace(" ", "_"))) if len(phrase.split()) <= 2 else None


# The field rules, in the order they run: earlier rules win (fields are set once), so
# documented return schemas come first and guesses from prose and params after.
FIELD_RULES = (
    _fields_from_returns,
    _fields_from_including,
    _fields_from_listed_attributes,
    _price_fields,
    _fields_from_create_params,
    _fields_from_update_params,
    _fields_from_prose,
    _fields_from_search_filters,
    _parent_refs_of_creates,
)


def lines_field(s: Schema, e: Entity, p: ir.Param) -> str | None:
    """The list field of `e` that a create param fills: `items: [{book_id, quantity}]` are the
    order's `lines: list[Line{book_id, quantity, unit_price}]` (the param's item fields are a
    proper subset of the record's; the rest is priced when the record is created)."""
    it = p.type.items if p.type.kind == "array" else None
    if it is not None and it.kind == "ref" and it.ref in s.env.definitions:
        it = s.env.definitions[it.ref]
    if it is None or it.kind != "object" or not it.fields:
        return None
    names = {ident(f.name) for f in it.fields}
    for fname, f in e.fields.items():
        t = strip_optional(f.type)
        if fname == ident(p.name) or not (isinstance(t, A.ListType) and isinstance(t.item, A.NamedType) and t.item.name in s.records):
            continue
        rec = set(s.records[t.item.name].fields)
        if names < rec:
            return fname
    return None


def _flag_condition(e: Entity, p: ir.Param) -> tuple[str, str, float | int] | None:
    """A boolean filter documented as a comparison on a numeric field of the entity
    ("When true, only books with stock > 0") -> ("stock", ">", 0)."""
    if _scalar_kind(p.type) != "boolean" or p.type.kind == "array":
        return None
    m = re.search(r"\b([a-z_]+)\s*(>=|<=|==|!=|>|<)\s*(-?\d+(?:\.\d+)?)\b", (p.description or "").lower())
    if not m:
        return None
    f = e.fields.get(ident(m.group(1)))
    t = strip_optional(f.type) if f is not None else None
    if not (isinstance(t, A.PrimType) and t.name in ("int", "float")):
        return None
    num = float(m.group(3)) if "." in m.group(3) else int(m.group(3))
    return ident(m.group(1)), m.group(2), num


def unwrap_return(s: Schema, ret: ir.Type) -> ir.Type | None:
    """The object a documented return describes: list items, or the list inside `{tickets: [...]}`."""
    obj = ret.items if ret.kind == "array" and ret.items is not None else ret
    if obj.kind == "ref" and obj.ref in s.env.definitions:
        obj = s.env.definitions[obj.ref]
    if obj.kind != "object" or not obj.fields:
        return None
    def deref(t: ir.Type) -> ir.Type:
        return s.env.deref(t) or t

    if len(obj.fields) == 1 and snake(obj.fields[0].name) == "result" and deref(obj.fields[0].type).kind not in ("object", "array"):
        return None  # FastMCP's wrapper of a plain return (`{result: string}`): text, no field of any record
    obj = envelope_payload(s, obj)
    lists = [f for f in obj.fields if f.type.kind == "array" and f.type.items is not None and deref(f.type.items).kind == "object"
             and snake(f.name) not in ENVELOPE_LISTS]
    others = [f for f in obj.fields if f not in lists]
    if len(lists) == 1 and all(snake(f.name) in PAGE_ENVELOPE | ENVELOPE_LISTS or _about_the_call(f) for f in others):
        obj = deref(lists[0].type.items)  # a page of records (`{content: [...], totalPages, totalElements, ...}`)
    return obj if obj.kind == "object" and obj.fields else None


def _about_the_call(f: ir.Field) -> bool:
    """A field beside a batch's records that reports on the call, not on a record: a count (`successCount`,
    `totalRequested`), the ids it touched (`updatedTaskIds`), its failures or the operations applied (Todoist's
    `{tasks, totalCount, updatedTaskIds, appliedOperations}`)."""
    ws = tokens(f.name)
    return bool(ws) and (ws[-1] in ("count", "ids", "failures", "operations", "requested") or ws[0] == "total"
                         or snake(f.name) in ("search_type", "search_id", "failed", "succeeded"))


def envelope_payload(s: Schema, obj: ir.Type) -> ir.Type:
    """The object inside the envelope a response comes in (`{ocs: {meta, data: {...}}}`, `{data: X, policies}` is
    X), else `obj` itself."""
    def deref(t: ir.Type) -> ir.Type:
        return s.env.deref(t) or t

    obj = deref(obj)
    for _ in range(4):  # `{ocs: {meta: {...}, data: {collectives: [...]}}}` (Nextcloud's OCS), `{data: {...}}`: the envelope is no record
        if obj.kind != "object" or not obj.fields:
            break
        inner = [f for f in obj.fields if deref(f.type).kind == "object" and deref(f.type).fields and snake(f.name) not in ENVELOPE_MARKS | PAGE_ENVELOPE]
        rest = [f for f in obj.fields if f not in inner]
        if len(inner) == 1 and snake(inner[0].name) in ENVELOPE_KEYS and all(snake(f.name) in PAGE_ENVELOPE | ENVELOPE_MARKS for f in rest) \
                and not any(f.type.kind == "array" and snake(f.name) not in ENVELOPE_LISTS for f in rest):
            obj = deref(inner[0].type)
        else:
            break
    if obj.kind == "object" and obj.fields and any(snake(f.name) in ENVELOPE_KEYS and deref(f.type).kind == "any" for f in obj.fields) \
            and all(snake(f.name) in ENVELOPE_KEYS | ENVELOPE_MARKS for f in obj.fields):
        # Dokploy's `{success, message, data: any}`: an envelope around a payload the docs do not describe holds no
        # field of the record (review 74: every project stored `success: false`)
        obj = obj.model_copy(update={"fields": ()})
    return obj


# the wrapper a response's payload comes in, and the status beside it ({ocs: {meta, data}}, {data, success})
ENVELOPE_KEYS = {"ocs", "data", "result", "response", "payload"}
ENVELOPE_MARKS = {"status", "success", "ok", "message", "error", "errors", "code", "statuscode", "status_code", "meta",
                  "policies", "included", "warnings", "jsonapi"}
# lists beside a response's payload that are about the call, not records of the payload: what the caller may do with
# it (Outline's `{data, policies, pagination}`), JSON:API's `included`, errors and warnings (review 61: every Outline
# document held every other response's fields in a `data` list, 1.2 MB per listing)
ENVELOPE_LISTS = {"policies", "included", "errors", "warnings"}
# the fields of a page of results around its list of records (Spring's `Page`, Django REST's paginated list,
# JSON:API's links and meta): none of them is a field of the records (blind review 20: a pet with "total pages")
PAGE_ENVELOPE = {"count", "total", "next", "previous", "prev", "cursor", "page", "pages", "has_more", "next_cursor", "total_count",
                 "total_pages", "total_elements", "number_of_elements", "size", "number", "first", "last", "empty", "pageable",
                 "sort", "limit", "offset", "page_size", "per_page", "current_page", "last_page", "next_page", "prev_page",
                 "previous_page", "links", "meta", "total_results", "page_number", "page_count", "has_next", "has_previous",
                 "next_page_token", "page_token", "start", "end", "results_count", "total_items", "items_count",
                 "object", "next_url", "previous_url", "prev_url", "next_page_url", "prev_page_url", "previous_page_url",  # Stripe, Lob
                 "iterator", "prev_iterator", "done",  # Svix
                 "query", "pagination",  # the search a page answers, echoed beside its results (listmonk's `{results, query, total, page}`)
                 "applied_filters", "filters_applied", "filters"}  # ... or its filters (Todoist's `{tasks, nextCursor, totalCount, hasMore, appliedFilters}`)


def _return_owner(s: Schema, v: ToolView, names: list[str]) -> str | None:
    """Which entity a returned object describes: the target if it carries its key, else a
    referenced entity whose key it carries (`add_travel_credit` returns the User)."""
    e = s.entities[v.target]
    if e.key in names or any(a in names for a in e.aliases):
        return e.name
    if any(tokens(n) == tokens(e.key) for n in names):
        return e.name  # the path's `paymentId` is the record's `payment_id` (GOV.UK Pay)
    if "id" in names and v.kind in ("search", "create"):
        return e.name  # a listed or made record with its own `id`: its `applicant_id` points to a parent (blind review 23)
    for ent in list(v.refs.values()) + ([s.entities[v.target].name] if v.kind == "search" else []):
        o = s.entities[ent]
        if o.key in names and o.key not in GENERIC_KEYS or any(a in names for a in o.aliases):
            return o.name
    if "id" in names and e.key not in names:
        return e.name
    if v.kind in ("read", "search") and not any(n.endswith("_id") and s.ref_of(n) == e.name for n in names):
        return e.name
    return None


def is_body(v: ToolView, p: ir.Param) -> bool:
    """Whether an object param is the request body whose fields are the record's: named as a body
    (`body`, `payload`, `issue_data`), sent as one, or named as the record itself (`create_project(project: {...})`)."""
    if not (p.type.kind == "object" and p.type.fields):
        return False
    toks = tokens(p.name)
    return (p.name in BODY_PARAMS or p.location == "body" or (v.target is not None and tokens(singular(p.name)) == tokens(v.target))
            or (len(toks) >= 2 and toks[-1] in BODY_PARAMS))  # `issue_data`, `cycle_payload`: the record's fields, sent as one


def flat_params(v: ToolView):
    """(path, param) for each param, spreading request-body objects into their fields."""
    for p in v.tool.params:
        if is_body(v, p):
            for f in p.type.fields:
                yield (p.name, f.name), ir.Param(name=f.name, type=f.type, required=f.required and p.required, description=f.description)
        else:
            yield (p.name,), p


def ref_field(e: Entity, ent: str) -> str | None:
    """The one field of `e` that references entity `ent` (None when zero or several)."""
    hits = [n for n, f in e.fields.items() if strip_optional(f.type) == A.NamedType(ent)]
    return hits[0] if len(hits) == 1 else None


def balance_field(e: Entity) -> str | None:
    for b in BALANCE_FIELDS:
        f = e.fields.get(b)
        if f is not None and isinstance(strip_optional(f.type), A.PrimType) and strip_optional(f.type).name in ("float", "int"):
            return b
    return None


def amount_param(v: ToolView):
    for path, p in flat_params(v):
        if p.name in AMOUNT_PARAMS and p.type.kind in ("number", "integer"):
            return path, p
    return None


_RANGE_SUFFIX = ("lte", "gte", "lt", "gt", "from", "to", "min", "max", "since", "until", "before", "after")


def range_field(pname: str) -> str | None:
    """The field a bound filters on: `min_price`, `since_date` (a prefix) or `created__lte`, `date_from`,
    `starting_after`, `price_max` (a suffix); a search's bound is no field of the records."""
    t = tokens(pname)
    if len(t) >= 2 and t[0] in ("min", "max", "start", "end", "from", "since", "until", "before", "after"):
        return "_".join(t[1:])
    if len(t) >= 2 and t[-1] in _RANGE_SUFFIX:
        return "_".join(t[:-1])
    return None


# what a caller's account, connection or workspace is called (general English of APIs, no domain's nouns)
SESSION_WORDS = {"account", "email", "org", "organization", "workspace", "site", "connection", "tenant", "profile", "context",
                 "region", "credential", "credentials", "token", "password", "username", "login", "llm", "provider", "arn", "url"}


def session_params(env: ir.Environment) -> frozenset[str]:
    """Parameters nearly every tool takes that name no record: the caller's account or session
    (`user_google_email` on each tool of a Google Workspace server). They are who asks, said once,
    never a field of the records (a folder is not "the one with the randy@... user google email")."""
    return session_names([[(p.name, p.type.kind == "string") for p in t.params] for t in env.tools])


def session_names(tools: list[list[tuple[str, bool]]]) -> frozenset[str]:
    """`session_params` over (name, is a string) per tool: the docs' IR here, a checked env in the sampler."""
    n = len(tools)
    if n < 4:
        return frozenset()
    count: dict[str, int] = {}
    for params in tools:
        for name, is_str in dict(params).items():
            if is_str and not id_stem(name) and set(tokens(name)) & SESSION_WORDS:
                count[name] = count.get(name, 0) + 1
    return frozenset(k for k, c in count.items() if c >= max(4, 0.6 * n))


def field_named(e: Entity, name: str) -> str | None:
    """The field of `e` a wire name means: itself, or its twin in another case (`FriendlyName` and
    `friendly_name`: Twilio's form bodies are PascalCase, its responses snake_case; blind review 24 saw
    every service hold both, with different values)."""
    if name in e.fields:
        return name
    toks = tokens(name)
    hit = next((f for f in e.fields if tokens(f) == toks), None)
    if hit is None and len(toks) >= 2 and toks[0] == "new":
        return next((f for f in e.fields if tokens(f) == toks[1:]), None)  # `new_start_date` sets `start_date`
    return hit


def _param_field(s: Schema, tm: TypeMapper, e: Entity, p: ir.Param, optional: bool) -> None:
    fname = ident(p.name)
    if "." in p.name and field_named(e, ident(p.name.split(".")[0])) is not None:
        return  # a form's `Totp.CodeLength` is a part of the record's `totp`, no field of its own
    have = field_named(e, fname)
    hf = e.fields[have] if have is not None else None
    if hf is not None and strip_optional(hf.type) == A.PrimType("int") and tm.field_type(p.name, p.type) == A.PrimType("float"):
        # one tool documents `threshold` as an integer, another as a float: the field holds what both write (Instana)
        hf.type = A.OptionalType(A.PrimType("float")) if isinstance(hf.type, A.OptionalType) else A.PrimType("float")
    if hf is not None and isinstance(strip_optional(hf.type), A.EnumType) and tm.field_type(p.name, p.type) in (A.PrimType("float"), A.PrimType("int")) \
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in strip_optional(hf.type).values):
        # one tool lists a number's values (1, 2, 3), another takes any number: the field holds what both write
        wide = tm.field_type(p.name, p.type)
        hf.type = A.OptionalType(wide) if isinstance(hf.type, A.OptionalType) else wide
    if have is not None or fname == e.key or is_modifier(p) or p.name in s.session or p.location in ("header", "cookie"):
        return  # a header (`Idempotency-Key`, `x-lang-output`) says how to send the request, never what the record holds
    t = tokens(p.name)
    if len(t) >= 2 and t[0] in ("add", "remove", "append", "clear", "unset") and p.type.kind == "array":
        return  # `removeFields: "Field ids or titles to remove from the item"`: a change to the record, no list it keeps
    if len(t) >= 2 and t[0] in ("new", "old") and ("_".join(t[1:]) in e.fields or tokens(e.key)[-len(t) + 1:] == t[1:]):
        return  # `new_name` of a collection keyed by `collection_name`: the name's next value, no field of its own
    if len(t) >= 2 and t[0] == "new":
        fname = ident("_".join(t[1:]))  # `new_title` with no `title` yet: the record has a title, its next value is sent
        if fname == e.key or fname in e.fields:
            return
    own = tokens(e.name)
    if p.type.kind == "array" and p.type.items is not None and p.type.items.kind == "object" and [singular(w) for w in t] == [singular(w) for w in own]:
        return  # Todoist's `update_tasks(tasks: [{id, content}])`: a batch of the records themselves, no field of each
    if (rest := after_kind(e.name, p.name)) and field_named(e, rest):
        return  # a project's `project_name` is its `name` (review 92: a second name field, typed as a project)
    ftype = A.PrimType("str") if gives_new_name(p) else tm.field_type(p.name, p.type)
    closed = prose.allowed_values(p.description or "") if ftype == A.PrimType("str") else None
    if closed:
        ftype = A.EnumType(closed[0])  # "one of: prepaid, postpaid": the field holds one of those
    if optional and not isinstance(ftype, A.OptionalType):
        ftype = A.OptionalType(ftype)
    e.fields[fname] = Field(fname, ftype, p.description)


def field_path(s: Schema, e: Entity, name: str) -> list[str] | None:
    """Where a filter named `name` lives in entity `e`: a field, or one level into a record field."""
    if name == e.key or name in e.fields:
        return [name]
    for f in e.fields.values():
        t = strip_optional(f.type)
        if isinstance(t, A.NamedType) and t.name in s.records and name in s.records[t.name].fields:
            return [f.name, name]
    return None


# the doc of a `status` no doc gives, inferred from the verbs that change it (the sampler says only its documented words)
INFERRED_STATUS_DOC = "status, inferred from the tools that change it"
FILTER_STATES_DOC = "status: the states the docs' search filter lists"


def _enum_values(t: ir.Type | None, depth: int = 0) -> tuple:
    """The enum values a type holds, through lists and unions (`statuses: [OPEN, ...][] | string | null`)."""
    if t is None or depth > 4:
        return ()
    if t.values:
        return tuple(t.values)
    for sub in (t.items, *t.variants):
        if (vals := _enum_values(sub, depth + 1)):
            return vals
    return ()


def _filter_states(s: Schema, ename: str) -> tuple:
    """The states a search over `ename` filters by, when its `status(es)`/`state(s)` parameter enumerates them."""
    for v in s.views.values():
        if v.target != ename or v.kind != "search":
            continue
        for p in v.tool.params:
            if re.fullmatch(r"(?:\w+_)?(?:status|statuses|state|states)", snake(p.name)):
                vals = tuple(x for x in _enum_values(p.type) if not re.search(r"unspecified|unknown|^(?:all|any|both|none)$", str(x), re.I))
                if len(vals) >= 2 and all(isinstance(x, str) and re.fullmatch(r"[A-Za-z][\w -]{0,30}", x) for x in vals):
                    return vals
    return ()


def _status_fields(s: Schema) -> None:
    """Collect status values per entity from the tools that act on it; declare `status`.

    A verb's target state is spelled as the documented enum spells it (`check_in` ->
    "checked_in"); verbs in STATUS_IF_DOCUMENTED change the status only when the enum has
    that value. Then each tool's description names the states it requires or forbids."""
    from forgec.gate import documented_values  # the gate bounds states by the same reading

    for e in s.entities.values():
        f = e.fields.get("status")
        if (f is None or not isinstance(strip_optional(f.type), A.EnumType)) and "state" not in e.fields \
                and any(v.target == e.name and (v.status_pre or v.status_post) for v in s.views.values()) \
                and (states := _filter_states(s, e.name)) and not any(status_flag(e, x) for x in states):
            # (Todoist's `isArchived` holds "archived" already: its filter's "archived" is that flag, review 43)
            # SonarQube's `issues(statuses: OPEN|CONFIRMED|REOPENED|RESOLVED|CLOSED)`: the states records are found by
            # are the states they have; "active" or "won't fix" (a resolution) are none (review 72)
            e.fields["status"] = Field("status", A.EnumType(states), FILTER_STATES_DOC)
            continue
        if f is not None and strip_optional(f.type) == A.PrimType("str"):
            listed = documented_values(f.doc)
            if len(listed) >= 2 and all(re.fullmatch(r"[A-Za-z][\w -]{0,30}", x) for x in listed):
                # `status: str "Filter: draft, pending, confirmed, ..."`: the docs list the states, so it is an enum
                # ("Confirm a pending order" then requires a pending one, not a cancelled one)
                et = A.EnumType(tuple(listed))
                f.type = A.OptionalType(et) if isinstance(f.type, A.OptionalType) else et
            elif (states := _filter_states(s, e.name)) and not any(status_flag(e, x) for x in states):
                # Grafana's `create_incident(status: string)` beside `list_incidents(status: active|resolved)`: the
                # states a record is found by are the states it has, not a made-up "pending" (review 77)
                et = A.EnumType(states)
                f.type = A.OptionalType(et) if isinstance(f.type, A.OptionalType) else et
    _canonical_status(s)
    _paired_flags(s)
    for v in s.views.values():
        if v.target in s.entities and v.status_post and "status" not in s.entities[v.target].fields:
            flag = status_flag(s.entities[v.target], v.status_post)
            if flag:  # "Archive or unarchive a project" on a project that has `isArchived` (review 43: a made-up
                v.status_flag, v.status_pre, v.status_post = flag, None, None  # `status` left isArchived false)
    values: dict[str, list[str]] = {}
    for v in s.views.values():
        if v.target is None:
            continue
        vals = values.setdefault(v.target, [])
        for w in (v.status_pre, v.status_post):
            if w and w not in vals:
                vals.append(w)
    for ename, vals in values.items():
        if not vals:
            continue
        e = s.entities[ename]
        existing = e.fields.get("status")
        if existing is not None and existing.doc == FILTER_STATES_DOC:
            states = strip_optional(existing.type).values
            for v in s.views.values():  # a state no filter lists ("won't fix") is not one the record is in
                if v.target == ename:
                    own = next((x for x in states if v.verb and _norm(x) == _norm(participle(v.verb))), None)
                    if own is not None and v.status_post is not None:
                        v.status_post = own  # "Reopen an issue": REOPENED where the docs list it, not OPEN
                    v.status_pre = v.status_pre if v.status_pre in states else None
                    v.status_post = v.status_post if v.status_post in states else None
            continue
        if existing is not None:
            t = strip_optional(existing.type)
            if isinstance(t, A.EnumType) and all(isinstance(x, str) for x in t.values):
                # a state the docs already name by the verb itself (WordPress's comment status `approve`): "Approves a
                # pending comment" sets that one, not a second, undocumented "approved" (review 95: a comment that was
                # `approve` was approved again, into "approved")
                said = {_norm(participle(x)): x for x in t.values if isinstance(x, str) and _norm(participle(x)) != _norm(x)}
                for v in s.views.values():
                    if v.target == ename:
                        if v.status_post and v.status_post not in t.values:
                            v.status_post = said.get(_norm(v.status_post), v.status_post)
                        if v.status_pre and v.status_pre not in t.values:
                            v.status_pre = said.get(_norm(v.status_pre), v.status_pre)
                vals = [w for w in vals if w not in said.values() and _norm(w) not in said] + \
                    [said[_norm(w)] for w in vals if _norm(w) in said and w not in t.values]
                existing.type = A.EnumType(tuple(dict.fromkeys(list(t.values) + vals)))  # a status the verbs set is held
            continue  # (a coded status `enum(1, 2, 3)` takes no state word: the pass below drops them, hypothesis fuzz)
        state = e.fields.get("state")
        st = strip_optional(state.type) if state is not None else None
        if isinstance(st, A.EnumType) and any(str(x).endswith("ed") for x in st.values):
            # the docs give the record's lifecycle as `state: opened|closed|merged`: a second, inferred `status`
            # ("approved", "active") would hold another answer to "which are open" (review 38: merge requests)
            for v in s.views.values():
                if v.target == ename:
                    v.status_pre = v.status_post = None
            continue
        pres = [v.status_pre for v in s.views.values() if v.target == ename and v.status_pre]
        back = [v.status_post for v in s.views.values() if v.target == ename and v.status_post
                and re.search(r"\b(?:reverts?|rolls?\s+back)\b", v.cites.get("status_post", ""), re.I)]
        if not pres and back:
            # "Revert a payroll timesheet to draft": the state a revert goes back to is where records start, not
            # an invented "active" (review 51: Xero's timesheets were "active" and "approved")
            vals = list(dict.fromkeys(back + vals))
        elif not pres:
            # a cancel with no named precondition: records start out "active"
            vals = ["active"] + [x for x in vals if x != "active"]
        else:
            vals = list(dict.fromkeys(pres + vals))
        e.fields["status"] = Field("status", A.EnumType(tuple(vals)), INFERRED_STATUS_DOC)
    for v in s.views.values():
        if v.target is not None and v.kind in ("update", "delete", "action") and v.key_param:
            _status_from_desc(s, v)
            _prose_forbidden(s, v)
    for v in s.views.values():
        f = s.entities[v.target].fields.get("status") if v.target in s.entities else None
        t = strip_optional(f.type) if f is not None else None
        if t is not None and (not isinstance(t, A.EnumType) and t != A.PrimType("str")
                              or isinstance(t, A.EnumType) and not all(isinstance(x, str) for x in t.values)):
            # a documented non-text status (`status: int`): the prose's state words do not fit it
            v.status_pre = v.status_post = None
            v.status_allowed, v.status_forbidden = [], []
    _undo_and_redo(s)


_CLOSED_STATES = {"closed", "resolved", "done", "completed", "complete", "finished", "cancelled", "canceled", "archived", "rejected"}


def _undo_and_redo(s: Schema) -> None:
    """What an undoing or a redoing verb needs first, where the record's states are listed: `unconfirmIssue` acts on a
    CONFIRMED issue and leaves it REOPENED (an open state the enum lists), `reopenIssue` on a RESOLVED or CLOSED one
    (review 78: a REOPENED issue "unconfirmed", a CONFIRMED one "reopened", each a no-op the gold wrote)."""
    for v in s.views.values():
        states = _status_enum(s, v.target)
        if not states or not v.verb or v.status_pre or v.status_allowed:
            continue
        base = _undone(v.verb) or (next((b for t in v.toks if (b := _undone(t))), None) if v.verb == "restore" else None)
        if base is not None:  # (`unconfirm_issue` reads as a "restore" of the issue)
            done = next((x for x in states if _norm(x) == _norm(participle(base))), None)
            if done is None:
                continue
            v.status_pre = done
            if v.status_post in (None, done):
                v.status_post = next((x for w in ("reopened", "open", "opened") for x in states if _norm(x) == w), None)
        elif v.verb.startswith("re") and is_verb(v.verb[2:]) and _norm(v.status_post or "") in (_norm(participle(v.verb)), _norm(v.verb)):
            closed = [x for x in states if _norm(x) in _CLOSED_STATES]
            if closed:
                v.status_allowed = closed  # "reopen" what was resolved or closed, never an issue still open


def _norm(x: str) -> str:
    return re.sub(r"[^a-z0-9]", "", x.lower())


def _status_enum(s: Schema, ename: str | None) -> tuple[str, ...] | None:
    f = s.entities[ename].fields.get("status") if ename in s.entities else None
    t = strip_optional(f.type) if f is not None else None
    if isinstance(t, A.EnumType) and all(isinstance(x, str) for x in t.values):
        return t.values
    return None


def _undone(tok: str) -> str | None:
    """The verb an un- word undoes (`untrash` -> "trash", `unassign` -> "assign"), or None."""
    return tok[2:] if tok.startswith("un") and len(tok) > 4 and is_verb(tok[2:]) else None


def _paired_flags(s: Schema) -> None:
    """A verb and its undoing on one record (`trash_message`/`untrash_message`, `protect_branch`/`unprotect_branch`,
    `resolve_comment`/`unresolve_comment`; or its opposite: `postgres_start`/`postgres_stop`) say the record is in that state or not: a flag the first sets and the second
    clears, the record's own bool where the docs give one (`status_flag`), else one named by the participle
    (`trashed`). Both calls were only logged; a made-up `status` the undoing verb could not undo is not made."""
    views = [v for v in s.views.values() if v.target in s.entities and v.key_param and not v.status_flag]
    for v in views:
        for i, w in enumerate(v.toks):
            base = _undone(w) or next((a for a, b in OPPOSITE_VERBS if b == w), None)
            if base in (None, "mark", "set", "do", "assign"):
                continue
            if v.verb and any(t == v.verb or verb_lemma(t) == v.verb for t in v.toks[:i]):
                continue  # `bulk_mark_unread(mailbox)`: the word is the verb's object (the emails in it), not an act on the record
            rest = v.toks[:i] + v.toks[i + 1:]
            o = next((x for x in views if x is not v and x.target == v.target and base in x.toks
                      and [t for t in x.toks if t != base] == rest), None)
            if o is None:
                continue
            e = s.entities[v.target]
            own = set(tokens(e.name)) | {singular(t) for t in tokens(e.name)}
            if base != _undone(w) and not _acts_on_record(v.toks, i, own):
                continue  # `enable_backups_droplet`, `enable_roaming(line_id)`: the verb acts on the backups or the
                # roaming (the line's `roaming_enabled`), not on the record
            if base == "on":  # `power_on_droplet`/`power_off_droplet`: "powered on"
                if i == 0 or not is_verb(v.toks[i - 1]):
                    continue
                word = f"{participle(v.toks[i - 1])} on"
            else:
                word = participle(base)
            if "status" in e.fields or any(x.status_post not in (None, word) for x in (v, o)):
                break  # a documented status (or another state the verbs name) holds it already
            flag = status_flag(e, word) or ident(word)
            if flag not in e.fields:
                e.fields[flag] = Field(flag, A.PrimType("bool"), f"whether the {humanize(snake(e.name))} is {word} (`{o.tool.name}` sets it, "
                                                                 f"`{v.tool.name}` clears it)")
            elif strip_optional(e.fields[flag].type) != A.PrimType("bool"):
                break
            for x, on in ((o, True), (v, False)):
                x.status_flag, x.flag_on, x.status_pre, x.status_post = flag, on, None, None
            break


def _acts_on_record(toks: list[str], i: int, own: set[str]) -> bool:
    """Whether the verb at `toks[i]` acts on the record itself: every other word is the record's own noun, a modifier
    right before it ("accept_calendar_event"), the verb of an "on"/"off" ("power_on_droplet") or the HTTP method."""
    for j, t in enumerate(toks):
        if j == i or t in own or t in ("post", "put", "patch", "get", "delete"):
            continue
        if toks[i] in ("on", "off") and j == i - 1:
            continue
        if j + 1 < len(toks) and j + 1 != i and toks[j + 1] in own and not is_plural(t):
            continue  # ("enable_backups_droplet": a plural before it is the verb's object)
        return False
    return True


def status_flag(e: Entity, word: str) -> str | None:
    """The record's bool field that says it is in state `word` (`isArchived`, `is_archived`, `archived` for
    "archived"), when the docs give one: the state lives there, not in a second, inferred `status`."""
    want = {_norm(word), "is" + _norm(word)}
    return next((f.name for f in e.fields.values() if _norm(f.name) in want and strip_optional(f.type) == A.PrimType("bool")), None)


def _canonical_status(s: Schema) -> None:
    for v in s.views.values():
        if v.target is None:
            continue
        vals = _status_enum(s, v.target)
        for attr in ("status_pre", "status_post"):
            w = getattr(v, attr)
            if w is None:
                continue
            hit = next((x for x in vals or () if _norm(x) == _norm(w)), None)
            if hit is not None:
                setattr(v, attr, hit)
            elif attr == "status_post" and v.verb in STATUS_IF_DOCUMENTED and not _quoted_status(v) and "status_post" not in v.cites:
                v.status_post = None  # e.g. `assign_ticket` when "assigned" is no documented state


def _quoted_status(v: ToolView) -> bool:
    return bool(re.search(r"status\s+(?:will\s+be\s+|is\s+)?(?:changed|set|updated|moved)\s+to\s+['\"]", v.tool.description or "", re.I))


def _value_pattern(x: str) -> str:
    """`checked_in` matches "checked_in", "checked-in", "checked in" and "checkedin"."""
    return r"[\s_-]?".join(re.escape(p) for p in re.split(r"[\s_-]+", x.lower()) if p)


def noun_pattern(entity: str) -> str:
    """A regex for an entity's noun in prose: its modifiers as written ("sales order": `singular` would make "sale"),
    the head in either number ("sales orders")."""
    ws = tokens(entity)
    return "".join(re.escape(w) + r"\s+" for w in ws[:-1]) + rf"{re.escape(singular(ws[-1]))}s?"


def _status_from_desc(s: Schema, v: ToolView) -> None:
    """"Cancel a pending or paid order (not a shipped one)" -> allowed ("pending", "paid"),
    forbidden "shipped"; "Checked-in reservations cannot be cancelled" -> forbidden."""
    vals = _status_enum(s, v.target)
    if not vals:
        return
    desc = (v.tool.description or "").lower()
    noun = noun_pattern(v.target) + r"\b"
    alts = {x: _value_pattern(x) for x in vals if x != v.status_post}
    for o in s.views.values():
        # "Cancel a submitted Sales Order" where `submit` sets "To Deliver and Bill": the state another tool's act
        # leaves the record in, said by that act's participle (one act per state, its word no documented state)
        if o is not v and o.target == v.target and o.verb and o.status_post in alts and o.status_post != v.status_pre:
            word = participle(o.verb)
            acts = {w.verb for w in s.views.values() if w.target == v.target and w.status_post == o.status_post and w.verb}
            if word and len(acts) == 1 and not any(_norm(x) == _norm(word) for x in vals):
                alts[o.status_post] += "|" + re.escape(word)
    any_val = "|".join(f"(?:{p})" for p in sorted(alts.values(), key=len, reverse=True))
    if not any_val:
        return
    lst = rf"((?:{any_val})(?:\s*(?:,|\bor\b|\band\b|,\s*or\b)\s*(?:{any_val}))*)"
    if not v.status_pre:
        m = re.search(rf"\b(?:a|an|the|only|one|any)\s+{lst}\s+{noun}", desc)
        if m and not re.match(r"\s*(?:,|\bor\b)", desc[m.end():]) and not re.search(r"\bnot\s*(?:a|an|the)?\s*$", desc[: m.start()]):
            allowed = [x for x, p in alts.items() if re.search(rf"\b(?:{p})\b", m.group(1))]
            v.status_allowed = allowed
    forbidden: list[str] = []
    for m in re.finditer(rf"\b{lst}\s+{noun}\s+(?:cannot|can't|can\s+not|may\s+not|must\s+not)\b", desc):
        forbidden += [x for x, p in alts.items() if re.search(rf"\b(?:{p})\b", m.group(1))]
    # "Change the priority of a ticket that is not closed"
    for m in re.finditer(rf"\b{noun}\s+(?:that|which)\s+(?:is|are)\s+not\s+(?:yet\s+|already\s+)?{lst}", desc):
        forbidden += [x for x, p in alts.items() if re.search(rf"\b(?:{p})\b", m.group(1))]
    for m in re.finditer(rf"\(not\s+(?:a|an|the)?\s*{lst}\s+(?:one|{noun})\)", desc):
        forbidden += [x for x, p in alts.items() if re.search(rf"\b(?:{p})\b", m.group(1))]
    v.status_forbidden = [x for x in dict.fromkeys(forbidden) if x not in v.status_allowed and x != v.status_pre]


def _children(s: Schema) -> None:
    """`git_log(repo_path)` "Shows the commit logs": list the Commits that reference the Repo."""
    referrers: dict[str, list[tuple[str, str]]] = {}
    for c in s.entities.values():
        for fname, fld in c.fields.items():
            t = strip_optional(fld.type)
            if isinstance(t, A.NamedType) and t.name in s.entities and t.name != c.name:
                referrers.setdefault(t.name, []).append((c.name, fname))
    for v in s.views.values():
        if v.kind != "read" or not v.target or not v.key_param or v.field_noun in s.entities[v.target].fields:
            continue
        if _reads_whole_record(s, v):
            continue  # get_user_details "including their reservations" returns the User
        # what the tool does is said first: a later note's "the `actions` tab" is no list it returns (review 92:
        # BoondManager's candidate read returned the candidate's actions)
        desc = re.split(r"(?<=[.!?])\s|\n", (v.tool.description or "").strip(), maxsplit=1)[0].lower()
        for cname, _f in referrers.get(v.target, ()):
            c = s.entities[cname]
            f = ref_field(c, v.target)
            if f is None:
                continue
            word = " ".join(tokens(c.name))
            if word not in desc:
                continue
            if re.search(rf"\b({re.escape(plural(word))}|{re.escape(word)} (logs?|history|list))\b", desc):
                v.child = (c.name, f)
                v.kind = "search"
                break


def _reads_whole_record(s: Schema, v: ToolView) -> bool:
    """A read of the record itself: its documented return is the target (carries its key),
    or the name/description asks for the record's details or profile."""
    e = s.entities[v.target]
    obj = unwrap_return(s, v.tool.returns) if v.tool.returns is not None else None
    if obj is not None and (e.key in [f.name for f in obj.fields] or any(a in [f.name for f in obj.fields] for a in e.aliases)):
        return True
    return bool({"details", "detail", "profile", "info"} & set(v.toks)) or bool(re.search(r"\b(details|profile)\b", (v.tool.description or "").lower()))


def _globals(s: Schema) -> None:
    tm = TypeMapper(s)
    for v in s.views.values():
        t = v.tool
        text = (t.name + " " + (t.description or "")).lower()
        if v.kind in ("read", "action") and re.search(r"current[ _]time|\bnow\b|current[ _]date|what time", text) or (
                v.kind in ("read", "search") and any(TODAY_DEFAULT.search(p.description or "") for p in t.params)):
            s.globals.setdefault("now", Field("now", A.PrimType("str"), "the clock: time is a state value", A.Literal("2024-05-15T12:00:00")))
        if v.target is None and v.kind in ("read", "search") and not any(p.required for p in t.params):
            ret = t.returns
            if ret is not None and ret.kind in ("object", "ref") and (ret.kind == "ref" or ret.fields):
                gname = ident(snake("_".join(v.nouns) or "info")) if v.nouns else "info"
                if gname in RESERVED or gname == "now":
                    gname += "_info"
                ty = tm.map(envelope_payload(s, ret) if ret.kind == "object" else ret, gname)  # `{data: User, policies}`: the user, not its envelope merged into UserInfo (review 61)
                s.globals.setdefault(gname, Field(gname, ty, t.description.split("\n")[0][:120]))
                v.global_name = gname
                v.kind = "read"


def _naming(s: Schema, ent: str) -> list[tuple[ToolView, str]]:
    """(view, parameter) of every parameter that names a record of `ent`: a reference, or the key a tool acts on."""
    named = [(v, pname) for v in s.views.values() for pname, e in v.refs.items() if e == ent]
    return named + [(v, v.key_param) for v in s.views.values() if v.target == ent and v.key_param and v.key_param not in v.refs]


def _numeric_refs(s: Schema, ent: str) -> bool:
    """Whether the params that name records of `ent` are all numbers (and there is one): a record the docs
    only ever address by `id: number` has whole-number keys, not "document_00913" (paperless)."""
    named = _naming(s, ent)
    kinds = [_scalar_kind(p.type) for v, pname in named for p in [v.tool.param(pname)] if p is not None]
    if bool(kinds) and all(k in ("integer", "number") for k in kinds):
        return True
    # ... or the tools named for it all do, and they are most of those naming it: WordPress's `wp_performance_stats(category:
    # string)` is a stats category, not the `id: number` every `wp_*_category` tool takes (review 69: "category_09426")
    want = [singular(w) for w in tokens(ent)]
    own = [_scalar_kind(p.type) for v, pname in named if _find(v.toks, want) is not None for p in [v.tool.param(pname)] if p is not None]
    nums = sum(k in ("integer", "number") for k in kinds)
    return bool(own) and all(k in ("integer", "number") for k in own) and nums >= 2 * (len(kinds) - nums)


def _uuid_refs(s: Schema, ent: str) -> bool:
    """Whether the params that name records of `ent` say they take a UUID (by name, format or doc: Dependency-
    Track's `parent_project_uuid`, "The unique identifier (UUID) of the project") and none says another format:
    the agent is asked for a UUID, so the world's keys are UUIDs."""
    named = _naming(s, ent)
    params = [p for v, pname in named for p in [v.tool.param(pname)] if p is not None and p.type.kind == "string"]
    says = [p for p in params if p.type.format == "uuid" or re.search(r"\b[ug]uid\b", f"{' '.join(tokens(p.name))} {p.description or ''}", re.I)]
    return bool(says) and not any(p.type.format and p.type.format != "uuid" for p in params)


def _finish_entities(s: Schema) -> None:
    """Put the key field first with its type; drop fields that clash with the key; give a nameless
    record its name."""
    for e in s.entities.values():
        own = e.fields.get("id")
        own_t = strip_optional(own.type) if own is not None else None
        if (own is not None and e.key != "id" and isinstance(own_t, A.PrimType) and own_t.name in ("str", "int")
                and (e.synthetic_key or e.key.endswith("_id"))):
            # the record's own `id` is its key ("use the 'id' field of the task list object"): a second,
            # synthesized `todo_task_list_id` beside it would hold another value than the one the docs name
            e.key, e.key_type = "id", own_t.name
        if e.key_type == "str" and _numeric_refs(s, e.name):
            e.key_type = "int"  # every param naming it is a number ("id: number, The document ID"): its ids are numbers
        kt = A.PrimType(e.key_type)
        rest = {n: f for n, f in e.fields.items() if n != e.key}
        kw = tokens(e.key)
        if len(kw) >= 2 and kw[-1] in ("slug", "handle") and kw[-1] in rest and kw[:-1] == [w.lower() for w in tokens(e.name)][-len(kw) + 1:]:
            del rest[kw[-1]]  # an organization keyed by `organizationSlug` has one slug, not a second `slug` that disagrees (Sentry)
        listed = any(v.target == e.name and v.kind == "search" for v in s.views.values())
        if not e.synthetic_key and listed and _nameless(e, rest) and tokens(e.name)[-1].lower() not in UNNAMED_RECORDS:
            rest["name"] = Field("name", A.OptionalType(A.PrimType("str")), f"what people call the {humanize(snake(e.name))}")
        fmts = {p.type.format for v in s.views.values() if v.target == e.name and v.key_param
                for p in v.tool.params if p.name == v.key_param and p.type.kind == "string" and p.type.format}
        lens = {m.group(1) for v in s.views.values() if v.target == e.name and v.key_param
                for p in v.tool.params if p.name == v.key_param
                for m in [re.search(r"\b(\d{1,2})[- ](?:char(?:acter)?s?|letters?|digits?)\b", (p.description or "") + " " + " ".join(
                    x for x in re.split(r"(?<=[.;])\s+", v.tool.description or "") if p.name in x))] if m}
        if not fmts and len(lens) == 1:
            fmts = {f"{lens.pop()} characters"}  # "the collection's 8-character key": ABCD2345, not collection_91807
        digits = any(p.name == v.key_param and p.type.kind == "string" and _DIGITS_ONLY.search(p.description or "")
                     for v in s.views.values() if v.target == e.name and v.key_param for p in v.tool.params)
        if not fmts and digits:
            fmts = {"digits"}  # "Shopify customer ID, numeric (pattern: ^\\d+$)": 7301946215, not rachel_cook_9947 (review 29)
        if not fmts and _uuid_refs(s, e.name):
            fmts = {"uuid"}  # "The UUID of the parent project": the projects' keys are UUIDs, not project_56805 (review 61)
        for f in rest.values():
            if not isinstance(f.type, A.OptionalType) and _SAYS_NULL.search(f.doc or ""):
                f.type = A.OptionalType(f.type)  # "ISO 8601 date string or null": Asana's `completed_on` of an open task is empty
                # (review 69: `completed` false beside a completion date, on 47 of 90 tasks)
        doc = f"key ({fmts.pop()})" if len(fmts) == 1 and e.key_type == "str" else "key"  # "key (uuid)": the world's keys take the docs' format
        if doc == "key" and e.key_type == "str" and (shape := _key_shape(s, e.name)):
            doc = f"key {shape}"  # Jira's "project key (e.g., 'PROJ') (pattern: ^[A-Z][A-Z0-9_]+$)": PROJ-like, not project_75390
        e.fields = {e.key: Field(e.key, kt, doc)} | rest


# an example a parameter's doc quotes, "e.g.," included (stdlib.values.doc_example reads "e.g. 'X'" only, and widening it
# would change the world's other values)
_PARAM_EXAMPLE = re.compile(r"""(?:e\.g\.,?|eg\.|example:?|such as)\s*[`'"]([^`'"\s]{2,40})[`'"]""", re.I)


def _key_shape(s: Schema, ent: str) -> str:
    """The one JSON-Schema pattern the parameters naming `ent` give its made-up key, with an example of theirs that fits
    it: `(e.g. 'PROJ') (pattern: ^[A-Z][A-Z0-9_]+$)`; "" when they give none or disagree. Every Jira tool passes a
    `project_key` so documented; the world's `project_75390` broke it (review 68)."""
    params = [p for v, pname in _naming(s, ent) for p in [v.tool.param(pname)] if p is not None and p.type.kind == "string"]
    pats = {x for p in params if (x := pattern_text(p.description or ""))}
    if len(pats) != 1:
        return ""
    pat = pats.pop()
    try:
        rx = re.compile(pat)
    except re.error:
        return f"(pattern: {pat})"
    ex = next((x for p in params for x in _PARAM_EXAMPLE.findall(p.description or "") if rx.search(x)), None)
    return f"(e.g. '{ex}') (pattern: {pat})" if ex else f"(pattern: {pat})"


# a field's doc saying it may be empty
_SAYS_NULL = re.compile(r"\bor null\b|\bnull (?:if|when|for|until|unless)\b|\bnullable\b|\bmay be null\b|\bcan be null\b", re.I)


# a key the docs say is all digits: by its pattern (`^\d+$`, `^[0-9]+$`) or in words ("numeric ID", "digits only")
_DIGITS_ONLY = re.compile(r"\(pattern: \^?(?:\\d|\[0-9\])(?:\+|\*|\{[\d,]+\})\$?\)|\bnumeric\b|\b(?:only|all) digits\b|\bdigits only\b", re.I)


_NATURAL_KEY = re.compile(r"(^|_)(path|name|title|slug|email|url|file|filename|username|handle|label|tag|code|symbol)$")


def _nameless(e: Entity, fields: dict[str, Field]) -> bool:
    """Whether nothing a person could tell `e`'s records apart by is known: a key that is an opaque id
    and no plain field beside it (Slack's `list_channels` documents no field of a channel). Records
    people pick from a list (the caller checks there is one) have a name in every real API (a channel,
    a board, a space), so the world gives them one rather than leaving the user to say an id."""
    if _NATURAL_KEY.search(snake(e.key)) or _NATURAL_KEY.search(snake(e.name)):
        return False
    if is_person(e.name):
        return False  # a person's name comes in parts and from their own data (first/last, full_name): none made up
    for f in fields.values():  # any plain field tells the records apart (a message is told by what it says)
        t = f.type.inner if isinstance(f.type, A.OptionalType) else f.type
        if isinstance(t, A.EnumType) or (isinstance(t, A.PrimType) and t.name in ("str", "int", "float")):
            return False
    return True


def ensure_action_log(s: Schema) -> str:
    """The `ActionLog` entity that conservative effects insert into."""
    name = "ActionLog"
    if name not in s.entities:
        s.entities[name] = Entity(
            name,
            "log_id",
            "str",
            {
                "log_id": Field("log_id", A.PrimType("str"), "key"),
                "tool": Field("tool", A.PrimType("str"), "the tool that was called"),
                "args": Field("args", A.PrimType("str"), "its arguments, rendered"),
            },
            "Calls of tools whose semantics no rule could infer (conservative effects).",
            synthetic_key=True,
        )
    return name
