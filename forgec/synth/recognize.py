"""The shapes in their order of priority, and `claim_all`, which asks each in turn (see `shapes.py`)."""

from __future__ import annotations

from forgec import ir

from .pure import claim as pure_claim
from .shape_account import claim as account_claim
from .shape_device import claim as device_claim
from .shape_graph import claim as graph_claim
from .shape_repo import claim as repo_claim
from .shape_sql import claim as sql_claim
from .shape_tree import claim as tree_claim
from .shapes import Claim, Recognizer

# most specific first; an account before a device (an account's login is its own); pure computations last,
# for what no domain shape models
RECOGNIZERS: tuple[Recognizer, ...] = (tree_claim, repo_claim, sql_claim, graph_claim, account_claim, device_claim, pure_claim)


def claim_all(env: ir.Environment) -> list[Claim]:
    """Every shape's claim on `env`, in priority order; a tool is claimed at most once."""
    taken: set[str] = set()
    claims: list[Claim] = []
    for rec in RECOGNIZERS:
        c = rec(env, frozenset(taken))
        if c is None or not c.tools:
            continue
        c.tools = {n: d for n, d in c.tools.items() if n not in taken}
        taken |= set(c.tools)
        claims.append(c)
    return claims
