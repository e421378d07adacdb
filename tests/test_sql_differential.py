"""The SQL subset (runtime/sqlmini.py, the `sql_*` builtins) against Python's sqlite3 as the
independent implementation: the same statements give the same rows, affected counts, table
info and refusals; and the SQL shape (forgec/synth/shape_sql.py) on two differently written
sources: the MCP SQLite server's tools (read_query a read, write_query a write, create /
list / describe) and an OpenAI-tools "run a SQL statement against the company database"."""

from __future__ import annotations

import copy
import json
import random
import sqlite3
import tempfile
from pathlib import Path

import pytest

from forgec import lang
from forgec.diagnostics import has_errors, render
from forgec.frontends import read_paths
from forgec.lang import ast as A
from forgec.runtime import sqlmini
from forgec.runtime.envrt import ToolError
from forgec.stdlib import sql_state
from forgec.synth import synthesize

from conftest import CORPUS

REPO = Path(__file__).resolve().parent.parent
SQLITE_DOCS = CORPUS / "mcp_server_sqlite"
COMPANY = REPO / "tests" / "fixtures" / "sql" / "company_openai.json"

DDL = ("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind varchar(12) DEFAULT 'misc', "
       "price REAL, qty int, code TEXT UNIQUE, score NUMERIC)")
WRITES = [
    "INSERT INTO items (name, price, qty, code, score) VALUES ('lamp', 12.5, 3, 'L1', '7'), ('mug', '4', '10', 'M1', '2.0')",
    "insert into items values (10, 'desk', 'furniture', 99, 1, 'D1', 'high')",
    "INSERT INTO items (id, name, price, qty) VALUES (5, 'pen', 1.25, NULL)",
    "INSERT INTO items (name, qty, score) VALUES ('it''s', -2, 3.5);",
    "UPDATE items SET qty = qty - 1 WHERE name = 'lamp'",
    "UPDATE items SET price = price * 2, kind = 'cheap' WHERE price < 5 OR qty IS NULL",
    "UPDATE items SET qty = qty / 2 WHERE qty > 0",
    "UPDATE items SET score = 11 WHERE kind IN ('misc', 'none')",
    "DELETE FROM items WHERE id = 10",
    "DELETE FROM items WHERE kind = 'nothing'",
]
SELECTS = [
    "SELECT * FROM items",
    "SELECT name, price FROM items WHERE price > 2 ORDER BY price DESC",
    "select count(*) from items",
    "SELECT COUNT(*), SUM(qty), AVG(price), MIN(name), MAX(price), COUNT(qty) FROM items",
    "SELECT name FROM items WHERE qty IS NULL",
    "SELECT name FROM items WHERE qty = '1'",
    "SELECT id, name FROM items WHERE name LIKE '%M%' ORDER BY id",
    "SELECT name AS n, price * 2 FROM items ORDER BY n LIMIT 2 OFFSET 1",
    "SELECT DISTINCT kind FROM items ORDER BY kind",
    "SELECT name FROM items WHERE id IN (1, 5, 99) ORDER BY name",
    "SELECT name FROM items WHERE price BETWEEN 2 AND 20 ORDER BY 1",
    "SELECT name FROM items WHERE NOT (price > 3 OR qty IS NULL) ORDER BY name",
    "SELECT qty / 3, 7 / 2, -qty, 1 / 0 FROM items ORDER BY id",
    "SELECT name, score FROM items WHERE score > 5 ORDER BY score, name",
    "SELECT name FROM items WHERE score = '7' AND kind <> 'x'",
    "SELECT name FROM items ORDER BY qty DESC, name",
    "SELECT name FROM items WHERE name NOT LIKE 'm%' AND qty NOT IN (3) ORDER BY name",
    "SELECT MIN(score), MAX(score) FROM items",
    "SELECT items.name FROM items WHERE items.id = 1",
    "SELECT * FROM items WHERE kind = 'cheap' LIMIT 1",
]
REFUSED = [
    "INSERT INTO items (name) VALUES (NULL)",  # NOT NULL
    "INSERT INTO items (name, code) VALUES ('x', 'L1')",  # UNIQUE
    "INSERT INTO items (id, name) VALUES (1, 'dup')",  # PRIMARY KEY
    "INSERT INTO items (id, name) VALUES ('abc', 'x')",  # the rowid is an integer
    "UPDATE items SET code = 'M1' WHERE name = 'lamp'",
    "SELECT nope FROM items",
    "UPDATE items SET nope = 1",
    "UPDATE items SET name = upper_name WHERE 1 = 0",  # checked when prepared, though no row matches
    "DELETE FROM items WHERE nope = 1",
]


