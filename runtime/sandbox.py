"""The escape-hatch sandbox: `python '''...'''` tool bodies run here, isolated by the OS.

A tool body is untrusted code (an LLM may have written it, or it came with a build someone
shared). It runs in a persistent worker process (`runtime/sandbox_worker.py`, standard
library only) started under bubblewrap (`bwrap`):

* namespaces: `--unshare-all` plus an explicit user namespace mapped to uid/gid 65534 — no
  network (an empty network namespace), its own pid/ipc/uts namespaces, `--disable-userns`;
* filesystem: only `/usr/lib*` (shared libraries) and the Python install, read-only; fresh `/proc`,
  minimal `/dev`, a small tmpfs `/tmp`; no `/etc`, no home, no `/work`, no build folder (the
  worker's code is passed on the command line, so not even forgec is mounted);
* `--clearenv` (an empty environment), `--new-session`, `--die-with-parent`, `--cap-drop ALL`;
* a seccomp filter (compiled by the system's libseccomp through ctypes, loaded by bwrap)
  refusing fork/clone, sockets, ptrace, mounts, namespaces, SysV/POSIX IPC (shared memory,
  message queues, semaphores: kernel memory outside RLIMIT_AS) and timers (`setitimer`, `alarm`,
  POSIX timers, timerfd: code that would run after its call returned), when libseccomp is present;
* resource limits set in the worker before any body runs: RLIMIT_AS, CPU (soft per call, hard
  for the worker's whole life: WORKER_CPU seconds), NPROC 0, FSIZE, NOFILE, CORE, MSGQUEUE 0.

The parent talks to it over a socketpair with length-prefixed JSON frames carrying a random
call id (never pickle: a forged reply must not run code in the parent). One deadline covers
sending, waiting and reading; a reply with another id, extra bytes after the reply, or any
process or thread left in the sandbox after a call kills the whole sandbox (its pid namespace
dies with it) and the call fails. So does a call that changed the worker's signal handlers or
signal mask or (without seccomp) left a POSIX timer armed: all read from the host in /proc.
Between calls the worker is stopped (SIGSTOP, sent through a pidfd), so no body code runs
outside a call. A reply is refused before it is parsed when it is over FORGEC_SANDBOX_REPLY_MB
(default 4) or would take over PARSE_FACTOR times that once parsed (`_reply_cost`). A worker
whose lifetime CPU budget might not cover another call, or that kept over half its memory
limit after a call, is replaced before the next call (transparently). A timeout, crash,
`MemoryError` or protocol error becomes a `ToolError` for that call and the next call starts
a fresh worker, so an episode never hangs.

Without a usable bwrap, python bodies are refused (a `ToolError` naming the fix,
`apt-get install bubblewrap`) unless FORGEC_UNSAFE_NO_SANDBOX=1 is set, which runs the same
worker as a plain process (limits and the protocol still apply; no isolation). See
docs/security.md for what this does and does not guarantee.

Inside the body: the parameters as local names (also `args`), `state` (a private copy of the
whole state; mutate it to change the world when the tool writes), `ToolError` and `fail(msg)`
to refuse a call, and restricted builtins (no `open`, `eval`, `exec`; `import` only for pure
modules) — a first line that keeps honest bodies deterministic, not the isolation.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from forgec.runtime.errors import ToolError

DEFAULT_TIME_LIMIT = 2.0  # seconds per call (wall clock: send + run + read)
DEFAULT_MEMORY_MB = 512  # address space the worker may use beyond its start-up size
STARTUP_TIMEOUT = 60.0
DEFAULT_REPLY_MB = 4  # largest reply (result + new state as JSON), FORGEC_SANDBOX_REPLY_MB
PARSE_FACTOR = 8  # a reply may take at most this times the reply limit once parsed (see _reply_cost)
WORKER_CPU = 60  # CPU seconds one worker may use in its whole life (hard RLIMIT_CPU); replaced before
GREETING_MAX = 4096
REPLY_ENV = "FORGEC_SANDBOX_REPLY_MB"
UNSAFE_ENV = "FORGEC_UNSAFE_NO_SANDBOX"
BWRAP_ENV = "FORGEC_BWRAP"  # path of bwrap (default: /usr/bin/bwrap, then PATH)
SANDBOX_UID = 65534
FIX = "install bubblewrap (`apt-get install bubblewrap`)"
FIX_USERNS = "bwrap needs user namespaces (check `sysctl user.max_user_namespaces` > 0 and, on Ubuntu, kernel.apparmor_restrict_unprivileged_userns=0)"
WORKER_SOURCE = Path(__file__).with_name("sandbox_worker.py")
# syscalls a tool body never needs; refused with EPERM by the seccomp filter
DENIED_SYSCALLS = (
    "fork vfork clone clone3 socket socketpair connect bind listen accept accept4 ptrace process_vm_readv "
    "process_vm_writev mount umount2 pivot_root chroot unshare setns keyctl add_key request_key bpf perf_event_open "
    "userfaultfd io_uring_setup kexec_load kexec_file_load init_module finit_module delete_module swapon swapoff "
    "reboot acct open_by_handle_at name_to_handle_at personality fanotify_init quotactl mknod mknodat memfd_create "
    # SysV and POSIX IPC: a segment or queue outlives the call and is not charged to RLIMIT_AS
    "shmget shmat shmdt shmctl msgget msgsnd msgrcv msgctl semget semop semtimedop semctl ipc "
    "mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr "
    # timers: a signal handler they fire would run body code after its call returned (python
    # start-up and the allowed modules use none of them: checked with strace)
    "setitimer alarm timer_create timer_settime timerfd_create timerfd_settime"
).split()


class _ProtocolError(Exception):
    """The worker broke the protocol (wrong id, bad frame, extra bytes): kill it."""


class _TooBig(_ProtocolError):
    """A reply over the size limit (refused before it is read or parsed): kill the worker."""


# --------------------------------------------------------------------------- availability


def unsafe_requested() -> bool:
    """True when the user opted out of the OS sandbox (FORGEC_UNSAFE_NO_SANDBOX=1)."""
    return os.environ.get(UNSAFE_ENV, "").strip().lower() in ("1", "true", "yes")


def bwrap_path() -> str | None:
    """The bwrap executable to use, or None when there is none."""
    import shutil

    env = os.environ.get(BWRAP_ENV)
    if env:
        return env if os.access(env, os.X_OK) else None
    if os.access("/usr/bin/bwrap", os.X_OK):
        return "/usr/bin/bwrap"
    return shutil.which("bwrap")


_STATUS: dict[str, tuple[bool, str]] = {}
_SECCOMP: list = []  # [bytes | None] once computed


def availability() -> tuple[bool, str]:
    """(usable, why): whether bwrap exists and can start an isolated interpreter here (cached)."""
    path = bwrap_path()
    if path is None:
        return False, f"bwrap (bubblewrap) is not installed; {FIX}"
    if path in _STATUS:
        return _STATUS[path]
    try:
        seccomp_fd = _seccomp_fd()
        argv = _bwrap_argv(path, seccomp_fd) + [_python(), "-I", "-S", "-c", "import os; assert os.getuid() == %d" % SANDBOX_UID]
        fds = (seccomp_fd,) if seccomp_fd is not None else ()
        r = subprocess.run(argv, pass_fds=fds, stdin=subprocess.DEVNULL, capture_output=True, timeout=STARTUP_TIMEOUT, env={})
        if seccomp_fd is not None:
            os.close(seccomp_fd)
        err = r.stderr.decode("utf-8", "replace").strip()[:300] or f"exit {r.returncode}"
        res = (True, "") if r.returncode == 0 else (False, f"{path} cannot start a sandbox here ({err}); {FIX_USERNS}")
    except (OSError, subprocess.SubprocessError) as e:
        res = (False, f"{path} cannot start a sandbox here ({e}); {FIX_USERNS}")
    _STATUS[path] = res
    return res


def _python() -> str:
    """The real interpreter binary (a venv's python is a link into the base install)."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _mounts() -> list[str]:
    """Read-only binds: the system's shared libraries (/usr/lib*, with the merged-/usr links) and
    the Python install — no /usr/bin (no shell or tools to exec), no /etc, nothing else."""
    args: list[str] = []
    bound: list[str] = []

    def bind(p: str) -> None:
        if os.path.exists(p) and not any(p == b or p.startswith(b + "/") for b in bound):
            args.extend(["--ro-bind", p, p])
            bound.append(p)

    for d in ("/usr/lib", "/usr/lib64", "/usr/lib32"):
        bind(d)
    for top in ("lib", "lib64", "lib32"):
        p = Path("/" + top)
        if p.is_symlink():
            args.extend(["--symlink", os.readlink(p), str(p)])
        elif p.is_dir():
            bind(str(p))
    py = _python()
    for root in sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.base_exec_prefix)}):
        if root not in ("/", "/usr"):
            bind(root)  # e.g. /usr/local, /opt/python, ~/.pyenv/versions/3.11.7
    bind(py)  # a system python (/usr/bin/python3.11): the binary alone; its stdlib is in /usr/lib
    return args


