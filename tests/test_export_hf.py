"""`forgec export hf`: the real `datasets.load_dataset` loads the export of any build, and every row gives back its task.

Checked against second sources: the rows against the task files themselves (`tasks/<env>.jsonl` read with the
standard `json` module, compared value by value with types, so 100.0 never comes back as 100), the Arrow schema of
every file against the column table written out here (docs/export.md), and the `prompt` column against the
messages `forgec eval`'s episode loop hands an agent at its first turn. Builds: examples/, tests/corpus/core, and ten
doc sets of tests/corpus/broad (some with no tasks at all), where `load_dataset("json", ...)` on the task files
fails with mixed types.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import BROAD, CORPUS
from servekit import compile_examples

from forgec.export.hf import row_to_task
from forgec.runtime import load
from forgec.runtime.episode import run_episode_sync
from forgec.runtime.types import AgentReply
from forgec.runtime.users import ScriptedUser

REPO = Path(__file__).resolve().parent.parent
BROAD_SETS = ["bfcl_calendar_events", "bfcl_repo_devops", "npm_doist_todoist_mcp", "npm_itseasy21_mcp_knowledge_graph", "npm_mcp_gsheets",
         "openapi_karakeep", "pypi_excel_mcp_server", "npm_todoist_mcp", "bfcl_image_actions", "pypi_opensearch_mcp_server_py"]

S, B, I = pa.string(), pa.bool_(), pa.int64()
# docs/export.md's column table, written out independently of forgec/export/hf.py
DOCUMENTED = pa.schema([
    ("id", S), ("env", S), ("schema_version", S),
    ("prompt", pa.list_(pa.struct([("role", S), ("content", S)]))),
    ("tools", S), ("instruction", S),
    ("user", pa.struct([("goal", S), ("persona", S), ("facts", S), ("scenario", S)])),
    ("gold_calls", pa.list_(pa.struct([("node", S), ("tool", S), ("arguments", S), ("result", S), ("write", B)]))),
    ("gold_diff", pa.list_(pa.struct([("op", S), ("path", S), ("before", S), ("after", S)]))),
    ("tell", pa.list_(S)), ("read_only", B),
    ("initial_state", S), ("initial_state_file", S), ("initial_state_hash", S), ("gold_state_hash", S),
    ("blueprint", pa.struct([("name", S), ("path", S), ("hash", S)])), ("seed", I),
    ("stats", pa.struct([(k, I) for k in ("calls", "write_calls", "reasoning_nodes", "inference_edges", "depth", "width", "user_facts")])),
])


def same(a, b, where="") -> None:
    """Equal JSON values with equal types all the way down (1 != 1.0 != True here)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} {a!r:.80} vs {type(b).__name__} {b!r:.80}"
    if isinstance(a, dict):
        assert set(a) == set(b), f"{where}: keys {sorted(set(a) ^ set(b))}"
        for k in a:
            same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{where}: lengths {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}/{i}")
    else:
        assert a == b, f"{where}: {a!r:.80} vs {b!r:.80}"


