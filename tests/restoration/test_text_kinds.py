"""Probabilities by kind of text (issue 64): literary texts and inscriptions take their own
parameters, the kind given or read from the text, and a reading that misses the count given is
calibrated as such."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from apollo_restore.errors import RequestError
from apollo_restore.hint import Hint
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.presentation.present import Presented
from apollo_restore.restoration.ranking.calibration import Calibration
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.restoration.request import validate
from apollo_restore.schema.folder import Scaling
from apollo_restore.schema.restoration import Candidate, RestoreRequest
from tests.stubs import FixedReadings

NO_DEMOTIONS = Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None)
SURE = Scaling(a=1.0, b=-8.0)  # "none of these" nearly never: the restorer's own q shown
MODEST = Scaling(a=0.3, b=0.0)  # a flatter list and room for none


def _calibration(**extra) -> Calibration:
    conditions = dict.fromkeys(("exact", "range", "none"), SURE)
    literary = dict.fromkeys(("exact", "range", "none"), MODEST)
    return Calibration(conditions, 1.0, {}, dict(conditions), texts={"literary": literary}, **extra)


POOL = [Candidate("δευτερον", 0.9, -1.0), Candidate("καμηλον", 0.1, -3.0)]


def test_a_literary_text_takes_its_own_parameters_and_a_documentary_one_the_real_ones():
    cal = _calibration()
    documentary = Ranking(NO_DEMOTIONS, cal).rank(POOL, "", "", Hint.exact(8))[0]
    literary = Ranking(NO_DEMOTIONS, cal, text="literary").rank(POOL, "", "", Hint.exact(8))[0]
    inscription = Ranking(NO_DEMOTIONS, cal, text="inscription").rank(POOL, "", "", Hint.exact(8))[0]
    assert documentary.prob > 0.85 and literary.prob < 0.5  # an own fit: less sure
    assert inscription.prob == pytest.approx(documentary.prob)  # no own parameters: the real ones


def test_a_calibration_by_kind_of_text_is_saved_and_read_back(tmp_path):
    cal = _calibration(miss_penalty=2.5)
    cal.save(tmp_path / "calibration.json")
    back = Calibration.load(tmp_path / "calibration.json")
    assert back.texts["literary"]["exact"] == MODEST and back.miss_penalty == 2.5
    assert back.for_kind("real", "inscription") == back.conditions


def test_a_reading_that_misses_an_exact_count_is_shown_as_such():
    """Issue 64: "ἐπ[εὶ εἰς Ἀ]λεξάνδρειαν" as [.6], a 5-letter reading noted "5 letters, hint 6", was
    shown at 70 %: the calibration lowers such a reading by its fitted miss penalty."""
    pool = [Candidate("ειςαλ", 0.8, -1.0), Candidate("ειεισα", 0.2, -2.0)]  # 5 letters first, hint 6
    plain = Ranking(NO_DEMOTIONS, _calibration()).rank(pool, "", "", Hint.exact(6))
    missing = Ranking(NO_DEMOTIONS, _calibration(miss_penalty=3.0)).rank(pool, "", "", Hint.exact(6))
    assert plain[0].text == "ειςαλ" and missing[0].text == "ειεισα"
    assert {c.text: c.prob for c in plain}["ειςαλ"] > 0.75 and {c.text: c.prob for c in missing}["ειςαλ"] < 0.25


def test_the_shipped_calibration_has_its_own_literary_parameters_and_a_miss_penalty():
    shipped = Calibration.load(DEFAULT_MODEL)
    assert "literary" in shipped.texts and shipped.miss_penalty > 0
    pool = [Candidate("ειςαλ", 0.8, -2.0), Candidate("ειεισα", 0.1, -6.0), Candidate("πολεως", 0.1, -6.0)]
    shown = {c.text: c.prob for c in Ranking(NO_DEMOTIONS, shipped).rank(pool, "", "", Hint.exact(6))}
    assert shown["ειςαλ"] < 0.3  # a count missed is not shown at 70 %


def _presented() -> Presented:
    return Presented(FixedReadings(POOL, k=2), ranking=Ranking(NO_DEMOTIONS, _calibration()))


def test_the_kind_given_chooses_the_calibration():
    text = "ἔτους [.8] Ἀντωνίνου Καίσαρος τοῦ κυρίου"
    given = restore_text(_presented(), text, kind="literary")
    assert given.kind == "literary" and not given.kind_read and given.gaps[0].candidates[0].prob < 0.5
    documentary = restore_text(_presented(), text, kind="documentary")
    assert documentary.gaps[0].candidates[0].prob > 0.85
    assert given.to_dict()["kind"] == "literary"


def test_a_kind_that_is_none_of_the_three_is_a_numbered_error():
    with pytest.raises(RequestError, match=r"E310.*kind"):
        validate(RestoreRequest("ἔτους [.8] Ἀντωνίνου", kind="poetry"))
    from apollo_restore.cli.app import app

    result = CliRunner().invoke(app, ["restore", "ἔτους [.8] Ἀντωνίνου Καίσαρος", "--kind", "poetry"])
    assert result.exit_code == 2 and "E310" in result.output


def test_the_kind_is_read_from_the_text_when_not_given():
    herodotus = "Λακεδαιμόνιοι ἤδη τῷ πολέμῳ [.8] ἐγίνοντο Τεγεητέων· ἐπὶ δὲ Λέοντος βασιλεύοντος καὶ Ἡγησικλέος"
    read = restore_text(_presented(), herodotus)
    assert read.kind == "literary" and read.kind_read
    receipt = "ἔτους δευτέρου Ἀντωνίνου Καίσαρος τοῦ κυρίου [.5] Τῦβι ἔλαβον παρὰ σοῦ ὑπὲρ φόρου"
    assert restore_text(_presented(), receipt).kind == "documentary"
