"""Bad input: every problem is a diagnostic at an exact file:line:col (positions counted by hand)."""

from __future__ import annotations

from pathlib import Path

from forgec.diagnostics import Severity, render
from forgec.frontends import read_file, read_paths


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def only(diags, code=None):
    assert len(diags) == 1, [str(d) for d in diags]
    d = diags[0]
    if code:
        assert d.code == code, d
    return d


def loc(d) -> str:
    return str(d.span)


def test_malformed_json_uses_parser_position(tmp_path):
    p = write(tmp_path, "t.json", '{\n  "tools": [\n    {"name": "a", }\n  ]\n}\n')
    tools, diags = read_file(p)
    d = only(diags, "malformed-json")
    assert tools == []
    assert loc(d) == f"{p}:3:19"  # the `}` after the trailing comma
    assert "Expecting property name" in d.message
    full = render(diags, "full")
    assert '3 |     {"name": "a", }' in full and "  |                   ^" in full


def test_malformed_yaml_uses_parser_position(tmp_path):
    p = write(tmp_path, "api.yaml", "openapi: 3.0.0\nkey: value: other\n")
    _, diags = read_file(p)
    d = only(diags, "malformed-yaml")
    assert loc(d) == f"{p}:2:11"  # the second `:`
    assert "mapping values are not allowed" in d.message


def test_malformed_jsonl_reports_the_file_line(tmp_path):
    p = write(tmp_path, "f.jsonl", '{"name": "a", "parameters": {}}\n\n{"name": "b", "parameters": {]}\n')
    _, diags = read_file(p)
    d = only(diags, "malformed-json")
    assert loc(d) == f"{p}:3:30"


def test_empty_file(tmp_path):
    p = write(tmp_path, "empty.json", "  \n\n")
    _, diags = read_file(p)
    assert loc(only(diags, "empty-file")) == f"{p}:1:1"


def test_not_utf8_points_at_first_bad_byte(tmp_path):
    p = write(tmp_path, "latin.json", b'[\n  {"name": "caf\xe9"}\n]\n')
    _, diags = read_file(p)
    d = only(diags, "not-utf8")
    # line 2 is `  {"name": "caf\xe9"}`: the byte 0xe9 is the 16th character
    assert loc(d) == f"{p}:2:16"
    assert "0xe9" in d.message


def test_unknown_format(tmp_path):
    p = write(tmp_path, "x.json", '{"endpoints": [{"url": "/users"}]}')
    _, diags = read_file(p)
    d = only(diags, "unknown-format")
    assert loc(d) == f"{p}:1:1"
    assert "endpoints" in d.message and d.help


def test_yaml_scalar_is_unknown_format(tmp_path):
    p = write(tmp_path, "notes.yaml", "just some text\n")
    _, diags = read_file(p)
    only(diags, "unknown-format")


def test_duplicate_tool_names(tmp_path):
    p = write(
        tmp_path,
        "dup.json",
        '[\n'
        '  {"type": "function", "function": {"name": "get_user", "parameters": {}}},\n'
        '  {"type": "function", "function": {"name": "get_user", "parameters": {}}}\n'
        ']\n',
    )
    tools, diags = read_file(p)
    assert [t.name for t in tools] == ["get_user"]
    d = only(diags, "duplicate-tool")
    assert d.severity.value == "warning"  # the first is kept and the env builds
    assert loc(d) == f"{p}:3:3"  # the second entry
    assert d.notes == (f"first defined at {p}:2:3",)


def test_duplicates_across_files_of_one_env(tmp_path):
    env = tmp_path / "shop"
    env.mkdir()
    write(env, "a.json", '[{"name": "f", "parameters": {}}]')
    write(env, "b.yaml", "- name: f\n  parameters: {}\n- name: g\n  parameters: {}\n")
    envs, diags = read_paths([tmp_path])
    assert [(e.name, [t.name for t in e.tools]) for e in envs] == [("shop", ["f", "g"])]
    d = only(diags, "duplicate-tool")
    assert loc(d) == f"{env / 'b.yaml'}:1:3"


def test_param_without_type(tmp_path):
    p = write(
        tmp_path,
        "t.json",
        '{"name": "get_user",\n'
        ' "parameters": {"type": "object",\n'
        '                "properties": {"user_id": {"description": "the user"}}}}\n',
    )
    tools, diags = read_file(p)
    d = only(diags, "missing-param-type")
    assert d.severity == Severity.WARNING
    assert loc(d) == f"{p}:3:32"  # the key "user_id"
    assert tools[0].param("user_id").type.kind == "any"


