"""One meaning for every builtin and operator: a differential test over three paths.

Each builtin and operator of the registry (forgec/lang/builtins.py) runs over a grid of
values (ints, floats whose sum is not exact in binary, ties 2.5/3.5/-2.5, nulls, empty
lists, strings, booleans, records, mixed lists) through

  (a) a generated tool body: a small .forge env is checked, compiled by codegen and called
      through `Env.step` (typed parameters exercise the inline fast forms, `any?`
      parameters the runtime calls);
  (b) a blueprint: the same expression AST through `forgec.lower.eval_expr`;
  (c) the runtime implementation (`impl`) called directly;

and must give the same value and the same error (code and message) on every path. A tool's
`return` and a blueprint's `tell` canonicalize the value (floats to 6 decimals), so (a) is
compared with the canonical form of (b) and (c); (b) and (c) are compared exactly.
Hand-computed expected values check the chosen semantics independently (docs/language.md,
"Builtins and operators").
"""

from __future__ import annotations

import json
import math

import pytest

import forgec.lang as L
from forgec.codegen import emit_env, load_env_module
from forgec.lang.builtins import BUILTINS, OPERATORS, UNARY
from forgec.lower import Rejected, Scope, eval_expr
from forgec.runtime import envrt
from forgec.runtime.envrt import ToolError
from forgec.stdlib import ops as OPS

INTS = [0, 1, 2, -3, 7]
FLOATS = [0.0, 0.1, 0.2, 2.5, 3.5, -2.5, 10.1, 20.2, 2.675]
STRS = ["", "a", "abc", "B", "10", "3.7", "true"]
BOOLS = [True, False]
LISTS = [[], [1, 2], [10.1, 20.2], [0.1, 0.2, 0.3], [1, None], [None], ["b", "a"], [True, False], [1, 1.0], [2.5, 1],
         [1, "a"], [[1], [0]]]
RECS = [{"a": 1}, {}, {"qty": 2, "price": 10.1}]
SCALARS = INTS + FLOATS + STRS + BOOLS + [None]
ALL = SCALARS + LISTS + RECS

BY_TYPE = {
    "int": INTS, "float": FLOATS, "str": STRS, "bool": BOOLS,
    "int?": INTS + [None], "float?": FLOATS + [None], "str?": STRS + [None],
    "list[any]": LISTS, "list[any]?": LISTS + [None], "any?": ALL,
}

BINARY_TYPES = [("any?", "any?"), ("int", "int"), ("int", "float"), ("float", "float"), ("float", "int"),
                ("str", "str"), ("bool", "bool"), ("int?", "int"), ("str?", "str?"), ("list[any]", "list[any]"),
                ("int", "str"), ("str", "float")]

# builtin calls: (expression over parameters a, b; parameter types; the runtime call)
_I = BUILTINS

