"""Parse .forge text into the AST of forgec/lang/ast.py, with error recovery.

lark builds the LALR(1) tables of grammar/forge.lark once per process (cached on
disk, `cache=True`) together with the rule callbacks around `ForgeBuilder`, the one
transformer that turns each rule into one AST node. `_Parser` then lexes with a single
regex derived from the grammar's terminals and runs the LR loop itself: nodes are built
during the parse (no lark tree ever exists), chain rules (`?expr: or_expr`) cost one
memoized state change, and error recovery has full control. A syntax error becomes a
diagnostic (position, expected tokens, hint); the parser drops tokens and resyncs on the
next statement/node/declaration keyword or `}` by popping the LR stack (panic mode), so one
typo does not hide the rest of the file. `parse` never raises.
"""

from __future__ import annotations

import gc
import json
import re
import textwrap
import threading
from functools import lru_cache, partial
from importlib import resources

from lark import Lark, Transformer
from lark.lexer import PatternStr
from lark.parse_tree_builder import ChildFilter

from forgec.diagnostics import INTERNAL, Diagnostic, Span, error
from forgec.lang import ast as A
from forgec.lang import codes as C

MAX_INT_LITERAL = 2**53 - 1  # the runtime's bound on numbers (runtime/envrt.py MAX_NUMBER): exact in every JSON reader
_SURROGATE = re.compile("[\ud800-\udfff]")  # in a Python str every surrogate is lone: UTF-8 cannot encode it

# Tokens the parser resynchronizes on after an error: they start a statement,
# a blueprint node, a declaration, or close a block.
SYNC = frozenset(
    "IMPORT ENV BLUEPRINT STATE RECORD ENTITY TOOL ANNOTATION REQUIRE LET SET INSERT DELETE APPEND "
    "REMOVE FOR IF RETURN USER GOAL PERSONA KNOWS CALL REASON EXPECT TELL RBRACE".split()
)

PUNCT = {
    "LBRACE": "{", "RBRACE": "}", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]", "COMMA": ",",
    "COLON": ":", "DOT": ".", "QMARK": "?", "ARROW": "->", "ASSIGN": "=", "EQ": "==", "NE": "!=",
    "LE": "<=", "GE": ">=", "LT": "<", "GT": ">", "PLUS": "+", "MINUS": "-", "STAR": "*",
    "SLASH": "/", "PERCENT": "%", "$END": "end of file",
}
KINDS = {
    "NAME": "a name", "STRING": "a string", "INT": "a number", "FLOAT": "a number",
    "TRIPLE_STRING": 'a """python body"""', "ANNOTATION": "an @annotation",
}


def describe_terminal(t: str) -> str:
    """How a terminal is shown in 'expected ...' lists."""
    if t in PUNCT:
        return PUNCT[t] if t == "$END" else f"'{PUNCT[t]}'"
    if t in KINDS:
        return KINDS[t]
    return f"'{t.lower()}'"


def grammar_text() -> str:
    return resources.files("forgec.grammar").joinpath("forge.lark").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- AST builder


class Token:
    """A lexed token: type (a terminal name of grammar/forge.lark), text and 1-based positions."""

    __slots__ = ("type", "value", "line", "column", "end_line", "end_column", "start_pos", "end_pos")

    def __init__(self, type, value, line, column, end_line, end_column, start_pos, end_pos):
        self.type, self.value, self.line, self.column = type, value, line, column
        self.end_line, self.end_column, self.start_pos, self.end_pos = end_line, end_column, start_pos, end_pos

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Token({self.type}, {self.value!r}, {self.line}:{self.column})"

    def retyped(self, type: str, value: str | None = None) -> "Token":
        return Token(type, self.value if value is None else value, self.line, self.column, self.end_line,
                     self.end_column, self.start_pos, self.end_pos)


class _Block(tuple):
    """Statements of a `{ ... }` block plus the block's span (for spans of if/for/tool)."""

    span: Span


