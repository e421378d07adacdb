"""Verification of a generated env module (EnvFactory-style): run every tool and check it behaves.

For each tool, valid calls are generated against a seeded sample state
(`stdlib.values.generate_state`): entity parameters take existing keys, scalar
parameters prefer values that occur in the state under the same field name (so
searches and preconditions can succeed), enums are spread. Each call is checked:

* `step` never raises and never returns an *internal* ToolError (a bug in the tool);
* a result is JSON (canonical JSON round-trips) and is a copy, never an alias into
  the state; the incremental state hash equals a from-scratch hash;
* a failing call leaves the state hash unchanged (transactional);
* determinism: the same call on a copy of the same state gives the same result and hash;
* read/search kinds (and tools with WRITES_STATE false) never change the state;
  create/update/delete kinds (and actions that write) change it on at least one
  successful call;
* a key of an entity that does not exist, a missing required argument and a wrongly
  typed argument each give a (non-internal) ToolError with the state unchanged;
* half of the calls run on a second, small world, and one on an empty world (no records):
  code that assumes non-empty collections fails verification rather than an episode.

`python` tool bodies run only inside the OS sandbox (runtime/sandbox.py); where it is not
usable they are not run at all and the tool fails verification with the fix in its reason.

A tool that fails any check gets `verified: false` and the first failure as `reason`.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import Any

from forgec.lang import ast as A
from forgec.runtime import envrt
from forgec.runtime.envrt import ToolError
from forgec.stdlib.values import generate_state, generate_value
from forgec.stdlib.tree_state import is_tree_entity
from forgec.runtime import sandbox
from forgec.stdlib.sql_state import is_sql_entity

READ_KINDS = ("read", "search")
WRITE_KINDS = ("create", "update", "delete")


@dataclass
class ToolReport:
    tool: str
    kind: str
    writes_state: bool
    verified: bool = True
    reason: str | None = None
    calls: int = 0  # calls made (valid-argument calls, including their determinism replays? no: once each)
    errors: int = 0  # valid-argument calls that returned a (non-internal) ToolError
    successes: int = 0
    changed_state: int = 0
    nonempty_results: int = 0  # successful calls whose result is a non-empty list/object (searches that hit)
    where: str = ""  # .forge location of the tool (or of the failing statement)

    def fail(self, reason: str, where: str = "") -> None:
        if self.verified:
            self.verified = False
            self.reason = reason
            if where:
                self.where = where


@dataclass
class VerifyReport:
    env: str
    seed: int
    tools: list[ToolReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(t.verified for t in self.tools)

    def tool(self, name: str) -> ToolReport | None:
        return next((t for t in self.tools if t.tool == name), None)

    def by_kind(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for t in self.tools:
            d = out.setdefault(t.kind, {"tools": 0, "verified": 0})
            d["tools"] += 1
            d["verified"] += int(t.verified)
        return dict(sorted(out.items()))

    def to_json(self) -> dict:
        return {
            "env": self.env,
            "seed": self.seed,
            "ok": self.ok,
            "summary": {"tools": len(self.tools), "verified": sum(t.verified for t in self.tools), "by_kind": self.by_kind()},
            "tools": [asdict(t) for t in self.tools],
        }


# --------------------------------------------------------------------------- argument generation


class _Values:
    """Scalar values found in the state under each field name (so generated calls hit real data)."""

    def __init__(self, state: dict, schema: dict):
        self.by_name: dict[str, list] = {}
        self.keys: dict[str, list] = {}
        self.records: dict[str, list[dict]] = {}  # entity -> flattened scalar fields of each record
        for e, coll in (state.get("entities") or {}).items():
            kf = schema["entities"][e]["key"]
            self.keys[e] = [r[kf] for _, r in sorted(coll.items())]
            self.records[e] = [_flat(r) for _, r in sorted(coll.items())]
            for rec in coll.values():
                self._add(rec)
        self._add(state.get("globals") or {})

        self.sql_tables = {e: c for e, c in (state.get("entities") or {}).items() if is_sql_entity(schema["entities"].get(e, {}))}
        # keys under "<entity><key>" names too (`entityName`, `entity_names` for Entity.name): docs name a
        # record's key that way where the param is plain text (a batch delete that ignores unknown names)
        self.named_keys = {_squash(e + kf): self.keys.get(e, []) for e, d in schema["entities"].items() for kf in (d["key"],)}
        for k in self.by_name:
            self.by_name[k] = sorted(set(self.by_name[k]), key=lambda v: (type(v).__name__, v))

    def _add(self, rec: dict, depth: int = 0) -> None:
        if depth > 3:
            return
        for k, v in rec.items():
            if type(v) in (str, int, float, bool):
                self.by_name.setdefault(k, []).append(v)
            elif type(v) is dict:
                self._add(v, depth + 1)
            elif type(v) is list:
                for x in v:
                    if type(x) in (str, int, float):
                        self.by_name.setdefault(k, []).append(x)
                    elif type(x) is dict:
                        self._add(x, depth + 1)


def _squash(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _flat(rec: dict) -> dict:
    """A record's scalar fields, with those of nested records one level down (address.zip -> zip)."""
    out = {k: v for k, v in rec.items() if type(v) in (str, int, float, bool)}
    for v in rec.values():
        if type(v) is dict:
            for k2, v2 in v.items():
                if type(v2) in (str, int, float, bool) and k2 not in out:
                    out[k2] = v2
    return out


