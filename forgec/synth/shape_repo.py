"""Shape: a version-controlled repository (working tree, staging area, commits, branches, HEAD).

Recognized when the docs describe staging and committing: a tool that stages files ("adds
file contents to the staging area", "stage the given paths") or unstages them, and a tool
that records a commit. The claimed tools are those whose prose names one of the operations
below; parameters are read by role (the repository, the file list, the message, a branch
name, a revision), never by one API's spelling.

The state, per repository (one `Repo` record keyed by the documented repository param):

* `files`: the working tree files that differ from HEAD or the index — `staged` (changes in
  the index, what the next commit records), `modified` (changes in the working tree not yet
  staged). A file may be both.
* `branches`: name, `current` (HEAD is the first current branch; the first branch when none
  is marked) and its commits (oldest first; `sha`, message, timestamp, files changed).
* globals: `now` (commit timestamps; there is no clock) and a commit counter for new shas.

Semantics (git's, as the docs word them): add stages the named files (a name not in the
working tree is refused: "did not match any files"); reset unstages every staged change
(it becomes an unstaged change again); commit records the staged files as a new commit on
HEAD (nothing staged: refused) and clears `staged`; the unstaged/staged diffs list the files
with such changes; the diff against a branch lists the files changed by commits on one side
only, against a commit the files changed on HEAD after it; log is HEAD's commits newest
first (optionally within ISO timestamps, at most `max` of them); create_branch copies the
base's (default: HEAD's) commits under a new unique name; checkout makes the named branch
the only current one; show returns one commit by sha; the branch list names the branches
(there are no remotes: a remote-only listing is empty).
"""

from __future__ import annotations

import re

from forgec import ir

from .names import ident
from .shape_kit import forge_claim, prim, q, quoted_choices, signature
from .shapes import Claim

STATE = """
  state {
    now: str = "2025-01-15T12:00:00" "the time new commits are stamped with (there is no clock)"
    commits_made: int = 0 "commits recorded so far (numbers the shas of new commits)"
  }
  record WorkFile "A working tree file that differs from HEAD or the index." {
    file: str "path relative to the repository root"
    staged: bool "has changes in the index (recorded by the next commit)"
    modified: bool "has changes in the working tree that are not yet staged"
  }
  record CommitInfo "One commit." {
    sha: str "commit id"
    message: str
    timestamp: str "ISO 8601"
    files: list[str] "files the commit changed"
  }
  record BranchInfo "A branch: its commits, oldest first." {
    branch_name: str
    current: bool "HEAD points here (the first current branch; the first branch when none is)"
    commits: list[CommitInfo]
  }
  entity Repo key {key} "A repository: working tree, staging area, branches and commits." {
    {key}: str
    files: list[WorkFile]
    branches: list[BranchInfo]
  }
"""

HEAD = """
    require len(repo.branches) > 0 else "the repository has no branch"
    let heads = repo.branches where it.current
    let head = first(repo.branches)
    if len(heads) > 0 { let head = first(heads) }"""

# role -> (annotation, return type, body); {x} placeholders are the role variables bound by `let`
BODIES = {
    "status": ("read", "Repo", "\n    return repo"),
    "diff_unstaged": ("read", "list[WorkFile]", "\n    return repo.files where it.modified"),
    "diff_staged": ("read", "list[WorkFile]", "\n    return repo.files where it.staged"),
    "add": ("update", "Repo", """
    let known = map(repo.files, it.file)
    for f in files {
      require f in known else "a pathspec did not match any files"
    }
    set repo.files = map(repo.files, {file: it.file, staged: it.staged or (it.modified and it.file in files), modified: it.modified and it.file not in files})
    return repo"""),
    "reset": ("update", "Repo", """
    require len(repo.files where it.staged) > 0 else "nothing is staged"
    set repo.files = map(repo.files, {file: it.file, staged: false, modified: it.modified or it.staged})
    return repo"""),
    "commit": ("update", "CommitInfo", HEAD + """
    let staged = map(repo.files where it.staged, it.file)
    require len(staged) > 0 else "nothing to commit (no staged changes)"
    let sha = "c" + str(state.commits_made + 1)
    let c = {sha: sha, message: message, timestamp: state.now, files: staged}
    set state.commits_made = state.commits_made + 1
    let i = 0
    for b in repo.branches {
      if b.branch_name == head.branch_name { set repo.branches[i].commits = b.commits + [c] }
      let i = i + 1
    }
    set repo.files = repo.files where it.modified
    set repo.files = map(repo.files, {file: it.file, staged: false, modified: true})
    return c"""),
    "log": ("read", "list[CommitInfo]", HEAD + """
    let out = []
    for c in sorted(head.commits, it.timestamp, desc: true) {
      if {LOGCOND} {
        let out = out + [c]
      }
    }
    return out"""),
    "create_branch": ("update", "BranchInfo", HEAD + """
    require len(repo.branches where it.branch_name == name) == 0 else "a branch with that name already exists"
    let base_branch = head
    if base != null {
      let found = repo.branches where it.branch_name == base
      require len(found) > 0 else "base branch not found"
      let base_branch = first(found)
    }
    let b = {branch_name: name, current: false, commits: base_branch.commits}
    set repo.branches = repo.branches + [b]
    return b"""),
    "checkout": ("update", "BranchInfo", """
    let found = repo.branches where it.branch_name == name
    require len(found) > 0 else "branch not found"
    set repo.branches = map(repo.branches, {branch_name: it.branch_name, current: it.branch_name == name, commits: it.commits})
    return first(repo.branches where it.branch_name == name)"""),
    "show": ("read", "CommitInfo", """
    let found = []
    for b in repo.branches {
      let found = found + (b.commits where it.sha == rev)
    }
    require len(found) > 0 else "unknown revision"
    return first(found)"""),
    "diff": ("read", "list[str]", HEAD + """
    let ours = map(head.commits, it.sha)
    let changed = []
    let other = repo.branches where it.branch_name == rev
    if len(other) > 0 {
      let theirs = map(first(other).commits, it.sha)
      let only_theirs = first(other).commits where it.sha not in ours
      let only_ours = head.commits where it.sha not in theirs
      let changed = only_theirs + only_ours
    } else {
      let at = head.commits where it.sha == rev
      require len(at) > 0 else "unknown revision"
      let changed = head.commits where it.timestamp > first(at).timestamp
    }
    let out = []
    for c in changed {
      for f in c.files {
        if f not in out { let out = out + [f] }
      }
    }
    return sorted(out)"""),
    "branches": ("read", "list[BranchInfo]", """
    let bs = repo.branches
    {SCOPE}
    let out = []
    for b in bs {
      let shas = map(b.commits, it.sha)
      if {BRCOND} { let out = out + [b] }
    }
    return out"""),
}

