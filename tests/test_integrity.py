"""A tampered build is refused by every command that runs it, unless the user says --allow-modified-build.

The seven tampering kinds the attack on the landed code found running silently
(exit 0, wrong or partial results) are each applied to a copy of a real
compiled build; the expected SHA-256 comes from the manifest the compiler
wrote, and the tests compare against hashlib on the files, not the loader's
own bookkeeping.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgec.cli import app
from forgec.runtime import BuildError, load

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """airline + helpdesk, 4 blueprints each, compiled once for the module."""
    root = tmp_path_factory.mktemp("integrity")
    docs = root / "docs"
    docs.mkdir()
    for name in ("airline.json", "helpdesk.json"):
        shutil.copy(EXAMPLES / name, docs / name)
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(docs), "-o", str(root / "build"), "-n", "4", "--no-oracle", "-q"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return root / "build"


def _copy(pristine: Path, tmp_path: Path) -> Path:
    b = tmp_path / "build"
    shutil.copytree(pristine, b)
    return b


def _edit_env_py(b: Path) -> str:
    # importing this module would leave a file behind: proves nothing from a refused build runs
    marker = b.parent / "imported.txt"
    with (b / "envs" / "airline" / "env.py").open("a", encoding="utf-8") as f:
        f.write(f"\nimport pathlib as _p\n_p.Path({str(marker)!r}).write_text('ran')\nTAMPERED = 1\n")
    return "envs/airline/env.py"


def _rewrite_state(b: Path) -> str:
    p = b / "states" / "airline.json"
    st = json.loads(p.read_text(encoding="utf-8"))
    st["globals"] = {**st.get("globals", {}), "injected": 1}
    p.write_text(json.dumps(st), encoding="utf-8")
    return "states/airline.json"


def _edit_task_line(b: Path) -> str:
    p = b / "tasks" / "airline.jsonl"
    lines = p.read_text(encoding="utf-8").splitlines()
    t = json.loads(lines[0])
    t["instruction"] = "Do something else entirely."
    lines[0] = json.dumps(t)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "tasks/airline.jsonl"


def _missing_task_file(b: Path) -> str:
    (b / "tasks" / "airline.jsonl").unlink()
    return "tasks/airline.jsonl"


def _missing_state_file(b: Path) -> str:
    (b / "states" / "airline.json").unlink()
    return "states/airline.json"


def _missing_env_module(b: Path) -> str:
    (b / "envs" / "airline" / "env.py").unlink()
    return "envs/airline/env.py"


def _extra_env(b: Path) -> str:
    shutil.copytree(b / "envs" / "helpdesk", b / "envs" / "intruder")
    return "envs/intruder/env.py"


TAMPERS = {
    "edited-env-py": _edit_env_py,
    "rewritten-state": _rewrite_state,
    "edited-task-line": _edit_task_line,
    "missing-task-file": _missing_task_file,
    "missing-state-file": _missing_state_file,
    "missing-env-module": _missing_env_module,
    "extra-unknown-env": _extra_env,
}


def test_manifest_hashes_are_the_sha256_of_the_files(pristine):
    """The guarantee rests on the compiler's records: every module/state/tasks record is the file's SHA-256."""
    m = json.loads((pristine / "manifest.json").read_text())
    n = 0
    for rec in m["envs"].values():
        for kind in ("module", "state", "tasks"):
            r = rec[kind]
            assert hashlib.sha256((pristine / r["path"]).read_bytes()).hexdigest() == r["hash"], r["path"]
            n += 1
    assert n == 6
    b = load(pristine)
    assert b.modified == [] and sorted(b.envs) == ["airline", "helpdesk"] and len(b.tasks) == 8


@pytest.mark.parametrize("kind", sorted(TAMPERS))
def test_eval_refuses_each_tampering_and_runs_with_the_flag(pristine, tmp_path, kind):
    b = _copy(pristine, tmp_path)
    rel = TAMPERS[kind](b)
    out = tmp_path / "runs"
    r = CliRunner().invoke(app, ["eval", str(b), "-q", "-o", str(out)])
    assert r.exit_code == 1, r.output
    assert r.output.startswith("error[corrupt-build]: the build differs from what `forgec compile` wrote: 1 file ")
    assert f"= note: {rel}: " in r.output
    assert "recompile with `forgec compile" in r.output and "--allow-modified-build" in r.output
    assert "Traceback" not in r.output and not out.exists()  # nothing ran, nothing written
    assert not (tmp_path / "imported.txt").exists()

    r = CliRunner().invoke(app, ["eval", str(b), "-q", "-o", str(out), "--allow-modified-build"])
    assert r.exit_code == 0, r.output
    assert "warning[corrupt-build]: using a modified build (1 file(s)" in r.output and rel in r.output
    res = json.loads((out / "run_results.json").read_text())
    assert res["metadata"]["build_modified"] and res["metadata"]["build_modified"][0].startswith(rel)
    # the tasks that lost their env module or state are left out, the others run
    want = 4 if kind in ("missing-task-file", "missing-state-file", "missing-env-module") else 8
    assert sum(1 for _ in (out / "episodes.jsonl").open()) == want


@pytest.mark.parametrize("kind", ["edited-env-py", "missing-state-file", "extra-unknown-env"])
def test_play_refuses_tampering(pristine, tmp_path, kind):
    b = _copy(pristine, tmp_path)
    rel = TAMPERS[kind](b)
    r = CliRunner().invoke(app, ["play", str(b)], input="")
    assert r.exit_code == 1 and "error[corrupt-build]" in r.output and rel in r.output
    r = CliRunner().invoke(app, ["play", str(b), "--allow-modified-build", "--task", "helpdesk/" + _first_task(b, "helpdesk")], input="")
    assert r.exit_code == 0 and "input ended" in r.output, r.output


def _first_task(b: Path, env: str) -> str:
    return json.loads((b / "tasks" / f"{env}.jsonl").read_text().splitlines()[0])["id"].split("/", 1)[1]


@pytest.mark.parametrize("cmd", ["train", "sft"])
def test_train_and_sft_refuse_before_torch_starts(pristine, tmp_path, cmd):
    b = _copy(pristine, tmp_path)
    _rewrite_state(b)
    r = CliRunner().invoke(app, [cmd, str(b), "--config", "cpu-tiny", "-o", str(tmp_path / "out")])
    assert r.exit_code == 1 and "error[corrupt-build]" in r.output and "states/airline.json" in r.output
    assert not (tmp_path / "out").exists()


def test_loader_api_keyword_and_what_runs_is_what_was_verified(pristine, tmp_path):
    b = _copy(pristine, tmp_path)
    _edit_env_py(b)
    _rewrite_state(b)
    with pytest.raises(BuildError) as e:
        load(b)
    d = e.value.diagnostic()
    assert d.code == "corrupt-build" and d.is_error and len(d.notes) == 2
    assert {n.split(":")[0] for n in d.notes} == {"envs/airline/env.py", "states/airline.json"}
    assert not (tmp_path / "imported.txt").exists()
    got = load(b, allow_modified_build=True)
    assert got.envs["airline"].TAMPERED == 1 and (tmp_path / "imported.txt").read_text() == "ran"
    t = next(t for t in got.tasks if t.env == "airline")
    assert got.initial_state(t)["globals"]["injected"] == 1
    # an unchanged copy loads strictly again, and is not served the tampered module from sys.modules
    clean = load(_copy(pristine, tmp_path / "again"))
    assert not hasattr(clean.envs["airline"], "TAMPERED")


def test_manifest_record_pointing_outside_the_build_is_refused(pristine, tmp_path):
    b = _copy(pristine, tmp_path)
    m = json.loads((b / "manifest.json").read_text())
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    m["envs"]["airline"]["state"] = {"path": "../secret.json", "hash": hashlib.sha256(b"{}").hexdigest()}
    (b / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BuildError, match="points outside the build"):
        load(b)


def test_unrecorded_state_file_is_checked_against_the_tasks_hash(tmp_path):
    """Hand-assembled builds (per-task state files the manifest does not record): the task's initial_state_hash guards them."""
    from runtime_build import make_build

    b = make_build(tmp_path / "fx")
    built = load(b)
    t = next(t for t in built.tasks if t.initial_state_file)
    built.new_env(t.env, t)  # the untouched file agrees with the task
    p = b / t.initial_state_file
    st = json.loads(p.read_text())
    coll = next(iter(st["entities"].values()))
    next(iter(coll.values()))["tampered"] = True
    p.write_text(json.dumps(st))
    with pytest.raises(BuildError, match="does not hash to the initial_state_hash"):
        load(b).new_env(t.env, t)


