"""The act a tool's docs describe, found by grammar and said as a person asks for it (issue 21).

A tool's description is prose written for a developer or a model: a summary sentence, often
behind a preamble ("This tool belongs to the vehicle control system.", "Use this tool to ..."),
then notes, return values and parameter lists. The intent a user asks for is the verb phrase of
the one sentence that describes an act. `clause(doc)` finds it with a small grammar pass,
never by position:

1. **Sentences.** The doc is split at sentence ends, line breaks, semicolons and dashes, and at a
   summary run into its description ("Cancel an order Cancel a pending order ...": a capitalised
   verb after a lowercase word); parentheticals are dropped.
2. **Skip what is not an act.** A sentence behind a section label (`Note:`, `Returns:`, `Args:`)
   is skipped; a label of another kind ("Tool description: Book a flight") is peeled off. Purpose
   openers ("Use this tool to", "Allows the user to", "Used to", "This endpoint can be used to")
   and a subject naming the tool ("This function permanently removes ...") are peeled off too,
   then sentence adverbs and modals.
3. **The main verb.** The sentence's head must be a verb in base or third-person form, by the
   dictionary (`lemminflect`; a word it lacks is a verb when its stem after an English prefix is:
   "unstages" -> "unstage"). A head that is a determiner, pronoun, preposition or auxiliary, or a
   verb that describes the tool rather than an act ("returns", "belongs", "requires"), makes the
   sentence unusable: the next one is tried, and a doc with none has no clause.
4. **The object.** The phrase runs from the verb to the first boundary: punctuation, a
   subordinator ("that", "if", "when"), a boundary phrase ("so that", "based on", "such as"), a
   second predicate ("... and refund its total price", "... or completely overwrite a file"),
   a purpose infinitive ("to track the changes") or a "with"/"using"/"via" phrase ("with
   comprehensive validation": how the tool works; the arguments the user gives are said apart). Alternative verbs are reduced to the first ("Move or rename files" -> "move files");
   argument-pointing adjectives go ("the specified team" -> "the team"); a trailing preposition
   or determiner is dropped.

The result is `Clause(verb, text)`: "cancel", "cancel a confirmed reservation". The sampler
(forgec/scenario.py `words`) then says it in the user's voice: the entity's noun is replaced by
the referring expression ("my reservation for the flight to JFK"), the arguments are joined.

Why `lemminflect`: which word is a verb and what its base form is are facts of English, not of an
API; hand suffix rules ("-ies" -> "-y") get "focuses", "does", "access" or "status" wrong and
cannot tell a noun head ("Status of ...") from a verb. `lemminflect` is a maintained dictionary of
English lemmas and inflections with parts of speech (from the Automatically Generated Inflection
Database and the Penn treebank), pure data lookups, so deterministic: the same doc always gives
the same clause. It is loaded on first use (about half a second) and every answer is cached.
Closed-class words and the morphology (verb_lemma, base forms, plurals) are in forgec/english.py.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from forgec import english as E
from forgec.english import is_agent_noun, is_verb, verb_lemma
from forgec.wording import split_name

_MAX_WORDS = 14


def _adverb(word: str) -> bool:
    p = E.lemmas(word)
    return bool(p) and set(p) <= {"ADV"} or word.lower() in E.SENTENCE_ADVERBS


@dataclass(frozen=True)
class Clause:
    verb: str      # the main verb's base form: "cancel"
    text: str      # the verb phrase: "cancel a confirmed reservation"
    sentence: str  # the sentence it was found in


# ----------------------------------------------------------------------------- sentences

_SENT_END = re.compile(r"(?<=[A-Za-z0-9)\]\"'`])[.!?](?=\s|$)|\n+|;\s+|\s+[-\u2013\u2014]+\s+|\s*\u2014\s*")
_RUN_ON = re.compile(r"(?<=[a-z0-9]) (?=([A-Z][a-z]+) [a-z])")


def sentences(doc: str) -> list[str]:
    """The doc's sentences, parentheticals dropped, a summary run into its description split."""
    text = re.sub(r"\[([^\[\]\n]{1,60})\]\([^()\s]*\)", r"\1", doc or "")  # a Markdown link reads as its text: "in [Spec Hub](url)"
    text = re.sub(r"\s*\([^()]*\)", "", text)
    text = re.sub(r"\bas be (?=\w+ed\b)", "as ", text)  # Harbor's "Mark a registered user as be removed": "as removed"
    text = re.sub(r"\b(?:e\.g|i\.e|etc|vs)\.", lambda m: m.group(0).replace(".", "\u2024"), text)  # not a sentence end
    out = []
    for part in _SENT_END.split(text):
        part = part.strip().replace("\u2024", ".")
        while part:
            first = part.split(" ", 1)[0]
            m = next((m for m in _RUN_ON.finditer(part) if not _in_noun_phrase(part[:m.start()]) and (
                _imperative(m.group(1), part[m.end() + len(m.group(1)):].split(" ", 2)[1:2]) or _restated(m.group(1), first))), None)
            if m is None:
                out.append(part)
                break
            out.append(part[:m.start()].strip())
            part = part[m.end():].strip()
    return [s for s in out if s]


