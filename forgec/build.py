"""The compile driver: read -> synthesize -> emit/check -> codegen -> verify -> graph -> sample -> lower.

`compile_build` runs every stage per environment (in parallel with `jobs`),
reusing the previous build's outputs whose inputs did not change (content
hashes recorded in the manifest), never overwriting a `.forge` file the user
edited, and writing the new build beside the old one so that an interrupted
compile leaves the previous build intact (the new tree is swapped in at the end).
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime as _dt
import json
import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from forgec import __version__
from forgec import diagnostics as D
from forgec.diagnostics import Diagnostic, Span
from forgec.lower import Rejected, lower_blueprint, sha256_text
from forgec.manifest import BlueprintRecord, EnvRecord, FileRecord, Manifest, Metadata, ToolRecord, manifest_json_schema

# Bumped whenever a stage's output for the same input changes, to invalidate caches.
PIPELINE_VERSION = f"{__version__}+1"

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
        }


@dataclass
class EnvOutput:
    name: str
    files: dict[str, bytes] = field(default_factory=dict)  # relpath -> bytes
    record: EnvRecord | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class CompileResult:
    out: Path
    manifest: Manifest | None
    diagnostics: list[Diagnostic]
    envs: list[EnvOutput]

    @property
    def ok(self) -> bool:
        return not D.has_errors(self.diagnostics)


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

    def read(self, rel: str) -> bytes | None:
        from forgec.lang.confine import within

        p = self.root / rel
        if not within(p, [self.root]):  # a manifest path with `..`, or a symlink out of the build: never read (H5)
            return None
        try:
            return p.read_bytes()
        except OSError:
            return None

    def edited(self, rec: FileRecord | None) -> bytes | None:
        """The file's bytes when they differ from what forgec recorded (a hand edit)."""
        if rec is None:
            return None
        data = self.read(rec.path)
        if data is not None and sha256_text(data) != rec.hash:
            return data
        return None


def load_previous(out: Path) -> tuple[Manifest | None, list[Diagnostic]]:
    mp = out / "manifest.json"
    if not mp.is_file():
        return None, []
    try:
        m = Manifest.model_validate_json(mp.read_text(encoding="utf-8"))
    except Exception as e:  # noqa: BLE001 - a corrupt manifest means a cold build
        first = (str(e).splitlines()[1].strip() if len(str(e).splitlines()) > 1 else str(e)).split(" [type=")[0]
        return None, [D.warning("corrupt-build", f"previous manifest.json is unreadable ({first}); every .forge file under "
                                "blueprints/ is kept as a hand-added blueprint", Span(str(mp)),
                                help=f"delete {out} to rebuild from scratch")]
    if m.metadata.schema_version != Manifest.model_fields["metadata"].annotation.model_fields["schema_version"].default:
        return None, []
    return m, []


def _user_blueprints(out: Path, env: str, known: set[str]) -> dict[str, bytes]:
    """`.forge` files the user added to build/blueprints/<env>/ (not recorded by forgec)."""
    d = out / "blueprints" / env
    found = {}
    if d.is_dir():
        for p in sorted(d.glob("*.forge")):
            rel = f"blueprints/{env}/{p.name}"
            if rel not in known and p.is_file() and not p.is_symlink():  # a link may lead outside the build: not read
                found[rel] = p.read_bytes()
    return found


# --------------------------------------------------------------------------- one environment


def build_env(ir_env: Any, opts: CompileOptions, prev: PrevEnv | None, user_files: dict[str, bytes]) -> EnvOutput:
    """All stages for one environment; never raises (failures become diagnostics)."""
    out = EnvOutput(ir_env.name)
    try:
        _build_env(ir_env, opts, prev, user_files, out)
    except Exception as e:  # noqa: BLE001
        import traceback

        out.diagnostics.append(
            Diagnostic(
                D.Severity.ERROR,
                ENV_FAILED,
                f"environment {ir_env.name!r} failed: {type(e).__name__}: {e}",
                Span(ir_env.sources[0] if ir_env.sources else ir_env.name),
                help="set FORGEC_DEBUG=1 to see the traceback; the other environments were built",
                notes=(traceback.format_exc(limit=6).strip().splitlines()[-1],),
            )
        )
        if os.environ.get("FORGEC_DEBUG"):
            traceback.print_exc()
        out.record = None
    return out


