"""The layout regression: a tiny model trained with :func:`train` on a formulaic toy corpus fills
gaps of *held-out* documents. It fails if the layout separates prefix and middle again (then the
left-to-right skill never reaches the middle, and the fill is not learned in this budget)."""

from __future__ import annotations

import numpy as np
import pytest

from apollo_restore.data.table import write_documents
from apollo_restore.hint import Hint
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.train.loop import TrainConfig, train

from ..conftest import document_row

NAMES = ["ηρακλειδης", "πτολεμαιος", "διονυσιος", "απολλωνιος", "σαραπιων", "ωριγενης", "ζωιλος", "θεων"]
MONTHS = ["θωθ", "φαωφι", "αθυρ", "χοιακ", "τυβι", "μεχειρ"]


def _receipt(rng: np.random.Generator) -> str:
    a, b = rng.choice(NAMES, 2, replace=False)
    return (
        f"{a} {b} χαιρειν ομολογω απεσχηκεναι παρα σου τας δραχμας ετους δευτερου αντωνινου "
        f"καισαρος του κυριου {rng.choice(MONTHS)} ερρωσο"
    )


@pytest.mark.slow
def test_tiny_model_fills_held_out_formulaic_gaps(tmp_path):
    rng = np.random.default_rng(0)
    rows = [document_row(f"t{i}", " ".join(_receipt(rng) for _ in range(4)), "train") for i in range(60)]
    rows += [document_row("v0", _receipt(rng), "validation")]
    write_documents(rows, tmp_path / "documents.parquet")
    cfg = TrainConfig(
        prepared=str(tmp_path),
        out=str(tmp_path / "run"),
        size="tiny",
        steps=250,
        batch_size=8,
        block_size=256,
        lr=3e-3,
        min_lr=3e-4,
        warmup=20,
        bf16=False,
        threads=1,
        eval_every=1000,
        eval_rows=4,
        checkpoint_every=1e9,
        log_every=50,
    )
    train(cfg, progress=False)
    restorer = NeuralMember.load(tmp_path / "run" / "checkpoint", config=RestoreConfig(k=5))
    held_out = rng.choice(NAMES, 2, replace=False)
    text = (
        f"{held_out[0]} {held_out[1]} χαιρειν ομολογω απεσχηκεναι παρα σου τας δραχμας "
        "ετους δευτερου αντωνινου καισαρος του κυριου τυβι ερρωσο"
    )
    hits = 0
    for word in ("απεσχηκεναι", "δραχμας", "καισαρος", "κυριου"):
        at = text.index(word)
        cands = restorer.candidates(text[:at], text[at + len(word) :], Hint.exact(len(word)))
        hits += cands[0].text == word
    assert hits >= 3, hits
