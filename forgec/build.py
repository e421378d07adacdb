"""The compile driver: a tuple of stages per environment, run through one caching helper.

    synth -> check -> codegen+verify -> state -> sample -> lower -> oracle      (`STAGES`)

Each stage is a small function that reads the fields of `EnvJob` it declares (`needs`) and
sets the ones it produces (`gives`); `cached` is the only place that decides whether a
stage's previous output is reused (its content-hash key matches the previous manifest and
the file is intact) or recomputed. `compile_build` runs the stages per environment (in
parallel with `jobs`), never overwrites a `.forge` file the user edited, keeps a failed
environment's sources (hand edits included) in the new build, and writes the new build
beside the old one so that an interrupted compile leaves the previous build intact
(`forgec.swap` swaps it in at the end and recovers a swap cut short).
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime as _dt
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

from forgec import __version__
from forgec import diagnostics as D
from forgec.diagnostics import Diagnostic, Span
from forgec.lower import Rejected, lower_blueprint, sha256_text
from forgec.runtime.envrt import tool_ident
from forgec.manifest import (
    MANIFEST_SCHEMA_VERSION,
    BlueprintRecord,
    EnvRecord,
    FileRecord,
    Manifest,
    Metadata,
    ToolRecord,
    manifest_json_schema,  # noqa: F401 - re-exported
)
from forgec.swap import clean_dead, recover_build, swap_in  # noqa: F401 - recover_build re-exported
from forgec.toolmeta import portable_sources, toolmeta_stage

# Bumped whenever a stage's output for the same input changes, to invalidate caches.
PIPELINE_VERSION = f"{__version__}+15"  # +3: shapes, prose effects, log-only entities, the scenario sampler; +4: the quality gate; +5: realization by grammar, who asks; +6: values by meaning, single-read and dictated chains, no walk fallback; +7: no dictated chain kept, faithful tools; +8: create unless one exists, no dictated keys; +9: the guard fires; +10: pure tools take plain values; +11: nameless records get a name, filler values unsaid; +12: session params, partial updates, Options lists; +13: template cap, read-only properties never inputs; +14: Faker kinds, POSIX times, owner by changed records

T = TypeVar("T")

BAD_BLUEPRINT = D.define(
    "blueprint-rejected",
    "build",
    "A blueprint could not be lowered to a task (its gold run failed, was ambiguous or changed nothing).",
    why="Only blueprints whose gold end state is computed by actually running them become tasks.",
    wrong='call c = cancel_order(order_id: "o_does_not_exist")',
    right="call u = get_user_details(user_id: user.user_id)\ncall c = cancel_order(order_id: u.orders[0])",
    severity=D.Severity.WARNING,
)
ORACLE_FAILED = D.define(
    "oracle-failed",
    "build",
    "The oracle agent (gold calls replayed through the runtime) did not score 1.0 on a task.",
    why="Every emitted task must be solvable by replaying its gold calls; a failure means the build is inconsistent.",
)
ENV_FAILED = D.define(
    "env-failed",
    "build",
    "An environment could not be built; the other environments were still built.",
    why="One bad environment must not stop the others.",
)
SOURCES_KEPT = D.define(
    "env-sources-kept",
    "build",
    "An environment failed to build; its src/ and blueprints/ files from the previous build (hand edits included) were kept in the new build.",
    why="A failing compile must never delete a hand edit; the manifest marks the env as failed until it builds again.",
    severity=D.Severity.INFO,
)
STALE_EDIT = D.define(
    "edited-file-kept",
    "build",
    "A .forge file edited by hand was kept and recompiled instead of being regenerated.",
    why="Hand edits are the source of truth after synthesis and sampling.",
    severity=D.Severity.INFO,
)
DUPLICATE_TASK = D.define(
    "duplicate-blueprint",
    "build",
    "Two blueprint files of one environment declare the same blueprint name.",
    why="A task's id is <env>/<blueprint name>, so names must be unique per environment.",
    wrong="// a.forge\nblueprint rebook for airline { ... }\n// b.forge\nblueprint rebook for airline { ... }",
    right="// b.forge\nblueprint rebook_2 for airline { ... }",
)
NO_TOOLS = D.define(
    "no-sampleable-tools",
    "build",
    "No verified tool is left to sample tasks from in this environment.",
    why="Tools that fail verification are left out of sampling.",
    severity=D.Severity.WARNING,
)
CORRUPT_STATE = D.define(
    "state-regenerated",
    "build",
    "states/<env>.json was changed after compile and is not a JSON object (truncated, say); it was regenerated.",
    why="A hand-replaced state file holding a JSON object is the user's world and is validated; anything else is a "
    "derived file gone bad, rebuilt like envs/ and tasks/ (docs/contracts.md).",
    wrong='{"entities": {"User": {"u1": {"user_id": "u1", "na',
    right='{"entities": {"User": {"u1": {"user_id": "u1", "name": "Ada"}}}, "globals": {}}',
    severity=D.Severity.WARNING,
)
UNVERIFIED_TOOL = D.define(
    "tool-unverified",
    "build",
    "A tool failed verification (a valid call raised or timed out, a replay gave another result, a write changed "
    "nothing, ...); it is dropped: no task uses it and the runtime does not offer it to agents.",
    why="Verification calls every tool with generated valid and invalid arguments (`forgec verify` runs the same checks). "
    "A tool that fails them would hand an agent crashes or wrong results; the manifest lists it in `dropped_tools`.",
    wrong='tool boom(x: str) -> any "Explodes." python """\n    raise ValueError("nope")\n"""',
    right='tool echo(x: str) -> any "Echoes." python """\n    return x\n"""',
    severity=D.Severity.WARNING,
)
NOT_A_FILE = D.define(
    "blueprint-not-a-file",
    "build",
    "A path under blueprints/<env>/ ends in .forge but is not a regular file (a folder or a link); it is not compiled.",
    why="Only regular .forge files are blueprints; whatever the folder holds is carried into the new build unchanged.",
    wrong="build/blueprints/airline/drafts.forge/   (a folder)",
    right="build/blueprints/airline/drafts/",
    severity=D.Severity.WARNING,
)


@dataclass
class CompileOptions:
    inputs: list[Path]
    out: Path
    seed: int = 0
    state_size: int = 30
    tasks_per_env: int = 120
    min_calls: int = 3
    max_calls: int = 8
    jobs: int = 1
    synth: str = "rules"
    llm: Any = None  # forgec.synth.llm.LLMConfig
    env_name: str | None = None
    verify_calls: int = 20
    oracle_check: bool = True
    refine: str = "none"
    sampler: str = "scenario"  # scenario (intent-first user scenarios, forgec/scenario.py) or walk (AutoForge's walks)
    states: dict[str, Path] = field(default_factory=dict)  # --state ENV=FILE: the user's own initial worlds
    evolve: dict | None = None  # env -> rules of BUILD/evolve.json (forgec/evolve.py), read by compile_build

    def evolve_rules(self, env: str) -> list:
        """The env's `forgec evolve` rules ([] without any): part of the sample and lower cache keys."""
        return ((self.evolve or {}).get(env) or {}).get("rules") or []

    def output_options(self) -> dict:
        """Options that change outputs (recorded in the manifest, part of cache keys)."""
        return {
            "seed": self.seed,
            "state_size": self.state_size,
            "tasks_per_env": self.tasks_per_env,
            "min_calls": self.min_calls,
            "max_calls": self.max_calls,
            "synth": self.synth,
            "verify_calls": self.verify_calls,
            "refine": self.refine,
            "sampler": self.sampler,
        }


@dataclass
class EnvOutput:
    name: str
    files: dict[str, bytes] = field(default_factory=dict)  # relpath -> bytes
    record: EnvRecord | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    kept: int = 0  # files kept from the previous build when this env failed


