"""Rules from reading the broad corpus's tasks in the session after blind review 33: ids the docs describe,
ids that are numbers, RPC-style method names, clauses cut before a participle, records named as a person names
them, motives that belong to whoever the record is, and a place called like a place.

Each test checks against a hand-written expectation (docs of the kinds in ../shared/corpus-broad, written here so
the test owns its input), not against forgec's own output.
"""

from __future__ import annotations

import json
import random

from conftest import compile_doc

from forgec import ir
from forgec.realize import clause
from forgec.reasons import reason_for
from forgec.scenario import refer
from forgec.synth.schema import infer_schema, rpc_method
from forgec.stdlib.values import generate_state


def _str(desc: str = "") -> dict:
    return {"type": "string", "description": desc}


def _num(desc: str = "") -> dict:
    return {"type": "number", "description": desc}


def _tool(name: str, desc: str, props: dict, required: list[str]) -> dict:
    return {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props, "required": required}}


# a document store whose notes hang on documents addressed by a bare `id` ("The document ID"), beside accounts
# that are themselves keyed by `id` (paperless-style MCP docs)
PAPERS = {"tools": [
    _tool("list_documents", "List documents.", {"page": _num("Page number")}, []),
    _tool("get_document", "Get a document.", {"id": _num("The document ID")}, ["id"]),
    _tool("create_document_note", "Add a note to a document.", {"id": _num("The document ID"), "note": _str("The note text to add")}, ["id", "note"]),
    _tool("get_account", "Get the mail account.", {"id": {"type": "integer", "description": "Account id"}}, ["id"]),
    _tool("list_accounts", "List mail accounts.", {}, []),
]}


def test_a_bare_id_names_the_record_its_doc_names(tmp_path):
    """`create_document_note(id: "The document ID")` takes a document, whatever else is keyed by `id`; its ids are
    numbers, as every param naming a document is (before: the user's own id was sent as the document's, and the
    documents were keyed "document_00913" where the docs want a number)."""
    from forgec.frontends import read_paths

    d = tmp_path / "papers"
    d.mkdir()
    (d / "tools_list.json").write_text(json.dumps(PAPERS))
    envs, _ = read_paths([d])
    s = infer_schema(envs[0])
    note = s.views["create_document_note"]
    assert note.refs.get("id") == "Document", note.refs
    assert s.entities["Document"].key_type == "int"


def test_rpc_methods_are_read_by_their_names():
    """`POST /collections.list` lists, `/documents.info` reads, `/collections.addUser` adds a user to a collection:
    every method is a POST, so the method's name says whether it writes."""
    def t(path: str) -> ir.Tool:
        ident = ir.Param(name="id", type=ir.Type(kind="string"), required=True, description="Unique identifier for the document.")
        params = (ident,) if path.endswith((".info", ".delete")) else ()
        return ir.Tool(name=path.strip("/").replace(".", "_"), description="", params=params, http_method="POST", http_path=path)

    assert rpc_method(t("/collections.list")) == ["list", "collections"]
    assert rpc_method(t("/documents.info")) == ["get", "document"]
    assert rpc_method(t("/collections.addUser")) == ["add", "user", "to", "collection"]
    assert rpc_method(t("/collections.removeUser")) == ["remove", "user", "from", "collection"]
    assert rpc_method(t("/api/v1/collections/{id}")) is None  # REST: the HTTP verb decides
    spec = ir.Tool(name="get_api_spec_yaml", description="", http_method="GET", http_path="/api/spec.yaml")
    assert rpc_method(spec) is None  # a file, not a method
    env = ir.Environment(name="wiki", tools=(t("/documents.list"), t("/documents.info"), t("/documents.delete"), t("/documents.create")))
    kinds = {v.tool.http_path: v.kind for v in infer_schema(env).views.values()}
    assert kinds == {"/documents.list": "search", "/documents.info": "read", "/documents.delete": "delete", "/documents.create": "create"}


def test_a_clause_stops_before_a_participle_after_its_object():
    assert clause("Delete emails matching any combination of filters").text == "delete emails"
    assert clause("Retrieves a list of products matching the given criteria.").text == "retrieve a list of products"
    assert clause("Update the shipping address of an order").text == "update the shipping address of an order"


