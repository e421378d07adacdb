"""Rules from blind reviews 55-56: two kinds of record that share a head noun are two entities when each kind's tools
address it by its own key (review 55: DigitalOcean's database and Kubernetes clusters were one `Cluster`, so a Valkey
database cluster was "upgraded" with the Kubernetes tool)."""

from __future__ import annotations

from forgec.frontends import read_paths
from forgec.synth.schema import infer_schema, named_for_another

from conftest import BROAD, mcp_tool as _tool, schema_of as _schema  # noqa: E402

ID = {"type": "string", "description": "The id"}


def test_digitalocean_database_and_kubernetes_clusters_are_two_kinds():
    """The real docs: `db_cluster_*` take `id` ("Delete a database cluster by its id"), `doks_*_cluster` take
    `ClusterID` ("The ID of the Kubernetes cluster"). Each delete deletes its own kind (not a logged call)."""
    envs, _ = read_paths([BROAD / "npm_digitalocean_mcp"])
    s = infer_schema(envs[0])
    db, doks = s.views["db_cluster_delete"], s.views["doks_delete_cluster"]
    assert (db.target, db.key_param) == ("DbCluster", "id")
    assert (doks.target, doks.key_param) == ("DoksCluster", "ClusterID")
    assert s.views["doks_upgrade_cluster"].target == "DoksCluster"
    assert s.views["db_cluster_resize"].target == "DbCluster"
    assert s.views["db_cluster_list"].target == "DbCluster" and s.views["doks_list_clusters"].target == "DoksCluster"
    assert named_for_another(s, db) is None and named_for_another(s, doks) is None
    # the node pools' `cluster_id` is a Kubernetes cluster's (only the doks tools take it)
    assert s.ref_of("cluster_id") == "DoksCluster"


def _op(op_id: str, summary: str, params: list[str]) -> dict:
    return {"operationId": op_id, "summary": summary, "responses": {"200": {"description": "OK"}},
            "parameters": [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in params]}


def test_kinds_written_another_way_split_by_their_keys(tmp_path):
    """A second source, an OpenAPI spec written as Harbor's: replication policies under `/replication/policies/{id}`,
    preheat policies under `/projects/{project_name}/preheat/policies/{preheat_policy_name}`. Two kinds, each with its
    own key; the project's `project_name` stays the project's."""
    import json

    pre = "/projects/{project_name}/preheat/policies"
    spec = {"openapi": "3.0.0", "info": {"title": "Registry", "version": "1"}, "paths": {
        "/replication/policies": {"get": _op("listReplicationPolicies", "List replication policies", [])},
        "/replication/policies/{id}": {"get": _op("getReplicationPolicy", "Get the replication policy", ["id"]),
                                        "delete": _op("deleteReplicationPolicy", "Delete the replication policy", ["id"])},
        pre: {"get": _op("ListPolicies", "List preheat policies", ["project_name"])},
        pre + "/{preheat_policy_name}": {
            "get": _op("GetPolicy", "Get a preheat policy", ["project_name", "preheat_policy_name"]),
            "delete": _op("DeletePolicy", "Delete a preheat policy", ["project_name", "preheat_policy_name"])},
    }}
    d = tmp_path / "docs"
    d.mkdir()
    (d / "openapi.json").write_text(json.dumps(spec))
    envs, _ = read_paths([d])
    s = infer_schema(envs[0])
    rep, pre_del = s.views["deleteReplicationPolicy"], s.views["DeletePolicy"]
    assert rep.target == "ReplicationPolicy" and rep.key_param == "id"
    assert pre_del.target == "PreheatPolicy" and pre_del.key_param == "preheat_policy_name"
    assert s.views["GetPolicy"].target == "PreheatPolicy"
    assert s.views["deleteReplicationPolicy"].refs == {} and pre_del.refs.get("project_name") == "Project"


def test_kinds_one_key_addresses_stay_one(tmp_path):
    """Text and forum channels that every tool addresses by one `channelId` are channels (Discord): no split."""
    cid = {"type": "string", "description": "Discord channel ID"}
    tools = [
        _tool("get_text_channel", "Get a text channel", {"channelId": cid}, ["channelId"]),
        _tool("delete_text_channel", "Delete a text channel", {"channelId": cid}, ["channelId"]),
        _tool("get_forum_channel", "Get a forum channel", {"channelId": cid}, ["channelId"]),
        _tool("delete_forum_channel", "Delete a forum channel", {"channelId": cid}, ["channelId"]),
    ]
    s = _schema(tmp_path, tools)
    assert {s.views[t].target for t in ("delete_text_channel", "delete_forum_channel")} == {"Channel"}


