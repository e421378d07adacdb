"""Rules found in blind review 77 (each checked against hand-built docs or hand-written expectations, not the corpus)."""

from __future__ import annotations

import json
import re

from conftest import compile_doc, mcp_tool, schema_of
from test_review70_rules import _tasks

S = {"type": "string"}


def test_a_listing_filter_bounds_the_states_a_record_has(tmp_path):
    """Grafana's incidents held "pending", "inactive" (review 77) where `list_incidents(status: active|resolved)` says
    which states an incident is found in; `create_incident(status: string)` alone gave no enum."""
    s = schema_of(tmp_path, [
        mcp_tool("list_incidents", "List incidents. Allows filtering by status.",
                 {"status": {"type": "string", "enum": ["active", "resolved"], "description": "The status of incidents to include"}}),
        mcp_tool("get_incident", "Get a single incident by ID.", {"id": {"type": "string", "description": "The ID of the incident"}}, ["id"]),
        mcp_tool("create_incident", "Create a new incident.", {"title": {"type": "string", "description": "The title of the incident"},
                                                              "status": {"type": "string", "description": "The status of the incident"}}, ["title"]),
    ])
    t = s.entities["Incident"].fields["status"].type
    assert set(getattr(getattr(t, "inner", t), "values", ())) == {"active", "resolved"}, t


def test_switches_and_membership_filters_are_no_fields(tmp_path):
    """Dex's tasks held `all`, `delete`, `blocked` (with no blocker), SonarQube's issues `severities`, `facets`, `asc`,
    Zotero's items `attach_mode` and "fewer_results"/"not_more" read from "returns fewer results, not more" (review 77):
    how a call lists, deletes or attaches is no value a record keeps."""
    s = schema_of(tmp_path, [
        mcp_tool("list_tasks", "List and search tasks. Adding words usually returns fewer results, not more.", {
            "all": {"type": "boolean", "description": "Show all tasks (pending and completed)"},
            "blocked": {"type": "boolean", "description": "Filter to only blocked tasks (tasks with incomplete blockers)"},
            "severities": {"anyOf": [{"type": "array", "items": S}, S, {"type": "null"}], "description": "Filter by severities"},
            "asc": {"type": "boolean", "description": "Ascending sort"},
            "facets": {"type": "array", "items": S, "description": "Facets to compute"},
            "completed": {"type": "boolean", "description": "Filter by completion status"}}),
        mcp_tool("update_task", "Update task fields, or delete.", {
            "id": {"type": "string", "description": "Task ID"}, "name": {"type": "string", "description": "Updated name"},
            "severity": {"type": "string", "description": "Updated severity"},
            "completed": {"type": "boolean", "description": "Mark task as completed"},
            "delete": {"type": "boolean", "description": "Set to true to delete the task"}}, ["id"]),
        mcp_tool("add_task", "Add a task.", {"name": {"type": "string", "description": "The task name"},
                                             "attach_mode": {"type": "string", "description": "'auto' attaches a PDF, 'none' skips."}}, ["name"]),
    ])
    fields = set(s.entities["Task"].fields)
    assert {"name", "severity", "completed"} <= fields, fields
    assert not fields & {"all", "blocked", "severities", "asc", "facets", "delete", "attach_mode", "fewer_results", "not_more"}, fields


def test_a_record_is_said_by_who_made_it_not_by_a_field_query():
    """"my issue whose author is "Laurie Jackson"" (SonarQube, WordPress, Gotify: reviews 73-77), "whose branch is",
    "whose vendor is": said as a person does, and someone else's record is "the", not "my"."""
    from forgec.scenario import Referring, describe, qualifier

    assert qualifier("author", "Karl Miller") == "by Karl Miller"
    assert qualifier("author_name", "Tammie Lee") == "by Tammie Lee"
    assert qualifier("reporter", "Ana Diaz") == "reported by Ana Diaz"
    assert qualifier("branch", "fix/api-docs") == 'on the "fix/api-docs" branch'
    assert qualifier("supplier", "Acme Ltd") == "from Acme Ltd"
    assert describe("comment", Referring((("author_name", "Tammie Lee"),))) == "the comment by Tammie Lee"
    assert describe("hotspot", Referring((("branch", "fix/api-docs"),))) == 'my hotspot on the "fix/api-docs" branch'


