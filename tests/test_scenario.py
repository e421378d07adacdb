"""The scenario sampler (forgec/scenario.py): referring expressions, coherence, wording, goldens.

* a hypothesis test: every referring expression `refer` makes selects exactly its record, by
  `select` and by the reasoning nodes' own operators (forgec.stdlib.ops), over sampled record lists;
* the shipped examples compiled with the default sampler meet issue 11's bar (no tool words,
  no pipeline phrasing, no redundant gold write, >= 50 tasks per env or the reasons why, every fact said once);
* golden scenarios per example env (`pytest tests/test_scenario.py --update-golden`);
* docs/tasks.md is what scripts/gen_tasks_md.py writes;
* `--sampler walk` still gives AutoForge's walks.
"""

from __future__ import annotations

import difflib
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgec.lower import said_in
from forgec.scenario import Referring, describe, refer, select
from forgec.stdlib import ops as OPS

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden" / "scenarios"
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "scripts"))

import task_quality  # noqa: E402


# --------------------------------------------------------------------------- referring expressions

_record = st.fixed_dictionaries({
    "status": st.sampled_from(["pending", "paid", "shipped", "cancelled"]),
    "cabin": st.sampled_from(["economy", "business", "basic_economy"]),
    "total": st.sampled_from([19.5, 42.0, 42.0, 100.0, 250.25]),
    "seats": st.integers(1, 4),
    "date": st.sampled_from(["2024-05-01", "2024-05-17", "2024-06-02"]),
    "title": st.sampled_from(["Dune", "Emma", "Ulysses"]),
})


def _ops_select(records: list[dict], ref: Referring) -> dict:
    """What the blueprint's reasoning nodes compute: filter per attribute, then first/argmin/argmax."""
    cur = records
    for f, v in ref.attrs:
        cur = OPS.apply("filter", [cur], {"by": f, "eq": v})
    if ref.op:
        return OPS.apply(ref.op, [cur], {"by": ref.by})
    assert len(cur) == 1, "a referring expression must leave exactly one record"
    return OPS.apply("first", [cur], {})


@settings(max_examples=300, deadline=None)
@given(st.lists(_record, min_size=1, max_size=7), st.integers(0, 6), st.integers(0, 10**6))
def test_referring_expression_selects_exactly_one(records, target, seed):
    target %= len(records)
    fields = ["status", "cabin", "total", "seats", "date", "title"]
    ref = refer(records, target, fields, random.Random(seed))
    if ref is None:  # no one or two attributes and no superlative single it out: the sampler rejects the task
        rec = records[target]
        said = [f for f in fields if not isinstance(rec[f], (int, float))]  # a number names a record only as a superlative
        for i, f in enumerate(said):
            for g in said[i:]:
                if f == g and re.match(r"\d{4}-\d\d-\d\d", str(rec[f])):
                    continue  # a bare date names no record on its own ("my project on 2023-08-05")
                assert select(records, Referring(tuple(dict.fromkeys([(f, rec[f]), (g, rec[g])])))) != [target]
            for op in ("argmin", "argmax"):
                assert select(records, Referring((), op, f)) != [target]
        return
    if len(records) > 1:
        assert select(records, ref) == [target]
        assert _ops_select(records, ref) is records[target] or _ops_select(records, ref) == records[target]
    words = describe("order", ref)
    assert words.startswith("my ") and "order" in words
    for f, v in ref.attrs:  # every attribute the expression uses is said (as the lowering checks it)
        assert said_in(words, v), (words, f, v)


def test_referring_prefers_fewest_attributes():
    recs = [{"status": "paid", "total": 10.0}, {"status": "pending", "total": 10.0}, {"status": "paid", "total": 30.0}]
    rng = random.Random(3)
    for _ in range(20):
        ref = refer(recs, 1, ["status", "total"], rng, superlatives=False)
        assert ref == Referring((("status", "pending"),))  # one attribute suffices
        # a number singles a record out only as a superlative: "my most expensive order", never "the order of $30"
        assert refer(recs, 2, ["status", "total"], rng, superlatives=False) is None
        ref = refer(recs, 2, ["status", "total"], rng)
        assert (ref.attrs, ref.op, ref.by) == ((), "argmax", "total")


