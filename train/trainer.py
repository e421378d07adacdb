"""The ERPO/GRPO trainer: rollouts -> advantages -> PPO-clip update on DeepSpeed -> checkpoint.

One step, on every process (data parallel; rank r owns groups r, r+W, ...):

1. sample B tasks (balanced across envs, a pure function of seed and step), run G episodes
   each through the runtime (policy agent, scripted user, rule judge);
2. dynamic filtering: drop zero-variance groups, refill from more tasks (bounded);
3. gather every process's rewards, compute advantages over the whole batch (ERPO's
   per-env std needs them all), MEU-masked episodes out;
4. tokenize (rollout ids verbatim), split this process's samples into exactly
   `optim.micro_batches` micro-batches, or pack them under `optim.micro_batch_tokens` (equal
   count on every rank keeps ZeRO-3 in lockstep), decoupled PPO token-mean loss with the
   capped importance weight against the rollout engine's log-probs, DeepSpeed backward/step;
5. push weights to vLLM (vllm backend), log, checkpoint.

CPU: DS_ACCELERATOR=cpu, gloo, fp32, torch AdamW as the client optimizer, DeepSpeed's shm
comm op not built. GPU: nccl, bf16.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from forgec.train.advantage import FilterStats, Rollout, advantage_stats, compute_advantages, dynamic_filter, has_signal
from forgec.train.config import TrainConfig, resolve_config_path
from forgec.train.rollout import GroupSpec, mix_seed
from forgec.train.tokenize import Sample, episode_to_samples
from forgec.runtime.agents import OracleAgent
from forgec.runtime.episode import run_episode
from forgec.runtime.users import LLMUser, ScriptedUser
from forgec.train.template import end_of_turn_id, render_conversation, set_end_of_turn
from forgec.train.cluster import check_environment, server_layout
from forgec.runtime.loader import load
from forgec.train.logging import MetricsLogger
from forgec.train.fleet import Fleet, fleet_consistent, server_versions, sync_servers
from forgec.train.rollout import HFEngine, PolicyAgent, Sampling, VLLMServer, run_groups
from forgec.train.tokenize import tokenize_text


# ---------------------------------------------------------------- process setup


def prepare_environment() -> None:
    """Before importing deepspeed: pick the CPU accelerator when there is no GPU; skip the shm op."""
    import torch

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not torch.cuda.is_available():
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    if os.environ.get("DS_ACCELERATOR") == "cpu":
        # DeepSpeed JIT-compiles shared-memory/oneCCL comm ops on first CPU use (~1 min); gloo suffices.
        import importlib

        # (not `import deepspeed.comm.torch as m`: deepspeed.comm's attribute `torch` is torch itself)
        importlib.import_module("deepspeed.comm.torch").build_shm_op = lambda: None
        importlib.import_module("deepspeed.comm.ccl").build_ccl_op = lambda: None


def init_distributed() -> tuple[int, int]:
    import deepspeed
    import torch

    from forgec.train.cluster import slurm_process_group_env

    os.environ.update(slurm_process_group_env(os.environ))  # `srun` alone: RANK etc. from SLURM_PROCID/LOCALID/NTASKS
    if "RANK" not in os.environ:  # a single process without a launcher
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 2000))
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    deepspeed.init_distributed(dist_backend=backend, auto_mpi_discovery=False)
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    return torch.distributed.get_rank(), torch.distributed.get_world_size()


def barrier() -> None:
    import torch

    if torch.distributed.is_initialized():
        torch.distributed.barrier()


def all_gather_objects(obj: Any) -> list[Any]:
    import torch

    if not torch.distributed.is_initialized() or torch.distributed.get_world_size() == 1:
        return [obj]
    out: list[Any] = [None] * torch.distributed.get_world_size()
    torch.distributed.all_gather_object(out, obj)
    return out


def all_reduce_sum(values: list[float]) -> list[float]:
    import torch

    t = torch.tensor(values, dtype=torch.float64)
    if torch.distributed.is_initialized() and torch.distributed.get_world_size() > 1:
        torch.distributed.all_reduce(t)
    return t.tolist()


def all_reduce_max(values: list[float]) -> list[float]:
    import torch

    t = torch.tensor(values, dtype=torch.float64)
    if torch.distributed.is_initialized() and torch.distributed.get_world_size() > 1:
        torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
    return t.tolist()


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


# ---------------------------------------------------------------- model + engine


def use_gpu() -> bool:
    import torch

    return torch.cuda.is_available() and os.environ.get("DS_ACCELERATOR", "cuda") != "cpu"


def ds_config(cfg: TrainConfig, world: int, micro_batches: int) -> dict:
    """The DeepSpeed JSON: the config's file when given (batch sizes filled in), else built."""
    import json

    if cfg.deepspeed.config:
        conf = json.loads(resolve_config_path(cfg.deepspeed.config).read_text())
    else:
        conf = {"zero_optimization": {"stage": cfg.deepspeed.zero_stage}}
    zero = conf.setdefault("zero_optimization", {"stage": 0})
    if cfg.deepspeed.offload_optimizer and int(zero.get("stage", 0)) >= 2:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": use_gpu()}
        conf["zero_force_ds_cpu_optimizer"] = False  # the client optimizer is torch AdamW
    conf["train_micro_batch_size_per_gpu"] = 1
    conf["gradient_accumulation_steps"] = micro_batches
    conf["train_batch_size"] = micro_batches * world
    conf["gradient_clipping"] = cfg.optim.max_grad_norm
    conf["zero_allow_untested_optimizer"] = True
    conf["steps_per_print"] = 10**9
    conf["wall_clock_breakdown"] = False
    gpu = use_gpu()
    want_bf16 = cfg.model.dtype == "bfloat16" or (cfg.model.dtype == "auto" and gpu)
    conf["bf16"] = {"enabled": bool(want_bf16 and gpu)}
    conf.pop("fp16", None)
    for k in [k for k, v in conf.items() if v == "auto"]:
        conf.pop(k)
    return conf


def load_tokenizer(path: str, end_of_turn: str | None = None):
    """The tokenizer at `path`; `end_of_turn` (config template.end_of_turn) overrides the marker read from its template."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    set_end_of_turn(tok, end_of_turn)
    return tok


def resolve_model_path(cfg: TrainConfig, build: Any, rank: int) -> str:
    """`tiny` -> build (rank 0, once) a tiny model whose tokenizer also learned the build's text."""
    if cfg.model.path != "tiny":
        return cfg.model.path
    out = Path(cfg.output) / "tiny_init"
    if rank == 0 and not (out / "config.json").exists():
        from forgec.train.tiny import build_tiny_model

        build_tiny_model(out, layers=cfg.model.tiny_layers, hidden=cfg.model.tiny_hidden, vocab_size=cfg.model.tiny_vocab,
                         seed=cfg.data.seed, extra_texts=oracle_texts(build, cfg))
    barrier()
    return str(out)


