"""Typed, JSON-ready restoration results: one declaration for the core that builds them, the
CLI's ``--json``, the Python API and ``POST /api/restore`` (its ``response_model``: ``/docs``
shows these fields and descriptions). Pydantic models, declared here rather than in
:mod:`apollo_restore.schema` because their derived parts (what the restored text fills, the
edition form) are computed by the data layer's splice, which the schema's layer cannot import.

    result = restore_text(restorer, request)      # a Restoration
    result.gaps[0].candidates[0].text, result.restored_leiden
    result.to_dict()                              # the JSON every door writes
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
    computed_field,
    field_serializer,
    model_validator,
)

from apollo_restore.data.document import Lacuna
from apollo_restore.data.normalise import letter_count
from apollo_restore.data.readers.leiden import GapMarker, find_gaps
from apollo_restore.data.splice import Fill, splice, written
from apollo_restore.errors import LeidenError
from apollo_restore.hint import Hint
from apollo_restore.restoration.line_lengths import LineEstimate
from apollo_restore.schema.answers import Fingerprint, Version
from apollo_restore.version import __version__

#: Least calibrated probability of a gap's first reading for it to be written into the restored
#: text (:attr:`Restoration.restored_leiden`); below it the gap stays open. Chosen from the shipped
#: model's calibration (``calibration.json``, ``info.above_90_after_cross_fitted``): on validation
#: real lacunae (editors' supplements of ddb and inscriptions), first readings shown at ≥ 90 % were
#: 28 % of the gaps and right 97 % of the time; at 0.8, 95 %: at the edge of the 95 % asked (issue 45).
FILL_THRESHOLD = 0.9
#: What every door says of a gap of lost lines (never searched: no reading can be checked against them).
LOST_LINES_LABEL = "lost lines: not restored"


class _Answer(BaseModel):
    """A part of a restoration: declared fields, assignable (the ranking sets probabilities and
    origins as it goes), never validated again on assignment."""

    model_config = ConfigDict(arbitrary_types_allowed=True)


class Candidate(_Answer):
    """One proposed reading for a gap.

    Attributes:
        text: the restored letters (``norm.v1``); scoring and matching use this.
        prob: with ``calibrated``, the fitted chance that this is the edition's reading (the
            list's probabilities sum to the chance that it holds the right one); without,
            the restorer's probability normalised over the returned candidates.
        log_score: the model's log-probability of the middle and its end (nats).
        origin: ``"model"`` (beam search), ``"parallel"`` (found in a parallel passage and
            scored by the model), or both.
        citations: ids of documents where the reading stands in a parallel passage.
        display: the reading as an edition writes it (accents, breathings, iota subscript,
            capitals, final sigma), chosen with the whole words it makes with the context;
            ``""`` when not computed.
        unknown_words: words the reading makes with the context that no training edition
            spells (e.g. a truncated word where the gap ends at a word boundary).
        notes: why the reading may be doubtful, in plain words (``"9 letters, hint 7"``,
            ``"repeats the text after the gap"``, ``"leaves a non-word: τωια"``; such readings
            are demoted: :mod:`apollo_restore.restoration.presentation.notes`); empty when nothing is.
        calibrated: whether ``prob`` is calibrated (see :mod:`apollo_restore.restoration.ranking.calibration`).
    """

    text: str = Field(description="The proposed letters (normalised: no accents, lower case); what the model scored.")
    prob: float = Field(
        description="With `calibrated`: how often a reading shown with this probability was the edition's "
        "reading on held-out texts (a gap's probabilities sum to the chance that the list holds it); "
        "without: normalised over the returned candidates."
    )
    log_score: float = Field(description="The model's log-probability of the reading (nats).")
    origin: list[str] = Field(
        default_factory=lambda: ["model"],
        description='"model" (beam search) and/or "parallel" (found in a parallel passage).',
    )
    citations: list[str] = Field(
        default_factory=list, description="Documents where the reading stands in a parallel passage."
    )
    display: str = Field(
        "",
        description="The reading in edition form (accents, breathings, iota subscript, final sigma), "
        "chosen from the training editions with the whole words it makes with the context.",
    )
    unknown_words: list[str] = Field(
        default_factory=list,
        description="Words the reading makes with its context that no training edition "
        "spells (e.g. a truncated word at a word boundary); such readings are demoted.",
    )
    notes: list[str] = Field(
        default_factory=list,
        description='Why the reading may be doubtful, in plain words: "9 letters, hint 7" (outside the hint), '
        '"repeats the text after the gap" (or before: it copies the context next to the gap), "leaves a '
        'non-word: τωια"; readings that repeat the context or miss an exact hint are demoted. Empty: nothing to say.',
    )
    calibrated: bool = Field(False, description="Whether `prob` is calibrated.")

    def __init__(self, text: str, prob: float, log_score: float, **rest: Any) -> None:
        super().__init__(text=text, prob=prob, log_score=log_score, **rest)

    def replace(self, **changes: Any) -> Candidate:
        """A copy with ``changes`` (field → value)."""
        return self.model_copy(update=changes)


def percent(prob: float) -> str:
    """A probability as every interface shows it (CLI, page, export): ``42 %``, ``<1 %``
    below 0.5 %, ``>99 %`` from 99.5 % (a rounded ``0 %`` or ``100 %`` would claim too much)."""
    if prob < 0.005:
        return "<1 %"
    if prob >= 0.995:
        return ">99 %"
    return f"{math.floor(prob * 100 + 0.5)} %"  # halves up, as the page's Math.round


def _hint_of(value: Any) -> Hint:
    return value if isinstance(value, Hint) else Hint.from_json(value)


#: A gap's length hint: a :class:`~apollo_restore.hint.Hint` in Python, its interchange form in JSON.
HintField = Annotated[
    Hint,
    PlainValidator(_hint_of),
    PlainSerializer(lambda hint: hint.to_json(), return_type=Any),
    WithJsonSchema({"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}, {"type": "null"}]}),
]


class LengthEstimateJSON(BaseModel):
    """A gap's line-length estimate as the JSON gives it (:class:`~.line_lengths.LineEstimate` and
    whether the first reading agrees with it)."""

    lo: int = Field(description="Fewest letters.")
    hi: int = Field(description="Most letters.")
    lines: int = Field(description="Intact lines it was read from.")
    agrees: bool | None = Field(
        None, description="Whether the first reading's letters fall within it (null: no reading)."
    )


class GapResult(_Answer):
    """The candidates for one gap of the input.

    Attributes:
        number: the gap's number among the input's gaps, counted from 1 (as every display,
            ``--hint``, ``hints=`` and ``pins=`` count them).
        hint: the length hint used (letters).
        prefix, suffix: the normalised context next to the gap, at most
            :data:`~apollo_restore.restoration.context.DEFAULT_WINDOW` characters each side
            (later gaps as ``…``); the model reads the part nearest the gap.
        candidates: best first.
        pinned: the reading the caller fixed for this gap, if any (then no search was run).
        span: ``(start, end)`` character offsets of the gap in the input text, when known.
        length_estimate: for a gap of unknown length in a text with lines, the letters it
            probably lost, from the letters per line of the intact lines
            (:mod:`apollo_restore.restoration.line_lengths`); ``None`` otherwise.
        lost_lines: a gap of whole lines lost (``lost.?lin``, ``<gap unit="line">``) without a
            count given: not searched (no candidates; :attr:`hint_label` says so).
        reads: the numbers (from 1) of the earlier gaps whose reading stands in the context the
            model reads for this gap (its ``context_chars``:
            :meth:`~apollo_restore.restoration.context.GapContexts.read_by`): another reading in
            one of them changes this gap's context, one in any other gap does not (what the web
            page restores again after a pick).
    """

    number: int = Field(description="The gap's number, counted from 1 (as `hints`, `pins` and errors count).")
    hint: HintField = Field(description="Letters assumed: exact, `[lo, hi]` or null.")
    prefix: str = Field(description="Normalised context before the gap, as the model saw it.")
    suffix: str = Field(description="Normalised context after the gap (later gaps as `…`).")
    candidates: list[Candidate] = Field(description="Best first; empty when the gap is pinned.")
    pinned: str | None = Field(None, description="The reading the caller pinned, if any.")
    span: tuple[int, int] | None = Field(
        None, description="`[start, end)` character offsets of the gap in the input text."
    )
    ms: float = Field(0.0, description="Milliseconds spent on this gap.")
    length_estimate: LineEstimate | None = Field(
        None, description="For a gap of unknown extent in a text with lines: the letters it probably lost."
    )
    lost_lines: bool = Field(
        False, description="A gap of lost lines without a count: not searched (no candidates), never filled."
    )
    reads: tuple[int, ...] = Field(
        (),
        description="The earlier gaps (numbers from 1) whose reading stands in the context the model reads for "
        "this gap: a new reading (a pin, a fill) in one of them changes this gap's context and readings, one in "
        "any other gap does not (the page restores only these again after a pick).",
    )
    #: the least calibrated probability of a first reading that :attr:`filled` writes (the
    #: restoration's :attr:`Restoration.fill_threshold`, set by it)
    fill_threshold: float = Field(FILL_THRESHOLD, exclude=True)

    def __init__(self, number: int, hint: Hint, prefix: str, suffix: str, candidates: list[Candidate],
                 pinned: str | None = None, span: tuple[int, int] | None = None, **rest: Any) -> None:  # fmt: skip
        super().__init__(number=number, hint=hint, prefix=prefix, suffix=suffix, candidates=candidates,
                         pinned=pinned, span=span, **rest)  # fmt: skip

    @computed_field(description="Whether `restored_leiden` fills this gap: pinned, or its first reading calibrated "
                    "at ≥ `fill_threshold`, making known words, in a gap of given extent.")  # fmt: skip
    @property
    def filled(self) -> bool:
        return self.fill(self.fill_threshold) is not None

    @computed_field(description='The gap\'s count in words, as the CLI prints it: "7 letters", "no length hint; '
                    '≈ 11–14 letters, from line lengths", "lost lines: not restored".')  # fmt: skip
    @property
    def label(self) -> str:
        return self.hint_label

    @field_serializer("length_estimate")
    def _estimate(self, estimate: LineEstimate | None) -> LengthEstimateJSON | None:
        if estimate is None:
            return None
        return LengthEstimateJSON(lo=estimate.lo, hi=estimate.hi, lines=estimate.lines, agrees=self.estimate_agrees)

    @property
    def hint_label(self) -> str:
        """The hint in words: ``7 letters``, ``5–8 letters`` or ``no length hint``, with the
        line-length estimate where there is one (``no length hint; ≈ 11–14 letters, from line
        lengths``); ``lost lines: not restored`` for lost lines."""
        if self.lost_lines:
            return LOST_LINES_LABEL
        if self.length_estimate is not None and not self.hint.given:
            estimate = self.length_estimate
            if self.estimate_agrees is False:  # never shown beside a reading it contradicts without a word
                count = f"{estimate.lo}" if estimate.lo == estimate.hi else f"{estimate.lo}–{estimate.hi}"
                first = letter_count(self.candidates[0].text)
                return (
                    f"{self.hint.format()}; line lengths suggest ≈ {count} letters, not the first reading's "
                    f"{first}: give {count} as a hint to search only those"
                )
            return f"{self.hint.format()}; {estimate.format()}"
        return self.hint.format()

    @property
    def estimate_agrees(self) -> bool | None:
        """Whether the first reading's letters fall within :attr:`length_estimate` (``None``:
        no estimate, a given hint, or no reading)."""
        if self.length_estimate is None or self.hint.given or not self.candidates or self.pinned is not None:
            return None
        return self.length_estimate.lo <= letter_count(self.candidates[0].text) <= self.length_estimate.hi

    @property
    def best(self) -> str:
        """The pinned reading, else the top candidate's text, else ``""``."""
        if self.pinned is not None:
            return self.pinned
        return self.candidates[0].text if self.candidates else ""

    def context_fill(self, threshold: float = FILL_THRESHOLD) -> str | None:
        """What later gaps read in this gap's place: :attr:`best` for a pinned gap or one of given
        extent (a count or a range: the gaps are filled left to right), or where :meth:`fill` would
        write it into the text; else ``None`` (the gap stays a gap, ``…``: the guess for lost
        lines or an unknown extent never feeds the next gaps, issue 64)."""
        if self.pinned is not None or self.hint.given or self.filling(threshold) is not None:
            return self.best
        return None

    def fill(self, threshold: float = FILL_THRESHOLD) -> str | None:
        """What the restored text writes for this gap: ``⁅pinned⁆`` (the caller's reading, written
        as a machine reading: the edition's ``[ ]`` are the editor's supplements, and read back a
        pin must be a gap to restore again, not context), ``⁅reading⁆`` (the model's first
        reading in edition form) when that reading is
        calibrated, at least ``threshold`` probable and makes only words the editions spell, and
        the gap's extent is given (a count or a range: a lost line or a gap of unknown extent is
        never filled); else ``None`` (the gap stays open)."""
        fill = self.filling(threshold)
        if fill is None:
            return None
        return written(fill)

    def filling(self, threshold: float = FILL_THRESHOLD) -> Fill | None:
        """What :meth:`fill` writes, as a :class:`~apollo_restore.data.splice.Fill`: the letters
        and whether they are the machine's."""
        if self.pinned is not None:
            return Fill(self.pinned, machine=True)
        if not self.candidates or not self.hint.given:
            return None
        top = self.candidates[0]
        if not top.calibrated or top.prob < threshold or top.unknown_words:
            return None
        return Fill(top.display or top.text, machine=True)


