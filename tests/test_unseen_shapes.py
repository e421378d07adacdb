"""Doc shapes found on doc sets nobody tuned on (corpus-broad, untuned), each a general rule.

* A lister whose one required parameter is a documented choice with an "all" value
  (`list_tasks(status: "all"|"pending"|...)`, GitHub's `state=all`) lists every record: before,
  only reads with no required parameter counted, and a task manager built this way yielded
  nothing ("no read lists the records a write acts on").
* "does not allow deleting completed tasks": a hard delete refuses the state the docs name.
* A condition on a documented state ("but only if its status is pending") is a lookup and a
  decision, for records with no number to compare.
* The docs' bare plural object ("Delete incomplete tasks") takes the user's record.

Checked against the world the tasks start from (an independent reading of the state), not
against the sampler's own notes.
"""

from __future__ import annotations

import json
import re
import uuid
import subprocess
import sys
from pathlib import Path

import pytest

STATUS = ["all", "pending", "in_progress", "completed"]
TOOLS = {"tools": [
    {"name": "list_tasks", "description": "List the tasks in the plan, filtered by status.",
     "inputSchema": {"type": "object", "required": ["status"], "properties": {
         "status": {"type": "string", "enum": STATUS, "description": "Which tasks to list; 'all' lists every task."}}}},
    {"name": "get_task_detail", "description": "Show the full details of one task.",
     "inputSchema": {"type": "object", "required": ["taskId"], "properties": {
         "taskId": {"type": "string", "description": "The task's unique ID."}}}},
    {"name": "delete_task", "description": "Delete incomplete tasks, but does not allow deleting completed tasks.",
     "inputSchema": {"type": "object", "required": ["taskId"], "properties": {
         "taskId": {"type": "string", "description": "The ID of the task to delete."}}}},
    {"name": "update_task", "description": "Update a task's name, description or notes.",
     "inputSchema": {"type": "object", "required": ["taskId"], "properties": {
         "taskId": {"type": "string", "description": "The ID of the task to update."},
         "name": {"type": "string", "description": "The task's new name."},
         "description": {"type": "string", "description": "The task's new description."},
         "notes": {"type": "string", "description": "New notes for the task."}}}},
]}


def _compile(root: Path, env: str, tools: dict | None = None, n: int = 8, lines: list | None = None) -> Path:
    """Write one doc set under `root/docs/<env>` (an MCP tools list, or BFCL lines), compile it with the
    real CLI and return the build folder."""
    docs = root / "docs" / env
    docs.mkdir(parents=True)
    if lines is not None:
        (docs / "functions.json").write_text("\n".join(json.dumps(f) for f in lines) + "\n")
    else:
        (docs / "tools_list.json").write_text(json.dumps(tools))
    out = root / "build"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(root / "docs"), "-o", str(out), "-n", str(n), "-q"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


