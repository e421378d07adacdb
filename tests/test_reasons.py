"""Why the user calls (forgec.reasons): grounded in the intent and its record, never filler.

A τ²-bench user says why in terms of their situation ("my flight to JFK leaves soon", "the
items arrived damaged"); the old sampler wove fixed filler ("— it's time", "— to settle things").
Checked on the shipped examples and every corpus folder: no instruction carries the removed
filler, the reason is the scenario's `reason_for_call` and is said first, and where a write
acts on a record of the user's, the reason names its noun or one of its attributes in at least
half of those tasks.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS
from forgec.reasons import reason_for, world_traits

ROOT = Path(__file__).resolve().parent.parent

FILLER = ["to settle things", "as we agreed earlier", "it's time", "I need it soon", "I'm planning ahead",
          "I'm keeping track of my budget", "it's urgent", "I'd like it sorted today", "I'm ready for that now",
          "I'd like to get it done today", "something changed on my side", "I need to correct it",
          "my plans changed a bit", "before my next purchase", "I want to double-check my account", "I'm just curious",
          "before I forget", "I'm getting things ready", "while I'm thinking of it"]


# --------------------------------------------------------------------------- hand-checked cases, two doc styles


RESERVATION = {"reservation_id": "X4UC80", "origin": "SFO", "destination": "JFK",
               "flights": [{"flight_number": "AAL541", "origin": "SFO", "destination": "JFK", "price": 120}]}
ORDER = {"order_id": "#W1", "status": "pending", "items": [{"item_id": "1", "product_id": "9", "price": 54.0}]}


def test_cancel_names_the_trip_or_the_record():
    got = {reason_for("cancel", "cancel", "Cancel a reservation.", "reservation", RESERVATION, None, {}, set(), s) for s in range(3)}
    assert got == {"my plans changed and I no longer need the trip to JFK", "I booked the trip to JFK by mistake",
                   "I found a cheaper fare for the trip to JFK"}
    # an order of priced goods (retail-style doc): reasons a shopper gives
    assert reason_for("cancel", "cancel", "Cancel a pending order.", "order", ORDER, None, {}, set(), 1) \
        == "I found what's in that order cheaper elsewhere"


def test_reasons_come_from_what_the_record_is_not_its_name():
    """The same records under other names get the same reasons; a record called an order with no goods in it (an ERP's
    purchase order: dates and an amount) gets no shopper's reason (review 61: "I placed that order by mistake")."""
    stay = {"stay_id": "S1", "from_city": "Lyon", "destination": "Paris", "legs": [{"origin": "Lyon", "destination": "Paris", "fare": 80}]}
    got = {reason_for("cancel", "cancel", "Cancel a stay.", "stay", stay, None, {}, set(), s) for s in range(3)}
    assert got == {"my plans changed and I no longer need the trip to Paris", "I booked the trip to Paris by mistake",
                   "I found a cheaper fare for the trip to Paris"}
    basket = {"basket_id": "B7", "lines": [{"sku": "A-1", "quantity": 2, "unit_price": 3.5}]}
    assert reason_for("cancel", "cancel", "Cancel a basket.", "basket", basket, None, {}, set(), 0) == "I placed that basket by mistake"
    po = {"id": "5452649671", "startDate": "2024-03-05", "endDate": "2024-03-30", "amountExcludingTax": 67.68}
    assert reason_for("cancel", "delete", "Permanently delete a purchase order.", "order", po, None, {}, set(), 0) == ""
    # an appointment paid for and at a time of day is booked; a note at a date is not
    slot = {"appointment_id": "A1", "start_time": "2024-05-20T14:30:00", "fee": 40}
    assert reason_for("cancel", "cancel", "Cancel an appointment.", "appointment", slot, None, {}, set(), 2) == "I found a cheaper option elsewhere"
    # a reservation that points to a flight (its `flight_number`) goes where the flight goes: a trip
    flight = {"flight_number": "AAL103", "origin": "MIA", "destination": "EWR", "price": 610.87}
    res = {"reservation_id": "055M9S", "flight_number": "AAL103", "total_price": 225.52}
    got = {reason_for("cancel", "cancel", "Cancel a reservation.", "reservation", res, None, {}, set(), s, None, [("flight", flight)]) for s in range(3)}
    assert "I found a cheaper fare for the trip to EWR" in got, got
    assert reason_for("money", "add", "Add credit.", "", None, None, {"amount": 5.0}, world_traits([("flight", flight), ("reservation", res)]), 0) \
        == "the agent promised me compensation for my delayed flight"
    # credit for a delayed leg of a journey, said with the data's own noun for the legs
    assert reason_for("money", "add", "Add credit.", "", None, None, {"amount": 5.0}, world_traits([("stay", stay)]), 0) \
        == "the agent promised me compensation for my delayed leg"


