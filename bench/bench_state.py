"""Compile time against the size of a user's own state (`--state ENV=FILE`, issue 25): a valid world
of the τ-bench retail env (../shared/corpus/tau_bench_retail) with N records per top entity, written
as a state file and compiled with `--state`. Prints a table of state size and compile seconds (and a
profile with --profile N); not a timed test.

    python bench/bench_state.py [--sizes 1000,5000,20000] [-n 120] [--profile 20000]
    python bench/bench_state.py --tau      # τ-bench's own db.json per domain (issue 20)

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

Issue 20, τ-bench's own world (`--tau`): its data files as one db.json per domain (what its data/__init__.py
loads), given with `--state` to the compile of its docs (../shared/corpus/tau_bench_*); "validate + report" is
`userstate.load_state` (parse, map, validate, learn) plus rendering every diagnostic in the default format and as
JSON; the 7 MB row is the airline world with its reservations cloned under new keys (2 shared cores):

| world | size (MB) | errors before | errors after | warnings after | validate + report (s) |
|---|---:|---:|---:|---:|---:|
| τ-bench retail db.json | 2.1 | 5,102 | 0 | 7 | 0.3 |
| τ-bench airline db.json | 5.2 | 19,309 | 0 | 3 | 0.7 |
| airline, reservations cloned | 7.4 | (19,309+) | 0 | 3 | 1.0 |

What remains is linear in the state: parsing and validating it (userstate), building envs from it
(a few per compile), and the scenario sampler's full shuffle of a collection per searched intent
(`scenario.search_for`; changing it changes the sampled tasks).
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import io
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from forgec.build import CompileOptions, compile_build  # noqa: E402

SHARED = Path(os.environ.get("FORGEC_SHARED") or REPO.parent / "shared")
DOCS = SHARED / "corpus" / "tau_bench_retail"
ENV = "tau_bench_retail"


def world(size: int, root: Path) -> Path:
    """A valid world of the retail env with `size` records per top entity (forgec's own generator, the
    env's layout), written as a user's state file. (τ-bench's own db.json is measured by `--tau`.)"""
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


TAU = SHARED / "tau-bench" / "tau_bench" / "envs"
TAU_GZ = REPO / "tests" / "corpus" / "tau_bench_data"  # the repository's copy of the same files, <domain>/<name>.json.gz
TAU_FILES = {"retail": ("orders", "products", "users"), "airline": ("flights", "reservations", "users")}


def tau_db(domain: str, data_dir: Path | None = None) -> dict:
    """τ-bench's world of a domain ({name: the data file's JSON}) from `data_dir`'s `<name>.json`, or its
    `<name>.json.gz`; by default ../shared's τ-bench data, or the repository's .json.gz copy where that is absent."""
    if data_dir is None:
        data_dir = TAU / domain / "data" if (TAU / domain / "data").is_dir() else TAU_GZ / domain
    db = {}
    for n in TAU_FILES[domain]:
        f = Path(data_dir) / f"{n}.json"
        db[n] = json.loads(f.read_bytes() if f.is_file() else gzip.decompress(f.with_name(f"{n}.json.gz").read_bytes()))
    return db


def tau_world(domain: str, root: Path, min_mb: float = 0.0, data_dir: Path | None = None) -> Path:
    """τ-bench's world of a domain (`tau_db`) as one db.json; with `min_mb`, reservations (or orders) cloned under
    new keys until the file is at least that large."""
    db = tau_db(domain, data_dir)
    f = root / f"tau_{domain}_{min_mb:g}.json"
    coll, key = ("reservations", "reservation_id") if domain == "airline" else ("orders", "order_id")
    base, i = list(db[coll].values()), 0
    while True:
        f.write_text(json.dumps(db, indent=2))
        if f.stat().st_size >= min_mb * 1e6:
            return f
        for r in base[: max(1, len(base) // 4)]:
            i += 1
            k = f"{r[key]}C{i}"
            db[coll][k] = dict(r, **{key: k})


def tau_rows(root: Path) -> list[dict]:
    """Per τ-bench domain: compile errors with its own world, and the time to validate and report it."""
    from forgec import diagnostics as D
    from forgec.codegen import load_env_module
    from forgec.userstate import load_state

    rows = []
    for domain, mb in (("retail", 0), ("airline", 0), ("airline", 7)):
        env = f"tau_bench_{domain}"
        base = root / f"tau_base_{domain}"
        if not (base / "envs" / env / "env.py").is_file():
            compile_build(CompileOptions(inputs=[SHARED / "corpus" / env], out=base, tasks_per_env=1, oracle_check=False))
        mod = load_env_module(base / "envs" / env / "env.py", name=f"bench_{env}")
        f = tau_world(domain, root, mb)
        t0 = time.perf_counter()
        res = load_state(mod.SCHEMA, f)
        text = D.render(res.diagnostics, "full") + D.render(res.diagnostics, "json")
        secs = time.perf_counter() - t0
        rows.append({"world": f"{domain}" + (f" (cloned to {mb} MB)" if mb else ""), "mb": f.stat().st_size / 1e6, "secs": secs,
                     "errors": sum(d.is_error for d in res.diagnostics), "warnings": sum(d.severity.value == "warning" for d in res.diagnostics),
                     "chars": len(text)})
        if not mb:  # the whole compile with --state: exits clean
            t0 = time.perf_counter()
            cres = compile_build(CompileOptions(inputs=[SHARED / "corpus" / env], out=root / f"tau_build_{domain}", tasks_per_env=120,
                                                states={env: f}))
            rows[-1]["compile_errors"] = sum(d.is_error for d in cres.diagnostics)
            rows[-1]["compile_s"] = time.perf_counter() - t0
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,5000,20000", help="records per top entity (state size)")
    ap.add_argument("-n", "--tasks", type=int, default=120)
    ap.add_argument("--profile", type=int, default=0, help="profile the compile at this scale")
    ap.add_argument("--tau", action="store_true", help="only τ-bench's own worlds (issue 20)")
    a = ap.parse_args()
    if a.tau:
        with tempfile.TemporaryDirectory() as d:
            rows = tau_rows(Path(d))
        print("| world | size (MB) | errors | warnings | validate + report (s) | compile errors | compile (s) |\n|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['world']} | {r['mb']:.1f} | {r['errors']} | {r['warnings']} | {r['secs']:.2f} | {r.get('compile_errors', '')} | "
                  f"{r['compile_s']:.1f} |" if "compile_s" in r else
                  f"| {r['world']} | {r['mb']:.1f} | {r['errors']} | {r['warnings']} | {r['secs']:.2f} | | |")
        return
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
