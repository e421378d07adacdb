"""`forgec export hf BUILD -o DIR`: a build's tasks as a Hugging Face dataset (Parquet) that `datasets.load_dataset` loads.

The task files (`tasks/<env>.jsonl`) hold values whose JSON type varies from task to task and env to env
(`tell`, `gold_diff[].before/after`, `user.facts.*`, gold call arguments and results), so Arrow cannot infer one
schema for them: `load_dataset("json", ...)` on a build fails with `ArrowInvalid`, depending on the sampled values.
Here every such value is a JSON string, every other field has a fixed Arrow type (`SCHEMA`, docs/export.md), and
every file of every build has exactly that schema. `row_to_task` turns a row back into the task file's JSON object.

Layout of DIR:

    README.md                   dataset card; its YAML `configs` name the files (`default`: every env; one config per env)
    data/<env>.parquet          one file per env, all with `SCHEMA`
    forgec-export.json          what was exported: format, schema version, build, envs and row counts
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from forgec.export import staged, write_marker
from forgec.tasks import Task, TaskStats
from forgec.runtime.episode import agent_system_prompt, build_policy
from forgec.runtime.scenario import opening

EXPORT_SCHEMA_VERSION = "1.0"


def _j(v: Any) -> str:
    """A polymorphic value as JSON text (floats keep their type: 100.0 stays 100.0)."""
    return json.dumps(v, ensure_ascii=False, allow_nan=False)


_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])

SCHEMA = pa.schema([
    ("id", pa.string()),
    ("env", pa.string()),
    ("schema_version", pa.string()),
    ("prompt", pa.list_(_MESSAGE)),
    ("tools", pa.string()),
    ("instruction", pa.string()),
    ("user", pa.struct([("goal", pa.string()), ("persona", pa.string()), ("facts", pa.string()), ("scenario", pa.string())])),
    ("gold_calls", pa.list_(pa.struct([("node", pa.string()), ("tool", pa.string()), ("arguments", pa.string()),
                                       ("result", pa.string()), ("write", pa.bool_())]))),
    ("gold_diff", pa.list_(pa.struct([("op", pa.string()), ("path", pa.string()), ("before", pa.string()), ("after", pa.string())]))),
    ("tell", pa.list_(pa.string())),
    ("read_only", pa.bool_()),
    ("initial_state", pa.string()),
    ("initial_state_file", pa.string()),
    ("initial_state_hash", pa.string()),
    ("gold_state_hash", pa.string()),
    ("blueprint", pa.struct([("name", pa.string()), ("path", pa.string()), ("hash", pa.string())])),
    ("seed", pa.int64()),
    ("stats", pa.struct([(k, pa.int64()) for k in TaskStats.model_fields])),
], metadata={b"forgec_export_schema": EXPORT_SCHEMA_VERSION.encode()})


def prompt_messages(task: Task, policy: str = "") -> list[dict]:
    """The conversation an agent is given first in `forgec eval`: eval's system prompt (with the env's policy),
    then the scripted user's opening."""

    return [{"role": "system", "content": agent_system_prompt(policy)}, {"role": "user", "content": opening(task)}]


def task_row(task: Task, tools_json: str, policy: str = "") -> dict:
    """One dataset row (`SCHEMA`) for `task`; `tools_json`: the env's OpenAI tool schemas as JSON text."""
    d = task.model_dump(mode="json")
    u = d["user"]
    return {
        "id": d["id"], "env": d["env"], "schema_version": d["schema_version"],
        "prompt": prompt_messages(task, policy), "tools": tools_json, "instruction": d["instruction"],
        "user": {"goal": u["goal"], "persona": u["persona"], "facts": _j(u["facts"]), "scenario": _j(u["scenario"])},
        "gold_calls": [{"node": g["node"], "tool": g["tool"], "arguments": _j(g["arguments"]), "result": _j(g["result"]),
                        "write": g["write"]} for g in d["gold_calls"]],
        "gold_diff": [{"op": e["op"], "path": e["path"], "before": _j(e["before"]), "after": _j(e["after"])} for e in d["gold_diff"]],
        "tell": [_j(v) for v in d["tell"]],
        "read_only": d["read_only"],
        "initial_state": _j(d["initial_state"]), "initial_state_file": d["initial_state_file"],
        "initial_state_hash": d["initial_state_hash"], "gold_state_hash": d["gold_state_hash"],
        "blueprint": d["blueprint"], "seed": d["seed"], "stats": d["stats"],
    }


