"""Issue 25, "every resource bounded": holes an independent attacker found in the python-tool
sandbox, each played through a generated env's `Env.step` (the escapes and helpers of
test_sandbox_attacks.py), and checked from the *host*: the worker's CPU time and memory in
/proc, the parent's own peak memory, the host's shared memory and process count.

1. SysV / POSIX IPC (a shared memory segment outlived its call and escaped RLIMIT_AS);
2. timers and code left running after the reply (an itimer handler grew the idle worker from
   8 to 408 MB; a body could raise its soft RLIMIT_CPU and ignore SIGXCPU);
3. replies that cost the parent 50 times their size (42 MB -> 2.07 GB outside the deadline);
4. calls that leave anything behind (signal handlers, masks, timers, memory) -> a fresh worker.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_sandbox_attacks import PRELUDE, ROUTES, needs_bwrap, py, run, still_serves  # noqa: F401 - needs_bwrap is autouse

from forgec.codegen import emit_env, load_env_module
from forgec.lang import ast as A
from forgec.runtime import sandbox
from forgec.runtime.envrt import ToolError

MB = 1024 * 1024
ESC = ROUTES["collections"] + PRELUDE  # sys, os, B (real builtins), imp (real __import__), out
CTYPES = "ct = imp('ctypes')\nlibc = ct.CDLL(None, use_errno=True)\nlibc.shmat.restype = ct.c_void_p\n"


def tries(**calls: str) -> str:
    """A body that makes each libc call (an expression on `libc`) and records (name, result, errno)."""
    body = CTYPES
    for name, expr in calls.items():
        body += f"ct.set_errno(0)\nr = {expr}\nout.append(({name!r}, r, ct.get_errno()))\n"
    return body + "return repr(out)\n"


BODIES = {
    # 1. IPC: each would hold kernel memory after the call, outside RLIMIT_AS
    "ipc": tries(
        shmget="libc.shmget(0, 600 * 1024 * 1024, 0o1000 | 0o600)",  # IPC_PRIVATE, IPC_CREAT
        shmat="libc.shmat(0, None, 0)",
        msgget="libc.msgget(0, 0o1000 | 0o600)",
        semget="libc.semget(0, 8, 0o1000 | 0o600)",
        mq_open="libc.mq_open(b'/forgec-q', 0o100 | 2, 0o600, None)",  # O_CREAT | O_RDWR
        shm_open="libc.shm_open(b'/forgec-shm', 0o100 | 2, 0o600)",
    ),
    # 2. timers, without touching a signal handler: all refused, nothing fires later
    "timers": tries(
        setitimer="libc.setitimer(0, (ct.c_long * 4)(0, 50000, 0, 50000), None)",  # ITIMER_REAL every 50 ms
        alarm="imp('signal').alarm(1)",
        timer_create="libc.timer_create(1, None, ct.byref(ct.c_void_p()))",
        timerfd_create="libc.timerfd_create(1, 0)",
    ),
    # 2. an itimer whose handler allocates and spins (the attack that grew serve to 408 MB)
    "itimer_handler": (
        "sig = imp('signal')\nkeep = []\n"
        "def h(*a):\n    keep.append(' ' * 10 ** 7)\n    n = 0\n    while n < 10 ** 6:\n        n += 1\n"
        "sig.signal(sig.SIGALRM, h)\nsig.signal(sig.SIGVTALRM, h)\n"
        "for t in (sig.ITIMER_REAL, sig.ITIMER_VIRTUAL):\n"
        "    try:\n        sig.setitimer(t, 0.05, 0.05)\n    except B.BaseException as e:\n        out.append(repr(e))\n"
        "return repr(out)\n"
    ),
    # 2. raise the soft CPU limit to the hard one and ignore SIGXCPU, then spin
    "cpu_unlimited": (
        "sig = imp('signal')\nres = imp('resource')\nsig.signal(sig.SIGXCPU, sig.SIG_IGN)\n"
        "hard = res.getrlimit(res.RLIMIT_CPU)[1]\nres.setrlimit(res.RLIMIT_CPU, (hard, hard))\n"
        "try:\n    res.setrlimit(res.RLIMIT_CPU, (-1, -1))\nexcept B.BaseException as e:\n    out.append(repr(e))\n"
        "while True:\n    pass\n"
    ),
    # 2. code left running after the reply: answer the call early (its real id), then allocate and spin. It grows to
    # 120 MB, under the 256 MB limit: a body that hit the limit would die of MemoryError, and on a loaded machine it
    # could do so before the parent looked at it, which then found no worker (reported as left-over processes or
    # threads) instead of the early answer this test is about
    "early_reply": (
        "msg = sys._getframe(2).f_locals['msg']\nst = imp('struct')\n"
        "d = ('{\"id\":%d,\"ok\":true,\"result\":\"early\",\"state\":null}' % msg['id']).encode()\n"
        "os.write(int(sys.argv[1]), st.pack('>I', len(d)) + d)\n"
        "keep = []\nwhile True:\n    if len(keep) < 120:\n        keep.append(' ' * 10 ** 6)\n    n = 0\n    while n < 10 ** 5:\n        n += 1\n"
    ),
    # 2. code left running after the reply: rewrite the worker's serve loop (it runs in the same interpreter); grows to
    # 120 MB and spins, as above
    "rewrite_loop": (
        "g = sys._getframe(1).f_globals\nold = g['_recv']\n"
        "def spin(fd):\n    keep = []\n    while True:\n        if len(keep) < 120:\n            keep.append(' ' * 10 ** 6)\n"
        "        n = 0\n        while n < 10 ** 5:\n            n += 1\n"
        "g['_recv'] = spin\nreturn 'rewritten'\n"
    ),
    # 4. things a call leaves behind
    "handler": "sig = imp('signal')\nsig.signal(sig.SIGUSR1, lambda *a: None)\nreturn 'ok'\n",
    "ignore": "sig = imp('signal')\nsig.signal(sig.SIGTERM, sig.SIG_IGN)\nreturn 'ok'\n",
    "mask": "sig = imp('signal')\nsig.pthread_sigmask(sig.SIG_BLOCK, [sig.SIGUSR2])\nreturn 'ok'\n",
    "posix_timer": (  # SIGEV_NONE: a timer that signals nobody, only visible in /proc/<pid>/timers
        CTYPES + "sev = (ct.c_int * 16)()\nsev[3] = 1\ntid = ct.c_void_p()\nout.append(libc.timer_create(1, sev, ct.byref(tid)))\nreturn repr(out)\n"
    ),
    "hoard": "B.forgec_hoard = ' ' * (150 * 1024 * 1024)\nreturn 'hoarded'\n",
    # burn `x` seconds of CPU (getrusage), for the lifetime budget
    "burn": "ru = imp('resource').getrusage\nt = ru(0).ru_utime + ru(0).ru_stime + float(x)\nwhile ru(0).ru_utime + ru(0).ru_stime < t:\n    pass\nreturn 'burnt'\n",
    # 3. replies: just over the byte cap (the worker refuses it), a dense one under the cap that
    # would take 50x its size once parsed, and the same two forged as raw frames (the parent refuses)
    "big_result": "return 'x' * (int(x) + 1)\n",
    "big_state": "state['globals']['blob'] = 'x' * (int(x) + 1)\nreturn 'ok'\n",
    "dense_result": "return [[]] * (int(x) // 4)\n",  # 3 MB of JSON, 134 MB parsed by the estimate
    "dense_legal": "return [[]] * int(x)\n",
    "raw_big": (
        "msg = sys._getframe(2).f_locals['msg']\nst = imp('struct')\nfd = int(sys.argv[1])\n"
        "d = ('{\"id\":%d,\"ok\":true,\"result\":\"' % msg['id']).encode() + b'x' * (int(x) + 1) + b'\",\"state\":null}'\n"
        "os.write(fd, st.pack('>I', len(d)))\nos.write(fd, d)\nreturn 'sent'\n"
    ),
    "raw_dense": (
        "msg = sys._getframe(2).f_locals['msg']\nst = imp('struct')\nfd = int(sys.argv[1])\n"
        "d = ('{\"id\":%d,\"ok\":true,\"state\":null,\"result\":[' % msg['id']).encode() + b'[],' * (int(x) // 4) + b'[]]}'\n"
        "os.write(fd, st.pack('>I', len(d)))\nos.write(fd, d)\nreturn 'sent'\n"
    ),
}
READS = {"ipc", "timers", "itimer_handler", "cpu_unlimited", "early_reply", "rewrite_loop", "posix_timer", "big_result", "dense_result", "dense_legal", "raw_big", "raw_dense"}


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    tools = [py("echo", "return 'echo:' + x", ann=("read",))]
    for name, body in BODIES.items():
        tools.append(py(name, ESC + body, ann=("read",) if name in READS else ("action",)))
    p = tmp_path_factory.mktemp("security") / "env.py"
    p.write_text(emit_env(A.EnvDecl("security", None, (), (), tuple(tools)), "security.forge"))
    return load_env_module(p)


@pytest.fixture
def sb():
    with sandbox.installed(sandbox.Sandbox(time_limit=1.5, memory_mb=256, unsafe=False)) as s:
        yield s


@pytest.fixture
def unsafe_sb():
    with sandbox.installed(sandbox.Sandbox(time_limit=1.5, memory_mb=256, unsafe=True)) as s:
        yield s


def started(mod, sb) -> int:
    """Start the worker with one honest call; its host pid."""
    assert mod.Env().step("echo", {"x": "A"}) == "echo:A"
    assert sb._worker is not None
    return sb._worker


def nprocs() -> int:
    return sum(1 for p in Path("/proc").iterdir() if p.name.isdigit())


def meminfo_kb(field: str) -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def self_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def gone(pid: int) -> bool:
    deadline = time.monotonic() + 30  # returns as soon as it is gone; a loaded machine takes longer to reap
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return not Path(f"/proc/{pid}").exists()


def stopped(pid: int) -> bool:
    """Waits until `pid` is in state T (stopped), with a generous deadline."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
            return True
        time.sleep(0.02)
    return False