def _matches(v: Any, tj: dict) -> bool:
    t = tj.get("type")
    return (
        (t == "str" and type(v) is str)
        or (t == "int" and type(v) is int)
        or (t == "float" and type(v) in (int, float))
        or (t == "bool" and type(v) is bool)
        or (t == "enum" and envrt.in_enum(v, tuple(tj["values"])))
    )


def gen_value(tj: dict, name: str, rng: random.Random, vals: _Values, schema: dict, depth: int = 0, path: tuple = ()) -> Any:
    """A random argument of type `tj`; `path` holds the records it sits in: a recursive record
    nests at most twice (deeper: an empty list, or null), so generation ends."""

    t = tj.get("type")
    if tj.get("optional") and rng.random() < 0.1:
        return None
    if t == "ref":
        ks = vals.keys.get(tj["entity"]) or []
        return rng.choice(ks) if ks else None
    if t == "enum":
        return rng.choice(list(tj["values"]))
    if t == "list":
        n = rng.randint(1, 2)
        if tj["items"].get("type") == "ref":
            ks = vals.keys.get(tj["items"]["entity"]) or []
            return rng.sample(ks, min(n, len(ks)))
        if tj["items"].get("type") == "record" and path.count(tj["items"]["name"]) >= 2:
            return []
        # a list of names takes the values found under its singular (`files` -> `file`)
        item = name[:-1] if name.endswith("s") and name[:-1] in vals.by_name else name
        return [gen_value(tj["items"], item, rng, vals, schema, depth + 1, path) for _ in range(n)]
    if t in ("record", "object"):
        if t == "record" and path.count(tj["name"]) >= 2:
            return None
        fields = schema["records"][tj["name"]]["fields"] if t == "record" else tj["fields"]
        sub = path + (tj["name"],) if t == "record" else path
        out = {k: gen_value(ftj, k, rng, vals, schema, depth + 1, sub) for k, ftj in fields.items() if not (ftj.get("optional") and rng.random() < 0.3)}
        # a record argument whose scalar fields all occur together in one state record (an edge to remove:
        # source, target, label) copies that record's values most of the time, so it names something real
        scal = [k for k, ftj in fields.items() if ftj.get("type") in ("str", "int", "float", "bool", "ref")]
        like = [r for e in sorted(vals.records) for r in vals.records[e] if scal and all(k in r for k in scal)]
        if like and rng.random() < 0.7:
            pick = rng.choice(like)
            out.update({k: pick[k] for k in scal if k in out and _matches(pick[k], fields[k]) or (k in out and fields[k].get("type") == "ref")})
        return out
    if t == "str" and vals.sql_tables:  # a SQL statement over the state's tables (stdlib/sql_state.py)
        from forgec.stdlib.sql_state import sql_arg

        v = sql_arg(name, "", vals.sql_tables, rng)
        if v is not None:
            return v
    if t == "str" and _has_tree(schema) and rng.random() < 0.8:  # other envs draw exactly as before
        v = _tree_text(rng, vals, schema)
        if v is not None:
            return v
    if t in ("str", "int", "float", "bool"):
        seen = [v for v in vals.by_name.get(name, []) if _matches(v, tj)]
        if not seen:
            seen = [v for v in vals.named_keys.get(_squash(name), vals.named_keys.get(_squash(name).removesuffix("s"), [])) if _matches(v, tj)]
        if seen and rng.random() < 0.75:
            return rng.choice(seen)
        v = generate_value({"type": t}, name, rng)
        return float(v) if t == "float" else v
    return generate_value({"type": "str"}, name, rng)


