#!/usr/bin/env bash
# Create .venv and install apollo-restore (CPU torch only). By default with everything its tests
# and the scale recipes need (the test command and CI: EXTRAS=test,scale); the quickstart installs
# the package alone (EXTRAS= : what a user needs to restore texts and serve the web page).
#   bash scripts/setup.sh                # .[test,scale]
#   EXTRAS= bash scripts/setup.sh        # .  (the user's install)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
EXTRAS=${EXTRAS-test,scale}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
# torch first, pinned to the CPU build on this machine's disk: a bare "torch" would pull a CUDA build
.venv/bin/pip install -q "torch==2.13.0"
.venv/bin/pip install -q -e ".${EXTRAS:+[$EXTRAS]}"
