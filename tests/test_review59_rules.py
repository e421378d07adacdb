"""Rules from blind review 59 (30 customer-service tasks from tau-bench's retail and airline docs with their
wiki.md policy pages, 7 accepted): status-bound fields, once-flags a status change makes needless, one new
address per person and task, parts within totals. Each is checked on two differently written sources and
against hand-computed values, not against the code's own output."""

from __future__ import annotations

import collections
import json
import shutil
from pathlib import Path

from conftest import CORPUS, TAU_CODE, mcp_tool
from forgec.lang import ast as A

RETAIL_WIKI = TAU_CODE / "tau_bench" / "envs" / "retail" / "wiki.md"

LIBRARY = [
    mcp_tool("get_member", "Get a library member by id.", {"member_id": {"type": "string"}}, ["member_id"]),
    mcp_tool("list_members", "List the members of the library.", {}),
    mcp_tool("create_member", "Register a new member.", {"name": {"type": "string", "description": "Full name"}, "email": {"type": "string"}},
             ["name", "email"]),
    mcp_tool("suspend_member", "Suspend a member. The member status will be changed to 'suspended'.",
             {"member_id": {"type": "string"}, "suspension_reason": {"type": "string", "description": "Why the member is suspended"}},
             ["member_id", "suspension_reason"]),
    mcp_tool("reinstate_member", "Reinstate a suspended member. The member status will be changed to 'active'.",
             {"member_id": {"type": "string"}}, ["member_id"]),
]


def _build(tmp: Path, name: str, files: dict[str, str | Path], tasks: int = 30) -> Path:
    from forgec.build import CompileOptions, compile_build

    docs = tmp / name
    docs.mkdir(parents=True)
    for fname, content in files.items():
        if isinstance(content, Path):
            shutil.copy(content, docs / fname)
        else:
            (docs / fname).write_text(content)
    out = tmp / f"{name}_build"
    res = compile_build(CompileOptions(inputs=[docs], out=out, tasks_per_env=tasks, oracle_check=False))
    assert not [d for d in res.diagnostics if d.is_error]
    return out


def _schema(out: Path) -> dict:
    from forgec.codegen import load_env_module

    return load_env_module(next(out.glob("envs/*/env.py"))).SCHEMA


def _world(out: Path) -> dict:
    return json.loads(next(out.glob("states/*.json")).read_text())["entities"]


def test_a_field_only_a_status_move_writes_is_empty_in_other_states(tmp_path):
    """tau-bench retail: only cancel_pending_order writes `reason`, and it sets status "cancelled"; the library: only
    suspend_member writes `suspension_reason` (the create starts it empty), and it sets "suspended"."""
    retail = _build(tmp_path, "retail", {"tools.json": CORPUS / "tau_bench_retail" / "tools.json", "wiki.md": RETAIL_WIKI})
    assert _schema(retail)["entities"]["Order"]["fields"]["reason"]["only_when"] == {"status": ["cancelled"]}
    orders = _world(retail)["Order"].values()
    assert all(o.get("reason") is None for o in orders if o["status"] != "cancelled")
    assert any(o.get("reason") for o in orders if o["status"] == "cancelled")
    lib = _build(tmp_path, "library", {"tools.json": json.dumps({"tools": LIBRARY})})
    assert _schema(lib)["entities"]["Member"]["fields"]["suspension_reason"]["only_when"] == {"status": ["suspended"]}
    seen = collections.Counter((m["status"], bool(m["suspension_reason"])) for m in _world(lib)["Member"].values())
    assert seen[("active", True)] == 0 and seen[("suspended", True)] > 0 and seen[("active", False)] > 0


def test_a_field_another_write_touches_is_not_bound():
    from forgec.codegen.emit import status_bound
    from forgec.lang import parse

    src = """
env shop {
  entity Order key order_id {
    order_id: str "key"
    note: str? "a note"
    reason: str? "why"
    status: enum("pending", "cancelled")
  }
  tool cancel(order_id: Order, reason: str) -> Order {
    set order_id.reason = reason
    set order_id.note = reason
    set order_id.status = "cancelled"
    return order_id
  }
  tool annotate(order_id: Order, note: str) -> Order {
    set order_id.note = note
    return order_id
  }
}
"""
    mod, diags = parse(src, "shop.forge")
    assert not diags
    env = mod.envs[0]
    assert status_bound(env) == {("Order", "reason"): {"status": ["cancelled"]}}  # `note` is annotate's too


def test_once_flags_go_where_the_status_already_changes(tmp_path):
    """With the wiki, modify items and exchange move the order out of the status they require: no `*_done` flag
    is declared, set or checked (the world had set it at random on pending orders, which read as 'already
    modified'); without the wiki the tools move no status and keep their flags."""
    tools = CORPUS / "tau_bench_retail" / "tools.json"
    with_wiki = next(_build(tmp_path, "a", {"tools.json": tools, "wiki.md": RETAIL_WIKI}, 2).glob("src/*/env.forge")).read_text()
    without = next(_build(tmp_path, "b", {"tools.json": tools}, 2).glob("src/*/env.forge")).read_text()
    assert "_done" not in with_wiki
    assert "modify_pending_order_items_done: bool" in without and "require not order_id.modify_pending_order_items_done" in without


