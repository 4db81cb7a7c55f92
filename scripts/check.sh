#!/usr/bin/env bash
# What CI runs, after scripts/setup.sh: every test folder on its own, the whole suite, lint and format.
#   bash scripts/check.sh              # the fast tier
#   bash scripts/check.sh --runslow    # also the slow and distributed (torchrun) tests
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
for folder in tests/*/; do
    [ "$folder" = tests/fixtures/ ] && continue
    echo "== $folder"
    "$PY" -m pytest -q -p no:cacheprovider "$folder" "$@"   # each folder alone: no fixture or import leaks in
done
"$PY" -m pytest -q "$@"
"$PY" -m ruff check .
"$PY" -m ruff format --check .
