"""Synthesis: ToolDoc IR -> env AST (state schema + tool effects).

`synthesize(env)` is the stage entry point (see docs/contracts.md); the rules backend
(default) is deterministic and offline, the LLM backend proposes .forge text that is
parsed, checked and repaired, falling back to the rules backend.
"""

from __future__ import annotations

from pathlib import Path

from forgec import ir
from forgec.diagnostics import Diagnostic, error
from forgec.lang import ast as A

from . import codes
from .llm import LLMConfig
from .rules import synthesize_rules

__all__ = ["synthesize", "classify_tool", "LLMConfig", "synthesize_rules"]


def synthesize(
    env: ir.Environment,
    backend: str = "rules",
    llm: LLMConfig | None = None,
    cache_dir: Path | None = None,
) -> tuple[A.EnvDecl, list[Diagnostic]]:
    """Synthesize the environment declaration for `env` (deterministic for `rules`)."""
    if backend == "rules":
        return synthesize_rules(env)
    if backend == "llm":
        from .llm import synthesize_llm

        return synthesize_llm(env, llm or LLMConfig(), cache_dir)
    decl, diags = synthesize_rules(env)
    return decl, [error(codes.UNKNOWN_BACKEND, f"unknown synthesis backend {backend!r} (expected 'rules' or 'llm'); used 'rules'")] + diags


def classify_tool(tool: ir.Tool) -> str:
    """The kind of one tool: read | search | create | update | delete | action.

    Same rules as `synthesize` uses, applied to the tool alone (no env-wide context
    such as a shared name prefix or entities other tools define).
    """
    decl, _ = synthesize_rules(ir.Environment(name="single", tools=(tool,)))
    return next(a for a in decl.tools[0].annotations if a in ("read", "search", "create", "update", "delete", "action"))
