"""Tool calls in, tool messages out: parsing both wire formats and running calls safely.

Two formats reach the runtime:
* OpenAI `tool_calls` (from the chat completions API or a dict message);
* Hermes/Qwen text: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`,
  several per message, optionally after a `<think>...</think>` block.

Whatever the model wrote, `execute` never raises: malformed JSON, an unknown
tool, a non-object or oversized argument list, or a ToolError from the env
becomes an error message for the agent, with the env state unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from forgec.runtime.types import ToolCall

MAX_ARGUMENT_CHARS = 16_384  # a call's arguments, as JSON text; larger is an error, not a DoS
MAX_ARGUMENT_DEPTH = 32
MAX_NAME_CHARS = 128
MAX_CALLS_PER_TURN = 32

_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode  # built once: json.dumps re-creates it per call
_ENCODE_UNSORTED = json.JSONEncoder(ensure_ascii=False).encode
_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_THINK_RE = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.DOTALL)
_NAME_RE = re.compile(r'"name"\s*:\s*"([^"\\]{1,128})"')
_SURROGATE_RE = re.compile("[\ud800-\udfff]")  # in a Python str every surrogate is lone: UTF-8 cannot encode it


# --------------------------------------------------------------------------- text that UTF-8 can encode


def text_ok(s: str) -> bool:
    """True when `s` has no lone surrogate (legal in JSON as "\\udfff", but no UTF-8 file, hash or tokenizer takes it)."""
    return s.isascii() or _SURROGATE_RE.search(s) is None


def scrub(v: Any) -> Any:
    """`v` with every lone surrogate (in strings and keys, at any depth) replaced by U+FFFD; `v` itself when clean.

    Used for what is recorded and shown again to a model (messages, episode records); the
    call itself is rejected with an error before it reaches the env (see `check_call`).
    """
    if isinstance(v, str):
        return v if text_ok(v) else _SURROGATE_RE.sub("\ufffd", v)
    if isinstance(v, dict):
        return {scrub(k): scrub(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [scrub(x) for x in v]
    return v


def _surrogate_path(v: Any, path: str = "") -> str | None:
    """Where in argument value `v` the first lone surrogate is ("body.text", "tags[2]", a key), or None."""
    if isinstance(v, str):
        return path or "(value)" if not text_ok(v) else None
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(k, str) and not text_ok(k):
                return f"a field name in {path or 'the arguments'}"
            p = _surrogate_path(x, f"{path}.{k}" if path else str(k))
            if p is not None:
                return p
    elif isinstance(v, list):
        for i, x in enumerate(v):
            p = _surrogate_path(x, f"{path}[{i}]")
            if p is not None:
                return p
    return None


# --------------------------------------------------------------------------- parsing


def _parse_arguments(raw: Any) -> Any:
    """A dict when `raw` is (or decodes to) a JSON object, else the raw text (an error later)."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        if len(raw) > MAX_ARGUMENT_CHARS:
            return raw
        try:
            val = json.loads(raw)
        except (ValueError, RecursionError):
            return raw
        return val if isinstance(val, dict) else raw
    return json.dumps(raw, default=str) if not isinstance(raw, str) else raw


def parse_openai_tool_calls(tool_calls: Any, id_prefix: str = "call") -> list[ToolCall]:
    """OpenAI `message.tool_calls` (SDK objects or dicts) -> ToolCalls; never raises."""
    out: list[ToolCall] = []
    for i, tc in enumerate(tool_calls or []):
        if isinstance(tc, dict):
            fn = tc.get("function") or {}
            cid = tc.get("id")
            name = fn.get("name") if isinstance(fn, dict) else None
            args = fn.get("arguments") if isinstance(fn, dict) else None
        else:
            fn = getattr(tc, "function", None)
            cid = getattr(tc, "id", None)
            name = getattr(fn, "name", None)
            args = getattr(fn, "arguments", None)
        out.append(ToolCall(id=str(cid or f"{id_prefix}_{i}"), name=name if isinstance(name, str) else "", arguments=_parse_arguments(args)))
    return out


