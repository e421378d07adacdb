"""Nothing lost (issue 14): hand edits survive every failing compile and the next one; a build
survives SIGKILL at any point (the swap is recoverable by every command); `-j` workers die with
their parent; an incremental build reports what a fresh one does."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import forgec.build as B
from forgec.build import CompileOptions, compile_build
from forgec.swap import old_path, recover_build, swap_in
from holdbuild import held_env, wait_held

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
N = 8
ENV = "airline"


def _compile(out: Path, inputs=None, **kw):
    kw.setdefault("tasks_per_env", N)
    kw.setdefault("oracle_check", False)
    return compile_build(CompileOptions(inputs=inputs or [EXAMPLES], out=out, **kw))


def _sources(out: Path) -> dict[str, bytes]:
    """Every file under src/ and blueprints/: what a user may have edited."""
    return {str(p.relative_to(out)): p.read_bytes() for sub in ("src", "blueprints") for p in sorted((out / sub).rglob("*"))
            if p.is_file()}


def _forgec(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "forgec", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    out = tmp_path_factory.mktemp("safety") / "build"
    assert _compile(out).ok
    return out


@pytest.fixture
def build(base, tmp_path):
    out = tmp_path / "build"
    shutil.copytree(base, out)
    return out


def _hand_edit(out: Path) -> tuple[Path, Path]:
    """Edit one sampled blueprint and add one of the user's own; returns both paths."""
    m = json.loads((out / "manifest.json").read_text())
    rec = next(v for _, v in sorted(m["envs"][ENV]["blueprints"].items()) if v["task"])
    edited = out / rec["path"]
    text = edited.read_text()
    edited.write_text(text.replace('goal "', 'goal "(edited) ', 1))
    added = out / "blueprints" / ENV / "my_own.forge"
    import re

    added.write_text(re.sub(r"^blueprint \w+", "blueprint my_own", text, count=1, flags=re.M))
    return edited, added


def _first_bp(out: Path) -> Path:
    return sorted((out / "blueprints" / ENV).glob("*.forge"))[0]


def _typo(out: Path) -> None:
    p = out / "src" / ENV / "env.forge"
    p.write_text(p.read_text().replace("{", "{{ oops", 1))


def _surrogate(out: Path) -> None:
    p = _first_bp(out)
    p.write_text(p.read_text().replace('goal "', 'goal "\\udfff', 1))


def _long_import(out: Path) -> None:
    p = _first_bp(out)
    p.write_text('import "' + "a" * 100_000 + '"\n' + p.read_text())


def _corrupt_tasks(out: Path) -> None:
    with open(out / "tasks" / f"{ENV}.jsonl", "a") as f:
        f.write("{broken\n")


def _corrupt_state(out: Path) -> None:
    (out / "states" / f"{ENV}.json").write_text("xx")


@pytest.mark.parametrize("break_it", [_typo, _surrogate, _long_import, _corrupt_tasks, _corrupt_state])
def test_every_hand_edit_survives_a_failing_compile_and_the_next(build, break_it):
    _hand_edit(build)
    break_it(build)
    before = _sources(build)
    _compile(build)
    assert _sources(build) == before  # nothing lost, nothing rewritten
    _compile(build)
    assert _sources(build) == before


def test_a_failed_env_is_marked_kept_and_rebuilds_once_fixed(build):
    edited, added = _hand_edit(build)
    src = build / "src" / ENV / "env.forge"
    good = src.read_text()
    _typo(build)
    res = _compile(build)
    assert not res.ok
    m = json.loads((build / "manifest.json").read_text())
    e = m["envs"][ENV]
    assert m["metadata"]["schema_version"] == "1.2"
    assert e["failed"] and e["task_count"] == 0 and e["module"] is None and e["tasks"] is None
    assert not (build / "envs" / ENV).exists() and not (build / "tasks" / f"{ENV}.jsonl").exists()
    assert {d.code for d in res.diagnostics} >= {"env-failed", "env-sources-kept"}
    assert [r.name for r in res.failed] == [ENV]
    for other in ("bookstore", "helpdesk"):  # the other envs are built as usual
        assert m["envs"][other]["failed"] is None and m["envs"][other]["task_count"] > 0
    # the runtime still loads the build (the failed env simply has no tasks)
    from forgec.runtime import load

    b = load(build)
    assert ENV not in b.envs and {t.env for t in b.tasks} == {"bookstore", "helpdesk"}
    # fix the typo: the env builds again from the kept sources, hand edits included
    src.write_text(good + "\n")
    res = _compile(build)
    assert res.ok, [d.message for d in res.diagnostics if d.is_error]
    m = json.loads((build / "manifest.json").read_text())
    bps = m["envs"][ENV]["blueprints"]
    assert m["envs"][ENV]["failed"] is None and m["envs"][ENV]["src_origin"] == "edited"
    assert bps["my_own"]["origin"] == "user" and bps["my_own"]["task"] == f"{ENV}/my_own"
    assert bps[edited.stem]["origin"] == "edited"
    goals = {json.loads(line)["blueprint"]["name"]: json.loads(line)["user"]["goal"]
             for line in (build / "tasks" / f"{ENV}.jsonl").read_text().splitlines()}
    assert goals[edited.stem].startswith("(edited) ")


