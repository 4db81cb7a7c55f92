#!/usr/bin/env bash
# Everything CI checks, after scripts/setup.sh (.ci/run runs setup, then this): ruff lint and
# format, the user's install in a fresh venv (scripts/check_light_install.sh: the package without
# extras restores and serves, about a minute; LIGHT=0 skips it), then every test once: the fast
# tier folder by folder, each folder alone (a test file must pass alone: nothing an earlier folder
# imported or built leaks in), then the slow tier (tests marked slow or distributed, the torchrun
# run, the regression guard tests/evaluate/test_guard.py among them) in its own step, again folder
# by folder. Last, scripts/tally.py sums the runs into the one
# closing "N passed ..." line CI reads. Stops at the first failure.
#   bash scripts/check.sh              # what CI runs
#   FAST=1 bash scripts/check.sh       # without the slow tier
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -m ruff check .
"$PY" -m ruff format --check .
[ "${LIGHT:-1}" = 0 ] || bash scripts/check_light_install.sh
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
folders=(tests/*/)
run() {  # NAME WORKERS PYTEST-ARGS…: one pytest run (-n WORKERS), its JUnit file kept for the tally
    local name=$1 workers=$2 start=$SECONDS status=0
    shift 2
    "$PY" -m pytest -q -n "$workers" -p no:cacheprovider --junitxml="$results/$name.xml" "$@" || status=$?
    [ "$status" = 0 ] || [ "$status" = 5 ] || exit "$status"  # 5: no test selected (a folder without slow tests)
    echo "== $name: $((SECONDS - start)) s"
}
workers() {  # FOLDER: a folder of a few test files runs in one process (starting workers costs more)
    local files=("$1"test_*.py)
    if [ "${#files[@]}" -gt 3 ]; then echo auto; else echo 0; fi
}
for folder in "${folders[@]}"; do
    compgen -G "${folder}test_*.py" >/dev/null || continue  # fixtures/, caches: no tests there
    run "fast-$(basename "$folder")" "$(workers "$folder")" "$folder" "$@"
done
run fast-top "$(workers tests/)" tests/test_*.py "$@"
if [ "${FAST:-0}" = 0 ]; then
    for folder in "${folders[@]}"; do
        grep -qE "mark\.(slow|distributed)" "$folder"test_*.py 2>/dev/null || continue
        run "slow-$(basename "$folder")" auto --runslow -m "slow or distributed" "$folder" "$@"
    done
    ! grep -qE "mark\.(slow|distributed)" tests/test_*.py || run slow-top auto --runslow -m "slow or distributed" tests/test_*.py "$@"
fi
"$PY" scripts/tally.py "$results"/*.xml
