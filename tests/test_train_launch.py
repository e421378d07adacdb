"""Launching on a cluster: what each node receives from DeepSpeed's real multi-node runner (with a fake
pdsh/ssh that runs each "node" locally in a fresh environment, as ssh would), rank discovery under every
launcher, the shipped configs' start-up checks, and the vLLM server command line."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from forgec.train.cluster import deepspeed_env_lines, discover, gpu_layout_problems, slurm_process_group_env, slurm_tasks_per_node
from forgec.train.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))

# pdsh -S -f N -w host1,host2 CMD...: records every node's command, then runs it with %n = the node's index in a
# FRESH environment (HOME and a bare PATH only), which is what ssh gives a remote command
FAKE_PDSH = '''#!{python}
import json, os, subprocess, sys
args = sys.argv[1:]
hosts = args[args.index("-w") + 1].split(",")
cmd = " ".join(args[args.index("-w") + 2:])
with open(os.environ["FAKE_PDSH_LOG"], "a") as f:
    json.dump({{"hosts": hosts, "cmd": cmd}}, f)
    f.write("\\n")
if os.environ.get("FAKE_PDSH_DRY"):
    sys.exit(0)
procs = [subprocess.Popen(["bash", "-c", cmd.replace("%n", str(n))], env={{"HOME": os.environ["HOME"], "PATH": "/usr/bin:/bin"}})
         for n, _ in enumerate(hosts)]
sys.exit(max(p.wait() for p in procs))
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture()
def cluster_dir(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    _exe(fake / "pdsh", FAKE_PDSH.format(python=sys.executable))
    _exe(fake / "ssh", "#!/bin/sh\necho fake-host\n")  # the runner's reachability check
    (tmp_path / "home").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "hostfile").write_text("node-a slots=2\nnode-b slots=2\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGEC_", "SLURM_", "RANK", "LOCAL_", "WORLD_"))}
    env.update(PATH=f"{fake}:{os.environ['PATH']}", HOME=str(tmp_path / "home"), FORGEC_VLLM_VENV="/shared/forgec/.venv-vllm",
               HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu", FORGEC_PROBE_OUT=str(tmp_path / "out"), FORGEC_PROBE_ROOT=str(ROOT),
               FAKE_PDSH_LOG=str(tmp_path / "pdsh.log"), SLURM_NNODES="2", CUDA_VISIBLE_DEVICES="")
    env.pop("CUDA_VISIBLE_DEVICES")
    return tmp_path, env


def run_deepspeed(cwd: Path, env: dict) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "deepspeed.launcher.runner", "--hostfile", "hostfile", "--master_addr", "127.0.0.1",
           "--master_port", str(free_port()), "--no_local_rank", str(ROOT / "tests" / "launch_probe.py"), "train", "build"]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_every_node_receives_the_environment_and_its_rank_from_the_deepspeed_runner(cluster_dir):
    tmp, env = cluster_dir
    # without .deepspeed_env the runner forwards only its own list: FORGEC_VLLM_VENV would not reach the nodes
    r = run_deepspeed(tmp, dict(env, FAKE_PDSH_DRY="1"))
    assert r.returncode == 0, r.stderr[-3000:]
    (dry,) = [json.loads(x) for x in (tmp / "pdsh.log").read_text().splitlines()]
    assert dry["hosts"] == ["node-a", "node-b"] and "FORGEC_VLLM_VENV" not in dry["cmd"]
    (tmp / "pdsh.log").unlink()

    # what scripts/slurm/forgec-train.sbatch does before the launcher
    r = subprocess.run([sys.executable, "-m", "forgec.train.cluster", "deepspeed-env", ".deepspeed_env"], cwd=tmp, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = (tmp / ".deepspeed_env").read_text().splitlines()
    assert "FORGEC_VLLM_VENV=/shared/forgec/.venv-vllm" in lines and all(line and "=" in line for line in lines)
    assert not any(line.startswith(("SLURM_", "CUDA_VISIBLE_DEVICES", "FAKE_PDSH")) for line in lines)

    r = run_deepspeed(tmp, env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    (rec,) = [json.loads(x) for x in (tmp / "pdsh.log").read_text().splitlines()]
    assert "export FORGEC_VLLM_VENV=/shared/forgec/.venv-vllm;" in rec["cmd"] and "--node_rank=%n" in rec["cmd"]
    seen = {int(p.stem.removeprefix("rank")): json.loads(p.read_text()) for p in (tmp / "out").glob("rank*.json")}
    assert sorted(seen) == [0, 1, 2, 3]
    for rank, got in seen.items():
        e, place = got["env"], got["place"]
        assert e["FORGEC_VLLM_VENV"] == "/shared/forgec/.venv-vllm" and e["HF_HUB_OFFLINE"] == "1" and e["DS_ACCELERATOR"] == "cpu"
        assert e["PATH"].startswith(str(tmp / "bin"))  # the launching shell's PATH (venvs) is the node's
        assert e["SLURM_NNODES"] is None  # Slurm's variables are not forwarded (they would describe the launching node)
        assert got["argv"] == ["train", "build"]
        # rank r of 2 nodes x 2 slots: node r // 2, local rank r % 2 (deepspeed sets LOCAL_SIZE/CROSS_RANK, not LOCAL_WORLD_SIZE)
        assert place == {"rank": rank, "world": 4, "local_rank": rank % 2, "local_world": 2, "node": rank // 2, "nodes": 2,
                         "launcher": "deepspeed"}


def test_rank_discovery_under_each_launcher():
    torchrun = {"RANK": "5", "LOCAL_RANK": "1", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4", "GROUP_RANK": "1", "GROUP_WORLD_SIZE": "2",
                "TORCHELASTIC_RUN_ID": "x", "SLURM_NTASKS_PER_NODE": "1", "SLURM_NODEID": "0"}  # srun+torchrun: Slurm's say 1 task
    p = discover(torchrun)
    assert (p.rank, p.world, p.local_rank, p.local_world, p.node, p.nodes, p.launcher) == (5, 8, 1, 4, 1, 2, "torchrun")
    ds = {"RANK": "6", "LOCAL_RANK": "2", "WORLD_SIZE": "12", "LOCAL_SIZE": "4", "CROSS_RANK": "1", "CROSS_SIZE": "3"}
    p = discover(ds)
    assert (p.node, p.nodes, p.local_world, p.launcher) == (1, 3, 4, "deepspeed")
    srun = {"SLURM_PROCID": "7", "SLURM_LOCALID": "3", "SLURM_NTASKS": "8", "SLURM_NODEID": "1", "SLURM_NNODES": "2",
            "SLURM_TASKS_PER_NODE": "4(x2)"}
    p = discover(srun)
    assert (p.rank, p.world, p.local_rank, p.local_world, p.node, p.nodes, p.launcher) == (7, 8, 3, 4, 1, 2, "srun")
    assert slurm_tasks_per_node("4(x2),3", 2) == 3 and slurm_tasks_per_node("2", 0) == 2 and slurm_tasks_per_node("x", 0) is None
    with pytest.raises(RuntimeError, match="export MASTER_ADDR"):
        slurm_process_group_env(srun)
    got = slurm_process_group_env({**srun, "MASTER_ADDR": "node-0"})
    assert got == {"RANK": "7", "LOCAL_RANK": "3", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4", "MASTER_PORT": "29500"}
    assert slurm_process_group_env(torchrun) == {}  # a launcher's own variables win
    assert discover({}).launcher == "none" and discover({}).world == 1
    lines = deepspeed_env_lines({"FORGEC_VLLM_VENV": "/v", "CUDA_VISIBLE_DEVICES": "0", "HOME": "/h", "FORGEC_BAD": "a$b"})
    assert lines == ["FORGEC_VLLM_VENV=/v"]


def test_every_shipped_config_passes_the_start_up_checks_for_gpu():
    """`--show-config` validates every shipped config; a GPU config that starts vLLM servers has a layout for them."""
    assert len(SHIPPED) >= 7
    for name in SHIPPED:
        cfg = load_config(name)
        gpu = cfg.model.dtype == "bfloat16"
        assert gpu_layout_problems(cfg, on_gpu=gpu) == [], name
        if cfg.rollout.backend == "vllm":
            assert (cfg.rollout.vllm_max_model_len or cfg.rollout.max_context_tokens) >= cfg.rollout.max_context_tokens
        r = subprocess.run([sys.executable, "-m", "forgec", "train", "build", "-c", name, "--show-config"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120, env=dict(os.environ, HF_HUB_OFFLINE="1"))
        assert r.returncode == 0 and "## Cluster plan" in r.stdout, (name, r.stderr[-2000:])


def test_a_gpu_vllm_config_without_a_server_layout_is_refused_by_name():
    # issue 23's qwen3-8b-zero3 as it was: started servers, no cluster section -> on GPU they would land beside rank 0
    cfg = load_config("qwen3-8b-zero3", ["cluster.gpus_per_node=0", "cluster.procs_per_node=null",
                                         "cluster.rollout_gpus_per_node=0", "cluster.nodes=null"])
    (msg,) = gpu_layout_problems(cfg, on_gpu=True)
    assert "cluster.rollout_gpus_per_node" in msg and "rollout.placement=colocated" in msg
    assert gpu_layout_problems(cfg, on_gpu=False) == []  # CPU runs inherit no devices
    with pytest.raises(ConfigError, match="starts servers on GPU but they have no GPUs"):
        load_config("cluster-qwen3-30b-a3b", ["cluster.rollout_gpus_per_node=0"])
    with pytest.raises(ConfigError, match=r"--max-model-len 4096, below rollout.max_context_tokens \(40960\)"):
        load_config("cluster-qwen3-30b-a3b", ["rollout.vllm_extra_args=[--max-model-len, '4096']"])
    with pytest.raises(ConfigError, match="colocated sleeps the servers during each update"):
        load_config("cluster-cpu", ["rollout.placement=colocated"])


def test_the_server_command_takes_dtype_and_length_from_the_config():
    from forgec.train.rollout import VLLMServer, server_args

    gpu = server_args([], gpu=True, max_model_len=32768)
    assert gpu[gpu.index("--dtype") + 1] == "bfloat16" and gpu[gpu.index("--max-model-len") + 1] == "32768"
    assert "--gpu-memory-utilization" not in gpu
    cpu = server_args([], gpu=False, max_model_len=4096)
    assert cpu[cpu.index("--dtype") + 1] == "float32" and "--enforce-eager" in cpu
    mine = server_args(["--dtype", "float16", "--max-model-len=50000"], gpu=True, max_model_len=32768, sleep_mode=True,
                       weight_transfer="nccl")
    assert mine.count("--dtype") == 1 and not any(a == "--max-model-len" for a in mine) and "--enable-sleep-mode" in mine
    assert json.loads(mine[mine.index("--weight-transfer-config") + 1]) == {"backend": "nccl"}
    assert "--enable-sleep-mode" not in server_args([], gpu=False, sleep_mode=True)  # the CPU build refuses it
    srv = VLLMServer("/m", 8000, python="/py", max_model_len=40960)
    cmd = srv.command(gpu=True)
    assert cmd[:3] == ["/py", "-m", "vllm.entrypoints.openai.api_server"] and cmd[cmd.index("--max-model-len") + 1] == "40960"


@pytest.mark.slow
def test_zero3_loads_partitioned_checksums_from_shards_and_pushes_layer_by_layer(tmp_path):
    """2 gloo processes, ZeRO-3: zero.Init at load (policy and reference), sum |w| from local shards + all-reduce
    equals the sum over the saved safetensors, and NcclWeightSync drives two fake servers (1 and 2 workers) through
    pause -> start -> one update_weights per layer -> finish(version) -> checked cache reset -> resume, handing the
    transport exactly the saved weights while gathering one layer at a time."""
    import torch
    from safetensors.torch import load_file
    from transformers import Qwen3Config, Qwen3ForCausalLM

    sys.path.insert(0, str(ROOT / "tests"))
    from fakevllm import FakeVLLM

    torch.manual_seed(3)
    cfg = Qwen3Config(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, tie_word_embeddings=False, max_position_embeddings=256)
    model_dir = tmp_path / "m"
    Qwen3ForCausalLM(cfg).save_pretrained(model_dir, safe_serialization=True)
    saved = load_file(str(model_dir / "model.safetensors"))
    with FakeVLLM("a") as a, FakeVLLM("b") as b:
        b.world_size = 2
        env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu", PROBE_URLS=json.dumps([a.url, b.url]))
        r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(free_port()),
                            str(ROOT / "tests" / "zero3_probe.py"), str(model_dir), str(tmp_path)], env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        ranks = [json.loads((tmp_path / f"rank{i}.json").read_text()) for i in range(2)]
        for got in ranks:
            assert got["at_load"] and all(numel == 0 and part < full for numel, part, full in got["at_load"].values())
            assert got["ref_sharded"] and got["ref_same"]
        # checksum from shards == an independent sum over the file (no gather involved on this side)
        want = float(sum(t.double().abs().sum() for t in saved.values()))
        assert abs(ranks[0]["checksum"] - want) <= 1e-9 * want and ranks[0]["checksum"] == ranks[1]["checksum"]
        # the control plane, on both servers, in order
        g = ranks[0]["groups"]
        assert len(g) == 5 and g[1][0].startswith("model.layers.0.") and g[-1] == ["model.norm.weight", "lm_head.weight"]
        for fake in (a, b):
            assert fake.calls == ["/init_weight_transfer_engine", "/pause", "/start_weight_update", *["/update_weights"] * len(g), "/finish_weight_update",
                                  "/reset_prefix_cache", "/resume"]
            assert [body["update_info"]["names"] for route, body in fake.bodies if route == "/update_weights"] == g
            assert fake.weight_version == "1"
        inits = {fake.name: body["init_info"] for fake in (a, b) for route, body in fake.bodies if route == "/init_weight_transfer_engine"}
        assert inits["a"]["rank_offset"] == 1 and inits["b"]["rank_offset"] == 2 and inits["a"]["world_size"] == 4
        # the bytes the transport got are the saved weights, in the announced order
        sent = torch.load(tmp_path / "sent.pt")
        names = [n for grp in g for n in grp]
        assert len(sent) == len(names) == len(saved)
        assert all(torch.equal(t, saved[n]) for n, t in zip(names, sent))
        # one layer at a time: the largest gather is one group, well under the model
        biggest = max(sum(saved[n].numel() for n in grp) for grp in g)
        assert ranks[0]["peak_gathered"] == biggest < sum(t.numel() for t in saved.values()) / 2


def test_layer_groups_follow_vllms_own_rule():
    """forgec's copy of vLLM's `layerwise_groups` (the unit of a bucket) against vLLM 0.32's source, read from the
    installed package without importing vLLM (its module imports the whole engine)."""
    import ast

    from forgec.train.weightsync import layer_groups

    venv = os.environ.get("FORGEC_VLLM_VENV")
    found = list(Path(venv).glob("lib/python*/site-packages/vllm/distributed/weight_transfer/base.py")) if venv else []
    # the README's test command always sets FORGEC_VLLM_VENV: without it this check would pass by not running
    assert found, "FORGEC_VLLM_VENV must point at the vLLM venv (scripts/setup_vllm_venv.sh); vLLM's weight_transfer/base.py not found"
    tree = ast.parse(found[0].read_text())
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("_stack_key", "layerwise_groups")]
    ns: dict = {}
    exec(compile(ast.Module(body=fns, type_ignores=[]), "vllm_base", "exec"), ns)  # noqa: S102 - vLLM's own code
    names = ["model.embed_tokens.weight", "model.layers.10.mlp.up_proj.weight", "model.layers.2.self_attn.q_proj.weight",
             "model.layers.2.mlp.experts.7.w1", "model.layers.10.input_layernorm.weight", "model.norm.weight", "lm_head.weight",
             "visual.blocks.0.attn.qkv.weight", "model.layers.0.mlp.gate.weight"]
    assert layer_groups(names) == ns["layerwise_groups"](names)


def test_the_models_template_is_checked_against_forgecs_parser_at_start_up():
    """check_template renders probe dialogues with the tokenizer's own template and reads every assistant turn back
    with parse_hermes: Qwen3's template and the built-in ChatML pass, a Llama-3-style template (calls as bare
    `{"name", "parameters"}` JSON) is refused naming the turn and both readings."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_chat_template import QWEN3_TEMPLATE, llama_template, make_tokenizer

    from forgec.train.template import ChatTemplateError, check_template

    qwen = make_tokenizer(QWEN3_TEMPLATE)
    qwen.eos_token = "<|im_end|>"
    assert check_template(qwen, "You are an agent.", keep_thinking=True) == 6  # every assistant turn of both probes
    assert check_template(make_tokenizer(None), "You are an agent.") == 6
    with pytest.raises(ChatTemplateError, match=r"probe assistant turn 1 .*reads calls \[\] .* not \[\('set_light', \{'id': 'L1', 'on': True\}\)\]"):
        check_template(make_tokenizer(llama_template()), "You are an agent.")