_FEATURES: dict[str, frozenset] = {}


def _bwrap_options(bwrap: str) -> frozenset:
    """The options this bwrap knows (from `--help`): newer ones are used only where present."""
    if bwrap not in _FEATURES:
        import re

        try:
            r = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=30, env={})
            _FEATURES[bwrap] = frozenset(re.findall(r"--[a-z0-9-]+", r.stdout + r.stderr))
        except (OSError, subprocess.SubprocessError):
            _FEATURES[bwrap] = frozenset()
    return _FEATURES[bwrap]


def _bwrap_argv(bwrap: str, seccomp_fd: int | None) -> list[str]:
    have = _bwrap_options(bwrap)
    argv = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    argv += [o for o in ("--disable-userns", "--clearenv") if o in have]  # bwrap >= 0.8 / 0.5 (env={} covers the latter)
    argv += ["--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += _mounts()
    argv += ["--proc", "/proc", "--dev", "/dev"]
    if "--size" in have:  # a 16 MB /tmp; without --size (bwrap < 0.6) nothing is writable at all
        argv += ["--size", str(16 * 1024 * 1024), "--tmpfs", "/tmp", "--chdir", "/tmp"]
    # bwrap's own tmpfs for / and /dev would be writable and as large as half the RAM: read-only,
    # so the one writable place is the 16 MB /tmp
    argv += ["--remount-ro", "/dev", "--remount-ro", "/"]
    if seccomp_fd is not None:
        argv += ["--add-seccomp-fd" if "--add-seccomp-fd" in have else "--seccomp", str(seccomp_fd)]
    return argv


def _seccomp_program() -> bytes | None:
    """A BPF program (from the system libseccomp) refusing DENIED_SYSCALLS; None without libseccomp."""
    if _SECCOMP:
        return _SECCOMP[0]
    prog = None
    try:
        import ctypes

        lib = ctypes.CDLL("libseccomp.so.2")
        lib.seccomp_init.restype, lib.seccomp_init.argtypes = ctypes.c_void_p, [ctypes.c_uint32]
        lib.seccomp_syscall_resolve_name.restype, lib.seccomp_syscall_resolve_name.argtypes = ctypes.c_int, [ctypes.c_char_p]
        lib.seccomp_rule_add.restype, lib.seccomp_rule_add.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
        lib.seccomp_export_bpf.restype, lib.seccomp_export_bpf.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]
        lib.seccomp_release.argtypes = [ctypes.c_void_p]
        ctx = lib.seccomp_init(0x7FFF0000)  # SCMP_ACT_ALLOW by default
        if ctx:
            try:
                for name in DENIED_SYSCALLS:
                    nr = lib.seccomp_syscall_resolve_name(name.encode())
                    if nr >= 0 and lib.seccomp_rule_add(ctx, 0x00050000 | 1, nr, 0) != 0:  # SCMP_ACT_ERRNO(EPERM)
                        raise OSError(f"seccomp_rule_add({name}) failed")
                fd = os.memfd_create("forgec-seccomp")
                try:
                    if lib.seccomp_export_bpf(ctx, fd) == 0:
                        os.lseek(fd, 0, 0)
                        prog = b"".join(iter(lambda: os.read(fd, 65536), b""))
                finally:
                    os.close(fd)
            finally:
                lib.seccomp_release(ctx)
    except (OSError, AttributeError):
        prog = None
    _SECCOMP.append(prog or None)
    return _SECCOMP[0]


