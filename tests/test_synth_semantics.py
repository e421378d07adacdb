"""Semantics a real system has, on small hand-written docs (expected answers written here by
reading the docs): status verbs move the documented status, the docs' allowed/forbidden
states become preconditions, ids are typed by what they name, record reads return the record."""

from __future__ import annotations

from forgec import ir
from forgec.lang import ast as A
from forgec.synth import classify_tool, synthesize

S = ir.Type(kind="string")
I = ir.Type(kind="integer")
F = ir.Type(kind="number")


def P(name, t=S, required=True, desc=""):
    return ir.Param(name=name, type=t, required=required, description=desc)


def T(name, desc="", params=(), **kw):
    return ir.Tool(name=name, description=desc, params=tuple(params), **kw)


def enum(*vals):
    return ir.Type(kind="enum", values=tuple(vals))


def obj(**fields):
    return ir.Type(kind="object", fields=tuple(ir.Field_(name=k, type=v, required=True) for k, v in fields.items()))


def arr(t):
    return ir.Type(kind="array", items=t)


def status(k, v):
    return A.Binary("==", A.Attr(A.Name(k), "status"), A.Literal(v))


def kind_of(t: A.ToolDecl) -> str:
    return next(a for a in t.annotations if a in ("read", "search", "create", "update", "delete", "action"))


def checks_clean(decl):
    from forgec import lang
    from forgec.diagnostics import has_errors, render

    text = lang.format(A.Module(file="t.forge", items=(decl,)))
    module, pd = lang.parse(text, "t.forge")
    cd = lang.check([module]) if not has_errors(pd) else []
    assert not has_errors(pd + cd), render(pd + cd, "concise") + "\n" + text


RESERVATION = obj(
    reservation_id=S,
    user_id=S,
    status=enum("confirmed", "checked_in", "cancelled"),
)

AIRLINE = ir.Environment(
    name="air",
    tools=(
        T("get_reservation_details", "Get a reservation.", [P("reservation_id")], returns=RESERVATION),
        T("list_user_reservations", "List all reservations of a user with their flight and status.", [P("user_id")], returns=arr(RESERVATION)),
        T("check_in", "Check in all passengers of a confirmed reservation.", [P("reservation_id")]),
        T("cancel_reservation", "Cancel a reservation. Checked-in reservations cannot be cancelled.", [P("reservation_id")]),
        T("get_user_details", "Get a user's profile, including their reservations.", [P("user_id")]),
    ),
)


def test_check_in_moves_status_to_checked_in_from_confirmed():
    decl, _ = synthesize(AIRLINE)
    t = decl.tool("check_in")
    assert kind_of(t) == "update"
    # "a confirmed reservation" -> precondition; the documented enum spells the state "checked_in"
    assert t.body[0] == A.Require(status("reservation_id", "confirmed"), "reservation is not confirmed")
    assert A.Set(A.Attr(A.Name("reservation_id"), "status"), A.Literal("checked_in")) in t.body
    # the enum stays the documented one (no "checkedin" spelling added)
    st = next(f.type for f in decl.entity("Reservation").fields if f.name == "status")
    assert st == A.EnumType(("confirmed", "checked_in", "cancelled"))
    checks_clean(decl)


def test_forbidden_state_from_the_docs():
    decl, _ = synthesize(AIRLINE)
    body = decl.tool("cancel_reservation").body
    # "Checked-in reservations cannot be cancelled"
    assert A.Require(A.Binary("!=", A.Attr(A.Name("reservation_id"), "status"), A.Literal("checked_in")), "reservation is checked_in") in body
    assert A.Set(A.Attr(A.Name("reservation_id"), "status"), A.Literal("cancelled")) in body


def test_check_in_spellings_classify_as_update():
    for name in ("check_in", "checkIn", "checkin_reservation", "check-in"):
        assert classify_tool(T(name, "", [P("reservation_id")])) == "update", name
    # a plain "check" is still a read
    assert classify_tool(T("check_availability", "", [P("flight_id")])) == "read"


