"""`ToolError`, the one failure a tool call returns, in a module of its own.

The env runtime (`envrt`, which generated modules use as `_rt`) re-exports it; the sandbox raises it
too, and since `envrt` starts the sandbox, both importing it from here keeps them out of a circle.
"""

from __future__ import annotations


class ToolError(Exception):
    """A tool call failed; the state is unchanged. Returned (not raised) by `Env.step`.

    `code` classifies it (`invalid-arguments`, `not-found`, `precondition`, `unknown-tool`,
    `sandbox`, `internal`); `internal` is True only for bugs in the tool itself (an
    exception other than a domain failure) so verification can tell them apart.
    """

    def __init__(self, message: str, code: str = "tool-error", internal: bool = False, where: str = ""):
        super().__init__(message)
        self.message = message
        self.code = code
        self.internal = internal
        self.where = where

    def __repr__(self) -> str:
        return f"ToolError({self.message!r}, code={self.code!r})"

    def __str__(self) -> str:
        return self.message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolError) and (self.message, self.code) == (other.message, other.code)

    def __hash__(self) -> int:
        return hash((self.message, self.code))

    def __reduce__(self):  # keep code/internal/where across processes (Exception pickles only args)
        return (ToolError, (self.message, self.code, self.internal, self.where))

    def to_json(self) -> dict:
        return {"error": self.message, "code": self.code}