def test_a_parents_collection_is_no_kind(tmp_path):
    """`/boards/{board}/members/{member}` and `/cards/{card}/members/{user}`: a plural before the head names the
    parent's collection, not a kind of member (Wekan): members stay one kind."""
    tools = [
        _tool("boards_members_get", "Get a member of a board", {"board": ID, "member": ID}, ["board", "member"]),
        _tool("boards_members_remove", "Remove a board member", {"board": ID, "member": ID}, ["board", "member"]),
        _tool("cards_members_get", "Get a card member", {"card": ID, "user": ID}, ["card", "user"]),
        _tool("cards_members_remove", "Remove a card member", {"card": ID, "user": ID}, ["card", "user"]),
    ]
    s = _schema(tmp_path, tools)
    assert not [e for e in s.entities if e.endswith("Member") and e != "Member"]


def test_a_date_is_sent_only_in_the_format_the_search_states(tmp_path):
    """SGD's `FindEvents(date)` says 'MM/DD/YYYY' and `BuyEventTickets(date)` 'YYYY-MM-DD' (the real docs): the world's
    dates are ISO, so the search is never narrowed by one (review 56: 8 of 8 ticket tasks sent "2024-05-23" to a
    'MM/DD/YYYY' filter); the user still says the day, and the purchase takes the found event's date."""
    import json

    from forgec.wording import fits_doc_format

    assert fits_doc_format("05/23/2024", "The date of the event, formatted as 'MM/DD/YYYY'.")
    assert not fits_doc_format("2024-05-23", "The date of the event, formatted as 'MM/DD/YYYY'.")
    assert fits_doc_format("2024-05-23", "in the format 'YYYY-MM-DD'") and fits_doc_format("anything", "The date")
    assert not fits_doc_format("2pm", "Time in HH:MM format")
    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    res = compile_build(CompileOptions(inputs=[BROAD / "bfcl_sgd_movies_events"], out=out, tasks_per_env=12, seed=0, oracle_check=False))
    assert not [d for d in res.diagnostics if d.is_error]
    tasks = [json.loads(line) for f in sorted((out / "tasks").glob("*.jsonl")) for line in f.read_text().splitlines()]
    finds = [c for t in tasks for c in t["gold_calls"] if c["tool"] == "Events_3_FindEvents"]
    assert finds, "the ticket tasks look the event up"
    assert all(fits_doc_format(c["arguments"].get("date", "05/01/2024"), "MM/DD/YYYY") for c in finds)


def test_the_gate_refuses_a_date_in_another_format_than_the_docs_state():
    """The gate's own check, independent of how the sampler chose values: an argument that is a date written other
    than the doc says is `value-outside-docs`."""
    from forgec.gate import check_values
    from forgec.lang import ast as A

    class _P:
        def __init__(self, name, doc):
            self.name, self.doc, self.type = name, doc, A.PrimType("str")

    class _T:
        doc = "Find cultural events by type and city."
        params = (_P("date", "The date of the event, formatted as 'MM/DD/YYYY'."),)

    class _G:
        tools = {"find": _T()}
        either: dict = {}
        ents: dict = {}

    def verdict(v):
        return check_values(None, _G(), [("find", {"date": v}, {}, {}, [])])

    assert verdict("2024-05-23") == "value-outside-docs"
    assert verdict("05/23/2024") is None


def test_few_records_are_drills_or_tests():
    """A flag saying a record is an exercise (`isDrill`, `is_test`, `demo`) is set on few records, as one that ends a
    record is: most incidents are real (review 56: half of Grafana's incidents were drills, and a customer's report
    was posted to one). An ordinary switch stays even."""
    import random

    from forgec.stdlib.values import generate_value

    rng = random.Random(7)
    drills = sum(generate_value({"type": "bool"}, "isDrill", rng, entity="Incident") is True for _ in range(400))
    tests = sum(generate_value({"type": "bool"}, "is_test", rng, entity="Payment") is True for _ in range(400))
    public = sum(generate_value({"type": "bool"}, "isPublic", rng, entity="Board") is True for _ in range(400))
    assert drills < 80 and tests < 80  # about 10%
    assert 140 < public < 260  # about half


def test_a_parameter_the_tool_doc_lets_pass_by_name_is_name_addressed():
    """Zotero's `create_collection` doc: "pass parent_collection (not parent_key) as either a collection key (...), a
    collection name, or a 'Parent/Child' path"; `update_collection`: "parent_collection: key, name or 'Parent/Child'
    path". A lookup of the parent's key is needless there (review 56: two sub-collection creates whose one lookup
    the docs make optional); a param the sentence does not name is not."""
    from forgec.gate import _said_by_name

    create = ("Create a new collection (project/folder) in your Zotero library. To create a subcollection, pass "
              "parent_collection (not parent_key) as either a collection key (8-character string like 'KMMQDFQ4'), a "
              "collection name, or a 'Parent/Child' path when the name is shared. Use zotero_search_collections to find keys.")
    update = ("Rename a collection. collection_key: the 8-character key of the collection to change. name: the new name, "
              "or omit to keep it. parent_collection: key, name or 'Parent/Child' path of the new parent.")
    assert _said_by_name(create, "parent_collection") and _said_by_name(update, "parent_collection")
    assert not _said_by_name(update, "collection_key") and not _said_by_name(create, "name")
    assert not _said_by_name("Move the card. list_id: the ID of the target list.", "list_id")


