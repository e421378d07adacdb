"""Shape: a SQL database (tables with columns and rows) behind tools that run SQL statements.

Recognized when a tool takes one SQL statement as a string (a parameter named query / sql /
statement, or documented as SQL) and its prose says it runs SQL against a database. Each such
tool's role comes from the statements its prose names: SELECT only (or "read-only") -> a read
returning rows; INSERT / UPDATE / DELETE -> a write returning the affected row count; CREATE
TABLE -> creates a table; none named ("run a SQL statement") -> any of them. Beside them: a
tool with no required parameter that lists the tables, and one taking a table name that
describes its schema/columns.

The state: entity `Table` keyed by name, with `columns` (name, type, notnull, pk, unique,
default, as SQLite's `PRAGMA table_info` reports them) and `rows` (dicts, rowid order). The
statements run through the `sql_*` builtins (runtime/sqlmini.py: a documented subset with
SQLite's semantics, checked against Python's sqlite3); a statement outside the subset, or of a
kind the tool does not run, is a precondition error naming what is supported. The parameter
docs say the subset, so an agent can stay inside it.
"""

from __future__ import annotations

import re

from forgec import ir

from .names import ident
from .shape_kit import forge_claim, q, signature
from .shapes import Claim

STATE = """
  record Column "A column, as PRAGMA table_info reports it." {
    name: str
    type: str "declared type (its affinity decides how values are stored and compared)"
    notnull: int "1: NOT NULL"
    pk: int "position in the primary key (0: not part of it)"
    unique: int "1: UNIQUE"
    default: str? = null "DEFAULT value, as SQL text"
  }
  entity Table key name "A table of the database: its columns and rows (rowid order)." {
    name: str
    columns: list[Column]
    rows: list[any] "one object per row: column -> value"
  }
"""

SUBSET = {
    "select": "One SELECT statement: SELECT [DISTINCT] cols|*|COUNT(*) FROM t [WHERE c op v [AND|OR ...]] "
              "[ORDER BY c [DESC]] [LIMIT n].",
    "write": "One INSERT, UPDATE or DELETE statement: INSERT INTO t (cols) VALUES (...); "
             "UPDATE t SET c = v[, ...] [WHERE ...]; DELETE FROM t [WHERE ...].",
    "create": "One CREATE TABLE statement: CREATE TABLE t (col TYPE [PRIMARY KEY] [NOT NULL] [UNIQUE] [DEFAULT v], ...).",
}
SUBSET["any"] = " ".join(SUBSET[k].replace("One ", "Or one ", 1) if i else SUBSET[k] for i, k in enumerate(("select", "write", "create")))

FIND = """
    let found = Table where lower(it.name) == lower(sql_table(query))
    require len(found) > 0 else "no such table (list the tables first)"
    let t = first(found)"""

CREATE = """
    let spec = sql_create(query)
    let have = Table where lower(it.name) == lower(spec.name)
    if len(have) > 0 {
      require spec.if_not_exists else "a table with that name already exists"
      return {RET_EXISTING}
    }
    let created = insert Table {name: spec.name, columns: spec.columns, rows: []}"""

BODIES = {
    "select": ("read", "list[any]", """
    require sql_kind(query) == "select" else "{NOT_SELECT}"
""" + FIND + """
    return sql_select(t, query)"""),
    "write": ("update", "list[{affected_rows: int}]", """
    let kind = sql_kind(query)
    require kind == "insert" or kind == "update" or kind == "delete" else "{NOT_WRITE}"
""" + FIND + """
    let out = sql_write(t, query)
    set t.rows = out.rows
    return [{affected_rows: out.affected}]"""),
    "create": ("create", "Table", """
    require sql_kind(query) == "create" else "{NOT_CREATE}"
""" + CREATE.replace("{RET_EXISTING}", "first(have)") + """
    return created"""),
    "any": ("action", "list[any]", """
    let kind = sql_kind(query)
    if kind == "create" {""" + CREATE.replace("\n    ", "\n      ").replace("{RET_EXISTING}", "[]") + """
      return []
    }
""" + FIND + """
    if kind == "select" {
      return sql_select(t, query)
    }
    let out = sql_write(t, query)
    set t.rows = out.rows
    return [{affected_rows: out.affected}]"""),
    "list": ("search", "list[{name: str}]", """
    return map(sorted(Table, it.name), {name: it.name})"""),
    "describe": ("read", "list[{cid: int, name: str, type: str, notnull: int, dflt_value: str?, pk: int}]", """
    let out = []
    let i = 0
    for c in tbl.columns {
      let out = out + [{cid: i, name: c.name, type: c.type, notnull: c.notnull, dflt_value: c.default, pk: c.pk}]
      let i = i + 1
    }
    return out"""),
}

