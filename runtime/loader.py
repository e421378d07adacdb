"""Load a `build/` folder: generated env modules, validated tasks, the manifest.

The runtime reads only `build/`. Env modules are imported from their file
(`importlib.util.spec_from_file_location`) under a private module name, so two
builds can be loaded side by side and nothing else from the build folder runs.
Problems with the build (missing, corrupt, another forgec version) raise
`BuildError`, whose message reads like a diagnostic; the CLI prints it without
a traceback.
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
from forgec.tasks import TASK_SCHEMA_VERSION, Task

# The manifest schema versions this runtime understands (the compiler writes
# `metadata.schema_version`). Additive manifest changes keep the major version.
SUPPORTED_MANIFEST_MAJOR = "1"


class BuildError(Exception):
    """The build folder cannot be used; `str(e)` is a complete, user-facing message."""

    def __init__(self, code: str, message: str, where: str = "", help: str = ""):
        if not help and code == "corrupt-build":  # docs/runtime.md: every BuildError says what to do
            help = "recompile with `forgec compile DOCS -o BUILD` (the build was changed or truncated by hand)"
        self.code, self.message, self.where, self.help = code, message, where, help
        text = f"error[{code}]: {message}"
        if where:
            text += f"\n --> {where}"
        if help:
            text += f"\n  = help: {help}"
        super().__init__(text)

    def diagnostic(self) -> Any:
        """The same problem as a `forgec.diagnostics.Diagnostic` (for the compiler and `forgec check`)."""
        from forgec.diagnostics import Span, error

        import re

        m = re.fullmatch(r"(.*):(\d+)", self.where or "")
        span = Span(m.group(1), int(m.group(2)), 1) if m else (Span(self.where) if self.where else None)
        return error(self.code, self.message, span, self.help)


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

    def __post_init__(self) -> None:
        self._by_id = {t.id: t for t in self.tasks}

    def task(self, task_id: str) -> Task:
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
                st = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise BuildError("corrupt-build", f"cannot read initial state of task {task.id!r}: {e}", str(p)) from None
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


def _import_env(name: str, path: Path, build_id: str) -> ModuleType:
    """Import a generated env module from its file under a unique private name."""
    modname = f"_forgec_build_{build_id}_{name}"
    if modname in sys.modules:
        return sys.modules[modname]
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None or spec.loader is None:
        raise BuildError("corrupt-build", f"cannot import environment {name!r}", str(path))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - any failure of a generated module is a build problem
        del sys.modules[modname]
        raise BuildError("corrupt-build", f"environment {name!r} failed to import: {type(e).__name__}: {e}", str(path),
                         help="recompile with `forgec compile`") from None
    for attr in ("Env", "TOOLS"):
        if not hasattr(mod, attr):
            del sys.modules[modname]
            raise BuildError("corrupt-build", f"environment {name!r} has no `{attr}`", str(path), help="recompile with `forgec compile`")
    return mod


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


def _read_tasks(path: Path) -> list[Task]:
    tasks = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise BuildError("corrupt-build", f"task line is not JSON: {e}", f"{path}:{lineno}") from None
            if isinstance(obj, dict) and obj.get("schema_version", TASK_SCHEMA_VERSION) != TASK_SCHEMA_VERSION:
                raise BuildError("build-version-mismatch",
                                 f"task schema version {obj.get('schema_version')!r} is not {TASK_SCHEMA_VERSION!r}",
                                 f"{path}:{lineno}", help="recompile with this forgec")
            try:
                tasks.append(Task.model_validate(obj))
            except ValidationError as e:
                first = e.errors()[0]
                loc = ".".join(str(x) for x in first.get("loc", ()))
                raise BuildError("corrupt-build", f"task does not match the task schema: {loc}: {first.get('msg')}",
                                 f"{path}:{lineno}", help="recompile with `forgec compile`") from None
    return tasks


def load(build_dir: str | Path) -> Build:
    """Load `build_dir`; raise `BuildError` (a diagnostic-like message) when it is unusable."""
    root = Path(build_dir)
    mpath = root / "manifest.json"
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

    envs: dict[str, ModuleType] = {}
    env_root = root / "envs"
    if env_root.is_dir():
        for d in sorted(p for p in env_root.iterdir() if p.is_dir()):
            f = d / "env.py"
            if f.is_file():
                envs[d.name] = _import_env(d.name, f, build_id)
    tasks: list[Task] = []
    task_root = root / "tasks"
    if task_root.is_dir():
        for f in sorted(task_root.glob("*.jsonl")):
            tasks.extend(_read_tasks(f))
    for t in tasks:
        if t.env not in envs:
            raise BuildError("corrupt-build", f"task {t.id!r} refers to environment {t.env!r}, which the build lacks",
                             str(task_root), help="recompile with `forgec compile`")
    tasks.sort(key=lambda t: t.id)
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[0]
        raise BuildError("corrupt-build", f"task id {dup!r} appears more than once", str(task_root))
    return Build(root=root, envs=envs, tasks=tasks, manifest=manifest)
