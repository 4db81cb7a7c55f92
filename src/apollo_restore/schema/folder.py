"""The files of a model folder that this package writes and reads: ``apollo_restore.json`` (its
ensemble members and their options, the search settings, the presentation) and
``calibration.json``.

    meta = check(FolderMeta, data)                       # the whole apollo_restore.json
    options = check(InfiniOptions, raw, "ensemble.members[1].options")   # a member class's options
    calibration = check(CalibrationFile, data)

Bounds follow from what a 2-core, 24 GiB machine can run within a request: a beam of at most
:data:`MAX_BEAM_WIDTH` rows, at most :data:`MAX_HINT_SLACK` letters beyond a hint (each letter of
slack widens every member's search), a context of at most :data:`MAX_CONTEXT_CODES` characters for
the unbounded-order member (its tables grow with it). ``config``, ``training``, ``data`` and the
other records say what made the folder; they are kept as written and never read when restoring.
"""

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PrivateAttr, model_validator
from pydantic_core import PydanticCustomError

from apollo_restore.schema.base import Record, Settings, number, text, whole

#: Most rows the neural beam keeps per step (the shipped folder: 40; the pool of readings is 20).
MAX_BEAM_WIDTH = 256
#: Most letters searched beyond a hint (the shipped folder: 5; tune tries at most 20).
MAX_HINT_SLACK = 20
#: Longest context the unbounded-order member matches (characters; the model reads 250 a side).
MAX_CONTEXT_CODES = 1000
#: Most members an ensemble lists.
MAX_MEMBERS = 32
#: Longest member name.
MAX_MEMBER_NAME = 40
#: What a member's label adds to its name when it reads right to left (:attr:`MemberEntry.label`).
BACKWARD = "_backward"
#: Longest list of member labels joined with ``+`` (a calibration's ``info.members``): every
#: member of the longest name read backward (:data:`BACKWARD` added), and the ``+`` between them.
MAX_MEMBER_LABELS = MAX_MEMBERS * (MAX_MEMBER_NAME + len(BACKWARD) + 1)
#: Largest weight of a member (the shipped length prior: 8).
MAX_WEIGHT = 1000.0
#: Largest magnitude of a calibration parameter (the shipped ones are below 3).
MAX_PARAMETER = 1000.0
#: A member's file in the model folder: a plain name, no folder.
FILE_NAME = r"^[^/\\\x00]+$"
#: The neural model's arithmetics on a CPU (``RestoreConfig.precision``, ``search.precision``).
PRECISIONS = ("fp32", "int8")
PRECISION = Literal[PRECISIONS]
CALIBRATION_FORMAT = "apollo_restore calibration.v2"
#: The hint conditions a calibration is fitted for; the product uses all three.
CONDITIONS = ("exact", "range", "none")
#: The kinds of gap a calibration is fitted for, each with its own parameters: ``real`` (a lacuna of
#: a text: every restoration through the CLI, the API and the web page, a gap set's ``kind`` "true")
#: and ``synthetic`` (letters cut out of text an editor read: a gap set's ``kind`` "synthetic").
GAP_KINDS = ("real", "synthetic")
#: The kinds of text whose real lacunae may have parameters of their own (``kinds.literary``,
#: ``kinds.inscription``); ``documentary`` texts, and every text of a kind without its own, read
#: ``kinds.real`` (fitted on documentary papyri).
TEXT_KINDS = ("documentary", "literary", "inscription")


# -- the ensemble's members -------------------------------------------------------------------


# Each member's class names its options model (``options = InfiniOptions``): the registry reads it.


class NoOptions(Settings):
    """A member that takes no options (``neural``, ``length``, ``copy``)."""


def _discounts(value: list[float]) -> list[float]:
    d1, d2, d3 = value
    if not (0 < d1 <= 1 and 0 <= d2 <= 2 and 0 <= d3 <= 3):
        raise ValueError("three discounts within (0, 1], [0, 2], [0, 3]")
    return value


Discounts = Annotated[list[float], Field(min_length=3, max_length=3), AfterValidator(_discounts)]


