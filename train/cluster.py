"""Multi-node layout: which node runs which trainer ranks and rollout servers, and start-up checks.

Pure functions of the config and the launcher's environment (no torch import): `forgec train
--show-config` prints the plan, and the trainer checks the environment before DeepSpeed
starts, so a wrong `--nnodes`/hostfile fails with a message naming the field to fix instead of
hanging in a collective.

Launchers name the same things differently (`discover`): torchrun sets RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK (node) and GROUP_WORLD_SIZE (nodes); the deepspeed launcher sets RANK,
LOCAL_RANK, WORLD_SIZE, LOCAL_SIZE, CROSS_RANK (node) and CROSS_SIZE (nodes), never LOCAL_WORLD_SIZE;
`srun` alone sets only SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, SLURM_NODEID, SLURM_NNODES and
SLURM_TASKS_PER_NODE (`4(x2)`). A launcher's own variables win over Slurm's, which leak into every
process of an sbatch job whatever the launcher.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping


class StartupError(RuntimeError):
    """The launch, the layout or the model's template does not fit the config (a diagnostic, not a bug)."""


@dataclass(frozen=True)
class Place:
    """Where this process sits: global rank/world, rank on its node, processes on its node, node index, nodes."""

    rank: int
    world: int
    local_rank: int
    local_world: int
    node: int
    nodes: int
    launcher: str  # torchrun | deepspeed | srun | none


def _int(env: Mapping[str, str], *names: str) -> int | None:
    for n in names:
        v = env.get(n)
        if v is not None and str(v).strip().isdigit():
            return int(v)
    return None


def slurm_tasks_per_node(value: str | None, node: int = 0) -> int | None:
    """SLURM_TASKS_PER_NODE (`4(x2),3`) -> the task count of node `node`."""
    if not value:
        return None
    counts: list[int] = []
    for part in value.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
        if not m:
            return None
        counts += [int(m.group(1))] * int(m.group(2) or 1)
    return counts[node] if 0 <= node < len(counts) else None


