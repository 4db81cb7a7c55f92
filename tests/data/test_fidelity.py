"""Issue 51: every editorial distinction kept from reader to writer and back, at every door.

The round trips (:mod:`tests.data.fidelity`): EpiDoc → Leiden → document, Leiden → EpiDoc →
document, EpiDoc → EpiDoc (no reading: the file; readings: the bytes outside them, and each gap
read back as the editor gave it), over every EpiDoc file the project ships and, in the slow
tier, over real editions of ``corpora``. What differs is listed in docs/epidoc.md.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest
from lxml import etree

import apollo_restore
from apollo_restore.data.document import Editorial, Lacuna, LineBreak, Text, Vacat, to_leiden
from apollo_restore.data.readers.leiden import parse_leiden
from apollo_restore.data.readers.typed import as_leiden, read_epidoc
from apollo_restore.errors import CorpusError, RequestError
from tests.data.fidelity import comparable, differences

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPORA = Path(os.environ.get("APOLLO_CORPORA", Path(__file__).resolve().parents[3] / "shared" / "corpora"))
TEI = "{http://www.tei-c.org/ns/1.0}"

ISSUE_TEXT = (
    "1 Ἀπολλωνίῳ στρ(ατηγῷ) Ἀρσι(νοΐτου) Ἡρακλείδου μερίδος\n"
    "2 παρὰ [.9] τοῦ Ἡρακλείδου .3 ⟦τῶν⟧ {καὶ} \\ἐν/\n"
    "3 ἐπεὶ vac. ἐν τῷ ἐνεστῶτι ἔτει <τῶν> κυρίων\n"
    "4 ἡμῶν αὐτοκρατόρων [ca.10] ἐγεώργησα\n"
    "5 [- - -]\n"
    "lost.2lin\n"
    "6 (ἔτους) ιβ Τῦβι ιβ. vac."
)


def _epidoc_fixtures() -> list[Path]:
    """Every EpiDoc file the project ships (the DDB fixtures are the token XML of DDB-TM)."""
    return sorted(p for p in FIXTURES.rglob("*.xml") if "ddb" not in p.relative_to(FIXTURES).parts)


def test_the_issue_text_goes_out_as_epidoc_with_every_distinction():
    xml = apollo_restore.export(ISSUE_TEXT, format="epidoc")
    for written in (
        "<expan><abbr>στρ</abbr><ex>ατηγῷ</ex></expan>",
        "<expan><ex>ἔτους</ex></expan>",
        '<gap reason="lost" unit="character" quantity="9"/>',
        '<gap reason="illegible" unit="character" quantity="3"/>',
        '<del rend="erasure">τῶν</del>',
        "<surplus>καὶ</surplus>",
        '<add place="above">ἐν</add>',
        'ἐπεὶ <space unit="character" extent="unknown"/>',
        '<supplied reason="omitted">τῶν</supplied>',
        '<gap reason="lost" unit="character" quantity="10" precision="low"/>',
        '<lb n="5"/><gap reason="lost" unit="character" extent="unknown"/>',
        '<gap reason="lost" unit="line" quantity="2"/>',
    ):
        assert written in xml, written
    assert "atLeast" not in xml and "atMost" not in xml  # no line-length estimate passed as the editor's
    etree.fromstring(xml.encode())  # well-formed


def test_the_issue_text_comes_back_from_epidoc_as_it_went_in():
    xml = apollo_restore.export(ISSUE_TEXT, format="epidoc")
    assert comparable(parse_leiden(as_leiden(xml)[0]).segments) == comparable(parse_leiden(ISSUE_TEXT).segments)
    segments = parse_leiden(ISSUE_TEXT).segments
    assert Editorial("τῶν", "deleted") in segments and Editorial("τῶν", "omitted") in segments
    assert Vacat() in segments and Text("καὶ", mark="surplus") in segments
    lacunae = [s for s in segments if isinstance(s, Lacuna)]
    assert lacunae == [
        Lacuna(9),
        Lacuna(3, reason="illegible"),
        Lacuna(10, approximate=True),
        Lacuna(None),
        Lacuna(None, lines=2),
    ]


def test_an_export_read_back_gives_the_gaps_as_the_editor_gave_them():
    readings = {1: "Διοδώρου", 2: "αβγ", 3: "ἐν τῷ ἔτει", 4: "καὶ"}
    xml = apollo_restore.export(ISSUE_TEXT, readings, format="epidoc")
    root = etree.fromstring(xml.encode())
    machine = root.findall(f".//{TEI}supplied[@resp='#apollo-restore']")
    assert [(s.text, s.get("reason")) for s in machine] == [
        ("Διοδώρου", "lost"),
        ("αβγ", "illegible"),  # an illegible gap is not turned into a lost one
        ("ἐν τῷ ἔτει", "lost"),
        ("καὶ", "lost"),
    ]
    back = parse_leiden(as_leiden(xml)[0]).segments
    assert [s for s in back if isinstance(s, Lacuna)] == [
        s for s in parse_leiden(ISSUE_TEXT).segments if isinstance(s, Lacuna)
    ]
    again = apollo_restore.export(xml, {1: "Ἀμμωνίου"}, format="epidoc")  # restorable again: a gap, not context
    assert "Ἀμμωνίου" in again and "Διοδώρου" not in again and again.count('resp="#apollo-restore" cert="low"') == 4


@pytest.mark.parametrize("door", ["python", "cli"])
def test_a_gap_of_lost_lines_takes_no_reading(door, tmp_path):
    if door == "python":
        with pytest.raises(RequestError, match=r"^\[E326\] gap 5 is 2 lost lines"):
            apollo_restore.export(ISSUE_TEXT, {5: "ταῦτα"}, format="epidoc")
        return
    from typer.testing import CliRunner

    from apollo_restore.cli.app import app

    (tmp_path / "t.txt").write_text(ISSUE_TEXT, encoding="utf-8")
    result = CliRunner().invoke(app, ["export", str(tmp_path / "t.txt"), "--reading", "5=ταῦτα", "--format", "epidoc"])
    assert result.exit_code == 2 and "E326" in result.output and "Traceback" not in result.output


def test_older_in_word_breaks_join_the_word():
    xml = (FIXTURES / "idp-sample" / "DDB_EpiDoc_XML" / "p.oxy" / "p.oxy.2" / "p.oxy.2.298.xml").read_bytes()
    assert xml.count(b'type="inWord"') > 0
    doc = read_epidoc(xml, "p.oxy.2.298.xml")
    leiden = to_leiden(doc.segments)
    assert "κιθῶ(να)" in leiden and "ἔρρω(σο)" in leiden  # expansions kept, as on every door
    in_word = sum(seg == LineBreak(True) for seg in doc.segments)
    assert in_word >= xml.count(b'type="inWord"') - 1  # (one stands where two breaks meet)


@pytest.mark.parametrize("path", _epidoc_fixtures(), ids=lambda p: p.name)
def test_every_shipped_epidoc_file_survives_every_round_trip(path):
    assert differences(path.read_bytes(), path.name) == []


def _corpus_editions(limit_per_archive: int):
    """``(name, bytes)`` of the first readable Greek editions of each inscription archive, then
    the idp-sample files."""
    for archive in sorted((CORPORA / "inscriptions").glob("*.tar.xz")):
        taken = 0
        with tarfile.open(archive) as tar:
            for member in tar:
                if taken >= limit_per_archive:
                    break
                if member.isfile() and member.name.endswith(".xml"):
                    yield member.name, tar.extractfile(member).read()
                    taken += 1
    for path in sorted((CORPORA / "idp-sample").rglob("*.xml")):
        yield str(path), path.read_bytes()


@pytest.mark.slow
def test_real_editions_survive_every_round_trip():
    if not (CORPORA / "inscriptions").is_dir():
        pytest.skip(f"no corpora at {CORPORA} (set APOLLO_CORPORA)")
    found, editions = [], 0
    for name, content in _corpus_editions(80):
        try:
            found += differences(content, name)
        except (CorpusError, RequestError):  # no Greek edition, or a gap length that is no count
            continue
        editions += 1
    assert editions >= 300
    assert found == []