class InfiniOptions(Settings):
    """The unbounded-order member over the packaged training text."""

    direction: Literal["forward", "backward"] = Field("forward", description='"forward" or "backward"')
    discount: number(0, 1, "absolute discount D", above=True) | Discounts | None = Field(
        None, description="a number in (0, 1], or three within (0, 1], [0, 2], [0, 3] (D1, D2, D3+); absent: 0.6"
    )
    max_context: whole(1, MAX_CONTEXT_CODES, "longest context matched, characters") | None = None


class NgramOptions(Settings):
    """A counted n-gram model stored in the folder."""

    file: text(255, "an n-gram file (.npz) in the model folder", FILE_NAME)


class WordsOptions(Settings):
    """The member proposing the document's own words."""

    vocabulary: bool = Field(False, description="true or false: also propose known words that fit")


#: Smallest weight of a member that counts (below it, a weight times a log-probability of a few
#: hundred nats underflows towards 0 and the weighted mean ties every reading).
MIN_WEIGHT = 1e-6


def _weight(value: float) -> float:
    if 0 < value < MIN_WEIGHT:
        raise ValueError(f"0 (the member left out) or a number in [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}]")
    return value


Weight = Annotated[
    float,
    Field(ge=0, le=MAX_WEIGHT, description=f"0 (the member left out) or a number in [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}]"),
    AfterValidator(_weight),
]


class MemberEntry(Settings):
    """One member of the ensemble: a registered name, its weight, its options (checked against
    the member's own options model)."""

    name: text(MAX_MEMBER_NAME, "a registered member name")
    weight: Weight
    options: dict[str, Any] = Field(default_factory=dict, description="the member's options (below)")
    _field: str = PrivateAttr("ensemble.members")

    @property
    def field(self) -> str:
        """Its place in the file, for messages (``"ensemble.members[2]"``; set by :meth:`at`)."""
        return self._field

    def at(self, field: str) -> "MemberEntry":
        """This entry, placed at ``field`` of its file."""
        placed = self.model_copy()
        placed._field = field
        return placed

    @property
    def label(self) -> str:
        """How reports, calibrations and the tuner's weights name it: the name, :data:`BACKWARD`
        added for a member reading right to left (``infini_backward``)."""
        return f"{self.name}{BACKWARD}" if self.options.get("direction") == "backward" else self.name


class Search(Settings):
    """How every member searches; absent settings keep the caller's (``RestoreConfig``)."""

    hint_slack: whole(0, MAX_HINT_SLACK, "letters searched beyond a hint") | None = None
    beam_width: whole(1, MAX_BEAM_WIDTH, "rows the neural beam keeps per step") | None = None
    precision: PRECISION | None = Field(None, description='"fp32" or "int8": the neural model\'s CPU arithmetic')


class EnsembleEntry(Settings):
    """``apollo_restore.json``'s ``ensemble`` entry: members by name, the search settings, a pointer
    to how they were chosen (the restorer built of it, which holds the built members and none of
    these fields, is ``apollo_restore.restoration.members.ensemble.Ensemble``)."""

    members: list[MemberEntry] = Field(
        min_length=1, max_length=MAX_MEMBERS, description=f"a list of 1 to {MAX_MEMBERS} members"
    )
    search: Search = Search()
    chosen_by: text(500, "a pointer to how the settings were chosen") | None = None


#: probability factors (before calibration) of a truncated reading, of one that repeats the context
#: and of one whose letters miss an exact hint (``apollo_restore.restoration.ranking.doubts``), used
#: when a model folder's ``apollo_restore.json`` has no ``presentation.demotions`` entry; a folder's
#: entry is fitted on validation gaps by ``apollo-restore tune --what demotions`` (docs/training.md)
TRUNCATED_FACTOR = 0.1
REPEAT_FACTOR = 0.3
HINT_MISS_FACTOR = 0.01
#: with an exact hint, readings that miss the count go below every right-length reading that leaves
#: no unknown word and holds at least this share of the right-length readings' probability
#: (``hold_count``; ``None``: the hint-miss factor alone), chosen on ddb validation gaps with
#: right and wrong counts by ``benchmarks/exact_count.py`` (BENCHMARKS.md, "An exact count holds the top")
COUNT_FLOOR = 0.9


