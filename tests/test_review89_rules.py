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


ERRORS_DOC = {  # Gotify's shape (Swagger 2): `/client` lists clients; an OIDC call answers only `default: Error`
    "swagger": "2.0", "info": {"title": "Gotify", "version": "1"},
    "paths": {
        "/client": {"get": {"operationId": "getClients", "summary": "Return all clients.", "responses": {
            "200": {"description": "Ok", "schema": {"type": "array", "items": {"$ref": "#/definitions/Client"}}}}}},
        "/client/{id}": {"delete": {"operationId": "deleteClient", "summary": "Delete a client.", "parameters": [
            {"name": "id", "in": "path", "required": True, "type": "integer"}], "responses": {"200": {"description": "Ok"}}}},
        "/client/{id}/elevate": {"get": {"operationId": "elevateClient", "summary": "Elevate a client session.", "parameters": [
            {"name": "id", "in": "path", "required": True, "type": "integer"}],
            "responses": {"default": {"description": "Error", "schema": {"$ref": "#/definitions/Error"}}}}},
    },
    "definitions": {
        "Client": {"description": "The Client holds information about a device which can receive notifications.", "type": "object",
                   "required": ["id", "name"], "properties": {"id": {"type": "integer"}, "name": {"type": "string"},
                                                              "token": {"type": "string"}, "lastUsed": {"type": "string", "format": "date-time"}}},
        "Error": {"type": "object", "properties": {"error": {"type": "string"}, "errorCode": {"type": "integer"},
                                                   "errorDescription": {"type": "string"}}},
    },
}


def test_a_default_error_response_is_no_record_and_a_device_is_no_person(tmp_path):
    """Review 89: Gotify's clients held `error`, `errorCode` and `errorDescription` (an OIDC call's `default: Error`
    read as its return), and were named like people ("Kristin Mendoza") though the docs call a client a device."""
    out = compile_doc(tmp_path, "gotify", "swagger.json", ERRORS_DOC, 8)
    src = next((out / "src").glob("*/env.forge")).read_text()
    client = src[src.index("entity Client"):]
    client = client[:client.index("}")]
    assert "errorCode" not in client and "device" in client, client
    names = [r["name"] for r in json.loads((out / "states" / "gotify.json").read_text())["entities"]["Client"].values()]
    from forgec.stdlib.values import DEVICE_NAMES
    assert names and all(any(n.endswith(d) for d in DEVICE_NAMES) for n in names), names


def test_a_workspace_is_no_customer():
    """Review 89: a Postman workspace described "Needs invoices in PDF." and renamed from "Chavez LLC" to
    "Callahan PLC". A place a person works in takes no customer note, and no company is renamed to another's name;
    a company one deals with still may carry a note about them."""
    import random

    from forgec.stdlib.values import PERSON_NOTES, said_value

    ws = {said_value("description", "", random.Random(i), noun="Workspace") for i in range(40)}
    assert not ws & set(PERSON_NOTES), ws & set(PERSON_NOTES)
    assert {said_value("description", "", random.Random(i), noun="Company") for i in range(40)} & set(PERSON_NOTES)
    assert all(said_value("name", "", random.Random(i), noun="Workspace", renaming="Chavez LLC") is None for i in range(20))
