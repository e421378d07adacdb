"""Graph stores (named nodes, typed relations, observations) and key-value stores.

Why a shape of its own: keyed CRUD reads one entity per noun, so a knowledge graph whose
`create_entities` takes a list of `{name, entityType, observations}` became one record holding
a list, and its deletes and reads were log-only. Here the state is read from the *object
schemas* the docs describe, not from tool names:

* a **node** is an object with a name-like field (`name`, `title`, `label`) and a type-like
  field (`entityType`, `category`, `kind`), usually with a list of strings (observations,
  notes): it becomes `entity Node key <name>`;
* a **relation** is an object with two endpoint fields (`from`/`to`, `source`/`target`,
  `head`/`tail`) and a type-like field: it becomes `entity Relation key <relation>_id` (an int
  issued in order, so relations keep their creation order) whose endpoints reference nodes;
* each tool is then read by its verb (name or HTTP method) and by which of these objects its
  input holds: a batch (`list[Node]` param) or one item (a body object, flat or path params).

What each tool does follows what the docs say and, where they are silent, what the real MCP
memory server does (tests/test_differential_memory.py compares the two call by call): batch
creates skip names that exist, single creates fail on them (a REST `POST` of a duplicate);
"existing" nodes (or a single path-addressed one) must exist, a batch delete ignores unknown
names; deleting nodes removes the relations that touch them when the docs say so; searches are
case-insensitive over names, types and observations; opening nodes returns them with every
relation that touches one of them. Results take the shape the docs declare (`{entities: [...]}`,
`{success, message}`, an array), else the changed records.

A key-value store (`set/put(key, value)`, `get(key)`, `delete(key)`, `list(prefix?)`) is the
degenerate graph: one entity keyed by the key, set overwrites.
"""

from __future__ import annotations

import json
import re

from forgec import ir
from forgec.lang import ast as A
from forgec.lang import parse

from forgec.english import plural, singular

from .names import pascal, tokens
from .schema import Entity, Field, Record
from .shapes import Claim

CREATE = {"create", "add", "new", "insert", "make", "post", "link", "connect", "append", "attach", "record",
          "remember", "store", "save", "register", "relate", "put", "set", "upsert", "write"}
DELETE = {"delete", "remove", "drop", "unlink", "disconnect", "forget", "erase", "destroy", "detach", "purge", "unset", "del"}
SEARCH = {"search", "find", "query", "lookup", "filter", "match"}
READ = {"read", "get", "open", "fetch", "retrieve", "show", "view", "load", "export", "dump", "list", "describe", "all", "keys"}
METHOD_VERB = {"post": "create", "put": "create", "patch": "create", "delete": "delete", "get": "read"}

NAME_F = ("name", "title", "label", "key")
TYPE_TOK = {"type", "kind", "category", "class", "label"}
FROM_TOK = {"from", "source", "src", "start", "head", "subject", "origin"}
TO_TOK = {"to", "target", "dst", "end", "tail", "object", "dest", "destination"}
RTYPE_TOK = {"type", "label", "kind", "predicate", "relation", "verb", "name"}
QUERY_P = {"query", "q", "search", "text", "keyword", "keywords", "term", "pattern"}
GENERIC_P = {"body", "request_body", "data", "items", "input", "payload", "request"}


# --------------------------------------------------------------------------- schema reading


def _fields(env: ir.Environment, t: ir.Type | None) -> dict[str, ir.Type] | None:
    t = env.deref(t)
    if t is None or t.kind != "object" or not t.fields:
        return None
    return {f.name: env.deref(f.type) or ir.Type(kind="any") for f in t.fields}


def _docs(env: ir.Environment, t: ir.Type | None) -> dict[str, str]:
    t = env.deref(t)
    return {f.name: " ".join((f.description or f.type.description or "").split()) for f in (t.fields if t is not None else ())}


def _is_str(t: ir.Type | None) -> bool:
    return t is not None and t.kind == "string"


def _is_strs(t: ir.Type | None) -> bool:
    return t is not None and t.kind == "array" and _is_str(t.items)


