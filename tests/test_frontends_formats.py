"""Each format's features (BFCL, OpenAPI 3.0/3.1, Swagger 2.0, MCP, OpenAI), naming, and positions."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from forgec.frontends import env_name_for, normalize_env_name, read_file, read_paths
from forgec.frontends.loader import JsonLocator, escape_pointer_token, load_text, unescape_pointer_token


def write(tmp_path: Path, name: str, content: str) -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(content, encoding="utf-8")
    return p


# --------------------------------------------------------------------------- BFCL


BFCL = "\n".join(
    json.dumps(r)
    for r in [
        {
            "id": "simple_0",
            "question": [[{"role": "user", "content": "area of a triangle"}]],
            "function": [
                {
                    "name": "calculate_triangle_area",
                    "description": "Calculate the area of a triangle given its base and height.",
                    "parameters": {
                        "type": "dict",
                        "properties": {
                            "base": {"type": "integer", "description": "The base of the triangle."},
                            "height": {"type": "float", "description": "The height of the triangle."},
                            "unit": {"type": "string", "description": "Unit of measure.", "default": "units"},
                            "corner": {"type": "tuple", "items": {"type": "integer"}, "description": "A corner (x, y)."},
                            "extra": {"type": "any", "description": "Anything."},
                            "options": {"type": "dict", "properties": {"round": {"type": "boolean"}}, "required": ["round"]},
                        },
                        "required": ["base", "height"],
                    },
                    "response": {"name": "area", "type": "float", "description": "The area."},
                }
            ],
        },
        # the same function again (BFCL repeats docs across test entries) plus a new one
        {
            "id": "multiple_1",
            "function": [
                {
                    "name": "calculate_triangle_area",
                    "description": "Calculate the area of a triangle given its base and height.",
                    "parameters": {
                        "type": "dict",
                        "properties": {
                            "base": {"type": "integer", "description": "The base of the triangle."},
                            "height": {"type": "float", "description": "The height of the triangle."},
                            "unit": {"type": "string", "description": "Unit of measure.", "default": "units"},
                            "corner": {"type": "tuple", "items": {"type": "integer"}, "description": "A corner (x, y)."},
                            "extra": {"type": "any", "description": "Anything."},
                            "options": {"type": "dict", "properties": {"round": {"type": "boolean"}}, "required": ["round"]},
                        },
                        "required": ["base", "height"],
                    },
                    "response": {"name": "area", "type": "float", "description": "The area."},
                },
                {"name": "math.hypot", "description": "Euclidean norm.", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}, "y": {"type": "float"}}, "required": ["x", "y"]}},
            ],
        },
    ]
) + "\n"


def test_bfcl_jsonl_types_response_and_dedupe(tmp_path):
    p = write(tmp_path, "bfcl_simple.jsonl", BFCL)
    tools, diags = read_file(p)
    assert [d.code for d in diags] == ["renamed-tool"]  # math.hypot -> math_hypot
    assert [t.name for t in tools] == ["calculate_triangle_area", "math_hypot"]
    t = tools[0]
    assert t.format == "bfcl"
    kinds = {p.name: (p.type.kind, p.required) for p in t.params}
    assert kinds == {
        "base": ("integer", True),
        "height": ("number", True),
        "unit": ("string", False),
        "corner": ("array", False),
        "extra": ("any", False),
        "options": ("object", False),
    }
    assert t.param("corner").type.items.kind == "integer"
    assert t.param("unit").default == "units" and t.param("unit").has_default
    assert [(f.name, f.type.kind, f.required) for f in t.param("options").type.fields] == [("round", "boolean", True)]
    assert t.returns.kind == "number" and t.returns.description == "The area."
    # JSON Lines positions: line 1 holds record 0; the key "base" of it
    assert t.param("base").source.line == 1
    assert tools[1].source.line == 2


def test_bfcl_tuple_with_positional_items(tmp_path):
    p = write(tmp_path, "f.jsonl", json.dumps({"name": "f", "parameters": {"type": "dict", "properties": {"pt": {"type": "tuple", "items": [{"type": "integer"}, {"type": "string"}]}}}}) + "\n")
    tools, diags = read_file(p)
    assert diags == []
    pt = tools[0].param("pt").type
    assert pt.kind == "array" and pt.items.kind == "union" and [v.kind for v in pt.items.variants] == ["integer", "string"]


# --------------------------------------------------------------------------- OpenAPI 3


OPENAPI30 = """
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, required: true, schema: {type: string}}
      - {name: X-Request-Id, in: header, schema: {type: string, format: uuid}}
    get:
      operationId: getPet
      parameters:
        - {name: fields, in: query, schema: {type: array, items: {type: string}}}
        - {name: session, in: cookie, schema: {type: string}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pet"}
    put:
      operationId: put-pet
      requestBody: {$ref: "#/components/requestBodies/PetBody"}
      responses:
        default:
          description: the pet
          content:
            application/vnd.api+json:
              schema: {$ref: "#/components/schemas/Pet"}
  /trees:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Node"}
      responses:
        "201":
          description: created
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Node"}
components:
  requestBodies:
    PetBody:
      required: true
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Pet"}
  schemas:
    Pet:
      allOf:
        - {$ref: "#/components/schemas/Named"}
        - type: object
          required: [tag]
          properties:
            tag: {type: string, nullable: true}
            kind: {type: string, enum: [cat, dog, null]}
            owner: {$ref: "#/components/schemas/Owner"}
    Named:
      type: object
      required: [name]
      properties:
        name: {type: string}
    Owner:
      type: object
      properties:
        pets: {type: array, items: {$ref: "#/components/schemas/Pet"}}
    Node:
      type: object
      properties:
        value: {type: integer}
        children: {type: array, items: {$ref: "#/components/schemas/Node"}}
"""


def test_openapi30_features(tmp_path):
    p = write(tmp_path, "petstore.yaml", OPENAPI30)
    envs, diags = read_paths([p])
    assert [d.code for d in diags] == ["renamed-tool"]  # put-pet
    (env,) = envs
    assert env.name == "petstore"
    assert [t.name for t in env.tools] == ["getPet", "put_pet", "post_trees"]
    get = env.tool("getPet")
    assert get.format == "openapi" and get.http_method == "GET" and get.http_path == "/pets/{petId}"
    assert [(p.name, p.location, p.required) for p in get.params] == [
        ("petId", "path", True), ("x_request_id", "header", False), ("fields", "query", False), ("session", "cookie", False)]
    assert get.param("x_request_id").type.format == "uuid"
    pet = get.returns
    fields = {f.name: f for f in pet.fields}
    assert list(fields) == ["name", "tag", "kind", "owner"]  # allOf merged in order
    assert fields["name"].required and fields["tag"].required and not fields["kind"].required
    assert fields["tag"].type.nullable and fields["tag"].type.kind == "string"
    assert fields["kind"].type.kind == "enum" and fields["kind"].type.values == ("cat", "dog") and fields["kind"].type.nullable
    # Pet -> Owner -> Pet: the inner Pet is a named ref, its expansion stored in definitions
    inner = {f.name: f for f in fields["owner"].type.fields}["pets"].type.items
    assert inner.kind == "ref" and inner.ref == "Pet"
    assert env.definitions["Pet"].kind == "object"
    put = env.tool("put_pet")
    body = put.param("body")
    assert body.location == "body" and body.required and body.type.kind == "object"
    assert put.returns is not None and put.returns.kind == "object"  # `default` + vendor json type
    tree = env.tool("post_trees")
    node = tree.param("body").type
    assert [f.name for f in node.fields] == ["value", "children"]
    assert node.fields[1].type.items == tree.returns.fields[1].type.items
    assert node.fields[1].type.items.kind == "ref" and node.fields[1].type.items.ref == "Node"
    assert [f.name for f in env.definitions["Node"].fields] == ["value", "children"]
    # the IR serializes (recursive schemas did not loop)
    assert json.loads(env.model_dump_json())["name"] == "petstore"


def test_openapi31_type_lists_and_const(tmp_path):
    doc = {
        "openapi": "3.1.0",
        "paths": {
            "/x": {
                "post": {
                    "operationId": "x",
                    "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
                        "a": {"type": ["integer", "null"]},
                        "b": {"type": ["string", "integer"]},
                        "c": {"const": "fixed"},
                        "d": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                        "e": {"anyOf": [{"type": "number", "const": 0}, {"type": "number", "const": 60000}, {"type": "null"}]},
                    }}}}},
                    "responses": {"204": {"description": "none"}},
                }
            }
        },
    }
    p = write(tmp_path, "x.json", json.dumps(doc))
    tools, diags = read_file(p)
    assert diags == []
    f = {x.name: x.type for x in tools[0].param("body").type.fields}
    assert (f["a"].kind, f["a"].nullable) == ("integer", True)
    assert f["b"].kind == "union" and [v.kind for v in f["b"].variants] == ["string", "integer"]
    assert f["c"].kind == "enum" and f["c"].values == ("fixed",)
    assert f["d"].kind == "union"
    # UniFi Protect's activationDelay: a choice among constants is an enum of them (not `any`, filled with a topic)
    assert (f["e"].kind, f["e"].values, f["e"].nullable) == ("enum", (0, 60000), True)
    assert tools[0].returns is None


def test_swagger_form_data_becomes_body(tmp_path):
    doc = "swagger: '2.0'\npaths:\n  /upload:\n    post:\n      operationId: upload\n      parameters:\n        - {name: file, in: formData, type: file, required: true}\n        - {name: note, in: formData, type: string}\n      responses:\n        200: {description: ok, schema: {type: string}}\n"
    tools, diags = read_file(write(tmp_path, "u.yaml", doc))
    assert diags == []
    body = tools[0].param("body")
    assert [(f.name, f.type.kind, f.type.format, f.required) for f in body.type.fields] == [("file", "string", "binary", True), ("note", "string", None, False)]
    assert body.required and tools[0].returns.kind == "string"


# --------------------------------------------------------------------------- MCP / OpenAI shapes


def test_mcp_jsonrpc_wrapper_and_single_tool(tmp_path):
    rpc = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}]}}
    tools, diags = read_file(write(tmp_path, "rpc.json", json.dumps(rpc)))
    assert diags == [] and tools[0].format == "mcp" and tools[0].param("text").required
    assert tools[0].source.pointer == "/result/tools/0"
    one = {"name": "ping", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
    tools, diags = read_file(write(tmp_path, "ping.json", json.dumps(one)))
    assert diags == [] and tools[0].annotations == {"readOnlyHint": True}


def test_openai_shapes(tmp_path):
    fn = {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}, "returns": {"type": "array", "items": {"type": "number"}}}
    for i, data in enumerate([fn, {"type": "function", "function": fn}, {"tools": [{"type": "function", "function": fn}]}, {"functions": [fn]}, [fn]]):
        tools, diags = read_file(write(tmp_path, f"s{i}.json", json.dumps(data)))
        assert diags == [], data
        assert [(t.name, t.format, t.returns.short()) for t in tools] == [("f", "openai", "array[number]")]


def test_openai_yaml_and_jsonl_files(tmp_path):
    y = write(tmp_path, "a.yml", "- type: function\n  function:\n    name: g\n    parameters: {type: object, properties: {q: {type: string}}, required: [q]}\n")
    tools, diags = read_file(y)
    assert diags == [] and tools[0].param("q").required
    assert (tools[0].param("q").source.line, tools[0].param("q").source.col) == (4, 45)  # the flow key `q`
    j = write(tmp_path, "b.jsonl", json.dumps({"type": "function", "function": {"name": "h"}}) + "\n")
    tools, diags = read_file(j)
    assert diags == [] and tools[0].format == "openai"


# --------------------------------------------------------------------------- naming


def test_env_names():
    assert normalize_env_name("My-Tools v2") == "my_tools_v2"
    assert normalize_env_name("2024 API") == "env_2024_api"
    assert normalize_env_name("class") == "class_"
    assert normalize_env_name("***") == ""
    assert env_name_for(Path("/x/shop/openapi.yaml")) == "shop"
    assert env_name_for(Path("/x/shop/swagger.json")) == "shop"
    assert env_name_for(Path("/x/shop/functions.jsonl")) == "shop"
    assert env_name_for(Path("/x/shop/Store API.yaml")) == "store_api"


def test_folder_mixing_formats(tmp_path):
    write(tmp_path, "zoo.yaml", "openapi: 3.0.0\npaths:\n  /a:\n    get: {responses: {}}\n")
    write(tmp_path, "alpha.jsonl", json.dumps({"name": "f", "parameters": {"type": "dict", "properties": {}}}) + "\n")
    write(tmp_path, "bank/tools.json", json.dumps([{"name": "pay", "parameters": {}}]))
    write(tmp_path, "bank/extra/more.yaml", "tools:\n  - name: audit\n    inputSchema: {type: object}\n")
    envs, diags = read_paths([tmp_path])
    assert diags == []
    assert [(e.name, [t.name for t in e.tools], sorted({t.format for t in e.tools})) for e in envs] == [
        ("alpha", ["f"], ["bfcl"]),
        ("bank", ["audit", "pay"], ["mcp", "openai"]),  # files sorted: extra/more.yaml < tools.json
        ("zoo", ["get_a"], ["openapi"]),
    ]
    merged, diags = read_paths([tmp_path], env_name="All")
    assert [(e.name, len(e.tools)) for e in merged] == [("all", 4)]


# --------------------------------------------------------------------------- positions


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=4), kids, max_size=4),
    max_leaves=25,
)


def _at(data, pointer):
    for tok in pointer.split("/")[1:]:
        tok = unescape_pointer_token(tok)
        data = data[int(tok)] if isinstance(data, list) else data[tok]
    return data


def _pointers(v, prefix=""):
    yield prefix
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _pointers(x, prefix + "/" + escape_pointer_token(k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _pointers(x, f"{prefix}/{i}")


@settings(max_examples=150, deadline=None)
@given(json_values, st.sampled_from([None, 2, 0]), st.booleans())
def test_json_positions_agree_with_the_stdlib_decoder(value, indent, ascii_only):
    """Oracle: json.JSONDecoder.raw_decode at each located offset must decode the very key or element."""
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    loc = JsonLocator(text)
    dec = json.JSONDecoder()
    for ptr in _pointers(value):
        start, _end = loc.locate(ptr)
        got, _ = dec.raw_decode(text, start)
        parent_ptr, _, last = ptr.rpartition("/")
        if ptr and isinstance(_at(value, parent_ptr), dict):
            assert got == unescape_pointer_token(last)  # member: offset of the key
        else:
            assert got == _at(value, ptr)  # element (or root): offset of the value
    assert loc.locate("/nope/0") is None or isinstance(value, dict) and "nope" in value


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.integers(), max_size=3), min_size=1, max_size=4))
def test_yaml_key_positions_point_at_the_key(value):
    """Oracle: in block-style YAML each key starts its own `key:` at the reported line:col."""
    text = yaml.safe_dump(value, default_flow_style=False)
    doc, diags = load_text("x.yaml", text, ".yaml")
    assert diags == []
    lines = text.splitlines()
    for k, inner in value.items():
        for ptr, key in [("/" + k, k)] + [(f"/{k}/{k2}", k2) for k2 in inner]:
            line, col, _, _ = doc.position(ptr)
            rest = lines[line - 1][col - 1 :]
            assert rest.startswith(key + ":") or rest.startswith(f"'{key}':")  # yes/no/on/off get quoted


def test_openapi_undeclared_path_param_and_content_param(tmp_path):
    doc = (
        "openapi: 3.0.0\n"
        "paths:\n"
        "  /shelves/{shelf_id}/books:\n"
        "    get:\n"
        "      operationId: list_shelf_books\n"
        "      parameters:\n"
        "        - name: filter\n"
        "          in: query\n"
        "          content:\n"
        "            application/json:\n"
        "              schema: {type: object, properties: {genre: {type: string}}}\n"
        "      responses: {}\n"
    )
    p = write(tmp_path, "shelves.yaml", doc)
    tools, diags = read_file(p)
    assert [(d.code, str(d.span)) for d in diags] == [("undeclared-path-param", f"{p}:4:5")]
    t = tools[0]
    assert [(x.name, x.location, x.required, x.type.kind) for x in t.params] == [
        ("filter", "query", False, "object"), ("shelf_id", "path", True, "string")]


def test_bfcl_json_file_holding_json_lines(tmp_path):
    """BFCL ships `BFCL_v3_simple.json` files that are really JSON Lines."""
    p = write(tmp_path, "BFCL_v3_simple.json", BFCL)
    envs, diags = read_paths([p])
    assert [d.code for d in diags] == ["renamed-tool"]
    assert envs[0].name == "bfcl_v3_simple" and [t.format for t in envs[0].tools] == ["bfcl", "bfcl"]


def test_yaml_in_a_json_named_file_is_still_read(tmp_path):
    p = write(tmp_path, "api.json", "swagger: '2.0'\npaths:\n  /a:\n    get: {responses: {}}\n")
    tools, diags = read_file(p)
    assert diags == [] and [t.name for t in tools] == ["get_a"]
    bad = write(tmp_path, "b.json", "tools: nope: [\n")
    tools, diags = read_file(bad)
    assert [d.code for d in diags] == ["malformed-json"]


def test_a_path_and_a_query_parameter_of_one_name_are_both_kept(tmp_path):
    """OpenAPI tells parameters apart by name and location (overseerr: `language` in the path and in the
    query): both are read, the second as `language_query`, with a warning, not an error that fails the
    compile (issue 20). A name repeated in one location is still dropped."""
    import json as _json

    from forgec.frontends import read_file

    spec = {"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {"/movie/{language}": {"get": {
        "operationId": "getMovie", "responses": {"200": {"description": "ok"}}, "parameters": [
            {"in": "path", "name": "language", "required": True, "schema": {"type": "string"}},
            {"in": "query", "name": "page", "schema": {"type": "number"}},
            {"in": "query", "name": "language", "schema": {"type": "string"}},
            {"in": "query", "name": "page", "schema": {"type": "number"}}]}}}}
    f = tmp_path / "openapi.json"
    f.write_text(_json.dumps(spec))
    tools, diags = read_file(f)
    assert [p.name for p in tools[0].params] == ["language", "page", "language_query"]
    assert [p.location for p in tools[0].params] == ["path", "query", "query"]
    dup = [d for d in diags if d.code == "duplicate-param"]
    assert dup and "passed as `language_query`" in dup[0].message
    assert not any(d.is_error for d in diags)


def test_enum_integers_json_cannot_carry_are_left_out(tmp_path):
    """PhotoPrism's spec (blind pool 21) lists Go's time.Duration constants, min and max int64 among them: no value
    a record holds or a person says, and no literal the env can hold (±2^53 - 1); the env failed to check."""
    big = [-9223372036854775808, 9223372036854775807, 1, 1000, 60000000000]
    doc = {"openapi": "3.0.0", "paths": {"/x": {"post": {"operationId": "x", "requestBody": {"content": {"application/json": {
        "schema": {"type": "object", "properties": {"d": {"type": "integer", "enum": big}}}}}},
        "responses": {"204": {"description": "none"}}}}}}
    tools, diags = read_file(write(tmp_path, "x.json", json.dumps(doc)))
    f = {x.name: x.type for x in tools[0].param("body").type.fields}
    assert f["d"].kind == "enum" and f["d"].values == (1, 1000, 60000000000)
