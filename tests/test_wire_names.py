"""Tools are served by the name their docs give them (review 75 and 76: "the docs call it `find-projects`, the gold
calls `find_projects`"). A name that is no identifier is read as one in `.forge` (`tool find_projects`) and carried as
`@wire("find-projects")`: agents see that name in TOOLS, the gold calls it, and the env answers to both. Checked
against the docs' own spelling (the input), not against forgec's output."""

from __future__ import annotations

import json

from conftest import compile_doc, mcp_tool

from forgec.frontends.common import wire_of


def test_the_docs_name_is_kept_where_an_agent_can_call_it():
    assert wire_of("find-projects", "find_projects") == "find-projects"
    assert wire_of("find_projects", "find_projects") is None  # already its own identifier
    assert wire_of("math.factorial", "math_factorial") is None  # OpenAI function names allow no dots: served as read


def _doc() -> dict:
    pid = {"id": {"type": "string", "description": "The project's ID."}}
    return {"tools": [
        mcp_tool("find-projects", "Return all projects.", {}),
        mcp_tool("add-project", "Create a new project.", {"name": {"type": "string", "description": "The project's name."}}, ["name"]),
        mcp_tool("delete-project", "Delete a project.", pid, ["id"]),
    ]}


def test_a_hyphenated_tool_is_served_called_and_written_by_its_docs_name(tmp_path):
    from forgec.runtime.loader import load

    out = compile_doc(tmp_path, "app", "tools_list.json", _doc(), 12)
    src = (out / "src" / "app" / "env.forge").read_text()
    assert '@wire("find-projects")' in src and "tool find_projects(" in src
    b = load(out)
    mod = b.envs["app"]
    assert sorted(t["function"]["name"] for t in mod.TOOLS) == ["add-project", "delete-project", "find-projects"]
    assert mod.WIRE_NAMES == {"add_project": "add-project", "delete_project": "delete-project", "find_projects": "find-projects"}
    m = json.loads((out / "manifest.json").read_text())["envs"]["app"]
    assert m["dropped_tools"] == [] and sorted(m["tools"]) == ["add_project", "delete_project", "find_projects"]
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    called = {c["tool"] for t in tasks for c in t["gold_calls"]}
    assert called and called <= {"add-project", "delete-project", "find-projects"}, called
    assert all(c["write"] == (c["tool"] != "find-projects") for t in tasks for c in t["gold_calls"])
    # the env answers to both names, with the same result
    state = json.loads((out / "states" / "app.json").read_text())
    a, c = mod.Env(json.loads(json.dumps(state))), mod.Env(json.loads(json.dumps(state)))
    assert a.step("find-projects", {}) == c.step("find_projects", {})
    key = next(iter(state["entities"]["Project"]))
    a.step("delete-project", {"id": key})
    c.step("delete_project", {"id": key})
    assert a.state_hash() == c.state_hash() != mod.Env(state).state_hash()


def test_fmt_keeps_the_wire_name(tmp_path):
    from forgec.lang.fmt import format_text

    text = 'env e {\n  entity P key id {\n    id: str "key"\n  }\n\n  @read\n  @wire("find-p")\n  tool find_p() -> list[P] {\n    return P\n  }\n}\n'
    out, diags = format_text(text)
    assert out == text, (out, [d.message for d in diags])
