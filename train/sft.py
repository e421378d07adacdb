"""`forgec sft`: the cold start — cross-entropy on oracle trajectories, same template and masks.

Oracle episodes are played through the runtime (OracleAgent + ScriptedUser), rendered with
the training template and tokenized segment by segment exactly as the rollout backends
build prompts, so what SFT teaches is token-for-token what the policy later generates.
Loss: token-mean over each optimizer step (all micro-batches, all processes), on the
assistant tokens only. Same DeepSpeed engine setup as `forgec train`.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from forgec.train.config import TrainConfig
from forgec.runtime.agents import OracleAgent
from forgec.runtime.episode import run_episode
from forgec.runtime.users import ScriptedUser
from forgec.train.tokenize import messages_to_samples
from forgec.runtime.loader import load
from forgec.train.logging import MetricsLogger
from forgec.train.trainer import TaskSampler, all_reduce_sum, barrier, collate, ds_config, init_distributed, load_model, load_tokenizer, make_engine, prepare_environment, resolve_model_path, seed_everything, split_micro_batches, use_gpu


def oracle_samples(build, tasks, tok, cfg: TrainConfig):

    out = []
    for t in tasks:
        agent = OracleAgent(t)
        ep = run_episode(build, t, agent, ScriptedUser(t), limits=agent.limits())
        if ep.reward < 1.0:
            continue  # only trajectories that solve the task teach the policy
        for s in messages_to_samples(tok, ep.messages, build.envs[t.env].TOOLS, cfg.template.system_prompt, cfg.template.keep_thinking):
            s.meta = {"task_id": t.id, "env": t.env}
            out.append(s)
    return out


def user_samples(build, tasks, tok, cfg: TrainConfig):
    """The scripted user's side of the oracle dialogues (`forgec sft-user`): the user's system prompt, the agent
    as `user`, the scripted user's turns as the trained (assistant) tokens, as `LLMUser` and `HFUser` prompt it."""
    from forgec.runtime.hfuser import user_conversation
    from forgec.runtime.users import user_system_prompt

    out = []
    for t in tasks:
        agent = OracleAgent(t)
        ep = run_episode(build, t, agent, ScriptedUser(t), limits=agent.limits())
        if ep.reward < 1.0:
            continue
        for s in messages_to_samples(tok, user_conversation(t, ep.messages), None, user_system_prompt(t), True):
            s.meta = {"task_id": t.id, "env": t.env}
            out.append(s)
    return out


def run_sft(cfg: TrainConfig, build_dir: str, allow_modified_build: bool = False, role: str = "agent") -> dict:
    """SFT of the policy (`role="agent"`, oracle turns) or of the simulated user (`role="user"`, scripted user turns)."""
    import torch

    from forgec.train.checkpoint import export_hf
    from forgec.train.loss import sequence_logprobs, sft_loss

    prepare_environment()
    rank, world = init_distributed()
    if cfg.deepspeed.cpu_threads and not use_gpu():
        torch.set_num_threads(cfg.deepspeed.cpu_threads)
    seed_everything(cfg.data.seed)
    out = Path(cfg.output)
    if rank == 0:
        out.mkdir(parents=True, exist_ok=True)
    barrier()
    build = load(build_dir, allow_modified_build=allow_modified_build)
    sampler = TaskSampler(build.tasks, cfg.data.seed, cfg.data.envs, cfg.data.holdout_fraction)
    tasks = []
    for env in sampler.envs:
        ts = sampler.by_env[env]
        tasks += ts[: cfg.sft.max_tasks] if cfg.sft.max_tasks else ts
    model_path = resolve_model_path(cfg, build, rank)
    tok = load_tokenizer(cfg.model.tokenizer or model_path, cfg.template.end_of_turn)
    samples = (user_samples if role == "user" else oracle_samples)(build, tasks, tok, cfg)
    M = cfg.optim.micro_batches
    conf = ds_config(cfg, world, M)
    per_step = max(cfg.sft.batch_size, world)
    steps_per_epoch = max(1, (len(samples) + per_step - 1) // per_step)
    total = steps_per_epoch * cfg.sft.epochs
    engine = make_engine(cfg, load_model(model_path, cfg, conf), conf, cfg.sft.lr, total)
    pad = tok.pad_token_id
    logger = MetricsLogger(out, enabled=rank == 0, tensorboard=cfg.logging.tensorboard, progress=cfg.logging.progress,
                           total_steps=total, name="sft_metrics")
    if rank == 0 and logger.path.exists():
        logger.path.unlink()
    step = 0
    loss_val = float("nan")
    scale = M * world
    for epoch in range(cfg.sft.epochs):
        order = list(range(len(samples)))
        random.Random(cfg.data.seed * 1000 + epoch).shuffle(order)  # same order on every rank
        for b in range(steps_per_epoch):
            t0 = time.perf_counter()
            idx = order[b * per_step:(b + 1) * per_step]
            mine = [samples[i] for i in idx[rank::world]]
            denom = max(all_reduce_sum([float(sum(s.num_loss_tokens for s in [samples[i] for i in idx]))])[0], 1.0)
            tot = 0.0
            for ch in split_micro_batches(mine, M):
                ids, att, mask, _ = collate(ch, pad, engine.device)
                logp = sequence_logprobs(engine, ids, att, mask)
                loss = sft_loss(logp, mask, denom)
                engine.backward(loss * scale)
                engine.step()
                tot += float(loss.detach())
            step += 1
            loss_val = all_reduce_sum([tot])[0]
            logger.log(step, {"epoch": epoch, "loss": loss_val, "tokens": int(denom), "lr": float(engine.get_lr()[0]),
                              "step_s": time.perf_counter() - t0}, info=f"loss {loss_val:.4f}")
    final = out / "final"
    export_hf(engine, tok, final, rank)
    logger.close()
    return {"rank": rank, "steps": step, "sequences": len(samples), "loss": loss_val, "final": str(final)}