def test_swagger_param_without_type(tmp_path):
    p = write(
        tmp_path,
        "s.yaml",
        "swagger: '2.0'\npaths:\n  /u/{id}:\n    get:\n      parameters:\n        - name: id\n          in: path\n      responses: {}\n",
    )
    tools, diags = read_file(p)
    d = only(diags, "missing-param-type")
    assert loc(d) == f"{p}:6:11"  # the parameter entry `name: id`
    assert tools[0].name == "get_u_id" and tools[0].param("id").required


def test_unresolvable_ref(tmp_path):
    p = write(
        tmp_path,
        "api.yaml",
        "openapi: 3.0.3\n"
        "paths:\n"
        "  /books:\n"
        "    get:\n"
        "      operationId: get_book\n"
        "      responses:\n"
        "        '200':\n"
        "          description: ok\n"
        "          content:\n"
        "            application/json:\n"
        "              schema:\n"
        "                $ref: '#/components/schemas/Bok'\n"
        "components:\n"
        "  schemas:\n"
        "    Book: {type: object}\n",
    )
    tools, diags = read_file(p)
    d = only(diags, "unresolved-ref")
    assert loc(d) == f"{p}:12:17"
    assert "#/components/schemas/Bok" in d.message
    assert tools[0].returns.kind == "any"


def test_external_ref_is_reported(tmp_path):
    p = write(tmp_path, "t.json", '[{"name": "f", "parameters": {"type": "object", "properties": {"x": {"$ref": "other.json#/X"}}}}]')
    _, diags = read_file(p)
    d = only(diags, "unresolved-ref")
    assert "other files" in d.message
    assert loc(d) == f"{p}:1:70"


def test_missing_tool_name(tmp_path):
    p = write(tmp_path, "t.json", '[\n  {"type": "function", "function": {"description": "no name"}}\n]')
    tools, diags = read_file(p)
    assert tools == []
    d = only(diags, "missing-tool-name")
    assert loc(d) == f"{p}:2:24"  # the key "function" of the nameless function object


def test_schema_that_is_a_string(tmp_path):
    p = write(tmp_path, "t.json", '[{"name": "f", "parameters": {"type": "object", "properties": {"x": "string"}}}]')
    tools, diags = read_file(p)
    d = only(diags, "invalid-schema")
    assert loc(d) == f"{p}:1:64"
    assert tools[0].param("x").type.kind == "any"


def test_unknown_type_name(tmp_path):
    p = write(tmp_path, "t.json", '[{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "text"}}}}]')
    _, diags = read_file(p)
    d = only(diags, "unknown-schema-type")
    assert loc(d) == f"{p}:1:70"


def test_renamed_tool_is_a_warning(tmp_path):
    p = write(tmp_path, "t.json", '{"tools": [{"name": "get-user.v2", "inputSchema": {"type": "object"}}]}')
    tools, diags = read_file(p)
    assert only(diags, "renamed-tool").severity == Severity.WARNING
    assert tools[0].name == "get_user_v2"


def test_path_not_found_and_other_files_still_read(tmp_path):
    write(tmp_path, "good.json", '[{"name": "ok", "parameters": {}}]')
    write(tmp_path, "bad.json", "{")
    write(tmp_path, "empty.yaml", "")
    write(tmp_path, "README.md", "# not a doc")
    envs, diags = read_paths([tmp_path, tmp_path / "missing"])
    assert [(e.name, len(e.tools)) for e in envs] == [("good", 1)]
    assert sorted(d.code for d in diags) == ["empty-file", "malformed-json", "path-not-found"]


def test_folder_without_docs(tmp_path):
    write(tmp_path, "README.md", "# nothing")
    envs, diags = read_paths([tmp_path])
    assert envs == []
    assert only(diags, "no-tool-docs")


def test_empty_tool_list_is_a_warning(tmp_path):
    p = write(tmp_path, "t.json", '{"tools": []}')
    tools, diags = read_file(p)
    assert tools == []
    assert only(diags, "no-tools").severity == Severity.WARNING


def test_deep_nesting_is_a_diagnostic(tmp_path):
    p = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    tools, diags = read_file(p)
    assert tools == [] and len(diags) == 1 and diags[0].is_error


