"""Hashed character and word n-grams of a ``norm.v1`` text, in NumPy (training and prediction alike).

    from apollo_restore.attribution.features import featurise
    ids, weights = featurise("ετους ιβ αυτοκρατορος καισαρος", buckets=2**18)

Each character n-gram (:data:`CHAR_ORDERS`, spaces included, word edges marked by a space) and
each word and pair of words is hashed into one of ``buckets`` rows; an n-gram holding a lost
letter (``-``) or an unknown gap (``…``) is left out. The weight of a row is ``log(1 + count)``,
the vector scaled to unit length (L2), so that a short text and a long one weigh alike; how much a
short text can say is the calibration's business (per length band, :mod:`.model`). The hash is
a fixed polynomial over the letters' codes: the same text gives the same rows on every machine.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from apollo_restore.data.normalise import GAP_CHAR, GREEK_LETTERS, UNKNOWN_GAP

#: The version of the n-grams and their hashing, recorded in a folder (``features``) and checked
#: when it is loaded: any change to what :func:`featurise` gives for a text must change it.
FEATURES = "apollo_restore attribution.ngrams.v1"
#: Character n-gram lengths hashed.
CHAR_ORDERS = (2, 3, 4, 5)
_LETTERS = GREEK_LETTERS.replace("ς", "")  # ς is σ here: one code for both
_SPACE, _GAP = 1, 255
_OTHER = re.compile(f"[^{_LETTERS}ς{re.escape(GAP_CHAR)}{re.escape(UNKNOWN_GAP)} ]+")
_TO_CODES = str.maketrans(
    {ch: chr(i + 2) for i, ch in enumerate(_LETTERS)}
    | {"ς": chr(_LETTERS.index("σ") + 2), " ": chr(_SPACE), GAP_CHAR: chr(_GAP), UNKNOWN_GAP: chr(_GAP)}
)
_MULT = np.uint64(1_000_003)
_WORD_SALT, _PAIR_SALT = 0x9E3779B9, 0xC2B2AE3D


def folded_words(text: str) -> list[str]:
    """The words of ``text`` (σ for ς; anything but letters, ``-`` and ``…`` separates words)."""
    return _OTHER.sub(" ", text.replace("ς", "σ")).split()


def encode(text: str) -> np.ndarray:
    """Codes of ``text``: letters 2…, space 1, a lost letter or gap 255; anything else (``·``,
    digits) a space. Runs of spaces are one, and the text is framed by a space. Shape ``(n,)`` uint8."""
    framed = " " + " ".join(folded_words(text)) + " "
    return np.frombuffer(framed.translate(_TO_CODES).encode("latin-1"), np.uint8)


def _grams(codes: np.ndarray) -> np.ndarray:
    """Hashes (uint64) of the n-grams of ``codes`` of every order in :data:`CHAR_ORDERS` without a gap code."""
    c = codes.astype(np.uint64)
    gaps = np.concatenate([[0], np.cumsum(codes == _GAP)])
    out = []
    h = c.copy()
    with np.errstate(over="ignore"):
        for n in range(2, max(CHAR_ORDERS) + 1):
            if len(c) < n:
                break
            h = h[:-1] * _MULT + c[n - 1 :]  # h[i]: the n letters from i
            if n in CHAR_ORDERS:
                clean = gaps[n:] - gaps[: len(gaps) - n] == 0
                out.append(h[clean] * np.uint64(2 * n + 1))
    return np.concatenate(out) if out else np.zeros(0, np.uint64)


def _words(text: str) -> np.ndarray:
    """Hashes of the words and of adjacent word pairs (a word with a lost letter is left out,
    and the pairs it is in)."""
    words = folded_words(text)
    whole = [w if GAP_CHAR not in w and UNKNOWN_GAP not in w else "" for w in words]
    hashes = [zlib.crc32(w.encode(), _WORD_SALT) for w in whole if w]
    hashes += [zlib.crc32(f"{a} {b}".encode(), _PAIR_SALT) for a, b in zip(whole[:-1], whole[1:]) if a and b]
    return np.asarray(hashes, np.uint64) << np.uint64(20)


def featurise(text: str, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and weights of ``text`` (``norm.v1``, ``-`` per lost letter).

    Returns:
        ``(ids, weights)``: unique bucket rows (int64, shape ``(m,)``) and their weights
        (float32, ``(m,)``, unit L2 norm; both empty for a text without a whole n-gram).
    """
    hashes = np.concatenate([_grams(encode(text)), _words(text)])
    if not len(hashes):
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    with np.errstate(over="ignore"):
        mixed = (hashes ^ (hashes >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(32)
    ids, counts = np.unique((mixed % np.uint64(buckets)).astype(np.int64), return_counts=True)
    weights = np.log1p(counts).astype(np.float32)
    weights /= np.linalg.norm(weights)
    return ids, weights
