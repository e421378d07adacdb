"""Each record holds its own documented fields, with values a person would recognise (blind reviews 23-24).

The fixtures are small docs written in the styles the reviewed APIs used (an identity-verification API whose
`list_documents(applicant_id)` returns documents, a form-encoded API whose bodies are PascalCase and whose
responses are snake_case); the expected values are facts of the docs and of English, not forgec's output.
"""

from __future__ import annotations

import datetime as _dt
import random
import re

import pytest

from forgec.frontends import read_paths
from forgec.synth.schema import infer_schema
from forgec.wording import humanize
from forgec.stdlib import values as V


def _schema(tmp_path, doc: dict, name: str = "api"):
    d = tmp_path / name
    d.mkdir()
    (d / "openapi.json").write_text(__import__("json").dumps(doc))
    envs, diags = read_paths([d])
    assert envs, [x.message for x in diags]
    return infer_schema(envs[0])


def _obj(props: dict, required=()) -> dict:
    return {"type": "object", "properties": props, "required": list(required)}


def _op(op_id: str, summary: str, params=(), body=None, resp=None) -> dict:
    out = {"operationId": op_id, "summary": summary, "parameters": list(params),
           "responses": {"200": {"description": "ok", **({"content": {"application/json": {"schema": resp}}} if resp else {})}}}
    if body is not None:
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    return out


APPLICANT = _obj({"id": {"type": "string"}, "first_name": {"type": "string"}, "last_name": {"type": "string"},
                  "delete_at": {"type": "string", "description": "When this applicant is scheduled to be deleted."}})
DOCUMENT = _obj({"id": {"type": "string"}, "applicant_id": {"type": "string"}, "file_name": {"type": "string"},
                 "side": {"type": "string", "enum": ["front", "back"]}})
CHECK = _obj({"id": {"type": "string"}, "applicant_id": {"type": "string"}, "result": {"type": "string", "enum": ["clear", "consider"]}})
KYC = {"openapi": "3.0.0", "info": {"title": "kyc", "version": "1"}, "paths": {
    "/applicants": {"get": _op("list_applicants", "List applicants", resp={"type": "array", "items": APPLICANT}),
                    "post": _op("create_applicant", "Create applicant", body=APPLICANT, resp=APPLICANT)},
    "/applicants/{applicant_id}": {"get": _op("find_applicant", "Retrieve applicant",
                                              [{"name": "applicant_id", "in": "path", "required": True, "schema": {"type": "string"}}], resp=APPLICANT)},
    "/documents": {"get": _op("list_documents", "List documents",
                              [{"name": "applicant_id", "in": "query", "required": True, "schema": {"type": "string"}}],
                              resp=_obj({"documents": {"type": "array", "items": DOCUMENT}}))},
    "/documents/{document_id}": {"get": _op("find_document", "Retrieve document",
                                            [{"name": "document_id", "in": "path", "required": True, "schema": {"type": "string"}}], resp=DOCUMENT)},
    "/checks": {"get": _op("list_checks", "Retrieve checks",
                           [{"name": "applicant_id", "in": "query", "required": True, "schema": {"type": "string"}}],
                           resp=_obj({"checks": {"type": "array", "items": CHECK}})),
                "post": _op("create_check", "Create a check", [{"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}}],
                            body=CHECK, resp=CHECK)},
}}


def test_a_list_of_another_records_children_is_theirs_not_the_parents(tmp_path):
    """`list_documents(applicant_id)` lists documents: the applicant holds none of a document's or a check's fields."""
    s = _schema(tmp_path, KYC)
    v = s.views["list_documents"]
    assert (v.kind, v.target) == ("search", "Document")
    applicant = set(s.entities["Applicant"].fields)
    assert {"file_name", "side", "result"}.isdisjoint(applicant), applicant
    assert {"first_name", "last_name", "delete_at"} <= applicant
    assert "file_name" in s.entities["Document"].fields


def test_a_header_is_never_a_field(tmp_path):
    s = _schema(tmp_path, KYC)
    assert not any("idempotency" in f.lower() for f in s.entities["Check"].fields)


TWINS = {"openapi": "3.0.0", "info": {"title": "verify", "version": "1"}, "paths": {
    "/v2/Services": {
        "get": _op("ListService", "List services", resp=_obj({"services": {"type": "array", "items": _obj({
            "sid": {"type": "string"}, "friendly_name": {"type": "string"}, "code_length": {"type": "integer"}})}})),
        "post": {"operationId": "CreateService", "summary": "Create a service", "responses": {"201": {"description": "created"}},
                 "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": _obj({
                     "FriendlyName": {"type": "string"}, "CodeLength": {"type": "integer"}}, ["FriendlyName"])}}}}},
    "/v2/Services/{Sid}": {"delete": _op("DeleteService", "Delete a service", [{"name": "Sid", "in": "path", "required": True, "schema": {"type": "string"}}])},
}}


