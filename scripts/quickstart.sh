#!/usr/bin/env bash
# First command of the README: set up, restore a real papyrus passage with the embedded model,
# then (unless QUICK=1) build the parallel-passage index from ../shared/corpora and show parallels.
#   bash scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Chr.Mitt. 328 (a release, 2nd c. AD), lines 1-8 as edited (supplements in brackets), with two
# lacunae of 9 and 8 letters (οὐετρανῷ, γυναικὸς) made for the demonstration. The document is
# in the test split: the embedded model never saw it in training.
TEXT="Σαραπίω[ν] Ἰσιδώρου τοῦ [καὶ] Παν[ᾶ]τος Ἀμμωνίου τοῦ [κ]αὶ Ἀθηνοδ[ώ]ρου Σωσικόσμι[ος] ὁ καὶ Ἀλθαιεὺς Ἀντωνίῳ Τ[ι]βερείνῳ [.9] χαίριν. ἐπ[εὶ] ἐπεγράψω κύρ[ι]ος τῆς [ἐ]μῆς [.8] περιλυούσης δάνιον μητρικὸν αὐτῆς"
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