class ForgeBuilder(Transformer):
    """Rule callbacks: lark children (tokens, built nodes) -> one AST node each.

    The parser passes every named terminal, so spans start at the keyword and end at
    the closing brace. `self.file`/`self.text`/`self.diags` are set per parse.
    """

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.file = "<input>"
        self.text = ""
        self.diags: list[Diagnostic] = []
        self.comments: list[A.Comment] = []

    # ---- spans

    def sp(self, first, last) -> Span:
        if isinstance(first, Token):
            l1, c1 = first.line, first.column
        else:
            s = first.span
            l1, c1 = s.line, s.col
        if isinstance(last, Token):
            l2, c2 = last.end_line, last.end_column
        else:
            s = last.span
            l2, c2 = s.end_line, s.end_col
        return Span(self.file, l1, c1, l2, c2)

    def tsp(self, tok: Token) -> Span:
        return Span(self.file, tok.line, tok.column, tok.end_line, tok.end_column)

    def string(self, c):  # STRING literal as an expression
        tok = c[0]
        return A.Literal(self.unquote(tok), self.tsp(tok))

    def unquote(self, tok: Token | None) -> str:
        if tok is None:
            return ""
        s = str(tok)
        if "\\" not in s:
            return s[1:-1]
        try:
            v = json.loads(s, strict=False)
        except ValueError as e:
            self.diags.append(error(C.BAD_STRING, f"invalid escape in string literal ({e.msg})", self.tsp(tok),
                                    help='strings use JSON escapes: \\n \\t \\" \\\\ \\uXXXX'))
            return s[1:-1]
        m = None if v.isascii() else _SURROGATE.search(v)
        if m is not None:  # "\\udfff" is a legal JSON escape, but no UTF-8 file, state hash or tokenizer can hold it
            self.diags.append(error(C.BAD_STRING, f"string literal is not valid Unicode text: lone surrogate \\u{ord(m.group()):04x}",
                                    self.tsp(tok), help="write the character itself; a character above U+FFFF may also be "
                                                        "written as a surrogate pair such as \\ud83d\\ude00"))
            return _SURROGATE.sub("\ufffd", v)
        return v

    def number(self, tok: Token) -> int | float:
        """The value of an INT/FLOAT token; out of range (what the runtime and JSON cannot carry) is a diagnostic."""
        if tok.type == "INT":
            digits = tok.value.lstrip("0")
            if len(digits) <= 16 and int(digits or "0") <= MAX_INT_LITERAL:
                return int(digits or "0")
            shown = tok.value if len(tok.value) <= 24 else f"{tok.value[:12]}...({len(tok.value)} digits)"
            self.diags.append(error(C.LITERAL_RANGE, f"integer literal {shown} is out of range", self.tsp(tok),
                                    help=f"integers must be between -{MAX_INT_LITERAL} and {MAX_INT_LITERAL} (exact in JSON)"))
            return 0
        v = float(tok.value)
        if v == float("inf"):
            shown = tok.value if len(tok.value) <= 24 else tok.value[:12] + "..."
            self.diags.append(error(C.LITERAL_RANGE, f"number literal {shown} is out of range (it is not a finite number)",
                                    self.tsp(tok), help="numbers must be finite (below about 1.8e308)"))
            return 0.0
        return v

    # ---- module

    def start(self, c):
        return [x for x in c if x is not None]

    def import_decl(self, c):
        return A.Import(self.unquote(c[1]), self.sp(c[0], c[1]))

    # ---- environments

    def env_decl(self, c):
        # ENV NAME [STRING] LBRACE member* RBRACE
        state = None
        records, entities, tools = [], [], []
        for m in c[4:-1]:
            if isinstance(m, A.StateDecl):
                if state is not None:
                    self.diags.append(error(C.DUPLICATE, "an env has at most one `state` block", m.span,
                                            help="merge the fields into the first `state { ... }`"))
                    m = A.StateDecl(state.fields + m.fields, state.span)
                state = m
            elif isinstance(m, A.RecordDecl):
                records.append(m)
            elif isinstance(m, A.EntityDecl):
                entities.append(m)
            elif isinstance(m, A.ToolDecl):
                tools.append(m)
        return A.EnvDecl(str(c[1]), state, tuple(records), tuple(entities), tuple(tools),
                         self.unquote(c[2]), self.sp(c[0], c[-1]))

    def state_decl(self, c):
        return A.StateDecl(tuple(x for x in c if isinstance(x, A.FieldDecl)), self.sp(c[0], c[-1]))

    def record_decl(self, c):
        return A.RecordDecl(str(c[1]), tuple(x for x in c[3:] if isinstance(x, A.FieldDecl)),
                            self.unquote(c[2]), self.sp(c[0], c[-1]))

    def entity_decl(self, c):
        return A.EntityDecl(str(c[1]), str(c[3]), tuple(x for x in c[5:] if isinstance(x, A.FieldDecl)),
                            self.unquote(c[4]), self.sp(c[0], c[-1]))

    def field_decl(self, c):
        # NAME COLON type [ASSIGN expr] [STRING]
        last = c[5] or c[4] or c[2]
        return A.FieldDecl(str(c[0]), c[2], c[4], self.unquote(c[5]), self.sp(c[0], last))

    def param(self, c):
        last = c[5] or c[4] or c[2]
        return A.ParamDecl(str(c[0]), c[2], c[4], self.unquote(c[5]), self.sp(c[0], last))

    def tool_decl(self, c):
        # ANNOTATION* TOOL NAME LPAR params? RPAR ARROW type [STRING] body
        i = 0
        anns = []
        while isinstance(c[i], Token) and c[i].type == "ANNOTATION":
            anns.append(str(c[i])[1:])
            i += 1
        tool_tok, name = c[i], c[i + 1]
        params = tuple(x for x in c[i + 3:] if isinstance(x, A.ParamDecl))
        body_part = c[-1]
        doc_tok, ret = c[-2], c[-3]
        body = python = None
        if isinstance(body_part, _Block):
            body = tuple(body_part)
        else:
            python = body_part[0]
        first = c[0]
        return A.ToolDecl(str(name), params, ret, self.unquote(doc_tok), body, python, tuple(anns),
                          self.sp(first, body_part[1] if not isinstance(body_part, _Block) else body_part))

    def python_body(self, c):
        raw = str(c[1])[3:-3]
        return (dedent_python(raw), c[1])

    # ---- types

    def named_type(self, c):
        tok = c[0]
        name = str(tok)
        if name in ("str", "int", "float", "bool", "any"):
            return A.PrimType(name, self.tsp(tok))
        return A.NamedType(name, self.tsp(tok))

    def optional_type(self, c):
        return A.OptionalType(c[0], self.sp(c[0], c[1]))

    def list_type(self, c):
        return A.ListType(c[2], self.sp(c[0], c[3]))

    def record_type(self, c):
        return A.RecordType(tuple(x for x in c if isinstance(x, A.FieldDecl)), self.sp(c[0], c[-1]))

    def enum_type(self, c):
        return A.EnumType(tuple(x for x in c if not isinstance(x, Token)), self.sp(c[0], c[-1]))

    def enum_value(self, c):
        tok = c[-1]
        t = tok.type
        if t == "STRING":
            return self.unquote(tok)
        if t == "TRUE":
            return True
        if t == "FALSE":
            return False
        if t == "NULL":
            return None
        v = self.number(tok)
        return -v if len(c) == 2 else v

    # ---- statements

    def block(self, c):
        b = _Block(c[1:-1])
        b.span = self.sp(c[0], c[-1])
        return b

    def require_stmt(self, c):
        return A.Require(c[1], self.unquote(c[3]), self.sp(c[0], c[3]))

    def let_stmt(self, c):
        return A.Let(str(c[1]), c[3], self.sp(c[0], c[3]))

    def let_insert(self, c):
        # LET NAME ASSIGN INSERT NAME LBRACE inits RBRACE
        inits = tuple(x for x in c[6:-1] if isinstance(x, A.FieldInit))
        return A.Insert(str(c[4]), inits, str(c[1]), self.sp(c[0], c[-1]))

    def set_stmt(self, c):
        return A.Set(c[1], c[3], self.sp(c[0], c[3]))

    def insert_stmt(self, c):
        inits = tuple(x for x in c[3:-1] if isinstance(x, A.FieldInit))
        return A.Insert(str(c[1]), inits, None, self.sp(c[0], c[-1]))

    def delete_stmt(self, c):
        return A.Delete(c[1], self.sp(c[0], c[1]))

    def append_stmt(self, c):
        return A.Append(c[3], c[1], self.sp(c[0], c[3]))

    def remove_stmt(self, c):
        return A.Remove(c[3], c[1], self.sp(c[0], c[3]))

    def for_stmt(self, c):
        return A.For(str(c[1]), c[3], tuple(c[4]), self.sp(c[0], c[4]))

    def if_stmt(self, c):
        # IF expr block [ELSE else]
        orelse = c[4] if len(c) > 4 else None
        if orelse is None:
            return A.If(c[1], tuple(c[2]), (), self.sp(c[0], c[2]))
        tail = tuple(orelse) if isinstance(orelse, _Block) else (orelse,)
        return A.If(c[1], tuple(c[2]), tail, self.sp(c[0], orelse))

    def return_stmt(self, c):
        return A.Return(c[1], self.sp(c[0], c[1]))

    # ---- expressions

    def where(self, c):
        return A.Where(c[0], c[2], self.sp(c[0], c[2]))

    def binary(self, c):
        return A.Binary(str(c[1]), c[0], c[2], self.sp(c[0], c[2]))

    def not_in(self, c):
        return A.Binary("not in", c[0], c[3], self.sp(c[0], c[3]))

    def unary(self, c):
        op, operand = c
        if op.type == "MINUS" and isinstance(operand, A.Literal) and type(operand.value) in (int, float):
            # `-1` is the literal -1 (so synthesized negative defaults round-trip); `-(1)` stays Unary.
            nxt = self.text[op.end_pos:op.end_pos + 64].lstrip()[:1]
            if nxt.isdigit():
                return A.Literal(-operand.value, self.sp(op, operand))
        return A.Unary(str(op), operand, self.sp(op, operand))

    def attr(self, c):
        return A.Attr(c[0], str(c[2]), self.sp(c[0], c[2]))

    def index(self, c):
        return A.Index(c[0], c[2], self.sp(c[0], c[3]))

    def name(self, c):
        tok = c[0]
        return A.Name(str(tok), Span(self.file, tok.line, tok.column, tok.end_line, tok.end_column))

    def int(self, c):
        tok = c[0]
        return A.Literal(self.number(tok), self.tsp(tok))

    def float(self, c):
        tok = c[0]
        return A.Literal(self.number(tok), self.tsp(tok))

    def const(self, c):
        tok = c[0]
        v = {"TRUE": True, "FALSE": False, "NULL": None}[tok.type]
        return A.Literal(v, self.tsp(tok))

    def paren(self, c):
        return c[1]

    def list_lit(self, c):
        return A.ListLit(tuple(x for x in c[1:-1] if x is not None and not isinstance(x, Token)), self.sp(c[0], c[-1]))

    def record_lit(self, c):
        return A.RecordLit(tuple(x for x in c if isinstance(x, A.FieldInit)), self.sp(c[0], c[-1]))

    def field_init(self, c):
        return A.FieldInit(str(c[0]), c[2], self.sp(c[0], c[2]))

    def kwarg(self, c):
        return A.Arg(str(c[0]), c[2], self.sp(c[0], c[2]))

    def _split_args(self, items):
        args, kwargs = [], []
        for x in items:
            if x is None or isinstance(x, Token):
                continue
            (kwargs if isinstance(x, A.Arg) else args).append(x)
        return tuple(args), tuple(kwargs)

    def call(self, c):
        args, kwargs = self._split_args(c[2:-1])
        return A.Call(str(c[0]), args, kwargs, self.sp(c[0], c[-1]))

    # ---- blueprints

    def blueprint_decl(self, c):
        # BLUEPRINT NAME FOR NAME LBRACE member* RBRACE
        span = self.sp(c[0], c[-1])
        users = [m for m in c[5:-1] if isinstance(m, A.UserBlock)]
        nodes = tuple(m for m in c[5:-1] if not isinstance(m, (A.UserBlock, Token)) and m is not None)
        if not users:
            self.diags.append(error(C.USER_BLOCK, f"blueprint '{c[1]}' has no `user {{ goal \"...\" }}` block",
                                    self.tsp(c[1]), help='add `user { goal "what the user wants" }`'))
            user = A.UserBlock("", span=self.tsp(c[1]))
        else:
            user = users[0]
            for extra in users[1:]:
                self.diags.append(error(C.USER_BLOCK, "a blueprint has exactly one user block", extra.span,
                                        help="merge the facts into the first user block"))
        return A.BlueprintDecl(str(c[1]), str(c[3]), user, nodes, span)

    def user_block(self, c):
        goal, persona, reason, facts, unknown, intents = None, None, None, [], [], []
        span = self.sp(c[0], c[-1])
        for item in c[2:-1]:
            kind, val, sp = item
            if kind == "goal":
                if goal is not None:
                    self.diags.append(error(C.USER_BLOCK, "the user block has more than one goal", sp))
                goal = val
            elif kind in ("persona", "reason"):
                if (persona if kind == "persona" else reason) is not None:
                    self.diags.append(error(C.USER_CLAUSE, f"the user block has more than one {kind}", sp,
                                            help=f"say it in one `{kind} \"...\"` line"))
                if kind == "persona":
                    persona = val
                else:
                    reason = val
            elif kind == "unknown":
                unknown.append(A.Said(val, sp))
            elif kind == "intent":
                intents.append(val)
            else:
                facts.append(val)
        if goal is None:
            self.diags.append(error(C.USER_BLOCK, "the user block has no goal", span,
                                    help='add `goal "what the user wants"`'))
            goal = ""
        return A.UserBlock(goal, persona or "", tuple(facts), reason or "", tuple(unknown), tuple(intents), span)

    def goal(self, c):
        return ("goal", self.unquote(c[1]), self.sp(c[0], c[1]))

    def persona(self, c):
        return ("persona", self.unquote(c[1]), self.sp(c[0], c[1]))

    def fact(self, c):
        return ("fact", A.Fact(str(c[1]), c[3], self.sp(c[0], c[3])), None)

    def user_reason(self, c):
        sp = self.sp(c[0], c[1])
        return ("reason", A.Said(self.unquote(c[1]), sp), sp)

    def user_unknown(self, c):
        return ("unknown", self.unquote(c[1]), self.sp(c[0], c[1]))

    def user_intent(self, c):
        cond = "" if c[3] is None else self.unquote(c[3])
        last = c[3] if c[3] is not None else c[1]
        # (`if ""` is no condition: the AST cannot tell them apart, and the formatter drops it)
        return ("intent", A.Intent(self.unquote(c[1]), cond, self.sp(c[0], last)), None)

    def call_node(self, c):
        args, kwargs = self._split_args(c[5:-1])
        for a in args:
            self.diags.append(error(C.POSITIONAL, f"argument to tool '{c[3]}' must be named (`param: value`)", a.span,
                                    help="write `name: value`; see the tool's parameter list"))
        return A.CallNode(str(c[1]), str(c[3]), kwargs, self.sp(c[0], c[-1]))

    def reason_node(self, c):
        args, kwargs = self._split_args(c[5:-1])
        return A.ReasonNode(str(c[1]), str(c[3]), args, kwargs, self.sp(c[0], c[-1]))

    def expect_node(self, c):
        return A.ExpectNode(c[1], self.sp(c[0], c[1]))

    def tell_node(self, c):
        return A.TellNode(c[1], self.sp(c[0], c[1]))


