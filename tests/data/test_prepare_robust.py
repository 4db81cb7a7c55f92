"""``prepare`` never loses a corpus: broken archives, absurd lacunae, huge members, mixed
formats and escaping links are reported and the rest is processed (issue #13)."""

from __future__ import annotations

import io
import json
import lzma
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apollo_restore.data.document import Lacuna, lacuna_length
from apollo_restore.data.prepare import CorpusSpec, _parse_chunk, parse_xml_file, prepare
from apollo_restore.data.readers.archive import SkipLog, iter_files
from apollo_restore.data.readers.epidoc import parse_epidoc_file
from apollo_restore.errors import CorpusError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EPIDOC = (FIXTURES / "epidoc" / "61067.xml").read_bytes()
DDB = sorted((FIXTURES / "ddb").glob("*.xml"))


def tar_xz(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:xz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_prepare_reports_broken_archives_and_processes_the_rest(tmp_path):
    good = tar_xz(tmp_path / "good.tar.xz", {f"ddb/{p.name}": p.read_bytes() for p in DDB})
    whole = tar_xz(tmp_path / "whole.tar.xz", {f"x/{i}.xml": p.read_bytes() for i, p in enumerate(DDB)}).read_bytes()
    (tmp_path / "truncated.tar.xz").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "empty.tar.xz").write_bytes(b"")
    (tmp_path / "text.tar.xz").write_bytes(b"not an archive at all\n")
    (tmp_path / "no-members.tar.xz").write_bytes(lzma.compress(b"\0" * 1024))
    broken = ["truncated", "empty", "text", "no-members"]
    specs = [CorpusSpec("ddb", tmp_path / f"{name}.tar.xz") for name in broken] + [CorpusSpec("dclp", good)]
    report = prepare(specs, tmp_path / "out", progress=False, workers=1)
    assert report.stats["dclp"]["train"]["documents"] == len(DDB)  # the good corpus, whole
    skipped = {Path(item["path"]).name: item["reason"] for item in read_jsonl(tmp_path / "out" / "skipped.jsonl")}
    for name in broken:
        assert f"{name}.tar.xz" in skipped, skipped
    assert "archive" in skipped["truncated.tar.xz"]


@pytest.mark.parametrize("quantity", ["inf", "-inf", "nan", "1e308", "1e8", "0", "-3", "x"])
def test_absurd_lacuna_sizes_become_unknown_extent_with_a_reason(quantity):
    xml = EPIDOC.replace(
        b'<gap reason="illegible" quantity="4"', f'<gap reason="illegible" quantity="{quantity}"'.encode(), 1
    )
    doc = parse_epidoc_file(xml, "t.xml", "dclp")
    assert all(seg.length is None or seg.length <= 1000 for seg in doc.segments if isinstance(seg, Lacuna))
    assert any("quantity" in note for note in doc.meta["notes"])
    assert lacuna_length(quantity)[0] is None


def test_prepare_keeps_documents_with_absurd_lacunae_and_lists_them(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.xml").write_bytes(EPIDOC.replace(b'quantity="4"', b'quantity="1e308"', 1))
    report = prepare([CorpusSpec("dclp", folder)], tmp_path / "out", progress=False, workers=1)
    assert report.documents == 1
    assert read_jsonl(tmp_path / "out" / "adjusted.jsonl")[0]["reason"].startswith("<gap quantity>")


def test_archive_members_over_the_cap_are_skipped_unread(tmp_path):
    archive = tar_xz(tmp_path / "big.tar.xz", {"a.xml": b"<x/>", "big.xml": b" " * 5000})
    skips = SkipLog()
    names = [name for name, _ in iter_files(archive, (".xml",), skips, max_bytes=1000)]
    assert names == ["big.tar.xz:a.xml"]
    assert "larger than" in skips.items[0].reason
    with pytest.raises(CorpusError):
        list(iter_files(archive, (".xml",), max_bytes=1000))


def test_format_is_detected_per_file(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "0-README.xml").write_bytes(b"<readme>not a corpus file</readme>")
    (folder / DDB[0].name).write_bytes(DDB[0].read_bytes())
    (folder / "epidoc.xml").write_bytes(EPIDOC)
    report = prepare([CorpusSpec("ddb", folder)], tmp_path / "out", progress=False, workers=1)
    assert report.documents == 2 and len(report.skipped) == 1


def test_symlinks_out_of_the_corpus_folder_are_not_followed(tmp_path):
    outside = tmp_path / "secret.xml"
    outside.write_bytes(EPIDOC)
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "inside.xml").write_bytes(DDB[0].read_bytes())
    (folder / "escape.xml").symlink_to(outside)
    (folder / "escape-dir").symlink_to(tmp_path)
    (folder / "alias.xml").symlink_to(folder / "inside.xml")
    skips = SkipLog()
    names = [Path(name).name for name, _ in iter_files(folder, (".xml",), skips)]
    assert names == ["alias.xml", "inside.xml"]
    assert {Path(s.path).name for s in skips.items} == {"escape.xml", "escape-dir"}


