"""Rules from blind review 38's rejections (GitLab, BoondManager, Wekan, Dependency-Track): a filter on who calls
is no field of a record, a documented lifecycle `state` is not doubled by an inferred `status`, the docs' own
pointer to "the tool for the records themselves" picks the lookup, and a condition never hangs on a record
being deleted.

Each test checks against a hand-written expectation (docs of the kinds in ../shared/corpus-broad, written here so
the test owns its input), not against forgec's own output.
"""

from __future__ import annotations

import json
import re

from conftest import assert_checked_before, compile_doc

from forgec import ir
from forgec.scenario import _condition_flag, _points_to
from forgec.synth.schema import is_modifier, shapes_request


def _str(desc: str = "", **kw) -> dict:
    return {"type": "string", "description": desc, **kw}


def _tool(name: str, desc: str, props: dict, required: list[str]) -> dict:
    return {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props, "required": required}}


def _tasks(out) -> list[dict]:
    return [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]


def test_a_filter_on_who_calls_is_no_field():
    """GitLab's `owned` "Filter for projects owned by current user", `scope: created_by_me|assigned_to_me|all` and
    `approval_password` "Current user's password" say who calls, not what a project or merge request holds (review
    38: "only if it is not owned" on "my project"); a field about a user that is a record's own stays one."""
    for name, doc in [("owned", "Filter for projects owned by current user"),
                      ("membership", "Filter for projects where current user is a member"),
                      ("approval_password", "Current user's password. Required if re-authentication is enabled"),
                      ("starred", "Limit by projects starred by the authenticated user")]:
        assert shapes_request(name, doc), name
    scope = ir.Param(name="scope", type=ir.Type(kind="enum", values=["created_by_me", "assigned_to_me", "all"]),
                     description="Return merge requests from a specific scope")
    assert is_modifier(scope)
    for name, doc in [("assignee_ids", "The ID of the users to assign the MR to"), ("owner", "Owner of the project"),
                      ("author_username", "Username of the author")]:
        assert not shapes_request(name, doc), name
    state = ir.Param(name="state", type=ir.Type(kind="enum", values=["opened", "closed", "merged"]), description="State")
    assert not is_modifier(state)


MERGES = {"tools": [  # GitLab-style merge requests: the docs give `state`, an approve verb would infer "approved"
    _tool("list_merge_requests", "List merge requests in a project.",
          {"project_id": _str("Project ID"),
           "state": _str("Return merge requests with a specific state", enum=["opened", "closed", "locked", "merged"])}, ["project_id"]),
    _tool("approve_merge_request", "Approve a merge request.", {"project_id": _str("Project ID"),
                                                                "merge_request_iid": _str("The IID of a merge request")},
          ["project_id", "merge_request_iid"]),
    _tool("update_merge_request", "Update a merge request.",
          {"project_id": _str("Project ID"), "merge_request_iid": _str("The IID of a merge request"),
           "title": _str("The title of the merge request")}, ["project_id", "merge_request_iid"]),
]}


def test_a_documented_state_is_not_doubled_by_an_inferred_status(tmp_path):
    """With `state: opened|closed|locked|merged` documented, approving does not invent a `status` beside it
    ("how many of my merge requests are active" had two answers, review 38)."""
    out = compile_doc(tmp_path, "merges", "tools_list.json", MERGES, 6)
    env = next((out / "src").rglob("env.forge")).read_text()
    block = re.search(r"entity MergeRequest\b[^{]*\{(.*?)\n  \}", env, re.S)
    assert block, env[:2000]
    fields = re.findall(r"^\s*(\w+):", block.group(1), re.M)
    assert "state" in fields and "status" not in fields, fields


def test_the_docs_pointer_to_the_records_themselves_picks_the_lookup():
    """"Rather than: `boond_projects_search` for the list of records themselves": a doc that names another tool
    sends the reader there (review 38: reporting tools used to find projects); a longer name is no mention."""
    doc = ("Reporting des projets (CA, marge). Plutôt que : `boond_projects_search` pour la liste des "
           "enregistrements eux-mêmes : ce reporting renvoie des totaux calculés.")
    assert _points_to(doc, "boond_projects_search")
    assert not _points_to(doc, "boond_projects")
    assert not _points_to("Use boond_projects_search_all instead.", "boond_projects_search")
    assert not _points_to(None, "boond_projects_search")


