"""Differential measurement of forgec's synthesized τ-bench envs against τ-bench's hand-written tools (issue 20).

What: for each domain (retail, airline), every task's gold action sequence (the `actions` of the tasks in
τ-bench's `tasks*.py`, deduplicated by their action list) is replayed on BOTH

* the real tools (`tau_bench/envs/<domain>/tools/*.py`, `invoke(data, **kwargs)`) on a fresh deep copy of
  τ-bench's data (`{"users": ..., "orders": ..., ...}`, what its `data/__init__.py` loads), and
* the env forgec compiles from the tool docs (`<docs>/tau_bench_<domain>`) with
  `--state tau_bench_<domain>=<db.json>` (`bench_state.tau_world`: the same data as one db.json), loaded from
  the build's `envs/<env>/env.py` and reset to the build's `states/<env>.json` (the --state world mapped onto
  the entities; each task starts from a `fork()` of that env).

How a call is compared:

* **errors**: a real tool "rejects" a call when it returns a string starting with "Error" (or raises); the env
  rejects when `step` returns a `ToolError`. Both must agree.
* **state changes** (every call; what decides WRITE calls): the set of (collection, record key, field path) ->
  new value that the call changed, in τ-bench's layout. forgec keeps a --state world as
  `{"entities": {Entity: {key: record}}}`, the collections mapped onto entities by name
  (`userstate._match`: users -> User, orders -> Order, ...) and top-level fields renamed by `norm`; extra
  fields (the data's own, and the ones the synthesizer invented) are kept in the records. The env's changes
  are mapped back: entity -> collection, field -> τ's field name; an entity or field τ-bench does not have is
  reported under its own name (`<Certificate>`, `Order.reason`). Nested dicts are compared key by key;
  lists are compared whole (the path stops at the list). Wildcards: a record key the call created is
  `<new:i>` (i-th new key of that collection, in sorted order), a new id-like key inside a map is `<new:i>`
  too, a value equal to any of those new ids is `<new-id>`, and an ISO timestamp not in the call's
  arguments is `<timestamp>`. Numbers compare after rounding to 6 decimals (17 == 17.0).
  A call AGREES when both accept it and the env changes exactly the real tool's (collection, key, path)
  set to the same values, or both reject it and neither changes anything. `agree*` relaxes this by
  ignoring changes to fields τ-bench's data does not have (the env's own bookkeeping, e.g. `*_done` flags).
* **READ calls** (tools that never change the real data in the run): the fraction of scalar leaves of the
  real tool's output (parsed as JSON where it is JSON) that the env's output holds at the same path
  (dict keys compared by `norm`, list items by index) with an equal value; `anywhere`: whose value occurs
  anywhere in the env's output (a looser bound, for outputs of another shape).

A tool is WRITE when any of its real calls changed the data; for a READ tool, `agree` means the same
verdict (both accept or both reject) and no state change on either side. Once a task's two states diverge
(a call whose state changes disagreed), its later calls are still compared, from the diverged states; the
`clean agree` column counts only the calls made while the two states were still the same. Errors of one
call never stop the run (an env exception is an `internal` ToolError; a harness exception is recorded as a
disagreement of kind `harness error`).

Output: per domain, a table per tool (calls, agree, %, agree*, clean agree, errors real/env, read scalar
agreement), totals, env internal errors (crashes of generated code, with their forge file:line),
field coverage (of the distinct (collection, field path) — id-like path parts as `*` — that the real tools
change, how many the env ever changes at the same path), and the top disagreement reasons grouped by
tool + kind (missing field change, extra change, wrong value — with the fields of that kind in the call —,
env error + its message with values blanked, env accepted a rejected call), counted in calls, each with one
concrete example.

    python bench/tau_differential.py [--domain retail|airline] [--limit N] [--top 10] [--json FILE]
                                     [--repo-copies | --tau-root DIR --tau-data DIR --docs DIR]

Where τ-bench comes from (`configure`): by default `../shared/tau-bench` (every task file of both domains,
its data `tau_bench/envs/<domain>/data/*.json`) and `../shared/corpus` (the docs) when that copy is there
(`FORGEC_SHARED` names another shared folder); otherwise, or with `--repo-copies`, the repository's own
copies: `tests/corpus/tau_bench_code` (τ-bench's tools, both domains, and retail's `tasks_test.py` only —
so airline has no tasks there), `tests/corpus/tau_bench_data/<domain>/*.json.gz` and `tests/corpus/core`.
`--tau-root` (the folder holding `tau_bench/`), `--tau-data` (holding `<domain>/<name>.json[.gz]`) and
`--docs` (holding `tau_bench_<domain>/`) name each one explicitly.

Compiles into a fresh temporary directory every run (compile cache keys do not include forgec's source).
Used by tests/test_tau_differential.py.
"""

