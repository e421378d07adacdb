"""Diagnostic codes of the runtime (loading builds); documented in docs/diagnostics.md."""

from forgec.diagnostics import Severity, define

MISSING_BUILD = define(
    "missing-build", "runtime", "The build folder does not exist or has no manifest.json.",
    why="The runtime only reads what `forgec compile` wrote.",
    wrong="forgec eval does/not/exist --agent oracle", right="forgec compile docs/ -o build/ && forgec eval build/ --agent oracle",
)
CORRUPT_BUILD = define(
    "corrupt-build", "runtime", "A build file is unreadable or inconsistent (bad JSON, a task for a missing env, duplicate task ids), "
    "or a generated file (env module, state, tasks) differs from the SHA-256 in manifest.json, is missing, or is not in it.",
    why="Training on a half-written or hand-damaged build would give wrong rewards silently. `eval`, `play`, `train` and "
    "`sft` verify every generated file they use before running anything from the build; `--allow-modified-build` "
    "uses the files as they are.",
    wrong='{"id": "airline/x", ... (truncated line in tasks/airline.jsonl)', right="recompile: forgec compile docs/ -o build/",
)
VERSION_MISMATCH = define(
    "build-version-mismatch", "runtime", "The build was written by another forgec version or manifest/task schema version.",
    why="Generated modules and task files are versioned artifacts; mixing versions can change rewards.",
    wrong='"forgec_version": "0.0.9" in build/manifest.json', right="recompile the build with the installed forgec",
)
UNKNOWN_ENV = define(
    "unknown-env", "runtime", "An environment name that the build does not contain.",
    wrong="forgec eval build/ --tasks airlines/x", right="forgec eval build/ --tasks airline/x",
)
UNKNOWN_TASK = define(
    "unknown-task", "runtime", "A task id that the build does not contain.",
    wrong="forgec play build/ --task airline/nope", right="forgec play build/ --task airline/book_reservation_after_search_flights_1",
)
EMPTY_BUILD = define(
    "empty-build", "runtime", "The build has no tasks, so there is nothing to play, evaluate or train on.",
    why="Every blueprint of every env was rejected (or the docs gave no sampleable tools); `forgec stats BUILD` and the "
    "compile report say why.",
    wrong="forgec play build-without-tasks/", right="forgec compile docs/ -o build/ --tasks 20 && forgec play build/",
)
SANDBOX_UNAVAILABLE = define(
    "sandbox-unavailable", "runtime", "Python tool bodies were not run (not even to verify them) because the OS sandbox "
    "(bubblewrap) is missing or cannot create namespaces here; those tools are dropped from the build.",
    why="A python body is untrusted code (an LLM or a shared build wrote it); it runs only inside the sandbox "
    "(docs/security.md). FORGEC_UNSAFE_NO_SANDBOX=1 runs it unisolated, for code you trust.",
    wrong="forgec compile docs/ -o build/   # on a machine without /usr/bin/bwrap",
    right="apt-get install bubblewrap && forgec compile docs/ -o build/",
    severity=Severity.WARNING,
)