def _items(env: ir.Environment, t: ir.Type | None) -> dict[str, ir.Type] | None:
    t = env.deref(t)
    return _fields(env, t.items) if t is not None and t.kind == "array" else None


def _toks(name: str) -> set[str]:
    return set(tokens(name))


def _name_field(fs: dict[str, ir.Type]) -> str | None:
    strs = [f for f, t in fs.items() if _is_str(t)]
    for want in NAME_F:
        for f in strs:
            if f.lower() == want:
                return f
    return next((f for f in strs if tokens(f)[-1:] in (["name"], ["title"])), None)


def _type_field(fs: dict[str, ir.Type], skip: set[str]) -> str | None:
    return next((f for f, t in fs.items() if _is_str(t) and f not in skip and _toks(f) & TYPE_TOK), None)


def _ends(fs: dict[str, ir.Type]) -> tuple[str, str, str] | None:
    """(from, to, type) fields of a relation object, or None."""
    src = next((f for f, t in fs.items() if _is_str(t) and _toks(f) & FROM_TOK), None)
    dst = next((f for f, t in fs.items() if _is_str(t) and _toks(f) & TO_TOK and f != src), None)
    if src is None or dst is None:
        return None
    ty = next((f for f, t in fs.items() if _is_str(t) and f not in (src, dst) and _toks(f) & RTYPE_TOK), None)
    return (src, dst, ty) if ty else None


class _Node:
    def __init__(self, fs: dict[str, ir.Type], docs: dict[str, str], key: str, ty: str, obs: str | None):
        self.fs, self.docs, self.key, self.ty, self.obs = fs, docs, key, ty, obs

    def fields_items(self) -> list[tuple[str, ir.Type]]:
        return list(self.fs.items())


def _node_of(fs: dict[str, ir.Type] | None, docs: dict[str, str]) -> _Node | None:
    if not fs or _ends(fs):
        return None
    key = _name_field(fs)
    ty = _type_field(fs, {key} if key else set())
    if key is None or ty is None:
        return None
    obs = next((f for f, t in fs.items() if _is_strs(t)), None)
    return _Node(fs, docs, key, ty, obs)


def _objects(env: ir.Environment, tool: ir.Tool):
    """(object fields, field docs, noun hint) of every object a tool takes or returns."""
    path_noun = next((s for s in (tool.http_path or "").split("/") if s and not s.startswith("{")), "")
    for p in tool.params:
        t = env.deref(p.type)
        hint = p.name if p.name not in GENERIC_P else path_noun
        if t is not None and t.kind == "array":
            yield _fields(env, t.items), _docs(env, t.items), hint
        elif t is not None:
            yield _fields(env, t), _docs(env, t), hint or path_noun
    r = env.deref(tool.returns)
    if r is not None and r.kind == "array":
        yield _fields(env, r.items), _docs(env, r.items), path_noun
    for f, ft in (_fields(env, r) or {}).items():
        if ft.kind == "array":
            yield _fields(env, ft.items), _docs(env, ft.items), f


def _entity_name(hint: str, default: str, taken: set[str]) -> str:
    toks = tokens(hint)
    name = pascal(singular(toks[-1])) if toks else default
    if not name or name in taken or name in ("Item", "Body", "Data", "Result", "Results"):
        name = default
    return name


# --------------------------------------------------------------------------- tool input views


class _View:
    """A tool's input as named fields: a batch (one array-of-objects param) or one item."""

    def __init__(self, env: ir.Environment, tool: ir.Tool):
        self.tool = tool
        self.batch: str | None = None
        self.fields: dict[str, tuple[str, ir.Type]] = {}  # field -> (expression, type)
        req = [p for p in tool.params if p.required]
        arrays = [p for p in tool.params if _items(env, p.type)]
        if len(arrays) == 1 and all(p is arrays[0] for p in req):
            self.batch = arrays[0].name
            for f, t in (_items(env, arrays[0].type) or {}).items():
                self.fields[f] = (f"item.{f}", t)
            return
        for p in tool.params:
            fs = _fields(env, p.type)
            if fs and p.name in GENERIC_P:
                for f, t in fs.items():
                    self.fields.setdefault(f, (f"{p.name}.{f}", t))
            else:
                self.fields.setdefault(p.name, (p.name, env.deref(p.type) or ir.Type(kind="any")))

    def loop(self, inner: list[str]) -> list[str]:
        if self.batch is None:
            return inner
        return [f"for item in {self.batch} {{", *("  " + s for s in inner), "}"]


