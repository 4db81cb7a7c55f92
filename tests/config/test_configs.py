"""Every file in ``configs/``, found by listing the folder (a new one is tested without being
named here): its first comment lines give the command that runs it (``apollo-restore train
--config configs/NAME``, ``train-fsdp --config configs/NAME`` or ``train-attribution --config
configs/NAME``), and the file loads as that
command's settings, within the bounds it checks before any data is read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from apollo_restore.config import load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
FILES = sorted(path for path in CONFIGS.iterdir() if path.is_file())


def command_of(path: Path) -> str:
    """The command the file's header comment runs it with (``train``, ``train-fsdp`` or ``train-attribution``)."""
    header = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#"))
    found = re.search(
        rf"apollo[-_]restore (train|train-fsdp|train-attribution) --config configs/{re.escape(path.name)}\b", header
    )
    assert found, f"{path.name}: no comment line runs it (`apollo-restore train --config configs/{path.name}`)"
    return found.group(1)


def test_the_folder_holds_the_recipes():
    assert len(FILES) >= 8 and all(path.suffix == ".yaml" for path in FILES), [p.name for p in FILES]


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_every_config_file_is_valid_for_the_command_that_runs_it(path):
    if command_of(path) == "train":
        from apollo_restore.train.loop import TrainConfig, check_names
        from apollo_restore.train.probe import DEFAULT_SETTINGS, setting_config

        cfg = TrainConfig.from_dict(load_config(path, [], TrainConfig))
        check_names(cfg)
        for setting in DEFAULT_SETTINGS:  # and what `train --probe` makes of it
            setting_config(cfg, setting)
    elif command_of(path) == "train-attribution":
        from apollo_restore.schema.training import AttributionTrainConfig

        AttributionTrainConfig.from_dict(load_config(path, [], AttributionTrainConfig))
    else:
        from apollo_restore.scale.train_fsdp import FsdpConfig

        FsdpConfig.from_dict(load_config(path, [], FsdpConfig))
