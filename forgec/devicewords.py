"""Device controls in the user's voice: a boolean or enum argument said as the act it stands for.

Singleton device/session envs (a car, a home hub, a drone) have writes like
`lockDoors(unlock: bool)`, `setCruiseControl(activate: bool)`, `armMotors(armed: bool)`,
`activateParkingBrake(mode: "engage"|"release")`. "unlock on" or "activate off" is no sentence a
person says, and the lowering's said-check could not find a bool in the goal at all. Here a
bool/enum value becomes the docs' own verb ("Locks or unlocks the given doors" -> "lock the
doors"; "Turns cruise control on or off" -> "turn cruise control off"; "true starts recording" ->
"start recording video"), and `bool_said` is the matching check: a bool is said when a word of
its polarity for that parameter is in the goal.
"""

from __future__ import annotations

import re
from typing import Any

from forgec.english import OPPOSITE, verb_base as _base

# a verb and its opposite; either side may be the parameter's own word (unlock, armed, muted)
_OPP = OPPOSITE


def _stem(w: str) -> str:
    """'unlocks' -> 'unlock', 'armed' -> 'arm', 'recording' -> 'record', 'enabled' -> 'enable'."""
    w = w.lower()
    base = w if w in _OPP else _base(w)
    return base if base in _OPP else w


def _words(name: str) -> list[str]:
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[^A-Za-z]+", s.lower()) if w]


def _first_sentence(doc: str) -> str:
    return re.split(r"(?<=[a-z0-9)])\.(?:\s|$)", (doc or "").strip(), maxsplit=1)[0].strip()


def _own(name: str) -> str | None:
    return next((w for w in (_stem(x) for x in _words(name)) if w in _OPP), None)


def bool_verb(name: str, value: bool, pdoc: str = "", tdoc: str = "") -> str | None:
    """The verb (or on/off particle) a person uses for `name = value`: None when the docs give none.
    'true starts recording' -> start/stop; `unlock` -> unlock/lock; `activate` on a control
    described 'on or off' -> on/off."""
    if not isinstance(value, bool):
        return None
    verb = None
    for pol, flip in (("true", False), ("false", True)):
        m = re.search(rf"\b{pol}\b\s*(?:=|:|-)?\s*(?:to\s+|will\s+)?([a-z]+)", pdoc or "", re.I)
        if m:
            v = _stem(_base(m.group(1)))
            if v in _OPP:
                verb = v if (value != flip) else _OPP[v]
                break
    own = _own(name)
    if verb is None and own is not None:
        verb = own if value else _OPP[own]
    pair = _doc_pair(tdoc)
    if verb is None and pair:
        w = next((w for w in (_stem(x) for x in _words(name)) if w in pair), None)
        if w is not None:
            verb = w if value else next(x for x in pair if x != w)
    if verb is None and pair and pair[0] in _POLAR and _POLAR[pair[0]] != _POLAR.get(pair[1], _POLAR[pair[0]]):
        verb = next(x for x in pair if _POLAR[x] is value)  # "Start or stop recording video", recording: bool
    onoff = re.search(r"\bon or off\b|\bon/off\b", (tdoc or "") + " " + (pdoc or ""), re.I) is not None
    if onoff and (verb is None or verb in _POLAR):
        pos = value if verb is None else _POLAR[verb]
        return "on" if pos else "off"
    return verb


def _doc_pair(tdoc: str) -> tuple[str, str] | None:
    """'Locks or unlocks the given doors' -> ('lock', 'unlock')."""
    m = re.match(r"\s*([A-Za-z]+) or ([A-Za-z]+)\b", _first_sentence(tdoc))
    if not m:
        return None
    return _stem(_base(m.group(1))), _stem(_base(m.group(2)))


def control_object(tdoc: str) -> tuple[str, str] | None:
    """(verb phrase head, object) of a device control's description: 'Locks or unlocks the given
    doors of the car.' -> ('', 'the doors of the car'); 'Turn the thermostat on or off.' ->
    ('turn', 'the thermostat'); 'Switches the headlights.' -> ('switch', 'the headlights')."""
    s = _first_sentence(tdoc)
    s = re.split(r" (?:at|to|with|for|from|in|by|using|so|when|if|while) (?:a|an|any|some|the given)\b|,|;| - ", s, maxsplit=1)[0].strip()
    m = re.match(r"([A-Za-z]+) or ([A-Za-z]+) (.+)$", s)
    if m:
        obj = m.group(3)
        head = ""
    else:
        m = re.match(r"([A-Za-z]+) (.+?)(?: on or off| on/off)?$", s)
        if not m:
            return None
        head, obj = _base(m.group(1)), m.group(2)
    obj = re.sub(r"\b(the|a|an) given\b", r"\1", obj)
    obj = re.sub(r"^(?:given|selected|specified) ", "the ", obj)
    if len(obj.split()) > 6 or re.search(r"[`_(){}\[\]]", obj):
        return None
    return head, obj