def test_records_are_not_named_by_settings_or_notes():
    """A person names their record by its name, its state, its dates, not by its currency, its colour, a part's status
    or the comments written on it; with nothing else to tell two records apart, none is named."""
    recs = [
        {"currency": "CAD", "color": "red", "summarization_status": "failure", "information_comments": "Draft."},
        {"currency": "USD", "color": "blue", "summarization_status": "success", "information_comments": "Final."},
    ]
    fields = ["currency", "color", "summarization_status", "information_comments"]
    assert refer(recs, 0, fields, random.Random(0), superlatives=False) is None
    recs[0]["name"], recs[1]["name"] = "Spring launch", "Autumn launch"
    ref = refer(recs, 0, fields + ["name"], random.Random(0), superlatives=False)
    assert ref is not None and ref.attrs == (("name", "Spring launch"),)


def test_a_contacts_new_details_are_theirs():
    """Changing a contact's email is their change ("they changed jobs"), not mine; my own profile's is mine."""
    rec = {"first_name": "Mary", "last_name": "Meyer", "email": "mary@example.com"}
    theirs = {reason_for("update", "update", "", "Contact", rec, None, {"email": "m@x.org"}, set(), salt, {"own": False, "owner": False})
              for salt in range(6)}
    assert theirs <= {"they changed jobs", "they switched to a new email provider"}, theirs
    mine = {reason_for("update", "update", "", "User", rec, None, {"email": "m@x.org"}, set(), salt, {"own": True, "owner": True})
            for salt in range(6)}
    assert mine <= {"I changed jobs", "I switched to a new email provider"}, mine
    company = reason_for("update", "update", "", "Company", {"name": "Acme"}, None, {"country": "usa", "city": "Denver"}, set(), 0,
                         {"own": False, "owner": False})
    assert company == ""


def test_a_restaurant_is_called_like_a_place():
    """A restaurant's own name is a place's name ("Parkside Restaurant", "Keller's Restaurant"), never "Restaurant 1"."""
    state = generate_state({"entities": {"Restaurant": {"key": "restaurant_name", "fields": {
        "restaurant_name": {"type": "str", "doc": "key"}, "location": {"type": "str", "doc": ""}}}}}, seed=3, size=12)
    names = list(state["entities"]["Restaurant"])
    assert len(names) == 12 and all(n.endswith(" Restaurant") and not n.split()[0].isdigit() for n in names), names
    assert all(not n.removesuffix(" Restaurant").isdigit() for n in names)


def test_an_opaque_state_code_is_not_asked_for(tmp_path):
    """`update_absence(id, state: number)` with no word on what the numbers mean: nobody asks "set its state to 2"."""
    doc = {"tools": [
        _tool("list_absences", "List my absences.", {}, []),
        _tool("update_absence", "Update an absence.", {"id": _str("The absence ID"), "state": _num("State of the absence"),
                                                       "title": _str("Title of the absence")}, ["id"]),
        _tool("create_absence", "Create an absence.", {"title": _str("Title of the absence"), "state": _num("State")}, ["title"]),
    ]}
    out = compile_doc(tmp_path, "absences", "tools_list.json", doc, 12)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    assert not any("state to" in t["instruction"] for t in tasks), [t["instruction"] for t in tasks]


def test_a_bare_place_and_its_scope_are_said_once():
    from forgec.scenario import merge_bare_scope

    said = 'I want to delete the branch design-review from project in the project called "Holiday schedule".'
    assert merge_bare_scope(said) == 'I want to delete the branch design-review from the project called "Holiday schedule".'
    kept = 'Please add a note to my document called "Taxes" in the folder called "2024".'
    assert merge_bare_scope(kept) == kept


def test_a_field_named_by_a_verb_phrase_is_no_question():
    from forgec.scenario import _verb_phrase_name

    assert _verb_phrase_name("expires_in_days") and _verb_phrase_name("remaining_until_reset")
    assert not _verb_phrase_name("price_per_unit") and not _verb_phrase_name("created_at") and not _verb_phrase_name("time_in_seconds")


def test_a_slug_key_is_a_slug():
    """`organizationSlug` keys organizations by slugs ("security-review"), not "organization_00773"."""
    import re

    state = generate_state({"entities": {"Organization": {"key": "organizationSlug", "fields": {
        "organizationSlug": {"type": "str", "doc": "key"}}}}}, seed=1, size=8)
    keys = list(state["entities"]["Organization"])
    assert len(keys) == 8 and all(re.fullmatch(r"[a-z]+(?:-[a-z0-9]+)+", k) for k in keys), keys


