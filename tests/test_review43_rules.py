"""Rules from blind review 42 (eighth session): a lookup that cannot change the outcome does not make a task.
Each test checks a real doc set against what its own docs and world say, not against the sampler's output."""

from __future__ import annotations

import json
import re

from conftest import BROAD

from forgec.lang import ast as A


def _build(tmp_path, name: str, n: int):
    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[BROAD / name], out=out, tasks_per_env=n, seed=0, oracle_check=False))
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    manifest = json.loads((out / "manifest.json").read_text())
    return out, tasks, next(iter(manifest["envs"].values()))["stats"]["sampler_rejected"]


def test_a_tool_that_takes_the_records_name_needs_no_lookup_for_its_id(tmp_path):
    """Todoist's `delete_labels` and `update_projects` say "Either 'id' or the 'name' to identify the target": "delete
    my label called X" needs no list call, the agent passes the name (review 42: 3 of 7 Todoist tasks rejected as
    trivial). A task whose only lookup finds the id of a record the user named, for such a tool, is `named-target`."""
    docs = json.loads((BROAD / "npm_todoist_mcp" / "tools_list.json").read_text())
    tools = docs["tools"] if isinstance(docs, dict) else docs
    by_name = {t["name"] for t in tools if re.search(r"Either '\w+' or the '\w*name'", t.get("description") or "")}
    assert {"delete_labels", "update_projects", "delete_projects"} <= by_name  # the docs, read by hand
    out, tasks, rejected = _build(tmp_path, "npm_todoist_mcp", 30)
    state = json.loads(next((out / "states").glob("*.json")).read_text())["entities"]
    names = {k: r.get("name") for table in state.values() for k, r in table.items()}
    for t in tasks:
        writes = [c for c in t["gold_calls"] if c["tool"] in by_name]
        for c in writes:
            for item in c["arguments"].get("items", []):
                named = names.get(item.get("id"))
                assert not (named and f'"{named}"' in t["instruction"] and len(t["gold_calls"]) == 2), t["instruction"]
    assert rejected.get("named-target", 0) > 0, rejected


def test_a_guard_that_holds_on_a_dictated_create_is_no_decision(tmp_path):
    """"create a label X, but only if I don't already have one called X", drawn where none is: an agent that never
    lists the labels ends in the same state, so the task is one dictated create (review 42: 5 rejections). Such a
    guard is kept only where it fails (the create is left out) beside another act, or where the write needs the
    lookup anyway."""
    out, tasks, rejected = _build(tmp_path, "npm_todoist_mcp", 30)
    for t in tasks:
        if "already have" not in t["instruction"]:
            continue
        said = json.dumps(t["user"]["facts"], sort_keys=True)
        creates = [c for c in t["gold_calls"] if c["tool"].startswith("create_")]
        dictated = all(json.dumps(v) in said for c in creates for item in c["arguments"].get("items", []) for v in item.values())
        # another write beside it whose record the lookup finds ("also update my label called X") needs the list anyway
        beside = [c for c in t["gold_calls"] if c.get("write") and not c["tool"].startswith("create_")]
        assert not (creates and dictated and not beside), t["instruction"]
    assert rejected.get("guard-holds", 0) > 0, rejected


def test_name_addressed_parameters_are_read_from_the_docs():
    """The three ways docs say a record may be named instead of given by id, and one that is not (two ids)."""
    from forgec.gate import name_addressed

    s = A.PrimType("str")
    item = A.RecordDecl("Item", (A.FieldDecl("id", A.OptionalType(s), doc="ID of the label (preferred over name)"),
                                 A.FieldDecl("name", A.OptionalType(s), doc="Name of the label")))
    t1 = A.ToolDecl("delete_labels", (A.ParamDecl("items", A.ListType(A.NamedType("Item"))),), s,
                    doc="Delete a label. Either 'id' or the 'name' to identify the target.")
    t2 = A.ToolDecl("get_wiki", (A.ParamDecl("project", s, doc="The ID or name of the project (Default: demo)"),
                                 A.ParamDecl("wiki", s, doc="the wiki")), s, doc="Get a wiki.")
    t3 = A.ToolDecl("insights", (A.ParamDecl("workspaceIdOrName", s, doc="The workspace."),), s, doc="Insights.")
    t4 = A.ToolDecl("add_comment", (A.ParamDecl("taskId", A.OptionalType(s)), A.ParamDecl("projectId", A.OptionalType(s))), s,
                    doc="Add a comment. Each comment must specify either taskId or projectId.")
    env = A.EnvDecl("e", None, (item,), (), (t1, t2, t3, t4))
    assert name_addressed(t1, env) == {"items.id"}
    assert name_addressed(t2, env) == {"project"}
    assert name_addressed(t3, env) == {"workspaceIdOrName"}
    assert name_addressed(t4, env) == set()


def test_a_value_two_parameters_take_is_two_end_states():
    """iCloud's `create_contact(phone, phones, name, firstName, lastName)`: "add Ann's number" is met by `phone` or by
    `phones: [...]`, a name by `name` or by first and last name; two end states satisfy one request (review 42). A
    write filling one of two such parameters is `two-ways`; a tool without the twin is not."""
    from types import SimpleNamespace

    from forgec.gate import Candidate, check_two_ways

    s = A.OptionalType(A.PrimType("str"))
    contact = A.ToolDecl("create_contact", tuple(A.ParamDecl(n, s) for n in ("name", "firstName", "lastName", "phone", "phones", "org")),
                         A.PrimType("str"), doc="Create a contact.")
    label = A.ToolDecl("create_label", (A.ParamDecl("name", s), A.ParamDecl("color", s)), A.PrimType("str"), doc="Create a label.")
    g = SimpleNamespace(tools={"create_contact": contact, "create_label": label})

    def cand(tool, args):
        return Candidate("x", [], (), {}, [(tool, args)])
    assert check_two_ways(cand("create_contact", {"phone": "+1-202-555-0101"}), g) == "two-ways"
    assert check_two_ways(cand("create_contact", {"firstName": "Ann", "lastName": "Lee"}), g) == "two-ways"
    assert check_two_ways(cand("create_contact", {"org": "Acme"}), g) is None
    assert check_two_ways(cand("create_label", {"name": "Q3", "color": "red"}), g) is None


