"""Per-session environments for `forgec serve`, with no MCP SDK in sight.

A `Session` owns one env, reset to a task's initial state (or the env's world
state when no task is chosen). Tool calls go through `runtime.toolcalls.execute`
(the same checks and transactional `Env.step` as `forgec eval`); scoring goes
through `runtime.reward.compute_reward` against the task's gold state hash and
`tell` values, so a session scores exactly as an eval episode with the same
final state and the same text said to the user would.

`SessionTable` maps session ids (the MCP `Mcp-Session-Id`, "stdio", or an id a
harness chose for an episode) to sessions; it holds one `World` per served env
(one server for every env of a build), and each session belongs to one of them.
A session may run an eval episode (`episodes.EpisodeRun`): its tool calls are
then the episode's turns. The table is bounded and never surprising (issue 25):

* a session costs its writes, not the world: every env is a copy-on-write fork
  of one prototype per initial state (`EnvBase.fork`), so a thousand sessions
  on a 4 MB world hold one copy of it;
* a global cap and a per-client cap refuse a new session with `SessionError`
  (`server-full`, `client-full`) instead of evicting someone else's; only
  sessions idle past `idle_s` are reaped to make room;
* an id the table does not hold is an error (`unknown-session`), and one it
  reaped or dropped is `session-expired`: a session is never silently made
  again at its initial state with its task lost;
* each session's python tools run in their own sandbox worker (the env's
  tenant is the session), so a hostile body cannot pass one session's
  arguments or state to another through a shared worker.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from forgec.runtime.loader import Build, BuildError
from forgec.runtime.reward import compute_reward, diff_against_gold, state_diff
from forgec.runtime.toolcalls import CallOutcome, execute, parse_hermes
from forgec.runtime.types import ToolCall
from forgec.tasks import Task


def said_to_user(messages: list[dict]) -> str:
    """What the agent said to the user in an OpenAI message list (as `forgec eval` joins it).

    An assistant message's content is read by `parse_hermes`, the parser eval and training read model text with:
    a harness that posts raw model text (`<think>` blocks, `<tool_call>` text) is scored on the words to the user only.
    """
    return "\n".join(parse_hermes(m.get("content")).content if m.get("content") else "" for m in messages
                     if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content") or "", str))


class SessionError(Exception):
    """A session request the table refuses; `code` is one of unknown-session, session-expired, server-full, client-full."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


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
        self._world_proto: Any = None

    def world_state(self) -> dict:
        """states/<env>.json, the state every task of the env starts from (read by the build's one reader)."""
        if self._world is None:
            self._world = self.build.world_state(self.name)
        return self._world

    def new_env(self, task: Task | None, tenant: str | None = None) -> Any:
        """A fresh env at `task`'s initial state (or the world state): a copy-on-write fork of one prototype
        per initial state; `tenant` owns its python tools' sandbox worker."""
        if task is None:
            if self._world_proto is None:
                self._world_proto = self.module.Env(self.world_state())
                self._world_proto.state_hash()  # digests once; forks inherit them
            proto = self._world_proto
            env = proto.fork() if hasattr(proto, "fork") else self.module.Env(self.world_state())
        else:
            env = self.build.new_env(self.name, task)
        if tenant is not None:
            env._TENANT = f"{self.module.__name__}#{tenant}"
        return env

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
    client: str = ""
    env: Any = None
    calls: int = 0
    errors: int = 0
    created: float = field(default_factory=time.time)
    last_used: float = field(default_factory=time.monotonic)
    episode: Any = None  # an `episodes.EpisodeRun` while the session plays an eval episode

    def __post_init__(self) -> None:
        if self.env is None:
            self.env = self.world.new_env(self.task, self.id)

    def reset(self, task: Task | None, world: World | None = None) -> None:
        """The session's env afresh at `task` (None: the world state), in `world` when given (another env of the
        build: the session changes env); any episode it was playing ends."""
        if world is not None and world is not self.world:
            _release_sandbox(self.env)
            self.world = world
        if task is not None and task.env != self.world.name:
            self.world.task(task.id)  # raises unknown-task, naming the task's env
        self.task, self.env = task, self.world.new_env(task, self.id)
        self.calls = self.errors = 0
        self.episode = None
        self.last_used = time.monotonic()

    def call(self, name: str, arguments: Any) -> CallOutcome:
        """One tool call: `Env.step` through `runtime.toolcalls.execute`; in an episode, also one of its turns'
        calls (recorded, held to eval's budgets; refused once the episode ended)."""
        self.last_used = time.monotonic()
        if self.episode is not None:
            out = self.episode.call(self.env, self.world.tool_names, name, arguments)
        else:
            out = execute(self.env, ToolCall(id=f"call_{self.calls}", name=name, arguments=arguments), self.world.tool_names)
        self.calls += 1
        self.errors += not out.ok
        return out

    def initial_state(self) -> dict:
        return self.world.build.initial_state(self.task) if self.task is not None else self.world.world_state()

    def info(self) -> dict:
        out = {"session": self.id, "env": self.world.name, "task": self.task.id if self.task else None,
               "calls": self.calls, "tool_errors": self.errors}
        if self.episode is not None:
            out["episode"] = self.episode.status()
        return out

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
        rb = compute_reward(final, self.task.gold_state_hash, self.task.tell, said, self.task.tell_exclude)
        out = {**self.info(), **rb.to_json()}
        out["state_diff"] = None if rb.state_match else diff_against_gold(self.initial_state(), self.env.state, self.task.gold_diff)
        return out