from __future__ import annotations

import argparse
import importlib
import json
import marshal
import os
import re
import sys
import tempfile
import time
import types
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

SHARED = Path(os.environ.get("FORGEC_SHARED") or REPO.parent / "shared")
# The repository's own copies (tests/corpus/README.md): τ-bench's tools + retail's tasks_test.py, its data
# gzip-compressed, and the tool docs.
REPO_TAU_ROOT = REPO / "tests" / "corpus" / "tau_bench_code"
REPO_TAU_DATA = REPO / "tests" / "corpus" / "tau_bench_data"
REPO_DOCS = REPO / "tests" / "corpus" / "core"
DOMAINS = ("retail", "airline")
# Set by `configure` (below, at import): the folder holding `tau_bench/`, its `tau_bench/envs`, the folder
# holding `<domain>/<name>.json[.gz]` (None: τ-bench's own `tau_bench/envs/<domain>/data/`), the docs folder.
TAU_ROOT: Path
TAU_ENVS: Path
TAU_DATA: Path | None
TAU_DOCS: Path
USE_WIKI = True  # compile the docs with τ-bench's wiki.md beside them (`--no-wiki`: the tool docs alone)
TAU_FILES = {"retail": ("users", "orders", "products"), "airline": ("users", "flights", "reservations")}

DELETED = "<deleted>"
_ABSENT = object()
_TS = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")

# ----------------------------------------------------------------------------------------------- τ-bench


def configure(root: Path | None = None, data: Path | None = None, docs: Path | None = None, *, repo: bool = False) -> None:
    """Where τ-bench's tools and tasks (`root`, holding `tau_bench/`), its data (`data`, holding
    `<domain>/<name>.json` or `.json.gz`; unset: `root`'s own `tau_bench/envs/<domain>/data`, or the repository's
    .json.gz copies where `root` has none)
    and the tool docs (`docs`, holding `tau_bench_<domain>/`) are read from. Unset ones: `../shared` (SHARED)
    when its τ-bench copy is there and `repo` is false, else the repository's copies."""
    global TAU_ROOT, TAU_ENVS, TAU_DATA, TAU_DOCS
    shared = not repo and (SHARED / "tau-bench" / "tau_bench" / "envs").is_dir()
    if root is None:
        root = SHARED / "tau-bench" if shared else REPO_TAU_ROOT
    if data is None and not any((Path(root) / "tau_bench" / "envs" / d / "data").is_dir() for d in DOMAINS):
        data = REPO_TAU_DATA  # a τ-bench copy without its data (the repository's): the .json.gz copies
    if docs is None:
        docs = SHARED / "corpus" if not repo and (SHARED / "corpus" / "tau_bench_retail").is_dir() else REPO_DOCS
    old = globals().get("TAU_ROOT")
    TAU_ROOT, TAU_ENVS = Path(root), Path(root) / "tau_bench" / "envs"
    TAU_DATA, TAU_DOCS = (Path(data) if data is not None else None), Path(docs)
    if old is not None and old != TAU_ROOT:  # another τ-bench: forget the modules imported from the old one
        for m in [m for m in sys.modules if m == "tau_bench" or m.startswith("tau_bench.")]:
            del sys.modules[m]
        if str(old) in sys.path:
            sys.path.remove(str(old))


configure()


def tau_data_dir(domain: str) -> Path:
    """The folder of the domain's data files (`<name>.json`, or `<name>.json.gz` in the repository's copy)."""
    return TAU_DATA / domain if TAU_DATA is not None else TAU_ENVS / domain / "data"


def _tau_import() -> None:
    """τ-bench importable: on sys.path, its packages `tau_bench`, `tau_bench.envs` and `tau_bench.envs.<domain>`
    without their `__init__`s (which import the agents, the Env classes, the LLM user simulator and the data
    loader — none of them needed here, and not in the repository's copy)."""
    if str(TAU_ROOT) not in sys.path:
        sys.path.insert(0, str(TAU_ROOT))
    for name, folder in [("tau_bench", TAU_ROOT / "tau_bench"), ("tau_bench.envs", TAU_ENVS),
                         *((f"tau_bench.envs.{d}", TAU_ENVS / d) for d in DOMAINS)]:
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg


def tau_tools(domain: str) -> dict[str, Any]:
    """Tool name -> the real `invoke(data, **kwargs)`."""
    _tau_import()
    mod = importlib.import_module(f"tau_bench.envs.{domain}.tools")
    return {cls.get_info()["function"]["name"]: cls.invoke for cls in mod.ALL_TOOLS}


def tau_data(domain: str) -> dict:
    """τ-bench's world of a domain, as its data/__init__.py loads it."""
    from bench_state import tau_db

    db = tau_db(domain, tau_data_dir(domain))
    return {n: db[n] for n in TAU_FILES[domain]}