def test_a_protobuf_placeholder_is_no_state_and_a_creation_time_is_a_moment():
    """memos (review 43): notifications whose status is `STATUS_UNSPECIFIED` (the zero value an unset protobuf field
    reads) were deleted and counted by it, and a webhook's `createTime` "The creation time of the webhook" was "10:45",
    a time of day where the docs mean a moment. The world never puts a record in a placeholder state, a new value is
    never one, and a creation time is a date and time."""
    import random as _r

    from forgec.stdlib.values import generate_value, real_values

    assert real_values(["STATUS_UNSPECIFIED", "UNREAD", "ARCHIVED"]) == ["UNREAD", "ARCHIVED"]
    assert real_values(["unknown", ""]) == ["unknown", ""]  # nothing else to choose: kept
    rng = _r.Random(1)
    got = {generate_value({"type": "enum", "values": ["STATUS_UNSPECIFIED", "UNREAD", "ARCHIVED"]}, "status", rng) for _ in range(40)}
    assert got == {"UNREAD", "ARCHIVED"}, got
    for _ in range(10):
        v = generate_value({"type": "str"}, "createTime", rng, doc="The creation time of the webhook.")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", v), v
    v = generate_value({"type": "str"}, "appointment_time", rng, doc="When the appointment starts (HH:MM).")
    assert re.fullmatch(r"\d\d:\d\d", v), v


def _env_and_world(out):
    from forgec.codegen import load_env_module

    mod = load_env_module(next((out / "envs").rglob("env.py")))
    world = json.loads(next((out / "states").glob("*.json")).read_text())
    env = mod.Env()
    env.reset(state=world) if "state" in env.reset.__code__.co_varnames else env.reset(world)
    return env, world


def test_archive_or_unarchive_sets_the_records_own_flag(tmp_path):
    """doist's `project_management(action: archive | unarchive, projectId)` "Archive or unarchive a project by its ID."
    on projects documented with `isArchived: bool` (review 43): the env made up a `status` set to "archived" whatever
    the action, and left `isArchived` false. Run against the docs' meaning: archive sets the project's own flag,
    unarchive clears it, and no second status is made up."""
    out, _tasks, _rej = _build(tmp_path, "npm_doist_todoist_mcp", 4)
    src = next((out / "src").rglob("env.forge")).read_text()
    project = re.search(r"entity Project key \w+ \{(.*?)\n  \}", src, re.S).group(1)
    assert re.search(r"^\s*isArchived: bool\b", project, re.M) and not re.search(r"^\s*status:", project, re.M), project
    env, world = _env_and_world(out)
    pid = next(k for k, r in sorted(world["entities"]["Project"].items()) if r.get("isArchived") is False)
    env.step("project_management", {"action": "archive", "projectId": pid})
    assert env.state["entities"]["Project"][pid]["isArchived"] is True
    env.step("project_management", {"action": "unarchive", "projectId": pid})
    assert env.state["entities"]["Project"][pid]["isArchived"] is False


def test_a_record_passed_by_its_key_is_stored_in_the_field_that_holds_it(tmp_path):
    """ERPNext's `erpnext_task_create(project: "Project name", subject)`: a project's key is its name, and a task's
    `project` field holds that name; the env stored "" (review 43: "the created task is stored with an empty project
    although the call passed 'Fitness plan'")."""
    out, _tasks, _rej = _build(tmp_path, "npm_casys_mcp_erpnext", 2)
    env, world = _env_and_world(out)
    name = sorted(world["entities"]["Project"])[0]
    before = set(env.state["entities"]["Task"])
    env.step("erpnext_task_create", {"project": name, "subject": "Order the new chairs"})
    (made,) = [r for k, r in env.state["entities"]["Task"].items() if k not in before]
    assert made["project"] == name and made["subject"] == "Order the new chairs", made


def test_a_delete_the_docs_say_to_check_first_is_checked_first(tmp_path):
    """A doc that says "use `get_branch` or `list_branches` before deletion" (GitLab's `delete_branch`, review 44: the
    gold deleted the branch unchecked): the gold path reads it with the first named read that takes the same
    arguments, then deletes. Checked against the doc's text on a hand-written server in that style."""
    from conftest import assert_checked_before, compile_doc

    def tool(name, desc, props, req, out=None):
        t = {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props, "required": req}}
        return {**t, "outputSchema": out} if out else t
    pid = {"type": "string", "description": "The project ID"}
    br = {"type": "string", "description": "Name of the branch"}
    doc = {"tools": [
        tool("list_projects", "List projects.", {}, [], {"type": "object", "properties": {"projects": {"type": "array", "items": {
            "type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "branches": {
                "type": "array", "items": {"type": "string"}}}}}}}),
        tool("get_branch", "Get one branch of a project.", {"project_id": pid, "branch_name": br}, ["project_id", "branch_name"]),
        tool("delete_branch", "Delete branch from project. Use `get_branch` to check the branch before deletion.",
             {"project_id": pid, "branch_name": br}, ["project_id", "branch_name"]),
    ]}
    out = compile_doc(tmp_path, "repos", "tools_list.json", doc, 12)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    assert_checked_before(tasks, "delete_branch", "get_branch")
