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
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Generator

from forgec.runtime.judge import JudgeVerdict
from forgec.runtime.reward import compute_reward, diff_against_gold
from forgec.runtime.toolcalls import MAX_CALLS_PER_TURN, execute, scrub, text_ok, to_openai_message
from forgec.runtime.types import AgentReply, ToolCall, UserReply
from forgec.runtime.users import STOP
from forgec.tasks import Task

AGENT_SYSTEM_PROMPT = (
    "You are a customer-service agent with tools. Help the user with their request: use the tools to look things up and "
    "make changes; ask the user only for information that no tool can give you; before each change, say what you will do "
    "and ask the user to confirm; tell the user the results they asked for; when the request is done, say so."
)



def agent_system_prompt(policy: str = "") -> str:
    """The agent's system prompt: eval's instructions, then the env's policy pages (envs/<env>/policy.md, the
    docs' own rules: what may be cancelled when, where a refund goes) when the docs had any, as tau-bench gives
    its wiki to the agent."""
    policy = (policy or "").strip()
    return f"{AGENT_SYSTEM_PROMPT}\n\n# Policy\n\n{policy}" if policy else AGENT_SYSTEM_PROMPT


def build_policy(build: Any, env: str) -> str:
    """The policy text a loaded build holds for `env` ("" when none; a test double without `policies` too)."""
    return (getattr(build, "policies", None) or {}).get(env, "")


# Why an episode ended.
END_USER_STOP = "user_stop"
END_MAX_TURNS = "max_turns"
END_MAX_TOOL_CALLS = "max_tool_calls"
END_MAX_TOKENS = "max_tokens"
END_AGENT_ERROR = "agent_error"
END_USER_FAILURE = "user_failure"  # the simulated user's request failed (not an MEU error)
END_ERROR = "error"  # an unexpected exception in the runtime or env

_ENCODE_ARGS = json.JSONEncoder(ensure_ascii=False).encode


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
        if not text_ok(text):  # a lone surrogate the loop did not clean (an error text, say): the record must stay UTF-8
            text = scrub(text)
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


class EpisodeFailure:
    """An exception raised by a party, passed back into the loop instead of its answer."""

    def __init__(self, exc: BaseException):
        self.exc = exc


def _said_to_user(messages: list[dict]) -> str:
    return "\n".join(m.get("content") or "" for m in messages if m.get("role") == "assistant")


def _make_env(ep: Episode, build: Any, task: Task) -> tuple[Any, frozenset[str]] | None:
    """The task's env and its tool names; None (the episode ended with the reason) when it cannot be made."""
    t = time.perf_counter()
    try:
        env = build.new_env(task.env, task)
        names = frozenset(x["function"]["name"] for x in build.envs[task.env].TOOLS)
    except Exception as e:  # noqa: BLE001
        ep.end_reason, ep.error = END_ERROR, f"cannot create the environment: {type(e).__name__}: {e}"
        return None
    ep.timings["env_s"] += time.perf_counter() - t
    return env, names


def user_turn(ep: Episode) -> Generator[tuple[str, Any], Any, bool]:
    """Ask the user; record the reply. False when the episode ends (user stop or failure)."""
    u = yield ("user", ep.messages)
    if isinstance(u, EpisodeFailure):
        ep.end_reason, ep.error = END_USER_FAILURE, f"user failed: {type(u.exc).__name__}: {u.exc}"
        return False
    if not isinstance(u, UserReply):
        ep.end_reason, ep.error = END_USER_FAILURE, f"user returned {type(u).__name__}, not UserReply"
        return False
    text = scrub(u.content) if isinstance(u.content, str) else str(u.content)
    ep.messages.append({"role": "user", "content": text if not u.stop or STOP in text else (text + " " + STOP).strip()})
    if u.stop:
        ep.end_reason = END_USER_STOP
        return False
    return True


