"""Rules found in blind review 78 and in reading its doc sets (each checked against hand-built docs or hand-written
expectations, not the corpus)."""

from __future__ import annotations

import random

from conftest import mcp_tool, schema_of

S = {"type": "string"}
KEY = {"issue_key": {"type": "string", "description": "The key of the issue"}}


def test_undoing_and_redoing_verbs_need_the_state_they_act_on(tmp_path):
    """SonarQube: the gold "unconfirmed" a REOPENED issue and "reopened" a CONFIRMED one, two no-ops (review 78). An
    unconfirm acts on a confirmed issue and leaves it reopened; a reopen acts on a resolved or closed one."""
    s = schema_of(tmp_path, [
        mcp_tool("issues", "Search issues.", {"statuses": {"type": "array", "items": {
            "type": "string", "enum": ["OPEN", "CONFIRMED", "REOPENED", "RESOLVED", "CLOSED"]}, "description": "Filter by statuses"}}),
        mcp_tool("confirmIssue", "Confirm an issue", KEY, ["issue_key"]),
        mcp_tool("unconfirmIssue", "Unconfirm an issue", KEY, ["issue_key"]),
        mcp_tool("reopenIssue", "Reopen an issue", KEY, ["issue_key"]),
    ])
    un, re_ = s.views["unconfirmIssue"], s.views["reopenIssue"]
    assert (un.status_pre, un.status_post) == ("CONFIRMED", "REOPENED"), (un.status_pre, un.status_post)
    assert re_.status_post == "REOPENED" and set(re_.status_allowed) == {"RESOLVED", "CLOSED"}, re_.status_allowed


def test_a_built_in_list_is_never_renamed_or_deleted():
    """Microsoft To Do's default list and flagged-emails list ("Built-in lists ... cannot be deleted") were deleted and
    renamed (review 78): a record the product names by its `wellknownListName`, or flags built-in, is the product's."""
    from forgec.scenario import product_owned

    assert product_owned({"displayName": "Tasks", "wellknownListName": "defaultList"})
    assert product_owned({"displayName": "Flagged", "wellknownListName": "flaggedEmails"})
    assert not product_owned({"displayName": "Groceries", "wellknownListName": "none"})
    assert product_owned({"title": "Trending", "isBuiltIn": True}) and not product_owned({"title": "Mine", "isBuiltIn": False})
    assert product_owned({"name": "admin", "readOnly": True}) and not product_owned({"name": "x", "enabled": True})


def test_clause_wording():
    """"reply the to the sender of a message" (Microsoft 365: a preposition read as a bare noun), "the epic with the
    highest due" (Shortcut), "create a new Task" (ERPNext's type name), "Re: order service" as a task's subject."""
    from forgec.sample import superlative
    from forgec.scenario import _BARE_NP
    from forgec.stdlib.values import is_message, said_value

    assert _BARE_NP.match("reply to the sender of a message") is None
    assert _BARE_NP.match("update reading status of a book") is not None
    assert superlative("argmax", "due", "epic") == "the epic with the latest due date"
    assert superlative("argmin", "deadline", "task") == "the task with the earliest deadline"
    assert is_message("Draft") and is_message("EmailMessage") and not is_message("Task")
    for seed in range(20):
        v = said_value("subject", "", random.Random(seed), noun="Task")
        assert v and not v.startswith(("Re:", "Question about")) and not v.endswith(("next steps", " update")), v
    assert any(said_value("subject", "", random.Random(seed), noun="Message").startswith(("Re:", "Question about"))
               for seed in range(20))


def test_a_soft_delete_is_a_move_to_the_trash():
    """Microsoft Graph's `delete-mail-message`: "This is a soft delete that moves the message to Deleted Items" (read
    in review 78's doc sets): the message stays, in the trash; a plain "Delete a message" removes it."""
    from forgec.synth.effects import _TO_TRASH

    assert _TO_TRASH.match("Delete an Outlook email message by its message ID. This is a soft delete that moves the message to Deleted Items.")
    assert _TO_TRASH.match("Move a Zotero item to the Trash. Trashed items are recoverable.")
    assert not _TO_TRASH.match("Delete a message. This cannot be undone.")
    assert not _TO_TRASH.match("Delete a folder and move its items to the parent folder.")


