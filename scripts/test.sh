#!/usr/bin/env bash
# Second command of the README: the quick tier of the tests, after installing what they need
# (scripts/setup.sh: .venv with the test, training and scale tools) when .venv lacks it. The quick
# tier is the layering rule, the readers (Leiden, EpiDoc, DDB, Beta Code), requests and exports at
# every door, the hint and configuration checks: about a minute on two idle cores once installed
# (docs/development.md). CI runs everything (scripts/check.sh): the fast tier, then the slow tier.
#   bash scripts/test.sh                 # the quick tier
#   bash scripts/test.sh tests/web       # any other pytest arguments instead
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -c "import pytest, xdist, hypothesis, yaml" 2>/dev/null || bash scripts/setup.sh
QUICK=(tests/test_layers.py tests/hint tests/config tests/data tests/doors/test_edge_marks.py
       tests/doors/test_citation.py tests/doors/test_reading_doors.py tests/restoration/test_request.py
       tests/restoration/test_machine_readings.py)
[ "$#" -gt 0 ] && QUICK=("$@")
exec .venv/bin/python -m pytest -q -n 2 -p no:cacheprovider "${QUICK[@]}"
