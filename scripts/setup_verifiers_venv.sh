#!/usr/bin/env bash
# Create .venv-verifiers: a separate virtualenv holding the third-party RL-stack packages the adapter
# tests drive forgec through (docs/adapters.md):
#   * verifiers==0.4.0 (PrimeIntellect): tests/test_adapter_verifiers.py loads forgec's verifiers
#     environment (forgec.adapters.verifiers_env) there and runs rollouts through verifiers' own code;
#   * openenv-core==0.3.0 (Meta's OpenEnv): tests/test_adapter_openenv.py drives `forgec serve-openenv`
#     (running in the main venv) with OpenEnv's own client, GenericEnvClient.
#
# Why separate: verifiers pins mcp==2.0.0 and openai 2.x, forgec's serve extra needs mcp>=2.3; openenv-core
# pulls gradio and downgrades pillow. Neither may change the main venv.
# verifiers 0.4.0 does not pull torch (checked with `pip install --dry-run`), so no CPU torch step.
# forgec itself goes in editable with --no-deps (the tests run the checkout's code), plus its light runtime deps.
#
# Usage: bash scripts/setup_verifiers_venv.sh [VENV_DIR]   (default: .venv-verifiers in the repo root)
# Prints the venv path on its last line; export FORGEC_VERIFIERS_VENV=<that path> to run the adapter tests.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${1:-$ROOT/.venv-verifiers}"
PY="${PYTHON:-python3}"
VERIFIERS_SPEC="${VERIFIERS_SPEC:-verifiers==0.4.0}"
OPENENV_SPEC="${OPENENV_SPEC:-openenv-core==0.3.0}"
# forgec's own runtime deps (pyproject [project].dependencies) that a build's env modules and the episode loop need;
# verifiers already brings pydantic, jinja2, typer, rich, pyyaml, openai, httpx, numpy; gymnasium: the adapter plays
# each rollout with forgec.gym.ForgecEnv.
FORGEC_DEPS=("lark>=1.3,<1.4" "networkx>=3.2" "faker==40.63.0" "lemminflect>=0.2.3" "jsonschema>=4.20" "gymnasium>=1.0")

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import verifiers, openenv.core.generic_client, forgec.adapters.verifiers_env" >/dev/null 2>&1; then
  echo "verifiers, openenv and forgec already importable in $VENV" >&2
  echo "$VENV"
  exit 0
fi

"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip setuptools wheel
"$VENV/bin/python" -m pip install -q "$VERIFIERS_SPEC" "$OPENENV_SPEC" "${FORGEC_DEPS[@]}"
"$VENV/bin/python" -m pip install -q --no-deps -e "$ROOT"
"$VENV/bin/python" -c "import verifiers, openenv, forgec.adapters.verifiers_env; print('verifiers', verifiers.__version__, 'openenv-core', openenv.__version__)" >&2
echo "$VENV"
