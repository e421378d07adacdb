"""Rules found while measuring the broad corpus after review 70 (each against hand-built docs, not the corpus)."""

from __future__ import annotations

from conftest import mcp_tool
from test_review68_rules import _sets, _synth
from test_review70_rules import _tasks

from forgec.lang import ast as A


def test_a_verb_and_its_opposite_keep_one_flag(tmp_path):
    """DigitalOcean's `power_on_droplet`/`power_off_droplet`, Dokploy's `mysql_start`/`mysql_stop`, Microsoft 365's
    `accept_calendar_event`/`decline_calendar_event`: both calls were only logged. An opposite verb says the record is
    in the first's state or not, like an un- verb; `enable_backups_droplet` acts on the backups, so it sets no
    `enabled` flag on the droplet."""
    did = {"id": {"type": "integer", "description": "ID of the droplet"}}
    tools = _synth(tmp_path, [
        mcp_tool("list_droplets", "List all droplets.", {}),
        mcp_tool("get_droplet", "Get a droplet by its ID.", did, ["id"]),
        mcp_tool("power_on_droplet", "Power on a droplet.", did, ["id"]),
        mcp_tool("power_off_droplet", "Power off a droplet.", did, ["id"]),
        mcp_tool("start_droplet_console", "Start a droplet.", did, ["id"]),
        mcp_tool("enable_backups_droplet", "Enable backups on a droplet.", did, ["id"]),
        mcp_tool("disable_backups_droplet", "Disable backups on a droplet.", did, ["id"]),
    ])
    assert _sets(tools["power_on_droplet"]) == [("powered_on", True)]
    assert _sets(tools["power_off_droplet"]) == [("powered_on", False)]
    assert any(isinstance(st, A.Require) for st in tools["power_off_droplet"].body)  # refused where it changes nothing
    assert ("enabled", True) not in _sets(tools["enable_backups_droplet"])
    assert ("enabled", False) not in _sets(tools["disable_backups_droplet"])


def test_start_and_stop_one_record(tmp_path):
    aid = {"applicationId": {"type": "string", "description": "The ID of the application."}}
    tools = _synth(tmp_path, [
        mcp_tool("application_one", "Get an application by its ID.", aid, ["applicationId"]),
        mcp_tool("application_create", "Create an application.", {"name": {"type": "string", "description": "Name"}}, ["name"]),
        mcp_tool("application_start", "Starts an application.", aid, ["applicationId"]),
        mcp_tool("application_stop", "Stops an application.", aid, ["applicationId"]),
    ])
    assert _sets(tools["application_start"]) == [("started", True)]
    assert _sets(tools["application_stop"]) == [("started", False)]



def test_a_that_is_list_after_fields_names_no_values():
    """Azure DevOps' description: "Multi-line text fields (i.e., System.History, AcceptanceCriteria, etc.) must use HTML
    format": a task set a description to "i.e." and the world held "AcceptanceCriteria" (review 71). A list after
    "fields" names other fields; "i.e." is no value."""
    from forgec.gate import documented_examples

    assert documented_examples("Work item description in HTML format. Multi-line text fields (i.e., System.History, "
                               "AcceptanceCriteria, etc.) must use HTML format.") == ()
    assert documented_examples("Genre (i.e., fiction, fantasy, etc.)") == ("fiction", "fantasy")
    assert documented_examples("Language code (uk, en, ru, etc.)") == ("uk", "en", "ru")


def test_codes_said_with_for_are_the_values():
    """Harbor: "the entity's type, u for user entity, g for group entity"; "The role id 1 for projectAdmin, 2 for
    developer, 3 for guest, 4 for maintainer": the world held "custom" and 6048 (review 71)."""
    import random

    from forgec.gate import code_labels, documented_values
    from forgec.stdlib.values import generate_value

    assert documented_values("the entity's type, u for user entity, g for group entity.") == ["u", "g"]
    assert documented_values("Search for items, look for tags.") == []
    doc = "The role id 1 for projectAdmin, 2 for developer, 3 for guest, 4 for maintainer"
    assert code_labels(doc) == {1: "projectAdmin", 2: "developer", 3: "guest", 4: "maintainer"}
    rng = random.Random(0)
    assert {generate_value({"type": "int"}, "role_id", rng, doc=doc) for _ in range(30)} <= {1, 2, 3, 4}


