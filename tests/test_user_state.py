"""A user's own initial state (`--state ENV=FILE`, a hand-replaced states/<env>.json): mapped, validated, located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgec.build import CompileOptions, compile_build
from forgec.cli import app
from forgec.runtime import envrt

ROOT = Path(__file__).resolve().parent.parent
AIRLINE = ROOT / "examples" / "airline.json"
DB = Path(__file__).resolve().parent / "fixtures" / "user_state" / "airline_db.json"
N = 20


def _compile(out: Path, **kw):
    return compile_build(CompileOptions(inputs=[AIRLINE], out=out, tasks_per_env=N, oracle_check=False, **kw))


def _pos(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """1-based line:col of the nth occurrence of `needle` (computed from the text, not by forgec)."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    return text.count("\n", 0, i) + 1, i - (text.rfind("\n", 0, i) + 1) + 1


def _errors(result):
    return [d for d in result.diagnostics if d.is_error]


# The fixture's records as the airline env must hold them: fields renamed by name (departureTime ->
# departure_time), τ² extras (dob, payment_methods, aircraft, created_at) kept as they are (issue 20: carried
# through every write) and the airports collection left out.
EXPECTED = {
    "User": {
        "mia_li_3668": {"user_id": "mia_li_3668", "name": "Mia Li", "email": "mia.li3668@example.com", "membership": "gold",
                        "balance": 250.0, "reservation_ids": ["NO6JO3", "AIXC49"], "dob": "1990-04-05",
                        "payment_methods": {"gift_card_1": {"amount": 120}}},
        "omar_rossi_1241": {"user_id": "omar_rossi_1241", "name": "Omar Rossi", "email": "omar.rossi@example.com",
                            "membership": "regular", "balance": 0.0, "reservation_ids": ["Q69X3R"], "dob": "1972-11-30",
                            "payment_methods": {}},
    },
    "Flight": {
        "HAT001": {"flight_number": "HAT001", "origin": "JFK", "destination": "SFO", "date": "2024-05-16", "departure_time": "08:30",
                   "price": 320.0, "seats_available": 40, "status": "scheduled", "aircraft": "A320"},
        "HAT002": {"flight_number": "HAT002", "origin": "SFO", "destination": "JFK", "date": "2024-05-20", "departure_time": "17:45",
                   "price": 295.5, "seats_available": 12, "status": "delayed", "aircraft": "B737"},
        "HAT003": {"flight_number": "HAT003", "origin": "ORD", "destination": "MIA", "date": "2024-05-18", "departure_time": "06:00",
                   "price": 180.0, "seats_available": 0, "status": "cancelled", "aircraft": "E175"},
    },
    "Reservation": {
        "NO6JO3": {"reservation_id": "NO6JO3", "user_id": "mia_li_3668", "flight_number": "HAT001", "cabin": "business",
                   "seats": 1, "baggage_count": 2, "total_price": 800.0, "status": "confirmed", "created_at": "2024-05-01T10:00:00"},
        "AIXC49": {"reservation_id": "AIXC49", "user_id": "mia_li_3668", "flight_number": "HAT003", "cabin": "economy",
                   "seats": 2, "baggage_count": 0, "total_price": 360.0, "status": "cancelled", "created_at": "2024-05-02T11:00:00"},
        "Q69X3R": {"reservation_id": "Q69X3R", "user_id": "omar_rossi_1241", "flight_number": "HAT002", "cabin": "basic_economy",
                   "seats": 1, "baggage_count": 1, "total_price": 236.4, "status": "checked_in", "created_at": "2024-05-03T12:00:00"},
    },
}


@pytest.fixture(scope="module")
def db_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("us") / "build"
    return out, _compile(out, states={"airline": DB})


def test_db_json_maps_validates_and_tasks_start_on_it(db_build):
    out, res = db_build
    assert _errors(res) == []
    world = json.loads((out / "states" / "airline.json").read_text())
    assert world["entities"] == EXPECTED
    tasks = [json.loads(line) for line in (out / "tasks" / "airline.jsonl").read_text().splitlines()]
    assert len(tasks) >= 5
    h = envrt.state_hash(world)
    assert {t["initial_state_hash"] for t in tasks} == {h}
    keys = set(EXPECTED["User"]) | set(EXPECTED["Flight"]) | set(EXPECTED["Reservation"])
    assert any(k in t["instruction"] for t in tasks for k in keys)  # tasks speak of the user's own records