def _websites():
    wid = {"websiteId": {"type": "string", "description": "The unique identifier of the website to be removed."}}
    return [
        mcp_tool("get_websites", "Retrieve the configured websites.", {}),
        mcp_tool("create_website", "Configure a new website.", {"name": {"type": "string", "description": "The name of the new website to be configured."}},
                 ["name"]),
        mcp_tool("delete_website", "Deletes a website configuration from the system using the specified website ID.", wid, ["websiteId"]),
    ]


def test_a_delete_by_another_name_of_the_record_deletes_the_record(tmp_path):
    """"delete a website configuration using my website called X" (Instana, reviews 74 and 77: the docs' sentence
    turned into a request): the docs' "website configuration" is the website the call removes."""
    tasks = _tasks(tmp_path, _websites())
    deletes = [t["instruction"] for t in tasks if any(c["tool"] == "delete_website" for c in t["gold_calls"])]
    assert deletes, [t["instruction"] for t in tasks]
    assert all(re.search(r"delete my website called \"[^\"]+\"", i) for i in deletes), deletes
    assert not any("using" in i or "configuration" in i for i in deletes), deletes


def _library():
    ck = {"collection_key": {"type": "string", "description": "The collection key"}}
    return [
        mcp_tool("get_collections", "List all collections.", {}),
        mcp_tool("create_collection", "Create a collection.", {"name": S, "parent_collection": {"type": "string", "description": "The parent collection key"}},
                 ["name"]),
        mcp_tool("delete_collection", "Delete a collection. Items inside are NOT deleted. Subcollections ARE deleted along with the parent.", ck,
                 ["collection_key"]),
        mcp_tool("search_items", "Search items by title.", {"query": S}),
        mcp_tool("delete_item", "Move an item to the Trash. Trashed items are recoverable from the Trash.",
                 {"item_key": {"type": "string", "description": "Item key to trash"}}, ["item_key"]),
        mcp_tool("update_item", "Update an item.", {"item_key": {"type": "string", "description": "Item key"}, "title": S}, ["item_key"]),
    ]


