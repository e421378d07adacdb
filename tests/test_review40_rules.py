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
