"""norm.v1, rule by rule, and its properties (idempotent, closed alphabet, no hyphen)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apollo_restore.data.normalise import ALPHABET, GAP_CHAR, normalise, normalise_with_gaps


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # lowercase
        ("ΑΒΓ", "αβγ"),
        # accents and breathings removed
        ("ἄνθρωπος ὁ ὗς", "ανθρωπος ο υς"),
        ("Ἀθηναῖοι", "αθηναιοι"),
        # iota subscript becomes adscript ι
        ("τῷ δήμῳ τῇ", "τωι δημωι τηι"),
        ("ᾼ", "αι"),
        # lunate sigma, then final sigma from position
        ("ϲοφοϲ", "σοφος"),
        ("ΣΟΦΟΣ", "σοφος"),
        ("σοφοσ καὶ", "σοφος και"),
        ("ςοφος", "σοφος"),
        # digits removed
        ("ἔτους 12 καί", "ετους και"),
        # punctuation runs become one middle dot
        ("χαίρειν. καὶ", "χαιρειν· και"),
        ("α,;.  β", "α· β"),
        ("α· β", "α· β"),
        # whitespace collapsed and trimmed
        ("  α \n\t β  ", "α β"),
        # non-Greek letters dropped
        ("abc αβγ", "αβγ"),
        ("hὸς", "ος"),
        # the hyphen never survives
        ("ἔρχε-ται", "ερχε· ται"),
        ("- - -", "·"),
        # stigma, koppa, sampi kept; digamma is outside the norm.v1 alphabet (docs/design.md, *Normalised text*)
        ("ϝ ϛ ϙ ϡ", "ϛ ϙ ϡ"),
    ],
)
def test_normalise_rules(raw, expected):
    assert normalise(raw) == expected


def test_normalise_with_gaps_keeps_markers():
    assert normalise_with_gaps("Ἀβ --- γ … δ") == "αβ --- γ … δ"
    assert normalise_with_gaps("σοφοσ--") == "σοφοσ--"


_GREEKISH = st.text(
    alphabet=st.sampled_from(list("ΑαἀἄᾳϲσςΣβγ ,.·;-–—…0123456789abc\n\t\u0301\u0313\u0345\u0323ϝϛϙϡ'’()[]")),
    max_size=60,
)
_ANY = st.one_of(st.text(max_size=60), _GREEKISH)


@settings(max_examples=300, deadline=None)
@given(_ANY)
def test_normalise_is_idempotent(text):
    once = normalise(text)
    assert normalise(once) == once


@settings(max_examples=300, deadline=None)
@given(_ANY)
def test_normalise_output_has_no_hyphen(text):
    assert GAP_CHAR not in normalise(text)


@settings(max_examples=300, deadline=None)
@given(_ANY)
def test_normalise_output_alphabet_is_closed(text):
    assert set(normalise(text)) <= ALPHABET
