"""What the simulator shapes (device, account) share: doc words, prose rules, a checked claim.

A simulator's state is a handful of named values (`state { engine_mode, fuel_level }`) and
its tools read their preconditions from sentences ("the brake pedal must be pressed", "the
tank holds 50 gallons", "between 16 and 30 degrees"). The sentence readers here turn such a
sentence into a condition over a state value; the shapes decide which value it names.
The model is written as `.forge` text (what a person editing the env reads) and checked
before it is claimed: a template that does not check is a bug in the shape, raised loudly.
"""

from __future__ import annotations

import json
import re

from forgec import ir
from forgec.english import singular

from .names import ident, snake, tokens
from .shapes import Claim
from .shape_kit import forge_claim

ID_WORDS = {"id", "ids", "uuid", "key"}

# state words: a value is "on" (running, pressed, locked, ...) or "off"
ON = {"on", "start", "started", "starting", "running", "run", "active", "activate", "activated", "engage", "engaged",
      "enable", "enabled", "open", "opened", "pressed", "press", "locked", "lock", "true", "flying", "armed", "up", "heat"}
OFF = {"off", "stop", "stopped", "inactive", "deactivate", "deactivated", "release", "released", "disengage", "disengaged",
       "disable", "disabled", "close", "closed", "unlocked", "unlock", "idle", "landed", "land", "false", "down", "disarmed", "parked"}


def q(s: str) -> str:
    """A `.forge` string literal."""
    return json.dumps(" ".join((s or "").split()), ensure_ascii=False)


def num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.;!?])\s+", " ".join((text or "").split())) if s.strip()]


def words(text: str) -> list[str]:
    return [singular(w) for w in re.findall(r"[a-z0-9]+", snake(text or "").replace("_", " ").lower())]


SCALAR = ("string", "integer", "number", "boolean", "enum")


def has_id_param(t: ir.Tool) -> bool:
    """A param naming a record (an id, a key, a structured value): not one device's control.
    A request body of scalar fields (OpenAPI) is the control's arguments."""
    def bad(p_name: str, ty: ir.Type) -> bool:
        if set(tokens(p_name)) & ID_WORDS or ty.kind in ("ref", "union"):
            return True
        return ty.kind == "object" and (not ty.fields or any(f.type.kind not in SCALAR or bad(f.name, f.type) for f in ty.fields))
    return any(bad(p.name, p.type) for p in t.params)


def forge_type(t: ir.Type | None) -> str:
    """The forge spelling of a scalar/list IR type (`any` for what a simulator does not model)."""
    if t is None:
        return "any"
    k = t.kind
    if k == "enum":
        if t.values and all(isinstance(v, str) for v in t.values):
            return "enum(" + ", ".join(q(v) for v in t.values) + ")"
        return "int" if all(isinstance(v, int) for v in t.values) else "float"
    if k == "array":
        return f"list[{forge_type(t.items)}]"
    if k == "object" and t.fields:
        return "{" + ", ".join(f"{ident(f.name)}: {forge_type(f.type)}{'' if f.required else '?'}" for f in t.fields) + "}"
    if k == "union":
        rest = [v for v in t.variants if v.kind != "null"]
        return forge_type(rest[0]) if len(rest) == 1 else "any"
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}.get(k, "any")


def param_text(p: ir.Param) -> str:
    """One documented parameter in `.forge` syntax (wire name, type, default, doc)."""
    t = forge_type(p.type)
    out = f"{ident(p.name)}: {t}"
    if p.has_default and isinstance(p.default, (str, int, float, bool)) and not (isinstance(p.default, str) and t in ("int", "float", "bool")):
        out += f" = {json.dumps(p.default)}"
    elif not p.required:
        out = f"{ident(p.name)}: {t}? = null"
    return f"{out} {q(p.description or p.name.replace('_', ' '))}"


def signature(t: ir.Tool) -> str:
    return f"{ident(t.name)}({', '.join(param_text(p) for p in t.params)})"


