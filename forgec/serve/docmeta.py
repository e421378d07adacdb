"""Title, MCP annotations and output schema of each served tool.

`forgec compile` reads them from the docs and records them in `manifest.json` (`envs.<env>.tools.<tool>.title`,
`.annotations`, `.output_schema`; forgec/toolmeta.py says what comes from which doc format and when an output
schema is kept), so serving needs no doc file and gives the same metadata wherever the build is. `--docs FILE...`
reads them from doc files instead (MCP `tools/list` docs and OpenAI tool files), for a doc edited since the
compile; a build from before manifest 1.2 has none recorded and falls back to the doc files its manifest names,
when they can still be read (relative to the working directory or the build's parent).

A doc tool read at serve time is used only if it still describes the served tool (same description, same
parameter names), and its output schema only if every result the compiler recorded for that tool (the tasks'
gold calls) validates against it (at least one): MCP clients validate structured results against a served
output schema, so a schema the simulator does not keep would turn its calls into client-side errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forgec.runtime.envrt import tool_ident
from forgec.runtime.loader import Build


def _read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        return yaml.safe_load(text)
    return json.loads(text)


def _doc_tools(doc: Any) -> dict[str, dict]:
    """name -> {"description", "params", "title", "annotations", "output"} for MCP and OpenAI tool docs (else nothing)."""
    items = doc.get("tools") if isinstance(doc, dict) else doc
    if isinstance(doc, dict) and "result" in doc and isinstance(doc["result"], dict):  # a saved JSON-RPC response
        items = doc["result"].get("tools")
    out: dict[str, dict] = {}
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        if isinstance(it.get("inputSchema"), dict):  # MCP
            ann = it.get("annotations") if isinstance(it.get("annotations"), dict) else {}
            out[str(it.get("name"))] = {"description": it.get("description"), "params": it["inputSchema"].get("properties") or {},
                                        "title": it.get("title") or ann.get("title"), "annotations": ann or None,
                                        "output": it.get("outputSchema")}
            continue
        fn = it.get("function") if isinstance(it.get("function"), dict) else it
        if isinstance(fn.get("parameters"), dict) and "name" in fn:  # OpenAI
            ret = fn.get("returns")
            if isinstance(ret, dict) and ret.get("type") != "object" and ret:
                ret = {"type": "object", "properties": {"result": ret}, "required": ["result"]}
            out[str(fn["name"])] = {"description": fn.get("description"), "params": fn["parameters"].get("properties") or {},
                                    "title": None, "annotations": None, "output": ret if isinstance(ret, dict) and ret else None}
    return out


def _sources(build: Build, env: str, docs: list[Path] | None) -> list[Path]:
    if docs:
        return [p for p in docs if p.is_file()]
    rec = (build.manifest.get("envs") or {}).get(env) or {}
    found = []
    for s in rec.get("sources") or []:
        p = Path(s)
        for cand in ([p] if p.is_absolute() else [Path.cwd() / p, build.root.resolve().parent / p]):
            if cand.is_file():
                found.append(cand)
                break
    return found


def _recorded_results(build: Build, env: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for t in build.tasks:
        if t.env == env:
            for g in t.gold_calls:
                out.setdefault(g.tool, []).append(g.result if isinstance(g.result, dict) else {"result": g.result})
    return out


def _keeps(schema: dict, results: list) -> bool:
    try:
        from jsonschema.validators import validator_for

        cls = validator_for(schema)
        cls.check_schema(schema)
        v = cls(schema)
        return bool(results) and all(v.is_valid(json.loads(json.dumps(r))) for r in results)
    except Exception:  # noqa: BLE001 - a schema jsonschema cannot use is not served
        return False


def compiled_meta(build: Build, env: str, tools: list[dict]) -> dict[str, dict] | None:
    """The metadata `forgec compile` recorded in the manifest (None for a build from before manifest 1.2)."""
    version = str((build.manifest.get("metadata") or {}).get("schema_version") or "1.0")
    if tuple(int(x) if x.isdigit() else 0 for x in version.split(".")[:2]) < (1, 2):
        return None
    recs = ((build.manifest.get("envs") or {}).get(env) or {}).get("tools") or {}
    meta: dict[str, dict] = {}
    module = (getattr(build, "envs", None) or {}).get(env)
    for t in tools:
        r = recs.get(tool_ident(module, t["function"]["name"]))  # the manifest keeps the tool's own name
        if isinstance(r, dict):
            m = {k: r[k] for k in ("title", "annotations", "output_schema") if r.get(k)}
            if m:
                meta[t["function"]["name"]] = m
    return meta


def doc_meta(build: Build, env: str, tools: list[dict], docs: list[Path] | None = None) -> dict[str, dict]:
    """name -> {"title", "annotations", "output_schema"} (keys present only when known) for the served tools:
    what the compile recorded, or with `docs` what those files say."""
    if not docs:
        recorded = compiled_meta(build, env, tools)
        if recorded is not None:
            return recorded
    found: dict[str, dict] = {}
    for p in _sources(build, env, docs):
        try:
            found.update(_doc_tools(_read(p)))
        except Exception:  # noqa: BLE001 - an unreadable doc only means less metadata
            continue
    if not found:
        return {}
    results = _recorded_results(build, env)
    meta: dict[str, dict] = {}
    for t in tools:
        fn = t["function"]
        d = found.get(fn["name"])
        served = (fn.get("parameters") or {}).get("properties") or {}
        if d is None or (d["description"] or "") != (fn.get("description") or "") or set(d["params"]) != set(served):
            continue
        m: dict[str, Any] = {}
        if isinstance(d["title"], str) and d["title"]:
            m["title"] = d["title"]
        if d["annotations"]:
            m["annotations"] = d["annotations"]
        if isinstance(d["output"], dict) and d["output"].get("type") == "object" and _keeps(d["output"], results.get(fn["name"], [])):
            m["output_schema"] = d["output"]
        if m:
            meta[fn["name"]] = m
    return meta
