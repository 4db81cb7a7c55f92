#!/usr/bin/env bash
# Create .venv and install apollo-restore (CPU torch only). By default with everything its tests,
# training and the scale recipes need (the test command and CI: EXTRAS=test,train,scale); the
# quickstart installs the package alone (EXTRAS= : what a user needs to restore texts and serve the
# web page, no transformers, tokenizers, matplotlib or pyyaml).
#   bash scripts/setup.sh                # .[test,train,scale]
#   EXTRAS=train bash scripts/setup.sh   # .[train]  (training, no test tools)
#   EXTRAS= bash scripts/setup.sh        # .  (the user's install)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
EXTRAS=${EXTRAS-test,train,scale}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
# torch first, the CPU build: a bare "torch" resolved by pip from PyPI is a CUDA build (GBs of
# nvidia-* wheels). Installed first, it satisfies the package's torch requirement, so nothing after
# pulls another. TORCH_INDEX: where the CPU build comes from (this machine: its own wheelhouse).
.venv/bin/pip install -q "torch==2.13.0" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"}
.venv/bin/pip install -q -e ".${EXTRAS:+[$EXTRAS]}"
