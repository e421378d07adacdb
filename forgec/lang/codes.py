"""Diagnostic codes of the .forge language (parser, resolver, checker).

Every code has a one-line summary, the reason it exists, and a wrong/right pair
of .forge snippets; docs/diagnostics.md is generated from this registry.
"""

from __future__ import annotations

from forgec.diagnostics import Severity, define

A = "language"
W = Severity.WARNING

_ENV = 'env shop {\n  entity Order key order_id {\n    order_id: str\n    status: enum("pending", "cancelled")\n    total: float\n  }\n'

# --------------------------------------------------------------------------- syntax

SYNTAX = define(
    "syntax-error", A, "The parser met a token it cannot accept here.",
    why="The file does not follow the grammar (grammar/forge.lark); the parser skips to the next statement and keeps going.",
    wrong='tool get(order_id: Order) -> Order {\n  return order_id,\n}',
    right='tool get(order_id: Order) -> Order {\n  return order_id\n}',
)
UNEXPECTED_CHAR = define(
    "unexpected-character", A, "A character that starts no token of the language.",
    why="Only ASCII operators, names, numbers and double-quoted strings are tokens.",
    wrong='require order_id.total > 0 && true else "x"',
    right='require order_id.total > 0 and true else "x"',
)
UNTERMINATED_STRING = define(
    "unterminated-string", A, "A string literal is not closed on its line.",
    why="String literals end on the line they start; multi-line text uses \\n escapes (or a python \"\"\" body).",
    wrong='goal "cancel my order',
    right='goal "cancel my order"',
)
BAD_STRING = define(
    "invalid-string", A, "A string literal has an invalid escape sequence, or one (a lone surrogate such as \\udfff) that is not Unicode text.",
    why="Strings use JSON escapes (\\n \\t \\\" \\\\ \\uXXXX) so they round-trip exactly.",
    wrong='goal "C:\\q"',
    right='goal "C:\\\\q"',
)
LITERAL_RANGE = define(
    "literal-out-of-range", A, "A number literal is too large to be carried exactly.",
    why="Values travel as JSON: integers beyond 2**53 - 1 lose digits in most JSON readers (and tool arguments "
        "beyond it are refused), and a float literal beyond about 1.8e308 is not a finite number.",
    wrong='call o = add_credit(user_id: "u_1", amount: 100000000000000000000)',
    right='call o = add_credit(user_id: "u_1", amount: 1000000)',
)
USER_BLOCK = define(
    "user-block", A, "A blueprint needs exactly one `user { goal \"...\" }` block with one goal.",
    why="The simulated user's goal is the task instruction; without it a task cannot be played.",
    wrong='blueprint b for shop {\n  call o = get_order(order_id: "o_1")\n  tell o.total\n}',
    right='blueprint b for shop {\n  user { goal "what did order o_1 cost?" }\n  call o = get_order(order_id: "o_1")\n  tell o.total\n}',
)
USER_CLAUSE = define(
    "user-clause", A, "A clause of the user block is repeated or empty: two `reason`s or `persona`s, an empty "
    "`reason`, `intent`, `unknown` or intent condition, or the same `intent`/`unknown` twice.",
    why="The user block is the scenario the simulated user plays: one reason for calling, and each intent and "
        "unknown said once and in words.",
    wrong='user {\n  goal "return the kettle"\n  reason "it broke"\n  reason "it is late"\n  intent ""\n}',
    right='user {\n  goal "return the kettle"\n  reason "it broke and it is late"\n  intent "return the kettle"\n}',
)
UNKNOWN_IS_KNOWN = define(
    "unknown-is-known", A, "An `unknown` names a fact the user block also declares with `knows`.",
    why="The simulated user says it does not know what is in `unknown`; it cannot also tell it.",
    wrong='user {\n  goal "cancel my order"\n  knows order_id = "o_1"\n  unknown "order id"\n}',
    right='user {\n  goal "cancel my order"\n  knows email = "maya@example.com"\n  unknown "order id"\n}',
)
MANY_INTENTS = define(
    "many-intents", A, "A user block lists more than three intents.",
    why="A person bundles one to three requests in one call; longer lists read as a script, not a scenario.",
    wrong='intent "a"\nintent "b"\nintent "c"\nintent "d"',
    right='intent "a"\nintent "b"\nintent "c"',
    severity=W,
)
POSITIONAL = define(
    "positional-argument", A, "Tool calls in blueprints take named arguments only.",
    why="Tool arguments are JSON objects; names make the call independent of parameter order.",
    wrong='call o = get_order("o_1")',
    right='call o = get_order(order_id: "o_1")',
)

