"""The same model outputs through every path that scores them (issue 22): equal rewards.

Paths: a training rollout (`PolicyAgent` decoding the ids its engine generated, run by `train.rollout.run_groups`),
`forgec eval` (`runtime.eval.evaluate`) with the HF agent and with the OpenAI-compatible agent in both tool formats
(the server has no tool or reasoning parser, so the raw text comes back as content), `forgec.gym`, and serve's score
route (`serve.sessions.said_to_user` over the raw model text, the calls replayed on a session). The outputs are tricky
rows of the golden table (tests/test_toolcalls_golden.py); the tokenizer carries a Qwen3-style chat template, which
drops earlier reasoning once the user asks again, so the rollout path has to get past that too. Expected rewards are
worked out by hand: the second scenario scores 0 only if reasoning is kept out of what the agent said.
"""

from __future__ import annotations

import asyncio
import copy
import json
from types import SimpleNamespace

import pytest
from fakeserver import FakeServer
from runtime_build import make_build
from test_chat_template import make_qwen3_tokenizer

from forgec.runtime import load
from forgec.runtime.agents import DONE_TEXT, HFAgent, OpenAIAgent, oracle_final_text
from forgec.runtime.episode import EpisodeLimits
from forgec.runtime.eval import evaluate
from forgec.runtime.judge import RuleJudge
from forgec.runtime.users import ScriptedUser
from forgec.serve.sessions import Session, World, said_to_user
from forgec.train.template import end_of_turn, end_of_turn_id

MAX_TURNS = 8


def scenarios(build):
    final = oracle_final_text(build.task("shop/order_total"))  # says the total, 89
    return [
        ("shop/order_total", [
            "<think>\nI need the order first.\n</think>\n\nHello! Could you please give me your order id?",  # the user answers
            '<tool_call>\n{"name": "get_order", "arguments": "{\\"order_id\\": \\"o_2\\"}"}\n</tool_call>',  # arguments as text
            "I have it.</think>" + final,  # only the closing tag: the template opened <think>
        ], 1.0),
        ("shop/order_total", [
            '<tool_call>[{"name": "get_order", "arguments": {"order_id": "o_2"}}]</tool_call>',  # a list in one block
            "<think>The total is 89.</think>" + DONE_TEXT,  # the value only in reasoning: not told to the user
        ], 0.0),
        ("shop/cancel_order", [
            'Let me check. <tool_call>{"name": "cancel_order", "arguments": {"order_id": "o_1"',  # cut off: an error
            '<tool_call>{"type": "function", "function": {"name": "cancel_order", '
            '"arguments": {"order_id": "o_1", "reason": "no_longer_needed"}}}</tool_call>',  # the wrapped OpenAI shape
            DONE_TEXT,
        ], 1.0),
    ]


def nth(outputs: list[str], turn: int) -> str:
    return outputs[turn] if turn < len(outputs) else DONE_TEXT


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return load(make_build(tmp_path_factory.mktemp("paths") / "b"))


@pytest.fixture(scope="module")
def tok():
    return make_qwen3_tokenizer()


def training_episode(build, tok, task_id, outputs):
    """A training rollout: the policy's engine 'generates' each output's token ids, then the end-of-turn token."""
    from forgec.train.rollout import GroupSpec, PolicyAgent, Sampling, run_groups

    class Scripted:
        tokens_generated = 0

        def __init__(self):
            self.turn = 0

        async def generate(self, prompt_ids, sampling, seed):
            ids = tok(nth(outputs, self.turn), add_special_tokens=False)["input_ids"] + [end_of_turn_id(tok)]
            self.turn += 1
            return ids, [0.0] * len(ids)

    agents = []

    def factory(seed):
        agents.append(PolicyAgent(Scripted(), tok, Sampling(256, 0.0), seed))
        return agents[-1]

    (ep,), = asyncio.run(run_groups(build, [GroupSpec(build.task(task_id), 0, 0)], 1, factory, max_turns=MAX_TURNS))
    assert agents[0]._eot_id == end_of_turn_id(tok) == tok.convert_tokens_to_ids("<|im_end|>")
    return ep


