"""The `read` stage: tool documentation files -> `forgec.ir.Environment`s + diagnostics.

    envs, diags = read_paths(["docs/"])            # every env, sorted by name
    tools, diags = read_file("docs/airline.json")   # one file

Formats are detected per file from content (JSON, YAML, JSON Lines; OpenAI,
MCP tools/list, OpenAPI 3.x, Swagger 2.0, BFCL). Naming: a file is one
environment named by its stem; in a folder argument each direct child file is
one environment and each direct child subfolder is one (its files merged,
named by the subfolder). A file with a generic name (tools.json, api.yaml,
openapi.json, ...) takes its parent folder's name. Problems never raise: they
come back as diagnostics and the other files are still read.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path

from forgec.diagnostics import INTERNAL, Diagnostic, Span, error, warning
from forgec.ir import Environment, PolicyDoc, Tool, Type

from . import codes
from .detect import read_doc
from .loader import DOC_SUFFIXES, load_file
from forgec.lang.confine import within

__all__ = ["read_paths", "read_file", "env_name_for", "normalize_env_name", "GENERIC_STEMS"]

# file stems that say nothing about the domain: such a file takes its folder's name
GENERIC_STEMS = frozenset(
    {
        "tools", "tool", "tools_list", "tool_list", "list_tools", "tools_list_result",
        "functions", "function", "function_docs", "functions_list",
        "api", "apis", "api_spec", "openapi", "openapi_spec", "swagger", "spec", "schema", "index", "mcp",
    }
)


# Markdown or text beside the tool docs is a policy or manual page (tau-bench's wiki.md, a product's help page);
# a repository's own files about itself are not
POLICY_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
_NOT_POLICY = re.compile(r"^(readme|license|licence|copying|notice|changelog|changes|history|contributing|authors|"
                         r"security|code_of_conduct|requirements)\b", re.I)
POLICY_MAX_BYTES = 1_000_000  # a policy page is prose a person wrote; a bigger file is a dump, not read


def is_policy_file(p: Path) -> bool:
    return p.suffix.lower() in POLICY_SUFFIXES and not _NOT_POLICY.match(p.name) and not p.name.startswith(".")


def normalize_env_name(name: str) -> str:
    """Lowercase; runs of non-alphanumerics -> `_`; must not start with a digit or be a keyword."""
    s = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not s:
        return ""
    if s[0].isdigit():
        s = "env_" + s
    if keyword.iskeyword(s):
        s += "_"
    return s


def env_name_for(path: Path) -> str:
    """A file's environment name: its stem, or its folder's name when the stem is generic."""
    stem = normalize_env_name(path.stem)
    if stem in GENERIC_STEMS or not stem:
        parent = normalize_env_name(path.resolve().parent.name)
        if parent:
            return parent
    return stem or "env"


@dataclass
class _FileResult:
    tools: list[Tool] = field(default_factory=list)
    definitions: dict[str, Type] = field(default_factory=dict)
    diags: list[Diagnostic] = field(default_factory=list)


def _read(path: Path) -> _FileResult:
    file = str(path)
    res = _FileResult()
    try:
        doc, res.diags = load_file(path)
        if doc is None:
            return res
        res.tools = [_param_docs_from_description(t) for t in read_doc(doc, res.diags, res.definitions)]
    except RecursionError:
        res.tools = []
        res.diags.append(error(codes.SCHEMA_TOO_DEEP, "the document nests too deeply to be read", Span(file), help="real tool docs nest a few levels; check how the file was generated"))
    except Exception as e:  # noqa: BLE001 - a bug must not hide the other files' results
        res.tools = []
        res.diags.append(error(INTERNAL, f"reading this file crashed forgec: {type(e).__name__}: {e}", Span(file), help="this is a bug in forgec; please report it with the file"))
    return res


def _dedupe(tools: list[Tool], diags: list[Diagnostic]) -> list[Tool]:
    """Keep the first tool of each name; later ones are reported and dropped."""
    first: dict[str, Tool] = {}
    out: list[Tool] = []
    for t in tools:
        prev = first.get(t.name)
        if prev is None:
            first[t.name] = t
            out.append(t)
            continue
        s = t.source
        span = Span(s.file, s.line, s.col, pointer=s.pointer) if s else None
        # a warning: the first definition is kept and the env builds (a published spec with a repeated operationId is
        # a doc defect a reader survives, not a reason to build nothing)
        d = warning(codes.DUPLICATE_TOOL, f"tool `{t.name}` is defined twice; this definition is dropped", span, help="rename one of the tools or remove the duplicate")
        if prev.source is not None:
            d = Diagnostic(d.severity, d.code, d.message, d.span, d.help, (f"first defined at {prev.source}",))
        diags.append(d)
    return out


def _param_docs_from_description(t: Tool) -> Tool:
    """Give an undescribed parameter the clause the tool's own description says of it ("source: the
    identifier, URL, citation text, or file path. ... attach_mode: 'auto' (default) attaches ..."):
    many MCP servers document parameters only there, and what a value means is read from its doc."""
    # no doc, or only the schema's title ("Embedding Function Name" for `embedding_function_name`): the name again
    bare = [p for p in t.params if re.sub(r"[\W_]+", "", (p.description or "").lower()) in ("", re.sub(r"[\W_]+", "", p.name.lower()))]
    if not bare or not t.description:
        return t
    names = "|".join(re.escape(p.name) for p in t.params)
    marks = list(re.finditer(rf"(?:^|(?<=[\s(;.,]))({names})\s*(?::|=|—|–|\s-\s)\s*", t.description))
    # a docstring's Args block gives each parameter its own line: there only a line's opening name ends the clause
    # before it ("status: New status — want_to_read, reading, or finished" keeps its list)
    starts = [m for m in marks if not t.description[:m.start()].rsplit("\n", 1)[-1].strip()]
    if len(starts) >= 2:
        marks = starts
    said: dict[str, tuple[bool, str]] = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(t.description)
        clause = " ".join(t.description[m.end():end].split()).strip(" ;,")
        # "source: the identifier ..." opening a sentence beats "from any source: DOI, ..." inside one
        line = t.description[:m.start()].rsplit("\n", 1)
        opens = m.start() == 0 or t.description[:m.start()].rstrip().endswith((".", ";", "(", "\n")) or (len(line) == 2 and not line[1].strip())
        if clause and (m.group(1) not in said or (opens and not said[m.group(1)][0])):
            said[m.group(1)] = (opens, clause[:300])
    titled = {p.name for p in bare if (p.description or "").strip()}  # a schema title is replaced only by an Args line
    said = {k: v for k, (o, v) in said.items() if o or k not in titled}
    if not any(p.name in said for p in bare):
        return t
    params = tuple(p.model_copy(update={"description": said[p.name]}) if p in bare and p.name in said else p for p in t.params)
    return t.model_copy(update={"params": params})


def read_file(path: str | Path) -> tuple[list[Tool], list[Diagnostic]]:
    """Read one documentation file: its tools (duplicates dropped) and diagnostics."""
    res = _read(Path(path))
    tools = _dedupe(res.tools, res.diags)
    return tools, res.diags


def _doc_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in DOC_SUFFIXES and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def _inside(f: Path, folder: Path, diags: list[Diagnostic]) -> bool:
    """True when `f` (found in `folder`) resolves inside it; a symlink out of the folder is reported and not read."""

    if within(f, [folder]):
        return True
    diags.append(warning(codes.LINK_OUTSIDE, f"{f} is a symlink that leads outside {folder}; it is not read", Span(str(f)),
                         help="name the file itself on the command line to read it"))
    return False


def _group(paths: list[str | Path], diags: list[Diagnostic], policies: dict[str, list[Path]] | None = None) -> dict[str, list[Path]]:
    """Doc files by environment name; policy pages (`is_policy_file`) go into `policies` under the env they sit
    beside: a subfolder's pages to the subfolder's env, a top-level page to the env of the same name, else to
    the only env read from that folder's own files."""
    groups: dict[str, list[Path]] = {}
    policies = {} if policies is None else policies
    loose: list[tuple[Path, list[str] | None]] = []  # a top-level page and the envs its folder's own files made

    def add_policy(name: str, f: Path) -> None:
        lst = policies.setdefault(name, [])
        if f not in lst:
            lst.append(f)

    def add(name: str, f: Path) -> None:
        lst = groups.setdefault(name, [])
        if f not in lst:
            lst.append(f)

    for arg in paths:
        p = Path(arg)
        if p.is_file() and is_policy_file(p):
            loose.append((p, None))  # named on the command line: a page beside the docs, or (with none) a doc to read
        elif p.is_file():
            add(env_name_for(p), p)
        elif p.is_dir():
            found = False
            here: list[str] = []
            pages: list[Path] = []
            try:
                children = sorted(p.iterdir())
            except OSError as e:
                diags.append(error(codes.UNREADABLE, f"cannot list folder: {e.strerror or e}", Span(str(p))))
                continue
            for child in children:
                if child.name.startswith("."):
                    continue
                if child.is_file() and child.suffix.lower() in DOC_SUFFIXES:
                    if _inside(child, p, diags):
                        add(env_name_for(child), child)
                        here.append(env_name_for(child))
                        found = True
                elif child.is_file() and is_policy_file(child):
                    if _inside(child, p, diags):
                        pages.append(child)
                elif child.is_dir():
                    try:
                        files = [f for f in _doc_files(child) if _inside(f, p, diags)]
                    except OSError as e:
                        diags.append(error(codes.UNREADABLE, f"cannot list folder: {e.strerror or e}", Span(str(child))))
                        continue
                    name = normalize_env_name(child.name) or "env"
                    for f in files:
                        add(name, f)
                    if files:
                        for f in _policy_files(child):
                            if _inside(f, p, diags):
                                add_policy(name, f)
                    found = found or bool(files)
            loose.extend((f, sorted(set(here))) for f in pages)
            if not found:
                diags.append(error(codes.NO_DOCS, "folder contains no tool documentation (.json, .yaml, .yml, .jsonl)", Span(str(p)), help="point forgec at the folder that holds the docs"))
        elif p.exists():  # a device, FIFO or socket: never read (it may not end)
            diags.append(error(codes.UNREADABLE, f"not a regular file or folder: {p}", Span(str(p))))
        else:
            diags.append(error(codes.PATH_NOT_FOUND, f"no such file or folder: {p}", Span(str(p)), help="check the path"))
    if not groups:  # `forgec inspect notes.txt`: no tool docs at all, so a named page is read as one (and its format said)
        for f, here in loose:
            if here is None:
                add(env_name_for(f), f)
        loose = [(f, here) for f, here in loose if here is not None]
    for f, here in loose:
        here = here or []
        own = env_name_for(f)
        name = own if own in groups else (here[0] if len(here) == 1 else None)
        if name is None and not here and len(groups) == 1:
            name = next(iter(groups))  # `forgec compile tools.json wiki.md`: the one env read
        if name is None:
            where = f"the environments {', '.join(here or sorted(groups))}" if (here or groups) else "no environment"
            diags.append(warning(codes.POLICY_UNMATCHED, f"policy page {f.name} sits beside {where}; no environment reads it",
                                 Span(str(f)), help=f"name it after its env ({(here or sorted(groups) or ['env'])[0]}.md) or move it into that env's folder"))
            continue
        add_policy(name, f)
    return groups


