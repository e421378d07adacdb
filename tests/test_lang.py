"""Unit tests of the .forge parser, checker, formatter and CLI, against hand-built ASTs,
hand-written expected text and hand-computed positions."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forgec.lang as L
from forgec.diagnostics import CODES, Severity
from forgec.lang import ast as A

GOLDEN = Path(__file__).parent / "golden"


def codes(diags) -> list[str]:
    return sorted(d.code for d in diags)


def body_of(src: str) -> tuple:
    """Statements of the first tool of `env e { <src> }`."""
    m, d = L.parse("env e {\n" + src + "\n}", "t.forge")
    assert not d, d
    return m.envs[0].tools[0].body


# --------------------------------------------------------------------------- the ast.py example


def docstring_example() -> str:
    doc = A.__doc__
    src = textwrap.dedent(doc[doc.index('    import "'):doc.index("Semantics")])
    return src


def test_docstring_example_parses_clean_and_checks_clean_with_its_missing_declarations() -> None:
    src = docstring_example()
    m, d = L.parse(src, "doc.forge")
    assert d == []
    assert [type(i).__name__ for i in m.items] == ["Import", "EnvDecl", "BlueprintDecl"]
    env = m.envs[0]
    assert [e.name for e in env.entities] == ["Order"] and env.records[0].name == "Item"
    assert env.tool("run").python == 'return {"rows": []}' and env.tool("run").annotations == ("action",)
    assert env.tool("cancel_order").params[1].default == A.Literal("no longer needed")
    # the docstring imports a file that is not here and uses User/get_user_details without declaring them
    fixed = src.replace('import "../src/retail/env.forge"\n', "").replace(
        "  @update",
        "  entity User key user_id { user_id: str  name: str }\n"
        "  @read tool get_user_details(user_id: User) -> {user_id: str, orders: list[Order]} {\n"
        "    return {user_id: user_id.user_id, orders: Order where it.user_id == user_id.user_id}\n"
        "  }\n  @update", 1)
    m2, d2 = L.parse(fixed, "doc.forge")
    assert d2 == [] and L.check([m2]) == []


def test_retail_exchange_tool_checks_clean_and_has_the_expected_shape() -> None:
    mods, diags = L.load([GOLDEN / "check" / "retail_ok.forge"])
    assert diags == [] and L.check(mods) == []
    env = mods[0].envs[0]
    tool = env.tool("exchange_delivered_order_items")
    assert [p.name for p in tool.params] == ["order_id", "item_ids", "new_item_ids", "payment_method_id"]
    assert tool.params[0].doc == "The order id, such as '#W0000000'."
    kinds = [type(s).__name__ for s in tool.body]
    assert kinds.count("Set") == 5 and kinds[-1] == "Return" and kinds[0] == "Require"
    et = L.EnvTypes(env)
    assert et.writes_state(tool) and not et.writes_state(env.tool("get_order_details"))
    assert str(et.key_type("Order")) == "str"


# --------------------------------------------------------------------------- parser: hand-built ASTs


def test_precedence_matches_hand_built_tree() -> None:
    (ret,) = body_of("tool t(x: int) -> bool { return not x + 1 * 2 == 3 or x in [1] }")
    N, Lit = A.Name, A.Literal
    want = A.Return(A.Binary(
        "or",
        A.Unary("not", A.Binary("==", A.Binary("+", N("x"), A.Binary("*", Lit(1), Lit(2))), Lit(3))),
        A.Binary("in", N("x"), A.ListLit((Lit(1),))),
    ))
    assert ret == want


def test_where_not_in_index_attr_and_calls() -> None:
    (let,) = body_of("tool t() -> any { let v = Order where it.total > 2 and not (it.id not in xs[0].ids) }")
    it = A.Name("it")
    assert let == A.Let("v", A.Where(A.Name("Order"), A.Binary(
        "and",
        A.Binary(">", A.Attr(it, "total"), A.Literal(2)),
        A.Unary("not", A.Binary("not in", A.Attr(it, "id"),
                                A.Attr(A.Index(A.Name("xs"), A.Literal(0)), "ids"))),
    )))
    (let2,) = body_of("tool t() -> any { let s = sorted(xs, it.p, desc: true) }")
    assert let2.value == A.Call("sorted", (A.Name("xs"), A.Attr(A.Name("it"), "p")), (A.Arg("desc", A.Literal(True)),))


def test_negative_literals_fold_but_parenthesized_and_names_do_not() -> None:
    (a, b, c, d) = body_of("tool t(x: int) -> any { let a = -1  let b = -(1)  let c = - 2.5e3  let d = -x }")
    assert a.value == A.Literal(-1)
    assert b.value == A.Unary("-", A.Literal(1))
    assert c.value == A.Literal(-2500.0)
    assert d.value == A.Unary("-", A.Name("x"))


def test_statements_build_the_documented_nodes() -> None:
    body = body_of(textwrap.dedent("""
        tool t(o: Order) -> Order {
          let n = insert Note {id: fresh_id(Note)}
          insert Note {id: "x", text: "y"}
          append 1 to o.xs
          remove 1 from o.xs
          delete o
          if a { return o } else if b { return o } else { return o }
          for i in o.xs { set o.n = i }
          return o
        }"""))
    assert body[0] == A.Insert("Note", (A.FieldInit("id", A.Call("fresh_id", (A.Name("Note"),))),), "n")
    assert body[1] == A.Insert("Note", (A.FieldInit("id", A.Literal("x")), A.FieldInit("text", A.Literal("y"))))
    assert body[2] == A.Append(A.Attr(A.Name("o"), "xs"), A.Literal(1))
    assert body[3] == A.Remove(A.Attr(A.Name("o"), "xs"), A.Literal(1))
    assert body[4] == A.Delete(A.Name("o"))
    ret = (A.Return(A.Name("o")),)
    assert body[5] == A.If(A.Name("a"), ret, (A.If(A.Name("b"), ret, ret),))
    assert body[6] == A.For("i", A.Attr(A.Name("o"), "xs"), (A.Set(A.Attr(A.Name("o"), "n"), A.Name("i")),))


def test_types_and_fields() -> None:
    m, d = L.parse('env e { record R { a: {x: int, y: str?}  b: list[enum("a", -1, 2.5, true)]? = null "doc" '
                   ' c: enum("x", null) = null } }', "t")
    assert not d
    a, b, c = m.envs[0].records[0].fields
    assert c.type == A.EnumType(("x", None))
    assert [(x.code, x.span.col) for x in L.check([m])] == [("bad-enum", 50)]  # "a", -1, 2.5, true: mixed
    assert a.type == A.RecordType((A.FieldDecl("x", A.PrimType("int")),
                                   A.FieldDecl("y", A.OptionalType(A.PrimType("str")))))
    assert b == A.FieldDecl("b", A.OptionalType(A.ListType(A.EnumType(("a", -1, 2.5, True)))), A.Literal(None), "doc")


def test_keywords_are_contextual() -> None:
    m, d = L.parse("env e { entity key key key { key: str  state: int  user: str } }", "t")
    assert not d
    ent = m.envs[0].entities[0]
    assert (ent.name, ent.key, [f.name for f in ent.fields]) == ("key", "key", ["key", "state", "user"])


def test_spans_are_one_based_and_start_at_keywords() -> None:
    m, _ = L.parse("env e {\n  tool t(x: int) -> int {\n    require x > 0 else \"m\"\n    return x\n  }\n}\n", "f.forge")
    req, ret = m.envs[0].tools[0].body
    assert (req.span.file, req.span.line, req.span.col) == ("f.forge", 3, 5)
    assert (req.cond.span.line, req.cond.span.col, req.cond.span.end_col) == (3, 13, 18)
    assert (ret.value.span.line, ret.value.span.col) == (4, 12)
    assert m.envs[0].tools[0].span.line == 2 and m.envs[0].tools[0].span.end_line == 5


def test_comments_are_collected_with_trailing_flag() -> None:
    m, _ = L.parse("// top\nenv e { // after brace\n}\n", "t")
    assert m.comments == (A.Comment(" top", 1, False), A.Comment(" after brace", 2, True))


def test_user_scenario_clauses() -> None:
    m, d = L.parse(textwrap.dedent("""
        blueprint b for shop {
          user {
            persona "Maya"  reason "it broke"  knows email = "m@x.com"  unknown "order id"
            intent "return the kettle"  intent "refund to gift card" if "over $50"  goal "g"
            // `reason`, `unknown`, `intent` stay usable as names elsewhere
          }
          call reason = get(unknown: user.email, intent: 1)
        }"""), "t")
    assert not d, d
    u = m.blueprints[0].user
    assert u == A.UserBlock("g", "Maya", (A.Fact("email", A.Literal("m@x.com")),), "it broke", ("order id",),
                            (A.Intent("return the kettle"), A.Intent("refund to gift card", "over $50")))
    assert u.unknown[0].span.line == 4 and u.intents[1].span.line == 5  # unknowns keep where they were said
    assert L.parse(L.format(m), "t")[0] == m
    import pickle
    assert pickle.loads(pickle.dumps(u)) == u


def test_blueprint_nodes() -> None:
    m, d = L.parse(textwrap.dedent("""
        blueprint b for shop {
          user { goal "g"  persona "p"  knows id = "o_1"  knows n = [1, 2] }
          call o = get(order_id: user.id)
          reason c = argmin(o.items, by: price)
          expect c.price < 3
          tell c
        }"""), "t")
    assert not d
    bp = m.blueprints[0]
    assert bp.user == A.UserBlock("g", "p", (A.Fact("id", A.Literal("o_1")),
                                             A.Fact("n", A.ListLit((A.Literal(1), A.Literal(2))))))
    assert bp.nodes[0] == A.CallNode("o", "get", (A.Arg("order_id", A.Attr(A.Name("user"), "id")),))
    assert bp.nodes[1] == A.ReasonNode("c", "argmin", (A.Attr(A.Name("o"), "items"),), (A.Arg("by", A.Name("price")),))
    assert bp.nodes[2] == A.ExpectNode(A.Binary("<", A.Attr(A.Name("c"), "price"), A.Literal(3)))
    assert bp.nodes[3] == A.TellNode(A.Name("c"))


# --------------------------------------------------------------------------- parser: errors


def test_syntax_error_has_position_expected_tokens_and_hint() -> None:
    _, d = L.parse('env e {\n  tool t(x: int) -> int {\n    require x > 0 "m"\n  }\n}\n', "f.forge")
    assert len(d) == 1
    e = d[0]
    assert e.code == "syntax-error" and (e.span.line, e.span.col) == (3, 19)
    assert "'else'" in e.message and e.help


def test_missing_closing_brace_at_eof_keeps_the_parsed_env() -> None:
    m, d = L.parse("env e {\n  entity X key k {\n    k: str\n  }\n", "t")
    assert codes(d) == ["syntax-error"] and "end of file" in d[0].message and "}" in d[0].help
    assert m.envs and m.envs[0].entities[0].name == "X"


def test_recovery_keeps_later_items_and_statements() -> None:
    src = textwrap.dedent("""
        env e {
          tool a() -> int {
            let x = 1 +
            let y = 2
            return y
          }
          tool b() -> int { return 1 }
        }
        blueprint q for e { user { goal "g" } call r = b() tell r }""")
    m, d = L.parse(src, "t")
    assert codes(d) == ["syntax-error"]
    assert [t.name for t in m.envs[0].tools] == ["a", "b"]
    assert [type(s).__name__ for s in m.envs[0].tools[0].body] == ["Let", "Return"]
    assert m.blueprints[0].nodes[0].tool == "b"


def test_absurd_nesting_is_a_diagnostic_not_a_crash() -> None:
    deep = "not " * 3000 + "true"  # parens make no nodes; unary chains do
    m, d = L.parse(f"env e {{ tool t() -> bool {{ return {deep} }} }}", "t")
    assert d == []
    assert codes(L.check([m])) == ["too-deep"]
    out, d2 = L.format_text(f"env e {{ tool t() -> int {{ return {'-' * 3000}x }} }}", "t")
    assert out is None and codes(d2) == ["too-deep"]


def test_crlf_line_endings() -> None:
    m, d = L.parse('env e {\r\n  tool t() -> any python """\r\n    return 1\r\n  """\r\n}\r\n', "t")
    assert d == [] and m.envs[0].tools[0].python == "return 1"


def test_truncated_file_keeps_everything_before_the_cut() -> None:
    text = (GOLDEN / "check" / "retail_ok.forge").read_text()
    cut = text.index("name: str, orders")  # inside a record return type
    m, d = L.parse(text[:cut + len("name")], "t")
    assert [(x.code, "end of file" in x.message) for x in d] == [("syntax-error", True)]
    env = m.envs[0]
    assert [e.name for e in env.entities] == ["User", "Variant", "Order"]
    assert [t.name for t in env.tools] == ["get_order_details"]


def test_recovery_never_discards_the_enclosing_declaration() -> None:
    m, d = L.parse("env e {\n  tool a() -> int { return 1 }\n  tool b() int { return 2 }\n  tool c() -> int { return 3 }\n}\n", "t")
    assert [(x.code, x.span.line) for x in d] == [("syntax-error", 3)]
    assert [t.name for t in m.envs[0].tools] == ["a", "c"]


@pytest.mark.parametrize("text", ["", "\x00", "}}}}", "env", "env {", '"', '"""', "é ü", "blueprint b for", "@", "1e",
                                  "env e { tool t( -> }", "\ufeffenv e {}", "env e { python }"])