@pytest.fixture(scope="module")
def planner(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("planner")
    out = _compile(root, "planner", TOOLS, n=16)
    return out


def _tasks(build: Path) -> list[dict]:
    return [json.loads(line) for line in (build / "tasks" / "planner.jsonl").read_text().splitlines() if line.strip()]


def _world(build: Path) -> dict:
    return json.loads((build / "states" / "planner.json").read_text())["entities"]["Task"]


def test_a_status_all_read_lists_every_task(planner):
    tasks = _tasks(planner)
    assert len(tasks) >= 6, "a task manager with a status=all lister yields tasks"
    listed = [c for t in tasks for c in t["gold_calls"] if c["tool"] == "list_tasks"]
    assert listed and all(c["arguments"] == {"status": "all"} for c in listed)
    # "all" is how the agent lists, nothing the user says
    assert not any("status is all" in t["instruction"].lower() for t in tasks)
    assert not any("status" in t["user"]["facts"] and t["user"]["facts"]["status"] == "all" for t in tasks)


def test_deleting_a_completed_task_is_refused_and_never_gold(planner):
    src = (planner / "src" / "planner" / "env.forge").read_text()
    body = src[src.index("tool delete_task"):]
    body = body[:body.index("\n  }\n")]
    assert 'require taskId.status != "completed"' in body
    world = _world(planner)
    for t in _tasks(planner):
        for c in t["gold_calls"]:
            if c["tool"] == "delete_task":
                assert world[c["arguments"]["taskId"]]["status"] != "completed", t["id"]


def test_state_conditions_agree_with_the_world(planner):
    """"but only if its status is X": the gold acts exactly when the named task has that status in the
    world the task starts from (read here from the state file, not from the sampler)."""
    world = _world(planner)
    by_name = {r["name"]: r for r in world.values()}
    seen = 0
    for t in _tasks(planner):
        for intent in t["user"]["scenario"]["intents"]:
            cond = intent.get("condition") or ""
            if not cond.startswith("its status is "):
                continue
            seen += 1
            wanted = cond.removeprefix("its status is ").replace(" ", "_")
            name = json.loads(intent["text"][intent["text"].index('"'):intent["text"].index('"', intent["text"].index('"') + 1) + 1])
            rec = by_name[name]
            acted = [c for c in t["gold_calls"] if c["tool"] in ("delete_task", "update_task") and c["arguments"]["taskId"] == rec["task_id"]]
            assert bool(acted) == (rec["status"] == wanted), (t["id"], cond, rec["status"])
    assert seen >= 1, "some task asks for a state condition"


def test_the_docs_bare_plural_object_takes_the_users_record(planner):
    deletes = [t["instruction"] for t in _tasks(planner) if any(c["tool"] == "delete_task" for c in t["gold_calls"])]
    assert deletes and all("incomplete tasks" not in x for x in deletes)
    assert all('delete my task called "' in x for x in deletes)


# --------------------------------------------------------------------------- a read-only finder (BFCL / SGD style)

FINDER = [
    {"name": "Media_3_FindMovies", "description": "Find movies to watch online by genre and, optionally, by a star.",
     "parameters": {"type": "dict", "required": ["genre"], "properties": {
         "genre": {"type": "string", "description": "The genre of the movie.", "enum": ["Comedy", "Horror", "Drama", "Action", "Family"]},
         "starring": {"type": "string", "description": "An actor in the movie. Use 'Any' for no preference.", "default": "Any"}}}},
    {"name": "Media_3_PlayMovie", "description": "Stream a movie online with subtitles in a chosen language.",
     "parameters": {"type": "dict", "required": ["title"], "properties": {
         "title": {"type": "string", "description": "The exact title of the movie to stream."},
         "subtitle_language": {"type": "string", "description": "The subtitle language.", "enum": ["English", "Spanish"], "default": "English"}}}},
]


@pytest.fixture(scope="module")
def movies(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("movies")
    out = _compile(root, "movies", n=12, lines=FINDER)
    return out


def test_sgd_numbered_names_and_no_dictated_search_counts(movies):
    """The verb after the service's number makes FindMovies a search; a count of one search whose
    criteria the user dictates is no task (blind review 14 rejected all six as trivial: rubric 3)."""
    src = (movies / "src" / "movies" / "env.forge").read_text()
    assert "@search\n  tool Media_3_FindMovies(" in src
    tasks = [json.loads(x) for x in (movies / "tasks" / "movies.jsonl").read_text().splitlines() if x.strip()]
    assert not any([c["tool"] for c in t["gold_calls"]] == ["Media_3_FindMovies"] for t in tasks)


def test_a_lister_whose_result_wraps_the_list_lists_every_record():
    """`read_graph() -> {nodes: [...], relations: [...]}` lists every node: the list inside the result
    is found by running the read once on the world (before, only a bare list counted)."""
    from conftest import BROAD
    from forgec import scenario as S
    from forgec.envsource import load_envs
    from forgec.graph import build_graph
    from forgec.sample import SampleConfig

    (le,), _ = load_envs(BROAD / "npm_itseasy21_mcp_knowledge_graph", with_module=True, seed=1, state_size=12)
    s = S._Sampler(le.decl, le.module, le.world, build_graph(le.decl, exclude=le.exclude, writes=le.writes), SampleConfig(tasks_per_env=2, seed=1))
    assert s.m.lister_all.get("Entity") == "read_graph" and s.m.lister_path["Entity"] == "nodes"
    sc = S._Scenario(s.m, __import__("random").Random(0), None)
    expr, recs, _ = s.list_all(sc, "Entity")
    world = le.world["entities"]["Entity"]
    assert isinstance(expr, S.A.Attr) and expr.name == "nodes"
    assert sorted(r["name"] for r in recs) == sorted(r["name"] for r in world.values())


@pytest.mark.parametrize("name,asked", [("id", False), ("lastModifiedDateTime", False), ("createdDateTime", False), ("changeKey", False),
                                        ("updated_at", False), ("@odata.etag", False), ("subject", True), ("user_id", True),
                                        ("end_date_time", True), ("version", True)])
def test_a_user_never_asks_for_what_the_server_keeps(name, asked):
    from forgec.lang import ast as A
    from forgec.scenario import _one_more_optional
    assert _one_more_optional(A.PrimType("str"), 0, name) is asked



def test_deeply_nested_records_make_a_bounded_world():
    """Six record types, each holding three lists of the next and an inline object (an OpenAPI spec's
    schemas nest dozens): a record of the world stays small. Unbounded, each level multiplied the
    values by up to 9 (overseerr's state stage ran for more than 20 minutes; 35 s for the whole compile now)."""
    import random

    from forgec.stdlib.values import _record_value

    decl = {}
    for i in range(6):
        nxt = {"type": "list", "items": {"type": "record", "name": f"R{i + 1}"}}
        fields = {"label": {"type": "str"}, "meta": {"type": "object", "fields": {"note": {"type": "str"}}}}
        if i < 5:
            fields.update({"a": nxt, "b": nxt, "c": nxt})
        decl[f"R{i}"] = {"fields": fields}

    def nodes(v) -> int:
        return 1 + (sum(nodes(x) for x in v.values()) if isinstance(v, dict) else sum(nodes(x) for x in v) if isinstance(v, list) else 0)

    sizes = [nodes(_record_value("R0", decl, {}, random.Random(seed), None, "Thing")) for seed in range(20)]
    assert max(sizes) < 400, sizes  # two levels of 1-3 items, then one item per list, then none (unbounded: ~40,000)
    assert min(sizes) > 10  # still a record with its nested parts


def test_no_task_lists_the_same_records_twice(planner):
    """An agent that listed the tasks, then deleted one, still knows the others' ids: the gold path
    does not list again (before: a second `list_tasks` after every write, rubric 2 'redundant')."""
    tasks = _tasks(planner)
    multi = [t for t in tasks if sum(c.get("write", False) for c in t["gold_calls"]) >= 2]
    assert multi, "the planner yields tasks with two writes"
    for t in tasks:
        lists = [c for c in t["gold_calls"] if c["tool"] == "list_tasks"]
        assert len(lists) <= 1, (t["instruction"], [c["tool"] for c in t["gold_calls"]])


def test_updates_read_as_sentences_and_new_names_are_free(planner):
    """'change my task called "X": set its notes to "..."', never 'notes "..."' slots; a new name
    is no other task's name in the world the write lands in."""
    world = _world(planner)
    seen = 0
    for t in _tasks(planner):
        assert not re.search(r'[:,] (notes|description|name) "', t["instruction"]), t["instruction"]
        for c in t["gold_calls"]:
            if c["tool"] == "update_task" and "name" in c["arguments"]:
                others = {r["name"].lower() for k, r in world.items() if r.get("task_id", k) != c["arguments"]["taskId"]}
                assert c["arguments"]["name"].lower() not in others, t["instruction"]
                seen += 1
        m = re.search(r'set its (notes|description) to "([^"]+)"', t["instruction"])
        if m:
            field = m.group(1)
            upd = next(c for c in t["gold_calls"] if c["tool"] == "update_task" and field in c["arguments"])
            assert upd["arguments"][field] == m.group(2)
    assert seen, "some task renames a task"


def test_settings_clause_by_hand():
    from forgec.scenario import _settings

    assert _settings([("name", "Garden project (phase 2)"), ("notes", "Call the vendor."), ("status", "IN_PROGRESS")]) == \
        'rename it to "Garden project (phase 2)" and set its notes to "Call the vendor." and its status to in progress'
    assert _settings([("is_private", False), ("notifications", True)]) == "make it no longer private and turn notifications on"


def test_keys_take_the_docs_uuid_format(tmp_path):
    """A key the docs spell as a UUID (a JSON-Schema `pattern` of 8-4-4-4-12 hex groups, or
    `format: uuid`) gets UUIDs in the world, not `task_10450` (blind review 14: 31 of 40 tasks broke
    the docs' id format). Checked with Python's own UUID parser and the docs' own regex."""
    pat = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
    tools = json.loads(json.dumps(TOOLS))
    for t in tools["tools"]:
        if "taskId" in t["inputSchema"]["properties"]:
            t["inputSchema"]["properties"]["taskId"]["pattern"] = pat
    out = _compile(tmp_path, "planner", tools, n=4)
    keys = list(_world(out))
    assert len(keys) >= 3
    for k in keys:
        assert re.fullmatch(pat, k), k
        assert str(uuid.UUID(k)) == k and uuid.UUID(k).version == 4
    for t in _tasks(out):
        for c in t["gold_calls"]:
            if "taskId" in c["arguments"]:
                assert re.fullmatch(pat, c["arguments"]["taskId"])


def test_a_bare_documented_list_bounds_the_value():
    """'Filter: draft, pending, confirmed, ...' lists an order's states as plainly as quotes would;
    a search doc naming fields ('Search by name, email, phone') lists none."""
    from forgec.gate import documented_values

    assert documented_values("Filter: draft, pending, confirmed, processing, completed, cancelled") == \
        ["draft", "pending", "confirmed", "processing", "completed", "cancelled"]
    assert documented_values("Priority: one of low, medium or high.") == ["low", "medium", "high"]
    assert documented_values("Search by name, email, phone") == []
    assert documented_values("Fields: id, name, email") == []


def test_world_records_agree_with_themselves():
    """A slug is its record's name slugged; a percentage discount is at most 100; a count typed
    `number` is whole; a list of tags holds each tag once (hand-checked values, not the generator's)."""
    import random

    from forgec.stdlib import values as V

    rec = {"name": "Vintage Blender (phase 2)", "slug": "https://x.biz/a-b", "value_type": "percentage", "value": 188.79}
    V._agreeing_fields(rec, {"name": {"type": "str"}, "slug": {"type": "str"}, "value_type": {"type": "str"}, "value": {"type": "float"}}, random.Random(0))
    assert rec["slug"] == "vintage-blender-phase-2"
    assert 0 < rec["value"] <= 100
    for seed in range(20):
        v = V.generate_value({"type": "float"}, "usage_limit", random.Random(seed))
        assert v == int(v) and 0 <= v <= 100
        tags = V.generate_value({"type": "list", "items": {"type": "str"}}, "tags", random.Random(seed))
        assert len(tags) == len(set(tags))


def test_two_states_are_not_two_adjectives():
    from forgec.scenario import Referring, describe

    assert describe("order", Referring((("fulfillment_status", "inactive"), ("status", "active")))) == \
        "my active order with the inactive fulfillment status"


def test_category_records_are_named_like_categories():
    """A project's workflow states and labels are named like categories ("In Progress", "frontend"),
    not like projects ("Press release follow-up"); each name once per world."""
    import random

    from forgec.stdlib import values as V

    c = V._Ctx(random.Random(0), V._dt.date(2024, 5, 15))
    states = [V._thing_name("name", c, "State") for _ in range(6)]
    assert set(states) <= set(V.CATEGORY_NAMES["state"]) and len(set(states)) == 6
    assert V._thing_name("name", c, "Label") in V.CATEGORY_NAMES["label"]


SHOP = {"tools": [
    {"name": "list_orders", "description": "List all orders with optional filters.",
     "inputSchema": {"type": "object", "properties": {
         "status": {"type": "string", "description": "Filter: draft, pending, confirmed, completed, cancelled"}}}},
    {"name": "create_order", "description": "Create a draft order for a product.",
     "inputSchema": {"type": "object", "required": ["product_name", "total"], "properties": {
         "product_name": {"type": "string", "description": "Name of the product ordered"},
         "total": {"type": "number", "description": "Order total in USD"},
         "placed_on": {"type": "string", "description": "Date the order was placed (YYYY-MM-DD)"}}}},
    {"name": "get_order", "description": "Get a single order by ID.",
     "inputSchema": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "description": "Order ID"}}}},
    {"name": "confirm_order", "description": "Confirm a pending order — moves it to confirmed status.",
     "inputSchema": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "description": "Order ID"}}}},
    {"name": "cancel_order", "description": "Cancel an order with an optional reason.",
     "inputSchema": {"type": "object", "required": ["id"], "properties": {
         "id": {"type": "string", "description": "Order ID"}, "reason": {"type": "string", "description": "Cancellation reason"}}}},
]}


