"""The length hint value type: constructors, JSON round trip, budget, widening, words."""

from __future__ import annotations

import json

import pytest

from apollo_restore.hint import NO_HINT, Hint


@pytest.mark.parametrize(
    ("value", "hint"),
    [(None, NO_HINT), (7, Hint.exact(7)), ([5, 8], Hint.span(5, 8)), ([3, 3], Hint.exact(3))],
)
def test_hint_from_json(value, hint):
    assert Hint.from_json(value) == hint


@pytest.mark.parametrize("value", [0, -2, True, "7", [5], [8, 5], [0, 3], [1.5, 3], {"lo": 1}])
def test_hint_from_json_rejects(value):
    with pytest.raises(ValueError):
        Hint.from_json(value)


@pytest.mark.parametrize("text", ["null", "7", "[5, 8]", "1"])
def test_hint_json_round_trip_is_byte_identical(text):
    assert json.dumps(Hint.from_json(json.loads(text)).to_json()) == text


def test_hint_bounds_are_checked():
    with pytest.raises(ValueError):
        Hint(3, None)
    with pytest.raises(ValueError):
        Hint(5, 4)
    with pytest.raises(ValueError):
        Hint(-1, 2)
    assert Hint.exact(0).is_exact  # an empty training middle may be hinted [0]


def test_hint_kinds_and_words():
    assert (NO_HINT.kind, Hint.exact(7).kind, Hint.span(5, 8).kind) == ("none", "exact", "range")
    assert NO_HINT.format() == "no length hint"
    assert Hint.exact(1).format() == "1 letter" and Hint.exact(7).format() == "7 letters"
    assert Hint.span(5, 8).format() == "5–8 letters"
    assert not NO_HINT.given and Hint.exact(7).given


def test_hint_widen_contains_distance():
    assert Hint.exact(7).widen(2) == Hint.span(5, 9)
    assert Hint.span(2, 4).widen(3) == Hint.span(1, 7)  # never below one letter
    assert NO_HINT.widen(5) == NO_HINT and Hint.exact(7).widen(0) == Hint.exact(7)
    assert Hint.span(5, 8).contains(5) and not Hint.span(5, 8).contains(9) and NO_HINT.contains(40)
    assert [Hint.span(5, 8).distance(n) for n in (3, 5, 8, 11)] == [2, 0, 0, 3]
    assert NO_HINT.distance(99) == 0


def test_hint_letter_budget():
    assert NO_HINT.letters(25) == (1, 25)
    assert Hint.exact(7).letters(25) == (7, 7)
    assert Hint.span(0, 3).letters(25) == (1, 3)  # a gap holds at least one letter
    assert Hint.exact(40).letters(25) == (40, 40)  # the hint, not the default cap, decides


def test_hint_middle():
    assert (Hint.exact(7).middle, Hint.span(5, 8).middle, NO_HINT.middle) == (7, 6, None)
