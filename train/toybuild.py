"""A small hand-made build folder (docs/contracts.md layout) for trainer tests and benches.

Two deliberately easy environments, so a tiny model can learn them on CPU in minutes:
`lights` (turn a named light on or off) and `thermostat` (set a room's temperature).
Each task is one write call whose argument values appear in the user's instruction;
the gold state hash is computed by running the env module, exactly as the compiler does.
The env modules follow the generated-module contract (ENV_NAME, TOOLS, Env.step returning
ToolError instances, state_hash), using `forgec.runtime.envrt` like generated code.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import random
import sys
from pathlib import Path

import forgec
from forgec.tasks import Task
from forgec.runtime.loader import record_files

_HEADER = '''"""Hand-written env module (contract of build/envs/<env>/env.py)."""
import copy
from forgec.runtime.envrt import ToolError, state_hash as _state_hash

'''

# the part every env module shares: state holder, reset, hash, unknown-tool check (@ENTITY@ = its one entity)
_ENV_CLASS = '''

class Env:
    def __init__(self, state=None):
        self._state = {"entities": {"@ENTITY@": {}}, "globals": {}}
        if state is not None:
            self.reset(state)

    def reset(self, state):
        self._state = copy.deepcopy(state)

    @property
    def state(self):
        return self._state

    def state_hash(self):
        return _state_hash(self._state)

    def step(self, tool, args):
        if tool not in TOOL_KINDS:
            return ToolError(f"unknown tool {tool!r}", "unknown-tool")
'''


def _env_source(declarations: str, entity: str, step_body: str) -> str:
    """One env module's text: module declarations, the shared Env class, then the tool logic of `step`."""
    return _HEADER + declarations + _ENV_CLASS.replace("@ENTITY@", entity) + step_body


LIGHTS_ENV = _env_source('''ENV_NAME = "lights"
TOOLS = [
    {"type": "function", "function": {"name": "turn_on", "description": "Turn a light on.",
     "parameters": {"type": "object", "properties": {"light_id": {"type": "string"}}, "required": ["light_id"]}}},
    {"type": "function", "function": {"name": "turn_off", "description": "Turn a light off.",
     "parameters": {"type": "object", "properties": {"light_id": {"type": "string"}}, "required": ["light_id"]}}},
]
TOOL_KINDS = {"turn_on": "update", "turn_off": "update"}
WRITES_STATE = {"turn_on": True, "turn_off": True}
SCHEMA = {"entities": {"Light": {"key": "light_id", "fields": {"light_id": "str", "on": "bool"}}}, "records": {}, "globals": {}}
SOURCE_MAP = {}
''', "Light", '''        if not isinstance(args, dict) or set(args) != {"light_id"} or not isinstance(args["light_id"], str):
            return ToolError("expected exactly one string argument light_id", "invalid-arguments")
        light = self._state["entities"]["Light"].get(args["light_id"])
        if light is None:
            return ToolError(f"no light {args['light_id']!r}", "not-found")
        light["on"] = tool == "turn_on"
        return {"light_id": light["light_id"], "on": light["on"]}
''')

THERMO_ENV = _env_source('''ENV_NAME = "thermostat"
TOOLS = [
    {"type": "function", "function": {"name": "set_temperature", "description": "Set a room's target temperature.",
     "parameters": {"type": "object", "properties": {"room": {"type": "string"}, "degrees": {"type": "integer"}},
                    "required": ["room", "degrees"]}}},
]
TOOL_KINDS = {"set_temperature": "update"}
WRITES_STATE = {"set_temperature": True}
SCHEMA = {"entities": {"Room": {"key": "room", "fields": {"room": "str", "degrees": "int"}}}, "records": {}, "globals": {}}
SOURCE_MAP = {}
''', "Room", '''        if not isinstance(args, dict) or set(args) != {"room", "degrees"}:
            return ToolError("expected arguments room, degrees", "invalid-arguments")
        if not isinstance(args["degrees"], int) or isinstance(args["degrees"], bool):
            return ToolError("degrees must be an integer", "invalid-arguments")
        room = self._state["entities"]["Room"].get(args["room"])
        if room is None:
            return ToolError(f"no room {args['room']!r}", "not-found")
        room["degrees"] = args["degrees"]
        return {"room": room["room"], "degrees": room["degrees"]}
''')

LIGHT_IDS = ["L1", "L2", "L3", "L4", "L5", "L6"]
ROOMS = ["kitchen", "bedroom", "office", "hall"]


