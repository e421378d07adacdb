"""Rules from blind review 61 (40 tasks from 8 broad-corpus doc sets, 17 accepted): keys the docs call UUIDs, a
response's envelope, one record per topic title, whose text is "saying", and the read the docs name before a
delete. Each is checked on docs written in two ways where the rule is general, against hand-written values."""

from __future__ import annotations

import json
import re
import uuid

from conftest import assert_checked_before, compile_doc, mcp_tool


def _bfcl(tmp_path, name: str, functions: list[dict], n: int = 12):
    from forgec.build import CompileOptions, compile_build

    d = tmp_path / "docs" / name
    d.mkdir(parents=True)
    (d / "functions.json").write_text("\n".join(json.dumps(f) for f in functions) + "\n")
    out = tmp_path / f"{name}_b"
    res = compile_build(CompileOptions(inputs=[d], out=out, tasks_per_env=n, seed=0, oracle_check=False))
    assert not [x for x in res.diagnostics if x.is_error]
    return out


def _world(out) -> dict:
    return json.loads(next(out.glob("states/*.json")).read_text())["entities"]


def _tasks(out) -> list[dict]:
    return [json.loads(x) for f in out.glob("tasks/*.jsonl") for x in f.read_text().splitlines() if x.strip()]


def _is_uuid(v) -> bool:
    try:
        return str(uuid.UUID(str(v))) == str(v)
    except ValueError:
        return False


def _fn(name, desc, props, required):
    return {"name": name, "description": desc, "parameters": {"type": "dict", "required": required, "properties": props}}


DEPENDENCY_TRACK = [  # BFCL's Dependency-Track functions, cut down: the project is addressed by `project_id` and by UUIDs
    _fn("project_api.ProjectApi.create_project", "Creates a new project within the system. If the project is a subproject, the UUID of the parent project must be provided.",
        {"name": {"type": "string", "description": "The name of the new project."},
         "parent_project_uuid": {"type": "string", "description": "The UUID of the parent project if this is a subproject, otherwise it can be omitted."}},
        ["name", "parent_project_uuid"]),
    _fn("project_api.ProjectApi.get_children_projects", "Retrieve a list of all child projects associated with a given parent project.",
        {"uuid": {"type": "string", "description": "The unique identifier (UUID) of the parent project for which child projects are to be retrieved."}}, ["uuid"]),
    _fn("project_api.ProjectApi.clone_project", "Creates a duplicate of a specified project.",
        {"project_id": {"type": "string", "description": "The unique identifier of the project to be cloned."},
         "new_project_name": {"type": "string", "description": "The name for the new cloned project."}}, ["project_id", "new_project_name"]),
    _fn("project_api.ProjectApi.get_projects", "Retrieve a list of all projects from the database.",
        {"name": {"type": "string", "description": "The name of the project to filter the query results.", "default": ""}}, []),
    _fn("project_api.ProjectApi.update_project", "Update the details of an existing project.",
        {"project_id": {"type": "string", "description": "The unique identifier of the project to update."},
         "description": {"type": "string", "description": "The new description of the project."}}, ["project_id", "description"]),
]


def test_a_record_the_docs_address_by_uuid_has_uuid_keys_and_no_second_uuid_field(tmp_path):
    """Dependency-Track (BFCL): "The unique identifier (UUID) of the parent project" names a Project, so projects
    carry no own `uuid` field beside `project_id` (review 61: `uuid` "support backlog" vs the key project_67264,
    two defensible values for `parent_project_uuid`); their keys, and the parents the records point to, are UUIDs."""
    projects = _world(_bfcl(tmp_path, "dt", DEPENDENCY_TRACK))["Project"]
    assert projects
    for k, rec in projects.items():
        assert _is_uuid(k), k
        assert "uuid" not in rec, rec
        assert rec.get("parent_project_uuid") is None or rec["parent_project_uuid"] in projects


