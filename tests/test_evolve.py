"""forgec evolve (issue 26): planted task and check defects are found and gone after the next compile.

The ground truth is the list of blueprints this test plants (independent of the detectors): ambiguous
requests ("set the priority of my ticket" for a user with three open tickets), wrong checks (a write
task that also checks a value nobody asked for) and needed facts never said (an agent id the user
never gives). The agent is the oracle plus `oracle-naive` (runtime/weakagent.py: known weaknesses).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgec.build import CompileOptions, compile_build
from forgec.cli import app
from forgec.runtime.curriculum import Rules, family_of, pass_weight

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "examples" / "helpdesk.json"


def _customers(state: dict):
    ents = state["entities"]
    for cid, c in sorted(ents["Customer"].items()):
        yield cid, c, [ents["Ticket"][t] for t in c["ticket_ids"]]


def _plant(build: Path) -> dict[str, str]:
    """Write the planted blueprints; {task id: "task" | "check"} (what a correct detector must call them)."""
    state = json.loads((build / "states" / "helpdesk.json").read_text())
    ents = state["entities"]
    planted: dict[str, str] = {}
    used: set[str] = set()
    bp_dir = build / "blueprints" / "helpdesk"

    def head(name: str, cid: str, c: dict, goal: str, knows: str, intent: str) -> str:
        return (f'blueprint {name} for helpdesk {{\n  user {{\n    goal "I\'m {c["name"]}; my customer id is {cid}. {goal}"\n'
                f'    persona "{c["name"]}"\n    knows customer_id = "{cid}"\n{knows}    unknown "ticket id"\n'
                f'    intent "{intent}"\n  }}\n  call my_customer = get_customer(customer_id: user.customer_id)\n')

    # 1. ambiguous: three tickets none of them closed (gold takes one not resolved), "set the priority of my ticket to N" (which one?)
    n = 0
    for cid, c, ts in _customers(state):
        if n == 3 or len(ts) != 3 or any(t["status"] == "closed" for t in ts):
            continue
        order = sorted(range(3), key=lambda i: ts[i]["status"] == "resolved")  # gold writes no ticket in an ending state
        if sum(t["status"] != "resolved" for t in ts) < 2:
            continue  # one ticket not resolved is the one a careful agent sets: no ambiguity to find (the plant's own truth)
        pr = next((p for p in (1, 2, 3, 4) if all(t["priority"] != p for t in ts)), None)
        if pr is None:
            continue
        n += 1
        used.add(cid)
        name = f"planted_ambiguous_{n}"
        text = head(name, cid, c, f"Please set the priority of my ticket to {pr}.", f"    knows priority = {pr}\n",
                    f"set the priority of my ticket to {pr}")
        text += "".join(f"  call ticket_{i + 1} = get_ticket(ticket_id: my_customer.ticket_ids[{i}])\n" for i in range(3))
        text += f"  reason the_ticket = first([{', '.join(f'ticket_{i + 1}' for i in order)}])\n"
        text += "  call changed = set_ticket_priority(ticket_id: the_ticket.ticket_id, priority: user.priority)\n}\n"
        (bp_dir / f"{name}.forge").write_text(text)
        planted[f"helpdesk/{name}"] = "task"
    # 2. wrong check: a write that also checks the ticket's subject, which the user never asks for
    n = 0
    for cid, c, ts in _customers(state):
        opens = [t for t in ts if t["status"] == "open"]
        if n == 3 or cid in used or len(opens) != 1 or opens[0]["priority"] == 4:
            continue
        n += 1
        used.add(cid)
        name = f"planted_tell_{n}"
        text = head(name, cid, c, "Please change the priority of my open ticket to 4.",
                    '    knows ticket_status = "open"\n    knows priority = 4\n', "change the priority of my open ticket to 4")
        text += "".join(f"  call ticket_{i + 1} = get_ticket(ticket_id: my_customer.ticket_ids[{i}])\n" for i in range(len(ts)))
        text += f"  reason open_tickets = filter([{', '.join(f'ticket_{i + 1}' for i in range(len(ts)))}], by: status, eq: user.ticket_status)\n"
        text += "  reason the_ticket = first(open_tickets)\n"
        text += "  call changed = set_ticket_priority(ticket_id: the_ticket.ticket_id, priority: user.priority)\n"
        text += "  tell the_ticket.subject\n}\n"
        (bp_dir / f"{name}.forge").write_text(text)
        planted[f"helpdesk/{name}"] = "check"
    # 3. a gold path that breaks a documented rule: priority 7 where the docs say "from 1 (lowest) to 4 (urgent)"
    n = 0
    for cid, c, ts in _customers(state):
        opens = [t for t in ts if t["status"] == "open"]
        if n == 2 or cid in used or len(opens) != 1:
            continue
        n += 1
        used.add(cid)
        name = f"planted_outside_{n}"
        text = head(name, cid, c, "Please set the priority of my open ticket to 7.", "    knows priority = 7\n",
                    "set the priority of my open ticket to 7")
        text += "".join(f"  call ticket_{i + 1} = get_ticket(ticket_id: my_customer.ticket_ids[{i}])\n" for i in range(len(ts)))
        text += f"  reason open_tickets = filter([{', '.join(f'ticket_{i + 1}' for i in range(len(ts)))}], by: status, eq: \"open\")\n"
        text += "  reason the_ticket = first(open_tickets)\n"
        text += "  call changed = set_ticket_priority(ticket_id: the_ticket.ticket_id, priority: user.priority)\n}\n"
        (bp_dir / f"{name}.forge").write_text(text)
        planted[f"helpdesk/{name}"] = "task"
    # 4. a needed fact never said: the agent to assign to is a literal id the user never gives
    n = 0
    for cid, c, ts in _customers(state):
        opens = [t for t in ts if t["status"] == "open"]
        if n == 2 or cid in used or len(opens) != 1:
            continue
        seen = {t.get("assignee_id") for t in ts}
        agent = next((a for aid, a in sorted(ents["Agent"].items()) if a["team"] == opens[0]["team"] and aid not in seen
                      and a["open_tickets"] < a["max_open_tickets"]), None)
        if agent is None:
            continue
        n += 1
        used.add(cid)
        name = f"planted_unsaid_{n}"
        text = head(name, cid, c, "Please assign my open ticket to the right agent.", '    knows ticket_status = "open"\n',
                    "assign my open ticket to the right agent")
        text += "".join(f"  call ticket_{i + 1} = get_ticket(ticket_id: my_customer.ticket_ids[{i}])\n" for i in range(len(ts)))
        text += f"  reason open_tickets = filter([{', '.join(f'ticket_{i + 1}' for i in range(len(ts)))}], by: status, eq: user.ticket_status)\n"
        text += "  reason the_ticket = first(open_tickets)\n"
        text += f'  call assigned = assign_ticket(ticket_id: the_ticket.ticket_id, agent_id: "{agent["agent_id"]}")\n}}\n'
        (bp_dir / f"{name}.forge").write_text(text)
        planted[f"helpdesk/{name}"] = "unsaid"
    return planted


def _tasks(build: Path) -> dict[str, dict]:
    return {json.loads(x)["id"]: json.loads(x) for x in (build / "tasks" / "helpdesk.jsonl").read_text().splitlines()}


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    build = tmp_path_factory.mktemp("evolve") / "build"
    assert compile_build(CompileOptions(inputs=[DOCS], out=build, tasks_per_env=12)).ok
    planted = _plant(build)
    assert len(planted) == 10
    res = compile_build(CompileOptions(inputs=[DOCS], out=build, tasks_per_env=12))
    assert res.ok, [str(d) for d in res.diagnostics]
    before = _tasks(build)
    assert set(planted) <= set(before)  # every planted blueprint became a task (the oracle passes it)
    report = build.parent / "report.json"
    r = CliRunner().invoke(app, ["evolve", str(build), "--agent", "oracle,oracle-naive", "-k", "4", "--docs", str(DOCS),
                                 "--report", str(report)])
    assert r.exit_code == 0, r.output
    # the first round's rules, kept apart: a later test evaluates the repaired build again, which rewrites evolve.json
    (build.parent / "evolve.first.json").write_text((build / "evolve.json").read_text())
    return build, planted, before, json.loads(report.read_text())[0]


def test_evolve_finds_planted_defects_with_few_false_alarms(evolved):
    build, planted, before, rnd = evolved
    flagged: dict[str, set[str]] = {}
    for v in rnd["verdicts"]:
        if v["class"] in ("task-defect", "check-defect"):
            flagged.setdefault(v["task"], set()).add(v["class"].split("-")[0])
            assert v["evidence"] and v["episode"].endswith(tuple(f"#{j}" for j in range(4)))
    seeded = {t: k for t, k in planted.items() if k in ("task", "check")}
    found = [t for t, kind in seeded.items() if kind in flagged.get(t, set())]
    false = [t for t in flagged if t not in planted]
    recall = len(found) / len(seeded)
    false_rate = len(false) / max(1, len(flagged))
    assert recall >= 0.9, (sorted(set(seeded) - set(found)), flagged)
    assert false_rate <= 0.1, false
    # the classes are right, not just the flags: the ambiguous ones are left open, the unsaid ones lack a fact
    dets = {v["task"]: v["detector"] for v in rnd["verdicts"] if v["task"] in planted}
    assert all(dets[t] == "left-open-record" for t in planted if "ambiguous" in t)
    assert all(dets[t] == "tell-unasked" for t in planted if "tell" in t)
    assert all(dets[t] == "gold-breaks-doc" for t in planted if "outside" in t)
    # agent errors are not defects: the naive agent's slips on sampled tasks stay agent errors
    assert rnd["classes"]["agent-error"] > 0


def test_next_compile_no_longer_yields_them(evolved):
    build, planted, before, _ = evolved
    after = _tasks(build)
    for t, kind in planted.items():
        if kind == "task":
            assert t not in after  # its family is rejected
        elif kind == "check":
            assert after[t]["tell"] == [] and before[t]["tell"] != []  # its check was relaxed
            assert after[t]["gold_state_hash"] == before[t]["gold_state_hash"]
    m = json.loads((build / "manifest.json").read_text())
    assert m["envs"]["helpdesk"]["rejected"].get("evolve-rule", 0) == sum(1 for k in planted.values() if k == "task")
    rules = json.loads((build / "evolve.json").read_text())["envs"]["helpdesk"]["rules"]
    rejects = [r for r in rules if r["action"] == "reject"]
    assert rejects and all(r["evidence"] for r in rejects)
    # the sampler read the rules too: it thinned out families by their weights, and kept no rejected family
    assert m["envs"]["helpdesk"]["stats"]["sampler_rejected"].get("evolve-curriculum", 0) > 0
    assert not [t for t in after.values() if any(all(family_of(t)[k] == v for k, v in r["family"].items()) for r in rejects)]
    # the file is sorted as written (diffable): rewriting it changes nothing
    assert [(r["action"]) for r in rules] == sorted(r["action"] for r in rules)
    # a second evaluation of the repaired build finds no defect any more
    r = CliRunner().invoke(app, ["evolve", str(build), "--agent", "oracle-naive", "-k", "4", "--docs", str(DOCS),
                                 "--report", str(build.parent / "r2.json")])
    assert r.exit_code == 0, r.output
    rnd = json.loads((build.parent / "r2.json").read_text())[0]
    assert rnd["classes"]["task-defect"] == 0 and rnd["classes"]["check-defect"] == 0


def test_curriculum_weights_prefer_intermediate_pass_rates():
    """Hand-computed: 4p(1-p) floored at 0.1; a family extending a mastered one is preferred over an unseen one."""
    assert [pass_weight(p) for p in (0.0, 0.25, 0.5, 1.0)] == [0.1, 0.75, 1.0, 0.1]
    base = {"kind": "write", "tools": ["get_customer", "close_ticket"], "condition": False}
    mid = {"kind": "write", "tools": ["get_customer", "assign_ticket"], "condition": False}
    rules = Rules([{"action": "weight", "family": base, "weight": 0.1, "pass_rate": 1.0},
                   {"action": "weight", "family": mid, "weight": 1.0, "pass_rate": 0.5}])
    harder = {"kind": "write", "tools": ["get_customer", "get_ticket+", "close_ticket"], "condition": False, "shape": "x"}
    other = {"kind": "question", "tools": ["list_agents"], "condition": False, "shape": "x"}
    assert rules.weight({**base, "shape": "x"}) == 0.1 and rules.weight({**mid, "shape": "y"}) == 1.0
    assert rules.weight(harder) == 1.0 and rules.weight(other) == 0.5


def test_fact_unsaid_detector_cites_the_literal(evolved):
    """A failed episode of a task whose write takes a literal the request and the blueprint's `knows` never state."""
    from types import SimpleNamespace

    from forgec.evolve import _blueprint, classify
    from forgec.runtime import load

    build, planted, _, _ = evolved
    b = load(build)
    tid = next(t for t, k in planted.items() if k == "unsaid")
    task = b.task(tid)
    lit = task.gold_calls[-1].arguments["agent_id"]
    ep = SimpleNamespace(judge=None, reward=0.0, reward_breakdown={"state_match": False}, trial=1, end_reason="user_stop",
                         state_diff={"missing": [{"path": f"/entities/Ticket/{task.gold_calls[-1].arguments['ticket_id']}/assignee_id",
                                                  "op": "change", "gold": lit, "got": None, "changed": False}], "extra": []},
                         messages=[{"role": "user", "content": "I don't know that."}])
    v = classify(task, ep, "x", b.initial_state(task), _blueprint(build, task), [])
    assert (v.cls, v.detector) == ("task-defect", "fact-unsaid")
    assert v.evidence["literals"][0]["value"] == lit and v.evidence["literals"][0]["tool"] == "assign_ticket"
    # the same episode on a sampled task whose values the user states is an agent error
    sampled = next(t for t in b.tasks if t.id not in planted and not t.read_only and t.tell == [])
    ep.state_diff = {"missing": [], "extra": []}
    assert classify(sampled, ep, "x", b.initial_state(sampled), _blueprint(build, sampled), []).cls == "agent-error"


