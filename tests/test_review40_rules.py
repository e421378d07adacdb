"""Rules from review 40, drawn from doc sets this project had not opened (60 drawn, 4 gave tasks): each test is a
hand-written doc in the style of the set that showed the gap, checked against what a person would expect."""

from __future__ import annotations

import random
import re

from conftest import compile_doc

from forgec.stdlib.values import SET_UP, said_value


def test_a_record_set_up_for_a_purpose_is_named_for_it():
    """Instana's `create_website(name)` "The name of the new website to be configured": no topic names a website,
    so every create of one yielded nothing. A record the docs say is set up is named for what it is for
    ("Staging website"); a recipe, which no doc sets up, still gets no made-up name."""
    rng = random.Random(7)
    doc = "The name of the new website to be configured."
    assert SET_UP.search(doc)
    names = {said_value("name", doc, rng, noun="Website", topical=False, configured=True) for _ in range(20)}
    assert all(re.fullmatch(r"[A-Z][a-z]+ website", n) for n in names), names
    assert len(names) > 2
    taken = frozenset(n.lower() for n in names)
    assert said_value("name", doc, rng, noun="Website", topical=False, configured=True, taken=taken) not in names
    assert said_value("name", "The recipe's name.", rng, noun="Recipe", topical=False, configured=False) is None
    assert not SET_UP.search("The recipe's name.")
    person = said_value("name", doc, rng, noun="User", topical=False, configured=True)
    assert person is None or not person.endswith(" user"), person


_JSON = "application/json"
_SUB = {"type": "object", "properties": {"id": {"type": "integer"}, "email": {"type": "string"}, "name": {"type": "string"},
                                          "status": {"type": "string", "enum": ["enabled", "blocklisted"]}}}
PAGED = {"openapi": "3.0.0", "info": {"title": "Newsletter", "version": "1"}, "paths": {
    "/subscribers": {"get": {"operationId": "getSubscribers", "summary": "returns all subscribers.",
                             "parameters": [{"in": "query", "name": "page", "schema": {"type": "integer"}}],
                             "responses": {"200": {"description": "ok", "content": {_JSON: {"schema": {"type": "object", "properties": {
                                 "data": {"type": "object", "properties": {
                                     "results": {"type": "array", "items": {"$ref": "#/components/schemas/Subscriber"}},
                                     "query": {"type": "string"}, "total": {"type": "integer"}, "per_page": {"type": "integer"},
                                     "page": {"type": "integer"}}}}}}}}}}},
    "/subscribers/{id}": {"get": {"operationId": "getSubscriberById", "summary": "returns a subscriber.",
                                  "parameters": [{"in": "path", "name": "id", "required": True, "schema": {"type": "integer"}}],
                                  "responses": {"200": {"description": "ok", "content": {_JSON: {"schema": {"type": "object", "properties": {
                                      "data": {"$ref": "#/components/schemas/Subscriber"}}}}}}}}}},
    "components": {"schemas": {"Subscriber": _SUB}}}


def test_a_page_that_echoes_its_query_is_no_record(tmp_path):
    """listmonk's `{data: {results: [...], query, total, per_page, page}}`: the page around the subscribers, whose
    `query` echoes the search. Read as a record it gave every subscriber a `total`, a `page` and a `query`."""
    out = compile_doc(tmp_path, "newsletter", "openapi.json", PAGED, 4)
    env = next((out / "src").rglob("env.forge")).read_text()
    block = re.search(r"entity Subscriber\b[^{]*\{(.*?)\n  \}", env, re.S)
    assert block, env[:1500]
    fields = set(re.findall(r"^\s*(\w+):", block.group(1), re.M))
    assert {"email", "name", "status"} <= fields, fields
    assert not fields & {"results", "query", "total", "per_page", "page"}, fields


def _tool(name: str, desc: str, props: dict, required: list[str], out: dict | None = None) -> dict:
    t = {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props, "required": required}}
    return {**t, "outputSchema": out} if out else t


NOTES = {"tools": [  # a notes server whose only lookup is a text search (Notion's, Zotero's, Paperless's style)
    _tool("search_notes", "Search notes by text. Returns the notes whose title or body matches.",
          {"query": {"type": "string", "description": "Search query"}}, ["query"],
          {"type": "object", "properties": {"notes": {"type": "array", "items": {"type": "object", "properties": {
              "id": {"type": "string"}, "title": {"type": "string", "description": "The note's title"},
              "body": {"type": "string", "description": "The note's text"}, "pinned": {"type": "boolean"}}}}}}),
    _tool("update_note", "Update a note's title or text.",
          {"note_id": {"type": "string", "description": "ID of the note"}, "title": {"type": "string", "description": "New title"},
           "body": {"type": "string", "description": "New text"}}, ["note_id"]),
    _tool("delete_note", "Delete a note.", {"note_id": {"type": "string", "description": "ID of the note"}}, ["note_id"]),
]}