def test_an_mcp_server_whose_ids_are_uuids_keeps_uuid_keys(tmp_path):
    """A second writer: an MCP server whose board ids are "The UUID of the board" (no JSON-schema format)."""
    tools = [
        mcp_tool("list_boards", "List all boards.", {}),
        mcp_tool("get_board", "Get a board.", {"board_id": {"type": "string", "description": "The UUID of the board."}}, ["board_id"]),
        mcp_tool("rename_board", "Rename a board.", {"board_id": {"type": "string", "description": "The UUID of the board to rename."},
                                                     "name": {"type": "string", "description": "The new name."}}, ["board_id", "name"]),
        mcp_tool("delete_board", "Delete a board.", {"board_id": {"type": "string", "description": "The UUID of the board to delete."}}, ["board_id"]),
    ]
    out = compile_doc(tmp_path, "boards", "tools_list.json", {"tools": tools}, 6)
    boards = _world(out)["Board"]
    assert boards and all(_is_uuid(k) for k in boards), list(boards)[:3]


def test_a_field_named_uuid_holds_a_uuid():
    """A plain `uuid` or `project_UUID` string, nothing else known of it: a UUID (seeded), not a topic."""
    import random

    from forgec.stdlib.values import generate_value

    rng = random.Random(7)
    for name in ("uuid", "project_UUID", "guid"):
        v = generate_value({"type": "str"}, name, rng, entity="Vex")
        assert _is_uuid(v), (name, v)
    assert generate_value({"type": "str"}, "uuid", random.Random(3)) == generate_value({"type": "str"}, "uuid", random.Random(3))


def _obj(props: dict) -> dict:
    return {"type": "object", "properties": props}


def _ok(schema: dict) -> dict:
    return {"200": {"description": "OK", "content": {"application/json": {"schema": schema}}}}


DOC = {"$ref": "#/components/schemas/Document"}
WIKI = {"openapi": "3.0.0", "info": {"title": "Wiki", "version": "1"},
        "components": {"schemas": {
            "Document": _obj({"id": {"type": "string", "description": "Unique identifier for the object."},
                              "title": {"type": "string", "description": "The title of the document."},
                              "text": {"type": "string", "description": "The body of the document."}}),
            "Policy": _obj({"id": {"type": "string"}, "abilities": _obj({"read": {"type": "boolean"}})}),
            "Pagination": _obj({"offset": {"type": "number"}, "limit": {"type": "number"}}),
            "Star": _obj({"id": {"type": "string", "description": "Unique identifier for the star."},
                          "documentId": {"type": "string", "description": "The document starred."},
                          "documents": {"type": "array", "items": DOC}})}},
        "paths": {
            "/documents.list": {"post": {"operationId": "documentsList", "summary": "List all documents",
                                         "responses": _ok(_obj({"data": {"type": "array", "items": DOC},
                                                                "policies": {"type": "array", "items": {"$ref": "#/components/schemas/Policy"}},
                                                                "pagination": {"$ref": "#/components/schemas/Pagination"}}))}},
            "/documents.info": {"post": {"operationId": "documentsInfo", "summary": "Retrieve a document",
                                         "requestBody": {"content": {"application/json": {"schema": {
                                             "type": "object", "required": ["id"], "properties": {"id": {"type": "string", "description": "Unique identifier for the document."}}}}}},
                                         "responses": _ok(_obj({"data": DOC, "policies": {"type": "array", "items": {"$ref": "#/components/schemas/Policy"}}}))}},
            "/documents.update": {"post": {"operationId": "documentsUpdate", "summary": "Update a document",
                                           "requestBody": {"content": {"application/json": {"schema": {
                                               "type": "object", "required": ["id"], "properties": {
                                                   "id": {"type": "string", "description": "Unique identifier for the document."},
                                                   "title": {"type": "string", "description": "The title of the document."}}}}}},
                                           "responses": _ok(_obj({"data": DOC, "policies": {"type": "array", "items": {"$ref": "#/components/schemas/Policy"}}}))}},
            "/stars.list": {"post": {"operationId": "starsList", "summary": "List all stars",
                                     "responses": _ok(_obj({"data": {"type": "array", "items": {"$ref": "#/components/schemas/Star"}},
                                                            "pagination": {"$ref": "#/components/schemas/Pagination"}}))}},
        }}


