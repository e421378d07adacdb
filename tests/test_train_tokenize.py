"""Template, tokenizer trap, loss masks and rollout-vs-training token ids, on a tiny local model.

Independent references: HF's Jinja `apply_chat_template` (a second implementation of the
template), the raw `tokenizers` file (ids without transformers in between), and the
agents' own generated text (decoded masked tokens must equal it).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from forgec.runtime.toolcalls import parse_hermes
from forgec.train.template import render_conversation, render_segments

TOOLS = [{"type": "function", "function": {"name": "turn_on", "description": "Turn a light on.",
          "parameters": {"type": "object", "properties": {"light_id": {"type": "string"}}, "required": ["light_id"]}}}]


def conversation():
    return [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Please turn on light L3, and L4 too."},
        {"role": "assistant", "content": "", "reasoning": "The user wants L3 on.",
         "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "turn_on", "arguments": "{\"light_id\": \"L3\"}"}},
                        {"id": "c1", "type": "function", "function": {"name": "turn_on", "arguments": {"light_id": "L4"}}}]},
        {"role": "tool", "tool_call_id": "c0", "content": "{\"light_id\": \"L3\", \"on\": true}"},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"light_id\": \"L4\", \"on\": true}"},
        {"role": "assistant", "content": "Both are on. Anything else?", "reasoning": "Done; report."},
        {"role": "user", "content": "No, thanks."},
        {"role": "assistant", "content": "Goodbye!"},
    ]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from forgec.train.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "m", seed=0)


@pytest.fixture(scope="module")
def tok(tiny):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny)


@pytest.fixture(scope="module")
def toy_build(tmp_path_factory):
    from forgec.runtime.loader import load
    from forgec.train.toybuild import make_toy_build

    return load(make_toy_build(tmp_path_factory.mktemp("toy") / "build", tasks_per_env=3))


# ---------------------------------------------------------------- template


def test_python_template_equals_jinja_template(tok):
    msgs = conversation()
    for gen in (False, True):
        ours = render_conversation(msgs, TOOLS, add_generation_prompt=gen)
        theirs = tok.apply_chat_template(msgs, tools=TOOLS, tokenize=False, add_generation_prompt=gen)
        assert ours == theirs
    # tool list without a system message, and no tools at all
    assert render_conversation(msgs[1:], TOOLS) == tok.apply_chat_template(msgs[1:], tools=TOOLS, tokenize=False)
    assert render_conversation(msgs[1:2]) == tok.apply_chat_template(msgs[1:2], tokenize=False)


def test_interleaved_thinking_keeps_earlier_reasoning_and_drop_option_removes_it():
    kept = render_conversation(conversation(), TOOLS, keep_thinking=True)
    assert kept.count("<think>") == 2 and "The user wants L3 on." in kept
    dropped = render_conversation(conversation(), TOOLS, keep_thinking=False)
    # only the last assistant turn may keep reasoning; it has none, so no think block survives
    assert "<think>" not in dropped and "Both are on." in dropped
    # Hermes shape of the second call (dict arguments are JSON-encoded)
    assert '<tool_call>\n{"name": "turn_on", "arguments": {"light_id": "L4"}}\n</tool_call>' in kept
    # consecutive tool results share one user turn
    assert kept.count("<|im_start|>user\n<tool_response>") == 1 and kept.count("<tool_response>") == 2


def test_parse_hermes_roundtrip():
    body = '<think>\nplan it\n</think>\n\nOn it.\n<tool_call>\n{"name": "turn_on", "arguments": {"light_id": "L3"}}\n</tool_call>\n<tool_call>\nnot json\n</tool_call><|im_end|>'
    p = parse_hermes(body)
    assert p.reasoning == "plan it" and p.content == "On it."
    assert [(c.name, c.arguments) for c in p.tool_calls] == [("turn_on", {"light_id": "L3"}), ("", "not json")]
    assert parse_hermes("plain answer<|im_end|>").tool_calls == []


# ---------------------------------------------------------------- the tokenizer trap


def test_autotokenizer_ids_equal_raw_tokenizer_ids(tiny, tok):
    from tokenizers import Tokenizer

    raw = Tokenizer.from_file(str(tiny / "tokenizer.json"))
    assert type(tok).__name__ == "Qwen2Tokenizer"  # what transformers 5 picks for this folder (as for real Qwen)
    texts = [render_conversation(conversation(), TOOLS), "it's 12345   spaces\n\n\nnaïve café 東京 ½ x'LL", "a\r\nb\tc  d"]
    for t in texts:
        assert tok(t, add_special_tokens=False)["input_ids"] == raw.encode(t, add_special_tokens=False).ids


def test_plain_bytelevel_tokenizer_shows_the_trap(tmp_path):
    """The reason tiny.py trains with Qwen's split: a plain ByteLevel BPE drifts under Qwen2Tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    t.train_from_iterator(["order 12345 total 678 and 90"] * 20, trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                                                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    PreTrainedTokenizerFast(tokenizer_object=t).save_pretrained(tmp_path)
    cfg = json.loads((tmp_path / "tokenizer_config.json").read_text())
    cfg["tokenizer_class"] = "Qwen2Tokenizer"
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(cfg))
    auto = AutoTokenizer.from_pretrained(tmp_path)
    s = "order 12345 total 678"
    assert auto(s, add_special_tokens=False)["input_ids"] != t.encode(s).ids


