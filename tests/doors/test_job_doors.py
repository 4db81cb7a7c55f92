"""The job doors of issue 43: every refusal of ``evaluate``, ``tune``, ``train --probe``, the gap-set and
prediction readers and ``predict``'s resume is a numbered error (exit status 2, no traceback), before
any work: predictions for ids that are no gap (``E212``), a prepared corpus that cannot be read
(``E705``), a probe setting out of its bounds (``E602``), a gap or prediction line the schema refuses
(``E201`` naming the field), a resume after the calibration changed (``E209``).
"""

from __future__ import annotations

import json

from .test_evaluate_doors import evaluate, gap, prediction

# -- evaluate: predictions for ids that are no gap -------------------------------------------


def test_predictions_for_ids_that_are_no_gap_are_E212_and_nothing_is_scored(tmp_path):
    stray = [prediction(0, id="elsewhere:1", ms=9_000_000.0), prediction(1, id="elsewhere:2")]
    done = evaluate(tmp_path, [gap(i) for i in range(3)], [prediction(i) for i in range(3)] + stray)
    assert done.exit_code == 2 and "[E212]" in done.output and "Traceback" not in done.output
    assert "preds.jsonl has predictions for 2 id(s)" in done.output and "'elsewhere:1'" in done.output
    assert not (tmp_path / "report").exists()  # nothing computed, nothing written


def test_predictions_of_exactly_the_gaps_are_scored_with_their_times(tmp_path):
    done = evaluate(tmp_path, [gap(i) for i in range(3)], [prediction(i) for i in range(3)])
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "report" / "metrics.json").read_text())["meta"]["ms_per_gap"] == 3.0
