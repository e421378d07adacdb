r'''The .forge AST: frozen dataclasses, one per syntactic construct, each with a span.

Built by one lark Transformer (forgec.lang.parse) and produced directly by the
synthesizer and the sampler; printed back by forgec.lang.fmt. Spans are excluded
from equality (`compare=False`) so `parse(fmt(x)) == parse(x)` holds modulo spans.
Nothing after parsing sees lark trees.

Surface syntax (see docs/language.md for the full reference):

    import "../src/retail/env.forge"

    env retail {
      state { now: str = "2024-05-15" }            // singleton record (globals)
      record Item { item_id: str  price: float }    // value type, no key
      entity Order key order_id {                   // keyed collection
        order_id: str
        user_id: User                               // reference (stores User's key)
        status: enum("pending", "delivered", "cancelled")
        total: float
        items: list[Item]
        note: str?                                  // optional (may be null)
      }
      @update
      tool cancel_order(order_id: Order, reason: str = "no longer needed") -> Order
        "Cancel a pending order."
      {
        require order_id.status == "pending" else "order is not pending"
        set order_id.status = "cancelled"
        return order_id
      }
      @action
      tool run(query: str) -> any "Escape hatch." python """
        return {"rows": []}
      """
    }

    blueprint cancel_cheapest for retail {
      user {
        goal "cancel my cheapest pending order"
        persona "terse"
        knows user_id = "u_1"
      }
      call u = get_user_details(user_id: user.user_id)
      reason cheapest = argmin(u.orders, by: total)
      call c = cancel_order(order_id: cheapest.order_id)
      expect c.status == "cancelled"
      tell cheapest.total
    }

Semantics the rest of the pipeline relies on:
* A parameter typed with an entity name (`order_id: Order`) takes that entity's
  key on the wire and is bound to the record inside the body (missing key ->
  ToolError "Order 'x' not found").
* A field typed with an entity name stores the referenced record's key.
* `it` is bound to the element inside `where` predicates and `map`/`sum`/... lambdas:
  `Order where it.status == "pending"`, `map(xs, it.price)`.
* `Entity[k]` looks a record up by key (ToolError when missing); `k in Entity` tests existence;
  a bare entity name is the list of all its records (in key order).
* `state` names the singleton record (fields declared in `state { ... }`).
'''

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from forgec.diagnostics import Span

NOSPAN = Span("<synthesized>")


def _span() -> Any:
    return field(default=NOSPAN, compare=False, repr=False)


