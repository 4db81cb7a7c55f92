#!/usr/bin/env bash
# First command of the README: set up, restore a real papyrus passage with the embedded model,
# then (unless QUICK=1) build the parallel-passage index from ../shared/corpora and show parallels.
#   bash scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# O.Claud. 3.420 (a receipt, 2nd c. AD) as edited (supplements in brackets), with two of the
# editor's supplements, Δίδυμος (7 letters) and κιβαριάτῃ (9), made lacunae for the demonstration
# (scripts/demo_examples.py). The document is in the test split: the embedded model never saw it.
TEXT="[.7] [Δ]ι̣οφάντου Ἀλεξάνδρῳ
[.9] χαίριν . ὁμολογῶ
[προκεχρῆσ]ται μου τὰς τρεῖς
[κοτύλας] τοῦ ἐλαίου καὶ̣ τὸ̣ [φακοῦ]
[μάτιον] [ὑ]π̣ὲρ̣ μηνὸς Μεχ[ειρ] [τοῦ]
[πρώτου] [κ]αὶ εἰκοστοῦ ἔτο[υς]
[Ἁδριανο]ῦ Καίσαρος τοῦ κυρίου ."
.venv/bin/apollo-restore restore "$TEXT"
[ "${QUICK:-0}" = 1 ] && exit 0
# The index of parallel passages (train split of every corpus; ~8 min here, 337 MB, not shipped).
INDEX=src/apollo_restore/models/index
if [ ! -f "$INDEX/meta.json" ]; then
  SHARED=../shared/corpora
  if [ ! -f data/prepared/documents.parquet ]; then
    .venv/bin/apollo-restore prepare --corpus ddb=$SHARED/ddb-trismegistos-2016.tar.xz \
      --corpus literary=$SHARED/tesserae-grc.tar.xz --corpus dclp=$SHARED/idp-sample/DCLP \
      $(for f in $SHARED/inscriptions/*.tar.xz; do echo --corpus inscription=$f; done) --out data/prepared
  fi
  .venv/bin/apollo-restore index --prepared data/prepared --out "$INDEX"
fi
.venv/bin/apollo-restore parallels "$TEXT"