def _tasks(out) -> list[dict]:
    import json
    return [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]


def test_a_record_only_a_text_search_finds_is_searched_for_by_its_title(tmp_path):
    """Where the only lookup is `search_notes(query)`, 31 doc sets in the broad corpus, no task could find a record
    ("no-lookup"). The user names the note by its title, the agent searches for that title, and the note acted on
    is the one searched for, never another the search happened to return."""
    import json
    out = compile_doc(tmp_path, "notes", "tools_list.json", NOTES, 12)
    world = json.loads(next((out / "states").glob("*.json")).read_text())
    notes = next(v for k, v in world["entities"].items() if k.lower().startswith("note"))
    tasks = _tasks(out)
    assert len(tasks) >= 6, len(tasks)
    for t in tasks:
        calls = t["gold_calls"]
        for i, c in enumerate(calls):
            if c["tool"] not in ("update_note", "delete_note"):
                continue
            searched = [x["arguments"]["query"] for x in calls[:i] if x["tool"] == "search_notes"]
            assert notes[c["arguments"]["note_id"]]["title"] in searched, (t["instruction"], calls)
        for x in calls:
            if x["tool"] == "search_notes":
                assert f'"{x["arguments"]["query"]}"' in t["instruction"], (t["instruction"], x)
    said = [t["instruction"] for t in tasks if any(c["tool"] == "update_note" for c in t["gold_calls"])]
    assert not [s for s in said if re.search(r'called "[^"]*" or text', s)], said  # "the title or text of my note called X"


TODO = {"tools": [  # Todoist's MCP server: every write takes a batch of records, `items: [...]`
    _tool("get_projects_list", "Get all projects from Todoist", {}, []),
    _tool("create_projects", "Create new projects in Todoist",
          {"items": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
              "name": {"type": "string"}, "color": {"type": "string"}, "view_style": {"type": "string", "enum": ["list", "board"]}}}}},
          ["items"]),
    _tool("update_projects", "Update projects in Todoist\nEither 'id' or the 'name' to identify the target.",
          {"items": {"type": "array", "items": {"type": "object", "properties": {
              "id": {"type": "string", "description": "ID of the project to update (preferred over name)"},
              "name": {"type": "string", "description": "Name of the project to update"},
              "color": {"type": "string"}, "view_style": {"type": "string", "enum": ["list", "board"]}}}}}, ["items"]),
    _tool("delete_projects", "Delete projects from Todoist\nEither 'id' or the 'name' to identify the target.",
          {"items": {"type": "array", "items": {"type": "object", "properties": {
              "id": {"type": "string", "description": "ID of the project to delete (preferred over name)"},
              "name": {"type": "string", "description": "Name of the project to delete"}}}}}, ["items"]),
    _tool("create_sections", "Create new sections in Todoist",
          {"items": {"type": "array", "items": {"type": "object", "required": ["name", "project_id"], "properties": {
              "name": {"type": "string"}, "project_id": {"type": "string"}}}}}, ["items"]),
]}


def test_a_batch_create_makes_one_record_per_item(tmp_path):
    """`create_projects(items: [{name, color}])`: before, the env inserted one project holding none of the items'
    fields and every tool's items were merged into one `Item` record, so Todoist yielded no task. Now each item is a
    new project with its fields (checked by running the env on two items), the items' shapes stay apart, and a task
    asks for "a new project called X" (one item, said in the singular), a section going in a project that exists."""
    import json

    from forgec.codegen import load_env_module
    out = compile_doc(tmp_path, "todo", "tools_list.json", TODO, 12)
    env_src = next((out / "src").rglob("env.forge")).read_text()
    rec = re.search(r"tool create_projects\(items: list\[(\w+)\]", env_src).group(1)
    fields = re.search(rf"record {rec} \{{(.*?)\n  \}}", env_src, re.S).group(1)
    assert re.search(r"^\s*name: str$", fields, re.M) and "project_id" not in fields, fields  # its own shape, name required
    mod = load_env_module(next((out / "envs").rglob("env.py")))
    world = json.loads(next((out / "states").glob("*.json")).read_text())
    env = mod.Env()
    env.reset(state=world) if "state" in env.reset.__code__.co_varnames else env.reset(world)
    before = set(env.state["entities"]["Project"])
    got = env.step("create_projects", {"items": [{"name": "Garden", "color": "green"}, {"name": "Taxes"}]})
    made = {k: r for k, r in env.state["entities"]["Project"].items() if k not in before}
    assert sorted(r["name"] for r in made.values()) == ["Garden", "Taxes"], made
    assert next(r for r in made.values() if r["name"] == "Garden")["color"] == "green"
    assert sorted(r["name"] for r in got) == ["Garden", "Taxes"], got
    tasks = _tasks(out)
    projects = world["entities"]["Project"]
    for t in tasks:
        for c in t["gold_calls"]:
            if c["tool"] in ("create_projects", "create_sections"):
                assert len(c["arguments"]["items"]) == 1, c
                item = c["arguments"]["items"][0]
                assert f'called "{item["name"]}"' in t["instruction"], t["instruction"]
                assert not re.search(r"\b(?:a|an) new \w+s called", t["instruction"]), t["instruction"]
            if c["tool"] == "create_sections":
                assert c["arguments"]["items"][0]["project_id"] in projects, c
    # a project made by name alone is a dictated create (rubric 3); a section needs its project found first
    assert any(c["tool"] == "create_sections" for t in tasks for c in t["gold_calls"]), [t["instruction"] for t in tasks]