def test_a_trash_move_keeps_the_record_and_a_documented_cascade_takes_the_children(tmp_path):
    """Zotero's "Move a Zotero item to the Trash ... recoverable" removed the item; "Subcollections ARE deleted along
    with the parent" kept them (review 77). The item stays, in the trash; the sub-collections go with their parent."""
    out = compile_doc(tmp_path, "lib", "tools_list.json", {"tools": _library()}, 30)
    src = next(out.glob("src/*/env.forge")).read_text()
    body = src[src.index("tool delete_item("):]
    body = body[:body.index("\n  }\n")]
    assert "set item_key.trashed = true" in body and "delete item_key" not in body, body
    coll = src[src.index("tool delete_collection("):]
    coll = coll[:coll.index("\n  }\n")]
    assert "for child in Collection where it.parent_collection == removed {" in coll and "delete child" in coll, coll
    assert coll.index("delete child") < coll.index("delete collection_key"), coll  # the children go before their parent
    tasks = [json.loads(x) for f in out.glob("tasks/*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    trashed = [t for t in tasks if any(c["tool"] == "delete_item" for c in t["gold_calls"])]
    for t in trashed:  # the end state keeps the item, marked
        assert not any(op["op"] == "remove" and op["path"].startswith("/entities/Item/") for op in t["gold_diff"]), t["gold_diff"]


def test_a_permanent_delete_beside_a_trash_says_permanently(tmp_path):
    """Gmail's `delete_message` ("Immediately and permanently delete a message") beside `trash_message`: "delete my
    message" reads as trashing it (review 77: two end states). A delete with no gentler sibling is said plainly."""
    mid = {"id": {"type": "string", "description": "The ID of the message"}}
    tools = [
        {**mcp_tool("list_messages", "List messages in the mailbox.", {}), "outputSchema": {"type": "object", "properties": {"messages": {
            "type": "array", "items": {"type": "object", "properties": {"id": S, "subject": S}}}}}},
        mcp_tool("delete_message", "Immediately and permanently delete a message", mid, ["id"]),
        mcp_tool("trash_message", "Move a message to the trash", mid, ["id"]),
        mcp_tool("untrash_message", "Remove a message from the trash", mid, ["id"]),
    ]
    tasks = _tasks(tmp_path / "a", tools)
    said = [t["instruction"] for t in tasks if any(c["tool"] == "delete_message" for c in t["gold_calls"])]
    assert said and all("permanently delete my message" in i for i in said), said
    plain = _tasks(tmp_path / "b", tools[:2])
    said = [t["instruction"] for t in plain if any(c["tool"] == "delete_message" for c in t["gold_calls"])]
    assert said and not any("permanently" in i for i in said), said


def test_a_built_in_record_is_not_the_users(tmp_path):
    """Overseerr's built-in sliders deleted as "my slider" (review 77): a record the product made or guards is not the
    user's to rename or delete."""
    sid = {"sliderId": {"type": "integer", "description": "The slider ID"}}
    out = compile_doc(tmp_path, "disc", "tools_list.json", {"tools": [
        {**mcp_tool("get_sliders", "Get all sliders.", {}), "outputSchema": {"type": "object", "properties": {"sliders": {"type": "array", "items": {
            "type": "object", "properties": {"id": {"type": "integer"}, "title": S, "isBuiltIn": {"type": "boolean"}}}}}}},
        mcp_tool("delete_slider", "Delete a slider.", sid, ["sliderId"]),
        mcp_tool("update_slider", "Update a slider.", {**sid, "title": S}, ["sliderId"]),
    ]}, 30)
    state = json.loads(next(out.glob("states/*.json")).read_text())["entities"]
    sliders = next(v for k, v in state.items() if "lider" in k)
    built_in = {str(k) for k, r in sliders.items() if r.get("isBuiltIn") is True}
    assert built_in, "the world holds built-in sliders"
    tasks = [json.loads(x) for f in out.glob("tasks/*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    touched = {str(c["arguments"].get("sliderId")) for t in tasks for c in t["gold_calls"] if c["tool"] in ("delete_slider", "update_slider")}
    assert touched and not touched & built_in, (touched, built_in)


def test_a_message_given_its_text_is_given_its_subject():
    """"create a draft email about X to Y" with no body, checked with `body: null` (review 77): a body is asked with the
    subject, which is said as a subject; the body of a subject line is about its topic."""
    from forgec.stdlib.values import topic_of_subject

    assert topic_of_subject("Tax documents next steps") == "tax documents"
    assert topic_of_subject("Re: wedding planning") == "wedding planning"
    assert topic_of_subject("Wedding planning") is None


def test_a_draft_says_subject_recipient_and_text(tmp_path):
    tasks = _tasks(tmp_path, [
        mcp_tool("list_drafts", "List drafts in the mailbox.", {}),
        mcp_tool("create_draft", "Create a draft email.", {"to": {"type": "array", "items": S, "description": "List of recipient email addresses"},
                                                           "subject": {"type": "string", "description": "The subject of the email"},
                                                           "body": {"type": "string", "description": "The body of the email"}}),
        mcp_tool("delete_draft", "Delete a draft", {"id": {"type": "string", "description": "The ID of the draft"}}, ["id"]),
    ], n=60)
    made = [(t["instruction"], c["arguments"]) for t in tasks for c in t["gold_calls"] if c["tool"] == "create_draft"]
    assert made, [t["instruction"] for t in tasks]
    for ins, args in made:
        assert args.get("subject") and args.get("body"), (ins, args)
        assert f'with the subject "{args["subject"]}"' in ins and json.dumps(args["body"]) in ins, ins
        assert ins.index(args["to"][0]) < ins.index("saying"), ins  # the recipient before the text