def row_to_task(row: dict) -> dict:
    """A dataset row back as the task file's JSON object (`Task.model_validate(row_to_task(row))` gives the task)."""
    u = row["user"]
    return {
        "schema_version": row["schema_version"], "id": row["id"], "env": row["env"], "blueprint": dict(row["blueprint"]),
        "seed": row["seed"], "initial_state": json.loads(row["initial_state"]), "initial_state_file": row["initial_state_file"],
        "initial_state_hash": row["initial_state_hash"], "instruction": row["instruction"],
        "user": {"goal": u["goal"], "persona": u["persona"], "facts": json.loads(u["facts"]), "scenario": json.loads(u["scenario"])},
        "gold_calls": [{"node": g["node"], "tool": g["tool"], "arguments": json.loads(g["arguments"]), "result": json.loads(g["result"]),
                        "write": g["write"]} for g in row["gold_calls"]],
        "gold_state_hash": row["gold_state_hash"],
        "gold_diff": [{"op": e["op"], "path": e["path"], "before": json.loads(e["before"]), "after": json.loads(e["after"])}
                      for e in row["gold_diff"]],
        "tell": [json.loads(v) for v in row["tell"]], "read_only": row["read_only"], "stats": dict(row["stats"]),
    }


def _file_name(env: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", env) + ".parquet"


def _card(build_name: str, counts: dict[str, int]) -> str:
    configs = ["- config_name: default", "  default: true", "  data_files:", "  - split: train", "    path: data/*.parquet"]
    for env, n in counts.items():
        if env != "default" and n:  # `datasets` refuses a config of 0 rows ("corresponds to no data")
            configs += [f"- config_name: {json.dumps(env)}", "  data_files:", "  - split: train", f"    path: data/{_file_name(env)}"]
    rows = "\n".join(f"| `{env}` | {n} |" for env, n in counts.items())
    return f"""---
configs:
{chr(10).join(configs)}
tags:
- forgec
- tool-use
- reinforcement-learning
---

# {build_name}: forgec tasks

Tasks of a forgec build exported with `forgec export hf` (export schema {EXPORT_SCHEMA_VERSION}).
One row per task; the `default` config has every environment, each environment with tasks is also a config of its own.

| env | tasks |
|---|---|
{rows}

```python
from datasets import load_dataset
ds = load_dataset("path/to/this/folder", split="train")
ds[0]["prompt"]        # eval's system prompt and the simulated user's first message (chat format)
json.loads(ds[0]["tools"])     # the env's tools (OpenAI format)
```

Values whose JSON type varies (`user.facts`, `user.scenario`, gold call `arguments`/`result`, `gold_diff[].before/after`,
`tell[]`, `initial_state`) are JSON strings; `forgec.export.hf.row_to_task(row)` gives the task file's object back.
The reward of an episode needs the build itself (env code and initial states): `forgec.runtime.load(BUILD)`,
`runtime.reward.compute_reward`. Columns: see forgec's docs/export.md.
"""


def _write(path: Path, rows: list[dict]) -> None:
    """A Parquet file with `SCHEMA`; an env without tasks gets no row group at all (`datasets` reads a row group of
    0 rows as a batch size of 0 and fails)."""
    with pq.ParquetWriter(path, SCHEMA, compression="zstd") as w:
        if rows:
            w.write_table(pa.Table.from_pylist(rows, schema=SCHEMA))


def export_hf(build: Any, out: Path) -> dict[str, int]:
    """Write the loaded `build`'s tasks to `out` (replaced as a whole); returns rows per env."""
    by_env: dict[str, list[Task]] = {env: [] for env in sorted(build.envs)}
    for t in build.tasks:
        by_env.setdefault(t.env, []).append(t)
    counts: dict[str, int] = {}
    with staged(Path(out)) as tmp:
        (tmp / "data").mkdir()
        for env, tasks in by_env.items():
            mod = build.envs.get(env)
            tools_json = _j(list(getattr(mod, "TOOLS", [])))
            rows = [task_row(t, tools_json, build_policy(build, env)) for t in sorted(tasks, key=lambda t: t.id)]
            _write(tmp / "data" / _file_name(env), rows)
            counts[env] = len(rows)
        if not counts:  # a build without envs still loads: one file with the schema and no rows
            _write(tmp / "data" / "empty.parquet", [])
        (tmp / "README.md").write_text(_card(Path(build.root).resolve().name, counts), encoding="utf-8")
        write_marker(tmp, build, "hf", counts, export_schema=EXPORT_SCHEMA_VERSION)
    return counts