def _rows(cur) -> list[dict]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _same(ours, theirs, ordered: bool) -> bool:
    if ordered:
        return ours == theirs
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    return sorted(ours, key=key) == sorted(theirs, key=key)


@pytest.fixture()
def both():
    db = sqlite3.connect(":memory:")
    db.execute(DDL)
    spec = sqlmini.create(DDL)
    return db, {"name": spec["name"], "columns": spec["columns"], "rows": []}


def test_writes_and_selects_agree_with_sqlite(both):
    db, t = both
    for q in WRITES:
        got = sqlmini.write(t, q)
        cur = db.execute(q)
        assert got["affected"] == cur.rowcount, q
        t["rows"] = got["rows"]
        assert t["rows"] == _rows(db.execute("SELECT * FROM items")), q  # rowid order, stored types (affinity)
        for s in SELECTS:
            assert _same(sqlmini.select(t, s), _rows(db.execute(s)), "ORDER BY" in s.upper()), (q, s)


def test_table_info_agrees_with_pragma(both):
    db, t = both
    info = _rows(db.execute("PRAGMA table_info(items)"))
    ours = [{"cid": i, "name": c["name"], "type": c["type"], "notnull": c["notnull"], "dflt_value": c["default"], "pk": c["pk"]}
            for i, c in enumerate(t["columns"])]
    assert ours == info
    ddl2 = "CREATE TABLE IF NOT EXISTS pairs (a TEXT, b INTEGER NOT NULL, c DECIMAL(10, 2), PRIMARY KEY (a, b))"
    db.execute(ddl2)
    spec = sqlmini.create(ddl2)
    assert spec["if_not_exists"] is True and spec["name"] == "pairs"
    assert [(c["name"], c["type"], c["notnull"], c["pk"]) for c in spec["columns"]] == [
        (r["name"], r["type"], r["notnull"], r["pk"]) for r in _rows(db.execute("PRAGMA table_info(pairs)"))]


def test_both_refuse_the_same_statements(both):
    db, t = both
    for q in WRITES[:3]:
        t["rows"] = sqlmini.write(t, q)["rows"]
        db.execute(q)
    for q in REFUSED:
        with pytest.raises(sqlite3.Error):
            db.execute(q)
        with pytest.raises(sqlmini.SqlError):
            (sqlmini.select if q.startswith("SELECT") else sqlmini.write)(t, q)
    assert t["rows"] == _rows(db.execute("SELECT * FROM items"))  # a refused write changed nothing


def test_outside_the_subset_names_it():
    t = {"name": "items", "columns": [{"name": "a", "type": "INT"}], "rows": []}
    for q in ("DROP TABLE items", "SELECT a FROM items GROUP BY a", "SELECT * FROM items JOIN other", "PRAGMA table_info(items)",
              "SELECT (SELECT 1) FROM items", "SELECT lower(a) FROM items", "hello"):
        with pytest.raises(sqlmini.SqlError, match="supported SQL"):
            k = sqlmini.statement_kind(q)
            (sqlmini.select if k == "select" else sqlmini.write)(t, q)


