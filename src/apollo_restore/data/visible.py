"""Characters nobody sees, taken out of typed text before it is parsed, with a map back to the input.

    visible = Visible.of("[.\\u200d8]")
    visible.text           # "[.8]"
    visible.original(2)    # 3: the input offset of the visible text's offset 2 (the "8")

Taken out: every format character (Unicode category ``Cf``: ZWJ, ZWNJ, ZWSP, LRM/RLM, bidi
embeddings, overrides and isolates such as RLO U+202E, the word joiner, U+FEFF, the soft
hyphen...), and every combining mark (categories ``Mn``, ``Mc``, ``Me``: accents, CGJ U+034F...)
that sits on no letter: after a space, a digit, a dot, a bracket, a question mark, that is
inside Leiden markup, where either would otherwise split one gap in two silently
(``[.\\u200d8]`` read as a 1-letter and an 8-letter gap). Marks on a letter (accents,
breathings, the underdot) stay. Neither kind carries a letter, so nothing a reader sees is lost.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

#: Unicode categories taken out (marks only where they sit on no letter).
FORMAT_CATEGORY = "Cf"
MARK_CATEGORIES = ("Mn", "Mc", "Me")


@dataclass(frozen=True)
class Visible:
    """A text with its invisible characters taken out.

    Attributes:
        source: the text as given.
        text: ``source`` without them.
        cut_at: ascending offsets in ``text`` where characters were taken out.
        cut_before: for each of ``cut_at``, how many characters were taken out up to there.
    """

    source: str
    text: str
    cut_at: tuple[int, ...] = ()
    cut_before: tuple[int, ...] = ()

    @classmethod
    def of(cls, source: str) -> Visible:
        """``source`` with its format characters and its marks on no letter taken out."""
        invisible = {ch for ch in set(source) if unicodedata.category(ch) in (FORMAT_CATEGORY, *MARK_CATEGORIES)}
        if not invisible:
            return cls(source, source)
        formats = {ch for ch in invisible if unicodedata.category(ch) == FORMAT_CATEGORY}
        runs = re.compile("[" + "".join(map(re.escape, sorted(invisible))) + "]+")
        pieces: list[str] = []
        cut_at: list[int] = []
        cut_before: list[int] = []
        done = 0  # offset in source up to which pieces hold the text
        for m in runs.finditer(source):
            on_letter = m.start() > 0 and source[m.start() - 1].isalpha()
            if on_letter and formats.isdisjoint(m.group()):
                continue  # accents on a letter (decomposed text): kept as they are
            pieces.append(source[done : m.start()])
            for j, ch in enumerate(m.group(), m.start()):
                if on_letter and unicodedata.category(ch) in MARK_CATEGORIES:
                    pieces.append(ch)
                    continue
                at = j - (cut_before[-1] if cut_before else 0)
                if cut_at and cut_at[-1] == at:
                    cut_before[-1] += 1
                else:
                    cut_at.append(at)
                    cut_before.append((cut_before[-1] if cut_before else 0) + 1)
            done = m.end()
        pieces.append(source[done:])
        return cls(source, "".join(pieces), tuple(cut_at), tuple(cut_before))

    def original(self, offset: int) -> int:
        """The offset in ``source`` of the character at ``offset`` in ``text`` (characters taken
        out just before it are passed over)."""
        k = bisect.bisect_right(self.cut_at, offset)
        return offset + (self.cut_before[k - 1] if k else 0)
