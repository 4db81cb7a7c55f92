"""Invisible characters never split a gap (issue #24): every format character (Unicode ``Cf``) and
every combining mark on no letter is read as absent inside Leiden markup, and offsets, lines and
columns still point into the text as given."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apollo_restore.data.readers.leiden import find_gaps, parse_leiden
from apollo_restore.data.visible import Visible
from apollo_restore.errors import LeidenError
from apollo_restore.hint import Hint
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.request import validate
from apollo_restore.schema.restoration import Candidate, RestoreRequest
from tests.stubs import FixedReadings

#: The whole class: every format character and every combining mark Unicode (this Python's) knows.
INVISIBLE = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Cf", "Mn", "Mc", "Me")]
MARKUP = ["[.8]", "[ca.8]", "[.5-8]", "[c. 8]", "[- - -]", "[...]", "[.....]", "[.?]", "???", ".3", "lost.?lin"]
TEXT = "ἔτους δευτέρου {} Ἀντωνίνου"


def test_the_class_is_the_one_the_issue_names():
    for ch in "\u200d\u200c\u200b\u200e\u200f\u202e\u2060\ufeff\u00ad\u034f\u0301\u0323":
        assert ch in INVISIBLE


def test_every_invisible_character_inside_a_lacuna_leaves_one_gap():
    """The reproduction, exhaustively: ``[.X8]`` is one 8-letter gap spanning the whole marker."""
    for ch in INVISIBLE:
        text = f"ab [.{ch}8] cd"
        gaps = find_gaps(text)
        assert [(g.start, g.end, g.hint) for g in gaps] == [(3, 8, Hint.exact(8))], f"U+{ord(ch):04X}"


FORMAT = [ch for ch in INVISIBLE if unicodedata.category(ch) == "Cf"]
BARE_MARKUP = [m for m in MARKUP if not any(ch.isalpha() for ch in m)]  # marks here sit on no letter


def insert(markup: str, insertions: list[tuple[int, str]]) -> str:
    for at, ch in insertions:
        at = min(at, len(markup))
        markup = markup[:at] + ch + markup[at:]
    return markup


@given(
    st.one_of(
        st.tuples(
            st.sampled_from(MARKUP), st.lists(st.tuples(st.integers(0, 12), st.sampled_from(FORMAT)), min_size=1)
        ),
        st.tuples(
            st.sampled_from(BARE_MARKUP),
            st.lists(st.tuples(st.integers(0, 12), st.sampled_from(INVISIBLE)), min_size=1),
        ),
    )
)
def test_invisible_characters_anywhere_in_markup_change_nothing(case):
    """Format characters anywhere in any marker, and any invisible character in a marker without
    letters: the same document, the same hint, a span over the same visible marker."""
    markup, insertions = case
    clean, given_ = TEXT.format(markup), TEXT.format(insert(markup, insertions[:4]))
    assert parse_leiden(given_).segments == parse_leiden(clean).segments
    (want,), (got,) = find_gaps(clean), find_gaps(given_)
    assert got.hint == want.hint
    assert Visible.of(given_[got.start : got.end]).text == clean[want.start : want.end]


def test_marks_on_letters_stay_and_format_characters_between_them_go():
    assert Visible.of("α\u200d\u0301β\u0323").text == "α\u0301β\u0323"
    assert Visible.of("κα\u00adί").text == "καί"


def test_offsets_map_back_to_the_text_as_given():
    visible = Visible.of("\ufeff[\u202e.\u200d\u200d8]")
    assert visible.text == "[.8]"
    assert [visible.original(i) for i in range(4)] == [1, 3, 6, 7]


def test_errors_give_the_column_in_the_text_as_given():
    with pytest.raises(LeidenError) as err:
        parse_leiden("α\u200d\u200dβ [.5")
    assert (err.value.position, err.value.line, err.value.column) == (5, 1, 6)


def test_a_request_with_an_invisible_character_in_a_gap_is_one_gap():
    request = validate(RestoreRequest(TEXT.format("[.\u200d8]"), k=5))
    assert request.hints == {0: Hint.exact(8)}


def test_a_direction_override_inside_a_gap_goes_with_the_gap():
    """``[\u202e.8]`` restored printed nested brackets: the marker now spans the override."""

    constant = FixedReadings([Candidate("αβγδεζηθ", 1.0, 0.0, calibrated=True)], name="constant")
    restored = restore_text(constant, TEXT.format("[\u202e.8]"), k=1).restored_leiden
    assert restored == TEXT.format("⁅αβγδεζηθ⁆")  # a machine reading, marked as such
