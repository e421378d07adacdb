"""What the docs say about a tool beyond its input schema, compiled into the build: title, MCP annotations, output schema.

Run at compile time (the `toolmeta` stage of forgec/build.py), when the docs are at hand, and recorded per tool in
`manifest.json` (`envs.<env>.tools.<tool>.title/annotations/output_schema`), so `forgec serve` needs no doc file and
serves the same metadata wherever the build is moved. Per doc format:

* MCP `tools/list`: `title` (or `annotations.title`), `annotations` verbatim, `outputSchema` verbatim;
* OpenAI tools: a `returns` (or `response`) JSON Schema;
* OpenAPI / Swagger: the operation's `summary` as the title, the first success response's schema (`$ref`s resolved
  by the reader) as the output schema;
* any format, when the doc file cannot be read again: the reader's IR (annotations, `returns`).

A non-object output schema is wrapped as `{"result": ...}`, the way `forgec serve` wraps non-object results. An output
schema is kept only where the simulator keeps it: every result the compiler recorded for the tool (the tasks' gold
calls, run on the env) validates against it, and there is at least one; MCP clients validate structured results
against a declared output schema, and the docs do not always describe what the simulator returns. A doc tool is used
only while the built tool has the same parameter names (a hand-edited env may have changed it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def _read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        return yaml.safe_load(text)
    if path.suffix.lower() == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def _at(doc: Any, pointer: str) -> Any:
    """The value at a JSON pointer (None when it is not there)."""
    cur = doc
    for part in [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]] if pointer else []:
        if isinstance(cur, dict):
            cur = cur.get(part)
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return None
    return cur


def type_schema(t: Any, defs: dict | None = None, depth: int = 0) -> dict:
    """An IR `Type` as JSON Schema (refs inlined up to a depth, then left open)."""
    if t is None or depth > 12:
        return {}
    k = t.kind
    if k == "ref":
        d = (defs or {}).get(t.ref)
        s = type_schema(d, defs, depth + 1) if d is not None else {}
    elif k == "string":
        s = {"type": "string"}
    elif k in ("integer", "number", "boolean", "null"):
        s = {"type": k}
    elif k == "enum":
        s = {"enum": list(t.values)}
    elif k == "array":
        s = {"type": "array", "items": type_schema(t.items, defs, depth + 1)} if t.items is not None else {"type": "array"}
    elif k == "object":
        s = {"type": "object"}
        if t.fields:
            s["properties"] = {f.name: type_schema(f.type, defs, depth + 1) for f in t.fields}
            req = [f.name for f in t.fields if f.required]
            if req:
                s["required"] = req
    elif k == "union":
        s = {"anyOf": [type_schema(v, defs, depth + 1) for v in t.variants]}
    else:
        s = {}
    if getattr(t, "nullable", False) and s:
        s = {"anyOf": [s, {"type": "null"}]}
    return s


def _object_schema(schema: Any) -> dict | None:
    """An output schema MCP accepts (`type: object`): a non-object one wrapped as `{"result": ...}`."""
    if not isinstance(schema, dict) or not schema:
        return None
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


_KEEPS: dict[str, bool] = {}  # (schema, results) digest -> verdict: an unchanged env costs a lookup on the next compile


def _keeps(schema: dict, results: list) -> bool:
    """Whether every recorded result validates against the doc's output schema (and there is one)."""
    if not results:
        return False
    try:
        key = hashlib.sha256(json.dumps([schema, results], sort_keys=True, default=str).encode()).hexdigest()
    except (TypeError, ValueError):
        return False
    hit = _KEEPS.get(key)
    if hit is None:
        try:
            from jsonschema.validators import validator_for

            cls = validator_for(schema)
            cls.check_schema(schema)
            v = cls(schema)
            hit = all(v.is_valid(json.loads(json.dumps(r))) for r in results)
        except Exception:  # noqa: BLE001 - jsonschema missing, or a schema it cannot use: not served
            hit = False
        if len(_KEEPS) > 4096:
            _KEEPS.clear()
        _KEEPS[key] = hit
    return hit


