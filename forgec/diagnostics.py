"""Diagnostics as data: every problem forgec finds is a `Diagnostic`, never an exception.

Each stage appends to a list of diagnostics; the CLI renders them ruff-style
(`full`), one line each (`concise`) or as JSON. Codes live in one registry
(`CODES`) so docs/diagnostics.md can be generated from it and stay in sync.
"""

from __future__ import annotations

import json
import re
import stat
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Iterable, NoReturn


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Span:
    """A place in a source file. Lines and columns are 1-based; `end_*` may be 0 when unknown.

    `pointer` is a JSON pointer for places where a format has no positions.
    """

    file: str
    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0
    pointer: str = ""

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.col}"
        if self.pointer:
            return f"{self.file}#{self.pointer}"
        return self.file

    def to_json(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "pointer": self.pointer,
        }


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """A documented diagnostic code: what it means, why, and a wrong/right example."""

    code: str
    area: str
    summary: str
    why: str = ""
    wrong: str = ""
    right: str = ""
    severity: Severity = Severity.ERROR


CODES: dict[str, CodeInfo] = {}


def define(
    code: str,
    area: str,
    summary: str,
    why: str = "",
    wrong: str = "",
    right: str = "",
    severity: Severity = Severity.ERROR,
) -> str:
    """Register a diagnostic code (idempotent) and return it, so modules can write
    `UNKNOWN_TOOL = define("unknown-tool", ...)` and use the constant."""
    info = CodeInfo(code, area, summary, why, wrong, right, severity)
    old = CODES.get(code)
    if old is not None and old.area != area:
        raise ValueError(f"diagnostic code {code!r} is defined by both {old.area!r} and {area!r}")
    CODES[code] = info
    return code


INTERNAL = define(
    "internal-error",
    "driver",
    "forgec hit a bug; the message carries the exception.",
    why="Internal errors are reported as diagnostics so one bad input never hides the others.",
)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: Severity
    code: str
    message: str
    span: Span | None = None
    help: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_error(self) -> bool:
        return self.severity == Severity.ERROR

    def to_json(self) -> dict:
        return {
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "span": self.span.to_json() if self.span else None,
            "help": self.help,
            "notes": list(self.notes),
        }


def error(code: str, message: str, span: Span | None = None, help: str = "") -> Diagnostic:
    return Diagnostic(Severity.ERROR, code, message, span, help)


def warning(code: str, message: str, span: Span | None = None, help: str = "") -> Diagnostic:
    return Diagnostic(Severity.WARNING, code, message, span, help)


def info(code: str, message: str, span: Span | None = None, help: str = "") -> Diagnostic:
    return Diagnostic(Severity.INFO, code, message, span, help)


def has_errors(diags: Iterable[Diagnostic]) -> bool:
    return any(d.is_error for d in diags)


def sort_key(d: Diagnostic):
    s = d.span
    return (s.file if s else "", s.line if s else 0, s.col if s else 0, d.code, d.message)


# --------------------------------------------------------------------------- rendering


# Text that reaches a terminal: C0/C1 controls (ESC sequences move the cursor, set the window title,
# clear the screen), DEL, lone surrogates (unencodable) and bidirectional overrides (text that
# reads differently from what it is) are shown escaped; tabs and newlines stay.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
MAX_EXCERPT = 160  # characters of a source line shown under a diagnostic (a window around the column)


def _escape_char(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def safe_text(text: str) -> str:
    """`text` as it may be printed: control characters and bidi overrides escaped (`\\x1b`, `\\u202e`).

    Every rendered diagnostic goes through this (message, help, notes, file name, source line),
    so a tool name or description from the docs cannot drive the user's terminal.
    """
    return _UNSAFE.sub(_escape_char, text) if _UNSAFE.search(text) else text


def _file_lines(file: str, sources: dict[str, str] | None, cache: dict[str, list[str] | None]) -> list[str] | None:
    """The lines of `file` (from `sources`, else read once per render: `cache` holds them)."""
    if file in cache:
        return cache[file]
    text = None
    if sources is not None and file in sources:
        text = sources[file]
    else:
        try:
            p = Path(file)
            st = p.stat()
            # regular, non-empty files only: a FIFO would block, /proc pseudo-files (size 0) hold secrets
            if stat.S_ISREG(st.st_mode) and 0 < st.st_size < 50_000_000:
                text = p.read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):
            text = None
    lines = text.splitlines() if text is not None else None
    cache[file] = lines
    return lines


def _source_line(span: Span, sources: dict[str, str] | None, cache: dict[str, list[str] | None] | None = None) -> str | None:
    lines = _file_lines(span.file, sources, {} if cache is None else cache)
    if lines is not None and 1 <= span.line <= len(lines):
        return lines[span.line - 1]
    return None


