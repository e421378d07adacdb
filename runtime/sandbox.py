"""The escape-hatch worker: `python '''...'''` tool bodies run here, isolated.

A tool body is untrusted code (an LLM may have written it). It runs in a persistent
worker process (a fresh interpreter, `multiprocessing.connection` pipe) that receives `(args, state copy)` and
returns `(result, new state or None)`; the worker keeps the last state it was sent, keyed by
its state hash, so calls on an unchanged world do not ship it again. The parent waits at most `time_limit` seconds;
an infinite loop is killed, a crash (segfault, `os._exit`) is noticed as a closed pipe,
an exception or `MemoryError` (the worker's address space is capped with
`resource.setrlimit(RLIMIT_AS)`) is reported — each becomes a `ToolError` for that call
and the worker is restarted, so an episode never hangs or dies.

Inside the body: the parameters as local names (also `args`), `state` (a private copy
of the whole state; mutate it to change the world when the tool writes), `ToolError`
and `fail(msg)` to refuse a call, and a small set of builtins (no `open`, `eval`,
`exec`; `import` only for pure modules like `math`, `re`, `datetime`, `json`).
The process boundary and resource limits are the isolation; the restricted builtins
only keep honest mistakes (I/O, clocks) out of deterministic tools.
"""

from __future__ import annotations

import atexit
import os
import textwrap
import threading
import traceback
from typing import Any

from forgec.runtime.envrt import ToolError, jcopy

DEFAULT_TIME_LIMIT = 2.0  # seconds per call (wall clock)
DEFAULT_MEMORY_MB = 512
STARTUP_TIMEOUT = 60.0  # extra address space the worker may use beyond its start-up size
ALLOWED_MODULES = frozenset(
    {"math", "re", "json", "datetime", "itertools", "collections", "functools", "statistics", "decimal", "fractions", "string", "operator", "copy", "heapq", "bisect"}
)
_SAFE_BUILTINS = (
    "abs all any bool dict divmod enumerate filter float frozenset int isinstance issubclass iter len list map max min "
    "next print range repr reversed round set slice sorted str sum tuple zip ValueError KeyError IndexError TypeError "
    "Exception ZeroDivisionError StopIteration ArithmeticError LookupError RuntimeError AssertionError NotImplementedError "
    "True False None hasattr getattr callable chr ord hash format pow object type"
).split()


# --------------------------------------------------------------------------- worker side


def _import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002 - mirrors __import__
    if level != 0 or name.split(".")[0] not in ALLOWED_MODULES:
        raise ImportError(f"import of {name!r} is not allowed in a python tool (allowed: {', '.join(sorted(ALLOWED_MODULES))})")
    return __import__(name, globals, locals, fromlist, level)


class _Refuse(Exception):
    """Raised by `fail(msg)` / `ToolError(msg)` inside a body: a domain failure, not a crash."""


def _builtins() -> dict:
    import builtins

    b = {n: getattr(builtins, n) for n in _SAFE_BUILTINS if hasattr(builtins, n)}
    b["__import__"] = _import
    b["__build_class__"] = builtins.__build_class__
    b["__name__"] = "forge_tool"
    return b


def _compile(tool: str, source: str, params: tuple) -> Any:
    body = textwrap.dedent(source).strip("\n") or "return None"
    binds = "".join(f"    {p} = args[{p!r}]\n" for p in params if p.isidentifier() and p not in ("args", "state"))
    code = f"def __forge_tool__(args, state):\n{binds}" + textwrap.indent(body, "    ") + "\n"
    g = {"__builtins__": _builtins(), "ToolError": _Refuse, "fail": _fail}
    exec(compile(code, f"<python tool {tool}>", "exec"), g)  # noqa: S102 - this is the sandbox
    return g["__forge_tool__"], len(binds.splitlines()) + 1


def _fail(msg: str) -> None:
    raise _Refuse(msg)


def _set_memory_limit(extra_mb: int) -> None:
    try:
        import resource

        with open("/proc/self/statm") as f:
            vm_pages = int(f.read().split()[0])
        cur = vm_pages * os.sysconf("SC_PAGE_SIZE")
        lim = cur + extra_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    except (OSError, ValueError, ImportError):  # pragma: no cover - non-Linux
        pass


def _serve(fd: int, memory_mb: int) -> None:
    """Entry point of the worker interpreter."""
    from multiprocessing.connection import Connection

    _worker_main(Connection(fd), memory_mb)


def _worker_main(conn: Any, memory_mb: int) -> None:
    """Loop: receive a call, run it, send back ("ok", result, state) or ("err", kind, message)."""
    _set_memory_limit(memory_mb)
    conn.send(("ready",))
    cache: dict = {}
    held: tuple | None = None  # (state key, state) last sent by the parent
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        tool, source, params, args, state_key, state, writes = msg
        if state is not None:
            held = (state_key, state)
        elif held is None or state_key is None or held[0] != state_key:
            conn.send(("need_state",))
            continue
        try:
            key = (tool, source, params)
            if key not in cache:
                cache[key] = _compile(tool, source, params)
            fn, offset = cache[key]
            work = jcopy(held[1])  # the body may scribble on its copy; the held state stays clean
            result = fn(dict(args), work)
            conn.send(("ok", result, work if writes else None))
        except _Refuse as e:
            conn.send(("err", "refused", str(e)))
        except MemoryError:
            conn.send(("err", "memory", "the python tool ran out of memory"))
            return  # a fresh worker for the next call
        except SyntaxError as e:
            conn.send(("err", "syntax", f"syntax error in python tool body: {e.msg} (body line {(e.lineno or 1) - 1})"))
        except BaseException as e:  # noqa: BLE001 - report everything, keep serving
            line = ""
            for fs in traceback.extract_tb(e.__traceback__):
                if fs.filename.startswith("<python tool"):
                    line = f" (body line {fs.lineno - cache.get(key, (None, 1))[1]})"
            try:
                conn.send(("err", "exception", f"{type(e).__name__}: {e}{line}"))
            except Exception:  # noqa: BLE001 - e.g. an unpicklable result
                return


