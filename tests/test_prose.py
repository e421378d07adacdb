"""Effects read from the prose (forgec/synth/prose.py): each pattern on sentences from two
differently written doc sources, docs -> env.forge goldens with `// from: "..."` citations
(`pytest tests/test_prose.py --update-golden` rewrites them), the citations surviving a
parse/format round trip, and the generated envs run on hand-computed states."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from conftest import CORPUS
from forgec import lang
from forgec.codegen import emit_env, load_env_module
from forgec.diagnostics import has_errors, render
from forgec.frontends import read_paths
from forgec.lang import ast as A
from forgec.synth import prose, synthesize
from test_golden_pipeline import check_golden

FIX = Path(__file__).parent / "fixtures" / "prose"
GOLD = Path(__file__).parent / "golden" / "prose"
DOCS = sorted(FIX.iterdir())


def _synth(path: Path):
    envs, diags = read_paths([path])
    assert not has_errors(diags), diags
    decl, _ = synthesize(envs[0])
    return decl


def _text(decl) -> str:
    return lang.format(A.Module(file=f"src/{decl.name}/env.forge", items=(decl,)))


# --------------------------------------------------------------------------- patterns, two sources each

# (pattern, sentence, expected (kind, subject, field, value, sign, amount)) — the first of each
# pair from the telecom OpenAI-tools fixture, the second from the bike-rental OpenAPI fixture
# (or the tau-bench corpus / examples wording, paraphrased)
CASES = [
    ("status", "Sets the line status to Suspended and records suspension_start_date as today's date.", ("status", "line", "status", "Suspended")),
    ("status", "Rental status is set to `finished`; stores ended_at as the current time.", ("status", "rental", "status", "finished")),
    ("status", "The line status will be changed to Active.", ("status", "line", "status", "Active")),
    ("status", "The member status will be changed to 'frozen';", ("status", "member", "status", "frozen")),
    ("status", "Deducts the amount from the payment method's balance and marks the bill as Paid.", ("status", "bill", "status", "Paid")),
    ("status", "Marks the rental as `on_hold`.", ("status", "rental", "status", "on_hold")),
    ("record", "Sets the line status to Suspended and records suspension_start_date as today's date.", ("record", "", "suspension_start_date", "now")),
    ("record", "Rental status is set to `finished`; stores ended_at as the current time.", ("record", "", "ended_at", "now")),
    ("record", "Stores the new plan_id on the line.", ("record", "line", "plan_id", None)),
    ("toggle", "Turn on international roaming for a line.", ("toggle", "line", "international roaming", True)),
    ("toggle", "Turn roaming off for a line.", ("toggle", "line", "roaming", False)),
    ("toggle", "Enables autopay for the member.", ("toggle", "member", "autopay", True)),
    ("toggle", "Switches autopay off for the member.", ("toggle", "member", "autopay", False)),
    ("money", "Deducts the amount from the payment method's balance and marks the bill as Paid.", ("money", "payment method", "balance", None, -1, "amount")),
    ("money", "Credits the amount to the member's wallet_balance.", ("money", "member", "wallet_balance", None, 1, "amount")),
    ("money", "Withdraws the fee from the member's wallet_balance.", ("money", "member", "wallet_balance", None, -1, "fee")),
    ("money", "Add travel credit to a user's balance, e.g. as a goodwill gesture after a delay.", ("money", "user", "balance", None, 1, "travel credit")),
    ("count", "Adds gb_amount GB of data to the line's data_refuelled_gb.", ("count", "line", "data_refuelled_gb", "data", 1, "gb_amount")),
    ("count", "Increases the member's ride_count by 1.", ("count", "member", "ride_count", None, 1, "1")),
    ("require", "Only an Active line can be suspended.", ("require", "line", "status", "Active")),
    ("require", "The bill must be Overdue.", ("require", "bill", "status", "Overdue")),
    ("require", "Rental must be `riding`.", ("require", "rental", "status", "riding")),
    ("require", "The bill can only be paid if it is Awaiting Payment.", ("require", "", "status", "Awaiting Payment")),
    ("require", "Member must be `active`.", ("require", "member", "status", "active")),
    ("once", "May only be granted once per line.", ("once",)),
    ("once", "Can be used only once per member.", ("once",)),
    ("forbid", "A line cannot be moved to another plan while it is Suspended.", ("forbid", "", "status", ("Suspended",))),
    ("forbid", "Not allowed if the member is `frozen`.", ("forbid", "member", "status", ("frozen",))),
    ("forbid", "If the order is already shipped or delivered, it cannot be changed.", ("forbid", "order", "status", ("shipped", "delivered"))),
    ("owns", "The customer who owns the line.", ("owns", "", "line")),
    ("owns", "The owner of the line.", ("owns", "", "line")),
    ("owns", "The rental must belong to the member.", ("owns", "member", "rental")),
    ("bound", "The amount must be at least 5.", ("bound", "amount", ">=", 5)),
    ("bound", "Amount must be positive and at most 500 USD.", ("bound", "amount", "<=", 500)),
    ("bound", "must be between 1 and 10.", ("bound", "", "<=", 10)),
    ("assign", "Start a new billing cycle for the line: sets the line's data_refuelled_gb to 0.", ("assign", "line", "data_refuelled_gb", 0)),
    ("assign", "status is set to `active`, frozen_on is cleared and ride_count is reset to 0.", ("assign", "", "ride_count", 0)),
    ("assign", "The line status will be changed to Active and clears suspension_start_date.", ("assign", "", "suspension_start_date", None, 0, "clear")),
    ("assign", "status is set to `active`, frozen_on is cleared and ride_count is reset to 0.", ("assign", "", "frozen_on", None, 0, "clear")),
    ("same", "Move a line to another plan of the same plan type.", ("same", "", "plan type")),
    ("same", "Swaps the bike of a ride for another one with the same model;", ("same", "", "model")),
    ("same", "Exchange items in an order for new items of the same product type.", ("same", "", "product type")),
    ("returns", "Returns the customer id.", ("returns", "customer", "key")),
    ("returns", "Responds with the member's ID, 404 when nobody matches.", ("returns", "member", "key")),
]


# other wordings of the same patterns (REST/CRUD-style prose written for this test, and the
# MCP tools/list fixture library_mcp.json)
CASES += [
    ("status", "Sets the patron's status to 'blocked' and stores the reason.", ("status", "patron", "status", "blocked")),
    ("record", "Sets the patron's status to 'blocked' and stores the reason.", ("record", "", "reason", None)),
    ("toggle", "Turns email_alerts off for the patron.", ("toggle", "patron", "email_alerts", False)),
    ("count", "Decrements the book's copies_available by 1 and increments the patron's loans_count by 1.", ("count", "book", "copies_available", None, -1, "1")),
    ("money", "Deducts the amount from the patron's fine_balance.", ("money", "patron", "fine_balance", None, -1, "amount")),
    ("forbid", "Fails if the patron is `blocked`.", ("forbid", "patron", "status", ("blocked",))),
    ("status", "Moves the ticket to the 'archived' state.", ("status", "ticket", "status", "archived")),
    ("status", "The invoice is marked as paid.", ("status", "invoice", "status", "paid")),
    ("status", "Transitions the order to SHIPPED status.", ("status", "order", "status", "shipped")),
    ("count", "Subtracts the quantity from the product's stock.", ("count", "product", "stock", None, -1, "quantity")),
    ("count", "Decrements stock by the ordered quantity.", ("count", "", "stock", None, -1, "quantity")),
    ("money", "The refund is credited to the original payment method.", ("money", "original payment method", "balance", None, 1, "refund")),
    ("forbid", "Once suspended, a line cannot be refuelled.", ("forbid", "line", "status", ("suspended",))),
    ("forbid", "Fails if the ticket is closed.", ("forbid", "ticket", "status", ("closed",))),
    ("require", "Only pending orders can be modified.", ("require", "orders", "status", "pending")),
    # npm_mcp_shrimp_task_manager (untuned broad corpus): the state as the object's adjective
    ("forbid", "Delete incomplete tasks, but does not allow deleting completed tasks, ensuring the integrity of system records",
     ("forbid", "tasks", "status", ("completed",))),
    ("forbid", "Update task content, completed tasks only allow updating summary and related files", ("forbid", "tasks", "status", ("completed",))),
    ("forbid", "This tool will not cancel shipped orders.", ("forbid", "orders", "status", ("shipped",))),
]


@pytest.mark.parametrize("pattern,sentence,want", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_pattern_reads_the_sentence(pattern, sentence, want):
    facts = [f for f in prose.read_sentence(sentence) if f.kind == pattern]
    got = [(f.kind, f.subject, f.field, f.value, f.sign, f.amount)[: len(want)] for f in facts]
    assert want in got, got
    assert all(f.sentence == sentence for f in facts)


def test_each_pattern_has_two_sources():
    by = {}
    for pattern, sentence, _ in CASES:
        by.setdefault(pattern, set()).add(sentence)
    assert all(len(v) >= 2 for v in by.values()), by


@pytest.mark.parametrize("sentence,kind,when", [
    ("Refunds 3 to the member's wallet_balance if the rental is `on_hold`.", "money", ("rental", "on_hold")),
    ("Make up for a network outage: adds 1 GB of data to the line's data_refuelled_gb when the line is Active.", "count", ("line", "Active")),
])
def test_effect_in_a_documented_state(sentence, kind, when):
    (f,) = [f for f in prose.read(sentence) if f.kind == kind]
    assert f.conditional and f.when == when


def test_conditions_and_unrelated_sentences_are_not_effects():
    # "... if the payment was made using a gift card": a condition the rules do not read
    (f,) = [f for f in prose.read_sentence("The refund goes back to the customer's gift card balance at once if the order was paid by gift card.") if f.kind == "money"] or [None]
    assert f is None or f.conditional
    assert prose.read_sentence("By default look the user up by email; only call this if the user cannot remember their email.") == []
    assert prose.read_sentence("Get the status and details of an order.") == []


@pytest.mark.parametrize("desc,values", [
    ("Why the line is put on hold; can only be either 'lost device' or 'travel'.", ("lost device", "travel")),
    ("Either 'moving' or 'injury'.", ("moving", "injury")),
    ("Why. One of: shop, lunch, repair.", ("shop", "lunch", "repair")),
    ("The reason, which should be either 'no longer needed' or 'ordered by mistake'.", ("no longer needed", "ordered by mistake")),
    ("The payment id stored in user profile, such as 'credit_card_1' or 'gift_card_1'.", None),
    ("A thought to think about.", None),
])
def test_allowed_values(desc, values):
    got = prose.allowed_values(desc)
    assert (got[0] if got else None) == values


@pytest.mark.parametrize("desc,param,values", [
    ("Stop a patron from borrowing. The reason must be one of: overdue, damage, fraud.", "reason", ("overdue", "damage", "fraud")),
    ("Pauses a ride. The hold reason should be either `shop`, `lunch` or `repair`.", "hold_reason", ("shop", "lunch", "repair")),
    ("Cancel an order. The reason can only be either 'no longer needed' or 'ordered by mistake'.", "reason", ("no longer needed", "ordered by mistake")),
    ("Cancel an order. The status must be one of: a, b.", "reason", None),
])
def test_allowed_values_stated_in_the_tool_prose(desc, param, values):
    got = prose.allowed_for(desc, param)
    assert (got[0] if got else None) == values


# --------------------------------------------------------------------------- goldens and round trip


@pytest.mark.parametrize("path", DOCS, ids=[p.stem for p in DOCS])
def test_prose_golden(path: Path, update_golden: bool) -> None:
    check_golden(GOLD / (path.stem + ".forge"), _text(_synth(path)), update_golden)


@pytest.mark.parametrize("path", DOCS, ids=[p.stem for p in DOCS])
def test_citations_round_trip(path: Path) -> None:
    """`// from:` comments parse back as comments: the AST is equal, `forgec fmt` keeps them."""
    decl = _synth(path)
    text = _text(decl)
    assert '// from: "' in text
    mod, pd = lang.parse(text, "env.forge")
    assert not has_errors(pd + lang.check([mod])), render(pd, "concise")
    assert mod.envs[0] == decl
    assert lang.format(mod) == text
    assert sum(1 for c in mod.comments if c.text.startswith(" from: ")) == sum(len({i for i, _ in t.notes}) for t in decl.tools)
    again, _ = lang.format_text(text)
    assert again == text


def test_notes_print_before_their_statement():
    t = A.ToolDecl("t", (), A.PrimType("int"), body=(A.Return(A.Literal(1)),), notes=((0, 'says "one"'),))
    out = lang.format(A.Module(file="x", items=(A.EnvDecl("e", None, (), (), (t,)),)))
    assert '    // from: "says \\"one\\""\n    return 1\n' in out
    assert t == A.ToolDecl("t", (), A.PrimType("int"), body=(A.Return(A.Literal(1)),))


def test_corpus_status_sentences_are_cited():
    envs, _ = read_paths([CORPUS / "tau_bench_retail" / "tools.json"])
    decl, _ = synthesize(envs[0])
    text = _text(decl)
    assert "// from: \"The order status will be changed to 'return requested'.\"\n    set order_id.status = \"return requested\"" in text
    # "For a pending order, this function can only be called once": checked and set on the order
    body = decl.tool("modify_pending_order_items").body
    flag = A.Attr(A.Name("order_id"), "modify_pending_order_items_done")
    assert A.Require(A.Unary("not", flag), "modify_pending_order_items was already done for this order") in body
    assert A.Set(flag, A.Literal(True)) in body


# --------------------------------------------------------------------------- behaviour


def _env(path: Path):
    decl = _synth(path)
    mod, _ = lang.parse(_text(decl), "env.forge")
    tmp = Path(tempfile.mkdtemp()) / "env.py"
    tmp.write_text(emit_env(mod.envs[0], "env.forge"), encoding="utf-8")
    return load_env_module(tmp)


def test_telecom_runs_as_its_docs_say():
    from forgec.runtime.envrt import ToolError

    mod = _env(FIX / "telecom_openai.json")
    line = {"customer_id": "c1", "reason": "travel", "plan_id": "p1", "suspension_start_date": None, "grant_loyalty_bonus_done": False,
            "roaming_enabled": False, "data_refuelled_gb": 0.5}
    env = mod.Env({
        "entities": {
            "Customer": {"c1": {"customer_id": "c1", "lines": ["l1", "l2"], "bills": ["b1"], "phone_number": ""},
                         "c2": {"customer_id": "c2", "lines": [], "bills": [], "phone_number": ""}},
            "Line": {"l1": {"line_id": "l1", **line, "status": "Active"}, "l2": {"line_id": "l2", **line, "status": "Suspended"}},
            "Bill": {"b1": {"bill_id": "b1", "customer_id": "c1", "status": "Overdue"}},
            "PaymentMethod": {"pm1": {"payment_method_id": "pm1", "balance": 50.0}},
            "Plan": {"p1": {"plan_id": "p1", "plan_type": "prepaid"}, "p2": {"plan_id": "p2", "plan_type": "prepaid"},
                     "p3": {"plan_id": "p3", "plan_type": "postpaid"}},
        },
        "globals": {"now": "2024-05-15T12:00:00"},
    })
    E = env.state["entities"]
    assert isinstance(env.step("suspend_line", {"customer_id": "c1", "line_id": "l1", "reason": "stolen"}), ToolError)
    err = env.step("suspend_line", {"customer_id": "c2", "line_id": "l1", "reason": "travel"})
    assert isinstance(err, ToolError) and err.message == "the line is not the customer's"
    env.step("suspend_line", {"customer_id": "c1", "line_id": "l1", "reason": "lost device"})
    assert E["Line"]["l1"]["status"] == "Suspended" and E["Line"]["l1"]["suspension_start_date"] == "2024-05-15T12:00:00"
    assert E["Line"]["l1"]["reason"] == "lost device"
    err = env.step("enable_roaming", {"customer_id": "c1", "line_id": "l1"})
    assert isinstance(err, ToolError) and err.message == "line is not Active"
    env.step("resume_line", {"customer_id": "c1", "line_id": "l1"})
    assert E["Line"]["l1"]["status"] == "Active" and E["Line"]["l1"]["suspension_start_date"] is None
    env.step("enable_roaming", {"customer_id": "c1", "line_id": "l1"})
    assert E["Line"]["l1"]["roaming_enabled"] is True
    env.step("disable_roaming", {"customer_id": "c1", "line_id": "l1"})
    assert E["Line"]["l1"]["roaming_enabled"] is False
    err = env.step("refuel_data", {"customer_id": "c1", "line_id": "l1", "gb_amount": -1.0})
    assert isinstance(err, ToolError) and err.message == "gb_amount must be positive"
    env.step("refuel_data", {"customer_id": "c1", "line_id": "l1", "gb_amount": 2.0})
    assert E["Line"]["l1"]["data_refuelled_gb"] == 2.5
    assert isinstance(env.step("refuel_data", {"customer_id": "c1", "line_id": "l2", "gb_amount": 2.0}), ToolError)
    env.step("change_plan", {"line_id": "l1", "plan_id": "p2"})
    assert E["Line"]["l1"]["plan_id"] == "p2"
    err = env.step("change_plan", {"line_id": "l1", "plan_id": "p3"})
    assert isinstance(err, ToolError) and err.message == "plan_id must have the same plan type as the current one"
    err = env.step("change_plan", {"line_id": "l2", "plan_id": "p2"})
    assert isinstance(err, ToolError) and err.message == "line is Suspended" and E["Line"]["l2"]["plan_id"] == "p1"
    env.step("grant_loyalty_bonus", {"customer_id": "c1", "line_id": "l1"})
    assert E["Line"]["l1"]["data_refuelled_gb"] == 7.5 and E["Line"]["l1"]["grant_loyalty_bonus_done"] is True
    err = env.step("grant_loyalty_bonus", {"customer_id": "c1", "line_id": "l1"})
    assert isinstance(err, ToolError) and E["Line"]["l1"]["data_refuelled_gb"] == 7.5
    env.step("reset_refuel_counter", {"customer_id": "c1", "line_id": "l1"})
    assert E["Line"]["l1"]["data_refuelled_gb"] == 0.0
    env.step("compensate_outage", {"customer_id": "c1", "line_id": "l1"})  # Active: compensated
    env.step("compensate_outage", {"customer_id": "c1", "line_id": "l2"})  # Suspended: not
    assert (E["Line"]["l1"]["data_refuelled_gb"], E["Line"]["l2"]["data_refuelled_gb"]) == (1.0, 0.5)
    err = env.step("make_payment", {"bill_id": "b1", "payment_method_id": "pm1", "amount": 30.0})
    assert isinstance(err, ToolError) and err.message == "bill is not Awaiting Payment"
    env.step("send_payment_request", {"customer_id": "c1", "bill_id": "b1"})
    assert E["Bill"]["b1"]["status"] == "Awaiting Payment"
    env.step("make_payment", {"bill_id": "b1", "payment_method_id": "pm1", "amount": 30.0})
    assert E["Bill"]["b1"]["status"] == "Paid" and E["PaymentMethod"]["pm1"]["balance"] == 20.0
    assert "Request" not in E and "Payment" not in E and "ActionLog" not in E
    E["Customer"]["c1"]["phone_number"] = "+15550001111"
    assert env.step("get_customer_by_phone", {"phone_number": "+15550001111"}) == "c1"
    assert isinstance(env.step("get_customer_by_phone", {"phone_number": "+1"}), ToolError)


def test_rental_runs_as_its_docs_say():
    from forgec.runtime.envrt import ToolError

    mod = _env(FIX / "rental_openapi.yaml")
    env = mod.Env({
        "entities": {
            "Member": {"m1": {"member_id": "m1", "status": "active", "autopay": False, "wallet_balance": 10.0, "ride_count": 3, "frozen_on": None, "note": "moving", "email": "m@x.org", "start_trial_done": False},
                       "m2": {"member_id": "m2", "status": "active", "autopay": False, "wallet_balance": 10.0, "ride_count": 0, "frozen_on": None, "note": "moving", "email": "n@x.org", "start_trial_done": False}},
            "Rental": {"r1": {"rental_id": "r1", "member_id": "m1", "bike_id": "b1", "status": "riding", "ended_at": None, "hold_reason": "shop"}},
            "Bike": {"b1": {"bike_id": "b1", "model": "city"}, "b2": {"bike_id": "b2", "model": "city"}, "b3": {"bike_id": "b3", "model": "cargo"}},
        },
        "globals": {"now": "2024-05-15T12:00:00"},
    })
    E = env.state["entities"]
    assert env.step("lookup_member", {"email": "m@x.org"}) == "m1"
    err = env.step("top_up_wallet", {"member_id": "m1", "amount": 1.0})
    assert isinstance(err, ToolError) and err.message == "amount must be at least 5"
    env.step("top_up_wallet", {"member_id": "m1", "amount": 5.0})
    assert E["Member"]["m1"]["wallet_balance"] == 15.0
    err = env.step("charge_late_fee", {"rental_id": "r1", "member_id": "m2", "fee": 1.0})
    assert isinstance(err, ToolError) and err.message == "the rental is not the member's"
    err = env.step("charge_late_fee", {"rental_id": "r1", "member_id": "m1", "fee": 20.0})
    assert isinstance(err, ToolError) and err.message == "insufficient balance"
    env.step("charge_late_fee", {"rental_id": "r1", "member_id": "m1", "fee": 4.0})
    assert E["Member"]["m1"]["wallet_balance"] == 11.0
    env.step("log_ride", {"member_id": "m1"})
    assert E["Member"]["m1"]["ride_count"] == 4
    # documented-optional counters and balances count from zero; a null balance holds nothing
    E["Member"]["m1"]["ride_count"] = None
    env.step("log_ride", {"member_id": "m1"})
    assert E["Member"]["m1"]["ride_count"] == 1
    E["Member"]["m1"]["wallet_balance"] = None
    err = env.step("charge_late_fee", {"rental_id": "r1", "member_id": "m1", "fee": 1.0})
    assert isinstance(err, ToolError) and err.message == "insufficient balance"
    env.step("top_up_wallet", {"member_id": "m1", "amount": 11.0})
    env.step("disable_autopay", {"member_id": "m1"})
    env.step("enable_autopay", {"member_id": "m1"})
    assert E["Member"]["m1"]["autopay"] is True and "m1" in E["Member"]
    E["Rental"]["r2"] = {**E["Rental"]["r1"], "rental_id": "r2", "status": "on_hold"}
    E["Rental"]["r3"] = {**E["Rental"]["r1"], "rental_id": "r3", "status": "riding"}
    w = E["Member"]["m1"]["wallet_balance"]
    env.step("cancel_rental", {"rental_id": "r2", "member_id": "m1"})  # on hold: 3 back
    env.step("cancel_rental", {"rental_id": "r3", "member_id": "m1"})  # riding: nothing back
    assert E["Member"]["m1"]["wallet_balance"] == w + 3 and E["Rental"]["r2"]["status"] == E["Rental"]["r3"]["status"] == "finished"
    err = env.step("swap_bike", {"rental_id": "r1", "bike_id": "b3"})
    assert isinstance(err, ToolError) and err.message == "bike_id must have the same model as the current one"
    env.step("swap_bike", {"rental_id": "r1", "bike_id": "b2"})
    assert E["Rental"]["r1"]["bike_id"] == "b2"
    env.step("end_rental", {"rental_id": "r1"})
    assert E["Rental"]["r1"]["status"] == "finished" and E["Rental"]["r1"]["ended_at"] == "2024-05-15T12:00:00"
    assert isinstance(env.step("end_rental", {"rental_id": "r1"}), ToolError)
    env.step("freeze_member", {"member_id": "m1", "note": "injury"})
    assert E["Member"]["m1"]["status"] == "frozen" and E["Member"]["m1"]["frozen_on"] == "2024-05-15T12:00:00"
    err = env.step("enable_autopay", {"member_id": "m1"})
    assert isinstance(err, ToolError) and err.message == "member is not active"
    err = env.step("top_up_wallet", {"member_id": "m1", "amount": 5.0})
    assert isinstance(err, ToolError) and err.message == "member is frozen"
    before = E["Member"]["m1"]["wallet_balance"]
    env.step("start_trial", {"member_id": "m1"})
    assert E["Member"]["m1"]["wallet_balance"] == before + 15 and E["Member"]["m1"]["start_trial_done"] is True
    err = env.step("start_trial", {"member_id": "m1"})
    assert isinstance(err, ToolError) and err.message == "start_trial was already done for this member"
    E["Member"]["m1"]["status"] = "frozen"
    env.step("unfreeze_member", {"member_id": "m1"})
    m = E["Member"]["m1"]
    assert (m["status"], m["frozen_on"], m["ride_count"]) == ("active", None, 0)


def test_same_field_pairwise_for_new_items():
    """`exchange(order_id, item_ids, new_item_ids)` "for new items of the same product": each new
    item has its old item's product (pairwise), when the docs give items a product."""
    from forgec import ir
    from forgec.runtime.envrt import ToolError

    S = ir.Type(kind="string")
    def obj(**fs):
        return ir.Type(kind="object", fields=tuple(ir.Field_(name=k, type=t, required=True) for k, t in fs.items()))
    arr = ir.Type(kind="array", items=S)
    tools = (
        ir.Tool(name="get_product", description="Get a product.", params=(ir.Param(name="product_id", type=S, required=True),), returns=obj(product_id=S)),
        ir.Tool(name="get_item", description="Get an item.", params=(ir.Param(name="item_id", type=S, required=True),), returns=obj(item_id=S, product_id=S)),
        ir.Tool(name="get_order", description="Get an order.", params=(ir.Param(name="order_id", type=S, required=True),), returns=obj(order_id=S, item_ids=arr)),
        ir.Tool(name="exchange_order_items", description="Exchange items of an order for new items of the same product.",
                params=(ir.Param(name="order_id", type=S, required=True), ir.Param(name="item_ids", type=arr, required=True), ir.Param(name="new_item_ids", type=arr, required=True))),
    )
    decl, _ = synthesize(ir.Environment(name="shop", tools=tools))
    body = decl.tool("exchange_order_items").body
    it = lambda: A.Attr(A.Name("it"), "product_id")  # noqa: E731
    want = A.Binary("==", A.Call("map", (A.Name("new_item_ids"), it())), A.Call("map", (A.Name("item_ids"), it())))
    assert any(isinstance(st, A.Require) and st.cond == want for st in body), _text(decl)
    text = _text(decl)
    mod, _ = lang.parse(text, "env.forge")
    assert not has_errors(lang.check([mod]))
    tmp = Path(tempfile.mkdtemp()) / "env.py"
    tmp.write_text(emit_env(mod.envs[0], "env.forge"), encoding="utf-8")
    env = load_env_module(tmp).Env({"entities": {
        "Product": {"p1": {"product_id": "p1"}, "p2": {"product_id": "p2"}},
        "Item": {"i1": {"item_id": "i1", "product_id": "p1"}, "i2": {"item_id": "i2", "product_id": "p1"}, "i3": {"item_id": "i3", "product_id": "p2"}},
        "Order": {"o1": {"order_id": "o1", "item_ids": ["i1"]}},
    }, "globals": {}})
    assert isinstance(env.step("exchange_order_items", {"order_id": "o1", "item_ids": ["i1"], "new_item_ids": ["i3"]}), ToolError)
    env.step("exchange_order_items", {"order_id": "o1", "item_ids": ["i1"], "new_item_ids": ["i2"]})
    assert env.state["entities"]["Order"]["o1"]["item_ids"] == ["i2"]


