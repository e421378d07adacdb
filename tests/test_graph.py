"""The tool dependency graph: hand-listed edges that must / must not exist, on hand-written envs
and on the real tau-bench docs (read + synthesized), plus its renderings and the CLI."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from conftest import CORPUS
from forgec.graph import build_graph, norm, path_str, returned_name, singular
from forgec.lang import ast as A
from test_sample_envs import AIRLINE, RETAIL

# --------------------------------------------------------------------------- name helpers


def test_names_normalize_camel_snake_and_plural():
    assert norm("orderId") == norm("order_id") == norm("OrderID") == norm("order-id") == "order_id"
    assert singular("orders") == "order" and singular("categories") == "category" and singular("addresses") == "address"
    # one singular for the graph and synthesis: a word that only looks plural stays as it is
    from forgec import english

    assert singular is english.singular
    assert [singular(w) for w in ("status", "statuses", "boxes", "analysis", "people", "houses")] == ["status", "status", "box", "analysis", "person", "house"]
    assert returned_name("find_user_id_by_email") == "user_id"
    assert returned_name("get_user_details") == "user_details"
    assert returned_name("list_all_product_types") == "all_product_types"


# --------------------------------------------------------------------------- hand-written envs

RETAIL_EXPECTED = [
    # (src, dst, param, path, evidence, mode)
    ("get_user_details", "get_order_details", "order_id", "orders[*]", "entity", "value"),
    ("get_user_details", "cancel_pending_order", "order_id", "orders[*]", "entity", "value"),
    ("get_order_details", "cancel_pending_order", "order_id", "order_id", "entity", "value"),
    ("find_user_id_by_email", "get_user_details", "user_id", "", "name", "value"),
    ("find_user_id_by_name_zip", "get_user_details", "user_id", "", "name", "value"),
    ("get_user_details", "modify_pending_order_payment", "payment_method_id", "payment_methods[*].id", "id", "value"),
    ("get_order_details", "return_delivered_order_items", "item_ids", "items[*].item_id", "name", "wrap"),
    ("get_order_details", "get_user_details", "user_id", "user_id", "entity", "value"),
    ("list_products_by_category", "get_product_details", "product_id", "[*].product_id", "entity", "value"),
    # a primitive `product_id: str` parameter is still an entity key by its name
    ("get_order_details", "restock_product", "product_id", "items[*].product_id", "name", "value"),
    ("get_user_details", "find_user_id_by_name_zip", "zip", "address.zip", "name", "value"),
]

AIRLINE_EXPECTED = [
    ("get_user_details", "get_reservation_details", "reservation_id", "reservations[*]", "entity", "value"),
    ("get_reservation_details", "update_reservation_flights", "reservation_id", "reservation_id", "entity", "value"),
    ("get_reservation_details", "cancel_reservation", "reservation_id", "reservation_id", "entity", "value"),
    # a record parameter assembled from a search result's fields (flight_number + date)
    ("search_direct_flight", "book_reservation", "flights", "[*]", "shape", "record_wrap"),
    ("search_direct_flight", "update_reservation_flights", "flights", "[*]", "shape", "record_wrap"),
    ("get_reservation_details", "book_reservation", "passengers", "passengers", "shape", "value"),
    # `payment_id` from a record named PaymentMethod's `id`
    ("get_user_details", "book_reservation", "payment_id", "payment_methods[*].id", "id", "value"),
    ("get_reservation_details", "search_direct_flight", "origin", "origin", "name", "value"),
]


def _edge_set(g):
    return {(e.src, e.dst, e.param, path_str("", e.path).lstrip("."), e.evidence, e.mode) for e in g.edges()}


@pytest.mark.parametrize("env,expected", [(RETAIL, RETAIL_EXPECTED), (AIRLINE, AIRLINE_EXPECTED)], ids=["retail", "airline"])
def test_hand_env_expected_edges(env, expected):
    edges = _edge_set(build_graph(env))
    missing = [e for e in expected if e not in edges]
    assert not missing, missing


def test_hand_env_edges_that_must_not_exist():
    g = build_graph(RETAIL)
    # free text / unmatched primitives stay user-provided: never matched by type alone
    assert g.edges_into("transfer_to_human_agents") == []
    assert g.edges_into("cancel_pending_order", "reason") == []
    assert g.edges_into("restock_product", "quantity") == []
    # an `email` string is not fed by any other string (first_name, city, ...)
    assert {e.src for e in g.edges_into("find_user_id_by_email", "email")} == {"get_user_details", "modify_user_address"}
    assert all(e.path[-1] == "email" for e in g.edges_into("find_user_id_by_email", "email"))
    # no self loops
    assert all(e.src != e.dst for e in g.edges())
    ga = build_graph(AIRLINE)
    assert ga.edges_into("think") == []
    # a Flight id is not a reservation id; a user's id is not a payment id
    assert not any(e.param == "reservation_id" and e.path and e.path[-1] in ("flight_id", "user_id") for e in ga.edges())
    assert not any(e.param == "payment_id" and e.path and e.path[-1] == "user_id" for e in ga.edges())


def test_user_provided_params():
    g = build_graph(RETAIL)
    assert g.user_provided("cancel_pending_order") == ["reason"]
    assert g.user_provided("transfer_to_human_agents") == ["summary"]
    assert g.user_provided("restock_product") == ["quantity"]
    assert g.user_provided("get_user_details") == []  # find_user_id_by_* supply it
    ga = build_graph(AIRLINE)
    assert ga.user_provided("think") == ["thought"]


def test_exclude_and_writes_override():
    g = build_graph(RETAIL, exclude={"get_order_details"}, writes={"transfer_to_human_agents": False})
    assert "get_order_details" not in g.tools
    assert not any("get_order_details" in (e.src, e.dst) for e in g.edges())
    assert g.writes("cancel_pending_order") and not g.writes("transfer_to_human_agents")
    assert not g.writes("get_user_details")


def _name_evidence_is_sound(g):
    """Independent restatement of the rule: a primitive param is fed only with name evidence."""
    bad = []
    for e in g.edges():
        if e.evidence != "name":
            continue
        leaf = [s for s in e.path if s != "*"]
        leaf_name = leaf[-1] if leaf else returned_name(e.src)
        p = norm(e.param)
        if norm(leaf_name) not in (p, singular(p)) and not p.endswith("_id"):
            bad.append(e.label)
    return bad


def test_name_edges_always_share_the_name():
    assert _name_evidence_is_sound(build_graph(RETAIL)) == []
    assert _name_evidence_is_sound(build_graph(AIRLINE)) == []


def test_primitive_strings_never_matched_by_type_alone():
    """An env where two tools share only `str` types (different names) has no edges at all."""
    s = A.PrimType("str")
    env = A.EnvDecl("t", None, (), (), (
        A.ToolDecl("get_note", (A.ParamDecl("title", s),), A.RecordType((A.FieldDecl("body", s), A.FieldDecl("author", s))), python="return {}", annotations=("read",)),
        A.ToolDecl("send_message", (A.ParamDecl("reason", s), A.ParamDecl("text", s)), s, python="return ''", annotations=("action",)),
    ))
    g = build_graph(env)
    assert g.edges() == []
    assert g.user_provided("send_message") == ["reason", "text"]


# --------------------------------------------------------------------------- renderings


def test_renderings_dot_mermaid_json():
    g = build_graph(RETAIL)
    dot = g.to_dot()
    assert dot.startswith("digraph retail {") and dot.rstrip().endswith("}")
    # one node line per tool, writes are boxes, reads ellipses; one edge line per edge
    for t in g.tools:
        line = next(l for l in dot.splitlines() if re.match(rf"\s+{t} \[", l))
        assert ("shape=box" in line) == g.writes(t)
        assert ("shape=ellipse" in line) == (not g.writes(t))
    assert sum(1 for l in dot.splitlines() if " -> " in l) == len(g.edges())
    mer = g.to_mermaid()
    assert mer.startswith("flowchart LR")
    assert mer.count(":::write") == sum(g.writes(t) for t in g.tools)
    assert mer.count(":::read") == sum(not g.writes(t) for t in g.tools)
    assert "classDef read" in mer and "classDef write" in mer
    js = json.loads(json.dumps(g.to_json()))
    assert len(js["edges"]) == len(g.edges())
    assert {t["name"] for t in js["tools"]} == set(g.tools)
    assert next(t for t in js["tools"] if t["name"] == "cancel_pending_order")["user_provided"] == ["reason"]
    assert "get_user_details.orders[*] -> get_order_details.order_id" in {e["label"] for e in js["edges"]}


def test_graph_is_deterministic():
    assert build_graph(AIRLINE).to_dot() == build_graph(AIRLINE).to_dot()
    assert json.dumps(build_graph(RETAIL).to_json()) == json.dumps(build_graph(RETAIL).to_json())


# --------------------------------------------------------------------------- the real tau-bench docs


@pytest.fixture(scope="module")
def corpus_graphs():
    from forgec.frontends import read_paths
    from forgec.synth import synthesize

    out = {}
    for d in ("tau_bench_retail", "tau_bench_airline"):
        envs, diags = read_paths([CORPUS / d])
        decl, _ = synthesize(envs[0])
        out[d] = build_graph(decl)
    return out


TAU_EXPECTED = {
    "tau_bench_retail": [
        ("get_user_details", "get_order_details", "order_id", None),
        ("get_user_details", "cancel_pending_order", "order_id", None),
        ("get_order_details", "cancel_pending_order", "order_id", "order_id"),
        ("get_order_details", "return_delivered_order_items", "order_id", None),
        ("get_order_details", "modify_pending_order_payment", "payment_method_id", None),
        ("find_user_id_by_email", "get_user_details", "user_id", None),
        ("find_user_id_by_name_zip", "get_user_details", "user_id", None),
        ("get_user_details", "modify_user_address", "user_id", None),
        ("get_user_details", "find_user_id_by_email", "email", "email"),
        ("list_all_product_types", "get_product_details", "product_id", None),
    ],
    "tau_bench_airline": [
        # (the synthesizer decides whether the user's reservations come as `reservations[*]` or as
        # a returned list; the edge must exist either way, so its path is not pinned here)
        ("get_user_details", "get_reservation_details", "reservation_id", None),
        ("get_user_details", "cancel_reservation", "reservation_id", None),
        ("get_reservation_details", "update_reservation_flights", "reservation_id", "reservation_id"),
        ("get_reservation_details", "update_reservation_baggages", "reservation_id", None),
        ("get_reservation_details", "update_reservation_passengers", "passengers", None),
        ("get_reservation_details", "get_user_details", "user_id", None),
        ("search_direct_flight", "book_reservation", "flights", "[*]"),
        ("search_direct_flight", "update_reservation_flights", "flights", "[*]"),
        ("get_reservation_details", "search_direct_flight", "origin", None),
    ],
}

# (dst, param) that no tool may feed: free text
TAU_NO_FEED = {
    "tau_bench_retail": [("transfer_to_human_agents", "summary"), ("think", "thought"), ("calculate", "expression")],
    "tau_bench_airline": [("transfer_to_human_agents", "summary"), ("think", "thought"), ("calculate", "expression")],
}


@pytest.mark.parametrize("env", ["tau_bench_retail", "tau_bench_airline"])
def test_tau_bench_expected_edges(corpus_graphs, env):
    g = corpus_graphs[env]
    missing = [x for x in TAU_EXPECTED[env] if not g.has_edge(x[0], x[1], x[2], x[3])]
    assert not missing, missing


@pytest.mark.parametrize("env", ["tau_bench_retail", "tau_bench_airline"])
def test_tau_bench_edges_that_must_not_exist(corpus_graphs, env):
    g = corpus_graphs[env]
    for dst, p in TAU_NO_FEED[env]:
        assert g.edges_into(dst, p) == [], (dst, p, [e.label for e in g.edges_into(dst, p)])
        assert p in g.user_provided(dst)
    assert _name_evidence_is_sound(g) == []
    # reads never feed the same tool; a search result's dates never feed a reservation id
    assert all(e.src != e.dst for e in g.edges())
    assert not any(e.param == "reservation_id" and e.path and e.path[-1] == "date" for e in g.edges())


# --------------------------------------------------------------------------- CLI


def test_cli_graph_json_and_errors(tmp_path):
    from forgec.cli import app

    runner = CliRunner()
    corpus = CORPUS / "tau_bench_airline"
    out = tmp_path / "g.json"
    r = runner.invoke(app, ["graph", str(corpus), "--format", "json", "-o", str(out)])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert any(e["from"] == "get_user_details" and e["to"] == "get_reservation_details" and e["param"] == "reservation_id"
               and e["evidence"] == "entity" and "[*]" in e["path"] for e in data["edges"])
    r = runner.invoke(app, ["graph", str(corpus), "--format", "mermaid"])
    assert r.exit_code == 0 and r.stdout.startswith("flowchart LR")
    r = runner.invoke(app, ["graph", str(corpus), "--env", "airlines"])
    assert r.exit_code == 1 and "no-env" in r.output and "tau_bench_airline" in r.output
    r = runner.invoke(app, ["graph", str(tmp_path / "nope")])
    assert r.exit_code == 1 and "error[path-not-found]: no such file or folder" in r.output
    r = runner.invoke(app, ["graph", str(corpus), "--format", "png", "-o", str(tmp_path / "g.png")])
    if shutil.which("dot"):
        assert r.exit_code == 0 and (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    else:
        assert r.exit_code == 1 and "graphviz-missing" in r.output


def test_scalar_edges_follow_the_checkers_type_rules():
    """Same names, incompatible types: an enum feeds an enum only with a subset of its values,
    a float never feeds an int (an int may feed a float)."""
    E = A.EnumType
    flight = A.RecordType((A.FieldDecl("status", E(("scheduled", "cancelled"))), A.FieldDecl("price", A.PrimType("float")),
                           A.FieldDecl("seats", A.PrimType("int"))))
    tool = lambda name, params, ret=A.PrimType("str"): A.ToolDecl(name, tuple(A.ParamDecl(n, t) for n, t in params), ret,  # noqa: E731
                                                                   python="return None", annotations=("update",))
    env = A.EnvDecl("t", None, (), (), (
        A.ToolDecl("get_flight", (), flight, python="return {}", annotations=("read",)),
        tool("set_booking_status", [("status", E(("confirmed", "cancelled")))]),
        tool("set_flight_status", [("status", E(("scheduled", "cancelled", "delayed")))]),
        tool("set_note_status", [("status", A.PrimType("str"))]),
        tool("set_price", [("price", A.PrimType("int"))]),
        tool("set_seats", [("seats", A.PrimType("float"))]),
    ))
    g = build_graph(env)
    assert not g.has_edge("get_flight", "set_booking_status", "status")
    assert g.has_edge("get_flight", "set_flight_status", "status", "status")
    assert g.has_edge("get_flight", "set_note_status", "status", "status")
    assert not g.has_edge("get_flight", "set_price", "price")
    assert g.has_edge("get_flight", "set_seats", "seats", "seats")


def test_scalar_fits_is_the_checkers_verdict_on_a_real_blueprint():
    """An edge may carry a value only where the checker accepts it: for every pair of scalar types,
    `scalar_fits` says what `forgec check` says about a blueprint passing one tool's result to the other."""
    from forgec import lang
    from forgec.graph import prim_class, scalar_fits
    from forgec.lang import ast as A

    types = ['str', 'int', 'float', 'bool', 'any', 'enum("a", "b")', 'enum("a")', 'enum(1, 2)', 'int?', 'enum("b", "c")?']
    for i, src in enumerate(types):
        for j, dst in enumerate(types):
            text = (f"env e {{\n  @read\n  tool get() -> {src} {{ return get_v() }}\n  @update\n  tool put(x: {dst}) -> bool {{ return true }}\n}}\n"
                    "blueprint b for e {\n  user { goal \"g\" }\n  call a = get()\n  call p = put(x: a)\n}\n")
            text = text.replace("{ return get_v() }", "python \"\"\"\nreturn None\n\"\"\"")
            m, d = lang.parse(text, "t.forge")
            assert not d, (text, d)
            mismatch = any(x.code == "type-mismatch" for x in lang.check([m]))
            tool_get, tool_put = m.envs[0].tools
            assert scalar_fits(tool_get.returns, tool_put.params[0].type) == (not mismatch), (src, dst)
    assert [prim_class(A.PrimType(n)) for n in ("str", "int", "float", "bool", "any")] == ["str", "num", "num", "bool", "any"]
