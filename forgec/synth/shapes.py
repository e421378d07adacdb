"""State shapes beyond keyed CRUD: path trees, graph stores, devices, accounts.

Keyed CRUD (`forgec.synth.schema` + `effects`) reads one entity per noun. Some docs describe
another kind of state: a directory tree addressed by paths, a knowledge graph of named nodes
and relations, one vehicle's controls, a trading account. A *shape* recognizes its kind of
state from the whole environment's docs and, when it does, *claims* the tools it models: it
declares the state (entities, records, globals) and gives each claimed tool its body. The
tools it does not claim go through the CRUD rules as before, in the same env.

Each recognizer is `claim(env, taken) -> Claim | None` (`taken`: tool names an earlier shape
already claimed); `recognize.RECOGNIZERS` is their order of priority (a module of its own, so
that each shape imports `Claim` from here without a circle). A recognizer must be general: it
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