def results(r) -> dict:
    """{name: (result, errno)} from a `tries` body's repr."""
    import ast

    return {name: (res, err) for name, res, err in ast.literal_eval(r)}


# --------------------------------------------------------------------------- 1. IPC


def test_sysv_and_posix_ipc_are_refused(mod, sb):
    """shmget/shmat, msgget, semget, mq_open fail with EPERM (seccomp); shm_open finds no
    writable /dev/shm. Host shared memory and process count stay where they were."""
    assert sandbox.seccomp_available()
    worker, procs, shmem = started(mod, sb), nprocs(), meminfo_kb("Shmem")
    r, dt, _ = run(mod, "ipc")
    got = results(r)
    for name in ("shmget", "shmat", "msgget", "semget", "mq_open"):
        assert got[name][0] in (-1, 2**64 - 1) and got[name][1] == 1, (name, got)  # EPERM ((void *) -1 for shmat)
    assert got["shm_open"][0] == -1, got
    assert sb._worker == worker and dt < sb.time_limit + 3  # nothing left behind: the worker serves on
    assert meminfo_kb("Shmem") < shmem + 64 * 1024
    assert nprocs() < procs + 5
    still_serves(mod)


# --------------------------------------------------------------------------- 2. timers, CPU, idle code


def test_timers_are_refused_and_nothing_fires_later(mod, sb):
    """setitimer, alarm, timer_create, timerfd_create are refused; a second later the worker is
    alive (no SIGALRM killed it) and has used no CPU."""
    worker = started(mod, sb)
    r, _, _ = run(mod, "timers")
    got = results(r)
    for name in ("setitimer", "timer_create", "timerfd_create"):
        assert got[name][0] == -1 and got[name][1] == 1, (name, got)
    assert got["alarm"][0] in (-1, 2**32 - 1), got  # glibc's alarm() returns the -EPERM as an unsigned
    assert sb._worker == worker
    cpu = sandbox.cpu_seconds(worker)
    time.sleep(1.3)
    assert sandbox.cpu_seconds(worker) == cpu and sb._proc.poll() is None
    still_serves(mod)
    assert sb._worker == worker