def _call_from_obj(obj: dict, cid: str, body: str) -> ToolCall:
    if "name" not in obj and isinstance(obj.get("function"), dict):  # {"type": "function", "function": {...}}
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str):
        return ToolCall(id=cid, name="", arguments=body)
    args = obj.get("arguments", obj.get("parameters", {}))
    return ToolCall(id=cid, name=name, arguments=_parse_arguments(args))


def _hermes_calls(body: str, cid: str) -> list[ToolCall]:
    """The call(s) in one `<tool_call>` block: an object, or a list of objects some models write."""
    body = body.strip()
    if len(body) > MAX_ARGUMENT_CHARS + 512:
        m = _NAME_RE.search(body[:512])
        return [ToolCall(id=cid, name=m.group(1) if m else "", arguments=body)]
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        m = _NAME_RE.search(body)
        return [ToolCall(id=cid, name=m.group(1) if m else "", arguments=body)]
    if isinstance(obj, dict):
        return [_call_from_obj(obj, cid, body)]
    if isinstance(obj, list) and obj and all(isinstance(o, dict) for o in obj) and len(obj) <= MAX_CALLS_PER_TURN:
        return [_call_from_obj(o, f"{cid}_{j}", json.dumps(o)) for j, o in enumerate(obj)]
    return [ToolCall(id=cid, name="", arguments=body)]


@dataclass
class ParsedText:
    content: str  # text for the user, tool-call and think blocks removed
    tool_calls: list[ToolCall]
    reasoning: str | None


END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>")  # end markers a decode that keeps special tokens leaves in


def parse_hermes(text: str, id_prefix: str = "call") -> ParsedText:
    """Split Hermes/Qwen model output into user-facing text, tool calls and reasoning.

    The one parser of model output: training rollouts (`train/rollout.py`), `forgec eval`'s
    agents (HF, and OpenAI-compatible in both tool formats), `play`, `serve`'s score route
    (`serve.sessions.said_to_user`) and `forgec.gym` all call it, so the same text is the same
    turn (and the same reward) everywhere. Think blocks anywhere (or only their closing tag,
    for templates that open `<think>` in the prompt); every `<tool_call>` block, including an
    unterminated last one (generation cut off: an error observation, not silence) and a JSON
    list of calls in one block; end-of-turn markers dropped. Golden table:
    tests/test_toolcalls_golden.py.
    """
    text = text or ""
    for mark in END_OF_TURN:
        if mark in text:
            text = text.replace(mark, "")
    reasoning = None
    thinks = _THINK_RE.findall(text)
    if thinks:
        reasoning = "\n".join(t.strip() for t in thinks)
        text = _THINK_RE.sub("", text)
    elif "</think>" in text:  # templates that put <think> in the prompt emit only the closing tag
        head, _, text = text.partition("</think>")
        reasoning = head.strip()
    calls = [c for i, b in enumerate(_TOOL_CALL_RE.findall(text)) for c in _hermes_calls(b, f"{id_prefix}_{i}")]
    content = _TOOL_CALL_RE.sub("", text).strip()
    return ParsedText(content=content, tool_calls=calls, reasoning=reasoning)


def render_hermes_call(call: ToolCall) -> str:
    """The Hermes text of a call (for prompts of text-format agents)."""
    args = call.arguments if isinstance(call.arguments, dict) else call.arguments
    if isinstance(args, dict):
        return "<tool_call>\n" + json.dumps({"name": call.name, "arguments": args}, ensure_ascii=False) + "\n</tool_call>"
    return '<tool_call>\n{"name": ' + json.dumps(call.name) + ', "arguments": ' + str(args) + "}\n</tool_call>"


def to_openai_message(content: str, calls: list[ToolCall], reasoning: str | None = None) -> dict:
    """An assistant message in OpenAI format (arguments as JSON text, as the API sends them).

    `reasoning` (the `<think>` text) is kept as `reasoning_content` (vLLM's
    field) so interleaved thinking can put it back into later prompts.
    """
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        msg["reasoning_content"] = reasoning
    if calls:
        msg["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": _ENCODE(c.arguments) if isinstance(c.arguments, dict) else str(c.arguments),
                },
            }
            for c in calls
        ]
    return msg


