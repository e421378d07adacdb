"""The frontends against real, public tool docs in tests/corpus/core (counts and types checked by hand)."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import CORPUS
from forgec.frontends import read_file, read_paths
from forgec.ir import Environment

EXPECTED = {
    "tau_bench_retail": (16, "openai"),
    "tau_bench_airline": (14, "openai"),
    "mcp_server_git": (12, "mcp"),
    "mcp_server_time": (2, "mcp"),
    "mcp_server_sqlite": (6, "mcp"),
    "mcp_server_filesystem": (14, "mcp"),  # counts from tests/corpus/core/README.md
    "mcp_server_memory": (9, "mcp"),
    "openapi_jupyter_server": (32, "swagger"),
}


@pytest.fixture(scope="module")
def envs() -> dict[str, Environment]:
    got, diags = read_paths([CORPUS])
    assert diags == []
    return {e.name: e for e in got}


def test_every_corpus_tool_count_and_format(envs):
    assert sorted(envs) == sorted(EXPECTED)
    for name, (count, fmt) in EXPECTED.items():
        assert len(envs[name].tools) == count, name
        assert {t.format for t in envs[name].tools} == {fmt}


def test_counts_match_an_independent_count(corpus):
    """Count tools/operations straight from the raw data with json/yaml, not through forgec."""
    for name in EXPECTED:
        folder = corpus / name
        (path,) = list(folder.iterdir())
        if path.suffix == ".yaml":
            doc = yaml.safe_load(path.read_text())
            n = sum(1 for item in doc["paths"].values() for m in item if m in ("get", "put", "post", "delete", "patch", "head", "options"))
        else:
            doc = json.loads(path.read_text())
            n = len(doc["tools"] if isinstance(doc, dict) else doc)
        tools, diags = read_file(path)
        assert diags == []
        assert len(tools) == n == EXPECTED[name][0]


def test_naming_folder_vs_file_vs_corpus(corpus):
    one, _ = read_paths([corpus / "tau_bench_airline"])
    direct, _ = read_paths([corpus / "tau_bench_airline" / "tools.json"])
    assert [e.name for e in one] == [e.name for e in direct] == ["tau_bench_airline"]
    renamed, _ = read_paths([corpus / "mcp_server_time"], env_name="Clock-Tools")
    assert [e.name for e in renamed] == ["clock_tools"]


def test_airline_book_reservation_types(envs):
    t = envs["tau_bench_airline"].tool("book_reservation")
    assert [p.name for p in t.params] == [
        "user_id", "origin", "destination", "flight_type", "cabin", "flights",
        "passengers", "payment_methods", "total_baggages", "nonfree_baggages", "insurance",
    ]
    assert all(p.required for p in t.params)
    pas = t.param("passengers").type
    assert pas.kind == "array" and pas.items.kind == "object"
    assert [(f.name, f.type.kind, f.required) for f in pas.items.fields] == [
        ("first_name", "string", True), ("last_name", "string", True), ("dob", "string", True)]
    cabin = t.param("cabin").type
    assert cabin.kind == "enum" and cabin.values == ("basic_economy", "economy", "business")
    assert t.param("total_baggages").type.kind == "integer"
    # positions: the key "user_id" sits on line 10, column 11 of the file (checked in an editor)
    src = t.param("user_id").source
    assert (src.line, src.col, src.pointer) == (10, 11, "/0/function/parameters/properties/user_id")


def test_airline_tools_without_params_and_numbers(envs):
    airline = envs["tau_bench_airline"]
    assert airline.tool("list_all_airports").params == ()
    assert airline.tool("send_certificate").param("amount").type.kind == "number"


def test_retail_types(envs):
    retail = envs["tau_bench_retail"]
    items = retail.tool("exchange_delivered_order_items").param("item_ids").type
    assert items.kind == "array" and items.items.kind == "string"
    reason = retail.tool("cancel_pending_order").param("reason").type
    assert reason.kind == "enum" and reason.values == ("no longer needed", "ordered by mistake")
    assert retail.tool("list_all_product_types").params == ()


def test_mcp_git_anyof_null_becomes_nullable(envs):
    git = envs["mcp_server_git"]
    log = git.tool("git_log")
    start = log.param("start_timestamp")
    assert start.type.kind == "string" and start.type.nullable
    assert start.required is False and start.has_default and start.default is None
    mc = log.param("max_count")
    assert (mc.type.kind, mc.default, mc.required) == ("integer", 10, False)
    files = git.tool("git_add").param("files").type
    assert files.kind == "array" and files.items.kind == "string"
    assert git.tool("git_reset").annotations == {
        "readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False}
    assert git.tool("git_status").annotations["readOnlyHint"] is True


def test_mcp_time_output_schema_with_defs_ref(envs):
    conv = envs["mcp_server_time"].tool("convert_time")
    ret = conv.returns
    assert ret.kind == "object"
    assert [(f.name, f.required) for f in ret.fields] == [("source", True), ("target", True), ("time_difference", True)]
    source = ret.fields[0].type  # "$ref": "#/$defs/TimeResult" inside outputSchema
    assert source.kind == "object"
    assert [(f.name, f.type.kind) for f in source.fields] == [
        ("timezone", "string"), ("datetime", "string"), ("day_of_week", "string"), ("is_dst", "boolean")]


def test_mcp_sqlite(envs):
    sqlite = envs["mcp_server_sqlite"]
    assert sqlite.tool("list_tables").params == ()
    assert sqlite.tool("read_query").param("query").required
    assert sqlite.tool("read_query").annotations == {}


def test_swagger_operations_named_from_method_and_path(envs):
    j = envs["openapi_jupyter_server"]
    t = j.tool("get_api_contents_path")
    assert (t.http_method, t.http_path) == ("GET", "/api/contents/{path}")
    assert [(p.name, p.location, p.required) for p in t.params] == [
        ("path", "path", True), ("type", "query", False), ("format", "query", False),
        ("content", "query", False), ("hash", "query", False)]
    assert j.tool("get_api_resolve_path").http_path == "/api/resolvePath"
    assert j.tool("get_api").http_path == "/api/"
    assert j.tool("get_api_spec_yaml").returns.format == "binary"  # `type: file`
    names = [t.name for t in j.tools]
    assert len(set(names)) == 32


def test_swagger_refs_resolved(envs):
    j = envs["openapi_jupyter_server"]
    # #/parameters/kernel -> kernel_id: string<uuid>, in path
    kid = j.tool("get_api_kernels_kernel_id").param("kernel_id")
    assert (kid.type.kind, kid.type.format, kid.location, kid.required) == ("string", "uuid", "path", True)
    # 200 response: $ref #/definitions/Contents
    ret = j.tool("get_api_contents_path").returns
    assert ret.kind == "object"
    fields = {f.name: f for f in ret.fields}
    assert fields["type"].type.values == ("directory", "file", "notebook")
    assert fields["writable"].type.kind == "boolean" and fields["writable"].required
    assert fields["size"].type.kind == "integer" and not fields["size"].required
    # a nested $ref: Session.kernel -> Kernel
    sess = j.tool("get_api_sessions_session").returns
    kernel = {f.name: f for f in sess.fields}["kernel"].type
    assert {f.name for f in kernel.fields} == {"id", "name", "last_activity", "connections", "execution_state"}
    # body parameters become `body`; 201 response used when there is no 200
    post = j.tool("post_api_kernels")
    body = post.param("body")
    assert body.location == "body" and body.type.kind == "object"
    assert [(f.name, f.required) for f in body.type.fields] == [("name", True), ("path", False)]
    assert post.returns.kind == "object" and {f.name for f in post.returns.fields} >= {"id", "name"}
    # additionalProperties -> object whose `items` is the value type (a map)
    specs = j.tool("get_api_kernelspecs").returns
    ks = {f.name: f for f in specs.fields}["kernelspecs"].type
    assert ks.kind == "object" and ks.fields == () and ks.items.kind == "object"
    # 204-only operations return nothing
    assert j.tool("delete_api_kernels_kernel_id").returns is None


def test_swagger_positions_point_into_yaml(envs):
    j = envs["openapi_jupyter_server"]
    t = j.tool("get_api_kernels_kernel_id")
    # `get:` of /api/kernels/{kernel_id} is at line 518, column 5 of api.yaml
    assert (t.source.line, t.source.col) == (518, 5)
    assert t.source.pointer == "/paths/~1api~1kernels~1{kernel_id}/get"
