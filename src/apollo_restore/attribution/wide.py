"""The wide place model: a linear model over the whole character n-gram vocabulary (NumPy only).

    from apollo_restore.attribution.wide import WidePlaces, grams
    head = WidePlaces(arrays)                 # the folder's ``wide.*`` arrays
    scores = head.scores("ετους ιβ …", 340)   # (P,) one score per place class

Each word of a ``norm.v1`` text (σ for ς, anything but letters separating words) is framed by
spaces and cut into its character n-grams of 1 to :data:`MAX_N` letters, as scikit-learn's
``char_wb`` analyser cuts them (:func:`grams`; an n-gram holding a lost letter ``-`` or a gap
``…`` is left out). A text's vector is the n-grams' sublinear term frequency ``1 + log(count)``
times their IDF, scaled to unit length (L2), over the vocabulary of n-grams found in at least two
training documents. A place's score is the vector's dot product with its column of the weights
plus its bias: scikit-learn's one-vs-rest ``decision_function``, fitted by
:func:`~apollo_restore.attribution.train_wide.fit_wide` (a place with few training documents has
no column: ``-inf``). The folder stores the vocabulary as sorted UTF-8 n-grams joined by newlines
(``wide.vocab``, uint8), ``wide.idf`` ``(V,)`` float16, the weights ``wide.weight`` ``(V, C)``
int8 with a scale per column ``wide.scale`` ``(C,)`` float32, ``wide.bias`` ``(C,)`` float32 and
the place class of each column ``wide.classes`` ``(C,)`` int16.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from apollo_restore.attribution.features import _words_of
from apollo_restore.data.normalise import GAP_CHAR, UNKNOWN_GAP

#: Longest character n-gram (letters, the framing spaces counted).
MAX_N = 5


def grams(text: str) -> list[str]:
    """The character n-grams (1 … :data:`MAX_N`) of each space-framed word of ``text``, in
    scikit-learn's ``char_wb`` order (a word shorter than ``n`` gives itself once), those holding a
    lost letter or gap left out."""
    out: list[str] = []
    for word in _words_of(text):
        w = f" {word} "
        size = len(w)
        for n in range(1, MAX_N + 1):
            out.extend(w[i : i + n] for i in range(max(1, size - n + 1)))
            if size <= n:
                break
    return [g for g in out if GAP_CHAR not in g and UNKNOWN_GAP not in g]


def quantise_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(int8 (V, P), float32 scale (P,))`` of a float weight matrix: each column scaled so that
    its largest magnitude is 127."""
    top = np.abs(weight).max(axis=0)
    scale = np.where(top > 0, top / 127, 1.0).astype(np.float32)
    return np.clip(np.round(weight / scale), -127, 127).astype(np.int8), scale


class WidePlaces:
    """The ``wide.*`` arrays of an attribution folder (see the module docstring)."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        vocab = arrays["wide.vocab"].tobytes().decode("utf-8").split("\n")
        self.column = {g: i for i, g in enumerate(vocab)}
        self.idf = arrays["wide.idf"].astype(np.float32)
        self.weight, self.scale = arrays["wide.weight"], arrays["wide.scale"].astype(np.float32)
        self.bias = arrays["wide.bias"].astype(np.float32)
        self.classes = arrays["wide.classes"].astype(np.int64)  # the place class of each column

    def vector(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """``(columns (m,) int64, values (m,) float32)``: the text's unit TF-IDF vector (empty
        where it shares no n-gram with the vocabulary)."""
        counts = Counter(grams(text))
        found = [(self.column[g], c) for g, c in counts.items() if g in self.column]
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        cols = np.fromiter((c for c, _ in found), np.int64, len(found))
        values = (1 + np.log(np.fromiter((n for _, n in found), np.float32, len(found)))) * self.idf[cols]
        return cols, values / np.linalg.norm(values)

    def columns(self, text: str) -> np.ndarray:
        """``(C,)`` float32: the decision score of each of the model's classes (:attr:`classes`)."""
        cols, values = self.vector(text)
        if not len(cols):
            return self.bias.copy()
        return (values @ self.weight[cols].astype(np.float32)) * self.scale + self.bias

    def scores(self, text: str, places: int) -> np.ndarray:
        """``(places,)`` float32: each place class's score of a ``norm.v1`` text, ``-inf`` for a
        place the model has no column for (its softmax gives it nothing)."""
        out = np.full(places, -np.inf, np.float32)
        out[self.classes] = self.columns(text)
        return out


def softmax(z: np.ndarray, t: float) -> np.ndarray:
    """Row-wise ``softmax(z / t)`` of scores ``z`` ``(..., P)``."""
    z = z / t
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def combine(wide: np.ndarray, bag: np.ndarray, votes: np.ndarray, weights: tuple[float, float],
            t_final: float) -> np.ndarray:  # fmt: skip
    """``softmax(log((1 − a − b)·wide + a·bag + b·votes) / t_final)`` row by row (all ``(..., P)``
    probabilities; where a row of ``votes`` is zeros, its weight goes to the wide model)."""
    a, b = weights
    has = votes.sum(axis=-1, keepdims=True) > 0
    b_eff = np.where(has, b, 0.0)
    mixed = (1 - a - b_eff) * wide + a * bag + b_eff * votes
    return softmax(np.log(mixed + 1e-12), t_final)


def vocabulary_array(vocab: list[str]) -> np.ndarray:
    """``wide.vocab``: the n-grams (none holds a newline) joined by newlines, as uint8."""
    return np.frombuffer("\n".join(vocab).encode("utf-8"), np.uint8).copy()