def _policy_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and is_policy_file(p) and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def _read_policy(f: Path, diags: list[Diagnostic]) -> PolicyDoc | None:
    """A policy page's text; an unreadable, oversized or non-UTF-8 page is a warning and is left out."""
    try:
        raw = f.read_bytes()
    except OSError as e:
        diags.append(warning(codes.UNREADABLE, f"cannot read policy page: {e.strerror or e}", Span(str(f))))
        return None
    if len(raw) > POLICY_MAX_BYTES:
        diags.append(warning(codes.UNREADABLE, f"policy page is {len(raw):,} bytes (over {POLICY_MAX_BYTES:,}); not read", Span(str(f)),
                             help="keep the rules a person wrote; move data dumps out of the docs folder"))
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        diags.append(warning(codes.NOT_UTF8, f"policy page is not UTF-8 (byte {e.start}); not read", Span(str(f)), help="save it as UTF-8"))
        return None
    return PolicyDoc(file=str(f), text=text.replace("\r\n", "\n")) if text.strip() else None


def read_paths(paths: list[str | Path], env_name: str | None = None) -> tuple[list[Environment], list[Diagnostic]]:
    """Read files and folders into environments (sorted by name) and diagnostics.

    `env_name` puts every tool read into one environment of that name.
    """
    diags: list[Diagnostic] = []
    policies: dict[str, list[Path]] = {}
    groups = _group(paths, diags, policies)
    if env_name is not None:
        name = normalize_env_name(env_name)
        if not name:
            diags.append(error(codes.INVALID_ENV_NAME, f"--env {env_name!r} is not usable as an environment name", None, help="use letters, digits and `_`, e.g. --env shop"))
        else:
            merged: list[Path] = []
            for files in groups.values():
                merged.extend(f for f in files if f not in merged)
            groups = {name: merged}
            policies = {name: sorted({f for fs in policies.values() for f in fs})}
    envs: list[Environment] = []
    cache: dict[Path, _FileResult] = {}
    for name in sorted(groups):
        files = sorted(groups[name])
        tools: list[Tool] = []
        defs: dict[str, Type] = {}
        for f in files:
            res = cache.get(f)
            if res is None:
                res = cache[f] = _read(f)
                diags.extend(res.diags)
            tools.extend(res.tools)
            for k, v in res.definitions.items():
                defs.setdefault(k, v)
        tools = _dedupe(tools, diags)
        if tools:
            pages = tuple(d for d in (_read_policy(f, diags) for f in sorted(policies.get(name, []))) if d is not None)
            envs.append(Environment(name=name, tools=tuple(tools), definitions=defs, sources=tuple(str(f) for f in files), policy=pages))
    return envs, diags
