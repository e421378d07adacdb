"""A log-only (`@conservative`) tool never counts as a state write: its `ActionLog` record is
left out of the state hash (incremental and from scratch) and of the gold diff, WRITES_STATE
says false, dag_stats counts no write, and the sampler never asks for it. Before, an agent
scored only by repeating the log call with exactly the gold's arguments."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from forgec import lang
from forgec.codegen import emit_env, load_env_module
from forgec.diagnostics import has_errors, render
from forgec.lower import dag_stats, lower_blueprint
from forgec.runtime import envrt
from forgec.runtime.envrt import ToolError
from forgec.runtime.reward import compute_reward

SRC = '''
env desk "A help desk: tickets, plus one tool no rule could model." {
  entity Ticket key ticket_id {
    ticket_id: str "key"
    status: enum("open", "closed") = "open"
  }

  entity ActionLog key log_id {
    log_id: str "key"
    tool: str
    args: str
  }

  @read
  tool get_ticket(ticket_id: Ticket "The ticket.") -> Ticket
    "Look up a ticket."
  {
    return ticket_id
  }

  @update
  tool close_ticket(ticket_id: Ticket "The ticket.") -> Ticket
    "Close a ticket."
  {
    set ticket_id.status = "closed"
    return ticket_id
  }

  @action @conservative
  tool escalate(summary: str "What to tell the human.") -> ActionLog
    "Hand the conversation to a human."
  {
    let logged = insert ActionLog {log_id: fresh_id(ActionLog), tool: "escalate", args: "summary=" + str(summary)}
    return logged
  }
}

blueprint close_and_escalate for desk {
  user {
    goal "close my ticket and tell a human"
    knows ticket_id = "t1"
  }
  call t = get_ticket(ticket_id: user.ticket_id)
  call closed = close_ticket(ticket_id: t.ticket_id)
  call handed = escalate(summary: "closed t1")
}
'''

WORLD = {"entities": {"Ticket": {"t1": {"ticket_id": "t1", "status": "open"}, "t2": {"ticket_id": "t2", "status": "open"}},
                      "ActionLog": {}}, "globals": {}}


def _compiled(src: str):
    """The desk env of `src`, checked and generated: (the parsed module, the env module)."""
    mod, diags = lang.parse(src, "desk.forge")
    diags += lang.check([mod])
    assert not has_errors(diags), render(diags, "concise", {"desk.forge": src})
    p = Path(tempfile.mkdtemp(prefix="log_only_")) / "env.py"
    p.write_text(emit_env(mod.envs[0], "desk.forge"), encoding="utf-8")
    return mod, load_env_module(p)


@pytest.fixture(scope="module")
def built():
    return _compiled(SRC)


def test_tables_mark_the_log(built):
    _, m = built
    assert m.LOG_TOOLS == ["escalate"]
    assert m.LOG_ENTITIES == ["ActionLog"]
    assert m.WRITES_STATE == {"get_ticket": False, "close_ticket": True, "escalate": False}
    assert m.TOOL_KINDS["escalate"] == "action"


def test_checker_agrees_no_write(built):
    mod, _ = built
    from forgec.lang.check import check_typed

    _, typed = check_typed([mod])
    et = typed.envs["desk"]
    assert et.writes_state(et.tools["escalate"]) is False
    assert et.writes_state(et.tools["close_ticket"]) is True


def test_log_call_leaves_the_hash(built):
    _, m = built
    env = m.Env(json.loads(json.dumps(WORLD)))
    h0 = env.state_hash()
    r = env.step("escalate", {"summary": "help"})
    assert not isinstance(r, ToolError) and r["tool"] == "escalate"
    assert len(env.state["entities"]["ActionLog"]) == 1  # the call is recorded ...
    assert env.state_hash() == h0  # ... but is no state the reward compares
    assert env.state_hash() == envrt.state_hash(env.state, m.LOG_ENTITIES)
    assert m.Env(json.loads(json.dumps(env.state))).state_hash() == h0  # from a state holding a log record too
    assert envrt.state_hash(env.state) != h0  # without the log list the record counts (the reference is explicit)
    env.step("close_ticket", {"ticket_id": "t2"})
    assert env.state_hash() != h0  # a real write still moves it
    assert env.state_hash() == envrt.state_hash(env.state, m.LOG_ENTITIES)


def test_reward_is_one_with_or_without_the_log_call(built):
    mod, m = built
    bp = mod.blueprints[0]
    res = lower_blueprint(bp, m, WORLD, env_name="desk", blueprint_path="b.forge", blueprint_hash="h", seed=1)
    task = res.task
    assert [d.path for d in task.gold_diff] == ["/entities/Ticket/t1/status"]  # no ActionLog entry
    assert task.stats.write_calls == 1 == dag_stats(bp, m.WRITES_STATE).write_calls
    for calls in ([("close_ticket", {"ticket_id": "t1"})],
                  [("close_ticket", {"ticket_id": "t1"}), ("escalate", {"summary": "something else entirely"})],
                  [("escalate", {"summary": "x"}), ("escalate", {"summary": "y"}), ("close_ticket", {"ticket_id": "t1"})]):
        env = m.Env(json.loads(json.dumps(WORLD)))
        for tool, args in calls:
            assert not isinstance(env.step(tool, args), ToolError)
        assert compute_reward(env.state_hash(), task.gold_state_hash, task.tell, "").reward == 1.0
    env = m.Env(json.loads(json.dumps(WORLD)))
    env.step("escalate", {"summary": "closed t1"})  # the log call alone does not do the task
    assert compute_reward(env.state_hash(), task.gold_state_hash, task.tell, "").reward == 0.0


def test_a_log_call_alone_is_no_task(built):
    mod, m = built
    import dataclasses

    bp = mod.blueprints[0]
    only_log = dataclasses.replace(bp, nodes=tuple(n for n in bp.nodes if getattr(n, "tool", None) == "escalate"))
    from forgec.lower import Rejected

    with pytest.raises(Rejected):
        lower_blueprint(only_log, m, WORLD, env_name="desk", blueprint_path="b.forge", blueprint_hash="h", seed=1)


def test_an_entity_a_real_tool_writes_is_no_log():
    src = SRC.replace('''    set ticket_id.status = "closed"
''', '''    set ticket_id.status = "closed"
    insert ActionLog {log_id: fresh_id(ActionLog), tool: "close_ticket", args: ticket_id.ticket_id}
''')
    mod, diags = lang.parse(src, "desk.forge")
    diags += lang.check([mod])
    assert not has_errors(diags), render(diags, "concise", {"desk.forge": src})
    p = Path(tempfile.mkdtemp(prefix="log_only_")) / "env.py"
    p.write_text(emit_env(mod.envs[0], "desk.forge"), encoding="utf-8")
    m = load_env_module(p)
    assert m.LOG_ENTITIES == [] and m.LOG_TOOLS == ["escalate"]
    env = m.Env(json.loads(json.dumps(WORLD)))
    h0 = env.state_hash()
    env.step("escalate", {"summary": "x"})
    assert env.state_hash() != h0  # the audit trail close_ticket keeps is state


# the desk with tickets a user finds by subject: a scenario needs a lookup (a bare "close ticket t1" is trivial, gated)
SEARCH_SRC = SRC.replace('status: enum("open", "closed") = "open"\n', 'status: enum("open", "closed") = "open"\n    subject: str = ""\n', 1).replace(
    "  @update\n", '''  @search
  tool list_tickets() -> list[Ticket]
    "List every ticket with its subject and status."
  {
    return Ticket where true
  }

  @update
''', 1)
SUBJECTS = ["printer jam", "lost password", "broken monitor", "slow laptop", "vpn access", "new keyboard", "email quota", "desk move"]


@pytest.fixture(scope="module")
def built_search():
    return _compiled(SEARCH_SRC)


@pytest.mark.parametrize("sampler", ["walk", "scenario"])
def test_samplers_never_call_the_log_tool(built_search, sampler):
    from forgec.graph import build_graph
    from forgec.sample import SampleConfig, sample_blueprints
    from forgec.scenario import sample_scenarios

    mod, m = built_search
    env = mod.envs[0]
    world = {"entities": {"Ticket": {f"t{i}": {"ticket_id": f"t{i}", "status": "open", "subject": SUBJECTS[i - 1]} for i in range(1, 9)},
                          "ActionLog": {}}, "globals": {}}
    g = build_graph(env, writes=m.WRITES_STATE)
    run = sample_blueprints if sampler == "walk" else sample_scenarios
    res = run(env, m, world, g, SampleConfig(tasks_per_env=10, seed=3))
    texts = [b.text for b in res.blueprints]
    assert texts, res.rejected
    assert not any("escalate(" in t for t in texts)
    assert any("close_ticket(" in t for t in texts)
