"""``attribution.json``: the settings of an attribution folder (dates and places of a text), read
by :mod:`apollo_restore.attribution.folder` before any array is.

    config = check(AttributionConfig, data)      # SchemaError naming the field, or the settings

Every number is bounded so that a folder within the bounds loads and answers on a 2-core machine:
at most :data:`MAX_BUCKETS` embedding rows of at most :data:`MAX_DIM` numbers, years within
± :data:`MAX_YEAR` (the date's bins, the formulae's eras; a year's probabilities are one array
over the bins' span), temperatures finite and above 0 (a temperature of 0 divides by zero, a
negative one inverts the ranking), mixing weights within [0, 1]. Lists that must agree agree:
one temperature per length band, one longest regnal year per era, one year per dated name, every
inscription place a place. What the arrays must be follows from these settings
(:func:`apollo_restore.attribution.folder.array_specs`). ``trained`` is the record of what made the
folder, kept as written but for ``prepared``, which names no absolute path.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from apollo_restore.schema.base import Record, Settings, number, text, whole

ATTRIBUTION_FORMAT = "apollo-restore attribution v1"
#: Most rows of the hashed n-gram embedding, and most numbers per row.
MAX_BUCKETS, MAX_DIM = 2**24, 4096
#: Farthest year from year 0 a bin edge, an era or a dated name may be (negative BC).
MAX_YEAR = 5000
#: Most places, length bands, formula features, eras and dated names.
MAX_PLACES, MAX_BANDS, MAX_FEATURES, MAX_ERAS, MAX_NAMES = 100_000, 64, 1_000_000, 10_000, 1_000_000
#: Largest temperature (a softmax's divisor) and largest magnitude of a calibration's weight.
MAX_TEMPERATURE, MAX_WEIGHT = 1000.0, 1000.0
#: A fingerprint (:func:`apollo_restore.inputs.digest`).
FINGERPRINT = r"^[0-9a-f]{16}$"

Year = whole(-MAX_YEAR, MAX_YEAR, "a year, negative BC")
Temperature = number(0, MAX_TEMPERATURE, "a softmax temperature", above=True)
Share = number(0, 1, "the neighbours' votes' share of the probability")


def _increasing(value: list[int]) -> list[int]:
    if any(b <= a for a, b in zip(value, value[1:])):
        raise ValueError("whole numbers in increasing order")
    return value


def _unique(value: list[Any]) -> list[Any]:
    if len(set(value)) != len(value):
        raise ValueError("each once")
    return value


def _relative(value: str) -> str:
    if value.startswith(("/", "\\", "~")) or (len(value) > 1 and value[1] == ":"):
        raise ValueError("a name or a relative path (no absolute path of the machine that trained it)")
    return value


Increasing = AfterValidator(_increasing)


class Temperatures(Settings):
    """Softmax temperatures per length band (one per ``bands`` entry): the bag's date and place,
    the mixture's with the neighbours' votes, and one of each for a text placed among inscriptions."""

    date: Annotated[list[Temperature], Field(min_length=1, max_length=MAX_BANDS)]
    place: Annotated[list[Temperature], Field(min_length=1, max_length=MAX_BANDS)]
    mixed_date: Annotated[list[Temperature], Field(min_length=1, max_length=MAX_BANDS)] | None = None
    mixed_place: Annotated[list[Temperature], Field(min_length=1, max_length=MAX_BANDS)] | None = None
    mixed_date_inscription: Annotated[list[Temperature], Field(min_length=1, max_length=1)] | None = None
    mixed_place_inscription: Annotated[list[Temperature], Field(min_length=1, max_length=1)] | None = None


class Mixing(Settings):
    """The neighbours' votes' share of the date's and the place's probabilities."""

    date: Share
    place: Share


#: A logistic calibration's weights: the first 4 or all 5 of a reading's evidence (``formulae.evidence``).
Calibration = Annotated[
    list[number(-MAX_WEIGHT, MAX_WEIGHT)], Field(min_length=4, max_length=5, description="4 or 5 weights")
]
#: A reading's probability spread over the year before, the year and the year after.
Peak = Annotated[list[number(0, 1)], Field(min_length=3, max_length=3, description="3 shares in [0, 1]")]


class LetterSettings(Settings):
    """The letter trigram model (``letters.logp``): each length band's lowest letter count and its
    limit of surprise (bits a letter) above which a text reads like no training text."""

    bands: Annotated[
        list[whole(0, 10_000_000, "letters")],
        Field(min_length=1, max_length=MAX_BANDS, description="the bands' lowest letter counts, increasing"),
        Increasing,
    ]
    limits: Annotated[list[number(0, 100, "bits a letter")], Field(min_length=1, max_length=MAX_BANDS)]

    @model_validator(mode="after")
    def _lengths(self) -> LetterSettings:
        _same_length("limits", self.limits, "bands", self.bands)
        return self


class FormulaeSettings(Settings):
    """The reader of dating formulae: the features of its era classifier (one row of
    ``formula.weight`` each), the eras (year − regnal year) and the highest regnal year seen in
    each, the exponent of the bag's probability that weighs the eras, the logistic calibrations
    of a reading's and of the dated names' year (4 weights each), and the dated names' years."""

    features: Annotated[list[text(200, "a feature")], Field(min_length=1, max_length=MAX_FEATURES)]
    eras: Annotated[list[Year], Field(min_length=1, max_length=MAX_ERAS)]
    longest: Annotated[list[whole(0, 1000, "the highest regnal year seen")], Field(max_length=MAX_ERAS)]
    prior: number(0, 100, "the exponent of the bag's probability")
    peaks: dict[Literal["none", "month"], Peak] = Field(
        default_factory=dict, description='"none" and "month" (a reading without and with a month): 3 shares each'
    )
    calibration: Calibration
    threshold: number(0, 1, "the least confidence of a reading mixed in") = 0.0
    names: Annotated[list[text(200, "a word")], Field(max_length=MAX_NAMES), AfterValidator(_unique)] = []
    name_years: Annotated[list[Year], Field(max_length=MAX_NAMES)] = []
    name_calibration: Calibration = [-9.0, 0.0, 0.0, 0.0]

    @model_validator(mode="after")
    def _lengths(self) -> FormulaeSettings:
        _same_length("longest", self.longest, "eras", self.eras)
        _same_length("name_years", self.name_years, "names", self.names)
        return self


