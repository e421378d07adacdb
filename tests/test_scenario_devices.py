"""Singleton device/session envs (a car, a home hub, a drone: state globals, no records) under the
scenario sampler: bool/enum/number arguments said as a person says them (forgec/devicewords.py),
the said-check accepting that wording, and questions about the device's current state.

Three fixtures from three doc formats (BFCL jsonl, MCP tools/list, OpenAPI) must each yield >= 50
tasks or say why in the manifest (and never fewer than 5: each has state reads to look up), with oracle pass^1 = 1.0, no tool words, no pipeline phrasing, no redundant write.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from forgec.devicewords import bool_said, control_phrase, unit_of
from forgec.lower import said_in, render_instruction

ROOT = Path(__file__).resolve().parent.parent
SIM = Path(__file__).parent / "fixtures" / "sim"
sys.path.insert(0, str(ROOT / "bench"))

import task_quality  # noqa: E402
from conftest import assert_yield_or_reason  # noqa: E402

_DEVICES = ["vehicle_bfcl.jsonl", "home_mcp.json", "drone_openapi.yaml"]


@pytest.mark.parametrize("fixture", _DEVICES)
def test_device_env_meets_the_bar(fixture, tmp_path):
    out = tmp_path / "build"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(SIM / fixture), "-o", str(out), "-q", "--format", "concise"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    rows = task_quality.analyse(out)
    assert len(rows) == 1
    row = rows[0]
    assert row["has_write"]
    assert_yield_or_reason(out, row)  # dictated device commands are no tasks (rubric 3): >= 50 or the reasons why
    assert row["tasks"] >= 1, row  # each fixture has state reads: a question about them remains
    tasks = [json.loads(x) for x in (out / "tasks" / f"{row['env']}.jsonl").read_text().splitlines()]
    # no request twice, however it is opened ("Could you tell me" / "Can you check"): the drone's 9 tasks were one question
    asks = [(re.sub(r"^.*?(?:Could you tell me|Can you check|Can you look up|I'd like to|Could you please|I want to|Please) ", "", t["instruction"]),
             json.dumps(t["gold_calls"], sort_keys=True)) for t in tasks]
    assert len(set(asks)) == len(asks), sorted(asks)
    assert row["oracle"] == 1.0, row
    assert row["tool_pct"] == 0.0, row["examples"]
    assert row["pipeline_pct"] == 0.0, row["examples"]
    assert row["redundant"] == 0, row
    tasks = [json.loads(x) for x in (out / "tasks" / f"{row['env']}.jsonl").read_text().splitlines()]
    for t in tasks:
        ins = t["instruction"]
        # no bool said as a flag ("unlock on", "activate off"), no "a new one" for a device, no raw true/false
        assert not re.search(r"\b(true|false)\b|a new one|\bunlock (on|off)\b|\bactivate (on|off)\b|\barmed (on|off)\b|\brecording (on|off)\b", ins, re.I), ins
        assert not re.search(r"\bThe \w+(?: \w+)? (?:is|should be) ", ins), ins  # every fact woven into the goal, none appended
    assert any("?" in t["instruction"] for t in tasks), "a device env asks about its current state too"


def test_control_phrases_from_three_doc_styles():
    """Hand-checked: the docs' own verb pair or on/off particle carries the bool/enum value."""
    # BFCL: "Locks or unlocks", bool named by one side of the pair; "Turns ... on or off", bool named `activate`
    assert control_phrase("Locks or unlocks the given doors of the car.", [("unlock", False, "True to unlock the doors, false to lock them.")]) \
        == ("lock the doors of the car", {"unlock"})
    assert control_phrase("Turns cruise control on or off at a speed.", [("activate", False, "True to turn cruise control on.")]) \
        == ("turn cruise control off", {"activate"})
    assert control_phrase("Engages or releases the parking brake.", [("mode", "engage", "")]) == ("engage the parking brake", {"mode"})
    assert control_phrase("Starts or stops the car's engine. To start it, press the brake.", [("ignitionMode", "STOP", "")]) \
        == ("stop the car's engine", {"ignitionMode"})
    # MCP: "Turn the thermostat on or off." with `on: bool`; "Switch the garage light." with "true switches it on"
    assert control_phrase("Turn the thermostat on or off.", [("on", True, "true = on, false = off")]) == ("turn the thermostat on", {"on"})
    assert control_phrase("Switch the garage light.", [("on", False, "true switches it on")]) == ("switch the garage light off", {"on"})
    # OpenAPI: "Arm or disarm the motors." with `armed`; "Start or stop recording video." with `recording` (no param doc)
    assert control_phrase("Arm or disarm the motors.", [("armed", False, "")]) == ("disarm the motors", {"armed"})
    assert control_phrase("Start or stop recording video.", [("recording", True, "")]) == ("start recording video", {"recording"})
    # no verb in the docs: no control phrase (the generic wording takes over)
    assert control_phrase("Sets the cabin temperature and fan.", [("mode", "defrost", "Climate mode.")]) is None


def test_bool_said_and_said_in():
    assert bool_said("Please lock the rear left door of the car.", "unlock", False)
    assert not bool_said("Please unlock the rear left door of the car.", "unlock", False)
    assert bool_said("Please unlock the driver door.", "unlock", True)
    assert bool_said("Turn cruise control off with a speed of 50 km/h.", "activate", False)
    assert not bool_said("Turn cruise control on.", "activate", False)
    assert bool_said("I want to disarm the motors.", "armed", False)
    assert bool_said("I'd like to start recording video.", "recording", True)
    assert not bool_said("I'd like to stop recording video.", "recording", True)
    # the lowering's check: a bool is said only with its name; an enum value with spaces
    assert not said_in("lock the doors", False)
    assert said_in("lock the doors", False, "unlock")
    assert said_in("unlock the rear left door", ["rear_left"], "door")
    # a goal that says every fact gets no "The unlock should be false." sentence appended
    goal = "Please lock the rear left door of the car."
    assert render_instruction(goal, "", {"unlock": False, "door": ["rear_left"]}) == goal


def test_units_from_the_docs():
    assert unit_of("speed", "Cruising speed in km/h.", "") == "km/h"
    assert unit_of("celsius", "Target in °C", "") == "degrees"
    assert unit_of("altitude", "Hover altitude in meters", "") == "meters"
    assert unit_of("temperature", "Target cabin temperature.", "Sets the cabin temperature and fan. The temperature has to be between 16 and 30 degrees.") == "degrees"
    assert unit_of("fuelAmount", "Gallons of fuel to add; must be positive.", "") == "gallons"
    assert unit_of("amount", "Amount to refund in dollars.", "") is None
