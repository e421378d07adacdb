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


def test_a_template_that_forgets_earlier_reasoning_keeps_each_turn_as_generated():
    """Default settings (keep_thinking=True) on a template that shows a turn's reasoning only while it is last: each
    turn is trained as the template renders the last turn, and the text between turns is read after its end-of-turn."""
    tok = make_tokenizer(llama_template(ASSISTANT_FORGETS_REASONING))
    msgs = conversation()
    msgs[2] = {"role": "assistant", "content": "Turning it on.", "reasoning": "L3 is asked for."}
    first_turn = "<think>L3 is asked for.</think>Turning it on.<|eot_id|>"
    assert first_turn not in tok.apply_chat_template(msgs, tools=TOOLS, tokenize=False)  # the template alone forgets it
    (s,) = messages_to_samples(tok, msgs, TOOLS, None)
    assert decoded_spans(tok, s) == [first_turn, "L3 is on.<|eot_id|>"]
    assert tok.decode(s.input_ids, skip_special_tokens=False) == (
        SYSTEM_AND_USER + ASSISTANT_HEADER + first_turn + TOOL_RESULT + ASSISTANT_HEADER + "L3 is on.<|eot_id|>")
    # dropping earlier reasoning (keep_thinking=False) trains each turn in the context the template gives it
    first, second = messages_to_samples(tok, msgs, TOOLS, None, keep_thinking=False)
    assert decoded_spans(tok, first) == [first_turn]
    assert decoded_spans(tok, second) == ["L3 is on.<|eot_id|>"]
    assert "L3 is asked for." not in tok.decode(second.input_ids)


def test_a_template_that_drops_earlier_turns_is_refused_by_name():
    """A template that keeps only the newest messages cannot be split into turns: refused, not trained wrongly."""
    window = llama_template().replace("{%- for m in rest -%}", "{%- for m in rest[-2:] -%}")
    tok = make_tokenizer(window)
    with pytest.raises(ChatTemplateError, match="rewrites earlier turns and, rendering the prompt of message 4, the agent turn before end-of-turn marker 3 is not the previous"):
        messages_to_samples(tok, conversation(), TOOLS, None)


def test_a_template_without_the_end_of_turn_token_is_refused():
    no_eot = ASSISTANT.replace("{{- '<|eot_id|>' -}}", "")
    tok = make_tokenizer(llama_template(no_eot))
    with pytest.raises(ChatTemplateError, match="without the end-of-turn marker '<\\|eot_id\\|>'"):
        render_segments(conversation(), TOOLS, tokenizer=tok)


# ---------------------------------------------------------------- Qwen3: reasoning of earlier turns dropped by the template