class Documents(Settings):
    """What ``documents.tsv.xz`` (the training documents' dates and places, the dated parallels'
    labels) holds: its rows, and the fingerprint of the corpus whose text index it labels
    (``apollo_restore.data.textindex.corpus_fingerprint``)."""

    rows: whole(0, 100_000_000, "documents labelled")
    corpus: text(16, "the labelled corpus's fingerprint", FINGERPRINT)


class Trained(Record):
    """What made the folder (a record: kept as written, never read when answering)."""

    prepared: Annotated[str, Field(max_length=300), AfterValidator(_relative)] | None = Field(
        None, description="the prepared corpus's name (no absolute path)"
    )


class AttributionConfig(Settings):
    """``attribution.json``: how the attribution folder reads text, its bins, places, bands and
    temperatures, and what its arrays hold; lists that go together agree (one temperature per
    band, one longest year per era, one year per dated name, inscription places among the places)."""

    format: Literal[ATTRIBUTION_FORMAT]
    normaliser: text(100, "the text normaliser the model was trained with")
    features: text(100, "the version of the n-gram features the model was made with")
    buckets: whole(1, MAX_BUCKETS, "embedding rows")
    dim: whole(1, MAX_DIM, "numbers per embedding row")
    bin_edges: Annotated[
        list[Year],
        Field(min_length=3, max_length=2 * MAX_YEAR + 1, description="at least 3 years in increasing order"),
        Increasing,
    ]
    places: Annotated[
        list[text(300, "a place")],
        Field(min_length=1, max_length=MAX_PLACES, description=f"1 to {MAX_PLACES:,} names, each once"),
        AfterValidator(_unique),
    ]
    bands: Annotated[
        list[whole(0, 10_000_000, "letters")],
        Field(min_length=1, max_length=MAX_BANDS, description="the bands' lowest letter counts, increasing"),
        Increasing,
    ]
    temperature: Temperatures
    neighbours: Mixing = Mixing(date=0.0, place=0.0)
    inscription_places: Annotated[
        list[whole(0, MAX_PLACES - 1, "a place's index")], Field(max_length=MAX_PLACES), AfterValidator(_unique)
    ] = []
    formulae: FormulaeSettings | None = None
    letters: LetterSettings | None = None
    documents: Documents | None = None
    trained: Trained = Trained()

    @model_validator(mode="after")
    def _agree(self) -> AttributionConfig:
        bands = self.bands
        for name in ("date", "place", "mixed_date", "mixed_place"):
            values = getattr(self.temperature, name)
            if values is not None:
                _same_length(f"temperature.{name}", values, "bands", bands)
        beyond = [i for i in self.inscription_places if i >= len(self.places)]
        if beyond:
            raise PydanticCustomError(
                "range",
                f"indices of places (below {len(self.places)})",
                {"field": "inscription_places", "value": beyond[0]},
            )
        return self


def _same_length(field: str, values: list, other: str, others: list) -> None:
    if len(values) != len(others):
        expected = f"a list of {len(others)} values, one per entry of {other}"
        raise PydanticCustomError("length", expected, {"field": field, "value": f"{len(values)} values"})