def test_documented_states_bound_the_writes(tmp_path):
    """'Filter: draft, pending, ...' makes the order's status an enum, so 'Confirm a pending order'
    confirms pending ones only; an order that is completed or cancelled ends its life in plain English,
    so no gold path cancels or confirms one (the docs name no tool that acts there)."""
    out = _compile(tmp_path, "shop", SHOP, n=24)
    world = json.loads((out / "states" / "shop.json").read_text())["entities"]["Order"]
    assert {rec["status"] for rec in world.values()} <= {"draft", "pending", "confirmed", "completed", "cancelled"}
    tasks = [json.loads(x) for x in (out / "tasks" / "shop.jsonl").read_text().splitlines() if x.strip()]
    writes = 0
    for t in tasks:
        for c in t["gold_calls"]:
            if c["tool"] in ("confirm_order", "cancel_order"):
                if c["arguments"]["id"] not in world:
                    continue  # an order this task created
                writes += 1
                before = world[c["arguments"]["id"]]["status"]
                assert before not in ("completed", "cancelled"), (t["instruction"], before)
                if c["tool"] == "confirm_order":
                    assert before == "pending", t["instruction"]
    assert writes, "the shop yields tasks that write"


def test_review_15_wording():
    """A person named by both name parts ("called "Tara Lewis"", not "with the tara first name and the lewis
    last name"); the only record of its kind is still named by its name; the product the docs name gives
    the owner's persona."""
    from forgec.scenario import Referring, _product_name, describe, refer
    import random

    assert describe("candidate", Referring((("firstName", "Tara"), ("lastName", "Lewis")))) == 'my candidate called "Tara Lewis"'
    assert refer([{"name": "Sprint 4", "status": "open"}], 0, ["name", "status"], random.Random(0)) == Referring((("name", "Sprint 4"),))
    assert _product_name(["Schedule a downtime in Datadog", "List monitors from Datadog", "Get a trace"]) == "Datadog"
    assert _product_name(["Delete a task.", "Update the task."]) is None