# --------------------------------------------------------------------------- resolution

IMPORT_NOT_FOUND = define(
    "import-not-found", A, "An `import` names a file that does not exist.",
    why="Imports are resolved relative to the importing file.",
    wrong='import "../src/shop/env.forg"',
    right='import "../src/shop/env.forge"',
)
IMPORT_OUTSIDE = define(
    "import-outside-build", A, "An `import` leads outside the build (or the folders given on the command line).",
    why="Blueprints may come with a build someone shared; an import may read only .forge files of that build, so a "
        "diagnostic can never show the content of another file. Absolute paths, `..` past the build and symlinks "
        "that lead outside are refused.",
    wrong='import "/etc/passwd"\nimport "../../../home/me/.ssh/id_rsa"',
    right='import "../../src/shop/env.forge"',
)
UNKNOWN_ENV = define(
    "unknown-blueprint-env", A, "A blueprint is `for` an environment that no loaded file declares.",
    why="A blueprint's calls are checked against its environment's tools; import the file that declares it.",
    wrong='blueprint b for shp { user { goal "g" } }',
    right='import "env.forge"\nblueprint b for shop { user { goal "g" } }',
)
UNKNOWN_TOOL = define(
    "unknown-tool", A, "A `call` names a tool the environment does not declare.",
    why="Every call must run against a declared tool with known effects.",
    wrong='call o = get_ordr(order_id: "o_1")',
    right='call o = get_order(order_id: "o_1")',
)
UNKNOWN_ENTITY = define(
    "unknown-entity", A, "An entity name (in `insert`, `Entity[k]`, `fresh_id`, `where`) is not declared.",
    why="Effects can only touch declared entity collections.",
    wrong='insert Ordr {order_id: fresh_id(Order), status: "pending", total: 0.0}',
    right='insert Order {order_id: fresh_id(Order), status: "pending", total: 0.0}',
)
UNKNOWN_TYPE = define(
    "unknown-type", A, "A type names neither a builtin type, an entity nor a record.",
    why="Types are str int float bool any, enum(...), list[T], T?, {fields}, or a declared entity/record name.",
    wrong="tool get(order_id: Ordr) -> Order { return order_id }",
    right="tool get(order_id: Order) -> Order { return order_id }",
)
UNKNOWN_FIELD = define(
    "unknown-field", A, "A field access (`x.f`, `by: f`, `insert E {f: ...}`) names no field of the record type.",
    why="Field names are checked against the entity/record declaration so typos fail at compile time.",
    wrong='require order_id.stauts == "pending" else "not pending"',
    right='require order_id.status == "pending" else "not pending"',
)
UNKNOWN_NAME = define(
    "unknown-name", A, "A variable is not a parameter, `let`, loop variable, `it`, `state` or entity name in scope.",
    why="Tool bodies are closed: only declared names can be read.",
    wrong='tool t(order_id: Order) -> float { return oder_id.total }',
    right='tool t(order_id: Order) -> float { return order_id.total }',
)
UNKNOWN_NODE = define(
    "unknown-node", A, "A blueprint expression refers to a node name that no `call`/`reason` defines.",
    why="Inference edges connect earlier node outputs to later arguments; the source node must exist.",
    wrong='call o = get_order(order_id: user.order_id)\ntell od.total',
    right='call o = get_order(order_id: user.order_id)\ntell o.total',
)
UNKNOWN_FACT = define(
    "unknown-fact", A, "`user.X` names a fact the user block does not declare with `knows`.",
    why="The simulated user can only tell the agent what it knows.",
    wrong='user { goal "g"  knows order_id = "o_1" }\ncall o = get_order(order_id: user.orderid)',
    right='user { goal "g"  knows order_id = "o_1" }\ncall o = get_order(order_id: user.order_id)',
)
UNKNOWN_OP = define(
    "unknown-operator", A, "A `reason` node uses an operator that stdlib/ops.py does not define.",
    why="Reasoning nodes are computed by the stdlib operator table to produce gold answers.",
    wrong="reason c = cheapest(o.items, by: price)",
    right="reason c = argmin(o.items, by: price)",
)
UNKNOWN_FUNCTION = define(
    "unknown-function", A, "A call in an expression is not a builtin function.",
    why="Expressions may only call the builtins of forgec.lang.builtins (len, sum, map, fresh_id, ...).",
    wrong="return length(order_id.items)",
    right="return len(order_id.items)",
)
UNKNOWN_ANNOTATION = define(
    "unknown-annotation", A, "A tool annotation is not one of @read @search @create @update @delete @action @conservative.",
    why="Annotations tell later stages the tool's kind; unknown ones are ignored.",
    wrong="@updte\ntool cancel(order_id: Order) -> Order { return order_id }",
    right="@update\ntool cancel(order_id: Order) -> Order { return order_id }",
    severity=W,
)

