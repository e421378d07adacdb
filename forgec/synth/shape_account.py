"""Accounts with a balance and holdings: a trading bot, a brokerage, a wallet.

A trading API addresses its account by no id: `get_account_info()`, `fund_account(amount)`,
`place_order(order_type, symbol, price, amount)`. CRUD rules see no account entity, so money
never moves and a buy is a log line. This shape models the account as

    state { balance: float, current_user: str? }
    entity Stock key symbol { name, price, <documented quote fields>, shares_held: int, watched: bool }
    entity Order key order_id { side, symbol: Stock, price, quantity, status }

and each tool by what its words and parameters say: a quote reads a Stock; a deposit adds to
the balance and a withdrawal takes from it (never below zero where the docs say so); a buy
takes price x quantity from the balance and adds the shares, a sell needs the shares held
and credits the money (an order filled at once is `completed`); cancelling needs a `pending`
order; the watchlist is the stocks marked watched; holdings are the stocks with shares.
A login/logout pair keeps `current_user`, and a login documented as needed ("refused until
someone has signed in") guards every write.
"""

from __future__ import annotations

import re

from forgec import ir

from forgec.english import singular

from .names import ident, tokens
from .shape_device import session_entity
from .shape_sim import cited, claim_from_text, forge_type, positive, q, sentences
from .shapes import Claim
from .shape_sim import param_text

MONEY = {"balance", "fund", "deposit", "withdraw", "cash", "wallet", "money"}
TRADE = {"order", "buy", "sell", "stock", "share", "symbol", "ticker", "holding", "portfolio", "position", "trade", "watchlist", "quote", "watch"}
SYMBOL = {"symbol", "ticker", "stock"}
QTY = {"amount", "quantity", "share", "qty", "unit", "count"}
NEEDS_LOGIN = re.compile(r"\b(logged[- ]in|signed[- ]in|log(?:ged)? in first|requires? (?:a )?(?:login|sign[- ]in)|until someone has signed in)\b")
INSUFFICIENT = re.compile(r"\b(enough|insufficient|sufficient|more than the (?:balance|cash|available)|larger than the (?:available )?(?:cash|balance)|exceed the (?:balance|cash))\b")


def _w(t: ir.Tool) -> set[str]:
    return {singular(w) for w in tokens(t.name)}


def _p(t: ir.Tool, test) -> ir.Param | None:
    hit = [p for p in t.params if test(p)]
    return hit[0] if len(hit) == 1 else None


def _symbol(t):
    return _p(t, lambda p: p.type.kind == "string" and {singular(w) for w in tokens(p.name)} & SYMBOL and not {"name"} & set(tokens(p.name)))


def _order(t):
    return _p(t, lambda p: {"order", "trade"} & set(tokens(p.name)) and "id" in tokens(p.name))


def _qty(t):
    return _p(t, lambda p: p.type.kind in ("integer", "number") and {singular(w) for w in tokens(p.name)} & QTY)


def _price(t):
    return _p(t, lambda p: p.type.kind in ("integer", "number") and "price" in tokens(p.name))


def _side(t):
    def test(p):
        vals = [str(v).lower() for v in p.type.values] if p.type.kind == "enum" else []
        return "buy" in vals and "sell" in vals
    return _p(t, test)


def _classify(t: ir.Tool) -> str | None:
    w = _w(t)
    sess = session_entity(t)
    if sess:
        return "session"
    req = [p for p in t.params if p.required]
    if _order(t) and len(req) == 1:
        return "cancel" if w & {"cancel", "revoke", "withdraw"} else "order_read"
    if _symbol(t) and _qty(t) and (_side(t) or w & {"buy", "sell", "purchase"}):
        return "place"
    if "watchlist" in w or "watch" in w or "unwatch" in w:
        if not req:
            return "watch_get"
        if _symbol(t) and len(req) == 1:
            return "watch_remove" if w & {"remove", "drop", "delete", "unwatch"} else "watch_add"
        return None
    if _symbol(t) and len(req) == 1:
        return "quote" if w & {"info", "quote", "price", "get", "stock", "detail"} else None
    if len(req) == 1 and req[0].type.kind == "string" and {"name", "company"} & set(tokens(req[0].name)) and w & {"symbol", "ticker"}:
        return "lookup"
    amt = _p(t, lambda p: p.type.kind in ("integer", "number") and {"amount", "sum", "value", "money"} & set(tokens(p.name)))
    if amt is not None and len(req) == 1:
        if w & {"withdraw", "withdrawal", "payout"}:
            return "withdraw"
        if w & {"deposit", "fund", "add", "top", "credit"}:
            return "deposit"
        return None
    if not req:
        if w & {"order", "trade", "history"}:
            return "history"
        if w & {"holding", "position", "portfolio"}:
            return "holdings"
        if w & {"account", "balance", "cash"}:
            return "balance"
    return None