def test_a_number_the_user_says_describes_no_other_record():
    """forgec evolve's `left-open-record`: "set the priority of my ticket to 3" pinned the ticket's agent because that
    agent's `open_tickets` happened to be 3, so a second ticket that fits the words read as an agent error."""
    from forgec.evolve import stated_fields

    state = {"entities": {
        "Agent": {"a1": {"agent_id": "a1", "name": "Jo Park", "open_tickets": 3}, "a2": {"agent_id": "a2", "name": "Al Diaz", "open_tickets": 5}},
        "Ticket": {"t1": {"ticket_id": "t1", "agent_id": "a1", "priority": 1}, "t2": {"ticket_id": "t2", "agent_id": "a2", "priority": 4}}}}
    assert "agent_id" not in stated_fields(state, "Ticket", "t1", {"3"}, set())
    assert "agent_id" in stated_fields(state, "Ticket", "t1", {"jo park"}, set())  # "the agent called Jo Park" does


def test_a_record_keyed_by_its_name_is_called_by_it():
    """ERPNext's projects are keyed by `project_name` ("Admin dashboard"); tasks said "my open project ending
    2023-12-15" (review 75). A key that is the record's own name is what it is called; a workflow step of three words
    ("To Deliver and Bill") names no record its owner knows."""
    import random as _r

    from forgec.scenario import Referring, describe, refer

    assert describe("project", Referring((("project_name", "Admin dashboard"),))) == 'my project called "Admin dashboard"'
    orders = [{"id": "a", "status": "To Deliver and Bill", "date": "2024-04-06", "total": 10},
              {"id": "b", "status": "Draft", "date": "2024-04-06", "total": 12}]
    ref = refer(orders, 0, ["status", "date"], _r.Random(0), superlatives=False)
    assert ref is None or all(f != "status" for f, _ in ref.attrs), ref


def test_a_planner_tasks_chat_message_is_not_a_mail_message(tmp_path):
    """Microsoft Graph: `list-planner-task-messages` listed mail `Message`s "in my planner task", and
    `delete-planner-task-message(plannerTaskId, plannerTaskChatMessageId)` deleted the planner task (review 78: three
    mail replies and forwards reached through Planner). The tool's words name the chat message; the task is its home."""
    tid = {"plannerTaskId": {"type": "string", "description": "The planner task id"}}
    s = schema_of(tmp_path, [
        mcp_tool("list-mail-messages", "List mail messages.", {}),
        mcp_tool("delete-mail-message", "Delete a mail message.", {"messageId": {"type": "string", "description": "The message id"}}, ["messageId"]),
        mcp_tool("list-planner-tasks", "List planner tasks.", {}),
        mcp_tool("get-planner-task", "Get a planner task.", tid, ["plannerTaskId"]),
        mcp_tool("list-planner-task-messages", "List the chat messages of a planner task.", tid, ["plannerTaskId"]),
        mcp_tool("delete-planner-task-message", "Delete a chat message of a planner task.",
                 {**tid, "plannerTaskChatMessageId": {"type": "string", "description": "The chat message id"}}, ["plannerTaskId", "plannerTaskChatMessageId"]),
    ])
    lst, dl = s.views["list_planner_task_messages"], s.views["delete_planner_task_message"]
    assert lst.target == "PlannerTaskChatMessage" and dl.target == "PlannerTaskChatMessage", (lst.target, dl.target)
    assert dl.key_param == "plannerTaskChatMessageId"
    assert s.views["delete_mail_message"].target == "Message" and s.views["get_planner_task"].target == "PlannerTask"
