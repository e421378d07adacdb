"""Rules from blind review 85. Each test checks against a hand-written expectation on hand-built docs of the kinds in
../shared/corpus-broad, and fails on the code before its rule."""

from __future__ import annotations

import json
import re


_MONITORING = [  # BFCL-style functions (Instana's style): the docs call `Configuration` "the Apdex configuration" throughout
    {"name": "create_apdex_configuration", "description": "Creates a new Apdex configuration for an application.", "parameters": {"type": "dict", "required": ["name"], "properties": {"name": {"type": "string", "description": "A human-readable name for the Apdex configuration."}, "enabled": {"type": "boolean", "description": "A flag to enable or disable this Apdex configuration.", "default": True}}}},
    {"name": "delete_apdex_configuration", "description": "Deletes the specified Apdex configuration by its unique identifier.", "parameters": {"type": "dict", "required": ["id"], "properties": {"id": {"type": "string", "description": "The unique identifier of the Apdex configuration to delete."}}}},
    {"name": "get_all_apdex_configurations", "description": "Retrieve a list of all Apdex configurations.", "parameters": {"type": "dict", "required": [], "properties": {}}},
    {"name": "get_apdex_report", "description": "Generate an Apdex report for a specified Apdex ID.", "parameters": {"type": "dict", "required": ["apdexId"], "properties": {"apdexId": {"type": "string", "description": "The unique identifier of the Apdex configuration for which the report is generated."}}}},
    {"name": "get_websites", "description": "List all websites being monitored.", "parameters": {"type": "dict", "required": [], "properties": {}}},
    {"name": "create_website", "description": "Create a new website to monitor.", "parameters": {"type": "dict", "required": ["name"], "properties": {"name": {"type": "string", "description": "The name of the website."}}}},
    {"name": "delete_website", "description": "Delete a monitored website.", "parameters": {"type": "dict", "required": ["websiteId"], "properties": {"websiteId": {"type": "string", "description": "The unique identifier of the website."}}}},
    {"name": "get_releases", "description": "List all releases.", "parameters": {"type": "dict", "required": [], "properties": {}}},
    {"name": "delete_release", "description": "Delete a release.", "parameters": {"type": "dict", "required": ["releaseId"], "properties": {"releaseId": {"type": "string", "description": "The unique identifier of the release."}}}},
    {"name": "get_release", "description": "Get one release by its identifier.", "parameters": {"type": "dict", "required": ["releaseId"], "properties": {"releaseId": {"type": "string", "description": "The unique identifier of the release."}}}},
    {"name": "rename_website", "description": "Rename a monitored website.", "parameters": {"type": "dict", "required": ["websiteId", "name"], "properties": {"websiteId": {"type": "string", "description": "The unique identifier of the website."}, "name": {"type": "string", "description": "The new name of the website."}}}},
    {"name": "get_applications", "description": "List all applications.", "parameters": {"type": "dict", "required": [], "properties": {}}},
    {"name": "delete_application", "description": "Delete an application.", "parameters": {"type": "dict", "required": ["applicationId"], "properties": {"applicationId": {"type": "string", "description": "The unique identifier of the application."}}}},
]


def _instructions(out):
    return [json.loads(x)["instruction"] for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]


def _compile_functions(tmp_path, docs):
    """BFCL-style functions written as a user's folder (`docs/mon/functions.json`) and compiled; the build's folder."""
    from forgec.build import CompileOptions, compile_build

    d = tmp_path / "docs" / "mon"
    d.mkdir(parents=True)
    (d / "functions.json").write_text("\n".join(json.dumps(f) for f in docs))
    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[d], out=out, tasks_per_env=40, seed=0, oracle_check=False))
    return out


def test_a_record_is_called_by_the_kind_its_docs_always_name(tmp_path):
    """Review 85: "delete my configuration called X" beside SLI, maintenance and service configurations named no
    kind; every doc of the record's fields and key says "the Apdex configuration"."""
    out = _compile_functions(tmp_path, _MONITORING)
    said = [i for i in _instructions(out) if "configuration called" in i]
    assert said, _instructions(out)
    assert all("my Apdex configuration called" in i for i in said), said


def test_the_products_own_name_is_no_kind(tmp_path):
    """The same docs, where every tool's docs name the product ("the Apdex website", "Apdex releases"): the
    qualifier is the product, and the record stays "my configuration"."""
    docs = json.loads(json.dumps(_MONITORING))
    for f in docs:
        if "apdex" not in f["description"].lower():
            f["description"] = f["description"].rstrip(".") + " in Apdex."
    out = _compile_functions(tmp_path, docs)
    said = [i for i in _instructions(out) if "configuration called" in i]
    assert said and all("my configuration called" in i for i in said), said


