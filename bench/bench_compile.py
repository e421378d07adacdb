"""Compile benchmarks (issue 6): paper scale (10 envs, ~1,100 tasks) and 100 envs / 10,000 tasks,
cold and incremental (one edited blueprint). Prints a table; not a timed test.

    python bench/bench_compile.py [--big] [-j 2]
    python bench/bench_compile.py --broad 3   # the 3 largest doc sets of ../shared/corpus-broad, by tools

Issue 20, big real APIs (`--broad`; default -n 120, one env each, 2 shared cores, same tree with and
without the change, two runs each for jellyfin). Verification already ran every tool on copy-on-write
forks of one validated env per world (548d078); what was left per call: the determinism twin of each
tool's first call validated and deep-copied the whole sample world again (now `Env(snapshot,
trusted=True)`: the snapshot is already a private canonical copy), and the tool graph asked
`prim_class` 5.7 million times, hashing frozen type nodes by value (now memoized by node identity).
Same env.py, tasks, states and manifest (less timestamps) before and after:

| doc set | tools (write) | tasks | before (s) | after (s) |
|---|---:|---:|---:|---:|
| pypi_jellyfin_mcp (largest) | 373 (142) | 2 | 19.6–22.2 | 14.8–15.3 |
| openapi_harbor | 203 (88) | 110 | 27.9 | 22.1 |

(npm_digitalocean_mcp, 353 tools, does not check today: `fresh_id expects an entity name` in its
synthesized env.forge, a synthesis bug, so it is not timed.)
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


BROAD = REPO.parent / "shared" / "corpus-broad"


def largest_broad(n: int) -> list[tuple[str, int]]:
    """The n largest doc sets of the broad corpus by the tool count in its README table."""
    rows = []
    for line in (BROAD / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 5 and cells[1].startswith("`") and cells[4].isdigit():
            rows.append((cells[1].strip("`"), int(cells[4])))
    return sorted(rows, key=lambda r: (-r[1], r[0]))[:n]


def broad(n: int, tasks: int) -> None:
    print("| doc set | tools | tasks | errors | compile (s) |\n|---|---:|---:|---:|---:|")
    for name, tools in largest_broad(n):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            res = compile_build(CompileOptions(inputs=[BROAD / name], out=Path(d) / "b", tasks_per_env=tasks))
            secs = time.perf_counter() - t0
        env = next(iter(res.manifest.envs.values()), None) if res.manifest else None
        print(f"| {name} | {tools} | {env.task_count if env else 0} | {sum(x.is_error for x in res.diagnostics)} | {secs:.1f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also run 100 envs / 10,000 tasks")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--broad", type=int, default=0, help="only compile the N largest broad-corpus doc sets (issue 20)")
    ap.add_argument("-n", type=int, default=120, help="tasks per env for --broad")
    a = ap.parse_args()
    if a.broad:
        broad(a.broad, a.n)
        return
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