def _load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(f"_toybuild_{name}_{abs(hash(str(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _task(env_mod, env: str, name: str, seed: int, state: dict, instruction: str, goal: str,
          calls: list[tuple[str, dict]]) -> dict:

    e = env_mod.Env(state)
    init_hash = e.state_hash()
    gold = []
    for i, (tool, args) in enumerate(calls):
        res = e.step(tool, args)
        assert not isinstance(res, Exception), res
        gold.append({"node": f"c{i}", "tool": tool, "arguments": args, "result": res})
    before = state["entities"]
    diff = []
    for ent, coll in sorted(e.state["entities"].items()):
        for key, rec in sorted(coll.items()):
            for f, v in sorted(rec.items()):
                old = before[ent][key][f]
                if old != v:
                    diff.append({"op": "change", "path": f"/entities/{ent}/{key}/{f}", "before": old, "after": v})
    t = Task(id=f"{env}/{name}", env=env, blueprint={"path": f"blueprints/{env}/{name}.forge", "hash": "0" * 64, "name": name},
             seed=seed, initial_state=state, initial_state_hash=init_hash, instruction=instruction,
             user={"goal": goal, "facts": {}}, gold_calls=gold, gold_state_hash=e.state_hash(), gold_diff=diff,
             stats={"calls": len(calls), "write_calls": len(calls)})
    return json.loads(t.model_dump_json())


def make_toy_build(out: str | Path, seed: int = 0, tasks_per_env: int = 8, envs: tuple[str, ...] = ("lights", "thermostat"),
                   light_ids: tuple[str, ...] = tuple(LIGHT_IDS)) -> Path:
    """Write the build folder and return its path (deterministic for a seed).

    `light_ids` limits which lights the `lights` tasks target (the learning check's easy env
    targets one light).
    """
    out = Path(out)
    rng = random.Random(seed)
    sources = {"lights": LIGHTS_ENV, "thermostat": THERMO_ENV}
    mods = {}
    for env, src in sources.items():
        d = out / "envs" / env
        d.mkdir(parents=True, exist_ok=True)
        (d / "env.py").write_text(src)
        mods[env] = _load_module(env, d / "env.py")
    tasks: dict[str, list[dict]] = {"lights": [], "thermostat": []}
    for i in range(tasks_per_env):
        lid = light_ids[i % len(light_ids)]
        on = rng.random() < 0.5
        state = {"entities": {"Light": {x: {"light_id": x, "on": (x != lid) == on} for x in LIGHT_IDS}}, "globals": {}}
        # the target light starts in the opposite state of what the user wants
        state["entities"]["Light"][lid]["on"] = not on
        verb = "on" if on else "off"
        tasks["lights"].append(_task(mods["lights"], "lights", f"turn_{verb}_{lid.lower()}_{i}", seed + i, state,
                                     f"Please turn {verb} light {lid}.", f"light {lid} is {verb}",
                                     [(f"turn_{verb}", {"light_id": lid})]))
        room = ROOMS[i % len(ROOMS)]
        deg = 18 + (i * 3 + rng.randint(0, 2)) % 8
        state = {"entities": {"Room": {r: {"room": r, "degrees": 20 if r != room else 26} for r in ROOMS}}, "globals": {}}
        tasks["thermostat"].append(_task(mods["thermostat"], "thermostat", f"set_{room}_{deg}_{i}", seed + 100 + i,
                                         copy.deepcopy(state), f"Please set the {room} to {deg} degrees.",
                                         f"{room} at {deg} degrees", [("set_temperature", {"room": room, "degrees": deg})]))
    tasks = {e: ts for e, ts in tasks.items() if e in envs}
    for e in sources:
        if e not in envs:
            (out / "envs" / e / "env.py").unlink()
            (out / "envs" / e).rmdir()
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    for env, ts in tasks.items():
        ts.sort(key=lambda t: t["id"])
        (out / "tasks" / f"{env}.jsonl").write_text("".join(json.dumps(t, sort_keys=True) + "\n" for t in ts))
    manifest = {
        "metadata": {"schema_version": "1.0", "forgec_version": forgec.__version__, "generated_at": "1970-01-01T00:00:00Z",
                     "invocation_id": "toybuild", "seed": seed, "options": {"toy": True}},
        "envs": {env: {"task_count": len(ts)} for env, ts in tasks.items()},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")

    record_files(out)  # the file hashes the runtime's integrity check compares with
    return out
