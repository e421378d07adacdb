"""One parser of model output (issue 22): a golden table of tricky outputs, and proof that training rollouts, eval
agents, play, serve and gym all call that one function, so the same text is the same turn and the same reward everywhere.

Each row was worked out by hand from the Hermes format (the tool-call JSON inside `<tool_call>` tags, reasoning in
`<think>` tags), not copied from the parser's output."""

from __future__ import annotations

import pytest

from forgec.runtime.toolcalls import parse_hermes

RAW = object()  # the call's arguments are the raw text (it did not parse): an error observation for the agent

GOLDEN = [
    # (model text, content, reasoning, [(name, arguments)])
    ("plain answer", "plain answer", None, []),
    ("plain answer<|im_end|>", "plain answer", None, []),
    ("plain answer<end_of_turn>", "plain answer", None, []),  # Gemma's end of turn
    ("<think>\nplan\n</think>\n\nOn it.", "On it.", "plan", []),
    ("I looked.</think>Done.", "Done.", "I looked.", []),  # the template opened <think> in the prompt
    ("<think>a</think>x<think>b</think>y", "xy", "a\nb", []),
    ('<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call><|im_end|>', "", None, [("f", {"a": 1})]),
    ('Sure.<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call> Then more.', "Sure. Then more.", None,
     [("f", {"a": 1})]),  # arguments as a JSON string
    ('<tool_call>[{"name": "f", "arguments": {}}, {"name": "g", "arguments": {"x": "y"}}]</tool_call>', "", None,
     [("f", {}), ("g", {"x": "y"})]),  # a list of calls in one block
    ('<tool_call>{"type": "function", "function": {"name": "f", "arguments": {"k": 2}}}</tool_call>', "", None, [("f", {"k": 2})]),
    ('<tool_call>{"name": "f", "arguments": {"a": </tool_call>', "", None, [("f", RAW)]),  # malformed JSON: name kept
    ("<tool_call>not json</tool_call>", "", None, [("", RAW)]),
    ('Let me check. <tool_call>{"name": "f", "arguments": {"a": 1', "Let me check.", None, [("f", RAW)]),  # cut off
    ('<think>use f</think><tool_call>{"name": "f", "arguments": {}}</tool_call><tool_call>{"name": 7}</tool_call>', "", "use f",
     [("f", {}), ("", RAW)]),
]


@pytest.mark.parametrize("text,content,reasoning,calls", GOLDEN, ids=[str(i) for i in range(len(GOLDEN))])
def test_golden_outputs(text, content, reasoning, calls):
    p = parse_hermes(text, "c")
    assert p.content == content and p.reasoning == reasoning
    assert len(p.tool_calls) == len(calls)
    for got, (name, args) in zip(p.tool_calls, calls):
        assert got.name == name
        assert isinstance(got.arguments, str) if args is RAW else got.arguments == args


def test_training_eval_play_and_gym_share_the_one_parser():
    import forgec.gym as gym
    import forgec.runtime.agents as agents
    import forgec.runtime.play as play
    import forgec.serve.sessions as serve
    import forgec.train.rollout as rollout
    import forgec.train.template as template

    assert rollout.parse_hermes is agents.parse_hermes is play.parse_hermes is gym.parse_hermes is parse_hermes
    assert serve.parse_hermes is parse_hermes  # the score route reads posted model text with it
    # (tests/test_toolcalls_paths.py feeds the same outputs through all of them and compares the rewards)
    assert not hasattr(template, "parse_hermes")  # the second parser is gone