def test_status_verb_only_with_documented_value():
    ticket = obj(ticket_id=S, assignee_id=S, status=enum("open", "assigned", "closed"))
    env = ir.Environment(
        name="hd",
        tools=(
            T("get_ticket", "Get a ticket.", [P("ticket_id")], returns=ticket),
            T("search_tickets", "Search tickets.", [P("assignee_id", required=False, desc="Only tickets assigned to this agent.")], returns=arr(ticket)),
            T("assign_ticket", "Assign an open ticket to an agent.", [P("ticket_id"), P("agent_id")]),
            T("ship_ticket", "Ship a ticket.", [P("ticket_id")]),
        ),
    )
    decl, _ = synthesize(env)
    body = decl.tool("assign_ticket").body
    assert body[0] == A.Require(status("ticket_id", "open"), "ticket is not open")
    assert A.Set(A.Attr(A.Name("ticket_id"), "status"), A.Literal("assigned")) in body
    # "shipped" is no documented ticket state: no status change is invented
    ship = decl.tool("ship_ticket")
    assert not any(isinstance(st, A.Set) and st.target == A.Attr(A.Name("ticket_id"), "status") for st in ship.body)
    st = next(f.type for f in decl.entity("Ticket").fields if f.name == "status")
    assert st == A.EnumType(("open", "assigned", "closed"))


def test_several_allowed_states():
    order = obj(order_id=S, status=enum("pending", "paid", "shipped", "cancelled"))
    env = ir.Environment(
        name="shop",
        tools=(
            T("get_order", "Get an order.", [P("order_id")], returns=order),
            T("cancel_order", "Cancel a pending or paid order (not a shipped one).", [P("order_id")]),
            T("ship_order", "Ship a paid order.", [P("order_id")]),
        ),
    )
    decl, _ = synthesize(env)
    want = A.Require(A.Binary("or", status("order_id", "pending"), status("order_id", "paid")), "order is not pending or paid")
    assert decl.tool("cancel_order").body[0] == want
    ship = decl.tool("ship_order").body
    assert ship[0] == A.Require(status("order_id", "paid"), "order is not paid")
    assert A.Set(A.Attr(A.Name("order_id"), "status"), A.Literal("shipped")) in ship
    checks_clean(decl)


def test_no_field_named_after_the_listed_entity():
    decl, _ = synthesize(AIRLINE)
    names = [f.name for f in decl.entity("Reservation").fields]
    # "List all reservations of a user" names the listed entity, not an attribute `reservation`
    assert "reservation" not in names
    assert names[:2] == ["reservation_id", "user_id"]


def test_record_read_returns_the_record_not_its_children():
    decl, _ = synthesize(AIRLINE)
    t = decl.tool("get_user_details")
    assert kind_of(t) == "read" and t.returns == A.NamedType("User")
    assert t.body == (A.Return(A.Name("user_id")),)
    users = {f.name: f.type for f in decl.entity("User").fields}
    assert users["reservations"] == A.ListType(A.NamedType("Reservation"))


def test_payment_id_is_a_payment_method_not_a_user():
    pay = obj(payment_id=P("x").type, amount=F)
    env = ir.Environment(
        name="tau",
        tools=(
            T("get_user_details", "Get the details of a user.", [P("user_id")]),
            T(
                "book_reservation",
                "Book a reservation.",
                [P("user_id"), P("payment_methods", arr(pay), desc="Payment methods.")],
            ),
            T(
                "update_reservation_baggages",
                "Update the baggage information of a reservation.",
                [P("reservation_id"), P("total_baggages", I), P("payment_id", desc="The payment id stored in user profile, such as 'credit_card_7815826'.")],
            ),
        ),
    )
    decl, _ = synthesize(env)
    t = decl.tool("update_reservation_baggages")
    ptype = next(p.type for p in t.params if p.name == "payment_id")
    assert ptype == A.NamedType("PaymentMethod")
    assert decl.entity("PaymentMethod").key == "payment_id"
    # the items of `payment_methods` reference it too
    rec = next(r for r in decl.records if any(f.name == "payment_id" for f in r.fields))
    assert next(f.type for f in rec.fields if f.name == "payment_id") == A.NamedType("PaymentMethod")
    checks_clean(decl)


def test_description_alias_still_applies_without_own_noun():
    # "assigned to this agent" (no word "assignee") keeps making assignee_id an Agent
    env = ir.Environment(
        name="hd",
        tools=(
            T("get_agent", "Get an agent.", [P("agent_id")]),
            T("search_tickets", "Search tickets.", [P("assignee_id", desc="Only tickets assigned to this agent.")]),
        ),
    )
    decl, _ = synthesize(env)
    assert next(p.type for p in decl.tool("search_tickets").params if p.name == "assignee_id") == A.NamedType("Agent")