def test_every_frontend_code_is_documented():
    import re

    from forgec.diagnostics import CODES
    from forgec.frontends import codes

    mine = {c.code: c for c in CODES.values() if c.area == "frontends"}
    assert len(mine) >= 15
    for c in mine.values():
        assert c.summary and c.why and c.wrong and c.right, c.code
    # every `codes.X` used by the frontends is a registered constant
    src = "".join(p.read_text() for p in Path(codes.__file__).parent.glob("*.py"))
    for name in set(re.findall(r"codes\.([A-Z_0-9]+)", src)):
        assert getattr(codes, name) in CODES, name


def test_yaml_values_become_plain_json(tmp_path):
    p = write(
        tmp_path,
        "d.yaml",
        "tools:\n  - name: f\n    inputSchema:\n      type: object\n      properties:\n"
        "        day: {type: string, default: 2024-05-15, enum: [2024-05-15, 2024-05-16]}\n",
    )
    tools, diags = read_file(p)
    assert diags == []
    day = tools[0].param("day")
    assert day.default == "2024-05-15" and day.type.values == ("2024-05-15", "2024-05-16")


def test_diagnostic_inside_a_defs_target_points_into_the_tool(tmp_path):
    p = write(
        tmp_path,
        "t.json",
        '{"tools": [{"name": "f", "inputSchema": {"type": "object",\n'
        '  "properties": {"a": {"$ref": "#/$defs/A"}},\n'
        '  "$defs": {"A": {"type": "object", "properties": {"x": {"type": "text"}}}}}}]}\n',
    )
    _, diags = read_file(p)
    d = only(diags, "unknown-schema-type")
    assert d.span.pointer == "/tools/0/inputSchema/$defs/A/properties/x/type"
    assert loc(d) == f"{p}:3:58"


def test_ref_fanout_is_bounded(tmp_path, monkeypatch):
    """A cycle of schemas each referring to the next twice would expand 2**n times without a bound."""
    import json as _json

    from forgec.frontends import schema as schema_mod

    monkeypatch.setattr(schema_mod, "MAX_NODES", 5_000)  # the real bound, scaled down for speed

    n = 30
    defs = {f"S{i}": {"type": "object", "properties": {"a": {"$ref": f"#/$defs/S{(i + 1) % n}"}, "b": {"$ref": f"#/$defs/S{(i + 1) % n}"}}} for i in range(n)}
    schema = {"type": "object", "properties": {"root": {"$ref": "#/$defs/S0"}}, "$defs": defs}
    p = write(tmp_path, "t.json", _json.dumps({"tools": [{"name": "f", "inputSchema": schema}]}))
    tools, diags = read_file(p)
    assert [d.code for d in diags] == ["schema-too-deep"]
    assert tools[0].param("root").type.kind == "object"
    assert len(tools[0].model_dump_json()) < 5_000 * 400  # the IR stays proportional to the bound


def test_yaml_alias_bomb_is_bounded(tmp_path):
    lines = ["a0: &a0 {type: string}"]
    lines += [f"a{i}: &a{i} {{type: object, properties: {{x: *a{i - 1}, y: *a{i - 1}}}}}" for i in range(1, 30)]
    lines.append("tools: [{name: f, inputSchema: {type: object, properties: {p: *a29}}}]")
    p = write(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    tools, diags = read_file(p)
    assert [d.code for d in diags] == ["schema-too-deep"]
    assert len(tools[0].model_dump_json()) < 50_000 * 400


def test_required_typo_and_non_object_parameters(tmp_path):
    p = write(
        tmp_path,
        "t.json",
        '[{"name": "f", "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}},\n'
        '                              "required": ["user_id", "userid"]}},\n'
        ' {"name": "g", "parameters": {"type": "string"}}]\n',
    )
    tools, diags = read_file(p)
    assert [(d.code, loc(d)) for d in diags] == [("unknown-required", f"{p}:2:55"), ("invalid-schema", f"{p}:3:31")]
    assert [t.name for t in tools] == ["f", "g"] and tools[1].params == ()


def test_a_damaged_anyof_is_read_without_a_crash():
    """A fuzzed Jupyter spec (CI, test_mutated_real_docs) had `anyOf: 3`: the pattern lookup iterated it and crashed
    with "'int' object is not iterable"; a schema's alternatives that are no list are none."""
    from forgec.frontends.schema import _describe

    assert _describe({"anyOf": 3, "description": "kernel uuid"}) == "kernel uuid"
    assert _describe({"oneOf": [{"type": "string", "pattern": "^k-"}], "description": "kernel"}) == "kernel (pattern: ^k-)"