def claim(env: ir.Environment, taken: frozenset) -> Claim | None:
    tools = [t for t in env.tools if t.name not in taken]
    allw = set().union(*(_w(t) for t in tools)) if tools else set()
    if not (allw & MONEY):
        return None
    cls = {t.name: _classify(t) for t in tools}
    mine = [t for t in tools if cls[t.name]]
    kinds = {cls[t.name] for t in mine}
    trading = sum(1 for t in tools if _w(t) & TRADE) >= 2 and kinds & {"place", "deposit", "withdraw"} and kinds & {"quote", "place", "holdings", "watch_add"}
    wallet = {"deposit", "withdraw"} <= kinds or (kinds & {"deposit", "withdraw"} and "balance" in kinds)
    if not (trading or wallet):
        return None
    return _model(env, mine, cls)


def _model(env: ir.Environment, tools: list[ir.Tool], cls: dict) -> Claim | None:
    sym_name = _common([ident(_symbol(t).name) for t in tools if _symbol(t)]) or "symbol"
    order_ps = [_order(t) for t in tools if _order(t)]
    okey = ident(order_ps[0].name) if order_ps else "order_id"
    okt = "int" if order_ps and order_ps[0].type.kind == "integer" else "str"
    side_vals = next((tuple(str(v) for v in _side(t).type.values) for t in tools if _side(t)), ("buy", "sell"))
    # an order's fields take the docs' own names (`order_type`, `amount`): calls drawn from
    # the state then find realistic values under the same names
    places = [t for t in tools if cls[t.name] == "place"]
    qn = ident(_qty(places[0]).name) if places else "quantity"
    sn = next((ident(_side(t).name) for t in places if _side(t)), "side")
    names = {"side": sn, "quantity": qn}
    session = {session_entity(t) for t in tools if cls[t.name] == "session"} >= {"in"}
    guard = next((x for t in tools if cls[t.name] == "session" for x in sentences(t.description) if NEEDS_LOGIN.search(x.lower())), None) if session else None
    # the documented quote fields a Stock carries besides its name and price
    extra: dict[str, str] = {}
    for t in tools:
        if cls[t.name] == "quote" and t.returns is not None and t.returns.kind == "object":
            for f in t.returns.fields:
                fn = ident(f.name)
                ty = forge_type(f.type)
                if fn not in ("name", "price", sym_name, "symbol") and ty in ("str", "int", "float", "bool"):
                    extra[fn] = ty
    state = ['    balance: float "the account\'s cash balance"']
    if session:
        state.append('    current_user: str? "the signed-in user (null when nobody is)"')
    stock = [f'    {sym_name}: str "ticker symbol"', '    name: str "company name"', '    price: float "current share price"']
    stock += [f"    {n}: {t}" for n, t in extra.items()]
    stock += ['    shares_held: int = 0 "shares the account holds"', '    watched: bool = false "on the watchlist"']
    side_t = "enum(" + ", ".join(q(v) for v in side_vals) + ")"
    order = [f"    {okey}: {okt}", f"    {sn}: {side_t}", "    symbol: Stock", "    price: float", f'    {qn}: int "shares in the order (between 1 and 20)"',
             '    status: enum("pending", "completed", "cancelled")']
    kinds = {cls[t.name] for t in tools}
    out = [f"env {ident(env.name)} {{", "  state {", *state, "  }", ""]
    if kinds - {"session", "balance", "deposit", "withdraw"}:  # a wallet alone holds no stocks or orders
        out += ['  entity Stock key ' + sym_name + ' "A listed stock, with the account\'s holding and watch flag." {', *stock, "  }", ""]
    if kinds & {"place", "cancel", "order_read", "history"}:
        out += ['  entity Order key ' + okey + ' "A buy or sell order of the account." {', *order, "  }", ""]
    claimed: dict[str, str] = {}
    cites: dict[str, tuple] = {}  # tool -> ((statement index, the sentence it is read from), ...)
    for t in tools:
        got = _body(t, cls[t.name], sym_name, okey, side_vals, guard, names)
        if got is None:
            continue
        ann, sig, ret, stmts = got
        cites[t.name] = tuple((i, st[1]) for i, st in enumerate(stmts) if isinstance(st, tuple) and st[1])
        stmts = [st[0] if isinstance(st, tuple) else st for st in stmts]
        out += [f"  @{ann}", f"  tool {sig} -> {ret}", f"    {q(t.description or t.name)}", "  {", *[f"    {s}" for s in stmts], "  }", ""]
        claimed[t.name] = ident(t.name)
    out.append("}")
    if not claimed:
        return None
    return cited(claim_from_text("account", "\n".join(out) + "\n", claimed, f"<account:{env.name}>"), cites)


