"""Parse time of the frontends per 1,000 tools (goal: < 1 s for 1,000 OpenAI-format tools on one core).

Times `forgec.frontends.read_file` end to end: read bytes, decode, parse, detect,
convert schemas, locate every tool and parameter (line:col) and build the
validated pydantic IR. Synthetic docs shaped like tau-bench / MCP / OpenAPI tools.

    python bench/bench_frontends.py [--tools 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import yaml

from forgec.frontends import read_file


def _schema(rng: random.Random, i: int) -> dict:
    """~6 parameters: strings, an enum, a number, an array of objects, an optional nullable field."""
    return {
        "type": "object",
        "properties": {
            "user_id": {"type": "string", "description": f"The user id, such as 'user_{i}'."},
            "item_id": {"type": "string", "description": "The item id."},
            "status": {"type": "string", "enum": ["pending", "active", "cancelled"], "description": "New status."},
            "amount": {"type": "number", "description": "Amount in USD."},
            "lines": {
                "type": "array",
                "description": "Order lines.",
                "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}, "required": ["sku", "qty"]},
            },
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "description": "Optional note."},
        },
        "required": ["user_id", "item_id", "status"] if rng.random() < 0.5 else ["user_id"],
    }


def _returns() -> dict:
    return {"type": "object", "properties": {"id": {"type": "string"}, "total": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["id"]}


def openai_doc(n: int, rng: random.Random) -> str:
    tools = [{"type": "function", "function": {"name": f"tool_{i}", "description": f"Do thing number {i} for a user.", "parameters": _schema(rng, i), "returns": _returns()}} for i in range(n)]
    return json.dumps(tools, indent=2)


def mcp_doc(n: int, rng: random.Random) -> str:
    tools = [{"name": f"tool_{i}", "description": f"Do thing {i}.", "inputSchema": _schema(rng, i), "outputSchema": _returns(), "annotations": {"readOnlyHint": i % 2 == 0}} for i in range(n)]
    return json.dumps({"tools": tools}, indent=2)


def openapi_doc(n: int, rng: random.Random) -> dict:
    paths: dict = {}
    for i in range(n // 2):
        paths[f"/things{i}/{{thing_id}}"] = {
            "parameters": [{"name": "thing_id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {"operationId": f"get_thing_{i}", "parameters": [{"name": "verbose", "in": "query", "schema": {"type": "boolean"}}],
                    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}},
            "patch": {"operationId": f"update_thing_{i}", "requestBody": {"required": True, "content": {"application/json": {"schema": _schema(rng, i)}}},
                      "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}},
        }
    return {"openapi": "3.1.0", "info": {"title": "bench", "version": "1"}, "paths": paths,
            "components": {"schemas": {"Thing": {"type": "object", "properties": {"thing_id": {"type": "string"}, "price": {"type": "number"}, "parts": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}}}}}}


def bfcl_doc(n: int, rng: random.Random) -> str:
    lines = []
    for i in range(n):
        s = _schema(rng, i)
        s["type"] = "dict"
        lines.append(json.dumps({"id": f"simple_{i}", "function": [{"name": f"tool_{i}", "description": "d", "parameters": s, "response": {"type": "float"}}]}))
    return "\n".join(lines) + "\n"


def bench(path: Path, repeat: int) -> tuple[float, float, int]:
    """Best wall time and best CPU time (the process's own; robust when the machine is shared)."""
    walls, cpus, count = [], [], 0
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        tools, diags = read_file(path)
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - w0)
        assert not [d for d in diags if d.is_error], diags[:3]
        count = len(tools)
    return min(walls), min(cpus), count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tools", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rng = random.Random(0)
    n = a.tools
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        cases = [
            ("OpenAI tools (JSON)", "openai.json", openai_doc(n, rng), 1.0),
            ("MCP tools/list (JSON)", "mcp.json", mcp_doc(n, rng), None),
            ("OpenAPI 3.1 (JSON)", "api.json", json.dumps(openapi_doc(n, rng), indent=2), None),
            ("OpenAPI 3.1 (YAML)", "api.yaml", yaml.safe_dump(openapi_doc(n, rng), sort_keys=False), None),
            ("BFCL (JSON Lines)", "bfcl.jsonl", bfcl_doc(n, rng), None),
        ]
        print(f"{'format':<24} {'tools':>6} {'size KiB':>9} {'wall s':>8} {'cpu s':>8} {'cpu s/1000':>10} {'goal':>8}  ok")
        for label, name, text, goal in cases:
            p = d / name
            p.write_text(text)
            wall, cpu, count = bench(p, a.repeat)
            per = cpu * 1000 / max(count, 1)
            ok = "" if goal is None else ("yes" if per < goal else "NO")
            print(f"{label:<24} {count:>6} {len(text) / 1024:>9.0f} {wall:>8.3f} {cpu:>8.3f} {per:>10.3f} {('< %.1f s' % goal) if goal else '-':>8}  {ok}")


if __name__ == "__main__":
    main()
