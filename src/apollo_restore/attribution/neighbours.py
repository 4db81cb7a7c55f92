"""Nearest training documents by shared rare words (TF-IDF over whole words, NumPy only).

    from apollo_restore.attribution.neighbours import Neighbours, build
    arrays = build(texts, places, first, last)     # training side: one entry per training document
    date_votes, place_votes = Neighbours(arrays).votes(text, k=10, bins=68, places=340)

Papyri of one archive share names (a village, a nome, the persons of a family) that a linear
model over a hashed bag averages away; the documents sharing the most of a text's rarest words
keep them. Each training document is a TF-IDF vector of its whole words (at least
:data:`MIN_WORD` letters, no lost letter; weight ``(1 + log count) · log(N / df)``, words in
one document only left out), cut to its :data:`TOP_WORDS` heaviest and scaled to unit length;
the index is inverted (word → documents), stored as flat arrays beside the model's
(``nn.*``) with each document's place class and date bins. A text's similarity to a document is
the dot product of their vectors; its :data:`K` nearest documents vote for their places and
(evenly over the bins of their range) their dates, each by its similarity, and the votes are
mixed into the model's probabilities (:func:`mix`, weights in the model's config, chosen on
validation: see docs/notes/2026-12-01-attribution.md).
"""

from __future__ import annotations

import math
import zlib
from collections import Counter

import numpy as np

from apollo_restore.attribution.features import folded_words
from apollo_restore.data.normalise import GAP_CHAR, UNKNOWN_GAP

#: Shortest word indexed (letters).
MIN_WORD = 3
#: Heaviest words kept per training document.
TOP_WORDS = 40
#: Nearest documents that vote.
K = 10


def word_counts(text: str) -> Counter[int]:
    """CRC-32 of each whole word of a ``norm.v1`` text (see the module docstring) → its count."""
    return Counter(
        zlib.crc32(w.encode())
        for w in folded_words(text)
        if len(w) >= MIN_WORD and GAP_CHAR not in w and UNKNOWN_GAP not in w
    )


def build(texts: list[str], places: list[int], first: list[int], last: list[int]) -> dict[str, np.ndarray]:
    """The inverted index of training documents ``texts`` (document ``d`` is ``texts[d]``), with
    their place classes ``places`` (-1: none) and the first and last date bins their ranges meet
    (``first``, ``last``; -1: undated).

    Returns:
        ``nn.place``, ``nn.first``, ``nn.last`` (``(N,)`` int16: the labels as given),
        ``nn.words`` (sorted word hashes, ``(W,)`` uint32), ``nn.idf`` (``(W,)`` float32),
        ``nn.offsets`` (``(W + 1,)`` int64: word ``w``'s postings are ``[offsets[w], offsets[w+1])``),
        ``nn.docs`` (``(nnz,)`` int32) and ``nn.weights`` (``(nnz,)`` float16).
    """
    counts = [word_counts(t) for t in texts]
    df: Counter[int] = Counter()
    for c in counts:
        df.update(c.keys())
    n = max(1, len(texts))
    idf = {w: math.log(n / k) for w, k in df.items() if k >= 2}
    postings: dict[int, list[tuple[int, float]]] = {}
    for d, c in enumerate(counts):
        items = sorted(((w, (1 + math.log(k)) * idf[w]) for w, k in c.items() if w in idf), key=lambda x: -x[1])
        items = items[:TOP_WORDS]
        norm = math.sqrt(sum(v * v for _, v in items)) or 1.0
        for w, v in items:
            postings.setdefault(w, []).append((d, v / norm))
    words = np.asarray(sorted(postings), np.uint32)
    offsets = np.zeros(len(words) + 1, np.int64)
    offsets[1:] = np.cumsum([len(postings[int(w)]) for w in words])
    flat = [p for w in words for p in postings[int(w)]]
    return {
        "nn.place": np.asarray(places, np.int16),
        "nn.first": np.asarray(first, np.int16),
        "nn.last": np.asarray(last, np.int16),
        "nn.words": words,
        "nn.idf": np.asarray([idf[int(w)] for w in words], np.float32),
        "nn.offsets": offsets,
        "nn.docs": np.asarray([d for d, _ in flat], np.int32),
        "nn.weights": np.asarray([v for _, v in flat], np.float16),
    }


class Neighbours:
    """Queries of an index written by :func:`build`."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.words, self.idf = arrays["nn.words"], arrays["nn.idf"].astype(np.float32)
        self.offsets, self.docs = arrays["nn.offsets"], arrays["nn.docs"]
        self.weights = arrays["nn.weights"].astype(np.float32)
        self.place, self.first, self.last = arrays["nn.place"], arrays["nn.first"], arrays["nn.last"]
        self.documents = len(self.place)

    def nearest(self, text: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most similar training documents of a ``norm.v1`` text: ``(documents (≤ k,)
        int, similarities (≤ k,) float, most similar first)``; empty where no indexed word is shared."""
        counts = word_counts(text)
        if not counts or not len(self.words):
            return np.zeros(0, np.int64), np.zeros(0)
        keys = np.fromiter(counts.keys(), np.uint32, len(counts))
        tf = 1 + np.log(np.fromiter(counts.values(), np.float64, len(counts)))
        at = np.minimum(np.searchsorted(self.words, keys), len(self.words) - 1)
        found = self.words[at] == keys
        at, q = at[found], tf[found] * self.idf[at[found]]
        if not len(at):
            return np.zeros(0, np.int64), np.zeros(0)
        q /= np.linalg.norm(q)
        starts, ends = self.offsets[at], self.offsets[at + 1]
        take = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends)])
        scores = np.bincount(self.docs[take], self.weights[take] * np.repeat(q, ends - starts), self.documents)
        top = np.argpartition(-scores, min(k, len(scores) - 1))[:k] if len(scores) > k else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        top = top[scores[top] > 0]
        return top, scores[top]

    def votes(self, text: str, bins: int, places: int, k: int = K) -> tuple[np.ndarray, np.ndarray]:
        """``(date (bins,), place (places,))``: the ``k`` nearest documents' votes, each summing to 1
        (all zeros where no neighbour has such a label)."""
        date, place = np.zeros(bins), np.zeros(places)
        for d, s in zip(*self.nearest(text, k)):
            if self.place[d] >= 0:
                place[self.place[d]] += s
            if self.first[d] >= 0:
                date[self.first[d] : self.last[d] + 1] += s / (self.last[d] - self.first[d] + 1)
        return date / max(date.sum(), 1e-12), place / max(place.sum(), 1e-12)


def mix(probs: np.ndarray, votes: np.ndarray, weight: float) -> np.ndarray:
    """``(1 - weight) · probs + weight · votes`` row by row, ``probs`` unchanged where a row of
    ``votes`` is all zeros; both ``(..., C)``."""
    has = votes.sum(axis=-1, keepdims=True) > 0
    return np.where(has, (1 - weight) * probs + weight * votes, probs)
