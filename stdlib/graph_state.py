"""A plausible knowledge graph for a graph-store env's initial state.

Why: the generic generator fills a node entity (`entity Entity key name { entityType, observations }`)
field by field: names like `entity_03636`, types and observations drawn from a word pool, and
relations from a node to itself. A task on such a world ("what does entity_03636 umber?") teaches
nothing. A graph world is instead a few people, organizations, projects and places, each with
observations that fit its kind, and relations whose type fits the kinds they join (a person
`works_at` an organization, a project is `owned_by` one), never a self-loop or a duplicate.

`graph_entities(ents)` finds the node and relation entities in a SCHEMA (the shapes
forgec/synth/shape_graph.py declares: a node keyed by a name-like field with a type-like field and
a list of strings; a relation with two references to the node and a type-like field);
`graph_world(ents, out, rng)` rewrites their records in `out` in place. Deterministic per rng.
"""

from __future__ import annotations

import random
import re
from typing import Any

FIRST = "Alice Bruno Chen Dana Emeka Fatima Gustav Hana Ivan Julia Kofi Lena Mateo Nadia Omar Priya".split()
LAST = "Okafor Rossi Tanaka Diaz Novak Silva Haddad Kim Berg Costa Mensah Ivanova Lopez Sato Weber Shah".split()
NAMES = {
    "organization": ["Acme Labs", "Northwind Traders", "Globex", "Initech", "Umbrella Analytics", "Stark Robotics"],
    "project": ["Apollo", "Nimbus", "Falcon Redesign", "Data Lake Migration", "Mobile App v2", "Quarterly Planning"],
    "place": ["Lyon", "Austin", "Berlin", "Kyoto"],
}
FACTS = {
    "person": ["Speaks French", "Prefers email over calls", "Joined the team in 2021", "Enjoys hiking", "Vegetarian",
               "Leads the weekly sync", "Allergic to peanuts", "Has a dog named Pixel", "Works remotely on Fridays",
               "Birthday in March", "Learning Japanese", "Plays the cello"],
    "organization": ["Founded in 2009", "About 200 employees", "Main client is in retail", "Hiring data engineers", "Publicly listed"],
    "project": ["Due at the end of Q3", "Budget approved", "Uses Python and Postgres", "Blocked on the security review", "Kick-off in March"],
    "place": ["Main office", "Hosts the yearly offsite", "Two hours by train from the head office"],
}
KINDS = ["person", "person", "organization", "project", "person", "project", "place", "person", "organization",
         "person", "project", "person", "place", "person", "organization", "person"]
RELS = {  # (from kind, to kind) -> relation types in active voice
    ("person", "organization"): ["works_at"], ("person", "project"): ["works_on", "leads"],
    ("person", "person"): ["knows", "mentors"], ("project", "organization"): ["owned_by"],
    ("organization", "place"): ["located_in"], ("person", "place"): ["lives_in"],
}
_TYPEISH = re.compile(r"(type|kind|category|class|label)$", re.I)


def _str(tj: dict) -> bool:
    return tj.get("type") == "str"


def graph_entities(ents: dict) -> tuple[tuple[str, str, str, str | None], tuple[str, str, str, str]] | None:
    """((node, key, type field, observations field), (relation, from, to, type field)) or None."""
    for n, d in ents.items():
        fs, key = d["fields"], d["key"]
        if key.lower() not in ("name", "title", "label") or not _str(fs.get(key, {})):
            continue
        ty = next((f for f, tj in fs.items() if f != key and _str(tj) and _TYPEISH.search(f)), None)
        obs = next((f for f, tj in fs.items() if tj.get("type") == "list" and _str(tj.get("items", {}))), None)
        if ty is None:
            continue
        for r, rd in ents.items():
            refs = [f for f, tj in rd["fields"].items() if tj.get("type") == "ref" and tj.get("entity") == n]
            rty = next((f for f, tj in rd["fields"].items() if _str(tj) and f != rd["key"] and _TYPEISH.search(f)), None)
            if r != n and len(refs) == 2 and rty is not None:
                return (n, key, ty, obs), (r, refs[0], refs[1], rty)
    return None


