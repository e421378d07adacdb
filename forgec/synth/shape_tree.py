"""Path-addressed trees: directories and files, a working directory, relative paths.

Docs of a file system (an MCP filesystem server, a shell-like simulator API, a contents REST
API) describe one state: a tree of files and directories addressed by paths. Keyed CRUD reads
their nouns as entities (`Size`, `Directory`) and most of their tools as unknowns. This shape
recognizes the tree from the whole env's docs and models it:

* state: `entity Node key path` (normalized absolute path, `kind` file|directory, `content`),
  `state.root` (the tree's top, the allowed directory when the docs confine paths) and
  `state.cwd` when the docs have a current/working directory (relative paths resolve against
  it, else against the root);
* each tool it understands gets the body its docs describe, one *operation* per tool, read
  from the tool's name tokens and prose (read / head / tail / write / append / touch / edit /
  mkdir / list / tree / move / copy / remove / rmdir / search / grep / count / diff / info /
  allowed directories / pwd / cd). Parameters are bound to roles by their names and docs (the
  path, source and destination, content, a line count, a pattern). Failures the docs or the
  real system have (a missing file, a path outside the allowed directory, an existing
  destination) are `require ... else "..."` preconditions with POSIX-style messages.

The result fits the documented return type: a `{content: str}` text (MCP), a documented
response record (fields filled by role: text, names, count, path), or plain text. Tools whose
operation or roles it cannot tell stay unclaimed and go through the CRUD rules.

Bodies are written as .forge text and parsed (one checked language, readable templates); the
state generator (`stdlib/tree_state.py`) seeds a small project tree for `Node`.
"""

from __future__ import annotations

import json
import re

from forgec import ir
from forgec.english import singular
from forgec.lang import ast as A

from .names import ident
from .schema import Entity, Field
from .shape_tree_rest import Op, classify_rest, rest_body  # the HTTP reading of the same operations (and their Op)
from forgec import lang
from forgec.diagnostics import has_errors
from .shapes import Claim

ENTITY = "Node"
CHECKPOINT = "Checkpoint"
ROOT = "/project"
NOW = "Mon Jan 05 2026 09:00:00 GMT+0000 (Coordinated Universal Time)"

PATH_NAMES = {"path", "file_path", "filepath", "file_name", "filename", "file", "dir_name", "dirname", "dir",
              "directory", "folder", "folder_name", "dir_path", "directory_path", "target", "name_of_file"}
SRC_NAMES = {"source", "src", "from", "from_path", "source_path", "old_path", "file_name1", "file1", "path1"}
DST_NAMES = {"destination", "dest", "dst", "to", "to_path", "destination_path", "new_path", "file_name2", "file2", "path2"}
CONTENT_NAMES = {"content", "contents", "text", "data", "body"}
COUNT_NAMES = {"lines", "n", "num_lines", "count", "number_of_lines", "head", "tail"}
PATTERN_NAMES = {"pattern", "glob", "query", "name", "search_term", "keyword", "regex"}

TREE_WORDS = re.compile(r"\b(files?|director(?:y|ies)|folders?)\b")


def _toks(name: str) -> list[str]:
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[^a-zA-Z0-9]+", s.lower()) if w]


def _has(text: str, *pats: str) -> bool:
    return any(re.search(p, text) for p in pats)


def sentence(t: ir.Tool, pat: str) -> str | None:
    """The first sentence of the tool's (or a parameter's) description matching `pat` (lower-cased)."""
    texts = [t.description or ""] + [p.description or "" for p in t.params]
    for text in texts:
        for sent in re.split(r"(?<=[.!?])\s+", " ".join(text.split())):
            if re.search(pat, sent.lower()):
                return sent
    return None


# the sentences that decide a flag (the same patterns `classify` reads)
FLAG_PATTERNS = {
    "parents": r"nested|multiple|parent|intermediate",
    "exist_ok": r"already exists.{0,60}(succeed|no error|nothing|unchanged|silently)",
    "no_clobber": r"destination (already )?exists.{0,40}fail|fail.{0,40}destination (already )?exists",
    "into": r"\binto (it|that|the)|existing (directory|folder).{0,60}\binto\b|\binto an existing",
    "empty": r"\bempty\b",
    "recursive": r"recursive|and its contents|everything inside|director",
    "append": r"\bappend",
    "diff": r"\bdiff\b",
    "confined": r"allowed director",
    "head": r"first \w+ lines",
    "tail": r"last \w+ lines",
    "prefixes": r"\[file\]|\[dir\]",
    "hidden": r"hidden",
}


# --------------------------------------------------------------------------- recognizing