def _has_tree(schema: dict) -> bool:

    return any(is_tree_entity(d) for d in schema["entities"].values())


def _tree_text(rng: random.Random, vals: _Values, schema: dict) -> str | None:
    """In a path-addressed tree (stdlib/tree_state.py's `is_tree_entity`), text arguments come from
    the tree whatever the docs call them (file_name, folder, source, oldText): an existing path, a
    new name in an existing directory, or a line of one of its files. None in other envs."""

    recs = [r for e, d in schema["entities"].items() if is_tree_entity(d) for r in vals.records.get(e, ())]
    paths = [r["path"] for r in recs if type(r.get("path")) is str]
    if not paths:
        return None
    # a line of the file an earlier argument of the same call named (edit_file(path, edits)), else of any file
    focus = [r for r in recs if r.get("path") == getattr(vals, "tree_focus", None) and r.get("kind") == "file"]
    pool = focus if focus and rng.random() < 0.8 else recs
    lines = sorted({ln for r in pool if r.get("kind") == "file" and type(r.get("content")) is str for ln in r["content"].split("\n") if ln.strip()})
    x = rng.random()
    if x < 0.4 or (x >= 0.75 and not lines):
        return rng.choice(paths)
    if x < 0.75:
        return rng.choice(paths).rstrip("/") + "/" + rng.choice(("notes", "draft", "archive", "summary.txt", "todo.md", "old"))
    return rng.choice(lines)


def _correlated(params: list[dict], rng: random.Random, vals: _Values) -> dict:
    """Scalar arguments taken together from one record of the entity whose fields best match the
    parameter names, so multi-field searches (origin + destination + date) find something."""
    scalars = {p["name"]: p["type"] for p in params if p["type"].get("type") in ("str", "int", "float", "bool", "enum", "ref")}
    if not scalars:
        return {}
    best, score = None, 0
    for e in sorted(vals.records):
        recs = vals.records[e]
        if not recs:
            continue
        n = sum(1 for name in scalars if name in recs[0])
        if n > score:
            best, score = e, n
    if best is None:
        return {}
    rec = rng.choice(vals.records[best])
    out = {}
    for name, tj in scalars.items():
        if name not in rec:
            continue
        v = rec[name]
        if tj.get("type") == "ref" and v in vals.keys.get(tj["entity"], ()):
            out[name] = v
        elif _matches(v, tj):
            out[name] = v
    return out


def gen_args(params: list[dict], rng: random.Random, vals: _Values, schema: dict) -> dict | None:
    """Valid arguments for a tool (None when a required entity has no records)."""
    args = {}
    together = _correlated(params, rng, vals) if rng.random() < 0.7 else {}
    vals.tree_focus = None  # the path an earlier argument named (see _tree_text)
    for p in params:
        tj = p["type"]
        if not p.get("required") and rng.random() < 0.35:
            continue
        if p["name"] in together:
            args[p["name"]] = together[p["name"]]
            if type(args[p["name"]]) is str:
                vals.tree_focus = args[p["name"]]
            continue
        v = gen_value(tj, p["name"], rng, vals, schema)
        if v is None and tj.get("type") == "ref":
            if p.get("required"):
                return None
            continue
        if v is None and not tj.get("optional") and not p.get("required"):
            continue
        args[p["name"]] = v
        if type(v) is str:
            vals.tree_focus = v
    return args