_DESCRIBING = frozenset({"return", "retrieve", "get", "fetch", "list", "create", "delete", "update", "remove", "add", "set", "send", "cancel"})


def _restated(word: str, first: str) -> bool:
    """An OpenAPI summary run into its description once the doc is one line: "Delete Radarr instance
    Deletes an existing Radarr instance", "Get main settings Retrieves ...": a capitalised verb in the
    third person that restates the summary's verb, or opens a description, after an imperative."""
    lemma = verb_lemma(word)
    return bool(lemma) and word.lower() != lemma and verb_lemma(first) == first.lower() and (lemma == first.lower() or lemma in _DESCRIBING)


def _in_noun_phrase(before: str) -> bool:
    """Whether a capitalised word after `before` opens no sentence but sits in a noun phrase: after an article or an
    adjective ("Create a new Cloud page pre-populated with a template's body": "Cloud" is a verb too, review 68 cut it
    to "create a new")."""
    prev = before.rsplit(" ", 1)[-1].lower()
    return prev in E.DETERMINERS or set(E.lemmas(prev)) == {"ADJ"}


def _imperative(word: str, nxt: list[str]) -> bool:
    """A capitalised verb in base form, not followed by an adverb, starts a new sentence ("... for a
    file List checkpoints ..."); "from iCloud Contacts permanently" does not."""
    return verb_lemma(word) == word.lower() and not (nxt and _adverb(nxt[0]))


# ----------------------------------------------------------------------------- one sentence

_LABEL = re.compile(r"^([A-Za-z][A-Za-z ]{0,30}):\s*")
_OPENER = re.compile(r"^(?:" + "|".join(E.PURPOSE_OPENERS) + r")\s+", re.I)
_SELF_SUBJECT = re.compile(r"^(?:(?:this|the|that|it)\s+)?(?:[a-z]+\s+)?(?:" + "|".join(sorted(E.DOC_SELF_NOUNS)) + r")s?\s+|^(?:it|this)\s+", re.I)
_MODAL = re.compile(r"^(?:can|may|will|shall|should|could|would|must)\s+", re.I)
_IDENT_SUBJECT = re.compile(r"^(?:[A-Z][a-z0-9]+){2,}\s+|^[a-z][a-z0-9]*(?:_[a-z0-9]+)+\s+")  # "DeleteMemoView deletes ...", "get_user returns"
_TOKEN = re.compile(r"[A-Za-z0-9][\w'\u2019./@#+-]*|[^\sA-Za-z0-9]")


def _peel(s: str) -> str:
    """Label, purpose opener, the tool as subject, modal and adverbs off the sentence's front; a verb's
    manner prefix ("Hard-delete an issue", "Soft-delete") and the endpoint a sentence names in code
    ("via ``DELETE /issues/{id}.json``") off the verb phrase."""
    s = re.sub(r"\s+(?:via|using|with|through)\s+`+[^`]+`+", "", s)
    s = re.sub(r"^[^\w`'\"(\[]+", "", s)  # a warning sign or a bullet first: "⚠️ DESTRUCTIVE: Permanently delete a tag" (review 68)
    m = re.match(r"^([A-Za-z]+)-([a-z]+)\b", s)
    if m and is_verb(m.group(2)) and not is_verb(m.group(1)) and m.group(1).lower() not in E.VERB_PREFIXES:  # "re-run" stays
        s = m.group(2) + s[m.end():]
    for _ in range(4):
        before = s
        m = _LABEL.match(s)
        if m:
            if m.group(1).split()[0].lower() in E.SECTION_LABELS:
                return ""
            s = s[m.end():]
        m = _OPENER.match(s)
        if m:
            s = s[m.end():]
        m = _SELF_SUBJECT.match(s)
        if m:
            rest = s[m.end():]
            head = rest.split(" ", 1)[0] if rest else ""
            if head and (_MODAL.match(rest) or _OPENER.match(rest) or _adverb(head) or (is_verb(head) and head.lower() != verb_lemma(head))):
                s = rest  # "This function removes", "The endpoint can ...", "This tool is used to"
        m = _IDENT_SUBJECT.match(s)
        if m:  # the operation's own name as the subject (gRPC-gateway style): "ListMemos lists memos"
            head = s[m.end():].split(" ", 1)[0]
            if head and is_verb(head) and head.lower() != verb_lemma(head):
                s = s[m.end():]
        s = _MODAL.sub("", s)
        words = s.split(" ", 1)
        while len(words) == 2 and _adverb(words[0]) and not is_verb(words[0]):
            s = words[1]
            words = s.split(" ", 1)
        if s == before:
            break
    return s


