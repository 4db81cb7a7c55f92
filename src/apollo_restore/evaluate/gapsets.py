"""Gap sets from a prepared split (docs/design.md, *Evaluation*; paper §3.3–3.5, §5.5, App. E).

    from apollo_restore.evaluate.gapsets import build_synthetic, build_true_lacunae
    table = load_documents(Path("data/prepared"), "test", ["ddb"])
    gaps = build_synthetic(table, "ddb", "test", per_length=50, seed=0)
    gaps += build_true_lacunae(table, "ddb", "test", limit=500, seed=0)

Synthetic gaps (``kind="synthetic"``, sampler :data:`GAP_SAMPLER`): for each length 1–20, ``N``
spans of exactly that many letters, from documents drawn with probability proportional to
their letters and positions drawn uniformly among their letters. A span starts and ends on a
letter, holds no lacuna marker (``-``/``…``), is read securely (none of its letters is
underdotted, i.e. it is the same in ``text_uncertain_excluded``) and, by default, overlaps no
editor supplement, so every target is text the editor actually read. The span is cut out:
``prefix`` is up to ``context_chars`` characters before it and ``suffix`` up to as many after;
other lacunae stay as ``-`` runs and ``…``.

Every span is asked under each hint condition (:data:`CONDITIONS`) — the *same* spans, only the
hint differs — and, optionally, with the uncertain-excluded context (id suffix ``:ue``).

True lacunae (``kind="true"``): each editor-supplied span with at least one letter is a gap
whose target is the editor's supplement (a silver label), with the real text around it and
its letter count as an exact hint.

Gap ids: ``<source>:<split>:<doc>:L<nn>:<i|s><index>:<condition>[:ue]`` — ``i`` numbers a
synthetic span within its length, ``s`` is the character offset of a supplied span.
"""

from __future__ import annotations

import difflib
import logging
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from apollo_restore.data.formats import GapExample, read_cullhed_chat, read_gapset
from apollo_restore.data.normalise import GAP_CHAR, NOT_LETTERS, UNKNOWN_GAP, letter_count
from apollo_restore.data.table import load_documents
from apollo_restore.data.textchecks import check_no_machine_reading
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.inputs import read_lines
from apollo_restore.schema.evaluation import CONDITIONS

log = logging.getLogger(__name__)

GAP_SAMPLER = "apollo_restore evalgaps.v1"
WRONG_SHARE = {"wrong10": 0.10, "wrong50": 0.50, "wrong100": 1.00}
UE_SUFFIX = ":ue"
_MARKERS = (GAP_CHAR, UNKNOWN_GAP)


@dataclass(frozen=True)
class GapId:
    """The parts of a gap id built here (see module docstring)."""

    source: str
    split: str
    doc: str
    length: int
    tag: str
    condition: str
    excluded: bool = False

    @property
    def base(self) -> str:
        """The id without condition and variant: the same span under every hint."""
        return f"{self.source}:{self.split}:{self.doc}:L{self.length:02d}:{self.tag}"

    def __str__(self) -> str:
        return f"{self.base}:{self.condition}" + (UE_SUFFIX if self.excluded else "")


def parse_gap_id(gap_id: str) -> GapId | None:
    """Parse an id built by this module; ``None`` for any other id."""
    parts = gap_id.split(":")
    excluded = parts[-1] == UE_SUFFIX[1:]
    if excluded:
        parts = parts[:-1]
    if len(parts) < 6 or parts[-1] not in CONDITIONS or not parts[-3].startswith("L") or not parts[-3][1:].isdecimal():
        return None
    return GapId(parts[0], parts[1], ":".join(parts[2:-3]), int(parts[-3][1:]), parts[-2], parts[-1], excluded)


def condition_of(gap: GapExample) -> str:
    """Hint condition of a gap: from its id when built here, else from its hint's shape
    (``exact`` for a count — whether it is right is then unknown — ``range`` or ``none``)."""
    parsed = parse_gap_id(gap.id)
    if parsed is not None:
        return parsed.condition
    return gap.hint.kind


def is_excluded(gap: GapExample) -> bool:
    """Whether the gap's context is the uncertain-excluded variant."""
    return gap.id.endswith(UE_SUFFIX)


# -- spans ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    """A gap position in one document's ``text``: characters ``[start, end)``."""

    row: int  # index of the document in the table
    start: int
    end: int
    length: int  # letters
    tag: str  # ``i012`` or ``s345``


