"""Real vLLM (CPU build) serving the tiny policy: rollouts through it and weight updates reaching it.

Needs the separate venv made by scripts/setup_vllm_venv.sh; FORGEC_VLLM_VENV points at it
(.ci/run sets it). The server runs on 127.0.0.1 with the Hermes tool parser.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.environ.get("FORGEC_VLLM_VENV"), reason="FORGEC_VLLM_VENV unset (run scripts/setup_vllm_venv.sh)")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hf_logprobs(model, prompt: list[int], gen: list[int]) -> list[float]:
    import torch

    ids = torch.tensor([prompt + gen])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].float()
    lp = torch.log_softmax(logits, -1)
    return [float(lp[len(prompt) - 1 + i, t]) for i, t in enumerate(gen)]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from forgec.runtime.loader import load
    from forgec.train.tiny import build_tiny_model
    from forgec.train.toybuild import make_toy_build
    from forgec.train.trainer import oracle_texts

    root = tmp_path_factory.mktemp("vllm")
    build = load(make_toy_build(root / "build", tasks_per_env=4))
    from forgec.train.config import TrainConfig

    model_dir = build_tiny_model(root / "policy", seed=1, extra_texts=oracle_texts(build, TrainConfig()))
    return root, build, model_dir


def test_rollouts_through_vllm_and_a_weight_update_changes_the_served_policy(setup):
    import torch
    from openai import OpenAI
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from forgec.train.loss import ppo_clip_loss, sequence_logprobs
    from forgec.train.rollout import GroupSpec, PolicyAgent, Sampling, VLLMEngine, VLLMServer, run_groups
    from forgec.train.tokenize import episode_to_samples, masked_spans
    from forgec.train.trainer import collate

    root, build, model_dir = setup
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    server = VLLMServer(model_dir, free_port(), log_path=root / "vllm.log")
    server.start()
    try:
        # the chat endpoint with tools goes through vLLM's hermes parser and our chat template
        client = OpenAI(base_url=server.base_url, api_key="x")
        chat = client.chat.completions.create(model="policy", messages=[{"role": "user", "content": "Please turn on light L1."}],
                                              tools=build.envs["lights"].TOOLS, max_tokens=8, temperature=0)
        assert chat.choices[0].message is not None

        engine = VLLMEngine(server.base_url, "policy", tok.convert_tokens_to_ids("<|im_end|>"))
        fac = lambda seed: PolicyAgent(engine, tok, Sampling(32, 1.0, 1.0), seed)  # noqa: E731
        specs = [GroupSpec(t, i, 7 + i) for i, t in enumerate(build.tasks[:2])]
        groups = asyncio.run(run_groups(build, specs, 2, fac, max_turns=2))
        samples = []
        for eps in groups:
            for ep in eps:
                gen = [r for r in ep.replies if r.token_ids]
                assert gen, ep.error
                (s,) = episode_to_samples(tok, ep.messages, ep.replies, build.envs[ep.env].TOOLS, None)
                assert masked_spans(s) == [r.token_ids for r in gen]
                # vLLM's sampling logprobs equal the HF model's logprobs of the same ids (same weights)
                for r in gen:
                    ref = hf_logprobs(model, r.prompt_token_ids, r.token_ids)
                    assert max(abs(a - b) for a, b in zip(r.logprobs, ref)) < 2e-3
                s.advantage = 1.0
                samples.append(s)

        probe_prompt = gen[0].prompt_token_ids
        probe = client.completions.create(model="policy", prompt=probe_prompt, max_tokens=12, temperature=0, logprobs=1,
                                          extra_body={"return_token_ids": True, "skip_special_tokens": False})
        before_ids = probe.choices[0].model_extra.get("token_ids") or probe.choices[0].token_ids
        before_lp = probe.choices[0].logprobs.token_logprobs

        # one real policy-gradient update on the vLLM rollouts (advantage +1: make them likelier)
        opt = torch.optim.AdamW(model.parameters(), lr=5e-2)
        ids, att, mask, adv = collate(samples, tok.pad_token_id, "cpu")
        logp = sequence_logprobs(model, ids, att)
        ppo_clip_loss(logp, logp.detach(), adv, mask, denom=float(mask.sum())).loss.backward()
        opt.step()
        sync_dir = root / "sync"
        model.save_pretrained(sync_dir, safe_serialization=True)
        tok.save_pretrained(sync_dir)
        assert server.sync(sync_dir, "auto") == "reload"  # in-place reload, no restart
        assert server.restarts == 0

        after = client.completions.create(model="policy", prompt=probe_prompt, max_tokens=12, temperature=0, logprobs=1,
                                          extra_body={"return_token_ids": True, "skip_special_tokens": False})
        after_ids = after.choices[0].model_extra.get("token_ids") or after.choices[0].token_ids
        after_lp = after.choices[0].logprobs.token_logprobs
        # the served policy changed ...
        assert after_ids != before_ids or max(abs(a - b) for a, b in zip(after_lp, before_lp)) > 1e-2
        # ... into exactly the updated weights
        ref = hf_logprobs(model, probe_prompt, list(after_ids))
        assert max(abs(a - b) for a, b in zip(after_lp, ref)) < 2e-3
    finally:
        server.stop()


def test_forgec_train_with_the_vllm_backend(setup):
    root, _build, model_dir = setup
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu")
    args = ["train", "build", "-c", "cpu-tiny", "-o", "rl-vllm", "--set", f"model.path={model_dir}", "--set", "rollout.backend=vllm",
            "--set", f"rollout.vllm_port={free_port()}", "--set", "optim.steps=2", "--set", "rollout.tasks_per_step=2",
            "--set", "rollout.group_size=2", "--set", "rollout.max_new_tokens=24", "--set", "algo.dynamic_filtering=false",
            "--set", "checkpoint.every=0"]
    r = subprocess.run([sys.executable, "-m", "forgec", *args], cwd=root, env=env, capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    recs = [json.loads(x) for x in (root / "rl-vllm" / "metrics.jsonl").read_text().splitlines()]
    assert [x["step"] for x in recs] == [1, 2]
    assert all(x["weight_sync"] == "reload" and math.isfinite(x["loss"]) and x["gen_tokens"] > 0 for x in recs)
    assert Path(root / "rl-vllm" / "policy" / "model.safetensors").exists()
