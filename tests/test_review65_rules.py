"""Rules from blind review 65 (40 tasks from 8 broad-corpus doc sets, 32 accepted) and from the doc sets of its draw
that yielded no task (22 of 30): what a listing's own sentence says its records carry, a page's `content`, a record
passed by its `...Key`, what a container of a person's things is called, a list of things to remove, an API's own
format URL, and the wording a review rejected. Each is checked against hand-written values, on docs written in two
styles where the rule is general."""

from __future__ import annotations

import json
import re

from conftest import compile_doc, mcp_tool, schema_of


def _bfcl_schema(tmp_path, functions: list[dict]):
    from forgec.frontends import read_paths
    from forgec.synth.schema import infer_schema

    d = tmp_path / "bfcl"
    d.mkdir()
    (d / "functions.json").write_text("\n".join(json.dumps(f) for f in functions) + "\n")
    envs, _ = read_paths([d])
    return infer_schema(envs[0])


def _fn(name, desc, props, required):
    return {"name": name, "description": desc, "parameters": {"type": "dict", "required": required, "properties": props}}


def _kinds(e) -> dict[str, str]:
    from forgec.lang import fmt

    return {n: fmt.format_type(f.type) if hasattr(fmt, "format_type") else repr(f.type) for n, f in e.fields.items()}


def test_a_listing_sentence_names_the_attributes_its_records_carry(tmp_path):
    """"Returns vault IDs, names, descriptions, and types": a vault has a name, a description and a type (1Password's
    vaults had none, and no task could name one). Written the other way, "returning id, title, owner, and labels for
    each", a plural among singulars is a list of its own (`labels`)."""
    from forgec.lang import ast as A

    s = schema_of(tmp_path, [
        mcp_tool("list_vaults", "List every vault the account can open. Returns vault IDs, names, descriptions, and types.", {}),
        mcp_tool("delete_vault", "Delete a vault.", {"vaultId": {"type": "string", "description": "Vault ID"}}, ["vaultId"]),
    ])
    vault = s.entities["Vault"]
    assert {"name", "description", "type"} <= set(vault.fields)
    assert all(vault.fields[f].type == A.PrimType("str") for f in ("name", "description", "type"))
    assert not any("id" in f.lower() and f != vault.key for f in vault.fields)  # "vault IDs" is the key, no field

    s2 = _bfcl_schema(tmp_path, [
        _fn("list_boards", "Get all boards, returning id, title, owner, and labels for each.", {}, []),
        _fn("remove_board", "Remove a board.", {"board_id": {"type": "string", "description": "The board id."}}, ["board_id"]),
    ])
    board = s2.entities["Board"]
    assert board.fields["title"].type == A.PrimType("str") and board.fields["owner"].type == A.PrimType("str")
    assert board.fields["labels"].type == A.ListType(A.PrimType("str"))


def test_a_sentence_about_the_records_is_no_list_of_attributes(tmp_path):
    """"Returns every flight with its price per economy seat, seats left and status": one part is a clause, so the
    sentence lists no attributes; and "seats left" is `seats_available` already (no second `seats_left`)."""
    s = schema_of(tmp_path, [
        mcp_tool("search_flights", "Search flights on a date. Returns every flight with its price per economy seat, seats left and status.",
                 {"date": {"type": "string", "description": "Date, YYYY-MM-DD"}}, ["date"]),
        mcp_tool("book_flight", "Book a flight.", {"flight_id": {"type": "string", "description": "The flight id"},
                                                   "seats_available": {"type": "integer", "description": "Seats still for sale"}}, ["flight_id"]),
    ])
    flight = s.entities["Flight"]
    assert "seats_left" not in flight.fields and "status" not in flight.fields


def test_a_page_keeps_its_content_and_is_made_in_the_space_its_key_names(tmp_path):
    """Confluence's `create_page(spaceKey, title, content)`: the content is the page's (it had been taken for a request
    modifier, and every task failed `said-ignored`), and `spaceKey` "Key of the space" names a space from `get_spaces`."""
    s = schema_of(tmp_path, [
        mcp_tool("get_spaces", "List all available spaces", {"limit": {"type": "number", "description": "Maximum number of spaces"}}),
        mcp_tool("create_page", "Create a new page", {
            "spaceKey": {"type": "string", "description": "Key of the space where the page will be created"},
            "title": {"type": "string", "description": "Title of the new page"},
            "content": {"type": "string", "description": "Content of the page in storage format"}}, ["spaceKey", "title", "content"]),
        mcp_tool("get_page", "Retrieve a page by ID", {"pageId": {"type": "string", "description": "ID of the page"}}, ["pageId"]),
    ])
    page = s.entities["Page"]
    assert "content" in page.fields
    assert s.views["create_page"].refs.get("spaceKey") == "Space"
    assert s.entities["Space"].key == "spaceKey"


