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
# verifiers 0.4.0 does not pull torch (checked with `pip install --dry-run`), so there is no CPU-torch step.
# forgec goes in editable (the tests run the checkout's code) with its `verifiers` extra: the core runtime deps (all
# light; none of train's) and gymnasium; a dry run of that step in a venv holding verifiers and openenv-core installs
# forgec alone, changing none of their pins.
#
# Usage: bash scripts/setup_verifiers_venv.sh [VENV_DIR]   (default: .venv-verifiers in the repo root)
# Prints the venv path on its last line; export FORGEC_VERIFIERS_VENV=<that path> to run the adapter tests.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${1:-$ROOT/.venv-verifiers}"
PY="${PYTHON:-python3}"
VERIFIERS_SPEC="${VERIFIERS_SPEC:-verifiers==0.4.0}"
OPENENV_SPEC="${OPENENV_SPEC:-openenv-core==0.3.0}"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import verifiers, openenv.core.generic_client, forgec_verifiers" >/dev/null 2>&1; then
  echo "verifiers, openenv and forgec already importable in $VENV" >&2
  echo "$VENV"
  exit 0
fi

"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip setuptools wheel
"$VENV/bin/python" -m pip install -q "$VERIFIERS_SPEC" "$OPENENV_SPEC"
"$VENV/bin/python" -m pip install -q -e "$ROOT[verifiers]"
"$VENV/bin/python" -c "import verifiers, openenv, forgec.adapters.verifiers_env; print('verifiers', verifiers.__version__, 'openenv-core', openenv.__version__)" >&2
echo "$VENV"
