"""Comparing two ranked reading lists without depending on bit-exact floating point.

Two runs of one search on two machines (AVX2 or AVX-512 kernels), with other thread counts or
other batch shapes, add in other orders: scores differ in the last bits, and two readings whose
scores are that close (a *near tie*) may come in either order — or, at the end of a list, either
may be the one kept. A test comparing such runs asserts with :func:`assert_same_ranking`:

    assert_same_ranking([(c.text, c.log_score) for c in batched], [(c.text, c.log_score) for c in alone])
"""

from __future__ import annotations

from collections.abc import Sequence

#: Scores closer than this (log-probability, or probability) are a near tie: either order is right.
NEAR_TIE = 1e-4

Ranked = Sequence[tuple[str, float]]


def tie_blocks(scores: Sequence[float], tol: float = NEAR_TIE) -> list[tuple[int, int]]:
    """``[start, end)`` runs of a best-first score list, each chained by near ties (neighbours
    closer than ``tol``)."""
    blocks, start = [], 0
    for i in range(1, len(scores) + 1):
        if i == len(scores) or abs(scores[i - 1] - scores[i]) >= tol:
            blocks.append((start, i))
            start = i
    return blocks


def assert_same_ranking(found: Ranked, expected: Ranked, tol: float = NEAR_TIE) -> None:
    """``found`` ranks as ``expected`` does, up to near ties.

    Asserts: the same length; scores equal position by position within ``tol``; the same
    readings within each run of near ties (:func:`tie_blocks` of ``expected``), in any order;
    except the last run, when it ends the list, whose readings may differ (a reading just beyond
    the list's end tied with them), their scores still within ``tol``.
    """
    assert len(found) == len(expected), (found, expected)
    for (text, score), (want_text, want) in zip(found, expected):
        assert abs(score - want) < tol, f"{text} {score} vs {want_text} {want}: {found} != {expected}"
    blocks = tie_blocks([score for _, score in expected], tol)
    for start, end in blocks:
        same = {t for t, _ in found[start:end]} == {t for t, _ in expected[start:end]}
        # the last run (not the whole list) may hold a reading tied with one just beyond the end
        last = end == len(expected) and start > 0
        assert same or last, f"readings {start + 1}–{end} differ: {found} != {expected}"
