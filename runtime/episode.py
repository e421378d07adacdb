"""The episode loop: simulated user <-> agent <-> environment, then reward and the MEU verdict.

The loop is written once, as a generator that yields what it needs next
("agent", "user", "judge") and receives the answer. Two drivers run it:
`arun_episode` awaits async agents/users (LLM endpoints, many episodes in
flight), and `run_episode` calls `act_sync`/`reply_sync` directly when every
party offers them (oracle, random, scripted user, rule judge) — no event loop,
which is what makes the compiler's oracle self-check and CPU rollouts fast.

Anything a party does wrong ends only its own episode, with `end_reason` and
`error` recorded; the env's state changes only through successful tool calls.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Generator

from forgec.runtime.judge import JudgeVerdict
from forgec.runtime.reward import compute_reward, diff_against_gold
from forgec.runtime.toolcalls import MAX_CALLS_PER_TURN, execute, to_openai_message
from forgec.runtime.types import AgentReply, ToolCall, UserReply
from forgec.runtime.users import STOP
from forgec.tasks import Task

AGENT_SYSTEM_PROMPT = (
    "You are a customer-service agent with tools. Help the user with their request: use the tools to look things up and "
    "make changes; ask the user only for information that no tool can give you; tell the user the results they asked for; "
    "when the request is done, say so."
)

# Why an episode ended.
END_USER_STOP = "user_stop"
END_MAX_TURNS = "max_turns"
END_MAX_TOOL_CALLS = "max_tool_calls"
END_MAX_TOKENS = "max_tokens"
END_AGENT_ERROR = "agent_error"
END_USER_FAILURE = "user_failure"  # the simulated user's request failed (not an MEU error)
END_ERROR = "error"  # an unexpected exception in the runtime or env


@dataclass(frozen=True)
class EpisodeLimits:
    max_turns: int = 30  # agent turns (assistant messages)
    max_tool_calls: int = 50
    max_tokens: int | None = None  # generated (completion) tokens of the agent, all turns


@dataclass
class ToolEvent:
    turn: int
    call_id: str
    name: str
    arguments: Any
    ok: bool
    result: Any = None
    error: str | None = None
    kind: str = ""  # error kind (see toolcalls.CallOutcome)
    seconds: float = 0.0


@dataclass
class Episode:
    task_id: str
    env: str
    seed: int
    trial: int = 0
    messages: list[dict] = field(default_factory=list)  # OpenAI format, system prompt first
    replies: list[AgentReply] = field(default_factory=list)  # one per assistant message (token ids for trainers)
    tool_events: list[ToolEvent] = field(default_factory=list)
    turns: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})
    timings: dict[str, float] = field(default_factory=lambda: {"total_s": 0.0, "agent_s": 0.0, "user_s": 0.0, "env_s": 0.0, "judge_s": 0.0})
    final_state_hash: str = ""
    reward: float = 0.0
    reward_breakdown: dict = field(default_factory=dict)
    state_diff: dict | None = None  # vs gold, only for failed episodes: {"missing": [...], "extra": [...]}
    end_reason: str = ""
    error: str | None = None
    judge: JudgeVerdict | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict (messages, replies with token ids, events, reward, verdict); strict JSON
        (a non-finite float a model wrote into its arguments becomes the string "NaN"/"Infinity")."""
        d = asdict(self)
        try:
            text = json.dumps(d, ensure_ascii=False, default=str, allow_nan=False)
        except ValueError:
            text = json.dumps(_finite(d), ensure_ascii=False, default=str, allow_nan=False)
        return json.loads(text)

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, d: dict) -> "Episode":
        d = dict(d)
        d["replies"] = [AgentReply(**{**r, "tool_calls": [ToolCall(**c) for c in r.get("tool_calls", [])]}) for r in d.get("replies", [])]
        d["tool_events"] = [ToolEvent(**e) for e in d.get("tool_events", [])]
        d["judge"] = JudgeVerdict(**d["judge"]) if d.get("judge") else None
        return cls(**d)

    @property
    def user_error(self) -> bool:
        """The MEU mask: True when the judge found that the simulated user erred."""
        return bool(self.judge and self.judge.user_error)


def _finite(v: Any) -> Any:
    if isinstance(v, float) and v != v or v in (float("inf"), float("-inf")):
        return str(v).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