def seccomp_available() -> bool:
    return _seccomp_program() is not None


def _seccomp_fd() -> int | None:
    """A fresh memfd holding the seccomp program (bwrap reads it to the end), or None."""
    prog = _seccomp_program()
    if prog is None:
        return None
    fd = os.memfd_create("forgec-seccomp")
    os.write(fd, prog)
    os.lseek(fd, 0, 0)
    return fd


# --------------------------------------------------------------------------- framing


def _send_frame(sock: socket.socket, data: bytes, deadline: float) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    sock.settimeout(left)  # sendall: the timeout bounds the whole send
    sock.sendall(struct.pack(">I", len(data)) + data)


def _recv_exact(sock: socket.socket, n: int, deadline: float) -> bytearray:
    """Exactly n bytes, read into one buffer of that size (never more memory than the frame)."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        k = sock.recv_into(view[got:], min(n - got, 1 << 20))
        if not k:
            raise EOFError
        got += k
    view.release()
    return buf


def _mb(n: float) -> str:
    return f"{n / 1048576:.3g} MB"


def _reply_cost(data: bytes | bytearray, budget: int = 0) -> int:
    """About the most `json.loads(data)` allocates, in bytes (0 when that cannot exceed `budget`):
    an upper bound checked with tracemalloc (peak/size is up to 25 for `[[],[],...]`, 18 for
    `{"1":[],...}`, 13 for `["ab",...]`, 5 for a long string with one astral escape): every `,`
    `[` `:` may make a Python object of up to 64 bytes, every `{` a dict of up to 256, plus the
    decoded text (up to 4 bytes a character once a `\\u` escape makes it wide)."""
    if 197 * len(data) <= budget:  # no byte costs more than 5 + 192: no need to look
        return 0
    n = data.count(b",") + data.count(b"[") + data.count(b":")
    return (5 if data.find(b"\\") >= 0 else 2) * len(data) + 64 * n + 192 * data.count(b"{")


def _recv_frame(sock: socket.socket, deadline: float, limit: int = GREETING_MAX) -> dict:
    (n,) = struct.unpack(">I", _recv_exact(sock, 4, deadline))
    if n > limit:  # refused from its header: nothing of it is read
        raise _TooBig(f"its reply is {n} bytes of JSON, over the {_mb(limit)} limit ({REPLY_ENV})")
    data = _recv_exact(sock, n, deadline)
    cost = _reply_cost(data, PARSE_FACTOR * limit)
    if cost > PARSE_FACTOR * limit:
        raise _TooBig(f"its reply would take about {_mb(cost)} once parsed, over the {_mb(PARSE_FACTOR * limit)} limit ({PARSE_FACTOR} x {REPLY_ENV})")
    try:
        msg = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise _ProtocolError(f"a malformed reply ({type(e).__name__})") from None
    if type(msg) is not dict:
        raise _ProtocolError("a malformed reply (not an object)")
    return msg


# --------------------------------------------------------------------------- process tree


_PROC_CHILDREN = os.path.exists(f"/proc/self/task/{os.getpid()}/children")  # CONFIG_PROC_CHILDREN


def _read_proc(path: str) -> bytes:
    """A /proc file's bytes, with plain os.open/os.read (half the cost of open(): it runs per call)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        out = b""
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return out
            out += chunk
    finally:
        os.close(fd)


