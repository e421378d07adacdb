"""Differential scenarios: the real MCP memory server vs the env forgec synthesizes from its docs.

`run_memory_scenarios()` runs the same call sequences on the npm server (over stdio, its graph
in a fresh `MEMORY_FILE_PATH`) and on the env compiled from
`tests/corpus/core/mcp_server_memory/tools_list.json`, and compares after every call:

* **errors**: both refuse the call, or neither does;
* **result**: the env's return value against the server's `structuredContent`, as JSON, except
  free-text `message` strings (compared by type: the docs say `message: string`, not its words);
* **state**: the whole graph afterwards (the server's `read_graph`, the env's state).

Lists of entities are compared as sets of records (the env keeps nodes in key order, the server
in file order: an order the docs do not state); lists of relations in order (both keep creation
order). Each scenario starts from an empty graph (`seeded`: from the world forgec generates for the
env, written as the server's memory file), so a difference does not leak into the next.
Returns `(tool, agree, detail)` per call (used by tests/test_differential_memory.py and
bench/differential.py).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from conftest import CORPUS
from mcpreal import McpServer

REPO = Path(__file__).resolve().parent.parent
DOCS = CORPUS / "mcp_server_memory" / "tools_list.json"


def E(name: str, ty: str, *obs: str) -> dict:
    return {"name": name, "entityType": ty, "observations": list(obs)}


def R(a: str, b: str, ty: str) -> dict:
    return {"from": a, "to": b, "relationType": ty}


def _team() -> list[tuple[str, dict]]:
    """A small team graph, built up, queried, edited and torn down (failures and duplicates included)."""
    return [
        ("read_graph", {}),
        ("create_entities", {"entities": [E("Alice Chen", "person", "Leads the data team", "Speaks French"), E("Bob Okafor", "person", "Joined in 2023"),
                                          E("Acme Labs", "organization", "Based in Lyon"), E("Apollo", "project", "Search rewrite, due in Q3")]}),
        ("create_entities", {"entities": [E("Alice Chen", "robot", "Duplicate name: skipped"), E("Carol Diaz", "person", "Works remotely")]}),
        ("create_entities", {"entities": []}),
        ("create_relations", {"relations": [R("Alice Chen", "Acme Labs", "works_at"), R("Bob Okafor", "Acme Labs", "works_at"), R("Alice Chen", "Apollo", "leads")]}),
        ("create_relations", {"relations": [R("Alice Chen", "Acme Labs", "works_at"), R("Carol Diaz", "Bob Okafor", "mentors")]}),
        ("create_relations", {"relations": [R("Bob Okafor", "Apollo", "contributes_to")]}),
        ("create_relations", {"relations": []}),
        ("add_observations", {"observations": [{"entityName": "Alice Chen", "contents": ["Speaks French", "Prefers tea"]}]}),
        ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
        ("add_observations", {"observations": [{"entityName": "Bob Okafor", "contents": ["On call this week"]}, {"entityName": "Ghost", "contents": ["y"]}]}),
        ("add_observations", {"observations": [{"entityName": "Apollo", "contents": ["Budget approved", "Budget approved"]},
                                               {"entityName": "Carol Diaz", "contents": []}]}),
        ("add_observations", {"observations": []}),
        ("search_nodes", {"query": "alice"}),
        ("search_nodes", {"query": "ACME"}),
        ("search_nodes", {"query": "tea"}),
        ("search_nodes", {"query": "person"}),
        ("search_nodes", {"query": "no such thing"}),
        ("search_nodes", {"query": "budget APPROVED"}),
        ("open_nodes", {"names": ["Alice Chen"]}),
        ("open_nodes", {"names": ["Bob Okafor", "Carol Diaz"]}),
        ("open_nodes", {"names": ["Nobody"]}),
        ("open_nodes", {"names": []}),
        ("open_nodes", {"names": ["Apollo", "Apollo", "Acme Labs"]}),
        ("delete_observations", {"deletions": [{"entityName": "Alice Chen", "observations": ["Prefers tea", "never said"]}]}),
        ("delete_observations", {"deletions": [{"entityName": "Nobody", "observations": ["x"]}, {"entityName": "Bob Okafor", "observations": ["Joined in 2023"]}]}),
        ("delete_observations", {"deletions": []}),
        ("delete_relations", {"relations": [R("Alice Chen", "Acme Labs", "works_at")]}),
        ("delete_relations", {"relations": [R("Alice Chen", "Acme Labs", "works_at"), R("Nobody", "Apollo", "leads")]}),
        ("delete_relations", {"relations": [R("Carol Diaz", "Bob Okafor", "mentors"), R("Bob Okafor", "Apollo", "contributes_to")]}),
        ("read_graph", {}),
        ("delete_entities", {"entityNames": ["Bob Okafor"]}),
        ("delete_entities", {"entityNames": ["Nobody"]}),
        ("delete_entities", {"entityNames": ["Apollo", "Carol Diaz"]}),
        ("delete_entities", {"entityNames": []}),
        ("read_graph", {}),
        ("search_nodes", {"query": "a"}),
    ]


def _dangling() -> list[tuple[str, dict]]:
    """Relations whose ends are not (or no longer) entities; deleting an entity takes its relations."""
    return [
        ("create_relations", {"relations": [R("Ghost", "Phantom", "haunts")]}),
        ("create_entities", {"entities": [E("Ghost", "spirit")]}),
        ("open_nodes", {"names": ["Ghost"]}),
        ("search_nodes", {"query": "spirit"}),
        ("create_relations", {"relations": [R("Ghost", "Ghost", "self_loop"), R("Phantom", "Ghost", "follows")]}),
        ("delete_entities", {"entityNames": ["Ghost"]}),
        ("read_graph", {}),
        ("create_entities", {"entities": [E("Ghost", "spirit", "Came back")]}),
        ("open_nodes", {"names": ["Ghost", "Phantom"]}),
        ("delete_entities", {"entityNames": ["Phantom"]}),
    ]


def _crowd() -> list[tuple[str, dict]]:
    """Many nodes at once, searches over types and observations, batch edits."""
    people = [E(f"Person {i:02d}", "person" if i % 3 else "manager", f"Employee number {i}", "Remote" if i % 2 else "Office") for i in range(12)]
    rels = [R(f"Person {i:02d}", f"Person {(i + 1) % 12:02d}", "reports_to" if i % 4 else "mentors") for i in range(12)]
    return [
        ("create_entities", {"entities": people}),
        ("create_relations", {"relations": rels}),
        ("search_nodes", {"query": "MANAGER"}),
        ("search_nodes", {"query": "remote"}),
        ("search_nodes", {"query": "number 1"}),
        ("open_nodes", {"names": ["Person 03", "Person 04"]}),
        ("add_observations", {"observations": [{"entityName": f"Person {i:02d}", "contents": ["Remote", "Moved to Berlin"]} for i in range(0, 12, 3)]}),
        ("delete_observations", {"deletions": [{"entityName": f"Person {i:02d}", "observations": ["Office"]} for i in range(12)]}),
        ("delete_relations", {"relations": rels[::2]}),
        ("delete_entities", {"entityNames": [f"Person {i:02d}" for i in range(0, 12, 2)]}),
        ("read_graph", {}),
        ("search_nodes", {"query": "berlin"}),
    ]


def _bad_input() -> list[tuple[str, dict]]:
    """Calls the docs' input schema rejects: both sides refuse them and change nothing."""
    return [
        ("create_entities", {"entities": [E("Zoe", "person")]}),
        ("create_entities", {"entities": [{"name": "Yan", "entityType": "person"}]}),
        ("create_relations", {"relations": [{"from": "Zoe", "to": "Yan"}]}),
        ("add_observations", {"observations": [{"entityName": "Zoe", "contents": "not a list"}]}),
        ("delete_entities", {"entityNames": "Zoe"}),
        ("open_nodes", {}),
        ("search_nodes", {"query": 42}),
        ("read_graph", {}),
    ]