def control_phrase(tdoc: str, scalars: list[tuple[str, Any, str]]) -> tuple[str, set[str]] | None:
    """A device control said as a person would: `scalars` is (param, value, param doc) of the
    write's arguments; returns (phrase, params it says) or None when the docs give no verb."""
    co = control_object(tdoc)
    if co is None:
        return None
    head, obj = co
    pair = _doc_pair(tdoc)
    for name, v, pdoc in scalars:
        verb = None
        if isinstance(v, bool):
            verb = bool_verb(name, v, pdoc, tdoc)
        elif isinstance(v, str) and re.fullmatch(r"[A-Za-z_]+", v):
            lv = _stem(v.lower())
            if pair and lv in pair:
                verb = lv
            elif lv in ("on", "off") and head:
                verb = lv
        if verb is None:
            continue
        if verb in ("on", "off"):
            if not head:
                return None
            return f"{head} {obj} {verb}", {name}
        if pair and verb not in pair and not head:
            continue
        return f"{verb} {obj}", {name}
    return None


def bool_words(name: str, value: bool) -> list[str]:
    """Words that say `name = value` in a goal (the check `bool_said` uses): the name's own verb
    or its opposite, and on/off by its polarity."""
    own = _own(name)
    if own is None:
        return []
    w = own if value else _OPP[own]
    out = [w]
    if w in _POLAR:
        out.append("on" if _POLAR[w] else "off")
    return out


_POLAR = {"on": True, "enable": True, "activate": True, "start": True, "arm": True, "engage": True, "open": True, "show": True,
          "connect": True, "allow": True, "subscribe": True, "resume": True,
          "off": False, "disable": False, "deactivate": False, "stop": False, "disarm": False, "release": False, "close": False,
          "hide": False, "disconnect": False, "block": False, "unsubscribe": False, "pause": False}


def bool_said(goal: str, name: str, value: bool) -> bool:
    """Whether the goal says `name = value`: the parameter's own verb or its opposite (unlock /
    lock), else a verb of that polarity (on, enable, start, arm...)."""
    low = goal.lower()
    toks = {_stem(w) for w in re.findall(r"[a-z]+", low)}
    want = bool_words(name, value)
    if want:
        return any(w in toks for w in want)
    return any(_POLAR.get(w) is value for w in toks)


def fold_said(phrase: str, said: list[str]) -> tuple[str, list[str]]:
    """'lock the doors of the car' + 'the rear left door' -> 'lock the rear left door of the car':
    a value naming the object's own noun takes the object's place."""
    rest = []
    for s in said:
        m = re.fullmatch(r"the ((?:[a-z]+ )+?)([a-z]+)", s)
        if m:
            noun = m.group(2)
            pat = re.compile(rf"\bthe (?:[a-z]+ )?{re.escape(noun)}s?\b")
            if pat.search(phrase):
                phrase = pat.sub(s, phrase, count=1)
                continue
        rest.append(s)
    return phrase, rest


_UNITS = [(r"km/h|kilometers per hour", "km/h"), (r"mph|miles per hour", "mph"), (r"°c|celsius|centigrade|degrees?", "degrees"),
          (r"°f|fahrenheit", "degrees Fahrenheit"), (r"meters|metres", "meters"), (r"feet", "feet"), (r"gallons", "gallons"),
          (r"liters|litres", "liters"), (r"percent", "percent")]


def unit_of(name: str, pdoc: str, tdoc: str) -> str | None:
    """The unit a number is said in ("Hover altitude in meters" -> meters; "Target in °C" ->
    degrees; the tool's "between 16 and 30 degrees" for its temperature): the parameter's doc
    first, else a sentence of the tool's doc that names the parameter."""
    texts = [pdoc or ""]
    words = [w for w in _words(name) if len(w) > 2]
    texts += [s for s in re.split(r"(?<=\.)\s+", tdoc or "") if words and any(re.search(rf"\b{w}", s.lower()) for w in words)]
    for t in texts:
        low = t.lower()
        for pat, unit in _UNITS:
            if re.search(rf"(?<![\w/])(?:{pat})(?![\w/])", low):
                return unit
    return None
