"""One rank of a 2-process ZeRO-3 run on gloo (tests/test_train_launch.py): the policy and the KL reference
are loaded partitioned, the checksum comes from local shards, and a layer-wise weight push goes through
NcclWeightSync's control plane to fake servers with a recording transport in place of NCCL."""

import json
import os
import sys

import torch

from forgec.train.config import load_config
from forgec.train.trainer import ds_config, init_distributed, load_model, load_reference, make_engine, prepare_environment
from forgec.train.weightsync import LayerwiseSource, NcclWeightSync, shard_checksum

model_dir, out = sys.argv[1], sys.argv[2]
prepare_environment()
rank, world = init_distributed()
cfg = load_config("cpu-tiny", [f"model.path={model_dir}", "deepspeed.config=ds_zero3.json", "algo.beta=0.1"])
conf = ds_config(cfg, world, 1)
model = load_model(model_dir, cfg, conf)
# partitioned at load (zero.Init): no rank holds a full tensor, each holds ~1/world of every parameter
at_load = {n: (p.numel(), int(p.ds_tensor.numel()), int(p.ds_numel)) for n, p in model.named_parameters() if hasattr(p, "ds_tensor")}
engine = make_engine(cfg, model, conf, 1e-3, 1)
ref = load_reference(model_dir, cfg, conf, engine.device)
ref_sharded = all(hasattr(p, "ds_tensor") and p.numel() == 0 for p in ref.parameters())
ids = torch.tensor([[1, 5, 9, 2, 7]])
with torch.no_grad():
    same = bool(torch.allclose(ref(input_ids=ids).logits, engine.module(input_ids=ids).logits, atol=1e-5))
checksum = shard_checksum(engine.module)


class Recorder:
    """The transport's place: what rank 0 would broadcast, in order."""

    def __init__(self):
        self.sent = []

    def broadcast(self, t):
        self.sent.append(t.clone())


rec = Recorder()
sync = NcclWeightSync(json.loads(os.environ["PROBE_URLS"]), sender=rank == 0, transport=rec)
sync.init()
source = LayerwiseSource(engine.module, torch.float32)
res = sync.push(source, version=1)
if rank == 0:
    torch.save(rec.sent, os.path.join(out, "sent.pt"))
with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump({"at_load": at_load, "ref_sharded": ref_sharded, "ref_same": same, "checksum": checksum, "push": res,
               "peak_gathered": source.peak_gathered, "groups": source.groups(), "world_size": sync.world_size,
               "offsets": sync.offsets}, f)