@pytest.mark.parametrize("sandboxed", [True, False], ids=["bwrap", "unsafe"])
def test_itimer_with_a_handler_cannot_run_after_the_call(mod, sandboxed, request):
    """The reported attack: an itimer whose handler allocates and spins, then return. With
    seccomp the timer is refused; with or without it the new handler is seen from the host
    (SigCgt) and the worker is killed at once, so it neither grows nor burns CPU afterwards."""
    sb = request.getfixturevalue("sb" if sandboxed else "unsafe_sb")
    worker, procs = started(mod, sb), nprocs()
    r, dt, _ = run(mod, "itimer_handler")
    assert isinstance(r, ToolError) and "signal handlers" in r.message, r
    assert dt < sb.time_limit + 3
    assert gone(worker)
    assert nprocs() < procs + 5
    still_serves(mod)


@pytest.mark.parametrize("attack", ["early_reply", "rewrite_loop"])
def test_code_left_running_after_the_reply_is_frozen_between_calls(mod, sb, attack):
    """A body that answers its call and keeps running (a forged early reply, or a rewritten serve
    loop) gets no CPU and no memory once the call is over: the worker is stopped between calls
    (read from the host: state T, CPU time and RSS unchanged half a second later). The next call
    resumes it, gets no proper answer and fails within its limit; the one after works."""
    worker = started(mod, sb)
    r, _, _ = run(mod, attack)
    assert r in ("early", "rewritten"), r
    assert stopped(worker)  # the parent stops it as the call returns; the kernel takes a moment on a loaded machine
    cpu, rss = sandbox.cpu_seconds(worker), sandbox._status(worker)["VmRSS"]
    time.sleep(0.5)  # the window in which it must not run
    assert sandbox.cpu_seconds(worker) == cpu and sandbox._status(worker)["VmRSS"] == rss
    assert Path(f"/proc/{worker}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"
    env = mod.Env()
    t0 = time.monotonic()
    r = env.step("echo", {"x": "B"})
    assert isinstance(r, ToolError) and r.code == "sandbox", r
    assert time.monotonic() - t0 < sb.time_limit + 3
    assert gone(worker)
    still_serves(mod)


def test_cpu_hard_limit_is_finite_and_cannot_be_raised(mod, sb):
    """RLIMIT_CPU's hard limit is the worker's lifetime budget (not unlimited): a body that raises
    its soft limit and ignores SIGXCPU is still stopped by the call's deadline, and the worker
    it leaves (a changed SIGXCPU disposition) is gone."""
    worker = started(mod, sb)
    limits = Path(f"/proc/{worker}/limits").read_text()
    line = next(ln for ln in limits.splitlines() if ln.startswith("Max cpu time"))
    assert line.split()[4] == str(sb.worker_cpu) and sb.worker_cpu == sandbox.WORKER_CPU, line
    r, dt, _ = run(mod, "cpu_unlimited")
    assert isinstance(r, ToolError) and "timed out" in r.message, r
    assert dt < sb.time_limit + 3 and gone(worker)
    still_serves(mod)


def test_worker_is_replaced_before_its_cpu_budget_runs_out(mod):
    """Calls that each burn CPU all succeed: the parent replaces the worker before a call its
    lifetime budget (hard RLIMIT_CPU, here 5 s: the least for a 2 s call) might not cover, so
    SIGKILL never hits a call."""
    sb = sandbox.Sandbox(time_limit=2.0, memory_mb=256, unsafe=False, worker_cpu=1)
    old = sandbox.install(sb)
    try:
        assert sb.worker_cpu == 5  # raised to one call's soft limit (3 s) + 2
        workers = set()
        for _ in range(12):
            assert mod.Env().step("burn", {"x": "0.25"}) == "burnt"
            workers.add(sb._worker)
            assert sandbox.cpu_seconds(sb._worker) < sb.worker_cpu
        assert len(workers) >= 2 and sb.restarts >= 1
        still_serves(mod)
    finally:
        sb.close()
        sandbox.install(old)


# --------------------------------------------------------------------------- 3. replies


@pytest.mark.parametrize(
    "attack,fragment",
    [
        ("big_result", "of JSON, over the 4 MB limit (FORGEC_SANDBOX_REPLY_MB)"),
        ("big_state", "of JSON, over the 4 MB limit (FORGEC_SANDBOX_REPLY_MB)"),
        ("dense_result", "once parsed, over the 32 MB limit (8 x FORGEC_SANDBOX_REPLY_MB)"),
        ("raw_big", "of JSON, over the 4 MB limit (FORGEC_SANDBOX_REPLY_MB)"),
        ("raw_dense", "once parsed, over the 32 MB limit (8 x FORGEC_SANDBOX_REPLY_MB)"),
    ],
)
def test_reply_over_the_cap_is_refused_before_it_costs_the_parent(mod, sb, attack, fragment):
    """A result or state just over the 4 MB default, or a reply under it that would take 50x its
    size once parsed (`[[],[],...]`), fails with a ToolError naming the limit, within the call's
    time; whether the worker refuses it (honest route) or the parent does (a raw frame forged on
    the channel), the parent's peak memory grows by a few times the cap at most (42 MB used to
    cost it 2 GB)."""
    assert sb.reply_max == sandbox.DEFAULT_REPLY_MB * MB
    started(mod, sb)
    before = self_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    r, dt, env = run(mod, attack, str(sb.reply_max))
    peak = self_kb("VmHWM")
    assert isinstance(r, ToolError) and r.code == "sandbox" and fragment in r.message, r
    assert dt < sb.time_limit + 3
    assert (peak - before) * 1024 < 3 * sb.reply_max + 16 * MB, (peak - before) // 1024
    assert env.state == {"entities": {}, "globals": {}}
    still_serves(mod)


def test_largest_accepted_dense_reply_costs_the_parent_a_bounded_amount(mod, sb):
    """Just under the parse limit, the densest reply (`[[],[],...]`: 21x its size parsed) is
    accepted, and parsing it plus the runtime's copy of the result stay within a few times the
    parse limit (8 x the reply cap)."""
    n = int(0.95 * sandbox.PARSE_FACTOR * sb.reply_max) // (3 * 2 + 64 * 2)  # _reply_cost of '[],'
    started(mod, sb)
    before = self_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    r, dt, _ = run(mod, "dense_legal", str(n))
    peak = self_kb("VmHWM")
    assert r == [[]] * n
    assert (peak - before) * 1024 < 3 * sandbox.PARSE_FACTOR * sb.reply_max, (peak - before) // 1024
    del r


def test_reply_cap_follows_the_environment(mod, monkeypatch):
    """FORGEC_SANDBOX_REPLY_MB sets the cap (here 0.5 MB: a 1 MB result is refused; 2 MB: accepted)."""
    for mb, ok in (("0.5", False), ("2", True)):
        monkeypatch.setenv("FORGEC_SANDBOX_REPLY_MB", mb)
        sb = sandbox.Sandbox(time_limit=1.5, memory_mb=256, unsafe=False)
        old = sandbox.install(sb)
        try:
            r, _, _ = run(mod, "big_result", str(MB))
            if ok:
                assert r == "x" * (MB + 1)
            else:
                assert isinstance(r, ToolError) and "FORGEC_SANDBOX_REPLY_MB" in r.message, r
        finally:
            sb.close()
            sandbox.install(old)


# --------------------------------------------------------------------------- 4. leftovers


@pytest.mark.parametrize("attack", ["handler", "ignore", "mask"])
def test_changed_signal_handling_kills_the_worker(mod, sb, attack):
    """A call that installs a handler, ignores a signal or blocks one fails and its worker is gone
    before the next call (checked from the host: SigCgt, SigIgn, SigBlk in /proc/<pid>/status)."""
    worker = started(mod, sb)
    r, _, _ = run(mod, attack)
    assert isinstance(r, ToolError) and "signal handlers or signal mask" in r.message, r
    assert gone(worker)
    still_serves(mod)
    assert sb._worker != worker


def test_posix_timer_left_behind_kills_the_worker_without_seccomp(mod, unsafe_sb):
    """Without seccomp (unsafe mode) timer_create works; the timer it leaves is read from the
    host in /proc/<pid>/timers and the worker is killed."""
    worker = started(mod, unsafe_sb)
    r, _, _ = run(mod, "posix_timer")
    assert isinstance(r, ToolError) and "timer" in r.message, r
    assert gone(worker)
    still_serves(mod)


def test_worker_keeping_memory_after_a_call_is_replaced(mod, sb):
    """A call that leaves over half the memory limit allocated (150 MB of 256) succeeds, and the
    next call runs in a fresh worker: the old one, and its memory, are gone."""
    worker = started(mod, sb)
    assert mod.Env().step("hoard", {"x": ""}) == "hoarded"
    still_serves(mod)
    assert sb._worker != worker and gone(worker)
    assert int(sandbox._status(sb._worker)["VmRSS"].split()[0]) < 100 * 1024