class Demotions(Settings):
    """Probability factors of doubtful readings (before calibration); absent: the package's
    defaults. Applied by ``apollo_restore.restoration.ranking.demotions.Demotions``, which adds
    no field."""

    truncated: number(0, 1, "a reading that leaves a truncated word", above=True) = TRUNCATED_FACTOR
    repeat: number(0, 1, "a reading that repeats the context", above=True) = REPEAT_FACTOR
    hint_miss: number(0, 1, "a reading that misses an exact count", above=True) = HINT_MISS_FACTOR
    count_floor: number(0, 1, "the share that holds an exact count; null: no hold", above=True) | None = COUNT_FLOOR


class Presentation(Settings):
    """What the presentation layer reads: the demotions."""

    demotions: Demotions = Demotions()


class FolderMeta(Settings):
    """``apollo_restore.json``: how the model reads text, its ensemble and presentation, and the
    records of what made it."""

    normaliser: text(100, "the text normaliser the model was trained with") | None = None
    fim_format: text(100, "the FIM layout the model was trained with") | None = None
    ensemble: EnsembleEntry | None = None
    presentation: Presentation | None = None
    size: Any = Field(None, description="record: the size trained")
    gap_sampler: Any = Field(None, description="record: how training gaps were drawn")
    config: Any = Field(None, description="record: the training configuration")
    data: Any = Field(None, description="record: the training data")
    training: Any = Field(None, description="record: the training history")
    consolidated_from: Any = Field(None, description="record: the checkpoint a large model was consolidated from")


# -- config.json (the neural model's shape) ---------------------------------------------------


class DecoderConfig(Record):
    """The fields of a Mistral-shaped decoder's ``config.json`` that this package reads (the lean
    model runs it); its other keys are Hugging Face's, kept as written. Sizes are bounded by what
    loads on a 24 GiB machine's CPU or one GPU."""

    model_type: Literal["mistral"] = Field(description='"mistral" (the decoder the lean model runs)')
    vocab_size: whole(1, 1_000_000, "tokens")
    hidden_size: whole(1, 65_536, "numbers per position")
    intermediate_size: whole(1, 262_144, "numbers per position in the MLP")
    num_hidden_layers: whole(1, 1024, "layers")
    num_attention_heads: whole(1, 1024, "query heads")
    num_key_value_heads: whole(1, 1024, "key/value heads")
    head_dim: whole(2, 4096, "numbers per head; even (rotary positions)") | None = None
    rms_norm_eps: number(0, 0.5, "added to the RMS norm's mean square", above=True)
    tie_word_embeddings: bool = Field(True, description="true: the head is the embedding")

    @model_validator(mode="after")
    def _shapes(self) -> "DecoderConfig":
        if self.num_attention_heads % self.num_key_value_heads:
            expected = f"a multiple of num_key_value_heads ({self.num_key_value_heads})"
            raise PydanticCustomError(
                "shape", expected, {"field": "num_attention_heads", "value": self.num_attention_heads}
            )
        if self.head_dim is not None and self.head_dim % 2:
            raise PydanticCustomError("shape", "even (rotary positions)", {"field": "head_dim", "value": self.head_dim})
        return self


# -- calibration.json -------------------------------------------------------------------------


def _b(value: float) -> float:
    if value != float("-inf") and not -MAX_PARAMETER <= value <= MAX_PARAMETER:
        raise ValueError(f"a number in [-{MAX_PARAMETER:g}, {MAX_PARAMETER:g}], or -Infinity")
    return value


#: Largest change of the log inverse temperature per unit of log letters or nat of margin: within
#: it the temperature stays finite for any gap (e^(10·(log 10⁴ + 10)) ≈ 10⁸³).
MAX_SLOPE = 10.0
_P, _S = MAX_PARAMETER, MAX_SLOPE


