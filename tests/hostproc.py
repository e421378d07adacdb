"""Host-side process checks shared by the sandbox attack tests."""

from __future__ import annotations

from pathlib import Path


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line carries `marker` (a daemon that outlived its call)."""
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if marker.encode() in (p / "cmdline").read_bytes():
                    found.append(int(p.name))
            except OSError:
                pass
    return found
