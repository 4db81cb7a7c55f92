"""An exact count holds the top of the list (issue 36, item 2): under ``[.7]`` a reading that misses
the count does not lead while a right-length reading the model rates is in the list; when none is
rated (the count may be wrong), the model's reading still leads. The treatment and its floor were
chosen on validation gaps with right and wrong counts (``benchmarks/exact_count.py``)."""

from __future__ import annotations

from apollo_restore.data.normalise import letter_count
from apollo_restore.data.orthography import EditionForms
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.presentation.present import Presented
from apollo_restore.restoration.ranking.demotions import HOLD_MARGIN, Demotions, hold_count
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.schema.folder import COUNT_FLOOR
from apollo_restore.schema.restoration import Candidate
from tests.stubs import FixedReadings

FORMS = EditionForms.from_forms(["οἰκέτου", "τοῦ", "τὸ", "ἐπερωτῶντος", "Μηνᾶ", "διὰ"])
PREFIX, SUFFIX = "πολει δια μηνα ", " επερωτωντοσ και"
#: issue 36's pool under [.7] (log-scores of the shipped default): the edition reads οικετου
POOL = [("οικετου το", -15.94), ("οικετου του", -16.82), ("οικετου", -41.08), ("ι οικετο", -44.43), ("ιως", -62.6)]


def _first(pool, hint: Hint, demotions: Demotions | None = None) -> Candidate:
    presented = Presented(FixedReadings(pool, name="pool", k=20), FORMS, Ranking(demotions or Demotions()))
    return presented.candidates(PREFIX, SUFFIX, hint, 20)[0]


def test_a_right_length_reading_leads_the_issue_example():
    first = _first(POOL, Hint.exact(7))
    assert first.text == "οικετου" and letter_count(first.text) == 7 and not first.notes
    # the factor alone (as shipped before) lets the 9-letter reading lead
    assert _first(POOL, Hint.exact(7), Demotions(count_floor=None)).text == "οικετου το"


def test_no_hold_without_an_exact_count():
    assert _first(POOL, NO_HINT).text == "οικετου το"
    assert _first(POOL, Hint.span(6, 8)).text == "οικετου το"


def test_a_miss_still_leads_when_no_right_length_reading_is_rated():
    # the count is off: its right-length readings are spread thin and leave non-words
    pool = [("οικετου το", -1.0), ("οικετ", -20.0), ("ικετου", -20.1), ("οικτου", -20.2), ("κετου", -20.3)]
    first = _first(pool, Hint.exact(6))
    assert first.text == "οικετου το" and first.notes == ["9 letters, hint 6"]


def test_hold_count_keeps_the_misses_order_below_the_rated_reading():
    cands = [Candidate("αβγδε", 0.6, -1.0), Candidate("αβγ", 0.3, -2.0), Candidate("αβγδ", 0.1, -3.0)]
    missed = [True, False, True]
    factors = hold_count(cands, [0.01, 1.0, 0.01], missed, COUNT_FLOOR)
    probs = [c.prob * f for c, f in zip(cands, factors)]
    assert probs[0] == HOLD_MARGIN * probs[1] and probs[0] > probs[2] and factors[1] == 1.0
    # already below: unchanged
    assert hold_count(cands, [1e-6, 1.0, 1e-6], missed, COUNT_FLOOR) == [1e-6, 1.0, 1e-6]