def _missing_key(tj: dict, vals: _Values) -> Any:
    ks = vals.keys.get(tj["entity"]) or []
    if ks and type(ks[0]) is int:
        return max(ks) + 1_000_003
    return "__no_such_" + tj["entity"].lower() + "__"


def _wrong_type(tj: dict) -> Any:
    t = tj.get("type")
    if t in ("int", "float", "bool"):
        return "not-a-number" if t != "bool" else "yes"
    if t == "list":
        return "not-a-list"
    return {"unexpected": ["object"]}


# --------------------------------------------------------------------------- checks


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, ToolError) or isinstance(b, ToolError):
        return isinstance(a, ToolError) and isinstance(b, ToolError) and a == b
    try:
        return envrt.canonical_json(a) == envrt.canonical_json(b)
    except (TypeError, ValueError):
        return False


def _where(module: ModuleType, err: ToolError) -> str:
    return getattr(err, "where", "") or ""


def _tool_where(env_decl: Any, name: str, module: ModuleType) -> str:
    t = env_decl.tool(name) if env_decl is not None else None
    sp = getattr(t, "span", None)
    if sp is not None and getattr(sp, "line", 0):
        return f"{getattr(module, 'FORGE_SOURCE', sp.file)}:{sp.line}"
    return getattr(module, "FORGE_SOURCE", "")


def _mutate(v: Any) -> bool:
    """Scribble on a result to prove it is not an alias of the state."""
    if type(v) is dict:
        for k in list(v):
            v[k] = "__scribbled__"
        v["__scribbled__"] = 1
        return True
    if type(v) is list:
        touched = False
        for x in v:
            touched = _mutate(x) or touched
        v.append("__scribbled__")
        return True
    return False


def _step(env: Any, tool: str, args: dict, rep: ToolReport, module: ModuleType, what: str) -> tuple[bool, Any]:
    try:
        r = env.step(tool, args)
    except BaseException as e:  # noqa: BLE001 - verification reports, never crashes
        if isinstance(e, KeyboardInterrupt):
            raise
        rep.fail(f"{what}: step raised {type(e).__name__}: {e} (args {envrt.short(args, 120)})")
        return False, None
    if isinstance(r, ToolError) and r.internal:
        rep.fail(f"{what}: {r.message} (args {envrt.short(args, 120)})", _where(module, r))
        return False, r
    return True, r


@dataclass
class _Run:
    """What one tool's verification carries between calls (see `verify_tool`)."""

    module: ModuleType
    tool: str
    rep: ToolReport
    rng: random.Random
    params: list
    base_env: Any
    small_env: Any
    small: dict | None
    cache: dict
    base_hash: str = ""
    vals: Any = None
    vals_age: int = 0
    scratch_after_step: int = 2  # from-scratch hashing is slow; a few checks per tool catch
    scratch_checks: int = 2  # aliasing and stale digests
    on_small: bool = False  # the calls now run on the small world: from-scratch hashes are cheap there
    last_err: str = ""
    requires: dict = field(default_factory=dict)  # param -> documented (field, op, value) its record must meet

    def values_of(self, e: Any) -> _Values:  # a pure function of the state: shared by equal states
        h = e.state_hash()
        v = self.cache.get(h)
        if v is None:
            if len(self.cache) > 256:
                self.cache.clear()
            v = self.cache[h] = _Values(e.state, self.module.SCHEMA)
        return v

    def next_args(self, env: Any) -> tuple[Any, dict | None]:
        """Valid arguments for the next call on `env` (a fresh fork when deletes used up the records)."""
        schema = self.module.SCHEMA
        if self.vals is None or self.vals_age > 4:  # refreshed now and then: stale keys only make calls fail
            self.vals, self.vals_age = self.values_of(env), 0
        args = gen_args(self.params, self.rng, self.vals, schema)
        if args is None:
            self.vals, self.vals_age = self.values_of(env), 0
            args = gen_args(self.params, self.rng, self.vals, schema)
        if args is None and env.state_hash() != self.base_hash:
            env = self.base_env.fork()  # earlier calls used up the records (deletes): start over
            self.vals, self.vals_age = self.values_of(env), 0
            args = gen_args(self.params, self.rng, self.vals, schema)
        if args is not None and self.requires:
            _meet_requires(args, self.params, self.requires, env.state, schema, self.rng)
        return env, args


