"""A model folder's demotions (``presentation.demotions`` in ``apollo_restore.json``), as the
product reads them: defaults when absent, every factor checked."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from apollo_restore.errors import ModelFolderError
from apollo_restore.model.folder import META_FILE, read_meta
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.load import calibration_for, scoring_of
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.schema import folder
from apollo_restore.schema.folder import HINT_MISS_FACTOR, REPEAT_FACTOR, TRUNCATED_FACTOR

PATH = Path("model") / META_FILE


def test_a_folder_without_the_entry_keeps_the_default_factors():
    assert Demotions.of_folder({}, PATH) == Demotions(
        truncated=TRUNCATED_FACTOR, repeat=REPEAT_FACTOR, hint_miss=HINT_MISS_FACTOR
    )
    partial = Demotions.of_folder({"presentation": {"demotions": {"repeat": 0.5}}}, PATH)
    assert partial == Demotions(truncated=TRUNCATED_FACTOR, repeat=0.5, hint_miss=HINT_MISS_FACTOR)


def test_the_factors_are_declared_once_in_the_schema_and_checked_in_code_too():
    fields = {name: repr(info) for name, info in Demotions.model_fields.items()}
    assert fields == {name: repr(info) for name, info in folder.Demotions.model_fields.items()}  # none added
    assert Demotions() == Demotions.of_folder({"presentation": None}, PATH)
    with pytest.raises(ValueError, match="repeat"):
        Demotions(repeat=0.0)


def test_the_shipped_folder_holds_todays_factors_and_its_calibration_still_applies():
    meta = read_meta(DEFAULT_MODEL)
    assert meta["presentation"]["demotions"] == Demotions().to_json()
    assert Demotions.of_folder(meta, DEFAULT_MODEL / META_FILE) == Demotions()
    assert calibration_for(DEFAULT_MODEL, scoring_of(DEFAULT_MODEL)) is not None  # fingerprint re-recorded


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ([0.1], "presentation"),
        ({"demotions": {"repeat": 0}}, "presentation.demotions.repeat"),
        ({"demotions": {"repeat": 1.5}}, "presentation.demotions.repeat"),
        ({"demotions": {"hint_miss": math.nan}}, "presentation.demotions.hint_miss"),
        ({"demotions": {"truncated": "0.1"}}, "presentation.demotions.truncated"),
        ({"demotions": {"truncated": True}}, "presentation.demotions.truncated"),
        ({"demotions": {"truncated": None}}, "presentation.demotions.truncated"),  # only count_floor may be null
    ],
)
def test_a_bad_factor_is_e505_naming_the_field(entry, field):
    with pytest.raises(ModelFolderError) as err:
        Demotions.of_folder({"presentation": entry}, PATH)
    assert str(err.value).startswith("[E505]") and f"{field} =" in str(err.value) and str(PATH) in str(err.value)


def test_a_factor_it_does_not_know_is_e522_naming_it_and_the_known_ones():
    with pytest.raises(ModelFolderError) as err:
        Demotions.of_folder({"presentation": {"demotions": {"truncate": 0.1}}}, PATH)
    message = str(err.value)
    assert message.startswith("[E522]") and "presentation.demotions gives 'truncate'" in message
    assert "truncated, repeat, hint_miss, count_floor" in message
