"""The published JSON Schemas (task files, IR, manifest): written to build/schema/ and docs/schema/.

`python -m forgec.schemas` regenerates docs/schema/; a test keeps it in sync.
"""

from __future__ import annotations

import json
from pathlib import Path


def schemas() -> dict[str, dict]:
    from forgec.ir import ir_json_schema
    from forgec.manifest import manifest_json_schema
    from forgec.tasks import task_json_schema

    return {
        "task.schema.json": task_json_schema(),
        "ir.schema.json": ir_json_schema(),
        "manifest.schema.json": manifest_json_schema(),
    }


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, sch in schemas().items():
        (folder / name).write_text(render(sch), encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    write(Path("docs/schema"))