def _batch_duplicates() -> list[tuple[str, dict]]:
    """Duplicates inside one batch: the server compares each item with the graph as it was before
    the call, so both copies of a new name go in (two entities of one name); the env keys nodes by
    name and keeps the first. Kept to show the one documented-nowhere difference."""
    return [
        ("create_entities", {"entities": [E("Twin", "person", "first"), E("Twin", "person", "second")]}),
        ("create_relations", {"relations": [R("Twin", "Twin", "mirrors"), R("Twin", "Twin", "mirrors")]}),
        ("read_graph", {}),
    ]


def _seeded(graph: dict) -> list[tuple[str, dict]]:
    """On the world forgec generates for the env (its states/<env>.json graph, written as the server's
    memory file): reads, edits and deletes of the people, projects and relations already there."""
    ents, rels = graph["entities"], graph["relations"]
    people = [e["name"] for e in ents if e["entityType"] == "person"]
    hub = max((e["name"] for e in ents), key=lambda n: (sum(n in (r["from"], r["to"]) for r in rels), n))
    return [
        ("read_graph", {}),
        ("search_nodes", {"query": "PERSON"}),
        ("search_nodes", {"query": ents[0]["observations"][0].split()[-1]}),
        ("open_nodes", {"names": people[:2]}),
        ("add_observations", {"observations": [{"entityName": people[0], "contents": ["Moved to Berlin", ents[0]["observations"][0]]}]}),
        ("delete_observations", {"deletions": [{"entityName": ents[1]["name"], "observations": ents[1]["observations"][:1]}]}),
        ("create_relations", {"relations": [R(people[0], people[1], "knows"), rels[0]]}),
        ("delete_relations", {"relations": [rels[1]]}),
        ("delete_entities", {"entityNames": [hub]}),
        ("open_nodes", {"names": [hub, people[-1]]}),
        ("create_entities", {"entities": [E(people[-1], "person", "dup"), E("Maya Lindqvist", "person", "New hire")]}),
        ("read_graph", {}),
    ]


