"""One tool that does several acts, chosen by an argument: split into one tool per act behind one served name.

Many MCP servers fold a resource's operations into one tool: `motion_tasks(operation: create | list | get | update |
delete, ...)`, `manage_contact(action: create | update | delete, ...)`. Read as one tool, nothing names its act, so
every such tool only logged its calls (Motion's ten tools: 0 tasks). Here each documented act becomes a tool of its
own (`create_motion_tasks`, `delete_contact`) that every later stage reads like any other, while agents still see
and call the docs' one tool: each part carries `@wire("motion_tasks")` and `@case("operation=create")`; codegen
serves the parts as one tool with the selector's values and routes a call by its selector (runtime.envrt
`case_dispatch`), and gold calls name the selector.

Which parameters an act takes is read from the docs' own words, per parameter ("Task ID (required for
get/update/delete)", "Options to create (action=create)", "Required for: create") and per act in the tool's text
("create: needs note_text"); a parameter the docs tie to no act goes to the acts that create a record or edit its data
(not to one that moves, reopens or archives it) and to every act where the schema requires it. Why no library: no schema or MCP library models this
convention; it is the docs' prose that states it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from forgec import ir
from forgec.lang import ast as A
from forgec.english import LIGHT_VERBS, OPPOSITE

from .names import tokens
from .schema import CREATE_VERBS, DELETE_VERBS, READ_VERBS, SEARCH_VERBS, UPDATE_VERBS

# the names docs give the argument that picks a tool's act; `method` and `mode` are left out: an HTTP method or a
# write mode (`rewrite | append`) is data the one act takes, not a choice between acts
SELECTOR_PARAMS = frozenset({"action", "operation", "op", "command"})
# the verbs that change a record's data as such: a parameter the docs tie to no act goes to these and to creates, not
# to "reopen", "move" or "archive", which do one thing to a record
_EDIT_VERBS = frozenset({"update", "edit", "modify", "change", "set", "patch", "replace", "upsert", "save", "configure"})
_ACT_VERBS = CREATE_VERBS | UPDATE_VERBS | DELETE_VERBS | READ_VERBS | SEARCH_VERBS


def _kind(value: str) -> str:
    """What an act does, by its first word: `list_all_uncompleted` reads, `create` creates, `move` updates."""
    head = (tokens(value) or [""])[0]
    for kind, verbs in (("read", READ_VERBS | SEARCH_VERBS), ("create", CREATE_VERBS), ("delete", DELETE_VERBS), ("update", UPDATE_VERBS)):
        if head in verbs:
            return kind
    return "other"


def selector(tool: ir.Tool) -> ir.Param | None:
    """The parameter whose documented values are the tool's acts, where the tool is one that does several: named
    `action`/`operation`/`op`/`command`, two or more string values of which two start with a verb of acts on records,
    not one act and its opposite (`archive | unarchive` is one flag, set either way), and on a tool whose own name
    holds no verb but a light one (`mark_email(action: read | unread)` marks; `manage_contact` does what it is told)."""
    toks = tokens(tool.name)
    names = [t for t in toks if not _light(t)]
    if toks[:1] and _light(toks[0]):
        pass  # `manage_issue_relation`: what follows the light verb is what it manages ("issue" is a noun there)
    elif any(t in _ACT_VERBS for t in names[:1]) or any(t in _ACT_VERBS - {"post", "record", "new", "open", "check", "issue"} for t in names[1:]):
        return None
    for p in tool.params:
        vals = p.type.values
        if p.name.lower() not in SELECTOR_PARAMS or p.type.kind not in ("enum", "string") or len(vals) < 2 or not all(isinstance(v, str) and v for v in vals):
            continue
        if sum(1 for v in vals if (tokens(v) or [""])[0] in _ACT_VERBS) < 2:
            continue
        heads = [(tokens(v) or [""])[0] for v in vals]
        if len(vals) == 2 and (heads[1] == "un" + heads[0] or heads[0] == "un" + heads[1] or OPPOSITE.get(heads[0]) == heads[1]):
            continue
        if len(set(map(str.lower, vals))) == len(vals):
            return p
    return None


def _light(tok: str) -> bool:
    """`manage`, `management`: a word that names no act of its own."""
    return tok in LIGHT_VERBS or (tok.endswith("ment") and tok[:-4] in LIGHT_VERBS) or (tok.endswith("ment") and tok[:-4] + "e" in LIGHT_VERBS)


def _value_rx(v: str) -> str:
    """A documented value as it is written in prose: `list_all_uncompleted`, `add-to-project` or "add to project"."""
    parts = [re.escape(t) for t in re.split(r"[_\-\s]+", v) if t]
    return r"[_\-\s]?".join(parts)


class _Reader:
    """Which acts the docs tie each parameter to, and where they say it is required."""

    def __init__(self, tool: ir.Tool, sel: ir.Param):
        self.tool, self.sel = tool, sel
        self.values = [str(v) for v in sel.type.values]
        alt = "|".join(sorted((_value_rx(v) for v in self.values), key=len, reverse=True))
        one = rf"['\"`]*(?:{re.escape(sel.name)}\s*=\s*)?['\"`]*(?:{alt})['\"`]*"  # ``create``, action="create"
        self.one = re.compile(rf"(?<![\w-])(?:{alt})(?![\w-])", re.I)
        # a list of acts: "get/update/delete", "create, update, or delete", "'update' and 'delete'"
        acts = rf"{one}(?:\s*(?:/|,|\band\b|\bor\b|&)\s*(?:\band\b|\bor\b)?\s*{one})*"
        self.tied = re.compile(
            rf"(?:\b(?:for|on|by|with|in|during|when)\s*:?\s+(?:the\s+|an?\s+)?(?:{re.escape(sel.name)}s?\s*=\s*)?(?P<a>{acts})"
            rf"|\b{re.escape(sel.name)}\s*=\s*(?P<b>{acts})|\((?P<c>{acts})\)|(?P<d>{acts})\s+only\b"
            rf"|(?<![\w-])(?P<e>{acts})\s*:)", re.I)
        self.required = re.compile(rf"\brequired\s+(?:for|by|with|when|on|in)\s*:?\s+(?:the\s+|an?\s+)?(?P<a>{acts})", re.I)
        # "(required for all actions)", "Required for all actions except ``list``"
        self.every = re.compile(rf"\b(?P<req>required\s+)?for\s+(?:all|every|each)\s+(?:{re.escape(sel.name)}s?|actions?|operations?)"
                                rf"(?:\s+(?:except|but)\s+(?P<x>{acts}))?", re.I)
        self.ignored = re.compile(rf"\b(?:ignored|unused|not\s+used|not\s+needed)\s+(?:for|by|with|on|in)\s+(?:the\s+)?(?P<a>{acts})", re.I)

    def _acts(self, text: str) -> set[str]:
        found = {m.group(0).lower() for m in self.one.finditer(text)}
        return {v for v in self.values if any(re.fullmatch(_value_rx(v), f, re.I) for f in found)}

    def ties(self, text: str) -> tuple[set[str], set[str], set[str]]:
        """(acts the text ties a parameter to, acts it requires it for, acts it says ignore it)."""
        tied: set[str] = set()
        for m in self.tied.finditer(text):
            tied |= self._acts(next(g for g in m.groups() if g is not None))
        req: set[str] = set()
        for m in self.required.finditer(text):
            if not re.match(r"\s*(?:if|unless|when|where)\b", text[m.end():], re.I):  # "Required for create if issue_id is not given"
                req |= self._acts(m.group("a"))
        ign: set[str] = set()
        for m in self.ignored.finditer(text):
            ign |= self._acts(m.group("a"))
        for m in self.every.finditer(text):
            acts = set(self.values) - (self._acts(m.group("x")) if m.group("x") else set())
            tied |= acts
            req |= acts if m.group("req") else set()
        return tied | req, req, ign

    def per_act_text(self) -> dict[str, str]:
        """The tool's own text after each act it names as a label: "create: workspaceId + name + field. delete:
        fieldId" -> {"create": "workspaceId + name + field.", "delete": "fieldId"}."""
        text = self.tool.description or ""
        alt = "|".join(sorted((_value_rx(v) for v in self.values), key=len, reverse=True))
        marks = list(re.finditer(rf"(?<![\w-])['\"`]?(?:{alt})['\"`]?\s*:(?!//)", text, re.I))
        out: dict[str, str] = {}
        for i, m in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            if (ex := re.search(r"\bExamples?\s*:|\be\.g\.", text[m.end():end])):
                end = m.end() + ex.start()  # "delete: moves it to the Trash. Example: (action='create', note_text=...)"
            for v in self._acts(m.group(0)):
                out[v] = out.get(v, "") + " " + text[m.end():end]
        return out