def tau_tasks(domain: str) -> list[tuple[str, list[tuple[str, dict]]]]:
    """(task id, gold actions) of every task in tasks*.py (tasks_test first), deduplicated by the actions."""
    _tau_import()
    files = sorted((TAU_ENVS / domain).glob("tasks*.py"), key=lambda p: (p.stem != "tasks_test", p.stem))
    out, seen = [], set()
    for f in files:
        mod = importlib.import_module(f"tau_bench.envs.{domain}.{f.stem}")
        for name, val in vars(mod).items():
            if name.startswith("_") or not isinstance(val, list):
                continue
            for i, t in enumerate(val):
                if isinstance(t, dict):
                    acts = [(a["name"], a.get("kwargs", a.get("arguments", {}))) for a in t.get("actions", [])]
                elif hasattr(t, "actions"):
                    acts = [(a.name, a.kwargs) for a in t.actions]
                else:
                    continue
                sig = json.dumps(acts, sort_keys=True)
                if acts and sig not in seen:
                    seen.add(sig)
                    out.append((f"{f.stem}[{i}]", acts))
    return out


# ----------------------------------------------------------------------------------------------- forgec


@dataclass
class Forge:
    """A compiled env of a domain and the mapping of its state layout onto τ-bench's."""

    domain: str
    module: Any
    world: dict  # the build's states/<env>.json: the --state world in the env's layout
    ent_to_coll: dict[str, str]  # entity -> τ collection (unmapped entities: "<Entity>")
    renames: dict[str, dict[str, str]]  # τ collection -> norm(field) -> τ's field name
    build: Path
    # entity the world only nests -> (τ collection, the owner's field holding it, the record's link to its owner)
    lifted: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    compile_s: float = 0.0


def compile_forge(domain: str, root: Path, tasks_per_env: int = 1) -> Forge:
    """Compile the domain's docs with --state (τ-bench's db.json) into a fresh `root`; load the env."""
    from bench_state import tau_world
    from forgec.build import CompileOptions, compile_build
    from forgec.codegen import load_env_module
    from forgec.userstate import _match
    from forgec.wording import norm

    env = f"tau_bench_{domain}"
    root.mkdir(parents=True, exist_ok=True)
    state = tau_world(domain, root, data_dir=tau_data_dir(domain))
    out = root / "build"
    t0 = time.perf_counter()
    wiki = TAU_ENVS / domain / "wiki.md"  # the domain's policy page: its rules are read like the tool docs (issue 20)
    pages = [wiki] if USE_WIKI and wiki.is_file() else []
    res = compile_build(CompileOptions(inputs=[TAU_DOCS / env, *pages], out=out, tasks_per_env=tasks_per_env,
                                       oracle_check=False, states={env: state}))
    secs = time.perf_counter() - t0
    errs = [d for d in res.diagnostics if d.is_error]
    py = out / "envs" / env / "env.py"
    if errs or not py.is_file():
        raise RuntimeError(f"forgec compile of {env} failed: " + "; ".join(d.message[:300] for d in errs[:5]))
    module = load_env_module(py, name=f"forgec_tau_diff_{domain}_{abs(hash(str(root))) % 10**8}")
    world = json.loads((out / "states" / f"{env}.json").read_text())
    data = tau_data(domain)
    ents = list(module.SCHEMA["entities"])
    ent_to_coll = {}
    for c in data:
        e = _match(c, ents)
        if e is not None:
            ent_to_coll[e] = c
    lifted: dict[str, tuple[str, str, str]] = {}
    for e in ents:
        if e in ent_to_coll:
            continue
        for c, recs in data.items():  # a user's `payment_methods` keyed by id: the env lifts them into PaymentMethod
            owner = next((x for x, y in ent_to_coll.items() if y == c), None)
            nested = {f for r in recs.values() for f, v in r.items() if isinstance(v, dict) and v
                      and all(isinstance(x, dict) for x in v.values()) and _match(f, [e])}
            if owner and len(nested) == 1 and e not in lifted:
                lifted[e] = (c, nested.pop(), module.SCHEMA["entities"][owner]["key"])
    for e in ents:
        ent_to_coll.setdefault(e, f"<{e}>")
    renames = {c: {norm(f): f for r in recs.values() for f in r} for c, recs in data.items()}
    return Forge(domain, module, world, ent_to_coll, renames, out, compile_s=secs, lifted=lifted)


# ----------------------------------------------------------------------------------------------- diffs


