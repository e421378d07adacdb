"""Shared pytest fixtures and the --update-golden option."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

# A harness that starts the suite in the background of a non-interactive shell (or under nohup) leaves SIGINT and
# SIGHUP ignored, and every subprocess inherits that: the tests that Ctrl-C or hang up a compile or an eval would
# see it ignored. The suite runs with the defaults a terminal gives (a dry run of .ci/run launched so failed 5 tests).
for _sig in (signal.SIGINT, signal.SIGHUP):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, signal.default_int_handler if _sig == signal.SIGINT else signal.SIG_DFL)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DS_ACCELERATOR", "cpu")

REPO = Path(__file__).resolve().parent.parent
# Real, public tool docs and data, copied unchanged into the repository (sources and licenses: tests/corpus/README.md).
# The tests read them only through these four constants, never from outside the repository.
CORPUS = REPO / "tests" / "corpus" / "core"  # 8 doc sets in 5 formats
BROAD = REPO / "tests" / "corpus" / "broad"  # the broad corpus's doc sets that a test names
TAU_DATA = REPO / "tests" / "corpus" / "tau_bench_data"  # tau-bench's airline/retail world data, *.json.gz
TAU_CODE = REPO / "tests" / "corpus" / "tau_bench_code"  # tau-bench's tools and wiki.md (both domains) and retail's tasks_test.py
# tests/corpus holds upstream code (tau_bench_code/.../tasks_test.py matches pytest's `*_test.py`): data, not tests.
collect_ignore = ["corpus"]
EXAMPLES = REPO / "examples"


def mcp_tool(name: str, desc: str, props: dict, required=(), read_only: bool = False) -> dict:
    """One MCP `tools/list` entry, as a real server lists it (with `readOnlyHint` where the server gives it)."""
    t = {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props, "required": list(required)}}
    if read_only:
        t["annotations"] = {"readOnlyHint": True}
    return t


def tasks_of(build: Path) -> list[dict]:
    """Every task line of a build, in file order."""
    import json

    return [json.loads(line) for f in sorted((build / "tasks").glob("*.jsonl")) for line in f.read_text().splitlines() if line.strip()]


def schema_of(tmp: Path, tools: list[dict]):
    """The inferred schema of a `tools/list` written to `tmp/docs` (what `forgec compile` reads first)."""
    import json

    from forgec.frontends import read_paths
    from forgec.synth.schema import infer_schema

    d = tmp / "docs"
    d.mkdir()
    (d / "tools_list.json").write_text(json.dumps({"tools": tools}))
    envs, _ = read_paths([d])
    return infer_schema(envs[0])


def compile_doc(tmp: Path, env: str, filename: str, doc: dict, n: int) -> Path:
    """A doc written as a real user's folder (`docs/<env>/<file>`) and compiled with seed 0; the build's folder."""
    import json

    from forgec.build import CompileOptions, compile_build

    d = tmp / "docs" / env
    d.mkdir(parents=True)
    (d / filename).write_text(json.dumps(doc))
    out = tmp / "b"
    res = compile_build(CompileOptions(inputs=[d], out=out, tasks_per_env=n, seed=0, oracle_check=False))
    assert not [x for x in res.diagnostics if x.is_error], [x.message for x in res.diagnostics if x.is_error][:3]
    return out


def assert_checked_before(tasks: list[dict], write: str, check: str, key: str | None = None) -> None:
    """Every task that calls `write` reads the record with `check` before it, with the same arguments (or the same
    `key` argument): the docs' "check with `get_x` before deleting" is in the gold path (reviews 38 and 44)."""
    acting = [t for t in tasks if any(c["tool"] == write for c in t["gold_calls"])]
    assert acting, [t["instruction"] for t in tasks]
    for t in acting:
        tools = [c["tool"] for c in t["gold_calls"]]
        i = tools.index(write)
        assert check in tools[:i], tools
        got, done = t["gold_calls"][tools.index(check)]["arguments"], t["gold_calls"][i]["arguments"]
        assert (got[key] == done[key]) if key else (got == done), (got, done)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False, help="rewrite golden files from current output")


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def corpus() -> Path:
    assert CORPUS.is_dir(), f"test corpus missing at {CORPUS}"
    return CORPUS


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


def assert_yield_or_reason(build: Path, row: dict, bar: int = 50) -> None:
    """The corpus bar: an env with a write tool yields `bar` tasks, or its manifest says why it
    yields fewer (`stats.sampler_rejected`: the reasons its sampled scenarios were refused)."""
    import json

    if row["tasks"] >= bar:
        return
    env = json.loads((build / "manifest.json").read_text())["envs"][row["env"]]
    rejected = (env.get("stats") or {}).get("sampler_rejected") or {}
    assert sum(rejected.values()) > 0, f"{row['env']}: {row['tasks']} tasks (< {bar}) and no reason in its manifest"