def _members(tool: ir.Tool, sel: ir.Param) -> dict[str, list[tuple[ir.Param, bool]]]:
    """act -> [(param, required)] in the docs' order."""
    rd = _Reader(tool, sel)
    per_act = rd.per_act_text()
    out: dict[str, list[tuple[ir.Param, bool]]] = {v: [] for v in rd.values}
    for p in tool.params:
        if p is sel:
            continue
        tied, req, ign = rd.ties(p.description or "")
        # the tool's text may tie it instead: "item_key: the parent's key for action='create', the note's own for
        # 'update'", "create: needs note_text"
        pname = re.compile(rf"(?<![\w-]){re.escape(p.name)}(?![\w-])")
        for sent in re.split(r"(?<=[.;])\s+|\n+", tool.description or ""):
            if re.match(rf"\s*{re.escape(p.name)}\s*[:\u2014-]", sent):
                t2, r2, _ = rd.ties(sent)
                tied |= t2
                req |= r2
        tied |= {v for v, txt in per_act.items() if pname.search(txt)}
        # "create: needs note_text", "delete: requires fieldId"
        req |= {v for v, txt in per_act.items() if re.search(rf"\b(?:needs|requires|required)\s*:?\s+(?:an?\s+|the\s+)?`?{re.escape(p.name)}(?![\w-])", txt)}
        if re.search(r"\balternative\s+to\b|\b(?:exactly\s+)?one\s+of\b", p.description or "", re.I):
            req = set()  # "workspaceName (alternative to workspaceId). Required for: list": one of the two is
        for v in rd.values:
            if v in ign:
                continue
            if tied:
                if v in tied:
                    out[v].append((p, p.required or v in req))
            elif p.required or _kind(v) == "create" or (tokens(v) or [""])[0] in _EDIT_VERBS:
                out[v].append((p, p.required))
    return out