SERVED_NAME = define(
    "served-name", A, "Tools served under one name must each be one act of it: the same `@case` selector, a value each.",
    why="A docs' tool that does several acts (`motion_tasks(operation: create | delete)`) is split into one tool per act; "
        "agents call the one name and the selector's value picks the tool, so two tools with that name and no selector, "
        "or with the same value, could not be told apart.",
    wrong='@wire("motion_tasks")\ntool create_task(name: str) -> str { return name }\n@wire("motion_tasks")\n'
          'tool delete_task(id: str) -> str { return id }',
    right='@wire("motion_tasks") @case("operation=create")\ntool create_task(name: str) -> str { return name }\n'
          '@wire("motion_tasks") @case("operation=delete")\ntool delete_task(id: str) -> str { return id }',
)

# --------------------------------------------------------------------------- calls and arguments

ARITY = define(
    "wrong-arity", A, "A builtin or operator got the wrong number of positional arguments.",
    why="Each builtin and stdlib operator has a fixed arity.",
    wrong="reason c = count(o.items, o.items)",
    right="reason c = count(o.items)",
)
UNKNOWN_ARG = define(
    "unknown-argument", A, "A keyword argument names no parameter of the tool, operator or builtin.",
    why="Unknown arguments would be rejected by the environment at run time.",
    wrong='call o = get_order(id: "o_1")',
    right='call o = get_order(order_id: "o_1")',
)
MISSING_ARG = define(
    "missing-argument", A, "A required parameter (no default) or required operator keyword is not given.",
    why="The call would fail argument validation when the task is run.",
    wrong="call c = cancel_order()",
    right='call c = cancel_order(order_id: "o_1")',
)
DUP_ARG = define(
    "duplicate-argument", A, "The same keyword argument is given twice.",
    why="Arguments are a JSON object: a name can appear once.",
    wrong='call o = get_order(order_id: "a", order_id: "b")',
    right='call o = get_order(order_id: "a")',
)
FIELD_ARG = define(
    "field-argument", A, "An operator keyword of kind `field` (`by:`) needs a bare field name.",
    why="`by: price` names a field of the list's elements; an expression there has no meaning.",
    wrong='reason c = argmin(o.items, by: "price")',
    right="reason c = argmin(o.items, by: price)",
)

# --------------------------------------------------------------------------- types

TYPE_MISMATCH = define(
    "type-mismatch", A, "An expression's type does not fit where it is used.",
    why="Arguments, field values, conditions and operands are typed so generated environments cannot fail on shape.",
    wrong=_ENV + '  tool t(order_id: Order) -> Order {\n    set order_id.total = "free"\n    return order_id\n  }\n}',
    right=_ENV + '  tool t(order_id: Order) -> Order {\n    set order_id.total = 0.0\n    return order_id\n  }\n}',
)
RETURN_TYPE = define(
    "return-type", A, "A `return` value does not match the tool's declared return type.",
    why="The return type is the tool's advertised result schema; agents rely on it.",
    wrong="tool total(order_id: Order) -> float { return order_id.status }",
    right="tool total(order_id: Order) -> float { return order_id.total }",
)
ENUM_VALUE = define(
    "enum-value", A, "A literal is compared with or assigned to an enum it is not a member of.",
    why='`status == "canceled"` is always false when the enum spells it "cancelled".',
    wrong='set order_id.status = "canceled"',
    right='set order_id.status = "cancelled"',
)
REFERENCE_FIELD = define(
    "reference-field", A, "A field that stores another entity's key is used as if it were the record.",
    why="Reference fields hold keys; look the record up with `Entity[key]`.",
    wrong="return order_id.user_id.name",
    right="return User[order_id.user_id].name",
)
BAD_TARGET = define(
    "bad-target", A, "`set`/`append`/`remove`/`delete` target is not a record field, list field or record.",
    why="Effects change state only through fields of records (or the `state` record).",
    wrong="set total = 0.0",
    right="set order_id.total = 0.0",
)
SET_KEY = define(
    "set-key-field", A, "`set` assigns an entity's key field.",
    why="Keys identify records in the state; changing one would orphan references. Insert a new record instead.",
    wrong='set order_id.order_id = "o_2"',
    right='set order_id.status = "cancelled"',
)
MISSING_FIELD = define(
    "missing-field", A, "`insert` leaves out a field that has no default and is not optional (it gets a zero value).",
    why="A zero `total` or empty `status` is rarely what the tool means; the key alone may be omitted (it gets fresh_id).",
    wrong='insert Order {status: "pending"}',
    right='insert Order {status: "pending", total: 0.0}',
    severity=W,
)
FACT_LITERAL = define(
    "fact-not-literal", A, "A `knows` fact is not a literal (or a list/record of literals).",
    why="Facts are what the simulated user knows before the episode; they cannot depend on tool results.",
    wrong='knows total = o.total',
    right='knows total = 12.5',
)