def test_a_setting_of_another_setting_is_no_question():
    from types import SimpleNamespace as NS

    from forgec.scenario import _qualifies_another

    e = NS(fields=[NS(name="ignoreMode", doc="How ignored issues behave."),
                   NS(name="ignoreDurationMinutes", doc="How many minutes to ignore the issue when ignoreMode is 'forDuration'."),
                   NS(name="ignoreWindowMinutes", doc="Optional time window in minutes for ignoreCount."),
                   NS(name="ignoreCount", doc="How many times the issue must occur."),
                   NS(name="status", doc="The issue's status.")])
    assert _qualifies_another(e.fields[1], e) and _qualifies_another(e.fields[2], e)
    assert not _qualifies_another(e.fields[3], e) and not _qualifies_another(e.fields[4], e)


def test_a_compare_at_price_is_above_the_price():
    from forgec.gate import _was_below_now

    assert _was_below_now({"product_id": "1", "price": 2500.0, "compare_at_price": 500.0})
    assert _was_below_now({"variant": {"price": 20, "compareAtPrice": 20}})
    assert not _was_below_now({"price": 1500.0, "compare_at_price": 2000.0})
    assert not _was_below_now({"price": 1500.0})


def test_a_new_records_name_comes_before_its_place():
    from forgec.scenario import _join_said, _settings

    out = _join_said("create a new work item", ['for the organization called "Barry PLC"', 'called "Holiday schedule"'], to=False)
    assert out.startswith(' called "Holiday schedule" for the organization called "Barry PLC"'), out
    assert _settings([("title", "B"), ("assignedTo", "erik@example.com")]) == 'rename it to "B" and assign it to erik@example.com'


def test_a_markup_suffix_is_not_said():
    from forgec.scenario import _say_param

    assert _say_param("comment_html", "Added logs from the server.") == 'saying "Added logs from the server."'


def test_a_question_names_its_field_as_a_person_would():
    from forgec.scenario import _askable_name

    assert _askable_name("pull_count") and _askable_name("number_of_seats") and _askable_name("expectedPaymentDate")
    assert not _askable_name("dest_namespace_replace_count") and not _askable_name("from")


def test_placing_the_order_the_world_never_held_is_no_task(tmp_path):
    """`place_order(cardId)` "Place the order using a saved card": the order is a basket the docs' world never
    holds; a task paying for it with a card alone makes an empty order (review 34: food402, 8 of 8 rejected)."""
    doc = {"tools": [
        _tool("get_saved_cards", "Get the user's saved payment cards.", {}, []),
        _tool("place_order", "Place the order using a saved card.", {"cardId": {"type": "integer", "description": "Card ID from get_saved_cards"}}, ["cardId"]),
    ]}
    out = compile_doc(tmp_path, "food", "tools_list.json", doc, 12)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    assert not any(c["tool"] == "place_order" for t in tasks for c in t["gold_calls"]), [t["instruction"] for t in tasks]


def test_a_span_ends_after_it_starts():
    from forgec.stdlib.values import span_pairs

    pairs = set(span_pairs(("start_date", "target_date", "creation_time", "update_time", "due_date")))
    assert {("start_date", "target_date"), ("start_date", "due_date"), ("creation_time", "update_time")} <= pairs



def test_an_amount_in_minor_units_is_whole():
    """"Price in the smallest currency unit (e.g. cents)": the world's prices are whole numbers of cents (15738), not
    157.38 beside a task that says $15 and sends 1500 (review 34)."""
    st = generate_state({"entities": {"Variant": {"key": "id", "fields": {
        "id": {"type": "str", "doc": "key"}, "price": {"type": "float", "doc": "Price in the smallest currency unit (e.g. cents)"}}}}},
        seed=1, size=6)
    prices = [r["price"] for r in st["entities"]["Variant"].values()]
    assert all(p == int(p) and p >= 100 for p in prices), prices


def test_a_booking_is_where_and_when_its_record_is():
    """Tickets for a film the world shows in New York are not bought "in Berkeley" (review 35); an update's new
    location is a new value, not a contradiction."""
    from types import SimpleNamespace as NS

    from forgec.gate import _elsewhere

    before = {"entities": {"Movie": {"Dune": {"movie_name": "Dune", "location": "New York, NY"}}}}
    buy = NS(doc="Purchase tickets for a movie.")
    assert _elsewhere("BuyMovieTickets", buy, {"movie_name": "Dune", "location": "Berkeley, CA", "number_of_tickets": 2}, before)
    assert not _elsewhere("BuyMovieTickets", buy, {"movie_name": "Dune", "location": "New York, NY"}, before)
    move = NS(doc="Update the location of a movie.")
    assert not _elsewhere("UpdateMovie", move, {"movie_name": "Dune", "location": "Berkeley, CA"}, before)


def test_a_bounds_name_is_no_attribute():
    from forgec.scenario import _askable_name

    assert not _askable_name("to_date") and not _askable_name("from_date") and _askable_name("due_date")
