"""`forgec compile` runs python bodies (verification calls every tool): hostile bodies in a
hand-edited env.forge must leave the host as it was and the compile must finish. Without a
usable bwrap, no body runs at all unless the user opts in (FORGEC_UNSAFE_NO_SANDBOX=1)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from hostproc import processes_with

from forgec.runtime import sandbox
from forgec.runtime.envrt import ToolError

REPO = Path(__file__).resolve().parent.parent
MARKER = "forgec-h4-compile-" + uuid.uuid4().hex
ESCAPE = "import collections\n    sys = collections._sys\n    os = sys.modules['os']\n    B = sys.modules['builtins']\n"


def hostile_tools(host: dict) -> str:
    """Python tools (as .forge text) that each try one attack at compile time."""
    bodies = {
        "pwn_write": f"B.open({host['new_file']!r}, 'w').write('pwned')\n    B.open({host['canary']!r}, 'w').write('pwned')\n    B.open({host['states']!r}, 'a').write('pwned')",
        "pwn_system": f"os.system('touch {host['new_file']}')",
        "pwn_socket": f"s = B.__import__('socket').create_connection(('127.0.0.1', {host['port']}), timeout=0.5)\n    s.sendall(b'pwned')",
        "pwn_env": f"B.open({host['new_file']!r}, 'w').write(repr(dict(os.environ)))",
        "pwn_kill": f"os.kill({host['victim']}, 9)\n    os.kill(os.getppid(), 9)\n    os.kill(-1, 9)",
        "pwn_daemon": f"if os.fork() == 0:\n        os.setsid()\n        os.execv(sys.executable, [sys.executable, '-c', 'import time\\nwhile 1: time.sleep(1)', {MARKER!r}])",
        "pwn_exit": "os._exit(0)",
        "pwn_spin": "while True:\n        pass",
    }
    out = ""
    for name, body in bodies.items():
        out += f'\n  @action\n  tool {name}(x: str) -> any "Hostile." python """\n    {ESCAPE}    try:\n        {body.replace(chr(10) + "    ", chr(10) + "        ")}\n    except B.BaseException:\n        pass\n    return x\n  """\n'
    return out


@pytest.fixture
def host(tmp_path):
    (tmp_path / "canary.txt").write_text("canary")
    lis = socket.socket()
    lis.bind(("127.0.0.1", 0))
    lis.listen(16)
    lis.settimeout(0.3)
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield {"dir": tmp_path, "canary": str(tmp_path / "canary.txt"), "new_file": str(tmp_path / "pwned.txt"), "port": lis.getsockname()[1], "listener": lis, "victim": victim.pid}
    victim.kill()
    victim.wait()
    lis.close()


def compile_build(out: Path, extra_env: dict | None = None, quiet: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, FORGEC_SANDBOX_TIME_LIMIT="1", FORGEC_H4_SECRET=MARKER, **(extra_env or {}))
    return subprocess.run(
        [sys.executable, "-m", "forgec", "compile", str(REPO / "examples" / "helpdesk.json"), "-o", str(out), "-n", "6"] + (["-q"] if quiet else []),
        capture_output=True, text=True, timeout=300, env=env, cwd=str(out.parent),
    )


def hand_edit(build: Path, host: dict) -> None:
    src = build / "src" / "helpdesk" / "env.forge"
    text = src.read_text().rstrip()
    assert text.endswith("}")
    src.write_text(text[:-1] + hostile_tools(host) + "}\n")


def marker_processes() -> list[int]:
    """Host pids whose command line carries MARKER (a daemon that outlived its call)."""
    return processes_with(MARKER)


def test_compile_with_hostile_bodies_leaves_the_host_alone(tmp_path, host):
    assert sandbox.availability()[0], sandbox.availability()[1]
    build = tmp_path / "build"
    assert compile_build(build).returncode == 0
    host["states"] = str(build / "states" / "helpdesk.json")
    hand_edit(build, host)
    t0 = time.monotonic()
    r = compile_build(build)
    assert r.returncode in (0, 1), r.stderr[-2000:]  # finished: not killed by a signal
    assert time.monotonic() - t0 < 120
    assert not Path(host["new_file"]).exists()
    assert Path(host["canary"]).read_text() == "canary"
    assert "pwned" not in (build / "states" / "helpdesk.json").read_text()
    try:
        conn, _ = host["listener"].accept()
        conn.close()
        raise AssertionError("a python body connected to a host listener")
    except (TimeoutError, socket.timeout):
        pass
    os.kill(host["victim"], 0)
    deadline = time.monotonic() + 30  # a daemon the compile's sandbox was killed with: gone at once, reaped a little later
    while marker_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker_processes() == []
    manifest = json.loads((build / "manifest.json").read_text())
    tools = manifest["envs"]["helpdesk"]["tools"]
    assert {f"pwn_{k}" for k in ("write", "system", "socket", "env", "kill", "daemon", "exit", "spin")} <= set(tools)
    # the hand edit is kept and every hostile tool was really run (in the sandbox): the ones that
    # crash, loop or fork fail verification with the sandbox's reason
    assert "pwn_spin" in (build / "src" / "helpdesk" / "env.forge").read_text()
    assert "timed out" in tools["pwn_spin"]["reason"] and "crashed" in tools["pwn_exit"]["reason"]


def test_compile_without_bwrap_runs_no_python_body(tmp_path, host):
    build = tmp_path / "build"
    assert compile_build(build).returncode == 0
    host["states"] = str(build / "states" / "helpdesk.json")
    hand_edit(build, host)
    r = compile_build(build, {"FORGEC_BWRAP": str(tmp_path / "no-bwrap")}, quiet=False)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert not Path(host["new_file"]).exists() and Path(host["canary"]).read_text() == "canary"
    tools = json.loads((build / "manifest.json").read_text())["envs"]["helpdesk"]["tools"]
    for name in ("pwn_write", "pwn_system", "pwn_spin"):
        assert not tools[name]["verified"]
        assert "apt-get install bubblewrap" in tools[name]["reason"] and "FORGEC_UNSAFE_NO_SANDBOX=1" in tools[name]["reason"]
    assert tools["get_ticket"]["verified"]  # effect-language tools are verified as usual
    assert "warning[sandbox-unavailable]" in r.stdout + r.stderr and "apt-get install bubblewrap" in r.stdout + r.stderr
    # with bwrap back, the refusal is not reused from the cache: the bodies run (in the sandbox)
    assert compile_build(build).returncode in (0, 1)
    tools = json.loads((build / "manifest.json").read_text())["envs"]["helpdesk"]["tools"]
    assert "timed out" in tools["pwn_spin"]["reason"]
    assert not Path(host["new_file"]).exists() and Path(host["canary"]).read_text() == "canary"


def test_step_without_bwrap_is_refused_with_the_fix(monkeypatch):
    monkeypatch.setenv("FORGEC_BWRAP", "/nonexistent/bwrap")
    monkeypatch.delenv("FORGEC_UNSAFE_NO_SANDBOX", raising=False)
    sb = sandbox.Sandbox(time_limit=1.0, memory_mb=128)
    with pytest.raises(ToolError) as ei:
        sb.call("t", "return 1", (), {}, {"entities": {}, "globals": {}})
    assert "apt-get install bubblewrap" in ei.value.message and "FORGEC_UNSAFE_NO_SANDBOX=1" in ei.value.message
    assert sb.pid is None  # nothing was started


def test_unusable_bwrap_is_refused_with_the_cause(monkeypatch):
    """bwrap is there but cannot create namespaces (here: a binary that always fails)."""
    monkeypatch.setenv("FORGEC_BWRAP", "/bin/false")
    monkeypatch.delenv("FORGEC_UNSAFE_NO_SANDBOX", raising=False)
    ok, why = sandbox.availability()
    assert not ok and "/bin/false cannot start a sandbox" in why and "user namespaces" in why
    with pytest.raises(ToolError) as ei:
        sandbox.Sandbox(time_limit=1.0, memory_mb=128).call("t", "return 1", (), {}, {"entities": {}, "globals": {}})
    assert "user namespaces" in ei.value.message and "FORGEC_UNSAFE_NO_SANDBOX=1" in ei.value.message


def test_unsafe_opt_in_runs_without_bwrap(monkeypatch, tmp_path):
    monkeypatch.setenv("FORGEC_BWRAP", "/nonexistent/bwrap")
    monkeypatch.setenv("FORGEC_UNSAFE_NO_SANDBOX", "1")
    sb = sandbox.Sandbox(time_limit=2.0, memory_mb=128)
    try:
        assert sb.unsafe
        assert sb.call("t", "return x * 2", ("x",), {"x": 21}, {"entities": {}, "globals": {}}) == (42, {"entities": {}, "globals": {}})
        # unisolated: the same escape now reaches the host (this is what the flag means)
        body = "import collections\nreturn collections._sys.modules['os'].path.exists(p)"
        assert sb.call("t2", body, ("p",), {"p": str(tmp_path)}, {"entities": {}, "globals": {}}, writes=False)[0] is True
    finally:
        sb.close()


def test_sandboxed_worker_has_its_limits():
    assert sandbox.availability()[0], sandbox.availability()[1]
    """Limits and identity as seen from inside (an independent reading of /proc and rlimits)."""
    sb = sandbox.Sandbox(time_limit=2.0, memory_mb=128, unsafe=False)
    body = (
        "import collections\nsys = collections._sys\nos = sys.modules['os']\nr = sys.modules['builtins'].__import__('resource')\n"
        "caps = [l.split()[1] for l in sys.modules['builtins'].open('/proc/self/status') if l.startswith('CapEff')]\n"
        "return [os.getuid(), os.getgid(), r.getrlimit(r.RLIMIT_NPROC)[0], r.getrlimit(r.RLIMIT_FSIZE)[0], r.getrlimit(r.RLIMIT_NOFILE)[0], "
        "r.getrlimit(r.RLIMIT_AS)[0] > 0, caps[0], sorted(os.listdir('/')), os.getpid(), sys.modules['socket'].gethostname() if 'socket' in sys.modules else 'sandbox']"
    )
    try:
        res, _ = sb.call("limits", body, (), {}, {"entities": {}, "globals": {}}, writes=False)
    finally:
        sb.close()
    uid, gid, nproc, fsize, nofile, has_as, caps, root, pid, _ = res
    assert (uid, gid) == (65534, 65534)
    assert nproc == 0 and fsize == 16 * 1024 * 1024 and nofile == 32 and has_as
    assert caps == "0000000000000000"
    assert set(root) <= {"usr", "lib", "lib64", "lib32", "bin", "sbin", "proc", "dev", "tmp", "root", "opt", "home"} and "etc" not in root and "work" not in root
    assert pid <= 3  # its own pid namespace


def test_older_bwrap_without_new_options_still_isolates(tmp_path, monkeypatch):
    """A bwrap whose --help lacks --disable-userns, --size and --add-seccomp-fd (as before 0.8 /
    0.6 / 0.5): those options are left out (the legacy --seccomp is used) and bodies still run
    isolated; with no sized /tmp nothing at all is writable."""
    fake = tmp_path / "old-bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--help" ]; then /usr/bin/bwrap --help | grep -v -e disable-userns -e "^ *--size" -e add-seccomp-fd; exit 0; fi\n'
        'exec /usr/bin/bwrap "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("FORGEC_BWRAP", str(fake))
    monkeypatch.delenv("FORGEC_UNSAFE_NO_SANDBOX", raising=False)
    argv = sandbox._bwrap_argv(str(fake), 9)
    assert "--disable-userns" not in argv and "--size" not in argv and "--add-seccomp-fd" not in argv and "--seccomp" in argv
    assert sandbox.availability() == (True, "")
    sb = sandbox.Sandbox(time_limit=2.0, memory_mb=128)
    body = (
        "import collections\nsys = collections._sys\nos = sys.modules['os']\nB = sys.modules['builtins']\nout = []\n"
        "for p in ('/tmp/x', '/x', '/work/x'):\n    try:\n        B.open(p, 'w').write('x')\n        out.append('wrote ' + p)\n"
        "    except B.BaseException as e:\n        out.append(type(e).__name__)\n"
        "try:\n    os.fork()\n    out.append('forked')\nexcept B.BaseException as e:\n    out.append(type(e).__name__)\n"
        "return [os.getuid(), out, sorted(os.environ)]"
    )
    try:
        (uid, out, env), _ = sb.call("t", body, (), {}, {"entities": {}, "globals": {}}, writes=False)
    finally:
        sb.close()
    assert uid == 65534 and not any(o.startswith("wrote") for o in out), out
    assert set(env) <= {"PWD", "LC_CTYPE"}  # set by bwrap's chdir and Python's locale coercion, nothing inherited
    assert out[-1] == "PermissionError"  # the seccomp filter, loaded the legacy way
