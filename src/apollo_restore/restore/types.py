"""Typed, JSON-ready restoration results (one schema for the CLI, the web page and Python)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from apollo_restore.fim.examples import Hint


@dataclass
class Candidate:
    """One proposed reading for a gap.

    Attributes:
        text: the restored letters (``norm.v1``).
        prob: probability normalised over the returned candidates (they sum to at most 1).
        log_score: the model's log-probability of the middle and its end (nats).
        origin: ``"model"`` (beam search), ``"parallel"`` (found in a parallel passage and
            scored by the model), or both.
        citations: ids of documents where the reading stands in a parallel passage.
    """

    text: str
    prob: float
    log_score: float
    origin: list[str] = field(default_factory=lambda: ["model"])
    citations: list[str] = field(default_factory=list)


@dataclass
class GapResult:
    """The candidates for one gap of the input.

    Attributes:
        index: 0-based position of the gap among the input's gaps.
        hint: the length hint used (letters): exact, range ``(lo, hi)`` or ``None``.
        prefix, suffix: the normalised context next to the gap, at most
            :data:`~apollo_restore.restore.context.DEFAULT_WINDOW` characters each side
            (later gaps as ``…``); the model reads the part nearest the gap.
        candidates: best first.
        pinned: the reading the caller fixed for this gap, if any (then no search was run).
        span: ``(start, end)`` character offsets of the gap in the input text, when known.
    """

    index: int
    hint: Hint
    prefix: str
    suffix: str
    candidates: list[Candidate]
    pinned: str | None = None
    span: tuple[int, int] | None = None
    ms: float = 0.0

    @property
    def best(self) -> str:
        """The pinned reading, else the top candidate's text, else ``""``."""
        if self.pinned is not None:
            return self.pinned
        return self.candidates[0].text if self.candidates else ""


@dataclass
class Restoration:
    """All gaps of one input text, filled left to right.

    Attributes:
        text: the input text.
        gaps: one result per gap.
        model: the name of the model.
        ms: milliseconds spent in all.
        restored_text: the normalised text with every gap filled by its best reading.
        warnings: ``W3xx`` messages: why the readings deserve less trust (foreign letters,
            little context); empty when there is nothing to say.
    """

    text: str
    gaps: list[GapResult]
    model: str = ""
    ms: float = 0.0
    restored_text: str = ""
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable dict (tuples become lists)."""
        return asdict(self)
