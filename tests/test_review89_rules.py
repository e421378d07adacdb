"""Rules from the blind reviews of the twenty-second session (reviews 86, 87 and 89), each checked on a small doc
written as its source writes it."""

from __future__ import annotations

import copy
import json

from conftest import compile_doc

from forgec.stdlib.values import TOPICS, generate_state
from test_review36_rules import SLIDERS


def _slider_schema(**extra) -> dict:
    fields = {"id": {"type": "int"}, "type": {"type": "float"}, "title": {"type": "str", "optional": True},
              "enabled": {"type": "bool"}, "data": {"type": "str", "optional": True}, **extra}
    return {"entities": {"Discover": {"key": "id", "fields": fields}, "Movie": {"key": "id", "fields": {"id": {"type": "int"}}}},
            "records": {}, "globals": {}}


def test_a_setting_is_not_titled_by_a_topic():
    """Overseerr's Discover slider `{title, type, enabled, data}` is a setting: an on/off switch and no text of its own.
    Its title says what it shows, which its docs never tell; an office topic ("Press release", "Training schedule")
    was rejected in 9 of 10 slider tasks (reviews 86, 87). A record with a text of its own keeps topic titles."""
    topics = {t.lower() for t in TOPICS}
    plain = generate_state(_slider_schema(), seed=3)["entities"]["Discover"]
    titles = [r["title"] for r in plain.values() if r.get("title")]
    assert titles and not [t for t in titles if t.lower() in topics], titles
    noted = generate_state(_slider_schema(description={"type": "str"}), seed=3)["entities"]["Discover"]
    assert any((r.get("title") or "").lower() in topics for r in noted.values())


def test_no_task_names_a_setting_by_a_made_up_title(tmp_path):
    """End to end on review 36's slider doc without the slider's text field: no instruction calls a slider by a
    name, since none it could say is the docs'."""
    doc = copy.deepcopy(SLIDERS)
    doc["components"]["schemas"]["DiscoverSlider"]["properties"].pop("description")
    out = compile_doc(tmp_path, "sliders", "openapi.json", doc, 12)
    said = [json.loads(line)["instruction"] for f in sorted((out / "tasks").glob("*.jsonl")) for line in f.read_text().splitlines() if line.strip()]
    assert not [x for x in said if "called" in x], said
