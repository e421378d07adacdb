"""Exports of a build to other stacks' formats (`forgec export FORMAT BUILD -o DIR`): `hf` (Parquet for `datasets`),
`tau2` (τ²-bench's domain layout). Both write a staged folder and swap it in whole (`staged`), with one marker file."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterator

MARKER = "forgec-export.json"  # what says a folder holds a previous export (which `-o` may replace)


@contextlib.contextmanager
def staged(out: Path) -> Iterator[Path]:
    """A fresh folder beside `out` to write into; on success it replaces `out` as a whole, on failure it is removed."""
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_marker(folder: Path, build: Any, fmt: str, counts: dict[str, int], **extra: Any) -> None:
    """The export's marker: its format, the forgec version and build it came from, rows per env."""
    meta = {"format": fmt, **extra, "forgec_version": (build.manifest.get("metadata") or {}).get("forgec_version"),
            "build": Path(build.root).resolve().name, "envs": counts}
    (folder / MARKER).write_text(json.dumps(meta, indent=2) + "\n")
