"""Rules from blind review 70 (40 tasks from 6 broad-corpus doc sets, 22 accepted). Checked against hand-built docs and
hand-computed expectations, not against forgec's own output."""

from __future__ import annotations

import json
import re

from conftest import compile_doc, mcp_tool


def test_a_contraction_is_one_state():
    """"Mark an issue as won't fix" gave SonarQube issues the state "won" (review 70)."""
    from forgec.synth import prose

    assert [(f.kind, f.value) for f in prose.read_sentence("Mark an issue as won't fix")] == [("status", "won't fix")]
    assert [(f.kind, f.value) for f in prose.read_sentence("Mark the order as shipped")] == [("status", "shipped")]


def test_confirm_acts_on_a_record_unless_the_user_is_its_object():
    """"Confirm a SonarQube issue" had no verb phrase ("confirm" was the agent's conduct only), so the task said the
    name's next word: "issue my issue" (review 70). Confirming with the user stays conduct."""
    from forgec.realize import clause

    assert clause("Confirm a SonarQube issue").text == "confirm a SonarQube issue"
    assert clause("Confirm the details with the user before booking.") is None
    assert clause("Confirm that the order exists.") is None


def test_a_status_said_after_to_is_quoted():
    """`TO_REVIEW` said "update the status of my hotspot ... to to review" (review 70)."""
    from forgec.scenario import _set_value

    assert _set_value("status", "TO_REVIEW", {}) == '"to review"'
    assert _set_value("status", "IN_PROGRESS", {}) == "in progress"


def _tasks(tmp_path, tools, n=40):
    out = compile_doc(tmp_path, "app", "tools_list.json", {"tools": tools}, n)
    return [json.loads(x) for f in out.glob("tasks/*.jsonl") for x in f.read_text().splitlines() if x.strip()]


def test_no_task_logs_in_or_out(tmp_path):
    """"I want to end the current session. Also, please delete my client ..." logged out before the delete (review 70): a
    login or logout is the session an episode runs in, never a request."""
    cid = {"id": {"type": "integer", "description": "The client's ID."}}
    tasks = _tasks(tmp_path, [
        mcp_tool("login", "Authenticate with a username and create a session.", {"username": {"type": "string", "description": "The user name."}},
                 ["username"]),
        mcp_tool("logout", "End the current session.", {}),
        mcp_tool("get_clients", "Return all clients.", {}),
        mcp_tool("create_client", "Create a client.", {"name": {"type": "string", "description": "The client's name."}}, ["name"]),
        mcp_tool("delete_client", "Delete a client.", cid, ["id"]),
    ])
    assert tasks
    for t in tasks:
        tools = [c["tool"] for c in t["gold_calls"]]
        assert "logout" not in tools and "login" not in tools, (t["instruction"], tools)


def test_a_new_occasion_gives_both_its_times():
    """"create a working plan exception ... with end time 13:00" and no start time (review 70): a new record's start and
    end times are given together or not at all; a change of one end of an existing record is its own."""
    import pytest

    from forgec.lang import ast as A
    from forgec.scenario import _Sampler, _Skip

    body = A.RecordType((A.FieldDecl("startDate", A.PrimType("str")), A.FieldDecl("startTime", A.OptionalType(A.PrimType("str"))),
                         A.FieldDecl("endTime", A.OptionalType(A.PrimType("str")))))
    t = A.ToolDecl("post_exceptions", (A.ParamDecl("body", body),), A.PrimType("str"), "Create an exception.", (), annotations=("create",))
    half = {"body": (None, {"startDate": "2024-05-20", "endTime": "13:00"})}
    with pytest.raises(_Skip):
        _Sampler.plausible(None, t, half, None)
    whole = {"body": (None, {"startDate": "2024-05-20", "startTime": "09:00", "endTime": "13:00"})}
    _Sampler.plausible(None, t, whole, None)
    _Sampler.plausible(None, t, half, {"startTime": "08:00", "endTime": "12:00"})  # an existing record: one end may change


def test_a_new_city_comes_with_its_state():
    """"set their last name to "Holt" and their city to "Boston"" left the provider's state "TX" (review 70)."""
    import pytest

    from forgec.lang import ast as A
    from forgec.scenario import _Sampler, _Skip

    t = A.ToolDecl("put_provider", (A.ParamDecl("city", A.PrimType("str")),), A.PrimType("str"), "Update a provider.", (), annotations=("update",))
    with pytest.raises(_Skip):
        _Sampler.plausible(None, t, {"city": (None, "Boston")}, {"city": "Austin", "state": "TX"})
    _Sampler.plausible(None, t, {"city": (None, "Boston")}, {"city": "Austin"})


def test_a_person_is_not_renamed_into_another(tmp_path):
    """"Shannon Washington" renamed "Juan Hunt" (review 70): a person's name is not changed into another person's; their
    other details still are."""
    pid = {"provider_id": {"type": "integer", "description": "The provider's ID."}}
    tasks = _tasks(tmp_path, [
        mcp_tool("get_providers", "List providers.", {}),
        mcp_tool("get_provider", "Get a provider.", pid, ["provider_id"]),
        mcp_tool("update_provider", "Update a provider.", {**pid,
                 "first_name": {"type": "string", "description": "First name."}, "last_name": {"type": "string", "description": "Last name."},
                 "phone": {"type": "string", "description": "Phone number."}, "notes": {"type": "string", "description": "Notes."}},
                 ["provider_id"]),
    ], 40)
    changes = [c["arguments"] for t in tasks for c in t["gold_calls"] if c["tool"] == "update_provider"]
    assert changes
    for a in changes:
        assert not {"first_name", "last_name"} & set(a), a


def test_a_state_another_state_extends_names_no_record():
    """"cancel my pending order" while the customer's other order is "pending (items modified)" (review 70, τ-bench retail):
    a state that begins another record's state does not single a record out."""
    import random

    from forgec.scenario import refer

    orders = [{"order_id": "#W1", "status": "pending", "total": 120.5}, {"order_id": "#W2", "status": "pending (items modified)", "total": 80.0},
              {"order_id": "#W3", "status": "delivered", "total": 40.0}]
    for seed in range(30):
        ref = refer(orders, 0, ["status", "total"], random.Random(seed))
        assert ref is None or ("status", "pending") not in getattr(ref, "attrs", ()), ref
    alone = [orders[0], orders[2]]
    assert any(("status", "pending") in getattr(refer(alone, 0, ["status", "total"], random.Random(s)), "attrs", ()) for s in range(30))


def test_a_new_zip_code_is_in_its_city(tmp_path, corpus):
    """"Boston, MA 02170" is Quincy, 02144 Somerville (review 70, τ-bench retail): a new address's ZIP code is one of its
    city's own (hand-checked ranges: Boston 02108-02116, Austin 78701-78709, Denver 80202-80210, Seattle 98101-98109)."""
    from forgec.build import CompileOptions, compile_build

    own = {"Boston": range(2108, 2117), "Austin": range(78701, 78710), "Denver": range(80202, 80211), "Seattle": range(98101, 98110)}
    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[corpus / "tau_bench_retail"], out=out, tasks_per_env=40, seed=0, oracle_check=False))
    tasks = [json.loads(x) for f in out.glob("tasks/*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    moves = [c["arguments"] for t in tasks for c in t["gold_calls"] if "address" in c["tool"] and "zip" in c["arguments"]]
    assert moves
    for a in moves:
        assert a["city"] in own and int(a["zip"]) in own[a["city"]], a