def test_status_change_reads_the_docs_verb_and_the_record():
    # OpenAI-tools style airline doc: check in
    assert reason_for("status", "check", "Check in all passengers of a reservation.", "reservation",
                      {"flights": [{"origin": "SFO", "destination": "LAX"}]}, None, {}, set(), 0) == "my flight to LAX leaves soon"
    # helpdesk JSON doc: resolve a ticket about a subject
    assert reason_for("update", "mark", "Mark an open or pending ticket as resolved.", "ticket",
                      {"subject": "Login error"}, None, {"resolution": "fixed"}, set(), 0) == 'the "Login error" issue is fixed now'
    assert reason_for("status", "reopen", "Reopen a resolved ticket.", "ticket", {"subject": "Login error"}, None, {}, set(), 0) \
        == 'the "Login error" problem came back'
    assert reason_for("status", "pay", "Pay a pending order from store credit.", "order", ORDER, None, {}, set(), 0) \
        == "I want to settle my pending order before it ships"


def test_money_create_update_reasons_fit_the_env():
    assert reason_for("money", "add", "Add travel credit to a user's balance.", "", None, None, {"amount": 50.0}, world_traits([("reservation", RESERVATION)]), 0) \
        == "the agent promised me compensation for my delayed flight"
    assert reason_for("money", "add", "Add store credit (e.g. a refund).", "", None, None, {"amount": 5.0}, world_traits([("order", ORDER)]), 1) \
        == "my last purchase arrived late and I was promised credit"
    assert reason_for("money", "add", "Add credit.", "", None, None, {"amount": 50.0}, world_traits([("device", {"device_id": "d1", "name": "lamp"})]), 0) == ""
    assert reason_for("create", "book", "Book seats on a flight.", "", None, ("flight", {"destination": "DEN"}), {}, set(), 0) \
        == "I'm visiting family near DEN"
    assert reason_for("create", "review", "Review a book.", "", None, ("book", {"title": "Dune"}), {"rating": 5}, set(), 0) \
        == "I finished the book and want to share what I thought — I really liked it"
    assert reason_for("update", "modify", "Modify the default address of a user.", "", None, None, {"address1": "1 Oak St"}, set(), 1) \
        == "I just moved"
    assert reason_for("update", "update", "Update a user's email.", "", None, None, {"email": "a@b.c"}, set(), 0) == "I changed jobs"
    assert reason_for("update", "return", "Return some items of a delivered order.", "order", {}, None, {"item_ids": ["1"]}, set(), 0) \
        == "the items in my order arrived damaged"
    # baggage: the direction of the change decides the reason
    assert reason_for("update", "update", "Update the baggage of a reservation.", "reservation", {**RESERVATION, "total_baggages": 3}, None,
                      {"total_baggages": 1}, set(), 0) == "I'm packing lighter on my trip to JFK"
    assert reason_for("update", "set", "Set a value.", "setting", {"value": 1}, None, {"value": 2}, set(), 0) == ""


# --------------------------------------------------------------------------- every shipped and corpus build


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("reasons")
    srcs = [ROOT / "examples"] + (sorted(p for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else [])
    got = []
    for src in srcs:
        b = out / src.name
        r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(src), "-o", str(b), "-q", "--format", "concise"],
                           capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        got.append(b)
    return got


