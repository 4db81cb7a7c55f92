"""Edition forms: readings shown with accents, breathings, iota subscript and final sigma."""

from __future__ import annotations

import pytest

from apollo_restore.data.document import Document, Lacuna, Supplied, Text
from apollo_restore.data.orthography import EditionForms, edition_words, final_accent

FORMS = EditionForms.from_forms(["κυρίῳ", "κυρίου", "καὶ", "Ἀντωνίνου", "ἔτους", "τῷ", "χαίρειν", "αὐτοὶ"])


def test_keys_are_rederived_by_normalising_the_forms():
    assert FORMS.forms["κυριωι"] == "κυρίῳ" and FORMS.forms["αντωνινου"] == "Ἀντωνίνου" and "ετους" in FORMS


def test_display_whole_words_and_context_dependent_grave():
    assert FORMS.display("ετους αντωνινου", "", " καισαρος") == "ἔτους Ἀντωνίνου"
    assert FORMS.display("και", "x ", " y") == "καὶ"
    assert FORMS.display("και", "x ", "· y") == "καί"  # an oxytone keeps its acute before punctuation
    assert FORMS.display("unknownword", "", "") == "unknownword"


def test_partial_word_at_a_gap_edge_is_cut_from_the_whole_word():
    assert FORMS.display("ριωι", "τωι κυ", " χαιρειν") == "ρίῳ"
    assert FORMS.display("κυρι", "τωι ", "ωι χαιρειν") == "κυρί"
    assert FORMS.display("κυριω", "τωι ", "ι χαιρειν") == "κυρίῳ"  # ῳ stands for ωι: it goes with its ω


def test_unknown_words_flag_truncations_at_word_boundaries_only():
    assert FORMS.unknown_words("κυρ", "τωι ", " χαιρειν") == ["κυρ"]
    assert FORMS.unknown_words("κυριου", "τωι ", " χαιρειν") == []
    assert FORMS.unknown_words("κυρ", "τωι ", "-- χαιρειν") == []  # runs into another gap: not checked
    assert FORMS.unknown_words("κυ", "τωι ", "ριωι χαιρειν") == []


def test_final_accent_changes_only_the_last_syllable():
    assert final_accent("αὐτοὶ", True) == "αὐτοί" and final_accent("αὐτοί", False) == "αὐτοὶ"
    assert final_accent("κυρίῳ", False) == "κυρίῳ"  # ι–ω is no diphthong: the accent is on the penult


def test_save_load_round_trip(tmp_path):
    path = tmp_path / "forms.txt.xz"
    FORMS.save(path)
    assert EditionForms.load(path).forms == FORMS.forms


def test_edition_words_skip_words_touching_a_lacuna():
    doc = Document("d", "ddb", [Text("τῷ κυρίῳ "), Supplied("χαίρειν"), Text(". ἔτο"), Lacuna(3), Text(" Ἀντωνίνου")])
    assert list(edition_words(doc)) == [
        ("τωι", "τῷ", False),
        ("κυριωι", "κυρίῳ", False),
        ("χαιρειν", "χαίρειν", True),
        ("αντωνινου", "Ἀντωνίνου", True),
    ]


def test_the_end_of_the_text_is_a_word_boundary_but_a_context_cut_is_not():
    assert FORMS.unknown_words("κυρ", "τωι ", "") == ["κυρ"]
    assert FORMS.unknown_words("κυρ", "", " χαιρειν") == ["κυρ"]
    assert FORMS.unknown_words("ρ", "κυ", " χαιρειν") == []  # the prefix was cut inside a word


def test_abbreviations_written_bare_are_not_edition_forms():
    from apollo_restore.data.orthography import is_edition_form

    assert not is_edition_form("στρ", "στρ") and is_edition_form("εν", "ἐν") and is_edition_form("τις", "τις")


def test_a_breathing_written_before_a_capital_is_put_on_it():
    """DDB writes ``᾿Απόλλων`` as a combining psili before a bare capital: shown as ``Ἀπόλλων``."""
    forms = EditionForms.from_forms(["\u0313Απόλλων", "\u0313\u0301Αβαις", "καλῶς"])
    assert forms.form("απολλων") == "Ἀπόλλων" and forms.form("αβαις") == "Ἄβαις"
    assert forms.form("καλως") == "καλῶς"
    doc = Document("t", "ddb", [Text("παρὰ \u0313Απόλλωνος ")])
    assert [form for _, form, _ in edition_words(doc)] == ["παρὰ", "Ἀπόλλωνος"]


ENCLITIC_FORMS = EditionForms.from_forms(["ὑπὸ", "τινος", "παρὰ", "σοῦ", "ἀδελφὸς", "μου", "καλὸς", "ἐστιν", "ὁ", "τε"])


@pytest.mark.parametrize(
    "reading,prefix,suffix,shown",
    [
        ("υπο τινος", "και ", " χαιρειν", "ὑπό τινος"),  # issue 36: a grave before an enclitic is acute
        ("υπο", "και ", " τινος εστιν", "ὑπό"),  # the enclitic in the context after the gap
        ("αδελφος", "ο ", " μου", "ἀδελφός"),
        ("καλος", "", " εστιν", "καλός"),
        ("παρα", "και ", " σου", "παρὰ"),  # after a preposition the pronoun is orthotonic (παρὰ σοῦ)
        ("αδελφος", "ο ", " σου", "ἀδελφός"),  # elsewhere it is enclitic
        ("υπο", "και ", " του", "ὑπὸ"),  # the article is no enclitic
        ("υπο", "και ", "· τινος", "ὑπό"),  # a stop, as before
    ],
)
def test_a_final_grave_is_acute_before_an_enclitic(reading, prefix, suffix, shown):
    assert ENCLITIC_FORMS.display(reading, prefix, suffix) == shown


def test_a_single_letter_is_a_word_only_where_greek_has_one():
    """``ὑ`` (a letter the editions mark as an abbreviation) is shown bare alone; ``ὁ`` is a word;
    the ``ὲ`` of ``δ[ὲ]`` is the last letter of ``δὲ``, cut at the gap's edge as Leiden writes it."""
    forms = EditionForms.from_forms(["ὑ", "ὁ", "δὲ"])
    assert [forms.display(r, "και ", " του") for r in "υο"] == ["υ", "ὁ"]
    assert forms.display("ε", "δ", " του") == "ὲ"
