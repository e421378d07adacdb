"""forgec evolve's `tighten-tell` (issue 26): a check that is too loose is found and tightened.

`runtime.reward.told` accepts a value anywhere in what the agent said, so an answer that names every
candidate ("it is 1, 2, or 3") passes a `tell` check. Planted here: question tasks "what is the priority of
my open ticket?" for customers with several tickets of other priorities, and `oracle-hedge`, the oracle
whose answer hedges with the other tickets' priorities. The expected candidates are read from the state by
hand (the customer's other tickets), not from `tell_competitors`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgec.build import CompileOptions, compile_build
from forgec.cli import app
from forgec.runtime.curriculum import family_of, matches
from forgec.runtime.reward import compute_reward

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "examples" / "helpdesk.json"


def test_compute_reward_exclude_fails_a_hedged_answer():
    # the loose check: the hedge passes; the tightened one (exclude the other candidates) fails it, the answer passes
    assert compute_reward("h", "h", [3], "It is 2, or 3.").reward == 1.0
    rb = compute_reward("h", "h", [3], "It is 2, or 3.", [2, 4])
    assert rb.reward == 0.0 and rb.excluded_told == [2] and rb.to_json()["excluded_told"] == [2]
    assert compute_reward("h", "h", [3], "Here is what you asked for: 3.", [2, 4]).reward == 1.0
    assert "excluded_told" not in compute_reward("h", "h", [3], "3", [2]).to_json()


def _plant(build: Path) -> dict[str, tuple[int, list[int]]]:
    """Question blueprints: {task id: (gold priority, the other tickets' priorities)}."""
    state = json.loads((build / "states" / "helpdesk.json").read_text())
    ents = state["entities"]
    out = {}
    for cid, c in sorted(ents["Customer"].items()):
        ts = [ents["Ticket"][t] for t in c["ticket_ids"]]
        opens = [t for t in ts if t["status"] == "open"]
        others = sorted({t["priority"] for t in ts if t is not opens[0]} - {opens[0]["priority"]}) if len(opens) == 1 else []
        if not others or len(out) == 2:
            continue
        name = f"planted_loose_{len(out) + 1}"
        calls = "".join(f"  call ticket_{i + 1} = get_ticket(ticket_id: my_customer.ticket_ids[{i}])\n" for i in range(len(ts)))
        refs = ", ".join(f"ticket_{i + 1}" for i in range(len(ts)))
        (build / "blueprints" / "helpdesk" / f"{name}.forge").write_text(
            f'blueprint {name} for helpdesk {{\n  user {{\n    goal "I\'m {c["name"]}; my customer id is {cid}. '
            f'What is the priority of my open ticket?"\n    persona "{c["name"]}"\n    knows customer_id = "{cid}"\n'
            f'    knows ticket_status = "open"\n    unknown "ticket id"\n    intent "what is the priority of my open ticket"\n  }}\n'
            f"  call my_customer = get_customer(customer_id: user.customer_id)\n{calls}"
            f"  reason open_tickets = filter([{refs}], by: status, eq: user.ticket_status)\n"
            f"  reason the_ticket = first(open_tickets)\n  tell the_ticket.priority\n}}\n")
        out[f"helpdesk/{name}"] = (opens[0]["priority"], others)
    return out


def _tasks(build: Path) -> dict[str, dict]:
    return {json.loads(x)["id"]: json.loads(x) for x in (build / "tasks" / "helpdesk.jsonl").read_text().splitlines()}


def _rewards(build: Path, agent: str) -> dict[str, float]:
    from forgec.evolve import evaluate_round
    from forgec.commands.evolve import _agents
    from forgec.runtime.users import ScriptedUser

    _b, eps = evaluate_round(build, _agents(agent, {"seed": 0}), 1, ScriptedUser, None)
    return {e.task_id: e.reward for e in eps[agent]}


@pytest.fixture(scope="module")
def tightened(tmp_path_factory):
    build = tmp_path_factory.mktemp("tighten") / "build"
    assert compile_build(CompileOptions(inputs=[DOCS], out=build, tasks_per_env=6)).ok
    planted = _plant(build)
    assert len(planted) == 2
    assert compile_build(CompileOptions(inputs=[DOCS], out=build, tasks_per_env=6)).ok
    before = _tasks(build)
    assert set(planted) <= set(before)
    loose = _rewards(build, "oracle-hedge")
    report = build.parent / "report.json"
    r = CliRunner().invoke(app, ["evolve", str(build), "--agent", "oracle,oracle-hedge", "-k", "1", "--docs", str(DOCS),
                                 "--report", str(report)])
    assert r.exit_code == 0, r.output
    return build, planted, before, loose, json.loads(report.read_text())[0]


def test_evolve_finds_the_loose_check_and_tightens_it(tightened):
    build, planted, before, loose, rnd = tightened
    # the exploit works on the untightened build: the hedge passes every planted task
    assert all(loose[t] == 1.0 for t in planted)
    loose_v = [v for v in rnd["verdicts"] if v["detector"] == "tell-loose"]
    assert {v["task"] for v in loose_v} >= set(planted)
    assert all(v["class"] == "check-defect" and v["episode"].startswith("oracle-hedge:") for v in loose_v)  # never the oracle
    for v in loose_v:
        if v["task"] in planted:
            assert set(v["evidence"]["also_told"]) <= set(planted[v["task"]][1]) and v["evidence"]["also_told"]
    rules = json.loads((build / "evolve.json").read_text())["envs"]["helpdesk"]["rules"]
    tight = [r for r in rules if r["action"] == "tighten-tell"]
    assert tight and all(r["evidence"] and r["detector"] == "tell-loose" for r in tight)
    for t in planted:
        assert any(matches(r["family"], family_of(before[t])) for r in tight)


def test_after_recompiling_the_hedge_fails_and_the_oracle_passes(tightened):
    build, planted, before, _loose, _ = tightened
    after = _tasks(build)
    for t, (gold, others) in planted.items():
        assert after[t]["tell"] == before[t]["tell"] == [gold]
        assert after[t]["tell_exclude"] == others  # the other tickets' priorities, read by hand from the state
        assert after[t]["gold_state_hash"] == before[t]["gold_state_hash"]
    assert not [t for t in after.values() if t.get("tell_exclude") and not t["tell"]]
    hedge, oracle = _rewards(build, "oracle-hedge"), _rewards(build, "oracle")
    assert all(hedge[t] == 0.0 for t in planted)
    assert set(oracle.values()) == {1.0}
    # a build without a tightened task writes no `tell_exclude` (task files stay as they were)
    assert all("tell_exclude" not in t for t in before.values())


def test_a_bad_tighten_rule_is_a_diagnostic(tmp_path):
    from forgec.evolve import check_rules

    p = tmp_path / "evolve.json"
    p.write_text(json.dumps({"version": "1", "envs": {"helpdesk": {"rules": [{"action": "tighten-tell", "family": {"kind": 3}}]}}}))
    doc, diags = check_rules(p)
    assert doc is None and any("family" in d.message for d in diags)
    p.write_text(json.dumps({"version": "1", "envs": {"helpdesk": {"rules": [{"action": "tighten-tel", "family": {"kind": "question"}}]}}}))
    doc, diags = check_rules(p)
    assert doc is None and any("tighten-tell" in (d.help or "") for d in diags)
