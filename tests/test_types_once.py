"""Issue 22, types once: a compile type-checks each env once (the check stage); codegen and the
lower stage's blueprint check read that EnvTypes (`EnvJob.env_types`) instead of checking again."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from forgec.codegen import emit

import forgec.lang.check as check_mod
from forgec import lang
from forgec.build import CompileOptions, compile_build

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def env_checks(monkeypatch) -> Counter:
    """Counts `check_env` calls by env name, wherever they come from (the checker, codegen's fallback)."""
    calls: Counter = Counter()
    real = check_mod.check_env

    def counting(env, diags):
        calls[env.name] += 1
        return real(env, diags)

    monkeypatch.setattr(check_mod, "check_env", counting)
    monkeypatch.setattr(emit, "check_env", counting)  # emit imported the name: its fallback when no EnvTypes is passed
    return calls


def test_compile_checks_each_env_once(tmp_path: Path, env_checks: Counter) -> None:
    out = tmp_path / "build"
    opts = CompileOptions(inputs=[EXAMPLES], out=out, tasks_per_env=20, jobs=1)  # in-process: the counter sees every call
    res = compile_build(opts)
    assert res.ok, [d.message for d in res.diagnostics if d.is_error]
    envs = set(res.manifest.envs)
    assert envs == {"airline", "bookstore", "helpdesk"}
    assert all(e.task_count for e in res.manifest.envs.values())  # blueprints were checked and lowered
    assert env_checks == Counter({e: 1 for e in envs})  # check stage only: not codegen, not the blueprint check

    env_checks.clear()  # a no-op rebuild reuses codegen and lowering; the env text is still checked, once
    compile_build(opts)
    assert env_checks == Counter({e: 1 for e in envs})

    env_checks.clear()  # an edited blueprint is checked again, against the env's types, not with the env
    bp = next(b for b in res.manifest.envs["airline"].blueprints.values() if b.task)
    p = out / bp.path
    p.write_text(p.read_text().replace('goal "', 'goal "(edited) ', 1))
    again = compile_build(opts)
    assert again.ok
    assert env_checks == Counter({e: 1 for e in envs})
    assert any("(edited)" in line for line in (out / "tasks" / "airline.jsonl").read_text().splitlines())


def test_blueprints_checked_against_given_types_report_the_same(tmp_path: Path) -> None:
    """`check(..., checked=)` skips the env, not its blueprints: the same blueprint diagnostics as a full check."""
    out = tmp_path / "build"
    assert compile_build(CompileOptions(inputs=[EXAMPLES], out=out, tasks_per_env=10, jobs=1)).ok
    env_file = out / "src" / "airline" / "env.forge"
    bp_file = next((out / "blueprints" / "airline").glob("*.forge"))
    # errors the blueprint check reports: an unknown tool, a fact that is not a literal
    broken = re.sub(r"(call \w+ = )(\w+)\(", r"\1no_such_\2(", bp_file.read_text(), count=1)
    broken = broken.replace("user {", "user {\n    knows extra = nowhere", 1)
    bad = tmp_path / "bad.forge"
    bad.write_text(broken)

    def diags(checked: bool) -> list:
        env_mod, _ = lang.parse(env_file.read_text(), str(env_file))
        done = {}
        if checked:
            cd, typed = check_mod.check_typed([env_mod])
            assert not cd
            done = typed.envs
        mods = [env_mod] + [lang.parse(f.read_text(), str(f))[0] for f in (bp_file, bad)]
        return [(d.code, d.message, d.span.file, d.span.line) for d in lang.check(mods, checked=done)
                if d.span is None or d.span.file != str(env_file)]

    full = diags(False)
    assert any(code for code, _, f, _ in full if f == str(bad))
    assert diags(True) == full
