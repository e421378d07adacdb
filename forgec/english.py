"""English grammar data: the one place the task text's closed-class word lists live (issue 21).

Everything here is grammar of English or of documentation prose, never of an API's domain: the
realizer (forgec/realize.py) and the quality gate (forgec/gate.py) read these sets; no module
keeps its own copy. Open-class words (which word is a verb, a verb's base form, a noun's plural)
come from `lemminflect`'s dictionary through the morphology functions at the end of this module
(issue 22, "words once"), which every other module asks.
"""

from __future__ import annotations

import functools
import re


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


DETERMINERS = _words("a an the this that these those each every some any all both either neither no another other such "
                     "what which whose my your his her its our their one")
PRONOUNS = _words("i me mine you yours he him she hers it we us ours they them theirs who whom")
PREPOSITIONS = _words("""about above across after against along among around at before behind below beneath beside besides
between beyond by despite down during except for from in inside into like near of off on onto out outside over past per
since through throughout till to toward towards under underneath until up upon via with within without""")
CONJUNCTIONS = _words("and or but nor so yet if unless because although though while whereas whether than as when where why how")
AUXILIARIES = _words("is am are was were be been being has have had having do does did done will would shall should can could may might must")
SENTENCE_ADVERBS = _words("also then again already still just only even not never always often usually here there very too quite really")

# None of these heads a verb phrase (forgec/gate.py `verb_phrase`).
CLOSED_CLASS = DETERMINERS | PRONOUNS | PREPOSITIONS | CONJUNCTIONS | AUXILIARIES | SENTENCE_ADVERBS

# Words that open a subordinate clause or a second predicate: the verb phrase a person asks for ends there.
SUBORDINATORS = _words("that which who whose whom if when whenever unless until while where whereas because since although though "
                       "whether so once")
# Multi-word boundaries of the same kind ("so that", "based on": what follows qualifies, it is not asked for).
BOUNDARY_PHRASES = ("so that", "in order to", "only if", "even if", "as long as", "based on", "according to", "such as",
                    "including", "for example", "for instance", "e.g.", "i.e.", "as well as", "along with", "instead of",
                    "rather than", "depending on", "in case")

# Documentation prose about the tool itself, not an act: the nouns a doc calls its tool by ("This
# endpoint deletes ..."), the verbs that describe the tool rather than do something ("Returns ...",
# "This tool belongs to ..."), and section labels ("Note: ...", "Args: ...").
DOC_SELF_NOUNS = _words("tool function endpoint operation method api command call route action server request query helper "
                        "utility procedure service")
META_VERBS = _words("return belong require contain represent describe accept support note mean expect indicate specify understand "
                    "know help need include consist depend work fail throw raise output yield provide respond exist correspond "
                    "use summarize summarise preview explain ask tell")  # the agent's conduct, no act on a record (review 28)
# "confirm" is the agent's conduct only with the user as its object ("Confirm the details with the user"); "Confirm a
# SonarQube issue" acts on a record (review 70: no clause, so the name's next verb: "issue my issue")
CONDUCT_CONFIRM = re.compile(r"\b(?:with|to)\s+(?:the\s+)?(?:user|customer|caller)\b|\bthat\b|\bwhether\b|\bif\b", re.I)
SECTION_LABELS = _words("note notes warning warnings important tip tips example examples returns return args arguments parameters "
                        "params raises throws response responses output outputs usage see caveat caveats deprecated")
# Adjectives by which docs point at an argument ("the specified team", "a given file"): a person names the thing itself.
ARGUMENT_ADJECTIVES = _words("specified given provided supplied passed indicated requested designated particular specific certain "
                             "existing selected chosen target respective corresponding relevant appropriate desired")
