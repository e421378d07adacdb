"""The blueprint sampler: execution-guided random walks over the tool graph -> task DAGs.

Every task of an env starts from the same seeded world state (like tau-bench's
shared database). A task is built by actually running tools in the env
(`Env.step` on a private copy of that state), so:

* literals the user must provide are picked from the state (an existing user
  id, an origin that flights leave from), and every sampled call succeeds;
* reasoning nodes (`stdlib.ops`) are evaluated on real results; an `Ambiguous`
  answer (a tie in argmin, an empty list) means "pick another operator/field";
* the blueprint text holds the literal facts, so lowering re-executes it on the
  same world state and gets the same calls, results and gold end state.

One walk: a start tool fed by user facts, then repeatedly a tool that an
inference edge of the graph can feed from the nodes so far (weights prefer
entity-reference edges, penalize revisits and spread coverage to rarely used
tools). Picking one element out of a list is always a reasoning node
(argmin/argmax by a numeric field, filter by an enum then first, first/last);
a list of keys may also fan out (fetch 2-3 of them, then aggregate). A task may
merge a second walk into the same DAG; a read call whose result is already
known (the same entity fetched through another key) collapses into the
earlier node. Each task ends in a write (or, for read-only tasks, a `tell`),
unused reads are pruned, structurally identical DAGs are dropped.

Task quality (an agent must reach exactly the gold end state from the instruction alone):
the goal names every write in order and says every choice the way a user would
(`_Phrases`: "the cheapest flight in the flight search results", "the reservation with
the most seats in my reservations", "the most recent pending order in my orders"); a
fan-out fetches the first k of a list, never a random subset; a call never gets one id
in two key parameters, a task never repeats a write on the same record, a write that
changes nothing is not a step; optional arguments are left out rather than told as null
or empty facts.
"""

from __future__ import annotations

import json
import math
import random
import re
from bisect import bisect
from collections import Counter
from itertools import accumulate
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping

from forgec.english import is_plural, participle, plural, singular
from forgec.graph import Edge, ToolGraph, iter_paths, norm, prim_class, record_fields, required_fields, returned_name, strip_optional
from forgec.lang import ast as A
from forgec.lang.check import node_reads
from forgec.runtime.envrt import jcopy
from forgec.stdlib import ops as OPS
from forgec.wording import humanize
from forgec.lower import dag_stats
from forgec import lang
from forgec.diagnostics import Span

_REVISIT = [0.2 ** k for k in range(32)]  # revisit penalty by times a tool was used

_MISSING = object()

# words the language reserves (and `user`, the facts namespace): never node names
_RESERVED = {
    "user", "call", "reason", "expect", "tell", "knows", "goal", "persona", "blueprint", "env", "for", "in", "not",
    "and", "or", "true", "false", "null", "none", "where", "it", "state", "import", "tool", "entity", "record", "key",
    "let", "set", "insert", "delete", "append", "remove", "if", "else", "return", "require", "python", "to", "from",
    "str", "int", "float", "bool", "any", "list", "enum",
}


@dataclass
class SampleConfig:
    """Knobs of the sampler (defaults aim at ≥4 calls, ≥1 reasoning node, ≥3 inference edges per task)."""

    tasks_per_env: int = 120
    min_calls: int = 3
    max_calls: int = 8
    reasoning_ratio: float = 0.9  # chance to use a list output (through a reasoning node) when one can feed a call
    max_depth: int = 10  # longest chain of nodes (levels) in a DAG
    write_ratio: float = 0.5  # most write calls per task = max(1, round(write_ratio * planned calls))
    read_only_ratio: float = 0.1  # share of read-only tasks (they end in `tell`)
    merge_ratio: float = 0.3  # chance that a task merges a second walk into its DAG
    seed: int = 0
    max_attempts: int = 0  # 0 = 25 * tasks_per_env
    family_share: float = 0.1  # most tasks of one template (the same tools called in the same order): this share of tasks_per_env, at least 4
    policy: str = ""  # the env's policy pages (Environment.policy): docs the user and agent read, beside the tool docs
    evolve: Any = None  # forgec.evolve.SamplerRules: `forgec evolve`'s rules (reject or thin out families); None = none

    def __post_init__(self) -> None:
        if self.tasks_per_env < 0 or self.min_calls < 1 or self.max_calls < self.min_calls:
            raise ValueError("need tasks_per_env >= 0 and 1 <= min_calls <= max_calls")
        for k in ("reasoning_ratio", "write_ratio", "read_only_ratio", "merge_ratio", "family_share"):
            if not 0.0 <= getattr(self, k) <= 1.0:
                raise ValueError(f"{k} must be in [0, 1]")


@dataclass
class SampledBlueprint:
    name: str
    decl: A.BlueprintDecl
    text: str
    stats: dict


@dataclass
class SampleResult:
    blueprints: list[SampledBlueprint]
    coverage: dict[str, int]
    rejected: dict[str, int]
    attempts: int = 0
    merged: int = 0  # read calls that collapsed into an earlier node with the same result (accepted tasks)
    left_out: dict[str, str] = field(default_factory=dict)  # write tools no task asks for -> why (the policy limits them)


