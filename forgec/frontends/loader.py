"""Load one documentation file (JSON, YAML or JSON Lines) and keep source positions.

Parsing uses the fast C parsers (`json`, libyaml through PyYAML); positions are
computed separately and lazily: for JSON a small tokenizer maps every JSON
pointer to its offset the first time a position is asked for; for YAML the
composed node tree already carries marks. Frontends work on plain Python data
plus JSON pointers and ask `Doc.span(pointer)` when they need line:col.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from forgec.diagnostics import Diagnostic, Span, error

from . import codes

_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

JSONL_SUFFIXES = {".jsonl", ".ndjson"}
YAML_SUFFIXES = {".yaml", ".yml"}
JSON_SUFFIXES = {".json"}
DOC_SUFFIXES = JSON_SUFFIXES | YAML_SUFFIXES | JSONL_SUFFIXES

_MAX_YAML_NODES = 500_000  # alias bombs: stop locating, positions fall back to ancestors


def escape_pointer_token(token: Any) -> str:
    s = str(token)
    if "~" in s or "/" in s:
        return s.replace("~", "~0").replace("/", "~1")
    return s


def unescape_pointer_token(token: str) -> str:
    if "~" in token:
        return token.replace("~1", "/").replace("~0", "~")
    return token


def join_pointer(base: str, *tokens: Any) -> str:
    return base + "".join("/" + escape_pointer_token(t) for t in tokens)


_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
SCAN = json.JSONDecoder().raw_decode  # C scanner: skips one value at a given offset


class JsonLocator:
    """Lazily map JSON pointers to (start, end) offsets in JSON text that `json.loads` accepted.

    Only the containers on a requested pointer's path are scanned, each once: its
    direct children are found by skipping sibling values with the C scanner, so a
    lookup costs a few C-speed passes instead of a Python walk over every token.
    A member's span is its key; an element's span is its first character (or the
    whole scalar).
    """

    def __init__(self, text: str, base: int = 0, end: int | None = None):
        self.text = text
        self.end = len(text) if end is None else end
        root = _WS.match(text, base).end()
        # pointer -> (span start, span end, value start)
        self.spans: dict[str, tuple[int, int, int]] = {"": (root, root + 1, root)}
        self._scanned: set[str] = set()

    def _scan(self, ptr: str, vstart: int) -> None:
        self._scanned.add(ptr)
        text = self.text
        c = text[vstart]
        if c not in "{[":
            return
        i = _WS.match(text, vstart + 1).end()
        if c == "{":
            while i < self.end and text[i] != "}":
                m = _STRING.match(text, i)
                if m is None:
                    return
                raw = m.group()
                key = raw[1:-1] if "\\" not in raw else json.loads(raw)
                j = _WS.match(text, m.end()).end() + 1  # past ':'
                j = _WS.match(text, j).end()
                self.spans[ptr + "/" + escape_pointer_token(key)] = (i, m.end(), j)  # last wins, as in json.loads
                _, k = SCAN(text, j)
                i = _WS.match(text, k).end()
                if i < self.end and text[i] == ",":
                    i = _WS.match(text, i + 1).end()
        else:
            n = 0
            while i < self.end and text[i] != "]":
                _, k = SCAN(text, i)
                self.spans[ptr + "/" + str(n)] = (i, k if text[i] not in "{[" else i + 1, i)
                n += 1
                i = _WS.match(text, k).end()
                if i < self.end and text[i] == ",":
                    i = _WS.match(text, i + 1).end()

    def locate(self, pointer: str) -> tuple[int, int] | None:
        hit = self.spans.get(pointer)
        if hit is not None:
            return hit[0], hit[1]
        parent = pointer[: pointer.rfind("/")] if pointer else None
        if parent is None:
            return None
        if parent not in self._scanned:
            if parent not in self.spans and self.locate(parent) is None:
                return None
            self._scan(parent, self.spans[parent][2])
        hit = self.spans.get(pointer)
        return (hit[0], hit[1]) if hit else None


@dataclass
class Doc:
    """A parsed document: data, the text it came from, and lazily computed positions."""

    file: str
    text: str
    kind: str  # "json" | "yaml" | "jsonl"
    data: Any
    _yaml_node: Any = None
    _line_starts: list[int] | None = None
    _locators: dict[str, JsonLocator] | None = None  # "" (json) or "/<record>" (jsonl) -> locator
    _marks: dict[str, tuple[int, int, int, int]] | None = None  # pointer -> (line, col, end_line, end_col) (yaml)
    _jsonl_lines: list[tuple[int, int]] = field(default_factory=list)  # record index -> (offset, length)

    # ------------------------------------------------------------------ positions
    def _line_col(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        i = bisect.bisect_right(self._line_starts, offset) - 1
        return i + 1, offset - self._line_starts[i] + 1

    def _locate_json(self, pointer: str) -> tuple[int, int] | None:
        if self._locators is None:
            self._locators = {}
        if self.kind == "json":
            loc = self._locators.get("")
            if loc is None:
                loc = self._locators[""] = JsonLocator(self.text)
            return loc.locate(pointer)
        # JSON Lines: "/<i>/rest" lives in record i's line
        if not pointer:
            return (0, 1) if self.text else None
        head, _, rest = pointer[1:].partition("/")
        if not head.isdigit() or int(head) >= len(self._jsonl_lines):
            return None
        loc = self._locators.get(head)
        if loc is None:
            off, length = self._jsonl_lines[int(head)]
            loc = self._locators[head] = JsonLocator(self.text, off, off + length)
        return loc.locate("/" + rest if rest else "")

    def position(self, pointer: str) -> tuple[int, int, int, int] | None:
        """(line, col, end_line, end_col) of the nearest located ancestor of `pointer`, 1-based."""
        if self.kind == "yaml" and self._marks is None:
            self._marks = _yaml_marks(self._yaml_node)
        p = pointer
        while True:
            if self._marks is not None:
                hit = self._marks.get(p)
                if hit is not None:
                    return hit
            else:
                se = self._locate_json(p)
                if se is not None:
                    line, col = self._line_col(se[0])
                    end_line, end_col = self._line_col(se[1])
                    return line, col, end_line, end_col
            if not p:
                return None
            p = p[: p.rfind("/")]

    def span(self, pointer: str) -> Span:
        pos = self.position(pointer)
        if pos is None:
            return Span(self.file, pointer=pointer)
        line, col, end_line, end_col = pos
        return Span(self.file, line, col, end_line, end_col, pointer=pointer)


def _yaml_marks(root: Any) -> dict[str, tuple[int, int, int, int]]:
    """pointer -> (line, col, end_line, end_col) from PyYAML's composed nodes (key marks for mappings)."""
    marks: dict[str, tuple[int, int, int, int]] = {}
    if root is None:
        return marks

    def mk(node: Any) -> tuple[int, int, int, int]:
        s, e = node.start_mark, node.end_mark
        if isinstance(node, yaml.ScalarNode):
            return s.line + 1, s.column + 1, e.line + 1, e.column + 1
        return s.line + 1, s.column + 1, s.line + 1, s.column + 2

    marks[""] = mk(root)
    work: list[tuple[Any, str, int]] = [(root, "", 0)]
    seen = 0
    while work:
        node, ptr, depth = work.pop()
        seen += 1
        if seen > _MAX_YAML_NODES or depth > 200:
            break  # alias bombs / absurd nesting: stop locating, positions fall back to ancestors
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else str(k.value)
                p = ptr + "/" + escape_pointer_token(key)
                if p not in marks:
                    marks[p] = mk(k)
                    work.append((v, p, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                p = ptr + "/" + str(i)
                if p not in marks:
                    marks[p] = mk(v)
                    work.append((v, p, depth + 1))
    return marks


# ---------------------------------------------------------------------- loading


def _decode(file: str, raw: bytes) -> tuple[str | None, list[Diagnostic]]:
    try:
        return raw.decode("utf-8-sig"), []
    except UnicodeDecodeError as e:
        start = e.start
        line = raw.count(b"\n", 0, start) + 1
        col = start - (raw.rfind(b"\n", 0, start) + 1) + 1
        return None, [
            error(
                codes.NOT_UTF8,
                f"file is not UTF-8: byte 0x{raw[start]:02x} at offset {start} cannot be decoded",
                Span(file, line, col, line, col + 1),
                help="re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)",
            )
        ]


def _json_error(file: str, e: json.JSONDecodeError) -> Diagnostic:
    return error(
        codes.MALFORMED_JSON,
        f"malformed JSON: {e.msg}",
        Span(file, e.lineno, e.colno, e.lineno, e.colno + 1),
        help="fix the syntax at the marked position (a trailing comma, a missing quote or bracket is the usual cause)",
    )


def _load_json(file: str, text: str) -> tuple[Doc | None, list[Diagnostic]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":  # several JSON values: maybe JSON Lines
            doc, diags = _load_jsonl(file, text)
            if doc is not None and len(doc.data) > 1:
                return doc, diags
        return None, [_json_error(file, e)]
    return Doc(file, text, "json", data), []


def _load_jsonl(file: str, text: str) -> tuple[Doc | None, list[Diagnostic]]:
    records: list[Any] = []
    lines: list[tuple[int, int]] = []
    offset = 0
    for lineno, line in enumerate(text.splitlines(keepends=True), 1):
        body = line.rstrip("\r\n")
        if body.strip():
            try:
                records.append(json.loads(body))
            except json.JSONDecodeError as e:
                # e.lineno is within this one line; shift to the file's line numbering
                return None, [
                    error(
                        codes.MALFORMED_JSON,
                        f"malformed JSON Lines record: {e.msg}",
                        Span(file, lineno + e.lineno - 1, e.colno, lineno + e.lineno - 1, e.colno + 1),
                        help="every non-empty line of a .jsonl file must be one complete JSON value",
                    )
                ]
            lines.append((offset, len(body)))
        offset += len(line)
    return Doc(file, text, "jsonl", records, _jsonl_lines=lines), []


def _load_yaml(file: str, text: str) -> tuple[Doc | None, list[Diagnostic]]:
    loader = _YamlLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        msg = " ".join(x for x in (e.context, e.problem) if x) or "invalid YAML"
        span = Span(file, mark.line + 1, mark.column + 1, mark.line + 1, mark.column + 2) if mark else Span(file)
        return None, [error(codes.MALFORMED_YAML, f"malformed YAML: {msg}", span, help="fix the YAML syntax at the marked position (indentation and unquoted ':' are the usual causes)")]
    except yaml.reader.ReaderError as e:  # a character YAML forbids (control characters, ...)
        line = text.count("\n", 0, e.position) + 1
        col = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        return None, [error(codes.MALFORMED_YAML, f"malformed YAML: {e.reason} (character {e.character!r})", Span(file, line, col, line, col + 1), help="remove the control character or quote the value")]
    except yaml.YAMLError as e:
        return None, [error(codes.MALFORMED_YAML, f"malformed YAML: {e}", Span(file, 1, 1))]
    finally:
        loader.dispose()
    return Doc(file, text, "yaml", data, _yaml_node=node), []


# A lone surrogate can only enter through an escape (decoded UTF-8 text holds none): JSON \\uD800-\\uDFFF,
# YAML also \\U0000D800. Only documents whose text has one are walked.
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_pointer(v: Any, ptr: str = "") -> str | None:
    """The JSON pointer of the first string (or key) holding a lone surrogate, or None."""
    stack = [(v, ptr)]
    while stack:
        v, ptr = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return ptr
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                p = join_pointer(ptr, k)
                if isinstance(k, str) and _SURROGATE.search(k):
                    return p
                stack.append((x, p))
        elif isinstance(v, list):
            stack.extend((x, join_pointer(ptr, i)) for i, x in reversed(list(enumerate(v))))
    return None


def _check_text(doc: Doc) -> list[Diagnostic]:
    """An error at the first lone surrogate of `doc` (none when its text has no surrogate escape)."""
    if not _SURROGATE_ESCAPE.search(doc.text):
        return []
    ptr = _surrogate_pointer(doc.data)
    if ptr is None:
        return []  # only complete pairs (they decode to one character)
    return [error(codes.LONE_SURROGATE, f"lone surrogate in {ptr or 'the document'}: not valid Unicode text",
                  doc.span(ptr), help="write the character itself, or a complete surrogate pair such as \\ud83d\\ude00")]


def load_text(file: str, text: str, suffix: str = "") -> tuple[Doc | None, list[Diagnostic]]:
    """Parse `text` as JSON, JSON Lines or YAML (by suffix, then by content); a lone surrogate in a string is an error."""
    doc, diags = _load_text(file, text, suffix)
    if doc is not None:
        bad = _check_text(doc)
        if bad:
            return None, diags + bad
    return doc, diags


def _load_text(file: str, text: str, suffix: str = "") -> tuple[Doc | None, list[Diagnostic]]:
    if not text.strip():
        return None, [error(codes.EMPTY_FILE, "file is empty", Span(file, 1, 1), help="remove the file or put tool documentation in it")]
    suffix = suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return _load_jsonl(file, text)
    if suffix in YAML_SUFFIXES:
        return _load_yaml(file, text)
    first = text.lstrip()[:1]
    if first in ("{", "["):
        return _load_json(file, text)
    if suffix in JSON_SUFFIXES:  # a misnamed YAML file (`openapi: 3.0.0` in api.json) is still read
        doc, diags = _load_json(file, text)
        if doc is None:
            ydoc, ydiags = _load_yaml(file, text)
            if ydoc is not None and isinstance(ydoc.data, (dict, list)):
                return ydoc, ydiags
        return doc, diags
    return _load_yaml(file, text)


def load_file(path: str | Path) -> tuple[Doc | None, list[Diagnostic]]:
    """Read and parse one file; every problem comes back as a diagnostic."""
    file = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        return None, [error(codes.UNREADABLE, f"cannot read file: {e.strerror or e}", Span(file))]
    text, diags = _decode(file, raw)
    if text is None:
        return None, diags
    return load_text(file, text, Path(path).suffix)
