"""Issue 56's probe of provenance's verdict: a long run that many training documents share (the
Trinitarian invocation opening Byzantine contracts) is a formula, not a memorised edition, however
much of the text it covers; a text one document holds is still that document's edition."""

from __future__ import annotations

import pytest

from apollo_restore.data.textindex import TextIndex, build_text_index
from apollo_restore.retrieve.provenance import MAX_HOLDERS, provenance

INVOCATION = (
    "εν ονοματι του κυριου και δεσποτου ιησου χριστου του θεου και σωτηρος ημων βασιλειας "
    "του θειοτατου και ευσεβεστατου ημων δεσποτου"
)
TAILS = [
    "φλαουιος ιωαννης υιος αναστασιου απο της λαμπρας οξυρυγχιτων πολεως χαιρειν",
    "αυρηλιος φοιβαμμων υιος ψατος μητρος μαριας απο κωμης ταμπεμου χαιρειν",
    "αυρηλια σοφια θυγατηρ βικτορος απο της αντινοεων πολεως τω θαυμασιωτατω",
    "φλαουιω απιωνι τω ενδοξοτατω στρατηλατη και πατρικιω δια σου του λογιωτατου",
    "αυρηλιος παμουθιος υιος ιωσηφ γεωργος απο εποικιου αγαθου δαιμονος ομολογω",
]
OWN = "ομολογω εσχηκεναι παρα σου εν δανειω χρυσου νομισματια δυο"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> TextIndex:
    out = tmp_path_factory.mktemp("formula") / "ix"
    texts = [f"{INVOCATION} {tail}" for tail in TAILS] + ["ετους δευτερου αυτοκρατορος καισαρος τραιανου"]
    build_text_index([f"p.test.{i}" for i in range(len(texts))], ["ddb"] * len(texts), texts, out)
    return TextIndex.open(out)


def test_a_formula_many_documents_share_is_no_memorised_edition(index):
    found = provenance(f"{INVOCATION} {OWN}", index)
    top = max(found.documents, key=lambda d: d.covered)
    assert top.covered >= 0.5 * found.letters  # the run is most of the text…
    assert len(TAILS) > MAX_HOLDERS and top.holders == len(TAILS)  # …but every contract holds it
    assert found.verdict == "formulaic" and "memorised text" not in found.summary
    assert f"{len(TAILS)} training documents hold the same run" in found.summary


def test_a_text_one_document_holds_is_still_its_edition(index):
    found = provenance(f"{INVOCATION} {TAILS[2]}", index)
    assert found.verdict == "edition" and found.summary.startswith("p.test.2 shares")
