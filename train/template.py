"""The training chat template: ChatML with Hermes tool calls and interleaved thinking.

Shape (Qwen3's, so real Qwen3 checkpoints see the format they were tuned on):

    <|im_start|>system\\n{system}\\n\\n# Tools ... <tools>{schemas}</tools> ...<|im_end|>\\n
    <|im_start|>user\\n{text}<|im_end|>\\n
    <|im_start|>assistant\\n<think>\\n{reasoning}\\n</think>\\n\\n{content}\\n<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call><|im_end|>\\n
    <|im_start|>user\\n<tool_response>\\n{result}\\n</tool_response><|im_end|>\\n

Unlike Qwen3's default template, earlier assistant turns keep their `<think>` blocks
(`keep_thinking=True`): the agent's reasoning stays in the context across tool calls,
and an episode is one token sequence whose every turn prompt is a prefix of the next.

The text is produced as *segments* tagged with the message they come from and whether
they are agent-generated (trainable): tokenize.py and the rollout backends tokenize
segment by segment, so prompts grow by appending and nothing is re-tokenized. The same
template also exists as Jinja (`chat_template_jinja`) for HF `apply_chat_template` and
vLLM's chat endpoint; a test checks both give identical text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
GEN_PROMPT = f"{IM_START}assistant\n"

TOOLS_PREAMBLE = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_POSTAMBLE = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>"
)


@dataclass(frozen=True)
class Segment:
    text: str
    trainable: bool  # agent-generated text (assistant body + <|im_end|>)
    message: int  # index into the message list; -1 for the system/tools header


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _tool_call_json(call: Any) -> str:
    fn = _get(call, "function", call)
    name = _get(fn, "name", "")
    args = _get(fn, "arguments", {})
    args_text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return '{"name": ' + json.dumps(name, ensure_ascii=False) + ', "arguments": ' + args_text + "}"


def reasoning_of(msg: dict) -> str:
    return (msg.get("reasoning") or msg.get("reasoning_content") or "").strip()


def render_assistant_body(msg: dict, keep_reasoning: bool = True) -> str:
    """What the agent generates for one turn, without the closing <|im_end|>."""
    content = msg.get("content") or ""
    reasoning = reasoning_of(msg) if keep_reasoning else ""
    out = f"<think>\n{reasoning}\n</think>\n\n" if reasoning else ""
    out += content
    for i, call in enumerate(msg.get("tool_calls") or []):
        if i > 0 or content:
            out += "\n"
        out += "<tool_call>\n" + _tool_call_json(call) + "\n</tool_call>"
    return out


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def header_text(system: str | None, tools: list[dict] | None) -> str:
    if tools:
        body = (system + "\n\n" if system else "") + TOOLS_PREAMBLE
        body += "".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools) + TOOLS_POSTAMBLE
        return f"{IM_START}system\n{body}{IM_END}\n"
    if system:
        return f"{IM_START}system\n{system}{IM_END}\n"
    return ""


def render_segments(messages: list[dict], tools: list[dict] | None = None, system: str | None = None,
                    keep_thinking: bool = True, add_generation_prompt: bool = False) -> list[Segment]:
    """The conversation as tagged segments (see the module docstring).

    A leading `system` message overrides `system`. With keep_thinking=False only the
    last assistant message keeps its reasoning (Qwen3's default behaviour).
    """
    msgs = list(messages)
    if msgs and msgs[0].get("role") == "system":
        system = _content_text(msgs[0].get("content"))
        first = 1
    else:
        first = 0
    segs: list[Segment] = []
    head = header_text(system, tools)
    if head:
        segs.append(Segment(head, False, 0 if first else -1))
    last_assistant = max((i for i, m in enumerate(msgs) if m.get("role") == "assistant"), default=-1)
    for i in range(first, len(msgs)):
        m = msgs[i]
        role = m.get("role")
        if role == "assistant":
            keep = keep_thinking or i == last_assistant
            segs.append(Segment(GEN_PROMPT, False, i))
            segs.append(Segment(render_assistant_body(m, keep) + IM_END, True, i))
            segs.append(Segment("\n", False, i))
        elif role == "tool":
            prev_tool = i > first and msgs[i - 1].get("role") == "tool"
            next_tool = i + 1 < len(msgs) and msgs[i + 1].get("role") == "tool"
            text = "" if prev_tool else f"{IM_START}user"
            text += "\n<tool_response>\n" + _content_text(m.get("content")) + "\n</tool_response>"
            if not next_tool:
                text += f"{IM_END}\n"
            segs.append(Segment(text, False, i))
        else:  # user (and any other role rendered as itself)
            segs.append(Segment(f"{IM_START}{role}\n{_content_text(m.get('content'))}{IM_END}\n", False, i))
    if add_generation_prompt:
        segs.append(Segment(GEN_PROMPT, False, len(msgs)))
    return segs


def render_conversation(messages: list[dict], tools: list[dict] | None = None, system: str | None = None,
                        keep_thinking: bool = True, add_generation_prompt: bool = False) -> str:
    return "".join(s.text for s in render_segments(messages, tools, system, keep_thinking, add_generation_prompt))


# Parsing generated text: `forgec.runtime.toolcalls.parse_hermes`, the one parser training and eval share.


# ---------------------------------------------------------------- the same template in Jinja

def chat_template_jinja() -> str:
    """HF/vLLM chat template equal to `render_conversation(..., keep_thinking=True)`."""
    return (
        "{%- set sys = none -%}"
        "{%- if messages and messages[0].role == 'system' -%}{%- set sys = messages[0].content -%}{%- endif -%}"
        "{%- if tools -%}"
        "{{- '<|im_start|>system\\n' -}}"
        "{%- if sys -%}{{- sys + '\\n\\n' -}}{%- endif -%}"
        "{{- " + json.dumps(TOOLS_PREAMBLE) + " -}}"
        "{%- for tool in tools -%}{{- '\\n' + (tool | tojson) -}}{%- endfor -%}"
        "{{- " + json.dumps(TOOLS_POSTAMBLE) + " + '<|im_end|>\\n' -}}"
        "{%- elif sys -%}{{- '<|im_start|>system\\n' + sys + '<|im_end|>\\n' -}}{%- endif -%}"
        "{%- for message in messages -%}"
        "{%- if loop.first and message.role == 'system' -%}"
        "{%- elif message.role == 'assistant' -%}"
        "{{- '<|im_start|>assistant\\n' -}}"
        "{%- set r = message.reasoning or message.reasoning_content or '' -%}"
        "{%- if r | trim -%}{{- '<think>\\n' + (r | trim) + '\\n</think>\\n\\n' -}}{%- endif -%}"
        "{%- set content = message.content or '' -%}{{- content -}}"
        "{%- for call in (message.tool_calls or []) -%}"
        "{%- if not loop.first or content -%}{{- '\\n' -}}{%- endif -%}"
        "{%- set fn = call.function if call.function is defined else call -%}"
        "{{- '<tool_call>\\n{\"name\": ' + (fn.name | tojson) + ', \"arguments\": ' -}}"
        "{%- if fn.arguments is string -%}{{- fn.arguments -}}{%- else -%}{{- fn.arguments | tojson -}}{%- endif -%}"
        "{{- '}\\n</tool_call>' -}}"
        "{%- endfor -%}"
        "{{- '<|im_end|>\\n' -}}"
        "{%- elif message.role == 'tool' -%}"
        "{%- if loop.first or loop.previtem.role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}"
        "{{- '\\n<tool_response>\\n' + (message.content if message.content is string else (message.content | tojson)) + '\\n</tool_response>' -}}"
        "{%- if loop.last or loop.nextitem.role != 'tool' -%}{{- '<|im_end|>\\n' -}}{%- endif -%}"
        "{%- else -%}"
        "{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' -}}"
        "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
    )
