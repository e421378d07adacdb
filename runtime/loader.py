"""Load a `build/` folder: generated env modules, validated tasks, the manifest.

The runtime reads only `build/`. Env modules are imported from their file
(`importlib.util.spec_from_file_location`) under a private module name, so two
builds can be loaded side by side and nothing else from the build folder runs.
Problems with the build (missing, corrupt, another forgec version) raise
`BuildError`, whose message reads like a diagnostic; the CLI prints it without
a traceback.

Integrity: before anything from the build runs, every generated file the
runtime uses (`envs/<env>/env.py`, `states/<env>.json`, `tasks/<env>.jsonl`) is
read once and its SHA-256 compared with the manifest; a file that differs, is
missing, or is not in the manifest refuses the build (`corrupt-build`) unless
the caller passes `allow_modified_build=True`. Modules are executed from the
verified bytes, states parsed from them, so what was checked is what runs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import ValidationError

import forgec
from forgec.tasks import TASK_SCHEMA_VERSION, TASK_SCHEMA_VERSIONS, Task
from forgec.diagnostics import Span, error, render_full

# The manifest schema versions this runtime understands (the compiler writes
# `metadata.schema_version`). Additive manifest changes keep the major version.
SUPPORTED_MANIFEST_MAJOR = "1"


class BuildError(Exception):
    """The build folder cannot be used; `str(e)` is a complete, user-facing message."""

    def __init__(self, code: str, message: str, where: str = "", help: str = "", notes: tuple[str, ...] = ()):
        if not help and code == "corrupt-build":  # docs/runtime.md: every BuildError says what to do
            help = "recompile with `forgec compile DOCS -o BUILD` (the build was changed or truncated by hand)"
        self.code, self.message, self.where, self.help, self.notes = code, message, where, help, tuple(notes)

        d = self.diagnostic()
        super().__init__(render_full(d, sources={d.span.file: ""} if d.span else {}))  # no source line: build files are data

    def diagnostic(self) -> Any:
        """The same problem as a `forgec.diagnostics.Diagnostic` (for the compiler, `forgec check` and the CLI)."""
        import dataclasses
        import re


        m = re.fullmatch(r"(.*):(\d+)", self.where or "")
        span = Span(m.group(1), int(m.group(2)), 1) if m else (Span(self.where) if self.where else None)
        return dataclasses.replace(error(self.code, self.message, span, self.help), notes=self.notes)


@dataclass
class Build:
    """A loaded build: env modules by name, all tasks (sorted by id), the manifest."""

    root: Path
    envs: dict[str, ModuleType]
    tasks: list[Task]
    manifest: dict
    _state_cache: dict[str, dict] = field(default_factory=dict, repr=False)
    _by_id: dict[str, Task] = field(default_factory=dict, repr=False)
    _protos: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)
    _proto_text: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)
    _forks: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    modified: list[str] = field(default_factory=list)  # integrity problems accepted with allow_modified_build
    _blobs: dict[str, bytes] = field(default_factory=dict, repr=False)  # verified state bytes, parsed on first use
    policies: dict[str, str] = field(default_factory=dict)  # env -> its policy page(s) (envs/<env>/policy.md), verified
    _unrecorded: frozenset[str] = field(default_factory=frozenset, repr=False)  # state files checked by hash on use

    def __post_init__(self) -> None:
        self._by_id = {t.id: t for t in self.tasks}

    def task(self, task_id: str) -> Task:
        if not isinstance(task_id, str):
            raise BuildError("unknown-task", f"a task id is a string such as 'env/blueprint', not {type(task_id).__name__} {task_id!r:.60}",
                             str(self.root), help=f"task ids are <env>/<blueprint> from {self.root}/tasks/<env>.jsonl")
        try:
            return self._by_id[task_id]
        except KeyError:
            import difflib

            near = difflib.get_close_matches(task_id, list(self._by_id) + sorted(self.envs), n=3)
            hint = f"did you mean {', '.join(near)}? " if near else ""
            raise BuildError("unknown-task", f"no task {task_id!r} in this build", str(self.root),
                             help=f"{hint}give env names ({', '.join(sorted(self.envs))}) or task ids <env>/<blueprint> "
                                  f"from {self.root}/tasks/<env>.jsonl") from None

    def tasks_for(self, ids: list[str] | None) -> list[Task]:
        """The tasks named by `ids` (ids or env names), in build order; all when `ids` is None."""
        if not ids:
            return list(self.tasks)
        out, seen = [], set()
        for i in ids:
            picked = [t for t in self.tasks if t.env == i] if i in self.envs else [self.task(i)]
            for t in picked:
                if t.id not in seen:
                    seen.add(t.id)
                    out.append(t)
        return out

    def initial_state(self, task: Task) -> dict:
        """The task's initial state (inline, or from `initial_state_file`, read once and cached).

        Callers must not mutate it: `Env.reset` deep-copies its argument.
        """
        if task.initial_state is not None:
            return task.initial_state
        rel = task.initial_state_file
        if rel is None:
            raise BuildError("corrupt-build", f"task {task.id!r} has neither initial_state nor initial_state_file", str(self.root))
        st = self._state_cache.get(rel)
        if st is None:
            p = (self.root / rel).resolve()
            if not p.is_relative_to(self.root.resolve()):
                raise BuildError("corrupt-build", f"initial_state_file {rel!r} of task {task.id!r} points outside the build", str(self.root))
            try:
                blob = self._blobs.pop(rel, None)
                st = json.loads(blob if blob is not None else p.read_bytes())
            except (OSError, ValueError) as e:
                raise BuildError("corrupt-build", f"cannot read initial state of task {task.id!r}: {e}", str(p)) from None
            self._state_cache[rel] = st
        return st

    def world_state(self, env_name: str) -> dict:
        """states/<env>.json, the world every task of the env starts from (verified against the manifest when the
        build was loaded, parsed once, shared with `initial_state`); an empty world when the env records none."""
        rec = (self.manifest.get("envs", {}).get(env_name) or {}).get("state")
        rel = rec.get("path") if isinstance(rec, dict) else None
        if not isinstance(rel, str):
            return {"entities": {}, "globals": {}}
        st = self._state_cache.get(rel)
        if st is None:
            if not _inside(self.root, rel):
                raise BuildError("corrupt-build", f"the world state path {rel!r} of {env_name!r} points outside the build", str(self.root))
            blob = self._blobs.pop(rel, None)
            try:
                st = json.loads(blob if blob is not None else (self.root / rel).read_bytes())
            except (OSError, ValueError) as e:
                raise BuildError("corrupt-build", f"cannot read the world state of {env_name!r}: {e}", str(self.root / rel)) from None
            self._state_cache[rel] = st
        return st

    def new_env(self, env_name: str, task: Task | None = None) -> Any:
        """A fresh `Env` of `env_name`, reset to `task`'s initial state (empty state when no task).

        Building an env from a JSON state (canonicalize, sort, hash every record)
        costs milliseconds on realistic states, more than a whole oracle episode;
        so the first env built from each initial state is kept pristine (hash
        computed) and later ones are forks of it (see `_fork`).
        """
        mod = self.envs.get(env_name)
        if mod is None:
            raise BuildError("unknown-env", f"no environment {env_name!r} in this build", str(self.root),
                             help=f"environments: {', '.join(sorted(self.envs)) or '(none)'}")
        if task is None:
            return mod.Env()
        key = (env_name, task.initial_state_file or f"inline:{task.id}")
        proto = self._protos.get(key)
        if proto is None:
            proto = mod.Env(self.initial_state(task))
            if task.initial_state_file in self._unrecorded and proto.state_hash() != task.initial_state_hash:
                # a state file the manifest does not record is trusted only through the (verified) task's hash
                raise BuildError("corrupt-build", f"{task.initial_state_file} does not hash to the initial_state_hash of task {task.id!r}",
                                 str(self.root / task.initial_state_file))
            if not _forkable(proto):
                return proto
            proto.state_hash()  # cache record digests once; forks inherit them
            first = _fork(proto)
            if not _fork_agrees(first, mod.Env(self.initial_state(task))):
                _FORK_DISABLED.add(type(proto))
                return mod.Env(self.initial_state(task))
            self._protos[key] = proto
            self._proto_text[key] = _state_text(proto)
            return first
        if type(proto) in _FORK_DISABLED:
            return mod.Env(self.initial_state(task))
        n = self._forks[key] = self._forks.get(key, 0) + 1
        if n % 256 == 0 and _state_text(proto) != self._proto_text[key]:  # a fork leaked into the prototype
            _FORK_DISABLED.add(type(proto))
            del self._protos[key]
            return mod.Env(self.initial_state(task))
        return _fork(proto)

    def tools(self, env_name: str) -> list[dict]:
        return self.envs[env_name].TOOLS


_FORK_DISABLED: set[type] = set()
_REQUIRED_ATTRS = frozenset({"_C", "_G", "_state"})


def _forkable(env: Any) -> bool:
    try:
        from forgec.runtime.envrt import EnvBase
    except ImportError:  # pragma: no cover
        return False
    return (isinstance(env, EnvBase) and _REQUIRED_ATTRS <= set(vars(env)) and not getattr(env, "_undo", None)
            and type(env) not in _FORK_DISABLED)


def _copy2(v: Any) -> Any:
    """Copy a container and the containers directly inside it (the shape of EnvBase's bookkeeping)."""
    if isinstance(v, dict):
        return {k: (type(x)(x) if isinstance(x, (dict, list, set)) else x) for k, x in v.items()}
    if isinstance(v, (list, set)):
        return type(v)(type(x)(x) if isinstance(x, (dict, list, set)) else x for x in v)
    return v


def _fork(proto: Any) -> Any:
    """A copy of a pristine `EnvBase` env in O(records), keeping its cached record digests.

    Relies on the invariants `envrt.EnvBase` documents (and its own rollback
    relies on): records are mutated in place only after `_touch` snapshotted
    them, and nested containers are never mutated in place; so copying every
    collection and record one level deep isolates the fork from the prototype.
    Bookkeeping attributes (digests, id patterns, ...) are copied two levels deep.
    """
    fork = getattr(proto, "fork", None)
    if callable(fork):
        return fork()  # envrt's copy-on-write fork: O(collections), property-tested against snapshots
    new = object.__new__(type(proto))
    d = {k: _copy2(v) for k, v in vars(proto).items() if k not in _REQUIRED_ATTRS}
    C = {e: {k: dict(r) for k, r in coll.items()} for e, coll in proto._C.items()}
    G = dict(proto._G)
    d.update(_C=C, _G=G, _state={"entities": C, "globals": G})
    new.__dict__.update(d)
    return new


def _fork_agrees(fork: Any, fresh: Any) -> bool:
    """Checked once per initial state: the fork equals a freshly built env."""
    try:
        return fork.state == fresh.state and fork.state_hash() == fresh.state_hash()
    except Exception:  # noqa: BLE001
        return False


def _state_text(env: Any) -> str:
    return json.dumps(env.state, sort_keys=True, ensure_ascii=False)


def _import_env(name: str, path: Path, build_id: str, source: bytes) -> ModuleType:
    """Run a generated env module's (verified) source under a unique private name.

    The name includes the source hash, so a module edited after an earlier load
    in this process is never served from `sys.modules`.
    """
    modname = f"_forgec_build_{build_id}_{name}_{hashlib.sha256(source).hexdigest()[:12]}"
    if modname in sys.modules:
        return sys.modules[modname]
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None or spec.loader is None:
        raise BuildError("corrupt-build", f"cannot import environment {name!r}", str(path))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    try:
        exec(compile(source, str(path), "exec", dont_inherit=True), mod.__dict__)  # noqa: S102 - the bytes just verified
    except (Exception, SystemExit) as e:  # noqa: BLE001 - any failure of a generated module is a build problem (sys.exit too)
        del sys.modules[modname]
        raise BuildError("corrupt-build", f"environment {name!r} failed to import: {type(e).__name__}: {e}", str(path),
                         help="recompile with `forgec compile`") from None
    for attr in ("Env", "TOOLS"):
        if not hasattr(mod, attr):
            del sys.modules[modname]
            raise BuildError("corrupt-build", f"environment {name!r} has no `{attr}`", str(path), help="recompile with `forgec compile`")
    return mod


def _without_acts(schema: dict, param: str, gone: list[str]) -> dict:
    """A served tool's schema with the selector values of withheld acts left out."""
    import copy

    out = copy.deepcopy(schema)
    sel = out["function"]["parameters"]["properties"].get(param, {})
    if isinstance(sel.get("enum"), list):
        sel["enum"] = [v for v in sel["enum"] if v not in gone]
    return out


def _withhold(mod: ModuleType, dropped: Any) -> None:
    """Tools the compile dropped (failed verification, manifest `dropped_tools`) are not served:
    left out of `TOOLS` (what agents see) and of the env's dispatch (a call is `unknown-tool`).

    The module object is private to this build (its name holds a hash of the manifest), so the
    same list applies every time it is loaded; `WITHHELD_TOOLS` names them."""
    names = {n for n in dropped if isinstance(n, str)} if isinstance(dropped, list) else set()
    if not names:
        return
    withheld = sorted(names)
    wire = getattr(mod, "WIRE_NAMES", None) or {}
    cases = getattr(mod, "CASES", None) or {}
    names |= {wire[n] for n in names if n in wire and (wire[n] not in cases or set(cases[wire[n]]["tools"].values()) <= names)}  # `find-projects`
    for w, case in cases.items():  # an act withheld leaves its docs' tool served with the other acts
        gone = [v for v, t in case["tools"].items() if t in names]
        if gone and w not in names:
            mod.TOOLS = [_without_acts(t, case["param"], gone) if isinstance(t, dict) and t.get("function", {}).get("name") == w else t for t in mod.TOOLS]
    mod.TOOLS = [t for t in mod.TOOLS if not (isinstance(t, dict) and isinstance(t.get("function"), dict)
                                              and t["function"].get("name") in names)]
    env = getattr(mod, "Env", None)
    table = getattr(env, "_DISPATCH", None)
    if isinstance(table, dict) and names & set(table):
        env._DISPATCH = {k: v for k, v in table.items() if k not in names}
    mod.WITHHELD_TOOLS = withheld


def _check_manifest(manifest: Any, where: str) -> None:
    if not isinstance(manifest, dict) or not isinstance(manifest.get("metadata"), dict):
        raise BuildError("corrupt-build", "manifest.json has no `metadata` object", where, help="recompile with `forgec compile`")
    meta = manifest["metadata"]
    ver = meta.get("forgec_version")
    if ver != forgec.__version__:
        raise BuildError(
            "build-version-mismatch",
            f"this build was made by forgec {ver or '(unknown)'}, but this is forgec {forgec.__version__}",
            where,
            help="recompile the docs with this forgec: `forgec compile DOCS -o BUILD`",
        )
    sv = str(meta.get("schema_version", ""))
    if sv.split(".")[0] != SUPPORTED_MANIFEST_MAJOR:
        raise BuildError(
            "build-version-mismatch",
            f"build schema version {sv or '(missing)'} is not supported (this runtime reads {SUPPORTED_MANIFEST_MAJOR}.x)",
            where,
            help="recompile the docs with this forgec: `forgec compile DOCS -o BUILD`",
        )


def _read_tasks(path: Path, data: bytes) -> list[Task]:
    """Validated tasks of one tasks/<env>.jsonl, from the bytes `verify_files` read."""
    tasks = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BuildError("corrupt-build", f"task file is not UTF-8: {e}", str(path)) from None
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise BuildError("corrupt-build", f"task line is not JSON: {e}", f"{path}:{lineno}") from None
        if isinstance(obj, dict) and obj.get("schema_version", TASK_SCHEMA_VERSION) not in TASK_SCHEMA_VERSIONS:
            raise BuildError("build-version-mismatch",
                             f"task schema version {obj.get('schema_version')!r} is not one of "
                             f"{', '.join(TASK_SCHEMA_VERSIONS)} (this runtime writes {TASK_SCHEMA_VERSION})",
                             f"{path}:{lineno}", help="recompile with this forgec")
        try:
            tasks.append(Task.model_validate(obj))
        except ValidationError as e:
            first = e.errors()[0]
            loc = ".".join(str(x) for x in first.get("loc", ()))
            raise BuildError("corrupt-build", f"task does not match the task schema: {loc}: {first.get('msg')}",
                             f"{path}:{lineno}", help="recompile with `forgec compile`") from None
    return tasks


INTEGRITY_HELP = ("recompile with `forgec compile DOCS -o BUILD` (hand edits belong in src/ and blueprints/, which compile keeps); "
                  "or pass --allow-modified-build (the loader API: allow_modified_build=True) to use the files as they are")


@dataclass
class Integrity:
    """What `verify_files` found: the bytes of every generated file it read, and what differs from the manifest."""

    blobs: dict[str, bytes]  # path relative to the build -> bytes as read (once)
    problems: list[str]  # one line per file that differs, is missing or is not recorded
    modules: dict[str, str]  # env -> module path (recorded ones, and with allow_modified_build the unrecorded ones too)
    task_files: list[str]
    states: frozenset[str]  # recorded state files


def _record(rec: Any) -> tuple[str, str] | None:
    if isinstance(rec, dict) and isinstance(rec.get("path"), str) and isinstance(rec.get("hash"), str):
        return rec["path"], rec["hash"]
    return None


def _inside(root: Path, rel: str) -> bool:
    p = Path(rel)
    return not p.is_absolute() and ".." not in p.parts and (root / p).resolve().is_relative_to(root.resolve())


def _expected_files(root: Path, envs: dict) -> tuple[dict[str, tuple[str, str, str]], list[str]]:
    """path -> (sha256, env, kind) for the module/state/tasks records of every env; malformed records as problems."""
    want: dict[str, tuple[str, str, str]] = {}
    problems: list[str] = []
    for name in sorted(envs):
        rec = envs[name] if isinstance(envs[name], dict) else {}
        for kind in ("module", "state", "tasks", "policy"):
            if rec.get(kind) is None or (kind == "tasks" and isinstance(rec.get(kind), int)):
                continue  # nothing recorded (a hand-made fixture's task count is no record)
            r = _record(rec[kind])
            if r is None or not _inside(root, r[0]):
                problems.append(f"manifest.json: env {name!r}: the {kind} record is malformed or points outside the build")
                continue
            want[r[0]] = (r[1], name, kind)
    return want, problems


def _first_bad_line(data: bytes) -> str:
    """Where a changed task file stops being JSON Lines (a truncated copy is the common case); "" if every line parses."""
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if line.strip():
            try:
                json.loads(line)
            except ValueError as e:
                return f"; line {lineno} is not JSON ({e.msg} at column {e.colno}: truncated?)" if hasattr(e, "msg") else f"; line {lineno} is not JSON"
    return ""


def verify_files(root: Path, manifest: dict) -> Integrity:
    """Read each generated file the runtime uses once and compare its SHA-256 with manifest.json.

    Reports every file that differs from its record, every recorded file that is
    missing, and every env module or task file on disk the manifest does not
    record (an env added by hand). Sources (`src/`, `blueprints/`) are not
    checked: hand edits there are expected and the runtime does not read them.
    """
    envs = manifest.get("envs") if isinstance(manifest.get("envs"), dict) else {}
    want, problems = _expected_files(root, envs)
    blobs: dict[str, bytes] = {}
    for rel, (digest, name, kind) in sorted(want.items()):
        try:
            data = (root / rel).read_bytes()
        except FileNotFoundError:
            problems.append(f"{rel}: missing (the {kind} of env {name!r})")
            continue
        except OSError as e:
            problems.append(f"{rel}: unreadable: {e.strerror or e}")
            continue
        blobs[rel] = data
        if hashlib.sha256(data).hexdigest() != digest:
            problems.append(f"{rel}: differs from the SHA-256 in manifest.json (changed after compile)"
                            + (_first_bad_line(data) if kind == "tasks" else ""))
    modules = {name: rel for rel, (_, name, kind) in want.items() if kind == "module"}
    env_root = root / "envs"
    for d in sorted(p for p in env_root.iterdir() if p.is_dir()) if env_root.is_dir() else []:
        rel = f"envs/{d.name}/env.py"
        if (d / "env.py").is_file() and rel not in want:
            problems.append(f"{rel}: not in manifest.json (an environment forgec did not compile)")
            modules.setdefault(d.name, rel)
    task_files = sorted(rel for rel, (_, _, kind) in want.items() if kind == "tasks")
    for f in sorted((root / "tasks").glob("*.jsonl")) if (root / "tasks").is_dir() else []:
        rel = f"tasks/{f.name}"
        if rel not in want:
            problems.append(f"{rel}: not in manifest.json (tasks forgec did not write)")
            task_files.append(rel)
    states = frozenset(rel for rel, (_, _, kind) in want.items() if kind == "state")
    return Integrity(blobs, problems, modules, sorted(task_files), states)


def _read_blob(root: Path, rel: str, integ: Integrity) -> bytes | None:
    data = integ.blobs.get(rel)
    if data is None:
        try:
            data = (root / rel).read_bytes()
        except OSError:
            return None
    return data


def _check_states(root: Path, tasks: list[Task], integ: Integrity) -> list[str]:
    """Problems for state files tasks name that are missing (recorded ones were hashed already)."""
    out = []
    for rel in sorted({t.initial_state_file for t in tasks if t.initial_state_file}):
        if rel not in integ.blobs and rel not in integ.states:
            if not _inside(root, rel) or not (root / rel).is_file():
                out.append(f"{rel}: missing (the initial state of "
                           f"{sum(1 for t in tasks if t.initial_state_file == rel)} task(s))")
    return out


def _refuse(root: Path, problems: list[str]) -> BuildError:
    n = len(problems)
    return BuildError("corrupt-build", f"the build differs from what `forgec compile` wrote: {n} file{'s' if n != 1 else ''} "
                      "changed, missing or unknown", str(root / "manifest.json"), help=INTEGRITY_HELP,
                      notes=tuple(problems[:20]) + ((f"... and {n - 20} more",) if n > 20 else ()))


def load(build_dir: str | Path, *, allow_modified_build: bool = False) -> Build:
    """Load `build_dir`; raise `BuildError` (a diagnostic-like message) when it is unusable.

    Every generated file is verified against manifest.json first (see the module
    docstring); `allow_modified_build=True` uses the files as they are, keeps
    the problems in `Build.modified`, and drops tasks whose env or state is missing.
    """
    root = Path(build_dir)
    mpath = root / "manifest.json"
    from forgec.swap import recover_build; recover_build(root)  # noqa: E702 - a compile killed mid-swap
    if not root.is_dir():
        raise BuildError("missing-build", f"build folder {str(root)!r} does not exist", help="create it with `forgec compile DOCS -o BUILD`")
    if not mpath.is_file():
        raise BuildError("missing-build", f"{str(root)!r} is not a forgec build (no manifest.json)", str(root),
                         help="create it with `forgec compile DOCS -o BUILD`")
    try:
        raw = mpath.read_bytes()
        manifest = json.loads(raw)
    except (OSError, ValueError) as e:
        raise BuildError("corrupt-build", f"manifest.json is not valid JSON: {e}", str(mpath), help="recompile with `forgec compile`") from None
    _check_manifest(manifest, str(mpath))
    build_id = hashlib.sha256(str(root.resolve()).encode() + raw).hexdigest()[:12]
    integ = verify_files(root, manifest)
    if integ.problems and not allow_modified_build:
        raise _refuse(root, integ.problems)  # before any module of the build runs
    problems = list(integ.problems)

    envs: dict[str, ModuleType] = {}
    for name, rel in sorted(integ.modules.items()):
        data = _read_blob(root, rel, integ)
        if data is not None:
            envs[name] = _import_env(name, root / rel, build_id, data)
            rec = manifest["envs"].get(name) if isinstance(manifest.get("envs"), dict) else None
            _withhold(envs[name], rec.get("dropped_tools") if isinstance(rec, dict) else None)
    tasks: list[Task] = []
    for rel in integ.task_files:
        data = _read_blob(root, rel, integ)
        if data is not None:
            tasks.extend(_read_tasks(root / rel, data))
    problems += _check_states(root, tasks, integ)
    if len(problems) > len(integ.problems) and not allow_modified_build:
        raise _refuse(root, problems)
    tasks = _usable(root, tasks, envs, problems, allow_modified_build)
    tasks.sort(key=lambda t: t.id)
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[0]
        raise BuildError("corrupt-build", f"task id {dup!r} appears more than once", str(root / "tasks"))
    blobs = {rel: b for rel, b in integ.blobs.items() if rel in integ.states}
    policies = {}
    for name, rec in sorted((manifest.get("envs") or {}).items()):
        r = _record(rec.get("policy")) if isinstance(rec, dict) else None
        data = integ.blobs.get(r[0]) if r else None
        if data is not None:
            policies[name] = data.decode("utf-8", "replace")
    unrecorded = frozenset(t.initial_state_file for t in tasks if t.initial_state_file and t.initial_state_file not in integ.states)
    return Build(root=root, envs=envs, tasks=tasks, manifest=manifest, modified=problems, _blobs=blobs, _unrecorded=unrecorded,
                 policies=policies)


def _usable(root: Path, tasks: list[Task], envs: dict, problems: list[str], allow: bool) -> list[Task]:
    """Tasks whose env (and state file) exist; without `allow`, a task for a missing env refuses the build."""
    out = []
    for t in tasks:
        missing_state = t.initial_state_file is not None and any(p.startswith(f"{t.initial_state_file}: missing") for p in problems)
        if t.env not in envs and not allow:
            raise BuildError("corrupt-build", f"task {t.id!r} refers to environment {t.env!r}, which the build lacks",
                             str(root / "tasks"), help="recompile with `forgec compile`")
        if t.env in envs and not missing_state:
            out.append(t)
    return out


def record_files(build_dir: str | Path) -> None:
    """Record the SHA-256 of every env module, env state and task file in a hand-assembled build's manifest.json.

    For builds not made by `forgec compile` (test fixtures, train/toybuild.py),
    so they pass the integrity check; the compiler writes these records itself.
    """
    root = Path(build_dir)
    mpath = root / "manifest.json"
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    envs = manifest.setdefault("envs", {})

    def rec(rel: str) -> dict:
        return {"path": rel, "hash": hashlib.sha256((root / rel).read_bytes()).hexdigest()}

    for f in sorted((root / "envs").glob("*/env.py")):
        envs.setdefault(f.parent.name, {})["module"] = rec(f"envs/{f.parent.name}/env.py")
    for kind, pattern in (("tasks", "tasks/*.jsonl"), ("state", "states/*.json")):
        for f in sorted(root.glob(pattern)):
            if f.stem in envs:
                envs[f.stem][kind] = rec(f"{f.parent.name}/{f.name}")
    mpath.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
