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

A model whose tokenizer carries its own chat template (Qwen3, Llama 3.x, Mistral, ...) is
trained on *that* format, as TRL/verl/OpenRLHF do: pass `tokenizer=` and `render_segments`
renders with `tokenizer.apply_chat_template` and finds each agent turn by rendering
prefixes (`template_segments`). The ChatML above is the fallback for tokenizers without a
template (base models, and the tiny tokenizer while train/tiny.py trains it on this very
text, before it exists; tiny.py then installs `chat_template_jinja()`, the same format).
Parsing model output stays in `forgec.runtime.toolcalls.parse_hermes`.
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
                    keep_thinking: bool = True, add_generation_prompt: bool = False, tokenizer: Any = None,
                    since: int = 0) -> list[Segment]:
    """The conversation as tagged segments (see the module docstring).

    A leading `system` message overrides `system`. With keep_thinking=False only the
    last assistant message keeps its reasoning (Qwen3's default behaviour). A tokenizer
    with a chat template renders with it (`template_segments`, which also reads `since`);
    otherwise the built-in ChatML, where `since` changes nothing.
    """
    if uses_tokenizer_template(tokenizer):
        return template_segments(tokenizer, messages, tools, system, keep_thinking, add_generation_prompt, since)
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
                        keep_thinking: bool = True, add_generation_prompt: bool = False, tokenizer: Any = None) -> str:
    """The whole text of `render_segments` (same arguments): what the model reads."""
    segs = render_segments(messages, tools, system, keep_thinking, add_generation_prompt, tokenizer)
    return "".join(s.text for s in segs)


# Parsing generated text: `forgec.runtime.toolcalls.parse_hermes`, the one parser training and eval share.


# ---------------------------------------------------------------- the model's own chat template


class ChatTemplateError(ValueError):
    """A tokenizer's chat template that cannot be split into turns without mis-masking."""


def uses_tokenizer_template(tokenizer: Any) -> bool:
    """True when the tokenizer carries its own chat template; False selects the built-in ChatML.

    The fallback is for tokenizers without one: base models, and the tiny tokenizer while
    train/tiny.py trains it on text rendered here (it gets `chat_template_jinja()` after).
    """
    return bool(getattr(tokenizer, "chat_template", None))


def end_of_turn(tokenizer: Any = None) -> str:
    """The text that closes an agent turn: the last thing the agent generates, so the last trainable text.

    Under a model's own template that is its eos token (`<|im_end|>` for Qwen, `<|eot_id|>` for
    Llama 3 instruct), which generation stops on; under the built-in ChatML, `<|im_end|>`.
    """
    if not uses_tokenizer_template(tokenizer):
        return IM_END
    if not tokenizer.eos_token:
        raise ChatTemplateError("the tokenizer has a chat template but no eos_token: cannot tell where an agent turn ends")
    return tokenizer.eos_token


def _template_call(call: Any) -> dict:
    """A tool call as HF templates expect it: arguments a dict (Llama's template `tojson`s them; a string would be
    double-encoded); text that is not a JSON object stays text."""
    fn = _get(call, "function", call)
    args = _get(fn, "arguments", {})
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        args = parsed if isinstance(parsed, dict) else args
    out = {"type": "function", "function": {"name": _get(fn, "name", ""), "arguments": args}}
    if _get(call, "id"):
        out["id"] = _get(call, "id")
    return out


def _template_message(msg: dict, keep_reasoning: bool) -> dict:
    """One message for `apply_chat_template`: content a string (templates `trim` it), tool-call arguments
    dicts, reasoning as `reasoning_content` (the name Qwen3's template reads) or gone when dropped."""
    m = {k: v for k, v in msg.items() if k not in ("reasoning", "reasoning_content")}
    m["content"] = _content_text(msg.get("content"))
    if msg.get("role") == "assistant":
        if keep_reasoning and reasoning_of(msg):
            m["reasoning_content"] = reasoning_of(msg)
        if msg.get("tool_calls"):
            m["tool_calls"] = [_template_call(c) for c in msg["tool_calls"]]
    return m


