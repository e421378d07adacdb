"""Verification flags deliberately broken tools (and only those), from the library and the CLI;
the example docs synthesize into envs whose tools verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgec.codegen import emit_env, load_env_module
from forgec.codegen.verify import render_table, verify_env
from forgec.lang import ast as A

STR, INT = A.PrimType("str"), A.PrimType("int")
Note = A.NamedType("Note")
N, L = A.Name, A.Literal


def at(o, f):
    return A.Attr(N(o) if isinstance(o, str) else o, f)


def tool(name, params, returns, body, ann, python=None):
    return A.ToolDecl(name, tuple(params), returns, "", tuple(body) if body is not None else None, python, (ann,) if ann else ())


P_NOTE = A.ParamDecl("note_id", Note)
BROKEN = A.EnvDecl(
    "notes",
    None,
    (),
    (
        A.EntityDecl(
            "Note",
            "note_id",
            (A.FieldDecl("note_id", STR), A.FieldDecl("text", STR), A.FieldDecl("status", A.EnumType(("open", "done"))), A.FieldDecl("due", A.OptionalType(STR))),
        ),
    ),
    (
        tool("get_note", [P_NOTE], Note, [A.Return(N("note_id"))], "read"),
        tool("close_note", [P_NOTE], Note, [A.Require(A.Binary("==", at("note_id", "status"), L("open")), "already done"), A.Set(at("note_id", "status"), L("done")), A.Return(N("note_id"))], "update"),
        tool("add_note", [A.ParamDecl("text", STR)], Note, [A.Insert("Note", (A.FieldInit("text", N("text")), A.FieldInit("status", L("open"))), bind="n"), A.Return(N("n"))], "create"),
        # broken: a read that writes
        tool("peek_note", [P_NOTE], Note, [A.Set(at("note_id", "text"), L("seen")), A.Return(N("note_id"))], "read"),
        # broken: crashes (null - 1) whenever `due` is null
        tool("days_left", [P_NOTE], INT, [A.Return(A.Binary("-", at("note_id", "due"), L(1)))], "read"),
        # broken: an update whose precondition never holds
        tool("archive_note", [P_NOTE], Note, [A.Require(A.Binary("==", at("note_id", "status"), L("archived")), "not archivable"), A.Set(at("note_id", "status"), L("done")), A.Return(N("note_id"))], "update"),
        # broken: an update that never writes
        tool("touch_note", [P_NOTE], Note, [A.Return(N("note_id"))], "update"),
        # broken: python tools that are nondeterministic / return non-JSON
        tool("stamp", [], A.PrimType("any"), None, "read", "import datetime\nreturn datetime.datetime.now().isoformat()"),
        tool("tags", [], A.PrimType("any"), None, "read", "return {1, 2}"),
        tool("count_notes", [], INT, None, "read", "return len(state['entities']['Note'])"),
        # broken: assumes at least one note exists
        tool("longest_note", [], STR, None, "read", "return max(n['text'] for n in state['entities']['Note'].values())"),
    ),
)

EXPECTED_FAILURES = {
    "peek_note": "read tool changed the state",
    "days_left": "internal error in days_left: TypeError",
    "archive_note": "no successful call",
    "touch_note": "never changed the state",
    "stamp": "not deterministic",
    "tags": "non-JSON",
    "longest_note": "call on an empty state",
}


@pytest.fixture(scope="module")
def broken_module(tmp_path_factory):
    p = tmp_path_factory.mktemp("broken") / "env.py"
    p.write_text(emit_env(BROKEN, "notes.forge"))
    return load_env_module(p)


@pytest.fixture(scope="module")
def report(broken_module):
    return verify_env(broken_module, BROKEN, seed=1, calls_per_tool=10)


def test_broken_tools_are_flagged_with_reasons(report):
    got = {t.tool: t for t in report.tools}
    for name, fragment in EXPECTED_FAILURES.items():
        assert not got[name].verified, name
        assert fragment in got[name].reason, (name, got[name].reason)
    for name in ("get_note", "close_note", "add_note", "count_notes"):
        assert got[name].verified, (name, got[name].reason)
        assert got[name].calls >= 10
    assert not report.ok


def test_report_json_and_table(report):
    js = report.to_json()
    json.dumps(js)
    row = next(t for t in js["tools"] if t["tool"] == "close_note")
    assert {"tool", "kind", "writes_state", "verified", "reason", "calls", "errors"} <= set(row)
    assert row["kind"] == "update" and row["writes_state"] is True and row["verified"] is True
    assert js["summary"]["by_kind"]["update"] == {"tools": 3, "verified": 1}
    table = render_table([report])
    assert "peek_note" in table and "NO" in table and "total" in table


def test_verify_is_deterministic(broken_module):
    a = verify_env(broken_module, BROKEN, seed=3, calls_per_tool=5).to_json()
    b = verify_env(broken_module, BROKEN, seed=3, calls_per_tool=5).to_json()
    stamp = lambda js: [t for t in js["tools"] if t["tool"] != "stamp"]  # noqa: E731 - the clock tool differs by design
    assert stamp(a) == stamp(b)


def test_internal_error_reason_points_at_forge(report):
    t = next(t for t in report.tools if t.tool == "days_left")
    assert t.where.startswith("notes.forge")


def test_cli_verify(tmp_path, broken_module):
    from forgec.cli import app

    good = A.EnvDecl("good", None, (), BROKEN.entities, BROKEN.tools[:3])
    for env in (good, BROKEN):
        d = tmp_path / "envs" / env.name
        d.mkdir(parents=True)
        (d / "env.py").write_text(emit_env(env, f"src/{env.name}/env.forge"))
    runner = CliRunner()
    r = runner.invoke(app, ["verify", str(tmp_path), "--env", "good", "--calls", "5"])
    assert r.exit_code == 0, r.output
    assert "close_note" in r.output and "total" in r.output
    r = runner.invoke(app, ["verify", str(tmp_path), "--calls", "5", "--format", "json"])
    assert r.exit_code == 1
    data = json.loads(r.output)
    assert [x["env"] for x in data] == ["good", "notes"]
    r = runner.invoke(app, ["verify", str(tmp_path / "nope")])
    assert r.exit_code == 1 and "missing-build" in r.output


def _verify_docs(path, calls):
    """Synthesize (rules) -> format -> parse -> codegen -> verify every env read from `path`."""
    import tempfile

    from forgec import lang
    from forgec.frontends import read_paths
    from forgec.synth import synthesize

    reports = []
    envs, _ = read_paths([path])
    for ir_env in envs:
        decl, _ = synthesize(ir_env)
        text = lang.format(A.Module(file="env.forge", items=(decl,)))
        mod, diags = lang.parse(text, f"src/{ir_env.name}/env.forge")
        assert not [d for d in diags if d.is_error]
        with tempfile.TemporaryDirectory() as td:
            p = Path(td) / "env.py"
            p.write_text(emit_env(mod.envs[0], f"src/{ir_env.name}/env.forge"))
            reports.append(verify_env(load_env_module(p), mod.envs[0], seed=0, calls_per_tool=calls))
    return reports


@pytest.mark.parametrize("name", ["tau_bench_retail", "tau_bench_airline", "mcp_server_git", "mcp_server_sqlite", "mcp_server_time", "openapi_jupyter_server"])
def test_corpus_docs_verify(corpus, name):
    """The issue's bar on the real public docs: >= 95% of synthesized tools verify (12 calls a tool: with 5, a tool that
    needs a modified file to stage, `git_add`, passed or failed with the draw of the world)."""
    reports = _verify_docs(corpus / name, 12)
    tools = [t for r in reports for t in r.tools]
    assert tools
    assert sum(t.verified for t in tools) / len(tools) >= 0.95, render_table(reports)


def test_example_docs_verify(examples):
    """The issue's bar: >= 95% of synthesized tools pass verification (rules backend)."""
    from forgec import lang
    from forgec.frontends import read_paths
    from forgec.synth import synthesize

    envs, _ = read_paths([examples])
    total = verified = 0
    for ir_env in envs:
        decl, _ = synthesize(ir_env)
        text = lang.format(A.Module(file="env.forge", items=(decl,)))
        mod, diags = lang.parse(text, f"src/{ir_env.name}/env.forge")
        assert not [d for d in diags if d.is_error]
        import tempfile

        with tempfile.TemporaryDirectory() as td:
            p = Path(td) / "env.py"
            p.write_text(emit_env(mod.envs[0], f"src/{ir_env.name}/env.forge"))
            rep = verify_env(load_env_module(p), mod.envs[0], seed=0, calls_per_tool=10)
        total += len(rep.tools)
        verified += sum(t.verified for t in rep.tools)
    assert total >= 30
    assert verified / total >= 0.95, render_table([rep])


