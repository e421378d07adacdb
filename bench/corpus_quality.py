"""Corpus-wide quality of the rules backend (issue 12's check), one row per environment.

    python bench/corpus_quality.py [--tasks 120] [--only NAME ...] [--json OUT]
    python bench/corpus_quality.py --broad            # also ../shared/corpus-broad (113 doc sets; ~20 min on 2 cores)
    python bench/corpus_quality.py --build B1 B2 ...  # read builds already made (e.g. task_quality.py --broad --keep DIR)

For every corpus folder under ../shared/corpus and every examples/ doc, runs the real
`forgec compile` (rules backend, a fresh build folder) and reads what it built:

* tools, write tools (`writes_state` in the manifest), log-only tools (`@conservative` in the
  synthesized env.forge: no rule applied, the call is only recorded in ActionLog) and their %;
* tasks yielded, the oracle's pass rate, and whether the compile crashed (a Python traceback
  or an exit status other than 0/1; exit 1 with diagnostics is a reported failure, not a crash).

The issue's bar is printed under the table: <= 10% log-only per source, >= 50 tasks for every
env with a write tool, no crash; then one line per source family (npm, pypi, bfcl, openapi by the
broad corpus's folder prefixes, `core` for the rest) with its log-only share (issue 20: <= 10% overall
and in each family) and how many of its envs with a write tool yield >= 50 tasks. Not a timed test;
numbers move as synthesis improves.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
BROAD = REPO.parent / "shared" / "corpus-broad"
FAMILIES = ("npm", "pypi", "bfcl", "openapi")


def family(source: str) -> str:
    head = source.split("_", 1)[0]
    return head if head in FAMILIES else "core"


def sources(broad: bool = False) -> list[Path]:
    corp = sorted(p for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []
    ex = sorted(p for p in (REPO / "examples").glob("*.*") if p.suffix in (".json", ".yaml", ".yml", ".jsonl"))
    wide = sorted(p for p in BROAD.iterdir() if p.is_dir()) if broad and BROAD.is_dir() else []
    return corp + ex + wide


def log_only_tools(forge_text: str) -> list[str]:
    """Tool names annotated `@conservative` (annotations may come in any order)."""
    out = []
    lines = forge_text.splitlines()
    ann: list[str] = []
    for ln in lines:
        s = ln.strip()
        if s.startswith("@"):
            ann += s.split()
            continue
        m = re.match(r"tool\s+(\w+)", s)
        if m and "@conservative" in ann:
            out.append(m.group(1))
        if s:
            ann = []
    return out


def measure(src: Path, tasks: int) -> list[dict]:
    """Compile one source into a scratch build and return one row per env."""
    with tempfile.TemporaryDirectory(prefix="corpus_quality_") as tmp:
        out = Path(tmp) / "build"
        p = subprocess.run(
            [sys.executable, "-m", "forgec", "compile", str(src), "-o", str(out), "-n", str(tasks)],
            cwd=REPO, capture_output=True, text=True,
        )
        crashed = p.returncode not in (0, 1) or "Traceback (most recent call last)" in (p.stderr + p.stdout)
        return read_build(src.name, out, crashed, p.returncode, (p.stderr or p.stdout)[-400:])


def read_build(source: str, out: Path, crashed: bool = False, rc: int = 0, err: str = "") -> list[dict]:
    """One row per env of the build in `out` (compiled by `measure`, or kept by another bench)."""
    man = out / "manifest.json"
    fam = family(source)
    if not man.is_file():
        return [{"source": source, "env": "-", "family": fam, "tools": 0, "writes": 0, "log_only": [], "tasks": 0, "oracle": None,
                 "crash": True, "rc": rc, "err": err}]
    m = json.loads(man.read_text())
    rows = []
    for name, e in sorted(m["envs"].items()):
        forge = out / (e.get("src") or {}).get("path", "") if e.get("src") else None
        text = forge.read_text() if forge and forge.is_file() else ""
        tools = e.get("tools") or {}
        rows.append({
            "source": source,
            "env": name,
            "family": fam,
            "tools": len(tools),
            "writes": sum(1 for t in tools.values() if t.get("writes_state")),
            "log_only": log_only_tools(text),
            "tasks": int(e.get("task_count") or 0),
            "oracle": (e.get("oracle") or {}).get("pass_rate"),
            "crash": crashed,
            "failed": e.get("failed"),
            "rc": rc,
        })
    if not rows:
        rows.append({"source": source, "env": "-", "family": fam, "tools": 0, "writes": 0, "log_only": [], "tasks": 0, "oracle": None,
                     "crash": crashed, "rc": rc})
    return rows


def verdict(r: dict) -> list[str]:
    bad = []
    if r["tools"] and len(r["log_only"]) > 0.10 * r["tools"]:
        bad.append("log-only>10%")
    if r["writes"] and r["tasks"] < 50:
        bad.append("tasks<50")
    if r["crash"]:
        bad.append("crash")
    return bad


def table(rows: list[dict]) -> str:
    head = f"{'env':<24} {'tools':>5} {'write':>5} {'log':>4} {'log%':>5} {'tasks':>5} {'oracle':>6} {'crash':>5}  verdict"
    out = [head, "-" * len(head)]
    for r in rows:
        n = r["tools"]
        lo = len(r["log_only"])
        pct = f"{100 * lo / n:.0f}%" if n else "-"
        orc = f"{r['oracle']:.2f}" if r["oracle"] is not None else "-"
        bad = verdict(r)
        out.append(f"{r['env'][:24]:<24} {n:>5} {r['writes']:>5} {lo:>4} {pct:>5} {r['tasks']:>5} {orc:>6} {'yes' if r['crash'] else 'no':>5}  {'ok' if not bad else ', '.join(bad)}")
    tot = sum(r["tools"] for r in rows)
    lo = sum(len(r["log_only"]) for r in rows)
    out.append("-" * len(head))
    out.append(f"{'all':<24} {tot:>5} {sum(r['writes'] for r in rows):>5} {lo:>4} {(f'{100 * lo / tot:.0f}%' if tot else '-'):>5} {sum(r['tasks'] for r in rows):>5}")
    failing = [r["env"] for r in rows if verdict(r)]
    out.append(f"bar (<=10% log-only, >=50 tasks per env with a write tool, no crash): {len(rows) - len(failing)}/{len(rows)} envs pass")
    out.append("")
    out.append(f"{'family':<10} {'envs':>5} {'tools':>6} {'log':>5} {'log%':>6} {'write envs':>10} {'>=50 tasks':>10} {'tasks':>6}")
    for fam in sorted({r.get("family", "core") for r in rows}):
        rs = [r for r in rows if r.get("family", "core") == fam]
        n, lo = sum(r["tools"] for r in rs), sum(len(r["log_only"]) for r in rs)
        w = [r for r in rs if r["writes"]]
        out.append(f"{fam:<10} {len(rs):>5} {n:>6} {lo:>5} {(f'{100 * lo / n:.1f}%' if n else '-'):>6} {len(w):>10} "
                   f"{sum(r['tasks'] >= 50 for r in w):>10} {sum(r['tasks'] for r in rs):>6}")
    for r in rows:
        if r["log_only"]:
            out.append(f"  log-only in {r['env']}: {', '.join(r['log_only'])}")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=120, help="blueprints to sample per env (compile's -n)")
    ap.add_argument("--only", nargs="*", default=None, help="source folder/file names to measure")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    ap.add_argument("--broad", action="store_true", help="also compile every doc set of ../shared/corpus-broad")
    ap.add_argument("--build", nargs="*", type=Path, default=None, help="read these builds (named by their folder) instead of compiling")
    a = ap.parse_args()
    rows: list[dict] = []
    if a.build:
        for b in a.build:
            rows += read_build(b.name, b)
        print(table(rows))
        return 0
    for src in sources(a.broad):
        if a.only and src.name not in a.only and src.stem not in a.only:
            continue
        rows += measure(src, a.tasks)
        print(f"measured {src.name}", file=sys.stderr, flush=True)
    print(table(rows))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
