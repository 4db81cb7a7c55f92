"""Copy from the document being restored: readings and scores from the gap's own visible context.

Documents repeat themselves — a name lost in a gap often stands in full a line later
(``ομολ[ογει παυσιρ]ιων απολλωνιου του παυσιριωνος``). This member knows only the text around
the gap (its ``prefix`` and ``suffix``; the gap itself never appears in its own context):

    from apollo_restore.restoration.members.document_copy import DocumentCopy
    copy = DocumentCopy()
    copy.candidates("διον", "ρασ και διονυσοδωρα", NO_HINT)      # 'υσοδω' among them
    copy.score_readings("διον", "ρασ και διονυσοδωρα", NO_HINT, ["υσοδω", "υσιο"])

*Proposals*: spans of the context that continue the letters before the gap where they occur
elsewhere in the document (or that lead into the letters after it, read backwards), ending
where the copy rejoins the other edge of the gap or at a word boundary that the gap's edge
allows.

*Scores*: an unbounded-order model over the context's own letters, both directions. Each letter
of the reading, and the first ``join`` letters after it, is predicted from the longest run of
at least ``min_match`` letters before it that occurs elsewhere in the document; the score is
``Σ log(P_doc(letter) / P_uniform)`` with ``P_doc = (c + α/A) / (n + α)`` (``n`` occurrences
of the run followed by a letter, ``c`` of them by this letter, ``A`` letters in the alphabet).
Letters with no such run add 0, so a reading the document says nothing about scores 0 whatever
its length; one the document repeats scores high. Letters only, σ-folded, as the
unbounded-order members see them; lacuna markers in the context end a run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from apollo_restore.data.normalise import GAP_CHAR, GREEK_LETTERS, UNKNOWN_GAP
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.config import DEFAULT_RESTORE_CONFIG, RestoreConfig
from apollo_restore.restoration.ranking.pool import match_key, to_candidates
from apollo_restore.schema.folder import NoOptions
from apollo_restore.schema.restoration import Candidate

#: Stands between prefix and suffix, and for lacuna markers: no run crosses it.
_BREAK = "|"
#: Letters of the folded alphabet (σ for ς).
_ALPHABET = len(set(GREEK_LETTERS.replace("ς", "σ")))


@dataclass(frozen=True)
class CopyConfig:
    """Settings of :class:`DocumentCopy`.

    Attributes:
        min_match: shortest run of letters (before a letter, or at a gap edge) that counts as
            evidence of copying.
        max_match: longest run looked up (letters).
        join: letters after the reading also predicted (they must follow a copied reading too).
        smoothing: ``α`` of ``P_doc`` (pseudo-occurrences spread over the alphabet).
    """

    min_match: int = 3
    max_match: int = 40
    join: int = 8
    smoothing: float = 1.0


class _Text:
    """Letters of a piece of normalised text, σ-folded, with where each stands in the text.

    Attributes:
        letters: the letters, ``|`` for a lacuna marker or the gap between prefix and suffix.
        at: ``at[i]`` is the character offset in the text of ``letters[i]``.
        text: the text (``|`` between prefix and suffix).
    """

    def __init__(self, text: str):
        self.text = text
        keep = [(i, _BREAK if ch in (GAP_CHAR, UNKNOWN_GAP, _BREAK) else ch) for i, ch in enumerate(text)]
        keep = [(i, "σ" if ch == "ς" else ch) for i, ch in keep if ch == _BREAK or ch in GREEK_LETTERS]
        self.at = [i for i, _ in keep]
        self.letters = "".join(ch for _, ch in keep)

    def word_ends_after(self, i: int) -> bool:
        """Whether letter ``i`` ends a word (a space, marker or the text's end follows it)."""
        nxt = self.at[i] + 1
        return nxt >= len(self.text) or self.text[nxt] not in GREEK_LETTERS

    def span(self, i: int, j: int) -> str:
        """The text of letters ``i..j-1`` as written (inner spaces kept)."""
        return self.text[self.at[i] : self.at[j - 1] + 1]


def _occurrences(hay: str, needle: str) -> list[int]:
    """Start offsets of every (overlapping) occurrence of ``needle`` in ``hay``."""
    out, at = [], hay.find(needle)
    while at >= 0:
        out.append(at)
        at = hay.find(needle, at + 1)
    return out


def _letters(text: str) -> str:
    """Letters only, σ-folded, markers as ``|``."""
    return _Text(text).letters


class DocumentCopy:
    """Readings and scores from the gap's own document (a
    :class:`~apollo_restore.restoration.restorer.Restorer`; see the module docstring).

    Args:
        config: run lengths, smoothing and proposal limits.
    """

    name = "document-copy"
    kind = "document"  # evidence from the gap's own document, not a language model
    batches = False
    options = NoOptions  # what a model folder's entry of it may set
    in_words = "the text's own phrases"  # what it is, for people (the model's label)

    def __init__(self, config: CopyConfig = CopyConfig(), search: RestoreConfig = DEFAULT_RESTORE_CONFIG):
        self.config, self.settings = config, search

    # -- scores -----------------------------------------------------------------------------

    def _evidence(self, doc: str, before: str, middle: str, after: str) -> float:
        """``Σ log(P_doc / P_uniform)`` over ``middle`` and the first ``join`` letters of
        ``after`` (cut at a break), each predicted from the longest run before it that occurs
        in ``doc`` followed by a letter; a run predicting a letter of ``after`` must reach into
        ``middle`` (else it is the context predicting itself). All strings are letters (one
        direction: the backward model passes them reversed)."""
        cfg = self.config
        tail = after.split(_BREAK, 1)[0][: cfg.join]
        seq = before + middle + tail
        total = 0.0
        for i in range(len(before), len(seq)):
            shortest = max(cfg.min_match, i - len(before) - len(middle) + 1)
            best: tuple[int, int] | None = None  # (occurrences followed by a letter, by this letter)
            for length in range(shortest, min(cfg.max_match, i) + 1):
                run = seq[i - length : i]
                if _BREAK in run:
                    break
                follow = [doc[p + length] for p in _occurrences(doc, run) if p + length < len(doc)]
                follow = [ch for ch in follow if ch != _BREAK]
                if not follow:
                    break
                best = (len(follow), follow.count(seq[i]))
            if best is not None:
                n, c = best
                alpha = cfg.smoothing
                total += math.log((c + alpha / _ALPHABET) / (n + alpha) * _ALPHABET)
        return total

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """The document's evidence for each reading, forward plus backward (nats; 0 when the
        document says nothing about it, whatever its length)."""
        before, after = _letters(prefix), _letters(suffix)
        doc = before + _BREAK + after
        rdoc = doc[::-1]
        out = []
        for reading in readings:
            middle = match_key(reading).replace("ς", "σ")
            forward = self._evidence(doc, before, middle, after)
            backward = self._evidence(rdoc, after[::-1], middle[::-1], before[::-1])
            out.append(forward + backward)
        return out

    # -- proposals --------------------------------------------------------------------------

    def _forward_copies(self, doc: _Text, edge: int, other: str, word_edge: bool, hint: Hint) -> list[tuple[int, int]]:
        """Letter spans ``(i, j)`` of ``doc`` that continue the run ending at letter ``edge``
        (exclusive) where it occurs elsewhere, and end where the copy meets ``other`` (the
        first letters on the far side of the gap) or, with ``word_edge``, at a word's end."""
        cfg, letters = self.config, doc.letters
        lo, hi = hint.letters(self.settings.max_letters)
        spans = []
        for length in range(cfg.min_match, min(cfg.max_match, edge) + 1):
            run = letters[edge - length : edge]
            if _BREAK in run:
                break
            starts = [p + length for p in _occurrences(letters, run) if p + length != edge]
            if not starts:
                break
            for i in starts:
                for j in range(i + max(lo, 1), min(i + hi, len(letters)) + 1):
                    if _BREAK in letters[i:j]:
                        break
                    meets = len(other) >= 2 and letters[j : j + 2] == other[:2]
                    if meets or (word_edge and doc.word_ends_after(j - 1)):
                        spans.append((i, j))
        return spans

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """Spans of the context copied into the gap (see the module docstring), best first by
        :meth:`score_readings`; at most ``k`` (default ``settings.k``).

        The forward copies continue the prefix's last letters; the backward copies (the same
        search on the reversed text) lead into the suffix's first letters.
        """
        k = k or self.settings.k
        text = prefix + _BREAK + suffix
        doc = _Text(text)
        edge = len(_letters(prefix))  # the break's letter index
        after = doc.letters[edge + 1 :]
        found: dict[str, str] = {}
        starts_word = not suffix or suffix[0] not in GREEK_LETTERS
        for i, j in self._forward_copies(doc, edge, after, starts_word, hint):
            reading = doc.span(i, j)
            found.setdefault(match_key(reading), reading)
        rdoc = _Text(text[::-1])
        ends_word = not prefix or prefix[-1] not in GREEK_LETTERS
        for i, j in self._forward_copies(rdoc, len(after), doc.letters[:edge][::-1], ends_word, hint):
            reading = rdoc.span(i, j)[::-1]
            found.setdefault(match_key(reading), reading)
        readings = list(found.values())
        scored = sorted(zip(readings, self.score_readings(prefix, suffix, hint, readings)), key=lambda r: -r[1])
        return to_candidates(scored[:k])

    def language_model(self) -> None:
        """None: no neural language model behind this member."""
        return None
