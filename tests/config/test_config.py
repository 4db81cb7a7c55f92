"""Run configuration: types checked per field, dotted overrides merged into the defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from apollo_restore.config import from_mapping, load_config


@dataclass
class Inner:
    p: float = 0.5
    mode: str = "middle"


@dataclass
class Run:
    steps: int = 10
    lr: float = 1e-3
    bf16: bool = True
    init_from: str | None = None
    weights: dict[str, float] = field(default_factory=lambda: {"ddb": 3.0, "literary": 0.3})
    targets: list[str] = field(default_factory=lambda: ["q"])
    inner: Inner = field(default_factory=Inner)


def build(*overrides: str, path=None) -> Run:
    return from_mapping(Run, load_config(path, list(overrides), Run), "run option")


@pytest.mark.parametrize(
    "override, message",
    [
        ("bf16=maybe", "run option 'bf16' expects bool, got 'maybe'"),
        ("steps=abc", "run option 'steps' expects int, got 'abc'"),
        ("steps=2.5", "run option 'steps' expects int, got 2.5"),
        ("steps=true", "run option 'steps' expects int, got True"),
        ("lr=fast", "run option 'lr' expects float, got 'fast'"),
        ("init_from=3", "run option 'init_from' expects str | None, got 3"),
        ("weights.ddb=lots", "run option 'weights.ddb' expects float, got 'lots'"),
        ("targets=q", "run option 'targets' expects list[str], got 'q'"),
        ("inner.p=x", "run option 'inner.p' expects float, got 'x'"),
        ("inner=3", "run option 'inner' expects Inner, got 3"),
    ],
)
def test_config_rejects_wrong_types_naming_key_type_and_value(override, message):
    with pytest.raises(ValueError) as err:
        build(override)
    assert str(err.value) == message


def test_config_rejects_unknown_keys_nested_too():
    with pytest.raises(ValueError, match=r"^unknown run option\(s\): stepz$"):
        build("stepz=3")
    with pytest.raises(ValueError, match=r"^unknown run option\(s\): inner.q$"):
        build("inner.q=3")


def test_config_converts_values_to_the_field_type():
    run = build("steps=7", "lr=1e-4", "bf16=false", "init_from=null", "lr=2")
    assert (run.steps, run.bf16, run.init_from) == (7, False, None)
    assert run.lr == 2.0 and isinstance(run.lr, float)
    assert build("lr=1e-4").lr == pytest.approx(1e-4)  # YAML 1.1 reads 1e-4 as a string


def test_config_dotted_override_keeps_the_other_default_entries():
    assert build("weights.ddb=2").weights == {"ddb": 2.0, "literary": 0.3}
    assert Run().weights == {"ddb": 3.0, "literary": 0.3}  # the default itself is not changed


def test_config_dotted_override_merges_into_the_file_mapping(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("steps: 3\nweights:\n  ddb: 1\n", encoding="utf-8")
    run = build("weights.dclp=4", path=path)
    assert run.steps == 3 and run.weights == {"ddb": 1.0, "dclp": 4.0}  # the file's mapping replaces the default


def test_config_nested_dataclass_from_yaml_and_overrides(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("inner:\n  mode: all\n", encoding="utf-8")
    run = build("inner.p=0.25", path=path)
    assert run.inner == Inner(p=0.25, mode="all")
    assert build().inner == Inner()


def test_config_load_errors(tmp_path):
    with pytest.raises(ValueError, match="is not key=value"):
        load_config(None, ["steps"])
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must hold a mapping"):
        load_config(path, [])
    with pytest.raises(ValueError, match="'steps' is not a mapping"):
        load_config(None, ["steps=3", "steps.x=1"])


def test_config_training_options_keep_default_weights():
    from apollo_restore.data.table import SOURCE_WEIGHTS
    from apollo_restore.train.loop import TrainConfig

    assert TrainConfig().weights == SOURCE_WEIGHTS  # one default for every recipe (shards read it too)
    cfg = TrainConfig.from_dict(load_config(None, ["weights.ddb=2", "steps=5"], TrainConfig))
    assert cfg.weights == {**SOURCE_WEIGHTS, "ddb": 2.0} and cfg.steps == 5
    with pytest.raises(ValueError, match="^training option 'threads' expects int, got 'two'$"):
        TrainConfig.from_dict(load_config(None, ["threads=two"], TrainConfig))
