"""Reward: the final state equals the gold state and every `tell` value reached the user.

`told(value, text)` decides whether a value appears in what the agent said to
the user, normalizing the ways people and models write values: numbers with
thousands separators or trailing zeros (1234.5 ~ "1,234.50" ~ "1234.5"),
money rounded to the written precision, case and surrounding punctuation of
strings, yes/no for booleans. Lists and records count as told when each of
their scalar leaves is told.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from forgec.tasks import state_diff as _diff

_NUM_RE = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])|(?<![\w.])[-+]?\.\d+(?![\w])")
_WS_RE = re.compile(r"\s+")
_MAX_LEAVES = 200


def _numbers(text: str) -> list[tuple[float, int]]:
    """Numbers written in `text`, with their count of decimal places."""
    out = []
    for m in _NUM_RE.finditer(text):
        s = m.group(0).replace(",", "")
        try:
            v = float(s)
        except ValueError:
            continue
        mant = s.lower().split("e")[0]
        dec = len(mant.split(".")[1]) if "." in mant else 0
        out.append((v, dec))
    return out


def _num_matches(value: float, written: float, decimals: int) -> bool:
    if math.isclose(value, written, rel_tol=1e-12, abs_tol=1e-9):
        return True
    # A value written to fewer decimals (money: 2) counts when it rounds to what was written.
    return decimals >= 2 and math.isclose(round(value, decimals), written, rel_tol=0, abs_tol=10 ** -(decimals + 3))


def _norm_text(s: str) -> str:
    return _WS_RE.sub(" ", s.casefold()).strip()


def _as_number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if math.isfinite(float(v)) else None
    if isinstance(v, str):
        s = v.strip().replace(",", "")
        if re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", s):
            return float(s)
    return None


class ToldIndex:
    """What the agent told the user, pre-normalized once for many `told` checks."""

    def __init__(self, text: str):
        self.text = _norm_text(text)
        self.numbers = _numbers(text)

    def has_number(self, v: float) -> bool:
        return any(_num_matches(v, w, d) for w, d in self.numbers)

    def has_string(self, s: str) -> bool:
        s = _norm_text(s).strip(" .,;:!?\"'")
        if not s:
            return True
        if re.match(r"\w", s) and re.search(r"\w$", s):
            return re.search(rf"(?<!\w){re.escape(s)}(?!\w)", self.text) is not None
        return s in self.text


def _leaves(value: Any, out: list, depth: int = 0) -> None:
    if len(out) >= _MAX_LEAVES or depth > 8:
        return
    if isinstance(value, dict):
        for k in sorted(value, key=str):
            _leaves(value[k], out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _leaves(v, out, depth + 1)
    else:
        out.append(value)


def told(value: Any, index: ToldIndex | str) -> bool:
    """Whether `value` (scalar, list or record) appears in the text the agent addressed to the user."""
    if isinstance(index, str):
        index = ToldIndex(index)
    leaves: list = []
    _leaves(value, leaves)
    for leaf in leaves:
        if leaf is None:
            continue  # absent values cannot be said; they never fail a tell
        if isinstance(leaf, bool):
            words = ("true", "yes") if leaf else ("false", "no", "not")
            if not any(re.search(rf"\b{w}\b", index.text) for w in words):
                return False
            continue
        num = _as_number(leaf)
        if num is not None and index.has_number(num):
            continue
        if isinstance(leaf, str) and index.has_string(leaf):
            continue
        return False
    return True


def _same(a: Any, b: Any) -> bool:
    return str(a).strip().casefold() == str(b).strip().casefold()


def _records(value: Any, out: list, depth: int = 0) -> None:
    if depth > 8 or len(out) >= 5000:
        return
    if isinstance(value, dict):
        out.append(value)
        for v in value.values():
            _records(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _records(v, out, depth + 1)


def tell_competitors(task: Any, limit: int = 100) -> list:
    """The other candidates of a task's `tell` answer: for each scalar value it checks, the values the same field
    holds in the other records the gold path read (what an agent that does not single out the record would list).

    `told` accepts a value anywhere in what the agent said, so an answer that lists every candidate passes the
    check; a tightened check (`tell_exclude`, evolve's `tighten-tell`) fails an answer that also tells one of
    these. Left out: values the answer itself says ("Login" in "Login issue"), booleans (every "not" would tell
    False), and values said in the dialogue anyway (the user's facts, the gold writes' arguments)."""
    leaves: list = []
    _leaves(list(task.tell), leaves)
    gold = [x for x in leaves if x is not None and not isinstance(x, (bool, dict, list))]
    if not gold:
        return []
    recs: list = []
    for g in task.gold_calls:
        _records(g.result, recs)
    keys = {k for r in recs for k, v in r.items() if not isinstance(v, (bool, dict, list)) and v is not None
            and any(_same(v, x) for x in gold)}
    facts = list((task.user.facts or {}).values()) if getattr(task, "user", None) else []
    said_anyway: list = []
    _leaves(facts + [g.arguments for g in task.gold_calls if g.write], said_anyway)
    answer = ToldIndex(" ; ".join(str(x) for x in gold))
    out: dict[str, Any] = {}
    for r in recs:
        for k in sorted(keys):
            v = r.get(k)
            if v is None or isinstance(v, (bool, dict, list)) or (isinstance(v, str) and not v.strip()):
                continue
            if any(_same(v, x) for x in gold + said_anyway) or told(v, answer):
                continue
            out.setdefault(f"{type(v).__name__}:{v}", v)
    return [out[k] for k in sorted(out)][:limit]


@dataclass
class RewardBreakdown:
    reward: float
    state_match: bool
    tells_told: list[bool] = field(default_factory=list)
    final_state_hash: str = ""
    gold_state_hash: str = ""
    excluded_told: list = field(default_factory=list)  # a tightened check's other candidates the agent also told

    @property
    def all_told(self) -> bool:
        return all(self.tells_told)

    def to_json(self) -> dict:
        return {
            "reward": self.reward,
            "state_match": self.state_match,
            "tells_told": list(self.tells_told),
            "all_told": self.all_told,
            "final_state_hash": self.final_state_hash,
            "gold_state_hash": self.gold_state_hash,
            **({"excluded_told": list(self.excluded_told)} if self.excluded_told else {}),
        }


def compute_reward(final_state_hash: str, gold_state_hash: str, tell: list[Any], said_to_user: str,
                   exclude: list[Any] | tuple = ()) -> RewardBreakdown:
    """Reward 1.0 iff the state matches the gold state, every `tell` value was told and (a tightened check)
    none of the `exclude` values, the answer's other candidates, was told too."""
    index = ToldIndex(said_to_user)
    tells = [told(v, index) for v in tell]
    hedged = [v for v in exclude if told(v, index)] if tell else []
    match = final_state_hash == gold_state_hash
    return RewardBreakdown(
        reward=1.0 if match and all(tells) and not hedged else 0.0,
        excluded_told=hedged,
        state_match=match,
        tells_told=tells,
        final_state_hash=final_state_hash,
        gold_state_hash=gold_state_hash,
    )


def diff_against_gold(initial: dict, final: dict, gold_diff: list) -> dict:
    """How the episode's changes differ from the gold changes (for debugging a failed episode).

    Both sides are diffs from the initial state: `missing` are gold changes the
    episode did not make (or made differently), `extra` are changes the gold run
    did not make.
    """
    ours = {d["path"]: d for d in state_diff(initial, final)}
    gold = {}
    for d in gold_diff:
        d = d if isinstance(d, dict) else d.model_dump()
        gold[d["path"]] = d
    missing, extra = [], []
    for path in sorted(gold):
        g = gold[path]
        o = ours.get(path)
        if o is None or o["op"] != g["op"] or o.get("after") != g.get("after"):
            missing.append({"path": path, "op": g["op"], "gold": g.get("after"), "got": None if o is None else o.get("after"), "changed": o is not None})
    for path in sorted(ours):
        if path not in gold:
            o = ours[path]
            extra.append(o)
    return {"missing": missing, "extra": extra}


def state_diff(before: Any, after: Any, path: str = "") -> list[dict]:
    """Structural diff of two JSON states in the task file's `gold_diff` format (the compiler's own diff)."""
    return [d.model_dump() for d in _diff(before, after, path)]