# Openers that put a purpose before the verb ("Use this tool to", "Allows the user to", "Used to").
PURPOSE_OPENERS = (
    r"(?:you can |one can )?use (?:this|it)(?: \w+)? (?:to|for)",
    r"(?:can be |is |are )?used (?:to|for)",
    r"(?:this |it )?(?:allows?|enables?|lets?|helps?|permits?) (?:you|users?|the users?|a users?|clients?|the clients?|callers?|the callers?|people|one|agents?|the agents?)(?: to)?",
    r"(?:this |it )?(?:allows?|enables?|helps?|permits?) to",
    r"(?:this |it )?(?:allows?|enables?|lets?|permits?) (?:the|a|an) (?:[a-z]+ ){1,5}?to(?= [a-z])",  # "allows the organizer of a meeting to send ..."
    r"(?:this )?(?:\w+ )?(?:tool|function|endpoint|operation|method|api|command|action|helper|utility) (?:to|for|that|which)",
    r"(?:a |an )?(?:way|means|ability|option) to",
    r"(?:this )?(?:can|may|will) be used to",
    r"(?:it |this )?(?:is |are )?(?:able|designed|meant|intended) (?:to|for)",
    r"(?:in order )?to",
)
# English verb prefixes: a word the dictionary lacks ("unstages", "resubmits") is a verb when its stem is one.
VERB_PREFIXES = ("un", "re", "de", "dis", "pre", "auto", "co", "sub", "over", "up", "down", "multi", "bulk", "batch")


# ----------------------------------------------------------------------------- morphology
# Inflection (plural, singular, participle, a verb's base form) comes from `lemminflect`, a maintained
# dictionary of English lemmas and inflections by part of speech with rules for words it lacks; every
# module asks these functions, none keeps its own suffix rules. The tables below list only the words
# where that dictionary's first answer is wrong for documentation vocabulary; tests/test_english.py
# holds the expected forms of real API words.

# plural -> singular, where the dictionary's lemma is wrong for docs ("data" is a mass noun, not
# "datum"; "people" is the plural of "person"; an acronym's plural the OOV rules keep as it is)
SINGULAR_EXCEPTIONS = {"people": "person", "data": "data", "metadata": "metadata", "media": "media", "apis": "api",
                       "cpus": "cpu", "gpus": "gpu", "kpis": "kpi", "skus": "sku", "uris": "uri"}
# singular -> plural: mass nouns the dictionary counts ("informations"), and "persons" -> "people"
PLURAL_EXCEPTIONS = {"person": "people", "data": "data", "metadata": "metadata", "media": "media", "information": "information",
                     "feedback": "feedback", "software": "software", "hardware": "hardware", "equipment": "equipment",
                     "persona": "personas"}
# verb -> past participle: the spelling the task text already uses where the dictionary gives two
PARTICIPLE_EXCEPTIONS = {"cancel": "cancelled"}
# states that end a record's life in plain English (a value of a documented status field): no tool writes to a
# record in one of these unless a tool moves records out of it or a tool's doc names it ("reopen a closed issue")
ENDING_STATES = _words("completed complete cancelled canceled closed delivered finished archived expired refunded resolved "
                       "rejected failed deleted done fulfilled terminated revoked declined voided merged locked "
                       "invalid unfulfillable ended aborted discontinued retired")


def is_ending_state(value: str) -> bool:
    """Whether a documented state value reads as an end: "cancelled", "CLOSED", "Unfulfillable",
    "CompletePartialled" (its first or last word ends the record's life)."""
    ws = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", value or "")]
    return bool(ws) and (ws[0] in ENDING_STATES or ws[-1] in ENDING_STATES or "_".join(ws) in ENDING_STATES)

# verbs that put a record somewhere else (`move_card(card_id, list_id)`): a record's home named with them is
# where it goes, not where it lives; and the parameter names that say so (`target_project_id`, `new_parent`)
# nouns for a person (a record that stands for one: `User`, `Passenger`; the one a request is for: "a buyer")
PERSON_ENTITIES = {
    "user", "customer", "member", "passenger", "employee", "patient", "student", "person", "contact", "author",
    "driver", "guest", "client", "agent", "owner", "traveler", "traveller", "buyer", "seller", "subscriber", "account",
    "profile", "staff", "teacher", "doctor", "applicant", "candidate", "player", "attendee", "assignee", "reporter",
    "reviewer", "approver", "requester", "recipient", "sender", "organizer", "participant", "collaborator", "manager",
    "secretary", "administrator", "admin", "developer", "volunteer", "tenant", "resident", "visitor", "speaker",
    "consultant", "freelancer", "therapist", "nurse", "instructor", "coach", "trainer", "physician", "dentist",
}