def test_a_form_field_and_its_snake_case_twin_are_one_field(tmp_path):
    """Twilio's bodies say `FriendlyName`, its responses `friendly_name`: one field, not two with different values."""
    fields = set(_schema(tmp_path, TWINS).entities["Service"].fields)
    assert "friendly_name" in fields and "FriendlyName" not in fields, fields
    assert "code_length" in fields and "CodeLength" not in fields, fields


def test_an_all_of_wrapper_keeps_its_required_list(tmp_path):
    """`{allOf: [$ref], required: [applicant_id, file]}` (Onfido's uploaders): both are required."""
    doc = {"openapi": "3.0.0", "info": {"title": "up", "version": "1"}, "components": {"schemas": {
        "photo_request": _obj({"applicant_id": {"type": "string"}, "file": {"type": "string", "format": "binary"}})}},
        "paths": {"/live_photos": {"post": _op("upload_live_photo", "Upload live photo", body={
            "allOf": [{"$ref": "#/components/schemas/photo_request"}], "required": ["applicant_id", "file"]})}}}
    d = tmp_path / "up"
    d.mkdir()
    (d / "openapi.json").write_text(__import__("json").dumps(doc))
    envs, _ = read_paths([d])
    body = next(p for p in envs[0].tools[0].params if p.type.kind == "object")
    assert {f.name: f.required for f in body.type.fields} == {"applicant_id": True, "file": True}


def _ctx(seed: int = 3):
    return V._Ctx(random.Random(seed), _dt.date(2024, 5, 15))


def _many(name: str, doc: str = "", n: int = 12, entity: str = "Address") -> list:
    c = _ctx()
    return [V.generate_value({"type": "str"}, name, c.rng, entity=entity, ctx=c, doc=doc) for _ in range(n)]


def test_an_address_part_is_named_by_its_last_word():
    """`address_city` is a city and `address_state` a state (review 23 saw street addresses in both)."""
    cities = {c[0] for c in V.CITIES}
    states = {c[1] for c in V.CITIES}
    assert set(_many("address_city")) <= cities
    assert set(_many("address_state")) <= states
    assert all(re.fullmatch(r"(Apt\.|Suite) \d+", v) for v in _many("address_line2"))
    assert all(re.fullmatch(r"\d+ \S.*", v) for v in _many("address_line1"))


def test_numbers_in_words_and_numbered_things_are_digits():
    assert all(re.fullmatch(r"\d{4}", v) for v in _many("lastFour", entity="StoredPaymentMethod"))
    assert all(re.fullmatch(r"0[1-9]|1[0-2]", v) for v in _many("expiryMonth", entity="StoredPaymentMethod"))
    assert all(re.fullmatch(r"\d{8}", v) for v in _many("routing_number", entity="BankAccount"))


def test_no_airport_unless_the_docs_say_one():
    """A check's `to` and a firewall rule's `destination` are no airports; a flight's `origin` doc says one."""
    assert not set(_many("destination", "The destination port or network", entity="Rule")) & set(V.AIRPORTS)
    assert set(_many("origin", "The origin airport code, such as 'JFK'", entity="Flight")) <= set(V.AIRPORTS)


@pytest.mark.parametrize("doc,exts", [
    ("Documents must be uploaded as a multipart form. The valid file types are: jpg, png and pdf.", ("jpg", "png", "pdf")),
    ("The only valid file type is pdf.", ("pdf",)),
    ("Upload a CSV file of addresses.", ("csv",)),
    ("Attach the doc you want to send.", ()),
])
def test_the_file_types_a_doc_allows(doc, exts):
    assert V.documented_extensions(doc) == exts
    if exts:
        assert V.fit_extension("notes/todo.txt", doc, random.Random(0)).rsplit(".", 1)[1] in exts


def test_records_that_end_are_few():
    """`deleted_at`, `delete_at`, `is_archived`, `canceled_on` end a record; `created_at` and `status` do not."""
    assert all(V.ends_record(n) for n in ("deleted_at", "delete_at", "is_archived", "canceled_on", "deleted"))
    assert not any(V.ends_record(n) for n in ("created_at", "status", "delete_reason", "archive_url"))
    assert V.gone({"id": 1, "deleted_at": "2024-01-01"}) and not V.gone({"id": 1, "deleted_at": None, "deleted": False})
    schema = {"entities": {"Applicant": {"key": "id", "fields": {
        "id": {"type": "str"}, "first_name": {"type": "str"},
        "delete_at": {"type": "str", "optional": True}, "deleted": {"type": "bool"}}}}}
    recs = list(V.generate_state(schema, seed=5, size=60)["entities"]["Applicant"].values())
    assert sum(V.gone(r) for r in recs) <= len(recs) // 3, [r.get("delete_at") for r in recs]


