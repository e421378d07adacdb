"""`forgec play` and `forgec eval` through the CLI (typer's runner, real build folders)."""

from __future__ import annotations

import json

import pytest
from runtime_build import make_build
from typer.testing import CliRunner

from forgec.cli import app


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return make_build(tmp_path_factory.mktemp("b"))


def test_play_scripted_session_scores_one(build_dir):
    lines = ["/tools", "{bad json", '{"name": "nope", "arguments": {}}', '{"name": "get_order", "arguments": {"order_id": "o_2"}}',
             "The total of your order is 89. All done!"]
    r = CliRunner().invoke(app, ["play", str(build_dir), "--task", "shop/order_total"], input="\n".join(lines) + "\n")
    assert r.exit_code == 0, r.output
    out = r.output
    assert "find_user_by_email" in out  # tools listed
    assert "I want to know the total of my order" in out  # the user's opening
    assert "Error: could not parse the tool call" in out and "Error: unknown tool 'nope'" in out
    assert '"total": 89' in out
    assert "reward: 1" in out and "state matches gold: True" in out and "tells told: [True]" in out


def test_play_wrong_answer_shows_diff_and_zero(build_dir):
    lines = ['{"name": "cancel_order", "arguments": {"order_id": "o_3", "reason": "ordered_by_mistake"}}', "Done."]
    r = CliRunner().invoke(app, ["play", str(build_dir), "--task", "shop/cancel_order"], input="\n".join(lines) + "\n")
    assert r.exit_code == 0, r.output
    assert "reward: 0" in r.output and "missing" in r.output and "/entities/Order/o_1/status" in r.output


def test_play_input_end_and_bad_task(build_dir, tmp_path):
    r = CliRunner().invoke(app, ["play", str(build_dir)], input="")
    assert r.exit_code == 0 and "input ended" in r.output
    r = CliRunner().invoke(app, ["play", str(build_dir), "--task", "shop/nope"])
    assert r.exit_code == 1 and "error[unknown-task]" in r.output
    r = CliRunner().invoke(app, ["play", str(tmp_path / "missing")])
    assert r.exit_code == 1 and "error[missing-build]" in r.output and "Traceback" not in r.output


def test_eval_oracle_and_random_tables(build_dir, tmp_path):
    r = CliRunner().invoke(app, ["eval", str(build_dir), "-k", "3", "-o", str(tmp_path / "o"), "-q"])
    assert r.exit_code == 0, r.output
    assert "pass^3" in r.output and "1.000" in r.output
    data = json.loads((tmp_path / "o" / "run_results.json").read_text())
    assert data["pass_hat_k"] == {"overall": {"1": 1.0, "2": 1.0, "3": 1.0}, "per_env": {"shop": {"1": 1.0, "2": 1.0, "3": 1.0}}}
    assert data["summary"]["episodes"] == 15 and data["metadata"]["args"]["agent"] == "oracle"
    r = CliRunner().invoke(app, ["eval", str(build_dir), "--agent", "random", "-k", "2", "--tasks", "shop", "-o", str(tmp_path / "r"), "-q"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "r" / "run_results.json").read_text())["pass_hat_k"]["overall"]["1"] == 0.0


def test_eval_bad_inputs_are_diagnostics(build_dir, tmp_path):
    old = make_build(tmp_path / "old", forgec_version="0.0.1")
    r = CliRunner().invoke(app, ["eval", str(old)])
    assert r.exit_code == 1 and "error[build-version-mismatch]" in r.output and "Traceback" not in r.output
    for args, msg in ((["--agent", "gpt"], "unknown --agent"), (["--user", "llm"], "needs --user-base-url"),
                      (["--judge", "llm"], "needs --judge-base-url"), (["--agent", "hf"], "needs --agent-path"),
                      (["--tasks", "shop/nope"], "no task 'shop/nope'"), (["-k", "0"], "-k must be at least 1")):
        r = CliRunner().invoke(app, ["eval", str(build_dir), *args, "-o", str(tmp_path / "x")])
        usage = msg != "no task 'shop/nope'"  # usage errors exit 2 (docs: 0 clean, 1 errors, 2 internal/usage)
        assert r.exit_code == (2 if usage else 1) and msg in r.output, (args, r.output)