def dedent_python(raw: str) -> str:
    """The canonical python body: drop the line break after the opening quotes and the
    whitespace-only closing line, dedent, strip trailing blank lines."""
    if raw.startswith("\r\n"):
        raw = raw[2:]
    elif raw.startswith("\n"):
        raw = raw[1:]
    lines = raw.split("\n")
    if lines and not lines[-1].strip():
        lines.pop()
    body = textwrap.dedent("\n".join(lines))
    return body.rstrip()


# --------------------------------------------------------------------------- driver


_SPECIAL = frozenset({"EOF", "COMMENT", "BAD", "TRIPLE_STRING"})


class _Spliced:
    """Children of an inlined rule (`_fields`, lark's `__x_star_N` helpers), spliced into the
    parent by lark's child filter; a lighter stand-in for the lark Tree it would build."""

    __slots__ = ("children",)

    def __init__(self, children):
        self.children = children


def _lean(cb, size: int):
    """Drop lark's per-reduction wrappers where they do nothing: a child filter that keeps
    every child in order becomes a direct call of the builder method; lark's default
    callback (a Tree for an inlined rule) becomes `_Spliced`."""
    def is_default(f):
        return isinstance(f, partial) and getattr(f.func, "__name__", "") == "default_callback"

    if is_default(cb):
        return _Spliced
    if isinstance(cb, ChildFilter):
        nb = _Spliced if is_default(cb.node_builder) else cb.node_builder
        inc = cb.to_include
        identity = not getattr(cb, "append_none", 0) and len(inc) == size and all(
            t[0] == i and not t[1] and not (len(t) > 2 and t[2]) for i, t in enumerate(inc))
        if identity:
            return nb
        cb.node_builder = nb
    return cb


