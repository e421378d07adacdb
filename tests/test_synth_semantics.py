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
