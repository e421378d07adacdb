"""Diagnostics render ruff-style and docs/diagnostics.md stays in sync with the code registry."""

from pathlib import Path

from forgec import diagnostics as D

REPO = Path(__file__).resolve().parent.parent


def test_full_rendering_points_at_the_column(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('{\n  "tools": [1, 2,]\n}\n')
    d = D.error("json-syntax", "expected a value", D.Span(str(f), 2, 18, 2, 19), help="remove the trailing comma")
    text = D.render_full(d)
    lines = text.splitlines()
    assert lines[0] == "error[json-syntax]: expected a value"
    assert lines[1] == f" --> {f}:2:18"
    assert lines[3] == '2 |   "tools": [1, 2,]'
    assert lines[4] == "  | " + " " * 17 + "^"
    assert lines[-1] == "  = help: remove the trailing comma"


def test_concise_and_json():
    d = D.warning("unused-node", "node `x` is never used", D.Span("a.forge", 3, 5))
    assert D.render_concise(d) == "a.forge:3:5: warning[unused-node] node `x` is never used"
    js = D.render([d], "json")
    assert '"code": "unused-node"' in js and '"line": 3' in js


def test_docs_diagnostics_md_is_generated_from_registry():
    D.load_all_codes()
    expected = D.codes_markdown()
    actual = (REPO / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert actual == expected, "run `python -m forgec.diagnostics` to regenerate docs/diagnostics.md"
    # every code is documented with a summary
    assert all(c.summary for c in D.CODES.values())


def test_docs_schemas_are_in_sync():
    from forgec.schemas import render, schemas

    for name, sch in schemas().items():
        assert (REPO / "docs" / "schema" / name).read_text(encoding="utf-8") == render(sch), f"run `python -m forgec.schemas` ({name})"
