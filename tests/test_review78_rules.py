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
