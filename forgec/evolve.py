"""`forgec evolve`: failed episodes feed back into the task generator (issue 26).

One round: evaluate (pass^k) -> classify every failed or inconsistent episode with the detectors
below (each verdict cites its evidence) -> turn the verdicts into rules in `BUILD/evolve.json` ->
recompile (incrementally: the rules are part of the sample and lower stages' cache keys, so only
envs whose rules changed are resampled and relowered). docs/evolve.md describes the loop, the
classes and the file.

Failure classes (first that applies wins):

* `user-error`: the MEU judge flags the simulated user (its verdict is the evidence);
* `check-defect` / `tell-unasked`: the end state is gold's, but the check wants a value told that
  the user never asked for (a write task with a `tell`);
* `check-defect` / `tell-loose` (a *passed* episode): the `tell` check accepted an answer that also told
  the answer's other candidates (the same field of the other records the gold path read): `told` finds a
  value anywhere in what the agent said, so a list of candidates passes; rule `tighten-tell`;
* `task-defect` / `left-open-record`: the agent made gold's change on another record that agrees
  with gold's on everything the instruction says (facts, records they point to, superlatives);
* `task-defect` / `left-open-value`: the agent set gold's field to another value, and gold's
  value is nowhere in what the user says;
* `task-defect` / `gold-breaks-doc`: the gold path, replayed through the quality gate's checks, sets a
  value outside what the docs allow or writes to a record in a state the docs make final;
* `task-defect` / `fact-unsaid`: a write of the gold path takes a literal that neither the request nor
  the blueprint's `knows` states (lowering makes it a fact the user tells only when asked for it by name);
* `agent-error`: anything else (the diff is cited).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forgec import diagnostics as D
from forgec.codes import BAD_EVOLVE
from forgec.diagnostics import Diagnostic, Span
from forgec.runtime.curriculum import (ACTIONS, MASTERED, RULES_VERSION, Rules, coarse_id, family_id, family_key, family_of,
                                       pass_weight)
from forgec.runtime.reward import tell_competitors, told
from forgec.runtime.weakagent import asks_question, record_of, said_fields, said_values

RULES_FILE = "evolve.json"
CLASSES = ("user-error", "task-defect", "check-defect", "agent-error")
_FAMILY_FIELDS = {"kind": str, "tools": list, "condition": bool, "shape": str}

# --------------------------------------------------------------------------- the rule file: read, check, write


def _place(text: str, env: str | None, index: int | None) -> tuple[int, int]:
    """(line, column) of rule `index` of `env` in the file's text (of the env's key when no index), 1-based."""
    pos = 0
    if env is not None:
        m = re.search(r'"%s"\s*:' % re.escape(env), text)
        pos = m.start() if m else 0
        if index is not None:
            hits = [x.start() for x in re.finditer(r'"action"\s*:', text[pos:])]
            if index < len(hits):
                pos += hits[index]
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def check_rules(path: Path, envs: set[str] | None = None) -> tuple[dict | None, list[Diagnostic]]:
    """Parse and validate a rule file: (document, []) when usable, else (None, diagnostics with file,
    line, column and a hint). `envs`: the build's envs, when known (a rule for another env is an error)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return None, [D.error(BAD_EVOLVE, f"cannot read {path.name}: {e}", Span(str(path)))]
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        return None, [D.error(BAD_EVOLVE, f"{path.name} is not JSON: {e.msg}", Span(str(path), e.lineno, e.colno),
                              help="the file is JSON as `forgec evolve` writes it; fix it or delete it to build without rules")]
    diags: list[Diagnostic] = []

    def bad(msg: str, env: str | None = None, i: int | None = None, hint: str = "") -> None:
        line, col = _place(text, env, i)
        diags.append(D.error(BAD_EVOLVE, msg, Span(str(path), line, col), help=hint))

    if not isinstance(doc, dict) or not isinstance(doc.get("envs"), dict):
        bad(f"{path.name} must be an object with `version` and `envs`", hint='{"version": "1", "envs": {"<env>": {"rules": [...]}}}')
        return None, diags
    if str(doc.get("version")) != RULES_VERSION:
        bad(f"unknown rule file version {doc.get('version')!r}", hint=f'"version": "{RULES_VERSION}"')
    for env, body in doc["envs"].items():
        if envs is not None and env not in envs:
            bad(f"rules for env {env!r}, which the build does not have", env, hint=f"envs: {', '.join(sorted(envs))}")
        rules = body.get("rules") if isinstance(body, dict) else None
        if not isinstance(rules, list):
            bad(f"env {env!r}: `rules` must be a list", env)
            continue
        for i, r in enumerate(rules):
            if not isinstance(r, dict):
                bad(f"env {env!r}, rule {i + 1}: a rule is an object", env, i)
                continue
            if r.get("action") not in ACTIONS:
                bad(f"env {env!r}, rule {i + 1}: unknown action {r.get('action')!r}", env, i, hint="actions: " + ", ".join(ACTIONS))
            fam = r.get("family")
            if not isinstance(fam, dict) or not fam or any(k not in _FAMILY_FIELDS or not isinstance(v, _FAMILY_FIELDS[k])
                                                            for k, v in fam.items()):
                bad(f"env {env!r}, rule {i + 1}: `family` must be an object of kind (str), tools (list), condition (bool), shape (str)",
                    env, i, hint='"family": {"kind": "write", "tools": ["get_customer", "close_ticket"]}')
            if r.get("action") == "weight" and not (isinstance(r.get("weight"), (int, float)) and 0 < r["weight"] <= 1):
                bad(f"env {env!r}, rule {i + 1}: a weight rule needs `weight` in (0, 1]", env, i, hint='"weight": 0.5')
            if not isinstance(r.get("evidence", []), list):
                bad(f"env {env!r}, rule {i + 1}: `evidence` is a list of episode ids", env, i)
    return (None if diags else doc), diags


