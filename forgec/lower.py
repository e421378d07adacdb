"""Task lowering (AutoForge §3.3): run a blueprint in its compiled env to get a task.

A blueprint is executed on the env's world state: each `call` goes through
`Env.step`, each `reason` through `forgec.stdlib.ops`, each `expect` must
hold, each `tell` value is recorded. The result is a `forgec.tasks.Task` with
the gold calls, gold end state hash and diff, and the user's facts: exactly the
literals the agent cannot obtain through tools (the `knows` facts the calls
use, plus literal call arguments, which only the user can supply). A blueprint
that errs, changes nothing without a `tell`, or has an ambiguous answer is
rejected with a reason, never emitted.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass, field
from collections import Counter
from typing import Any, Mapping

from forgec.lang import ast as A
from forgec.stdlib import ops as OPS
from forgec.tasks import BlueprintRef, DiffEntry, GoldCall, Task, TaskStats, UserSpec


class Rejected(Exception):
    """The blueprint cannot become a task; `reason` is a short stable category."""

    def __init__(self, reason: str, detail: str, node: A.BlueprintNode | None = None):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.node = node


# --------------------------------------------------------------------------- expression evaluation


_MISSING = object()


def _is_tool_error(value: Any) -> bool:
    return isinstance(value, BaseException)


class Scope:
    """Values visible to blueprint expressions: `user.<fact>` and earlier node outputs."""

    def __init__(self, facts: dict[str, Any]):
        self.facts = facts
        self.nodes: dict[str, Any] = {}
        self.used_facts: set[str] = set()


def eval_expr(e: A.Expr, scope: Scope) -> Any:
    """Evaluate a blueprint expression (a small, total subset of the effect language)."""
    if isinstance(e, A.Literal):
        return e.value
    if isinstance(e, A.Name):
        if e.id in scope.nodes:
            return scope.nodes[e.id]
        if e.id == "user":
            return dict(scope.facts)
        raise Rejected("bad-reference", f"unknown name {e.id!r}")
    if isinstance(e, A.Attr):
        if isinstance(e.obj, A.Name) and e.obj.id == "user" and "user" not in scope.nodes:
            if e.name not in scope.facts:
                raise Rejected("bad-reference", f"the user does not know {e.name!r}")
            scope.used_facts.add(e.name)
            return scope.facts[e.name]
        obj = eval_expr(e.obj, scope)
        if isinstance(obj, dict):
            if e.name not in obj:
                raise Rejected("bad-reference", f"no field {e.name!r} in {sorted(obj)[:8]}")
            return obj[e.name]
        if isinstance(obj, list) and all(isinstance(x, dict) and e.name in x for x in obj):
            return [x[e.name] for x in obj]  # projection over a list of records
        raise Rejected("bad-reference", f"cannot read field {e.name!r} of {type(obj).__name__}")
    if isinstance(e, A.Index):
        obj = eval_expr(e.obj, scope)
        idx = eval_expr(e.index, scope)
        try:
            return obj[idx]
        except (IndexError, KeyError, TypeError) as ex:
            raise Rejected("bad-reference", f"index {idx!r}: {ex}") from None
    if isinstance(e, A.ListLit):
        return [eval_expr(i, scope) for i in e.items]
    if isinstance(e, A.RecordLit):
        return {f.name: eval_expr(f.value, scope) for f in e.fields}
    if isinstance(e, A.Unary):
        v = eval_expr(e.operand, scope)
        return (not v) if e.op == "not" else -v
    if isinstance(e, A.Binary):
        if e.op == "and":
            return eval_expr(e.left, scope) and eval_expr(e.right, scope)
        if e.op == "or":
            return eval_expr(e.left, scope) or eval_expr(e.right, scope)
        a, b = eval_expr(e.left, scope), eval_expr(e.right, scope)
        try:
            return _BINOPS[e.op](a, b)
        except (TypeError, ZeroDivisionError, KeyError) as ex:
            raise Rejected("bad-expression", f"{e.op}: {ex}") from None
    if isinstance(e, A.Call):
        args = [eval_expr(a, scope) for a in e.args]
        fn = _BUILTINS.get(e.func)
        if fn is None:
            raise Rejected("bad-expression", f"builtin {e.func!r} is not available in blueprints")
        try:
            return fn(*args)
        except (TypeError, ValueError, IndexError) as ex:
            raise Rejected("bad-expression", f"{e.func}: {ex}") from None
    raise Rejected("bad-expression", f"{type(e).__name__} is not allowed in blueprints")


_BINOPS = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "%": lambda a, b: a % b,
}

_BUILTINS = {
    "len": len,
    "sum": lambda xs: sum(xs),
    "min": lambda *a: min(a[0]) if len(a) == 1 else min(a),
    "max": lambda *a: max(a[0]) if len(a) == 1 else max(a),
    "round": lambda x, n=0: round(x, int(n)),
    "abs": abs,
    "str": str,
    "int": int,
    "float": float,
    "lower": lambda s: s.lower(),
    "upper": lambda s: s.upper(),
    "first": lambda xs: xs[0],
    "last": lambda xs: xs[-1],
    "contains": lambda a, b: b in a,
}


def _is_pure_literal_or_fact(e: Any) -> bool:
    return _is_pure_literal(e) or (isinstance(e, A.Attr) and isinstance(e.obj, A.Name) and e.obj.id == "user")


def _is_pure_literal(e: Any) -> bool:
    if isinstance(e, A.Literal):
        return True
    if isinstance(e, A.ListLit):
        return all(_is_pure_literal(i) for i in e.items)
    if isinstance(e, A.RecordLit):
        return all(_is_pure_literal(f.value) for f in e.fields)
    if isinstance(e, A.Unary) and e.op == "-":
        return _is_pure_literal(e.operand)
    return False


# --------------------------------------------------------------------------- statistics


def dag_stats(bp: A.BlueprintDecl, writes: Mapping[str, bool] | None = None, edges: list | None = None) -> TaskStats:
    """The one count of a blueprint's DAG (the task files, the manifest, `forgec stats` and the
    sampler's headers all use it): calls, write calls (`writes`: tool -> writes state; unknown
    counts 0), reasoning nodes, inference edges (distinct earlier nodes each call/reason node
    reads: `edges`, the checker's `blueprint_edges`), depth (longest chain, in nodes), width (most
    nodes on one level) and user facts (what the task's user is told: the non-null facts the
    nodes read, plus each non-null literal call argument)."""
    from forgec.lang.check import blueprint_edges, user_reads

    edges = blueprint_edges(bp) if edges is None else edges
    writes = writes or {}
    level: dict[str, int] = {}
    n_edges = calls = writes_n = reasons = literal_args = 0
    read: set[str] = set()
    for n, reads in zip(bp.nodes, edges):
        read.update(user_reads(n))
        if isinstance(n, A.CallNode):
            calls += 1
            writes_n += int(bool(writes.get(n.tool, False)))
            literal_args += sum(1 for a in n.args if _is_pure_literal(a.value) and a.value != A.Literal(None))
        elif isinstance(n, A.ReasonNode):
            reasons += 1
        else:
            continue
        n_edges += len(reads)
        level[n.name] = 1 + max((level.get(r, 0) for r in reads), default=0)
    widths = Counter(level.values())
    facts = sum(1 for f in bp.user.facts if f.name in read and f.value != A.Literal(None))
    return TaskStats(calls=calls, write_calls=writes_n, reasoning_nodes=reasons, inference_edges=n_edges,
                     depth=max(level.values(), default=0), width=max(widths.values(), default=0),
                     user_facts=facts + literal_args)


# --------------------------------------------------------------------------- state diff


def state_diff(before: Any, after: Any, path: str = "") -> list[DiffEntry]:
    """Structural diff of two JSON states (dict keys sorted; lists compared as values)."""
    out: list[DiffEntry] = []
    if before == after and type(before) is type(after):
        return out  # C-speed equality prunes unchanged subtrees
    if isinstance(before, dict) and isinstance(after, dict):
        for k in sorted(set(before) | set(after), key=str):
            if k in before and k in after:
                b, a = before[k], after[k]
                if b == a and type(b) is type(a):
                    continue  # unchanged record: no recursive call (most keys of a changed collection)
            p = f"{path}/{_escape(str(k))}"
            if k not in after:
                out.append(DiffEntry(op="remove", path=p, before=before[k]))
            elif k not in before:
                out.append(DiffEntry(op="add", path=p, after=after[k]))
            else:
                out.extend(state_diff(before[k], after[k], p))
        return out
    if before != after or type(before) is not type(after):
        out.append(DiffEntry(op="change", path=path or "/", before=before, after=after))
    return out


def _escape(k: str) -> str:
    return k.replace("~", "~0").replace("/", "~1")


# --------------------------------------------------------------------------- instructions


def humanize(name: str) -> str:
    """`user_id` -> "user id", `orderId` -> "order id"."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r" \1", name).replace("_", " ").strip()
    return s.lower()


