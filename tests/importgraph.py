"""The import graph of forgec's own modules, read from the source (ast), for the border checks of issue 22.

Why not import-linter: its graph builder (grimp) finds subpackages by walking the root package's folder,
and forgec maps `forgec.runtime`, `forgec.train`, `forgec.codegen`, ... to top-level folders
(`[tool.setuptools] package-dir`), which it reports as "does not exist". This is the small part of it
forgec needs: module -> imported modules (module-level and inside functions), and the private names taken.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

# import name -> folder, as pyproject's [tool.setuptools] package-dir says
PACKAGE_DIRS = {"forgec": "forgec", "forgec.grammar": "grammar", "forgec.stdlib": "stdlib", "forgec.codegen": "codegen",
                "forgec.runtime": "runtime", "forgec.train": "train"}

# the runtime side: what runs episodes, scores them and trains on them, from a build's published files
RUNTIME_SIDE = ("forgec.runtime", "forgec.train", "forgec.serve", "forgec.gym")
# the compiler: what reads docs and makes a build
COMPILER = ("forgec.sample", "forgec.scenario", "forgec.lower", "forgec.refine", "forgec.build", "forgec.synth", "forgec.lang",
            "forgec.frontends", "forgec.graph", "forgec.commands", "forgec.userstate", "forgec.reasons", "forgec.devicewords",
            "forgec.cli")


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    imports: dict[str, int] = field(default_factory=dict)  # imported forgec module -> first line
    private: list[tuple[str, str, int]] = field(default_factory=list)  # (module, private name, line)


def modules(root: Path) -> dict[str, Module]:
    out = {}
    for pkg, folder in PACKAGE_DIRS.items():
        base = root / folder
        for p in sorted(base.rglob("*.py")):
            rel = p.relative_to(base).with_suffix("")
            parts = [x for x in rel.parts if x != "__init__"]
            if any(x in ("templates", "__pycache__") for x in rel.parts):
                continue
            sub = [x for x in parts]
            name = ".".join([pkg] + sub)
            if pkg == "forgec" and sub and f"forgec.{sub[0]}" in PACKAGE_DIRS:
                continue
            out[name] = Module(name, p, p.name == "__init__.py")
    return out


def read_imports(root: Path) -> dict[str, Module]:
    mods = modules(root)
    for m in mods.values():
        tree = ast.parse(m.path.read_text(encoding="utf-8"))
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                for a in n.names:
                    _add(m, mods, a.name, n.lineno)
            elif isinstance(n, ast.ImportFrom):
                if n.level:
                    base = m.name.split(".") if m.is_package else m.name.split(".")[:-1]
                    base = base[: len(base) - (n.level - 1)]
                    target = ".".join(base + ([n.module] if n.module else []))
                else:
                    target = n.module or ""
                if not (target == "forgec" or target.startswith("forgec.")):
                    continue
                for a in n.names:
                    sub = f"{target}.{a.name}"
                    if sub in mods:
                        _add(m, mods, sub, n.lineno)
                    else:
                        _add(m, mods, target, n.lineno)
                        if a.name.startswith("_") and not a.name.startswith("__"):
                            m.private.append((target, a.name, n.lineno))
    return mods


def _add(m: Module, mods: dict[str, Module], target: str, line: int) -> None:
    while target and target not in mods:
        target = target.rpartition(".")[0]
    if target and target != m.name:
        m.imports.setdefault(target, line)


def crossings(mods: dict[str, Module]) -> list[str]:
    """Runtime-side modules that import a compiler module: `file:line: a -> b`."""
    inside = lambda name, prefixes: any(name == p or name.startswith(p + ".") for p in prefixes)  # noqa: E731
    return [f"{m.path}:{line}: {m.name} -> {t}" for m in mods.values() if inside(m.name, RUNTIME_SIDE)
            for t, line in m.imports.items() if inside(t, COMPILER)]


def private_imports(mods: dict[str, Module]) -> list[str]:
    return [f"{m.path}:{line}: {m.name} takes {name} from {t}" for m in mods.values() for t, name, line in m.private]


def circles(mods: dict[str, Module]) -> list[list[str]]:
    """Groups of modules that import each other, directly or around a loop (a package's `__init__` re-exports left out:
    a package importing its own submodules is its face, not a circle)."""
    import networkx as nx

    g = nx.DiGraph()
    for m in mods.values():
        for t in m.imports:
            if m.is_package and t.startswith(m.name + "."):
                continue
            if mods[t].is_package and m.name.startswith(t + "."):
                continue  # a submodule importing its package's face
            g.add_edge(m.name, t)
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def command_imports(mods: dict[str, Module]) -> list[str]:
    """A command module importing another command (`forgec.commands.common` is what they share)."""
    return [f"{m.path}:{line}: {m.name} -> {t}" for m in mods.values() if m.name.startswith("forgec.commands.")
            for t, line in m.imports.items() if t.startswith("forgec.commands.") and t != "forgec.commands.common"]
