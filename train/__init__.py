"""forgec.train: ERPO/GRPO on DeepSpeed for agents on compiled builds (see docs/training.md).

Modules: config (pydantic TrainConfig), template (training chat template), tokenize (episode ->
ids + loss mask), rollout (policy agent, HF/vLLM backends), advantage (erpo/grpo/none, MEU,
dynamic filtering), loss (PPO-clip), trainer (the loop), sft (warm start), checkpoint, logging,
tiny (tiny local model), toybuild (a hand-made build for tests). Nothing here imports torch at
package import; `forgec compile/check/fmt/inspect` stay torch-free.
"""