def _verb(tool: ir.Tool) -> str | None:
    for t in tokens(tool.name):
        for kind, words in (("delete", DELETE), ("search", SEARCH), ("create", CREATE), ("read", READ)):
            if t in words:
                return kind
    return METHOD_VERB.get((tool.http_method or "").lower())


def _says(tool: ir.Tool, *patterns: str) -> bool:
    text = " ".join([tool.description or ""] + [p.description or "" for p in tool.params]).lower()
    return any(re.search(p, text) for p in patterns)


# --------------------------------------------------------------------------- forge text helpers


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _ftype(env: ir.Environment, t: ir.Type | None, records: dict[str, str], hint: str) -> str:
    """A forge type for a doc type; nested objects become (deduplicated) records."""
    t = env.deref(t)
    if t is None:
        return "any"
    k = t.kind
    base = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}.get(k)
    if base is None and k == "array":
        base = f"list[{_ftype(env, t.items, records, singular(hint))}]"
    elif base is None and k == "object" and t.fields:
        base = _record(env, t, records, hint)
    elif base is None and k == "enum":
        base = "enum(" + ", ".join(json.dumps(v) for v in t.values) + ")"
    elif base is None:
        base = "any"
    return base + ("?" if t.nullable else "")


def _record(env: ir.Environment, t: ir.Type, records: dict[str, str], hint: str) -> str:
    fs, docs = _fields(env, t) or {}, _docs(env, t)
    req = {f.name for f in t.fields if f.required}
    body = " ".join(f"{f}: {_ftype(env, ft, records, f)}{'' if f in req or ft.nullable else '?'}" + (f" {_q(docs[f])}" if docs.get(f) else "")
                    for f, ft in fs.items())
    for name, text in records.items():
        if text == body:
            return name
    name = pascal(singular(hint) or "item") + "Input"
    while name in records:
        name += "_"
    records[name] = body
    return name


def _params(env: ir.Environment, tool: ir.Tool, records: dict[str, str], override: dict[str, str] | None = None) -> str:
    out = []
    verbs = CREATE | DELETE | READ | SEARCH
    noun = next((w for w in reversed(tokens(tool.name)) if w not in verbs), "item")
    for p in tool.params:
        ty = (override or {}).get(p.name) or _ftype(env, p.type, records, noun if p.name in GENERIC_P else p.name)
        if not p.required and not ty.endswith("?"):
            ty += "?"
        dflt = f" = {json.dumps(p.default)}" if p.has_default and isinstance(p.default, (str, int, float, bool)) else (" = null" if not p.required else "")
        out.append(f"{p.name}: {ty}{dflt}" + (f" {_q(' '.join(p.description.split()))}" if p.description else ""))
    return ", ".join(out)


def _decl(tool: ir.Tool, kind: str, params: str, returns: str, body: list[str]) -> str:
    doc = " ".join((tool.description or "").split())
    return "\n".join([f"@{kind}", f"tool {tool.name}({params}) -> {returns} {_q(doc)} {{", *("  " + s for s in body), "}"])


def _parse_claim(shape: str, text: str, names: dict[str, str]) -> Claim | None:
    """Parse the synthesized members (records, entities, tools) back into a Claim."""
    mod, diags = parse(f"env _shape {{\n{text}\n}}\n", f"<{shape}>")
    if any(d.is_error for d in diags) or not mod.envs:
        return None
    env = mod.envs[0]
    c = Claim(shape=shape)
    for r in env.records:
        c.records[r.name] = Record(r.name, {f.name: Field(f.name, f.type, f.doc, f.default) for f in r.fields}, r.doc)
    for e in env.entities:
        kf = next(f for f in e.fields if f.name == e.key)
        key_type = "int" if isinstance(kf.type, A.PrimType) and kf.type.name == "int" else "str"
        c.entities[e.name] = Entity(e.name, e.key, key_type, {f.name: Field(f.name, f.type, f.doc, f.default) for f in e.fields}, e.doc)
    for t in env.tools:
        c.tools[names.get(t.name, t.name)] = t
    return c


