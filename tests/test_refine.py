"""--refine llm: rephrasings through the real openai client against a local server; leaks rejected; cached."""

from __future__ import annotations

import json
from pathlib import Path

from fakeserver import FakeServer

from forgec.build import CompileOptions, compile_build
from forgec.refine import refine_instruction
from forgec.synth.llm import Chat, LLMConfig

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _chat(srv, tmp_path):
    return Chat(LLMConfig(base_url=srv.url, model="m", max_retries=0, timeout=5), tmp_path / "cache")


def test_good_rephrasing_is_accepted_and_cached(tmp_path):
    with FakeServer() as srv:
        srv.script({"content": "Hi there, I need to cancel my cheapest pending order - I'm user u_17."})
        chat = _chat(srv, tmp_path)
        text, why = refine_instruction("I want to cancel my cheapest pending order. My user id is u_17.", {"user_id": "u_17"}, "", ["cancel_order"], ["o_9", 12.5], chat)
        assert why is None and text.startswith("Hi there")
        again, _ = refine_instruction("I want to cancel my cheapest pending order. My user id is u_17.", {"user_id": "u_17"}, "", ["cancel_order"], ["o_9", 12.5], chat)
        assert again == text and len(srv.requests) == 1  # second call served from the disk cache


def test_leaks_and_dropped_facts_fall_back_to_the_template(tmp_path):
    tmpl = "I want to cancel my cheapest pending order. My user id is u_17."
    with FakeServer() as srv:
        srv.script(
            {"content": "Please call cancel_order for user u_17."},
            {"content": "Cancel order o_9123 for me, I am u_17."},
            {"content": "Cancel my cheapest order please."},
            {"status": 500, "message": "boom"},
        )
        chat = _chat(srv, tmp_path)
        for expect in ("names the tool 'cancel_order'", "reveals the looked-up value 'o_9123'", "drops the fact(s) user_id", "request failed"):
            text, why = refine_instruction(tmpl + f" ({expect})", {"user_id": "u_17"}, "", ["cancel_order"], ["o_9123"], chat)
            assert text == tmpl + f" ({expect})" and expect in why


def test_compile_with_refine_llm(tmp_path):
    def responder(body):
        instr = json.loads(body["messages"][-1]["content"])["instruction"]
        return {"content": "Hello! " + instr}

    with FakeServer(responder) as srv:
        opts = CompileOptions(inputs=[EXAMPLES / "airline.json"], out=tmp_path / "build", tasks_per_env=8, refine="llm",
                              llm=LLMConfig(base_url=srv.url, model="m", max_retries=0, timeout=5))
        res = compile_build(opts)
        assert res.ok
        tasks = [json.loads(l) for l in (tmp_path / "build" / "tasks" / "airline.jsonl").read_text().splitlines()]
        assert tasks and all(t["instruction"].startswith("Hello! ") for t in tasks)
        sent = len(srv.requests)
        assert sent == len(tasks)
        import shutil

        shutil.rmtree(tmp_path / "build")
        compile_build(opts)  # a cold rebuild is served from the cache: no request
        assert len(srv.requests) == sent


def test_tool_words_in_a_row_are_a_leak(tmp_path):
    """A rephrasing that names a tool by its words ("cancel pending order") is rejected like its
    identifier; a verb-particle tool (check_in) said as "check in" is plain English."""
    tmpl = "I'd like to cancel my cheapest order. My user id is u_17."
    with FakeServer() as srv:
        srv.script({"content": "Please cancel pending order for u_17, the cheapest one."},
                   {"content": "Hi, I'm u_17 and I want to check in for my cheapest order."})
        chat = _chat(srv, tmp_path)
        text, why = refine_instruction(tmpl, {"user_id": "u_17"}, "", ["cancel_pending_order"], [], chat)
        assert text == tmpl and "names the tool 'cancel_pending_order'" in why
        text, why = refine_instruction(tmpl + " (2)", {"user_id": "u_17"}, "", ["check_in"], [], chat)
        assert why is None and "check in" in text


def test_stating_an_unknown_is_a_leak(tmp_path):
    """The scenario's unknown info (internal ids the user does not know) may not appear with a value."""
    tmpl = "I'd like to cancel my cheapest order. My user id is u_17."
    with FakeServer() as srv:
        srv.script({"content": "Hi, I'm u_17; my order id is #W12 and I want it cancelled, the cheapest one."},
                   {"content": "Hi, I'm u_17 and I don't know my order id; please cancel my cheapest order."})
        chat = _chat(srv, tmp_path)
        text, why = refine_instruction(tmpl, {"user_id": "u_17"}, "", ["cancel_order"], [], chat, unknown=["order id"])
        assert text == tmpl and "states the unknown 'order id'" in why
        text, why = refine_instruction(tmpl + " (2)", {"user_id": "u_17"}, "", ["cancel_order"], [], chat, unknown=["order id"])
        assert why is None and "don't know my order id" in text


def test_a_value_said_with_spaces_is_not_dropped(tmp_path):
    """The template says `basic_economy` as "the basic economy cabin"; a rephrasing that keeps those words keeps the
    fact (before: every rephrasing of such a task fell back, "drops the fact(s) cabin")."""
    tmpl = "Book me a seat in the basic economy cabin. My user id is u_17."
    with FakeServer() as srv:
        srv.script({"content": "Hi, I'm u_17 and I'd like a basic economy seat."})
        text, why = refine_instruction(tmpl, {"user_id": "u_17", "cabin": "basic_economy"}, "", ["book"], [], _chat(srv, tmp_path))
    assert why is None and text == "Hi, I'm u_17 and I'd like a basic economy seat."
