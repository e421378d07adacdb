"""Rules from blind review 20: the first review on doc sets this project had never seen (4 of 40 accepted).

Four of those doc sets are copied into `corpus/broad` (MIT / Apache-2.0, READMEs there). What each test
asserts is read off the docs themselves, not off forgec's output:

* Mealie's `get_empty_categories` "Get all categories that have no recipes assigned": it lists some, so a
  category is looked up through `get_categories` (review: "cannot show that no such category exists");
* Joplin's tags and notebooks come back with a `title` and are addressed by `tag_name` / `notebook_name`:
  one record has one name, so "my tag called X" names one tag; its `emoji` is a "Single emoji glyph";
* WooCommerce's zone `order` is "Zone order", the zone's position: not a reference to an order;
* Attio's search parameters ("Which date field to filter on", "Type of content to search") shape the
  search; they are no fields of a record (review: "what the date field of the record ... is").
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import BROAD, compile_doc
from forgec.build import CompileOptions, compile_build


def _build(tmp: Path, name: str, n: int = 30) -> Path:
    out = tmp / name
    res = compile_build(CompileOptions(inputs=[BROAD / name], out=out, tasks_per_env=n, seed=0, oracle_check=False))
    assert not [d for d in res.diagnostics if d.is_error], [d.message for d in res.diagnostics if d.is_error][:3]
    return out


def _tasks(out: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((out / "tasks").glob("*.jsonl")) for line in f.read_text().splitlines() if line]


@pytest.fixture(scope="module")
def mealie(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("mealie"), "pypi_mealie_mcp_server")


@pytest.fixture(scope="module")
def joplin(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("joplin"), "pypi_joplin_mcp")


def test_a_lister_of_only_some_records_is_no_lookup(mealie):
    tasks = _tasks(mealie)
    acts = [t for t in tasks if any(c["tool"] in ("update_category", "delete_category", "update_tag", "delete_tag") for c in t["gold_calls"])]
    assert acts, "the env yields category and tag changes"
    for t in acts:
        tools = [c["tool"] for c in t["gold_calls"]]
        assert "get_empty_categories" not in tools and "get_empty_tags" not in tools, (t["instruction"], tools)


def test_one_record_one_name(joplin):
    world = json.loads((joplin / "states" / "pypi_joplin_mcp.json").read_text())["entities"]
    pairs = [(r.get("title"), r.get(f)) for e, recs in world.items() for r in recs.values()
             for f in (f"{e.lower()}_name",) if isinstance(r.get(f), str) and isinstance(r.get("title"), str)]
    assert pairs, "tags and notebooks have both a title and a *_name"
    assert all(a == b for a, b in pairs), [p for p in pairs if p[0] != p[1]][:3]


def test_an_emoji_glyph_is_a_glyph(joplin):
    """"Single emoji glyph to use as the notebook's icon": the world's notebooks and any notebook a task makes hold
    the character ("clap", "white_check_mark" are names)."""
    world = json.loads((joplin / "states" / "pypi_joplin_mcp.json").read_text())["entities"]["Notebook"]
    emojis = [r["emoji"] for r in world.values() if r.get("emoji")]
    emojis += [c["arguments"]["emoji"] for t in _tasks(joplin) for c in t["gold_calls"] if c["arguments"].get("emoji")]
    assert emojis, "some notebook has an emoji"
    assert not [e for e in emojis if re.search(r"[A-Za-z_]", e)], emojis


def test_a_list_no_write_touched_is_not_read_again(joplin):
    """create_note adds a note, not a notebook: the notebooks listed before it still answer "do I have one"."""
    for t in _tasks(joplin):
        tools = [c["tool"] for c in t["gold_calls"]]
        first = tools.index("list_notebooks") if "list_notebooks" in tools else None
        if first is None:
            continue
        between = tools[first + 1:]
        if "list_notebooks" in between:
            writes_between = between[: between.index("list_notebooks")]
            assert any("notebook" in w for w in writes_between), (t["instruction"], tools)


def test_an_attribute_named_like_an_entity_is_no_reference(tmp_path):
    src = (_build(tmp_path, "npm_lockon0927_woocommerce_mcp", 3) / "src" / "npm_lockon0927_woocommerce_mcp" / "env.forge").read_text()
    sig = src.split("tool woo_shipping_zones_update(", 1)[1].split(")", 1)[0]
    assert re.search(r"order: int\?", sig) and "Order" not in sig, sig  # "Zone order": an integer position


def test_search_parameters_are_no_record_fields(tmp_path):
    src = (_build(tmp_path, "npm_attio_mcp", 3) / "src" / "npm_attio_mcp" / "env.forge").read_text()
    entities = re.findall(r"^  entity (\w+) key \w+[^{]*\{(.*?)^  \}", src, re.S | re.M)
    fields = {(e, m) for e, body in entities for m in re.findall(r"^    (\w+):", body, re.M)}
    assert not {f for _, f in fields} & {"date_field", "content_type", "search_type", "match_type"}, sorted(fields)


def test_a_list_of_references_reads_back_as_records(tmp_path):
    """pretalx (AGPL-3.0 spec; blind pool 20) exited 1: `tags_list(event)` read the event's `tags`, a list of
    Tag keys, and returned it as `list[Tag]` ("expected list[Tag]?, found list[int (key of Tag)]?")."""
    out = _build(tmp_path, "openapi_pretalx", 5)
    src = (out / "src" / "openapi_pretalx" / "env.forge").read_text()
    body = src.split("tool tags_list(", 1)[1].split("\n  }", 1)[0]
    # the event's tags as records: read from the event's list of keys, or (since blind pool 6: a nested REST
    # collection `GET /events/{event}/tags/` whose items document their `event`) searched by the event
    assert re.search(r"return Tag where (?:it\.id in event\.tags|it\.event == event\.\w+)", body), body


def test_a_rest_api_is_no_graph_store(tmp_path):
    """Homebox (AGPL-3.0 spec): an item field has a `name` and a `type`, an item has `purchaseFrom`/`soldTo`;
    that made it a knowledge graph ("Field: A node of the graph", `get_v1_currency` returning nodes and
    relations) although its docs never speak of a graph. Its items are keyed records, changed by name."""
    out = _build(tmp_path, "openapi_homebox", 12)
    src = (out / "src" / "openapi_homebox" / "env.forge").read_text()
    assert "A node of the graph" not in src and "relations:" not in src
    texts = [t["instruction"] for t in _tasks(out)]
    assert texts, "the inventory yields tasks"
    # the docs' summaries are "Delete Item", "Update Item", "Create Item": said with the user's record, once
    assert not [x for x in texts if re.search(r"\b(?:delete|update) Item for my item\b|\bcreate Item\b", x)], texts


def test_a_users_records_are_found_through_a_plain_lister(tmp_path):
    """Spring PetClinic (Apache-2.0): a pet names its owner (`ownerId`), `listPets` lists every pet. An owner's
    pet is found by listing the pets and keeping the owner's, not left unreachable (it yielded 0 tasks)."""
    out = _build(tmp_path, "openapi_petclinic", 20)
    world = json.loads((out / "states" / "openapi_petclinic.json").read_text())["entities"]
    for t in _tasks(out):
        calls = t["gold_calls"]
        for i, c in enumerate(calls):
            if c["tool"] in ("updatePet", "deletePet"):
                assert "listPets" in [x["tool"] for x in calls[:i]], [x["tool"] for x in calls]
                pet = world["Pet"][str(c["arguments"]["petId"])]
                who = re.search(r"my (?:owner )?id is (\d+)", t["instruction"])
                assert who is None or str(pet.get("ownerId")) == who.group(1), (t["instruction"], pet)


