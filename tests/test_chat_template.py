"""Training renders with the model's own chat template when its tokenizer has one (issue 22).

A tiny tokenizer is trained here, offline, and given a Llama-3-style template written below
(headers, `<|eot_id|>`, tools in the system turn, calls as `{"name", "parameters"}`): not the
built-in ChatML, so a test that passes cannot be passing by falling back. Expected texts are
written out by hand; masks are checked by decoding the trained tokens. Without a template the
built-in ChatML is used, also compared with a hand-written string.
"""

from __future__ import annotations

import pytest

from forgec.train.template import ChatTemplateError, end_of_turn, render_conversation, render_segments
from forgec.train.tokenize import masked_spans, messages_to_samples

TOOLS = [{"type": "function", "function": {"name": "turn_on", "parameters": {"type": "object"}}}]

HEADER = "'<|start_header_id|>' + {role} + '<|end_header_id|>\\n\\n'"
ASSISTANT = (
    "{{- " + HEADER.format(role="'assistant'") + " + m.content -}}"
    "{%- for c in m.tool_calls or [] -%}"
    "{{- '{\"name\": \"' + c.function.name + '\", \"parameters\": ' + (c.function.arguments | tojson) + '}' -}}"
    "{%- endfor -%}{{- '<|eot_id|>' -}}"
)
# Like Qwen3's: a turn's reasoning is shown only while it is the last message, so later renderings rewrite it.
ASSISTANT_FORGETS_REASONING = (
    "{{- " + HEADER.format(role="'assistant'") + " -}}"
    "{%- if loop.last and m.reasoning_content -%}{{- '<think>' + m.reasoning_content + '</think>' -}}{%- endif -%}"
    "{{- m.content + '<|eot_id|>' -}}"
)


def llama_template(assistant: str = ASSISTANT) -> str:
    """A Llama-3-style template with tools; `assistant` renders one assistant message `m`."""
    return (
        "{{- bos_token -}}"
        "{%- if messages[0].role == 'system' -%}{%- set sys = messages[0].content -%}{%- set rest = messages[1:] -%}"
        "{%- else -%}{%- set sys = '' -%}{%- set rest = messages -%}{%- endif -%}"
        "{{- " + HEADER.format(role="'system'") + " -}}"
        "{%- if tools -%}{{- 'Environment: tools\\n' -}}{%- for t in tools -%}{{- (t | tojson) + '\\n' -}}{%- endfor -%}{%- endif -%}"
        "{{- sys + '<|eot_id|>' -}}"
        "{%- for m in rest -%}"
        "{%- if m.role == 'assistant' -%}" + assistant +
        "{%- elif m.role == 'tool' -%}{{- " + HEADER.format(role="'ipython'") + " + m.content + '<|eot_id|>' -}}"
        "{%- else -%}{{- " + HEADER.format(role="m.role") + " + (m.content | trim) + '<|eot_id|>' -}}"
        "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{- " + HEADER.format(role="'assistant'") + " -}}{%- endif -%}"
    )


def conversation():
    return [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Turn on L3."},
        {"role": "assistant", "content": "", "reasoning": "L3 is asked for.",
         "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "turn_on", "arguments": "{\"light_id\": \"L3\"}"}}]},
        {"role": "tool", "tool_call_id": "c0", "content": "{\"on\": true}"},
        {"role": "assistant", "content": "L3 is on."},
    ]


SYSTEM_AND_USER = (
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
    "Environment: tools\n"
    '{"type": "function", "function": {"name": "turn_on", "parameters": {"type": "object"}}}\n'
    "You are an agent.<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nTurn on L3.<|eot_id|>"
)
CALL = '{"name": "turn_on", "parameters": {"light_id": "L3"}}<|eot_id|>'
TOOL_RESULT = '<|start_header_id|>ipython<|end_header_id|>\n\n{"on": true}<|eot_id|>'
ASSISTANT_HEADER = "<|start_header_id|>assistant<|end_header_id|>\n\n"
LLAMA_TEXT = SYSTEM_AND_USER + ASSISTANT_HEADER + CALL + TOOL_RESULT + ASSISTANT_HEADER + "L3 is on.<|eot_id|>"

CHATML_TEXT = (
    "<|im_start|>system\nYou are an agent.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    '{"type": "function", "function": {"name": "turn_on", "parameters": {"type": "object"}}}\n</tools>\n\n'
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    "<|im_start|>user\nTurn on L3.<|im_end|>\n"
    "<|im_start|>assistant\n<think>\nL3 is asked for.\n</think>\n\n"
    '<tool_call>\n{"name": "turn_on", "arguments": {"light_id": "L3"}}\n</tool_call><|im_end|>\n'
    '<|im_start|>user\n<tool_response>\n{"on": true}\n</tool_response><|im_end|>\n'
    "<|im_start|>assistant\nL3 is on.<|im_end|>\n"
)


def make_tokenizer(template: str | None):
    """A byte-level BPE trained here (train/tiny.py's recipe) with Llama-3's special tokens added; `template` or none."""
    from transformers import PreTrainedTokenizerFast

    from forgec.train.tiny import train_tokenizer

    raw = train_tokenizer([LLAMA_TEXT, CHATML_TEXT] * 4, vocab_size=400)
    llama = template is not None
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<|begin_of_text|>",
                                  eos_token="<|eot_id|>" if llama else "<|im_end|>", pad_token="<|endoftext|>",
                                  additional_special_tokens=["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"])
    tok.chat_template = template
    return tok