@dataclass
class CompileResult:
    out: Path
    manifest: Manifest | None
    diagnostics: list[Diagnostic]
    envs: list[EnvOutput]

    @property
    def ok(self) -> bool:
        return not D.has_errors(self.diagnostics)

    @property
    def failed(self) -> list[EnvOutput]:
        """Envs that failed; their previous sources were kept in the build."""
        return [r for r in self.envs if r.record is not None and r.record.failed]


def _key(*parts: Any) -> str:
    return sha256_text(json.dumps(parts, sort_keys=True, default=str))


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def derive_seed(seed: int, *names: str) -> int:
    return int(sha256_text(json.dumps([seed, *names]))[:8], 16)


# --------------------------------------------------------------------------- previous build


@dataclass
class PrevEnv:
    """What the previous build has for one env, and which of its files the user edited."""

    root: Path
    record: EnvRecord
    _read: dict[str, bytes | None] = field(default_factory=dict, repr=False)  # each file is read once

    def read(self, rel: str) -> bytes | None:
        if rel not in self._read:
            self._read[rel] = self._read_file(rel)
        return self._read[rel]

    def _read_file(self, rel: str) -> bytes | None:
        from forgec.lang.confine import within

        p = self.root / rel
        if not within(p, [self.root]):  # a manifest path with `..`, or a symlink out of the build: never read (H5)
            return None
        try:
            return p.read_bytes() if p.is_file() else None
        except OSError:
            return None

    def intact(self, rec: FileRecord | None) -> bytes | None:
        """The file's bytes when they are exactly what forgec recorded (else None: rebuild it)."""
        data = self.read(rec.path) if rec is not None else None
        return data if data is not None and sha256_text(data) == rec.hash else None

    def edited(self, rec: FileRecord | None) -> bytes | None:
        """The file's bytes when they differ from what forgec recorded (a hand edit)."""
        if rec is None:
            return None
        data = self.read(rec.path)
        if data is not None and sha256_text(data) != rec.hash:
            return data
        return None


def _same_major(version: str) -> bool:
    return str(version).split(".")[0] == MANIFEST_SCHEMA_VERSION.split(".")[0]


def load_previous(out: Path) -> tuple[Manifest | None, list[Diagnostic]]:
    mp = out / "manifest.json"
    if not mp.is_file():
        return None, []
    try:
        m = Manifest.model_validate_json(mp.read_text(encoding="utf-8"))
    except Exception as e:  # noqa: BLE001 - a corrupt manifest means a cold build
        lines = str(e).splitlines()
        first = (lines[1].strip() if len(lines) > 1 else str(e)).split(" [type=")[0]
        return None, [D.warning("corrupt-build", f"previous manifest.json is unreadable ({first}); every .forge file under "
                                "blueprints/ is kept as a hand-added blueprint", Span(str(mp)),
                                help=f"src/<env>/env.forge files are kept as hand edits too; delete {out} to rebuild from scratch")]
    if not _same_major(m.metadata.schema_version):
        return None, []  # another major schema: a cold build (every .forge file is kept as the user's)
    return m, []


def _user_blueprints(out: Path, env: str, known: set[str], diags: list[Diagnostic], carried: dict[str, bytes]) -> dict[str, bytes]:
    """`.forge` files the user added to build/blueprints/<env>/ (not recorded by forgec).

    Every other file under blueprints/<env>/ and src/<env>/ (notes, sub-folders, a folder
    named `x.forge`) is put in `carried`: the new build holds it unchanged.
    """
    from forgec.lang.check import link_outside
    from forgec.lang.confine import within

    d = out / "blueprints" / env
    found = {}
    for sub in (d, out / "src" / env):
        carried.update(_files_under(out, sub, skip=lambda rel: _is_blueprint_rel(rel, env) or rel == f"src/{env}/env.forge"))
    if not d.is_dir():
        return found
    for p in sorted(d.glob("*.forge")):
        rel = f"blueprints/{env}/{p.name}"
        if p.is_file() and not p.is_symlink():
            if rel not in known:
                try:
                    found[rel] = p.read_bytes()
                except OSError as e:
                    diags.append(D.warning(NOT_A_FILE, f"cannot read {rel}: {e.strerror}; it is not compiled", Span(str(p))))
            continue
        if p.is_symlink() and p.is_file() and not within(p, [out]):  # the rule and diagnostic of `forgec check`
            diags.append(link_outside(p))
            continue
        what = "a folder" if p.is_dir() and not p.is_symlink() else "a link or special file"
        diags.append(D.warning(NOT_A_FILE, f"{rel} is {what}, not a blueprint file; it is not compiled", Span(str(p)),
                               help="rename it so it does not end in .forge; a folder's files are carried into the new build"))
    return found


def _is_blueprint_rel(rel: str, env: str) -> bool:
    head = f"blueprints/{env}/"
    return rel.startswith(head) and "/" not in rel[len(head):] and rel.endswith(".forge")


def _files_under(root: Path, d: Path, skip: Callable[[str], bool] = lambda rel: False) -> dict[str, bytes]:
    """Regular files under `d` (no links followed), keyed by their path relative to `root`; `skip(rel)` ones unread."""
    found: dict[str, bytes] = {}
    if not d.is_dir() or d.is_symlink():
        return found
    for dirpath, dirnames, filenames in os.walk(d):
        dirnames.sort()
        base = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for fn in sorted(filenames):
            rel = f"{base}/{fn}"
            if skip(rel):
                continue
            p = os.path.join(dirpath, fn)
            if os.path.isfile(p) and not os.path.islink(p):
                try:
                    with open(p, "rb") as f:
                        found[rel] = f.read()
                except OSError:
                    pass
    return found


# --------------------------------------------------------------------------- the caching helper


def _diag_json(d: Diagnostic, out: Path) -> dict:
    """A diagnostic as stored in the manifest: paths inside the build are relative (builds stay relocatable)."""
    j = d.to_json()
    prefix = str(out) + os.sep
    if j["span"] and j["span"]["file"].startswith(prefix):
        j["span"]["file"] = "$BUILD/" + j["span"]["file"][len(prefix):]
    elif j["span"] and os.path.isabs(j["span"]["file"]):  # a doc given by absolute path: no absolute path in the manifest
        j["span"]["file"] = portable_sources([j["span"]["file"]])[0]
    return j


def _diag_from_json(j: dict, out: Path) -> Diagnostic:
    s = j.get("span")
    span = None
    if s:
        f = s["file"]
        if f.startswith("$BUILD/"):
            f = str(out / f[len("$BUILD/"):])
        span = Span(f, s.get("line", 0), s.get("col", 0), s.get("end_line", 0), s.get("end_col", 0), s.get("pointer", ""))
    return Diagnostic(D.Severity(j["severity"]), j["code"], j["message"], span, j.get("help", ""), tuple(j.get("notes", ())))


def from_cache(job: "EnvJob", slot: str, key: str, prev_key: str | None, reuse: Callable[[], T | None]) -> T | None:
    """The previous output for `slot` when `prev_key == key` and `reuse` can read it intact, else None.

    A hit replays the diagnostics the output was computed with, so an incremental build
    reports what a fresh one does.
    """
    if prev_key is None or prev_key != key:
        return None
    got = reuse()
    if got is None:
        return None
    old = job.pr.diagnostics.get(slot, []) if job.pr else []
    job.out.diagnostics.extend(_diag_from_json(j, job.opts.out) for j in old)
    if old:
        job.rec.diagnostics[slot] = list(old)
    return got


def remember(job: "EnvJob", slot: str, diags: list[Diagnostic]) -> None:
    """Record the diagnostics a recomputed output produced (replayed when it is reused)."""
    if diags:
        job.rec.diagnostics[slot] = [_diag_json(d, job.opts.out) for d in diags]