def test_a_detail_level_is_how_much_a_listing_shows_not_a_field():
    """`detail: keys_only|summary|full` (Zotero), `toolDetail: compact|summary|full` (Firecrawl), `model: minimal|full`
    (Postman) shape the answer; none is a field the records hold or a filter on them."""
    from forgec import ir
    from forgec.synth.schema import is_modifier

    def param(name, values):
        return ir.Param(name=name, type=ir.Type(kind="string", values=tuple(values)), description="")

    assert is_modifier(param("detail", ["keys_only", "summary", "full"]))
    assert is_modifier(param("toolDetail", ["compact", "summary", "full"]))
    assert is_modifier(param("model", ["minimal", "full"]))
    assert not is_modifier(param("priority", ["low", "medium", "high"]))
    assert not is_modifier(param("status", ["draft", "full", "closed"]))


def test_an_intent_is_said_as_what_the_user_wants_to_do():
    """SGD's `FindHomeByArea(intent: rent|buy)`: "a home to rent", not "with the rent intent" (review 56)."""
    from forgec.scenario import qualifier

    assert qualifier("intent", "rent") == "to rent" and qualifier("intent", "buy") == "to buy"
    assert qualifier("purpose", "business") == "for business"
    assert qualifier("color", "red") == "with the red color"  # other choices as before


def test_what_a_call_does_when_something_exists_is_no_field():
    """`if_exists`, `If_Match`, `ifNotExists`, `create_missing_collections`, `search_all_libraries`, a "Query mode":
    how the call behaves or where it looks, never a record's field (review 56: Zotero items held `if_exists`)."""
    from forgec.synth.schema import shapes_request

    for name in ("if_exists", "If_Match", "ifNotExists", "create_missing_collections", "search_all_libraries"):
        assert shapes_request(name, ""), name
    assert shapes_request("qmode", "Query mode (titleCreatorYear or everything)")
    assert not shapes_request("identifier", "") and not shapes_request("mode", "Light or dark mode")
    assert not shapes_request("ifc_code", "")


def test_one_write_does_not_end_a_record_and_edit_it():
    """Review 57: "set its status to Cancelled and its assignment priority to Medium" in one update. The gate refuses a
    write that moves a record's status to an end and changes another of its fields; bookkeeping stamps do not count."""
    from forgec.gate import _ended_and_edited
    from forgec.tasks import state_diff

    before = {"entities": {"Task": {"t1": {"name": "t1", "status": "Open", "assignment_priority": "Low", "modified": "a"}}}}

    def after(**kw):
        rec = dict(before["entities"]["Task"]["t1"], **kw)
        return {"entities": {"Task": {"t1": rec}}}

    assert _ended_and_edited(state_diff(before, after(status="Cancelled", assignment_priority="Medium")))
    assert not _ended_and_edited(state_diff(before, after(status="Cancelled", modified="b")))  # a stamp is bookkeeping
    assert not _ended_and_edited(state_diff(before, after(status="Working", assignment_priority="Medium")))  # no end


def test_a_record_let_go_of_is_one_not_in_use():
    """Review 57: "Since I no longer need it, ... delete my configuration ..., but only if it is enabled". A delete's
    flag condition asks for the side that means out of use."""
    from forgec.scenario import _IDLE_FLAGS, _flag_word
    from forgec.english import is_ending_state

    def idle(field):
        w = _flag_word(field)
        return is_ending_state(w) or w in _IDLE_FLAGS

    assert not idle("enabled") and not idle("isActive") and not idle("is_public")
    assert idle("disabled") and idle("is_archived") and idle("paused")


def test_a_create_param_named_for_the_made_record_is_its_name(tmp_path):
    """GitLab's `create_branch(project_id, branch, ref)`: `branch` is the new branch's name, "create a new branch called
    "fix/x" in my project called Y", never "with branch fix/x" (review 57). Checked on the real GitLab docs."""
    import json

    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    res = compile_build(CompileOptions(inputs=[BROAD / "npm_zereight_mcp_gitlab"], out=out, tasks_per_env=40, seed=0, oracle_check=False))
    assert not [d for d in res.diagnostics if d.is_error]
    tasks = [json.loads(line) for f in sorted((out / "tasks").glob("*.jsonl")) for line in f.read_text().splitlines()]
    made = [t for t in tasks if any(c["tool"] == "create_branch" for c in t["gold_calls"])]
    assert made, "the build makes branches"
    for t in made:
        branch = next(c for c in t["gold_calls"] if c["tool"] == "create_branch")["arguments"]["branch"]
        assert f'branch called "{branch}"' in t["instruction"], t["instruction"]
        assert "with branch" not in t["instruction"]
