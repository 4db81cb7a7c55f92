"""The declared answer (:mod:`apollo_restore.schema.restoration`) built from the driver's work,
with the parts that read the data layer: a gap's label (it counts the first reading's letters
against the line-length estimate) and the restored text in edition form (the readings spliced
into the Leiden text as given).

    gap = gap_result(1, Hint.exact(5), prefix, suffix, candidates, length_estimate=None)
    result = restoration_of(text, [gap], "default", 12.0, restored_text, warnings)
    result.restored_leiden, gap.label
"""

from __future__ import annotations

from typing import Any

from apollo_restore.data.document import Lacuna
from apollo_restore.data.normalise import letter_count
from apollo_restore.data.readers.leiden import GapMarker, find_gaps
from apollo_restore.data.splice import Fill, splice
from apollo_restore.errors import LeidenError
from apollo_restore.hint import Hint
from apollo_restore.schema.restoration import (
    FILL_THRESHOLD,
    LOST_LINES_LABEL,
    Candidate,
    GapResult,
    LengthEstimate,
    Restoration,
)


def gap_result(
    number: int,
    hint: Hint,
    prefix: str,
    suffix: str,
    candidates: list[Candidate],
    pinned: str | None = None,
    span: tuple[int, int] | None = None,
    *,
    length_estimate: LengthEstimate | None = None,
    **rest: Any,
) -> GapResult:
    """The answer for one gap (the fields of :class:`~apollo_restore.schema.restoration.GapResult`),
    its estimate's agreement with the first reading and its :func:`gap_label` computed."""
    if length_estimate is not None:
        agrees = estimate_agrees(length_estimate, hint, candidates, pinned)
        length_estimate = length_estimate.model_copy(update={"agrees": agrees})
    label = gap_label(hint, length_estimate, candidates, rest.get("lost_lines", False))
    return GapResult(
        number=number, hint=hint, prefix=prefix, suffix=suffix, candidates=candidates, pinned=pinned, span=span,
        length_estimate=length_estimate, label=label, **rest,
    )  # fmt: skip


def estimate_agrees(
    estimate: LengthEstimate, hint: Hint, candidates: list[Candidate], pinned: str | None
) -> bool | None:
    """Whether the first reading's letters fall within ``estimate`` (``None``: a given hint, a
    pinned gap or no reading)."""
    if hint.given or not candidates or pinned is not None:
        return None
    return estimate.lo <= letter_count(candidates[0].text) <= estimate.hi


def gap_label(hint: Hint, estimate: LengthEstimate | None, candidates: list[Candidate], lost_lines: bool) -> str:
    """The hint in words: ``7 letters``, ``5–8 letters`` or ``no length hint``, with the
    line-length estimate where there is one (``no length hint; ≈ 11–14 letters, from line
    lengths``); ``lost lines: not restored`` for lost lines."""
    if lost_lines:
        return LOST_LINES_LABEL
    if estimate is not None and not hint.given:
        if estimate.agrees is False:  # never shown beside a reading it contradicts without a word
            count = f"{estimate.lo}" if estimate.lo == estimate.hi else f"{estimate.lo}–{estimate.hi}"
            first = letter_count(candidates[0].text)
            return (
                f"{hint.format()}; line lengths suggest ≈ {count} letters, not the first reading's "
                f"{first}: give {count} as a hint to search only those"
            )
        return f"{hint.format()}; {estimate.format()}"
    return hint.format()


def restoration_of(
    text: str,
    gaps: list[GapResult],
    model: str = "",
    ms: float = 0.0,
    restored_text: str = "",
    warnings: list[str] | None = None,
    **rest: Any,
) -> Restoration:
    """The answer for a text (the fields of :class:`~apollo_restore.schema.restoration.Restoration`),
    its :func:`restored_leiden` computed."""
    threshold = rest.get("fill_threshold", FILL_THRESHOLD)
    leiden = restored_leiden(text, gaps, restored_text, rest.get("pins", {}), threshold)
    return Restoration(
        text=text, gaps=gaps, model=model, ms=ms, restored_text=restored_text,
        warnings=[] if warnings is None else warnings, restored_leiden=leiden, **rest,
    )  # fmt: skip


def restored_leiden(
    text: str, gaps: list[GapResult], restored_text: str, pins: dict[int, str], threshold: float = FILL_THRESHOLD
) -> str:
    """The input text as an edition would print it: each gap replaced by its
    :meth:`~apollo_restore.schema.restoration.GapResult.filling` (a machine reading or a pinned
    one as ``⁅reading⁆``) or left as written where no reading is likely enough, everything else
    byte for byte as given (:func:`~apollo_restore.data.splice.splice`: a machine reading is never
    written inside the editor's ``[ ]``, across line breaks too); the normalised ``restored_text``
    when gap positions are unknown. ``pins``: readings of gaps not asked, by number from 1."""
    if not gaps or any(g.span is None for g in gaps):
        return restored_text
    try:
        markers = find_gaps(text)
    except LeidenError:
        markers = []
    at = {(m.start, m.end): k for k, m in enumerate(markers)}
    if all(g.span in at for g in gaps):  # the asked gaps among all the text's (only)
        fills = {k - 1: Fill(r, machine=True) for k, r in pins.items() if 1 <= k <= len(markers)}
        for gap in gaps:
            if (f := gap.filling(threshold)) is not None:
                fills[at[gap.span]] = Fill(f, machine=True)  # type: ignore[index]
    else:  # spans of another text
        markers = [GapMarker(g.span[0], g.span[1], g.hint, Lacuna(None)) for g in gaps]  # type: ignore[index]
        fills = {k: Fill(f, machine=True) for k, gap in enumerate(gaps) if (f := gap.filling(threshold)) is not None}
    return splice(text, markers, fills)