def test_a_response_envelope_is_no_record_and_a_title_names_one_thing(tmp_path):
    """Outline's `{data: [Document], policies: [...], pagination}`: a document is the payload, with no `data` list or
    `policies` of the envelope (review 61: every document held every response's fields, 1.2 MB per listing); and
    the documents a star nests never carry another document's title (review 61: "Conference travel" as the title
    of one document and of nested objects in 4 others)."""
    world = _world(compile_doc(tmp_path, "wiki", "openapi.json", WIKI, 6))
    docs = world["Document"]
    assert docs
    for rec in docs.values():
        assert {"data", "policies", "pagination"}.isdisjoint(rec), sorted(rec)
        assert isinstance(rec.get("title"), str) and rec["title"]
    titles = [r["title"] for r in docs.values()]
    assert len(titles) == len(set(titles))
    nested = [d.get("title") for s in world.get("Star", {}).values() for d in (s.get("documents") or []) if d.get("title")]
    assert not set(nested) & set(titles), set(nested) & set(titles)


def test_only_a_message_s_own_text_is_said_as_saying():
    """`text`, `comment_text`, `commentBody` hold what is said; `anchorText` and `alt_text` are texts about another
    thing (review 61: 'a comment saying "X" saying "Y"', the body put in Outline's `anchorText`)."""
    from forgec.scenario import _say_param

    assert _say_param("text", "Please review it.") == 'saying "Please review it."'
    assert _say_param("comment_text", "Please review it.") == 'saying "Please review it."'
    assert _say_param("commentBody", "Please review it.") == 'saying "Please review it."'
    assert not _say_param("anchorText", "Please review it.").startswith("saying")
    assert not _say_param("alt_text", "A red door.").startswith("saying")


def test_the_check_before_a_delete_is_the_read_the_docs_name(tmp_path):
    """Boond: the delete says "only on the user's explicit request, once the ID is verified with `orders_get`" (in
    French in Boond's own docs), and another read listed first (`companies_orders`) also returns an order when given one's id;
    the gold path checks with the named one (review 61: 3 deletes with no check, the first-found getter being the other)."""
    oid = {"id": {"type": "string", "description": "Unique identifier of the purchase order"}}
    tools = [
        mcp_tool("companies_orders", "Returns the purchase order of a company.", oid, ["id"]),
        mcp_tool("orders_search", "Search purchase orders.", {"keywords": {"type": "string"}}),
        mcp_tool("orders_get", "Returns a purchase order.", oid, ["id"]),
        mcp_tool("orders_create", "Creates a purchase order.", {"title": {"type": "string", "description": "Title of the order"},
                                                                "startDate": {"type": "string", "description": "Start date"}}, ["title"]),
        mcp_tool("orders_delete", "Permanently deletes a purchase order.\n\nWhen: only on the user's explicit request, once the ID "
                 "is verified with `orders_get`.", oid, ["id"]),
    ]
    tasks = _tasks(compile_doc(tmp_path, "boond", "tools_list.json", {"tools": tools}, 24))
    assert_checked_before(tasks, "orders_delete", "orders_get", "id")
    assert not any(c["tool"] == "companies_orders" for t in tasks for c in t["gold_calls"])


# --------------------------------------------------------------------------- review 62


def test_a_many_to_many_link_names_no_record(tmp_path):
    """Karakeep: a bookmark's `listId` beside a list's `bookmarkId` is a link the docs' paths flattened, not a parent;
    no task names a bookmark by "the list called X" or "the tag called X" (review 62: the list's own bookmark was
    another user's, and the bookmark was in another list)."""
    from conftest import BROAD

    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "kk"
    res = compile_build(CompileOptions(inputs=[BROAD / "openapi_karakeep"], out=out, tasks_per_env=60, seed=0, oracle_check=False))
    assert not [x for x in res.diagnostics if x.is_error]
    tasks = _tasks(out)
    assert len(tasks) >= 30
    linked = [t["instruction"] for t in tasks if re.search(r"\bmy \w+ (?:for|assigned to) the (?:list|tag) called", t["instruction"])]
    assert not linked, linked[:3]


def test_a_story_is_a_work_only_where_its_fields_say_so():
    """A tracker's story (Shortcut: an estimate, an epic, a workflow state) is titled like work, not "The Last Mirror";
    a story with an author and a genre is a creative work; a team's 15th name composes ("Data Platform")."""
    from forgec.stdlib.values import is_work

    assert not is_work("Story", {"story_id", "name", "estimate", "epic_id", "workflow_state_id"})
    assert is_work("Story", {"story_id", "title", "author", "genre"})
    assert not is_work("Game", {"game_id", "home_team", "away_team", "score"})
    assert is_work("Movie", None) and is_work("Book", {"isbn"})