# --------------------------------------------------------------------------- graph


class _Graph:
    def __init__(self, env: ir.Environment, node: _Node, nname: str, rel: tuple[str, str, str], rfs: dict[str, ir.Type], rdocs: dict[str, str], rname: str):
        self.env, self.node, self.N, self.rel, self.rfs, self.rdocs, self.R = env, node, nname, rel, rfs, rdocs, rname
        self.records: dict[str, str] = {}
        self.RI = rname + "Info"
        self.NI = nname + "Info"

    def state_text(self) -> str:
        n, (rf, rt, ry) = self.node, self.rel
        nfields = []
        for f, t in n.fields_items():
            ty = "str" if f == n.key else _ftype(self.env, t, self.records, f)
            nfields.append(f"  {f}: {ty}" + (f" {_q(n.docs[f])}" if n.docs.get(f) else ""))
        kid = singular(tokens(self.R)[0]) + "_id" if tokens(self.R) else "relation_id"
        self.rkey = kid
        rfields = [f"  {kid}: int {_q('issued in creation order')}"]
        for f in (rf, rt, ry):
            ty = self.N if f in (rf, rt) else "str"
            rfields.append(f"  {f}: {ty}" + (f" {_q(self.rdocs[f])}" if self.rdocs.get(f) else ""))
        info = " ".join(f"{f}: str" + (f" {_q(self.rdocs[f])}" if self.rdocs.get(f) else "") for f in (rf, rt, ry))
        ninfo = " ".join(f"{f}: {('str' if f == n.key else _ftype(self.env, t, self.records, f))}" + (f" {_q(n.docs[f])}" if n.docs.get(f) else "")
                         for f, t in n.fields_items())
        return "\n".join([
            f"record {self.RI} {{ {info} }}",
            f"record {self.NI} {{ {ninfo} }}",
            f"entity {self.N} key {n.key} {_q('A node of the graph, named by its ' + n.key + '.')} {{", *nfields, "}",
            f"entity {self.R} key {kid} {_q('A typed relation between two nodes.')} {{", *rfields, "}",
        ])

    # expressions
    def rel_info(self, src: str) -> str:
        rf, rt, ry = self.rel
        return f"map({src}, {{{rf}: it.{rf}, {rt}: it.{rt}, {ry}: it.{ry}}})"

    def touching(self, names: str, single: bool) -> str:
        rf, rt, _ = self.rel
        op = "==" if single else "in"
        return f"{self.R} where it.{rf} {op} {names} or it.{rt} {op} {names}"

    def fit(self, tool: ir.Tool, vals: dict[str, tuple[str, str]], default: str) -> tuple[str, str]:
        """(return type, expression) in the shape the docs declare, from the values at hand.

        `vals`: role -> (type, expr); roles: nodes, node, rels, rel, results, added, done."""
        r = self.env.deref(tool.returns)
        if r is not None:
            got = self._fit(r, vals)
            if got is not None:
                return got
        return vals[default]

    def _fit(self, r: ir.Type, vals: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
        env = self.env
        if r.kind == "array":
            item = _fields(env, r.items)
            role = "nodes" if _node_of(item, {}) else "rels" if item and _ends(item) else "added" if _is_str(env.deref(r.items)) else "results" if item else None
            return vals.get(role) if role else None
        fs = _fields(env, r)
        if fs is None:
            return None
        if _node_of(fs, {}):
            return vals.get("node")
        if _ends(fs):
            return vals.get("rel")
        types, exprs = [], []
        for f, ft in fs.items():
            item = _items(env, ft)
            if item is not None and _node_of(item, {}):
                v = vals.get("nodes")
            elif item is not None and _ends(item):
                v = vals.get("rels")
            elif item is not None and "results" in vals:
                v = self._results(item, vals["results"])
            elif ft.kind == "boolean":
                v = ("bool", "true")
            elif _is_str(ft) and _toks(f) & {"message", "msg", "status", "detail"}:
                v = ("str", _q(vals.get("done", ("", "done"))[1]))
            elif _is_strs(ft) and "added" in vals:
                v = vals["added"]
            else:
                v = None
            if v is None:
                return None
            types.append(f"{f}: {v[0]}")
            exprs.append(f"{f}: {v[1]}")
        return "{" + ", ".join(types) + "}", "{" + ", ".join(exprs) + "}"

    def _results(self, item: dict[str, ir.Type], results: tuple[str, str]) -> tuple[str, str] | None:
        """Per-node results `[{<ref>: name, <added>: [...]}]` renamed to the docs' item fields."""
        ref = next((f for f, t in item.items() if _is_str(t)), None)
        lst = next((f for f, t in item.items() if _is_strs(t)), None)
        if ref is None or lst is None or len(item) != 2:
            return None
        return f"list[{{{ref}: str, {lst}: list[str]}}]", f"map({results[1]}, {{{ref}: it.ref, {lst}: it.added}})"


_GRAPH_WORDS = re.compile(r"\b(?:graph|relations?|relationships?|edges?|nodes?|knowledge|triples?)\b", re.I)


def _graph_claim(env: ir.Environment, taken: frozenset[str]) -> Claim | None:
    tools = [t for t in env.tools if t.name not in taken]
    node = rel = None
    nhint = rhint = ""
    for t in tools:
        for fs, docs, hint in _objects(env, t):
            if fs is None:
                continue
            if node is None and (n := _node_of(fs, docs)) is not None:
                node, nhint = n, hint
            if rel is None and (e := _ends(fs)) is not None:
                rel, rhint, rfs, rdocs = e, hint, fs, docs
    if node is None or rel is None:
        return None
    nname = _entity_name(nhint, "Node", set())
    rname = _entity_name(rhint, "Relation", {nname})
    g = _Graph(env, node, nname, rel, rfs, rdocs, rname)
    state = g.state_text()
    decls: list[str] = []
    for t in tools:
        d = _graph_tool(g, t)
        if d is not None:
            decls.append(d)
    if len(decls) < 3 or 5 * len(decls) < 2 * len(tools) or not any(_GRAPH_WORDS.search(f"{t.name} {t.description}") for t in tools):
        # a REST API whose one object has a name and a type and another a from/to (an inventory item sold
        # to someone) is no graph store: the docs speak of a graph, and most tools act on it (blind review 20)
        return None
    recs = [f"record {n} {{ {b} }}" for n, b in g.records.items()]
    return _parse_claim("graph", "\n".join(recs + [state] + decls), {})


def _graph_tool(g: _Graph, t: ir.Tool) -> str | None:
    env, n = g.env, g.node
    v = _View(env, t)
    verb = _verb(t)
    fs = {f: ty for f, (_, ty) in v.fields.items()}
    rf, rt, ry = g.rel
    params = lambda over=None: _params(env, t, g.records, over)  # noqa: E731
    if verb is None:
        return None
    # relations in, by their three fields
    if all(f in fs for f in g.rel) and verb in ("create", "delete"):
        over = {v.batch: f"list[{g.RI}]"} if v.batch else {p.name: g.RI for p in t.params if p.name in GENERIC_P and _fields(env, p.type)}
        e = {f: v.fields[f][0] for f in g.rel}
        same = f"it.{rf} == {e[rf]} and it.{rt} == {e[rt]} and it.{ry} == {e[ry]}"
        one = f"{{{rf}: {e[rf]}, {rt}: {e[rt]}, {ry}: {e[ry]}}}"
        if verb == "create":
            # an item is compared with the relations there were before the call (as the memory server does)
            body = ["let created = []", f"let before = {g.R}", *v.loop([f"if not any(before, {same}) {{", f"  insert {g.R} {{{rf}: {e[rf]}, {rt}: {e[rt]}, {ry}: {e[ry]}}}",
                                                  f"  let created = created + [{one}]", "}"])]
            vals = {"rels": (f"list[{g.RI}]", "created"), "rel": (g.RI, one), "done": ("str", f"{pascal(plural(g.R))} created")}
            rty, rex = g.fit(t, vals, "rels" if v.batch else "rel")
            return _decl(t, "create", params(over), rty, body + [f"return {rex}"])
        gone = [f"for x in {g.R} where {same} {{", "  delete x", "}"]
        if v.batch is None:
            gone = [f"require any({g.R}, {same}) else {_q(g.R + ' not found')}"] + gone
        vals = {"rels": (f"list[{g.RI}]", g.rel_info("removed")), "rel": (g.RI, one), "done": ("str", f"{pascal(plural(g.R))} deleted")}
        body = ["let removed = []", *v.loop([f"let removed = removed + ({g.R} where {same})", *gone])]
        rty, rex = g.fit(t, vals, "rels" if v.batch else "rel")
        return _decl(t, "delete", params(over), rty, body + [f"return {rex}"])
    # whole nodes in
    if n.key in fs and n.ty in fs and verb == "create":
        over = {v.batch: f"list[{g.NI}]"} if v.batch else {p.name: g.NI for p in t.params if p.name in GENERIC_P and _fields(env, p.type)}
        rec = ", ".join(f"{f}: {v.fields[f][0]}" for f in n.fs if f in v.fields)
        key = v.fields[n.key][0]
        skip = _says(t, r"\bskip", r"\bignor", r"\bonly new\b", r"already exist\w* (?:are|is) (?:kept|left|skipped)") or (
            v.batch is not None and not _says(t, r"\bfail", r"\berror", r"\b409\b", r"\bconflict"))
        inner = [f"let node = insert {g.N} {{{rec}}}", "let created = created + [node]"]
        if skip:
            inner = [f"if {key} not in {g.N} {{", *("  " + s for s in inner), "}"]
        body = ["let created = []", *v.loop(inner)] if v.batch else [f"let node = insert {g.N} {{{rec}}}"]
        vals = {"nodes": (f"list[{g.N}]", "created" if v.batch else "[node]"), "node": (g.N, "node" if not v.batch else "first(created)"),
                "done": ("str", f"{pascal(plural(g.N))} created")}
        rty, rex = g.fit(t, vals, "nodes" if v.batch else "node")
        return _decl(t, "create", params(over), rty, body + [f"return {rex}"])
    # observations of one named node in: a name and a list of strings, no type
    ref = next((f for f, ty in fs.items() if _is_str(ty) and (f == n.key or tokens(f)[-1:] in (["name"], ["title"], [n.key.lower()]))), None)
    lst = next((f for f, ty in fs.items() if _is_strs(ty)), None)
    if ref and lst and n.obs and n.ty not in fs and verb in ("create", "delete"):
        r, lx = v.fields[ref][0], v.fields[lst][0]
        must = v.batch is None or _says(t, r"\bexisting\b", r"\bmust exist", r"\bnot found\b")
        if verb == "create":
            inner = [f"let node = {g.N}[{r}]",
                     f"let added = {lx} where it not in node.{n.obs}",
                     f"set node.{n.obs} = node.{n.obs} + added",
                     "let results = results + [{ref: " + r + ", added: added}]"]
            if not must:
                inner = [f"if {r} in {g.N} {{", *("  " + s for s in inner), "}"]
            body = ["let results = []", *v.loop(inner)]
            vals = {"results": ("list[{ref: str, added: list[str]}]", "results"), "added": ("list[str]", "first(results).added" if v.batch is None else "added"),
                    "node": (g.N, f"{g.N}[{r}]") if v.batch is None else None, "done": ("str", f"{pascal(n.obs)} added")}
            vals = {k: x for k, x in vals.items() if x is not None}
            rty, rex = g.fit(t, vals, "results" if v.batch else "node")
            return _decl(t, "update", params(), rty, body + [f"return {rex}"])
        inner = [f"let node = {g.N}[{r}]", f"set node.{n.obs} = node.{n.obs} where it not in {lx}"]
        if not must:
            inner = [f"if {r} in {g.N} {{", *("  " + s for s in inner), "}"]
        vals = {"done": ("str", f"{pascal(n.obs)} deleted"), "node": (g.N, f"{g.N}[{r}]") if v.batch is None else None}
        vals = {k: x for k, x in vals.items() if x is not None}
        vals["nodes"] = (f"list[{g.N}]", f"{g.N} where it.{n.key} in map({v.batch}, it.{ref})" if v.batch else f"[{g.N}[{r}]]")
        rty, rex = g.fit(t, vals, "nodes" if v.batch else "node")
        return _decl(t, "update", params(), rty, v.loop(inner) + [f"return {rex}"])
    req = [p for p in t.params if p.required]
    # node names in (a list, or one path/flat name)
    names = next((p for p in req if _is_strs(env.deref(p.type))), None) if len(req) == 1 else None
    one = next((p for p in req if _is_str(env.deref(p.type)) and (p.name == n.key or p.location == "path" or tokens(p.name)[-1:] in (["name"], ["title"]))), None) if len(req) == 1 else None
    cascade = _says(t, r"\brelation", r"\bedge", r"\blink", r"\bconnection", r"\bassociated\b", r"\btouch", r"\bconnected\b")
    if verb == "delete" and (names or one):
        if names:
            body = [f"let removed = {g.N} where it.{n.key} in {names.name}", "for x in removed {", "  delete x", "}"]
            if cascade:
                body += [f"for x in {g.touching(names.name, False)} {{", "  delete x", "}"]
        else:
            body = [f"let removed = [{g.N}[{one.name}]]", f"delete {g.N}[{one.name}]"]
            if cascade:
                body += [f"for x in {g.touching(one.name, True)} {{", "  delete x", "}"]
        vals = {"nodes": (f"list[{g.N}]", "removed"), "node": (g.N, "first(removed)"), "done": ("str", f"{pascal(plural(g.N))} deleted")}
        rty, rex = g.fit(t, vals, "nodes" if names else "node")
        return _decl(t, "delete", params(), rty, body + [f"return {rex}"])
    graph_ret = f"{{nodes: list[{g.N}], relations: list[{g.RI}]}}"
    if verb in ("read", "search") and (names or one):
        if names:
            body = [f"let found = {g.N} where it.{n.key} in {names.name}", "let keys = map(found, it." + n.key + ")"]
        else:
            body = [f"let found = [{g.N}[{one.name}]]", "let keys = map(found, it." + n.key + ")"]
        vals = {"nodes": (f"list[{g.N}]", "found"), "node": (g.N, "first(found)"), "rels": (f"list[{g.RI}]", g.rel_info(g.touching("keys", False))),
                "graph": (graph_ret, "{nodes: found, relations: " + g.rel_info(g.touching("keys", False)) + "}")}
        rty, rex = g.fit(t, vals, "graph")
        return _decl(t, "read", params(), rty, body + [f"return {rex}"])
    query = next((p for p in req if _is_str(env.deref(p.type)) and (p.name.lower() in QUERY_P or p.location == "query")), None) if len(req) == 1 else None
    if query is not None and verb in ("read", "search"):
        on = [f"contains(lower(it.{n.key}), q)", f"contains(lower(it.{n.ty}), q)"]
        if n.obs:
            on.append(f"any(it.{n.obs}, contains(lower(it), q))")
        body = [f"let needle = lower({query.name})", f"let found = {g.N} where " + " or ".join(on).replace(", q)", ", needle)"), f"let keys = map(found, it.{n.key})"]
        vals = {"nodes": (f"list[{g.N}]", "found"), "rels": (f"list[{g.RI}]", g.rel_info(g.touching("keys", False))),
                "graph": (graph_ret, "{nodes: found, relations: " + g.rel_info(g.touching("keys", False)) + "}")}
        rty, rex = g.fit(t, vals, "graph")
        return _decl(t, "search", params(), rty, body + [f"return {rex}"])
    if not req and verb == "read":
        vals = {"nodes": (f"list[{g.N}]", g.N), "rels": (f"list[{g.RI}]", g.rel_info(g.R)),
                "graph": (graph_ret, f"{{nodes: {g.N}, relations: {g.rel_info(g.R)}}}")}
        rty, rex = g.fit(t, vals, "graph")
        return _decl(t, "read", params(), rty, [f"return {rex}"])
    return None


# --------------------------------------------------------------------------- key-value


VALUE_P = {"value", "val", "data", "content", "contents"}
KEY_P = {"key", "name", "id", "k"}


def _kv_claim(env: ir.Environment, taken: frozenset[str]) -> Claim | None:
    """`put(key, value)` + get/delete/list of the same key: one entity keyed by the key."""
    tools = [t for t in env.tools if t.name not in taken]
    put = None
    for t in tools:
        ps = [p for p in t.params if p.required]
        if _verb(t) == "create" and len(ps) == 2 and len(t.params) == 2:
            k = next((p for p in ps if p.name.lower() in KEY_P and _is_str(env.deref(p.type))), None)
            val = next((p for p in ps if p.name.lower() in VALUE_P), None)
            if k is not None and val is not None:
                put = (t, k.name, val.name, val)
                break
    if put is None:
        return None
    pt, key, value, vp = put
    noun = [w for w in tokens(pt.name) if w not in CREATE and w not in ("kv", "key", "value")]
    E = pascal(singular(noun[-1])) if noun else "Entry"
    records: dict[str, str] = {}
    vty = _ftype(env, vp.type, records, value)
    kdoc = " ".join((pt.param(key).description or "").split())
    vdoc = " ".join((vp.description or "").split())
    state = [f"entity {E} key {key} {_q('A value stored under its ' + key + '.')} {{",
             f"  {key}: str" + (f" {_q(kdoc)}" if kdoc else ""), f"  {value}: {vty}" + (f" {_q(vdoc)}" if vdoc else ""), "}"]
    rec_fields = {key, value}
    decls = []
    for t in tools:
        ps = [p for p in t.params if p.required]
        verb = _verb(t)
        r = env.deref(t.returns)
        ret_rec = r is None or (r.kind == "object" and set(_fields(env, r) or {}) <= rec_fields)
        if t is pt:
            body = [f"if {key} in {E} {{", f"  let entry = {E}[{key}]", f"  set entry.{value} = {value}", "} else {",
                    f"  insert {E} {{{key}: {key}, {value}: {value}}}", "}"]
            rty, rex = (E, f"{E}[{key}]") if ret_rec else (vty, value)
            decls.append(_decl(t, "create", _params(env, t, records), rty, body + [f"return {rex}"]))
        elif len(ps) == 1 and len(t.params) == 1 and ps[0].name == key and verb in ("read", "delete"):
            if verb == "read":
                rty, rex = (E, f"{E}[{key}]") if ret_rec else (vty, f"{E}[{key}].{value}")
                decls.append(_decl(t, "read", _params(env, t, records), rty, [f"return {rex}"]))
            else:
                decls.append(_decl(t, "delete", _params(env, t, records), E, [f"let entry = {E}[{key}]", "delete entry", "return entry"]))
        elif not ps and verb == "read":
            pre = next((p for p in t.params if _is_str(env.deref(p.type)) and _toks(p.name) & {"prefix", "pattern", "startswith", "starts"}), None)
            src = f"{E} where startswith(it.{key}, {pre.name})" if pre is not None else E
            if r is not None and r.kind == "array" and _is_str(env.deref(r.items)):
                decls.append(_decl(t, "search" if pre else "read", _params(env, t, records), "list[str]", [f"return map({src}, it.{key})"]))
            elif len(t.params) == (1 if pre else 0):
                decls.append(_decl(t, "search" if pre else "read", _params(env, t, records), f"list[{E}]", [f"return {src}"]))
    if len(decls) < 2:
        return None
    recs = [f"record {n} {{ {b} }}" for n, b in records.items()]
    return _parse_claim("kv", "\n".join(recs + state + decls), {})


def claim(env: ir.Environment, taken: frozenset[str]) -> Claim | None:
    """The graph store when the docs describe nodes and relations, else a key-value store."""
    return _graph_claim(env, taken) or _kv_claim(env, taken)