def test_parse_never_raises(text: str) -> None:
    m, d = L.parse(text, "t")
    assert isinstance(m, A.Module) and isinstance(d, list)
    L.check([m])


# --------------------------------------------------------------------------- formatter


def test_format_code_built_ast_without_spans() -> None:
    env = A.EnvDecl(
        "shop", None, (),
        (A.EntityDecl("Order", "order_id", (A.FieldDecl("order_id", A.PrimType("str")),
                                             A.FieldDecl("total", A.PrimType("float"), A.Literal(-1.5)))),),
        (A.ToolDecl("get", (A.ParamDecl("order_id", A.NamedType("Order")),), A.NamedType("Order"), "Get it.",
                    (A.Return(A.Name("order_id")),), annotations=("read",)),),
    )
    bp = A.BlueprintDecl("b", "shop", A.UserBlock("see my order", facts=(A.Fact("id", A.Literal("o_1")),)),
                         (A.CallNode("o", "get", (A.Arg("order_id", A.Attr(A.Name("user"), "id")),)),
                          A.TellNode(A.Attr(A.Name("o"), "total"))))
    mod = A.Module("gen.forge", (env, bp))
    want = textwrap.dedent('''\
        env shop {
          entity Order key order_id {
            order_id: str
            total: float = -1.5
          }

          @read
          tool get(order_id: Order) -> Order
            "Get it."
          {
            return order_id
          }
        }

        blueprint b for shop {
          user {
            goal "see my order"
            knows id = "o_1"
          }
          call o = get(order_id: user.id)
          tell o.total
        }
        ''')
    assert L.format(mod) == want
    assert L.parse(want, "gen.forge") == (mod, [])
    assert L.check([mod]) == []


