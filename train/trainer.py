"""The ERPO/GRPO trainer: rollouts -> advantages -> PPO-clip update on DeepSpeed -> checkpoint.

One step, on every process (data parallel; rank r owns groups r, r+W, ...):

1. sample B tasks (balanced across envs, a pure function of seed and step), run G episodes
   each through the runtime (policy agent, scripted user, rule judge);
2. dynamic filtering: drop zero-variance groups, refill from more tasks (bounded);
3. gather every process's rewards, compute advantages over the whole batch (ERPO's
   per-env std needs them all), MEU-masked episodes out;
4. tokenize (rollout ids verbatim), split this process's samples into exactly
   `optim.micro_batches` micro-batches (equal count on every rank keeps ZeRO-3 in lockstep),
   PPO-clip token-mean loss, DeepSpeed backward/step;
5. push weights to vLLM (vllm backend), log, checkpoint.

CPU: DS_ACCELERATOR=cpu, gloo, fp32, torch AdamW as the client optimizer, DeepSpeed's shm
comm op not built. GPU: nccl, bf16.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from forgec.train.advantage import FilterStats, Rollout, advantage_stats, compute_advantages, dynamic_filter, has_signal
from forgec.train.config import TrainConfig, resolve_config_path
from forgec.train.rollout import GroupSpec, mix_seed
from forgec.train.tokenize import Sample, episode_to_samples


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


def load_tokenizer(path: str):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
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
    from forgec.runtime.agents import OracleAgent
    from forgec.runtime.episode import run_episode
    from forgec.runtime.users import ScriptedUser
    from forgec.train.template import render_conversation

    texts = []
    for t in build.tasks[:limit]:
        agent = OracleAgent(t)
        ep = run_episode(build, t, agent, ScriptedUser(t), limits=agent.limits())
        texts.append(render_conversation(ep.messages, build.envs[t.env].TOOLS, cfg.template.system_prompt))
    return texts


def load_model(path: str, cfg: TrainConfig, ds_conf: dict):
    import torch
    from transformers import AutoModelForCausalLM

    dtype = torch.bfloat16 if ds_conf.get("bf16", {}).get("enabled") else torch.float32
    kwargs: dict[str, Any] = {"dtype": dtype}
    if cfg.model.attn_implementation:
        kwargs["attn_implementation"] = cfg.model.attn_implementation
    model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    if cfg.model.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    return model


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


# ---------------------------------------------------------------- task sampling


class TaskSampler:
    """Balanced across envs; draw k of env e at step s is a pure function of (seed, e, k)."""

    def __init__(self, tasks: list[Any], seed: int, envs: list[str] | None = None, holdout_fraction: float = 0.0):
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


class Trainer:
    def __init__(self, cfg: TrainConfig, build_dir: str, resume: bool = False, allow_modified_build: bool = False):
        prepare_environment()
        import torch

        from forgec.runtime.loader import load

        self.cfg = cfg
        self.rank, self.world = init_distributed()
        if cfg.deepspeed.cpu_threads and not use_gpu():
            torch.set_num_threads(cfg.deepspeed.cpu_threads)
        seed_everything(cfg.data.seed)
        self.out = Path(cfg.output)
        if self.rank == 0:
            self.out.mkdir(parents=True, exist_ok=True)
        barrier()
        self.build = load(build_dir, allow_modified_build=allow_modified_build)
        self.sampler = TaskSampler(self.build.tasks, cfg.data.seed, cfg.data.envs, cfg.data.holdout_fraction)
        self.model_path = resolve_model_path(cfg, self.build, self.rank)
        self.tok = load_tokenizer(cfg.model.tokenizer or self.model_path)
        self.steps_per_update = cfg.algo.ppo_epochs * cfg.algo.minibatches
        self.ds_conf = ds_config(cfg, self.world, cfg.optim.micro_batches)
        model = load_model(self.model_path, cfg, self.ds_conf)
        self.engine = make_engine(cfg, model, self.ds_conf, cfg.optim.lr, cfg.optim.steps * self.steps_per_update)
        self.device = self.engine.device
        self.ref = None
        if cfg.algo.beta > 0:
            self.ref = load_model(self.model_path, cfg, self.ds_conf).to(self.device).eval()
            for p in self.ref.parameters():
                p.requires_grad_(False)
        self.pad_id = self.tok.pad_token_id
        self.eos_id = self.tok.convert_tokens_to_ids("<|im_end|>")
        from forgec.train.logging import MetricsLogger

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
        from forgec.train.rollout import HFEngine, VLLMEngine, VLLMServer

        cfg = self.cfg.rollout
        if cfg.backend == "hf":
            return HFEngine(self.engine.module, self.eos_id, self.pad_id)
        base = cfg.vllm_base_url
        self.sync_dir = Path(cfg.sync_dir or (self.out / "policy"))
        self._save_policy(self.sync_dir)
        if base is None:
            if self.rank == 0:
                self.server = VLLMServer(self.sync_dir, cfg.vllm_port, cfg.vllm_python, served_name=cfg.vllm_served_name,
                                         extra_args=cfg.vllm_extra_args,
                                         log_path=self.out / "vllm.log")
                self.server.start()
            barrier()
            base = f"http://127.0.0.1:{cfg.vllm_port}/v1"
        return VLLMEngine(base, cfg.vllm_served_name, self.eos_id)

    def _save_policy(self, d: Path) -> None:
        from forgec.train.checkpoint import export_hf

        export_hf(self.engine, self.tok, d, self.rank)
        barrier()

    def _push_weights(self) -> str:
        if self.cfg.rollout.backend != "vllm":
            return "none"
        self._save_policy(self.sync_dir)
        how = "reload"
        if self.rank == 0 and self.server is not None:
            how = self.server.sync(self.sync_dir, self.cfg.rollout.weight_sync)
        elif self.rank == 0:
            from forgec.train.rollout import reload_remote

            if not reload_remote(self.cfg.rollout.vllm_base_url, self.sync_dir):
                raise RuntimeError(f"the vLLM server at {self.cfg.rollout.vllm_base_url} refused reload_weights; start it with "
                                   "VLLM_SERVER_DEV_MODE=1 and give it read access to rollout.sync_dir")
        barrier()
        return how

    # ------------------------------------------------------------ rollouts

    def _agent_factory(self):
        from forgec.train.rollout import PolicyAgent, Sampling

        r = self.cfg.rollout
        sampling = Sampling(r.max_new_tokens, r.temperature, r.top_p)
        return lambda seed: PolicyAgent(self.engine_backend, self.tok, sampling, seed, None, self.cfg.template.keep_thinking,
                                        r.max_context_tokens)

    def _run(self, specs: list[GroupSpec]) -> list[GroupResult]:
        from forgec.train.rollout import run_groups

        if not specs:
            return []
        G = self.cfg.rollout.group_size
        # hf: every episode in flight at once, so each turn is one batched generate; vllm: bounded requests
        conc = len(specs) * G if self.cfg.rollout.backend == "hf" else self.cfg.rollout.concurrency
        groups = asyncio.run(run_groups(self.build, specs, G, self._agent_factory(), max_turns=self.cfg.rollout.max_turns,
                                        concurrency=conc))
        eps_all = [e for eps in groups for e in eps]
        failed = [e for e in eps_all if e.end_reason in ("agent_error", "error") and not (e.error or "").startswith("context limit")]
        if eps_all and len(failed) * 2 > len(eps_all):
            # the policy backend is broken (e.g. the vLLM server died): stop instead of training on nothing
            raise RuntimeError(f"{len(failed)}/{len(eps_all)} rollouts failed; first error: {failed[0].error}")
        out = []
        for spec, eps in zip(specs, groups):
            rs = [Rollout(env=spec.task.env, task_id=spec.task.id, reward=float(e.reward), masked=bool(e.user_error),
                          group=spec.group) for e in eps]
            self._context_limited += sum(1 for e in eps if (e.error or "").startswith("context limit"))
            out.append(GroupResult(spec, eps, rs))
        return out

    def collect(self, step: int) -> tuple[list[GroupResult], dict]:
        """This rank's groups for the step, after dynamic filtering with bounded refill."""
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
        from forgec.train.loss import sequence_logprobs

        return sequence_logprobs(model, ids, att, mask)

    def update(self, samples: list[Sample]) -> dict:
        import torch

        from forgec.train.loss import ppo_clip_loss

        cfg = self.cfg
        M = cfg.optim.micro_batches
        mbs = cfg.algo.minibatches
        # minibatches: a fixed split of this rank's samples (same count on every rank)
        minis = [samples[i::mbs] for i in range(mbs)]
        chunks_per_mini = [split_micro_batches(m, M) for m in minis]
        denoms = all_reduce_sum([float(sum(s.num_loss_tokens for s in m)) for m in minis])
        if sum(denoms) == 0:
            # no trainable token anywhere (every group filtered or masked): no optimizer step, since
            # Adam's momentum would still move the weights on a zero gradient
            return {"loss": 0.0, "pg_loss": 0.0, "kl": 0.0, "clip_frac": 0.0, "approx_kl_old": 0.0, "loss_tokens": 0,
                    "grad_norm": 0.0, "lr": float(self.engine.get_lr()[0]), "skipped_update": True}
        old: dict[tuple[int, int], torch.Tensor] = {}
        need_old = self.steps_per_update > 1
        engine = self.engine
        if need_old:
            with torch.no_grad():
                for mi, chunks in enumerate(chunks_per_mini):
                    for ci, ch in enumerate(chunks):
                        ids, att, mask, _ = collate(ch, self.pad_id, self.device)
                        old[(mi, ci)] = self._logprobs(engine.module, ids, att, mask).detach()
        agg = {"pg_sum": 0.0, "kl_sum": 0.0, "clipped": 0.0, "tokens": 0.0, "approx_kl": 0.0}
        grad_norms = []
        scale = M * self.world  # undo DeepSpeed's 1/gas and 1/world averaging: token-mean over the step
        for _epoch in range(cfg.algo.ppo_epochs):
            for mi, chunks in enumerate(chunks_per_mini):
                denom = max(denoms[mi], 1.0)
                for ci, ch in enumerate(chunks):
                    ids, att, mask, adv = collate(ch, self.pad_id, self.device)
                    logp = self._logprobs(engine, ids, att, mask)
                    old_lp = old[(mi, ci)] if need_old else logp.detach()
                    ref_lp = None
                    if self.ref is not None:
                        with torch.no_grad():
                            ref_lp = self._logprobs(self.ref, ids, att, mask)
                    parts = ppo_clip_loss(logp, old_lp, adv, mask, denom, cfg.algo.clip_eps_low, cfg.algo.clip_eps_high,
                                          ref_lp, cfg.algo.beta)
                    engine.backward(parts.loss * scale)
                    engine.step()
                    agg["pg_sum"] += parts.pg_sum
                    agg["kl_sum"] += parts.kl_sum
                    agg["clipped"] += parts.clipped_tokens
                    agg["tokens"] += parts.tokens
                    agg["approx_kl"] += parts.approx_kl_old_sum
                gn = engine.get_global_grad_norm()
                if gn is not None:
                    grad_norms.append(float(gn))
        tot = all_reduce_sum([agg["pg_sum"], agg["kl_sum"], agg["clipped"], agg["tokens"], agg["approx_kl"]])
        ntok = max(tot[3], 1.0)
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
        }

    # ------------------------------------------------------------ the loop

    def param_checksum(self) -> float:
        """Sum of |w| over all weights (rank 0's view; ZeRO-3 gathers): a cheap 'parameters changed' probe."""
        import torch

        with gather_all_params(self.engine):
            with torch.no_grad():
                return float(sum(p.detach().float().abs().sum() for p in self.engine.module.parameters()))

    def train_step(self, step: int) -> dict:
        cfg = self.cfg
        t0 = time.perf_counter()
        tok_before = self.engine_backend.tokens_generated
        self._context_limited = 0
        ctx = gather_all_params(self.engine) if cfg.rollout.backend == "hf" else contextlib.nullcontext()
        with ctx:
            groups, fstats = self.collect(step)
        rollout_s = time.perf_counter() - t0
        gen_tokens = self.engine_backend.tokens_generated - tok_before
        # advantages over the whole batch (every rank's kept groups)
        mine = [r for g in groups for r in g.rollouts]
        everyone = all_gather_objects(([(r.env, r.task_id, r.reward, r.masked, r.group) for r in mine],
                                       [(r.env, r.reward, r.masked) for r in fstats["all_episodes"]],
                                       {k: v for k, v in fstats.items() if k != "all_episodes"}, gen_tokens, self._context_limited))
        batch = []
        for rank_i, (rows, _, _, _, _) in enumerate(everyone):
            for env, tid, rew, masked, grp in rows:
                batch.append(Rollout(env, tid, rew, masked, group=grp * 1000 + rank_i))
        compute_advantages(batch, cfg.algo.advantage, cfg.algo.eps_std, cfg.algo.meu_mask)
        offset = sum(len(e[0]) for e in everyone[: self.rank])
        for r, b in zip(mine, batch[offset: offset + len(mine)]):
            r.advantage = b.advantage
        t1 = time.perf_counter()
        samples = self._samples(groups)
        upd = self.update(samples)
        update_s = time.perf_counter() - t1
        t2 = time.perf_counter()
        sync = self._push_weights()
        sync_s = time.perf_counter() - t2
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
        }
        return m

    def run(self) -> dict:
        try:
            return self._train_loop()
        finally:
            self.close()

    def _train_loop(self) -> dict:
        cfg = self.cfg
        from forgec.train.checkpoint import export_hf

        last = {}
        for step in range(self.start_step, cfg.optim.steps):
            m = self.train_step(step)
            m["param_checksum"] = self.param_checksum()
            done = step + 1
            self.history.append({k: v for k, v in m.items() if k in ("reward_mean", "pass_rate", "loss")})
            # trained/filtered groups: a loss of 0 with 0 trained groups means dynamic filtering left no signal
            self.logger.log(done, m, info=f"reward {m['reward_mean']:.3f} loss {m['loss']:.4f} "
                                          f"groups trained {m.get('trained_groups', '-')} filtered {m.get('filtered_groups', '-')}")
            last = m
            if cfg.checkpoint.every and done % cfg.checkpoint.every == 0 and done < cfg.optim.steps:
                self._checkpoint(done)
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
                         "config": cfg.model_dump(mode="json")}, self.rank, cfg.checkpoint.keep_last)

    def close(self) -> None:
        self.logger.close()
        if self.server is not None:
            self.server.stop()
            self.server = None
