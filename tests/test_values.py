"""World-state generation: consistent references, spread enums, untied money, realistic
formats, shared searchable values, determinism — checked against the schema, independently."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest

from forgec.runtime import envrt
from forgec.stdlib.values import generate_state, generate_value, mimic

SCHEMA = {
    "entities": {
        "User": {
            "key": "user_id",
            "fields": {
                "user_id": {"type": "str"},
                "name": {"type": "str"},
                "email": {"type": "str"},
                "orders": {"type": "list", "items": {"type": "ref", "entity": "Order"}},
                "payment_methods": {"type": "list", "items": {"type": "ref", "entity": "PaymentMethod"}},
                "address": {"type": "record", "name": "Address"},
                "tier": {"type": "enum", "values": ["bronze", "silver", "gold"]},
            },
        },
        "Order": {
            "key": "order_id",
            "fields": {
                "order_id": {"type": "str"},
                "user_id": {"type": "ref", "entity": "User"},
                "status": {"type": "enum", "values": ["pending", "processed", "delivered", "cancelled"]},
                "total": {"type": "float"},
                "created_at": {"type": "str"},
                "items": {"type": "list", "items": {"type": "record", "name": "Item"}},
                "note": {"type": "str", "optional": True},
            },
        },
        "PaymentMethod": {"key": "payment_method_id", "fields": {"payment_method_id": {"type": "str"}, "balance": {"type": "float"}}},
        "Product": {
            "key": "product_id",
            "fields": {"product_id": {"type": "str"}, "name": {"type": "str"}, "category": {"type": "str"}, "price": {"type": "float"}, "stock": {"type": "int"}},
        },
        "Ticket": {
            "key": "ticket_id",
            "fields": {
                "ticket_id": {"type": "str", "doc": "The ticket id, e.g. 'TKT-004512'."},
                "priority": {"type": "int"},
                "urgency": {"type": "int", "doc": "Urgency (3-7), higher is sooner."},
                "product": {"type": "ref", "entity": "Product"},
            },
        },
        "Counter": {"key": "n", "fields": {"n": {"type": "int"}, "label": {"type": "str"}}},
        "Airport": {"key": "code", "fields": {"code": {"type": "str"}}},
        "Flight": {"key": "flight_number", "fields": {"flight_number": {"type": "str"}, "origin": {"type": "str"}, "destination": {"type": "str"}}},
        "CreditNote": {"key": "credit_note_id", "fields": {"credit_note_id": {"type": "str"}}},
    },
    "records": {
        "Address": {"fields": {"street": {"type": "str"}, "city": {"type": "str"}, "zip": {"type": "str"}}},
        "Item": {"fields": {"product_id": {"type": "ref", "entity": "Product"}, "price": {"type": "float"}, "quantity": {"type": "int"}}},
    },
    "globals": {"now": {"type": "str", "default": "2024-05-15"}, "current_user": {"type": "ref", "entity": "User"}, "open": {"type": "bool"}},
}


@pytest.fixture(scope="module")
def world():
    return generate_state(SCHEMA, seed=7, size=30)


def _check_types(v, tj, where, st):
    """An independent type walk: every value matches its type-json and every ref exists."""
    if v is None:
        assert tj.get("optional"), where
        return
    t = tj["type"]
    if t == "str":
        assert type(v) is str, where
    elif t == "int":
        assert type(v) is int, where
    elif t == "float":
        assert type(v) in (int, float), where
    elif t == "bool":
        assert type(v) is bool, where
    elif t == "enum":
        assert v in tj["values"], where
    elif t == "ref":
        assert str(v) in st["entities"][tj["entity"]], (where, v)
    elif t == "list":
        assert type(v) is list, where
        for i, x in enumerate(v):
            _check_types(x, tj["items"], f"{where}[{i}]", st)
    elif t == "record":
        fields = SCHEMA["records"][tj["name"]]["fields"]
        assert set(v) == set(fields), where
        for k, ftj in fields.items():
            _check_types(v[k], ftj, f"{where}.{k}", st)


def test_every_value_matches_its_type_and_every_reference_exists(world):
    for e, d in SCHEMA["entities"].items():
        coll = world["entities"][e]
        assert coll, e
        for k, rec in coll.items():
            assert set(rec) == set(d["fields"]), (e, k)
            assert str(rec[d["key"]]) == k
            for f, tj in d["fields"].items():
                _check_types(rec[f], tj, f"{e}.{k}.{f}", world)
    assert world["globals"]["now"] == "2024-05-15"
    assert world["globals"]["current_user"] in world["entities"]["User"]
    assert type(world["globals"]["open"]) is bool


def test_deterministic_per_seed():
    a = json.dumps(generate_state(SCHEMA, 3, 10), sort_keys=True)
    assert a == json.dumps(generate_state(SCHEMA, 3, 10), sort_keys=True)
    assert a != json.dumps(generate_state(SCHEMA, 4, 10), sort_keys=True)


def test_back_referenced_lists_are_exact_inverses(world):
    users, orders = world["entities"]["User"], world["entities"]["Order"]
    for uid, u in users.items():
        mine = sorted(o for o, rec in orders.items() if rec["user_id"] == uid)
        assert sorted(u["orders"]) == mine


def test_each_user_has_several_orders_in_several_statuses(world):
    users, orders = world["entities"]["User"], world["entities"]["Order"]
    assert len(orders) > len(users)
    for u in users.values():
        assert len(u["orders"]) >= 2
        assert len({orders[o]["status"] for o in u["orders"]}) >= 2


def test_owned_lists_partition_their_children(world):
    owners = [pm for u in world["entities"]["User"].values() for pm in u["payment_methods"]]
    assert sorted(owners) == sorted(world["entities"]["PaymentMethod"])  # each exactly once
    assert all(u["payment_methods"] for u in world["entities"]["User"].values())


def test_enums_are_spread(world):
    statuses = Counter(o["status"] for o in world["entities"]["Order"].values())
    assert set(statuses) == {"pending", "processed", "delivered", "cancelled"}
    assert min(statuses.values()) >= len(world["entities"]["Order"]) // 8
    assert set(u["tier"] for u in world["entities"]["User"].values()) == {"bronze", "silver", "gold"}


def test_money_has_cents_and_no_ties(world):
    for e, f in (("Order", "total"), ("Product", "price"), ("PaymentMethod", "balance")):
        vals = [r[f] for r in world["entities"][e].values()]
        assert len(set(vals)) == len(vals), (e, f)
        assert all(round(v, 2) == v and v > 0 for v in vals)
        assert any(round(v) != v for v in vals)


def test_searchable_fields_share_values(world):
    cats = Counter(p["category"] for p in world["entities"]["Product"].values())
    assert 2 <= len(cats) <= 8 and max(cats.values()) >= 3
    cities = Counter(u["address"]["city"] for u in world["entities"]["User"].values())
    assert max(cities.values()) >= 2


def test_realistic_formats(world):
    for k, u in world["entities"]["User"].items():
        first, last = u["name"].split(" ")
        assert re.fullmatch(r"[a-z]+_[a-z]+_\d{4}", k)
        assert k.startswith(f"{first.lower()}_{last.lower()}_")
        assert re.fullmatch(r"[a-z]+\.[a-z]+\d*@[a-z]+\.[a-z]+", u["email"])
        assert u["email"].startswith(f"{first.lower()}.{last.lower()}")
        assert re.fullmatch(r"\d+ [A-Z][a-z]+ [A-Z][a-z]+", u["address"]["street"])
    for k, o in world["entities"]["Order"].items():
        assert re.fullmatch(r"#W\d{7}", k)
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00", o["created_at"])
        assert o["created_at"][:10] <= "2024-05-15"
    for k in world["entities"]["Product"]:
        assert re.fullmatch(r"\d{10}", k)
    for k in world["entities"]["Ticket"]:
        assert re.fullmatch(r"TKT-\d{6}", k), k  # follows the format quoted in the key's doc
    assert all(type(r["n"]) is int for r in world["entities"]["Counter"].values())


def test_loads_into_a_generated_env_and_hashes(tmp_path):
    from forgec.codegen import emit_env, load_env_module
    from forgec.lang import ast as A

    env = A.EnvDecl(
        "tiny",
        None,
        (),
        (A.EntityDecl("User", "user_id", (A.FieldDecl("user_id", A.PrimType("str")), A.FieldDecl("name", A.PrimType("str")))),),
        (),
    )
    p = tmp_path / "env.py"
    p.write_text(emit_env(env, "tiny.forge"))
    mod = load_env_module(p)
    st = generate_state(mod.SCHEMA, seed=1, size=5)
    assert len(st["entities"]["User"]) == 5
    e = mod.Env(json.loads(json.dumps(st)))
    assert e.state_hash() == envrt.state_hash(st)


def test_generate_value_and_mimic():
    rng = random.Random(0)
    assert generate_value({"type": "enum", "values": ["a", "b"]}, "status", rng) in ("a", "b")
    assert type(generate_value({"type": "int"}, "quantity", rng)) is int
    assert 18 <= generate_value({"type": "int"}, "age", rng) <= 85
    assert re.fullmatch(r"\+1-\d{3}-\d{3}-\d{4}", generate_value({"type": "str"}, "phone_number", rng))
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", generate_value({"type": "str"}, "date_of_birth", rng))
    xs = generate_value({"type": "list", "items": {"type": "str"}}, "tags", rng)
    assert type(xs) is list and 1 <= len(xs) <= 3
    m = mimic("#W0001234", random.Random(1))
    assert re.fullmatch(r"#W\d{7}", m)
    assert re.fullmatch(r"[0-9][A-Z]{2}[0-9]{3}", mimic("4WQ150", random.Random(2)))


def test_ranges_codes_and_trips(world):
    assert all(3 <= t["urgency"] <= 7 for t in world["entities"]["Ticket"].values())  # range from the doc
    assert all(1 <= t["priority"] <= 4 for t in world["entities"]["Ticket"].values())
    assert all(re.fullmatch(r"[A-Z]{3}", k) for k in world["entities"]["Airport"])
    assert all(f["origin"] != f["destination"] for f in world["entities"]["Flight"].values())
    assert all(re.fullmatch(r"[A-Z]{3}\d{3}", k) for k in world["entities"]["Flight"])
    assert all(re.fullmatch(r"credit_note_\d{5}", k) for k in world["entities"]["CreditNote"])


def test_list_item_names_use_the_one_singular() -> None:
    """Elements of a list field are generated under the singular name the compiler uses."""
    from forgec.stdlib.values import _singular

    got = {n: _singular(n) for n in ("statuses", "categories", "reservation_ids", "excludePatterns", "addresses", "tags")}
    assert got == {"statuses": "status", "categories": "category", "reservation_ids": "reservation_id",
                   "excludePatterns": "excludePattern", "addresses": "address", "tags": "tag"}


def test_a_key_is_never_rewritten_to_agree_with_a_name():
    """Discourse's categories are keyed by `slug` and have a `name`: the slug that keys a record stays its key
    (a slug made from the name would leave the record under another key; the build refused the state)."""
    schema = {"entities": {"Category": {"key": "slug", "fields": {"slug": {"type": "str"}, "name": {"type": "str"}}}}}
    st = generate_state(schema, seed=3, size=6)
    assert st["entities"]["Category"] and all(k == r["slug"] for k, r in st["entities"]["Category"].items())


def test_documented_names_and_numbers():
    """A name field whose doc gives examples takes them, one each, and caps the records to one fewer (a create
    can still name a new one); a field of no declared type whose doc lists numbers holds one of them."""
    schema = {"entities": {"Tag": {"key": "id", "fields": {"id": {"type": "int"}, "name": {"type": "str", "doc": 'Name of the tag (e.g., "Quick", "Healthy", "Family Favorite")'},
                                                            "delay": {"type": "any", "doc": "Delay in ms: 0 | 60000 | 300000"}}}}}
    tags = list(generate_state(schema, seed=1, size=10)["entities"]["Tag"].values())
    assert len(tags) == 2 and {t["name"] for t in tags} < {"Quick", "Healthy", "Family Favorite"}
    assert all(t["delay"] in (0, 60000, 300000) for t in tags)


def test_an_optional_field_of_unknown_meaning_stays_unset():
    """Semaphore's optional `cron_format`, `env`, `app` (review 22: "grant proposal", "kitchen renovation"): nothing
    says what they hold, so the world leaves them unset; a required one still holds a value, a name still a name."""
    schema = {"entities": {"Project": {"key": "id", "fields": {
        "id": {"type": "int"}, "name": {"type": "str"}, "cron_format": {"type": "str", "optional": True},
        "env": {"type": "str", "optional": True}, "blob": {"type": "str"}}}}}
    recs = list(generate_state(schema, seed=2, size=8)["entities"]["Project"].values())
    assert all(r["cron_format"] is None and r["env"] is None for r in recs)
    assert all(isinstance(r["blob"], str) and isinstance(r["name"], str) for r in recs)