ROLE_VARS = {
    "add": ("files",), "commit": ("message",), "create_branch": ("name", "base"), "checkout": ("name",),
    "show": ("rev",), "diff": ("rev",), "log": ("limit", "since", "until"), "branches": ("scope", "has", "hasnt"),
}

# role -> prose patterns over "name words + description" (lowercased); first match wins, in order
ROLES: list[tuple[str, str]] = [
    ("diff_unstaged", r"\b(shows?|diff|list|view|inspect)\b.*(not (yet )?staged|\bunstaged\b)"),
    ("reset", r"\bunstag(e|es|ing)\b|\breset\b.*\b(index|stag)"),
    ("diff_staged", r"\b(shows?|diff|list|view|inspect)\b.*\bstaged\b|\bstaged (changes|for commit)\b.*\b(shows?|diff|list)"),
    ("add", r"\b(adds?|stages?)\b.*\b(staging area|index|next commit)\b"),
    ("status", r"\bworking tree status\b|\bstatus of the (working tree|repository|worktree)\b"),
    ("commit", r"\brecords? changes\b|\b(create|make|record)s? (a |the )?(new )?commit\b"),
    ("create_branch", r"\b(creates?|new)\b.*\bbranch\b"),
    ("checkout", r"\b(switch(es)?|check ?out)\b.*\bbranch|\bswitch(es)? branches\b"),
    ("log", r"\bcommit (logs?|history)\b|\blog\b"),
    ("show", r"\b(shows?|get|returns?)\b.*\b(contents?|details?) of a commit\b|\bshows?\b.*\bcommit\b"),
    ("diff", r"\bdifferen(ce|t)s?\b.*\b(branch|commit|ref)|\bcompare\b.*\b(branch|ref|commit)"),
    ("branches", r"\blist\b.*\bbranch"),
]

REPO_PARAM = re.compile(r"(^|_)(repo|repository|project|workdir|worktree)(_|$)", re.I)


def _text(t: ir.Tool) -> str:
    return (" ".join(t.name.replace("-", "_").split("_")) + ". " + (t.description or "")).lower()


def role_of(t: ir.Tool) -> str | None:
    """The repository operation a tool's prose names (None: not a repository operation)."""
    txt = _text(t)
    for role, pat in ROLES:
        if re.search(pat, txt):
            return role
    return None


class _Cand:
    """A value a tool receives: a parameter, or a field of a request-body object parameter."""

    def __init__(self, name: str, type_: ir.Type | None, expr: str, description: str = ""):
        self.name, self.type, self.expr, self.description = name, type_, expr, description


def _cands(ps: list[ir.Param]) -> list[_Cand]:
    out = []
    for p in ps:
        if p.type is not None and p.type.kind == "object" and p.type.fields:
            out += [_Cand(f.name, f.type, f"{ident(p.name)}.{ident(f.name)}", f.description) for f in p.type.fields]
        else:
            out.append(_Cand(p.name, p.type, ident(p.name), p.description))
    return out


def _pick(cands: list[_Cand], pat: str, kinds: tuple[str, ...] = ("string",)) -> _Cand | None:
    for c in cands:
        if re.search(pat, c.name, re.I) and c.type is not None and c.type.kind in kinds:
            return c
    return None