SCENARIOS = {"seeded": _seeded, "team": _team, "dangling": _dangling, "crowd": _crowd, "bad_input": _bad_input, "batch_duplicates": _batch_duplicates}


# --------------------------------------------------------------------------- the synthesized env


def build_env_module(out_dir: Path) -> Any:
    """Compile the memory server's docs (rules backend) into an env module under `out_dir`."""
    from forgec import lang
    from forgec.codegen import emit_env, load_env_module
    from forgec.diagnostics import has_errors, render
    from forgec.frontends import read_paths
    from forgec.lang import ast as A
    from forgec.synth import synthesize

    if not DOCS.is_file():
        raise RuntimeError(f"test corpus missing: {DOCS}")
    envs, diags = read_paths([DOCS])
    decl, sd = synthesize(envs[0])
    text = lang.format(A.Module(file="env.forge", items=(decl,)))
    mod, pd = lang.parse(text, "env.forge")
    cd = lang.check([mod])
    if has_errors(diags + pd + cd):
        raise RuntimeError(render(diags + pd + cd, "concise"))
    path = out_dir / "env.py"
    path.write_text(emit_env(mod.envs[0], "env.forge"), encoding="utf-8")
    return load_env_module(path, name="forgec_differential_memory")


def _env_graph(env: Any) -> dict:
    """The env's state as the server's graph: nodes (the entity with observations), relations in key order."""
    ents = env.state["entities"]
    schema = env.SCHEMA["entities"]
    node = next(e for e, d in schema.items() if "observations" in d["fields"])
    rel = next(e for e, d in schema.items() if "from" in d["fields"] and "to" in d["fields"])
    return {"entities": [{k: r[k] for k in ("name", "entityType", "observations")} for r in ents[node].values()],
            "relations": [{k: r[k] for k in ("from", "to", "relationType")} for r in ents[rel].values()]}


