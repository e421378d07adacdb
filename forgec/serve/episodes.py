"""Episode mode of `forgec serve`: the episode `forgec eval` runs, with the agent's tool calls arriving over MCP.

A harness (trainer, evaluator) starts an episode for a task on a session whose id it
chose. It gets what `forgec eval` hands an agent at its first turn: eval's system
prompt and the simulated user's first message (`messages`) and the env's tool
schemas (`tools`). Then, turn by turn, as its agent answers:

* an assistant message that calls tools: `say(content)` opens the turn (its text is
  said to the user, who does not answer), then each call is an MCP `tools/call` on
  that session, which joins the turn (a call with no `say` before it opens a turn
  with no text);
* an assistant message without calls: `user_turn(content)`, the simulated user's
  answer comes back, with `stop` when the user ended the conversation;
* `score()`: the reward `forgec eval` gives the same episode, and the judge's verdict.

Nothing here re-implements the episode: the transcript is built by
`runtime/episode.py`'s own steps (`accept_reply` records an agent turn,
`user_turn` asks the user and adds the stop marker, `run_calls` runs a call
under the tool-call budget, `score_episode` computes the reward against gold), with
eval's users (`runtime/users.py`), judge and limits, so the same turns give the
same messages, the same end reason and the same reward.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from forgec.runtime.episode import (agent_system_prompt, build_policy, END_MAX_TURNS, END_USER_STOP, Episode, EpisodeFailure, EpisodeLimits,
                                    accept_reply, clean_call, run_calls, score_episode)
from forgec.runtime.episode import user_turn as eval_user_turn
from forgec.runtime.judge import JudgeVerdict, RuleJudge
from forgec.runtime.toolcalls import MAX_CALLS_PER_TURN, CallOutcome, to_openai_message
from forgec.runtime.types import AgentReply, ToolCall
from forgec.runtime.users import ScriptedUser
from forgec.tasks import Task

BUDGET_TEXT = "Error: tool-call budget exhausted"  # the tool message eval records for a call past a budget


@dataclass
class EpisodeConfig:
    """How a server plays episodes: eval's defaults (the scripted user, the rule judge, 30 turns, 50 tool calls).

    `user_factory(task)` makes the simulated user (`forgec serve --user`, as `forgec eval --user`); `judge` is
    the MEU judge or None (`--judge`)."""

    user_factory: Callable[[Task], Any] = ScriptedUser
    judge: Any = field(default_factory=RuleJudge)
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)


def limits_from(base: EpisodeLimits, max_turns: Any = None, max_tool_calls: Any = None) -> EpisodeLimits:
    """`base` with a harness's limits for one episode (positive integers); ValueError for anything else."""
    out = {}
    for name, v in (("max_turns", max_turns), ("max_tool_calls", max_tool_calls)):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer, not {v!r}")
        out[name] = v
    return EpisodeLimits(**{"max_turns": base.max_turns, "max_tool_calls": base.max_tool_calls, "max_tokens": base.max_tokens, **out})


