"""The user scenario end to end: blueprint `user { ... }` -> task schema 1.1 `user.scenario`
-> runtime (1.0 task files still load) -> scripted user + oracle agent dialogues."""

from __future__ import annotations

import json

import pytest

from forgec.lang import ast as A
from forgec.runtime.loader import BuildError, load, record_files
from forgec.tasks import TASK_SCHEMA_VERSION, Task
from conftest import BROAD, CORPUS
from runtime_build import make_build
from test_lower import CANCEL, CHEAPEST, GET, PENDING, bp, lower

# --------------------------------------------------------------------------- schema + lowering


def test_lowering_maps_the_user_block_into_the_scenario():
    b = bp(GET, PENDING, CHEAPEST, CANCEL, facts=(("user_id", "u1"), ("name", "Ann Lee")))
    u = A.UserBlock("I ordered twice; please cancel the cheaper one.", "Ann, in a hurry", b.user.facts,
                    "I ordered the same thing twice", ("order id",),
                    (A.Intent("cancel my cheapest pending order"), A.Intent("tell me the refund", "the order was paid")))
    t = lower(A.BlueprintDecl(b.name, b.env, u, b.nodes)).task
    assert t.schema_version == TASK_SCHEMA_VERSION == "1.1"
    assert t.user.facts == {"user_id": "u1"}  # told facts: the ones the calls use
    s = t.user.scenario
    assert s.persona == "Ann, in a hurry" and s.reason_for_call == "I ordered the same thing twice"
    assert s.known_info == {"name": "Ann Lee", "user_id": "u1"}  # everything the user knows, used or not
    assert s.unknown_info == ["order id"] and type(s.unknown_info[0]) is str
    assert s.task_instructions == "I ordered twice; please cancel the cheaper one."
    assert [(i.text, i.condition) for i in s.intents] == [("cancel my cheapest pending order", ""),
                                                         ("tell me the refund", "the order was paid")]
    back = Task.model_validate_json(t.model_dump_json())
    assert back == t


def test_a_blueprint_without_scenario_clauses_still_gets_a_scenario():
    t = lower(bp(GET, PENDING, CHEAPEST, CANCEL)).task
    s = t.user.scenario
    assert (s.reason_for_call, s.unknown_info, s.intents) == ("", [], [])
    assert s.known_info == {"user_id": "u1"} and s.task_instructions == "cancel my cheapest pending order"


def _rewrite_tasks(root, edit):
    p = root / "tasks" / "shop.jsonl"
    lines = [json.dumps(edit(json.loads(line)), sort_keys=True) for line in p.read_text().splitlines() if line.strip()]
    p.write_text("\n".join(lines) + "\n")
    record_files(root)
    return root


def test_runtime_reads_task_files_of_both_versions(tmp_path):
    old = _rewrite_tasks(make_build(tmp_path / "v10"), lambda t: {**t, "schema_version": "1.0"})
    b = load(old)
    assert b.tasks and all(t.schema_version == "1.0" and t.user.scenario is None for t in b.tasks)
    scen = {"persona": "", "reason_for_call": "moving house", "known_info": {"email": "a@b.c"}, "unknown_info": ["order id"],
            "task_instructions": "g", "intents": [{"text": "change the address", "condition": ""}]}
    new = _rewrite_tasks(make_build(tmp_path / "v11"),
                         lambda t: {**t, "schema_version": "1.1", "user": {**t["user"], "scenario": scen}})
    b = load(new)
    assert all(t.user.scenario.reason_for_call == "moving house" for t in b.tasks)
    bad = _rewrite_tasks(make_build(tmp_path / "v99"), lambda t: {**t, "schema_version": "9.9"})
    with pytest.raises(BuildError, match="task schema version '9.9' is not one of 1.0, 1.1"):
        load(bad)
    with pytest.raises(BuildError, match="scenario"):  # a 1.0-shaped file with a misspelt scenario field is corrupt
        load(_rewrite_tasks(make_build(tmp_path / "typo"),
                            lambda t: {**t, "user": {**t["user"], "scenario": {**scen, "reason": "x"}}}))


# --------------------------------------------------------------------------- dialogues: scripted user + oracle

from pathlib import Path  # noqa: E402