def _from_doc(tool: Any, docs: dict[str, Any]) -> dict:
    """title / annotations / output from the doc object the tool was read from (empty when unreadable)."""
    src = getattr(tool, "source", None)
    if src is None or not src.file:
        return {}
    if src.file not in docs:
        try:
            docs[src.file] = _read(Path(src.file))
        except Exception:  # noqa: BLE001 - a doc that cannot be read again gives the IR's view only
            docs[src.file] = None
    raw = _at(docs[src.file], src.pointer) if docs[src.file] is not None else None
    if not isinstance(raw, dict):
        return {}
    out: dict[str, Any] = {}
    if tool.format == "mcp":
        ann = raw.get("annotations") if isinstance(raw.get("annotations"), dict) else {}
        out["title"] = raw.get("title") or ann.get("title")
        out["annotations"] = ann or None
        out["output"] = raw.get("outputSchema")
    elif tool.format in ("openapi", "swagger"):
        out["title"] = raw.get("summary")
    else:
        fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
        out["title"] = fn.get("title")
        out["output"] = fn.get("returns") if fn.get("returns") is not None else fn.get("response")
    return out


def tool_meta(ir_env: Any, tools: list[dict], results: dict[str, list]) -> dict[str, dict]:
    """name -> {"title"?, "annotations"?, "output_schema"?} for the built `tools` (OpenAI format) of `ir_env`;
    `results`: the recorded results per tool (objects as they are, anything else as {"result": value})."""
    by_name = {t.name: t for t in ir_env.tools} | {t.wire_name: t for t in ir_env.tools if t.wire_name}
    defs = dict(getattr(ir_env, "definitions", None) or {})
    docs: dict[str, Any] = {}
    meta: dict[str, dict] = {}
    for t in tools:
        fn = t["function"]
        it = by_name.get(fn["name"])
        built = set(((fn.get("parameters") or {}).get("properties") or {}))
        if it is None or {p.name for p in it.params} != built:
            continue
        d = _from_doc(it, docs)
        ann = {k: v for k, v in (it.annotations or {}).items() if k not in ("title", "tags", "refusals")}  # (refusals: read as preconditions)
        title = d.get("title") or (it.annotations or {}).get("title")
        annotations = d.get("annotations") if "annotations" in d else (ann or None)
        output = d.get("output") if d.get("output") is not None else (type_schema(it.returns, defs) if it.returns is not None else None)
        m: dict[str, Any] = {}
        if isinstance(title, str) and title.strip():
            m["title"] = " ".join(title.split())
        if isinstance(annotations, dict) and annotations:
            m["annotations"] = annotations
        out = _object_schema(output)
        if out is not None and _keeps(out, results.get(fn["name"], [])):
            m["output_schema"] = out
        if m:
            meta[fn["name"]] = m
    return meta


def recorded_results(task_lines: list[tuple[str, str]]) -> dict[str, list]:
    """Per tool, the results of the gold calls in the env's task lines, wrapped as `forgec serve` wraps them."""
    out: dict[str, list] = {}
    for _, line in task_lines:
        for g in json.loads(line).get("gold_calls") or []:
            r = g.get("result")
            out.setdefault(g["tool"], []).append(r if isinstance(r, dict) else {"result": r})
    return out


def toolmeta_stage(job: Any) -> None:
    """Build stage: the env's tool metadata into its manifest record (`ToolRecord.title/annotations/output_schema`)."""
    meta = tool_meta(job.ir, list(getattr(job.module, "TOOLS", []) or []), recorded_results(job.task_lines))
    wire = getattr(job.module, "WIRE_NAMES", None) or {}
    for name, rec in job.rec.tools.items():
        m = meta.get(wire.get(name, name), {})  # the metadata of the tool as served (`find-projects`)
        rec.title, rec.annotations, rec.output_schema = m.get("title"), m.get("annotations"), m.get("output_schema")


def portable_sources(sources: Any) -> list[str]:
    """Doc paths as the manifest records them: relative to the working directory of the compile, never absolute
    (`forgec compile /abs/docs` and `forgec compile docs` from the same folder record the same paths)."""
    import os

    return [Path(os.path.relpath(s)).as_posix() if os.path.isabs(s) else Path(s).as_posix() for s in sources]