def _projects() -> dict:
    from conftest import mcp_tool

    s = {"type": "string"}
    return {"tools": [
        mcp_tool("list_projects", "List all projects in the portfolio.", {}),
        mcp_tool("create_project", "Create a new project.", {"name": {**s, "description": "The project's name."},
                                                              "description": {**s, "description": "What the project is for."}}, ["name"]),
        mcp_tool("update_project", "Update a project's name or description.", {
            "project_id": {**s, "description": "The project's ID."}, "name": {**s, "description": "The new name."},
            "description": {**s, "description": "The new description."}}, ["project_id"]),
        mcp_tool("delete_project", "Delete a project.", {"project_id": {**s, "description": "The project's ID."}}, ["project_id"]),
    ]}


def test_a_record_made_in_the_task_does_not_send_the_agent_back_to_the_list(tmp_path):
    """Review 85: after creating one project the gold listed all projects again to find another, though the first
    list had it; the new project is the agent's own and shares no name with the one it looks for."""
    from conftest import compile_doc

    out = compile_doc(tmp_path, "pm", "tools_list.json", _projects(), 60)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    made_then_found = [t for t in tasks if [c["tool"] for c in t["gold_calls"] if c["write"]][:1] == ["create_project"]
                       and len([c for c in t["gold_calls"] if c["write"]]) > 1]
    assert made_then_found, [t["instruction"] for t in tasks]
    for t in made_then_found:
        assert [c["tool"] for c in t["gold_calls"]].count("list_projects") == 1, [(c["tool"], c["arguments"]) for c in t["gold_calls"]]


def test_a_deployment_environment_is_told_apart_by_a_region_or_a_slot_not_a_counter():
    """Review 85: "Production 7" is a generator's counter, not what a team calls an environment."""
    import random

    from forgec.stdlib.values import _Ctx, generate_value

    rng = random.Random(0)
    c = _Ctx(rng, __import__("datetime").date(2024, 5, 15))
    names = [generate_value({"type": "str"}, "name", rng, entity="Environment", ctx=c) for _ in range(40)]
    assert len(set(names)) >= 30, names
    assert not [n for n in names if any(ch.isdigit() for ch in n)], names


def test_no_superlative_over_records_some_of_which_are_gone(tmp_path):
    """Review 85: "the tag of the project with the earliest due date" was a cancelled project's; without the
    cancelled ones the answer is another. Where some of the records are cancelled, no question picks one by rank."""
    from conftest import compile_doc, mcp_tool

    s = {"type": "string"}
    doc = {"tools": [
        mcp_tool("list_projects", "List all projects in the portfolio.", {}),
        mcp_tool("create_project", "Create a new project.", {
            "name": {**s, "description": "The project's name."},
            "status": {"type": "string", "enum": ["active", "planning", "cancelled"], "description": "The project's status."},
            "due_date": {**s, "format": "date", "description": "When the project is due."},
            "tag": {**s, "description": "A tag for the project."}}, ["name", "status", "due_date", "tag"]),
    ]}
    out = compile_doc(tmp_path, "pm", "tools_list.json", doc, 120)
    state = json.loads((out / "states" / "pm.json").read_text())
    assert any(r.get("status") == "cancelled" for r in state["entities"]["Project"].values())
    asked = _instructions(out)
    ranked = [i for i in asked if re.search(r"\b(?:earliest|latest|soonest|oldest|newest)\b", re.sub(r'"[^"]*"', "", i))]
    assert not ranked, ranked


def _registry_spec() -> dict:
    """An OpenAPI spec in Harbor's style: a project holds repositories; its delete answers 412 while it does."""
    ok = {"200": {"description": "Success"}}
    proj = {"type": "object", "properties": {"project_id": {"type": "integer"}, "name": {"type": "string"}}}
    repo = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"},
                                             "project_id": {"type": "integer", "description": "The ID of the project that the repository belongs to"}}}
    pid = {"name": "project_id", "in": "path", "required": True, "schema": {"type": "integer"}, "description": "The ID of the project"}
    return {"openapi": "3.0.0", "info": {"title": "Registry", "version": "1"}, "paths": {
        "/projects": {"get": {"operationId": "listProjects", "summary": "List projects",
                              "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": proj}}}}}}},
        "/projects/{project_id}": {"delete": {"operationId": "deleteProject", "summary": "Delete project by project ID", "parameters": [pid],
                                              "responses": {**ok, "404": {"description": "Not found."},
                                                            "412": {"description": "Project cannot be deleted. The project still contains repositories."}}}},
        "/projects/{project_id}/repositories": {"get": {"operationId": "listRepositories", "summary": "List the repositories of a project", "parameters": [pid],
                                                        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": repo}}}}}}},
        "/repositories/{id}": {"delete": {"operationId": "deleteRepository", "summary": "Delete a repository",
                                          "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}, "description": "The repository ID"}],
                                          "responses": ok}},
    }}


