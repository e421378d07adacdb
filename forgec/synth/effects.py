"""Tool semantics: one effect body per tool, written in the .forge effect language.

Given the inferred `Schema`, each tool becomes a `ToolDecl` whose body follows its kind:

* read    `return k` (the record), `return k.status` (get_order_status), or a global
* search  `return E where (p == null or it.f == p) and ...` (or the first match's key
          for `find_user_id_by_email`)
* create  `let x = insert E {key: fresh_id(E), f: p, ...}`, append to the parent's list
* update  status preconditions, `set k.f = p`, grouped records (`set k.address = {...}`)
* delete  a status change when the docs describe one (cancel), else `delete k`
* action  a documented computed result, or the conservative fallback: an `ActionLog`
          insert annotated `@conservative` plus a warning naming the tool.

Preconditions come only from the docs (a status adjective in the name, a quoted target
state), never from guesses, so a verified tool fails only where its documentation says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from forgec import ir
from forgec.diagnostics import Diagnostic, Span, warning
from forgec.english import DESTINATION_PARAM, MOVING_VERBS, plural, singular, verb_base
from forgec.wording import humanize, is_confirm_switch
from forgec.lang import ast as A
from forgec.lang.check import has_write

from . import codes, prose, prose_effects
from .params import NULL, ParamOut, default_value, lit, tool_doc, tool_params
from .pure import pure_effect
from .names import after_kind, ident, pascal, snake, tokens
from .schema import (
    AMOUNT_PARAMS,
    BATCH_PARAMS,
    NAMES_TARGET,
    batch_key,
    QUANTIFIERS,
    MODIFIER_PARAMS,
    is_modifier,
    Entity,
    amount_param,
    balance_field,
    flat_params,
    ref_field,
    Schema,
    ToolView,
    TypeMapper,
    range_field,
    ensure_action_log,
    field_path,
    strip_optional,
    status_flag,
    Field,
)
from .lifecycle import document_text
from .schema import TODAY_DEFAULT, body_with_key, field_named, lines_field, named_for_another, no_change_desc, noun_pattern

STR = A.PrimType("str")
ANY = A.PrimType("any")


def N(x: str) -> A.Name:
    return A.Name(x)


def at(obj: A.Expr | str, *names: str) -> A.Expr:
    e = N(obj) if isinstance(obj, str) else obj
    for n in names:
        e = A.Attr(e, n)
    return e


def bin_(op: str, a: A.Expr, b: A.Expr) -> A.Binary:
    return A.Binary(op, a, b)


def and_all(xs: list[A.Expr]) -> A.Expr | None:
    out = None
    for x in xs:
        out = x if out is None else bin_("and", out, x)
    return out


@dataclass
class Built:
    decl: A.ToolDecl
    diags: list[Diagnostic] = field(default_factory=list)
    conservative: bool = False


def span_of(t: ir.Tool) -> Span:
    src = t.source
    if src is None:
        return Span("<docs>", pointer=t.name)
    return Span(src.file, src.line, src.col, pointer=src.pointer)


# --------------------------------------------------------------------------- defaults


# --------------------------------------------------------------------------- params


def build_tool(s: Schema, v: ToolView, tm: TypeMapper) -> Built:
    params = tool_params(s, v, tm)
    pmap = {p.wire: p for p in params}
    kind = v.kind
    body: list[A.Stmt] | None = None
    ret: A.TypeExpr = ANY
    pure = pure_effect(s, v, pmap)  # a computation the docs name is a read (forgec/synth/pure.py)
    if pure is not None:
        kind = "read"
    other = named_for_another(s, v) if pure is None and kind in ("create", "update", "delete", "action") and not v.link else None
    # (a link names its members' kind and acts on their container: `lb_add_droplets`, `schema._links`)
    unlinked = None
    if other is not None and kind == "delete" and "from" in v.toks[2:] and v.target in s.entities and v.verb in _UNLINK_VERBS:
        try:  # `remove_bookmark_from_list`: the bookmark's one link to the list is cleared, where it has one
            unlinked = _unlink(s, s.entities[v.target], v, pmap, " ".join(v.toks[v.toks.index("from", 2) + 1:]))
            other = None
        except _NoRule:
            pass
    moved_only = False  # its only effect moved the record into the parent it names (`_home_checks`)
    try:
        if other is not None:
            raise _NoRule  # a guess on the wrong records is worse than a logged call
        body, ret = unlinked or (pure if pure is not None else EFFECT_OF_KIND.get(kind, _action)(s, v, pmap))
        body = _home_checks(s, v, pmap, list(body))
        moved_only = body is None
    except _NoRule:
        body = None
    conservative = body is None
    diags: list[Diagnostic] = []
    if other is not None:
        body, ret = _conservative(s, v, pmap)
        diags.append(
            warning(
                codes.CONSERVATIVE,
                f"tool `{v.tool.name}` acts on {other}, not on the {v.target} record its parameters address; it gets a conservative effect (logs the call)",
                span_of(v.tool),
                help="no record of that kind was found in the docs; describe it there (or edit the effect in env.forge)",
            )
        )
    elif conservative:
        body, ret = _conservative(s, v, pmap)
        what = (f"tool `{v.tool.name}` names a record and the record it lives in, and nothing else it does is documented" if moved_only
                else f"no synthesis rule applies to tool `{v.tool.name}`")
        diags.append(
            warning(
                codes.CONSERVATIVE,
                f"{what}; it gets a conservative effect (logs the call)",
                span_of(v.tool),
                help="edit its effect in env.forge (or use `--synth llm`); the call is recorded in `ActionLog`",
            )
        )
    if v.kind in ("read", "search") and has_write(body or ()):  # the checker's own test: kinds agree
        kind = "action"
    ann = [kind] + (["conservative"] if conservative else [])  # stored without "@"
    if v.tool.wire_name:
        ann.append(A.wire_annotation(v.tool.wire_name))  # served as the docs name it (`find-projects`)
    if (act := v.tool.annotations.get("case")):
        ann.append(A.case_annotation(act["param"], act["value"]))  # one act of the docs' `motion_tasks(operation)`
    cited = v.cited + ([] if conservative else prose_effects.cite_existing(v, body))
    notes = prose_effects.notes(body, cited)
    decl = A.ToolDecl(
        name=v.name,
        params=tuple(A.ParamDecl(p.name, p.type, p.default, p.doc) for p in params),
        returns=ret,
        doc=tool_doc(case["doc"] if (case := v.tool.annotations.get("case")) else v.tool.description),  # an act: the docs' whole text
        body=tuple(body),
        annotations=tuple(ann),
        notes=notes,
    )
    return Built(decl, diags, conservative)


class _NoRule(Exception):
    pass


_MOVING_VERBS = MOVING_VERBS | {"assign"}  # an assignment sets the reference it names


def _home_checks(s: Schema, v: ToolView, pmap: dict[str, ParamOut], body: list[A.Stmt]) -> list[A.Stmt] | None:
    """A tool taking a record and the record it lives in (`unapprove_merge_request(project_id,
    merge_request_iid)`: a merge request's own `project_id`, a required reference) finds it there:
    the call fails with "not found" when the merge request is another project's, as the real API
    does, and never moves it (`set merge_request_iid.project_id = project_id` was a move). A tool
    whose verb moves records (`move_card`, `transfer_issue`), or a `target_`/`new_` parameter, is left as it is."""
    if v.verb in _MOVING_VERBS:
        return body
    ents = {}
    for p in pmap.values():
        t = p.type
        if not p.optional and isinstance(t, A.NamedType) and t.name in s.entities and not DESTINATION_PARAM.search(p.wire.lower()):
            ents[p.name] = t.name
    checks: list[A.Stmt] = []
    drop: set[tuple[str, str]] = set()

    def home_field(child: str, home: str) -> str | None:
        ce = s.entities[child]
        return next((n for n, fd in ce.fields.items() if n != ce.key and fd.type == A.NamedType(home)), None)

    def addressed_within(child: str, home: str, f: str) -> bool:
        # every tool that names a merge request names its project too (a REST path /projects/{id}/merge_requests/{iid}):
        # a book that some tools take alone is no patron's, even where a checkout names both
        def ent(w: ToolView, p: ir.Param) -> str | None:  # the record a param names, the tool's own target's key included
            return w.refs.get(p.name) or (w.target if p.name == w.key_param else None) or s.ref_of(p.name)

        views = [w for w in s.views.values() if child in {ent(w, p) for p in w.tool.params if p.required}]
        return len(views) >= 2 and all(any(p.required and (ent(w, p) == home or p.name == f) for p in w.tool.params) for w in views)

    for child_param, child in ents.items():
        ce = s.entities[child]
        if any(o != child and home_field(o, child) for o in ents.values()):
            continue  # only the innermost record is checked (a note's merge request and project): worlds hold each record's own parents
        for home_param, home in ents.items():
            if home == child:
                continue
            f = home_field(child, home)
            if f is None or not addressed_within(child, home, f):
                continue
            what, where = snake(child).replace("_", " "), snake(home).replace("_", " ")
            checks.append(A.Require(bin_("==", at(child_param, f), at(home_param, s.entities[home].key)),
                                    f"{what} not found in that {where}"))
            drop.add((child_param, f))
    if not checks:
        return body

    def moves(st: A.Stmt) -> bool:
        t = st.target if isinstance(st, A.Set) else None
        return isinstance(t, A.Attr) and isinstance(t.obj, A.Name) and (t.obj.id, t.name) in drop

    rest = [st for st in body if not moves(st)]
    if not any(isinstance(st, (A.Set, A.Insert, A.Delete, A.Append, A.Remove, A.If, A.For)) for st in rest) and any(moves(st) for st in body):
        return None  # the move was all the tool did
    return checks + rest


def stored(s: Schema, expr: A.Expr, t: A.TypeExpr) -> A.Expr:
    """The value a ref field stores for a param expression: a record param gives its key,
    a list of records the list of their keys (the checker keeps records and keys apart)."""
    b = strip_optional(t)
    if isinstance(b, A.NamedType) and b.name in s.entities:
        return at(expr, s.entities[b.name].key)
    if isinstance(b, A.ListType) and isinstance(b.item, A.NamedType) and b.item.name in s.entities:
        return A.Call("map", (expr, at("it", s.entities[b.item.name].key)))
    return expr


def flat_exprs(s: Schema, v: ToolView, pmap) -> list[tuple[str, str, A.Expr, A.TypeExpr, bool, A.Expr]]:
    """(wire name, field name, stored expression, type, may be null, null-guard expression)
    per param, request bodies spread into their fields."""
    out = []
    for path, p in flat_params(v):
        po = pmap[path[0]]
        if len(path) == 1:
            out.append((p.name, po.name, stored(s, N(po.name), po.type), po.type, po.optional or isinstance(po.type, A.OptionalType), N(po.name)))
            continue
        bt = strip_optional(po.type)
        rec = s.records.get(bt.name) if isinstance(bt, A.NamedType) else None
        fname = ident(path[1])
        if rec is None or fname not in rec.fields:
            continue
        ftype = rec.fields[fname].type
        out.append((p.name, fname, at(po.name, fname), ftype, isinstance(ftype, A.OptionalType), at(po.name, fname)))
    return out


def _key_param(v: ToolView, pmap: dict[str, ParamOut]) -> str:
    return pmap[v.key_param].name


def _read(s: Schema, v: ToolView, pmap):
    if v.global_name:
        return [A.Return(at("state", v.global_name))], s.globals[v.global_name].type
    if v.target and v.key_param is None and (bk := body_with_key(v)) is not None and (idf := batch_key(s, v, bk)) is not None:
        e, body = s.entities[v.target], N(pmap[bk.name].name)  # Outline's `groups.info({id})`: the group the body's id names
        return [A.Require(bin_("!=", body, NULL), f"the {e.name} to read is not given"),
                A.Require(bin_("in", at(body, idf), N(e.name)), f"{e.name} not found"),
                A.Return(A.Index(N(e.name), at(body, idf)))], A.NamedType(e.name)
    if v.target and v.key_param:
        e = s.entities[v.target]
        k = _key_param(v, pmap)
        if v.field_noun and v.field_noun in e.fields and v.field_noun != e.key:
            ft = e.fields[v.field_noun].type
            if isinstance(ft, A.NamedType) and ft.name in s.entities:  # a reference holds a key: return its record
                return [A.Return(A.Index(N(ft.name), at(k, v.field_noun)))], ft
            lt = ft.inner if isinstance(ft, A.OptionalType) else ft
            if isinstance(lt, A.ListType) and isinstance(lt.item, A.NamedType) and lt.item.name in s.entities:
                # a list of references holds keys: return their records (openapi_pretalx: an event's tags)
                ref = s.entities[lt.item.name]
                return [A.Return(A.Where(N(ref.name), bin_("in", at("it", ref.key), at(k, v.field_noun))))], A.ListType(lt.item)
            return [A.Return(at(k, v.field_noun))], ft
        return [A.Return(N(k))], A.NamedType(v.target)

    doc = document_text(v)
    if doc is not None:
        return [A.Return(lit(doc))], STR
    return _computed(s, v, pmap)


def _modifier(v: ToolView, wire: str) -> bool:
    """A param of `v` that pages, sorts or text-searches (schema.is_modifier), by its wire name."""
    p = next((q for q in v.tool.params if q.name == wire), None)
    return wire in MODIFIER_PARAMS if p is None else is_modifier(p)


def _filters(s: Schema, e: Entity, v: ToolView, pmap) -> list[A.Expr]:
    preds: list[A.Expr] = []
    for wire, p in pmap.items():
        if _modifier(v, wire) or wire == v.fresh_key:
            continue
        if wire in v.flag_preds:
            # `in_stock` "only books with stock > 0": the test applies when the flag is set
            fname, op, num = v.flag_preds[wire]
            test = bin_("or", A.Unary("not", N(p.name)), bin_(op, at("it", fname), lit(num)))
            if p.optional or isinstance(p.type, A.OptionalType):
                test = bin_("or", bin_("==", N(p.name), NULL), test)
            preds.append(test)
            continue
        path = field_path(s, e, p.name)
        cmp_op = "=="
        if path is None:
            rf = range_field(wire)
            if rf is None:
                continue
            path = field_path(s, e, ident(rf))
            if path is None:
                continue
            tw = tokens(wire)
            lower = ("min", "start", "from", "since", "after", "gte", "gt")  # a lower bound, as prefix or suffix
            cmp_op = ">=" if (tw[0] in lower if range_field(wire) == "_".join(tw[1:]) else tw[-1] in lower) else "<="
            ftype = strip_optional(_field_type(s, e, path))
            if not (isinstance(ftype, A.PrimType) and ftype.name in ("int", "float", "str")):
                continue
        ftype = _field_type(s, e, path)
        pv = stored(s, N(p.name), p.type)
        if isinstance(strip_optional(ftype), A.ListType) and not isinstance(strip_optional(p.type), A.ListType):
            if strip_optional(ftype).item != strip_optional(p.type):
                continue
            test: A.Expr = bin_("in", pv, at("it", *path))
        elif _type_eq(strip_optional(ftype), strip_optional(p.type)):
            test = bin_(cmp_op, at("it", *path), pv)
        else:
            continue
        doc = next((q.description or "" for q in v.tool.params if q.name == wire), "")
        if (p.optional or isinstance(p.type, A.OptionalType)) and TODAY_DEFAULT.search(doc) and "now" in s.globals and cmp_op == "==":
            # "Filter alarms by the set date ... If not provided, defaults to current date": left out, today's records
            # (review 68: an undated call returned alarms of three dates)
            today = A.Call("slice", (at("state", "now"), lit(0), lit(10)))
            on_today = bin_("and", bin_("!=", at("it", *path), NULL), bin_("==", A.Call("slice", (at("it", *path), lit(0), lit(10))), today))
            preds.append(bin_("or", bin_("and", bin_("==", N(p.name), NULL), on_today),
                              bin_("and", bin_("!=", N(p.name), NULL), test)))
            continue
        if p.optional or isinstance(p.type, A.OptionalType):
            test = bin_("or", bin_("==", N(p.name), NULL), test)
        wild = _wildcard_default(v, wire)
        pt = strip_optional(p.type)
        if wild is not None and not (isinstance(pt, A.EnumType) and wild in pt.values or pt == A.PrimType("str")):
            wild = None  # a boolean (or an enum without it) documented with default 'dontcare' (SGD): a null already matches every record
        if wild is not None:  # `genre = "dontcare"`: "use 'dontcare' if the genre is not a filtering criterion"
            test = bin_("or", bin_("==", N(p.name), lit(wild)), test)
        preds.append(test)
    return preds


_NO_CRITERION = re.compile(r"not (?:a |used as a )?filter|all \w+(?: \w+)? (?:are|is|will be) (?:considered|included|returned)|"
                           r"include all|any \w+ will be|no filter", re.I)


def _wildcard_default(v: ToolView, wire: str) -> str | None:
    """A filter's default that means "any value", by the docs: a quantifier (`all`, `any`, `dontcare`) or a
    default its doc says is no criterion ("If unspecified, all theatres are considered")."""
    p = next((q for q in v.tool.params if q.name == wire), None)
    if p is None or not p.has_default or not isinstance(p.default, str):
        return None
    if p.default.lower() in QUANTIFIERS | {"dont care", "none", ""} or _NO_CRITERION.search(p.description or ""):
        return p.default  # `board: str = ""`: an empty filter filters nothing (ConnectWise: every search found no ticket)
    return None


def _field_type(s: Schema, e: Entity, path: list[str]) -> A.TypeExpr:
    if path[0] == e.key and len(path) == 1:
        return A.PrimType(e.key_type)
    t = e.fields[path[0]].type
    if len(path) > 1:
        rec = s.records[strip_optional(t).name]
        return rec.fields[path[1]].type
    return t


def _prim_of_enum(vals) -> str:
    """The primitive an enum's values all are: "str", "int" (1, 2 ... 9 tickets), else ""."""
    if all(isinstance(x, str) for x in vals):
        return "str"
    if all(isinstance(x, int) and not isinstance(x, bool) for x in vals):
        return "int"
    return ""


def _type_eq(a: A.TypeExpr, b: A.TypeExpr) -> bool:
    if isinstance(a, A.EnumType) and isinstance(b, A.PrimType):
        return b.name == _prim_of_enum(a.values) or (b.name == "float" and _prim_of_enum(a.values) == "int")
    if isinstance(b, A.EnumType) and isinstance(a, A.PrimType):
        # an enum of counts (`number_of_tickets: enum(1..9)`) fills an int field (review: a ticket bought with 0 tickets)
        return a.name == _prim_of_enum(b.values) or (a.name == "float" and _prim_of_enum(b.values) == "int")
    if isinstance(a, A.PrimType) and isinstance(b, A.PrimType) and {a.name, b.name} <= {"int", "float"}:
        return True
    return a == b


def _fills(s: Schema, field_type: A.TypeExpr, param_type: A.TypeExpr) -> bool:
    """A parameter's value fits a field: same type, or a record passed by its key into a field that holds the key
    (`project: Project` into a task's `project: str`, where a project's key is its name; review 43: ERPNext stored a
    new task's project as "")."""
    if _type_eq(field_type, param_type):
        return True
    ent = s.entities.get(param_type.name) if isinstance(param_type, A.NamedType) else None
    return ent is not None and ent.key in ent.fields and isinstance(field_type, A.PrimType) \
        and strip_optional(ent.fields[ent.key].type) == field_type


def _search(s: Schema, v: ToolView, pmap):
    if v.child and v.key_param:
        cname, f = v.child
        k = _key_param(v, pmap)
        src = A.Where(N(cname), bin_("==", at("it", f), at(k, s.entities[v.target].key)))
        return [A.Return(src)], A.ListType(A.NamedType(cname))
    if v.target is None:
        return _computed(s, v, pmap)
    e = s.entities[v.target]
    preds = _filters(s, e, v, pmap)
    src: A.Expr = N(e.name)
    if preds:
        src = A.Where(src, and_all(preds))
    before_by = v.toks[: v.toks.index("by")] if "by" in v.toks else v.toks
    if ("id" in before_by or "returns_key" in v.cites) and preds:
        # find_user_id_by_email: the key of the (first) match, an error when nothing matches
        return [
            A.Let("found", src),
            A.Require(bin_(">", A.Call("len", (N("found"),)), lit(0)), f"no {e.name} matches"),
            A.Return(at(A.Index(N("found"), lit(0)), e.key)),
        ], A.PrimType(e.key_type)
    return [A.Return(src)], A.ListType(A.NamedType(e.name))


def batch_param(v: ToolView) -> ir.Param | None:
    """The one required param of a write that is a list of records to make or change (`create_projects(items:
    [{name, color}])`, `create_issues(issues: [...])`, `delete_projects(items: [{id}])`): one call, one record per item."""
    req = [p for p in v.tool.params if p.required]
    if len(req) != 1 or v.target is None:
        return None
    p = req[0]
    it = p.type.items
    if p.type.kind != "array" or it is None or it.kind != "object" or not it.fields:
        return None
    return p if snake(p.name) in BATCH_PARAMS or tokens(singular(p.name)) == tokens(v.target) else None


def _create_batch(s: Schema, v: ToolView, pmap, p: ir.Param):
    """Each item a new record with the item's fields (Todoist's `create_projects(items)`): before, the one record
    inserted held none of them, so no task could make one by what the user asked for."""
    e = s.entities[v.target]
    given = {ident(snake(f.name)) if not re.fullmatch(r"[A-Za-z_]\w*", f.name) else ident(f.name) for f in p.type.items.fields}
    initial = _initial_status(s, e)
    inits = [A.FieldInit(e.key, A.Call("fresh_id", (N(e.name),)))]
    for fname, f in e.fields.items():
        if fname == e.key:
            continue
        if fname in given:
            inits.append(A.FieldInit(fname, at("item", fname)))
        elif fname == "status" and initial is not None:
            inits.append(A.FieldInit(fname, lit(initial)))
        elif not isinstance(f.type, A.OptionalType) and default_value(s, f.type) == NULL:
            return None  # a record the items cannot make whole (a task's workspace no item names): the one-record rules
        else:
            inits.append(A.FieldInit(fname, default_value(s, f.type)))
    stmts: list[A.Stmt] = [A.Let("before", A.Call("map", (N(e.name), at("it", e.key)))),  # the records made are the new ones
                           A.For("item", N(pmap[p.name].name), (A.Insert(e.name, tuple(inits)),)),
                           A.Return(A.Where(N(e.name), bin_("not in", at("it", e.key), N("before"))))]
    return stmts, A.ListType(A.NamedType(e.name))


def _batch_change(s: Schema, v: ToolView, pmap, p: ir.Param, kind: str, single: bool = False):
    """Each item changes (or deletes) the record its id names: `for item in items { ... Project[item.id] ... }`.
    An item field the docs give as another way to say which record ("Name of the project to update") is no change.
    `single`: one body naming one record (`body_with_key`), the same rows without the loop."""
    e = s.entities[v.target]
    idf = batch_key(s, v, p)
    if idf is None:
        raise _NoRule
    rows: list[A.Stmt] = [A.Require(bin_("in", at("item", idf), N(e.name)), f"{e.name} not found")]
    if kind == "delete":
        rows.append(A.Delete(A.Index(N(e.name), at("item", idf))))
    else:
        rows.append(A.Let("rec", A.Index(N(e.name), at("item", idf))))
        for f in (p.type.fields if single else p.type.items.fields):
            fname = field_named(e, ident(f.name)) or ident(f.name)
            if ident(f.name) == idf or fname == e.key or fname not in e.fields or NAMES_TARGET.search(f.description or ""):
                continue
            rows.append(A.If(bin_("!=", at("item", ident(f.name)), NULL), (A.Set(at("rec", fname), at("item", ident(f.name))),)))
        if len(rows) == 2:
            raise _NoRule
    if single:
        body = N(pmap[p.name].name)
        head: list[A.Stmt] = [A.Require(bin_("!=", body, NULL), f"the {e.name} to act on is not given"), A.Let("item", body)]
        if kind == "delete":
            return head + rows + [A.Return(at("item", idf))], A.PrimType(e.key_type)
        return head + rows + [A.Return(N("rec"))], A.NamedType(e.name)
    stmts: list[A.Stmt] = [A.For("item", N(pmap[p.name].name), tuple(rows))]
    if kind == "delete":
        return stmts + [A.Return(A.Call("map", (N(pmap[p.name].name), at("it", idf))))], A.ListType(A.PrimType(e.key_type))
    return stmts + [A.Return(A.Where(N(e.name), bin_("in", at("it", e.key), A.Call("map", (N(pmap[p.name].name), at("it", idf))))))], \
        A.ListType(A.NamedType(e.name))


def _create(s: Schema, v: ToolView, pmap):
    if v.target is None:
        raise _NoRule
    if (bp := batch_param(v)) is not None and (made := _create_batch(s, v, pmap, bp)) is not None:
        return made
    e = s.entities[v.target]
    stmts: list[A.Stmt] = []
    if v.fresh_key:
        kp = pmap[v.fresh_key].name
        stmts.append(A.Require(bin_("not in", N(kp), N(e.name)), f"{e.name} already exists"))
        keyval: A.Expr = N(kp)
    else:
        keyval = A.Call("fresh_id", (N(e.name),))
    inits = [A.FieldInit(e.key, keyval)]
    supplied: dict[str, tuple[A.Expr, A.TypeExpr, bool, A.Expr]] = {}
    for _wire, fname, expr, ftype, nullable, guard in flat_exprs(s, v, pmap):
        supplied.setdefault(field_named(e, fname) or fname, (expr, ftype, nullable, guard))
    initial = _initial_status(s, e)
    later: list[A.Stmt] = []
    filled = _line_items(s, e, v, pmap)
    for fname, f in e.fields.items():
        if fname == e.key:
            continue
        if fname in filled and fname not in supplied:
            inits.append(A.FieldInit(fname, filled[fname]))
            continue
        if fname in supplied and not _fills(s, strip_optional(f.type), strip_optional(supplied[fname][1])):
            inits.append(A.FieldInit(fname, default_value(s, f.type)))  # same name, other type
        elif fname in supplied and supplied[fname][2] and (supplied[fname][0] != supplied[fname][3] or not isinstance(f.type, A.OptionalType)):
            # an optional record param: its key is stored only when it was given; an optional param for a field the
            # record always has (Overseerr's slider `type`, required in its schema, optional in the request) likewise:
            # what the user gives is kept, not replaced by the default (review 39)
            start = lit(initial) if fname == "status" and initial is not None else default_value(s, f.type)
            inits.append(A.FieldInit(fname, start))
            later.append(A.If(bin_("!=", supplied[fname][3], NULL), (A.Set(at("created", fname), supplied[fname][0]),)))
        elif fname in supplied and (not supplied[fname][2] or isinstance(f.type, A.OptionalType)):
            inits.append(A.FieldInit(fname, supplied[fname][0]))
        elif fname == "status" and initial is not None:
            inits.append(A.FieldInit(fname, lit(initial)))
        else:
            inits.append(A.FieldInit(fname, default_value(s, f.type)))
    stmts += _one_per_parent(s, e, v, pmap)
    stmts += _reserve_stock(s, e, v, pmap)
    stmts.append(A.Insert(e.name, tuple(inits), bind="created"))
    stmts += later
    stmts += _documented_defaults(s, e, v, pmap)
    for wire, ent in v.refs.items():
        parent = s.entities[ent]
        for pf, pfield in parent.fields.items():
            t = strip_optional(pfield.type)
            if isinstance(t, A.ListType) and t.item == A.NamedType(e.name):
                stmts.append(A.Append(at(pmap[wire].name, pf), at("created", e.key)))
    # a parent named inside the request body (`create_order(body: {user_id, ...})`) lists it too
    for wire, fname, expr, ftype, nullable, _guard in flat_exprs(s, v, pmap):
        ft = strip_optional(ftype)
        if wire in pmap or not isinstance(ft, A.NamedType) or ft.name not in s.entities or nullable:
            continue
        parent = s.entities[ft.name]
        lists = [pf for pf, pfield in parent.fields.items() if strip_optional(pfield.type) == A.ListType(A.NamedType(e.name))]
        if len(lists) == 1 and fname in e.fields:
            stmts.append(A.Let("parent", A.Index(N(ft.name), at("created", fname))))
            stmts.append(A.Append(at("parent", lists[0]), at("created", e.key)))
            break
    stmts.append(A.Return(N("created")))
    return stmts, A.NamedType(e.name)


# "This endpoint create a webhook policy if the project does not have one": one record of the kind per parent
_ONE_PER_PARENT = re.compile(r"\bif (?:the|a|an|this|that) (\w+) (?:does not|doesn't|did not) (?:already )?have (?:one|any|an? \w+)\b", re.I)


def _one_per_parent(s: Schema, e: Entity, v: ToolView, pmap) -> list[A.Stmt]:
    """A create its docs allow only where the parent it is made in has none yet ("create a webhook policy if the
    project does not have one"): refused while a record of the kind points to that parent, cited (review 89: a gold
    call made a second webhook policy in a project that had two)."""
    for sent in prose.sentences(v.tool.description or ""):
        m = _ONE_PER_PARENT.search(sent)
        if not m:
            continue
        word = singular(m.group(1).lower())
        for wire, ent in sorted(v.refs.items()):
            if wire not in pmap or ent not in s.entities or singular(tokens(ent)[-1]) != word:
                continue
            link = _link_field(e, ent, prefer=pmap[wire].name)  # the field the call's own parent param fills, if any
            if link is None:
                continue
            parent = s.entities[ent]
            cond = bin_("==", at("it", link), at(pmap[wire].name, parent.key))
            st = A.Require(bin_("==", A.Call("len", (A.Where(N(e.name), cond),)), lit(0)),
                           f"{' '.join(tokens(ent))} already has a {' '.join(tokens(e.name))}")
            v.cited.append((st, sent))
            return [st]
    return []


_DEFAULTS_TO = re.compile(r"\bdefaults? to (?:the |its |their )?(\w+)(?:'s)? (\w+)", re.I)


def _documented_defaults(s: Schema, e: Entity, v: ToolView, pmap) -> list[A.Stmt]:
    """"title: Reminder title (defaults to email subject)": left out, the new record takes the field of the record
    the call names (`if title == null { set created.title = email_id.subject }`), as the docs say, so an agent that
    passes the subject and one that leaves it out end in one state (review 50: a reminder stored with no title)."""
    out: list[A.Stmt] = []
    for p in v.tool.params:
        m = _DEFAULTS_TO.search(p.description or "")
        if m is None or p.required or p.name not in pmap or ident(p.name) not in e.fields:
            continue
        owner, field = m.group(1).lower(), m.group(2).lower()
        for wire, ent in v.refs.items():
            if wire in pmap and ent in s.entities and (tokens(ent)[-1:] == [singular(owner)]) and field in s.entities[ent].fields \
                    and not isinstance(pmap[wire].type, A.OptionalType):
                fname = ident(p.name)
                # (a field the insert starts as "" is unset too: review 73, a reminder still stored with title "")
                unset = bin_("or", bin_("==", at("created", fname), NULL), bin_("==", at("created", fname), lit("")))
                out.append(A.If(unset, (A.Set(at("created", fname), at(pmap[wire].name, field)),)))
                break
    return out


QUANTITY_FIELDS = ("quantity", "qty", "count", "copies", "units")
TOTAL_FIELDS = ("total", "total_price", "amount", "subtotal")


def _line_items(s: Schema, e: Entity, v: ToolView, pmap) -> dict[str, A.Expr]:
    """`create_order(items: [{book_id, quantity}])` fills `lines: list[Line]`, pricing each line
    from the referenced record (`unit_price: Book[it.book_id].price`), and the order's `total`
    is the sum of quantity x unit price — not an empty list and 0.0."""

    out: dict[str, A.Expr] = {}
    for path, p in flat_params(v):
        fname = lines_field(s, e, p)
        if fname is None or fname in out or is_modifier(p):
            continue
        po = pmap[path[0]]
        src = N(po.name) if len(path) == 1 else at(po.name, ident(path[1]))
        if len(path) == 1 and (po.optional or isinstance(po.type, A.OptionalType)):
            continue
        if len(path) > 1 and (p.required is False or po.optional):
            continue
        rec = s.records[strip_optional(e.fields[fname].type).item.name]
        given = {ident(f.name): f for f in (p.type.items.fields if p.type.items.kind == "object" else s.env.definitions[p.type.items.ref].fields)}
        inits: list[A.FieldInit] = []
        priced: A.Expr | None = None
        for rf, rfield in rec.fields.items():
            if rf in given:
                inits.append(A.FieldInit(rf, at("it", rf)))
                continue
            val = None
            want = [rf, tokens(rf)[-1]]
            for gf in given:
                gt = strip_optional(rec.fields[gf].type) if gf in rec.fields else None
                if isinstance(gt, A.NamedType) and gt.name in s.entities:
                    ent = s.entities[gt.name]
                    hit = next((w for w in want if w in ent.fields and _type_eq(strip_optional(ent.fields[w].type), strip_optional(rfield.type))), None)
                    if hit:
                        val = at(A.Index(N(gt.name), at("it", gf)), hit)
                        break
            if val is None:
                val = default_value(s, rfield.type)
            elif isinstance(strip_optional(rfield.type), A.PrimType) and strip_optional(rfield.type).name == "float":
                priced = val
            inits.append(A.FieldInit(rf, val))
        out[fname] = A.Call("map", (src, A.RecordLit(tuple(inits))))
        qty = next((q for q in QUANTITY_FIELDS if q in rec.fields), None)
        total = next((t for t in TOTAL_FIELDS if t in e.fields and strip_optional(e.fields[t].type) == A.PrimType("float")), None)
        if priced and qty and total and total not in out:
            out[total] = A.Call("sum", (src, bin_("*", at("it", qty), priced)))
    return out


STOCK_FIELDS = ("stock", "seats_available", "available_seats", "inventory", "quantity_available", "available")


def _reserve_stock(s: Schema, e: Entity, v: ToolView, pmap) -> list[A.Stmt]:
    """"Every book must have enough stock; the stock is reserved": each line (or the one
    referenced record with a quantity param, `book_reservation(flight_number, seats)`) needs
    that much stock, which the create takes. Only when the description speaks of stock/seats."""
    desc = (v.tool.description or "").lower()
    if not re.search(r"\b(stock|seats?|inventory|availab\w*)\b", desc):
        return []
    out: list[A.Stmt] = []

    for path, p in flat_params(v):
        fname = lines_field(s, e, p)
        if fname is None:
            continue
        po = pmap[path[0]]
        if po.optional or (len(path) > 1 and not p.required):
            continue
        src = N(po.name) if len(path) == 1 else at(po.name, ident(path[1]))
        rec = s.records[strip_optional(e.fields[fname].type).item.name]
        qty = next((q for q in QUANTITY_FIELDS if q in rec.fields), None)
        for rf, rfield in rec.fields.items():
            t = strip_optional(rfield.type)
            if qty and isinstance(t, A.NamedType) and t.name in s.entities:
                stock = _stock_field(s.entities[t.name])
                if stock:
                    held = A.Index(N(t.name), at("x", rf))
                    out.append(A.For("x", src, (
                        A.Let("held", held),
                        A.Require(bin_(">=", at("held", stock), at("x", qty)), f"not enough {stock}"),
                        A.Set(at("held", stock), bin_("-", at("held", stock), at("x", qty))),
                    )))
                    return out
    qparam = next((pmap[w] for w in pmap if w in ("seats", "quantity", "qty", "copies", "count", "passengers") and strip_optional(pmap[w].type) == A.PrimType("int") and not pmap[w].optional), None)
    if qparam is None:
        return out
    for wire, ent in v.refs.items():
        stock = _stock_field(s.entities[ent])
        if stock and not pmap[wire].optional:
            r = pmap[wire].name
            out += [
                A.Require(bin_(">", N(qparam.name), lit(0)), f"{qparam.name} must be positive"),
                A.Require(bin_(">=", at(r, stock), N(qparam.name)), f"not enough {stock}"),
                A.Set(at(r, stock), bin_("-", at(r, stock), N(qparam.name))),
            ]
            break
    return out


def _stock_field(e: Entity) -> str | None:
    return next((f for f in STOCK_FIELDS if f in e.fields and strip_optional(e.fields[f].type) == A.PrimType("int")), None)


DEBIT_VERBS = {"pay", "charge", "withdraw", "debit", "spend", "purchase", "buy"}
CREDIT_VERBS = {"add", "credit", "deposit", "refund", "top", "send", "give", "grant", "issue", "reward"}


def _balance(s: Schema, v: ToolView, pmap, k: str | None) -> list[A.Stmt] | None:
    """Money moves: `transfer(from_user, to_user, amount)`, `add_credit(user, amount)`,
    `pay_order(order)` (the order's total from its owner's balance) — with a balance check."""
    amt = amount_param(v)
    owners = [(w, ent) for w, ent in v.refs.items() if balance_field(s.entities[ent])]
    if k and v.target and balance_field(s.entities[v.target]):
        owners = [(v.key_param, v.target)] + owners
    if amt is not None and owners:
        path, _p = amt
        amount = N(pmap[path[0]].name) if len(path) == 1 else at(pmap[path[0]].name, ident(path[1]))
        same = [o for o in owners if o[1] == owners[0][1]]
        if len(same) >= 2 or v.verb == "transfer":
            if len(same) < 2:
                return None
            (w1, e1), (w2, _e2) = same[0], same[1]
            src, dst = pmap[w1].name, pmap[w2].name
            b = balance_field(s.entities[e1])
            return [
                A.Require(bin_(">", amount, lit(0)), "amount must be positive"),
                A.Require(bin_(">=", at(src, b), amount), "insufficient balance"),
                A.Set(at(src, b), bin_("-", at(src, b), amount)),
                A.Set(at(dst, b), bin_("+", at(dst, b), amount)),
            ]
        w, ent = owners[0]
        who = pmap[w].name
        b = balance_field(s.entities[ent])
        if v.verb in DEBIT_VERBS:
            return [
                A.Require(bin_(">", amount, lit(0)), "amount must be positive"),
                A.Require(bin_(">=", at(who, b), amount), "insufficient balance"),
                A.Set(at(who, b), bin_("-", at(who, b), amount)),
            ]
        if v.verb in CREDIT_VERBS or v.kind in ("create", "update"):
            return [A.Require(bin_(">", amount, lit(0)), "amount must be positive"), A.Set(at(who, b), bin_("+", at(who, b), amount))]
        return None
    if amt is None and k and v.target and v.verb in DEBIT_VERBS:
        # pay_order: the record's total, from the balance of the entity it references
        e = s.entities[v.target]
        total = next((f for f in ("total", "total_price", "amount", "price", "cost") if f in e.fields and isinstance(strip_optional(e.fields[f].type), A.PrimType)), None)
        if total is None:
            return None
        for fname, f in e.fields.items():
            t = strip_optional(f.type)
            if isinstance(t, A.NamedType) and t.name in s.entities and balance_field(s.entities[t.name]):
                b = balance_field(s.entities[t.name])
                out: list[A.Stmt] = []
                if isinstance(f.type, A.OptionalType):
                    out.append(A.Require(bin_("!=", at(k, fname), NULL), f"{e.name} has no {fname}"))
                out += [
                    A.Let("payer", A.Index(N(t.name), at(k, fname))),
                    A.Require(bin_(">=", at("payer", b), at(k, total)), "insufficient balance"),
                    A.Set(at("payer", b), bin_("-", at("payer", b), at(k, total))),
                ]
                return out
    return None


def _initial_status(s: Schema, e: Entity):
    f = e.fields.get("status")
    if f is None:
        return None
    t = strip_optional(f.type)
    return t.values[0] if isinstance(t, A.EnumType) and t.values else None


def _status_require(e: Entity, v: ToolView, k: str) -> list[A.Stmt]:
    out: list[A.Stmt] = []
    what = snake(e.name).replace("_", " ")
    if "status" not in e.fields:
        return out
    if v.status_pre:
        out.append(A.Require(bin_("==", at(k, "status"), lit(v.status_pre)), f"{what} is not {v.status_pre}"))
        return out
    if v.status_allowed:
        # "Cancel a pending or paid order": only those states allow it
        test = None
        for x in v.status_allowed:
            t = bin_("==", at(k, "status"), lit(x))
            test = t if test is None else bin_("or", test, t)
        out.append(A.Require(test, f"{what} is not {' or '.join(v.status_allowed)}"))
        return out
    for x in v.status_forbidden:
        out.append(A.Require(bin_("!=", at(k, "status"), lit(x)), f"{what} is {x}"))
    if v.status_post and v.status_post not in v.status_forbidden:
        out.append(A.Require(bin_("!=", at(k, "status"), lit(v.status_post)), f"{what} is already {v.status_post}"))
    return out


def _flag_forbids(e: Entity, v: ToolView, k: str) -> list[A.Stmt]:
    """A record's flag whose doc forbids the tool's act: `internal: bool` "Internal applications should not be
    deleted" -> deleting one requires `internal` false (review 51: a task deleted Gotify's internal app), cited. The
    tool's own docs may name the refusal instead: "returns the deletion result or a protected-branch ... error",
    "cannot delete a protected branch" (review 80: GitLab's protected branch deleted in the gold)."""
    out: list[A.Stmt] = []
    if not v.verb:
        return out
    noun = noun_pattern(e.name)
    own = prose.sentences(v.tool.description or "")
    for f in e.fields.values():
        if strip_optional(f.type) != A.PrimType("bool"):
            continue
        word = r"[\s_-]?".join(re.escape(w) for w in tokens(f.name) if w not in ("is", "has"))
        if not word:
            continue
        said = [sent for sent in prose.sentences(f.doc or "")
                if (m := re.search(rf"\b{word}\s+{noun}\s+(?:should\s+not|must\s+not|cannot|can\s*not|may\s+not|can't)\s+be\s+([a-z]+)", sent, re.I))
                and verb_base(m.group(1)) == v.verb]
        said = said or [sent for sent in own if re.search(
            rf"\b{word}[\s-]+{noun}\b[^.;]{{0,60}}?\berrors?\b|\b(?:cannot|can\s*not|can't|unable\s+to)\s+(?:be\s+)?"
            rf"{re.escape(v.verb)}\w*\s+(?:an?\s+|the\s+|any\s+)?{word}\s+{noun}", sent, re.I)]
        if said:
            st = A.Require(bin_("!=", at(k, f.name), lit(True)), f"{snake(e.name).replace('_', ' ')} is {humanize(f.name)}")
            v.cited.append((st, said[0]))
            out.append(st)
    return out


def _update(s: Schema, v: ToolView, pmap):
    if v.target is not None and v.key_param is None and (bp := batch_param(v)) is not None:
        return _batch_change(s, v, pmap, bp, "update")
    if v.target is not None and v.key_param is None and (bp := body_with_key(v)) is not None:
        return _batch_change(s, v, pmap, bp, "update", single=True)
    if v.target is None or v.key_param is None:
        raise _NoRule
    e = s.entities[v.target]
    k = _key_param(v, pmap)
    if v.link:
        return _link_change(s, e, v, pmap, k), A.NamedType(e.name)
    if v.status_flag:
        return _set_flag(e, v, pmap, k), A.NamedType(e.name)
    stmts: list[A.Stmt] = _status_require(e, v, k) + _flag_forbids(e, v, k)
    changes: list[A.Stmt] = []
    said = prose_effects.moves_money(s, e, v, pmap, k)
    money = None if said else _balance(s, v, pmap, k)  # the prose says which way money moves
    if money:
        changes += money
    grouped = set(v.group[2]) if v.group else set()
    if v.group:
        fname, rname, ps = v.group
        changes.append(A.Set(at(k, fname), A.RecordLit(tuple(A.FieldInit(ident(p), N(pmap[p].name)) for p in ps))))
    changes += _param_changes(s, e, v, pmap, k, grouped, bool(money) or said)
    changes += _from_prose(s, e, v, pmap, k, changes, stmts)
    stmts += _same_field(s, e, v, pmap, k)
    changes += _capacity(s, e, v, pmap, k, changes)
    used = {w for w in pmap if _mentions(changes, pmap[w].name)}
    if MEMBERSHIP_CHECKS:
        stmts += _membership(s, e, v, pmap, k, used)
    if v.status_post and "status" in e.fields:
        changes.append(A.Set(at(k, "status"), lit(v.status_post)))
    if not changes:
        raise _NoRule
    return stmts + changes + [A.Return(N(k))], A.NamedType(e.name)


def _link_change(s: Schema, e: Entity, v: ToolView, pmap, k: str) -> list[A.Stmt]:
    """The members a link tool names join the container's list once each (`firewall_add_droplets`), or leave it,
    each one required to be there ("droplet is not in that firewall"); the members themselves stay as they are
    (`schema._links`)."""
    wire, fname, adding = v.link
    p = pmap[wire]
    keys = stored(s, N(p.name), p.type)
    many = isinstance(strip_optional(p.type), A.ListType)
    field = at(k, fname)
    what = snake(e.name).replace("_", " ")
    item = strip_optional(p.type)
    item = strip_optional(item.item) if isinstance(item, A.ListType) else item
    member = snake(item.name).replace("_", " ") if isinstance(item, A.NamedType) else humanize(singular(wire))
    member = ("a " if many else "the ") + member

    def one(x: A.Expr) -> tuple[A.Stmt, ...]:
        if adding:
            return (A.If(bin_("not in", x, field), (A.Append(field, x),)),)
        return (A.Require(bin_("in", x, field), f"{member} is not in the {what}"), A.Remove(field, x))

    body: list[A.Stmt] = [A.If(bin_("==", field, NULL), (A.Set(field, A.ListLit(())),))]
    body += [A.For("x", keys, one(N("x")))] if many else list(one(keys))
    return body + [A.Return(N(k))]


def _param_changes(s: Schema, e: Entity, v: ToolView, pmap, k: str, grouped: set[str], money: bool) -> list[A.Stmt]:
    """The field writes of an update: each param that names a field of the record (or, for a
    reference, the one field that references its entity) and has the field's type sets it."""
    flat = flat_exprs(s, v, pmap)
    wires = {w for w, *_ in flat}
    by_wire = {w: x for w, *x in flat}
    sets_lists = v.verb in ("update", "modify", "set", "replace", "change", "edit", "save", "patch", None)
    changes: list[A.Stmt] = []
    for wire, fname, expr, ptype, nullable, guard in flat:
        if wire == v.key_param or wire in grouped or _modifier(v, wire):
            continue
        if (money and wire in AMOUNT_PARAMS) or wire in prose.amounts(v.facts):
            continue
        if wire in v.refs and prose.says_own_change(v) and not any(f.kind == "record" and ident(f.field) == ident(wire) for f in v.facts):
            continue  # the docs say what changes; an owner's id passed along is no new value
        pair = "new_" + wire
        if pair in wires and fname in e.fields and isinstance(strip_optional(ptype), A.ListType) and isinstance(strip_optional(by_wire[pair][2]), A.ListType):
            changes += _exchange(at(k, fname), wire, expr, pair, by_wire[pair][1])
            continue
        if wire.startswith("new_") and wire[4:] in wires:
            continue
        fname = field_named(e, fname) or fname  # `FriendlyName` sets `friendly_name`
        if fname not in e.fields and (rest := after_kind(e.name, wire)):
            fname = field_named(e, rest) or rest  # a project's `project_name` is its `name`
        if fname not in e.fields and wire in v.refs and ref_field(e, v.refs[wire]):
            fname = ref_field(e, v.refs[wire])  # assign_ticket(agent_id) sets `assignee_id: Agent`
        if fname not in e.fields or fname == e.key:
            continue
        if wire in v.refs and not (v.field_noun and _noun_matches(v.field_noun, v.refs[wire])) and len(v.tool.params) != 2:
            continue
        ftype = e.fields[fname].type
        if isinstance(strip_optional(ftype), A.ListType) and not sets_lists:
            if v.verb in ("add", "append", "attach", "include", "stage") and _type_eq(strip_optional(ftype), strip_optional(ptype)) and not nullable:
                # `git_add(repo_path, files)`: each element joins the record's list once
                changes.append(A.For("x", expr, (A.If(bin_("not in", N("x"), at(k, fname)), (A.Append(at(k, fname), N("x")),)),)))
            continue
        if not _fills(s, strip_optional(ftype), strip_optional(ptype)):
            continue
        if strip_optional(ftype) == A.PrimType("int") and strip_optional(ptype) == A.PrimType("float"):
            continue  # a float does not fit an int field (another tool documented it as an integer)
        st = A.Set(at(k, fname), expr)
        if nullable:  # an argument left out leaves the field as it is (a partial update), never blanks it
            changes.append(A.If(bin_("!=", guard, NULL), (st,)))
        else:
            changes.append(st)
    return changes


def _from_prose(s: Schema, e: Entity, v: ToolView, pmap, k: str, made: list[A.Stmt], requires: list[A.Stmt]) -> list[A.Stmt]:
    """The writes the description states (forgec/synth/prose.py), each cited; a precondition
    joins `requires`, a statement already in `made` is only cited."""
    out: list[A.Stmt] = []
    for st, why in prose_effects.changes(s, e, v, pmap, k, made):
        v.cited.append((st, why))
        if any(x is st for x in made + requires + out):
            continue
        (requires if isinstance(st, A.Require) else out).append(st)
    return out


def _exchange(target: A.Expr, wire: str, old: A.Expr, pair: str, new: A.Expr) -> list[A.Stmt]:
    """Exchange `wire` for `new_<wire>` inside the record's list: one for one, and only items
    the record holds (a real order rejects an item it does not contain)."""
    # NOTE: a real system would also `require x in` the record's list; the verifier's
    # argument generator samples list references from the whole table, so such a tool
    # would never verify (see docs/synthesis.md, "Known limits")
    return [
        A.Require(bin_("==", A.Call("len", (old,)), A.Call("len", (new,))), f"each {wire} needs a {pair}"),
        A.For("x", old, (A.If(bin_("in", N("x"), target), (A.Remove(target, N("x")),)),)),
        A.For("x", new, (A.Append(target, N("x")),)),
    ]

# Off until the verifier draws list-reference arguments from the key record's own list (with
# random samples from the whole table, `return_delivered_order_items` never verifies).
MEMBERSHIP_CHECKS = False


def _refund(s: Schema, e: Entity, v: ToolView, k: str) -> list[A.Stmt]:
    """"Cancel a reservation and refund its total price to the owner's balance": the record's
    total goes back to the balance of the entity it references; "a paid order's total is
    refunded" only when the status is "paid" (read before the status changes)."""
    desc = (v.tool.description or "").lower()
    if not re.search(r"\brefund", desc) or not re.search(r"\b(balance|credit)\b", desc):
        return []
    total = next((f for f in ("total", "total_price", "amount", "price", "cost") if f in e.fields and strip_optional(e.fields[f].type) in (A.PrimType("float"), A.PrimType("int"))), None)
    if total is None:
        return []
    for fname, f in e.fields.items():
        t = strip_optional(f.type)
        if not (isinstance(t, A.NamedType) and t.name in s.entities and balance_field(s.entities[t.name])) or isinstance(f.type, A.OptionalType):
            continue
        b = balance_field(s.entities[t.name])
        body = (A.Let("payer", A.Index(N(t.name), at(k, fname))), A.Set(at("payer", b), bin_("+", at("payer", b), at(k, total))))
        word = " ".join(tokens(e.name))
        m = re.search(rf"\b(?:a|an|the)\s+([a-z_-]+)\s+{re.escape(word)}'s\s+(?:total|price|amount)", desc)
        vals = [x for x in (strip_optional(e.fields["status"].type).values if "status" in e.fields and isinstance(strip_optional(e.fields["status"].type), A.EnumType) else ())]
        if m:
            hit = next((x for x in vals if x.replace("_", " ") == m.group(1).replace("-", " ")), None)
            if hit is None:
                return []  # refunded only in a state the enum does not name: no guess
            return [A.If(bin_("==", at(k, "status"), lit(hit)), body)]
        if re.search(r"\b(if|when|unless)\b[^.]*\brefund|\brefund[^.]*\b(if|when|unless)\b", desc):
            return []  # a condition the rules cannot read (tau retail: gift card vs. card)
        return list(body)
    return []


def _restock(s: Schema, e: Entity, v: ToolView, k: str) -> list[A.Stmt]:
    """"Reserved stock goes back to the shelf": each line's quantity returns to its record."""
    desc = (v.tool.description or "").lower()
    if not re.search(r"\b(stock|seats?|inventory)\b[^.]*\b(back|returns?|released?|restored?)\b", desc):
        return []
    for fname, f in e.fields.items():
        t = strip_optional(f.type)
        if not (isinstance(t, A.ListType) and isinstance(t.item, A.NamedType) and t.item.name in s.records):
            continue
        rec = s.records[t.item.name]
        qty = next((q for q in QUANTITY_FIELDS if q in rec.fields), None)
        for rf, rfield in rec.fields.items():
            rt = strip_optional(rfield.type)
            if qty and isinstance(rt, A.NamedType) and rt.name in s.entities and _stock_field(s.entities[rt.name]) and not isinstance(rfield.type, A.OptionalType):
                stock = _stock_field(s.entities[rt.name])
                return [A.For("x", at(k, fname), (A.Let("held", A.Index(N(rt.name), at("x", rf))), A.Set(at("held", stock), bin_("+", at("held", stock), at("x", qty)))))]
    return []


def _same_field(s: Schema, e: Entity, v: ToolView, pmap, k: str) -> list[A.Stmt]:
    """"Assign a ticket to an agent of the ticket's team": `require agent_id.team == ticket_id.team`
    (a field both records have, named after the target's possessive)."""
    desc = (v.tool.description or "").lower()
    word = " ".join(tokens(e.name))
    out: list[A.Stmt] = []
    for m in re.finditer(rf"\b(?:a|an|the)\s+(\w+)\s+(?:of|from|in)\s+the\s+{re.escape(word)}'s\s+(\w+)", desc):
        for wire, ent in v.refs.items():
            f = ident(m.group(2))
            other = s.entities[ent]
            if " ".join(tokens(ent)) != m.group(1) or f not in e.fields or f not in other.fields or wire not in pmap or pmap[wire].optional:
                continue
            if not _type_eq(strip_optional(e.fields[f].type), strip_optional(other.fields[f].type)):
                continue
            r = pmap[wire].name
            out.append(A.Require(bin_("==", at(r, f), at(k, f)), f"{m.group(1)} is not of the {word}'s {f}"))
    return out


CAP_WORDS = re.compile(r"\b(cap|capacity|limit|at most|maximum|workload)\b")
FREE_WORDS = re.compile(r"\bfrees?\b|\breleases?\b")


def _counter_pair(e: Entity) -> tuple[str, str] | None:
    """(`open_tickets`, `max_open_tickets`): a count and its cap, both ints, on one entity."""
    for n, f in e.fields.items():
        cap = e.fields.get("max_" + n)
        if cap is not None and strip_optional(f.type) == A.PrimType("int") and strip_optional(cap.type) == A.PrimType("int"):
            return n, "max_" + n
    return None


def _capacity(s: Schema, e: Entity, v: ToolView, pmap, k: str, changes: list[A.Stmt]) -> list[A.Stmt]:
    """A count with a documented cap follows the links that use it: `assign_ticket(agent_id)`
    "fails if the agent is at their workload cap" takes a slot (and frees the previous
    assignee's); `resolve_ticket` "frees a slot in the assignee's workload" gives it back."""
    desc = (v.tool.description or "").lower()
    out: list[A.Stmt] = []
    for wire, ent in v.refs.items():
        pair = _counter_pair(s.entities[ent])
        fname = ref_field(e, ent)
        if pair is None or fname is None or not CAP_WORDS.search(desc) or wire not in pmap or pmap[wire].optional:
            continue
        sets = [st for st in changes if isinstance(st, A.Set) and st.target == at(k, fname)]
        if not sets:
            continue
        n, cap = pair
        r = pmap[wire].name
        pos = changes.index(sets[0])
        head: list[A.Stmt] = []
        if isinstance(e.fields[fname].type, A.OptionalType):
            # the previous holder's slot first: re-assigning to the same agent stays within the cap
            head.append(A.If(bin_("!=", at(k, fname), NULL), (A.Let("previous", A.Index(N(ent), at(k, fname))), A.Set(at("previous", n), bin_("-", at("previous", n), lit(1))))))
        head.append(A.Require(bin_("<", at(r, n), at(r, cap)), f"{snake(ent).replace('_', ' ')} is at their {cap.replace('_', ' ')}"))
        changes[pos:pos] = head
        out.append(A.Set(at(r, n), bin_("+", at(r, n), lit(1))))
        return out
    if FREE_WORDS.search(desc) and re.search(r"\bslot\b|\bworkload\b|\bcapacity\b", desc):
        for fname, f in e.fields.items():
            t = strip_optional(f.type)
            if isinstance(t, A.NamedType) and t.name in s.entities and _counter_pair(s.entities[t.name]):
                n, _cap = _counter_pair(s.entities[t.name])
                give_back = (A.Let("holder", A.Index(N(t.name), at(k, fname))), A.Set(at("holder", n), bin_("-", at("holder", n), lit(1))))
                out += [A.If(bin_("!=", at(k, fname), NULL), give_back)] if isinstance(f.type, A.OptionalType) else list(give_back)
                break
    return out


def _membership(s: Schema, e: Entity, v: ToolView, pmap, k: str, used: set[str]) -> list[A.Stmt]:
    """`return_delivered_order_items(order_id, item_ids)`: the items must be the order's own —
    a list of references the effect does not otherwise use, checked against the one list
    field of the record that holds that entity."""
    out: list[A.Stmt] = []
    for wire, ent in v.list_refs.items():
        if wire in used or wire not in pmap or pmap[wire].optional:
            continue
        holders = [n for n, f in e.fields.items() if strip_optional(f.type) == A.ListType(A.NamedType(ent))]
        if len(holders) != 1:
            continue
        what = snake(e.name).replace("_", " ")
        out.append(A.For("x", stored(s, N(pmap[wire].name), pmap[wire].type), (A.Require(bin_("in", N("x"), at(k, holders[0])), f"an item of {wire} is not in the {what}'s {holders[0]}"),)))
    return out


def _mentions(stmts, name: str) -> bool:
    """Whether a bare name occurs anywhere in the statements (dataclass walk)."""
    import dataclasses

    def walk(x) -> bool:
        if isinstance(x, A.Name):
            return x.id == name
        if isinstance(x, (list, tuple)):
            return any(walk(y) for y in x)
        if dataclasses.is_dataclass(x):
            return any(walk(getattr(x, f.name)) for f in dataclasses.fields(x))
        return False

    return walk(stmts)


def _noun_matches(noun: str, entity: str) -> bool:
    nt = tokens(noun)
    et = tokens(entity)
    return bool(nt) and bool(et) and (nt[0] == et[0] or singular(nt[-1]) == et[-1])


_REMOVE_FROM = re.compile(r"\b(?:remove|delete|unlink|detach|kick)s?\s+(?:an? |the |one or more |multiple |several |all )?(\w+)(?: \w+)?\s+"
                          r"from\s+(?:an? |the |a given |this )?(\w+)", re.I)


_CASCADE = re.compile(r"\b(?:and|along with|together with|as well as|including)\s+(?:all\s+)?(?:of\s+)?(?:its|their|the associated|associated|related)"
                      r"\s+([a-z][a-z ,]*?)(?=\s*(?:[.;:(]|$|\b(?:from|in|for|permanently)\b))", re.I)


_LISTED_AFTER = re.compile(r"\s*\(([a-z][a-z ,]*)\)", re.I)
_COLLECTIVE = frozenset({"data", "content", "contents", "records", "resources", "objects", "items", "information", "entities", "children"})


def _optional_holders(s: Schema, ent: str) -> list[tuple[str, str]]:
    """(entity, field) of every other record's optional reference to `ent`."""
    return [(oname, fname) for oname, oe in sorted(s.entities.items()) if oname != ent
            for fname, fd in oe.fields.items() if fname != oe.key and isinstance(fd.type, A.OptionalType) and fd.type.inner == A.NamedType(ent)]


_SUB_CASCADE = re.compile(r"\b(sub[a-z]+|child(?:ren)?|nested [a-z]+)\s+(?:are|is|will be|get|gets)\s+(?:also\s+)?(?:deleted|removed)\b", re.I)


def _sub_cascade(s: Schema, e: Entity, v: ToolView) -> list[A.Stmt]:
    """"Subcollections ARE deleted along with the parent" (Zotero): the records of the same kind inside the deleted one
    go with it, by the record's one reference to its own kind (review 77: a sub-collection kept after its parent's
    delete). Three levels, unrolled: the effect language has no recursion."""
    m = _SUB_CASCADE.search(v.tool.description or "")
    if not m:
        return []
    w = m.group(1).lower().split()[-1]
    own = snake(e.name).split("_")[-1]
    if not (w.startswith("child") or singular(w.removeprefix("sub")) == own or singular(w) == own):
        return []
    up = [f for f, fd in e.fields.items() if f != e.key and strip_optional(fd.type) == A.NamedType(e.name)]
    if len(up) != 1:
        return []
    # three levels unrolled (a sub-collection's sub-collections go too: review 79 found grandchildren left pointing at a
    # deleted parent), deepest first so each loop reads records still there
    key = e.key
    great = A.For("great", A.Where(N(e.name), bin_("==", at("it", up[0]), at("grand", key))), (A.Delete(N("great")),))
    grand = A.For("grand", A.Where(N(e.name), bin_("==", at("it", up[0]), at("child", key))), (great, A.Delete(N("grand"))))
    return [A.For("child", A.Where(N(e.name), bin_("==", at("it", up[0]), N("removed"))), (grand, A.Delete(N("child"))))]


# a switch whose docs say the call does nothing without it: "When False (default), the tool refuses and returns an impact
# preview. Pass True to actually delete." (Redmine), "refuses unless confirm=true"
_REFUSED_WITHOUT = re.compile(r"\bwhen\s+\W*false\W*\s*(?:\(default\))?,?\s+the\s+(?:tool|call|request)\s+(?:refuses|fails|does\s+nothing)|"
                              r"\bpass\s+\W*true\W*\s+to\s+actually\b|\brefuses\b[^.]{0,40}\bunless\b[^.]{0,40}\btrue\b", re.I)


def _confirmed(v: ToolView, pmap) -> list[A.Stmt]:
    """A delete made only with its confirmation switch on, where the docs say it refuses without (review: Redmine's
    `confirm_delete`, left out of the gold, which deleted anyway). The sampler sends it (`is_confirm_switch`)."""
    out: list[A.Stmt] = []
    for p in v.tool.params:
        if p.type.kind == "boolean" and p.name in pmap and is_confirm_switch(p.name) and _REFUSED_WITHOUT.search(p.description or ""):
            st = A.Require(bin_("==", N(pmap[p.name].name), lit(True)), f"{humanize(p.name)} is needed to go ahead")
            v.cited.append((st, prose.sentences(p.description)[0]))
            out.append(st)
    return out


# a delete the docs refuse while the record holds others: "The folder must be empty first", "Project cannot be
# deleted. The project still contains repositories or has pending tasks." (Harbor's 412 response)
_EMPTY_FIRST = re.compile(r"\b(?:must|should|has\s+to|needs?\s+to)\s+be\s+empty\b|\b(?:is|are)\s+not\s+empty\b|"
                          r"\bstill\s+(?:contains?|has|holds?|includes?)\s+(?P<kinds>[^.;]+)|"
                          r"\b(?:cannot|can\s*not|can't)\s+be\s+deleted\s+(?:while|if|when|as\s+long\s+as)\s+it\s+"
                          r"(?:still\s+)?(?:contains?|has|holds?|includes?)\s+(?P<kinds2>[^.;]+)", re.I)


def _link_field(child: Entity, parent: str, prefer: str | None = None) -> str | None:
    """The one field of `child` that points to a `parent` record: `prefer` where it is one of them, else the only one,
    else the only `..._id` among several (`project_id` beside `project_name`: the id holds the link)."""
    links = [x for x, fd in child.fields.items() if x != child.key and strip_optional(fd.type) == A.NamedType(parent)]
    if prefer in links:
        return prefer
    by_id = [x for x in links if tokens(x)[-1:] == ["id"]]
    return links[0] if len(links) == 1 else by_id[0] if len(by_id) == 1 else None


def _empty_first(s: Schema, e: Entity, v: ToolView, k: str) -> list[A.Stmt]:
    """A delete its docs refuse while the record still holds records: each kind that points to it (named, where the
    docs name kinds, "still contains repositories") must have none left, cited. Read from the tool's own text and
    from what its documented error responses say (`refusals`: OpenAPI 4xx descriptions). Without this the gold
    deleted Harbor projects that held repositories (review 83)."""
    texts = prose.sentences(v.tool.description or "") + [x for r in v.tool.annotations.get("refusals") or () for x in prose.sentences(r)]
    out: list[A.Stmt] = []
    what = snake(e.name).replace("_", " ")
    kids = [(c, f) for c, ce in sorted(s.entities.items()) if c != e.name and (f := _link_field(ce, e.name)) is not None]
    for sent in texts:
        m = _EMPTY_FIRST.search(sent)
        if not m:
            continue
        named = m.group("kinds") or m.group("kinds2")
        if named:
            words = {singular(w) for w in re.findall(r"[a-z]+", named.lower())}
            pick = [(c, f) for c, f in kids if singular(tokens(c)[-1]) in words]
        else:
            pick = kids
        for c, f in pick:
            noun = " ".join(tokens(c))
            cond = bin_("==", at("it", f), at(k, e.key))
            said = re.search(rf"\b(\w+)\s+{re.escape(tokens(c)[-1])}", named or "", re.I)
            qual = said.group(1).lower() if said and said.group(1).lower() not in ("any", "some", "other", "its", "their", "the", "or", "and", "has", "have", "contains", "of") else None
            if qual:  # "has pending tasks": only the tasks in that state, where the child's status has it; else no rule
                st_t = strip_optional(s.entities[c].fields["status"].type) if "status" in s.entities[c].fields else None
                if not (isinstance(st_t, A.EnumType) and qual in st_t.values):
                    continue
                cond = bin_("and", cond, bin_("==", at("it", "status"), lit(qual)))
                noun = f"{qual} {noun}"
            st = A.Require(bin_("==", A.Call("len", (A.Where(N(c), cond),)), lit(0)), f"{what} still has {plural(noun)}")
            if not any(isinstance(x, A.Require) and x.message == st.message for x in out):
                v.cited.append((st, sent))
                out.append(st)
    return out


def _cascade(s: Schema, e: Entity, v: ToolView) -> list[A.Stmt]:
    """"Delete a book and all its reviews, quotes, and tags": the records of those kinds that point to the deleted
    one go with it (review 32: a deleted book left its quotes behind). Only kinds the env has, by their one field
    pointing to `e`."""
    text = v.tool.description or ""
    m = _CASCADE.search(text)
    if not m:
        return _sub_cascade(s, e, v)
    kinds = m.group(1)
    if (listed := _LISTED_AFTER.match(text, m.end())) and kinds.split()[-1].lower() in _COLLECTIVE:
        kinds = listed.group(1)  # "and all its associated data (tags, highlights, assets)" (Karakeep): the kinds are listed
    out: list[A.Stmt] = []
    for word in re.split(r"\s*(?:,|\band\b|\bor\b)\s*", kinds):
        ws = word.split()
        if not ws:
            continue
        child = next((c for c in (pascal(singular(snake("_".join(ws)))), pascal(singular(ws[-1]))) if c in s.entities and c != e.name), None)
        if child is None:
            continue
        ce = s.entities[child]
        to_e = [f for f, fd in ce.fields.items() if f != ce.key and strip_optional(fd.type) == A.NamedType(e.name)]
        if len(to_e) == 1:
            out.append(A.For("child", A.Where(N(child), bin_("==", at("it", to_e[0]), N("removed"))), (A.Delete(N("child")),)))
    return out


def _set_flag(e: Entity, v: ToolView, pmap, k: str) -> list[A.Stmt]:
    """An archive (or cancel, or lock) on a record whose docs give the state as its own bool (`isArchived`): the bool is
    set, and a tool that does both ways by a documented action ("Archive or unarchive a project", `action: archive |
    unarchive`) sets it to whether the action is the verb (review 43: doist's unarchive archived)."""
    flag = v.status_flag
    word = re.sub(r"^is[_ ]?", "", snake(flag)).replace("_", " ")
    what = snake(e.name).replace("_", " ")
    for p in pmap.values():
        t = strip_optional(p.type)
        if v.verb and isinstance(t, A.EnumType) and v.verb in t.values and any(x == "un" + v.verb for x in t.values):
            return [A.Set(at(k, flag), bin_("==", N(p.name), lit(v.verb))), A.Return(N(k))]
    on = v.flag_on
    return [A.Require(bin_("!=", at(k, flag), lit(on)), f"{what} is {'already' if on else 'not'} {word}"), A.Set(at(k, flag), lit(on)), A.Return(N(k))]


# the verbs that take a record out of another and keep it ("remove a bookmark from a list"); "delete a branch from
# a project" deletes the branch
_UNLINK_VERBS = {"remove", "unlink", "detach", "dissociate", "unassign"}


def _unlink(s: Schema, e: Entity, v: ToolView, pmap, where: str):
    """"Remove a bookmark from a list": the bookmark leaves the list and stays (review 62: every such removal deleted
    the bookmark). Where the record holds its one link to the other (`listId`, made optional), the link must be to the
    one named and is cleared; any other way the docs keep the pair is unknown here, so no rule (the call is logged)."""
    named = [(p, ent) for p, ent in v.refs.items() if p != v.key_param and p in pmap and _noun_matches(where, ent)]
    if len(named) != 1:
        raise _NoRule
    p, ent = named[0]
    link = [f for f, fd in e.fields.items() if f != e.key and strip_optional(fd.type) == A.NamedType(ent)]
    if len(link) != 1:
        raise _NoRule
    k, f = _key_param(v, pmap), link[0]
    if not isinstance(e.fields[f].type, A.OptionalType):
        e.fields[f].type = A.OptionalType(e.fields[f].type)  # a bookmark out of every list has none
    what, other = snake(e.name).replace("_", " "), snake(ent).replace("_", " ")
    return [A.Require(bin_("==", at(k, f), at(pmap[p].name, s.entities[ent].key)), f"{what} is not in that {other}"),
            A.Set(at(k, f), lit(None)), A.Return(N(k))], A.NamedType(e.name)


_TO_TRASH = re.compile(r"\s*(?:moves?|sends?|puts?)\b[^.]{0,50}\bto (?:the |its )?(?:trash|recycle bin|bin)\b|\s*trash(?:es)? (?:an?|the) |"
                       # Microsoft Graph's "This is a soft delete that moves the message to Deleted Items"
                       r"[^\n]*\bsoft[- ]delete\b[^.]{0,40}\bmoves?\b[^.]{0,30}\bto (?:the )?(?:trash|deleted items|recycle bin)\b", re.I)


def _trash_switch(e, v: ToolView, pmap) -> str | None:
    """The bool that makes a delete permanent where the docs say it otherwise moves the record to the trash
    (WordPress's `force`: "Defaults to false (moved to trash)"; an email's `permanent`: "skip Trash"): a delete without
    it leaves the record in the trash (`_to_trash`; review 74: the gold removed a trashed post for good)."""
    for p in v.tool.params:
        d = p.description or ""
        if p.type.kind == "boolean" and p.name in pmap and re.search(r"\btrash", d, re.I) and re.search(r"\b(?:force|permanent\w*|bypass|skip)", d, re.I):
            return pmap[p.name].name
    return None


def _to_trash(e: Entity, k: str) -> A.Stmt:
    """What a delete the docs say moves the record to the trash does without its `force`: the record's status becomes
    "trash" where its status can be that, else its own `trashed` flag is set (WordPress's pages, whose documented
    states are "publish, draft, pending, private" and whose delete "If false, move to trash"; an email's "By default
    moves to Trash"; both had been removed for good). A documented enum is not grown: other tools return it."""
    f = e.fields.get("status")
    t = strip_optional(f.type) if f is not None else None
    if t == A.PrimType("str") or isinstance(t, A.EnumType) and "trash" in t.values:
        return A.Set(at(k, "status"), lit("trash"))
    flag = status_flag(e, "trashed") or "trashed"
    if flag not in e.fields:
        what = snake(e.name).replace("_", " ")
        e.fields[flag] = Field(flag, A.PrimType("bool"), f"whether the {what} is in the trash")
    return A.Set(at(k, flag), lit(True))


def _delete(s: Schema, v: ToolView, pmap):
    if v.target is not None and v.key_param is None and (bp := batch_param(v)) is not None:
        return _batch_change(s, v, pmap, bp, "delete")
    if v.target is not None and v.key_param is None and (bp := body_with_key(v)) is not None:
        return _batch_change(s, v, pmap, bp, "delete", single=True)
    if v.target is None or v.key_param is None:
        raise _NoRule
    e = s.entities[v.target]
    if v.status_flag:
        return _set_flag(e, v, pmap, _key_param(v, pmap)), A.NamedType(e.name)
    m = _REMOVE_FROM.search(v.tool.description or "")
    if m and _noun_matches(m.group(2), e.name) and not _noun_matches(m.group(1), e.name):
        raise _NoRule  # "Remove a user from a team": the user leaves it; the team is not deleted (review 22); "Remove one
        # or more rules from a firewall" deletes no firewall (DigitalOcean's had, with the rules passed as a list)
    if m and _noun_matches(m.group(1), e.name) and not _noun_matches(m.group(2), e.name) \
            and (v.verb in _UNLINK_VERBS or re.sub(r"s$", "", m.group(0).split()[0].lower()) in _UNLINK_VERBS):
        # the docs' own verb ("Remove a bookmark from a list"), whatever the HTTP method (`DELETE /lists/{id}/bookmarks`)
        return _unlink(s, e, v, pmap, m.group(2))
    k = _key_param(v, pmap)
    if v.status_post and "status" in e.fields:
        stmts = _status_require(e, v, k) + _flag_forbids(e, v, k)
        for wire, fname, expr, ptype, nullable, guard in flat_exprs(s, v, pmap):
            # the documented extras of a cancellation (`reason`, also inside a request body)
            fname = field_named(e, fname) or fname
            if wire == v.key_param or fname not in e.fields or fname == e.key or fname == "status":
                continue
            if wire in v.refs and prose.says_own_change(v):
                continue  # the docs say what changes; a record passed along is no stored extra
            if not _type_eq(strip_optional(e.fields[fname].type), strip_optional(ptype)):
                continue
            if strip_optional(e.fields[fname].type) == A.PrimType("int") and strip_optional(ptype) == A.PrimType("float"):
                continue  # a float does not fit an int field
            st = A.Set(at(k, fname), expr)
            if nullable:  # an extra left out leaves the field as it is, never blanks it (review 50: cancelling a
                # deployment set its `slug` to null, so an agent that passed the slug failed the state check)
                st = A.If(bin_("!=", guard, NULL), (st,))
            root = expr.obj if isinstance(expr, A.Attr) and isinstance(expr.obj, A.Name) else None
            if root is not None and any(p.name == root.id and p.optional for p in pmap.values()):
                st = A.If(bin_("!=", root, NULL), (st,))  # a field of an optional request body
            stmts.append(st)
        stmts += _refund(s, e, v, k) + _restock(s, e, v, k)
        stmts += _from_prose(s, e, v, pmap, k, stmts, stmts)
        stmts.append(A.Set(at(k, "status"), lit(v.status_post)))
        return stmts + [A.Return(N(k))], A.NamedType(e.name)
    what = snake(e.name).replace("_", " ")
    stmts = [A.Require(bin_("!=", at(k, "status"), lit(x)), f"{what} is {x}") for x in v.status_forbidden if "status" in e.fields]
    stmts += _confirmed(v, pmap) + _flag_forbids(e, v, k) + _empty_first(s, e, v, k)
    if _trash_switch(e, v, pmap) is None and _TO_TRASH.match(v.tool.description or "") and (
            "status" not in e.fields or "trash" not in str(e.fields["status"].type)):  # (a status with a "trash" state holds it)
        # "Move a Zotero item to the Trash ... Trashed items are recoverable": the record stays, marked (review 77: the
        # gold removed the item outright)
        flag = status_flag(e, "trashed") or "trashed"
        if flag not in e.fields:
            e.fields[flag] = Field(flag, A.PrimType("bool"), f"whether the {what} is in the trash (`{v.tool.name}` moves it there)")
        if strip_optional(e.fields[flag].type) == A.PrimType("bool"):
            return stmts + [A.Require(bin_("!=", at(k, flag), lit(True)), f"{what} is already in the trash"),
                            A.Set(at(k, flag), lit(True)), A.Return(N(k))], A.NamedType(e.name)
    stmts.append(A.Let("removed", at(k, e.key)))  # "does not allow deleting completed tasks": refused first
    for oname, fname in s.list_owners(e.name):
        # drop the deleted key from every list that references it (no dangling references)
        stmts.append(A.For("owner", A.Where(N(oname), bin_("in", at(k, e.key), at("it", fname))), (A.Remove(at("owner", fname), at(k, e.key)),)))
    force = _trash_switch(e, v, pmap)
    hard = _cascade(s, e, v) + [A.Delete(N(k))]
    if force is not None:  # "If true, the comment will be permanently deleted. Defaults to false (moved to trash)."
        owners = [st for st in stmts if isinstance(st, A.For)]
        stmts = [st for st in stmts if not isinstance(st, A.For)]
        stmts.append(A.If(bin_("==", N(force), lit(True)), tuple(owners + hard), (_to_trash(e, k),)))
    else:
        stmts += hard
    ret = A.RecordType((A.FieldDecl("deleted", A.PrimType(e.key_type)),))
    stmts.append(A.Return(A.RecordLit((A.FieldInit("deleted", N("removed")),))))
    return stmts, ret


def _action(s: Schema, v: ToolView, pmap):
    if v.target and v.key_param and v.status_flag and v.target in s.entities:
        return _set_flag(s.entities[v.target], v, pmap, _key_param(v, pmap)), A.NamedType(v.target)
    if v.target and v.key_param:
        money = _balance(s, v, pmap, _key_param(v, pmap))
        if money:
            return money + [A.Return(N(_key_param(v, pmap)))], A.NamedType(v.target)
        from .lifecycle import status_move  # interrupt / restart / stop ... move the documented state

        moved = status_move(s, v, _key_param(v, pmap))
        if moved:
            return moved + [A.Return(N(_key_param(v, pmap)))], A.NamedType(v.target)
    if v.target is None and _no_change(v):
        # `think`: documented as changing nothing; it echoes its input
        ps = list(pmap.values())
        if len(ps) == 1 and strip_optional(ps[0].type) == STR:
            return [A.Return(N(ps[0].name))], ps[0].type
    if v.target is None and v.tool.returns is not None:
        return _computed(s, v, pmap)
    raise _NoRule


# the effect rule of each tool kind (`action` for any other kind)
EFFECT_OF_KIND = {"read": _read, "search": _search, "create": _create, "update": _update, "delete": _delete, "action": _action}


def _no_change(v: ToolView) -> bool:

    return no_change_desc(v.tool.description)


def _computed(s: Schema, v: ToolView, pmap):
    """A documented return shape filled from params, globals (the clock) and defaults."""
    ret = v.tool.returns
    if ret is None or v.tool.returns.kind not in ("object", "ref"):
        raise _NoRule
    tm = TypeMapper(s)
    rtype = tm.map(ret, "_".join(v.nouns) + "_result" if v.nouns else v.name + "_result")
    used = [0]
    expr = _fill(s, strip_optional(rtype), pmap, used, 0)
    if used[0] == 0 or not _complete(s, strip_optional(rtype), expr):
        raise _NoRule
    return [A.Return(expr)], rtype


def _complete(s: Schema, t: A.TypeExpr, e: A.Expr) -> bool:
    """No null where the type does not allow one (a required reference has no default)."""
    if e == NULL:
        return isinstance(t, A.OptionalType) or t == ANY
    t = strip_optional(t)
    if isinstance(e, A.RecordLit) and isinstance(t, A.NamedType) and t.name in s.records:
        fs = s.records[t.name].fields
        return all(fi.name in fs and _complete(s, fs[fi.name].type, fi.value) for fi in e.fields)
    return True


def _fill(s: Schema, t: A.TypeExpr, pmap, used, depth) -> A.Expr:
    if isinstance(t, A.NamedType) and t.name in s.records and depth < 3:
        rec = s.records[t.name]
        inits = []
        for fname, f in rec.fields.items():
            inits.append(A.FieldInit(fname, _fill_field(s, fname, f.type, pmap, used, depth)))
        return A.RecordLit(tuple(inits))
    return default_value(s, t)


def _fill_field(s: Schema, fname: str, t: A.TypeExpr, pmap, used, depth) -> A.Expr:
    base = strip_optional(t)
    for p in pmap.values():
        if p.name == fname and _type_eq(base, strip_optional(p.type)):
            if base == A.PrimType("int") and strip_optional(p.type) == A.PrimType("float"):
                continue  # a float does not fit an int field
            ent = _entity_in(s, base)
            if ent is None:
                used[0] += 1
                return N(p.name)
            # an entity-typed param is the record (a list: the records) in the body, while a
            # returned record's field holds keys: store the keys, never a record
            if isinstance(p.type, A.OptionalType):
                continue  # no null-safe key read in the effect language: leave the default
            used[0] += 1
            key = s.entities[ent].key
            return A.Call("map", (N(p.name), at("it", key))) if isinstance(base, A.ListType) else at(p.name, key)
    if "now" in s.globals and base == STR and any(w in fname for w in ("time", "date")):
        used[0] += 1
        return at("state", "now")
    if isinstance(base, A.NamedType) and base.name in s.records:
        return _fill(s, base, pmap, used, depth + 1)
    return default_value(s, t)


def _entity_in(s: Schema, t: A.TypeExpr) -> str | None:
    """The entity a type `E` or `list[E]` names, if any."""
    t = strip_optional(t)
    if isinstance(t, A.ListType):
        t = strip_optional(t.item)
    return t.name if isinstance(t, A.NamedType) and t.name in s.entities else None


def _conservative(s: Schema, v: ToolView, pmap):
    """Log the call in `ActionLog`; read-like tools only echo their arguments (no write)."""
    parts: list[A.Expr] = []
    for p in pmap.values():
        val = N(p.name)
        if v.key_param and p.wire == v.key_param and v.target:
            val = at(p.name, s.entities[v.target].key)
        elif isinstance(p.type, A.NamedType) and p.type.name in s.entities:
            # log the key the agent passed, not the record: a later change to the record
            # must not make the same call log differently
            val = at(p.name, s.entities[p.type.name].key)
        piece = bin_("+", lit(f"{p.wire}="), A.Call("str", (val,)))
        parts.append(piece)
    args: A.Expr = lit("")
    for i, piece in enumerate(parts):
        args = piece if i == 0 else bin_("+", bin_("+", args, lit(", ")), piece)
    if v.kind in ("read", "search"):
        rt = A.RecordType((A.FieldDecl("tool", STR), A.FieldDecl("args", STR)))
        return [A.Return(A.RecordLit((A.FieldInit("tool", lit(v.tool.name)), A.FieldInit("args", args))))], rt
    log = ensure_action_log(s)
    stmts: list[A.Stmt] = [
        A.Insert(log, (A.FieldInit("log_id", A.Call("fresh_id", (N(log),))), A.FieldInit("tool", lit(v.tool.name)), A.FieldInit("args", args)), bind="logged")
    ]
    if v.target and v.key_param:
        return stmts + [A.Return(N(pmap[v.key_param].name))], A.NamedType(v.target)
    return stmts + [A.Return(N("logged"))], A.NamedType(log)


def fix_required_refs(s: Schema, tools: list[A.ToolDecl]) -> None:
    """Fields that some insert fills with null must be optional."""
    for t in tools:
        for st in t.body or ():
            if isinstance(st, A.Insert):
                e = s.entities.get(st.entity)
                if e is None:
                    continue
                for fi in st.fields:
                    if fi.value == NULL and fi.name in e.fields and not isinstance(e.fields[fi.name].type, A.OptionalType):
                        e.fields[fi.name].type = A.OptionalType(e.fields[fi.name].type)


def release_optional_refs(s: Schema, tools: list[A.ToolDecl]) -> list[A.ToolDecl]:
    """A delete lets go of the deleted record everywhere a record may point to none: each optional reference to it
    is cleared, so no record keeps a dangling one (review 68: a deleted tag still on three documents, whose docs say
    "This will remove the tag from ALL documents"). Run once every field's optionality is known (`fix_required_refs`);
    a kind the delete already takes with it (`_cascade`) is left to that rule."""
    out = []
    for t in tools:
        body = list(t.body or ())
        at_del = next((i for i, st in enumerate(body) if isinstance(st, A.Delete) and isinstance(st.target, A.Name)), None)
        if at_del is None:
            out.append(t)
            continue
        k = body[at_del].target.id
        ent = next((strip_optional(p.type).name for p in t.params if p.name == k and isinstance(strip_optional(p.type), A.NamedType)), None)
        if ent not in s.entities:
            out.append(t)
            continue
        gone = {st.iter.source.id for st in body if isinstance(st, A.For) and isinstance(st.iter, A.Where) and isinstance(st.iter.source, A.Name)
                and any(isinstance(b, A.Delete) for b in st.body)}
        key = s.entities[ent].key
        loops = [A.For("holder", A.Where(N(oname), bin_("==", at("it", fname), at(k, key))), (A.Set(at("holder", fname), NULL),))
                 for oname, fname in _optional_holders(s, ent) if oname not in gone]
        out.append(replace(t, body=tuple(body[:at_del] + loops + body[at_del:])) if loops else t)
    return out


__all__ = ["build_tool", "fix_required_refs", "release_optional_refs", "default_value", "Built"]
