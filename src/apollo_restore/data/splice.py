"""Readings written into a Leiden text as the user gave it: everything else kept byte for byte.

A restored or exported text is never rendered again from parsed segments (which would drop
line numbers, ``vac.``, ``<αβ>``, ``{αβ}``, ``⟦αβ⟧``, turn ``.`` into ``·`` and ``[---]`` into
``[- - -]``): each filled gap's span in the source (:class:`~apollo_restore.data.readers.leiden.GapMarker`)
is replaced, and nothing else is touched.

    from apollo_restore.data.splice import Fill, splice
    splice("1 τοῦ [.5] Τῦβι", markers, {0: Fill("κυρίου", machine=True)})   # '1 τοῦ ⁅κυρίου⁆ Τῦβι'

A machine reading is written ``⁅reading⁆`` and never inside the editor's ``[ ]``: where a
lacuna shares its bracket with the editor's letters or other lacunae (``[αβ .3]``,
``[...-\\n3 ...]``), the bracket is closed before the reading and opened again after it, and
readings of lacunae separated only by a line break (its number, a hyphen, spaces) join into one
``⁅…⁆`` across it. A reading the caller gives as their own (``machine=False``) is written as an
editor's supplement: ``[reading]``, or its bare letters inside a shared bracket.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from apollo_restore.data.readers.leiden import GapMarker

#: How a machine reading is written: ``⁅reading⁆`` (U+2045, U+2046), never the editor's ``[reading]``.
MACHINE_OPEN, MACHINE_CLOSE = "\u2045", "\u2046"


@dataclass(frozen=True)
class Fill:
    """What one gap is filled with.

    Attributes:
        text: the letters as they are to be written (edition form where known).
        machine: a machine reading (``⁅text⁆``), else the caller's own (``[text]``).
        mark: written right after the reading's closing mark (an export's ``⁽ᵐ¹⁾``).
    """

    text: str
    machine: bool = True
    mark: str = ""


def splice(text: str, markers: list[GapMarker], fills: Mapping[int, Fill]) -> str:
    """``text`` with the gaps of ``fills`` (0-based positions in ``markers``) filled, the rest
    byte for byte as given.

    Args:
        text: the Leiden text the markers were parsed from.
        markers: its gaps, left to right (:func:`~apollo_restore.data.readers.leiden.find_gaps`).
        fills: gap position → what to write there; gaps not named stay as written.

    Returns:
        The text itself when ``fills`` is empty.
    """
    if not fills:
        return text
    out: list[str] = []
    at = 0
    k = 0
    while k < len(markers):
        marker = markers[k]
        if marker.bracket is None:
            fill = fills.get(k)
            if fill is not None:
                out += [text[at : marker.start], written(fill)]
                at = marker.end
            k += 1
            continue
        group = [k]  # every lacuna of one shared bracket
        while group[-1] + 1 < len(markers) and markers[group[-1] + 1].bracket == marker.bracket:
            group.append(group[-1] + 1)
        if any(j in fills for j in group):
            start, end = marker.bracket
            out += [text[at:start], _bracket(text, [markers[j] for j in group], [fills.get(j) for j in group])]
            at = end
        k = group[-1] + 1
    out.append(text[at:])
    return "".join(out)


def written(fill: Fill) -> str:
    """A gap that is its own bracket (or has none), filled: ``⁅reading⁆`` (and its mark) for the
    machine's, ``[reading]`` for the caller's own."""
    if fill.machine:
        return f"{MACHINE_OPEN}{fill.text}{MACHINE_CLOSE}{fill.mark}"
    return f"[{fill.text}]{fill.mark}"


def _structural(s: str) -> bool:
    """Whether text between two lacunae of a bracket holds no letter: a line break with its
    number and hyphen, spaces."""
    return not any(ch.isalpha() for ch in s)


def _bracket(text: str, markers: list[GapMarker], fills: list[Fill | None]) -> str:
    """One shared bracket ``[ … ]`` written again with its filled lacunae outside it."""
    start, end = markers[0].bracket  # type: ignore[misc]
    # pieces: ("raw", s) editor's text or an open lacuna; ("gap", Fill); ("sep", s) letterless text
    pieces: list[tuple[str, object]] = []
    at = start + 1
    for marker, fill in zip(markers, fills):
        between = text[at : marker.start]
        if between:
            pieces.append(("sep" if _structural(between) else "raw", between))
        if fill is None:
            pieces.append(("raw", text[marker.start : marker.end]))
        elif fill.machine:
            pieces.append(("gap", fill))
        else:
            pieces.append(("raw", fill.text))
        at = marker.end
    if text[at : end - 1]:
        tail = text[at : end - 1]
        pieces.append(("sep" if _structural(tail) else "raw", tail))
    out: list[str] = []
    state = "none"  # "none": nothing open; "editor": '[' open; "machine": '⁅' open
    pending: list[str] = []  # letterless text not yet placed
    last: Fill | None = None
    for kind, value in pieces:
        if kind == "sep":
            pending.append(value)  # type: ignore[arg-type]
            continue
        if kind == "gap":
            fill: Fill = value  # type: ignore[assignment]
            if state == "machine" and not (last and last.mark):
                out += pending  # one reading across a line break: ⁅κυρ-\n3 ίου⁆
            elif state == "machine":
                out += [MACHINE_CLOSE, last.mark, *pending, MACHINE_OPEN]  # each marked reading apart
            else:
                if state == "editor":
                    out.append("]")
                out += pending
                out.append(MACHINE_OPEN)
            out.append(fill.text)
            state, last = "machine", fill
        else:
            if state == "machine":
                out += [MACHINE_CLOSE, last.mark if last else ""]
                out += pending
                out.append("[")
            elif state == "none":
                out += ["[", *pending]
            else:
                out += pending
            out.append(value)  # type: ignore[arg-type]
            state = "editor"
        pending = []
    if state == "machine":
        out += [MACHINE_CLOSE, last.mark if last else "", *pending]
    else:
        out += [*pending, "]"]
    return "".join(out)
