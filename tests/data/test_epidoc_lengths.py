"""A user's EpiDoc ``<gap>`` length that is no count of letters is a numbered error naming the
element (``E314``), at the restore door and the web's upload; a corpus reads it as unknown
extent with a note (issue 46, item 3)."""

from __future__ import annotations

import pytest

from apollo_restore.data.readers.epidoc import parse_epidoc_file
from apollo_restore.data.readers.typed import as_leiden
from apollo_restore.errors import RequestError
from apollo_restore.restoration.request import validate
from apollo_restore.schema.restoration import RestoreRequest


def edition(attrs: str) -> str:
    return (
        '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" xml:lang="grc"><ab>\n'
        f'<lb n="1"/>ἔτους δευτέρου καὶ εἰκοστοῦ Ἀντωνίνου <gap reason="lost" {attrs} unit="character"/> '
        "Καίσαρος τοῦ κυρίου</ab></div></body></text></TEI>"
    )


@pytest.mark.parametrize(
    "attrs",
    ['quantity="-4"', 'quantity="99999999999999999999"', 'quantity="0"', 'quantity="vier"', 'atLeast="-2" atMost="5"'],
)
def test_a_gap_length_that_is_no_count_is_refused_naming_the_element(attrs):
    with pytest.raises(RequestError) as err:
        as_leiden(edition(attrs), "p.test.xml")
    attr = attrs.split("=")[0]
    assert err.value.code == "E314" and f"<gap {attr}=" in str(err.value) and "p.test.xml" in str(err.value)
    assert "line 2" in str(err.value)
    with pytest.raises(RequestError, match=r"\[E314\]"):
        validate(RestoreRequest(edition(attrs)))


def test_a_length_within_bounds_is_read_and_an_overlong_one_is_e304():
    assert "[.4]" in as_leiden(edition('quantity="4"'))[0]
    with pytest.raises(RequestError, match=r"\[E304\]"):
        validate(RestoreRequest(edition('quantity="500"')))


def test_a_corpus_reads_it_as_unknown_extent_with_a_note():
    doc = parse_epidoc_file(edition('quantity="-4"').encode(), "c.xml", "ddb")
    assert any("quantity" in note for note in doc.meta["notes"])
