"""Differential scenarios: the env synthesized from the MCP filesystem server's `tools/list`
against the real server (npm `@modelcontextprotocol/server-filesystem`, tests/mcpreal.py).

Both start from the same tree: the synthesized env's initial state (`generate_state` on its
SCHEMA, seed 0: a small project under `/project`), written into a temp dir that is the real
server's one allowed directory. The same calls (every tool, failing calls included) run on
both; after each call they must agree on

* success or failure (`isError` vs a ToolError);
* the result text, the real root spelled as the env's (`/project`), with the normalizations
  of what the server leaves to the OS: directory order (readdir order is the file system's:
  listing and search lines compared sorted, tree children by name), timestamps, a
  directory's own size and the order of equal-size entries;
* the tree itself: every path below the root, its kind and a file's content.

`run_filesystem_scenarios()` -> [(tool, agree, detail)], one row per call (bench/differential.py
prints the table; tests/test_differential_filesystem.py asserts the agreement).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from conftest import CORPUS
from mcpreal import McpServer

ENV_ROOT = "/project"


def synthesized_env(tmp: Path):
    """The env module forgec builds from the corpus docs (rules synthesis, codegen), and its state."""
    from forgec import lang
    from forgec.codegen import emit_env, load_env_module
    from forgec.diagnostics import has_errors
    from forgec.frontends import read_paths
    from forgec.lang import ast as A
    from forgec.stdlib.values import generate_state
    from forgec.synth import synthesize

    envs, diags = read_paths([CORPUS / "mcp_server_filesystem"])
    assert not has_errors(diags), diags
    decl, _ = synthesize(envs[0])
    text = lang.format(A.Module(file="env.forge", items=(decl,)))
    mod, pd = lang.parse(text, "env.forge")
    assert not has_errors(pd + lang.check([mod])), text
    path = tmp / "fs_env.py"
    path.write_text(emit_env(mod.envs[0], "env.forge"), encoding="utf-8")
    module = load_env_module(path)
    return module, generate_state(module.SCHEMA, seed=0)


def seed_dir(state: dict, root: Path) -> None:
    """Write the env's initial tree below `root` (its `/project` is `root`)."""
    nodes = state["entities"]["Node"]
    for p in sorted(nodes):
        n = nodes[p]
        rel = os.path.relpath(p, ENV_ROOT)
        target = root if rel == "." else root / rel
        if n["kind"] == "directory":
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.write_text(n["content"], encoding="utf-8")


def real_tree(root: Path) -> dict:
    out = {}
    for dp, dns, fns in os.walk(root):
        for d in dns:
            out[os.path.relpath(os.path.join(dp, d), root)] = ("directory", "")
        for f in fns:
            fp = os.path.join(dp, f)
            out[os.path.relpath(fp, root)] = ("file", Path(fp).read_text(encoding="utf-8", errors="replace"))
    return out


def env_tree(env) -> dict:
    out = {}
    for p, n in env.state["entities"]["Node"].items():
        if p != ENV_ROOT:
            out[os.path.relpath(p, ENV_ROOT)] = (n["kind"], n["content"])
    return out


# ---------------------------------------------------------------------- the calls ("{R}" is the root)