def is_agent_noun(word: str) -> bool:
    """A noun for a person by what they do: a known one (`therapist`, `driver`) or an -ist (`stylist`, `dentist`,
    not a `playlist`): English's agent suffix, safer than -er (`folder`, `printer`)."""
    w = singular(word.lower())
    if w in PERSON_ENTITIES:
        return True
    if not w.endswith("ist") or len(w) < 6 or "NOUN" not in lemmas(w):
        return False
    # "playlist", "checklist": a list of something (the part before "list" is a word); "stylist", "specialist" are people
    return not (w.endswith("list") and len(w) >= 8 and lemmas(w[:-4]))


MOVING_VERBS = _words("move transfer copy fork clone migrate reassign")
# verbs that take a thing that exists and make an engagement of it: "book a meeting room" makes a booking of a
# room the rooms list shows, not a new room (bfcl_meeting_rooms: every booking failed as "room already exists")
# giving to a recipient: asked of the system for oneself with an amount one names ("send a certificate to my account
# with $25"), it is no request a person makes; the system gives at its discretion (τ-bench airline, issue 21)
GRANTING_VERBS = _words("send give grant issue award gift compensate")
ENGAGING_VERBS = _words("book reserve rent lease hire")
# records nobody gives a name: a message or a thread is found by its subject, sender or date ("my thread called
# "Performance review"" reads as made up, review 71), so no `name` is invented for them
UNNAMED_RECORDS = _words("message messages thread threads email emails mail comment comments reply replies conversation chat notification")
# a verb and its opposite, the first the act that puts a thing in the state ("start"/"stop": started or not). Devices
# say a bool argument with them (devicewords); two tools on one record with them keep one flag (synth.schema).
# Words field names shorten that a person says in full ("qty" -> "quantity"): a word whose reading depends on the
# next one (`exp_start_date` is expected, `exp_date` is expiration) maps that word to its reading, "" for the rest
FIELD_ABBREVIATIONS = {"qty": "quantity", "desc": "description", "amt": "amount", "addr": "address", "dept": "department",
                       "msg": "message", "img": "image", "pct": "percent", "cnt": "count", "acct": "account", "txn": "transaction",
                       "dob": "date of birth", "mgr": "manager", "pwd": "password", "tel": "phone", "loc": "location",
                       "attr": "attribute", "cust": "customer", "prev": "previous", "avg": "average"}
FIELD_ABBREVIATIONS_BEFORE = {"exp": {"start": "expected", "end": "expected", "date": "expiration", "month": "expiration",
                                      "year": "expiration", "at": "expiration", "": ""}}
OPPOSITE_VERBS = (("on", "off"), ("lock", "unlock"), ("enable", "disable"), ("activate", "deactivate"), ("open", "close"),
                  ("start", "stop"), ("arm", "disarm"), ("engage", "release"), ("mute", "unmute"), ("show", "hide"),
                  ("connect", "disconnect"), ("pause", "resume"), ("allow", "block"), ("subscribe", "unsubscribe"),
                  ("attach", "detach"), ("join", "leave"), ("accept", "decline"))
OPPOSITE = {a: b for a, b in OPPOSITE_VERBS} | {b: a for a, b in OPPOSITE_VERBS}


def act_noun(verb: str) -> str | None:
    """The noun of the act a verb names, as the dictionary knows it: "reserve" -> "reservation", "book" ->
    "booking", "rent" -> "rental"; None when no candidate is a known noun."""
    v = verb.lower()
    for c in (v[:-1] + "ation" if v.endswith("e") else v + "ation", v + "al", v + "ing", v + "ment"):
        if "NOUN" in lemmas(c):
            return c
    return None
DESTINATION_PARAM = re.compile(r"(^|_)(new|target|dest|destination|to)(_|$)")

_LAST_WORD = re.compile(r"(?:(?<=[a-z0-9])(?=[A-Z])|[\s_\-])(?=[A-Za-z]+$)")


@functools.lru_cache(maxsize=1)
def _lemminflect():
    import lemminflect  # noqa: PLC0415 - its dictionaries load on first use, not on import of forgec

    return lemminflect