def test_taking_a_link_off_a_record_has_no_i_no_longer_need_it():
    from forgec.reasons import reason_for

    assert reason_for("cancel", "remove", "Remove current user as story owner.", "story", {"name": "Roadmap"}, None, {}, set(), 0) == ""
    assert reason_for("cancel", "remove", "Remove a tag from a bookmark.", "tag", {"name": "ideas"}, None, {}, set(), 0) == ""
    # and a plain delete has none either: "— I no longer need it" on 20 of 40 tasks was boilerplate (review 65)
    assert reason_for("cancel", "delete", "Delete a bookmark.", "bookmark", {"title": "Roadmap"}, None, {}, set(), 0) == ""


def test_removing_a_record_from_another_unlinks_it(tmp_path):
    """"Remove a bookmark from a list": the bookmark stays, out of the list (review 62: Karakeep's removal deleted the
    bookmark); a removal from a list the bookmark is not in fails; "Remove a member from a team" (the team named
    second) still deletes no team."""
    from forgec.codegen import load_env_module

    tools = [
        mcp_tool("list_bookmarks", "List all bookmarks.", {}),
        mcp_tool("list_lists", "List all lists.", {}),
        mcp_tool("create_list", "Create a list.", {"name": {"type": "string", "description": "Name of the list"}}, ["name"]),
        mcp_tool("create_bookmark", "Create a bookmark.", {"title": {"type": "string", "description": "Title of the bookmark"},
                                                           "list_id": {"type": "string", "description": "The ID of the list to put it in"}}, ["title"]),
        mcp_tool("remove_bookmark_from_list", "Remove a bookmark from a list.",
                 {"list_id": {"type": "string", "description": "The ID of the list"},
                  "bookmark_id": {"type": "string", "description": "The ID of the bookmark"}}, ["list_id", "bookmark_id"]),
    ]
    out = compile_doc(tmp_path, "marks", "tools_list.json", {"tools": tools}, 6)
    mod = load_env_module(next((out / "envs").rglob("env.py")))
    world = json.loads(next((out / "states").glob("*.json")).read_text())
    marks = world["entities"]["Bookmark"]
    key, rec = next((k, r) for k, r in sorted(marks.items()) if r.get("list_id"))
    other = next(k for k in sorted(world["entities"]["List"]) if k != rec["list_id"])
    env = mod.Env()
    env.reset(state=world)
    env.step("remove_bookmark_from_list", {"list_id": other, "bookmark_id": key})
    assert env.state["entities"]["Bookmark"][key]["list_id"] == rec["list_id"]  # not in that list: nothing changes
    env.step("remove_bookmark_from_list", {"list_id": rec["list_id"], "bookmark_id": key})
    assert key in env.state["entities"]["Bookmark"]
    assert env.state["entities"]["Bookmark"][key]["list_id"] is None


def test_a_question_asks_what_the_system_decided_not_my_own_choices(tmp_path):
    """τ-bench airline (review 60: "what the origin of my reservation with the economy cabin is", "what the insurance
    of my reservation ... is" answered "yes"): no question about one of my records asks a field I set when I made
    it (the params of the tool that books it), and a yes/no field is asked as "whether"."""
    from conftest import CORPUS

    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "air"
    res = compile_build(CompileOptions(inputs=[CORPUS / "tau_bench_airline"], out=out, tasks_per_env=60, seed=0, oracle_check=False))
    assert not [x for x in res.diagnostics if x.is_error]
    tools = json.loads((CORPUS / "tau_bench_airline" / "tools.json").read_text())
    book = next(t for t in tools if (t.get("function") or t)["name"] == "book_reservation")
    chosen = set((book.get("function") or book)["parameters"]["properties"])
    assert {"origin", "destination", "cabin", "flight_type", "insurance"} <= chosen
    asked = [t["instruction"] for t in _tasks(out) if re.search(r"\bwhat the [\w ]+ of my reservation\b", t["instruction"])]
    for text in asked:
        field = re.search(r"\bwhat the ([\w ]+) of my reservation\b", text).group(1).replace(" ", "_")
        assert field not in chosen, text
    assert not [t["instruction"] for t in _tasks(out) if re.search(r"what the insurance of", t["instruction"])]


