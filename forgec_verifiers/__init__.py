"""The verifiers plugin `forgec-verifiers`: a forgec build as a verifiers (`verifiers.v1`, 0.4) taskset.

verifiers resolves a taskset id to a top-level module and reads its `Taskset`, `Env` and `Harness` subclasses from
`__all__`; this package is that module for forgec, so verifiers' own entry points run a build:

    eval forgec-verifiers --env.taskset.build build/ -m MODEL ...

The code is `forgec.adapters.verifiers_env` (docs/adapters.md).
"""

from forgec.adapters.verifiers_env import ForgecEnv, ForgecHarness, ForgecTaskset

__all__ = ["ForgecTaskset", "ForgecEnv", "ForgecHarness"]