def act_text(doc: str, param: str, values: list[str], v: str, served: str) -> str:
    """What act `v` of the docs' tool `served` (whose `param` picks one of `values`) does, in words: the act and the
    tool's own name for what it acts on ("Create motion tasks.", from `motion_tasks` and `create`), then the docs'
    sentences naming it or naming no act as a label or a tie. A sentence that names several acts ("Create, update,
    or delete a contact", "Manage tasks - supports create, list and get") is about the docs' tool, not this act:
    every later stage would read its first verb as the act's."""
    rd = _Reader(ir.Tool(name="t", description=doc), ir.Param(name=param, type=ir.Type(kind="enum", values=tuple(values))))
    keep = []
    for sent in re.split(r"(?<=[.!?])\s+", (doc or "").strip()):
        if len(rd._acts(" ".join(m.group(0) for m in rd.one.finditer(sent)))) >= 2 and not rd.tied.search(sent):
            continue
        tied = set()
        for m in rd.tied.finditer(sent):
            tied |= rd._acts(next(g for g in m.groups() if g is not None))
        if not tied or v in tied:
            keep.append(sent)
    lead = " ".join(tokens(v) + _stem(served, values))
    return " ".join([lead[:1].upper() + lead[1:] + "."] + keep).strip()


def _stem(name: str, values: list[str]) -> list[str]:
    """The words of a tool's name that say what it acts on: `manage_contact` -> contact, `motion_tasks` -> motion
    tasks (its light verb and its acts' own words out)."""
    acts = {x for v in values for x in tokens(v)}
    base = [w for w in tokens(name) if not _light(w)]
    return [w for w in base if w not in acts] or base or tokens(name)


def acts_view(env: A.EnvDecl) -> A.EnvDecl:
    """`env` as the sampler and the gate read it: each act of a split tool (`@case`) documented by its own text,
    not by the docs' whole tool text its `.forge` doc keeps (what agents read)."""
    groups: dict[str, list[str]] = {}
    for t in env.tools:
        if (c := A.tool_case(t)) is not None:
            groups.setdefault(A.tool_wire_name(t), []).append(c[1])
    if not groups:
        return env
    tools = []
    for t in env.tools:
        c = A.tool_case(t)
        tools.append(t if c is None else replace(t, doc=act_text(t.doc or "", c[0], groups[A.tool_wire_name(t)], c[1], A.tool_wire_name(t))))
    return replace(env, tools=tuple(tools))


def split_cases(env: ir.Environment) -> ir.Environment:
    """`env` with each tool that does several acts replaced by one tool per act, in the docs' order."""
    tools: list[ir.Tool] = []
    changed = False
    taken = {t.name for t in env.tools}
    for t in env.tools:
        sel = selector(t)
        if sel is None:
            tools.append(t)
            continue
        changed = True
        rd = _Reader(t, sel)
        members = _members(t, sel)
        stem = _stem(t.name, rd.values)
        for v in rd.values:
            name = "_".join(tokens(v) + stem)
            while name in taken:
                name += "_case"
            taken.add(name)
            # a parameter this act needs has no default for it ("create: needs note_text", `note_text: str | null = null`)
            params = tuple(p.model_copy(update={"required": True, "has_default": False, "default": None, "type": p.type.model_copy(update={"nullable": False})})
                           if req and not p.required else p.model_copy(update={"required": req}) for p, req in members[v])
            tools.append(t.model_copy(update={
                "name": name,
                "wire_name": t.wire_name or t.name,
                "description": act_text(t.description or "", sel.name, rd.values, v, t.name),
                "params": params,
                "annotations": {**t.annotations, "case": {"param": sel.name, "value": v, "doc": t.description or ""}},
            }))
    return env.model_copy(update={"tools": tuple(tools)}) if changed else env
