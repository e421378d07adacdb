"""A forgec build as a verifiers environment (PrimeIntellect's `verifiers` 0.4, the `verifiers.v1` API).

verifiers 0.4 has no `MultiTurnEnv`/`ToolEnv`/`Rubric` any more; an environment is a taskset plugin (docs/v1 of
verifiers, its skills/create-environments: "`load_environment(**kwargs)` -> exported `vf.Taskset` class + typed
config; `Rubric` reward function -> task `@vf.reward`; `MultiTurnEnv.env_response` -> an interaction loop in the
env's `run()`; dict state -> typed `vf.State`"). Here, one build:

* `ForgecTaskset` (config `--env.taskset.build BUILD`, `.tasks`): one `ForgecTask` per forgec task; its prompt is
  `forgec eval`'s, eval's system prompt and the scripted user's opening (the `prompt` column of `forgec export hf`);
* per rollout, `ForgecTask.setup` puts a fresh `forgec.gym.ForgecEnv` in the trace's `ForgecState`: the task's env
  at its initial state, the scripted user, the episode loop of `forgec eval` (`runtime.episode`);
* `ForgecHarness` (the taskset's default harness) is the agent: in-process, it sends the episode's conversation and
  the env's tools to the model through the rollout's interception endpoint (so verifiers records every call on the
  trace) with `runtime.agents.OpenAIAgent`, and steps the episode with each reply: tool calls run on the rollout's
  env, and a reply without tool calls is answered by the scripted user; it yields to the env at that answer;
* `ForgecEnv.run` is the user side of verifiers' interaction: it relays each scripted-user answer as the next turn,
  until the user stops (or the episode hits its turn/tool-call budget);
* `ForgecTask.reward` is the episode's reward, `runtime.reward` on the end state (gold state hash matched and every
  `tell` value said to the user), as `forgec eval` computes it; metrics: state_match, tells_told, turns,
  tool_calls, tool_errors; `trace.info["forgec"]` holds the episode's end reason and reward breakdown.

`load_environment(build, env=None, ...)` returns the `vf.Env`; verifiers' CLI takes the plugin id
`forgec-verifiers` (`eval forgec-verifiers --env.taskset.build build/ ...`). Rollouts run in the subprocess runtime
(nothing is executed for the model; tools are the build's, run in this process).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

import verifiers.v1 as vf
from forgec.gym import ForgecEnv as GymEnv
from forgec.runtime.agents import OpenAIAgent
from forgec.runtime.episode import EpisodeLimits, agent_system_prompt, build_policy
from forgec.runtime.loader import Build, BuildError, load
from forgec.runtime.scenario import opening
from forgec.tasks import Task as ForgecTaskRecord

PLUGIN_ID = "forgec-verifiers"  # the top-level module forgec_verifiers, what verifiers' loader imports for this id

_BUILDS: dict[tuple[str, bool], Build] = {}


def open_build(build: str | Path, allow_modified_build: bool = False) -> Build:
    """The build at `build`, loaded once per process (a BuildError, with what to do, when it cannot be used)."""
    if not str(build).strip():
        raise BuildError("missing-build", "no build given: set the taskset's `build` (--env.taskset.build BUILD)",
                         help="a build is the folder `forgec compile DOCS -o BUILD` writes")
    key = (str(Path(build).resolve()), allow_modified_build)
    b = _BUILDS.get(key)
    if b is None:
        b = _BUILDS[key] = load(key[0], allow_modified_build=allow_modified_build)
    return b


def prompt_messages(task: ForgecTaskRecord, policy: str = "") -> list[dict]:
    """What the agent is given first in `forgec eval` (and in `forgec export hf`'s prompt column): eval's system
    prompt, then the scripted user's opening."""
    return [{"role": "system", "content": agent_system_prompt(policy)}, {"role": "user", "content": opening(task)}]


# --------------------------------------------------------------------------- task


class ForgecTaskConfig(vf.TaskConfig):
    """Run-time knobs (`--env.taskset.task.*`): the build and the episode budgets of `forgec eval`."""

    build: str = ""
    """The build folder (copied from `--env.taskset.build`)."""
    allow_modified_build: bool = False
    max_turns: int = Field(30, ge=1)
    """Agent messages per episode (`forgec eval --max-turns`)."""
    max_tool_calls: int = Field(50, ge=0)
    """Tool calls per episode (`forgec eval --max-tool-calls`)."""
    max_tokens: int | None = Field(None, ge=1)
    """Generated tokens per episode, as the endpoint reports them (`forgec eval --max-tokens`)."""


class ForgecData(vf.TaskData):
    """One forgec task: `id` is its task id (`env/blueprint`), `env` its environment; `prompt` is eval's."""

    env: str = ""


class ForgecState(vf.State):
    """Per rollout: the episode (`forgec.gym.ForgecEnv`: the env instance, the scripted user, the loop)."""

    gym: Any = None


class ForgecTask(vf.Task[ForgecData, ForgecState, ForgecTaskConfig]):
    """A forgec task: `setup` starts its episode, `finalize` ends one the rollout stopped early, `reward` scores it."""

    @property
    def key(self) -> str:
        return self.data.id or self.hash

    async def setup(self, trace: vf.Trace) -> None:
        cfg = self.config
        build = open_build(cfg.build, cfg.allow_modified_build)
        task = build.task(self.data.id)
        limits = EpisodeLimits(max_turns=cfg.max_turns, max_tool_calls=cfg.max_tool_calls, max_tokens=cfg.max_tokens)
        env = GymEnv(build, [task.id], limits=limits)
        env.reset(options={"task": task.id})
        shown = [vf.types.content_text(m.content) for m in self.data.prompt or []]
        if shown != [m["content"] for m in env.episode.messages]:
            raise ValueError(f"task {task.id!r}: the row's prompt is not the episode's opening in {build.root} "
                             "(the row comes from another build or another compile of it)")
        trace.state.gym = env

    async def finalize(self, trace: vf.Trace) -> None:
        env = trace.state.gym
        if env is None:
            return
        env.end_episode(f"verifiers stopped the rollout ({trace.stop_condition or 'no reason given'})")
        ep = env.episode
        trace.info["forgec"] = {
            "task_id": ep.task_id, "end_reason": ep.end_reason, "error": ep.error, "reward": ep.reward,
            "reward_breakdown": ep.reward_breakdown, "final_state_hash": ep.final_state_hash, "turns": ep.turns,
            "tool_calls": ep.tool_calls, "tool_errors": ep.tool_errors, "state_diff": ep.state_diff,
        }

    @vf.reward
    async def reward(self, trace: vf.Trace) -> float:
        """forgec's reward of the episode: 1.0 when the end state hashes to the gold state and every `tell` value was
        said to the user, else 0 (`runtime.reward.compute_reward`)."""
        env = trace.state.gym
        return float(env.episode.reward) if env is not None and env.episode is not None else 0.0

    @vf.metric
    async def episode(self, trace: vf.Trace) -> dict[str, float]:
        env = trace.state.gym
        if env is None or env.episode is None:
            return {}
        ep = env.episode
        rb = ep.reward_breakdown or {}
        told = rb.get("tells_told") or []
        return {"state_match": float(bool(rb.get("state_match"))), "tells_told": sum(map(bool, told)) / len(told) if told else 1.0,
                "turns": float(ep.turns), "tool_calls": float(ep.tool_calls), "tool_errors": float(ep.tool_errors)}


# --------------------------------------------------------------------------- taskset


class ForgecTasksetConfig(vf.TasksetConfig):
    """`--env.taskset.*`: which build, which of its tasks (env names or task ids; all when empty)."""

    build: str = ""
    tasks: list[str] = Field(default_factory=list)
    task: ForgecTaskConfig = ForgecTaskConfig()

    @model_validator(mode="after")
    def _build_for_tasks(self) -> "ForgecTasksetConfig":
        if self.build and not self.task.build:
            self.task = self.task.model_copy(update={"build": self.build})
        return self


class ForgecTaskset(vf.Taskset[ForgecTask, ForgecTasksetConfig]):
    """A build's tasks, in build order (ids sorted), each with `forgec eval`'s opening as its prompt."""

    def load(self) -> list[ForgecTask]:
        cfg = self.config
        build = open_build(cfg.task.build or cfg.build, cfg.task.allow_modified_build)
        chosen = build.tasks_for(list(cfg.tasks) or None)  # an unknown id or env: BuildError unknown-task
        return [ForgecTask(ForgecData(id=t.id, name=t.id, env=t.env, prompt=prompt_messages(t, build_policy(build, t.env))), cfg.task) for t in chosen]


# --------------------------------------------------------------------------- harness: the agent side of the episode


class ForgecHarnessConfig(vf.HarnessConfig):
    """`--env.agent.harness.*`: how the model is asked (as `forgec eval --agent openai`)."""

    tool_format: Literal["openai", "hermes"] = "openai"
    """`openai`: the tools as the API's `tools`, calls from `message.tool_calls`; `hermes`: in the system prompt."""
    temperature: float = 0.0
    max_tokens: int | None = None
    """Completion tokens per model call."""
    request_timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(4, ge=0)


class ForgecHarness(vf.Harness[ForgecHarnessConfig]):
    """The agent of a forgec episode, in-process: each model reply is one step of the rollout's `forgec.gym`
    episode (its tool calls run on the rollout's env); a segment ends when the scripted user has answered a reply
    without tool calls, or when the episode ended. Every model call goes through the rollout's interception
    endpoint, so the trace records it (the contract `Harness.launch` states for in-process loops)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: Any, trace: vf.Trace, runtime: Any, endpoint: str, secret: str, mcp_urls: dict[str, str],
                     data: vf.TaskData) -> vf.ProgramResult:
        env = getattr(trace.state, "gym", None)
        if env is None:
            raise vf.HarnessError(f"harness {self.config.id!r} plays forgec tasks only: this rollout has no forgec episode "
                                  f"(task type {trace.task.type})")
        cfg = self.config
        agent = OpenAIAgent(endpoint, ctx.model, api_key=secret, tool_format=cfg.tool_format, temperature=cfg.temperature,
                            timeout=cfg.request_timeout, max_retries=cfg.max_retries, max_tokens=cfg.max_tokens)
        replies = 0
        while env.episode is not None and not _over(env):
            reply = await agent.act(env.episode.messages, env.tools())
            env.step(reply)
            replies += 1
            if not reply.tool_calls:  # the user answered (or the episode ended): the user's turn is the env's
                break
        return vf.ProgramResult(exit_code=0, stdout=f"{replies} model replies", stderr="")

    async def resume(self, ctx: Any, trace: vf.Trace, runtime: Any, endpoint: str, secret: str, mcp_urls: dict[str, str],
                     data: vf.TaskData, messages: Any, tool_interception_url: str | None = None) -> vf.ProgramResult:
        """The user's turn is already in the episode (the env's `run` took it from the scripted user): continue it."""
        return await self.launch(ctx, trace, runtime, endpoint, secret, mcp_urls, data)


def _over(env: GymEnv) -> bool:
    return env.episode is None or bool(env.episode.end_reason)


# --------------------------------------------------------------------------- env: the user side


class ForgecEnvConfig(vf.EnvConfig):
    """`--env.*`: the one agent seat (the policy), run in the subprocess runtime (it executes nothing)."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class ForgecEnv(vf.Env[ForgecEnvConfig]):
    """One forgec episode per verifiers episode: the agent opens on eval's prompt, then each scripted-user answer
    is the next turn of the interaction, until the episode ends."""

    def __init__(self, config: ForgecEnvConfig) -> None:
        super().__init__(config)
        harness = config.agent_harnesses()["agent"]
        if not isinstance(harness, ForgecHarnessConfig):
            raise ValueError(f"the agent seat runs harness {harness.id!r}, but forgec tasks are played by the {PLUGIN_ID!r} "
                             f"harness (it runs the build's tools in the rollout's env); leave --env.agent.harness.id unset")

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        async with agents.agent.interaction(task) as chat:
            segment = await chat.turn()
            while not segment.terminated:
                env = getattr(chat.trace.state, "gym", None)
                if env is None or _over(env):
                    break
                last = env.episode.messages[-1]
                if last.get("role") != "user":  # the harness yields only after the user spoke; anything else ends it
                    break
                turns = env.episode.turns
                segment = await chat.turn(last.get("content") or "")
                if env.episode.turns == turns and not _over(env):  # no reply reached the episode: it cannot move on
                    break