def _num(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, dict):
        return {k: _num(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_num(x) for x in v]
    return v


def _id_like(k: Any) -> bool:
    return isinstance(k, str) and sum(ch.isdigit() for ch in k) >= 3


def _diff(b: Any, a: Any, path: tuple, out: dict, fresh: set) -> None:
    """Changes from `b` to `a` under `path` into `out` (path -> new value); new id-like map keys -> `<new:i>`."""
    if isinstance(a, dict) and (isinstance(b, dict) or b is _ABSENT):
        if b is _ABSENT:
            if not a:
                out[path] = {}
            for k, v in a.items():
                _diff(_ABSENT, v, path + (k,), out, fresh)
            return
        new = sorted(k for k in a if k not in b and _id_like(k))
        fresh.update(new)
        for k, v in a.items():
            if k not in b:
                _diff(_ABSENT, v, path + ((f"<new:{new.index(k)}>" if k in new else k),), out, fresh)
            elif v is not b[k] and _num(v) != _num(b[k]):
                _diff(b[k], v, path + (k,), out, fresh)
        for k in b:
            if k not in a:
                out[path + (k,)] = DELETED
        return
    if b is _ABSENT or _num(a) != _num(b):
        out[path] = _num(a)


def _wild(v: Any, fresh: set, args_text: str) -> Any:
    if isinstance(v, str):
        if v in fresh:
            return "<new-id>"
        if _TS.match(v) and v not in args_text:
            return "<timestamp>"
        return v
    if isinstance(v, dict):
        return {k: _wild(x, fresh, args_text) for k, x in v.items()}
    if isinstance(v, list):
        return [_wild(x, fresh, args_text) for x in v]
    return v


def collection_changes(before: dict, after: dict, args: dict) -> dict:
    """(collection, record key, field path) -> new value between two worlds in τ-bench's layout
    ({collection: {key: record}}), with the wildcards of the module docstring applied."""
    out: dict = {}
    fresh: set = set()
    raw: list = []
    for c in sorted(set(before) | set(after)):
        b, a = before.get(c, {}), after.get(c, {})
        new = sorted(k for k in a if k not in b)
        fresh.update(new)
        for k, rec in a.items():
            if k in new:
                key, old = f"<new:{new.index(k)}>", _ABSENT
            else:
                key, old = k, b[k]
                if rec is old or _num(rec) == _num(old):
                    continue
            part: dict = {}
            _diff(old, rec, (), part, fresh)
            raw.extend(((c, key, p), v) for p, v in part.items())
        for k in b:
            if k not in a:
                raw.append(((c, k, ()), DELETED))
    args_text = json.dumps(args)
    for key, v in raw:
        out[key] = _wild(v, fresh, args_text)
    return out


# ----------------------------------------------------------------------------------------------- sides


@dataclass
class Outcome:
    err: bool
    message: str  # the error message ('' when accepted)
    output: Any  # the parsed output (JSON where it is JSON)
    changes: dict  # collection_changes of the call
    internal: str = ""  # env: where an internal error happened (forge file:line)


class RealSide:
    """τ-bench's own tools on a fresh deep copy of its data per task."""

    def __init__(self, domain: str):
        self.domain = domain
        self.tools = tau_tools(domain)
        self._base = marshal.dumps(tau_data(domain))
        self.data: dict = {}
        self._prev: dict = {}

    def start(self) -> None:
        self.data = marshal.loads(self._base)
        self._prev = marshal.loads(self._base)

    def step(self, tool: str, args: dict) -> Any:
        """One real call (tests override this to plant a wrong side)."""
        fn = self.tools.get(tool)
        try:
            return fn(self.data, **args) if fn else f"Error: unknown tool {tool}"
        except Exception as e:  # noqa: BLE001 - τ-bench's Env.step turns an exception into "Error: ..."
            return f"Error: {e}"

    def call(self, tool: str, args: dict) -> Outcome:
        out = self.step(tool, json.loads(json.dumps(args)))
        changed = {c: {} for c in self.data}
        before = {c: {} for c in self.data}
        for c, coll in self.data.items():
            prev = self._prev.get(c, {})
            if coll == prev:
                continue
            for k in set(coll) | set(prev):
                if k not in prev or k not in coll or coll[k] != prev[k]:
                    if k in coll:
                        changed[c][k] = coll[k]
                    if k in prev:
                        before[c][k] = prev[k]
        ch = collection_changes(before, changed, args)
        for c, recs in changed.items():  # the snapshot follows the data
            for k in before[c]:
                self._prev[c].pop(k, None)
            for k, rec in recs.items():
                self._prev[c][k] = marshal.loads(marshal.dumps(rec))
        text = out if isinstance(out, str) else json.dumps(out)
        err = isinstance(out, str) and out.startswith("Error")
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = text
        return Outcome(err, text if err else "", None if err else parsed, ch)


class ForgeSide:
    """The compiled env; each task starts from a fork of the env reset to the --state world."""

    def __init__(self, forge: Forge):
        self.forge = forge
        self.base = forge.module.Env(forge.world)
        self.env = None

    def start(self) -> None:
        self.env = self.base.fork()

    def step(self, tool: str, args: dict) -> Any:
        """One env call (tests override this to plant a wrong env)."""
        return self.env.step(tool, args)

    def _tau_view(self, ents: dict, only: dict | None = None) -> dict:
        """Records of `ents` (entity -> {key: record}) in τ-bench's layout: collection names, field names."""
        out: dict = {}
        for e, recs in sorted(ents.items(), key=lambda kv: kv[0] in self.forge.lifted):  # owners first
            c = self.forge.ent_to_coll.get(e, f"<{e}>")
            ren = self.forge.renames.get(c, {})
            from forgec.wording import norm

            if e in self.forge.lifted:  # in τ-bench's layout: inside its owner, under the owner's field
                c, fld, back = self.forge.lifted[e]
                for k, r in recs.items():
                    if (only is None or k in only.get(e, ())) and isinstance(r, dict) and r.get(back) is not None:
                        inner = {f: v for f, v in r.items() if f != back}
                        out.setdefault(c, {}).setdefault(str(r[back]), {}).setdefault(fld, {})[k] = inner
                continue
            coll = out.setdefault(c, {})
            for k, r in recs.items():
                if only is not None and k not in only.get(e, ()):
                    continue
                coll[k] = {ren.get(norm(f), f): v for f, v in r.items()} if isinstance(r, dict) else r
        return out

    def call(self, tool: str, args: dict) -> Outcome:
        prev = self.env.fork()
        try:
            res = self.step(tool, json.loads(json.dumps(args)))
        except Exception as e:  # noqa: BLE001 - step catches tool bugs; anything else is still one call
            res = self.forge.module.ToolError(f"env raised {type(e).__name__}: {e}", "internal", internal=True)
        now, then = self.env.state, prev.state
        touched: dict = {}
        for e, coll in now["entities"].items():
            old = then["entities"].get(e, {})
            ks = {k for k, r in coll.items() if old.get(k) is not r} | {k for k in old if k not in coll}
            if ks:
                touched[e] = ks
        b = self._tau_view(then["entities"], touched)
        a = self._tau_view(now["entities"], touched)
        if now["globals"] != then["globals"]:
            b["<globals>"], a["<globals>"] = {"": dict(then["globals"])}, {"": dict(now["globals"])}
        ch = collection_changes(b, a, args)
        is_err = type(res).__name__ == "ToolError"
        if is_err:
            return Outcome(True, getattr(res, "message", str(res)), None, ch, getattr(res, "where", "") or "")
        return Outcome(False, "", json.loads(json.dumps(res, default=str)), ch)


# ----------------------------------------------------------------------------------------------- compare


def _leaves(v: Any, path: tuple = ()) -> dict:
    from forgec.wording import norm

    if isinstance(v, dict):
        out: dict = {}
        for k, x in v.items():
            out.update(_leaves(x, path + (norm(str(k)) if not _id_like(k) else k,)))
        return out
    if isinstance(v, list):
        out = {}
        for i, x in enumerate(v):
            out.update(_leaves(x, path + (i,)))
        return out
    return {path: _num(v)}


def read_agreement(real: Any, env: Any) -> tuple[int, int, int]:
    """(scalar leaves in the real output, how many the env output holds at the same path and equal, how many
    of their values the env output holds anywhere)."""
    rl, el = _leaves(real), _leaves(env)
    anywhere = {json.dumps(v) for v in el.values()}
    return (len(rl), sum(1 for p, v in rl.items() if p in el and el[p] == v),
            sum(1 for v in rl.values() if json.dumps(v) in anywhere))


def _gen(path: tuple) -> str:
    return ".".join("*" if _id_like(p) or str(p).startswith("<new") else str(p) for p in path)


def _short(v: Any, n: int = 110) -> str:
    s = v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)
    return s if len(s) <= n else s[: n - 3] + "..."