def test_an_exception_in_a_stage_keeps_the_env_sources(build, monkeypatch):
    """Any unexpected failure of one env (not only a check error) keeps its sources."""
    _hand_edit(build)
    before = _sources(build)
    real = B._prev_tasks

    def boom(job):
        if job.name == ENV:
            raise RuntimeError("injected")
        return real(job)

    monkeypatch.setattr(B, "_prev_tasks", boom)
    res = _compile(build)
    assert any(d.code == "env-failed" and "injected" in d.message for d in res.diagnostics)
    assert _sources(build) == before
    assert "injected" in json.loads((build / "manifest.json").read_text())["envs"][ENV]["failed"]


def test_corrupt_derived_files_are_rebuilt_not_trusted(base, build):
    _corrupt_tasks(build)
    _corrupt_state(build)
    (build / "envs" / ENV / "env.py").write_text("raise SystemExit('tampered')\n")
    res = _compile(build)
    assert res.ok
    for rel in (f"tasks/{ENV}.jsonl", f"states/{ENV}.json", f"envs/{ENV}/env.py"):
        assert (build / rel).read_bytes() == (base / rel).read_bytes(), rel


def test_folder_named_like_a_blueprint_is_a_diagnostic_and_kept(build):
    d = build / "blueprints" / ENV / "drafts.forge"
    d.mkdir()
    (d / "idea.forge").write_text("// not yet\n")
    (build / "blueprints" / ENV / "NOTES.md").write_text("mine\n")
    res = _compile(build)
    assert res.ok
    assert [d.code for d in res.diagnostics if d.severity.value == "warning"] == ["blueprint-not-a-file"]
    assert (d / "idea.forge").read_text() == "// not yet\n"
    assert (build / "blueprints" / ENV / "NOTES.md").read_text() == "mine\n"


# --------------------------------------------------------------------------- the swap


def test_kill_between_the_two_renames_then_every_reader_finds_the_build(build, tmp_path):
    """A real SIGKILL right after `BUILD -> .BUILD.old` (the two-rename fallback)."""
    tmp = tmp_path / ".build.tmp-x"
    shutil.copytree(build, tmp)
    (tmp / "marker").write_text("new")
    code = (
        "import os, signal; from pathlib import Path; import forgec.swap as S\n"
        "real = os.rename\n"
        "def rename(a, b):\n"
        "    real(a, b)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "S.os.rename = rename\n"
        f"S.swap_in(Path({str(tmp)!r}), Path({str(build)!r}), atomic=False)\n"
    )
    p = subprocess.run([sys.executable, "-c", code])
    assert p.returncode == -signal.SIGKILL
    assert not build.exists() and old_path(build).is_dir()  # the state the kill left
    r = _forgec("check", str(build / "blueprints"), "--format", "concise")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (build / "manifest.json").is_file() and not old_path(build).exists()
    os.rename(build, old_path(build))
    r = _forgec("stats", str(build))
    assert r.returncode == 0, r.stderr
    os.rename(build, old_path(build))
    from forgec.runtime import load

    assert len(load(build).tasks) == sum(e["task_count"] for e in json.loads((build / "manifest.json").read_text())["envs"].values())


def test_swap_exchange_and_fallback_both_leave_the_new_build(tmp_path):
    for atomic in (True, False):
        out, tmp = tmp_path / f"b{atomic}", tmp_path / f".b{atomic}.tmp-1"
        out.mkdir()
        (out / "v").write_text("old")
        tmp.mkdir()
        (tmp / "v").write_text("new")
        swap_in(tmp, out, atomic=atomic)
        assert (out / "v").read_text() == "new" and not tmp.exists() and not old_path(out).exists()
    assert recover_build(tmp_path / "nothing" / "here") is False


