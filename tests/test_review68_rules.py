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
