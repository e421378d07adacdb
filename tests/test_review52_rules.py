"""Rules from review 51's leftovers (eleventh session): a record's states are the ones its docs name (in a filter's
parenthesis, a tool's "(only in Draft status)", another tool's participle), not an inferred `active`; a flag's own doc
may forbid an act ("Internal applications should not be deleted"). Each test states the docs' words and checks what a
reader of them would take (hand-written expectations), not the compiler's own output."""

from __future__ import annotations

import json

from forgec.frontends import read_paths
from forgec.gate import documented_values
from forgec.lang import ast as A
from forgec.synth import prose
from forgec.synth.schema import infer_schema


from conftest import mcp_tool as _tool, schema_of as _schema  # noqa: E402


S = {"type": "string"}

def test_states_listed_in_a_filters_parenthesis_are_the_records_states():
    """A status filter's "(Draft, To Deliver and Bill, Completed, Cancelled, etc.)" lists the states, multi-word ones
    included; before, "To Deliver and Bill" broke the reading and sales orders were generated "active"/"inactive"."""
    assert documented_values("Filter by status (Draft, To Deliver and Bill, Completed, Cancelled, etc.)") == \
        ["Draft", "To Deliver and Bill", "Completed", "Cancelled"]
    assert documented_values("Filter by status (Open, Working, Pending Review, Overdue, Completed, Cancelled)") == \
        ["Open", "Working", "Pending Review", "Overdue", "Completed", "Cancelled"]
    # prose in parentheses is no list of states
    assert documented_values("The status (see the docs for more, or ask an admin)") == []


def test_prose_states_the_state_a_change_needs_or_refuses():
    only_in = prose.read("Update an existing Sales Order (only in Draft status). Pass only the fields you want to change.")
    assert [(f.kind, f.value) for f in only_in] == [("require", "Draft")]
    non = prose.read("Only works on submitted (non-completed) Sales Orders.")
    assert [(f.kind, f.value) for f in non] == [("forbid", ("completed",))]
    back = prose.read("Revert a payroll timesheet to draft in Xero by its ID.")
    assert [(f.kind, f.value) for f in back] == [("status", "draft")]
    # "revert" with no state after it says none
    assert prose.read("Revert the repository to a commit.") == ()


def test_a_sales_order_moves_through_the_states_its_docs_name(tmp_path):
    """Submit needs a Draft order and leaves it 'To Deliver and Bill'; update needs a Draft one; cancel needs a
    submitted one, i.e. the state `submit` leaves it in (review 51: ERPNext 0/5, edits of an inferred "active" order,
    and submit only logged its call)."""
    from conftest import BROAD

    envs, _ = read_paths([BROAD / "npm_casys_mcp_erpnext"])  # the real docs: the tool names read as in the whole set
    s = infer_schema(envs[0])
    e = s.entities["SalesOrder"]
    assert A.EnumType(("Draft", "To Deliver and Bill", "Completed", "Cancelled")) == e.fields["status"].type
    submit, update, cancel = (s.views[f"erpnext_sales_order_{x}"] for x in ("submit", "update", "cancel"))
    assert (submit.status_allowed or [submit.status_pre], submit.status_post) == (["Draft"], "To Deliver and Bill")
    assert update.status_pre == "Draft"
    assert cancel.status_post == "Cancelled"
    assert cancel.status_allowed == ["To Deliver and Bill"]


def test_a_revert_names_the_state_records_start_in(tmp_path):
    """Xero's "Revert a payroll timesheet to draft": timesheets are draft or approved; no made-up "active"."""
    s = _schema(tmp_path, [
        _tool("list_timesheets", "List all payroll timesheets in Xero.", {}),
        _tool("approve_timesheet", "Approve a payroll timesheet in Xero by its ID.",
              {"timesheetID": {**S, "description": "The ID of the timesheet to approve."}}, ["timesheetID"]),
        _tool("revert_timesheet", "Revert a payroll timesheet to draft in Xero by its ID.",
              {"timesheetID": {**S, "description": "The ID of the timesheet to revert."}}, ["timesheetID"]),
    ])
    t = s.entities["Timesheet"].fields["status"].type
    assert isinstance(t, A.EnumType) and t.values[0] == "draft" and "active" not in t.values, t
    assert s.views["revert_timesheet"].status_post == "draft"