@pytest.fixture(scope="module")
def tok():
    return make_tokenizer(llama_template())


def decoded_spans(tok, sample) -> list[str]:
    return [tok.decode(x, skip_special_tokens=False) for x in masked_spans(sample)]


def test_the_tokenizers_template_renders_the_conversation(tok):
    assert render_conversation(conversation(), TOOLS, tokenizer=tok) == LLAMA_TEXT
    prompt = render_conversation(conversation()[:4], TOOLS, add_generation_prompt=True, tokenizer=tok)
    assert prompt == SYSTEM_AND_USER + ASSISTANT_HEADER + CALL + TOOL_RESULT + ASSISTANT_HEADER
    # `system=` leads when no system message does, as in the ChatML path
    assert render_conversation(conversation()[1:], TOOLS, system="You are an agent.", tokenizer=tok) == LLAMA_TEXT
    assert end_of_turn(tok) == "<|eot_id|>"


def test_exactly_the_assistant_turns_are_trainable(tok):
    (s,) = messages_to_samples(tok, conversation(), TOOLS, None)
    assert tok.decode(s.input_ids, skip_special_tokens=False) == LLAMA_TEXT
    assert decoded_spans(tok, s) == [CALL, "L3 is on.<|eot_id|>"]
    (t,) = messages_to_samples(tok, conversation()[1:], TOOLS, "You are an agent.")
    assert (t.input_ids, t.loss_mask) == (s.input_ids, s.loss_mask)


def test_keep_thinking_false_trains_one_turn_per_sample(tok):
    first, second = messages_to_samples(tok, conversation(), TOOLS, None, keep_thinking=False)
    assert decoded_spans(tok, first) == [CALL]
    assert decoded_spans(tok, second) == ["L3 is on.<|eot_id|>"]
    assert tok.decode(second.input_ids, skip_special_tokens=False) == LLAMA_TEXT


def test_the_rollout_appends_in_the_models_template(tok):
    """PolicyAgent's second prompt: its own generated ids, then the tool result and header in the model's format."""
    from forgec.train.rollout import PolicyAgent, Sampling

    agent = PolicyAgent(None, tok, Sampling(), 0)
    first = agent.build_prompt(conversation()[:2], TOOLS)
    assert tok.decode(first, skip_special_tokens=False) == SYSTEM_AND_USER + ASSISTANT_HEADER
    generated = tok(CALL, add_special_tokens=False)["input_ids"]
    assert generated[-1] == agent._eot_id == tok.convert_tokens_to_ids("<|eot_id|>")
    agent._ids, agent._ended = first + generated, True
    second = agent.build_prompt(conversation()[:4], TOOLS)
    assert second[:len(agent._ids)] == agent._ids
    assert tok.decode(second, skip_special_tokens=False) == SYSTEM_AND_USER + ASSISTANT_HEADER + CALL + TOOL_RESULT + ASSISTANT_HEADER


def test_without_a_template_the_builtin_chatml_is_used():
    plain = make_tokenizer(None)
    assert render_conversation(conversation(), TOOLS, tokenizer=plain) == CHATML_TEXT
    assert render_conversation(conversation(), TOOLS) == CHATML_TEXT
    assert end_of_turn(plain) == "<|im_end|>"
    (s,) = messages_to_samples(plain, conversation(), TOOLS, None)
    assert decoded_spans(plain, s) == [
        '<think>\nL3 is asked for.\n</think>\n\n<tool_call>\n{"name": "turn_on", "arguments": {"light_id": "L3"}}\n</tool_call><|im_end|>',
        "L3 is on.<|im_end|>",
    ]


def test_a_template_that_rewrites_earlier_turns_is_refused_by_name():
    tok = make_tokenizer(llama_template(ASSISTANT_FORGETS_REASONING))
    msgs = conversation()
    msgs[2] = {"role": "assistant", "content": "Turning it on.", "reasoning": "L3 is asked for."}
    with pytest.raises(ChatTemplateError, match="not prefix-stable: rendering the prompt of message 4") as e:
        messages_to_samples(tok, msgs, TOOLS, None)
    assert "<think>L3 is asked for.</think>" in str(e.value) and "keep_thinking=false" in str(e.value)
    # dropping earlier reasoning (keep_thinking=False) trains each turn in the context the template gives it
    first, second = messages_to_samples(tok, msgs, TOOLS, None, keep_thinking=False)
    assert decoded_spans(tok, first) == ["<think>L3 is asked for.</think>Turning it on.<|eot_id|>"]
    assert decoded_spans(tok, second) == ["L3 is on.<|eot_id|>"]


def test_a_template_without_the_end_of_turn_token_is_refused():
    no_eot = ASSISTANT.replace("{{- '<|eot_id|>' -}}", "")
    tok = make_tokenizer(llama_template(no_eot))
    with pytest.raises(ChatTemplateError, match="without the tokenizer's end-of-turn token '<\\|eot_id\\|>'"):
        render_segments(conversation(), TOOLS, tokenizer=tok)
