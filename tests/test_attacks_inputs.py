"""Hostile inputs at every boundary (issue 14, items 3, 5 and 8): text UTF-8 cannot encode, numbers JSON
cannot carry, absurd nesting, and imports that try to read files outside the build.

Each test states the promise it checks (docs/security.md, "Strings and confined reading"):
* a bad tool argument is an `invalid-arguments` error (never `internal`), the state is unchanged and
  its hash still computes;
* an episode whose agent sends such a call goes on, and `forgec eval` writes episodes.jsonl and
  run_results.json;
* the parser reports out-of-range literals and lone surrogates as diagnostics with spans, and a
  10 MB string literal parses in linear time;
* imports resolve only inside the build (or the folders given on the command line); no symlink
  leads outside; no diagnostic prints a byte of a file outside.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgec.cli import app
from forgec.runtime import load
from forgec.runtime.agents import OracleAgent
from forgec.runtime.episode import END_USER_STOP, run_episode
from forgec.runtime.toolcalls import execute, parse_hermes, parse_openai_tool_calls
from forgec.runtime.types import AgentReply, ToolCall
from forgec.runtime.users import ScriptedUser

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MAX_NUMBER = 9007199254740991  # 2**53 - 1, written out: the largest integer every JSON reader holds exactly


def deep_list(n: int):
    v: object = 1
    for _ in range(n):
        v = [v]
    return v


def deep_dict(n: int):
    v: object = 1
    for _ in range(n):
        v = {"a": v}
    return v


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory) -> Path:
    from forgec.build import CompileOptions, compile_build

    out = tmp_path_factory.mktemp("attacks") / "build"
    res = compile_build(CompileOptions(inputs=[EXAMPLES / "bookstore.yaml"], out=out, tasks_per_env=12, seed=3))
    assert not [d for d in res.diagnostics if d.is_error], res.diagnostics
    return out


@pytest.fixture(scope="module")
def build(build_dir):
    return load(build_dir)


@pytest.fixture()
def env_and_ids(build):
    task = build.tasks[0]
    env = build.new_env(task.env, task)
    ents = env.state["entities"]
    return env, next(iter(ents["Book"])), next(iter(ents["User"]))


# --------------------------------------------------------------------------- tool arguments through Env.step

BAD_VALUES = {
    "lone surrogate": "\udfff",
    "surrogate inside text": "ok\ud800x",
    "surrogate in a list": ["\udfff"],
    "surrogate as a field name": {"\udfff": 1},
    "depth 10,000 list": deep_list(10_000),
    "depth 10,000 object": deep_dict(10_000),
    "10**100": 10**100,
    "-10**100": -(10**100),
    "10**400 (no float holds it)": 10**400,
    "1e308": 1e308,
    "-1.7e308": -1.7e308,
    "2**53": 2**53,
    "NaN": float("nan"),
    "Infinity": float("inf"),
    "-Infinity": float("-inf"),
}


def _positions(args: dict, path=()):
    for k, v in args.items():
        yield path + (k,)
        if isinstance(v, dict):
            yield from _positions(v, path + (k,))


def _put(args: dict, path: tuple, value):
    a = json.loads(json.dumps(args))
    cur = a
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return a


def test_every_bad_value_at_every_argument_position_is_an_argument_error(build):
    """Each bad value in place of each argument of each gold call: a clean error, never `internal`,
    the state unchanged and hashable; nothing ever succeeds with a value the state cannot hold."""
    checked = 0
    for task in build.tasks:
        for gc in task.gold_calls:
            for path in _positions(gc.arguments):
                for label, bad in BAD_VALUES.items():
                    env = build.new_env(task.env, task)
                    before = env.state_hash()
                    r = env.step(gc.tool, _put(gc.arguments, path, bad))
                    checked += 1
                    assert isinstance(r, Exception), (gc.tool, path, label, r)  # no bad value is accepted
                    assert r.code in ("invalid-arguments", "not-found"), (gc.tool, path, label, r)
                    assert not r.internal
                    assert env.state_hash() == before
                    r.message.encode("utf-8")  # the error text itself is UTF-8 (surrogates shown escaped)
    assert checked > 300


def test_argument_errors_say_what_is_wrong(env_and_ids):
    env, book, user = env_and_ids
    review = {"user_id": user, "stars": 5, "text": "\udfff"}
    r = env.step("create_review", {"book_id": book, "body": review})
    assert r.code == "invalid-arguments" and "argument 'body'.text is not valid Unicode text" in r.message and "\\udfff" in r.message
    r = env.step("get_book", {"book_id": "bk\udfff"})  # an entity key: the text is checked before the lookup
    assert r.code == "invalid-arguments" and "lone surrogate \\udfff at character 2" in r.message
    r = env.step("search_books", {"author": "\ud800"})  # a read: rejected too, not answered
    assert r.code == "invalid-arguments"
    r = env.step("add_store_credit", {"user_id": user, "body": {"amount": 10**100}})
    assert r.code == "invalid-arguments" and f"between -{MAX_NUMBER} and {MAX_NUMBER}" in r.message
    r = env.step("add_store_credit", {"user_id": user, "body": {"amount": 1e308}})
    assert r.code == "invalid-arguments" and "out of range" in r.message
    for v, shown in ((float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity")):
        r = env.step("search_books", {"max_price": v})
        assert r.message == f"argument 'max_price' must be a finite number, got {shown}"  # not "must be a number, got number"
    r = env.step("search_books", {"genre": deep_list(10_000)})
    assert r.code == "invalid-arguments" and not r.internal and "must be one of" in r.message


def test_numbers_at_the_bound_are_accepted(env_and_ids):
    env, book, user = env_and_ids
    r = env.step("update_book", {"book_id": book, "body": {"stock": MAX_NUMBER}})
    assert not isinstance(r, Exception) and r["stock"] == MAX_NUMBER
    r = env.step("update_book", {"book_id": book, "body": {"stock": MAX_NUMBER + 1}})
    assert r.code == "invalid-arguments"
    r = env.step("update_book", {"book_id": book, "body": {"price": -float(MAX_NUMBER)}})
    assert not isinstance(r, Exception)
    env.state_hash()
    r = env.step("create_review", {"book_id": book, "body": {"user_id": user, "stars": 5, "text": "naïve 😀 ok"}})
    assert not isinstance(r, Exception) or r.code == "precondition"  # real non-ASCII text is fine
    env.state_hash()


# --------------------------------------------------------------------------- the agent's wire formats


def test_surrogate_escapes_in_agent_output_become_an_error_observation(build):
    task = build.tasks[0]
    env = build.new_env(task.env, task)
    names = frozenset(t["function"]["name"] for t in build.envs[task.env].TOOLS)
    raw = '{"author": "\\udfff"}'  # the JSON text a model wrote: a legal escape, not valid Unicode
    for call in (parse_openai_tool_calls([{"id": "c1", "function": {"name": "search_books", "arguments": raw}}])[0],
                 parse_hermes('<tool_call>{"name": "search_books", "arguments": ' + raw + "}</tool_call>").tool_calls[0]):
        out = execute(env, call, names)
        assert not out.ok and out.kind == "bad-arguments"
        assert "not valid Unicode text" in out.content and "in author" in out.content
        out.content.encode("utf-8")
    out = execute(env, ToolCall("c", "search_books", {"\udfff": 1}), names)
    assert out.kind == "bad-arguments" and "a field name" in out.content


class SurrogateAgent:
    """Sends hostile calls and text first (a lone surrogate in arguments, a field name and its own text; a
    depth-10,000 value), then plays the oracle: the episode must go on and still succeed."""

    def __init__(self, task):
        self.oracle = OracleAgent(task)
        self.turn = 0

    def act_sync(self, messages, tools):
        self.turn += 1
        if self.turn == 1:
            return AgentReply(content="let me look \udfff", reasoning="think \ud800", tool_calls=[
                ToolCall("bad1", "search_books", {"author": "\udfff"}),
                ToolCall("bad2", "search_books", {"\ud800": "x"}),
                ToolCall("bad3", "search_books", {"genre": deep_dict(10_000)}),
                ToolCall("bad4\udfff", "search\udfff", {})])
        return self.oracle.act_sync([m for m in messages if not str(m.get("tool_call_id", "")).startswith("bad")
                                     and "let me look" not in str(m.get("content"))], tools)

    async def act(self, messages, tools):
        return self.act_sync(messages, tools)


def test_episode_with_surrogate_calls_goes_on_and_is_recordable(build):
    task = next(t for t in build.tasks if t.gold_calls)
    ep = run_episode(build, task, SurrogateAgent(task), ScriptedUser(task))
    assert ep.end_reason == END_USER_STOP and ep.error is None
    bad = [e for e in ep.tool_events if e.call_id.startswith("bad")]
    assert [e.kind for e in bad] == ["bad-arguments", "bad-arguments", "bad-arguments", "unknown-tool"]
    assert "not valid Unicode text" in bad[0].error
    assert ep.reward == 1.0  # the oracle's calls after the hostile ones reached gold
    text = ep.dumps()
    text.encode("utf-8")  # the record is UTF-8 (surrogates became U+FFFD), so episodes.jsonl can hold it
    back = json.loads(text)
    assert back["messages"][2]["content"] == "let me look \ufffd" and back["replies"][0]["reasoning"] == "think \ufffd"
    for m in ep.messages:  # what a model would see again holds no unencodable text
        json.dumps(m, ensure_ascii=False).encode("utf-8")


def test_cli_eval_with_an_agent_that_sends_surrogates_writes_results(build_dir, tmp_path):
    """`forgec eval --agent openai` against a model that answers with "\\udfff" escapes (in arguments and
    in its text): exit 0, one episode per task, run_results.json written."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from fakeserver import FakeServer

    def respond(body):
        if not any(m["role"] == "tool" for m in body["messages"]):
            return {"content": "checking \udfff", "tool_calls": [
                {"name": "search_books", "arguments": '{"author": "\\udfff"}'},
                {"name": "get_book", "arguments": {"book_id": "\ud800"}},
                {"name": "search_books", "arguments": {"max_price": 1e308 * 10}}]}  # json.dumps writes Infinity
        return {"content": "done \ud800"}

    out = tmp_path / "run"
    with FakeServer(respond) as srv:
        r = CliRunner().invoke(app, ["eval", str(build_dir), "--agent", "openai", "--agent-base-url", srv.url, "--agent-model", "m",
                                     "-k", "1", "--max-turns", "3", "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    n = len(load(build_dir).tasks)
    lines = (out / "episodes.jsonl").read_bytes().decode("utf-8").splitlines()
    assert len(lines) == n
    data = json.loads((out / "run_results.json").read_text(encoding="utf-8"))
    assert data["summary"]["episodes"] == n and data["summary"]["errors"] == 0
    eps = [json.loads(x) for x in lines]
    kinds = [e["kind"] for ep in eps for e in ep["tool_events"]]
    assert kinds.count("bad-arguments") >= 2 * n
    assert all("not valid Unicode text" in json.dumps(ep["messages"]) for ep in eps)


# --------------------------------------------------------------------------- docs and blueprint literals


def test_lone_surrogate_in_docs_is_a_diagnostic_at_its_position(tmp_path):
    from forgec.frontends.loader import load_file

    doc = tmp_path / "tools.json"
    doc.write_text('[{"type": "function", "function": {"name": "get_x", "description": "ok",\n'
                   '  "parameters": {"type": "object", "properties": {"x": {"type": "string", "description": "bad \\udfff"}}}}}]\n')
    d, diags = load_file(doc)
    assert d is None and [x.code for x in diags] == ["lone-surrogate"]
    assert diags[0].span.line == 2 and "/0/function/parameters/properties/x/description" in diags[0].message
    pair = tmp_path / "pair.json"  # a complete pair is one character: fine
    pair.write_text('[{"type": "function", "function": {"name": "get_x", "description": "money \\ud83d\\udcb5"}}]')
    d, diags = load_file(pair)
    assert d is not None and diags == [] and d.data[0]["function"]["description"] == "money \U0001f4b5"
    r = CliRunner().invoke(app, ["compile", str(doc), "-o", str(tmp_path / "b"), "-q"])
    assert r.exit_code == 1 and "lone-surrogate" in r.output and "Traceback" not in r.output


def test_parser_literals_out_of_range_and_surrogates_are_diagnostics():
    from forgec.lang import check, parse

    env = ('env e {\n  entity A key a_id { a_id: str  n: int }\n  @read tool t(a: A) -> int {\n    return ' + "9" * 5000 +
           '\n  }\n  @read tool u(a: A, k: enum(1, -' + "7" * 5000 + ')) -> int { return 1 }\n}\n')
    m, d = parse(env, "e.forge")
    assert [(x.code, x.span.line) for x in d] == [("literal-out-of-range", 4), ("literal-out-of-range", 6)]
    assert all(len(x.message) < 200 for x in d)  # the 5,000 digits are not repeated
    m, d = parse('blueprint b for e { user { goal "a \\udfff b" } }', "b.forge")
    assert [(x.code, x.span.line, x.span.col) for x in d] == [("invalid-string", 1, 33)]
    assert m.blueprints[0].user.goal == "a \ufffd b"  # the AST never holds the surrogate
    m, d = parse('blueprint b for e {\n  user { goal "x\udfff" }\n}', "raw.forge")  # a raw surrogate (an API caller's str)
    assert d[0].code == "unexpected-character" and (d[0].span.line, d[0].span.col) == (2, 17)
    m, d = parse("env e {\n  entity A key a_id { a_id: str  n: int = 9007199254740991 }\n}", "ok.forge")
    assert d == [] and check([m]) == []


def test_ten_megabyte_goal_parses_and_checks_in_linear_time(build_dir):
    """The string terminal was an alternation per character (13 s for 10 MB in Python's re); now < 3 s."""
    from forgec.lang import check, parse

    bp = sorted((build_dir / "blueprints" / "bookstore").glob("*.forge"))[0]
    text = bp.read_text()
    start = text.index('goal "') + len('goal "')
    big = text[:start] + "x" * 10_000_000 + text[text.index('"\n', start):]  # the goal may hold escaped quotes
    env_file = build_dir / "src" / "bookstore" / "env.forge"
    em, _ = parse(env_file.read_text(), str(env_file))
    t = time.perf_counter()
    m, d = parse(big, str(bp))
    cd = check([em, m])
    took = time.perf_counter() - t
    assert d == [] and cd == [] and len(m.blueprints[0].user.goal) == 10_000_000
    assert took < 3.0, took


# --------------------------------------------------------------------------- confined reading

SECRET = "H5-SECRET-7f3a9c1d"


@pytest.fixture()
def hostile(tmp_path):
    """A folder `proj/` whose blueprint tries every route to a file outside it; the file holds SECRET on a line
    that, parsed as .forge, would be a syntax error shown with its source line."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    secret = outside / "secret.forge"
    secret.write_text(f"{SECRET} = not a forge file\n")
    proj = tmp_path / "proj"
    bp = proj / "bp"
    bp.mkdir(parents=True)
    (bp / "link.forge").symlink_to(secret)  # a symlink to a file outside
    (bp / "dirlink").symlink_to(outside, target_is_directory=True)  # a symlink to a folder outside
    routes = [str(secret), "../../elsewhere/secret.forge", "link.forge", "dirlink/secret.forge", "/proc/self/environ",
              "../../../../../../../../../../proc/self/environ", "/etc/passwd", "~/secret.forge", "x/" * 3000 + "y.forge",
              "nul\\u0000.forge"]  # (a NUL once crashed the resolver)
    (bp / "evil.forge").write_text("".join(f'import "{r}"\n' for r in routes) + 'blueprint b for nowhere { user { goal "g" } }\n')
    return proj, routes


def _no_secret(text: str) -> None:
    assert SECRET not in text
    assert "root:x:0" not in text  # /etc/passwd
    assert "H5_ENV_SECRET" not in text  # /proc/self/environ


def test_check_refuses_every_route_out_of_the_folder_and_prints_nothing_from_outside(hostile):
    import subprocess
    import sys

    proj, routes = hostile
    env = {**os.environ, "H5_ENV_SECRET": SECRET}  # visible in /proc/self/environ of the child
    for fmt in ("full", "json"):
        p = subprocess.run([sys.executable, "-m", "forgec", "check", str(proj), "--format", fmt], capture_output=True, text=True,
                           env=env, timeout=120)
        out = p.stdout + p.stderr
        _no_secret(out)
        assert p.returncode == 1, out
        assert "Traceback" not in out and "internal" not in out
    r = CliRunner().invoke(app, ["check", str(proj), "--format", "json"])
    diags = json.loads(r.stdout)
    got = [(d["code"], d["span"]["line"]) for d in diags if d["code"] == "import-outside-build"]
    # the link.forge found in the folder itself is not read either (a diagnostic on it, line 0)
    assert sorted(ln for c, ln in got if ln) == list(range(1, len(routes) + 1)), got
    assert any(d["code"] == "import-outside-build" and d["span"]["file"].endswith("link.forge") for d in diags)


def test_library_load_and_check_follow_the_same_rule(hostile, tmp_path):
    from forgec.lang import check, load

    proj, routes = hostile
    mods, diags = load([proj])
    assert [Path(m.file).name for m in mods] == ["evil.forge"]  # neither link.forge nor any import was read
    cd = check(mods)
    assert sum(1 for d in cd if d.code == "import-outside-build") == len(routes)
    _no_secret(repr(diags + cd))
    # inside the roots, imports (and symlinks that stay inside) work
    (proj / "src").mkdir()
    (proj / "src" / "env.forge").write_text("env inside {\n  entity A key a_id { a_id: str }\n}\n")
    (proj / "bp" / "in_link.forge").symlink_to(proj / "src" / "env.forge")
    good = tmp_path / "good.forge"
    good.write_text('import "proj/src/env.forge"\nblueprint g for inside { user { goal "g" } }\n')
    gm, gd = load([good], roots=[tmp_path])
    errors = lambda ds: [d.code for d in ds if d.is_error]  # noqa: E731 - (the blueprint has a no-effect warning)
    assert gd == [] and len(gm) == 2 and errors(check(gm, roots=[tmp_path])) == []
    assert "import-outside-build" in errors(check(gm[:1], roots=[proj / "bp"]))  # roots that do not hold proj/src ...
    assert errors(check(gm[:1], roots=[tmp_path])) == []  # ... and roots that do
    assert errors(check(gm[:1])) == []  # default: the file's folder (tmp_path) holds proj/src
    inl, d2 = load([proj / "bp" / "in_link.forge"], roots=[proj])
    assert d2 == [] and inl[0].envs[0].name == "inside"  # a symlink that stays inside is fine


def test_compile_never_reads_blueprints_or_imports_from_outside_the_build(build_dir, tmp_path):
    """A hand-added blueprint that imports outside, and a blueprint symlinked from outside the build: neither is
    read nor becomes a task, and the compile output shows nothing of the outside file."""
    import shutil

    b = tmp_path / "build"
    shutil.copytree(build_dir, b, symlinks=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    bps = b / "blueprints" / "bookstore"
    import re

    stolen = re.sub(r"(?m)^blueprint ", "blueprint stolen_", sorted(bps.glob("*.forge"))[0].read_text(), count=1)
    assert "\nblueprint stolen_" in stolen
    (outside / "stolen.forge").write_text(f"// {SECRET}\n" + stolen)
    (outside / "secret.forge").write_text(f"{SECRET} = not a forge file\n")
    (bps / "zz_linked.forge").symlink_to(outside / "stolen.forge")
    (bps / "zz_evil.forge").write_text(f'import "{outside / "secret.forge"}"\nimport "../../../elsewhere/secret.forge"\n' + stolen
                                      .replace("\nblueprint stolen_", "\nblueprint evil_", 1))
    r = CliRunner().invoke(app, ["compile", str(EXAMPLES / "bookstore.yaml"), "-o", str(b), "-n", "6", "--seed", "3"])
    _no_secret(r.output)
    assert "import-outside-build" in r.output and "Traceback" not in r.output
    ids = [json.loads(x)["id"] for x in (b / "tasks" / "bookstore.jsonl").read_text().splitlines()]
    assert not [i for i in ids if "stolen" in i or "evil" in i], ids


def test_a_tampered_manifest_path_is_never_read(tmp_path):
    from forgec.build import PrevEnv

    (tmp_path / "elsewhere.forge").write_text(SECRET)
    root = tmp_path / "build"
    (root / "blueprints").mkdir(parents=True)
    (root / "blueprints" / "link.forge").symlink_to(tmp_path / "elsewhere.forge")
    prev = PrevEnv(root, None)
    assert prev.read("../elsewhere.forge") is None and prev.read(str(tmp_path / "elsewhere.forge")) is None
    assert prev.read("blueprints/link.forge") is None


def test_python_body_cannot_put_unencodable_text_into_the_state_or_a_result(tmp_path):
    """A python body (run in the sandbox) that writes "\\udfff" into the state, or returns it, is a `sandbox`
    error: the state is unchanged and its hash computes."""
    from forgec.codegen import emit_env, load_env_module
    from forgec.lang import ast as A

    str_t = A.PrimType("str")
    ent = A.EntityDecl("Note", "note_id", (A.FieldDecl("note_id", str_t), A.FieldDecl("text", str_t)))
    writes = 'state["entities"]["Note"]["n1"] = {"note_id": "n1", "text": "bad " + chr(0xDFFF)}\nreturn 1'
    env_decl = A.EnvDecl("notes", None, (), (ent,), (
        A.ToolDecl("poison", (), A.PrimType("any"), "", None, writes, ("create",)),
        A.ToolDecl("shout", (), A.PrimType("any"), "", None, "return chr(0xD800)", ("read",)),
        A.ToolDecl("fine", (), A.PrimType("any"), "", None, 'return "ok ☃"', ("read",)),
    ))
    p = tmp_path / "env.py"
    p.write_text(emit_env(env_decl, "notes.forge"))
    env = load_env_module(p).Env()
    before = env.state_hash()
    assert env.step("fine", {}) == "ok ☃"  # bodies run (bubblewrap is installed); only the bad text is refused
    for tool in ("poison", "shout"):
        r = env.step(tool, {})
        assert isinstance(r, Exception) and r.code == "sandbox", (tool, r)
        r.message.encode("utf-8")
        assert env.state_hash() == before


def test_a_docs_folder_symlink_that_leads_outside_is_not_read(tmp_path):
    """Docs folders given on the command line are read inside only: a linked file elsewhere is skipped with a
    warning (its content, here malformed JSON that a diagnostic would quote, never appears)."""
    secret = tmp_path / "secret.json"
    secret.write_text('{"' + SECRET + '": \n')  # malformed: read, it would be quoted in a malformed-json diagnostic
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "shop.json").write_text((EXAMPLES / "airline.json").read_text())
    (docs / "evil.json").symlink_to(secret)
    (docs / "sub" / "deep.json").symlink_to(secret)
    r = CliRunner().invoke(app, ["inspect", str(docs)])
    _no_secret(r.output)
    assert r.exit_code == 0 and r.output.count("link-outside-folder") == 2, r.output
    r = CliRunner().invoke(app, ["inspect", str(secret)])  # named explicitly: read (and reported as malformed)
    assert r.exit_code == 1 and "malformed-json" in r.output


def test_a_state_with_a_lone_surrogate_is_refused_when_the_env_is_made(build):
    """A state file holding "\\udfff" (legal JSON) never becomes an env whose hash cannot be computed."""
    task = build.tasks[0]
    state = json.loads(json.dumps(build.initial_state(task)))
    key = next(iter(state["entities"]["Book"]))
    state["entities"]["Book"][key]["title"] = json.loads('"bad \\udfff"')
    with pytest.raises(ValueError, match="not valid Unicode"):
        build.envs[task.env].Env(state)
    state["entities"]["Book"][key]["title"] = "fine ☃"
    build.envs[task.env].Env(state).state_hash()


def test_run_results_stay_utf8_when_metadata_holds_a_surrogate(build, tmp_path):
    """argv bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape); run_results.json is still written."""
    from forgec.runtime.eval import evaluate

    res = evaluate(build, OracleAgent, ScriptedUser, None, 1, [build.tasks[0].id])
    rr, ej = res.write(tmp_path / "run", metadata={"args": {"agent_model": "m\udcff"}})
    data = json.loads(rr.read_bytes().decode("utf-8"))
    assert data["metadata"]["args"]["agent_model"] == "m\ufffd" and data["summary"]["episodes"] == 1
    assert len(ej.read_bytes().decode("utf-8").splitlines()) == 1


def test_an_llm_rephrasing_with_a_lone_surrogate_falls_back_to_the_template(tmp_path):
    """`--refine llm`: a reply with a "\\udfff" escape never becomes a task instruction (tasks are UTF-8 files)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from fakeserver import FakeServer

    from forgec.refine import refine_instruction
    from forgec.synth.llm import Chat, LLMConfig

    tmpl = "I want to cancel my cheapest pending order. My user id is u_17."
    with FakeServer() as srv:
        srv.script({"content": "Please cancel my cheapest order \udfff, I am u_17."})
        chat = Chat(LLMConfig(base_url=srv.url, model="m", max_retries=0, timeout=5), tmp_path / "cache")
        text, why = refine_instruction(tmpl, {"user_id": "u_17"}, "", ["cancel_order"], [], chat)
    assert text == tmpl and "not valid Unicode" in why