def test_a_flag_whose_doc_forbids_the_act_guards_it(tmp_path):
    """Gotify's Application `internal: bool` "Internal applications should not be deleted." (review 51: a task deleted
    one): deleting an application requires it not internal, citing the sentence."""
    from conftest import compile_doc

    app = {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": S,
        "internal": {"type": "boolean", "description": "Whether the application is an internal application. Internal applications should not be deleted."}}}
    docs = {"tools": [
        {**_tool("list_applications", "List the applications.", {}),
         "outputSchema": {"type": "object", "properties": {"applications": {"type": "array", "items": app}}}},
        _tool("delete_application", "Delete an application.", {"id": {"type": "integer", "description": "the application id"}}, ["id"]),
        _tool("update_application", "Update an application.", {"id": {"type": "integer", "description": "the application id"}, "name": S}, ["id"]),
    ]}
    out = compile_doc(tmp_path, "apps", "tools_list.json", docs, 2)
    forge = next(out.glob("src/*/env.forge")).read_text()
    delete = forge[forge.index("tool delete_application"):]
    delete = delete[: delete.index("\n  }\n")]
    assert '// from: "Internal applications should not be deleted."' in delete and "require id.internal != true" in delete, delete
    update = forge[forge.index("tool update_application"):]
    assert "internal != true" not in update[: update.index("\n  }\n")]  # only the act the sentence names


def test_a_filter_by_the_records_own_key_is_no_field(tmp_path):
    """Xero's `list_payments(paymentId)` filters by the payment's own id: before, payments held a `paymentId` pointing
    at another payment."""
    s = _schema(tmp_path, [
        _tool("list_payments", "List payments in Xero.", {"paymentId": S, "invoiceId": S}),
        _tool("create_payment", "Create a payment against an invoice in Xero.", {"invoiceId": S, "amount": {"type": "number"}}, ["invoiceId", "amount"]),
        _tool("list_invoices", "List invoices in Xero.", {}),
    ])
    e = s.entities["Payment"]
    assert "paymentId" not in e.fields and "payment_id" not in [f for f in e.fields if f != e.key], list(e.fields)


def test_a_state_shown_capitalized_is_written_lower_case_before_the_noun():
    """ERPNext shows "Draft"; a person writes "my draft sales order" (and the realizer read the capitalized "Draft"
    as the start of a second sentence)."""
    from forgec.scenario import Referring, describe

    assert describe("sales order", Referring(attrs=(("status", "Draft"),))) == "my draft sales order"
    assert describe("task", Referring(attrs=(("status", "Overdue"),))) == "my overdue task"
    # a state that is no adjective still goes after the noun, as the product spells it
    assert describe("task", Referring(attrs=(("status", "Pending Review"),))) == 'my task whose status is "Pending Review"'


def test_a_priority_number_is_no_threshold():
    """"only if its priority is less than 1" on Linear's "Priority (0-4)", where 1 is urgent (review 51): which way a
    priority number points differs by product; a rating or a count does not."""
    from forgec.scenario import _comparable

    assert not _comparable("priority") and not _comparable("severity")
    assert _comparable("rating") and _comparable("seat_count") and _comparable("total_price")


def test_a_record_every_tool_addresses_by_its_name_is_keyed_by_it(tmp_path):
    """An email server's `create_label(name)`, `delete_label(name)` "Label name to delete": before, labels got a
    made-up `label_id` the delete took in the name's place, and the gold deleted "label_31919" where the user said
    "Garden project"."""
    s = _schema(tmp_path, [
        _tool("list_labels", "List all labels.", {}),
        _tool("create_label", "Create a new label.", {"name": {**S, "description": "Label name (e.g., \"Project-X\")."}}, ["name"]),
        _tool("delete_label", "Delete a label.", {"name": {**S, "description": "Label name to delete"}}, ["name"]),
    ])
    e = s.entities["Label"]
    assert e.key == "name"
    assert s.views["delete_label"].key_param == "name" and s.views["create_label"].fresh_key == "name"


