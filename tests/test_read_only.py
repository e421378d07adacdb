"""`readOnly` properties are what the server sets: never a tool input, still part of what it returns.

OpenAPI 3 (Schema Object, `readOnly`): such a property "SHOULD NOT be sent as part of the
request". Review 10 found tasks that had a user set a cycle's issue counts and an issue type's
`is_default`, both `readOnly` in the Plane MCP server's input schemas.
"""

from __future__ import annotations

import json

from forgec.frontends import read_paths

CYCLE = {"type": "object", "required": ["name"], "properties": {
    "id": {"type": "string", "readOnly": True},
    "name": {"type": "string"},
    "backlog_issues": {"type": "integer", "readOnly": True},
    "owner": {"allOf": [{"$ref": "#/components/schemas/Ref"}], "readOnly": True},
    "labels": {"type": "array", "items": {"type": "object", "properties": {
        "name": {"type": "string"}, "created_at": {"type": "string", "readOnly": True}}}},
}}

SPEC = {
    "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
    "components": {"schemas": {"Cycle": CYCLE, "Ref": {"type": "object", "properties": {"id": {"type": "string"}}}}},
    "paths": {"/cycles": {"post": {
        "operationId": "createCycle", "summary": "Create a cycle",
        "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Cycle"}}}},
        "responses": {"201": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Cycle"}}}}},
    }}},
}

MCP = {"tools": [{"name": "update_cycle", "description": "Update a cycle.", "inputSchema": {
    "type": "object", "required": ["cycle_id"], "properties": {
        "cycle_id": {"type": "string"}, "name": {"type": "string"},
        "progress": {"type": "number", "readOnly": True}}}}]}


def _fields(t) -> list[str]:
    return [f.name for f in t.fields]


def test_openapi_request_body_drops_read_only_at_every_depth(tmp_path):
    p = tmp_path / "api.json"
    p.write_text(json.dumps(SPEC))
    (env,), diags = read_paths([p])
    tool, = env.tools
    body, = tool.params
    assert _fields(body.type) == ["name", "labels"]
    assert _fields(body.type.fields[1].type.items) == ["name"]
    # the response still says what the server keeps
    assert _fields(tool.returns) == ["id", "name", "backlog_issues", "owner", "labels"]
    assert [f.read_only for f in tool.returns.fields] == [True, False, True, True, False]


def test_mcp_input_schema_drops_a_read_only_parameter(tmp_path):
    p = tmp_path / "tools_list.json"
    p.write_text(json.dumps(MCP))
    (env,), diags = read_paths([p])
    assert [q.name for q in env.tools[0].params] == ["cycle_id", "name"]
