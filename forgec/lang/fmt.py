"""The canonical .forge formatter: AST (+ comments) -> text.

Lossless (`parse(format(m)) == m`, spans aside) and idempotent. Works on ASTs built
in code (no spans, no comments), which is how the synthesizer and the sampler
write .forge files. Layout rules: two-space indent, one declaration/statement/node
per line, one blank line between top-level items and between env members, argument
and parameter lists that do not fit in 100 columns wrap one per line with a
trailing comma. Comments come back by source line: an own-line comment is printed
before the first construct that started after it; a trailing comment goes to the
end of the printed line of the last construct that started on or before its line.
"""

from __future__ import annotations

import bisect
import json
import math
from dataclasses import dataclass

from forgec.diagnostics import Diagnostic
from forgec.lang import ast as A
from forgec.diagnostics import has_errors
from forgec.lang.parse import parse

WIDTH = 100
IND = "  "

# precedence levels, loosest first (mirrors grammar/forge.lark)
P_WHERE, P_OR, P_AND, P_NOT, P_CMP, P_ADD, P_MUL, P_NEG, P_POST, P_ATOM = range(1, 11)
BIN_PREC = {"or": P_OR, "and": P_AND, "+": P_ADD, "-": P_ADD, "*": P_MUL, "/": P_MUL, "%": P_MUL}
for _op in ("==", "!=", "<", "<=", ">", ">=", "in", "not in"):
    BIN_PREC[_op] = P_CMP


# --------------------------------------------------------------------------- literals and types


def quote(s: str) -> str:
    """A string literal (JSON escapes; the parser reads it back with json.loads)."""
    return json.dumps(s, ensure_ascii=False)


