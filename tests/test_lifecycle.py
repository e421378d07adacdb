"""Lifecycle verbs (interrupt, restart, stop, pause, start) move the target record's documented
state instead of logging the call; a no-argument document download returns its documented
text (forgec/synth/lifecycle.py). Two differently written sources: the Jupyter server's
Swagger 2 spec (state values quoted in a field's prose) and an OpenAPI 3 compute API (an enum)."""

from __future__ import annotations

import copy
from pathlib import Path

from conftest import CORPUS
from test_sql_differential import build

REPO = Path(__file__).resolve().parent.parent
JUPYTER = CORPUS / "openapi_jupyter_server"
VM = REPO / "tests" / "fixtures" / "lifecycle" / "vm_openapi.yaml"


def _world(m, ent: str, recs: dict) -> dict:
    from forgec.stdlib.values import generate_state

    w = generate_state(m.SCHEMA, seed=1, size=3)
    w["entities"][ent] = recs
    return w


def test_jupyter_interrupt_and_restart_move_execution_state():
    text, m = build(JUPYTER)
    for t in ("post_api_kernels_kernel_id_interrupt", "post_api_kernels_kernel_id_restart", "get_api_spec_yaml"):
        assert t not in m.LOG_TOOLS
    assert 'set kernel_id.execution_state = "idle"' in text and 'set kernel_id.execution_state = "starting"' in text
    assert m.WRITES_STATE["post_api_kernels_kernel_id_interrupt"] and not m.WRITES_STATE["get_api_spec_yaml"]
    k = {"id": "k1", "name": "python3", "last_activity": None, "connections": 1.0, "execution_state": "busy", "path": None}
    env = m.Env(_world(m, "Kernel", {"k1": copy.deepcopy(k)}))
    assert env.step("post_api_kernels_kernel_id_interrupt", {"kernel_id": "k1"})["execution_state"] == "idle"
    assert env.step("post_api_kernels_kernel_id_restart", {"kernel_id": "k1"})["execution_state"] == "starting"
    assert env.state["entities"]["Kernel"]["k1"]["execution_state"] == "starting"
    h = env.state_hash()
    assert env.step("get_api_spec_yaml", {}) == "Get the current spec for the notebook server's APIs."
    assert env.state_hash() == h


def test_compute_api_stop_pause_start():
    text, m = build(VM)
    assert m.LOG_TOOLS == []
    rec = {"instance_id": "i1", "name": "web", "status": "running"}
    env = m.Env(_world(m, "Instance", {"i1": dict(rec)}))
    assert env.step("pause_instance", {"instance_id": "i1"})["status"] == "paused"
    assert env.step("stop_instance", {"instance_id": "i1"})["status"] == "stopped"
    assert env.step("start_instance", {"instance_id": "i1"})["status"] == "running"


def test_no_documented_state_no_rule():
    from types import SimpleNamespace

    from forgec.lang import ast as A
    from forgec.synth.lifecycle import status_move
    from forgec.synth.schema import Entity, Field

    ent = Entity("Job", "job_id", "str", {"job_id": Field("job_id", A.PrimType("str"), "", None),
                                           "status": Field("status", A.PrimType("str"), "free text", None)}, "")
    s = SimpleNamespace(entities={"Job": ent})
    v = SimpleNamespace(target="Job", toks=["stop", "job"], tool=SimpleNamespace(description="Stop a job."))
    assert status_move(s, v, "job_id") is None  # no documented values: the verb alone invents nothing
    ent.fields["status"] = Field("status", A.PrimType("str"), "One of 'queued', 'running' or 'stopped'.", None)
    assert status_move(s, v, "job_id") == [A.Set(A.Attr(A.Name("job_id"), "status"), A.Literal("stopped"))]