class _Failure:
    """An exception raised by a party, passed back into the loop instead of its answer."""

    def __init__(self, exc: BaseException):
        self.exc = exc


def _said_to_user(messages: list[dict]) -> str:
    return "\n".join(m.get("content") or "" for m in messages if m.get("role") == "assistant")


def _loop(ep: Episode, build: Any, task: Task, limits: EpisodeLimits, want_judge: bool) -> Generator[tuple[str, Any], Any, Episode]:
    """The episode as a generator: yields ("user"|"agent", messages) or ("judge", messages), receives answers."""
    t0 = time.perf_counter()
    tm = ep.timings
    try:
        t = time.perf_counter()
        env = build.new_env(task.env, task)
        tools = build.envs[task.env].TOOLS
        names = frozenset(x["function"]["name"] for x in tools)
        tm["env_s"] += time.perf_counter() - t
    except Exception as e:  # noqa: BLE001
        ep.end_reason, ep.error = END_ERROR, f"cannot create the environment: {type(e).__name__}: {e}"
        return ep
    msgs = ep.messages
    msgs.append({"role": "system", "content": AGENT_SYSTEM_PROMPT})

    def user_turn() -> Generator[tuple[str, Any], Any, bool]:
        u = yield ("user", msgs)
        if isinstance(u, _Failure):
            ep.end_reason, ep.error = END_USER_FAILURE, f"user failed: {type(u.exc).__name__}: {u.exc}"
            return False
        if not isinstance(u, UserReply):
            ep.end_reason, ep.error = END_USER_FAILURE, f"user returned {type(u).__name__}, not UserReply"
            return False
        msgs.append({"role": "user", "content": u.content if not u.stop or STOP in u.content else (u.content + " " + STOP).strip()})
        if u.stop:
            ep.end_reason = END_USER_STOP
            return False
        return True

    try:
        go = yield from user_turn()
        while go:
            if ep.turns >= limits.max_turns:
                ep.end_reason = END_MAX_TURNS
                break
            r = yield ("agent", msgs)
            if isinstance(r, _Failure):
                ep.end_reason, ep.error = END_AGENT_ERROR, f"agent failed: {type(r.exc).__name__}: {r.exc}"
                break
            if not isinstance(r, AgentReply):
                ep.end_reason, ep.error = END_AGENT_ERROR, f"agent returned {type(r).__name__}, not AgentReply"
                break
            if r.error:
                ep.replies.append(r)
                ep.end_reason, ep.error = END_AGENT_ERROR, r.error
                break
            ep.turns += 1
            ep.replies.append(r)
            ep.tokens["prompt_tokens"] += int(r.usage.get("prompt_tokens", 0))
            ep.tokens["completion_tokens"] += int(r.usage.get("completion_tokens", len(r.token_ids or ())))
            calls = list(r.tool_calls)
            msgs.append(to_openai_message(r.content or "", calls, r.reasoning))
            if limits.max_tokens is not None and ep.tokens["completion_tokens"] > limits.max_tokens:
                for c in calls:
                    msgs.append({"role": "tool", "tool_call_id": c.id, "content": "Error: token budget exhausted"})
                ep.end_reason = END_MAX_TOKENS
                break
            if not calls:
                go = yield from user_turn()
                continue
            budget_hit = False
            t = time.perf_counter()
            for i, c in enumerate(calls):
                if ep.tool_calls >= limits.max_tool_calls or i >= MAX_CALLS_PER_TURN:
                    msgs.append({"role": "tool", "tool_call_id": c.id, "name": c.name if isinstance(c.name, str) else "",
                                 "content": "Error: tool-call budget exhausted"})
                    budget_hit = budget_hit or ep.tool_calls >= limits.max_tool_calls
                    continue
                ep.tool_calls += 1
                tc = time.perf_counter()
                out = execute(env, c, names)
                dt = time.perf_counter() - tc
                if not out.ok:
                    ep.tool_errors += 1
                ep.tool_events.append(ToolEvent(turn=ep.turns, call_id=c.id, name=c.name, arguments=c.arguments, ok=out.ok,
                                                result=out.result, error=out.error, kind=out.kind, seconds=dt))
                msgs.append({"role": "tool", "tool_call_id": c.id, "name": c.name, "content": out.content})
            tm["env_s"] += time.perf_counter() - t
            if budget_hit:
                ep.end_reason = END_MAX_TOOL_CALLS
                break
    except Exception as e:  # noqa: BLE001 - a runtime bug ends this episode, recorded
        ep.end_reason, ep.error = END_ERROR, f"{type(e).__name__}: {e}"

    t = time.perf_counter()
    try:
        ep.final_state_hash = env.state_hash()
    except Exception as e:  # noqa: BLE001 - a broken env scores 0 with the reason, never crashes the run
        ep.end_reason, ep.error = END_ERROR, f"state_hash failed: {type(e).__name__}: {e}"
    rb = compute_reward(ep.final_state_hash, task.gold_state_hash, task.tell, _said_to_user(msgs))
    ep.reward = rb.reward
    ep.reward_breakdown = rb.to_json()
    if rb.reward < 1.0 and not rb.state_match:
        try:
            ep.state_diff = diff_against_gold(build.initial_state(task), env.state, task.gold_diff)
        except Exception as e:  # noqa: BLE001
            ep.state_diff = {"error": str(e)}
    tm["env_s"] += time.perf_counter() - t
    if want_judge:
        v = yield ("judge", msgs)
        if isinstance(v, _Failure):
            ep.judge = JudgeVerdict(user_error=False, reason="judge failed", judge="?", error=f"{type(v.exc).__name__}: {v.exc}")
        else:
            ep.judge = v
    tm["total_s"] = time.perf_counter() - t0
    return ep