def oracle_texts(build: Any, cfg: TrainConfig, limit: int = 200) -> list[str]:
    """Rendered oracle conversations of the build (tokenizer training text for the tiny model)."""

    texts = []
    for t in build.tasks[:limit]:
        agent = OracleAgent(t)
        ep = run_episode(build, t, agent, ScriptedUser(t), limits=agent.limits())
        texts.append(render_conversation(ep.messages, build.envs[t.env].TOOLS, cfg.template.system_prompt))
    return texts


def load_model(path: str, cfg: TrainConfig, ds_conf: dict, zero_init: bool = True):
    import torch
    from transformers import AutoModelForCausalLM

    dtype = torch.bfloat16 if ds_conf.get("bf16", {}).get("enabled") else torch.float32
    kwargs: dict[str, Any] = {"dtype": dtype}
    if cfg.model.attn_implementation:
        kwargs["attn_implementation"] = cfg.model.attn_implementation
    if zero_init and int(ds_conf.get("zero_optimization", {}).get("stage", 0)) == 3:
        # ZeRO-3: transformers builds the model inside deepspeed.zero.Init while this object lives, so each
        # rank allocates only its partition and the checkpoint is loaded shard by shard (no full copy per rank)
        from transformers.integrations import HfDeepSpeedConfig

        keep = HfDeepSpeedConfig(ds_conf)
        model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
        del keep
    else:
        model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    if cfg.model.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    return model


def load_reference(path: str, cfg: TrainConfig, ds_conf: dict, device: Any):
    """The frozen KL reference. Under ZeRO-3 it is loaded partitioned (zero.Init) and wrapped in an
    optimizer-less DeepSpeed engine, so it is sharded like the policy instead of replicated on every rank."""
    model = load_model(path, cfg, ds_conf)
    model.requires_grad_(False)
    if int(ds_conf.get("zero_optimization", {}).get("stage", 0)) == 3:
        import deepspeed

        conf = {k: v for k, v in ds_conf.items() if k not in ("optimizer", "scheduler", "gradient_clipping")}
        conf["zero_optimization"] = {k: v for k, v in ds_conf["zero_optimization"].items() if not k.startswith("offload_optimizer")}
        engine, *_ = deepspeed.initialize(model=model, config=conf)
        return engine.module.eval()
    return model.to(device).eval()


def make_engine(cfg: TrainConfig, model: Any, ds_conf: dict, lr: float, total_optimizer_steps: int):
    """deepspeed.initialize with torch AdamW as client optimizer and a warmup-then-constant schedule."""
    import deepspeed
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, betas=tuple(cfg.optim.betas), weight_decay=cfg.optim.weight_decay, eps=1e-8,
                            foreach=False)
    warm = cfg.optim.warmup_steps
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) if warm > 0 else 1.0)
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, lr_scheduler=sched, config=ds_conf)
    return engine


def gather_all_params(engine: Any):
    """ZeRO-3: full weights for local generation (one collective per rollout phase)."""
    import deepspeed

    params = list(engine.module.parameters())
    if any(hasattr(p, "ds_id") for p in params):
        return deepspeed.zero.GatheredParameters(params, modifier_rank=None)
    return contextlib.nullcontext()


# ---------------------------------------------------------------- micro-batching


def split_micro_batches(samples: list[Sample], n: int) -> list[list[Sample]]:
    """Exactly n chunks, balanced by tokens (greedy longest-first), order-stable within a chunk."""
    chunks: list[list[tuple[int, Sample]]] = [[] for _ in range(n)]
    load = [0] * n
    for i, s in sorted(enumerate(samples), key=lambda x: (-len(x[1].input_ids), x[0])):
        k = min(range(n), key=lambda c: (load[c], c))
        chunks[k].append((i, s))
        load[k] += len(s.input_ids)
    return [[s for _, s in sorted(c, key=lambda x: x[0])] for c in chunks]


def collate(samples: list[Sample], pad_id: int, device: Any):
    """Right-padded tensors; an empty chunk becomes one dummy token with no loss (keeps ranks in step)."""
    import torch

    if not samples:
        samples = [Sample([pad_id, pad_id], [0, 0], None, 0.0)]
    T = max(len(s.input_ids) for s in samples)
    ids = torch.full((len(samples), T), pad_id, dtype=torch.long)
    att = torch.zeros((len(samples), T), dtype=torch.long)
    mask = torch.zeros((len(samples), T - 1), dtype=torch.float32)
    adv = torch.tensor([s.advantage for s in samples], dtype=torch.float32)
    for i, s in enumerate(samples):
        n = len(s.input_ids)
        ids[i, :n] = torch.tensor(s.input_ids)
        att[i, :n] = 1
        # position t-1 of the shifted logprobs predicts token t
        mask[i, : n - 1] = torch.tensor(s.loss_mask[1:], dtype=torch.float32)
    return ids.to(device), att.to(device), mask.to(device), adv.to(device)


def behaviour_logprobs(samples: list[Sample], fallback: Any, with_mask: bool = False):
    """[B, T-1] log-probs the rollout engine gave each token (position t-1 = token t), as `collate` lays them
    out (with_mask: and the [B, T-1] mask of the rows where they are known).

    Rows without stored log-probs (rendered, not rolled out) keep `fallback`'s row and mask 0.
    """
    import torch

    out = fallback.detach().clone()
    known = torch.zeros_like(out)
    for i, s in enumerate(samples):
        lps = s.rollout_logprobs
        if lps is None or len(lps) != len(s.input_ids):
            continue
        n = len(lps)
        out[i, : n - 1] = torch.tensor(lps[1:], dtype=out.dtype, device=out.device)
        known[i, : n - 1] = 1.0
    return (out, known) if with_mask else out


def pack_by_tokens(samples: list[Sample], budget: int) -> list[list[Sample]]:
    """Micro-batches of at most `budget` padded tokens (rows x longest row, what `collate` builds), first-fit over
    the samples longest first; a sample longer than the budget goes alone. Deterministic, order-stable in a chunk."""
    bins: list[list[tuple[int, Sample]]] = []
    longest: list[int] = []
    for i, s in sorted(enumerate(samples), key=lambda x: (-len(x[1].input_ids), x[0])):
        n = len(s.input_ids)
        for b, rows in enumerate(bins):
            if (len(rows) + 1) * max(longest[b], n) <= budget:
                rows.append((i, s))
                longest[b] = max(longest[b], n)
                break
        else:
            bins.append([(i, s)])
            longest.append(n)
    return [[s for _, s in sorted(rows, key=lambda x: x[0])] for rows in bins]


# ---------------------------------------------------------------- task sampling


def curriculum_of(path: str | None, tasks: list[Any]) -> Any:
    """The task weights of a `forgec evolve` rule file (None without one)."""
    if not path:
        return None
    from forgec.runtime.curriculum import CurriculumPicker, read_rules

    if not Path(path).is_file():
        raise FileNotFoundError(f"data.curriculum: no rule file at {path} (run `forgec evolve BUILD` to write BUILD/evolve.json)")
    return CurriculumPicker(tasks, read_rules(path))


