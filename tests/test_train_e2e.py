"""CPU end to end on a small built env with a tiny local model, through the real CLI.

`forgec sft` then `forgec train`: finite losses, parameters change, checkpoints are atomic and
pruned, the final HF export loads, and a run killed with SIGKILL after step k and resumed
matches an uninterrupted run step for step. The 2-process DeepSpeed-launcher run is slow.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# rollouts small enough for CI on 2 cores; timing fields differ run to run
TRAIN_SETS = ["rollout.tasks_per_step=4", "rollout.group_size=3", "rollout.max_new_tokens=40", "rollout.max_turns=3",
              "algo.max_refill_rounds=1", "checkpoint.every=1", "checkpoint.keep_last=2", "logging.tensorboard=true"]
TIMING = {"rollout_s", "update_s", "sync_s", "rollout_tokens_per_s", "update_tokens_per_s"}


def forgec(*args: str, cwd: Path, env_extra: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu", PYTHONUNBUFFERED="1", **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "forgec", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def sets(items: list[str]) -> list[str]:
    out = []
    for s in items:
        out += ["--set", s]
    return out


def metrics(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def comparable(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k not in TIMING}


@pytest.fixture(scope="module")
def sft_model(tmp_path_factory):
    """A toy build and a tiny policy warm-started on its oracle trajectories (single process)."""
    from forgec.train.toybuild import make_toy_build

    root = tmp_path_factory.mktemp("e2e")
    make_toy_build(root / "build", tasks_per_env=8)
    r = forgec("sft", "build", "-c", "cpu-tiny", "-o", "sft", *sets(["sft.epochs=30", "sft.lr=0.005"]), cwd=root)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = metrics(root / "sft" / "sft_metrics.jsonl")
    losses = [x["loss"] for x in recs]
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < 0.5 * losses[0]  # SFT learned the oracle turns
    return root


def test_train_checkpoints_and_sigkill_resume_match_uninterrupted(sft_model):
    root = sft_model
    common = ["build", "-c", "cpu-tiny", *sets(TRAIN_SETS + ["model.path=sft/final", "optim.steps=3"])]
    full = forgec("train", *common, "-o", "full", cwd=root)
    assert full.returncode == 0, full.stderr[-3000:]
    ref = metrics(root / "full" / "metrics.jsonl")
    assert [r["step"] for r in ref] == [1, 2, 3]
    for r in ref:
        assert all(math.isfinite(r[k]) for k in ("loss", "pg_loss", "clip_frac", "grad_norm", "reward_mean", "param_checksum"))
    # parameters change on steps that had trainable tokens
    from safetensors.torch import load_file

    w0 = load_file(str(root / "sft" / "final" / "model.safetensors"))
    w1 = load_file(str(root / "full" / "final" / "model.safetensors"))
    assert sum(r["loss_tokens"] for r in ref) > 0, "no step had a reward signal; the test needs one"
    assert any(not (w0[k] == w1[k]).all() for k in w0)
    # checkpoints: last 2 kept, `latest` points at the newest, no temp folders left
    ck = root / "full" / "checkpoints"
    assert sorted(p.name for p in ck.iterdir() if p.name.startswith("step_")) == ["step_00000002", "step_00000003"]
    assert (ck / "latest").read_text().strip() == "step_00000003"
    assert not list(ck.glob(".tmp-*"))
    st = json.loads((ck / "step_00000003" / "trainer_state.json").read_text())
    assert st["step"] == 3 and st["cursor"] == 12 and len(st["metrics"]) == 3
    assert list((root / "full" / "tb").rglob("events.out.tfevents.*"))

    # the same run, SIGKILLed once the step-1 checkpoint is complete, then resumed
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu")
    proc = subprocess.Popen([sys.executable, "-m", "forgec", "train", *common, "-o", "killed"], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    latest = root / "killed" / "checkpoints" / "latest"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if latest.exists() and latest.read_text().strip() == "step_00000001":
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = metrics(root / "killed" / "metrics.jsonl")
    assert 1 <= len(done) < 3
    res = forgec("train", *common, "-o", "killed", "--resume", cwd=root)
    assert res.returncode == 0, res.stderr[-3000:]
    got = metrics(root / "killed" / "metrics.jsonl")
    assert [comparable(r) for r in got] == [comparable(r) for r in ref]
    w2 = load_file(str(root / "killed" / "final" / "model.safetensors"))
    assert all((w1[k] == w2[k]).all() for k in w1)


def test_bad_config_and_missing_build_are_diagnostics(tmp_path):
    r = forgec("train", "nope", "-c", "cpu-tiny", "--set", "algo.advantage=ppo", cwd=tmp_path)
    assert r.returncode == 1 and "error[train-config]" in r.stderr and "algo.advantage" in r.stderr and "Traceback" not in r.stderr
    r = forgec("train", str(tmp_path / "nope"), "-c", "cpu-tiny", cwd=tmp_path)
    assert r.returncode == 1 and "error[missing-build]" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_sft_then_train_with_two_processes_under_the_deepspeed_launcher(tmp_path):
    from forgec.train.toybuild import make_toy_build

    make_toy_build(tmp_path / "build", tasks_per_env=8)
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu")
    ds = [str(Path(sys.executable).parent / "deepspeed"), "--num_accelerators", "2", "--no_local_rank", "--master_port", "29517",
          "--module", "forgec"]

    def launch(*args):
        r = subprocess.run(ds + list(args), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        return r

    launch("sft", "build", "-c", "cpu-tiny", "-o", "sft", *sets(["sft.epochs=30", "sft.lr=0.005"]))
    common = ["train", "build", "-c", "cpu-tiny", "-o", "rl", *sets(TRAIN_SETS + ["model.path=sft/final", "deepspeed.config=ds_zero2.json"])]
    launch(*common, *sets(["optim.steps=2"]))
    ref = metrics(tmp_path / "rl" / "metrics.jsonl")
    assert [r["step"] for r in ref] == [1, 2]
    assert all(math.isfinite(r["loss"]) for r in ref)
    # both processes contributed rollouts: 4 tasks x 3 rollouts, split over 2 ranks
    assert all(r["groups_sampled"] == 4 and r["episodes"] >= 12 for r in ref)
    launch(*common, *sets(["optim.steps=3"]), "--resume")
    got = metrics(tmp_path / "rl" / "metrics.jsonl")
    assert [r["step"] for r in got] == [1, 2, 3]
    assert [comparable(r) for r in got[:2]] == [comparable(r) for r in ref]
    from transformers import AutoModelForCausalLM

    AutoModelForCausalLM.from_pretrained(tmp_path / "rl" / "final")


def test_sft_and_train_on_a_compiled_build(tmp_path, repo):
    """`forgec compile examples/` -> `forgec sft` -> `forgec train` (real compiled envs, one step)."""
    r = forgec("compile", str(repo / "examples"), "-o", "build", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    r = forgec("sft", "build", "-c", "cpu-tiny", "-o", "sft", *sets(["sft.max_tasks=3", "sft.epochs=2"]), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    r = forgec("train", "build", "-c", "cpu-tiny", "-o", "rl", *sets(["model.path=sft/final", "optim.steps=1", "rollout.tasks_per_step=3",
                                                                       "rollout.group_size=2", "rollout.max_new_tokens=24",
                                                                       "rollout.max_turns=2", "algo.max_refill_rounds=0",
                                                                       "rollout.max_context_tokens=8000"]), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    (rec,) = metrics(tmp_path / "rl" / "metrics.jsonl")
    assert rec["episodes"] == 6 and math.isfinite(rec["loss"]) and rec["gen_tokens"] > 0 and rec["context_limited"] == 0
    assert set(rec["reward_mean_env"]) <= {"airline", "bookstore", "helpdesk"} and len(rec["reward_mean_env"]) == 3