# --------------------------------------------------------------------------- the examples, compiled


@pytest.fixture(scope="module")
def examples_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("scn") / "build"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(ROOT / "examples"), "-o", str(out), "-q"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return out


def test_examples_meet_the_bar(examples_build):
    rows = task_quality.analyse(examples_build)
    assert {r["env"] for r in rows} == {"airline", "bookstore", "helpdesk"}
    for r in rows:
        assert r["tasks"] >= 50, r
        assert r["tool_pct"] <= 1.0, r["examples"]
        assert r["pipeline_pct"] <= 1.0, r["examples"]
        assert r["redundant"] == 0, r
        assert r["oracle"] == 1.0, r


def test_facts_said_once_and_ids_unknown(examples_build):
    """The instruction states every fact (no appended 'The x is y.' sentences) and no internal id
    of a record the user does not know."""
    for env in ("airline", "bookstore", "helpdesk"):
        for line in (examples_build / "tasks" / f"{env}.jsonl").read_text().splitlines():
            t = json.loads(line)
            ins = t["instruction"]
            assert " should be " not in ins and not ins.count(". The "), ins
            for g in t["gold_calls"]:
                for k, v in g["arguments"].items():
                    if k.endswith("_id") and isinstance(v, str) and v not in json.dumps(t["user"]["facts"]):
                        assert v not in ins, (ins, k, v)


def _templates(blueprints) -> list[int]:
    """How many blueprints share each sequence of called tools (counted from the blueprints' nodes)."""
    from forgec.lang import ast as A

    by: dict[tuple, int] = {}
    for b in blueprints:
        key = tuple(n.tool for n in b.decl.nodes if isinstance(n, A.CallNode))
        by[key] = by.get(key, 0) + 1
    return sorted(by.values(), reverse=True)


def test_no_template_fills_the_env():
    """A benchmark wants many kinds of task, not one template filled 120 times (review 10: 26 of 40
    tasks from 4 families; slack gave 120 copies of one). With a 5% share of 80 tasks (cap 4), no
    sequence of called tools holds more than 4; with the cap off, the same sampling holds more."""
    from forgec.envsource import load_envs
    from forgec.graph import build_graph
    from forgec.sample import SampleConfig
    from forgec.scenario import sample_scenarios

    envs, diags = load_envs(ROOT / "examples" / "bookstore.yaml", with_module=True, seed=0, state_size=30)
    le = envs[0]
    g = build_graph(le.decl, exclude=le.exclude, writes=le.writes)
    capped = sample_scenarios(le.decl, le.module, le.world, g, SampleConfig(tasks_per_env=80, seed=3, family_share=0.05))
    free = sample_scenarios(le.decl, le.module, le.world, g, SampleConfig(tasks_per_env=80, seed=3, family_share=1.0))
    assert _templates(capped.blueprints)[0] <= 4 and capped.rejected.get("template-cap", 0) > 0, _templates(capped.blueprints)
    assert _templates(free.blueprints)[0] > 4 and "template-cap" not in free.rejected, _templates(free.blueprints)


def test_conditions_about_a_third(examples_build):
    n = cond = 0
    for env in ("airline", "bookstore", "helpdesk"):
        for line in (examples_build / "tasks" / f"{env}.jsonl").read_text().splitlines():
            t = json.loads(line)
            n += 1
            cond += "but only if" in t["instruction"]
    assert 0.15 <= cond / n <= 0.5, cond / n


def _scenarios(build: Path, env: str, k: int = 12) -> str:
    tasks = sorted((json.loads(x) for x in (build / "tasks" / f"{env}.jsonl").read_text().splitlines()), key=lambda t: t["id"])
    out = [{"id": t["id"], "instruction": t["instruction"], "persona": t["user"]["persona"], "facts": t["user"]["facts"],
            "gold": [f"{g['tool']}({json.dumps(g['arguments'], sort_keys=True)})" for g in t["gold_calls"]], "tell": t["tell"]}
           for t in tasks[:k]]
    return json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("env", ["airline", "bookstore", "helpdesk"])
