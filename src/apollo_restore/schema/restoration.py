"""The restoration's request and answer, declared once: the CLI, the Python API
(:func:`apollo_restore.restore`) and ``POST /api/restore`` (its body and its ``response_model``:
``/docs`` shows these fields) take and give these, and the core
(:func:`~apollo_restore.restoration.driver.restore_text`) runs and builds them.

    request = RestoreRequest("ἔτους [.5] Ἀντωνίνου", hints={1: "ca.5"}, k=10)   # gap 1: the first
    result = restore_text(restorer, request)      # a Restoration
    result.gaps[0].candidates[0].text, result.restored_leiden
    result.to_dict()                              # the JSON every door writes

A request's fields are checked here for their type and bounds (a web body: ``H002``; the Python
API and the CLI: the numbered ``E3xx`` of the field, :meth:`RestoreRequest.__init__`); what
depends on the text and on the limits of the door (gap numbers, letters, readings) is checked by
:func:`~apollo_restore.restoration.request.validate`. An answer's parts that read the data layer
(the gap's label, which counts the first reading's letters; the edition form, spliced into the
Leiden text) are computed by the core when it builds the answer
(:mod:`apollo_restore.restoration.answer`) and declared here as plain fields.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    WithJsonSchema,
    computed_field,
    model_validator,
)

from apollo_restore.errors import RequestError
from apollo_restore.hint import Hint
from apollo_restore.schema.answers import Fingerprint, Version
from apollo_restore.schema.folder import TEXT_KINDS
from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS, MOST
from apollo_restore.version import __version__

#: Least calibrated probability of a gap's first reading for it to be written into the restored
#: text (:attr:`Restoration.restored_leiden`); below it the gap stays open. Chosen from the shipped
#: model's calibration (``calibration.json``, ``info.above_90_after_cross_fitted``): on validation
#: real lacunae (editors' supplements of ddb and inscriptions), first readings shown at ≥ 90 % were
#: 28 % of the gaps and right 97 % of the time; at 0.8, 95 %: at the edge of the 95 % asked (issue 45).
FILL_THRESHOLD = 0.9
#: What every door says of a gap of lost lines (never searched: no reading can be checked against them).
LOST_LINES_LABEL = "lost lines: not restored"
#: Longest hint written as text (``"ca.7"``, ``"5-8"``: a few characters).
HINT_CHARS = 32

#: A typical request's text (the API docs' example; ``serve`` restores it once to measure its cost).
EXAMPLE = (
    "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4] χαίρειν. "
    "ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν [.12] πυρρὰν κεχαραγμένην"
)

_HINT_FORMS = "letters (7), a range [5, 8], text as typed (5-8, ca.7, none) or null"


def _hint_value(value: Any) -> Any:
    """A hint as a request may give it (:data:`HintValue`), kept as given: what it means for its
    gap is read by :func:`~apollo_restore.restoration.request.parse_hint_value`."""
    if value is None or isinstance(value, Hint):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and len(value) <= HINT_CHARS:
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    raise ValueError(f"a hint is {_HINT_FORMS}")


#: A gap's length hint in a request: letters (``7``), a range (``[5, 8]``), text as typed
#: (``"7"``, ``"5-8"``, ``"ca.7"``, ``"none"``) or ``null``; in Python also a :class:`Hint`.
HintValue = Annotated[
    Any,
    PlainValidator(_hint_value),
    PlainSerializer(lambda value: value.to_json() if isinstance(value, Hint) else value, return_type=Any),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer"},
                {"type": "array", "items": {"type": "integer"}},
                {"type": "string", "maxLength": HINT_CHARS},
                {"type": "null"},
            ]
        }
    ),
]


def _chars(value: Any) -> str:
    """Any Python string of at most :data:`MOST` characters, as given: its characters (a lone
    surrogate, a control character) are checked with the text, as a numbered ``E309``."""
    if not isinstance(value, str):
        raise ValueError("text (a string)")
    if len(value) > MOST:
        raise ValueError(f"at most {MOST:,} characters")
    return value


#: Text as a caller gives it: characters the text's checks refuse are theirs to name (``E309``).
Chars = Annotated[str, PlainValidator(_chars), WithJsonSchema({"type": "string", "maxLength": MOST})]


def _by_gap(description: str) -> Any:
    """A field of values by gap number (counted from 1), none by default."""
    return Field(default_factory=dict, max_length=MOST, description=description)


class RestoreRequest(BaseModel):
    """A text to restore and what the caller asks of it: the body of ``POST /api/restore``, the
    arguments of ``apollo_restore.restore`` and of ``apollo-restore restore``.

    Gaps are numbered from 1 in the text's order, in every field and every message. The limits a
    door allows (``/api/health``'s ``limits``; :class:`~apollo_restore.schema.limits.RequestLimits`)
    are checked with the text (:func:`~apollo_restore.restoration.request.validate`).
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"examples": [{"text": EXAMPLE, "hints": {"2": [10, 14]}, "k": 10}]},
    )

    text: Chars = Field(
        description="Leiden text: `[.5]`, `[ca.5]`, `[.5-8]`, `[- - -]`, `???` mark lost letters; "
        "or an EpiDoc XML document, or Beta Code (read as Leiden, with warning W303); at most "
        "`max_text_chars` characters.",
    )
    hints: dict[int, HintValue] = _by_gap(
        "Length hints overriding the text's, by gap number (counted from 1): letters (`7`), a range "
        '(`[5, 8]`), text as typed (`"5-8"`, `"ca.7"`, `"none"`) or `null` (unknown); at most `max_gap_letters`.',
    )
    pins: dict[int, Chars] = _by_gap(
        "Readings fixed by the user, by gap number (from 1): Greek letters, at most `max_pin_chars` "
        "characters; those gaps are not searched, and later gaps are restored with them in place.",
    )
    k: int = Field(20, ge=1, le=MOST, strict=True, description="Candidates per gap (readings; at most `max_k`).")
    only: list[Annotated[int, Field(strict=True)]] | None = Field(
        None,
        max_length=MOST,
        description="The numbers (from 1) of the gaps to restore, all by default; at most `max_gaps` "
        "(`/api/health`). The whole text is still read: a long text is restored a few gaps per request, "
        "each with the context a restoration of the whole text gives it (the page asks one gap at a time).",
    )
    fills: dict[int, Chars] = _by_gap(
        "What each gap before the last one asked, neither asked nor pinned, holds: its first "
        'reading of an earlier request (`candidates[0].text`, `""` where it had none), by gap number.',
    )
    kind: Literal[TEXT_KINDS] | None = Field(
        None,
        description="The kind of text, whose calibration its gaps take; null (the default): read from the text.",
    )

    def __init__(
        self,
        text: Any = None,
        hints: Mapping[Any, Any] | None = None,
        pins: Mapping[Any, Any] | None = None,
        k: Any = 20,
        **rest: Any,
    ) -> None:
        """A request from Python values (the CLI, the Python API): ``None`` for ``hints``,
        ``pins`` or ``fills`` is none given.

        Raises:
            RequestError: a value the declaration refuses, as the numbered error of its field
                (``E305`` k, ``E306`` hints, ``E307`` pins and readings, ``E310`` a value of
                another type, ``E327`` only, ``E328`` fills); a web body is refused with ``H002``.
        """
        given = {"text": text, "hints": {} if hints is None else hints, "pins": {} if pins is None else pins}
        given.update(k=k, **rest)
        if rest.get("fills") is None:
            given.pop("fills", None)
        try:
            super().__init__(**given)
        except ValidationError as err:
            raise refusal(err) from None


