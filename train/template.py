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

A model whose tokenizer carries its own chat template (Qwen3, Llama 3.x, Mistral, Gemma, ...)
is trained on *that* format, as TRL/verl/OpenRLHF do: pass `tokenizer=` and `render_segments`
renders with `tokenizer.apply_chat_template` and finds each agent turn by rendering
prefixes (`template_segments`). A template that rewrites earlier turns in later renderings
(Qwen3's drops their reasoning once the user asks again) keeps each turn as generated, and
the text between turns is read after the previous turn's end-of-turn marker (`_after_turn`).
That marker (`end_of_turn`, as a token `end_of_turn_id`) is read from the template, not
assumed to be eos (Gemma closes turns with `<end_of_turn>`, its eos is `<eos>`); training
rollouts and `forgec eval`'s HF agent both stop on it. The ChatML above is the fallback for
tokenizers without a template (base models, and the tiny tokenizer while train/tiny.py
trains it on this very text, before it exists; tiny.py then installs `chat_template_jinja()`,
the same format). Parsing model output stays in `forgec.runtime.toolcalls.parse_hermes`.
"""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

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


END_OF_TURN_ATTR = "forgec_end_of_turn"  # an explicit marker set on a tokenizer by `set_end_of_turn`
_PROBE = "FORGECPROBEREPLY"  # the content of a one-turn conversation whose rendering shows how the template closes a turn


def set_end_of_turn(tokenizer: Any, marker: str | None) -> None:
    """Make `marker` this tokenizer's end of turn (training config `template.end_of_turn`); None keeps the derived one.

    For a template whose rendering does not show its marker (see `end_of_turn`). The marker must be one token,
    because generation stops on it (checked here, by `end_of_turn_id`). It is also kept in the tokenizer's
    init kwargs, so `save_pretrained` writes it to tokenizer_config.json and an exported policy, loaded by
    `forgec eval --agent hf`, stops where training stopped.
    """
    if marker:
        setattr(tokenizer, END_OF_TURN_ATTR, marker)
        if isinstance(getattr(tokenizer, "init_kwargs", None), dict):
            tokenizer.init_kwargs[END_OF_TURN_ATTR] = marker
        end_of_turn_id(tokenizer)


def end_of_turn(tokenizer: Any = None) -> str:
    """The text that closes an agent turn: the last thing the agent generates, so the last trainable text,
    and the token every generator (training rollouts, `forgec eval`'s HF agent) stops on.

    Under the built-in ChatML `<|im_end|>`. Under a model's own template it is read from the template's
    rendering of a one-turn conversation: the special token that directly follows the assistant's content
    (`<|im_end|>` for Qwen, `<|eot_id|>` for Llama 3, `<end_of_turn>` for Gemma, whose eos token `<eos>` is
    not it). An explicit `set_end_of_turn` wins; without a special token there (or a probe the template
    cannot render) it is the eos token.
    """
    if not uses_tokenizer_template(tokenizer):
        return IM_END
    explicit = getattr(tokenizer, END_OF_TURN_ATTR, None) or (getattr(tokenizer, "init_kwargs", None) or {}).get(END_OF_TURN_ATTR)
    if explicit:
        return explicit
    tpl = tokenizer.chat_template
    return _derived_end_of_turn(tokenizer, tpl if isinstance(tpl, str) else repr(tpl))


@functools.lru_cache(maxsize=64)
def _derived_end_of_turn(tokenizer: Any, chat_template: Any) -> str:
    """`end_of_turn` read from the template (cached per tokenizer and template text)."""
    from jinja2 import TemplateError

    eos = tokenizer.eos_token
    probe = [{"role": "user", "content": "Hello."}, {"role": "assistant", "content": _PROBE}]
    try:
        text = tokenizer.apply_chat_template(probe, tokenize=False)
    except (TemplateError, ValueError, TypeError, KeyError):
        text = None
    if not isinstance(text, str) or _PROBE not in text:
        if eos:
            return eos
        raise ChatTemplateError("the tokenizer's chat template cannot render a one-turn conversation and the tokenizer has no "
                                "eos_token: cannot tell where an agent turn ends; set template.end_of_turn")
    after = text[text.rindex(_PROBE) + len(_PROBE):]
    head = after.lstrip()
    marks = sorted(set(tokenizer.get_added_vocab()) | set(tokenizer.all_special_tokens), key=len, reverse=True)
    found = next((m for m in marks if m and head.startswith(m)), None)
    if found:
        return found
    if eos:  # no special token closes the turn: eos, and a rendering without it is refused by name (`_split_turn`)
        return eos
    raise ChatTemplateError(f"the chat template closes an agent turn with {after[:40]!r}, which starts with none of the "
                            "tokenizer's special tokens, and the tokenizer has no eos_token: cannot tell where an agent "
                            "turn ends; set template.end_of_turn to the token generation should stop on")


def end_of_turn_id(tokenizer: Any) -> int:
    """The one token id generation stops on: `end_of_turn` as a token (rollouts and eval both ask here)."""
    eot = end_of_turn(tokenizer)
    ids = tokenizer(eot, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        raise ChatTemplateError(f"the end-of-turn marker {eot!r} is {len(ids)} tokens for this tokenizer, not one: "
                                "generation cannot stop on it (set template.end_of_turn to a single special token)")
    return int(ids[0])


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
    """`text` minus the already-rendered `done`, which it must start with: an assistant turn rendered onto its own
    prompt must leave the prompt as it was, or the trainable span could not be told from the template's text."""
    if text.startswith(done):
        return text[len(done):]
    k = next((i for i, (a, b) in enumerate(zip(done, text)) if a != b), min(len(done), len(text)))
    raise ChatTemplateError(
        f"the chat template is not prefix-stable: rendering {what} changes earlier text at character {k} "
        f"({done[k:k + 40]!r} became {text[k:k + 40]!r}). Rollouts and training extend one token sequence turn by "
        "turn, so a turn rendered after its prompt must leave the prompt as it was; this template cannot be "
        "split into turns (template.keep_thinking=false trains each turn in its own rendering).")


_REWRITES_NOTED: set[str] = set()


def _after_turn(text: str, done: str, eot: str, closed: tuple[int, str, dict], what: str, template: str) -> str:
    """What `text`, a rendering of the conversation through later messages, adds after the previous agent turn.

    When `text` starts with `done` (the sequence so far), that is the rest. A template that rewrites earlier turns
    in later renderings (Qwen3 and DeepSeek-R1 drop the reasoning of turns before the last user query; Qwen3 also
    drops an empty `<think></think>` once a turn is no longer last) cannot give it that way. Then each agent turn
    stays as it was generated, rendered the way the template renders the last turn (as TRL and verl train Qwen3
    multi-turn), and the new text is read after the previous turn's end-of-turn marker, counted in the template's
    own rendering (`closed`: markers through that turn, the template text after its marker, the turn's message).
    Reasoning dropped or rewritten never changes how many markers come before that point.
    """
    if text.startswith(done):
        return text[len(done):]
    count, rest, msg = closed
    pos = -len(eot)
    for _ in range(count):
        pos = text.find(eot, pos + len(eot))
        if pos < 0:
            raise ChatTemplateError(f"the chat template rewrites earlier turns and, rendering {what}, shows fewer than {count} "
                                    f"end-of-turn markers {eot!r}: it drops earlier turns, and their text cannot be kept")
    turn = text[text.rfind(eot, 0, pos) + len(eot) if count > 1 else 0:pos]
    shown = [_content_text(msg.get("content")).strip()] + [_get(_get(c, "function", c), "name", "") for c in msg.get("tool_calls") or []]
    tail = text[pos + len(eot):]
    if not tail.startswith(rest) or any(x and x not in turn for x in shown):
        raise ChatTemplateError(f"the chat template rewrites earlier turns and, rendering {what}, the agent turn before "
                                f"end-of-turn marker {count} is not the previous agent turn ({turn[-60:]!r}): it cannot be "
                                "split into turns (template.keep_thinking=false trains each turn in its own rendering)")
    if template not in _REWRITES_NOTED:  # said once per template
        _REWRITES_NOTED.add(template)
        k = next((i for i, (a, b) in enumerate(zip(done, text)) if a != b), min(len(done), len(text)))
        log.info("the chat template rewrites earlier turns in later renderings (%r became %r: it drops their reasoning, "
                 "say): with keep_thinking=true each agent turn is kept as generated, and the text between turns is read "
                 "after the previous turn's end-of-turn marker %r", done[k:k + 40], text[k:k + 40], eot)
    return tail[len(rest):]


def _split_turn(text: str, eot: str, index: int) -> tuple[str, str]:
    """An assistant turn as rendered -> (what the agent generates, through `eot`; template text after it)."""
    k = text.rfind(eot)
    if k < 0:
        raise ChatTemplateError(f"the chat template renders assistant message {index} without the end-of-turn marker "
                                f"{eot!r}: cannot tell generated text from template text (set template.end_of_turn "
                                "to the token that closes an agent turn)")
    return text[:k + len(eot)], text[k + len(eot):]


def template_segments(tokenizer: Any, messages: list[dict], tools: list[dict] | None = None, system: str | None = None,
                      keep_thinking: bool = True, add_generation_prompt: bool = False, since: int = 0) -> list[Segment]:
    """The conversation in the tokenizer's own chat template, as tagged segments (what render_segments returns).

    Assistant turn i is messages[:i] rendered with the generation prompt, then messages[:i+1]
    without: the difference is the turn as the template writes it when it is the last one (the
    way it is generated), trainable through `end_of_turn`, template text after. The text
    between turns is what the next rendering adds after the previous turn (`_after_turn`, which
    also serves templates that drop earlier reasoning, as Qwen3's does).
    Only turns from message `since` on get boundaries (earlier text is one context segment:
    the rollout needs just the newest turn); with keep_thinking=False only the last turn,
    and none when a generation prompt asks for the next one — that turn's context is one piece.
    """
    msgs, off = _template_conversation(messages, system, keep_thinking)
    turns = [i for i, m in enumerate(msgs) if m.get("role") == "assistant" and i - off >= since]
    if not keep_thinking:
        turns = [] if add_generation_prompt else turns[-1:]
    eot = end_of_turn(tokenizer) if turns else ""
    tpl = str(tokenizer.chat_template)
    segs: list[Segment] = []
    done = ""
    closed: tuple[int, str, dict] | None = None  # (end-of-turn markers through the last turn, text after it, its message)
    for i in turns:
        ctx = _render(tokenizer, msgs[:i], tools, True)
        prompt = ctx if closed is None else _after_turn(ctx, done, eot, closed, f"the prompt of message {i - off}", tpl)
        body = _extend(ctx, _render(tokenizer, msgs[:i + 1], tools, False), f"assistant message {i - off}")
        gen, rest = _split_turn(body, eot, i - off)
        segs += [Segment(prompt, False, i - off), Segment(gen, True, i - off), Segment(rest, False, i - off)]
        done += prompt + gen + rest
        closed = ((ctx + gen).count(eot), rest, msgs[i])
    if msgs and (add_generation_prompt or not turns or turns[-1] < len(msgs) - 1):
        whole = _render(tokenizer, msgs, tools, add_generation_prompt)
        tail = whole if closed is None else _after_turn(whole, done, eot, closed, "the whole conversation", tpl)
        segs.append(Segment(tail, False, len(messages)))
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


# ---------------------------------------------------------------- start-up check of the model's template

PROBE_TOOL = {"type": "function", "function": {"name": "set_light", "description": "Switch a light on or off.", "parameters": {
    "type": "object", "properties": {"id": {"type": "string"}, "on": {"type": "boolean"}}, "required": ["id", "on"]}}}


def _probe_call(i: int, light: str) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": "set_light", "arguments": {"id": light, "on": True}}}


def probe_dialogues() -> list[list[dict]]:
    """Small conversations with every turn shape an episode has: reasoning + a tool call, a tool result,
    a final answer, a second user request, two calls in one turn."""
    first = [{"role": "user", "content": "Please turn on light L1."},
             {"role": "assistant", "content": "", "reasoning": "The user wants L1 on.", "tool_calls": [_probe_call(0, "L1")]},
             {"role": "tool", "tool_call_id": "call_0", "content": '{"ok": true}'},
             {"role": "assistant", "content": "Light L1 is on."}]
    second = first + [{"role": "user", "content": "Now L2 and L3 too."},
                      {"role": "assistant", "content": "", "tool_calls": [_probe_call(1, "L2"), _probe_call(2, "L3")]},
                      {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'},
                      {"role": "tool", "tool_call_id": "call_2", "content": '{"ok": true}'},
                      {"role": "assistant", "content": "Both are on."}]
    return [first, second]


def check_template(tokenizer: Any, system: str | None = None, keep_thinking: bool = True) -> int:
    """Before training: the model's chat template and forgec agree on probe dialogues; returns turns checked.

    Each assistant turn is rendered as forgec trains it (`render_segments` with the tokenizer: the
    template's own rendering, found by prefixes) and read back with forgec's one parser of model
    output (`parse_hermes`), as rollouts and eval read what the model generates. A template whose tool
    calls forgec cannot read back (another tool-call format), or that fails on a turn shape, is refused
    here with the turn it broke on, instead of training on text the parser will not understand."""
    from forgec.runtime.toolcalls import parse_hermes

    eot = end_of_turn(tokenizer)
    checked = 0
    for msgs in probe_dialogues():
        segs = render_segments(msgs, [PROBE_TOOL], system, keep_thinking, tokenizer=tokenizer)
        for i, m in enumerate(msgs):
            if m["role"] != "assistant":
                continue
            body = "".join(s.text for s in segs if s.message == i and s.trainable)
            if not body:
                raise ChatTemplateError(f"the chat template renders no trainable text for probe assistant turn {i}")
            parsed = parse_hermes(body.removesuffix(eot) if body.endswith(eot) else body, "probe")
            want = [(c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or []]
            got = [(c.name, c.arguments) for c in parsed.tool_calls]
            if got != want or (m.get("content") or "") not in parsed.content:
                raise ChatTemplateError(
                    f"the model's chat template renders probe assistant turn {i} as {body[:300]!r}; forgec's parser "
                    f"(Hermes <tool_call> JSON) reads calls {got} and text {parsed.content[:80]!r} from it, not {want} and "
                    f"{m.get('content')!r}: the policy would be trained on a format rollouts and eval cannot read "
                    "(use a model whose template renders Hermes tool calls, or a tokenizer without a template for the built-in ChatML)")
            checked += 1
    return checked
