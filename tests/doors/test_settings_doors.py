"""Issue 43's settings doors: a copy of the shipped folder with one edit each. Every number of
``apollo_restore.json`` is bounded by the schema and refused at load (before any work), a member
file that is not what it names is a numbered error, a calibration is applied only to the scores it
was fitted for (this folder, these members, this arithmetic, every hint condition), weights that
overflow in the arithmetic that will run are refused by the probe at load, and ``tune`` writes no
calibration from too few gaps."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.errors import ModelFolderError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.model.verify import WEIGHTS_FILE
from apollo_restore.restoration.config import DEFAULT_MODEL, RestoreConfig
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE
from tests.stubs import edit_json, shipped_model_copy

TEXT = "Κόμων Μουσαίου [.4] χαίρειν"
PREFIX, SUFFIX = "κομων μουσαιου ", " χαιρειν"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return shipped_model_copy(tmp_path)


def _refused_at_load(folder: Path, code: str, field: str) -> None:
    """``load_restorer`` refuses at once (no search), and ``restore`` exits 2 with the message."""
    started = time.perf_counter()
    with pytest.raises(ModelFolderError) as err:
        load_restorer(folder)
    assert err.value.code == code and field in str(err.value) and str(folder) in str(err.value)
    assert time.perf_counter() - started < 30
    done = CliRunner().invoke(app, ["restore", TEXT, "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith(f"error: [{code}]"), done.output


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda m: m["ensemble"]["search"].update(beam_width=10**9), "ensemble.search.beam_width"),
        (lambda m: m["ensemble"]["search"].update(hint_slack=10**6), "ensemble.search.hint_slack"),
        (lambda m: m["ensemble"]["search"].update(precision="fp16"), "ensemble.search.precision"),
        (lambda m: m["ensemble"]["members"][1]["options"].update(max_context=10**18), "members[1].options.max_context"),
        (lambda m: m["ensemble"]["members"][1]["options"].update(discount=[0.5, 9, 1]), "members[1].options.discount"),
        (lambda m: m["ensemble"]["members"][0].update(name=["neural"]), "ensemble.members[0].name"),
        (lambda m: m["ensemble"]["members"][0].update(weight=10**9), "ensemble.members[0].weight"),
        (lambda m: m["ensemble"].update(members=[m["ensemble"]["members"][0]] * 33), "ensemble.members"),
        (lambda m: m["ensemble"].update(chosen_by="x" * 10_000), "ensemble.chosen_by"),
        (lambda m: m["presentation"]["demotions"].update(count_floor=0), "presentation.demotions.count_floor"),
    ],
)
def test_a_setting_out_of_its_bounds_is_E505_at_load_before_any_work(folder, edit, field):
    edit_json(folder, "apollo_restore.json", edit)
    _refused_at_load(folder, "E505", field)


def test_a_key_the_file_does_not_declare_is_E522(folder):
    edit_json(folder, "apollo_restore.json", lambda m: m.update(presentaton={"demotions": {}}))
    _refused_at_load(folder, "E522", "presentaton")


def test_an_ngram_member_whose_file_is_not_an_ngram_file_is_E519(folder):
    edit_json(folder, "apollo_restore.json", lambda m: m["ensemble"]["members"].append(
        {"name": "ngram", "weight": 1.0, "options": {"file": "config.json"}}
    ))  # fmt: skip
    _refused_at_load(folder, "E519", "ensemble.members[6].options.file")


def test_serve_refuses_an_unbounded_member_option_at_start(folder):
    edit_json(
        folder, "apollo_restore.json", lambda m: m["ensemble"]["members"][1]["options"].update(max_context=10**18)
    )
    done = CliRunner().invoke(app, ["serve", "--model", str(folder), "--port", "65500"])
    assert done.exit_code == 2 and "[E505]" in done.output and "max_context" in done.output, done.output


def _top(restorer, hint):
    return restorer.candidates(PREFIX, SUFFIX, hint, k=3)


def test_a_calibration_lacking_a_condition_is_not_applied_with_a_warning(folder, caplog):
    edit_json(folder, CALIBRATION_FILE, lambda c: c["kinds"]["real"].pop("none"))
    with caplog.at_level(logging.WARNING):
        restorer = load_restorer(folder)
    assert restorer.ranking.calibration is None
    assert "hint condition(s) none" in caplog.text and "uncalibrated" in caplog.text
    assert not any(c.calibrated for c in _top(restorer, NO_HINT))


def test_a_calibration_without_its_fingerprint_is_not_applied(folder, caplog):
    edit_json(folder, CALIBRATION_FILE, lambda c: c["info"].pop("model_fingerprint"))
    with caplog.at_level(logging.WARNING):
        assert load_restorer(folder).ranking.calibration is None
    assert "records no model fingerprint" in caplog.text


def test_another_precision_than_the_calibration_was_fitted_on_leaves_it_unapplied(caplog):
    with caplog.at_level(logging.WARNING):
        fp32 = load_restorer(DEFAULT_MODEL, config=RestoreConfig(precision="fp32"))
    assert fp32.ranking.calibration is None and "fitted on int8 scores, these are fp32" in caplog.text
    assert not any(c.calibrated for c in _top(fp32, Hint.exact(4)))
    assert load_restorer(DEFAULT_MODEL).ranking.calibration is not None  # the folder's own int8: applied


def test_the_neural_model_alone_is_not_scored_by_the_ensembles_calibration(caplog):
    with caplog.at_level(logging.WARNING):
        assert load_restorer(DEFAULT_MODEL, neural_only=True).ranking.calibration is None
    assert "these are neural's" in caplog.text


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_finite_weights_that_overflow_are_E529_at_load_never_nan(folder, precision):
    tensors = load_file(str(folder / WEIGHTS_FILE))
    name = "model.layers.0.mlp.down_proj.weight"
    tensors[name] = torch.full_like(tensors[name], torch.finfo(torch.bfloat16).max)
    save_file(tensors, str(folder / WEIGHTS_FILE), metadata={"format": "pt"})
    with pytest.raises(ModelFolderError) as err:
        load_restorer(folder, config=RestoreConfig(precision=precision))
    assert err.value.code == "E529" and str(folder) in str(err.value)
    args = ["restore", TEXT, "--model", str(folder), "--json"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2 and done.output.startswith("error: [E529]") and "NaN" not in done.output.split("(")[0]


def test_tune_refuses_to_write_a_calibration_from_too_few_gaps(memorised_model, tiny_prepared, tmp_path):
    model = Path(shutil.copytree(memorised_model, tmp_path / "model"))
    before = sorted(p.name for p in model.iterdir())
    args = ["tune", "--model", str(model), "--prepared", str(tiny_prepared), "--what", "calibration"]
    done = CliRunner().invoke(app, [*args, "--per-length", "1", "--limit", "3", "--force"])
    assert done.exit_code == 2 and "[E704]" in done.output and "at least 50" in done.output, done.output
    assert sorted(p.name for p in model.iterdir()) == before  # nothing written


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("beam_width", 10**9),
        ("hint_slack", 10**6),
        ("k", 0),
        ("max_chars", 10**7),
        ("precision", "fp16"),
        ("pool", True),
    ],
)
def test_a_callers_search_setting_out_of_its_bounds_is_E310(setting, value):
    from apollo_restore.errors import RequestError

    with pytest.raises(RequestError) as err:
        RestoreConfig(**{setting: value})
    assert err.value.code == "E310" and f"RestoreConfig.{setting} must be" in str(err.value)
