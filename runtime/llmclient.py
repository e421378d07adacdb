"""One way to call an OpenAI-compatible chat endpoint: timeouts, retries with backoff, no surprises.

All runtime LLM traffic (agents, simulated users, judges) goes through `chat()`.
The official `openai.AsyncOpenAI` client does the HTTP; its own retries are
off so this module decides, uniformly: 429, 5xx, timeouts and connection
errors are retried with exponential backoff and jitter (honouring a short
`Retry-After`); other 4xx fail at once. After the last attempt `LLMError`
carries a one-line reason that the episode records.
"""

from __future__ import annotations

import asyncio
import os
import random
import weakref
from dataclasses import dataclass
from typing import Any

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class LLMError(Exception):
    """A chat request failed for good; `str(e)` says why (status, message, attempts)."""


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    backoff_s: float = 0.5  # first wait; doubles each retry
    max_backoff_s: float = 8.0
    jitter: float = 0.25  # +- fraction of each wait


def make_client(base_url: str, api_key: str | None = None, timeout: float = 60.0) -> Any:
    """An AsyncOpenAI client with a per-request timeout and the SDK's own retries off."""
    import openai

    key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
    return openai.AsyncOpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=0)


class LazyClient:
    """An AsyncOpenAI client per event loop, made on first use and remade after it was closed.

    Parties (agents, users, judges) hold one of these, so they can be reused
    across `asyncio.run` calls (each eval run closes its clients at the end).
    """

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 60.0):
        self.base_url, self.api_key, self.timeout = base_url, api_key, timeout
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> Any:
        loop = asyncio.get_running_loop()
        c = self._client
        if c is None or self._loop is not loop or c.is_closed():
            c = self._client = make_client(self.base_url, self.api_key, self.timeout)
            self._loop = loop
        return c


# Clients and the event loop they first ran on, so they can be closed on that loop
# (an httpx client GC'd later, under another loop, would try to close its sockets there).
_LOOP_OF: "weakref.WeakKeyDictionary[Any, asyncio.AbstractEventLoop]" = weakref.WeakKeyDictionary()


async def aclose_clients() -> int:
    """Close every client that ran on the current event loop; returns how many. Call when a run ends."""
    loop = asyncio.get_running_loop()
    mine = [c for c, lp in list(_LOOP_OF.items()) if lp is loop]
    for c in mine:
        _LOOP_OF.pop(c, None)
        try:
            await c.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
    return len(mine)


def _retry_after(e: Exception) -> float | None:
    resp = getattr(e, "response", None)
    if resp is None:
        return None
    try:
        v = resp.headers.get("retry-after")
        return float(v) if v is not None else None
    except (ValueError, AttributeError):
        return None


def _describe(e: Exception) -> str:
    status = getattr(e, "status_code", None)
    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
    if len(msg) > 300:
        msg = msg[:300] + "..."
    return f"HTTP {status}: {msg}" if status else f"{type(e).__name__}: {msg}"


def is_retryable(e: Exception) -> bool:
    import openai

    if isinstance(e, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    if isinstance(e, openai.APIStatusError):
        return e.status_code in RETRYABLE_STATUS or e.status_code >= 500
    return False


async def chat(client: Any, policy: RetryPolicy = RetryPolicy(), rng: random.Random | None = None, **kwargs: Any) -> Any:
    """`client.chat.completions.create(**kwargs)` with retries; returns the completion or raises LLMError."""
    rng = rng or random.Random(0)
    if client not in _LOOP_OF:
        _LOOP_OF[client] = asyncio.get_running_loop()
    attempts = policy.max_retries + 1
    last: Exception | None = None
    for attempt in range(attempts):
        try:
            resp = await client.chat.completions.create(**kwargs)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - classified below
            last = e
            if not is_retryable(e) or attempt == attempts - 1:
                break
            wait = min(policy.max_backoff_s, policy.backoff_s * (2**attempt))
            ra = _retry_after(e)
            if ra is not None:
                wait = min(policy.max_backoff_s, max(wait, ra))
            wait *= 1 + policy.jitter * (2 * rng.random() - 1)
            await asyncio.sleep(max(0.0, wait))
            continue
        if not getattr(resp, "choices", None):
            last = LLMError("the endpoint returned no choices")
            if attempt == attempts - 1:
                break
            continue
        return resp
    assert last is not None
    n = attempt + 1
    raise LLMError(f"{_describe(last)} (after {n} attempt{'s' if n != 1 else ''})") from last


def usage_of(resp: Any) -> dict[str, int]:
    u = getattr(resp, "usage", None)
    if u is None:
        return {}
    return {k: int(getattr(u, k, 0) or 0) for k in ("prompt_tokens", "completion_tokens")}