def clean_call(c: ToolCall) -> ToolCall:
    """`c` as it can be recorded and shown to a model again: UTF-8 text, JSON arguments (`c` itself when it already is).

    The call is still run as the agent sent it (and rejected there with an error the agent sees).
    """
    name = c.name if isinstance(c.name, str) else ""
    try:
        text = c.arguments if isinstance(c.arguments, str) else _ENCODE_ARGS(c.arguments)
    except (TypeError, ValueError, RecursionError):
        return ToolCall(id=scrub(str(c.id)), name=scrub(name), arguments="<arguments that are not JSON values>")
    if text_ok(text) and text_ok(name) and isinstance(c.id, str) and text_ok(c.id):
        return c
    try:
        args = scrub(c.arguments)
    except RecursionError:
        args = "<arguments nested too deeply>"
    return ToolCall(id=scrub(str(c.id)), name=scrub(name), arguments=args)


def accept_reply(ep: Episode, r: Any) -> bool:
    """Record the agent's reply (text made encodable). False when it ends the episode (a failure or an error reply)."""
    if isinstance(r, EpisodeFailure):
        ep.end_reason, ep.error = END_AGENT_ERROR, f"agent failed: {type(r.exc).__name__}: {r.exc}"
        return False
    if not isinstance(r, AgentReply):
        ep.end_reason, ep.error = END_AGENT_ERROR, f"agent returned {type(r).__name__}, not AgentReply"
        return False
    calls = [clean_call(c) for c in r.tool_calls]
    texts = (r.content, r.reasoning, r.raw, r.error)
    if any(a is not b for a, b in zip(calls, r.tool_calls)) or not all(x is None or text_ok(x) for x in texts):
        r = replace(r, tool_calls=calls, content=scrub(r.content), reasoning=scrub(r.reasoning), raw=scrub(r.raw), error=scrub(r.error))
    ep.replies.append(r)
    if r.error:
        ep.end_reason, ep.error = END_AGENT_ERROR, r.error
        return False
    ep.turns += 1
    ep.tokens["prompt_tokens"] += int(r.usage.get("prompt_tokens", 0))
    ep.tokens["completion_tokens"] += int(r.usage.get("completion_tokens", len(r.token_ids or ())))
    ep.messages.append(to_openai_message(r.content or "", r.tool_calls, r.reasoning))
    return True


def run_calls(ep: Episode, env: Any, names: frozenset[str], calls: list[ToolCall], shown_calls: list[ToolCall],
               limits: EpisodeLimits) -> bool:
    """Run one turn's tool calls in order (`shown_calls`: their recordable copies), recording events and tool
    messages. False when the tool-call budget ran out."""
    budget_hit = False
    t = time.perf_counter()
    for i, (c, shown) in enumerate(zip(calls, shown_calls)):
        if ep.tool_calls >= limits.max_tool_calls or i >= MAX_CALLS_PER_TURN:
            ep.messages.append({"role": "tool", "tool_call_id": shown.id, "name": shown.name, "content": "Error: tool-call budget exhausted"})
            budget_hit = budget_hit or ep.tool_calls >= limits.max_tool_calls
            continue
        ep.tool_calls += 1
        tc = time.perf_counter()
        out = execute(env, c, names)  # the call as sent: a lone surrogate or a non-JSON value is rejected there
        dt = time.perf_counter() - tc
        if not out.ok:
            ep.tool_errors += 1
        ep.tool_events.append(ToolEvent(turn=ep.turns, call_id=shown.id, name=shown.name, arguments=shown.arguments, ok=out.ok,
                                        result=out.result, error=scrub(out.error), kind=out.kind, seconds=dt))
        ep.messages.append({"role": "tool", "tool_call_id": shown.id, "name": shown.name, "content": scrub(out.content)})
    ep.timings["env_s"] += time.perf_counter() - t
    if budget_hit:
        ep.end_reason = END_MAX_TOOL_CALLS
    return not budget_hit


def _agent_turn(ep: Episode, env: Any, names: frozenset[str], limits: EpisodeLimits) -> Generator[tuple[str, Any], Any, bool]:
    """One agent turn: its reply, then its tool calls or (without calls) the user's answer. False when the episode ends."""
    if ep.turns >= limits.max_turns:
        ep.end_reason = END_MAX_TURNS
        return False
    r = yield ("agent", ep.messages)
    if not accept_reply(ep, r):
        return False
    calls = list(r.tool_calls)  # as sent; the recorded reply holds the cleaned copies (the same objects when clean)
    shown = ep.replies[-1].tool_calls
    if limits.max_tokens is not None and ep.tokens["completion_tokens"] > limits.max_tokens:
        for c in shown:
            ep.messages.append({"role": "tool", "tool_call_id": c.id, "content": "Error: token budget exhausted"})
        ep.end_reason = END_MAX_TOKENS
        return False
    if not calls:
        return (yield from user_turn(ep))
    return run_calls(ep, env, names, calls, shown, limits)


