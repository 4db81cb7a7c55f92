"""Issue 35's probes of the Python API and of long contexts: a model that is not a path is a
numbered error; each side of a gap is cut to 1,000 characters before any heavy work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import apollo_restore
from apollo_restore.data.formats import GapExample
from apollo_restore.errors import RequestError
from apollo_restore.hint import Hint
from apollo_restore.restoration.context import DEFAULT_WINDOW
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.predict import PredictJob, predict
from apollo_restore.restoration.presentation.present import Presented
from apollo_restore.restoration.request import check_gap
from tests.stubs import FixedReadings

LONG = "και του κυριου αυτοκρατορος " * 35_000  # 980,000 characters
SHORT = "ετους δευτερου "
AFTER = " καισαρος " + "του κυριου " * 200  # 2,210 characters


def lengths(restorer: FixedReadings) -> list[tuple[int, int]]:
    """The lengths of the contexts ``(prefix, suffix)`` the restorer was given."""
    return [(len(prefix), len(suffix)) for prefix, suffix in restorer.seen]


@pytest.mark.parametrize("model", [5, 2.5, ["folder"], {"a": 1}, True])
def test_restore_with_a_model_that_is_not_a_path_is_numbered(model) -> None:
    with pytest.raises(RequestError, match=r"\[E310\] model must be") as caught:
        apollo_restore.restore("ετους δευτερου [.9] καισαρος του κυριου", model=model)
    assert caught.value.code == "E310"
    with pytest.raises(RequestError, match="E310"):
        apollo_restore.load_restorer(model)


def test_restore_gives_the_restorer_at_most_the_window() -> None:
    restorer = FixedReadings([("αντωνινου", -1.0), ("αδριανου", -2.0)], name="recording", k=3)
    result = restore_text(restorer, LONG + SHORT + "[.9]" + AFTER)
    assert restorer.seen and all(p <= DEFAULT_WINDOW and s <= DEFAULT_WINDOW for p, s in lengths(restorer))
    assert result.gaps[0].candidates[0].text == "αντωνινου"


def test_a_gap_set_gap_is_cut_before_the_restorer_sees_it(tmp_path: Path) -> None:
    gap = GapExample("g1", "ddb", "d1", LONG + SHORT, AFTER, "αντωνινου", Hint.exact(9))
    checked = check_gap(gap)
    assert checked.prefix == (LONG + SHORT)[-DEFAULT_WINDOW:] and checked.suffix == AFTER[:DEFAULT_WINDOW]
    assert checked.target == gap.target and checked.hint == gap.hint and checked.id == gap.id
    restorer = FixedReadings([("αντωνινου", -1.0), ("αδριανου", -2.0)], name="recording", k=3)
    (prediction,) = predict(restorer, [gap], k=2, progress=False)
    assert lengths(restorer) == [(DEFAULT_WINDOW, DEFAULT_WINDOW)]
    # through the job, as `predict --gaps` reads a file
    gapset = tmp_path / "gaps.jsonl"
    gapset.write_text(json.dumps(gap.to_dict(), ensure_ascii=False) + "\n")
    job = PredictJob.open(gapset, tmp_path / "preds.jsonl", k=2)
    assert [(len(g.prefix), len(g.suffix)) for g in job.todo] == [(DEFAULT_WINDOW, DEFAULT_WINDOW)]
    job.output.close()


def test_presented_candidates_cut_the_context_first() -> None:
    restorer = FixedReadings([("αντωνινου", -1.0), ("αδριανου", -2.0)], name="recording", k=3)
    cands = Presented(restorer).candidates(LONG + SHORT, AFTER, Hint.exact(9), k=2)
    assert lengths(restorer) == [(DEFAULT_WINDOW, DEFAULT_WINDOW)] and cands[0].text == "αντωνινου"
