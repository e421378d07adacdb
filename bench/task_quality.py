"""Task quality per env: would a person ask this? (issues 11 and 21, measured on real builds).

Compiles examples/ and every ../shared/corpus/<name> folder (or reads builds given with
--build; `--broad` adds ../shared/corpus-broad, all of it or a seeded `--sample N --seed S`
subset), then prints per env and per source family (examples, corpus, npm, pypi, bfcl, openapi):

* tasks                 how many tasks the env yields (target: >= 50 when it has a write tool)
* tool-words %          instructions that contain a tool identifier, or its words in a row
                        ("cancel pending order"); verb-particle names (check_in) excepted (target <= 1%)
* pipeline %            instructions that speak the pipeline's language: "returned by",
                        "search results", "the first X in the Y" (target <= 1%)
* redundant             gold writes that can be left out and the gold state is still reached
                        (re-run on the initial state without that write; target 0)
* oracle                the compile's oracle pass^1 (target 1.0)
* named %               instructions naming a tool or speaking the pipeline's language (either of the two above)
* dictated %            tasks that are one write call whose every argument the user says (trivial; target <= 5%)
* final                 tasks with a write to a record whose status is final (cancelled, closed, ...), measured
                        with a fixed list of final status words (bench only: the gate derives 'final' from the docs)
* undo                  tasks with a write undone or repeated by a later one (a changed value restored; the
                        same call twice; the same tool setting the same field of the same record again)
* junk                  state values (initial and gold states) outside the schema's enum, a documented list
                        ("one of 'a', 'b'") or a documented numeric bound
* rejected              blueprints the sampler and the lowering rejected, by reason (top reasons printed)

    python bench/task_quality.py [--sampler scenario|walk] [--tasks 120] [--build DIR ...] [--json]
    python bench/task_quality.py --broad [--sample 25 --seed 0] [--no-examples] [-j 1] [--timeout 300]
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
BROAD = ROOT.parent / "shared" / "corpus-broad"
# Status values that end a record's life, in plain English: a measurement of the gate, kept here
# (not in forgec) so that the bench does not grade the gate with the gate's own rule.
_FINAL_WORDS = {"cancelled", "canceled", "closed", "deleted", "archived", "terminated", "expired", "revoked", "refunded",
                "departed", "flown", "resolved", "rejected", "completed", "done", "finished", "removed", "trashed"}
_STATUSISH = re.compile(r"(^|_)(status|state)$", re.I)

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


def family(src_name: str) -> str:
    """The source family of a doc set: npm, pypi, bfcl, openapi (broad corpus), corpus or examples."""
    for f in ("npm", "pypi", "bfcl", "openapi"):
        if src_name.startswith(f + "_"):
            return f
    return "examples" if src_name == "examples" else "corpus"


def _leaves(v: Any) -> list:
    if isinstance(v, dict):
        return [x for y in v.values() for x in _leaves(y)]
    if isinstance(v, list):
        return [x for y in v for x in _leaves(y)]
    return [v]


def dictated(task: dict) -> bool:
    """One write call and nothing else, every argument leaf a fact the user states (no lookup, no decision)."""
    calls = task["gold_calls"]
    if task.get("read_only") or len(calls) != 1:
        return False
    facts = task["user"].get("facts") or {}
    known = {json.dumps(x, sort_keys=True) for x in _leaves(facts)}
    ins = task["instruction"].lower()
    for leaf in _leaves(calls[0]["arguments"]):
        if leaf is None or isinstance(leaf, bool):
            continue
        if json.dumps(leaf, sort_keys=True) not in known and str(leaf).lower() not in ins:
            return False
    return True


def _records(state: dict) -> dict:
    return state.get("entities") or {}


def _ref_keys(module, tool: str, args: dict) -> list[tuple[str, Any]]:
    """(entity, key) of the records a call names by an entity-typed argument."""
    out = []
    for p in (getattr(module, "TOOL_PARAMS", {}) or {}).get(tool, []):
        tj = p.get("type") or {}
        if tj.get("type") == "optional":
            tj = tj.get("inner") or {}
        if tj.get("type") == "ref" and p["name"] in args:
            v = args[p["name"]]
            for leaf in _leaves(v):
                if isinstance(leaf, (str, int)):
                    out.append((tj.get("entity"), leaf))
    return out


def _changed_records(before: dict, after: dict) -> list[tuple[str, Any]]:
    out = []
    b, a = _records(before), _records(after)
    for e in set(b) | set(a):
        rb, ra = b.get(e) or {}, a.get(e) or {}
        for k in set(rb) | set(ra):
            if rb.get(k) != ra.get(k):
                out.append((e, k))
    return out


def _flat(v: Any, path: str = "") -> dict[str, Any]:
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            out.update(_flat(x, f"{path}/{k}"))
        return out
    return {path: json.dumps(v, sort_keys=True)}


def write_defects(module, world: dict, task: dict) -> tuple[int, int]:
    """(writes to a record in a final status, undone/repeated writes) of one task, by replaying its gold calls."""
    writes = getattr(module, "WRITES_STATE", {}) or {}
    calls = task["gold_calls"]
    if task.get("read_only") or not any(writes.get(c["tool"]) for c in calls):
        return 0, 0
    env = module.Env(copy.deepcopy(world))
    docs = {t["function"]["name"]: (t["function"].get("description") or "").lower()
            for t in getattr(module, "TOOLS", []) or [] if isinstance(t, dict) and "function" in t}
    final = undo = 0
    first_before: dict[str, str] = {}  # path -> value before the first write that changed it
    changes: dict[str, int] = {}
    setters: dict[tuple, int] = {}  # (tool, path) -> times
    seen_calls: set[str] = set()
    for c in calls:
        if not writes.get(c["tool"]):
            env.step(c["tool"], copy.deepcopy(c["arguments"]))
            continue
        before = copy.deepcopy(env.state)
        key = json.dumps([c["tool"], c["arguments"]], sort_keys=True)
        if key in seen_calls:
            undo += 1
        seen_calls.add(key)
        env.step(c["tool"], copy.deepcopy(c["arguments"]))
        targets = set(_ref_keys(module, c["tool"], c["arguments"])) | set(_changed_records(before, env.state))
        said = docs.get(c["tool"], "")
        for e, k in sorted(targets, key=str):
            rec = (_records(before).get(e) or {}).get(k) if e else None
            if isinstance(rec, dict) and any(_STATUSISH.search(f) and isinstance(v, str) and v.lower() in _FINAL_WORDS
                                             and not re.search(rf"\b{re.escape(v.lower())}\b", said)  # the docs allow it
                                             for f, v in rec.items()):
                final += 1
                break
        fb, fa = _flat(_records(before)), _flat(_records(env.state))
        for path in set(fb) | set(fa):
            if fb.get(path) != fa.get(path):
                first_before.setdefault(path, fb.get(path))
                changes[path] = changes.get(path, 0) + 1
                if not path.endswith(("_at", "time", "timestamp")):
                    setters[(c["tool"], path)] = setters.get((c["tool"], path), 0) + 1
    end = _flat(_records(env.state))
    if any(n >= 2 and end.get(p) == first_before.get(p) for p, n in changes.items()):
        undo += 1
    if any(n >= 2 for n in setters.values()):
        undo += 1
    return final, undo


_DOC_LIST = re.compile(r"(?:one of|either|possible values|allowed values|valid values|must be)\b[:\s]*((?:[`'\"][\w.-]+[`'\"][\s,]*(?:or\s+|and\s+)?){2,})", re.I)
_DOC_RANGE = re.compile(r"(?:between|from)\s+(-?\d+(?:\.\d+)?)\s+(?:and|to)\s+(-?\d+(?:\.\d+)?)|\((-?\d+)\s*-\s*(-?\d+)\)|at most (\d+(?:\.\d+)?)", re.I)


def doc_values(doc: str) -> list[str]:
    """Values a field's doc lists ("one of 'celsius', 'fahrenheit'"), if it lists them."""
    m = _DOC_LIST.search(doc or "")
    return re.findall(r"[`'\"]([\w.-]+)[`'\"]", m.group(1)) if m else []