def test_sigkill_at_random_points_always_leaves_a_usable_build(build, tmp_path):
    from forgec.runtime import load

    code = (
        "from pathlib import Path; from forgec.build import CompileOptions, compile_build;"
        f"compile_build(CompileOptions(inputs=[Path({str(EXAMPLES)!r})], out=Path({str(build)!r}), seed={{seed}}, "
        f"tasks_per_env={N}, oracle_check=False))"
    )
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code.format(seed=9)], check=True)
    full = time.perf_counter() - t0
    rnd = random.Random(1234)
    for i in range(5):
        p = subprocess.Popen([sys.executable, "-c", code.format(seed=10 + i)])
        time.sleep(rnd.uniform(0.2, full))
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        r = _forgec("check", str(build), "--format", "concise")  # recovers first when needed
        assert r.returncode == 0, (i, r.stdout[-2000:], r.stderr[-2000:])
        b = load(build)
        m = json.loads((build / "manifest.json").read_text())
        assert len(b.tasks) == sum(e["task_count"] for e in m["envs"].values()) > 0
    assert _compile(build).ok
    assert not list(tmp_path.glob(".build.tmp-*")) and not list(tmp_path.glob(".build.scratch-*"))


# --------------------------------------------------------------------------- -j workers


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _running(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _held_workers(tmp_path: Path, hold: Path, n: str, stderr) -> tuple[subprocess.Popen, list[int]]:
    """`forgec compile examples -j 2` with both workers held mid-build (each inside an env, its scratch folder made):
    the signal that follows reaches a compile that is certainly still running, however loaded the machine is."""
    p = subprocess.Popen([sys.executable, "-m", "forgec", "compile", str(EXAMPLES), "-o", str(tmp_path / "b"), "-n", n,
                          "-j", "2", "-q", "--no-oracle"], stdout=subprocess.DEVNULL, stderr=stderr, text=True, env=held_env(hold))
    workers = wait_held(hold, 2, p)
    assert set(workers) <= set(_children(p.pid) or []), "the held processes are the compile's two workers"
    return p, workers


def test_sigkill_of_a_parallel_compile_leaves_no_worker(tmp_path, tmp_path_factory):
    p, workers = _held_workers(tmp_path, tmp_path_factory.mktemp("hold"), "60", subprocess.DEVNULL)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    deadline = time.time() + 60  # each worker sees its parent gone within half a second; a loaded machine is slower
    while time.time() < deadline and any(_running(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _running(w)]


def test_ctrl_c_of_a_parallel_compile_stops_its_workers_and_leaves_nothing(tmp_path, tmp_path_factory):
    p, workers = _held_workers(tmp_path, tmp_path_factory.mktemp("hold"), "400", subprocess.PIPE)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "interrupted:" in err
    assert not [w for w in workers if _running(w)]
    assert sorted(x.name for x in tmp_path.iterdir()) == []  # no build, no tmp, no scratch folder


# --------------------------------------------------------------------------- incremental = fresh


def test_incremental_build_counts_the_warnings_a_fresh_build_does(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    tools = json.loads((EXAMPLES / "airline.json").read_text())
    tools.append({"type": "function", "function": {"name": "frobnicate", "description": "Frobnicates the thing.",
                                                   "parameters": {"type": "object", "properties": {"thing": {"type": "string"}},
                                                                  "required": ["thing"]}}})
    (docs / "airline.json").write_text(json.dumps(tools))
    out = tmp_path / "build"
    fresh = _compile(out, inputs=[docs])
    warnings = sorted((d.code, d.message) for d in fresh.diagnostics if d.severity.value == "warning")
    assert ("synth-conservative", "no synthesis rule applies to tool `frobnicate`; it gets a conservative effect (logs the call)") in warnings
    again = _compile(out, inputs=[docs])
    assert sorted((d.code, d.message) for d in again.diagnostics if d.severity.value == "warning") == warnings
    assert again.manifest.diagnostics == fresh.manifest.diagnostics
    assert again.manifest.diagnostics["warning"] == len(warnings)


# --------------------------------------------------------------------------- check and compile agree


def test_check_and_compile_agree_on_a_duplicate_blueprint_across_files(build):
    first = _first_bp(build)
    dup = build / "blueprints" / ENV / "zz_copy.forge"
    dup.write_text(first.read_text())
    name = next(line.split()[1] for line in first.read_text().splitlines() if line.startswith("blueprint "))
    res = _compile(build)
    compiled = sorted((Path(d.span.file).name, d.code) for d in res.diagnostics if d.is_error)
    assert compiled == [("zz_copy.forge", "duplicate-blueprint")]
    r = _forgec("check", str(build), "--format", "json")
    checked = sorted((Path(d["span"]["file"]).name, d["code"]) for d in json.loads(r.stdout) if d["severity"] == "error")
    assert checked == compiled and r.returncode == 1
    assert f"blueprint {name!r} is declared twice in env {ENV!r}" in r.stdout


def test_check_reads_a_build_blueprint_against_the_build_env_as_compile_does(build):
    """`forgec check` on a build's blueprint folder or file checks it against the build's env, as
    compile does (it used to report every blueprint's env as unknown); a blueprint importing a
    second declaration of its env is the same error in both."""
    for target in (build / "blueprints" / ENV, _first_bp(build)):
        r = _forgec("check", str(target), "--format", "concise")
        assert r.returncode == 0 and "error" not in r.stdout, (target, r.stdout[-1500:])
    lib = build / "blueprints" / ENV / "lib"
    lib.mkdir()
    bp = _first_bp(build)
    called = re.search(r"call \w+ = (\w+)\(", bp.read_text()).group(1)  # whichever tool the sampler chose
    other = (build / "src" / ENV / "env.forge").read_text().replace(f"tool {called}(", f"tool {called}_z(")
    (lib / "other.forge").write_text(other)
    bp.write_text('import "lib/other.forge"\n' + bp.read_text())
    res = _compile(build)
    compiled = sorted((Path(d.span.file).resolve(), d.code, d.message) for d in res.diagnostics if d.is_error)
    assert compiled == [((lib / "other.forge").resolve(), "duplicate-name", f"env '{ENV}' is declared twice")]
    rec = json.loads((build / "manifest.json").read_text())["envs"][ENV]["blueprints"][bp.stem]
    assert rec["task"] is None and rec["rejected"] == "check-failed"
    assert (lib / "other.forge").read_text() == other  # the helper file is carried into the new build
    r = _forgec("check", str(bp), "--format", "json")
    checked = sorted((Path(d["span"]["file"]).resolve(), d["code"], d["message"]) for d in json.loads(r.stdout) if d["severity"] == "error")
    assert checked == compiled and r.returncode == 1


def test_the_compile_summary_says_which_env_failed_and_what_was_kept(build):
    _typo(build)
    n = len(_sources(build))
    per_env = sum(1 for k in _sources(build) if k.startswith((f"src/{ENV}/", f"blueprints/{ENV}/")))
    r = _forgec("compile", str(EXAMPLES), "-o", str(build), "-n", str(N), "--no-oracle", "--format", "concise")
    assert r.returncode == 1
    assert f"env '{ENV}' failed: kept its previous src/ and blueprints/ ({per_env} file(s), hand edits included)" in " ".join(r.stderr.split())
    assert f"{ENV} (failed)" in r.stderr and "error[env-failed]" in r.stderr
    assert len(_sources(build)) == n


def test_a_reused_oracle_failure_is_reported_again(tmp_path, monkeypatch):
    """The oracle result is cached with the tasks; its failures must not vanish on the next build."""
    import forgec.runtime.eval as E

    real = E.oracle_self_check

    def one_failure(build, tasks=None):
        rep = real(build, tasks=tasks)
        r = rep["per_env"][ENV]
        r["failures"] = [f"{ENV}/made_up: injected"]
        r["passed"] = r["tasks"] - 1
        r["pass_rate"] = r["passed"] / r["tasks"]
        return rep

    out = tmp_path / "build"
    monkeypatch.setattr(E, "oracle_self_check", one_failure)
    fresh = _compile(out, oracle_check=True)
    monkeypatch.setattr(E, "oracle_self_check", real)
    again = _compile(out, oracle_check=True)
    for res in (fresh, again):
        assert [(d.code, d.message) for d in res.diagnostics if d.is_error] == [("oracle-failed", f"oracle failed task {ENV}/made_up: injected")]
    assert again.manifest.envs[ENV].oracle["failures"] == [f"{ENV}/made_up: injected"]


def test_a_stage_runs_only_when_its_declared_inputs_exist():
    job = B.EnvJob(ir=None, opts=None, prev=None, user_files={}, out=B.EnvOutput("x"), rec=None)
    ran = []
    stages = (B.Stage("a", lambda j: ran.append("a"), needs=("ir",), gives=()),)
    with pytest.raises(RuntimeError, match=r"stage a needs \['ir'\]"):
        B.run_stages(job, stages)
    job.ir = object()
    with pytest.raises(RuntimeError, match=r"stage b did not produce \['world'\]"):
        B.run_stages(job, stages + (B.Stage("b", lambda j: None, needs=("ir",), gives=("world",)),))
    assert ran == ["a"]
    assert [s.name for s in B.STAGES] == ["synth", "check", "codegen+verify", "state", "sample", "lower", "oracle", "toolmeta"]
