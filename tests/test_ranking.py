"""The near-tie ranking comparison the model tests use (:mod:`tests.ranking`)."""

from __future__ import annotations

import pytest

from .ranking import assert_same_ranking, tie_blocks

EXPECTED = [("a", 0.0), ("b", -1.0), ("c", -2.0)]


def test_tie_blocks_chain_near_ties():
    assert tie_blocks([0, -0.00005, -1, -1.00001, -1.00003, -2]) == [(0, 2), (2, 5), (5, 6)]


def test_near_ties_may_swap_and_the_last_reading_may_be_another_tied_one():
    assert_same_ranking([("b", 0.0), ("a", -0.00004), ("c", -1.0)], [("a", 0.0), ("b", -0.00005), ("c", -1.0)])
    assert_same_ranking([("a", 0.0), ("b", -1.0), ("d", -2.00001)], EXPECTED)


@pytest.mark.parametrize(
    "found",
    [
        [("b", 0.0), ("a", -1.0), ("c", -2.0)],  # a clear order swapped
        [("a", 0.0), ("b", -1.1), ("c", -2.0)],  # a score off
        [("a", 0.0), ("b", -1.0)],  # one missing
        [("a", 0.0), ("d", -1.0), ("c", -2.0)],  # another reading in the middle
    ],
)
def test_other_rankings_fail(found):
    with pytest.raises(AssertionError):
        assert_same_ranking(found, EXPECTED)
    with pytest.raises(AssertionError):
        assert_same_ranking([("x", 0.0)], [("a", 0.0)])  # a one-reading list is its own last run: no leeway