def rules_by_env(doc: dict | None) -> dict[str, Rules]:
    return {env: Rules(body["rules"]) for env, body in (doc or {}).get("envs", {}).items()}


def write_rules(path: Path, by_env: dict[str, list[dict]]) -> None:
    """Human-readable and diffable: envs sorted, rules sorted by (action, family), evidence sorted, 2-space JSON."""
    doc = {"version": RULES_VERSION, "envs": {}}
    for env in sorted(by_env):
        rules = [dict(sorted({**r, "evidence": sorted(set(r.get("evidence", [])))}.items())) for r in by_env[env]]
        rules.sort(key=lambda r: (r["action"], family_id({**{"kind": "", "tools": [], "condition": False, "shape": ""}, **r["family"]})))
        doc["envs"][env] = {"rules": rules}
    path.write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- the compiler's side: sampler hook and lowering


def decl_family(decl: Any, writes: set[str]) -> dict:
    """The family of a sampled blueprint (before it is run), spelled as runtime.curriculum.family_of spells a task's."""
    from forgec.lang import ast as A

    calls = [n.tool for n in decl.nodes if isinstance(n, A.CallNode)]
    tells = sum(1 for n in decl.nodes if isinstance(n, A.TellNode))
    wrote = any(t in writes for t in calls)
    kind = "question" if not wrote else ("write+tell" if tells else "write")
    return family_key(kind, calls, any(i.condition for i in decl.user.intents), [f.name for f in decl.user.facts],
                      sum(1 for n in decl.nodes if isinstance(n, A.ReasonNode)))


@dataclass
class SamplerRules:
    """What the scenario sampler asks of the rules (SampleConfig.evolve): reject a family, or thin it
    out by its curriculum weight (a seeded draw per attempt, apart from the sampler's own stream)."""

    rules: Rules
    writes: set[str]
    seed: int

    def verdict(self, decl: Any, attempt: int) -> str | None:
        fam = decl_family(decl, self.writes)
        if self.rules.rejecting(fam):
            return "evolve-rule"
        if not self.rules.keep(fam, random.Random(f"forgec-evolve:{self.seed}:{attempt}")):
            return "evolve-curriculum"
        return None


def apply_to_task(rules: Rules | None, task: Any) -> tuple[Any, str | None]:
    """The lowered task after the rules: (task, None), (repaired task, None), or (task, "evolve-rule") when rejected."""
    if not rules:
        return task, None
    fam = family_of(task)
    if rules.rejecting(fam):
        return task, "evolve-rule"
    if rules.relaxing(fam):
        return task.model_copy(update={"tell": []}), None
    if rules.tightening(fam) and task.tell:
        return task.model_copy(update={"tell_exclude": tell_competitors(task)}), None
    return task, None


# --------------------------------------------------------------------------- detectors


