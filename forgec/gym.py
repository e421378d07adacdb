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

TRUNCATED = frozenset({END_MAX_TURNS, END_MAX_TOOL_CALLS, END_MAX_TOKENS})
MAX_TEXT = 1 << 22  # characters of an observation or action (4 Mi)


class ChatText(spaces.Text):
    """A `Text` space of any Unicode text up to `max_length` (samples printable ASCII): chat messages are not alphanumeric."""

    def __init__(self, max_length: int = MAX_TEXT, *, min_length: int = 0, seed: Any = None):
        super().__init__(max_length, min_length=min_length, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


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
    from forgec.runtime.users import ScriptedUser

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

    def _advance(self, answer: Any, first: bool = False) -> None:
        """Send the agent's answer, then play the user (and judge) until the agent must speak again or the episode ends."""
        try:
            req = next(self._gen) if first else self._gen.send(answer)
            while req[0] != "agent":
                kind, msgs = req
                try:
                    if kind == "user":
                        u = self._user
                        ans = u.reply_sync(msgs) if hasattr(u, "reply_sync") else _run(u.reply(msgs))
                    else:
                        ans = self.judge.judge_sync(self.task, msgs) if hasattr(self.judge, "judge_sync") else _run(self.judge.judge(self.task, msgs))
                except Exception as e:  # noqa: BLE001 - a failing party ends the episode, recorded (as in forgec eval)
                    ans = EpisodeFailure(e)
                req = self._gen.send(ans)
        except StopIteration:
            self._done = True
            self._gen = None

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


gym.register(id="forgec/Task-v0", entry_point="forgec.gym:ForgecEnv", disable_env_checker=True)

__all__ = ["ChatText", "ForgecEnv", "parse_action", "reply_to_action", "to_openai_message"]
