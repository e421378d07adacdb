"""Weight sync without the disk: checksums from local shards, layer-wise sources, vLLM's NCCL weight-transfer API.

Three pieces, each usable alone:

* `shard_checksum(module)`: sum |w| over the whole model computed from what each rank holds
  (its ZeRO-3 partition, or its slice of a replicated parameter) plus one all-reduce of a
  scalar. The trainer logged a checksum by gathering the full model every step; this gives the
  same number without the gather (tests/test_train_launch.py compares it with a sum over the
  saved safetensors computed independently).
* `LayerwiseSource(module)`: the model's parameters as vLLM's `WeightSource` contract describes
  them (metadata without gathering, then (name, tensor) pairs in metadata order), grouped per
  decoder layer by vLLM's own rule (`layer_groups`, the outermost integer segment of the name).
  Under ZeRO-3 each group is gathered on entry and released on exit, so no rank ever holds more
  than one layer beyond its shard. Every rank iterates in lockstep (the gather is a collective).
* `NcclWeightSync`: the trainer side of vLLM 0.32's weight-transfer API (`/init_weight_transfer_engine`,
  `/start_weight_update`, `/update_weights`, `/finish_weight_update`; dev-mode routes, servers
  started with `--weight-transfer-config '{"backend": "nccl"}'`), for any number of servers at once:
  one NCCL group of trainer rank 0 + every worker of every server (rank offsets 1, 1 + w0, ...).
  The trainer venv has no vLLM (it lives in FORGEC_VLLM_VENV), so rank 0 joins through the
  unique-id rendezvous vLLM offers torch-free trainers: it mints an `ncclUniqueId` with libnccl
  (ctypes, `NcclComm`), ships it base64 in the init payload, and answers the workers' one-element
  warm-up all-reduce. Per update: `/pause` (in-flight requests finish, new ones queue), start,
  one `/update_weights` per layer group (a bucket) while rank 0 broadcasts that group's tensors,
  finish with the new weight version, `/reset_prefix_cache` until success, `/resume`.

  NOT YET RUN ON A GPU. The HTTP orchestration, the order of calls, the layer-wise gather and the
  bytes handed to the transport are tested on CPU (a recording transport in place of NCCL, fake
  servers); `scripts/gpu_smoke.sh` is the first run on a GPU. Disk reload stays the fallback and
  is what CPU runs use.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterator

# ---------------------------------------------------------------- checksum from local shards


def local_abs_sum(module: Any, rank: int, world: int) -> float:
    """This rank's share of sum |w|: its ZeRO-3 partition (padding excluded), or its 1/world slice of a
    replicated parameter (ZeRO-0/1/2 keep full copies on every rank)."""
    import torch

    total = torch.zeros((), dtype=torch.float64)
    with torch.no_grad():
        for p in module.parameters():
            if hasattr(p, "ds_tensor"):  # ZeRO-3: the partition this rank owns; the last one is padded
                part = p.ds_tensor.detach().reshape(-1)
                valid = max(0, min(part.numel(), p.ds_numel - rank * part.numel()))
                t = part[:valid]
            else:
                flat = p.detach().reshape(-1)
                chunk = math.ceil(flat.numel() / max(world, 1))
                t = flat[rank * chunk:(rank + 1) * chunk]
            total += t.double().abs().sum().cpu()
    return float(total)


def shard_checksum(module: Any) -> float:
    """sum |w| over the whole model: local shares + one all-reduce of a float64 scalar (no gather)."""
    import torch
    import torch.distributed as dist

    on = dist.is_available() and dist.is_initialized()
    rank, world = (dist.get_rank(), dist.get_world_size()) if on else (0, 1)
    t = torch.tensor([local_abs_sum(module, rank, world)], dtype=torch.float64)
    if on and world > 1:
        if dist.get_backend() == "nccl":
            t = t.cuda()
        dist.all_reduce(t)
    return float(t.cpu()[0])


# ---------------------------------------------------------------- layer-wise source


def _stack_key(name: str) -> tuple[str, int] | None:
    parts = name.split(".")
    for i, part in enumerate(parts):
        if part.isdigit():
            return ".".join(parts[:i]), int(part)
    return None


def layer_groups(names: list[str]) -> list[list[str]]:
    """vLLM's `layerwise_groups` rule (vllm/distributed/weight_transfer/base.py, 0.32): one group per
    outermost indexed block (`model.layers.3.*`), un-indexed names before the first block in a leading
    group (embeddings) and after it in a trailing one (final norm, lm_head). Kept in step with vLLM's
    by tests/test_train_launch.py when FORGEC_VLLM_VENV is set."""
    pre: list[str] = []
    post: list[str] = []
    stacks: dict[tuple[str, int], list[str]] = {}
    order: list[tuple[str, int]] = []
    for name in names:
        key = _stack_key(name)
        if key is None:
            (post if order else pre).append(name)
            continue
        if key not in stacks:
            stacks[key] = []
            order.append(key)
        stacks[key].append(name)
    rank_of: dict[str, int] = {}
    for key in order:
        rank_of.setdefault(key[0], len(rank_of))
    order.sort(key=lambda k: (rank_of[k[0]], k[1]))
    groups = [pre] if pre else []
    groups += [stacks[k] for k in order]
    if post:
        groups.append(post)
    return groups


@dataclass(frozen=True)
class ParamMeta:
    name: str
    dtype: Any  # torch dtype on the wire
    shape: tuple[int, ...]


class LayerwiseSource:
    """The trainer's weights, one decoder layer at a time (see the module docstring)."""

    def __init__(self, module: Any, dtype: Any = None):
        self.module = module
        self.dtype = dtype  # wire dtype (the server's); None = the parameter's own
        self.params = dict(module.named_parameters())
        self.peak_gathered = 0  # most elements materialized at once by a gather (tests: one layer, not the model)

    def _shape(self, p: Any) -> tuple[int, ...]:
        return tuple(p.ds_shape) if hasattr(p, "ds_shape") else tuple(p.shape)

    def metadata(self) -> list[ParamMeta]:
        """Names, wire dtypes and full shapes, in iteration order, without gathering anything."""
        return [ParamMeta(n, self.dtype or p.dtype, self._shape(self.params[n])) for g in self.groups() for n in g
                for p in [self.params[n]]]

    def groups(self) -> list[list[str]]:
        return layer_groups(list(self.params))

    def iter_groups(self) -> Iterator[tuple[list[str], list[Any]]]:
        """(names, full tensors) per group; under ZeRO-3 a collective gather per group on every rank."""
        import torch

        for names in self.groups():
            ps = [self.params[n] for n in names]
            zero3 = any(hasattr(p, "ds_id") for p in ps)
            if zero3:
                import deepspeed

                ctx = deepspeed.zero.GatheredParameters(ps, modifier_rank=None)
            else:
                ctx = contextlib.nullcontext()
            with ctx, torch.no_grad():
                if zero3:
                    self.peak_gathered = max(self.peak_gathered, sum(p.numel() for p in ps))
                # copies: the gathered storage is released when the group's context exits
                yield names, [p.detach().to(self.dtype or p.dtype).contiguous().clone() for p in ps]

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        for names, tensors in self.iter_groups():
            yield from zip(names, tensors)