def test_no_condition_hangs_on_a_record_being_deleted():
    """"only if it is not deleted" is bookkeeping (review 38, BoondManager); archived, closed, enabled are states a
    person sees and may make a request hang on."""
    assert [_condition_flag(f) for f in ("deleted", "isDeleted", "is_removed", "trashed")] == ["", "", "", ""]
    assert [_condition_flag(f) for f in ("is_archived", "closed", "enabled")] == ["archived", "closed", "enabled"]


def test_a_record_the_user_has_is_never_what_they_create():
    """"Please create my project called X called Y to the resource called Z" (a create whose docs are in French,
    said of its parent, review 39) is garbled; making a new record inside one the user has is fine."""
    from types import SimpleNamespace

    from forgec.gate import check_makes_existing

    bad = ['Please create my project called "Mobile app beta" called "Newsletter" to the resource called "Jean Hicks".',
           'Please create my purchase called "Billing update" on 2024-05-30.']
    good = ['Please create a new project called "Newsletter" in my workspace called "Acme".',
            'Add my task called "Draft" to the project called "Launch".',
            'Create a tag called "urgent" for my task called "Draft".']
    assert [check_makes_existing(SimpleNamespace(instruction=x), None) for x in bad] == ["garbled", "garbled"]
    assert [check_makes_existing(SimpleNamespace(instruction=x), None) for x in good] == [None, None, None]


def _num(desc: str = "") -> dict:
    return {"type": "number", "description": desc}


# GitHub's MCP server as it documents itself: records addressed by a repository's `owner` and `repo` (two strings),
# `issue_number: number`, list filters with no descriptions, and `owner` explained on another tool only
GITHUB = {"tools": [
    _tool("list_issues", "List issues in a GitHub repository with filtering options",
          {"owner": {"type": "string"}, "repo": {"type": "string"}, "since": {"type": "string"},
           "state": {"type": "string", "enum": ["open", "closed", "all"]}}, ["owner", "repo"]),
    _tool("add_issue_comment", "Add a comment to an existing issue",
          {"owner": {"type": "string"}, "repo": {"type": "string"}, "issue_number": {"type": "number"}, "body": {"type": "string"}},
          ["owner", "repo", "issue_number", "body"]),
    _tool("update_issue", "Update an existing issue in a GitHub repository",
          {"owner": {"type": "string"}, "repo": {"type": "string"}, "issue_number": {"type": "number"},
           "title": {"type": "string"}, "state": {"type": "string", "enum": ["open", "closed"]}}, ["owner", "repo", "issue_number"]),
    _tool("create_issue", "Create a new issue in a GitHub repository",
          {"owner": {"type": "string"}, "repo": {"type": "string"}, "title": {"type": "string"}, "body": {"type": "string"}},
          ["owner", "repo", "title"]),
    _tool("create_pull_request", "Create a new pull request in a GitHub repository",
          {"owner": _str("Repository owner (username or organization)"), "repo": _str("Repository name"),
           "title": _str("Pull request title"), "head": _str("The name of the branch where your changes are implemented"),
           "base": _str("The name of the branch you want the changes pulled into")}, ["owner", "repo", "title", "head", "base"]),
]}