# --------------------------------------------------------------------------- entry point


def load_environment(build: str | Path, env: str | None = None, tasks: list[str] | None = None, *, max_turns: int = 30,
                     max_tool_calls: int = 50, max_tokens: int | None = None, allow_modified_build: bool = False,
                     agent: dict | None = None, **config: Any) -> vf.Env:
    """The verifiers `Env` of a build: its tasks (of `env`, or the ids/env names in `tasks`; all by default), one
    forgec episode per rollout, rewarded as `forgec eval` rewards it.

    `agent` overrides the agent seat's config (`{"harness": {"tool_format": "hermes"}, "max_turns": ...}`); other
    keyword arguments go to the env config (`timeout`, `retries`, ...). Run it with verifiers' own machinery:
    `async with env.serving(): await env.run_slot(env.slots(task)[0], vf.ModelContext(model=..., client=...))`.
    A build that cannot be used, an unknown env or task is a BuildError saying what to do.
    """
    b = open_build(build, allow_modified_build)
    chosen = list(tasks or [])
    if env is not None:
        if env not in b.envs:
            raise BuildError("unknown-env", f"no environment {env!r} in this build", str(b.root),
                             help=f"environments: {', '.join(sorted(b.envs)) or '(none)'}")
        picked = b.tasks_for(chosen or [env])
        if any(t.env != env for t in picked):
            other = next(t.id for t in picked if t.env != env)
            raise BuildError("unknown-task", f"task {other!r} is not a task of environment {env!r}", str(b.root))
        chosen = [t.id for t in picked]
    if not b.tasks_for(chosen or None):  # also: an unknown task id or env name, with the nearest ids
        raise BuildError("empty-build", "the build has no tasks to play", str(b.root), help="recompile with `forgec compile DOCS -o BUILD -n N`")
    seat = {"runtime": {"type": "subprocess"}, "harness": {"id": PLUGIN_ID}}
    for k, v in (agent or {}).items():
        seat[k] = {**seat[k], **v} if isinstance(v, dict) and isinstance(seat.get(k), dict) else v
    cfg = vf.resolve_env_config({
        **config,
        "taskset": {"id": PLUGIN_ID, "build": str(b.root), "tasks": chosen,
                    "task": {"build": str(b.root), "allow_modified_build": allow_modified_build, "max_turns": max_turns,
                             "max_tool_calls": max_tool_calls, "max_tokens": max_tokens}},
        "agent": seat,
    })
    return vf.load_environment(cfg)


__all__ = ["ForgecTaskset", "ForgecEnv", "ForgecHarness"]