def test_a_name_parameter_passes_and_finds_the_records_name(tmp_path):
    """Harbor's `project_name` "The name of the project" on projects keyed by `project_id`: a person passes the name;
    the env finds the project by its key or, failing that, by its one name (two projects sharing it find neither)."""
    from forgec.codegen import load_env_module
    from forgec.wording import lookup_field

    assert lookup_field("project_name", "project_id", {"name": "str"}) == "name"
    assert lookup_field("projectName", "id", {"name": "str", "id": "int"}) == "name"
    assert lookup_field("name", "name", {"name": "str"}) is None  # the key is the name already
    assert lookup_field("project_name", "project_id", {"title": "str"}) is None  # no `name` to find it by
    assert lookup_field("project_id", "project_id", {"name": "str"}) is None

    from conftest import compile_doc

    proj = {"type": "object", "properties": {"project_id": {"type": "integer"}, "name": S, "public": {"type": "boolean"}}}
    docs = {"tools": [
        {**_tool("list_projects", "List projects.", {}),
         "outputSchema": {"type": "object", "properties": {"projects": {"type": "array", "items": proj}}}},
        _tool("get_project", "Get the project by its id.", {"project_id": {"type": "integer", "description": "The ID of the project"}}, ["project_id"]),
        _tool("delete_project", "Delete the project.", {"project_name": {**S, "description": "The name of the project"}}, ["project_name"]),
    ]}
    out = compile_doc(tmp_path, "registry", "tools_list.json", docs, 2)
    mod = load_env_module(next(out.glob("envs/*/env.py")))
    state = json.loads(next(out.glob("states/*.json")).read_text())
    projects = state["entities"]["Project"]
    key, rec = sorted(projects.items())[0]
    from forgec.runtime.errors import ToolError

    def run(world, value):
        env = mod.Env(json.loads(json.dumps(world)))
        return env, env.step("delete_project", {"project_name": value})

    env, got = run(state, rec["name"])
    assert not isinstance(got, ToolError) and key not in env.state["entities"]["Project"], got
    env, got = run(state, rec["project_id"])
    assert not isinstance(got, ToolError) and key not in env.state["entities"]["Project"], got
    shared = json.loads(json.dumps(state))
    other = sorted(shared["entities"]["Project"])[1]
    shared["entities"]["Project"][other]["name"] = rec["name"]
    assert isinstance(run(shared, rec["name"])[1], ToolError)  # two projects by that name: neither


def test_a_name_check_after_a_delete_reads_the_list_once():
    """"delete my label X. After that, create a label called Y unless I have one": the agent listed the labels to find
    X; it does not list them again for Y (review 52). The list read before the delete serves a name check while the
    records left keep their names; one added since, or a renamed one, makes the agent list again."""
    from types import SimpleNamespace

    from forgec.scenario import _Scenario

    snap = {"1": {"name": "A"}, "2": {"name": "B"}, "3": {"name": "C"}}

    def scenario(now):
        sc = object.__new__(_Scenario)
        sc.lists = {"Label": ("labels", list(snap.values()))}
        sc.listed_at = {"Label": (0, snap)}
        sc.writes = ["delete_label"]  # one write since the list was read
        sc.targets = []
        sc.env = SimpleNamespace(state={"entities": {"Label": now}})
        return sc

    deleted = {k: v for k, v in snap.items() if k != "2"}
    assert scenario(deleted).listed("Label", stale_ok=False, field="name") is not None
    renamed = {**deleted, "3": {"name": "D"}}
    assert scenario(renamed).listed("Label", stale_ok=False, field="name") is None
    added = {**snap, "4": {"name": "E"}}
    assert scenario(added).listed("Label", stale_ok=False, field="name") is None


def test_ungrammatical_docs_are_repaired_or_left():
    from forgec.realize import clause

    assert clause("Mark a registered user as be removed.").text == "mark a registered user as removed"


def test_a_threshold_is_on_a_field_a_person_names():
    """"only if its dest namespace replace count is more than 3" (Harbor, review 52): a count the schema names in four
    words is a setting, no quantity a person checks."""
    from forgec.scenario import _askable_name, _comparable

    assert _comparable("dest_namespace_replace_count") and not _askable_name("dest_namespace_replace_count")
    assert _askable_name("seat_count")