def tool_requires(env_decl: Any, tool: str) -> dict[str, list[tuple[str, str, Any]]]:
    """The documented state a tool's key arguments must be in: `require p.f == "v"` (and `!=`,
    joined by `and`) at the top of its body, per param. Verification draws keys whose record
    meets them (when some does), so a tool that only acts on pending orders is tried on one."""
    out: dict[str, list[tuple[str, str, Any]]] = {}
    decl = next((t for t in getattr(env_decl, "tools", ()) if t.name == tool), None)
    if decl is None or not decl.body:
        return out

    def walk(c: Any) -> None:
        if isinstance(c, A.Binary) and c.op == "and":
            walk(c.left)
            walk(c.right)
        elif (isinstance(c, A.Binary) and c.op in ("==", "!=") and isinstance(c.right, A.Literal)
              and isinstance(c.left, A.Attr) and isinstance(c.left.obj, A.Name)):
            out.setdefault(c.left.obj.id, []).append((c.left.name, c.op, c.right.value))
        elif (isinstance(c, A.Binary) and c.op in ("<", "<=", ">", ">=") and isinstance(c.left, A.Name)
              and isinstance(c.right, A.Literal) and type(c.right.value) in (int, float)):
            out.setdefault(c.left.id, []).append(("", c.op, c.right.value))  # a documented bound on a number

    for st in decl.body:
        if isinstance(st, A.Require):
            walk(st.cond)
    return out


def _meet_requires(args: dict, params: list[dict], requires: dict, state: dict, schema: dict, rng: random.Random) -> None:
    """Swap a drawn key for one whose record meets the tool's documented requires (if any does)."""
    for p in params:
        name, tj = p["name"], p["type"]
        if name in args and name in requires and type(args[name]) in (int, float):
            args[name] = _within(args[name], requires[name], tj.get("type") == "int", rng)
            continue
        if name not in args or name not in requires or tj.get("type") != "ref":
            continue
        coll = (state.get("entities") or {}).get(tj["entity"]) or {}
        kf = schema["entities"][tj["entity"]]["key"]

        def meets(rec: dict) -> bool:
            return all((rec.get(f) == v) == (op == "==") for f, op, v in requires[name])

        cur = next((r for r in coll.values() if r.get(kf) == args[name]), None)
        if cur is not None and meets(cur):
            continue
        good = [r[kf] for _, r in sorted(coll.items()) if meets(r)]
        if good:
            args[name] = rng.choice(good)