def test_library_runs_as_its_docs_say():
    from forgec.runtime.envrt import ToolError

    env = _env(FIX / "library_mcp.json").Env({"entities": {
        "Patron": {
            "p1": {"patron_id": "p1", "reason": "overdue", "loans_count": 0, "fine_balance": 3.0, "email_alerts": True, "status": "active"},
            "p2": {"patron_id": "p2", "reason": "fraud", "loans_count": 0, "fine_balance": 0.0, "email_alerts": True, "status": "blocked"},
        },
        "Book": {"b1": {"book_id": "b1", "patron_id": "p1", "copies_available": 1}},
    }, "globals": {}})
    E = env.state["entities"]
    err = env.step("checkout_book", {"book_id": "b1", "patron_id": "p2"})
    assert isinstance(err, ToolError) and err.message == "patron is blocked"
    env.step("checkout_book", {"book_id": "b1", "patron_id": "p1"})
    assert (E["Book"]["b1"]["copies_available"], E["Patron"]["p1"]["loans_count"]) == (0, 1)
    err = env.step("checkout_book", {"book_id": "b1", "patron_id": "p1"})
    assert isinstance(err, ToolError) and err.message == "not enough copies available"
    env.step("return_book", {"book_id": "b1", "patron_id": "p1"})
    assert (E["Book"]["b1"]["copies_available"], E["Patron"]["p1"]["loans_count"]) == (1, 0)
    assert isinstance(env.step("pay_fine", {"patron_id": "p1", "amount": 5.0}), ToolError)
    env.step("pay_fine", {"patron_id": "p1", "amount": 2.0})
    assert E["Patron"]["p1"]["fine_balance"] == 1.0
    env.step("set_notifications", {"patron_id": "p1"})
    assert E["Patron"]["p1"]["email_alerts"] is False
    env.step("block_patron", {"patron_id": "p1", "reason": "damage"})
    assert (E["Patron"]["p1"]["status"], E["Patron"]["p1"]["reason"]) == ("blocked", "damage")


