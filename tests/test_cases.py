"""A docs' tool that does several acts, picked by an argument (`manage_contact(action: create | update | delete)`,
`motion_tasks(operation: ...)`), is one tool per act behind the docs' one name (forgec/synth/cases.py). Before, each
such tool only logged its calls: Motion's ten tools gave 0 tasks, Google Workspace's 119 gave 0. Checked against the
docs' own words (which parameter each act takes, hand-read below), the served schema agents see, and the env's
behaviour on calls made by the docs' name."""

from __future__ import annotations

import json

from conftest import compile_doc, mcp_tool

from forgec import ir
from forgec.synth.acts import act_text
from forgec.synth.cases import selector, split_cases

_STR = {"type": "string"}


def _contacts() -> dict:
    return {"tools": [
        mcp_tool("list_contacts", "List all contacts in the address book.", {}),
        mcp_tool("manage_contact", "Create, update, or delete a contact. Consolidated tool replacing create_contact, update_contact and delete_contact.", {
            "action": {"type": "string", "enum": ["create", "update", "delete"], "description": "The action to perform."},
            "contact_id": {**_STR, "description": "The contact ID. Required for \"update\" and \"delete\" actions."},
            "name": {**_STR, "description": "Full name of the contact (required for create, optional for update)."},
            "phone": {**_STR, "description": "Phone number (for create/update)."},
            "notes": {**_STR, "description": "Free notes about the contact."},
        }, ["action"]),
    ]}


def _ir(doc: dict, tmp) -> ir.Environment:
    from forgec.frontends import read_paths

    d = tmp / "docs"
    d.mkdir()
    (d / "tools_list.json").write_text(json.dumps(doc))
    envs, _ = read_paths([d])
    return envs[0]


def test_each_act_takes_the_parameters_the_docs_tie_to_it(tmp_path):
    env = split_cases(_ir(_contacts(), tmp_path))
    acts = {t.annotations["case"]["value"]: t for t in env.tools if "case" in t.annotations}
    assert sorted(acts) == ["create", "delete", "update"]
    params = {v: {p.name: p.required for p in t.params} for v, t in acts.items()}
    # hand-read from the docs: "Required for update and delete", "required for create, optional for update",
    # "(for create/update)", and the untied `notes` goes to the acts that write a record's data
    assert params["create"] == {"name": True, "phone": False, "notes": False}
    assert params["update"] == {"contact_id": True, "name": False, "phone": False, "notes": False}
    assert params["delete"] == {"contact_id": True}
    assert {t.wire_name for t in acts.values()} == {"manage_contact"}
    assert [t.name for t in env.tools if "case" not in t.annotations] == ["list_contacts"]


def test_an_act_is_described_by_its_own_sentences_not_the_tools_summary():
    doc = ("Manage custom fields - supports list, create and delete. create: workspaceId + name + type. "
           "delete: moves the field to the trash. Fields are shared by the workspace.")
    text = act_text(doc, "operation", ["list", "create", "delete"], "delete", "manage_custom_fields")
    assert text == "Delete custom fields. delete: moves the field to the trash. Fields are shared by the workspace."


def test_a_choice_that_is_no_act_is_left_alone():
    def tool(name, param, values):
        return ir.Tool(name=name, params=(ir.Param(name=param, type=ir.Type(kind="enum", values=tuple(values))),))

    assert selector(tool("manage_contact", "action", ["create", "update", "delete"])) is not None
    assert selector(tool("mark_email", "action", ["read", "unread", "flag", "unflag"])) is None  # the tool's verb is "mark"
    assert selector(tool("project_management", "action", ["archive", "unarchive"])) is None  # one flag, either way
    assert selector(tool("create_request", "method", ["GET", "PUT", "POST", "DELETE"])) is None  # an HTTP method is data
    assert selector(tool("write_file", "mode", ["rewrite", "append"])) is None
    assert selector(tool("node_management", "operation", ["cordon", "drain", "uncordon"])) is None  # no act on records


def test_the_acts_are_served_as_the_docs_one_tool_and_routed_by_the_selector(tmp_path):
    from forgec.runtime.loader import load

    out = compile_doc(tmp_path, "book", "tools_list.json", _contacts(), 24)
    src = (out / "src" / "book" / "env.forge").read_text()
    assert src.count('@wire("manage_contact")') == 3 and '@case("action=delete")' in src
    mod = load(out).envs["book"]
    served = {t["function"]["name"]: t["function"] for t in mod.TOOLS}
    assert sorted(served) == ["list_contacts", "manage_contact"]
    fn = served["manage_contact"]
    assert fn["parameters"]["properties"]["action"]["enum"] == ["create", "update", "delete"]
    assert fn["parameters"]["required"] == ["action"]  # contact_id is required by two acts of three, not by all
    assert set(fn["parameters"]["properties"]) == {"action", "contact_id", "name", "phone", "notes"}
    assert fn["description"].startswith("Create, update, or delete a contact.")  # the docs' own text
    state = json.loads((out / "states" / "book.json").read_text())
    env = mod.Env(json.loads(json.dumps(state)))
    made = env.step("manage_contact", {"action": "create", "name": "Ada Lovelace", "phone": "555-0101"})
    assert not hasattr(made, "code"), made
    ent = next(e for e in state["entities"] if e != "ActionLog")
    assert len(env.state["entities"][ent]) == len(state["entities"][ent]) + 1
    key = next(iter(state["entities"][ent]))
    # an argument only another act takes is valid on the one schema: dropped, not refused
    gone = env.step("manage_contact", {"action": "delete", "contact_id": key, "phone": "555-0101"})
    assert not hasattr(gone, "code"), gone
    assert key not in env.state["entities"][ent]
    bad = env.step("manage_contact", {"action": "merge", "contact_id": key})
    assert getattr(bad, "code", None) == "invalid-arguments" and "'create', 'update', 'delete'" in str(bad)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    calls = [c for t in tasks for c in t["gold_calls"] if c["tool"] == "manage_contact"]
    assert calls, [t["instruction"] for t in tasks]
    assert all(c["arguments"]["action"] in ("create", "update", "delete") and c["write"] for c in calls)
    deletes = [t for t in tasks if any(c["tool"] == "manage_contact" and c["arguments"]["action"] == "delete" for c in t["gold_calls"])]
    assert all("delete" in t["instruction"].lower() for t in deletes), [t["instruction"] for t in deletes]


def test_tools_served_by_one_name_must_each_be_an_act():
    from forgec.lang.check import check
    from forgec.lang.parse import parse

    def check_source(text, name):
        mod, diags = parse(text, name)
        return diags + check([mod])

    text = ('env e {\n  entity C key id {\n    id: str "key"\n  }\n\n'
            '  @create\n  @wire("manage_c")\n  tool make_c(id: str) -> str {\n    return id\n  }\n\n'
            '  @delete\n  @wire("manage_c")\n  @case("action=delete")\n  tool drop_c(id: str) -> str {\n    return id\n  }\n}\n')
    diags = check_source(text, "e.forge")
    assert [d.code for d in diags if d.is_error] == ["served-name"], [(d.code, d.message) for d in diags]
    fixed = text.replace('@wire("manage_c")\n  tool make_c', '@wire("manage_c")\n  @case("action=create")\n  tool make_c')
    assert not [d for d in check_source(fixed, "e.forge") if d.is_error]
