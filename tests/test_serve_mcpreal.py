"""The loop `forgec serve` closes: a real MCP server's tools/list in, a served simulator of that server out.

The real `@modelcontextprotocol/server-memory` (npm, tests/mcpreal.py) and
`forgec serve` of a build compiled from its tools/list (tests/corpus/core) are
driven by the same official `mcp` client with the same calls (the client checks
structured results against the output schemas each server declares). Second source:
the real server. Not compared (the simulator's own choices, listed so a change
is seen): result message prose ("... deleted successfully" vs "... deleted"),
error message prose, and the order of entities in a result (ours: by key;
the real server: insertion order).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcpreal import server_script
from servekit import stdio_client

from conftest import CORPUS, REPO

A, B = "Zyx Qorvath", "Plim Vendaro"  # names no world-state entity has
SEQUENCE = [
    ("create_entities", {"entities": [{"name": A, "entityType": "person", "observations": ["likes tea"]},
                                      {"name": B, "entityType": "city", "observations": []}]}),
    ("create_entities", {"entities": [{"name": A, "entityType": "person", "observations": ["dup"]}]}),  # exists: skipped
    ("create_relations", {"relations": [{"from": A, "to": B, "relationType": "lives_in"}]}),
    ("create_relations", {"relations": [{"from": A, "to": B, "relationType": "lives_in"}]}),  # duplicate: skipped
    ("add_observations", {"observations": [{"entityName": A, "contents": ["plays chess", "likes tea"]}]}),
    ("add_observations", {"observations": [{"entityName": "Nobody Here", "contents": ["x"]}]}),  # an error on both
    ("open_nodes", {"names": [A, B]}),
    ("search_nodes", {"query": "Qorvath"}),
    ("delete_observations", {"deletions": [{"entityName": A, "observations": ["likes tea"]}]}),
    ("delete_relations", {"relations": [{"from": A, "to": B, "relationType": "lives_in"}]}),
    ("open_nodes", {"names": [A, B]}),
    ("delete_entities", {"entityNames": [A]}),
    ("open_nodes", {"names": [A, B]}),
]


@pytest.fixture(scope="module")
def memory_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("mem") / "build"
    src = CORPUS / "mcp_server_memory" / "tools_list.json"
    assert src.is_file(), f"test corpus missing at {src}"
    # AutoForge's walks: the subject here is the served simulator against the real server, and the walks call
    # every tool (user scenarios on this store are mostly dictated chains, which the scenario sampler refuses)
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(src), "-o", str(out), "-n", "6", "-q", "--sampler", "walk"],
                       capture_output=True, text=True, timeout=600, cwd=REPO)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


def _real(tmp_path) -> StdioServerParameters:
    return StdioServerParameters(command="node", args=[str(server_script("memory"))],
                                 env={"PATH": os.environ.get("PATH", ""), "MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")})


def _schema(s, top=True):
    """A JSON Schema without what only one side writes: `$schema` (real), `additionalProperties: false` and `required: []` (ours)."""
    if isinstance(s, dict):
        return {k: _schema(v, False) for k, v in s.items()
                if not (top and k == "$schema") and not (k == "additionalProperties" and v is False) and not (k == "required" and v == [])}
    if isinstance(s, list):
        return [_schema(v, False) for v in s]
    return s


def _result(sc):
    """Structured content with lists of records in a canonical order and message prose dropped."""
    if isinstance(sc, dict):
        return {k: _result(v) for k, v in sc.items() if k != "message"}
    if isinstance(sc, list):
        items = [_result(v) for v in sc]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True)) if all(isinstance(v, dict) for v in items) else items
    return sc


def test_served_memory_simulator_lists_the_real_servers_tools_and_tracks_its_state(memory_build, tmp_path):
    async def go():
        async with Client(_real(tmp_path), mode="legacy") as real, stdio_client(memory_build) as ours:
            rt, ot = (await real.list_tools()).tools, (await ours.list_tools()).tools
            steps = [(n, await real.call_tool(n, a), await ours.call_tool(n, a)) for n, a in SEQUENCE]
            return rt, ot, steps

    rt, ot, steps = anyio.run(go)
    assert [t.name for t in ot] == [t.name for t in rt]
    outputs = 0
    for r, o in zip(rt, ot):
        assert (o.title, o.description) == (r.title, r.description), r.name
        assert _schema(o.input_schema) == _schema(r.input_schema), r.name
        assert o.annotations == r.annotations, r.name
        if o.output_schema is not None:  # served where the compiled tasks show the simulator keeps it; the client validates
            outputs += 1
            assert o.output_schema == r.output_schema, r.name
    assert outputs >= 3
    for i, (name, r, o) in enumerate(steps):
        assert o.is_error == r.is_error, (i, name, r.content, o.content)
        if not r.is_error:
            assert _result(o.structured_content) == _result(r.structured_content), (i, name)
    errs = [(r.content[0].text, o.content[0].text) for _, r, o in steps if r.is_error]
    assert errs == [("Entity with name Nobody Here not found", "Entity 'Nobody Here' not found")]  # same failure, other words