from forgec.runtime.agents import OracleAgent  # noqa: E402
from forgec.runtime.episode import run_episode  # noqa: E402
from forgec.runtime.judge import RuleJudge  # noqa: E402
from forgec.runtime.reward import told  # noqa: E402
from forgec.runtime.scenario import is_personal, opening, proposal_matches, said_facts, scenario_of, states_arguments  # noqa: E402
from forgec.runtime.users import CONFIRM, REFUSE, STOP, ScriptedUser, facts_mentioned, reports_completion  # noqa: E402
from forgec.tasks import ScenarioIntent, UserScenario  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PER_ENV = 100


@pytest.fixture(scope="module", params=["scenario", "walk"])
def examples_build(request, tmp_path_factory):
    """The examples compiled with the scenario sampler (tasks with intents) and with AutoForge's walks
    (tasks whose scenario says only goal and facts: the runtime derives the rest)."""
    import forgec.build as B

    out = tmp_path_factory.mktemp("ex") / "build"
    res = B.compile_build(B.CompileOptions(inputs=[EXAMPLES], out=out, tasks_per_env=PER_ENV, sampler=request.param))
    assert not [d for d in res.diagnostics if d.is_error], res.diagnostics
    return load(out)


def _dialogue_problems(task, ep) -> list[str]:
    """The order identify -> look up -> confirm -> write -> report, and a user that tells only what it is asked."""
    sc = scenario_of(task)
    probs: list[str] = []
    msgs = ep.messages[1:]
    writes = list(sc.writes)
    seen_tools: list[str] = []  # tool results so far (what the agent has looked up)
    asked_any = False
    # identify: the agent asks for the user's identifying facts before any call, unless the user said them when it opened
    must_identify = any(is_personal(n) and not states_arguments(opening(task), {n: v}) for n, v in said_facts(task.user.facts).items())
    for i, m in enumerate(msgs):
        role, text = m["role"], m.get("content") or ""
        if role == "tool":
            seen_tools.append(text)
            continue
        if role == "assistant" and not m.get("tool_calls"):
            asked_any = asked_any or bool(facts_mentioned(text, ScriptedUser(task).facts))
            continue
        if role == "assistant":
            for c in m["tool_calls"]:
                name, args = c["function"]["name"], json.loads(c["function"]["arguments"])
                if must_identify and not asked_any:
                    probs.append(f"{name} called before the agent asked the user to identify")
                w = next((g for g in writes if g.tool == name and g.arguments == args), None)
                if w is None:
                    continue
                # confirm: the previous user turn is a confirmation of a proposal of exactly this write
                prev_user = msgs[i - 1] if i >= 1 else {}
                prev_agent = msgs[i - 2] if i >= 2 else {}
                if prev_user.get("content") != CONFIRM or not proposal_matches(prev_agent.get("content") or "", w):
                    probs.append(f"write {name} without a confirmed proposal")
                # look up: every argument the user does not know was read from an earlier tool result
                for v in args.values():
                    if isinstance(v, str) and v in sc.hidden and not any(v in r for r in seen_tools):
                        probs.append(f"write {name} uses {v!r} before looking it up")
                writes.remove(w)
            continue
        if role == "user" and i > 0:
            prev = msgs[i - 1].get("content") or ""
            body = text.replace(STOP, "")
            for h in sc.hidden:  # never volunteers (it does not know them)
                if isinstance(h, str) and len(h) > 2 and h in body:
                    probs.append(f"the user said the unknown value {h!r}")
            if body.startswith(("My ", "The ")):
                asked = set(facts_mentioned(prev, ScriptedUser(task).facts))
                stated = {n for n, v in ScriptedUser(task).facts.items() if told(v, body) and n not in asked}
                said_unasked = [n for n in stated if f" {' '.join(n.split('_'))} is " in f" {body.lower()}"]
                if said_unasked:
                    probs.append(f"the user volunteered {said_unasked} (asked: {sorted(asked)})")
    if writes:
        probs.append(f"writes never done: {[g.tool for g in writes]}")
    last = [m for m in msgs if m["role"] == "assistant"][-1]
    if not reports_completion(last.get("content") or "") or not all(told(v, last["content"]) for v in task.tell):
        probs.append("the last agent turn does not report the outcome")
    if not msgs or msgs[0]["role"] != "user" or msgs[0]["content"] != opening(task):
        probs.append("the user did not open with its reason and request")
    return probs