@dataclass
class Verdict:
    episode: str  # "<agent>:<task id>#<trial>"
    task: str
    env: str
    cls: str
    detector: str
    evidence: dict
    family: dict

    def to_json(self) -> dict:
        return {"episode": self.episode, "task": self.task, "env": self.env, "class": self.cls, "detector": self.detector,
                "evidence": self.evidence, "family": self.family}


def _norm(v: Any) -> str:
    return str(v).strip().lower()


def _entity_path(path: str) -> tuple[str, str, str] | None:
    """`/entities/Ticket/T1/status` -> (Ticket, T1, status)."""
    parts = path.split("/")
    if len(parts) >= 5 and parts[1] == "entities":
        return parts[2], parts[3], "/".join(parts[4:])
    return None


def _blueprint(build_dir: Path, task: Any) -> Any:
    from forgec import lang

    try:
        m, _ = lang.parse((build_dir / task.blueprint.path).read_text(encoding="utf-8"), str(build_dir / task.blueprint.path))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return next((b for b in m.blueprints if b.name == task.blueprint.name), None)


def _superlative_fields(bp: Any) -> set[str]:
    """Fields a superlative of the blueprint compares (`argmin(..., by: priority)`): said by the words "my lowest ..."."""
    from forgec.lang import ast as A

    out: set[str] = set()
    for n in (bp.nodes if bp is not None else ()):
        if isinstance(n, A.ReasonNode) and n.op in ("argmin", "argmax", "sort", "max", "min"):
            out |= {a.value.id for a in n.kwargs if a.name == "by" and isinstance(a.value, A.Name)}
    return out


def stated_fields(state: dict, ent: str, key: str, said: set[str], superl: set[str]) -> set[str]:
    """The fields of a record the instruction pins: values the user says, fields naming a record the user
    describes (its assignee "the agent called Jo"), and the fields a superlative compares."""
    recs = (state.get("entities") or {}).get(ent) or {}
    rec = recs.get(key) or {}
    out = said_fields(rec, said) | (superl & set(rec))
    # another record is described by what the user says of it in words: a number the user says (the new priority 3)
    # describes no agent whose ticket count happens to be 3 (a world's coincidence pinned the agent, this session)
    words = {x for x in said if not re.fullmatch(r"-?\d+(?:\.\d+)?", str(x))}
    for f, v in rec.items():
        hit = record_of(state, v)
        if hit and hit != (ent, key) and said_fields(state["entities"][hit[0]][hit[1]], words):
            out.add(f)
    # named by a record the user describes that points at it ("the agent of my pending ticket"): its identity is said
    for e2, rs in (state.get("entities") or {}).items():
        for k2, r2 in (rs.items() if isinstance(rs, dict) else ()):
            if (e2, k2) != (ent, key) and isinstance(r2, dict) and key in r2.values() and said_fields(r2, words):
                out.add("<identity>")
    return out


def unsaid_literals(bp: Any, task: Any) -> list[dict]:
    """Write arguments of the gold path that are literals the user never states."""
    from forgec.lang import ast as A

    if bp is None:
        return []
    writes = {g.node for g in task.gold_calls if g.write}
    # what the blueprint's author gave the user (`knows`): lowering adds the path's literals to the task's facts
    said = {str(f.value.value).strip().lower() for f in bp.user.facts if isinstance(f.value, A.Literal)}
    text = bp.user.goal  # the request as written: lowering appends every fact to the task's instruction
    out = []
    for n in bp.nodes:
        if isinstance(n, A.CallNode) and n.name in writes:
            for a in n.args:
                v = a.value.value if isinstance(a.value, A.Literal) else None
                if v is None or isinstance(v, bool):
                    continue
                if str(v).strip().lower() not in said and not told(v, text):
                    out.append({"call": n.name, "tool": n.tool, "argument": a.name, "value": v, "line": a.span.line or n.span.line})
    return out


def broken_rule(build_env: Any, task: Any, state: dict) -> dict | None:
    """The documented rule the gold path breaks, replayed through the quality gate's own checks (a value
    outside the docs' enum, listed values or bounds; a write to a record in a state the docs make final)."""
    if build_env is None:
        return None
    from forgec.gate import Gate, check_final, check_values

    decl, module, gates = build_env
    from forgec.runtime.envrt import tool_ident

    writes = [(tool_ident(module, g.tool, g.arguments), g.arguments) for g in task.gold_calls if g.write]  # the gate's own names
    if not writes:
        return None
    if "gate" not in gates:  # one gate per env (its lifecycle is read from the docs once)
        gates["gate"] = Gate(decl, module, state, dict(getattr(module, "WRITES_STATE", {})))
    gate = gates["gate"]
    gate.world = state
    trace = gate.replay(writes)
    if trace is None:
        return None
    for check in (check_values, check_final):
        why = check(None, gate, trace)
        if why:
            docs = {f"{t}.{p.name}": p.doc for t, _ in writes for p in gate.tools[t].params if p.doc} if why == "value-outside-docs" else {}
            return {"rule": why, "writes": [{"tool": t, "arguments": a} for t, a in writes], "docs": docs}
    return None