def _param_roles(t: ir.Tool) -> dict[str, str]:
    roles: dict[str, str] = {}
    for p in t.params:
        n, k = p.name.lower(), p.type.kind
        d = (p.description or "").lower()
        if k == "array" and (p.type.items is None or p.type.items.kind == "string") and n in ("paths", "files", "file_names"):
            roles.setdefault("paths", p.name)
        elif k == "array" and p.type.items is not None and p.type.items.kind == "object":
            fs = {f.name.lower() for f in p.type.items.fields}
            if {"oldtext", "newtext"} <= fs or {"old_text", "new_text"} <= fs or {"old", "new"} <= fs:
                roles["edits"] = p.name
        elif k == "array" and n in ("excludepatterns", "exclude_patterns", "exclude"):
            roles["exclude"] = p.name
        elif k in ("string", "any") and n in SRC_NAMES:
            roles.setdefault("src", p.name)
        elif k in ("string", "any") and n in DST_NAMES:
            roles.setdefault("dst", p.name)
        elif k in ("string", "any") and (n in PATH_NAMES or (n.endswith("_path") and "path" in d)):
            roles.setdefault("path", p.name)
        elif k in ("string",) and n in CONTENT_NAMES:
            roles.setdefault("content", p.name)
        elif k in ("integer", "number") and (n in COUNT_NAMES or "lines" in d):
            if n == "head" or "first" in d:
                roles["head"] = p.name
            elif n == "tail" or "last" in d:
                roles["tail"] = p.name
            else:
                roles.setdefault("count", p.name)
        elif k == "string" and n in PATTERN_NAMES:
            roles.setdefault("pattern", p.name)
        elif k == "boolean" and n in ("dryrun", "dry_run", "preview"):
            roles["dry"] = p.name
        elif k == "boolean" and (n in ("a", "all", "show_hidden", "hidden") or "hidden" in d):
            roles["hidden"] = p.name
        elif k == "enum" and n in ("sortby", "sort_by", "sort", "order_by"):
            roles["sort"] = p.name
        elif k == "enum" and n in ("mode", "unit", "type", "what", "count_type"):
            roles["mode"] = p.name
    return roles


def classify(t: ir.Tool) -> Op | None:
    """The tree operation of one tool, or None when its name and docs do not say one."""
    toks = set(_toks(t.name))
    d = " ".join((t.description or "").lower().split())
    text = " ".join(sorted(toks)) + " " + d
    r = _param_roles(t)
    has = lambda *roles: all(x in r for x in roles)  # noqa: E731
    dirish = _has(text, r"\bdir\b", r"director", r"folder")
    fileish = _has(text, r"\bfiles?\b")
    req = [p for p in t.params if p.required]
    if "allowed" in toks or (_has(d, r"allowed director") and not req and not t.params):
        return Op("allowed") if not req else None
    if "pwd" in toks or (not t.params and _has(d, r"(current|working) (working )?director")):
        return Op("pwd")
    if ("cd" in toks or _has(d, r"change (the |your )?(current )?(working )?director")) and (has("path") or has("dst")):
        return Op("cd", {"path": r.get("path") or r["dst"]})
    if has("src", "dst"):
        if toks & {"mv", "move", "rename"} or _has(d, r"\b(move|rename)"):
            return Op("move", {"src": r["src"], "dst": r["dst"]}, _move_flags(d))
        if toks & {"cp", "copy"} or _has(d, r"\bcop(y|ies)\b"):
            return Op("copy", {"src": r["src"], "dst": r["dst"]}, _move_flags(d))
        if toks & {"diff", "compare"} or _has(d, r"\bdiff|differen|compare"):
            return Op("diff", {"a": r["src"], "b": r["dst"]})
        return None
    if has("paths") and (toks & {"read", "cat"} or _has(d, r"\bread")):
        return Op("read_many", {"paths": r["paths"]})
    if not has("path"):
        if toks & {"ls", "list", "dir"} and dirish and not req:  # the working directory's entries
            return Op("list", {k: r[k] for k in ("sort", "hidden") if k in r}, {"sizes"} if _has(text, r"\bsizes?\b") else set())
        return None
    P = {"path": r["path"]}
    if toks & {"search", "find", "glob"} and has("pattern"):
        return Op("search", P | {"pattern": r["pattern"]} | ({"exclude": r["exclude"]} if "exclude" in r else {}),
                  {"glob"} if _has(d + " " + (t.params and " ".join(p.description or "" for p in t.params).lower()), r"glob|\*\*|\*\.") else set())
    if "tree" in toks or _has(d, r"(directory|folder|recursive|file) tree|tree view"):
        return Op("tree", P | ({"exclude": r["exclude"]} if "exclude" in r else {}))
    if toks & {"mkdir", "makedirs"} or (toks & {"create", "make", "new", "add"} and dirish and not has("content") and not fileish):
        return Op("mkdir", P, {f for f in ("parents", "exist_ok") if _has(d, FLAG_PATTERNS[f])})
    if toks & {"rmdir"} or (toks & {"remove", "delete", "rm"} and dirish and not fileish):
        return Op("rmdir", P, {"empty"} if _has(d, FLAG_PATTERNS["empty"]) else set())
    if toks & {"rm", "remove", "delete", "unlink"}:
        return Op("rm", P, {"recursive"} if _has(d, FLAG_PATTERNS["recursive"]) else set())
    if "media" in toks or _has(d, r"base64"):
        return Op("media", P)
    if toks & {"info", "stat", "metadata"} or _has(d, r"metadata"):
        return Op("info", P)
    if toks & {"find", "search"}:
        return None
    if "grep" in toks or (has("pattern") and _has(d, r"lines? (that )?(match|contain)")):
        return Op("grep", P | {"pattern": r["pattern"]}) if has("pattern") else None
    if "wc" in toks or (toks & {"count"} and _has(d, r"lines|words|characters")):
        return Op("wc", P | ({"mode": r["mode"]} if "mode" in r else {}))
    if (toks & {"ls", "list"} or _has(d, r"\blist(s|ing)?\b.{0,40}(content|entr|files)")) and not has("content"):
        return Op("list", P | {k: r[k] for k in ("sort", "hidden") if k in r}, {"sizes"} if _has(text, r"\bsizes?\b") else set())
    if toks & {"edit", "patch"} and has("edits"):
        return Op("edit", P | {"edits": r["edits"]} | ({"dry": r["dry"]} if "dry" in r else {}), {"diff"} if _has(d, FLAG_PATTERNS["diff"]) else set())
    if toks & {"touch"} or (toks & {"create", "new"} and fileish and not has("content")):
        return Op("touch", P)
    if has("content") and (toks & {"write", "echo", "save", "create", "put", "append"} or _has(d, r"\bwrit|overwrit|append")):
        return Op("write", P | {"content": r["content"]}, {"append"} if ("append" in toks or _has(d, r"\bappend")) and not _has(d, r"overwrit") else set())
    if "tail" in toks or (has("count") and _has(d, r"last \w+ lines")):
        return Op("read", P | {"tail": r.get("count") or r.get("tail", "")})
    if "head" in toks or (has("count") and _has(d, r"first \w+ lines")):
        return Op("read", P | {"head": r.get("count") or r.get("head", "")})
    if toks & {"read", "cat", "get", "show", "display", "view", "open"} and (fileish or _has(d, r"content")):
        return Op("read", P | {k: r[k] for k in ("head", "tail") if k in r})
    return None


