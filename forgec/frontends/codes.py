"""Diagnostic codes of the `read` stage (tool-doc frontends)."""

from __future__ import annotations

from forgec.diagnostics import Severity, define

AREA = "frontends"

PATH_NOT_FOUND = define(
    "path-not-found",
    AREA,
    "A path given on the command line does not exist.",
    why="forgec reads only what it is pointed at; a typo would otherwise silently produce fewer environments.",
    wrong="forgec inspect doc/   # the folder is called docs/",
    right="forgec inspect docs/",
)
NO_DOCS = define(
    "no-tool-docs",
    AREA,
    "A folder contains no .json, .yaml, .yml or .jsonl file.",
    why="An empty environment cannot be synthesized; the folder was probably not the one meant.",
    wrong="docs/\n  README.md",
    right="docs/\n  airline.json",
)
UNREADABLE = define(
    "unreadable-file",
    AREA,
    "The operating system refused to read the file (permissions, a broken link, ...).",
    why="The file's tools would be missing from the environment without a word.",
    wrong="docs/tools.json -> /mnt/gone/tools.json   # a dangling symlink, or mode 000",
    right="docs/tools.json   # a regular file the current user can read",
)
EMPTY_FILE = define(
    "empty-file",
    AREA,
    "The file is empty or contains only whitespace.",
    why="An empty file documents no tools; it is usually a failed export.",
    wrong="tools.json  (0 bytes)",
    right='tools.json: [{"type": "function", "function": {"name": "get_user", "parameters": {...}}}]',
)
NOT_UTF8 = define(
    "not-utf8",
    AREA,
    "The file is not valid UTF-8; the position of the first undecodable byte is reported.",
    why="JSON and YAML tool docs are UTF-8 by specification; guessing another encoding would corrupt names and descriptions.",
    wrong='{"description": "caf\\xe9"}   # latin-1 byte 0xe9',
    right='{"description": "café"}      # saved as UTF-8',
)
LONE_SURROGATE = define(
    "lone-surrogate",
    AREA,
    "A string in the documentation holds a lone surrogate escape (such as \\udfff): it is legal JSON but not Unicode text.",
    why="Names, descriptions and enum values flow into .forge files, generated Python, the state and its hash, "
        "which are UTF-8; a lone surrogate cannot be encoded there, so it is refused where it was written.",
    wrong='{"description": "price in \\ud83d dollars"}',
    right='{"description": "price in \\ud83d\\udcb5 dollars"}   # a complete pair, or the character itself',
)
LINK_OUTSIDE = define(
    "link-outside-folder",
    AREA,
    "A file in a docs folder is a symlink that leads outside the folder given on the command line; it is not read.",
    severity=Severity.WARNING,
    why="A folder someone shared must not make forgec read (and quote in diagnostics) a file elsewhere on this machine; "
        "name the file itself on the command line to read it.",
    wrong="docs/extra.json -> /home/me/secrets.json",
    right="forgec compile docs/ /home/me/tools.json -o build/",
)
POLICY_UNMATCHED = define(
    "policy-unmatched",
    AREA,
    "A policy or manual page (.md, .txt) was found beside tool docs of several environments, or of none, so no "
    "environment reads it.",
    severity=Severity.WARNING,
    why="A policy page belongs to one environment: its rules become that env's preconditions and effects and its "
        "text goes into that env's agent prompt. Beside one doc file it is that file's; among several, the doc file "
        "with the same stem claims it.",
    wrong="docs/\n  retail.json\n  airline.json\n  policy.md",
    right="docs/\n  retail.json\n  retail.md\n  airline.json   # or docs/retail/{tools.json, policy.md}",
)
MALFORMED_JSON = define(
    "malformed-json",
    AREA,
    "The JSON (or a JSON Lines record) does not parse; the parser's line:col is reported.",
    why="Nothing in a file that does not parse can be trusted, so the file is skipped; other files are still read.",
    wrong='{"name": "get_user", "parameters": {},}',
    right='{"name": "get_user", "parameters": {}}',
)
MALFORMED_YAML = define(
    "malformed-yaml",
    AREA,
    "The YAML does not parse; the parser's line:col is reported.",
    why="Nothing in a file that does not parse can be trusted, so the file is skipped; other files are still read.",
    wrong="paths:\n  /books:\n    get:\n   summary: bad indent",
    right="paths:\n  /books:\n    get:\n      summary: List books",
)
UNKNOWN_FORMAT = define(
    "unknown-format",
    AREA,
    "The file parses but is none of the formats forgec reads (OpenAI tools, MCP tools/list, OpenAPI 3.x, Swagger 2.0, BFCL).",
    why="Guessing at an unknown layout would invent tools; forgec reports instead.",
    wrong='{"endpoints": [{"url": "/users"}]}',
    right='{"tools": [{"name": "get_user", "inputSchema": {"type": "object", "properties": {}}}]}',
)
INVALID_TOOL = define(
    "invalid-tool",
    AREA,
    "An entry in a tool list is not a tool object of the detected format.",
    why="Each entry must describe one callable tool; the entry is skipped and the others are read.",
    wrong='[{"type": "function", "function": {"name": "a"}}, "b"]',
    right='[{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}]',
)
MISSING_NAME = define(
    "missing-tool-name",
    AREA,
    "A tool has no name (or a name that is not a non-empty string).",
    why="Agents call tools by name; a nameless tool cannot be called.",
    wrong='{"type": "function", "function": {"description": "Get a user"}}',
    right='{"type": "function", "function": {"name": "get_user", "description": "Get a user"}}',
)
RENAMED_TOOL = define(
    "renamed-tool",
    AREA,
    "A tool name is not an identifier and was normalized (non-alphanumerics become `_`).",
    why="Tool names become identifiers in .forge sources and generated Python.",
    wrong='{"name": "get-user.v2"}',
    right='{"name": "get_user_v2"}',
    severity=Severity.WARNING,
)
RENAMED_PARAM = define(
    "renamed-param",
    AREA,
    "A parameter name is not an identifier and was normalized (non-alphanumerics become `_`).",
    why="Parameter names become identifiers in .forge sources and generated Python.",
    wrong="parameters: [{name: X-Request-Id, in: header}]",
    right="parameters: [{name: request_id, in: header}]",
    severity=Severity.WARNING,
)
DUPLICATE_TOOL = define(
    "duplicate-tool",
    AREA,
    "Two tools in one environment have the same name; the later one is dropped.",
    why="A tool call names exactly one tool; two definitions make calls ambiguous.",
    wrong='[{"name": "get_user", ...}, {"name": "get_user", ...}]',
    right='[{"name": "get_user", ...}, {"name": "get_user_by_email", ...}]',
    severity=Severity.WARNING,
)
UNDECLARED_PATH_PARAM = define(
    "undeclared-path-param",
    AREA,
    "An OpenAPI path template names a `{parameter}` that the operation does not declare; it is added as a required string.",
    why="The operation cannot be called without it, and its type is unknown.",
    wrong="/books/{book_id}:\n  get:\n    responses: ...",
    right="/books/{book_id}:\n  get:\n    parameters: [{name: book_id, in: path, required: true, schema: {type: string}}]",
    severity=Severity.WARNING,
)
DUPLICATE_PARAM = define(
    "duplicate-param",
    AREA,
    "Two parameters of one operation have the same name; one in another location is passed as `<name>_<location>`, one repeated in the same location is dropped.",
    why="Arguments are passed by name; OpenAPI tells parameters apart by name and location.",
    wrong="parameters: [{name: id, in: path}, {name: id, in: query}]",
    right="parameters: [{name: id, in: path}, {name: version_id, in: query}]",
    severity=Severity.WARNING,
)
UNKNOWN_REQUIRED = define(
    "unknown-required",
    AREA,
    "A tool's `required` list names a parameter that is not documented under `properties`.",
    why="Almost always a typo; the agent would be told an argument is required that it cannot pass.",
    wrong='{"properties": {"user_id": {"type": "string"}}, "required": ["userid"]}',
    right='{"properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}',
    severity=Severity.WARNING,
)
MISSING_TYPE = define(
    "missing-param-type",
    AREA,
    "A parameter's schema says nothing about its type (no type, enum, $ref, anyOf, properties or items); it is read as `any`.",
    why="Synthesis needs a type to build state and validate arguments; `any` accepts everything and checks nothing.",
    wrong='"properties": {"user_id": {"description": "The user"}}',
    right='"properties": {"user_id": {"type": "string", "description": "The user"}}',
    severity=Severity.WARNING,
)
UNKNOWN_TYPE = define(
    "unknown-schema-type",
    AREA,
    "A schema names a type forgec does not know; it is read as `any`.",
    why="JSON Schema types are string, integer, number, boolean, array, object and null (BFCL adds dict, float, tuple, any).",
    wrong='{"type": "text"}',
    right='{"type": "string"}',
    severity=Severity.WARNING,
)
INVALID_SCHEMA = define(
    "invalid-schema",
    AREA,
    "A schema (parameters, properties, items, ...) is not a JSON object; it is read as `any`.",
    why='JSON Schema keywords take schema objects; a bare string such as "string" is a common slip.',
    wrong='"properties": {"user_id": "string"}',
    right='"properties": {"user_id": {"type": "string"}}',
)
UNRESOLVED_REF = define(
    "unresolved-ref",
    AREA,
    "A `$ref` points at nothing in the document (or at another file, which is not supported); it is read as `any`.",
    why="The referenced schema carries the type; without it the parameter or return value is unknown.",
    wrong='$ref: "#/components/schemas/Bok"',
    right='$ref: "#/components/schemas/Book"',
    severity=Severity.WARNING,
)
SCHEMA_TOO_DEEP = define(
    "schema-too-deep",
    AREA,
    "A schema nests deeper than forgec follows (64 levels); the rest is read as `any`.",
    why="Real tool schemas are shallow; absurd nesting is almost always generated by mistake and would exhaust the stack.",
    wrong='{"type": "array", "items": {"type": "array", "items": {"type": "array", ... 70 levels ...}}}',
    right='{"type": "array", "items": {"$ref": "#/$defs/Node"}}   # name the recursive shape instead',
    severity=Severity.WARNING,
)
NO_TOOLS = define(
    "no-tools",
    AREA,
    "A document in a known format lists no tools (or no operations).",
    why="An environment without tools cannot be synthesized; the file is probably an incomplete export.",
    wrong='{"tools": []}',
    right='{"tools": [{"name": "get_user", "inputSchema": {"type": "object"}}]}',
    severity=Severity.WARNING,
)
INVALID_ENV_NAME = define(
    "invalid-env-name",
    AREA,
    "The name given with --env is not usable as an identifier after normalization.",
    why="Environment names become identifiers in .forge sources and folder names in build/.",
    wrong="forgec inspect docs/ --env '***'",
    right="forgec inspect docs/ --env shop",
)
