"""The tool dependency graph: which tool outputs can feed which tool parameters.

An edge u -> v (a networkx MultiDiGraph edge) says "a value found at `path` in
u's result can be passed as parameter `param` of v", e.g.
`get_user_details.orders[*] -> get_order_details.order_id`. Edges are matched,
in order of strength:

1. entity reference ("entity"): the output holds a key of entity E (E's key
   field, a field typed `E`, a tool returning E's id) and the parameter takes
   E (typed `E`, or a primitive named like E's key / `<e>_id`);
2. name evidence ("name", "id"): same normalized name (camelCase == snake_case)
   and compatible type, or an `id` field of a record named like the parameter
   (`payment_methods[*].id -> payment_method_id`);
3. record shape ("shape"): a record/list-of-records parameter whose fields an
   output record covers by name.

A primitive string is never matched by type alone: a free-text `reason` or
`summary` parameter gets no edge and stays user-provided. Paths are tuples of
field names with "*" for "each element of a list"; `mode` says how the value
is passed: "value" (as is), "wrap" (a scalar wrapped into a one-element list),
"record" (a record literal assembled from the source's fields) or
"record_wrap" (that record in a one-element list).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping

import networkx as nx

from forgec.wording import norm
from forgec.lang import ast as A
from forgec.lang.check import fits, required, scalar_type
from forgec.lang.types import strip_opt, value_class
from forgec.english import singular  # the one singular ("status" stays "status")

READ_KINDS = ("read", "search")
WRITE_KINDS = ("create", "update", "delete", "action")
KINDS = READ_KINDS + WRITE_KINDS

# how much a sampler should prefer an edge of each evidence kind
EVIDENCE_WEIGHT = {"entity": 3.0, "id": 2.0, "shape": 1.5, "name": 1.0}

_MAX_DEPTH = 4


# --------------------------------------------------------------------------- names


_VERBS = ("get", "find", "list", "search", "lookup", "look_up", "fetch", "read", "retrieve", "query", "show", "describe")


def returned_name(tool: str) -> str:
    """The name a tool's bare (primitive) result goes by: `find_user_id_by_email` -> `user_id`."""
    s = norm(tool)
    s = re.split(r"_(?:by|for|from|with|of)_", s, maxsplit=1)[0]
    parts = s.split("_")
    if parts and parts[0] in _VERBS:
        parts = parts[1:]
    return "_".join(parts)


def tool_kind(t: A.ToolDecl) -> str:
    """The kind annotation the synthesizer wrote (`@read` ... `@action`); `action` when absent."""
    for a in t.annotations:
        if a in KINDS:
            return a
    return "action"


# --------------------------------------------------------------------------- types


strip_optional = A.strip_optional  # one definition, in the AST module


def prim_class(t: A.TypeExpr) -> str | None:
    """Coarse value class for compatibility: "str", "num", "bool", "any" or None (not primitive):
    `forgec.lang.types.value_class` of the checker's type. Memoized by node identity: `build_graph`
    asks it for every (output, parameter) pair (3.5 million times for a 373-tool env), and hashing a
    frozen type node by value walks it each time."""
    hit = _PRIM.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    c = value_class(scalar_type(t))
    if len(_PRIM) > 65536:
        _PRIM.clear()
    _PRIM[id(t)] = (t, c)  # the node is kept alive with its entry, so its id is not reused while cached
    return c


_PRIM: dict[int, tuple] = {}


def record_fields(env: A.EnvDecl, t: A.TypeExpr) -> tuple[A.FieldDecl, ...] | None:
    """Fields of a record-like type (inline record, named record, or an entity record)."""
    t = strip_optional(t)
    if isinstance(t, A.RecordType):
        return t.fields
    if isinstance(t, A.NamedType):
        r = env.record(t.name)
        if r is not None:
            return r.fields
        e = env.entity(t.name)
        if e is not None:
            return e.fields
    return None


def required_fields(fields: Iterable[A.FieldDecl]) -> list[str]:
    """Names of the fields a value must give (the checker's rule: no default, not optional)."""
    return [f.name for f in fields if required(f)]


# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True)
class Output:
    """A place in a tool's result: `path` ("*" = each list element) and what is found there."""

    path: tuple[str, ...]
    name: str  # the field name (or the tool's returned name at the top)
    owner: str  # normalized name of the record/entity (or list field) the value sits in
    cls: str | None  # prim class, None for records/lists
    entity: str | None  # entity whose key this value is
    fields: tuple[str, ...] | None  # field names when the value is a record
    record_type: str | None  # the named record/entity type when the value is a record
    is_list: bool = False  # the value is a list (of `entity` keys / records)
    leaf: A.TypeExpr | None = None  # the primitive/enum type of a scalar value


def outputs(env: A.EnvDecl, tool: A.ToolDecl) -> list[Output]:
    """Every place in `tool`'s result that could feed a parameter (depth-limited, deterministic order)."""
    out: list[Output] = []
    _walk(env, tool.returns, (), returned_name(tool.name), returned_name(tool.name), True, 0, out, None)
    return out


def _walk(env, t, path, name, owner, top, depth, out, key_of):
    t = strip_optional(t)
    if depth > _MAX_DEPTH:
        return
    if isinstance(t, A.ListType):
        item = strip_optional(t.item)
        # the list as a whole
        # inside a field, a list of entities holds keys; a tool returning list[E] returns records
        ent = item.name if isinstance(item, A.NamedType) and env.entity(item.name) and not top else None
        rf = record_fields(env, item)
        out.append(Output(path, name, owner, None, ent, tuple(f.name for f in rf) if rf else None,
                          item.name if isinstance(item, A.NamedType) else None, True))
        _walk(env, item, path + ("*",), singular(name), owner, top, depth + 1, out, None)
        return
    if isinstance(t, A.NamedType):
        ent = env.entity(t.name)
        if ent is not None and not top:
            # a field typed with an entity stores that entity's key
            key = next((f for f in ent.fields if f.name == ent.key), None)
            cls = prim_class(key.type) if key is not None else "str"
            out.append(Output(path, name, owner, cls, ent.name, None, None, leaf=key.type if key is not None else None))
            return
        fields = record_fields(env, t)
        if fields is None:
            return
        out.append(Output(path, name, owner, None, None, tuple(f.name for f in fields), t.name))
        for f in fields:
            _walk(env, f.type, path + (f.name,), f.name, norm(t.name), False, depth + 1, out,
                  ent.name if ent is not None and f.name == ent.key else None)
        return
    if isinstance(t, A.RecordType):
        out.append(Output(path, name, owner, None, None, tuple(f.name for f in t.fields), None))
        for f in t.fields:
            _walk(env, f.type, path + (f.name,), f.name, norm(name), False, depth + 1, out, None)
        return
    cls = prim_class(t)
    if cls is not None:
        out.append(Output(path, name, owner, cls, key_of, None, None, leaf=t))


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class Match:
    evidence: str  # entity | id | name | shape
    mode: str  # value | wrap | record | record_wrap


def scalar_fits(src: A.TypeExpr | None, dst: A.TypeExpr) -> bool:
    """The checker's rule (`forgec.lang.check.fits`) for scalars: an enum feeds an enum only with a
    subset of its values, an int feeds a float but not the reverse (a str may feed an enum: checked
    when it runs); nulls aside, since a null is never fed along an edge."""
    if src is None:
        return True
    return fits(strip_opt(scalar_type(src)), strip_opt(scalar_type(dst)))