def test_long_argument_lists_wrap_one_per_line() -> None:
    args = tuple(A.Arg(f"argument_{i}", A.Literal("value number %d" % i)) for i in range(5))
    bp = A.BlueprintDecl("b", "e", A.UserBlock("g"), (A.CallNode("x", "tool_name", args),))
    text = L.format(A.Module("t", (bp,)))
    lines = text.splitlines()
    i = lines.index("  call x = tool_name(")
    assert lines[i + 1:i + 7] == [f'    argument_{k}: "value number {k}",' for k in range(5)] + ["  )"]
    assert all(len(line) <= 100 for line in lines)
    assert L.parse(text, "t")[0].blueprints[0] == bp


def test_unary_minus_on_a_number_literal_round_trips() -> None:
    e = A.Unary("-", A.Literal(1))
    bp = A.BlueprintDecl("b", "e", A.UserBlock("g"), (A.TellNode(e), A.TellNode(A.Literal(-2)),
                                                      A.TellNode(A.Attr(A.Literal(-3), "x"))))
    text = L.format(A.Module("t", (bp,)))
    assert "tell -(1)" in text and "tell -2" in text and "tell (-3).x" in text
    assert L.parse(text, "t")[0].blueprints[0] == bp


def test_comment_before_a_python_body_stays_out_of_it() -> None:
    src = 'env e {\n  tool t() -> any\n  // note\n  python """\n    return 1\n  """  // end\n}\n'
    out, _ = L.format_text(src, "t")
    m = L.parse(out, "t")[0]
    assert m.envs[0].tools[0].python == "return 1"
    assert {c.text for c in m.comments} == {" note", " end"}
    assert L.format_text(out, "t")[0] == out