def test_golden_scenarios(examples_build, env, update_golden):
    path = GOLDEN / f"{env}.json"
    got = _scenarios(examples_build, env)
    if update_golden:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    assert path.is_file(), f"missing {path}; run pytest tests/test_scenario.py --update-golden"
    want = path.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "expected", "got", n=1))
        pytest.fail(f"{path.name} changed; if intended run pytest tests/test_scenario.py --update-golden\n{diff[:4000]}", pytrace=False)


def test_tasks_md_is_current(examples_build):
    import gen_tasks_md

    # the script compiles with --tasks 40; a 40-task build is a prefix-free rebuild, so compile it here
    out = examples_build.parent / "b40"
    gen_tasks_md.compile_examples(out)
    assert gen_tasks_md.render(out) == (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8"), \
        "docs/tasks.md is stale: run python scripts/gen_tasks_md.py"


def test_walk_sampler_still_available(tmp_path):
    out = tmp_path / "walk"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(ROOT / "examples" / "airline.json"), "-o", str(out),
                        "--sampler", "walk", "--tasks", "5", "-q", "--no-oracle"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    files = sorted((out / "blueprints" / "airline").glob("*.forge"))
    assert files and all("blueprint sampled by forgec" in f.read_text() for f in files)
    assert json.loads((out / "manifest.json").read_text())["metadata"]["options"]["sampler"] == "walk"


def test_tool_leak_detector():
    tools = ["cancel_pending_order", "check_in", "get_user_details"]
    assert task_quality.tool_leak("I want to cancel pending order #1", tools) == "cancel_pending_order"
    assert task_quality.tool_leak("please call get_user_details", tools) == "get_user_details"
    assert task_quality.tool_leak("I'd like to check in for my flight", tools) is None  # verb-particle excepted
    assert task_quality.tool_leak("cancel my pending order", tools) is None
    assert task_quality.pipeline_phrase("the first reservation in the reservation ids of my account")
    assert task_quality.pipeline_phrase("the ticket returned by assign ticket")
    assert task_quality.pipeline_phrase("cancel my most recent order") is None


# --------------------------------------------------------------------------- every corpus folder

from conftest import CORPUS, assert_yield_or_reason  # noqa: E402

_CORPORA = sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []


@pytest.mark.parametrize("name", _CORPORA)
def test_corpus_meets_the_bar(name, tmp_path):
    """Real docs this project never saw: the build has no error, and its tasks name no tool, speak
    no pipeline language, hold no redundant write, pass the oracle, and number >= 50 when the
    env has a write tool, or its manifest says why it yields fewer."""
    out = tmp_path / name
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(CORPUS / name), "-o", str(out), "-q", "--format", "concise"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for row in task_quality.analyse(out):
        if row["has_write"]:
            assert_yield_or_reason(out, row)
        assert row["tool_pct"] <= 1.0, row["examples"]
        assert row["pipeline_pct"] <= 1.0, row["examples"]
        assert row["redundant"] == 0, row
        assert row["oracle"] in (None, 1.0), row


def _env_of(build: Path, env: str):
    from forgec import lang
    from forgec.codegen import load_env_module

    src = next((build / "src" / env).glob("*.forge"))
    m, _ = lang.parse(src.read_text(encoding="utf-8"), str(src))
    world = json.loads((build / "states" / f"{env}.json").read_text())
    return m.envs[0], load_env_module(build / "envs" / env / "env.py"), world


def test_all_my_records_intent(examples_build):
    """'close all my resolved tickets': one filter the user states, then the write once per record it
    keeps; lowering runs it and the gold diff closes exactly those tickets."""
    from forgec.graph import build_graph
    from forgec.lower import lower_blueprint
    from forgec.sample import SampleConfig
    from forgec.scenario import _Sampler, _Scenario, _Skip

    env, module, world = _env_of(examples_build, "helpdesk")
    ents = world["entities"]
    # the first customer with two tickets (some customers have none: the world leaves a fifth of the parents empty)
    cust = next(c for c in sorted(ents["Customer"]) if sum(t["customer_id"] == c for t in ents["Ticket"].values()) >= 2)
    mine = [k for k, t in ents["Ticket"].items() if t["customer_id"] == cust]
    assert len(mine) >= 2
    for k in mine[:2]:
        ents["Ticket"][k]["status"] = "resolved"
    for k in mine[2:]:
        ents["Ticket"][k]["status"] = "open"
    s = _Sampler(env, module, world, build_graph(env), SampleConfig())
    for seed in range(1, 20):  # the filter value is drawn: "close all my open tickets" fails (only resolved ones close)
        sc = _Scenario(s.m, random.Random(seed), cust)
        s.identify(sc)
        try:
            s.intent_all(sc, "close_ticket")
            break
        except _Skip:
            continue
    decl = s.finish(sc)
    assert "close all my resolved tickets" in decl.user.goal
    lr = lower_blueprint(decl, module, world, env_name="helpdesk", blueprint_path="x.forge", blueprint_hash="0", seed=0)
    closed = sorted(g.arguments["ticket_id"] for g in lr.task.gold_calls if g.tool == "close_ticket")
    assert closed == sorted(mine[:2])
    assert all(lr.env.state["entities"]["Ticket"][k]["status"] == "closed" for k in closed)
    assert str(mine[0]) not in lr.task.instruction  # ids stay unknown


# --------------------------------------------------------------------------- wording rules, hand-checked


def test_doc_clauses_and_verbs():
    from forgec.scenario import _clause, _doc_verb
    from forgec.english import verb_base as base_verb

    # OpenAI-tools style (tau-bench), OpenAPI summary + description, MCP third-person prose: the
    # clause comes realized (forgec/realize.py), its verb in base form
    assert _clause("Cancel a confirmed reservation and refund its total price to the owner's balance.") == "cancel a confirmed reservation"
    assert _clause("Cancel an order Cancel a pending or paid order (not a shipped one).") == "cancel an order"
    assert _clause("Switches branches") == "switch branches"
    assert _clause("Create a new file or completely overwrite an existing file with new content.") == "create a new file"
    assert _clause("Creates a new branch from an optional base branch") == "create a new branch"
    assert _clause("This can be used to rename a session.") == "rename a session"
    assert _clause("Change the priority of a ticket that is not closed.") == "change the priority of a ticket"
    assert _clause("Add travel credit to a user's balance, e.g. as a goodwill gesture.") == "add travel credit to a user's balance"
    assert _clause("") == "" and _clause("See `pay_order`.") == ""
    assert [base_verb(w) for w in ("Switches", "records", "unstages", "applies", "cancel", "access")] == \
        ["switch", "record", "unstage", "apply", "cancel", "access"]
    assert _doc_verb("Records changes to the repository") == "record"


def test_referring_words():
    from forgec.scenario import Referring, _address, describe, qualifier

    assert describe("reservation", Referring((("status", "confirmed"),))) == "my confirmed reservation"
    # a record the user describes and does not know yet is "a" one (review 49: "the home in Chicago" implied one they knew)
    assert describe("flight", Referring((("origin", "JFK"), ("destination", "LAX"), ("date", "2024-05-17"))), mine=False) == \
        "a flight from JFK to LAX on 2024-05-17"
    assert describe("restaurant", Referring((("name", "Oak Park"),)), mine=False) == 'the restaurant called "Oak Park"'
    assert describe("flight", Referring((), "argmin", "price"), mine=False) == "the cheapest flight"
    assert describe("order", Referring((), "argmax", "total")) == "my most expensive order"
    assert describe("order", Referring((("status", "paid"),), "argmin", "created_at")) == "my oldest paid order"
    assert qualifier("total_price", 580.5) == "with a total price of $580.50"
    assert qualifier("seats", 2) == "with 2 seats"
    assert qualifier("title", "Dune") == 'called "Dune"'
    assert qualifier("shipping_address", "12 Oak St") == "shipping to 12 Oak St"
    parts, line = _address([("address1", "12 Oak St"), ("address2", "Apt 4"), ("city", "Austin"), ("state", "TX"),
                            ("zip", "78701"), ("country", "USA"), ("amount", 5)])
    assert line == "to 12 Oak St, Apt 4, Austin, TX 78701, USA" and len(parts) == 6


def test_tool_names_in_words():
    from forgec.wording import names_tool as _names_tool

    tools = ["cancel_pending_order", "check_in", "add_travel_credit", "git_add"]
    assert _names_tool("please cancel pending order #1", tools)
    assert _names_tool("I'd like to add travel credit to my balance", tools)
    assert not _names_tool("I'd like to add $50 of travel credit to my balance", tools)
    assert not _names_tool("check in all passengers of my reservation", tools)
    assert _names_tool("run git_add on it", tools) and not _names_tool("add file contents to the staging area", tools)


def test_every_value_an_update_asks_for_shows_in_the_end_state(examples_build):
    """Blind review round 9: updates whose tool ignored the asked value, and updates that asked for nothing.
    Checked on the built tasks (independent of the sampler): each scalar a gold update sends, other than the
    record's key, is an `after` value of the gold diff."""
    import json as _json

    checked = 0
    for f in sorted((examples_build / "tasks").glob("*.jsonl")):
        for line in f.read_text().splitlines():
            t = _json.loads(line)
            afters = [d.get("after") for d in t.get("gold_diff") or []]
            flat = []
            for a in afters:
                flat += list(a.values()) if isinstance(a, dict) else a if isinstance(a, list) else [a]
            for g in t["gold_calls"]:
                if not re.match(r"(update|modify|change|set)_", g["tool"]):
                    continue
                vals = [v for k, v in g["arguments"].items() if not k.endswith("_id") and isinstance(v, (str, int, float)) and not isinstance(v, bool)]
                assert vals, (t["id"], g)  # an update asks for something
                for v in vals:
                    assert any(v == x or (isinstance(x, str) and isinstance(v, str) and v in x) for x in flat), (t["id"], g, afters)
                checked += 1
    assert checked >= 10


def test_the_docs_noun_phrase_takes_the_users_words_whatever_its_case():
    """"delete a DigitalOcean Kubernetes cluster" + my cluster called X is "delete my cluster called X",
    not "... cluster for my cluster called X" (review 10): capitalised modifiers belong to the phrase."""
    from forgec.scenario import _noun_pattern

    assert _noun_pattern("cluster", 3, False).sub("my cluster", "delete a DigitalOcean Kubernetes cluster") == "delete my cluster"
    assert _noun_pattern("share", 3, False).sub("my share", "create a snapshot of a NFS file share") == "create a snapshot of my share"
    assert _noun_pattern("order", 3, False).sub("it", "cancel a pending order") == "cancel it"


def test_amounts_in_different_currencies_are_never_ranked():
    """Blind review 20: "my account with the lowest balance" picked 82.45 EUR over 98.96 JPY. Amounts in two
    currencies have no order; in one currency they do (and a superlative may then single one out)."""
    import random

    mixed = [{"name": "Travel", "balance": 82.45, "currency": "EUR"}, {"name": "Savings", "balance": 98.96, "currency": "JPY"},
             {"name": "Daily", "balance": 120.0, "currency": "usd"}]
    for seed in range(40):
        ref = refer(mixed, 0, ["balance", "currency"], random.Random(seed))
        assert ref is None or not ref.op, ref  # never "the lowest balance" across currencies
    same = [dict(r, currency="EUR") for r in mixed]
    ops = {refer(same, 0, ["balance"], random.Random(seed)).op for seed in range(40)}
    assert "argmin" in ops  # one currency: "my account with the lowest balance" is a fair way to name it


def test_a_record_is_named_by_its_own_name_not_anothers():
    """Blind review 21: "my ticket whose article subject is X" where the ticket has a title. `article_subject` is
    the subject of the ticket's first article, no name of the ticket; the ticket's own title names it."""
    import random

    recs = [{"title": f"Printer {i} offline", "article_subject": f"Re: printer {i}", "group": "Users"} for i in range(4)]
    for seed in range(30):
        ref = refer(recs, 2, ["title", "article_subject", "group"], random.Random(seed), superlatives=False)
        assert ref is not None and [f for f, _ in ref.attrs] == ["title"], ref