def test_search_qualifiers_are_no_record_fields():
    """`keywordsType` ("the field `keywords` targets") and `narrowPerimeter` ("joins the `perimeter*`
    filters") shape a search; `status` filters by what a record holds."""
    from forgec import ir
    from forgec.synth.schema import _shapes_the_search

    def P(name, doc, kind="string"):
        return ir.Param(name=name, type=ir.Type(kind=kind), description=doc)

    params = [P("keywords", "Words to look for"), P("keywordsType", "Champ ciblé par `keywords`."),
              P("perimeterManagers", "Managers"), P("narrowPerimeter", "AND between the `perimeter*` filters", "boolean"),
              P("perimeterManagersType", "main or hr"), P("status", "Filter by status")]
    tool = ir.Tool(name="search", description="Search candidates", params=params)
    assert [p.name for p in params if _shapes_the_search(p, tool)] == ["keywordsType", "narrowPerimeter", "perimeterManagersType"]


def test_handles_and_messages():
    """A channel or a repository is named by a handle ("customer-feedback"); a message about it says
    the words ("the customer feedback"); a message's parties are addresses."""
    import random

    from forgec.stdlib import values as V

    c = V._Ctx(random.Random(0), V._dt.date(2024, 5, 15))
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", V._thing_name("name", c, "Channel"))
    assert "-" not in V.said_value("text", "The message text", random.Random(1), about="customer-feedback", noun="Message")
    rec = {"subject": "Hi", "to": ["MIA"], "cc": "x"}
    V._agreeing_fields(rec, {"subject": {"type": "str"}, "to": {"type": "list", "items": {"type": "str"}}, "cc": {"type": "str"}}, random.Random(0))
    assert all("@" in x for x in rec["to"]) and "@" in rec["cc"]
    home = {"city": "Boston", "state": "closed", "zip": "02108"}
    V._agreeing_fields(home, {k: {"type": "str"} for k in home}, random.Random(0))
    assert home["state"] == "MA"  # Boston's state, by hand
    work = {"state": "open", "email_address": "a@b.c"}
    V._agreeing_fields(work, {k: {"type": "str"} for k in work}, random.Random(0))
    assert work["state"] == "open"  # a workflow state beside an email address stays a state


