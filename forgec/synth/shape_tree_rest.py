"""Path trees behind a REST resource (`/api/contents/{path}`): the path-tree shape for HTTP docs.

A contents API (Jupyter's, a storage service's) addresses the same tree as a file system, with
the HTTP verb as the operation: GET reads a file or lists a directory, PUT saves (a file, or a
directory when the body says so), PATCH renames (the body's new path), POST creates a new
untitled file/folder or a copy, DELETE removes; `{path}/checkpoints` saves and restores a file's
content. Paths are relative to the root (a leading `/` is the root too), so a tree only a REST API
addresses is rooted at `/`: its keys are the API's paths with a leading slash. Results are the
documented *model*: name, path, type, timestamps, size, mimetype, content (a directory's
children's models), format. Only tools whose path template, verb and body say one of these are
claimed; the rest keep the CRUD rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from forgec import ir

from .names import ident


@dataclass
class Op:
    """What one tool does to the tree and which parameter plays which role."""

    op: str
    roles: dict[str, str] = field(default_factory=dict)  # role -> param name
    flags: set[str] = field(default_factory=set)
    cites: dict[str, str] = field(default_factory=dict)  # flag/role -> the doc sentence it was read from

MODEL_FIELDS = ("name", "path", "type")


def _path_param(t: ir.Tool) -> str | None:
    for p in t.params:
        if p.location == "path" and p.name.lower() == "path" and p.type.kind == "string":
            return p.name
    return None


def _body(t: ir.Tool) -> ir.Param | None:
    return next((p for p in t.params if p.location == "body" and p.type.kind == "object"), None)


def _body_fields(t: ir.Tool) -> set[str]:
    b = _body(t)
    return {f.name for f in b.type.fields} if b is not None else set()


def is_model(t: ir.Type | None) -> bool:
    return t is not None and t.kind == "object" and set(MODEL_FIELDS) <= {f.name for f in t.fields}


def classify_rest(t: ir.Tool):
    """The operation of an HTTP tool on `.../{path}` (or `.../{path}/checkpoints[/{id}]`), or None."""
    if not t.http_method or not t.http_path:
        return None
    m, hp = t.http_method.upper(), t.http_path
    d = " ".join((t.description or "").lower().split())
    q = next((p.name for p in t.params if p.name.lower() == "path" and p.type.kind == "string" and p.required), None)
    if m == "GET" and q and re.search(r"\bresolv", d) and re.search(r"\bfiles?\b|director|folder", d):
        return Op("rest_resolve", {"path": q})  # does a path name something of the tree
    if _path_param(t) is None:
        return None
    P = {"path": _path_param(t)}
    cp = re.search(r"\{path\}/checkpoints(/\{(\w+)\})?$", hp)
    if cp:
        if cp.group(1):
            idp = cp.group(2)
            if m == "POST" and re.search(r"restor", d):
                return Op("cp_restore", P | {"id": idp})
            if m == "DELETE":
                return Op("cp_delete", P | {"id": idp})
            return None
        if m == "GET":
            return Op("cp_list", P)
        if m == "POST":
            return Op("cp_create", P)
        return None
    if not hp.endswith("{path}") or not re.search(r"\bfiles?\b|director|folder", d + " " + " ".join(p.description or "" for p in t.params).lower()):
        return None
    body = _body(t)
    bf = _body_fields(t)
    B = {"body": body.name} if body is not None else {}
    if m == "GET" and is_model(t.returns):
        q = {p.name: p for p in t.params if p.location == "query"}
        extra = {r: n for r, n in (("type", "type"), ("content", "content")) if n in q}
        return Op("rest_get", P | extra)
    if m == "DELETE":
        return Op("rest_delete", P)
    if not is_model(t.returns):
        return None
    if m == "PATCH" and "path" in bf and re.search(r"renam|move", d):
        return Op("rest_rename", P | B)
    if m == "PUT" and "content" in bf:
        return Op("rest_save", P | B)
    if m == "POST" and re.search(r"untitled|new", d):
        return Op("rest_new", P | B, {"copy"} if "copy_from" in bf else set())
    return None


def model_return(b, var: str, ent: str) -> list[str]:
    """Statements returning the model of the node at `var` (a directory's content: its children's models)."""
    rel = f"path_rel({var}, state.root)"
    common = f'name: basename({rel}), path: {rel}, writable: true, created: state.now, last_modified: state.now'
    kid = ('{name: basename(it.path), path: path_rel(it.path, state.root), type: it.kind, writable: true, '
           'created: state.now, last_modified: state.now, size: null, mimetype: null, content: null, format: null}')
    return [
        f"let node = {ent}[{var}]",
        'if node.kind == "directory" {',
        f'  let kids = map(sorted({ent} where dirname(it.path) == {var} and it.path != {var}, it.path), {kid})',
        f'  return {{{common}, type: "directory", size: null, mimetype: null, content: kids, format: "json"}}',
        "}",
        f'return {{{common}, type: "file", size: len(node.content), mimetype: "text/plain", content: shown, format: "text"}}',
    ]


MODEL_TYPE = ("{name: str, path: str, type: str, writable: bool, created: str, last_modified: str, size: int?, "
              "mimetype: str?, content: any, format: str?}")


def rest_body(t: ir.Tool, o, b, ent: str, cp_ent: str) -> tuple[str, list[str], str] | None:
    """(kind, body lines, return type) of one REST tree tool; `b` is shape_tree's body writer."""
    R = o.roles
    I = lambda role: ident(R[role])  # noqa: E731
    rel = lambda v: f'path_resolve("./" + {v}, state.root)'  # noqa: E731  API paths are below the root
    add = b.add

    def resolve(var: str, expr: str) -> None:
        add(f"let {var} = {rel(expr)}",
            f'require state.root == "/" or {var} == state.root or startswith({var}, state.root + "/") else "Access denied - path outside the root"')

    def found(var: str) -> None:
        add(f'require {var} in {ent} else "No such file or directory"')

    def parent(var: str) -> None:
        add(f'require dirname({var}) in {ent} and {ent}[dirname({var})].kind == "directory" else "No such directory"')

    def move_tree(s: str, d: str, keep: bool) -> None:
        add(f"for n in {ent} where it.path == {s} or startswith(it.path, {s} + \"/\") {{",
            f"  insert {ent} {{path: {d} + slice(n.path, len({s})), kind: n.kind, content: n.content}}",
            *([] if keep else ["  delete n"]), "}")

    op = o.op
    if op == "rest_resolve":
        resolve("p", I("path"))
        rt = t.returns
        names = {f.name for f in rt.fields} if rt is not None and rt.kind == "object" else set()
        if not {"resolved", "unresolved"} <= names:
            return None
        add(f"if p in {ent} {{", '  return {resolved: [{scope: "server", path: path_rel(p, state.root)}], unresolved: []}', "}",
            'return {resolved: [], unresolved: [{scope: "server", reason: "no such file or directory"}]}')
        return "read", b.lines, "{resolved: list[{scope: str, path: str}], unresolved: list[{scope: str, reason: str}]}"
    if op == "rest_get":
        resolve("p", I("path"))
        found("p")
        if "type" in R:
            add(f'require {I("type")} == null or {I("type")} == {ent}[p].kind else "bad type"')
        add(f"let shown = {ent}[p].content")
        if "content" in R:
            add(f'if {I("content")} == 0 {{ let shown = null }}')
        add(*model_return(b, "p", ent))
        return "read", b.lines, MODEL_TYPE
    if op == "rest_delete":
        resolve("p", I("path"))
        found("p")
        add('require p != state.root else "Cannot delete the root"', f'for n in {ent} where startswith(it.path, p + "/") {{ delete n }}',
            f"delete {ent}[p]")
        add('return {deleted: path_rel(p, state.root)}')
        return "delete", b.lines, "{deleted: str}"
    if op == "rest_rename":
        resolve("s", I("path"))
        found("s")
        add(f'require {I("body")}.path != null else "a new path is required"')
        resolve("d", f'{I("body")}.path')
        add(f'require not (d in {ent}) else "File already exists"', 'require not startswith(d, s + "/") and s != state.root else "Cannot move a directory into itself"')
        parent("d")
        add('if d != s {')
        move_tree("s", "d", keep=False)
        add("}", f"let shown = {ent}[d].content", *model_return(b, "d", ent))
        return "update", b.lines, MODEL_TYPE
    if op == "rest_save":
        resolve("p", I("path"))
        parent("p")
        body = I("body")
        is_dir = f'{body} != null and {body}.type == "directory"'
        add(f"if {is_dir} {{",
            f'  require not (p in {ent}) or {ent}[p].kind == "directory" else "A file exists at that path"',
            f'  if not (p in {ent}) {{ insert {ent} {{path: p, kind: "directory", content: ""}} }}',
            "} else {",
            f'  let text = ""',
            f'  if {body} != null and {body}.content != null {{ let text = {body}.content }}',
            f'  require not (p in {ent}) or {ent}[p].kind == "file" else "A directory exists at that path"',
            f'  if p in {ent} {{', f"    let n = {ent}[p]", "    set n.content = text", "  } else {",
            f'    insert {ent} {{path: p, kind: "file", content: text}}', "  }", "}",
            f"let shown = {ent}[p].content", *model_return(b, "p", ent))
        return "update", b.lines, MODEL_TYPE
    if op == "rest_new":
        resolve("dir", I("path"))
        found("dir")
        add(f'require {ent}[dir].kind == "directory" else "Not a directory"')
        body = I("body") if "body" in R else None
        add('let stem = "untitled"', 'let ext = ".txt"', 'let sep = ""', "let first = 0", 'let content = ""', 'let kind = "file"')
        if body is not None:
            fields = _body_fields(t)
            if "ext" in fields:
                add(f"if {body} != null and {body}.ext != null {{ let ext = {body}.ext }}")
            if "type" in fields:
                add(f'if {body} != null and {body}.type == "directory" {{', '  let stem = "Untitled Folder"', '  let ext = ""',
                    '  let sep = " "', '  let kind = "directory"', "}")
            if "copy" in o.flags:
                add(f"if {body} != null and {body}.copy_from != null {{")
                add(f'  let src = {rel(body + ".copy_from")}',
                    f'  require src in {ent} and {ent}[src].kind == "file" else "No such file to copy"',
                    '  let parts = split(basename(src), ".")',
                    '  let ext = ""',
                    '  if len(parts) > 1 { let ext = "." + last(parts) }',
                    '  let stem = slice(basename(src), 0, len(basename(src)) - len(ext)) + "-Copy"', '  let sep = ""', "  let first = 1",
                    f"  let content = {ent}[src].content", '  let kind = "file"', "}")
        add('let chosen = ""', "for i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] {",
            '  let suffix = ""', '  if i > 0 or first > 0 { let suffix = sep + str(i + first) }',
            "  let cand = path_resolve(stem + suffix + ext, dir)",
            f'  if chosen == "" and not (cand in {ent}) {{ let chosen = cand }}', "}",
            'require chosen != "" else "No free untitled name"',
            f"insert {ent} {{path: chosen, kind: kind, content: content}}",
            f"let shown = {ent}[chosen].content", *model_return(b, "chosen", ent))
        return "create", b.lines, MODEL_TYPE
    if op.startswith("cp_"):
        resolve("p", I("path"))
        found("p")
        add(f'require {ent}[p].kind == "file" else "Only files have checkpoints"')
        if op == "cp_list":
            add(f"return map({cp_ent} where it.path == p, {{id: it.checkpoint_id, last_modified: it.last_modified}})")
            return "read", b.lines, "list[{id: str, last_modified: str}]"
        if op == "cp_create":
            add('let k = p + "@checkpoint"', f"if k in {cp_ent} {{", f"  let c = {cp_ent}[k]", f"  set c.content = {ent}[p].content",
                "  set c.last_modified = state.now", "} else {",
                f'  insert {cp_ent} {{key: k, checkpoint_id: "checkpoint", path: p, content: {ent}[p].content, last_modified: state.now}}', "}",
                'return {id: "checkpoint", last_modified: state.now}')
            return "create", b.lines, "{id: str, last_modified: str}"
        add(f'let k = p + "@" + {I("id")}', f'require k in {cp_ent} else "No such checkpoint"')
        if op == "cp_restore":
            add(f"let n = {ent}[p]", f"set n.content = {cp_ent}[k].content", 'return {restored: path_rel(p, state.root)}')
            return "update", b.lines, "{restored: str}"
        add(f"delete {cp_ent}[k]", f'return {{deleted: {I("id")}}}')
        return "delete", b.lines, "{deleted: str}"
    return None
