"""EpiDoc TEI reader on real papyri.info and inscription files (tests/fixtures/epidoc/)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from lxml import etree

from apollo_restore.data.document import Editorial, Lacuna, LineBreak, Supplied, Text, Vacat, render
from apollo_restore.data.prepare import CorpusSpec, parse_corpus_rows
from apollo_restore.data.readers.archive import SkipLog
from apollo_restore.data.readers.epidoc import gap_segments, parse_epidoc_file

FIXTURES = Path(__file__).parent.parent / "fixtures" / "epidoc"
TEI_NS = "http://www.tei-c.org/ns/1.0"


def _read(name: str, source: str = "inscription"):
    path = FIXTURES / name
    return parse_epidoc_file(path.read_bytes(), str(path), source)


def test_epidoc_fixtures_are_small():
    files = sorted(FIXTURES.glob("*.xml"))
    assert len(files) >= 6
    assert all(f.stat().st_size < 30_000 for f in files)


@pytest.mark.parametrize(
    ("name", "source", "doc_id", "expected"),
    [
        # DDB: unclear, lost gaps of unknown extent, supplied across an in-word break, expan → abbr only
        ("o.claud.1.150.xml", "ddb", "o.claud.1.150", "κορνηλιανος ασκ… τωι πατρι χ· κομισαι δ-… το γαρ σευτλον ο ει…"),
        # DDB: choice → orig (not reg), app → lem with add kept, break="no" joins the word
        (
            "sb.1.4317.xml",
            "ddb",
            "sb.1.4317",
            "πτολεμαιος διοδωραι τηι αδελφηι χαιρειν· γινωσκιν σε θελω· οτι υπνος ουκ ερχεται μοι δια νυκτος "
            "χαρειν της σης σαπροεραισει και της σης απροθυμιας·",
        ),
        # DCLP: hi keeps its letter, unclear, long supplements
        ("61067.xml", "dclp", "61067", "… στηθεα θ· ιμεροεντα και ομματα μαρμαιροντα· θαμβησεν δ·"),
        # IAph: w/name wrappers, lost gap of 5, supplied with a break="no" and a space after it, num
        ("iAph150279.xml", "inscription", "iAph150279", "ναρκισσος παλου υπο χρυσο----- παλου γ"),
        # IIP: transcription edition chosen (not the segmented copy), language from textLang
        ("caes0249.xml", "inscription", "caes0249", "μιμοριον διαφεροντα --- λεον ---- ου----"),
        # IGCyr: lost lines, orig, w across a line break
        ("igcyr062800.xml", "inscription", "IGCyr062800", "… …σε-- …ε δε αυτ…κεν …"),
    ],
)
def test_epidoc_renders_real_files(name, source, doc_id, expected):
    doc = _read(name, source)
    assert doc.id == doc_id
    assert doc.source == source
    assert render(doc).text.startswith(expected)


def test_epidoc_segments_of_one_line():
    doc = _read("o.claud.1.150.xml", "ddb")
    assert doc.segments[:6] == [
        Text("Κορνηλιανὸς Ἀσ"),
        Text("κ", uncertain=True),
        Lacuna(None),
        Text(" "),
        Supplied("τῷ πα"),
        LineBreak(in_word=True),
    ]


def test_epidoc_supplied_spans():
    doc = _read("iAph150279.xml")
    assert [sp.text for sp in render(doc).supplied] == ["παλου", "πα"]


def test_epidoc_uncertain_excluded_variant():
    doc = _read("iAph150279.xml")
    assert render(doc, uncertain_as_gap=True).text.startswith("ναρκισσο- παλου υπο χρυσ------")


@pytest.mark.parametrize(
    ("name", "meta"),
    [
        (
            "61067.xml",
            {
                "tm": "61067",
                "date": 499,
                "date_min": 400,
                "date_max": 599,
                "title": "Line ends from a column of Iliad 3",
            },
        ),
        ("igcyr062800.xml", {"tm": "738331", "date_min": -139, "date_max": -132}),
        ("o.claud.1.150.xml", {"tm": "24161"}),
    ],
)
def test_epidoc_metadata(name, meta):
    doc = _read(name)
    assert {k: doc.meta.get(k) for k in meta} == meta
    assert doc.group == f"tm:{meta['tm']}"


def _gap(**attrs: str) -> etree._Element:
    el = etree.Element(f"{{{TEI_NS}}}gap")
    for key, value in attrs.items():
        el.set(key, value)
    return el


@pytest.mark.parametrize(
    ("attrs", "segments"),
    [
        ({"reason": "lost", "quantity": "5", "unit": "character"}, [Lacuna(5)]),
        ({"reason": "lost", "extent": "unknown", "unit": "character"}, [Lacuna(None)]),
        ({"reason": "lost", "atLeast": "3", "atMost": "6", "unit": "character"}, [Lacuna(3, length_max=6)]),
        ({"reason": "lost", "quantity": "4", "unit": "character", "precision": "low"}, [Lacuna(4, approximate=True)]),
        ({"reason": "lost", "extent": "unknown", "unit": "line"}, [Lacuna(None, lines=-1), LineBreak(False)]),
        ({"reason": "lost", "quantity": "2", "unit": "line"}, [Lacuna(None, lines=2), LineBreak(False)]),
        ({"reason": "illegible", "quantity": "2", "unit": "character"}, [Lacuna(2, reason="illegible")]),
        ({"reason": "omitted", "quantity": "2", "unit": "character"}, []),
    ],
)
def test_epidoc_gap_mapping(attrs, segments):
    assert gap_segments(_gap(**attrs)) == segments


def _tei(edition: str, lang: str = 'xml:lang="grc"') -> bytes:
    return (
        f'<TEI xmlns="{TEI_NS}"><teiHeader><fileDesc><titleStmt><title>t</title></titleStmt></fileDesc></teiHeader>'
        f'<text><body><div type="edition" {lang}><ab>{edition}</ab></div></body></text></TEI>'
    ).encode()


@pytest.mark.parametrize(
    ("edition", "expected"),
    [
        ('<supplied reason="lost">αβ</supplied>γ', [Supplied("αβ"), Text("γ")]),
        ('<supplied reason="lost" cert="low">αβ</supplied>γ', [Supplied("αβ"), Text("γ")]),
        ('α<supplied reason="omitted">β</supplied>γ', [Text("α"), Editorial("β"), Text("γ")]),
        ('α<supplied reason="undefined">β</supplied>γ', [Text("αγ")]),
        ("<expan><abbr>στρ</abbr><ex>ατηγῷ</ex></expan> δ", [Text("στρ δ")]),
        ("<choice><reg>χάριν</reg><orig>χάρειν</orig></choice>", [Text("χάρειν")]),
        ("<choice><corr>ἔτους</corr><sic>ἔτυς</sic></choice>", [Text("ἔτυς")]),
        ('α<del rend="erasure">β</del>γ', [Text("α"), Editorial("β", "deleted"), Text("γ")]),
        (
            'α<add place="above">β</add>γ <surplus>δ</surplus>',
            [Text("α"), Text("β", mark="above"), Text("γ "), Text("δ", mark="surplus")],
        ),
        ('α<add place="below">β</add><add>γ</add>', [Text("α"), Text("β", mark="below"), Text("γ")]),
        ("<app><lem>α</lem><rdg>β</rdg></app>γ", [Text("αγ")]),
        ('<num value="3">γ</num> <hi rend="acute">ά</hi>', [Text("γ ά")]),
        (
            'α<g type="stauros"/>β<note>editor</note>γ<space quantity="2" unit="character"/>δ',
            [Text("αβγ"), Vacat(2), Text("δ")],
        ),
        ('α<lb n="2" type="inWord"/>β', [Text("α"), LineBreak(True), Text("β")]),
        ('α<lb n="2"/>β<lb n="3" break="no"/>γ', [Text("α"), LineBreak(False), Text("β"), LineBreak(True), Text("γ")]),
        ('αβ\n   <lb n="2" break="no"/>γ', [Text("αβ"), LineBreak(True), Text("γ")]),
        ('<unclear>α</unclear>β<milestone unit="block"/><handShift new="m2"/>', [Text("α", uncertain=True), Text("β")]),
    ],
)
def test_epidoc_element_mapping(tmp_path, edition, expected):
    (tmp_path / "doc.xml").write_bytes(_tei(edition))
    doc = parse_epidoc_file((tmp_path / "doc.xml").read_bytes(), str(tmp_path / "doc.xml"), "inscription")
    assert doc.segments == expected
    assert doc.id == "doc"


def test_epidoc_keeps_only_greek_textparts(tmp_path):
    body = (
        '<div type="textpart" xml:lang="la"><ab>latina</ab></div>'
        '<div type="textpart" xml:lang="grc"><ab>ἑλληνική</ab></div>'
    )
    (tmp_path / "bi.xml").write_bytes(_tei(body, lang=""))
    assert parse_epidoc_file((tmp_path / "bi.xml").read_bytes(), "bi.xml", "inscription").segments == [Text("ἑλληνική")]


def test_epidoc_skips_non_greek_edition(tmp_path):
    (tmp_path / "heb.xml").write_bytes(_tei("שלום", lang='xml:lang="heb"'))
    rows = list(parse_corpus_rows(CorpusSpec("inscription", tmp_path), workers=1, skips=SkipLog()))
    assert [r[:3] for r in rows] == [(str(tmp_path / "heb.xml"), None, "no Greek edition")]


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def test_epidoc_corrupt_member_in_archive_is_skipped_and_reported(tmp_path):
    archive = tmp_path / "corpus.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        _add(tar, "corpus/a.xml", (FIXTURES / "iAph150279.xml").read_bytes())
        _add(tar, "corpus/broken.xml", b"<TEI><text><div type='edition'>")
        _add(tar, "corpus/b.xml", (FIXTURES / "o.claud.1.150.xml").read_bytes())
        _add(tar, "corpus/readme.txt", b"not xml, not read")
    rows = list(parse_corpus_rows(CorpusSpec("inscription", archive), workers=1, skips=SkipLog()))
    assert [row["id"] for _, row, _, _ in rows if row] == ["iAph150279", "o.claud.1.150"]
    skipped = [(name, reason) for name, row, reason, _ in rows if row is None]
    assert len(skipped) == 1 and skipped[0][0] == "corpus.tar.xz:corpus/broken.xml"
    assert skipped[0][1].startswith("not well-formed XML")


def test_epidoc_machine_readings_read_back_as_lacunae():
    from apollo_restore.data.document import Lacuna, Supplied
    from apollo_restore.data.readers.epidoc import parse_epidoc_file

    xml = b"""<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" xml:lang="grc">
    <ab>\xce\xba\xce\xb1\xce\xb9 <supplied reason="lost" resp="#apollo-restore"
    cert="low">\xcf\x84\xce\xbf\xcf\x85</supplied>
    <supplied reason="lost">\xce\xb8\xce\xb5\xce\xbf\xcf\x85</supplied></ab></div></body></text></TEI>"""
    doc = parse_epidoc_file(xml, "machine.xml", "user")
    assert Lacuna(3) in doc.segments
    assert [s.text for s in doc.segments if isinstance(s, Supplied)] == ["θεου"]