def _second_predicate(toks: list[str], i: int) -> bool:
    """Whether toks[i] ("and", "or", "then", ",") starts a second verb phrase: a verb (after an
    optional adverb) followed by a determiner, pronoun or the end ("and refund its total")."""
    j = i + 1
    while j < len(toks) and _adverb(toks[j]) and not is_verb(toks[j]):
        j += 1
    if j >= len(toks) or not is_verb(toks[j]):
        return False
    nxt = toks[j + 1].lower() if j + 1 < len(toks) else ""
    if j > i + 1 and toks[j].lower() != (verb_lemma(toks[j]) or "") and toks[j].lower().endswith("s"):
        return True  # "Creates a doc and optionally inserts initial content": an adverb, then an inflected verb (review 48)
    return nxt == "" or nxt in E.DETERMINERS or nxt in E.PRONOUNS


def _boundary(toks: list[str], i: int) -> bool:
    t = toks[i].lower()
    if not t[0].isalnum():
        return True
    if t in E.SUBORDINATORS:
        return True
    rest = " ".join(x.lower() for x in toks[i:i + 4])
    if any(rest == p or rest.startswith(p + " ") for p in E.BOUNDARY_PHRASES):
        return True
    if t in ("and", "or", "then", "and/or") and _second_predicate(toks, i):
        return True
    if t == "to" and i + 2 < len(toks) and is_verb(toks[i + 1]) and toks[i + 1].lower() == verb_lemma(toks[i + 1]) \
            and toks[i + 2].lower() in (E.DETERMINERS | E.PRONOUNS) and not E.lemmas(toks[i + 1]).get("NOUN"):
        return True  # a purpose infinitive: "to track the changes"
    if i > 0 and toks[i][:1].isupper() and t in (E.DETERMINERS | E.PRONOUNS):
        return True  # a new sentence run on: "... in the path A POST to ..."
    if t in E.ARGUMENT_ADJECTIVES and i > 0 and toks[i - 1].lower() not in E.DETERMINERS:
        return True  # a participle after a noun: "a flight given the travel information"
    p = E.lemmas(t)
    if t.endswith("ing") and "VERB" in p and not ({"NOUN", "ADJ"} & set(p)) and i + 1 < len(toks) \
            and toks[i + 1].lower() in (E.DETERMINERS | E.PRONOUNS):
        return True  # a participial phrase: "a file using a template" (not "the shipping address")
    if t.endswith("ing") and "VERB" in p and i >= 2 and toks[i - 1].lower() not in E.DETERMINERS and "NOUN" in E.lemmas(toks[i - 1].lower()) \
            and i + 1 < len(toks) and toks[i + 1].lower() in (E.DETERMINERS | E.PRONOUNS | {"any", "all", "each", "every", "given"}):
        return True  # after a noun too when it could be an adjective: "delete emails matching any combination of filters"
    if t.endswith("ed") and i >= 2 and i + 1 < len(toks) and toks[i + 1].lower() in ("with", "by", "on", "from", "in", "using", "via") and "VERB" in E.lemmas(t.split("-")[-1]) \
            and toks[i - 1].lower() not in E.DETERMINERS and "NOUN" in E.lemmas(toks[i - 1].lower()):
        return True  # a past participle after its noun: "a new page pre-populated with a template's body" (review 68)
    if t in E.PREPOSITIONS and any(x.lower() == "optional" for x in toks[i + 1:i + 3]):
        return True  # "with an optional base branch": an argument the user need not give
    if t == "by" and i >= 2 and any(x.lower() in ("id", "ids", "identifier", "uuid", "key", "name", "slug") for x in toks[i + 1:i + 4]):
        return True  # "delete a cluster by its id": how the agent names it, which the user never says
    if t in ("with", "using", "via") and i >= 2:
        return True  # "a new post with comprehensive validation", "a page using a template": how, not what; the arguments say it
    return False