def test_the_action_chosen_is_the_requests_verb(tmp_path):
    """Redmine (MIT): `manage_issue_watcher` "Add or remove a watcher on a Redmine issue", `action: add|remove`.
    The value chosen is what the user asks for ("remove a watcher"), never "add a watcher ... and the remove action"."""
    out = _build(tmp_path, "pypi_redmine_mcp_server", 40)
    seen = 0
    for t in _tasks(out):
        for c in t["gold_calls"]:
            if c["tool"].startswith("manage_") and "action" in c["arguments"]:  # "Create, update, or delete a ..." too
                seen += 1
                act = c["arguments"]["action"]
                # an update is asked for as the change it makes ("rename my news called X to Y")
                said = rf"\b(?:{act}|rename|change|set|edit)\b" if act == "update" else rf"\b{act}\b"
                assert re.search(said, t["instruction"], re.I) and not re.search(r"\bthe (?:add|remove|create|update) action\b", t["instruction"]), t["instruction"]
    assert seen, "some task manages a watcher or a news item"


def test_a_grouped_record_is_not_named_like_an_entity(tmp_path):
    """QuickBooks (MIT; blind pool 21) exited 1: `edit_vendor_credit`'s fields grouped into a record named
    `VendorCredit`, the name of an entity ("type 'VendorCredit' is declared twice")."""
    src = (_build(tmp_path, "npm_quickbooks_mcp", 3) / "src" / "npm_quickbooks_mcp" / "env.forge").read_text()
    names = re.findall(r"^  (?:record|entity) (\w+)", src, re.M)
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_the_callers_own_record_is_no_list(tmp_path):
    """Zammad (MIT; blind pool 21): `get_current_user` "Get the currently authenticated user." was used to list
    every user (7 rejections); `search_users` lists them. And a ticket is named by its title, never as
    "my ticket whose article subject is ..." (9 rejections): `article_subject` is its first article's."""
    out = _build(tmp_path, "pypi_zammad_mcp_server", 30)
    tasks = _tasks(out)
    assert tasks
    for t in tasks:
        tools = [c["tool"] for c in t["gold_calls"]]
        assert "get_current_user" not in tools or not any(c["tool"] in ("update_user", "delete_user") for c in t["gold_calls"]), tools
        assert "article subject" not in t["instruction"], t["instruction"]