class EpisodeRun:
    """One eval episode on a session: the transcript (`ep`, a `runtime.episode.Episode`), the user, the judge."""

    def __init__(self, task: Task, tools: list[dict], user: Any, judge: Any, limits: EpisodeLimits):
        self.task, self.tools, self.user, self.judge, self.limits = task, tools, user, judge, limits
        self.system_prompt = agent_system_prompt()
        self.ep = Episode(task_id=task.id, env=task.env, seed=0)
        self.done = False
        self._turn: int | None = None  # index in ep.messages of the open assistant message (tool calls join it)
        self._t0 = time.perf_counter()

    @classmethod
    async def start(cls, task: Task, tools: list[dict], config: EpisodeConfig, limits: EpisodeLimits | None = None,
                    policy: str = "") -> EpisodeRun:
        """The episode at its first agent turn: eval's system prompt (with the env's policy), then the simulated
        user's opening."""
        run = cls(task, tools, config.user_factory(task), config.judge, limits or config.limits)
        run.system_prompt = agent_system_prompt(policy)
        run.ep.messages.append({"role": "system", "content": run.system_prompt})
        if not await run._ask_user():
            run._end()
        return run

    # ------------------------------------------------------------------ what the harness sends

    def first(self) -> dict:
        """What `forgec eval` hands the agent at its first turn: the messages so far and the tool schemas."""
        return {**self.status(), "system_prompt": self.system_prompt, "messages": [dict(m) for m in self.ep.messages],
                "tools": self.tools, "user": self._last_user(), "stop": self.ep.end_reason == END_USER_STOP}

    def say(self, content: str) -> dict:
        """An assistant message whose tool calls follow (as `tools/call`): its text is said, the user does not answer."""
        self._check_text(content)
        if not self.done:
            self._open(content)
        return self.status()

    async def user_turn(self, content: str) -> dict:
        """An assistant message without tool calls: the simulated user answers it (as in eval, text with no call goes
        to the user). `user`: the user's message (None when the user failed), `stop`: the user ended the conversation."""
        self._check_text(content)
        if self.done:
            return {**self.status(), "user": None, "stop": False}
        n = len(self.ep.messages)
        if self._open(content):
            self._turn = None
            if not await self._ask_user():
                self._end()
        answered = len(self.ep.messages) > n + 1 and self.ep.messages[-1].get("role") == "user"
        return {**self.status(), "user": self.ep.messages[-1]["content"] if answered else None,
                "stop": self.ep.end_reason == END_USER_STOP}

    def call(self, env: Any, names: frozenset[str], name: str, arguments: Any) -> CallOutcome:
        """A `tools/call` of the episode's agent: one call of the open turn, run as eval runs it (`run_calls`: the
        tool-call budget, the recorded event and tool message); refused without running once the episode ended."""
        if self.done or self._turn is None and not self._open(""):
            why = f"the episode ended ({self.ep.end_reason}); the call was not run: score the session"
            return CallOutcome(ok=False, content=f"Error: {why}", error=why, kind="episode-ended")
        reply = self.ep.replies[-1]
        i = len(reply.tool_calls)
        call = ToolCall(id=f"call_{self.ep.turns - 1}_{i}", name=name, arguments=arguments)
        shown = clean_call(call)
        reply.tool_calls.append(shown)
        self.ep.messages[self._turn] = to_openai_message(reply.content or "", reply.tool_calls, reply.reasoning)
        if i >= MAX_CALLS_PER_TURN:  # eval skips a turn's calls past this many, without ending the episode
            self.ep.messages.append({"role": "tool", "tool_call_id": shown.id, "name": shown.name, "content": BUDGET_TEXT})
            return CallOutcome(ok=False, content=BUDGET_TEXT, error=f"more than {MAX_CALLS_PER_TURN} calls in one turn", kind="budget")
        n_events = len(self.ep.tool_events)
        if not run_calls(self.ep, env, names, [call], [shown], self.limits):
            self._end()
            return CallOutcome(ok=False, content=BUDGET_TEXT, error="tool-call budget exhausted (the episode ended: "
                               f"{self.ep.end_reason})", kind="budget")
        if len(self.ep.tool_events) == n_events:  # not run (cannot happen past the checks above; never a silent success)
            return CallOutcome(ok=False, content=self.ep.messages[-1]["content"], error=self.ep.messages[-1]["content"], kind="budget")
        e = self.ep.tool_events[-1]
        return CallOutcome(ok=e.ok, content=self.ep.messages[-1]["content"], result=e.result, error=e.error, kind=e.kind)

    async def score(self, build: Any, env: Any) -> dict:
        """The reward `forgec eval` gives this episode (`score_episode`: final state hash vs gold, every `tell` said), the
        state diff vs gold for a failed one, the judge's verdict, and the episode record (episodes.jsonl's format)."""
        score_episode(self.ep, build, self.task, env)
        self.ep.judge = None
        if self.judge is not None:
            t = time.perf_counter()
            try:
                v = await self.judge.judge(self.task, self.ep.messages)
            except Exception as e:  # noqa: BLE001 - as in eval: a failing judge is recorded, never fatal
                v = JudgeVerdict(user_error=False, reason="judge failed", judge="?", error=f"{type(e).__name__}: {e}")
            self.ep.judge = v
            self.ep.timings["judge_s"] += time.perf_counter() - t
        self.ep.timings["total_s"] = time.perf_counter() - self._t0
        rec = self.ep.to_json()
        return {**self.status(), "reward": self.ep.reward, **self.ep.reward_breakdown, "state_diff": self.ep.state_diff,
                "judge": rec["judge"], "user_error": self.ep.user_error, "episode": rec}

    def status(self) -> dict:
        ep = self.ep
        return {"task": ep.task_id, "env": ep.env, "turns": ep.turns, "tool_calls": ep.tool_calls, "tool_errors": ep.tool_errors,
                "done": self.done, "end_reason": ep.end_reason or None}

    # ------------------------------------------------------------------ eval's steps

    def _open(self, content: str) -> bool:
        """A new assistant turn with `content` (eval: `_agent_turn`'s turn limit, then `accept_reply`); False when
        the turn limit ended the episode."""
        if self.ep.turns >= self.limits.max_turns:
            self.ep.end_reason = END_MAX_TURNS
            self._end()
            return False
        if not accept_reply(self.ep, AgentReply(content=content)):
            self._end()
            return False
        self._turn = len(self.ep.messages) - 1
        return True

    async def _ask_user(self) -> bool:
        """Eval's `user_turn`, answered by this episode's user; False when the episode ends (stop or failure)."""
        gen = eval_user_turn(self.ep)
        _, messages = next(gen)
        t = time.perf_counter()
        try:
            answer: Any = await self.user.reply(messages)
        except Exception as e:  # noqa: BLE001 - a failing user ends the episode, recorded (as in eval)
            answer = EpisodeFailure(e)
        self.ep.timings["user_s"] += time.perf_counter() - t
        try:
            gen.send(answer)
        except StopIteration as s:
            return bool(s.value)
        raise RuntimeError("runtime.episode.user_turn asked twice")  # pragma: no cover - its contract is one question

    def _end(self) -> None:
        self.done, self._turn = True, None

    def _last_user(self) -> str | None:
        return next((m["content"] for m in reversed(self.ep.messages) if m.get("role") == "user"), None)

    @staticmethod
    def _check_text(content: Any) -> None:
        if not isinstance(content, str):
            raise ValueError(f"content must be the assistant's text (a string), not {type(content).__name__}")


