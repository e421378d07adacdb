"""Rules found in blind review 75 (each checked against hand-built docs or hand-written expectations, not the corpus)."""

from __future__ import annotations

import json
import random
import re

from conftest import mcp_tool
from test_review70_rules import _tasks


def _lister(name: str, desc: str, key: str, fields: dict) -> dict:
    """A list tool whose `outputSchema` gives the records' fields (as MCP servers with typed output list them)."""
    items = {"type": "object", "properties": {"id": {"type": "string"}, **fields}}
    return {**mcp_tool(name, desc, {}), "outputSchema": {"type": "object", "properties": {key: {"type": "array", "items": items}}}}


def _notebooks(read_only: bool):
    lid = {"id": {"type": "string", "description": "The notebook ID."}}
    desc = "The description of the notebook. Read-only." if read_only else "The description of the notebook."
    return [
        _lister("get_notebooks", "Get all notebooks.", "notebooks", {"name": {"type": "string"}, "description": {"type": "string"},
                                                          "order": {"type": "integer"}}),
        mcp_tool("update_notebook", "Update a notebook.", {**lid, "name": {"type": "string", "description": "The new name of the notebook."},
                                                     "description": {"type": "string", "description": desc},
                                                     "order": {"type": "integer", "description": "The position of the notebook in the notebook list."}},
                 ["id"]),
        mcp_tool("create_notebook", "Create a new notebook.", {"name": {"type": "string", "description": "The name of the notebook."},
                                                         "description": {"type": "string", "description": desc},
                                                         "order": {"type": "integer", "description": "The display order of the notebook."}},
                 ["name"]),
    ]


def test_a_read_only_field_and_a_list_position_are_never_asked_for(tmp_path):
    """Microsoft 365's `hexColor: Read-only` and a OneNote page's "order ... Read-only" were set by gold calls; Todoist's
    "update my label called X with order 3" (review 75). The service sets what the docs call read-only, and a place in a
    list the app keeps is no value a person gives; the same docs without "Read-only" still get descriptions."""
    def writes(tasks, arg):
        return [c for t in tasks for c in t["gold_calls"] if c["tool"] in ("update_notebook", "create_notebook") and arg in c["arguments"]]

    ro = _tasks(tmp_path / "ro", _notebooks(True))
    assert ro, "the label docs yield tasks"
    assert writes(ro, "description") == [] and writes(ro, "order") == []
    assert not any(re.search(r"\border\b", t["instruction"]) for t in ro)
    rw = _tasks(tmp_path / "rw", _notebooks(False))
    assert writes(rw, "description"), "a description the docs let a person set is still asked for"
    assert writes(rw, "order") == []


def test_a_software_teams_world_names_its_projects_like_software():
    """A Jira fix version "in the project called Kitchen renovation", a Dokploy project "Fitness plan" (reviews 74-75):
    a world with repositories, deployments or issues and projects is a software team's; its projects are named like
    software and no record talks of a private life. A personal to-do app's world keeps its topics."""
    from forgec.stdlib.values import PERSONAL_TOPICS, SOFTWARE_NAMES, generate_state, software_world

    assert software_world(["Project", "Issue", "Comment"]) and software_world(["Application", "Server"])
    assert software_world(["Repository", "Branch"]) and not software_world(["Project", "Task", "Section", "Label"])
    assert not software_world(["Book", "Library"])

    def schema(ents):
        return {"entities": {e: {"key": "id", "fields": {"id": {"type": "str"}, "name": {"type": "str"},
                                                          "description": {"type": "str"}}} for e in ents}}
    soft = generate_state(schema(["Project", "Issue"]), seed=0, size=12)["entities"]
    names = [r["name"] for r in soft["Project"].values() if r.get("name")]
    assert names and all(any(n.lower().startswith(s.lower()) for s in SOFTWARE_NAMES) for n in names), names
    text = json.dumps(soft).lower()
    assert not any(p in text for p in PERSONAL_TOPICS), [p for p in PERSONAL_TOPICS if p in text]
    todo = generate_state(schema(["Project", "Task"]), seed=0, size=12)["entities"]
    assert not any(r.get("name") in SOFTWARE_NAMES for r in todo["Project"].values())


def test_software_renames_change_the_version_not_the_stage():
    """"Rename Checkout service to Checkout service (phase 2)" reads as a plan, not software: a software name at
    another version is "v2", "(legacy)", "beta", "EU"."""
    from forgec.stdlib.values import name_variants, renamed

    assert name_variants("Checkout service") == ["Checkout service v2", "Checkout service (legacy)", "Checkout service beta",
                                                 "Checkout service EU"]
    assert "Team offsite (phase 2)" in name_variants("Team offsite")
    assert renamed("Payments API v2", random.Random(1)) in ("Payments API", "Payments API (legacy)", "Payments API beta",
                                                           "Payments API EU")


def test_a_branch_world_has_names_for_every_branch():
    """90 branches from 34 topics left 56 `branch_7`s no person names (a world that then yields no delete): a branch is
    also "feature/...", "fix/...", "release/..."."""
    from forgec.stdlib.values import generate_state

    ents = generate_state({"entities": {"Branch": {"key": "branch_name", "fields": {"branch_name": {"type": "str"}}}}},
                          seed=0, size=90)["entities"]["Branch"]
    assert len(ents) == 90 and not any(re.fullmatch(r"branch_\d+", k) for k in ents), sorted(ents)[:5]
    assert any(k.startswith("feature/") for k in ents)


def test_field_abbreviations_are_said_in_full():
    """ERPNext's `exp_start_date`: "with exp start date 2024-05-19" (review 75); `qty`: "if its qty is less than 6"."""
    from forgec.wording import humanize

    assert humanize("exp_start_date") == "expected start date"
    assert humanize("exp_end_date") == "expected end date"
    assert humanize("expMonth") == "expiration month"
    assert humanize("qty") == "quantity"
    assert humanize("export_format") == "export format"


def test_a_subject_never_repeats_its_topic():
    """A Microsoft 365 event "Billing update update" (review 75)."""
    from forgec.stdlib.values import subject_forms

    assert "{T} update" not in subject_forms("billing update")
    assert "{T} update" in subject_forms("conference travel")


def test_said_values_read_as_english():
    """"with author X and the reading status" (the status `reading` as an adjective, review 75); "create a new fix version
    ... on 2024-05-23" for its release date; a task's "on DATE" for the day it is for stays."""
    from forgec.scenario import _say_param

    assert _say_param("status", "reading") == "the status set to reading"
    assert _say_param("status", "downloaded") == "the downloaded status"
    assert _say_param("release_date", "2024-05-23") != "on 2024-05-23"
    assert _say_param("date", "2024-05-23") == "on 2024-05-23"
