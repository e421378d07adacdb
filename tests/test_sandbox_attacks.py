"""Hostile python tool bodies (issue 14, items 1 and 4): each attack runs through a generated
env's `Env.step` under both known escapes of the restricted builtins, and the test checks the
*host* afterwards (files, listeners, processes, environment), never the sandbox's own report."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from hostproc import processes_with

from forgec.codegen import emit_env, load_env_module
from forgec.lang import ast as A
from forgec.runtime import sandbox
from forgec.runtime.envrt import ToolError



@pytest.fixture(autouse=True, scope="module")
def needs_bwrap():
    """The suite needs the sandbox (README setup, .ci/run installs it): fail loudly, never skip."""
    ok, why = sandbox.availability()
    assert ok, f"the python-body sandbox is unusable here: {why}"

STR = A.PrimType("str")
SECRET = "forgec-h4-secret-" + uuid.uuid4().hex
MARKER = "forgec-h4-marker-" + uuid.uuid4().hex
# the two one-line escapes from the restricted builtins to the real `os` (issue 14, item 1)
ROUTES = {
    "collections": "import collections\nsys = collections._sys\nos = sys.modules['os']\n",
    "subclasses": "g = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__\nsys = g['sys']\nos = sys.modules['os']\n",
}
PRELUDE = "B = sys.modules['builtins']\nimp = B.__import__\nout = []\n"


def attempt(*lines: str) -> str:
    """A body that tries each line in turn and returns what it got (or the error)."""
    body = ""
    for ln in lines:
        body += "try:\n" + "".join(f"    {x}\n" for x in ln.split("\n")) + "except B.BaseException as e:\n    out.append('blocked: ' + repr(e))\n"
    return body + "return repr(out)\n"


def attacks(host: dict) -> dict[str, str]:
    """Attack name -> body (after the escape prelude). `host` holds the host paths/ports/pids."""
    return {
        "read_passwd": attempt("out.append(imp('io').open('/etc/passwd').read())"),
        "read_host_files": attempt(
            f"out.append(imp('io').open({host['secret_file']!r}).read())",
            f"out.append(os.listdir({host['build']!r}))",
            "out.append(os.listdir('/work'))",
            f"out.append(imp('io').open({host['repo_file']!r}).read())",
            "out.append(os.listdir('/home'))",
        ),
        "read_env": attempt(
            "out.append(dict(os.environ))",
            "out.append(imp('io').open('/proc/self/environ', 'rb').read().decode('latin-1'))",
            "out.append(imp('io').open('/proc/1/environ', 'rb').read().decode('latin-1'))",
            f"out.append(imp('io').open('/proc/{host['test_pid']}/environ', 'rb').read().decode('latin-1'))",
        ),
        "write_host": attempt(
            f"imp('io').open({host['new_file']!r}, 'w').write('pwned')",
            f"imp('io').open({host['canary']!r}, 'w').write('pwned')",
            f"out.append(os.system('echo pwned > {host['new_file']}'))",
        ),
        "socket": attempt(f"s = imp('socket').create_connection(('127.0.0.1', {host['port']}), timeout=0.5)\ns.sendall(b'pwned')\nout.append('connected')"),
        "kill": attempt(f"os.kill({host['victim']}, 9)", f"os.kill({host['test_pid']}, 9)", "os.kill(-1, 9)", "os.kill(os.getppid(), 9)", "os.kill(1, 9)"),
        "fork_bomb": attempt("n = 0\nwhile n < 100000:\n    os.fork()\n    n += 1\nout.append(n)"),
        "daemon": attempt(
            f"pid = os.fork()\nif pid == 0:\n    os.setsid()\n    os.execv(sys.executable, [sys.executable, '-c', 'import time\\nwhile 1: time.sleep(1)', {MARKER!r}])\nout.append(pid)",
            "imp('_thread').start_new_thread(imp('time').sleep, (100,))\nout.append('thread')",
            f"os.posix_spawn(sys.executable, [sys.executable, '-c', 'import time\\nwhile 1: time.sleep(1)', {MARKER!r}], {{}})",
        ),
        "fill_disk": attempt(
            *[f"B.open('{d}/x', 'wb').write(b'x')" for d in ("", "/dev", "/dev/shm", "/root", "/lib", "/usr/lib")],
            "os.write(os.memfd_create('fill'), b'x' * 2 ** 20)\nout.append('memfd')",
            "n = 0\nwhile n < 64:\n    B.open('/tmp/f%d' % n, 'wb').write(b'x' * 2 ** 20)\n    n += 1\nout.append(n)",
        ),
        "memory": "x = bytearray(64 * 1024 ** 3)\nreturn len(x)\n",
        "memory_grow": "x = []\nwhile True:\n    x.append(' ' * 10 ** 7)\n",
        "loop": "while True:\n    pass\n",
        "print_flood": "while True:\n    print('x' * 100000)\n",
        "fd_flood": "while True:\n    os.write(1, b'x' * 100000)\n    os.write(2, b'x' * 100000)\n",
        "huge_reply": "return 'x' * (90 * 1024 * 1024)\n",
        "forge_reply": (
            "fd = int(sys.argv[1])\nst = imp('struct')\n"
            "for i in range(1, 50):\n    d = ('{\"id\":%d,\"ok\":true,\"result\":\"forged\",\"state\":null}' % i).encode()\n    os.write(fd, st.pack('>I', len(d)) + d)\n"
            "return 'echo:' + x\n"
        ),
        "fork_reply": "os.fork()\nreturn 'echo:' + x\n",
        # half a frame, then silence: the parent's deadline must cover reading, not just waiting
        "partial_reply": "fd = int(sys.argv[1])\nos.write(fd, imp('struct').pack('>I', 1000) + b'{\"id\"')\nwhile True:\n    pass\n",
    }


def py(name: str, body: str, params=("x",), ann=("action",)) -> A.ToolDecl:
    return A.ToolDecl(name, tuple(A.ParamDecl(p, STR) for p in params), A.PrimType("any"), "", None, body, ann)


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """Things on the host the attacks aim at, and a listener that must never see a connection."""
    d = tmp_path_factory.mktemp("host")
    (d / "secret.txt").write_text(SECRET)
    (d / "canary.txt").write_text("canary")
    build = d / "build"
    (build / "states").mkdir(parents=True)
    (build / "states" / "x.json").write_text("{}")
    lis = socket.socket()
    lis.bind(("127.0.0.1", 0))
    lis.listen(16)
    lis.settimeout(0.3)
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    old = os.environ.get("FORGEC_H4_SECRET")
    os.environ["FORGEC_H4_SECRET"] = SECRET  # the parent's environment holds a secret
    info = {
        "dir": d,
        "secret_file": str(d / "secret.txt"),
        "canary": str(d / "canary.txt"),
        "new_file": str(d / "pwned.txt"),
        "build": str(build),
        "repo_file": str(Path(__file__).resolve()),
        "port": lis.getsockname()[1],
        "listener": lis,
        "victim": victim.pid,
        "test_pid": os.getpid(),
    }
    yield info
    victim.kill()
    victim.wait()
    lis.close()
    if old is None:
        os.environ.pop("FORGEC_H4_SECRET", None)
    else:
        os.environ["FORGEC_H4_SECRET"] = old


@pytest.fixture(scope="module")
def mod(tmp_path_factory, host):
    tools = [py("echo", "return 'echo:' + x"), py("env_size", "return len(state['globals'])", params=())]
    for route, prelude in ROUTES.items():
        for name, body in attacks(host).items():
            tools.append(py(f"{name}_{route}", prelude + PRELUDE + body))
    env = A.EnvDecl("hostile", None, (), (), tuple(tools))
    p = tmp_path_factory.mktemp("hostile") / "env.py"
    p.write_text(emit_env(env, "hostile.forge"))
    return load_env_module(p)


@pytest.fixture(scope="module")
def sb(host):
    s = sandbox.Sandbox(time_limit=1.5, memory_mb=256, unsafe=False)  # started after the secret is set
    old = sandbox.install(s)
    yield s
    s.close()
    sandbox.install(old)


def marker_processes() -> list[int]:
    """Host pids whose command line carries MARKER (a daemon that outlived its call)."""
    return processes_with(MARKER)


def run(mod, name: str, x: str = "A"):
    env = mod.Env()
    t0 = time.monotonic()
    r = env.step(name, {"x": x}) if "x" in [p["name"] for p in mod.TOOL_PARAMS[name]] else env.step(name, {})
    return r, time.monotonic() - t0, env


def still_serves(mod) -> None:
    assert mod.Env().step("echo", {"x": "B"}) == "echo:B"


def no_connection(lis: socket.socket) -> bool:
    try:
        conn, _ = lis.accept()
    except (TimeoutError, socket.timeout):
        return True
    conn.close()
    return False


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_escape_reaches_os_but_reads_no_host_file(mod, sb, host, route):
    passwd_first = Path("/etc/passwd").read_text().splitlines()[0]  # e.g. root:x:0:0:...
    r, _, _ = run(mod, f"read_passwd_{route}")
    assert passwd_first not in str(r)
    r, _, _ = run(mod, f"read_host_files_{route}")
    text = str(r)
    assert SECRET not in text and "x.json" not in text and "states" not in text and "main" not in text
    assert Path(host["repo_file"]).read_text().splitlines()[0] not in text
    assert text.count("blocked:") == 5, text  # every read failed inside the sandbox
    still_serves(mod)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_environment_is_empty(mod, sb, host, route):
    assert os.environ["FORGEC_H4_SECRET"] == SECRET
    r, _, _ = run(mod, f"read_env_{route}")
    assert SECRET not in str(r) and "FORGEC_H4_SECRET" not in str(r) and "PATH" not in str(r)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_cannot_write_host_files(mod, sb, host, route):
    r, _, _ = run(mod, f"write_host_{route}")
    assert not Path(host["new_file"]).exists()
    assert Path(host["canary"]).read_text() == "canary"
    assert str(r).count("blocked:") == 2 and "0]" not in str(r), r  # both opens failed; os.system could not start a shell


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_only_a_small_tmp_is_writable(mod, sb, route):
    """bwrap's own tmpfs (/, /dev) would take up to half the RAM: they are read-only, and /tmp
    holds at most 16 MB (the 17th 1 MB file fails), so a body cannot fill the host's memory."""
    r, _, _ = run(mod, f"fill_disk_{route}")
    text = str(r)
    assert text.count("Read-only file system") == 6, text
    assert "No space left on device" in text or "File too large" in text, text
    assert "'memfd'" not in text and "PermissionError" in text  # no anonymous files either (seccomp)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_no_network(mod, sb, host, route):
    r, _, _ = run(mod, f"socket_{route}")
    assert "connected" not in str(r)
    assert no_connection(host["listener"])


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_cannot_signal_host_processes(mod, sb, host, route):
    victim = host["victim"]
    r, _, _ = run(mod, f"kill_{route}")
    time.sleep(0.1)
    os.kill(victim, 0)  # raises if the victim died
    assert Path(f"/proc/{victim}/status").read_text().split("State:")[1].split()[0] != "Z"
    still_serves(mod)