# --------------------------------------------------------------------------- comparison


def _norm(v: Any, key: str = "") -> Any:
    """JSON with entity lists as sorted sets and free-text messages as their type."""
    if isinstance(v, dict):
        return {k: _norm(x, k) for k, x in sorted(v.items())}
    if isinstance(v, list):
        items = [_norm(x) for x in v]
        if key == "entities":
            return sorted(items, key=lambda x: json.dumps(x, sort_keys=True))
        return items
    if key == "message" and isinstance(v, str):
        return "<str>"
    return v


def _shape(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _shape(x) for k, x in sorted(v.items())}
    if isinstance(v, list):
        return [_shape(v[0])] if v else []
    return type(v).__name__


def _short(v: Any, n: int = 160) -> str:
    s = json.dumps(v, sort_keys=True, ensure_ascii=False)
    return s if len(s) <= n else s[: n - 3] + "..."


def _compare(tool: str, real: tuple[bool, str, Any], got: Any, real_graph: dict, env_graph: dict, is_err) -> tuple[bool, str]:
    r_err, r_text, r_struct = real
    e_err = is_err(got)
    problems = []
    if r_err != e_err:
        problems.append(f"error: server {'refused' if r_err else 'accepted'} ({_short(r_text, 80)}), env {'refused' if e_err else 'accepted'} ({_short(str(got), 80)})")
    elif not r_err:
        if _shape(_norm(r_struct)) != _shape(_norm(got)):
            problems.append(f"result shape: server {_short(_shape(r_struct))} vs env {_short(_shape(got))}")
        elif _norm(r_struct) != _norm(got):
            problems.append(f"result: server {_short(r_struct)} vs env {_short(got)}")
    if _norm(real_graph) != _norm(env_graph):
        problems.append(f"graph after: server {_short(real_graph)} vs env {_short(env_graph)}")
    return not problems, "; ".join(problems) or "agree"


def run_memory_scenarios(only: list[str] | None = None) -> list[tuple[str, bool, str]]:
    """(tool, agree, detail) for every call of every scenario (each from an empty graph)."""
    rows: list[tuple[str, bool, str]] = []
    with tempfile.TemporaryDirectory(prefix="forgec-diff-memory-") as tmp:
        module = build_env_module(Path(tmp))
        is_err = lambda v: isinstance(v, module.ToolError) or type(v).__name__ == "ToolError"  # noqa: E731
        for name, make in SCENARIOS.items():
            if only and name not in only:
                continue
            mem = Path(tmp) / f"{name}.jsonl"
            env = module.Env({})
            calls = make() if name != "seeded" else None
            if name == "seeded":  # the env's own generated world, given to the server as its memory file
                from forgec.stdlib.values import generate_state

                env = module.Env(generate_state(module.SCHEMA, seed=0))
                graph = _env_graph(env)
                mem.write_text("\n".join([json.dumps({"type": "entity", **e}) for e in graph["entities"]]
                                          + [json.dumps({"type": "relation", **r}) for r in graph["relations"]]), encoding="utf-8")
                calls = make(graph)
            with McpServer("memory", env={"MEMORY_FILE_PATH": str(mem)}) as srv:
                for i, (tool, args) in enumerate(calls):
                    real = srv.call(tool, args)
                    got = env.step(tool, json.loads(json.dumps(args)))
                    r_graph = srv.call("read_graph", {})[2] or {}
                    ok, detail = _compare(tool, real, got, r_graph, _env_graph(env), is_err)
                    rows.append((tool, ok, f"{name}#{i}: {detail}"))
    return rows


if __name__ == "__main__":
    rs = run_memory_scenarios()
    for t, ok, d in rs:
        if not ok:
            print(t, d)
    print(f"{sum(ok for _, ok, _ in rs)}/{len(rs)} agree")
