"""CPU end to end on a small built env with a tiny local model, through the real CLI.

`forgec sft` then `forgec train`: finite losses, parameters change, checkpoints are atomic and
pruned, the final HF export loads, and a run killed with SIGKILL after step k and resumed
matches an uninterrupted run step for step, weights and Adam state bit for bit (every step of
that run trains: the SFT warm start makes rewards vary within groups). The 2-process DeepSpeed-launcher run is slow.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# rollouts small enough for CI on 2 cores; timing fields differ run to run
TRAIN_SETS = ["rollout.tasks_per_step=4", "rollout.group_size=4", "rollout.max_new_tokens=40", "rollout.max_turns=5",
              "algo.max_refill_rounds=3", "checkpoint.every=1", "checkpoint.keep_last=2", "logging.tensorboard=true"]
TIMING = {"rollout_s", "update_s", "sync_s", "rollout_tokens_per_s", "update_tokens_per_s", "servers", "trainer_wait_s", "env_user_share", "step_s"}


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
    r = forgec("sft", "build", "-c", "cpu-tiny", "-o", "sft", *sets(["sft.epochs=45", "sft.lr=0.005"]), cwd=root)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = metrics(root / "sft" / "sft_metrics.jsonl")
    losses = [x["loss"] for x in recs]
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < 0.5 * losses[0]  # SFT learned the oracle turns
    return root


def ds_state(ckpt: Path) -> tuple[dict, dict]:
    """(weights, AdamW state) of a single-process ZeRO-2 checkpoint folder, read straight from DeepSpeed's files."""
    import torch

    weights = torch.load(ckpt / "mp_rank_00_model_states.pt", weights_only=False, map_location="cpu")["module"]
    opt = torch.load(ckpt / "zero_pp_rank_0_mp_rank_00_optim_states.pt", weights_only=False, map_location="cpu")["optimizer_state_dict"]
    (st,) = opt["base_optimizer_state"]["state"].values()  # ZeRO-2: one flat fp32 partition, one Adam state
    (fp32,) = opt["single_partition_of_fp32_groups"]
    return weights, {"step": float(st["step"]), "exp_avg": st["exp_avg"], "exp_avg_sq": st["exp_avg_sq"], "fp32": fp32.detach()}


def assert_same_state(a: Path, b: Path) -> None:
    """Bit-identical weights and optimizer state (single process, 1 CPU thread, seeded sampling: no tolerance needed)."""
    import torch

    (wa, oa), (wb, ob) = ds_state(a), ds_state(b)
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
    assert oa["step"] == ob["step"]
    assert all(torch.equal(oa[k], ob[k]) for k in ("exp_avg", "exp_avg_sq", "fp32"))


