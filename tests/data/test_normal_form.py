"""One normal form (issue 55): the rendered training text, the packaged text and every door's
contexts are ``norm.v1`` as :func:`~apollo_restore.data.normalise.normalise_with_gaps` writes it,
punctuation runs one ``· `` after the word across segment joins too. The restorer is a recording
stand-in (what the members are given is under test, not the model)."""

from __future__ import annotations

import json
import lzma
import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.cli import restore as cli_restore
from apollo_restore.cli.app import app
from apollo_restore.data.document import Document, Lacuna, LineBreak, Supplied, Text, render
from apollo_restore.data.formats import GapExample
from apollo_restore.data.normalise import normalise_with_gaps, seam
from apollo_restore.data.textindex import PACKED_TEXT, pack_train_text
from apollo_restore.hint import Hint
from apollo_restore.restoration.predict import predict
from apollo_restore.schema.restoration import Candidate

PIECES = ["καὶ", "τοῦ", " ", "  ", "·", " · ", ",", " , , ", ". ", "ς", "Σ", "ἔτους"]
SEGMENTS = st.one_of(
    st.builds(Text, st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("".join)),
    st.builds(Supplied, st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join)),
    st.builds(Lacuna, st.sampled_from([None, 1, 3])),
    st.builds(LineBreak, st.booleans()),
)
# what the normal form never holds: a space before a dot, two dots in one run, two spaces
NOT_NORMAL = re.compile(r" ·|·[ ·]*·|  ")


@given(st.lists(SEGMENTS, min_size=1, max_size=10))
def test_a_rendered_text_is_a_fixed_point_of_the_normaliser(segments):
    text = render(Document("d", "ddb", segments)).text
    assert normalise_with_gaps(text) == text
    assert not NOT_NORMAL.search(text)


def test_a_punctuation_run_across_segments_is_one_dot_after_the_word():
    segments = [Text("καὶ "), Text("·"), LineBreak(), Supplied(" · τοῦ"), Text(" , , "), Text("ἔτους")]
    rendering = render(Document("d", "ddb", segments))
    assert rendering.text == "και· του· ετους"
    assert [span.text for span in rendering.supplied] == ["του"]  # its dot joins the run before it


@pytest.mark.parametrize(
    ("before", "piece", "joined"),
    [("και ", "· του", "και· του"), ("και· ", "· του", "και· του"), ("και· ", " του", "και· του"), ("", "· α", "· α")],
)
def test_seam_joins_two_folded_pieces_as_the_normaliser_writes_one(before, piece, joined):
    drop, rest = seam(before, piece)
    assert before[: len(before) - drop] + rest == joined == normalise_with_gaps(before + piece)


def test_the_packaged_training_text_is_a_fixed_point_of_the_normaliser():
    lines = lzma.decompress(PACKED_TEXT.read_bytes()).decode("utf-8").split("\n")[1:]
    texts = [line.split("\t", 2)[2] for line in lines if line]
    assert not any(NOT_NORMAL.search(text) for text in texts)
    for text in random.Random(55).sample(texts, 300):
        assert normalise_with_gaps(text) == text


class _Recorder:
    """Records the context each gap is given; proposes ``α`` × the hint."""

    name = "recorder"
    batches = False

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def candidates(self, prefix: str, suffix: str, hint: Hint, k: int | None = None) -> list[Candidate]:
        self.seen.append((prefix, suffix))
        return [Candidate("α" * (hint.lo or 1), 0.9, -0.1)]


# punctuation beside line breaks: each line a segment of its own, the run across their join
LEIDEN = "ἔτους δευτέρου\n, καὶ εἰκοστοῦ [.6]του κυρίου ,\n, μηνὸς φαωφι"
BETACODE = "e)/tous deute/rou\n, kai\\ ei)kostou= [.6]tou kuri/ou ,\n, mhno\\s fawfi"
EPIDOC = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" xml:lang="grc"><ab>ἔτους δευτέρου
<lb n="2"/>, καὶ εἰκοστοῦ <gap reason="lost" quantity="6" unit="character"/>του κυρίου ,
<lb n="3"/>, μηνὸς φαωφι</ab></div></body></text></TEI>
"""
CONTEXT = ("ετους δευτερου· και εικοστου ", "του κυριου· μηνος φαωφι")


@pytest.fixture
def recorder(monkeypatch) -> _Recorder:
    stand_in = _Recorder()
    monkeypatch.setattr(cli_restore, "_restorer", lambda model, parallels, **options: stand_in)
    monkeypatch.setattr(apollo_restore, "load_restorer", lambda model=None, threads=None: stand_in)
    return stand_in


def test_every_door_gives_the_members_one_context_for_one_text(tmp_path, recorder):
    edition = tmp_path / "edition.xml"
    edition.write_text(EPIDOC, encoding="utf-8")
    for given_text in (LEIDEN, BETACODE, str(edition)):
        result = CliRunner().invoke(app, ["restore", given_text, "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["gaps"][0]["candidates"][0]["text"] == "αααααα"
    apollo_restore.restore(LEIDEN)
    prefix, suffix = LEIDEN.split("[.6]")
    gap = GapExample("g1", "user", "d", prefix, suffix, "", Hint.exact(6))
    list(predict(recorder, [gap], progress=False))
    assert recorder.seen == [CONTEXT] * 5


def test_a_text_outside_the_normal_form_is_refused_by_the_packer(tmp_path):
    with pytest.raises(ValueError, match=r"^\[E412\] refusing to pack document 'd2'.*'και · του'"):
        pack_train_text(["d1", "d2"], ["ddb", "ddb"], ["και· του", "και · του"], ["train"] * 2, tmp_path / "t.xz")
    assert not (tmp_path / "t.xz").exists()
