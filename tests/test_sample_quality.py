"""Task quality of sampled blueprints, over ALL blueprints sampled (default knobs) for examples/ and the
tau-bench corpora: an agent must be able to reach exactly the gold end state from the instruction.

Every property is checked against an independent source: the calls are replayed on the generated env
module (which ones change the state), the criteria come from the blueprint's own reason nodes, and the
wording expectations are hand-written tables, not the sampler's templates."""

from __future__ import annotations

import json
import re

import pytest

from conftest import CORPUS, EXAMPLES
from forgec.lang import ast as A
from forgec.english import plural
from forgec.sample import SampleConfig, sample_blueprints, superlative

SOURCES = [EXAMPLES / "airline.json", EXAMPLES / "bookstore.yaml", EXAMPLES / "helpdesk.json",
           CORPUS / "tau_bench_airline", CORPUS / "tau_bench_retail"]

# direction words a user says for argmin / argmax (hand-written, independent of the sampler's table)
LOW = ("cheapest", "lowest", "fewest", "earliest", "oldest", "least", "smallest")
HIGH = ("most expensive", "highest", "most", "latest", "most recent", "largest")
KEY_NAME = re.compile(r"(^|_)(ids?|keys?|codes?|numbers?)$")


class Sampled:
    def __init__(self, path):
        from forgec.envsource import load_envs
        from forgec.graph import build_graph
        from forgec.lower import lower_blueprint

        envs, diags = load_envs(path, with_module=True, seed=0, state_size=30)
        assert envs, diags
        le = envs[0]
        self.name, self.module, self.world = le.decl.name, le.module, le.world
        g = build_graph(le.decl, exclude=le.exclude, writes=le.writes)
        self.result = sample_blueprints(le.decl, le.module, le.world, g, SampleConfig(seed=0))
        self.tasks = {b.name: lower_blueprint(b.decl, le.module, le.world, env_name=le.decl.name, blueprint_path="b.forge",
                                              blueprint_hash="0" * 64, seed=0).task for b in self.result.blueprints}


@pytest.fixture(scope="module")
def sampled():
    return [Sampled(p) for p in SOURCES]


def _changes_state(module, world, gold_calls) -> list[bool]:
    """Replay the gold calls on a fresh env: which of them changed the state (independent of any flag)."""
    env = module.Env(world)
    out = []
    for g in gold_calls:
        h = env.state_hash()
        env.step(g.tool, json.loads(json.dumps(g.arguments)))
        out.append(env.state_hash() != h or bool(module.WRITES_STATE.get(g.tool)))
    return out


def _words(name: str) -> str:
    return name.replace("_", " ")


def test_goal_mentions_every_write_in_order(sampled):
    """Example defect: gold calls list_user_reservations, transfer_travel_credit, check_in, cancel_reservation,
    add_travel_credit with a goal that never said "check in"."""
    n = 0
    for s in sampled:
        assert len(s.result.blueprints) == 120, (s.name, s.result.rejected)
        for b in s.result.blueprints:
            goal = b.decl.user.goal
            t = s.tasks[b.name]
            writes = [g.tool for g, w in zip(t.gold_calls, _changes_state(s.module, s.world, t.gold_calls)) if w]
            at = 0
            for tool in writes:
                i = goal.find(_words(tool), at)
                assert i >= 0, (s.name, b.name, tool, goal, [g.tool for g in t.gold_calls])
                at = i + len(_words(tool))
                n += 1
            assert goal[0].islower() and t.instruction.startswith("I want to " + goal)
    assert n > 500


def test_goal_states_every_reasoning_criterion(sampled):
    """argmin/argmax say the field and the direction, first/last say which end of which list, a filter
    says its value, aggregates say what they count or add up; item nouns are singular."""
    seen_ops = set()
    for s in sampled:
        for b in s.result.blueprints:
            goal = b.decl.user.goal
            for nd in b.decl.nodes:
                if not isinstance(nd, A.ReasonNode):
                    continue
                seen_ops.add(nd.op)
                kw = {k.name: k.value for k in nd.kwargs}
                if nd.op in ("argmin", "argmax"):
                    fld = kw["by"].id
                    words = LOW if nd.op == "argmin" else HIGH
                    priced = re.search(r"(^|_)(price|cost|fare|total)(_|$)", fld) and not fld.endswith("s")
                    assert any(w in goal for w in words), (s.name, b.name, nd.op, goal)
                    assert priced or _words(fld) in goal or fld in ("created_at", "timestamp", "date"), (s.name, b.name, fld, goal)
                elif nd.op in ("first", "last"):
                    # "the first flight in the flight search results": which end, of which list
                    assert re.search(rf"\bthe {nd.op} [a-z ]+? in (the|my) ", goal), (s.name, b.name, goal)
                elif nd.op == "filter":
                    assert _words(str(kw["eq"].value)) in goal, (s.name, b.name, goal)
                elif nd.op == "count":
                    assert "the number of" in goal, goal
                elif nd.op == "sum":
                    assert "the total " + _words(kw["by"].id) in goal, goal
            # never the old machine wording ("the first flights", "with the highest seats")
            assert not re.search(r"\bthe (first|last) [a-z]+(?<!s)s (in|whose|of)\b", goal.replace("ss ", "_ ")), goal
            assert "user reservations with" not in goal and " of the add " not in goal, goal
    assert {"argmin", "argmax", "first", "last", "filter"} <= seen_ops