def test_a_symlink_loop_is_reported_and_the_rest_prepared(tmp_path):
    """Issue #24: a loop stopped ``prepare`` (RuntimeError, empty output)."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for path in DDB:
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "loop-a.xml").symlink_to(folder / "loop-b.xml")
    (folder / "loop-b.xml").symlink_to(folder / "loop-a.xml")
    (folder / "dangling.xml").symlink_to(folder / "nothing.xml")
    report = prepare([CorpusSpec("ddb", folder)], tmp_path / "out", progress=False, workers=1)
    assert report.documents == len(DDB)
    skipped = {Path(item["path"]).name: item["reason"] for item in read_jsonl(tmp_path / "out" / "skipped.jsonl")}
    assert {"loop-a.xml", "loop-b.xml", "dangling.xml"} <= set(skipped)
    assert "leads nowhere" in skipped["loop-a.xml"]


mutations = st.lists(
    st.one_of(
        st.tuples(st.just("cut"), st.integers(0, len(EPIDOC))),
        st.tuples(st.just("byte"), st.integers(0, len(EPIDOC) - 1), st.binary(min_size=1, max_size=3)),
        st.tuples(
            st.just("attr"),
            st.sampled_from([b"quantity", b"atLeast", b"atMost", b"when", b"notBefore"]),
            st.sampled_from([b"inf", b"1e308", b"-1", b"NaN", b"99999999999999999999", b"&#0;", b"\xff", b"1e8"]),
        ),
    ),
    min_size=1,
    max_size=4,
)


def mutate(content: bytes, steps) -> bytes:
    for step in steps:
        if step[0] == "cut":
            content = content[: step[1]]
        elif step[0] == "byte":
            i = min(step[1], max(len(content) - 1, 0))
            content = content[:i] + step[2] + content[i + 1 :]
        else:
            content = content.replace(b'quantity="4"', step[1] + b'="' + step[2] + b'"', 1)
    return content


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=mutations)
def test_random_epidoc_mutations_never_abort_prepare(steps):
    [(_, row, reason, _)] = _parse_chunk(parse_xml_file, "dclp", [("m.xml", mutate(EPIDOC, steps))])
    assert (row is None) == bool(reason)
    assert row is None or len(row["text"]) < 2 * len(EPIDOC)


def test_prepare_survives_a_folder_of_mutated_files(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, steps in enumerate(
        [
            [("cut", 500)],
            [("attr", b"quantity", b"inf")],
            [("byte", 40, b"\xff\xfe")],
            [("attr", b"when", b"99999999999")],
        ]
    ):
        (folder / f"{i}.xml").write_bytes(mutate(EPIDOC, steps))
    (folder / "ok.xml").write_bytes(EPIDOC)
    report = prepare([CorpusSpec("dclp", folder)], tmp_path / "out", progress=False, workers=1)
    assert report.documents >= 1 and (tmp_path / "out" / "documents.parquet").exists()


def test_prepare_command_fails_when_no_document_is_read(tmp_path):
    from typer.testing import CliRunner

    from apollo_restore.cli.app import app

    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "README.xml").write_bytes(b"<readme/>")
    result = CliRunner().invoke(
        app, ["prepare", "--corpus", f"ddb={tmp_path / 'corpus'}", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 1 and "skipped.jsonl" in result.output
    assert (tmp_path / "out" / "skipped.jsonl").read_text().count("\n") == 1


def test_training_corpora_name_every_corpus_of_the_folder_layout(tmp_path):
    """``training_corpora``: DDB-TM, Tesserae, the DCLP sample, then each inscription archive sorted
    (the layout of docs/training.md, First1KGreek left out)."""
    from apollo_restore.data.prepare import training_corpora

    (tmp_path / "inscriptions").mkdir()
    for name in ("b.tar.xz", "a.tar.xz", "notes.txt"):
        (tmp_path / "inscriptions" / name).write_text("")
    found = [(c.source, c.path.relative_to(tmp_path).as_posix()) for c in training_corpora(tmp_path)]
    assert found == [
        ("ddb", "ddb-trismegistos-2016.tar.xz"),
        ("literary", "tesserae-grc.tar.xz"),
        ("dclp", "idp-sample/DCLP"),
        ("inscription", "inscriptions/a.tar.xz"),
        ("inscription", "inscriptions/b.tar.xz"),
    ]
