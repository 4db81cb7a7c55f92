"""Reading a papyrus's dating formula: a regnal year and the reign it is counted in (NumPy only).

    from apollo_restore.attribution.formulae import Formulae, readings
    readings("ετους κα αδριανου καισαρος του κυριου μεσορη ε")   # [Reading(value=21, index=1, kind='year')]
    formula = Formulae(arrays, config)                            # from the model folder
    years, found = formula.mix(text, year_probs, first_year)      # (Y,) a year's probabilities, the reading

Many documents carry their date in words: ``(ἔτους) κα Ἁδριανοῦ Καίσαρος τοῦ κυρίου Μεσορὴ ε``
is AD 137. A **reading** (:func:`readings`) is a numeral in a formula's place: letters that
spell a number (``κα``) or ordinal words (``πρωτου και εικοστου``), right after a word for
*year* (``ετους``, ``ετει``), right before a month's name, or a few words before a ruler's
name or title. Which reign it counts in is learnt, not listed:

- **Eras** (training, :mod:`.train_formulae`): for each reading in a training papyrus dated to
  the year, ``era = year − value``; the values where many documents agree (each reign's first
  year, less one) are the eras, each with the highest regnal year seen in it.
- **Which era** (:class:`Formulae`): a softmax regression over the words around the numeral
  (the ruler's names and titles, the month, the numeral itself) gives each era, or ``none``
  (a number that counts something else), a probability; the eras are weighed by the bag's
  probability of the year they give (the text's other words), and an era whose reigns never
  reached the value is out.

**The month** (:func:`month_of`, :func:`later_half`): an Egyptian year begins on 1 Thoth, so a
regnal year spans two Julian years. From Augustus on (the Alexandrian calendar, 1 Thoth = 29/30
August) a document dated Thoth–Choiak falls in the *earlier* of the two, Tybi–Epagomenai in the
later; before, 1 Thoth wandered a day every four years (20 July in AD 139, 22 October in 238 BC),
so which months fall before 1 January is reckoned from the year. An era is the Julian year of a
reign's year 0's later half: a reading of regnal year ``n`` in era ``e`` is ``e + n`` when its
month falls in the later half, ``e + n − 1`` in the earlier; with no month read, ``e + n``, its
probability spread over the year before as the training documents without a month spread
(``config["peaks"]``). Not modelled: the Ptolemies' financial years and their Macedonian count
where they differ from the Egyptian regnal year (Ptolemy II–IV), and the Macedonian months.

The surest reading's year (the one of least ``P(none)``) takes the probability that it is right,
:meth:`Formulae.confidence` (a logistic function of ``1 − P(none)``, the era's share and the bag's
own probability of that year, fitted on validation documents), spread over that year and the
years beside it as the training documents spread (``config["peaks"]``, with and without a month
read); the rest is the bag's distribution spread evenly over the years of its bins
(:meth:`Formulae.mix`). A reading whose confidence is under ``config["threshold"]`` (chosen on
validation) leaves the bag's distribution as it is. The median then falls on the year read when it
is more likely right than not.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from apollo_restore.data.normalise import GREEK_LETTERS

_DIGITS = {
    **{c: i + 1 for i, c in enumerate("αβγδεϛζηθ")},
    **{c: 10 * (i + 1) for i, c in enumerate("ικλμνξοπϙ")},
    **{c: 100 * (i + 1) for i, c in enumerate("ρστυφχψωϡ")},
}
#: The highest regnal year read (a larger number counts something else).
MAX_YEAR = 65
_UNITS = {"πρωτου": 1, "δευτερου": 2, "τριτου": 3, "τεταρτου": 4, "πεμπτου": 5, "πεμτου": 5, "εκτου": 6,
          "εβδομου": 7, "ογδοου": 8, "ενατου": 9, "εννατου": 9}  # fmt: skip
_TEENS = {"δεκατου": 10, "ενδεκατου": 11, "δωδεκατου": 12, "τρισκαιδεκατου": 13, "τεσσαρεσκαιδεκατου": 14,
          "τεσσαρακαιδεκατου": 14, "πεντεκαιδεκατου": 15, "εκκαιδεκατου": 16, "επτακαιδεκατου": 17,
          "οκτωκαιδεκατου": 18, "εννεακαιδεκατου": 19}  # fmt: skip
_TENS = {"εικοστου": 20, "τριακοστου": 30, "τεσσαρακοστου": 40, "τετταρακοστου": 40, "πεντηκοστου": 50}
ORDINALS = _UNITS | _TEENS | _TENS
#: Words for *year* that stand before its number.
YEAR_WORDS = frozenset({"ετους", "ετει", "ετ", "ετου"})
#: Starts of the months' names (Egyptian and Macedonian, as the papyri abbreviate them).
MONTHS = ("θωθ", "φαω", "αθυ", "χοι", "τυβ", "μεχ", "φαμ", "φαρμ", "παχ", "παυ", "επει", "επιφ", "μεσο",
          "δαισι", "πανημ", "λωι", "γορπι", "υπερβερ", "απελλ", "αυδν", "περιτ", "δυστρ", "ξανδικ",
          "αρτεμισ")  # fmt: skip
#: Words next to a numeral that make it something else: a day (after a month), an indiction, an age.
NOT_BEFORE = ("επαγομεν", "ινδ", "ετη", "ετων", *MONTHS)
NOT_AFTER = ("ινδ", "μεχρι")
#: Starts of rulers' names and titles that follow a regnal year.
TITLES = ("καισαρ", "αυτοκρατορ", "βασιλε", "πτολεμαι", "σεβαστ", "αντων", "τραιαν", "αδριαν", "κομμοδ", "σεουηρ",
          "ουεσπασιαν", "δομιτιαν", "κλαυδι", "νερων", "τιβερι", "γαλλιην", "ουαλεριαν", "φιλιππ", "δεκι",
          "διοκλητιαν", "μαξιμιαν", "αυρηλι", "κλεοπατρ", "θεων")  # fmt: skip
#: Words before (after) the numeral that its features read.
BEFORE, AFTER = 6, 10
#: A title counts within this many words after the numeral.
TITLE_REACH = 3
#: A year's share of a reading's probability, and of each year beside it (where the folder gives none).
PEAK = (0.25, 0.5, 0.25)
#: The Egyptian months (1 Thoth … 12 Mesore, 13 the epagomenal days) by their spellings and
#: abbreviations in ``norm.v1`` (whole words: ``χοι`` is Choiak, ``χοινικας`` a measure).
MONTH_WORDS = re.compile(
    "^(?:(θωθ|θωυθ)|(φαωφι?|φαω|φαοφι)|(αθυρ|αθυ|αθθυρ|αθυρι)|(χοιακ|χοιαχ|χοι|χοιακ)|(τυβι|τυβ|τυβει)"
    "|(μεχειρ|μεχ|μεχιρ|μεχε)|(φαμενωθ|φαμ|φαμενωτ|φαμεν)|(φαρμουθι|φαρμ|φαρμουθ|φαρμουτι)|(παχων|παχ|παχωνς)"
    "|(παυνι|παυν|παυνει|παυνι)|(επειφ|επιφ|επει|επιφι|επηφ)|(μεσορη|μεσορ|μεσο|μεσορι)|(επαγομεν\\w*|επαγ))$"
)
#: A month counts within this many words before (after) the numeral.
MONTH_BEFORE, MONTH_AFTER = 6, 14
#: 1 Thoth fell on 20 July (day 201) in AD 139 and a day earlier every four years before the
#: Alexandrian calendar fixed it at 29 August (day 241) from :data:`ALEXANDRIAN` on.
THOTH_139, ALEXANDRIAN = 201, -25
_NOT_WORD = re.compile(f"[^{GREEK_LETTERS}\\-… ]+")


@dataclass(frozen=True)
class Reading:
    """A numeral in a formula's place: its ``value``, the index of its (first) word, ``kind``
    (``"year"``: after a word for year, ``"month"``: before a month, ``"title"``: before a ruler)
    and the Egyptian ``month`` (1–13) read near it (:func:`month_of`), ``None`` where none."""

    value: int
    index: int
    kind: str
    month: int | None = None


def month_number(word: str) -> int | None:
    """The Egyptian month (1 Thoth … 12 Mesore, 13 the epagomenal days) a ``norm.v1`` word names, or ``None``."""
    found = MONTH_WORDS.match(word)
    return None if found is None else next(i for i, g in enumerate(found.groups(), 1) if g)


def month_of(words: list[str], index: int, span: int = 1) -> int | None:
    """The month nearest the numeral at ``words[index : index + span]``: the first after it within
    :data:`MONTH_AFTER` words, else the nearest before it within :data:`MONTH_BEFORE`."""
    for w in words[index + span : index + span + MONTH_AFTER]:
        if (m := month_number(w)) is not None:
            return m
    for w in reversed(words[max(0, index - MONTH_BEFORE) : index]):
        if (m := month_number(w)) is not None:
            return m
    return None


def later_half(month: int, year: int | np.ndarray) -> int | np.ndarray:
    """1 where the middle of Egyptian ``month`` falls in the later of the two Julian years its
    Egyptian year spans (after 1 January), 0 where in the earlier; ``year``: about when (the
    Julian year the Egyptian year begins in, negative BC; an array gives one answer each). From
    :data:`ALEXANDRIAN` on, Thoth–Choiak (1–4) are 0 and Tybi–Epagomenai 1."""
    year = np.asarray(year)
    thoth = np.where(year >= ALEXANDRIAN, 241, THOTH_139 + (139 - year) / 4)  # day of the Julian year
    out = (thoth + 30 * (month - 1) + 15 > 365).astype(np.int64)
    return int(out) if out.ndim == 0 else out


def numeral(word: str) -> int | None:
    """The number a word of numeral letters spells (``κα`` → 21, ``ρμδ`` → 144), or ``None``:
    at most three letters, hundreds before tens before units."""
    if not 0 < len(word) <= 3 or any(c not in _DIGITS for c in word):
        return None
    values = [_DIGITS[c] for c in word]
    places = [len(str(v)) for v in values]
    if any(a <= b for a, b in zip(places, places[1:])):
        return None
    return sum(values)


def ordinal(words: list[str], i: int) -> tuple[int, int] | None:
    """``(value, words read)`` of ordinal words from ``words[i]`` (``εικοστου πρωτου``,
    ``πρωτου και εικοστου``, ``δωδεκατου``), or ``None``."""
    if words[i] not in ORDINALS:
        return None
    value, rest = ORDINALS[words[i]], words[i + 1 : i + 3]
    if len(rest) == 2 and rest[0] == "και" and rest[1] in ORDINALS:
        other = ORDINALS[rest[1]]
        if (value < 10) != (other < 10):  # a unit and a ten, either order
            return value + other, 3
    if rest and rest[0] in _UNITS and value in _TENS.values():
        return value + _UNITS[rest[0]], 2
    return value, 1


def words_of(text: str) -> list[str]:
    """The words of a ``norm.v1`` text (punctuation such as ``·`` separates; ``-`` and ``…`` are kept)."""
    return _NOT_WORD.sub(" ", text).split()


def readings(text: str) -> list[Reading]:
    """The numerals of a ``norm.v1`` text in a formula's place (see the module docstring), in
    order; each ``index`` counts :func:`words_of`'s words."""
    words = words_of(text)
    out = []
    free = 0  # the first word not inside an ordinal read before (``πρωτου και εικοστου`` is one)
    for i, word in enumerate(words):
        if i < free:
            continue
        value, span = numeral(word), 1
        if value is None:
            spelt = ordinal(words, i)
            if spelt is None:
                continue
            value, span = spelt
        free = i + span
        if not 0 < value <= MAX_YEAR or (i > 0 and words[i - 1].startswith(NOT_BEFORE)):
            continue
        if i + span < len(words) and words[i + span].startswith(NOT_AFTER):
            continue
        if i > 0 and words[i - 1] in YEAR_WORDS:
            kind = "year"
        elif i + span < len(words) and words[i + span].startswith(MONTHS):
            kind = "month"
        elif _title_follows(words[i + span : i + span + TITLE_REACH]):
            kind = "title"
        else:
            continue
        out.append(Reading(value, i, kind, month_of(words, i, span)))
    return out