def test_records_addressed_by_their_repository_are_found_there(tmp_path):
    """An issue is found with `list_issues(owner, repo)` (the user says their repository) and the write sends the
    same owner and repo, said once ("in the repo "api" owned by msutton"); `issue_number: number` names the issue by
    a whole number; owners are logins and repositories handles, shared by several issues; `since` is no field
    (before: 0 tasks, every lookup failed; review 38: GitHub-style APIs were dictated calls)."""
    out = compile_doc(tmp_path, "github", "tools_list.json", GITHUB, 12)
    world = json.loads(next((out / "states").glob("*.json")).read_text())["entities"]
    issues = list(world["Issue"].values())
    assert all(re.fullmatch(r"[a-z0-9]+", i["owner"]) and re.fullmatch(r"[a-z0-9-]+", i["repo"]) for i in issues), issues[:3]
    assert len({(i["owner"], i["repo"]) for i in issues}) < len(issues)  # a repository holds several issues
    assert all("since" not in i for i in issues)
    tasks = [t for t in _tasks(out) if any(c["tool"] in ("add_issue_comment", "update_issue") for c in t["gold_calls"])]
    assert tasks
    for t in tasks:
        calls = t["gold_calls"]
        lst = next(c for c in calls if c["tool"] == "list_issues")
        write = next(c for c in calls if c["tool"] in ("add_issue_comment", "update_issue"))
        assert (write["arguments"]["owner"], write["arguments"]["repo"]) == (lst["arguments"]["owner"], lst["arguments"]["repo"])
        assert isinstance(write["arguments"]["issue_number"], int)
        assert f'owned by {lst["arguments"]["owner"]}' in t["instruction"], t["instruction"]


RECRUIT = {"tools": [  # BoondManager-style docs: a delete that names the getter to check the record with first
    _tool("list_candidates", "List all candidates.", {}, []),
    _tool("get_candidate", "Get one candidate by its ID.", {"id": _str("Candidate ID")}, ["id"]),
    _tool("delete_candidate", "Delete a candidate. Check the ID with `get_candidate` before deleting; this cannot be undone.",
          {"id": _str("Candidate ID")}, ["id"]),
    _tool("update_candidate", "Update a candidate.", {"id": _str("Candidate ID"), "note": _str("A note on the candidate")}, ["id"]),
    _tool("create_candidate", "Create a candidate.", {"first_name": _str("First name"), "last_name": _str("Last name"),
                                                      "email": _str("Email address")}, ["first_name", "last_name"]),
]}


def test_the_docs_check_before_a_delete_is_in_the_gold_path(tmp_path):
    """"Check the ID with `get_candidate` before deleting": the gold reads the candidate with that tool, with the
    key it then deletes, before the delete (review 38: six Boond and GitLab deletes skipped the check their docs
    ask for); an update whose doc names no check reads nothing extra."""
    out = compile_doc(tmp_path, "recruit", "tools_list.json", RECRUIT, 10)
    tasks = _tasks(out)
    assert_checked_before(tasks, "delete_candidate", "get_candidate", key="id")
    for t in tasks:  # the check is for deletes only: every read with it is of a candidate the task then deletes
        calls = t["gold_calls"]
        for i, c in enumerate(calls):
            if c["tool"] == "get_candidate":
                assert any(d["tool"] == "delete_candidate" and d["arguments"]["id"] == c["arguments"]["id"] for d in calls[i + 1:]), calls


def test_people_in_a_relation_and_commit_hashes_are_what_they_say():
    """A task's `followers`, a card's `assignees`, a channel's `members` are people's addresses and a commit `sha` is
    40 hex digits (review 38: followers "insurance claim", assignees "conference travel", sha "website redesign")."""
    import random

    from forgec.stdlib.values import generate_value

    for name in ("followers", "assignees", "members", "watcher", "reviewer"):
        v = generate_value({"type": "list", "items": {"type": "str"}} if name.endswith("s") else {"type": "str"}, name,
                           random.Random(1), entity="Task")
        for x in (v if isinstance(v, list) else [v]):
            assert re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", x), (name, v)
    sha = generate_value({"type": "str"}, "sha", random.Random(2), entity="MergeRequest", doc="The HEAD of the merge request")
    assert re.fullmatch(r"[0-9a-f]{40}", sha), sha
    assert not re.fullmatch(r"[0-9a-f]{40}", generate_value({"type": "str"}, "title", random.Random(2), entity="MergeRequest"))


def _op(op_id: str, summary: str, **kw) -> dict:
    return {"operationId": op_id, "summary": summary, **kw}


_BOOKMARK = {"type": "object", "required": ["id", "createdAt", "archived", "content"], "properties": {
    "id": {"type": "string"}, "createdAt": {"type": "string"}, "title": {"type": "string", "nullable": True},
    "archived": {"type": "boolean"}, "note": {"type": "string", "nullable": True},
    "content": {"type": "object", "properties": {"type": {"type": "string", "enum": ["link", "asset"]}, "url": {"type": "string"},
                                                 "assetType": {"type": "string", "enum": ["image", "pdf"]}}}}}