class Restoration(_Answer):
    """All gaps of one input text, filled left to right.

    Attributes:
        text: the input text.
        gaps: one result per gap.
        model: the name of the model.
        ms: milliseconds spent in all.
        restored_text: the normalised text with every gap filled by its best reading, as the
            model read the later gaps' context (lost lines and gaps of unknown extent as ``…``;
            unmarked letters: for machines, not for print; :attr:`restored_leiden` is the text to show).
        warnings: ``W3xx`` messages: why the readings deserve less trust (foreign letters,
            little context); empty when there is nothing to say.
        pins: readings pinned for gaps not asked (``only``), by gap number from 1: written into
            :attr:`restored_leiden` as the asked gaps' pins are.
        version: the apollo-restore version that restored it.
        model_fingerprint: the model folder's fingerprint (:func:`~apollo_restore.model.folder.fingerprint`;
            ``None`` for a restorer of no folder): with ``version``, what to cite.
        kind: the kind of text whose calibration the gaps took (``documentary``, ``literary``,
            ``inscription``; ``None``: a restorer whose probabilities do not depend on it).
        kind_read: whether :attr:`kind` was read from the text rather than given.
    """

    text: str = Field(description="The input text as read: Leiden (EpiDoc XML and Beta Code converted to it).")
    gaps: list[GapResult] = Field(description="One result per gap asked (all, or those of `only`).")
    model: str = Field("", description="Name of the model that proposed the readings.")
    ms: float = Field(0.0, description="Milliseconds spent in all.")
    restored_text: str = Field(
        "",
        description="The normalised text with every gap filled by its best reading, unmarked (as the model read "
        "the context of later gaps); for display use `restored_leiden`.",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="`W3xx` reasons to trust the readings less (foreign letters, little Greek context).",
    )
    fill_threshold: float = Field(
        FILL_THRESHOLD, description="Least calibrated probability of a first reading written into it."
    )
    kind: str | None = Field(
        None, description="The kind of text whose calibration the gaps took (documentary, literary, inscription)."
    )
    kind_read: bool = Field(False, description="Whether `kind` was read from the text (not given).")
    gaps_in_text: int | None = Field(
        None, description="Gaps of the whole text (`gaps` holds those asked, `only`): how many requests remain."
    )
    pins: dict[int, str] = Field(
        default_factory=dict,
        description="Readings pinned for gaps not asked (`only`), by gap number from 1: written into "
        "`restored_leiden` as the asked gaps' pins are.",
    )
    version: Version = __version__
    model_fingerprint: Fingerprint = None

    def __init__(self, text: str, gaps: list[GapResult], model: str = "", ms: float = 0.0, restored_text: str = "",
                 warnings: list[str] | None = None, **rest: Any) -> None:  # fmt: skip
        super().__init__(text=text, gaps=gaps, model=model, ms=ms, restored_text=restored_text,
                         warnings=[] if warnings is None else warnings, **rest)  # fmt: skip

    @model_validator(mode="after")
    def _threshold_of_the_gaps(self) -> Restoration:
        for gap in self.gaps:
            gap.fill_threshold = self.fill_threshold
        return self

    def to_dict(self) -> dict[str, Any]:
        """The JSON every door writes (each gap's hint in its interchange form: ``null``, ``7``
        or ``[5, 8]``; ``filled``: whether :attr:`restored_leiden` fills it), with
        :attr:`restored_leiden`."""
        return self.model_dump(mode="json")

    @computed_field(description="The text in edition form: a gap is filled with the model's reading as `⁅reading⁆` "
                    "only where `filled`, and a pinned reading as `⁅reading⁆` too (never the editor's `[ ]`); the "
                    "other gaps stay as written.")  # fmt: skip
    @property
    def restored_leiden(self) -> str:
        """The input text as an edition would print it: each gap replaced by
        :meth:`GapResult.fill` (a machine reading or a pinned one as ``⁅reading⁆``) or left
        as written where no reading is likely enough, everything else byte for byte as given
        (:func:`~apollo_restore.data.splice.splice`: a machine reading is never written inside
        the editor's ``[ ]``, across line breaks too); the normalised :attr:`restored_text`
        when gap positions are unknown."""
        if not self.gaps or any(g.span is None for g in self.gaps):
            return self.restored_text
        try:
            markers = find_gaps(self.text)
        except LeidenError:
            markers = []
        at = {(m.start, m.end): k for k, m in enumerate(markers)}
        if all(g.span in at for g in self.gaps):  # the asked gaps among all the text's (only)
            fills = {k - 1: Fill(r, machine=True) for k, r in self.pins.items() if 1 <= k <= len(markers)}
            for gap in self.gaps:
                if (f := gap.filling(self.fill_threshold)) is not None:
                    fills[at[gap.span]] = f  # type: ignore[index]
        else:  # spans of another text
            markers = [GapMarker(g.span[0], g.span[1], g.hint, Lacuna(None)) for g in self.gaps]  # type: ignore[index]
            fills = {k: f for k, gap in enumerate(self.gaps) if (f := gap.filling(self.fill_threshold)) is not None}
        return splice(self.text, markers, fills)