def env_decls(build_dir: Path, b: Any) -> dict[str, tuple]:
    """env -> (its parsed `src/<env>/env.forge` declaration, its loaded module), for the gate's checks."""
    from forgec import lang

    out = {}
    for env, module in b.envs.items():
        src = build_dir / "src" / env / "env.forge"
        try:
            m, _ = lang.parse(src.read_text(encoding="utf-8"), str(src))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if m.envs:
            out[env] = (m.envs[0], module, {})
    return out


def classify(task: Any, ep: Any, agent: str, state: dict, bp: Any, gold_eps: list[str], build_env: Any = None) -> Verdict | None:
    """The failure class of one episode (None for a passed one), with its evidence."""
    eid = f"{agent}:{task.id}#{ep.trial}"
    fam = family_of(task)

    def v(cls: str, det: str, **ev: Any) -> Verdict:
        return Verdict(eid, task.id, task.env, cls, det, ev, fam)

    if ep.judge is not None and ep.judge.user_error:
        return v("user-error", "meu-judge", judge=ep.judge.judge, reason=ep.judge.reason, errors=list(ep.judge.errors or []))
    if ep.reward >= 1.0:
        return None
    rb = ep.reward_breakdown or {}
    if rb.get("state_match"):
        untold = [t for t, ok in zip(task.tell, rb.get("tells_told", [])) if not ok]
        if not untold and rb.get("excluded_told"):
            return v("agent-error", "tell-hedged", excluded_told=rb["excluded_told"][:6],
                     why="the answer also gave other candidates; the tightened check wants the one answer")
        if untold and not asks_question(task):
            return v("check-defect", "tell-unasked", untold=untold, instruction=task.instruction,
                     why="the end state is gold's; the check wants values the user never asked for")
        return v("agent-error", "tell-not-given", untold=untold)
    diff = ep.state_diff or {}
    missing, extra = diff.get("missing", []), diff.get("extra", [])
    said = said_values(task)
    # left open: gold's change made on another record the instruction does not tell apart
    pairs = []
    for m in missing:
        pm = _entity_path(m["path"])
        if pm is None or m.get("changed"):
            continue
        for e in extra:
            pe = _entity_path(e["path"])
            if pe and pe[0] == pm[0] and pe[2] == pm[2] and pe[1] != pm[1] and e.get("after") == m.get("gold"):
                pairs.append((pm[0], pm[1], pe[1], pm[2]))
    if pairs:
        superl = _superlative_fields(bp)
        checked = []
        for ent, g, a, f in sorted(set(pairs)):
            pins = stated_fields(state, ent, g, said, superl)
            recs = state["entities"][ent]
            differ = sorted(x for x in pins if x == "<identity>" or recs.get(a, {}).get(x) != recs[g].get(x))
            checked.append({"entity": ent, "gold": g, "agent": a, "field": f, "stated": sorted(pins), "differ": differ})
        if all(not c["differ"] for c in checked):
            return v("task-defect", "left-open-record", records=checked, reached_gold=gold_eps,
                     why="the agent's record agrees with gold's on everything the instruction says")
    # a value the agent chose: an argument of a gold write (a balance a refund changed is no choice of the agent's)
    args = {_norm(x) for g in task.gold_calls if g.write for x in g.arguments.values() if not isinstance(x, (dict, list, bool))}
    for m in missing:
        hg, ha = record_of(state, m.get("gold")), record_of(state, m.get("got"))
        if hg or ha:  # an id set to another record: which record is meant is the record detector's question
            continue
        if m.get("changed") and _entity_path(m["path"]) and m.get("gold") is not None and _norm(m["gold"]) in args \
                and _norm(m["gold"]) not in said and not told(m["gold"], task.instruction):
            return v("task-defect", "left-open-value", path=m["path"], gold=m["gold"], got=m.get("got"), reached_gold=gold_eps,
                     why="the instruction never says the value gold sets")
    broke = broken_rule(build_env, task, state)
    if broke:
        return v("task-defect", "gold-breaks-doc", **broke, why="the gold path does what the docs forbid")
    lits = unsaid_literals(bp, task)
    if lits:
        asked = [msg.get("content") for msg in ep.messages if msg.get("role") == "user" and "don't know" in str(msg.get("content", ""))]
        return v("task-defect", "fact-unsaid", literals=lits, user_said=asked[:2], blueprint=task.blueprint.path,
                 why="a write needs a value the user never states")
    return v("agent-error", "diff", end_reason=ep.end_reason, missing=missing[:6], extra=extra[:6])