@functools.lru_cache(maxsize=65536)
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """The dictionary's lemmas of `word` by part of speech ({} for a word it lacks): "orders" ->
    {"NOUN": ("order",), "VERB": ("order",)}."""
    return dict(_lemminflect().getAllLemmas(word.lower()))


def _split_last(phrase: str) -> tuple[str, str]:
    """"line items" -> ("line ", "items"); "excludePatterns" -> ("exclude", "Patterns"); "user_ids" -> ("user_", "ids")."""
    cuts = [m.end() for m in _LAST_WORD.finditer(phrase)]
    at = cuts[-1] if cuts else 0
    return phrase[:at], phrase[at:]


def respell(original: str, lowered: str) -> str:
    """`lowered` (an inflection of `original`, in lower case) in `original`'s spelling where the two
    agree: ("excludePatterns", "excludepattern") -> "excludePattern", ("URL", "urls") -> "URLs"."""
    same = 0
    while same < min(len(lowered), len(original)) and lowered[same] == original[same].lower():
        same += 1
    return original[:same] + lowered[same:]


def _inflects_to(lemma: str, tag: str, word: str) -> bool:
    return word in _lemminflect().getInflection(lemma, tag=tag)


@functools.lru_cache(maxsize=65536)
def _singular_word(w: str) -> str:
    if w in SINGULAR_EXCEPTIONS:
        return SINGULAR_EXCEPTIONS[w]
    if len(w) <= 2 or not w.isalpha() or w in CLOSED_CLASS:
        return w
    known = lemmas(w)
    nouns = known.get("NOUN", ())
    if known and not w.endswith("s"):  # "children" -> "child", "criteria" -> "criterion"; "opera", "okay" stay
        return w if w in nouns else next((n for n in nouns if _inflects_to(n, "NNS", w)), w)
    if known:  # "movies" -> "movie", "lives" -> "life"; else a verb's third person names its act ("creates",
        # "travels"); a word that is its own lemma stays ("news", "series", "status", "always")
        return next((n for n in nouns if n != w), None) or next((v for v in known.get("VERB", ()) if _inflects_to(v, "VBZ", w)), w)
    if len(w) <= 3 or not w.endswith("s") or w.endswith(("ss", "us", "is")):
        return w  # an acronym ("sms", "gps"), no plural ("openapi": no Latin "openapus"), or a Latin word ("prometheus")
    for p in VERB_PREFIXES:  # "subqueries" -> "sub" + "query", "resynchronizes" -> "re" + "synchronize"
        if w.startswith(p) and lemmas(w[len(p):]) and len(w) - len(p) >= 3:
            return p + _singular_word(w[len(p):])
    one = _lemminflect().getLemma(w, upos="NOUN")[0]
    return one if one != w and _inflects_to(one, "NNS", w) else w[:-1]  # "webhooks", "inboxes"; "msgs" -> "msg"


def singular(name: str) -> str:
    """The singular of a name or phrase's last word, in lower case (the form names are compared in):
    "statuses" -> "status", "categories" -> "category", "line_items" -> "line_item", "people" ->
    "person"; a word that only looks plural stays ("status", "series", "analysis", "news")."""
    head, last = _split_last(name)
    return (head + _singular_word(last.lower())).lower()


@functools.lru_cache(maxsize=65536)
def _plural_word(w: str) -> str:
    one = _singular_word(w)
    if one in PLURAL_EXCEPTIONS:
        return PLURAL_EXCEPTIONS[one]
    if not one.isalpha() or one in CLOSED_CLASS:
        return one
    li = _lemminflect()
    other = [f for f in li.getInflection(one, tag="NNS") if f.isalpha() and f != one]
    if other:  # "child" -> "children", "mapping" -> "mappings" (not the mass-noun reading "mapping")
        return other[0]
    # the dictionary counts it only as a mass noun: "series", "news" stay; "travel" -> "travels" by the rules
    return one if one.endswith("s") else li.getAllInflectionsOOV(one, "NOUN")["NNS"][0]


