"""`forgec.gym`: a build's tasks as a Gymnasium environment (text in, text out; `pip install 'forgec[serve]'`).

* observation: the conversation so far, OpenAI chat messages (system prompt,
  user, assistant, tool results) as JSON text; `info["messages"]` has the list;
* action: one assistant message: a JSON object `{"content": TEXT, "tool_calls":
  [{"name": TOOL, "arguments": {...}}]}` (OpenAI-style `{"function": ...}` calls
  too), or model text: plain words for the user and/or Hermes `<tool_call>`
  blocks (what a chat model writes);
* inside `step`: the action's tool calls run in the env and, when the message
  has none, the simulated user answers; so an observation always ends where
  the agent must speak again;
* reward: 0 until the episode ends, then the reward `forgec eval` gives (gold
  state hash matched and every `tell` value said to the user), from the same
  episode loop (`runtime.episode`); `terminated` when the user stops (or a
  party failed), `truncated` when a turn/tool-call/token budget ran out.

`reset(seed=...)` picks the task deterministically from the seed (or
`options={"task": ID}`); the tasks are all of the build's, a list of task ids
or env names, or a sampler `f(np_random) -> Task | id`.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

try:
    import gymnasium as gym
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - the optional extra is missing
    raise ImportError("forgec.gym needs gymnasium: pip install 'forgec[serve]'") from e

from forgec.runtime.episode import END_MAX_TOKENS, END_MAX_TOOL_CALLS, END_MAX_TURNS, Episode, EpisodeLimits, EpisodeFailure, episode_loop
from forgec.runtime.loader import Build, load
from forgec.runtime.toolcalls import parse_hermes, parse_openai_tool_calls, to_openai_message
from forgec.runtime.types import AgentReply, ToolCall
from forgec.tasks import Task
from forgec.runtime.users import ScriptedUser

TRUNCATED = frozenset({END_MAX_TURNS, END_MAX_TOOL_CALLS, END_MAX_TOKENS})


class EpisodeStopped(Exception):
    """Thrown into the episode loop by `ForgecEnv.end_episode`: the host stopped the episode before it ended."""

MAX_TEXT = 1 << 22  # characters of an observation or action (4 Mi)


UNICODE = 0x110000  # code points 0..0x10FFFF: every character a Python str can hold (lone surrogates too)


class _Chars:
    """Every Unicode character, as `Text.character_set`/`character_list` are used (membership, length, index),
    without materializing 1.1 M characters: character i is chr(i)."""

    def __len__(self) -> int:
        return UNICODE

    def __contains__(self, c: object) -> bool:
        return isinstance(c, str) and len(c) == 1

    def __getitem__(self, i: int) -> str:
        return chr(int(i))

    def __iter__(self):
        return map(chr, range(UNICODE))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Chars)

    def __hash__(self) -> int:
        return hash(_Chars)


class ChatText(spaces.Text):
    """A `Text` space of any Unicode text up to `max_length`: its character set is every code point (character i has
    index i; padding is 0x110000), so whatever a conversation holds (an em dash, accents, emoji) is in the space and
    survives `AsyncVectorEnv`'s shared memory, flattened as code points with numpy (`flatten`, `unflatten` and the
    shared-memory readers below). `sample()` draws printable ASCII."""

    def __init__(self, max_length: int = MAX_TEXT, *, min_length: int = 0, seed: Any = None):
        super().__init__(max_length, min_length=min_length, charset=string.printable, seed=seed)
        self._sample_chars = string.printable
        self._char_set = self._char_list = _Chars()  # type: ignore[assignment]
        self._char_index = None  # type: ignore[assignment]
        self._char_str = "<any Unicode>"

    def character_index(self, char: str) -> Any:
        import numpy as np

        return np.int32(ord(char))

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        n = int(self.np_random.integers(self.min_length, min(self.max_length, 256) + 1))
        idx = self.np_random.integers(0, len(self._sample_chars), size=n)
        return "".join(self._sample_chars[i] for i in idx)

    def __repr__(self) -> str:
        return f"ChatText({self.min_length}, {self.max_length}, charset=any Unicode)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatText) and (self.min_length, self.max_length) == (other.min_length, other.max_length)

    def __hash__(self) -> int:
        return hash((ChatText, self.min_length, self.max_length))


def _encode(space: ChatText, x: str) -> Any:
    import numpy as np

    arr = np.full(space.max_length, UNICODE, dtype=np.int32)
    cps = np.frombuffer(x.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    arr[: len(cps)] = cps
    return arr


def _decode(space: ChatText, codes: Any) -> str:
    import numpy as np

    codes = np.asarray(codes)
    end = np.flatnonzero(codes >= UNICODE)
    codes = codes[: end[0]] if len(end) else codes
    return codes.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")


class _TextBatch(Sequence):
    """The observations of a vector env's copies, read from its shared memory when indexed.

    `AsyncVectorEnv` calls `read_from_shared_memory` once, at construction, and hands out that object after every
    step: numpy spaces get views of the buffer there, and Gymnasium's own `Text` reader returns a tuple of the
    strings the buffer held then (empty ones), never updated. This is a view too; `copy.deepcopy` (what
    `AsyncVectorEnv(copy=True)`, the default, returns) gives a plain tuple of the strings."""

    def __init__(self, space: ChatText, data: Any):
        self._space, self._data = space, data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(_decode(self._space, row) for row in self._data[i])
        return _decode(self._space, self._data[i])

    def __deepcopy__(self, memo: dict) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"_TextBatch({tuple(s[:40] for s in self)!r})"


def _register_vector_support() -> None:
    """Flatten/unflatten and AsyncVectorEnv shared memory for `ChatText` as numpy code points (the generic `Text`
    versions index a per-character dict and read all `max_length` slots in Python)."""
    import numpy as np
    from gymnasium.spaces.utils import flatten, unflatten
    from gymnasium.vector.utils.shared_memory import read_from_shared_memory, write_to_shared_memory

    flatten.register(ChatText)(_encode)
    unflatten.register(ChatText)(_decode)

    @read_from_shared_memory.register(ChatText)
    def _read(space: ChatText, shared_memory: Any, n: int = 1) -> "_TextBatch":
        return _TextBatch(space, np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length)))

    @write_to_shared_memory.register(ChatText)
    def _write(space: ChatText, index: int, values: str, shared_memory: Any) -> None:
        size = space.max_length
        dest = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
        np.copyto(dest[index * size:(index + 1) * size], _encode(space, values))


_register_vector_support()


def reply_to_action(reply: AgentReply) -> str:
    """An `AgentReply` (e.g. from `runtime.agents`) as an action string."""
    return json.dumps({"content": reply.content or "", "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls]},
                      ensure_ascii=False)


def parse_action(action: Any, turn: int) -> AgentReply:
    """One assistant message from an action: an AgentReply, a dict/JSON object, or model text (Hermes tool calls)."""
    if isinstance(action, AgentReply):
        return action
    obj = action
    if isinstance(action, str):
        s = action.strip()
        obj = None
        if s.startswith("{"):
            try:
                obj = json.loads(s)
            except ValueError:
                obj = None
            if not (isinstance(obj, dict) and ("content" in obj or "tool_calls" in obj)):
                obj = None
        if obj is None:
            p = parse_hermes(action, f"call_{turn}")
            return AgentReply(content=p.content, tool_calls=p.tool_calls, raw=action, reasoning=p.reasoning)
    if not isinstance(obj, dict):
        return AgentReply(error=f"an action is a string or a message object, not {type(action).__name__}")
    calls = []
    raw_calls = obj.get("tool_calls") or []
    if not isinstance(raw_calls, list):  # {"tool_calls": 5}: one call the agent is told it could not be parsed
        raw_calls = [raw_calls]
    for i, c in enumerate(raw_calls):
        if not isinstance(c, dict):  # a bad call is the agent's mistake: an error tool message, as for bad Hermes text
            calls.append(ToolCall(id=f"call_{turn}_{i}", name="", arguments=_text(c)))
        elif "function" in c:
            calls.extend(parse_openai_tool_calls([c], f"call_{turn}_{i}"))
        else:
            args = c.get("arguments", {})
            if isinstance(args, str):
                args = parse_openai_tool_calls([{"function": {"name": "", "arguments": args}}])[0].arguments
            calls.append(ToolCall(id=str(c.get("id") or f"call_{turn}_{i}"), name=c.get("name") if isinstance(c.get("name"), str) else "",
                                  arguments=args))
    content = obj.get("content")
    return AgentReply(content=content if isinstance(content, str) else "", tool_calls=calls)


def _text(v: Any) -> str:
    try:
        return json.dumps(v, ensure_ascii=False)[:200]
    except (TypeError, ValueError):
        return type(v).__name__


def _default_user(task: Task) -> Any:

    return ScriptedUser(task)


class ForgecEnv(gym.Env):
    """Tasks of a forgec build as a Gymnasium env; see the module docstring for spaces, step and reward."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, build: str | Path | Build, tasks: list[str] | Callable[[Any], Task | str] | None = None, *,
                 user: Callable[[Task], Any] = _default_user, judge: Any = None, limits: EpisodeLimits = EpisodeLimits(),
                 render_mode: str | None = None, allow_modified_build: bool = False):
        self.build = build if isinstance(build, Build) else load(build, allow_modified_build=allow_modified_build)
        self._sampler = tasks if callable(tasks) else None
        self.tasks = [] if self._sampler else self.build.tasks_for(list(tasks) if tasks else None)
        if not self._sampler and not self.tasks:
            raise ValueError(f"no tasks to play in {self.build.root}")
        self.user_factory, self.judge, self.limits = user, judge, limits
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, not {render_mode!r}")
        self.render_mode = render_mode
        self.observation_space = ChatText()
        self.action_space = ChatText()
        self.task: Task | None = None
        self.episode: Episode | None = None
        self._gen = None
        self._user = None
        self._done = True

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"reset(options=...) takes a dict such as {{'task': 'env/blueprint'}}, not {type(options).__name__}")
        super().reset(seed=seed)
        tid = (options or {}).get("task")
        if tid is not None:
            task = self._task_of(tid, "options['task']")
        elif self._sampler is not None:
            task = self._task_of(self._sampler(self.np_random), "the task sampler's result")
        else:
            task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        if self._gen is not None:  # a bad option above leaves the current episode as it was
            self._gen.close()
        self.task = task
        self._user = self.user_factory(self.task)
        self.episode = Episode(task_id=self.task.id, env=self.task.env, seed=0 if seed is None else seed)
        self._gen = episode_loop(self.episode, self.build, self.task, self.limits, self.judge is not None)
        self._done = False
        self._advance(None, first=True)
        return self._obs(), self._info()

    def _task_of(self, t: Any, what: str) -> Task:
        """A Task, or the task with id `t`; a ValueError naming `what` for anything else (Gymnasium: bad options raise)."""
        if isinstance(t, Task):
            return t
        if not isinstance(t, str):
            raise ValueError(f"{what} must be a task id string such as {self.build.tasks[0].id if self.build.tasks else 'env/blueprint'!r} "
                             f"or a Task, not {type(t).__name__} {t!r:.60}")
        return self.build.task(t)  # an unknown id: BuildError `unknown-task`, with the nearest ids

    def step(self, action: Any):
        if self._done or self._gen is None:
            raise RuntimeError("the episode is over: call reset()")
        self._advance(parse_action(action, self.episode.turns))
        reward = float(self.episode.reward) if self._done else 0.0
        terminated = self._done and self.episode.end_reason not in TRUNCATED
        truncated = self._done and self.episode.end_reason in TRUNCATED
        return self._obs(), reward, terminated, truncated, self._info()

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.episode is None:
            return None
        lines = []
        for m in self.episode.messages:
            calls = "".join(f"\n  -> {c['function']['name']}({c['function']['arguments']})" for c in m.get("tool_calls") or [])
            lines.append(f"[{m['role']}] {m.get('content') or ''}{calls}")
        return "\n".join(lines)

    def close(self) -> None:
        if self._gen is not None:
            self._gen.close()
            self._gen = None

    # ------------------------------------------------------------------ the episode loop, driven one agent turn at a time

    def tools(self) -> list[dict]:
        """The current task's tool schemas (OpenAI format), for a model's chat template."""
        return self.build.envs[self.task.env].TOOLS if self.task else []

    def end_episode(self, reason: str) -> None:
        """End the current episode now, scored on the state it reached, as `forgec eval` scores an episode that ends on
        an error (`end_reason` "error", `error` "EpisodeStopped: <reason>"): for a host loop that stops before the
        episode does (an adapter's own turn limit or timeout). An episode that already ended is left as it is."""
        if self._done or self._gen is None:
            return
        try:
            req = self._gen.throw(EpisodeStopped(reason))
            while True:  # only the judge can still be asked
                req = self._gen.send(self._answer(req))
        except StopIteration:
            self._done = True
            self._gen = None

    def _advance(self, answer: Any, first: bool = False) -> None:
        """Send the agent's answer, then play the user (and judge) until the agent must speak again or the episode ends."""
        try:
            req = next(self._gen) if first else self._gen.send(answer)
            while req[0] != "agent":
                req = self._gen.send(self._answer(req))
        except StopIteration:
            self._done = True
            self._gen = None

    def _answer(self, req: tuple[str, Any]) -> Any:
        """The user's (or judge's) answer to the episode loop's request; a failing party's exception as EpisodeFailure."""
        kind, msgs = req
        try:
            if kind == "user":
                u = self._user
                return u.reply_sync(msgs) if hasattr(u, "reply_sync") else _run(u.reply(msgs))
            return self.judge.judge_sync(self.task, msgs) if hasattr(self.judge, "judge_sync") else _run(self.judge.judge(self.task, msgs))
        except Exception as e:  # noqa: BLE001 - a failing party ends the episode, recorded (as in forgec eval)
            return EpisodeFailure(e)

    def _obs(self) -> str:
        return json.dumps(self.episode.messages, ensure_ascii=False)

    def _info(self) -> dict:
        ep = self.episode
        info: dict[str, Any] = {"task_id": ep.task_id, "env": ep.env, "turns": ep.turns, "tool_calls": ep.tool_calls,
                                "messages": [dict(m) for m in ep.messages]}
        if self._done:
            info.update(end_reason=ep.end_reason, error=ep.error, reward_breakdown=dict(ep.reward_breakdown),
                        user_error=ep.user_error)
        return info


