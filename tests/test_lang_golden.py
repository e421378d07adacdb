"""Golden tests of the .forge toolchain.

* tests/golden/check/*.forge: expected diagnostics are written on the offending line as
  `// E: code` / `// W: code` (several: `// E: a, b; W: c`; `// ^E: code` means the line
  above, for lines that cannot hold a comment, e.g. an unterminated string); the test compares the exact
  set of (line, severity, code). `pytest --update-golden` rewrites those annotations.
* tests/golden/fmt/X_in.forge -> X_out.forge: the formatter's output, which must also be
  a fixed point and parse to the same AST as the input.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from forgec.diagnostics import Severity
from forgec.lang import check, format_text, load, parse
from forgec.lang.check import drop_cascades

GOLDEN = Path(__file__).parent / "golden"
CHECK_FILES = sorted((GOLDEN / "check").glob("*.forge"))
FMT_FILES = sorted((GOLDEN / "fmt").glob("*_in.forge"))

ANNOT = re.compile(r"\s*//\s*\^*([EW]):.*$")
ITEM = re.compile(r"(\^*)([EW]):\s*([\w-]+(?:\s*,\s*[\w-]+)*)")


def expected_diags(text: str) -> set[tuple[int, str, str]]:
    out = set()
    for n, line in enumerate(text.splitlines(), 1):
        m = ANNOT.search(line)
        if not m:
            continue
        for up, sev, codes in ITEM.findall(line[m.start():]):
            for code in codes.split(","):
                out.add((n - len(up), sev, code.strip()))
    return out


def actual_diags(path: Path) -> set[tuple[int, str, str]]:
    mods, diags = load([path])
    diags = drop_cascades(diags + check(mods))  # as `forgec check` reports them
    me = str(path)
    return {
        (d.span.line if d.span else 0, "E" if d.severity == Severity.ERROR else "W", d.code)
        for d in diags
        if d.span is None or d.span.file == me
    }


def rewrite_annotations(text: str, got: set[tuple[int, str, str]]) -> str:
    lines = [ANNOT.sub("", line) for line in text.split("\n")]
    by_line: dict[int, dict[str, list[str]]] = {}
    for n, sev, code in sorted(got):
        host, up = n, ""
        while host <= len(lines) and lines[host - 1].count('"') % 2:  # an open string: annotate below
            host, up = host + 1, up + "^"
        by_line.setdefault(host, {}).setdefault(up + sev, []).append(code)
    for n, ann in by_line.items():
        lines[n - 1] += "  // " + "; ".join(f"{s}: {', '.join(c)}" for s, c in sorted(ann.items()))
    return "\n".join(lines)


@pytest.mark.parametrize("path", CHECK_FILES, ids=[p.stem for p in CHECK_FILES])
def test_check_golden(path: Path, update_golden: bool) -> None:
    text = path.read_text(encoding="utf-8")
    got = actual_diags(path)
    if update_golden:
        path.write_text(rewrite_annotations(text, got), encoding="utf-8")
        return
    want = expected_diags(text)
    assert got == want, f"missing: {sorted(want - got)}\nunexpected: {sorted(got - want)}"


@pytest.mark.parametrize("path", FMT_FILES, ids=[p.stem for p in FMT_FILES])
def test_fmt_golden(path: Path, update_golden: bool) -> None:
    out_path = path.with_name(path.name.replace("_in.forge", "_out.forge"))
    src = path.read_text(encoding="utf-8")
    out, diags = format_text(src, "x.forge")
    assert out is not None, diags
    if update_golden:
        out_path.write_text(out, encoding="utf-8")
        return
    assert out == out_path.read_text(encoding="utf-8")
    again, _ = format_text(out, "x.forge")
    assert again == out, "formatter is not idempotent"
    assert parse(out, "x.forge")[0] == parse(src, "x.forge")[0], "formatting changed the AST"
    assert {c.text for c in parse(out, "x.forge")[0].comments} <= {
        t for c in parse(src, "x.forge")[0].comments for t in (c.text,)
    } | {t for t in _merged(src)}


def _merged(src: str) -> set[str]:
    """Trailing comments that share a printed line are joined with `//`."""
    cs = [c for c in parse(src, "x.forge")[0].comments if c.trailing]
    return {a.text + " //" + b.text for a in cs for b in cs}


def test_every_golden_check_file_has_expectations_or_is_clean() -> None:
    names = {p.name for p in CHECK_FILES}
    assert "retail_ok.forge" in names and len(names) >= 6
    for p in CHECK_FILES:
        if not p.name.endswith("_ok.forge"):
            assert expected_diags(p.read_text()), f"{p.name} has no // E: annotations"


def test_five_independent_errors_are_five_diagnostics() -> None:
    got = actual_diags(GOLDEN / "check" / "five_errors.forge")
    assert len([g for g in got if g[1] == "E"]) == 5
    syn = actual_diags(GOLDEN / "check" / "syntax_errors.forge")
    assert len(syn) == 5


def test_goldens_exercise_every_language_code() -> None:
    from forgec.diagnostics import CODES

    lang = {c.code for c in CODES.values() if c.area == "language"}
    seen = {code for p in CHECK_FILES for _, _, code in expected_diags(p.read_text())}
    assert lang - seen == {"too-deep"}  # too-deep: tests/test_lang.py (needs thousands of levels)