def test_format_text_refuses_broken_input() -> None:
    out, d = L.format_text("env e {", "t")
    assert out is None and codes(d) == ["syntax-error"]


# --------------------------------------------------------------------------- checker details


def check_text(src: str) -> list:
    m, d = L.parse(textwrap.dedent(src), "t.forge")
    assert not d, d
    return L.check([m])


SHOP = """
env shop {
  entity Order key order_id {
    order_id: str
    status: enum("pending", "cancelled")
    total: float
  }
  @read
  tool get(order_id: Order) -> Order { return order_id }
  @update
  tool cancel(order_id: Order) -> Order {
    set order_id.status = "cancelled"
    return order_id
  }
}
"""


def test_lets_are_function_scoped_and_string_plus_concatenates() -> None:
    src = SHOP.replace("  @read\n", """  @read
  tool label(order_id: Order) -> str {
    if order_id.total > 10 {
      let tag = "big"
    } else {
      let tag = "small"
    }
    let total = 0.0
    for o in Order {
      let total = total + o.total
    }
    return tag + " order " + order_id.order_id + " of " + total
  }
  @read
""", 1)
    assert check_text(src) == []


def test_did_you_mean_in_help() -> None:
    d = check_text(SHOP + 'blueprint b for shop { user { goal "g" } call c = cancl(order_id: "o") }')
    assert [(x.code, x.help) for x in d] == [("unknown-tool", "did you mean `cancel`?")]


