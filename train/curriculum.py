"""Online curriculum (`data.curriculum_every`, issue 26): family weights learnt from the training rollouts.

The trainer counts, per env and family (`runtime.curriculum.family_of`, kept per `coarse_id` as
`forgec evolve`'s weight rules are), the episodes it played and how many passed. Every
`data.curriculum_every` steps it turns the counts since the last update into weight rules with
`forgec evolve`'s own `derive_rules` (`pass_weight`: 4p(1-p) lifted to 0.1), replacing a family's
older weight and keeping every other rule, and the task sampler draws from the new weights
(`CurriculumPicker`: each slot seeded by (seed, slot), so the draws are a pure function of the seed,
the step and the weights). The rules are written to `OUTPUT/evolve.json` in evolve.json's format:
copied to `BUILD/evolve.json`, the next `forgec compile` of the same docs thins out the same
families. The state (rules and the counts since the last update) is part of each checkpoint.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from forgec.runtime.curriculum import CurriculumPicker, Rules, coarse_id, family_of

BANDS = ("never", "sometimes", "always", "unseen")


class OnlineCurriculum:
    def __init__(self, tasks: list[Any], every: int, start: dict[str, Rules] | None = None):
        self.every = every
        self.tasks = list(tasks)
        self.env = {t.id: t.env for t in tasks}
        self.cid: dict[str, str] = {}
        self.fams: dict[str, dict] = {}
        for t in tasks:
            fam = family_of(t)
            self.cid[t.id] = cid = coarse_id(fam)
            self.fams[cid] = {k: fam[k] for k in ("kind", "tools", "condition")}
        # the rule file's rules (data.curriculum) are the start; measured weights replace theirs
        self.rules: dict[str, list[dict]] = {env: [dict(r) for r in rs.rules] for env, rs in (start or {}).items()}
        self.window: dict[str, dict[str, list[int]]] = {}  # env -> family -> [passed, episodes] since the last update
        self.failed: dict[str, list[str]] = {}

    # ------------------------------------------------------------ what the sampler reads

    def picker(self) -> CurriculumPicker:
        return CurriculumPicker(self.tasks, {env: Rules(rs) for env, rs in self.rules.items()})

    def pass_rates(self) -> dict[str, dict[str, float]]:
        """env -> family -> the latest measured pass rate (the weight rules')."""
        return {env: {coarse_id(r["family"]): float(r["pass_rate"]) for r in rs
                      if r["action"] == "weight" and "pass_rate" in r and {"kind", "tools", "condition"} <= set(r["family"])}
                for env, rs in self.rules.items()}

    def weights(self) -> dict[str, dict[str, float]]:
        pk = self.picker()
        out: dict[str, dict[str, float]] = {}
        for t in self.tasks:
            out.setdefault(t.env, {})[self.cid[t.id]] = pk.w[t.id]
        return {env: dict(sorted(ws.items())) for env, ws in sorted(out.items())}

    def shares(self, batch: list[Any]) -> dict[str, float]:
        """Share of a batch's tasks by their family's latest pass rate: never (0), sometimes, always (1), unseen."""
        rates = self.pass_rates()
        c = Counter()
        for t in batch:
            p = rates.get(t.env, {}).get(self.cid[t.id])
            c["unseen" if p is None else "never" if p == 0 else "always" if p == 1 else "sometimes"] += 1
        n = max(1, len(batch))
        return {b: round(c[b] / n, 4) for b in BANDS}

    # ------------------------------------------------------------ learning from the rollouts

    def observe(self, rows: Iterable[tuple[str, float]], step: int) -> None:
        """Episodes played at `step` (every rank's, before dynamic filtering): (task id, reward)."""
        for i, (tid, reward) in enumerate(rows):
            if tid not in self.cid:
                continue
            env, cid = self.env[tid], self.cid[tid]
            r = self.window.setdefault(env, {}).setdefault(cid, [0, 0])
            r[0] += 1 if reward >= 1.0 else 0
            r[1] += 1
            if reward < 1.0 and len(self.failed.setdefault(cid, [])) < 8:
                self.failed[cid].append(f"train:{tid}#{step}.{i}")

    def due(self, done: int) -> bool:
        return self.every > 0 and done % self.every == 0

    def update(self) -> dict[str, dict[str, float]]:
        """New weight rules from the counts since the last update (evolve's derive_rules); the new weights."""
        from forgec.evolve import derive_rules

        rates = {env: {cid: (ok, n) for cid, (ok, n) in fs.items() if n} for env, fs in self.window.items()}
        self.rules, _added = derive_rules([], rates, self.rules, self.fams, self.failed)
        self.window, self.failed = {}, {}
        return self.weights()

    def write(self, path: Path) -> None:
        from forgec.evolve import write_rules

        write_rules(path, self.rules)

    # ------------------------------------------------------------ checkpoints

    def state(self) -> dict:
        return json.loads(json.dumps({"rules": self.rules, "window": self.window, "failed": self.failed}))

    def load(self, st: dict) -> None:
        self.rules = {env: [dict(r) for r in rs] for env, rs in (st.get("rules") or {}).items()}
        self.window = {env: {c: list(v) for c, v in fs.items()} for env, fs in (st.get("window") or {}).items()}
        self.failed = {c: list(v) for c, v in (st.get("failed") or {}).items()}
