"""Run configuration: a YAML file and dotted overrides merged into the defaults, checked by the
settings model (pydantic, the one type checker): every refusal names the key, what it must be and
the value, numbered."""

from __future__ import annotations

import pytest

from apollo_restore.config import load_config
from apollo_restore.schema.training import SOURCE_WEIGHTS, SettingError, TrainConfig


def build(*overrides: str, path=None) -> TrainConfig:
    return TrainConfig.from_dict(load_config(path, list(overrides), TrainConfig))


@pytest.mark.parametrize(
    "override, message",
    [
        ("bf16=maybe", "sets bf16 = 'maybe'; it must be true or false"),
        ("steps=abc", "sets steps = 'abc'; it must be a whole number from 1"),
        ("steps=2.5", "sets steps = 2.5; it must be a whole number from 1"),
        ("steps=true", "sets steps = True; it must be a whole number from 1"),
        ("lr=fast", "sets lr = 'fast'; it must be a number in (0, 1]"),
        ("init_from=3", "sets init_from = 3; it must be text of 1 to 4096 characters (a path) or null"),
        ("weights.ddb=lots", "sets weights.ddb = 'lots'; it must be a valid number"),
        ("weights=3", "sets weights = 3"),
    ],
)
def test_config_rejects_wrong_types_naming_key_type_and_value(override, message):
    with pytest.raises(SettingError) as err:
        build(override)
    assert str(err.value).startswith("[E602] train: the config (--config and its key=value options) ")
    assert message in str(err.value)


def test_config_rejects_unknown_keys():
    with pytest.raises(SettingError, match=r"sets stepz = 3; it must be one of out, steps, "):
        build("stepz=3")


def test_config_converts_values_to_the_field_type():
    run = build("steps=7", "lr=1e-4", "min_lr=0", "bf16=false", "init_from=null", "lr=1")
    assert (run.steps, run.bf16, run.init_from) == (7, False, None)
    assert run.lr == 1.0 and isinstance(run.lr, float)
    assert build("lr=1e-3").lr == pytest.approx(1e-3)  # YAML 1.1 would read 1e-3 as a string


def test_config_dotted_override_keeps_the_other_default_entries():
    assert build("weights.ddb=2").weights == {**SOURCE_WEIGHTS, "ddb": 2.0}
    assert TrainConfig().weights == SOURCE_WEIGHTS  # the default itself is not changed


def test_config_dotted_override_merges_into_the_file_mapping(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("steps: 3\nweights:\n  ddb: 1\n", encoding="utf-8")
    run = build("weights.dclp=4", path=path)
    assert run.steps == 3 and run.weights == {"ddb": 1.0, "dclp": 4.0}  # the file's mapping replaces the default


def test_config_load_errors(tmp_path):
    with pytest.raises(ValueError, match="is not key=value"):
        load_config(None, ["steps"])
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must hold a mapping"):
        load_config(path, [])
    with pytest.raises(ValueError, match="'steps' is not a mapping"):
        load_config(None, ["steps=3", "steps.x=1"])
    with pytest.raises(SettingError, match="a mapping of names"):
        TrainConfig.from_dict({1: 2})


def test_config_training_options_keep_default_weights():
    assert TrainConfig().weights == SOURCE_WEIGHTS  # one default for every recipe (shards read it too)
    cfg = TrainConfig.from_dict(load_config(None, ["weights.ddb=2", "steps=5"], TrainConfig))
    assert cfg.weights == {**SOURCE_WEIGHTS, "ddb": 2.0} and cfg.steps == 5
    with pytest.raises(SettingError, match=r"^\[E602\] train: .* sets threads = 'two'; it must be a whole number"):
        TrainConfig.from_dict(load_config(None, ["threads=two"], TrainConfig))