def _common(names: list[str]) -> str | None:
    return max(set(names), key=lambda n: (names.count(n), n == "symbol")) if names else None


def _sig(t: ir.Tool, types: dict[str, str]) -> str:

    ps = []
    for p in t.params:
        text = param_text(p)
        if p.name in types:
            name, rest = text.split(":", 1)
            doc = rest[rest.index('"'):] if '"' in rest else ""
            text = f"{name}: {types[p.name]} {doc}".rstrip()
        ps.append(text)
    return f"{ident(t.name)}({', '.join(ps)})"


def _said(t: ir.Tool, pat: str) -> str | None:
    """The sentence of the tool's docs (or a param's) that matches `pat`: what a statement cites."""
    for text in [t.description] + [p.description for p in t.params]:
        for x in sentences(text):
            if re.search(pat, x.lower()):
                return x
    return None


def _body(t: ir.Tool, c: str, sym: str, okey: str, side_vals: tuple, guard: str | None, names: dict):
    desc = (t.description or "").lower()
    login = [('require state.current_user != null else "no user is signed in"', guard)] if guard else []
    s, o, qp, pp, sd = _symbol(t), _order(t), _qty(t), _price(t), _side(t)
    if c == "session":
        kind = session_entity(t)
        if kind == "in":
            from .shape_device import USER_WORDS

            up = next(p for p in t.params if set(tokens(p.name)) & USER_WORDS)
            return "update", _sig(t, {}), "{current_user: str?}", [f"set state.current_user = {ident(up.name)}", "return {current_user: state.current_user}"]
        if kind == "out":
            return "update", _sig(t, {}), "{current_user: str?}", ["set state.current_user = null", "return {current_user: state.current_user}"]
        return "read", _sig(t, {}), "str?", ["return state.current_user"]
    if c == "quote":
        return "read", _sig(t, {s.name: "Stock"}), "Stock", [f"return {ident(s.name)}"]
    if c == "lookup":
        n = ident(t.params[0].name)
        return "read", _sig(t, {}), "str", [f"let found = Stock where lower(it.name) == lower({n})", 'require len(found) > 0 else "no stock has that name"',
                                            f"return first(found).{sym}"]
    if c == "balance":
        return "read", _sig(t, {}), "{balance: float}", ["return {balance: state.balance}"]
    if c in ("deposit", "withdraw"):
        a = ident(next(p for p in t.params if p.required).name)
        stmts = list(login)
        if positive(desc) or positive(t.params[0].description) or c == "withdraw":
            stmts.append((f'require {a} > 0 else "the amount must be greater than zero"', _said(t, r"positive|greater than (zero|0)")))
        if c == "withdraw":
            if INSUFFICIENT.search(desc) or re.search(r"\b(cannot|can't|not) withdraw more\b", desc):
                stmts.append((f'require {a} <= state.balance else "insufficient funds"', _said(t, INSUFFICIENT.pattern + r"|withdraw more")))
            stmts.append(f"set state.balance = state.balance - {a}")
        else:
            stmts.append(f"set state.balance = state.balance + {a}")
        return "update", _sig(t, {}), "{balance: float}", stmts + ["return {balance: state.balance}"]
    if c == "place":
        stk, n = ident(s.name), ident(qp.name)
        price = ident(pp.name) if pp else f"{stk}.price"
        buy_v = next(v for v in side_vals if v.lower() == "buy")
        sell_v = next(v for v in side_vals if v.lower() == "sell")
        stmts = list(login) + [f'require {n} > 0 else "the number of shares must be greater than zero"']
        if pp:
            stmts.append(f'require {price} > 0 else "the price must be greater than zero"')
        stmts.append(f"let cost = {price} * {n}")
        buy = ['require state.balance >= cost else "insufficient funds"', "set state.balance = state.balance - cost",
               f"set {stk}.shares_held = {stk}.shares_held + {n}"]
        sell = [f'require {stk}.shares_held >= {n} else "not enough shares held"', f"set {stk}.shares_held = {stk}.shares_held - {n}",
                "set state.balance = state.balance + cost"]
        why = _said(t, r"enough|insufficient|sufficient|more shares than|at least")
        if sd is not None:
            side = ident(sd.name)
            stmts.append((f"if {side} == {q(buy_v)} {{ {'; '.join(buy)} }} else {{ {'; '.join(sell)} }}".replace("; ", "\n      "), why))
        else:
            side = q(buy_v if _w(t) & {"buy", "purchase"} else sell_v)
            mine = buy if _w(t) & {"buy", "purchase"} else sell
            stmts += [(mine[0], why)] + mine[1:]
        stmts.append(f'let placed = insert Order {{{okey}: fresh_id(Order), {names["side"]}: {side}, symbol: {stk}.{sym}, price: {price}, {names["quantity"]}: {n}, status: "completed"}}')
        stmts.append(f"return {{{okey}: placed.{okey}, status: placed.status, balance: state.balance}}")
        return "create", _sig(t, {s.name: "Stock"}), f"{{{okey}: any, status: str, balance: float}}", stmts
    if c == "order_read":
        return "read", _sig(t, {o.name: "Order"}), "Order", [f"return {ident(o.name)}"]
    if c == "cancel":
        k = ident(o.name)
        return "update", _sig(t, {o.name: "Order"}), "Order", login + [(f'require {k}.status == "pending" else "only a pending order can be cancelled"', _said(t, r"pending")),
                                                                       f'set {k}.status = "cancelled"', f"return {k}"]
    if c == "history":
        return "read", _sig(t, {}), "list[any]", [f"return map(Order, it.{okey})"]
    if c == "holdings":
        # each position names its stock by the stock's own key (`ticker` where the docs say ticker),
        # with the company name and price a portfolio view shows
        return "read", _sig(t, {}), f"list[{{{sym}: str, name: str, price: float, shares: int}}]", [
            f"return map(Stock where it.shares_held > 0, {{{sym}: it.{sym}, name: it.name, price: it.price, shares: it.shares_held}})"]
    if c == "watch_get":
        return "read", _sig(t, {}), "list[str]", [f"return map(Stock where it.watched, it.{sym})"]
    if c in ("watch_add", "watch_remove"):
        stk = ident(s.name)
        stmts = list(login)
        if c == "watch_remove":
            stmts += [f'require {stk}.watched else "the stock is not on the watchlist"', f"set {stk}.watched = false"]
        else:
            stmts.append(f"set {stk}.watched = true")
        return "update", _sig(t, {s.name: "Stock"}), "list[str]", stmts + [f"return map(Stock where it.watched, it.{sym})"]
    return None


__all__ = ["claim"]