def test_oracle_and_scripted_user_play_every_example_task_as_a_dialogue(examples_build):
    b = examples_build
    per_env: dict[str, int] = {}
    bad = []
    for t in b.tasks:
        ep = run_episode(b, t, OracleAgent(t), ScriptedUser(t), judge=RuleJudge())
        per_env[t.env] = per_env.get(t.env, 0) + 1
        assert ep.reward == 1.0, (t.id, ep.end_reason, ep.error, ep.reward_breakdown)  # oracle pass^1 = 1.0
        assert ep.end_reason == "user_stop" and not ep.user_error, (t.id, ep.judge)
        probs = _dialogue_problems(t, ep)
        if probs:
            bad.append((t.id, probs))
    # every example env plays; each yields nearly all it was asked for (the gate refuses writes to records in an
    # ending state, a cancelled flight included, and records are picked only by what a person compares (money,
    # dates, counts held): airline's distinct clean tasks run out at 90 of 100)
    assert set(per_env) == {"airline", "bookstore", "helpdesk"} and min(per_env.values()) >= 0.9 * PER_ENV, per_env
    assert bad == [], bad[:5]
    assert sum(len(scenario_of(t).writes) for t in b.tasks) > PER_ENV  # writes were really confirmed and done


def test_the_oracle_asks_before_it_acts(examples_build):
    t = max((t for t in examples_build.tasks if t.user.facts), key=lambda t: (len(scenario_of(t).writes), t.id))
    # a user who opens without saying who they are: the agent asks first
    t = _with_scenario(t, task_instructions="I need some help with my account", known_info=dict(t.user.facts))
    ep = run_episode(examples_build, t, OracleAgent(t), ScriptedUser(t), judge=RuleJudge())
    assert ep.reward == 1.0 and not ep.user_error
    assert ep.messages[1]["content"] == "I want to help with my account." or ep.messages[1]["content"].startswith("I need")
    kinds = []
    for m in ep.messages[1:]:
        if m["role"] == "assistant":
            calls = m.get("tool_calls") or []
            if not calls:
                text = m["content"]
                kinds.append("report" if reports_completion(text) else "propose" if "proceed?" in text else "ask")
            else:
                names = {c["function"]["name"] for c in calls}
                kinds.append("write" if names & {g.tool for g in scenario_of(t).writes} else "lookup")
    assert kinds[0] == "ask" and kinds[-1] == "report"
    for i, k in enumerate(kinds):
        if k == "write":
            assert kinds[i - 1] == "propose"
    assert kinds.count("write") == len(scenario_of(t).writes) == kinds.count("propose")


def _with_scenario(t, **kw):
    base = dict(persona="", reason_for_call="", known_info=dict(t.user.facts), unknown_info=[], task_instructions=t.user.goal,
                intents=[])
    base.update(kw)
    return t.model_copy(update={"user": t.user.model_copy(update={"scenario": UserScenario(**base)})})


def test_scripted_user_confirms_only_its_own_writes_and_never_knows_the_unknown(examples_build):
    t = next(t for t in examples_build.tasks if t.env == "airline" and "reservation_id" not in t.user.facts
             and any(g.tool == "cancel_reservation" for g in scenario_of(t).writes))
    w = next(g for g in scenario_of(t).writes if g.tool == "cancel_reservation")
    rid = w.arguments["reservation_id"]
    t = _with_scenario(t, reason_for_call="my plans changed", unknown_info=["reservation id"],
                       intents=[ScenarioIntent(text="cancel my trip", condition="it is not checked in yet")])
    u = ScriptedUser(t)
    first = u.reply_sync([{"role": "system", "content": "s"}])
    assert first.content.startswith("Hi, my plans changed.") and rid not in first.content
    convo = [{"role": "system", "content": "s"}, {"role": "user", "content": first.content}]

    def say(text):
        return u.reply_sync(convo + [{"role": "assistant", "content": text}]).content

    assert say("Could you give me your reservation number?") == "I'm sorry, I don't know my reservation id."
    assert say(f"I will cancel reservation {rid}. Shall I proceed?") == CONFIRM
    assert say("I will cancel reservation ZZZ999. Shall I proceed?") == REFUSE  # not the user's reservation
    assert say(f"I will delete the account of reservation {rid}. Shall I proceed?") == REFUSE  # not what it asked for
    assert say("Shall I proceed?") == CONFIRM  # nothing concrete proposed: the user lets the agent go on