SCENARIO: list[tuple[str, dict]] = [
    ("list_allowed_directories", {}),
    ("list_directory", {"path": "{R}"}),
    ("list_directory", {"path": "src"}),
    ("list_directory", {"path": "{R}/README.md"}),
    ("list_directory", {"path": "nowhere"}),
    ("list_directory_with_sizes", {"path": "{R}"}),
    ("list_directory_with_sizes", {"path": "src", "sortBy": "size"}),
    ("list_directory_with_sizes", {"path": "data", "sortBy": "name"}),
    ("read_text_file", {"path": "{R}/README.md"}),
    ("read_text_file", {"path": "notes.txt"}),
    ("read_text_file", {"path": "src/main.py", "head": 3}),
    ("read_text_file", {"path": "src/main.py", "tail": 2}),
    ("read_text_file", {"path": "notes.txt", "tail": 1}),
    ("read_text_file", {"path": "notes.txt", "head": 10}),
    ("read_text_file", {"path": "notes.txt", "head": 1, "tail": 1}),
    ("read_text_file", {"path": "missing.txt"}),
    ("read_text_file", {"path": "src"}),
    ("read_text_file", {"path": "/etc/hostname"}),
    ("read_text_file", {"path": "../outside.txt"}),
    ("read_text_file", {"path": "src/../README.md"}),  # paths normalized: `..`, `.`, a trailing slash, `//`
    ("read_text_file", {"path": "./notes.txt"}),
    ("list_directory", {"path": "src/"}),
    ("list_directory", {"path": "{R}//docs"}),
    ("read_file", {"path": "src/utils.py"}),
    ("read_file", {"path": "data/input.csv", "head": 2}),
    ("read_multiple_files", {"paths": ["README.md", "missing.txt", "src"]}),
    ("read_multiple_files", {"paths": ["{R}/notes.txt", "/etc/hostname", "docs/guide.md"]}),
    ("write_file", {"path": "new.txt", "content": "hello\nworld\n"}),
    ("write_file", {"path": "{R}/notes.txt", "content": "rewritten notes\n"}),
    ("write_file", {"path": "nodir/x.txt", "content": "x"}),
    ("write_file", {"path": "src", "content": "x"}),
    ("write_file", {"path": "/tmp/forgec-outside.txt", "content": "x"}),
    ("write_file", {"path": "data/empty.txt", "content": ""}),
    ("read_text_file", {"path": "new.txt"}),
    ("edit_file", {"path": "new.txt", "edits": [{"oldText": "world", "newText": "there"}]}),
    ("edit_file", {"path": "new.txt", "edits": [{"oldText": "hello", "newText": "bye"}], "dryRun": True}),
    ("edit_file", {"path": "new.txt", "edits": [{"oldText": "absent text", "newText": "x"}]}),
    ("edit_file", {"path": "src/main.py", "edits": [{"oldText": "import sys", "newText": "import os\nimport sys"},
                                                    {"oldText": "rows", "newText": "records"}]}),
    ("edit_file", {"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
    ("read_text_file", {"path": "src/main.py"}),
    ("create_directory", {"path": "build"}),
    ("create_directory", {"path": "a/b/c"}),
    ("create_directory", {"path": "{R}/src"}),
    ("create_directory", {"path": "notes.txt"}),
    ("create_directory", {"path": "/tmp/forgec-outside-dir"}),
    ("list_directory", {"path": "a"}),
    ("directory_tree", {"path": "{R}"}),
    ("directory_tree", {"path": "{R}", "excludePatterns": ["src"]}),
    ("directory_tree", {"path": "{R}", "excludePatterns": ["*.md"]}),
    ("directory_tree", {"path": "docs"}),
    ("directory_tree", {"path": "README.md"}),
    ("move_file", {"source": "new.txt", "destination": "docs/new.txt"}),
    ("move_file", {"source": "{R}/notes.txt", "destination": "{R}/README.md"}),
    ("move_file", {"source": "missing.txt", "destination": "found.txt"}),
    ("move_file", {"source": "a", "destination": "z"}),
    ("move_file", {"source": "docs/guide.md", "destination": "nodir/guide.md"}),
    ("move_file", {"source": "docs/new.txt", "destination": "/tmp/forgec-outside.txt"}),
    ("move_file", {"source": "build", "destination": "z/b/build"}),
    ("list_directory", {"path": "z/b"}),
    ("search_files", {"path": "{R}", "pattern": "*.py"}),
    ("search_files", {"path": "{R}", "pattern": "**/*.py"}),
    ("search_files", {"path": "{R}", "pattern": "**/*.md", "excludePatterns": ["docs"]}),
    ("search_files", {"path": "src", "pattern": "*.py"}),
    ("search_files", {"path": "{R}", "pattern": "**/c"}),
    ("search_files", {"path": "{R}", "pattern": "*.{md,txt}"}),
    ("search_files", {"path": "nowhere", "pattern": "*"}),
    ("get_file_info", {"path": "README.md"}),
    ("get_file_info", {"path": "{R}/src"}),
    ("get_file_info", {"path": "missing.txt"}),
    ("read_media_file", {"path": "README.md"}),
    ("write_file", {"path": "pic.png", "content": "not really a png"}),
    ("read_media_file", {"path": "pic.png"}),
    ("read_media_file", {"path": "missing.png"}),
    ("list_directory_with_sizes", {"path": "{R}", "sortBy": "size"}),
    ("read_text_file", {"path": "data/empty.txt", "tail": 3}),
    # the real server retries an unmatched edit line by line with whitespace trimmed (not documented)
    ("edit_file", {"path": "src/utils.py", "edits": [{"oldText": "def load(path):\nwith open(path) as f:", "newText": "def load(path):\n    with open(path, encoding=\"utf-8\") as f:"}]}),
    ("directory_tree", {"path": "{R}"}),
]


def _subst(v, root: str):
    if isinstance(v, str):
        return v.replace("{R}", root)
    if isinstance(v, list):
        return [_subst(x, root) for x in v]
    if isinstance(v, dict):
        return {k: _subst(x, root) for k, x in v.items()}
    return v


# ---------------------------------------------------------------------- normalizing results

_DATE_LINE = re.compile(r"^(created|modified|accessed): .*$", re.M)


def _sort_tree(v):
    if isinstance(v, list):
        return sorted((_sort_tree(x) for x in v), key=lambda e: e.get("name", "") if isinstance(e, dict) else str(e))
    if isinstance(v, dict):
        return {k: _sort_tree(x) for k, x in v.items()}
    return v


def _sized_lines(text: str, by_size: bool) -> str:
    """A sizes listing: entry lines; by size, directories (whose size is the file system's) apart
    from the files' order, and equal sizes ordered by name."""
    lines = text.split("\n")
    i = lines.index("") if "" in lines else len(lines)
    entries, summary = lines[:i], lines[i:]
    if by_size:
        files = [ln for ln in entries if ln.startswith("[FILE]")]
        dirs = sorted(ln for ln in entries if ln.startswith("[DIR]"))
        sizes = [ln[38:].strip() for ln in files]
        runs: list[list[str]] = []
        for ln, s in zip(files, sizes):
            if runs and runs[-1][0][38:].strip() == s:
                runs[-1].append(ln)
            else:
                runs.append([ln])
        entries = [ln for r in runs for ln in sorted(r)] + dirs
    return "\n".join(entries + summary)


def normalize(tool: str, args: dict, text: str) -> str:
    if tool in ("list_directory",):
        return "\n".join(sorted(text.split("\n")))
    if tool == "search_files":
        return "\n".join(sorted(text.split("\n")))
    if tool == "directory_tree":
        return json.dumps(_sort_tree(json.loads(text)), indent=2)
    if tool == "get_file_info":
        text = _DATE_LINE.sub(r"\1: <date>", text)
        if "isDirectory: true" in text:
            text = re.sub(r"^size: \d+$", "size: <dir>", text, flags=re.M)
        return text
    if tool == "list_directory_with_sizes":
        return _sized_lines(text, args.get("sortBy") == "size")
    return text


def _real_result(is_error: bool, text: str, structured, root: str):
    if is_error:
        return None
    if structured is not None and isinstance(structured.get("content"), list):  # media: content blocks
        return json.loads(json.dumps(structured["content"]).replace("file://" + root, "file://" + ENV_ROOT))
    return text.replace(root, ENV_ROOT)


def _env_result(r):
    if isinstance(r, dict) and isinstance(r.get("content"), list):
        return r["content"]
    return r.get("content") if isinstance(r, dict) else r


def run_filesystem_scenarios() -> list[tuple[str, bool, str]]:
    from forgec.runtime.envrt import ToolError

    rows: list[tuple[str, bool, str]] = []
    with tempfile.TemporaryDirectory(prefix="forgec-fsdiff-") as td:
        tmp = Path(td).resolve()
        module, state = synthesized_env(tmp)
        root = tmp / "root"
        root.mkdir()
        seed_dir(state, root)
        env = module.Env(state)
        for stray in ("/tmp/forgec-outside.txt", "/tmp/forgec-outside-dir"):
            assert not os.path.exists(stray), f"remove {stray} (a path outside the allowed directory the scenario must not create)"
        with McpServer("filesystem", str(root)) as srv:
            for tool, args in SCENARIO:
                is_err, text, structured = srv.call(tool, _subst(args, str(root)))
                r = env.step(tool, _subst(args, ENV_ROOT))
                env_err = isinstance(r, ToolError)
                why = []
                if is_err != env_err:
                    why.append(f"real {'fails' if is_err else 'succeeds'} ({text[:80]!r}), env {'fails' if env_err else 'succeeds'} ({(r.message if env_err else str(_env_result(r)))[:80]!r})")
                elif not is_err:
                    want, got = _real_result(is_err, text, structured, str(root)), _env_result(r)
                    if isinstance(want, str) and isinstance(got, str):
                        want, got = normalize(tool, args, want), normalize(tool, args, got)
                    if want != got:
                        why.append(f"result differs: real {json.dumps(want)[:300]} / env {json.dumps(got)[:300]}")
                rt, et = real_tree(root), env_tree(env)
                if rt != et:
                    diff = sorted(k for k in set(rt) | set(et) if rt.get(k) != et.get(k))
                    why.append(f"trees differ at {diff[:5]}")
                    env.reset({"entities": {"Node": _tree_state(rt)}, "globals": env.state["globals"]})  # one difference, one row
                rows.append((tool, not why, "; ".join(why) or "ok"))
        for stray in ("/tmp/forgec-outside.txt", "/tmp/forgec-outside-dir"):
            if os.path.isdir(stray):
                os.rmdir(stray)
            elif os.path.exists(stray):
                os.remove(stray)
    return rows


def _tree_state(rt: dict) -> dict:
    out = {ENV_ROOT: {"path": ENV_ROOT, "kind": "directory", "content": ""}}
    for rel, (kind, content) in rt.items():
        p = ENV_ROOT + "/" + rel
        out[p] = {"path": p, "kind": kind, "content": content}
    return out


if __name__ == "__main__":
    for row in run_filesystem_scenarios():
        print(("ok   " if row[1] else "DIFF ") + row[0] + ("" if row[1] else ": " + row[2]))
