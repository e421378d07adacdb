"""The python-tool worker: the code that runs *inside* the sandbox (see runtime/sandbox.py).

Standard library only, and never imported by the parent: `sandbox.py` passes this file's
text to `python -I -S -c`, so no forgec code, site-packages or build folder need be visible
inside the sandbox. argv: channel fd, memory limit (MB), CPU seconds per call, CPU seconds
for the worker's whole life (the hard RLIMIT_CPU: the parent restarts the worker before it is
spent), the largest reply in bytes (FORGEC_SANDBOX_REPLY_MB; a result or state over it becomes
an error reply here, and the parent refuses any bigger frame itself).

Protocol (both directions): a frame is a 4-byte big-endian length then that many bytes of
ASCII JSON. Requests `{"id", "tool", "source", "params", "args", "key", "has_state", "writes"}`,
followed, when `has_state`, by one more frame holding the state's JSON (otherwise the worker
uses the state it holds under hash `key`, or answers `{"id", "need_state": true}`);
replies `{"id", "ok": true, "result", "state"}` or `{"id", "ok": false, "kind", "message"}`,
always carrying the request's id. JSON, never pickle: the parent must be able to read a
reply that hostile code forged without running any of it.
"""

import json
import os
import resource
import struct
import sys
import textwrap
import traceback

ALLOWED_MODULES = frozenset(
    {"math", "re", "json", "datetime", "itertools", "collections", "functools", "statistics", "decimal", "fractions", "string", "operator", "copy", "heapq", "bisect"}
)
_SAFE_BUILTINS = (
    "abs all any bool dict divmod enumerate filter float frozenset int isinstance issubclass iter len list map max min "
    "next print range repr reversed round set slice sorted str sum tuple zip ValueError KeyError IndexError TypeError "
    "Exception ZeroDivisionError StopIteration ArithmeticError LookupError RuntimeError AssertionError NotImplementedError "
    "True False None hasattr getattr callable chr ord hash format pow object type"
).split()
PARSE_FACTOR = 8  # a reply may take at most this times the reply limit once parsed (see _reply_cost)


class _Refuse(Exception):
    """Raised by `fail(msg)` / `ToolError(msg)` inside a body: a domain failure, not a crash."""


def _fail(msg):
    raise _Refuse(msg)


def _import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002 - mirrors __import__
    """The first line of defence only: keeps honest bodies deterministic (no I/O, clocks)."""
    if level != 0 or name.split(".")[0] not in ALLOWED_MODULES:
        raise ImportError(f"import of {name!r} is not allowed in a python tool (allowed: {', '.join(sorted(ALLOWED_MODULES))})")
    return __import__(name, globals, locals, fromlist, level)


def _builtins():
    import builtins

    b = {n: getattr(builtins, n) for n in _SAFE_BUILTINS if hasattr(builtins, n)}
    b["__import__"] = _import
    b["__build_class__"] = builtins.__build_class__
    b["__name__"] = "forge_tool"
    return b


def _compile(tool, source, params):
    body = textwrap.dedent(source).strip("\n") or "return None"
    binds = "".join(f"    {p} = args[{p!r}]\n" for p in params if p.isidentifier() and p not in ("args", "state"))
    code = f"def __forge_tool__(args, state):\n{binds}" + textwrap.indent(body, "    ") + "\n"
    g = {"__builtins__": _builtins(), "ToolError": _Refuse, "fail": _fail}
    exec(compile(code, f"<python tool {tool}>", "exec"), g)  # noqa: S102 - this process is the sandbox
    return g["__forge_tool__"], len(binds.splitlines()) + 1