def _compatible(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and (a == b or "any" in (a, b))


def _entity_names(env: A.EnvDecl, ent: str) -> set[str]:
    """Parameter names that denote entity `ent`'s key: its key field and `<entity>_id`."""
    return _env_index(env)[1].get(ent) or {norm(ent) + "_id", norm(ent) + "id"}


_INDEX: dict[int, tuple] = {}  # id(env) -> (env, entities by name, key names by entity, entity by key name)


def _env_index(env: A.EnvDecl) -> tuple:
    """Per-env lookups `match` needs for every (output, parameter) pair, built once per env object."""
    hit = _INDEX.get(id(env))
    if hit is not None and hit[0] is env:
        return hit[1:]
    by_name = {e.name: e for e in env.entities}
    names = {e.name: {norm(e.name) + "_id", norm(e.name) + "id", norm(e.key)} for e in env.entities}
    first: dict[str, str] = {}
    for e in env.entities:  # the first entity (declaration order) a name denotes wins, as before
        for n in sorted(names[e.name]):
            first.setdefault(n, e.name)
    if len(_INDEX) > 64:
        _INDEX.clear()
    _INDEX[id(env)] = (env, by_name, names, first)
    return by_name, names, first


def match(env: A.EnvDecl, o: Output, p: A.ParamDecl) -> Match | None:
    """Can the value at output `o` feed parameter `p`?  Strongest evidence first."""
    pt = strip_optional(p.type)
    pn = norm(p.name)
    is_list = isinstance(pt, A.ListType)
    item = strip_optional(pt.item) if is_list else pt
    # 1. entity reference
    ents, _names, by_key_name = _env_index(env)
    want = item.name if isinstance(item, A.NamedType) and item.name in ents else None
    if want is None and prim_class(item) in ("str", "num"):
        # a primitive parameter named after an entity key (`order_id: str`): the first entity it names
        singular_pn = singular(pn) if is_list else pn
        hits = [by_key_name[n] for n in (singular_pn, pn) if n in by_key_name]
        if hits:
            order = list(ents)
            want = min(hits, key=order.index)
    if want is not None and o.entity == want:
        if not isinstance(item, A.NamedType) and not scalar_fits(o.leaf, item):
            return None  # an int key cannot feed a str parameter (the checker says so)
        if o.is_list:
            return Match("entity", "value") if is_list else None
        return Match("entity", "wrap" if is_list else "value")
    if want is not None and isinstance(item, A.NamedType):
        # an entity parameter fed by a same-named primitive (synthesizer typed the field as str)
        key = next((f for f in ents[want].fields if f.name == ents[want].key), None)
        if (o.cls is not None and not o.is_list and norm(o.name) in (_entity_names(env, want) | {pn})
                and (key is None or scalar_fits(o.leaf, key.type))):
            return Match("name", "wrap" if is_list else "value")
        return None
    # 3. record shapes
    pfields = record_fields(env, item)  # entity parameters returned above: records only here
    if pfields is not None:
        if o.fields is None:
            return None
        req = set(required_fields(pfields))
        have = set(o.fields)
        if o.is_list:
            if not is_list:
                return None
            same_named = (isinstance(item, A.NamedType) and o.record_type == item.name)
            if same_named or (have == {f.name for f in pfields} and norm(o.name) == pn):
                return Match("shape", "value")
            return None
        if not req or not req <= have:
            return None
        if len(req) < 2 and norm(o.name) != pn and not (o.record_type and isinstance(item, A.NamedType) and o.record_type == item.name):
            return None
        return Match("shape", "record_wrap" if is_list else "record")
    # 2. name evidence on primitives
    pc = prim_class(item)
    if pc is None or o.cls is None or not _compatible(pc, o.cls) or not scalar_fits(o.leaf, item):
        if not (is_list and o.is_list and o.cls is None and o.fields is None):
            return None
    target = singular(pn) if is_list else pn
    if o.is_list:
        # a list of primitives feeding a list parameter of the same name
        return Match("name", "value") if is_list and norm(o.name) == pn and o.fields is None else None
    on = norm(o.name)
    if on == pn or (is_list and on == target):
        return Match("name", "wrap" if is_list else "value")
    if on == "id" and target.endswith("_id"):
        # `payment_methods[*].id` -> `payment_method_id` (or the shorter `payment_id`)
        stem, owner = target[:-3], singular(o.owner)
        if stem == owner or stem == o.owner or (len(stem) >= 3 and owner.startswith(stem + "_")):
            return Match("id", "wrap" if is_list else "value")
    return None


# --------------------------------------------------------------------------- the graph


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    path: tuple[str, ...]
    param: str
    evidence: str
    mode: str

    @property
    def label(self) -> str:
        return f"{path_str(self.src, self.path)} -> {self.dst}.{self.param}"

    @property
    def weight(self) -> float:
        return EVIDENCE_WEIGHT[self.evidence]


def path_str(tool: str, path: tuple[str, ...]) -> str:
    s = tool
    for seg in path:
        s += "[*]" if seg == "*" else f".{seg}"
    return s


class ToolGraph:
    """A networkx MultiDiGraph of tools; edge keys are `path->param` labels, data has an `edge`: Edge."""

    def __init__(self, env: A.EnvDecl, g: nx.MultiDiGraph):
        self.env = env
        self.g = g
        self._into: dict[tuple[str, str | None], list[Edge]] = {}
        self._from: dict[str, list[Edge]] = {}

    # ----- queries
    @property
    def tools(self) -> list[str]:
        return list(self.g.nodes)

    def kind(self, tool: str) -> str:
        return self.g.nodes[tool]["kind"]

    def writes(self, tool: str) -> bool:
        return self.g.nodes[tool]["writes"]

    def edges(self) -> list[Edge]:
        return [d["edge"] for _, _, d in self.g.edges(data=True)]

    def edges_into(self, tool: str, param: str | None = None) -> list[Edge]:
        """Edges feeding `tool` (or only its parameter `param`), cached: the sampler asks often."""
        k = (tool, param)
        if k not in self._into:
            if tool not in self.g:
                self._into[k] = []
            else:
                self._into[k] = [d["edge"] for _, _, d in self.g.in_edges(tool, data=True) if param is None or d["edge"].param == param]
        return self._into[k]

    def edges_from(self, tool: str) -> list[Edge]:
        if tool not in self._from:
            self._from[tool] = [d["edge"] for _, _, d in self.g.out_edges(tool, data=True)] if tool in self.g else []
        return self._from[tool]

    def has_edge(self, src: str, dst: str, param: str | None = None, path: str | None = None) -> bool:
        """`path` is compared with the label form (`orders[*]`, `[*].flight_number`, `` for the whole result)."""
        for e in self.edges_into(dst, param):
            if e.src == src and (path is None or path_str("", e.path).lstrip(".") == path):
                return True
        return False

    def user_provided(self, tool: str) -> list[str]:
        """Parameters no tool can supply: facts the simulated user must know (declaration order)."""
        t = self.env.tool(tool)
        if t is None:
            return []
        fed = {e.param for e in self.edges_into(tool)}
        return [p.name for p in t.params if p.name not in fed]

    # ----- renderings
    def to_json(self) -> dict:
        return {
            "env": self.env.name,
            "tools": [
                {"name": n, "kind": d["kind"], "writes": d["writes"], "params": d["params"], "user_provided": self.user_provided(n)}
                for n, d in self.g.nodes(data=True)
            ],
            "edges": [
                {"from": e.src, "to": e.dst, "path": path_str("", e.path).lstrip("."), "param": e.param,
                 "evidence": e.evidence, "mode": e.mode, "label": e.label}
                for e in self.edges()
            ],
        }

    def to_dot(self) -> str:
        """Graphviz DOT: read tools are blue ellipses, write tools orange boxes; entity edges bold."""
        out = [f"digraph {_dot_id(self.env.name)} {{", "  rankdir=LR;", '  node [fontname="Helvetica"];', '  edge [fontname="Helvetica", fontsize=9];']
        for n, d in self.g.nodes(data=True):
            if d["writes"]:
                style = 'shape=box, style="filled,rounded", fillcolor="#fde2c8", color="#c0601a"'
            else:
                style = 'shape=ellipse, style=filled, fillcolor="#dbe9fb", color="#2b5fa8"'
            up = self.user_provided(n)
            label = n + f"\\n@{d['kind']}" + (f"\\nuser: {', '.join(up)}" if up else "")
            out.append(f"  {_dot_id(n)} [label={_dot_str(label)}, {style}];")
        for e in self.edges():
            lab = path_str("", e.path).lstrip(".") or "result"
            attrs = f"label={_dot_str(lab + ' → ' + e.param)}"
            if e.evidence == "entity":
                attrs += ", penwidth=2"
            elif e.evidence in ("name", "id"):
                attrs += ", style=dashed"
            out.append(f"  {_dot_id(e.src)} -> {_dot_id(e.dst)} [{attrs}];")
        out.append("}")
        return "\n".join(out) + "\n"

    def to_mermaid(self) -> str:
        """Mermaid flowchart: read tools rounded, write tools as boxes (classDef read/write)."""
        return "\n".join(["flowchart LR", *self.mermaid_lines(), *_MERMAID_CLASSES]) + "\n"

    def mermaid_lines(self, prefix: str = "t_", indent: str = "  ") -> list[str]:
        """The nodes and edges of the flowchart, node ids starting with `prefix` (unique per env in a multi-env chart)."""
        out = []
        for n, d in self.g.nodes(data=True):
            mid = _mermaid_id(n, prefix)
            out.append(f'{indent}{mid}["{n}"]:::write' if d["writes"] else f'{indent}{mid}("{n}"):::read')
        for e in self.edges():
            lab = (path_str("", e.path).lstrip(".") or "result") + " → " + e.param
            arrow = "==>" if e.evidence == "entity" else "-.->" if e.evidence in ("name", "id") else "-->"
            out.append(f'{indent}{_mermaid_id(e.src, prefix)} {arrow}|"{lab}"| {_mermaid_id(e.dst, prefix)}')
        return out


_MERMAID_CLASSES = ("  classDef read fill:#dbe9fb,stroke:#2b5fa8", "  classDef write fill:#fde2c8,stroke:#c0601a")


def mermaid_of(graphs: list[tuple[str, "ToolGraph"]]) -> str:
    """One Mermaid flowchart for several envs: a `subgraph` per env, node ids prefixed by the env (two envs may
    have a tool of the same name). One env gives `ToolGraph.to_mermaid()`'s chart; a chart has one header."""
    if len(graphs) == 1:
        return graphs[0][1].to_mermaid()
    out = ["flowchart LR"]
    for i, (name, g) in enumerate(graphs):
        out.append(f'  subgraph e{i}_{re.sub(r"[^A-Za-z0-9_]", "_", name)}["{name}"]')
        out += g.mermaid_lines(prefix=f"e{i}_t_", indent="    ")
        out.append("  end")
    return "\n".join([*out, *_MERMAID_CLASSES]) + "\n"


def _dot_id(s: str) -> str:
    return s if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s) else _dot_str(s)