class ScriptedLM:
    """Stands in for a transformers model under HFAgent: 'generates' the next output and records the stop token."""

    def __init__(self, tok, outputs):
        self.tok, self.outputs, self.turn, self.stops = tok, outputs, 0, []

    def generate(self, ids, **kw):
        import torch

        self.stops.append(kw["eos_token_id"])
        gen = self.tok(nth(self.outputs, self.turn), add_special_tokens=False)["input_ids"] + [end_of_turn_id(self.tok)]
        self.turn += 1
        return SimpleNamespace(sequences=torch.cat([ids, torch.tensor([gen])], 1),
                               scores=[torch.zeros(1, len(self.tok)) for _ in gen])


def eval_episode(build, task_id, agent):
    res = evaluate(build, lambda task: agent, lambda task: ScriptedUser(task), RuleJudge(), 1, [task_id],
                   limits=EpisodeLimits(max_turns=MAX_TURNS))
    (ep,) = res.episodes
    return ep


def gym_reward(build, task_id, outputs):
    from forgec.gym import ForgecEnv

    env = ForgecEnv(build, [task_id], limits=EpisodeLimits(max_turns=MAX_TURNS))
    env.reset(seed=0, options={"task": task_id})
    turn = 0
    while True:
        _, reward, terminated, truncated, _ = env.step(nth(outputs, turn))
        turn += 1
        if terminated or truncated:
            return reward, env.episode


def serve_reward(build, task_id, ep):
    """Serve's score route as a harness drives it: the calls replayed on a session, then the raw model text posted."""
    task = build.task(task_id)
    s = Session("x", World(build, task.env), task)
    for e in ep.tool_events:
        s.call(e.name, copy.deepcopy(e.arguments))
    return s.score(said_to_user([{"role": "assistant", "content": r.raw or r.content} for r in ep.replies]))["reward"]


def calls_of(ep):
    return [(e.name, json.dumps(e.arguments, sort_keys=True), e.ok) for e in ep.tool_events]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_the_same_outputs_get_the_same_reward_in_training_eval_gym_and_serve(build, tok, k):
    from forgec.runtime import agents as agents_mod

    task_id, outputs, expected = scenarios(build)[k]
    trained = training_episode(build, tok, task_id, outputs)
    assert trained.reward == expected, trained.reward_breakdown
    assert trained.error is None and len(trained.replies) >= len(outputs)

    lm = ScriptedLM(tok, outputs)
    agents_mod._HF_CACHE[f"scripted-{k}@cpu"] = (tok, lm)  # HFAgent loads this "model" from its cache
    try:
        hf = eval_episode(build, task_id, HFAgent(f"scripted-{k}"))
    finally:
        agents_mod._HF_CACHE.pop(f"scripted-{k}@cpu", None)
    assert lm.stops and set(lm.stops) == {end_of_turn_id(tok)}  # eval stops where training rollouts stop

    def server_model(body):
        return {"content": nth(outputs, sum(1 for m in body["messages"] if m["role"] == "assistant"))}

    with FakeServer(server_model) as srv:
        hermes = eval_episode(build, task_id, OpenAIAgent(srv.url, "m", tool_format="hermes", timeout=5))
        openai = eval_episode(build, task_id, OpenAIAgent(srv.url, "m", tool_format="openai", timeout=5))
    gym, gym_ep = gym_reward(build, task_id, outputs)

    for name, ep in (("eval hf", hf), ("eval hermes", hermes), ("eval openai", openai), ("gym", gym_ep)):
        assert ep.reward == trained.reward, (name, ep.reward_breakdown, trained.reward_breakdown)
        assert calls_of(ep) == calls_of(trained), name
        assert [m.get("content") for m in ep.messages if m["role"] == "assistant"] == \
            [m.get("content") for m in trained.messages if m["role"] == "assistant"], name
    assert gym == trained.reward
    assert serve_reward(build, task_id, trained) == trained.reward
    # the rollout's text was the model's, end-of-turn included; what the agent said to the user was parsed out of it
    assert all(r.raw.endswith(end_of_turn(tok)) for r in trained.replies)
