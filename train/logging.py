"""Per-step metrics: JSONL (the record tests and benches read) + TensorBoard + a rich progress line.

Only rank 0 writes. JSONL lines are canonical JSON (sorted keys), one per step; on
resume the file is truncated to the steps before the resume point, so a resumed run's
metrics.jsonl equals an uninterrupted run's.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    return v


def _flat(d: dict, prefix: str):
    """Nested numeric metrics as (a/b/c, value) pairs (per-server throughput is two levels deep)."""
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _flat(v, f"{prefix}/{k}")
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v)):
            yield f"{prefix}/{k}", v


class MetricsLogger:
    def __init__(self, out_dir: str | Path, enabled: bool = True, tensorboard: bool = True, progress: bool = True,
                 total_steps: int = 0, name: str = "metrics"):
        self.enabled = enabled
        self.path = Path(out_dir) / f"{name}.jsonl"
        self.tb = None
        self.progress = None
        self._task = None
        self._name, self._total = {"metrics": "train", "sft_metrics": "sft"}.get(name, name), total_steps
        if not enabled:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self.tb = SummaryWriter(str(Path(out_dir) / "tb" / name))
            except Exception:  # noqa: BLE001 - tensorboard missing: JSONL still works
                self.tb = None
        if progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TextColumn("{task.fields[info]}"), transient=False)
            self.progress.start()
            self._task = self.progress.add_task(name, total=total_steps, info="")

    def truncate_after(self, step: int) -> None:
        """Keep only records with step <= `step` (resume)."""
        if not self.enabled or not self.path.exists():
            return
        keep = [ln for ln in self.path.read_text().splitlines() if ln.strip() and json.loads(ln).get("step", 0) <= step]
        self.path.write_text("".join(ln + "\n" for ln in keep))

    def log(self, step: int, metrics: dict[str, Any], info: str = "") -> None:
        if not self.enabled:
            return
        rec = _clean({"step": step, **metrics})
        with self.path.open("a") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")
        if self.tb is not None:
            for k, v in metrics.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v)):
                    self.tb.add_scalar(k, v, step)
                elif isinstance(v, dict):
                    for k2, v2 in _flat(v, k):
                        self.tb.add_scalar(k2, v2, step)
            self.tb.flush()
        if self.progress is not None:
            self.progress.update(self._task, completed=step, info=info)
        else:  # no progress bar (logs, CI): one plain line per step, so a long run is never silent
            import sys

            total = f"/{self._total}" if self._total else ""
            sys.stderr.write(f"{self._name} step {step}{total}  {info}".rstrip() + "\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
        if self.tb is not None:
            self.tb.close()
            self.tb = None