def test_reader_never_fails_and_cites_its_own_sentences():
    """Random word soup from the patterns' vocabulary: no exception, every fact cites a sentence
    of the text it was read from (deterministic seed)."""
    import random

    rng = random.Random(7)
    vocab = ("the a line status set to Active records suspension_start_date as today's date enable roaming for turn off "
             "adds 5 GB of data line's data_refuelled_gb must be only once if when is cannot 'x' `y` owner of belong same "
             "model between and at most 500 refund credits amount balance wallet_balance marks . ; , e.g. 2.5").split()
    for _ in range(300):
        text = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 120)))
        sents = prose.sentences(text)
        for f in prose.read.__wrapped__(text):
            assert f.sentence in sents
        prose.allowed_values.__wrapped__(text)


def test_forgec_fmt_keeps_the_citations(tmp_path: Path):
    """`forgec fmt --check` on a synthesized env.forge: already canonical, citations included."""
    import subprocess
    import sys

    f = tmp_path / "env.forge"
    f.write_text(_text(_synth(FIX / "telecom_openai.json")), encoding="utf-8")
    before = f.read_text(encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "forgec", "fmt", "--check", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "forgec", "fmt", str(f)], capture_output=True, text=True)
    assert r.returncode == 0 and f.read_text(encoding="utf-8") == before and before.count("// from: ") >= 10