def test_one_new_address_per_task(tmp_path):
    from forgec.scenario import _postal_params

    def tool(params: dict) -> A.ToolDecl:
        return A.ToolDecl("t", tuple(A.ParamDecl(n, A.PrimType("str"), None, "") for n in params), A.PrimType("str"))

    assert _postal_params(tool({"user_id": 1, "address1": 1, "address2": 1, "city": 1, "state": 1, "country": 1, "zip": 1})) == \
        frozenset({"address1", "address2", "city", "state", "country", "zip"})
    assert _postal_params(tool({"city": 1, "date": 1})) == frozenset()  # a weather lookup's city is no address
    out = _build(tmp_path, "retail", {"tools.json": CORPUS / "tau_bench_retail" / "tools.json"}, 60)
    both = 0
    for line in (out / "tasks" / "retail.jsonl").read_text().splitlines():
        calls = {g["tool"]: g["arguments"] for g in json.loads(line)["gold_calls"]}
        if "modify_user_address" in calls and "modify_pending_order_address" in calls:
            both += 1
            a, b = calls["modify_user_address"], calls["modify_pending_order_address"]
            assert [a[k] for k in ("address1", "city", "zip")] == [b[k] for k in ("address1", "city", "zip")]
    assert both >= 1


def test_a_part_is_no_more_than_its_total():
    from forgec.stdlib.values import generate_state

    schema = {"entities": {"Reservation": {"key": "reservation_id", "fields": {
        "reservation_id": {"type": "str"}, "total_baggages": {"type": "int"}, "nonfree_baggages": {"type": "int"}}},
        "Inbox": {"key": "inbox_id", "fields": {"inbox_id": {"type": "str"}, "message_count_total": {"type": "int"},
                                                 "unread_message_count": {"type": "int"}}}}, "records": {}, "globals": {}}
    for seed in range(5):
        w = generate_state(schema, seed=seed)["entities"]
        assert all(r["nonfree_baggages"] <= r["total_baggages"] for r in w["Reservation"].values())
        assert all(r["unread_message_count"] <= r["message_count_total"] for r in w["Inbox"].values())


def test_login_then_a_dictated_write_is_a_form_filled_in(tmp_path):
    """Review 60: "I'm X; my email is Y. Please modify the default address of my account to 12 Oak St, ..." — the only
    lookup turns the email into the user's own id (who asks), then every value written is dictated: no task."""
    out = _build(tmp_path, "retail", {"tools.json": CORPUS / "tau_bench_retail" / "tools.json"}, 60)
    login = {"find_user_id_by_email", "find_user_id_by_name_zip"}
    for line in (out / "tasks" / "retail.jsonl").read_text().splitlines():
        tools = [g["tool"] for g in json.loads(line)["gold_calls"]]
        assert not (set(tools) - login == {"modify_user_address"} and tools.count("modify_user_address") == 1), tools


def test_an_id_typed_number_is_an_integer_key(tmp_path):
    """paperless-mcp's `update_tag(id: number)` / `delete_tag(id: number)` (zod's z.number()) and an OpenAPI path id
    `type: number`: ids, so keys of the record the tool names; as floats no key rule took them and they only logged."""
    tools = [mcp_tool("list_tags", "List all tags.", {"page": {"type": "number"}}),
             mcp_tool("create_tag", "Create a new tag.", {"name": {"type": "string"}}, ["name"]),
             mcp_tool("update_tag", "Update an existing tag's name.", {"id": {"type": "number"}, "name": {"type": "string"}}, ["id", "name"]),
             mcp_tool("delete_tag", "Permanently delete a tag.", {"id": {"type": "number"}}, ["id"])]
    src = next(_build(tmp_path, "tags", {"tools.json": json.dumps({"tools": tools})}, 2).glob("src/*/env.forge")).read_text()
    assert "tool update_tag(id: Tag, name: str) -> Tag" in src and "tool delete_tag(id: Tag)" in src and "@conservative" not in src
    spec = {"openapi": "3.0.0", "info": {"title": "Notes", "version": "1"}, "paths": {
        "/notes": {"get": {"operationId": "listNotes", "responses": {"200": {"description": "ok", "content": {"application/json": {
            "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Note"}}}}}}},
                   "post": {"operationId": "createNote", "requestBody": {"content": {"application/json": {"schema": {
                       "type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}}},
                       "responses": {"200": {"description": "ok"}}}},
        "/notes/{id}": {"delete": {"operationId": "deleteNote", "parameters": [{"name": "id", "in": "path", "required": True,
                                                                               "schema": {"type": "number"}}],
                                   "responses": {"204": {"description": "gone"}}}}},
        "components": {"schemas": {"Note": {"type": "object", "properties": {"id": {"type": "number"}, "title": {"type": "string"}}}}}}
    src = next(_build(tmp_path, "notes", {"openapi.json": json.dumps(spec)}, 2).glob("src/*/env.forge")).read_text()
    block = src[src.index("tool deleteNote("):]
    assert block.startswith("tool deleteNote(id: Note)") and "@conservative" not in src[:src.index("tool deleteNote(")].rsplit("tool ", 1)[-1]


def test_a_write_that_never_finds_its_record_does_not_spend_the_budget(tmp_path):
    """paperless-mcp (real docs, tests/corpus/broad): with its number ids read as keys, `update_correspondent` and
    others can never look their record up; tried first in every attempt (least used), they left 4 tasks of 120
    asked. Tools whose intents keep failing are tried later."""
    from conftest import BROAD
    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[BROAD / "npm_baruchiro_paperless_mcp"], out=out, oracle_check=False))
    m = json.loads((out / "manifest.json").read_text())["envs"]["npm_baruchiro_paperless_mcp"]
    assert m["task_count"] >= 30
    assert m["tools"]["update_tag"]["writes_state"] and m["tools"]["update_tag"]["verified"]
