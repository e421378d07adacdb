"""Policy and manual pages (Markdown or text beside the tool docs) -> the sentences that speak of each tool.

A policy page (tau-bench's `wiki.md`, a product's help page) states rules the tool docs leave out: what
may be cancelled when, what a change sets the status to, what can be done only once. Those sentences are
read by the same prose reader as a tool's description (forgec/synth/prose.py), so they become
preconditions and effects cited in env.forge exactly like the description's own.

Which tool a sentence speaks of is taken from the page's structure, not from a word list: a manual
groups its rules under headings that name an operation ("## Cancel pending order", "### Modify items"
under "## Modify pending order"), and a heading names a tool when its words are the words of the tool's
name (inflections matched by `english.stem`). A section applies to the tools its heading path matches
best, and only when the heading's first word (the operation's verb) is one of the tool's words or is
the verb of exactly one tool. Sentences outside such a section (the page's preamble, "Domain basics")
are not attached to any tool: they stay prose the agent reads at eval time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from forgec import ir
from forgec.english import stem

from . import prose

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")  # "Renewing a loan" over a line of === (level 1) or --- (level 2)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# words of a heading that say nothing of the operation
_FILLER = frozenset("a an the of for to and or in on by with your our my their policy policies rules rule section".split())


@dataclass(frozen=True)
class Section:
    """The sentences under one heading, with the headings above it (outermost first)."""

    path: tuple[str, ...]
    sentences: tuple[str, ...]


def sections(text: str) -> list[Section]:
    """A Markdown (or plain) page cut at its headings; bullets and paragraphs become sentences."""
    out: list[Section] = []
    path: list[tuple[int, str]] = []
    para: list[str] = []
    sents: list[str] = []

    def flush_para() -> None:
        if para:
            sents.extend(prose.sentences(" ".join(para)))
            para.clear()

    def close() -> None:
        flush_para()
        if sents:
            out.append(Section(tuple(h for _, h in path), tuple(sents)))
            sents.clear()

    def open_heading(level: int, title: str) -> None:
        close()
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, title))

    for line in text.splitlines():
        m = _HEADING.match(line)
        if m:
            open_heading(len(m.group(1)), m.group(2).strip())
            continue
        u = _SETEXT.match(line)
        if u and len(para) == 1:
            title = para.pop()
            open_heading(1 if u.group(1)[0] == "=" else 2, title)
            continue
        if not line.strip():
            flush_para()
            continue
        if _BULLET.match(line):
            flush_para()
            line = _BULLET.sub("", line)
        para.append(line.strip())
    close()
    return out


def _stems(phrase: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(re.sub(r"(?<=[a-z])(?=[A-Z])|_", " ", phrase)) if w.lower() not in _FILLER]


def rules_for(env: ir.Environment) -> dict[str, tuple[str, ...]]:
    """tool name -> the policy sentences of the sections whose headings name that tool (in page order)."""
    return sections_by_tool([p.text for p in env.policy], [t.name for t in env.tools])


def sections_by_tool(texts: list[str], tool_names: list[str]) -> dict[str, tuple[str, ...]]:
    """`rules_for` on plain page texts and tool names (the sampler has the env AST and the pages' text)."""
    names = {t: _stems(t) for t in tool_names}
    verbs: dict[str, list[str]] = {}
    for t, ws in names.items():
        if ws:
            verbs.setdefault(ws[0], []).append(t)
    out: dict[str, list[str]] = {}
    for text in texts:
        for sec in sections(text):
            if not sec.path:
                continue
            head = _stems(sec.path[-1])
            if not head:
                continue
            words = set(head) | {w for h in sec.path[:-1] for w in _stems(h)}
            scored = []
            for t, ws in names.items():
                mine = set(ws)
                if head[0] not in mine and verbs.get(head[0]) != [t]:
                    continue  # the heading's operation is another tool's (or no tool's)
                if not set(head) <= mine and verbs.get(head[0]) != [t]:
                    continue  # "Cancel flight" is cancel_reservation only when it is the one cancel tool
                scored.append((len(words & mine), t))
            if not scored:
                continue
            best = max(sc for sc, _ in scored)
            for sc, t in scored:
                if sc == best:
                    out.setdefault(t, []).extend(sec.sentences)
    return {t: tuple(s) for t, s in sorted(out.items())}


def facts_for(env: ir.Environment) -> dict[str, tuple[prose.Fact, ...]]:
    """tool name -> the facts its policy sentences state (prose.read_sentence on each)."""
    return {t: tuple(f for s in sents for f in prose.read_sentence(s)) for t, sents in rules_for(env).items()}


# a sentence that limits what a tool may do ("can only", "cannot", "must have enough balance", "only if")
_RESTRICTS = re.compile(r"\b(?:only|cannot|can't|can not|must|mustn't|may not|not allowed|never|no more than|at most|unless)\b", re.I)
# what the prose reader turns into a precondition (forgec/synth/prose.py)
_CHECKED = frozenset({"require", "forbid", "once", "same", "bound", "owns"})


def unmodelled(texts: list[str], tool_names: list[str]) -> dict[str, tuple[str, ...]]:
    """tool -> the policy sentences that restrict it but that the prose reader made no precondition of
    ("basic economy flights can be cancelled only if travel insurance is bought", "the refund must either go
    to the original payment method, or an existing gift card"). A gold path through such a tool may break a
    rule the env does not check, so the sampler leaves the tool out of the writes it asks for and says so
    (review 59: 6 of 6 airline cancellations broke the wiki's rules)."""
    out = {}
    for tool, sents in sections_by_tool(texts, tool_names).items():
        loose = tuple(s for s in sents if _RESTRICTS.search(s) and not any(f.kind in _CHECKED for f in prose.read_sentence(s)))
        if loose:
            out[tool] = loose
    return out


def strongest(sentences: tuple[str, ...]) -> str:
    """The sentence that limits most plainly ("can only", "cannot") before one that asks a step ("must first")."""
    return next((s for s in sentences if re.search(r"\b(?:only|cannot|can't|can not|may not|not allowed|never|at most|no more than)\b", s, re.I)),
                sentences[0])
