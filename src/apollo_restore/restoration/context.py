"""The normalised context around each gap of a parsed text, in time linear in the gaps.

    contexts = GapContexts(doc.segments)              # windows of DEFAULT_WINDOW characters
    prefix, suffix = contexts.context(0, fills=[])    # gap 0; later gaps rendered as "…"

A gap's context is rendered from the segments next to it only: each side walks away from the
gap until it holds enough characters for the window (doubling its budget when the renderer
drops letters, e.g. of another script), so building the contexts of all ``g`` gaps of a text
costs ``O(g · window)``, not ``O(g · length)``. Within the window the result equals the
rendering of the whole text (:func:`context_of` with ``window=None``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from apollo_restore.data.document import Document, Lacuna, Segment, Supplied, Text, render

#: Characters of context kept each side of a gap (the model reads 250; parallels and display more).
DEFAULT_WINDOW = 1000
_ANCHOR = "α"  # a letter rendered beside the context to keep the space that touches the gap
_MARGIN = 4  # characters rendered beyond the window, so that effects of the cut stay outside it

Fills = Sequence[str] | Mapping[int, str]


def context_of(segments: list[Segment], index: int, fills: Fills, later_unknown: bool = True) -> tuple[str, str]:
    """Normalised prefix and suffix around the ``index``-th lacuna of ``segments``, whole.

    Args:
        fills: readings of earlier lacunae (a list, or gap index → reading); an earlier
            lacuna without one stays a lacuna (``-``×n or ``…``).
        later_unknown: render later lacunae as ``…`` (what the model sees, paper App. F)
            rather than as their own ``-``×n.

    A space touching the gap is kept on its side.

    Raises:
        IndexError: ``segments`` has no lacuna ``index``.
    """
    return GapContexts(segments, window=None).context(index, fills, later_unknown)


def _fill(fills: Fills, gap: int) -> str | None:
    if isinstance(fills, Mapping):
        return fills.get(gap)
    return fills[gap] if gap < len(fills) else None


def _size(seg: Segment) -> int:
    """Characters a segment renders to, roughly (at least 1, so that every walk advances)."""
    if isinstance(seg, (Text, Supplied)):
        return max(1, len(seg.text))
    if isinstance(seg, Lacuna):
        return seg.length or 1
    return 1


def _cut(seg: Segment, chars: int, keep_end: bool) -> Segment:
    """A text or supplement shortened to ``chars`` characters (at least one) at the end
    (``keep_end``) or the start; other segments unchanged."""
    if not isinstance(seg, (Text, Supplied)):
        return seg
    chars = max(1, chars)
    text = seg.text[-chars:] if keep_end else seg.text[:chars]
    return replace(seg, text=text)


class GapContexts:
    """The contexts of every gap of one segment list.

    Args:
        segments: a parsed document's segments.
        window: characters kept each side, at least 1 (``None``: the whole text).
    """

    def __init__(self, segments: list[Segment], window: int | None = DEFAULT_WINDOW) -> None:
        self.segments = segments
        self.window = window
        self.positions = [j for j, seg in enumerate(segments) if isinstance(seg, Lacuna)]

    def __len__(self) -> int:
        return len(self.positions)

    def context(self, index: int, fills: Fills, later_unknown: bool = True) -> tuple[str, str]:
        """``(prefix, suffix)`` of gap ``index``, each at most ``window`` characters.

        Raises:
            IndexError: no gap ``index``.
        """
        if not 0 <= index < len(self.positions):
            raise IndexError(f"the text has {len(self.positions)} gaps, not {index + 1}")
        pos = self.positions[index]
        return self._prefix(pos, index, fills), self._suffix(pos, later_unknown)

    def read_by(self, index: int, fills: Fills, chars: int) -> list[int]:
        """The earlier gaps (0-based, in order) whose reading stands within the last ``chars``
        characters of gap ``index``'s prefix (or, holding none, whose place does): a new reading
        in one of them changes what a model reading ``chars`` characters each side is given for
        gap ``index``; a reading in any other earlier gap does not. Later gaps are never read (they
        stand as ``…``). The distance is measured as the prefix renders it, with
        :data:`_MARGIN` characters to spare; the segments in between are rendered only once their
        raw size (:func:`_size`, never less than what they render to but a dot per punctuation
        run) reaches it, so that a gap costs about one rendering of its window.

        Raises:
            IndexError: no gap ``index``.
        """
        if not 0 <= index < len(self.positions):
            raise IndexError(f"the text has {len(self.positions)} gaps, not {index + 1}")
        limit = chars + _MARGIN
        between: list[Segment] = []  # the segments after the gap looked at, up to gap ``index``, nearest first
        size, out, gap = 0, [], index - 1
        for j in range(self.positions[index] - 1, -1, -1):
            seg = self.segments[j]
            if isinstance(seg, Lacuna):
                if size >= limit:
                    anchored = [Text(_ANCHOR), *reversed(between), Text(_ANCHOR)]
                    if len(render(Document("ctx", "user", anchored)).text) - 2 * len(_ANCHOR) >= limit:
                        break
                out.append(gap)
                fill = _fill(fills, gap)
                seg = Supplied(fill) if fill is not None else seg
                gap -= 1
            between.append(seg)
            size += _size(seg)
        return out[::-1]

    def _prefix(self, pos: int, index: int, fills: Fills) -> str:
        budget = None if self.window is None else self.window + _MARGIN
        while True:
            segs, whole = self._before(pos, index, fills, budget)
            text = render(Document("ctx", "user", segs + [Text(_ANCHOR)])).text[: -len(_ANCHOR)]
            if self.window is None or whole or len(text) >= self.window + _MARGIN:
                return text if self.window is None else text[-self.window :]
            budget *= 2

    def _suffix(self, pos: int, later_unknown: bool) -> str:
        budget = None if self.window is None else self.window + _MARGIN
        while True:
            segs, whole = self._after(pos, later_unknown, budget)
            text = render(Document("ctx", "user", [Text(_ANCHOR)] + segs)).text[len(_ANCHOR) :]
            if self.window is None or whole or len(text) >= self.window + _MARGIN:
                return text if self.window is None else text[: self.window]
            budget *= 2

    def _before(self, pos: int, index: int, fills: Fills, budget: int | None) -> tuple[list[Segment], bool]:
        """Segments before ``pos`` (earlier gaps filled), nearest ``budget`` characters;
        ``whole`` when they reach the start of the text."""
        out: list[Segment] = []
        used, gap = 0, index - 1
        for j in range(pos - 1, -1, -1):
            seg = self.segments[j]
            if isinstance(seg, Lacuna):
                fill = _fill(fills, gap)
                seg = Supplied(fill) if fill is not None else seg
                gap -= 1
            if budget is not None and used + _size(seg) > budget:
                out.append(_cut(seg, budget - used, keep_end=True))
                out.reverse()
                return out, False
            used += _size(seg)
            out.append(seg)
        out.reverse()
        return out, True

    def _after(self, pos: int, later_unknown: bool, budget: int | None) -> tuple[list[Segment], bool]:
        """Segments after ``pos`` (later gaps as ``…`` when ``later_unknown``), nearest
        ``budget`` characters; ``whole`` when they reach the end of the text."""
        out: list[Segment] = []
        used = 0
        for j in range(pos + 1, len(self.segments)):
            seg = self.segments[j]
            if isinstance(seg, Lacuna) and later_unknown:
                seg = Lacuna(None)
            if budget is not None and used + _size(seg) > budget:
                out.append(_cut(seg, budget - used, keep_end=False))
                return out, False
            used += _size(seg)
            out.append(seg)
        return out, True