def test_generated_calls_make_multi_field_searches_hit(tmp_path):
    """Arguments drawn together from one record make `origin and destination and date` searches
    return something most of the time (independent draws almost never would)."""
    from forgec.codegen.verify import _Values, gen_args
    from forgec.stdlib.values import generate_state
    import random

    S = A.PrimType("str")
    flight = A.EntityDecl("Flight", "flight_number", tuple(A.FieldDecl(n, S) for n in ("flight_number", "origin", "destination", "date")))
    cond = A.Binary(
        "and",
        A.Binary("and", A.Binary("==", at("it", "origin"), N("origin")), A.Binary("==", at("it", "destination"), N("destination"))),
        A.Binary("==", at("it", "date"), N("date")),
    )
    search = tool("search_direct_flight", [A.ParamDecl(n, S) for n in ("origin", "destination", "date")], A.ListType(A.NamedType("Flight")), [A.Return(A.Where(N("Flight"), cond))], "search")
    env = A.EnvDecl("air", None, (), (flight,), (search,))
    p = tmp_path / "env.py"
    p.write_text(emit_env(env, "air.forge"))
    m = load_env_module(p)
    st = generate_state(m.SCHEMA, seed=0, size=30)
    e = m.Env(st)
    vals, rng = _Values(e.state, m.SCHEMA), random.Random(0)
    hits = sum(bool(e.step("search_direct_flight", gen_args(m.TOOL_PARAMS["search_direct_flight"], rng, vals, m.SCHEMA))) for _ in range(100))
    assert hits >= 50
    dates = {f["date"] for f in st["entities"]["Flight"].values()}
    assert len(dates) <= 5  # event days are shared across records
    rep = verify_env(m, env, seed=0, calls_per_tool=20).tools[0]
    assert rep.verified and rep.nonempty_results >= 10