class _Reject(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------- statistics


def blueprint_stats(decl: A.BlueprintDecl, writes: Mapping[str, bool] | None = None) -> dict:
    """`forgec.lower.dag_stats` as a dict (the one DAG count: the task files use it too).
    Without `writes` (tool -> writes state) write_calls is 0."""

    return dag_stats(decl, writes).model_dump()


def structure_key(decl: A.BlueprintDecl) -> str:
    """A DAG's shape: tools, operators, fields and wiring, with user literals abstracted away."""
    pos = {}
    parts = []
    for i, n in enumerate(decl.nodes):
        if isinstance(n, A.CallNode):
            parts.append(("call", n.tool, tuple((a.name, _shape(a.value, pos)) for a in n.args)))
        elif isinstance(n, A.ReasonNode):
            parts.append(("reason", n.op, tuple(_shape(a, pos) for a in n.args),
                          tuple((k.name, _shape(k.value, pos, keep_names=True)) for k in n.kwargs)))
        elif isinstance(n, A.TellNode):
            parts.append(("tell", _shape(n.value, pos)))
        elif isinstance(n, A.ExpectNode):
            parts.append(("expect", _shape(n.cond, pos)))
        if hasattr(n, "name"):
            pos[n.name] = i
    return json.dumps(parts, separators=(",", ":"))


def _shape(e: Any, pos: dict, keep_names: bool = False) -> Any:
    if isinstance(e, A.Name):
        return ["n", pos[e.id]] if e.id in pos else (["f", e.id] if keep_names else ["?"])
    if isinstance(e, A.Attr):
        if isinstance(e.obj, A.Name) and e.obj.id == "user":
            return ["fact"]
        return ["a", _shape(e.obj, pos), e.name]
    if isinstance(e, A.Index):
        return ["i", _shape(e.obj, pos), _shape(e.index, pos)]
    if isinstance(e, A.ListLit):
        return ["l"] + [_shape(i, pos) for i in e.items]
    if isinstance(e, A.RecordLit):
        return ["r"] + [[f.name, _shape(f.value, pos)] for f in e.fields]
    if isinstance(e, A.Binary):
        return ["b", e.op, _shape(e.left, pos), _shape(e.right, pos)]
    if isinstance(e, A.Literal):
        return ["lit", e.value] if keep_names or isinstance(e.value, int) and not isinstance(e.value, bool) else ["lit"]
    return [type(e).__name__]


# --------------------------------------------------------------------------- small helpers


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _same(a: Any, b: Any) -> bool:
    """JSON-equal (bools are not numbers; 1 == 1.0 as in canonical JSON)."""
    if a != b:  # JSON-equal implies ==, and `!=` runs in C: most comparisons end here
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b if not (_is_num(a) and _is_num(b)) else a == b


def _empty(v: Any) -> bool:
    """null, "", [] or {} (also inside a record): never worth a user fact."""
    if isinstance(v, dict):
        return not v or any(_empty(x) for x in v.values())
    return v is None or v == "" or v == []


def _args_key(values: dict) -> Any:
    """A hashable key for call arguments: a tuple when they are all ids/scalars (the common case),
    else canonical JSON."""
    out = []
    for k in sorted(values):
        v = values[k]
        if isinstance(v, (dict, list)):
            return _canon(values)
        out.append((k, type(v).__name__, v))
    return tuple(out)


def _id_key(v: Any) -> Any:
    """A hashable identity for an id value (scalars directly, anything else as canonical JSON)."""
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return ("#", v)
    return ("json", _canon(v))


def _is_error(v: Any) -> bool:
    return isinstance(v, BaseException)


def literal_expr(v: Any) -> A.Expr:
    """A JSON value as a literal expression."""
    if isinstance(v, list):
        return A.ListLit(tuple(literal_expr(x) for x in v))
    if isinstance(v, dict):
        return A.RecordLit(tuple(A.FieldInit(k, literal_expr(x)) for k, x in v.items()))
    return A.Literal(v)


def _attrs(base: A.Expr, path: Iterable[str]) -> A.Expr:
    for seg in path:
        base = A.Attr(base, seg)
    return base


def _get(v: Any, path: Iterable[str]) -> Any:
    for seg in path:
        if isinstance(v, dict) and seg in v:
            v = v[seg]
        else:
            return _MISSING
    return v


@lru_cache(maxsize=8192)
def _ident(s: str) -> str:
    s = re.sub(r"[^a-z0-9_]+", "_", norm(s)).strip("_") or "x"
    if s[0].isdigit():
        s = "n_" + s
    return s


_NUM_TYPES = {int, float}
_STR_TYPE = {str}


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# --------------------------------------------------------------------------- the builder of one task


@dataclass(slots=True, eq=False)
class _Node:
    name: str
    ast: A.BlueprintNode
    value: Any
    origin: tuple[str, tuple[str, ...]] | None  # (tool, path in its result) this value sits at
    level: int
    desc: str  # noun phrase for goal text ("the order with the highest total")
    is_call: bool = False
    writes: bool = False
    tool: str = ""
    picks: tuple = ()  # (node name, list path) when this reason node picks one element of that list
    meta: dict | None = None  # for reason nodes: what they compute, in words-to-be (see _Phrases)
    refs: frozenset = frozenset()  # earlier nodes it reads (its inference edges)


class _Task:
    """One task under construction: nodes executed so far on a private env copy."""

    def __init__(self, s: "_Sampler", rng: random.Random, read_only: bool):
        self.s = s
        self.rng = rng
        self.read_only = read_only
        # reads run on the sampler's shared env (they change nothing); the first write forks it
        self.env = s.base_env
        self.forked = False
        self.nodes: list[_Node] = []
        self.facts: dict[str, Any] = {}
        self.used_names: set[str] = set()
        self.tool_uses: Counter = Counter()
        self.uses_l = [0] * len(s.tool_order)  # tool_uses by tool position (for call_weights)
        self.merged = 0
        self.by_origin: dict[str, list[tuple[int, _Node]]] = {}  # origin tool -> nodes whose value comes from it
        self._sources: dict[tuple[str, str], list] = {}  # cache of sources(), valid until nodes change
        self._memo: dict[str, Any] = {}  # other per-node-set caches (useful calls, fan-out options)
        self.n_calls = self.n_writes = 0
        self.max_writes = 1
        self.seen: dict[str, list[str]] = {}  # entity -> keys of records this task's calls returned
        self._options: dict[tuple, tuple] = {}  # (id(node), list path) -> (node, selection options)
        self.write_sigs: set = set()  # (write tool, its key arguments) already in this task
        self.node_by_name: dict[str, _Node] = {}
        self.hash_now: str | None = None  # state hash of the forked env after the last read (None: unknown)
        self.ref_count: Counter = Counter()  # node name -> how many later nodes read it
        self.n_useful = 0  # writes + reads some later node reads (see useful_calls)

    # ----- names
    def fresh(self, base: str) -> str:
        base = _ident(base)[:40].strip("_") or "x"
        if base in _RESERVED:
            base += "_1"
        name, i = base, 2
        while name in self.used_names or name in self.s.tool_names:
            name, i = f"{base}_{i}", i + 1
        self.used_names.add(name)
        return name

    def fact(self, param: str, value: Any) -> A.Expr:
        """`user.<name>` for a user-provided value (reusing a fact with the same name and value)."""
        base = _ident(param)
        name, i = base, 2
        while name in self.facts and _canon(self.facts[name]) != _canon(value):
            name, i = f"{base}_{i}", i + 1
        self.facts[name] = value
        return A.Attr(A.Name("user"), name)

    def push(self, node: _Node) -> None:
        self._sources.clear()
        self._memo.clear()
        self.nodes.append(node)
        self.node_by_name[node.name] = node
        rc = self.ref_count
        for r in node.refs:
            c = rc.get(r, 0)
            rc[r] = c + 1
            if c == 0:
                src = self.node_by_name[r]
                self.n_useful += src.is_call and not src.writes  # a read becomes useful when first read
        self.n_useful += node.is_call and node.writes
        self.n_calls += node.is_call
        self.n_writes += node.writes
        if node.origin is not None:
            self.by_origin.setdefault(node.origin[0], []).append((len(self.nodes) - 1, node))

    def pop(self) -> _Node:
        self._sources.clear()
        self._memo.clear()
        node = self.nodes.pop()
        self.node_by_name.pop(node.name, None)
        rc = self.ref_count
        for r in node.refs:
            rc[r] -= 1
            if rc[r] == 0:
                src = self.node_by_name[r]
                self.n_useful -= src.is_call and not src.writes
        self.n_useful -= node.is_call and node.writes
        self.n_calls -= node.is_call
        self.n_writes -= node.writes
        if node.origin is not None:
            self.by_origin[node.origin[0]].pop()
        return node

    @property
    def calls(self) -> int:
        return self.n_calls

    def useful_calls(self) -> int:
        """Calls that will survive pruning if the task ended now: writes and reads a later node uses."""
        return self.n_useful  # kept by push/pop

    @property
    def write_calls(self) -> int:
        return self.n_writes

    def by_name(self, name: str) -> _Node:
        return self.node_by_name[name]

    def level_of(self, ast: A.BlueprintNode) -> tuple[int, frozenset]:
        """(level in the DAG, the earlier nodes `ast` reads)."""
        refs = frozenset(node_reads(ast, self.node_by_name.keys()))
        return 1 + max((self.node_by_name[r].level for r in refs), default=0), refs

    # ----- execution
    def run_call(self, tool: str, args: list[A.Arg], values: dict, desc: str) -> _Node | None:
        """Execute a call; None when it fails or is redundant (then it is not added)."""
        writes = self.s.writes(tool)
        if writes and not self.forked:
            self.env, self.forked = self.s.fresh_env(), True
            self.hash_now = None
        if not self.forked:
            # a read on the untouched world state: the same arguments always give the same result,
            # and tasks ask the same reads again and again (results are never mutated in place)
            key = (tool, _args_key(values))
            result = self.s.read_cache.get(key, _MISSING)
            if result is _MISSING:
                result = self.env.step(tool, jcopy(values))
                self.s.check_base(tool)
                if len(self.s.read_cache) < 50000:
                    self.s.read_cache[key] = result
            if _is_error(result):
                return None
        else:
            # one state hash per call (the last one is remembered): did it change the state?
            h0 = self.hash_now or self.env.state_hash()
            result = self.env.step(tool, jcopy(values))  # the env may keep what it is given
            if _is_error(result):
                self.hash_now = h0  # calls are transactional: a failed one changed nothing
                return None
            self.hash_now = self.env.state_hash()
            if writes and self.hash_now == h0:
                return None  # a write that changes nothing (the flight it already has): pointless to ask for
            if not writes and self.hash_now != h0:
                writes = True  # a "read" that changed the state is a write of this task (the goal must say it)
        self.remember(result)
        if not writes:
            for n in self.nodes:
                if n.is_call and not n.writes and _same(n.value, result):
                    self.merged += 1
                    return n  # the same thing fetched again (maybe through another key): collapse
        name = self.fresh(self.s.node_base(tool))
        ast = A.CallNode(name, tool, tuple(args))
        lv, refs = self.level_of(ast)
        if lv > self.s.cfg.max_depth:
            raise _Reject("too-deep")
        node = _Node(name, ast, result, (tool, ()), lv, desc, True, writes, tool, refs=refs)
        self.push(node)
        if writes:
            sig = self.s.write_signature(tool, values)
            if sig is not None:
                self.write_sigs.add(sig)
        self.tool_uses[tool] += 1
        j = self.s.tool_order.get(tool)
        if j is not None:
            self.uses_l[j] += 1
        return node

    def add_reason(self, base: str, op: str, args: tuple, kwargs: dict, arg_values: list, meta: dict,
                   origin: tuple | None) -> _Node | None:
        kw_ast = []
        kw_vals = {}
        spec = OPS.OPS[op]
        for k, v in kwargs.items():
            ks = spec.kw(k)
            if ks is not None and ks.kind == "field":
                kw_ast.append(A.Arg(k, A.Name(v)))
            else:
                kw_ast.append(A.Arg(k, literal_expr(v)))
            kw_vals[k] = v
        try:
            value = OPS.apply(op, list(arg_values), kw_vals)
        except (OPS.Ambiguous, OPS.OpError):
            return None
        if value is None or value == [] or value == {}:
            return None
        name = self.fresh(base)
        ast = A.ReasonNode(name, op, tuple(args), tuple(kw_ast))
        lv, refs = self.level_of(ast)
        if lv > self.s.cfg.max_depth:
            self.used_names.discard(name)
            return None
        node = _Node(name, ast, value, origin, lv, "", meta=meta, refs=refs)
        self.push(node)
        return node

    def rollback(self, keep: int) -> None:
        """Forget reason nodes added after position `keep` (calls are never rolled back: the env ran them)."""
        while len(self.nodes) > keep and not self.nodes[-1].is_call:
            self.used_names.discard(self.pop().name)

    # ----- selection of one element out of a list (always a reasoning node)
    def select(self, n: _Node, prefix: tuple[str, ...], lst: list) -> _Node | None:
        """A reason node picking one element of the list `n.<prefix>` (argmin/argmax/filter+first/first/last)."""
        src = _attrs(A.Name(n.name), prefix)
        item = self.item_noun(n, prefix, lst)
        base = _ident(item)
        origin = (n.origin[0], n.origin[1] + prefix + ("*",)) if n.origin else None
        keep = len(self.nodes)
        ck = (id(n), prefix)  # the same list is offered again when a call is retried
        if ck not in self._options or self._options[ck][0] is not n:
            self._options[ck] = (n, self.selection_options(lst))
        for kind, fld, extra in _weighted_order(self.rng, self._options[ck][1]):
            if kind in ("argmin", "argmax"):
                word = "lowest" if kind == "argmin" else "highest"
                r = self.add_reason(f"{word}_{fld}_{base}", kind, (src,), {"by": fld}, [lst],
                                    {"op": kind, "field": fld, "src": n.name, "prefix": prefix, "item": item}, origin)
            elif kind == "filter":
                f = self.add_reason(f"{extra}_{base}s", "filter", (src,), {"by": fld, "eq": extra}, [lst],
                                    {"op": "filter", "field": fld, "value": extra, "src": n.name, "prefix": prefix, "item": item},
                                    (origin[0], origin[1][:-1]) if origin else None)
                if f is None:
                    continue
                # then one of them: an end of the filtered list, or an extreme ("my most recent pending order")
                ext = [o for _, o in self.selection_options(f.value) if o[0] in ("argmin", "argmax")]
                if ext and self.rng.random() < 0.5:
                    nxt, by, _x = ext[self.rng.randrange(len(ext))]
                    word = "lowest" if nxt == "argmin" else "highest"
                    r = self.add_reason(f"{word}_{by}_{extra}_{base}", nxt, (A.Name(f.name),), {"by": by}, [f.value],
                                        {"op": nxt, "field": by, "src": f.name, "prefix": (), "item": item}, origin)
                else:
                    nxt = self.rng.choice(["first", "last"])
                    r = self.add_reason(f"{nxt}_{extra}_{base}", nxt, (A.Name(f.name),), {}, [f.value],
                                        {"op": nxt, "src": f.name, "prefix": (), "item": item}, origin)
                if r is None:
                    self.rollback(keep)
                    continue
            else:
                r = self.add_reason(f"{kind}_{base}", kind, (src,), {}, [lst],
                                    {"op": kind, "src": n.name, "prefix": prefix, "item": item}, origin)
            if r is not None:
                r.picks = (n.name, prefix)
                return r
        return None

    def selection_options(self, lst: list) -> list[tuple[float, tuple]]:
        """(weight, (op, field, value)) choices for picking one element; argmin/argmax need a unique extreme.

        Cached by list object across tasks (cached reads hand every task the same result objects);
        the cache holds the list itself, so its id cannot be reused while the entry lives."""
        cache = self.s._sel_cache
        hit = cache.get(id(lst))
        if hit is not None and hit[0] is lst:
            return hit[1]
        out = self._selection_options(lst)
        if len(cache) > 20000:
            cache.clear()
        cache[id(lst)] = (lst, out)
        return out

    def _selection_options(self, lst: list) -> list[tuple[float, tuple]]:
        out = [(1.0, ("first", None, None)), (1.0, ("last", None, None))]
        if lst and all(isinstance(x, dict) for x in lst) and len(lst) >= 2:
            fields = sorted(set.intersection(*(set(x) for x in lst)))
            for f in fields:
                vals = [x[f] for x in lst]
                types = set(map(type, vals))  # one C-level pass instead of isinstance per value
                if types <= _NUM_TYPES and len(set(vals)) > 1:
                    out.append((3.0, ("argmin", f, None)))
                    out.append((3.0, ("argmax", f, None)))
                elif types == _STR_TYPE and f in self.s.enum_fields and 1 < len(set(vals)):
                    for v in sorted(set(vals)):
                        if re.fullmatch(r"[A-Za-z][A-Za-z0-9 _-]{0,30}", v):
                            out.append((2.0 / len(set(vals)), ("filter", f, v)))
        return out

    def item_noun(self, n: _Node, prefix: tuple[str, ...], lst: list) -> str:
        """What one element of the list `n.<prefix>` is called, singular: the entity its records (or
        keys) belong to ("flight"), else the list field's name (`line_items` -> "line item")."""
        return self.s.item_noun(n.tool if n.is_call else "", prefix, lst)

    # ----- sources for a parameter
    def sources(self, tool: str, param: str) -> list[tuple[float, _Node, Edge, tuple[str, ...]]]:
        """(weight, node, edge, rest of the edge's path below the node) for each way a node can feed `param`."""
        key = (tool, param)
        if key in self._sources:
            return self._sources[key]  # callers never mutate it (feed builds its own list)
        out = []
        total = max(1, len(self.nodes))
        by_src = self.s.into_by_src(tool, param)
        # the edges (in graph order) whose source tool some node came from
        edges = [x for src, nodes in self.by_origin.items() if nodes for x in by_src.get(src, ())]
        edges.sort(key=lambda x: x[0])
        below = self.s.path_below
        for ei, e, ew in edges:
            for i, n in self.by_origin[e.src]:
                rest = below(tool, param, ei, e, n.origin[1])
                if rest is None:
                    continue
                recency = 1.0 + i / total
                out.append((ew * recency * (1.0 if n.is_call else 1.5), n, e, rest))
        self._sources[key] = out
        return out

    def resolve(self, n: _Node, e: Edge, rest: tuple[str, ...]) -> tuple[A.Expr, Any] | None:
        """An expression (and its value) reading `rest` from node `n`, passed per the edge's mode."""
        if "*" in rest:
            # the edge starts at one element of a list: pick it with a reasoning node
            i = rest.index("*")
            lst = _get(n.value, rest[:i])
            if not isinstance(lst, list) or not lst:
                return None
            # one chosen element per list: a second parameter fed from the same list reads the same pick
            r = next((x for x in self.nodes if x.picks == (n.name, rest[:i])), None)
            if r is None:
                if self.rng.random() > self.s.cfg.reasoning_ratio:
                    return None
                r = self.select(n, rest[:i], lst)
            if r is None:
                return None
            n, rest = r, rest[i + 1:]
        v = _get(n.value, rest)
        if v is _MISSING or v is None or v == [] or v == "":
            return None
        return self.convert(_attrs(A.Name(n.name), rest), v, e, n, rest)

    def convert(self, expr: A.Expr, v: Any, e: Edge, n: _Node, rest: tuple[str, ...]):
        if e.mode == "wrap":
            return A.ListLit((expr,)), [v]
        if e.mode in ("record", "record_wrap"):
            if not isinstance(v, dict):
                return None
            t = self.s.env.tool(e.dst)
            p = next(p for p in t.params if p.name == e.param)
            pt = strip_optional(p.type)
            item = strip_optional(pt.item) if isinstance(pt, A.ListType) else pt
            fields = record_fields(self.s.env, item) or ()
            rec_fields, rec_vals = [], {}
            for f in fields:
                if f.name in v and v[f.name] is not None:
                    rec_fields.append(A.FieldInit(f.name, A.Attr(expr, f.name)))
                    rec_vals[f.name] = v[f.name]
                elif f.name in required_fields([f]):
                    return None
            rec = A.RecordLit(tuple(rec_fields))
            if e.mode == "record_wrap":
                return A.ListLit((rec,)), [rec_vals]
            return rec, rec_vals
        return expr, v

    # ----- user-provided values, picked from the state
    def user_values(self, tool: A.ToolDecl, params: list[A.ParamDecl]) -> dict[str, Any]:
        return self.s.values.pick(tool, params, self.env.state, self.rng, self.seen)

    def remember(self, result: Any) -> None:
        """Note the records a call returned, so later user facts tend to be about the same things
        (a second walk that starts from the same user collapses into the first: AutoForge's merge)."""
        ents = self.env.state.get("entities", {})
        if isinstance(result, dict):
            e = self.s.entity_of(result)
            if e is not None:
                self.seen.setdefault(e.name, []).append(str(result[e.key]))
        elif isinstance(result, (str, int)) and not isinstance(result, bool):
            for e in self.s.env.entities:
                if str(result) in (ents.get(e.name) or {}):
                    self.seen.setdefault(e.name, []).append(str(result))

    # ----- one call of `tool`, inference edges where possible
    def try_call(self, tool: str, need_edge: bool) -> _Node | None:
        """Call `tool` with parameters fed by inference edges where possible, the rest from user facts.

        A failed call (a precondition on the chosen order's status, say) is retried with fresh
        choices: other edges, other reasoning operators, other user values."""
        t = self.s._tool_decl[tool]
        keep = len(self.nodes)
        facts_before = dict(self.facts)
        failed: list[dict] = []  # argument values that already failed (the env is deterministic)
        for attempt in range(3):
            fed = self.feed(t, need_edge)
            if need_edge and not fed:
                self.rollback(keep)
                return None
            free = [p for p in t.params if p.name not in fed]
            self.facts = dict(facts_before)
            args, values = [], {}
            picked = self.user_values(t, [p for p in free if not (p.default is not None and self.rng.random() < 0.5)])
            for p in t.params:
                if p.name in fed:
                    args.append(A.Arg(p.name, fed[p.name][0]))
                    values[p.name] = fed[p.name][1]
                elif p.name in picked and not _empty(picked[p.name]):
                    # a null/empty value is never a fact: an optional argument is left out instead
                    args.append(A.Arg(p.name, self.fact(p.name, picked[p.name])))
                    values[p.name] = picked[p.name]
            before = len(self.nodes)
            sig = self.s.write_signature(tool, values) if self.s.writes(tool) else None
            if any(_same(values, f) for f in failed):
                node = None  # the same call again would fail again
            elif self.s.keys_clash(tool, values) or (sig is not None and sig in self.write_sigs):
                node = None  # from == to, or the same write again on the same record
            else:
                node = self.run_call(tool, args, values, "")
                if node is None:
                    failed.append(values)
            if node is not None:
                if len(self.nodes) == before:  # collapsed into an earlier node
                    self.facts = facts_before
                    self.rollback(keep)
                return node
            self.facts = facts_before
            self.rollback(keep)
        return None

    def feed(self, t: A.ToolDecl, need_edge: bool) -> dict[str, tuple[A.Expr, Any]]:
        """Expressions (and values) for the parameters of `t` that earlier nodes can supply."""
        fed: dict[str, tuple[A.Expr, Any]] = {}
        used: set[tuple[str, tuple[str, ...]]] = set()  # (node, parent path) already feeding this call
        for p in t.params:
            cands = self.sources(t.name, p.name)
            if not cands or (not need_edge and self.rng.random() < 0.2):
                continue
            # prefer the node (and the record inside it) that already feeds this call: an address
            # is copied from one record, not assembled from three
            if used:
                used_nodes = {u[0] for u in used}
                cands = [(w * (8.0 if (n.name, rest[:-1]) in used else 3.0 if n.name in used_nodes else 1.0), n, e, rest)
                         for w, n, e, rest in cands]
            else:
                cands = list(cands)  # popped below; the cached list stays whole
            tried = 0
            while cands and tried < 3:
                i = _pick(self.rng, [c[0] for c in cands])
                _, n, e, rest = cands.pop(i)
                tried += 1
                r = self.resolve(n, e, rest)
                if r is not None:
                    fed[p.name] = r
                    used.add((n.name, rest[:-1]))
                    break
        return fed

    # ----- fan-out: fetch several listed entities, then aggregate
    def fanout_options(self) -> list[tuple[float, _Node, Edge, tuple[str, ...]]]:
        if "fanout" in self._memo:
            return self._memo["fanout"]
        self._memo["fanout"] = out = []
        for n in self.nodes:
            if n.origin is None:
                continue
            for e in self.s.fanout_edges.get(n.origin[0], ()):
                op = n.origin[1]
                if e.path[: len(op)] != op:
                    continue
                rest = e.path[len(op):]
                if rest.count("*") != 1 or rest[-1] != "*":
                    continue
                lst = _get(n.value, rest[:-1])
                if isinstance(lst, list) and len(lst) >= 2 and all(isinstance(x, (str, int)) for x in lst):
                    out.append((2.0 * self.s.coverage_factor(e.dst), n, e, rest))
        return out

    def fanout(self, n: _Node, e: Edge, rest: tuple[str, ...]) -> _Node | None:
        prefix = rest[:-1]
        lst = _get(n.value, prefix)
        # the first k of the list (all of it when short): a user can say "among my first 3 orders",
        # nobody can say which random subset was fetched
        k = min(len(lst), self.rng.choice([2, 3, 3]))
        keep = len(self.nodes)
        fetched = []
        for i in range(k):
            expr = A.Index(_attrs(A.Name(n.name), prefix), A.Literal(i))
            c = self.run_call(e.dst, [A.Arg(e.param, expr)], {e.param: lst[i]}, "")
            if c is None or c in fetched:
                self._drop_from(keep)
                return None
            fetched.append(c)
        values = [c.value for c in fetched]
        item = self.item_noun(n, prefix, lst)
        opts = [(w, o) for w, o in self.selection_options(values) if o[0] in ("argmin", "argmax")]
        for kind, fld, _x in _weighted_order(self.rng, opts):
            word = "lowest" if kind == "argmin" else "highest"
            meta = {"op": kind, "field": fld, "src": n.name, "prefix": prefix, "item": item, "first": k, "of": len(lst)}
            r = self.add_reason(f"{word}_{fld}_{_ident(item)}", kind, (A.ListLit(tuple(A.Name(c.name) for c in fetched)),),
                                {"by": fld}, [values], meta, (e.dst, ()))
            if r is not None:
                return r
        self._drop_from(keep)
        return None

    def _drop_from(self, keep: int) -> None:
        """Remove nodes after `keep`; only reads were run there, so the env state is unaffected."""
        while len(self.nodes) > keep:
            n = self.pop()
            self.used_names.discard(n.name)
            if n.is_call:
                self.tool_uses[n.tool] -= 1
                j = self.s.tool_order.get(n.tool)
                if j is not None:
                    self.uses_l[j] -= 1

    # ----- aggregates for read-only tasks
    def aggregate_for_tell(self) -> A.Expr | None:
        cands = []
        for n in self.nodes:
            for prefix, lst in _lists_in(n.value):
                if lst and all(isinstance(x, dict) for x in lst):
                    cands.append((n, prefix, lst))
        self.rng.shuffle(cands)
        # lists at the end of the walk first: the tell then uses the whole chain of reads before it
        order = {id(n): i for i, n in enumerate(self.nodes)}
        cands.sort(key=lambda c: -order[id(c[0])])
        for n, prefix, lst in cands:
            src = _attrs(A.Name(n.name), prefix)
            item = self.item_noun(n, prefix, lst)
            fields = sorted(set.intersection(*(set(x) for x in lst)))
            nums = [f for f in fields if all(_is_num(x[f]) for x in lst)]
            scal = [f for f in fields if all(isinstance(x[f], (str, int, float)) and not isinstance(x[f], bool) for x in lst)]
            choice = self.rng.random()
            if nums and choice < 0.35:
                f = self.rng.choice(nums)
                r = self.add_reason(f"total_{f}", "sum", (src,), {"by": f}, [lst],
                                    {"op": "sum", "field": f, "src": n.name, "prefix": prefix, "item": item}, None)
                if r is not None:
                    return A.Name(r.name)
            if choice < 0.55 and len(lst) >= 1:
                r = self.add_reason(f"n_{_ident(plural(item))}", "count", (src,), {}, [lst],
                                    {"op": "count", "src": n.name, "prefix": prefix, "item": item}, None)
                if r is not None and r.value:
                    return A.Name(r.name)
                if r is not None:
                    self.rollback(len(self.nodes) - 1)
            sel = self.select(n, prefix, lst)
            if sel is not None and isinstance(sel.value, dict):
                show = [f for f in scal if sel.value.get(f) not in (None, "")]
                if show:
                    f = self.rng.choice(show)
                    return A.Attr(A.Name(sel.name), f)
        return None


def _pick(rng: random.Random, weights: list[float]) -> int:
    """`rng.choices(range(len(weights)), weights)[0]`, the same draw without its per-call overhead."""
    cum = list(accumulate(weights))
    return bisect(cum, rng.random() * (cum[-1] + 0.0), 0, len(cum) - 1)


def _weighted_order(rng: random.Random, weighted: list[tuple[float, Any]]) -> list[Any]:
    """Items in a random order where heavier items tend to come first (seeded; sampling without replacement)."""
    keyed = [(-(rng.random() ** (1.0 / w)), i) for i, (w, _) in enumerate(weighted) if w > 0]
    return [weighted[i][1] for _, i in sorted(keyed)]


def _lists_in(v: Any, prefix: tuple[str, ...] = (), depth: int = 0):
    if isinstance(v, list):
        yield prefix, v
        return
    if isinstance(v, dict) and depth < 2:
        for k in sorted(v):
            yield from _lists_in(v[k], prefix + (k,), depth + 1)


# --------------------------------------------------------------------------- picking user values from the state


class _Values:
    """Chooses the literals a user would know, from the world state, by name evidence."""

    def __init__(self, env: A.EnvDecl):
        self.env = env
        self.enum_fields: set[str] = set()
        for ent in env.entities:
            for f in ent.fields:
                if isinstance(strip_optional(f.type), A.EnumType):
                    self.enum_fields.add(f.name)
        for r in env.records:
            for f in r.fields:
                if isinstance(strip_optional(f.type), A.EnumType):
                    self.enum_fields.add(f.name)
        # param name -> [(entity, path)] where a value of that name lives in the state
        self._where: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for ent in env.entities:
            for f in ent.fields:
                self._index(ent.name, (f.name,), f.name, f.type, 0)
        self._keys = {norm(e.key): e.name for e in env.entities}
        for e in env.entities:
            self._keys.setdefault(norm(e.name) + "_id", e.name)

    def _index(self, ent: str, path: tuple[str, ...], name: str, t: A.TypeExpr, depth: int) -> None:
        self._where.setdefault(norm(name), []).append((ent, path))
        t = strip_optional(t)
        if depth >= 2:
            return
        if isinstance(t, A.ListType):
            item = strip_optional(t.item)
            fields = record_fields(self.env, item) if not (isinstance(item, A.NamedType) and self.env.entity(item.name)) else None
            for f in fields or ():
                self._index(ent, path + ("*", f.name), f.name, f.type, depth + 1)
        elif isinstance(t, (A.RecordType, A.NamedType)) and not (isinstance(t, A.NamedType) and self.env.entity(t.name)):
            for f in record_fields(self.env, t) or ():
                self._index(ent, path + (f.name,), f.name, f.type, depth + 1)

    def key_entity(self, p: A.ParamDecl) -> str | None:
        t = strip_optional(p.type)
        item = strip_optional(t.item) if isinstance(t, A.ListType) else t
        if isinstance(item, A.NamedType) and self.env.entity(item.name):
            return item.name
        if prim_class(item) in ("str", "num"):
            n = norm(p.name)
            return self._keys.get(n) or (self._keys.get(singular(n)) if isinstance(t, A.ListType) else None)
        return None

    def pick(self, tool: A.ToolDecl, params: list[A.ParamDecl], state: dict, rng: random.Random,
             seen: dict[str, list[str]] | None = None) -> dict[str, Any]:
        """Values for `params`, from one anchor record where possible; records in `seen` preferred."""
        ents = state.get("entities", {})
        self._seen = seen or {}
        out: dict[str, Any] = {}
        # anchor: the entity whose records hold most of the wanted values, so they agree (one flight's origin+date)
        cover: Counter = Counter()
        for p in params:
            for ent, _ in self._where.get(norm(p.name), ()):
                if ents.get(ent):
                    cover[ent] += 1
        anchor = None
        if cover:
            best = max(cover.values())
            anchor_ent = sorted(e for e, c in cover.items() if c == best)[0]
            anchor = (anchor_ent, ents[anchor_ent][self._choose_key(anchor_ent, ents, rng)])
        for p in params:
            v = self.value_for(p, ents, anchor, rng)
            if v is not _MISSING:
                out[p.name] = v
        return out

    def value_for(self, p: A.ParamDecl, ents: dict, anchor, rng: random.Random) -> Any:
        t = strip_optional(p.type)
        is_list = isinstance(t, A.ListType)
        ke = self.key_entity(p)
        if ke is not None and ents.get(ke):
            # the anchor's own key when it is a record of that entity, so the other values
            # (a branch name inside this repository) belong to the record the call names
            k = str(anchor[1].get(self.env.entity(ke).key)) if anchor is not None and anchor[0] == ke and not is_list else self._choose_key(ke, ents, rng)
            key_field = self.env.entity(ke).key
            k = ents[ke][k].get(key_field, k)
            return [k] if is_list else k
        if prim_class(t) == "str":  # a SQL statement over the state's tables (stdlib/sql_state.py)
            from forgec.stdlib.sql_state import sql_arg

            v = sql_arg(p.name, p.doc or "", ents, rng)
            if v is not None:
                return v
        found = []
        where = self._where.get(norm(p.name), [])
        if is_list and prim_class(t.item) is not None:  # a list of names: elements found under the singular
            where = self._where.get(singular(norm(p.name)), []) + where
        if anchor is not None:  # values of the anchor record first, so they agree with each other
            where = [w for w in where if w[0] == anchor[0]] + [w for w in where if w[0] != anchor[0]]
        for ent, path in where:
            recs = ents.get(ent) or {}
            if anchor is not None and anchor[0] == ent:
                vals = [v for v in iter_paths(anchor[1], path) if v is not None and not isinstance(v, (dict, list))]
            else:
                vals = []
            if not vals and recs:
                rec = recs[rng.choice(sorted(recs))]
                vals = [v for v in iter_paths(rec, path) if v is not None and not isinstance(v, (dict, list))]
            found.extend(vals)
            if found:
                break
        if found and not is_list and prim_class(t) is not None:
            v = rng.choice(found)
            if _fits(t, v):
                return v
        if found and is_list and prim_class(t.item) is not None:
            v = rng.choice(found)
            if _fits(t.item, v):
                return [v]
        return self.generate(t, p.name, p.default, ents, rng)

    def _choose_key(self, entity: str, ents: dict, rng: random.Random) -> str:
        """A record key of `entity`: one the task already saw (70%), else any."""
        seen = [k for k in getattr(self, "_seen", {}).get(entity, ()) if k in ents[entity]]
        if seen and rng.random() < 0.7:
            return rng.choice(seen)
        return rng.choice(sorted(ents[entity]))

    def generate(self, t: A.TypeExpr, name: str, default: A.Expr | None, ents: dict, rng: random.Random, depth: int = 0) -> Any:
        t = strip_optional(t)
        if default is not None and isinstance(default, A.Literal):
            return default.value
        if isinstance(t, A.EnumType):
            return rng.choice(list(t.values))
        if isinstance(t, A.PrimType):
            if t.name == "bool":
                return rng.random() < 0.5
            if t.name == "int":
                return rng.randint(1, 4)
            if t.name == "float":
                return float(rng.choice([10, 25, 50, 100, 150]))
            return f"{humanize(name)} {rng.randint(1, 99)}"
        if isinstance(t, A.ListType):
            v = self.generate(t.item, singular(name), None, ents, rng, depth + 1)
            return [] if v is _MISSING else [v]
        if isinstance(t, A.NamedType) and self.env.entity(t.name):
            recs = ents.get(t.name) or {}
            return rng.choice(sorted(recs)) if recs else _MISSING
        fields = record_fields(self.env, t)
        if fields is not None and depth < 3:
            out = {}
            for f in fields:
                if isinstance(f.type, A.OptionalType) or f.default is not None:
                    continue
                v = self.value_for(A.ParamDecl(f.name, f.type), ents, None, rng)
                if v is _MISSING:
                    return _MISSING
                out[f.name] = v
            if not out and fields:
                # all fields optional (a patch body): an empty one would be an empty fact and a no-op
                f = fields[rng.randrange(len(fields))]
                v = self.value_for(A.ParamDecl(f.name, strip_optional(f.type)), ents, None, rng)
                if v is _MISSING or v in (None, "", [], {}):
                    return _MISSING
                out[f.name] = v
            return out
        return _MISSING


def _fits(t: A.TypeExpr, v: Any) -> bool:
    t = strip_optional(t)
    if isinstance(t, A.EnumType):
        return v in t.values
    if isinstance(t, A.PrimType):
        return {"str": isinstance(v, str), "int": isinstance(v, int) and not isinstance(v, bool),
                "float": _is_num(v), "bool": isinstance(v, bool)}.get(t.name, True)
    return True


# --------------------------------------------------------------------------- the sampler


class _Sampler:
    def __init__(self, env: A.EnvDecl, module: Any, world: dict, graph: ToolGraph, cfg: SampleConfig):
        self.env = env
        self.module = module
        self.world = world
        self.graph = graph
        self.cfg = cfg
        self.tool_names = {t.name for t in env.tools}
        self.values = _Values(env)
        self.enum_fields = self.values.enum_fields
        ws = getattr(module, "WRITES_STATE", None) or {}
        self._writes = {t: bool(ws.get(t, graph.writes(t))) for t in graph.tools}
        # log-only tools (@conservative): neither a write a task asks for nor a read to use
        self.log_tools = frozenset(getattr(module, "LOG_TOOLS", None) or ())
        self.coverage: Counter = Counter({t: 0 for t in graph.tools})
        self.params = {t.name: [p.name for p in t.params] for t in env.tools}
        # parameters that name a record: entity-typed, or called `..._id(s)` / `key` / `code` / `number`
        self.key_params = {t.name: [p.name for p in t.params if self.values.key_entity(p) is not None
                                    or re.search(r"(^|_)(ids?|keys?|codes?|numbers?)$", norm(p.name))]
                           for t in env.tools}
        # one env on the world state; each task runs on a fork of it (`Env.fork` when the generated
        # module has it: no re-validation, incremental hashing), else on a fresh Env(world)
        self.base_env = module.Env(world)
        self.world_hash = self.base_env.state_hash()
        self._fork = getattr(self.base_env, "fork", None)
        # for each tool: source tool -> strongest evidence weight of an edge from it (quick step weights)
        self.in_by_src: dict[str, dict[str, float]] = {}
        for e in graph.edges():
            if e.dst in self.log_tools:
                continue
            d = self.in_by_src.setdefault(e.dst, {})
            d[e.src] = max(d.get(e.src, 0.0), e.weight)
        # source tool -> [(tool it feeds, strongest evidence weight)], for quick step weights
        self.out_w = {src: [] for src in graph.tools}
        for t, d in self.in_by_src.items():
            for src, w in d.items():
                self.out_w[src].append((t, w))
        self.tool_order = {t: i for i, t in enumerate(graph.tools)}
        self.out_weight = {t: sum(e.weight for e in graph.edges_from(t)) for t in graph.tools}
        self.entity_fields = {e.name: {f.name for f in e.fields} for e in env.entities}
        # edges a fan-out may use: an entity key out of a list into a read that needs nothing else
        self.fanout_edges: dict[str, list[Edge]] = {}
        for e in graph.edges():
            t = env.tool(e.dst)
            if (e.evidence == "entity" and e.mode == "value" and not self._writes[e.dst] and e.dst not in self.log_tools and e.path and e.path[-1] == "*"
                    and not any(p.name != e.param and p.default is None for p in t.params)):
                self.fanout_edges.setdefault(e.src, []).append(e)
        self._cov: dict[str, float] | None = None
        self._into: dict[tuple[str, str], dict] = {}
        self._entity_cands: dict[tuple, list] = {}
        self._below: dict[tuple, tuple | None] = {}
        self._sel_cache: dict[int, tuple[list, list]] = {}  # id(list) -> (list, selection options)
        self.read_cache: dict[tuple[str, str], Any] = {}  # (read tool, canonical args) -> result on the world state
        self._tool_decl = {t.name: t for t in env.tools}
        # source tool -> [(position of the tool it feeds, strongest weight)], for `call_weights`
        self.tools = list(graph.tools)
        self._out_idx = {src: [(self.tool_order[t], w) for t, w in lst] for src, lst in self.out_w.items()}
        self._cov_list: list[float] | None = None
        self._set_write_arrays()
        # tools from which some write tool can be reached along edges (where a write task may start)
        import networkx as nx

        writers = [t for t in graph.tools if self._writes[t]]
        self.reaches_write = {t for t in graph.tools if any(w != t and nx.has_path(graph.g, t, w) for w in writers)}
        self._bases: dict[str, str] = {}

    def writes(self, tool: str) -> bool:
        return self._writes.get(tool, False)

    def _set_write_arrays(self) -> None:
        self._is_write = [self._writes[t] for t in self.graph.tools]

    def path_below(self, tool: str, param: str, ei: int, e: Edge, op: tuple[str, ...]) -> tuple[str, ...] | None:
        """The rest of edge `e`'s path below a node sitting at path `op` of its tool's result (None:
        the edge does not start inside that node, or crosses two lists). Cached: pure in its inputs."""
        k = (tool, param, ei, op)
        if k in self._below:
            return self._below[k]
        rest = e.path[len(op):] if e.path[: len(op)] == op else None
        if rest is not None and rest.count("*") > 1:
            rest = None
        self._below[k] = rest
        return rest

    def into_by_src(self, tool: str, param: str) -> dict[str, list[tuple[int, Edge, float]]]:
        """The edges into `tool.param` grouped by source tool, with their position in graph order."""
        k = (tool, param)
        if k not in self._into:
            d: dict[str, list[tuple[int, Edge, float]]] = {}
            for i, e in enumerate(self.graph.edges_into(tool, param)):
                d.setdefault(e.src, []).append((i, e, e.weight))
            self._into[k] = d
        return self._into[k]

    def keys_clash(self, tool: str, values: dict) -> bool:
        """Two key/id parameters of one call get the same id (`from_user_id == to_user_id`,
        `item_ids` overlapping `new_item_ids`): a nonsense request, whatever the env allows."""
        seen: set[str] = set()
        for p in self.key_params.get(tool, ()):
            if p not in values:
                continue
            v = values[p]
            ids = {_id_key(x) for x in v} if isinstance(v, list) else {_id_key(v)}
            if ids & seen:
                return True
            seen |= ids
        return False

    def write_signature(self, tool: str, values: dict) -> tuple | None:
        """The write and the records it acts on (its key arguments); None for a read or a keyless write."""
        if not self.writes(tool):
            return None
        keys = {p: values[p] for p in self.key_params.get(tool, ()) if p in values}
        return (tool, _args_key(keys)) if keys else None

    def fresh_env(self) -> Any:
        return self._fork() if self._fork is not None else self.module.Env(self.world)

    def check_base(self, tool: str) -> None:
        """A tool said to be read-only changed the shared env: treat it as a write from now on."""
        if self.base_env.state_hash() != self.world_hash:
            self._writes[tool] = True
            self._set_write_arrays()
            self.read_cache.clear()
            self.base_env = self.module.Env(self.world)
            self._fork = getattr(self.base_env, "fork", None)
            raise _Reject("read-tool-wrote")

    def coverage_factor(self, tool: str) -> float:
        """Rarely sampled tools weigh more (at most 4x), so coverage spreads over the env."""
        if self._cov is None:  # recomputed after each accepted blueprint
            mean = sum(self.coverage.values()) / max(1, len(self.coverage))
            self._cov = {t: min(4.0, (1.0 + mean) / (1.0 + c)) for t, c in self.coverage.items()}
        return self._cov.get(tool, 1.0)

    def node_base(self, tool: str) -> str:
        """Readable node names: reads by what they return (`user_details`), writes by what they did
        (`cancel_pending_order` -> `cancelled_order`)."""
        if tool not in self._bases:
            if self.writes(tool):
                parts = norm(tool).split("_")
                base = participle(parts[0]) + ("_" + parts[-1] if len(parts) > 1 else "")
            else:
                base = returned_name(tool) or norm(tool)
            self._bases[tool] = base
        return self._bases[tool]

    def noun(self, tool: str) -> str:
        """What a read returns, for goal text: `get_user_details` -> "user"."""
        n = humanize(returned_name(tool)) or humanize(tool)
        for suffix in (" details", " detail", " info", " information", " data"):
            n = n.removesuffix(suffix)
        return n

    # ----- one task
    def build(self, rng: random.Random) -> _Task:
        cfg = self.cfg
        read_only = rng.random() < cfg.read_only_ratio
        task = _Task(self, rng, read_only)
        # aim one above the floor: pruning and stalls shorten walks, min_calls is only the floor
        target = rng.randint(min(cfg.min_calls + 1, cfg.max_calls), cfg.max_calls)
        task.max_writes = max(1, round(cfg.write_ratio * target + 0.5))
        # walk 1 goes half way when a merge is planned; a second walk (its start may collapse into
        # walk 1's nodes, or connect through edges) is merged in when planned or when walk 1 stalled
        planned = rng.random() < cfg.merge_ratio
        if not self.start(task):
            raise _Reject("no-start")
        self.extend(task, max(2, target // 2) if planned else target)
        if task.useful_calls() < target and self.start(task):
            self.extend(task, target)
        if read_only:
            if task.write_calls:
                raise _Reject("read-only-wrote")
            value = task.aggregate_for_tell()
            if value is None:
                raise _Reject("nothing-to-tell")
            task.nodes.append(_Node("", A.TellNode(value), None, None, 0, ""))
        elif not task.write_calls:
            # finish with a write fed by the DAG
            if not self.step(task, writes_only=True):
                raise _Reject("no-write")
        if not read_only and (not task.forked or task.env.state_hash() == self.world_hash):
            raise _Reject("no-op")  # the writes changed nothing (or undid each other): no gold diff
        return task

    def start(self, task: _Task) -> bool:
        cands = []
        for t in self.graph.tools:
            if self.writes(t) or t in self.log_tools or (not task.read_only and t not in self.reaches_write):
                continue
            out_w = self.out_weight[t]
            if out_w == 0:
                continue
            revisit = 0.25 ** task.tool_uses.get(t, 0)
            cands.append((t, (1.0 + math.log1p(out_w)) * self.coverage_factor(t) * revisit))
        rng = task.rng
        for _ in range(4):
            if not cands:
                return False
            i = _pick(rng, [c[1] for c in cands])
            tool = cands.pop(i)[0]
            if task.try_call(tool, need_edge=False) is not None:
                return True
        return False

    def extend(self, task: _Task, target: int) -> None:
        stalls = 0
        while task.useful_calls() < target and stalls < 4 and task.calls < self.cfg.max_calls + 2:
            if not task.read_only and task.write_calls >= task.max_writes:
                return  # reads after the last allowed write would be pruned unused
            want_write = not task.read_only and task.useful_calls() >= target - 1 and not task.write_calls
            if not self.step(task, writes_only=want_write):
                if want_write:
                    return
                stalls += 1

    def step(self, task: _Task, writes_only: bool = False) -> bool:
        """Add one call (or a fan-out) fed by an inference edge from the DAG so far."""
        cfg = self.cfg
        rng = task.rng
        memo_key = ("calls", writes_only)
        if memo_key not in task._memo:  # same nodes, same weights: a stalled walk reuses them
            task._memo[memo_key] = self.call_weights(task, writes_only)
        options: list[tuple[float, str, Any]] = list(task._memo[memo_key])
        if not writes_only and task.calls + 2 <= cfg.max_calls + 1 and rng.random() < cfg.reasoning_ratio:
            for wgt, n, e, rest in task.fanout_options():
                if not task.tool_uses.get(e.dst):
                    options.append((wgt, "fanout", (n, e, rest)))
        for _ in range(4):
            if not options:
                return False
            i = _pick(rng, [o[0] for o in options])
            _, kind, what = options.pop(i)
            if kind == "call":
                before = len(task.nodes)
                node = task.try_call(what, need_edge=True)
                if node is not None and len(task.nodes) > before:
                    return True
            else:
                if task.fanout(*what) is not None:
                    return True
        return False

    def call_weights(self, task: _Task, writes_only: bool) -> list[tuple[float, str, str]]:
        """(weight, "call", tool) for each tool an edge can feed from the nodes so far, in tool order.

        weight = strongest edge from a node's tool x freshness of that node x (0.5 for a write in
        mid-walk) x coverage factor x 0.2 ** times used. The sampler's hot loop: lists indexed by
        tool position, no dict lookups in the inner loop."""
        n_tools = len(self.tools)
        best = [0.0] * n_tools
        total = max(1, len(task.nodes))
        out_idx = self._out_idx
        for src, nodes in task.by_origin.items():
            if nodes and src in out_idx:
                # extending from the newest nodes makes chains (whose reads all get used);
                # branching from old ones makes dead-end reads that pruning drops
                fresh = 1.0 + 2.0 * nodes[-1][0] / total
                for j, w in out_idx[src]:
                    v = w * fresh
                    if v > best[j]:
                        best[j] = v
        if self._cov_list is None:
            self._cov_list = [self.coverage_factor(t) for t in self.tools]
        cov, is_write, uses, rev, tools = self._cov_list, self._is_write, task.uses_l, _REVISIT, self.tools
        no_writes = task.read_only or (not writes_only and task.write_calls + 1 >= task.max_writes)
        calls = []
        for j, b in enumerate(best):
            if b <= 0.0:
                continue
            w = is_write[j]
            if w:
                if no_writes:
                    continue  # (mid-walk: keep the last allowed write for the end of the walk)
                kind = 1.0 if writes_only else 0.5
            elif writes_only:
                continue
            else:
                kind = 1.0
            u = uses[j]
            calls.append((b * kind * cov[j] * (rev[u] if u < 32 else 0.2 ** u), "call", tools[j]))
        return calls

    # ----- finishing
    def finish(self, task: _Task, index: int) -> A.BlueprintDecl:
        nodes = self.prune(task)
        calls = sum(1 for n in nodes if n.is_call)
        if calls < self.cfg.min_calls:
            raise _Reject("too-short")
        if calls > self.cfg.max_calls:
            raise _Reject("too-long")
        asts = [n.ast for n in nodes]
        writes = [n for n in nodes if n.writes]
        if writes:
            exp = self.expectation(writes[-1])
            if exp is not None:
                asts.append(exp)
        used = set()
        for a in asts:
            _facts_used(a, used)
        facts = tuple(A.Fact(k, literal_expr(v)) for k, v in task.facts.items() if k in used)
        goal = self.goal(task, nodes)
        base = (writes[-1].tool + "_after_" + nodes[0].tool) if writes else ("lookup_" + nodes[0].tool)
        return A.BlueprintDecl(base, self.env.name, A.UserBlock(goal, "", facts), tuple(asts))

    def prune(self, task: _Task) -> list[_Node]:
        """Drop reads and reason nodes nothing uses (a read changes no state, so the run is the same)."""
        nodes = list(task.nodes)
        all_names = {n.name for n in nodes if n.name}
        refs = {id(n): (n.refs if n.name else set(node_reads(n.ast, all_names))) for n in nodes}  # the tell has no name
        while True:
            used: set[str] = set()
            for n in nodes:
                used |= refs[id(n)]
            keep = [n for n in nodes if n.writes or isinstance(n.ast, A.TellNode) or n.name in used]
            if len(keep) == len(nodes):
                return nodes
            nodes = keep

    def expectation(self, w: _Node) -> A.ExpectNode | None:
        """`expect <write>.<field> == <value>`: the visible effect of the last write (a field it changed,
        preferring enums such as a status; for a new record, its status-like enum)."""
        if not isinstance(w.value, dict):
            return None
        before = self.record_before(w.value)
        scalar = lambda v: isinstance(v, (str, int, bool)) and not (isinstance(v, str) and not re.fullmatch(r"[\w .@:/#-]{1,40}", v))  # noqa: E731
        changed = [k for k in sorted(w.value) if scalar(w.value[k]) and before is not None and before.get(k, _MISSING) != w.value[k]]
        enums = [k for k in changed if k in self.enum_fields]
        if before is None:
            enums = [k for k in sorted(w.value) if k in self.enum_fields and isinstance(w.value[k], str)]
        pick = (enums or changed)[:1]
        if not pick:
            return None
        k = pick[0]
        return A.ExpectNode(A.Binary("==", A.Attr(A.Name(w.name), k), A.Literal(w.value[k])))

    def record_before(self, rec: dict) -> dict | None:
        """The world-state record a write result is a later version of (matched by entity key), if any."""
        best = self.entity_of(rec)
        if best is None:
            return None
        return (self.world.get("entities", {}).get(best.name) or {}).get(str(rec[best.key]))  # None: the write created it

    def entity_of(self, rec: dict) -> A.EntityDecl | None:
        """The entity a record is an instance of: it has the key, and the most fields in common."""
        shape = tuple(rec)
        cands = self._entity_cands.get(shape)
        if cands is None:  # entities whose key field the record has, best overlap first (by shape)
            scored = [(-len(self.entity_fields[e.name] & rec.keys()), i, e) for i, e in enumerate(self.env.entities) if e.key in rec]
            cands = self._entity_cands[shape] = [e for o, _, e in sorted(scored, key=lambda x: x[:2]) if o < 0]
        for e in cands:
            if isinstance(rec[e.key], (str, int)) and not isinstance(rec[e.key], bool):
                return e
        return None

    def goal(self, task: _Task, nodes: list[_Node]) -> str:
        """Deterministic goal text from the DAG: every write in order, each with the choices that lead to
        it said in a user's words (see `_Phrases`), or what to find out for a read-only task."""
        return _Phrases(self, nodes).goal()

    def item_noun(self, tool: str, prefix: tuple[str, ...], lst: list) -> str:
        """What one element of a list is called, singular: the list field's name (`line_items` -> "line
        item", `reservation_ids` -> "reservation"), else the entity of its records ("flight"), else
        what the tool returns (`search_direct_flight` -> "direct flight")."""
        segs = [s for s in prefix if s != "*"]
        if segs:
            name = singular(norm(segs[-1]))
            ent = self.values._keys.get(name)
            if ent is not None and not (lst and isinstance(lst[0], dict)):
                return humanize(ent)
            return humanize(name.removesuffix("_id")) if name.endswith("_id") and name != "_id" else humanize(name)
        if lst and isinstance(lst[0], dict):
            e = self.entity_of(lst[0])
            if e is not None:
                return humanize(e.name)
        return " ".join(humanize(singular(w)) for w in self.noun(tool).split()) if tool else "item"


def _facts_used(e: Any, out: set[str]) -> None:
    """Names of the `user.<fact>` references in an expression."""
    out.update(n.name for n in A.walk(e) if isinstance(n, A.Attr) and isinstance(n.obj, A.Name) and n.obj.id == "user")


def format_blueprint_text(decl: A.BlueprintDecl, header: list[str], file: str) -> str:


    comments = tuple(A.Comment(" " + h, i + 1) for i, h in enumerate(header))
    # a span below the header lines, so the formatter prints the comments above the blueprint
    placed = A.BlueprintDecl(decl.name, decl.env, decl.user, decl.nodes, span=Span(file, len(header) + 2, 1))
    module = A.Module(file, (placed,), comments)
    return lang.format(module)


def sample_blueprints(env: A.EnvDecl, module: Any, world_state: dict, graph: ToolGraph, config: SampleConfig | None = None) -> SampleResult:
    """Sample up to `config.tasks_per_env` distinct, executable blueprints for `env` (seeded, deterministic)."""
    cfg = config or SampleConfig()
    s = _Sampler(env, module, world_state, graph, cfg)
    max_attempts = cfg.max_attempts or 25 * max(1, cfg.tasks_per_env)
    seen: set[str] = set()
    counters: Counter = Counter()
    rejected: Counter = Counter()
    out: list[SampledBlueprint] = []
    attempts = merged = 0
    while len(out) < cfg.tasks_per_env and attempts < max_attempts:
        if attempts >= 200 and not out:
            break  # 200 attempts without one blueprint: this env's graph cannot make tasks
        attempts += 1
        rng = random.Random(f"forgec-sample:{env.name}:{cfg.seed}:{attempts}")
        try:
            task = s.build(rng)
            decl = s.finish(task, attempts)
        except _Reject as r:
            rejected[r.reason] += 1
            continue
        key = structure_key(decl)
        if key in seen:
            rejected["duplicate"] += 1
            continue
        seen.add(key)
        merged += task.merged
        counters[decl.name] += 1
        name = f"{decl.name}_{counters[decl.name]}"
        decl = A.BlueprintDecl(name, decl.env, decl.user, decl.nodes)
        stats = blueprint_stats(decl, s._writes)
        for n in decl.nodes:
            if isinstance(n, A.CallNode):
                s.coverage[n.tool] += 1
        s._cov = s._cov_list = None
        header = [
            f"blueprint sampled by forgec: env {env.name}, seed {cfg.seed}, attempt {attempts}",
            "stats: " + ", ".join(f"{k} {v}" for k, v in stats.items()),
        ]
        text = format_blueprint_text(decl, header, f"{name}.forge")
        out.append(SampledBlueprint(name, decl, text, stats))
    return SampleResult(out, dict(sorted(s.coverage.items())), dict(sorted(rejected.items())), attempts, merged)


STAT_KEYS = ("calls", "write_calls", "reasoning_nodes", "inference_edges", "depth", "width", "user_facts")


def summarize_stats(stats: list[dict], tools: Iterable[str] = ()) -> dict:
    """Per-env averages (and maxima) of `blueprint_stats` dicts, plus tool coverage over `tools`."""
    k = len(stats)
    out: dict[str, Any] = {"blueprints": k}
    for s in STAT_KEYS:
        vals = [x.get(s, 0) for x in stats]
        out[f"avg_{s}"] = round(sum(vals) / k, 3) if k else 0.0
        out[f"max_{s}"] = max(vals, default=0)
    return out


# --------------------------------------------------------------------------- goal text


_USERISH = {"user", "customer", "member", "client", "account", "profile", "person", "me"}
_SEARCH_VERBS = {"search", "find", "query", "lookup", "filter", "browse"}
_RECENT = {"created_at", "created", "timestamp", "created_date", "order_date", "placed_at", "ordered_at", "submitted_at"}
_PICKS = ("first", "last", "argmin", "argmax", "sum", "count")


def superlative(op: str, fld: str, item: str) -> str:
    """argmin/argmax by a field, as a user says it: "the cheapest flight", "the reservation with the most
    seats", "the most recent order", "the ticket with the highest priority"."""
    f = norm(fld)
    w = humanize(f)
    hi = op == "argmax"
    last = f.split("_")[-1]
    if is_plural(last):
        return f"the {item} with the {'most' if hi else 'fewest'} {w}"
    if re.search(r"(^|_)(price|cost|fare|total)(_|$)", f) and not f.endswith(("_count", "_id")):
        return f"the most expensive {item}" if hi else f"the cheapest {item}"
    moment = re.search(r"(^|_)(at|on|date|time|timestamp)$", f) is not None or f in ("created", "updated", "modified")
    if f in _RECENT or moment and re.search(r"(^|_)(create|created|creation|added)(_|$)", f):
        return f"the most recent {item}" if hi else f"the oldest {item}"  # "the oldest robot", not "with the earliest creation
        # time" (review 51)
    if moment and re.search(r"(^|_)(update|updated|modified|modification|changed|edited|last)(_|$)", f):
        return f"the most recently updated {item}" if hi else f"the least recently updated {item}"  # not "updated first" (review 65)
    if re.fullmatch(r"[a-z]+ed_(at|on|date|time)", f):  # "issued_at": "the most recently issued recovery", not
        part = f.split("_")[0]                           # "the recovery with the earliest issued at" (review 27)
        return f"the most recently {part} {item}" if hi else f"the least recently {part} {item}"
    if f in ("date", "time", "datetime", "day"):  # the record's own moment: "my earliest alarm", not "my alarm with the
        return f"the {'latest' if hi else 'earliest'} {item}"  # earliest date" (review 61: a template over the field)
    if f in ("due", "deadline", "due_by", "expiry", "expiration"):  # "the epic with the highest due": a deadline is late or early
        return f"the {item} with the {'latest' if hi else 'earliest'} {'due date' if f in ('due', 'due_by') else w}"
    if f.endswith(("_date", "_at", "_time", "_on")):
        return f"the {item} with the {'latest' if hi else 'earliest'} {w}"
    return f"the {item} with the {'highest' if hi else 'lowest'} {w}"


def _cond_words(fld: str, value: Any) -> tuple[str, str]:
    """(adjective, clause) for "whose <field> is <value>": a status reads as an adjective ("pending")."""
    f = norm(fld)
    v = humanize(str(value)) if isinstance(value, str) else str(value)
    if f in ("status", "state") or f.endswith("_status"):
        return v + " ", ""
    return "", f" whose {humanize(f)} is {v}"


class _Phrases:
    """Noun phrases for the nodes of one finished DAG, keyed by operator and field names, so an agent
    reading the goal can redo every choice: which list (and which end of it), which criterion."""

    def __init__(self, s: "_Sampler", nodes: list[_Node]):
        self.s = s
        self.nodes = nodes
        self.by_name = {n.name: n for n in nodes if n.name}
        self.pos = {n.name: i for i, n in enumerate(nodes) if n.name}
        names = set(self.by_name)
        self.refs: dict[str, set[str]] = {n.name or "#tell": (n.refs if n.name else set(node_reads(n.ast, names))) for n in nodes}
        self._anc: dict[str, set[str]] = {}
        self._mine: dict[str, bool] = {}

    def ancestors(self, name: str) -> set[str]:
        if name not in self._anc:
            out: set[str] = set()
            for r in self.refs.get(name, ()):
                out.add(r)
                out |= self.ancestors(r)
            self._anc[name] = out
        return self._anc[name]

    # ----- things
    def mine(self, n: _Node) -> bool:
        """A read fed only by the user's facts (or by other such reads): "my reservation", "my flight"."""
        if n.name not in self._mine:
            self._mine[n.name] = False  # cycle guard (the DAG has none)
            ok = n.is_call and not n.writes and all(self._fact_or_mine(a.value) for a in n.ast.args)
            self._mine[n.name] = ok
        return self._mine[n.name]

    def _fact_or_mine(self, e: A.Expr) -> bool:
        while isinstance(e, (A.Attr, A.Index)):
            if isinstance(e, A.Attr) and isinstance(e.obj, A.Name) and e.obj.id == "user":
                return True
            e = e.obj
        if isinstance(e, A.ListLit):
            return all(self._fact_or_mine(i) for i in e.items)
        if isinstance(e, A.RecordLit):
            return all(self._fact_or_mine(f.value) for f in e.fields)
        if isinstance(e, A.Name) and e.id in self.by_name:
            return self.mine(self.by_name[e.id])
        return isinstance(e, A.Literal)

    def call_noun(self, n: _Node) -> str:
        if isinstance(n.value, dict):
            e = self.s.entity_of(n.value)
            if e is not None:
                return humanize(e.name)
        return self.s.noun(n.tool)

    def thing(self, n: _Node, depth: int = 0) -> str:
        """What a node's value is."""
        if not n.is_call:
            return self.reason(n, depth)
        noun = self.call_noun(n)
        if n.writes:
            kind = (getattr(self.s.module, "TOOL_KINDS", None) or {}).get(n.tool)
            return f"the new {noun}" if kind == "create" else f"the {noun} returned by {humanize(n.tool)}"
        if self.mine(n):
            return "my account" if noun in _USERISH else f"my {noun}"
        srcs = sorted(self.refs.get(n.name, ()), key=self.pos.__getitem__)
        if len(srcs) == 1 and depth < 24:
            src = self.by_name[srcs[0]]
            if (not src.is_call and src.meta and src.meta.get("item") == noun) or (src.is_call and self.call_noun(src) == noun):
                return self.thing(src, depth + 1)  # the same record, fetched again
            return f"the {noun} of {self.thing(src, depth + 1)}"
        return f"the {noun}"

    def list_of(self, n: _Node, prefix: tuple[str, ...], item: str, depth: int) -> str:
        """What a list is: "the reservation ids of my account", "the flight search results", "my orders"."""
        segs = [s for s in prefix if s != "*"]
        if segs:
            return f"the {humanize(segs[-1])} of {self.thing(n, depth + 1)}"
        if not n.is_call:
            return self.thing(n, depth + 1)
        words = norm(n.tool).split("_")
        srcs = [self.by_name[r] for r in sorted(self.refs.get(n.name, ()), key=self.pos.__getitem__)]
        # the list depends on what the call was given: say it when that was chosen, not just told
        given = [x for x in srcs if not (x.is_call and self.mine(x))]
        said = [] if depth >= 24 else [self.thing(x, depth + 1) for x in given]
        said = [d for i, d in enumerate(said) if d not in said[:i] and not any(d != o and d in o for o in said)]
        of = " for " + " and ".join(said) if said else ""
        if words[0] in _SEARCH_VERBS and len(words) > 1:
            obj = returned_name(n.tool).split("_") or words[1:]
            obj[-1] = singular(obj[-1])
            return f"the {' '.join(obj)} search results{of}"
        if self.mine(n):
            return f"my {plural(item)}"
        return f"the {plural(item)} that {humanize(n.tool)} returns{of}"

    def reason(self, r: _Node, depth: int = 0) -> str:
        m = r.meta or {}
        op, item = m.get("op", r.ast.op), m.get("item", "item")
        src = self.by_name.get(m.get("src", ""))
        if src is None or depth > 24:
            return f"the chosen {item}"
        adj, clause = "", ""
        lst = (src, m.get("prefix", ()))
        if op in ("first", "last", "argmin", "argmax") and not src.is_call and src.meta and src.meta.get("op") == "filter":
            adj, clause = _cond_words(src.meta["field"], src.meta["value"])
            lst = (self.by_name.get(src.meta["src"], src), src.meta.get("prefix", ()))
        where = self.list_of(lst[0], lst[1], item, depth)
        if op in ("first", "last"):
            return f"the {op} {adj}{item}{clause} in {where}"
        if op in ("argmin", "argmax"):
            core = superlative(op, m.get("field", ""), f"{adj}{item}{clause}")
            if "first" in m:
                some = f"the first {m['first']} " if m["first"] < m.get("of", 0) else "the "
                return f"{core} among {some}{plural(item)} in {where}"
            return f"{core} in {where}"
        if op == "filter":
            adj, clause = _cond_words(m["field"], m["value"])
            return f"the {adj}{plural(item)}{clause} in {where}"
        if op == "count":
            return f"the number of {plural(item)} in {where}"
        if op == "sum":
            return f"the total {humanize(m.get('field', ''))} of the {plural(item)} in {where}"
        return f"the {item} chosen from {where}"

    def owners(self, w: _Node) -> dict[str, str]:
        """Picks whose other-entity reference the write is given (`user_id: cheapest.user_id` -> "user"),
        when the write gets no key of the picked record itself."""
        out: dict[str, str] = {}
        own: set[str] = set()
        for a in w.ast.args:
            e = a.value
            if isinstance(e, A.Attr) and isinstance(e.obj, A.Name) and e.obj.id in self.by_name:
                p = self.by_name[e.obj.id]
                if not isinstance(p.value, dict):
                    continue
                ent = self.s.entity_of(p.value)
                if ent is not None and e.name == ent.key:
                    own.add(p.name)
                    continue
                f = norm(e.name)
                other = self.s.values._keys.get(f)
                noun = humanize(other) if other else humanize(f[:-3]) if f.endswith("_id") and len(f) > 3 else None
                item = (p.meta or {}).get("item") or self.call_noun(p) if p.meta or p.is_call else ""
                if noun and p.name not in out and not (item + " ").startswith(noun + " "):  # `payment_id` of a payment method: its own id
                    out[p.name] = noun
        return {k: v for k, v in out.items() if k not in own}

    # ----- the goal
    def goal(self) -> str:
        parts: list[str] = []
        said: set[str] = set()
        for w in self.nodes:
            if not w.writes:
                continue
            direct = self.refs.get(w.name, set())
            anc = self.ancestors(w.name)
            picks = [n for n in self.nodes if n.name in anc and not n.is_call and (n.meta or {}).get("op") in _PICKS
                     and (n.name in direct or n.name not in said)]
            objs: list[str] = []
            owners = self.owners(w)
            for p in picks:
                d = f"the same {p.meta['item']}" if p.name in said else self.thing(p)
                said.add(p.name)
                if p.name in owners:  # the write acts on what the pick points to: "the user of the cheapest reservation"
                    d = f"the {owners[p.name]} of {d}"
                if d not in objs:
                    objs.append(d)
            # a pick that only leads to a later pick is said inside that pick's phrase
            objs = [d for d in objs if not any(d != o and d in o for o in objs)]
            # records that earlier steps produced or looked up (not the user's own, which the facts name)
            for r in sorted(direct, key=self.pos.__getitem__):
                src = self.by_name[r]
                if src.is_call and not self.mine(src) and not (self.ancestors(r) & said and not src.writes):
                    d = self.thing(src)
                    if r in owners:
                        d = f"the {owners[r]} of {d}"
                    if d not in objs:
                        objs.append(d)
            phrase = humanize(w.tool)
            if objs:
                phrase += " for " + " and ".join(objs)
            parts.append(phrase)
        if parts:
            return ", then ".join(parts)
        tell = next((n for n in self.nodes if isinstance(n.ast, A.TellNode)), None)
        value = tell.ast.value if tell is not None else None
        if isinstance(value, A.Attr) and isinstance(value.obj, A.Name) and value.obj.id in self.by_name:
            return f"find out the {humanize(value.name)} of {self.thing(self.by_name[value.obj.id])}"
        if isinstance(value, A.Name) and value.id in self.by_name:
            return "find out " + self.thing(self.by_name[value.id])
        return "find out what I asked for"