def test_a_person_named_by_email_is_one_the_system_knows(tmp_path):
    """Zammad's `update_ticket(owner)` "New owner (email or login)": the new owner is a user of the world, said by
    their address (blind review 21: 8 tickets handed to an address no user has, so to nobody)."""
    out = _build(tmp_path, "pypi_zammad_mcp_server", 30)
    world = json.loads((out / "states" / "pypi_zammad_mcp_server.json").read_text())["entities"]
    emails = {r.get("email") for coll in world.values() for r in coll.values() if isinstance(r, dict)}
    owners = [c["arguments"]["owner"] for t in _tasks(out) for c in t["gold_calls"] if "owner" in c["arguments"]]
    assert owners and all(o in emails for o in owners), owners


# --------------------------------------------------------------------------- review 21 and the names a domain gives

TOPIC_WORDS = re.compile(r"quarterly budget|team offsite|website redesign|onboarding checklist|customer feedback|"
                         r"user interviews|billing update|benefits enrollment|volunteer roster|server upgrade", re.I)


def test_names_come_from_the_docs_examples(mealie):
    """Mealie's `create_category(name)` "Name of the category (e.g., "Breakfast", "Desserts", "Vegetarian")" and
    `create_tag(name)` "(e.g., "Quick", "Healthy", "Family Favorite")": the world's categories and tags are named
    from those (blind review 20: a recipe category "User interviews"), leaving one for a create to name."""
    world = json.loads((mealie / "states" / "pypi_mealie_mcp_server.json").read_text())["entities"]
    cats = {r["name"] for r in world["Category"].values()}
    tags = {r["name"] for r in world["Tag"].values()}
    assert cats and cats < {"Breakfast", "Desserts", "Vegetarian"}, cats
    assert tags and tags < {"Quick", "Healthy", "Family Favorite"}, tags


def test_a_thing_in_the_world_is_not_named_by_a_topic(mealie):
    """A recipe, a shopping list: nothing in Mealie's docs says what one is called, and a work topic is no name for
    one (review 20: a recipe "Customer feedback", a shopping list "Billing update"). Such records are not named, so
    no task names them; the docs' own examples still are."""
    tasks = _tasks(mealie)
    assert tasks
    for t in tasks:
        assert not TOPIC_WORDS.search(t["instruction"]), t["instruction"]
        assert not re.search(r"\b(?:Recipe|Shopping list) \d+\b", t["instruction"]), t["instruction"]


@pytest.fixture(scope="module")
def zammad(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("zammad"), "pypi_zammad_mcp_server", 40)


