"""Edition forms are valid Greek (issue 46, item 4): never a circumflex on ε or ο, at most one
accent a word but before an enclitic."""

from __future__ import annotations

import unicodedata

import pytest

from apollo_restore.data.orthography import EditionForms, default_forms, valid_accents

ACCENTS = "\u0300\u0301\u0342"


def circumflex_on_short(form: str) -> bool:
    nfd = unicodedata.normalize("NFD", form)
    return any(base in "εοΕΟ" and mark == "\u0342" for base, mark in zip(nfd, nfd[1:]))


def accents(form: str) -> int:
    return sum(ch in ACCENTS for ch in unicodedata.normalize("NFD", form))


@pytest.mark.parametrize(
    ("written", "valid"),
    [
        ("ἐνεστο͂τος", "ἐνεστότος"),  # a variant spelling with the standard word's accent: acute on the short vowel
        ("λε͂ι", "λεῖ"),  # on a diphthong the circumflex stands on its second vowel
        ("ἀδελπιο͂ι", "ἀδελπιοῖ"),
        ("κυρίῳ", "κυρίῳ"),  # a valid form unchanged
        ("θεοῦ", "θεοῦ"),
        ("ἄνθρωπός", "ἄνθρωπος"),  # one accent a word ...
        ("προ͂ϊ", "πρόϊ"),  # no diphthong across a diaeresis
    ],
)
def test_valid_accents(written, valid):
    assert valid_accents(unicodedata.normalize("NFC", written)) == unicodedata.normalize("NFC", valid)


def test_a_second_accent_stays_before_an_enclitic():
    assert valid_accents("ἄνθρωπός", enclitic=True) == "ἄνθρωπός"
    forms = EditionForms.from_forms(["ἄνθρωπός", "τις"])
    assert forms.display("ανθρωπος", "", " τις") == "ἄνθρωπός"
    assert forms.display("ανθρωπος", "", " και") == "ἄνθρωπος"


def test_display_never_writes_an_impossible_accent():
    forms = EditionForms.from_forms(["ἐνεστο͂τος", "λε͂ι", "ἀγαθε͂ς"])
    assert forms.display("ενεστοτος", "του ", " μηνος") == "ἐνεστότος"
    assert forms.display("λει", "", "") == "λεῖ"
    assert forms.display("θες", "αγα", " και") == "θές"  # cut from the whole word, fixed first


def test_no_form_of_the_shipped_table_shows_an_impossible_accent():
    forms = default_forms()
    if forms is None:
        pytest.skip("no edition-forms table shipped")
    stored = forms.values
    assert sum(map(circumflex_on_short, stored)) > 0  # the editions write some (155 in the shipped table)
    shown = [forms.form(key) for key in forms.keys]
    assert not [f for f in shown if circumflex_on_short(f)]
    assert not [f for f in shown if accents(f) > 1]
