"""Adapters: a forgec build inside the RL stacks people use (docs/adapters.md).

* `forgec.adapters.verifiers_env`: a verifiers (PrimeIntellect, `verifiers.v1`) taskset, env and harness, also
  installed as the verifiers plugin `forgec-verifiers` (the top-level `forgec_verifiers` package); needs
  `verifiers`, which lives in its own venv (scripts/setup_verifiers_venv.sh);
* `forgec.adapters.openenv`: an OpenEnv-compatible server (`forgec serve-openenv BUILD`): reset / step / state
  over HTTP and OpenEnv's WebSocket session protocol; needs the `serve` extra.

Both play each episode with `forgec.gym.ForgecEnv` (the episode loop of `forgec eval`, the scripted user, the
build's reward), so their rewards are `forgec eval`'s. Nothing is imported here: each adapter needs its own
optional packages.
"""
