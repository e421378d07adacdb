"""The task file schema (build/tasks/<env>.jsonl), versioned.

A task is what the runtime and the trainer consume: an initial state, what the
simulated user knows and wants, and the gold end state computed by running the
blueprint. The JSON Schema of `Task` is written to build/schema/task.schema.json
and docs/schema/ so other tools can validate task files without forgec.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

TASK_SCHEMA_VERSION = "1.1"
# versions the runtime reads: 1.0 tasks have no `user.scenario` (runtime/users.py derives it)
TASK_SCHEMA_VERSIONS = ("1.0", "1.1")


class BlueprintRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    path: str = Field(description="blueprint path relative to the build folder")
    hash: str = Field(description="SHA-256 of the blueprint file's bytes")
    name: str = Field(description="blueprint name")


class ScenarioIntent(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    text: str = Field(description="one thing the user wants done, in the user's words")
    condition: str = Field("", description="when the user wants it (empty: always), e.g. 'the refund is more than $50'")


class UserScenario(BaseModel):
    """τ²-bench's `user_scenario`: who calls, why, what they know and do not know, and what they want."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    persona: str = Field("", description="who the user is and how they behave")
    reason_for_call: str = Field("", description="why the user calls; said first")
    known_info: dict[str, Any] = Field(default_factory=dict, description="facts the user knows and tells when asked (the blueprint's `knows`)")
    unknown_info: list[str] = Field(default_factory=list, description="what the user does not know (internal ids): said to be unknown, never volunteered")
    task_instructions: str = Field(description="the whole instruction in the user's voice (the blueprint's goal)")
    intents: list[ScenarioIntent] = Field(default_factory=list, description="what the user wants done, in order; each gold write serves one")


class UserSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    goal: str = Field(description="what the user wants, in the user's words")
    persona: str = Field("", description="how the user behaves (tone, patience)")
    facts: dict[str, Any] = Field(default_factory=dict, description="facts the user knows and may tell: exactly the literals the agent cannot obtain through tools")
    scenario: UserScenario | None = Field(None, description="the user scenario (schema 1.1; absent in 1.0 task files)")


class GoldCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    node: str = Field(description="blueprint node name")
    tool: str
    arguments: dict[str, Any]
    result: Any = None
    write: bool | None = Field(None, description="the tool changes state (its WRITES_STATE): the user confirms it first (schema 1.1; absent in 1.0)")


class DiffEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    op: Literal["add", "remove", "change"]
    path: str = Field(description="JSON-pointer-like path into the state, e.g. /entities/Order/o1/status")
    before: Any = None
    after: Any = None


class TaskStats(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    calls: int = 0
    write_calls: int = 0
    reasoning_nodes: int = 0
    inference_edges: int = 0
    depth: int = 0
    width: int = 0
    user_facts: int = 0


class Task(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal["1.0", "1.1"] = TASK_SCHEMA_VERSION
    id: str = Field(description="stable id: <env>/<blueprint name>")
    env: str
    blueprint: BlueprintRef
    seed: int
    initial_state: dict[str, Any] | None = Field(None, description="the state before the episode (inline)")
    initial_state_file: str | None = Field(None, description="path (relative to build/) of a JSON file holding a large initial state")
    initial_state_hash: str
    instruction: str = Field(description="natural-language task for the simulated user, in the user's voice")
    user: UserSpec
    gold_calls: list[GoldCall]
    gold_state_hash: str
    gold_diff: list[DiffEntry]
    tell: list[Any] = Field(default_factory=list, description="values the agent must tell the user (read-only steps)")
    tell_exclude: list[Any] = Field(default_factory=list, description="values the agent must not also tell: the other candidates of a "
                                    "tightened `tell` (forgec evolve's tighten-tell rule); absent from the task file when empty")
    read_only: bool = False
    stats: TaskStats = TaskStats()

    @model_serializer(mode="wrap")
    def _without_empty_exclude(self, handler: Any) -> Any:
        """`tell_exclude` only on a tightened task: every other task's record stays as it was."""
        d = handler(self)
        if isinstance(d, dict) and not self.tell_exclude:
            d.pop("tell_exclude", None)
        return d


def task_json_schema() -> dict:
    return Task.model_json_schema()


def state_diff(before: Any, after: Any, path: str = "") -> list[DiffEntry]:
    """Structural diff of two JSON states in the `gold_diff` format (dict keys sorted; lists compared as values).

    Here, beside the schema, because the compiler (gold diffs) and the runtime (serve, reward) both speak it."""
    out: list[DiffEntry] = []
    if before is after:
        return out
    if isinstance(before, dict) and isinstance(after, dict):
        # Only keys whose value is not the very same object are looked at: an env fork shares every
        # record it did not write with the state it was forked from, so diffing against that state
        # costs O(keys) identity tests (C speed) plus the written records, not a deep comparison of
        # every record (0.3 s per task on a 36 MB state).
        gone = _GONE
        keys = [k for k, b in before.items() if after.get(k, gone) is not b]
        keys += [k for k in after if k not in before]
        for k in sorted(keys, key=str):
            if k in before and k in after:
                b, a = before[k], after[k]
                if b == a and type(b) is type(a):
                    continue  # unchanged record: no recursive call (most keys of a changed collection)
            p = f"{path}/{_escape(str(k))}"
            if k not in after:
                out.append(DiffEntry(op="remove", path=p, before=before[k]))
            elif k not in before:
                out.append(DiffEntry(op="add", path=p, after=after[k]))
            else:
                out.extend(state_diff(before[k], after[k], p))
        return out
    if before != after or type(before) is not type(after):
        out.append(DiffEntry(op="change", path=path or "/", before=before, after=after))
    return out


_GONE = object()


def _escape(k: str) -> str:
    return k.replace("~", "~0").replace("/", "~1")