def _template_conversation(messages: list[dict], system: str | None, keep_thinking: bool) -> tuple[list[dict], int]:
    """(messages for the template, how many were prepended): `system` leads unless a system message does,
    and keep_thinking=False drops the reasoning of all but the last assistant turn, as the ChatML path does."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    msgs = [_template_message(m, keep_thinking or i == last) for i, m in enumerate(messages)]
    if system and not (msgs and msgs[0].get("role") == "system"):
        return [{"role": "system", "content": system}] + msgs, 1
    return msgs, 0


def _render(tokenizer: Any, messages: list[dict], tools: list[dict] | None, generation_prompt: bool) -> str:
    """apply_chat_template as text; its failures (jinja errors, an empty conversation) as ChatTemplateError."""
    from jinja2 import TemplateError

    try:
        return tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=False,
                                             add_generation_prompt=generation_prompt)
    except (TemplateError, ValueError) as e:
        raise ChatTemplateError(f"the chat template failed to render {len(messages)} message(s): {e}") from e


def _extend(done: str, text: str, what: str) -> str:
    """`text` minus the already-rendered `done`, which it must start with: a template that rewrites earlier
    turns would shift every later mask, so it is refused here rather than trained on wrongly."""
    if text.startswith(done):
        return text[len(done):]
    k = next((i for i, (a, b) in enumerate(zip(done, text)) if a != b), min(len(done), len(text)))
    raise ChatTemplateError(
        f"the chat template is not prefix-stable: rendering {what} changes earlier text at character {k} "
        f"({done[k:k + 40]!r} became {text[k:k + 40]!r}). Rollouts and training extend one token sequence turn by "
        "turn, so each rendering must extend the previous one; a template that drops or rewrites earlier turns "
        "(earlier reasoning, say) needs template.keep_thinking=false or a template that keeps them.")


def _split_turn(text: str, eot: str, index: int) -> tuple[str, str]:
    """An assistant turn as rendered -> (what the agent generates, through `eot`; template text after it)."""
    k = text.rfind(eot)
    if k < 0:
        raise ChatTemplateError(f"the chat template renders assistant message {index} without the tokenizer's "
                                f"end-of-turn token {eot!r} (its eos_token): cannot tell generated text from template text")
    return text[:k + len(eot)], text[k + len(eot):]


def template_segments(tokenizer: Any, messages: list[dict], tools: list[dict] | None = None, system: str | None = None,
                      keep_thinking: bool = True, add_generation_prompt: bool = False, since: int = 0) -> list[Segment]:
    """The conversation in the tokenizer's own chat template, as tagged segments (what render_segments returns).

    Assistant turn i is messages[:i] rendered with the generation prompt, then messages[:i+1]
    without: the difference is the turn as the template writes it, trainable through
    `end_of_turn`, template text after. Each rendering must extend the last (`_extend`).
    Only turns from message `since` on get boundaries (earlier text is one context segment:
    the rollout needs just the newest turn); with keep_thinking=False only the last turn,
    and none when a generation prompt asks for the next one — that turn's context is one piece.
    """
    msgs, off = _template_conversation(messages, system, keep_thinking)
    turns = [i for i, m in enumerate(msgs) if m.get("role") == "assistant" and i - off >= since]
    if not keep_thinking:
        turns = [] if add_generation_prompt else turns[-1:]
    eot = end_of_turn(tokenizer) if turns else ""
    segs: list[Segment] = []
    done = ""
    for i in turns:
        prompt = _extend(done, _render(tokenizer, msgs[:i], tools, True), f"the prompt of message {i - off}")
        body = _extend(done + prompt, _render(tokenizer, msgs[:i + 1], tools, False), f"assistant message {i - off}")
        gen, rest = _split_turn(body, eot, i - off)
        segs += [Segment(prompt, False, i - off), Segment(gen, True, i - off), Segment(rest, False, i - off)]
        done += prompt + body
    if msgs and (add_generation_prompt or not turns or turns[-1] < len(msgs) - 1):
        tail = _render(tokenizer, msgs, tools, add_generation_prompt)
        segs.append(Segment(_extend(done, tail, "the whole conversation"), False, len(messages)))
    return [s for s in segs if s.text or s.trainable]


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