def test_counts_on_another_record_keep_the_named_target():
    """"Assign a ticket to an agent. Increments the agent's open_tickets by 1.": the tool is
    about the ticket (its name says so; the prose only counts on the agent) — the ticket still
    gets its agent, and the agent's count goes up."""
    from forgec import ir

    S, I = ir.Type(kind="string"), ir.Type(kind="integer")
    def obj(**fs):
        return ir.Type(kind="object", fields=tuple(ir.Field_(name=k, type=t, required=True) for k, t in fs.items()))
    tools = (
        ir.Tool(name="get_agent", description="Get an agent.", params=(ir.Param(name="agent_id", type=S, required=True),), returns=obj(agent_id=S, open_tickets=I)),
        ir.Tool(name="get_ticket", description="Get a ticket.", params=(ir.Param(name="ticket_id", type=S, required=True),), returns=obj(ticket_id=S)),
        ir.Tool(name="assign_ticket", description="Assign a ticket to an agent. Increments the agent's open_tickets by 1.",
                params=(ir.Param(name="ticket_id", type=S, required=True), ir.Param(name="agent_id", type=S, required=True))),
    )
    decl, _ = synthesize(ir.Environment(name="hd", tools=tools))
    t = decl.tool("assign_ticket")
    assert t.params[0].type == A.NamedType("Ticket") and t.returns == A.NamedType("Ticket")
    assert A.Set(A.Attr(A.Name("ticket_id"), "agent_id"), A.Attr(A.Name("agent_id"), "agent_id")) in t.body
    cur = A.Attr(A.Name("agent_id"), "open_tickets")
    assert A.Set(cur, A.Binary("+", cur, A.Literal(1))) in t.body