# --------------------------------------------------------------------------- execution


@dataclass
class CallOutcome:
    ok: bool
    content: str  # the tool message content the agent sees
    result: Any = None  # the JSON result when ok
    error: str | None = None  # error text when not ok
    kind: str = ""  # "", "parse", "unknown-tool", "bad-arguments", "tool-error", "env-crash"


def _depth(v: Any, d: int = 0) -> int:
    if d > MAX_ARGUMENT_DEPTH:
        return d
    if isinstance(v, dict):
        return max((_depth(x, d + 1) for x in v.values()), default=d + 1)
    if isinstance(v, list):
        return max((_depth(x, d + 1) for x in v), default=d + 1)
    return d


def _fail(kind: str, msg: str) -> CallOutcome:
    return CallOutcome(ok=False, content=f"Error: {msg}", error=msg, kind=kind)


def result_text(result: Any) -> str:
    try:
        return _ENCODE(result)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(str(result))


def check_call(call: ToolCall, tool_names: frozenset[str] | set[str]) -> CallOutcome | None:
    """The error for a call that must not reach the env, or None when it may."""
    name = call.name
    if not isinstance(name, str) or not name:
        if isinstance(call.arguments, str):
            return _fail("parse", "could not parse the tool call; write it as JSON: {\"name\": \"<tool>\", \"arguments\": {...}}")
        return _fail("parse", "the tool call has no tool name")
    if len(name) > MAX_NAME_CHARS or name not in tool_names:
        shown = name if len(name) <= 64 else name[:64] + "..."
        return _fail("unknown-tool", f"unknown tool {shown!r}; available tools: {', '.join(sorted(tool_names))}")
    args = call.arguments
    if isinstance(args, str):
        if len(args) > MAX_ARGUMENT_CHARS:
            return _fail("bad-arguments", f"arguments of {name} are too large ({len(args)} characters; limit {MAX_ARGUMENT_CHARS})")
        return _fail("bad-arguments", f"arguments of {name} are not a JSON object")
    if not isinstance(args, dict):
        return _fail("bad-arguments", f"arguments of {name} must be a JSON object")
    if _depth(args) > MAX_ARGUMENT_DEPTH:
        return _fail("bad-arguments", f"arguments of {name} are nested too deeply")
    try:
        text = _ENCODE_UNSORTED(args)
    except (TypeError, ValueError, RecursionError):
        return _fail("bad-arguments", f"arguments of {name} are not JSON values")
    if len(text) > MAX_ARGUMENT_CHARS:
        return _fail("bad-arguments", f"arguments of {name} are too large ({len(text)} characters; limit {MAX_ARGUMENT_CHARS})")
    if not text_ok(text):
        where = scrub(_surrogate_path(args) or "the arguments")
        return _fail("bad-arguments", f"arguments of {name} are not valid Unicode text: a lone surrogate (such as \\udfff) "
                                      f"in {where}; send UTF-8 text")
    return None


def execute(env: Any, call: ToolCall, tool_names: frozenset[str] | set[str]) -> CallOutcome:
    """Run one call in `env`; errors of any kind come back as a failed outcome, never an exception.

    The env is transactional (a ToolError leaves the state unchanged); an
    unexpected exception from a generated module is reported as `env-crash`.
    """
    bad = check_call(call, tool_names)
    if bad is not None:
        return bad
    try:
        result = env.step(call.name, call.arguments)
    except Exception as e:  # noqa: BLE001 - a generated env must not take the episode down
        return _fail("env-crash", f"{call.name} failed: {type(e).__name__}: {e}")
    if isinstance(result, BaseException):  # ToolError instances are returned, not raised
        msg = getattr(result, "message", None) or str(result) or type(result).__name__
        return _fail("tool-error", str(msg))
    return CallOutcome(ok=True, content=result_text(result), result=result)
