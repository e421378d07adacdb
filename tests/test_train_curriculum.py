"""Online curriculum during training (`data.curriculum_every`, issue 26).

* The weights learnt from rollouts, by hand: in one helpdesk env, one family always passes, one passes half the time,
  every other family never passes; the weights are then 0.1 / 1.0 / 0.1 and the sampler's share of the intermediate
  family is its tasks' weight over the env's total weight (computed here from the counts, not from the library),
  well above its uniform share. The rule file the trainer writes is evolve.json's format, and a compile of the same
  docs with it thins out the families the way `forgec evolve`'s weights do.
* The trainer (tiny model, toy build, CPU): every step logs `curriculum_share`, every update `curriculum_weights`
  and writes OUTPUT/evolve.json; the weights are those of the step's own rollouts (the tasks the seeded sampler drew,
  recomputed here); a run stopped at step 2 and resumed repeats the uninterrupted run's curriculum exactly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from forgec.build import CompileOptions, compile_build
from forgec.runtime import load
from forgec.runtime.curriculum import coarse_id, family_of

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "examples" / "helpdesk.json"


def test_weights_from_rollouts_shift_the_sampled_share(tmp_path):
    from forgec.evolve import check_rules
    from forgec.train.curriculum import OnlineCurriculum
    from forgec.train.trainer import TaskSampler

    build = tmp_path / "build"
    assert compile_build(CompileOptions(inputs=[DOCS], out=build, tasks_per_env=12)).ok
    tasks = load(build).tasks
    fam = {t.id: coarse_id(family_of(t)) for t in tasks}
    counts = Counter(fam.values())
    assert len(counts) >= 3
    (always, _), (middle, n_mid) = counts.most_common(2)  # the two largest families
    oc = OnlineCurriculum(tasks, every=1)
    rows = []
    for t in tasks:  # 4 episodes per task: `always` passes 4/4, `middle` 2/4, every other family 0/4
        rows += [(t.id, 1.0 if fam[t.id] == always or (fam[t.id] == middle and i % 2 == 0) else 0.0) for i in range(4)]
    oc.observe(rows, step=0)
    w = oc.update()["helpdesk"]
    assert w[always] == 0.1 and w[middle] == 1.0 and all(w[f] == 0.1 for f in counts if f not in (always, middle))
    # the sampler draws each slot with probability weight / total weight
    expect = n_mid * 1.0 / (n_mid * 1.0 + (len(tasks) - n_mid) * 0.1)
    uniform = n_mid / len(tasks)
    s = TaskSampler(tasks, seed=0, curriculum=oc.picker())
    drawn = [t for step in range(300) for t in s.batch(step, 4)]
    got = sum(1 for t in drawn if fam[t.id] == middle) / len(drawn)
    sd = (expect * (1 - expect) / len(drawn)) ** 0.5
    assert abs(got - expect) < 4 * sd and got > uniform + 0.2, (got, expect, uniform)
    shares = oc.shares(drawn)
    assert shares["sometimes"] == round(got, 4) and shares["unseen"] == 0.0
    # the same draws again: a pure function of (seed, step, weights)
    assert [t.id for t in TaskSampler(tasks, seed=0, curriculum=oc.picker()).batch(7, 4)] == [t.id for t in s.batch(7, 4)]
    # the file: evolve.json's format, and `forgec compile` of the same docs reads it (the sampler thins out families)
    oc.write(build / "evolve.json")
    doc, diags = check_rules(build / "evolve.json", {"helpdesk"})
    assert doc is not None and not diags
    weights = {coarse_id(r["family"]): r["weight"] for r in doc["envs"]["helpdesk"]["rules"] if r["action"] == "weight"}
    assert weights == w
    res = compile_build(CompileOptions(inputs=[DOCS], out=build, tasks_per_env=12))
    assert res.ok
    m = json.loads((build / "manifest.json").read_text())
    assert m["envs"]["helpdesk"]["stats"]["sampler_rejected"].get("evolve-curriculum", 0) > 0


def _train(root: Path, out: str, steps: int, resume: bool = False) -> subprocess.CompletedProcess:
    sets = ["rollout.tasks_per_step=4", "rollout.group_size=2", "rollout.max_new_tokens=8", "rollout.max_turns=2",
            "algo.dynamic_filtering=false", "checkpoint.every=1", "logging.tensorboard=false", f"optim.steps={steps}",
            "data.curriculum_every=1"]
    args = [sys.executable, "-m", "forgec", "train", "build", "-c", "cpu-tiny", "-o", out]
    for x in sets:
        args += ["--set", x]
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu", PYTHONUNBUFFERED="1")
    return subprocess.run(args + (["--resume"] if resume else []), cwd=root, env=env, capture_output=True, text=True, timeout=600)


def _curr(path: Path) -> list[dict]:
    recs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [{k: r.get(k) for k in ("step", "curriculum_share", "curriculum_weights", "pass_rate")} for r in recs]


def test_trainer_learns_weights_and_resume_restores_them(tmp_path):
    from forgec.evolve import check_rules
    from forgec.runtime.curriculum import pass_weight
    from forgec.train.toybuild import make_toy_build
    from forgec.train.trainer import TaskSampler

    make_toy_build(tmp_path / "build", tasks_per_env=4)
    r = _train(tmp_path, "full", 3)
    assert r.returncode == 0, r.stderr[-3000:]
    full = _curr(tmp_path / "full" / "metrics.jsonl")
    assert [x["step"] for x in full] == [1, 2, 3]
    assert all(x["curriculum_share"] and x["curriculum_weights"] for x in full)
    # step 1's weights, by hand: the step drew the uniform sampler's tasks (no weights yet); a family it played
    # gets pass_weight of its pass rate, every other family 0.5 (unseen); every step-1 task is unseen at draw time
    tasks = load(tmp_path / "build").tasks
    played = {(t.env, coarse_id(family_of(t))) for t in TaskSampler(tasks, seed=0).batch(0, 4)}
    assert full[0]["curriculum_share"]["unseen"] == 1.0
    assert full[0]["pass_rate"] == 0.0  # the untrained tiny model fails every episode (seeded: always so)
    for t in tasks:
        f = coarse_id(family_of(t))
        assert full[0]["curriculum_weights"][t.env][f] == (pass_weight(0.0) if (t.env, f) in played else 0.5)
    doc, diags = check_rules(tmp_path / "full" / "evolve.json", {"lights", "thermostat"})
    assert doc is not None and not diags
    # stopped after 2 steps, resumed to 3: the same curriculum, step for step, and the same rule file
    assert _train(tmp_path, "part", 2).returncode == 0
    st = json.loads((tmp_path / "part" / "checkpoints" / "step_00000002" / "trainer_state.json").read_text())
    assert st["curriculum"]["rules"]
    r = _train(tmp_path, "part", 3, resume=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert _curr(tmp_path / "part" / "metrics.jsonl") == full
    assert (tmp_path / "part" / "evolve.json").read_bytes() == (tmp_path / "full" / "evolve.json").read_bytes()


def test_curriculum_every_with_asynchronous_rollouts_is_a_config_error():
    from forgec.train.config import TrainConfig

    import pytest

    with pytest.raises(ValueError, match="curriculum_every"):
        TrainConfig.model_validate({"data": {"curriculum_every": 2}, "rollout": {"max_staleness": 1}})
    with pytest.raises(ValueError):
        TrainConfig.model_validate({"data": {"curriculum_every": -1}})