_SQL_PARAM = re.compile(r"(^|_)(query|sql|statement|stmt|sql_query)$", re.I)
_SQL_DESC = re.compile(r"\bSQL\b|\b(?:SELECT|INSERT|UPDATE|DELETE)\b|\bCREATE TABLE\b|(?i:\bsql\b|\bstatements?\b|\bquery to (?:run|execute)\b|\b(?:run|execute)s?\b[^.]{0,30}\bquer(?:y|ies)\b)")  # keywords in capitals


def _text(t: ir.Tool) -> str:
    return " ".join(t.name.replace("-", "_").split("_")) + ". " + (t.description or "") + " " + " ".join(p.description or "" for p in t.params)


def _sql_param(t: ir.Tool) -> ir.Param | None:
    """The one string parameter that takes a SQL statement."""
    # a described `query` that does not say SQL is a text search ("Search query string"), not a statement
    ps = [p for p in t.params if p.type is not None and p.type.kind == "string"
          and (_SQL_PARAM.search(p.name) or re.search(r"\bSQL\b", p.description or "", re.I))
          and (not (p.description or "").strip() or _SQL_DESC.search(p.description or ""))]
    req = [p for p in t.params if p.required]
    if len(ps) != 1 or any(p is not ps[0] for p in req) or not ps[0].required:
        return None  # an optional SQL filter on a REST list (listmonk's `getSubscribers(query?)`) lists records; it runs no database
    return ps[0] if _SQL_DESC.search(_text(t)) else None  # statements, not a product name ("the local SQLite DB")


def role_of(t: ir.Tool) -> str | None:
    txt = _text(t)
    if _sql_param(t) is not None:
        # the statements the prose says the tool runs; an example ("e.g. SELECT ...") is not a rule
        up = re.sub(r"\b(e\.g\.|for example|example:|such as)[^\n]*", "", txt, flags=re.I).upper()
        writes = [w for w in ("INSERT", "UPDATE", "DELETE") if re.search(rf"\b{w}\b", up)]
        sel = re.search(r"\bSELECT\b", up) or re.search(r"\bread[- ]only\b", txt, re.I)
        if "CREATE TABLE" in up and not writes and not sel:
            return "create"
        if sel and not writes and "CREATE TABLE" not in up:
            return "select"
        if writes and not sel and "CREATE TABLE" not in up:
            return "write"
        return "any"
    req = [p for p in t.params if p.required]
    if not req and re.search(r"\b(list|show|get|names?)\b.*\btables\b", txt, re.I):
        return "list"
    if (len(req) == 1 and req[0].type is not None and req[0].type.kind == "string" and re.search(r"table", req[0].name, re.I)
            and re.search(r"\b(describe|schema|columns?|structure)\b", txt, re.I)):
        return "describe"
    return None


def claim(env: ir.Environment, taken: frozenset[str]) -> Claim | None:
    found: dict[str, tuple[ir.Tool, str]] = {}
    for t in env.tools:
        if t.name in taken:
            continue
        role = role_of(t)
        if role is not None:
            found[t.name] = (t, role)
    roles = {r for _, r in found.values()}
    if not roles & {"select", "write", "create", "any"}:
        return None  # the shape is a database only when some tool runs SQL
    by_role = {r: ident(t.name) for t, r in found.values()}
    hint = {
        "NOT_SELECT": "this tool runs one SELECT statement" + (f"; use {by_role['write']} for INSERT, UPDATE or DELETE" if "write" in by_role else ""),
        "NOT_WRITE": "this tool runs one INSERT, UPDATE or DELETE statement" + (f"; use {by_role['select']} for SELECT" if "select" in by_role else ""),
        "NOT_CREATE": "this tool runs one CREATE TABLE statement",
    }
    parts = [STATE]
    names: dict[str, str] = {}
    for wire, (t, role) in found.items():
        ann, ret, body = BODIES[role]
        for k, v in hint.items():
            body = body.replace("{" + k + "}", v)
        over: dict[str, str] = {}
        binds = []
        if role in SUBSET:
            p = _sql_param(t)
            if ident(p.name) != "query":
                binds.append(f"\n    let query = {ident(p.name)}")
            sig = signature(t, over).replace(q(p.description or p.name.replace("_", " ").capitalize()),
                                             q(((p.description or "").rstrip(". ") + ". " if p.description else "") + SUBSET[role]), 1)
        elif role == "describe":
            p = next(p for p in t.params if p.required)
            over[p.name] = "Table"
            binds.append(f"\n    let tbl = {ident(p.name)}")
            sig = signature(t, over)
        else:
            sig = signature(t, over)
        names[wire] = ident(t.name)
        parts.append(f"  @{ann}\n  tool {sig} -> {ret}\n    {q(t.description or t.name)}\n  {{" + "\n".join(binds) + body + "\n  }")
    text = "env sql_shape {\n" + "\n".join(parts) + "\n}\n"
    return forge_claim("sql", text, names, f"<shape:sql:{env.name}>")
