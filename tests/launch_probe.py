"""What one trainer process of a (fake) multi-node launch sees: written to $FORGEC_PROBE_OUT/rank<RANK>.json.

Started by the real deepspeed launcher in tests/test_train_launch.py; imports nothing heavy."""

import json
import os
import sys

sys.path.insert(0, os.environ.get("FORGEC_PROBE_ROOT", "."))
from forgec.train.cluster import discover  # noqa: E402

keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "FORGEC_VLLM_VENV", "HF_HUB_OFFLINE", "DS_ACCELERATOR",
        "PATH", "FORGEC_NODE_NAME", "SLURM_NNODES"]
place = discover(os.environ)
out = {"env": {k: os.environ.get(k) for k in keys}, "place": place.__dict__, "argv": sys.argv[1:]}
with open(os.path.join(os.environ["FORGEC_PROBE_OUT"], f"rank{os.environ['RANK']}.json"), "w") as f:
    json.dump(out, f)