def cached(job: "EnvJob", stage: str, key: str, reuse: Callable[[], T | None], compute: Callable[[], T]) -> T:
    """Reuse-or-recompute for one stage: the one place the cache protocol is written."""
    job.rec.keys[stage] = key
    hit = from_cache(job, stage, key, job.pr.keys.get(stage) if job.pr else None, reuse)
    if hit is not None:
        return hit
    n = len(job.out.diagnostics)
    val = compute()
    remember(job, stage, job.out.diagnostics[n:])
    return val


# --------------------------------------------------------------------------- one environment: the stages


class EnvFailed(Exception):
    """A stage found that this env cannot be built; its diagnostics are already recorded."""


@dataclass
class EnvJob:
    """What the stages of one env share: inputs, the record being built, and each stage's product."""

    ir: Any
    opts: CompileOptions
    prev: PrevEnv | None
    user_files: dict[str, bytes]
    out: EnvOutput
    rec: EnvRecord
    src_text: str | None = None  # synth
    env_mod: Any = None  # check
    env_decl: Any = None  # check
    env_types: Any = None  # check: the checker's EnvTypes of env_decl (the typed AST), read by codegen and lower
    module: Any = None  # codegen+verify
    scratch: Path | None = None  # codegen+verify
    world: dict | None = None  # state
    base_env: Any = None  # state
    init_hash: str | None = None  # state
    diff_world: dict | None = None  # state: what gold diffs are taken against (base_env's, when equal to `world`)
    bp_files: dict[str, tuple[bytes, str]] | None = None  # sample: rel -> (bytes, origin)
    task_lines: list[tuple[str, str]] | None = None  # lower

    @property
    def name(self) -> str:
        return self.ir.name

    @property
    def pr(self) -> EnvRecord | None:
        return self.prev.record if self.prev else None

    @property
    def src_rel(self) -> str:
        return f"src/{self.ir.name}/env.forge"


@dataclass(frozen=True)
class Stage:
    """One compile stage: `run(job)` reads the `needs` fields of the job and sets the `gives` ones."""

    name: str
    run: Callable[[EnvJob], None]
    needs: tuple[str, ...]
    gives: tuple[str, ...]


def synth_stage(job: EnvJob) -> None:
    """ir.Environment -> `.forge` text of the env; a hand-edited env.forge wins over synthesis."""
    opts, rec = job.opts, job.rec
    world = opts.states.get(job.name)
    key = _key("synth", PIPELINE_VERSION, rec.ir_hash, opts.synth, *([_file_key(world)] if world else []))
    edited = _edited_src(job)
    if edited is not None:
        rec.keys["synth"] = key
        text = edited.decode("utf-8", errors="replace")
        rec.src_origin = "edited"
        job.out.diagnostics.append(D.info(STALE_EDIT, f"keeping hand-edited {job.src_rel}", Span(job.src_rel)))
    else:
        def reuse() -> str | None:
            data = job.prev.read(job.pr.src.path) if job.pr.src else None
            return data.decode("utf-8", errors="replace") if data is not None else None

        text = cached(job, "synth", key, reuse, lambda: _synthesize(job))
    src_bytes = text.encode("utf-8")
    job.out.files[job.src_rel] = src_bytes
    rec.src = FileRecord(path=job.src_rel, hash=sha256_text(src_bytes))
    job.src_text = text


def _edited_src(job: EnvJob) -> bytes | None:
    """The user's env.forge: edited since forgec wrote it, marked edited before, or never recorded."""
    pr = job.pr
    if pr is not None and pr.src is not None:
        if pr.src_origin == "edited":
            return job.prev.read(pr.src.path)  # stays edited until the user deletes it
        return job.prev.edited(pr.src)
    p = job.opts.out / job.src_rel  # no record (new env, unreadable manifest): a file already there is the user's
    try:
        return p.read_bytes() if p.is_file() and not p.is_symlink() else None
    except OSError:
        return None


def _synthesize(job: EnvJob) -> str:
    from forgec import lang
    from forgec.lang import ast as A
    from forgec.synth import synthesize

    opts = job.opts
    decl, sd = synthesize(job.ir, backend=opts.synth, llm=opts.llm, cache_dir=opts.out.parent / ".forgec-cache")
    job.out.diagnostics.extend(sd)
    path = opts.states.get(job.name)
    if path is not None:  # the user's world shapes what the tools write (forgec/synth/world.py)
        from forgec.synth.world import bind_world
        from forgec.userstate import read_doc

        doc, _ = read_doc(path)  # its diagnostics are the state stage's to report
        if doc is not None:
            decl = bind_world(decl, doc.data)
    return lang.format(A.Module(file=job.src_rel, items=(decl,)))


def check_stage(job: EnvJob) -> None:
    """`.forge` text -> the parsed, checked env declaration and its types; errors stop this env.
    The only check of the env in a compile: later stages read `env_types` instead of checking again."""
    from forgec import lang
    from forgec.lang.check import check_typed

    env_mod, pd = lang.parse(job.src_text, str(job.opts.out / job.src_rel))
    cd, typed = check_typed([env_mod]) if not D.has_errors(pd) else ([], None)
    job.out.diagnostics.extend(pd + cd)
    if D.has_errors(pd + cd) or not env_mod.envs:
        job.out.diagnostics.append(D.error(ENV_FAILED, f"environment {job.name!r} does not check; not built", Span(job.src_rel)))
        raise EnvFailed
    job.env_mod, job.env_decl = env_mod, env_mod.envs[0]
    et = typed.envs.get(job.env_decl.name)
    job.env_types = et if et is not None and et.env is job.env_decl else lang.EnvTypes(job.env_decl)


def codegen_stage(job: EnvJob) -> None:
    """Checked env -> envs/<env>/env.py, loaded, with every tool verified by calling it."""
    from forgec.codegen import emit_env

    opts, rec = job.opts, job.rec
    key = _key("codegen", PIPELINE_VERSION, rec.src.hash, opts.verify_calls, opts.seed)

    def reuse() -> tuple[bytes, dict] | None:
        from forgec.codegen.verify import stale_refusal

        data = job.prev.intact(job.pr.module)
        return (data, job.pr.verify) if data is not None and not stale_refusal(job.pr.verify) else None

    def compute() -> tuple[bytes, dict]:
        from forgec.codegen.verify import verify_env

        data = emit_env(job.env_decl, job.src_rel, et=job.env_types).encode("utf-8")
        _load_module(job, data)
        report = verify_env(job.module, job.env_decl, seed=derive_seed(opts.seed, job.name, "verify"), calls_per_tool=opts.verify_calls)
        return data, report.to_json()

    mod_bytes, verify_json = cached(job, "codegen", key, reuse, compute)
    if job.module is None:
        _load_module(job, mod_bytes)
    rec.verify = verify_json
    reports = _tool_reports(verify_json)
    for t in job.env_decl.tools:
        r = reports.get(t.name, {})
        rec.tools[t.name] = ToolRecord(
            kind=r.get("kind") or getattr(job.module, "TOOL_KINDS", {}).get(t.name, "action"),
            writes_state=bool(r.get("writes_state", getattr(job.module, "WRITES_STATE", {}).get(t.name, False))),
            verified=bool(r.get("verified", False)),
            reason=r.get("reason"),
        )
    rec.dropped_tools = sorted(t for t, r in rec.tools.items() if not r.verified)
    _write_policy(job)
    _warn_refused_python(job)
    _warn_unverified(job)


def _policy_text(job: EnvJob) -> str:
    """The env's policy pages as one text ("" with none): what policy.md holds and the sampler reads."""
    return "\n\n".join(p.text.strip() for p in job.ir.policy) if job.ir is not None else ""