def _title_follows(words: list[str]) -> bool:
    """Whether a ruler's name or title is among ``words`` with no numeral before it."""
    for w in words:
        if w.startswith(TITLES):
            return True
        if numeral(w) is not None:
            return False
    return False


def features(words: list[str], reading: Reading) -> list[str]:
    """The features of a reading: its value and kind, the words around it (before ``<``, after
    ``>``) and the first five and three letters of each (names spelt variously, abbreviated);
    words holding a lost letter give their letters before it."""
    out = [f"n:{reading.value}", f"k:{reading.kind}"]
    for side, span in (("<", words[max(0, reading.index - BEFORE) : reading.index]),
                       (">", words[reading.index + 1 : reading.index + 1 + AFTER])):  # fmt: skip
        for w in span:
            w = w.split("-")[0].split("…")[0]
            if len(w) < 2:
                continue
            out.append(f"{side}{w}")
            if len(w) >= 5:
                out.append(f"p:{w[:5]}")
            if len(w) >= 3:
                out.append(f"q:{w[:3]}")
    return out


class Formulae:
    """The era classifier of a model folder: ``formula.weight`` ``(F, E + 1)`` and ``formula.bias``
    ``(E + 1,)`` (the last class is ``none``) over the features ``config["features"]``, the eras
    ``config["eras"]`` (year − regnal year) and the highest regnal year seen in each
    (``config["longest"]``), the exponent ``config["prior"]`` of the bag's probability that weighs
    the eras, and ``config["calibration"]`` (:meth:`confidence`)."""

    def __init__(self, arrays: dict[str, np.ndarray], config: dict[str, Any]) -> None:
        self.weight = arrays["formula.weight"].astype(np.float32)
        self.bias = arrays["formula.bias"].astype(np.float32)
        self.index = {f: i for i, f in enumerate(config["features"])}
        self.eras = np.asarray(config["eras"], np.int64)
        self.longest = np.asarray(config["longest"], np.int64)
        self.prior = float(config["prior"])  # the exponent of the bag's probability
        self.calibration = [float(x) for x in config["calibration"]]  # (a, b, c) of :meth:`confidence`
        #: Dated names: words whose training documents all fall within a year or so (:meth:`named`).
        self.names = dict(zip(config.get("names", []), (int(y) for y in config.get("name_years", []))))
        self.name_calibration = [float(x) for x in config.get("name_calibration", [-9.0, 0.0, 0.0, 0.0])]
        #: A reading's year and the years beside it: their shares, with a month read and without.
        self.peaks = {k: tuple(float(x) for x in v) for k, v in config.get("peaks", {}).items()}
        #: A reading or names less likely right than this leave the bag's date as it is.
        self.threshold = float(config.get("threshold", 0.0))

    def era_probs(self, words: list[str], reading: Reading) -> np.ndarray:
        """``(E + 1,)`` probabilities of each era and of ``none`` for one reading."""
        rows = [self.index[f] for f in features(words, reading) if f in self.index]
        z = self.bias + (self.weight[rows].sum(axis=0) if rows else 0.0)
        z = z - z.max()
        e = np.exp(z)
        return e / e.sum()

    def read(self, text: str, year_probs: np.ndarray, first_year: int) -> dict[str, Any] | None:
        """The surest reading of ``text`` (the greatest ``sure × top``) of :meth:`read_all`, or ``None``."""
        return _surest(self.read_all(text, year_probs, first_year))

    def read_all(self, text: str, year_probs: np.ndarray, first_year: int) -> list[dict[str, Any]]:
        """What each reading of ``text`` says, in order: ``{"words", "regnal_year", "kind", "era",
        "year", "sure": 1 − P(none), "top": the era's share among the eras}``, weighing eras by
        ``year_probs`` (``(Y,)``: the bag's probability of each year from ``first_year``) raised
        to ``prior``; a reading no known reign allows says nothing."""
        words = words_of(text)
        out: list[dict[str, Any]] = []
        for reading in readings(text):
            probs = self.era_probs(words, reading)
            sure = 1.0 - float(probs[-1])
            years = regnal_years(self.eras, reading)
            inside = (years >= first_year) & (years < first_year + len(year_probs))
            allowed = inside & (reading.value <= self.longest + 1)
            if not allowed.any():
                continue
            prior = np.where(allowed, year_probs[np.clip(years - first_year, 0, len(year_probs) - 1)], 0.0)
            weighed = probs[:-1] * np.power(prior + 1e-9, self.prior) * allowed
            if weighed.sum() <= 0:
                continue
            top = int(weighed.argmax())
            span = words[max(0, reading.index - 2) : reading.index + 6]
            out.append({"words": " ".join(span), "regnal_year": reading.value, "kind": reading.kind,
                        "month": reading.month, "era": int(self.eras[top]), "year": int(years[top]),
                        "sure": sure, "top": float(weighed[top] / weighed.sum())})  # fmt: skip
        return out

    def candidates(self, text: str, year_probs: np.ndarray, first_year: int) -> list[dict[str, Any]]:
        """The surest reading (:meth:`read`) and the dated names' year (:meth:`named`), those there
        are, each with ``others``: how many of the other readings and the names give its year
        (within a year), and ``bag``: the bag's probability of that year and the two beside it."""
        readings_found = self.read_all(text, year_probs, first_year)
        names = self.named(text)
        every = readings_found + ([names] if names else [])
        out = [f for f in (_surest(readings_found), names) if f is not None]
        for f in out:
            f["others"] = sum(1 for g in every if g is not f and abs(g["year"] - f["year"]) <= 1)
            k = f["year"] - first_year
            f["bag"] = float(year_probs[max(0, k - 1) : max(0, k + 2)].sum())
        return out

    def named(self, text: str) -> dict[str, Any] | None:
        """The year the dated names of ``text`` agree on (the most votes, the earliest of equals),
        or ``None`` where it holds none: ``{"words": the names agreeing, "kind": "name", "year",
        "agree": how many, "share": their share of the names}``."""
        hits = sorted({(w, self.names[w]) for w in words_of(text) if w in self.names})
        if not hits:
            return None
        votes: Counter[int] = Counter()
        for _, y in hits:  # its own year two votes, each beside it one
            votes.update({y - 1: 1, y: 2, y + 1: 1})
        year = min(votes, key=lambda y: (-votes[y], y))
        agree = [w for w, y in hits if abs(y - year) <= 1]
        return {"words": " ".join(agree), "regnal_year": None, "kind": "name", "era": None, "year": int(year),
                "agree": len(agree), "share": len(agree) / len(hits)}  # fmt: skip

    def confidence(self, found: dict[str, Any]) -> float:
        """The probability that a reading's (:meth:`read`) or the names' (:meth:`named`) year is
        right (within a year): ``σ(w · evidence(found))``, each kind's ``w`` fitted on validation."""
        w = self.name_calibration if found["kind"] == "name" else self.calibration
        return float(1 / (1 + np.exp(-float(np.dot(w, evidence(found)[: len(w)])))))

    def mix(self, text: str, year_probs: np.ndarray, first_year: int) -> tuple[np.ndarray, dict[str, Any] | None]:
        """``(Y,)`` probabilities of each year from ``first_year``: the bag's ``year_probs`` with the
        year of the surest reading or of the dated names, whichever is likelier right, mixed in by
        its :meth:`confidence` where that is at least :attr:`threshold` (see the module docstring),
        and what gave it (``None``: nothing;
        else ``{"words", "regnal_year", "kind", "era", "year", "prob"}``, ``regnal_year`` and
        ``era`` ``None`` for names, ``prob``: the probability of that year and the two beside it)."""
        found = self.candidates(text, year_probs, first_year)
        if not found:
            return year_probs, None
        shares = [self.confidence(f) for f in found]
        share, found = max(zip(shares, found), key=lambda pair: pair[0])
        if share < self.threshold:
            return year_probs, None
        shape = self.peaks.get("none" if found.get("month") is None else "month", PEAK)
        for key in ("sure", "top", "agree", "share", "others", "bag", "month"):
            found.pop(key, None)
        peak = np.zeros_like(year_probs)
        for step, part in zip((-1, 0, 1), shape):
            k = found["year"] + step - first_year
            if 0 <= k < len(peak):
                peak[k] = part
        mixed = (1 - share) * year_probs + share * peak / max(peak.sum(), 1e-12)
        k = found["year"] - first_year
        found["prob"] = round(float(mixed[max(0, k - 1) : k + 2].sum()), 4)
        return mixed, found