def _excerpt(src: str, col: int, width: int) -> tuple[str, int, int]:
    """A short, escaped window of source line `src` around 1-based `col`: (text, caret offset, caret width)."""
    line = src.replace("\t", " ")
    start, end = 0, len(line)
    if len(line) > MAX_EXCERPT:
        start = max(0, min(col - 1 - MAX_EXCERPT // 3, len(line) - MAX_EXCERPT))
        end = start + MAX_EXCERPT
    head = "..." if start > 0 else ""
    text = head + safe_text(line[start:end]) + ("..." if end < len(line) else "")
    at = len(head) + len(safe_text(line[start:max(start, col - 1)]))
    seg = line[col - 1:col - 1 + width]
    shown = width + len(safe_text(seg)) - len(seg)  # escapes widen what the caret covers
    if end < len(line):
        shown = min(shown, len(text) - at)
    return text, at, max(1, shown)


def render_full(d: Diagnostic, sources: dict[str, str] | None = None, _lines: dict[str, list[str] | None] | None = None) -> str:
    """ruff/rustc style: header, location arrow, source line with a caret, help (all text escaped: `safe_text`)."""
    out = [f"{d.severity.value}[{d.code}]: {safe_text(d.message)}"]
    if d.span is not None:
        out.append(f" --> {safe_text(str(d.span))}")
        if d.span.line:
            src = _source_line(d.span, sources, _lines)
            if src is not None:
                gutter = str(d.span.line)
                pad = " " * len(gutter)
                width = 1
                if d.span.end_line == d.span.line and d.span.end_col > d.span.col:
                    width = d.span.end_col - d.span.col
                text, at, width = _excerpt(src, max(d.span.col, 1), width)
                out.append(f"{pad} |")
                out.append(f"{gutter} | {text}")
                out.append(f"{pad} | {' ' * at}{'^' * width}")
    for n in d.notes:
        out.append(f"  = note: {safe_text(n)}")
    if d.help:
        out.append(f"  = help: {safe_text(d.help)}")
    return "\n".join(out)


def render_concise(d: Diagnostic) -> str:
    loc = str(d.span) if d.span else "<input>"
    return f"{safe_text(loc)}: {d.severity.value}[{d.code}] {safe_text(d.message)}"


def render(diags: Iterable[Diagnostic], fmt: str = "full", sources: dict[str, str] | None = None) -> str:
    diags = sorted(diags, key=sort_key)
    if fmt == "json":
        return json.dumps([d.to_json() for d in diags], indent=2)
    if fmt == "concise":
        return "\n".join(render_concise(d) for d in diags)
    lines: dict[str, list[str] | None] = {}  # each file read (and split) once per render
    return "\n\n".join(render_full(d, sources, lines) for d in diags)


def summary_line(diags: Iterable[Diagnostic]) -> str:
    diags = list(diags)
    e = sum(1 for d in diags if d.severity == Severity.ERROR)
    w = sum(1 for d in diags if d.severity == Severity.WARNING)
    return f"{e} error{'s' if e != 1 else ''}, {w} warning{'s' if w != 1 else ''}"


def codes_markdown() -> str:
    """docs/diagnostics.md, generated from the registry (a test keeps the file in sync)."""
    out = ["# Diagnostic codes", "", "Generated from `forgec.diagnostics.CODES` by `python -m forgec.diagnostics`; do not edit by hand.", ""]
    by_area: dict[str, list[CodeInfo]] = {}
    for c in CODES.values():
        by_area.setdefault(c.area, []).append(c)
    for area in sorted(by_area):
        out += [f"## {area}", ""]
        for c in sorted(by_area[area], key=lambda c: c.code):
            out += [f"### `{c.code}` ({c.severity.value})", "", c.summary, ""]
            if c.why:
                out += [f"**Why:** {c.why}", ""]
            if c.wrong:
                out += ["Wrong:", "", "```", c.wrong.strip("\n"), "```", ""]
            if c.right:
                out += ["Right:", "", "```", c.right.strip("\n"), "```", ""]
    return "\n".join(out).rstrip() + "\n"


def load_all_codes() -> None:
    """Import every module that defines codes, so the registry is complete."""
    import importlib

    for mod in (
        "forgec.frontends.codes",
        "forgec.lang.codes",
        "forgec.synth.codes",
        "forgec.codes",
        "forgec.build",
        "forgec.runtime.codes",
    ):
        importlib.import_module(mod)


# --------------------------------------------------------------------------- the command line's exits

# Exit statuses of every `forgec` command (README.md "Exit codes" lists the same).
EXIT_OK = 0  # clean
EXIT_ERRORS = 1  # the input (docs, .forge files, a build, a config) has errors; diagnostics say where
EXIT_USAGE = 2  # a usage error: unknown option or value, missing argument, options that contradict each other
EXIT_INTERNAL = 2  # a bug in forgec (`internal-error`); the message carries the exception
EXIT_WOULD_REFORMAT = 3  # `fmt --check`: some file would be reformatted
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT); an existing build is left as it was
EXIT_CODES = frozenset({EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERNAL, EXIT_WOULD_REFORMAT, EXIT_INTERRUPTED})


def emit(d: Diagnostic) -> None:
    """Print one diagnostic, rendered in full, on stderr (the single path for a command's own errors)."""
    sys.stderr.write(render_full(d) + "\n")
    sys.stderr.flush()


def fail(code: str, message: str, span: Span | str | None = None, help: str = "",
         notes: Iterable[str] = (), status: int = EXIT_ERRORS) -> NoReturn:
    """Print an error diagnostic with a registered `code` and end the command with `status`.

    Commands call this instead of formatting `error[...]` text by hand, so every
    CLI error has the same shape and a code documented in docs/diagnostics.md.
    """
    if code not in CODES:
        load_all_codes()
    if code not in CODES:  # a bug: every code a command uses is registered
        raise ValueError(f"diagnostic code {code!r} is not registered")
    where = Span(span) if isinstance(span, str) else span
    emit(Diagnostic(Severity.ERROR, code, message, where, help, tuple(notes)))
    import typer

    raise typer.Exit(status)


def usage_error(message: str, help: str = "") -> NoReturn:
    """A usage error the option parser cannot see (values that contradict each other): exit 2."""
    fail("usage", message, help=help, status=EXIT_USAGE)


if __name__ == "__main__":  # pragma: no cover
    # run as __main__, this file is a second module object: the area codes.py files
    # register into `forgec.diagnostics.CODES`, so generate from that module.
    from forgec import diagnostics as _D

    _D.load_all_codes()
    Path("docs/diagnostics.md").write_text(_D.codes_markdown(), encoding="utf-8")
