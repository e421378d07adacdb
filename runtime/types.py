"""Data passed between the episode loop, agents, simulated users and the trainer.

Messages are OpenAI chat messages (dicts with role/content/tool_calls/tool_call_id).
An agent returns an `AgentReply`; rollout backends used for training also return
the exact generated token ids (and their logprobs) so the trainer never
re-tokenizes what the policy produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: Any  # dict when it parsed, the raw string when it did not


@dataclass
class AgentReply:
    content: str = ""  # text addressed to the user ("" when only calling tools)
    tool_calls: list[ToolCall] = field(default_factory=list)
    raw: str | None = None  # raw generated text (e.g. Hermes `<tool_call>` format), when text-based
    reasoning: str | None = None  # `<think>` content, kept for interleaved thinking
    prompt_token_ids: list[int] | None = None  # the exact prompt the policy saw (training backends)
    token_ids: list[int] | None = None  # generated token ids (training backends)
    logprobs: list[float] | None = None  # per generated token (training backends)
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens
    error: str | None = None  # the request failed (after retries); the episode ends with this error


class Agent(Protocol):
    """Anything that maps a conversation and the tool schemas to the next assistant turn."""

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply: ...


@dataclass
class UserReply:
    content: str
    stop: bool = False  # the user ends the conversation
