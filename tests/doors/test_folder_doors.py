"""Issue 35's probes of model folders, as quick tests: one NaN or infinite weight is ``E518``
naming the file and the tensor (at every load, ``restore`` exits 2), a ``config.json`` nested
deep is ``E517``, every number of ``calibration.json`` is checked (``E505`` naming the field:
NaN, a ranking inverted by ``a ≤ 0``), and the calibration's fingerprint covers only what the
scores depend on (an unrelated ``junk.bin`` keeps it; other weights drop it, with a warning that
names what changed). Corrupted copies of the shipped folder; no model is trained."""

from __future__ import annotations

import json
import logging
import math
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.errors import ModelFolderError
from apollo_restore.model.checkpoint import load_model
from apollo_restore.model.folder import fingerprint, fingerprint_parts, read_meta
from apollo_restore.model.lean import LeanModel
from apollo_restore.model.verify import CONFIG_FILE, WEIGHTS_FILE, check_finite
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.load import calibration_for, load_restorer, scoring_of
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE, Calibration


def load_for(folder: Path) -> Calibration | None:
    """The folder's calibration as its default restorer loads it (``None``: not applied)."""
    return calibration_for(folder, scoring_of(folder))


DAMAGED = "model.layers.3.mlp.down_proj.weight"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the shipped model folder, to damage."""
    return Path(shutil.copytree(DEFAULT_MODEL, tmp_path / "model"))


def _damage(folder: Path, value: float, name: str = DAMAGED) -> None:
    tensors = load_file(str(folder / WEIGHTS_FILE))
    tensors[name][1, 2] = value
    save_file(tensors, str(folder / WEIGHTS_FILE), metadata={"format": "pt"})


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_one_non_finite_weight_is_E518_naming_the_file_and_tensor(folder, value):
    _damage(folder, value)
    with pytest.raises(ModelFolderError) as err:
        LeanModel.load(folder)
    assert err.value.code == "E518" and str(folder / WEIGHTS_FILE) in str(err.value)
    assert f"tensor {DAMAGED} holds 1 value(s)" in str(err.value)
    with pytest.raises(ModelFolderError, match=r"^\[E518\]"):
        load_model(folder)  # the transformers loader (training, bits per character) checks too


def test_restore_with_a_nan_weight_exits_2_with_the_numbered_message(folder):
    _damage(folder, math.nan)
    done = CliRunner().invoke(app, ["restore", "καὶ [.3] τοῦ θεοῦ", "--model", str(folder), "--neural-only"])
    assert done.exit_code == 2 and done.output.startswith("error: [E518]"), done.output
    assert DAMAGED in done.output and "Traceback" not in done.output


def test_finite_weights_whose_sum_overflows_are_no_false_alarm():
    big = torch.full((4, 4), 3e38)  # finite, but their sum is inf in float32
    check_finite(Path("w.safetensors"), {"big": big, "ids": torch.arange(3)})
    big[0, 0] = math.nan
    with pytest.raises(ModelFolderError, match=r"tensor big holds 1 value"):
        check_finite(Path("w.safetensors"), {"big": big})


def test_a_config_nested_deep_is_E517_not_a_crash(folder):
    (folder / CONFIG_FILE).write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ModelFolderError, match=r"^\[E517\] .*config\.json nests its values too deeply"):
        read_meta(folder)
    done = CliRunner().invoke(app, ["restore", "καὶ [.3] τοῦ θεοῦ", "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith("error: [E517]") and "Traceback" not in done.output


def _edit_calibration(folder: Path, edit) -> Path:
    path = folder / CALIBRATION_FILE
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))  # NaN and Infinity as Python's json writes them
    return path


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["kinds"]["real"]["exact"].update(a=math.nan), "kinds.real.exact.a"),
        (
            lambda d: d["kinds"]["synthetic"]["none"].update(a=-5, b=50),
            "kinds.synthetic.none.a",
        ),  # the ranking inverted
        (lambda d: d["kinds"]["real"]["none"].update(a=0), "kinds.real.none.a"),
        (lambda d: d["kinds"]["real"]["range"].update(b=math.inf), "kinds.real.range.b"),
        (lambda d: d["kinds"]["synthetic"]["range"].update(c=math.nan), "kinds.synthetic.range.c"),
        (lambda d: d["kinds"]["real"]["exact"].update(f=-math.inf), "kinds.real.exact.f"),
        (lambda d: d.update(unknown_word_penalty=math.nan), "unknown_word_penalty"),
        (lambda d: d.update(unknown_word_penalty=-1.0), "unknown_word_penalty"),
        (lambda d: d.update(info=[]), "info"),
        (lambda d: d.update(format="other.v2"), "format"),
    ],
)
def test_every_calibration_number_is_checked_naming_file_and_field(folder, edit, field):
    path = _edit_calibration(folder, edit)
    with pytest.raises(ModelFolderError, match=rf"^\[E505\] {path}: {field} = "):
        Calibration.load(path)
    done = CliRunner().invoke(app, ["restore", "καὶ [.3] τοῦ θεοῦ", "--model", str(folder), "--neural-only"])
    assert done.exit_code == 2 and done.output.startswith("error: [E505]") and field in done.output


def test_minus_infinity_for_b_is_still_read(folder):
    """``b = -Infinity`` is "never none of these", as :meth:`Calibration.save` writes the default."""
    path = _edit_calibration(folder, lambda d: d["kinds"]["real"]["none"].update(b=-math.inf))
    assert Calibration.load(path).conditions["none"].b == -math.inf


def test_the_shipped_calibration_is_recorded_with_the_folder_fingerprint():
    info = Calibration.load(DEFAULT_MODEL / CALIBRATION_FILE).info
    assert info["model_fingerprint"] == fingerprint(DEFAULT_MODEL)
    assert info["model_fingerprint_parts"] == fingerprint_parts(DEFAULT_MODEL)
    assert load_for(DEFAULT_MODEL) is not None


def test_unrelated_files_and_the_training_record_keep_the_calibration(folder, caplog):
    (folder / "junk.bin").write_bytes(b"\0" * 1000)
    (folder / "README.md").write_text("my notes")
    (folder / "generation_config.json").write_text('{"max_new_tokens": 5}')
    meta = json.loads((folder / "apollo_restore.json").read_text())
    meta["training"]["note"] = "copied to another disk"
    (folder / "apollo_restore.json").write_text(json.dumps(meta))
    with caplog.at_level(logging.WARNING):
        assert load_for(folder) is not None
    assert fingerprint(folder) == fingerprint(DEFAULT_MODEL) and not caplog.records


@pytest.mark.parametrize(
    ("change", "part"),
    [
        (lambda f: _damage(f, 0.5), "weights"),
        (lambda f: (f / CONFIG_FILE).write_text((f / CONFIG_FILE).read_text() + " "), "config"),
        (lambda f: (f / "tokenizer.json").write_text((f / "tokenizer.json").read_text() + " "), "tokenizer"),
        (lambda f: _edit_meta(f, lambda m: m["ensemble"]["members"][0].update(weight=0.9)), "settings"),
        (lambda f: _edit_meta(f, lambda m: m.update(fim_format="apollo_restore fim.spm.v1")), "settings"),
    ],
)
def test_what_the_scores_depend_on_drops_the_calibration_with_a_true_warning(folder, caplog, change, part):
    change(folder)
    with caplog.at_level(logging.WARNING):
        assert load_for(folder) is None
    message = caplog.records[-1].getMessage()
    assert f"whose {part} differ" in message and "apollo-restore tune" in message


def _edit_meta(folder: Path, edit) -> None:
    meta = json.loads((folder / "apollo_restore.json").read_text())
    edit(meta)
    (folder / "apollo_restore.json").write_text(json.dumps(meta))


def test_the_shipped_folder_still_loads_calibrated():
    assert load_restorer(DEFAULT_MODEL, present=True).ranking.calibration is not None