# The lark versions whose internals this driver was tested with (pyproject pins the same range).
LARK_TESTED = ((1, 3), (1, 4))  # >= 1.3, < 1.4


def lark_internals(lk: Lark):
    """lark's LALR `_Parser` (parse table + rule callbacks), or a clear error if lark changed it.

    The driver reads lark internals that are not public API: `Lark.parser.parser.parser`
    (`parse_table.states/start_states/end_states`, `callbacks`), the `Shift` action's
    name, rule `expansion/origin/alias/options.expand1`, and `ChildFilter.to_include/
    node_builder`. pyproject pins lark to the tested range; tests/test_cli_errors.py
    checks this contract so an upgrade fails with this message, not a wrong parse.
    """
    import lark

    try:
        lp = lk.parser.parser.parser
        pt = lp.parse_table
        states, starts, ends, cbs = pt.states, pt.start_states, pt.end_states, lp.callbacks
        rule = next(iter(cbs))
        _ = (rule.expansion, rule.origin.name, rule.alias, rule.options.expand1)
        kinds = {a.name for acts in states.values() for a, _ in acts.values()}
        filters = [cb for cb in cbs.values() if isinstance(cb, ChildFilter)]
        _ = [(f.to_include, f.node_builder) for f in filters[:1]]
        if not ({"Shift", "Reduce"} <= kinds and "start" in starts and "start" in ends and filters):
            raise AttributeError(f"parse table actions {sorted(kinds)}, start states {sorted(starts)}")
    except (AttributeError, StopIteration, TypeError, ValueError) as e:
        lo, hi = LARK_TESTED
        raise RuntimeError(f"forgec's parser needs lark's LALR internals as in lark {lo[0]}.{lo[1]}.x, but the installed "
                           f"lark {lark.__version__} differs ({type(e).__name__}: {e}); install a tested lark: "
                           f"pip install 'lark>={lo[0]}.{lo[1]},<{hi[0]}.{hi[1]}'") from None
    return lp


