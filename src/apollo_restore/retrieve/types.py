"""Typed, JSON-ready retrieval results: gap parallels and phrase parallels (docs/design.md, *The text index*)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from apollo_restore.hint import Hint


@dataclass
class Snippet:
    """A short piece of a training document around a match.

    Attributes:
        doc: document id.
        text: ``norm.v1`` text of the piece.
        start, end: offsets in ``text`` of the matched (or restored) part, to highlight.
        url: where the document's edition can be read (``None`` where no link can be derived).
    """

    doc: str
    text: str
    start: int
    end: int
    url: str | None = None


@dataclass
class BetweenGroup:
    """One reading found between the anchors in parallel passages.

    Attributes:
        between: the text between the anchors (the first occurrence's spelling, outer
            spaces and ``·`` removed).
        count: occurrences in the index (all spellings equal up to spaces, ``·`` and ς/σ).
        n_docs: distinct documents holding it.
        docs: the first few of those document ids.
        examples: a snippet or two with the reading highlighted.
        display: ``between`` in edition form (accents, breathings, final sigma), each word
            chosen from the whole word it makes with the gap's own context; ``between`` when
            no edition-forms table is given.
        urls: where each of ``docs`` can be read (papyri.info or the corpus's page), ``None``
            where no link can be derived.
        labels: each of ``docs`` as a reader names it (``IOSPE 3.26``:
            :func:`~apollo_restore.retrieve.links.edition_label`).
    """

    between: str
    count: int
    n_docs: int
    docs: list[str]
    examples: list[Snippet] = field(default_factory=list)
    display: str = ""
    urls: list[str | None] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)


@dataclass
class GapParallels:
    """Passages where the gap's left context is followed, shortly after, by its right context
    (or, failing that, where one of them stands next to as many letters as the gap holds).

    Attributes:
        left, right: the anchors used (letters only, σ-folded) — the last letters of the
            prefix and the first letters of the suffix; one is empty when the other anchored
            alone, both when no anchor was long enough.
        anchor: letters in the longer anchor actually used (after backoff).
        hint: the letter-count hint the readings were filtered by.
        groups: readings, most frequent first.
        total: occurrences over all groups (before truncation to the group limit).
        prefix, suffix: the gap's ``norm.v1`` context searched.
        gap: the gap's number in its text, counted from 1 (0: a context given directly).
    """

    left: str
    right: str
    anchor: int
    hint: Hint
    groups: list[BetweenGroup]
    total: int = 0
    prefix: str = ""
    suffix: str = ""
    gap: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable dict (the hint in its interchange form)."""
        return {**asdict(self), "hint": self.hint.to_json()}


@dataclass
class PhraseParallels:
    """Occurrences of a phrase in the index (space- and punctuation-agnostic).

    Attributes:
        phrase: the normalised phrase searched.
        count: occurrences.
        n_docs: distinct documents.
        by_source: occurrences per corpus.
        hits: the first occurrence in each of the first documents, with snippets.
    """

    phrase: str
    count: int
    n_docs: int
    by_source: dict[str, int]
    hits: list[Snippet]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable dict."""
        return asdict(self)