def _write_policy(job: EnvJob) -> None:
    """The docs' policy pages -> envs/<env>/policy.md (recorded and hashed like the module): the prose the agent's
    system prompt carries at eval time (runtime.episode.agent_system_prompt), as tau-bench gives its wiki."""
    text = _policy_text(job)
    if not text:
        return
    data = (text + "\n").encode("utf-8")
    rel = f"envs/{job.name}/policy.md"
    job.out.files[rel] = data
    job.rec.policy = FileRecord(path=rel, hash=sha256_text(data))


def _warn_unverified(job: EnvJob) -> None:
    """One warning per tool that failed verification (and was run: refused python bodies have their own)."""
    from forgec.codegen.verify import REFUSED

    spans = {t.name: t.span for t in job.env_decl.tools}
    for name, r in sorted(job.rec.tools.items()):
        if r.verified or (r.reason or "").startswith(REFUSED):
            continue
        why = r.reason or "no reason recorded"
        why = why if len(why) <= 400 else why[:400] + "..."
        span = spans.get(name)
        job.out.diagnostics.append(D.warning(
            UNVERIFIED_TOOL, f"tool {name!r} of {job.name!r} failed verification and is dropped (not sampled, not served): {why}",
            span if span is not None and span.line else Span(job.src_rel),
            help=f"`forgec verify {job.opts.out} --env {job.name}` shows every check; fix the tool in {job.src_rel}"))


def _warn_refused_python(job: EnvJob) -> None:
    """One warning per env whose python tools were not run for want of the OS sandbox (docs/security.md)."""
    from forgec.codegen.verify import REFUSED
    from forgec.runtime.codes import SANDBOX_UNAVAILABLE

    refused = {t: r.reason for t, r in job.rec.tools.items() if (r.reason or "").startswith(REFUSED)}
    if refused:
        names, why = ", ".join(sorted(refused)), next(iter(refused.values()))[len(REFUSED) + 2:]
        job.out.diagnostics.append(D.warning(SANDBOX_UNAVAILABLE, f"python tools of {job.name!r} not run and dropped ({names}): {why}", Span(job.src_rel)))


def _load_module(job: EnvJob, data: bytes) -> None:
    from forgec.codegen import load_env_module

    mod_rel = f"envs/{job.name}/env.py"
    job.out.files[mod_rel] = data
    job.rec.module = FileRecord(path=mod_rel, hash=sha256_text(data))
    job.scratch = _scratch_dir(job.opts.out, job.name)
    path = job.scratch / "env.py"
    path.write_bytes(data)
    job.module = load_env_module(path, name=f"forgec_build_{job.name}_{job.rec.module.hash[:12]}")


def state_stage(job: EnvJob) -> None:
    """Env module -> states/<env>.json, the world every blueprint starts from; a corrupt file is regenerated,
    a user's own (`--state`, or a hand-replaced JSON object) is validated and used (forgec/userstate.py)."""
    from forgec.stdlib.values import generate_state

    opts, rec = job.opts, job.rec
    key = _key("state", PIPELINE_VERSION, rec.src.hash, opts.seed, opts.state_size)

    def reuse() -> dict | None:
        data = job.prev.intact(job.pr.state)
        try:
            return json.loads(data) if data is not None else None
        except ValueError:
            return None

    given = _given_state(job, key)
    world = given if given is not None else cached(
        job, "state", key, reuse, lambda: generate_state(job.module.SCHEMA, seed=derive_seed(opts.seed, job.name, "state"), size=opts.state_size))
    state_rel = f"states/{job.name}.json"
    state_bytes = (_canon(world) + "\n").encode("utf-8")
    job.out.files[state_rel] = state_bytes
    rec.state = FileRecord(path=state_rel, hash=sha256_text(state_bytes))
    job.world = json.loads(state_bytes)  # exactly what the runtime will load
    job.base_env = job.module.Env(job.world)  # each blueprint runs on a fork of it (no re-validation)
    job.init_hash = job.base_env.state_hash()
    # A fork shares every record it does not write with base_env, so a gold diff against base_env's state
    # skips unchanged records by identity: O(writes) per blueprint instead of O(state) (bench/bench_state.py)
    job.diff_world = job.base_env.state if job.base_env.state == job.world else job.world


def _file_key(path: Any) -> str:
    """A cache key part for a user's file: its content hash (its path when it cannot be read)."""
    p = Path(path)
    return sha256_text(p.read_bytes()) if p.is_file() else str(path)


def _given_state(job: EnvJob, key: str) -> dict | None:
    """The user's world: `--state ENV=FILE`, else a hand-replaced states/<env>.json (kept under the
    generated key, so it survives recompiles); validated like any input, errors fail the env."""
    from forgec.userstate import load_doc, load_state

    path = job.opts.states.get(job.name)
    if path is None:
        data = job.prev.edited(job.pr.state) if job.prev else None
        doc = _hand_state(job, data)
        if doc is None:  # absent, or corrupt (not a JSON object: truncated, say): regenerated
            return None
        job.rec.keys["state"] = key
        loaded = load_doc(job.module.SCHEMA, doc)
    else:
        job.rec.keys["state"] = _key("state", PIPELINE_VERSION, "user", _file_key(path))
        loaded = load_state(job.module.SCHEMA, path)
    job.out.diagnostics.extend(loaded.diagnostics)
    if loaded.world is None:
        raise EnvFailed(f"state {path}")
    return loaded.world


def _hand_state(job: EnvJob, data: bytes | None) -> Any:
    """A hand-replaced states/<env>.json, parsed (a `userstate` Doc), when it is a JSON object; else None.

    docs/contracts.md: one that is not a JSON object (a truncated or otherwise corrupt file) is a
    derived file gone bad and is regenerated, with a warning when it looked like a hand edit."""
    from forgec.userstate import read_doc

    if data is None or not data.lstrip().startswith(b"{"):
        return None
    rel = f"states/{job.name}.json"
    doc, diags = read_doc(job.opts.out / rel, data.decode("utf-8", "replace"))
    if doc is not None and isinstance(doc.data, dict):
        return doc
    why = diags[0].message if diags else "not a JSON object"
    job.out.diagnostics.append(D.warning(CORRUPT_STATE, f"{rel} was changed and is no longer a JSON object ({why}); regenerated",
                                         Span(str(job.opts.out / rel)),
                                         help="a world of your own goes in as a whole JSON object (or with --state ENV=FILE)"))
    return None


def sample_stage(job: EnvJob) -> None:
    """Module + world -> blueprint files: the user's (edited or added) always, sampled ones reused or resampled."""
    opts, rec, pr = job.opts, job.rec, job.pr
    key = _key("sample", PIPELINE_VERSION, rec.module.hash, rec.state.hash, sorted(rec.dropped_tools), opts.output_options(),
               *([opts.evolve_rules(job.name)] if opts.evolve_rules(job.name) else []), *([rec.policy.hash] if rec.policy else []))
    files = _hand_blueprints(job)

    def reuse() -> dict[str, tuple[bytes, str]]:
        for b in pr.blueprints.values():
            data = job.prev.read(b.path) if b.path not in files else None
            if data is not None:
                files[b.path] = (data, "sampled")
        rec.stats["coverage"] = pr.stats.get("coverage", {})
        rec.stats["sampler_rejected"] = pr.stats.get("sampler_rejected", {})
        if pr.stats.get("tools_left_out"):
            rec.stats["tools_left_out"] = pr.stats["tools_left_out"]
        for t, r in pr.tools.items():
            if t in rec.tools:
                rec.tools[t].sampled = r.sampled
        return files

    job.bp_files = cached(job, "sample", key, reuse, lambda: _sample(job, files))


def _hand_blueprints(job: EnvJob) -> dict[str, tuple[bytes, str]]:
    """Blueprints the user edited or added: kept whatever the sampler does."""
    files: dict[str, tuple[bytes, str]] = {}
    if job.pr:
        for b in job.pr.blueprints.values():
            data = job.prev.read(b.path)
            if data is not None and (b.origin in ("edited", "user") or sha256_text(data) != b.hash):
                files[b.path] = (data, "edited" if b.origin != "user" else "user")
    for rel, data in job.user_files.items():
        files.setdefault(rel, (data, "user"))
    return files