def loose_tell(task: Any, ep: Any, agent: str) -> Verdict | None:
    """`tell-loose`: a passed episode whose answer also told other candidates of a `tell` value (the same field
    of the other records the gold path read, `tell_competitors`): the check cannot tell the answer from a list."""
    if not task.tell or ep.reward < 1.0:
        return None
    said = "\n".join(str(m.get("content") or "") for m in ep.messages if m.get("role") == "assistant")
    hit = [c for c in tell_competitors(task) if told(c, said)]
    if not hit:
        return None
    last = next((str(m.get("content") or "") for m in reversed(ep.messages) if m.get("role") == "assistant"), "")
    return Verdict(f"{agent}:{task.id}#{ep.trial}", task.id, task.env, "check-defect", "tell-loose",
                   {"tell": list(task.tell), "also_told": hit[:6], "answer": last[:300],
                    "why": "the tell check passed an answer that also gives other records' values"}, family_of(task))


# --------------------------------------------------------------------------- rules from verdicts


def derive_rules(verdicts: list[Verdict], pass_rates: dict[str, dict[str, tuple[int, int]]], old: dict[str, list[dict]],
                 fams: dict[str, dict], failed: dict[str, list[str]] | None = None) -> tuple[dict[str, list[dict]], list[dict]]:
    """Old rules plus the new ones: a reject per task-defective family, a relax-tell per check-defective one,
    and a curriculum weight per measured family (replacing its old weight). Returns (rules by env, added)."""
    out = {env: [dict(r) for r in rs] for env, rs in old.items()}
    added: list[dict] = []

    def put(env: str, rule: dict) -> None:
        rs = out.setdefault(env, [])
        for r in rs:
            if r["action"] == rule["action"] and r["family"] == rule["family"]:
                if rule["action"] == "weight":  # the newest measurement replaces the old one
                    r.update({k: rule[k] for k in ("weight", "pass_rate", "episodes", "evidence", "class", "reason")})
                else:
                    r["evidence"] = sorted(set(r.get("evidence", [])) | set(rule.get("evidence", [])))
                return
        rs.append(rule)
        added.append({"env": env, **rule})

    by_fam: dict[tuple, list[Verdict]] = defaultdict(list)
    for vd in verdicts:
        if vd.cls in ("task-defect", "check-defect"):
            by_fam[(vd.env, vd.cls if vd.detector != "tell-loose" else "check-defect:tighten", family_id(vd.family))].append(vd)
    for (env, cls, _fid), vs in sorted(by_fam.items()):
        dets = sorted({x.detector for x in vs})
        action = "reject" if cls == "task-defect" else "tighten-tell" if dets == ["tell-loose"] else "relax-tell"
        put(env, {"action": action, "family": vs[0].family, "class": vs[0].cls,
                  "detector": ",".join(dets), "evidence": sorted({x.episode for x in vs}),
                  "reason": vs[0].evidence.get("why", "")})
    for env, rates in sorted(pass_rates.items()):
        for cid, (ok, n) in sorted(rates.items()):
            p = ok / n if n else 0.0
            fam = fams[cid]
            put(env, {"action": "weight", "family": fam, "class": "agent-error" if p < 1 else "mastered", "weight": pass_weight(p),
                      "pass_rate": round(p, 4), "episodes": n, "evidence": sorted((failed or {}).get(cid, []))[:8],
                      "reason": "harder families are preferred" if p >= MASTERED else "pass rate decides the share"})
    return out, added


# --------------------------------------------------------------------------- one round


@dataclass
class RoundResult:
    round: int
    verdicts: list[Verdict]
    classes: dict[str, int]
    added: list[dict]
    pass_by_family: dict[str, dict[str, float]]
    mix: dict[str, int]  # tasks per coarse family in the build evaluated
    episodes: int = 0
    tasks: int = 0
    reason_counts: dict = field(default_factory=dict)


