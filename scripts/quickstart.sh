#!/usr/bin/env bash
# First command of the README: set up, restore a real papyrus passage with the embedded model,
# then (unless QUICK=1) show parallel passages and check the text's provenance. No separate index
# step: the first command that needs the text index builds it from the packaged training text
# into the user cache (about 30 s, once).
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
.venv/bin/apollo-restore parallels "$TEXT"
# was this text in the training data? (it is a test document: no training edition should share 40 letters)
.venv/bin/apollo-restore provenance "$TEXT"