def _sample(job: EnvJob, files: dict[str, tuple[bytes, str]]) -> dict[str, tuple[bytes, str]]:
    rec, opts = job.rec, job.opts
    usable = [t for t in job.env_decl.tools if t.name not in set(rec.dropped_tools)]
    if not usable:
        job.out.diagnostics.append(D.warning(NO_TOOLS, f"no verified tools in {job.name!r}", Span(job.src_rel)))
        return files
    from forgec.graph import build_graph
    from forgec.sample import SampleConfig, sample_blueprints

    graph = build_graph(job.env_decl, exclude=set(rec.dropped_tools))
    cfg = SampleConfig(tasks_per_env=opts.tasks_per_env, min_calls=opts.min_calls, max_calls=opts.max_calls,
                       seed=derive_seed(opts.seed, job.name, "sample"),
                       policy=_policy_text(job))
    if opts.evolve_rules(job.name):  # issue 26: the sampler rejects or thins out families by evolve.json's rules
        from forgec.evolve import SamplerRules
        from forgec.runtime.curriculum import Rules

        cfg.evolve = SamplerRules(Rules(opts.evolve_rules(job.name)), {t for t, w in getattr(job.module, "WRITES_STATE", {}).items() if w},
                                  cfg.seed)
    if opts.sampler == "walk":
        res = sample_blueprints(job.env_decl, job.module, job.world, graph, cfg)
    else:
        from forgec.scenario import sample_scenarios

        # no user scenario fits: no tasks, and `sampler_rejected` says why (a walk's chain of tool calls,
        # "delete a comment with a new view Ines Moreau", is no task a person brings; `--sampler walk` asks for it)
        res = sample_scenarios(job.env_decl, job.module, job.world, graph, cfg)
    for sb in res.blueprints:
        rel = f"blueprints/{job.name}/{sb.name}.forge"
        if rel not in files:  # never overwrite an edited file
            files[rel] = (sb.text.encode("utf-8"), "sampled")
    rec.stats["coverage"] = dict(sorted(res.coverage.items()))
    rec.stats["sampler_rejected"] = dict(sorted(res.rejected.items()))
    if res.left_out:
        rec.stats["tools_left_out"] = dict(res.left_out)
    for t, c in res.coverage.items():
        if t in rec.tools:
            rec.tools[t].sampled = c
    return files


@dataclass
class _Lowering:
    """Per-env bookkeeping of the lower stage."""

    lines: list[tuple[str, str]] = field(default_factory=list)
    rejected: dict[str, int] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)

    def reject(self, brec: BlueprintRecord, reason: str) -> None:
        brec.rejected = reason
        self.rejected[reason] = self.rejected.get(reason, 0) + 1


def lower_stage(job: EnvJob) -> None:
    """Blueprint files -> tasks/<env>.jsonl: each blueprint checked and run (reused when its key matches)."""
    opts, rec, pr = job.opts, job.rec, job.pr
    prev_tasks = _prev_tasks(job)
    low = _Lowering()
    todo: list[tuple[str, bytes, BlueprintRecord]] = []
    for rel in sorted(job.bp_files):
        data, origin = job.bp_files[rel]
        job.out.files[rel] = data
        h = sha256_text(data)
        key = _key("lower", PIPELINE_VERSION, h, rec.module.hash, rec.state.hash, opts.seed, opts.refine, getattr(opts.llm, "model", None),
                   *([sorted(rec.dropped_tools)] if rec.dropped_tools else []),
                   *([opts.evolve_rules(job.name)] if opts.evolve_rules(job.name) else []))
        bname = Path(rel).stem
        brec = BlueprintRecord(path=rel, hash=h, origin=origin, cache_key=key)
        rec.blueprints[bname] = brec
        old = pr.blueprints.get(bname) if pr else None
        # A cached rejection is reused only for sampled files: a hand-edited or user file that was
        # rejected is checked again so that its diagnostics are reported on every build, not just once.
        reusable = old is not None and (old.task is not None or origin == "sampled")

        def reuse(old: BlueprintRecord = old) -> tuple | None:
            if old.task is None:
                return (None, old.rejected)
            return (old.task, prev_tasks[old.task]) if old.task in prev_tasks else None

        hit = from_cache(job, f"lower:{bname}", key, old.cache_key if reusable else None, reuse)
        if hit is None:
            todo.append((rel, data, brec))
        elif hit[0] is not None:
            brec.task = hit[0]
            low.lines.append(hit)
            low.taken.add(hit[0])
        else:
            low.reject(brec, hit[1] or "unknown")
    if todo:
        _check_and_lower(job, todo, low)
    _write_tasks(job, low)


def _check_and_lower(job: EnvJob, todo: list[tuple[str, bytes, BlueprintRecord]], low: _Lowering) -> None:
    from forgec import lang

    parsed = []
    for rel, data, brec in todo:
        path = str(job.opts.out / rel)
        m, d = lang.parse(data.decode("utf-8", errors="replace"), path)
        parsed.append((m, d, path, brec))
    imported = _imported_modules(job, [p[0] for p in parsed if not D.has_errors(p[1])])
    by_file = _check_blueprints(job, parsed, imported)
    for m, pdiags, path, brec in parsed:
        diags = list(pdiags) + by_file.pop(path, [])
        for f in sorted(imported.get(m.file, {})):  # an imported file's errors reject the blueprint (once)
            diags.extend(by_file.pop(f, []))
        if D.has_errors(diags):
            low.reject(brec, "check-failed")
        else:
            for bp in m.blueprints:
                if _lower_one(job, bp, brec, low, diags):
                    break
        job.out.diagnostics.extend(diags)
        remember(job, f"lower:{Path(brec.path).stem}", diags)
    for rest in by_file.values():  # diagnostics in files the blueprints import
        job.out.diagnostics.extend(rest)


def _imported_modules(job: EnvJob, mods: list) -> dict[str, dict[str, Any]]:
    """The `.forge` files each blueprint imports (transitively, inside the build, the env file
    aside), parsed: they are checked as given files, as `forgec check` checks them, so that an
    imported second declaration of the env is an error in both."""
    from forgec import lang
    from forgec.lang.confine import MAX_IMPORT_BYTES, within

    def norm(f: str) -> str:
        return os.path.normpath(os.path.abspath(f))

    env_file = norm(job.env_mod.file)
    parsed: dict[str, Any] = {}
    out: dict[str, dict[str, Any]] = {}
    for m in mods:
        queue, seen = [m], {norm(m.file), env_file}
        while queue:
            cur = queue.pop()
            for imp in cur.imports:
                target = os.path.normpath(os.path.join(os.path.dirname(cur.file), imp.path))
                if (norm(target) in seen or not within(target, [job.opts.out]) or not os.path.isfile(target)
                        or os.path.getsize(target) > MAX_IMPORT_BYTES):
                    continue  # the env itself, or one the checker reports (missing, outside the build, too large)
                seen.add(norm(target))
                if target not in parsed:
                    try:
                        parsed[target] = lang.parse(Path(target).read_text(encoding="utf-8"), target)[0]
                    except (OSError, UnicodeDecodeError, ValueError):
                        continue
                out.setdefault(m.file, {})[target] = parsed[target]
                queue.append(parsed[target])
    return out


