"""Whether a text reads like the Greek the model learnt from: a letter trigram model (NumPy only).

    from apollo_restore.attribution.familiar import Letters
    letters = Letters(arrays, config["letters"])     # from the model folder
    letters.bits("ετους κα αδριανου καισαρος")          # mean surprise, bits a letter (about 2.5)
    letters.strange("α" * 49, 49)                      # why it is unlike them ("" where it is not)

The training texts' letters as a trigram model with add-``k`` smoothing (``letters.logp``
``(A, A, A)`` float16: ``log2 p(c | a b)``, ``A`` the 27 letters of ``norm.v1`` with ``ς`` as
``σ`` and a start mark). Spaces are left out (a text written without word division reads as its
edition) and a gap, ``…`` or ``·`` starts a run afresh. A text's **surprise** is the mean of
``−log2 p`` over its letters; it is **strange** where that is above the limit of its length band
(``config["limits"]``: the :data:`QUANTILE` of the validation documents' and crops' surprise in
that band, :func:`fit_letters`): text repeated (``αααα``), letters at random, a language that is
not Greek read as Beta Code. Such a text gets flat places and a date over the whole range
(:meth:`~.model.AttributionModel.predict`, ``W801``).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from apollo_restore.data.normalise import GREEK_LETTERS

#: The letters of the model (``ς`` read as ``σ``); index ``len(LETTERS)`` is the start of a run.
LETTERS = GREEK_LETTERS.replace("ς", "")
_INDEX = {c: i for i, c in enumerate(LETTERS)} | {"ς": LETTERS.index("σ")}
START = len(LETTERS)
SIZE = START + 1
#: Share of the validation texts of a band whose surprise is at most the band's limit.
QUANTILE = 0.999
#: Added to each trigram's count.
SMOOTHING = 0.1
_RUN_BREAK = re.compile("[-…·]+")


def runs(text: str) -> list[np.ndarray]:
    """The letter indices of each run of a ``norm.v1`` text (gaps, ``…`` and ``·`` break runs; spaces and
    what is no letter of :data:`LETTERS` are left out)."""
    out = []
    for piece in _RUN_BREAK.split(text):
        ids = [_INDEX[c] for c in piece if c in _INDEX]
        if ids:
            out.append(np.asarray(ids, np.int64))
    return out


def trigrams(text: str) -> np.ndarray:
    """The flat index ``(a * SIZE + b) * SIZE + c`` of each letter's trigram, two start marks before each run."""
    out = []
    for ids in runs(text):
        padded = np.concatenate([[START, START], ids])
        out.append((padded[:-2] * SIZE + padded[1:-1]) * SIZE + padded[2:])
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def count(texts: list[str]) -> np.ndarray:
    """``(SIZE ** 3,)`` trigram counts of ``texts``."""
    total = np.zeros(SIZE**3, np.float64)
    for text in texts:
        total += np.bincount(trigrams(text), minlength=SIZE**3)
    return total


def log_probs(counts: np.ndarray) -> np.ndarray:
    """``(SIZE, SIZE, SIZE)`` ``log2 p(c | a b)`` of trigram counts, add-:data:`SMOOTHING`."""
    table = counts.reshape(SIZE, SIZE, SIZE) + SMOOTHING
    return np.log2(table / table.sum(axis=2, keepdims=True))


class Letters:
    """The letter model of a model folder: ``letters.logp`` and ``config`` ``{"bands": lower letter
    bounds, "limits": the surprise limit of each band (bits)}``."""

    def __init__(self, arrays: dict[str, np.ndarray], config: dict[str, Any]) -> None:
        self.logp = arrays["letters.logp"].astype(np.float32).reshape(-1)
        self.bands = [int(x) for x in config["bands"]]
        self.limits = [float(x) for x in config["limits"]]

    def bits(self, text: str) -> float:
        """Mean surprise of the letters of ``text`` (bits a letter; 0 for a text of no letters)."""
        found = trigrams(text)
        return float(-self.logp[found].mean()) if len(found) else 0.0

    def limit(self, letters: int) -> float:
        """The surprise limit of a text of ``letters`` letters (its band's)."""
        return self.limits[max(0, int(np.searchsorted(self.bands, letters, side="right")) - 1)]

    def strange(self, text: str, letters: int) -> str:
        """Why ``text`` (``letters`` letters) is unlike the training texts, ``""`` where it is not."""
        bits, limit = self.bits(text), self.limit(letters)
        if bits <= limit:
            return ""
        return f"its letters follow one another as in no text it knows: {bits:.1f} bits a letter, at most {limit:.1f}"


def fit_letters(train: list[str], valid: list[tuple[str, int]], bands: list[int]) -> tuple[dict[str, np.ndarray],
                                                                                        dict[str, Any]]:  # fmt: skip
    """``(arrays, config)`` of the letter model: the trigrams of the ``train`` texts, each band's
    limit the :data:`QUANTILE` of the surprise of the ``valid`` texts ``(text, letters)`` in it
    (the largest of all where a band holds none)."""
    arrays = {"letters.logp": log_probs(count(train)).astype(np.float16)}
    model = Letters(arrays, {"bands": bands, "limits": [0.0] * len(bands)})
    surprise = np.asarray([model.bits(t) for t, _ in valid])
    band = np.searchsorted(bands, [n for _, n in valid], side="right") - 1
    top = float(np.quantile(surprise, QUANTILE)) if len(surprise) else 10.0
    limits = [round(float(np.quantile(surprise[band == b], QUANTILE)) if (band == b).any() else top, 3)
              for b in range(len(bands))]  # fmt: skip
    return arrays, {"bands": list(bands), "limits": limits}
