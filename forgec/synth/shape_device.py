"""Singleton device or session state: one thing's controls and the signed-in user.

Docs of a vehicle (engine, doors, fuel, brakes, lights, climate, cruise control), a
thermostat, a drone or a smart-home hub describe ONE thing, addressed by no id: its tools
set its controls. CRUD rules find no entity there and fall back to logging the call. This
shape models the thing as `state { ... }` values, one per documented control:

* a setter (`setHeadlights(mode)`, `thermostat_power(on)`) stores its arguments
  (`set state.headlights_mode = mode`), within the ranges its docs state ("between 16 and 30");
* an additive control (`fillFuelTank(fuelAmount)`) adds to a level, capped where the docs give
  a capacity ("the tank holds 50 gallons": `require state.fuel_level + fuel_amount <= 50`);
* a flag over named parts (`lockDoors(unlock, door: list[driver, ...])`) keeps the set of
  parts that have it (`locked_doors`);
* a tool without arguments whose verb says on or off (`releaseBrakePedal`) resets the control
  its sibling sets; a status tool reads the state;
* a session: `login(username, ...)` sets `current_user`, `logout` clears it, `whoami` reads it,
  and "every other control needs a signed-in user" guards the other tools.

Preconditions come from sentences ("the brake pedal must be pressed", "only while the
thermostat is on", "to start it, all doors must be locked"): the subject is matched to a state
value by its words, the adjective to a value (pressed: > 0, running: the enum's on value,
locked: every part), and "to start"/"to turn it on" guards the condition to that argument value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from forgec import ir
from forgec.english import plural, singular, stem

from .names import ident, tokens
from .shape_sim import (caps, cited, claim_from_text, forge_type, has_id_param, num, positive, q, ranges,
                        requirements, sentences, signature, state_word, words)
from .shapes import Claim
from .pure import UNITS, claim as pure_claim

CONTROL = {"engine", "ignition", "door", "fuel", "tank", "brake", "pedal", "headlight", "light", "lamp", "climate", "temperature",
           "thermostat", "cruise", "parking", "drone", "altitude", "fan", "garage", "battery", "heater", "heating", "wiper",
           "window", "seat", "alarm", "speaker", "volume", "camera", "gate", "blind", "valve", "sprinkler", "oven", "vacuum",
           "tire", "gear", "horn", "sunroof", "trunk", "motor", "propeller", "gimbal", "throttle"}
VERBS = {"set", "adjust", "change", "activate", "deactivate", "press", "release", "lock", "unlock", "start", "stop", "fill",
         "refuel", "refill", "turn", "switch", "toggle", "enable", "disable", "engage", "disengage", "open", "close", "get",
         "display", "show", "report", "check", "read", "view", "pour", "add", "charge", "top", "increase", "apply", "put",
         "take", "land", "arm", "disarm", "choose", "select", "update"}
READ_WORDS = {"get", "display", "show", "report", "status", "check", "read", "view", "current", "state"}
ADD_WORDS = {"fill", "refuel", "refill", "add", "charge", "top", "increase", "pour"}
GENERIC = {"mode", "state", "status", "value", "level", "setting", "position", "option", "on", "active", "activate",
           "enabled", "enable", "speed", "unit", "action", "command", "power"}
STOP = {"the", "a", "an", "to", "of", "for", "my", "car", "vehicle", "device", "hub", "home", "smart", "it", "them", "and", "or"}
USER_WORDS = {"username", "user", "login", "email", "account", "name", "handle"}


@dataclass
class Value:
    """One state value: its name, forge type, initial literal, and the words that name it."""

    name: str
    type: str
    init: str
    doc: str
    words: set[str]
    kind: str = "value"  # value | level | parts
    flag: str = ""  # parts: the adjective the parts have ("locked")
    nparts: int = 0
    values: tuple = ()  # enum values


@dataclass
class Plan:
    tool: ir.Tool
    cls: str
    noun: list[str]
    stmts: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)  # state values it writes


def _flat(t: ir.Tool) -> list[tuple[ir.Param, str]]:
    """(param, how the body reads it): a request body object (OpenAPI) is its fields, `body.altitude`."""
    out = []
    for p in t.params:
        if p.type.kind == "object" and p.type.fields:
            for f in p.type.fields:
                fp = ir.Param(name=f.name, type=f.type, required=f.required and p.required, description=f.description or f.type.description)
                out.append((fp, f"{ident(p.name)}.{ident(f.name)}"))
        else:
            out.append((p, ident(p.name)))
    return out


def _ps(t: ir.Tool) -> list[ir.Param]:
    return [p for p, _ in _flat(t)]


def _acc(t: ir.Tool, p: ir.Param) -> str:
    return next((a for x, a in _flat(t) if x.name == p.name), ident(p.name))


def _toks(t: ir.Tool) -> list[str]:
    return [singular(w) for w in tokens(t.name)]


def _noun(t: ir.Tool) -> list[str]:
    return [w for w in _toks(t) if w not in VERBS and w not in STOP and w not in ("on", "off", "in", "out", "status")]


def session_entity(t: ir.Tool) -> str | None:
    ws = _toks(t)
    pairs = list(zip(ws, ws[1:]))
    if set(ws) & {"login", "signin", "logon", "authenticate"} or ("log", "in") in pairs or ("sign", "in") in pairs:
        return "in" if any(set(tokens(p.name)) & USER_WORDS for p in _ps(t)) else None
    if set(ws) & {"logout", "signout", "logoff"} or ("log", "out") in pairs or ("sign", "out") in pairs:
        return "out" if not [p for p in _ps(t) if p.required] else None
    if not t.params and ("whoami" in ws or ("user" in ws and set(ws) & {"current", "who", "me", "signed", "logged"})):
        return "who"
    return None


def _scalar(p: ir.Param) -> bool:
    return p.type.kind in ("string", "integer", "number", "boolean", "enum")


def _classify(t: ir.Tool) -> str | None:
    ws = set(_toks(t))
    ps = _ps(t)
    if session_entity(t):
        return "session"
    writes = ws & (VERBS - READ_WORDS) - {"set"} or "set" in ws
    if (ws & READ_WORDS or (t.name.lower().endswith("status"))) and not writes and all(p.type.kind == "enum" or not p.required for p in ps):
        return "read"
    req = [p for p in ps if p.required]
    if ws & ADD_WORDS and len(req) == 1 and req[0].type.kind in ("number", "integer"):
        return "level"
    lists = [p for p in ps if p.type.kind == "array" and p.type.items is not None and p.type.items.kind == "enum"]
    bools = [p for p in ps if p.type.kind == "boolean"]
    if len(lists) == 1 and len(bools) == 1 and len(ps) == 2:
        return "parts"
    if not ps:
        verb = next((w for w in _toks(t) if state_word(w)), None)
        return "toggle" if verb else None
    if all(_scalar(p) for p in ps):
        return "set"
    return None


def claim(env: ir.Environment, taken: frozenset) -> Claim | None:

    pure = pure_claim(env, taken)  # `convert_temperature(value, from, to)` computes; it controls nothing
    taken = taken | frozenset(pure.tools if pure else ())
    cands = [t for t in env.tools if t.name not in taken and not has_id_param(t) and not _returns_records(env, t)]
    cls = {t.name: _classify(t) for t in cands}
    control = [t for t in cands if cls[t.name] in ("set", "level", "parts", "toggle") and set(_noun(t)) & CONTROL]
    session = [t for t in cands if cls[t.name] == "session"]
    if len(control) < 2 and not ({session_entity(t) for t in session} >= {"in", "out"}):
        return None
    mine = [t for t in cands if cls[t.name] is not None and (t in control or t in session or cls[t.name] == "read" or
                                                              (cls[t.name] in ("set", "toggle") and set(_toks(t)) & (VERBS - READ_WORDS)))]
    # a parameter called `state` (a US state in `add_address`) would hide the device's state block in the body
    mine = [t.model_copy(update={"params": tuple(p.model_copy(update={"name": "state_value"}) if ident(p.name) == "state" else p for p in t.params)})
            for t in mine]
    return _model(env, mine, cls)


def _returns_records(env: ir.Environment, t: ir.Tool) -> bool:
    """Whether `t` documents its result as a list of records (Gotify's `getApps() -> [Application]`): a
    collection the CRUD rules keep, never a reading of the one device or session (review 42: a login pair made
    every list of a notification server return the signed-in user)."""
    def records(x: ir.Type | None) -> bool:
        item = env.deref(x.items) if x is not None and x.kind == "array" else None
        return item is not None and item.kind == "object" and bool(item.fields)
    r = env.deref(t.returns)  # the list itself, or a page holding it (`PagedMessages {messages: [Message], paging}`)
    return records(r) or (r is not None and r.kind == "object" and any(records(env.deref(f.type)) for f in r.fields))


# --------------------------------------------------------------------------- the model


def _value_name(noun: list[str], p: ir.Param, used: dict[str, Value]) -> str:
    pt = [singular(w) for w in tokens(p.name)]
    base = p.name  # the docs' own spelling: calls drawn from the state find it under this name

    rename = {"activate": "active", "enable": "enabled", "action": "", "command": "", "state": "", "status": ""}
    if set(pt) & set(noun):
        name = "_".join(noun) if set(pt) <= set(noun) and len(noun) > len(pt) else base
    elif noun and (all(w in GENERIC for w in pt) or (len(pt) == 1 and pt[0] in UNITS)):
        # `set_target_temperature(celsius)`: the value is the noun; `garage_door(action)`: the door
        name = "_".join(noun + [rename.get(w, w) for w in pt if rename.get(w, w) and w not in UNITS])
    else:
        name = base if base not in used else "_".join(noun + pt)
    return ident(name)


def _init_enum(vals: tuple) -> str:
    off = next((v for v in vals if isinstance(v, str) and state_word(v) == "off"), None)
    return q(off if off is not None else vals[0])


def _model(env: ir.Environment, tools: list[ir.Tool], cls: dict) -> Claim | None:
    vals: dict[str, Value] = {}
    plans: list[Plan] = []
    session = any(cls[t.name] == "session" for t in tools)
    if session:
        vals["current_user"] = Value("current_user", "str?", "null", "the signed-in user (null when nobody is)", {"user", "current", "login"})
    # 1. the values each writing tool controls
    for t in tools:
        c = cls[t.name]
        noun = _noun(t)
        plan = Plan(t, c, noun)
        plans.append(plan)
        if c == "set":
            for p in _ps(t):
                name = _value_name(noun, p, vals)
                ty = forge_type(p.type)
                init = _init_enum(p.type.values) if p.type.kind == "enum" else json_default(p, ty)
                ws = set(noun) | {singular(w) for w in tokens(p.name)}
                rng = ranges(p.description, bare=True) or [r for r in ranges(t.description) if _mentions(r[2], p, t)]
                doc = p.description or ""
                if ty in ("int", "float") and rng:
                    init = ""  # sampled worlds draw it inside the documented range (stdlib/values.py)
                    doc = f"{doc} (between {num(rng[0][0])} and {num(rng[0][1])})".strip()
                elif ty in ("int", "float") and not (p.has_default and p.default is not None):
                    init = "0" if ty == "int" else "0.0"
                vals.setdefault(name, Value(name, ty + ("?" if not p.required and not p.has_default and "?" not in ty else ""), init if p.required or p.has_default else "null",
                                            doc, ws, values=tuple(p.type.values) if p.type.kind == "enum" else ()))
                plan.sets.append(name)
        elif c == "level":
            p = next(p for p in _ps(t) if p.required)
            pw = [singular(w) for w in tokens(p.name) if w not in ("amount", "quantity", "to", "add", "delta")]
            base = pw or [w for w in noun if w not in ("tank",)] or noun
            name = ident("_".join(base + ["level"]))
            cap = _cap(t, p)
            init = num(min(10.0, cap / 5) if cap else 0)
            vals.setdefault(name, Value(name, "float" if p.type.kind == "number" else "int", init + (".0" if p.type.kind == "number" and "." not in init else ""),
                                        f"current {' '.join(base)} level" + (f" (at most {num(cap)})" if cap else ""), set(base) | set(noun), kind="level"))
            plan.sets.append(name)
        elif c == "parts":
            lst = next(p for p in _ps(t) if p.type.kind == "array")
            flag = _flag(t)
            parts = [singular(w) for w in tokens(lst.name)]
            name = ident(flag + "_" + "_".join(parts[:-1] + [plural(parts[-1])]))
            items = forge_type(lst.type.items)
            every = "[" + ", ".join(q(x) for x in lst.type.items.values) + "]"  # a parked car: every door locked
            vals.setdefault(name, Value(name, f"list[{items}]", every, f"the {' '.join(parts)}s that are {flag}", set(parts) | set(noun),
                                        kind="parts", flag=flag, nparts=len(lst.type.items.values)))
            plan.sets.append(name)
    # 2. argument-less on/off tools reset what a sibling sets (or own a bool)
    for plan in plans:
        if plan.cls != "toggle":
            continue
        sib = next((o for o in plans if o is not plan and o.sets and o.noun == plan.noun), None)
        if sib is not None:
            plan.sets = list(sib.sets)
        else:
            name = ident("_".join(plan.noun + ["on"])) if plan.noun else None
            if name is None:
                plan.cls = "none"
                continue
            vals.setdefault(name, Value(name, "bool", "false", f"{' '.join(plan.noun)} is on", set(plan.noun)))
            plan.sets = [name]
    if not vals or not any(p.sets for p in plans):
        return None
    needs_user = _needs_user(tools) if session else {}
    # 3. the bodies
    text_tools = []
    for plan in plans:
        if plan.cls == "none":
            continue
        body = _body(plan, vals, needs_user, plans)
        if body is None:
            continue
        text_tools.append((plan, body))
    if not text_tools:
        return None
    # the world starts ready for what the docs require ("only while the thermostat is on"):
    # a value some precondition compares with a literal starts at that literal
    for _plan, (_ann, stmts, _rt) in text_tools:
        for st in stmts:
            st = st[0] if isinstance(st, tuple) else st
            m = re.search(r"require state\.(\w+) == (\S+) else", st)
            if m and m.group(1) in vals and vals[m.group(1)].kind == "value" and m.group(1) != "current_user":
                vals[m.group(1)].init = m.group(2)
                vals[m.group(1)].kind = "ready"
    # a control starts anywhere its type allows (the sampled worlds vary it); a level and the
    # session start where the docs imply (an empty-ish tank below its cap, nobody signed in)
    # a session starts signed in (a sampled user), so the controls it guards are usable
    state = "\n".join(f"    {v.name}: {v.type}{' = ' + v.init if v.init and (v.kind != 'value' or v.type in ('int', 'float')) else ''} {q(v.doc or v.name.replace('_', ' '))}"
                       for v in vals.values())
    out = [f"env {ident(env.name)} {{", "  state {", state, "  }", ""]
    claimed = {}
    cites: dict[str, tuple] = {}  # tool -> ((statement index, the sentence it is read from), ...)
    for plan, (ann, stmts, ret_t) in text_tools:
        cites[plan.tool.name] = tuple((i, st[1]) for i, st in enumerate(stmts) if isinstance(st, tuple))
        stmts = [st[0] if isinstance(st, tuple) else st for st in stmts]
        t = plan.tool
        out.append(f"  @{ann}")
        out.append(f"  tool {signature(t)} -> {ret_t}")
        out.append(f"    {q(t.description or t.name)}")
        out.append("  {")
        out += [f"    {s}" for s in stmts]
        out.append("  }")
        out.append("")
        claimed[t.name] = ident(t.name)
    out.append("}")
    c = claim_from_text("device", "\n".join(out) + "\n", claimed, f"<device:{env.name}>")
    return cited(c, cites)


def json_default(p: ir.Param, ty: str) -> str:
    import json

    if p.has_default and isinstance(p.default, (str, int, float, bool)):
        return json.dumps(p.default)
    return {"bool": "false", "int": "0", "float": "0.0", "str": '""'}.get(ty, "null")


def _cap(t: ir.Tool, p: ir.Param) -> float | None:
    found = caps(p.description) or caps(t.description)
    return found[0][0] if found else None


def _flag(t: ir.Tool) -> str:
    """The adjective a parts tool gives ("lockDoors(unlock, door)": locked)."""
    for w in _toks(t):
        if w in VERBS and w not in ("set", "change", "toggle", "update") and not w.startswith("un"):
            return w + ("ed" if not w.endswith("e") else "d")
    return "on"


def _needs_user(tools: list[ir.Tool]) -> dict[str, str]:
    """Tools that need a signed-in user -> the sentence saying so: their own docs, or the login
    tool's "every other control needs a signed-in user"."""
    pat = re.compile(r"\b(signed[- ]in|logged[- ]in|log(?:ged)? in first|sign(?:ed)? in first|requires? (?:a )?(?:login|sign[- ]in|authentication))\b")
    out: dict[str, str] = {}
    every = next((s for t in tools if session_entity(t) == "in" for s in sentences(t.description)
                  if pat.search(s.lower()) and re.search(r"\b(every|all) other\b", s.lower())), None)
    for t in tools:
        if session_entity(t):
            continue
        own = next((s for s in sentences(t.description) if pat.search(s.lower())), None)
        if own or every:
            out[t.name] = own or every
    return out


def _match(subj: str, vals: dict[str, Value]) -> Value | None:
    sw = {w for w in words(subj) if w not in STOP and w not in ("all", "every", "both")}
    best, score = None, 0
    for v in vals.values():
        n = len(sw & (v.words | set(words(v.name))))
        if n > score:
            best, score = v, n
    return best


def _condition(v: Value, adj: str) -> str | None:
    """The state condition "the <v> must be <adj>" states."""
    sw = state_word(adj)
    ref = f"state.{v.name}"
    if v.kind == "parts":
        if stem(adj) == stem(v.flag):
            return f"len({ref}) == {v.nparts}"
        if adj.startswith("un") and stem(adj[2:]) == stem(v.flag):
            return f"len({ref}) == 0"
        return None
    if v.values:
        hit = next((x for x in v.values if isinstance(x, str) and stem(x) == stem(adj)), None)
        if hit is None and sw:
            hit = next((x for x in v.values if isinstance(x, str) and state_word(x) == sw), None)
        return f"{ref} == {q(hit)}" if hit is not None else None
    base = v.type.rstrip("?")
    if base == "bool" and sw:
        return f"{ref} == {'true' if sw == 'on' else 'false'}"
    if base in ("int", "float") and sw:
        return f"{ref} > 0" if sw == "on" else f"{ref} == 0"
    return None


def _guard(plan: Plan, action: str | None) -> str | None:
    """The argument value a "to start it" / "to turn it on" names (the condition holds only then)."""
    if action is None:
        return None
    want = "on" if not action.startswith("unlock") else "off"
    a = stem(action.split()[0]) if not action.startswith("turn") else None
    for p in _ps(plan.tool):
        if p.type.kind == "enum":
            hit = next((x for x in p.type.values if isinstance(x, str) and a and stem(x) == a), None)
            hit = hit or next((x for x in p.type.values if isinstance(x, str) and state_word(x) == want), None)
            if hit is not None:
                return f"{_acc(plan.tool, p)} == {q(hit)}"
        if p.type.kind == "boolean":
            neg = state_word(p.name) == "off" or p.name.lower().startswith("un")
            return f"{_acc(plan.tool, p)} == {'false' if neg == (want == 'on') else 'true'}"
    return None


def _state_of_verb(adj: str, plan: Plan, plans: list[Plan], vals: dict[str, Value]) -> str | None:
    """The condition "<it> must be <adj>" means when `adj` is what an argument-less tool does
    (landed: `land()`): the values that tool resets are at their reset value."""
    for o in plans:
        if o is plan or o.cls != "toggle" or not o.sets:
            continue
        verb = next((w for w in _toks(o.tool) if state_word(w)), None)
        if verb and stem(verb) == stem(adj):
            sw = state_word(verb)
            return " and ".join(f"state.{n} == {_reset(vals[n], sw)}" for n in o.sets)
    return None


def _body(plan: Plan, vals: dict[str, Value], needs_user: dict[str, str], plans: list[Plan] = ()):
    t = plan.tool
    pre: list[str] = []
    if t.name in needs_user:
        pre.append(('require state.current_user != null else "no user is signed in"', needs_user[t.name]))
    for subj, adj, sent, action in requirements(t.description):
        v = _match(subj, vals)
        cond = None if v is None or (v.name in plan.sets and plan.cls != "set") else _condition(v, adj)
        if cond is None:
            # "the drone must be landed": the state the `land` tool leaves behind
            cond = _state_of_verb(adj, plan, plans, vals)
        if cond is None:
            continue
        g = _guard(plan, action)
        msg = q(sent.rstrip("."))
        pre.append((f"require {cond} else {msg}" if g is None else f"if {g} {{ require {cond} else {msg} }}", sent))
    if plan.cls == "session":
        kind = session_entity(t)
        if kind == "in":
            up = next(p for p in _ps(t) if set(tokens(p.name)) & USER_WORDS)
            return "update", pre + [f"set state.current_user = {_acc(t, up)}", "return {current_user: state.current_user}"], "{current_user: str?}"
        if kind == "out":
            return "update", pre + ["set state.current_user = null", "return {current_user: state.current_user}"], "{current_user: str?}"
        return "read", ["return state.current_user"], "str?"
    if plan.cls == "read":
        fields = [v for v in vals.values()]
        rec = ", ".join(f"{v.name}: state.{v.name}" for v in fields)
        rt = ", ".join(f"{v.name}: {v.type}" for v in fields)
        return "read", pre + [f"return {{{rec}}}"], f"{{{rt}}}"
    stmts = list(pre)
    if plan.cls == "set":
        for p, name in zip(_ps(t), plan.sets):
            arg = _acc(t, p)
            v = vals[name]
            checks = []
            if p.type.kind in ("number", "integer"):
                for lo, hi, sent in ranges(p.description, bare=True) or [r for r in ranges(t.description) if _mentions(r[2], p, t)]:
                    checks.append((f"require {arg} >= {num(lo)} and {arg} <= {num(hi)} else {q(f'{p.name} must be between {num(lo)} and {num(hi)}')}", sent))
                    break
                for cap, sent in caps(p.description) or [c for c in caps(t.description) if _mentions(c[1], p, t)]:
                    checks.append((f"require {arg} <= {num(cap)} else {q(f'{p.name} cannot exceed {num(cap)}')}", sent))
                    break
                if positive(p.description):
                    checks.append((f"require {arg} > 0 else {q(f'{p.name} must be positive')}", p.description))
            if not p.required and not p.has_default:
                stmts += checks
                stmts.append(f"if {arg} != null {{ set state.{name} = {arg} }}")
            else:
                if checks and p.has_default:
                    stmts += checks
                elif checks:
                    stmts += checks
                stmts.append(f"set state.{name} = {arg}")
    elif plan.cls == "level":
        p = next(p for p in _ps(t) if p.required)
        arg, name = _acc(t, p), plan.sets[0]
        why = p.description if positive(p.description) else None
        st = f"require {arg} > 0 else {q(f'{p.name} must be positive')}"
        stmts.append((st, why) if why else st)
        found = caps(p.description) or caps(t.description)
        if found:
            cap, sent = found[0]
            stmts.append((f"require state.{name} + {arg} <= {num(cap)} else {q(f'{name} cannot exceed {num(cap)}')}", sent))
        stmts.append(f"set state.{name} = state.{name} + {arg}")
    elif plan.cls == "parts":
        lst = next(p for p in _ps(t) if p.type.kind == "array")
        flag = next(p for p in _ps(t) if p.type.kind == "boolean")
        name = plan.sets[0]
        neg = flag.name.lower().startswith("un") or state_word(flag.name) == "off"
        on, off = (f"not {_acc(t, flag)}", _acc(t, flag)) if neg else (_acc(t, flag), f"not {_acc(t, flag)}")
        L, S = _acc(t, lst), f"state.{name}"
        stmts.append(f"if {on} {{ set {S} = {S} + ({L} where it not in {S}) }} else {{ set {S} = {S} where it not in {L} }}")
    elif plan.cls == "toggle":
        sw = next(state_word(w) for w in _toks(t) if state_word(w))
        for name in plan.sets:
            v = vals[name]
            stmts.append(f"set state.{name} = {_reset(v, sw)}")
    ret = ", ".join(f"{n}: state.{n}" for n in plan.sets)
    rt = ", ".join(f"{n}: {vals[n].type}" for n in plan.sets)
    return "update", stmts + [f"return {{{ret}}}"], f"{{{rt}}}"


def _mentions(sent: str, p: ir.Param, t: ir.Tool) -> bool:
    """A tool-level sentence is about `p` when it names its words, or `p` is the only number."""
    nums = [x for x in _ps(t) if x.type.kind in ("number", "integer")]
    return bool(set(words(sent)) & {singular(w) for w in tokens(p.name)}) or len(nums) == 1


def _reset(v: Value, sw: str) -> str:
    if v.values:
        hit = next((x for x in v.values if isinstance(x, str) and state_word(x) == sw), None)
        return q(hit) if hit is not None else v.init
    base = v.type.rstrip("?")
    if base == "bool":
        return "true" if sw == "on" else "false"
    if base in ("int", "float"):
        return ("1" if base == "int" else "1.0") if sw == "on" else ("0" if base == "int" else "0.0")
    return v.init
