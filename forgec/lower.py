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

from forgec.english import as_state
from forgec.wording import CALL_SWITCHES, humanize, is_confirm_switch, say
from forgec.lang import ast as A
from forgec.lang.builtins import BUILTINS, OPERATORS, UNARY
from forgec.runtime import envrt
from forgec.runtime.envrt import ToolError, tool_ident
from forgec.stdlib import ops as OPS
from forgec.tasks import BlueprintRef, GoldCall, ScenarioIntent, Task, TaskStats, UserScenario, UserSpec, state_diff
from forgec.lang.check import blueprint_edges, user_reads


class Rejected(Exception):
    """The blueprint cannot become a task; `reason` is a short stable category."""

    def __init__(self, reason: str, detail: str, node: A.BlueprintNode | None = None, code: str = ""):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.node = node
        self.code = code  # the runtime's ToolError code when a builtin or operator failed


# --------------------------------------------------------------------------- expression evaluation


def _is_tool_error(value: Any) -> bool:
    return isinstance(value, BaseException)


class Scope:
    """Values visible to blueprint expressions: `user.<fact>`, earlier node outputs, and `it`
    (the element a per-element argument is evaluated for, innermost last)."""

    def __init__(self, facts: dict[str, Any]):
        self.facts = facts
        self.nodes: dict[str, Any] = {}
        self.used_facts: set[str] = set()
        self.its: list[Any] = []


def eval_expr(e: A.Expr, scope: Scope) -> Any:
    """Evaluate a blueprint expression. Builtins and operators mean what they mean in a tool
    body: both call the registry's functions (forgec.lang.builtins, runtime/envrt.py); a
    runtime error becomes `Rejected` with the same message (and `code`)."""
    fn = _EVAL.get(type(e))
    if fn is None:
        raise Rejected("bad-expression", f"{type(e).__name__} is not allowed in blueprints")
    return fn(e, scope)


def _runtime(fn: Any, *args: Any, reason: str = "bad-expression") -> Any:
    """Call a runtime function; its failure rejects the blueprint with the same message and code."""
    try:
        return fn(*args)
    except ToolError as ex:  # a domain failure: the tool body's ToolError
        raise Rejected(reason, ex.message, code=ex.code) from None
    except TypeError as ex:  # a value of the wrong type: the tool body's internal error
        raise Rejected(reason, str(ex), code="internal") from None


def _eval_name(e: A.Name, scope: Scope) -> Any:
    if e.id == "it" and scope.its:
        return scope.its[-1]
    if e.id in scope.nodes:
        return scope.nodes[e.id]
    if e.id == "user":
        return dict(scope.facts)
    raise Rejected("bad-reference", f"unknown name {e.id!r}")


def _eval_attr(e: A.Attr, scope: Scope) -> Any:
    if isinstance(e.obj, A.Name) and e.obj.id == "user" and "user" not in scope.nodes:
        if e.name not in scope.facts:
            raise Rejected("bad-reference", f"the user does not know {e.name!r}")
        scope.used_facts.add(e.name)
        return scope.facts[e.name]
    return _runtime(envrt.getf, eval_expr(e.obj, scope), e.name, reason="bad-reference")


def _eval_index(e: A.Index, scope: Scope) -> Any:
    obj = eval_expr(e.obj, scope)
    return _runtime(envrt.index, obj, eval_expr(e.index, scope), reason="bad-reference")


def _eval_unary(e: A.Unary, scope: Scope) -> Any:
    return _runtime(UNARY[e.op].impl, eval_expr(e.operand, scope))


def _eval_binary(e: A.Binary, scope: Scope) -> Any:
    if e.op == "and":
        return eval_expr(e.left, scope) and eval_expr(e.right, scope)
    if e.op == "or":
        return eval_expr(e.left, scope) or eval_expr(e.right, scope)
    a, b = eval_expr(e.left, scope), eval_expr(e.right, scope)
    return _runtime(OPERATORS[e.op].impl, a, b)


def _per_element(body: Any, scope: Scope) -> Any:
    """`body` as a function of the element (`it`), as a tool body's `lambda it: body`."""

    def per(x: Any) -> Any:
        scope.its.append(x)
        try:
            return eval_expr(body, scope)
        finally:
            scope.its.pop()

    return per


