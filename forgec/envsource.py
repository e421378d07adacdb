"""Environments from a path for `forgec graph` and `forgec sample`: tool docs (read and synthesized on the fly),
a build folder (through its manifest), or .forge files and folders; each with its generated module and world
state when asked. A module of its own so that neither command imports the other."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forgec.diagnostics import Diagnostic, Span, error, has_errors, warning
from forgec.codes import NO_ENV, NO_WORLD_STATE
from forgec import lang
from forgec.manifest import read_manifest
from forgec.frontends import read_paths
from forgec.lang import ast as A
from forgec.synth import synthesize
from forgec.codegen import emit_env, load_env_module
from forgec.codegen.verify import verify_env
from forgec.stdlib.values import generate_state


@dataclass
class LoadedEnv:
    decl: Any  # lang.ast.EnvDecl
    origin: str  # "build" | "forge" | "docs"
    module: Any = None  # generated env module (only when asked for)
    world: dict | None = None
    exclude: set[str] = field(default_factory=set)  # tools that failed verification
    writes: dict[str, bool] | None = None  # tool -> changes state (manifest / module), when known
    types: Any = None  # the checker's EnvTypes of `decl`, when it was checked here (codegen reads it)


def _kind_of_path(path: Path) -> str:
    if path.is_dir() and (path / "manifest.json").is_file():
        return "build"
    if path.is_file():
        return "forge" if path.suffix == ".forge" else "docs"
    if path.is_dir():
        has_forge = any(path.rglob("*.forge"))
        has_docs = any(p.suffix in (".json", ".yaml", ".yml", ".jsonl") for p in path.rglob("*") if p.is_file())
        return "forge" if has_forge and not has_docs else "docs"
    return "missing"


def load_envs(path: Path, env: str | None = None, with_module: bool = False, seed: int = 0,
              state_size: int = 30) -> tuple[list[LoadedEnv], list[Diagnostic]]:
    """Environments found at `path` (filtered by `env`), with module + world state when `with_module`."""

    from forgec.swap import recover_build; recover_build(path)  # noqa: E702 - a compile killed mid-swap
    kind = _kind_of_path(path)
    if kind == "missing":  # worded as `forgec compile/inspect/fmt` word it (forgec.frontends)
        from forgec.frontends.codes import PATH_NOT_FOUND

        return [], [error(PATH_NOT_FOUND, f"no such file or folder: {path}", Span(str(path)), "check the path")]
    loader = {"build": _from_build, "forge": _from_forge, "docs": _from_docs}[kind]
    envs, diags = loader(path, with_module, seed, state_size)
    if has_errors(diags):
        return [], diags
    names = [e.decl.name for e in envs]
    if env is not None:
        envs = [e for e in envs if e.decl.name == env]
    if not envs:
        from forgec.lang.check import did_you_mean

        what = f"no environment named {env!r} in {path}" if env else f"no environment in {path}"
        hint = did_you_mean(env, names) if env else ""
        diags.append(error(NO_ENV, what, Span(str(path)), hint or (f"environments: {', '.join(names)}" if names else "")))
    return envs, diags


def _from_build(path: Path, with_module: bool, seed: int, state_size: int):


    manifest, diags = read_manifest(path)  # corrupt-build, worded as the runtime words it
    if manifest is None:
        return [], diags
    out = []
    for name, rec in sorted((manifest.get("envs") or {}).items()):
        src = (rec.get("src") or {}).get("path")
        if not src or not (path / src).is_file():
            diags.append(warning(NO_WORLD_STATE, f"env {name!r} has no source file in the build", Span(str(path / "manifest.json"))))
            continue
        mod, d = lang.parse((path / src).read_text(encoding="utf-8"), str(path / src))
        diags += d
        if not mod.envs:
            continue
        le = LoadedEnv(mod.envs[0], "build", exclude=set(rec.get("dropped_tools") or []),
                       writes={t: bool(r.get("writes_state")) for t, r in (rec.get("tools") or {}).items()} or None)
        if with_module:
            mpath = (rec.get("module") or {}).get("path")
            spath = (rec.get("state") or {}).get("path")
            if not mpath or not spath or not (path / mpath).is_file() or not (path / spath).is_file():
                diags.append(error(NO_WORLD_STATE, f"env {name!r} has no generated module or world state in {path}", Span(str(path / "manifest.json")),
                                   "recompile: forgec compile DOCS -o " + str(path)))
                continue
            from forgec.codegen import load_env_module

            le.module = load_env_module(path / mpath)
            le.world = json.loads((path / spath).read_text(encoding="utf-8"))
        out.append(le)
    return out, diags


def _from_forge(path: Path, with_module: bool, seed: int, state_size: int):

    modules, diags = lang.load([path])
    cd, typed = lang.check.check_typed(modules)
    diags = list(diags) + list(cd)
    if has_errors(diags):
        return [], diags
    envs = [LoadedEnv(e, "forge", types=_types_of(typed, e)) for m in modules for e in m.envs]
    if with_module:
        for le in envs:
            _compile_in_memory(le, seed, state_size)
    return envs, diags


def _from_docs(path: Path, with_module: bool, seed: int, state_size: int):

    irs, diags = read_paths([path])
    diags = list(diags)
    if has_errors(diags):
        return [], diags
    out = []
    for ir_env in irs:
        decl, sd = synthesize(ir_env)
        diags += [d for d in sd if d.is_error]
        # round-trip through the canonical text: exactly what `forgec compile` would check and build
        text = lang.format(A.Module(f"{ir_env.name}.forge", (decl,)))
        mod, pd = lang.parse(text, f"<synthesized {ir_env.name}>")
        cd, typed = lang.check.check_typed([mod]) if not has_errors(pd) else ([], None)
        if has_errors(pd + cd) or not mod.envs:
            diags += [d for d in pd + cd if d.is_error]
            continue
        le = LoadedEnv(mod.envs[0], "docs", types=_types_of(typed, mod.envs[0]))
        if with_module:
            _compile_in_memory(le, seed, state_size)
        out.append(le)
    return out, diags


def _types_of(typed, decl) -> Any:
    """The EnvTypes `check_typed` computed for this very declaration (None: codegen checks it itself)."""
    et = typed.envs.get(decl.name) if typed is not None else None
    return et if et is not None and et.env is decl else None


def _compile_in_memory(le: LoadedEnv, seed: int, state_size: int) -> None:
    """Codegen into a scratch folder, verify (dropping failing tools), and generate the world state."""

    scratch = Path(tempfile.mkdtemp(prefix="forgec-sample-"))
    try:
        p = scratch / "env.py"
        p.write_text(emit_env(le.decl, f"{le.decl.name}.forge", et=le.types), encoding="utf-8")
        le.module = load_env_module(p)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report = verify_env(le.module, le.decl, seed=seed, calls_per_tool=20)  # as `forgec compile` does
    le.exclude = {t.tool for t in report.tools if not t.verified}
    le.writes = dict(getattr(le.module, "WRITES_STATE", {}) or {}) or None
    le.world = generate_state(le.module.SCHEMA, seed=seed, size=state_size)
