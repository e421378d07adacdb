"""State shapes beyond keyed CRUD: path trees, graph stores, devices, accounts.

Keyed CRUD (`forgec.synth.schema` + `effects`) reads one entity per noun. Some docs describe
another kind of state: a directory tree addressed by paths, a knowledge graph of named nodes
and relations, one vehicle's controls, a trading account. A *shape* recognizes its kind of
state from the whole environment's docs and, when it does, *claims* the tools it models: it
declares the state (entities, records, globals) and gives each claimed tool its body. The
tools it does not claim go through the CRUD rules as before, in the same env.

Each recognizer is `claim(env, taken) -> Claim | None` (`taken`: tool names an earlier shape
already claimed); `RECOGNIZERS` is their order of priority. A recognizer must be general: it
reads what the docs say the state is (paths, parents, a working directory, named nodes),
never one corpus's tool names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from forgec import ir
from forgec.diagnostics import Diagnostic
from forgec.lang import ast as A

from .schema import Entity, Field, Record


@dataclass
class Claim:
    """What one shape contributes: its state and the bodies of the tools it models."""

    shape: str
    tools: dict[str, A.ToolDecl] = field(default_factory=dict)  # documented tool name -> decl
    entities: dict[str, Entity] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    globals: dict[str, Field] = field(default_factory=dict)
    diags: list[Diagnostic] = field(default_factory=list)


Recognizer = Callable[[ir.Environment, frozenset[str]], "Claim | None"]


def _recognizers() -> list[Recognizer]:
    """The shapes, most specific first (imported here so each shape stays its own module)."""
    out: list[Recognizer] = []
    from .shape_tree import claim as tree_claim

    out.append(tree_claim)
    from .shape_repo import claim as repo_claim

    out.append(repo_claim)
    from .shape_sql import claim as sql_claim

    out.append(sql_claim)
    from .shape_graph import claim as graph_claim

    out.append(graph_claim)
    from .shape_account import claim as account_claim  # before device: an account's login is its own

    out.append(account_claim)
    from .shape_device import claim as device_claim

    out.append(device_claim)
    from .pure import claim as pure_claim  # last: computations no domain shape models

    out.append(pure_claim)
    return out


def claim_all(env: ir.Environment) -> list[Claim]:
    """Every shape's claim on `env`, in priority order; a tool is claimed at most once."""
    taken: set[str] = set()
    claims: list[Claim] = []
    for rec in _recognizers():
        c = rec(env, frozenset(taken))
        if c is None or not c.tools:
            continue
        c.tools = {n: d for n, d in c.tools.items() if n not in taken}
        taken |= set(c.tools)
        claims.append(c)
    return claims