def _check_blueprints(job: EnvJob, parsed: list, imported: dict[str, dict[str, Any]]) -> dict[str, list[Diagnostic]]:
    """Check the blueprints against the env: all at once, or one by one when that raises
    (an unreadable import, say), so that one file cannot fail its env."""
    from forgec import lang

    ok = [p for p in parsed if not D.has_errors(p[1])]
    extra = list({f: m for deps in imported.values() for f, m in deps.items()}.values())
    done = {job.env_decl.name: job.env_types}  # the env itself was checked by the check stage: only the blueprints are
    try:
        groups = [lang.check([job.env_mod] + [p[0] for p in ok] + extra, checked=done)]
    except Exception:  # noqa: BLE001 - isolate the culprit below
        groups = []
        for m, _, path, _ in ok:
            try:
                groups.append(lang.check([job.env_mod, m, *imported.get(m.file, {}).values()], checked=done))
            except Exception as e:  # noqa: BLE001 - this file cannot be checked: reject it, keep the others
                msg = f"{type(e).__name__}: {e}"
                groups.append([D.error(D.INTERNAL, f"cannot check this blueprint: {msg[:300]}", Span(path),
                                       help="this blueprint is rejected and kept as it is; the other blueprints were built")])
    by_file: dict[str, list[Diagnostic]] = {}
    for d in (d for g in groups for d in g):
        if not (d.span and d.span.file == job.env_mod.file):
            by_file.setdefault(d.span.file if d.span else "", []).append(d)
    return by_file


def _lower_one(job: EnvJob, bp: Any, brec: BlueprintRecord, low: _Lowering, diags: list[Diagnostic]) -> bool:
    """Run one blueprint into a task; False (with a diagnostic when useful) when it is rejected."""
    name, path = job.name, str(job.opts.out / brec.path)
    if f"{name}/{bp.name}" in low.taken:
        low.reject(brec, "duplicate-name")
        diags.append(duplicate_blueprint(name, bp, brec.path))
        return False
    try:
        lr = lower_blueprint(bp, job.module, job.diff_world, env_name=name, blueprint_path=brec.path, blueprint_hash=brec.hash,
                             seed=job.opts.seed, initial_state_file=f"states/{name}.json", initial_state_hash=job.init_hash,
                             base_env=job.base_env)
        task = lr.task
        dropped = sorted({tool_ident(job.module, c.tool, c.arguments) for c in task.gold_calls} & set(job.rec.dropped_tools))
        if dropped:
            low.reject(brec, "unverified-tool")
            if brec.origin != "sampled":
                diags.append(D.warning(BAD_BLUEPRINT, f"{bp.name}: calls {', '.join(dropped)}, which failed verification "
                                       "and is not served", bp.span if bp.span.line else Span(path)))
            return False
        if job.opts.evolve_rules(name):  # issue 26: evolve.json rejects the task's family or repairs its check
            from forgec.evolve import apply_to_task
            from forgec.runtime.curriculum import Rules

            task, why = apply_to_task(Rules(job.opts.evolve_rules(name)), task)
            if why:
                low.reject(brec, why)
                return False
        if job.opts.refine == "llm" and job.opts.llm is not None:
            task = _refine(task, lr, job.opts, job.out)
        line = _task_line(task)
    except Rejected as r:
        low.reject(brec, r.reason)
        if brec.origin != "sampled":
            span = r.node.span if r.node is not None and r.node.span.line else Span(path)
            diags.append(D.warning(BAD_BLUEPRINT, f"{bp.name}: {r.reason}: {r.detail}", span))
        return False
    except UnicodeError as ex:
        low.reject(brec, "unencodable-text")
        diags.append(D.warning(BAD_BLUEPRINT, f"{bp.name}: its task cannot be written as UTF-8 JSON ({ex})", Span(path),
                               help='remove lone surrogates such as "\\udfff" from its strings'))
        return False
    except Exception as ex:  # noqa: BLE001 - one blueprint's bug must not fail its env
        low.reject(brec, "internal-error")
        diags.append(D.error(D.INTERNAL, f"{bp.name}: lowering raised {type(ex).__name__}: {ex}", Span(path),
                             help="this is a bug in forgec; the other blueprints were lowered"))
        return False
    brec.task = task.id
    low.taken.add(task.id)
    low.lines.append((task.id, line))
    return True


def duplicate_blueprint(env: str, bp: Any, rel: str) -> Diagnostic:
    """The one diagnostic for a blueprint name already used in its env (compile and `forgec check`)."""
    return D.error(DUPLICATE_TASK, f"blueprint {bp.name!r} is declared twice in env {env!r}",
                   bp.span if bp.span.line else Span(rel), help="rename one of them; task ids are <env>/<blueprint name>")


def _task_line(task: Any) -> str:
    """The task as one JSON line; UnicodeError when it holds text UTF-8 cannot encode (a lone surrogate)."""
    try:
        line = task.model_dump_json()
    except Exception as e:  # noqa: BLE001 - pydantic wraps the encoder's error
        if "surrogate" in str(e) or "encode" in str(e):
            raise UnicodeError(str(e).split(": ")[-1]) from None
        raise
    line.encode("utf-8")
    return line


def _write_tasks(job: EnvJob, low: _Lowering) -> None:
    rec = job.rec
    low.lines.sort()
    tasks_rel = f"tasks/{job.name}.jsonl"
    tasks_bytes = "".join(line + "\n" for _, line in low.lines).encode("utf-8")
    job.out.files[tasks_rel] = tasks_bytes
    rec.tasks = FileRecord(path=tasks_rel, hash=sha256_text(tasks_bytes))
    rec.task_count = len(low.lines)
    rec.rejected = dict(sorted(low.rejected.items()))
    rec.stats.update(_aggregate_stats([json.loads(line) for _, line in low.lines]))
    rec.blueprints = dict(sorted(rec.blueprints.items()))
    job.task_lines = low.lines


def oracle_stage(job: EnvJob) -> None:
    """Tasks -> the oracle self-check result: reused for the same tasks, module and state; else left
    empty for `compile_build` to run over the assembled build."""
    rec = job.rec
    key = _key("oracle", PIPELINE_VERSION, rec.tasks.hash, rec.module.hash, rec.state.hash)
    rec.oracle = cached(job, "oracle", key, lambda: job.pr.oracle or None, dict)


def toolmeta_cached_stage(job: EnvJob) -> None:
    """`toolmeta_stage`, reused when the docs (their bytes: titles and annotations are read from them), the module and
    the tasks are what the previous build had: validating every recorded result against the docs' output schemas
    was most of an unchanged rebuild."""
    rec = job.rec
    files = sorted({t.source.file for t in job.ir.tools if getattr(t, "source", None) is not None and t.source.file})
    digests = [sha256_text(Path(f).read_bytes()) if Path(f).is_file() else f for f in files]
    key = _key("toolmeta", PIPELINE_VERSION, rec.ir_hash, digests, rec.tasks.hash if rec.tasks else None,
               rec.module.hash if rec.module else None)

    def meta_of(tools: dict) -> dict:
        return {n: (r.title, r.annotations, r.output_schema) for n, r in tools.items()}

    def reuse() -> dict | None:
        prev = meta_of(job.pr.tools) if job.pr else {}
        return prev if prev and set(prev) == set(rec.tools) else None

    def compute() -> dict:
        toolmeta_stage(job)
        return meta_of(rec.tools)

    for name, (title, ann, out) in cached(job, "toolmeta", key, reuse, compute).items():
        t = rec.tools[name]
        t.title, t.annotations, t.output_schema = title, ann, out


STAGES: tuple[Stage, ...] = (
    Stage("synth", synth_stage, needs=("ir",), gives=("src_text",)),
    Stage("check", check_stage, needs=("src_text",), gives=("env_mod", "env_decl", "env_types")),
    Stage("codegen+verify", codegen_stage, needs=("env_decl", "env_types"), gives=("module",)),
    Stage("state", state_stage, needs=("module",), gives=("world", "base_env", "init_hash", "diff_world")),
    Stage("sample", sample_stage, needs=("env_decl", "module", "world"), gives=("bp_files",)),
    Stage("lower", lower_stage, needs=("bp_files", "env_mod", "env_types", "base_env", "init_hash", "diff_world"), gives=("task_lines",)),
    Stage("oracle", oracle_stage, needs=("task_lines",), gives=()),
    Stage("toolmeta", toolmeta_cached_stage, needs=("task_lines", "module"), gives=()),  # titles, annotations, output schemas
)