def _sqlite_of(tables: list[dict]) -> sqlite3.Connection:
    """A sqlite3 database holding the same tables and rows (types as stored)."""
    db = sqlite3.connect(":memory:")
    for t in tables:
        cols = ", ".join(f'"{c["name"]}" {c["type"]}' + (" PRIMARY KEY" if c["pk"] else "") + (" NOT NULL" if c["notnull"] else "")
                         + (" UNIQUE" if c["unique"] else "") + (f" DEFAULT {c['default']}" if c["default"] else "") for c in t["columns"])
        db.execute(f'CREATE TABLE "{t["name"]}" ({cols})')
        for r in t["rows"]:
            names = list(r)
            db.execute(f'INSERT INTO "{t["name"]}" ({", ".join(names)}) VALUES ({", ".join("?" for _ in names)})', [r[n] for n in names])
    return db


def test_the_samplers_statements_agree_with_sqlite():
    """300 statements sql_state.sql_arg draws (what tasks call the tools with) on the generated
    shop database: sqlite3 and the subset give the same rows and the same tables after."""
    tabs = sql_state.database(random.Random(7))
    db = _sqlite_of(list(tabs.values()))
    rng = random.Random(11)
    kinds = {"select": 0, "insert": 0, "update": 0, "delete": 0, "create": 0}
    for _ in range(300):
        q = sql_state.sql_arg("query", "", {"Table": tabs}, rng)
        k = sqlmini.statement_kind(q)
        kinds[k] += 1
        if k == "create":
            spec = sqlmini.create(q)
            db.execute(q)
            tabs[spec["name"]] = {"name": spec["name"], "columns": spec["columns"], "rows": []}
            continue
        t = tabs[sqlmini.table_of(q)]
        if k == "select":
            assert _same(sqlmini.select(t, q), _rows(db.execute(q)), "ORDER BY" in q), q
        else:
            got = sqlmini.write(t, q)
            assert got["affected"] == db.execute(q).rowcount, q
            t["rows"] = got["rows"]
            assert t["rows"] == _rows(db.execute(f"SELECT * FROM {t['name']}")), q
    assert all(v > 10 for v in kinds.values()), kinds


# --------------------------------------------------------------------------- the shape, two sources


def build(src: Path):
    from forgec.codegen import emit_env, load_env_module

    envs, d = read_paths([src])
    assert not has_errors(d), render(d, "concise")
    decl, sd = synthesize(envs[0])
    assert not has_errors(sd), render(sd, "concise")
    text = lang.format(A.Module(file="env.forge", items=(decl,)))
    mod, pd = lang.parse(text, "env.forge")
    pd += lang.check([mod])
    assert not has_errors(pd), render(pd, "concise", {"env.forge": text})
    tmp = Path(tempfile.mkdtemp(prefix="shape_sql_")) / "env.py"
    tmp.write_text(emit_env(mod.envs[0], "env.forge"), encoding="utf-8")
    return text, load_env_module(tmp)


def world(m) -> dict:
    from forgec.stdlib.values import generate_state

    return generate_state(m.SCHEMA, seed=3, size=5)


