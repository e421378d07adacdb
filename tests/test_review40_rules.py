"""Rules from review 40, drawn from doc sets this project had not opened (60 drawn, 4 gave tasks): each test is a
hand-written doc in the style of the set that showed the gap, checked against what a person would expect."""

from __future__ import annotations

import random
import re

from conftest import compile_doc

from forgec.stdlib.values import SET_UP, said_value


def test_a_record_set_up_for_a_purpose_is_named_for_it():
    """Instana's `create_website(name)` "The name of the new website to be configured": no topic names a website,
    so every create of one yielded nothing. A record the docs say is set up is named for what it is for
    ("Staging website"); a recipe, which no doc sets up, still gets no made-up name."""
    rng = random.Random(7)
    doc = "The name of the new website to be configured."
    assert SET_UP.search(doc)
    names = {said_value("name", doc, rng, noun="Website", topical=False, configured=True) for _ in range(20)}
    assert all(re.fullmatch(r"[A-Z][a-z]+ website", n) for n in names), names
    assert len(names) > 2
    taken = frozenset(n.lower() for n in names)
    assert said_value("name", doc, rng, noun="Website", topical=False, configured=True, taken=taken) not in names
    assert said_value("name", "The recipe's name.", rng, noun="Recipe", topical=False, configured=False) is None
    assert not SET_UP.search("The recipe's name.")
    person = said_value("name", doc, rng, noun="User", topical=False, configured=True)
    assert person is None or not person.endswith(" user"), person


_JSON = "application/json"
_SUB = {"type": "object", "properties": {"id": {"type": "integer"}, "email": {"type": "string"}, "name": {"type": "string"},
                                          "status": {"type": "string", "enum": ["enabled", "blocklisted"]}}}
PAGED = {"openapi": "3.0.0", "info": {"title": "Newsletter", "version": "1"}, "paths": {
    "/subscribers": {"get": {"operationId": "getSubscribers", "summary": "returns all subscribers.",
                             "parameters": [{"in": "query", "name": "page", "schema": {"type": "integer"}}],
                             "responses": {"200": {"description": "ok", "content": {_JSON: {"schema": {"type": "object", "properties": {
                                 "data": {"type": "object", "properties": {
                                     "results": {"type": "array", "items": {"$ref": "#/components/schemas/Subscriber"}},
                                     "query": {"type": "string"}, "total": {"type": "integer"}, "per_page": {"type": "integer"},
                                     "page": {"type": "integer"}}}}}}}}}}},
    "/subscribers/{id}": {"get": {"operationId": "getSubscriberById", "summary": "returns a subscriber.",
                                  "parameters": [{"in": "path", "name": "id", "required": True, "schema": {"type": "integer"}}],
                                  "responses": {"200": {"description": "ok", "content": {_JSON: {"schema": {"type": "object", "properties": {
                                      "data": {"$ref": "#/components/schemas/Subscriber"}}}}}}}}}},
    "components": {"schemas": {"Subscriber": _SUB}}}


def test_a_page_that_echoes_its_query_is_no_record(tmp_path):
    """listmonk's `{data: {results: [...], query, total, per_page, page}}`: the page around the subscribers, whose
    `query` echoes the search. Read as a record it gave every subscriber a `total`, a `page` and a `query`."""
    out = compile_doc(tmp_path, "newsletter", "openapi.json", PAGED, 4)
    env = next((out / "src").rglob("env.forge")).read_text()
    block = re.search(r"entity Subscriber\b[^{]*\{(.*?)\n  \}", env, re.S)
    assert block, env[:1500]
    fields = set(re.findall(r"^\s*(\w+):", block.group(1), re.M))
    assert {"email", "name", "status"} <= fields, fields
    assert not fields & {"results", "query", "total", "per_page", "page"}, fields


def _tool(name: str, desc: str, props: dict, required: list[str], out: dict | None = None) -> dict:
    t = {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props, "required": required}}
    return {**t, "outputSchema": out} if out else t


NOTES = {"tools": [  # a notes server whose only lookup is a text search (Notion's, Zotero's, Paperless's style)
    _tool("search_notes", "Search notes by text. Returns the notes whose title or body matches.",
          {"query": {"type": "string", "description": "Search query"}}, ["query"],
          {"type": "object", "properties": {"notes": {"type": "array", "items": {"type": "object", "properties": {
              "id": {"type": "string"}, "title": {"type": "string", "description": "The note's title"},
              "body": {"type": "string", "description": "The note's text"}, "pinned": {"type": "boolean"}}}}}}),
    _tool("update_note", "Update a note's title or text.",
          {"note_id": {"type": "string", "description": "ID of the note"}, "title": {"type": "string", "description": "New title"},
           "body": {"type": "string", "description": "New text"}}, ["note_id"]),
    _tool("delete_note", "Delete a note.", {"note_id": {"type": "string", "description": "ID of the note"}}, ["note_id"]),
]}


def _tasks(out) -> list[dict]:
    import json
    return [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]


def test_a_record_only_a_text_search_finds_is_searched_for_by_its_title(tmp_path):
    """Where the only lookup is `search_notes(query)`, 31 doc sets in the broad corpus, no task could find a record
    ("no-lookup"). The user names the note by its title, the agent searches for that title, and the note acted on
    is the one searched for, never another the search happened to return."""
    import json
    out = compile_doc(tmp_path, "notes", "tools_list.json", NOTES, 12)
    world = json.loads(next((out / "states").glob("*.json")).read_text())
    notes = next(v for k, v in world["entities"].items() if k.lower().startswith("note"))
    tasks = _tasks(out)
    assert len(tasks) >= 6, len(tasks)
    for t in tasks:
        calls = t["gold_calls"]
        for i, c in enumerate(calls):
            if c["tool"] not in ("update_note", "delete_note"):
                continue
            searched = [x["arguments"]["query"] for x in calls[:i] if x["tool"] == "search_notes"]
            assert notes[c["arguments"]["note_id"]]["title"] in searched, (t["instruction"], calls)
        for x in calls:
            if x["tool"] == "search_notes":
                assert f'"{x["arguments"]["query"]}"' in t["instruction"], (t["instruction"], x)
    said = [t["instruction"] for t in tasks if any(c["tool"] == "update_note" for c in t["gold_calls"])]
    assert not [s for s in said if re.search(r'called "[^"]*" or text', s)], said  # "the title or text of my note called X"