def forgec(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "forgec", *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def compile_docs(out: Path, *inputs: Path, n: int = 8) -> Path:
    r = forgec("compile", *map(str, inputs), "-o", str(out), "-n", str(n), "-q")
    assert r.returncode == 0, r.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def examples_build(tmp_path_factory):
    return compile_examples(tmp_path_factory.mktemp("hf") / "build")


def check_export(build: Path, out: Path, cache: Path) -> datasets.Dataset:
    r = forgec("export", "hf", str(build), "-o", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    lines = {}
    for f in sorted((build / "tasks").glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                lines[d["id"]] = d
    files = sorted((out / "data").glob("*.parquet"))
    assert files
    for f in files:  # every file has exactly the documented schema, whatever its values
        assert pq.read_schema(f).remove_metadata().equals(DOCUMENTED), f
    ds = datasets.load_dataset(str(out), split="train", cache_dir=str(cache))
    assert ds.num_rows == len(lines)
    assert sorted(ds["id"]) == sorted(lines)
    for row in ds:
        same(row_to_task(row), lines[row["id"]], row["id"])
        assert row["env"] == lines[row["id"]]["env"]
        assert json.loads(row["tools"])  # the env's tools, as JSON text
    for env in {d["env"] for d in lines.values()} - {"default"}:  # one config per env
        one = datasets.load_dataset(str(out), env, split="train", cache_dir=str(cache))
        assert sorted(one["id"]) == sorted(i for i, d in lines.items() if d["env"] == env)
    return ds


def test_examples_export_loads_and_round_trips(examples_build, tmp_path):
    ds = check_export(examples_build, tmp_path / "hf", tmp_path / "cache")
    b = load(examples_build)
    assert sorted(set(ds["env"])) == sorted(b.envs)
    tools = {env: json.loads(t) for env, t in zip(ds["env"], ds["tools"])}
    assert tools == {env: b.envs[env].TOOLS for env in b.envs}

    # the prompt column is what forgec eval's episode gives an agent first (system prompt, the simulated user's opening)
    class First:
        def __init__(self):
            self.seen: list = []

        def act_sync(self, messages, tools):
            self.seen = self.seen or [dict(m) for m in messages]  # the first turn's messages
            return AgentReply(content="###")

    rows = {r["id"]: r for r in ds}
    for t in b.tasks[::7]:
        run_episode_sync(b, t, agent := First(), ScriptedUser(t))
        assert rows[t.id]["prompt"] == [{"role": m["role"], "content": m["content"]} for m in agent.seen], t.id

    # exporting again replaces the previous export; a folder that is not one is refused, as is an unknown format
    assert forgec("export", "hf", str(examples_build), "-o", str(tmp_path / "hf")).returncode == 0
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me")
    r = forgec("export", "hf", str(examples_build), "-o", str(tmp_path / "notes"))
    assert r.returncode == 2 and "not a previous" in r.stderr and (tmp_path / "notes" / "mine.txt").read_text() == "keep me"
    assert forgec("export", "csv", str(examples_build), "-o", str(tmp_path / "x")).returncode == 2
    assert forgec("export", "hf", str(tmp_path / "nobuild"), "-o", str(tmp_path / "y")).returncode == 1


def test_a_tampered_build_is_refused(examples_build, tmp_path):
    import shutil

    b = tmp_path / "b"
    shutil.copytree(examples_build, b)
    f = next((b / "tasks").glob("*.jsonl"))
    f.write_text(f.read_text().replace('"read_only":false', '"read_only":true', 1))
    r = forgec("export", "hf", str(b), "-o", str(tmp_path / "hf"))
    assert r.returncode == 1 and "corrupt-build" in r.stderr
    assert not (tmp_path / "hf").exists()


def test_shared_corpus_export_loads_where_the_json_loader_fails(tmp_path):
    build = compile_docs(tmp_path / "b", CORPUS)
    with pytest.raises(Exception):  # the issue: mixed JSON types across tasks and envs
        datasets.load_dataset("json", data_files=str(build / "tasks" / "*.jsonl"), split="train", cache_dir=str(tmp_path / "c0"))
    check_export(build, tmp_path / "hf", tmp_path / "cache")


def test_broad_corpus_export_loads_and_round_trips(tmp_path):
    build = compile_docs(tmp_path / "b", *(BROAD / n for n in BROAD_SETS), n=40)
    ds = check_export(build, tmp_path / "hf", tmp_path / "cache")
    assert ds.num_rows > 0
    assert len(list((tmp_path / "hf" / "data").glob("*.parquet"))) == len(BROAD_SETS)  # envs without tasks too (0 rows)


def test_a_build_without_tasks_exports_the_schema_and_says_it_cannot_be_loaded(tmp_path):
    build = compile_docs(tmp_path / "b", CORPUS / "mcp_server_time", n=4)
    assert not (build / "tasks" / "mcp_server_time.jsonl").read_text().strip()  # this doc set gives no task
    r = forgec("export", "hf", str(build), "-o", str(tmp_path / "hf"))
    assert r.returncode == 0 and "warning[empty-build]" in r.stderr
    (f,) = (tmp_path / "hf" / "data").glob("*.parquet")
    assert pq.read_schema(f).remove_metadata().equals(DOCUMENTED) and pq.read_metadata(f).num_rows == 0