def test_the_docs_shorthand_and_addressing_are_no_request():
    """"Update user's profile" read "update user's profile for my most recent user"; "Delete project by projectID" read
    "delete my project by projectID" (review 71)."""
    from forgec.realize import clause

    assert clause("Update user's profile.") is None
    assert clause("Update the user's profile.").text == "update the user's profile"
    assert clause("Delete project by projectID.").text == "delete project"
    assert clause("Get a user by its ID.").text == "get a user"


def test_a_noun_that_modifies_the_next_is_not_the_record():
    """"Create project webhook policy" with the project named: "create my oldest project webhook policy called X"
    (review 71); the project's place is after the policy."""
    from forgec.scenario import _modifies_next

    assert _modifies_next(" webhook policy called X")
    assert _modifies_next(" policy")
    assert not _modifies_next(" called X")
    assert not _modifies_next(" in my project")
    assert not _modifies_next("")


def test_a_message_is_sent_to_someone(tmp_path):
    """Gmail's `send_message(to?, subject?, body?, ...)`: two optional values filled the subject and body and the
    message went to nobody (review 71). The recipient is asked for first."""
    mid = {"id": {"type": "string", "description": "The ID of the message"}}
    tasks = _tasks(tmp_path, [
        mcp_tool("list_messages", "List the messages in the mailbox.", {}),
        mcp_tool("delete_message", "Delete a message.", mid, ["id"]),
        mcp_tool("send_message", "Send an email message to specified recipients.", {
            "to": {"type": "array", "items": {"type": "string"}, "description": "List of recipient email addresses"},
            "cc": {"type": "array", "items": {"type": "string"}, "description": "List of CC recipient email addresses"},
            "subject": {"type": "string", "description": "The subject of the email"},
            "body": {"type": "string", "description": "The body of the email"}}),
    ], n=40)
    sends = [c for t in tasks for c in t["gold_calls"] if c["tool"] == "send_message"]
    assert sends
    assert all(c["arguments"].get("to") for c in sends), [c["arguments"] for c in sends]


def test_a_new_user_has_a_login_and_another_users_email_is_not_mine(tmp_path):
    """Harbor's `createUser(body: {username, email, realname, comment})` was called with only a comment ("create a
    local user saying "Moved to the new office in March.""), and another user's email was set to "me.work@mail.com"
    (review 71)."""
    uid = {"user_id": {"type": "integer", "description": "The ID of the user"}}
    body = {"type": "object", "properties": {
        "username": {"type": "string", "description": "The user's login name"},
        "email": {"type": "string", "description": "The user's email"},
        "realname": {"type": "string", "description": "The user's full name"},
        "comment": {"type": "string", "description": "A comment"}}}
    tasks = _tasks(tmp_path, [
        mcp_tool("list_users", "List users. Returns each user's ID, username, real name and email.", {}),
        mcp_tool("get_user", "Get a user.", uid, ["user_id"]),
        mcp_tool("create_user", "Creates a new user account.", {"body": body}, ["body"]),
        mcp_tool("update_user_profile", "Update the profile of a user.", {**uid, "body": body}, ["user_id", "body"]),
        mcp_tool("delete_user", "Delete a user.", uid, ["user_id"]),
    ], n=40)
    creates = [c["arguments"]["body"] for t in tasks for c in t["gold_calls"] if c["tool"] == "create_user"]
    assert creates and all(a.get("username") for a in creates), creates
    for a in creates:  # one new person: their login and address are made of the name they are given
        if a.get("realname") and a.get("email"):
            assert a["email"].split("@")[0] == a["realname"].lower().replace(" ", "."), a
    emails = [str(c["arguments"].get("body", {}).get("email")) for t in tasks for c in t["gold_calls"] if c["tool"] == "update_user_profile"]
    assert not [e for e in emails if e.startswith("me.")], emails


def test_a_thread_is_given_no_name(tmp_path):
    """Gmail's threads have no name in the docs; one was invented and a task deleted "my thread called "Performance
    review"" (review 71). A message or a thread is found by what it holds, not called anything; a label still is."""
    from conftest import schema_of

    tid = {"threadId": {"type": "string", "description": "The ID of the thread"}}
    bid = {"boardId": {"type": "string", "description": "The ID of the board"}}
    s = schema_of(tmp_path, [
        mcp_tool("list_threads", "List the threads.", {}),
        mcp_tool("delete_thread", "Delete a thread.", tid, ["threadId"]),
        mcp_tool("list_boards", "List the boards.", {}),
        mcp_tool("delete_board", "Delete a board.", bid, ["boardId"]),
    ])
    assert "name" not in s.entities["Thread"].fields
    assert "name" in s.entities["Board"].fields


