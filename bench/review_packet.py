"""Build a blind-review packet (issue 21): doc sets drawn at random from a corpus, compiled, and 40
random tasks with what a reviewer needs (../shared/review/rubric.md) and nothing of forgec's code.

    python bench/review_packet.py --seed 2029 --out /tmp/review7 --exclude seen.txt

Per task, `packet/tasks/NN.json` holds the instruction, the user scenario, the gold calls with their
arguments and results, the values the agent must tell (`answer_checked`), the end-state diff
(`gold_state_changes`) and the initial state (inline or `states/<set>__<file>`); `packet/docs/<set>/`
holds the docs the env was built from. Sets that yield no task are counted (the yield figure printed at
the end), not reviewed. A set a session tuned on belongs in `--exclude` (whitespace-separated names).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tasks(build: Path) -> list[dict]:
    out = []
    for f in sorted((build / "tasks").glob("*.jsonl")) if (build / "tasks").is_dir() else []:
        out += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus-broad")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--exclude", type=Path, help="file of doc-set names not to draw (tuned on, or reviewed before)")
    ap.add_argument("--sets", type=int, default=8, help="doc sets with tasks to review")
    ap.add_argument("--tries", type=int, default=40, help="doc sets to compile at most")
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--per-set", type=int, default=8, help="tasks from one doc set at most")
    ap.add_argument("--timeout", type=int, default=240, help="seconds per compile")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    seen = set(a.exclude.read_text().split()) if a.exclude else set()
    pool = sorted(p.name for p in a.corpus.iterdir() if p.is_dir() and p.name not in seen)
    rng.shuffle(pool)
    builds: dict[str, tuple[Path, list[dict]]] = {}
    rows = []
    for name in pool[: a.tries]:
        if len(builds) == a.sets:
            break
        b = a.out / "builds" / name
        shutil.rmtree(b, ignore_errors=True)
        try:
            r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(a.corpus / name), "-o", str(b), "-q"],
                               capture_output=True, text=True, timeout=a.timeout, cwd=ROOT)
            tasks = _tasks(b) if r.returncode == 0 else []
            rows.append((name, r.returncode, len(tasks)))
        except subprocess.TimeoutExpired:
            rows.append((name, "timeout", 0))
            continue
        print(f"{name:50} rc {rows[-1][1]}  tasks {len(tasks)}", flush=True)
        if tasks:
            builds[name] = (b, tasks)
    pk = a.out / "packet"
    shutil.rmtree(pk, ignore_errors=True)
    (pk / "tasks").mkdir(parents=True)
    per = {n: rng.sample(t, min(5, len(t))) for n, (_, t) in builds.items()}
    picked = [(n, t) for n, ts in per.items() for t in ts]
    rest = [(n, t) for n, (_, ts) in builds.items() for t in ts if t not in per[n]]
    rng.shuffle(rest)
    for n, t in rest:  # fill up to --tasks, no set over --per-set (review 23: one set gave 20 of 35 tasks)
        if len(picked) >= a.tasks:
            break
        if sum(1 for x, _ in picked if x == n) < a.per_set:
            picked.append((n, t))
    picked = picked[: a.tasks]
    rng.shuffle(picked)
    for i, (n, t) in enumerate(picked):
        b = builds[n][0]
        state, ref = t.get("initial_state"), None
        if state is None and t.get("initial_state_file"):
            ref = f"states/{n}__{Path(t['initial_state_file']).name}"
            (pk / "states").mkdir(exist_ok=True)
            if not (pk / ref).exists():
                shutil.copy(b / t["initial_state_file"], pk / ref)
        item = {"doc_set": n, "docs": f"docs/{n}/", "instruction": t.get("instruction"), "user": t.get("user"),
                "gold_calls": [{"tool": g.get("tool"), "arguments": g.get("arguments"), "result": g.get("result")} for g in t.get("gold_calls", [])],
                "answer_checked": t.get("tell") or None, "gold_state_changes": t.get("gold_diff") or None,
                "initial_state": state, "initial_state_file": ref}
        (pk / "tasks" / f"{i:02d}.json").write_text(json.dumps(item, indent=2, ensure_ascii=False))
    for n in builds:
        shutil.copytree(a.corpus / n, pk / "docs" / n)
    (pk / "README.md").write_text(
        f"Blind review packet: {len(picked)} tasks from {len(builds)} doc sets: {', '.join(sorted(builds))}.\n"
        "Per task: tasks/NN.json (instruction, user scenario, gold calls with arguments and results, answer_checked: the "
        "values the agent must tell the user (checked), gold_state_changes: the end-state diff (checked), the initial "
        "state or the path of its file under states/), docs/<doc_set>/ (the tool docs it was built from).\n")
    print(f"\nyield: {len(builds)} of {len(rows)} drawn doc sets gave tasks; picked {len(picked)} tasks from "
          + ", ".join(f"{n} ({len(t)})" for n, (_, t) in builds.items()))


if __name__ == "__main__":
    main()
