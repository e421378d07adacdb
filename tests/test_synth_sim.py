"""Simulator-style docs: pure functions, one device's controls, an account with holdings.

Fixtures (tests/fixtures/sim/, written for this project in the style of each source): a BFCL
vehicle API, an MCP home hub and an OpenAPI 3 drone (device/session), a BFCL math API and an MCP unit converter
(pure), a BFCL trading bot and an OpenAI-tools brokerage (account). Checked here:

* docs in -> `.forge` out (tests/golden/sim/, `--update-golden`);
* every tool's read/write kind against hand labels (a calculator is a read, a buy a write);
* pure tools are `read` and their bodies never write;
* the generated envs on values computed by hand (a mean, a standard deviation, a conversion,
  a buy that moves the right money, a start refused until the brake is pressed).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import CORPUS
from forgec import lang
from forgec.codegen import emit_env, load_env_module
from forgec.diagnostics import has_errors
from forgec.frontends import read_paths
from forgec.lang import ast as A
from forgec.lang.check import has_write
from forgec.runtime.envrt import ToolError
from forgec.synth import synthesize
from test_golden_pipeline import check_golden

SIM = Path(__file__).parent / "fixtures" / "sim"
GOLDEN = Path(__file__).parent / "golden" / "sim"
DOCS = sorted(SIM.iterdir())

# hand labels: does the tool change state? (read = False)
WRITES = {
    "math_bfcl": {},  # every tool computes
    "converter_mcp": {},
    "vehicle_bfcl": {"startEngine": True, "fillFuelTank": True, "lockDoors": True, "pressBrakePedal": True, "releaseBrakePedal": True,
                     "setHeadlights": True, "activateParkingBrake": True, "adjustClimateControl": True, "setCruiseControl": True,
                     "displayCarStatus": False, "gallonToLiter": False},
    "drone_openapi": {"takeOff": True, "land": True, "armMotors": True, "setCamera": True, "getStatus": False},
    "home_mcp": {"hub_login": True, "hub_logout": True, "whoami": False, "thermostat_power": True, "set_thermostat_mode": True,
                 "set_target_temperature": True, "set_fan": True, "garage_door": True, "set_garage_light": True, "hub_status": False},
    "trading_bfcl": {"trading_login": True, "trading_logout": True, "get_stock_info": False, "get_symbol_by_name": False,
                     "get_account_info": False, "fund_account": True, "withdraw_funds": True, "place_order": True,
                     "get_order_details": False, "cancel_order": True, "get_order_history": False, "get_holdings": False,
                     "add_to_watchlist": True, "remove_stock_from_watchlist": True, "get_watchlist": False, "calculate_total_cost": False},
    "brokerage_openai": {"sign_in": True, "sign_out": True, "quote": False, "cash_balance": False, "deposit_cash": True,
                         "withdraw_cash": True, "buy_shares": True, "sell_shares": True, "list_positions": False, "trade_status": False,
                         "cancel_trade": True, "watch": True, "unwatch": True},
}


def case(path: Path) -> str:
    return path.name.split(".")[0]


def decl_of(path: Path) -> A.EnvDecl:
    envs, diags = read_paths([path])
    assert not has_errors(diags), diags
    decl, _ = synthesize(envs[0])
    return decl


def kind(t: A.ToolDecl) -> str:
    return next(a for a in t.annotations if a in ("read", "search", "create", "update", "delete", "action"))


def env_of(decl: A.EnvDecl, tmp_path: Path, state: dict | None = None):
    text = lang.format(A.Module(file="env.forge", items=(decl,)))
    mod, d = lang.parse(text, "env.forge")
    assert not has_errors(d + lang.check([mod])), text
    p = tmp_path / f"{decl.name}.py"
    p.write_text(emit_env(mod.envs[0], "env.forge"))
    m = load_env_module(p)
    return m.Env(state or {"entities": {}, "globals": {}})


@pytest.mark.parametrize("path", DOCS, ids=[case(p) for p in DOCS])
def test_sim_golden(path: Path, update_golden: bool) -> None:
    envs, _ = read_paths([path])
    decl, sd = synthesize(envs[0])
    head = "".join(f"// {d.severity.value}[{d.code}]: {d.message}\n" for d in sd)
    GOLDEN.mkdir(exist_ok=True)
    check_golden(GOLDEN / f"{case(path)}.forge", head + lang.format(A.Module(file=f"src/{case(path)}/env.forge", items=(decl,))), update_golden)


def test_read_write_kinds_match_hand_labels() -> None:
    right = total = 0
    wrong = []
    for path in DOCS:
        labels = WRITES[case(path)]
        for t in decl_of(path).tools:
            writes = kind(t) not in ("read", "search")
            want = labels.get(t.name, False)
            total += 1
            right += writes == want
            if writes != want:
                wrong.append(f"{case(path)}.{t.name}")
            assert "conservative" not in t.annotations, f"{case(path)}.{t.name} is log-only"
    assert not wrong and total == 85, (wrong, total)


@pytest.mark.parametrize("name", ["math_bfcl.jsonl", "converter_mcp.json"])
def test_pure_tools_are_reads_that_never_write(name: str) -> None:
    for t in decl_of(SIM / name).tools:
        assert kind(t) == "read" and not has_write(t.body), t.name


def test_tau_calculate_and_handoff_are_reads(tmp_path: Path) -> None:
    for dom in ("tau_bench_retail", "tau_bench_airline"):
        envs, _ = read_paths([CORPUS / dom / "tools.json"])
        decl, _ = synthesize(envs[0])
        tools = {t.name: t for t in decl.tools}
        for n in ("calculate", "transfer_to_human_agents", "think"):
            assert kind(tools[n]) == "read" and not has_write(tools[n].body) and "conservative" not in tools[n].annotations, (dom, n)
    only = A.EnvDecl(decl.name, None, (), (), (tools["calculate"], tools["transfer_to_human_agents"]))
    env = env_of(only, tmp_path)
    assert env.step("calculate", {"expression": "(1.5 + 2) * -3 / 2"}) == -5.25
    assert env.step("calculate", {"expression": "10 / 4 + 0.5"}) == 3.0
    assert isinstance(env.step("calculate", {"expression": "2 ** 3"}), ToolError)  # not Python: parsed, never eval'd
    assert isinstance(env.step("calculate", {"expression": "1 / 0"}), ToolError)
    h = env.state_hash()
    assert env.step("transfer_to_human_agents", {"summary": "wants a refund"}) == "Transfer successful" and env.state_hash() == h


def test_math_by_hand(tmp_path: Path) -> None:
    env = env_of(decl_of(SIM / "math_bfcl.jsonl"), tmp_path)
    xs = [2, 4, 4, 4, 5, 5, 7, 9]  # mean 5; sum of squared deviations 32
    assert env.step("mean", {"numbers": xs}) == {"result": 5.0}
    assert env.step("standard_deviation", {"numbers": xs}) == {"result": round(math.sqrt(32 / 7), 6)}
    assert env.step("sum_values", {"numbers": xs}) == {"result": 40}
    assert env.step("min_value", {"numbers": xs}) == {"result": 2} and env.step("max_value", {"numbers": xs}) == {"result": 9}
    assert env.step("divide", {"a": 7, "b": 2}) == {"result": 3.5}
    assert isinstance(env.step("divide", {"a": 7, "b": 0}), ToolError)
    assert env.step("subtract", {"a": 10, "b": 4}) == {"result": 6}
    assert env.step("power", {"base": 2, "exponent": 10}) == {"result": 1024.0}
    assert env.step("square_root", {"number": 2}) == {"result": 1.41}  # precision defaults to 2
    assert env.step("logarithm", {"value": 1000, "base": 10}) == {"result": 3.0}
    assert env.step("percentage", {"part": 30, "whole": 120}) == {"result": 25.0}
    assert env.step("round_number", {"number": 2.675, "decimal_places": 2}) == {"result": 2.68}
    assert env.step("absolute_value", {"number": -3.5}) == {"result": 3.5}
    assert env.step("si_unit_conversion", {"value": 2.5, "unit_in": "km", "unit_out": "m"}) == {"result": 2500.0}
    assert env.step("imperial_si_conversion", {"value": 5, "unit_in": "miles", "unit_out": "km"}) == {"result": 8.04672}
    assert env.step("imperial_si_conversion", {"value": 10, "unit_in": "pounds", "unit_out": "kg"}) == {"result": 4.535924}
    assert env.step("imperial_si_conversion", {"value": 212, "unit_in": "Fahrenheit", "unit_out": "celsius"}) == {"result": 100.0}
    err = env.step("imperial_si_conversion", {"value": 1, "unit_in": "km", "unit_out": "kg"})
    assert isinstance(err, ToolError) and "different kinds" in err.message


def test_converter_by_hand(tmp_path: Path) -> None:
    env = env_of(decl_of(SIM / "converter_mcp.json"), tmp_path)
    assert env.step("convert_temperature", {"value": -40, "from_scale": "celsius", "to_scale": "fahrenheit"}) == -40.0
    assert env.step("convert_temperature", {"value": 0, "from_scale": "celsius", "to_scale": "kelvin"}) == 273.15
    assert env.step("celsius_to_fahrenheit", {"celsius": 37}) == 98.6
    assert env.step("convert_distance", {"value": 12, "from_unit": "inches", "to_unit": "feet"}) == 1.0
    assert env.step("convert_weight", {"amount": 16, "source": "ounces", "target": "pounds"}) == 1.0
    assert env.step("convert_volume", {"value": 1, "from_unit": "gallons", "to_unit": "liters"}) == 3.785412
    assert env.step("convert_speed", {"speed": 36, "from_unit": "kph", "to_unit": "m/s"}) == 10.0
    assert env.step("convert_currency", {"amount": 200, "rate": 0.92}) == 184.0
    assert env.step("std_dev", {"values": [2, 4, 4, 4, 5, 5, 7, 9]}) == 2.0  # population: divisor n
    assert env.step("median", {"values": [5, 1, 3, 2]}) == 2.5
    assert env.step("average", {"values": [1, 2, 3, 4]}) == {"average": 2.5}
    assert env.step("percent_of", {"percent": 15, "value": 80}) == 12.0
    assert env.step("evaluate", {"expr": "(3 + 4) * 2"}) == {"value": 14.0}


VEHICLE = {"ignitionMode": "STOP", "fuel_level": 10.0, "locked_doors": ["driver", "passenger"], "pedalPosition": 0.0,
           "headlight_mode": "off", "parking_brake_mode": "engage", "temperature": 20.0, "fanSpeed": 50,
           "climate_control_mode": "auto", "cruise_control_speed": 0.0, "cruise_control_active": False}


def test_vehicle_controls_and_their_preconditions(tmp_path: Path) -> None:
    env = env_of(decl_of(SIM / "vehicle_bfcl.jsonl"), tmp_path, {"entities": {}, "globals": dict(VEHICLE)})
    r = env.step("startEngine", {"ignitionMode": "START"})
    assert isinstance(r, ToolError) and "brake pedal must be pressed" in r.message  # the pedal is up
    assert env.step("pressBrakePedal", {"pedalPosition": 0.6}) == {"pedalPosition": 0.6}
    assert isinstance(env.step("startEngine", {"ignitionMode": "START"}), ToolError)  # two doors are unlocked
    env.step("lockDoors", {"unlock": False, "door": ["rear_left", "rear_right", "driver"]})
    assert sorted(env.state["globals"]["locked_doors"]) == ["driver", "passenger", "rear_left", "rear_right"]
    assert env.step("startEngine", {"ignitionMode": "START"}) == {"ignitionMode": "START"}
    assert env.step("setCruiseControl", {"speed": 100, "activate": True})["cruise_control_active"] is True
    assert isinstance(env.step("setCruiseControl", {"speed": 130, "activate": True}), ToolError)  # cannot exceed 120
    assert env.step("fillFuelTank", {"fuelAmount": 40}) == {"fuel_level": 50.0}  # 10 + 40: exactly the 50-gallon tank
    assert isinstance(env.step("fillFuelTank", {"fuelAmount": 0.5}), ToolError)  # over the capacity
    assert isinstance(env.step("adjustClimateControl", {"temperature": 35}), ToolError)  # 16..30
    env.step("releaseBrakePedal", {})
    assert env.state["globals"]["pedalPosition"] == 0.0
    env.step("lockDoors", {"unlock": True, "door": ["driver"]})
    assert "driver" not in env.state["globals"]["locked_doors"]
    assert env.step("startEngine", {"ignitionMode": "STOP"}) == {"ignitionMode": "STOP"}  # stopping needs nothing
    assert env.step("gallonToLiter", {"gallon": 2}) == {"liter": 7.570824}  # a conversion, not a control


def test_home_hub_session_and_guards(tmp_path: Path) -> None:
    g = {"current_user": "ana", "thermostat_power_on": False, "thermostat_mode": "eco", "target_temperature": 20.0,
         "fan_speed": "off", "garage_door": "close", "garage_light_on": False}
    env = env_of(decl_of(SIM / "home_mcp.json"), tmp_path, {"entities": {}, "globals": g})
    assert env.step("whoami", {}) == "ana"
    assert isinstance(env.step("set_thermostat_mode", {"mode": "heat"}), ToolError)  # only while the thermostat is on
    env.step("thermostat_power", {"on": True})
    assert env.step("set_thermostat_mode", {"mode": "heat"}) == {"thermostat_mode": "heat"}
    assert isinstance(env.step("set_target_temperature", {"celsius": 40}), ToolError)  # allowed range 10 to 32
    assert isinstance(env.step("garage_door", {"action": "open"}), ToolError)  # the light has to be on to open it
    assert env.step("garage_door", {"action": "close"}) == {"garage_door": "close"}
    env.step("set_garage_light", {"on": True})
    assert env.step("garage_door", {"action": "open"}) == {"garage_door": "open"}
    env.step("hub_logout", {})
    r = env.step("set_fan", {"speed": "high"})
    assert isinstance(r, ToolError) and "signed in" in r.message
    env.step("hub_login", {"username": "bo", "pin": "1234"})
    assert env.step("set_fan", {"speed": "high"}) == {"fan_speed": "high"} and env.step("whoami", {}) == "bo"


def _market(sym: str, extra: dict | None = None) -> dict:
    stocks = {"AAA": {sym: "AAA", "name": "Alpha Corp", "price": 10.0, "shares_held": 5, "watched": False, **(extra or {})},
              "BBB": {sym: "BBB", "name": "Beta Inc", "price": 250.0, "shares_held": 0, "watched": True, **(extra or {})}}
    return stocks


def test_trading_moves_the_right_money(tmp_path: Path) -> None:
    orders = {"7": {"order_id": 7, "order_type": "Buy", "symbol": "BBB", "price": 240.0, "amount": 1, "status": "pending"},
              "8": {"order_id": 8, "order_type": "Sell", "symbol": "AAA", "price": 9.0, "amount": 2, "status": "completed"}}
    state = {"entities": {"Stock": _market("symbol", {"sector": "tech"}), "Order": orders}, "globals": {"balance": 100.0, "current_user": "kim"}}
    env = env_of(decl_of(SIM / "trading_bfcl.jsonl"), tmp_path, state)
    r = env.step("place_order", {"order_type": "Buy", "symbol": "AAA", "price": 12.5, "amount": 4})
    assert r["status"] == "completed" and r["balance"] == 50.0  # 100 - 12.5 x 4
    assert env.state["entities"]["Stock"]["AAA"]["shares_held"] == 9
    assert isinstance(env.step("place_order", {"order_type": "Buy", "symbol": "BBB", "price": 250.0, "amount": 1}), ToolError)  # 250 > 50
    assert isinstance(env.step("place_order", {"order_type": "Sell", "symbol": "AAA", "price": 11.0, "amount": 10}), ToolError)  # holds 9
    assert env.step("place_order", {"order_type": "Sell", "symbol": "AAA", "price": 11.0, "amount": 9})["balance"] == 149.0
    assert env.step("get_holdings", {}) == []
    assert isinstance(env.step("cancel_order", {"order_id": 8}), ToolError)  # completed, not pending
    assert env.step("cancel_order", {"order_id": 7})["status"] == "cancelled"
    assert env.step("fund_account", {"amount": 51}) == {"balance": 200.0}
    assert isinstance(env.step("fund_account", {"amount": -5}), ToolError)
    assert isinstance(env.step("withdraw_funds", {"amount": 500}), ToolError)  # more than the balance
    assert env.step("withdraw_funds", {"amount": 25}) == {"balance": 175.0}
    assert env.step("add_to_watchlist", {"stock": "AAA"}) == ["AAA", "BBB"]
    assert env.step("remove_stock_from_watchlist", {"symbol": "BBB"}) == ["AAA"]
    assert env.step("get_symbol_by_name", {"name": "beta inc"}) == "BBB"
    assert env.step("calculate_total_cost", {"price": 12.5, "quantity": 4}) == {"total": 50.0}
    env.step("trading_logout", {})
    assert isinstance(env.step("fund_account", {"amount": 1}), ToolError)  # "all need a logged-in user"
    assert env.step("get_account_info", {}) == {"balance": 175.0}  # reads stay open


def test_brokerage_buys_at_the_quoted_price(tmp_path: Path) -> None:
    state = {"entities": {"Stock": _market("ticker"), "Order": {}}, "globals": {"balance": 1000.0, "current_user": None}}
    env = env_of(decl_of(SIM / "brokerage_openai.json"), tmp_path, state)
    assert isinstance(env.step("buy_shares", {"ticker": "BBB", "shares": 2}), ToolError)  # nobody signed in
    env.step("sign_in", {"email": "kim@example.com"})
    r = env.step("buy_shares", {"ticker": "BBB", "shares": 3})
    assert r["balance"] == 250.0 and env.state["entities"]["Stock"]["BBB"]["shares_held"] == 3  # 1000 - 3 x 250
    assert isinstance(env.step("buy_shares", {"ticker": "BBB", "shares": 2}), ToolError)  # 500 > 250
    assert env.step("sell_shares", {"ticker": "AAA", "shares": 5})["balance"] == 300.0
    assert env.step("list_positions", {}) == [{"ticker": "BBB", "name": "Beta Inc", "price": 250.0, "shares": 3}]
    assert env.step("quote", {"ticker": "BBB"})["price"] == 250.0
    assert isinstance(env.step("withdraw_cash", {"amount": 300.01}), ToolError)
    assert env.step("deposit_cash", {"amount": 0.5}) == {"balance": 300.5}


def test_documented_no_change_is_a_read_of_its_arguments(tmp_path: Path) -> None:
    """Not a named operation, but the docs say it changes nothing: a read, deterministic in its arguments."""
    from forgec import ir

    S, I = ir.Type(kind="string"), ir.Type(kind="integer")
    tool = ir.Tool(name="preview_label", description="Lays out a shipping label for a preview; changes nothing.",
                   params=(ir.Param(name="recipient", type=S, required=True), ir.Param(name="copies", type=I, required=True)))
    decl, _ = synthesize(ir.Environment(name="labels", tools=(tool,)))
    t = decl.tools[0]
    assert kind(t) == "read" and not has_write(t.body) and "conservative" not in t.annotations
    env = env_of(decl, tmp_path)
    assert env.step("preview_label", {"recipient": "Ana", "copies": 2}) == {"recipient": "Ana", "copies": 2}


def test_a_precision_param_rounds_any_operation(tmp_path: Path) -> None:
    """BFCL-style `logarithm(value, base, precision)`: the documented precision rounds the result."""
    from forgec import ir

    F, I = ir.Type(kind="number"), ir.Type(kind="integer")
    tool = ir.Tool(name="logarithm", description="Logarithm of a value to a base, to the given precision.",
                   params=(ir.Param(name="value", type=F, required=True), ir.Param(name="base", type=F, required=True),
                           ir.Param(name="precision", type=I, required=True)))
    decl, _ = synthesize(ir.Environment(name="m", tools=(tool,)))
    assert kind(decl.tools[0]) == "read"
    env = env_of(decl, tmp_path)
    assert env.step("logarithm", {"value": 10, "base": 2, "precision": 3}) == 3.322  # log2(10) = 3.3219...


def test_drone_request_bodies_and_a_landed_precondition(tmp_path: Path) -> None:
    """OpenAPI request bodies are the controls' arguments; "must be landed" is what `land()` leaves."""
    g = {"altitude": 0.0, "armed": False, "recording": False}
    env = env_of(decl_of(SIM / "drone_openapi.yaml"), tmp_path, {"entities": {}, "globals": g})
    assert isinstance(env.step("takeOff", {"body": {"altitude": 30}}), ToolError)  # motors not armed
    env.step("armMotors", {"body": {"armed": True}})
    assert env.step("takeOff", {"body": {"altitude": 30}}) == {"altitude": 30.0}
    assert isinstance(env.step("takeOff", {"body": {"altitude": 40}}), ToolError)  # not landed
    env.step("land", {})
    assert isinstance(env.step("takeOff", {"body": {"altitude": 150}}), ToolError)  # at most 120 meters
    assert env.step("takeOff", {"body": {"altitude": 120}}) == {"altitude": 120.0}
    assert env.step("getStatus", {}) == {"altitude": 120.0, "armed": True, "recording": False}