# ---------------------------------------------------------------- NCCL through libnccl (ctypes)

_NCCL_DTYPES = {"int8": 0, "uint8": 1, "int32": 2, "uint32": 3, "int64": 4, "uint64": 5, "float16": 6, "float32": 7,
                "float64": 8, "bfloat16": 9}


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


def _load_libnccl() -> ctypes.CDLL:
    """libnccl.so.2 from the system or from the `nvidia-nccl-cu*` wheel torch's CUDA build depends on."""
    cands = [os.environ.get("FORGEC_NCCL_LIBRARY") or "", "libnccl.so.2", "libnccl.so"]
    try:  # located, not imported: the CUDA wheel is torch's own (GPU) dependency, none of forgec's
        import importlib.util

        spec = importlib.util.find_spec("nvidia.nccl")
        for base in (spec.submodule_search_locations or []) if spec is not None else []:
            cands.append(os.path.join(base, "lib", "libnccl.so.2"))
    except (ImportError, ValueError):
        pass
    errors = []
    for c in cands:
        if not c:
            continue
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            errors.append(f"{c}: {e}")
    raise RuntimeError("weight_sync=nccl: libnccl not found (" + "; ".join(errors) + "); set FORGEC_NCCL_LIBRARY or use weight_sync=reload")


class NcclComm:
    """A bare NCCL communicator from a unique id (the rendezvous vLLM's workers accept from torch-free peers)."""

    def __init__(self, lib: ctypes.CDLL | None = None):
        self.lib = lib or _load_libnccl()
        L, vp = self.lib, ctypes.c_void_p
        L.ncclGetErrorString.restype = ctypes.c_char_p
        L.ncclGetErrorString.argtypes = [ctypes.c_int]
        L.ncclGetUniqueId.argtypes = [ctypes.POINTER(_UniqueId)]
        L.ncclCommInitRank.argtypes = [ctypes.POINTER(vp), ctypes.c_int, _UniqueId, ctypes.c_int]  # the id goes by value
        L.ncclAllReduce.argtypes = [vp, vp, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, vp, vp]
        L.ncclBroadcast.argtypes = [vp, vp, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, vp, vp]
        L.ncclCommDestroy.argtypes = [vp]
        self.uid = _UniqueId()
        self._check(self.lib.ncclGetUniqueId(ctypes.byref(self.uid)))
        self.comm = ctypes.c_void_p()

    def _check(self, res: int) -> None:
        if res != 0:
            raise RuntimeError(f"NCCL error {res}: {self.lib.ncclGetErrorString(res).decode()}")

    @property
    def unique_id_b64(self) -> str:
        return base64.b64encode(ctypes.string_at(ctypes.addressof(self.uid), 128)).decode()  # standard base64, as vLLM wants

    def init_rank(self, world_size: int, rank: int = 0) -> None:
        """Blocks until every rank joined; then the warm-up all-reduce vLLM's PyNcclCommunicator issues."""
        import torch

        self._check(self.lib.ncclCommInitRank(ctypes.byref(self.comm), world_size, self.uid, rank))
        data = torch.zeros(1, device="cuda")
        self._check(self.lib.ncclAllReduce(ctypes.c_void_p(data.data_ptr()), ctypes.c_void_p(data.data_ptr()), ctypes.c_size_t(1),
                                           _NCCL_DTYPES["float32"], 0, self.comm, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)))
        torch.cuda.current_stream().synchronize()

    def broadcast(self, tensor: Any) -> None:
        import torch

        t = tensor if tensor.is_cuda else tensor.cuda()
        t = t.contiguous()
        dt = _NCCL_DTYPES[str(t.dtype).split(".")[-1]]
        self._check(self.lib.ncclBroadcast(ctypes.c_void_p(t.data_ptr()), ctypes.c_void_p(t.data_ptr()), ctypes.c_size_t(t.numel()), dt,
                                           0, self.comm, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)))
        torch.cuda.current_stream().synchronize()

    def destroy(self) -> None:
        if self.comm:
            self.lib.ncclCommDestroy(self.comm)
            self.comm = ctypes.c_void_p()