def _build_env(ir_env: Any, opts: CompileOptions, prev: PrevEnv | None, user_files: dict[str, bytes], out: EnvOutput) -> None:
    import time

    from forgec import lang
    from forgec.codegen import emit_env, load_env_module

    name = ir_env.name
    rec = EnvRecord(sources=list(ir_env.sources))
    ir_hash = sha256_text(ir_env.model_dump_json())
    rec.ir_hash = ir_hash
    pr = prev.record if prev else None
    t0 = time.perf_counter()

    # ---- synthesize (or keep the user's edited env.forge)
    src_rel = f"src/{name}/env.forge"
    synth_key = _key("synth", PIPELINE_VERSION, ir_hash, opts.synth)
    src_text: str | None = None
    edited = prev.edited(pr.src) if prev and pr and pr.src else None
    if prev and pr and pr.src_origin == "edited" and pr.src:
        edited = prev.read(pr.src.path)  # stays edited until the user deletes it
    if edited is not None:
        src_text = edited.decode("utf-8", errors="replace")
        rec.src_origin = "edited"
        out.diagnostics.append(D.info(STALE_EDIT, f"keeping hand-edited {src_rel}", Span(src_rel)))
    elif prev and pr and pr.keys.get("synth") == synth_key and pr.src:
        data = prev.read(pr.src.path)
        src_text = data.decode("utf-8") if data is not None else None
    if src_text is None:
        from forgec.synth import synthesize

        decl, sd = synthesize(ir_env, backend=opts.synth, llm=opts.llm, cache_dir=opts.out.parent / ".forgec-cache")
        out.diagnostics.extend(sd)
        from forgec.lang import ast as A

        src_text = lang.format(A.Module(file=src_rel, items=(decl,)))
    rec.keys["synth"] = synth_key
    src_bytes = src_text.encode("utf-8")
    out.files[src_rel] = src_bytes
    rec.src = FileRecord(path=src_rel, hash=sha256_text(src_bytes))
    out.timings["synth"] = time.perf_counter() - t0

    # ---- parse + check the env
    t0 = time.perf_counter()
    env_mod, pd = lang.parse(src_text, str(opts.out / src_rel))
    cd = lang.check([env_mod]) if not D.has_errors(pd) else []
    out.diagnostics.extend(pd + cd)
    if D.has_errors(pd + cd) or not env_mod.envs:
        out.diagnostics.append(D.error(ENV_FAILED, f"environment {name!r} does not check; not built", Span(src_rel)))
        return
    env_decl = env_mod.envs[0]
    out.timings["check"] = time.perf_counter() - t0

    # ---- codegen + verify
    t0 = time.perf_counter()
    codegen_key = _key("codegen", PIPELINE_VERSION, rec.src.hash, opts.verify_calls, opts.seed)
    mod_rel = f"envs/{name}/env.py"
    py_src: str | None = None
    verify_json: dict | None = None
    if prev and pr and pr.keys.get("codegen") == codegen_key and pr.module:
        data = prev.read(pr.module.path)
        if data is not None and sha256_text(data) == pr.module.hash:
            py_src = data.decode("utf-8")
            verify_json = pr.verify
    if py_src is None:
        py_src = emit_env(env_decl, src_rel)
    mod_bytes = py_src.encode("utf-8")
    out.files[mod_rel] = mod_bytes
    rec.module = FileRecord(path=mod_rel, hash=sha256_text(mod_bytes))
    rec.keys["codegen"] = codegen_key
    scratch = _scratch_dir(opts.out, name)
    mod_path = scratch / "env.py"
    mod_path.write_bytes(mod_bytes)
    module = load_env_module(mod_path, name=f"forgec_build_{name}_{rec.module.hash[:12]}")
    if verify_json is None:
        from forgec.codegen.verify import verify_env

        report = verify_env(module, env_decl, seed=derive_seed(opts.seed, name, "verify"), calls_per_tool=opts.verify_calls)
        verify_json = report.to_json()
    rec.verify = verify_json
    tool_reports = _tool_reports(verify_json)
    for t in env_decl.tools:
        r = tool_reports.get(t.name, {})
        rec.tools[t.name] = ToolRecord(
            kind=r.get("kind") or getattr(module, "TOOL_KINDS", {}).get(t.name, "action"),
            writes_state=bool(r.get("writes_state", getattr(module, "WRITES_STATE", {}).get(t.name, False))),
            verified=bool(r.get("verified", False)),
            reason=r.get("reason"),
        )
    rec.dropped_tools = sorted(t for t, r in rec.tools.items() if not r.verified)
    out.timings["codegen+verify"] = time.perf_counter() - t0

    # ---- world state
    t0 = time.perf_counter()
    from forgec.stdlib.values import generate_state

    state_key = _key("state", PIPELINE_VERSION, rec.src.hash, opts.seed, opts.state_size)
    state_rel = f"states/{name}.json"
    world: dict | None = None
    if prev and pr and pr.keys.get("state") == state_key and pr.state:
        data = prev.read(pr.state.path)
        if data is not None:
            world = json.loads(data)
    if world is None:
        world = generate_state(module.SCHEMA, seed=derive_seed(opts.seed, name, "state"), size=opts.state_size)
    state_bytes = (_canon(world) + "\n").encode("utf-8")
    out.files[state_rel] = state_bytes
    rec.state = FileRecord(path=state_rel, hash=sha256_text(state_bytes))
    rec.keys["state"] = state_key
    world = json.loads(state_bytes)  # exactly what the runtime will load
    base_env = module.Env(world)  # each blueprint runs on a fork of it (no re-validation)
    init_hash = base_env.state_hash()
    out.timings["state"] = time.perf_counter() - t0

    # ---- sample blueprints (or reuse / keep edited ones)
    t0 = time.perf_counter()
    sample_key = _key("sample", PIPELINE_VERSION, rec.module.hash, rec.state.hash, sorted(rec.dropped_tools), opts.output_options())
    bp_files: dict[str, tuple[bytes, str]] = {}  # rel -> (bytes, origin)
    reuse_sampling = bool(prev and pr and pr.keys.get("sample") == sample_key)
    if prev and pr:
        for bname, b in pr.blueprints.items():
            data = prev.read(b.path)
            if data is None:
                continue  # the user deleted it
            if b.origin in ("edited", "user") or sha256_text(data) != b.hash:
                bp_files[b.path] = (data, "edited" if b.origin != "user" else "user")
            elif reuse_sampling:
                bp_files[b.path] = (data, "sampled")
    for rel, data in user_files.items():
        bp_files.setdefault(rel, (data, "user"))
    if not reuse_sampling:
        usable = [t for t in env_decl.tools if t.name not in set(rec.dropped_tools)]
        if not usable:
            out.diagnostics.append(D.warning(NO_TOOLS, f"no verified tools in {name!r}", Span(src_rel)))
        else:
            from forgec.graph import build_graph
            from forgec.sample import SampleConfig, sample_blueprints

            graph = build_graph(env_decl, exclude=set(rec.dropped_tools))
            cfg = SampleConfig(
                tasks_per_env=opts.tasks_per_env,
                min_calls=opts.min_calls,
                max_calls=opts.max_calls,
                seed=derive_seed(opts.seed, name, "sample"),
            )
            res = sample_blueprints(env_decl, module, world, graph, cfg)
            for sb in res.blueprints:
                rel = f"blueprints/{name}/{sb.name}.forge"
                if rel not in bp_files:  # never overwrite an edited file
                    bp_files[rel] = (sb.text.encode("utf-8"), "sampled")
            rec.stats["coverage"] = dict(sorted(res.coverage.items()))
            rec.stats["sampler_rejected"] = dict(sorted(res.rejected.items()))
            for t, c in res.coverage.items():
                if t in rec.tools:
                    rec.tools[t].sampled = c
    elif pr:
        rec.stats["coverage"] = pr.stats.get("coverage", {})
        rec.stats["sampler_rejected"] = pr.stats.get("sampler_rejected", {})
        for t, r in pr.tools.items():
            if t in rec.tools:
                rec.tools[t].sampled = r.sampled
    rec.keys["sample"] = sample_key
    out.timings["sample"] = time.perf_counter() - t0

    # ---- check + lower every blueprint
    t0 = time.perf_counter()
    prev_tasks = _prev_tasks(prev, pr)
    task_lines: list[tuple[str, str]] = []
    rejected: dict[str, int] = {}
    to_check = []
    for rel in sorted(bp_files):
        data, origin = bp_files[rel]
        out.files[rel] = data
        h = sha256_text(data)
        lower_key = _key("lower", PIPELINE_VERSION, h, rec.module.hash, rec.state.hash, opts.seed, opts.refine, getattr(opts.llm, "model", None))
        bname = Path(rel).stem
        brec = BlueprintRecord(path=rel, hash=h, origin=origin, cache_key=lower_key)
        old = pr.blueprints.get(bname) if pr else None
        # A cached rejection is reused only for sampled files: a hand-edited or user file that was
        # rejected is checked again so that its diagnostics are reported on every build, not just once.
        reusable = old is not None and (old.task is not None or origin == "sampled")
        if reusable and old.cache_key == lower_key and (old.task is None or old.task in prev_tasks):
            brec.task, brec.rejected = old.task, old.rejected
            if old.task:
                task_lines.append((old.task, prev_tasks[old.task]))
            else:
                rejected[old.rejected or "unknown"] = rejected.get(old.rejected or "unknown", 0) + 1
            rec.blueprints[bname] = brec
            continue
        to_check.append((rel, data, brec, bname))
    if to_check:
        parsed = []
        for rel, data, brec, bname in to_check:
            m, d = lang.parse(data.decode("utf-8", errors="replace"), str(opts.out / rel))
            parsed.append((m, d, rel, brec, bname))
        cdiags = lang.check([env_mod] + [p[0] for p in parsed if not D.has_errors(p[1])])
        by_file: dict[str, list[Diagnostic]] = {}
        for d in cdiags:
            by_file.setdefault(d.span.file if d.span else "", []).append(d)
        out.diagnostics.extend(d for d in cdiags if not (d.span and d.span.file == env_mod.file))
        taken = {b.task for b in rec.blueprints.values() if b.task}
        for m, d, rel, brec, bname in parsed:
            out.diagnostics.extend(d)
            errs = [x for x in d + by_file.get(str(opts.out / rel), []) if x.is_error]
            rec.blueprints[bname] = brec
            if errs:
                brec.rejected = "check-failed"
                rejected["check-failed"] = rejected.get("check-failed", 0) + 1
                continue
            for bp in m.blueprints:
                if f"{name}/{bp.name}" in taken:
                    brec.rejected = "duplicate-name"
                    rejected["duplicate-name"] = rejected.get("duplicate-name", 0) + 1
                    out.diagnostics.append(D.error(DUPLICATE_TASK, f"blueprint {bp.name!r} is declared twice in env {name!r}", bp.span if bp.span.line else Span(rel), help="rename one of them; task ids are <env>/<blueprint name>"))
                    continue
                try:
                    lr = lower_blueprint(
                        bp,
                        module,
                        world,
                        env_name=name,
                        blueprint_path=rel,
                        blueprint_hash=brec.hash,
                        seed=opts.seed,
                        initial_state_file=state_rel,
                        initial_state_hash=init_hash,
                        base_env=base_env,
                    )
                except Rejected as r:
                    brec.rejected = r.reason
                    rejected[r.reason] = rejected.get(r.reason, 0) + 1
                    span = r.node.span if r.node is not None and r.node.span.line else Span(str(opts.out / rel))
                    if brec.origin != "sampled":
                        out.diagnostics.append(D.warning(BAD_BLUEPRINT, f"{bp.name}: {r.reason}: {r.detail}", span))
                    continue
                except Exception as ex:  # noqa: BLE001 - one blueprint's bug must not fail its env
                    brec.rejected = "internal-error"
                    rejected["internal-error"] = rejected.get("internal-error", 0) + 1
                    out.diagnostics.append(
                        D.error(D.INTERNAL, f"{bp.name}: lowering raised {type(ex).__name__}: {ex}", Span(str(opts.out / rel)),
                                help="this is a bug in forgec; the other blueprints were lowered")
                    )
                    continue
                task = lr.task
                if opts.refine == "llm" and opts.llm is not None:
                    task = _refine(task, lr, opts, out)
                brec.task = task.id
                taken.add(task.id)
                task_lines.append((task.id, task.model_dump_json()))
                break
    task_lines.sort()
    tasks_rel = f"tasks/{name}.jsonl"
    tasks_bytes = "".join(line + "\n" for _, line in task_lines).encode("utf-8")
    out.files[tasks_rel] = tasks_bytes
    rec.tasks = FileRecord(path=tasks_rel, hash=sha256_text(tasks_bytes))
    rec.task_count = len(task_lines)
    rec.rejected = dict(sorted(rejected.items()))
    rec.stats.update(_aggregate_stats([json.loads(line) for _, line in task_lines]))
    rec.blueprints = dict(sorted(rec.blueprints.items()))
    rec.keys["oracle"] = _key("oracle", PIPELINE_VERSION, rec.tasks.hash, rec.module.hash, rec.state.hash)
    if pr and pr.keys.get("oracle") == rec.keys["oracle"] and pr.oracle:
        rec.oracle = pr.oracle  # same tasks on the same module and state: the self-check stands
    out.timings["lower"] = time.perf_counter() - t0
    out.record = rec
    shutil.rmtree(scratch, ignore_errors=True)


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


