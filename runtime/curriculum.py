"""Task families and the curriculum weights of `evolve.json` (issue 26), on the runtime side.

`forgec evolve` (compiler side, forgec/evolve.py) writes rules keyed by a task *family*; the
compiler's sampler and lowering read them, and the trainer (`data.curriculum`) re-weights its
task sampling with them. The family is read from a task alone (no blueprint, no compiler
module), so the trainer, the evaluator and the compiler agree on it:

* kind: `question` (read-only), `write`, or `write+tell` (a write task that also checks told values);
* tools: the gold calls' tools in order, a run of one tool said once with `+` (a user's three
  `get_ticket` lookups are one step: how many records the world gave them is not the template);
* condition: whether an intent carries a condition;
* shape: what the user knows (fact names without their `_2` suffixes) and the reasoning nodes.
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path
from typing import Any

RULES_VERSION = "1"
ACTIONS = ("reject", "relax-tell", "tighten-tell", "weight")

# curriculum weights: intermediate pass rates are learnt from, 0 and 1 are not (RLVE, AReaL's dynamic sampling)
FLOOR = 0.1  # a family the agent always or never solves still appears now and then
UNSEEN = 0.5  # a family no episode measured yet
HARDER = 1.0  # an unseen family that extends a mastered one (more intents, a condition, more reasoning)
MASTERED = 0.9  # pass rate at or above which a family counts as mastered


def collapse(tools: list[str]) -> list[str]:
    """`[a, b, b, b, c]` -> `[a, b+, c]`: a run of one tool is one step of the template."""
    out: list[str] = []
    for t in tools:
        if out and out[-1].rstrip("+") == t:
            out[-1] = t + "+"
        else:
            out.append(t)
    return out


def fact_kind(name: str) -> str:
    """`ticket_status_2` -> `ticket_status`: the second fact of a kind is the same kind of fact."""
    return re.sub(r"_\d+$", "", name)


def family_key(kind: str, tools: list[str], condition: bool, facts: list[str], reasoning: int) -> dict:
    """The family as the rule file spells it (sorted keys, plain values)."""
    return {
        "kind": kind,
        "tools": collapse(list(tools)),
        "condition": bool(condition),
        "shape": f"facts={','.join(sorted({fact_kind(f) for f in facts}))};reasoning={int(reasoning)}",
    }


def family_of(task: Any) -> dict:
    """The family of a `forgec.tasks.Task` (or its JSON dict)."""
    t = task.model_dump() if hasattr(task, "model_dump") else task
    user = t.get("user") or {}
    sc = user.get("scenario") or {}
    facts = list((sc.get("known_info") if sc else None) or user.get("facts") or {})
    cond = any((i.get("condition") or "") for i in sc.get("intents", [])) if sc else False
    kind = "question" if t.get("read_only") else ("write+tell" if t.get("tell") else "write")
    return family_key(kind, [g["tool"] for g in t.get("gold_calls", [])], cond, facts, (t.get("stats") or {}).get("reasoning_nodes", 0))


def family_id(fam: dict) -> str:
    """One line per family (tables, dict keys): `write|get_customer>get_ticket+>close_ticket|-|facts=...`."""
    return f"{fam['kind']}|{'>'.join(fam['tools'])}|{'cond' if fam['condition'] else '-'}|{fam['shape']}"


def coarse_id(fam: dict) -> str:
    """The sampler's notion of a template (kind, tools, condition): what curriculum weights are kept per."""
    return f"{fam['kind']}|{'>'.join(fam['tools'])}|{'cond' if fam['condition'] else '-'}"


def matches(pattern: dict, fam: dict) -> bool:
    """A rule's family matches when every field it gives equals the family's (a missing field matches any)."""
    return all(fam.get(k) == v for k, v in pattern.items())


def pass_weight(p: float) -> float:
    """Sampling weight of a family with pass rate p: 4p(1-p) lifted to FLOOR (1.0 at p = 0.5, FLOOR at 0 and 1)."""
    return round(max(FLOOR, 4.0 * p * (1.0 - p)), 4)


