"""DDB-TM and Tesserae readers on real fixtures; prepare: splits, dedup, skips, determinism."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from apollo_restore.data.document import Lacuna, LineBreak, Supplied, Text, render
from apollo_restore.data.prepare import CorpusSpec, parse_corpus_rows, prepare
from apollo_restore.data.readers.archive import SkipLog, iter_files
from apollo_restore.data.readers.ddb import parse_file, parse_original
from apollo_restore.data.readers.tesserae import parse_tess
from apollo_restore.data.splits import split_of
from apollo_restore.data.table import load_documents

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize(
    "original,in_supplied,segments,still_open",
    [
        ("Κόμων", False, [Text("Κόμων")], False),
        ("κεχαραγμένο[ν]", False, [Text("κεχαραγμένο"), Supplied("ν")], False),
        ("συ[ν]-πεφωνημένην", False, [Text("συ"), Supplied("ν"), LineBreak(True), Text("πεφωνημένην")], False),
        ("[ἐπι", False, [Supplied("ἐπι")], True),
        ("τηρηταί]", True, [Supplied("τηρηταί")], False),
        ("|gap=5|", False, [Lacuna(5)], False),
        ("|gap=unknown|", False, [Lacuna(None)], False),
        ("χυρι̣ο(…)", False, [Text("χυρ"), Text("ι", True), Text("ο")], False),
        ("(δραχμὰς)", False, [], False),
        ("ὀγδοήκο[ν]-τα|num=780|", False, [Text("ὀγδοήκο"), Supplied("ν"), LineBreak(True), Text("τα")], False),
        ("@^inline^πε-πρακέν\\ε/@⟦πε-πρακεναι⟧*", False, [Text("πε"), LineBreak(True), Text("πρακένε")], False),
        ("&lt;ταῖς&gt;", False, [], False),
        ("{α}", False, [Text("α")], False),
    ],
)
def test_ddb_original_markup(original, in_supplied, segments, still_open):
    assert parse_original(original, in_supplied) == (segments, still_open)


def test_ddb_reads_fixture_archive_folder():
    docs = {d.id: d for d in (parse_file(content, name) for name, content in iter_files(FIXTURES / "ddb", (".xml",)))}
    assert "bgu.1.100" in docs
    doc = docs["bgu.1.100"]
    assert doc.meta["tm"] == "8875" and doc.group == "tm:8875"
    rendering = render(doc)
    assert rendering.text.startswith("κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν· ομολογω")
    assert "δευτεροβολον" in rendering.text  # δ-ευτερόβολον: a line break inside the word
    assert [s.text for s in rendering.supplied][:2] == ["ν", "ν"]
    assert all(rendering.text[s.start : s.end] == s.text for s in rendering.supplied)


def test_ddb_corrupt_member_is_skipped_and_reported(tmp_path):
    archive = tmp_path / "ddb.tar.xz"
    good = (FIXTURES / "ddb" / "bgu.1.100_lemmatized.xml").read_bytes()
    with tarfile.open(archive, "w:xz") as tar:
        for name, data in (
            ("xml/a_lemmatized.xml", good),
            ("xml/broken_lemmatized.xml", b"<file name='x'><word"),
            ("xml/c_lemmatized.xml", good),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    rows = list(parse_corpus_rows(CorpusSpec("ddb", archive), workers=1, skips=SkipLog()))
    assert [row["id"] for _, row, _, _ in rows if row] == ["a", "c"]
    skipped = [(name, reason) for name, row, reason, _ in rows if row is None]
    assert len(skipped) == 1 and "broken" in skipped[0][0] and "well-formed" in skipped[0][1]


def test_tesserae_reads_works_and_groups_parts():
    docs = {
        d.id: d for d in (parse_tess(content, name) for name, content in iter_files(FIXTURES / "tesserae", (".tess",)))
    }
    assert {"plato.epistles.part.10", "plato.epistles.part.12"} <= set(docs)
    assert (
        docs["plato.epistles.part.10"].group == docs["plato.epistles.part.12"].group == "literary:work:plato.epistles"
    )
    text = render(docs["plato.epistles.part.10"]).text
    assert "<" not in text and text == text.strip() and len(text) > 100


def test_splits_are_deterministic_and_proportioned():
    splits = [split_of(f"tm:{i}") for i in range(20000)]
    assert splits == [split_of(f"tm:{i}") for i in range(20000)]
    assert abs(splits.count("train") / 20000 - 0.90) < 0.01
    assert abs(splits.count("validation") / 20000 - 0.05) < 0.01


def test_prepare_writes_deterministic_parquet_and_stats(tmp_path):
    specs = [
        CorpusSpec("ddb", FIXTURES / "ddb"),
        CorpusSpec("literary", FIXTURES / "tesserae"),
        CorpusSpec("dclp", FIXTURES / "epidoc" / "61067.xml"),
    ]
    first = prepare(specs, tmp_path / "a", progress=False, workers=1)
    prepare(specs, tmp_path / "b", progress=False, workers=2)
    a = pq.read_table(tmp_path / "a" / "documents.parquet")
    assert a.equals(pq.read_table(tmp_path / "b" / "documents.parquet"))
    assert first.documents == a.num_rows and set(first.stats) == {"ddb", "dclp", "literary"}
    assert (tmp_path / "a" / "stats.md").read_text().startswith("Prepared")
    assert load_documents(tmp_path / "a", split=None, sources=["ddb"]).num_rows == first.stats["ddb"].get(
        "train", {}
    ).get("documents", 0) + sum(first.stats["ddb"].get(s, {}).get("documents", 0) for s in ("validation", "test"))


def test_prepare_drops_test_copies_of_training_documents(tmp_path):
    from apollo_restore.data.prepare import _drop_near_duplicates

    text = "κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν· ομολογω πεπρακεναι σοι καμηλον θηλειαν"
    rows = [
        {"id": "t", "source": "ddb", "split": "train", "text": text},
        {"id": "copy", "source": "ddb", "split": "test", "text": text + " και"},
        {
            "id": "other",
            "source": "ddb",
            "split": "test",
            "text": "ετους δευτερου και εικοστου αντωνινου καισαρος του κυριου τυβι",
        },
    ]
    kept, dropped = _drop_near_duplicates(rows, 0.5, progress=False)
    assert [r["id"] for r in kept] == ["t", "other"] and dropped == {"ddb/test": 1}


def test_corpus_spec_errors_name_the_problem():
    with pytest.raises(ValueError, match="SOURCE=PATH"):
        CorpusSpec.parse("ddb")
    with pytest.raises(ValueError, match="unknown source 'papyri'"):
        CorpusSpec.parse("papyri=/x")


def test_capitalised_words_count_how_the_editions_write_each_word(tmp_path):
    """Proper names are capitalised in the editions (the attribution's dated names are such words)."""
    from apollo_restore.data.readers.ddb import capitalised_words

    (tmp_path / "p.test.1_lemmatized.xml").write_text(
        '<file name="p.test.1" TM="1"><text><sentence id="1">'
        '<word row="1" regularized="Ἀντωνίνου" original="[Ἀντ]ωνίνου"/>'
        '<word row="1" regularized="διαγνώσει" original="διαγνώσει"/>'
        '<word row="2" regularized="Θωθ" original="Θωθ"/></sentence></text></file>',
        encoding="utf-8",
    )
    counts = capitalised_words(tmp_path)
    assert counts["αντωνινου"] == (2, 2) and counts["θωθ"] == (2, 2) and counts["διαγνωσει"] == (0, 2)