def regnal_years(eras: np.ndarray, reading: Reading) -> np.ndarray:
    """The Julian year ``(E,)`` of ``reading``'s regnal year in each era (see the module docstring):
    ``era + n``, less one where its month falls before 1 January."""
    years = eras + reading.value
    if reading.month is None:
        return years
    return years - 1 + later_half(reading.month, years - 1)


def _surest(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The reading of greatest ``sure × top`` among :meth:`Formulae.read_all`'s, or ``None``."""
    return max(found, key=lambda f: f["sure"] * f["top"]) if found else None


def evidence(found: dict[str, Any]) -> list[float]:
    """What :meth:`Formulae.confidence` weighs: ``[1, logit(sure), logit(top), log(1 + others),
    bag]`` of a reading, ``[1, log(agree), share, log(1 + others), bag]`` of dated names; ``bag``:
    the log of the bag's probability of the year and the two beside it (a reign the text model
    finds improbable is weighed down), ``log 10⁻⁴`` at least. A folder of four weights reads the
    first four."""
    others = float(np.log1p(found.get("others", 0)))
    bag = float(np.log(max(found.get("bag", 1.0), 1e-4)))
    if found["kind"] == "name":
        return [1.0, float(np.log(found["agree"])), found["share"], others, bag]
    return [1.0, logit(found["sure"]), logit(found["top"]), others, bag]


def logit(p: float) -> float:
    """``log(p / (1 − p))``, ``p`` kept inside ``[1e-4, 1 − 1e-4]``."""
    p = min(max(p, 1e-4), 1 - 1e-4)
    return float(np.log(p / (1 - p)))