def test_ids_of_users_mentioned_beside_an_issue_are_not_issue_ids(tmp_path):
    """GitLab: `assignee_ids` "Array of user IDs to assign issue to" names users, not issues (review 63: deleting an
    issue took its number out of other issues' assignees); "The ID of the issue to link" still names an issue."""
    from conftest import schema_of

    iid = {"type": "string", "description": "The IID of an issue"}
    s = schema_of(tmp_path, [
        mcp_tool("list_issues", "List issues in a project.", {}),
        mcp_tool("get_issue", "Get an issue.", {"issue_iid": iid}, ["issue_iid"]),
        mcp_tool("update_issue", "Update an issue.", {"issue_iid": iid, "assignee_ids": {
            "type": "array", "items": {"type": "number"}, "description": "Array of user IDs to assign issue to"}}, ["issue_iid"]),
        mcp_tool("relate_issues", "Relate two issues.", {"issue_iid": iid, "target_ref": {
            "type": "string", "description": "The ID of the issue to link"}}, ["issue_iid", "target_ref"]),
    ])
    assert s.ref_of("assignee_ids") != "Issue"
    assert "assignee_ids" not in s.entities["Issue"].aliases


def test_records_of_many_kinds_keep_plain_titles(tmp_path):
    """Twelve kinds of titled records (notes, pages, posts, ...) in one world: each kind draws its own titles, so none
    runs out into "Customer feedback 29" (review 63: WordPress tags and categories with counters), while a title
    nested in another record still names no record (review 61, above)."""
    kinds = ["note", "page", "post", "document", "memo", "task", "bookmark", "thread", "snippet", "article", "draft", "report"]
    tools = []
    for k in kinds:
        tools += [mcp_tool(f"list_{k}s", f"List all {k}s.", {}),
                  mcp_tool(f"create_{k}", f"Create a {k}.", {"title": {"type": "string", "description": f"Title of the {k}"}}, ["title"])]
    world = _world(compile_doc(tmp_path, "many", "tools_list.json", {"tools": tools}, 2))
    titles = [r["title"] for e, recs in world.items() if e != "ActionLog" for r in recs.values() if isinstance(r.get("title"), str)]
    assert len(titles) >= 12 * 20
    assert not [t for t in titles if re.search(r" \d+$", t) and not re.search(r" 20\d\d$", t)], [t for t in titles if re.search(r" \d+$", t)][:5]


def test_a_finished_flag_and_a_documented_state_agree():
    """Shortcut's epics: `isDone` true is in the state "done", false in another (review 64: an epic done but "in
    progress", so "only if it is not done" had two answers)."""
    import random

    from forgec.stdlib.values import _finished_agrees

    fields = {"isDone": {"type": "bool"}, "state": {"type": "enum", "values": ["to do", "in progress", "done"]}}
    for seed in range(20):
        rng = random.Random(seed)
        done = {"isDone": True, "state": rng.choice(["to do", "in progress", "done"])}
        _finished_agrees(done, fields, rng)
        assert done["state"] == "done"
        open_ = {"isDone": False, "state": "done"}
        _finished_agrees(open_, fields, rng)
        assert open_["state"] in ("to do", "in progress")
    ticket = {"closed": True, "status": "pending"}  # a second writer: a ticket's `closed` flag and its status
    _finished_agrees(ticket, {"closed": {"type": "bool"}, "status": {"type": "enum", "values": ["open", "pending", "closed"]}}, random.Random(1))
    assert ticket["status"] == "closed"


def test_a_date_grammar_is_no_list_of_values():
    """Shortcut's `completed`: 'Date filter: "YYYY-MM-DD", "today", "yesterday", "tomorrow"' gives a date's forms,
    not values to store (review 64: epics completed on "YYYY-MM-DD" and "tomorrow"); a real list still is one."""
    from forgec.gate import documented_values

    assert documented_values('Date filter: "YYYY-MM-DD", "today", "yesterday", "tomorrow", or range "YYYY-MM-DD..YYYY-MM-DD"') == []
    assert documented_values("Temperature unit, one of 'celsius', 'fahrenheit'") == ["celsius", "fahrenheit"]
