"""Cost of the python-body sandbox: one tool call through `Env.step`, median and p99.

    python bench/bench_sandbox.py [--calls 400] [--records 200]

Rows: a python-body call in the bubblewrap sandbox (runtime/sandbox.py), the same call in the
previous worker (the baseline: runtime/sandbox.py at BASELINE, a plain child process speaking
pickle, no isolation), and an effect-language tool call doing the same work. Each for a read
(the state is unchanged, so the worker keeps it) and a write (the state changes on every call,
so it travels both ways). Also the worker start-up (first call) of each.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BASELINE = "08a2104"  # last commit of the unsandboxed worker


def baseline_sandbox(tmp: Path):
    """The previous worker's module, loaded from git, its worker importing that same file."""
    src = subprocess.run(["git", "-C", str(REPO), "show", f"{BASELINE}:runtime/sandbox.py"], capture_output=True, text=True, check=True).stdout
    path = tmp / "old_sandbox.py"
    old = 'code = f"from forgec.runtime.sandbox import _serve; _serve({b.fileno()}, {int(self.memory_mb)})"'
    new = (
        f'code = f"import importlib.util as u; s = u.spec_from_file_location(\'old_sandbox\', {str(path)!r}); '
        'm = u.module_from_spec(s); s.loader.exec_module(m); m._serve({b.fileno()}, {int(self.memory_mb)})"'
    )
    assert old in src, "baseline worker start line not found"
    path.write_text(src.replace(old, new))
    spec = importlib.util.spec_from_file_location("old_sandbox", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["old_sandbox"] = mod
    spec.loader.exec_module(mod)
    return mod


def make_env(tmp: Path):
    from forgec.codegen import emit_env, load_env_module
    from forgec.lang import ast as A

    STR, INT = A.PrimType("str"), A.PrimType("int")
    Note = A.NamedType("Note")
    ent = A.EntityDecl("Note", "note_id", (A.FieldDecl("note_id", STR), A.FieldDecl("text", STR), A.FieldDecl("score", INT)))
    score = A.Attr(A.Name("note"), "score")
    tools = (
        A.ToolDecl("py_read", (A.ParamDecl("note", Note),), A.PrimType("any"), "", None, "return state['entities']['Note'][note]['score'] * 2", ("read",)),
        A.ToolDecl("py_write", (A.ParamDecl("note", Note),), A.PrimType("any"), "", None,
                   "rec = state['entities']['Note'][note]\nrec['score'] += 1\nreturn rec['score']", ("update",)),
        A.ToolDecl("fx_read", (A.ParamDecl("note", Note),), INT, "", (A.Return(A.Binary("*", score, A.Literal(2))),), annotations=("read",)),
        A.ToolDecl("fx_write", (A.ParamDecl("note", Note),), INT, "",
                   (A.Set(score, A.Binary("+", score, A.Literal(1))), A.Return(score)), annotations=("update",)),
    )
    p = tmp / "env.py"
    p.write_text(emit_env(A.EnvDecl("bench", None, (), (ent,), tools), "bench.forge"))
    return load_env_module(p)


def measure(env, tool: str, n: int) -> list[float]:
    keys = sorted(env.state["entities"]["Note"])
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        r = env.step(tool, {"note": keys[i % len(keys)]})
        out.append(time.perf_counter() - t0)
        assert not hasattr(r, "code"), r
    return out


def first_call(sb_cls, mod, state, **kw) -> float:
    from forgec.runtime import sandbox

    sb = sb_cls(2.0, 512, **kw)
    old = sandbox.install(sb)
    try:
        env = mod.Env(state)
        t0 = time.perf_counter()
        env.step("py_read", {"note": "n0"})
        return time.perf_counter() - t0
    finally:
        sb.close()
        sandbox.install(old)


def row(label: str, xs: list[float]) -> tuple[str, str, str]:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
    return label, f"{statistics.median(xs) * 1e3:.3f}", f"{p99 * 1e3:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--records", type=int, default=200)
    args = ap.parse_args()
    from forgec.runtime import sandbox

    tmp = Path(tempfile.mkdtemp(prefix="bench_sandbox_"))
    mod = make_env(tmp)
    state = {"entities": {"Note": {f"n{i}": {"note_id": f"n{i}", "text": "x" * 40, "score": i} for i in range(args.records)}}, "globals": {}}
    old = baseline_sandbox(tmp)
    ok, why = sandbox.availability()
    variants = []
    if ok:
        variants.append(("sandbox (bwrap)", lambda: sandbox.Sandbox(2.0, 512, unsafe=False)))
    else:
        print(f"note: no sandbox row: {why}")
    variants.append((f"old worker ({BASELINE})", lambda: old.Sandbox(2.0, 512)))
    rows = []
    for label, make in variants:
        sb = make()
        prev = sandbox.install(sb)
        try:
            env = mod.Env(state)
            measure(env, "py_read", 20)  # warm: worker started, body compiled, state held
            rows.append(row(f"python read, {label}", measure(env, "py_read", args.calls)))
            rows.append(row(f"python write, {label}", measure(env, "py_write", args.calls)))
        finally:
            sb.close()
            sandbox.install(prev)
    env = mod.Env(state)
    measure(env, "fx_read", 50)
    rows.append(row("effect-language read", measure(env, "fx_read", args.calls * 10)))
    rows.append(row("effect-language write", measure(env, "fx_write", args.calls * 10)))
    if ok:
        starts = [first_call(sandbox.Sandbox, mod, state, unsafe=False) for _ in range(5)]
        rows.append(row("first call incl. worker start, sandbox (bwrap)", starts))
    starts = [first_call(old.Sandbox, mod, state) for _ in range(5)]
    rows.append(row(f"first call incl. worker start, old worker ({BASELINE})", starts))

    print(f"tool call through Env.step, state of {args.records} records, {args.calls} calls (effect: {args.calls * 10}); seccomp: {sandbox.seccomp_available()}")
    w = max(len(r[0]) for r in rows)
    print(f"{'what':<{w}}  {'median ms':>10}  {'p99 ms':>10}")
    print(f"{'-' * w}  {'-' * 10}  {'-' * 10}")
    for label, med, p99 in rows:
        print(f"{label:<{w}}  {med:>10}  {p99:>10}")


if __name__ == "__main__":
    main()