def test_a_field_named_by_a_function_word_is_said_as_a_field():
    assert humanize("from") == '"from" field'
    assert humanize("to_city") == "to city" and humanize("reply_to") == "reply to"


def test_another_things_name_is_no_topic():
    """An order's `payment_method_title` is the name of a payment method: unset when optional, never "Tax documents"."""
    schema = {"entities": {"Order": {"key": "id", "fields": {
        "id": {"type": "str"}, "payment_method_title": {"type": "str", "optional": True}}}}}
    recs = V.generate_state(schema, seed=1, size=30)["entities"]["Order"].values()
    assert all(r["payment_method_title"] is None for r in recs)


PAY = {"openapi": "3.0.0", "info": {"title": "pay", "version": "1"}, "paths": {
    "/payments": {"get": _op("list_payments", "Search payments", resp=_obj({"results": {"type": "array", "items": _obj({
        "payment_id": {"type": "string"}, "description": {"type": "string", "description": "What the payment is for"},
        "email": {"type": "string", "description": "The paying user's email address"},
        "amount": {"type": "integer", "description": "The amount, in pence, the user has paid."},
        "card_brand": {"type": "string", "description": "The brand of the card, for example Visa"}})}}))},
    "/payments/{paymentId}/refunds": {"post": _op("refund_payment", "Refund a payment",
        [{"name": "paymentId", "in": "path", "required": True, "schema": {"type": "string"}}],
        body=_obj({"amount": {"type": "integer", "description": "The amount you want to refund, in pence."}}, ["amount"]))},
}}


def test_an_amount_in_pence_is_said_in_pounds(tmp_path):
    """GOV.UK Pay's amounts are in pence: the user says "£15" and the call sends 1500 (review 25: "$3" sent as 3p);
    a card's brand is a card brand, not a company."""
    import json

    from forgec.build import CompileOptions, compile_build

    d = tmp_path / "docs" / "pay"
    d.mkdir(parents=True)
    (d / "openapi.json").write_text(json.dumps(PAY))
    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[d], out=out, tasks_per_env=20, seed=0, oracle_check=False))
    world = json.loads((out / "states" / "pay.json").read_text())["entities"]["Payment"]
    assert {r["card_brand"] for r in world.values()} <= {"Visa", "Mastercard", "American Express", "Discover", None}
    refunds = [(t["instruction"], c["arguments"]) for f in (out / "tasks").glob("*.jsonl") for line in f.read_text().splitlines()
               if (t := json.loads(line)) for c in t["gold_calls"] if c["tool"] == "refund_payment"]
    assert refunds, "the env yields refunds"
    for text, args in refunds:
        pence = args["body"]["amount"]
        said = f"£{pence / 100:,.2f}" if pence % 100 else f"£{pence // 100:,}"
        assert said in text and "$" not in text, (text, args)


PROJECTS = {"openapi": "3.0.0", "info": {"title": "projects", "version": "1"}, "paths": {
    "/projects": {"get": _op("list_projects", "List projects", resp={"type": "array", "items": _obj({
        "id": {"type": "string"}, "name": {"type": "string"}, "description": {"type": "string"}})})},
    "/projects/{id}": {"patch": _op("update_project", "Update a project", [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                                   body=_obj({"name": {"type": "string"}, "description": {"type": "string"}}))},
}}


def test_an_update_names_what_it_changes(tmp_path):
    """"I want to update the details of my project called X." with an empty body is no request (a corpus-broad
    Dependency-Track task): every gold update sends a value."""
    import json

    from forgec.build import CompileOptions, compile_build

    d = tmp_path / "docs" / "projects"
    d.mkdir(parents=True)
    (d / "openapi.json").write_text(json.dumps(PROJECTS))
    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[d], out=out, tasks_per_env=20, seed=0, oracle_check=False))
    updates = [c["arguments"] for f in (out / "tasks").glob("*.jsonl") for line in f.read_text().splitlines()
               for c in json.loads(line)["gold_calls"] if c["tool"] == "update_project"]
    assert updates, "the env yields updates"
    assert all(any(v not in (None, "", {}) for v in (a.get("body") or {}).values()) for a in updates), updates
