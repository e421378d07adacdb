"""A small hand-made build (env module + tasks + manifest) for runtime tests.

The env module follows docs/contracts.md but is written by hand and is
self-contained (its own ToolError and canonical hashing), so runtime tests
do not depend on the compiler. Gold hashes are computed here by running the
gold calls directly on the env class, independently of the runtime.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path

import forgec

SHOP_ENV = r'''
"""Hand-written test env `shop` (follows the generated-module contract)."""
import copy, hashlib, json

ENV_NAME = "shop"


class ToolError(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.message = message


def _canon(v):
    if isinstance(v, float):
        r = round(v, 6)
        return float(r)
    if isinstance(v, dict):
        return {k: _canon(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_canon(x) for x in v]
    return v


def _fn(name, desc, props, required):
    return {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": props, "required": required, "additionalProperties": False}}}


TOOLS = [
    _fn("find_user_by_email", "Find a user by email.", {"email": {"type": "string"}}, ["email"]),
    _fn("get_order", "Get an order.", {"order_id": {"type": "string"}}, ["order_id"]),
    _fn("list_orders", "List a user's orders.", {"user_id": {"type": "string"}}, ["user_id"]),
    _fn("cancel_order", "Cancel a pending order.", {"order_id": {"type": "string"},
        "reason": {"type": "string", "enum": ["no_longer_needed", "ordered_by_mistake"]}}, ["order_id", "reason"]),
    _fn("update_address", "Change the shipping address of a pending order.", {"order_id": {"type": "string"},
        "address": {"type": "string"}}, ["order_id", "address"]),
    _fn("search_products", "Products at or below a price.", {"max_price": {"type": "number"}}, ["max_price"]),
]
TOOL_KINDS = {"find_user_by_email": "search", "get_order": "read", "list_orders": "search", "cancel_order": "delete",
              "update_address": "update", "search_products": "search"}
WRITES_STATE = {k: v in ("create", "update", "delete", "action") for k, v in TOOL_KINDS.items()}
SCHEMA = {"entities": {"User": {"key": "user_id"}, "Order": {"key": "order_id"}, "Product": {"key": "product_id"}}, "globals": {}}
SOURCE_MAP = {}
_SPECS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}


def _typed(v, sch):
    t = sch.get("type")
    if t == "string":
        ok = isinstance(v, str)
    elif t == "number":
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")
    else:
        ok = True
    if ok and "enum" in sch:
        ok = v in sch["enum"]
    return ok


class Env:
    def __init__(self, state=None):
        self._s = {"entities": {"User": {}, "Order": {}, "Product": {}}, "globals": {}}
        if state is not None:
            self.reset(state)

    def reset(self, state):
        self._s = copy.deepcopy(state)

    @property
    def state(self):
        return self._s

    def state_hash(self):
        return hashlib.sha256(json.dumps(_canon(self._s), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()

    def step(self, tool, args):
        spec = _SPECS.get(tool) if isinstance(tool, str) else None
        if spec is None:
            return ToolError(f"unknown tool {tool!r}")
        if not isinstance(args, dict):
            return ToolError("arguments must be an object")
        for k in args:
            if k not in spec["properties"]:
                return ToolError(f"unexpected argument {k!r}")
        for k in spec["required"]:
            if k not in args:
                return ToolError(f"missing argument {k!r}")
        for k, v in args.items():
            if not _typed(v, spec["properties"][k]):
                return ToolError(f"argument {k!r} has the wrong type or value")
        return getattr(self, "_t_" + tool)(**args)

    def _order(self, oid):
        o = self._s["entities"]["Order"].get(oid)
        if o is None:
            raise LookupError(oid)
        return o

    def _t_find_user_by_email(self, email):
        for u in self._s["entities"]["User"].values():
            if u["email"] == email:
                return copy.deepcopy(u)
        return ToolError(f"no user with email {email!r}")

    def _t_get_order(self, order_id):
        o = self._s["entities"]["Order"].get(order_id)
        return copy.deepcopy(o) if o is not None else ToolError(f"no order {order_id!r}")

    def _t_list_orders(self, user_id):
        if user_id not in self._s["entities"]["User"]:
            return ToolError(f"no user {user_id!r}")
        return [copy.deepcopy(o) for k, o in sorted(self._s["entities"]["Order"].items()) if o["user_id"] == user_id]

    def _t_cancel_order(self, order_id, reason):
        o = self._s["entities"]["Order"].get(order_id)
        if o is None:
            return ToolError(f"no order {order_id!r}")
        if o["status"] != "pending":
            return ToolError("only pending orders can be cancelled")
        o["status"] = "cancelled"
        o["cancel_reason"] = reason
        return copy.deepcopy(o)

    def _t_update_address(self, order_id, address):
        o = self._s["entities"]["Order"].get(order_id)
        if o is None:
            return ToolError(f"no order {order_id!r}")
        if o["status"] != "pending":
            return ToolError("only pending orders can be changed")
        if not address.strip():
            return ToolError("address must not be empty")
        o["address"] = address
        return copy.deepcopy(o)

    def _t_search_products(self, max_price):
        return [copy.deepcopy(p) for k, p in sorted(self._s["entities"]["Product"].items()) if p["price"] <= max_price]
'''

INITIAL = {
    "entities": {
        "User": {
            "u_1": {"user_id": "u_1", "name": "Ada Byron", "email": "ada@example.com"},
            "u_2": {"user_id": "u_2", "name": "Alan Turing", "email": "alan@example.com"},
        },
        "Order": {
            "o_1": {"order_id": "o_1", "user_id": "u_1", "status": "pending", "total": 1234.5, "address": "1 Main St", "cancel_reason": None},
            "o_2": {"order_id": "o_2", "user_id": "u_2", "status": "shipped", "total": 89, "address": "2 Elm St", "cancel_reason": None},
            "o_3": {"order_id": "o_3", "user_id": "u_2", "status": "pending", "total": 15.25, "address": "2 Elm St", "cancel_reason": None},
        },
        "Product": {
            "p_1": {"product_id": "p_1", "name": "Walnut Desk", "price": 1234.5},
            "p_2": {"product_id": "p_2", "name": "Oak Chair", "price": 2999.0},
            "p_3": {"product_id": "p_3", "name": "Desk Lamp", "price": 45.99},
        },
    },
    "globals": {},
}

# (name, goal, facts, gold calls [(tool, args)], tell, initial state stored in a file?)
TASKS = [
    ("cancel_order", "cancel my order", {"order_id": "o_1", "reason": "no_longer_needed"},
     [("cancel_order", {"order_id": "o_1", "reason": "no_longer_needed"})], [], False),
    ("move_by_email", "ship my pending order to my new address", {"email": "alan@example.com", "address": "9 Oak Rd"},
     [("find_user_by_email", {"email": "alan@example.com"}), ("list_orders", {"user_id": "u_2"}),
      ("update_address", {"order_id": "o_3", "address": "9 Oak Rd"})], [], True),
    ("desk_price", "know the price of the walnut desk", {"max_price": 2000},
     [("search_products", {"max_price": 2000})], [1234.5], False),
    ("order_total", "know the total of my order", {"order_id": "o_2"},
     [("get_order", {"order_id": "o_2"})], [89], False),
    ("cheapest_item", "know which product is cheapest and what it costs", {"max_price": 100},
     [("search_products", {"max_price": 100})], ["Desk Lamp", 45.99], False),
]


def load_env_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"_fixture_env_{abs(hash(str(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _diff(before, after, path=""):
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for k in sorted(set(before) | set(after)):
            p = f"{path}/{k}"
            if k not in after:
                out.append({"op": "remove", "path": p, "before": before[k], "after": None})
            elif k not in before:
                out.append({"op": "add", "path": p, "before": None, "after": after[k]})
            else:
                out.extend(_diff(before[k], after[k], p))
        return out
    return [] if before == after else [{"op": "change", "path": path, "before": before, "after": after}]


def make_build(root: Path, *, forgec_version: str | None = None, schema_version: str = "1.0") -> Path:
    """Write the fixture build under `root` and return it."""
    root = Path(root)
    (root / "envs" / "shop").mkdir(parents=True, exist_ok=True)
    (root / "tasks").mkdir(parents=True, exist_ok=True)
    (root / "states").mkdir(parents=True, exist_ok=True)
    env_py = root / "envs" / "shop" / "env.py"
    env_py.write_text(SHOP_ENV, encoding="utf-8")
    mod = load_env_module(env_py)
    lines = []
    for name, goal, facts, calls, tell, in_file in TASKS:
        env = mod.Env(INITIAL)
        init_hash = env.state_hash()
        gold = []
        for tool, args in calls:
            res = env.step(tool, copy.deepcopy(args))
            assert not isinstance(res, Exception), (name, tool, res)
            gold.append({"node": f"n{len(gold)}", "tool": tool, "arguments": args, "result": res})
        instruction = f"I want to {goal}. " + " ".join(f"My {k.replace('_', ' ')} is {v}." for k, v in sorted(facts.items()))
        task = {
            "id": f"shop/{name}", "env": "shop",
            "blueprint": {"path": f"blueprints/shop/{name}.forge", "hash": "0" * 64, "name": name},
            "seed": 0, "initial_state_hash": init_hash, "instruction": instruction,
            "user": {"goal": goal, "persona": "", "facts": facts},
            "gold_calls": gold, "gold_state_hash": env.state_hash(), "gold_diff": _diff(INITIAL, env.state),
            "tell": tell, "read_only": env.state_hash() == init_hash,
        }
        if in_file:
            (root / "states" / f"{name}.json").write_text(json.dumps(INITIAL), encoding="utf-8")
            task["initial_state_file"] = f"states/{name}.json"
        else:
            task["initial_state"] = INITIAL
        lines.append(json.dumps(task, sort_keys=True))
    (root / "tasks" / "shop.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = {"metadata": {"forgec_version": forgec_version or forgec.__version__, "schema_version": schema_version,
                             "generated_at": "2026-01-01T00:00:00Z", "invocation_id": "fixture"},
                "envs": {"shop": {"tasks": len(TASKS)}}}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    from forgec.runtime.loader import record_files

    record_files(root)  # the file hashes the runtime's integrity check compares with
    return root
