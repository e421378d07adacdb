"""Swapping a new build folder in place, and recovering from a swap that was cut short.

`compile` writes the new build beside the old one (`.BUILD.tmp-<pid>`) and swaps it in at the
end. Where the kernel allows it the swap is one atomic `renameat2(RENAME_EXCHANGE)`, so there
is no moment without a build. Elsewhere it is two renames (BUILD -> .BUILD.old, tmp -> BUILD);
a kill between them leaves only `.BUILD.old`, and `recover_build` (called first by every
command that reads a build, not only by the next compile) puts it back. Both sides hold an
`flock` on the parent folder so a reader never "recovers" in the middle of a live swap.

Kept free of heavy imports: the runtime loader calls `recover_build` on every load.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def old_path(out: Path) -> Path:
    return out.parent / f".{out.name}.old"


@contextmanager
def _parent_lock(out: Path):
    """Exclusive flock on the build's parent folder (released by the kernel if we are killed)."""
    try:
        fd = os.open(out.parent, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths; False when the kernel or file system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    if ctypes.get_errno() in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV, errno.EPERM):
        return False
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(a))


def swap_in(tmp: Path, out: Path, *, atomic: bool = True) -> None:
    """Make `tmp` the build at `out`; the previous build (if any) is deleted afterwards."""
    old = old_path(out)
    with _parent_lock(out):
        _restore(out)
        if out.exists() and atomic and _exchange(tmp, out):
            shutil.rmtree(tmp, ignore_errors=True)  # now holds the previous build
            return
        shutil.rmtree(old, ignore_errors=True)
        if out.exists():
            os.rename(out, old)
        os.rename(tmp, out)  # a kill before this line leaves only `old`: `recover_build` restores it
    shutil.rmtree(old, ignore_errors=True)


def _restore(out: Path) -> bool:
    old = old_path(out)
    if not out.exists() and _is_build(old):
        os.rename(old, out)
        return True
    return False


def _is_build(folder: Path) -> bool:
    """True when `folder` holds a forgec build: a manifest.json whose `metadata` names a forgec version.

    `.X.old` is only ever a whole build moved aside by `swap_in`; a folder of that name that holds
    no build (the user's own `.notes.old/`) is never renamed.
    """
    import json

    try:
        mp = folder / "manifest.json"
        if folder.is_symlink() or not folder.is_dir() or mp.is_symlink() or not mp.is_file():
            return False
        meta = json.loads(mp.read_bytes()).get("metadata")
        return isinstance(meta, dict) and isinstance(meta.get("forgec_version"), str)
    except (OSError, ValueError, AttributeError):
        return False


def recover_build(path: str | Path) -> bool:
    """Finish a build swap that a kill cut short, for `path` or any folder above it.

    Only a real interrupted swap is undone: BUILD missing and `.BUILD.old` beside it holding a
    forgec build (`_is_build`); any other folder, whatever its name, is left alone. Cheap (a few
    `stat`s) when there is nothing to do; True when a build was put back.
    """
    try:
        p = Path(os.path.abspath(path))
        for cand in (p, *p.parents):
            if cand.name and not cand.exists() and old_path(cand).is_dir() and _is_build(old_path(cand)):
                with _parent_lock(cand):
                    return _restore(cand)
    except (OSError, ValueError):  # an unusable path: the command reports it as usual
        return False
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def clean_dead(out: Path) -> None:
    """Remove the temporary and scratch folders of compiles that are no longer running."""
    recover_build(out)
    for pattern in (f".{out.name}.tmp-*", f".{out.name}.scratch-*"):
        for p in out.parent.glob(pattern):
            pid = p.name.rsplit("-", 1)[-1]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(p, ignore_errors=True)
