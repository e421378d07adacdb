"""The rules backend: deterministic, offline synthesis of an `EnvDecl` from the IR."""

from __future__ import annotations

from dataclasses import replace

from forgec import ir
from forgec.diagnostics import Diagnostic, Span, warning
from forgec.lang import ast as A

from . import codes
from .cases import split_cases
from .effects import build_tool, fix_required_refs, release_optional_refs, span_of
from .params import param_name, tool_doc
from .names import ident
from .schema import ONCE_DOC, Schema, TypeMapper, infer_schema
from .recognize import claim_all


def _as_served(decl: A.ToolDecl, t: ir.Tool) -> A.ToolDecl:
    """A tool a shape claimed, with the name it is served by and, for one act of a docs' tool that does several
    (forgec/synth/cases.py), its `@case` and the docs' whole text: as `build_tool` writes them."""
    ann = list(decl.annotations)
    if t.wire_name and A.wire_annotation(t.wire_name) not in ann:
        ann = [a for a in ann if not a.startswith("wire(")] + [A.wire_annotation(t.wire_name)]
    act = t.annotations.get("case")
    if act and A.tool_case(decl) is None:
        ann.append(A.case_annotation(act["param"], act["value"]))
        decl = replace(decl, doc=tool_doc(act["doc"]))
    return replace(decl, annotations=tuple(ann))


def synthesize_rules(env: ir.Environment) -> tuple[A.EnvDecl, list[Diagnostic]]:
    diags: list[Diagnostic] = []
    env = split_cases(env)  # `motion_tasks(operation: create | delete)`: one tool per act, served as the docs' one
    if not env.tools:
        diags.append(warning(codes.NO_TOOLS, f"environment `{env.name}` documents no tools", Span(env.sources[0] if env.sources else "<docs>")))
    claims = claim_all(env)
    claimed = {n: d for c in claims for n, d in c.tools.items()}
    s = infer_schema(env.model_copy(update={"tools": tuple(t for t in env.tools if t.name not in claimed)}) if claimed else env)
    for c in claims:
        _merge_claim(s, c)
        diags += c.diags
    tm = TypeMapper(s)
    tools: list[A.ToolDecl] = []
    seen: set[str] = set()
    for t in env.tools:
        if t.name in claimed:
            decl = _as_served(claimed[t.name], t)
            if decl.name in seen:
                diags.append(warning(codes.DUPLICATE_TOOL, f"tool `{t.name}` collides with another tool; synthesized as `{decl.name}_2`", span_of(t)))
                decl = replace(decl, name=f"{decl.name}_2")
            seen.add(decl.name)
            tools.append(decl)
            continue
        v = s.views[t.name]
        if v.name != t.name:
            diags.append(warning(codes.RENAMED, f"tool name `{t.name}` is not an identifier; synthesized as `{v.name}`", span_of(t)))
        if v.name in seen:
            i = 2
            while f"{v.name}_{i}" in seen:
                i += 1
            diags.append(warning(codes.DUPLICATE_TOOL, f"tool `{t.name}` collides with another tool; synthesized as `{v.name}_{i}`", span_of(t)))
            v.name = f"{v.name}_{i}"
        seen.add(v.name)
        for p in t.params:
            if param_name(s, p.name) != p.name:
                diags.append(warning(codes.RENAMED, f"parameter `{p.name}` of `{t.name}` is not a usable identifier; synthesized as `{param_name(s, p.name)}`", span_of(t)))
        built = build_tool(s, v, tm)
        tools.append(built.decl)
        diags += built.diags
    fix_required_refs(s, tools)
    tools = release_optional_refs(s, tools)
    tools = [_once_by_status(t) for t in tools]
    _drop_unused_once_flags(s, tools)
    return _env_decl(s, env, tools), diags


def _once_by_status(t: A.ToolDecl) -> A.ToolDecl:
    """"Only once" needs no flag where the tool requires one status and leaves another: a second call already
    fails its precondition (the same rule `world.py` applies to a --state world, here for any docs: a policy
    page's "will change the order status to 'pending (items modified)'")."""
    from .world import drop_once_flags, leaves_required_status

    if not t.body:
        return t
    body, notes = list(t.body), [list(n) for n in t.notes]
    conds = [s.cond for s in body if isinstance(s, A.Require) and isinstance(s.cond, A.Binary)]
    checked = {(c.left.obj.id, c.left.name) for c in conds if isinstance(c.left, A.Attr) and isinstance(c.left.obj, A.Name)}
    for tp, field in sorted(checked):
        if leaves_required_status(body, tp, field):
            body, notes = drop_once_flags(body, notes, tp, set())
    if len(body) == len(t.body):
        return t
    return replace(t, body=tuple(body), notes=tuple((i, w) for i, w in notes))


def _drop_unused_once_flags(s: Schema, tools: list[A.ToolDecl]) -> None:
    """A `*_done` flag the schema declared for an "only once" tool, which no tool reads or writes after all (the
    tool leaves the status it requires, so a second call fails anyway: a policy page's "will change the order
    status to ..."), is dropped: left in, the world sets it at random on records no tool has touched, which a
    reader takes for "already modified" (review 59: 7 of 15 retail tasks acted on such a "locked" order)."""
    used = {n.name for t in tools for n in A.walk(t.body or ()) if isinstance(n, A.Attr)}
    for e in s.entities.values():
        for name in [n for n, f in e.fields.items() if (f.doc or "").endswith(ONCE_DOC) and n not in used]:
            del e.fields[name]


def _merge_claim(s: Schema, c) -> None:
    """A shape's state joins the CRUD schema; the shape's declarations win a name clash."""
    s.entities.update(c.entities)
    s.records.update(c.records)
    s.globals.update(c.globals)


def _fields(fs) -> tuple[A.FieldDecl, ...]:
    return tuple(A.FieldDecl(f.name, f.type, f.default, " ".join((f.doc or "").split())) for f in fs.values())


def _env_decl(s: Schema, env: ir.Environment, tools: list[A.ToolDecl]) -> A.EnvDecl:
    state = A.StateDecl(_fields(s.globals)) if s.globals else None
    return A.EnvDecl(
        name=ident(env.name),
        state=state,
        records=tuple(A.RecordDecl(r.name, _fields(r.fields), " ".join(r.doc.split())) for r in s.records.values()),
        entities=tuple(A.EntityDecl(e.name, e.key, _fields(e.fields), " ".join(e.doc.split())) for e in s.entities.values()),
        tools=tuple(tools),
        doc=" ".join((env.description or "").split()),
    )