_JSON = "application/json"
BOOKMARKS = {"openapi": "3.0.0", "info": {"title": "Bookmarks", "version": "1"}, "paths": {
    "/bookmarks": {
        "get": _op("listBookmarks", "Get all bookmarks", responses={"200": {"description": "ok", "content": {_JSON: {"schema": {
            "type": "object", "properties": {"bookmarks": {"type": "array", "items": {"$ref": "#/components/schemas/Bookmark"}}}}}}}}),
        "post": _op("createBookmark", "Create a new bookmark", requestBody={"content": {_JSON: {"schema": {"type": "object", "properties": {
            "title": {"type": "string"}, "url": {"type": "string"}, "assetType": {"type": "string", "enum": ["image", "pdf"]},
            "crawlPriority": {"type": "string", "enum": ["low", "normal"]}}}}}},
            responses={"201": {"description": "ok", "content": {_JSON: {"schema": {"$ref": "#/components/schemas/Bookmark"}}}}})},
    "/bookmarks/{bookmarkId}": {
        "parameters": [{"name": "bookmarkId", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": _op("getBookmark", "Get a single bookmark", responses={"200": {"description": "ok", "content": {_JSON: {"schema": {
            "$ref": "#/components/schemas/Bookmark"}}}}}),
        "patch": _op("updateBookmark", "Update a bookmark", requestBody={"content": {_JSON: {"schema": {"type": "object", "properties": {
            "title": {"type": "string"}, "note": {"type": "string"}, "archived": {"type": "boolean"}}}}}},
            responses={"200": {"description": "ok", "content": {_JSON: {"schema": {"$ref": "#/components/schemas/Bookmark"}}}}}),
        "delete": _op("deleteBookmark", "Delete a bookmark", responses={"204": {"description": "ok"}})}},
    "components": {"schemas": {"Bookmark": _BOOKMARK}}}


def test_a_documented_record_holds_what_its_schema_says(tmp_path):
    """Karakeep's `createBookmark(url, assetType, crawlPriority)` returns a Bookmark whose schema keeps `url` and
    `assetType` inside `content` and has no `crawlPriority`: the world's bookmarks hold neither flat, and no task
    names a bookmark by them ("my bookmark with the image asset type", "only if its crawl priority is low", review
    39: five Karakeep tasks rejected); what the schema gives (title, note, archived) stays."""
    out = compile_doc(tmp_path, "bookmarks", "openapi.json", BOOKMARKS, 12)
    env = next((out / "src").rglob("env.forge")).read_text()
    block = re.search(r"entity Bookmark\b[^{]*\{(.*?)\n  \}", env, re.S)
    assert block, env[:1500]
    fields = set(re.findall(r"^\s*(\w+):", block.group(1), re.M))
    assert {"title", "note", "archived", "content"} <= fields, fields
    assert not fields & {"url", "assetType", "crawlPriority"}, fields
    for t in _tasks(out):
        assert not re.search(r"bookmark (?:with|whose) [^.,]*asset type|crawl priority is", t["instruction"], re.I), t["instruction"]


POSTMAN = {"tools": [  # Postman's MCP server: a collection is made from a `collection` object with an `info` part
    {**_tool("getWorkspaces", "Gets all workspaces you have access to.", {}, []),
     "outputSchema": {"type": "object", "properties": {"workspaces": {"type": "array", "items": {"type": "object", "properties": {
         "id": _str("The workspace's ID."), "name": _str("The workspace's name.")}}}}}},
    _tool("createCollection", "Creates a collection in a workspace.",
          {"workspace": _str("The workspace's ID."),
           "collection": {"type": "object", "required": ["info"], "properties": {
               "info": {"type": "object", "required": ["name"], "properties": {
                   "name": _str("The collection's name."), "description": _str("The collection's description.")}},
               "item": {"type": "array", "items": {"type": "object", "properties": {
                   "name": _str("The request's name."), "description": _str("The request's description.")}}},
               "event": {"type": "array", "items": {"type": "object", "properties": {
                   "listen": {"type": "string", "enum": ["test", "prerequest"]}}}}}}},
          ["workspace", "collection"]),
]}


