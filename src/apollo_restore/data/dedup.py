"""Near-duplicate detection across splits by shared 25-letter runs (paper App. C).

A document's *shingles* are the hashes of every run of 25 consecutive letters (spaces and
punctuation ignored, runs never cross a gap marker). A validation or test document is a
near-duplicate of the training data when at least ``threshold`` of its shingles also occur
in some training document. A fixed fraction rather than "any shared run" because formulae
(``αυτοκρατοροσκαισαροσ...``) and quotations recur in thousands of distinct texts.
"""

from __future__ import annotations

import numpy as np

RUN = 25
_MULTIPLIERS = np.random.default_rng(25).integers(1, 2**63 - 1, size=RUN, dtype=np.uint64) | np.uint64(1)


def shingles(text: str, run: int = RUN) -> np.ndarray:
    """Sorted unique 64-bit hashes of every ``run``-letter window of ``text``.

    Args:
        text: normalised text; spaces and ``·`` are skipped, ``-``/``…`` break the runs.

    Returns:
        ``uint64`` array of shape ``(n_unique,)``; empty when no run is long enough.
    """
    out = []
    for chunk in text.replace("…", "-").split("-"):
        letters = chunk.replace(" ", "").replace("·", "")
        if len(letters) < run:
            continue
        codes = np.frombuffer(letters.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        windows = np.lib.stride_tricks.sliding_window_view(codes, run)  # (n - run + 1, run)
        with np.errstate(over="ignore"):
            out.append((windows * _MULTIPLIERS[:run]).sum(axis=1, dtype=np.uint64))
    if not out:
        return np.empty(0, dtype=np.uint64)
    return sorted_unique(np.concatenate(out))


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` for a 1-D array, by sorting: NumPy 2.4's hash-based ``np.unique``
    of ``uint64`` is about 90× slower (it was most of ``prepare``'s time)."""
    ordered = np.sort(values)
    if ordered.size == 0:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def duplicate_fraction(doc_shingles: np.ndarray, reference: np.ndarray) -> float:
    """Fraction of ``doc_shingles`` found in ``reference`` (a sorted unique array)."""
    if doc_shingles.size == 0 or reference.size == 0:
        return 0.0
    idx = np.searchsorted(reference, doc_shingles)
    idx[idx == reference.size] = 0
    return float(np.mean(reference[idx] == doc_shingles))