# ---------------------------------------------------------------- masks and ids


def test_oracle_episode_mask_decodes_to_exactly_the_agent_turns(tok, toy_build):
    """SFT path (no rollout ids): masked tokens of real multi-turn oracle episodes = the assistant bodies."""
    from forgec.runtime.agents import OracleAgent
    from forgec.runtime.episode import run_episode
    from forgec.runtime.users import ScriptedUser
    from forgec.train.template import render_assistant_body
    from forgec.train.tokenize import masked_spans, messages_to_samples

    for task in toy_build.tasks:
        ep = run_episode(toy_build, task, OracleAgent(task), ScriptedUser(task))
        tools = toy_build.envs[task.env].TOOLS
        (s,) = messages_to_samples(tok, ep.messages, tools, None)
        spans = [tok.decode(x, skip_special_tokens=False) for x in masked_spans(s)]
        want = [render_assistant_body(m) + "<|im_end|>" for m in ep.messages if m["role"] == "assistant"]
        assert spans == want and len(spans) >= 2
        # and the whole sequence is the rendered conversation up to the last agent turn
        last = max(i for i, m in enumerate(ep.messages) if m["role"] == "assistant")
        assert tok.decode(s.input_ids, skip_special_tokens=False) == render_conversation(ep.messages[: last + 1], tools).rstrip("\n")
        # nothing of the system, user or tool turns is trainable
        decoded_masked = "".join(spans)
        assert "Please" not in decoded_masked and "<tool_response>" not in decoded_masked and "<|im_start|>" not in decoded_masked


def test_keep_thinking_false_gives_one_sample_per_turn(tok):
    from forgec.train.tokenize import masked_spans, messages_to_samples

    samples = messages_to_samples(tok, conversation(), TOOLS, None, keep_thinking=False)
    assert len(samples) == 3
    for k, s in enumerate(samples):
        spans = masked_spans(s)
        assert len(spans) == 1  # only the last turn of each sample is trained
        text = tok.decode(s.input_ids, skip_special_tokens=False)
        # earlier turns' reasoning is gone from the context, the trained turn keeps its own
        assert text.count("<think>") == (1 if k < 2 else 0)


def test_rollout_ids_are_training_ids(tiny, tok, toy_build):
    """HF-backend rollouts through the real episode loop: training sequence == rollout ids, no re-tokenization."""
    from transformers import AutoModelForCausalLM

    from forgec.train.rollout import GroupSpec, HFEngine, PolicyAgent, Sampling, run_groups
    from forgec.train.tokenize import episode_to_samples, masked_spans, messages_to_samples

    model = AutoModelForCausalLM.from_pretrained(tiny)
    engine = HFEngine(model, tok.convert_tokens_to_ids("<|im_end|>"), tok.pad_token_id)
    fac = lambda seed: PolicyAgent(engine, tok, Sampling(24, 1.0, 1.0), seed)  # noqa: E731
    specs = [GroupSpec(t, i, 100 + i) for i, t in enumerate(toy_build.tasks[:2])]
    groups = asyncio.run(run_groups(toy_build, specs, 2, fac, max_turns=3))
    multi = 0
    for eps in groups:
        for ep in eps:
            gen = [r for r in ep.replies if r.token_ids]
            assert gen
            (s,) = episode_to_samples(tok, ep.messages, ep.replies, toy_build.envs[ep.env].TOOLS, None)
            # every turn's prompt is a prefix of the training sequence, its generation follows verbatim
            for r in gen:
                n = len(r.prompt_token_ids)
                assert s.input_ids[:n] == r.prompt_token_ids
                assert s.input_ids[n:n + len(r.token_ids)] == r.token_ids
                assert s.loss_mask[n:n + len(r.token_ids)] == [1] * len(r.token_ids)
            spans = masked_spans(s)
            assert spans == [r.token_ids for r in gen]
            assert sum(s.loss_mask) == sum(len(r.token_ids) for r in gen)
            # decoding the masked tokens gives back exactly what the agent produced
            assert [tok.decode(x, skip_special_tokens=False) for x in spans] == [r.raw for r in gen]
            multi += len(gen) > 1
            # batched, left-padded sampling saw the same distribution the training forward computes
            import torch

            with torch.no_grad():
                lp = torch.log_softmax(model(input_ids=torch.tensor([s.input_ids])).logits[0].float(), -1)
            train_lp = [float(lp[t - 1, s.input_ids[t]]) for t in range(1, len(s.input_ids)) if s.loss_mask[t]]
            roll_lp = [x for x, m in zip(s.rollout_logprobs, s.loss_mask) if m]
            assert max(abs(a - b) for a, b in zip(train_lp, roll_lp)) < 1e-4
    assert multi >= 1  # at least one real multi-turn episode was checked
    assert engine.calls <= 3  # one batched generate per turn for all 4 episodes in flight
    # seeded sampling: the same specs give the same episodes, token for token; another seed does not
    again = asyncio.run(run_groups(toy_build, specs, 2, fac, max_turns=3))
    ids = lambda gs: [[r.token_ids for r in ep.replies] for eps in gs for ep in eps]  # noqa: E731
    assert ids(again) == ids(groups)
    other = asyncio.run(run_groups(toy_build, [GroupSpec(s.task, s.group, s.seed + 1) for s in specs], 2, fac, max_turns=3))
    assert ids(other) != ids(groups)


