"""``tune --what calibration`` does not fit a kind of text's block on its own gaps (that is
``benchmarks/real_lacunae_calibration.py on-top``): a folder whose calibration held such blocks is
told what the new calibration gives those texts instead, never left to lose them silently.

    python -m pytest -q tests/tune/test_not_refitted.py
"""

from __future__ import annotations

import shutil
from pathlib import Path

from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE, Calibration
from apollo_restore.tune.run import TuneResult, fitted_on_top


def test_the_shipped_folder_holds_blocks_fitted_on_their_own_gaps() -> None:
    assert fitted_on_top(DEFAULT_MODEL) == ["inscription", "literary"]


def test_a_folder_without_a_readable_calibration_has_none(tmp_path: Path) -> None:
    assert fitted_on_top(tmp_path) == []
    (tmp_path / CALIBRATION_FILE).write_text("[")
    assert fitted_on_top(tmp_path) == []


def test_a_calibration_tune_wrote_has_none(tmp_path: Path) -> None:
    shutil.copy(DEFAULT_MODEL / CALIBRATION_FILE, tmp_path / CALIBRATION_FILE)
    cal = Calibration.load(tmp_path / CALIBRATION_FILE)
    cal.info = {k: v for k, v in cal.info.items() if k != "by_kind"}
    cal.save(tmp_path / CALIBRATION_FILE)
    assert cal.texts and fitted_on_top(tmp_path) == []


def test_the_report_says_what_each_lost_block_becomes() -> None:
    cal = Calibration.load(DEFAULT_MODEL / CALIBRATION_FILE)
    cal.texts = {"literary": dict(cal.synthetic)}  # what fit_calibration writes
    lines = TuneResult(Path("m"), 10, calibration=cal, not_refitted=["inscription", "literary"]).lines()
    said = [line for line in lines if "on-top" in line]
    assert len(said) == 2
    assert "inscription texts now take the real lacunae's parameters" in said[0]
    assert "literary texts now take the synthetic gaps' parameters" in said[1]