def test_a_key_of_documented_length():
    """'the 8-character collection key' -> keys of 8 letters and digits (Zotero's 'KMMQDFQ4')."""
    import random

    from forgec.stdlib import values as V

    c = V._Ctx(random.Random(0), V._dt.date(2024, 5, 15))
    used: set = set()
    keys = [V.make_key("Collection", {"type": "str", "doc": "key (8 characters)"}, i, random.Random(i), c, used) for i in range(5)]
    assert all(re.fullmatch(r"[A-Z0-9]{8}", k) for k in keys) and len(set(keys)) == 5


LISTS = {"tools": [
    {"name": "list-todo-lists", "description": "Get the user's to-do lists.",
     "inputSchema": {"type": "object", "properties": {}},
     "outputSchema": {"type": "array", "items": {"type": "object", "properties": {
         "id": {"type": "string", "description": "The unique identifier of the list."},
         "displayName": {"type": "string", "description": "The name of the list."}}}}},
    {"name": "update-todo-list", "description": "Rename a to-do list.",
     "inputSchema": {"type": "object", "required": ["todoListId", "body"], "properties": {
         "todoListId": {"type": "string", "description": "Use the 'id' field of the list object as returned by list-todo-lists."},
         "body": {"type": "object", "properties": {
             "id": {"type": "string", "description": "The unique identifier of the list. Read-only."},
             "displayName": {"type": "string", "description": "The new name of the list."}}}}}},
    {"name": "delete-todo-list", "description": "Delete a to-do list.",
     "inputSchema": {"type": "object", "required": ["todoListId"], "properties": {
         "todoListId": {"type": "string", "description": "Use the 'id' field of the list object as returned by list-todo-lists."}}}},
]}


def test_the_records_own_id_is_the_key(tmp_path):
    """'Use the id field of the list object': the key a write takes is the `id` the listing shows, not a
    second synthesized `todo_list_id` beside it holding another value (review 14, Microsoft Graph)."""
    out = _compile(tmp_path, "lists", LISTS, n=8)
    forge = (out / "src" / "lists" / "env.forge").read_text()
    assert re.search(r"entity TodoList key id \{", forge), forge[:600]
    assert "todo_list_id" not in forge  # no second key beside the record's own id
    world = json.loads((out / "states" / "lists.json").read_text())["entities"]["TodoList"]
    assert world and all(rec["id"] == k for k, rec in world.items())


