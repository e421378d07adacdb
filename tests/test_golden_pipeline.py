"""Input -> expected-output goldens of three pipeline stages (how to review: tests/golden/README.md).

* tests/golden/synth/:   tool docs -> the synthesized `env.forge` (rules backend)
* tests/golden/codegen/: `.forge` env -> the generated `env.py`
* tests/golden/lower/:   blueprint (+ env and a hand-written world state) -> the task record

A changed output fails with a unified diff; `pytest --update-golden` rewrites the expected files.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from conftest import CORPUS
from forgec import lang
from forgec.codegen import emit_env, load_env_module
from forgec.diagnostics import has_errors
from forgec.frontends import read_paths
from forgec.lang import ast as A
from forgec.lower import Rejected, lower_blueprint
from forgec.synth import synthesize

GOLDEN = Path(__file__).parent / "golden"
SYNTH_INPUTS = sorted(p for p in (GOLDEN / "synth").iterdir() if not p.name.endswith(".forge"))
CODEGEN_INPUTS = sorted((GOLDEN / "codegen").glob("*.forge"))
LOWER_ENVS = sorted(p.with_name(p.name.removesuffix(".state.json") + ".forge") for p in (GOLDEN / "lower").glob("*.state.json"))
LOWER_BLUEPRINTS = sorted(p for p in (GOLDEN / "lower").glob("*.forge") if p not in LOWER_ENVS)


def check_golden(path: Path, got: str, update: bool) -> None:
    """Compare `got` with the expected file; on a difference fail with a unified diff."""
    rel = path.relative_to(GOLDEN.parent.parent)
    if update:
        path.write_text(got, encoding="utf-8")
        return
    assert path.is_file(), f"missing golden {rel}; run `pytest tests/test_golden_pipeline.py --update-golden` and review it"
    want = path.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), f"{rel} (expected)", f"{rel} (got)", n=2))
        pytest.fail(f"{rel} changed. If the change is intended, run `pytest tests/test_golden_pipeline.py --update-golden` "
                    f"and commit the rewritten file with the change that caused it.\n{diff}", pytrace=False)


# --------------------------------------------------------------------------- docs -> .forge


def case_of(path: Path) -> str:
    return path.name.split(".")[0]


def doc_input(path: Path, tmp_path: Path) -> Path:
    """The doc file to read: the fixture itself, or a cut of a tests/corpus/core file.

    A `.cut.json` names a corpus file and the tools (or, for OpenAPI/Swagger, the paths)
    to keep; the cut is made at test time, so the corpus file stays the upstream file byte for byte."""
    if not path.name.endswith(".cut.json"):
        return path
    spec = json.loads(path.read_text(encoding="utf-8"))
    src = CORPUS / spec["source"]
    assert src.is_file(), f"test corpus file missing: {src}"
    data = yaml.safe_load(src.read_text(encoding="utf-8")) if src.suffix in (".yaml", ".yml") else json.loads(src.read_text(encoding="utf-8"))
    keep = spec["keep"]
    if isinstance(data, list):  # OpenAI function-calling list
        data = [t for t in data if (t.get("function") or t).get("name") in keep]
    elif "tools" in data:  # MCP tools/list
        data = {**data, "tools": [t for t in data["tools"] if t["name"] in keep]}
    else:  # OpenAPI / Swagger: keep these paths (all definitions stay)
        data = {**data, "paths": {k: v for k, v in data["paths"].items() if k in keep}}
    found = len(data) if isinstance(data, list) else len(data.get("tools") or data.get("paths"))
    assert found == len(keep), f"{path.name}: only {found} of {len(keep)} kept items exist in {spec['source']}"
    out = tmp_path / f"{case_of(path)}.json"
    out.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return out


def synthesized_text(path: Path, tmp_path: Path) -> str:
    """What `forgec compile` writes to src/<env>/env.forge, preceded by the synthesis warnings."""
    envs, diags = read_paths([doc_input(path, tmp_path)])
    assert not has_errors(diags), diags
    assert [e.name for e in envs] == [case_of(path)]
    decl, sd = synthesize(envs[0])
    head = "".join(f"// {d.severity.value}[{d.code}]: {d.message}\n" for d in sd)
    return head + lang.format(A.Module(file=f"src/{case_of(path)}/env.forge", items=(decl,)))


@pytest.mark.parametrize("path", SYNTH_INPUTS, ids=[case_of(p) for p in SYNTH_INPUTS])
def test_synth_golden(path: Path, tmp_path: Path, update_golden: bool) -> None:
    check_golden(path.with_name(case_of(path) + ".forge"), synthesized_text(path, tmp_path), update_golden)


def test_synth_goldens_cover_every_doc_format(tmp_path: Path) -> None:
    """The inputs are read as five formats, from examples/, the test corpus and a hand-written file."""
    formats = {}
    for path in SYNTH_INPUTS:
        envs, _ = read_paths([doc_input(path, tmp_path)])
        formats[case_of(path)] = {t.format for t in envs[0].tools}
    assert set().union(*formats.values()) >= {"openai", "mcp", "openapi", "swagger", "bfcl"}, formats
    assert any(p.name.endswith(".cut.json") for p in SYNTH_INPUTS) and any(not p.name.endswith(".cut.json") for p in SYNTH_INPUTS)


@pytest.mark.parametrize("path", SYNTH_INPUTS, ids=[case_of(p) for p in SYNTH_INPUTS])
def test_synth_golden_checks_clean(path: Path) -> None:
    """Every expected env.forge is a valid environment on its own (the checker is independent of synthesis)."""
    expected = path.with_name(case_of(path) + ".forge")
    mod, pd = lang.parse(expected.read_text(encoding="utf-8"), str(expected))
    assert not has_errors(pd + lang.check([mod])), expected.name
    assert [e.name for e in mod.envs] == [case_of(path)]


# --------------------------------------------------------------------------- .forge -> env.py


def checked_env(path: Path, text: str | None = None) -> A.EnvDecl:
    mod, pd = lang.parse(text if text is not None else path.read_text(encoding="utf-8"), str(path))
    cd = lang.check([mod])
    assert not has_errors(pd + cd), [str(d.message) for d in pd + cd if d.is_error]
    return mod.envs[0]


@pytest.mark.parametrize("path", CODEGEN_INPUTS, ids=[p.stem for p in CODEGEN_INPUTS])
def test_codegen_golden(path: Path, update_golden: bool) -> None:
    env = checked_env(path)
    check_golden(path.with_name(path.stem + ".env.py.txt"), emit_env(env, f"src/{env.name}/env.forge"), update_golden)


@pytest.mark.parametrize("path", CODEGEN_INPUTS, ids=[p.stem for p in CODEGEN_INPUTS])
def test_codegen_golden_is_a_module_for_its_env(path: Path, tmp_path: Path) -> None:
    """The expected env.py imports and exposes exactly the tools and entities the .forge declares."""
    env = checked_env(path)
    mod_path = tmp_path / "env.py"
    mod_path.write_text(path.with_name(path.stem + ".env.py.txt").read_text(encoding="utf-8"), encoding="utf-8")
    module = load_env_module(mod_path)
    assert sorted(module.TOOL_KINDS) == sorted(t.name for t in env.tools)
    assert list(module.SCHEMA["entities"]) == [e.name for e in env.entities]


# --------------------------------------------------------------------------- blueprint -> task


def lowered_text(bp_path: Path, tmp_path: Path) -> str:
    """The task record of one blueprint, lowered as `forgec compile` does (or why it was rejected)."""
    (env_path,) = LOWER_ENVS  # one env for now; blueprints name it with `for`
    env_text = env_path.read_text(encoding="utf-8")
    bp_bytes = bp_path.read_bytes()
    env_mod, _ = lang.parse(env_text, str(env_path))
    bp_mod, pd = lang.parse(bp_bytes.decode("utf-8"), str(bp_path))
    diags = pd + lang.check([env_mod, bp_mod])
    assert not has_errors(diags), [d.message for d in diags if d.is_error]
    env = env_mod.envs[0]
    mod_path = tmp_path / "env.py"
    mod_path.write_text(emit_env(env, f"src/{env.name}/env.forge"), encoding="utf-8")
    module = load_env_module(mod_path)
    world = json.loads(env_path.with_name(env_path.stem + ".state.json").read_text(encoding="utf-8"))
    base = module.Env(world)
    try:
        lr = lower_blueprint(
            bp_mod.blueprints[0], module, world,
            env_name=env.name,
            blueprint_path=f"blueprints/{env.name}/{bp_path.name}",
            blueprint_hash=hashlib.sha256(bp_bytes).hexdigest(),
            seed=0,
            initial_state_file=f"states/{env.name}.json",
            initial_state_hash=base.state_hash(),
            base_env=base,
        )
    except Rejected as r:
        record = {"rejected": r.reason, "detail": r.detail}
    else:
        record = lr.task.model_dump(mode="json")
    return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("path", LOWER_BLUEPRINTS, ids=[p.stem for p in LOWER_BLUEPRINTS])
def test_lower_golden(path: Path, tmp_path: Path, update_golden: bool) -> None:
    check_golden(path.with_name(path.stem + ".task.json"), lowered_text(path, tmp_path), update_golden)


def _task(name: str) -> dict:
    return json.loads((GOLDEN / "lower" / f"{name}.task.json").read_text(encoding="utf-8"))


def _diff(task: dict) -> dict:
    return {d["path"]: d.get("after") for d in task["gold_diff"]}


def test_lower_goldens_hold_hand_computed_values() -> None:
    """The reviewed task records agree with values worked out by hand from shop.state.json."""
    buy = _task("buy_and_pay")
    assert [c["tool"] for c in buy["gold_calls"]] == ["search_products", "create_order", "pay_order"]
    assert [p["product_id"] for p in buy["gold_calls"][0]["result"]] == ["p_lamp", "p_mug"]  # "home", by price
    order = buy["gold_calls"][1]["result"]
    assert order["total"] == 33.33  # round((10.1 + 20.2) * 1.1, 2)
    assert buy["gold_calls"][2]["result"]["status"] == "paid"
    assert buy["tell"][0] == pytest.approx(30.3)  # sum of the two prices (exact float spelling is the registry's call)
    assert buy["read_only"] is False and buy["user"]["facts"] == {"customer_id": "c_ada", "tag": "home"}  # a literal argument is a fact too
    diff = _diff(buy)
    assert diff["/entities/Customer/c_ada/credit"] == pytest.approx(500 - 33.33)
    assert diff["/entities/Product/p_lamp/stock"] == 2 and diff["/entities/Product/p_mug/stock"] == 0
    cheap = _task("cheapest_in_stock")
    assert cheap["tell"] == ["Desk lamp"] and cheap["read_only"] is True and cheap["gold_diff"] == []
    summary = _task("summary_of_order")
    assert summary["tell"][0] == 3 and summary["tell"][1] == 40  # 2 + 1 items; round(40.4)
    assert _task("pay_too_much")["rejected"] == "gold-call-failed"  # 22.22 due, 20.0 of credit
    keys = _task("records_as_keys")  # records given for entity parameters are sent as their keys
    assert keys["gold_calls"][2]["arguments"] == {"customer_id": "c_ada", "product_ids": ["p_lamp", "p_mug"]}
    assert keys["tell"] == [33.33]


def test_conservative_log_records_the_keys_passed(tmp_path: Path) -> None:
    """`borrow_book` has no rule: its ActionLog entry spells each entity argument as the key the
    agent passed (a record rendered whole would log differently once the record changes)."""
    env = checked_env(GOLDEN / "synth" / "library_bfcl.forge")
    mod_path = tmp_path / "env.py"
    mod_path.write_text(emit_env(env, "src/library_bfcl/env.forge"), encoding="utf-8")
    module = load_env_module(mod_path)
    world = {
        "entities": {
            "Member": {"M-1": {"member_id": "M-1", "name": "Ann", "email": None, "loan_ids": []}},
            "Book": {"B-7": {"book_id": "B-7", "title": "Dune", "author": None, "copies_available": 1, "price": None,
                             "loan_id": None, "member_id": None, "due": None}},
            "Loan": {},
            "ActionLog": {},
        },
        "globals": {},
    }
    e = module.Env(world)
    e.step("borrow_book", {"member_id": "M-1", "book_id": "B-7"})
    assert [r["args"] for r in e.state["entities"]["ActionLog"].values()] == ["member_id=M-1, book_id=B-7"]
