"""papyri.info Leiden+'s mark of an editor's doubt (``[αὐτοῦ? τόπου]``, ``[Καισα?]ριανῷ``,
``αὐτοῦ?``): kept as the editor's doubt, read as context, written back; never a lost letter.
Only a run of two or more ``?`` stands for lost letters (Ithaca style), besides Leiden+'s own
``[.?]``, ``.3``, ``lost.?lin``.

The slow test reads every DDB document whose tokens hold a ``?`` as papyri.info's Leiden+ (the
token XML's ``original`` forms, its tags written as Leiden+) and counts the gaps with and without
the doubt marks: the marks add none."""

from __future__ import annotations

import os
import re
import tarfile
from pathlib import Path

import pytest
from lxml import etree

from apollo_restore.data.document import Lacuna, Supplied, Text, render, to_leiden
from apollo_restore.data.readers.leiden import find_gaps, parse_leiden, parse_leiden_with_gaps
from apollo_restore.errors import LeidenError
from apollo_restore.restoration.export import export_checked
from apollo_restore.restoration.request import validate
from apollo_restore.schema.restoration import RestoreRequest

ISSUE = "ἐπὶ τοῦ [αὐτοῦ? τόπου] καὶ [.7] τῆς κώμης"


def test_the_doubt_of_a_supplement_is_no_gap():
    """The issue's text: one gap, the 7 letters; αὐτοῦ is the editor's doubtful supplement."""
    doc, gaps = parse_leiden_with_gaps(ISSUE)
    assert [g.lacuna for g in gaps] == [Lacuna(7)]
    assert Supplied("αὐτοῦ", doubt=True) in doc.segments
    assert Supplied("τόπου") in doc.segments
    request = validate(RestoreRequest(ISSUE, None, None, 5))  # what restore reads
    assert len(request.hints) == 1
    assert render(request.document).text == "επι του αυτου τοπου και ------- της κωμης"  # the context read


@pytest.mark.parametrize(
    ("leiden", "doubtful", "gaps"),
    [
        ("[Καισα?]ριανῷ ἔτους", Supplied("Καισα", doubt=True), 0),
        ("τοῦ [αὐτοῦ]? καὶ [.3]", Supplied("αὐτοῦ", doubt=True), 1),
        ("ἐν τῷ αὐτοῦ? νομῷ", Text("αὐτοῦ", doubt=True), 0),
        ("στρ(ατηγοῦ?) [.2]", Text("ατηγοῦ", expansion=True, doubt=True), 1),
        ("[(ἔτους?)] β", Text("ἔτους", expansion=True, doubt=True), 0),
    ],
)
def test_one_query_mark_is_the_editors_doubt(leiden, doubtful, gaps):
    doc, markers = parse_leiden_with_gaps(leiden)
    assert doubtful in doc.segments
    assert len(markers) == gaps
    assert parse_leiden(to_leiden(doc.segments)).segments == doc.segments  # written back as it came


@pytest.mark.parametrize(
    ("leiden", "lacunae"),
    [
        ("χαι??ν", [Lacuna(2)]),
        ("χαι???ν [.?]", [Lacuna(3), Lacuna(None)]),
        ("τοῦ .? καὶ .3", [Lacuna(None, reason="illegible"), Lacuna(3, reason="illegible")]),
        ("lost.?lin", [Lacuna(None, lines=-1)]),
    ],
)
def test_runs_standing_for_letters_are_gaps(leiden, lacunae):
    assert [g.lacuna for g in find_gaps(leiden)] == lacunae


def test_the_doubt_survives_both_exports():
    """Leiden: the text as it came (the reading in the one gap); EpiDoc: ``cert="low"`` on the
    doubtful supplement, ``<certainty>`` after a doubtful word read, as papyri.info writes them."""
    text = ISSUE + " αὐτοῦ? ὁμοίως"
    leiden = export_checked(text, {1: "ἀγροῦ"}, "tiny")
    assert leiden.startswith("ἐπὶ τοῦ [αὐτοῦ? τόπου] καὶ ⁅ἀγροῦ⁆⁽ᵐ¹⁾ τῆς κώμης αὐτοῦ? ὁμοίως\n")
    epidoc = export_checked(text, {1: "ἀγροῦ"}, "tiny", "epidoc")
    assert '<supplied reason="lost" cert="low">αὐτοῦ</supplied> <supplied reason="lost">τόπου</supplied>' in epidoc
    assert 'αὐτοῦ<certainty match=".." locus="value"/> ὁμοίως' in epidoc
    assert export_checked(text, {}, "tiny") == text


