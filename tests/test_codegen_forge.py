"""Codegen from .forge text (parser + checker + codegen): a tau-bench-retail-style exchange
tool with loops, lookups, lambdas and preconditions, against hand-computed outcomes."""

from __future__ import annotations

import pytest

from forgec import lang
from forgec.codegen import emit_env, load_env_module
from forgec.runtime import envrt
from forgec.runtime.envrt import ToolError

RETAIL = r'''
env retail {
  state { now: str = "2024-05-15" }
  record LineItem { item_id: str  product_id: str  price: float }
  entity Product key product_id { product_id: str  name: str }
  entity Variant key item_id { item_id: str  product_id: Product  price: float  available: bool }
  entity PaymentMethod key payment_method_id {
    payment_method_id: str
    source: enum("gift_card", "credit_card")
    balance: float?
  }
  entity User key user_id { user_id: str  payment_methods: list[PaymentMethod] }
  entity Order key order_id {
    order_id: str
    user_id: User
    status: enum("pending", "delivered", "cancelled", "exchange requested")
    items: list[LineItem]
    exchange_items: list[str]
    exchange_new_items: list[str]
    exchange_price_difference: float
    exchange_payment_method_id: str?
    updated: str
  }

  @update
  tool exchange_delivered_order_items(
    order_id: Order,
    item_ids: list[str],
    new_item_ids: list[str],
    payment_method_id: PaymentMethod,
  ) -> Order
    "Exchange items in a delivered order for items of the same product."
  {
    require order_id.status == "delivered" else "non-delivered order cannot be exchanged"
    require len(item_ids) == len(new_item_ids) else "the number of items to be exchanged should match"
    require payment_method_id.payment_method_id in User[order_id.user_id].payment_methods else "payment method not found"
    let order_item_ids = map(order_id.items, it.item_id)
    let diff = 0.0
    let i = 0
    for new in new_item_ids {
      let old = item_ids[i]
      require old in order_item_ids else "item not found in order"
      require new in Variant else "new item not found"
      let v = Variant[new]
      let old_item = first(order_id.items where it.item_id == old)
      require v.product_id == old_item.product_id else "new item must be the same product"
      require v.available else "new item not available"
      let diff = diff + v.price - old_item.price
      let i = i + 1
    }
    let diff = round(diff, 2)
    require payment_method_id.source != "gift_card" or payment_method_id.balance >= diff else "insufficient gift card balance to pay for the price difference"
    set order_id.status = "exchange requested"
    set order_id.exchange_items = sorted(item_ids)
    set order_id.exchange_new_items = sorted(new_item_ids)
    set order_id.exchange_payment_method_id = payment_method_id.payment_method_id
    set order_id.exchange_price_difference = diff
    set order_id.updated = state.now
    return order_id
  }
}
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    module, diags = lang.parse(RETAIL, "retail.forge")
    assert not [d for d in diags if d.is_error]
    assert not [d for d in lang.check([module]) if d.is_error]
    p = tmp_path_factory.mktemp("retail") / "env.py"
    p.write_text(emit_env(module.envs[0], "retail.forge"))
    return load_env_module(p)


def world(gift_balance: float = 1.0) -> dict:
    return {
        "entities": {
            "Product": {"p1": {"product_id": "p1", "name": "Lamp"}, "p2": {"product_id": "p2", "name": "Kettle"}},
            "Variant": {
                "i1": {"item_id": "i1", "product_id": "p1", "price": 10.0, "available": True},
                "i2": {"item_id": "i2", "product_id": "p2", "price": 20.5, "available": True},
                "i3": {"item_id": "i3", "product_id": "p1", "price": 12.75, "available": True},
                "i4": {"item_id": "i4", "product_id": "p2", "price": 18.0, "available": True},
                "i5": {"item_id": "i5", "product_id": "p2", "price": 30.0, "available": False},
            },
            "PaymentMethod": {
                "c1": {"payment_method_id": "c1", "source": "credit_card", "balance": None},
                "g1": {"payment_method_id": "g1", "source": "gift_card", "balance": gift_balance},
                "g9": {"payment_method_id": "g9", "source": "gift_card", "balance": 500.0},
            },
            "User": {"u1": {"user_id": "u1", "payment_methods": ["c1", "g1"]}},
            "Order": {
                "#W1": {
                    "order_id": "#W1",
                    "user_id": "u1",
                    "status": "delivered",
                    "items": [{"item_id": "i1", "product_id": "p1", "price": 10.0}, {"item_id": "i2", "product_id": "p2", "price": 20.5}],
                    "exchange_items": [],
                    "exchange_new_items": [],
                    "exchange_price_difference": 0.0,
                    "exchange_payment_method_id": None,
                    "updated": "",
                }
            },
        },
        "globals": {"now": "2024-05-15"},
    }


def call(env, items, new, pm="c1"):
    return env.step("exchange_delivered_order_items", {"order_id": "#W1", "item_ids": items, "new_item_ids": new, "payment_method_id": pm})


def test_exchange_succeeds_with_hand_computed_difference(mod):
    env = mod.Env(world())
    r = call(env, ["i2", "i1"], ["i4", "i3"])
    # (18.0 - 20.5) + (12.75 - 10.0) = 0.25
    exp = world()
    exp["entities"]["Order"]["#W1"].update(
        status="exchange requested",
        exchange_items=["i1", "i2"],
        exchange_new_items=["i3", "i4"],
        exchange_price_difference=0.25,
        exchange_payment_method_id="c1",
        updated="2024-05-15",
    )
    assert r == exp["entities"]["Order"]["#W1"]
    assert env.state == exp and env.state_hash() == envrt.state_hash(exp)
    again = call(env, ["i1"], ["i3"])
    assert isinstance(again, ToolError) and again.message == "non-delivered order cannot be exchanged"


@pytest.mark.parametrize(
    "items,new,pm,gift,message",
    [
        (["i1"], ["i3", "i4"], "c1", 1.0, "the number of items to be exchanged should match"),
        (["i1"], ["i3"], "g9", 1.0, "payment method not found"),
        (["i9"], ["i3"], "c1", 1.0, "item not found in order"),
        (["i1"], ["i8"], "c1", 1.0, "new item not found"),
        (["i1"], ["i4"], "c1", 1.0, "new item must be the same product"),
        (["i2"], ["i5"], "c1", 1.0, "new item not available"),
        (["i1"], ["i3"], "g1", 2.5, None),  # 2.75 > 2.5
        (["i1"], ["i3"], "g1", 1.0, "insufficient gift card balance to pay for the price difference"),
    ],
)
def test_exchange_preconditions(mod, items, new, pm, gift, message):
    env = mod.Env(world(gift))
    r = call(env, items, new, pm)
    message = message or "insufficient gift card balance to pay for the price difference"
    assert isinstance(r, ToolError) and r.message == message and r.code == "precondition"
    assert env.state == world(gift)


def test_gift_card_with_enough_balance(mod):
    env = mod.Env(world(3.0))
    r = call(env, ["i1"], ["i3"], "g1")
    assert r["exchange_price_difference"] == 2.75 and r["exchange_payment_method_id"] == "g1"
