"""`forgec inspect`: the JSON document, tables, diagnostics formats and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml
from typer.testing import CliRunner

from conftest import CORPUS, EXAMPLES, REPO
from forgec.cli import app

runner = CliRunner()


def inspect(*args: str):
    return runner.invoke(app, ["inspect", *args])


def test_json_document_for_examples():
    r = inspect(str(EXAMPLES), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) == {"environments", "diagnostics"} and doc["diagnostics"] == []
    names = {e["name"]: [t["name"] for t in e["tools"]] for e in doc["environments"]}
    # tool names straight from the raw files
    airline = [t["function"]["name"] for t in json.loads((EXAMPLES / "airline.json").read_text())]
    helpdesk = [t["name"] for t in json.loads((EXAMPLES / "helpdesk.json").read_text())["tools"]]
    api = yaml.safe_load((EXAMPLES / "bookstore.yaml").read_text())
    bookstore = [op["operationId"] for item in api["paths"].values() for m, op in item.items() if m in ("get", "post", "put", "patch", "delete")]
    assert names == {"airline": airline, "bookstore": bookstore, "helpdesk": helpdesk}
    tool = doc["environments"][0]["tools"][0]
    assert {"name", "description", "params", "returns", "annotations", "source", "format"} <= set(tool)
    assert tool["params"][0]["name"] == "user_id" and tool["params"][0]["type"]["kind"] == "string"


def test_table_output():
    r = inspect(str(CORPUS / "tau_bench_airline"), str(CORPUS / "mcp_server_git"))
    assert r.exit_code == 0
    out = r.stdout
    assert "tau_bench_airline: 14 tools (openai)" in out and "mcp_server_git: 12 tools (mcp)" in out
    assert "user_id*: string" in out
    assert "read-only" in out and "destructive" in out
    assert "array[object{first_name," in out  # rich markup must not eat [...]


def test_errors_exit_1_and_every_format(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"tools": [\n  {"name": "x",}\n]}\n')
    good = tmp_path / "good.json"
    good.write_text('[{"name": "ok", "parameters": {}}]')
    r = inspect(str(tmp_path), "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert [e["name"] for e in doc["environments"]] == ["good"]
    (d,) = doc["diagnostics"]
    assert (d["code"], d["severity"], d["span"]["line"], d["span"]["col"]) == ("malformed-json", "error", 2, 16)
    r = inspect(str(bad), "--format", "concise")
    assert r.exit_code == 1
    assert f"{bad}:2:16: error[malformed-json]" in r.stderr
    r = inspect(str(bad), "--format", "json")
    assert r.exit_code == 1 and json.loads(r.stderr)[0]["span"]["col"] == 16
    r = inspect(str(bad))
    assert "error[malformed-json]" in r.stderr and f" --> {bad}:2:16" in r.stderr and "1 error" in r.stderr


def test_warnings_exit_0(tmp_path):
    p = tmp_path / "w.json"
    p.write_text('[{"name": "f", "parameters": {"type": "object", "properties": {"x": {"description": "?"}}}}]')
    r = inspect(str(p), "--json")
    assert r.exit_code == 0
    assert [d["code"] for d in json.loads(r.stdout)["diagnostics"]] == ["missing-param-type"]


def test_env_override():
    r = inspect(str(CORPUS / "mcp_server_time"), "--env", "Clock", "--json")
    assert r.exit_code == 0 and [e["name"] for e in json.loads(r.stdout)["environments"]] == ["clock"]


def test_internal_error_exits_2(monkeypatch):
    import forgec.frontends

    def boom(*a, **k):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(forgec.frontends, "read_paths", boom)
    r = inspect(str(EXAMPLES))
    assert r.exit_code == 2 and "kaboom" in r.stderr


def test_real_entry_point_without_torch(tmp_path):
    """Through `python -m forgec`: exit codes and no torch import on the inspect path."""
    code = (
        "import sys, atexit\n"
        "atexit.register(lambda: sys.stderr.write('TORCH=%s\\n' % ('torch' in sys.modules)))\n"
        "sys.argv = ['forgec'] + sys.argv[1:]\n"
        "from forgec.cli import main\n"
        "main()\n"
    )
    r = subprocess.run([sys.executable, "-c", code, "inspect", "examples", "--json"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "TORCH=False" in r.stderr
    assert json.loads(r.stdout)["environments"][0]["tools"][0]["source"]["file"] == "examples/airline.json"
    r = subprocess.run([sys.executable, "-m", "forgec", "inspect", str(tmp_path / "nope.json")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "error[path-not-found]" in r.stderr and "Traceback" not in r.stderr


def test_json_output_is_byte_identical_across_runs_and_hash_seeds():
    outs = []
    for seed in ("1", "12345"):
        r = subprocess.run(
            [sys.executable, "-m", "forgec", "inspect", "examples", str(CORPUS), "--json"],
            cwd=REPO, capture_output=True, text=True, timeout=120, env={**__import__("os").environ, "PYTHONHASHSEED": seed},
        )
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]