def _template(msg: str) -> str:
    """An error message with its values blanked, for grouping."""
    s = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", msg)
    return re.sub(r"#?\w*\d{3,}\w*", "…", s)[:140]


@dataclass
class Problem:
    kind: str  # missing field change | extra change | wrong value | env error | env accepted a rejected call | harness error
    what: str  # the grouping detail (collection.field path, or the error template)
    example: str
    env_only: bool = False  # a change to a field τ-bench's data does not have


def compare(real: Outcome, env: Outcome, known: dict[str, set]) -> list[Problem]:
    """Why the env's outcome differs from the real one ([] when the call agrees)."""
    ps: list[Problem] = []
    if real.err and not env.err:
        ps.append(Problem("env accepted a rejected call", _template(real.message), f"real: {_short(real.message)}"))
    elif env.err and not real.err:
        what = _template(env.message) + (f" (at {env.internal})" if env.internal else "")
        ps.append(Problem("env error", what, f"env: {_short(env.message, 200)}"))
    for key in sorted(set(real.changes) | set(env.changes), key=str):
        c, k, p = key
        loc = f"{c}.{_gen(p)}" if p else f"{c} record"
        env_only = c.startswith("<") or (bool(p) and p[0] not in known.get(c, set()))
        if key not in env.changes:
            ps.append(Problem("missing field change", loc, f"{c}[{k}].{'.'.join(map(str, p))}: real -> {_short(real.changes[key])}"))
        elif key not in real.changes:
            ps.append(Problem("extra change", loc, f"{c}[{k}].{'.'.join(map(str, p))}: env -> {_short(env.changes[key])}", env_only))
        elif real.changes[key] != env.changes[key]:
            ps.append(Problem("wrong value", loc, f"{c}[{k}].{'.'.join(map(str, p))}: real {_short(real.changes[key], 80)} "
                                                  f"vs env {_short(env.changes[key], 80)}"))
    return ps


