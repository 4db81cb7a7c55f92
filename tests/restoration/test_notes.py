"""Notes on doubtful readings (a missed hint, a repeat of the context, a non-word) and their demotion."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.data.normalise import letter_count
from apollo_restore.data.orthography import EditionForms
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.presentation.notes import hint_note, notes_for
from apollo_restore.restoration.presentation.present import Presented
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.doubts import REPEAT_LETTERS, repeats
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.schema.restoration import Candidate
from tests.stubs import FixedReadings

FORMS = EditionForms.from_forms(["πλεῖστα", "χαίρειν", "καὶ", "διὰ", "παντὸς", "ὑγιαίνειν", "σε"])
PREFIX, SUFFIX = "τωι αδελφωι πλειστα ", " και δια παντοσ υγιαινειν"
LETTERS = st.text("αβγδεζηθικλμνξοπρστυφχψω", min_size=1, max_size=12)


#: the readings a scholar called junk for ``πλεῖστα [.7] καὶ διὰ``, best first, the answer last
JUNK = [("χ και δια", -1.0), ("χαιρειν σε", -1.2), ("χαιριν α", -1.4), ("χαιρειν", -1.6)]


def _shown(demotions: Demotions) -> list[Candidate]:
    return Presented(FixedReadings(JUNK, name="junk"), FORMS, Ranking(demotions)).candidates(
        PREFIX, SUFFIX, Hint.exact(7), 4
    )


def test_each_doubtful_reading_says_why_and_the_answer_says_nothing():
    notes = {c.text: c.notes for c in _shown(Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None))}
    assert notes == {
        "χ και δια": ["repeats the text after the gap", "leaves a non-word: χ"],
        "χαιρειν σε": ["9 letters, hint 7"],
        "χαιριν α": ["leaves non-words: χαιριν, α"],
        "χαιρειν": [],
    }


def test_repeats_and_missed_hints_are_demoted_below_the_answer():
    assert [c.text for c in _shown(Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None))] == [
        "χ και δια",
        "χαιρειν σε",
        "χαιριν α",
        "χαιρειν",
    ]
    # repeat ×0.1, missed hint ×0.1, truncated (a non-word at the gap's edge: χ after a space, α
    # before one) ×0.1; χ και δια both repeats and is truncated
    shown = _shown(Demotions(truncated=0.1, repeat=0.1, hint_miss=0.1, count_floor=None))
    assert [c.text for c in shown] == ["χαιρειν", "χαιρειν σε", "χαιριν α", "χ και δια"]
    assert abs(sum(c.prob for c in shown) - 1.0) < 1e-9
    # each factor acts alone
    assert [c.text for c in _shown(Demotions(truncated=1.0, repeat=0.1, hint_miss=1.0, count_floor=None))][-2:] == [
        "χαιρειν",
        "χ και δια",
    ]
    assert [c.text for c in _shown(Demotions(truncated=1.0, repeat=1.0, hint_miss=0.1, count_floor=None))][:2] == [
        "χ και δια",
        "χαιριν α",
    ]


def test_notes_without_edition_forms_still_say_repeats_and_hints():
    shown = Presented(
        FixedReadings(JUNK, name="junk"),
        None,
        Ranking(Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None)),
    ).candidates(PREFIX, SUFFIX, Hint.exact(7))
    assert {c.text: c.notes for c in shown}["χ και δια"] == ["repeats the text after the gap"]


def test_hint_notes_name_the_letters_and_the_hint():
    assert hint_note("χαιρειν σε", Hint.exact(7)) == "9 letters, hint 7"
    assert hint_note("χαιρειν σε", Hint.span(5, 7)) == "9 letters, hint 5–7"
    assert hint_note("χαιρειν σε", Hint.span(5, 9)) is None
    assert hint_note("χαιρειν σε", NO_HINT) is None


def test_a_repeat_is_the_reading_copying_the_context_next_to_it():
    assert repeats("χ και δια", "", " και δια παντοσ") == "after"
    assert repeats("ρειν χ", "πλειστα χαιρειν ", "") == "before"  # copies χαιρειν's end: ρειν
    assert repeats("ειν χ", "πλειστα χαιρειν ", "", least=3) == "before"
    assert repeats("ειν χ", "πλειστα χαιρειν ", "", least=4) is None  # 3 letters: too few
    assert repeats("χαιρειν", "πλειστα ", " και δια") is None
    assert repeats("και", "", "-- και δια") is None  # the suffix starts with another gap
    assert repeats("και", "και -", "") is None  # the prefix ends with another gap
    assert repeats("και·δια", "", "καιδια") == "after"  # letters only: spaces and · ignored


@given(LETTERS, LETTERS, st.integers(REPEAT_LETTERS, 12))
def test_a_reading_ending_with_the_suffix_start_is_a_repeat(head, suffix, n):
    copied = suffix[:n]
    assert (repeats(head + " " + copied, "", " " + suffix) == "after") == (len(copied) >= REPEAT_LETTERS)


@given(LETTERS, LETTERS)
def test_a_reading_sharing_no_letter_with_the_context_is_no_repeat(reading, context):
    context = "".join(ch for ch in context if ch not in reading)
    assert repeats(reading, context + " ", " " + context) is None


@given(LETTERS, st.integers(1, 12), st.integers(0, 3))
def test_a_hint_note_exactly_when_the_letters_are_outside_the_hint(reading, lo, width):
    hint = Hint.span(lo, lo + width)
    note = hint_note(reading, hint)
    assert (note is None) == hint.contains(letter_count(reading))
    assert note is None or note.startswith(f"{letter_count(reading)} letters, hint {lo}")


@given(st.lists(st.tuples(st.floats(0.01, 1.0), st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_demotion_keeps_a_ranked_distribution_ranked(rows):
    rows.sort(key=lambda row: -row[0])
    total = sum(p for p, _, _ in rows)
    cands = [Candidate(str(i), p / total, 0.0) for i, (p, _, _) in enumerate(rows)]
    flags = [(truncated, repeat, False) for _, truncated, repeat in rows]
    out = Ranking(Demotions(truncated=0.5, repeat=0.1, hint_miss=1.0, count_floor=None)).rank_doubted(
        cands, flags, NO_HINT
    )
    assert abs(sum(c.prob for c in out) - 1.0) < 1e-9
    assert [c.prob for c in out] == sorted((c.prob for c in out), reverse=True)
    assert sorted(c.text for c in out) == sorted(c.text for c in cands)


def test_notes_for_lists_several_non_words_together():
    cand = Candidate("γεωρ μητ", 0.5, 0.0, unknown_words=["γεωρ", "μητ"])
    assert notes_for(cand, "", "", NO_HINT) == ["leaves non-words: γεωρ, μητ"]


def test_the_cli_shows_the_notes_in_text_and_json(monkeypatch):
    from apollo_restore.restoration import load

    presented = Presented(
        FixedReadings(JUNK, name="junk"),
        FORMS,
        Ranking(Demotions(truncated=0.1, repeat=0.1, hint_miss=0.1, count_floor=None)),
    )
    monkeypatch.setattr(load, "load_restorer", lambda *args, **kwargs: presented)
    monkeypatch.setenv("COLUMNS", "200")
    text = "τῷ ἀδελφῷ πλεῖστα [.7] καὶ διὰ παντὸς ὑγιαίνειν"
    out = CliRunner().invoke(app, ["restore", text, "--show", "4"]).output
    rows = [line for line in out.splitlines() if line.strip()[:1] in "1234" and "%" in line]
    assert "χαίρειν" in rows[0] and "hint" not in rows[0] and "repeats" not in rows[0]
    assert "9 letters, hint 7" in rows[1]
    assert "χ καὶ διὰ" in rows[3] and "repeats the text after the gap; leaves a non-word: χ" in rows[3]
    body = json.loads(CliRunner().invoke(app, ["restore", text, "--json"]).output)
    notes = {c["text"]: c["notes"] for c in body["gaps"][0]["candidates"]}
    assert notes["χαιρειν σε"] == ["9 letters, hint 7"] and notes["χαιρειν"] == []


def test_a_dative_iota_counts_as_the_edition_writes_it():
    """``[.9]`` for κιβαριάτῃ: the editor's dots do not count the subscript iota that ``norm.v1``
    writes adscript (κιβαριατηι: 10 letters), so the reading agrees with the hint."""
    assert hint_note("κιβαριατηι", Hint.exact(9), "κιβαριάτῃ") is None
    assert hint_note("κιβαριατηι", Hint.exact(10), "κιβαριάτῃ") is None
    assert hint_note("κιβαριατηι", Hint.exact(9)) == "10 letters, hint 9"  # no edition form known
    assert hint_note("κιβαριατηι", Hint.exact(8), "κιβαριάτῃ") == "10 letters, hint 8"