def test_entity_params_accept_key_or_record_but_not_other_types() -> None:
    ok = SHOP + 'blueprint b for shop { user { goal "g" } call o = get(order_id: "o_1") call c = cancel(order_id: o) }'
    assert check_text(ok) == []
    bad = SHOP + 'blueprint b for shop { user { goal "g" } call c = cancel(order_id: 3) }'
    assert codes(check_text(bad)) == ["type-mismatch"]


def test_reason_result_types_flow_into_later_nodes() -> None:
    src = SHOP + """
    blueprint b for shop {
      user { goal "g" }
      call o = get(order_id: "o_1")
      reason n = count([o, o])
      reason total = sum([o], by: total)
      reason names = pluck([o], by: status)
      expect n > 1 and total > 0.5
      expect contains(names, "cancelled")
      call c = cancel(order_id: n)
    }"""
    d = check_text(src)
    # `n` is an int, not an Order key (str) or record
    assert [(x.code, x.span.line) for x in d] == [("type-mismatch", 25)]


def test_filter_value_is_checked_against_the_by_field_enum() -> None:
    src = SHOP + """
    blueprint b for shop {
      user { goal "g" }
      call o = get(order_id: "o_1")
      reason p = filter([o], by: status, eq: "pendng")
      tell p
    }"""
    d = check_text(src)
    assert codes(d) == ["enum-value"] and "pending" in d[0].help


