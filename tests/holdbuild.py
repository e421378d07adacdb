"""Hold a `forgec compile` subprocess mid-build, so that a test signals a build that is certainly still running.

A compile of the examples takes about a second; a test that waited a fixed time (or for a scratch folder, then a
fixed time more) before Ctrl-C or SIGKILL lost the race on a loaded machine: the compile had already finished.
`held_env(hold)` is the environment for the compile's subprocess: a sitecustomize.py (written to `hold`, first on
PYTHONPATH) makes every process of that compile, the parent and each `-j` worker however the pool starts them,
stop right after it creates an env's scratch folder (mid-build: codegen done, nothing swapped in yet), write
`hold/held-<pid>`, and sleep until it is signalled or killed. `wait_held(hold, n, proc)` waits for n of them.
Processes started without FORGEC_TEST_HOLD (every other test, the sandbox's isolated python) are unaffected.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

SITECUSTOMIZE = '''
import os

if os.environ.get("FORGEC_TEST_HOLD"):
    import pathlib
    import time

    import forgec.build as _build

    _scratch_dir = _build._scratch_dir

    def _held(out, env):
        d = _scratch_dir(out, env)
        pathlib.Path(os.environ["FORGEC_TEST_HOLD"], f"held-{os.getpid()}").write_text(env)
        while True:  # until Ctrl-C (KeyboardInterrupt here) or a kill
            time.sleep(0.5)

    _build._scratch_dir = _held
'''


def held_env(hold: Path) -> dict[str, str]:
    """os.environ plus what makes a compile started with it hold mid-build (`hold`: an empty folder of its own)."""
    hold.mkdir(parents=True, exist_ok=True)
    (hold / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    path = os.pathsep.join(x for x in (str(hold), os.environ.get("PYTHONPATH", "")) if x)
    return {**os.environ, "PYTHONPATH": path, "FORGEC_TEST_HOLD": str(hold)}


def wait_held(hold: Path, n: int, proc, timeout: float = 180) -> list[int]:
    """The pids of the first `n` processes held mid-build (a generous deadline: a loaded machine is slow)."""
    deadline = time.monotonic() + timeout
    while True:
        pids = sorted(int(p.name.split("-", 1)[1]) for p in hold.glob("held-*"))
        if len(pids) >= n:
            return pids
        assert proc.poll() is None, f"the compile exited ({proc.returncode}) before {n} process(es) held mid-build"
        assert time.monotonic() < deadline, f"{len(pids)} of {n} process(es) held mid-build after {timeout:g}s"
        time.sleep(0.05)