def test_a_priority_motive_follows_the_documented_direction():
    from forgec.reasons import reason_for

    rec = {"priority": 1, "title": "Login fails"}
    args = {"priority": 3}
    lower_more = reason_for("update", "update", "priority level - lower number = higher priority", "Task", rec, None, args, set(), 0, {})
    assert "less pressing" in lower_more
    unsaid = reason_for("update", "update", "Priority (0-4)", "Task", rec, None, args, set(), 0, {})
    assert "pressing" not in unsaid and "worse" not in unsaid


def test_a_record_is_named_by_what_its_owner_knows_not_by_when_the_system_stamped_it():
    """"my module starting 2023-07-08 and whose archived time is 2023-07-10" (review 51): a stamp orders records
    ("the oldest") but names none; a person's last name is no stamp."""
    import random

    from forgec.scenario import Referring, refer

    recs = [{"title": "Backlog", "archived_at": "2023-07-10", "lead": "Ann"},
            {"title": "Backlog", "archived_at": "2023-09-01", "lead": "Bob"}]
    for seed in range(20):  # the stamp would single it out; the lead does
        ref = refer(recs, 0, ["title", "archived_at", "lead"], random.Random(seed), superlatives=False)
        assert ref is not None and "archived_at" not in dict(ref.attrs), ref
        assert refer(recs, 0, ["title", "archived_at"], random.Random(seed), superlatives=False) is None
    people = [{"firstName": "Tony", "lastName": "Ryan", "city": "Portland", "title": "Data engineer"},
              {"firstName": "Ann", "lastName": "Lee", "city": "Austin", "title": "Podiatrist"}]
    for seed in range(20):  # a person is called by their whole name, never by their job title or town first
        assert refer(people, 0, ["city", "title", "firstName", "lastName"], random.Random(seed), superlatives=False) == \
            Referring((("firstName", "Tony"), ("lastName", "Ryan")))


def test_a_persons_title_is_a_job_and_their_town_is_in_their_country():
    """BoondManager's resource (a consultant with a first and last name) had the title "Reading list" and lived in
    Portland, Mexico (review 52)."""
    from forgec.stdlib.values import generate_state

    schema = {"entities": {"Resource": {"key": "id", "fields": {
        "id": {"type": "str"}, "firstName": {"type": "str"}, "lastName": {"type": "str"}, "title": {"type": "str", "doc": "Titre / poste"},
        "city": {"type": "str"}, "country": {"type": "str"}}}}, "records": {}, "globals": {}}
    world = generate_state(schema, seed=3, size=12)
    topics = {"Reading list", "Thesis draft", "Garden project"}
    for r in world["entities"]["Resource"].values():
        assert r["title"] not in topics and r["title"][:1].isupper() and "," not in r["title"], r
        assert r["country"] == "USA", r  # the generated towns are American ones


def test_a_rename_of_a_name_that_is_no_topic_is_not_made_up():
    """"rename my tag "family" to "Conference travel"" (review 52): a topic-like name changes its stage; a tag word or a
    person's name has none, so no new name is invented."""
    import random

    from forgec.stdlib.values import said_value

    assert said_value("name", "The tag name", random.Random(0), renaming="family") is None
    v = said_value("name", "The label name", random.Random(0), renaming="Press release")
    assert v is not None and v.lower().startswith("press release") and v != "Press release", v


def test_a_total_says_which_amount_when_the_record_has_more_than_a_price(tmp_path):
    """ERPNext's assets hold a `gross_purchase_amount`: "how much my assets come to" does not say what is summed."""
    import glob

    from conftest import BROAD

    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[BROAD / "npm_casys_mcp_erpnext"], out=out, seed=0, oracle_check=False))
    totals = [json.loads(line)["instruction"] for f in glob.glob(str(out / "tasks" / "*.jsonl")) for line in open(f)
              if "in total" in line]
    assets = [t for t in totals if "assets" in t]
    assert assets and all("gross purchase amounts of my assets" in t for t in assets), totals