# Qwen3's chat template as it behaves (written here, not copied from a checkpoint): ChatML turns, the tools in the
# system turn, tool results as <tool_response> blocks in one user turn, and an assistant turn's reasoning shown only
# after the last real user query (and there an empty <think></think> for the last turn when it has none).
QWEN3_TEMPLATE = (
    "{%- if tools -%}"
    "{{- '<|im_start|>system\\n' -}}"
    "{%- if messages[0].role == 'system' -%}{{- messages[0].content + '\\n\\n' -}}{%- endif -%}"
    "{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' -}}"
    "{%- for tool in tools -%}{{- '\\n' + (tool | tojson) -}}{%- endfor -%}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\\n<tool_call>\\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\\n"
    "</tool_call><|im_end|>\\n' -}}"
    "{%- elif messages[0].role == 'system' -%}{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) -%}"
    "{%- for message in messages[::-1] -%}"
    "{%- set index = (messages|length - 1) - loop.index0 -%}"
    "{%- if ns.multi_step_tool and message.role == 'user' and not (message.content.startswith('<tool_response>') "
    "and message.content.endswith('</tool_response>')) -%}"
    "{%- set ns.multi_step_tool = false -%}{%- set ns.last_query_index = index -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- for message in messages -%}"
    "{%- set content = message.content if message.content is string else '' -%}"
    "{%- if message.role == 'user' or (message.role == 'system' and not loop.first) -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' -}}"
    "{%- elif message.role == 'assistant' -%}"
    "{%- set reasoning_content = message.reasoning_content if message.reasoning_content is string else '' -%}"
    "{%- if loop.index0 > ns.last_query_index and (loop.last or reasoning_content) -%}"
    "{{- '<|im_start|>assistant\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n') -}}"
    "{%- else -%}{{- '<|im_start|>assistant\\n' + content -}}{%- endif -%}"
    "{%- for tool_call in message.tool_calls or [] -%}"
    "{%- if (loop.first and content) or not loop.first -%}{{- '\\n' -}}{%- endif -%}"
    "{%- set fn = tool_call.function if tool_call.function else tool_call -%}"
    "{{- '<tool_call>\\n{\"name\": \"' + fn.name + '\", \"arguments\": ' -}}"
    "{%- if fn.arguments is string -%}{{- fn.arguments -}}{%- else -%}{{- fn.arguments | tojson -}}{%- endif -%}"
    "{{- '}\\n</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- elif message.role == 'tool' -%}"
    "{%- if loop.first or messages[loop.index0 - 1].role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}"
    "{{- '\\n<tool_response>\\n' + content + '\\n</tool_response>' -}}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' -%}{{- '<|im_end|>\\n' -}}{%- endif -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def qwen3_conversation():
    """Tool call, answer, then a new user query (after which Qwen3 hides every earlier turn's reasoning), and a last turn."""
    return conversation()[:4] + [
        {"role": "assistant", "content": "L3 is on.", "reasoning": "It worked; report."},
        {"role": "user", "content": "Thanks, that is all."},
        {"role": "assistant", "content": "Goodbye!"},
    ]


QWEN3_HEADER = CHATML_TEXT[:CHATML_TEXT.index("<|im_start|>assistant\n")]  # system + tools, user: ChatML's own
QWEN3_TURNS = [
    '<think>\nL3 is asked for.\n</think>\n\n<tool_call>\n{"name": "turn_on", "arguments": {"light_id": "L3"}}\n</tool_call><|im_end|>',
    "<think>\nIt worked; report.\n</think>\n\nL3 is on.<|im_end|>",
    "<think>\n\n</think>\n\nGoodbye!<|im_end|>",  # the last turn, shown as Qwen3 shows it: an empty think block
]
QWEN3_BETWEEN = [
    '\n<|im_start|>user\n<tool_response>\n{"on": true}\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    "\n<|im_start|>user\nThanks, that is all.<|im_end|>\n<|im_start|>assistant\n",
]
QWEN3_TEXT = (QWEN3_HEADER + "<|im_start|>assistant\n" + QWEN3_TURNS[0] + QWEN3_BETWEEN[0] + QWEN3_TURNS[1]
              + QWEN3_BETWEEN[1] + QWEN3_TURNS[2])


def make_qwen3_tokenizer(template: str = QWEN3_TEMPLATE):
    """ChatML special tokens; eos `<|endoftext|>` as in Qwen3 base checkpoints, so `<|im_end|>` must come from the template."""
    from transformers import PreTrainedTokenizerFast

    from forgec.train.tiny import train_tokenizer

    raw = train_tokenizer([CHATML_TEXT, QWEN3_TEXT] * 4, vocab_size=400)
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    tok.chat_template = template
    return tok


@pytest.fixture(scope="module")
def qwen3():
    return make_qwen3_tokenizer()


def test_qwen3_template_trains_every_turn_as_generated_with_default_settings(qwen3):
    msgs = qwen3_conversation()
    stock = qwen3.apply_chat_template(msgs, tools=TOOLS, tokenize=False)
    assert "L3 is asked for." not in stock and "It worked; report." not in stock  # the template alone drops them
    assert end_of_turn(qwen3) == "<|im_end|>" != qwen3.eos_token
    (s,) = messages_to_samples(qwen3, msgs, TOOLS, None)  # keep_thinking=True: the default
    assert tok_text(qwen3, s) == QWEN3_TEXT
    assert decoded_spans(qwen3, s) == QWEN3_TURNS
    assert render_conversation(msgs, TOOLS, tokenizer=qwen3) == QWEN3_TEXT + "\n"
    # keep_thinking=False: one sample per turn, each in the context the template itself gives it
    samples = messages_to_samples(qwen3, msgs, TOOLS, None, keep_thinking=False)
    assert [decoded_spans(qwen3, x) for x in samples] == [[t] for t in QWEN3_TURNS]
    assert tok_text(qwen3, samples[-1]) == stock.removesuffix("\n")


def test_qwen3_rollout_prompts_grow_by_appending_across_a_new_user_query(qwen3):
    """PolicyAgent under the Qwen3 template: each prompt is the previous prompt + what was generated + the new text,
    also after the user's new query (where a fresh rendering would rewrite the earlier turns)."""
    from forgec.train.rollout import PolicyAgent, Sampling

    msgs = qwen3_conversation()
    agent = PolicyAgent(None, qwen3, Sampling(), 0)
    assert agent._eot_id == qwen3.convert_tokens_to_ids("<|im_end|>") != qwen3.eos_token_id
    ids = agent.build_prompt(msgs[:2], TOOLS)
    assert qwen3.decode(ids, skip_special_tokens=False) == QWEN3_HEADER + "<|im_start|>assistant\n"
    for turn, upto in ((0, 4), (1, 6)):
        generated = qwen3(QWEN3_TURNS[turn], add_special_tokens=False)["input_ids"]
        agent._ids, agent._ended = ids + generated, True
        ids = agent.build_prompt(msgs[:upto], TOOLS)
        assert ids[:len(agent._ids)] == agent._ids
        assert qwen3.decode(ids[len(agent._ids):], skip_special_tokens=False) == QWEN3_BETWEEN[turn]
    assert qwen3.decode(ids, skip_special_tokens=False) + QWEN3_TURNS[2] == QWEN3_TEXT


def tok_text(tok, sample) -> str:
    return tok.decode(sample.input_ids, skip_special_tokens=False)


# ---------------------------------------------------------------- Gemma: the end of turn is not the eos token

GEMMA_TEMPLATE = (
    "{{- bos_token -}}"
    "{%- set ns = namespace(first='') -%}{%- set rest = messages -%}"
    "{%- if messages[0].role == 'system' -%}{%- set ns.first = messages[0].content + '\\n\\n' -%}{%- set rest = messages[1:] -%}{%- endif -%}"
    "{%- for t in tools or [] -%}{%- set ns.first = ns.first + 'Tool: ' + (t | tojson) + '\\n' -%}{%- endfor -%}"
    "{%- for m in rest -%}"
    "{{- '<start_of_turn>' + ('model' if m.role == 'assistant' else 'user') + '\\n' -}}"
    "{%- if loop.first -%}{{- ns.first -}}{%- endif -%}"
    "{%- if m.role == 'tool' -%}{{- '<tool_response>\\n' + m.content + '\\n</tool_response>' -}}"
    "{%- else -%}{{- m.content | trim -}}{%- endif -%}"
    "{%- for c in m.tool_calls or [] -%}"
    "{{- '<tool_call>\\n{\"name\": \"' + c.function.name + '\", \"arguments\": ' + (c.function.arguments | tojson) + '}\\n</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<end_of_turn>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<start_of_turn>model\\n' -}}{%- endif -%}"
)
GEMMA_CALL = '<tool_call>\n{"name": "turn_on", "arguments": {"light_id": "L3"}}\n</tool_call><end_of_turn>'
GEMMA_TEXT = (
    "<bos><start_of_turn>user\nYou are an agent.\n\n"
    'Tool: {"type": "function", "function": {"name": "turn_on", "parameters": {"type": "object"}}}\n'
    "Turn on L3.<end_of_turn>\n<start_of_turn>model\n" + GEMMA_CALL + "\n"
    '<start_of_turn>user\n<tool_response>\n{"on": true}\n</tool_response><end_of_turn>\n'
    "<start_of_turn>model\nL3 is on.<end_of_turn>"
)


def make_gemma_tokenizer(template: str = GEMMA_TEMPLATE):
    from transformers import PreTrainedTokenizerFast

    from forgec.train.tiny import train_tokenizer

    raw = train_tokenizer([GEMMA_TEXT] * 8, vocab_size=400)
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<bos>", eos_token="<eos>", pad_token="<|endoftext|>",
                                         additional_special_tokens=["<start_of_turn>", "<end_of_turn>"])
    tok.chat_template = template
    return tok


