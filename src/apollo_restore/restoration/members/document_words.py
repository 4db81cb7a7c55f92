"""Readings made of the words of the gap's own document, and of the training vocabulary.

An editor restoring ``κυριο[.5]λω`` looks for the words the document already spells: if it
writes ``κυριου`` and ``απολλωνιου`` elsewhere, ``υ απολ`` fills the gap. This module proposes
such readings from the visible context only (``prefix`` and ``suffix``; the gap never reads its
own span):

    from apollo_restore.restoration.members.document_words import word_readings
    word_readings("μετα κυριο", "λω του σωταδου· … κυριου απολλωνιου", Hint.exact(5))
    # ['υ κυρι', 'υ απολ']: κυριου's ending replaced by "λω", and απολλω(νιου)

A reading is built from up to three parts, joined by spaces:

- the *left* part completes the word cut by the gap's left edge (``L``, the prefix's last
  letters when it ends inside a word): a context word ``L + x`` gives ``x``;
- the *middle* is a run of 1 to ``max_words`` consecutive whole words of the context, as
  written there;
- the *right* part leads into the word cut by the right edge (``R``, the suffix's first
  letters): a context word ``y + R`` gives ``y``, and so does a word that merely begins with
  ``y + R`` (the same stem in another case: ``παυσιρ[ιων]`` from ``παυσιριωνος``) when ``R`` has
  at least two letters, or a word of five or more letters whose last one or two letters ``R``
  (an ending of up to three) replaces (``[παυσιριων]ος`` from ``παυσιριωνι``).

When both edges are cut a part must complete each (a gap that starts inside a word continues
it). A gap inside one word is filled by ``z`` with ``L + z + R`` a context word (or the stem of
one), or, from the *vocabulary* (the keys of the
:class:`~apollo_restore.data.orthography.EditionForms` table, train split only), a known word
``L + z + R`` when both edges are cut. Readings keep the letter counts the hint allows. Words
are compared σ-folded and written as the context writes them; words touching a lacuna marker
(``-``/``…``) are fragments and not used.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from apollo_restore.data.normalise import GAP_CHAR, GREEK_LETTERS, UNKNOWN_GAP, letter_count
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.config import DEFAULT_RESTORE_CONFIG, RestoreConfig
from apollo_restore.restoration.ranking.pool import match_key, to_candidates
from apollo_restore.schema.folder import WordsOptions
from apollo_restore.schema.restoration import Candidate

_WORD = re.compile(f"[{GREEK_LETTERS}]+")
_MARKERS = (GAP_CHAR, UNKNOWN_GAP)


def _key(word: str) -> str:
    """A word's identity: σ-folded letters."""
    return word.replace("ς", "σ")


@dataclass(frozen=True)
class WordConfig:
    """Limits of :func:`word_readings`.

    Attributes:
        max_words: longest run of context words in a reading's middle.
        min_stem: fewest letters of ``R`` for which a word beginning with ``y + R`` (another
            ending of the same stem) completes the right edge.
        vocabulary_limit: vocabulary completions kept (a short edge may fit many words).
        limit: readings formed at most (in the order :func:`word_readings` forms them).
        min_word: shortest word (letters) that earns :class:`DocumentWords`' score.
    """

    max_words: int = 3
    min_stem: int = 2
    vocabulary_limit: int = 40
    limit: int = 1000
    min_word: int = 4


class _Context:
    """The gap's edges and the whole words around it.

    Attributes:
        left, right: letters of the words cut by the gap's edges (``""`` at a word boundary).
        words: ``(key, text)`` of each whole word of the context, in order.
        runs: the text of each run of 1..``max_words`` consecutive whole words, as written.
    """

    def __init__(self, prefix: str, suffix: str, max_words: int):
        self.left = re.search(f"[{GREEK_LETTERS}]*$", prefix).group()
        self.right = re.match(f"[{GREEK_LETTERS}]*", suffix).group()
        segments = _segments(prefix, cut_first=False, cut_last=bool(self.left))
        segments += _segments(suffix, cut_first=bool(self.right), cut_last=False)
        self.words = [(_key(m.group()), m.group()) for segment in segments for m in segment]
        runs: dict[str, str] = {}
        for segment in segments:
            for i, first in enumerate(segment):
                for last in segment[i : i + max_words]:
                    run = first.string[first.start() : last.end()]
                    runs.setdefault(_key(run), run)
        self.runs = list(runs.values())


def _segments(text: str, cut_first: bool, cut_last: bool) -> list[list[re.Match]]:
    """The whole words of ``text`` in runs that no lacuna marker breaks; a word touching a
    marker, or cut by the gap (``cut_first``/``cut_last``: the text's first/last word), is
    left out and breaks its run."""
    segments: list[list[re.Match]] = [[]]
    found = list(_WORD.finditer(text))
    for n, match in enumerate(found):
        start, end = match.span()
        between = text[found[n - 1].end() : start] if n else ""
        cut = (n == 0 and cut_first) or (n == len(found) - 1 and cut_last)
        fragment = text[start - 1 : start] in _MARKERS or text[end : end + 1] in _MARKERS
        if any(m in between for m in _MARKERS) or cut or fragment:
            segments.append([])
        if not (cut or fragment):
            segments[-1].append(match)
    return [segment for segment in segments if segment]


