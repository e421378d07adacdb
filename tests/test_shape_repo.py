"""The repository shape (forgec/synth/shape_repo.py): a version-controlled repository's state
(working tree, staging area, branches, commits, HEAD) read from two differently written docs,
the MCP git server's tools/list (tests/corpus/core) and an OpenAPI 3 VCS service written for
this test (tests/fixtures/repo), with each operation checked on hand-computed states."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import pytest

from forgec import lang
from forgec.diagnostics import has_errors, render
from forgec.frontends import read_paths
from forgec.lang import ast as A
from forgec.runtime.envrt import ToolError
from forgec.synth import synthesize

from conftest import CORPUS

REPO = Path(__file__).resolve().parent.parent
GIT = CORPUS / "mcp_server_git"
VCS = REPO / "tests" / "fixtures" / "repo" / "vcs_openapi.yaml"


def build(src: Path):
    from forgec.codegen import emit_env, load_env_module

    envs, d = read_paths([src])
    assert not has_errors(d), render(d, "concise")
    decl, sd = synthesize(envs[0])
    assert not has_errors(sd), render(sd, "concise")
    text = lang.format(A.Module(file="env.forge", items=(decl,)))
    mod, pd = lang.parse(text, "env.forge")
    pd += lang.check([mod])
    assert not has_errors(pd), render(pd, "concise", {"env.forge": text})
    tmp = Path(tempfile.mkdtemp(prefix="shape_repo_")) / "env.py"
    tmp.write_text(emit_env(mod.envs[0], "env.forge"), encoding="utf-8")
    return decl, text, load_env_module(tmp)


def commit(sha, msg, ts, files):
    return {"sha": sha, "message": msg, "timestamp": ts, "files": files}


C1 = commit("a1", "init", "2024-01-01T10:00:00", ["README.md"])
C2 = commit("a2", "add parser", "2024-02-01T10:00:00", ["parser.py"])
C3 = commit("b3", "fix docs", "2024-03-01T10:00:00", ["docs.md", "README.md"])


def world(key: str) -> dict:
    repo = {
        key: "/work/proj",
        "files": [
            {"file": "parser.py", "staged": True, "modified": False},
            {"file": "notes.txt", "staged": False, "modified": True},
            {"file": "setup.cfg", "staged": True, "modified": True},
        ],
        "branches": [
            {"branch_name": "main", "current": True, "commits": [C1, C2]},
            {"branch_name": "docs", "current": False, "commits": [C1, C3]},
        ],
    }
    return {"entities": {"Repo": {"/work/proj": repo}}, "globals": {"now": "2025-01-15T12:00:00", "commits_made": 0}}


def repo_of(env) -> dict:
    return env.state["entities"]["Repo"]["/work/proj"]


def files(env) -> dict:
    return {f["file"]: (f["staged"], f["modified"]) for f in repo_of(env)["files"]}


@pytest.fixture(scope="module")
def git():
    return build(GIT)


def test_every_git_tool_is_modelled_not_logged(git):
    decl, text, _ = git
    assert len(decl.tools) == 12
    assert "@conservative" not in text and "ActionLog" not in text
    kinds = {t.name: [a for a in t.annotations if a != "conservative"][0] for t in decl.tools}
    assert {n for n, k in kinds.items() if k == "update"} == {"git_add", "git_reset", "git_commit", "git_create_branch", "git_checkout"}


def test_reset_unstages_all_staged_changes(git):
    env = git[2].Env(world("repo_path"))
    r = env.step("git_reset", {"repo_path": "/work/proj"})
    assert not isinstance(r, ToolError), r
    # staged changes go back to the working tree; nothing stays staged
    assert files(env) == {"parser.py": (False, True), "notes.txt": (False, True), "setup.cfg": (False, True)}
    again = env.step("git_reset", {"repo_path": "/work/proj"})
    assert isinstance(again, ToolError) and "nothing is staged" in again.message


def test_add_stages_named_files_and_refuses_unknown_paths(git):
    env = git[2].Env(world("repo_path"))
    r = env.step("git_add", {"repo_path": "/work/proj", "files": ["notes.txt"]})
    assert not isinstance(r, ToolError), r
    assert files(env) == {"parser.py": (True, False), "notes.txt": (True, False), "setup.cfg": (True, True)}
    before = copy.deepcopy(env.state)
    bad = env.step("git_add", {"repo_path": "/work/proj", "files": ["nope.py"]})
    assert isinstance(bad, ToolError) and "did not match" in bad.message
    assert env.state == before


def test_commit_records_staged_files_on_head(git):
    env = git[2].Env(world("repo_path"))
    c = env.step("git_commit", {"repo_path": "/work/proj", "message": "ship it"})
    assert c == {"sha": "c1", "message": "ship it", "timestamp": "2025-01-15T12:00:00", "files": ["parser.py", "setup.cfg"]}
    main = repo_of(env)["branches"][0]
    assert [x["sha"] for x in main["commits"]] == ["a1", "a2", "c1"]
    assert [x["sha"] for x in repo_of(env)["branches"][1]["commits"]] == ["a1", "b3"]
    # committed files leave the index; a file that also had unstaged edits keeps them
    assert files(env) == {"notes.txt": (False, True), "setup.cfg": (False, True)}
    log = env.step("git_log", {"repo_path": "/work/proj", "max_count": 2})
    assert [x["sha"] for x in log] == ["c1", "a2"]
    nothing = env.step("git_commit", {"repo_path": "/work/proj", "message": "again"})
    assert isinstance(nothing, ToolError) and "nothing to commit" in nothing.message


def test_reads_status_diffs_log_show_branch(git):
    env = git[2].Env(world("repo_path"))
    h = env.state_hash()
    assert [f["file"] for f in env.step("git_diff_staged", {"repo_path": "/work/proj"})] == ["parser.py", "setup.cfg"]
    assert [f["file"] for f in env.step("git_diff_unstaged", {"repo_path": "/work/proj"})] == ["notes.txt", "setup.cfg"]
    assert env.step("git_status", {"repo_path": "/work/proj"})["files"] == repo_of(env)["files"]
    # main and docs share a1; main has a2 (parser.py), docs has b3 (docs.md, README.md)
    assert env.step("git_diff", {"repo_path": "/work/proj", "target": "docs"}) == ["README.md", "docs.md", "parser.py"]
    assert env.step("git_diff", {"repo_path": "/work/proj", "target": "a1"}) == ["parser.py"]
    assert env.step("git_show", {"repo_path": "/work/proj", "revision": "b3"}) == C3
    assert [x["sha"] for x in env.step("git_log", {"repo_path": "/work/proj", "start_timestamp": "2024-01-15"})] == ["a2"]
    names = lambda r: [b["branch_name"] for b in r]  # noqa: E731
    assert names(env.step("git_branch", {"repo_path": "/work/proj", "branch_type": "local"})) == ["main", "docs"]
    assert env.step("git_branch", {"repo_path": "/work/proj", "branch_type": "remote"}) == []
    assert names(env.step("git_branch", {"repo_path": "/work/proj", "branch_type": "all", "contains": "b3"})) == ["docs"]
    assert names(env.step("git_branch", {"repo_path": "/work/proj", "branch_type": "all", "not_contains": "b3"})) == ["main"]
    assert env.state_hash() == h


def test_create_branch_and_checkout_move_head(git):
    env = git[2].Env(world("repo_path"))
    b = env.step("git_create_branch", {"repo_path": "/work/proj", "branch_name": "feature", "base_branch": "docs"})
    assert b == {"branch_name": "feature", "current": False, "commits": [C1, C3]}
    dup = env.step("git_create_branch", {"repo_path": "/work/proj", "branch_name": "main"})
    assert isinstance(dup, ToolError) and "already exists" in dup.message
    env.step("git_checkout", {"repo_path": "/work/proj", "branch_name": "feature"})
    assert [(x["branch_name"], x["current"]) for x in repo_of(env)["branches"]] == [("main", False), ("docs", False), ("feature", True)]
    assert [x["sha"] for x in env.step("git_log", {"repo_path": "/work/proj"})] == ["b3", "a1"]
    missing = env.step("git_checkout", {"repo_path": "/work/proj", "branch_name": "ghost"})
    assert isinstance(missing, ToolError)


def test_second_source_openapi_vcs_service():
    """Other names, a request body, other wording: the same model and the same semantics."""
    decl, text, module = build(VCS)
    assert "@conservative" not in text
    assert "entity Repo key repository" in text
    env = module.Env(world("repository"))
    r = env.step("clear_index", {"repository": "/work/proj"})
    assert not isinstance(r, ToolError), r
    assert files(env) == {"parser.py": (False, True), "notes.txt": (False, True), "setup.cfg": (False, True)}
    env.step("stage_paths", {"repository": "/work/proj", "body": {"paths": ["notes.txt"]}})
    c = env.step("make_commit", {"repository": "/work/proj", "body": {"summary": "notes"}})
    assert c["files"] == ["notes.txt"] and c["message"] == "notes"
    assert [x["sha"] for x in env.step("commit_history", {"repository": "/work/proj", "limit": 1})] == ["c1"]
    env.step("new_branch", {"repository": "/work/proj", "body": {"name": "topic"}})
    env.step("switch_branch", {"repository": "/work/proj", "body": {"branch_name": "topic"}})
    assert [x["sha"] for x in env.step("commit_history", {"repository": "/work/proj"})] == ["c1", "a2", "a1"]


def test_not_a_repository_without_staging_and_commits():
    """Tools that only mention branches (no staging, no commit) are left to the CRUD rules."""
    from forgec import ir
    from forgec.synth.shape_repo import claim

    S = ir.Type(kind="string")
    env = ir.Environment(name="x", tools=(
        ir.Tool(name="create_branch", description="Creates a new branch office.", params=(ir.Param(name="repo", type=S, required=True), ir.Param(name="name", type=S, required=True))),
    ))
    assert claim(env, frozenset()) is None