def test_a_launch_that_does_not_match_the_config_is_a_diagnostic_not_a_bug(tmp_path):
    from forgec.train.toybuild import make_toy_build

    make_toy_build(tmp_path / "build", tasks_per_env=2)
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE")}
    r = subprocess.run([sys.executable, "-m", "forgec", "train", "build", "-c", "cluster-cpu", "-o", "out"], cwd=tmp_path,
                       env=dict(env, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu"), capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr[-2000:]
    assert "error[train-config]" in r.stderr and "WORLD_SIZE is 1 but cluster.nodes x cluster.procs_per_node = 1 x 2 = 2" in r.stderr
    assert "bug in forgec" not in r.stderr and "Traceback" not in r.stderr


def test_the_nccl_unique_id_is_sent_as_vllm_decodes_it():
    """NcclComm against a stand-in libnccl (no GPU): the 128-byte ncclUniqueId, whose C chars are signed, goes out as
    standard base64 of exactly those bytes (vLLM's worker rejects URL-safe base64 or another length)."""
    import base64

    from forgec.train.weightsync import NcclComm

    class Fn:
        def __init__(self, f):
            self.f, self.argtypes, self.restype = f, None, None

        def __call__(self, *a):
            return self.f(*a)

    def get_uid(ptr):
        for i in range(128):
            ptr._obj.internal[i] = (i * 37) % 256 - 128
        return 0

    lib = type("Lib", (), {})()
    lib.ncclGetErrorString = Fn(lambda r: b"unhandled system error")
    lib.ncclGetUniqueId = Fn(get_uid)
    for name in ("ncclCommInitRank", "ncclAllReduce", "ncclBroadcast", "ncclCommDestroy"):
        setattr(lib, name, Fn(lambda *a: 0))
    raw = base64.b64decode(NcclComm(lib).unique_id_b64, validate=True)
    assert raw == bytes(((i * 37) % 256 + 128) % 256 for i in range(128))  # the signed chars, as bytes
    lib.ncclGetUniqueId = Fn(lambda ptr: 2)
    with pytest.raises(RuntimeError, match="NCCL error 2: unhandled system error"):
        NcclComm(lib)