def test_db_json_mapping_report_names_what_did_not_map(db_build):
    _, res = db_build
    msgs = [d.message for d in res.diagnostics if d.code == "state-mapping"]
    report = " | ".join(msgs)
    assert "'airports' maps to no entity" in report
    assert "Flights -> Flight" in report and "departureTime->departure_time" in report
    assert "users -> User: 2 record(s); fields mapped: balance, email, membership, name, reservation_ids, user_id; kept as they " \
           "are (not in the docs): dob, payment_methods" in report
    kept = next(m for m in msgs if m.startswith("kept the fields"))
    assert kept == ("kept the fields the data has and the docs don't (carried through every write): User.dob (str), "
                    "User.payment_methods (record), Reservation.created_at (str), Flight.aircraft (str)")  # in the env's entity order


def _native_text(mutate) -> str:
    """The fixture as the env's own layout, pretty-printed (one field per line), after `mutate`."""
    world = {"entities": json.loads(json.dumps(EXPECTED)), "globals": {}}
    mutate(world["entities"])
    return json.dumps(world, indent=2)


CASES = {
    "bad enum type": (lambda e: e["Flight"]["HAT002"].update(status=True), "true", 0, "not one of the allowed values"),
    "dangling reference": (lambda e: e["Reservation"]["Q69X3R"].update(user_id="nobody_1"), '"nobody_1"', 0, "which is not in the state"),
    "mismatched key": (lambda e: e["Flight"]["HAT003"].update(flight_number="HAT009"), '"HAT009"', 0, "stored under 'HAT003'"),
    "dangling list item": (lambda e: e["User"]["omar_rossi_1241"]["reservation_ids"].append("ZZZZZZ"), '"ZZZZZZ"', 0, "Reservation \"ZZZZZZ\""),
    "wrong type": (lambda e: e["Flight"]["HAT001"].update(seats_available="forty"), '"forty"', 0, "must be an int"),
    "null not optional": (lambda e: e["User"]["mia_li_3668"].update(email=None), "null", 0, "is null"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_native_state_is_a_located_error_exit_1(tmp_path, case):
    mutate, needle, nth, words = CASES[case]
    text = _native_text(mutate)
    f = tmp_path / "state.json"
    f.write_text(text)
    r = CliRunner().invoke(app, ["compile", str(AIRLINE), "-o", str(tmp_path / "b"), "-n", "5", "--no-oracle",
                                 "--format", "json", "--state", f"airline={f}"])
    assert r.exit_code == 1, r.output
    diags = [d for d in json.loads(r.stdout) if d["code"] == "bad-state"]
    assert len(diags) == 1, diags
    d = diags[0]
    assert words in d["message"]
    line, col = _pos(text, needle, nth)
    assert (d["span"]["file"], d["span"]["line"], d["span"]["col"]) == (str(f), line, col)


def test_duplicate_and_missing_in_db_json_are_located(tmp_path):
    text = DB.read_text()
    # a second HAT001 record in the same collection (JSON keeps the last; the user meant two flights)
    dup = text.replace('"HAT002": {"flight_number": "HAT002"', '"HAT001": {"flight_number": "HAT001"', 1)
    dup = dup.replace('"flight_number": "HAT002", "cabin": "basic_economy"', '"flight_number": "HAT001", "cabin": "basic_economy"')
    # a reservation without its required total_price
    dup = dup.replace('"seats": 2, "baggage_count": 0, "total_price": 360.0, ', '"seats": 2, "baggage_count": 0, ')
    f = tmp_path / "db.json"
    f.write_text(dup)
    res = _compile(tmp_path / "b", states={"airline": f})
    errs = sorted((d.span.line, d.span.col, d.message) for d in _errors(res))
    want_dup = _pos(dup, '{"flight_number": "HAT001"', 1)
    want_missing = _pos(dup, '{"reservation_id": "AIXC49"')
    assert [(ln, c) for ln, c, _ in errs] == sorted([want_dup, want_missing]), errs
    assert any("'HAT001' appears twice" in m for *_, m in errs)
    assert any("lacks the required field 'total_price'" in m for *_, m in errs)
    assert not (tmp_path / "b" / "tasks" / "airline.jsonl").exists()


def test_hand_replaced_state_with_bad_enum_is_reported_on_recompile(tmp_path):
    out = tmp_path / "b"
    assert _errors(_compile(out)) == []
    p = out / "states" / "airline.json"
    world = json.loads(p.read_text())
    fl = sorted(world["entities"]["Flight"])[0]
    world["entities"]["Flight"][fl]["seats_available"] = "forty"
    text = json.dumps(world, indent=1)
    p.write_text(text)
    res = _compile(out)
    errs = [d for d in _errors(res) if d.code == "bad-state"]
    assert len(errs) == 1 and "'forty'" not in errs[0].message and '"forty"' in errs[0].message
    assert (errs[0].span.file, errs[0].span.line, errs[0].span.col) == (str(p), *_pos(text, '"forty"'))
    assert p.read_text() == text  # the user's file is kept to fix, not regenerated over
    # fixed by hand: the edit is now the env's world and its tasks start on it
    world["entities"]["Flight"][fl]["seats_available"] = 40
    p.write_text(json.dumps(world))
    assert _errors(_compile(out)) == []
    assert json.loads(p.read_text())["entities"]["Flight"][fl]["seats_available"] == 40
    tasks = [json.loads(line) for line in (out / "tasks" / "airline.jsonl").read_text().splitlines()]
    assert tasks and {t["initial_state_hash"] for t in tasks} == {envrt.state_hash(world)}
    assert _errors(_compile(out)) == [] and json.loads(p.read_text()) == world  # and it stays the world on the next compile


def test_bad_state_option_is_a_usage_error(tmp_path):
    r = CliRunner().invoke(app, ["compile", str(AIRLINE), "-o", str(tmp_path / "b"), "--state", "airline"])
    assert r.exit_code == 2 and "ENV=FILE" in r.output


def _schema(build: Path, env: str) -> dict:
    from forgec.codegen import load_env_module

    return load_env_module(build / "envs" / env / "env.py", name=f"us_{env}_{abs(hash(str(build)))}").SCHEMA


def test_nested_record_fields_are_checked_and_located(tmp_path):
    from forgec.userstate import load_state

    out = tmp_path / "b"
    assert _errors(compile_build(CompileOptions(inputs=[ROOT / "examples" / "bookstore.yaml"], out=out, tasks_per_env=5,
                                                oracle_check=False))) == []
    world = json.loads((out / "states" / "bookstore.json").read_text())
    order = world["entities"]["Order"][sorted(world["entities"]["Order"])[0]]
    order["lines"][0]["book_id"] = "book_nope"  # a reference inside a nested record (Line.book_id: Book)
    order["lines"][0]["gift_wrap"] = True  # a field Line does not have: the world's own, kept (issue 20)
    text = json.dumps(world, indent=2)
    res = load_state(_schema(out, "bookstore"), tmp_path / "s.json", text)
    assert res.world is None
    got = sorted((d.span.line, d.span.col) for d in res.diagnostics if d.is_error)
    assert got == [_pos(text, '"book_nope"')]
    order["lines"][0]["book_id"] = sorted(world["entities"]["Book"])[0]
    res = load_state(_schema(out, "bookstore"), tmp_path / "s.json", json.dumps(world))
    assert [d for d in res.diagnostics if d.is_error] == [] and res.world["entities"]["Order"][order["order_id"]]["lines"][0]["gift_wrap"] is True
    assert res.schema["records"]["Line"]["fields"]["gift_wrap"] == {"type": "bool", "optional": True, "learned": True}


def test_unlisted_enum_value_grows_the_enum_with_a_located_warning(tmp_path):
    text = _native_text(lambda e: e["Flight"]["HAT002"].update(status="grounded"))
    f = tmp_path / "state.json"
    f.write_text(text)
    res = _compile(tmp_path / "b", states={"airline": f})
    assert _errors(res) == []
    w = [d for d in res.diagnostics if d.severity.value == "warning" and d.code == "state-mapping"]
    assert [(d.message.split(";")[0], d.span.line, d.span.col) for d in w] == [
        ('Flight.status: the data uses "grounded" (1 record(s)), which the docs do not list', *_pos(text, '"grounded"'))]
    assert json.loads((tmp_path / "b" / "states" / "airline.json").read_text())["entities"]["Flight"]["HAT002"]["status"] == "grounded"


def test_list_shaped_collections_map_by_key_field(db_build):
    from forgec.userstate import load_state

    out, _ = db_build
    db = json.loads(DB.read_text())
    db["users"] = list(db["users"].values())  # some dumps hold a list of records per collection
    res = load_state(_schema(out, "airline"), "db.json", json.dumps(db))
    assert [d for d in res.diagnostics if d.is_error] == []
    assert res.world["entities"]["User"] == EXPECTED["User"]