def test_gemma_end_of_turn_comes_from_the_template_not_eos():
    from forgec.train.rollout import PolicyAgent, Sampling
    from forgec.train.template import end_of_turn_id

    tok = make_gemma_tokenizer()
    assert end_of_turn(tok) == "<end_of_turn>" and tok.eos_token == "<eos>"
    assert end_of_turn_id(tok) == tok.convert_tokens_to_ids("<end_of_turn>")
    (s,) = messages_to_samples(tok, conversation(), TOOLS, None)
    assert tok_text(tok, s) == GEMMA_TEXT
    assert decoded_spans(tok, s) == [GEMMA_CALL, "L3 is on.<end_of_turn>"]

    class Says:
        """An engine that generates one fixed text, then the end-of-turn token."""

        tokens_generated = 0

        async def generate(self, prompt_ids, sampling, seed):
            return tok("L3 is on.", add_special_tokens=False)["input_ids"] + [end_of_turn_id(tok)], [0.0]

    import asyncio

    agent = PolicyAgent(Says(), tok, Sampling(), 0)
    assert agent._eot_id == end_of_turn_id(tok)  # the stop token the trainer's engines get (Trainer.eos_id) too
    reply = asyncio.run(agent.act(conversation()[:4], TOOLS))
    assert reply.content == "L3 is on." and reply.raw == "L3 is on.<end_of_turn>" and not reply.tool_calls