_STATE_KINDS = ("missing field change", "extra change", "wrong value")


@dataclass
class CallRow:
    task: str
    index: int
    tool: str
    args: dict
    real_changed: bool
    problems: list[Problem]
    clean: bool  # the two states were still the same before this call (no earlier state disagreement in the task)
    leaves: tuple[int, int, int] = (0, 0, 0)  # read_agreement
    real_err: bool = False
    env_err: bool = False
    real_changes: dict = field(default_factory=dict)
    env_changes: dict = field(default_factory=dict)

    @property
    def agree(self) -> bool:
        return not self.problems

    @property
    def agree_relaxed(self) -> bool:
        return all(p.env_only for p in self.problems)


@dataclass
class Report:
    domain: str
    rows: list[CallRow] = field(default_factory=list)
    tasks: int = 0
    seconds: float = 0.0
    compile_s: float = 0.0
    env_changed_paths: set = field(default_factory=set)
    real_changed_paths: set = field(default_factory=set)

    @property
    def write_tools(self) -> set[str]:
        return {r.tool for r in self.rows if r.real_changed}


def run_domain(domain: str, real: RealSide, env: ForgeSide, tasks: list[tuple[str, list[tuple[str, dict]]]]) -> Report:
    """Replay every task's gold actions on both sides; one CallRow per call."""
    rep = Report(domain, tasks=len(tasks))
    known = {c: {f for r in recs.values() for f in r} for c, recs in marshal.loads(real._base).items()}
    t0 = time.perf_counter()
    for tid, actions in tasks:
        real.start()
        env.start()
        clean = True
        for i, (tool, args) in enumerate(actions):
            try:
                r = real.call(tool, args)
                e = env.call(tool, args)
                for c, k, p in r.changes:
                    known.setdefault(c, set()).update(p[:1])
                ps = compare(r, e, known)
                leaves = read_agreement(r.output, e.output) if not r.err and not e.err else (0, 0, 0)
                if not r.err and e.err:
                    leaves = (len(_leaves(r.output)), 0, 0)
                rep.real_changed_paths.update((c, _gen(p)) for c, _k, p in r.changes)
                rep.env_changed_paths.update((c, _gen(p)) for c, _k, p in e.changes)
                row = CallRow(tid, i, tool, args, bool(r.changes), ps, clean, leaves, r.err, e.err, r.changes, e.changes)
            except Exception as ex:  # noqa: BLE001 - the harness must go on
                row = CallRow(tid, i, tool, args, False, [Problem("harness error", f"{type(ex).__name__}: {_short(str(ex))}",
                                                                   f"{tid}#{i}")], clean)
            rep.rows.append(row)
            clean = clean and not any(p.kind in _STATE_KINDS or p.kind == "harness error" for p in row.problems)
    rep.seconds = time.perf_counter() - t0
    return rep


# ----------------------------------------------------------------------------------------------- report


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}" if b else "-"