def evaluate_round(build_dir: Path, agents: dict[str, Any], k: int, user_factory: Any, judge: Any, *, concurrency: int = 8,
                   limits: Any = None) -> tuple[Any, dict[str, list]]:
    """Episodes of every agent (name -> factory(task, trial) given the loaded build) over the build, k trials each."""
    from forgec.runtime import load
    from forgec.runtime.episode import EpisodeLimits
    from forgec.runtime.eval import evaluate

    b = load(build_dir)
    eps: dict[str, list] = {}
    for name, make in agents.items():
        res = evaluate(b, make(b), user_factory, judge, k, None, concurrency, limits=limits or EpisodeLimits())
        eps[name] = res.episodes
    return b, eps


def analyse(build_dir: Path, b: Any, eps: dict[str, list], round_no: int, old: dict[str, list[dict]]) -> tuple[RoundResult, dict]:
    """Classify the episodes, derive the rules; (the round's result, the new rules by env)."""
    verdicts: list[Verdict] = []
    rates: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    fams: dict[str, dict] = {}
    mix = Counter()
    for t in b.tasks:
        fam = family_of(t)
        cid = coarse_id(fam)
        fams[cid] = {k: fam[k] for k in ("kind", "tools", "condition")}
        mix[f"{t.env} {cid}"] += 1
    rated = [n for n in eps if n != "oracle"] or list(eps)  # the oracle is a reference, not the agent the mix is tuned for
    failed: dict[str, list[str]] = defaultdict(list)
    by_task = defaultdict(list)
    for name, es in eps.items():
        for e in es:
            by_task[e.task_id].append((name, e))
    decls = env_decls(build_dir, b)
    for t in b.tasks:
        runs = by_task.get(t.id, [])
        gold_eps = sorted(f"{n}:{t.id}#{e.trial}" for n, e in runs if e.reward >= 1.0)
        bp = None
        state = b.initial_state(t)
        for name, e in runs:
            if name in rated:
                r = rates[t.env][coarse_id(family_of(t))]
                r[0] += 1 if e.reward >= 1.0 else 0
                r[1] += 1
                if e.reward < 1.0:
                    failed[coarse_id(family_of(t))].append(f"{name}:{t.id}#{e.trial}")
            if e.reward >= 1.0 and not (e.judge is not None and e.judge.user_error):
                vd = loose_tell(t, e, name)
                if vd is not None:
                    verdicts.append(vd)
                continue
            if bp is None:
                bp = _blueprint(build_dir, t)
            vd = classify(t, e, name, state, bp, gold_eps, decls.get(t.env))
            if vd is not None:
                verdicts.append(vd)
    pass_rates = {env: {cid: (ok, n) for cid, (ok, n) in rs.items()} for env, rs in rates.items()}
    new, added = derive_rules(verdicts, pass_rates, old, fams, failed)
    classes = Counter(v.cls for v in verdicts)
    pbf = {env: {cid: round(ok / n, 4) for cid, (ok, n) in sorted(rs.items())} for env, rs in sorted(pass_rates.items())}
    rr = RoundResult(round_no, verdicts, {c: classes.get(c, 0) for c in CLASSES}, added, pbf, dict(sorted(mix.items())),
                     episodes=sum(len(x) for x in eps.values()), tasks=len(b.tasks))
    return rr, new


def mix_shift(before: dict[str, int], after: dict[str, int]) -> list[tuple[str, int, int]]:
    """Families whose number of tasks changed: (family, before, after)."""
    return [(f, before.get(f, 0), after.get(f, 0)) for f in sorted(set(before) | set(after)) if before.get(f, 0) != after.get(f, 0)]


def mix_buckets(mix: dict[str, int], pass_by_family: dict[str, dict[str, float]]) -> dict[str, float]:
    """Share of a build's tasks in families the agent never solved (0), solved sometimes (0 < p < 1), always
    solved (1), or that the round did not measure (unseen): the curriculum moves tasks into `sometimes`."""
    out = Counter()
    for key, n in mix.items():
        env, cid = key.split(" ", 1)
        p = pass_by_family.get(env, {}).get(cid)
        out["unseen" if p is None else "never" if p == 0 else "always" if p == 1 else "sometimes"] += n
    total = sum(out.values()) or 1
    return {k: round(out[k] / total, 4) for k in ("never", "sometimes", "always", "unseen")}
