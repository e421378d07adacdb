"""Rules found in blind review 79 and in reading its doc sets (each checked against hand-built docs or hand-written
expectations, not the corpus)."""

from __future__ import annotations

import json
import re

from conftest import compile_doc, mcp_tool, schema_of
from test_review70_rules import _tasks

S = {"type": "string"}


def test_a_finished_task_is_only_reopened(tmp_path):
    """Dex: "change the priority of my task X" while X is `completed: true` (review 79, two rejections): an edit of a
    finished task is no request unless it is the reopening itself."""
    tid = {"id": {"type": "string", "description": "Task ID"}}
    tasks = _tasks(tmp_path, [
        {**mcp_tool("list_tasks", "List tasks.", {}), "outputSchema": {"type": "object", "properties": {"tasks": {"type": "array", "items": {
            "type": "object", "properties": {"id": S, "name": S, "priority": {"type": "integer"}, "completed": {"type": "boolean"}}}}}}},
        mcp_tool("update_task", "Update task fields.", {**tid, "name": {"type": "string", "description": "Updated name"},
                                                         "priority": {"type": "integer", "description": "Updated priority (1-5)"},
                                                         "completed": {"type": "boolean", "description": "Mark task as completed (true) or pending (false)"}},
                 ["id"]),
    ], n=40)
    assert any(c["tool"] == "update_task" for t in tasks for c in t["gold_calls"]), [t["instruction"] for t in tasks]
    done = 0
    for t in tasks:
        state = json.loads((tmp_path / "b" / t["initial_state_file"]).read_text())["entities"] if t.get("initial_state_file") else t["initial_state"]["entities"]
        recs = next(iter(state.values())) if "Task" not in state else state["Task"]
        for c in t["gold_calls"]:
            if c["tool"] == "update_task":
                rec = recs[str(c["arguments"]["id"])]
                assert not rec.get("completed") or "completed" in c["arguments"], (t["instruction"], rec, c["arguments"])
                done += bool(rec.get("completed"))
    # (a finished task is still reopened: the world holds some, and an update that reopens one is a request)


def test_a_documented_cascade_reaches_the_grandchildren(tmp_path):
    """Zotero: "Subcollections ARE deleted along with the parent" left sub-sub-collections pointing at a deleted parent
    (review 79). The cascade reaches three levels down."""
    ck = {"collection_key": {"type": "string", "description": "The collection key"}}
    out = compile_doc(tmp_path, "lib", "tools_list.json", {"tools": [
        mcp_tool("get_collections", "List all collections.", {}),
        mcp_tool("create_collection", "Create a collection.", {"name": S, "parent_collection": {"type": "string", "description": "The parent collection key"}},
                 ["name"]),
        mcp_tool("delete_collection", "Delete a collection. Subcollections ARE deleted along with the parent.", ck, ["collection_key"]),
    ]}, 5)
    from runtime_build import load_env_module

    mod = load_env_module(next(out.glob("envs/*/env.py")))
    env = mod.Env({"entities": {"Collection": {
        "A": {"collection_key": "A", "name": "Top", "parent_collection": None},
        "B": {"collection_key": "B", "name": "Mid", "parent_collection": "A"},
        "C": {"collection_key": "C", "name": "Low", "parent_collection": "B"},
        "D": {"collection_key": "D", "name": "Other", "parent_collection": None}}}, "globals": {}})
    env.step("delete_collection", {"collection_key": "A"})
    assert set(env.state["entities"]["Collection"]) == {"D"}, env.state["entities"]["Collection"]


def test_values_said_as_a_person_says_them(tmp_path):
    """Jira: "set its end date to "2024-06-10T11:30:00"" (review 79), a fix version released before it starts, GitLab's
    `state_event` (an act, no state) asked as "the state event of the issue", a condition "more than 0"."""
    from forgec.scenario import _set_value
    from forgec.stdlib.values import span_pairs

    assert _set_value("end_date", "2024-06-10T11:30:00", {}) == "2024-06-10 at 11:30"
    assert ("start_date", "release_date") in span_pairs(("start_date", "release_date", "name"))
    s = schema_of(tmp_path, [
        mcp_tool("list_issues", "List issues.", {}),
        mcp_tool("update_issue", "Update an issue.", {"issue_iid": {"type": "string", "description": "The issue iid"}, "title": S,
                                                      "state_event": {"type": "string", "enum": ["close", "reopen"], "description": "Update issue state"}},
                 ["issue_iid"]),
    ])
    assert "state_event" not in s.entities["Issue"].fields, s.entities["Issue"].fields


def test_a_coded_status_takes_no_state_word():
    """Found by the hypothesis fuzz in a clean-clone CI run: `status: enum(1, 2, 3)` and the prose "The status will be
    changed to 'closed'" made `enum(1, 2, 3, "closed")`, which `check` refuses (mixed types)."""
    from forgec import ir, lang
    from forgec.lang import ast as A
    from forgec.synth import synthesize

    env = ir.Environment(name="fuzz", tools=(ir.Tool(name="get", description="The status will be changed to 'closed'.", params=(
        ir.Param(name="order_id", type=ir.Type(kind="string"), required=False),
        ir.Param(name="status", type=ir.Type(kind="enum", values=(1, 2, 3)), required=False)), http_method="POST",
        http_path="/x/things/{thing_id}/run", format="openai"),))
    decl, _ = synthesize(env)
    text = lang.format(A.Module(file="fuzz.forge", items=(decl,)))
    mod, diags = lang.parse(text, "fuzz.forge")
    assert not [d for d in diags + lang.check([mod]) if d.is_error], text
    assert 'enum(1, 2, 3, "closed")' not in text
