#!/usr/bin/env bash
# First command of the README: set up, restore a real papyrus passage with the embedded model,
# then (unless QUICK=1) show parallel passages and check the text's provenance. No separate index
# step: the first command that needs the text index builds it from the packaged training text
# into the user cache (10 s on a quiet machine, once). The install is the user's: the package and
# CPU torch, no test, training or scale tools (the README's test command, scripts/setup.sh, adds those).
#   bash scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS= bash scripts/setup.sh
# examples/o.claud.3.420.txt: O.Claud. 3.420 (a receipt, 2nd c. AD) as edited (supplements in
# brackets), with two of the editor's supplements, Δίδυμος (7 letters) and κιβαριάτῃ (9), made
# lacunae for the demonstration (scripts/demo_examples.py). The document is in the test split: the
# embedded model never saw it.
TEXT=examples/o.claud.3.420.txt
say_how() { echo; echo "The command line is .venv/bin/apollo-restore (source .venv/bin/activate to call it apollo-restore)."; }
.venv/bin/apollo-restore restore "$TEXT"
[ "${QUICK:-0}" = 1 ] && say_how && exit 0
# readings that stand in the training texts next to each gap's context (one side alone where both
# find nothing together: the first gap starts the text; no training text holds both of the second's)
.venv/bin/apollo-restore parallels "$TEXT"
# was this text in the training data? It is a test document: only formulas (the date) are shared
.venv/bin/apollo-restore provenance "$TEXT"
say_how
