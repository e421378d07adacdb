"""Lifecycle verbs move a record's documented state; a document download returns its documented text.

Why: "Interrupt a kernel", "Restart a kernel", "Stop the instance", "Pause the job" name no
field and no value, so the CRUD rules found nothing and the call was only logged. Yet the
docs do describe the state: the record has a state field (`execution_state`, `status`,
`state`) whose values are listed (an enum, or quoted in its prose: "typically 'idle' or
'busy', but may be other values, such as 'starting'"). The verb says where it leads:
interrupting or stopping leaves the record idle/stopped, restarting puts it in a
starting/restarting state, pausing/suspending pauses it, starting/resuming makes it run.
The rule fires only when the verb is the tool's and one of the verb's states is a documented
value of the field; otherwise the tool keeps the conservative fallback.
"""

from __future__ import annotations

import re

from forgec.english import verb_lemma
from forgec.lang import ast as A

# verb -> the states it leads to, most specific first (the first documented one is taken)
VERB_STATES: dict[str, tuple[str, ...]] = {
    "interrupt": ("idle", "interrupted", "stopped", "ready"),
    "stop": ("stopped", "idle", "inactive", "terminated"),
    "halt": ("halted", "stopped", "idle"),
    "restart": ("restarting", "starting", "running", "active", "idle"),
    "reboot": ("rebooting", "restarting", "starting", "running", "active"),
    "start": ("running", "started", "active", "starting"),
    "resume": ("running", "active", "resumed"),
    "pause": ("paused", "suspended"),
    "suspend": ("suspended", "paused"),
}
_STATE_FIELD = re.compile(r"(^|_)(status|state)$")


def _values(f) -> list[str]:
    t = f.type.inner if isinstance(f.type, A.OptionalType) else f.type
    if isinstance(t, A.EnumType):
        return [v for v in t.values if isinstance(v, str)]
    out: list[str] = []
    for v in re.findall(r"""['"`]([A-Za-z][\w-]*)['"`]""", getattr(f, "doc", "") or ""):
        if v not in out:
            out.append(v)
    return out


def _verb(toks: list[str], desc: str) -> str | None:
    words = [t.lower() for t in toks] + re.findall(r"[a-z]+", (desc or "").lower())[:3]
    for w in words:
        if w in VERB_STATES:
            return w
        if verb_lemma(w) in VERB_STATES:  # "stops", "restarts"
            return verb_lemma(w)
    return None


def status_move(s, v, key: str) -> list[A.Stmt] | None:
    """`set rec.<state field> = "<state>"` for a lifecycle verb on the tool's target record."""
    ent = s.entities.get(v.target) if v.target else None
    if ent is None:
        return None
    verb = _verb(list(v.toks), v.tool.description)
    if verb is None:
        return None
    for name, f in ent.fields.items():
        if name == ent.key or not _STATE_FIELD.search(name):
            continue
        vals = {x.lower(): x for x in _values(f)}
        for want in VERB_STATES[verb]:
            if want in vals:
                return [A.Set(A.Attr(A.Name(key), name), A.Literal(vals[want]))]
    return None


def document_text(v) -> str | None:
    """A no-argument read of a downloadable document (a binary/file response, no entity): its
    documented description, the one value the docs give for it."""
    r = v.tool.returns
    if v.target is not None or r is None or any(p.required for p in v.tool.params):
        return None
    if r.kind not in ("string", "file") or (r.kind == "string" and r.format not in ("binary", "byte")):
        return None
    text = (r.description or v.tool.description or "").strip()
    return text or None