def _lefts(ctx: _Context) -> list[str]:
    """Completions ``x`` of the left edge's word by a context word ``L + x``."""
    if not ctx.left:
        return [""]
    left = _key(ctx.left)
    return list(dict.fromkeys(text[len(left) :] for key, text in ctx.words if key.startswith(left) and key != left))


#: Letters of a word's ending another case may replace (``παυσιριων|ι`` → ``παυσιριων|ος``).
ENDING = 2
#: Shortest word whose ending :func:`_meets` replaces.
_MIN_INFLECTED = 5


def _meets(key: str, at: int, right: str, min_stem: int) -> bool:
    """Whether a word ``key`` from letter ``at`` on agrees with the right edge's word ``right``:
    it ends with exactly ``right``; or the two share their first ``min(len, len)`` letters, at
    least ``min_stem`` of them (the same stem with another ending: ``παυσιριων`` for
    ``παυσιριωνος``, ``διονυσοδωρας`` for ``διονυσοδωρα``); or ``right`` is an ending (at most
    ``ENDING + 1`` letters) that replaces the last 1..``ENDING`` letters of a word of at least
    five (``παυσιριων|ος`` for ``παυσιριων|ι``)."""
    if key[at:] == right:
        return True
    overlap = min(len(right), len(key) - at)
    if overlap >= min_stem and key[at : at + overlap] == right[:overlap]:
        return True
    return len(key) >= _MIN_INFLECTED and len(right) <= ENDING + 1 and 1 <= len(key) - at <= ENDING


def _rights(ctx: _Context, min_stem: int) -> list[str]:
    """Beginnings ``y`` of the right edge's word ``R``: ``y + R`` is a context word or its stem
    with another ending (:func:`_meets`)."""
    if not ctx.right:
        return [""]
    right = _key(ctx.right)
    return list(
        dict.fromkeys(
            text[:at] for key, text in ctx.words for at in range(1, len(key)) if _meets(key, at, right, min_stem)
        )
    )


def _inside(ctx: _Context, min_stem: int) -> list[str]:
    """Readings ``z`` of a gap inside one word: ``L + z + R`` is a context word or its stem with
    another ending (:func:`_meets`)."""
    left, right = _key(ctx.left), _key(ctx.right)
    if not (left or right):
        return []
    out: dict[str, None] = {}
    for key, text in ctx.words:
        if key.startswith(left):
            for at in range(len(left) + 1, len(key) + (not right)):
                if _meets(key, at, right, min_stem):
                    out[text[len(left) : at]] = None
    return list(out)


def word_readings(
    prefix: str,
    suffix: str,
    hint: Hint,
    config: WordConfig = WordConfig(),
    max_letters: int = DEFAULT_RESTORE_CONFIG.max_letters,
) -> list[str]:
    """Readings of the gap made of the context's own words (see the module docstring), each
    once (σ-folded, spaces ignored), in the letter counts ``hint`` allows: readings of a gap
    inside one word first, then readings with fewer parts, shorter middles first, at most
    ``config.limit`` of them; ``max_letters`` with no hint."""
    lo, hi = hint.letters(max_letters)
    ctx = _Context(prefix, suffix, config.max_words)
    found: dict[str, str] = {}
    lefts, rights = _lefts(ctx), _rights(ctx, config.min_stem)
    middles: dict[tuple[int, int], list[str]] = {(0, 0): [""]}  # (words, letters) → runs
    for run in ctx.runs:
        middles.setdefault((run.count(" ") + 1, letter_count(run)), []).append(run)

    def joined(words: int) -> Iterator[str]:
        for x in lefts:
            for y in rights:
                edges = letter_count(x) + letter_count(y)
                for n in range(max(0, lo - edges), hi - edges + 1):
                    for m in middles.get((words, n), ()):
                        yield " ".join(part for part in (x, m, y) if part)

    formed = itertools.chain(_inside(ctx, config.min_stem), *(joined(n) for n in range(config.max_words + 1)))
    for reading in formed:
        if reading and lo <= letter_count(reading) <= hi:
            found.setdefault(match_key(reading), reading)
            if len(found) >= config.limit:
                break
    return list(found.values())


