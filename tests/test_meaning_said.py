"""What a person can say about a record, on shapes from real docs nobody here tuned on: a record the
docs give no field of still has a name (Slack's `list_channels`), a string or number of unknown meaning
is never said, a problem record (an incident, an issue) is titled by what went wrong, and the words
around a name or a note read as English. Expected values are hand-written."""

from __future__ import annotations

import random

from forgec import ir
from forgec.lang import ast as A
from forgec.scenario import _join_said, _possessive_pattern
from forgec.stdlib.values import PROBLEMS, TOPICS, generate_state, is_problem, number_meaning_known, said_value, topic_filler
from forgec.synth.schema import infer_schema

S = ir.Type(kind="string")


def _slack_like() -> ir.Environment:
    return ir.Environment(name="chat", tools=(
        ir.Tool(name="list_channels", description="List public channels in the workspace.",
                params=(ir.Param(name="limit", type=ir.Type(kind="integer")),)),
        ir.Tool(name="post_message", description="Post a new message to a channel.",
                params=(ir.Param(name="channel_id", type=S, required=True), ir.Param(name="text", type=S, required=True))),
    ))


def test_a_record_the_docs_give_no_field_of_gets_a_name():
    s = infer_schema(_slack_like())
    ch = s.entities["Channel"]
    assert list(ch.fields) == ["channel_id", "name"]
    assert isinstance(ch.fields["name"].type, A.OptionalType)
    assert "channel" in ch.fields["name"].doc


def test_a_record_told_by_its_text_or_a_named_key_gets_no_invented_name():
    env = ir.Environment(name="notes", tools=(
        ir.Tool(name="list_messages", description="List messages."),
        ir.Tool(name="create_message", description="Create a message.", params=(ir.Param(name="text", type=S, required=True),)),
        ir.Tool(name="read_file", description="Read a file.", params=(ir.Param(name="path", type=S, required=True),)),
    ))
    s = infer_schema(env)
    assert "name" not in s.entities["Message"].fields  # a message is told by what it says
    assert all("name" not in e.fields for e in s.entities.values() if e.key == "path")


def test_topic_filler_is_a_field_of_unknown_meaning_never_a_name():
    fill = ["mobile app beta", "Press release", "board meeting 2"]
    assert topic_filler("env", fill)
    assert topic_filler("region", fill[:1])
    assert not topic_filler("name", fill)  # a project called "Press release" is named so
    assert not topic_filler("title", fill)
    assert not topic_filler("env", ["production", "staging"])  # the user's own data
    assert not topic_filler("env", [])
    assert not topic_filler("env", ["press release", 3])


def test_numbers_say_their_meaning_by_name_or_documented_range():
    assert number_meaning_known("priority")
    assert number_meaning_known("total_price", kind="float")
    assert number_meaning_known("retries")
    assert number_meaning_known("geoDistance", "Radius in km (5-200)", kind="float")
    assert not number_meaning_known("account")
    assert not number_meaning_known("geoDistance", kind="float")
    assert not number_meaning_known("assign_title_from")


def test_problem_records_are_titled_by_what_went_wrong():
    assert is_problem("Incident") and is_problem("SupportTicket") and is_problem("issues")
    assert not is_problem("Project") and not is_problem("Channel") and not is_problem(None)
    schema = {"entities": {"Incident": {"key": "incident_id", "fields": {"incident_id": {"type": "str"}, "title": {"type": "str"}}},
                           "Project": {"key": "project_id", "fields": {"project_id": {"type": "str"}, "title": {"type": "str"}}}}}
    w = generate_state(schema, seed=3, size=40)["entities"]
    titles = [r["title"] for r in w["Incident"].values()]
    assert len(set(titles)) == len(titles) == 40  # each used once, then said where it happens
    assert all(any(t.startswith(p) for p in PROBLEMS) for t in titles)
    assert all(r["title"].lower().removesuffix(" 2025") in {t.lower() for t in TOPICS} or " " in r["title"] for r in w["Project"].values())
    rng = random.Random(0)
    assert said_value("title", "", rng, noun="Incident") in PROBLEMS
    assert said_value("body", "", rng, about="Checkout times out", noun="Issue").endswith(".")
    assert "checkout times out" not in said_value("body", "", rng, about="Checkout times out", noun="Issue").lower()