CALLS = [
    ("len(a)", ("any?",), lambda a: _I["len"].impl(a)),
    ("len(a)", ("str",), lambda a: _I["len"].impl(a)),
    ("len(a)", ("list[any]",), lambda a: _I["len"].impl(a)),
    ("count(a)", ("list[any]?",), lambda a: _I["count"].impl(a)),
    ("count(a, it == 1)", ("list[any]?",), lambda a: _I["count"].impl(a, lambda x: envrt.eq(x, 1))),
    ("sum(a)", ("list[any]?",), lambda a: _I["sum"].impl(a)),
    ("sum(a, it)", ("list[any]?",), lambda a: _I["sum"].impl(a, lambda x: x)),
    ("sum(a, 2)", ("list[any]?",), lambda a: _I["sum"].impl(a, lambda x: 2)),
    ("min(a)", ("list[any]?",), lambda a: _I["min"].impl(a)),
    ("max(a)", ("list[any]?",), lambda a: _I["max"].impl(a)),
    ("min(a, it)", ("list[any]?",), lambda a: _I["min"].impl(a, lambda x: x)),
    ("max(a, it)", ("list[any]?",), lambda a: _I["max"].impl(a, lambda x: x)),
    ("min(a, b)", ("int?", "float?"), lambda a, b: _I["min"].impl([a, b])),
    ("max(a, b)", ("float", "int"), lambda a, b: _I["max"].impl([a, b])),
    ("argmin(a)", ("list[any]?",), lambda a: _I["argmin"].impl(a)),
    ("argmax(a)", ("list[any]?",), lambda a: _I["argmax"].impl(a)),
    ("argmin(a, it)", ("list[any]?",), lambda a: _I["argmin"].impl(a, lambda x: x)),
    ("argmax(a, len(it))", ("list[any]",), lambda a: _I["argmax"].impl(a, _I["len"].impl)),
    ("any(a)", ("list[any]?",), lambda a: _I["any"].impl(a)),
    ("all(a)", ("list[any]?",), lambda a: _I["all"].impl(a)),
    ("any(a, it == 1)", ("list[any]?",), lambda a: _I["any"].impl(a, lambda x: envrt.eq(x, 1))),
    ("all(a, it != null)", ("list[any]?",), lambda a: _I["all"].impl(a, lambda x: envrt.ne(x, None))),
    ("map(a, it)", ("list[any]?",), lambda a: _I["map"].impl(a, lambda x: x)),
    ("map(a, it)", ("list[any]",), lambda a: _I["map"].impl(a, lambda x: x)),
    ("map(a, str(it))", ("list[any]",), lambda a: _I["map"].impl(a, envrt.to_str)),
    ("sorted(a)", ("list[any]?",), lambda a: _I["sorted"].impl(a)),
    ("sorted(a, it)", ("list[any]?",), lambda a: _I["sorted"].impl(a, lambda x: x)),
    ("sorted(a, it, desc: true)", ("list[any]",), lambda a: _I["sorted"].impl(a, lambda x: x, True)),
    ("first(a)", ("list[any]?",), lambda a: _I["first"].impl(a)),
    ("last(a)", ("list[any]?",), lambda a: _I["last"].impl(a)),
    ("round(a)", ("any?",), lambda a: _I["round"].impl(a)),
    ("round(a)", ("float",), lambda a: _I["round"].impl(a)),
    ("round(a, b)", ("float", "int"), lambda a, b: _I["round"].impl(a, b)),
    ("round(a, b)", ("any?", "int?"), lambda a, b: _I["round"].impl(a, b)),
    ("abs(a)", ("any?",), lambda a: _I["abs"].impl(a)),
    ("abs(a)", ("int",), lambda a: _I["abs"].impl(a)),
    ("abs(a)", ("float",), lambda a: _I["abs"].impl(a)),
    ("str(a)", ("any?",), lambda a: _I["str"].impl(a)),
    ("str(a)", ("str",), lambda a: _I["str"].impl(a)),
    ("int(a)", ("any?",), lambda a: _I["int"].impl(a)),
    ("int(a)", ("int",), lambda a: _I["int"].impl(a)),
    ("float(a)", ("any?",), lambda a: _I["float"].impl(a)),
    ("float(a)", ("float",), lambda a: _I["float"].impl(a)),
    ("lower(a)", ("any?",), lambda a: _I["lower"].impl(a)),
    ("upper(a)", ("str?",), lambda a: _I["upper"].impl(a)),
    ("contains(a, b)", ("any?", "any?"), lambda a, b: _I["contains"].impl(a, b)),
    ("startswith(a, b)", ("any?", "any?"), lambda a, b: _I["startswith"].impl(a, b)),
    ("keys(a)", ("any?",), lambda a: _I["keys"].impl(a)),
    ("sqrt(a)", ("any?",), lambda a: _I["sqrt"].impl(a)),
    ("sqrt(a)", ("float",), lambda a: _I["sqrt"].impl(a)),
    ("pow(a, b)", ("any?", "any?"), lambda a, b: _I["pow"].impl(a, b)),
    ("pow(a, b)", ("int", "int"), lambda a, b: _I["pow"].impl(a, b)),
    ("log(a)", ("any?",), lambda a: _I["log"].impl(a)),
    ("log(a, b)", ("float", "int"), lambda a, b: _I["log"].impl(a, b)),
    ("log(a, b)", ("any?", "any?"), lambda a, b: _I["log"].impl(a, b)),
    ("mean(a)", ("list[any]?",), lambda a: _I["mean"].impl(a)),
    ("mean(a, it)", ("list[any]?",), lambda a: _I["mean"].impl(a, lambda x: x)),
    ("median(a)", ("list[any]?",), lambda a: _I["median"].impl(a)),
    ("stdev(a)", ("list[any]?",), lambda a: _I["stdev"].impl(a)),
    ("pstdev(a)", ("list[any]?",), lambda a: _I["pstdev"].impl(a)),
    ("calc(a)", ("any?",), lambda a: _I["calc"].impl(a)),
    ("calc(a)", ("str",), lambda a: _I["calc"].impl(a)),
    # text and paths (file trees): docs/language.md, "Builtins and operators"
    ("split(a)", ("any?",), lambda a: _I["split"].impl(a)),
    ("split(a, b)", ("str", "str"), lambda a, b: _I["split"].impl(a, b)),
    ("join(a, b)", ("list[any]?", "str?"), lambda a, b: _I["join"].impl(a, b)),
    ("replace(a, b, \"x\")", ("str", "str"), lambda a, b: _I["replace"].impl(a, b, "x")),
    ("replace(a, b, \"x\", 1)", ("any?", "any?"), lambda a, b: _I["replace"].impl(a, b, "x", 1)),
    ("endswith(a, b)", ("any?", "any?"), lambda a, b: _I["endswith"].impl(a, b)),
    ("slice(a, b)", ("any?", "int?"), lambda a, b: _I["slice"].impl(a, b)),
    ("slice(a, 1, b)", ("list[any]", "int"), lambda a, b: _I["slice"].impl(a, 1, b)),
    ("pad_start(a, b)", ("str", "int"), lambda a, b: _I["pad_start"].impl(a, b)),
    ("pad_end(a, 3)", ("any?",), lambda a: _I["pad_end"].impl(a, 3)),
    ("fixed(a, 2)", ("any?",), lambda a: _I["fixed"].impl(a, 2)),
    ("json(a)", ("any?",), lambda a: _I["json"].impl(a)),
    ("json(a, 2)", ("any?",), lambda a: _I["json"].impl(a, 2)),
    ("base64(a)", ("any?",), lambda a: _I["base64"].impl(a)),
    ("path_resolve(a, b)", ("str", "str"), lambda a, b: _I["path_resolve"].impl(a, b)),
    ("dirname(a)", ("any?",), lambda a: _I["dirname"].impl(a)),
    ("basename(a)", ("str",), lambda a: _I["basename"].impl(a)),
    ("path_rel(a, b)", ("str", "str"), lambda a, b: _I["path_rel"].impl(a, b)),
    ("glob_match(a, b)", ("str", "str"), lambda a, b: _I["glob_match"].impl(a, b)),
    ("path_tree(a, b)", ("list[any]?", "str"), lambda a, b: _I["path_tree"].impl(a, b)),
    ("unified_diff(a, b, \"f\")", ("str", "str"), lambda a, b: _I["unified_diff"].impl(a, b, "f")),
    # SQL over state tables (runtime/sqlmini.py; tests/test_sql_differential.py checks it against sqlite3)
    ("sql_kind(a)", ("any?",), lambda a: _I["sql_kind"].impl(a)),
    ("sql_table(a)", ("str",), lambda a: _I["sql_table"].impl(a)),
    ("sql_select(a, b)", ("any?", "any?"), lambda a, b: _I["sql_select"].impl(a, b)),
    ("sql_write(a, b)", ("any?", "str"), lambda a, b: _I["sql_write"].impl(a, b)),
    ("sql_create(a)", ("any?",), lambda a: _I["sql_create"].impl(a)),
    ("-a", ("any?",), lambda a: UNARY["-"].impl(a)),
    ("-a", ("int",), lambda a: UNARY["-"].impl(a)),
    ("-a", ("float",), lambda a: UNARY["-"].impl(a)),
    ("not a", ("any?",), lambda a: UNARY["not"].impl(a)),
    ("a and b", ("any?", "any?"), lambda a, b: a and b),
    ("a or b", ("any?", "any?"), lambda a, b: a or b),
]
for _op, _o in OPERATORS.items():
    if _o.impl is not None:
        for _lt, _rt in BINARY_TYPES:
            CALLS.append((f"a {_op} b", (_lt, _rt), (lambda impl: lambda a, b: impl(a, b))(_o.impl)))

