"""Diagnostic codes of the driver stages: graph, sample, stats (and build/lower/verify, added by their owners).

A flat list of `define` calls, so docs/diagnostics.md can be generated from it.
"""

from __future__ import annotations

from forgec.diagnostics import Severity, define

# --------------------------------------------------------------------------- graph

NO_ENV = define(
    "no-env",
    "graph",
    "The input holds no environment, or none with the name given by `--env`.",
    why="`forgec graph` and `forgec sample` work on one or more environments: tool docs (synthesized on the fly), "
    "a build folder, or .forge files that declare `env NAME { ... }`.",
    wrong="forgec graph build/ --env airlines",
    right="forgec graph build/ --env airline",
)

NO_EDGES = define(
    "graph-no-edges",
    "graph",
    "No tool's output can feed another tool's parameter, so every sampled task is a single call.",
    why="Edges need evidence: an entity reference (`order_id: Order`), the same parameter/field name, or a record shape. "
    "Tools that only take free text share nothing the graph can see.",
    wrong="tool get_user(id: str) -> any\ntool cancel(ref: str) -> any",
    right="tool get_user(user_id: User) -> User\ntool cancel_order(order_id: Order) -> Order   // User has orders: list[Order]",
    severity=Severity.WARNING,
)

GRAPHVIZ_MISSING = define(
    "graphviz-missing",
    "graph",
    "`--format png` needs Graphviz's `dot` program, which is not installed.",
    why="forgec renders PNG pictures by piping DOT text through `dot -Tpng`; the DOT and Mermaid formats need nothing.",
    wrong="forgec graph docs/ --format png -o g.png   # without graphviz",
    right="apt-get install graphviz   # or: forgec graph docs/ --format dot -o g.dot",
)

# --------------------------------------------------------------------------- sample

SAMPLE_SHORTFALL = define(
    "sample-shortfall",
    "sample",
    "The sampler found fewer distinct, executable blueprints than requested.",
    why="Every sampled task is executed against the world state; walks whose calls all fail, that cannot reach a "
    "state-changing tool, or that repeat an earlier DAG's structure are rejected. The message lists the reasons.",
    wrong="forgec sample docs/ -n 500   # an env with 3 tools has few distinct task shapes",
    right="forgec sample docs/ -n 60",
    severity=Severity.WARNING,
)

UNCOVERED_TOOL = define(
    "sample-uncovered-tool",
    "sample",
    "A tool appears in no sampled blueprint.",
    why="A tool no edge reaches and whose parameters nobody can fill is never picked; tasks never exercise it.",
    wrong="tool think(thought: str) -> str   // free text in, nothing out",
    right="give it typed parameters or outputs other tools use, or exclude it",
    severity=Severity.INFO,
)

NO_WORLD_STATE = define(
    "sample-no-state",
    "sample",
    "The environment has no world state or generated module to sample against.",
    why="Sampling is execution-guided: calls run on a copy of the env's seeded world state, so the build must have "
    "`envs/<env>/env.py` and its state file.",
    wrong="forgec sample half-written-build/",
    right="forgec compile docs/ -o build/ && forgec sample build/",
)

# --------------------------------------------------------------------------- stats

BAD_BLUEPRINT = define(
    "stats-bad-blueprint",
    "stats",
    "A blueprint of the build does not parse; its statistics are left out.",
    why="Statistics are computed from the blueprint files themselves (hand edits included).",
    wrong="call x = (",
    right="forgec check build/ to see the syntax error",
    severity=Severity.WARNING,
)

# --------------------------------------------------------------------------- command line

USAGE = define(
    "usage",
    "cli",
    "A usage error (exit code 2): an unknown option or command, a missing argument, a value the option does not "
    "accept, or options that cannot work together.",
    why="Checked before any work starts; the help line repeats the command's usage, and `forgec COMMAND --help` "
    "lists its options. Combinations the option parser cannot see (an LLM agent without an endpoint) use the same code.",
    wrong="forgec eval build/ --agent openai",
    right="forgec eval build/ --agent openai --agent-base-url http://localhost:8000/v1 --agent-model M",
)

IO_ERROR = define(
    "io",
    "cli",
    "A file named on the command line exists but cannot be read (permissions, a folder where a file was expected, not UTF-8).",
    why="forgec reports the operating system's reason instead of a traceback and goes on with the other files.",
    wrong="forgec fmt locked.forge   # mode 000",
    right="chmod u+r locked.forge && forgec fmt locked.forge",
)

TRAIN_CONFIG = define(
    "train-config",
    "cli",
    "The training configuration (a YAML file, a shipped config name or a `--set KEY=VALUE`) is invalid.",
    why="Every config field is validated before torch or DeepSpeed start, so a typo costs seconds, not a job slot; "
    "the message names the field and suggests the nearest valid key.",
    wrong="forgec train build/ --config cpu-tiny --set optim.stepz=10",
    right="forgec train build/ --config cpu-tiny --set optim.steps=10",
)

# --------------------------------------------------------------------------- state (a user's own world: --state, states/<env>.json)

BAD_STATE = define(
    "bad-state",
    "state",
    "A given world state (`--state ENV=FILE`, or a hand-replaced `states/<env>.json`) does not fit the env's schema.",
    why="Tasks are sampled and their gold end states computed on this world, so every value the docs type is checked: "
    "field types, null only for `T?` fields, references to keys that exist, a record's key field equal to its key, "
    "no duplicate key, a required field that some records have and others lack. Each problem is reported once per "
    "field, at its first occurrence, with the number of records that have it. The env is not built until the state is fixed.",
    wrong='{"entities": {"Flight": {"AA1": {"flight_number": "AA1", "seats_available": "forty", "...": "..."}}}}',
    right='{"entities": {"Flight": {"AA1": {"flight_number": "AA1", "seats_available": 40, "...": "..."}}}}',
)

STATE_MAPPING = define(
    "state-mapping",
    "state",
    "How a db.json's collections and fields were mapped onto the env's entities; a warning names what did not map.",
    why="A τ²-bench-style db.json (`{\"users\": {id: {...}}, ...}`) is matched to entities by name (case, separators "
    "and plural/singular ignored) and its fields by normalized name; a collection that matches nothing is left out. The "
    "world's own shape wins over the docs': fields the docs lack are kept (and carried through every write), an enum "
    "grows with a value the data uses (a warning), a field no record has is filled with its default (a warning), "
    "and a link stored on the other side (`Customer.line_ids` for `Line.customer_id`) is derived.",
    wrong='{"passengers": {...}}   # no entity Passenger in the env',
    right='{"users": {...}}        # entity User',
    severity=Severity.INFO,
)

# --------------------------------------------------------------------------- evolve (issue 26: build/evolve.json)

BAD_EVOLVE = define(
    "bad-evolve-rules",
    "evolve",
    "`evolve.json` in the build (the rules `forgec evolve` writes and the sampler reads) is not valid JSON or not the rule format.",
    why="The compile applies each rule to the tasks of its family (reject, relax or tighten a check, weight the mix); a rule it cannot "
    "read would silently change nothing, so the file is refused as a whole and the build is made without it until it is fixed.",
    wrong='{"version": "1", "envs": {"helpdesk": {"rules": [{"action": "drop", "family": {"kind": "write"}}]}}}',
    right='{"version": "1", "envs": {"helpdesk": {"rules": [{"action": "reject", "family": {"kind": "write", "tools": '
    '["get_customer", "close_ticket"]}, "class": "task-defect", "detector": "left-open-record", "evidence": ["oracle-naive:helpdesk/x#0"]}]}}}',
)
