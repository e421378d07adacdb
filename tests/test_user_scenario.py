"""The user scenario end to end: blueprint `user { ... }` -> task schema 1.1 `user.scenario`
-> runtime (1.0 task files still load) -> scripted user + oracle agent dialogues."""

from __future__ import annotations

import json

import pytest

from forgec.lang import ast as A
from forgec.runtime.loader import BuildError, load, record_files
from forgec.tasks import TASK_SCHEMA_VERSION, Task
from tests.runtime_build import make_build
from tests.test_lower import CANCEL, CHEAPEST, GET, PENDING, bp, lower

# --------------------------------------------------------------------------- schema + lowering


def test_lowering_maps_the_user_block_into_the_scenario():
    b = bp(GET, PENDING, CHEAPEST, CANCEL, facts=(("user_id", "u1"), ("name", "Ann Lee")))
    u = A.UserBlock("I ordered twice; please cancel the cheaper one.", "Ann, in a hurry", b.user.facts,
                    "I ordered the same thing twice", ("order id",),
                    (A.Intent("cancel my cheapest pending order"), A.Intent("tell me the refund", "the order was paid")))
    t = lower(A.BlueprintDecl(b.name, b.env, u, b.nodes)).task
    assert t.schema_version == TASK_SCHEMA_VERSION == "1.1"
    assert t.user.facts == {"user_id": "u1"}  # told facts: the ones the calls use
    s = t.user.scenario
    assert s.persona == "Ann, in a hurry" and s.reason_for_call == "I ordered the same thing twice"
    assert s.known_info == {"name": "Ann Lee", "user_id": "u1"}  # everything the user knows, used or not
    assert s.unknown_info == ["order id"] and type(s.unknown_info[0]) is str
    assert s.task_instructions == "I ordered twice; please cancel the cheaper one."
    assert [(i.text, i.condition) for i in s.intents] == [("cancel my cheapest pending order", ""),
                                                         ("tell me the refund", "the order was paid")]
    back = Task.model_validate_json(t.model_dump_json())
    assert back == t


def test_a_blueprint_without_scenario_clauses_still_gets_a_scenario():
    t = lower(bp(GET, PENDING, CHEAPEST, CANCEL)).task
    s = t.user.scenario
    assert (s.reason_for_call, s.unknown_info, s.intents) == ("", [], [])
    assert s.known_info == {"user_id": "u1"} and s.task_instructions == "cancel my cheapest pending order"


def _rewrite_tasks(root, edit):
    p = root / "tasks" / "shop.jsonl"
    lines = [json.dumps(edit(json.loads(line)), sort_keys=True) for line in p.read_text().splitlines() if line.strip()]
    p.write_text("\n".join(lines) + "\n")
    record_files(root)
    return root


def test_runtime_reads_task_files_of_both_versions(tmp_path):
    old = _rewrite_tasks(make_build(tmp_path / "v10"), lambda t: {**t, "schema_version": "1.0"})
    b = load(old)
    assert b.tasks and all(t.schema_version == "1.0" and t.user.scenario is None for t in b.tasks)
    scen = {"persona": "", "reason_for_call": "moving house", "known_info": {"email": "a@b.c"}, "unknown_info": ["order id"],
            "task_instructions": "g", "intents": [{"text": "change the address", "condition": ""}]}
    new = _rewrite_tasks(make_build(tmp_path / "v11"),
                         lambda t: {**t, "schema_version": "1.1", "user": {**t["user"], "scenario": scen}})
    b = load(new)
    assert all(t.user.scenario.reason_for_call == "moving house" for t in b.tasks)
    bad = _rewrite_tasks(make_build(tmp_path / "v99"), lambda t: {**t, "schema_version": "9.9"})
    with pytest.raises(BuildError, match="task schema version '9.9' is not one of 1.0, 1.1"):
        load(bad)
    with pytest.raises(BuildError, match="scenario"):  # a 1.0-shaped file with a misspelt scenario field is corrupt
        load(_rewrite_tasks(make_build(tmp_path / "typo"),
                            lambda t: {**t, "user": {**t["user"], "scenario": {**scen, "reason": "x"}}}))
