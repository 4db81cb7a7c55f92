#!/usr/bin/env bash
# First command of the README: set up, then restore a real papyrus passage with the embedded model.
#   bash scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Chr.Mitt. 328 (a release, 2nd c. AD), lines 1-8 as edited (supplements in brackets), with two
# lacunae of 9 and 8 letters (οὐετρανῷ, γυναικὸς) made for the demonstration. The document is in the test split:
# the embedded model never saw it in training.
.venv/bin/apollo-restore restore "Σαραπίω[ν] Ἰσιδώρου τοῦ [καὶ] Παν[ᾶ]τος Ἀμμωνίου τοῦ [κ]αὶ Ἀθηνοδ[ώ]ρου Σωσικόσμι[ος] ὁ καὶ Ἀλθαιεὺς Ἀντωνίῳ Τ[ι]βερείνῳ [.9] χαίριν. ἐπ[εὶ] ἐπεγράψω κύρ[ι]ος τῆς [ἐ]μῆς [.8] περιλυούσης δάνιον μητρικὸν αὐτῆς"