def _move_flags(d: str) -> set[str]:
    return {f for f in ("no_clobber", "into") if _has(d, FLAG_PATTERNS[f])}


def is_tree(env: ir.Environment, ops: dict[str, Op]) -> bool:
    """A path tree: at least three tools with a path operation, and the docs speak of both
    files and directories (or folders)."""
    text = " ".join((t.description or "") + " " + " ".join(p.description or "" for p in t.params) for t in env.tools).lower()
    words = {singular(w) for w in TREE_WORDS.findall(text)}
    pathy = sum(1 for o in ops.values() if o.op not in ("allowed", "pwd"))
    return pathy >= 3 and "file" in words and ("directory" in words or "folder" in words)


# --------------------------------------------------------------------------- writing the bodies


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _ty(t: ir.Type) -> str:
    k = t.kind
    s = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}.get(k)
    if k == "enum" and t.values:
        s = "enum(" + ", ".join(json.dumps(v) for v in t.values) + ")"
    elif k == "array":
        s = f"list[{_ty(t.items) if t.items is not None else 'any'}]"
    elif k == "object" and t.fields:
        s = "{" + ", ".join(f"{ident(f.name)}: {_ty(f.type)}{'' if f.required else '?'}" for f in t.fields) + "}"
    elif s is None:
        s = "any"
    return s + ("?" if t.nullable and not s.endswith("?") and s != "any" else "")


def _lit(v) -> str:
    return json.dumps(v, ensure_ascii=False)


def _params(t: ir.Tool) -> str:
    out = []
    for p in t.params:
        ty = _ty(p.type)
        doc = " " + _q(" ".join(p.description.split())) if p.description else ""
        if p.required:
            out.append(f"{ident(p.name)}: {ty}{doc}")
        elif p.has_default and p.default is not None:
            out.append(f"{ident(p.name)}: {ty} = {_lit(p.default)}{doc}")
        elif p.type.kind == "array":
            out.append(f"{ident(p.name)}: {ty} = []{doc}")
        else:
            out.append(f"{ident(p.name)}: {ty.rstrip('?')}? = null{doc}")
    return ", ".join(out)