def test_a_name_and_a_note_are_said_without_slot_words():
    assert _join_said("create a new tag", ['called "Q3"']) == ' called "Q3"'
    assert _join_said("create a new product", ['called "Lamp"', "the physical type"], to=False) == ' called "Lamp" with the physical type'
    assert _join_said("add a comment", ['saying "Done."', "priority 2"], to=False) == ' with priority 2, saying "Done."'
    m = _possessive_pattern("incident").search("add a note to an existing incident's timeline")
    assert m and m.group(2) == "timeline"
    assert _possessive_pattern("incident").search("add a note to an incident") is None


def test_a_persons_full_name_is_the_person_of_their_key_and_email():
    """Found in review: "I'm Erika Green; my user id is krystal_rios_9584" when the doc said "full name"."""
    schema = {"entities": {"User": {"key": "user_id", "fields": {
        "user_id": {"type": "str"}, "name": {"type": "str", "doc": "The user's full name."}, "email": {"type": "str"}}}}}
    users = generate_state(schema, seed=11, size=20)["entities"]["User"]
    for k, u in users.items():
        first, last = u["name"].lower().split(" ", 1)
        assert k.startswith(f"{first}_{last.replace(' ', '_')}_"), (k, u)
        assert u["email"].startswith(f"{first}.{last.replace(' ', '')}"), (k, u)


def test_session_params_are_the_callers_account_not_a_field():
    from forgec.synth.schema import session_params
    S_ = ir.Type(kind="string")
    acct = ir.Param(name="user_google_email", type=S_, required=True)
    tools = tuple(ir.Tool(name=f"{v}_doc", description=f"{v.title()} a document.",
                          params=(acct, ir.Param(name="doc_id", type=S_, required=True)))
                  for v in ("get", "update", "delete", "share", "copy"))
    env = ir.Environment(name="ws", tools=tools + (ir.Tool(name="list_docs", description="List documents.", params=(acct,)),))
    assert session_params(env) == {"user_google_email"}
    s = infer_schema(env)
    assert all("user_google_email" not in e.fields for e in s.entities.values())
    # a natural key on every tool (`path`, `name`) is a record's key, not an account
    env2 = ir.Environment(name="fs", tools=tuple(ir.Tool(name=f"{v}_file", params=(ir.Param(name="path", type=S_, required=True),))
                                                 for v in ("read", "write", "delete", "move")))
    assert session_params(env2) == frozenset()


def test_a_parameter_called_state_does_not_hide_a_session_model():
    """pypi_grubhub_mcp failed to build: `add_address(state)` shadowed the session's `state` block."""
    from forgec import lang
    from forgec.diagnostics import has_errors
    from forgec.synth import synthesize

    S_ = ir.Type(kind="string")
    env = ir.Environment(name="food", tools=(
        ir.Tool(name="login", description="Log in with email and password.",
                params=(ir.Param(name="email", type=S_, required=True), ir.Param(name="password", type=S_, required=True))),
        ir.Tool(name="logout", description="Log out of the current session."),
        ir.Tool(name="get_session_info", description="Get current authentication state and session info."),
        ir.Tool(name="add_address", description="Add a new delivery address. Requires authentication.",
                params=tuple(ir.Param(name=n, type=S_, required=True) for n in ("street_address", "city", "state", "zip_code"))),
    ))
    decl, diags = synthesize(env)
    assert not has_errors(diags)
    text = lang.format(A.Module(file="food.forge", items=(decl,)))
    module, pd = lang.parse(text, "food.forge")
    assert not has_errors(pd + lang.check([module]))
    add = next(t for t in decl.tools if t.name == "add_address")
    assert "state" not in [p.name for p in add.params]  # renamed, so `state.x` in the body is the session's state


