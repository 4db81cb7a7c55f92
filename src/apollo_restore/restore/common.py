"""The torch-free half of restoration: search settings, reading identity, candidate lists
and the left-to-right filling of a Leiden text's gaps with any gap filler.

Kept apart from :mod:`apollo_restore.restore.engine` (the neural model) so that an n-gram-only
restore never imports torch (about 2 s of a CLI call).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from apollo_restore.data.document import Document, Lacuna, Segment, Supplied, Text, render
from apollo_restore.data.readers.leiden import hint_of, parse_leiden_with_gaps
from apollo_restore.fim.examples import Hint
from apollo_restore.restore.types import Candidate, GapResult, Restoration

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "default"
_ANCHOR = "α"  # a letter rendered beside the context to keep the space that touches the gap
_NON_LETTERS = re.compile(r"[\s·.,;:'\"\-…]+")


@dataclass(frozen=True)
class RestoreConfig:
    """Search settings.

    Attributes:
        k: candidates per gap.
        context_chars: characters of prefix and of suffix given to the model, each side
            (the model was trained on windows of about 500 characters in all).
        max_chars: longest middle searched when there is no hint (characters, spaces included).
        exact_length: force candidates to the hinted letter count (only for exact hints);
            for comparisons with systems that need the gap length.
    """

    k: int = 20
    context_chars: int = 250
    max_chars: int = 40
    exact_length: bool = False


def match_key(text: str) -> str:
    """Space-agnostic identity of a reading: letters only, final sigma folded to σ."""
    return _NON_LETTERS.sub("", text).replace("ς", "σ")


def merge_equivalent(beams: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Merge readings equal up to spaces and punctuation: probabilities add (log-sum-exp),
    the best-scoring spelling is kept. Input and output are ``(text, log_score)``, best first."""
    merged: dict[str, tuple[str, float]] = {}
    for text, score in beams:
        key = match_key(text)
        if key in merged:
            best_text, total = merged[key]
            merged[key] = (best_text, max(total, score) + math.log1p(math.exp(-abs(total - score))))
        else:
            merged[key] = (text, score)
    return sorted(merged.values(), key=lambda item: -item[1])


def context_of(
    segments: list[Segment], index: int, fills: Sequence[str] | Mapping[int, str], later_unknown: bool = True
) -> tuple[str, str]:
    """Normalised prefix and suffix around the ``index``-th lacuna of ``segments``.

    Args:
        fills: readings of earlier lacunae (a list, or gap index → reading); an earlier
            lacuna without one stays a lacuna (``-``×n or ``…``).
        later_unknown: render later lacunae as ``…`` (what the model sees, paper App. F)
            rather than as their own ``-``×n.

    A space touching the gap is kept on its side.

    Raises:
        IndexError: ``segments`` has no lacuna ``index``.
    """
    fills = fills if isinstance(fills, Mapping) else dict(enumerate(fills))
    before: list[Segment] = []
    after: list[Segment] = []
    seen = 0
    for seg in segments:
        if isinstance(seg, Lacuna):
            if seen < index:
                before.append(Supplied(fills[seen]) if seen in fills else seg)
            elif seen > index:
                after.append(Lacuna(None) if later_unknown else seg)
            seen += 1
            continue
        (before if seen <= index else after).append(seg)
    if index >= seen:
        raise IndexError(f"the text has {seen} gaps, not {index + 1}")
    prefix = render(Document("ctx", "user", before + [Text(_ANCHOR)])).text[: -len(_ANCHOR)]
    suffix = render(Document("ctx", "user", [Text(_ANCHOR)] + after)).text[len(_ANCHOR) :]
    return prefix, suffix


def restore_text(
    filler, text: str | Document, hints: dict[int, Hint] | None = None, pins: dict[int, str] | None = None, k: int = 20, name: str = ""
) -> Restoration:
    """Restore every lacuna of a Leiden text, left to right, with any gap filler.

    Args:
        filler: anything with ``candidates(prefix, suffix, hint, k)`` (the neural
            :class:`Restorer`, an ensemble, retrieval-augmented search).
        text: Leiden text (``[.5]``, ``[ca.5]``, ``[.5-8]``, ``[- - -]``, ``???`` ...) or a
            parsed :class:`Document`.
        hints: per-gap hint overrides (0-based gap index → hint); ``None`` as a value
            removes the hint the text gives.
        pins: per-gap readings fixed by the caller; those gaps are not searched.
        k: candidates per gap.
        name: model name recorded in the result.

    Raises:
        LeidenError: the text is not well-formed Leiden.
    """
    started = time.perf_counter()
    if isinstance(text, Document):
        doc, spans = text, []
    else:
        doc, markers = parse_leiden_with_gaps(text)
        spans = [(m.start, m.end) for m in markers]
    lacunae = [s for s in doc.segments if isinstance(s, Lacuna)]
    hints, pins = hints or {}, pins or {}
    fills: list[str] = []
    gaps: list[GapResult] = []
    for i, lacuna in enumerate(lacunae):
        gap_started = time.perf_counter()
        hint = hints[i] if i in hints else hint_of(lacuna)
        prefix, suffix = context_of(doc.segments, i, fills)
        pinned = pins.get(i)
        cands = [] if pinned is not None else filler.candidates(prefix, suffix, hint, k)
        gap = GapResult(i, hint, prefix, suffix, cands, pinned, spans[i] if i < len(spans) else None)
        gap.ms = round((time.perf_counter() - gap_started) * 1000, 1)
        gaps.append(gap)
        fills.append(gap.best)
    source = text if isinstance(text, str) else doc.id
    return Restoration(source, gaps, name, round((time.perf_counter() - started) * 1000, 1))


def to_candidates(readings: list[tuple[str, float]]) -> list[Candidate]:
    """``(text, log_score)`` pairs, best first → candidates with probabilities normalised
    over the list."""
    if not readings:
        return []
    top = readings[0][1]
    weights = [math.exp(score - top) for _, score in readings]
    total = sum(weights)
    return [Candidate(text, w / total, score) for (text, score), w in zip(readings, weights)]