def run_stages(job: EnvJob, stages: tuple[Stage, ...] = STAGES) -> None:
    """Run `stages` in order, checking each one's declared inputs and outputs."""
    for st in stages:
        missing = [n for n in st.needs if getattr(job, n) is None]
        if missing:
            raise RuntimeError(f"stage {st.name} needs {missing}, which no earlier stage produced")
        t0 = time.perf_counter()
        st.run(job)
        job.out.timings[st.name] = time.perf_counter() - t0
        unset = [n for n in st.gives if getattr(job, n) is None]
        if unset:
            raise RuntimeError(f"stage {st.name} did not produce {unset}")


def build_env(ir_env: Any, opts: CompileOptions, prev: PrevEnv | None, user_files: dict[str, bytes]) -> EnvOutput:
    """All stages for one environment; never raises (failures become diagnostics).

    A failed env keeps its previous sources in the new build (see `_keep_sources`).
    """
    out = EnvOutput(ir_env.name)
    rec = EnvRecord(sources=portable_sources(ir_env.sources), ir_hash=sha256_text(ir_env.digest_json()))
    job = EnvJob(ir_env, opts, prev, user_files, out, rec)
    try:
        run_stages(job)
        out.record = rec
    except EnvFailed:
        _keep_sources(job, "does not check")
    except Exception as e:  # noqa: BLE001
        import traceback

        out.diagnostics.append(
            Diagnostic(
                D.Severity.ERROR,
                ENV_FAILED,
                f"environment {ir_env.name!r} failed: {type(e).__name__}: {str(e)[:500]}",
                Span(ir_env.sources[0] if ir_env.sources else ir_env.name),
                help="set FORGEC_DEBUG=1 to see the traceback; the other environments were built",
                notes=(traceback.format_exc(limit=6).strip().splitlines()[-1][:500],),
            )
        )
        if os.environ.get("FORGEC_DEBUG"):
            traceback.print_exc()
        _keep_sources(job, f"{type(e).__name__}: {str(e)[:200]}")
    finally:
        if job.scratch is not None:
            shutil.rmtree(job.scratch, ignore_errors=True)
            try:
                job.scratch.parent.rmdir()  # a -j worker's own `.BUILD.scratch-<pid>`, once empty
            except OSError:
                pass
    return out


def _keep_sources(job: EnvJob, why: str) -> None:
    """Nothing lost: a failed env's src/ and blueprints/ from the previous build (hand edits and
    added files included) go into the new build as they are, under a record marked failed.

    Derived files (envs/, states/, tasks/) are left out; the next compile rebuilds them from
    these sources. Blueprint records keep the hashes forgec wrote, so hand edits stay
    recognisable, and carry no cache keys, so nothing stale is reused.
    """
    name, root, pr = job.name, job.opts.out, job.pr
    files: dict[str, bytes] = {}
    for sub in (f"src/{name}", f"blueprints/{name}"):
        files.update(_files_under(root, root / sub))
    for rel, data in job.user_files.items():
        files.setdefault(rel, data)
    if job.src_rel not in files and job.src_text is not None:  # no earlier source: keep the one made now, to edit
        files[job.src_rel] = job.src_text.encode("utf-8", errors="replace")
    rec = EnvRecord(sources=portable_sources(job.ir.sources), ir_hash=job.rec.ir_hash, failed=why)
    if pr is not None and pr.src is not None and pr.src.path in files:
        rec.src, rec.src_origin = pr.src, pr.src_origin
    elif job.src_rel in files:
        rec.src, rec.src_origin = FileRecord(path=job.src_rel, hash=sha256_text(files[job.src_rel])), job.rec.src_origin
    for bname, b in sorted((pr.blueprints if pr else {}).items()):
        if b.path in files:
            rec.blueprints[bname] = b.model_copy(update={"task": None, "rejected": "env-failed", "cache_key": ""})
    hand_state = job.prev.edited(pr.state) if job.prev is not None and pr is not None else None
    if hand_state is not None and _is_json_object(hand_state):  # a hand-replaced states/<env>.json is the user's data: kept (still "edited") to fix
        files[pr.state.path], rec.state = hand_state, pr.state
    job.out.files = files
    job.out.record = rec
    job.out.kept = len(files)
    if files:
        job.out.diagnostics.append(D.info(SOURCES_KEPT, f"environment {name!r} failed; kept its sources from the previous build "
                                          f"({len(files)} file(s) under src/{name}/ and blueprints/{name}/, hand edits included)",
                                          Span(job.src_rel), help="fix the errors above and compile again"))

REFINE_REJECTED = D.define(
    "refine-rejected",
    "build",
    "An LLM-refined instruction was rejected (it leaked a tool name or a value the agent must find, or dropped a fact); the template instruction was kept.",
    why="The user may only state what the agent cannot obtain through tools.",
    wrong="Cancel order #W2378156 using cancel_pending_order; the refund is 54.04.",
    right="I'd like to cancel my most recent pending order. My user id is yusuf_rossi_9620.",
    severity=D.Severity.INFO,
)

_CHATS: dict = {}


def _is_json_object(data: bytes) -> bool:
    if not data.lstrip().startswith(b"{"):
        return False
    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False


def _refine(task: Any, lr: Any, opts: CompileOptions, out: EnvOutput) -> Any:
    from forgec.refine import refine_instruction
    from forgec.synth.llm import Chat

    key = (opts.llm.base_url, opts.llm.model)
    if key not in _CHATS:
        _CHATS[key] = Chat(opts.llm, opts.out.parent / ".forgec-cache")
    text, why = refine_instruction(
        task.instruction, task.user.facts, task.user.persona, [g.tool for g in task.gold_calls], lr.hidden_values, _CHATS[key],
        unknown=list(task.user.scenario.unknown_info) if getattr(task.user, "scenario", None) else [],
    )
    if why:
        out.diagnostics.append(D.info(REFINE_REJECTED, f"{task.id}: {why}", Span(task.blueprint.path)))
        return task
    return task.model_copy(update={"instruction": text})



def _scratch_dir(out: Path, env: str) -> Path:
    d = out.parent / f".{out.name}.scratch-{os.getpid()}" / env
    d.mkdir(parents=True, exist_ok=True)
    return d


def _tool_reports(verify_json: dict) -> dict[str, dict]:
    tools = verify_json.get("tools", verify_json)
    if isinstance(tools, list):
        return {t["tool"]: t for t in tools if isinstance(t, dict) and "tool" in t}
    if isinstance(tools, dict):
        return {k: v for k, v in tools.items() if isinstance(v, dict)}
    return {}


def _prev_tasks(job: EnvJob) -> dict[str, str]:
    """The previous build's task lines by id; empty (every blueprint is lowered again) when the
    tasks file is missing or not exactly what forgec wrote."""
    data = job.prev.intact(job.pr.tasks) if job.pr else None
    if data is None:
        return {}
    out = {}
    try:
        for line in data.decode("utf-8").splitlines():
            if line.strip():
                out[json.loads(line)["id"]] = line
    except (ValueError, KeyError, TypeError):
        return {}
    return out


def _aggregate_stats(tasks: list[dict]) -> dict:
    if not tasks:
        return {"tasks": 0}
    keys = ["calls", "write_calls", "reasoning_nodes", "inference_edges", "depth", "width", "user_facts"]
    agg: dict[str, Any] = {"tasks": len(tasks)}
    for k in keys:
        vals = [t["stats"][k] for t in tasks]
        agg[f"avg_{k}"] = round(sum(vals) / len(vals), 3)
        agg[f"max_{k}"] = max(vals)
    agg["read_only_tasks"] = sum(1 for t in tasks if t.get("read_only"))
    return agg


