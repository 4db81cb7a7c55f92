"""Every door takes what the page takes: EpiDoc XML and Beta Code are read as Leiden (issue 36,
item 5), and Leiden's dots count letters, ``[...]`` three (item 3)."""

from __future__ import annotations

import pytest

from apollo_restore.data.readers.leiden import find_gaps
from apollo_restore.data.readers.typed import as_leiden, looks_like_betacode
from apollo_restore.errors import RequestError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.request import validate
from apollo_restore.schema.restoration import RestoreRequest

EDITION = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0">
  <text><body><div type="edition" xml:lang="grc"><ab>
    <lb n="1"/>ἔτους δευτέρου καὶ εἰκοστοῦ Ἀντωνίνου Καίσαρος τοῦ κυρίου
    <lb n="2"/>μηνὸς Φαῶφι <gap reason="lost" quantity="9" unit="character"/> ὁμολογῶ ἀπέχειν
    <lb n="3"/>τὸν φόρον <supplied reason="lost">τοῦ</supplied> ἐνεστῶτος
    <gap reason="lost" extent="unknown" unit="character"/>
  </ab></div></body></text>
</TEI>
"""


@pytest.mark.parametrize(
    "leiden,hint",
    [
        ("[.]", Hint.exact(1)),
        ("[..]", Hint.exact(2)),
        ("[...]", Hint.exact(3)),
        ("[....]", Hint.exact(4)),
        ("[- - -]", NO_HINT),
        ("[---]", NO_HINT),
        ("[…]", NO_HINT),
    ],
)
def test_dots_count_letters_and_dashes_mean_unknown_extent(leiden, hint):
    assert [g.hint for g in find_gaps(f"καὶ {leiden} τοῦ")] == [hint]


def test_leiden_passes_unchanged():
    text = "ἔτους [.8] Ἀντωνίνου <αβ> [ca.5] ???"
    assert as_leiden(text) == (text, "leiden")


def test_epidoc_is_read_as_its_edition_in_leiden():
    text, kind = as_leiden(EDITION)
    assert kind == "epidoc"
    assert "Φαῶφι [.9] ὁμολογῶ" in text and "[τοῦ] ἐνεστῶτος [- - -]" in " ".join(text.split())
    assert [g.hint for g in find_gaps(text)] == [Hint.exact(9), NO_HINT]


def test_epidoc_request_spans_refer_to_the_leiden_text():
    request = validate(RestoreRequest(EDITION))
    assert request.hints == {0: Hint.exact(9), 1: NO_HINT} and not request.warnings
    assert (
        request.text.startswith("ἔτους") and request.text[request.markers[0].start : request.markers[0].end] == "[.9]"
    )


@pytest.mark.parametrize(
    "xml,reason",
    [
        ('<?xml version="1.0"?><TEI><text>', "not well-formed XML"),
        ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text/></TEI>', "no edition"),
        (EDITION.replace('xml:lang="grc"', 'xml:lang="la"'), "no Greek edition"),
    ],
)
def test_broken_or_foreign_xml_is_a_numbered_error_naming_the_file(xml, reason):
    with pytest.raises(RequestError) as err:
        validate(RestoreRequest(xml), name="edition.xml")
    assert err.value.code == "E313" and "edition.xml" in str(err.value) and reason in str(err.value)


def test_betacode_is_converted_with_a_warning():
    request = validate(RestoreRequest("e)/tous [.8] *)antwni/nou kai/saros tou= kuri/ou"))
    assert request.text == "ἔτους [.8] Ἀντωνίνου καίσαρος τοῦ κυρίου"
    assert request.hints == {0: Hint.exact(8)}
    assert request.warnings[0].startswith("[W303]") and "Beta Code" in request.warnings[0]


def test_betacode_keeps_leiden_marks_between_words():
    text, kind = as_leiden("kai\\ to\\n [ca.5] a)po\\ ??? tou= [- - -] vac. lost.2lin")
    assert kind == "betacode"
    assert text == "καὶ τὸν [ca.5] ἀπὸ ??? τοῦ [- - -] vac. lost.2lin"
    assert [g.hint for g in find_gaps(text)] == [Hint.span(4, 6), Hint.exact(3), NO_HINT, NO_HINT]


@pytest.mark.parametrize(
    "text",
    [
        "zenoni tou [.3] chairein",  # transliteration without Beta Code marks
        "Hello (world) [.5] again",  # Latin
        "ἔτους [.8] Ἀντωνίνου e)/",  # Greek with a stray mark
    ],
)
def test_text_without_betacode_marks_is_not_converted(text):
    assert not looks_like_betacode(text) and as_leiden(text) == (text, "leiden")