def test_every_write_changes_the_state(sampled):
    """A write that changes nothing (moving a reservation to the flight it is already on) is not a task step."""
    for s in sampled:
        for b in s.result.blueprints:
            env = s.module.Env(s.world)
            for g in s.tasks[b.name].gold_calls:
                h = env.state_hash()
                env.step(g.tool, json.loads(json.dumps(g.arguments)))
                if s.module.WRITES_STATE[g.tool]:
                    assert env.state_hash() != h, (s.name, b.name, g.tool, g.arguments)


def test_criterion_templates_hand_checked():
    assert superlative("argmin", "price", "flight") == "the cheapest flight"
    assert superlative("argmax", "total_price", "reservation") == "the most expensive reservation"
    assert superlative("argmax", "seats", "reservation") == "the reservation with the most seats"
    assert superlative("argmin", "seats", "reservation") == "the reservation with the fewest seats"
    assert superlative("argmax", "created_at", "order") == "the most recent order"
    assert superlative("argmin", "departure_time", "flight") == "the flight with the earliest departure time"
    assert superlative("argmax", "priority", "ticket") == "the ticket with the highest priority"
    assert superlative("argmin", "baggage_count", "reservation") == "the reservation with the lowest baggage count"
    assert superlative("argmax", "issued_at", "recovery") == "the most recently issued recovery"  # not "the latest issued at"
    assert superlative("argmin", "updatedAt", "message") == "the least recently updated message"  # review 65
    assert [plural(w) for w in ("flight", "reply", "address", "day", "line item")] == ["flights", "replies", "addresses", "days", "line items"]


def _key_params(module, tool):
    out = []
    for p in module.TOOL_PARAMS[tool]:
        t = p["type"]
        item = t.get("items", t) if t["type"] == "list" else t
        if item["type"] == "ref" or KEY_NAME.search(p["name"]):
            out.append(p["name"])
    return out


def test_no_id_passed_to_two_key_params_and_no_repeated_write_on_one_record(sampled):
    for s in sampled:
        for b in s.result.blueprints:
            t = s.tasks[b.name]
            done = set()
            for g in t.gold_calls:
                ids_seen: dict[str, str] = {}
                keys = _key_params(s.module, g.tool)
                for p in keys:
                    if p not in g.arguments:
                        continue
                    v = g.arguments[p]
                    for x in (v if isinstance(v, list) else [v]):
                        k = json.dumps(x, sort_keys=True)
                        assert k not in ids_seen, (s.name, b.name, g.tool, p, ids_seen.get(k), x)
                        ids_seen[k] = p
                if s.module.WRITES_STATE[g.tool] and keys:
                    sig = json.dumps([g.tool, [g.arguments.get(p) for p in keys]], sort_keys=True)
                    assert sig not in done, (s.name, b.name, g.tool, g.arguments)
                    done.add(sig)


def _literals(e):
    if isinstance(e, (A.ListLit, A.RecordLit)) and not (e.items if isinstance(e, A.ListLit) else e.fields):
        yield ""  # an empty list or record is an empty fact too
    if isinstance(e, A.Literal):
        yield e.value
    elif isinstance(e, A.ListLit):
        for i in e.items:
            yield from _literals(i)
    elif isinstance(e, A.RecordLit):
        for f in e.fields:
            yield from _literals(f.value)


def test_no_null_or_empty_facts(sampled):
    for s in sampled:
        for b in s.result.blueprints:
            for f in b.decl.user.facts:
                vals = list(_literals(f.value))
                assert None not in vals and "" not in vals, (s.name, b.name, f.name)
            instr = s.tasks[b.name].instruction
            assert "should be null" not in instr and "should be ." not in instr and 'should be "".' not in instr, instr


def test_omitted_optional_argument_is_null_in_the_generated_module(sampled):
    """The sampler leaves out optional arguments instead of saying "null": the generated env must treat a
    missing optional argument exactly as an explicit null (same result, same state)."""
    checked = 0
    for s in sampled:
        for b in s.result.blueprints:
            a, c = s.module.Env(s.world), s.module.Env(s.world)  # replayed in lockstep
            for g in s.tasks[b.name].gold_calls:
                nulls = {p["name"]: None for p in s.module.TOOL_PARAMS[g.tool]
                         if not p["required"] and p["name"] not in g.arguments and p.get("default", 0) is None}
                ra = a.step(g.tool, json.loads(json.dumps(g.arguments)))
                rc = c.step(g.tool, dict(json.loads(json.dumps(g.arguments)), **nulls))
                assert not isinstance(ra, BaseException) and not isinstance(rc, BaseException), (g.tool, ra, rc)
                assert ra == rc and a.state_hash() == c.state_hash(), (s.name, g.tool, nulls)
                checked += bool(nulls)
    assert checked >= 10