def test_kinds_of_thing_have_their_own_values():
    """Review 16: one pool of project topics named payment cards, emoji, organizations, a sender and
    an address's latitude. Each kind now gets a value of its kind (checked by form, by hand)."""
    import random

    from forgec.stdlib import values as V

    g = lambda n, e: V.generate_value({"type": "str"}, n, random.Random(3), entity=e)  # noqa: E731
    assert -90 <= float(g("latitude", "Address")) <= 90 and g("floor", "Address").isdigit()
    assert g("emoji_name", "Reaction") in V.EMOJI
    assert "@" in g("sender", "Message") and "@" in g("assigned_to", "WorkItem")
    assert g("author", "Book") and "@" not in g("author", "Book")  # a book's author is no address
    c = V._Ctx(random.Random(0), V._dt.date(2024, 5, 15))
    assert re.fullmatch(r"(Visa|Mastercard|Amex) ending in \d{4}", V._thing_name("name", c, "PaymentCard"))
    assert V._thing_name("name", c, "Organization") not in [t.capitalize() for t in V.TOPICS]


def test_a_time_is_said_as_a_person_says_it():
    from forgec.scenario import _say_param

    assert _say_param("event_time", "2024-05-17T18:30:00") == "event time 2024-05-17 at 18:30"
    assert _say_param("starts_at", "2024-05-29T18:00:00Z") == "starts on 2024-05-29 at 18:00 UTC"


NAMED = {"tools": [
    {"name": "list_notebooks", "description": "List all notebook names in the workspace.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "delete_notebook", "description": "Delete a notebook.",
     "inputSchema": {"type": "object", "required": ["notebook_name"], "properties": {
         "notebook_name": {"type": "string", "description": "Name of the notebook to delete"}}}},
]}


def test_a_lookup_that_only_finds_what_the_user_said_is_no_lookup(tmp_path):
    """'delete the notebook X' when a notebook's key is its name: listing first decides nothing, so
    the task is one dictated call (rubric 3; review 17 rejected 11 such tasks) and is not emitted."""
    out = _compile(tmp_path, "named", NAMED, n=8)
    tasks = [json.loads(x) for x in (out / "tasks" / "named.jsonl").read_text().splitlines() if x.strip()]
    for t in tasks:
        said = {json.dumps(v) for v in t["user"]["facts"].values()}
        writes = [c for c in t["gold_calls"] if c.get("write")]
        assert not (writes and all(json.dumps(v) in said for c in writes for v in c["arguments"].values())), t["instruction"]
    m = json.loads((out / "manifest.json").read_text())
    assert m["envs"]["named"]["stats"]["sampler_rejected"].get("dictated-call", 0) > 0


# --------------------------------------------------------------------------- records inside records (review 17, GitLab)

@pytest.fixture(scope="module")
def gitlab(tmp_path_factory) -> Path:
    """The real GitLab MCP doc set (118 tools), compiled with the CLI."""
    from conftest import BROAD
    out = tmp_path_factory.mktemp("gitlab") / "build"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(BROAD / "npm_zereight_mcp_gitlab"), "-o", str(out), "-n", "40", "-q"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_a_record_is_acted_on_in_the_project_it_lives_in(gitlab):
    """A merge request, issue or branch lives in one project: a gold call naming it names that project
    (review 17: 8 of 9 GitLab tasks paired a project with another project's merge request). Checked
    against the world the tasks start from."""
    world = json.loads((gitlab / "states" / "npm_zereight_mcp_gitlab.json").read_text())["entities"]
    homes = {"merge_request_iid": "MergeRequest", "issue_iid": "Issue", "branch_name": "Branch"}
    seen = 0
    for line in (gitlab / "tasks" / "npm_zereight_mcp_gitlab.jsonl").read_text().splitlines():
        for c in json.loads(line)["gold_calls"]:
            a = c["arguments"]
            for param, ent in homes.items():
                rec = (world.get(ent) or {}).get(str(a.get(param)))
                if "project_id" in a and rec is not None and rec.get("project_id"):
                    seen += 1
                    assert rec["project_id"] == a["project_id"], (c["tool"], a)
    assert seen >= 3, "the GitLab build acts on records inside projects"


