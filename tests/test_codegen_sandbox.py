"""Python escape-hatch tools: run in the worker, write the state through it, and every
failure (infinite loop, crash, exception, memory) is a ToolError within the time limit."""

from __future__ import annotations

import time

import pytest

from forgec.codegen import emit_env, load_env_module
from forgec.lang import ast as A
from forgec.runtime import envrt, sandbox
from forgec.runtime.envrt import ToolError

STR, INT = A.PrimType("str"), A.PrimType("int")
Note = A.NamedType("Note")


def py(name, params, body, ann=("read",)):
    return A.ToolDecl(name, tuple(params), A.PrimType("any"), "", None, body, ann)


CRASH = "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__['_exit'](3)"

ENV = A.EnvDecl(
    "notes",
    None,
    (),
    (A.EntityDecl("Note", "note_id", (A.FieldDecl("note_id", STR), A.FieldDecl("text", STR), A.FieldDecl("score", A.PrimType("float")))),),
    (
        py(
            "add_note",
            [A.ParamDecl("text", STR)],
            """
notes = state["entities"]["Note"]
k = "n%d" % (len(notes) + 1)
notes[k] = {"note_id": k, "text": text, "score": 0.1 + 0.2}
return {"note_id": k, "count": len(notes)}
""",
            ("create",),
        ),
        py("double", [A.ParamDecl("x", INT)], "return x * 2"),
        py("text_of", [A.ParamDecl("note", Note)], "return state['entities']['Note'][note]['text']"),
        py("spin", [], "while True:\n    pass"),
        py("crash", [], CRASH),
        py("boom", [], "raise KeyError('k')"),
        py("refuse", [A.ParamDecl("why", STR)], "fail('refused: ' + why)", ("update",)),
        py("sneaky", [], "state['entities']['Note'].clear()\nreturn 1"),
        py("hog", [], "x = [0] * (2 * 1024 * 1024 * 1024)\nreturn len(x)"),
        py("opens", [], "return open('/etc/passwd').read()"),
        py("imports", [], "import math\nreturn math.floor(2.7)"),
        py("count", [], "n = len(state['entities']['Note'])\nstate['entities']['Note'].clear()\nreturn n"),
        A.ToolDecl(
            "add_plain",
            (A.ParamDecl("text", STR),),
            Note,
            "",
            (A.Insert("Note", (A.FieldInit("text", A.Name("text")), A.FieldInit("score", A.Literal(1.5))), bind="n"), A.Return(A.Name("n"))),
            annotations=("create",),
        ),
    ),
)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    p = tmp_path_factory.mktemp("notes") / "env.py"
    p.write_text(emit_env(ENV, "notes.forge"))
    return load_env_module(p)


@pytest.fixture(scope="module", autouse=True)
def fast_sandbox():
    sb = sandbox.Sandbox(time_limit=1.0, memory_mb=256)
    old = sandbox.install(sb)
    yield sb
    sb.close()
    sandbox.install(old)


def world():
    return {"entities": {"Note": {"n1": {"note_id": "n1", "text": "hello", "score": 1.0}}}, "globals": {}}


def test_python_tool_reads_and_writes(mod):
    env = mod.Env(world())
    assert env.step("double", {"x": 21}) == 42
    assert env.step("text_of", {"note": "n1"}) == "hello"
    r = env.step("add_note", {"text": "second"})
    assert r == {"note_id": "n2", "count": 2}
    exp = world()
    exp["entities"]["Note"]["n2"] = {"note_id": "n2", "text": "second", "score": 0.3}
    assert env.state == exp
    assert env.state_hash() == envrt.state_hash(exp)
    assert env.step("imports", {}) == 2
    assert mod.WRITES_STATE == {k: k in ("add_note", "refuse", "add_plain") for k in mod.WRITES_STATE}
    assert mod.TOOL_KINDS["add_note"] == "create"


def test_arguments_are_validated_before_the_worker(mod):
    env = mod.Env(world())
    assert env.step("double", {"x": "no"}).code == "invalid-arguments"
    assert env.step("text_of", {"note": "n9"}).code == "not-found"


def test_read_tool_cannot_change_state(mod):
    env = mod.Env(world())
    assert env.step("sneaky", {}) == 1
    assert env.state == world()


def test_refusal_is_a_precondition_error(mod):
    env = mod.Env(world())
    err = env.step("refuse", {"why": "policy"})
    assert isinstance(err, ToolError) and err.message == "refused: policy" and not err.internal
    assert env.state == world()


@pytest.mark.parametrize(
    "tool,fragment",
    [
        ("spin", "timed out after 1s"),
        ("crash", "crashed"),
        ("boom", "KeyError"),
        ("hog", "memory"),
        ("opens", "NameError"),
    ],
)
def test_failures_become_tool_errors(mod, fast_sandbox, tool, fragment):
    env = mod.Env(world())
    t0 = time.monotonic()
    err = env.step(tool, {})
    elapsed = time.monotonic() - t0
    assert isinstance(err, ToolError) and err.internal and fragment in err.message, err
    assert elapsed < 5.0
    assert env.state == world()
    # the worker (restarted if needed) serves the next call
    assert env.step("double", {"x": 2}) == 4


def test_infinite_loop_restarts_the_worker(mod, fast_sandbox):
    env = mod.Env(world())
    env.step("double", {"x": 1})
    pid = fast_sandbox.pid
    err = env.step("spin", {})
    assert isinstance(err, ToolError)
    assert env.step("double", {"x": 3}) == 6
    assert fast_sandbox.pid != pid


def test_forked_child_gets_its_own_worker(mod, fast_sandbox):
    import os

    env = mod.Env(world())
    assert env.step("double", {"x": 1}) == 2
    parent_worker = fast_sandbox.pid
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: must not reuse the parent's pipe to the worker
        try:
            ok = env.step("double", {"x": 5}) == 10 and sandbox.shared() is not fast_sandbox and sandbox.shared().pid != parent_worker
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"1"
    os.waitpid(pid, 0)
    assert env.step("double", {"x": 4}) == 8 and fast_sandbox.pid == parent_worker


def test_worker_sees_every_state_change(mod):
    """The worker holds the last state it was sent; any change (python or effect tool) reaches it,
    and a read tool scribbling on its copy never leaks into the next call."""
    env = mod.Env(world())
    assert env.step("count", {}) == 1
    assert env.step("count", {}) == 1  # the first call cleared its private copy only
    env.step("add_note", {"text": "b"})
    assert env.step("count", {}) == 2
    assert env.step("add_plain", {"text": "c"})["note_id"] == "n3"
    assert env.step("count", {}) == 3
    other = mod.Env(world())  # another env on the same worker
    assert other.step("count", {}) == 1
    assert env.step("count", {}) == 3


def test_env_forks_interleaved_never_see_each_others_state(mod):
    """Env.fork() shares records copy-on-write and the worker holds one state by hash: two forks
    that diverge through python writes, called in turn, each see exactly their own world."""
    base = mod.Env(world())
    a, b = base.fork(), base.fork()
    assert a.step("add_note", {"text": "in a"}) == {"note_id": "n2", "count": 2}
    assert b.step("count", {}) == 1
    assert b.step("add_note", {"text": "in b"}) == {"note_id": "n2", "count": 2}
    assert b.step("add_note", {"text": "in b again"}) == {"note_id": "n3", "count": 3}
    assert a.step("count", {}) == 2 and b.step("count", {}) == 3 and base.step("count", {}) == 1
    assert a.state["entities"]["Note"]["n2"]["text"] == "in a" and b.state["entities"]["Note"]["n2"]["text"] == "in b"
    assert base.state == world()