class _SyntaxErr(Exception):
    def __init__(self, expected):
        self.expected = expected


class _Parser:
    """The shared LALR parser: lark builds the tables (and the rule callbacks around
    ForgeBuilder) from grammar/forge.lark once; this class lexes with one regex derived
    from the grammar's terminals and runs the LR loop itself, which makes chain rules
    (`?expr: or_expr`) free and gives full control over error recovery.
    Keywords are contextual: a NAME whose text is a keyword becomes the keyword only
    where the current state accepts it (or accepts no NAME)."""

    def __init__(self) -> None:
        self.builder = ForgeBuilder()
        self.lark = Lark(grammar_text(), parser="lalr", lexer="contextual", maybe_placeholders=True,
                         transformer=self.builder, cache=True)
        self._build_lexer()
        self._build_table()
        self.lock = threading.Lock()

    def _build_lexer(self) -> None:
        terms = self.lark.terminals
        self.keywords: dict[str, str] = {}
        regexes, puncts = [], []
        for t in terms:
            if isinstance(t.pattern, PatternStr):
                if t.pattern.value.isalpha():
                    self.keywords[t.pattern.value] = t.name
                else:
                    puncts.append(t)
            else:
                regexes.append(t)
        ws = next(t for t in regexes if t.name == "WS")
        regexes = sorted((t for t in regexes if t is not ws), key=lambda t: (-t.priority, t.name != "COMMENT"))
        puncts.sort(key=lambda t: -len(t.pattern.value))
        alts = [f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in regexes + puncts]
        alts += [r"(?P<BAD>[\s\S])", r"(?P<EOF>\Z)"]
        # one match = optional whitespace + one token (or the end of the text)
        self.lex_re = re.compile(f"(?:{ws.pattern.to_regexp()})?(?:{'|'.join(alts)})")

    def _build_table(self) -> None:
        lp = lark_internals(self.lark)  # lark's _Parser: parse_table + callbacks (with our builder)
        pt = lp.parse_table
        self.start_state = pt.start_states["start"]
        self.end_state = pt.end_states["start"]
        table: dict = {}
        for state, acts in pt.states.items():
            row = {}
            for sym, (action, arg) in acts.items():
                if action.name == "Shift":
                    row[sym] = (True, arg)
                else:
                    rule = arg
                    exp = rule.expansion
                    passthru = (rule.options.expand1 and not rule.alias and len(exp) == 1
                                and not exp[0].name.startswith("_"))
                    row[sym] = (False, (len(exp), _lean(lp.callbacks[rule], len(exp)), rule.origin.name, passthru))
            table[state] = row
        self.table = table
        self.chain_memo: dict = {}

    def _chain(self, below, top, typ):
        """The top state after every pass-through reduction `top` does on lookahead `typ`."""
        table = self.table
        while True:
            a = table[top].get(typ)
            if a is None or a[0] or not a[1][3]:
                return top
            top = table[below][a[1][2]][1]

    # ---- public

    def parse(self, text: str, filename: str) -> tuple[A.Module, list[Diagnostic]]:
        b = self.builder
        with self.lock:
            b.file, b.text, b.diags, b.comments = filename, text, [], []
            # the AST is acyclic: the cyclic GC would only rescan live trees while we allocate
            gc_was_on = gc.isenabled()
            gc.disable()
            try:
                items = self._run(text)
            except Exception as e:  # noqa: BLE001 - a parser bug must stay a diagnostic
                b.diags.append(error(INTERNAL, f"parser failed: {type(e).__name__}: {e}", Span(filename)))
                items = []
            finally:
                if gc_was_on:
                    gc.enable()
            diags, comments = b.diags, b.comments
            b.diags, b.comments, b.text = [], [], ""
        syntax_lines = {d.span.line for d in diags if d.code == C.SYNTAX}
        if syntax_lines:  # builder diagnostics on a line the parser repaired are cascades
            diags = [d for d in diags if d.code == C.SYNTAX or d.span is None or d.span.line not in syntax_lines]
        lines = text.count("\n") + 1
        items = tuple(i for i in (items or ()) if isinstance(i, (A.Import, A.EnvDecl, A.BlueprintDecl)))
        return A.Module(filename, items, tuple(comments), Span(filename, 1, 1, lines, 1)), diags

    # ---- the LR loop

    def _feed(self, ss: list, vs: list, tok: Token):
        """Feed one token to the stacks (in place); returns the parse result on $END."""
        table = self.table
        memo = self.chain_memo
        typ = tok.type
        while True:
            acts = table[ss[-1]]
            a = acts.get(typ)
            if a is None:
                raise _SyntaxErr(acts)
            if a[0]:
                ss.append(a[1])
                vs.append(tok)
                return None
            size, cb, origin, passthru = a[1]
            if passthru:  # `?rule: child`: only the state changes; chains are memoized
                key = (ss[-2], ss[-1], typ)
                top = memo.get(key)
                if top is None:
                    top = memo[key] = self._chain(ss[-2], ss[-1], typ)
                ss[-1] = top
                continue
            if size:
                kids = vs[-size:]
                del ss[-size:]
                del vs[-size:]
            else:
                kids = []
            ss.append(table[ss[-1]][origin][1])
            vs.append(cb(kids))
            if typ == "$END" and ss[-1] == self.end_state:
                return vs[-1]

    def _run(self, text: str):
        b = self.builder
        ss: list = [self.start_state]
        vs: list = []
        self.ss, self.vs = ss, vs
        self.quiet = 0  # tokens shifted since the last error; < 3 suppresses cascades
        self.in_error = in_error = False
        self.skip_depth = 0  # `{` dropped while recovering
        keywords = self.keywords
        table = self.table
        match = self.lex_re.match
        special = _SPECIAL
        pos, line, line_start = 0, 1, 0
        last = None
        while True:
            m = match(text, pos)
            kind = m.lastgroup
            start = m.start(kind)
            if start != pos:  # leading whitespace
                nl = text.count("\n", pos, start)
                if nl:
                    line += nl
                    line_start = text.rfind("\n", pos, start) + 1
                pos = start
            end = m.end()
            col = pos - line_start + 1
            nl = 0
            if kind in special:
                if kind == "EOF":
                    break
                if kind == "COMMENT":
                    trailing = bool(text[line_start:pos].strip())
                    b.comments.append(A.Comment(text[pos + 2:end], line, trailing))
                    pos = end
                    continue
                if kind == "BAD":
                    pos = self._bad_char(text, pos, line, col)
                    in_error = self.in_error
                    continue
                nl = text.count("\n", pos, end)  # TRIPLE_STRING
            value = text[pos:end]
            if nl:
                end_line = line + nl
                end_col = end - (text.rfind("\n", pos, end) + 1) + 1
            else:
                end_line, end_col = line, col + (end - pos)
            if kind == "NAME":
                kt = keywords.get(value)
                if kt is not None:
                    acts = table[ss[-1]]
                    if kt in acts or "NAME" not in acts:
                        kind = kt
                    elif in_error and kt in SYNC and not text[line_start:pos].strip():
                        kind = kt  # recovering: a statement keyword first on its line starts a statement
            tok = Token(kind, value, line, col, end_line, end_col, pos, end)
            last = tok
            a = table[ss[-1]].get(kind)
            if a is not None and a[0]:  # fast path: a plain shift
                ss.append(a[1])
                vs.append(tok)
                ok = True
            else:
                try:
                    self._feed(ss, vs, tok)
                    ok = True
                except _SyntaxErr as e:
                    self._recover(tok, e.expected)
                    ok = False
            if in_error or self.in_error:
                if ok:
                    self.quiet += 1
                    if self.quiet >= 3:
                        self.in_error = False
                in_error = self.in_error
            if nl:
                line = end_line
                line_start = text.rfind("\n", pos, end) + 1
            pos = end
        return self._finish(last, line, pos - line_start + 1, pos)

    def _report(self, tok: Token, expected) -> None:
        b = self.builder
        exp = sorted({describe_terminal(t) for t in expected if t.isupper() and t != "$END"} |
                     ({"end of file"} if "$END" in expected else set()))
        shown = ", ".join(exp[:8]) + (", ..." if len(exp) > 8 else "")
        if tok.type == "$END":
            what = "unexpected end of file"
        else:
            what = f"unexpected {KINDS[tok.type].split(' ', 1)[1] if tok.type in KINDS else repr(str(tok))}"
        b.diags.append(error(C.SYNTAX, f"{what}; expected {shown or 'nothing more'}",
                             Span(b.file, tok.line, tok.column, tok.end_line, tok.end_column),
                             help=_hint(tok, set(expected))))

    def _recover(self, tok: Token, expected) -> None:
        if not self.in_error:
            self._report(tok, expected)
            self.skip_depth = 0
        self.in_error = True
        self.quiet = 0
        if tok.type == "LBRACE":
            self.skip_depth += 1  # its `}` is dropped too, not used to close an outer block
        elif tok.type == "RBRACE" and self.skip_depth:
            self.skip_depth -= 1
        elif tok.type in SYNC:
            self._sync(tok)  # else: drop the token

    def _try(self, tok: Token) -> bool:
        """Feed `tok` to a copy of the stacks; commit only if it is accepted."""
        ss, vs = list(self.ss), list(self.vs)
        try:
            self._feed(ss, vs, tok)
        except _SyntaxErr:
            return False
        self.ss[:] = ss
        self.vs[:] = vs
        return True

    def _sync(self, tok: Token) -> bool:
        """Pop LR states until one can take `tok` (a statement/item start or `}`), then feed it.
        When no state on the stack takes it, the token is dropped and the stack kept."""
        table = self.table
        for depth in range(len(self.ss), 0, -1):
            if tok.type in table[self.ss[depth - 1]]:
                ss, vs = self.ss[:depth], self.vs[:depth - 1]
                try:
                    self._feed(ss, vs, tok)
                except _SyntaxErr:
                    continue
                self.ss[:] = ss
                self.vs[:] = vs
                return True
        return False

    def _finish(self, last: Token | None, line: int, col: int, pos: int):
        end = Token("$END", "", line, col, line, col, pos, pos)
        reported = False
        ss, vs = self.ss, self.vs
        tried: set = set()  # (depth, state) where a closer was inserted: never twice (no loops)
        for _ in range(10_000):
            try:
                return self._feed(ss, vs, end)
            except _SyntaxErr as e:
                if not reported and not self.in_error:
                    self._report(end, e.expected)
                reported = True
                acts = self.table[ss[-1]]
                closer = next((t for t in ("RBRACE", "RPAR", "RSQB") if t in acts), None)
                here = (len(ss), ss[-1])
                if closer is not None and here not in tried:
                    tried.add(here)
                    if self._try(end.retyped(closer, PUNCT[closer])):
                        continue
                if len(ss) <= 1:
                    return []
                ss.pop()
                vs.pop()
        return []

    def _bad_char(self, text: str, pos: int, line: int, col: int) -> int:
        """Report a character no token starts with; returns where lexing resumes."""
        b = self.builder
        ch = text[pos]
        end = pos + 1
        if ch == '"':  # an unterminated string: drop the rest of its line
            eol = text.find("\n", pos)
            end = eol if eol >= 0 else len(text)
        if self.in_error:
            return end
        self.in_error = True
        self.quiet = 0
        span = Span(b.file, line, col, line, col + 1)
        if ch == '"':
            b.diags.append(error(C.UNTERMINATED_STRING, "string literal is not closed on this line", span,
                                 help='close it with `"`; write line breaks as \\n'))
        else:
            hint = {"&": "use `and`", "|": "use `or`", "!": "use `not` (or `!=`)", "'": 'strings use double quotes "..."',
                    ";": "statements need no `;`", "#": "comments start with //"}.get(ch, "")
            b.diags.append(error(C.UNEXPECTED_CHAR, f"unexpected character {ch!r}", span, help=hint))
        return end


