"""Rules from this session's broad-corpus sweep and blind review 68. Checked against hand-built inputs and
hand-computed expectations, not against forgec's own output."""

from __future__ import annotations

from forgec.lang import ast as A
from forgec.scenario import _drop_lookups


def test_a_dropped_write_keeps_the_list_a_later_check_reads():
    """A create whose condition fails is left out with the lookups made for it, but the list its parent lookup read is
    also what "unless I already have a collection called X" counts: that list stays (zotero compiled to a blueprint
    naming a node it had dropped), while the parent filter made only for the write goes."""
    nodes = [
        A.CallNode("collections", "get_collections", ()),  # lookup for the write ...
        A.ReasonNode("parent", "filter", (A.Name("collections"),), (A.Arg("by", A.Name("name")),)),  # ... and only for it
        A.ReasonNode("named_so", "filter", (A.Name("collections"),), (A.Arg("eq", A.Attr(A.Name("user"), "name")),)),
        A.ReasonNode("n_named_so", "count", (A.Name("named_so"),)),
    ]
    kept, gone = _drop_lookups(nodes, 0, 2)
    assert [n.name for n in kept] == ["collections", "named_so", "n_named_so"]
    assert gone == {"parent"}


def test_a_dropped_write_takes_every_lookup_nothing_else_reads():
    nodes = [
        A.CallNode("me", "whoami", ()),
        A.CallNode("agents", "list_agents", ()),
        A.ReasonNode("agent", "first", (A.Name("agents"),)),
        A.CallNode("other", "list_other", ()),
        A.ReasonNode("n", "count", (A.Name("other"),)),
    ]
    kept, gone = _drop_lookups(nodes, 1, 3)
    assert [n.name for n in kept] == ["me", "other", "n"]
    assert gone == {"agents", "agent"}


def _synth(tmp, tools):
    import json

    from forgec.frontends import read_paths
    from forgec.synth import synthesize

    d = tmp / "docs"
    d.mkdir()
    (d / "tools_list.json").write_text(json.dumps({"tools": tools}))
    envs, _ = read_paths([d])
    decl, _ = synthesize(envs[0])
    return {t.name: t for t in decl.tools}


def test_a_delete_named_for_a_part_of_a_record_never_deletes_the_record(tmp_path):
    """`delete_user_image(user_id)` ("Delete the user's image") and `delete_product_variants(productId, ...)` deleted
    the user and the product (jellyfin, shopify): the noun after the record's name is what goes. With no such record
    documented, the call is logged; `delete_user` and `delete_user_by_id` still delete the user."""
    from conftest import mcp_tool

    uid = {"user_id": {"type": "string", "description": "The user's ID."}}
    tools = _synth(tmp_path, [
        mcp_tool("list_users", "List users.", {}),
        mcp_tool("get_user", "Get a user.", uid, ["user_id"]),
        mcp_tool("create_user", "Create a user.", {"name": {"type": "string", "description": "The user's name."}}, ["name"]),
        mcp_tool("delete_user", "Delete a user.", uid, ["user_id"]),
        mcp_tool("delete_user_by_id", "Delete a user by ID.", uid, ["user_id"]),
        mcp_tool("delete_user_image", "Delete the user's image.", uid, ["user_id"]),
        mcp_tool("delete_user_permanently", "Delete a user for good.", uid, ["user_id"]),
    ])
    from forgec.lang import ast as A

    def deletes(t):
        return any(isinstance(n, A.Delete) for n in A.walk(t.body))

    assert "conservative" in tools["delete_user_image"].annotations and not deletes(tools["delete_user_image"])
    for name in ("delete_user", "delete_user_by_id", "delete_user_permanently"):
        assert "conservative" not in tools[name].annotations and deletes(tools[name]), name
