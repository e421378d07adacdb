"""Compile time against the size of a user's own state (`--state ENV=FILE`, issue 25): a valid world
of the τ-bench retail env (../shared/corpus/tau_bench_retail) with N records per top entity, written
as a state file and compiled with `--state`. Prints a table of state size and compile seconds (and a
profile with --profile N); not a timed test.

    python bench/bench_state.py [--sizes 1000,5000,20000] [-n 120] [--profile 20000]

Issue 25 (-n 120, 2 shared cores, the same tasks before and after): per blueprint, the gold diff
compared every record of the world with the fork's, and reading a fork's `state` walked every key
of each large layered collection in Python (`_Layer.items`), each about 0.15-0.3 s at 36 MB. The
diff is now taken against the state the fork was made from (unwritten records are the same
objects, skipped by identity) and a layer without new keys materializes with C-level dict copies.

| records per entity | state (MB) | before (s) | after (s) |
|---:|---:|---:|---:|
| 1000 | 1.8 | 2.6 | 1.3 |
| 5000 | 9.0 | 23.9 | 7.1 |
| 20000 | 35.9 | 124.4 (111.0) | 35.7 (43.2) |

What remains is linear in the state: parsing and validating it (userstate), building envs from it
(a few per compile), and the scenario sampler's full shuffle of a collection per searched intent
(`scenario.search_for`; changing it changes the sampled tasks).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from forgec.build import CompileOptions, compile_build  # noqa: E402

SHARED = REPO.parent / "shared"
DOCS = SHARED / "corpus" / "tau_bench_retail"
ENV = "tau_bench_retail"


def world(size: int, root: Path) -> Path:
    """A valid world of the retail env with `size` records per top entity (forgec's own generator, the
    env's layout), written as a user's state file. (τ-bench's own retail db.json lacks fields the
    synthesized schema requires, so it is not a valid --state as it is.)"""
    from forgec.codegen import load_env_module
    from forgec.stdlib.values import generate_state

    base = root / "base"
    if not (base / "envs" / ENV / "env.py").is_file():
        compile_build(CompileOptions(inputs=[DOCS], out=base, tasks_per_env=1, oracle_check=False))
    mod = load_env_module(base / "envs" / ENV / "env.py")
    f = root / f"state_{size}.json"
    f.write_text(json.dumps(generate_state(mod.SCHEMA, seed=1, size=size)))
    return f


def run(k: int, tasks: int, root: Path, profile: bool = False) -> dict:
    state = world(k, root)
    out = root / f"build_{k}"
    opts = CompileOptions(inputs=[DOCS], out=out, tasks_per_env=tasks, states={ENV: state})
    prof = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    res = compile_build(opts)
    if prof:
        prof.disable()
    secs = time.perf_counter() - t0
    errors = [d for d in res.diagnostics if d.is_error]
    env = res.manifest.envs.get(ENV) if res.manifest else None
    row = {"scale": k, "state_mb": state.stat().st_size / 1e6, "seconds": secs, "tasks": env.task_count if env else 0,
           "errors": len(errors)}
    if errors:
        row["first_error"] = errors[0].message[:200]
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        row["profile"] = s.getvalue()
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,5000,20000", help="records per top entity (state size)")
    ap.add_argument("-n", "--tasks", type=int, default=120)
    ap.add_argument("--profile", type=int, default=0, help="profile the compile at this scale")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for k in (int(x) for x in a.sizes.split(",")):
            rows.append(run(k, a.tasks, Path(d), profile=k == a.profile))
            r = rows[-1]
            print(f"size {k}: {r['state_mb']:.1f} MB, {r['seconds']:.1f} s, {r['tasks']} tasks, {r['errors']} errors {r.get('first_error', '')}",
                  flush=True)
    print("\n| records per entity | state (MB) | compile (s) | tasks |\n|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['scale']} | {r['state_mb']:.1f} | {r['seconds']:.1f} | {r['tasks']} |")
    for r in rows:
        if "profile" in r:
            print(r["profile"])


if __name__ == "__main__":
    main()