class TaskSampler:
    """Balanced across envs; draw k of env e at step s is a pure function of (seed, e, k)."""

    def __init__(self, tasks: list[Any], seed: int, envs: list[str] | None = None, holdout_fraction: float = 0.0,
                 curriculum: Any = None):
        self.curriculum = curriculum  # runtime.curriculum.CurriculumPicker (data.curriculum), or None: the permutation
        by_env: dict[str, list[Any]] = {}
        for t in sorted(tasks, key=lambda t: t.id):
            if envs and t.env not in envs:
                continue
            if holdout_fraction and (mix_seed("holdout", t.id) % 10_000) / 10_000 < holdout_fraction:
                continue
            by_env.setdefault(t.env, []).append(t)
        if not by_env:
            raise ValueError("no training tasks (check data.envs and data.holdout_fraction)")
        self.envs = sorted(by_env)
        self.by_env = by_env
        self.seed = seed
        self._perms: dict[tuple[str, int], list[Any]] = {}

    def _draw(self, env: str, k: int) -> Any:
        ts = self.by_env[env]
        epoch, i = divmod(k, len(ts))
        key = (env, epoch)
        if key not in self._perms:
            perm = list(ts)
            random.Random(mix_seed(self.seed, env, epoch)).shuffle(perm)
            self._perms[key] = perm
        return self._perms[key][i]

    def batch(self, step: int, size: int) -> list[Any]:
        """Global slots step*size ... step*size+size-1, env = slot mod #envs."""
        E = len(self.envs)
        if self.curriculum is not None:  # weighted by family, seeded per slot (issue 26)
            return [self.curriculum.pick(self.by_env[self.envs[p % E]], random.Random(mix_seed(self.seed, "curriculum", p)))
                    for p in range(step * size, (step + 1) * size)]
        return [self._draw(self.envs[p % E], p // E) for p in range(step * size, (step + 1) * size)]

    def refill(self, env: str, step: int, rank: int, rnd: int, i: int) -> Any:
        ts = self.by_env.get(env) or [t for e in self.envs for t in self.by_env[e]]
        return ts[mix_seed(self.seed, "refill", step, rank, rnd, i) % len(ts)]


# ---------------------------------------------------------------- the trainer


@dataclass
class GroupResult:
    spec: GroupSpec
    episodes: list[Any]
    rollouts: list[Rollout]
    version: int | None = None  # the oldest policy version that served any of its episodes


def drop_stale(groups: list[GroupResult], version: int, max_staleness: int) -> tuple[list[GroupResult], int]:
    """Groups an update at policy `version` may train on (served by version >= version - max_staleness),
    and the number of episodes dropped. A group goes as a whole: its advantages need all its rollouts."""
    bound = version - max_staleness
    kept = [g for g in groups if g.version is None or g.version >= bound]
    return kept, sum(len(g.episodes) for g in groups if g.version is not None and g.version < bound)


def check_cluster(cfg: TrainConfig) -> None:
    """Before DeepSpeed starts: the launcher's layout matches `cluster` (else a clear error, not a hang)."""

    cuda = None
    if cfg.cluster.gpus_per_node:
        import torch

        cuda = torch.cuda.device_count()
    errs = check_environment(cfg, os.environ, cuda)
    from forgec.train.cluster import gpu_layout_problems

    if cfg.rollout.backend == "vllm":
        import torch

        errs += gpu_layout_problems(cfg, torch.cuda.is_available() and os.environ.get("DS_ACCELERATOR", "cuda") != "cpu")
    if errs:
        from forgec.train.cluster import StartupError

        raise StartupError("the cluster does not match the config:\n  " + "\n  ".join(errs))


class Trainer:
    def __init__(self, cfg: TrainConfig, build_dir: str, resume: bool = False, allow_modified_build: bool = False):
        prepare_environment()
        import torch


        self.cfg = cfg
        check_cluster(cfg)
        self.rank, self.world = init_distributed()
        if cfg.deepspeed.cpu_threads and not use_gpu():
            torch.set_num_threads(cfg.deepspeed.cpu_threads)
        seed_everything(cfg.data.seed)
        self.out = Path(cfg.output)
        if self.rank == 0:
            self.out.mkdir(parents=True, exist_ok=True)
        barrier()
        self.build = load(build_dir, allow_modified_build=allow_modified_build)
        self.sampler = TaskSampler(self.build.tasks, cfg.data.seed, cfg.data.envs, cfg.data.holdout_fraction,
                                   curriculum=curriculum_of(cfg.data.curriculum, self.build.tasks))
        self.online = None
        if cfg.data.curriculum_every:  # issue 26: weights learnt from the training rollouts (train/curriculum.py)
            from forgec.runtime.curriculum import read_rules
            from forgec.train.curriculum import OnlineCurriculum

            self.online = OnlineCurriculum(self.build.tasks, cfg.data.curriculum_every,
                                           read_rules(cfg.data.curriculum) if cfg.data.curriculum else None)
        self.model_path = resolve_model_path(cfg, self.build, self.rank)
        self.tok = load_tokenizer(cfg.model.tokenizer or self.model_path, cfg.template.end_of_turn)
        from forgec.train.cluster import StartupError
        from forgec.train.template import ChatTemplateError, check_template

        try:  # the model's own template against forgec's rendering and parser, before any GPU time is spent
            check_template(self.tok, cfg.template.system_prompt, cfg.template.keep_thinking)
        except ChatTemplateError as e:
            raise StartupError(f"{cfg.model.tokenizer or self.model_path}: {e}") from None
        self.steps_per_update = cfg.algo.ppo_epochs * cfg.algo.minibatches
        self.ds_conf = ds_config(cfg, self.world, cfg.optim.micro_batches)
        model = load_model(self.model_path, cfg, self.ds_conf)
        self.engine = make_engine(cfg, model, self.ds_conf, cfg.optim.lr, cfg.optim.steps * self.steps_per_update)
        self.device = self.engine.device
        self.ref = None
        if cfg.algo.beta > 0:
            self.ref = load_reference(self.model_path, cfg, self.ds_conf, self.device)
        self.pad_id = self.tok.pad_token_id
        self.eos_id = end_of_turn_id(self.tok)  # generation stops where a turn ends (PolicyAgent and eval ask the same)

        self.start_step = 0
        self.history: list[dict] = []
        ckroot = self.out / "checkpoints"
        if resume:
            from forgec.train.checkpoint import find_latest, load_checkpoint

            ck = find_latest(ckroot)
            if ck is not None:
                st = load_checkpoint(self.engine, ck, self.rank)
                self.start_step = int(st["step"])
                self.history = list(st.get("metrics", []))
                if self.online is not None and st.get("curriculum"):
                    self.online.load(st["curriculum"])
                    if self.online.rules:
                        self.sampler.curriculum = self.online.picker()
        self.logger = MetricsLogger(self.out, enabled=self.rank == 0, tensorboard=cfg.logging.tensorboard,
                                    progress=cfg.logging.progress, total_steps=cfg.optim.steps)
        if resume:
            self.logger.truncate_after(self.start_step)
        elif self.rank == 0 and self.logger.path.exists():
            self.logger.path.unlink()
        self.server = None
        self.engine_backend = self._make_backend()

    # ------------------------------------------------------------ rollout backend

    def _make_backend(self):
        """The rollout fleet: the local model (hf) or vLLM servers (given URLs, or started per node)."""

        cfg = self.cfg.rollout
        self.servers: list = []  # vLLM servers this process started
        self.started_urls: list[str] = []  # every rank's started servers (empty when the config names URLs)
        self.version = self.start_step  # policy version = updates applied (and pushed to the rollout engines)
        self._version_cond = threading.Condition()
        self._hf_copy = None
        if cfg.backend == "hf":
            model = self.engine.module
            if cfg.max_staleness > 0:
                # asynchronous: the producer generates with its own copy while the trainer updates the original
                model = load_model(self.model_path, self.cfg, self.ds_conf, zero_init=False).to(self.device)
                model.requires_grad_(False)
                self._hf_copy = model
                self._hf_lock = threading.Lock()
                self._refresh_copy()
                eng = _LockedHFEngine(model, self.eos_id, self.pad_id, lock=self._hf_lock)
            else:
                eng = HFEngine(model, self.eos_id, self.pad_id)
            self.fleet = Fleet({"local": eng}, version=self.version)
            return eng
        self.sync_dir = Path(cfg.sync_dir or (self.out / "policy"))
        self._save_policy(self.sync_dir)
        urls = list(cfg.vllm_base_urls) or ([cfg.vllm_base_url] if cfg.vllm_base_url else [])
        if not urls:
            mine = self._start_servers() if int(os.environ.get("LOCAL_RANK", "0")) == 0 else []
            self.started_urls = [u for part in all_gather_objects(mine) for u in part]
            urls = self.started_urls
        self.server = self.servers[0] if self.servers else None
        self.fleet = Fleet.of_urls(urls, cfg.vllm_served_name, self.eos_id, timeout=cfg.request_timeout, max_retries=0)
        self.fleet.set_version(self.version)
        return self.fleet.endpoints[0].engine

    def _start_servers(self) -> list[str]:
        """This node's servers (cluster.server_layout), started in parallel; their URLs as other nodes reach them."""
        import socket
        from concurrent.futures import ThreadPoolExecutor


        cfg = self.cfg.rollout
        from forgec.train.cluster import discover

        node = discover(os.environ).node
        layout = server_layout(self.cfg)
        for k, s in enumerate(layout):
            extra = list(cfg.vllm_extra_args)
            if cfg.tensor_parallel_size > 1 and not any(a.startswith("--tensor-parallel-size") for a in extra):
                extra += ["--tensor-parallel-size", str(cfg.tensor_parallel_size)]
            env = {"CUDA_VISIBLE_DEVICES": ",".join(map(str, s["gpus"]))} if s["gpus"] else {}
            log = self.out / ("vllm.log" if len(layout) == 1 and node == 0 else f"vllm-node{node}-{k}.log")
            self.servers.append(VLLMServer(self.sync_dir, s["port"], cfg.vllm_python, served_name=cfg.vllm_served_name,
                                           extra_args=extra, log_path=log, host=cfg.vllm_host, env_extra=env, dtype=cfg.vllm_dtype,
                                           max_model_len=cfg.vllm_max_model_len or cfg.max_context_tokens,
                                           sleep_mode=cfg.placement == "colocated",
                                           weight_transfer="nccl" if cfg.weight_sync == "nccl" else None, sync_retries=cfg.sync_retries))
        with ThreadPoolExecutor(len(self.servers) or 1) as ex:
            list(ex.map(lambda srv: srv.start(), self.servers))
        host = "127.0.0.1" if cfg.vllm_host in ("127.0.0.1", "localhost") else socket.getfqdn()
        return [f"http://{host}:{srv.port}/v1" for srv in self.servers]

    def _refresh_copy(self) -> None:
        """hf + asynchronous: copy the trained weights into the producer's model (ZeRO-3: gathered, every rank)."""
        import torch

        with gather_all_params(self.engine), self._hf_lock, torch.no_grad():
            for dst, src in zip(self._hf_copy.parameters(), self.engine.module.parameters()):
                dst.data.copy_(src.data.to(dst.dtype))

    def _save_policy(self, d: Path) -> None:
        from forgec.train.checkpoint import export_hf

        export_hf(self.engine, self.tok, d, self.rank)
        barrier()

    def _update_and_push(self, samples: list[Sample]) -> tuple[dict, str, float, float]:
        """The update, then the weights to the rollout engines; colocated: the servers sleep through the update."""
        times = {}

        def update():
            t = time.perf_counter()
            barrier()  # every node's servers are asleep before any rank allocates for the update
            out = self.update(samples)
            times["update"] = time.perf_counter() - t
            return out

        def push():
            t = time.perf_counter()
            out = self._push_weights()
            times["sync"] = time.perf_counter() - t
            return out

        if self.cfg.rollout.backend == "vllm" and self.cfg.rollout.placement == "colocated":
            from forgec.train.weightsync import colocated_update

            upd, sync = colocated_update(self._my_urls(), update, push)
        else:
            upd, sync = update(), push()
        return upd, sync, times["update"], times["sync"]

    def _push_weights(self) -> str:
        """New weights to every rollout engine; bumps the policy version the fleet reports."""
        how = "none"
        new_version = self.version + 1
        if self.cfg.rollout.backend != "vllm":
            if self._hf_copy is not None:
                self._refresh_copy()
                how = "copy"
            self.fleet.set_version(new_version)
        else:
            how = self._sync_fleet(new_version)
        with self._version_cond:
            self.version = new_version
            self._version_cond.notify_all()
        return how

    def _sync_fleet(self, new_version: int) -> str:
        """Save once to shared storage, then every server loads it: the node that started a server syncs it
        (reload, or restart), rank 0 reloads servers given by URL. A server that fails is taken out (the run
        goes on with the rest) and comes back at a later sync that reaches it."""

        r = self.cfg.rollout
        if r.weight_sync == "nccl":
            return self._sync_nccl(new_version)
        self._save_policy(self.sync_dir)
        self.fleet.pause()  # asynchronous producer: requests wait during the sync instead of failing over
        barrier()
        try:
            if self.servers:
                res = sync_servers({srv_url: srv for srv_url, srv in zip(self._my_urls(), self.servers)}, self.sync_dir, r.weight_sync,
                                   new_version, r.sync_retries)
            elif self.rank == 0 and not self.started_urls:
                res = sync_servers({e.name: None for e in self.fleet.endpoints}, self.sync_dir, r.weight_sync, new_version, r.sync_retries)
            else:
                res = {}
            merged: dict[str, str] = {}
            for part in all_gather_objects(res):
                merged.update(part)
            ok = [u for u, how in merged.items() if not how.startswith("error")]
            for e in self.fleet.endpoints:
                how = merged.get(e.name, "error: not synced")
                if how.startswith("error"):
                    self.fleet.take_out(e, RuntimeError(f"weight sync failed: {how}"))
                else:
                    e.alive, e.error = True, None
            if not ok:
                raise RuntimeError("no rollout server took the new weights: " + "; ".join(f"{u}: {h}" for u, h in merged.items()))
            self.fleet.set_version(new_version, ok)
            self._fleet_consistent = fleet_consistent(ok, r.vllm_served_name, self._probe_prompt()) if self.rank == 0 else None
            # the version each server reports itself (/weight_info, stamped by the sync), not the trainer's bookkeeping
            self._reported_versions = server_versions([e.name for e in self.fleet.endpoints]) if self.rank == 0 else None
            barrier()
        finally:
            self.fleet.resume()
        return ",".join(sorted({h for h in merged.values() if not h.startswith("error")}))

    def _sync_nccl(self, new_version: int) -> str:
        """weight_sync=nccl (GPU; not yet run on one): vLLM's weight-transfer API, layer by layer from the shards."""
        import torch

        from forgec.train.weightsync import LayerwiseSource, NcclWeightSync

        r = self.cfg.rollout
        urls = [e.name for e in self.fleet.endpoints if e.alive]
        if getattr(self, "_nccl", None) is None:
            self._nccl = NcclWeightSync(urls, sender=self.rank == 0, retries=r.sync_retries)
            self._nccl.init()
        wire = {"auto": torch.bfloat16, "bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}[r.vllm_dtype]
        self.fleet.pause()
        try:
            self._nccl.push(LayerwiseSource(self.engine.module, wire), new_version)
            barrier()
            self.fleet.set_version(new_version, urls)
            self._reported_versions = server_versions(urls) if self.rank == 0 else None
        finally:
            self.fleet.resume()
        return "nccl"

    def _my_urls(self) -> list[str]:
        import socket

        host = "127.0.0.1" if self.cfg.rollout.vllm_host in ("127.0.0.1", "localhost") else socket.getfqdn()
        return [f"http://{host}:{srv.port}/v1" for srv in self.servers]

    def _probe_prompt(self) -> list[int]:
        """A one-line prompt in the model's own format, for checking that every server answers alike."""
        hello = [{"role": "user", "content": "Hello"}]
        return tokenize_text(self.tok, render_conversation(hello, add_generation_prompt=True, tokenizer=self.tok))

    # ------------------------------------------------------------ rollouts

    def _agent_factory(self):

        r = self.cfg.rollout
        sampling = Sampling(r.max_new_tokens, r.temperature, r.top_p)
        return lambda seed: PolicyAgent(self.fleet.episode(), self.tok, sampling, seed, None, self.cfg.template.keep_thinking,
                                        r.max_context_tokens)

    def _user_factory(self):
        """None = the scripted user; user=llm: an LLMUser pinned to the least-loaded endpoint of the user pool."""
        r = self.cfg.rollout
        if r.user != "llm":
            return None

        if getattr(self, "user_pool", None) is None:
            from forgec.train.fleet import Fleet

            self.user_pool = Fleet({u: None for u in r.user_base_urls})

        def make(task, seed):
            ep = self.user_pool.assign()
            user = LLMUser(task, ep.name, r.user_model, seed=seed, timeout=r.request_timeout)
            user.release = lambda: self.user_pool.release(ep)
            return user

        return make

    def _judge_factory(self):
        """None = the rule judge; judge=llm: forgec eval's LLMJudge on the least-loaded endpoint of the judge pool."""
        r = self.cfg.rollout
        if r.judge != "llm":
            return None
        if getattr(self, "judge_pool", None) is None:
            from forgec.train.fleet import Fleet

            self.judge_pool = Fleet({u: None for u in r.judge_base_urls})

        def make():
            from forgec.runtime.judge import LLMJudge

            ep = self.judge_pool.assign()
            judge = LLMJudge(ep.name, r.judge_model, timeout=r.request_timeout, seed=self.cfg.data.seed)
            judge.release = lambda: self.judge_pool.release(ep)
            return judge

        return make

    def _run(self, specs: list[GroupSpec]) -> list[GroupResult]:

        if not specs:
            return []
        G = self.cfg.rollout.group_size
        # hf: every episode in flight at once, so each turn is one batched generate; vllm: bounded requests
        conc = len(specs) * G if self.cfg.rollout.backend == "hf" else self.cfg.rollout.concurrency
        groups = asyncio.run(run_groups(self.build, specs, G, self._agent_factory(), max_turns=self.cfg.rollout.max_turns,
                                        concurrency=conc, user_factory=self._user_factory(), judge_factory=self._judge_factory()))
        eps_all = [e for eps in groups for e in eps]
        failed = [e for e in eps_all if e.end_reason in ("agent_error", "error") and not (e.error or "").startswith("context limit")]
        if eps_all and len(failed) * 2 > len(eps_all):
            # the policy backend is broken (e.g. every vLLM server died): stop instead of training on nothing
            raise RuntimeError(f"{len(failed)}/{len(eps_all)} rollouts failed; first error: {failed[0].error}")
        out = []
        tally = self._tally
        for spec, eps in zip(specs, groups):
            rs = [Rollout(env=spec.task.env, task_id=spec.task.id, reward=float(e.reward), masked=bool(e.user_error),
                          group=spec.group) for e in eps]
            self._context_limited += sum(1 for e in eps if (e.error or "").startswith("context limit"))
            versions = [v for v in (getattr(e, "policy_version", None) for e in eps) if v is not None]
            out.append(GroupResult(spec, eps, rs, min(versions) if versions else None))
            for e in eps:
                tally["gen_tokens"] += sum(len(x.token_ids or []) for x in e.replies)
                for k in ("total_s", "agent_s", "user_s", "env_s"):
                    tally[k] += float(e.timings.get(k, 0.0))
                tally["failovers"] += int(getattr(e, "failovers", 0))
        return out

    def collect(self, step: int) -> tuple[list[GroupResult], dict]:
        """This rank's groups for the step, after dynamic filtering with bounded refill.

        stats["tally"]: generated tokens, summed episode timings, failovers, context-limited episodes.
        One caller at a time (the main thread, or the asynchronous producer).
        """
        self._tally = {"gen_tokens": 0, "total_s": 0.0, "agent_s": 0.0, "user_s": 0.0, "env_s": 0.0, "failovers": 0}
        self._context_limited = 0
        groups, stats = self._collect(step)
        stats["tally"] = dict(self._tally, context_limited=self._context_limited)
        return groups, stats

    def _collect(self, step: int) -> tuple[list[GroupResult], dict]:
        cfg = self.cfg
        B = cfg.rollout.tasks_per_step
        tasks = self.sampler.batch(step, B)
        specs = [GroupSpec(t, g, mix_seed(cfg.data.seed, "rollout", step, g)) for g, t in enumerate(tasks)][self.rank::self.world]
        results = self._run(specs)
        stats = {"groups_sampled": len(results), **asdict(FilterStats()),
                 "all_episodes": [r for g in results for r in g.rollouts]}
        if not cfg.algo.dynamic_filtering:
            return results, stats
        meu = cfg.algo.meu_mask
        # refills replace the dropped groups env for env (the dropped set is the same every round)
        dropped_envs = sorted(g.spec.task.env for g in results if not has_signal(g.rollouts, meu))

        def refill(need: int, rnd: int) -> list[GroupResult]:
            new_specs = []
            for i in range(need):
                env = dropped_envs[i % len(dropped_envs)] if dropped_envs else self.sampler.envs[0]
                t = self.sampler.refill(env, step, self.rank, rnd, i)
                gid = B + (self.rank * 64 + rnd) * 1024 + i
                new_specs.append(GroupSpec(t, gid, mix_seed(cfg.data.seed, "refill", step, self.rank, rnd, i)))
            new = self._run(new_specs)
            stats["all_episodes"] += [r for g in new for r in g.rollouts]
            return new

        kept, fs = dynamic_filter(results, refill, cfg.algo.max_refill_rounds, meu, rollouts_of=lambda g: g.rollouts)
        stats.update(asdict(fs))
        return kept, stats

    # ------------------------------------------------------------ update

    def _samples(self, groups: list[GroupResult]) -> list[Sample]:
        out = []
        for g in groups:
            tools = self.build.envs[g.spec.task.env].TOOLS
            for j, (ep, r) in enumerate(zip(g.episodes, g.rollouts)):
                if self.cfg.algo.meu_mask and r.masked:
                    continue  # MEU: out of the loss and its denominator
                for s in episode_to_samples(self.tok, ep.messages, ep.replies, tools, self.cfg.template.system_prompt,
                                            self.cfg.template.keep_thinking):
                    s.advantage = r.advantage
                    s.meta = {"env": r.env, "task_id": r.task_id, "group": r.group, "index": j, "reward": r.reward}
                    out.append(s)
        return out

    def _logprobs(self, model, ids, att, mask=None):
        """Log-probs of the sampling distribution (logits / rollout temperature), LM head in chunks."""
        from forgec.train.loss import sequence_logprobs

        t = self.cfg.rollout.temperature
        return sequence_logprobs(model, ids, att, mask, temperature=t if t > 0 else 1.0,
                                 chunk_tokens=self.cfg.algo.logprob_chunk_tokens)

    def _micro_batches(self, minis: list[list[Sample]]) -> list[list[list[Sample]]]:
        """Each minibatch's micro-batches: exactly optim.micro_batches, or packed under optim.micro_batch_tokens
        (then every rank runs as many as the busiest rank, padding with empty ones: ZeRO keeps ranks in step)."""
        budget = self.cfg.optim.micro_batch_tokens
        if not budget:
            return [split_micro_batches(m, self.cfg.optim.micro_batches) for m in minis]
        packed = [pack_by_tokens(m, budget) for m in minis]
        counts = all_reduce_max([float(max(len(p), 1)) for p in packed])
        return [p + [[] for _ in range(int(c) - len(p))] for p, c in zip(packed, counts)]

    def update(self, samples: list[Sample]) -> dict:
        """Decoupled PPO (train/loss.py) over the step's samples; the proximal log-probs are the weights
        before this update (recomputed when there is more than one optimizer step, else the first forward's
        own values), the behaviour log-probs those the rollout engine stored."""
        import torch

        from forgec.train.loss import ppo_clip_loss

        cfg = self.cfg
        mbs = cfg.algo.minibatches
        # minibatches: a fixed split of this rank's samples (same count on every rank)
        minis = [samples[i::mbs] for i in range(mbs)]
        chunks_per_mini = self._micro_batches(minis)
        denoms = all_reduce_sum([float(sum(s.num_loss_tokens for s in m)) for m in minis])
        is_zero = {"is_weight_mean": 0.0, "is_weight_max": 0.0, "is_capped_frac": 0.0, "mismatch_kl_k1": 0.0,
                   "mismatch_kl_k3": 0.0, "is_tokens": 0}
        if sum(denoms) == 0:
            # no trainable token anywhere (every group filtered or masked): no optimizer step, since
            # Adam's momentum would still move the weights on a zero gradient
            return {"loss": 0.0, "pg_loss": 0.0, "kl": 0.0, "clip_frac": 0.0, "approx_kl_old": 0.0, "loss_tokens": 0,
                    "grad_norm": 0.0, "lr": float(self.engine.get_lr()[0]), "skipped_update": True, **is_zero,
                    "micro_batches": max(len(c) for c in chunks_per_mini)}
        prox: dict[tuple[int, int], torch.Tensor] = {}
        need_prox = self.steps_per_update > 1
        engine = self.engine
        if need_prox:
            with torch.no_grad():
                for mi, chunks in enumerate(chunks_per_mini):
                    for ci, ch in enumerate(chunks):
                        ids, att, mask, _ = collate(ch, self.pad_id, self.device)
                        prox[(mi, ci)] = self._logprobs(engine.module, ids, att, mask).detach()
        agg = {"pg_sum": 0.0, "kl_sum": 0.0, "clipped": 0.0, "tokens": 0.0, "approx_kl": 0.0}
        isw = {"is_tokens": 0.0, "is_weight_sum": 0.0, "is_capped_tokens": 0.0, "mismatch_k1_sum": 0.0, "mismatch_k3_sum": 0.0}
        is_max = 0.0
        grad_norms = []
        by_budget = bool(cfg.optim.micro_batch_tokens)
        # undo DeepSpeed's 1/gas and 1/world averaging: token-mean over the step
        scale = engine.gradient_accumulation_steps() * self.world
        for epoch in range(cfg.algo.ppo_epochs):
            for mi, chunks in enumerate(chunks_per_mini):
                denom = max(denoms[mi], 1.0)
                for ci, ch in enumerate(chunks):
                    if by_budget:  # a variable number of micro-batches: the last one of the minibatch steps
                        engine.set_gradient_accumulation_boundary(ci == len(chunks) - 1)
                    ids, att, mask, adv = collate(ch, self.pad_id, self.device)
                    logp = self._logprobs(engine, ids, att, mask)
                    prox_lp = prox[(mi, ci)] if need_prox else logp.detach()
                    behav_lp, behav_mask = behaviour_logprobs(ch, prox_lp, with_mask=True)
                    ref_lp = None
                    if self.ref is not None:
                        with torch.no_grad():
                            ref_lp = self._logprobs(self.ref, ids, att, mask)
                    parts = ppo_clip_loss(logp, prox_lp, adv, mask, denom, cfg.algo.clip_eps_low, cfg.algo.clip_eps_high,
                                          ref_lp, cfg.algo.beta, behav_logp=behav_lp, behav_mask=behav_mask,
                                          is_cap=cfg.algo.is_cap)
                    engine.backward(parts.loss * scale)
                    engine.step()
                    agg["pg_sum"] += parts.pg_sum
                    agg["kl_sum"] += parts.kl_sum
                    agg["clipped"] += parts.clipped_tokens
                    agg["tokens"] += parts.tokens
                    agg["approx_kl"] += parts.approx_kl_old_sum
                    if epoch == 0:  # the weights are fixed for the step: count each token once
                        for k in isw:
                            isw[k] += getattr(parts, k)
                        is_max = max(is_max, parts.is_weight_max)
                gn = engine.get_global_grad_norm()
                if gn is not None:
                    grad_norms.append(float(gn))
        tot = all_reduce_sum([agg["pg_sum"], agg["kl_sum"], agg["clipped"], agg["tokens"], agg["approx_kl"], *isw.values()])
        ntok = max(tot[3], 1.0)
        ist = dict(zip(isw, tot[5:]))
        nis = max(ist["is_tokens"], 1.0)
        return {
            "loss": (tot[0] + cfg.algo.beta * tot[1]) / ntok,
            "pg_loss": tot[0] / ntok,
            "kl": tot[1] / ntok,
            "clip_frac": tot[2] / ntok,
            "approx_kl_old": tot[4] / ntok,
            "loss_tokens": int(tot[3] / cfg.algo.ppo_epochs),
            "grad_norm": grad_norms[-1] if grad_norms else 0.0,
            "lr": float(engine.get_lr()[0]),
            "skipped_update": False,
            # behaviour correction and the rollout-engine-vs-trainer mismatch (tokens with stored log-probs)
            "is_weight_mean": ist["is_weight_sum"] / nis,
            "is_weight_max": all_reduce_max([is_max])[0],
            "is_capped_frac": ist["is_capped_tokens"] / nis,
            "mismatch_kl_k1": ist["mismatch_k1_sum"] / nis,
            "mismatch_kl_k3": ist["mismatch_k3_sum"] / nis,
            "is_tokens": int(ist["is_tokens"]),
            "micro_batches": max(len(c) for c in chunks_per_mini),
        }

    # ------------------------------------------------------------ the loop

    def param_checksum(self) -> float:
        """Sum of |w| over all weights: a cheap 'parameters changed' probe, from each rank's shard + one
        all-reduce (it used to gather the whole model every step only for this number)."""
        from forgec.train.weightsync import shard_checksum

        return shard_checksum(self.engine.module)

    def rollouts_now(self, step: int) -> dict:
        """Synchronous rollouts for `step` with the current weights (hf: ZeRO-3 gathers them once)."""
        t0 = time.perf_counter()
        ctx = gather_all_params(self.engine) if self.cfg.rollout.backend == "hf" else contextlib.nullcontext()
        with ctx:
            groups, fstats = self.collect(step)
        rollout_s = time.perf_counter() - t0
        return {"step": step, "groups": groups, "stats": fstats, "rollout_s": rollout_s, "wait_s": rollout_s}

    def train_step(self, step: int, rollouts: dict | None = None) -> dict:
        """One update on `rollouts` (from the asynchronous producer), or on rollouts made now."""
        cfg = self.cfg
        if rollouts is None:
            rollouts = self.rollouts_now(step)
        groups, fstats = rollouts["groups"], rollouts["stats"]
        rollout_s = rollouts["rollout_s"]
        tally = fstats["tally"]
        gen_tokens = tally["gen_tokens"]
        # bounded staleness: groups served by a policy older than the bound are dropped (counted)
        stale = 0
        if cfg.rollout.max_staleness > 0:
            groups, stale = drop_stale(groups, self.version, cfg.rollout.max_staleness)
        lags = [self.version - g.version for g in groups if g.version is not None]
        # advantages over the whole batch (every rank's kept groups)
        mine = [r for g in groups for r in g.rollouts]
        everyone = all_gather_objects(([(r.env, r.task_id, r.reward, r.masked, r.group) for r in mine],
                                       [(r.env, r.reward, r.masked) for r in fstats["all_episodes"]],
                                       {k: v for k, v in fstats.items() if k not in ("all_episodes", "tally")}, gen_tokens,
                                       tally["context_limited"], (tally, stale, lags, rollouts["wait_s"]),
                                       [(r.task_id, r.reward) for r in fstats["all_episodes"]] if self.online is not None else []))
        batch = []
        for rank_i, (rows, *_rest) in enumerate(everyone):
            for env, tid, rew, masked, grp in rows:
                batch.append(Rollout(env, tid, rew, masked, group=grp * 1000 + rank_i))
        # ERPO's per-env std over every rollout played this step, before dynamic filtering (train/advantage.py)
        pool = [Rollout(env, "", rew, masked) for e in everyone for env, rew, masked in e[1]]
        compute_advantages(batch, cfg.algo.advantage, cfg.algo.eps_std, cfg.algo.meu_mask, env_pool=pool)
        offset = sum(len(e[0]) for e in everyone[: self.rank])
        for r, b in zip(mine, batch[offset: offset + len(mine)]):
            r.advantage = b.advantage
        samples = self._samples(groups)
        version_used = self.version
        upd, sync, update_s, sync_s = self._update_and_push(samples)
        servers = self._throughput()
        # metrics over every episode played this step (including filtered groups)
        played = [x for e in everyone for x in e[1]]
        rewards_env: dict[str, list[float]] = {}
        for env, rew, _m in played:
            rewards_env.setdefault(env, []).append(rew)
        fsum = {k: sum(e[2][k] for e in everyone) for k in ("groups_sampled", "filtered_groups", "refilled_groups", "short_groups")}
        fsum["refill_rounds"] = max(e[2]["refill_rounds"] for e in everyone)
        gen_total = sum(e[3] for e in everyone)
        n = max(len(played), 1)
        m = {
            "reward_mean": sum(r for _, r, _ in played) / n,
            "pass_rate": sum(1 for _, r, _ in played if r >= 1.0) / n,
            "reward_mean_env": {e: sum(v) / len(v) for e, v in sorted(rewards_env.items())},
            "episodes": len(played),
            "meu_masked": sum(1 for _, _, mk in played if mk),
            "meu_masked_env": {e: sum(1 for en, _, mk in played if en == e and mk) / len(v) for e, v in sorted(rewards_env.items())},
            "context_limited": sum(e[4] for e in everyone),  # episodes cut because the prompt outgrew max_context_tokens
            "trained_groups": len({(b.task_id, b.group) for b in batch}),
            **fsum,
            **advantage_stats(batch, cfg.algo.meu_mask),
            **upd,
            "gen_tokens": int(gen_total),
            "rollout_s": rollout_s,
            "update_s": update_s,
            "sync_s": sync_s,
            "weight_sync": sync,
            "rollout_tokens_per_s": gen_total / max(rollout_s, 1e-9) / max(self.world, 1),
            "update_tokens_per_s": upd["loss_tokens"] / max(update_s, 1e-9),
            **self._step_accounting(everyone, version_used, servers),
        }
        if self.online is not None:  # issue 26: the curriculum learns from this step's episodes (every rank's)
            self.online.observe([x for e in everyone for x in e[6]], step)
            m["curriculum_share"] = self.online.shares(self.sampler.batch(step, cfg.rollout.tasks_per_step))
            if self.online.due(step + 1):
                m["curriculum_weights"] = self.online.update()
                self.sampler.curriculum = self.online.picker()
                if self.rank == 0:
                    self.online.write(self.out / "evolve.json")
        return m

    def _throughput(self) -> dict:
        """Per server over this step's wall clock, every rank's traffic summed (busy share: the busiest client's view)."""
        merged: dict[str, dict] = {}
        for part in all_gather_objects(self.fleet.take_stats()):
            for name, st in part.items():
                cur = merged.setdefault(name, {"tokens": 0, "requests": 0, "failures": 0, "busy_share": 0.0, "window_s": 0.0,
                                               "alive": st["alive"], "version": st["version"]})
                cur["tokens"] += st["tokens"]
                cur["requests"] += st["requests"]
                cur["failures"] += st["failures"]
                cur["busy_share"] = max(cur["busy_share"], st["busy_share"])
                cur["window_s"] = max(cur["window_s"], st["window_s"])
                cur["alive"] = cur["alive"] and st["alive"]
        for st in merged.values():
            st["tokens_per_s"] = st["tokens"] / max(st["window_s"], 1e-9)
        return merged

    def _step_accounting(self, everyone: list, version_used: int, servers: dict) -> dict:
        """Throughput and asynchrony metrics (all timing-dependent, like rollout_s)."""
        tallies = [e[5][0] for e in everyone]
        tot = {k: sum(t[k] for t in tallies) for k in ("total_s", "agent_s", "user_s", "env_s", "failovers")}
        lags = [x for e in everyone for x in e[5][2]]
        out = {
            "policy_version": version_used,
            "stale_dropped": sum(e[5][1] for e in everyone),
            "staleness_mean": sum(lags) / len(lags) if lags else 0.0,
            "trainer_wait_s": max(e[5][3] for e in everyone),
            "env_user_share": (tot["user_s"] + tot["env_s"]) / tot["total_s"] if tot["total_s"] > 0 else 0.0,
            "failovers": tot["failovers"],
            "servers": {n: {k: st[k] for k in ("tokens_per_s", "busy_share", "requests", "tokens", "failures", "alive", "version")}
                        for n, st in servers.items()},
        }
        if getattr(self, "_fleet_consistent", None) is not None:
            out["servers_consistent"] = self._fleet_consistent
        if getattr(self, "_reported_versions", None) is not None:
            out["server_weight_versions"] = self._reported_versions
        return out

    def run(self) -> dict:
        try:
            return self._train_loop()
        finally:
            self.close()

    def _train_loop(self) -> dict:
        cfg = self.cfg
        from forgec.train.checkpoint import export_hf

        last = {}
        producer = None
        if cfg.rollout.max_staleness > 0 and self.start_step < cfg.optim.steps:
            producer = RolloutProducer(self, self.start_step, cfg.optim.steps, cfg.rollout.max_staleness)
            producer.start()
        try:
            for step in range(self.start_step, cfg.optim.steps):
                t_step = time.perf_counter()
                m = self.train_step(step, producer.get(step) if producer else None)
                m["step_s"] = time.perf_counter() - t_step  # wall clock of the step, rollout wait included
                m["param_checksum"] = self.param_checksum()
                done = step + 1
                self.history.append({k: v for k, v in m.items() if k in ("reward_mean", "pass_rate", "loss")})
                # trained/filtered groups: a loss of 0 with 0 trained groups means dynamic filtering left no signal
                self.logger.log(done, m, info=f"reward {m['reward_mean']:.3f} loss {m['loss']:.4f} "
                                              f"groups trained {m.get('trained_groups', '-')} filtered {m.get('filtered_groups', '-')}"
                                              f"  {throughput_line(m)}")
                last = m
                if cfg.checkpoint.every and done % cfg.checkpoint.every == 0 and done < cfg.optim.steps:
                    self._checkpoint(done)
        finally:
            if producer is not None:
                producer.stop()
        if self.start_step < cfg.optim.steps:  # the final state, always resumable
            self._checkpoint(cfg.optim.steps)
        if cfg.checkpoint.export_hf:
            export_hf(self.engine, self.tok, self.out / "final", self.rank)
        return last

    def _checkpoint(self, done: int) -> None:
        """Engine + RNG + trainer state after `done` steps (the data cursor is a function of the step)."""
        from forgec.train.checkpoint import save_checkpoint

        cfg = self.cfg
        save_checkpoint(self.engine, self.out / "checkpoints", done,
                        {"step": done, "cursor": done * cfg.rollout.tasks_per_step, "metrics": self.history,
                         "config": cfg.model_dump(mode="json"),
                         **({"curriculum": self.online.state()} if self.online is not None else {})},
                        self.rank, cfg.checkpoint.keep_last)

    def close(self) -> None:
        self.logger.close()
        for srv in getattr(self, "servers", []) or ([self.server] if self.server is not None else []):
            srv.stop()
        self.servers = []
        self.server = None


def throughput_line(m: dict) -> str:
    """The progress line's throughput part: generated tok/s per server, busy share, trainer wait, env+user share."""
    srv = m.get("servers") or {}
    parts = []
    for i, (name, st) in enumerate(sorted(srv.items())):
        label = "local" if name == "local" else f"s{i}"
        parts.append(f"{label} {st['tokens_per_s']:.0f}tok/s {100 * st['busy_share']:.0f}%" + ("" if st["alive"] else " OUT"))
    extra = f"wait {m.get('trainer_wait_s', 0.0):.1f}s env+user {100 * m.get('env_user_share', 0.0):.0f}%"
    if m.get("stale_dropped"):
        extra += f" stale-dropped {m['stale_dropped']}"
    return " | ".join(parts + [extra])


class RolloutProducer(threading.Thread):
    """Asynchronous rollouts (AReaL-style): generates step s's episodes as soon as the policy version is
    at least s - max_staleness, while the trainer updates on earlier steps. Only local work (no collectives):
    every rank runs its own producer; the main threads stay in lockstep."""

    def __init__(self, trainer: Trainer, start: int, end: int, max_staleness: int):
        super().__init__(daemon=True, name="forgec-rollouts")
        import queue

        self.t, self.first, self.end, self.bound = trainer, start, end, max_staleness
        self.q: queue.Queue = queue.Queue()
        self._halt = threading.Event()

    def run(self) -> None:
        t = self.t
        try:
            for s in range(self.first, self.end):
                with t._version_cond:
                    while t.version < s - self.bound and not self._halt.is_set():
                        t._version_cond.wait(0.1)
                if self._halt.is_set():
                    return
                t0 = time.perf_counter()
                groups, stats = t.collect(s)
                self.q.put({"step": s, "groups": groups, "stats": stats, "rollout_s": time.perf_counter() - t0})
        except BaseException as e:  # noqa: BLE001 - handed to the trainer, which raises it
            self.q.put(e)

    def get(self, step: int) -> dict:
        t0 = time.perf_counter()
        item = self.q.get()
        if isinstance(item, BaseException):
            raise RuntimeError(f"the rollout producer failed: {type(item).__name__}: {item}") from item
        assert item["step"] == step, (item["step"], step)
        item["wait_s"] = time.perf_counter() - t0
        return item

    def stop(self) -> None:
        self._halt.set()
        self.t.fleet.resume()
        self.join(timeout=5.0)


class _LockedHFEngine:
    """HFEngine on the producer's model copy; the lock keeps a weight refresh out of a running generate."""

    def __new__(cls, model: Any, eos: int, pad: int, lock: Any):

        class Locked(HFEngine):
            def generate_batch(self, *a, **k):
                with lock:
                    return super().generate_batch(*a, **k)

        return Locked(model, eos, pad)