def _read_exact(fd, n):
    chunks, got = [], 0
    while got < n:
        b = os.read(fd, min(n - got, 1 << 20))
        if not b:
            return None
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def _recv_raw(fd):
    head = _read_exact(fd, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    return _read_exact(fd, n)


def _recv(fd):
    body = _recv_raw(fd)
    return None if body is None else json.loads(body)


def _reply_cost(data, budget=0):
    """About the most `json.loads(data)` allocates, in bytes (a copy of sandbox._reply_cost)."""
    if 197 * len(data) <= budget:  # no byte costs more than 5 + 192: no need to look
        return 0
    n = data.count(b",") + data.count(b"[") + data.count(b":")
    return (5 if data.find(b"\\") >= 0 else 2) * len(data) + 64 * n + 192 * data.count(b"{")


def _mb(n):
    return f"{n / 1048576:.3g} MB"


def _send(fd, obj, limit):
    data = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
    if len(data) > limit:
        raise ValueError(f"its reply is {len(data)} bytes of JSON, over the {_mb(limit)} limit (FORGEC_SANDBOX_REPLY_MB)")
    cost = _reply_cost(data, PARSE_FACTOR * limit)
    if cost > PARSE_FACTOR * limit:
        raise ValueError(
            f"its reply would take about {_mb(cost)} once parsed, over the {_mb(PARSE_FACTOR * limit)} limit "
            f"({PARSE_FACTOR} x FORGEC_SANDBOX_REPLY_MB)"
        )
    data = struct.pack(">I", len(data)) + data
    while data:
        data = data[os.write(fd, data):]


def _limits(memory_mb, life_cpu):
    """Resource limits, set before any body runs (a body may lower them, never raise the hard ones).

    RLIMIT_CPU's hard limit covers the worker's whole life (SIGKILL when spent, whatever a body
    does with SIGXCPU or the soft limit); `_cpu_budget` sets the soft limit per call."""
    try:
        with open("/proc/self/statm") as f:
            cur = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):  # no /proc (unsafe mode off Linux): a generous start-up allowance
        cur = 256 * 1024 * 1024
    mem = cur + memory_mb * 1024 * 1024
    for lim, val in (
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_FSIZE, 16 * 1024 * 1024),
        (resource.RLIMIT_NOFILE, 32),
        (resource.RLIMIT_NPROC, 0),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_MSGQUEUE, 0),
        (resource.RLIMIT_CPU, life_cpu),
    ):
        try:
            resource.setrlimit(lim, (val, val))
        except (OSError, ValueError):
            pass


def _cpu_budget(seconds):
    """RLIMIT_CPU for the next call: the CPU used so far plus this call's share (SIGXCPU kills)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime) + 1
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    want = spent + seconds
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (want, hard))
    except (OSError, ValueError):
        pass


def _run(msg, cache, held):
    tool, source, params = msg["tool"], msg["source"], tuple(msg["params"])
    key = (tool, source, params)
    try:
        if key not in cache:
            cache[key] = _compile(tool, source, params)
        fn, offset = cache[key]
        work = json.loads(held[1])  # a private copy: the body may scribble on it
        result = fn(dict(msg["args"]), work)
        try:
            json.dumps(result, allow_nan=False)
        except (TypeError, ValueError) as e:
            return {"ok": False, "kind": "exception", "message": f"the python tool returned a non-JSON value: {e}"}
        return {"ok": True, "result": result, "state": work if msg["writes"] else None}
    except _Refuse as e:
        return {"ok": False, "kind": "refused", "message": str(e)}
    except MemoryError:
        return {"ok": False, "kind": "memory", "message": "the python tool ran out of memory"}
    except SyntaxError as e:
        return {"ok": False, "kind": "syntax", "message": f"syntax error in python tool body: {e.msg} (body line {(e.lineno or 1) - 1})"}
    except BaseException as e:  # noqa: BLE001 - report everything, keep serving
        line = ""
        for fs in traceback.extract_tb(e.__traceback__):
            if fs.filename.startswith("<python tool"):
                line = f" (body line {fs.lineno - cache.get(key, (None, 1))[1]})"
        return {"ok": False, "kind": "exception", "message": f"{type(e).__name__}: {e}{line}"}


def main(fd, memory_mb, cpu_seconds, life_cpu, reply_max):
    """Serve calls until the parent closes the channel or sends null."""
    _limits(memory_mb, life_cpu)
    _send(fd, {"id": 0, "ready": True}, reply_max)
    cache, held = {}, None  # held: (state key, state JSON text) last sent by the parent
    while True:
        msg = _recv(fd)
        if msg is None:
            return
        if msg.get("has_state"):
            raw = _recv_raw(fd)
            if raw is None:
                return
            held = (msg["key"], raw)
        elif held is None or msg.get("key") is None or held[0] != msg["key"]:
            _send(fd, {"id": msg["id"], "need_state": True}, reply_max)
            continue
        _cpu_budget(cpu_seconds)
        reply = _run(msg, cache, held)
        reply["id"] = msg["id"]
        try:
            _send(fd, reply, reply_max)
        except (TypeError, ValueError) as e:
            what = str(e) if str(e).startswith("its reply") else f"the python tool returned a non-JSON value: {e}"
            _send(fd, {"id": msg["id"], "ok": False, "kind": "exception", "message": what}, reply_max)
        if reply.get("kind") == "memory":
            return  # a fresh worker for the next call


if __name__ == "__main__":
    main(*map(int, sys.argv[1:6]))