def test_check_resolves_imports_relative_to_the_importing_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "bp").mkdir()
    (tmp_path / "src" / "env.forge").write_text(SHOP)
    (tmp_path / "bp" / "b.forge").write_text('import "../src/env.forge"\n'
                                             'blueprint b for shop { user { goal "g" } call c = cancel(order_id: "o") }\n')
    mods, d = L.load([tmp_path / "bp"], roots=[tmp_path])  # imports stay inside roots (tests/test_attacks_inputs.py)
    assert d == [] and [Path(m.file).name for m in mods] == ["b.forge", "env.forge"]  # imports followed
    assert L.check(mods) == []
    assert L.check(mods[:1], roots=[tmp_path]) == []  # env.forge not given: check reads it from disk
    both, _ = L.load([tmp_path])
    assert len(both) == 2 and L.check(both) == []  # each file once
    alone = L.parse('blueprint b for shop { user { goal "g" } }', str(tmp_path / "x.forge"))[0]
    assert codes(L.check([alone])) == ["unknown-blueprint-env"]


def test_at_least_25_documented_language_codes() -> None:
    lang = [c for c in CODES.values() if c.area == "language"]
    assert len(lang) >= 25
    for c in lang:
        assert c.summary and c.why and c.wrong and c.right, c.code
    warns = {c.code for c in lang if c.severity == Severity.WARNING}
    assert {"unused-node", "unreachable", "no-effect"} <= warns


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def cli():
    from forgec.cli import app

    runner = CliRunner()
    return lambda *args, input=None: runner.invoke(app, list(args), input=input)


def test_cli_check_exit_codes_and_formats(cli) -> None:
    ok = cli("check", str(GOLDEN / "check" / "retail_ok.forge"))
    assert ok.exit_code == 0, ok.output
    bad = cli("check", str(GOLDEN / "check" / "five_errors.forge"), "--format", "json")
    assert bad.exit_code == 1
    data = json.loads(bad.stdout)
    assert len([x for x in data if x["severity"] == "error"]) == 5 and all(x["span"]["line"] for x in data)
    concise = cli("check", str(GOLDEN / "check" / "names.forge"), "--format", "concise")
    assert concise.exit_code == 1 and "names.forge:26:13: error[unknown-field]" in concise.stdout
    full = cli("check", str(GOLDEN / "check" / "names.forge"))
    assert "did you mean `status`?" in full.stdout and "^" in full.stdout
    stdin = cli("check", "-", input="env e { tool t() -> int { return x } }")
    assert stdin.exit_code == 1 and "unknown-name" in stdin.stdout and "<stdin>:1:34" in stdin.stdout


def test_cli_check_internal_error_exits_2(cli, monkeypatch) -> None:
    import forgec.commands.check as cmd

    monkeypatch.setattr(cmd, "run_check", lambda paths: 1 / 0)
    r = cli("check", "x.forge")
    assert r.exit_code == 2 and "internal-error" in r.output


def test_cli_fmt_check_diff_inplace_and_stdin(cli, tmp_path: Path) -> None:
    messy = tmp_path / "a.forge"
    messy.write_text("env e {entity X key k {k: str}}")
    canon = tmp_path / "sub" / "b.forge"
    canon.parent.mkdir()
    canon.write_text("env f {\n}\n")
    r = cli("fmt", "--check", str(tmp_path))
    assert r.exit_code == 3 and "would reformat" in r.output and messy.read_text().startswith("env e {entity")
    r = cli("fmt", "--diff", str(messy))
    assert r.exit_code == 0 and "+  entity X key k {" in r.stdout
    r = cli("fmt", str(tmp_path))
    assert r.exit_code == 0 and messy.read_text() == "env e {\n  entity X key k {\n    k: str\n  }\n}\n"
    assert cli("fmt", "--check", str(tmp_path)).exit_code == 0
    r = cli("fmt", "-", input="blueprint b for e {user{goal \"g\"}}")
    assert r.exit_code == 0 and r.stdout == 'blueprint b for e {\n  user {\n    goal "g"\n  }\n}\n'
    bad = tmp_path / "bad.forge"
    bad.write_text("env e {")
    r = cli("fmt", str(bad))
    assert r.exit_code == 1 and "syntax-error" in r.output and bad.read_text() == "env e {"


