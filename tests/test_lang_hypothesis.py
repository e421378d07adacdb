"""Property tests: the parser/checker only ever answer with diagnostics, and the
formatter is lossless and idempotent on generated valid ASTs."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forgec.lang as L
from forgec.lang import ast as A
from forgec.lang.builtins import BUILTINS
from forgec.lang.parse import grammar_text

GOLDEN = Path(__file__).parent / "golden"
VALID = [p.read_text() for p in sorted((GOLDEN / "check").glob("retail_ok.forge"))] + [
    p.read_text() for p in sorted((GOLDEN / "fmt").glob("*_out.forge"))]

KEYWORDS = {w.strip('"') for line in grammar_text().splitlines() if ': "' in line and line[:1].isupper()
            for w in [line.split(": ", 1)[1]] if w.strip('"').isalpha()}
FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def never_raises(text: str) -> None:
    m, d = L.parse(text, "h.forge")
    assert isinstance(m, A.Module) and all(x.span is not None for x in d)
    L.check([m])
    if not any(x.is_error for x in d):
        out = L.format(m)
        assert L.parse(out, "h.forge")[0] == m


# --------------------------------------------------------------------------- robustness

TOKENS = sorted(KEYWORDS) + ["{", "}", "(", ")", "[", "]", ",", ":", ".", "?", "->", "=", "==", "!=", "<", "<=",
                             ">", ">=", "+", "-", "*", "/", "%", "@read", "x", "Order", "it", "1", "2.5", '"s"',
                             '"""\nbody\n"""', "// c\n", "\n", "&", "'", "$"]


@FAST
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_random_token_sequences_only_produce_diagnostics(tokens: list[str]) -> None:
    never_raises(" ".join(tokens))


@FAST
@given(st.sampled_from(VALID), st.floats(0, 1))
def test_truncations_only_produce_diagnostics(text: str, frac: float) -> None:
    never_raises(text[: int(len(text) * frac)])


@FAST
@given(st.sampled_from(VALID), st.floats(0, 1), st.sampled_from(["delete", "insert", "replace"]),
       st.sampled_from(list('{}()[],:."=<>+-*/@?!&#\\ \nax1_') + ['"']))
def test_single_character_mutations_only_produce_diagnostics(text: str, frac: float, how: str, ch: str) -> None:
    i = int(len(text) * frac)
    if how == "delete":
        text = text[:i] + text[i + 1:]
    elif how == "insert":
        text = text[:i] + ch + text[i:]
    else:
        text = text[:i] + ch + text[i + 1:]
    never_raises(text)


# --------------------------------------------------------------------------- AST generators

names = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda s: s not in KEYWORDS)
type_names = st.from_regex(r"[A-Z][a-zA-Z0-9]{0,5}", fullmatch=True)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**12),
                    st.floats(allow_nan=False, allow_infinity=False, width=64), texts)

BIN_OPS = ["or", "and", "==", "!=", "<", "<=", ">", ">=", "in", "not in", "+", "-", "*", "/", "%"]


def exprs() -> st.SearchStrategy:
    leaves = st.one_of(st.builds(A.Literal, scalars), st.builds(A.Name, names))

    def extend(inner):
        return st.one_of(
            st.builds(A.Attr, inner, names),
            st.builds(A.Index, inner, inner),
            st.builds(A.Unary, st.sampled_from(["not", "-"]), inner),
            st.builds(A.Binary, st.sampled_from(BIN_OPS), inner, inner),
            st.builds(A.ListLit, st.lists(inner, max_size=3).map(tuple)),
            st.builds(A.RecordLit, st.lists(st.builds(A.FieldInit, names, inner), max_size=3).map(tuple)),
            st.builds(A.Where, inner, inner),
            st.builds(A.Call, st.sampled_from(sorted(BUILTINS)), st.lists(inner, max_size=3).map(tuple),
                      st.lists(st.builds(A.Arg, names, inner), max_size=2).map(tuple)),
        )

    return st.recursive(leaves, extend, max_leaves=8)


EXPR = exprs()


def types() -> st.SearchStrategy:
    enum_vals = st.one_of(texts, st.integers(-100, 100), st.floats(-1e6, 1e6, allow_nan=False), st.booleans(),
                          st.none())
    leaves = st.one_of(st.builds(A.PrimType, st.sampled_from(["str", "int", "float", "bool", "any"])),
                       st.builds(A.NamedType, type_names),
                       st.builds(A.EnumType, st.lists(enum_vals, min_size=1, max_size=4).map(tuple)))

    def extend(inner):
        non_opt = inner.filter(lambda t: not isinstance(t, A.OptionalType))
        return st.one_of(
            st.builds(A.ListType, inner),
            st.builds(A.OptionalType, non_opt),
            st.builds(A.RecordType, st.lists(st.builds(A.FieldDecl, names, inner), max_size=3).map(tuple)),
        )

    return st.recursive(leaves, extend, max_leaves=4)


TYPE = types()
fields = st.builds(A.FieldDecl, names, TYPE, st.none() | EXPR, st.just("") | texts)
targets = st.builds(A.Attr, st.builds(A.Name, names), names) | st.builds(A.Index, st.builds(A.Name, names), EXPR)


def stmts() -> st.SearchStrategy:
    simple = st.one_of(
        st.builds(A.Require, EXPR, texts),
        st.builds(A.Let, names, EXPR),
        st.builds(A.Set, targets, EXPR),
        st.builds(A.Insert, type_names, st.lists(st.builds(A.FieldInit, names, EXPR), max_size=3).map(tuple),
                  st.none() | names),
        st.builds(A.Delete, EXPR),
        st.builds(A.Append, targets, EXPR),
        st.builds(A.Remove, targets, EXPR),
        st.builds(A.Return, EXPR),
    )

    def extend(inner):
        block = st.lists(inner, max_size=3).map(tuple)
        return st.one_of(
            st.builds(A.For, names, EXPR, block),
            st.builds(A.If, EXPR, block, block),
        )

    return st.recursive(simple, extend, max_leaves=6)


STMT = stmts()
py_lines = st.lists(st.from_regex(r"( {2}){0,2}[a-z(][a-z0-9 =()+]{0,8}[a-z0-9)]", fullmatch=True), min_size=1,
                    max_size=4).map(lambda ls: "\n".join(["x = 1"] + ls))
tools = st.one_of(
    st.builds(A.ToolDecl, names, st.lists(st.builds(A.ParamDecl, names, TYPE, st.none() | EXPR, st.just("") | texts),
                                          max_size=3).map(tuple),
              TYPE, st.just("") | texts, st.lists(STMT, max_size=4).map(tuple), st.none(),
              st.lists(names, max_size=2).map(tuple)),
    st.builds(A.ToolDecl, names, st.just(()), TYPE, st.just("") | texts, st.none(), py_lines,
              st.lists(names, max_size=2).map(tuple)),
)
envs = st.builds(
    A.EnvDecl, names,
    st.none() | st.builds(A.StateDecl, st.lists(fields, max_size=2).map(tuple)),
    st.lists(st.builds(A.RecordDecl, type_names, st.lists(fields, max_size=3).map(tuple), st.just("") | texts),
             max_size=2).map(tuple),
    st.lists(st.builds(A.EntityDecl, type_names, names, st.lists(fields, max_size=3).map(tuple),
                       st.just("") | texts), max_size=2).map(tuple),
    st.lists(tools, max_size=3).map(tuple),
    st.just("") | texts,
)
nodes = st.one_of(
    st.builds(A.CallNode, names, names, st.lists(st.builds(A.Arg, names, EXPR), max_size=4).map(tuple)),
    st.builds(A.ReasonNode, names, names, st.lists(EXPR, max_size=2).map(tuple),
              st.lists(st.builds(A.Arg, names, EXPR), max_size=2).map(tuple)),
    st.builds(A.ExpectNode, EXPR),
    st.builds(A.TellNode, EXPR),
)
blueprints = st.builds(
    A.BlueprintDecl, names, names,
    st.builds(A.UserBlock, texts, st.just("") | texts, st.lists(st.builds(A.Fact, names, EXPR), max_size=2).map(tuple),
              st.just("") | texts, st.lists(texts, max_size=2).map(tuple),
              st.lists(st.builds(A.Intent, texts, st.just("") | texts), max_size=3).map(tuple)),
    st.lists(nodes, max_size=5).map(tuple),
)
modules = st.builds(A.Module, st.just("gen.forge"),
                    st.lists(st.one_of(st.builds(A.Import, texts), envs, blueprints), max_size=3).map(tuple))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(modules)
def test_formatter_is_lossless_and_idempotent_on_generated_asts(m: A.Module) -> None:
    text = L.format(m)
    back, diags = L.parse(text, "gen.forge")
    assert diags == [], (text, diags)
    assert back == m, text
    assert L.format(back) == text
    L.check([back])  # arbitrary (ill-typed) ASTs: diagnostics only


@FAST
@given(EXPR)
def test_expression_printing_round_trips(e) -> None:
    bp = A.BlueprintDecl("b", "e", A.UserBlock("g"), (A.TellNode(e),))
    text = L.format(A.Module("t", (bp,)))
    assert L.parse(text, "t")[0].blueprints[0].nodes[0].value == e, text


@FAST
@given(st.sampled_from(VALID), st.lists(st.tuples(st.floats(0, 1), st.booleans()), max_size=8))
def test_comments_survive_formatting_and_formatting_is_idempotent(text: str, spots) -> None:
    lines = text.split("\n")
    for k, (frac, trailing) in enumerate(spots):
        i = int(frac * (len(lines) - 1))
        inside = sum(ln.count('"""') for ln in lines[:i]) % 2 == 1
        if inside or (trailing and '"""' in lines[i]):
            continue  # inside a python body: `//` is python text there
        if trailing and lines[i].strip():
            lines[i] += f"  // t{k}"
        else:
            lines.insert(i, f"// o{k}")
    src = "\n".join(lines)
    out, diags = L.format_text(src, "c.forge")
    assert out is not None, diags
    assert L.format_text(out, "c.forge")[0] == out
    for c in L.parse(src, "c.forge")[0].comments:
        assert "//" + c.text in out
    assert L.parse(out, "c.forge")[0] == L.parse(src, "c.forge")[0]