def _dot_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\\\\n", "\\n") + '"'


def _mermaid_id(s: str, prefix: str = "t_") -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", s)


def build_graph(env: A.EnvDecl, exclude: Iterable[str] = frozenset(), writes: Mapping[str, bool] | None = None) -> ToolGraph:
    """The dependency graph of `env`'s tools (minus `exclude`, e.g. tools that failed verification).

    `writes` (the generated module's WRITES_STATE) overrides the kind annotations
    when known; otherwise create/update/delete/action tools count as writes.
    """
    exclude = set(exclude)
    tools = [t for t in env.tools if t.name not in exclude]
    g = nx.MultiDiGraph(name=env.name)
    for t in tools:
        kind = tool_kind(t)
        w = writes.get(t.name, kind in WRITE_KINDS) if writes is not None else kind in WRITE_KINDS
        g.add_node(t.name, kind=kind, writes=bool(w), params=[p.name for p in t.params])
    outs = {t.name: outputs(env, t) for t in tools}
    for u in tools:
        for v in tools:
            if u.name == v.name:
                continue
            for p in v.params:
                for o in outs[u.name]:
                    m = match(env, o, p)
                    if m is None:
                        continue
                    e = Edge(u.name, v.name, o.path, p.name, m.evidence, m.mode)
                    g.add_edge(u.name, v.name, key=f"{path_str('', o.path)}->{p.name}", edge=e)
    return ToolGraph(env, g)


def iter_paths(value: Any, path: tuple[str, ...]) -> Iterator[Any]:
    """All values at `path` in a JSON value ("*" fans out over list elements)."""
    if not path:
        yield value
        return
    seg, rest = path[0], path[1:]
    if seg == "*":
        if isinstance(value, list):
            for x in value:
                yield from iter_paths(x, rest)
    elif isinstance(value, dict) and seg in value:
        yield from iter_paths(value[seg], rest)