class _Doc:
    """One document's texts with lazily computed letter positions and variant alignment."""

    def __init__(self, row: dict):
        self.id: str = row["id"]
        self.text: str = row["text"]
        self.ue: str = row.get("text_uncertain_excluded") or row["text"]
        self.supplied = list(zip(row.get("supplied_start") or [], row.get("supplied_end") or []))
        self._letters: np.ndarray | None = None
        self._map: list[int] | None = None

    @property
    def letters(self) -> np.ndarray:
        if self._letters is None:
            self._letters = np.array([i for i, ch in enumerate(self.text) if ch not in NOT_LETTERS], dtype=np.int64)
        return self._letters

    def to_ue(self, pos: int) -> int:
        """Offset in the uncertain-excluded text of offset ``pos`` of ``text``."""
        if len(self.ue) == len(self.text):
            return pos
        if self._map is None:
            self._map = _align(self.text, self.ue)
        return self._map[pos]

    def secure(self, start: int, end: int) -> bool:
        """No marker inside, and the same letters in the uncertain-excluded text."""
        piece = self.text[start:end]
        if any(m in piece for m in _MARKERS):
            return False
        return self.ue[self.to_ue(start) : self.to_ue(end)] == piece

    def overlaps_supplied(self, start: int, end: int) -> bool:
        return any(s < end and start < e for s, e in self.supplied)


def _align(a: str, b: str) -> list[int]:
    """For each offset ``0..len(a)`` of ``a``, the corresponding offset of ``b`` (the two
    renderings differ by letters turned into ``-`` and by a few dropped characters)."""
    out = [0] * (len(a) + 1)
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for i in range(i1, i2):
            out[i] = j1 + min(i - i1, j2 - j1) if op != "delete" else j1
    out[len(a)] = len(b)
    return out


def _docs(table: pa.Table) -> list[_Doc]:
    return [_Doc(row) for row in table.to_pylist()]


def _rng(seed: int, *labels: str) -> np.random.Generator:
    """A generator fixed by the seed and labels, so adding a source or condition changes no other."""
    return np.random.default_rng([seed] + [zlib.crc32(label.encode()) for label in labels])


def sample_spans(
    docs: list[_Doc], per_length: int, lengths: Iterable[int], rng: np.random.Generator,
    avoid_supplied: bool = True, max_tries: int = 200,
) -> list[Span]:  # fmt: skip
    """``per_length`` distinct secure spans of each letter count in ``lengths``.

    Documents are drawn in proportion to their letters, positions uniformly among letters.
    A length for which fewer spans are found after ``max_tries × per_length`` draws keeps
    what it has (logged).
    """
    weights = np.array([len(d.letters) for d in docs], dtype=np.float64)
    if weights.sum() == 0:
        return []
    weights /= weights.sum()
    spans: list[Span] = []
    for n in lengths:
        seen: set[tuple[int, int]] = set()
        found: list[Span] = []
        for _ in range(max_tries * per_length):
            if len(found) == per_length:
                break
            r = int(rng.choice(len(docs), p=weights))
            letters = docs[r].letters
            if len(letters) < n:
                continue
            k = int(rng.integers(0, len(letters) - n + 1))
            start, end = int(letters[k]), int(letters[k + n - 1]) + 1
            if (r, start) in seen or not docs[r].secure(start, end):
                continue
            if avoid_supplied and docs[r].overlaps_supplied(start, end):
                continue
            seen.add((r, start))
            found.append(Span(r, start, end, n, f"i{len(found):03d}"))
        if len(found) < per_length:
            log.warning("only %d of %d gaps of %d letters found", len(found), per_length, n)
        spans += found
    return spans


def supplied_spans(docs: list[_Doc], max_letters: int = 20) -> list[Span]:
    """Every editor-supplied span of 1..``max_letters`` letters with no marker inside."""
    out = []
    for r, doc in enumerate(docs):
        for s, e in doc.supplied:
            piece = doc.text[s:e]
            n = letter_count(piece)
            if 1 <= n <= max_letters and not any(m in piece for m in _MARKERS):
                out.append(Span(r, s, e, n, f"s{s}"))
    return out


# -- hints ------------------------------------------------------------------------------------


def range_hint(n: int, rng: np.random.Generator) -> Hint:
    """A range 1–6 letters wide that contains ``n``, placed at random around it."""
    width = int(rng.integers(1, 7))
    lo = max(1, n - int(rng.integers(0, width + 1)))
    return Hint.span(lo, lo + width)


