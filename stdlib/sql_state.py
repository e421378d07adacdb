"""A plausible SQL database for an env whose state is tables, and SQL arguments drawn from it.

`generate_state` fills entities with independent random records; a table needs columns and
rows that agree (a row holds a value for each column, of the column's type). An entity is a
SQL table when its records have `columns` (a list of records with name and type) and `rows`
(the state `forgec.synth.shape_sql` declares); its records are then a small shop database
(customers, products, orders), built with the same runtime (runtime/sqlmini.py) the tools run,
so stored values follow SQLite's type affinity. Deterministic per seed.

`sql_arg` gives the samplers and the verifier a SQL statement for a parameter that takes one
(named query/sql/statement, or documented as SQL) that names real tables, columns and values:
a random string would only ever hit the "unsupported SQL" error. Which statements, the doc
says (SELECT / INSERT, UPDATE or DELETE / CREATE TABLE); without a doc any kind.
"""

from __future__ import annotations

import random
import re
from typing import Any

from forgec.runtime import sqlmini

SCHEMAS = (
    ("customers", "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, email TEXT UNIQUE, joined TEXT)"),
    ("products", "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT, price REAL, stock INTEGER)"),
    ("orders", "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, product_id INTEGER NOT NULL, "
               "quantity INTEGER DEFAULT 1, total REAL, status TEXT DEFAULT 'pending')"),
)
FIRST = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Niklaus")
LAST = ("Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman", "Wirth")
CITIES = ("Austin", "Boston", "Denver", "Seattle", "Chicago")
PRODUCTS = (("desk lamp", "home", 24.5), ("coffee mug", "kitchen", 8.0), ("notebook", "office", 3.25),
            ("office chair", "office", 149.0), ("kettle", "kitchen", 35.0), ("bookshelf", "home", 89.9),
            ("pen set", "office", 12.0), ("teapot", "kitchen", 27.5), ("rug", "home", 64.0), ("stapler", "office", 9.75))
STATUSES = ("pending", "shipped", "delivered", "cancelled")
NEW_TABLES = ("suppliers", "reviews", "shipments", "invoices", "notes", "employees")


def is_sql_entity(d: dict) -> bool:
    """The table entity `shape_sql` declares: records with `columns` (records with name and type) and `rows`."""
    f = d.get("fields") or {}
    cols = f.get("columns") or {}
    return "rows" in f and cols.get("type") == "list" and (cols.get("items") or {}).get("type") == "record"


