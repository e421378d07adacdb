"""The compiler/runtime border (issue 22), read from the source by tests/importgraph.py.

The runtime side (runtime, train, serve, gym: what scores episodes during training) works from a build's
published files and a small shared core (forgec.tasks, forgec.wording, forgec.diagnostics, ...); it never
imports the compiler. No module takes another's private name, and no modules import each other in a circle.
Each assertion names the file and line of the first offender, so a new upward arrow fails CI with its place.
"""

from __future__ import annotations

from pathlib import Path

import importgraph as G
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def graph():
    return G.read_imports(ROOT)


def test_the_reader_sees_every_package_and_real_arrows(graph):
    """The graph is not empty by accident: each package is read, and arrows known from the code are there."""
    for pkg in G.PACKAGE_DIRS:
        assert any(m == pkg or m.startswith(pkg + ".") for m in graph), pkg
    assert "forgec.runtime.envrt" in graph["forgec.runtime.sandbox"].imports or \
        "forgec.runtime.errors" in graph["forgec.runtime.sandbox"].imports
    assert "forgec.tasks" in graph["forgec.runtime.reward"].imports
    assert "forgec.synth.params" in graph["forgec.synth.effects"].imports
    assert len(graph) > 100


def test_the_runtime_side_imports_no_compiler_module(graph):
    assert G.crossings(graph) == []


def test_no_module_takes_another_modules_private_name(graph):
    assert G.private_imports(graph) == []


def test_commands_do_not_import_commands(graph):
    assert G.command_imports(graph) == []


def test_no_circles(graph):
    assert G.circles(graph) == []


def test_the_checks_catch_what_they_look_for(tmp_path):
    """A made-up tree with one of each defect: the reader reports each, with its file and line."""
    for folder in ("forgec", "runtime", "train", "codegen", "stdlib", "grammar"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "forgec" / "scenario.py").write_text("from forgec.sample import helper\n")
    (tmp_path / "forgec" / "sample.py").write_text("def helper(): pass\n\ndef _secret(): pass\n\ndef f():\n    from forgec import scenario\n")
    (tmp_path / "runtime" / "agents.py").write_text("import json\n\nfrom forgec.sample import _secret\n")
    (tmp_path / "forgec" / "commands").mkdir()
    (tmp_path / "forgec" / "commands" / "__init__.py").write_text("")
    (tmp_path / "forgec" / "commands" / "play.py").write_text("from forgec.commands.eval import load_build\n")
    (tmp_path / "forgec" / "commands" / "eval.py").write_text("from forgec.commands.common import x\n")
    g = G.read_imports(tmp_path)
    assert G.crossings(g) == [f"{tmp_path / 'runtime' / 'agents.py'}:3: forgec.runtime.agents -> forgec.sample"]
    assert G.private_imports(g) == [f"{tmp_path / 'runtime' / 'agents.py'}:3: forgec.runtime.agents takes _secret from forgec.sample"]
    assert G.circles(g) == [["forgec.sample", "forgec.scenario"]]
    assert G.command_imports(g) == [f"{tmp_path / 'forgec' / 'commands' / 'play.py'}:1: forgec.commands.play -> forgec.commands.eval"]