class Vocabulary:
    """Known words searched by their beginning (a bisection) for readings of a gap inside one word.

    Args:
        keys: ``norm.v1`` words, sorted (as :class:`~apollo_restore.data.orthography.EditionForms`
            stores its keys).
    """

    def __init__(self, keys: Sequence[str]):
        self.keys = keys

    def completions(
        self,
        prefix: str,
        suffix: str,
        hint: Hint,
        config: WordConfig = WordConfig(),
        max_letters: int = DEFAULT_RESTORE_CONFIG.max_letters,
    ) -> list[str]:
        """Readings ``z`` of a gap inside one word (both edges cut) with ``L + z + R`` a known
        word, in the letter counts ``hint`` allows; at most ``config.vocabulary_limit``, those
        nearest the middle of the allowed counts first (with no hint: the shortest, at most
        ``max_letters``)."""
        ctx = _Context(prefix, suffix, 0)
        left, right = _key(ctx.left), _key(ctx.right)
        if not (left and right):
            return []
        lo, hi = hint.letters(max_letters)
        at = bisect.bisect_left(self.keys, left)
        out = []
        while at < len(self.keys) and self.keys[at].startswith(left):
            key = self.keys[at]  # σ inside a word, ς only at its end: folding keeps the order
            at += 1
            middle = len(key) - len(left) - len(right)
            if lo <= middle <= hi and _key(key).endswith(right):
                out.append(key[len(left) : len(key) - len(right)])
        centre = (lo + hi) / 2 if hint.lo is not None else 0
        out.sort(key=lambda z: (abs(len(z) - centre), z))
        return out[: config.vocabulary_limit]


def _same_word(a: str, b: str, min_word: int, ending: int) -> bool:
    """Whether two σ-folded words are one word or one stem with another ending: they share
    their letters but for the last ``ending`` of each, and at least ``min_word`` letters."""
    shared = len(a) if a == b else next(i for i, (x, y) in enumerate(zip(a + "\0", b + "\1")) if x != y)
    return shared >= min_word and shared >= max(len(a), len(b)) - ending


def document_letters(
    prefix: str, suffix: str, readings: list[str], min_word: int = 4, ending: int = ENDING
) -> list[int]:
    """For each reading, its letters that stand in words the context spells elsewhere: the
    words of ``L + reading + R`` (the gap's edge words completed by the reading) of at least
    ``min_word`` letters that are a whole word of the context, or the same stem with an ending
    of up to ``ending`` other letters (``διονυσοδωρας`` for ``διονυσοδωρα``; 0: exact words)."""
    ctx = _Context(prefix, suffix, 0)
    known: dict[str, set[str]] = {}
    for key, _ in ctx.words:
        if len(key) >= min_word:
            known.setdefault(key[:min_word], set()).add(key)
    out = []
    for reading in readings:
        full = ctx.left + reading + ctx.right
        lo, hi = len(ctx.left), len(ctx.left) + len(reading)
        total = 0
        for match in _WORD.finditer(full):
            inside = min(match.end(), hi) - max(match.start(), lo)
            word = _key(match.group())
            if inside > 0 and any(_same_word(word, w, min_word, ending) for w in known.get(word[:min_word], ())):
                total += inside
        out.append(total)
    return out


class DocumentWords:
    """Readings made of the document's own words, and a score for making them (a
    :class:`~apollo_restore.restoration.restorer.Restorer`).

    *Proposals*: :func:`word_readings` (and, with a ``vocabulary``, its completions of a gap
    inside one word), best first by the score, at most ``k``.

    *Score*: :func:`document_letters`, the reading's letters that stand in words the context
    spells elsewhere (0 for a reading that makes no such word, whatever its length); an
    evidence count, not a log-probability (the ensemble weighs it as it does priors).

    Args:
        config: limits of the proposals and the shortest word scored.
        vocabulary: known words for completions of a gap inside one word, or ``None``.
    """

    name = "document-words"
    kind = "document"  # evidence from the gap's own document, not a language model
    batches = False
    options = WordsOptions  # what a model folder's entry of it may set
    in_words = "the text's own words"  # what it is, for people (the model's label)

    def __init__(
        self,
        config: WordConfig = WordConfig(),
        vocabulary: Vocabulary | None = None,
        search: RestoreConfig = DEFAULT_RESTORE_CONFIG,
    ):
        self.config, self.vocabulary, self.settings = config, vocabulary, search

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """Letters of each reading in words the context spells elsewhere (see the class)."""
        return [float(n) for n in document_letters(prefix, suffix, readings, self.config.min_word)]

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """The first ``k`` (default ``settings.k``) of the word readings, then of the vocabulary
        completions, the largest share of their letters in the document's words first."""
        k = k or self.settings.k
        longest = self.settings.max_letters
        readings = word_readings(prefix, suffix, hint, self.config, longest)
        if self.vocabulary is not None:
            seen = {match_key(r) for r in readings}
            completions = self.vocabulary.completions(prefix, suffix, hint, self.config, longest)
            readings += [z for z in completions if match_key(z) not in seen]
        scores = self.score_readings(prefix, suffix, hint, readings)
        # the share of letters in the document's words, not their number (a long run of the
        # context would always win); ties keep the order readings were formed in
        order = sorted(range(len(readings)), key=lambda i: -scores[i] / max(1, letter_count(readings[i])))
        return to_candidates([(readings[i], scores[i]) for i in order[:k]])

    def language_model(self) -> None:
        """None: no neural language model behind this member."""
        return None