def extends(fam: dict, base: dict) -> bool:
    """`fam` is a harder version of `base`: it contains base's tools in order and adds a step, a condition or reasoning."""
    it = iter(fam["tools"])
    if not all(any(x == t for x in it) for t in base["tools"]):
        return False
    def r(f: dict) -> int:  # reasoning nodes; a coarse family (weight rules) gives no shape
        m = re.search(r"reasoning=(\d+)", f.get("shape", ""))
        return int(m.group(1)) if m else 0

    return len(fam["tools"]) > len(base["tools"]) or (fam["condition"] and not base["condition"]) or r(fam) > r(base)


class Rules:
    """The rules of one env read from `evolve.json` (already validated: see forgec/evolve.py's check)."""

    def __init__(self, rules: list[dict]):
        self.rules = rules
        self.rejects = [r for r in rules if r["action"] == "reject"]
        self.relax = [r for r in rules if r["action"] == "relax-tell"]
        self.tighten = [r for r in rules if r["action"] == "tighten-tell"]
        self.weights = [r for r in rules if r["action"] == "weight"]

    def __bool__(self) -> bool:
        return bool(self.rules)

    def digest(self) -> str:
        """What the build's cache keys take: the rules' canonical JSON."""
        return json.dumps(self.rules, sort_keys=True, separators=(",", ":"))

    def rejecting(self, fam: dict) -> dict | None:
        return next((r for r in self.rejects if matches(r["family"], fam)), None)

    def relaxing(self, fam: dict) -> dict | None:
        return next((r for r in self.relax if matches(r["family"], fam)), None)

    def tightening(self, fam: dict) -> dict | None:
        return next((r for r in self.tighten if matches(r["family"], fam)), None)

    def weight(self, fam: dict) -> float:
        """The curriculum weight of a family: its measured one, else HARDER when it extends a mastered
        family, else UNSEEN; 1.0 when the rules hold no weights at all (no curriculum)."""
        if not self.weights:
            return 1.0
        for r in self.weights:
            if matches(r["family"], fam):
                return float(r["weight"])
        if any(r.get("pass_rate", 0.0) >= MASTERED and extends(fam, r["family"]) for r in self.weights):
            return HARDER
        return UNSEEN

    def keep(self, fam: dict, rng: random.Random) -> bool:
        """Whether a sampled task of this family is kept (probability = weight / largest weight)."""
        if not self.weights:
            return True
        top = max([HARDER, UNSEEN] + [float(r["weight"]) for r in self.weights])
        return rng.random() < self.weight(fam) / top


def read_rules(path: str | Path) -> dict[str, Rules]:
    """Per env, the rules of a rule file (`evolve.json`) the compiler's check accepted; {} when absent.
    A file that is not the format raises ValueError (the trainer's config error says so)."""
    p = Path(path)
    if not p.is_file():
        return {}
    doc = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("envs", {}), dict):
        raise ValueError(f"{p}: not an evolve.json rule file (an object with `envs`)")
    out = {}
    for env, body in doc.get("envs", {}).items():
        rules = body.get("rules", []) if isinstance(body, dict) else []
        if not all(isinstance(r, dict) and r.get("action") in ACTIONS and isinstance(r.get("family"), dict) for r in rules):
            raise ValueError(f"{p}: env {env!r} has a rule without a known action and a family")
        out[env] = Rules(rules)
    return out


class CurriculumPicker:
    """Task sampling weighted by family (`data.curriculum`): each task's weight is its family's in the rule
    file (`Rules.weight`), so training draws more from the families the agent solves sometimes. The weights
    are read once and the draw is seeded per slot, so every process picks the same tasks and a resumed run
    repeats an uninterrupted one."""

    def __init__(self, tasks: list[Any], rules: dict[str, Rules]):
        self.w = {t.id: (rules[t.env].weight(family_of(t)) if t.env in rules else 1.0) for t in tasks}

    def pick(self, pool: list[Any], rng: random.Random) -> Any:
        """One task of `pool`, drawn with probability proportional to its family's weight."""
        ws = [self.w.get(t.id, 1.0) for t in pool]
        x = rng.random() * math.fsum(ws)
        for t, w in zip(pool, ws):
            x -= w
            if x < 0:
                return t
        return pool[-1]
