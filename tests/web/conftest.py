"""Fixtures of the web tests: a tiny random restorer (junk readings, fast) and its app."""

from __future__ import annotations

import pytest

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.members.neural import NeuralMember
from tests.stubs import FixedReadings


@pytest.fixture(scope="session")
def tiny_restorer() -> NeuralMember:
    """``tiny`` with random weights; short searches so each gap takes a fraction of a second."""
    tok = CharTokenizer()
    return NeuralMember(
        build_model("tiny", tok, seed=0).eval(), tok, name="tiny", config=RestoreConfig(k=5, max_chars=12)
    )


#: fixed readings for every gap (κυριωι, θεου, the truncated κυρ): what the page shows of display
#: forms, calibrated percentages and unknown words is then known in advance
STUB = FixedReadings([("κυριωι", -1.0), ("θεου", -1.5), ("κυρ", -1.2)], name="stub")


@pytest.fixture(scope="session")
def presented_stub():
    """The stub wrapped as ``load_restorer`` wraps a model: edition forms and a calibration."""
    from apollo_restore.data.orthography import EditionForms
    from apollo_restore.restoration.presentation.present import Presented
    from apollo_restore.restoration.ranking.calibration import Calibration
    from apollo_restore.restoration.ranking.order import Ranking
    from apollo_restore.schema.folder import Scaling

    forms = EditionForms.from_forms(["κυρίῳ", "θεοῦ", "τῷ", "χαίρειν"])
    calibration = Calibration({c: Scaling(a=1.0, b=0.0) for c in ("exact", "range", "none")}, unknown_word_penalty=2.0)
    return Presented(STUB, forms, Ranking(calibration=calibration))
