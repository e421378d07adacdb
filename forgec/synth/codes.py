"""Diagnostic codes of the synthesis stage (area `synth`)."""

from forgec.diagnostics import Severity, define

CONSERVATIVE = define(
    "synth-conservative",
    "synth",
    "No synthesis rule applies to a tool; it got a conservative effect that logs the call in `ActionLog`.",
    why="A clearly labelled placeholder keeps the environment runnable and verifiable; silently dropping the tool would hide it.",
    wrong='@action\ntool transfer_to_human_agents(summary: str) -> any {\n}',
    right='@action @conservative\ntool transfer_to_human_agents(summary: str) -> ActionLog {\n  let logged = insert ActionLog {log_id: fresh_id(ActionLog), tool: "transfer_to_human_agents", args: "summary=" + str(summary)}\n  return logged\n}',
    severity=Severity.WARNING,
)
RENAMED = define(
    "synth-renamed",
    "synth",
    "A documented name is not a valid .forge identifier (or is a keyword) and was renamed.",
    why="Every synthesized name must parse; the rename is deterministic (`kernel.js` -> `kernel_js`, `from` -> `from_`).",
    wrong="tool f(from: str) -> any { return from }",
    right="tool f(from_: str) -> any { return from_ }",
    severity=Severity.WARNING,
)
DUPLICATE_TOOL = define(
    "synth-duplicate-tool",
    "synth",
    "Two documented tools map to the same identifier; the later one was renamed with a numeric suffix.",
    why="Tool names must be unique within an environment.",
    wrong="tool get_a_b(...)  // from `get_a.b`\ntool get_a_b(...)  // from `get_a_b`",
    right="tool get_a_b(...)\ntool get_a_b_2(...)",
    severity=Severity.WARNING,
)
NO_TOOLS = define(
    "synth-no-tools",
    "synth",
    "The environment documents no tools; nothing to synthesize.",
    why="An environment needs at least one tool to produce tasks.",
    wrong='{"tools": []}',
    right='{"tools": [{"name": "get_order", "inputSchema": {...}}]}',
    severity=Severity.WARNING,
)
LLM_FALLBACK = define(
    "synth-llm-fallback",
    "synth",
    "The LLM backend did not produce a valid environment within the repair budget; the rules backend was used instead.",
    why="A build must not fail because a model was wrong; the rules backend is deterministic and always checks.",
    wrong="forgec compile docs/ --synth llm   # model keeps returning unparseable .forge",
    right="forgec compile docs/ --synth llm --llm-model <stronger model>   # or edit build/src/<env>/env.forge",
    severity=Severity.WARNING,
)
LLM_REPAIR = define(
    "synth-llm-repair",
    "synth",
    "An LLM proposal had errors; they were fed back to the model for a repair round.",
    why="AutoForge/EnvFactory validate-revise: diagnostics from parse/check/verify are the repair prompt.",
    wrong="env x { entity A key id { id: str } tool f(a: B) -> A { return a } }   // unknown entity B",
    right="env x { entity A key id { id: str } tool f(a: A) -> A { return a } }",
    severity=Severity.INFO,
)
LLM_ERROR = define(
    "synth-llm-error",
    "synth",
    "The LLM endpoint failed (network error, timeout or HTTP error after retries).",
    why="Requests are retried with backoff; when they still fail the rules backend is used for the environment.",
    wrong="--llm-base-url http://127.0.0.1:9/v1   # nothing listening",
    right="--llm-base-url http://127.0.0.1:8000/v1",
    severity=Severity.WARNING,
)
UNKNOWN_BACKEND = define(
    "synth-unknown-backend",
    "synth",
    "The synthesis backend is not one of `rules` or `llm`.",
    why="Only two backends exist.",
    wrong="--synth gpt",
    right="--synth llm --llm-model gpt-4o-mini",
)