def test_an_error_response_that_names_held_records_is_a_precondition(tmp_path):
    """Review 83: the gold deleted Harbor projects that still held repositories, which the spec's 412 response
    refuses ("The project still contains repositories"). The refusal is read from the error response's own text."""
    from forgec.runtime.loader import load

    d = tmp_path / "docs" / "reg"
    d.mkdir(parents=True)
    (d / "openapi.json").write_text(json.dumps(_registry_spec()))
    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[d], out=out, tasks_per_env=20, seed=0, oracle_check=False))
    src = (out / "src" / "reg" / "env.forge").read_text()
    assert '// from: "The project still contains repositories."' in src, src
    mod = load(out).envs["reg"]
    state = json.loads((out / "states" / "reg.json").read_text())
    held = {str(r["project_id"]) for r in state["entities"]["Repository"].values() if r.get("project_id") is not None}
    full = next(k for k in state["entities"]["Project"] if k in held)
    empty = next((k for k in state["entities"]["Project"] if k not in held), None)
    env = mod.Env(json.loads(json.dumps(state)))
    refused = env.step("deleteProject", {"project_id": int(full)})
    assert getattr(refused, "code", None) == "precondition" and "still has repositories" in str(refused), refused
    if empty is not None:
        assert not hasattr(env.step("deleteProject", {"project_id": int(empty)}), "code")
    # the docs agents read are the summary, not the error responses
    assert "412" not in json.dumps(next(t for t in mod.TOOLS if t["function"]["name"] == "deleteProject"))


def test_a_folder_that_must_be_empty_first_is_refused_while_it_holds_mail(tmp_path):
    """"Delete a mailbox/folder. The folder must be empty first." (an email MCP server): no kind named, so no record
    of any kind may still point to the folder."""
    from conftest import compile_doc, mcp_tool

    s = {"type": "string"}
    doc = {"tools": [
        mcp_tool("list_folders", "List all mail folders.", {}),
        mcp_tool("delete_folder", "Delete a mailbox/folder. The folder must be empty first.", {"folder_id": {**s, "description": "The folder's ID."}}, ["folder_id"]),
        mcp_tool("list_emails", "List the emails in a folder.", {"folder_id": {**s, "description": "The folder's ID."}}, ["folder_id"]),
        mcp_tool("move_email", "Move an email to another folder.", {"email_id": {**s, "description": "The email's ID."},
                                                                      "folder_id": {**s, "description": "The ID of the folder to move it to."}}, ["email_id", "folder_id"]),
    ]}
    out = compile_doc(tmp_path, "mail", "tools_list.json", doc, 10)
    src = (out / "src" / "mail" / "env.forge").read_text()
    assert '// from: "The folder must be empty first."' in src and "still has emails" in src, src


def test_a_record_made_in_a_container_names_the_container(tmp_path):
    """Review 86: "Create a new wiki in the project" with an optional `projectId` (the server's default project):
    the gold made the wiki in no project the user chose. The container the docs say it goes in is named."""
    from conftest import compile_doc, mcp_tool

    s = {"type": "string"}
    doc = {"tools": [
        mcp_tool("list_projects", "List all projects.", {}),
        mcp_tool("list_wikis", "List all wikis.", {}),
        mcp_tool("list_repositories", "List all repositories.", {}),
        mcp_tool("create_wiki", "Create a new wiki in the project.", {
            "projectId": {**s, "description": "The ID or name of the project (Default: demo)"},
            "repositoryId": {**s, "description": "The ID of the repository to associate with the wiki"},
            "name": {**s, "description": "The name of the new wiki."},
            "description": {**s, "description": "What the wiki is for."},
            "type": {"type": "string", "enum": ["projectWiki", "codeWiki"], "description": "Type of wiki to create."},
            "visibility": {"type": "string", "enum": ["private", "public"], "description": "Who can read the wiki."}}, ["name"]),
        mcp_tool("delete_wiki", "Delete a wiki.", {"wikiId": {**s, "description": "The ID of the wiki."}}, ["wikiId"]),
    ]}
    out = compile_doc(tmp_path, "dev", "tools_list.json", doc, 40)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    made = [c for t in tasks for c in t["gold_calls"] if c["tool"] == "create_wiki"]
    assert tasks  # (a project the tool takes by name needs no lookup: such creates may not be emitted at all)
    assert all(c["arguments"].get("projectId") for c in made), [c["arguments"] for c in made]