def test_a_list_of_things_to_remove_is_no_field_of_the_record(tmp_path):
    """`removeFields: "Field ids or titles to remove from the item"` changes the item; an item holds no `removeFields`."""
    s = schema_of(tmp_path, [
        mcp_tool("list_items", "List all items.", {}),
        mcp_tool("edit_item", "Edit an item.", {
            "itemId": {"type": "string", "description": "Item ID"},
            "title": {"type": "string", "description": "New item title."},
            "removeFields": {"type": "array", "items": {"type": "string"}, "description": "Field ids or titles to remove from the item."}},
            ["itemId"]),
    ])
    assert "title" in s.entities["Item"].fields and "removeFields" not in s.entities["Item"].fields


VAULTS = [
    mcp_tool("vault_list", "List all vaults. Returns vault IDs, names, descriptions, and types.", {}),
    mcp_tool("note_list", "List all secure notes in a vault.", {"vaultId": {"type": "string", "description": "Vault ID to list notes from."}}, ["vaultId"]),
    mcp_tool("note_delete", "Delete a secure note in a vault.", {"vaultId": {"type": "string", "description": "Vault ID containing the note."},
                                                                 "noteId": {"type": "string", "description": "Note ID to delete."}}, ["vaultId", "noteId"]),
    mcp_tool("note_create", "Create a secure note in a vault.", {"vaultId": {"type": "string", "description": "Vault ID to create the note in."},
                                                                 "title": {"type": "string", "description": "Note title."}}, ["vaultId", "title"]),
]