# --------------------------------------------------------------------------- declarations

DUPLICATE = define(
    "duplicate-name", A, "Two declarations in one scope share a name (envs, entities, records, fields, tools, params, nodes, facts).",
    why="Names must identify one thing; the second declaration would silently shadow the first.",
    wrong="entity Order key order_id {\n  order_id: str\n  order_id: int\n}",
    right="entity Order key order_id {\n  order_id: str\n  count: int\n}",
)
KEY_FIELD = define(
    "key-field", A, "An entity's key is not one of its fields, or is not a required str/int field.",
    why="Records are stored by `str(record[key])`; the key must exist and be a plain scalar.",
    wrong="entity Order key id {\n  order_id: str\n}",
    right="entity Order key order_id {\n  order_id: str\n}",
)
BAD_ENUM = define(
    "bad-enum", A, "An enum is empty, repeats a value or mixes value types.",
    why="Enum values become the JSON schema's `enum`; they must be distinct and of one type.",
    wrong='status: enum("a", "a")',
    right='status: enum("a", "b")',
)

# --------------------------------------------------------------------------- blueprint graph

FORWARD_REF = define(
    "forward-reference", A, "A node uses the output of a node defined later.",
    why="Blueprint nodes run in order; an inference edge must point backwards.",
    wrong='call o = get_order(order_id: c.order_id)\nreason c = first(u.orders)',
    right='reason c = first(u.orders)\ncall o = get_order(order_id: c.order_id)',
)
CYCLE = define(
    "node-cycle", A, "Blueprint nodes depend on each other in a cycle.",
    why="The inference graph must be acyclic to have an execution order.",
    wrong="reason a = first(b)\nreason b = first(a)",
    right="reason a = first(u.orders)\nreason b = count(u.orders)",
)
UNUSED_NODE = define(
    "unused-node", A, "A `reason` node, or a read-only `call`, whose value no later node, expect or tell uses.",
    why="A value nobody uses adds a step the agent is never checked on.",
    wrong="reason c = argmin(o.items, by: price)\ntell o.total",
    right="reason c = argmin(o.items, by: price)\ntell c.price",
    severity=W,
)
UNREACHABLE = define(
    "unreachable", A, "A statement after `return` (or after a `require` that always fails) never runs.",
    why="Dead effects usually mean a misplaced return.",
    wrong="return order_id\nset order_id.total = 0.0",
    right="set order_id.total = 0.0\nreturn order_id",
    severity=W,
)
ALWAYS_FAILS = define(
    "always-fails", A, "A `require` (or blueprint `expect`) condition is constantly false, so it can never succeed.",
    why="A tool whose effect always fails cannot be part of any solvable task.",
    wrong='require false else "disabled"',
    right='require order_id.status == "pending" else "order is not pending"',
)
NO_EFFECT = define(
    "no-effect", A, "A blueprint neither calls a state-changing tool nor tells the user anything.",
    why="Reward compares end states and told values; such a task can be passed by doing nothing.",
    wrong='blueprint b for shop {\n  user { goal "look at o_1" }\n  call o = get_order(order_id: "o_1")\n}',
    right='blueprint b for shop {\n  user { goal "how much was o_1?" }\n  call o = get_order(order_id: "o_1")\n  tell o.total\n}',
    severity=W,
)
TOO_DEEP = define(
    "too-deep", A, "Expressions or blocks are nested too deeply to check or format.",
    why="The checker and formatter recurse over the AST; thousands of nesting levels are never intended.",
    wrong="let x = ((((((((((((((((((((1))))))))))))))))))))  // ... thousands deep",
    right="let a = 1\nlet x = a + 1",
)
