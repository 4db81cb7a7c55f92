"""Provenance: training documents sharing long runs with a text; edition links."""

from __future__ import annotations

import pytest

from apollo_restore.data.textindex import TextIndex, build_text_index
from apollo_restore.retrieve.links import edition_url
from apollo_restore.retrieve.provenance import provenance

LONG = (
    "κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν ομολογω πεπρακεναι σοι καμηλον θηλειαν "
    "πυρραν κεχαραγμενην επι του δεξιου μηρου και απεσχηκεναι παρα σου την συμπεφωνημενην τιμην"
)
OTHER = "ετους δευτερου αυτοκρατορος καισαρος τραιανου σεβαστου μηνος θωθ"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> TextIndex:
    out = tmp_path_factory.mktemp("prov") / "ix"
    build_text_index(["bgu.1.100", "p.erl.26"], ["ddb", "ddb"], [LONG, OTHER], out)
    return TextIndex.open(out)


def test_provenance_finds_a_pasted_document_with_letters_changed(index: TextIndex) -> None:
    pasted = list("Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [ὥρου] χαίρειν. " + LONG[52:])
    for at in (70, 120, 160):  # three letters changed
        pasted[at] = "ξ" if pasted[at] != " " else pasted[at]
    found = provenance("".join(pasted), index)
    assert [d.doc for d in found.documents] == ["bgu.1.100"]
    hit = found.documents[0]
    assert hit.longest >= 40 and hit.covered > 0.6 * found.letters and hit.url == "https://papyri.info/ddbdp/bgu;1;100"
    assert hit.snippet.replace(" ", "") in LONG.replace(" ", "").replace("ς", "σ") or hit.snippet in LONG


def test_provenance_unseen_text_and_short_text(index: TextIndex) -> None:
    unseen = "ανδρα μοι εννεπε μουσα πολυτροπον ος μαλα πολλα πλαγχθη επει τροιης ιερον πτολιεθρον επερσεν"
    assert provenance(unseen, index).documents == []
    assert provenance(OTHER, index, min_run=20).documents[0].doc == "p.erl.26"
    with pytest.raises(ValueError, match="E406"):
        provenance("ετους δευτερου", index)


@pytest.mark.parametrize(
    ("doc", "source", "url"),
    [
        ("bgu.1.100", "ddb", "https://papyri.info/ddbdp/bgu;1;100"),
        ("p.brux.1.1", "ddb", "https://papyri.info/ddbdp/p.brux;1;1"),
        ("p.erl.26", "ddb", "https://papyri.info/ddbdp/p.erl;;26"),
        ("61067", "dclp", "https://papyri.info/dclp/61067"),
        ("ISic003024", "inscription", "http://sicily.classics.ox.ac.uk/inscription/ISic003024"),
        ("iAph120314", "inscription", "https://insaph.kcl.ac.uk/iaph2007/iAph120314.html"),
        ("caes0296", "inscription", "https://library.brown.edu/iip/viewinscr/caes0296"),
        ("5.275", "inscription", "https://iospe.kcl.ac.uk/5.275.html"),
        ("odd-id", "inscription", None),
    ],
)
def test_links_edition_url(doc: str, source: str, url: str | None) -> None:
    assert edition_url(doc, source) == url