def _eval_call(e: A.Call, scope: Scope) -> Any:
    """A builtin: the registry's `impl`, called as generated code calls it (`Builtin.codegen_form`)."""
    b = BUILTINS.get(e.func)
    if b is None or b.impl is None:
        raise Rejected("bad-expression", f"builtin {e.func!r} is not available in blueprints")
    if not b.min_args <= len(e.args) <= b.max_args:
        raise Rejected("bad-expression", f"{e.func}() takes {b.min_args}..{b.max_args} arguments, got {len(e.args)}")
    if b.lambda_arg is None:
        return _runtime(b.impl, *[eval_expr(a, scope) for a in e.args])
    if len(e.args) == 2 and not b.per_element(e.args):  # min(a, b) / max(a, b) of two values
        return _runtime(b.impl, [eval_expr(a, scope) for a in e.args])
    xs = eval_expr(e.args[0], scope)
    per = _per_element(e.args[1], scope) if len(e.args) == 2 else None
    extra = [eval_expr(k.value, scope) for k in e.kwargs if k.name == "desc"]
    return _runtime(b.impl, xs, per, *extra)


_EVAL = {
    A.Literal: lambda e, scope: e.value,
    A.Name: _eval_name,
    A.Attr: _eval_attr,
    A.Index: _eval_index,
    A.ListLit: lambda e, scope: [eval_expr(i, scope) for i in e.items],
    A.RecordLit: lambda e, scope: {f.name: eval_expr(f.value, scope) for f in e.fields},
    A.Unary: _eval_unary,
    A.Binary: _eval_binary,
    A.Call: _eval_call,
}


def _call_switch(name: str, v: Any) -> bool:
    """`preview=false`, `confirm=true`: how the docs say a change is applied (the agent's part), nothing the user tells."""
    return isinstance(v, bool) and (re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower() in CALL_SWITCHES or is_confirm_switch(name))


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


def _without_logs(state: dict, logs) -> dict:
    """`state` without the env's LOG_ENTITIES (log-only calls' records are no state the reward compares)."""
    if not logs:
        return state
    return {**state, "entities": {e: c for e, c in (state.get("entities") or {}).items() if e not in logs}}


# --------------------------------------------------------------------------- instructions


_PERSONAL = re.compile(r"(^|_)(id|ids|email|name|phone|address|zip|zipcode|dob|username|account|city|country|state|street)$")


def flatten_facts(facts: dict[str, Any]) -> list[tuple[str, str, Any]]:
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
    said = say(value)
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
    goal = goal.strip()
    goal = goal if re.search(r"[.!?][\"']$", goal) else goal.rstrip(".")  # 'saying "Done."' ends the sentence already
    if goal and not goal.lower().startswith(("i ", "i'", "please", "can ", "could ", "my ", "hi,", "hello", "since ")):
        goal = "I want to " + goal[0].lower() + goal[1:]
    parts = [goal[:1].upper() + goal[1:] + ("" if goal.endswith(("?", "!")) or re.search(r"[.!?][\"']$", goal) else ".")] if goal else []
    flat = [(k, n, v) for k, n, v in flatten_facts(facts) if v is not None]
    counts: dict[str, int] = {}
    for _, n, _v in flat:
        counts[n] = counts.get(n, 0) + 1
    if flat and all(said_in(goal, v, n) for _, n, v in flat):
        return " ".join(parts)  # a scenario's goal weaves every fact in ("my order with the blue kettle"): not twice
    seen: set[str] = set()
    for fact, name, value in flat:
        sentence = _fact_sentence(name, value, usage.get(fact), counts[name] > 1, writes or {})
        if sentence not in seen:
            seen.add(sentence)
            parts.append(sentence)
    return " ".join(parts)


_CAMEL = re.compile(r"[a-z]+(?:[A-Z][a-z0-9]+)+")
_ISO_MINUTE = re.compile(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)(?::00(?:\.0+)?)?(Z|[+-]00:?00)?")


