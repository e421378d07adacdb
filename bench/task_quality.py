"""Task quality per env: would a person ask this? (issue 11's bar, measured on real builds).

Compiles examples/ and every ../shared/corpus/<name> folder (or reads builds given with
--build), then prints per env:

* tasks                 how many tasks the env yields (target: >= 50 when it has a write tool)
* tool-words %          instructions that contain a tool identifier, or its words in a row
                        ("cancel pending order"); verb-particle names (check_in) excepted (target <= 1%)
* pipeline %            instructions that speak the pipeline's language: "returned by",
                        "search results", "the first X in the Y" (target <= 1%)
* redundant             gold writes that can be left out and the gold state is still reached
                        (re-run on the initial state without that write; target 0)
* oracle                the compile's oracle pass^1 (target 1.0)

    python bench/task_quality.py [--sampler scenario|walk] [--tasks 120] [--build DIR ...] [--json]
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"

_PARTICLES = {"in", "out", "up", "off", "on", "down", "over", "back", "away"}
_PIPELINE = re.compile(r"\breturned by\b|\bsearch results\b|\bthe (first|last) [\w ]{1,40}? in the\b|\bthat [\w ]{1,40} returns\b", re.I)


def _words(name: str) -> list[str]:
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.sub(r"[^a-z0-9]+", "_", s.lower()).split("_") if w]


def tool_leak(instruction: str, tools: list[str]) -> str | None:
    """The tool an instruction names (identifier, or all its words in a row), if any."""
    low = instruction.lower()
    for t in tools:
        if re.search(rf"(?<![\w]){re.escape(t.lower())}(?![\w])", low):
            return t
        ws = _words(t)
        if len(ws) < 2 or (len(ws) == 2 and ws[1] in _PARTICLES):
            continue  # one word ("search") or a verb-particle phrase ("check in") is plain English
        if re.search(r"(?<![\w])" + r"[\s_-]+".join(map(re.escape, ws)) + r"(?![\w])", low):
            return t
    return None


def pipeline_phrase(instruction: str) -> str | None:
    m = _PIPELINE.search(instruction)
    return m.group(0) if m else None


def _load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"_tq_{abs(hash(str(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def redundant_writes(module, world: dict, task: dict) -> int:
    """Gold writes whose omission still reaches the gold state (each tried alone)."""
    writes = getattr(module, "WRITES_STATE", {})
    calls = task["gold_calls"]
    idx = [i for i, c in enumerate(calls) if writes.get(c["tool"])]
    if task.get("read_only") or not idx:
        return 0
    n = 0
    for skip in idx:
        env = module.Env(copy.deepcopy(world))
        for i, c in enumerate(calls):
            if i != skip and writes.get(c["tool"]):
                env.step(c["tool"], copy.deepcopy(c["arguments"]))
        if env.state_hash() == task["gold_state_hash"]:
            n += 1
    return n


def analyse(build: Path) -> list[dict]:
    manifest = json.loads((build / "manifest.json").read_text())
    rows = []
    for name, rec in sorted(manifest["envs"].items()):
        tasks_path = build / "tasks" / f"{name}.jsonl"
        tasks = [json.loads(line) for line in tasks_path.read_text().splitlines()] if tasks_path.exists() else []
        mod_path = build / "envs" / name / "env.py"
        module = _load_module(mod_path) if mod_path.exists() else None
        tools = sorted(getattr(module, "WRITES_STATE", {}) or {}) if module else []
        has_write = any((getattr(module, "WRITES_STATE", {}) or {}).values()) if module else False
        world = json.loads((build / "states" / f"{name}.json").read_text()) if (build / "states" / f"{name}.json").exists() else {}
        leak = pipe = red = 0
        examples: dict[str, str] = {}
        for t in tasks:
            ins = t["instruction"]
            lt = tool_leak(ins, tools)
            if lt:
                leak += 1
                examples.setdefault("tool", f"{lt}: {ins[:160]}")
            pp = pipeline_phrase(ins)
            if pp:
                pipe += 1
                examples.setdefault("pipeline", f"{pp!r}: {ins[:160]}")
            if module is not None:
                red += redundant_writes(module, world, t)
        k = len(tasks)
        oracle = (rec.get("oracle") or {}).get("pass_rate")
        rows.append({"env": name, "tasks": k, "has_write": has_write, "tool_pct": round(100 * leak / k, 1) if k else 0.0,
                     "pipeline_pct": round(100 * pipe / k, 1) if k else 0.0, "redundant": red, "oracle": oracle,
                     "rejected": rec.get("stats", {}).get("sampler_rejected", {}), "examples": examples})
    return rows


def compile_all(out: Path, sampler: str, tasks: int) -> tuple[list[Path], float]:
    srcs = [ROOT / "examples"] + sorted(p for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else [ROOT / "examples"]
    builds, total = [], 0.0
    for src in srcs:
        b = out / src.name
        cmd = [sys.executable, "-m", "forgec", "compile", str(src), "-o", str(b), "--tasks", str(tasks)]
        if sampler:
            cmd += ["--sampler", sampler]
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        total += time.perf_counter() - t0
        if r.returncode != 0 or not (b / "manifest.json").exists():
            print(f"compile {src.name} failed (rc {r.returncode}): {r.stdout[-400:]} {r.stderr[-400:]}", file=sys.stderr)
            continue
        builds.append(b)
    return builds, total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sampler", default="", help="scenario or walk (default: the compiler's default)")
    ap.add_argument("--tasks", type=int, default=120)
    ap.add_argument("--build", nargs="*", type=Path, help="analyse these builds instead of compiling")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--examples", action="store_true", help="print one offending instruction per env")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        secs = None
        builds = a.build or []
        if not builds:
            builds, secs = compile_all(Path(tmp), a.sampler, a.tasks)
        rows = [r for b in builds for r in analyse(b)]
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'env':28} {'tasks':>6} {'tool-words%':>11} {'pipeline%':>9} {'redundant':>9} {'oracle':>6}")
    for r in rows:
        o = "-" if r["oracle"] is None else f"{r['oracle']:.2f}"
        flag = " (<50)" if r["has_write"] and r["tasks"] < 50 else ""
        print(f"{r['env']:28} {r['tasks']:>6} {r['tool_pct']:>11.1f} {r['pipeline_pct']:>9.1f} {r['redundant']:>9} {o:>6}{flag}")
        if a.examples:
            for k, v in r["examples"].items():
                print(f"    {k}: {v}")
    n = sum(r["tasks"] for r in rows)
    if n:
        tool = sum(r["tool_pct"] * r["tasks"] for r in rows) / n
        pipe = sum(r["pipeline_pct"] * r["tasks"] for r in rows) / n
        print(f"{'all':28} {n:>6} {tool:>11.1f} {pipe:>9.1f} {sum(r['redundant'] for r in rows):>9}")
    if secs is not None:
        print(f"compile time (all sources, sequential): {secs:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