def test_a_batch_update_or_delete_acts_on_the_records_its_items_name(tmp_path):
    """`update_projects(items: [{id, name, color}])` ("Either 'id' or the 'name' to identify the target"): each
    item's id names a project, its other fields change it, and its `name` ("Name of the project to update") only
    names it again, so it never renames; `delete_projects(items: [{id}])` deletes each. Before, both only logged
    the call. Checked by running the env, and on the tasks: the id sent is the project the user names."""
    import json

    from forgec.codegen import load_env_module
    # with "Either 'id' or the 'name'" the list call is optional, so those tasks are `named-target` (review 43); the
    # same tools without that sentence take an id the agent must find
    by_id = json.loads(json.dumps(TODO).replace("\\nEither 'id' or the 'name' to identify the target.", ""))
    assert "Either" not in json.dumps(by_id)
    out = compile_doc(tmp_path, "todo", "tools_list.json", by_id, 16)
    mod = load_env_module(next((out / "envs").rglob("env.py")))
    world = json.loads(next((out / "states").glob("*.json")).read_text())
    projects = world["entities"]["Project"]
    a, b = sorted(projects)[:2]
    env = mod.Env()
    env.reset(state=world) if "state" in env.reset.__code__.co_varnames else env.reset(world)
    env.step("update_projects", {"items": [{"id": a, "color": "teal", "name": "Elsewhere"}]})
    assert env.state["entities"]["Project"][a]["color"] == "teal"
    assert env.state["entities"]["Project"][a]["name"] == projects[a]["name"]  # a name that identifies is no rename
    env.step("delete_projects", {"items": [{"id": a}, {"id": b}]})
    assert a not in env.state["entities"]["Project"] and b not in env.state["entities"]["Project"]
    tasks = _tasks(out)
    acted = [(t, c) for t in tasks for c in t["gold_calls"] if c["tool"] in ("update_projects", "delete_projects")]
    assert acted, [t["instruction"] for t in tasks]
    for t, c in acted:
        (item,) = c["arguments"]["items"]
        assert f'project called "{projects[item["id"]]["name"]}"' in t["instruction"], (t["instruction"], item)
        assert "name" not in item, item


def test_a_batch_of_one_drops_its_quantifier(tmp_path):
    """"Create multiple new sections" sent one section: "create a new section called X", not "create a multiple new
    entity" (review 41)."""
    import json
    doc = json.loads(json.dumps(TODO).replace("Create new sections in Todoist", "Create multiple new sections in Todoist"))
    assert "multiple new sections" in json.dumps(doc)
    out = compile_doc(tmp_path, "todo", "tools_list.json", doc, 12)
    said = [t["instruction"] for t in _tasks(out) if any(c["tool"] == "create_sections" for c in t["gold_calls"])]
    assert said
    assert all("a new section called" in s and "multiple" not in s for s in said), said


def test_a_new_end_is_weeks_after_the_start_and_a_new_person_is_a_person():
    """A sprint's new end date is one to four weeks after its own start, in the format made for it (review 41: a
    sprint begun 2023-06-13 stretched to 2024-06-04); a new node called like a person takes the kind the store gives
    its people (review 41: "Ines Moreau", entity type "place")."""
    import datetime as dt

    from forgec.scenario import _after_start, _person_like
    rng = random.Random(2)
    for _ in range(10):
        got = _after_start("2024-06-04T16:00:00", {"startDate": "2023-06-13T09:00:00Z"}, "end_date", rng)
        days = (dt.date.fromisoformat(got[:10]) - dt.date(2023, 6, 13)).days
        assert 7 <= days <= 28 and got.endswith("T16:00:00"), got
    assert _after_start("2024-06-04", {"name": "x"}, "end_date", rng) == "2024-06-04"
    assert _person_like("Ines Moreau") and _person_like("Alice Shah")
    assert not _person_like("Project Phoenix") and not _person_like("Berlin") and not _person_like("acme corp")
