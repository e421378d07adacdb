"""Checkpoints: DeepSpeed engine state + RNG states + trainer state, written atomically; HF export.

Layout under `<output>/checkpoints/`:

    step_00000004/            DeepSpeed files (model, ZeRO optimizer shards, scheduler),
                              rng_rank{r}.pt (python/numpy/torch RNG of every process),
                              trainer_state.json (step, data cursor, metrics history)
    latest                    the tag of the newest complete checkpoint

A checkpoint is written under `.tmp-step_XXXXXXXX` and renamed into place only after every
process has finished writing (rename = atomic on one filesystem), then `latest` is
replaced atomically; a crash mid-save leaves the previous checkpoint as `latest`.
Only the last K complete checkpoints are kept.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import torch

TRAINER_STATE = "trainer_state.json"


def _tag(step: int) -> str:
    return f"step_{step:08d}"


def atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def rng_state() -> dict:
    import numpy as np

    st = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        st["cuda"] = torch.cuda.get_rng_state_all()
    return st


def set_rng_state(st: dict) -> None:
    import numpy as np

    random.setstate(st["python"])
    np.random.set_state(st["numpy"])
    torch.set_rng_state(st["torch"])
    if "cuda" in st and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(st["cuda"])


def _barrier() -> None:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()


def complete_checkpoints(root: Path) -> list[tuple[int, Path]]:
    out = []
    if root.is_dir():
        for d in root.iterdir():
            if d.is_dir() and d.name.startswith("step_") and (d / TRAINER_STATE).exists():
                out.append((int(d.name[5:]), d))
    return sorted(out)


def save_checkpoint(engine: Any, root: str | Path, step: int, trainer_state: dict, rank: int, keep_last: int) -> Path:
    """Every process calls this; returns the final checkpoint folder."""
    root = Path(root)
    tmp_tag = f".tmp-{_tag(step)}"
    tmp = root / tmp_tag
    final = root / _tag(step)
    if rank == 0:
        root.mkdir(parents=True, exist_ok=True)
        for stale in root.glob(".tmp-step_*"):
            shutil.rmtree(stale, ignore_errors=True)
    _barrier()
    engine.save_checkpoint(str(root), tag=tmp_tag, client_state={"step": step}, save_latest=False)
    torch.save(rng_state(), tmp / f"rng_rank{rank}.pt")
    _barrier()
    if rank == 0:
        atomic_write_text(tmp / TRAINER_STATE, json.dumps(trainer_state, sort_keys=True, indent=1))
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        atomic_write_text(root / "latest", final.name)
        for _, d in complete_checkpoints(root)[:-keep_last]:
            shutil.rmtree(d, ignore_errors=True)
    _barrier()
    return final


def find_latest(root: str | Path) -> Path | None:
    """The newest complete checkpoint (by `latest`, else by scanning)."""
    root = Path(root)
    latest = root / "latest"
    if latest.exists():
        d = root / latest.read_text().strip()
        if (d / TRAINER_STATE).exists():
            return d
    done = complete_checkpoints(root)
    return done[-1][1] if done else None


def load_checkpoint(engine: Any, ckpt: str | Path, rank: int) -> dict:
    """Restore engine (model, optimizer, scheduler) and this process's RNG; return the trainer state."""
    ckpt = Path(ckpt)
    path, _client = engine.load_checkpoint(str(ckpt.parent), tag=ckpt.name, load_optimizer_states=True,
                                           load_lr_scheduler_states=True)
    if path is None:
        raise RuntimeError(f"DeepSpeed could not load the checkpoint at {ckpt}")
    rng_file = ckpt / f"rng_rank{rank}.pt"
    if rng_file.exists():
        set_rng_state(torch.load(rng_file, weights_only=False))
    return json.loads((ckpt / TRAINER_STATE).read_text())


def export_hf(engine: Any, tokenizer: Any, out_dir: str | Path, rank: int) -> Path | None:
    """Write the policy as an HF model folder (gathering ZeRO-3 shards); rank 0 writes."""
    import deepspeed

    out = Path(out_dir)
    model = engine.module
    params = list(model.parameters())
    zero3 = any(hasattr(p, "ds_id") for p in params)
    ctx = deepspeed.zero.GatheredParameters(params, modifier_rank=None) if zero3 else _null()
    with ctx:
        if rank == 0:
            tmp = out.with_name(f".{out.name}.tmp")
            if tmp.exists():
                shutil.rmtree(tmp)
            state = {k: v.detach().to("cpu").clone() for k, v in model.state_dict().items()}
            model.save_pretrained(tmp, state_dict=state, safe_serialization=True)
            if tokenizer is not None:
                tokenizer.save_pretrained(tmp)
            if out.exists():
                shutil.rmtree(out)
            os.replace(tmp, out)
    _barrier()
    return out if rank == 0 else None


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False