def refusal(err: ValidationError) -> RequestError:
    """The numbered error of a :class:`RestoreRequest` field that pydantic refuses (its first)."""
    first = err.errors(include_url=False)[0]
    loc, value = tuple(first["loc"]), first.get("input")
    field = loc[0] if loc else "request"
    if field == "k":
        return RequestError("E305", k=value, limit=DEFAULT_REQUEST_LIMITS.max_k)
    if field == "text":
        if isinstance(value, str):  # beyond any limit a door may allow
            return RequestError("E302", n=len(value), limit=MOST)
        return RequestError("E310", name="text", expected="a string", value=type(value).__name__)
    if field == "kind":
        expected = f"one of {', '.join(TEXT_KINDS)} (or none: read from the text)"
        return RequestError("E310", name="kind", expected=expected, value=value)
    if field == "only":
        if len(loc) == 1:
            return RequestError("E310", name="only", expected="a list of gap numbers", value=type(value).__name__)
        return RequestError("E327", gap=value, reason="gap numbers are whole numbers counted from 1")
    if field in ("hints", "pins", "fills"):
        code = {"hints": "E306", "pins": "E307", "fills": "E328"}[field]
        if len(loc) == 1:
            expected = "a mapping of gap number to value"
            return RequestError("E310", name=field, expected=expected, value=type(value).__name__)
        if len(loc) > 2 and loc[2] == "[key]":
            return RequestError(code, gap=loc[1], reason="gap numbers are whole numbers counted from 1")
        if field == "hints":
            return RequestError("E306", gap=loc[1], reason=f"{_shown(value)} is not a letter count: give {_HINT_FORMS}")
        if isinstance(value, str):
            return RequestError("E307", gap=loc[1], reason=f"longer than {MOST:,} characters")
        return RequestError("E307", gap=loc[1], reason=f"a reading is text, not {type(value).__name__}")
    names = ", ".join(RestoreRequest.model_fields)
    return RequestError("E310", name=str(field), expected=f"a field of a request ({names})", value=value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


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


class LengthEstimate(_Answer):
    """Letters probably lost in a gap of unknown extent, from the line lengths around it, and
    whether the first reading agrees with it (made by ``restoration/line_lengths.py``)."""

    model_config = ConfigDict(frozen=True)

    lo: int = Field(description="Fewest letters (at least 1).")
    hi: int = Field(description="Most letters.")
    lines: int = Field(description="Intact lines it was read from.")
    agrees: bool | None = Field(
        None, description="Whether the first reading's letters fall within it (null: no reading)."
    )

    @property
    def hint(self) -> Hint:
        """The estimate as a (range) length hint."""
        return Hint.span(self.lo, self.hi)

    def format(self) -> str:
        """``≈ 11–14 letters, from line lengths`` (``≈ 12 letters`` when ``lo == hi``)."""
        count = f"{self.lo}" if self.lo == self.hi else f"{self.lo}–{self.hi}"
        return f"≈ {count} letters, from line lengths"


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
            probably lost (:class:`LengthEstimate`); ``None`` otherwise.
        lost_lines: a gap of whole lines lost (``lost.?lin``, ``<gap unit="line">``) without a
            count given: not searched (no candidates; :attr:`label` says so).
        reads: the numbers (from 1) of the earlier gaps whose reading stands in the context the
            model reads for this gap (its ``context_chars``:
            :meth:`~apollo_restore.restoration.context.GapContexts.read_by`): another reading in
            one of them changes this gap's context, one in any other gap does not (what the web
            page restores again after a pick).
        label: the gap's count in words (:func:`~apollo_restore.restoration.answer.gap_label`).
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
    length_estimate: LengthEstimate | None = Field(
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
    label: str = Field(
        description='The gap\'s count in words, as the CLI prints it: "7 letters", "no length hint; ≈ 11–14 '
        'letters, from line lengths", "lost lines: not restored".'
    )
    #: the least calibrated probability of a first reading that :attr:`filled` writes (the
    #: restoration's :attr:`Restoration.fill_threshold`, set by it)
    fill_threshold: float = Field(FILL_THRESHOLD, exclude=True)

    @computed_field(description="Whether `restored_leiden` fills this gap: pinned, or its first reading calibrated "
                    "at ≥ `fill_threshold`, making known words, in a gap of given extent.")  # fmt: skip
    @property
    def filled(self) -> bool:
        return self.filling(self.fill_threshold) is not None

    @property
    def best(self) -> str:
        """The pinned reading, else the top candidate's text, else ``""``."""
        if self.pinned is not None:
            return self.pinned
        return self.candidates[0].text if self.candidates else ""

    def context_fill(self, threshold: float = FILL_THRESHOLD) -> str | None:
        """What later gaps read in this gap's place: :attr:`best` for a pinned gap or one of given
        extent (a count or a range: the gaps are filled left to right), or where :meth:`filling`
        writes it into the text; else ``None`` (the gap stays a gap, ``…``: the guess for lost
        lines or an unknown extent never feeds the next gaps, issue 64)."""
        if self.pinned is not None or self.hint.given or self.filling(threshold) is not None:
            return self.best
        return None

    def filling(self, threshold: float = FILL_THRESHOLD) -> str | None:
        """The reading the restored text writes for this gap as the machine's ``⁅reading⁆``
        (:attr:`Restoration.restored_leiden`): the pinned one (the caller's reading, written as a
        machine reading: the edition's ``[ ]`` are the editor's supplements, and read back a pin
        must be a gap to restore again, not context), or the model's first reading in edition
        form when it is calibrated, at least ``threshold`` probable and makes only words the
        editions spell, and the gap's extent is given (a count or a range: a lost line or a gap of
        unknown extent is never filled); else ``None`` (the gap stays open)."""
        if self.pinned is not None:
            return self.pinned
        if not self.candidates or not self.hint.given:
            return None
        top = self.candidates[0]
        if not top.calibrated or top.prob < threshold or top.unknown_words:
            return None
        return top.display or top.text


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
        restored_leiden: the text in edition form
            (:func:`~apollo_restore.restoration.answer.restored_leiden`).
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
    restored_leiden: str = Field(
        description="The text in edition form: a gap is filled with the model's reading as `⁅reading⁆` only where "
        "`filled`, and a pinned reading as `⁅reading⁆` too (never the editor's `[ ]`); the other gaps stay as "
        "written."
    )

    @model_validator(mode="after")
    def _threshold_of_the_gaps(self) -> Restoration:
        for gap in self.gaps:
            gap.fill_threshold = self.fill_threshold
        return self

    def to_dict(self) -> dict[str, Any]:
        """The JSON every door writes (each gap's hint in its interchange form: ``null``, ``7``
        or ``[5, 8]``; ``filled``: whether :attr:`restored_leiden` fills it)."""
        return self.model_dump(mode="json")