def test_mcp_sqlite_tools_do_what_the_docs_say():
    text, m = build(SQLITE_DOCS)
    assert m.LOG_TOOLS == [] and "@conservative" not in text
    assert m.WRITES_STATE["read_query"] is False and m.TOOL_KINDS["read_query"] == "read"
    assert m.WRITES_STATE["write_query"] is True and m.WRITES_STATE["create_table"] is True
    assert m.WRITES_STATE["list_tables"] is False and m.WRITES_STATE["describe_table"] is False
    w = world(m)
    env = m.Env(copy.deepcopy(w))
    tabs = list(w["entities"]["Table"].values())
    db = _sqlite_of(tabs)
    assert env.step("list_tables", {}) == [{"name": n} for n in sorted(t["name"] for t in tabs)]
    assert env.step("describe_table", {"table_name": "products"}) == _rows(db.execute("PRAGMA table_info(products)"))
    h0 = env.state_hash()
    q = "SELECT name, price FROM products WHERE price > 10 ORDER BY price DESC"
    assert env.step("read_query", {"query": q}) == _rows(db.execute(q))
    assert env.state_hash() == h0  # a read
    for q in ("UPDATE products SET stock = stock + 5 WHERE category = 'office'",
              "INSERT INTO customers (name, city, email) VALUES ('Tim Berners', 'Boston', 'tim@example.com')",
              "DELETE FROM orders WHERE status = 'cancelled'"):
        r = env.step("write_query", {"query": q})
        assert r == [{"affected_rows": db.execute(q).rowcount}], q
    for t in ("products", "customers", "orders"):
        assert env.step("read_query", {"query": f"SELECT * FROM {t}"}) == _rows(db.execute(f"SELECT * FROM {t}"))
    # the tool runs only its kind; unsupported SQL names the subset; the state is unchanged
    h1 = env.state_hash()
    r = env.step("read_query", {"query": "DELETE FROM orders"})
    assert isinstance(r, ToolError) and "SELECT" in r.message and "write_query" in r.message
    r = env.step("write_query", {"query": "SELECT * FROM orders"})
    assert isinstance(r, ToolError) and "read_query" in r.message
    r = env.step("write_query", {"query": "DROP TABLE orders"})
    assert isinstance(r, ToolError) and "supported SQL" in r.message
    r = env.step("read_query", {"query": "SELECT * FROM nowhere"})
    assert isinstance(r, ToolError) and "no such table" in r.message
    assert env.state_hash() == h1
    ddl = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"
    assert env.step("create_table", {"query": ddl})["name"] == "notes"
    db.execute(ddl)
    assert env.step("describe_table", {"table_name": "notes"}) == _rows(db.execute("PRAGMA table_info(notes)"))
    assert isinstance(env.step("create_table", {"query": ddl}), ToolError)  # exists
    assert isinstance(env.step("create_table", {"query": "SELECT 1 FROM notes"}), ToolError)
    env.step("write_query", {"query": "INSERT INTO notes (body) VALUES ('first'), ('second')"})
    assert env.step("read_query", {"query": "SELECT * FROM notes"}) == [{"id": 1, "body": "first"}, {"id": 2, "body": "second"}]


def test_second_source_company_run_sql():
    """An OpenAI-tools doc: one tool runs any statement (a write), tables listed and described
    by other names; the hand-off stays a log-only tool."""
    text, m = build(COMPANY)
    assert m.TOOL_KINDS["run_sql"] == "action" and m.WRITES_STATE["run_sql"] is True
    assert m.TOOL_KINDS["show_tables"] == "search" and m.TOOL_KINDS["table_columns"] == "read"
    assert m.LOG_TOOLS == ["escalate_to_dba"]
    w = world(m)
    env = m.Env(copy.deepcopy(w))
    db = _sqlite_of(list(w["entities"]["Table"].values()))
    for q in ("SELECT COUNT(*) FROM orders WHERE status = 'pending'", "UPDATE orders SET status = 'shipped' WHERE id <= 3",
              "SELECT id, status FROM orders ORDER BY id", "DELETE FROM customers WHERE city = 'Austin'", "SELECT * FROM customers"):
        cur = db.execute(q)
        want = _rows(cur) if q.startswith("SELECT") else [{"affected_rows": cur.rowcount}]
        assert env.step("run_sql", {"statement": q}) == want, q
    assert env.step("run_sql", {"statement": "CREATE TABLE audit (at TEXT)"}) == []
    assert {"name": "audit"} in env.step("show_tables", {})
    assert env.step("table_columns", {"table": "audit"})[0]["name"] == "at"
    assert "supported SQL" in env.step("run_sql", {"statement": "VACUUM"}).message


def test_no_claim_without_a_sql_tool():
    from forgec.synth.shape_sql import claim

    for name in ("mcp_server_git", "mcp_server_time", "tau_bench_retail"):
        envs, _ = read_paths([CORPUS / name])
        assert all(claim(e, frozenset()) is None for e in envs), name