def test_path_ending_in_a_param_addresses_that_resource():
    env = ir.Environment(
        name="files",
        tools=(
            T("get_content", "", [P("path")], http_method="GET", http_path="/api/contents/{path}"),
            T("delete_checkpoint", "Delete a checkpoint", [P("path"), P("checkpoint_id")], http_method="DELETE", http_path="/api/contents/{path}/checkpoints/{checkpoint_id}"),
        ),
    )
    decl, _ = synthesize(env)
    body = decl.tool("delete_checkpoint").body
    assert A.Delete(A.Name("checkpoint_id")) in body and A.Delete(A.Name("path")) not in body


BOOK = obj(book_id=S, price=F, stock=I)
LINE_IN = obj(book_id=S, quantity=I)
LINE = obj(book_id=S, quantity=I, unit_price=F)
ORDER = obj(order_id=S, user_id=S, lines=arr(LINE), total=F, status=enum("pending", "paid", "shipped", "cancelled"))


def _body(**fields):
    return ir.Param(name="body", type=obj(**fields), required=True, location="body")


SHOP = ir.Environment(
    name="shop",
    tools=(
        T("get_book", "", [P("book_id")], http_method="GET", http_path="/books/{book_id}", returns=BOOK),
        T(
            "search_books",
            "Search books.",
            [P("max_price", F, required=False), ir.Param(name="in_stock", type=ir.Type(kind="boolean"), required=False, default=False, has_default=True, description="When true, only books with stock > 0.")],
            http_method="GET",
            http_path="/books",
            returns=arr(BOOK),
        ),
        T("get_user", "", [P("user_id")], http_method="GET", http_path="/users/{user_id}", returns=obj(user_id=S, order_ids=arr(S))),
        T("get_order", "", [P("order_id")], http_method="GET", http_path="/orders/{order_id}", returns=ORDER),
        T("create_order", "Create a pending order. Every book must have enough stock; the stock is reserved.", [_body(user_id=S, items=arr(LINE_IN))], http_method="POST", http_path="/orders", returns=ORDER),
    ),
)


def test_boolean_filter_documented_as_a_comparison_is_a_test_not_a_field():
    decl, _ = synthesize(SHOP)
    assert "in_stock" not in [f.name for f in decl.entity("Book").fields]
    where = decl.tool("search_books").body[0].value
    flag = A.Binary("or", A.Unary("not", A.Name("in_stock")), A.Binary(">", A.Attr(A.Name("it"), "stock"), A.Literal(0)))
    assert where.pred.right == flag
    checks_clean(decl)


def test_create_prices_lines_sums_total_reserves_stock_and_joins_owner():
    decl, _ = synthesize(SHOP)
    t = decl.tool("create_order")
    ins = next(st for st in t.body if isinstance(st, A.Insert))
    init = {f.name: f.value for f in ins.fields}
    items = A.Attr(A.Name("body"), "items")
    price = A.Attr(A.Index(A.Name("Book"), A.Attr(A.Name("it"), "book_id")), "price")
    assert init["lines"] == A.Call("map", (items, A.RecordLit((
        A.FieldInit("book_id", A.Attr(A.Name("it"), "book_id")),
        A.FieldInit("quantity", A.Attr(A.Name("it"), "quantity")),
        A.FieldInit("unit_price", price),
    ))))
    assert init["total"] == A.Call("sum", (items, A.Binary("*", A.Attr(A.Name("it"), "quantity"), price)))
    # the param is mapped into `lines`: no stray `items` field on Order
    assert "items" not in [f.name for f in decl.entity("Order").fields]
    loop = t.body[0]
    assert isinstance(loop, A.For) and loop.iter == items
    assert A.Require(A.Binary(">=", A.Attr(A.Name("held"), "stock"), A.Attr(A.Name("x"), "quantity")), "not enough stock") in loop.body
    assert A.Append(A.Attr(A.Name("parent"), "order_ids"), A.Attr(A.Name("created"), "order_id")) in t.body
    checks_clean(decl)