def test_a_schema_phrase_and_an_unlisted_kind_are_not_said(tmp_path):
    """Harbor: "delete my replication policy with the highest dest namespace replace count"; "create a project webhook
    policy ... with the event type set to standard" where the docs list no event types (review 71)."""
    pid = {"project_id": {"type": "integer", "description": "The project ID"}}
    body = {"type": "object", "properties": {
        "name": {"type": "string", "description": "The project name"},
        "event_type": {"type": "string", "description": "The event type"},
        "dest_namespace_replace_count": {"type": "integer", "description": "Replace count of the destination namespace"},
        "priority": {"type": "integer", "description": "The priority of the project"}}}
    tasks = _tasks(tmp_path, [
        mcp_tool("list_projects", "List the projects. Returns each project's ID, name, event type, dest namespace replace "
                                  "count and priority.", {}),
        mcp_tool("create_project", "Create a project.", {"body": body}, ["body"]),
        mcp_tool("update_project", "Update a project.", {**pid, "body": body}, ["project_id", "body"]),
        mcp_tool("delete_project", "Delete a project.", pid, ["project_id"]),
    ], n=40)
    assert tasks
    for t in tasks:
        assert "replace count" not in t["instruction"] and "event type" not in t["instruction"], t["instruction"]
    prios = [c["arguments"]["body"]["priority"] for t in tasks for c in t["gold_calls"]
             if c["tool"] in ("create_policy", "update_policy") and "priority" in c["arguments"].get("body", {})]
    assert all(1 <= p <= 4 for p in prios), prios


def test_the_states_a_search_filters_by_are_the_records_states(tmp_path):
    """SonarQube's `issues(statuses: [OPEN|CONFIRMED|REOPENED|RESOLVED|CLOSED] | string | null)`: issues were "active"
    and "won't fix" (a resolution, not a status), and "Reopen" set "open" (review 72)."""
    ik = {"issue_key": {"type": "string", "description": "The key of the issue"}}
    states = {"anyOf": [{"anyOf": [{"type": "array", "items": {"type": "string", "enum": ["OPEN", "CONFIRMED", "REOPENED", "RESOLVED", "CLOSED"]}},
                                   {"type": "string"}]}, {"type": "null"}]}
    tools = _synth(tmp_path, [
        mcp_tool("issues", "Search and filter issues by status.", {"statuses": states}),
        mcp_tool("resolveIssue", "Resolve an issue.", ik, ["issue_key"]),
        mcp_tool("reopenIssue", "Reopen an issue.", ik, ["issue_key"]),
        mcp_tool("markIssueWontFix", "Mark an issue as won't fix.", ik, ["issue_key"]),
    ])
    assert ("status", "RESOLVED") in _sets(tools["resolveIssue"])
    assert ("status", "REOPENED") in _sets(tools["reopenIssue"])
    assert not [x for x in _sets(tools["markIssueWontFix"]) if x[0] == "status"]


def test_a_new_records_own_identifier_is_no_reference(tmp_path):
    """Plane's `create_project(name, identifier: "The identifier of the project ... derived from the name")`: the new
    project was given another project's id (review 72); it is the new project's own code."""
    tools = _synth(tmp_path, [
        mcp_tool("get_projects", "Get all projects.", {}),
        mcp_tool("create_project", "Create a new project", {
            "name": {"type": "string", "description": "The name of the project"},
            "identifier": {"type": "string", "maxLength": 7, "description": "The identifier of the project. This is typically a word "
                                                                              "of around 5 characters derived from the name of the project in uppercase."}},
                 ["name", "identifier"]),
        mcp_tool("delete_project", "Delete a project.", {"project_id": {"type": "string", "description": "The ID of the project"}}, ["project_id"]),
    ])
    p = next(p for p in tools["create_project"].params if p.name == "identifier")
    assert p.type == A.PrimType("str"), p.type