def _tasks(builds):
    states: dict[Path, dict] = {}
    for b in builds:
        for f in sorted((b / "tasks").glob("*.jsonl")):
            for line in f.read_text().splitlines():
                t = json.loads(line)
                if t.get("initial_state") is None and t.get("initial_state_file"):
                    p = b / t["initial_state_file"]
                    if p not in states:
                        states[p] = json.loads(p.read_text())
                    t["initial_state"] = states[p]
                yield t


def test_no_filler_reasons(builds):
    bad = [(t["id"], p) for t in _tasks(builds) for p in FILLER if p.lower() in t["instruction"].lower()]
    assert not bad, bad[:10]


def test_reason_is_the_scenarios_and_said_first(builds):
    n = 0
    for t in _tasks(builds):
        s = t["user"].get("scenario") or {}
        r = s.get("reason_for_call", "")
        if r:
            n += 1
            assert r in t["instruction"], (t["id"], r)
            first = t["instruction"].find(r)
            # the reason closes the first request (or opens a question): before any later request
            later = [t["instruction"].find(w) for w in ("Also, please", "After that, please", "Then I'd like to", "And please")]
            assert all(first < i for i in later if i >= 0), (t["id"], t["instruction"])
    assert n > 300


def _strings(x) -> list[str]:
    if isinstance(x, dict):
        return [s for v in x.values() for s in _strings(v)]
    if isinstance(x, list):
        return [s for v in x for s in _strings(v)]
    return [x] if isinstance(x, str) else []


def _target(t: dict):
    """(noun, record) the first write of the task acts on: its key argument's record in the initial state."""
    ents = (t.get("initial_state") or {}).get("entities") or {}
    for c in t["gold_calls"]:
        if not c.get("write"):
            continue
        for k, v in (c.get("arguments") or {}).items():
            if not isinstance(v, str):
                continue
            for ent, table in ents.items():
                if isinstance(table, dict) and v in table and k.endswith(("id", "_key", "number")) and ent.lower() not in ("user", "customer"):
                    return ent, table[v], ents
        return None
    return None


def test_reasons_name_the_target_in_half_the_tasks(builds):
    has = hit = 0
    for t in _tasks(builds):
        if t.get("read_only"):
            continue
        tg = _target(t)
        if tg is None:
            continue
        ent, rec, ents = tg
        has += 1
        reason = ((t["user"].get("scenario") or {}).get("reason_for_call") or "").lower()
        noun = re.sub(r"e?s$", "", ent.lower()).replace("_", " ")
        words = {s.lower() for s in _strings(rec) if len(s) >= 3 and not re.search(r"\d{3,}", s)}
        for s in _strings(rec):  # one hop: the flight a reservation holds, the product an item is
            for table in ents.values():
                if isinstance(table, dict) and s in table:
                    words |= {x.lower() for x in _strings(table[s]) if len(x) >= 3 and not re.search(r"\d{3,}", x)}
        if noun in reason or any(re.search(rf"\b{re.escape(w)}\b", reason) for w in words):
            hit += 1
    print(f"reasons naming the target: {hit}/{has}")
    assert has >= 100, has
    assert hit / has >= 0.5, (hit, has)


def test_a_helpdesk_ticket_is_not_booked():
    """Blind review 21: "I booked the ticket ... by mistake" on a support desk. A ticket is something bought only
    when its record says so (a price, an amount, a fare, and a time it happens at); else the request goes without a
    buyer's motive."""
    desk = {"id": 12, "title": "Printer offline", "state": "open", "priority": "2 normal"}
    got = {reason_for("cancel", "delete", "Delete a ticket.", "ticket", desk, None, {}, set(), s) for s in range(4)}
    assert not [g for g in got if g and re.search(r"booked|cheaper|plans changed", g)], got
    gig = {"ticket_id": "T-9", "event": "Jazz night", "starts_at": "2024-06-01T20:00:00", "price": 35.0}
    got = {reason_for("cancel", "cancel", "Cancel a ticket.", "ticket", gig, None, {}, set(), s) for s in range(4)}
    assert any(g and re.search(r"booked|cheaper|plans changed", g) for g in got), got
