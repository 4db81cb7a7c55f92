"""The attribution's request and answer, declared once: the core builds them
(:meth:`~apollo_restore.attribution.model.AttributionModel.predict`), and the CLI's ``--json``,
the Python API (:func:`apollo_restore.attribute`) and ``POST /api/attribute`` return them as
they are (``to_dict()``: the JSON form every door writes).

    from apollo_restore.schema.answers import Attribution
    found = apollo_restore.attribute(text)        # an Attribution
    found.date.year, found.low, found.places[0].place, found.formula.kind if found.formula else None
    found.to_dict()                               # {"date": {...}, "places": [...], ...}

An answer grows here: a part a model computes (``districts``) is declared once, and every door
gives it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from apollo_restore.version import __version__

#: Share of the date's probability inside the interval given.
INTERVAL = 0.8
#: Places (and districts) an answer lists.
TOP_PLACES = 10
#: What every answer carries to be cited (the restoration's too): the version that answered and
#: the fingerprint of the model folder it read (``null`` for a model of no folder).
Version = Annotated[str, Field(description="The apollo-restore version that answered.")]
Fingerprint = Annotated[
    str | None, Field(description="The model folder's fingerprint (null: no folder): with `version`, what to cite.")
]


class AttributeRequest(BaseModel):
    """A text to date and place (``POST /api/attribute``; the Python API's and the CLI's arguments)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(
        description="Leiden, EpiDoc, Beta Code, or plain lower-case letters with '-' per lost letter "
        "(at least 10 Greek letters)."
    )
    parallels: bool = Field(True, description="Look up the dated parallels (when the server has a text index).")


class Answer(BaseModel):
    """A part of an answer: declared fields only (a field built by mistake is refused, not sent)."""

    model_config = ConfigDict(extra="forbid")


class AttributionDate(Answer):
    """The date: a distribution over bins of years, its point estimate and central interval."""

    year: int = Field(description="Point estimate (the distribution's median); negative: BC.")
    low: int = Field(description="Start of the central interval holding `interval` of the probability.")
    high: int = Field(description="Its end.")
    interval: float = Field(INTERVAL, description="The interval's share of the probability (0.8).")
    bins: list[int] = Field(description="Edges of the date bins (years; one more than `probs`).")
    probs: list[float] = Field(description="Probability of each bin (calibrated on validation; 5 decimals in JSON).")

    @field_serializer("probs")
    def _rounded(self, probs: list[float]) -> list[float]:
        return [round(p, 5) for p in probs]


class PlaceProb(Answer):
    """One place and its probability."""

    place: str = Field(description="The place (a settlement, or a region where the place is an inscription's).")
    prob: float = Field(description="Its probability (calibrated on validation, 4 decimals).")


class District(Answer):
    """A district (a nome, a region): the probability that the text was written in it, and its places."""

    name: str = Field(description="The district.")
    prob: float = Field(description="Its probability: the sum of its places' (calibrated).")
    places: list[PlaceProb] = Field(default_factory=list, description="Its most probable places, best first.")


class Formula(Answer):
    """A dating formula (a regnal year) or the dated names read in the text, and the year it gives."""

    words: str = Field(description="The formula's words as read, or the dated names agreeing (`norm.v1`).")
    regnal_year: int | None = Field(description="The regnal year it names (`null` for dated names).")
    kind: Literal["year", "month", "title", "name"] = Field(
        description="Where the numeral stands (after a word for year, before a month or a ruler), or `name`: "
        "words whose dated training papyri agree on a year."
    )
    era: int | None = Field(description="The reign's first year less one (year − regnal year; `null` for names).")
    year: int = Field(description="The year it gives; negative: BC.")
    prob: float = Field(description="The date's probability within a year of it (calibrated on validation).")


class DatedParallel(Answer):
    """A training document sharing a long run of letters with the text, with its own date and place."""

    doc: str = Field(description="The document's id.")
    label: str = Field(description="The document as a reader names it (`IOSPE 3.26`).")
    source: str = Field(description="Its corpus (`ddb`, `inscription`, ...).")
    url: str | None = Field(description="Where it can be read (papyri.info or the corpus's page).")
    longest: int = Field(description="Letters of the longest run it shares with the text.")
    snippet: str = Field(description="That run in its context.")
    lo: int | None = Field(description="Its date's first year (`null`: undated).")
    hi: int | None = Field(description="Its date's last year.")
    place: str = Field(description='Its place (`""`: unknown).')


class Attribution(Answer):
    """When and where a text was written: its date, its most probable places, the dating formula
    read and the dated parallels."""

    date: AttributionDate
    places: list[PlaceProb] = Field(description="The 10 most probable places, calibrated, most probable first.")
    letters: int = Field(description="Greek letters read.")
    little: bool = Field(description="A short text (under 50 letters): the answer knows little.")
    parallels: list[DatedParallel] = Field(
        default_factory=list, description="Dated parallels: training documents sharing the longest runs."
    )
    formula: Formula | None = Field(None, description="The dating formula read, if any.")
    warnings: list[str] = Field(
        default_factory=list,
        description="How the text was read (W301, W303, as restore says) and what the answer is worth (W801: a "
        "text unlike the model's, flat places; W802: it may come from a place the model cannot name).",
    )
    version: Version = __version__
    model_fingerprint: Fingerprint = None
    districts: list[District] = Field(
        default_factory=list,
        description="The most probable nomes or regions, with their places, most probable first (empty: the "
        "folder has no map of districts).",
    )

    @property
    def year(self) -> int:
        """The point estimate (:attr:`AttributionDate.year`)."""
        return self.date.year

    @property
    def low(self) -> int:
        return self.date.low

    @property
    def high(self) -> int:
        return self.date.high

    def to_dict(self) -> dict[str, Any]:
        """The JSON form every door writes: ``{"date": {"year", "low", "high", "interval", "bins",
        "probs"}, "places", "letters", "little", "parallels", "formula", "warnings", "version",
        "model_fingerprint", "districts"}``."""
        return self.model_dump(mode="json")

    def summary(self) -> str:
        """One line: the date, its interval and the most probable places."""
        top = ", ".join(f"{p.place} {percent(p.prob)}" for p in self.places[:3])
        note = f" (a short text, {self.letters} letters: little can be said)" if self.little else ""
        span = f"{year_label(self.low)} – {year_label(self.high)}"
        return f"about {year_label(self.year)} ({round(100 * self.date.interval)} % interval: {span}); {top}{note}"

    def formula_line(self) -> str:
        """One line on the dating formula read (``""``: none)."""
        f = self.formula
        if f is None:
            return ""
        read = f"dated names '{f.words}'" if f.kind == "name" else f"year {f.regnal_year} in '{f.words}'"
        return f"dating formula: {read} → {year_label(f.year)} ({percent(f.prob)} within a year)"


def percent(p: float) -> str:
    """``0.957`` → ``96 %``; under half a percent ``<1 %``."""
    return "<1 %" if p < 0.005 else f"{round(100 * p)} %"


def year_label(year: int) -> str:
    """``-150`` → ``150 BC``, ``212`` → ``AD 212``; there is no year 0 (the model never gives one;
    were it given, it is 1 BC)."""
    return f"{-year} BC" if year < 0 else f"AD {year}" if year > 0 else "1 BC"