@functools.lru_cache(maxsize=16384)
def sentence_clause(sentence: str) -> Clause | None:
    """The verb phrase of one sentence, or None when it has no usable one."""
    s = _peel(sentence.strip())
    toks = [re.sub(r"^([A-Za-z]+)/[A-Za-z]+$", r"\1", t) for t in _TOKEN.findall(s)]  # "mailbox/folder": the first
    if len(toks) < 2:
        return None
    if len(toks) > 3 and toks[0].lower() in ("post", "put", "patch") and toks[1].lower().endswith("s") and toks[2].lower() in ("a", "an", "the") \
            and (v1 := verb_lemma(toks[1])) and v1 not in E.META_VERBS and toks[1].lower() != v1:
        toks = toks[1:]  # Harbor's "Post creates a label": the HTTP method labels the sentence, "creates" is its verb
    if len(toks) > 3 and toks[1].lower() == "then" and verb_lemma(toks[0]) and verb_lemma(toks[2]):
        toks = toks[2:]  # "Preview then delete a custom-field definition": the act is the second verb's
    verb = verb_lemma(toks[0])
    if verb is None or verb in E.META_VERBS or toks[1].lower() in E.AUXILIARIES or verb == "confirm" and E.CONDUCT_CONFIRM.search(s):
        return None  # "Returns the list", "This tool belongs to", "Status is ..."
    if verb in E.LIGHT_VERBS and len(toks) > 4 and toks[1].lower() in ("the", "a", "an") and toks[3].lower() == "of" \
            and (act := E.verb_of_noun(toks[2])):
        # "Facilitates the purchase of movie tickets": the act is the noun's verb ("purchase movie tickets")
        toks = [act] + toks[4:]
        verb = act
    i = 1
    # alternative verbs: "Move or rename files", "Create, update or delete a label" -> the first
    while i + 1 < len(toks) and toks[i].lower() in ("or", ",", "and/or", "/") and is_verb(toks[i + 1]):
        i += 2
        if i < len(toks) and toks[i].lower() == "or":
            i += 1
            if i < len(toks) and is_verb(toks[i]):
                i += 1
    out = [verb] + (["and", verb_lemma(toks[2]) or toks[2].lower()] if i == 1 and len(toks) > 3 and toks[1].lower() == "and"
                    and is_verb(toks[2]) and not _second_predicate(toks, 1) else [])
    i = 3 if len(out) == 3 else i
    for j in range(i, len(toks)):
        if _boundary(toks, j):
            break
        out.append(toks[j])
    # "the specified team" -> "the team"; "an existing file" -> "a file" (the article by the next word's letter)
    words: list[str] = []
    for w in out:
        if w.lower() in E.ARGUMENT_ADJECTIVES and words and words[-1].lower() in E.DETERMINERS:
            if words[-1].lower() in ("a", "an"):
                words[-1] = "a"
                words.append("\0an")  # the article is settled by the word that comes next
            continue
        if words and words[-1] == "\0an":
            words.pop()
            words[-1] = "an" if w[:1].lower() in "aeiou" else "a"
        words.append(w)
    words = [w for w in words if w != "\0an"]
    # the docs address the agent's user ("your library"); the user says it of themself ("my library")
    words = [{"your": "my", "Your": "My", "yours": "mine"}.get(w, w) for w in words]
    # a type's identifier is said as words ("a todoTaskList object" -> "a todo task list"): nobody says the schema's name
    spoken: list[str] = []
    for w in words:
        if spoken and spoken[-1] == "\0type" and w.lower() in ("object", "objects", "resource", "resources", "entity", "entities", "instance"):
            spoken.pop()
            continue
        if spoken and spoken[-1] == "\0type":
            spoken.pop()
        if re.fullmatch(r"[a-z]{2,}(?:[A-Z][a-z0-9]+)+", w):  # not "iPhone"
            spoken += [x.lower() for x in re.findall(r"[A-Z]?[a-z0-9]+", w)] + ["\0type"]
        else:
            spoken.append(w)
    words = [w for w in spoken if w != "\0type"]
    # the product's own place closing the phrase ("create an API specification in Postman's Spec Hub"): the user is in
    # the product already; the place is no part of the request (review 26)
    for k in range(2, len(words)):
        if words[k - 1].lower() in E.PREPOSITIONS and re.fullmatch(r"[A-Z][\w.-]*'s", words[k]) and all(x[:1].isupper() for x in words[k + 1:]):
            words = words[:k - 1]
            break
        # "upload a new document to Paperless-NGX", "create a page in Notion": the product itself, by its name
        if words[k - 1].lower() in ("to", "in", "into", "on", "onto") and all(re.fullmatch(r"[A-Z][\w.-]*", x) for x in words[k:]) \
                and any(re.search(r"[A-Z].*[A-Z]|-|\.", x) or x.isupper() or len(words[k:]) == 1 for x in words[k:]):
            words = words[:k - 1]
            break
    # ... and mid-phrase, before the next preposition: "create a reminder in macOS Reminders.app from my email" (review 50)
    for k in range(2, len(words)):
        if words[k - 1].lower() not in ("in", "into", "on", "onto"):
            continue
        j = next((i for i in range(k, len(words)) if words[i].lower() in E.PREPOSITIONS), len(words))
        if k < j < len(words) and all(re.fullmatch(r"[A-Za-z][\w.-]*", x) and re.search(r"[a-z][A-Z]|[A-Za-z]\.[a-z]|^[A-Z]{2,}", x)
                                      for x in words[k:j]):
            words = words[:k - 1] + words[j:]
            break
    # "create a new project within the system", "add a user to the platform": the product itself, said by a generic
    # noun; the user is in it already (review 50)
    for k in range(2, len(words) - 1):
        adj = 1 if k + 3 == len(words) and words[k + 1].lower() in ("entire", "whole") else 0  # "from the entire system" (review 68)
        if words[k - 1].lower() in ("in", "within", "into", "to", "on", "onto", "inside", "from") and words[k].lower() in ("the", "this") \
                and k + 2 + adj == len(words) and words[k + 1 + adj].lower().rstrip(".;:,") in ("system", "platform", "database", "application", "app", "server", "service", "api", "tool"):
            words = words[:k - 1]
            break
    # "create a comment or story": the API's two names for one thing; the user asks for the first
    for k in range(2, len(words) - 1):
        if words[k].lower() == "or" and words[k - 2].lower() in E.DETERMINERS and not is_verb(words[k + 1]):
            words = words[:k] + words[k + 2:]
            break
    # an exclusion or a place only the API sees closing the phrase ("Delete a calendar other than the default
    # calendar", "Removes the event from the containing calendar"): the user names their record; the rest is
    # the tool's rule, not part of the request (review 29)
    for k in range(1, len(words)):
        lw = words[k].lower()
        if lw in ("except", "excluding") or lw == "other" and k + 1 < len(words) and words[k + 1].lower() == "than" or (
                lw in E.PREPOSITIONS and any(x.lower() in ("containing", "default", "current", "parent", "enclosing") for x in words[k + 1:k + 3])):
            words = words[:k]
            break
    # the user the request is for, in the docs' third person ("schedule a property visit for a potential buyer or
    # tenant"): the user says it of themself, so the phrase goes
    for k in range(2, len(words) - 2):  # "search for a stylist": a "for" right after the verb is its object
        if words[k].lower() != "for" or words[k + 1].lower() not in ("a", "an", "the"):
            continue
        j = k + 2
        if j + 1 < len(words) and not is_agent_noun(words[j]) and words[j].isalpha():
            j += 1  # "a potential buyer"
        if j < len(words) and is_agent_noun(words[j]) and words[j].islower():
            j += 1
            if j + 1 < len(words) and words[j].lower() == "or" and is_agent_noun(words[j + 1]):
                j += 2
            words = words[:k] + words[j:]
            break
    if len(words) > _MAX_WORDS:
        # "Make a table reservation at a specified restaurant for a certain number of guests on a given date and time":
        # the act and its object end at the first preposition; what follows is the arguments' places, which the
        # request says with their values (the whole sentence had been dropped: "reserve a new reservation")
        cut = min((k for k in range(2, _MAX_WORDS + 1) if words[k].lower() in E.PREPOSITIONS), default=0)
        if cut:
            words = words[:cut]
    # a dangling focus adverb from a cut condition ("Create a private room only [when explicitly requested]")
    while len(words) > 1 and words[-1].lower() in (E.PREPOSITIONS | E.DETERMINERS | E.CONJUNCTIONS | {"only", "just", "explicitly", "optionally"}):
        words.pop()
    if not 2 <= len(words) <= _MAX_WORDS or any(re.search(r"[_`(){}\[\]<>=/\\|]", w) for w in words):
        return None
    for k in range(2, len(words) - 1):  # "Delete project by projectID": how the API finds the record, not the ask
        if words[k].lower() == "by" and re.fullmatch(r"(?:(?:its|the|a|an)\s)?\w*(?:id|ID|Id|ids|IDs|uuid|UUID|key|identifier|slug)",
                                                      " ".join(words[k + 1:k + 3]) if words[k + 1].lower() in ("its", "the", "a", "an") else words[k + 1]) \
                and k + (3 if words[k + 1].lower() in ("its", "the", "a", "an") else 2) == len(words):
            words = words[:k]
            break
    if re.fullmatch(r"[a-z]+'s", words[1]):
        return None  # "Update user's profile": the docs' shorthand, no article; "update user's profile for my user" (review 71)
    if verb in WIRE_VERBS and words[0].lower() == verb:
        verb, words = "update", ["update"] + words[1:]  # "Patch a label": the HTTP method's name, a person says "update"
    return Clause(verb, " ".join(words), sentence)