def discover(env: Mapping[str, str]) -> Place:
    """This process's place under torchrun, the deepspeed launcher, srun alone, or no launcher."""
    if "RANK" in env:
        launcher = "torchrun" if "GROUP_RANK" in env or "TORCHELASTIC_RUN_ID" in env else (
            "deepspeed" if "CROSS_RANK" in env or "LOCAL_SIZE" in env else "env")
        rank = _int(env, "RANK") or 0
        world = _int(env, "WORLD_SIZE") or 1
        local_rank = _int(env, "LOCAL_RANK") or 0
        local_world = _int(env, "LOCAL_WORLD_SIZE", "LOCAL_SIZE")
        node = _int(env, "GROUP_RANK", "CROSS_RANK")
        nodes = _int(env, "GROUP_WORLD_SIZE", "CROSS_SIZE")
    elif "SLURM_PROCID" in env:
        launcher = "srun"
        rank = _int(env, "SLURM_PROCID") or 0
        world = _int(env, "SLURM_NTASKS") or 1
        local_rank = _int(env, "SLURM_LOCALID") or 0
        node = _int(env, "SLURM_NODEID")
        local_world = _int(env, "SLURM_NTASKS_PER_NODE") or slurm_tasks_per_node(env.get("SLURM_TASKS_PER_NODE"), node or 0)
        nodes = _int(env, "SLURM_NNODES", "SLURM_JOB_NUM_NODES")
    else:
        return Place(0, 1, 0, 1, 0, 1, "none")
    if local_world is None:  # a launcher that says nothing about nodes: one node
        local_world = world if nodes in (None, 1) else max(world // nodes, 1)
    if node is None:
        node = rank // max(local_world, 1)
    if nodes is None:
        nodes = max(world // max(local_world, 1), 1)
    return Place(rank, world, local_rank, local_world, node, nodes, launcher)


def slurm_process_group_env(env: Mapping[str, str]) -> dict[str, str]:
    """`srun python -m forgec train ...` (no torchrun): the RANK/LOCAL_RANK/WORLD_SIZE torch.distributed reads.

    MASTER_ADDR must come from the job (the sbatch script exports the first host); without it this
    raises a message saying so instead of torch's rendezvous timing out."""
    if "RANK" in env or "SLURM_PROCID" not in env:
        return {}
    if not env.get("MASTER_ADDR"):
        raise RuntimeError("launched by srun without torchrun or the deepspeed launcher: export MASTER_ADDR (the first host of "
                           "$SLURM_JOB_NODELIST, e.g. `export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)`) "
                           "and MASTER_PORT before srun")
    p = discover(env)
    return {"RANK": str(p.rank), "LOCAL_RANK": str(p.local_rank), "WORLD_SIZE": str(p.world),
            "LOCAL_WORLD_SIZE": str(p.local_world), "MASTER_PORT": env.get("MASTER_PORT", "29500")}


def server_layout(cfg: Any) -> list[dict]:
    """The rollout servers forgec starts on ONE node (none when the config names URLs)."""
    r, c = cfg.rollout, cfg.cluster
    if r.backend != "vllm" or r.vllm_base_urls or r.vllm_base_url:
        return []
    out = []
    first = 0 if r.placement == "colocated" else (c.procs_per_node or 0)  # colocated: the trainer's own GPUs
    for k in range(r.servers_per_node):
        gpus = list(range(first + k * r.tensor_parallel_size, first + (k + 1) * r.tensor_parallel_size)) if c.gpus_per_node else []
        out.append({"port": r.vllm_port + k, "gpus": gpus, "tensor_parallel_size": r.tensor_parallel_size})
    return out


def plan(cfg: Any) -> list[dict]:
    """Per node: its trainer ranks (when procs_per_node is known) and the servers it runs."""
    c, r = cfg.cluster, cfg.rollout
    servers = server_layout(cfg)
    nodes = []
    for n in range(c.nodes or 1):
        ranks = list(range(n * c.procs_per_node, (n + 1) * c.procs_per_node)) if c.procs_per_node else None
        nodes.append({"node": n, "trainer_ranks": ranks, "servers": servers})
    if r.backend == "vllm" and (r.vllm_base_urls or r.vllm_base_url):
        nodes.append({"external_servers": list(r.vllm_base_urls or [r.vllm_base_url])})
    if r.user == "llm":
        nodes.append({"user_servers": list(r.user_base_urls)})
    return nodes


def plan_text(cfg: Any) -> str:
    lines = ["## Cluster plan", ""]
    for n in plan(cfg):
        if "external_servers" in n:
            lines.append(f"- rollout servers (already running): {', '.join(n['external_servers'])}")
            continue
        if "user_servers" in n:
            lines.append(f"- simulated-user servers: {', '.join(n['user_servers'])}")
            continue
        ranks = n["trainer_ranks"]
        rtxt = f"trainer ranks {ranks[0]}-{ranks[-1]}" if ranks else "trainer ranks: as launched"
        srv = "; ".join(f"vLLM on port {s['port']}" + (f" GPUs {','.join(map(str, s['gpus']))}" if s["gpus"] else " (devices as inherited)")
                        + (" colocated (sleeps during updates)" if cfg.rollout.placement == "colocated" else "")
                        + f" tp={s['tensor_parallel_size']}" for s in n["servers"]) or "no servers started"
        lines.append(f"- node {n['node']}: {rtxt}; {srv}")
    return "\n".join(lines) + "\n"


def check_environment(cfg: Any, env: Mapping[str, str], cuda_devices: int | None = None) -> list[str]:
    """Mismatches between the config's cluster layout and what the launcher started; each names the fix."""
    c = cfg.cluster
    errs: list[str] = []
    place = discover(env)
    world = int(env.get("WORLD_SIZE") or place.world)
    # the per-node count as the launcher states it (not derived), so a wrong --nproc_per_node is caught
    local = env.get("LOCAL_WORLD_SIZE") or env.get("LOCAL_SIZE") or (
        env.get("SLURM_NTASKS_PER_NODE") if place.launcher == "srun" else None)
    nnodes = env.get("GROUP_WORLD_SIZE") or env.get("CROSS_SIZE") or env.get("SLURM_NNODES")
    if c.nodes is not None:  # a declared layout: hold the launcher to it
        if nnodes is not None and nnodes.isdigit() and int(nnodes) != c.nodes:
            errs.append(f"the launcher started {nnodes} nodes but cluster.nodes is {c.nodes} "
                        f"(set --set cluster.nodes={nnodes}, or fix the hostfile / #SBATCH --nodes)")
        if c.procs_per_node is not None:
            want = c.nodes * c.procs_per_node
            if world != want:
                errs.append(f"WORLD_SIZE is {world} but cluster.nodes x cluster.procs_per_node = {c.nodes} x {c.procs_per_node} = {want} "
                            "(check the hostfile's slots=, --num_gpus / --nproc_per_node, or the cluster section)")
            if local is not None and local.isdigit() and int(local) != c.procs_per_node:
                errs.append(f"{local} trainer processes on this node but cluster.procs_per_node is {c.procs_per_node} "
                            "(the launcher's --nproc_per_node / --num_gpus / slots=)")
        elif world % c.nodes:
            errs.append(f"WORLD_SIZE {world} is not a multiple of cluster.nodes {c.nodes}")
    if c.gpus_per_node and cuda_devices is not None:
        # the deepspeed launcher narrows CUDA_VISIBLE_DEVICES to the trainer's slots; the servers get theirs explicitly
        need = (c.procs_per_node or 1) if env.get("CUDA_VISIBLE_DEVICES") else c.gpus_per_node
        if cuda_devices < need:
            errs.append(f"this process sees {cuda_devices} GPUs but needs {need} (cluster.gpus_per_node={c.gpus_per_node}, "
                        f"procs_per_node={c.procs_per_node}; check CUDA_VISIBLE_DEVICES or the Slurm --gpus-per-node request)")
    return errs


def gpu_layout_problems(cfg: Any, on_gpu: bool) -> list[str]:
    """A vLLM backend on GPU whose servers forgec starts needs to know which GPUs they get.

    Without a layout every server would inherit the trainer's devices and land on GPU 0 beside
    trainer rank 0 (issue 23's review of qwen3-8b-zero3.yaml)."""
    c, r = cfg.cluster, cfg.rollout
    started = r.backend == "vllm" and not r.vllm_base_urls and not r.vllm_base_url
    if not (on_gpu and started) or r.placement == "colocated":
        return []
    if not c.gpus_per_node or not c.procs_per_node or not c.rollout_gpus_per_node:
        return ["rollout.backend=vllm starts servers on GPU but the config gives them no GPUs: set cluster.gpus_per_node, "
                "cluster.procs_per_node (trainer GPUs 0..P-1) and cluster.rollout_gpus_per_node (the servers' GPUs after them), "
                "or rollout.placement=colocated (servers share the trainer's GPUs and sleep during updates), or "
                "rollout.vllm_base_urls (servers you started)"]
    return []


# what every node needs from the launching shell; the deepspeed launcher forwards only PYTHON*, MLFLOW*,
# MV2*, UCX* and its accelerator's own variables (launcher/runner.py EXPORT_ENVS), plus `.deepspeed_env`
FORWARD_PREFIXES = ("FORGEC_", "HF_", "TRANSFORMERS_", "TOKENIZERS_", "VLLM_", "NCCL_", "DS_", "TORCH_", "OMP_NUM_THREADS",
                    "CUDA_HOME", "LD_LIBRARY_PATH", "PATH", "VIRTUAL_ENV", "TRITON_")
NOT_FORWARDED = ("CUDA_VISIBLE_DEVICES", "DS_ENV_FILE")  # per node: the launcher sets devices itself


def deepspeed_env_lines(env: Mapping[str, str]) -> list[str]:
    """`.deepspeed_env` lines (KEY=value) for the variables every node needs (FORGEC_VLLM_VENV above all).

    The deepspeed launcher reads this file from the working directory (or ~) and prefixes the remote
    command of every node with `export KEY=value;` (pdsh/ssh start a fresh login environment). Its
    parser splits each line at the first `=` and does not skip blank lines, so none is written."""
    out = []
    for k in sorted(env):
        if k in NOT_FORWARDED or not k.startswith(FORWARD_PREFIXES) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            continue
        v = str(env[k])
        if "\n" in v or '"' in v or "$" in v or "`" in v:
            continue  # cannot survive the launcher's `export K="v";` quoting
        out.append(f"{k}={v}")
    return out


if __name__ == "__main__":  # `python -m forgec.train.cluster deepspeed-env [FILE]` (scripts/slurm/forgec-train.sbatch)
    import os
    import sys

    if len(sys.argv) < 2 or sys.argv[1] != "deepspeed-env":
        sys.exit("usage: python -m forgec.train.cluster deepspeed-env [FILE]   (writes .deepspeed_env for the deepspeed launcher)")
    text = "\n".join(deepspeed_env_lines(os.environ)) + "\n"
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