def _refine(task: Any, lr: Any, opts: CompileOptions, out: EnvOutput) -> Any:
    from forgec.refine import refine_instruction
    from forgec.synth.llm import Chat

    key = (opts.llm.base_url, opts.llm.model)
    if key not in _CHATS:
        _CHATS[key] = Chat(opts.llm, opts.out.parent / ".forgec-cache")
    text, why = refine_instruction(
        task.instruction, task.user.facts, task.user.persona, [g.tool for g in task.gold_calls], lr.hidden_values, _CHATS[key]
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


def _prev_tasks(prev: PrevEnv | None, pr: EnvRecord | None) -> dict[str, str]:
    if not prev or not pr or not pr.tasks:
        return {}
    data = prev.read(pr.tasks.path)
    if data is None:
        return {}
    out = {}
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            out[json.loads(line)["id"]] = line
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


# --------------------------------------------------------------------------- the whole build


def compile_build(opts: CompileOptions, progress: Callable[[str, str], None] | None = None) -> CompileResult:
    """Compile `opts.inputs` into `opts.out`; returns diagnostics instead of raising."""
    from forgec.frontends import read_paths

    progress = progress or (lambda stage, env: None)
    out = opts.out
    _recover(out)
    diags: list[Diagnostic] = []
    progress("read", "")
    envs, rd = read_paths(list(opts.inputs), env_name=opts.env_name)
    diags.extend(rd)
    progress("envs", str(len(envs)))
    prev_manifest, pd = load_previous(out)
    diags.extend(pd)

    jobs_in = []
    for e in sorted(envs, key=lambda e: e.name):
        prev = None
        known: set[str] = set()
        if prev_manifest and e.name in prev_manifest.envs:
            prev = PrevEnv(out, prev_manifest.envs[e.name])
            known = {b.path for b in prev.record.blueprints.values()}
        jobs_in.append((e, prev, _user_blueprints(out, e.name, known)))

    # Envs with new docs or options do real work and go to the process pool; envs whose docs
    # and options are unchanged mostly reuse the previous build and run in-process
    # (a worker pool costs more than they do).
    same_opts = prev_manifest is not None and prev_manifest.metadata.options == opts.output_options()
    cold = [j for j in jobs_in if not (same_opts and j[1] is not None and j[1].record.ir_hash == sha256_text(j[0].model_dump_json()))]
    warm = [j for j in jobs_in if j not in cold]
    results: list[EnvOutput] = []
    if opts.jobs > 1 and len(cold) > 1:
        with cf.ProcessPoolExecutor(max_workers=opts.jobs) as ex:
            futs = {ex.submit(build_env, e, opts, p, u): e.name for e, p, u in cold}
            for e, p, u in warm:
                results.append(build_env(e, opts, p, u))
                progress("env", e.name)
            for f in cf.as_completed(futs):
                progress("env", futs[f])
                results.append(f.result())
    else:
        for e, p, u in cold + warm:
            results.append(build_env(e, opts, p, u))
            progress("env", e.name)
    results.sort(key=lambda r: r.name)
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
    # an env that failed this time keeps nothing from before: its outputs would be stale
    _lineage(manifest)

    tmp = _write_tree(out, results, manifest)
    if opts.oracle_check:
        progress("oracle", "")
        diags.extend(_oracle_check(tmp, manifest))
    manifest.diagnostics = {
        s.value: sum(1 for d in diags if d.severity == s) for s in D.Severity
    }
    (tmp / "manifest.json").write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    _swap(tmp, out)
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


def _write_tree(out: Path, results: list[EnvOutput], manifest: Manifest) -> Path:
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for r in results:
        if r.record is None:
            continue
        for rel, data in sorted(r.files.items()):
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
    from forgec.schemas import write as write_schemas

    write_schemas(tmp / "schema")
    (tmp / "manifest.json").write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return tmp


def _oracle_check(tmp: Path, manifest: Manifest) -> list[Diagnostic]:
    """Replay every new or changed env's tasks with the oracle agent; record the pass rate."""
    todo = sorted(name for name, e in manifest.envs.items() if not e.oracle and e.task_count)
    if not todo:
        return []
    from forgec.runtime import load
    from forgec.runtime.eval import oracle_self_check

    build = load(tmp)
    rep = oracle_self_check(build, tasks=todo)
    diags = []
    per_env = rep.get("per_env", {})
    for name in todo:
        e = manifest.envs[name]
        r = per_env.get(name, {})
        e.oracle = {k: r[k] for k in ("tasks", "passed", "pass_rate", "failures") if k in r}
        for f in (r.get("failures") or [])[:20]:
            diags.append(D.error(ORACLE_FAILED, f"oracle failed task {f}", Span(str(tmp.parent / manifest_out_name(tmp) / "tasks" / f"{name}.jsonl"))))
    return diags


def manifest_out_name(tmp: Path) -> str:
    """`.build.tmp-123` -> `build` (diagnostics name the final path, not the temporary one)."""
    return tmp.name[1:].rsplit(".tmp-", 1)[0]


def _swap(tmp: Path, out: Path) -> None:
    """Put the new tree in place: out -> out.old, tmp -> out, drop old. `_recover` repairs a crash between."""
    old = out.parent / f".{out.name}.old"
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old, ignore_errors=True)


def _recover(out: Path) -> None:
    old = out.parent / f".{out.name}.old"
    if not out.exists() and old.exists():
        os.rename(old, out)
    for p in out.parent.glob(f".{out.name}.tmp-*"):
        pid = p.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)
    for p in out.parent.glob(f".{out.name}.scratch-*"):
        pid = p.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
