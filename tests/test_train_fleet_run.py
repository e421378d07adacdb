"""`forgec train` with the vllm backend over a fleet of two servers (fake vLLM servers on 127.0.0.1,
tests/fakevllm.py; the real vLLM version of this is tests/test_vllm_integration.py's fleet test):
requests spread over both, every update reaches both (their versions match the trainer's), and a
server killed mid-run loses no step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fakevllm import FakeVLLM  # noqa: E402

SETS = ["optim.steps=3", "rollout.tasks_per_step=4", "rollout.group_size=2", "rollout.max_new_tokens=8", "rollout.max_turns=2",
        "rollout.backend=vllm", "rollout.concurrency=8", "algo.dynamic_filtering=false", "checkpoint.every=0",
        "checkpoint.export_hf=false", "logging.tensorboard=false", "rollout.request_timeout=20"]


def test_train_over_two_servers_spreads_syncs_both_and_survives_a_dead_one(tmp_path):
    from forgec.train.toybuild import make_toy_build

    make_toy_build(tmp_path / "build", tasks_per_env=4)
    with FakeVLLM("a", delay=0.01) as a, FakeVLLM("b", delay=0.01) as b:
        metrics = tmp_path / "rl" / "metrics.jsonl"

        def kill_after_first_step():
            for _ in range(3000):
                if metrics.exists() and metrics.read_text().count("\n") >= 1:
                    a.kill()
                    return
                time.sleep(0.1)

        killer = threading.Thread(target=kill_after_first_step, daemon=True)
        killer.start()
        args = [f"--set={x}" for x in [*SETS, f"rollout.vllm_base_urls=[{a.url}, {b.url}]"]]
        env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu")
        r = subprocess.run([sys.executable, "-m", "forgec", "train", "build", "-c", "cpu-tiny", "-o", "rl", *args], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        recs = [json.loads(x) for x in metrics.read_text().splitlines()]
        assert [x["step"] for x in recs] == [1, 2, 3]  # no step lost
        first = recs[0]["servers"]
        n = first[a.url]["requests"] + first[b.url]["requests"]
        assert first[a.url]["requests"] >= 0.3 * n and first[b.url]["requests"] >= 0.3 * n
        # step 1's update reached both servers: both report the trainer's new version
        assert first[a.url]["version"] == first[b.url]["version"] == 1
        assert a.version == 1 and len(a.reloads) == 1 and recs[0]["servers_consistent"] is True
        assert recs[0]["weight_sync"] == "reload"
        # every server reports the version the sync stamped on it (/weight_info), and each reload paused it and
        # reset its prefix cache (checked) before resuming
        assert recs[0]["server_weight_versions"] == {a.url: "1", b.url: "1"}
        assert recs[-1]["server_weight_versions"] == {a.url: None, b.url: "3"}
        assert b.calls[:5] == ["/pause", "/collective_rpc", "/reset_prefix_cache", "/update_weight_version", "/resume"]
        # a died after step 1: out from step 2 on, b carried every request, the run went on
        later = recs[1]["servers"]
        assert later[a.url]["alive"] is False and later[b.url]["requests"] > 0
        assert b.version == 3 and recs[-1]["servers"][b.url]["version"] == 3
        assert all(x["episodes"] == 8 for x in recs)