def test_the_number_of_things_asked_for_goes_before_them():
    from forgec.scenario import count_first

    assert count_first("Please purchase tickets for a Music event on 2024-05-23 in New York, NY with 3 tickets.") == \
        "Please purchase 3 tickets for a Music event on 2024-05-23 in New York, NY."
    assert count_first("I want tickets for a show with 1 ticket.") == "I want 1 ticket for a show."
    # a count of other things stays where it is
    assert count_first("I want to book rooms at a hotel with 2 guests.") == "I want to book rooms at a hotel with 2 guests."


def test_an_address_is_said_once_as_one_line(tmp_path):
    """τ-bench retail's `modify_user_address(address1, address2, city, state, country, zip)`: "modify the default
    address of my account to 275 Hill Ave, Apt 23, Seattle, WA 98197, USA" — before this session's fix the parts were
    said again beside the line ("to the seattle city with the wa state and the usa country to 275 Hill Ave, ...")."""
    import glob
    import re

    from conftest import CORPUS

    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[CORPUS / "tau_bench_retail"], out=out, seed=0, oracle_check=False))
    tasks = [json.loads(line) for f in glob.glob(str(out / "tasks" / "*.jsonl")) for line in open(f)]
    moved = [t for t in tasks if any(c["tool"] in ("modify_user_address", "modify_pending_order_address") for c in t["gold_calls"])]
    assert moved
    for t in moved:
        for c in t["gold_calls"]:
            if c["tool"] in ("modify_user_address", "modify_pending_order_address"):
                a = c["arguments"]
                line = f'{a["address1"]}, {a["address2"]}, {a["city"]}, {a["state"]} {a["zip"]}, {a["country"]}'
                assert line in t["instruction"], (line, t["instruction"])
                assert t["instruction"].count(line) == 1 and not re.search(r"\bthe \w+ (?:city|state|country)\b", t["instruction"]), t["instruction"]


def test_nobody_asks_to_be_given_an_amount_they_name(tmp_path):
    """τ-bench airline's `send_certificate(user_id, amount)` "Send a certificate to a user. Be careful!": 33 of 61 tasks
    had the customer ask "send a certificate to my account with $25" (issue 21 names it: "a customer issuing a
    certificate to themselves"). A giving verb whose recipient is the asker and whose amount they dictate is no task."""
    import glob

    from conftest import CORPUS

    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[CORPUS / "tau_bench_airline"], out=out, seed=0, oracle_check=False))
    tasks = [json.loads(line) for f in glob.glob(str(out / "tasks" / "*.jsonl")) for line in open(f)]
    assert tasks
    assert not [t["instruction"] for t in tasks if any(c["tool"] == "send_certificate" for c in t["gold_calls"])]


def test_two_dates_name_a_record_only_as_its_span():
    """"my issue starting X and whose target date is Y" (review 51) is two raw fields; "my absence starting X and
    ending Y" is the absence itself, said start first."""
    import random

    from forgec.scenario import Referring, describe, refer

    recs = [{"start_date": "2023-07-08", "target_date": "2024-01-01", "priority": "high"},
            {"start_date": "2023-07-08", "target_date": "2024-02-01", "priority": "high"},
            {"start_date": "2023-08-01", "target_date": "2024-01-01", "priority": "high"}]
    for seed in range(20):
        assert refer(recs, 0, ["start_date", "target_date", "priority"], random.Random(seed), superlatives=False) is None
    spans = [{"start_date": "2023-07-08", "end_date": "2024-01-01"}, {"start_date": "2023-07-08", "end_date": "2024-02-01"},
             {"start_date": "2023-08-01", "end_date": "2024-01-01"}]
    ref = refer(spans, 0, ["end_date", "start_date"], random.Random(0), superlatives=False)
    assert ref is not None and dict(ref.attrs) == spans[0]
    assert describe("absence", Referring((("end_date", "2023-12-10"), ("start_date", "2023-09-05")))) == \
        "my absence starting 2023-09-05 and ending 2023-12-10"