def _roles(tool: ir.Tool, role: str) -> dict[str, _Cand | None] | None:
    """The values by the part they play; None when a needed one is missing."""
    ps = list(tool.params)
    repo = next((p for p in ps if REPO_PARAM.search(p.name) and p.type is not None and p.type.kind == "string"), None)
    if repo is None:
        return None
    rest = _cands([p for p in ps if p is not repo])
    r: dict[str, _Cand | None] = {"repo": _Cand(repo.name, repo.type, ident(repo.name), repo.description)}
    if role == "add":
        r["files"] = next((c for c in rest if c.type is not None and c.type.kind == "array" and c.type.items is not None and c.type.items.kind == "string"), None)
        if r["files"] is None:
            return None
    elif role == "commit":
        r["message"] = _pick(rest, r"message|msg|summary|subject")
        if r["message"] is None:
            return None
    elif role in ("create_branch", "checkout"):
        r["name"] = _pick(rest, r"^(branch(_name)?|name|new_branch|branch_?name)$") or _pick(rest, r"branch|name")
        if r["name"] is None:
            return None
        r["base"] = _pick([c for c in rest if c is not r["name"]], r"base|from|start|source") if role == "create_branch" else None
    elif role in ("show", "diff"):
        r["rev"] = _pick(rest, r"rev|target|ref|sha|commit|against")
        if r["rev"] is None:
            return None
    elif role == "log":
        r["limit"] = _pick(rest, r"max|count|limit|^n$", ("integer",))
        r["since"] = _pick(rest, r"start|since|after|from")
        r["until"] = _pick(rest, r"end|until|before|to$")
    elif role == "branches":
        r["scope"] = _pick(rest, r"type|kind|scope|where")
        r["has"] = _pick(rest, r"^contains$|^containing$|^with_commit$")
        r["hasnt"] = _pick(rest, r"not_contains|without|excluding")
    return r


def _obj_type(t: ir.Type) -> str:
    """An inline record type for a request-body object (optional fields stay optional)."""
    fs = []
    for f in t.fields:
        ft = prim(f.type)
        fs.append(f"{ident(f.name)}: {ft}{'' if f.required or ft.endswith('?') else '?'}")
    return "{" + ", ".join(fs) + "}"


def claim(env: ir.Environment, taken: frozenset[str]) -> Claim | None:
    found: dict[str, tuple[ir.Tool, str, dict]] = {}
    for t in env.tools:
        if t.name in taken:
            continue
        role = role_of(t)
        if role is None:
            continue
        r = _roles(t, role)
        if r is not None:
            found[t.name] = (t, role, r)
    roles = {v[1] for v in found.values()}
    # the shape is a repository only when its docs stage changes and record commits
    if not (roles & {"add", "reset", "diff_staged"}) or "commit" not in roles:
        return None
    key = ident(next(iter(found.values()))[2]["repo"].name)
    parts = [STATE.replace("{key}", key)]
    names: dict[str, str] = {}
    for wire, (t, role, r) in found.items():
        ann, ret, body = BODIES[role]
        over = {r["repo"].name: "Repo"}
        for p in t.params:
            if p.type is not None and p.type.kind == "object" and p.type.fields:
                over[p.name] = _obj_type(p.type)
        if role == "branches" and r.get("scope") is not None:
            vals = quoted_choices(r["scope"].description)
            if vals:
                over[r["scope"].name] = f"enum({', '.join(q(v) for v in vals)})"
        binds = [f"\n    let repo = {r['repo'].expr}"]
        for var in ROLE_VARS.get(role, ()):
            p = r.get(var)
            if p is not None:
                binds.append(f"    let {var} = {p.expr}")
        body = _conds(body, r)
        names[wire] = ident(t.name)
        parts.append(f"  @{ann}\n  tool {signature(t, over)} -> {ret}\n    {q(t.description or t.name)}\n  {{" + "\n".join(binds) + body + "\n  }")
    text = "env repo_shape {\n" + "\n".join(parts) + "\n}\n"
    return forge_claim("repository", text, names, f"<shape:repository:{env.name}>")



def _conds(body: str, r: dict) -> str:
    """Fill the optional filters of log and the branch list with the values the tool has."""
    def opt(var: str, test: str) -> str | None:
        return None if r.get(var) is None else f"({var} == null or {test})"

    log = [c for c in (opt("since", "c.timestamp >= since"), opt("until", "c.timestamp <= until"), opt("limit", "len(out) < limit")) if c]
    br = [c for c in (opt("has", "has in shas"), opt("hasnt", "hasnt not in shas")) if c]
    scope = 'if scope != null and contains(lower(scope), "remote") { let bs = [] }' if r.get("scope") is not None else ""
    return body.replace("{LOGCOND}", " and ".join(log) or "true").replace("{BRCOND}", " and ".join(br) or "true").replace("{SCOPE}", scope)