def wrong_hint(n: int, rng: np.random.Generator) -> Hint:
    """An exact hint off by 1–5 letters (below or above at random, never below 1)."""
    off = int(rng.integers(1, 6))
    below = n - off >= 1 and rng.random() < 0.5
    return Hint.exact(n - off if below else n + off)


def hints_for(spans: list[Span], condition: str, rng: np.random.Generator) -> list[Hint]:
    """The hint of each span under ``condition``.

    ``wrongP``: within each length, exactly ``round(P × count)`` spans (chosen at random) get a
    wrong exact hint, the others the true count, so every length has the same share wrong.

    Raises:
        ValueError: unknown condition.
    """
    if condition not in CONDITIONS:
        raise ValueError(f"unknown hint condition {condition!r}; choose from {', '.join(CONDITIONS)}")
    if condition == "none":
        return [NO_HINT] * len(spans)
    if condition == "exact":
        return [Hint.exact(s.length) for s in spans]
    if condition == "range":
        return [range_hint(s.length, rng) for s in spans]
    hints = [Hint.exact(s.length) for s in spans]
    by_length: dict[int, list[int]] = {}
    for i, s in enumerate(spans):
        by_length.setdefault(s.length, []).append(i)
    for n, idx in sorted(by_length.items()):
        k = int(round(WRONG_SHARE[condition] * len(idx)))
        for i in rng.permutation(idx)[:k]:
            hints[int(i)] = wrong_hint(n, rng)
    return hints


# -- gap sets ---------------------------------------------------------------------------------


def _example(doc: _Doc, span: Span, gid: GapId, hint: Hint, kind: str, context_chars: int) -> GapExample:
    if gid.excluded:
        text, start, end = doc.ue, doc.to_ue(span.start), doc.to_ue(span.end)
    else:
        text, start, end = doc.text, span.start, span.end
    return GapExample(
        id=str(gid), source=gid.source, doc=doc.id,
        prefix=text[max(0, start - context_chars) : start], suffix=text[end : end + context_chars],
        target=doc.text[span.start : span.end], hint=hint, kind=kind,
    )  # fmt: skip


def build_synthetic(
    table: pa.Table, source: str, split: str, per_length: int, conditions: Iterable[str] = CONDITIONS,
    lengths: Iterable[int] = range(1, 21), seed: int = 0, context_chars: int = 250,
    uncertain_excluded: Iterable[str] = (), avoid_supplied: bool = True,
) -> list[GapExample]:  # fmt: skip
    """Synthetic gaps of one source's split under each hint condition.

    Args:
        table: documents (:func:`~apollo_restore.data.table.load_documents`); rows of other
            sources are ignored.
        source, split: written into ids.
        per_length: spans per letter count.
        conditions: hint conditions, each applied to the same spans.
        lengths: letter counts.
        seed: fixes spans and hints; each (source, condition) draws from its own stream.
        context_chars: characters of prefix and of suffix.
        uncertain_excluded: conditions also written with uncertain-excluded context (``:ue``).
        avoid_supplied: skip spans overlapping an editor's supplement.

    Returns:
        Gap examples, condition by condition, spans in the same order within each.
    """
    docs = _docs(table.filter(pc.equal(table["source"], source)))
    spans = sample_spans(docs, per_length, list(lengths), _rng(seed, GAP_SAMPLER, source), avoid_supplied)
    conditions = list(conditions)
    excluded = set(uncertain_excluded)
    out = []
    for cond in conditions:
        hints = hints_for(spans, cond, _rng(seed, GAP_SAMPLER, source, cond))
        for variant in (False, True) if cond in excluded else (False,):
            for span, hint in zip(spans, hints):
                doc = docs[span.row]
                gid = GapId(source, split, doc.id, span.length, span.tag, cond, variant)
                out.append(_example(doc, span, gid, hint, "synthetic", context_chars))
    return out