def kill_after_first_checkpoint(cmd: list[str], root: Path, out: str) -> int:
    """Start `forgec train`, SIGKILL its whole process group once a checkpoint is complete; return that step."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu")
    proc = subprocess.Popen([sys.executable, "-m", "forgec", "train", *cmd, "-o", out], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    latest = root / out / "checkpoints" / "latest"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not (latest.exists() and latest.read_text().strip()):
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return int(latest.read_text().strip()[len("step_"):])


def test_train_checkpoints_and_sigkill_resume_match_uninterrupted(sft_model):
    """Every step really trains (reward varies within groups after SFT), so resume must restore Adam's moments too."""
    import torch

    root = sft_model
    common = ["build", "-c", "cpu-tiny", *sets(TRAIN_SETS + ["model.path=sft/final", "optim.steps=3", "optim.warmup_steps=0"])]
    full = forgec("train", *common, "-o", "full", cwd=root)
    assert full.returncode == 0, full.stderr[-3000:]
    ref = metrics(root / "full" / "metrics.jsonl")
    assert [r["step"] for r in ref] == [1, 2, 3]
    for r in ref:
        assert all(math.isfinite(r[k]) for k in ("loss", "pg_loss", "clip_frac", "grad_norm", "reward_mean", "param_checksum"))
        # not all groups filtered: every step has a trained group, loss tokens and an optimizer step
        assert r["trained_groups"] > 0 and r["loss_tokens"] > 0 and not r["skipped_update"], r
    # checkpoints: last 2 kept, `latest` points at the newest, no temp folders left
    ck = root / "full" / "checkpoints"
    assert sorted(p.name for p in ck.iterdir() if p.name.startswith("step_")) == ["step_00000002", "step_00000003"]
    assert (ck / "latest").read_text().strip() == "step_00000003"
    assert not list(ck.glob(".tmp-*"))
    st = json.loads((ck / "step_00000003" / "trainer_state.json").read_text())
    assert st["step"] == 3 and st["cursor"] == 12 and len(st["metrics"]) == 3
    assert list((root / "full" / "tb").rglob("events.out.tfevents.*"))

    # parameters change on every step: SFT weights -> step 2 -> step 3 all differ
    from safetensors.torch import load_file

    w0 = load_file(str(root / "sft" / "final" / "model.safetensors"))
    (w2, o2), (w3, o3) = ds_state(ck / "step_00000002"), ds_state(ck / "step_00000003")
    assert any(not torch.equal(w0[k], w2[k]) for k in w0) and any(not torch.equal(w2[k], w3[k]) for k in w2)
    # optimizer state is live: one Adam step per train step, non-zero moments
    assert (o2["step"], o3["step"]) == (2.0, 3.0)
    assert all(o[k].abs().max() > 0 for o in (o2, o3) for k in ("exp_avg", "exp_avg_sq"))
    # and it is the state that moved the weights: AdamW's update by hand (lr 1e-3, betas .9/.999, eps 1e-8, no decay)
    lr, b1, b2, t = 1e-3, 0.9, 0.999, 3
    expect = o2["fp32"] - lr / (1 - b1**t) * o3["exp_avg"] / ((o3["exp_avg_sq"] / (1 - b2**t)).sqrt() + 1e-8)
    assert (o3["fp32"] - o2["fp32"]).abs().max() > 1e-4  # a real move, not rounding noise
    torch.testing.assert_close(o3["fp32"], expect, rtol=0, atol=1e-6)  # op order differs from torch's: ~1 ulp
    w1 = load_file(str(root / "full" / "final" / "model.safetensors"))
    assert all(torch.equal(w1[k], w3[k]) for k in w1)  # the HF export is the last step's weights

    # the same run, SIGKILLed once its first checkpoint is complete (non-zero Adam moments), then resumed
    k = kill_after_first_checkpoint(common, root, "killed")
    assert 1 <= k < 3
    assert ds_state(root / "killed" / "checkpoints" / f"step_{k:08d}")[1]["exp_avg"].abs().max() > 0
    assert 1 <= len(metrics(root / "killed" / "metrics.jsonl")) < 3
    shutil.copytree(root / "killed", root / "tampered")
    res = forgec("train", *common, "-o", "killed", "--resume", cwd=root)
    assert res.returncode == 0, res.stderr[-3000:]
    got = metrics(root / "killed" / "metrics.jsonl")
    assert [comparable(r) for r in got] == [comparable(r) for r in ref]
    for tag in ("step_00000002", "step_00000003"):
        assert_same_state(root / "killed" / "checkpoints" / tag, ck / tag)
    w4 = load_file(str(root / "killed" / "final" / "model.safetensors"))
    assert all(torch.equal(w1[k2], w4[k2]) for k2 in w1)

    # control: the comparison above sees optimizer state. Zero the moments in the killed run's checkpoint,
    # resume one step: same data, same weights, different Adam state -> different weights.
    optim_file = root / "tampered" / "checkpoints" / f"step_{k:08d}" / "zero_pp_rank_0_mp_rank_00_optim_states.pt"
    sd = torch.load(optim_file, weights_only=False)
    (adam,) = sd["optimizer_state_dict"]["base_optimizer_state"]["state"].values()
    adam["exp_avg"].zero_()
    adam["exp_avg_sq"].zero_()
    torch.save(sd, optim_file)
    sets_k = sets(TRAIN_SETS + ["model.path=sft/final", f"optim.steps={k + 1}", "optim.warmup_steps=0"])
    res = forgec("train", "build", "-c", "cpu-tiny", *sets_k, "-o", "tampered", "--resume", cwd=root)
    assert res.returncode == 0, res.stderr[-3000:]
    assert metrics(root / "tampered" / "metrics.jsonl")[k]["loss_tokens"] == ref[k]["loss_tokens"]  # same rollouts
    wt, _ = ds_state(root / "tampered" / "checkpoints" / f"step_{k + 1:08d}")
    wf, _ = ds_state(ck / f"step_{k + 1:08d}")
    assert any(not torch.equal(wt[n], wf[n]) for n in wf)


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