def counterparts(rows: list[CallRow]) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(tool, collection, env field path) -> (collection, τ field path): a field the env keeps under another name.

    A pair holds when, in EVERY accepted call of the tool in which the env changed that path, the real tool
    changed the other path of the same record to an equal value (and the real tool never changed the env's
    path itself): `reason` <-> `cancel_reason` (the docs call the parameter `reason`; the name τ-bench's code
    stores it under is in neither the docs, the wiki nor the data). Found from the calls, never from a list."""
    seen: Counter = Counter()
    hits: dict[tuple, Counter] = defaultdict(Counter)
    for r in rows:
        if r.real_err or r.env_err:
            continue
        for (c, k, p), v in r.env_changes.items():
            if (c, k, p) in r.real_changes:
                continue
            key = (r.tool, c, _gen(p))
            seen[key] += 1
            for (c2, k2, q), v2 in r.real_changes.items():
                if c2 == c and k2 == k and q != p and (c2, k2, q) not in r.env_changes and v2 == v:
                    hits[key][(c, _gen(q))] += 1
    out = {}
    for key, n in seen.items():
        best = hits[key].most_common(1)
        if best and best[0][1] == n:
            out[key] = best[0][0]
    return out


def agrees_renamed(r: CallRow, pairs: dict) -> bool:
    """The call agrees once the env's fields with a counterpart are read under the real tool's names."""
    if r.real_err != r.env_err:
        return False
    ren = {}
    for (c, k, p), v in r.env_changes.items():
        q = pairs.get((r.tool, c, _gen(p)))
        hit = [key for key in r.real_changes if q and key[0] == c and key[1] == k and _gen(key[2]) == q[1]] if q else []
        ren[hit[0] if hit else (c, k, p)] = v
    return ren == r.real_changes


def summary(rep: Report) -> dict:
    w = rep.write_tools
    wr = [r for r in rep.rows if r.tool in w]
    rd = [r for r in rep.rows if r.tool not in w]
    cov = {(c, p) for c, p in rep.real_changed_paths if (c, p) in rep.env_changed_paths}
    pairs = counterparts(rep.rows)
    cov_renamed = cov | set(pairs.values()) & rep.real_changed_paths
    return {"domain": rep.domain, "tasks": rep.tasks, "calls": len(rep.rows),
            "write_calls": len(wr), "write_agree": sum(r.agree for r in wr), "write_agree_relaxed": sum(r.agree_relaxed for r in wr),
            "write_clean": sum(r.clean for r in wr), "write_clean_agree": sum(r.clean and r.agree for r in wr),
            "read_calls": len(rd), "read_agree": sum(r.agree for r in rd),
            "read_leaves": sum(r.leaves[0] for r in rd), "read_leaves_equal": sum(r.leaves[1] for r in rd),
            "read_leaves_anywhere": sum(r.leaves[2] for r in rd),
            "env_internal_errors": dict(internal_errors(rep)),
            "fields_real": len(rep.real_changed_paths), "fields_covered": len(cov),
            "fields_missed": sorted(f"{c}.{p}" for c, p in rep.real_changed_paths - cov),
            "write_agree_renamed": sum(agrees_renamed(r, pairs) for r in wr), "fields_covered_renamed": len(cov_renamed),
            "counterparts": sorted(f"{t}: {c}.{p} = {c2}.{q}" for (t, c, p), (c2, q) in pairs.items()),
            "seconds": rep.seconds, "compile_s": rep.compile_s}


def reasons(rep: Report, top: int = 10) -> list[tuple[int, str, str, str, str]]:
    """(calls, tool, kind, what, one example) of the most frequent disagreement reasons: a call's problems
    grouped by tool + kind; `what` is the error message (values blanked) or the call's fields of that kind."""
    cnt: Counter = Counter()
    ex: dict = {}
    for r in rep.rows:
        by: dict = defaultdict(list)
        for p in r.problems:
            by[p.kind].append(p)
        for kind, ps in by.items():
            whats = sorted({p.what for p in ps})
            key = (r.tool, kind, ", ".join(whats))
            cnt[key] += 1
            ex.setdefault(key, f"{r.task}#{r.index} {ps[0].example}" + (f" (+{len(ps) - 1} more)" if len(ps) > 1 else ""))
    return [(n, *k, ex[k]) for k, n in cnt.most_common(top)]


def internal_errors(rep: Report) -> Counter:
    """Env crashes (internal ToolErrors: a bug in generated code, with its forge file:line) and harness errors."""
    return Counter(f"{r.tool}: {p.what}" for r in rep.rows for p in r.problems
                   if p.kind == "harness error" or (p.kind == "env error" and "internal error" in p.example))


