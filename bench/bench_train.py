"""Trainer step time on CPU for the tiny model, next to TRL's GRPOTrainer on the same model and batch.

    python bench/bench_train.py [--steps 4] [--tasks 4] [--group 4] [--max-new 32]

Both sides: the same tiny Qwen3 model and tokenizer, the same B tasks x G rollouts per step,
the same first-turn prompts (our template), up to --max-new sampled tokens per rollout, one
optimizer step per batch, fp32 on CPU, one process. Ours runs through `forgec train` (the
episode loop with the toy build's env, user and judge; max_turns=1 so each rollout is one
generation, like TRL's), TRL through `GRPOTrainer` with a reward function. Step time is the
mean over steps after the first (warm-up). Goal (issue 8): ours no slower than TRL.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

TRL_SCRIPT = textwrap.dedent('''
    import json, sys, time, os
    import torch
    torch.set_num_threads(1)
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer
    cfg = json.loads(sys.argv[1])
    tok = AutoTokenizer.from_pretrained(cfg["model"])
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(cfg["model"], dtype=torch.float32)
    prompts = cfg["prompts"]
    ds = Dataset.from_dict({"prompt": prompts * (cfg["steps"] * 4)})
    def reward(completions, **kw):
        return [float("<tool_call>" in c) for c in completions]
    times = []
    class T(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            self.t = time.perf_counter()
        def on_step_end(self, args, state, control, **kw):
            times.append(time.perf_counter() - self.t)
    args = GRPOConfig(output_dir=cfg["out"], per_device_train_batch_size=cfg["B"] * cfg["G"], num_generations=cfg["G"],
                      max_completion_length=cfg["max_new"], gradient_accumulation_steps=1, max_steps=cfg["steps"],
                      learning_rate=1e-3, beta=0.0, logging_steps=1, report_to=[], use_cpu=True, save_strategy="no",
                      temperature=1.0, top_p=1.0, seed=0, shuffle_dataset=False, bf16=False, fp16=False)
    tr = GRPOTrainer(model=model, processing_class=tok, reward_funcs=reward, args=args, train_dataset=ds, callbacks=[T()])
    tr.train()
    print("TRL_TIMES " + json.dumps(times))
''')


def run_ours(root: Path, model: Path, a) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", DS_ACCELERATOR="cpu")
    sets = [f"model.path={model}", f"optim.steps={a.steps}", f"rollout.tasks_per_step={a.tasks}", f"rollout.group_size={a.group}",
            f"rollout.max_new_tokens={a.max_new}", "rollout.max_turns=1", "algo.dynamic_filtering=false", "optim.micro_batches=1",
            "deepspeed.config=null", "deepspeed.zero_stage=0", "checkpoint.every=0", "checkpoint.export_hf=false",
            "logging.tensorboard=false", "optim.lr=0.001"]
    cmd = [sys.executable, "-m", "forgec", "train", str(root / "build"), "-c", "cpu-tiny", "-o", str(root / "ours")]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(r.stderr[-3000:])
    recs = [json.loads(x) for x in (root / "ours" / "metrics.jsonl").read_text().splitlines()]
    warm = recs[1:] or recs
    n = len(warm)
    return {
        "step_s": sum(x["rollout_s"] + x["update_s"] + x["sync_s"] for x in warm) / n,
        "rollout_s": sum(x["rollout_s"] for x in warm) / n,
        "update_s": sum(x["update_s"] for x in warm) / n,
        "gen_tokens": sum(x["gen_tokens"] for x in warm) / n,
    }


def run_trl(root: Path, model: Path, prompts: list[str], a) -> dict | str:
    try:
        import trl  # noqa: F401
    except ImportError:
        return "trl not installed (pip install trl)"
    cfg = {"model": str(model), "prompts": prompts, "B": a.tasks, "G": a.group, "max_new": a.max_new, "steps": a.steps,
           "out": str(root / "trl")}
    env = dict(os.environ, HF_HUB_OFFLINE="1", CUDA_VISIBLE_DEVICES="", ACCELERATE_USE_CPU="1")
    r = subprocess.run([sys.executable, "-c", TRL_SCRIPT, json.dumps(cfg)], env=env, capture_output=True, text=True)
    line = [x for x in r.stdout.splitlines() if x.startswith("TRL_TIMES ")]
    if r.returncode != 0 or not line:
        return "TRL failed: " + (r.stderr[-1500:] or r.stdout[-1500:])
    times = json.loads(line[0][len("TRL_TIMES "):])
    warm = times[1:] or times
    return {"step_s": sum(warm) / len(warm)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--max-new", type=int, default=32)
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from forgec.runtime.agents import OracleAgent  # noqa: F401
    from forgec.runtime.loader import load
    from forgec.train.config import TrainConfig
    from forgec.train.template import render_conversation
    from forgec.train.tiny import build_tiny_model
    from forgec.train.toybuild import make_toy_build
    from forgec.train.trainer import TaskSampler, oracle_texts

    root = Path(tempfile.mkdtemp(prefix="bench_train_"))
    build = load(make_toy_build(root / "build", tasks_per_env=8))
    model = build_tiny_model(root / "model", extra_texts=oracle_texts(build, TrainConfig()))
    from forgec.runtime.episode import AGENT_SYSTEM_PROMPT

    tasks = TaskSampler(build.tasks, 0).batch(0, a.tasks)
    prompts = [render_conversation([{"role": "system", "content": AGENT_SYSTEM_PROMPT}, {"role": "user", "content": t.instruction}],
                                   build.envs[t.env].TOOLS, add_generation_prompt=True) for t in tasks]
    ours = run_ours(root, model, a)
    trl = run_trl(root, model, prompts, a)
    print(f"\ntiny Qwen3 (2 layers, hidden 64), CPU, 1 process, B={a.tasks} tasks x G={a.group} rollouts, <= {a.max_new} new tokens, "
          f"mean of steps 2..{a.steps}")
    print(f"{'':28s}{'step s':>10s}{'rollout s':>12s}{'update s':>11s}{'gen tok':>10s}")
    print(f"{'forgec train (erpo, ds)':28s}{ours['step_s']:>10.2f}{ours['rollout_s']:>12.2f}{ours['update_s']:>11.2f}{ours['gen_tokens']:>10.0f}")
    if isinstance(trl, dict):
        print(f"{'TRL GRPOTrainer':28s}{trl['step_s']:>10.2f}{'-':>12s}{'-':>11s}{'-':>10s}")
        verdict = "met" if ours["step_s"] <= trl["step_s"] else "NOT met"
        print(f"\ngoal: forgec step time <= TRL step time: {verdict} ({ours['step_s'] / trl['step_s']:.2f}x TRL)")
    else:
        print(f"TRL GRPOTrainer: {trl}")
    print(f"rollout / update split (ours): {ours['rollout_s'] / ours['step_s']:.0%} / {ours['update_s'] / ours['step_s']:.0%}")


if __name__ == "__main__":
    main()
