"""The reader of dating formulae: numerals and ordinal words, where a numeral is a regnal year,
eras learnt from dated documents, the year's probability mixed into the date.

    python -m pytest -q tests/attribution/test_formulae.py
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apollo_restore.attribution.formulae import (
    Formulae,
    Reading,
    later_half,
    month_number,
    numeral,
    ordinal,
    readings,
    regnal_years,
)
from apollo_restore.attribution.labels import Label
from apollo_restore.attribution.model import date_summary
from apollo_restore.attribution.train_formulae import (
    calibrate_formulae,
    fit_formulae,
    learn_eras,
    learn_names,
    proper_names,
)

FIRST = -800
YEARS = 1700


@pytest.mark.parametrize("word, value", [("κα", 21), ("ρμδ", 144), ("ιβ", 12), ("θ", 9), ("και", None),
                                         ("δε", None), ("αβ", None), ("ερρωσο", None)])  # fmt: skip
def test_numerals_are_hundreds_then_tens_then_units(word, value):
    assert numeral(word) == value


@pytest.mark.parametrize("words, value", [("δευτερου και εικοστου", (22, 3)), ("εικοστου πρωτου", (21, 2)),
                                          ("δωδεκατου ετους", (12, 1)), ("πρωτου και δευτερου", (1, 1))])  # fmt: skip
def test_ordinal_words(words, value):
    assert ordinal(words.split(), 0) == value


def test_a_numeral_is_a_regnal_year_only_in_a_formula_s_place():
    found = readings("ετους κα αδριανου καισαρος μεσορη ε· ιβ φαωφι κ και ιδ αντωνινου ετη ν αθυρ")
    assert [(r.value, r.kind) for r in found] == [(21, "year"), (12, "month"), (14, "title")]
    # a day after a month, an indiction, an age, an amount: none is a year
    assert readings("μεσορη ε ιγ ινδικτιονος ετη λ δραχμας ιβ") == []
    assert [(r.value, r.index) for r in readings("ετους λβ· επειφ")] == [(32, 1)]  # punctuation separates
    # an ordinal of several words is one reading: its last word is not year 20 again
    found = readings("μεχειρ του πρωτου και εικοστου ετους αδριανου καισαρος")
    assert [(r.value, r.index, r.kind) for r in found] == [(21, 2, "title")]


def _docs() -> list[SimpleNamespace]:
    """Training papyri of two reigns (eras 116 and 137) dated to the year as the calendar has it
    (Thoth in the earlier Julian year of the regnal year, Mesore in the later), and undated noise."""
    out = []
    for era, name, longest in ((116, "αδριανου", 21), (137, "αντωνινου", 23)):
        for n in range(1, longest + 1):
            for month, year in (("θωθ", era + n - 1), ("μεσορη", era + n)):  # each regnal year twice
                text = f"ετους {_spell(n)} {name} καισαρος του κυριου {month} ε"
                out.append(SimpleNamespace(source="ddb", text=text, letters=40, label=Label(year, year, "")))
    out.append(SimpleNamespace(source="ddb", text="πυρου αρταβας ιβ", letters=14, label=Label(None, None, "")))
    return out


def _spell(n: int) -> str:
    tens, units = divmod(n, 10)
    return ("ικλ"[tens - 1] if tens else "") + ("αβγδεϛζηθ"[units - 1] if units else "")


def test_eras_are_learnt_and_the_names_choose_between_them():
    docs = _docs()
    assert learn_eras(docs) == [116, 137]
    arrays, config = fit_formulae(docs, seed=0, epochs=60)
    config |= {"prior": 0.0, "calibration": [3.0, 0.0, 0.0, 0.0]}  # a sure reader
    reader = Formulae(arrays, config)
    flat = np.full(YEARS, 1 / YEARS)
    assert reader.read("ετους ε αντωνινου καισαρος", flat, FIRST)["year"] == 142
    assert reader.read("ετους ε αδριανου καισαρος", flat, FIRST)["year"] == 121
    # the month read is part of the conversion: Thoth–Choiak the earlier Julian year
    assert reader.read("ετους ε αντωνινου καισαρος χοιακ ι", flat, FIRST)["year"] == 141
    assert reader.read("θωθ ιβ ετους ε αντωνινου καισαρος", flat, FIRST)["year"] == 141
    assert reader.read("ετους ε αντωνινου καισαρος τυβι ι", flat, FIRST)["year"] == 142
    # a year no reign of the two reached is no reading of theirs
    assert reader.read("ετους ξ αδριανου καισαρος", flat, FIRST) is None
    mixed, found = reader.mix("ετους ε αντωνινου καισαρος του κυριου", flat, FIRST)
    assert np.isclose(mixed.sum(), 1) and found["prob"] > 0.9 and found["regnal_year"] == 5
    year, low, high = date_summary(FIRST + np.arange(YEARS + 1), mixed)
    assert abs(year - 142) <= 1 and low <= 142 <= high
    same, none = reader.mix("πυρου αρταβας ιβ", flat, FIRST)  # nothing read: the distribution as it was
    assert none is None and same is flat


@pytest.mark.parametrize("word, month", [("θωθ", 1), ("φαωφι", 2), ("αθυρ", 3), ("χοιακ", 4), ("χοι", 4),
                                         ("τυβι", 5), ("μεσορη", 12), ("επαγομενων", 13), ("χοινικας", None),
                                         ("παυλος", None), ("ετους", None)])  # fmt: skip
def test_months_are_whole_words(word, month):
    assert month_number(word) == month


def test_the_month_rule_of_the_egyptian_year():
    """From Augustus on (1 Thoth = 29/30 August) Thoth–Choiak fall in the earlier Julian year,
    Tybi–Epagomenai in the later; in 250 BC 1 Thoth fell in late October, so Thoth and Phaophi
    were before 1 January and Hathyr after."""
    assert [later_half(m, 140) for m in range(1, 14)] == [0, 0, 0, 0] + [1] * 9
    assert [later_half(m, -250) for m in (1, 2, 3, 12)] == [0, 0, 1, 1]
    assert later_half(4, -50) == 0 and later_half(5, -50) == 1  # 1 Thoth about 5 September
    eras = np.asarray([116, 137])
    assert list(regnal_years(eras, Reading(12, 0, "year", month=1))) == [127, 148]  # Thoth of year 12: AD 148
    assert list(regnal_years(eras, Reading(12, 0, "year", month=12))) == [128, 149]  # Mesore: AD 149
    assert list(regnal_years(eras, Reading(12, 0, "year"))) == [128, 149]  # no month: the later, mostly


def test_a_real_formula_of_thoth_gives_the_earlier_year():
    """Antoninus Pius's year 12 ran from 29 August 148 to 28 August 149: a document of Thoth in it
    is of AD 148, one of Mesore of AD 149 (the packaged reader)."""
    from apollo_restore.attribution.attribute import attribute

    thoth = attribute("Θωθ ιϛ ἔτους ιβ Αὐτοκράτορος Καίσαρος Τίτου Αἰλίου Ἁδριανοῦ Ἀντωνίνου Σεβαστοῦ Εὐσεβοῦς",
                      parallels=False)  # fmt: skip
    mesore = attribute("ἔτους ιβ Αὐτοκράτορος Καίσαρος Τίτου Αἰλίου Ἁδριανοῦ Ἀντωνίνου Σεβαστοῦ Εὐσεβοῦς Μεσορὴ ιϛ",
                       parallels=False)  # fmt: skip
    assert thoth.formula.year == 148 and thoth.year == 148
    assert mesore.formula.year == 149 and mesore.year == 149


def test_calibration_fits_how_often_the_year_is_right():
    docs = _docs()
    arrays, config = fit_formulae(docs, seed=0, epochs=60)
    reader = Formulae(arrays, config | {"prior": 1.0, "calibration": [0.0, 0.0, 0.0, 0.0]})
    model = SimpleNamespace(first_year=FIRST, probabilities=lambda text, letters: (None, None),
                            reads_formulae=lambda place_probs: True,
                            years=lambda probs: np.full(YEARS, 1 / YEARS))  # fmt: skip
    # validation: each text twice, once with its label and once with a label 30 years later
    valid = [SimpleNamespace(source="ddb", text=d.text, letters=40,
                             label=Label(d.label.lo + shift, d.label.hi + shift, ""))
             for d in docs[:-1] for shift in (0, 30)]  # fmt: skip
    chosen = calibrate_formulae(reader, model, valid)
    assert set(chosen) == {"prior", "calibration", "name_calibration", "threshold"}
    sure = {"kind": "year", "sure": 0.99, "top": 0.99, "others": 0, "bag": 3 / YEARS}
    assert 0.3 < reader.confidence(sure) < 0.7  # right about half the time, and it says so


def test_dated_names_give_the_year_their_documents_agree_on():
    docs = _docs()
    for year in (361, 361, 362):  # a consul's name, in three papyri dated to the year
        docs.append(SimpleNamespace(source="ddb", text="υπατειας ταυρου και φλωρεντιου", letters=26,
                                    label=Label(year, year, "")))  # fmt: skip
    docs.append(SimpleNamespace(source="ddb", text="ταυρου αρταβαι", letters=12, label=Label(300, 400, "")))
    names = learn_names(docs)
    assert names["ταυρου"] == 361 and names["φλωρεντιου"] == 361
    assert "υπατειας" in names and "καισαρος" not in names  # across two reigns: no year
    # a dated name is a proper name: a word the editions capitalise, never a common noun
    proper = proper_names({"ταυρου": (43, 65), "φλωρεντιου": (28, 28), "υπατειας": (40, 2422)})
    assert set(learn_names(docs, proper)) == {"ταυρου", "φλωρεντιου"}
    arrays, config = fit_formulae(docs, seed=0, epochs=10)
    reader = Formulae(arrays, config | {"prior": 0.0, "name_calibration": [0.0, 2.0, 0.0, 0.0, 0.0]})
    found = reader.named("μετα την υπατειαν ταυρου και φλωρεντιου")
    assert found["year"] == 361 and found["agree"] == 2 and found["kind"] == "name"
    mixed, said = reader.mix("μετα την υπατειαν ταυρου και φλωρεντιου", np.full(YEARS, 1 / YEARS), FIRST)
    assert said["year"] == 361 and said["regnal_year"] is None and said["prob"] > 0.5


@pytest.fixture(scope="module")
def reader() -> Formulae:
    docs = _docs()
    arrays, config = fit_formulae(docs, seed=0, epochs=20)
    return Formulae(arrays, config | {"prior": 1.0, "calibration": [1.0, 1.0, 1.0, 1.0],
                                      "name_calibration": [1.0, 1.0, 1.0, 1.0]})  # fmt: skip


WORDS = ["ετους", "ετει", "κα", "ιβ", "ρμδ", "δευτερου", "και", "εικοστου", "αδριανου", "καισαρος", "μεσορη", "φαωφι",
         "ινδικτιονος", "ετη", "--", "…", "·", "αντωνινου", "πυρου", "θωθ", "ξ", "ιδ"]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=40), st.floats(0.0, 1.0))
def test_any_text_gives_a_distribution(reader, words, tilt):
    """Whatever the words, the mixture is a distribution and its summary is ordered."""
    prior = np.linspace(tilt, 1 - tilt, YEARS) + 1e-3
    prior /= prior.sum()
    mixed, found = reader.mix(" ".join(words), prior, FIRST)
    assert mixed.shape == (YEARS,) and (mixed >= 0).all() and np.isclose(mixed.sum(), 1)
    year, low, high = date_summary(FIRST + np.arange(YEARS + 1), mixed)
    assert low <= year <= high
    if found is not None:
        assert 0 <= found["prob"] <= 1 and FIRST <= found["year"] < FIRST + YEARS


def test_a_common_noun_is_no_dated_name():
    """The packaged reader's dated names are proper names: ``διαγνώσει`` (a hearing) dates nothing."""
    from apollo_restore.attribution.attribute import attribute

    found = attribute("ὁ στρατηγὸς ἐν τῇ διαγνώσει ἐκέλευσε τὸν [- - -] ἀποδοῦναι τὰ πρόβατα τῷ ἀδελφῷ",
                      parallels=False)  # fmt: skip
    assert found.formula is None or "διαγνωσει" not in found.formula.words


def test_a_reading_under_the_threshold_leaves_the_date_alone(reader):
    flat = np.full(YEARS, 1 / YEARS)
    reader.threshold = 1.0  # no reading is that sure
    try:
        mixed, found = reader.mix("ετους ε αντωνινου καισαρος του κυριου", flat, FIRST)
    finally:
        reader.threshold = 0.0
    assert found is None and mixed is flat
