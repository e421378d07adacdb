"""Learning check: on a deliberately easy built env, SFT + ERPO on a tiny model raises the mean reward (CPU).

    python bench/learning_check.py [--steps 16] [--sft-epochs 45] [--tasks 4] [--group 8] [--lr 1e-3] [--async K]
    python bench/learning_check.py --compare-async 1     # synchronous vs max_staleness=1, wall clock per step

`--async K` trains with asynchronous rollouts (rollout.max_staleness=K).

The `lights` toy env (one tool call whose argument is in the user's sentence). SFT on oracle
trajectories over all six lights teaches the tiny model the Hermes format but not to copy the
light id (it picks one of the six about evenly). The RL build is deliberately easy: every task
targets light L3 (on or off), so reward starts near 1/6 and ERPO has to shift the policy to
L3. Prints the per-step curve and the first-vs-last window means (goal: clearly higher).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def forgec(args: list[str], cwd: Path) -> None:
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu")
    r = subprocess.run([sys.executable, "-m", "forgec", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(r.stderr[-3000:])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--sft-epochs", type=int, default=45)
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--advantage", default="erpo")
    ap.add_argument("--out", default=None)
    ap.add_argument("--async", dest="async_", type=int, default=0, metavar="K",
                    help="asynchronous rollouts: rollout.max_staleness=K (0 = synchronous)")
    ap.add_argument("--compare-async", type=int, default=0, metavar="K",
                    help="run synchronous AND max_staleness=K from the same SFT model; print wall-clock per step and rewards")
    a = ap.parse_args()
    from forgec.train.toybuild import make_toy_build

    root = Path(a.out or tempfile.mkdtemp(prefix="learning_check_"))
    make_toy_build(root / "sft_build", tasks_per_env=12, envs=("lights",))
    make_toy_build(root / "build", tasks_per_env=8, envs=("lights",), light_ids=("L3",), seed=1)
    sets = lambda xs: [y for x in xs for y in ("--set", x)]  # noqa: E731
    forgec(["sft", "sft_build", "-c", "cpu-tiny", "-o", "sft", *sets([f"sft.epochs={a.sft_epochs}", "sft.lr=0.005"])], root)

    def rl(out: str, staleness: int) -> list[dict]:
        forgec(["train", "build", "-c", "cpu-tiny", "-o", out, *sets([
            "model.path=sft/final", f"optim.steps={a.steps}", f"rollout.tasks_per_step={a.tasks}", f"rollout.group_size={a.group}",
            "rollout.max_new_tokens=40", "rollout.max_turns=4", f"algo.advantage={a.advantage}", f"optim.lr={a.lr}",
            "algo.max_refill_rounds=1", "checkpoint.every=0", "logging.tensorboard=false", f"rollout.max_staleness={staleness}"])], root)
        return [json.loads(x) for x in (root / out / "metrics.jsonl").read_text().splitlines()]

    if a.compare_async:
        compare(rl("rl-sync", 0), rl(f"rl-async{a.compare_async}", a.compare_async), a.compare_async)
        return
    recs = rl("rl", a.async_)
    mode = f"asynchronous (max_staleness {a.async_})" if a.async_ else "synchronous"
    print(f"\nlearning check: lights env, tiny Qwen3, SFT {a.sft_epochs} epochs then {a.advantage.upper()} "
          f"B={a.tasks} G={a.group} lr={a.lr}, {mode}  (output {root})")
    print(f"{'step':>5s}{'reward':>9s}{'pass':>7s}{'trained grp':>12s}{'filtered':>10s}{'loss':>10s}  curve")
    for r in recs:
        bar = "#" * int(round(r["reward_mean"] * 40))
        print(f"{r['step']:>5d}{r['reward_mean']:>9.3f}{r['pass_rate']:>7.2f}{r['trained_groups']:>12d}{r['filtered_groups']:>10d}"
              f"{r['loss']:>10.4f}  {bar}")
    k = max(1, len(recs) // 4)
    first = sum(r["reward_mean"] for r in recs[:k]) / k
    last = sum(r["reward_mean"] for r in recs[-k:]) / k
    print(f"\nmean reward, first {k} steps: {first:.3f}; last {k} steps: {last:.3f}; change {last - first:+.3f}")


def compare(sync: list[dict], asy: list[dict], k: int) -> None:
    """Wall clock per step (mean over steps 2..n: step 1 has no overlap) and reward, synchronous vs asynchronous."""
    def row(name: str, recs: list[dict]) -> str:
        later = recs[1:] or recs
        step = sum(r["step_s"] for r in later) / len(later)
        wait = sum(r["trainer_wait_s"] for r in later) / len(later)
        upd = sum(r["update_s"] for r in later) / len(later)
        q = max(1, len(recs) // 4)
        first = sum(r["reward_mean"] for r in recs[:q]) / q
        last = sum(r["reward_mean"] for r in recs[-q:]) / q
        return f"{name:<22s}{step:>9.2f}{wait:>9.2f}{upd:>9.2f}{first:>10.3f}{last:>10.3f}", step

    print(f"\n{'mode':<22s}{'s/step':>9s}{'wait s':>9s}{'update s':>9s}{'reward 1st':>10s}{'last':>10s}   (steps 2..{len(sync)})")
    line_s, t_s = row("synchronous", sync)
    line_a, t_a = row(f"async max_staleness={k}", asy)
    print(line_s)
    print(line_a)
    print(f"speed-up {t_s / max(t_a, 1e-9):.2f}x")


if __name__ == "__main__":
    main()