class _Body:
    """The statements of one tool body, with the env's path conventions."""

    def __init__(self, cwd: bool, confined: bool, t: ir.Tool):
        self.t = t
        self.lines: list[str] = []
        self.base = "state.cwd" if cwd else "state.root"
        self.confined = confined

    def add(self, *ls: str) -> None:
        self.lines.extend(ls)

    def cite(self, key: str) -> None:
        """`// from: "..."` before the next statement: the doc sentence it was read from."""
        sent = sentence(self.t, FLAG_PATTERNS[key])
        if sent:
            self.lines.append("// from: " + _q(sent))

    def resolve(self, var: str, param: str) -> None:
        self.add(f"let {var} = path_resolve({ident(param)}, {self.base})")
        if self.confined:
            self.cite("confined")
            self.add(f'require {var} == state.root or startswith({var}, state.root + "/") else "Access denied - path outside allowed directories"')
        else:
            self.add(f'require {var} == state.root or startswith({var}, state.root + "/") else "No such file or directory (outside the tree)"')

    def exists(self, var: str, verb: str) -> None:
        self.add(f'require {var} in {ENTITY} else "ENOENT: no such file or directory, {verb}"')

    def is_file(self, var: str, msg: str = '"EISDIR: illegal operation on a directory, read"') -> None:
        self.add(f'require {ENTITY}[{var}].kind == "file" else {msg}')

    def is_dir(self, var: str, verb: str) -> None:
        self.add(f'require {ENTITY}[{var}].kind == "directory" else "ENOTDIR: not a directory, {verb}"')

    def parent_dir(self, var: str, verb: str) -> None:
        self.add(f'require dirname({var}) in {ENTITY} and {ENTITY}[dirname({var})].kind == "directory" else "ENOENT: no such file or directory, {verb}"')

    def size_text(self, num: str, out: str) -> None:
        """`out` = a byte count the way `ls -lh`-like listings spell it (`12 B`, `1.50 KB`)."""
        self.add(f'let {out} = "0 B"',
                 f'if {num} > 0 and {num} < 1024 {{ let {out} = str({num}) + " B" }}',
                 f'else if {num} >= 1024 and {num} < 1048576 {{ let {out} = fixed({num} / 1024, 2) + " KB" }}',
                 f'else if {num} >= 1048576 {{ let {out} = fixed({num} / 1048576, 2) + " MB" }}')


def _fit(t: ir.Tool, vals: dict[str, str], prefer: str = "text") -> tuple[str, str]:
    """(return type, return expression) for the documented result: a record's fields by role
    (text, names, count, path, ok), a str, or the MCP text `{content: str}`."""
    rt = t.returns
    if rt is not None and rt.kind == "object" and rt.fields:
        types, exprs = [], []
        for f in rt.fields:
            n, k = f.name.lower(), f.type.kind
            if n == "error":
                continue
            if k == "array" and "names" in vals:
                e, ty = vals["names"], "list[str]"
            elif k in ("integer", "number") and "count" in vals:
                e, ty = vals["count"], "int"
            elif k == "string" and "mode" in vals and n in ("type", "mode", "unit", "kind"):
                e, ty = vals["mode"], "str"
            elif k == "string" and "path" in vals and ("director" in n or "path" in n or "cwd" in n):
                e, ty = vals["path"], "str"
            elif k == "string" and prefer in vals:
                e, ty = vals[prefer], "str"
            elif k == "string" and "text" in vals:
                e, ty = vals["text"], "str"
            elif k == "boolean":
                e, ty = "true", "bool"
            elif k == "string" and "mode" in vals:
                e, ty = vals["mode"], "str"
            else:
                continue
            types.append(f"{ident(f.name)}: {ty}")
            exprs.append(f"{ident(f.name)}: {e}")
        if exprs:
            return "{" + ", ".join(types) + "}", "{" + ", ".join(exprs) + "}"
    if rt is not None and rt.kind == "string":
        return "str", vals.get(prefer) or vals.get("text") or '""'
    if "text" not in vals and "names" in vals:
        return "list[str]", vals["names"]
    return "{content: str}", "{content: " + (vals.get(prefer) or vals.get("text") or '""') + "}"


def _set(x: str) -> str:
    """A line count that is given (JavaScript's `if (n)`: neither missing nor 0)."""
    return f"({x} != null and {x} != 0)"


def _subtree(var: str) -> str:
    return f'{ENTITY} where startswith(it.path, {var} + "/")'