class Scaling(Settings):
    """One hint condition's parameters of a calibration, ``a``–``h``, each described with its
    bounds (``apollo_restore.restoration.ranking`` gives the formula; its ``calibration`` applies
    them); ``g`` and ``h`` 0 when the file has none: one temperature for every gap."""

    a: number(0, _P, "inverse temperature; a ranking is never inverted", above=True) = 1.0
    b: Annotated[
        float,
        Field(
            allow_inf_nan=True, description=f"a number in [-{_P:g}, {_P:g}], or -Infinity (log-weight of none of these)"
        ),
        AfterValidator(_b),
    ] = float("-inf")
    c: number(-_P, _P, "growth of the log-weight of none of these as the restorer is less sure") = 0.0
    d: number(-_P, _P, "its change with the log of the gap's letters") = 0.0
    e: number(-_P, _P, "its change with the margin of the best reading over the next, nats") = 0.0
    f: number(-_P, _P, "its change with the best reading's log-score, nats") = 0.0
    g: number(-_S, _S, "change of the log inverse temperature with the log of the letters") = 0.0
    h: number(-_S, _S, "change of the log inverse temperature with the capped margin") = 0.0


class FittedOn(Settings):
    """What one kind's parameters were fitted on: they are applied only to scores of this folder
    fingerprint, these members and this arithmetic (a block copied from another folder's fit is not)."""

    model_fingerprint: text(16, "the folder's fingerprint", r"^[0-9a-f]{16}$")
    members: text(MAX_MEMBER_LABELS, "the members that scored it, e.g. neural+infini+length")
    precision: Literal["fp32", "int8", "gpu"] = Field(description='"fp32", "int8" or "gpu": the arithmetic')


class Conditions(Settings):
    """The parameters of each hint condition, and what they were fitted on; a condition the file
    lacks, or no ``fitted_for``, leaves the calibration unused (the product uses all three)."""

    exact: Scaling | None = None
    range: Scaling | None = None
    none: Scaling | None = None
    fitted_for: FittedOn | None = None


class Kinds(Settings):
    """The parameters for each kind of gap: ``real`` lacunae (what every text restored through
    the CLI, the API or the web page has; a gap set's ``kind`` "true") and ``synthetic`` gaps (a
    gap set's ``kind`` "synthetic"), each fitted on validation gaps of its kind; and the real
    lacunae of literary texts and of inscriptions, where fitted on their own (:data:`TEXT_KINDS`)."""

    real: Conditions
    synthetic: Conditions
    literary: Conditions | None = Field(None, description="real lacunae of literary texts (absent: `real` serves them)")
    inscription: Conditions | None = Field(
        None, description="real lacunae of inscriptions (absent: `real` serves them)"
    )


class FittedFor(Record):
    """What a calibration was fitted on (``info``); what scores must match it for it to be applied.
    Its other keys (errors measured before and after, the sources) are a record."""

    model_fingerprint: text(16, "the folder's fingerprint", r"^[0-9a-f]{16}$") | None = None
    model_fingerprint_parts: dict[str, str] | None = None
    precision: PRECISION | None = Field(None, description='"fp32" or "int8": the arithmetic that scored it')
    members: text(MAX_MEMBER_LABELS, "the members that scored it, e.g. neural+infini+length") | None = None
    gaps: whole(0, 10_000_000, "validation gaps fitted on") | None = None
    gaps_per_condition: dict[str, Annotated[int, Field(ge=0, le=10_000_000)]] | None = None


class CalibrationFile(Settings):
    """``calibration.json``: written by ``apollo-restore tune --what calibration``."""

    format: Literal[CALIBRATION_FORMAT]
    kinds: Kinds
    unknown_word_penalty: number(0, MAX_PARAMETER, "nats") = 0.0
    miss_penalty: number(0, MAX_PARAMETER, "nats: a reading whose letters miss the count given") = 0.0
    info: FittedFor = FittedFor()
