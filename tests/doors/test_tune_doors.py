"""Issue 56's probes of ``tune``: what it writes, it checks with the schema a load uses before
anything is replaced (``E706``: the folder stays as it was); a long ``--prepared`` path is
recorded shortened; a calibration of the declared most members is written and read back;
``presentation: null`` (declared valid) is fitted like an absent entry. Copies of the shipped
folder with two members (the neural model and the length prior), fitted on a few gaps."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.model.folder import META_FILE, read_meta
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE, Calibration
from apollo_restore.schema.folder import MAX_MEMBERS, Scaling
from apollo_restore.tune.folder import TuneError
from apollo_restore.tune.run import write_checked

MEMBERS = [{"name": "neural", "weight": 1.0}, {"name": "length", "weight": 2.0}]


@pytest.fixture
def ensemble_folder(tmp_path) -> Path:
    """A copy of the shipped model with a small ensemble entry (the neural model and the length prior)."""
    folder = Path(shutil.copytree(DEFAULT_MODEL, tmp_path / "model"))
    meta = json.loads((folder / META_FILE).read_text())
    meta["ensemble"] = {"members": MEMBERS, "search": {"hint_slack": 2}}
    (folder / META_FILE).write_text(json.dumps(meta))
    return folder


def _tune(folder: Path, prepared: Path, what: str):
    args = ["tune", "--model", str(folder), "--prepared", str(prepared), "--what", what, "--force"]
    return CliRunner().invoke(app, [*args, "--per-length", "1", "--limit", "3"])


def test_a_long_prepared_path_is_recorded_shortened_and_the_folder_still_loads(
    ensemble_folder, tiny_prepared, tmp_path_factory
):
    deep = Path(tmp_path_factory.mktemp("long"), *(["d" * 100] * 6))
    deep.mkdir(parents=True)
    long = deep / "prepared"
    shutil.copytree(tiny_prepared, long)
    assert len(str(long)) > 600
    done = _tune(ensemble_folder, long, "weights")
    assert done.exit_code == 0, done.output
    chosen = read_meta(ensemble_folder)["ensemble"]["chosen_by"]  # read back through the schema (≤ 500)
    assert len(chosen) <= 500 and "…" in chosen and chosen.startswith("apollo-restore tune")
    assert load_restorer(ensemble_folder) is not None


def test_presentation_null_is_tuned_like_no_entry(ensemble_folder, tiny_prepared):
    meta = json.loads((ensemble_folder / META_FILE).read_text())
    (ensemble_folder / META_FILE).write_text(json.dumps(meta | {"presentation": None}))
    assert load_restorer(ensemble_folder) is not None  # restore reads it as the defaults
    done = _tune(ensemble_folder, tiny_prepared, "demotions")
    assert done.exit_code == 0 and "Traceback" not in done.output, done.output
    assert set(read_meta(ensemble_folder)["presentation"]["demotions"]) == {
        "truncated", "repeat", "hint_miss", "count_floor",
    }  # fmt: skip


def _calibration(**info) -> Calibration:
    scaling = dict.fromkeys(("exact", "range", "none"), Scaling())
    return Calibration(scaling, 1.0, {"fitted_by": "test", **info}, dict(scaling))


def test_a_calibration_the_schema_would_refuse_is_not_written_and_the_old_files_stay(ensemble_folder):
    meta_before = (ensemble_folder / META_FILE).read_bytes()
    calibration_before = (ensemble_folder / CALIBRATION_FILE).read_bytes()
    new_meta = json.loads(meta_before) | {"presentation": {"demotions": {"repeat": 0.5}}}
    with pytest.raises(TuneError, match=r"^\[E706\] tune did not write .*calibration.json.*gaps"):
        write_checked(ensemble_folder, new_meta, _calibration(gaps=-1))
    assert (ensemble_folder / META_FILE).read_bytes() == meta_before  # put back
    assert (ensemble_folder / CALIBRATION_FILE).read_bytes() == calibration_before
    assert load_restorer(ensemble_folder) is not None  # the folder restores as before


def test_settings_the_schema_would_refuse_are_not_written(ensemble_folder):
    meta_before = (ensemble_folder / META_FILE).read_bytes()
    bad = json.loads(meta_before)
    bad["ensemble"]["chosen_by"] = "x" * 705
    with pytest.raises(TuneError, match=r"^\[E706\] tune did not write .*apollo_restore.json.*chosen_by"):
        write_checked(ensemble_folder, bad, None)
    assert (ensemble_folder / META_FILE).read_bytes() == meta_before


def test_a_calibration_of_the_most_members_is_written_and_read_back(ensemble_folder):
    backward = {"name": "infini", "weight": 1.0, "options": {"direction": "backward"}}
    members = [backward] * (MAX_MEMBERS - 1) + [{"name": "neural", "weight": 1.0}]  # 502 characters of labels
    meta = json.loads((ensemble_folder / META_FILE).read_text())
    meta["ensemble"]["members"] = members
    write_checked(ensemble_folder, meta, _calibration(gaps=10))
    cal = Calibration.load(ensemble_folder / CALIBRATION_FILE)
    assert len(cal.info["members"]) > 500 and cal.fitted["real"]["members"] == cal.info["members"]