def test_a_container_of_a_persons_notes_is_named_like_one(tmp_path):
    """Vaults that hold notes are called what a person files things under ("Personal", "Work", "Family Archive"), not
    "Vault 10" (no task could name one: 0 tasks from 1Password's docs). The docs' "in a vault" is not said twice."""
    from forgec.stdlib.values import GROUP_NAMES

    out = compile_doc(tmp_path, "keeper", "tools_list.json", {"tools": VAULTS}, 10)
    world = json.loads(next(out.glob("states/*.json")).read_text())["entities"]
    names = [v["name"] for v in world["Vault"].values()]
    assert names and not any(re.fullmatch(r"Vault \d+", n) for n in names)
    assert all(n in GROUP_NAMES or n.split()[0] in GROUP_NAMES for n in names), names
    assert len(set(names)) == len(names)
    tasks = [json.loads(x) for f in out.glob("tasks/*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    assert tasks
    said = [t["instruction"] for t in tasks if "vault called" in t["instruction"]]
    assert said and not any(re.search(r"vault called \"[^\"]+\".*\bin a vault\b", x) for x in said), said[:3]


def test_a_format_url_the_api_names_is_sent_never_said(tmp_path):
    """`schema: "https://.../v2.1.0/collection.json" | "https://.../v2.1.0/collection.json"`: the user never says a
    schema URL (review 65: "with schema https://schema.postman.com/..."); the one the param's doc quotes is sent."""
    url1 = "https://schema.example.com/json/collection/v2.1.0/collection.json"
    url2 = "https://schema.example.org/json/collection/v2.1.0/collection.json"
    tools = [
        mcp_tool("list_workspaces", "List all workspaces. Returns workspace IDs, names and types.", {}),
        mcp_tool("list_collections", "List all collections.", {}),
        mcp_tool("create_collection", "Create a collection in a workspace.", {
            "workspace": {"type": "string", "description": "The workspace's ID."},
            "collection": {"type": "object", "properties": {
            "name": {"type": "string", "description": "The collection's name."},
            "schema": {"type": "string", "enum": [url1, url2], "description": f'The "{url1}" collection format schema.'}},
            "required": ["name", "schema"], "description": "The collection."}}, ["workspace", "collection"]),
        mcp_tool("delete_collection", "Delete a collection.", {"collectionId": {"type": "string", "description": "The collection's ID."}}, ["collectionId"]),
    ]
    out = compile_doc(tmp_path, "collections", "tools_list.json", {"tools": tools}, 12)
    tasks = [json.loads(x) for f in out.glob("tasks/*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    assert tasks and not any("http" in t["instruction"] for t in tasks)
    made = [c["arguments"]["collection"] for t in tasks for c in t["gold_calls"] if c["tool"] == "create_collection"]
    assert made and all(c.get("schema") == url1 for c in made), made[:2]


def test_the_oldest_by_update_is_said_as_people_say_it():
    from forgec.sample import superlative

    assert superlative("argmin", "updateTime", "webhook") == "the least recently updated webhook"  # not "updated first"
    assert superlative("argmin", "issued_at", "memo") == "the least recently issued memo"


ACCOUNTS = [
    mcp_tool("get_user", "Get a user by their user id.", {"user_id": {"type": "string", "description": "The user id."}}, ["user_id"]),
    mcp_tool("list_notes", "List a user's notes.", {"user_id": {"type": "string", "description": "The user id."}}, ["user_id"]),
    mcp_tool("delete_note", "Delete a note.", {"note_id": {"type": "string", "description": "The note id."}}, ["note_id"]),
    mcp_tool("update_user", "Update a user.", {
        "user_id": {"type": "string", "description": "The user id."},
        "body": {"type": "object", "properties": {
            "role": {"type": "string", "enum": ["ADMIN", "USER"], "description": "The role of the user."},
            "state": {"type": "string", "enum": ["NORMAL", "ARCHIVED"], "description": "The state of the user."},
            "email": {"type": "string", "description": "The email address of the user."},
            "nickname": {"type": "string", "description": "The nickname of the user."}},
            "required": ["role"]}}, ["user_id", "body"]),
    mcp_tool("update_profile", "Update a user's profile.", {
        "user_id": {"type": "string", "description": "The user id."},
        "body": {"type": "object", "properties": {
            "state": {"type": "string", "enum": ["NORMAL", "ARCHIVED"], "description": "The state of the user."},
            "email": {"type": "string", "description": "The email address of the user."},
            "nickname": {"type": "string", "description": "The nickname of the user."}}}}, ["user_id", "body"]),
]


def test_a_user_never_changes_their_own_role_or_state_in_passing(tmp_path):
    """Memos' `UpdateUser(user, body: {role, username, state, ...})` on the asker's own account: "update a user to the admin
    role ... and the archived state" (review 65, 2 rejections). A body that must carry a role is no request of the user's;
    an optional state is left out; the user's email is still theirs to change."""
    out = compile_doc(tmp_path, "accounts", "tools_list.json", {"tools": ACCOUNTS}, 24)
    tasks = [json.loads(x) for f in out.glob("tasks/*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    assert tasks
    bodies = [c["arguments"]["body"] for t in tasks for c in t["gold_calls"] if c["tool"] in ("update_user", "update_profile")]
    assert not [c for t in tasks for c in t["gold_calls"] if c["tool"] == "update_user"]
    assert not any("state" in b or "role" in b for b in bodies), bodies[:3]
    assert not any(re.search(r"\b(?:admin role|archived state)\b", t["instruction"]) for t in tasks)


PAYROLL = [
    mcp_tool("list_employees", "List all employees. Returns employee IDs, first names and last names.", {}),
    mcp_tool("list_timesheets", "List all timesheets.", {}),
    mcp_tool("create_timesheet", "Create a timesheet for an employee.", {
        "employeeID": {"type": "string", "description": "The employee's ID."},
        "startDate": {"type": "string", "description": "Start date, YYYY-MM-DD"},
        "endDate": {"type": "string", "description": "End date, YYYY-MM-DD"}}, ["employeeID", "startDate", "endDate"]),
    mcp_tool("delete_timesheet", "Delete a timesheet.", {"timesheetID": {"type": "string", "description": "The timesheet's ID."}}, ["timesheetID"]),
]


def test_an_employees_record_is_never_the_askers(tmp_path):
    """With no user record, the one asking runs the account: a timesheet that points to an employee is that employee's,
    "the timesheet ending ...", never "my timesheet" (review 65: "my" timesheets of two employees in one request), and
    it is a known record ("the"), not any ("a")."""
    out = compile_doc(tmp_path, "payroll", "tools_list.json", {"tools": PAYROLL}, 16)
    tasks = [json.loads(x) for f in out.glob("tasks/*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    deletes = [t["instruction"] for t in tasks if any(c["tool"] == "delete_timesheet" for c in t["gold_calls"])]
    assert deletes
    assert not any(re.search(r"\bmy (?:\w+ )?timesheets?\b", x) for x in deletes), deletes[:3]
    assert not any(re.search(r"\bdelete an? (?:\w+ )?timesheet\b", x) for x in deletes), deletes[:3]