# ---------------------------------------------------------------- the HTTP control plane, many servers


def _post(url: str, body: dict | None = None, timeout: float = 600.0) -> dict:
    from forgec.train.rollout import http_json

    code, text = http_json("POST", url, body, timeout=timeout)
    if code != 200:
        raise RuntimeError(f"{url}: HTTP {code}: {text[:300]}")
    try:
        return json.loads(text or "{}")
    except ValueError:
        return {}


def server_world_size(root: str) -> int:
    """Workers of one server (TP x PP x DP), each a rank of the transfer group (`GET /get_world_size`)."""
    from forgec.train.rollout import http_json

    code, text = http_json("GET", f"{root}/get_world_size?include_dp=true", timeout=30)
    if code != 200:
        raise RuntimeError(f"{root}: /get_world_size answered {code}: the server needs VLLM_SERVER_DEV_MODE=1 for weight_sync=nccl")
    return int(json.loads(text)["world_size"])


class NcclWeightSync:
    """Trainer rank 0 <-> every server's workers over one NCCL group (see the module docstring).

    Call `init()` once and `push(source, version)` after each update on EVERY trainer rank (the
    layer-wise gather is a collective); only rank 0 (`sender=True`) talks HTTP and broadcasts.
    `transport`: anything with `broadcast(tensor)` (default: `NcclComm`); the tests pass a recorder.
    """

    def __init__(self, urls: list[str], sender: bool, transport: Any = None, retries: int = 20,
                 post: Callable[..., dict] = _post):
        from forgec.train.rollout import server_root

        self.roots = [server_root(u) for u in urls]
        self.sender = sender
        self.transport = transport
        self.retries = retries
        self._post = post
        self.calls: list[tuple[str, str]] = []  # (root, route) in order, for the record
        self.offsets: dict[str, int] = {}
        self.world_size = 0

    def _all(self, route: str, body: dict | None = None) -> list[dict]:
        with ThreadPoolExecutor(max(len(self.roots), 1)) as ex:
            return list(ex.map(lambda r: self._call(r, route, body), self.roots))

    def _call(self, root: str, route: str, body: dict | None) -> dict:
        self.calls.append((root, route.split("?")[0]))
        return self._post(f"{root}{route}", body)

    def init(self, world_sizes: dict[str, int] | None = None) -> None:
        """One group: trainer rank 0, then each server's workers at its rank offset; all enter concurrently."""
        if not self.sender:
            return
        sizes = world_sizes or {r: server_world_size(r) for r in self.roots}
        off = 1
        for r in self.roots:
            self.offsets[r] = off
            off += sizes[r]
        self.world_size = off
        if self.transport is None:
            self.transport = NcclComm()
        uid = getattr(self.transport, "unique_id_b64", None)
        payload = {"world_size": self.world_size, "packed": False}
        if uid:
            payload["nccl_unique_id_b64"] = uid
        errors: list[BaseException] = []

        def join(root: str) -> None:
            try:
                self._call(root, "/init_weight_transfer_engine", {"init_info": {**payload, "rank_offset": self.offsets[root]}})
            except BaseException as e:  # noqa: BLE001 - raised below
                errors.append(e)

        threads = [threading.Thread(target=join, args=(r,), daemon=True) for r in self.roots]
        for t in threads:
            t.start()
        if hasattr(self.transport, "init_rank"):
            self.transport.init_rank(self.world_size, 0)  # blocks until every worker joined
        for t in threads:
            t.join()
        if errors:
            raise RuntimeError(f"init_weight_transfer_engine failed: {errors[0]}")

    def push(self, source: Any, version: int) -> dict:
        """Pause, start, one `/update_weights` per layer group with its broadcast, finish(version), checked reset, resume."""
        from forgec.train.rollout import reset_prefix_cache_checked

        if not self.sender:
            for _ in source.iter_groups():  # the gather is a collective: every rank walks the groups
                pass
            return {}
        sent = 0
        self._all("/pause?mode=wait&clear_cache=false")
        try:
            self._all("/start_weight_update")
            for names, tensors in source.iter_groups():
                info = {"names": names, "dtype_names": [str(t.dtype).split(".")[-1] for t in tensors],
                        "shapes": [list(t.shape) for t in tensors]}
                with ThreadPoolExecutor(max(len(self.roots), 1)) as ex:
                    futs = [ex.submit(self._call, r, "/update_weights", {"update_info": info}) for r in self.roots]
                    for t in tensors:  # the workers receive in this order inside their update_weights
                        self.transport.broadcast(t)
                        sent += t.numel() * t.element_size()
                    for f in futs:
                        f.result()
            self._all("/finish_weight_update", {"weight_version": str(version)})
            refusals = 0
            for r in self.roots:
                self.calls.append((r, "/reset_prefix_cache"))
                refusals += reset_prefix_cache_checked(r, self.retries)
        finally:
            self._all("/resume")
        return {"bytes": sent, "cache_refusals": refusals}

    def close(self) -> None:
        if self.transport is not None and hasattr(self.transport, "destroy"):
            self.transport.destroy()


# ---------------------------------------------------------------- colocated mode


def colocated_update(urls: list[str], update: Callable[[], Any], sync: Callable[[], Any], level: int = 1) -> Any:
    """Trainer and vLLM on the same GPUs: the servers sleep through the update.

    sleep(level 1: weights offloaded, KV cache freed) -> update -> wake the weights -> sync the new
    weights in -> wake the KV cache. Waking the weights before the sync gives the reload somewhere to
    write; the KV cache comes back last, after the optimizer's memory is free again."""
    from forgec.train.rollout import sleep_server, wake_server

    with ThreadPoolExecutor(max(len(urls), 1)) as ex:
        slept = list(ex.map(lambda u: sleep_server(u, level), urls))
    if not all(slept):
        raise RuntimeError("colocated: a server refused /sleep (start it with VLLM_SERVER_DEV_MODE=1 and --enable-sleep-mode)")
    try:
        out = update()
    finally:
        with ThreadPoolExecutor(max(len(urls), 1)) as ex:
            list(ex.map(lambda u: wake_server(u, ["weights"]), urls))
    res = sync()
    with ThreadPoolExecutor(max(len(urls), 1)) as ex:
        list(ex.map(lambda u: wake_server(u, ["kv_cache"]), urls))
    return out, res