def _lit(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


def _table(name: str, ddl: str) -> dict:
    spec = sqlmini.create(ddl)
    return {"name": name, "columns": spec["columns"], "rows": []}


def database(rng: random.Random) -> dict[str, dict]:
    """The shop database: table name -> {name, columns, rows}."""
    tabs = {n: _table(n, ddl) for n, ddl in SCHEMAS}
    people = rng.sample([(f, l) for f in FIRST for l in LAST], 6)
    ins = []
    for i, (f, l) in enumerate(people, 1):
        ins.append(("customers", f"INSERT INTO customers (name, city, email, joined) VALUES "
                    f"({_lit(f + ' ' + l)}, {_lit(rng.choice(CITIES))}, {_lit(f'{f}.{l}@example.com'.lower())}, "
                    f"{_lit(f'2024-0{rng.randint(1, 9)}-{rng.randint(10, 28)}')})"))
    for name, cat, price in rng.sample(PRODUCTS, 8):
        ins.append(("products", f"INSERT INTO products (name, category, price, stock) VALUES "
                    f"({_lit(name)}, {_lit(cat)}, {price!r}, {rng.randint(0, 40)})"))
    for _ in range(10):
        pid = rng.randint(1, 8)
        q = rng.randint(1, 3)
        ins.append(("orders", f"INSERT INTO orders (customer_id, product_id, quantity, status) VALUES "
                    f"({rng.randint(1, 6)}, {pid}, {q}, {_lit(rng.choice(STATUSES))})"))
    for t, stmt in ins:
        tabs[t]["rows"] = sqlmini.write(tabs[t], stmt)["rows"]
    price_of = {r["id"]: r["price"] for r in tabs["products"]["rows"]}
    for r in tabs["orders"]["rows"]:
        r["total"] = round(price_of.get(r["product_id"], 0.0) * r["quantity"], 2)
    return tabs


def fill_sql(schema: dict, out: dict, seed: int) -> None:
    """Replace the random records of a SQL table entity in `out` with the shop database."""
    for e, d in (schema.get("entities") or {}).items():
        if not is_sql_entity(d):
            continue
        key = d.get("key") or "name"
        tabs = database(random.Random(f"forgec-sql:{seed}"))
        col_fields = set(((schema.get("records") or {}).get(d["fields"]["columns"]["items"].get("name", ""), {}) or {}).get("fields") or {})
        recs = {}
        for n, t in tabs.items():
            cols = [{k: v for k, v in c.items() if not col_fields or k in col_fields} for c in t["columns"]]
            recs[n] = {**{f: None for f in d["fields"]}, key: n, "columns": cols, "rows": t["rows"]}
        out[e] = recs


# --------------------------------------------------------------------------- SQL arguments

_SQL_NAME = re.compile(r"(^|_)(query|sql|statement|stmt|sql_query|command)$", re.I)


def takes_sql(name: str, doc: str = "") -> bool:
    return bool(_SQL_NAME.search(name or "") or re.search(r"\bSQL\b", doc or ""))


def kinds_of(doc: str) -> tuple[str, ...]:
    """The statement kinds a doc names (all when it names none)."""
    d = (doc or "").upper()
    ks = []
    if "CREATE TABLE" in d:
        ks.append("create")
    if re.search(r"\bSELECT\b", d):
        ks.append("select")
    ks += [k for k in ("insert", "update", "delete") if re.search(rf"\b{k.upper()}\b", d)]
    return tuple(ks) or ("select", "insert", "update", "delete", "create")


def tables_in(ents: dict) -> list[dict]:
    """The table records of a state's entities (those with columns and rows)."""
    out = []
    for coll in (ents or {}).values():
        for r in (coll or {}).values():
            if isinstance(r, dict) and isinstance(r.get("columns"), list) and isinstance(r.get("rows"), list):
                out.append(r)
    return out


def sql_arg(name: str, doc: str, ents: dict, rng: random.Random) -> str | None:
    """A statement for a SQL parameter, of a kind its doc allows, over the state's tables; None
    when the parameter does not take SQL or the state has no table."""
    if not takes_sql(name, doc):
        return None
    tabs = [t for t in tables_in(ents) if t.get("columns")]
    if not tabs:
        return None
    kind = rng.choice(kinds_of(doc))
    if kind == "create":
        have = {str(t.get("name") or t.get("table_name") or "").lower() for t in tabs}
        free = [n for n in NEW_TABLES if n not in have] or [f"table_{len(have) + 1}"]
        n = rng.choice(free)
        return f"CREATE TABLE {n} (id INTEGER PRIMARY KEY, title TEXT NOT NULL, note TEXT, amount REAL)"
    t = rng.choice(tabs)
    tn = t.get("name") or t.get("table_name")
    cols = [c["name"] for c in t["columns"]]
    pk = next((c["name"] for c in t["columns"] if c.get("pk")), cols[0])
    rows = t["rows"]
    if kind == "insert" or not rows:
        if kind != "insert" and kind != "select":
            kind = "insert"
        if kind == "select":
            return f"SELECT * FROM {tn}"
        cs = [c for c in t["columns"] if not (c.get("pk") and (c.get("type") or "").upper() == "INTEGER")]
        vals = []
        for c in cs:
            seen = [r.get(c["name"]) for r in rows if r.get(c["name"]) is not None]
            v = rng.choice(seen) if seen else (0 if sqlmini.affinity(c.get("type") or "") in ("INTEGER", "REAL", "NUMERIC") else "new")
            if c.get("unique") or c.get("pk"):
                v = f"new.{rng.randint(100, 999)}.{v}" if isinstance(v, str) else (max(seen, default=0) + rng.randint(1, 50) if isinstance(v, (int, float)) else v)
            vals.append(_lit(v))
        return f"INSERT INTO {tn} ({', '.join(c['name'] for c in cs)}) VALUES ({', '.join(vals)})"
    row = rng.choice(rows)
    if kind == "delete":
        return f"DELETE FROM {tn} WHERE {pk} = {_lit(row[pk])}"
    if kind == "update":
        cands = [c for c in t["columns"] if not c.get("pk") and not c.get("unique")] or t["columns"]
        c = rng.choice(cands)
        cur = row.get(c["name"])
        others = sorted({r.get(c["name"]) for r in rows if r.get(c["name"]) not in (None, cur)}, key=repr)
        if isinstance(cur, (int, float)) and not isinstance(cur, bool) and (not others or rng.random() < 0.5):
            return f"UPDATE {tn} SET {c['name']} = {c['name']} + {rng.randint(1, 5)} WHERE {pk} = {_lit(row[pk])}"
        v = rng.choice(others) if others else (f"{cur} (updated)" if isinstance(cur, str) else 1)
        return f"UPDATE {tn} SET {c['name']} = {_lit(v)} WHERE {pk} = {_lit(row[pk])}"
    # select
    c = rng.choice([x for x in cols if x != pk] or cols)
    nums = [x["name"] for x in t["columns"] if sqlmini.affinity(x.get("type") or "") in ("INTEGER", "REAL") and x["name"] != pk]
    form = rng.randrange(4)
    if form == 0:
        return f"SELECT * FROM {tn} WHERE {c} = {_lit(row.get(c))}" if row.get(c) is not None else f"SELECT * FROM {tn} WHERE {pk} = {_lit(row[pk])}"
    if form == 1 and nums:
        n = rng.choice(nums)
        v = row.get(n)
        show = ", ".join(dict.fromkeys([pk, c, n]))
        return f"SELECT {show} FROM {tn} WHERE {n} >= {_lit(v if v is not None else 0)} ORDER BY {n} DESC LIMIT {rng.randint(2, 5)}"
    if form == 2:
        return f"SELECT COUNT(*) FROM {tn} WHERE {c} = {_lit(row.get(c))}" if row.get(c) is not None else f"SELECT COUNT(*) FROM {tn}"
    return f"SELECT {pk}, {c} FROM {tn} ORDER BY {c} LIMIT {rng.randint(2, 4)}"