def plural(phrase: str) -> str:
    """The plural of a phrase's last word, in the phrase's spelling: "flight" -> "flights", "reply" ->
    "replies", "line item" -> "line items", "status" -> "statuses", "person" -> "people", "URL" -> "URLs"."""
    head, last = _split_last(phrase)
    return head + respell(last, _plural_word(last.lower())) if last else phrase


def is_plural(phrase: str) -> bool:
    """Whether a name or phrase's last word is a plural noun: "seats", "line items", "people" (not
    "status", "news", "data")."""
    _, last = _split_last(phrase.lower())
    return bool(last) and _singular_word(last) != last


@functools.lru_cache(maxsize=65536)
def participle(verb: str) -> str:
    """The past participle: "book" -> "booked", "modify" -> "modified", "send" -> "sent", "set" -> "set",
    "cancel" -> "cancelled", "stop" -> "stopped"; one word of letters (it also names nodes)."""
    v = verb.lower()
    if v in PARTICIPLE_EXCEPTIONS:
        return PARTICIPLE_EXCEPTIONS[v]
    li = _lemminflect()
    for form in li.getInflection(v, tag="VBN"):
        if form.isalpha():
            return form
    return li.getAllInflectionsOOV(v, "VERB")["VBN"][0]  # "login": not "logged-in"


def as_state(word: str) -> str:
    """A documented state value as the state a record is in: a word the dictionary knows only as a verb's base
    form is said by its participle ("publish" -> "published", "approve" -> "approved", WordPress's enums, review
    95: "only if its status is publish"); any other word stays ("draft", "pending", "active", "closed")."""
    w = word.lower()
    known = lemmas(w)
    if w.isalpha() and set(known) == {"VERB"} and known["VERB"][0] == w:
        return participle(w)
    return word


def _third(base: str) -> str:
    inf = _lemminflect().getInflection(base, tag="VBZ")
    return inf[0] if inf else base + "s"


@functools.lru_cache(maxsize=65536)
def verb_lemma(word: str) -> str | None:
    """The base form of `word` when it is a verb in base or third-person form ("creates" ->
    "create", "switch" -> "switch", "unstages" -> "unstage"); None for a word that is not
    one ("status", "the", "created", "listing")."""
    w = word.lower()
    if not w.isalpha() or w in CLOSED_CLASS:
        return None
    lem = lemmas(w).get("VERB")
    if lem:
        base = lem[0]
        return base if w in (base, _third(base)) else None
    if lemmas(w):
        return None  # the dictionary knows it, and not as a verb
    for p in VERB_PREFIXES:  # "unstages": the stem "stages" is a verb
        if w.startswith(p) and len(w) - len(p) >= 3:
            stem = verb_lemma(w[len(p):])
            if stem is not None:
                return p + stem
    return None


def is_verb(word: str) -> bool:
    return verb_lemma(word) is not None


@functools.lru_cache(maxsize=65536)
def verb_base(word: str) -> str:
    """A verb in any form as its base: "Switches" -> "switch", "applies" -> "apply", "armed" -> "arm",
    "sent" -> "send", "unstages" -> "unstage" (a word the dictionary lacks goes through lemminflect's
    rules); a word the dictionary knows only as another part of speech ("status", "this") is returned
    lowercased."""
    w = word.lower()
    if not w.isalpha() or w in CLOSED_CLASS:
        return w
    p = lemmas(w)
    if p:
        return p["VERB"][0] if "VERB" in p else w
    return _lemminflect().getLemma(w, upos="VERB")[0]


@functools.lru_cache(maxsize=65536)
def forms(word: str, upos: str | None = None) -> frozenset[str]:
    """A word with its inflections, for finding it in text: "cancel" -> cancels, cancelled, canceled,
    cancelling, ...; "order" -> orders, ordered, ordering; with upos="NOUN" only the noun's ("city" ->
    city, cities). An inflected word brings its lemma's forms ("orders" -> order, ordered, ...)."""
    w = word.lower()
    li = _lemminflect()
    out = {w}
    kinds = ("NOUN", "VERB") if upos is None else (upos,)
    bases = {w} | ({_singular_word(w)} if "NOUN" in kinds else set()) | ({verb_base(w)} if "VERB" in kinds else set())
    for b in bases:
        if not b.isalpha():
            continue
        out.add(b)
        known = lemmas(b)
        for kind in kinds:  # a known word's inflections as that kind ({} when it is none), else the rules'
            infl = li.getAllInflections(b, upos=kind) if known else li.getAllInflectionsOOV(b, kind)
            out.update(f for fs in infl.values() for f in fs)
        if "NOUN" in kinds:
            out.add(_plural_word(b))
        if "VERB" in kinds and (b in known.get("VERB", ()) or not known):
            out.add(participle(b))
    return frozenset(out)


