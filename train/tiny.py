"""A tiny local HF causal LM and tokenizer, built on the fly (tests, `cpu-tiny`, benches).

No hub: the byte-level BPE tokenizer is trained with `tokenizers` on the training
template's own text (plus any texts given), the model is a randomly initialised
Qwen3-architecture decoder (2 layers, hidden 64 by default).

The tokenizer trap: transformers 5.x loads a folder whose tokenizer_config says
`Qwen2Tokenizer` (what vLLM and transformers 4.x need to load it at all) by
rebuilding the BPE with Qwen's own normalizer (NFC) and pre-tokenizer regex. A
tokenizer trained with the plain ByteLevel split then yields *different ids* under
AutoTokenizer than under the raw `tokenizers` file. We train with exactly Qwen's
split, so every loader (raw tokenizers, transformers 4/5, vLLM) agrees;
tests/test_train_tiny.py checks it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from forgec.train.template import chat_template_jinja, render_conversation

# Qwen2/Qwen3 pre-tokenizer regex, as transformers' Qwen2Tokenizer hard-codes it.
QWEN_SPLIT_REGEX = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Added (non-special) tokens: kept by decode(skip_special_tokens=True), one id each.
ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


def _seed_corpus(extra_texts: list[str] | None, seed: int) -> list[str]:
    """Template boilerplate, JSON-ish tool traffic and digits, so the BPE learns them."""

    rng = random.Random(seed)
    words = ("the a to of and is in it you that for on with as order user flight reservation status cancel "
             "update get search create delete list find id name price date city email item total amount book "
             "done please thanks your my number found here result ok yes no account product cart light on off").split()
    texts = list(extra_texts or [])
    tools = [{"type": "function", "function": {"name": "get_order", "description": "Look up an order by id.",
              "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}]
    for i in range(60):
        sent = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
        num = rng.randint(0, 99999)
        msgs = [
            {"role": "user", "content": f"{sent.capitalize()} {num}?"},
            {"role": "assistant", "content": "", "reasoning": f"I should call get_order {i}.",
             "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": "get_order", "arguments": json.dumps({"order_id": f"o_{num}"})}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"order_id": f"o_{num}", "status": rng.choice(words), "total": num / 100})},
            {"role": "assistant", "content": f"Your order o_{num} is {rng.choice(words)}."},
        ]
        texts.append(render_conversation(msgs, tools, system="You are a helpful assistant."))
    texts.append("".join(chr(c) for c in range(32, 127)))
    return texts


def train_tokenizer(texts: list[str], vocab_size: int = 1024):
    """A byte-level BPE with Qwen's normalizer and split (see the module docstring)."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS + ADDED_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def build_tiny_model(out_dir: str | Path, *, layers: int = 2, hidden: int = 64, vocab_size: int = 1024,
                     seed: int = 0, extra_texts: list[str] | None = None) -> Path:
    """Write a tiny Qwen3 model + tokenizer folder loadable by AutoModelForCausalLM/AutoTokenizer and vLLM."""
    import torch
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, Qwen3Config


    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    raw = train_tokenizer(_seed_corpus(extra_texts, seed), vocab_size)
    fast = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = chat_template_jinja()
    fast.save_pretrained(out)
    # Declare Qwen2Tokenizer so vLLM / transformers 4.x can load it (see the trap above).
    cfg_path = out / "tokenizer_config.json"
    tcfg = json.loads(cfg_path.read_text())
    tcfg["tokenizer_class"] = "Qwen2Tokenizer"
    tcfg.pop("backend", None)
    tcfg["model_max_length"] = 32768
    tcfg["added_tokens_decoder"] = {
        str(raw.token_to_id(t)): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                                   "single_word": False, "special": t in SPECIAL_TOKENS}
        for t in SPECIAL_TOKENS + ADDED_TOKENS
    }
    cfg_path.write_text(json.dumps(tcfg, indent=2, sort_keys=True) + "\n")

    # head_dim 32: vLLM's CPU attention kernels reject head_dim 16 (measured: "Unsupported CPU
    # attention configuration: head_dim=16"); 32 is the smallest they take.
    heads = max(2, hidden // 32)
    config = Qwen3Config(
        vocab_size=raw.get_vocab_size(),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=max(1, heads // 2),
        head_dim=32,
        max_position_embeddings=8192,
        # untied, like Qwen3-8B/30B; vLLM's in-place reload_weights did not refresh a tied lm_head (measured)
        tie_word_embeddings=False,
        bos_token_id=raw.token_to_id("<|endoftext|>"),
        eos_token_id=raw.token_to_id("<|im_end|>"),
        pad_token_id=raw.token_to_id("<|endoftext|>"),
        rope_theta=10000.0,
    )
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    model.generation_config.do_sample = True
    model.save_pretrained(out, safe_serialization=True)
    return out