def doc_bounds(doc: str) -> tuple[float, float] | None:
    m = _DOC_RANGE.search(doc or "")
    if not m:
        return None
    if m.group(5):
        return float("-inf"), float(m.group(5))
    lo, hi = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return (float(lo), float(hi)) if float(lo) < float(hi) else None


def junk_values(module, state: dict) -> list[str]:
    """Paths of record fields whose value the docs do not allow (enum, listed values, numeric bound)."""
    schema = (getattr(module, "SCHEMA", {}) or {}).get("entities") or {}
    out = []
    for ent, recs in _records(state).items():
        fields = (schema.get(ent) or {}).get("fields") or {}
        for k, rec in (recs or {}).items():
            if not isinstance(rec, dict):
                continue
            for f, tj in fields.items():
                v = rec.get(f)
                if v is None:
                    continue
                t = tj.get("inner", tj) if tj.get("type") == "optional" else tj
                doc = tj.get("doc") or t.get("doc") or ""
                bad = False
                if t.get("type") == "enum":
                    bad = v not in t.get("values", [])
                elif t.get("type") == "str" and isinstance(v, str) and doc_values(doc) and not set(doc_values(doc)) & set(fields):
                    bad = v not in doc_values(doc)  # (a doc listing field names, "either `a` or `b` is given", lists no values)
                elif t.get("type") in ("int", "float") and isinstance(v, (int, float)) and not isinstance(v, bool):
                    b = doc_bounds(doc)
                    bad = b is not None and not b[0] <= v <= b[1]
                if bad:
                    out.append(f"/{ent}/{k}/{f}={v!r}")
    return out