@pytest.mark.parametrize("attack", ["fork_bomb", "daemon"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_no_process_outlives_the_call(mod, sb, route, attack):
    before = len(list(Path("/proc").iterdir()))
    r, dt, _ = run(mod, f"{attack}_{route}")
    assert dt < 10
    deadline = time.monotonic() + 30  # returns as soon as none is left; a loaded machine takes longer to reap
    while marker_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker_processes() == []
    if sb._worker is not None:  # the worker kept serving: then it is alone in its sandbox
        assert sandbox._children(sb._worker) == [] and sandbox._threads(sb._worker) == 1
    assert len(list(Path("/proc").iterdir())) < before + 20
    still_serves(mod)


@pytest.mark.parametrize(
    "attack,fragment",
    [("memory", "memory"), ("memory_grow", "memory"), ("loop", "timed out"), ("print_flood", "timed out"), ("fd_flood", "timed out"), ("huge_reply", ""), ("partial_reply", "timed out")],
)
def test_resource_attacks_fail_the_call_within_the_limit(mod, sb, attack, fragment):
    for route in sorted(ROUTES):
        r, dt, env = run(mod, f"{attack}_{route}")
        assert isinstance(r, ToolError) and r.code == "sandbox" and fragment in r.message, r
        assert dt < sb.time_limit + 3.0
        assert env.state == {"entities": {}, "globals": {}}
        still_serves(mod)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_forged_replies_never_answer_another_call(mod, sb, route):
    r, _, _ = run(mod, f"forge_reply_{route}", "A")
    assert isinstance(r, ToolError) and "protocol" in r.message
    for x in ("B", "C", "D"):
        assert mod.Env().step("echo", {"x": x}) == f"echo:{x}"


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_fork_then_echo_returns_its_own_reply(mod, sb, route):
    """Issue 14 item 4: after a body forked, `echo(B)` returned `echo:A`."""
    run(mod, f"fork_reply_{route}", "A")
    for x in ("B", "C"):
        assert mod.Env().step("echo", {"x": x}) == f"echo:{x}"


# ---- the protocol without bwrap: the framing alone must not desynchronize (fork really forks here)


@pytest.fixture
def unsafe_sb():
    with sandbox.installed(sandbox.Sandbox(time_limit=1.5, memory_mb=256, unsafe=True)) as s:
        yield s


def test_unsafe_worker_fork_is_caught_by_the_protocol(mod, unsafe_sb):
    """Without seccomp the fork succeeds and both processes answer call A: the parent must see
    the leftover (a second reply, or a child in the tree), kill it, and answer B with B."""
    r, _, _ = run(mod, "fork_reply_collections", "A")
    assert isinstance(r, ToolError) and "sandbox" in r.code, r
    for x in ("B", "C", "D"):
        assert mod.Env().step("echo", {"x": x}) == f"echo:{x}"


def test_unsafe_worker_forged_reply_is_rejected(mod, unsafe_sb):
    r, _, _ = run(mod, "forge_reply_subclasses", "A")
    assert isinstance(r, ToolError) and "protocol" in r.message
    assert mod.Env().step("echo", {"x": "B"}) == "echo:B"


def test_env_forks_share_no_in_flight_state(mod, sb):
    """Env.fork() shares records copy-on-write; the worker's cached state is keyed by hash, so
    a fork that diverged never gets its sibling's state."""
    base = mod.Env({"entities": {}, "globals": {}})
    a, b = base.fork(), base.fork()
    assert a.step("echo", {"x": "A"}) == "echo:A"
    assert b.step("echo", {"x": "B"}) == "echo:B"
    assert a.step("env_size", {}) == 0 and b.step("env_size", {}) == 0


def test_leftover_check_without_proc_children(mod, monkeypatch):
    """Kernels without CONFIG_PROC_CHILDREN: the parent finds the sandbox's processes by scanning
    /proc/*/stat instead; a clean call passes and a forking body is still caught."""
    monkeypatch.setattr(sandbox, "_PROC_CHILDREN", False)
    for unsafe in (False, True):
        s = sandbox.Sandbox(time_limit=1.5, memory_mb=256, unsafe=unsafe)
        old = sandbox.install(s)
        try:
            assert mod.Env().step("echo", {"x": "A"}) == "echo:A" and s._alone()
            if unsafe:
                r, _, _ = run(mod, "fork_reply_collections", "A")
                assert isinstance(r, ToolError), r
            assert mod.Env().step("echo", {"x": "B"}) == "echo:B"
        finally:
            s.close()
            sandbox.install(old)


POISON = "f = sys._getframe(1).f_globals\nf['_run'] = lambda msg, cache, held: {'ok': True, 'result': 'poisoned', 'state': None}\nreturn 'done'\n"


def test_envs_do_not_share_a_worker(tmp_path):
    """A body that rewrites its worker (it runs in the same interpreter) poisons only its own
    env's later calls: another env module's python tools run in another worker."""
    tools = (py("poison", ROUTES["collections"] + POISON), py("echo", "return 'echo:' + x"))
    hostile = tmp_path / "a" / "env.py"
    hostile.parent.mkdir()
    hostile.write_text(emit_env(A.EnvDecl("poisoner", None, (), (), tools), "a.forge"))
    bystander = tmp_path / "b" / "env.py"
    bystander.parent.mkdir()
    bystander.write_text(emit_env(A.EnvDecl("bystander", None, (), (), (py("echo", "return 'echo:' + x"),)), "b.forge"))
    ma, mb = load_env_module(hostile), load_env_module(bystander)
    old = sandbox.install(None)  # the per-env pool, as episodes and compile use it
    try:
        assert mb.Env().step("echo", {"x": "B"}) == "echo:B"
        assert ma.Env().step("poison", {"x": "A"}) == "done"
        assert ma.Env().step("echo", {"x": "A"}) == "poisoned"  # its own worker: the documented limit
        assert mb.Env().step("echo", {"x": "B"}) == "echo:B"
        assert sandbox.shared(ma.Env.__module__) is not sandbox.shared(mb.Env.__module__)
    finally:
        for m in (ma, mb):
            sandbox.shared(m.Env.__module__).close()
        sandbox.install(old)