def test_a_person_is_called_by_their_whole_name(zammad):
    """Zammad's users have `firstname` and `lastname` (one word each): they hold a person's names, and a user is
    called by both ("my user called Marcus Cummings"), never by a topic or by their organization (review 21)."""
    world = json.loads((zammad / "states" / "pypi_zammad_mcp_server.json").read_text())["entities"]
    users = [r for r in world["User"].values() if r.get("firstname") and r.get("lastname")]
    assert len(users) > 5 and all(r["firstname"].isalpha() and r["firstname"][0].isupper() for r in users), [r["firstname"] for r in users][:5]
    full = {f"{r['firstname']} {r['lastname']}" for r in users}
    named = [m for t in _tasks(zammad) for m in re.findall(r'my user called "([^"]+)"', t["instruction"])]
    assert named and all(n in full for n in named), named
    assert not any(re.search(r"my user (?:with the|whose organization)", t["instruction"]) for t in _tasks(zammad))


def test_an_article_on_a_ticket_is_about_that_ticket(zammad):
    """`create_article(ticket_id, subject, ...)`: the article is a reply on the ticket, "Re: <its title>", not another
    problem's title (review 21: "Mobile app crashes on start" added to "API requests fail with 500")."""
    world = json.loads((zammad / "states" / "pypi_zammad_mcp_server.json").read_text())["entities"]["Ticket"]
    seen = 0
    for t in _tasks(zammad):
        for c in t["gold_calls"]:
            if c["tool"] == "create_article" and "subject" in c["arguments"]:
                seen += 1
                title = world[str(c["arguments"]["ticket_id"])]["title"]
                assert c["arguments"]["subject"] == f"Re: {title}", (c["arguments"], title)
    assert seen


DERIVED = {"tools": [
    {"name": "list_bookmarks", "description": "List all bookmarks.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "create_bookmark", "description": "Create a bookmark.", "inputSchema": {"type": "object", "required": ["url", "title"], "properties": {
        "url": {"type": "string", "description": "URL of the page"}, "title": {"type": "string", "description": "Title of the bookmark"},
        "tag_ids": {"type": "array", "items": {"type": "integer"}, "description": "Tags of the bookmark"}}}},
    {"name": "list_tags", "description": "List all tags.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "update_tag", "description": "Update a tag.", "inputSchema": {"type": "object", "required": ["tag_id"], "properties": {
        "tag_id": {"type": "integer", "description": "ID of the tag"}, "name": {"type": "string", "description": "Name of the tag"},
        "bookmark_count": {"type": "integer", "description": "Number of bookmarks with this tag"}}}},
    {"name": "create_account", "description": "Create an account.", "inputSchema": {"type": "object", "properties": {
        "username": {"type": "string", "description": "Username"}, "password": {"type": "string", "description": "Password"}}}},
]}


def test_a_count_of_other_records_is_not_set_and_a_create_says_something(tmp_path):
    """Shiori's tag `bookmark_count` "Number of bookmarks with this tag" is kept by the system (review 21: "set its
    bookmark count to 4"); "create an account." with nothing in it is no request."""
    out = compile_doc(tmp_path, "bm", "tools.json", DERIVED, 30)
    tasks = _tasks(out)
    assert any(c["tool"] == "update_tag" for t in tasks for c in t["gold_calls"]), "tags are still renamed"
    for t in tasks:
        for c in t["gold_calls"]:
            assert "bookmark_count" not in c["arguments"], t["instruction"]
            assert c["tool"] != "create_account" or c["arguments"], t["instruction"]


# --------------------------------------------------------------------------- review 22 (a third pool, never seen)

def test_a_record_is_picked_by_what_a_person_compares():
    """"the device with the lowest volume percent", "the incident with the highest incident number": no person
    picks a record so (review 22, 25 of 40 rejects); the cheapest, the one with the most bags, the newest are."""
    import random
    from forgec.scenario import refer

    devices = [{"name": "Kitchen", "volume_percent": v, "max_parallel_tasks": 9 - v} for v in (10, 40, 70)]
    for seed in range(40):
        ref = refer(devices, 0, ["volume_percent", "max_parallel_tasks"], random.Random(seed))
        assert ref is None or not ref.op, ref
    bookings = [{"total_price": p, "bags": b} for p, b in ((120.5, 1), (340.25, 3), (99.99, 2))]
    ops = {refer(bookings, 1, ["total_price", "bags"], random.Random(seed)).by for seed in range(40)
           if refer(bookings, 1, ["total_price", "bags"], random.Random(seed)).op}
    assert ops and ops <= {"total_price", "bags"}