def test_verification_cost_is_small(pristine):
    """Hashing once per load: the check reads each file once; on this build it is a few ms (measured: ~4 ms for examples/)."""
    import time

    from forgec.runtime.loader import verify_files

    m = json.loads((pristine / "manifest.json").read_text())
    best = min(_timed(verify_files, pristine, m, time) for _ in range(5))
    assert best < 0.25
    assert verify_files(pristine, m).problems == []


def _timed(f, root, m, time) -> float:
    t = time.perf_counter()
    f(root, m)
    return time.perf_counter() - t


def test_a_module_calling_sys_exit_is_a_build_error_not_a_foreign_exit_status(pristine, tmp_path):
    """The attack found `eval` exiting 7; every status is now one README documents."""
    b = _copy(pristine, tmp_path)
    (b / "envs" / "airline" / "env.py").write_text("import sys\nsys.exit(7)\n", encoding="utf-8")
    for extra in ([], ["--allow-modified-build"]):
        r = subprocess.run([sys.executable, "-m", "forgec", "eval", str(b), "-q", "-o", str(tmp_path / "o"), *extra],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 1, (extra, r.returncode, r.stderr)
        assert "error[corrupt-build]" in r.stderr and "Traceback" not in r.stderr
    assert "failed to import: SystemExit: 7" in r.stderr
