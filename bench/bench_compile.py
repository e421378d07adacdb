"""Compile benchmarks (issue 6): paper scale (10 envs, ~1,100 tasks) and 100 envs / 10,000 tasks,
cold and incremental (one edited blueprint). Prints a table; not a timed test.

    python bench/bench_compile.py [--big] [-j 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from forgec.build import CompileOptions, compile_build  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"


def make_docs(root: Path, n_envs: int) -> Path:
    """n_envs environments: the examples and the real corpus, cycled under distinct names."""
    docs = root / "docs"
    docs.mkdir(parents=True)
    sources = sorted(p for p in (REPO / "examples").glob("*.*") if p.suffix in (".json", ".yaml", ".yml", ".jsonl"))
    if CORPUS.is_dir():
        # mcp_server_time has two read-only tools whose synthesized semantics give nothing to tell
        sources += [p for p in sorted(CORPUS.rglob("*")) if p.suffix in (".json", ".yaml") and "mcp_server_time" not in str(p)]
    for i in range(n_envs):
        src = sources[i % len(sources)]
        stem = src.parent.name if src.stem in ("tools", "tools_list", "api") else src.stem
        shutil.copy(src, docs / f"{stem}_{i:03d}{src.suffix}")
    return docs


def run(n_envs: int, tasks: int, jobs: int) -> dict:
    with tempfile.TemporaryDirectory() as td:
        root = Path(td)
        docs = make_docs(root, n_envs)
        out = root / "build"
        opts = CompileOptions(inputs=[docs], out=out, tasks_per_env=tasks, jobs=jobs)
        t0 = time.perf_counter()
        res = compile_build(opts)
        cold = time.perf_counter() - t0
        n_tasks = sum(e.task_count for e in res.manifest.envs.values())
        t0 = time.perf_counter()
        again = compile_build(opts)
        noop = time.perf_counter() - t0
        # an incremental build must report what a fresh one does (cached stages replay their diagnostics)
        warn = (res.manifest.diagnostics.get("warning", 0), again.manifest.diagnostics.get("warning", 0))
        env = sorted(res.manifest.envs)[0]
        bp = next(b for b in res.manifest.envs[env].blueprints.values() if b.task)
        p = out / bp.path
        p.write_text(p.read_text().replace('goal "', 'goal "(edited) ', 1))
        t0 = time.perf_counter()
        compile_build(opts)
        inc = time.perf_counter() - t0
        return {"envs": len(res.manifest.envs), "tasks": n_tasks, "cold_s": cold, "noop_s": noop, "edit_one_s": inc, "warn": warn}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also run 100 envs / 10,000 tasks")
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args()
    rows = [("paper scale", run(10, 110, a.j), "cold < 10 s; edit-one < 1 s")]
    if a.big:
        rows.append(("100 envs", run(100, 100, a.j), "-"))
    print(f"{'case':<12} {'envs':>5} {'tasks':>6} {'cold s':>8} {'no-op s':>8} {'edit-one s':>10} {'warnings':>9}  goal")
    for name, r, goal in rows:
        w = f"{r['warn'][0]}/{r['warn'][1]}"
        print(f"{name:<12} {r['envs']:>5} {r['tasks']:>6} {r['cold_s']:>8.2f} {r['noop_s']:>8.2f} {r['edit_one_s']:>10.2f} {w:>9}  {goal}")
    print("warnings: fresh/no-op build (equal: reused stages replay their diagnostics)")


if __name__ == "__main__":
    main()