def _body(t: ir.Tool, o: Op, env_cwd: bool, confined: bool) -> tuple[str, list[str], str] | None:
    """(kind annotation, body lines, return type) of one claimed tool."""
    b = _Body(env_cwd, confined, t)
    if o.op.startswith(("rest_", "cp_")):

        return rest_body(t, o, b, ENTITY, CHECKPOINT)
    R = o.roles
    I = lambda role: ident(R[role])  # noqa: E731
    vals: dict[str, str] = {}
    kind = "read"
    prefer = "text"
    if o.op == "allowed":
        vals["text"] = '"Allowed directories:\\n" + state.root'
        vals["names"] = "[state.root]"
    elif o.op == "pwd":
        vals["text"] = vals["path"] = "state.cwd" if env_cwd else "state.root"
    elif o.op == "cd":
        kind = "update"
        b.resolve("p", R["path"])
        b.add(f'require p in {ENTITY} and {ENTITY}[p].kind == "directory" else "No such directory"',
              "set state.cwd = p")
        vals["text"] = vals["path"] = "p"
    elif o.op == "read":
        b.resolve("p", R["path"])
        b.exists("p", "open")
        b.is_file("p")
        b.add(f"let text = {ENTITY}[p].content")
        if "head" in R and "tail" in R and R["head"] and R["tail"]:
            b.add(f'require not ({_set(I("head"))} and {_set(I("tail"))}) else "Cannot specify both head and tail parameters simultaneously"')
        if R.get("tail"):
            b.cite("tail")
            b.add(f'if {_set(I("tail"))} {{ let text = join(slice(split(text, "\\n"), 0 - int({I("tail")})), "\\n") }}')
        if R.get("head"):
            b.cite("head")
            b.add(f'if {_set(I("head"))} {{', '  let ls = split(text, "\\n")', '  if endswith(text, "\\n") { let ls = slice(ls, 0, -1) }',
                  f'  let text = join(slice(ls, 0, int({I("head")})), "\\n")', "}")
        vals["text"] = "text"
        vals["names"] = 'split(text, "\\n")'
    elif o.op == "read_many":
        b.add("let parts = []", f"for x in {I('paths')} {{", f"  let p = path_resolve(x, {b.base})")
        if confined:
            b.add('  if not (p == state.root or startswith(p, state.root + "/")) { let parts = parts + [x + ": Error - Access denied - path outside allowed directories: " + p + " not in " + state.root] }',
                  f'  else if not (p in {ENTITY}) {{ let parts = parts + [x + ": Error - ENOENT: no such file or directory, open \'" + p + "\'"] }}')
        else:
            b.add(f'  if not (p in {ENTITY}) {{ let parts = parts + [x + ": Error - ENOENT: no such file or directory, open \'" + p + "\'"] }}')
        b.add(f'  else if {ENTITY}[p].kind != "file" {{ let parts = parts + [x + ": Error - EISDIR: illegal operation on a directory, read"] }}',
              f'  else {{ let parts = parts + [x + ":\\n" + {ENTITY}[p].content + "\\n"] }}', "}")
        vals["text"] = 'join(parts, "\\n---\\n")'
    elif o.op == "media":
        b.resolve("p", R["path"])
        b.exists("p", "open")
        b.is_file("p")
        b.add('let ext = lower(last(split(basename(p), ".")))', 'let mime = "application/octet-stream"')
        for exts, m in ((("png",), "image/png"), (("jpg", "jpeg"), "image/jpeg"), (("gif",), "image/gif"), (("webp",), "image/webp"),
                        (("bmp",), "image/bmp"), (("svg",), "image/svg+xml"), (("mp3",), "audio/mpeg"), (("wav",), "audio/wav"),
                        (("ogg",), "audio/ogg"), (("flac",), "audio/flac")):
            b.add(f"if ext in {_lit(list(exts))} {{ let mime = {_q(m)} }}")
        b.add(f"let data = base64({ENTITY}[p].content)",
              'if startswith(mime, "image/") or startswith(mime, "audio/") {',
              '  return {content: [{type: slice(mime, 0, 5), data: data, mimeType: mime}]}', "}",
              '  return {content: [{type: "resource", resource: {uri: "file://" + p, mimeType: mime, blob: data}}]}')
        return kind, b.lines, "{content: list[any]}"
    elif o.op in ("write", "touch"):
        kind = "create"
        b.resolve("p", R["path"])
        b.parent_dir("p", "open")
        new = "content" if o.op == "touch" else f'{ENTITY}[p].content + {I("content")}' if "append" in o.flags else I("content")
        if "append" in o.flags:
            b.cite("append")
        b.add(f"if p in {ENTITY} {{", f'  require {ENTITY}[p].kind == "file" else "EISDIR: illegal operation on a directory, open"')
        if o.op == "write":
            b.add(f"  let n = {ENTITY}[p]", f"  set n.content = {new}")
        b.add("} else {", f'  insert {ENTITY} {{path: p, kind: "file", content: {_q("") if o.op == "touch" else I("content")}}}', "}")
        vals["text"] = '"Successfully wrote to " + ' + I("path") if o.op == "write" else f'"Created " + {I("path")}'
        vals["path"] = "p"
        vals["names"] = "[p]"
    elif o.op == "edit":
        kind = "update"
        b.resolve("p", R["path"])
        b.exists("p", "open")
        b.is_file("p")
        b.add(f"let before = {ENTITY}[p].content", "let text = before", f"for e in {I('edits')} {{")
        f_old, f_new = _edit_fields(t, R["edits"])
        b.add(f'  require contains(text, e.{f_old}) else "Could not find exact match for edit"',
              f"  let text = replace(text, e.{f_old}, e.{f_new}, 1)", "}")
        cond = f"not {I('dry')}" if "dry" in R else "true"
        b.add(f"if {cond} {{", f"  let n = {ENTITY}[p]", "  set n.content = text", "}")
        if "diff" in o.flags:
            b.cite("diff")
            b.add('let diff = unified_diff(before, text, p)', 'let fence = "```"',
                  'if contains(diff, "```") { let fence = "````" }')
            vals["text"] = 'fence + "diff\\n" + diff + fence + "\\n\\n"'
        else:
            vals["text"] = "text"
    elif o.op == "mkdir":
        kind = "create"
        b.resolve("p", R["path"])
        if "exist_ok" in o.flags:
            b.cite("exist_ok")
        if "parents" in o.flags:
            b.cite("parents")
        if "exist_ok" in o.flags:
            b.add(f"if p in {ENTITY} {{", f'  require {ENTITY}[p].kind == "directory" else "EEXIST: file already exists, mkdir"', "} else {")
        else:
            b.add(f'require not (p in {ENTITY}) else "EEXIST: file already exists, mkdir"', "if true {")
        if "parents" in o.flags:
            b.add("  let cur = state.root", '  for part in split(path_rel(p, state.root), "/") {', "    let cur = path_resolve(part, cur)",
                  f'    if cur in {ENTITY} {{ require {ENTITY}[cur].kind == "directory" else "ENOTDIR: not a directory, mkdir" }}',
                  f'    else {{ insert {ENTITY} {{path: cur, kind: "directory", content: ""}} }}', "  }")
        else:
            b.add(f'  require dirname(p) in {ENTITY} and {ENTITY}[dirname(p)].kind == "directory" else "ENOENT: no such file or directory, mkdir"',
                  f'  insert {ENTITY} {{path: p, kind: "directory", content: ""}}')
        b.add("}")
        vals["text"] = '"Successfully created directory " + ' + I("path")
        vals["path"] = "p"
    elif o.op in ("list", "tree", "search"):
        if "path" in R:
            b.resolve("p", R["path"])
            b.exists("p", "scandir")
            b.is_dir("p", "scandir")
        else:
            b.add(f"let p = {b.base}")
        if o.op == "list":
            _list_body(b, o, t)
            vals["text"] = "text"
            vals["names"] = "names"
            vals["count"] = "len(names)"
        elif o.op == "tree":
            ex = I("exclude") if "exclude" in R else "[]"
            b.add("let keep = []", f"for n in sorted({_subtree('p')}, it.path) {{", "  let rel = path_rel(n.path, p)",
                  f'  if not any({ex}, glob_match(rel, it) or (not contains(it, "*") and (glob_match(rel, "**/" + it) or glob_match(rel, "**/" + it + "/**")))) {{ let keep = keep + [n] }}',
                  "}")
            vals["text"] = "json(path_tree(keep, p), 2)"
        else:
            ex = I("exclude") if "exclude" in R else "[]"
            match = f"glob_match(rel, {I('pattern')})" if "glob" in o.flags else f"contains(basename(n.path), {I('pattern')})"
            b.add("let dropped = []", "let found = []", "let rels = []", f"for n in sorted({_subtree('p')}, it.path) {{",
                  "  let rel = path_rel(n.path, p)",
                  f'  if any(dropped, startswith(rel, it + "/")) or any({ex}, glob_match(rel, it)) {{ let dropped = dropped + [rel] }}',
                  f"  else if {match} {{", "    let found = found + [n.path]", "    let rels = rels + [rel]", "  }", "}",
                  'let text = "No matches found"', 'if len(found) > 0 { let text = join(found, "\\n") }')
            vals["text"] = "text"
            vals["names"] = "found" if _has((t.description or "").lower(), r"full path|absolute") else "rels"
            vals["count"] = "len(found)"
    elif o.op in ("move", "copy"):
        kind = "update" if o.op == "move" else "create"
        b.resolve("s", R["src"])
        b.resolve("d", R["dst"])
        verb = "rename" if o.op == "move" else "copyfile"
        b.add(f'require s in {ENTITY} else "ENOENT: no such file or directory, {verb}"')
        if "into" in o.flags:
            b.cite("into")
            b.add(f'if d in {ENTITY} and {ENTITY}[d].kind == "directory" {{ let d = path_resolve(basename(s), d) }}')
        if "no_clobber" in o.flags:
            b.cite("no_clobber")
            b.add(f'require not (d in {ENTITY}) else "Destination already exists"')
        else:
            b.add(f'require not (d in {ENTITY}) or ({ENTITY}[d].kind == "file" and {ENTITY}[s].kind == "file") else "EEXIST: file already exists, {verb}"',
                  f"if d in {ENTITY} and d != s {{ delete {ENTITY}[d] }}")
        b.add(f'require not startswith(d, s + "/") and s != state.root else "EINVAL: invalid argument, {verb}"')
        b.parent_dir("d", verb)
        b.add(f'if d != s {{', f'  for n in {ENTITY} where it.path == s or startswith(it.path, s + "/") {{',
              f"    insert {ENTITY} {{path: d + slice(n.path, len(s)), kind: n.kind, content: n.content}}")
        if o.op == "move":
            b.add("    delete n")
        b.add("  }", "}")
        vals["text"] = (f'"Successfully moved " + {I("src")} + " to " + {I("dst")}' if o.op == "move"
                        else f'"Successfully copied " + {I("src")} + " to " + {I("dst")}')
        vals["path"] = "d"
    elif o.op in ("rm", "rmdir"):
        kind = "delete"
        b.resolve("p", R["path"])
        b.exists("p", "unlink" if o.op == "rm" else "rmdir")
        b.add(f'require p != state.root else "EBUSY: resource busy or locked, rmdir"')
        if o.op == "rm" and "recursive" not in o.flags:
            b.add(f'require {ENTITY}[p].kind == "file" else "EISDIR: illegal operation on a directory, unlink"')
        if o.op == "rmdir":
            b.is_dir("p", "rmdir")
            if "empty" in o.flags:
                b.cite("empty")
                b.add(f'require len({_subtree("p")}) == 0 else "ENOTEMPTY: directory not empty, rmdir"')
        if o.op == "rm" and "recursive" in o.flags:
            b.cite("recursive")
        b.add(f"for n in {_subtree('p')} {{ delete n }}", f"delete {ENTITY}[p]")
        vals["text"] = f'"Successfully removed " + {I("path")}'
        vals["path"] = "p"
    elif o.op == "grep":
        b.resolve("p", R["path"])
        b.exists("p", "open")
        b.is_file("p")
        b.add(f'let names = split({ENTITY}[p].content, "\\n") where contains(it, {I("pattern")})')
        vals["names"] = "names"
        vals["text"] = 'join(names, "\\n")'
        vals["count"] = "len(names)"
    elif o.op == "wc":
        b.resolve("p", R["path"])
        b.exists("p", "open")
        b.is_file("p")
        b.add(f"let c = {ENTITY}[p].content", 'let n = len(split(c, "\\n")) - 1')
        if "mode" in R:
            mp = next(p for p in t.params if p.name == R["mode"])
            for v in mp.type.values or ():
                if str(v).lower().startswith("w"):
                    b.add(f"if {I('mode')} == {_lit(v)} {{ let n = len(split(c)) }}")
                elif str(v).lower().startswith("c") or str(v).lower().startswith("b"):
                    b.add(f"if {I('mode')} == {_lit(v)} {{ let n = len(c) }}")
            vals["mode"] = I("mode")
        vals["count"] = "n"
        vals["text"] = "str(n)"
    elif o.op == "diff":
        b.resolve("a", R["a"])
        b.resolve("c", R["b"])
        for v in ("a", "c"):
            b.exists(v, "open")
            b.is_file(v)
        b.add(f"let text = unified_diff({ENTITY}[a].content, {ENTITY}[c].content, {I('a')})")
        vals["text"] = "text"
    elif o.op == "info":
        b.resolve("p", R["path"])
        b.exists("p", "stat")
        b.add(f"let n = {ENTITY}[p]", 'let isdir = n.kind == "directory"', "let size = len(n.content)", 'let perm = "644"',
              'if isdir { let size = 4096 }', 'if isdir { let perm = "755" }',
              'let text = "size: " + str(size) + "\\ncreated: " + state.now + "\\nmodified: " + state.now + "\\naccessed: " + state.now'
              ' + "\\nisDirectory: " + str(isdir) + "\\nisFile: " + str(not isdir) + "\\npermissions: " + perm')
        vals["text"] = "text"
        vals["count"] = "size"
    else:
        return None
    ret_ty, ret = _fit(t, vals, prefer)
    b.add(f"return {ret}")
    return kind, b.lines, ret_ty