def _say(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ", ".join(_say(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return "; ".join(f"{humanize(k)}: {_say(v)}" for k, v in value.items())
    return json.dumps(value, sort_keys=True)


_PERSONAL = re.compile(r"(^|_)(id|ids|email|name|phone|address|zip|zipcode|dob|username|account|city|country|state|street)$")


def _flatten_facts(facts: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(fact, name to say, value); record-valued facts (a request body) are said field by field."""
    out: list[tuple[str, str, Any]] = []
    for k in sorted(facts):
        v = facts[k]
        if isinstance(v, dict) and v and all(not isinstance(x, (dict, list)) for x in v.values()):
            out.extend((k, sub, v[sub]) for sub in sorted(v))
        else:
            out.append((k, re.sub(r"_\d+$", "", k), v))
    return out


def _fact_sentence(name: str, value: Any, used_in: tuple[str, str] | None, ambiguous: bool, writes: dict[str, bool]) -> str:
    said = _say(value)
    if isinstance(value, str) and (" " in value.strip() or not value):
        said = json.dumps(value, ensure_ascii=False)
    plural = isinstance(value, list) and len(value) != 1 or name.endswith(("ids", "_list"))
    is_, should = ("are", "should be") if plural else ("is", "should be")
    if ambiguous and used_in is not None:
        return f"For the {humanize(used_in[0])}, the {humanize(name)} {should} {said}."
    if _PERSONAL.search(name) or name.endswith("ids"):
        return f"My {humanize(name)} {is_} {said}."
    if used_in is not None and writes.get(used_in[0]):
        return f"The {humanize(name)} {should} {said}."
    return f"The {humanize(name)} {is_} {said}."


def render_instruction(
    goal: str, persona: str, facts: dict[str, Any], usage: dict[str, tuple[str, str]] | None = None, writes: dict[str, bool] | None = None
) -> str:
    """The deterministic instruction template: the goal, then each fact in the user's voice.

    `usage` maps a fact to the (tool, parameter) it first feeds, so two facts that share a
    name (two amounts for two transfers) are told apart by what they are for.
    """
    usage = usage or {}
    goal = goal.strip().rstrip(".")
    if goal and not goal.lower().startswith(("i ", "i'", "please", "can ", "could ")):
        goal = "I want to " + goal[0].lower() + goal[1:]
    parts = [goal[:1].upper() + goal[1:] + "."] if goal else []
    flat = [(k, n, v) for k, n, v in _flatten_facts(facts) if v is not None]
    counts: dict[str, int] = {}
    for _, n, _v in flat:
        counts[n] = counts.get(n, 0) + 1
    seen: set[str] = set()
    for fact, name, value in flat:
        sentence = _fact_sentence(name, value, usage.get(fact), counts[name] > 1, writes or {})
        if sentence not in seen:
            seen.add(sentence)
            parts.append(sentence)
    return " ".join(parts)


def _looks_like_id(v: str) -> bool:
    """Ids and codes (`#W0001234`, `sara_doe_496`, `HAT754`), not words the user may say (`economy`)."""
    return len(v) >= 4 and " " not in v.strip() and any(c.isdigit() for c in v)


def instruction_leaks(instruction: str, task_tools: list[str], hidden_values: list[Any]) -> list[str]:
    """Why an instruction gives away too much: tool names, or values the agent must look up or compute."""
    problems = []
    low = instruction.lower()
    for t in task_tools:
        if re.search(rf"\b{re.escape(t.lower())}\b", low):
            problems.append(f"names the tool {t!r}")
    for v in hidden_values:
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, str) and _looks_like_id(v) and re.search(rf"(?<!\w){re.escape(v.lower())}(?!\w)", low):
            problems.append(f"reveals the looked-up value {v!r}")
        elif isinstance(v, (int, float)) and abs(v) >= 10 and re.search(rf"(?<![\w.]){re.escape(f'{v:g}')}(?![\w])", low):
            problems.append(f"reveals the computed value {v!r}")
    return sorted(set(problems))


# --------------------------------------------------------------------------- lowering


@dataclass
class LowerResult:
    task: Task
    env: Any  # the env after the gold run (its `state` is the gold state)
    hidden_values: list[Any] = field(default_factory=list)  # looked-up / computed values the user must not say


def _scalars(value: Any, out: list[Any], depth: int = 0) -> None:
    if depth > 4 or len(out) > 400:
        return
    if isinstance(value, dict):
        for v in value.values():
            _scalars(v, out, depth + 1)
    elif isinstance(value, list):
        for v in value[:50]:
            _scalars(v, out, depth + 1)
    else:
        out.append(value)


def lower_blueprint(
    bp: A.BlueprintDecl,
    module: Any,
    world_state: dict,
    *,
    env_name: str,
    blueprint_path: str,
    blueprint_hash: str,
    seed: int,
    initial_state_file: str | None = None,
    initial_state_hash: str | None = None,
    base_env: Any = None,
) -> LowerResult:
    """Execute `bp` on a copy of `world_state` in `module.Env`; raise `Rejected` when it cannot be a task."""
    env = base_env.fork() if base_env is not None and hasattr(base_env, "fork") else module.Env(world_state)
    init_hash = initial_state_hash or env.state_hash()
    facts: dict[str, Any] = {}
    for f in bp.user.facts:
        if not _is_pure_literal(f.value):
            raise Rejected("bad-fact", f"fact {f.name!r} must be a literal")
        facts[f.name] = eval_expr(f.value, Scope({}))
    scope = Scope(facts)
    gold: list[GoldCall] = []
    tells: list[Any] = []
    implicit: dict[str, Any] = {}
    usage: dict[str, tuple[str, str]] = {}
    hidden: list[Any] = []
    writes = getattr(module, "WRITES_STATE", {})
    for n in bp.nodes:
        if isinstance(n, A.CallNode):
            args = {}
            for a in n.args:
                v = eval_expr(a.value, scope)
                if v is None and _is_pure_literal_or_fact(a.value):
                    continue  # an optional argument left out says the same as null
                args[a.name] = v
                if isinstance(a.value, A.Attr) and isinstance(a.value.obj, A.Name) and a.value.obj.id == "user":
                    usage.setdefault(a.value.name, (n.tool, a.name))
                if _is_pure_literal(a.value) and a.value != A.Literal(None):
                    name = a.name if a.name not in facts and a.name not in implicit else f"{n.name}_{a.name}"
                    implicit[name] = v
                    usage.setdefault(name, (n.tool, a.name))
            result = env.step(n.tool, copy.deepcopy(args))
            if _is_tool_error(result):
                raise Rejected("gold-call-failed", f"{n.name} = {n.tool}(...): {result}", n)
            scope.nodes[n.name] = result
            gold.append(GoldCall(node=n.name, tool=n.tool, arguments=args, result=result))
            _scalars(result, hidden)
        elif isinstance(n, A.ReasonNode):
            spec = OPS.OPS.get(n.op)
            if spec is None:
                raise Rejected("bad-reference", f"unknown operator {n.op!r}", n)
            args = [eval_expr(a, scope) for a in n.args]
            kwargs = {}
            for kw in n.kwargs:
                ks = spec.kw(kw.name)
                if ks is not None and ks.kind == "field":
                    if isinstance(kw.value, A.Name):
                        kwargs[kw.name] = kw.value.id
                    elif isinstance(kw.value, A.Literal) and isinstance(kw.value.value, str):
                        kwargs[kw.name] = kw.value.value
                    else:
                        raise Rejected("bad-expression", f"`{kw.name}:` must name a field", n)
                else:
                    kwargs[kw.name] = eval_expr(kw.value, scope)
            try:
                value = OPS.apply(n.op, args, kwargs)
            except OPS.Ambiguous as ex:
                raise Rejected("ambiguous", f"{n.name} = {n.op}(...): {ex}", n) from None
            except OPS.OpError as ex:
                raise Rejected("bad-expression", f"{n.name} = {n.op}(...): {ex}", n) from None
            scope.nodes[n.name] = value
            _scalars(value, hidden)
        elif isinstance(n, A.ExpectNode):
            if not eval_expr(n.cond, scope):
                raise Rejected("expect-failed", "an `expect` does not hold on the gold run", n)
        elif isinstance(n, A.TellNode):
            v = eval_expr(n.value, scope)
            if v is None or v == [] or v == "":
                raise Rejected("ambiguous", "a `tell` value is empty", n)
            tells.append(v)
    gold_hash = env.state_hash()
    if gold_hash == init_hash and not tells:
        raise Rejected("no-op", "the gold run changes nothing and tells nothing")
    used = {k: facts[k] for k in sorted(scope.used_facts) if facts[k] is not None}
    for k, v in implicit.items():
        used.setdefault(k, v)
    fact_values = {json.dumps(v, sort_keys=True) for v in used.values()}
    fact_values |= {json.dumps(v, sort_keys=True) for _, _, v in _flatten_facts(used)}
    # equal JSON text implies equal Python scalars, so a cheap membership test rules most values out
    fact_scalars = {v for v in used.values() if not isinstance(v, (dict, list))}
    fact_scalars |= {v for _, _, v in _flatten_facts(used) if not isinstance(v, (dict, list))}
    hidden = [h for h in hidden if h not in fact_scalars or json.dumps(h, sort_keys=True) not in fact_values]
    instruction = render_instruction(bp.user.goal, bp.user.persona, used, usage, writes)
    diff = state_diff(world_state, env.state)
    stats = dag_stats(bp, writes)
    task = Task(
        id=f"{env_name}/{bp.name}",
        env=env_name,
        blueprint=BlueprintRef(path=blueprint_path, hash=blueprint_hash, name=bp.name),
        seed=seed,
        initial_state=None if initial_state_file else copy.deepcopy(world_state),
        initial_state_file=initial_state_file,
        initial_state_hash=init_hash,
        instruction=instruction,
        user=UserSpec(goal=bp.user.goal, persona=bp.user.persona, facts=used),
        gold_calls=gold,
        gold_state_hash=gold_hash,
        gold_diff=diff,
        tell=tells,
        read_only=gold_hash == init_hash,
        stats=stats,
    )
    return LowerResult(task=task, env=env, hidden_values=hidden)


def sha256_text(text: str | bytes) -> str:
    if isinstance(text, str):
        text = text.encode("utf-8")
    return hashlib.sha256(text).hexdigest()
