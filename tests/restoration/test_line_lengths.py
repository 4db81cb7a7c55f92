"""Estimating a lost extent from the letters per line of a hand-made text."""

from __future__ import annotations

from apollo_restore.data.readers.leiden import parse_leiden
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.line_lengths import line_estimates
from apollo_restore.schema.restoration import LengthEstimate
from tests.stubs import Scored

# intact lines of 24, 20, 20 and 20 letters; line 3 shows 10 letters and then is lost
TEXT = """1 ἔτους δευτέρου καὶ εἰκοστοῦ
2 Ἀντωνίνου Καίσαρος τοῦ
3 κυρίου Τῦβι [---]
4 ὁμολογῶ πεπρακέναι σοι
5 κάμηλον θήλειαν λευκὴν"""


def test_the_rest_of_a_line_is_what_the_intact_lines_hold_beyond_it():
    estimate = line_estimates(parse_leiden(TEXT).segments)[0]
    assert estimate == LengthEstimate(lo=10, hi=11, lines=4)  # quartiles 20 and 21 letters, minus the 10 shown
    assert estimate.hint == Hint.span(10, 11) and estimate.format() == "≈ 10–11 letters, from line lengths"


def test_a_gap_at_a_lines_start_and_known_gaps_on_its_line():
    text = TEXT.replace("3 κυρίου Τῦβι [---]", "3 [---] ου Τῦβι [.2]")  # 6 letters shown, 2 more known lost
    assert line_estimates(parse_leiden(text).segments) == [LengthEstimate(lo=12, hi=13, lines=4), None]


def test_no_estimate_without_enough_lines_or_with_two_unknown_gaps_on_a_line():
    assert line_estimates(parse_leiden("κυρίου Τῦβι [---] ὁμολογῶ").segments) == [None]  # one line
    two = TEXT.replace("3 κυρίου Τῦβι [---]", "3 [---] κυρίου Τῦβι [---]")
    assert line_estimates(parse_leiden(two).segments) == [None, None]
    full = TEXT.replace("3 κυρίου Τῦβι [---]", "3 κυρίου Τῦβι καὶ εἰκοστοῦ Ἀντωνίνου [---]")
    assert line_estimates(parse_leiden(full).segments) == [None]  # the line is full already


def test_a_restoration_shows_the_estimate_of_a_gap_without_length():
    restorer = Scored({"εἰκοστοῦ καὶ": -1.0})  # 11 letters: within the estimate
    gap = restore_text(restorer, TEXT).gaps[0]
    assert gap.hint == NO_HINT and gap.length_estimate == LengthEstimate(lo=10, hi=11, lines=4, agrees=True)  # shown
    assert gap.label == "no length hint; ≈ 10–11 letters, from line lengths"
    assert restore_text(restorer, TEXT).to_dict()["gaps"][0]["length_estimate"] == {
        "lo": 10, "hi": 11, "lines": 4, "agrees": True,
    }  # fmt: skip
    hinted = restore_text(restorer, TEXT.replace("[---]", "[.10]")).gaps[0]
    assert hinted.length_estimate is None and hinted.label == "10 letters"


def test_an_estimate_that_contradicts_the_first_reading_says_so():
    """Issue 36: "≈ 4–6 letters" must not stand beside a 20-letter first reading without a word."""
    gap = restore_text(Scored({"καὶ": -1.0}), TEXT).gaps[0]
    assert gap.length_estimate.agrees is False
    assert gap.label == (
        "no length hint; line lengths suggest ≈ 10–11 letters, not the first reading's 3: "
        "give 10–11 as a hint to search only those"
    )


def test_the_epidoc_export_never_writes_the_estimate_as_the_editors_extent():
    """Issue 51: the model's line-length estimate is not the editor's measurement."""
    from apollo_restore.restoration.export import export_epidoc

    xml = export_epidoc(TEXT, {}, "test")
    assert '<gap reason="lost" unit="character" extent="unknown"/>' in xml
    assert "atLeast" not in xml and "atMost" not in xml
