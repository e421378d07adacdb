"""The ToolDoc IR: a typed, format-independent picture of documented tools.

Every frontend (OpenAI, MCP, OpenAPI/Swagger, BFCL) lowers into these frozen
pydantic models; everything after `read` (synthesis, graph, sampler) only sees
this IR. `Source` keeps file + line:col (or a JSON pointer) on every node so
later diagnostics can point at the documentation that caused them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

IR_VERSION = "1"

TypeKind = Literal["string", "integer", "number", "boolean", "enum", "array", "object", "union", "any", "null", "ref"]


class Source(BaseModel):
    model_config = ConfigDict(frozen=True)

    file: str
    line: int = 0
    col: int = 0
    pointer: str = ""

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.col}"
        return f"{self.file}#{self.pointer}" if self.pointer else self.file


class Type(BaseModel):
    """A JSON-Schema-like type, normalized.

    * `string` (with optional `format`: date, date-time, email, uri, ...)
    * `integer`, `number`, `boolean`, `null`, `any`
    * `enum` with `values` (strings, numbers or booleans)
    * `array` with `items`
    * `object` with `fields` (possibly empty: a free-form dict); `items`, when set on an object,
      is the type of its additional property values (`additionalProperties`: a map)
    * `union` with `variants` (`nullable` is folded in as a flag rather than a null variant)
    * `ref` naming an entry of `Environment.definitions` (only used to break recursive schemas)
    """

    model_config = ConfigDict(frozen=True)

    kind: TypeKind
    format: str | None = None
    values: tuple[Any, ...] = ()
    items: Type | None = None
    fields: tuple[Field_, ...] = ()
    variants: tuple[Type, ...] = ()
    ref: str | None = None
    nullable: bool = False
    description: str = ""

    def short(self) -> str:
        """Compact human-readable form used in tables and messages."""
        k = self.kind
        if k == "string" and self.format:
            s = f"string<{self.format}>"
        elif k == "enum":
            s = "enum(" + ", ".join(repr(v) if isinstance(v, str) else str(v) for v in self.values) + ")"
        elif k == "array":
            s = f"array[{self.items.short() if self.items else 'any'}]"
        elif k == "object":
            s = "object{" + ", ".join(f.name + ("" if f.required else "?") for f in self.fields) + "}" if self.fields else "object"
        elif k == "union":
            s = " | ".join(v.short() for v in self.variants)
        elif k == "ref":
            s = f"ref<{self.ref}>"
        else:
            s = k
        return s + ("?" if self.nullable else "")


class Field_(BaseModel):
    """A field of an object type."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: Type
    required: bool = False
    description: str = ""
    read_only: bool = False  # JSON Schema `readOnly`: the server sets it; a request that sends it is ignored (OpenAPI 3)


class Param(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    type: Type
    required: bool = False
    default: Any = None
    has_default: bool = False
    description: str = ""
    location: Literal["arg", "path", "query", "header", "cookie", "body"] = "arg"
    source: Source | None = None


class Tool(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    params: tuple[Param, ...] = ()
    returns: Type | None = None
    annotations: dict[str, Any] = Field(default_factory=dict)
    # the docs' own name where `name` had to be made an identifier (`find-projects` -> `find_projects`): the name
    # agents see and call, as the real server serves it (lang.ast.tool_wire_name)
    wire_name: str | None = None
    http_method: str | None = None
    http_path: str | None = None
    format: Literal["openai", "mcp", "openapi", "swagger", "bfcl"] = "openai"
    source: Source | None = None

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


class PolicyDoc(BaseModel):
    """A policy or manual page beside the tool docs (Markdown or text: tau-bench's wiki.md, a product's help
    page): its rules become preconditions and effects (forgec/synth/policy.py) and the agent reads it at eval time."""

    model_config = ConfigDict(frozen=True)

    file: str
    text: str


class Environment(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    tools: tuple[Tool, ...] = ()
    definitions: dict[str, Type] = Field(default_factory=dict)
    description: str = ""
    sources: tuple[str, ...] = ()
    policy: tuple[PolicyDoc, ...] = ()

    def digest_json(self) -> str:
        """The JSON an env's `ir_hash` is taken over: with no policy pages the field is left out, so a build
        of docs without one keeps the hash (and the manifest) it had before policy pages were read."""
        return self.model_dump_json(exclude={"policy"} if not self.policy else None)

    def deref(self, t: Type | None) -> Type | None:
        """`t` with `ref`s to this env's definitions followed (at most 8 deep: recursive schemas stop)."""
        for _ in range(8):
            if t is None or t.kind != "ref":
                return t
            t = self.definitions.get(t.ref or "")
        return t

    def tool(self, name: str) -> Tool | None:
        for t in self.tools:
            if t.name == name:
                return t
        return None


Type.model_rebuild()
Field_.model_rebuild()


def ir_json_schema() -> dict:
    """The published JSON Schema of the IR (written to build/schema/ and docs/)."""
    return Environment.model_json_schema()