def test_a_new_record_passed_as_an_object_is_called_by_its_name(tmp_path):
    """`createCollection(collection: {info: {name}, item: [...], event: [...]})`: "create a collection called X",
    not "with info name X ... collection description ... the collection listen set to test" (review 39); the
    collection's optional requests and event scripts are sub-records nobody asks for in the same breath."""
    out = compile_doc(tmp_path, "postman", "tools_list.json", POSTMAN, 8)
    made = [t for t in _tasks(out) if any(c["tool"] == "createCollection" for c in t["gold_calls"])]
    assert made
    for t in made:
        coll = next(c for c in t["gold_calls"] if c["tool"] == "createCollection")["arguments"]["collection"]
        assert f'collection called "{coll["info"]["name"]}"' in t["instruction"], t["instruction"]
        assert not {"item", "event"} & set(coll), coll
        assert not re.search(r"info name|collection name|listen", t["instruction"]), t["instruction"]


_SLIDER = {"type": "object", "required": ["id", "type", "title", "enabled"], "properties": {
    "id": {"type": "number"}, "type": {"type": "number", "description": "The slider's kind."},
    "title": {"type": "string", "nullable": True}, "isBuiltIn": {"type": "boolean"}, "enabled": {"type": "boolean"},
    "description": {"type": "string"},  # a text of its own: no setting (values._setting), so a topic may title it
    "data": {"type": "string", "nullable": True}}}
SLIDERS = {"openapi": "3.0.0", "info": {"title": "Discover", "version": "1"}, "paths": {
    "/sliders": {
        "get": _op("getSliders", "Returns all discovery sliders", responses={"200": {"description": "ok", "content": {_JSON: {"schema": {
            "type": "array", "items": {"$ref": "#/components/schemas/Slider"}}}}}}),
        "post": _op("addSlider", "Add a new slider and return the newly created slider.", requestBody={"content": {_JSON: {"schema": {
            "type": "object", "properties": {"title": {"type": "string"}, "type": {"type": "number"}, "data": {"type": "string"}}}}}},
            responses={"200": {"description": "ok", "content": {_JSON: {"schema": {"$ref": "#/components/schemas/Slider"}}}}})},
    "/sliders/{sliderId}": {
        "parameters": [{"name": "sliderId", "in": "path", "required": True, "schema": {"type": "number"}}],
        "delete": _op("deleteSlider", "Delete a slider", responses={"200": {"description": "ok"}})}},
    "components": {"schemas": {"Slider": _SLIDER}}}


def test_a_new_record_gets_what_its_schema_requires(tmp_path):
    """Overseerr's `addSlider` body leaves `title`, `type`, `data` optional but a slider's schema requires `type`:
    no gold call makes a slider without its type (review 39: "a slider created without type, which the response
    schema requires"). A kind given as a bare number is nothing a person can say, so no task makes one; given as
    words, every one that makes a slider says its kind. The env stores the type given instead of a default 0."""
    out = compile_doc(tmp_path, "sliders", "openapi.json", SLIDERS, 12)
    assert not [c for t in _tasks(out) for c in t["gold_calls"] if c["tool"] == "addSlider"]
    worded = json.loads(json.dumps(SLIDERS).replace('"type": {"type": "number"}', '"type": {"type": "string", "enum": ["trending", "upcoming", "genre"]}'))
    worded["components"]["schemas"]["Slider"]["properties"]["type"] = {"type": "string", "enum": ["trending", "upcoming", "genre"]}
    out2 = compile_doc(tmp_path / "worded", "sliders", "openapi.json", worded, 12)
    made = [(t, c) for t in _tasks(out2) for c in t["gold_calls"] if c["tool"] == "addSlider"]
    assert made
    for t, c in made:
        kind = c["arguments"]["body"]["type"]
        assert kind in t["instruction"], (kind, t["instruction"])
    env = next((out / "src").rglob("env.forge")).read_text()
    assert re.search(r"if body\.type != null \{\s*set created\.type = body\.type", env), env[env.find("tool addSlider"):][:600]