def graph_world(ents: dict, out: dict, rng: random.Random) -> None:
    """Rewrite the node and relation records of `out` as a small, plausible graph (in place)."""
    found = graph_entities(ents)
    if found is None:
        return
    (n, key, ty, obs), (r, src, dst, rty) = found
    old = sorted(out.get(n) or {})
    count = max(4, min(len(old), len(KINDS)))
    people = rng.sample([f"{f} {l}" for f in FIRST for l in LAST], count)
    pools = {k: rng.sample(v, len(v)) for k, v in NAMES.items()}
    nodes: dict[str, dict] = {}
    kinds: dict[str, str] = {}
    for i in range(count):
        kind = KINDS[i]
        name = people[i] if kind == "person" else pools[kind].pop() if pools[kind] else people[i]
        base = dict((out.get(n) or {}).get(old[i], {})) if i < len(old) else {}
        rec = {**base, key: name, ty: kind}
        if obs:
            rec[obs] = rng.sample(FACTS[kind], rng.randint(1, 3))
        nodes[name] = rec
        kinds[name] = kind
    rename = {k: list(nodes)[i % count] for i, k in enumerate(old)}
    out[n] = dict(sorted(nodes.items()))
    # relations: every plausible (from, type, to) once, a deterministic sample of about 1.5 per node
    cands = [(a, t, b) for a in nodes for b in nodes if a != b for t in RELS.get((kinds[a], kinds[b]), [])]
    rng.shuffle(cands)
    chosen = sorted(cands[: count * 3 // 2], key=cands.index)
    rkey = ents[r]["key"]
    rold = sorted((out.get(r) or {}).values(), key=lambda x: (str(type(x.get(rkey))), x.get(rkey)))
    rels: dict[str, dict] = {}
    top = max((x[rkey] for x in rold if isinstance(x.get(rkey), int)), default=0)
    for i, (a, t, b) in enumerate(chosen):
        base = dict(rold[i]) if i < len(rold) else {}
        k = base[rkey] if rkey in base else top + 1 + i
        rels[str(k)] = {**base, rkey: k, src: a, dst: b, rty: t}
    out[r] = rels
    # any other reference to a node follows its rename
    for e, d in ents.items():
        if e in (n, r):
            continue
        for f, tj in d["fields"].items():
            for rec in (out.get(e) or {}).values():
                _remap(rec, f, tj, n, rename)


def _remap(rec: dict, f: str, tj: dict, n: str, rename: dict) -> None:
    v: Any = rec.get(f)
    if tj.get("type") == "ref" and tj.get("entity") == n and isinstance(v, str):
        rec[f] = rename.get(v, v)
    elif tj.get("type") == "list" and tj.get("items", {}).get("type") == "ref" and tj["items"].get("entity") == n and isinstance(v, list):
        rec[f] = [rename.get(x, x) if isinstance(x, str) else x for x in v]


# --------------------------------------------------------------------------- key-value stores

SETTINGS = {
    "theme": ["dark", "light", "solarized"], "language": ["fr", "en", "ja", "pt"], "timezone": ["Europe/Paris", "America/Denver", "Asia/Tokyo"],
    "currency": ["EUR", "USD", "JPY"], "units": ["metric", "imperial"], "notifications": ["on", "off", "weekly digest"],
    "home_city": ["Lyon", "Austin", "Kyoto"], "font_size": ["small", "medium", "large"], "default_view": ["list", "board", "calendar"],
    "start_page": ["inbox", "dashboard", "calendar"],
}


def kv_entity(ents: dict) -> tuple[str, str, str] | None:
    """(entity, key field, value field) of a two-field key-value store (`Entry {key, value}`)."""
    for e, d in ents.items():
        fs = d["fields"]
        if len(fs) == 2 and d["key"].lower() in ("key", "name", "k", "id") and _str(fs[d["key"]]):
            val = next(f for f in fs if f != d["key"])
            if val.lower() in ("value", "val", "data", "content", "contents") and _str(fs[val]):
                return e, d["key"], val
    return None


def kv_world(ents: dict, out: dict, rng: random.Random) -> None:
    """A key-value store holds settings a person would name (theme: dark), not `entry_04711: alpha`."""
    found = kv_entity(ents)
    if found is None:
        return
    e, kf, vf = found
    names = sorted(SETTINGS)[: max(4, min(len(out.get(e) or {}), len(SETTINGS)))]
    out[e] = {k: {kf: k, vf: rng.choice(SETTINGS[k])} for k in names}