def test_the_env_refuses_a_merge_request_named_with_another_project():
    """`create_merge_request_note(project_id, merge_request_iid)` on a merge request of another project
    fails, as GitLab answers 404; before, the env accepted it (and `unapprove_merge_request` moved the
    merge request into the project named)."""
    from conftest import BROAD
    from forgec.envsource import load_envs
    (le,), _ = load_envs(BROAD / "npm_zereight_mcp_gitlab", with_module=True, seed=3, state_size=12)
    mrs = le.world["entities"]["MergeRequest"]
    projects = sorted(le.world["entities"]["Project"])
    mr = next(r for r in mrs.values() if r.get("project_id") in projects)
    other = next(p for p in projects if p != mr["project_id"])
    env = le.module.Env(le.world)
    bad = env.step("create_merge_request_note", {"project_id": other, "merge_request_iid": mr["merge_request_iid"], "body": "Looks good."})
    assert isinstance(bad, BaseException) or "not found" in json.dumps(bad, default=str)
    env = le.module.Env(le.world)
    good = env.step("create_merge_request_note", {"project_id": mr["project_id"], "merge_request_iid": mr["merge_request_iid"], "body": "Looks good."})
    assert not isinstance(good, BaseException) and good.get("body") == "Looks good."
    env = le.module.Env(le.world)
    env.step("unapprove_merge_request", {"project_id": other, "merge_request_iid": mr["merge_request_iid"]})
    assert env.state["entities"]["MergeRequest"][str(mr["merge_request_iid"])]["project_id"] == mr["project_id"]


def test_a_value_the_docs_give_examples_of_is_one_of_them(gitlab):
    """"Name of the emoji without colons (e.g. 'thumbsup', 'rocket', 'eyes')": an emoji, never a made-up
    title (review 17: an emoji reaction called "Design review draft"). Examples do not bind the gate."""
    from forgec.gate import documented_examples
    assert documented_examples("Name of the emoji without colons (e.g. 'thumbsup', 'rocket', 'eyes')") == ("thumbsup", "rocket", "eyes")
    assert documented_examples("The file, e.g. '/src/a.py' or '/src/b.py'") == ()  # paths are no examples to reuse
    assert documented_examples("The emoji name.") == ()
    names = [c["arguments"]["name"] for line in (gitlab / "tasks" / "npm_zereight_mcp_gitlab.jsonl").read_text().splitlines()
             for c in json.loads(line)["gold_calls"] if "emoji_reaction" in c["tool"] and c["tool"].startswith("create")]
    assert names and all(n in ("thumbsup", "rocket", "eyes") for n in names)


def test_a_link_joins_two_records_never_one_to_itself(gitlab):
    for line in (gitlab / "tasks" / "npm_zereight_mcp_gitlab.jsonl").read_text().splitlines():
        for c in json.loads(line)["gold_calls"]:
            a = c["arguments"]
            if "target_issue_iid" in a:
                assert (a["project_id"], a["issue_iid"]) != (a.get("target_project_id"), a["target_issue_iid"])


# --------------------------------------------------------------------------- review 18 (Matrix, Shortcut)

MEDIA = {"tools": [
    {"name": "list_rooms", "description": "List the rooms you are in.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "create_room", "description": "Create a private room only when explicitly requested.",
     "inputSchema": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "description": "The room's name."}}}},
    {"name": "send_media", "description": "Send uploaded media to a room only when explicitly requested.",
     "inputSchema": {"type": "object", "required": ["room_id", "media_url", "filename"], "properties": {
         "room_id": {"type": "string", "description": "The room.", "pattern": "^![^\\s:/?#]+(?::[^\\s/?#]+)?$"},
         "media_url": {"type": "string", "pattern": "^[Mm][Xx][Cc]://[A-Za-z0-9.-]+/[A-Za-z0-9_-]+$"},
         "filename": {"type": "string", "description": "The file's name."},
         "content_type": {"type": "string", "default": "application/octet-stream", "description": "The file's content type."}}}},
    {"name": "create_subtask", "description": "Create a new sub-task story.",
     "inputSchema": {"type": "object", "required": ["parent_story_id", "name"], "properties": {
         "parent_story_id": {"type": "integer", "description": "The parent story's ID."},
         "name": {"type": "string", "description": "The sub-task's name."}}}},
    {"name": "list_stories", "description": "List your stories.", "inputSchema": {"type": "object", "properties": {}}},
]}