def test_a_read_only_task_refuses_every_change(examples_build):
    t = next(t for t in examples_build.tasks if t.read_only)
    u = ScriptedUser(t)
    convo = [{"role": "system", "content": "s"}, {"role": "user", "content": opening(t)},
             {"role": "assistant", "content": "I can cancel it for you. Would you like me to proceed?"}]
    assert u.reply_sync(convo).content == REFUSE


def test_defaults_for_tasks_without_scenario_clauses(examples_build):
    t = max(examples_build.tasks, key=lambda t: (len(scenario_of(t).writes), t.id))
    sc = scenario_of(t)
    if t.user.scenario.intents:  # the blueprint's intents are played as they are
        assert sc.intents == tuple(t.user.scenario.intents)
    else:  # derived: one per gold write
        assert [i.text for i in sc.intents] == [" ".join(g.tool.split("_")) for g in sc.writes]
    assert sc.known == {**t.user.scenario.known_info, **t.user.facts}
    assert all(isinstance(u, str) and u for u in sc.unknown)
    old = t.model_copy(update={"schema_version": "1.0", "user": t.user.model_copy(update={"scenario": None}),
                               "gold_calls": [g.model_copy(update={"write": None}) for g in t.gold_calls]})
    s0 = scenario_of(old)  # a 1.0 task: writes from the tool names, same dialogue
    assert [g.tool for g in s0.writes] == [g.tool for g in sc.writes]
    ep = run_episode(examples_build, old, OracleAgent(old), ScriptedUser(old), judge=RuleJudge())
    assert ep.reward == 1.0 and not ep.user_error


def test_proposals_are_read_like_a_person_reads_them():
    from forgec.runtime.scenario import names_action, states_arguments
    from forgec.tasks import GoldCall

    g = GoldCall(node="c", tool="cancel_reservation", arguments={"reservation_id": "ABC123", "reason": "no_longer_needed"})
    assert proposal_matches("Shall I cancel reservation ABC123 (reason: no longer needed)?", g)
    assert proposal_matches("I'm cancelling your booking... reservation ABC123, reason no_longer_needed. OK?", g)
    assert not proposal_matches("Shall I cancel reservation ABC124 (reason: no longer needed)?", g)  # another id
    assert not proposal_matches("Shall I cancel reservation ABC123?", g)  # the reason is not said
    assert not proposal_matches("Shall I update reservation ABC123, reason no longer needed?", g)  # another action
    assert names_action("I cancelled the reservation", "cancel_reservation") and names_action("checking in now", "check_in")
    assert states_arguments("add $1,250.50 to the account", {"amount": 1250.5})
    assert states_arguments("comment: customer wants an update soon", {"body": "The customer wants an update soon."})
    assert not states_arguments("comment: thanks", {"body": "The customer wants an update soon."})


def test_the_scripted_user_says_only_what_it_knows_whatever_the_agent_says(examples_build):
    """Fuzz: agent turns built from the task's own words (fact names, unknown items, tool words, values the
    agent looked up, confirmation phrases); the user never says an unknown value and states only known facts."""
    import random

    from forgec.runtime.judge import _MY_RE

    rng = random.Random(7)
    tasks = [t for t in examples_build.tasks if scenario_of(t).hidden][:40]
    assert tasks
    for t in tasks:
        sc = scenario_of(t)
        u = ScriptedUser(t)
        vocab = [w for n in list(u.facts) + list(sc.unknown) + [g.tool for g in t.gold_calls] for w in n.replace("_", " ").split()]
        vocab += [str(h) for h in sc.hidden] + ["your", "the", "number", "id", "?", "Shall I proceed?", "done.", "please tell me"]
        known_words = {" ".join(n.split("_")) for n in u.facts}
        for _ in range(30):
            text = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12)))
            convo = [{"role": "system", "content": "s"}, {"role": "user", "content": opening(t)}, {"role": "assistant", "content": text}]
            r = u.reply_sync(convo).content
            assert not any(isinstance(h, str) and len(h) > 2 and h in r for h in sc.hidden), (t.id, text, r)
            for m in _MY_RE.finditer(r):
                assert m.group(1).lower() in known_words, (t.id, text, r)


