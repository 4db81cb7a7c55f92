"""Request and response models of the HTTP API that are the web's own (they document ``/docs``
and ``/openapi.json``). The requests and answers of restoration and attribution are not declared
here: the routes take and return the schema's own (:class:`~apollo_restore.schema.restoration.RestoreRequest`,
:class:`~apollo_restore.schema.restoration.Restoration`, :class:`~apollo_restore.schema.answers.Attribution`),
one declaration for the Python API, the CLI's ``--json`` and the web page.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from apollo_restore.schema.restoration import HintValue


class ParallelsRequest(BaseModel):
    """A Leiden ``text`` and the number of the ``gap`` whose parallels are wanted, with the hints
    and pins of the restoration shown (earlier gaps are filled by ``pins``)."""

    model_config = ConfigDict(extra="forbid")

    text: str
    gap: int = Field(1, ge=1, description="The gap's number, counted from 1.")
    hints: dict[int, HintValue] = Field(default_factory=dict, description="Length hints by gap number (from 1).")
    pins: dict[int, str] = Field(default_factory=dict, description="Readings of other gaps by gap number (from 1).")
    k: int = Field(10, ge=1, description="Readings wanted (most frequent first).")


class ParallelGroupOut(BaseModel):
    between: str = Field(description="The reading found between the contexts (normalised letters).")
    display: str = Field(
        description="The reading in edition form, cut from the whole words it makes with the gap's context."
    )
    count: int = Field(description="Occurrences in the training text.")
    n_docs: int = Field(description="Documents holding it.")
    docs: list[str] = Field(description="The first few of those documents.")
    urls: list[str | None] = Field(description="Where each of `docs` can be read (papyri.info or the corpus's page).")
    labels: list[str] = Field(
        default_factory=list, description="Each of `docs` as a reader names it (`IOSPE 3.26`, not `3.26`)."
    )
    examples: list[dict[str, Any]] = Field(description="Snippets: `doc`, `text`, `[start, end)` of the reading.")


class ParallelsOut(BaseModel):
    """The parallels of one gap: the same result as ``apollo-restore parallels --json`` gives for it."""

    gap: int = Field(description="The gap's number, counted from 1.")
    prefix: str = Field(description="Normalised context before the gap (other gaps as `-`/`…`).")
    suffix: str = Field(description="Normalised context after the gap.")
    left: str = Field(description="Left anchor used (letters, σ-folded); empty when the right anchored alone.")
    right: str = Field(description="Right anchor used; empty when the left anchored alone.")
    anchor: int = Field(description="Letters in the longer anchor (0: the context was too short).")
    hint: int | list[int] | None = Field(description="Letters the readings were filtered by.")
    total: int = Field(description="Occurrences over all readings.")
    groups: list[ParallelGroupOut] = Field(description="Readings, most frequent first.")


class AlternativeIn(BaseModel):
    """Another proposed reading of the same gap, exported as an `<rdg>` (EpiDoc) or in the apparatus (Leiden)."""

    text: str
    display: str | None = Field(None, description="Its edition form (written instead of `text`).")
    prob: float | None = Field(None, ge=0, le=1)


class ProvenanceRequest(BaseModel):
    """A text (Leiden or plain Greek) to check against the training data."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The text; normalised first, Leiden brackets ignored, lost letters break runs.")
    min_run: int = Field(40, ge=20, le=500, description="Shortest shared run reported (letters).")


class ProvenanceOut(BaseModel):
    letters: int = Field(description="Letters in the text.")
    min_run: int
    covered: int = Field(description="Letters of the text inside a run shared with some training document.")
    documents: list[dict[str, Any]] = Field(
        description="Training documents sharing runs: doc, source, url, longest, covered, start, end, snippet, "
        "label (the document as a reader names it: `IOSPE 3.26`), own (of covered, the letters at most 3 training "
        "documents share), holders (training documents sharing its longest run)."
    )
    verdict: Literal["unseen", "formulaic", "edition"] = Field(
        description="`edition`: one document shares most of the text, letters few documents hold (memorised); "
        "`formulaic`: only shared formulas (runs many documents hold)."
    )
    summary: str = Field(description="The verdict in a sentence (what the CLI prints).")


class Choice(BaseModel):
    """A machine-proposed reading accepted for export."""

    text: str
    prob: float | None = Field(None, ge=0, le=1, description="Its probability, quoted in the note.")
    display: str | None = Field(None, description="Its edition form (written instead of `text`).")
    alternatives: list[AlternativeIn] = Field(
        default_factory=list, max_length=20, description="Other readings, best first: EpiDoc `<app>`/`<lem>`/`<rdg>`."
    )


class ExportRequest(BaseModel):
    """A Leiden text (or an EpiDoc document) and the readings chosen for its gaps; every chosen
    reading is exported marked as a machine proposal (never as the editor's supplement), and
    everything else as it came in: with no reading chosen the export is the text itself."""

    model_config = ConfigDict(extra="forbid")

    text: str
    pins: dict[int, str] = Field(default_factory=dict, description="Readings by gap number (from 1).")
    choices: dict[int, Choice] = Field(
        default_factory=dict, description="Readings with probabilities (override `pins`)."
    )
    format: Literal["leiden", "epidoc"] = "leiden"


class ExportOut(BaseModel):
    format: Literal["leiden", "epidoc"]
    filename: str
    media_type: str
    content: str
    machine_readings: int = Field(description="How many readings are marked as machine proposals.")
    version: str = Field(description="The apollo-restore version that exported it (named in the export too).")
    model_fingerprint: str | None = Field(description="The model's fingerprint (named in the export too).")


class EpidocOut(BaseModel):
    id: str = Field(description="The document's id (from its idno or file name).")
    leiden: str = Field(description="Its Greek edition in Leiden conventions.")
    gaps: int = Field(description="Lacunae in it.")
    meta: dict[str, Any] = Field(default_factory=dict)


class HealthOut(BaseModel):
    status: Literal["ok"]
    model: str
    model_label: str = Field(description="The model in plain words (what the page shows).")
    parallels: bool = Field(description="Whether the text index (parallel passages, provenance) is loaded.")
    limits: dict[str, Any]
    running: int = Field(description="Restorations running now.")
    waiting: int = Field(description="Restoration requests waiting for a slot.")
    seconds_per_unit: float | None = Field(
        description="Measured seconds of a restoration slot per unit of work (a gap, and one more per 20 letters "
        "of its hint); null until measured. Admission refuses at once what would not end within the time limit."
    )


class ErrorDetail(BaseModel):
    code: str = Field(description="`E0xx` Leiden, `E3xx` request, `E101` EpiDoc, `H0xx` web layer, `H500` unexpected.")
    gap: int | None = Field(None, description="1-based number of the gap concerned.")
    message: str
    position: int | None = Field(None, description="0-based character offset of the problem in the text.")
    line: int | None = None
    column: int | None = None


class ErrorOut(BaseModel):
    error: ErrorDetail