def test_options_listed_in_the_tools_args_section_are_the_fields_values():
    """pypi_chroma_mcp: a param whose schema gives only a title, documented in the tool's Args section
    with "Options: 'default', 'cohere', ..." (the world held "API documentation" as an embedding function)."""
    from forgec.frontends import _param_docs_from_description
    from forgec.gate import documented_values

    t = ir.Tool(name="create_collection", description="Create a collection.\n    Args:\n        name: Name of the collection\n"
                "        embedding_function_name: Name of the embedding function to use. Options: 'default', 'cohere', 'openai'\n",
                params=(ir.Param(name="name", type=S, required=True),
                        ir.Param(name="embedding_function_name", type=S, description="Embedding Function Name")))
    p = _param_docs_from_description(t).params[1]
    assert documented_values(p.description) == ["default", "cohere", "openai"]
    assert documented_values("Optional metadata dict to add") == []


def test_a_new_record_inside_a_named_one_and_camel_case_values():
    """Blind review round 10: "create the collection called X in my library called Y" had the roles backwards."""
    from forgec.scenario import _spoken

    assert _join_said("create a new collection", ['called "Q3"', 'inside the collection called "Reports"'], to=False) \
        == ' called "Q3" inside the collection called "Reports"'
    assert _spoken("byDesign") == "by design" and _spoken("IN_PROGRESS") == "in progress" and _spoken("Done") == "done" and _spoken("On Leave") == "on leave" and _spoken("API v2") == "API v2"


def test_counts_and_ids_typed_number_are_whole():
    """Blind review round 10: `num_nodes: 515.88`, `pullRequestId: 489.38` (OpenAPI types them `number`)."""
    import random as _r
    from forgec.stdlib.values import generate_value

    rng = _r.Random(0)
    for name in ("num_nodes", "pullRequestId", "threadId", "number_of_seats"):
        for _ in range(5):
            v = generate_value({"type": "float"}, name, rng)
            assert v == int(v), (name, v)
    prices = [generate_value({"type": "float"}, "total_price", rng) for _ in range(5)]
    assert any(v != int(v) for v in prices), prices  # money keeps its cents


def test_the_owner_owns_what_the_writes_change_not_what_they_name():
    """Review 11: "the owner of the cards, cities and districts" (an order names a city; nobody owns
    one). The persona's records are those a write inserts, sets or deletes, read from its body."""
    from forgec import lang
    from forgec.scenario import _changed_entities

    src = '''
env shop {
  entity City key city_id { city_id: str  name: str }
  entity Order key order_id { order_id: str  city: City  status: enum("open", "placed") }
  tool place_order(city: City "Where to deliver.") -> Order "Place an order."
  {
    let created = insert Order { order_id: fresh_id(Order), city: city.city_id, status: "open" }
    return created
  }
  tool close_order(order_id: Order "The order.") -> Order "Close an order."
  {
    let o = Order[order_id.order_id]
    set o.status = "placed"
    return o
  }
}
'''
    m, d = lang.parse(src, "shop.forge")
    env = m.envs[0]
    decl = {e.name: e for e in env.entities}
    tools = {t.name: t for t in env.tools}
    assert _changed_entities(tools["place_order"], decl) == ["Order"]
    assert _changed_entities(tools["close_order"], decl) == ["Order"]


def test_articles_and_spans_by_rule():
    """"a epic" was said (review 11); a span's two ends are found by their words, whatever the record."""
    from forgec.scenario import _a
    from forgec.stdlib.values import span_pairs

    assert [_a(w) for w in ("epic", "user", "hour", "label")] == ["an epic", "a user", "an hour", "a label"]
    assert list(span_pairs(tuple({"start_date": 1, "end_date": 2, "min_price": 1, "max_price": 3, "from_user_id": "a", "to_user_id": "b", "seats": 2}))) == [
        ("start_date", "end_date"), ("min_price", "max_price"), ("from_user_id", "to_user_id")]


def test_two_dates_of_one_record_are_told_apart():
    """Review 13: "my working plan exception on 2024-08-06 on 2024-07-16". A span's ends say which end
    they are; a lone date stays "on"."""
    from forgec.scenario import qualifier

    assert qualifier("start_date", "2024-07-16") == "starting 2024-07-16"
    assert qualifier("endDate", "2024-08-06") == "ending 2024-08-06"
    assert qualifier("date", "2024-08-06") == "on 2024-08-06"
    assert qualifier("created_at", "2024-08-06") == "from 2024-08-06"
