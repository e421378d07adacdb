"""Path-addressed trees (forgec/synth/shape_tree.py) from two differently written sources: the
MCP filesystem server's tools/list (tests/corpus/core) and a BFCL-style shell API with a working
directory (tests/fixtures/tree/shell_bfcl.jsonl). Expected results are worked out by hand from
the small tree below; the real MCP server is the second implementation in
tests/test_differential_filesystem.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CORPUS
from forgec import lang
from forgec.codegen import emit_env, load_env_module
from forgec.diagnostics import has_errors
from forgec.frontends import read_paths
from forgec.lang import ast as A
from forgec.runtime.envrt import ToolError
from forgec.stdlib.tree_state import is_tree_entity
from forgec.stdlib.values import generate_state
from forgec.synth import synthesize
from forgec.synth.shape_tree import classify, claim

SHELL = Path(__file__).parent / "fixtures" / "tree" / "shell_bfcl.jsonl"
MCP = CORPUS / "mcp_server_filesystem"


def _env(src: Path):
    envs, diags = read_paths([src])
    assert not has_errors(diags)
    return envs[0]


def _module(src: Path, tmp_path: Path):
    decl, _ = synthesize(_env(src))
    text = lang.format(A.Module(file="env.forge", items=(decl,)))
    mod, pd = lang.parse(text, "env.forge")
    assert not has_errors(pd + lang.check([mod])), text
    p = tmp_path / f"{src.stem}_env.py"
    p.write_text(emit_env(mod.envs[0], "env.forge"), encoding="utf-8")
    return decl, load_env_module(p)


def _node(path, kind="file", content=""):
    return {"path": path, "kind": kind, "content": content}


TREE = {p: _node(p, k, c) for p, k, c in [
    ("/project", "directory", ""), ("/project/notes.txt", "file", "a\nb\nc\n"), ("/project/.hidden", "file", "x"),
    ("/project/src", "directory", ""), ("/project/src/main.py", "file", "print(1)\n"), ("/project/empty", "directory", ""),
]}


def test_operations_read_from_two_doc_styles():
    mcp = {t.name: classify(t).op for t in _env(MCP).tools}
    assert mcp == {"read_file": "read", "read_text_file": "read", "read_media_file": "media", "read_multiple_files": "read_many",
                   "write_file": "write", "edit_file": "edit", "create_directory": "mkdir", "list_directory": "list",
                   "list_directory_with_sizes": "list", "directory_tree": "tree", "move_file": "move", "search_files": "search",
                   "get_file_info": "info", "list_allowed_directories": "allowed"}
    shell = {t.name: classify(t).op for t in _env(SHELL).tools}
    assert shell == {"pwd": "pwd", "ls": "list", "cd": "cd", "mkdir": "mkdir", "touch": "touch", "cat": "read", "echo": "write",
                     "mv": "move", "cp": "copy", "rm": "rm", "rmdir": "rmdir", "find": "search", "grep": "grep", "wc": "wc",
                     "tail": "read", "diff": "diff"}
    # documented details become flags: nested + idempotent mkdir, a failing existing destination, "into" a directory
    ops = {t.name: classify(t) for t in _env(MCP).tools}
    assert ops["create_directory"].flags == {"parents", "exist_ok"} and ops["move_file"].flags == {"no_clobber"}
    sh = {t.name: classify(t) for t in _env(SHELL).tools}
    assert sh["mkdir"].flags == set() and sh["mv"].flags == {"into"} and sh["rmdir"].flags == {"empty"}


@pytest.mark.parametrize("name", ["mcp_server_git", "mcp_server_memory", "mcp_server_sqlite", "tau_bench_retail"])
def test_no_tree_where_the_docs_have_none(name):
    """git's "working tree", a graph's entities, a SQL database stay with other rules."""
    assert claim(_env(CORPUS / name), frozenset()) is None


def test_every_tool_is_modeled_none_log_only():
    for src, n in ((MCP, 14), (SHELL, 16)):
        decl, _ = synthesize(_env(src))
        assert len(decl.tools) == n and not any("conservative" in t.annotations for t in decl.tools), src
        assert [e.name for e in decl.entities] == ["Node"]


def test_shell_semantics_by_hand(tmp_path):
    _, m = _module(SHELL, tmp_path)
    env = m.Env({"entities": {"Node": TREE}, "globals": {"root": "/project", "cwd": "/project"}})
    step = env.step

    def err(tool, **a):
        r = step(tool, a)
        assert isinstance(r, ToolError), (tool, a, r)
        return r.message

    assert step("pwd", {}) == {"current_working_directory": "/project"}
    assert step("ls", {}) == {"current_directory_content": ["empty", "notes.txt", "src"]}  # hidden names left out
    assert step("ls", {"a": True}) == {"current_directory_content": [".hidden", "empty", "notes.txt", "src"]}
    assert step("cd", {"folder": "src"}) == {"current_working_directory": "/project/src"}
    assert step("cat", {"file_name": "main.py"}) == {"file_content": "print(1)\n"}
    assert step("cd", {"folder": ".."}) == {"current_working_directory": "/project"}
    err("cd", folder="nowhere")
    err("cd", folder="../..")  # above the tree's top
    err("cat", file_name="src")  # a directory
    step("mkdir", {"dir_name": "build"})
    assert "EEXIST" in err("mkdir", dir_name="build")  # "Fails when an entry with that name is already there"
    err("mkdir", dir_name="a/b")  # no parents made: not documented
    step("touch", {"file_name": "notes.txt"})
    assert step("cat", {"file_name": "notes.txt"}) == {"file_content": "a\nb\nc\n"}  # left as it is
    step("touch", {"file_name": "new.txt"})
    step("echo", {"content": "hi\n", "file_name": "new.txt"})
    assert step("cat", {"file_name": "/project/new.txt"}) == {"file_content": "hi\n"}
    step("mv", {"source": "new.txt", "destination": "build"})  # an existing directory: moved into it
    nodes = env.state["entities"]["Node"]
    assert "/project/new.txt" not in nodes and nodes["/project/build/new.txt"]["content"] == "hi\n"
    step("cp", {"source": "src", "destination": "build"})  # a directory, copied into build with its files
    assert nodes["/project/build/src/main.py"]["content"] == "print(1)\n" and "/project/src/main.py" in nodes
    step("cp", {"source": "notes.txt", "destination": "copy.txt"})
    assert nodes["/project/copy.txt"]["content"] == "a\nb\nc\n"
    assert step("find", {"name": ".py"}) == {"matches": ["build/src/main.py", "src/main.py"]}
    assert step("find", {"path": "build", "name": "new"}) == {"matches": ["new.txt"]}
    assert step("grep", {"file_name": "notes.txt", "pattern": "b"}) == {"matching_lines": ["b"]}
    assert step("wc", {"file_name": "notes.txt"}) == {"count": 3, "type": "l"}
    assert step("wc", {"file_name": "notes.txt", "mode": "w"}) == {"count": 3, "type": "w"}
    assert step("wc", {"file_name": "notes.txt", "mode": "c"}) == {"count": 6, "type": "c"}
    # the last N pieces after splitting at newlines, as the real MCP server counts (tests/differential_fs.py)
    assert step("tail", {"file_name": "notes.txt", "lines": 3}) == {"last_lines": "b\nc\n"}
    d = step("diff", {"file_name1": "notes.txt", "file_name2": "src/main.py"})["diff_lines"]
    assert d.startswith("Index: notes.txt\n") and "-a\n" in d and "+print(1)\n" in d
    assert "ENOTEMPTY" in err("rmdir", dir_name="build")  # "Only an empty directory can be removed"
    step("rmdir", {"dir_name": "empty"})
    step("rm", {"file_name": "build"})  # a directory with everything inside it
    assert not any(p.startswith("/project/build") for p in nodes) and "/project/empty" not in nodes
    err("rm", file_name="/project")


def test_mcp_paths_are_confined_to_the_allowed_directory(tmp_path):
    _, m = _module(MCP, tmp_path)
    env = m.Env({"entities": {"Node": TREE}, "globals": {"root": "/project"}})
    r = env.step("read_text_file", {"path": "../etc/passwd"})
    assert isinstance(r, ToolError) and "outside allowed directories" in r.message
    assert env.step("list_directory", {"path": "/project"}) == {"content": "[FILE] .hidden\n[DIR] empty\n[FILE] notes.txt\n[DIR] src"}
    assert env.step("create_directory", {"path": "x/y"}) == {"content": "Successfully created directory x/y"}
    assert env.step("create_directory", {"path": "x/y"}) == {"content": "Successfully created directory x/y"}  # silently
    assert env.state["entities"]["Node"]["/project/x"]["kind"] == "directory"
    r = env.step("move_file", {"source": "notes.txt", "destination": "src/main.py"})
    assert isinstance(r, ToolError) and r.message == "Destination already exists"


def test_initial_tree_is_a_consistent_project():
    from forgec.synth.shape_tree import ENTITY

    for src in (MCP, SHELL):
        decl, _ = synthesize(_env(src))
        text = lang.format(A.Module(file="env.forge", items=(decl,)))
        mod, _ = lang.parse(text, "env.forge")
        schema = {"entities": {e.name: {"key": e.key, "fields": {f.name: ({"type": "enum", "values": list(f.type.values)} if isinstance(f.type, A.EnumType) else {"type": "str"}) for f in e.fields}} for e in mod.envs[0].entities},
                  "globals": {"root": {"type": "str", "default": "/project"}}}
        assert is_tree_entity(schema["entities"][ENTITY])
        a, b = generate_state(schema, seed=3), generate_state(schema, seed=3)
        assert a == b
        nodes = a["entities"][ENTITY]
        assert nodes["/project"]["kind"] == "directory" and 12 <= len(nodes) <= 20
        for p, n in nodes.items():
            assert n["path"] == p and (p == "/project" or nodes[p.rsplit("/", 1)[0]]["kind"] == "directory"), p
            assert (n["content"] == "") if n["kind"] == "directory" else n["content"].endswith("\n")
        assert generate_state(schema, seed=4)["entities"][ENTITY] != nodes  # the seed varies the project


JUPYTER = CORPUS / "openapi_jupyter_server"


def test_rest_contents_api_is_the_same_tree(tmp_path):
    """A third doc style (Swagger 2.0 REST, Jupyter's contents API): the verb is the operation,
    results are the documented model; the kernels/sessions tools keep the CRUD rules."""
    c = claim(_env(JUPYTER), frozenset())
    assert sorted(c.tools) == sorted(["get_api_contents_path", "post_api_contents_path", "patch_api_contents_path", "put_api_contents_path",
                                      "delete_api_contents_path", "get_api_contents_path_checkpoints", "post_api_contents_path_checkpoints",
                                      "post_api_contents_path_checkpoints_checkpoint_id", "delete_api_contents_path_checkpoints_checkpoint_id",
                                      "get_api_resolve_path"])
    decl, m = _module(JUPYTER, tmp_path)
    assert sum("conservative" in t.annotations for t in decl.tools) <= 3  # of 32 (was 6): kernel interrupt/restart, the spec file
    tree = {p: _node(p, k, c) for p, k, c in [("/project", "directory", ""), ("/project/a.txt", "file", "hi\n"),
                                               ("/project/sub", "directory", ""), ("/project/sub/b.py", "file", "x=1\n")]}
    env = m.Env({"entities": {"Node": tree, "Checkpoint": {}}, "globals": {"root": "/project", "now": "T"}})
    step = env.step
    root = step("get_api_contents_path", {"path": ""})
    assert (root["type"], root["name"], [k["path"] for k in root["content"]]) == ("directory", "", ["a.txt", "sub"])
    a = step("get_api_contents_path", {"path": "a.txt"})
    assert (a["content"], a["size"], a["format"], a["path"]) == ("hi\n", 3, "text", "a.txt")
    assert step("get_api_contents_path", {"path": "a.txt", "content": 0})["content"] is None
    assert step("get_api_contents_path", {"path": "/sub", "type": "file"}).message == "bad type"
    assert step("post_api_contents_path", {"path": "sub"})["path"] == "sub/untitled.txt"  # the server picks the name
    assert step("post_api_contents_path", {"path": "sub"})["path"] == "sub/untitled1.txt"
    assert step("post_api_contents_path", {"path": "", "body": {"type": "directory"}})["path"] == "Untitled Folder"
    cp = step("post_api_contents_path", {"path": "sub", "body": {"copy_from": "a.txt"}})
    assert (cp["path"], cp["content"]) == ("sub/a-Copy1.txt", "hi\n")
    step("put_api_contents_path", {"path": "sub/new.md", "body": {"content": "# t\n", "type": "file", "format": "text"}})
    assert step("patch_api_contents_path", {"path": "sub/new.md", "body": {"path": "new.md"}})["path"] == "new.md"  # rename
    assert step("patch_api_contents_path", {"path": "new.md", "body": {"path": "a.txt"}}).message == "File already exists"
    assert step("post_api_contents_path_checkpoints", {"path": "a.txt"}) == {"id": "checkpoint", "last_modified": "T"}
    assert step("get_api_contents_path_checkpoints", {"path": "a.txt"}) == [{"id": "checkpoint", "last_modified": "T"}]
    step("put_api_contents_path", {"path": "a.txt", "body": {"content": "changed"}})
    step("post_api_contents_path_checkpoints_checkpoint_id", {"path": "a.txt", "checkpoint_id": "checkpoint"})  # restore
    assert step("get_api_contents_path", {"path": "a.txt"})["content"] == "hi\n"
    assert step("get_api_resolve_path", {"path": "sub/b.py"}) == {"resolved": [{"scope": "server", "path": "sub/b.py"}], "unresolved": []}
    step("delete_api_contents_path", {"path": "sub"})
    assert sorted(env.state["entities"]["Node"]) == ["/project", "/project/Untitled Folder", "/project/a.txt", "/project/new.md"]
    assert step("get_api_resolve_path", {"path": "sub/b.py"})["resolved"] == []