WALLET_OPENAI = [
    {"type": "function", "function": {"name": "get_wallet_balance", "description": "Returns how much money is in the wallet.",
                                      "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "top_up", "description": "Adds money to the wallet; the amount must be positive.",
                                      "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}}},
    {"type": "function", "function": {"name": "withdraw", "description": "Moves money out of the wallet. Fails on insufficient funds.",
                                      "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}}},
]
WALLET_MCP = {"tools": [
    {"name": "balance", "description": "Current cash balance of the account.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "deposit", "description": "Put cash into the account.", "inputSchema": {"type": "object", "properties": {"amount": {"type": "number", "description": "Cash to add, greater than zero"}}, "required": ["amount"]}},
]}


@pytest.mark.parametrize("doc", [WALLET_OPENAI, WALLET_MCP], ids=["openai", "mcp"])
def test_a_wallet_alone_is_an_account(doc, tmp_path: Path) -> None:
    """Deposit / withdraw / balance without any trading: the balance moves; no stock or order is invented."""
    import json as _json

    p = tmp_path / "wallet.json"
    p.write_text(_json.dumps(doc))
    decl = decl_of(p)
    assert not decl.entities and [f.name for f in decl.state.fields] == ["balance"]
    env = env_of(decl, tmp_path, {"entities": {}, "globals": {"balance": 20.0}})
    add = "top_up" if doc is WALLET_OPENAI else "deposit"
    assert env.step(add, {"amount": 5})["balance"] == 25.0
    assert isinstance(env.step(add, {"amount": -1}), ToolError)
    if doc is WALLET_OPENAI:
        assert isinstance(env.step("withdraw", {"amount": 30}), ToolError)
        assert env.step("withdraw", {"amount": 25}) == {"balance": 0.0}
