"""The package alone (``pip install .``, no extras): restoring, the command line and the web page
import none of the training stack, and the commands that need it say which extra to install.

    python -m pytest -q tests/install/test_light.py

Here the extras are installed (the test venv); a module is made missing by ``sys.modules[name] =
None``, which is what ``importlib.util.find_spec`` and ``import`` see when it is not installed.
``scripts/check_light_install.sh`` checks the same in a fresh venv with no extras.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.cli.common import SCALE_MODULES, TRAIN_MODULES
from apollo_restore.evaluate.report import NO_PLOTS, RELIABILITY_PLOT, REPORT_FILE, write_report

TRAINING_STACK = (*TRAIN_MODULES, *SCALE_MODULES, "datasets")

RESTORE_AND_SERVE = """
import json, sys
import apollo_restore
result = apollo_restore.restore("ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου")
import apollo_restore.cli.app, apollo_restore.web.app, apollo_restore.web.server
print(json.dumps({"reading": result.gaps[0].candidates[0].text, "modules": sorted(sys.modules)}))
"""


@pytest.mark.slow
def test_restoring_and_the_web_server_import_no_training_module():
    out = subprocess.run([sys.executable, "-c", RESTORE_AND_SERVE], capture_output=True, text=True, check=True)
    found = json.loads(out.stdout.splitlines()[-1])
    assert found["reading"]
    loaded = {name.split(".")[0] for name in found["modules"]}
    assert sorted(loaded & set(TRAINING_STACK)) == [], "restoring imports the training stack"
    assert "torch" in loaded and "apollo_restore.restoration" in found["modules"]  # the check saw a restoration


@pytest.fixture
def without(monkeypatch):
    """Make modules missing, as when their extra is not installed."""

    def hide(*modules: str) -> None:
        for name in modules:
            monkeypatch.setitem(sys.modules, name, None)

    return hide


@pytest.mark.parametrize(
    "args",
    [
        ["train", "steps=1"],
        ["shards", "--prepared", "p", "--out", "o", "--rows", "1"],
        ["finetune", "--model", "m", "--shards", "s", "--out", "o"],
        ["train-fsdp"],
        ["consolidate", "a", "b"],
        ["tune", "--model", "m", "--prepared", "p", "--plots", "figures"],
    ],
    ids=lambda args: args[0],
)
def test_a_command_that_needs_the_training_extra_says_so(without, args):
    without(*TRAIN_MODULES)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "[E606]" in result.output and "pip install 'apollo-restore[train]'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback


def test_lora_needs_the_scale_extra(without, tmp_path):
    without(*SCALE_MODULES)
    result = CliRunner().invoke(app, ["finetune", "--model", "m", "--shards", "s", "--out", str(tmp_path), "lora=true"])
    assert result.exit_code == 2, result.output
    assert "[E607]" in result.output and "peft" in result.output and "apollo-restore[scale]" in result.output


def test_help_needs_no_extra(without):
    without(*TRAINING_STACK)
    for args in (["--help"], ["train", "--help"], ["finetune", "--help"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0 and "Usage" in result.output, (args, result.output)


CALIBRATION = {"all": {key: {"n": 3, "ece": 0.1, "bins": [{"confidence": 0.5, "accuracy": 0.4, "n": 3}]}
                       for key in ("top1", "top20")}}  # fmt: skip


def test_an_evaluation_report_is_written_without_plots_when_matplotlib_is_missing(without, tmp_path):
    write_report(tmp_path / "drawn", {"gaps": 0, "groups": {}, "calibration": CALIBRATION})
    assert (tmp_path / "drawn" / RELIABILITY_PLOT).exists()  # with matplotlib: the plot and its link
    assert RELIABILITY_PLOT in (tmp_path / "drawn" / REPORT_FILE).read_text(encoding="utf-8")
    without("matplotlib")
    write_report(tmp_path / "bare", {"gaps": 0, "groups": {}, "calibration": CALIBRATION})
    report = (tmp_path / "bare" / REPORT_FILE).read_text(encoding="utf-8")
    assert not list((tmp_path / "bare").glob("*.png")) and RELIABILITY_PLOT not in report
    assert f"- plots: {NO_PLOTS}" in report and "## Calibration" in report
