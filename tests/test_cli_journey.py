"""The CLI as a user meets it: exit codes (0 clean, 1 errors, 2 usage/internal, 3 fmt --check),
messages that name the problem, and no tracebacks, through the real `forgec` entry point."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgec.cli import app

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def forgec(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run the installed entry point (forgec.cli:main), as a user's shell would."""
    return subprocess.run([sys.executable, "-m", "forgec", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def small_build(tmp_path_factory) -> Path:
    """airline only, 6 blueprints, no oracle pass: a real compile that takes a second or two."""
    root = tmp_path_factory.mktemp("journey")
    shutil.copy(EXAMPLES / "airline.json", root / "airline.json")
    r = forgec("compile", "airline.json", "-o", "build", "-n", "6", "--no-oracle", "-q", cwd=root)
    assert r.returncode == 0, r.stderr
    return root


# ---- usage errors: typer >= 0.20 raises its vendored click's exceptions; they must not read as bugs


@pytest.mark.parametrize(
    "args, message",
    [
        (["compile"], "Missing argument 'inputs'"),
        (["compile", "x", "--bogus"], "No such option: --bogus"),
        (["nope"], "No such command 'nope'"),
        (["compile", "x", "--format", "jsn"], "Invalid value for '--format'"),
        (["compile", "x", "--synth", "rule"], "Invalid value for '--synth'"),
        (["compile", "x", "--refine", "yes"], "Invalid value for '--refine'"),
    ],
)
def test_usage_errors_exit_2_with_clicks_message_not_internal_error(args, message):
    r = forgec(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr
    assert "internal-error" not in r.stderr and "Traceback" not in r.stderr


def test_bare_forgec_prints_help_not_an_internal_error():
    r = forgec()
    assert r.returncode == 2
    out = r.stdout + r.stderr
    assert "Usage:" in out and "COMMAND [ARGS]" in out and "compile" in out and "internal-error" not in out


def test_compile_bad_call_counts_are_one_usage_error_before_any_work(tmp_path):
    r = forgec("compile", str(EXAMPLES), "-o", str(tmp_path / "b"), "--min-calls", "5", "--max-calls", "2")
    assert r.returncode == 2
    assert "error[usage]" in r.stderr and "--min-calls 5, --max-calls 2" in r.stderr
    assert "env-failed" not in r.stderr and not (tmp_path / "b").exists()


def test_compile_of_only_broken_docs_prints_the_diagnostic_and_no_empty_table(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.json").write_text('{"tools": [\n', encoding="utf-8")
    r = forgec("compile", "docs", "-o", "b", cwd=tmp_path)
    assert r.returncode == 1
    assert "error[malformed-json]" in r.stderr and "docs/x.json:2:1" in r.stderr
    assert "forgec build ->" not in r.stderr and "1 error, 0 warnings" in r.stderr


# ---- hand-edited blueprints: errors are reported on every build, not only the first


def test_broken_hand_edit_is_reported_again_by_the_next_compile(small_build):
    bp = sorted((small_build / "build" / "blueprints" / "airline").glob("*.forge"))[0]
    good = bp.read_text(encoding="utf-8")
    call = next(line for line in good.splitlines() if line.strip().startswith("call "))
    tool = call.split("=", 1)[1].strip().split("(", 1)[0]
    bp.write_text(good.replace(f"= {tool}(", f"= {tool}_typo(", 1), encoding="utf-8")
    try:
        for attempt in (1, 2):  # the second build hits the incremental cache
            r = forgec("compile", "airline.json", "-o", "build", "-n", "6", "--no-oracle", "--format", "concise", cwd=small_build)
            assert r.returncode == 1, (attempt, r.stderr)
            rel = f"build/blueprints/airline/{bp.name}"
            lines = [x for x in r.stderr.splitlines() if "error[unknown-tool]" in x]
            # one line per diagnostic, never wrapped at the console width
            assert len(lines) == 1 and lines[0].startswith(rel + ":"), (attempt, r.stderr)
            assert lines[0].endswith(f"env 'airline' has no tool '{tool}_typo'"), lines[0]
            assert "1 error, 0 warnings" in r.stderr
            assert "kept 1 hand-edited or added blueprint(s): 0 compiled to tasks, 1 rejected" in r.stderr
    finally:
        bp.write_text(good, encoding="utf-8")
    r = forgec("compile", "airline.json", "-o", "build", "-n", "6", "--no-oracle", "-q", cwd=small_build)
    assert r.returncode == 0, r.stderr
    assert "kept 1 hand-edited or added blueprint(s): 1 compiled to tasks, 0 rejected" in r.stderr


# ---- verify / eval on the wrong folder or names


def test_verify_on_a_non_build_and_an_unknown_env(small_build, tmp_path):
    r = forgec("verify", str(EXAMPLES))
    assert r.returncode == 1 and "is not a forgec build" in r.stderr and "forgec compile DOCS -o BUILD" in r.stderr
    r = forgec("verify", "build", "--env", "airlin", cwd=small_build)
    assert r.returncode == 1
    assert "error[unknown-env]: 'build' has no environment named airlin" in r.stderr and "its environments are: airline" in r.stderr


def test_verify_table_explains_its_errors_column(small_build):
    r = forgec("verify", "build", cwd=small_build)
    assert r.returncode == 0, r.stderr
    assert "errors: of those, calls the tool refused with a domain error" in r.stdout


def test_eval_usage_errors_exit_2_and_unknown_names_get_suggestions(small_build):
    r = forgec("eval", "build", "--agent", "gpt", cwd=small_build)
    assert r.returncode == 2 and "unknown --agent 'gpt'; choose oracle, openai, hf or random" in r.stderr
    r = forgec("eval", "build", "-k", "0", cwd=small_build)
    assert r.returncode == 2 and "-k must be at least 1" in r.stderr
    r = forgec("eval", "build", "--env", "airlin", "-q", cwd=small_build)
    assert r.returncode == 1
    err = " ".join(r.stderr.split())  # independent of any wrapping
    assert "no task 'airlin' in this build" in err and "did you mean airline?" in err
    r = forgec("eval", "build", "--env", "airline", "-q", "-o", "runs/e", cwd=small_build)
    assert r.returncode == 0, r.stderr
    res = json.loads((small_build / "runs" / "e" / "run_results.json").read_text())
    assert res["metadata"]["args"]["tasks"] == [json.loads(x)["id"] for x in (small_build / "build" / "tasks" / "airline.jsonl").read_text().splitlines()]


# ---- play: typos at the keyboard are not moves; the help names a real tool; unchanged state reads as such


def test_play_bad_json_is_reprompted_not_sent_and_unchanged_state_is_named(small_build):
    tasks = [json.loads(x) for x in (small_build / "build" / "tasks" / "airline.jsonl").read_text().splitlines()]
    lines = ['{"name": "get_user_details", "arguments": {"user_id": "x"}', "/help", "/quit"]
    r = CliRunner().invoke(app, ["play", str(small_build / "build"), "--task", tasks[0]["id"]], input="\n".join(lines) + "\n")
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.replace("│", " ").split())  # panels wrap at the terminal width: compare words only
    assert "Error: could not parse the tool call as JSON (Expecting ',' delimiter at column 59); nothing was sent" in out
    assert "tool calls: 0 (0 errors)" in out  # the typo did not reach the environment
    assert '"name": "get_order"' not in out  # the example names one of airline's tools
    assert 'e.g. {"name": "get_user_details", "arguments": {"user_id": "..."}}' in out
    assert "but it was left unchanged" in out and "got null" not in out


# ---- compile never destroys the user's files


def test_compile_refuses_an_out_folder_that_holds_the_docs_or_other_files(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(EXAMPLES / "airline.json", docs / "airline.json")
    r = forgec("compile", "docs", "-o", "docs", cwd=tmp_path)
    assert r.returncode == 2 and "'docs' is the input folder itself" in r.stderr
    r = forgec("compile", "docs/airline.json", "-o", "docs", cwd=tmp_path)
    assert r.returncode == 2 and "contains the input 'docs/airline.json'" in r.stderr
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("mine", encoding="utf-8")
    r = forgec("compile", "docs", "-o", "project", cwd=tmp_path)
    assert r.returncode == 2 and "'project' exists and is not a forgec build (no manifest.json)" in r.stderr
    r = forgec("compile", "docs", "-o", "project/notes.txt", cwd=tmp_path)
    assert r.returncode == 2 and "is a file" in r.stderr
    assert (docs / "airline.json").is_file() and (tmp_path / "project" / "notes.txt").read_text() == "mine"


# ---- a bad value in a hand-written blueprint is a rejected blueprint, not a crashed environment


def test_operator_type_errors_are_op_errors():
    from forgec.stdlib import ops

    with pytest.raises(ops.OpError, match="argmax: argmax\\(\\) of values that cannot be compared"):
        ops.apply("argmax", [[{"p": "a"}, {"p": 1.5}]], {"by": "p"})
    assert ops.apply("argmax", [[{"p": None}, {"p": 1.5}]], {"by": "p"}) == {"p": 1.5}  # a null is skipped, as max skips it
    assert ops.apply("argmax", [[{"p": 0.5}, {"p": 1.5}]], {"by": "p"}) == {"p": 1.5}


# ---- sft/train with the progress bar off still say what they are doing


def test_metrics_logger_without_progress_bar_prints_one_line_per_step(tmp_path, capsys):
    from forgec.train.logging import MetricsLogger

    lg = MetricsLogger(tmp_path, tensorboard=False, progress=False, total_steps=4, name="sft_metrics")
    lg.log(1, {"loss": 1.25}, info="loss 1.2500")
    lg.log(2, {"loss": 1.0})
    lg.close()
    assert capsys.readouterr().err == "sft step 1/4  loss 1.2500\nsft step 2/4\n"
    assert [json.loads(x)["loss"] for x in (tmp_path / "sft_metrics.jsonl").read_text().splitlines()] == [1.25, 1.0]


def test_ctrl_c_during_compile_leaves_no_half_build_and_says_so(tmp_path, tmp_path_factory):
    import signal

    from holdbuild import held_env, wait_held

    shutil.copy(EXAMPLES / "airline.json", tmp_path / "airline.json")
    hold = tmp_path_factory.mktemp("hold")
    p = subprocess.Popen([sys.executable, "-m", "forgec", "compile", "airline.json", "-o", "build", "-n", "400"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=held_env(hold))
    wait_held(hold, 1, p)  # mid-build, and it stays there until the signal (a state, not a time)
    assert any(tmp_path.glob(".build.scratch-*"))
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "interrupted: build not created" in err and "Traceback" not in err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["airline.json"]


def test_inspect_on_a_build_points_to_the_build_commands(small_build):
    r = forgec("inspect", "build", cwd=small_build)
    assert r.returncode == 2
    assert "error[usage]: 'build' is a forgec build, not tool documentation" in r.stderr
    assert "forgec stats build" in r.stderr and "unknown-format" not in r.stderr


def test_train_config_typos_name_the_intended_key(small_build):
    r = forgec("train", "build", "--config", "cpu-tiny", "--set", "optim.stepz=2", "--set", "rollout.group_sise=2", cwd=small_build)
    assert r.returncode == 1
    assert "optim.stepz: Extra inputs are not permitted" in r.stderr
    assert "did you mean `rollout.group_sise` -> `rollout.group_size`, `optim.stepz` -> `optim.steps`?" in r.stderr
    assert "import torch" not in r.stderr and "Traceback" not in r.stderr


def test_truncated_tasks_file_is_a_located_error_with_a_fix(small_build, tmp_path):
    b = tmp_path / "build"
    shutil.copytree(small_build / "build", b)
    tasks = b / "tasks" / "airline.jsonl"
    data = tasks.read_bytes()
    first_end = data.index(b"\n") + 1
    tasks.write_bytes(data[: first_end + 40])  # the second line cut mid-record
    for cmd in (["eval", str(b), "-q", "-o", str(tmp_path / "e")], ["play", str(b)]):
        r = forgec(*cmd, stdin="")
        assert r.returncode == 1, (cmd, r.stderr)
        assert "error[corrupt-build]: the build differs from what `forgec compile` wrote" in r.stderr  # the integrity check
        assert "tasks/airline.jsonl: differs from the SHA-256 in manifest.json" in r.stderr and "line 2 is not JSON" in r.stderr
        assert "= help: recompile with `forgec compile DOCS -o BUILD`" in r.stderr and "Traceback" not in r.stderr


def test_fmt_check_diff_stdin_and_missing_path(tmp_path):
    ugly = 'blueprint  y for airline{user{goal "g"}\n call a=get_user_details(user_id:"u1")}\n'
    pretty = 'blueprint y for airline {\n  user {\n    goal "g"\n  }\n  call a = get_user_details(user_id: "u1")\n}\n'
    (tmp_path / "u.forge").write_text(ugly, encoding="utf-8")
    r = forgec("fmt", "--check", "--diff", "u.forge", cwd=tmp_path)
    assert r.returncode == 3 and r.stdout.startswith("--- a/u.forge\n+++ b/u.forge\n")
    assert (tmp_path / "u.forge").read_text() == ugly  # --check changes nothing
    r = forgec("fmt", "-", stdin=ugly)
    assert r.returncode == 0 and r.stdout == pretty
    r = forgec("fmt", "missing.forge", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.startswith("error[path-not-found]: no such file or folder: missing.forge")


@pytest.mark.slow
def test_train_two_steps_then_resume_says_nothing_to_do(small_build, tmp_path):
    """A real run of the tiny model: per-step lines explain a zero loss, and a finished run's resume is not silent."""
    args = ["train", "build", "-c", "cpu-tiny", "-o", str(tmp_path / "rl"), "--set", "optim.steps=2", "--set", "rollout.tasks_per_step=2",
            "--set", "rollout.group_size=2", "--set", "checkpoint.every=1"]
    r = forgec(*args, cwd=small_build)
    assert r.returncode == 0, r.stderr[-3000:]
    steps = [x for x in r.stderr.splitlines() if x.startswith("train step ")]
    assert [x.split()[2] for x in steps] == ["1/2", "2/2"] and all(" groups trained " in x and " filtered " in x for x in steps)
    assert r.stdout.strip().startswith("done: 2 steps")
    r = forgec(*args, "--resume", cwd=small_build)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"nothing to do: {tmp_path / 'rl'} is already at step 2 of 2" in r.stdout


def test_check_and_fmt_on_folders_without_forge_files_and_on_tool_docs(tmp_path):
    shutil.copy(EXAMPLES / "airline.json", tmp_path / "airline.json")
    for cmd in ("check", "fmt"):
        r = forgec(cmd, ".", cwd=tmp_path)
        assert r.returncode == 0 and "no .forge files found in ." in r.stderr, (cmd, r.stderr)
    r = forgec("check", "airline.json", cwd=tmp_path)
    assert r.returncode == 1 and "error[syntax-error]" in r.stdout
    assert "note: `forgec check` reads .forge files; for tool documentation use `forgec inspect airline.json`" in r.stderr


def test_check_reports_syntax_and_semantic_errors_with_locations(tmp_path):
    (tmp_path / "broken.forge").write_text('blueprint x for airline {\n  call a = get_user_details(user_id: "u1"\n}\n', encoding="utf-8")
    r = forgec("check", "broken.forge", "--format", "concise", cwd=tmp_path)
    assert r.returncode == 1
    assert "broken.forge:3:1: error[syntax-error] unexpected '}'; expected ')', ','" in r.stdout.splitlines()
    assert r.stderr.strip().endswith("errors, 0 warnings")
    r = forgec("check", "broken.forge", "--format", "conscise", cwd=tmp_path)
    assert r.returncode == 2 and "Invalid value for '--format'" in r.stderr


def test_corrupt_manifest_is_a_truthful_warning_and_edits_survive(small_build, tmp_path):
    b = tmp_path / "build"
    shutil.copytree(small_build / "build", b)
    (b / "manifest.json").write_text('{"metadata": {\n', encoding="utf-8")
    n = len(list((b / "blueprints" / "airline").glob("*.forge")))
    r = forgec("compile", str(small_build / "airline.json"), "-o", str(b), "-n", "6", "--no-oracle", "--format", "concise")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if "warning[corrupt-build]" in x)
    assert line.startswith(f"{b}/manifest.json: warning[corrupt-build] previous manifest.json is unreadable (Invalid JSON: EOF while parsing")
    assert line.endswith("every .forge file under blueprints/ is kept as a hand-added blueprint")
    assert f"kept {n} hand-edited or added blueprint(s): {n} compiled to tasks, 0 rejected" in r.stderr
    assert json.loads((b / "manifest.json").read_text())["envs"]["airline"]["task_count"] == n
