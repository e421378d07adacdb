"""The quality gate (forgec/gate.py, issue 21): each check against hand-written cases.

The expectations are written by hand from real docs (the broad corpus, tau-bench's airline, the
examples) and from what a benchmark author would reject (the project's review rubric), never
read back from the code's output.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from forgec import lang
from forgec.gate import (Candidate, Gate, Lifecycle, check_dictated, check_pipeline, check_preamble, check_sources,
                         check_ignored, check_tool_words, check_verb_phrases, documented_bounds, documented_values, verb_phrase)
from forgec.lang import ast as A

from conftest import CORPUS

ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- words


@pytest.mark.parametrize("text, ok", [
    ("cancel my reservation for the flight to JFK", True),
    ("check in all passengers of my reservation", True),
    ("book seats on the flight from SEA to IAH on 2024-05-17", True),
    # npm_kazuph_mcp_taskmanager's "approve_request_completion" doc cut at the wrong place (a real task before the gate)
    ("after all tasks are done and approved for my active request", False),
    ("this tool belongs to the vehicle control system", False),
    ("the with dir name \"Travel ideas\"", False),
    ("listing all files in a directory", False),  # a gerund names an activity, not an act
    ("also", False),
])
def test_verb_phrase(text, ok):
    assert verb_phrase(text) is ok


def _cand(instruction: str, intents=(), nodes=(), facts=None, writes=()) -> Candidate:
    return Candidate(instruction, list(intents), tuple(nodes), dict(facts or {}), list(writes))


class _G:
    """The part of a Gate the word checks read."""

    def __init__(self, tools, writes=None):
        self.tool_names = sorted(tools)
        self.writes = writes or {}


def test_word_checks_on_real_instructions():
    g = _G(["delete_contact", "search_events", "create_feature_flag", "list_feature_flags", "check_in"])
    # the walk's wording on npm_icloud_mcp and npm_launchdarkly_mcp_server before the gate
    walk = "delete contact, then delete event for the first event in the event search results"
    assert check_tool_words(_cand(walk), g) == "names-tool"
    assert check_pipeline(_cand("create feature flag for the last flag in the flags that list feature flags returns"), g) == "pipeline-words"
    assert check_pipeline(_cand("find the line returned by resume line"), g) == "pipeline-words"
    ok = "I'm Mia Khan; my user id is mia_khan_9012. Please check in all passengers of my reservation for the flight to LAX."
    assert check_tool_words(_cand(ok), g) is None and check_pipeline(_cand(ok), g) is None
    assert check_verb_phrases(_cand("x", ["this tool belongs to the vehicle control system"]), g) == "no-verb-phrase"
    assert check_preamble(_cand("x", ["use this tool to lock the doors"]), g) == "doc-preamble"
    assert check_preamble(_cand("x", ["lock the rear left door of the car"]), g) is None


# --------------------------------------------------------------------------- values the docs allow


@pytest.mark.parametrize("doc, names, want", [
    # bfcl_dependency_track_access / bfcl_image_actions / openapi docs, verbatim
    ("The scope of the search. Possible values include 'base', 'onelevel', and 'subtree'.", (), ["base", "onelevel", "subtree"]),
    ("Specifies the flip direction of the image. Must be either 'horizontal' or 'vertical'.", (), ["horizontal", "vertical"]),
    ("The temperature unit, one of 'celsius' or 'fahrenheit'.", (), ["celsius", "fahrenheit"]),
    # pypi_mcp_atlassian: the doc names two *fields*, one of which must be given: no values are listed
    ("Either 'content_base64' or 'file_path' must be provided.", ("content_base64", "file_path"), []),
    ("Timezone of the reminder.", (), []),
])
def test_documented_values(doc, names, want):
    assert documented_values(doc, frozenset(names)) == want


@pytest.mark.parametrize("doc, lo, hi", [
    ("Credit to add in USD (0 < amount <= 500).", float("-inf"), 500),  # examples/airline add_travel_credit
    ("Number of passengers, 1 to 9.", float("-inf"), float("inf")),  # says no bound in words the gate reads
    ("Priority of the ticket, from 1 (lowest) to 4 (highest).", 1, 4),
    ("Star rating between 1 and 5.", 1, 5),
    ("Number of checked bags, at most 9.", float("-inf"), 9),
])
def test_documented_bounds(doc, lo, hi):
    assert documented_bounds(doc) == (lo, hi)


def test_generated_state_values_obey_the_docs():
    """A str field whose doc lists its values holds one of them (the climate unit was "Apt 8"); a
    count the doc caps stays under the cap (4,849 checked bags)."""
    from forgec.stdlib.values import generate_value

    for seed in range(30):
        rng = random.Random(seed)
        assert generate_value({"type": "str"}, "unit", rng, doc="The temperature unit, one of 'celsius' or 'fahrenheit'.") in ("celsius", "fahrenheit")
        n = generate_value({"type": "int"}, "total_baggages", rng, doc="Number of checked bags, at most 9.")
        assert 0 <= n <= 9 if n >= 0 else False
    assert generate_value({"type": "str"}, "unit", random.Random(1), doc="x") == generate_value({"type": "str"}, "unit", random.Random(1), doc="x")


# --------------------------------------------------------------------------- the lifecycle

_TICKETS = '''
env desk {
  entity Ticket key ticket_id {
    ticket_id: str
    status: enum("open", "resolved", "closed") "Where the ticket stands."
    subject: str
  }
  entity Comment key comment_id {
    comment_id: str
    ticket_id: Ticket
    text: str
  }
  tool resolve_ticket(ticket_id: Ticket "The ticket.") -> Ticket
    "Mark an open ticket resolved."
  {
    require ticket_id.status == "open" else "not open"
    set ticket_id.status = "resolved"
    return ticket_id
  }
  tool close_ticket(ticket_id: Ticket "The ticket.") -> Ticket
    "Close a resolved ticket."
  {
    require ticket_id.status == "resolved" else "not resolved"
    set ticket_id.status = "closed"
    return ticket_id
  }
  tool reopen_ticket(ticket_id: Ticket "The ticket.") -> Ticket
    "Reopen a resolved ticket."
  {
    require ticket_id.status == "resolved" else "not resolved"
    set ticket_id.status = "open"
    return ticket_id
  }
  tool set_subject(ticket_id: Ticket "The ticket.", subject: str "The new subject.") -> Ticket
    "Change a ticket's subject."
  {
    set ticket_id.subject = subject
    return ticket_id
  }
}
'''


def _env(src: str) -> A.EnvDecl:
    m, d = lang.parse(src, "desk.forge")
    assert not [x for x in d if x.is_error], d
    return m.envs[0]


def test_lifecycle_from_the_tools():
    """open -> resolved -> closed, resolved -> open: only `closed` is a sink; close_ticket and
    reopen_ticket act on resolved tickets by their own preconditions."""
    lc = Lifecycle.of(_env(_TICKETS))
    assert lc.final == {("Ticket", "status"): {"closed"}}
    assert lc.final_state("set_subject", "Ticket", {"status": "closed"}) == ("status", "closed")
    assert lc.final_state("set_subject", "Ticket", {"status": "resolved"}) is None
    assert lc.final_state("close_ticket", "Ticket", {"status": "resolved"}) is None


def test_an_argument_the_tool_never_reads_is_not_dictated():
    """`said-ignored`: "resolve my ticket with the note 'fixed'" when resolve_ticket drops `note`:
    the end state cannot show the note (review 10's add_shape that kept no `top`). A looked-up
    argument the tool ignores is the agent's business, not a dictated value."""
    src = _TICKETS.replace('tool resolve_ticket(ticket_id: Ticket "The ticket.")', 'tool resolve_ticket(ticket_id: Ticket "The ticket.", note: str? = null "A note.")')
    env = _env(src)
    g = Gate.__new__(Gate)
    g.tools, g.writes, g._reads = {t.name: t for t in env.tools}, {"resolve_ticket": True}, {}
    found = A.CallNode("mine", "list_tickets", ())
    said = A.CallNode("done", "resolve_ticket", (A.Arg("ticket_id", A.Attr(A.Name("mine"), "ticket_id")), A.Arg("note", _user_attr("note"))))
    assert check_ignored(_cand("x", nodes=[found, said]), g) == "said-ignored"
    looked = A.CallNode("done", "resolve_ticket", (A.Arg("ticket_id", _user_attr("ticket_id")), A.Arg("note", A.Attr(A.Name("mine"), "subject"))))
    assert check_ignored(_cand("x", nodes=[found, looked]), g) is None  # ticket_id is read; the note is no user fact


def _archivable_gate() -> Gate:
    """A gate over the ticket desk whose tickets carry an `archived` flag."""
    env = _env(_TICKETS.replace("    subject: str\n  }", "    subject: str\n    archived: bool\n  }", 1))
    g = Gate.__new__(Gate)
    g.tools, g.ents, g.writes, g._reads = {t.name: t for t in env.tools}, {e.name: e for e in env.entities}, {}, {}
    g.lifecycle = Lifecycle.of(env)
    return g


def test_a_write_to_an_archived_record_is_refused_unless_it_restores_it():
    """Review 13: gold added issues to archived GitLab projects. A record flagged `archived`/`isDeleted`
    takes no write, except from a tool that restores it (`unarchive_*`, "Restore ...")."""
    from forgec.gate import check_final
    from forgec.tasks import state_diff

    g = _archivable_gate()
    before = {"entities": {"Ticket": {"t1": {"ticket_id": "t1", "status": "open", "subject": "a", "archived": True}}}}
    after = {"entities": {"Ticket": {"t1": {"ticket_id": "t1", "status": "open", "subject": "b", "archived": True}}}}
    trace = [("set_subject", {"ticket_id": "t1", "subject": "b"}, before, after, state_diff(before, after))]
    assert check_final(_cand("x"), g, trace) == "write-to-final"
    live = {"entities": {"Ticket": {"t1": {**before["entities"]["Ticket"]["t1"], "archived": False}}}}
    trace = [("set_subject", {"ticket_id": "t1", "subject": "b"}, live, after, state_diff(live, after))]
    assert check_final(_cand("x"), g, trace) is None


def test_lifecycle_free_status_means_no_final_state():
    """A tool that sets the status from an argument lets the docs move it anywhere: nothing is final."""
    src = _TICKETS.replace('''  tool set_subject(''', '''  tool set_status(ticket_id: Ticket "The ticket.", status: enum("open", "resolved", "closed") "The status.") -> Ticket
    "Set a ticket's status."
  {
    set ticket_id.status = status
    return ticket_id
  }
  tool set_subject(''')
    assert Lifecycle.of(_env(src)).final == {}


def test_lifecycle_from_the_docs_words():
    """A field's doc that says a value can no longer change makes it final, tools or not."""
    src = _TICKETS.replace('"Where the ticket stands."', '"Where the ticket stands. Once archived, a ticket can no longer be changed."').replace(
        'enum("open", "resolved", "closed")', 'enum("open", "resolved", "closed", "archived")')
    assert Lifecycle.of(_env(src)).final[("Ticket", "status")] == {"closed", "archived"}


def test_tau_airline_cancelled_reservations_are_final(tmp_path):
    """tau-bench airline: cancel_reservation moves a reservation to `cancelled` and no tool moves it
    back; a later write to a cancelled reservation (44 of 120 tasks, in review) is not allowed."""
    corpus = CORPUS / "tau_bench_airline"
    out = tmp_path / "b"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(corpus), "-o", str(out), "-q", "--tasks", "0"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    src = next((out / "src" / "tau_bench_airline").glob("*.forge"))
    m, _ = lang.parse(src.read_text(), str(src))
    lc = Lifecycle.of(m.envs[0])
    assert "cancelled" in lc.final.get(("Reservation", "status"), set())
    assert lc.final_state("update_reservation_baggages", "Reservation", {"status": "cancelled"}) is not None


# --------------------------------------------------------------------------- shape, sources, writes on a real env


@pytest.fixture(scope="module")
def airline(tmp_path_factory):
    out = tmp_path_factory.mktemp("gate") / "b"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(ROOT / "examples"), "-o", str(out), "-q", "--tasks", "30"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    from forgec.codegen import load_env_module

    src = next((out / "src" / "airline").glob("*.forge"))
    m, _ = lang.parse(src.read_text(), str(src))
    module = load_env_module(out / "envs" / "airline" / "env.py")
    world = json.loads((out / "states" / "airline.json").read_text())
    writes = {t: bool(w) for t, w in module.WRITES_STATE.items()}
    return Gate(m.envs[0], module, world, writes), world, out


def _user_attr(k):
    return A.Attr(A.Name("user"), k)


def test_dictated_single_call_is_rejected(airline):
    """'Add $150 of travel credit to my balance': one write, every argument the user's: trivial."""
    g, world, _ = airline
    uid = sorted(world["entities"]["User"])[0]
    node = A.CallNode("added", "add_travel_credit", (A.Arg("user_id", _user_attr("user_id")), A.Arg("amount", _user_attr("amount"))))
    c = _cand(f"My user id is {uid}. Please add $150 of travel credit to my balance.", ["add $150 of travel credit to my balance"],
              [node], {"user_id": uid, "amount": 150.0}, [("add_travel_credit", {"user_id": uid, "amount": 150.0})])
    assert check_dictated(c, g) == "dictated-call"
    assert g.check(c) == "dictated-call"
    look = A.CallNode("me", "get_user_details", (A.Arg("user_id", _user_attr("user_id")),))
    # a login lookup that only finds the user the user named decides nothing (issue 21: "if a login lookup does
    # not count as a lookup"): still dictated; a write whose argument the lookup supplies is not
    assert check_dictated(_cand(c.instruction, c.intents, [look, node], c.facts, c.writes), g) == "dictated-call"
    looked = [("add_travel_credit", {"user_id": uid, "amount": 150.0, "note": "from the lookup"})]
    assert check_dictated(_cand(c.instruction, c.intents, [look, node], c.facts, looked), g) is None


def test_argument_from_nowhere_is_rejected(airline):
    g, world, _ = airline
    uid = sorted(world["entities"]["User"])[0]
    node = A.CallNode("added", "add_travel_credit", (A.Arg("user_id", _user_attr("user_id")), A.Arg("amount", A.Literal(75.0))))
    c = _cand(f"My user id is {uid}. Please add some travel credit.", ["add some travel credit"], [node], {"user_id": uid},
              [("add_travel_credit", {"user_id": uid, "amount": 75.0})])
    assert check_sources(c, g) == "unsourced-argument"
    said = _cand(f"My user id is {uid}. Please add $75 of travel credit.", c.intents, c.nodes, c.facts, c.writes)
    assert check_sources(said, g) is None  # a literal the user says is theirs
    stale = A.CallNode("added", "add_travel_credit", (A.Arg("user_id", A.Attr(A.Name("someone"), "user_id")), A.Arg("amount", _user_attr("user_id"))))
    assert check_sources(_cand("x", [], [stale], {"user_id": uid}), g) == "unsourced-argument"


def _reservation(world, status):
    return next(k for k, r in sorted(world["entities"]["Reservation"].items()) if r["status"] == status)


def test_writes_on_the_airline(airline):
    """Undone (bags changed and changed back), repeated (the same credit twice), and a value the
    docs bound (more than 500 of credit) are rejected; one honest write passes those checks."""
    g, world, _ = airline
    look = A.CallNode("mine", "list_user_reservations", (A.Arg("user_id", _user_attr("user_id")),))
    rid = _reservation(world, "confirmed")
    rec = world["entities"]["Reservation"][rid]
    uid = rec["user_id"]
    bags = rec["baggage_count"]

    def cand(writes):
        return _cand(f"My user id is {uid}.", ["change the bags"], [look], {"user_id": uid}, writes)

    undone = [("update_baggage", {"reservation_id": rid, "baggage_count": bags + 1}),
              ("update_baggage", {"reservation_id": rid, "baggage_count": bags})]
    assert g.check(cand(undone)) == "undone-write"
    twice = [("add_travel_credit", {"user_id": uid, "amount": 20.0}), ("add_travel_credit", {"user_id": uid, "amount": 20.0})]
    assert g.check(cand(twice)) == "repeated-write"
    again = [("update_baggage", {"reservation_id": rid, "baggage_count": bags + 1}),
             ("update_baggage", {"reservation_id": rid, "baggage_count": bags + 2})]
    assert g.check(cand(again)) == "repeated-write"
    assert g.check(cand([("update_baggage", {"reservation_id": rid, "baggage_count": bags + 1})])) is None


def test_write_to_a_final_record(airline):
    """examples/airline: check_in and cancel_reservation require a confirmed reservation, and
    nothing leaves checked_in or cancelled; the env refuses those writes itself, and the gate
    says a record there is final for every tool."""
    g, world, _ = airline
    assert g.lifecycle.final[("Reservation", "status")] == {"cancelled", "checked_in"}
    rid = _reservation(world, "cancelled")
    assert g.lifecycle.final_state("update_baggage", "Reservation", world["entities"]["Reservation"][rid]) == ("status", "cancelled")


def test_every_emitted_task_passes(airline):
    """The examples build: no task is a dictated single call, names a tool, or writes twice to a field."""
    _, _, out = airline
    import importlib

    sys.path.insert(0, str(ROOT / "bench"))
    tq = importlib.import_module("task_quality")
    for row in tq.analyse(out):
        assert row["dictated_pct"] == 0.0, row["examples"]
        assert row["named_pct"] == 0.0, row["examples"]
        assert row["undo"] == 0, row["examples"]
        assert row["junk"] == 0, row["examples"]


def test_stats_say_why_an_env_yields_few_tasks():
    from forgec.commands.stats import few_tasks_lines

    lines = few_tasks_lines({
        "a": {"tasks": 7, "has_write": True, "sampler_rejected": {"dictated-call": 1068, "no-verb-phrase": 164, "duplicate": 3}},
        "b": {"tasks": 120, "has_write": True, "sampler_rejected": {"names-tool": 5}},
        "c": {"tasks": 0, "has_write": False, "sampler_rejected": {"nothing-to-ask": 300}},
    })
    assert lines == ["a: 7 tasks; most rejected: dictated-call 1068 (no lookup or decision: the user dictates every argument); "
                     "no-verb-phrase 164 (an intent is not a verb phrase); duplicate 3 (the same request as an earlier task)"]


def test_a_doc_that_opens_with_its_values_lists_them():
    """Zotero's `library_type`: '"user", "group", or "default" to reset to env var defaults.' lists the values with
    no lead-in ("one of", "either"); states and arguments drew "cedar" and "raven" for it (the blind review)."""
    from forgec.synth import prose

    doc = '"user", "group", or "default" to reset to env var defaults.'
    assert documented_values(doc, frozenset({"library_type"})) == ["user", "group", "default"]
    assert prose.allowed_values(doc)[0] == ("user", "group", "default")
    assert documented_values('The label, for example "Home" and then more words') == []  # a lone example lists nothing
    assert prose.allowed_values('Text like "a" here, "b" there.') is None  # quotes inside a sentence, not its opening list


def test_a_record_named_by_a_number_is_found_for_the_final_check():
    """State keys are strings; a tool's id argument may be a number (`parent_story_id: 9248`). The
    archived parent of a new sub-task was missed that way (review 18: 2 tasks wrote under archived records)."""
    from forgec.gate import check_final
    from forgec.tasks import state_diff

    g = _archivable_gate()
    before = {"entities": {"Ticket": {"7": {"ticket_id": "7", "status": "open", "subject": "a", "archived": True}}}}
    after = {"entities": {"Ticket": {"7": {"ticket_id": "7", "status": "open", "subject": "b", "archived": True}}}}
    trace = [("set_subject", {"ticket_id": 7, "subject": "b"}, before, after, [])]  # the change itself not in the diff
    assert check_final(_cand("x"), g, trace) == "write-to-final"
