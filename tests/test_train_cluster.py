"""Cluster configs: the shipped ones validate through `forgec train --show-config`, impossible layouts
fail with the field to fix, and the start-up environment checks catch a launcher that does not
match the config (before DeepSpeed would hang in a collective)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from forgec.train.cluster import check_environment, plan, server_layout
from forgec.train.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))


def show(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "forgec", "train", "build", "--show-config", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, HF_HUB_OFFLINE="1"))


def test_every_shipped_config_validates_and_cluster_ones_exist():
    assert {"cluster-qwen3-30b-a3b", "cluster-qwen3-8b-fleet", "cluster-cpu", "qwen3-8b-zero3", "qwen3-30b-a3b-zero3"} <= set(SHIPPED)
    for name in SHIPPED:
        load_config(name)  # raises on any invalid field or layout


def test_show_config_prints_the_plan_of_a_cluster_config():
    r = show("-c", "cluster-qwen3-30b-a3b")
    assert r.returncode == 0, r.stderr
    assert "## Cluster plan" in r.stdout
    assert "- node 7: trainer ranks 28-31; vLLM on port 8765 GPUs 4,5,6,7 tp=4" in r.stdout
    r = show("-c", "cluster-qwen3-8b-fleet")
    assert r.returncode == 0 and "rollout servers (already running): http://rollout-0:8000/v1" in r.stdout
    assert "simulated-user servers: http://user-0:9000/v1" in r.stdout


def test_show_config_rejects_a_layout_that_does_not_fit():
    r = show("-c", "cluster-qwen3-30b-a3b", "--set", "rollout.servers_per_node=2")
    assert r.returncode != 0
    assert "rollout.servers_per_node (2) x rollout.tensor_parallel_size (4) need 8 GPUs per node, rollout_gpus_per_node is 4" in r.stderr
    with pytest.raises(ConfigError, match=r"procs_per_node \(6\) \+ rollout_gpus_per_node \(4\) exceed gpus_per_node \(8\)"):
        load_config("cluster-qwen3-30b-a3b", ["cluster.procs_per_node=6"])
    with pytest.raises(ConfigError, match="user=llm needs rollout.user_base_urls"):
        load_config("cpu-tiny", ["rollout.user=llm"])


def test_server_layout_per_node():
    cfg = load_config("cluster-qwen3-30b-a3b", ["rollout.tensor_parallel_size=2", "rollout.servers_per_node=2"])
    assert server_layout(cfg) == [{"port": 8765, "gpus": [4, 5], "tensor_parallel_size": 2},
                                  {"port": 8766, "gpus": [6, 7], "tensor_parallel_size": 2}]
    assert plan(cfg)[1]["trainer_ranks"] == [4, 5, 6, 7]
    cpu = load_config("cluster-cpu")
    assert [s["port"] for s in server_layout(cpu)] == [8765, 8766] and all(not s["gpus"] for s in server_layout(cpu))
    assert server_layout(load_config("cluster-qwen3-8b-fleet")) == []  # servers given by URL: none started


def test_environment_checks_name_the_fix():
    cfg = load_config("cluster-qwen3-30b-a3b")
    ok = {"WORLD_SIZE": "32", "LOCAL_WORLD_SIZE": "4", "SLURM_NNODES": "8"}
    assert check_environment(cfg, ok, cuda_devices=8) == []
    errs = check_environment(cfg, {"WORLD_SIZE": "16", "LOCAL_WORLD_SIZE": "4", "SLURM_NNODES": "4"}, cuda_devices=8)
    assert any("the launcher started 4 nodes but cluster.nodes is 8" in e for e in errs)
    assert any("WORLD_SIZE is 16 but cluster.nodes x cluster.procs_per_node = 8 x 4 = 32" in e for e in errs)
    errs = check_environment(cfg, {"WORLD_SIZE": "32", "LOCAL_WORLD_SIZE": "8"}, cuda_devices=8)
    assert errs == ["8 trainer processes on this node but cluster.procs_per_node is 4 (the launcher's --nproc_per_node / --num_gpus / slots=)"]
    # the deepspeed launcher narrows CUDA_VISIBLE_DEVICES to the trainer's 4 slots: fine; 2 visible: not
    assert check_environment(cfg, {**ok, "CUDA_VISIBLE_DEVICES": "0,1,2,3"}, cuda_devices=4) == []
    errs = check_environment(cfg, {**ok, "CUDA_VISIBLE_DEVICES": "0,1"}, cuda_devices=2)
    assert errs and "sees 2 GPUs but needs 4" in errs[0]
    assert check_environment(load_config("cpu-tiny"), {"WORLD_SIZE": "2"}) == []
    # a config without a cluster layout (the shipped qwen3 ones) runs on whatever the launcher started
    assert check_environment(load_config("qwen3-8b-zero3"), {"WORLD_SIZE": "16", "SLURM_NNODES": "2", "GROUP_WORLD_SIZE": "2"}) == []


def test_the_trainer_refuses_a_mismatched_launch(monkeypatch):
    from forgec.train.trainer import check_cluster

    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    with pytest.raises(RuntimeError, match="WORLD_SIZE is 1 but cluster.nodes x cluster.procs_per_node = 1 x 2 = 2"):
        check_cluster(load_config("cluster-cpu"))
