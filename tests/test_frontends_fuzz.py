"""Random and mutated JSON/YAML thrown at every frontend: the only outcomes are IR or diagnostics."""

from __future__ import annotations

import copy
import json

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import CORPUS, EXAMPLES
from forgec.diagnostics import INTERNAL, Diagnostic
from forgec.frontends import bfcl, mcp, openai, openapi
from forgec.frontends.detect import read_doc
from forgec.frontends.loader import Doc, load_text
from forgec.ir import Environment, Tool

SEEDS = [
    json.loads((CORPUS / "tau_bench_airline" / "tools.json").read_text()),
    json.loads((CORPUS / "mcp_server_git" / "tools_list.json").read_text()),
    json.loads((CORPUS / "mcp_server_time" / "tools_list.json").read_text()),
    yaml.safe_load((CORPUS / "openapi_jupyter_server" / "api.yaml").read_text()),
    json.loads((EXAMPLES / "helpdesk.json").read_text()),
    yaml.safe_load((EXAMPLES / "bookstore.yaml").read_text()),
    [{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "tuple", "items": [{"type": "float"}]}}}, "response": {"type": "any"}}],
]
KEYS = ["type", "properties", "items", "$ref", "anyOf", "oneOf", "allOf", "enum", "required", "name", "parameters", "inputSchema",
        "outputSchema", "function", "tools", "paths", "openapi", "swagger", "schema", "in", "responses", "requestBody", "content", "nullable"]

scalars = st.none() | st.booleans() | st.integers(-3, 300) | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    ["string", "object", "array", "dict", "float", "tuple", "any", "null", "#/", "#/components/schemas/X", "#/$defs/A", "get", "path", "body", ""]) | st.text(max_size=6)
json_values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), kids, max_size=5),
    max_leaves=30,
)


def _paths(v, prefix=()):
    yield prefix
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, prefix + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _paths(x, prefix + (i,))


@st.composite
def mutated(draw):
    doc = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        paths = list(_paths(doc))
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        action = draw(st.sampled_from(["replace", "delete", "ref"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "ref":
            parent[path[-1]] = {"$ref": draw(st.sampled_from(["#/", "#/paths", "#", "#/definitions/Kernel", "#/components/schemas/Category", "x.json#/A", "#/a~1b"]))}
        else:
            parent[path[-1]] = draw(json_values)
    return doc


def check(tools, diags) -> None:
    assert all(isinstance(t, Tool) for t in tools)
    assert all(isinstance(d, Diagnostic) for d in diags)
    assert not [d for d in diags if d.code == INTERNAL], [d.message for d in diags if d.code == INTERNAL]
    Environment(name="e", tools=tuple(tools)).model_dump_json()  # the IR always serializes
    for d in diags:
        assert d.span is None or d.span.file


def run_all(data, kind="json") -> None:
    text = json.dumps(data) if kind != "yaml" else yaml.safe_dump(data)
    doc = Doc("fuzz." + kind, text, kind, data)
    diags: list[Diagnostic] = []
    check(read_doc(doc, diags, {}), diags)
    # and each frontend directly, whatever the shape
    items = data if isinstance(data, list) else [data]
    entries = [(x, f"/{i}") for i, x in enumerate(items)]
    for reader in (openai.read_items, mcp.read_items, bfcl.read_records):
        diags = []
        check(reader(doc, entries, diags, {}), diags)
    if isinstance(data, dict):
        diags = []
        check(openapi.read_document(doc, data, diags, {}), diags)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_random_json_values(data):
    run_all(data)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated(), st.sampled_from(["json", "yaml"]))
def test_mutated_real_docs(data, kind):
    run_all(data, kind)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([0, 1, 3, 4, 5]), st.integers(0, 10_000), st.integers(0, 40), st.text(max_size=8), st.sampled_from([".json", ".yaml", ".jsonl", ""]))
def test_mutated_text(seed, at, cut, insert, suffix):
    """Byte-level damage (cuts and insertions) at a random place: parse errors or IR, never a crash."""
    data = SEEDS[seed]
    text = json.dumps(data, indent=1) if seed not in (3, 5) else yaml.safe_dump(data)
    at = at % (len(text) + 1)
    damaged = text[:at] + insert + text[at + cut :]
    doc, diags = load_text("fuzz" + suffix, damaged, suffix)
    tools = []
    if doc is not None:
        tools = read_doc(doc, diags, {})
    check(tools, diags)
    for d in diags:
        if d.code in ("malformed-json", "malformed-yaml"):
            assert d.span.line >= 1 and d.span.col >= 1
            assert d.span.line <= damaged.count("\n") + 2