def _hint(tok: Token, expected: set[str]) -> str:
    if tok.type == "$END" and "RBRACE" in expected:
        return "a `}` is missing"
    if tok.type == "$END" and "RPAR" in expected:
        return "a `)` is missing"
    if "COMMA" in expected and tok.type in ("NAME", "STRING", "INT", "FLOAT"):
        return "a `,` may be missing before this"
    if tok.type == "ASSIGN" and "RPAR" in expected:
        return "arguments are written `name: value`"
    if tok.type == "NAME" and expected == {"COLON"}:
        return "declare as `name: type`"
    if tok.type == "ASSIGN" and "EQ" in expected:
        return "compare with `==`; `=` only assigns in `let`/`set`"
    if tok.type == "COLON" and "ASSIGN" in expected:
        return "facts and lets use `=`, arguments use `:`"
    if tok.type == "STRING" and "ELSE" in expected:
        return 'write `require COND else "message"`'
    if tok.type == "LPAR" and "NAME" not in expected:
        return "only builtins can be called in expressions"
    if "ARROW" in expected:
        return "a tool needs a return type: `-> Type`"
    if tok.type in SYNC and tok.type != "RBRACE":
        return "the previous statement is incomplete"
    return "see docs/language.md for the grammar"


@lru_cache(maxsize=1)
def _shared() -> _Parser:
    return _Parser()


def parse(text: str, filename: str = "<input>") -> tuple[A.Module, list[Diagnostic]]:
    """Parse .forge `text`; never raises. Returns the module (partial on errors) and diagnostics."""
    p = _shared()
    if not isinstance(text, str):
        text = str(text)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    m = None if text.isascii() else _SURROGATE.search(text)
    if m is None:
        return p.parse(text, filename)
    # text that came in as str with a lone surrogate (stdin's surrogateescape, an API caller): report, then parse
    # it with U+FFFD so nothing downstream (AST, generated code, state) holds an unencodable character
    line = text.count("\n", 0, m.start()) + 1
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    bad = error(C.UNEXPECTED_CHAR, f"lone surrogate \\u{ord(m.group()):04x} is not valid Unicode text", Span(filename, line, col, line, col + 1),
                help="save the file as UTF-8")
    mod, diags = p.parse(_SURROGATE.sub("\ufffd", text), filename)
    return mod, [bad, *diags]


__all__ = ["parse", "grammar_text", "dedent_python", "ForgeBuilder", "Token"]