def _gold_states(module, world: dict, tasks: list[dict]) -> list[dict]:
    writes = getattr(module, "WRITES_STATE", {}) or {}
    out = []
    for t in tasks:
        if t.get("read_only"):
            continue
        env = module.Env(copy.deepcopy(world))
        for c in t["gold_calls"]:
            if writes.get(c["tool"]):
                env.step(c["tool"], copy.deepcopy(c["arguments"]))
        out.append(env.state)
    return out


def analyse(build: Path, src_name: str | None = None) -> list[dict]:
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
        leak = pipe = red = named = dict_n = final_n = undo_n = 0
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
            named += bool(lt or pp)
            if dictated(t):
                dict_n += 1
                examples.setdefault("dictated", ins[:160])
            if module is not None:
                red += redundant_writes(module, world, t)
                try:
                    f, u = write_defects(module, world, t)
                except Exception as e:  # noqa: BLE001 - a replay that raises is a finding, not a crash
                    f, u = 0, 1
                    examples.setdefault("replay", f"{type(e).__name__}: {e}"[:160])
                if f:
                    final_n += 1
                    examples.setdefault("final", ins[:160])
                if u:
                    undo_n += 1
                    examples.setdefault("undo", ins[:160])
        junk: set[str] = set()
        if module is not None:
            for st in [world] + _gold_states(module, world, tasks):
                junk.update(junk_values(module, st))
        if junk:
            examples.setdefault("junk", ", ".join(sorted(junk)[:3]))
        k = len(tasks)
        oracle = (rec.get("oracle") or {}).get("pass_rate")
        rows.append({"env": name, "tasks": k, "has_write": has_write, "tool_pct": round(100 * leak / k, 1) if k else 0.0,
                     "pipeline_pct": round(100 * pipe / k, 1) if k else 0.0, "redundant": red, "oracle": oracle,
                     "rejected": _rejected(rec), "examples": examples,
                     "family": family(src_name or build.name), "named_pct": round(100 * named / k, 1) if k else 0.0,
                     "dictated_pct": round(100 * dict_n / k, 1) if k else 0.0, "final": final_n, "undo": undo_n,
                     "junk": len(junk)})
    return rows


def _rejected(rec: dict) -> dict[str, int]:
    """Every rejection of an env by reason: the sampler's (scenario or walk), then the lowering's."""
    out: dict[str, int] = {}
    st = rec.get("stats", {}) or {}
    for d in (st.get("scenario_rejected") or {}, st.get("sampler_rejected") or {}, rec.get("rejected") or {}):
        for r, n in d.items():
            out[r] = out.get(r, 0) + n
    return out