def ranges(text: str, bare: bool = False) -> list[tuple[float, float, str]]:
    """"between 16 and 30", "from 0 to 100", "range: 10 to 32" -> (lo, hi, sentence);
    `bare` (a parameter's own doc) also reads "0 to 1"."""
    out = []
    lead = r"(?:between|from|range:?|range of)\s+" if not bare else r"(?:(?:between|from|range:?|range of)\s+)?"
    for s in sentences(text):
        for m in re.finditer(lead + r"(-?\d+(?:\.\d+)?)\s*(?:\([^)]*\)\s*)?(?:[a-z°%]+\s+)?(?:and|to|-)\s+(-?\d+(?:\.\d+)?)", s.lower()):
            lo, hi = float(m.group(1)), float(m.group(2))
            if lo < hi:
                out.append((lo, hi, s))
    return out


def caps(text: str) -> list[tuple[float, str]]:
    """"cannot exceed 50", "holds 50 gallons", "at most 120", "up to 120" -> (cap, sentence)."""
    out = []
    pat = r"(?:cannot|can't|can not|must not|may not)\s+(?:go\s+)?(?:exceed|be more than|go above|be above|be greater than)|at most|up to|no more than|maximum(?: of)?|capacity(?: of)?|holds"
    for s in sentences(text):
        for m in re.finditer(rf"(?:{pat})\s+(?:the\s+)?(?:[a-z ]+?\s+of\s+)?(\d+(?:\.\d+)?)", s.lower()):
            out.append((float(m.group(1)), s))
    return out


def positive(text: str) -> bool:
    return bool(re.search(r"\b(greater|more|larger) than (zero|0)\b|\bpositive\b", (text or "").lower()))


def state_word(w: str) -> str | None:
    """"on" / "off" for a state adjective (pressed, running, locked / released, stopped)."""
    w = w.lower()
    return "on" if w in ON else "off" if w in OFF else None


def requirements(text: str) -> list[tuple[str, str, str, str | None]]:
    """(subject words, state adjective, sentence, the action it guards) for each stated precondition:
    "the brake pedal must be pressed", "only possible while the thermostat is on",
    "the engine must be running to turn it on", "to start it, all doors must be locked"."""
    out = []
    for s in sentences(text):
        low = s.lower()
        guard = None
        g = re.search(r"\b(?:to|before)\s+(start|starting|open|opening|turn(?:ing)?(?: it| them)? on|activat\w*|enabl\w*|engag\w*|unlock\w*|lock\w*|take off|takeoff)\b", low)
        if g:
            guard = g.group(1)
        pats = [
            r"((?:the |all |every |all the |both )?[a-z][a-z ]*?)\s+(?:must|has to|have to|needs? to|should)\s+be\s+([a-z]+)",
            r"(?:only|works|possible|allowed)\s+(?:possible\s+|works\s+)?(?:while|when|if)\s+((?:the |all )?[a-z][a-z ]*?)\s+(?:is|are)\s+([a-z]+)",
            r"(?:requires|needs)\s+((?:the |all )?[a-z][a-z ]*?)\s+to\s+be\s+([a-z]+)",
        ]
        for p in pats:
            for m in re.finditer(p, low):
                subj, adj = m.group(1).strip(), m.group(2)
                subj = re.sub(r"^(?:to \w+(?: it| them)?,?\s+)", "", subj)
                if state_word(adj) or adj in ("pressed", "locked", "running"):
                    out.append((subj, adj, s, guard))
                # "... must be landed and its motors armed": one more subject per "and"
                for extra in re.finditer(r"\band (?:its |the |all |all the )?([a-z][a-z ]*?)\s+(?:(?:is|are|be)\s+)?([a-z]+ed|on|off|open|closed)\b", low[m.end():]):
                    if re.search(r"\b(must|has to|have to|needs? to|should)\b", extra.group(0)):
                        break  # its own "must be": the patterns above read it
                    if state_word(extra.group(2)) or extra.group(2) in ("pressed", "locked"):
                        out.append((extra.group(1).strip(), extra.group(2), s, guard))
    return out


def claim_from_text(shape: str, text: str, claimed: dict[str, str], file: str) -> Claim:
    """Parse and check the shape's env text; the Claim for the tools in `claimed` (shape_kit's)."""

    return forge_claim(shape, text, claimed, file)


def cited(c: Claim, cites: dict[str, tuple]) -> Claim:
    """Each claimed tool with its citations (`// from: "..."` above the statement a sentence gave)."""
    from dataclasses import replace

    for name, notes in cites.items():
        if name in c.tools and notes:
            c.tools[name] = replace(c.tools[name], notes=tuple((i, " ".join(why.split())) for i, why in notes))
    return c
