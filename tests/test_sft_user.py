"""forgec sft-user (issue 26): the simulated user fine-tuned on the scripted user's dialogues errs less than the
same tiny model prompted only, on scenarios held out of its training; and the rule checks catch the user errors
they name (hand-written conversations, independent of any model)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from forgec.build import CompileOptions, compile_build
from forgec.runtime import load
from forgec.runtime.agents import OracleAgent
from forgec.runtime.hfuser import HFUser, user_error_rates, user_errors
from forgec.train.trainer import TaskSampler

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def helpdesk(tmp_path_factory):
    out = tmp_path_factory.mktemp("sftuser") / "build"
    assert compile_build(CompileOptions(inputs=[REPO / "examples" / "helpdesk.json"], out=out, tasks_per_env=24)).ok
    return out, load(out)


def _oracle_dialogue(b, task):
    from forgec.runtime.episode import run_episode
    from forgec.runtime.users import ScriptedUser

    a = OracleAgent(task)
    return run_episode(b, task, a, ScriptedUser(task), limits=a.limits()).messages


def test_rule_checks_name_each_user_error(helpdesk):
    """The scripted user's own dialogue has none; each hand-made slip is found with its evidence."""
    _, b = helpdesk
    t = next(t for t in b.tasks if not t.read_only and any(g.write for g in t.gold_calls))
    msgs = _oracle_dialogue(b, t)
    assert user_errors(t, msgs) == []
    proposal = next(i for i, m in enumerate(msgs) if m["role"] == "assistant" and "Shall I proceed?" in (m.get("content") or ""))
    assert msgs[proposal + 1]["content"].startswith("Yes")
    # refusing the write it asked for
    bad = [*msgs[:proposal + 1], {"role": "user", "content": "No, please don't."}, *msgs[proposal + 2:]]
    assert any(e.startswith("did not confirm") for e in user_errors(t, bad))
    # not stopping when the agent is done
    assert any(e.startswith("did not stop") for e in user_errors(t, [*msgs[:-1], {"role": "user", "content": "Thanks, what else?"}]))
    # saying a value the agent must look up (a record id) before the agent said it
    from forgec.runtime.scenario import scenario_of

    hidden = next(v for v in scenario_of(t).hidden if isinstance(v, str))
    slip = [msgs[0], {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": f"It is {hidden}."}]
    assert any(e.startswith("volunteered an unknown") for e in user_errors(t, slip))


@pytest.mark.slow
def test_sft_user_makes_fewer_user_errors_than_the_prompted_model(helpdesk, tmp_path):
    build_dir, b = helpdesk
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu")
    r = subprocess.run([sys.executable, "-m", "forgec", "sft-user", str(build_dir), "-c", "cpu-tiny", "-o", str(tmp_path / "user"),
                        "--set", "sft.epochs=20", "--set", "data.holdout_fraction=0.25"], env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    train = {t.id for ts in TaskSampler(b.tasks, 0, None, 0.25).by_env.values() for t in ts}
    held = [t for t in b.tasks if t.id not in train][:8]
    assert held
    rates = {name: user_error_rates(b, held, lambda t, n=name: HFUser(t, str(tmp_path / "user" / n), max_new_tokens=16), OracleAgent)
             for name in ("tiny_init", "final")}
    print("user-error rate on held-out scenarios:", rates)
    assert rates["final"]["helpdesk"]["rate"] < rates["tiny_init"]["helpdesk"]["rate"]