def _children(pid: int) -> list[int] | None:
    """Child pids of `pid` (None when it is gone or /proc cannot tell)."""
    if not _PROC_CHILDREN:
        return _children_by_scan(pid)
    try:
        return [int(x) for x in _read_proc(f"/proc/{pid}/task/{pid}/children").split()]
    except (OSError, ValueError):
        return None


def _children_by_scan(pid: int) -> list[int] | None:
    """The slow way (a kernel without CONFIG_PROC_CHILDREN): every process's parent from /proc/*/stat."""
    if not os.path.exists(f"/proc/{pid}/stat"):
        return None
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return sorted(out)


_STATUS_KEYS = ("Threads", "SigBlk", "SigIgn", "SigCgt", "VmRSS")


def _status(pid: int) -> dict[str, str]:
    """The fields of /proc/<pid>/status the leftover check reads ({} when it is gone)."""
    try:
        text = _read_proc(f"/proc/{pid}/status").decode("ascii", "replace")
    except OSError:
        return {}
    out: dict[str, str] = {}
    for k in _STATUS_KEYS:
        i = text.find(f"\n{k}:")
        if i >= 0:
            j = text.find("\n", i + 1)
            out[k] = text[i + len(k) + 2 : j if j >= 0 else None].strip()
    return out


def _threads(pid: int, status: dict[str, str] | None = None) -> int:
    try:
        return int((status if status is not None else _status(pid)).get("Threads", "0"))
    except ValueError:
        return 0