def test_the_oracle_says_how_each_condition_turned_out(examples_build):
    """An intent with a condition: the agent says it checked it before the write, or that it did not hold."""
    from forgec.runtime.agents import _your

    n = 0
    for t in examples_build.tasks:
        conds = [i for i in scenario_of(t).intents if i.condition]
        if not conds:
            continue
        ep = run_episode(examples_build, t, OracleAgent(t), ScriptedUser(t))
        said = " ".join(m.get("content") or "" for m in ep.messages if m["role"] == "assistant")
        for i in conds:
            if any(w in i.text.lower().split() for w in ("cancel", "change", "update", "book", "add", "move", "send")):
                assert f"only if {_your(i.condition)}" in said, (t.id, i, said)
                n += 1
    if examples_build.tasks[0].user.scenario.intents or any(t.user.scenario.intents for t in examples_build.tasks):
        assert n > 0  # the scenario sampler writes conditions


def test_rule_judge_flags_a_user_who_says_what_it_cannot_know(examples_build):
    t = next(t for t in examples_build.tasks if any(isinstance(h, str) and len(h) > 2 for h in scenario_of(t).hidden))
    h = next(h for h in scenario_of(t).hidden if isinstance(h, str) and len(h) > 2)
    leak = [{"role": "system", "content": "s"}, {"role": "user", "content": opening(t)},
            {"role": "assistant", "content": "How can I help?"}, {"role": "user", "content": f"It is {h}."}]
    v = RuleJudge().judge_sync(t, leak)
    assert v.user_error and "unknown info" in v.reason
    echo = leak[:2] + [{"role": "assistant", "content": f"I found {h}. Shall I proceed?"}, {"role": "user", "content": f"Yes, {h}."}]
    assert not any("unknown info" in e for e in RuleJudge().judge_sync(t, echo).errors)  # repeating the agent is fine


# --------------------------------------------------------------------------- golden dialogues (SFT data)

GOLDEN_DIALOGUES = Path(__file__).parent / "golden" / "dialogues" / "shop.txt"


def _transcript(ep) -> str:
    out = []
    for m in ep.messages[1:]:
        if m["role"] == "tool":
            out.append(f"  [tool {m.get('name', '')}] {m['content']}")
            continue
        calls = " ".join(f"<{c['function']['name']} {c['function']['arguments']}>" for c in m.get("tool_calls") or [])
        out.append(f"{m['role'].upper()}: {(m.get('content') or '')} {calls}".rstrip())
    return "\n".join(out)


def test_golden_dialogues(tmp_path, update_golden):
    """The oracle's dialogues on the hand-written shop build (1.0-style tasks, and one given a scenario):
    what `forgec sft` trains on, byte for byte. `pytest --update-golden` rewrites them."""
    b = load(make_build(tmp_path / "b"))
    tasks = list(b.tasks)
    t = b.task("shop/move_by_email")
    tasks.append(_with_scenario(t, persona="Alan, moving house", reason_for_call="I am moving next week",
                                known_info={"email": "alan@example.com", "address": "9 Oak Rd", "name": "Alan Poe"},
                                unknown_info=["order id"], task_instructions="please send my pending order to my new address",
                                intents=[ScenarioIntent(text="ship my pending order to my new address",
                                                        condition="it has not shipped yet")]))
    parts = []
    for t in tasks:
        ep = run_episode(b, t, OracleAgent(t), ScriptedUser(t), judge=RuleJudge())
        assert ep.reward == 1.0 and not ep.user_error, (t.id, ep.judge)
        parts.append(f"===== {t.id}{' (scenario)' if t.user.scenario else ''}\n{_transcript(ep)}\n")
    text = "\n".join(parts)
    if update_golden:
        GOLDEN_DIALOGUES.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN_DIALOGUES.write_text(text, encoding="utf-8")
    assert GOLDEN_DIALOGUES.read_text(encoding="utf-8") == text, "run pytest tests/test_user_scenario.py --update-golden"