def test_a_delete_the_docs_refuse_without_its_confirmation_is_made_with_it(tmp_path):
    """Acts review: Redmine's `confirm_delete` "When False (default), the tool refuses and returns an impact preview.
    Pass True to actually delete." was left out of the gold, which deleted anyway. The env refuses without it, and
    the gold sends it as the agent's part of the call (the user never says it)."""
    from conftest import compile_doc, mcp_tool

    s = {"type": "string"}
    doc = {"tools": [
        mcp_tool("list_notes", "List all notes.", {}),
        mcp_tool("create_note", "Create a note.", {"title": {**s, "description": "The note's title."}}, ["title"]),
        mcp_tool("delete_note", "Permanently delete a note.", {
            "note_id": {**s, "description": "The note's ID."},
            "confirm_delete": {"type": "boolean", "default": False,
                               "description": "When False (default), the tool refuses and returns an impact preview. Pass True to actually delete."}}, ["note_id"]),
    ]}
    out = compile_doc(tmp_path, "notes", "tools_list.json", doc, 30)
    src = (out / "src" / "notes" / "env.forge").read_text()
    assert "require confirm_delete == true" in src, src
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    deletes = [(t, c) for t in tasks for c in t["gold_calls"] if c["tool"] == "delete_note"]
    assert deletes, [t["instruction"] for t in tasks]
    assert all(c["arguments"].get("confirm_delete") is True for _, c in deletes)
    assert not [t["instruction"] for t, _ in deletes if "confirm" in t["instruction"].lower()]


def test_one_of_two_the_docs_require_is_sent(tmp_path):
    """Acts review: a Redmine time entry was logged with neither `project_id` nor `issue_id`, though each is "Required
    if the other is not provided"; "Exactly one of user_id or group_id required" reads the same way."""
    from conftest import compile_doc, mcp_tool

    s = {"type": "string"}
    doc = {"tools": [
        mcp_tool("list_projects", "List all projects.", {}),
        mcp_tool("list_issues", "List all issues.", {}),
        mcp_tool("list_time_entries", "List all time entries.", {}),
        mcp_tool("list_activities", "List all time entry activities.", {}),
        mcp_tool("list_users", "List all users.", {}),
        mcp_tool("create_time_entry", "Create a time entry for time spent.", {
            "hours": {"type": "number", "description": "Hours spent."},
            "activity_id": {**s, "description": "The activity's ID."},
            "user_id": {**s, "description": "Log on behalf of this user."},
            "comments": {**s, "description": "What the time was spent on."},
            "spent_on": {**s, "format": "date", "description": "The day the time was spent."},
            "project_id": {**s, "description": "Project to log against. Required if ``issue_id`` is not provided."},
            "issue_id": {**s, "description": "Issue to log against. Required if ``project_id`` is not provided."}}, ["hours"]),
    ]}
    out = compile_doc(tmp_path, "time", "tools_list.json", doc, 40)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    logged = [c["arguments"] for t in tasks for c in t["gold_calls"] if c["tool"] == "create_time_entry"]
    assert logged, [t["instruction"] for t in tasks]
    assert all("project_id" in a or "issue_id" in a for a in logged), logged


def test_all_my_records_by_a_state_that_describes_them():
    """Review 87: "delete all my failure bookmarks" said an outcome's noun before the record's, for one of three
    statuses (crawl, tagging, embedding). A state said before the noun describes the records; hand-listed below."""
    from forgec.scenario import _prenominal_state

    assert [v for v in ("open", "archived", "pending", "completed", "in_progress", "draft", "blocked") if not _prenominal_state(v)] == []
    assert [v for v in ("failure", "success", "error") if _prenominal_state(v)] == []


def test_the_callers_account_is_one_the_docs_lister_holds(tmp_path):
    """Review 87: every email task said "my account is me.home@post.net", an address made up, though the docs say the
    account name comes "from list_accounts" and the world's accounts are others (npm_codefuturist_email_mcp, 5 of 5
    rejected). A caller's account the docs source from a lister is one of its records, by what names it (its key,
    where it has no name)."""
    from conftest import BROAD
    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[BROAD / "npm_codefuturist_email_mcp"], out=out, tasks_per_env=30, seed=0, oracle_check=False))
    world = json.loads((out / "states" / "npm_codefuturist_email_mcp.json").read_text())["entities"]
    held = {str(v) for r in world.get("Account", {}).values() for v in r.values()}
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    said = {c["arguments"]["account"] for t in tasks for c in t["gold_calls"] if "account" in c["arguments"]}
    assert said and said <= held, (sorted(said)[:5], sorted(held)[:5])