def test_a_place_said_once_and_a_list_item_is_no_rename(tmp_path):
    """GitHub's `update_issue` "Update an existing issue in a GitHub repository": 'my issue called X in the repo "Y"
    owned by Z in a GitHub repository' said the repository twice (review 53: 4 rejections), and one of its `labels`
    was said as "rename it to ..." while the title stayed."""
    import glob

    from conftest import BROAD

    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[BROAD / "npm_modelcontextprotocol_server_github"], out=out, seed=0, oracle_check=False))
    tasks = [json.loads(line) for f in glob.glob(str(out / "tasks" / "*.jsonl")) for line in open(f)]
    scoped = [t["instruction"] for t in tasks if 'in the repo "' in t["instruction"]]
    assert scoped and not [t for t in scoped if "in a GitHub repository" in t], scoped
    for t in tasks:
        for c in t["gold_calls"]:
            if "rename it to" in t["instruction"] and c["tool"] == "update_issue":
                assert "title" in c["arguments"], (t["instruction"], c["arguments"])


def test_a_state_in_capitals_is_said_in_words():
    """Memos' notification status `UNREAD`/`ARCHIVED` (review 53: 'my notification whose status is "UNREAD"')."""
    from forgec.scenario import Referring, describe

    assert describe("notification", Referring((("status", "UNREAD"),))) == "my unread notification"
    assert describe("notification", Referring((("status", "ARCHIVED"),))) == "my archived notification"


def test_a_number_without_a_measure_is_whole():
    """GitHub's `milestone` typed `number` with no doc held 444.02 (review 53); a price stays in cents."""
    from forgec.stdlib.values import generate_state

    schema = {"entities": {"Issue": {"key": "id", "fields": {
        "id": {"type": "str"}, "milestone": {"type": "float"}, "price": {"type": "float"},
        "ratio": {"type": "float", "doc": "A ratio such as 0.75"}}}}, "records": {}, "globals": {}}
    recs = list(generate_state(schema, seed=1, size=12)["entities"]["Issue"].values())
    assert all(float(r["milestone"]).is_integer() for r in recs if r.get("milestone") is not None), recs
    assert any(not float(r["price"]).is_integer() for r in recs if r.get("price") is not None), recs


def test_a_documented_reason_is_said_as_a_clause_with_its_words():
    """τ-bench retail's `reason` enum: "because ordered by mistake" is no English; the value stays word for word (the
    agent passes it)."""
    from forgec.scenario import _first_person

    assert _first_person("ordered by mistake") == "it was ordered by mistake"
    assert _first_person("no longer needed") == "it is no longer needed"
    assert _first_person("changed my mind") == "I changed my mind"


def test_a_documented_key_field_is_the_key_and_an_inbox_is_one():
    """Zotero's collections carry "the 8-character key of the collection" (`collection_key`): the tools pass it, not a
    made-up `collection_id` (review 54: 8 rejections). Todoist's `inboxProject` flag was true on 28 of 50 projects."""
    from conftest import BROAD

    from forgec.stdlib.values import generate_state

    envs, _ = read_paths([BROAD / "pypi_zotero_mcp_server"])
    s = infer_schema(envs[0])
    assert s.entities["Collection"].key == "collection_key"
    schema = {"entities": {"Project": {"key": "id", "fields": {"id": {"type": "str"}, "name": {"type": "str"},
                                                                 "inboxProject": {"type": "bool"}, "isShared": {"type": "bool"}}}},
              "records": {}, "globals": {}}
    recs = list(generate_state(schema, seed=2, size=20)["entities"]["Project"].values())
    assert sum(r["inboxProject"] is True for r in recs) == 1
    assert 1 < sum(r["isShared"] is True for r in recs) < len(recs)  # an ordinary flag stays mixed


def test_a_superlative_two_fields_share_must_pick_one_record():
    """Karakeep's bookmarks have `createdAt` and `firstCreatedAt`: "my most recent bookmark" picked by one of them was
    another by the other (review 54)."""
    import random

    from forgec.scenario import refer

    recs = [{"createdAt": "2024-01-01", "firstCreatedAt": "2024-03-01", "title": "a"},
            {"createdAt": "2024-02-01", "firstCreatedAt": "2024-01-01", "title": "a"}]
    for seed in range(20):
        ref = refer(recs, 0, ["createdAt", "firstCreatedAt", "title"], random.Random(seed))
        assert ref is None or not ref.op, ref