# verbs that name a protocol's method, not an act a person asks for (review 35: "I want to patch my label")
WIRE_VERBS = frozenset({"patch", "upsert"})


_WORD = re.compile(r"(?<![`'\w])[A-Za-zÀ-ÿ]+(?![`\w])")


def in_english(doc: str) -> bool:
    """Whether the doc's first line is English: at least 40% of its plain words are English words (lemminflect's
    lexicon or a closed-class word). Across the 3,363 tool docs of the broad corpus, English docs score 0.5 or more
    (a product's jargon: "Get kubeconfig for a DigitalOcean Kubernetes cluster", 0.6), French or Spanish ones 0.0-0.12
    ("Crée un(e) candidat dans BoondManager. Quand : pour ajouter ...", whose "pour" is an English verb, review 31)."""
    line = (doc or "").strip().split("\n")[0][:300]
    ws = [w.lower() for w in _WORD.findall(line) if len(w) >= 2 and not (w[0].isupper() and w[1:].lower() != w[1:])]
    if len(ws) < 3:
        return True
    known = sum(1 for w in ws if w in E.CLOSED_CLASS or E.lemmas(w))
    return known >= 0.4 * len(ws)


@functools.lru_cache(maxsize=16384)
def clause(doc: str) -> Clause | None:
    """The act the doc describes: the first sentence with a usable verb phrase (see the module doc), among its
    first three: what follows is how to call it ("Summarize the planned change in chat ...", review 28). A doc in
    another language has none the user could say (`in_english`)."""
    if not in_english(doc or ""):
        return None
    for s in sentences(doc or "")[:3]:
        c = sentence_clause(s)
        if c is not None:
            return c
    return None