def test_prompt_growth_matches_fresh_rendering_when_the_text_roundtrips(tok, toy_build):
    """A policy that emits template-exact text: its appended prompts equal a fresh render of the messages."""
    from forgec.runtime.agents import OracleAgent
    from forgec.runtime.episode import arun_episode
    from forgec.runtime.users import ScriptedUser
    from forgec.train.rollout import PolicyAgent, Sampling
    from forgec.train.template import render_assistant_body

    task = toy_build.tasks[0]
    oracle = OracleAgent(task)
    im_end = tok.convert_tokens_to_ids("<|im_end|>")

    class OracleEngine:
        """Generates the oracle's turn as template text (what a perfect policy would sample)."""

        tokens_generated = 0

        def __init__(self):
            self.messages = None

        async def generate(self, prompt_ids, sampling, seed):
            from forgec.runtime.toolcalls import to_openai_message

            r = oracle.act_sync(self.messages, [])
            body = render_assistant_body(to_openai_message(r.content, r.tool_calls))
            return tok(body, add_special_tokens=False)["input_ids"] + [im_end], [0.0] * 0

    eng = OracleEngine()
    agent = PolicyAgent(eng, tok, Sampling(64, 0.0), 0)
    orig = agent.act

    async def act(messages, tools):
        eng.messages = messages
        return await orig(messages, tools)

    agent.act = act
    ep = asyncio.run(arun_episode(toy_build, task, agent, ScriptedUser(task), seed=0))
    assert ep.reward == 1.0
    tools = toy_build.envs[task.env].TOOLS
    for k, r in enumerate(ep.replies):
        upto = [i for i, m in enumerate(ep.messages) if m["role"] == "assistant"][k]
        fresh = []
        for seg in render_segments(ep.messages[:upto], tools, None, add_generation_prompt=True):
            fresh += tok(seg.text, add_special_tokens=False)["input_ids"]
        assert r.prompt_token_ids == fresh


@pytest.fixture(scope="module")
def compiled_build(tmp_path_factory):
    """`forgec compile examples/`: real compiled environments and tasks."""
    import subprocess
    import sys
    from pathlib import Path

    examples = Path(__file__).resolve().parent.parent / "examples"

    out = tmp_path_factory.mktemp("compiled") / "build"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(examples), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    from forgec.runtime.loader import load

    return load(out)


def test_masks_on_compiled_multi_turn_oracle_episodes(tok, compiled_build):
    """Real compiled envs (examples/): masked tokens decode to exactly the agent's turns, nothing else."""
    from forgec.runtime.agents import OracleAgent
    from forgec.runtime.episode import run_episode
    from forgec.runtime.users import ScriptedUser
    from forgec.train.template import render_assistant_body
    from forgec.train.tokenize import masked_spans, messages_to_samples

    checked = 0
    for env in sorted(compiled_build.envs):
        for task in [t for t in compiled_build.tasks if t.env == env][:6]:
            ep = run_episode(compiled_build, task, OracleAgent(task), ScriptedUser(task))
            tools = compiled_build.envs[env].TOOLS
            (s,) = messages_to_samples(tok, ep.messages, tools, None)
            spans = [tok.decode(x, skip_special_tokens=False) for x in masked_spans(s)]
            assert spans == [render_assistant_body(m) + "<|im_end|>" for m in ep.messages if m["role"] == "assistant"]
            last = max(i for i, m in enumerate(ep.messages) if m["role"] == "assistant")
            assert tok.decode(s.input_ids, skip_special_tokens=False) == render_conversation(ep.messages[: last + 1], tools).rstrip("\n")
            checked += 1
    assert checked >= 9