def _run(coro):
    import asyncio

    return asyncio.run(coro)


class TaskCycle:
    """A `tasks` sampler that plays `ids` in order, one per reset, then starts over (picklable: for vector envs)."""

    def __init__(self, ids: list[str]):
        self.ids, self.i = list(ids), 0

    def __call__(self, rng: Any) -> str:
        tid = self.ids[self.i % len(self.ids)]
        self.i += 1
        return tid


def _make(build: str, tasks: Any, kwargs: dict) -> "ForgecEnv":
    return ForgecEnv(build, tasks, **kwargs)


def make_vector(build: str | Path, num_envs: int, tasks: list[str] | None = None, *, asynchronous: bool = True,
                split: bool = True, **kwargs: Any) -> Any:
    """`num_envs` copies of `ForgecEnv` as one Gymnasium vector env (`AsyncVectorEnv`: one process each, or
    `SyncVectorEnv`); each copy loads the build itself. With `split`, copy i plays tasks i, i+N, ... of `tasks`
    (ids or env names; default all) in order (`TaskCycle`), so one pass over the copies plays every task once.
    Observations and actions are `ChatText`: any Unicode goes through the vector env's shared memory.

    For LLM loops: each step is one assistant message (see the module docstring); a vector env steps all copies
    together, so batch the model's generation over `obs` (a tuple of N conversation texts)."""
    from functools import partial

    root = str(build.root if isinstance(build, Build) else build)
    ids = [t.id for t in load(root, allow_modified_build=kwargs.get("allow_modified_build", False)).tasks_for(tasks)] \
        if split else tasks
    fns = [partial(_make, root, TaskCycle(ids[i::num_envs]) if split else ids, kwargs) for i in range(num_envs)]
    if split and any(not ids[i::num_envs] for i in range(num_envs)):
        raise ValueError(f"{num_envs} envs for {len(ids)} tasks: some copies would have no task")
    return gym.vector.AsyncVectorEnv(fns) if asynchronous else gym.vector.SyncVectorEnv(fns)


# `gymnasium.make("forgec/Task-v0", build=...)` after `import forgec.gym`, or with no import:
# `gymnasium.make("forgec.gym:forgec/Task-v0", build=...)` (Gymnasium imports the module named before the colon;
# Gymnasium 1.x reads no plugin entry points). The string entry point keeps the spec picklable for vector envs.
gym.register(id="forgec/Task-v0", entry_point="forgec.gym:ForgecEnv", disable_env_checker=True)

__all__ = ["ChatText", "EpisodeStopped", "ForgecEnv", "TaskCycle", "make_vector", "parse_action", "reply_to_action", "to_openai_message"]