@pytest.mark.parametrize("corpus", ["tau_bench_retail", "mcp_server_memory", "openapi_karakeep"])
def test_dialogues_on_real_docs(corpus, tmp_path):
    """The same dialogue checks on docs this project did not write (an OpenAI-tools CS domain, an MCP
    tools/list, an OpenAPI spec): oracle 1.0, no user error, the order holds."""
    import forgec.build as B

    src = CORPUS / corpus if (CORPUS / corpus).exists() else BROAD / corpus
    # the memory store's user scenarios are dictated chains (refused, rubric 3): its dialogues are checked on walks
    sampler = "walk" if corpus == "mcp_server_memory" else "scenario"
    res = B.compile_build(B.CompileOptions(inputs=[src], out=tmp_path / "b", tasks_per_env=40, sampler=sampler))
    assert not [d for d in res.diagnostics if d.is_error], res.diagnostics
    b = load(tmp_path / "b")
    # at 40 tasks a template (the same tools in order) holds at most 4, which bounds retail's handful of acts;
    # Jupyter's kernels and sessions, which nothing in its docs names, yield none (so it is not checked here)
    # (karakeep's `/lists` are List records since review 42, not `Post`s: a bookmark and a list picked apart are
    # refused as mismatched parents, so 40 tries give a few fewer)
    assert len(b.tasks) >= {"tau_bench_retail": 20, "openapi_karakeep": 25}.get(corpus, 30)
    for t in b.tasks:
        agent = OracleAgent(t)
        ep = run_episode(b, t, agent, ScriptedUser(t), judge=RuleJudge(), limits=agent.limits())
        assert ep.reward == 1.0 and not ep.user_error, (t.id, ep.end_reason, ep.judge)
        assert _dialogue_problems(t, ep) == [], t.id


def test_a_noun_that_is_also_a_verb_is_no_proposal(examples_build):
    from forgec.runtime.scenario import proposes_write

    assert not proposes_write("Shall I look up your order?", ())
    assert not proposes_write("Would you like me to check the book you bought?", ())
    assert proposes_write("Shall I order a new one for you?", ())
    assert proposes_write("I'll book the 9:00 flight. Shall I proceed?", ())
    assert proposes_write("Should I check you in now?", ())
    assert proposes_write("Shall I cancel it?", ())
    t = next(t for t in examples_build.tasks if t.read_only)
    u = ScriptedUser(t)
    convo = [{"role": "system", "content": "s"}, {"role": "user", "content": opening(t)},
             {"role": "assistant", "content": "Shall I look up your order?"}]
    assert u.reply_sync(convo).content == CONFIRM  # a lookup: go ahead


def test_the_oracle_speaks_in_plain_words_not_tool_names(examples_build):
    """Over 100 oracle dialogues per example env, no agent turn names a tool: its identifier or all its
    words in a row (the rule of forgec/wording.py's `names_tool`; verb-particle names like check_in and
    one-word names, which are plain words, excepted), and no proposal dumps "with <arg> <value>"."""
    import re

    from forgec.wording import names_tool as _names_tool
    from forgec.wording import split_name

    tools: dict[str, list[str]] = {}
    for t in examples_build.tasks:
        if t.env not in tools:
            names = [x["function"]["name"] for x in examples_build.tools(t.env)]
            tools[t.env] = [n for n in names if len(split_name(n)) > 1]  # a one-word name is a plain word
    per_env: dict[str, int] = {}
    bad = []
    for t in examples_build.tasks:
        names = tools[t.env]
        ep = run_episode(examples_build, t, OracleAgent(t), ScriptedUser(t), judge=RuleJudge())
        per_env[t.env] = per_env.get(t.env, 0) + 1
        for m in ep.messages:
            text = m.get("content") or ""
            if m["role"] == "assistant" and text and (_names_tool(text, names) or re.search(r"\bwith \w+ id\b", text)):
                bad.append((t.id, text))
    assert min(per_env.values()) >= 90  # 100 asked; see test_oracle_and_scripted_user_play_every_example_task_as_a_dialogue
    assert bad == [], bad[:5]
