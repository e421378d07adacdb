"""Every command's usage errors exit 2 with a message and no traceback, also on a clean install
(only the declared dependencies: no click); command errors go through the diagnostics renderer
with registered codes; the lark internals the parser driver reads are still there."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgec import diagnostics as D
from forgec.cli import COMMANDS, app

REPO = Path(__file__).resolve().parent.parent
SOURCES = ("forgec", "runtime", "train", "codegen")

# Per command: (unknown option, missing argument, bad value) -> a fragment of the message each must print.
# The bad values are ones the option parser checks: an enum, an int, a bool flag given a value.
USAGE_CASES = {
    "inspect": (["inspect", "x.json", "--bogus"], ["inspect"], ["inspect", "x.json", "--format", "loud"]),
    "check": (["check", "x.forge", "--bogus"], ["check"], ["check", "x.forge", "--format", "loud"]),
    "fmt": (["fmt", "x.forge", "--bogus"], ["fmt"], ["fmt", "x.forge", "--check=yes"]),
    "compile": (["compile", "docs", "--bogus"], ["compile"], ["compile", "docs", "--format", "jsn"]),
    "verify": (["verify", "b", "--bogus"], ["verify"], ["verify", "b", "--calls", "many"]),
    "graph": (["graph", "docs", "--bogus"], ["graph"], ["graph", "docs", "--format", "gif"]),
    "sample": (["sample", "docs", "--bogus"], ["sample"], ["sample", "docs", "-n", "-3"]),
    "stats": (["stats", "b", "--bogus"], ["stats"], ["stats", "b", "--format", "xml"]),
    "play": (["play", "b", "--bogus"], ["play"], ["play", "b", "--max-turns", "ten"]),
    "eval": (["eval", "b", "--bogus"], ["eval"], ["eval", "b", "-k", "two"]),
    "train": (["train", "b", "--bogus"], ["train"], ["train", "b", "--resume=1"]),
    "sft": (["sft", "b", "--bogus"], ["sft"], ["sft", "b", "--show-config=no"]),
    "serve": (["serve", "b", "--bogus"], ["serve"], ["serve", "b", "--transport", "pigeon"]),
    "serve-openenv": (["serve-openenv", "b", "--bogus"], ["serve-openenv"], ["serve-openenv", "b", "--port", "many"]),
    "export": (["export", "hf", "b", "-o", "x", "--bogus"], ["export"], ["export", "csv", "b", "-o", "x"]),
    "evolve": (["evolve", "b", "--bogus"], ["evolve"], ["evolve", "b", "-k", "two"]),
    "sft-user": (["sft-user", "b", "--bogus"], ["sft-user"], ["sft-user", "b", "--show-config=no"]),
}
FRAGMENTS = ("No such option", "Missing argument", ("Invalid value", "does not take a value"))


def test_every_command_has_usage_cases():
    assert sorted(USAGE_CASES) == sorted(name for name, _ in COMMANDS)


def _check_usage(code: int, text: str, want) -> None:
    assert code == 2, text
    assert text.startswith("error[usage]: ") and "  = help: Usage: forgec " in text, text  # the diagnostics renderer
    assert any(w in text for w in (want if isinstance(want, tuple) else (want,))), text
    assert "Traceback" not in text and "internal-error" not in text, text


@pytest.mark.parametrize("name", sorted(USAGE_CASES))
def test_usage_errors_in_process(name):
    for args, want in zip(USAGE_CASES[name], FRAGMENTS):
        r = CliRunner().invoke(app, args)
        _check_usage(r.exit_code, r.output, want)


# ------------------------------------------------------------- errors go through the renderer


def test_no_hand_formatted_error_strings():
    """`error[...]` text is written only by forgec/diagnostics.py's renderer."""
    hits = []
    for top in SOURCES:
        for f in sorted((REPO / top).rglob("*.py")):
            if f == REPO / "forgec" / "diagnostics.py":
                continue
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"""["'f]error\[|[^_a-z]error\[\{""", line):
                    hits.append(f"{f.relative_to(REPO)}:{i}: {line.strip()}")
    assert hits == []


