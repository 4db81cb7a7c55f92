#!/usr/bin/env bash
# Create .venv and install apollo-restore with everything its tests need (CPU torch only).
#   bash scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
# torch first, pinned to the CPU build on this machine's disk: a bare "torch" would pull a CUDA build
.venv/bin/pip install -q "torch==2.13.0"
.venv/bin/pip install -q -e '.[test,scale]'
