"""The kind of a text (documentary, literary, inscription), read from the training text it shares
runs of letters with, so that its gaps are calibrated as that kind's (issue 64).

    read_kind("ετους δευτερου αντωνινου καισαρος του κυριου", TextIndex.shared())   # 'documentary'

The attribution model places texts among papyri and inscriptions only (it has no literary
class), so the rule is a simple one over the text index instead: every run of :data:`RUN` letters
of the text (one every :data:`STEP`) is looked up, and its occurrences in each source's training
text (documentary papyri ``ddb``, ``inscription``, ``literary``) give that source's likelihood of
the run, ``(count + MU · background) / (letters of the source + MU)``, the background being the
run's rate over all three (Dirichlet smoothing: a source of few letters is not favoured for what
none of them holds). Runs found nowhere say nothing; the kind is the source of highest summed
log-likelihood, ``documentary`` when no run is found. On validation excerpts of 300 letters
(``benchmarks/text_kind.py``): literary 63 of 63, documentary 55 of 59, inscriptions 24 of 31.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from apollo_restore.data.textindex import TextIndex

#: Letters per run looked up.
RUN = 10
#: Letters between the starts of two runs.
STEP = 3
#: Weight of the background rate (letters).
MU = 1e5
#: Occurrences of one run read at most (the rest scaled from them): a formula found 100,000 times is read once.
CAP = 2000
#: The kind of text of each source of the index (DCLP's few papyri are too few to tell anything).
KIND_OF_SOURCE = {"ddb": "documentary", "literary": "literary", "inscription": "inscription"}
DEFAULT_KIND = "documentary"
#: The kind of text of a gap set's sources (DCLP's papyri are literary).
SOURCE_KINDS = KIND_OF_SOURCE | {"dclp": "literary"}


def kind_of_source(source: str) -> str:
    """The kind of text of a gap set's ``source`` (``documentary`` for a source of no known kind)."""
    return SOURCE_KINDS.get(source, DEFAULT_KIND)


def source_letters(index: TextIndex) -> dict[str, int]:
    """Letters of the index's training text of each source of :data:`KIND_OF_SOURCE`."""
    sizes = np.diff(np.append(index._stream_starts, len(index.codes)))
    sources = np.array(index.doc_sources)
    return {source: int(sizes[sources == source].sum()) for source in KIND_OF_SOURCE}


def kind_scores(text: str, index: TextIndex, letters: dict[str, int] | None = None) -> dict[str, float]:
    """Summed log-likelihood (nats) of each kind of text for ``text`` (``norm.v1``, gap markers
    allowed: a run holding one is never found); empty when no run of it is found."""
    letters = letters or source_letters(index)
    total = sum(letters.values())
    sources = np.array(index.doc_sources)
    codes = index.pattern(text)
    scores: Counter[str] = Counter()
    for start in range(0, max(0, len(codes) - RUN + 1), STEP):
        lo, hi = index.sa_range(codes[start : start + RUN])
        if hi == lo:
            continue
        positions = np.asarray(index.sa[lo : min(hi, lo + CAP)], dtype=np.int64)
        scale = (hi - lo) / len(positions)
        found = Counter(sources[index.doc_of(positions)].tolist())
        counts = {source: found.get(source, 0) * scale for source in KIND_OF_SOURCE}
        background = (sum(counts.values()) + 0.5) / total
        for source, kind in KIND_OF_SOURCE.items():
            scores[kind] += math.log((counts[source] + MU * background) / (letters[source] + MU))
    return dict(scores)


def read_kind(text: str, index: TextIndex) -> str:
    """The kind of text ``text`` most likely is (:func:`kind_scores`); ``documentary`` when no run of it is found."""
    scores = kind_scores(text, index)
    return max(scores, key=scores.__getitem__) if scores else DEFAULT_KIND
