"""HFAgent with a tiny local model (random weights, tokenizer trained on the fly, explicit chat template), on CPU."""

from __future__ import annotations

import asyncio
import os

import pytest
from runtime_build import make_build

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from forgec.runtime import load  # noqa: E402
from forgec.runtime.agents import HFAgent  # noqa: E402
from forgec.runtime.episode import EpisodeLimits, arun_episode  # noqa: E402
from forgec.runtime.judge import RuleJudge  # noqa: E402
from forgec.runtime.users import ScriptedUser  # noqa: E402

# A Hermes-style template (tools in the system turn, <tool_call>/<tool_response> in the text), set explicitly.
CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}"
    "# Tools\n<tools>{% for t in tools %}\n{{ t | tojson }}{% endfor %}\n</tools><|im_end|>\n"
    "{%- elif messages[0].role == 'system' %}<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'user' or (m.role == 'system' and not loop.first) %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
    "{%- elif m.role == 'assistant' %}<|im_start|>assistant\n{{ m.content }}"
    "{%- for tc in m.tool_calls or [] %}<tool_call>\n{{ {'name': tc.function.name, 'arguments': tc.function.arguments} | tojson }}\n</tool_call>{% endfor %}"
    "<|im_end|>\n"
    "{%- elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)


def make_tiny_model(path, corpus: list[str], vocab_size: int = 400) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    from tokenizers import decoders

    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None)
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=2, max_position_embeddings=4096, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id,
                      tie_word_embeddings=True)
    LlamaForCausalLM(cfg).save_pretrained(path)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    build = load(make_build(root / "build"))
    corpus = [t.instruction for t in build.tasks] + ['<tool_call>{"name": "get_order", "arguments": {"order_id": "o_1"}}</tool_call>',
                                                     "Your request has been completed.", "What is your order id?"] * 20
    make_tiny_model(root / "model", corpus)
    return build, root / "model"


def test_hf_agent_completes_episodes_on_cpu(tiny):
    from transformers import AutoTokenizer

    build, model_path = tiny
    agent = HFAgent(str(model_path), max_new_tokens=12, temperature=0.0)
    tok = AutoTokenizer.from_pretrained(model_path)
    for t in build.tasks[:2]:
        ep = asyncio.run(arun_episode(build, t, agent, ScriptedUser(t, max_turns=2), judge=RuleJudge(), limits=EpisodeLimits(max_turns=3)))
        assert ep.error is None, ep.error
        assert ep.end_reason in ("user_stop", "max_turns")
        assert ep.turns >= 1 and len(ep.replies) == ep.turns
        for i, r in enumerate(ep.replies):
            assert r.token_ids and len(r.token_ids) == len(r.logprobs) <= 12
            assert all(lp <= 0.0 for lp in r.logprobs)
            assert r.usage == {"prompt_tokens": len(r.prompt_token_ids), "completion_tokens": len(r.token_ids)}
        # the first prompt is exactly the chat template applied to the conversation the agent saw
        first = ep.replies[0]
        msgs = ep.messages[:2]
        expect = tok.apply_chat_template(msgs, tools=build.envs["shop"].TOOLS, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
        assert first.prompt_token_ids == list(expect)
        assert ep.tokens["completion_tokens"] == sum(len(r.token_ids) for r in ep.replies)


def test_hf_agent_greedy_is_deterministic(tiny):
    build, model_path = tiny
    t = build.tasks[0]
    a = asyncio.run(arun_episode(build, t, HFAgent(str(model_path), max_new_tokens=8), ScriptedUser(t, max_turns=1), limits=EpisodeLimits(max_turns=2)))
    b = asyncio.run(arun_episode(build, t, HFAgent(str(model_path), max_new_tokens=8), ScriptedUser(t, max_turns=1), limits=EpisodeLimits(max_turns=2)))
    assert [r.token_ids for r in a.replies] == [r.token_ids for r in b.replies]
    assert a.messages == b.messages


def test_hf_agent_bad_model_path_ends_episode_with_error(tiny, tmp_path):
    build, _ = tiny
    t = build.tasks[0]
    ep = asyncio.run(arun_episode(build, t, HFAgent(str(tmp_path / "missing")), ScriptedUser(t)))
    assert ep.end_reason == "agent_error" and "hf agent failed" in ep.error


def test_cli_eval_with_hf_agent(tiny, tmp_path):
    import json

    from typer.testing import CliRunner

    from forgec.cli import app

    build, model_path = tiny
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["eval", str(build.root), "--agent", "hf", "--agent-path", str(model_path), "-k", "1",
                                 "--tasks", "shop/cancel_order", "--max-turns", "2", "--max-new-tokens", "8", "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    data = json.loads((out / "run_results.json").read_text())
    assert data["summary"]["episodes"] == 1 and data["summary"]["errors"] == 0
    ep = json.loads((out / "episodes.jsonl").read_text())
    assert ep["replies"][0]["token_ids"] and ep["replies"][0]["prompt_token_ids"] and len(ep["replies"][0]["token_ids"]) <= 8


@pytest.mark.slow
def test_hf_model_trained_on_the_gold_turns_scores_one(tmp_path):
    """End to end with real generated tokens: a tiny model overfit on the oracle's two turns of one task
    emits the Hermes tool call and the answer; the runtime parses, executes and rewards them (1.0)."""
    import json

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from forgec.runtime.agents import OracleAgent, hf_template_messages, oracle_final_text
    from forgec.runtime.episode import AGENT_SYSTEM_PROMPT, run_episode

    build = load(make_build(tmp_path / "build"))
    t = build.task("shop/order_total")
    tools = build.envs["shop"].TOOLS
    gold = run_episode(build, t, OracleAgent(t), ScriptedUser(t))
    call_text = "<tool_call>\n" + json.dumps({"name": "get_order", "arguments": {"order_id": "o_2"}}) + "\n</tool_call>"
    corpus = [AGENT_SYSTEM_PROMPT, json.dumps(tools), "<tool_response>", t.instruction, call_text, oracle_final_text(t)] * 20
    path = tmp_path / "model"
    make_tiny_model(path, corpus, vocab_size=3000)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    pairs = []
    for n_msgs, completion in ((2, call_text), (4, oracle_final_text(t))):  # (system, user) -> call; (+ call, result) -> answer
        prompt = tok.apply_chat_template(hf_template_messages(gold.messages[:n_msgs]), tools=tools, add_generation_prompt=True,
                                         tokenize=True, return_dict=True)["input_ids"]
        pairs.append((list(prompt), tok(completion + "<|im_end|>", add_special_tokens=False)["input_ids"]))
    torch.manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(300):
        total = 0.0
        for prompt, completion in pairs:
            ids = torch.tensor([prompt + completion])
            labels = ids.clone()
            labels[0, : len(prompt)] = -100
            loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
            total += loss.item()
        opt.step()
        opt.zero_grad()
        if total < 0.02:
            break
    model.save_pretrained(path)
    ep = asyncio.run(arun_episode(build, t, HFAgent(str(path), max_new_tokens=60), ScriptedUser(t), judge=RuleJudge()))
    assert ep.error is None and ep.tool_calls == 1 and ep.tool_errors == 0
    assert ep.replies[0].tool_calls[0].name == "get_order" and ep.replies[0].tool_calls[0].arguments == {"order_id": "o_2"}
    assert ep.reward == 1.0 and ep.end_reason == "user_stop"