def _edit_fields(t: ir.Tool, pname: str) -> tuple[str, str]:
    p = next(p for p in t.params if p.name == pname)
    names = [f.name for f in p.type.items.fields]
    old = next(n for n in names if n.lower().startswith("old"))
    new = next(n for n in names if n.lower().startswith("new"))
    return ident(old), ident(new)


def _list_body(b: _Body, o: Op, t: ir.Tool) -> None:
    R = o.roles
    kids = f'{ENTITY} where dirname(it.path) == p and it.path != p'
    if "hidden" in R:
        kids += f' and ({ident(R["hidden"])} or not startswith(basename(it.path), "."))'
        b.cite("hidden")
    b.add(f"let kids = sorted({kids}, lower(basename(it.path)))")
    if "sort" in R:
        b.add(f'if {ident(R["sort"])} == "size" {{ let kids = sorted(kids, len(it.content), desc: true) }}')
    b.add("let lines = []", "let names = []", "let files = 0", "let total = 0")
    b.cite("prefixes")
    b.add("for k in kids {", "  let name = basename(k.path)",
          "  let names = names + [name]")
    if "sizes" in o.flags:
        b.add('  if k.kind == "directory" { let lines = lines + ["[DIR] " + pad_end(name, 30) + " "] }', "  else {",
              "    let size = len(k.content)", "    let files = files + 1", "    let total = total + size")
        b.size_text("size", "human")
        b.add('    let lines = lines + ["[FILE] " + pad_end(name, 30) + " " + pad_start(human, 10)]', "  }", "}")
        b.size_text("total", "combined")
        b.add('let text = join(lines + ["", "Total: " + str(files) + " files, " + str(len(kids) - files) + " directories", "Combined size: " + combined], "\\n")')
    else:
        b.add('  if k.kind == "directory" { let lines = lines + ["[DIR] " + name] } else { let lines = lines + ["[FILE] " + name] }', "}",
              'let text = join(lines, "\\n")')