def build_true_lacunae(
    table: pa.Table, source: str, split: str, limit: int | None = None, seed: int = 0,
    context_chars: int = 250, max_letters: int = 20, uncertain_excluded: bool = False,
) -> list[GapExample]:  # fmt: skip
    """Silver gaps: editor-supplied spans with their real context and exact letter count.

    Args:
        limit: keep this many, drawn uniformly without replacement (seeded) and returned in
            document order; ``None`` keeps all. The natural length distribution is kept.
        max_letters: longer supplements are skipped.
        uncertain_excluded: also write each gap with uncertain-excluded context (``:ue``).
    """
    docs = _docs(table.filter(pc.equal(table["source"], source)))
    spans = supplied_spans(docs, max_letters)
    if limit is not None and limit < len(spans):
        keep = np.sort(_rng(seed, GAP_SAMPLER, source, "true").choice(len(spans), size=limit, replace=False))
        spans = [spans[int(i)] for i in keep]
    out = []
    for variant in (False, True) if uncertain_excluded else (False,):
        for span in spans:
            doc = docs[span.row]
            gid = GapId(source, split, doc.id, span.length, span.tag, "exact", variant)
            out.append(_example(doc, span, gid, Hint.exact(span.length), "true", context_chars))
    return out


def true_lacunae_under_hints(
    table: pa.Table, source: str, split: str, limit: int | None = None, seed: int = 0
) -> list[GapExample]:
    """:func:`build_true_lacunae` (``limit`` supplements drawn by ``seed``, in document order), each
    asked three ways, one after the other: with its exact count, a range that contains it
    (:func:`range_hint`, drawn by ``seed``) and no count (ids ending ``:exact``, ``:range``, ``:none``)."""
    rng = _rng(seed, GAP_SAMPLER, source, "true-range")
    out = []
    for gap in build_true_lacunae(table, source, split, limit, seed):
        gid = parse_gap_id(gap.id)
        out.append(gap)
        for cond, hint in (("range", range_hint(gid.length, rng)), ("none", NO_HINT)):
            other = GapId(gid.source, gid.split, gid.doc, gid.length, gid.tag, cond)
            out.append(replace(gap, id=str(other), hint=hint))
    return out


def build_from_prepared(
    prepared: Path, split: str, sources: Iterable[str], per_length: int, conditions: Iterable[str] = CONDITIONS,
    true_lacunae: int = 0, seed: int = 0, context_chars: int = 250, uncertain_excluded: Iterable[str] = ("exact",),
    lengths: Iterable[int] = range(1, 21),
) -> list[GapExample]:  # fmt: skip
    """Synthetic gaps (every condition) and ``true_lacunae`` silver gaps for each source of a
    prepared split; uncertain-excluded copies for the conditions in ``uncertain_excluded``
    (and for the silver gaps when that includes ``exact``).

    Raises:
        ValueError: a source has no documents in the split.
    """
    table = load_documents(Path(prepared), split, list(sources))
    conditions, excluded, lengths = list(conditions), list(uncertain_excluded), list(lengths)
    out: list[GapExample] = []
    for source in sources:
        if not pc.any(pc.equal(table["source"], source)).as_py():
            raise ValueError(f"no {split} documents of source {source!r} in {prepared}")
        if per_length > 0:
            out += build_synthetic(table, source, split, per_length, conditions, lengths, seed, context_chars, excluded)
        if true_lacunae > 0:
            out += build_true_lacunae(
                table, source, split, true_lacunae, seed, context_chars, uncertain_excluded="exact" in excluded
            )
    return out


def load_gaps(path: Path) -> list[GapExample]:
    """A gap set from our JSONL or from a Cullhed chat JSONL (recognised by ``messages``).

    Raises:
        FileError: the file cannot be read or is not UTF-8.
        FormatError: a malformed line, a repeated gap id, or a context holding a machine
            reading ``⁅…⁆`` (``E312``).
    """
    first = next((line for _, line in read_lines(path) if line.strip()), "{}")
    if '"messages"' in first:
        return read_cullhed_chat(path)
    return read_gapset(path, check=_no_machine_reading)


def _no_machine_reading(gap: GapExample) -> None:
    """Refuse a context holding a machine reading ``⁅…⁆`` (``E312``): the model's letters are no
    context of the papyrus."""
    for side in ("prefix", "suffix"):
        check_no_machine_reading(getattr(gap, side), f" of the {side} of gap {gap.id!r}")


__all__ = [
    "CONDITIONS", "GAP_SAMPLER", "GapId", "Span", "build_from_prepared", "build_synthetic", "build_true_lacunae",
    "condition_of", "hints_for", "is_excluded", "load_gaps", "parse_gap_id", "range_hint", "sample_spans",
    "supplied_spans", "wrong_hint",
]  # fmt: skip
