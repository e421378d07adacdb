"""The one English morphology (forgec/english.py, issue 22 "words once"): plural, singular, participle
and base forms of words from real API docs, written out by hand. Every module asks these functions,
so a wrong form here is wrong in every task text, node name and entity name at once."""

from __future__ import annotations

import pytest

from forgec import english as E

# singular form -> plural form, nouns as API docs use them (Stripe, GitHub, Jira, Slack, the examples)
NOUNS = [
    ("status", "statuses"), ("category", "categories"), ("address", "addresses"), ("index", "indexes"),
    ("person", "people"), ("analysis", "analyses"), ("box", "boxes"), ("match", "matches"), ("policy", "policies"),
    ("series", "series"), ("data", "data"), ("metadata", "metadata"), ("child", "children"), ("id", "ids"),
    ("url", "urls"), ("flight", "flights"), ("reply", "replies"), ("day", "days"), ("reservation", "reservations"),
    ("branch", "branches"), ("tax", "taxes"), ("quiz", "quizzes"), ("hero", "heroes"), ("photo", "photos"),
    ("life", "lives"), ("shelf", "shelves"), ("criterion", "criteria"), ("bus", "buses"), ("alias", "aliases"),
    ("campus", "campuses"), ("key", "keys"), ("company", "companies"), ("process", "processes"), ("news", "news"),
    ("information", "information"), ("webhook", "webhooks"), ("repo", "repos"), ("sku", "skus"), ("api", "apis"),
    ("email", "emails"), ("epoch", "epochs"), ("mapping", "mappings"), ("man", "men"), ("woman", "women"),
    ("foot", "feet"), ("echo", "echoes"), ("inbox", "inboxes"), ("subquery", "subqueries"), ("namespace", "namespaces"),
]

# plurals whose singular only the dictionary knows, and words that only look plural
ONLY_SINGULAR = [
    ("indices", "index"), ("matrices", "matrix"), ("vertices", "vertex"), ("statuses", "status"), ("species", "species"),
    ("access", "access"), ("class", "class"), ("glasses", "glass"), ("movies", "movie"), ("cookies", "cookie"),
    ("caches", "cache"), ("aliases", "alias"), ("focuses", "focus"), ("parentheses", "parenthesis"), ("semantics", "semantics"),
    ("msgs", "msg"), ("gpus", "gpu"), ("kpis", "kpi"), ("uuids", "uuid"), ("params", "param"), ("creates", "create"),
    ("sms", "sms"), ("gps", "gps"), ("openapi", "openapi"), ("prometheus", "prometheus"), ("always", "always"),
    ("does", "does"), ("has", "has"), ("its", "its"), ("towards", "towards"),
]

# verb -> past participle
VERBS = [
    ("send", "sent"), ("pay", "paid"), ("set", "set"), ("cancel", "cancelled"), ("modify", "modified"), ("stop", "stopped"),
    ("book", "booked"), ("update", "updated"), ("create", "created"), ("delete", "deleted"), ("buy", "bought"),
    ("make", "made"), ("put", "put"), ("run", "run"), ("give", "given"), ("take", "taken"), ("write", "written"),
    ("transfer", "transferred"), ("submit", "submitted"), ("commit", "committed"), ("ship", "shipped"), ("apply", "applied"),
    ("copy", "copied"), ("deploy", "deployed"), ("reset", "reset"), ("build", "built"), ("find", "found"),
    ("upload", "uploaded"), ("log", "logged"), ("unlock", "unlocked"), ("hide", "hidden"), ("forbid", "forbidden"),
    ("upsert", "upserted"), ("login", "logined"), ("refer", "referred"), ("travel", "traveled"), ("get", "gotten"),
]


@pytest.mark.parametrize("one,many", NOUNS)
def test_plural_and_singular_of_doc_nouns(one, many):
    assert E.plural(one) == many
    assert E.singular(many) == one
    assert E.is_plural(many) == (many != one)
    assert not E.is_plural(one)


@pytest.mark.parametrize("word,one", ONLY_SINGULAR)
def test_singular_of_plurals_and_words_that_only_look_plural(word, one):
    assert E.singular(word) == one


@pytest.mark.parametrize("verb,done", VERBS)
def test_participle_and_back(verb, done):
    assert E.participle(verb) == done
    assert done.isalpha()  # it also names nodes: `cancelled_reservation`
    if verb not in ("login",):  # the rules' form of a word the dictionary spells "logged-in"
        assert E.verb_base(done) == verb


def test_phrases_and_names_inflect_their_last_word_in_their_own_spelling():
    assert E.plural("line item") == "line items"
    assert E.plural("travel credit") == "travel credits"
    assert E.plural("URL") == "URLs"
    assert E.plural("paymentMethod") == "paymentMethods"
    assert E.singular("line_items") == "line_item"
    assert E.singular("reservation_ids") == "reservation_id"
    assert E.singular("excludePatterns") == "excludepattern"  # lower case: the form names are compared in
    assert E.respell("excludePatterns", E.singular("excludePatterns")) == "excludePattern"
    assert E.singular("similarURLs") == "similarurl"
    assert E.is_plural("checked bags") and not E.is_plural("order status")
    assert E.plural("") == "" and E.singular("") == ""


def test_verb_forms():
    assert [E.verb_base(w) for w in ("Switches", "applies", "armed", "recording", "unstages", "status")] == \
        ["switch", "apply", "arm", "record", "unstage", "status"]
    assert [E.verb_lemma(w) for w in ("creates", "switch", "unstages", "status", "the", "created")] == \
        ["create", "switch", "unstage", None, None, None]
    assert E.is_verb("cancels") and not E.is_verb("reservation")


def test_forms_find_a_word_in_text_in_any_inflection():
    assert {"cancel", "cancels", "cancelled", "canceled", "cancelling"} <= E.forms("cancel")
    assert {"order", "orders", "ordered", "ordering"} <= E.forms("orders")
    assert E.forms("city", "NOUN") == {"city", "cities"}
    assert {"upsert", "upserts", "upserted"} <= E.forms("upsert")  # a word the dictionary lacks: the rules' forms


def test_stem_meets_inflections_and_near_derivations():
    assert E.stem("locked") == E.stem("locks") == E.stem("lock")
    assert E.stem("activated") == E.stem("active")
    assert E.stem("running") == E.stem("run")
    assert E.stem("stopped") == E.stem("stop")
