"""`forgec export tau2 BUILD -o DIR`: a build's tasks in τ²-bench's data layout (one domain per env).

    DIR/domains/<env>/tasks.json        τ²-bench `Task` objects (tau2.data_model.tasks)
    DIR/domains/<env>/split_tasks.json  {"base": [task ids]}
    DIR/domains/<env>/db.json           the env's world state, every task's initial state (forgec's layout)
    DIR/domains/<env>/policy.md         the agent's instructions (`forgec eval`'s system prompt) and the tools
    DIR/domains/<env>/tools.json        the env's tools (OpenAI format)
    DIR/README.md, DIR/forgec-export.json

A forgec task maps onto a τ² task as follows: the user scenario (persona, reason for the call, known and unknown
information, the instruction in the user's voice) becomes `user_scenario` with structured instructions; the gold
calls become `evaluation_criteria.actions` (the reference trajectory τ² replays to derive the target DB state,
as forgec's gold state hash is the state after them); every `tell` value becomes `communicate_info` text; the
reward basis is DB (and COMMUNICATE when the task has tell values), as forgec's reward. A task whose initial state
is inline carries it as `initial_state.initialization_data.agent_data`.

τ²-bench runs a domain's tools as Python code of its own (`tau2.domains.<domain>.tools`); the tools here are
forgec's generated env (`envs/<env>/env.py`), so running a domain under τ²'s orchestrator needs a toolkit that
forwards calls to `Env.step` (not written here; see docs/export.md).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from forgec.export import staged, write_marker
from forgec.tasks import Task
from forgec.wording import say, split_name
from forgec.runtime.episode import AGENT_SYSTEM_PROMPT, build_policy



def _leaves(v: Any) -> list[str]:
    """The text of each scalar inside a tell value (τ² checks each `communicate_info` string as a substring)."""
    if isinstance(v, dict):
        return [x for k in v for x in _leaves(v[k])]
    if isinstance(v, list):
        return [x for i in v for x in _leaves(i)]
    if v is None:
        return []
    if isinstance(v, bool):
        return ["true" if v else "false"]
    if isinstance(v, float):
        return [f"{v:g}" if abs(v) < 1e15 else repr(v)]
    return [str(v)]


def tau2_task(task: Task) -> dict:
    """One forgec task as a τ²-bench `Task` object (JSON)."""
    sc = task.user.scenario
    known = sc.known_info if sc is not None else task.user.facts
    known_text = "\n".join(f"{' '.join(split_name(k))}: {say(v)}" for k, v in sorted(known.items()))
    unknown = list(sc.unknown_info) if sc is not None else []
    instructions = {
        "domain": task.env,
        "reason_for_call": (sc.reason_for_call if sc is not None and sc.reason_for_call else task.user.goal),
        "known_info": known_text or None,
        "unknown_info": ("You do not know: " + "; ".join(unknown)) if unknown else None,
        "task_instructions": (sc.task_instructions if sc is not None else task.instruction),
    }
    persona = (sc.persona if sc is not None else task.user.persona) or None
    tells = [x for v in task.tell for x in _leaves(v)]
    criteria: dict[str, Any] = {
        "actions": [{"action_id": f"{i}_{g.node}", "requestor": "assistant", "name": g.tool, "arguments": g.arguments,
                     "info": "writes" if g.write else "reads"} for i, g in enumerate(task.gold_calls)],
        "reward_basis": ["DB", "COMMUNICATE"] if tells else ["DB"],
    }
    if tells:
        criteria["communicate_info"] = tells
    out: dict[str, Any] = {
        "id": task.id.split("/", 1)[-1],
        "description": {"purpose": f"forgec task {task.id}", "notes": f"gold state hash {task.gold_state_hash}"},
        "user_scenario": {"persona": persona, "instructions": instructions},
        "ticket": task.instruction,
        "evaluation_criteria": criteria,
    }
    if task.initial_state is not None:
        out["initial_state"] = {"initialization_data": {"agent_data": task.initial_state}}
    return out


def _policy(env: str, tools: list[dict], pages: str = "") -> str:
    """τ²-bench's policy.md: eval's instructions, the docs' own policy pages (when they had any), the tools."""
    lines = [f"# {env} agent policy", "", AGENT_SYSTEM_PROMPT, ""]
    if pages.strip():
        lines += ["## Policy", "", pages.strip(), ""]
    lines += ["## Tools", ""]
    for t in tools:
        fn = t["function"]
        lines.append(f"* `{fn['name']}`: {' '.join((fn.get('description') or '').split())}")
    return "\n".join(lines) + "\n"


def _dir_name(env: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", env)


def export_tau2(build: Any, out: Path) -> dict[str, int]:
    """Write the loaded `build` in τ²-bench's layout to `out` (replaced as a whole); returns tasks per env."""
    counts: dict[str, int] = {}
    with staged(Path(out)) as tmp:
        for env in sorted(build.envs):
            mod = build.envs[env]
            tasks = sorted((t for t in build.tasks if t.env == env), key=lambda t: t.id)
            d = tmp / "domains" / _dir_name(env)
            d.mkdir(parents=True)
            tools = list(getattr(mod, "TOOLS", []))
            (d / "tasks.json").write_text(json.dumps([tau2_task(t) for t in tasks], indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            (d / "split_tasks.json").write_text(json.dumps({"base": [t.id.split("/", 1)[-1] for t in tasks]}, indent=2) + "\n")
            (d / "tools.json").write_text(json.dumps(tools, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            (d / "policy.md").write_text(_policy(env, tools, build_policy(build, env)), encoding="utf-8")
            state_file = next((t.initial_state_file for t in tasks if t.initial_state_file), f"states/{env}.json")
            src = Path(build.root) / state_file
            if src.is_file():
                shutil.copyfile(src, d / "db.json")
            counts[env] = len(tasks)
        (tmp / "README.md").write_text(
            "# forgec build in τ²-bench's data layout\n\nOne domain per environment under `domains/`: `tasks.json` "
            "(τ²-bench `Task` objects), `split_tasks.json`, `db.json` (the world state every task starts from), "
            "`policy.md`, `tools.json`. Made by `forgec export tau2`; see forgec's docs/export.md.\n", encoding="utf-8")
        write_marker(tmp, build, "tau2", counts)
    return counts
