"""What one act of a docs' tool that does several says, read from the docs' words (forgec/synth/cases.py splits such
tools; the sampler and the gate read each act by `acts_view`). Apart from cases.py because the sampler and the gate
import it, and cases.py reads the synthesizer's verb lexicon (forgec.synth.schema), which imports them in turn."""

from __future__ import annotations

import re
from dataclasses import replace

from forgec import ir
from forgec.english import LIGHT_VERBS
from forgec.lang import ast as A

from .names import tokens


def is_light(tok: str) -> bool:
    """`manage`, `management`: a word that names no act of its own."""
    return tok in LIGHT_VERBS or (tok.endswith("ment") and tok[:-4] in LIGHT_VERBS) or (tok.endswith("ment") and tok[:-4] + "e" in LIGHT_VERBS)


def value_pattern(v: str) -> str:
    """A documented value as it is written in prose: `list_all_uncompleted`, `add-to-project` or "add to project"."""
    parts = [re.escape(t) for t in re.split(r"[_\-\s]+", v) if t]
    return r"[_\-\s]?".join(parts)


class ActReader:
    """Which acts the docs tie each parameter to, and where they say it is required."""

    def __init__(self, tool: ir.Tool, sel: ir.Param):
        self.tool, self.sel = tool, sel
        self.values = [str(v) for v in sel.type.values]
        alt = "|".join(sorted((value_pattern(v) for v in self.values), key=len, reverse=True))
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

    def acts(self, text: str) -> set[str]:
        found = {m.group(0).lower() for m in self.one.finditer(text)}
        return {v for v in self.values if any(re.fullmatch(value_pattern(v), f, re.I) for f in found)}

    def ties(self, text: str) -> tuple[set[str], set[str], set[str]]:
        """(acts the text ties a parameter to, acts it requires it for, acts it says ignore it)."""
        tied: set[str] = set()
        for m in self.tied.finditer(text):
            tied |= self.acts(next(g for g in m.groups() if g is not None))
        req: set[str] = set()
        for m in self.required.finditer(text):
            if not re.match(r"\s*(?:if|unless|when|where)\b", text[m.end():], re.I):  # "Required for create if issue_id is not given"
                req |= self.acts(m.group("a"))
        ign: set[str] = set()
        for m in self.ignored.finditer(text):
            ign |= self.acts(m.group("a"))
        for m in self.every.finditer(text):
            acts = set(self.values) - (self.acts(m.group("x")) if m.group("x") else set())
            tied |= acts
            req |= acts if m.group("req") else set()
        return tied | req, req, ign

    def per_act_text(self) -> dict[str, str]:
        """The tool's own text after each act it names as a label: "create: workspaceId + name + field. delete:
        fieldId" -> {"create": "workspaceId + name + field.", "delete": "fieldId"}."""
        text = self.tool.description or ""
        alt = "|".join(sorted((value_pattern(v) for v in self.values), key=len, reverse=True))
        marks = list(re.finditer(rf"(?<![\w-])['\"`]?(?:{alt})['\"`]?\s*:(?!//)", text, re.I))
        out: dict[str, str] = {}
        for i, m in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            if (ex := re.search(r"\bExamples?\s*:|\be\.g\.", text[m.end():end])):
                end = m.end() + ex.start()  # "delete: moves it to the Trash. Example: (action='create', note_text=...)"
            for v in self.acts(m.group(0)):
                out[v] = out.get(v, "") + " " + text[m.end():end]
        return out


def act_text(doc: str, param: str, values: list[str], v: str, served: str) -> str:
    """What act `v` of the docs' tool `served` (whose `param` picks one of `values`) does, in words: the act and the
    tool's own name for what it acts on ("Create motion tasks.", from `motion_tasks` and `create`), then the docs'
    sentences naming it or naming no act as a label or a tie. A sentence that names several acts ("Create, update,
    or delete a contact", "Manage tasks - supports create, list and get") is about the docs' tool, not this act:
    every later stage would read its first verb as the act's."""
    rd = ActReader(ir.Tool(name="t", description=doc), ir.Param(name=param, type=ir.Type(kind="enum", values=tuple(values))))
    keep = []
    for sent in re.split(r"(?<=[.!?])\s+", (doc or "").strip()):
        if len(rd.acts(" ".join(m.group(0) for m in rd.one.finditer(sent)))) >= 2 and not rd.tied.search(sent):
            continue
        tied = set()
        for m in rd.tied.finditer(sent):
            tied |= rd.acts(next(g for g in m.groups() if g is not None))
        if not tied or v in tied:
            keep.append(sent)
    lead = " ".join(tokens(v) + stem_words(served, values))
    return " ".join([lead[:1].upper() + lead[1:] + "."] + keep).strip()


def stem_words(name: str, values: list[str]) -> list[str]:
    """The words of a tool's name that say what it acts on: `manage_contact` -> contact, `motion_tasks` -> motion
    tasks (its light verb and its acts' own words out)."""
    acts = {x for v in values for x in tokens(v)}
    base = [w for w in tokens(name) if not is_light(w)]
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