def object_nouns(doc: str) -> list[str]:
    """The noun phrase the doc's verb acts on, lower-cased, determiners and argument adjectives out: "Search for
    a hair stylist in a specified city" -> ["hair", "stylist"]; "Discover therapists in ..." -> ["therapists"].
    The docs' own name for what a tool finds, which its tool name may call otherwise (`FindProvider`)."""
    c = clause(doc)
    if c is None:
        return []
    words = c.text.split()[1:]
    if words and words[0].lower() in ("for", "up", "out"):
        words = words[1:]  # "Search for a property", "Look up a user"
    out: list[str] = []
    for w in words:
        lw = w.lower()
        if lw in E.PREPOSITIONS or lw in E.CONJUNCTIONS or lw in ("that", "which", "who", "whose", "to") or not lw.isalpha():
            break
        if lw not in E.DETERMINERS and lw not in E.ARGUMENT_ADJECTIVES:
            out.append(lw)
    return out


def doc_verb(doc: str) -> str:
    """The doc's main verb ("cancel"), or "" when no sentence has a usable verb phrase."""
    c = clause(doc)
    return c.verb if c else ""


def name_verb(name: str) -> str:
    """The first word of a tool's name that is a verb: `git_reset` -> "reset", `Media_3_PlayMovie` -> "play".
    A service-qualified operation (`MemoViewService_DeleteMemoView`) names its act in its last
    CamelCase part, which starts with the verb ("view" in "MemoView" is a noun there)."""
    last = name.rsplit("_", 1)[-1]
    if "_" in name and re.fullmatch(r"(?:[A-Z][a-z0-9]+){2,}", last):
        v = verb_lemma(split_name(last)[0])
        if v and v not in E.META_VERBS:
            return v
    return next((v for w in split_name(name) if (v := verb_lemma(w)) and v not in E.META_VERBS), "")