def test_random_docs_in_the_patterns_synthesize_to_checkable_envs():
    """Tools described with random mixes of the patterns (random nouns, fields, states, types):
    every synthesized env parses and checks clean (deterministic seed)."""
    import random

    from forgec import ir

    rng = random.Random(11)
    S, I, F, B = (ir.Type(kind=k) for k in ("string", "integer", "number", "boolean"))
    nouns = ["line", "order", "member", "ticket", "device", "account"]
    fields = ["credit_balance", "usage_count", "notes_text", "level", "flag_on", "start_date"]
    states = ["Active", "Suspended", "'closed'", "`pending`", "paid"]
    templates = [
        "Sets the {n} status to {st}.", "Marks the {n} as {st}.", "The {n} must be {st}.", "Only an {st} {n} can be changed.",
        "Records {f} as today's date.", "Stores the reason.", "Turn {f} off for the {n}.", "Enables {f} for the {n}.",
        "Credits the amount to the {n}'s {f}.", "Deducts the amount from the {n}'s {f}.", "Increases the {n}'s {f} by 1.",
        "Adds amount GB of data to the {n}'s {f}.", "Sets the {n}'s {f} to 0.", "Clears {f}.", "May only be used once per {n}.",
        "Fails if the {n} is {st}.", "The {o} who owns the {n}.", "The {n} must belong to the {o}.", "The amount must be at least 2.",
        "Another {n} of the same {f}.", "Returns the {n} id.", "Refunds 3 to the {o}'s {f} if the {n} is {st}.",
    ]
    for round_ in range(60):
        n, o = rng.sample(nouns, 2)
        def field_type():
            return rng.choice([S, I, F, B])
        ret = ir.Type(kind="object", fields=tuple(ir.Field_(name=f, type=field_type(), required=rng.random() < 0.5) for f in rng.sample(fields, 3))
                      + (ir.Field_(name=f"{n}_id", type=S, required=True),))
        tools = [ir.Tool(name=f"get_{n}", description=f"Get a {n}.", params=(ir.Param(name=f"{n}_id", type=S, required=True),), returns=ret),
                 ir.Tool(name=f"get_{o}", description=f"Get a {o}.", params=(ir.Param(name=f"{o}_id", type=S, required=True),))]
        for j in range(4):
            desc = " ".join(rng.choice(templates).format(n=n, o=o, f=rng.choice(fields), st=rng.choice(states)) for _ in range(rng.randint(1, 4)))
            params = [ir.Param(name=f"{n}_id", type=S, required=True)]
            if rng.random() < 0.6:
                params.append(ir.Param(name=f"{o}_id", type=S, required=True, description=rng.choice(["", f"The owner of the {n}."])))
            if rng.random() < 0.5:
                params.append(ir.Param(name="amount", type=rng.choice([I, F]), required=True))
            if rng.random() < 0.4:
                params.append(ir.Param(name="reason", type=S, required=True, description=rng.choice(["", "One of: a, b, c.", "Either 'x' or 'y'."])))
            tools.append(ir.Tool(name=f"{rng.choice(['update', 'handle', 'process', 'cancel', 'enable', 'adjust'])}_{n}_{j}", description=desc, params=tuple(params)))
        decl, _ = synthesize(ir.Environment(name=f"fuzz{round_}", tools=tuple(tools)))
        text = _text(decl)
        mod, pd = lang.parse(text, "fuzz.forge")
        cd = lang.check([mod]) if not has_errors(pd) else []
        assert not has_errors(pd + cd), render(pd + cd, "concise") + "\n" + text
        if round_ < 12:  # and they run: no call of a generated tool ends in an internal error
            from forgec.codegen.verify import verify_env

            tmp = Path(tempfile.mkdtemp()) / "env.py"
            tmp.write_text(emit_env(mod.envs[0], "fuzz.forge"), encoding="utf-8")
            rep = verify_env(load_env_module(tmp), mod.envs[0], seed=round_, calls_per_tool=8)
            assert not [t.reason for t in rep.tools if t.reason and "internal error" in t.reason], text
