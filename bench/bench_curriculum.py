"""Reward lift with and without `data.curriculum` (issue 26), on CPU with the tiny model.

    python bench/bench_curriculum.py                  # airline from examples/ (tasks with <= 2 gold calls), seeds 0 1 2
    python bench/bench_curriculum.py --steps 12 --out runs/curr

Protocol: compile examples/, keep airline's tasks with at most `--max-calls` gold calls; SFT the tiny model on
their oracle dialogues (the warm start, shared by every run); play the warm-started policy k times on every task
(sampling at the training temperature) and turn the pass rates into curriculum weights exactly as `forgec evolve`
does (forgec.evolve.analyse -> build/evolve.json); then ERPO from the same start for each seed, once with uniform
task sampling and once with `data.curriculum=build/evolve.json`. Prints, per run, the mean reward over the first and
the last quarter of the steps, and the mean lift and its standard deviation over seeds for each arm.
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
    record_files(out)
    return len(keep)


def curriculum_rules(root: Path, k: int, max_new_tokens: int, max_turns: int) -> dict:
    """The warm-started policy's pass rate per family -> build/evolve.json (forgec evolve's analysis, no recompile)."""
    from forgec.evolve import analyse, write_rules
    from forgec.runtime import load
    from forgec.runtime.agents import HFAgent
    from forgec.runtime.episode import EpisodeLimits
    from forgec.runtime.eval import evaluate
    from forgec.runtime.judge import RuleJudge
    from forgec.runtime.users import ScriptedUser

    b = load(root / "build")
    agent = HFAgent(str(root / "sft" / "final"), max_new_tokens=max_new_tokens, temperature=1.0)
    res = evaluate(b, lambda t, trial: agent, ScriptedUser, RuleJudge(), k, None, 1, limits=EpisodeLimits(max_turns=max_turns))
    rr, new = analyse(root / "build", b, {"sft": res.episodes}, 1, {})
    write_rules(root / "build" / "evolve.json", new)
    return rr.pass_by_family


def window(recs: list[dict]) -> tuple[float, float]:
    q = max(1, len(recs) // 4)
    return (sum(r["reward_mean"] for r in recs[:q]) / q, sum(r["reward_mean"] for r in recs[-q:]) / q)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="airline")
    ap.add_argument("--max-calls", type=int, default=2)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--sft-epochs", type=int, default=30)
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--max-new-tokens", type=int, default=160)
    ap.add_argument("--max-turns", type=int, default=6)
    ap.add_argument("-k", type=int, default=4)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    root = Path(a.out or tempfile.mkdtemp(prefix="bench_curriculum_")).resolve()
    root.mkdir(parents=True, exist_ok=True)
    n = make_build(root, a.env, a.max_calls)
    sets = lambda xs: [y for x in xs for y in ("--set", x)]  # noqa: E731
    t0 = time.perf_counter()
    if not (root / "sft" / "final" / "config.json").exists():
        forgec(["sft", "build", "-c", "cpu-tiny", "-o", "sft", *sets([f"sft.epochs={a.sft_epochs}", "sft.lr=0.005"])], root)
    print(f"{n} tasks; SFT {time.perf_counter() - t0:.0f} s")
    rates = curriculum_rules(root, a.k, a.max_new_tokens, a.max_turns)
    print("warm start pass rate by family:", json.dumps(rates, indent=1))
    lifts: dict[str, list[float]] = {"uniform": [], "curriculum": []}
    for seed in a.seeds:
        for arm in ("uniform", "curriculum"):
            out = f"rl-{arm}-seed{seed}"
            shutil.rmtree(root / out, ignore_errors=True)
            xs = [f"model.path={root / 'sft' / 'final'}", f"data.seed={seed}", f"optim.steps={a.steps}", "optim.lr=0.001",
                  f"rollout.tasks_per_step={a.tasks}", f"rollout.group_size={a.group}", f"rollout.max_new_tokens={a.max_new_tokens}",
                  f"rollout.max_turns={a.max_turns}", "checkpoint.every=1000", "logging.tensorboard=false"]
            if arm == "curriculum":
                xs.append(f"data.curriculum={root / 'build' / 'evolve.json'}")
            t = time.perf_counter()
            forgec(["train", "build", "-c", "cpu-tiny", "-o", out, *sets(xs)], root)
            recs = [json.loads(x) for x in (root / out / "metrics.jsonl").read_text().splitlines() if x.strip()]
            first, last = window(recs)
            lifts[arm].append(last - first)
            print(f"seed {seed} {arm:10s}: reward {first:.3f} -> {last:.3f} (lift {last - first:+.3f}), {time.perf_counter() - t:.0f} s")
    for arm, xs in lifts.items():
        sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
        print(f"{arm:10s}: mean lift {statistics.mean(xs):+.3f} +- {sd:.3f} over seeds {a.seeds}")


if __name__ == "__main__":
    main()