# --------------------------------------------------------------------------- worker processes


def _worker_init(parent: int) -> None:
    """A `-j` worker dies with the compile that started it, however that one ends (even SIGKILL)."""
    import ctypes
    import signal
    import threading

    try:
        os.setpgid(0, 0)  # its own process group: a signal for the worker reaches whatever it started
    except OSError:
        pass
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="forgec-parent-watch", daemon=True).start()


def _kill_workers(ex: cf.ProcessPoolExecutor, out: Path) -> None:
    """Kill every worker's process group (whatever it started too) and drop its scratch folder."""
    import signal

    for p in list(getattr(ex, "_processes", {}).values() or []):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            try:
                p.kill()
            except OSError:
                pass
        try:
            p.join(2)
        except Exception:  # noqa: BLE001 - best effort; the next compile removes what is left
            pass
        shutil.rmtree(out.parent / f".{out.name}.scratch-{p.pid}", ignore_errors=True)


def _run_envs(jobs_in: list, opts: CompileOptions, prev_manifest: Manifest | None, progress: Callable) -> list[EnvOutput]:
    # Envs with new docs or options do real work and go to the process pool; envs whose docs
    # and options are unchanged mostly reuse the previous build and run in-process
    # (a worker pool costs more than they do).
    same_opts = prev_manifest is not None and prev_manifest.metadata.options == opts.output_options()
    cold = [j for j in jobs_in if not (same_opts and j[1] is not None and not j[1].record.failed
                                      and j[1].record.ir_hash == sha256_text(j[0].digest_json()))]
    warm = [j for j in jobs_in if j not in cold]
    results: list[EnvOutput] = []
    if opts.jobs > 1 and len(cold) > 1:
        ex = cf.ProcessPoolExecutor(max_workers=opts.jobs, initializer=_worker_init, initargs=(os.getpid(),))
        try:
            futs = {ex.submit(build_env, e, opts, p, u): e.name for e, p, u in cold}
            for e, p, u in warm:
                results.append(build_env(e, opts, p, u))
                progress("env", e.name)
            for f in cf.as_completed(futs):
                progress("env", futs[f])
                results.append(f.result())
        except BaseException:
            _kill_workers(ex, opts.out)
            ex.shutdown(wait=False, cancel_futures=True)
            raise
        ex.shutdown(wait=True)
    else:
        for e, p, u in cold + warm:
            results.append(build_env(e, opts, p, u))
            progress("env", e.name)
    return sorted(results, key=lambda r: r.name)


# --------------------------------------------------------------------------- the whole build


def compile_build(opts: CompileOptions, progress: Callable[[str, str], None] | None = None) -> CompileResult:
    """Compile `opts.inputs` into `opts.out`; returns diagnostics instead of raising."""
    from forgec.frontends import read_paths

    progress = progress or (lambda stage, env: None)
    out = opts.out
    clean_dead(out)
    diags: list[Diagnostic] = []
    progress("read", "")
    envs, rd = read_paths(list(opts.inputs), env_name=opts.env_name)
    diags.extend(rd)
    progress("envs", str(len(envs)))
    diags.extend(D.error("bad-state", f"--state names env {n!r}, which the inputs do not define", Span(str(p)),
                         help=f"environments: {', '.join(sorted(e.name for e in envs))}")
                 for n, p in sorted(opts.states.items()) if n not in {e.name for e in envs})
    prev_manifest, pd = load_previous(out)
    diags.extend(pd)

    carried: dict[str, bytes] = {}
    if (out / "evolve.json").is_file() and not opts.evolve:  # issue 26: `forgec evolve`'s rules, kept in the new build
        from forgec.evolve import check_rules

        carried["evolve.json"] = (out / "evolve.json").read_bytes()
        doc, ed = check_rules(out / "evolve.json", {e.name for e in envs})
        diags.extend(ed)
        opts.evolve = (doc or {}).get("envs") or None
    jobs_in = []
    for e in sorted(envs, key=lambda e: e.name):
        prev = None
        known: set[str] = set()
        if prev_manifest and e.name in prev_manifest.envs:
            prev = PrevEnv(out, prev_manifest.envs[e.name])
            known = {b.path for b in prev.record.blueprints.values()}
        jobs_in.append((e, prev, _user_blueprints(out, e.name, known, diags, carried)))

    results = _run_envs(jobs_in, opts, prev_manifest, progress)
    for r in results:
        diags.extend(r.diagnostics)
    shutil.rmtree(out.parent / f".{out.name}.scratch-{os.getpid()}", ignore_errors=True)

    manifest = Manifest(
        metadata=Metadata(
            forgec_version=__version__,
            generated_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
            invocation_id=str(uuid.uuid4()),
            seed=opts.seed,
            options=opts.output_options(),
        )
    )
    for r in results:
        if r.record is not None:
            manifest.envs[r.name] = r.record
    _lineage(manifest)

    tmp = _write_tree(out, results, manifest, carried)
    if opts.oracle_check:
        progress("oracle", "")
        diags.extend(_oracle_check(tmp, out, manifest))
    manifest.diagnostics = {s.value: sum(1 for d in diags if d.severity == s) for s in D.Severity}
    (tmp / "manifest.json").write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    swap_in(tmp, out)
    return CompileResult(out, manifest, diags, results)


def _lineage(m: Manifest) -> None:
    parents: dict[str, list[str]] = {}
    for name, e in m.envs.items():
        env_node = f"env.{name}"
        parents[env_node] = sorted(f"doc.{s}" for s in e.sources)
        for bname, b in e.blueprints.items():
            bnode = f"blueprint.{name}.{bname}"
            parents[bnode] = [env_node]
            if b.task:
                parents[f"task.{b.task}"] = [bnode]
    children: dict[str, list[str]] = {}
    for child, ps in parents.items():
        for p in ps:
            children.setdefault(p, []).append(child)
    m.parent_map = dict(sorted(parents.items()))
    m.child_map = {k: sorted(v) for k, v in sorted(children.items())}


def _write_tree(out: Path, results: list[EnvOutput], manifest: Manifest, carried: dict[str, bytes]) -> Path:
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    files = dict(carried)
    for r in results:
        if r.record is not None:
            files.update(r.files)
    for rel, data in sorted(files.items()):
        p = tmp / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    from forgec.schemas import write as write_schemas

    write_schemas(tmp / "schema")
    (tmp / "manifest.json").write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return tmp


def _oracle_check(tmp: Path, out: Path, manifest: Manifest) -> list[Diagnostic]:
    """Replay every new or changed env's tasks with the oracle agent; record the pass rate.

    Failures are reported for every env, including those whose earlier self-check was reused.
    """
    todo = sorted(name for name, e in manifest.envs.items() if not e.oracle and e.task_count)
    if todo:
        from forgec.runtime import load
        from forgec.runtime.eval import oracle_self_check

        rep = oracle_self_check(load(tmp), tasks=todo)
        per_env = rep.get("per_env", {})
        for name in todo:
            r = per_env.get(name, {})
            manifest.envs[name].oracle = {k: r[k] for k in ("tasks", "passed", "pass_rate", "failures") if k in r}
    diags = []
    for name, e in manifest.envs.items():
        for f in (e.oracle.get("failures") or [])[:20]:
            diags.append(D.error(ORACLE_FAILED, f"oracle failed task {f}", Span(str(out / "tasks" / f"{name}.jsonl"))))
    return diags


def manifest_out_name(tmp: Path) -> str:
    """`.build.tmp-123` -> `build` (diagnostics name the final path, not the temporary one)."""
    return tmp.name[1:].rsplit(".tmp-", 1)[0]
