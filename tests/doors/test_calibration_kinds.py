"""Issue 56's probes of a folder's settings: each calibration kind is applied only to the scores
it was fitted on (its own ``fitted_for``: a ``kinds.real`` block copied from another folder's fit
is not applied, with a warning); ``presentation: null``, which the schema declares, restores; a
member weight so small that the weighted mean underflows (``5e-324``) is refused at load
(``E505`` naming it). Copies of the shipped folder, one thing changed."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.errors import ModelFolderError
from apollo_restore.model.folder import META_FILE
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE, Calibration
from tests.stubs import edit_json, shipped_model_copy

TEXT = "Κόμων Μουσαίου [.4] χαίρειν"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return shipped_model_copy(tmp_path)


def test_the_shipped_calibration_records_each_kinds_fit_and_is_applied():
    cal = Calibration.load(DEFAULT_MODEL / CALIBRATION_FILE)
    assert set(cal.fitted) == {"real", "synthetic", "literary", "inscription"}  # each its own block (issue 64)
    assert cal.texts["literary"] != cal.for_kind("synthetic")  # moved by a temperature and a bias, on top
    assert all(f["model_fingerprint"] == cal.info["model_fingerprint"] for f in cal.fitted.values())
    assert load_restorer(DEFAULT_MODEL).ranking.calibration is not None


def _copied_from_another_fit(data: dict) -> None:
    data["kinds"]["real"]["exact"]["a"] = 2.0
    data["kinds"]["real"]["fitted_for"]["model_fingerprint"] = "0123456789abcdef"  # as another folder's fit records


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (_copied_from_another_fit, "its real parameters were fitted on other scores"),
        (lambda d: d["kinds"]["real"].pop("fitted_for"), "its real parameters record no fitted_for"),
        (lambda d: d["kinds"]["synthetic"]["fitted_for"].update(precision="fp32"), "its synthetic parameters were"),
        (lambda d: d["kinds"]["literary"]["fitted_for"].update(precision="fp32"), "its literary parameters were"),
    ],
)
def test_a_kind_fitted_on_other_scores_is_not_applied(folder, caplog, edit, said):
    edit_json(folder, CALIBRATION_FILE, edit)
    with caplog.at_level(logging.WARNING):
        assert load_restorer(folder).ranking.calibration is None
    assert said in caplog.text and "uncalibrated" in caplog.text


def test_presentation_null_restores_with_the_default_demotions(folder):
    edit_json(folder, META_FILE, lambda m: m.update(presentation=None))
    done = CliRunner().invoke(app, ["restore", TEXT, "--model", str(folder), "--neural-only", "--k", "3"])
    assert done.exit_code == 0 and "Traceback" not in done.output and "Presentation" not in done.output, done.output


@pytest.mark.parametrize("weight", [5e-324, 1e-300, 1e-9])
def test_a_weight_so_small_the_mean_underflows_is_E505_at_load(folder, weight):
    def tiny(meta: dict) -> None:
        for member in meta["ensemble"]["members"]:
            member["weight"] = 0.0
        meta["ensemble"]["members"][0]["weight"] = weight

    edit_json(folder, META_FILE, tiny)
    with pytest.raises(ModelFolderError, match=r"^\[E505\] .*ensemble.members\[0\].weight"):
        load_restorer(folder)
    done = CliRunner().invoke(app, ["restore", TEXT, "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith("error: [E505]"), done.output