# --------------------------------------------------------------------------- the typed AST


TYPED_SRC = '''
env shop {
  record Line { sku: str  qty: int  price: float }
  entity User key user_id { user_id: str  name: str }
  entity Order key order_id {
    order_id: str
    user: User
    status: enum("pending", "done")
    lines: list[Line]
    note: str?
  }
  @read
  tool get_order(order_id: Order) -> Order { return order_id }
  @update
  tool total(order_id: Order, extra: int = 0) -> float {
    let t = sum(order_id.lines, it.qty * it.price) + extra
    let open = Order where it.status == "pending"
    require len(open) > 0 else "nothing open"
    return t
  }
}

blueprint b for shop {
  user { goal "g"  knows oid = "o1" }
  call o = get_order(order_id: user.oid)
  reason cheap = argmin(o.lines, by: price)
  call t = total(order_id: o, extra: cheap.qty)
  reason n = count(o.lines)
  expect t > 0 and n > 0
  tell cheap.sku
}
'''


def test_the_checker_returns_the_type_of_every_expression_and_the_edges_of_every_node() -> None:
    from forgec.lang.check import check_typed
    from forgec.lang.types import BOOL, FLOAT, INT, STR, EntRec, EntSet, EnumT, ListT, OptT, RefT

    m, d = L.parse(TYPED_SRC, "t.forge")
    assert not d
    diags, typed = check_typed([m])
    assert not [x for x in diags if x.is_error], diags
    env = m.envs[0]
    body = env.tools[1].body
    let_t, let_open, req, ret = body
    ty = lambda e: typed.type_of("shop", e)  # noqa: E731
    total_expr = let_t.value  # sum(order_id.lines, it.qty * it.price) + extra
    assert ty(total_expr) == FLOAT and ty(total_expr.right) == INT
    sum_call = total_expr.left
    lines_t = ty(sum_call.args[0])  # order_id.lines: a list of the named record Line
    assert isinstance(lines_t, ListT) and lines_t.item.name == "Line"
    assert ty(sum_call.args[1]) == FLOAT and ty(sum_call.args[1].left) == INT  # it.qty * it.price, it.qty
    where = let_open.value
    assert ty(where) == ListT(EntRec("Order")) and ty(where.source) == EntSet("Order")
    assert ty(where.pred) == BOOL and ty(where.pred.left) == EnumT(("pending", "done"))  # it.status
    assert ty(req.cond) == BOOL and ty(ret.value) == FLOAT
    assert ty(body[2].cond.left) == INT  # len(open)
    bp = m.blueprints[0]
    o, cheap, t, n, expect, tell = bp.nodes
    assert ty(o.args[0].value) == STR  # user.oid
    assert ty(t.args[0].value) == EntRec("Order") and ty(t.args[1].value) == INT  # o, cheap.qty
    assert ty(tell.value) == STR and ty(expect.cond) == BOOL
    # fields typed with an entity hold its key; optional fields stay optional
    assert typed.envs["shop"].entity_fields("Order")["user"] == RefT("User", STR)
    assert typed.envs["shop"].entity_fields("Order")["note"] == OptT(STR)
    # edges: the earlier nodes each node reads; `by: price` names a field, not a node
    assert [typed.edges_of("shop", x) for x in bp.nodes] == [(), ("o",), ("o", "cheap"), ("o",), ("t", "n"), ("cheap",)]
    assert [typed.edges_of("shop", x) for x in bp.nodes] == L.check.blueprint_edges(bp)  # checked == unchecked count
