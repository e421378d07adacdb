"""A small, documented SQL subset over tables held in an env's state (the `sql_*` builtins).

Why: docs of a SQL tool ("execute a SELECT query", "run an INSERT, UPDATE or DELETE") describe
a database as the state; an env that only logs the call cannot be checked. A table here is a
record `{name, columns: [{name, type, notnull, pk, default}], rows: [{column: value}]}` (rows in
rowid order); the functions are pure: they read a table and return rows or the new rows, the
`.forge` body writes them back. Semantics follow SQLite (tests/test_sql_differential.py runs
the same statements on Python's sqlite3): column type affinity (INTEGER, REAL, NUMERIC, TEXT,
none) on storing and comparing, NULL as unknown in conditions, NULLs first in ascending order,
integer division, INTEGER PRIMARY KEY as the rowid (assigned max + 1, rows kept in its order),
NOT NULL / PRIMARY KEY / UNIQUE constraints.

The subset (anything else is a precondition error that names it):

    SELECT [DISTINCT] * | expr [AS name], ... | COUNT(*) / COUNT|SUM|AVG|MIN|MAX(expr) FROM t
        [WHERE cond] [ORDER BY expr [ASC|DESC], ...] [LIMIT n [OFFSET m]]
    INSERT INTO t [(c, ...)] VALUES (v, ...)[, (v, ...)]
    UPDATE t SET c = expr[, ...] [WHERE cond]
    DELETE FROM t [WHERE cond]
    CREATE TABLE [IF NOT EXISTS] t (c TYPE [PRIMARY KEY] [NOT NULL] [UNIQUE] [DEFAULT v], ...
        [, PRIMARY KEY (c, ...)])
    cond: expr op expr (= == != <> < <= > >=), expr [NOT] LIKE 'pat', expr IS [NOT] NULL,
        expr [NOT] IN (v, ...), expr [NOT] BETWEEN a AND b, NOT/AND/OR, parentheses
    expr: column, 'text', number, NULL, TRUE/FALSE, + - * / and parentheses
"""

from __future__ import annotations

import re
from typing import Any

SUPPORTED = ("supported SQL: SELECT [DISTINCT] cols|*|COUNT(*) FROM t [WHERE c op v [AND|OR ...]] [ORDER BY c [DESC]] "
             "[LIMIT n]; INSERT INTO t (cols) VALUES (...); UPDATE t SET c = v[, ...] [WHERE ...]; "
             "DELETE FROM t [WHERE ...]; CREATE TABLE t (col TYPE [PRIMARY KEY] [NOT NULL], ...)")

_TOKEN = re.compile(r"""\s+|--[^\n]*|(?P<str>'(?:[^']|'')*')|(?P<qid>"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\])"""
                    r"""|(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)|(?P<id>[A-Za-z_][A-Za-z0-9_]*)"""
                    r"""|(?P<op><=|>=|<>|!=|==|\|\||[=<>(),*;+\-/.%])""")
_AGG = ("COUNT", "SUM", "AVG", "MIN", "MAX")


class SqlError(Exception):
    """A statement outside the subset, or one SQLite would refuse (the message says which)."""


class _Tok:
    __slots__ = ("kind", "val", "pos", "end")

    def __init__(self, kind: str, val: Any, pos: int, end: int):
        self.kind, self.val, self.pos, self.end = kind, val, pos, end


def _lex(sql: str) -> list[_Tok]:
    if type(sql) is not str:
        raise SqlError("the query must be a string")
    out, i = [], 0
    while i < len(sql):
        m = _TOKEN.match(sql, i)
        if m is None:
            raise SqlError(f"unexpected {sql[i]!r} at character {i + 1}; {SUPPORTED}")
        k = m.lastgroup
        if k == "str":
            out.append(_Tok("str", m.group()[1:-1].replace("''", "'"), i, m.end()))
        elif k == "qid":
            q = m.group()
            out.append(_Tok("id", q[1:-1].replace('""', '"') if q[0] == '"' else q[1:-1], i, m.end()))
        elif k == "num":
            t = m.group()
            out.append(_Tok("num", float(t) if any(c in t for c in ".eE") else int(t), i, m.end()))
        elif k == "id":
            out.append(_Tok("kw" if m.group().upper() in _KEYWORDS else "id", m.group(), i, m.end()))
        elif k == "op":
            out.append(_Tok("op", m.group(), i, m.end()))
        i = m.end()
    while out and out[-1].kind == "op" and out[-1].val == ";":
        out.pop()
    return out


