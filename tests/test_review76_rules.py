"""Rules found in blind review 76 (each checked against hand-written expectations, not forgec's own output)."""

from __future__ import annotations

import random
import re


def _schema(ent: str) -> dict:
    return {"entities": {ent: {"key": "id", "fields": {"id": {"type": "str"}, "name": {"type": "str"}}}}}


def test_a_sprint_is_numbered_as_a_team_counts_them():
    """Jira sprints "API documentation notes" made on the board "API documentation" (review 76: 6 of 7 Jira tasks
    rejected). A sprint, an iteration, a cycle is "Sprint 12"; the next one a task makes is the one after the last;
    no one renames "Sprint 40" to "Sprint 62"; and "Sprint 12" is the sprint's name, no stand-in for a missing one."""
    from forgec.stdlib.values import generate_state, placeholder_name, said_value

    sprints = generate_state(_schema("Sprint"), seed=0, size=6)["entities"]["Sprint"]
    names = sorted(r["name"] for r in sprints.values() if r.get("name"))
    assert names and all(re.fullmatch(r"Sprint \d+", n) for n in names), names
    assert len(set(names)) == len(names)
    assert not placeholder_name("Sprint", "Sprint 12") and placeholder_name("Recipe", "Recipe 3")
    assert said_value("name", "", random.Random(0), noun="Sprint", taken=frozenset({"sprint 12", "sprint 14"})) == "Sprint 15"
    assert said_value("name", "", random.Random(0), noun="Sprint", renaming="Sprint 14") is None


def test_a_campaign_is_named_like_one():
    """Listmonk's campaigns "Kitchen renovation", "Family trip" (review 76): a marketing campaign is named for its offer
    or its issue."""
    from forgec.stdlib.values import CATEGORY_NAMES, generate_state

    camps = generate_state(_schema("Campaign"), seed=0, size=8)["entities"]["Campaign"]
    names = [r["name"] for r in camps.values() if r.get("name")]
    assert names and all(n in CATEGORY_NAMES["campaign"] for n in names), names


def test_a_new_subscriber_has_their_own_address():
    """"create a new subscriber called "Suzanne Jackson" with email me.work@post.net" (found reading review 76's
    Listmonk tasks): a new person's address is made of the name the user gives them. And "modify subscriber data for
    my subscriber called X" (the docs' "Modify subscriber data") is said by what changes."""
    from conftest import mcp_tool
    from test_review70_rules import _tasks

    import tempfile
    from pathlib import Path

    sid = {"id": {"type": "integer", "description": "The subscriber's ID."}}
    with tempfile.TemporaryDirectory() as d:
        tasks = _tasks(Path(d), [
            mcp_tool("get_subscribers", "Return all subscribers.", {}),
            mcp_tool("create_subscriber", "Create a new subscriber.", {"name": {"type": "string", "description": "The subscriber's name."},
                                                                       "email": {"type": "string", "description": "The subscriber's email."}},
                     ["name", "email"]),
            mcp_tool("update_subscriber", "Modify subscriber data.", {**sid, "email": {"type": "string", "description": "The subscriber's email."},
                                                                      "notes": {"type": "string", "description": "Notes about the subscriber."}},
                     ["id"]),
        ])
    changed = [t["instruction"] for t in tasks if any(c["tool"] == "update_subscriber" for c in t["gold_calls"])]
    assert changed and not any("subscriber data" in i for i in changed), changed
    # a new subscriber's address is theirs, made of the name the user gives, never the user's own "me.work@..."
    made = [c["arguments"] for t in tasks for c in t["gold_calls"] if c["tool"] == "create_subscriber"]
    assert made and not any(a["email"].startswith("me.") for a in made), made
    assert all(re.match(re.escape(a["name"].lower().replace(" ", ".")) + r"[.@]", a["email"]) for a in made), made
