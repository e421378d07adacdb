"""Confined reading: which files a `.forge` import (or a build's blueprint file) may open.

A blueprint can come with a build someone shared, or be written by an LLM; its
`import "..."` must not turn `forgec check`/`compile` into a file reader whose
diagnostics print `/etc/passwd` or `/proc/self/environ`. So an import resolves
only to a regular file inside the *roots*: the build that holds the importing
file (the nearest folder with a `manifest.json`) or, outside any build, the
folder given on the command line (a file's own folder). Symlinks are resolved
before the test, so no symlink leads outside; absolute import paths are refused
(builds move between machines; imports are relative to the importing file).

`compile` and `check` both call `import_error` / `within` (one rule, one place).
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path
from typing import Iterable

MAX_IMPORT_BYTES = 16 << 20  # a larger imported file is refused (a .forge env is kilobytes)


@lru_cache(maxsize=4096)
def _real(path: str) -> str:
    return os.path.realpath(path)


def within(path: str | os.PathLike, roots: Iterable[str | os.PathLike]) -> bool:
    """True when `path`, symlinks resolved, is one of `roots` or lies under one (also resolved)."""
    try:
        real = os.path.realpath(path)
    except (ValueError, OSError):  # a NUL character, an unresolvable path: nothing to read
        return False
    for r in roots:
        rr = _real(os.fspath(r))
        if real == rr or real.startswith(rr.rstrip(os.sep) + os.sep):
            return True
    return False


def build_root(path: str | os.PathLike) -> Path | None:
    """The nearest folder at or above `path` that holds a forgec build (`manifest.json`), or None."""
    p = Path(os.path.abspath(path))
    for d in [p, *p.parents] if p.is_dir() else p.parents:
        if (d / "manifest.json").is_file():
            return d
    return None


def root_of(path: str | os.PathLike) -> Path:
    """The root a file or folder named on the command line confines its imports to."""
    b = build_root(path)
    if b is not None:
        return b
    p = Path(os.path.abspath(path))
    return p if p.is_dir() else p.parent


def default_roots(files: Iterable[str]) -> list[Path]:
    """Roots for modules whose roots the caller did not give: each file's build, else its folder (stdin: cwd)."""
    out: list[Path] = []
    for f in files:
        r = Path.cwd() if f in ("<input>", "-", "<stdin>") else root_of(f)
        if r not in out:
            out.append(r)
    return out


def import_error(raw: str, resolved: str, roots: Iterable[str | os.PathLike]) -> str | None:
    """Why import `raw` (resolved to `resolved`) may not be read, or None when it may.

    The reason never includes the file's content (only its path as written).
    """
    if "\0" in raw:
        return "the import path holds a NUL character"
    if os.path.isabs(raw) or raw.startswith("~"):
        return "imports are relative to the importing file; an absolute path is not allowed"
    roots = list(roots)
    if not within(resolved, roots):
        lexical = os.path.normpath(os.path.abspath(resolved))
        via_link = any(lexical == a or lexical.startswith(a.rstrip(os.sep) + os.sep) for a in (os.path.abspath(r) for r in roots))
        return "the imported file lies outside the build and the folders given on the command line" + (
            " (through a symlink)" if via_link else "")
    if len(raw) > 4096:
        return f"the import path is too long ({len(raw)} characters)"
    try:
        st = os.stat(resolved)
    except FileNotFoundError:
        return None  # missing: import-not-found reports it
    except OSError as e:
        return f"the imported file cannot be read ({e.strerror})"
    if not stat.S_ISREG(st.st_mode):
        return "the import does not name a regular file"
    if st.st_size > MAX_IMPORT_BYTES:
        return f"the imported file is larger than {MAX_IMPORT_BYTES >> 20} MB"
    return None
