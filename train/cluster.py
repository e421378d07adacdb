"""Multi-node layout: which node runs which trainer ranks and rollout servers, and start-up checks.

Pure functions of the config and the launcher's environment (no torch import): `forgec train
--show-config` prints the plan, and the trainer checks the environment before DeepSpeed
starts, so a wrong `--nnodes`/hostfile fails with a message naming the field to fix instead of
hanging in a collective.

Launchers set WORLD_SIZE, RANK, LOCAL_RANK and (torchrun, the deepspeed launcher) LOCAL_WORLD_SIZE;
Slurm's srun sets SLURM_NNODES / SLURM_NTASKS_PER_NODE, used when present.
"""

from __future__ import annotations

from typing import Any, Mapping


def server_layout(cfg: Any) -> list[dict]:
    """The rollout servers forgec starts on ONE node (none when the config names URLs)."""
    r, c = cfg.rollout, cfg.cluster
    if r.backend != "vllm" or r.vllm_base_urls or r.vllm_base_url:
        return []
    out = []
    first = c.procs_per_node or 0
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
                        + f" tp={s['tensor_parallel_size']}" for s in n["servers"]) or "no servers started"
        lines.append(f"- node {n['node']}: {rtxt}; {srv}")
    return "\n".join(lines) + "\n"


def check_environment(cfg: Any, env: Mapping[str, str], cuda_devices: int | None = None) -> list[str]:
    """Mismatches between the config's cluster layout and what the launcher started; each names the fix."""
    c = cfg.cluster
    errs: list[str] = []
    world = int(env.get("WORLD_SIZE", "1"))
    local = env.get("LOCAL_WORLD_SIZE") or env.get("SLURM_NTASKS_PER_NODE")
    nnodes = env.get("SLURM_NNODES") or env.get("GROUP_WORLD_SIZE")
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