# --------------------------------------------------------------------------- the claim


def _with_notes(mod: A.Module, k: int = 0) -> A.ToolDecl:
    """The probe module's k-th tool with its `// from: "..."` comments as citations of the top-level
    statement that follows each (`ToolDecl.notes`, printed back by the formatter)."""
    from dataclasses import replace

    tools = mod.envs[0].tools
    tool = tools[k]
    lo, hi = tool.span.line, (tools[k + 1].span.line if k + 1 < len(tools) else 1 << 30)
    body = tool.body or ()
    notes = []
    for cm in mod.comments:
        text = cm.text.strip()
        if not text.startswith("from: ") or not lo <= cm.line < hi:
            continue
        i = next((k for k, st in enumerate(body) if st.span.line > cm.line), None)
        if i is not None:
            notes.append((i, json.loads(text[len("from: "):])))
    return replace(tool, notes=tuple(notes))


def tree_ops(env: ir.Environment, taken: frozenset[str] = frozenset()) -> dict[str, Op]:
    ops = {}
    for t in env.tools:
        if t.name in taken:
            continue
        o = classify_rest(t) if t.http_method else classify(t)
        if o is not None:
            ops[t.name] = o
    return ops


def claim(env: ir.Environment, taken: frozenset[str]):


    ops = tree_ops(env, taken)
    if not ops or not is_tree(env, ops):
        return None
    text = " ".join((t.description or "") for t in env.tools).lower()
    cwd = any(o.op in ("cd", "pwd") for o in ops.values())
    confined = _has(text, r"allowed director")
    needs_now = any(o.op == "info" or o.op.startswith(("rest_", "cp_")) for o in ops.values())
    checkpoints = any(o.op.startswith("cp_") for o in ops.values())
    rest_only = all(o.op.startswith(("rest_", "cp_")) for o in ops.values())  # API paths: relative to "/"
    globals_ = {"root": Field("root", A.PrimType("str"), "the top of the tree" + (": the allowed directory, every path must lie inside it" if confined else ""), A.Literal("/" if rest_only else ROOT))}
    if cwd:
        globals_["cwd"] = Field("cwd", A.PrimType("str"), "the current working directory: relative paths resolve against it", A.Literal(ROOT))
    if needs_now:
        globals_["now"] = Field("now", A.PrimType("str"), "the time the tree's timestamps show", A.Literal(NOW))
    ent = Entity(ENTITY, "path", fields={
        "path": Field("path", A.PrimType("str"), "normalized absolute path"),
        "kind": Field("kind", A.EnumType(("file", "directory"))),
        "content": Field("content", A.PrimType("str"), "the text of a file (empty for a directory)", A.Literal("")),
    }, doc="A file or directory of the path-addressed tree, keyed by its normalized absolute path.")
    pieces = []
    for t in env.tools:
        if t.name not in ops:
            continue
        got = _body(t, ops[t.name], cwd, confined)
        if got is None:
            continue
        kind, lines, ret_ty = got
        doc = " " + _q(" ".join((t.description or "").split())) if t.description else ""
        pieces.append((t.name, f"  @{kind}\n  tool {ident(t.name)}({_params(t)}) -> {ret_ty}{doc} {{\n" + "".join(f"    {ln}\n" for ln in lines) + "  }\n"))
    state = "  state {\n" + "".join(f"    {g.name}: str = {_lit(g.default.value)}\n" for g in globals_.values()) + "  }\n"
    entity = f'  entity {ENTITY} key path {{\n    path: str\n    kind: enum("file", "directory")\n    content: str = ""\n  }}\n'
    c = Claim("tree", entities={ENTITY: ent}, globals=globals_)
    if checkpoints:
        S = A.PrimType("str")
        c.entities[CHECKPOINT] = Entity(CHECKPOINT, "key", fields={
            "key": Field("key", S, "the file's path and the checkpoint id"), "checkpoint_id": Field("checkpoint_id", S), "path": Field("path", S, "the file"),
            "content": Field("content", S, "the file's saved content"), "last_modified": Field("last_modified", S)},
            doc="A saved state of a file that it can be restored to.")
        entity += (f"  entity {CHECKPOINT} key key {{\n    key: str\n    checkpoint_id: str\n    path: str\n    content: str\n"
                   "    last_modified: str\n  }\n")
    mod, pd = lang.parse("env probe {\n" + state + entity + "".join(p for _, p in pieces) + "}\n", "tree.forge")
    if not has_errors(pd) and not has_errors(lang.check([mod])):  # all at once: the usual case
        c.tools = {name: _with_notes(mod, k) for k, (name, _) in enumerate(pieces)}
        return c if c.tools else None
    for name, piece in pieces:  # each tool checked on its own: one bad template never sinks the others
        src = "env probe {\n" + state + entity + piece + "}\n"
        mod, pd = lang.parse(src, "tree.forge")
        if has_errors(pd) or has_errors(lang.check([mod])):
            continue
        c.tools[name] = _with_notes(mod)
    return c if c.tools else None