def scalar(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return "null"  # not representable; JSON has no NaN either
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(scalar(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {scalar(x)}" for k, x in v.items()) + "}"
    return quote(str(v))


def type_str(t) -> str:
    if isinstance(t, A.PrimType):
        return t.name
    if isinstance(t, A.NamedType):
        return t.name
    if isinstance(t, A.EnumType):
        return "enum(" + ", ".join(scalar(v) for v in t.values) + ")"
    if isinstance(t, A.ListType):
        return f"list[{type_str(t.item)}]"
    if isinstance(t, A.OptionalType):
        inner = t.inner.inner if isinstance(t.inner, A.OptionalType) else t.inner
        return type_str(inner) + "?"
    if isinstance(t, A.RecordType):
        return "{" + ", ".join(field_str(f) for f in t.fields) + "}"
    return "any"


def field_str(f) -> str:
    s = f"{f.name}: {type_str(f.type)}"
    if f.default is not None:
        s += f" = {expr(f.default)}"
    if f.doc:
        s += f" {quote(f.doc)}"
    return s


# --------------------------------------------------------------------------- expressions


def expr(e, min_prec: int = 0) -> str:
    s, p = _expr(e)
    return f"({s})" if p < min_prec else s


def _is_num(v) -> bool:
    return type(v) in (int, float)


def _expr(e) -> tuple[str, int]:
    t = type(e)
    if t is A.Name:
        return e.id, P_ATOM
    if t is A.Literal:
        s = scalar(e.value)
        return s, (P_NEG if s.startswith("-") else P_ATOM)
    if t is A.Attr:
        return f"{expr(e.obj, P_POST)}.{e.name}", P_POST
    if t is A.Index:
        return f"{expr(e.obj, P_POST)}[{expr(e.index)}]", P_POST
    if t is A.Call:
        return f"{e.func}({args_str(e.args, e.kwargs)})", P_ATOM
    if t is A.Binary:
        p = BIN_PREC.get(e.op, P_CMP)
        if p == P_CMP:
            return f"{expr(e.left, P_ADD)} {e.op} {expr(e.right, P_ADD)}", p
        return f"{expr(e.left, p)} {e.op} {expr(e.right, p + 1)}", p
    if t is A.Unary:
        if e.op == "not":
            return f"not {expr(e.operand, P_NOT)}", P_NOT
        operand = e.operand
        if type(operand) is A.Literal and _is_num(operand.value) and not scalar(operand.value).startswith("-"):
            return f"-({scalar(operand.value)})", P_NEG  # keep Unary: `-1` would read back as Literal(-1)
        return f"-{expr(operand, P_NEG)}", P_NEG
    if t is A.ListLit:
        return "[" + ", ".join(expr(x) for x in e.items) + "]", P_ATOM
    if t is A.RecordLit:
        return "{" + ", ".join(f"{f.name}: {expr(f.value)}" for f in e.fields) + "}", P_ATOM
    if t is A.Where:
        return f"{expr(e.source, P_WHERE)} where {expr(e.pred, P_OR)}", P_WHERE
    if t is A.FieldInit:
        return f"{e.name}: {expr(e.value)}", P_ATOM
    return scalar(getattr(e, "value", None)), P_ATOM


def args_str(args, kwargs=()) -> str:
    return ", ".join([expr(a) for a in args] + [f"{k.name}: {expr(k.value)}" for k in kwargs])


# --------------------------------------------------------------------------- line builder


@dataclass(slots=True)
class _Line:
    indent: int
    text: str
    src: int  # source line this printed line stands for (0: none)
    closer: bool = False


def _line_of(node) -> int:
    sp = getattr(node, "span", None)
    return sp.line if sp is not None else 0


def _end_of(node) -> int:
    sp = getattr(node, "span", None)
    return sp.end_line if sp is not None else 0


class _Printer:
    def __init__(self) -> None:
        self.lines: list[_Line] = []

    def emit(self, indent: int, text: str, src: int = 0, closer: bool = False) -> None:
        self.lines.append(_Line(indent, text, src, closer))

    def blank(self) -> None:
        if self.lines and self.lines[-1].text != "":
            self.emit(0, "")

    def wrapped(self, indent: int, head: str, items: list[tuple[str, int]], tail: str, src: int,
                open_: str = "(", close: str = ")", force: bool = False) -> None:
        """`head(item, item)tail` on one line if it fits, else one item per line."""
        one = f"{head}{open_}{', '.join(s for s, _ in items)}{close}{tail}"
        if not force and (len(IND * indent) + len(one) <= WIDTH or not items):
            self.emit(indent, one, src)
            return
        self.emit(indent, f"{head}{open_}", src)
        for s, line in items:
            self.emit(indent + 1, f"{s},", line)
        self.emit(indent, f"{close}{tail}", 0)

    # ---- module

    def module(self, m: A.Module) -> None:
        prev = None
        for item in m.items:
            if prev is not None and not (isinstance(prev, A.Import) and isinstance(item, A.Import)):
                self.blank()
            if isinstance(item, A.Import):
                self.emit(0, f"import {quote(item.path)}", _line_of(item))
            elif isinstance(item, A.EnvDecl):
                self.env(item)
            elif isinstance(item, A.BlueprintDecl):
                self.blueprint(item)
            prev = item

    # ---- environments

    def env(self, e: A.EnvDecl) -> None:
        doc = f" {quote(e.doc)}" if e.doc else ""
        self.emit(0, f"env {e.name}{doc} {{", _line_of(e))
        members: list = ([e.state] if e.state is not None else []) + list(e.records) + list(e.entities) + list(e.tools)
        for i, m in enumerate(members):
            if i:
                self.blank()
            if isinstance(m, A.StateDecl):
                self.fields_block(1, "state", m.fields, m)
            elif isinstance(m, A.RecordDecl):
                doc = f" {quote(m.doc)}" if m.doc else ""
                self.fields_block(1, f"record {m.name}{doc}", m.fields, m)
            elif isinstance(m, A.EntityDecl):
                doc = f" {quote(m.doc)}" if m.doc else ""
                self.fields_block(1, f"entity {m.name} key {m.key}{doc}", m.fields, m)
            else:
                self.tool(1, m)
        self.emit(0, "}", _end_of(e), closer=True)

    def fields_block(self, ind: int, head: str, fields, node) -> None:
        self.emit(ind, f"{head} {{", _line_of(node))
        for f in fields:
            self.emit(ind + 1, field_str(f), _line_of(f))
        self.emit(ind, "}", _end_of(node), closer=True)

    def tool(self, ind: int, t: A.ToolDecl) -> None:
        src = _line_of(t)
        for a in t.annotations:
            self.emit(ind, f"@{a}", src)
        params = [(field_str(p), _line_of(p)) for p in t.params]
        self.wrapped(ind, f"tool {t.name}", params, f" -> {type_str(t.returns)}", src)
        if t.python is not None:
            if t.doc:
                self.emit(ind + 1, quote(t.doc), src)
            self.emit(ind, 'python """', src)
            for ln in t.python.split("\n"):
                self.emit(ind + 1 if ln.strip() else 0, ln if ln.strip() else "", -1)
            self.emit(ind, '"""', 0)  # no comment may be placed before it: that is inside the body
            return
        if t.doc:
            self.emit(ind + 1, quote(t.doc), src)
            self.emit(ind, "{", src)
        else:
            self.lines[-1].text += " {"
        notes: dict[int, list[str]] = {}
        for i, why in t.notes:
            notes.setdefault(i, []).append(why)
        for i, s in enumerate(t.body or ()):
            for why in notes.get(i, ()):
                # a citation is a plain own-line comment: parsed back into Module.comments
                self.emit(ind + 1, "// from: " + quote(" ".join(why.split())), _line_of(s))
            self.stmt(ind + 1, s)
        self.emit(ind, "}", _end_of(t), closer=True)

    # ---- statements

    def stmts(self, ind: int, body) -> None:
        for s in body:
            self.stmt(ind, s)

    def stmt(self, ind: int, s) -> None:
        src = _line_of(s)
        t = type(s)
        if t is A.Require:
            self.emit(ind, f"require {expr(s.cond)} else {quote(s.message)}", src)
        elif t is A.Let:
            self.emit(ind, f"let {s.name} = {expr(s.value)}", src)
        elif t is A.Set:
            self.emit(ind, f"set {expr(s.target, P_POST)} = {expr(s.value)}", src)
        elif t is A.Insert:
            head = f"let {s.bind} = insert {s.entity} " if s.bind else f"insert {s.entity} "
            items = [(f"{f.name}: {expr(f.value)}", _line_of(f)) for f in s.fields]
            self.wrapped(ind, head, items, "", src, "{", "}")
        elif t is A.Delete:
            self.emit(ind, f"delete {expr(s.target)}", src)
        elif t is A.Append:
            self.emit(ind, f"append {expr(s.value)} to {expr(s.target)}", src)
        elif t is A.Remove:
            self.emit(ind, f"remove {expr(s.value)} from {expr(s.target)}", src)
        elif t is A.For:
            self.emit(ind, f"for {s.var} in {expr(s.iter)} {{", src)
            self.stmts(ind + 1, s.body)
            self.emit(ind, "}", _end_of(s), closer=True)
        elif t is A.If:
            self.if_(ind, s, f"if {expr(s.cond)} {{")
        elif t is A.Return:
            self.emit(ind, f"return {expr(s.value)}", src)

    def if_(self, ind: int, s: A.If, head: str) -> None:
        self.emit(ind, head, _line_of(s))
        self.stmts(ind + 1, s.then)
        if not s.orelse:
            self.emit(ind, "}", _end_of(s), closer=True)
        elif len(s.orelse) == 1 and type(s.orelse[0]) is A.If:
            inner = s.orelse[0]
            self.if_(ind, inner, f"}} else if {expr(inner.cond)} {{")
        else:
            self.emit(ind, "} else {", 0)
            self.stmts(ind + 1, s.orelse)
            self.emit(ind, "}", _end_of(s), closer=True)

    # ---- blueprints

    def blueprint(self, b: A.BlueprintDecl) -> None:
        self.emit(0, f"blueprint {b.name} for {b.env} {{", _line_of(b))
        u = b.user
        self.emit(1, "user {", _line_of(u))
        self.emit(2, f"goal {quote(u.goal)}", _line_of(u))
        if u.persona:
            self.emit(2, f"persona {quote(u.persona)}", _line_of(u))
        if u.reason:
            self.emit(2, f"reason {quote(u.reason)}", _line_of(u))
        for f in u.facts:
            self.emit(2, f"knows {f.name} = {expr(f.value)}", _line_of(f))
        for x in u.unknown:
            self.emit(2, f"unknown {quote(x)}", _line_of(x) or _line_of(u))
        for it in u.intents:
            cond = f" if {quote(it.condition)}" if it.condition else ""
            self.emit(2, f"intent {quote(it.text)}{cond}", _line_of(it))
        self.emit(1, "}", _end_of(u), closer=True)
        for n in b.nodes:
            src = _line_of(n)
            t = type(n)
            if t is A.CallNode:
                items = [(f"{a.name}: {expr(a.value)}", _line_of(a)) for a in n.args]
                self.wrapped(1, f"call {n.name} = {n.tool}", items, "", src)
            elif t is A.ReasonNode:
                items = [(expr(a), _line_of(a)) for a in n.args] + [
                    (f"{a.name}: {expr(a.value)}", _line_of(a)) for a in n.kwargs]
                self.wrapped(1, f"reason {n.name} = {n.op}", items, "", src)
            elif t is A.ExpectNode:
                self.emit(1, f"expect {expr(n.cond)}", src)
            elif t is A.TellNode:
                self.emit(1, f"tell {expr(n.value)}", src)
        self.emit(0, "}", _end_of(b), closer=True)


# --------------------------------------------------------------------------- comments


def _merge_comments(lines: list[_Line], comments) -> list[str]:
    own = sorted((c for c in comments if not c.trailing), key=lambda c: c.line)
    trail = sorted((c for c in comments if c.trailing), key=lambda c: c.line)
    # trailing comment -> printed line with the largest src <= its line (first printed on ties)
    keyed = sorted((ln.src, -i) for i, ln in enumerate(lines) if ln.src > 0 and ln.text)
    srcs = [k[0] for k in keyed]
    attached: dict[int, list[str]] = {}
    for c in trail:
        j = bisect.bisect_right(srcs, c.line) - 1
        if j < 0:
            own.append(A.Comment(c.text, c.line, False))
            continue
        attached.setdefault(-keyed[j][1], []).append(c.text)
    own.sort(key=lambda c: c.line)
    out: list[str] = []
    oi = 0
    for i, ln in enumerate(lines):
        if ln.src > 0:
            ind = ln.indent + (1 if ln.closer else 0)
            while oi < len(own) and own[oi].line < ln.src:
                out.append(IND * ind + "//" + own[oi].text.rstrip())
                oi += 1
        text = IND * ln.indent + ln.text if ln.text else ""
        if i in attached:
            text += "  //" + " //".join(t.rstrip() for t in attached[i])
        out.append(text)
    while oi < len(own):
        out.append("//" + own[oi].text.rstrip())
        oi += 1
    return out


# --------------------------------------------------------------------------- API


def format(module: A.Module) -> str:  # noqa: A001 - the public name the pipeline uses
    """Canonical text of `module` (comments from `module.comments` put back)."""
    p = _Printer()
    p.module(module)
    lines = _merge_comments(p.lines, module.comments)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def format_text(text: str, filename: str = "<input>") -> tuple[str | None, list[Diagnostic]]:
    """Parse and format; None when the text has syntax errors (never format a broken file)."""

    mod, diags = parse(text, filename)
    if has_errors(diags):
        return None, diags
    try:
        return format(mod), diags
    except RecursionError:
        from forgec.diagnostics import Span, error
        from forgec.lang.codes import TOO_DEEP

        return None, diags + [error(TOO_DEEP, "the file nests expressions too deeply to format", Span(filename))]


__all__ = ["format", "format_text", "expr", "type_str", "quote"]
