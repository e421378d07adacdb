"""Learning check on a built env: SFT warm start, then ERPO, over several seeds, sync vs async (CPU).

    python bench/learning_check.py                    # airline from examples/, 3 seeds, sync and max_staleness=1
    python bench/learning_check.py --env toy-lights   # the six-light toy env (several targets), same protocol
    python bench/learning_check.py --env toy-one-light  # the earlier check: every task targets light L3
    python bench/learning_check.py --seeds 0 1 2 3 --steps 12 --async 2 --out runs/lc

The env is compiled from `examples/` (the airline tool docs): its scenario tasks with at most
`--max-calls` gold calls (a user asks how many of their reservations are in some state, or what
they come to; a lookup and a change such as a check-in, a baggage update or a conditional
cancellation), each with its own user, ids and answer. SFT on their oracle dialogues gives the
tiny model the format, then ERPO trains from that one start with `--seeds` seeds, synchronously
and with asynchronous rollouts (rollout.max_staleness = --async). For every run it prints the
mean reward over the first and the last quarter of the steps; then the mean lift and its
standard deviation over seeds, per mode. The SFT model is deterministic (seeded, one CPU thread)
and reused when `--out` already holds it.

`--env toy-lights`: the toy `lights` env (one tool call whose light id is in the user's
sentence), SFT on all six lights, RL on tasks over all six lights, on and off: the policy has to
copy the id from the sentence (reward starts near 1/6 when it picks a light about evenly).
`--env toy-one-light`: the same SFT start, RL on tasks that all target light L3 (a constant to
shift to: a regression check that the objective learns at all, not a learning check).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def forgec(args: list[str], cwd: Path) -> None:
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu")
    r = subprocess.run([sys.executable, "-m", "forgec", *args], check=False, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"forgec {' '.join(args[:3])} failed:\n{r.stderr[-3000:]}")


def make_build(root: Path, env: str, max_calls: int) -> int:
    """examples/ compiled, reduced to `env` and its tasks with <= max_calls gold calls; returns the task count."""
    from forgec.runtime.loader import record_files

    compiled = root / "compiled"
    if not (compiled / "manifest.json").exists():
        forgec(["compile", str(REPO / "examples"), "-o", str(compiled)], root)
    out = root / "build"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(compiled, out)
    for other in [p.stem for p in (out / "tasks").glob("*.jsonl") if p.stem != env]:
        (out / "tasks" / f"{other}.jsonl").unlink()
        shutil.rmtree(out / "envs" / other, ignore_errors=True)
    tasks = [json.loads(x) for x in (out / "tasks" / f"{env}.jsonl").read_text().splitlines() if x.strip()]
    keep = [t for t in tasks if len(t["gold_calls"]) <= max_calls]
    (out / "tasks" / f"{env}.jsonl").write_text("".join(json.dumps(t, sort_keys=True) + "\n" for t in keep))
    man = json.loads((out / "manifest.json").read_text())
    man["envs"] = {k: v for k, v in man["envs"].items() if k == env}
    (out / "manifest.json").write_text(json.dumps(man, indent=2, sort_keys=True) + "\n")
    record_files(out)  # the hashes the runtime's integrity check compares with
    return len(keep)


# per env: SFT epochs, RL steps, group size, generation limit per turn, agent turns
DEFAULTS = {"airline": {"sft_epochs": 30, "steps": 8, "group": 4, "max_new_tokens": 160, "max_turns": 6},
            "toy-lights": {"sft_epochs": 45, "steps": 16, "group": 8, "max_new_tokens": 40, "max_turns": 4},
            "toy-one-light": {"sft_epochs": 45, "steps": 16, "group": 8, "max_new_tokens": 40, "max_turns": 4}}


def make_toy(root: Path, one_light: bool = False) -> int:
    from forgec.train.toybuild import make_toy_build

    if not (root / "sft_build" / "manifest.json").exists():
        make_toy_build(root / "sft_build", tasks_per_env=12, envs=("lights",))
    if (root / "build").exists():
        shutil.rmtree(root / "build")
    make_toy_build(root / "build", tasks_per_env=8, envs=("lights",), seed=1, **({"light_ids": ("L3",)} if one_light else {}))
    return 8


def window(recs: list[dict]) -> tuple[float, float]:
    k = max(1, len(recs) // 4)
    return (sum(r["reward_mean"] for r in recs[:k]) / k, sum(r["reward_mean"] for r in recs[-k:]) / k)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="airline")
    ap.add_argument("--max-calls", type=int, default=2)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--sft-epochs", type=int, default=None)
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--group", type=int, default=None)
    ap.add_argument("--max-new-tokens", type=int, default=None)
    ap.add_argument("--max-turns", type=int, default=None)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--advantage", default="erpo")
    ap.add_argument("--async", dest="async_", type=int, default=1, metavar="K",
                    help="the asynchronous runs use rollout.max_staleness=K (0: synchronous runs only)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    toy = a.env in ("toy-lights", "toy-one-light")
    for k, v in DEFAULTS[a.env if toy else "airline"].items():
        if getattr(a, k) is None:
            setattr(a, k, v)

    root = Path(a.out or tempfile.mkdtemp(prefix="learning_check_")).resolve()
    root.mkdir(parents=True, exist_ok=True)
    n_tasks = make_toy(root, a.env == "toy-one-light") if toy else make_build(root, a.env, a.max_calls)
    sft_build = "sft_build" if toy else "build"
    sets = lambda xs: [y for x in xs for y in ("--set", x)]
    t0 = time.perf_counter()
    if not (root / "sft" / "final" / "config.json").exists():
        forgec(["sft", sft_build, "-c", "cpu-tiny", "-o", "sft", *sets([f"sft.epochs={a.sft_epochs}", "sft.lr=0.005"])], root)
    sft_s = time.perf_counter() - t0

    def rl(seed: int, staleness: int) -> tuple[list[dict], float]:
        out = f"rl-seed{seed}-k{staleness}"
        t = time.perf_counter()
        forgec(["train", "build", "-c", "cpu-tiny", "-o", out, *sets([
            "model.path=sft/final", f"data.seed={seed}", f"optim.steps={a.steps}", f"rollout.tasks_per_step={a.tasks}",
            f"rollout.group_size={a.group}", f"rollout.max_new_tokens={a.max_new_tokens}", f"rollout.max_turns={a.max_turns}", f"algo.advantage={a.advantage}",
            f"optim.lr={a.lr}", "algo.max_refill_rounds=1", "checkpoint.every=0", "checkpoint.export_hf=false",
            "logging.tensorboard=false", f"rollout.max_staleness={staleness}"])], root)
        return [json.loads(x) for x in (root / out / "metrics.jsonl").read_text().splitlines()], time.perf_counter() - t

    modes = [0] + ([a.async_] if a.async_ else [])
    what = {"toy-lights": "toy lights env, six targets", "toy-one-light": "toy lights env, one target (L3)"}.get(a.env) if toy else f"{a.env} from examples/ ({n_tasks} scenario tasks with <= {a.max_calls} gold calls)"
    print(f"\nlearning check: {what}, tiny Qwen3, "
          f"SFT {a.sft_epochs} epochs ({sft_s:.0f} s) then {a.advantage.upper()} B={a.tasks} G={a.group} lr={a.lr}, "
          f"{a.steps} steps, seeds {a.seeds}  (output {root})")
    print(f"{'mode':<18s}{'seed':>5s}{'first':>8s}{'last':>8s}{'lift':>8s}{'s/step':>8s}{'k3 mismatch':>13s}{'IS capped':>10s}  rewards per step")
    lifts: dict[int, list[float]] = {m: [] for m in modes}
    for seed in a.seeds:
        for m in modes:
            recs, wall = rl(seed, m)
            first, last = window(recs)
            lifts[m].append(last - first)
            k3 = max(r.get("mismatch_kl_k3", 0.0) for r in recs)
            capped = max(r.get("is_capped_frac", 0.0) for r in recs)
            name = "synchronous" if m == 0 else f"async k={m}"
            curve = " ".join(f"{r['reward_mean']:.2f}" for r in recs)
            print(f"{name:<18s}{seed:>5d}{first:>8.3f}{last:>8.3f}{last - first:>+8.3f}{wall / len(recs):>8.1f}{k3:>13.2e}"
                  f"{capped:>10.3f}  {curve}", flush=True)
    print()
    for m in modes:
        xs = lifts[m]
        sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
        name = "synchronous" if m == 0 else f"async k={m}"
        print(f"{name:<18s} mean reward lift over {len(xs)} seeds: {statistics.mean(xs):+.3f} (sd {sd:.3f}; "
              f"min {min(xs):+.3f}, max {max(xs):+.3f})")


if __name__ == "__main__":
    main()