def _has_sync(agent: Any, user: Any, judge: Any) -> bool:
    return hasattr(agent, "act_sync") and hasattr(user, "reply_sync") and (judge is None or hasattr(judge, "judge_sync"))


def run_episode_sync(build: Any, task: Task, agent: Any, user: Any, *, judge: Any = None, limits: EpisodeLimits = EpisodeLimits(),
                     seed: int = 0, trial: int = 0) -> Episode:
    """The loop without an event loop; agent/user/judge must offer act_sync/reply_sync/judge_sync."""
    ep = Episode(task_id=task.id, env=task.env, seed=seed, trial=trial)
    gen = _loop(ep, build, task, limits, judge is not None)
    tm = ep.timings
    answer: Any = None
    try:
        req = next(gen)
        while True:
            kind, msgs = req
            t = time.perf_counter()
            try:
                if kind == "agent":
                    answer = agent.act_sync(msgs, build.envs[task.env].TOOLS)
                elif kind == "user":
                    answer = user.reply_sync(msgs)
                else:
                    answer = judge.judge_sync(task, msgs)
            except Exception as e:  # noqa: BLE001
                answer = _Failure(e)
            dt = time.perf_counter() - t
            tm[f"{kind}_s"] += dt
            req = gen.send(answer)
    except StopIteration as s:
        return s.value


async def arun_episode(build: Any, task: Task, agent: Any, user: Any, *, judge: Any = None, limits: EpisodeLimits = EpisodeLimits(),
                       seed: int = 0, trial: int = 0) -> Episode:
    """The loop for async parties (LLM endpoints, HF models in threads); many can run concurrently."""
    ep = Episode(task_id=task.id, env=task.env, seed=seed, trial=trial)
    gen = _loop(ep, build, task, limits, judge is not None)
    tm = ep.timings
    try:
        req = next(gen)
        while True:
            kind, msgs = req
            t = time.perf_counter()
            try:
                if kind == "agent":
                    answer: Any = await agent.act(msgs, build.envs[task.env].TOOLS)
                elif kind == "user":
                    answer = await user.reply(msgs)
                else:
                    answer = await judge.judge(task, msgs)
            except asyncio.CancelledError:
                gen.close()
                raise
            except Exception as e:  # noqa: BLE001
                answer = _Failure(e)
            dt = time.perf_counter() - t
            tm[f"{kind}_s"] += dt
            req = gen.send(answer)
    except StopIteration as s:
        return s.value


def run_episode(build: Any, task: Task, agent: Any, user: Any, *, judge: Any = None, limits: EpisodeLimits = EpisodeLimits(),
                seed: int = 0, trial: int = 0) -> Episode:
    """One episode; synchronous when every party can be (fast path), else through asyncio.

    From inside a running event loop, use `arun_episode`.
    """
    if _has_sync(agent, user, judge):
        return run_episode_sync(build, task, agent, user, judge=judge, limits=limits, seed=seed, trial=trial)
    return asyncio.run(arun_episode(build, task, agent, user, judge=judge, limits=limits, seed=seed, trial=trial))