def test_keys_meet_the_documented_requires(broken_module):
    """A tool that only acts on an open note is tried on open notes when the state has some:
    with 3 open notes among 40, random keys would fail ~92% of calls; every call succeeds
    (each closes one, so 3 calls use them up)."""
    from forgec.codegen.verify import tool_requires, verify_tool

    assert tool_requires(BROKEN, "close_note") == {"note_id": [("status", "==", "open")]}
    assert tool_requires(BROKEN, "get_note") == {}
    notes = {f"n{i:02d}": {"note_id": f"n{i:02d}", "text": f"t{i}", "status": "done", "due": None} for i in range(40)}
    for k in ("n05", "n17", "n30"):
        notes[k]["status"] = "open"
    rep = verify_tool(broken_module, "close_note", {"entities": {"Note": notes}, "globals": {}}, seed=3, calls=3, env_decl=BROKEN)
    assert rep.verified and rep.errors == 0 and rep.successes == 3 and rep.changed_state == 3
    # a requirement no record meets keeps the drawn key (the call fails as documented)
    rep = verify_tool(broken_module, "archive_note", {"entities": {"Note": notes}, "globals": {}}, seed=3, calls=4, env_decl=BROKEN)
    assert not rep.verified and "no successful call" in rep.reason


def test_numbers_meet_documented_bounds():
    """`require amount > 0` and `require amount <= 10` (docs: "between 1 and 10") draw inside."""
    import random

    from forgec.codegen.verify import _within

    rng = random.Random(0)
    b = [("", ">", 0), ("", "<=", 10)]
    for v in (-5, 0, 11, 1_000_000, 3):
        w = _within(v, b, True, rng)
        assert type(w) is int and 1 <= w <= 10
    assert _within(3, b, True, rng) == 3  # already inside: kept
    w = _within(-2.5, [("", ">=", 0.5), ("", "<", 2)], False, rng)
    assert 0.5 <= w <= 1.99
    assert _within(7, [("", ">", 5), ("", "<", 5)], True, rng) == 7  # nothing meets both: kept
