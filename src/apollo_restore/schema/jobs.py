"""One line of the files a job reads: a gap set's gap and a predictions file's prediction (our
interchange formats, ``docs/jobs.md``).

    from apollo_restore.schema.jobs import GapLine, PredictionLine
    line = check(GapLine, json.loads(text))      # SchemaError naming the field, or the line

:func:`apollo_restore.data.formats.read_gapset` and :func:`~apollo_restore.data.formats.read_predictions`
read every line through these models and report a refusal as ``E201`` naming the file, the line
and the field. Types are strict (no ``"5"`` for 5, no ``true`` for 1; NaN and infinities refused)
and every text and number is bounded, generously for real data: a context of 1,000,000 characters
(a whole text either side, as a restoration request takes it), an id of 300, a hint of 1,000
letters, 1,000 candidates a gap.
Keys a line does not declare are ignored, as they always were (another system's extra fields).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.schema.base import number, text

#: Most characters of an id (a gap's, a document's) or a source's name.
MAX_ID = 300
#: Most characters of a context either side of a gap, or of its answer: a restoration request's
#: whole text (``RequestLimits.max_text_chars``; the request check cuts a context to its window).
MAX_CONTEXT = 1_000_000
#: Most letters a hint counts.
MAX_HINT = 1000
#: Most candidates a prediction ranks, and most characters of one.
MAX_CANDIDATES, MAX_CANDIDATE_CHARS = 1000, 1000
#: Most milliseconds a prediction may record (about 11 days).
MAX_MS = 1e9

HINT_EXPECTED = f"null, a letter count from 1 to {MAX_HINT}, or [lo, hi] with 1 <= lo <= hi <= {MAX_HINT}"


def _hint(value: Any) -> Hint:
    """A line's ``hint`` (:data:`HINT_EXPECTED`) as a :class:`~apollo_restore.hint.Hint`."""
    hint = Hint.from_json(value)  # ValueError for anything but null, n >= 1, [lo, hi] with 1 <= lo <= hi
    if hint.given and hint.hi > MAX_HINT:
        raise ValueError(f"more than {MAX_HINT} letters")
    return hint


class Line(BaseModel):
    """One line of a job's file: strict types and bounds; undeclared keys ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, allow_inf_nan=False)


ID = text(MAX_ID, "an id")
NAME = Annotated[str, Field(max_length=MAX_ID, description=f"text of at most {MAX_ID} characters")]
CONTEXT = Annotated[str, Field(max_length=MAX_CONTEXT, description=f"text of at most {MAX_CONTEXT:,} characters")]
HINT = Annotated[Any, PlainValidator(_hint), Field(description=HINT_EXPECTED)]
KIND = Annotated[Literal["synthetic", "true"], Field(description='"synthetic" or "true"')]


class GapLine(Line):
    """A gap of a gap set: its context, its answer and its length hint."""

    id: ID
    source: NAME
    doc: NAME
    prefix: CONTEXT
    suffix: CONTEXT
    target: CONTEXT
    hint: HINT = NO_HINT
    kind: KIND = "synthetic"


class QuestionLine(GapLine):
    """A gap to predict: its answer may be left out (read as ``""``)."""

    target: CONTEXT = ""


class CandidateLine(Line):
    """One candidate of a prediction: its letters and their probability (``null``: none given)."""

    text: Annotated[
        str, Field(max_length=MAX_CANDIDATE_CHARS, description=f"text of at most {MAX_CANDIDATE_CHARS:,} characters")
    ]
    prob: number(0, 1, "a probability") | None = None


class PredictionLine(Line):
    """A prediction: the gap's id, its candidates best first, the milliseconds it took."""

    id: ID
    candidates: Annotated[
        list[CandidateLine],
        Field(max_length=MAX_CANDIDATES, description=f"a list of at most {MAX_CANDIDATES:,} candidates"),
    ]
    ms: number(0, MAX_MS, "milliseconds") | None = None


__all__ = ["CandidateLine", "GapLine", "HINT_EXPECTED", "MAX_CONTEXT", "MAX_HINT", "PredictionLine", "QuestionLine"]
