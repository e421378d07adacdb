"""Issue 25's smaller findings outside the server and the sandbox, one test (or two) each:

1. compile's diagnostics are rendered as `check`'s are (one renderer): escape sequences and
   bidi controls from the docs are shown escaped, `:skull:` stays text;
2. a read command given a mistyped path never renames an unrelated `.NAME.old/` folder;
3. a truncated states/<env>.json is regenerated (docs/contracts.md), not an env failing forever;
4. `--state` never reads a special file (/proc/self/environ, a FIFO) and no diagnostic prints
   more of a file than a short, escaped excerpt;
5. a python tool that fails verification is a warning, and the runtime does not serve it;
6. compile reports a blueprint symlinked from outside the build as `check` does;
7. two identical compiles write the same manifest (an env with no tasks included);
8. Gym: malformed actions are observations, malformed reset options a clear ValueError;
and diagnostics read each source file once per render (thousands of diagnostics on one file).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from forgec import diagnostics as D
from forgec.build import CompileOptions, compile_build

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
HELPDESK = EXAMPLES / "helpdesk.json"
ESC = "\x1b"
SKULL = "\U0001f480"


def forgec(*args, cwd=None, timeout=180, env=None):
    return subprocess.run([sys.executable, "-m", "forgec", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "DS_ACCELERATOR": "cpu", **(env or {})})


def compile_to(out: Path, inputs=None, **kw):
    kw.setdefault("tasks_per_env", 3)
    kw.setdefault("oracle_check", False)
    return compile_build(CompileOptions(inputs=inputs or [HELPDESK], out=out, **kw))


@pytest.fixture(scope="module")
def helpdesk(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sec") / "build"
    res = compile_to(out)
    assert res.ok, D.render(res.diagnostics)
    return out


@pytest.fixture
def build(helpdesk, tmp_path) -> Path:
    out = tmp_path / "build"
    shutil.copytree(helpdesk, out, symlinks=True)
    return out


def _manifest(out: Path) -> dict:
    m = json.loads((out / "manifest.json").read_text())
    for k in ("generated_at", "invocation_id"):  # documented as excluded from determinism checks
        m["metadata"].pop(k)
    return m


# --------------------------------------------------------------------------- 1. terminal escapes


def test_compile_prints_escape_sequences_and_emoji_codes_as_text_like_check(tmp_path):
    docs = json.loads(HELPDESK.read_text())
    extra = dict(docs["tools"][1], name=f"bad{ESC}[2J{ESC}]0;pwned\x07name :skull: \u202egnp.exe")
    docs["tools"].append(extra)
    (tmp_path / "hostile.json").write_text(json.dumps(docs))
    r = forgec("compile", "hostile.json", "-o", "b", "-n", "2", "--no-oracle", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout + r.stderr
    assert "renamed-tool" in out
    assert ESC not in out and "\x07" not in out and "\u202e" not in out
    assert SKULL not in out and ":skull:" in out
    assert "\\x1b[2J" in out and "\\u202e" in out  # shown, escaped
    # `check` renders a hostile source line the same way (an OSC title sequence is not stripped by click)
    (tmp_path / "t.forge").write_text(f"env e {{\n  tool x{ESC}]0;pwned\x07(a: str) -> str\n}}\n")
    c = forgec("check", "t.forge", cwd=tmp_path)
    assert c.returncode == 1 and "unexpected-character" in c.stdout
    assert ESC not in c.stdout + c.stderr and "\x07" not in c.stdout + c.stderr
    assert "tool x\\x1b]0;pwned\\x07(a: str)" in c.stdout


def test_rendered_diagnostics_escape_every_text_field(tmp_path):
    f = tmp_path / "doc.json"
    f.write_text('{"name": "a\\u001b[31mb"}\nline two \x1b[2J here\n')
    d = D.Diagnostic(D.Severity.ERROR, "usage", f"bad {ESC}[31mname", D.Span(str(f), 2, 10, 2, 11),
                     help=f"help {ESC}]0;t\x07", notes=(f"note {ESC}[1m",))
    for text in (D.render([d]), D.render([d], "concise")):
        assert ESC not in text and "\x07" not in text
        assert "\\x1b[31mname" in text
    full = D.render_full(d)
    assert "line two \\x1b[2J here" in full
    src, caret = full.splitlines()[3:5]
    assert src[caret.index("^"):].startswith("\\x1b")  # the caret is under the escaped character
    assert caret.count("^") == len("\\x1b")


# --------------------------------------------------------------------------- 2. recovery touches only real swaps


def test_a_mistyped_path_never_renames_an_unrelated_old_folder(tmp_path):
    from forgec.swap import recover_build

    mine = tmp_path / ".notes.old"
    mine.mkdir()
    (mine / "todo.txt").write_text("mine")
    r = forgec("eval", "notes/some/typo", cwd=tmp_path)
    assert r.returncode != 0 and "does not exist" in r.stderr
    for cmd in (["stats", "notes"], ["check", "notes/x.forge"], ["verify", "notes"]):
        forgec(*cmd, cwd=tmp_path)
    assert recover_build(tmp_path / "notes" / "some" / "typo") is False
    assert (mine / "todo.txt").read_text() == "mine" and not (tmp_path / "notes").exists()
    # a folder holding a forgec build is a swap cut short: put back (test_build_safety kills a real swap)
    (mine / "manifest.json").write_text(json.dumps({"metadata": {"forgec_version": "0"}}))
    assert recover_build(tmp_path / "notes" / "blueprints" / "x.forge") is True
    assert (tmp_path / "notes" / "todo.txt").is_file() and not mine.exists()


# --------------------------------------------------------------------------- 3. a truncated state file


def test_a_truncated_state_file_is_regenerated_not_a_failure_on_every_compile(build):
    state = build / "states" / "helpdesk.json"
    good, before = state.read_bytes(), _manifest(build)
    state.write_bytes(good[: len(good) // 2])
    res = compile_to(build)
    assert res.ok, D.render(res.diagnostics)
    assert [d.code for d in res.diagnostics if d.severity != D.Severity.INFO] == ["state-regenerated"]
    assert state.read_bytes() == good
    res = compile_to(build)
    assert res.ok and not [d for d in res.diagnostics if d.severity != D.Severity.INFO]
    assert _manifest(build)["envs"] == before["envs"]


def test_a_hand_replaced_state_object_is_still_validated(build):
    state = build / "states" / "helpdesk.json"
    world = json.loads(state.read_text())
    # a value of the wrong type (an unlisted enum value is no longer wrong: the user's data grows the enum, a warning)
    next(iter(world["entities"]["Customer"].values()))["tier"] = ["not", "a", "tier"]
    state.write_text(json.dumps(world))
    res = compile_to(build)
    assert "bad-state" in [d.code for d in res.diagnostics if d.is_error]  # a JSON object stays the user's, checked


# --------------------------------------------------------------------------- 4. --state and special files


def test_state_option_never_reads_proc_files_or_blocks_on_a_fifo(tmp_path):
    secret = "forgec-secret-" + os.urandom(6).hex()
    r = forgec("compile", str(HELPDESK), "-o", "b", "--state", "helpdesk=/proc/self/environ", cwd=tmp_path,
               env={"FORGEC_TEST_SECRET": secret}, timeout=60)
    assert r.returncode == 2, r.stderr[-2000:]
    assert secret not in r.stdout + r.stderr and "PATH=" not in r.stderr
    assert "'/proc/self/environ' is empty (or a special file" in r.stderr
    os.mkfifo(tmp_path / "pipe")
    t0 = time.monotonic()
    r = forgec("compile", str(HELPDESK), "-o", "b", "--state", "helpdesk=pipe", cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and time.monotonic() - t0 < 30
    assert "is a FIFO, not a regular file" in r.stderr and "no such file" not in r.stderr
    r = forgec("compile", str(HELPDESK), "-o", "b", "--state", "helpdesk=nothing.json", cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and "no such file" in r.stderr


def test_state_reader_refuses_special_files_without_opening_them(tmp_path):
    from forgec.userstate import read_doc

    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, why in ((fifo, "is a FIFO, not a regular file"), ("/proc/self/environ", "is empty"), (tmp_path, "is a folder")):
        got: list = []
        t = threading.Thread(target=lambda: got.append(read_doc(path)), daemon=True)
        t.start()
        t.join(10)
        if t.is_alive():  # blocked opening the FIFO: release it, then fail
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            t.join(10)
            pytest.fail(f"read_doc({path}) blocked")
        doc, diags = got[0]
        assert doc is None and why in diags[0].message, diags


def test_a_diagnostic_shows_a_short_excerpt_of_a_long_line_and_nothing_of_proc_files(tmp_path):
    secret = "s3cr3t-" + os.urandom(6).hex()
    f = tmp_path / "one-line.json"
    f.write_text('{"a": "' + "x" * 5000 + secret + "y" * 5000 + '"}')
    col = len('{"a": "') + 5000 + 1
    text = D.render_full(D.Diagnostic(D.Severity.ERROR, "bad-state", "m", D.Span(str(f), 1, col, 1, col + len(secret))))
    src, caret = text.splitlines()[3:5]
    assert len(src) <= D.MAX_EXCERPT + 10 and secret in src
    assert src[caret.index("^"):].startswith(secret)
    os.environ["FORGEC_TEST_SECRET"] = secret
    try:
        text = D.render_full(D.Diagnostic(D.Severity.ERROR, "bad-state", "m", D.Span("/proc/self/environ", 1, 1)))
    finally:
        del os.environ["FORGEC_TEST_SECRET"]
    assert secret not in text and "=" not in text.split("-->")[1]


# --------------------------------------------------------------------------- 5. python tools that fail verification

BOOM = '\n  @action\n  tool boom(x: str) -> any "Explodes." python """\n    raise ValueError("nope")\n  """\n'


def test_a_python_tool_failing_verification_is_a_warning_and_not_served(build):
    from forgec.runtime import load

    src = build / "src" / "helpdesk" / "env.forge"
    text = src.read_text().rstrip()
    src.write_text(text[:-1] + BOOM + "}\n")
    res = compile_to(build)
    warned = [d for d in res.diagnostics if d.severity == D.Severity.WARNING and "boom" in d.message]
    assert warned and warned[0].code in ("tool-unverified", "sandbox-unavailable"), D.render(res.diagnostics)
    assert D.summary_line(res.diagnostics) != "0 errors, 0 warnings"
    m = json.loads((build / "manifest.json").read_text())["envs"]["helpdesk"]
    assert m["dropped_tools"] == ["boom"] and not m["tools"]["boom"]["verified"]
    b = load(build)
    mod = b.envs["helpdesk"]
    assert "boom" not in [t["function"]["name"] for t in mod.TOOLS] and mod.WITHHELD_TOOLS == ["boom"]
    err = b.new_env("helpdesk", b.tasks[0]).step("boom", {"x": "a"})
    assert getattr(err, "code", None) == "unknown-tool"
    assert len(mod.TOOLS) == len(m["tools"]) - 1  # every other tool is served as before


# --------------------------------------------------------------------------- 6. an outside symlink among the blueprints


def test_compile_reports_an_outside_symlinked_blueprint_as_check_does(build, tmp_path):
    outside = tmp_path / "outside.forge"
    outside.write_text("// not the build's\n")
    link = build / "blueprints" / "helpdesk" / "linked.forge"
    link.symlink_to(outside)
    checked = forgec("check", str(build), "--format", "json")
    want = [d for d in json.loads(checked.stdout) if d["code"] == "import-outside-build"]
    assert len(want) == 1 and checked.returncode == 1
    res = compile_to(build)
    got = [d for d in res.diagnostics if d.code == "import-outside-build"]
    assert [d.to_json() for d in got] == want and got[0].is_error
    assert not res.ok


# --------------------------------------------------------------------------- 7. same arguments, same manifest


def test_recompiling_an_env_without_tasks_keeps_the_manifest(tmp_path, corpus):
    out = tmp_path / "b"
    res = compile_to(out, [corpus / "mcp_server_time"], tasks_per_env=5, oracle_check=True)
    assert res.ok and res.manifest.envs["mcp_server_time"].task_count == 0
    first = _manifest(out)
    assert first["envs"]["mcp_server_time"]["stats"]["sampler_rejected"]  # why it has none, kept when the sample is reused
    for _ in range(2):
        compile_to(out, [corpus / "mcp_server_time"], tasks_per_env=5, oracle_check=True)
        assert _manifest(out) == first


# --------------------------------------------------------------------------- 8. Gym: bad actions and options


@pytest.fixture(scope="module")
def gym_build(tmp_path_factory):
    from runtime_build import make_build

    from forgec.runtime import load

    return load(make_build(tmp_path_factory.mktemp("gym") / "b"))


def test_gym_malformed_tool_calls_are_error_observations(gym_build):
    from forgec.gym import ForgecEnv

    env = ForgecEnv(gym_build)
    env.reset(options={"task": "shop/order_total"})
    for action in ('{"tool_calls": 5}', {"tool_calls": 5}, {"tool_calls": [5, "x"]}, '{"tool_calls": "get_order"}'):
        obs, reward, terminated, truncated, info = env.step(action)
        assert env.action_space.contains(action) or isinstance(action, dict)
        last = info["messages"][-1]
        assert last["role"] == "tool" and last["content"].startswith("Error:"), last
        assert (reward, terminated, truncated) == (0.0, False, False)
    obs, reward, terminated, truncated, info = env.step('{"tool_calls": [{"name": "get_order", "arguments": {"order_id": "o_2"}}]}')
    assert json.loads(info["messages"][-1]["content"])["total"] == 89  # the episode goes on as usual


def test_gym_bad_reset_options_are_a_clear_value_error(gym_build):
    from forgec.gym import ForgecEnv

    env = ForgecEnv(gym_build)
    env.reset(options={"task": "shop/order_total"})
    for options, words in (({"task": 5}, "options['task'] must be a task id string"), (5, "takes a dict"),
                           ({"task": ["shop/order_total"]}, "not list")):
        with pytest.raises(ValueError, match=words.replace("[", r"\[")):
            env.reset(options=options)
    assert env.task.id == "shop/order_total"
    env.step('{"tool_calls": [{"name": "get_order", "arguments": {"order_id": "o_2"}}]}')  # the episode survived
    with pytest.raises(ValueError, match="sampler"):
        ForgecEnv(gym_build, tasks=lambda rng: 7).reset(seed=0)
    from forgec.runtime.loader import BuildError

    with pytest.raises(BuildError, match="unknown-task"):
        gym_build.task(None)


# --------------------------------------------------------------------------- diagnostics read each file once


def test_rendering_many_diagnostics_reads_each_file_once(tmp_path, monkeypatch):
    f = tmp_path / "big.forge"
    f.write_text("".join(f"line {i}\n" for i in range(20000)))
    reads = []
    real = Path.read_text

    def counting(self, *a, **kw):
        reads.append(str(self))
        return real(self, *a, **kw)

    monkeypatch.setattr(Path, "read_text", counting)
    diags = [D.warning("usage", f"d{i}", D.Span(str(f), i + 1, 1, i + 1, 5)) for i in range(0, 20000, 7)]
    t0 = time.perf_counter()
    text = D.render(diags)
    assert time.perf_counter() - t0 < 5
    assert reads.count(str(f)) == 1
    assert "2801 | line 2800" in text


# --------------------------------------------------------------------------- 9. gold diffs on a large state


def test_gold_diff_against_a_fork_costs_its_writes_not_the_state():
    """A blueprint's gold diff is taken against the state its env was forked from: records the fork did
    not write are the same objects there, so the diff skips them by identity (bench/bench_state.py:
    a 36 MB --state compiled in 56 s before, 25 s after, same tasks)."""
    import copy

    from forgec.tasks import state_diff

    n = 30_000  # records of a realistic width (a dozen fields, nested values)
    before = {"entities": {"Order": {f"o{i}": {"id": f"o{i}", "status": "open", "items": [i, i + 1],
                                               **{f"f{j}": {"v": i * j, "w": [str(j)]} for j in range(10)}} for i in range(n)}},
              "globals": {"now": 1}}
    after = {"entities": {"Order": dict(before["entities"]["Order"])}, "globals": dict(before["globals"])}
    orders = after["entities"]["Order"]
    orders["o7"] = dict(orders["o7"], status="cancelled")
    del orders["o9"]
    orders["o~/x"] = {"id": "o~/x", "status": "open", "items": []}
    after["globals"]["now"] = 2
    deep = copy.deepcopy(before)

    def timed(b):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            d = state_diff(b, after)
            best = min(best, time.perf_counter() - t0)
        return d, best

    shared, t_shared = timed(before)
    full, t_full = timed(deep)
    assert [e.model_dump() for e in shared] == [e.model_dump() for e in full] == [
        {"op": "change", "path": "/entities/Order/o7/status", "before": "open", "after": "cancelled"},
        {"op": "remove", "path": "/entities/Order/o9", "before": before["entities"]["Order"]["o9"], "after": None},
        {"op": "add", "path": "/entities/Order/o~0~1x", "before": None, "after": {"id": "o~/x", "status": "open", "items": []}},
        {"op": "change", "path": "/globals/now", "before": 1, "after": 2},
    ]
    assert t_shared * 3 < t_full, (t_shared, t_full)
    assert state_diff(before, before) == [] and state_diff(deep, before) == []


def test_a_layered_collection_materializes_as_its_items_in_order():
    """`EnvBase.state` of a fork hands out plain dicts; `_Layer.as_dict` (a C-speed copy when no key
    was added) must equal `dict(items())`, order included, after any mix of writes and deletes."""
    import random

    from forgec.runtime.envrt import _Layer

    rng = random.Random(5)
    for trial in range(300):
        base = {f"k{i:03d}": {"v": i} for i in range(rng.randint(0, 40))}
        layer = _Layer(base, sortkey=lambda kv: kv[0])
        for _ in range(rng.randint(0, 12)):
            k = f"k{rng.randint(0, 50):03d}"
            op = rng.random()
            if op < 0.5:
                layer[k] = {"v": -1, "t": trial}
            elif k in layer:
                del layer[k]
        got = layer.as_dict()
        assert got == dict(layer.items()) and list(got) == list(layer.keys()), trial
        assert all(got[k] is layer[k] for k in got)  # records shared, not copied
    big = {f"r{i:06d}": {"v": i} for i in range(200_000)}
    layer = _Layer(big, sortkey=lambda kv: kv[0])
    layer["r000007"] = {"v": -7}
    del layer["r000009"]
    t0 = time.perf_counter()
    d = layer.as_dict()
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert dict(layer.items()) == d
    assert t_fast * 3 < time.perf_counter() - t0