# --------------------------------------------------------------------------- parent side


class Sandbox:
    """A persistent worker process with a per-call time limit; restarted after any failure.

    The worker is a fresh interpreter (`subprocess`, not `multiprocessing.Process`, so the
    caller's `__main__` is never re-imported) talking over a `multiprocessing.connection`
    pipe.
    """

    def __init__(self, time_limit: float = DEFAULT_TIME_LIMIT, memory_mb: int = DEFAULT_MEMORY_MB):
        self.time_limit = time_limit
        self.memory_mb = memory_mb
        self._proc: Any = None
        self._conn: Any = None
        self._lock = threading.Lock()
        self._held_key: str | None = None  # hash of the state the worker holds
        self.restarts = 0

    def _start(self) -> None:
        import socket
        import subprocess
        import sys
        from multiprocessing.connection import Connection

        a, b = socket.socketpair()
        code = f"from forgec.runtime.sandbox import _serve; _serve({b.fileno()}, {int(self.memory_mb)})"
        self._proc = subprocess.Popen(
            [sys.executable, "-c", code],
            pass_fds=(b.fileno(),),
            stdin=subprocess.DEVNULL,
            close_fds=True,
        )
        b.close()
        self._conn = Connection(a.detach())
        # start-up (interpreter + imports) is not charged to the first call's time limit
        if not self._conn.poll(STARTUP_TIMEOUT) or self._conn.recv() != ("ready",):
            self._kill()
            raise ToolError("python tool sandbox failed to start", "sandbox", internal=True)

    def _kill(self) -> None:
        if self._proc is not None:
            try:
                self._proc.kill()
                self._proc.wait(5)
            except Exception:  # noqa: BLE001
                pass
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001
                pass
        self._proc = self._conn = None
        self._held_key = None
        self.restarts += 1

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.send(None)
                except Exception:  # noqa: BLE001
                    pass
            if self._proc is not None:
                try:
                    self._proc.wait(1)
                except Exception:  # noqa: BLE001
                    pass
            self._kill()
            self.restarts -= 1

    def _exchange(self, tool: str, msg: tuple, where: str) -> Any:
        try:
            self._conn.send(msg)
        except Exception as e:  # noqa: BLE001 - e.g. unpicklable arguments
            self._kill()
            raise ToolError(f"python tool {tool}: cannot send the call: {e}", "sandbox") from None
        if not self._conn.poll(self.time_limit):
            self._kill()
            raise ToolError(f"python tool {tool} timed out after {self.time_limit:g}s{where}", "sandbox", internal=True)
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            code = self._proc.wait(5) if self._proc is not None else None
            self._kill()
            raise ToolError(f"python tool {tool} crashed (worker exit code {code}){where}", "sandbox", internal=True) from None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def call(
        self, tool: str, source: str, params: tuple, args: dict, state: dict, line: int = 0, file: str = "", writes: bool = True, state_key: str | None = None
    ) -> tuple[Any, Any]:
        """Run one call; returns (result, new state or None) or raises ToolError.

        `state_key` (the state hash) lets the worker keep the last state it was sent: calls on
        an unchanged state send only the key instead of pickling the whole world again.
        """
        where = f" ({file}:{line})" if file and line else ""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                if self._proc is not None:
                    self._kill()
                self._start()
            send_state = state_key is None or state_key != self._held_key
            reply = self._exchange(tool, (tool, source, tuple(params), args, state_key, state if send_state else None, writes), where)
            if reply == ("need_state",):
                reply = self._exchange(tool, (tool, source, tuple(params), args, state_key, state, writes), where)
            self._held_key = state_key
        if reply[0] == "ok":
            return reply[1], reply[2]
        kind, message = reply[1], reply[2]
        if kind == "refused":
            raise ToolError(message, "precondition")
        if kind == "memory":
            with self._lock:
                self._kill()
        raise ToolError(f"python tool {tool} failed: {message}{where}", "sandbox", internal=True)


_SHARED: Sandbox | None = None
_SHARED_PID = 0
_SHARED_LOCK = threading.Lock()


def shared() -> Sandbox:
    """The process-wide sandbox every Env uses (started on first call, stopped at exit).

    Limits come from FORGEC_SANDBOX_TIME_LIMIT (seconds) and FORGEC_SANDBOX_MEMORY_MB. A
    forked child process gets its own worker (it never talks to its parent's).
    """
    global _SHARED, _SHARED_PID
    with _SHARED_LOCK:
        if _SHARED is None or _SHARED_PID != os.getpid():
            _SHARED_PID = os.getpid()
            _SHARED = Sandbox(
                float(os.environ.get("FORGEC_SANDBOX_TIME_LIMIT", DEFAULT_TIME_LIMIT)),
                int(os.environ.get("FORGEC_SANDBOX_MEMORY_MB", DEFAULT_MEMORY_MB)),
            )
            atexit.register(_SHARED.close)
        return _SHARED


def install(sb: Sandbox | None) -> Sandbox | None:
    """Make `sb` this process's shared sandbox (tests, custom limits); returns the previous one."""
    global _SHARED, _SHARED_PID
    with _SHARED_LOCK:
        old = _SHARED if _SHARED_PID == os.getpid() else None
        _SHARED, _SHARED_PID = sb, os.getpid()
        return old