def test_a_documented_pattern_is_kept_and_obeyed(tmp_path):
    """A JSON-Schema `pattern` is kept in the parameter's description (everyone who reads the docs sees it),
    and no gold value breaks it (review 18: an https link where the docs require `mxc://`). Checked with
    the docs' own patterns, not the sampler's."""
    from forgec.frontends import read_file
    (tmp_path / "tools_list.json").write_text(json.dumps(MEDIA))
    tools, _ = read_file(tmp_path / "tools_list.json")
    p = {q.name: q for q in next(t for t in tools if t.name == "send_media").params}
    assert "(pattern: ^[Mm][Xx][Cc]://" in p["media_url"].description
    assert p["filename"].description == "The file's name."  # no pattern, nothing added
    out = _compile(tmp_path / "c", "media", MEDIA, n=12)
    pats = {n: re.compile(s["pattern"]) for n, s in MEDIA["tools"][2]["inputSchema"]["properties"].items() if "pattern" in s}
    tasks = [json.loads(x) for x in (out / "tasks" / "media.jsonl").read_text().splitlines()]
    assert tasks
    # the sampler's own value for each parameter of send_media: one that breaks the pattern is never given
    import random
    from forgec import scenario as S
    from forgec.envsource import load_envs
    from forgec.graph import build_graph
    from forgec.sample import SampleConfig
    (le,), _ = load_envs(out, with_module=True)
    smp = S._Sampler(le.decl, le.module, le.world, build_graph(le.decl, exclude=le.exclude, writes=le.writes), SampleConfig(tasks_per_env=2, seed=1))
    sc = S._Scenario(smp.m, random.Random(0), None)
    send = next(t for t in le.decl.tools if t.name == "send_media")
    made = {q.name: smp.value(sc, send, q.name, S.strip_optional(q.type), {}, q.doc) for q in send.params}
    assert made["media_url"] is S._NONE  # an https link is what the generator knows; the docs want mxc://
    assert isinstance(made["filename"], str) and made["filename"]
    for t in tasks:
        assert " only" not in t["instruction"].split("—")[0].split(", but")[0], t["instruction"]  # "create a private room only"
        for c in t["gold_calls"]:
            for n, v in c["arguments"].items():
                if c["tool"] == "send_media" and n in pats:
                    assert pats[n].fullmatch(v), (n, v)


def test_a_clause_drops_its_dangling_only():
    from forgec.realize import clause
    assert clause("Create a private room only when explicitly requested.").text == "create a private room"
    assert clause("Send uploaded media only when explicitly requested, optionally in a thread.").text == "send uploaded media"


def test_a_content_type_is_a_mime_type():
    import random
    from forgec.stdlib.values import said_value
    for seed in range(5):
        v = said_value("content_type", "The file's content type.", random.Random(seed))
        assert re.fullmatch(r"[a-z]+/[a-z0-9.+-]+", v), v


def test_a_new_record_of_the_clause_is_not_the_parent(tmp_path):
    """"Create a new sub-task story" under a story: the clause's "a new ... story" is the new record; the
    parent is said after it (review 18: "create my story called X called Y")."""
    out = _compile(tmp_path, "media", MEDIA, n=12)
    said = [json.loads(x)["instruction"] for x in (out / "tasks" / "media.jsonl").read_text().splitlines()]
    subs = [s for s in said if "sub-task" in s]
    assert subs, said
    for s in subs:
        assert re.search(r'create a new sub-task story called "[^"]+" for my story called "[^"]+"', s), s


@pytest.mark.parametrize("state,said", [("future", "in the future state"), ("draft", "in the draft state"), ("closed", "closed"),
                                        ("pending", "pending"), ("archived", "archived"), ("in progress", "in progress")])
def test_a_state_after_are_reads_as_english(state, said):
    """"how many of my sprints are future" (review 17, 18): a word English also uses as a noun is said as a state."""
    from forgec.scenario import _predicate
    assert _predicate(state, "state") == said


def test_a_condition_hangs_on_where_a_record_stands(gitlab):
    """"only if its merge method is merge", "only if its reviewer state is reviewed" (reviews 17, 18): a
    setting is no condition a person puts on a request; its status, stage or priority is."""
    for line in (gitlab / "tasks" / "npm_zereight_mcp_gitlab.jsonl").read_text().splitlines():
        for m in re.finditer(r"only if (?:its|the \w+'s) ([a-z ]+?) is ", json.loads(line)["instruction"]):
            assert re.search(r"(^| )(status|state|stage|phase|priority|severity|urgency)$", m.group(1)) and not m.group(1).startswith("reviewer"), m.group(0)


def test_a_list_read_only_for_a_write_left_out_is_not_reused(tmp_path):
    """An intent whose condition fails drops the lookups only its write needed; a later intent must not
    reuse a list read among them (the PowerPoint doc set: a blueprint filtered `presentations`, a node
    already dropped, and the whole compile exited 1 with `unknown-node`). Compiled as the corpus is."""
    from conftest import BROAD
    out = tmp_path / "b"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(BROAD / "pypi_office_powerpoint_mcp_server"), "-o", str(out), "-n", "120", "-q"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "unknown-node" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-2000:]
    # the sampler still reaches its writes: most are refused as coordinates read out (`add_table` with slide index,
    # left, top, width, height: blind review 26), counted by reason rather than emitted
    stats = json.loads((out / "manifest.json").read_text())["envs"]["pypi_office_powerpoint_mcp_server"]["stats"]
    assert stats["sampler_rejected"].get("dictated-numbers", 0) >= 20, stats["sampler_rejected"]
    for line in (out / "tasks" / "pypi_office_powerpoint_mcp_server.jsonl").read_text().splitlines():
        t = json.loads(line)
        for c in t["gold_calls"]:
            nums = [v for v in (c["arguments"] or {}).values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
            assert len(nums) < 4 or not c["write"], (t["instruction"], c)