def said_in(goal: str, value: Any, name: str | None = None) -> bool:
    """The goal already states this value, as `say` spells it (a whole word, or a $ amount); a
    bool of a named parameter as its act ("lock the doors" for unlock=false, "turn it off"), an
    enum value with its underscores as spaces ("rear left")."""
    if isinstance(value, list):
        return bool(value) and all(said_in(goal, x, name) for x in value)
    if isinstance(value, dict):
        return bool(value) and all(said_in(goal, x, k) for k, x in value.items() if x is not None)
    if isinstance(value, bool) and name:
        from forgec.devicewords import bool_said

        return bool_said(goal, name, value)
    if value is None or isinstance(value, bool):
        return False
    said = say(value)
    if not said.strip():
        return False
    alts = {said, said.replace("_", " ")}
    if isinstance(value, str) and (dt := _ISO_MINUTE.fullmatch(value)):
        alts.add(f"{dt.group(1)} at {dt.group(2)}" + (" UTC" if dt.group(3) else ""))  # as scenario._set_value says it
    if isinstance(value, str) and _CAMEL.fullmatch(value):
        alts.add(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", value).lower())  # Azure DevOps' `projectWiki` said "project wiki"
    if isinstance(value, str) and value.isalpha() and value.islower():
        alts.add(as_state(value))  # a state the docs spell as a verb, said as the state: "publish" as "published"
    if isinstance(value, (int, float)):
        alts.add(f"{value:,.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}")
        alts.add(f"{value:,.2f}")  # "$580.50"
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 1500.0 cents of a `number` price is said as 1500 cents are
    if isinstance(value, int) and not isinstance(value, bool):
        for sym in "£$€":  # an amount the docs give in minor units is said in major ones: 2735 pence as "£27.35"
            alts.add(f"{sym}{value / 100:,.2f}")
            if value % 100 == 0:
                alts.add(f"{sym}{value // 100:,}")
    low = goal.lower()
    return any(_whole(low, a.lower()) for a in alts)


def _whole(text: str, word: str) -> bool:
    """`word` occurs in `text` not inside a longer word or number (no regex: called per fact per task)."""
    i = text.find(word)
    while i >= 0:
        before = text[i - 1] if i else " "
        after = text[i + len(word): i + len(word) + 2]
        if not (before.isalnum() or before in "_.") and not (after[:1].isalnum() or after[:1] == "_" or (after[:1] == "." and after[1:2].isdigit())):
            return True
        i = text.find(word, i + 1)
    return False


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
        elif isinstance(v, (int, float)) and abs(v) >= 10 and re.search(rf"(?<![\w.:/-]){re.escape(f'{v:g}')}(?![\w:/-])", low):  # not a part of a date or a time
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


@dataclass
class _GoldRun:
    """What executing a blueprint's nodes accumulates (the steps of `lower_blueprint` share it)."""

    env: Any
    scope: Scope
    gold: list[GoldCall] = field(default_factory=list)
    tells: list[Any] = field(default_factory=list)
    implicit: dict[str, Any] = field(default_factory=dict)  # literal call arguments: facts only the user has
    usage: dict[str, tuple[str, str]] = field(default_factory=dict)  # fact -> (tool, parameter) it first feeds
    hidden: list[Any] = field(default_factory=list)  # looked-up / computed values the user must not say
    params: Mapping[str, Any] = field(default_factory=dict)  # module.TOOL_PARAMS: tool -> [{name, type}]
    schema: Mapping[str, Any] = field(default_factory=dict)  # module.SCHEMA
    writes: Mapping[str, bool] = field(default_factory=dict)  # module.WRITES_STATE: tool -> whether it writes


def _as_keys(value: Any, tj: Mapping[str, Any], schema: Mapping[str, Any]) -> Any:
    """An entity parameter takes the key or a record of that entity (docs/language.md): a record
    becomes its key, so the gold call sends what an agent sends (the tool's schema asks for ids)."""
    if tj.get("type") == "ref" and isinstance(value, dict):
        key = schema.get("entities", {}).get(tj.get("entity"), {}).get("key")
        return value.get(key, value) if key else value
    if tj.get("type") == "list" and isinstance(value, list):
        return [_as_keys(x, tj.get("items", {}), schema) for x in value]
    return value


def _literal_facts(bp: A.BlueprintDecl) -> dict[str, Any]:
    """The user's `knows` facts; each must be a literal."""
    facts: dict[str, Any] = {}
    for f in bp.user.facts:
        if not _is_pure_literal(f.value):
            raise Rejected("bad-fact", f"fact {f.name!r} must be a literal")
        facts[f.name] = eval_expr(f.value, Scope({}))
    return facts


def _every_value(v: Any) -> bool:
    """A choice of "all" (`list_tasks(status: "all")`): how the agent lists every record, nothing the
    user has to say (an implicit fact "The status is all." would be told to them otherwise)."""
    return isinstance(v, str) and v.strip().lower() in ("all", "any", "every", "everything", "*")


def _run_call(run: _GoldRun, n: A.CallNode) -> None:
    """`call x = tool(...)`: evaluate the arguments, step the env; a ToolError rejects."""
    args = {}
    types = {p["name"]: p["type"] for p in run.params.get(n.tool, ())}
    for a in n.args:
        v = _as_keys(eval_expr(a.value, run.scope), types.get(a.name, {}), run.schema)
        if v is None and _is_pure_literal_or_fact(a.value):
            continue  # an optional argument left out says the same as null
        args[a.name] = v
        if isinstance(a.value, A.Attr) and isinstance(a.value.obj, A.Name) and a.value.obj.id == "user":
            run.usage.setdefault(a.value.name, (n.tool, a.name))
        lister_switch = isinstance(v, bool) and not run.writes.get(n.tool, True)  # `get_projects(excludeInactive=false)`:
        # how the agent lists every record, nothing the user tells (review 38: "The exclude inactive is no.")
        if _is_pure_literal(a.value) and a.value != A.Literal(None) and not _every_value(v) and not _call_switch(a.name, v) and not lister_switch:
            taken = a.name in run.scope.facts or a.name in run.implicit
            name = f"{n.name}_{a.name}" if taken else a.name
            run.implicit[name] = v
            run.usage.setdefault(name, (n.tool, a.name))
    result = run.env.step(n.tool, copy.deepcopy(args))
    if _is_tool_error(result):
        raise Rejected("gold-call-failed", f"{n.name} = {n.tool}(...): {result}", n)
    run.scope.nodes[n.name] = result
    names = {a.name for a in n.args} | set(types)
    module = getattr(run.env, "_MODULE", None)
    served = (getattr(module, "WIRE_NAMES", None) or {}).get(n.tool, n.tool)  # `find-projects`
    case = (getattr(module, "CASES", None) or {}).get(served)
    pick = next(({case["param"]: v} for v, t in case["tools"].items() if t == n.tool), {}) if case else {}  # `operation: "create"`
    run.gold.append(GoldCall(node=n.name, tool=served, arguments={**pick, **{A.wire_name(k, names): v for k, v in args.items()}}, result=result))
    _scalars(result, run.hidden)


def _reason_kwargs(spec: Any, n: A.ReasonNode, scope: Scope) -> dict[str, Any]:
    """Keyword values of a reasoning node; `field` keywords are field names, not expressions."""
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
    return kwargs


def _run_reason(run: _GoldRun, n: A.ReasonNode) -> None:
    """`reason x = op(...)`: a stdlib operator; an ambiguous answer or a bad operand rejects."""
    spec = OPS.OPS.get(n.op)
    if spec is None:
        raise Rejected("bad-reference", f"unknown operator {n.op!r}", n)
    args = [eval_expr(a, run.scope) for a in n.args]
    kwargs = _reason_kwargs(spec, n, run.scope)
    try:
        value = OPS.apply(n.op, args, kwargs)
    except OPS.Ambiguous as ex:
        raise Rejected("ambiguous", f"{n.name} = {n.op}(...): {ex}", n) from None
    except OPS.OpError as ex:
        raise Rejected("bad-expression", f"{n.name} = {n.op}(...): {ex}", n) from None
    run.scope.nodes[n.name] = value
    _scalars(value, run.hidden)


def _run_expect(run: _GoldRun, n: A.ExpectNode) -> None:
    if not eval_expr(n.cond, run.scope):
        raise Rejected("expect-failed", "an `expect` does not hold on the gold run", n)


def _run_tell(run: _GoldRun, n: A.TellNode) -> None:
    """`tell v`: recorded as canonical JSON, like a tool's result (floats to 6 decimals)."""
    v = eval_expr(n.value, run.scope)
    if v is None or v == [] or v == "":
        raise Rejected("ambiguous", "a `tell` value is empty", n)
    try:
        run.tells.append(envrt.canon(v))
    except ValueError as ex:  # a non-finite float
        raise Rejected("bad-expression", str(ex), n) from None


_NODE_STEPS = {A.CallNode: _run_call, A.ReasonNode: _run_reason, A.ExpectNode: _run_expect, A.TellNode: _run_tell}


def _told_facts(run: _GoldRun) -> dict[str, Any]:
    """The facts the user tells: the non-null `knows` facts the nodes read, then literal arguments."""
    facts = run.scope.facts
    used = {k: facts[k] for k in sorted(run.scope.used_facts) if facts[k] is not None}
    for k, v in run.implicit.items():
        used.setdefault(k, v)
    return used


def _hidden_values(hidden: list[Any], used: dict[str, Any]) -> list[Any]:
    """Looked-up / computed values, less those the user says anyway."""
    fact_values = {json.dumps(v, sort_keys=True) for v in used.values()}
    fact_values |= {json.dumps(v, sort_keys=True) for _, _, v in flatten_facts(used)}
    # equal JSON text implies equal Python scalars, so a cheap membership test rules most values out
    fact_scalars = {v for v in used.values() if not isinstance(v, (dict, list))}
    fact_scalars |= {v for _, _, v in flatten_facts(used) if not isinstance(v, (dict, list))}
    return [h for h in hidden if h not in fact_scalars or json.dumps(h, sort_keys=True) not in fact_values]


def _scenario(u: A.UserBlock, facts: dict[str, Any], used: dict[str, Any]) -> UserScenario:
    """The user block as τ²-bench's user_scenario: known_info is every non-null fact the user
    knows (told or not) plus the literal arguments only the user can supply."""
    known = {k: v for k, v in facts.items() if v is not None}
    known.update(used)
    return UserScenario(
        persona=u.persona, reason_for_call=u.reason, known_info=dict(sorted(known.items())),
        unknown_info=[str(x) for x in u.unknown], task_instructions=u.goal,
        intents=[ScenarioIntent(text=i.text, condition=i.condition) for i in u.intents],
    )


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
    run = _GoldRun(env, Scope(_literal_facts(bp)), params=getattr(module, "TOOL_PARAMS", {}), schema=getattr(module, "SCHEMA", {}),
                   writes=getattr(module, "WRITES_STATE", {}))
    for n in bp.nodes:
        step = _NODE_STEPS.get(type(n))
        if step is not None:
            step(run, n)
    gold_hash = env.state_hash()
    if gold_hash == init_hash and not run.tells:
        raise Rejected("no-op", "the gold run changes nothing and tells nothing")
    writes = getattr(module, "WRITES_STATE", {})
    used = _told_facts(run)
    task = Task(
        id=f"{env_name}/{bp.name}",
        env=env_name,
        blueprint=BlueprintRef(path=blueprint_path, hash=blueprint_hash, name=bp.name),
        seed=seed,
        initial_state=None if initial_state_file else copy.deepcopy(world_state),
        initial_state_file=initial_state_file,
        initial_state_hash=init_hash,
        instruction=render_instruction(bp.user.goal, bp.user.persona, used, run.usage, writes),
        user=UserSpec(goal=bp.user.goal, persona=bp.user.persona, facts=used, scenario=_scenario(bp.user, run.scope.facts, used)),
        gold_calls=[g.model_copy(update={"write": bool(writes.get(tool_ident(module, g.tool, g.arguments), False))}) for g in run.gold],
        gold_state_hash=gold_hash,
        gold_diff=state_diff(*(_without_logs(st, getattr(module, "LOG_ENTITIES", ())) for st in (world_state, env.state))),
        tell=run.tells,
        read_only=gold_hash == init_hash,
        stats=dag_stats(bp, writes),
    )
    return LowerResult(task=task, env=env, hidden_values=_hidden_values(run.hidden, used))


def sha256_text(text: str | bytes) -> str:
    if isinstance(text, str):
        text = text.encode("utf-8")
    return hashlib.sha256(text).hexdigest()