def stem(word: str) -> str:
    """A key under which a word's inflections and near derivations meet, for matching only: its verb
    or noun lemma, a final "e" dropped, cut to five letters ("locked", "locks" -> "lock"; "activated",
    "active" -> "activ"; "running", "run" -> "run")."""
    w = word.lower()
    p = lemmas(w)
    base = p["VERB"][0] if "VERB" in p else p["NOUN"][0] if "NOUN" in p else w if p else verb_base(w)
    return base.rstrip("e")[:5]


# Light verbs: they name no act of their own ("handle campaign status modification", "perform the
# deletion", "initiate the OAuth flow"); a request headed by one is doc prose, not what a person asks.
LIGHT_VERBS = _words("handle manage perform facilitate initiate conduct undertake effectuate")  # not "execute": a query is executed


@functools.lru_cache(maxsize=4096)
def verb_of_noun(noun: str) -> str | None:
    """The verb a nominalization names: "purchase" -> "purchase", "reservation" -> "reserve", "deletion" ->
    "delete", "booking" -> "book", "creation" -> "create"; None when no candidate is a verb the dictionary knows.
    (lemminflect inflects but does not derive, so the common English suffixes are tried in turn.)"""
    w = noun.lower()
    cands = [w]
    if w.endswith("ing"):
        cands += [w[:-3], w[:-3] + "e"]
    for suf, reps in (("ication", ("y",)), ("ation", ("e", "")), ("ition", ("e",)), ("tion", ("te", "")), ("ssion", ("t",)),
                      ("sion", ("d", "de", "se")), ("ment", ("",)), ("al", ("",))):
        if w.endswith(suf) and len(w) > len(suf) + 2:
            cands += [w[: -len(suf)] + r for r in reps]
    for c in cands:
        if c.isalpha() and (lemmas(c).get("VERB") or [None])[0] == c and c not in LIGHT_VERBS:
            return c
    return None


@functools.lru_cache(maxsize=4096)
def with_article(phrase: str) -> str:
    """`phrase` after "a" or "an" as it sounds ("an epic", "a user", "an hour"), by `inflect`, whose rules
    cover the letters that do not sound as they look (a vowel letter alone gets this wrong)."""
    return _inflect().a(phrase)


@functools.lru_cache(maxsize=1)
def _inflect():
    import inflect  # noqa: PLC0415 - loaded on first use

    return inflect.engine()


# Words that make a list tool's name a list of some of the records ("drafts", "recent", "trash"), beside the
# participles ("archived", "deleted") a name's `-ed` gives away: the plain list of them all is the lookup.
SUBSET_WORDS = _words("draft drafts recent trash favorite favorites popular related empty pending open active inactive "
                      "upcoming past unread starred")

_LANGUAGE_FIELD = re.compile(r"(^|_)(lang|language|locale)(_code|_tag)?$")


@functools.lru_cache(maxsize=1024)
def language_name(field: str, value: str) -> str | None:
    """The English name of a language code in a field that holds one (`language: "ru"` -> "Russian", `locale:
    "pt_BR"` -> "Portuguese (Brazil)"), from Babel's CLDR data; None for any other field or value. A person says
    "in Russian", not "the ru language" (review 49)."""
    if not isinstance(value, str) or not _LANGUAGE_FIELD.search(field.lower()) or not re.fullmatch(r"[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?", value):
        return None
    from babel import Locale, UnknownLocaleError  # noqa: PLC0415 - CLDR data, loaded when a language is first said

    try:
        return Locale.parse(value.replace("-", "_")).english_name
    except (UnknownLocaleError, ValueError):
        return None