# -- every DDB document -------------------------------------------------------------------

CORPORA = Path(os.environ.get("APOLLO_CORPORA", Path(__file__).resolve().parents[3] / "shared" / "corpora"))
DDB = CORPORA / "ddb-trismegistos-2016.tar.xz"
_TAG = re.compile(r"\|([a-zA-Z_-]+)(?:=([^|]*))?\|")
_QUERY = re.compile(rb'original="[^"]*\?')
#: Leiden+'s own notations holding a '?': a number unknown (lost or illegible letters, lines)
_UNKNOWN_COUNT = re.compile(r"\[(?:ca)?\.\?\]|(?:lost)?\.\?(?:lin)?")


def _leiden_plus(tag: re.Match) -> str:
    """A token XML tag as Leiden+ writes it: ``|gap=5|`` ``[.5]``, ``|gap=unknown|`` ``[.?]``,
    ``|gap=unknown_lines|`` ``lost.?lin``; any other (``|stauros|``, ``|digit=2|``) a symbol ``((…))``."""
    name, value = tag.group(1), tag.group(2) or ""
    if name != "gap":
        return f"(({name}))"
    if value == "unknown_lines":
        return " lost.?lin "
    return f"[.{value}]" if value.isdigit() else "[.?]"


def _token(original: str) -> str:
    """One token's ``original`` as Leiden+: its tags written out, layout marks (``@^inline^``,
    ``*``) dropped, an in-word break ``-`` at a line end. The underdotted ``?̣?̣`` of the token
    XML stand for a numeral's signs, not read (``?̣?̣|digit=1/2|``, ``?̣?̣´``): dropped, as the
    DDB reader drops them (two or more typed by a user are a gap of as many signs)."""
    s = original.replace("&lt;", "<").replace("&gt;", ">")
    s = re.sub(r"@\^[a-z-]*\^|@", "", s).replace("*", "")
    s = re.sub(r"(?:\?\u0323)+", "", s)
    return _TAG.sub(_leiden_plus, s).replace("-", "-\n")


def ddb_as_leiden(content: bytes) -> str:
    """A DDB-TM document's words as one Leiden+ text (a newline where the row changes)."""
    out: list[str] = []
    row = None
    for word in etree.fromstring(content).iter("word"):
        original = word.get("original")
        if original is None:
            continue
        rows = (word.get("row") or "").split("-")
        if out:
            out.append("\n" if row is not None and rows[0] != row else " ")
        row = rows[-1]
        out.append(_token(original))
    return "".join(out)


def without_doubt(text: str) -> str:
    """``text`` with every single ``?`` that is no part of a Leiden+ unknown count taken out
    (``[?]``, a doubt about nothing the papyrus shows, with its brackets)."""
    text = text.replace("[?]", "")
    return re.sub(r"(?<![.?])\?(?!\?)", "", text)


@pytest.mark.slow
def test_no_ddb_document_gains_a_gap_from_a_doubt():
    """Every DDB document holding a ``?`` (11,602 of 85,939; about 3 min): as many gaps with its
    doubt marks as without them, and no gap marker made of a query mark but Leiden+'s own."""
    if not DDB.exists():
        pytest.skip(f"no DDB archive at {DDB} (set APOLLO_CORPORA)")
    docs = unreadable = 0
    wrong: list[tuple[str, int, int]] = []
    from_queries: list[tuple[str, str]] = []
    with tarfile.open(DDB) as archive:
        for member in archive:
            if not member.isfile() or not member.name.endswith(".xml"):
                continue
            content = archive.extractfile(member).read()
            if not _QUERY.search(content):
                continue
            text = ddb_as_leiden(content)
            try:
                bare = len(find_gaps(without_doubt(text)))
            except LeidenError:
                unreadable += 1  # brackets the conversion cannot balance: read by neither
                continue
            gaps = find_gaps(text)
            docs += 1
            if len(gaps) != bare:
                wrong.append((member.name, bare, len(gaps)))
            for g in gaps:
                written = text[g.start : g.end]
                if "?" in written and not _UNKNOWN_COUNT.fullmatch(written):
                    from_queries.append((member.name, written))
    assert docs > 10_000, (docs, unreadable)
    assert unreadable < 0.05 * docs
    assert not wrong, f"{len(wrong)} documents gain gaps from doubt marks: {wrong[:10]}"
    assert not from_queries, from_queries[:10]
