"""`forgec.gym`: Gymnasium's own checker, oracle rollouts scoring 1.0 (as `forgec eval` scores them), action formats,
budgets, and the docs' rollout loop with a tiny local HF model (HF_HUB_OFFLINE=1, nothing downloaded)."""

from __future__ import annotations

import json
import os

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from runtime_build import make_build

from forgec.gym import ForgecEnv, parse_action, reply_to_action
from forgec.runtime import load
from forgec.runtime.agents import OracleAgent
from forgec.runtime.episode import EpisodeLimits, run_episode_sync
from forgec.runtime.users import ScriptedUser

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    return load(make_build(tmp_path_factory.mktemp("gym") / "b"))


def oracle_rollout(env: ForgecEnv, task_id: str):
    obs, info = env.reset(options={"task": task_id})
    agent = OracleAgent(env.task)
    steps, done = 0, False
    while not done:
        assert json.loads(obs) == info["messages"]
        action = reply_to_action(agent.act_sync(info["messages"], env.tools()))
        obs, reward, terminated, truncated, info = env.step(action)
        done, steps = terminated or truncated, steps + 1
        assert steps < 20
    return reward, terminated, truncated, info


def test_check_env_passes(shop):
    env = ForgecEnv(shop, render_mode="ansi")
    check_env(env)  # spaces, reset/step return types, seed determinism, step determinism, no reused data, render
    made = gymnasium.make("forgec/Task-v0", build=str(shop.root), tasks=["shop"], render_mode="ansi")
    check_env(made.unwrapped)  # with a spec: render modes and close checked too
    made.close()


def test_reset_seed_picks_tasks_deterministically(shop):
    env = ForgecEnv(shop)
    picks = [env.reset(seed=s)[1]["task_id"] for s in range(40)]
    assert picks == [ForgecEnv(shop).reset(seed=s)[1]["task_id"] for s in range(40)]
    assert set(picks) == {t.id for t in shop.tasks}  # every task is reachable
    only = ForgecEnv(shop, tasks=["shop/desk_price", "shop/order_total"])
    assert {only.reset(seed=s)[1]["task_id"] for s in range(20)} == {"shop/desk_price", "shop/order_total"}
    sampled = ForgecEnv(shop, tasks=lambda rng: "shop/cancel_order")
    assert sampled.reset(seed=3)[1]["task_id"] == "shop/cancel_order"


def test_oracle_rollout_scores_one_on_every_task_like_eval(shop):
    env = ForgecEnv(shop)
    for t in shop.tasks:
        reward, terminated, truncated, info = oracle_rollout(env, t.id)
        ep = run_episode_sync(shop, t, OracleAgent(t), ScriptedUser(t))
        assert (reward, terminated, truncated) == (1.0, True, False), (t.id, info)
        assert info["reward_breakdown"] == ep.reward_breakdown and info["messages"] == ep.messages
        assert env.episode.final_state_hash == t.gold_state_hash


def test_oracle_rollout_on_compiled_examples(tmp_path_factory):
    from servekit import compile_examples

    b = load(compile_examples(tmp_path_factory.mktemp("gymex") / "build", n=4))
    env = ForgecEnv(b)
    for t in b.tasks:
        reward, terminated, _, info = oracle_rollout(env, t.id)
        assert reward == 1.0 and terminated, (t.id, info.get("end_reason"), info.get("reward_breakdown"))


def test_action_formats_hermes_text_json_and_plain(shop):
    env = ForgecEnv(shop)
    env.reset(options={"task": "shop/order_total"})
    obs, r, term, trunc, info = env.step('<tool_call>{"name": "get_order", "arguments": {"order_id": "o_2"}}</tool_call>')
    assert info["messages"][-1]["role"] == "tool" and json.loads(info["messages"][-1]["content"])["total"] == 89
    obs, r, term, trunc, info = env.step('{"tool_calls": [{"type": "function", "function": {"name": "get_order", "arguments": "{\\"order_id\\": \\"o_9\\"}"}}]}')
    assert info["messages"][-1]["content"] == "Error: no order 'o_9'" and not term
    obs, r, term, trunc, info = env.step("The total of your order is 89. Your request has been completed.")
    assert (r, term, trunc) == (1.0, True, False) and info["end_reason"] == "user_stop"
    with pytest.raises(RuntimeError, match="reset"):
        env.step("hello")
    assert parse_action("{not json", 0).content == "{not json"
    assert parse_action({"content": "hi"}, 0).content == "hi"


def test_budget_ends_as_truncated(shop):
    env = ForgecEnv(shop, limits=EpisodeLimits(max_turns=2))
    env.reset(options={"task": "shop/cancel_order"})
    call = '<tool_call>{"name": "get_order", "arguments": {"order_id": "o_1"}}</tool_call>'
    _, r, term, trunc, _ = env.step(call)
    assert not (term or trunc)
    _, r, term, trunc, info = env.step(call)
    assert (r, term, trunc) == (0.0, False, True) and info["end_reason"] == "max_turns"


def test_docs_rollout_loop_with_a_tiny_local_hf_model(shop, tmp_path):
    """The loop of docs/serve.md, run as written, with a random-weight model saved locally."""
    torch = pytest.importorskip("torch")
    from test_runtime_hf import make_tiny_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from forgec.runtime.agents import hf_template_messages

    corpus = [t.instruction for t in shop.tasks] + ['<tool_call>{"name": "get_order", "arguments": {"order_id": "o_1"}}</tool_call>'] * 10
    make_tiny_model(tmp_path / "model", corpus)
    tok = AutoTokenizer.from_pretrained(tmp_path / "model")
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "model")

    env = ForgecEnv(shop, limits=EpisodeLimits(max_turns=3))
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        enc = tok.apply_chat_template(hf_template_messages(json.loads(obs)), tools=env.tools(), add_generation_prompt=True,
                                      return_tensors="pt", return_dict=True)
        with torch.no_grad():
            out = model.generate(**enc, max_new_tokens=16, do_sample=False)
        text = tok.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        obs, reward, terminated, truncated, info = env.step(text)
        done = terminated or truncated
    assert reward in (0.0, 1.0) and info["end_reason"] and info["turns"] <= 3