def _run(env_ir, name):
    import tempfile
    from pathlib import Path

    from forgec import lang
    from forgec.codegen import emit_env, load_env_module

    decl, _ = synthesize(env_ir)
    text = lang.format(A.Module(file=f"{name}.forge", items=(decl,)))
    module, _ = lang.parse(text, f"{name}.forge")
    tmp = Path(tempfile.mkdtemp()) / "env.py"
    tmp.write_text(emit_env(module.envs[0], f"{name}.forge"), encoding="utf-8")
    return load_env_module(tmp)


def test_running_create_order_and_check_in():
    """Run the generated code: the total, the stock and the statuses a person computes."""
    from forgec.runtime.envrt import ToolError

    mod = _run(SHOP, "shop")
    world = {
        "entities": {
            "Book": {"b1": {"book_id": "b1", "price": 10.0, "stock": 3}, "b2": {"book_id": "b2", "price": 2.5, "stock": 0}},
            "User": {"u1": {"user_id": "u1", "order_ids": []}},
            "Order": {},
        },
        "globals": {},
    }
    env = mod.Env(world)
    order = env.step("create_order", {"body": {"user_id": "u1", "items": [{"book_id": "b1", "quantity": 2}]}})
    assert order["total"] == 20.0 and order["lines"] == [{"book_id": "b1", "quantity": 2, "unit_price": 10.0}]
    assert env.state["entities"]["Book"]["b1"]["stock"] == 1
    assert env.state["entities"]["User"]["u1"]["order_ids"] == [order["order_id"]]
    err = env.step("create_order", {"body": {"user_id": "u1", "items": [{"book_id": "b2", "quantity": 1}]}})
    assert isinstance(err, ToolError) and err.message == "not enough stock"
    assert [b["book_id"] for b in env.step("search_books", {"in_stock": True})] == ["b1"]
    assert len(env.step("search_books", {})) == 2

    air = _run(AIRLINE, "air").Env({
        "entities": {
            "User": {"u1": {"user_id": "u1", "reservations": []}},
            "Reservation": {
                "r1": {"reservation_id": "r1", "user_id": "u1", "status": "confirmed"},
                "r2": {"reservation_id": "r2", "user_id": "u1", "status": "cancelled"},
            },
        },
        "globals": {},
    })
    assert air.step("check_in", {"reservation_id": "r1"})["status"] == "checked_in"
    err = air.step("cancel_reservation", {"reservation_id": "r1"})
    assert isinstance(err, ToolError) and err.message == "reservation is checked_in"
    err = air.step("check_in", {"reservation_id": "r2"})
    assert isinstance(err, ToolError) and err.message == "reservation is not confirmed"


def test_that_is_not_state_is_forbidden():
    ticket = obj(ticket_id=S, priority=I, status=enum("open", "resolved", "closed"))
    env = ir.Environment(
        name="hd",
        tools=(
            T("get_ticket", "Get a ticket.", [P("ticket_id")], returns=ticket),
            T("set_ticket_priority", "Change the priority of a ticket that is not closed.", [P("ticket_id"), P("priority", I)]),
        ),
    )
    decl, _ = synthesize(env)
    body = decl.tool("set_ticket_priority").body
    assert body[0] == A.Require(A.Binary("!=", A.Attr(A.Name("ticket_id"), "status"), A.Literal("closed")), "ticket is closed")
    assert A.Set(A.Attr(A.Name("ticket_id"), "priority"), A.Name("priority")) in body