def test_an_explicit_end_of_turn_from_the_config_wins_and_is_saved_with_the_tokenizer(tmp_path):
    """A template that writes a footer between the content and its marker: nothing special follows the content, so the
    marker falls back to eos, which the template never writes (refused by name); template.end_of_turn fixes it."""
    from transformers import AutoTokenizer

    from forgec.train.config import TrainConfig
    from forgec.train.template import end_of_turn_id
    from forgec.train.trainer import load_tokenizer

    footer = GEMMA_TEMPLATE.replace("{{- '<end_of_turn>\\n' -}}", "{{- ' --<end_of_turn>\\n' -}}")
    tok = make_gemma_tokenizer(footer)
    with pytest.raises(ChatTemplateError, match="without the end-of-turn marker '<eos>'.*template.end_of_turn"):
        messages_to_samples(tok, conversation(), TOOLS, None)
    tok.save_pretrained(tmp_path / "tok")
    cfg = TrainConfig.model_validate({"template": {"end_of_turn": "<end_of_turn>"}})
    tok = load_tokenizer(str(tmp_path / "tok"), cfg.template.end_of_turn)
    (s,) = messages_to_samples(tok, conversation(), TOOLS, None)
    assert decoded_spans(tok, s) == [GEMMA_CALL.replace("<end_of_turn>", " --<end_of_turn>"), "L3 is on. --<end_of_turn>"]
    tok.save_pretrained(tmp_path / "exported")  # what export_hf writes: `forgec eval --agent hf` stops where training did
    again = AutoTokenizer.from_pretrained(tmp_path / "exported")
    assert end_of_turn(again) == "<end_of_turn>" and end_of_turn_id(again) == again.convert_tokens_to_ids("<end_of_turn>")
