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

from forgec import ir
from forgec.english import OPPOSITE, singular

from .acts import ActReader, act_text, is_light, stem_words
from .names import tokens
from .schema import CREATE_VERBS, DELETE_VERBS, READ_VERBS, SEARCH_VERBS, UPDATE_VERBS, id_stem

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
    names = [t for t in toks if not is_light(t)]
    if toks[:1] and is_light(toks[0]):
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


def _members(tool: ir.Tool, sel: ir.Param) -> dict[str, list[tuple[ir.Param, bool]]]:
    """act -> [(param, required)] in the docs' order."""
    rd = ActReader(tool, sel)
    per_act = rd.per_act_text()
    own = [t for t in tokens(tool.name) if not is_light(t)]  # the record the tool manages (`manage_project`: project)
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
        stem = id_stem(p.name)
        own_key = stem is not None and not stem[1] and [singular(w) for w in stem[0]] == [singular(w) for w in own]
        for v in rd.values:
            if v in ign:
                continue
            if tied:
                if v in tied:
                    out[v].append((p, p.required or v in req))
            elif p.required or (_kind(v) == "create" and not own_key) or (tokens(v) or [""])[0] in _EDIT_VERBS:
                out[v].append((p, p.required))  # (a new project has no `projectId` to give: the system makes it)
            elif own_key and tokens(v) not in (["create"], ["list"], ["search"], ["find"]) and not tokens(v)[-1:] == ["templates"]:
                # `manage_project(action, projectId)`: the project acted on, for every act on one ("get", "delete",
                # "close", "add_item"); before, "delete" took no argument at all and only logged (GitHub Projects: 119 tools)
                out[v].append((p, True))
    return out


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
        rd = ActReader(t, sel)
        members = _members(t, sel)
        stem = stem_words(t.name, rd.values)
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