# the builtins a blueprint cannot evaluate (they read the env's collections)
assert {n for n, b in BUILTINS.items() if b.impl is None} == {"fresh_id"}


def _tool_text(i: int, expr: str, types: tuple) -> str:
    params = ", ".join(f"{p}: {t}" for p, t in zip("ab", types))
    return f"  tool t{i}({params}) -> any? {{\n    return {expr}\n  }}\n"


def _checks(text: str) -> bool:
    m, d = L.parse("env probe {\n" + text + "}\n", "probe.forge")
    return not any(x.is_error for x in d) and not any(x.is_error for x in L.check([m]))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The env with one tool per (expression, parameter types) the checker accepts."""
    kept = [(i, c) for i, c in enumerate(CALLS) if _checks(_tool_text(i, c[0], c[1]))]
    text = "env diff {\n" + "".join(_tool_text(i, c[0], c[1]) for i, c in kept) + "}\n"
    m, d = L.parse(text, "diff.forge")
    assert not any(x.is_error for x in d + L.check([m]))
    path = tmp_path_factory.mktemp("diff") / "env.py"
    path.write_text(emit_env(m.envs[0], "diff.forge"))
    mod = load_env_module(path)
    tools = {t.name: t for t in m.envs[0].tools}
    return mod.Env({"entities": {}, "globals": {}}), tools, dict(kept)


def _grid(types: tuple) -> list[tuple]:
    if len(types) == 1:
        return [(v,) for v in BY_TYPE[types[0]]]
    return [(a, b) for a in BY_TYPE[types[0]] for b in BY_TYPE[types[1]]]


def _j(v):
    return json.dumps(v, sort_keys=True)


def _outcome_tool(env, name, args):
    r = env.step(name, {p: v for p, v in zip("ab", args)})
    if isinstance(r, ToolError):
        assert r.code != "invalid-arguments", (name, args, r)  # the grid fits the parameter types
        if r.internal:  # a wrong-typed value: the runtime's TypeError, reported at the .forge line
            assert type(r.__cause__) is TypeError and r.where.startswith("diff.forge:"), r
            return ("err", "internal", str(r.__cause__))
        return ("err", r.code, r.message)
    return ("ok", _j(r))


def _outcome_blueprint(expr_ast, args):
    scope = Scope({})
    scope.nodes.update(zip("ab", args))
    try:
        return ("ok", eval_expr(expr_ast, scope))
    except Rejected as ex:
        return ("err", ex.code, ex.detail)


def _outcome_runtime(fn, args):
    try:
        return ("ok", fn(*args))
    except ToolError as ex:
        return ("err", ex.code, ex.message)
    except TypeError as ex:
        return ("err", "internal", str(ex))


def _canonical(outcome):
    return ("ok", _j(envrt.canon(outcome[1]))) if outcome[0] == "ok" else outcome


def test_the_checker_accepts_the_grid_it_should(compiled):
    """Every `any?` form and every builtin is compiled (a silently dropped tool tests nothing)."""
    _, _, kept = compiled
    exprs = {c[0] for c in kept.values()}
    for name, b in BUILTINS.items():
        if b.impl is not None:
            assert any(e.startswith(name + "(") for e in exprs), name
    for op in OPERATORS:
        assert any(c[0] == f"a {op} b" and c[1] == ("any?", "any?") for c in kept.values()), op
    assert len(kept) >= 100


def test_every_builtin_and_operator_agrees_on_three_paths(compiled):
    env, tools, kept = compiled
    checked = 0
    for i, (expr, types, fn) in kept.items():
        ast = tools[f"t{i}"].body[-1].value
        for args in _grid(types):
            tool = _outcome_tool(env, f"t{i}", args)
            bp = _outcome_blueprint(ast, args)
            rt = _outcome_runtime(fn, args)
            where = f"{expr} with {types} on {args!r}"
            assert type(bp[1]) is type(rt[1]) and (bp[0] == "err" or _j(bp[1]) == _j(rt[1])), (where, bp, rt)
            assert bp == rt or _j(bp[1]) == _j(rt[1]), (where, bp, rt)
            assert tool == _canonical(bp), (where, tool, bp)
            checked += 1
    assert checked > 5000


def _run(expr: str, types: tuple, *args, compiled):
    """The value of `expr` on all three paths (asserted equal above); here through the tool body."""
    env, tools, kept = compiled
    i = next(i for i, c in kept.items() if c[0] == expr and c[1] == types)
    return _outcome_tool(env, f"t{i}", args)


SQLT = {"name": "t", "rows": [{"a": 1, "b": "x"}, {"a": 2, "b": None}, {"a": 3, "b": "y"}],
        "columns": [{"name": "a", "type": "INTEGER", "notnull": 0, "pk": 0, "unique": 0, "default": None},
                    {"name": "b", "type": "TEXT", "notnull": 0, "pk": 0, "unique": 0, "default": None}]}
TREE = [{"path": "/p", "kind": "directory"}, {"path": "/p/src", "kind": "directory"},
        {"path": "/p/src/a.py", "kind": "file"}, {"path": "/p/README.md", "kind": "file"}, {"path": "/q/x", "kind": "file"}]


@pytest.mark.parametrize(
    "expr, types, args, expected",
    [
        ("split(a, b)", ("str", "str"), ("a\nb\n", "\n"), ["a", "b", ""]),
        ("split(a)", ("any?",), (" two  words\n",), ["two", "words"]),
        ("join(a, b)", ("list[any]?", "str?"), (["x", 1, True], "-"), "x-1-true"),
        ("replace(a, b, \"x\", 1)", ("any?", "any?"), ("a.a.a", "a"), "x.a.a"),
        ("replace(a, b, \"x\")", ("str", "str"), ("a.a.a", "a"), "x.x.x"),
        ("endswith(a, b)", ("any?", "any?"), ("notes.txt", ".txt"), True),
        ("slice(a, b)", ("any?", "int?"), ([1, 2, 3], -2), [2, 3]),
        ("slice(a, b)", ("any?", "int?"), ("abcdef", 4), "ef"),
        ("slice(a, 1, b)", ("list[any]", "int"), ([1, 2, 3, 4], 3), [2, 3]),
        ("pad_start(a, b)", ("str", "int"), ("12 B", 10), "      12 B"),
        ("pad_end(a, 3)", ("any?",), ("ab",), "ab "),
        ("fixed(a, 2)", ("any?",), (1.5,), "1.50"),
        ("fixed(a, 2)", ("any?",), (0.125,), "0.13"),  # half away from zero on the exact value
        ("json(a, 2)", ("any?",), ([{"name": "a", "children": []}],), '[\n  {\n    "name": "a",\n    "children": []\n  }\n]'),
        ("base64(a)", ("any?",), ("hi",), "aGk="),
        ("path_resolve(a, b)", ("str", "str"), ("../x/./y/", "/p/a"), "/p/x/y"),
        ("path_resolve(a, b)", ("str", "str"), ("/../etc", "/p"), "/etc"),
        ("dirname(a)", ("any?",), ("/a",), "/"),
        ("dirname(a)", ("any?",), ("/a/b/",), "/a"),
        ("basename(a)", ("str",), ("/a/b.txt",), "b.txt"),
        ("path_rel(a, b)", ("str", "str"), ("/p/a/b", "/p"), "a/b"),
        ("path_rel(a, b)", ("str", "str"), ("/q", "/p/a"), "../../q"),
        ("glob_match(a, b)", ("str", "str"), ("b.txt", "**/*.txt"), True),  # ** may be no directory
        ("glob_match(a, b)", ("str", "str"), ("a/b.txt", "*.txt"), False),  # * stays in one name
        ("glob_match(a, b)", ("str", "str"), ("a", "a/**"), False),  # a trailing ** needs a name below
        ("glob_match(a, b)", ("str", "str"), ("src/x.ts", "src/*.{js,ts}"), True),
        ("glob_match(a, b)", ("str", "str"), (".env", "*"), True),
        ("path_tree(a, b)", ("list[any]?", "str"), (TREE, "/p"),
         [{"name": "README.md", "type": "file"}, {"name": "src", "type": "directory", "children": [{"name": "a.py", "type": "file"}]}]),
        ("unified_diff(a, b, \"f\")", ("str", "str"), ("a\nb\nc\n", "a\nB\nc\n"),
         "Index: f\n" + "=" * 67 + "\n--- f\toriginal\n+++ f\tmodified\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"),
        ("sql_kind(a)", ("any?",), (" update t set a = 1",), "update"),
        ("sql_table(a)", ("str",), ("SELECT a FROM \"My T\" WHERE b = 1",), "My T"),
        ("sql_select(a, b)", ("any?", "any?"), (SQLT, "SELECT b FROM t WHERE a >= '2' ORDER BY a DESC"), [{"b": "y"}, {"b": None}]),
        ("sql_select(a, b)", ("any?", "any?"), (SQLT, "select count(*), sum(a) from t where b is not null"), [{"count(*)": 2, "sum(a)": 4}]),
        ("sql_write(a, b)", ("any?", "str"), (SQLT, "UPDATE t SET a = a * 10 WHERE b LIKE 'X'"),
         {"rows": [{"a": 10, "b": "x"}, {"a": 2, "b": None}, {"a": 3, "b": "y"}], "affected": 1}),
        ("sql_create(a)", ("any?",), ("CREATE TABLE u (id INTEGER PRIMARY KEY, n text NOT NULL DEFAULT 'x')",),
         {"name": "u", "if_not_exists": False, "columns": [
             {"name": "id", "type": "INTEGER", "notnull": 0, "pk": 1, "unique": 0, "default": None},
             {"name": "n", "type": "TEXT", "notnull": 1, "pk": 0, "unique": 0, "default": "'x'"}]}),
    ],
)
def test_text_and_path_values(compiled, expr, types, args, expected):
    """Hand-computed values of the text/path builtins (the glob cases are minimatch's answers
    with `dot: true`; the diff is jsdiff's `createTwoFilesPatch` text)."""
    assert _run(expr, types, *args, compiled=compiled) == ("ok", _j(expected))


@pytest.mark.parametrize(
    "expr, types, args, expected",
    [
        # exact sums: fsum, rounded to 6 decimals when a float takes part; nulls skipped
        ("sum(a)", ("list[any]?",), ([10.1, 20.2],), 30.3),
        ("sum(a)", ("list[any]?",), ([0.1, 0.2, 0.3],), 0.6),
        ("sum(a)", ("list[any]?",), ([1, None],), 1),
        ("sum(a)", ("list[any]?",), ([],), 0),
        ("sum(a, 2)", ("list[any]?",), ([10.1, 20.2],), 4),
        # round: ties to even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2), on the decimal spelling with digits
        ("round(a)", ("float",), (2.5,), 2),
        ("round(a)", ("float",), (3.5,), 4),
        ("round(a)", ("float",), (-2.5,), -2),
        ("round(a, b)", ("float", "int"), (2.675, 2), 2.68),
        ("round(a, b)", ("float", "int"), (2.5, 0), 2.0),
        ("round(a, b)", ("any?", "int?"), (7, 1), 7.0),
        # min/max skip nulls
        ("min(a)", ("list[any]?",), ([1, None],), 1),
        ("min(a, b)", ("int?", "float?"), (None, 2.5), 2.5),
        ("max(a)", ("list[any]?",), ([2.5, 1],), 2.5),
        # arithmetic
        ("a / b", ("int", "int"), (7, 2), 3.5),
        ("a / b", ("int", "int"), (2, 1), 2.0),
        ("a % b", ("int", "int"), (-3, 2), 1),
        ("a + b", ("float", "float"), (0.1, 0.2), 0.3),  # returned values are canonical
        ("a + b", ("any?", "any?"), ("a", 1), "a1"),
        ("a + b", ("any?", "any?"), (1, True), "err"),
        # equality is JSON equality; ordering is false on null
        ("a == b", ("any?", "any?"), (1, True), False),
        ("a == b", ("any?", "any?"), (1, 1.0), True),
        ("a == b", ("any?", "any?"), ([1, None], [1.0, None]), True),
        ("a < b", ("any?", "any?"), (None, 1), False),
        ("a in b", ("any?", "any?"), (1, None), False),
        ("a in b", ("any?", "any?"), (True, [1, 2]), False),
        ("a in b", ("any?", "any?"), (1, "a1"), True),
        # conversions spell values as JSON
        ("str(a)", ("any?",), (True,), "true"),
        ("str(a)", ("any?",), (None,), "null"),
        ("str(a)", ("any?",), (0.1,), "0.1"),
        ("int(a)", ("any?",), ("3.7",), 3),
        ("lower(a)", ("any?",), (None,), None),
        ("sorted(a)", ("list[any]?",), ([2.5, 1],), [1, 2.5]),
        ("sorted(a, it, desc: true)", ("list[any]",), (["b", "a"],), ["b", "a"]),
        ("keys(a)", ("any?",), ({"qty": 2, "price": 10.1},), ["price", "qty"]),
        ("count(a, it == 1)", ("list[any]?",), ([1, 1.0, True],), 2),
    ],
)
def test_hand_computed_values(compiled, expr, types, args, expected):
    got = _run(expr, types, *args, compiled=compiled)
    if expected == "err":
        assert got[0] == "err"
    else:
        assert got == ("ok", _j(expected)), got
        assert type(json.loads(got[1])) is type(expected)


@pytest.mark.parametrize(
    "expr, types, args, code, message",
    [
        # domain failures: the call is refused (precondition)
        ("a / b", ("int", "int"), (1, 0), "precondition", "division by zero"),
        ("a / b", ("float", "float"), (2.5, 0.0), "precondition", "division by zero"),
        ("a % b", ("any?", "any?"), (1, 0), "precondition", "division by zero"),
        ("min(a)", ("list[any]?",), ([],), "precondition", "min() of an empty list"),
        ("max(a)", ("list[any]?",), ([None],), "precondition", "max() of an empty list"),
        ("first(a)", ("list[any]?",), ([],), "precondition", "first() of an empty list"),
        ("int(a)", ("any?",), ("x",), "precondition", "int() of 'x'"),
        # wrong-typed values (null included): a bug in the tool (internal)
        ("a - b", ("any?", "any?"), (None, 1), "internal", "cannot subtract null"),
        ("a + b", ("any?", "any?"), (None, 1), "internal", "cannot add null"),
        ("a * b", ("any?", "any?"), ("ab", 2), "internal", "cannot multiply string and integer"),
        ("a < b", ("any?", "any?"), ("a", 1), "internal", "cannot compare string with integer"),
        ("min(a)", ("list[any]?",), ([1, "a"],), "internal", "min() of values that cannot be compared"),
        ("sum(a)", ("list[any]?",), (None,), "internal", "sum() of null"),
        ("sum(a)", ("list[any]?",), ([True, False],), "internal", "sum() of a non-number true"),
        ("len(a)", ("any?",), (None,), "internal", "len() of null"),
        ("round(a)", ("any?",), (None,), "internal", "round() of null"),
        ("abs(a)", ("any?",), ("a",), "internal", "abs() of string"),
    ],
)
def test_errors_are_one_error(compiled, expr, types, args, code, message):
    """A failing builtin is one error: the tool's ToolError code and message, the blueprint's
    rejection code and detail (`internal`: the tool reports the TypeError at its .forge line)."""
    assert _run(expr, types, *args, compiled=compiled) == ("err", code, message)
    env, tools, kept = compiled
    i = next(i for i, c in kept.items() if c[0] == expr and c[1] == types)
    assert _outcome_blueprint(tools[f"t{i}"].body[-1].value, args) == ("err", code, message)
    err = env.step(f"t{i}", dict(zip("ab", args)))
    assert err.internal == (code == "internal")
    if code == "internal":
        assert err.message.startswith(f"internal error in t{i}: TypeError: {message} (at diff.forge:")


def test_the_three_known_disagreements_are_gone(compiled):
    """The issue's examples: the blueprint now computes what the tool body computes."""
    scope = Scope({})
    m, _ = L.parse('env e { tool t(a: list[float]?) -> any { return sum(a) } }', "x.forge")
    sum_ast = m.envs[0].tools[0].body[-1].value
    scope.nodes["a"] = [10.1, 20.2]
    assert eval_expr(sum_ast, scope) == 30.3 and 10.1 + 20.2 != 30.3
    m, _ = L.parse('env e { tool t(a: float) -> any { return round(a) } }', "x.forge")
    scope.nodes["a"] = 2.5
    r = eval_expr(m.envs[0].tools[0].body[-1].value, scope)
    assert r == 2 and type(r) is int
    m, _ = L.parse('env e { tool t(a: int?, b: int) -> any { return min(a, b) } }', "x.forge")
    scope.nodes.update(a=None, b=1)
    assert eval_expr(m.envs[0].tools[0].body[-1].value, scope) == 1


def test_reasoning_ops_share_the_builtin_meaning():
    """`reason s = sum(xs)` is the builtin sum; `compare`/`filter` use the `==`/`<` operators."""
    assert OPS.apply("sum", [[10.1, 20.2]], {}) == 30.3
    assert OPS.apply("sum", [[{"p": 10.1}, {"p": None}, {"p": 20.2}]], {"by": "p"}) == 30.3
    with pytest.raises(OPS.OpError, match=r"sum\(\) of a non-number 'x'"):
        OPS.apply("sum", [[1, "x"]], {})
    assert OPS.apply("compare", [1, True], {"op": "=="}) is False
    assert OPS.apply("compare", [None, 1], {"op": "<"}) is False
    with pytest.raises(OPS.OpError, match="cannot compare string with integer"):
        OPS.apply("compare", ["a", 1], {"op": "<"})
    assert OPS.apply("filter", [[{"p": 1}, {"p": None}, {"p": 3}]], {"by": "p", "lt": 2}) == [{"p": 1}]
    assert OPS.apply("contains", [["a"]], {"value": "a"}) is True
    assert OPS.apply("contains", ["xtrue"], {"value": True}) is True  # str(true) is "true"


def test_reasoning_operators_order_and_compare_by_the_registrys_rules():
    """argmin/argmax/sort/first/last/count of blueprints are the builtins' meaning (issue 22): a null is skipped as
    `min` skips it (argmin used to refuse it), `true` and `1` are not a tie (`==` says they differ; booleans do not
    order), 1 and 1.0 are; and the builtin picks what the reasoning operator picks wherever the answer is unique."""
    assert OPS.apply("argmin", [[3, None, 1]], {}) == 1 == BUILTINS["argmin"].impl([3, None, 1])
    assert OPS.apply("argmax", [[{"p": None}, {"p": 2}, {"p": 5}]], {"by": "p"}) == {"p": 5}
    with pytest.raises(OPS.OpError, match="cannot be compared"):
        OPS.apply("argmax", [[True, 1]], {})
    with pytest.raises(OPS.Ambiguous, match="2 elements tie"):
        OPS.apply("argmax", [[{"p": 1}, {"p": 1.0}]], {"by": "p"})
    with pytest.raises(OPS.Ambiguous):
        OPS.apply("argmin", [[None, None]], {})
    assert OPS.apply("sort", [[3, True, None, "a"]], {}) == [None, True, 3, "a"] == BUILTINS["sorted"].impl([3, True, None, "a"])
    assert OPS.apply("sort", [[{"p": 2}, {"p": 1}]], {"by": "p", "desc": True}) == [{"p": 2}, {"p": 1}]
    with pytest.raises(OPS.Ambiguous):
        OPS.apply("sort", [[1, 1.0]], {})
    assert OPS.apply("sort", [[1, True]], {}) == [True, 1]  # not equal keys: booleans sort before numbers
    assert OPS.apply("count", [[1, None]], {}) == 2 == BUILTINS["count"].impl([1, None])
    for xs in ([4, 2, 9], [[1, 2], [3]], ["b", "a", "c"]):
        assert OPS.apply("first", [xs], {}) == BUILTINS["first"].impl(xs)
        assert OPS.apply("last", [xs], {}) == BUILTINS["last"].impl(xs)
        if xs != [[1, 2], [3]]:  # lists do not order (both refuse them)
            assert OPS.apply("argmin", [xs], {}) == BUILTINS["argmin"].impl(xs)



# the reasoning operator -> the registry builtin it is (stdlib/ops.py); `sort` is `sorted`
_OP_BUILTIN = {"argmin": "argmin", "argmax": "argmax", "sort": "sorted", "first": "first", "last": "last", "count": "count"}


@pytest.mark.parametrize("op", sorted(_OP_BUILTIN))
def test_reasoning_operators_agree_with_their_builtin_over_the_grid(op):
    """Over the grid's lists (and the same values as a record field, `by:`), a reasoning operator gives the
    builtin's answer, or refuses where the builtin refuses (OpError) or the answer is not unique (Ambiguous)."""
    b = BUILTINS[_OP_BUILTIN[op]]
    grid = [(xs, {}) for xs in LISTS] + [([{"p": x} for x in xs], {"by": "p"}) for xs in LISTS]
    answered = 0
    for xs, kw in grid:
        by = kw.get("by")
        per = (lambda x, by=by: x[by]) if by and OPS.OPS[op].kw("by") else None
        if by and per is None:
            continue  # first/last/count take no `by`
        try:
            want = b.impl(xs, per) if per is not None else b.impl(xs)
        except (ToolError, TypeError):  # refused: a ToolError, or the runtime's TypeError for a wrong-typed value
            with pytest.raises((OPS.OpError, OPS.Ambiguous)):
                OPS.apply(op, [xs], kw)
            continue
        try:
            got = OPS.apply(op, [xs], kw)
        except OPS.Ambiguous:
            continue  # ties, an empty list: no unique gold answer
        assert got == want and json.dumps(got) == json.dumps(want), (op, xs, kw)
        answered += 1
    assert answered >= 5, op

def test_runtime_semantics_independently():
    """The runtime functions against values computed by hand / by the decimal module."""
    assert envrt.sum_([0.1] * 10) == 1.0 and sum([0.1] * 10) != 1.0
    assert envrt.sum_([1e16, 1.0, -1e16]) == 1.0  # exact (math.fsum), not left-to-right
    assert envrt.round_(0.125, 2) == 0.12 and envrt.round_(0.375, 2) == 0.38  # half to even
    assert envrt.round_(1234.5, -2) == 1200.0
    assert envrt.round_(-0.4) == 0 and math.copysign(1, envrt.round_(-0.0001, 2)) == 1.0  # no -0.0
    assert envrt.mod(-7, 3) == 2 and envrt.mod(7, -3) == -2
    assert envrt.eq({"a": [1, True]}, {"a": [1.0, True]}) and not envrt.eq({"a": 1}, {"a": True})
    assert envrt.to_str([1, None]) == "[1,null]"
    assert envrt.sorted_([None, "b", 2, True, 1.5]) == [None, True, 1.5, 2, "b"]


def test_math_builtins_by_hand():
    """The pure-tool math builtins against values computed by hand (docs/language.md)."""
    xs = [2, 4, 4, 4, 5, 5, 7, 9]  # mean 5, population variance 4, sample variance 32/7
    assert envrt.mean_(xs) == 5.0 and type(envrt.mean_(xs)) is float
    assert envrt.pstdev_(xs) == 2.0
    assert abs(envrt.stdev_(xs) - (32 / 7) ** 0.5) < 1e-12
    assert envrt.median_(xs) == 4.5 and envrt.median_([3, 1, 2]) == 2.0
    assert envrt.mean_([1, None, 2]) == 1.5  # nulls skipped, as in sum
    assert envrt.sqrt_(16) == 4.0 and envrt.pow_(2, 10) == 1024.0 and envrt.pow_(4, 0.5) == 2.0
    assert envrt.log_(1000, 10) == 3.0 and envrt.log_(8, 2) == 3.0 and envrt.log_(1) == 0.0
    assert envrt.calc("2 + 2") == 4.0 and envrt.calc("(1.5 + 2) * -3 / 2") == -5.25
    assert envrt.calc("10 - 4 - 3") == 3.0 and envrt.calc("2 * (3 + 4) - .5") == 13.5
    for bad, msg in [("1 / 0", "division by zero"), ("2 +", "expected a number"), ("(1", "missing"),
                     ("__import__('os')", "unexpected"), ("1 2", "unexpected"), ("2 ** 3", "expected a number")]:
        with pytest.raises(ToolError, match=msg):
            envrt.calc(bad)
    for fn, args, msg in [(envrt.sqrt_, (-1,), "negative"), (envrt.log_, (0,), "not positive"),
                          (envrt.log_, (8, 1), "base"), (envrt.pow_, (0, -1), "zero"),
                          (envrt.pow_, (-8, 0.5), "fractional"), (envrt.pow_, (10, 400), "out of range"),
                          (envrt.mean_, ([],), "empty"), (envrt.stdev_, ([1],), "two values")]:
        with pytest.raises(ToolError, match=msg):
            fn(*args)
    with pytest.raises(TypeError):
        envrt.mean_([1, "a"])