def sources(broad: bool, sample: int | None, seed: int, examples: bool = True, corpus: bool = True) -> list[Path]:
    """The doc folders to compile: examples/, ../shared/corpus/*, and (--broad) ../shared/corpus-broad/*,
    all or a seeded random subset of about N, stratified by source family."""
    import random

    srcs = [ROOT / "examples"] if examples else []
    if corpus and CORPUS.is_dir():
        srcs += sorted(p for p in CORPUS.iterdir() if p.is_dir())
    if broad and BROAD.is_dir():
        b = sorted(p for p in BROAD.iterdir() if p.is_dir())
        if sample:  # stratified: each family (npm, pypi, bfcl, openapi) in proportion, at least one of each
            rng, picked = random.Random(seed), []
            fams = sorted({family(p.name) for p in b})
            for f in fams:
                mine = [p for p in b if family(p.name) == f]
                picked += rng.sample(mine, min(len(mine), max(1, round(sample * len(mine) / len(b)))))
            b = sorted(picked)
        srcs += b
    return srcs


def _compile_one(src: Path, out: Path, sampler: str, tasks: int, timeout: float) -> tuple[Path, Path | None, float, str]:
    b = out / src.name
    cmd = [sys.executable, "-m", "forgec", "compile", str(src), "-o", str(b), "--tasks", str(tasks), "-q"]
    if sampler:
        cmd += ["--sampler", sampler]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return src, None, time.perf_counter() - t0, f"timed out after {timeout:.0f} s"
    secs = time.perf_counter() - t0
    if r.returncode not in (0, 1) or not (b / "manifest.json").exists():
        return src, None, secs, f"rc {r.returncode}: {r.stdout[-300:]} {r.stderr[-300:]}"
    return src, b, secs, ""


def compile_all(out: Path, sampler: str, tasks: int, srcs: list[Path] | None = None, jobs: int = 1,
                timeout: float = 600) -> tuple[list[tuple[Path, str]], float]:
    """Compile each source (`jobs` at a time: the machine is shared, keep it small); (build, source name) pairs."""
    import concurrent.futures as cf

    srcs = srcs if srcs is not None else sources(False, None, 0)
    builds, total = [], 0.0
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        for src, b, secs, err in ex.map(lambda s: _compile_one(s, out, sampler, tasks, timeout), srcs):
            total += secs
            if b is None:
                print(f"compile {src.name} failed ({err})", file=sys.stderr)
                continue
            builds.append((b, src.name))
    return builds, total


def families(rows: list[dict]) -> list[dict]:
    """Rows summed per source family (percentages weighted by tasks)."""
    out: dict[str, dict] = {}
    for r in rows:
        f = out.setdefault(r["family"], {"env": r["family"], "sets": 0, "tasks": 0, "named": 0.0, "dictated": 0.0, "final": 0,
                                         "undo": 0, "redundant": 0, "junk": 0, "rejected": {}, "few": 0})
        f["sets"] += 1
        f["tasks"] += r["tasks"]
        f["named"] += r["named_pct"] * r["tasks"] / 100
        f["dictated"] += r["dictated_pct"] * r["tasks"] / 100
        for k in ("final", "undo", "redundant", "junk"):
            f[k] += r[k]
        f["few"] += bool(r["has_write"] and r["tasks"] < 50)
        for why, n in r["rejected"].items():
            f["rejected"][why] = f["rejected"].get(why, 0) + n
    res = []
    for f in out.values():
        n = f["tasks"]
        f["named_pct"] = round(100 * f.pop("named") / n, 1) if n else 0.0
        f["dictated_pct"] = round(100 * f.pop("dictated") / n, 1) if n else 0.0
        res.append(f)
    return sorted(res, key=lambda f: f["env"])