def test_capacity_and_same_team_on_assignment_executed():
    from forgec.runtime.envrt import ToolError

    team = enum("billing", "technical")
    agent = obj(agent_id=S, team=team, open_tickets=I, max_open_tickets=I)
    ticket = ir.Type(kind="object", fields=(
        ir.Field_(name="ticket_id", type=S, required=True),
        ir.Field_(name="team", type=team, required=True),
        ir.Field_(name="assignee_id", type=ir.Type(kind="string", nullable=True), required=True, description="Id of the assigned agent, or null."),
        ir.Field_(name="status", type=enum("open", "resolved"), required=True),
    ))
    env_ir = ir.Environment(
        name="hd",
        tools=(
            T("get_agent", "Get an agent.", [P("agent_id")], returns=agent),
            T("get_ticket", "Get a ticket.", [P("ticket_id")], returns=ticket),
            T("search_tickets", "Search tickets.", [P("assignee_id", required=False, desc="Only tickets assigned to this agent.")], returns=arr(ticket)),
            T("assign_ticket", "Assign an open ticket to an agent of the ticket's team; fails if the agent is at their workload cap.", [P("ticket_id"), P("agent_id")]),
            T("resolve_ticket", "Mark an open ticket as resolved; it frees a slot in the assignee's workload.", [P("ticket_id")]),
        ),
    )
    env = _run(env_ir, "hd").Env({
        "entities": {
            "Agent": {
                "a1": {"agent_id": "a1", "team": "billing", "open_tickets": 0, "max_open_tickets": 1},
                "a2": {"agent_id": "a2", "team": "technical", "open_tickets": 0, "max_open_tickets": 5},
            },
            "Ticket": {
                "t1": {"ticket_id": "t1", "team": "billing", "assignee_id": None, "status": "open"},
                "t2": {"ticket_id": "t2", "team": "billing", "assignee_id": None, "status": "open"},
            },
        },
        "globals": {},
    })
    err = env.step("assign_ticket", {"ticket_id": "t1", "agent_id": "a2"})
    assert isinstance(err, ToolError) and err.message == "agent is not of the ticket's team"
    assert env.step("assign_ticket", {"ticket_id": "t1", "agent_id": "a1"})["assignee_id"] == "a1"
    assert env.state["entities"]["Agent"]["a1"]["open_tickets"] == 1
    err = env.step("assign_ticket", {"ticket_id": "t2", "agent_id": "a1"})
    assert isinstance(err, ToolError) and err.message == "agent is at their max open tickets"
    # re-assigning the same ticket to the same agent stays within the cap
    assert not isinstance(env.step("assign_ticket", {"ticket_id": "t1", "agent_id": "a1"}), ToolError)
    assert env.state["entities"]["Agent"]["a1"]["open_tickets"] == 1
    env.step("resolve_ticket", {"ticket_id": "t1"})
    assert env.state["entities"]["Agent"]["a1"]["open_tickets"] == 0
    assert env.state["entities"]["Ticket"]["t1"]["status"] == "resolved"


def test_cancel_refunds_paid_total_and_restocks_executed():
    user = obj(user_id=S, balance=F, order_ids=arr(S))
    shop = ir.Environment(
        name="shop2",
        tools=SHOP.tools[:4] + (
            T("get_user_details", "", [P("user_id")], http_method="GET", http_path="/users/{user_id}/details", returns=user),
            T("cancel_order", "Cancel a pending or paid order (not a shipped one). Reserved stock goes back to the shelf; a paid order's total is refunded to the owner's balance.", [P("order_id")], http_method="POST", http_path="/orders/{order_id}/cancel"),
        ),
    )
    from forgec.runtime.envrt import ToolError

    lines = [{"book_id": "b1", "quantity": 2, "unit_price": 10.0}]
    env = _run(shop, "shop2").Env({
        "entities": {
            "Book": {"b1": {"book_id": "b1", "price": 10.0, "stock": 1}},
            "User": {"u1": {"user_id": "u1", "balance": 5.0, "order_ids": ["o1", "o2", "o3"]}},
            "Order": {
                "o1": {"order_id": "o1", "user_id": "u1", "lines": lines, "total": 20.0, "status": "paid"},
                "o2": {"order_id": "o2", "user_id": "u1", "lines": lines, "total": 20.0, "status": "pending"},
                "o3": {"order_id": "o3", "user_id": "u1", "lines": lines, "total": 20.0, "status": "shipped"},
            },
        },
        "globals": {},
    })
    env.step("cancel_order", {"order_id": "o1"})  # paid: refunded and restocked
    assert env.state["entities"]["User"]["u1"]["balance"] == 25.0 and env.state["entities"]["Book"]["b1"]["stock"] == 3
    env.step("cancel_order", {"order_id": "o2"})  # pending: nothing was paid, stock comes back
    assert env.state["entities"]["User"]["u1"]["balance"] == 25.0 and env.state["entities"]["Book"]["b1"]["stock"] == 5
    err = env.step("cancel_order", {"order_id": "o3"})
    assert isinstance(err, ToolError) and err.message == "order is not pending or paid"