_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~:-]{0,127}")


def check_session_id(sid: Any) -> str:
    """A harness-chosen session id: 1-128 characters of letters, digits and . _ ~ : - (it travels in URLs)."""
    if not isinstance(sid, str) or not _SESSION_ID.fullmatch(sid):
        raise ValueError(f"a session id is 1-128 characters of letters, digits and . _ ~ : - (starting with a letter or "
                         f"digit), not {sid!r:.80}")
    return sid


async def start_episode(table: Any, sid: str, task: Task, *, client: str = "", max_turns: Any = None,
                        max_tool_calls: Any = None) -> tuple[Any, dict]:
    """Session `sid` of `table` (made, or reset when held: a harness reuses its sessions) playing `task`'s episode;
    (the session, what the agent gets at its first turn). Refused past the table's caps like any new session."""
    check_session_id(sid)
    limits = limits_from(table.episodes.limits, max_turns, max_tool_calls)
    world = table.world_of(task)
    if table.held(sid):
        s = table.get(sid)
        s.reset(task, world=world)
    else:
        s = table.create(sid, task=task, client=client, world=world)
    s.episode = await EpisodeRun.start(task, world.tools, table.episodes, limits, policy=build_policy(world.build, world.name))
    return s, {"session": sid, **s.episode.first()}
