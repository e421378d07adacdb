"""build/manifest.json: the versioned record of a build (dbt-style target artifact).

It lets a rebuild decide what to reuse (content hashes), detect hand edits
(a file whose bytes no longer match the hash forgec wrote), and lets the
runtime refuse builds from another forgec version. The JSON Schema of
`Manifest` is written to build/schema/manifest.schema.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from forgec.diagnostics import Diagnostic
import forgec.runtime.codes  # noqa: F401 - registers missing-build / corrupt-build
from forgec.runtime import BuildError

# 1.1: EnvRecord.failed (an env that failed keeps its sources) and EnvRecord.diagnostics
# (replayed when a cached stage is reused). Readers of 1.0 read 1.1 (additive).
# 1.2: ToolRecord.title/annotations/output_schema (compiled from the docs, served by `forgec serve`); `sources`
# relative to the compile's working directory (never absolute).
MANIFEST_SCHEMA_VERSION = "1.2"


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Metadata(_M):
    schema_version: str = MANIFEST_SCHEMA_VERSION
    forgec_version: str
    generated_at: str = Field(description="UTC time of the build (excluded from determinism checks)")
    invocation_id: str = Field(description="random id of this compile (excluded from determinism checks)")
    seed: int
    options: dict[str, Any] = Field(default_factory=dict, description="the compile options that affect outputs")


class FileRecord(_M):
    path: str = Field(description="path relative to the build folder")
    hash: str = Field(description="SHA-256 of the file bytes as written (or as found, when edited by hand)")


class ToolRecord(_M):
    kind: str
    writes_state: bool
    verified: bool
    reason: str | None = None
    sampled: int = 0
    title: str | None = Field(None, description="the docs' title (MCP title, OpenAPI summary); served by `forgec serve` (1.2)")
    annotations: dict[str, Any] | None = Field(None, description="the docs' MCP annotations, verbatim (1.2)")
    output_schema: dict[str, Any] | None = Field(None, description="the docs' output schema (MCP outputSchema, OpenAI returns, "
                                                 "OpenAPI response), kept only when every recorded result validates (1.2)")


class BlueprintRecord(_M):
    path: str
    hash: str
    origin: Literal["sampled", "edited", "user"] = Field(description="sampled by forgec, sampled then edited by hand, or added by hand")
    task: str | None = Field(None, description="task id when the blueprint lowered to a task")
    rejected: str | None = Field(None, description="why it did not become a task")
    cache_key: str = ""


class EnvRecord(_M):
    sources: list[str] = Field(default_factory=list, description="documentation files this environment was read from, "
                               "relative to the working directory of the compile")
    ir_hash: str = ""
    src: FileRecord | None = None
    src_origin: Literal["synthesized", "edited"] = "synthesized"
    module: FileRecord | None = None
    state: FileRecord | None = None
    tasks: FileRecord | None = None
    policy: FileRecord | None = Field(None, description="envs/<env>/policy.md: the policy pages read beside the docs, given to "
                                      "the agent (and the simulated user) at eval time; null when the docs had none")
    tools: dict[str, ToolRecord] = Field(default_factory=dict)
    dropped_tools: list[str] = Field(default_factory=list)
    blueprints: dict[str, BlueprintRecord] = Field(default_factory=dict)
    task_count: int = 0
    rejected: dict[str, int] = Field(default_factory=dict, description="rejected blueprints by reason")
    stats: dict[str, Any] = Field(default_factory=dict, description="per-env DAG statistics (averages) and tool coverage")
    oracle: dict[str, Any] = Field(default_factory=dict, description="oracle self-check: pass rate and failures")
    keys: dict[str, str] = Field(default_factory=dict, description="stage cache keys (synth, codegen, state, sample, oracle)")
    verify: dict[str, Any] = Field(default_factory=dict)
    failed: str | None = Field(None, description="why this env failed to build (null when it built); a failed env keeps its "
                               "previous src/ and blueprints/ files, and has no module, state or tasks")
    diagnostics: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description="diagnostics of cached outputs by stage (`synth`, `sample`, `lower:<blueprint>`), replayed when they are "
        "reused; paths inside the build start with `$BUILD/`",
    )


class Manifest(_M):
    metadata: Metadata
    envs: dict[str, EnvRecord] = Field(default_factory=dict)
    parent_map: dict[str, list[str]] = Field(default_factory=dict, description="node -> the nodes it was built from (doc -> env -> blueprint -> task)")
    child_map: dict[str, list[str]] = Field(default_factory=dict)
    diagnostics: dict[str, int] = Field(default_factory=dict, description="counts by severity")


def manifest_json_schema() -> dict:
    return Manifest.model_json_schema()


# --------------------------------------------------------------------------- reading


def build_problem(code: str, message: str, where: Path | str | None, help: str = "") -> Diagnostic:
    """The same diagnostic `forgec.runtime.load` gives (code, message shape, default help) for a bad build."""

    return BuildError(code, message, str(where) if where is not None else "", help).diagnostic()


def read_manifest(build: Path) -> tuple[dict | None, list[Diagnostic]]:
    """build/manifest.json as a dict, or a missing-build / corrupt-build error worded like the runtime's."""
    mpath = build / "manifest.json"
    from forgec.swap import recover_build; recover_build(build)  # noqa: E702 - a compile killed mid-swap
    if not build.is_dir():
        what = f"build folder {str(build)!r} does not exist" if not build.exists() else f"{str(build)!r} is not a build folder"
        return None, [build_problem("missing-build", what, build if build.exists() else None,
                                     "create it with `forgec compile DOCS -o BUILD`")]
    if not mpath.is_file():
        return None, [build_problem("missing-build", f"{str(build)!r} is not a forgec build (no manifest.json)", build,
                                     "create it with `forgec compile DOCS -o BUILD`")]
    try:
        manifest = json.loads(mpath.read_bytes())
    except (OSError, ValueError) as e:
        return None, [build_problem("corrupt-build", f"manifest.json is not valid JSON: {e}", mpath)]
    if not isinstance(manifest, dict) or not isinstance(manifest.get("envs", {}), dict):
        return None, [build_problem("corrupt-build", "manifest.json is not an object with an `envs` object", mpath)]
    bad = sorted(n for n, rec in manifest.get("envs", {}).items() if not isinstance(rec, dict))
    if bad:
        return None, [build_problem("corrupt-build", f"manifest.json: env {bad[0]!r} is not an object", mpath)]
    return manifest, []
