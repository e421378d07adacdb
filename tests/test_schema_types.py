"""Either/or object schemas and recursive schemas, from docs through the build (issue 12, "Types").

* `anyOf`/`oneOf` with an object branch is that object (the richest branch; compatible branches
  merged), never `any`: a τ-style `flights: list[FlightInfo | dict]` must name a flight's fields.
* A recursive OpenAPI 3.1 schema (tests/fixtures/recursive) compiles, its records refer to
  themselves, the tools' JSON Schemas use `$defs`/`$ref`, and its tasks replay under the oracle.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forgec.build import CompileOptions, compile_build
from forgec.frontends import read_file
from forgec.lang import ast as A
from forgec.synth import synthesize
from forgec import ir

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "recursive"


def _write(tmp_path: Path, name: str, doc: dict) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc), encoding="utf-8")
    return p


def _fields(t: ir.Type) -> dict[str, ir.Field_]:
    return {f.name: f for f in t.fields}


# --------------------------------------------------------------------------- anyOf / oneOf

# OpenAI tools, written the way pydantic writes `list[FlightInfo | dict]` (a `$defs` + `$ref` branch
# and a free dict branch)
OPENAI_BOOK = [
    {
        "type": "function",
        "function": {
            "name": "book_reservation",
            "description": "Book a reservation.",
            "parameters": {
                "$defs": {
                    "FlightInfo": {
                        "type": "object",
                        "properties": {
                            "flight_number": {"type": "string", "description": "Flight number, such as 'HAT001'."},
                            "date": {"type": "string", "description": "Date of the flight, YYYY-MM-DD."},
                        },
                        "required": ["flight_number", "date"],
                    }
                },
                "type": "object",
                "properties": {
                    "user_id": {"type": "string"},
                    "flights": {
                        "type": "array",
                        "items": {"anyOf": [{"$ref": "#/$defs/FlightInfo"}, {"type": "object", "additionalProperties": True}]},
                    },
                },
                "required": ["user_id", "flights"],
            },
        },
    }
]


def test_openai_anyof_object_or_dict_is_the_object(tmp_path):
    tools, diags = read_file(_write(tmp_path, "airline.json", OPENAI_BOOK))
    assert not [d for d in diags if d.is_error]
    flights = tools[0].param("flights").type
    assert flights.kind == "array" and flights.items.kind == "object"
    f = _fields(flights.items)
    assert set(f) == {"flight_number", "date"}
    assert f["flight_number"].required and f["date"].required  # the only branch with fields decides
    assert f["flight_number"].type.kind == "string"


def test_openai_anyof_reaches_the_env_as_a_record(tmp_path):
    """Before: `flights: list[any]`, so no gold booking named a flight. Now a record with its fields."""
    tools, _ = read_file(_write(tmp_path, "airline.json", OPENAI_BOOK))
    decl, _ = synthesize(ir.Environment(name="airline", tools=tuple(tools)))
    p = next(p for p in decl.tools[0].params if p.name == "flights")
    ty = p.type.inner if isinstance(p.type, A.OptionalType) else p.type
    assert isinstance(ty, A.ListType) and isinstance(ty.item, A.NamedType), ty
    rec = decl.record(ty.item.name)
    assert rec is not None and {f.name for f in rec.fields} == {"flight_number", "date"}


# OpenAPI 3.1: oneOf of two objects that share one field (compatible: merged), a nullable anyOf of an
# object, and an anyOf whose branches give one field two types (incompatible: the richest wins)
OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "Pets", "version": "1"},
    "paths": {
        "/pets": {
            "post": {
                "operationId": "create_pet",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "pet": {
                                        "oneOf": [
                                            {"type": "object", "properties": {"name": {"type": "string"}, "barks": {"type": "boolean"}}, "required": ["name", "barks"]},
                                            {"type": "object", "properties": {"name": {"type": "string"}, "meows": {"type": "boolean"}}, "required": ["name"]},
                                        ]
                                    },
                                    "owner": {"anyOf": [{"type": "null"}, {"$ref": "#/components/schemas/Owner"}]},
                                    "tag": {
                                        "anyOf": [
                                            {"type": "object", "properties": {"id": {"type": "integer"}}},
                                            {"type": "object", "properties": {"id": {"type": "string"}, "label": {"type": "string"}}},
                                        ]
                                    },
                                    "note": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                                },
                            }
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
    "components": {"schemas": {"Owner": {"type": "object", "properties": {"owner_name": {"type": "string"}, "phone": {"type": "string"}}}}},
}


def test_openapi_oneof_compatible_objects_merge(tmp_path):
    tools, diags = read_file(_write(tmp_path, "pets.json", OPENAPI))
    assert not [d for d in diags if d.is_error]
    body = tools[0].param("body") or tools[0].params[0]
    props = _fields(body.type) if body.type.kind == "object" else {p.name: p for p in tools[0].params}
    pet = props["pet"].type
    assert pet.kind == "object"
    f = _fields(pet)
    assert list(f) == ["name", "barks", "meows"]
    # required only where every branch requires it
    assert f["name"].required and not f["barks"].required and not f["meows"].required


def test_openapi_nullable_ref_and_incompatible_branches(tmp_path):
    tools, _ = read_file(_write(tmp_path, "pets.json", OPENAPI))
    body = tools[0].param("body") or tools[0].params[0]
    props = _fields(body.type) if body.type.kind == "object" else {p.name: p for p in tools[0].params}
    owner = props["owner"].type
    assert owner.kind == "object" and owner.nullable and set(_fields(owner)) == {"owner_name", "phone"}
    tag = props["tag"].type  # `id` is an integer in one branch, a string in the other
    assert tag.kind == "object" and set(_fields(tag)) == {"id", "label"} and _fields(tag)["id"].type.kind == "string"
    note = props["note"].type  # no object branch: still a union of scalars
    assert note.kind == "union" and [v.kind for v in note.variants] == ["string", "integer"]


MCP = {
    "tools": [
        {
            "name": "send_message",
            "description": "Send a message.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "content": {
                        "oneOf": [
                            {"type": "string"},
                            {"type": "object", "properties": {"text": {"type": "string"}, "mime_type": {"type": "string"}}, "required": ["text"]},
                            {},
                        ]
                    }
                },
            },
        }
    ]
}


def test_mcp_object_branch_beats_any_and_scalars(tmp_path):
    tools, diags = read_file(_write(tmp_path, "chat.json", MCP))
    assert not [d for d in diags if d.is_error]
    t = tools[0].param("content").type
    assert t.kind == "object"
    assert [(f.name, f.required) for f in t.fields] == [("text", True), ("mime_type", False)]


# --------------------------------------------------------------------------- recursive schemas


@pytest.fixture(scope="module")
def recursive_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("rec") / "build"
    res = compile_build(CompileOptions(inputs=[FIXTURE], out=out, seed=0, tasks_per_env=40))
    return out, res


def test_recursive_spec_compiles_with_tasks_that_replay(recursive_build):
    out, res = recursive_build
    assert [str(d.message) for d in res.diagnostics if d.is_error] == []
    e = json.loads((out / "manifest.json").read_text())["envs"]["nodes"]
    assert e["task_count"] >= 5, e["stats"]  # one ask per task in an owner's env: the rest are dictated calls, refused
    assert e["oracle"]["pass_rate"] == 1.0 and e["oracle"]["passed"] == e["task_count"], e["oracle"]
    assert (out / "tasks" / "nodes.jsonl").read_text().count("\n") == e["task_count"]


def test_recursive_records_refer_to_themselves(recursive_build):
    out, _ = recursive_build
    src = (out / "src" / "nodes" / "env.forge").read_text()
    assert "children: list[NodeInfo]?" in src  # Node.children: array of Node
    assert "children: list[NewNode]?" in src  # NewNode.children: array of NewNode


def test_recursive_tool_schema_uses_defs(recursive_build):
    out, _ = recursive_build
    ns: dict = {}
    exec(compile((out / "envs" / "nodes" / "env.py").read_text(), "env.py", "exec"), ns)  # noqa: S102 - our own build output
    create = next(t for t in ns["TOOLS"] if t["function"]["name"] == "create_node")["function"]["parameters"]
    new_node = create["$defs"]["NewNode"]
    assert new_node["properties"]["children"]["items"] == {"$ref": "#/$defs/NewNode"}
    assert set(new_node["properties"]) == {"title", "children"}
    # json.dumps would loop forever on a cyclic dict: the schema is a finite tree
    assert "#/$defs/NewNode" in json.dumps(ns["TOOLS"])


def _depth(node: dict) -> int:
    kids = node.get("children") or []
    return 1 + max((_depth(k) for k in kids), default=0)


def test_recursive_state_is_nested_and_bounded(recursive_build):
    out, _ = recursive_build
    nodes = json.loads((out / "states" / "nodes.json").read_text())["entities"]["Node"]
    depths = [_depth(n) for n in nodes.values()]
    # entity -> list[NodeInfo] -> list[NodeInfo] -> cut (values.MAX_RECURSION = 2): depth 3 at most
    assert max(depths) == 3 and min(depths) >= 1
    for n in nodes.values():
        for k in n.get("children") or []:
            assert isinstance(k, dict) and isinstance(k["title"], str)
