"""The extent of a gap of unknown length, estimated from the document's line lengths, as an
editor estimates a lacuna: the intact lines hold about so many letters, the gap's line shows so
many, the rest is lost.

    doc = parse_leiden("αβγδεζηθικ|αβγδεζηθ[---]|αβγδεζηθικλ|αβγδεζηθικ")
    estimate = line_estimates(doc.segments)[0]
    estimate.hint            # Hint(lo=2, hi=3)
    estimate.format()        # '≈ 2–3 letters, from line lengths'

Lines are the runs of segments between :class:`~apollo_restore.data.document.LineBreak`\\ s; a
line is *intact* when it holds no lacuna. The estimate is the interquartile range of the intact
lines' letters (editor supplements count: they stood on the papyrus) minus the letters the gap's
line shows (its other lacunae counted at their given length). No estimate when the text has
fewer than ``min_lines`` intact lines, when the gap shares its line with another lacuna of
unknown extent, or when the visible letters already fill a typical line.
"""

from __future__ import annotations

import numpy as np

from apollo_restore.data.document import Editorial, Lacuna, LineBreak, Segment, Supplied, Text, Vacat
from apollo_restore.data.normalise import letter_count, normalise
from apollo_restore.schema.restoration import LengthEstimate

#: Intact lines needed for an estimate.
MIN_LINES = 3


def lines_of(segments: list[Segment]) -> list[list[Segment]]:
    """Segments split at line breaks (empty lines dropped; a blank space or the editor's
    additions and the scribe's deletions, never read, make no line)."""
    lines: list[list[Segment]] = [[]]
    for seg in segments:
        if isinstance(seg, LineBreak):
            lines.append([])
        elif not isinstance(seg, (Editorial, Vacat)):
            lines[-1].append(seg)
    return [line for line in lines if line]


def _letters(seg: Segment) -> int:
    """Letters a text or supplement shows (normalised, as hints count them); an expansion's
    letters were never on the line."""
    written = isinstance(seg, Supplied) or (isinstance(seg, Text) and not seg.expansion)
    return letter_count(normalise(seg.text)) if written else 0


def line_estimates(segments: list[Segment], min_lines: int = MIN_LINES) -> list[LengthEstimate | None]:
    """For each lacuna of ``segments``, in order, the letters it lost, or ``None`` where the
    layout says nothing (see the module docstring); ``None`` too for a lacuna whose extent is
    given (the estimate is for gaps of unknown length). Time linear in the segments."""
    lines = lines_of(segments)
    intact = [sum(map(_letters, line)) for line in lines if not any(isinstance(seg, Lacuna) for seg in line)]
    if len(intact) < min_lines:
        return [None] * sum(isinstance(seg, Lacuna) for seg in segments)
    q1, q3 = np.percentile(intact, [25, 75])
    out: list[LengthEstimate | None] = []
    for line in lines:
        gaps = [seg for seg in line if isinstance(seg, Lacuna)]
        shown = sum(map(_letters, line)) + sum(gap.length or 0 for gap in gaps)
        hi = int(round(q3 - shown))
        alone = sum(gap.length is None for gap in gaps) == 1
        for gap in gaps:
            known = gap.length is not None
            lo = max(1, int(round(q1 - shown)))
            out.append(None if known or not alone or hi < 1 else LengthEstimate(lo=lo, hi=hi, lines=len(intact)))
    return out