def test_docs_values_after_a_label_and_urns_as_shown():
    """Spotify's "Repeat mode: "track", "context", or "off"." lists the values (a device's `state` was filled with
    "in progress"); "Spotify URI ... E.g. "spotify:track:xxx"" makes URIs of that shape, not web URLs."""
    import random
    from forgec.gate import documented_values
    from forgec.stdlib.values import said_value, urn_value

    assert documented_values('Repeat mode: "track", "context", or "off".') == ["track", "context", "off"]
    assert documented_values('Fields to return: "id", "name"', frozenset({"id", "name"})) == []
    doc = 'Spotify URI of the item to add. E.g. "spotify:track:xxx".'
    v = said_value("uri", doc, random.Random(3))
    assert re.fullmatch(r"spotify:track:[A-Za-z0-9]{22}", v) and re.fullmatch(r"spotify:track:[A-Za-z0-9]{22}", urn_value(doc, random.Random(3)))
    assert urn_value('Home page, e.g. "https://example.com/x"', random.Random(1)) is None


def test_a_summary_saying_its_place_twice_is_garbled():
    """Semaphore's "Remove user from project" realized as "remove user from project from my project called X"
    (review 22) is broken English: the gate refuses it; one place said once passes."""
    from types import SimpleNamespace
    from forgec.gate import check_repeated_phrase

    bad = SimpleNamespace(instruction='Please remove user from project from my project called "Atlas".')
    bad2 = SimpleNamespace(instruction='I want to link a new user to project to my project called "Atlas".')
    good = SimpleNamespace(instruction='Please remove Tara Lewis from my project called "Atlas".')
    assert check_repeated_phrase(bad, None) == "garbled" and check_repeated_phrase(bad2, None) == "garbled"
    assert check_repeated_phrase(good, None) is None


TEAMS = {"tools": [
    {"name": "list_teams", "description": "List teams.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "list_users", "description": "List users.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "delete_team", "description": "Delete a team.", "inputSchema": {"type": "object", "required": ["team_id"], "properties": {
        "team_id": {"type": "string", "description": "The ID of the team to delete"}}}},
    {"name": "remove_team_member", "description": "Remove a user from a team.", "inputSchema": {"type": "object", "required": ["team_id", "user_id"],
     "properties": {"team_id": {"type": "string", "description": "The ID of the team to remove the user from"},
                    "user_id": {"type": "string", "description": "The ID of the user to remove"}}}},
]}


def test_removing_a_member_deletes_no_team(tmp_path):
    """PagerDuty's `remove_team_member` "Remove a user from a team": the user leaves the team; the team stays
    (review 22: the gold deleted the whole team). `delete_team` still deletes one."""
    out = compile_doc(tmp_path, "teams", "tools.json", TEAMS, 5)
    src = (out / "src" / "teams" / "env.forge").read_text()
    body = lambda name: src.split(f"tool {name}(", 1)[1].split("\n  }\n", 1)[0]
    assert "delete team_id" in body("delete_team")
    assert "delete team_id" not in body("remove_team_member"), body("remove_team_member")


def _ocs(data: dict) -> dict:
    return {"type": "object", "properties": {"ocs": {"type": "object", "properties": {
        "meta": {"type": "object", "properties": {"status": {"type": "string"}, "statuscode": {"type": "integer"}}}, "data": data}}}}