# --------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class PrimType:
    name: str  # "str" | "int" | "float" | "bool" | "any"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class EnumType:
    values: tuple[Any, ...]  # str | int | float | bool literals
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ListType:
    item: "TypeExpr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class NamedType:
    """A reference to an entity (stores its key) or a record (a nested value)."""

    name: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class RecordType:
    """An inline record type `{a: int, b: str?}` (used for shaped return values)."""

    fields: tuple["FieldDecl", ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class OptionalType:
    inner: "TypeExpr"
    span: Span = _span()


TypeExpr = Union[PrimType, EnumType, ListType, NamedType, RecordType, OptionalType]


def strip_optional(t: "TypeExpr") -> "TypeExpr":
    """`T?` -> `T`; any other type as it is."""
    return t.inner if isinstance(t, OptionalType) else t


# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Literal:
    value: Any  # str | int | float | bool | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Name:
    id: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Attr:
    obj: "Expr"
    name: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Index:
    obj: "Expr"
    index: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Unary:
    op: str  # "not" | "-"
    operand: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Binary:
    op: str  # "or" "and" "==" "!=" "<" "<=" ">" ">=" "in" "not in" "+" "-" "*" "/" "%"
    left: "Expr"
    right: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ListLit:
    items: tuple["Expr", ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class RecordLit:
    fields: tuple["FieldInit", ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class FieldInit:
    name: str
    value: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Where:
    """`source where pred`: `source` is an entity name (all records) or a list; `it` is the element."""

    source: "Expr"
    pred: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Call:
    """Builtin call: len sum min max any all map fresh_id round abs str int float lower upper
    contains startswith first last sorted keys count. See forgec.lang.builtins."""

    func: str
    args: tuple["Expr", ...]
    kwargs: tuple["Arg", ...] = ()
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Arg:
    """A keyword argument `name: value` (tool calls, reason nodes, builtin kwargs)."""

    name: str
    value: "Expr"
    span: Span = _span()


Expr = Union[Literal, Name, Attr, Index, Unary, Binary, ListLit, RecordLit, Where, Call]


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Require:
    cond: Expr
    message: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Let:
    name: str
    value: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Set:
    """`set target = value`; target is an Attr (record field) or Index chain rooted at a name."""

    target: Expr
    value: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Insert:
    """`insert Entity {f: e, ...}` or `let x = insert Entity {...}` (bind = "x")."""

    entity: str
    fields: tuple[FieldInit, ...]
    bind: str | None = None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Delete:
    target: Expr  # evaluates to an entity record
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Append:
    """`append value to target` where target is a list field."""

    target: Expr
    value: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Remove:
    """`remove value from target` where target is a list field."""

    target: Expr
    value: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class For:
    var: str
    iter: Expr
    body: tuple["Stmt", ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class If:
    cond: Expr
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()  # an `else if` is an If alone in orelse
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Return:
    value: Expr
    span: Span = _span()


Stmt = Union[Require, Let, Set, Insert, Delete, Append, Remove, For, If, Return]


# --------------------------------------------------------------------------- env declarations


@dataclass(frozen=True, slots=True)
class FieldDecl:
    name: str
    type: TypeExpr
    default: Expr | None = None
    doc: str = ""
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class EntityDecl:
    name: str
    key: str
    fields: tuple[FieldDecl, ...]
    doc: str = ""
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class RecordDecl:
    name: str
    fields: tuple[FieldDecl, ...]
    doc: str = ""
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class StateDecl:
    fields: tuple[FieldDecl, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ParamDecl:
    name: str
    type: TypeExpr
    default: Expr | None = None
    doc: str = ""
    span: Span = _span()


def wire_name(name: str, names) -> str:
    """The name a param has in the docs: a trailing `_` is the synthesizer's rename of a docs' name that would
    hide a global or an entity (`state` -> `state_`, forgec/synth/params.py), undone wherever a call leaves the env
    (tool schemas, gold calls) and accepted where one comes in; any other name is its own."""
    return name[:-1] if len(name) > 1 and name.endswith("_") and name[:-1] not in names else name


def wire_annotation(name: str) -> str:
    """`@wire("find-projects")` as stored (without `@`): the docs' tool name, where `tool find_projects` could not be it."""
    return f"wire({json.dumps(name)})"


def case_annotation(param: str, value: str) -> str:
    """`@case("operation=create")` as stored: the tool is one act of a docs' tool that does several
    (forgec/synth/cases.py), called with `param` set to `value` under the name its `@wire` gives."""
    return f"case({json.dumps(f'{param}={value}')})"


def _annotation_text(tool: "ToolDecl", name: str) -> str | None:
    """The string argument of a tool's `@name("...")`, else None."""
    for a in tool.annotations:
        if a.startswith(name + "(") and a.endswith(")"):
            try:
                v = json.loads(a[len(name) + 1:-1])
            except ValueError:
                continue
            if isinstance(v, str) and v:
                return v
    return None


def tool_case(tool: "ToolDecl") -> tuple[str, str] | None:
    """(selector param, value) of a tool's `@case("operation=create")`, else None."""
    param, _, value = (_annotation_text(tool, "case") or "").partition("=")
    return (param.strip(), value.strip()) if param.strip() and value.strip() else None


def tool_wire_name(tool: "ToolDecl") -> str:
    """The name agents see and call the tool by: its `@wire("...")` (the docs' own spelling, `find-projects`), else its
    name. The env answers to both (runtime.envrt `step`)."""
    return _annotation_text(tool, "wire") or tool.name


@dataclass(frozen=True, slots=True)
class ToolDecl:
    """A tool: either an effect `body` or a `python` escape-hatch body (exactly one).

    `annotations` are `@name` decorators; the synthesizer writes the tool kind
    (`@read @search @create @update @delete @action`) and `@conservative` when no
    rule applied.
    """

    name: str
    params: tuple[ParamDecl, ...]
    returns: TypeExpr
    doc: str = ""
    body: tuple[Stmt, ...] | None = None
    python: str | None = None
    annotations: tuple[str, ...] = ()
    span: Span = _span()
    # (index of a top-level body statement, why): the synthesizer's citation of the doc
    # sentence a statement was read from; printed as own-line `// from: "..."` comments
    # before that statement. Not part of equality (a re-parse keeps them as comments).
    notes: tuple[tuple[int, str], ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class EnvDecl:
    name: str
    state: StateDecl | None
    records: tuple[RecordDecl, ...]
    entities: tuple[EntityDecl, ...]
    tools: tuple[ToolDecl, ...]
    doc: str = ""
    span: Span = _span()

    def entity(self, name: str) -> EntityDecl | None:
        return next((e for e in self.entities if e.name == name), None)

    def record(self, name: str) -> RecordDecl | None:
        return next((r for r in self.records if r.name == name), None)

    def tool(self, name: str) -> ToolDecl | None:
        return next((t for t in self.tools if t.name == name), None)


# --------------------------------------------------------------------------- blueprints


@dataclass(frozen=True, slots=True)
class Fact:
    """`knows name = value`: a fact the simulated user knows and may tell the agent."""

    name: str
    value: Expr  # a literal (or list/record literal of literals)
    span: Span = _span()


class Said(str):
    """A string clause of the user block (`unknown "order id"`) that remembers where it was
    written, so the checker can point at it; compares and hashes as the plain string."""

    __slots__ = ("span",)

    def __new__(cls, text: str, span: Span | None = None) -> "Said":
        self = super().__new__(cls, text)
        self.span = span
        return self

    def __reduce__(self):
        return (Said, (str(self), self.span))


@dataclass(frozen=True, slots=True)
class Intent:
    """`intent "text" [if "condition"]`: one thing the user wants done, in order; with a
    condition, the user wants it only when the condition holds (the agent must check)."""

    text: str
    condition: str = ""
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class UserBlock:
    """The user scenario (τ²-bench's user_scenario): `goal` is the whole instruction in the
    user's voice; `persona`, `reason` (why they call), `knows` facts, `unknown` (what the
    user cannot tell: internal ids) and ordered `intent`s are what the simulated user plays.
    New clauses come after `facts` so positional construction `UserBlock(goal, persona,
    facts)` keeps working."""

    goal: str
    persona: str = ""
    facts: tuple[Fact, ...] = ()
    reason: str = ""
    unknown: tuple[str, ...] = ()
    intents: tuple[Intent, ...] = ()
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class CallNode:
    """`call name = tool(arg: expr, ...)`; a reference in an argument to an earlier
    node (`res.origin`, `cheapest.flight_number`) is an inference edge."""

    name: str
    tool: str
    args: tuple[Arg, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ReasonNode:
    """`reason name = op(positional..., key: value)` with an operator from forgec.stdlib.ops.

    A keyword whose operator parameter is a field name (`by:`) takes a bare identifier,
    stored as `Name("price")` and interpreted as the field, not a variable.
    """

    name: str
    op: str
    args: tuple[Expr, ...]
    kwargs: tuple[Arg, ...] = ()
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ExpectNode:
    cond: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class TellNode:
    """Information the agent must give the user (read-only tasks)."""

    value: Expr
    span: Span = _span()


BlueprintNode = Union[CallNode, ReasonNode, ExpectNode, TellNode]


@dataclass(frozen=True, slots=True)
class BlueprintDecl:
    name: str
    env: str
    user: UserBlock
    nodes: tuple[BlueprintNode, ...]
    span: Span = _span()


# --------------------------------------------------------------------------- module


@dataclass(frozen=True, slots=True)
class Import:
    path: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Comment:
    """A `//` comment with the line it was on, so the formatter can put it back."""

    text: str  # without the leading //
    line: int
    trailing: bool = False  # True when code precedes it on the same line


@dataclass(frozen=True, slots=True)
class Module:
    file: str
    items: tuple[Union[Import, EnvDecl, BlueprintDecl], ...]
    comments: tuple[Comment, ...] = field(default=(), compare=False)
    span: Span = _span()

    @property
    def envs(self) -> list[EnvDecl]:
        return [i for i in self.items if isinstance(i, EnvDecl)]

    @property
    def blueprints(self) -> list[BlueprintDecl]:
        return [i for i in self.items if isinstance(i, BlueprintDecl)]

    @property
    def imports(self) -> list[Import]:
        return [i for i in self.items if isinstance(i, Import)]


def walk(node):
    """Every AST node under `node` (itself included), depth-first; spans and plain values skipped."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(reversed(n))
            continue
        if not hasattr(n, "__dataclass_fields__"):
            continue
        yield n
        for f in reversed(n.__dataclass_fields__):
            if f != "span":
                v = getattr(n, f)
                if isinstance(v, tuple) or hasattr(v, "__dataclass_fields__"):
                    stack.append(v)
