#!/usr/bin/env bash
# Second command of the README: the fast tier of the tests on every core (pytest-xdist), after
# installing what they need (scripts/setup.sh: .venv with the test, training and scale tools) when
# .venv lacks it. 1,950 tests in 99 s wall on two idle AVX512 cores (`time bash scripts/test.sh`,
# 2026-12-05). CI runs every test, the slow tier too (scripts/check.sh).
#   bash scripts/test.sh                 # the fast tier
#   bash scripts/test.sh tests/web       # any other pytest arguments instead
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -c "import pytest, xdist, hypothesis, yaml" 2>/dev/null || bash scripts/setup.sh
[ "$#" -gt 0 ] || set -- tests
exec .venv/bin/python -m pytest -q -n auto -p no:cacheprovider "$@"
