"""Hand-written envs for the graph and sampler tests, independent of synthesis and codegen.

Each env is an `EnvDecl` (the AST the synthesizer would produce for a tau-bench-like
domain) plus a hand-written Python module that follows the generated-module contract
of docs/contracts.md (ENV_NAME, TOOLS, TOOL_KINDS, WRITES_STATE, SCHEMA, Env with
reset/step/state/state_hash; ToolError returned, never raised; transactional steps),
plus a seeded world state. The tests at the bottom check the modules keep that contract.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import types

from forgec.lang import ast as A

S, I, F, B = A.PrimType("str"), A.PrimType("int"), A.PrimType("float"), A.PrimType("bool")


def L(t):
    return A.ListType(t)


def N(n):
    return A.NamedType(n)


def E(*vals):
    return A.EnumType(tuple(vals))


def fld(name, t):
    return A.FieldDecl(name, t)


def prm(name, t, default=None):
    return A.ParamDecl(name, t, A.Literal(default) if default is not None else None)


def tool(kind, name, params, returns, doc=""):
    return A.ToolDecl(name, tuple(params), returns, doc or name.replace("_", " "), python="return None", annotations=(kind,))


class ToolError(Exception):
    pass


def _schema(env: A.EnvDecl) -> dict:
    def tj(t):
        if isinstance(t, A.PrimType):
            return {"type": t.name}
        if isinstance(t, A.EnumType):
            return {"enum": list(t.values)}
        if isinstance(t, A.ListType):
            return {"list": tj(t.item)}
        if isinstance(t, A.NamedType):
            return {"ref": t.name}
        if isinstance(t, A.OptionalType):
            return {"optional": tj(t.inner)}
        return {"type": "any"}

    return {
        "entities": {e.name: {"key": e.key, "fields": {f.name: tj(f.type) for f in e.fields}} for e in env.entities},
        "records": {r.name: {"fields": {f.name: tj(f.type) for f in r.fields}} for r in env.records},
        "globals": {},
    }


class BaseEnv:
    """Contract behaviour shared by the hand-written modules: validation, transactions, hashing."""

    DECL: A.EnvDecl

    def __init__(self, state=None):
        self._state = {"entities": {}, "globals": {}}
        if state is not None:
            self.reset(state)

    def reset(self, state):
        self._state = copy.deepcopy(state)

    @property
    def state(self):
        return self._state

    def state_hash(self):
        return hashlib.sha256(json.dumps(self._state, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    def step(self, name, args):
        t = self.DECL.tool(name)
        if t is None:
            return ToolError(f"unknown tool {name!r}")
        if not isinstance(args, dict):
            return ToolError("arguments must be an object")
        names = {p.name for p in t.params}
        extra = sorted(set(args) - names)
        if extra:
            return ToolError(f"unexpected argument {extra[0]!r}")
        full = {}
        for p in t.params:
            if p.name in args:
                full[p.name] = args[p.name]
            elif p.default is not None:
                full[p.name] = p.default.value
            else:
                return ToolError(f"missing argument {p.name!r}")
            err = self._check(p.type, full[p.name], p.name)
            if err:
                return ToolError(err)
        # every t_* method checks all its preconditions before it mutates anything, so a
        # ToolError leaves the state as it was (transactional without a snapshot)
        try:
            return getattr(self, "t_" + name)(**full)
        except ToolError as e:
            return e

    def _check(self, t, v, where):
        if isinstance(t, A.EnumType):
            return None if v in t.values else f"{where}: {v!r} is not one of {list(t.values)}"
        if isinstance(t, A.PrimType):
            ok = {"str": isinstance(v, str), "int": isinstance(v, int) and not isinstance(v, bool),
                  "float": isinstance(v, (int, float)) and not isinstance(v, bool), "bool": isinstance(v, bool)}.get(t.name, True)
            return None if ok else f"{where}: expected {t.name}"
        if isinstance(t, A.ListType):
            if not isinstance(v, list):
                return f"{where}: expected a list"
            for x in v:
                e = self._check(t.item, x, where)
                if e:
                    return e
            return None
        if isinstance(t, A.NamedType):
            ent = self.DECL.entity(t.name)
            if ent is not None:
                return None if str(v) in self._state["entities"][t.name] else f"{t.name} {v!r} not found"
            rec = self.DECL.record(t.name)
            if not isinstance(v, dict):
                return f"{where}: expected a record"
            fields = {f.name: f for f in rec.fields}
            if set(v) - set(fields) or set(fields) - set(v):
                return f"{where}: record fields {sorted(v)} != {sorted(fields)}"
            for k, x in v.items():
                e = self._check(fields[k].type, x, f"{where}.{k}")
                if e:
                    return e
        return None

    def ent(self, name):
        return self._state["entities"][name]


def make_module(name: str, decl: A.EnvDecl, cls) -> types.ModuleType:
    m = types.ModuleType(f"hand_{name}")
    m.ENV_NAME = name
    m.TOOLS = [{"type": "function", "function": {"name": t.name, "description": t.doc, "parameters": {"type": "object"}}} for t in decl.tools]
    m.TOOL_KINDS = {t.name: t.annotations[0] for t in decl.tools}
    m.WRITES_STATE = {t.name: t.annotations[0] in ("create", "update", "delete") for t in decl.tools}
    m.SCHEMA = _schema(decl)
    m.SOURCE_MAP = {}
    m.Env = cls
    m.ToolError = ToolError
    return m


# --------------------------------------------------------------------------- retail


PAYMENT = A.RecordDecl("PaymentMethod", (fld("id", S), fld("source", E("credit_card", "gift_card", "paypal"))))
ITEM = A.RecordDecl("Item", (fld("item_id", S), fld("product_id", S), fld("name", S), fld("price", F)))
ADDRESS = A.RecordDecl("Address", (fld("address1", S), fld("city", S), fld("zip", S)))

RETAIL = A.EnvDecl(
    "retail",
    None,
    (PAYMENT, ITEM, ADDRESS),
    (
        A.EntityDecl("User", "user_id", (fld("user_id", S), fld("first_name", S), fld("last_name", S), fld("email", S),
                                          fld("address", N("Address")), fld("payment_methods", L(N("PaymentMethod"))), fld("orders", L(N("Order"))))),
        A.EntityDecl("Order", "order_id", (fld("order_id", S), fld("user_id", N("User")), fld("status", E("pending", "processed", "delivered", "cancelled", "return requested")),
                                            fld("items", L(N("Item"))), fld("total", F), fld("payment_method_id", S))),
        A.EntityDecl("Product", "product_id", (fld("product_id", S), fld("name", S), fld("category", S), fld("price", F), fld("stock", I))),
    ),
    (
        tool("read", "find_user_id_by_email", [prm("email", S)], S),
        tool("read", "find_user_id_by_name_zip", [prm("first_name", S), prm("last_name", S), prm("zip", S)], S),
        tool("read", "get_user_details", [prm("user_id", N("User"))], N("User")),
        tool("read", "get_order_details", [prm("order_id", N("Order"))], N("Order")),
        tool("read", "get_product_details", [prm("product_id", N("Product"))], N("Product")),
        tool("search", "list_products_by_category", [prm("category", S)], L(N("Product"))),
        tool("update", "cancel_pending_order", [prm("order_id", N("Order")), prm("reason", E("no longer needed", "ordered by mistake"))], N("Order")),
        tool("update", "modify_pending_order_payment", [prm("order_id", N("Order")), prm("payment_method_id", S)], N("Order")),
        tool("update", "return_delivered_order_items", [prm("order_id", N("Order")), prm("item_ids", L(S)), prm("payment_method_id", S)], N("Order")),
        tool("update", "modify_user_address", [prm("user_id", N("User")), prm("address1", S), prm("city", S), prm("zip", S)], N("User")),
        tool("create", "restock_product", [prm("product_id", S), prm("quantity", I)], N("Product")),
        tool("action", "transfer_to_human_agents", [prm("summary", S)], S),
    ),
)


class RetailEnv(BaseEnv):
    DECL = RETAIL

    def t_find_user_id_by_email(self, email):
        for u in self.ent("User").values():
            if u["email"] == email:
                return u["user_id"]
        raise ToolError("user not found")

    def t_find_user_id_by_name_zip(self, first_name, last_name, zip):
        for k in sorted(self.ent("User")):
            u = self.ent("User")[k]
            if (u["first_name"], u["last_name"], u["address"]["zip"]) == (first_name, last_name, zip):
                return u["user_id"]
        raise ToolError("user not found")

    def t_get_user_details(self, user_id):
        return copy.deepcopy(self.ent("User")[user_id])

    def t_get_order_details(self, order_id):
        return copy.deepcopy(self.ent("Order")[order_id])

    def t_get_product_details(self, product_id):
        return copy.deepcopy(self.ent("Product")[product_id])

    def t_list_products_by_category(self, category):
        out = [copy.deepcopy(p) for k, p in sorted(self.ent("Product").items()) if p["category"] == category]
        if not out:
            raise ToolError("no products in this category")
        return out

    def _user_pm(self, order, pm):
        user = self.ent("User")[order["user_id"]]
        if pm not in [p["id"] for p in user["payment_methods"]]:
            raise ToolError("payment method not found")

    def t_cancel_pending_order(self, order_id, reason):
        o = self.ent("Order")[order_id]
        if o["status"] != "pending":
            raise ToolError("non-pending order cannot be cancelled")
        o["status"] = "cancelled"
        return copy.deepcopy(o)

    def t_modify_pending_order_payment(self, order_id, payment_method_id):
        o = self.ent("Order")[order_id]
        if o["status"] != "pending":
            raise ToolError("non-pending order cannot be modified")
        self._user_pm(o, payment_method_id)
        if o["payment_method_id"] == payment_method_id:
            raise ToolError("the new payment method should be different from the current one")
        o["payment_method_id"] = payment_method_id
        return copy.deepcopy(o)

    def t_return_delivered_order_items(self, order_id, item_ids, payment_method_id):
        o = self.ent("Order")[order_id]
        if o["status"] != "delivered":
            raise ToolError("non-delivered order cannot be returned")
        self._user_pm(o, payment_method_id)
        have = [i["item_id"] for i in o["items"]]
        for i in item_ids:
            if i not in have:
                raise ToolError("some item not found")
        o["status"] = "return requested"
        return copy.deepcopy(o)

    def t_modify_user_address(self, user_id, address1, city, zip):
        u = self.ent("User")[user_id]
        new = {"address1": address1, "city": city, "zip": zip}
        if u["address"] == new:
            raise ToolError("address unchanged")
        u["address"] = new
        return copy.deepcopy(u)

    def t_restock_product(self, product_id, quantity):
        p = self.ent("Product").get(product_id)
        if p is None:
            raise ToolError("product not found")
        p["stock"] += quantity
        return copy.deepcopy(p)

    def t_transfer_to_human_agents(self, summary):
        return "Transfer successful"


FIRST = ["sara", "noah", "mia", "liam", "emma", "omar", "yara", "ivan", "lena", "raj", "ana", "tom"]
LAST = ["doe", "brown", "kim", "garcia", "silva", "chen", "ito", "khan"]
CITIES = [("Austin", "78701"), ("Denver", "80202"), ("Boston", "02108"), ("Seattle", "98101")]


def retail_state(seed: int = 0, size: int = 12) -> dict:
    rng = random.Random(seed)
    users, orders, products = {}, {}, {}
    cats = ["lamp", "kettle", "backpack", "watch"]
    for i in range(size * 2):
        pid = str(6000000000 + 7919 * i)
        products[pid] = {"product_id": pid, "name": f"{cats[i % 4]} {i}", "category": cats[i % 4],
                         "price": round(rng.uniform(10, 400), 2), "stock": rng.randint(0, 30)}
    pids = sorted(products)
    n_order = 0
    for i in range(size):
        uid = f"{FIRST[i % len(FIRST)]}_{LAST[(i * 3) % len(LAST)]}_{100 + i}"
        city, z = CITIES[i % len(CITIES)]
        pms = [{"id": f"credit_card_{1000 + i}", "source": "credit_card"}, {"id": f"gift_card_{2000 + i}", "source": "gift_card"}]
        if i % 3 == 0:
            pms.append({"id": f"paypal_{3000 + i}", "source": "paypal"})
        user_orders = []
        for j in range(rng.randint(2, 4)):
            oid = f"#W{1000000 + n_order}"
            n_order += 1
            items = []
            for k in range(rng.randint(1, 3)):
                p = products[pids[rng.randrange(len(pids))]]
                items.append({"item_id": str(1000000000 + n_order * 10 + k), "product_id": p["product_id"], "name": p["name"], "price": p["price"]})
            orders[oid] = {"order_id": oid, "user_id": uid, "status": rng.choice(["pending", "pending", "processed", "delivered", "delivered", "cancelled"]),
                           "items": items, "total": round(sum(x["price"] for x in items), 2), "payment_method_id": pms[0]["id"]}
            user_orders.append(oid)
        users[uid] = {"user_id": uid, "first_name": FIRST[i % len(FIRST)], "last_name": LAST[(i * 3) % len(LAST)],
                      "email": f"{uid}@example.com", "address": {"address1": f"{10 + i} Main St", "city": city, "zip": z},
                      "payment_methods": pms, "orders": user_orders}
    return {"entities": {"User": users, "Order": orders, "Product": products}, "globals": {}}


RETAIL_MODULE = make_module("retail", RETAIL, RetailEnv)


# --------------------------------------------------------------------------- airline


SEG = A.RecordDecl("FlightSegment", (fld("flight_number", S), fld("date", S)))
RES_SEG = A.RecordDecl("ReservationFlight", (fld("flight_number", S), fld("date", S), fld("price", F)))
PASSENGER = A.RecordDecl("Passenger", (fld("first_name", S), fld("last_name", S), fld("dob", S)))
CABIN = E("basic_economy", "economy", "business")

AIRLINE = A.EnvDecl(
    "airline",
    None,
    (SEG, RES_SEG, PASSENGER, PAYMENT),
    (
        A.EntityDecl("User", "user_id", (fld("user_id", S), fld("first_name", S), fld("last_name", S),
                                          fld("payment_methods", L(N("PaymentMethod"))), fld("reservations", L(N("Reservation"))))),
        A.EntityDecl("Reservation", "reservation_id", (fld("reservation_id", S), fld("user_id", N("User")), fld("origin", S), fld("destination", S),
                                                        fld("cabin", CABIN), fld("flights", L(N("ReservationFlight"))), fld("passengers", L(N("Passenger"))),
                                                        fld("status", E("active", "cancelled")), fld("total_baggages", I))),
        A.EntityDecl("Flight", "flight_id", (fld("flight_id", S), fld("flight_number", S), fld("origin", S), fld("destination", S), fld("date", S),
                                              fld("price", F), fld("available_seats", I))),
    ),
    (
        tool("read", "get_user_details", [prm("user_id", S)], N("User")),
        tool("read", "get_reservation_details", [prm("reservation_id", S)], N("Reservation")),
        tool("search", "search_direct_flight", [prm("origin", S), prm("destination", S), prm("date", S)], L(N("Flight"))),
        tool("create", "book_reservation", [prm("user_id", S), prm("origin", S), prm("destination", S), prm("cabin", CABIN),
                                             prm("flights", L(N("FlightSegment"))), prm("passengers", L(N("Passenger"))), prm("payment_id", S)], N("Reservation")),
        tool("update", "update_reservation_flights", [prm("reservation_id", S), prm("cabin", CABIN), prm("flights", L(N("FlightSegment")))], N("Reservation")),
        tool("update", "update_reservation_baggages", [prm("reservation_id", S), prm("total_baggages", I), prm("payment_id", S)], N("Reservation")),
        tool("delete", "cancel_reservation", [prm("reservation_id", S)], N("Reservation")),
        tool("action", "think", [prm("thought", S)], S),
    ),
)


class AirlineEnv(BaseEnv):
    DECL = AIRLINE

    def _res(self, rid):
        r = self.ent("Reservation").get(rid)
        if r is None:
            raise ToolError("reservation not found")
        return r

    def _user(self, uid):
        u = self.ent("User").get(uid)
        if u is None:
            raise ToolError("user not found")
        return u

    def t_get_user_details(self, user_id):
        return copy.deepcopy(self._user(user_id))

    def t_get_reservation_details(self, reservation_id):
        return copy.deepcopy(self._res(reservation_id))

    def t_search_direct_flight(self, origin, destination, date):
        return [copy.deepcopy(f) for k, f in sorted(self.ent("Flight").items())
                if (f["origin"], f["destination"], f["date"]) == (origin, destination, date)]

    def _segments(self, flights):
        out = []
        for seg in flights:
            hit = [f for f in self.ent("Flight").values() if f["flight_number"] == seg["flight_number"] and f["date"] == seg["date"]]
            if not hit:
                raise ToolError(f"flight {seg['flight_number']} not found")
            if hit[0]["available_seats"] < 1:
                raise ToolError("not enough seats")
            out.append(hit[0])
        return out

    def t_book_reservation(self, user_id, origin, destination, cabin, flights, passengers, payment_id):
        u = self._user(user_id)
        if payment_id not in [p["id"] for p in u["payment_methods"]]:
            raise ToolError("payment method not found")
        segs = self._segments(flights)
        if not passengers:
            raise ToolError("no passengers")
        rid = f"R{len(self.ent('Reservation')) + 100:05d}"
        for f in segs:
            f["available_seats"] -= len(passengers)
        r = {"reservation_id": rid, "user_id": user_id, "origin": origin, "destination": destination, "cabin": cabin,
             "flights": [{"flight_number": f["flight_number"], "date": f["date"], "price": f["price"]} for f in segs],
             "passengers": passengers, "status": "active", "total_baggages": 0}
        self.ent("Reservation")[rid] = r
        u["reservations"].append(rid)
        return copy.deepcopy(r)

    def t_update_reservation_flights(self, reservation_id, cabin, flights):
        r = self._res(reservation_id)
        if r["status"] != "active":
            raise ToolError("reservation is cancelled")
        segs = self._segments(flights)
        new = [{"flight_number": f["flight_number"], "date": f["date"], "price": f["price"]} for f in segs]
        if new == r["flights"] and cabin == r["cabin"]:
            raise ToolError("nothing to change")
        r["flights"], r["cabin"] = new, cabin
        return copy.deepcopy(r)

    def t_update_reservation_baggages(self, reservation_id, total_baggages, payment_id):
        r = self._res(reservation_id)
        u = self._user(r["user_id"])
        if payment_id not in [p["id"] for p in u["payment_methods"]]:
            raise ToolError("payment method not found")
        if total_baggages == r["total_baggages"]:
            raise ToolError("nothing to change")
        r["total_baggages"] = total_baggages
        return copy.deepcopy(r)

    def t_cancel_reservation(self, reservation_id):
        r = self._res(reservation_id)
        if r["status"] == "cancelled":
            raise ToolError("reservation is already cancelled")
        r["status"] = "cancelled"
        return copy.deepcopy(r)

    def t_think(self, thought):
        return ""


AIRPORTS = ["SFO", "JFK", "LAX", "ORD", "SEA", "BOS"]


def airline_state(seed: int = 0, size: int = 10) -> dict:
    rng = random.Random(seed)
    flights = {}
    for i in range(size * 6):
        o, d = rng.sample(AIRPORTS[:4], 2)
        date = f"2024-05-{rng.randint(15, 17)}"
        fn = f"HAT{100 + i:03d}"
        fid = f"{fn}_{date}"
        flights[fid] = {"flight_id": fid, "flight_number": fn, "origin": o, "destination": d, "date": date,
                        "price": float(rng.randint(60, 900)), "available_seats": rng.randint(0, 9)}
    fl = sorted(flights)
    users, res = {}, {}
    for i in range(size):
        uid = f"{FIRST[i % len(FIRST)]}_{LAST[i % len(LAST)]}_{400 + i}"
        pms = [{"id": f"credit_card_{7000 + i}", "source": "credit_card"}, {"id": f"certificate_{8000 + i}", "source": "gift_card"}]
        rids = []
        for j in range(rng.randint(2, 4)):
            rid = f"{chr(65 + i % 26)}{chr(65 + j)}{rng.randint(1000, 9999)}"
            f = flights[fl[rng.randrange(len(fl))]]
            res[rid] = {"reservation_id": rid, "user_id": uid, "origin": f["origin"], "destination": f["destination"],
                        "cabin": rng.choice(["basic_economy", "economy", "business"]),
                        "flights": [{"flight_number": f["flight_number"], "date": f["date"], "price": f["price"]}],
                        "passengers": [{"first_name": FIRST[i % len(FIRST)], "last_name": LAST[i % len(LAST)], "dob": f"19{60 + i}-0{1 + j}-1{j}"}],
                        "status": rng.choice(["active", "active", "active", "cancelled"]), "total_baggages": rng.randint(0, 2)}
            rids.append(rid)
        users[uid] = {"user_id": uid, "first_name": FIRST[i % len(FIRST)], "last_name": LAST[i % len(LAST)],
                      "payment_methods": pms, "reservations": rids}
    return {"entities": {"User": users, "Reservation": res, "Flight": flights}, "globals": {}}


AIRLINE_MODULE = make_module("airline", AIRLINE, AirlineEnv)


# --------------------------------------------------------------------------- the hand modules keep the contract


def test_hand_module_contract_transactional_and_validating():
    st = retail_state(1)
    env = RETAIL_MODULE.Env(st)
    h0 = env.state_hash()
    assert isinstance(env.step("nope", {}), ToolError)
    assert isinstance(env.step("get_order_details", {}), ToolError)  # missing argument
    assert isinstance(env.step("get_order_details", {"order_id": "#W9"}), ToolError)  # no such key
    oid = next(k for k, o in sorted(st["entities"]["Order"].items()) if o["status"] != "pending")
    assert isinstance(env.step("cancel_pending_order", {"order_id": oid, "reason": "no longer needed"}), ToolError)
    assert env.state_hash() == h0  # failed steps change nothing
    pend = next(k for k, o in sorted(st["entities"]["Order"].items()) if o["status"] == "pending")
    r = env.step("cancel_pending_order", {"order_id": pend, "reason": "ordered by mistake"})
    assert r["status"] == "cancelled" and env.state_hash() != h0
    assert st["entities"]["Order"][pend]["status"] == "pending"  # the world state itself is untouched


def test_hand_airline_search_and_book():
    st = airline_state(2)
    env = AIRLINE_MODULE.Env(st)
    f = next(f for _, f in sorted(st["entities"]["Flight"].items()) if f["available_seats"] > 0)
    found = env.step("search_direct_flight", {"origin": f["origin"], "destination": f["destination"], "date": f["date"]})
    assert f["flight_number"] in [x["flight_number"] for x in found]
    uid = sorted(st["entities"]["User"])[0]
    u = st["entities"]["User"][uid]
    r = env.step("book_reservation", {"user_id": uid, "origin": f["origin"], "destination": f["destination"], "cabin": "economy",
                                      "flights": [{"flight_number": f["flight_number"], "date": f["date"]}],
                                      "passengers": [{"first_name": "a", "last_name": "b", "dob": "1990-01-01"}],
                                      "payment_id": u["payment_methods"][0]["id"]})
    assert not isinstance(r, ToolError), r
    assert r["reservation_id"] in env.state["entities"]["Reservation"]