def test_bad_rule_file_gets_file_line_column_and_hint(tmp_path):
    from forgec.evolve import check_rules

    p = tmp_path / "evolve.json"
    p.write_text('{\n  "version": "1",\n  "envs": {\n    "helpdesk": {\n      "rules": [\n        {"action": "drop", "family": {"kind": "write"}}\n      ]\n    }\n  }\n}\n')
    doc, diags = check_rules(p, {"helpdesk"})
    assert doc is None and [(d.code, d.span.line, d.span.col) for d in diags] == [("bad-evolve-rules", 6, 10)]
    assert "reject" in diags[0].help
    p.write_text('{"version": "1", "envs": {"helpdesk": {"rules": [\n  {"action": "reject" "family": {}}]}}}')
    doc, diags = check_rules(p)
    assert doc is None and (diags[0].span.line, diags[0].span.col) == (2, 23)  # the "family" that lacks its comma


def test_training_curriculum_shifts_sampling_toward_intermediate_pass_rates(evolved):
    """data.curriculum: the trainer's task sampler draws each family in proportion to its weight (hand-computed
    share from the rule file), so families with pass rates strictly between 0 and 1 get more of the batch."""
    from forgec.runtime import load
    from forgec.runtime.curriculum import coarse_id, read_rules
    from forgec.train.trainer import TaskSampler, curriculum_of

    build = evolved[0]
    tasks = load(build).tasks
    first = build.parent / "evolve.first.json"  # the rules of the round that measured these tasks (test order free)
    rules = json.loads(first.read_text())["envs"]["helpdesk"]["rules"]
    rate = {coarse_id({**r["family"], "shape": ""}): r["pass_rate"] for r in rules if r["action"] == "weight"}
    mid = {t.id for t in tasks if 0 < rate.get(coarse_id(family_of(t)), -1) < 1}
    assert mid and len(mid) < len(tasks)
    weights = {t.id: read_rules(first)["helpdesk"].weight(family_of(t)) for t in tasks}
    expected = sum(weights[i] for i in mid) / sum(weights.values())
    plain = TaskSampler(tasks, 0)
    cur = TaskSampler(tasks, 0, curriculum=curriculum_of(str(first), tasks))
    n = 2000
    share = lambda s: sum(1 for step in range(n // 4) for t in s.batch(step, 4) if t.id in mid) / n  # noqa: E731
    assert abs(share(plain) - len(mid) / len(tasks)) < 0.03
    assert abs(share(cur) - expected) < 0.03 and expected > len(mid) / len(tasks)
    # per task: every intermediate family outweighs every measured family the agent always or never solves
    flat = [t.id for t in tasks if rate.get(coarse_id(family_of(t)), 0.5) in (0.0, 1.0)]
    assert flat and min(weights[i] for i in mid) > max(weights[i] for i in flat)
    assert [t.id for t in cur.batch(7, 4)] == [t.id for t in TaskSampler(tasks, 0, curriculum=curriculum_of(str(first), tasks)).batch(7, 4)]


def test_rules_recompile_only_their_env(tmp_path):
    """evolve.json is part of what the incremental build keys on: a rule for one env resamples that env only."""
    docs = [DOCS, REPO / "examples" / "bookstore.yaml"]
    out = tmp_path / "build"
    assert compile_build(CompileOptions(inputs=docs, out=out, tasks_per_env=6)).ok
    keys = {e: dict(v["keys"]) for e, v in json.loads((out / "manifest.json").read_text())["envs"].items()}
    # the family of the build's first helpdesk task (its kind, tools, condition): one the sampler is known to make
    first = json.loads((out / "tasks" / "helpdesk.jsonl").read_text().splitlines()[0])
    fam = {k: v for k, v in family_of(first).items() if k in ("kind", "tools", "condition")}
    (out / "evolve.json").write_text(json.dumps({"version": "1", "envs": {"helpdesk": {"rules": [
        {"action": "reject", "family": fam, "evidence": [f"x:{first['id']}#0"]}]}}}))
    assert compile_build(CompileOptions(inputs=docs, out=out, tasks_per_env=6)).ok
    m = json.loads((out / "manifest.json").read_text())
    assert m["envs"]["bookstore"]["keys"] == keys["bookstore"]
    assert m["envs"]["helpdesk"]["keys"]["sample"] != keys["helpdesk"]["sample"]
    assert m["envs"]["helpdesk"]["stats"]["sampler_rejected"].get("evolve-rule", 0) > 0
    after = [json.loads(x) for x in (out / "tasks" / "helpdesk.jsonl").read_text().splitlines()]
    assert after and not [t for t in after if all(family_of(t)[k] == v for k, v in fam.items())]
    assert (out / "evolve.json").is_file()  # carried into the new build


def test_user_error_and_left_open_value_detectors(evolved):
    """Fed hand-made failed episodes: the judge's flag wins; a value gold sets that nothing states is left open, the
    same value stated by the user is the agent's error."""
    from types import SimpleNamespace

    from forgec.evolve import _blueprint, classify
    from forgec.runtime import load

    build, planted, _, _ = evolved
    b = load(build)
    task = b.task(next(t for t, k in planted.items() if k == "check"))  # "change the priority of my open ticket to 4"
    ticket = task.gold_calls[-1].arguments["ticket_id"]
    judge = SimpleNamespace(user_error=True, judge="rule", reason="withheld fact", errors=["withheld fact: 'customer_id'"])
    ep = SimpleNamespace(judge=judge, reward=0.0, reward_breakdown={}, trial=2, end_reason="user_stop", messages=[],
                         state_diff={"missing": [], "extra": []})
    v = classify(task, ep, "a", b.initial_state(task), None, [])
    assert (v.cls, v.detector, v.episode) == ("user-error", "meu-judge", f"a:{task.id}#2") and v.evidence["errors"]
    ep.judge = None
    ep.state_diff = {"missing": [{"path": f"/entities/Ticket/{ticket}/priority", "op": "change", "gold": 4, "got": 2, "changed": True}],
                     "extra": []}
    assert classify(task, ep, "a", b.initial_state(task), None, []).cls == "agent-error"  # the user said 4
    sc = task.user.scenario
    vague = task.model_copy(update={"instruction": "Please update my open ticket.", "user": task.user.model_copy(update={
        "facts": {}, "scenario": sc.model_copy(update={"known_info": {k: x for k, x in sc.known_info.items() if k != "priority"},
                                                        "task_instructions": "Please update my open ticket."})})})
    v = classify(vague, ep, "a", b.initial_state(task), None, ["oracle:x#0"])
    assert (v.cls, v.detector) == ("task-defect", "left-open-value") and v.evidence["gold"] == 4