def _top(rej: dict[str, int], k: int = 3) -> str:
    return ", ".join(f"{r} {n}" for r, n in sorted(rej.items(), key=lambda x: (-x[1], x[0]))[:k])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sampler", default="", help="scenario or walk (default: the compiler's default)")
    ap.add_argument("--tasks", type=int, default=120)
    ap.add_argument("--build", nargs="*", type=Path, help="analyse these builds instead of compiling")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--examples", action="store_true", help="print one offending instruction per env")
    ap.add_argument("--broad", action="store_true", help="also compile ../shared/corpus-broad (all, or --sample N)")
    ap.add_argument("--sample", type=int, default=None, help="a seeded random subset of N broad doc sets")
    ap.add_argument("--seed", type=int, default=0, help="seed of --sample")
    ap.add_argument("--no-examples", action="store_true", help="leave out examples/ and ../shared/corpus")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="compiles at a time (the machine is shared: keep it small)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds one doc set may compile")
    ap.add_argument("--keep", type=Path, default=None, help="compile into this folder (kept) instead of a temporary one")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        secs = None
        builds = [(b, b.name) for b in (a.build or [])]
        if not builds:
            srcs = sources(a.broad, a.sample, a.seed, examples=not a.no_examples, corpus=not a.no_examples)
            out = a.keep or Path(tmp)
            out.mkdir(parents=True, exist_ok=True)
            builds, secs = compile_all(out, a.sampler, a.tasks, srcs, a.jobs, a.timeout)
        rows = [r for b, name in builds for r in analyse(b, name)]
    fams = families(rows)
    if a.json:
        print(json.dumps({"envs": rows, "families": fams}, indent=1))
        return 0
    print(f"{'env':44} {'tasks':>5} {'tool%':>5} {'pipe%':>5} {'named%':>6} {'dict%':>5} {'final':>5} {'undo':>4} {'redund':>6} "
          f"{'junk':>4} {'oracle':>6}  rejected (top)")
    for r in rows:
        o = "-" if r["oracle"] is None else f"{r['oracle']:.2f}"
        flag = " (<50)" if r["has_write"] and r["tasks"] < 50 else ""
        print(f"{r['env'][:44]:44} {r['tasks']:>5} {r['tool_pct']:>5.1f} {r['pipeline_pct']:>5.1f} {r['named_pct']:>6.1f} "
              f"{r['dictated_pct']:>5.1f} {r['final']:>5} {r['undo']:>4} {r['redundant']:>6} {r['junk']:>4} {o:>6}{flag}  {_top(r['rejected'])}")
        if a.examples:
            for k, v in r["examples"].items():
                print(f"    {k}: {v}")
    print()
    print(f"{'family':10} {'sets':>4} {'tasks':>6} {'named%':>6} {'dict%':>5} {'final':>5} {'undo':>4} {'redund':>6} {'junk':>5} {'<50':>4}  rejected (top)")
    for f in fams + ([_all(fams)] if len(fams) > 1 else []):
        print(f"{f['env']:10} {f['sets']:>4} {f['tasks']:>6} {f['named_pct']:>6.1f} {f['dictated_pct']:>5.1f} {f['final']:>5} {f['undo']:>4} "
              f"{f['redundant']:>6} {f['junk']:>5} {f['few']:>4}  {_top(f['rejected'], 5)}")
    if secs is not None:
        print(f"compile time (all sources, summed): {secs:.1f} s")
    return 0


def _all(fams: list[dict]) -> dict:
    n = sum(f["tasks"] for f in fams)
    rej: dict[str, int] = {}
    for f in fams:
        for r, c in f["rejected"].items():
            rej[r] = rej.get(r, 0) + c
    return {"env": "all", "sets": sum(f["sets"] for f in fams), "tasks": n,
            "named_pct": round(sum(f["named_pct"] * f["tasks"] for f in fams) / n, 1) if n else 0.0,
            "dictated_pct": round(sum(f["dictated_pct"] * f["tasks"] for f in fams) / n, 1) if n else 0.0,
            **{k: sum(f[k] for f in fams) for k in ("final", "undo", "redundant", "junk", "few")}, "rejected": rej}


if __name__ == "__main__":
    raise SystemExit(main())
