"""Per-session environments for `forgec serve`, with no MCP SDK in sight.

A `Session` owns one env, reset to a task's initial state (or the env's world
state when no task is chosen). Tool calls go through `runtime.toolcalls.execute`
(the same checks and transactional `Env.step` as `forgec eval`); scoring goes
through `runtime.reward.compute_reward` against the task's gold state hash and
`tell` values, so a session scores exactly as an eval episode with the same
final state and the same text said to the user would.

`SessionTable` maps session ids (the MCP `Mcp-Session-Id`, or "stdio") to
sessions, creates them lazily, and drops the least recently used ones past a
cap or after an idle timeout, so clients that vanish cannot grow the server.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from forgec.runtime.loader import Build, BuildError
from forgec.runtime.reward import compute_reward, diff_against_gold, state_diff
from forgec.runtime.toolcalls import CallOutcome, execute
from forgec.runtime.types import ToolCall
from forgec.tasks import Task


def said_to_user(messages: list[dict]) -> str:
    """What the agent said to the user in an OpenAI message list (as `forgec eval` joins it)."""
    return "\n".join(m.get("content") or "" for m in messages
                     if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content") or "", str))


class World:
    """One environment of a build: its tools and its world state (read once, checked against the manifest)."""

    def __init__(self, build: Build, env_name: str):
        if env_name not in build.envs:
            raise BuildError("unknown-env", f"no environment {env_name!r} in this build", str(build.root),
                             help=f"environments: {', '.join(sorted(build.envs)) or '(none)'}")
        self.build, self.name = build, env_name
        self.module = build.envs[env_name]
        self.tools: list[dict] = list(self.module.TOOLS)
        self.tool_names = frozenset(t["function"]["name"] for t in self.tools)
        self._world: dict | None = None

    def world_state(self) -> dict:
        """states/<env>.json, the state every task of the env starts from (checked against manifest.json)."""
        if self._world is None:
            rec = (self.build.manifest.get("envs", {}).get(self.name) or {}).get("state")
            if not isinstance(rec, dict) or not isinstance(rec.get("path"), str):
                self._world = {"entities": {}, "globals": {}}
                return self._world
            p = self.build.root / rec["path"]
            try:
                data = p.read_bytes()
            except OSError as e:
                raise BuildError("corrupt-build", f"cannot read the world state of {self.name!r}: {e.strerror or e}", str(p)) from None
            if hashlib.sha256(data).hexdigest() != rec.get("hash") and not self.build.modified:
                raise BuildError("corrupt-build", f"{rec['path']} differs from the SHA-256 in manifest.json", str(p))
            self._world = json.loads(data)
        return self._world

    def new_env(self, task: Task | None) -> Any:
        if task is None:
            return self.module.Env(self.world_state())
        return self.build.new_env(self.name, task)

    def task(self, task_id: str) -> Task:
        t = self.build.task(task_id)
        if t.env != self.name:
            raise BuildError("unknown-task", f"task {task_id!r} belongs to environment {t.env!r}, not {self.name!r}",
                             str(self.build.root), help=f"tasks of {self.name}: {self.name}/<blueprint> in tasks/{self.name}.jsonl")
        return t


@dataclass
class Session:
    """One client's environment: reset to a task (or the world state), stepped by tool calls, scored on demand."""

    id: str
    world: World
    task: Task | None = None
    env: Any = None
    calls: int = 0
    errors: int = 0
    created: float = field(default_factory=time.time)
    last_used: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.env is None:
            self.env = self.world.new_env(self.task)

    def reset(self, task: Task | None) -> None:
        self.task, self.env = task, self.world.new_env(task)
        self.calls = self.errors = 0

    def call(self, name: str, arguments: Any) -> CallOutcome:
        self.last_used = time.monotonic()
        out = execute(self.env, ToolCall(id=f"call_{self.calls}", name=name, arguments=arguments), self.world.tool_names)
        self.calls += 1
        self.errors += not out.ok
        return out

    def initial_state(self) -> dict:
        return self.world.build.initial_state(self.task) if self.task is not None else self.world.world_state()

    def info(self) -> dict:
        return {"session": self.id, "env": self.world.name, "task": self.task.id if self.task else None,
                "calls": self.calls, "tool_errors": self.errors}

    def state(self, full: bool = False) -> dict:
        """The state hash and the diff from the session's initial state (compiler diff format); the state itself if `full`."""
        out = {**self.info(), "state_hash": self.env.state_hash(),
               "initial_state_hash": self.task.initial_state_hash if self.task else None,
               "diff": state_diff(self.initial_state(), self.env.state)}
        if full:
            out["state"] = self.env.state
        return out

    def score(self, said: str) -> dict:
        """The reward `forgec eval` gives: gold state hash matched and every `tell` value in `said`; plus the diff vs gold."""
        if self.task is None:
            raise ValueError("this session has no task (it runs on the world state); reset it to a task first")
        final = self.env.state_hash()
        rb = compute_reward(final, self.task.gold_state_hash, self.task.tell, said)
        out = {**self.info(), **rb.to_json()}
        out["state_diff"] = None if rb.state_match else diff_against_gold(self.initial_state(), self.env.state, self.task.gold_diff)
        return out


class SessionTable:
    """Sessions by id: created on first use at the default task, least recently used dropped past `max_sessions`."""

    def __init__(self, world: World, default_task: Task | None, *, max_sessions: int = 10_000, idle_s: float | None = 1800.0):
        self.world, self.default_task = world, default_task
        self.max_sessions, self.idle_s = max_sessions, idle_s
        self._s: OrderedDict[str, Session] = OrderedDict()

    def get(self, sid: str, *, create: bool = True, task: Task | None = None) -> Session | None:
        s = self._s.get(sid)
        if s is not None:
            self._s.move_to_end(sid)
            return s
        if not create:
            return None
        self._reap()
        s = self._s[sid] = Session(sid, self.world, task if task is not None else self.default_task)
        return s

    def drop(self, sid: str) -> bool:
        return self._s.pop(sid, None) is not None

    def list(self) -> list[dict]:
        return [s.info() for s in self._s.values()]

    def __len__(self) -> int:
        return len(self._s)

    def _reap(self) -> None:
        now = time.monotonic()
        if self.idle_s is not None:
            for sid in [k for k, s in self._s.items() if now - s.last_used > self.idle_s]:
                del self._s[sid]
        while len(self._s) >= self.max_sessions:
            self._s.popitem(last=False)
