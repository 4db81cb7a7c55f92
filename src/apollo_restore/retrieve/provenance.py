"""Was this text in the training data? Training documents that share long runs with a text.

    from apollo_restore.retrieve.provenance import provenance
    found = provenance("… pasted edition …")          # the packaged text index
    for hit in found.documents: print(hit.doc, hit.longest, hit.url)

Every window of ``min_run`` letters of the text (letters only, σ-folded, as the index matches) is
looked up in the suffix array in one vectorised search; occurrences of consecutive windows at the
same offset in the same document join into one shared run. A document is reported when it shares
a run of at least ``min_run`` letters; a restoration that reproduces such a document may be a
memorised edition, and a test text with none is unseen.

The verdict weighs how many documents hold each shared letter, not only how long the runs are: a
letter shared with more than :data:`MAX_HOLDERS` training documents belongs to a formula (the
Trinitarian invocation opening a Byzantine contract, a regnal date), so a document that shares
with the text nothing but such letters is no memorised edition, however long the run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from apollo_restore.data.normalise import normalise
from apollo_restore.data.overlap import MIN_RUN, clean_windows
from apollo_restore.data.textchecks import check_no_machine_reading, read_source
from apollo_restore.data.textindex import S_DASH, TextIndex, sa_ranges
from apollo_restore.errors import Errors, RequestError
from apollo_restore.retrieve.links import edition_label, edition_url
from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS

_MAX_OCCURRENCES = 200  # a window found more often is a formula, not evidence of one document
MEMORISED_SHARE = 0.5  # a document sharing this share of the text's letters holds its edition
#: Most training documents a letter may be shared with and still tell one edition (the edition,
#: a duplicate, a re-edition); a letter more documents hold is a formula's.
MAX_HOLDERS = 3


@dataclass
class SharedDocument:
    """A training document sharing long runs with the text.

    Attributes:
        doc, source, url: the document, its corpus and a link to its edition (or ``None``).
        longest: letters in the longest shared run.
        covered: letters of the text inside some shared run with this document.
        start, end: letter offsets in the text of the longest run.
        snippet: the longest run as it stands in the document (``norm.v1``).
        label: the document as a reader names it (``IOSPE 3.26``: :func:`~apollo_restore.retrieve.links.edition_label`).
        own: of ``covered``, the letters at most :data:`MAX_HOLDERS` training documents share
            (the rest are a formula's).
        holders: training documents sharing letters of this document's longest run with the text.
    """

    doc: str
    source: str
    url: str | None
    longest: int
    covered: int
    start: int
    end: int
    snippet: str
    label: str = ""
    own: int = 0
    holders: int = 1


@dataclass
class Provenance:
    """Result of :func:`provenance`.

    Attributes:
        letters: letters in the text (σ-folded, markers excluded).
        min_run: the run length asked for.
        covered: letters of the text inside a shared run with any document (fraction: ``/ letters``).
        documents: most shared first (longest run, then coverage).
    """

    letters: int
    min_run: int
    covered: int
    documents: list[SharedDocument] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``"unseen"`` (no shared run), ``"edition"`` (one document shares at least
        :data:`MEMORISED_SHARE` of the text's letters, and at least half a run, ``min_run / 2``
        letters, of what it shares is its own: at most :data:`MAX_HOLDERS` documents hold it; its
        edition was in training) or ``"formulaic"`` (runs shared, but no document holds most of
        the text beyond formulas that many documents hold: invocations, dates, greetings, titles)."""
        if not self.documents:
            return "unseen"
        edition = any(d.covered >= MEMORISED_SHARE * self.letters and d.own >= self.min_run / 2 for d in self.documents)
        return "edition" if edition else "formulaic"

    @property
    def summary(self) -> str:
        """The verdict in a sentence, as the CLI and the page print it."""
        if self.verdict == "unseen":
            n, letters = self.min_run, self.letters
            return f"No training document shares {n} letters in a row with this text ({letters} letters)."
        if self.verdict == "edition":
            top = max(self.documents, key=lambda d: (d.own, d.covered))
            share = f"{top.covered} of {self.letters} letters"
            return f"{top.doc} shares {share} with this text: its edition was in the training data (memorised text)."
        top = max(self.documents, key=lambda d: d.covered)
        share = f"{top.covered} of {self.letters} letters"
        if top.holders > MAX_HOLDERS:
            return (
                f"{top.doc} shares {share} with this text, but {top.holders} training documents hold the same run:"
                " formulaic matches (invocations, dates, greetings, titles), not a memorised edition."
            )
        return (
            f"{self.covered} of {self.letters} letters stand in runs shared with training documents, at most {share}"
            f" with one ({top.doc}): formulaic matches (dates, greetings, titles), not a memorised edition."
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable dict, with :attr:`verdict` and :attr:`summary`."""
        return {**asdict(self), "verdict": self.verdict, "summary": self.summary}


def check_query(text: str) -> None:
    """What is refused before any index is opened: an empty text (E300, as every door says) and
    a machine reading ``⁅…⁆`` (E312: the model's letters are not the text's, and would count as shared).

    Raises:
        RequestError: ``E300``, ``E312``.
    """
    if not text.strip():
        raise RequestError("E300")
    check_no_machine_reading(text)


def provenance(text: str, index: TextIndex | None = None, min_run: int = MIN_RUN, limit: int = 20) -> Provenance:
    """Training documents sharing runs of at least ``min_run`` letters with ``text``.

    Args:
        text: any Greek text: Leiden, an EpiDoc document (its edition), Beta Code, read as
            :func:`~apollo_restore.restoration.request.read_source` reads it for every door, then
            normalised with ``norm.v1`` (Leiden brackets dropped, lost letters ``-`` break runs).
        index: the text index (default: the packaged one, built on first use).
        min_run: shortest shared run reported (letters).
        limit: most documents returned.

    Raises:
        ValueError: the text has fewer than ``min_run`` letters (E406).
        RequestError: :func:`check_query`; unreadable EpiDoc (E313), a text out of bounds (E3xx).
    """
    check_query(text)
    leiden, _ = read_source(text, DEFAULT_REQUEST_LIMITS)  # as every door reads it: EpiDoc by its edition
    index = index or TextIndex.shared()
    codes = np.frombuffer(TextIndex.pattern(normalise(leiden)), np.uint8)
    letters = int(np.count_nonzero(codes < S_DASH))
    if len(codes) < min_run:
        raise ValueError(Errors.E406.format(min_run=min_run, letters=letters))
    windows = np.lib.stride_tricks.sliding_window_view(codes, min_run)  # (W, min_run)
    clean = np.flatnonzero(clean_windows(codes, min_run))
    result = Provenance(letters, min_run, 0)
    if not len(clean):
        return result
    lo, hi = sa_ranges(index.codes, index.sa, np.ascontiguousarray(windows[clean]), np.full(len(clean), min_run))
    found = np.flatnonzero((hi > lo) & (hi - lo <= _MAX_OCCURRENCES))
    if not len(found):
        return result
    starts = np.repeat(clean[found], (hi - lo)[found])  # window start in the text, per occurrence
    rows = np.concatenate([np.arange(lo[i], hi[i]) for i in found])
    positions = np.asarray(index.sa[rows], dtype=np.int64)
    diagonal = positions - starts  # equal along one shared run
    order = np.lexsort((starts, diagonal))
    starts, diagonal, positions = starts[order], diagonal[order], positions[order]
    new_run = np.r_[True, (diagonal[1:] != diagonal[:-1]) | (starts[1:] != starts[:-1] + 1)]
    run_id = np.cumsum(new_run) - 1
    run_first = np.flatnonzero(new_run)
    run_start, run_pos = starts[run_first], positions[run_first]
    run_len = np.bincount(run_id) + min_run - 1  # letters (stream codes) per run
    run_doc = index.doc_of(run_pos)
    covered_any = np.zeros(len(codes), dtype=bool)
    by_doc: dict[int, list[int]] = {}
    for r, d in enumerate(run_doc.tolist()):
        by_doc.setdefault(d, []).append(r)
        covered_any[run_start[r] : run_start[r] + run_len[r]] = True
    result.covered = int(covered_any.sum())
    masks = {}
    holders = np.zeros(len(codes), dtype=np.int64)  # training documents sharing each letter of the text
    for d, runs in by_doc.items():
        mask = np.zeros(len(codes), dtype=bool)
        for r in runs:
            mask[run_start[r] : run_start[r] + run_len[r]] = True
        masks[d] = mask
        holders += mask
    shared = []
    for d, runs in by_doc.items():
        mask = masks[d]
        best = max(runs, key=lambda r: run_len[r])
        p, n = int(run_pos[best]), int(run_len[best])
        snippet = index.orig_text(index.orig_pos(p), index.orig_pos(p + n - 1) + 1)
        doc, source, start = index.doc_ids[d], index.doc_sources[d], int(run_start[best])
        shared.append(
            SharedDocument(
                doc,
                source,
                edition_url(doc, source),
                n,
                int(mask.sum()),
                start,
                start + n,
                snippet,
                edition_label(doc, source),
                int((mask & (holders <= MAX_HOLDERS)).sum()),
                int(holders[start : start + n].max()),
            )  # fmt: skip
        )
    shared.sort(key=lambda s: (-s.longest, -s.covered, s.doc))
    result.documents = shared[:limit]
    return result