class SessionTable:
    """Sessions by id, bounded: `max_sessions` in all and `max_per_client` per client address; idle ones reaped.

    `create` is the only way in (the MCP transport calls it for a session id its own
    handshake issued, the evaluation channel for an episode's id); `get` of an id not held raises `SessionError`.

    `worlds`: one World, or several (one server for every env of a build); `world` is the only one, else None
    (then every session names its env: by its task, or explicitly). `episodes`: how episodes are played
    (`episodes.EpisodeConfig`: the simulated user, the judge and the limits of `forgec eval`).
    """

    def __init__(self, worlds: World | list[World] | dict[str, World], default_task: Task | None, *, max_sessions: int = 1000,
                 max_per_client: int | None = None, idle_s: float | None = 1800.0, episodes: Any = None):
        if isinstance(worlds, World):
            worlds = [worlds]
        self.worlds: dict[str, World] = dict(worlds) if isinstance(worlds, dict) else {w.name: w for w in worlds}
        if not self.worlds:
            raise ValueError("a session table needs at least one world")
        self.world: World | None = next(iter(self.worlds.values())) if len(self.worlds) == 1 else None
        self.build: Build = next(iter(self.worlds.values())).build
        if episodes is None:
            from forgec.serve.episodes import EpisodeConfig

            episodes = EpisodeConfig()
        self.episodes = episodes
        self.default_task = default_task
        self.max_sessions, self.idle_s = max_sessions, idle_s
        self.max_per_client = max_per_client if max_per_client is not None else max_sessions
        self._s: OrderedDict[str, Session] = OrderedDict()
        self._gone: OrderedDict[str, str] = OrderedDict()  # ids reaped or dropped -> why (bounded memory of them)
        self._per_client: Counter[str] = Counter()  # live sessions per client address

    @property
    def multi(self) -> bool:
        """Whether this table serves several envs (sessions then name theirs)."""
        return len(self.worlds) > 1

    def with_episode(self, sid: str) -> Session:
        """The live session `sid` with its episode; `SessionError` (`no-episode`) for a session that plays none."""
        s = self.get(sid)
        if s.episode is None:
            raise SessionError("no-episode", f"session {sid!r} plays no episode (a reset ends one): start one with "
                                             "forgec/episode/start (POST /forgec/episode)")
        return s

    def tasks_listing(self, env: str | None = None) -> list[dict]:
        """The served envs' tasks (or `env`'s): id, env, instruction, the user's goal and facts, read_only."""
        if env is not None:
            self.world_named(env)
        return [{"id": t.id, "env": t.env, "instruction": t.instruction, "user": t.user.model_dump(mode="json"),
                 "read_only": t.read_only} for t in self.build.tasks if t.env in self.worlds and (env is None or t.env == env)]

    def world_named(self, name: str) -> World:
        """The served world `name`; BuildError `unknown-env` naming the served ones."""
        w = self.worlds.get(name)
        if w is None:
            raise BuildError("unknown-env", f"this server serves no environment {name!r}", str(self.build.root),
                             help=f"environments: {', '.join(self.worlds)}")
        return w

    def task(self, task_id: str) -> Task:
        """A task of a served env (BuildError `unknown-task` for an unknown id or a task of an env not served)."""
        if self.world is not None:
            return self.world.task(task_id)
        t = self.build.task(task_id)
        if t.env not in self.worlds:
            raise BuildError("unknown-task", f"task {task_id!r} belongs to environment {t.env!r}, which this server does not serve",
                             str(self.build.root), help=f"environments: {', '.join(self.worlds)}")
        return t

    def world_of(self, task: Task | None, world: World | None = None) -> World:
        """The world a new session at `task` lives in: `world`, else the task's env, else the only one."""
        w = world or (self.worlds.get(task.env) if task is not None else None) or self.world
        if w is None:
            raise SessionError("no-env", f"this server serves {len(self.worlds)} environments and the session names none: "
                                         f"connect to /mcp/<env> ({', '.join(self.worlds)}) or name a task")
        if task is not None:
            w.task(task.id)  # a task of another env: unknown-task, naming its env
        return w

    def create(self, sid: str, *, task: Task | None = None, client: str = "", world: World | None = None) -> Session:
        """A new session at `task` (default: the table's task) in `world` (default: the task's env, or the only one);
        refused past a cap, never by evicting a live session."""
        if sid in self._s:
            raise SessionError("session-exists", f"session {sid!r} exists already")
        task = task if task is not None else self.default_task
        w = self.world_of(task, world)
        self.reap()
        if len(self._s) >= self.max_sessions:
            raise SessionError("server-full", f"the server holds {len(self._s)} sessions, its --max-sessions; "
                                              "end one (DELETE /forgec/sessions/ID) or wait for idle ones to be reaped")
        if client and self._per_client[client] >= self.max_per_client:
            raise SessionError("client-full", f"this client holds {self.max_per_client} sessions, the per-client cap "
                                              "(--max-sessions-per-client); end one first")
        self._gone.pop(sid, None)
        s = self._s[sid] = Session(sid, w, task, client=client)
        self._per_client[client] += 1
        return s

    def open(self, sid: str, task: Callable[[], Task | None], client: str = "", world: World | None = None) -> Session:
        """The session a transport request names: the live one, else a new one at `task()` (in `world`) for an id
        never seen; `session-expired` for an id the table let go (never made again fresh)."""
        if sid in self._s or sid in self._gone:
            return self.get(sid)
        return self.create(sid, task=task(), client=client, world=world)

    def get(self, sid: str) -> Session:
        """The live session `sid`; `SessionError` if the table never held it or let it go."""
        s = self._s.get(sid)
        if s is None:
            why = self._gone.get(sid)
            if why is not None:
                raise SessionError("session-expired", f"session {sid!r} ended ({why}); its state is gone: start a new session")
            raise SessionError("unknown-session", f"no session {sid!r}")
        if self.idle_s is not None and time.monotonic() - s.last_used > self.idle_s:
            self._forget(sid, f"idle for more than {self.idle_s:g} s")
            raise SessionError("session-expired", f"session {sid!r} ended (idle for more than {self.idle_s:g} s); "
                                                  "its state is gone: start a new session")
        self._s.move_to_end(sid)
        s.last_used = time.monotonic()
        return s

    def held(self, sid: str) -> bool:
        return sid in self._s

    def drop(self, sid: str) -> bool:
        if sid not in self._s:
            return False
        self._forget(sid, "dropped by the harness")
        return True

    def list(self) -> list[dict]:
        return [s.info() for s in self._s.values()]

    def __len__(self) -> int:
        return len(self._s)

    def reap(self) -> int:
        """Forget sessions idle past `idle_s`; how many went."""
        if self.idle_s is None:
            return 0
        now = time.monotonic()
        old = [k for k, s in self._s.items() if now - s.last_used > self.idle_s]
        for sid in old:
            self._forget(sid, f"idle for more than {self.idle_s:g} s")
        return len(old)

    def _forget(self, sid: str, why: str) -> None:
        s = self._s.pop(sid)
        self._per_client[s.client] -= 1
        if not self._per_client[s.client]:
            del self._per_client[s.client]
        _release_sandbox(s.env)
        self._gone[sid] = why
        while len(self._gone) > 100_000:
            self._gone.popitem(last=False)


def _release_sandbox(env: Any) -> None:
    """Close the sandbox worker of a session's python tools, if one was started."""
    tenant = getattr(env, "_TENANT", None)
    if tenant:
        from forgec.runtime import sandbox

        release = getattr(sandbox, "release", None)
        if release is not None:
            release(tenant)