def test_an_environment_and_a_company_are_named_as_people_name_them():
    """Postman: environments "Turner-Erickson", a workspace "Kerr, Rogers and Mcmahon" (review 73); a plugin's
    `capabilities: ["team offsite"]` (review 72): a list nothing says the meaning of stays empty; tags keep topics."""
    import random

    from forgec.stdlib.values import ENVIRONMENTS, generate_value

    rng = random.Random(3)
    envs = {generate_value({"type": "str"}, "name", rng, entity="Environment") for _ in range(12)}
    assert all(v.split()[0] in ENVIRONMENTS for v in envs), envs
    orgs = [generate_value({"type": "str"}, "name", rng, entity="Company") for _ in range(40)]
    assert not [o for o in orgs if "," in o or " and " in o], orgs
    assert generate_value({"type": "list", "items": {"type": "str"}}, "capabilities", rng, entity="Plugin") == []
    assert generate_value({"type": "list", "items": {"type": "str"}}, "tags", rng, entity="Plugin")


def test_a_documented_default_fills_a_field_that_starts_empty(tmp_path):
    """"title: Reminder title (defaults to email subject)": the reminder was stored with title "" when the title was
    left out (review 73); it takes the email's subject."""
    from forgec.lang import ast as A

    eid = {"email_id": {"type": "string", "description": "Email ID from list_emails"}}
    tools = _synth(tmp_path, [
        mcp_tool("list_emails", "List emails. Returns each email's ID, subject and sender.", {}),
        mcp_tool("list_reminders", "List reminders. Returns each reminder's title and due date.", {}),
        mcp_tool("create_reminder", "Create a reminder from an email.", {
            **eid, "title": {"type": "string", "description": "Reminder title (defaults to email subject)"}}, ["email_id"]),
    ])
    body = tools["create_reminder"].body
    ifs = [st for st in body if isinstance(st, A.If) and any(isinstance(x, A.Set) and getattr(x.value, "name", "") == "subject" for x in st.then)]
    assert ifs and "Literal(value='')" in repr(ifs[0].cond), [repr(st)[:200] for st in body]


def test_a_record_made_inside_a_topic_is_a_part_of_it():
    """Confluence: a page "Holiday schedule" made in the space "Quarterly budget" read as a random pairing (review 73): a
    record made inside one named by a topic is named as a part of it; one made without a place keeps a fresh topic."""
    import random

    from forgec.stdlib.values import said_value

    for seed in range(20):
        v = said_value("title", "Title of the page", random.Random(seed), about="Quarterly budget", noun="Page", inside="Quarterly budget")
        assert v.startswith("Quarterly budget ") and v != "Quarterly budget budget", v
        w = said_value("title", "Title of the page", random.Random(seed), about="Quarterly budget", noun="Page")
        assert "quarterly budget" not in w.lower(), w


def test_a_delete_that_trashes_keeps_the_record_unless_forced(tmp_path):
    """WordPress's `wp_delete_comment(force: "If true, the comment will be permanently deleted. Defaults to false (moved
    to trash).")`: the gold removed the comment for good (review 74); left as it is, the comment goes to the trash."""
    cid = {"id": {"type": "integer", "description": "The ID of the comment."}}
    tools = _synth(tmp_path, [
        mcp_tool("list_comments", "List comments. Returns each comment's ID, author name, content and status.", {
            "status": {"type": "string", "description": "Filter by status"}}),
        mcp_tool("delete_comment", "Deletes a comment.", {**cid, "force": {
            "type": "boolean", "description": "If true, the comment will be permanently deleted. Defaults to false (moved to trash)."}}, ["id"]),
    ])
    body = tools["delete_comment"].body
    branch = next(st for st in body if isinstance(st, A.If))
    assert any(isinstance(x, A.Delete) for x in branch.then)
    assert [(x.target.name, x.value.value) for x in branch.orelse if isinstance(x, A.Set)] == [("status", "trash")]


def test_an_undescribed_envelope_holds_no_field_of_the_record(tmp_path):
    """Dokploy's `project_create` returns `{success, message, data}` with `data` undescribed: every project stored
    `success: false` and `message` (review 74)."""
    from conftest import schema_of

    env_ret = {"type": "object", "properties": {"success": {"type": "boolean"}, "message": {"type": "string"}, "data": {}},
               "required": ["success", "message"]}
    pid = {"projectId": {"type": "string", "description": "The ID of the project."}}
    tools = [
        mcp_tool("project_all", "Lists all projects.", {}),
        mcp_tool("project_create", "Creates a new project.", {"name": {"type": "string", "description": "The name of the project."}}, ["name"]),
        mcp_tool("project_remove", "Removes a project.", pid, ["projectId"]),
    ]
    for t in tools:
        t["outputSchema"] = env_ret
    s = schema_of(tmp_path, tools)
    assert not {"success", "message", "data"} & set(s.entities["Project"].fields), list(s.entities["Project"].fields)