OCS = {"openapi": "3.0.3", "info": {"title": "collectives", "version": "1"}, "components": {"schemas": {"Collective": {
    "type": "object", "required": ["id", "name"], "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}},
    "paths": {"/api/v{apiVersion}/collectives": {"parameters": [
        {"name": "apiVersion", "in": "path", "required": True, "schema": {"type": "string", "enum": ["1.0"]}},
        {"name": "OCS-APIRequest", "in": "header", "required": True, "description": "Required to be true for the API request to pass",
         "schema": {"type": "boolean", "default": True}}],
        "get": {"operationId": "collective-index", "summary": "Get collectives", "responses": {"200": {"description": "ok", "content": {
            "application/json": {"schema": _ocs({"type": "object", "properties": {"collectives": {"type": "array", "items": {"$ref": "#/components/schemas/Collective"}}}})}}}}},
        "post": {"operationId": "collective-create", "summary": "Create a new collective", "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "required": ["name"], "properties": {"name": {"type": "string", "description": "Name of the collective"}}}}}},
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": _ocs({"type": "object", "properties": {
                "collective": {"$ref": "#/components/schemas/Collective"}}})}}}}}}}}


def test_an_ocs_envelope_and_its_plumbing_are_no_records(tmp_path):
    """Nextcloud's OCS API (`unseen3`'s Collectives, never seen before review 22): `collective-index` "Get collectives"
    answers `{ocs: {meta, data: {collectives: [...]}}}` and takes `apiVersion: "1.0"` and `OCS-APIRequest` "Required to
    be true". It lists the collectives: the envelope is no record, the resource-then-action name is a list, and the two
    parameters that carry no choice are no fields to filter on (the env had logged the call and yielded no task)."""
    out = compile_doc(tmp_path, "ocs", "openapi.json", OCS, 5)
    src = (out / "src" / "ocs" / "env.forge").read_text()
    tool = src.split("tool collective_index(", 1)[1].split("\n  }\n", 1)[0]
    assert "-> list[Collective]" in tool and "ActionLog" not in tool and "apiVersion ==" not in tool, tool


def test_an_output_format_is_no_field():
    """CookUnity's `response_format: markdown|json` "Output format" shapes the answer (review 23 pool): no record holds it."""
    from forgec import ir
    from forgec.synth.schema import is_modifier

    fmt = ir.Param(name="response_format", type=ir.Type(kind="enum", values=("markdown", "json")), description="Output format")
    status = ir.Param(name="status", type=ir.Type(kind="enum", values=("open", "closed")), description="Status")
    assert is_modifier(fmt) and not is_modifier(status)


def test_a_stripe_style_list_and_counts_of_things(tmp_path):
    """Lob's lists answer `{data: [...], object: "list", next_url, previous_url, count, total_count}` (review 23):
    none of those is a field of a check, so no task picks "the check with the lowest count"; and `total_mailpieces`
    counts mail pieces, it is no amount of money ("more than $150")."""
    from forgec.scenario import is_money

    assert not is_money("total_mailpieces") and is_money("total_price") and is_money("total_fees") and is_money("amount")
    check = {"type": "object", "properties": {"id": {"type": "string"}, "memo": {"type": "string"}, "amount": {"type": "number"}}}
    one = {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Check"}}}}}
    spec = {"openapi": "3.0.3", "info": {"title": "checks", "version": "1"}, "components": {"schemas": {"Check": check}}, "paths": {
        "/checks": {"get": {"operationId": "checks_list", "summary": "List checks", "responses": {"200": {"description": "ok", "content": {
            "application/json": {"schema": {"type": "object", "properties": {
                "object": {"type": "string"}, "next_url": {"type": "string"}, "previous_url": {"type": "string"}, "count": {"type": "integer"},
                "total_count": {"type": "integer"}, "data": {"type": "array", "items": {"$ref": "#/components/schemas/Check"}}}}}}}}}},
        "/checks/{chk_id}": {"parameters": [{"name": "chk_id", "in": "path", "required": True, "schema": {"type": "string"}}],
                             "get": {"operationId": "check_retrieve", "summary": "Retrieve a check", "responses": one},
                             "delete": {"operationId": "check_cancel", "summary": "Cancel a check", "responses": one}}}}
    out = compile_doc(tmp_path, "checks", "openapi.json", spec, 3)
    src = (out / "src" / "checks" / "env.forge").read_text()
    ent = src.split("entity Check", 1)[1].split("\n  }\n", 1)[0]
    assert "amount" in ent and not re.search(r"\n\s+(count|total_count|next_url|previous_url):", ent), ent