def render(rep: Report, top: int = 10) -> str:
    s = summary(rep)
    w = rep.write_tools
    by: dict = defaultdict(list)
    for r in rep.rows:
        by[r.tool].append(r)
    lines = [f"## {rep.domain}: {s['tasks']} tasks, {s['calls']} calls (compile {s['compile_s']:.1f} s, replay {s['seconds']:.1f} s)", "",
             "| tool | kind | calls | agree | % | agree* | clean agree | errors real/env | read scalars equal |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for tool in sorted(by, key=lambda t: (t not in w, t)):
        rs = by[tool]
        n, a = len(rs), sum(r.agree for r in rs)
        lv = sum(r.leaves[0] for r in rs), sum(r.leaves[1] for r in rs), sum(r.leaves[2] for r in rs)
        cl = [r for r in rs if r.clean]
        lines.append(f"| {tool} | {'write' if tool in w else 'read'} | {n} | {a} | {_pct(a, n)} | {sum(r.agree_relaxed for r in rs)} | "
                     f"{sum(r.agree for r in cl)}/{len(cl)} | {sum(r.real_err for r in rs)}/{sum(r.env_err for r in rs)} | "
                     + (f"{lv[1]}/{lv[0]} ({_pct(lv[1], lv[0])}%; anywhere {_pct(lv[2], lv[0])}%)" if tool not in w else "") + " |")
    lines += ["", f"**totals** write calls agreeing: {s['write_agree']}/{s['write_calls']} ({_pct(s['write_agree'], s['write_calls'])}%), "
              f"ignoring env-only fields {s['write_agree_relaxed']}/{s['write_calls']}, on clean states {s['write_clean_agree']}/{s['write_clean']}; "
              f"read calls agreeing {s['read_agree']}/{s['read_calls']}; read scalar agreement {s['read_leaves_equal']}/{s['read_leaves']} "
              f"({_pct(s['read_leaves_equal'], s['read_leaves'])}%; values found anywhere in the env's output "
              f"{_pct(s['read_leaves_anywhere'], s['read_leaves'])}%)",
              f"**env internal errors / harness errors** {sum(s['env_internal_errors'].values())}"
              + "".join(f"\n  {n:5d}  {k}" for k, n in Counter(s["env_internal_errors"]).most_common()),
              f"**field coverage** {s['fields_covered']}/{s['fields_real']} (collection, field path) the real tools change are ever changed by the env; "
              f"never: {', '.join(s['fields_missed']) or '-'}",
              f"**with counterparts** (a field the env keeps under another name, equal in every call: "
              f"{'; '.join(s['counterparts']) or 'none'}): write calls agreeing {s['write_agree_renamed']}/{s['write_calls']} "
              f"({_pct(s['write_agree_renamed'], s['write_calls'])}%), field coverage {s['fields_covered_renamed']}/{s['fields_real']}",
              "", f"top {top} disagreement reasons (calls, tool, kind, what — example):"]
    for n, tool, kind, what, e in reasons(rep, top):
        lines.append(f"  {n:5d}  {tool} | {kind} | {what}\n         e.g. {e}")
    return "\n".join(lines)


def measure(domain: str, root: Path, limit: int | None = None) -> Report:
    forge = compile_forge(domain, root / domain)
    tasks = tau_tasks(domain)[: limit or None]
    rep = run_domain(domain, RealSide(domain), ForgeSide(forge), tasks)
    rep.compile_s = forge.compile_s
    return rep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domain", choices=DOMAINS, action="append", help="retail or airline (default both)")
    ap.add_argument("--limit", type=int, default=0, help="the first N (deduplicated) tasks per domain")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--no-wiki", action="store_true", help="compile the tool docs alone, without the domain's wiki.md policy page")
    ap.add_argument("--json", type=Path, help="also write the summaries and reasons as JSON here")
    ap.add_argument("--repo-copies", action="store_true", help="read τ-bench from the repository's copies (tests/corpus), not ../shared")
    ap.add_argument("--tau-root", type=Path, help="the folder holding τ-bench's tau_bench/ (tools, tasks*.py)")
    ap.add_argument("--tau-data", type=Path, help="the folder holding <domain>/<name>.json[.gz] (default: the root's own data, "
                                                   "or tests/corpus/tau_bench_data with the repository's copies)")
    ap.add_argument("--docs", type=Path, help="the folder holding the tool docs tau_bench_<domain>/")
    a = ap.parse_args()
    configure(a.tau_root, a.tau_data, a.docs, repo=a.repo_copies)
    global USE_WIKI
    USE_WIKI = not a.no_wiki
    print(f"τ-bench from {TAU_ROOT}, data from {tau_data_dir('<domain>')}, docs from {TAU_DOCS}"
          f"{' with the domain wiki.md' if USE_WIKI else ' (no wiki)'}\n", flush=True)
    t0 = time.perf_counter()
    out = []
    with tempfile.TemporaryDirectory(prefix="forgec-tau-diff-") as d:
        for dom in a.domain or DOMAINS:
            if not tau_tasks(dom):
                print(f"note: no tasks*.py for {dom} in {TAU_ENVS / dom} (the repository's copy has retail's tasks_test.py only)")
            rep = measure(dom, Path(d), a.limit or None)
            print(render(rep, a.top), "\n", flush=True)
            out.append({**summary(rep), "reasons": reasons(rep, a.top)})
    print(f"total wall time {time.perf_counter() - t0:.1f} s")
    if a.json:
        a.json.write_text(json.dumps(out, indent=2, default=str))


if __name__ == "__main__":
    main()