def _timers(pid: int) -> bytes | None:
    """/proc/<pid>/timers: the POSIX timers it armed (None where the kernel has no such file)."""
    try:
        return _read_proc(f"/proc/{pid}/timers")
    except OSError:
        return None


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) `pid` has used, from /proc/<pid>/stat (None when it is gone)."""
    try:
        fields = _read_proc(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, ValueError, IndexError):
        return None


# --------------------------------------------------------------------------- parent side


class Sandbox:
    """A persistent sandboxed worker with a per-call deadline; killed and restarted after any failure.

    `unsafe=None` reads FORGEC_UNSAFE_NO_SANDBOX; `unsafe=True` runs the worker without bwrap.
    `reply_mb=None` reads FORGEC_SANDBOX_REPLY_MB (default DEFAULT_REPLY_MB). `worker_cpu`: CPU
    seconds one worker may use in its whole life (its hard RLIMIT_CPU, at least one call's
    worth); the parent replaces it before a call it might not cover.
    """

    def __init__(
        self,
        time_limit: float = DEFAULT_TIME_LIMIT,
        memory_mb: int = DEFAULT_MEMORY_MB,
        unsafe: bool | None = None,
        reply_mb: float | None = None,
        worker_cpu: int = WORKER_CPU,
    ):
        self.time_limit = time_limit
        self.memory_mb = memory_mb
        self.unsafe = unsafe_requested() if unsafe is None else unsafe
        if reply_mb is None:
            reply_mb = float(os.environ.get(REPLY_ENV, "") or DEFAULT_REPLY_MB)
        self.reply_max = max(GREETING_MAX, int(reply_mb * 1024 * 1024))  # bytes
        self._cpu = max(1, int(self.time_limit + 0.999)) + 1  # the soft RLIMIT_CPU of one call
        self.worker_cpu = max(int(worker_cpu), self._cpu + 2)
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._worker: int | None = None  # pid of the interpreter (host pid namespace)
        self._pidfd: int | None = None  # a pidfd of the worker (SIGSTOP/SIGCONT never hit a reused pid)
        self._stopped = False  # the worker is SIGSTOPped (between calls)
        self._base: dict = {}  # the worker's signal masks and RSS when it was fresh
        self._busy = 0.0  # an upper bound of the worker's CPU time (wall time while it was running)
        self._retire = False  # replace the worker before the next call
        self._check_timers = True  # read /proc/<pid>/timers after a call (not needed under seccomp)
        self._owner = os.getpid()
        self._lock = threading.Lock()
        self._held_key: str | None = None  # hash of the state the worker holds
        self.restarts = 0

    # ---- lifecycle
    def _argv(self, chan: int) -> tuple[list[str], int | None]:
        """The command line (and the seccomp memfd to pass); raises ToolError when no sandbox is usable."""
        limits = (chan, int(self.memory_mb), self._cpu, self.worker_cpu, self.reply_max)
        cmd = [_python(), "-I", "-S", "-B", "-c", _worker_source(), *map(str, limits)]
        if self.unsafe:
            return cmd, None
        ok, why = availability()
        if not ok:
            raise ToolError(
                f"python tool bodies run only in the OS sandbox, which is unavailable: {why}; "
                f"or set {UNSAFE_ENV}=1 to run them without isolation (unsafe: only for code you trust)",
                "sandbox",
                internal=True,
            )
        fd = _seccomp_fd()
        return _bwrap_argv(bwrap_path() or "bwrap", fd) + cmd, fd

    def _start(self) -> None:
        t0 = time.monotonic()
        a, b = socket.socketpair()
        try:
            argv, seccomp_fd = self._argv(b.fileno())
        except BaseException:
            a.close()
            b.close()
            raise
        try:
            fds = [b.fileno()] + ([seccomp_fd] if seccomp_fd is not None else [])
            self._proc = subprocess.Popen(
                argv, pass_fds=fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={}, start_new_session=True
            )
        except OSError:
            a.close()
            raise ToolError("python tool sandbox failed to start (cannot run bwrap)", "sandbox", internal=True) from None
        finally:
            b.close()
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        self._sock = a
        self._owner = os.getpid()
        try:
            hello = _recv_frame(a, time.monotonic() + STARTUP_TIMEOUT)  # start-up is not charged to a call
            if hello != {"id": 0, "ready": True}:
                raise _ProtocolError("bad greeting")
        except (OSError, EOFError, _ProtocolError, struct.error):
            code = self._proc.poll()
            self._kill()
            raise ToolError(f"python tool sandbox failed to start (exit code {code})", "sandbox", internal=True) from None
        self._worker = self._find_worker()
        if self._worker is None:  # without it no call could be checked for leftovers: refuse now, clearly
            self._kill()
            raise ToolError("python tool sandbox started but its worker is not where bwrap puts it (bwrap -> reaper -> worker)", "sandbox", internal=True)
        try:
            self._pidfd = os.pidfd_open(self._worker)
        except (AttributeError, OSError):  # Linux < 5.3, or not Linux: signals go by pid
            self._pidfd = None
        st = _status(self._worker)
        self._base = {k: st.get(k) for k in ("SigBlk", "SigIgn", "SigCgt")}
        self._base["rss"] = _kb(st.get("VmRSS"))
        self._check_timers = self.unsafe or not seccomp_available()  # with seccomp no timer can be armed
        self._busy = time.monotonic() - t0  # the worker cannot have used more CPU than this
        self._retire = False
        self._pause()

    def _signal(self, sig: int) -> bool:
        try:
            if self._pidfd is not None:
                signal.pidfd_send_signal(self._pidfd, sig)
            elif self._worker is not None:
                os.kill(self._worker, sig)
            return True
        except OSError:
            return False

    def _pause(self) -> None:
        """Stop the worker between calls: no code of a body (a handler, a rewritten serve loop) runs
        outside a call, and an idle worker uses no CPU."""
        self._stopped = self._signal(signal.SIGSTOP)

    def _resume(self) -> None:
        if self._stopped:
            self._stopped = False
            self._signal(signal.SIGCONT)

    def _worn_out(self) -> bool:
        """True when the worker's lifetime CPU (its hard RLIMIT_CPU) might not cover one more call."""
        need = self.time_limit + 1.0
        if self._busy + need < self.worker_cpu:
            return False
        used = cpu_seconds(self._worker) if self._worker is not None else None
        if used is None:
            return True
        self._busy = used
        return used + need >= self.worker_cpu

    def _find_worker(self) -> int | None:
        """The interpreter's host pid: bwrap -> its pid-1 reaper -> the worker (or the process itself, unsafe)."""
        if self.unsafe:
            return self._proc.pid
        for _ in range(200):
            init = _children(self._proc.pid) or []
            kids = _children(init[0]) if len(init) == 1 else None
            if kids and len(kids) == 1:
                return kids[0]
            time.sleep(0.005)
        return None

    def _alone(self, status: dict[str, str] | None = None) -> bool:
        """True when the sandbox holds exactly the worker (one thread, no children, no orphans)."""
        w = self._worker
        if self.unsafe and not os.path.isdir("/proc"):
            return True  # no /proc (not Linux): nothing to check, and no isolation promised
        if w is None or _children(w) != [] or _threads(w, status) != 1:
            return False
        if self.unsafe:
            return True
        init = _children(self._proc.pid)
        return init is not None and len(init) == 1 and _children(init[0]) == [w]

    def _kill(self) -> None:
        """Kill the whole sandbox: bwrap's process group (the pid namespace dies with its reaper)."""
        proc = self._proc
        if proc is not None:
            # the namespace's reaper first (the kernel then kills everything in the pid namespace)
            # so bwrap itself reaps it and exits: no zombie is left to the host's init
            for pid in _children(proc.pid) or []:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                proc.wait(0.5)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                proc.wait(5)
            except Exception:  # noqa: BLE001
                pass
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        self._close_pidfd()
        self._proc = self._sock = self._worker = None
        self._held_key = None
        self._stopped = False
        self.restarts += 1

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            try:
                os.close(self._pidfd)
            except OSError:
                pass
            self._pidfd = None

    def close(self) -> None:
        with self._lock:
            if self._owner != os.getpid():
                self._forget()
                return
            had = self._proc is not None
            self._kill()
            if had:
                self.restarts -= 1

    def _forget(self) -> None:
        """After os.fork(): drop the parent's worker without touching it (the parent still uses it)."""
        if self._sock is not None:
            try:
                self._sock.detach()
            except OSError:
                pass
        self._close_pidfd()  # this process's copy; the parent keeps its own
        self._proc = self._sock = self._worker = None
        self._held_key = None
        self._stopped = False
        self._owner = os.getpid()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # ---- calls
    def _exchange(self, req: dict, state_text: bytes | None, deadline: float) -> dict:
        assert self._sock is not None
        _send_frame(self._sock, json.dumps(req, ensure_ascii=True, separators=(",", ":")).encode("ascii"), deadline)
        if state_text is not None:
            _send_frame(self._sock, state_text, deadline)
        reply = _recv_frame(self._sock, deadline, self.reply_max)
        if reply.get("id") != req["id"]:
            raise _ProtocolError("a reply for another call")
        return reply

    def _check_clean(self) -> str:
        """After a call: '' when nothing is left over, else why the sandbox must go.

        Read from the host: the process tree, the thread count, the signal masks (a handler or
        an ignored signal the body installed) and, where seccomp does not refuse timers, the
        POSIX timers. Open file descriptors are not checked (NOFILE 32 bounds them; listing
        /proc/<pid>/fd would cost 20 us a call). A worker that kept over half its memory limit
        is retired (replaced before the next call) without failing this one."""
        assert self._sock is not None
        try:
            self._sock.setblocking(False)
            extra = self._sock.recv(1, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            extra = b""
        except OSError:
            extra = b"?"
        finally:
            self._sock.setblocking(True)
        if extra:
            return "wrote extra data to the sandbox channel"
        w = self._worker
        if self.unsafe and not os.path.isdir("/proc"):
            return ""  # no /proc (not Linux): nothing to check, and no isolation promised
        st = _status(w) if w is not None else {}
        if not self._alone(st):
            return "left processes or threads running in the sandbox"
        if any(st.get(k) != self._base.get(k) for k in ("SigBlk", "SigIgn", "SigCgt")):
            return "changed the worker's signal handlers or signal mask"
        if self._check_timers and (_timers(w) or b"").strip():
            return "left a timer armed in the sandbox"
        rss, base = _kb(st.get("VmRSS")), self._base.get("rss")
        if rss is not None and base is not None and (rss - base) * 1024 > self.memory_mb * 1024 * 1024 // 2:
            self._retire = True  # it keeps much memory between calls: a fresh worker next time
        return ""

    def call(
        self, tool: str, source: str, params: tuple, args: dict, state: dict, line: int = 0, file: str = "", writes: bool = True, state_key: str | None = None
    ) -> tuple[Any, Any]:
        """Run one call; returns (result, new state or None) or raises ToolError.

        `state_key` (the state hash) lets the worker keep the last state it was sent: calls on
        an unchanged state send only the key instead of the whole world again.
        """
        where = f" ({file}:{line})" if file and line else ""
        with self._lock:
            if self._owner != os.getpid():
                self._forget()
            if self._proc is None or self._proc.poll() is not None or self._retire or self._worn_out():
                if self._proc is not None:
                    self._kill()
                self._start()
            reply = self._call_locked(tool, source, params, args, state, where, writes, state_key)
        if reply.get("ok") is True:
            return reply.get("result"), reply.get("state")
        kind, message = reply.get("kind"), str(reply.get("message", ""))
        if kind == "refused":
            raise ToolError(message, "precondition")
        if kind == "memory":
            with self._lock:
                self._kill()
        raise ToolError(f"python tool {tool} failed: {message}{where}", "sandbox", internal=True)

    def _call_locked(self, tool: str, source: str, params: tuple, args: dict, state: dict, where: str, writes: bool, state_key: str | None) -> dict:
        req = {"id": secrets.randbits(62) + 1, "tool": tool, "source": source, "params": list(params), "args": args, "key": state_key, "writes": bool(writes)}
        try:
            send_state = state_key is None or state_key != self._held_key
            text = _state_text(state) if send_state else None
            t0 = time.monotonic()
            deadline = t0 + self.time_limit
            self._resume()
            reply = self._exchange(dict(req, has_state=send_state), text, deadline)
            if reply.get("need_state"):
                req["id"] += 1
                reply = self._exchange(dict(req, has_state=True), _state_text(state), deadline)
            self._held_key = state_key
            if reply.get("kind") == "memory":  # the worker exits after this reply (`call` kills it): nothing to check
                return reply
            bad = self._check_clean()
            self._busy += time.monotonic() - t0
            if not bad:
                self._pause()
        except (TimeoutError, socket.timeout):
            self._kill()
            raise ToolError(f"python tool {tool} timed out after {self.time_limit:g}s{where}", "sandbox", internal=True) from None
        except (EOFError, ConnectionError, BrokenPipeError):
            code = self._proc.poll() if self._proc is not None else None
            self._kill()
            raise ToolError(f"python tool {tool} crashed (worker exit code {code}){where}", "sandbox", internal=True) from None
        except (TypeError, ValueError) as e:  # arguments or state that are not JSON
            self._kill()
            raise ToolError(f"python tool {tool}: cannot send the call: {e}", "sandbox") from None
        except _TooBig as e:
            self._kill()
            raise ToolError(f"python tool {tool} failed: {e}; the worker was restarted{where}", "sandbox", internal=True) from None
        except (_ProtocolError, OSError) as e:
            self._kill()
            raise ToolError(f"python tool {tool} broke the sandbox protocol ({e}); the worker was restarted{where}", "sandbox", internal=True) from None
        if bad:
            self._kill()
            raise ToolError(f"python tool {tool} {bad}; the sandbox was killed{where}", "sandbox", internal=True)
        return reply


_WORKER_TEXT: list[str] = []


def _worker_source() -> str:
    if not _WORKER_TEXT:
        _WORKER_TEXT.append(WORKER_SOURCE.read_text(encoding="utf-8"))
    return _WORKER_TEXT[0]


def _kb(v: str | None) -> int | None:
    """'1234 kB' -> 1234."""
    try:
        return int(v.split()[0]) if v else None
    except (ValueError, IndexError):
        return None


def _state_text(state: Any) -> bytes:
    return json.dumps(state, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


MAX_TENANTS = 8  # workers kept at once by `shared(tenant)`; the least recently used one is closed
_POOL: dict[str, Sandbox] = {}  # tenant -> worker, least recently used first
_INSTALLED: Sandbox | None = None
_SHARED_PID = 0
_SHARED_LOCK = threading.Lock()


def shared(tenant: str | None = None) -> Sandbox:
    """The sandbox for `tenant` (one per generated env module: python bodies of two envs never
    share a worker, so a hostile body cannot answer for another env's tools), started on first
    call and stopped at exit. A sandbox given to `install` serves every tenant.

    Limits come from FORGEC_SANDBOX_TIME_LIMIT (seconds), FORGEC_SANDBOX_MEMORY_MB and
    FORGEC_SANDBOX_REPLY_MB (read by `Sandbox`). A
    forked child process gets its own workers (it never talks to its parent's).
    """
    global _INSTALLED, _SHARED_PID
    with _SHARED_LOCK:
        if _SHARED_PID != os.getpid():
            _SHARED_PID = os.getpid()
            _POOL.clear()  # the parent's workers: left alone (the parent still uses them)
            _INSTALLED = None
        if _INSTALLED is not None:
            return _INSTALLED
        key = tenant or ""
        sb = _POOL.pop(key, None)
        if sb is None:
            sb = Sandbox(
                float(os.environ.get("FORGEC_SANDBOX_TIME_LIMIT", DEFAULT_TIME_LIMIT)),
                int(os.environ.get("FORGEC_SANDBOX_MEMORY_MB", DEFAULT_MEMORY_MB)),
            )
            while len(_POOL) >= MAX_TENANTS:
                _POOL.pop(next(iter(_POOL))).close()
        _POOL[key] = sb  # most recently used last
        return sb


def release(tenant: str) -> bool:
    """Stop `tenant`'s worker now (a `forgec serve` session ended); whether there was one."""
    with _SHARED_LOCK:
        if _SHARED_PID != os.getpid():
            return False
        sb = _POOL.pop(tenant, None)
    if sb is None:
        return False
    sb.close()
    return True


@atexit.register
def _close_pool() -> None:
    """Stop this process's workers at exit (one hook for the pool: a hook per worker would keep every closed one)."""
    if _SHARED_PID == os.getpid():
        for sb in list(_POOL.values()):
            sb.close()


def install(sb: Sandbox | None) -> Sandbox | None:
    """Make `sb` serve every tenant of this process (tests, custom limits); returns the previous one."""
    global _INSTALLED, _SHARED_PID
    with _SHARED_LOCK:
        old = _INSTALLED if _SHARED_PID == os.getpid() else None
        if _SHARED_PID != os.getpid():
            _POOL.clear()
        _INSTALLED, _SHARED_PID = sb, os.getpid()
        return old


@contextlib.contextmanager
def installed(sb: Sandbox):
    """`install(sb)` for the duration of a `with` block (tests, custom limits): the previous sandbox comes back
    and `sb` is closed at the end."""
    old = install(sb)
    try:
        yield sb
    finally:
        sb.close()
        install(old)