def test_every_code_a_command_fails_with_is_registered_and_documented():
    D.load_all_codes()
    docs = (REPO / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    used = set()
    for f in sorted((REPO / "forgec").rglob("*.py")):
        used |= set(re.findall(r"""\b(?:fail|error|warning)\(\s*["']([a-z0-9-]+)["']""", f.read_text(encoding="utf-8")))
    assert {"corrupt-build", "missing-build", "empty-build", "unknown-env"} <= used
    for code in sorted(used | {"usage", "io", "train-config", "empty-build", "corrupt-build"}):
        assert code in D.CODES, code
        assert f"### `{code}`" in docs, code


def test_fail_refuses_an_unregistered_code():
    with pytest.raises(ValueError, match="not registered"):
        D.fail("no-such-code-anywhere", "x")


def test_usage_error_rendered_with_code_and_help(tmp_path):
    r = CliRunner().invoke(app, ["eval", str(tmp_path), "--agent", "gpt"])
    assert r.exit_code == 2
    assert r.output == "error[usage]: unknown --agent 'gpt'; choose oracle, openai, hf or random\n"
    r = CliRunner().invoke(app, ["eval", str(tmp_path), "--agent", "openai"])
    assert r.exit_code == 2 and r.output == "error[usage]: --agent openai needs --agent-base-url and --agent-model\n"


def test_exit_codes_documented_in_readme():
    """Every exit status a command uses is a `diagnostics.EXIT_*` constant, and each is in the README."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    consts = {k: v for k, v in vars(D).items() if k.startswith("EXIT_") and isinstance(v, int)}
    assert set(consts.values()) == D.EXIT_CODES == {0, 1, 2, 3, 130}
    for v in set(consts.values()):
        assert re.search(rf"^\| `{v}` \|", section, flags=re.M), v
    literal = []
    for top in SOURCES:
        for f in sorted((REPO / top).rglob("*.py")):
            for m in re.finditer(r"(?:typer\.Exit|sys\.exit|SystemExit)\((\d+)", f.read_text(encoding="utf-8")):
                if int(m.group(1)) not in consts.values():
                    literal.append(f"{f.relative_to(REPO)}: exit {m.group(1)}")
    assert literal == []


# ------------------------------------------------------------- lark: pinned range, internals present


def test_lark_internals_present_and_pin_matches_tested_range():
    import lark

    P = importlib.import_module("forgec.lang.parse")
    lo, hi = P.LARK_TESTED
    version = tuple(int(x) for x in lark.__version__.split(".")[:2])
    assert lo <= version < hi, f"installed lark {lark.__version__} is outside the tested range {lo}..{hi}"
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"lark>={lo[0]}.{lo[1]},<{hi[0]}.{hi[1]}" in deps
    lk = lark.Lark(P.grammar_text(), parser="lalr", lexer="contextual", maybe_placeholders=True)
    lp = P.lark_internals(lk)
    assert lp.parse_table.start_states["start"] in lp.parse_table.states


def test_lark_internals_changed_gives_a_clear_message():
    P = importlib.import_module("forgec.lang.parse")

    class Moved:  # what a lark release that reorganised its parser frontends would look like
        parser = type("F", (), {"parser": type("G", (), {"parser": object()})()})()

    with pytest.raises(RuntimeError, match=r"forgec's parser needs lark's LALR internals .* pip install 'lark>=1\.3,<1\.4'"):
        P.lark_internals(Moved())


# ------------------------------------------------------------- a clean install: only the declared dependencies


def _declared() -> list[str]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]


def _index_args() -> list[str]:
    """This machine's local package indexes (fast, offline copies) beside pip's configured one (PyPI, which the
    project's machines reach): a declared dependency the local copy lacks (lemminflect) still installs."""
    local = [Path("/opt/pypi/simple"), Path("/opt/pypi-more/simple")]
    return [x for p in local if p.is_dir() for x in ("--extra-index-url", p.as_uri())]


@pytest.mark.slow
def test_clean_venv_usage_errors_exit_2_without_traceback(tmp_path):
    """`pip install .` (no extras) into a plain venv, then every command's usage errors through the real entry point."""
    src = tmp_path / "src"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):  # the tracked tree, as a fresh clone has it (symlinks kept)
        if not (REPO / rel).exists() and not (REPO / rel).is_symlink():
            continue  # deleted in the working tree, not yet committed
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        if (REPO / rel).is_symlink():
            os.symlink(os.readlink(REPO / rel), src / rel)
        else:
            shutil.copy2(REPO / rel, src / rel)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)  # no --system-site-packages
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", *_index_args(), str(src)], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    probe = subprocess.run([str(py), "-c", "import sys; print(sys.prefix != sys.base_prefix); import click"],
                           capture_output=True, text=True, env=env)
    assert probe.stdout.strip() == "True" and "No module named 'click'" in probe.stderr, (probe.stdout, probe.stderr)
    names = subprocess.run([str(py), "-m", "pip", "list", "--format", "freeze"], capture_output=True, text=True, env=env).stdout
    assert "forgec==" in names
    exe = venv / "bin" / "forgec"
    for name in sorted(USAGE_CASES):
        for args, want in zip(USAGE_CASES[name], FRAGMENTS):
            r = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
            _check_usage(r.returncode, r.stdout + r.stderr, want)
    r = subprocess.run([str(exe), "eval", str(tmp_path / "nobuild"), "--agent", "gpt"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and r.stderr.startswith("error[usage]: unknown --agent 'gpt'"), r.stderr
    r = subprocess.run([str(exe), "eval", str(tmp_path / "nobuild")], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and r.stderr.startswith("error[missing-build]"), r.stderr


@pytest.mark.parametrize("raised, status, text", [
    (SystemExit(7), 2, "error[internal-error]: something called sys.exit(7) inside forgec"),
    (RuntimeError("boom"), 2, "error[internal-error]: RuntimeError: boom"),
    (KeyboardInterrupt(), 130, "interrupted"),
    (SystemExit(3), 3, ""),
])
def test_main_maps_every_escape_to_a_documented_status(monkeypatch, capsys, raised, status, text):
    import forgec.cli as cli

    def app():
        raise raised

    monkeypatch.setattr(cli, "app", app)
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == status and e.value.code in D.EXIT_CODES
    err = capsys.readouterr().err
    assert err.startswith(text) and "Traceback" not in err


def test_every_imported_third_party_module_is_declared():
    """What the package imports is in pyproject: the core deps, or (imported lazily) the `train` extra."""
    import ast

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = {re.split(r"[<>=!\[ ;]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    extra = {re.split(r"[<>=!\[ ;]", d, maxsplit=1)[0].lower() for x in ("train", "serve", "verifiers") for d in project["optional-dependencies"][x]}
    dist = {"yaml": "pyyaml", "mcp_types": "mcp-types"}  # import name -> distribution name where they differ
    serve_files = ("forgec/serve/", "forgec/gym.py", "forgec/commands/serve.py", "forgec/export/",  # the `serve` extra, imported only there
                   "forgec/adapters/", "forgec/commands/serve_openenv.py")  # (and the `verifiers` extra: forgec/adapters/verifiers_env.py)
    found: dict[str, str] = {}
    for top in ("forgec", "runtime", "codegen", "stdlib", "grammar", "train"):
        for f in sorted((REPO / top).rglob("*.py")):
            for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                names = [a.name for a in n.names] if isinstance(n, ast.Import) else (
                    [n.module] if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module else [])
                for m in names:
                    found.setdefault(m.split(".")[0], str(f.relative_to(REPO)))
    third = {m: f for m, f in found.items() if m not in sys.stdlib_module_names and m != "forgec"}
    undeclared = {m: f for m, f in third.items() if dist.get(m, m).lower() not in core | extra}
    assert undeclared == {}
    assert "click" not in third  # typer >= 0.20 does not bring it
    from_core = {m for m, f in third.items() if not f.startswith(("train/", *serve_files)) and dist.get(m, m).lower() not in core}
    assert from_core <= {"torch", "transformers", "deepspeed", "tokenizers", "accelerate"}  # lazy: HF agent, training
