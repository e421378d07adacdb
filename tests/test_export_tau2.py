"""`forgec export tau2`: every exported task is a valid τ²-bench `Task` and means what the forgec task means.

τ²-bench is not on PyPI; its task model (`tau2/data_model/tasks.py`, unchanged, MIT) is in tests/third_party.
Checked: each task validates with it and dumps back to exactly what was written (no field τ² would ignore);
replaying `evaluation_criteria.actions` on the exported `db.json`, as τ²'s DB check does, with the build's env module
gives the task's gold state hash from the task file; `communicate_info` said to the user passes forgec's own tell
check; the splits name every task.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from servekit import compile_examples

from forgec.runtime import load
from forgec.runtime.reward import compute_reward

sys.path.insert(0, str(Path(__file__).resolve().parent / "third_party"))
from tau2.data_model.tasks import RewardType, Task as Tau2Task  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("tau2")
    build = compile_examples(root / "build", n=8)
    r = subprocess.run([sys.executable, "-m", "forgec", "export", "tau2", str(build), "-o", str(root / "out")],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert r.returncode == 0, r.stderr[-2000:]
    return build, root / "out"


def test_every_task_is_a_tau2_task(exported):
    build, out = exported
    n = 0
    for f in sorted((out / "domains").glob("*/tasks.json")):
        for d in json.loads(f.read_text()):
            t = Tau2Task.model_validate(d)
            assert t.model_dump(mode="json", exclude_unset=True) == d  # nothing τ² would drop as unknown
            assert set(t.evaluation_criteria.reward_basis) <= {RewardType.DB, RewardType.COMMUNICATE}
            n += 1
        split = json.loads((f.parent / "split_tasks.json").read_text())
        assert split["base"] == [d["id"] for d in json.loads(f.read_text())]
        assert "customer-service agent" in (f.parent / "policy.md").read_text()
    assert n == len(load(build).tasks) > 0


def test_replaying_the_actions_on_db_json_reaches_the_gold_state(exported):
    build_dir, out = exported
    b = load(build_dir)
    gold = {}
    for f in (build_dir / "tasks").glob("*.jsonl"):
        for line in f.read_text().splitlines():
            d = json.loads(line)
            gold[(d["env"], d["id"].split("/", 1)[1])] = d
    for env in b.envs:
        db = json.loads((out / "domains" / env / "db.json").read_text())
        for d in json.loads((out / "domains" / env / "tasks.json").read_text()):
            src = gold[(env, d["id"])]
            e = b.envs[env].Env(db)
            assert e.state_hash() == src["initial_state_hash"]
            for a in d["evaluation_criteria"]["actions"]:
                r = e.step(a["name"], json.loads(json.dumps(a["arguments"])))
                assert not isinstance(r, Exception), (d["id"], a, r)
            assert e.state_hash() == src["gold_state_hash"], d["id"]
            said = " ".join(d["evaluation_criteria"].get("communicate_info") or [])
            assert compute_reward(e.state_hash(), src["gold_state_hash"], src["tell"], said).reward == 1.0, d["id"]