def _within(v: int | float, bounds: list, integral: bool, rng: random.Random) -> int | float:
    """`v` when it meets the documented bounds, else a value drawn inside them."""
    lo = hi = None
    for f, op, b in bounds:
        if f != "":
            continue
        step = 1 if integral else 0.01
        if op in (">", ">="):
            b = b + step if op == ">" else b
            lo = b if lo is None else max(lo, b)
        elif op in ("<", "<="):
            b = b - step if op == "<" else b
            hi = b if hi is None else min(hi, b)
    if (lo is None or v >= lo) and (hi is None or v <= hi):
        return v
    lo2 = lo if lo is not None else (hi - 100 if hi is not None else 0)
    hi2 = hi if hi is not None else lo2 + 100
    if lo2 > hi2:
        return v  # no value meets them: the call fails as documented
    if integral:
        return rng.randint(int(-(-lo2 // 1)), int(hi2 // 1)) if int(-(-lo2 // 1)) <= int(hi2 // 1) else v
    return round(rng.uniform(lo2, hi2), 2)


def verify_tool(module: ModuleType, tool: str, base: dict, seed: int, calls: int, env_decl: Any = None, small: dict | None = None,
                *, base_env: Any = None, small_env: Any = None, values_cache: dict | None = None) -> ToolReport:
    """Verify one tool. `base_env`/`small_env` (envs on `base`/`small`, hashed) are forked instead of
    rebuilding an env from the state dicts for every tool (forks share records copy-on-write)."""
    kind = module.TOOL_KINDS.get(tool, "action")
    writes = bool(module.WRITES_STATE.get(tool, True))
    rep = ToolReport(tool, kind, writes, where=_tool_where(env_decl, tool, module))
    checked: set[str] = set()  # hashes of worlds whose from-scratch hash the caller checked
    if base_env is None:
        base_env = module.Env(base)
    elif small_env is not None:
        checked = {base_env.state_hash(), small_env.state_hash()}
    run = _Run(module, tool, rep, random.Random(f"forgec-verify:{seed}:{tool}"), module.TOOL_PARAMS.get(tool, []), base_env, small_env, small,
               values_cache if values_cache is not None else {}, base_env.state_hash(), requires=tool_requires(env_decl, tool))
    env = _valid_calls(run, calls, kind in WRITE_KINDS or (kind == "action" and writes))
    final_hash = env.state_hash()
    if rep.verified and final_hash not in checked and envrt.state_hash(env.state, getattr(env, "_LOG", ())) != final_hash:
        rep.fail("incremental state hash differs from a from-scratch hash after the calls")
    if rep.verified and (kind in WRITE_KINDS or (kind == "action" and writes)):
        if rep.successes == 0:
            rep.fail(f"no successful call in {rep.calls} attempts" + (f" (last error: {run.last_err})" if run.last_err else ""))
        elif rep.changed_state == 0:
            rep.fail(f"{kind} tool never changed the state in {rep.successes} successful calls")
    if rep.verified:
        _negative_checks(module, tool, run.params, base_env, run.rng, rep, run.values_of(base_env))
    return rep


def _valid_calls(run: _Run, calls: int, must_change: bool) -> Any:
    """The valid-argument calls (with their determinism replays); returns the env they ran on."""
    rep, module = run.rep, run.module
    env = run.base_env.fork()
    attempts = 0
    max_attempts = calls * 3 if must_change else calls
    while attempts < max_attempts and (attempts < calls or (must_change and rep.changed_state == 0)):
        attempts += 1
        run.vals_age += 1
        if run.small is not None and attempts == calls // 2 + 1:  # the second half runs on a small world
            env, run.vals = (run.small_env.fork() if run.small_env is not None else module.Env(run.small)), None
            run.on_small = True
        env, args = run.next_args(env)
        if args is None:
            rep.fail("no valid call: a required entity has no records in the sample state")
            break
        h0 = env.state_hash()
        # the same state, for the determinism replay: a fresh Env from a snapshot at first (no
        # instance state may matter; trusted: the snapshot is a private canonical copy of a state the
        # base env validated, so it is not validated and copied again), a fork (same state and hash
        # caches) afterwards
        # (on the small world when there is one: a fresh Env hashes every record, per tool)
        fresh_at = calls // 2 + 1 if run.small is not None and calls > 1 else 1
        twin = module.Env(env.snapshot(), trusted=True) if attempts == fresh_at else env.fork()
        ok, r = _step(env, run.tool, args, rep, module, "valid call")
        rep.calls += 1
        if not ok or not _check_call(run, env, args, r, h0) or not _check_replay(run, twin, args, r, env.state_hash()):
            break
    return env


def _check_call(run: _Run, env: Any, args: dict, r: Any, h0: str) -> bool:
    """Checks on one valid call's outcome (hashes, transactions, JSON results, kinds); False stops."""
    rep, kind = run.rep, run.rep.kind
    h1 = env.state_hash()
    if h1 != h0 and run.scratch_after_step > 0 and (run.small is None or run.on_small or run.rep.changed_state == 0):
        # from-scratch hashes walk the whole world: on a wide API's mid-sized world (170 tools, deep
        # records) they took most of a 15-minute compile; the small world checks the same code
        run.scratch_after_step -= 1
        if envrt.state_hash(env.state, getattr(env, "_LOG", ())) != h1:
            rep.fail("incremental state hash differs from a from-scratch hash after a call")
            return False
    if isinstance(r, ToolError):
        rep.errors += 1
        run.last_err = r.message
        if h1 != h0:
            rep.fail(f"a failing call changed the state (not transactional): {r.message}")
            return False
        return True
    rep.successes += 1
    if r not in (None, [], {}, ""):
        rep.nonempty_results += 1
    try:
        envrt.canonical_json(r)
    except (TypeError, ValueError) as e:
        rep.fail(f"result is not JSON: {e}")
        return False
    if h1 != h0:
        rep.changed_state += 1
        if kind in READ_KINDS:
            rep.fail(f"{kind} tool changed the state (args {envrt.short(args, 120)})")
            return False
        if not rep.writes_state:
            rep.fail("WRITES_STATE is false but the call changed the state")
            return False
    return True


def _check_replay(run: _Run, twin: Any, args: dict, r: Any, h1: str) -> bool:
    """Determinism (the same call on the same state) and results that are copies, not aliases."""
    rep = run.rep
    ok2, r2 = _step(twin, run.tool, args, rep, run.module, "replayed call")
    if not ok2:
        return False
    if not _same(r, r2) or twin.state_hash() != h1:
        rep.fail(f"not deterministic: the same call on the same state gave a different {'result' if not _same(r, r2) else 'state'}")
        return False
    # results are copies: scribbling on one must not reach the state
    if not isinstance(r, ToolError) and run.scratch_checks > 0 and (run.small is None or run.on_small) and _mutate(r2):
        run.scratch_checks -= 1
        if envrt.state_hash(twin.state, getattr(twin, "_LOG", ())) != h1:
            rep.fail("result aliases the state (mutating it changed the state)")
            return False
    return True


def _negative_checks(module: ModuleType, tool: str, params: list[dict], base_env: Any, rng: random.Random, rep: ToolReport, vals: _Values) -> None:
    env = base_env.fork()
    good = None
    for _ in range(5):
        good = gen_args([dict(p, required=True) for p in params], rng, vals, module.SCHEMA)
        if good is not None:
            break
    if good is None:
        return
    h0 = env.state_hash()
    cases = []
    for p in params:
        tj = p["type"]
        if tj.get("type") == "ref":
            cases.append((f"a missing {tj['entity']} key for {p['name']!r}", dict(good, **{p["name"]: _missing_key(tj, vals)})))
        if p.get("required"):
            cases.append((f"no {p['name']!r}", {k: v for k, v in good.items() if k != p["name"]}))
        if tj.get("type") not in ("any",):
            cases.append((f"a wrongly typed {p['name']!r}", dict(good, **{p["name"]: _wrong_type(tj)})))
    cases.append(("an unknown argument", dict(good, __unknown_argument__=1)))
    # the same valid-looking call on an empty world: a ToolError or a result, never a crash
    empty = module.Env()
    ok, r = _step(empty, tool, good, rep, module, "call on an empty state")
    if not ok:
        return
    for what, args in cases:
        ok, r = _step(env, tool, args, rep, module, f"call with {what}")
        if not ok:
            return
        if not isinstance(r, ToolError):
            rep.fail(f"a call with {what} succeeded; expected a ToolError")
            return
        if env.state_hash() != h0:
            rep.fail(f"a call with {what} changed the state")
            return


def _sandbox_refusal(module: ModuleType) -> str:
    """Why python bodies cannot be verified here ('' when the OS sandbox is usable or the user opted out)."""

    if not getattr(module, "PYTHON_TOOLS", None) or sandbox.unsafe_requested():
        return ""
    ok, why = sandbox.availability()
    if ok:
        return ""
    return f"{REFUSED}: {why}; or set {sandbox.UNSAFE_ENV}=1 (unsafe)"


REFUSED = "python body not run: the OS sandbox is unavailable"


def stale_refusal(verify_json: dict | None) -> bool:
    """True when a cached report refused python bodies for want of a sandbox that is usable now
    (or the user opted out since): the build must verify again instead of reusing it."""
    tools = (verify_json or {}).get("tools") or []
    if not any(str(t.get("reason") or "").startswith(REFUSED) for t in tools if isinstance(t, dict)):
        return False

    return sandbox.unsafe_requested() or sandbox.availability()[0]


def _tool_names(module: Any) -> list[str]:
    """The module's tools by their own names, in TOOLS order: a served name split into acts (`CASES`) is each act."""
    out: list[str] = []
    cases = getattr(module, "CASES", None) or {}
    for t in module.TOOLS:
        w = t["function"]["name"]
        out += list(cases[w]["tools"].values()) if w in cases else [envrt.tool_ident(module, w)]
    return out


def verify_env(module: ModuleType, env: Any = None, seed: int = 0, calls_per_tool: int = 20) -> VerifyReport:
    """Verify every tool of a generated module (see the module docstring); `env` (EnvDecl) adds locations."""

    # two sample worlds (a mid-sized and a small one); states round-trip through JSON exactly
    # as task files store them
    base = json.loads(envrt.canonical_json(generate_state(module.SCHEMA, seed=seed, size=12)))
    small = json.loads(envrt.canonical_json(generate_state(module.SCHEMA, seed=seed + 1, size=3)))
    report = VerifyReport(getattr(module, "ENV_NAME", ""), seed)
    # one validating build per world; every tool runs on forks of these (their from-scratch
    # hashes are checked once here, so a tool that leaves the state as it was needs no rehash)
    base_env, small_env = module.Env(base), module.Env(small)
    values_cache: dict = {}
    scratch_ok = {"base": base_env.state_hash() == envrt.state_hash(base_env.state, getattr(base_env, "_LOG", ())), "small": small_env.state_hash() == envrt.state_hash(small_env.state, getattr(small_env, "_LOG", ()))}
    refusal = _sandbox_refusal(module)
    for name in _tool_names(module):  # reported under the tool's own name (the manifest's)
        if refusal and name in (getattr(module, "PYTHON_TOOLS", None) or {}):
            rep = ToolReport(name, module.TOOL_KINDS.get(name, "action"), bool(module.WRITES_STATE.get(name, True)), where=_tool_where(env, name, module))
            rep.fail(refusal)  # never run a python body outside the OS sandbox, not even to verify it
            report.tools.append(rep)
            continue
        if not all(scratch_ok.values()):
            rep = ToolReport(name, module.TOOL_KINDS.get(name, "action"), bool(module.WRITES_STATE.get(name, True)), where=_tool_where(env, name, module))
            rep.fail("incremental state hash of a freshly built env differs from a from-scratch hash")
            report.tools.append(rep)
            continue
        report.tools.append(verify_tool(module, name, base, seed, calls_per_tool, env, small, base_env=base_env, small_env=small_env, values_cache=values_cache))
    return report


def render_table(reports: list[VerifyReport]) -> str:
    """A plain-text per-tool table and a per-kind summary (what `forgec verify` prints)."""
    rows = [("env", "tool", "kind", "writes", "verified", "calls", "errors", "reason")]
    for r in reports:
        for t in r.tools:
            rows.append((r.env, t.tool, t.kind, "yes" if t.writes_state else "no", "yes" if t.verified else "NO", str(t.calls), str(t.errors), t.reason or ""))
    widths = [max(len(row[i]) for row in rows) for i in range(7)]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(c.ljust(widths[j]) for j, c in enumerate(row[:7])) + "  " + row[7])
        if i == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 6)
    kinds: dict[str, list[int]] = {}
    for r in reports:
        for k, d in r.by_kind().items():
            kv = kinds.setdefault(k, [0, 0])
            kv[0] += d["tools"]
            kv[1] += d["verified"]
    lines.append("")
    lines.append("kind     tools  verified")
    total = [0, 0]
    for k in sorted(kinds):
        n, v = kinds[k]
        total[0] += n
        total[1] += v
        lines.append(f"{k:<8} {n:>5}  {v:>8}")
    pct = 100.0 * total[1] / total[0] if total[0] else 100.0
    lines.append(f"{'total':<8} {total[0]:>5}  {total[1]:>8}  ({pct:.1f}%)")
    return "\n".join(lines)
