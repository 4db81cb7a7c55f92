#!/usr/bin/env bash
# Second command of the README: the quick tier of the tests, after installing what they need
# (scripts/setup.sh: .venv with the test, training and scale tools) when .venv lacks it. The quick
# tier is the layering rule, the readers (Leiden, EpiDoc, DDB, Beta Code), requests and exports at
# every door, the hint and configuration checks: 530 tests, 44 s of CPU time in all (user + sys,
# `time bash scripts/test.sh`), so well under two minutes on two idle cores once installed (on the
# shared 2-core machine at load 10-14: 113-172 s wall). CI runs everything (scripts/check.sh).
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