_KEYWORDS = frozenset("""SELECT DISTINCT FROM WHERE ORDER BY ASC DESC LIMIT OFFSET INSERT INTO VALUES UPDATE SET
DELETE CREATE TABLE IF NOT EXISTS PRIMARY KEY NULL UNIQUE DEFAULT AND OR LIKE IS IN BETWEEN AS TRUE FALSE
GROUP HAVING JOIN DROP ALTER REFERENCES FOREIGN AUTOINCREMENT""".split())


class _P:
    """Recursive descent over the tokens of one statement."""

    def __init__(self, sql: str):
        self.sql = sql
        self.t = _lex(sql)
        self.i = 0

    def peek(self, k: int = 0) -> _Tok | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def is_kw(self, *words: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.kind == "kw" and t.val.upper() in words

    def is_op(self, *ops: str) -> bool:
        t = self.peek()
        return t is not None and t.kind == "op" and t.val in ops

    def take(self) -> _Tok:
        t = self.peek()
        if t is None:
            raise SqlError(f"incomplete statement; {SUPPORTED}")
        self.i += 1
        return t

    def kw(self, *words: str) -> str:
        t = self.take()
        if t.kind != "kw" or t.val.upper() not in words:
            raise self.bad(t, " or ".join(words))
        return t.val.upper()

    def op(self, o: str) -> None:
        t = self.take()
        if t.kind != "op" or t.val != o:
            raise self.bad(t, repr(o))

    def ident(self) -> str:
        t = self.take()
        if t.kind != "id":
            raise self.bad(t, "a name")
        return t.val

    def bad(self, t: _Tok, want: str) -> SqlError:
        return SqlError(f"near {self.sql[t.pos:t.end]!r}: expected {want}; {SUPPORTED}")

    def done(self) -> None:
        t = self.peek()
        if t is not None:
            raise SqlError(f"near {self.sql[t.pos:t.end]!r}: unsupported; {SUPPORTED}")

    # ---- expressions: ("col", name) ("lit", v) ("bin", op, a, b) ("neg", a) ("agg", F, arg|None)
    #      conditions add ("cmp", op, a, b) ("like", a, b, neg) ("isnull", a, neg) ("in", a, [..], neg)
    #      ("between", a, lo, hi, neg) ("and", a, b) ("or", a, b) ("not", a)
    def cond(self) -> tuple:
        a = self.cand()
        while self.is_kw("OR"):
            self.take()
            a = ("or", a, self.cand())
        return a

    def cand(self) -> tuple:
        a = self.cnot()
        while self.is_kw("AND"):
            self.take()
            a = ("and", a, self.cnot())
        return a

    def cnot(self) -> tuple:
        if self.is_kw("NOT"):
            self.take()
            return ("not", self.cnot())
        return self.pred()

    def pred(self) -> tuple:
        a = self.expr()
        neg = False
        if self.is_kw("NOT") and self.is_kw("LIKE", "IN", "BETWEEN", k=1):
            self.take()
            neg = True
        if self.is_kw("IS"):
            self.take()
            n = False
            if self.is_kw("NOT"):
                self.take()
                n = True
            self.kw("NULL")
            return ("isnull", a, n)
        if self.is_kw("LIKE"):
            self.take()
            return ("like", a, self.expr(), neg)
        if self.is_kw("IN"):
            self.take()
            self.op("(")
            vals = [self.expr()]
            while self.is_op(","):
                self.take()
                vals.append(self.expr())
            self.op(")")
            return ("in", a, vals, neg)
        if self.is_kw("BETWEEN"):
            self.take()
            lo = self.expr()
            self.kw("AND")
            return ("between", a, lo, self.expr(), neg)
        if self.is_op("=", "==", "!=", "<>", "<", "<=", ">", ">="):
            o = self.take().val
            return ("cmp", {"==": "=", "<>": "!="}.get(o, o), a, self.expr())
        return ("truth", a)

    def expr(self) -> tuple:
        a = self.term()
        while self.is_op("+", "-"):
            o = self.take().val
            a = ("bin", o, a, self.term())
        return a

    def term(self) -> tuple:
        a = self.unary()
        while self.is_op("*", "/"):
            o = self.take().val
            a = ("bin", o, a, self.unary())
        return a

    def unary(self) -> tuple:
        if self.is_op("-", "+"):
            o = self.take().val
            a = self.unary()
            return ("neg", a) if o == "-" else a
        return self.atom()

    def atom(self) -> tuple:
        t = self.take()
        if t.kind in ("str", "num"):
            return ("lit", t.val)
        if t.kind == "kw" and t.val.upper() in ("NULL", "TRUE", "FALSE"):
            return ("lit", {"NULL": None, "TRUE": 1, "FALSE": 0}[t.val.upper()])
        if t.kind == "op" and t.val == "(":
            if self.is_kw("SELECT"):
                raise SqlError(f"subqueries are not supported; {SUPPORTED}")
            c = self.cond()
            self.op(")")
            return c
        if t.kind == "id":
            if self.is_op("("):
                if t.val.upper() not in _AGG:
                    raise SqlError(f"function {t.val}() is not supported (only COUNT, SUM, AVG, MIN, MAX); {SUPPORTED}")
                self.take()
                if self.is_op("*"):
                    self.take()
                    if t.val.upper() != "COUNT":
                        raise self.bad(self.t[self.i - 1], "an expression")
                    arg = None
                else:
                    arg = self.expr()
                self.op(")")
                return ("agg", t.val.upper(), arg)
            if self.is_op("."):  # t.col: the one table's own columns
                self.take()
                return ("col", self.ident())
            return ("col", t.val)
        raise self.bad(t, "a value or column")


# --------------------------------------------------------------------------- parsing statements


def statement_kind(sql: Any) -> str:
    """select | insert | update | delete | create (an error for anything else)."""
    toks = _lex(sql)
    if not toks or toks[0].kind != "kw":
        raise SqlError(f"not a SQL statement; {SUPPORTED}")
    w = toks[0].val.upper()
    kind = {"SELECT": "select", "INSERT": "insert", "UPDATE": "update", "DELETE": "delete", "CREATE": "create"}.get(w)
    if kind is None:
        raise SqlError(f"{w} statements are not supported; {SUPPORTED}")
    return kind


def table_of(sql: Any) -> str:
    """The table a statement names (FROM / INTO / UPDATE / CREATE TABLE)."""
    p = _P(sql)
    k = statement_kind(sql)
    if k == "select":
        depth = 0
        while p.peek() is not None:  # the FROM at parenthesis depth 0
            t = p.take()
            if t.kind == "op" and t.val in "()":
                depth += 1 if t.val == "(" else -1
            elif depth == 0 and t.kind == "kw" and t.val.upper() == "FROM":
                return p.ident()
        raise SqlError(f"a SELECT needs FROM a table; {SUPPORTED}")
    p.take()
    if k == "insert":
        p.kw("INTO")
    elif k == "delete":
        p.kw("FROM")
    elif k == "create":
        p.kw("TABLE")
        if p.is_kw("IF"):
            p.take()
            p.kw("NOT")
            p.kw("EXISTS")
    return p.ident()


# --------------------------------------------------------------------------- values (SQLite semantics)


def affinity(decl: str) -> str:
    t = (decl or "").upper()
    if "INT" in t:
        return "INTEGER"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "TEXT"
    if "BLOB" in t or not t:
        return "BLOB"
    if "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "REAL"
    return "NUMERIC"


_INT_RE = re.compile(r"^[ \t]*[+-]?\d+[ \t]*$")
_REAL_RE = re.compile(r"^[ \t]*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?[ \t]*$")


def _as_numeric(v: Any) -> Any:
    """NUMERIC affinity: well-formed numeric text becomes a number; a lossless real an integer."""
    if isinstance(v, str):
        if _INT_RE.match(v):
            n = int(v)
            return n if -(2**63) <= n < 2**63 else float(n)
        if _REAL_RE.match(v):
            v = float(v)
        else:
            return v
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**63:
        return int(v)
    return v


def _real_text(v: float) -> str:
    s = repr(v)
    return s if "e" not in s else f"{v:.15g}"


def apply_affinity(aff: str, v: Any) -> Any:
    if v is None or isinstance(v, bool):
        return int(v) if isinstance(v, bool) else v
    if aff == "TEXT":
        if isinstance(v, float):
            return _real_text(v)
        return str(v) if isinstance(v, int) else v
    if aff in ("INTEGER", "NUMERIC"):
        return _as_numeric(v)
    if aff == "REAL":
        v = _as_numeric(v)
        return float(v) if isinstance(v, int) else v
    return v


def _cls(v: Any) -> int:
    return 0 if v is None else 1 if isinstance(v, (int, float)) else 2


def _cmp(a: Any, b: Any) -> int:
    ca, cb = _cls(a), _cls(b)
    if ca != cb:
        return -1 if ca < cb else 1
    return (a > b) - (a < b) if ca else 0


def _num(v: Any) -> Any:
    """The number text means in arithmetic (SQLite: a leading numeric prefix, else 0)."""
    if isinstance(v, (int, float)):
        return v
    m = re.match(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", v)
    if not m:
        return 0
    t = m.group()
    return float(t) if any(c in t for c in ".eE") else int(t)


def _arith(o: str, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    a, b = _num(a), _num(b)
    if o == "+":
        return a + b
    if o == "-":
        return a - b
    if o == "*":
        return a * b
    if b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


class _Table:
    """A table record read for one statement: columns by lower-case name, affinity per column."""

    def __init__(self, t: Any):
        if not isinstance(t, dict) or not isinstance(t.get("columns"), list) or not isinstance(t.get("rows"), list):
            raise SqlError("not a table")
        self.name = t.get("name") or t.get("table_name") or ""
        self.cols = [c for c in t["columns"] if isinstance(c, dict)]
        self.names = [c["name"] for c in self.cols]
        self.by_lower = {n.lower(): n for n in self.names}
        self.aff = {c["name"]: affinity(c.get("type") or "") for c in self.cols}
        self.rows = t["rows"]
        ipk = [c for c in self.cols if c.get("pk")]
        self.rowid = ipk[0]["name"] if len(ipk) == 1 and (ipk[0].get("type") or "").upper() == "INTEGER" else None

    def col(self, name: str) -> str:
        got = self.by_lower.get(name.lower())
        if got is None:
            raise SqlError(f"no such column: {name}")
        return got

    def affinity_of(self, e: tuple) -> str | None:
        return self.aff[self.col(e[1])] if e[0] == "col" else None


def _val(tb: _Table, e: tuple, row: dict) -> Any:
    k = e[0]
    if k == "lit":
        return e[1]
    if k == "col":
        return row.get(tb.col(e[1]))
    if k == "bin":
        return _arith(e[1], _val(tb, e[2], row), _val(tb, e[3], row))
    if k == "neg":
        v = _val(tb, e[1], row)
        return None if v is None else -_num(v)
    if k == "agg":
        raise SqlError(f"aggregate {e[1]}() is only allowed in the SELECT list; {SUPPORTED}")
    r = _truth(tb, e, row)
    return None if r is None else int(r)


def _pair(tb: _Table, a: tuple, b: tuple, row: dict) -> tuple[Any, Any]:
    """Both operands, converted as SQLite does before comparing (column affinity wins)."""
    va, vb = _val(tb, a, row), _val(tb, b, row)
    fa, fb = tb.affinity_of(a), tb.affinity_of(b)
    num = ("INTEGER", "REAL", "NUMERIC")
    if fa in num and fb not in num:
        vb = _as_numeric(vb) if fb is None or fb in ("TEXT", "BLOB") else vb
    elif fb in num and fa not in num:
        va = _as_numeric(va)
    elif fa == "TEXT" and fb is None:
        vb = apply_affinity("TEXT", vb)
    elif fb == "TEXT" and fa is None:
        va = apply_affinity("TEXT", va)
    return va, vb


def _like(v: Any, pat: Any) -> bool | None:
    if v is None or pat is None:
        return None
    v, pat = apply_affinity("TEXT", v), apply_affinity("TEXT", pat)
    rx = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pat)
    return re.fullmatch(rx, v, re.S | re.I) is not None


def _truth(tb: _Table, e: tuple, row: dict) -> bool | None:
    k = e[0]
    if k == "and":
        a, b = _truth(tb, e[1], row), _truth(tb, e[2], row)
        return False if a is False or b is False else None if a is None or b is None else True
    if k == "or":
        a, b = _truth(tb, e[1], row), _truth(tb, e[2], row)
        return True if a is True or b is True else None if a is None or b is None else False
    if k == "not":
        a = _truth(tb, e[1], row)
        return None if a is None else not a
    if k == "cmp":
        a, b = _pair(tb, e[2], e[3], row)
        if a is None or b is None:
            return None
        c = _cmp(a, b)
        return {"=": c == 0, "!=": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[e[1]]
    if k == "like":
        r = _like(_val(tb, e[1], row), _val(tb, e[2], row))
        return None if r is None else r != e[3]
    if k == "isnull":
        return (_val(tb, e[1], row) is None) != e[2]
    if k == "in":
        hits, unknown = False, False
        for x in e[2]:
            a, b = _pair(tb, e[1], x, row)
            if a is None:
                return None
            if b is None:
                unknown = True
            elif _cmp(a, b) == 0:
                hits = True
        r = True if hits else None if unknown else False
        return None if r is None else r != e[3]
    if k == "between":
        lo = _truth(tb, ("cmp", ">=", e[1], e[2]), row)
        hi = _truth(tb, ("cmp", "<=", e[1], e[3]), row)
        r = False if lo is False or hi is False else None if lo is None or hi is None else True
        return None if r is None else r != e[4]
    if k == "truth":
        v = _val(tb, e[1], row)
        return None if v is None else _num(v) != 0
    v = _val(tb, e, row)
    return None if v is None else _num(v) != 0


def _where(p: _P, tb: _Table) -> list[int]:
    """Indices of the rows the optional WHERE selects."""
    if not p.is_kw("WHERE"):
        return list(range(len(tb.rows)))
    p.take()
    c = _cols_known(tb, p.cond())
    return [i for i, r in enumerate(tb.rows) if _truth(tb, c, r) is True]


def _cols_known(tb: _Table, e: Any, aliases: frozenset = frozenset()) -> Any:
    """Every column an expression names exists (SQLite checks when it prepares, rows or not)."""
    if isinstance(e, tuple):
        if e and e[0] == "col":
            if e[1].lower() not in aliases:
                tb.col(e[1])
        else:
            for x in e[1:]:
                _cols_known(tb, x, aliases)
    elif isinstance(e, list):
        for x in e:
            _cols_known(tb, x, aliases)
    return e


# --------------------------------------------------------------------------- SELECT


def select(table: Any, sql: Any) -> list[dict]:
    """The rows a SELECT returns, each a dict of result column -> value (SQLite's column names)."""
    tb = _Table(table)
    p = _P(sql)
    p.kw("SELECT")
    distinct = False
    if p.is_kw("DISTINCT"):
        p.take()
        distinct = True
    items: list[tuple[str, tuple | None]] = []  # (result name, expr); expr None: *
    while True:
        if p.is_op("*"):
            p.take()
            items.append(("*", None))
        else:
            start = p.peek()
            e = p.expr()
            end = p.t[p.i - 1]
            name = p.sql[start.pos:end.end] if start is not None else ""
            if e[0] == "col":
                name = tb.col(e[1])
            if p.is_kw("AS"):
                p.take()
                name = p.ident()
            elif p.peek() is not None and p.peek().kind == "id":
                name = p.ident()
            items.append((name, e))
        if not p.is_op(","):
            break
        p.take()
    p.kw("FROM")
    name = p.ident()
    if name.lower() != str(tb.name).lower():
        raise SqlError(f"no such table: {name}")
    if p.is_kw("JOIN") or p.is_op(","):
        raise SqlError(f"joins are not supported (one table per query); {SUPPORTED}")
    idx = _where(p, tb)
    if p.is_kw("GROUP", "HAVING"):
        raise SqlError(f"GROUP BY is not supported; {SUPPORTED}")
    order: list[tuple[tuple, bool]] = []
    if p.is_kw("ORDER"):
        p.take()
        p.kw("BY")
        while True:
            e = p.expr()
            desc = False
            if p.is_kw("ASC", "DESC"):
                desc = p.take().val.upper() == "DESC"
            order.append((e, desc))
            if not p.is_op(","):
                break
            p.take()
    limit, offset = None, 0
    if p.is_kw("LIMIT"):
        p.take()
        limit = _int_lit(p)
        if p.is_kw("OFFSET"):
            p.take()
            offset = _int_lit(p)
    p.done()
    for _, e in items:
        _cols_known(tb, e)
    for e, _ in order:
        _cols_known(tb, e, frozenset(n.lower() for n, _ in items))
    rows = [tb.rows[i] for i in idx]
    aggs = [e for _, e in items if e is not None and _has_agg(e)]
    if aggs:
        if len(aggs) != len(items):
            raise SqlError(f"mixing aggregates and plain columns needs GROUP BY, which is not supported; {SUPPORTED}")
        out = [{n: _agg(tb, e, rows) for n, e in items}]
        return out[offset:] if limit is None or limit < 0 else out[offset:offset + limit]
    aliases = {n.lower(): e for n, e in items if e is not None}

    def project(r: dict) -> dict:
        d: dict = {}
        for n, e in items:
            if e is None:
                for c in tb.names:
                    d.setdefault(c, r.get(c))
            else:
                d.setdefault(n, _val(tb, e, r))
        return d

    if order:
        def key_of(r: dict, e: tuple) -> Any:
            if e[0] == "col" and e[1].lower() not in tb.by_lower and e[1].lower() in aliases:
                e = aliases[e[1].lower()]
            if e[0] == "lit" and isinstance(e[1], int) and 1 <= e[1] <= len(items) and items[e[1] - 1][1] is not None:
                e = items[e[1] - 1][1]
            return _val(tb, e, r)

        import functools

        def compare(a: dict, b: dict) -> int:
            for e, desc in order:
                c = _cmp(key_of(a, e), key_of(b, e))
                if c:
                    return -c if desc else c
            return 0

        rows = sorted(rows, key=functools.cmp_to_key(compare))
    out = [project(r) for r in rows]
    if distinct:
        seen, uniq = set(), []
        for d in out:
            k = tuple((type(v).__name__ if v is not None else "", v) for v in d.values())
            if k not in seen:
                seen.add(k)
                uniq.append(d)
        out = uniq
    if limit is not None and limit >= 0:
        return out[offset:offset + limit]
    return out[offset:]


def _int_lit(p: _P) -> int:
    t = p.take()
    if t.kind != "num" or not isinstance(t.val, int):
        raise p.bad(t, "an integer")
    return t.val


def _has_agg(e: Any) -> bool:
    return isinstance(e, tuple) and (e[0] == "agg" or any(_has_agg(x) for x in e[1:] if isinstance(x, tuple)))


def _agg(tb: _Table, e: tuple, rows: list[dict]) -> Any:
    if e[0] == "agg":
        f, arg = e[1], e[2]
        if arg is None:
            return len(rows)
        vals = [v for v in (_val(tb, arg, r) for r in rows) if v is not None]
        if f == "COUNT":
            return len(vals)
        if not vals:
            return None
        if f in ("MIN", "MAX"):
            best = vals[0]
            for v in vals[1:]:
                c = _cmp(v, best)
                if (c < 0) if f == "MIN" else (c > 0):
                    best = v
            return best
        nums = [_num(v) for v in vals]
        if f == "SUM":
            return sum(nums) if all(isinstance(v, int) for v in nums) else float(sum(float(v) for v in nums))
        return sum(float(v) for v in nums) / len(nums)
    if e[0] == "bin":
        return _arith(e[1], _agg(tb, e[2], rows), _agg(tb, e[3], rows))
    if e[0] == "neg":
        v = _agg(tb, e[1], rows)
        return None if v is None else -_num(v)
    if e[0] == "lit":
        return e[1]
    raise SqlError(f"mixing aggregates and plain columns needs GROUP BY, which is not supported; {SUPPORTED}")


# --------------------------------------------------------------------------- INSERT / UPDATE / DELETE


def _default(c: dict) -> Any:
    d = c.get("default")
    if d is None:
        return None
    p = _P(d)
    v = _val(_Table({"columns": [], "rows": []}), p.expr(), {})
    return v


def _check(tb: _Table, rows: list[dict], touched: list[int]) -> None:
    """NOT NULL, integer rowid, PRIMARY KEY / UNIQUE over the rows after a write."""
    for i in touched:
        r = rows[i]
        for c in tb.cols:
            v = r.get(c["name"])
            if v is None and c.get("notnull"):
                raise SqlError(f"NOT NULL constraint failed: {tb.name}.{c['name']}")
        if tb.rowid is not None and not isinstance(r.get(tb.rowid), int):
            raise SqlError("datatype mismatch")
    pk = [c["name"] for c in sorted((c for c in tb.cols if c.get("pk")), key=lambda c: c["pk"])]
    groups = ([pk] if pk else []) + [[c["name"]] for c in tb.cols if c.get("unique")]
    for g in groups:
        seen: dict = {}
        for i, r in enumerate(rows):
            k = tuple(r.get(n) for n in g)
            if any(v is None for v in k):
                continue
            k = tuple((_cls(v), v) for v in k)
            if k in seen:
                raise SqlError(f"UNIQUE constraint failed: {', '.join(f'{tb.name}.{n}' for n in g)}")
            seen[k] = i


def _ordered(tb: _Table, rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: r[tb.rowid]) if tb.rowid is not None else rows


def write(table: Any, sql: Any) -> dict:
    """`{"rows": the table's rows after an INSERT/UPDATE/DELETE, "affected": rows changed}`."""
    tb = _Table(table)
    kind = statement_kind(sql)
    p = _P(sql)
    rows = [dict(r) for r in tb.rows]
    if kind == "insert":
        p.kw("INSERT")
        p.kw("INTO")
        _same_table(tb, p.ident())
        cols = list(tb.names)
        if p.is_op("("):
            p.take()
            cols = [tb.col(p.ident())]
            while p.is_op(","):
                p.take()
                cols.append(tb.col(p.ident()))
            p.op(")")
        p.kw("VALUES")
        new = []
        while True:
            p.op("(")
            vals = [p.expr()]
            while p.is_op(","):
                p.take()
                vals.append(p.expr())
            p.op(")")
            if len(vals) != len(cols):
                raise SqlError(f"{len(vals)} values for {len(cols)} columns")
            new.append([_val(tb, v, {}) for v in vals])
            if not p.is_op(","):
                break
            p.take()
        p.done()
        touched = []
        for vals in new:
            given = dict(zip(cols, vals))
            r = {}
            for c in tb.cols:
                n = c["name"]
                v = given[n] if n in given else _default(c)
                r[n] = apply_affinity(tb.aff[n], v)
            if tb.rowid is not None and r[tb.rowid] is None:
                r[tb.rowid] = max((x[tb.rowid] for x in rows if isinstance(x.get(tb.rowid), int)), default=0) + 1
            rows.append(r)
            touched.append(len(rows) - 1)
            _check(tb, rows, touched)
        return {"rows": _ordered(tb, rows), "affected": len(new)}
    if kind == "update":
        p.kw("UPDATE")
        _same_table(tb, p.ident())
        p.kw("SET")
        sets = []
        while True:
            c = tb.col(p.ident())
            p.op("=")
            sets.append((c, _cols_known(tb, p.expr())))
            if not p.is_op(","):
                break
            p.take()
        idx = _where(p, tb)
        p.done()
        for i in idx:
            old = tb.rows[i]
            rows[i] = {**old, **{c: apply_affinity(tb.aff[c], _val(tb, e, old)) for c, e in sets}}
        _check(tb, rows, idx)
        return {"rows": _ordered(tb, rows), "affected": len(idx)}
    if kind == "delete":
        p.kw("DELETE")
        p.kw("FROM")
        _same_table(tb, p.ident())
        idx = set(_where(p, tb))
        p.done()
        return {"rows": [r for i, r in enumerate(rows) if i not in idx], "affected": len(idx)}
    raise SqlError(f"{kind.upper()} is not a write (INSERT, UPDATE or DELETE); {SUPPORTED}")


def _same_table(tb: _Table, name: str) -> None:
    if name.lower() != str(tb.name).lower():
        raise SqlError(f"no such table: {name}")


# --------------------------------------------------------------------------- CREATE TABLE


_STRICT_TYPES = {"INT", "INTEGER", "REAL", "TEXT", "BLOB", "ANY"}


def create(sql: Any) -> dict:
    """`{"name", "columns": [{name, type, notnull, pk, unique, default}], "if_not_exists"}` of a CREATE TABLE."""
    p = _P(sql)
    p.kw("CREATE")
    p.kw("TABLE")
    ine = False
    if p.is_kw("IF"):
        p.take()
        p.kw("NOT")
        p.kw("EXISTS")
        ine = True
    name = p.ident()
    p.op("(")
    cols: list[dict] = []
    pk_names: list[str] = []
    while True:
        if p.is_kw("PRIMARY"):
            p.take()
            p.kw("KEY")
            p.op("(")
            pk_names.append(p.ident())
            while p.is_op(","):
                p.take()
                pk_names.append(p.ident())
            p.op(")")
        elif p.is_kw("FOREIGN"):  # not enforced by SQLite by default: accepted, ignored
            p.take()
            p.kw("KEY")
            _skip_parens(p)
            p.kw("REFERENCES")
            p.ident()
            if p.is_op("("):
                _skip_parens(p)
        elif p.is_kw("UNIQUE"):
            p.take()
            p.op("(")
            u = [p.ident()]
            while p.is_op(","):
                p.take()
                u.append(p.ident())
            p.op(")")
            if len(u) != 1:
                raise SqlError(f"a multi-column UNIQUE is not supported; {SUPPORTED}")
            for c in cols:
                if c["name"].lower() == u[0].lower():
                    c["unique"] = 1
        else:
            cols.append(_coldef(p))
        if p.is_op(","):
            p.take()
            continue
        p.op(")")
        break
    p.done()
    if not cols:
        raise SqlError("a table needs at least one column")
    seen = set()
    for c in cols:
        if c["name"].lower() in seen:
            raise SqlError(f"duplicate column name: {c['name']}")
        seen.add(c["name"].lower())
    if pk_names:
        if any(c["pk"] for c in cols):
            raise SqlError(f'table "{name}" has more than one primary key')
        low = {c["name"].lower(): c for c in cols}
        for i, n in enumerate(pk_names, 1):
            if n.lower() not in low:
                raise SqlError(f"no such column: {n}")
            low[n.lower()]["pk"] = i
    elif sum(1 for c in cols if c["pk"]) > 1:
        raise SqlError(f'table "{name}" has more than one primary key')
    return {"name": name, "columns": cols, "if_not_exists": ine}


def _skip_parens(p: _P) -> None:
    p.op("(")
    depth = 1
    while depth:
        t = p.take()
        if t.kind == "op" and t.val in "()":
            depth += 1 if t.val == "(" else -1


def _coldef(p: _P) -> dict:
    name = p.ident()
    start = p.peek()
    end = None
    while p.peek() is not None and p.peek().kind == "id":  # the type: words, then an optional (n[, m])
        end = p.take()
    if end is not None and p.is_op("("):
        _skip_parens(p)
        end = p.t[p.i - 1]
    typ = p.sql[start.pos:end.end] if end is not None else ""
    if typ.upper() in _STRICT_TYPES:
        typ = typ.upper()
    c = {"name": name, "type": typ, "notnull": 0, "pk": 0, "unique": 0, "default": None}
    while True:
        if p.is_kw("PRIMARY"):
            p.take()
            p.kw("KEY")
            if p.is_kw("ASC", "DESC"):
                p.take()
            if p.is_kw("AUTOINCREMENT"):
                p.take()
            c["pk"] = 1
        elif p.is_kw("NOT"):
            p.take()
            p.kw("NULL")
            c["notnull"] = 1
        elif p.is_kw("NULL"):
            p.take()
        elif p.is_kw("UNIQUE"):
            p.take()
            c["unique"] = 1
        elif p.is_kw("DEFAULT"):
            p.take()
            s = p.peek()
            if s is None:
                raise SqlError(f"DEFAULT needs a value; {SUPPORTED}")
            if p.is_op("-", "+"):
                p.take()
            t = p.take()
            if not (t.kind in ("str", "num") or (t.kind == "kw" and t.val.upper() in ("NULL", "TRUE", "FALSE"))):
                raise p.bad(t, "a literal DEFAULT value")
            c["default"] = p.sql[s.pos:t.end]
        elif p.is_kw("REFERENCES"):
            p.take()
            p.ident()
            if p.is_op("("):
                _skip_parens(p)
        else:
            return c
