"""`forgec stats`, `graph` and `sample` report bad input the way the other commands do.

Each expectation is checked against an independent source: the runtime loader's
own `BuildError` text (`forgec.runtime.load`), `forgec compile`/`inspect` on the
same path, the bytes of the task file, or hand-written literals.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgec.cli import app

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def forgec(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The real entry point, as a shell runs it."""
    return subprocess.run([sys.executable, "-m", "forgec", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A real build of examples/helpdesk.json with 4 tasks (about a second)."""
    root = tmp_path_factory.mktemp("statsgraph")
    r = forgec("compile", str(EXAMPLES / "helpdesk.json"), "-o", str(root / "build"), "-n", "4")
    assert r.returncode == 0, r.stderr
    return root / "build"


@pytest.fixture
def build(pristine, tmp_path) -> Path:
    """A private copy of the build, free to damage."""
    return Path(shutil.copytree(pristine, tmp_path / "build"))


def runtime_error_text(path: Path) -> str:
    """What `forgec.runtime.load` (used by eval/play/train) says about `path`."""
    from forgec.runtime import BuildError, load

    with pytest.raises(BuildError) as e:
        load(path)
    return str(e.value)


# ------------------------------------------------------------------ 1. corrupt manifest


def test_stats_corrupt_manifest_is_corrupt_build_exit_1(build):
    m = build / "manifest.json"
    m.write_text('{"metadata": {"forgec_version": ', encoding="utf-8")
    r = forgec("stats", str(build))
    assert r.returncode == 1
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0].startswith("error[corrupt-build]: manifest.json is not valid JSON: ")
    assert lines[1] == f" --> {m}"
    assert lines[2].startswith("  = help: recompile with `forgec compile DOCS -o BUILD`")
    assert "internal-error" not in r.stderr and "Traceback" not in r.stderr
    # the runtime gives the same code and first line for the same file
    assert runtime_error_text(build).splitlines()[0] == lines[0]


@pytest.mark.parametrize("text, first_line", [
    ("[1, 2]", "error[corrupt-build]: manifest.json is not an object with an `envs` object"),
    ('{"envs": {"helpdesk": 3}}', "error[corrupt-build]: manifest.json: env 'helpdesk' is not an object"),
])
def test_stats_manifest_of_the_wrong_shape(build, text, first_line):
    (build / "manifest.json").write_text(text, encoding="utf-8")
    r = cli("stats", str(build))
    assert r.exit_code == 1 and r.stderr.splitlines()[0] == first_line


# ------------------------------------------------------------------ 2. task files must match the manifest's hash


def test_stats_intact_build_counts_the_task_file_lines(pristine):
    r = cli("stats", str(pristine), "--format", "json")
    assert r.exit_code == 0, r.output
    lines = [x for x in (pristine / "tasks" / "helpdesk.jsonl").read_text().splitlines() if x.strip()]
    assert json.loads(r.stdout)["helpdesk"]["tasks"] == len(lines) == 4


def test_stats_truncated_tasks_file_is_corrupt_build(build):
    f = build / "tasks" / "helpdesk.jsonl"
    lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
    f.write_text("".join(lines[:2]), encoding="utf-8")  # lost the last two tasks
    r = forgec("stats", str(build), "--format", "json")
    assert r.returncode == 1
    assert r.stdout == ""  # no stale counts from the manifest
    assert r.stderr.startswith("error[corrupt-build]: env 'helpdesk': tasks/helpdesk.jsonl does not match the SHA-256 recorded in manifest.json")
    assert f" --> {f}\n" in r.stderr and "= help: recompile with `forgec compile DOCS -o BUILD`" in r.stderr


def test_stats_one_changed_byte_is_corrupt_build(build):
    f = build / "tasks" / "helpdesk.jsonl"
    data = bytearray(f.read_bytes())
    data[-2:-1] = b" "  # the closing brace of the last task, same length
    f.write_bytes(bytes(data))
    r = cli("stats", str(build))
    assert r.exit_code == 1 and "error[corrupt-build]" in r.stderr and "SHA-256" in r.stderr


def test_stats_missing_tasks_file_is_corrupt_build(build):
    (build / "tasks" / "helpdesk.jsonl").unlink()
    r = cli("stats", str(build))
    assert r.exit_code == 1
    assert r.stderr.startswith("error[corrupt-build]: env 'helpdesk': cannot read tasks/helpdesk.jsonl: No such file or directory")


def test_stats_tasks_path_outside_the_build_is_corrupt_build(build, tmp_path):
    m = json.loads((build / "manifest.json").read_text())
    (tmp_path / "elsewhere.jsonl").write_text("")
    m["envs"]["helpdesk"]["tasks"]["path"] = "../elsewhere.jsonl"
    (build / "manifest.json").write_text(json.dumps(m))
    r = cli("stats", str(build))
    assert r.exit_code == 1
    assert r.stderr.startswith("error[corrupt-build]: env 'helpdesk': tasks path '../elsewhere.jsonl' points outside the build")


# ------------------------------------------------------------------ 3. --format table|json (and the hidden --json)


def test_stats_format_json_table_and_hidden_alias(pristine):
    j = cli("stats", str(pristine), "--format", "json")
    old = cli("stats", str(pristine), "--json")
    assert j.exit_code == old.exit_code == 0
    assert j.stdout == old.stdout and set(json.loads(j.stdout)) == {"helpdesk"}
    t = cli("stats", str(pristine), "--format", "table")
    assert t.exit_code == 0 and "helpdesk" in t.stdout and "calls/task" in t.stdout
    assert cli("stats", str(pristine)).stdout == t.stdout  # table is the default
    bad = cli("stats", str(pristine), "--format", "yaml")
    assert bad.exit_code == 2 and "Invalid value for '--format'" in bad.output
    helptext = cli("stats", "--help").stdout
    assert "--format" in helptext and "--json" not in helptext


# ------------------------------------------------------------------ 4. not a build: missing-build, as the runtime says it


def test_stats_folder_without_manifest_is_missing_build(tmp_path):
    r = forgec("stats", str(tmp_path))
    assert r.returncode == 1
    assert r.stderr.strip() == runtime_error_text(tmp_path)
    assert r.stderr.strip() == (f"error[missing-build]: {str(tmp_path)!r} is not a forgec build (no manifest.json)\n"
                                f" --> {tmp_path}\n  = help: create it with `forgec compile DOCS -o BUILD`")


def test_stats_missing_folder_is_missing_build(tmp_path):
    nope = tmp_path / "nope"
    r = cli("stats", str(nope))
    assert r.exit_code == 1
    assert r.stderr.strip() == runtime_error_text(nope)
    assert r.stderr.startswith(f"error[missing-build]: build folder {str(nope)!r} does not exist")


def test_stats_no_build_code_is_gone():
    from forgec.diagnostics import CODES, load_all_codes

    load_all_codes()
    assert "stats-no-build" not in CODES and "missing-build" in CODES and "corrupt-build" in CODES
    assert "stats-no-build" not in (REPO / "docs" / "diagnostics.md").read_text()


# ------------------------------------------------------------------ 5. graph: path-not-found like compile


def test_graph_missing_path_is_path_not_found_like_compile(tmp_path):
    nope = tmp_path / "nope"
    r = forgec("graph", str(nope))
    assert r.returncode == 1 and r.stdout == ""
    expected = f"error[path-not-found]: no such file or folder: {nope}\n --> {nope}\n  = help: check the path"
    assert r.stderr.strip() == expected
    c = forgec("compile", str(nope), "-o", str(tmp_path / "b"))
    assert c.returncode == 1 and expected in c.stderr  # the compiler's own front end says the same


def test_graph_unknown_env_keeps_no_env(pristine):
    r = cli("graph", str(pristine), "--env", "helpdsk")
    assert r.exit_code == 1 and r.stderr.startswith("error[no-env]: no environment named 'helpdsk'")


def test_graph_corrupt_manifest_is_corrupt_build(build):
    (build / "manifest.json").write_text("{", encoding="utf-8")
    r = cli("graph", str(build), "--format", "json")
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.startswith("error[corrupt-build]: manifest.json is not valid JSON")
    assert "internal-error" not in r.stderr


# ------------------------------------------------------------------ 6. sample: same classes of problems


def test_sample_missing_path_is_path_not_found(tmp_path):
    nope = tmp_path / "nope"
    r = cli("sample", str(nope), "-o", str(tmp_path / "out"))
    assert r.exit_code == 1
    assert r.stderr.strip() == f"error[path-not-found]: no such file or folder: {nope}\n --> {nope}\n  = help: check the path"
    assert not (tmp_path / "out").exists()


def test_sample_non_doc_input_says_what_inspect_says(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    s = cli("sample", str(notes), "-o", str(tmp_path / "out"))
    i = cli("inspect", str(notes))
    assert s.exit_code == i.exit_code == 1
    assert s.stderr.startswith("error[unknown-format]: not a tool documentation format forgec knows")
    assert s.stderr.splitlines()[0] == i.stderr.splitlines()[0]


def test_sample_corrupt_build_is_corrupt_build(build, tmp_path):
    (build / "manifest.json").write_text("not json", encoding="utf-8")
    r = cli("sample", str(build), "-o", str(tmp_path / "out"))
    assert r.exit_code == 1 and r.stderr.startswith("error[corrupt-build]: manifest.json is not valid JSON")


def test_sample_format_json_table_and_hidden_alias(pristine, tmp_path):
    j = cli("sample", str(pristine), "-n", "2", "--seed", "1", "-o", str(tmp_path / "a"), "--format", "json")
    old = cli("sample", str(pristine), "-n", "2", "--seed", "1", "-o", str(tmp_path / "a"), "--json")
    assert j.exit_code == old.exit_code == 0, j.output
    assert json.loads(j.stdout) == json.loads(old.stdout)
    s = json.loads(j.stdout)["helpdesk"]
    written = sorted((tmp_path / "a" / "helpdesk").glob("*.forge"))
    assert s["blueprints"] == len(written) == 2
    t = cli("sample", str(pristine), "-n", "2", "--seed", "1", "-o", str(tmp_path / "b"), "--format", "table")
    assert t.exit_code == 0 and f"wrote 2 blueprints to {tmp_path / 'b' / 'helpdesk'}/" in t.stdout
    bad = cli("sample", str(pristine), "--format", "xml")
    assert bad.exit_code == 2 and "Invalid value for '--format'" in bad.output
    helptext = cli("sample", "--help").stdout
    assert "--format" in helptext and "--json" not in helptext


def test_sample_min_over_max_calls_is_a_usage_error(pristine, tmp_path):
    r = cli("sample", str(pristine), "--min-calls", "5", "--max-calls", "3", "-o", str(tmp_path / "out"))
    assert r.exit_code == 2
    assert r.stderr.strip() == "error[usage]: --max-calls (3) must be >= --min-calls (5)"
    assert not (tmp_path / "out").exists()


def test_graph_png_without_output_is_a_usage_error(tmp_path):
    """Checked before reading anything, whether or not Graphviz is installed."""
    r = cli("graph", str(tmp_path / "nope"), "--format", "png")
    assert r.exit_code == 2
    assert r.stderr.strip() == "error[usage]: --format png needs -o FILE (a picture cannot go to the terminal)"
    assert "graphviz-missing" not in r.output


def test_stats_on_a_file_is_missing_build(tmp_path):
    f = tmp_path / "manifest.json"
    f.write_text("{}")
    r = cli("stats", str(f))
    assert r.exit_code == 1
    assert r.stderr.strip() == (f"error[missing-build]: {str(f)!r} is not a build folder\n --> {f}\n"
                                "  = help: create it with `forgec compile DOCS -o BUILD`")


# ------------------------------------------------------------------ 6. stats, the task files and the manifest agree

STAT_KEYS = ("calls", "write_calls", "reasoning_nodes", "inference_edges", "depth", "width", "user_facts")


def _edges_by_hand(bp) -> list[set[str]]:
    """A second, independent count of inference edges: for each call/reason node, the earlier node
    names anywhere in its expressions, except the bare field name of a `by:` keyword."""
    from forgec.lang import ast as A

    seen: set[str] = set()
    out = []
    for n in bp.nodes:
        if isinstance(n, A.CallNode):
            exprs = [a.value for a in n.args]
        elif isinstance(n, A.ReasonNode):
            exprs = list(n.args) + [k.value for k in n.kwargs if k.name != "by"]
        else:
            continue
        out.append({x.id for e in exprs for x in A.walk(e) if isinstance(x, A.Name) and x.id in seen})
        seen.add(n.name)
    return out


@pytest.fixture(scope="module")
def examples_build(tmp_path_factory) -> Path:
    """`forgec compile examples/` (all three shipped examples, about 4 s)."""
    out = tmp_path_factory.mktemp("examples") / "build"
    r = forgec("compile", str(EXAMPLES), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    return out


def test_stats_task_files_and_manifest_report_the_same_counts(examples_build):
    from forgec import lang

    stats = json.loads(cli("stats", str(examples_build), "--format", "json").stdout)
    manifest = json.loads((examples_build / "manifest.json").read_text())
    assert set(stats) == set(manifest["envs"]) == {"airline", "bookstore", "helpdesk"}
    for env, rec in manifest["envs"].items():
        tasks = [json.loads(line) for line in (examples_build / rec["tasks"]["path"]).read_text().splitlines()]
        assert stats[env]["tasks"] == rec["task_count"] == len(tasks) == stats[env]["blueprints"] > 0
        writes = {t: r["writes_state"] for t, r in rec["tools"].items()}
        for t in tasks:
            s = t["stats"]
            # per task, against what the task itself holds
            assert s["calls"] == len(t["gold_calls"])
            assert s["write_calls"] == sum(writes[g["tool"]] for g in t["gold_calls"])
            assert s["user_facts"] == len(t["user"]["facts"])
            bp = lang.parse((examples_build / t["blueprint"]["path"]).read_text(), "b.forge")[0].blueprints[0]
            assert s["inference_edges"] == sum(len(e) for e in _edges_by_hand(bp))
        for k in STAT_KEYS:
            vals = [t["stats"][k] for t in tasks]
            want = (round(sum(vals) / len(vals), 3), max(vals))
            assert (stats[env][f"avg_{k}"], stats[env][f"max_{k}"]) == want, (env, k)
            assert (rec["stats"][f"avg_{k}"], rec["stats"][f"max_{k}"]) == want, (env, k)