def score_episode(ep: Episode, build: Any, task: Task, env: Any) -> None:
    """Final state hash, reward against gold, and (for a failed episode) the state diff."""
    t = time.perf_counter()
    try:
        ep.final_state_hash = env.state_hash()
    except Exception as e:  # noqa: BLE001 - a broken env scores 0 with the reason, never crashes the run
        ep.end_reason, ep.error = END_ERROR, f"state_hash failed: {type(e).__name__}: {e}"
    rb = compute_reward(ep.final_state_hash, task.gold_state_hash, task.tell, _said_to_user(ep.messages), task.tell_exclude)
    ep.reward = rb.reward
    ep.reward_breakdown = rb.to_json()
    if rb.reward < 1.0 and not rb.state_match:
        try:
            ep.state_diff = diff_against_gold(build.initial_state(task), env.state, task.gold_diff)
        except Exception as e:  # noqa: BLE001
            ep.state_diff = {"error": str(e)}
    ep.timings["env_s"] += time.perf_counter() - t


def episode_loop(ep: Episode, build: Any, task: Task, limits: EpisodeLimits, want_judge: bool) -> Generator[tuple[str, Any], Any, Episode]:
    """The episode as a generator: yields ("user"|"agent", messages) or ("judge", messages), receives answers."""
    t0 = time.perf_counter()
    made = _make_env(ep, build, task)
    if made is None:
        return ep
    env, names = made
    ep.messages.append({"role": "system", "content": agent_system_prompt(build_policy(build, task.env))})
    try:
        go = yield from user_turn(ep)
        while go:
            go = yield from _agent_turn(ep, env, names, limits)
    except Exception as e:  # noqa: BLE001 - a runtime bug ends this episode, recorded
        ep.end_reason, ep.error = END_ERROR, f"{type(e).__name__}: {e}"
    score_episode(ep, build, task, env)
    if want_judge:
        v = yield ("judge", ep.messages)
        if isinstance(v, EpisodeFailure):
            ep.judge = JudgeVerdict(user_error=False, reason="judge failed", judge="?", error=f"{type(v.exc).__name__}: {v.exc}")
        else:
            ep.judge = v
    ep.timings["total_s"] = time.perf_counter() - t0
    return ep


def _has_sync(agent: Any, user: Any, judge: Any) -> bool:
    return hasattr(agent, "act_sync") and hasattr(user, "reply_sync") and (judge is None or hasattr(judge, "judge_sync"))


def run_episode_sync(build: Any, task: Task, agent: Any, user: Any, *, judge: Any = None, limits: EpisodeLimits = EpisodeLimits(),
                     seed: int = 0, trial: int = 0) -> Episode:
    """The loop without an event loop; agent/user/judge must offer act_sync/reply_sync/judge_sync."""
    ep = Episode(task_id=task.id, env=task.env, seed=seed, trial=trial)
    gen = episode_loop(ep, build, task, limits, judge is not None)
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
                answer = EpisodeFailure(e)
            dt = time.perf_counter() - t
            tm[f"{kind}_s"] += dt
            req = gen.send(answer)
    except StopIteration as s:
        return s.value


async def arun_episode(build: Any, task: Task, agent: Any, user: Any, *, judge: Any = None, limits: EpisodeLimits = EpisodeLimits(),
                       seed: int = 0, trial: int = 0) -> Episode:
    """The loop for async parties (LLM endpoints, HF models in threads); many can run concurrently."""
    ep = Episode(task_id=task.id, env=task.env, seed=seed, trial=trial)
    gen = episode_loop(ep, build, task, limits, judge is not None)
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
                answer = EpisodeFailure(e)
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
