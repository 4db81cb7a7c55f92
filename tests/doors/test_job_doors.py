"""The job doors of issue 43: every refusal of ``evaluate``, ``tune``, ``train --probe``, the gap-set and
prediction readers and ``predict``'s resume is a numbered error (exit status 2, no traceback), before
any work: predictions for ids that are no gap (``E212``), a prepared corpus that cannot be read
(``E705``), a probe setting out of its bounds (``E602``), a gap or prediction line the schema refuses
(``E201`` naming the field), a resume after the calibration changed (``E209``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from apollo_restore import __version__
from apollo_restore.cli.app import app
from apollo_restore.cli.restore import probability_files
from apollo_restore.config import load_config
from apollo_restore.data.formats import read_gapset, read_predictions
from apollo_restore.data.normalise import NORMALISER
from apollo_restore.errors import FileError, FormatError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.schema.training import SettingError
from apollo_restore.train.loop import TrainConfig, train
from apollo_restore.train.probe import setting_config

from ..gapfiles import gap as gap_row
from ..gapfiles import write_gaps
from .test_evaluate_doors import evaluate, gap, prediction
from .test_predict_doors import Reading, lines, predict

# -- evaluate: predictions for ids that are no gap -------------------------------------------


def test_predictions_for_ids_that_are_no_gap_are_E212_and_nothing_is_scored(tmp_path):
    stray = [prediction(0, id="elsewhere:1", ms=9_000_000.0), prediction(1, id="elsewhere:2")]
    done = evaluate(tmp_path, [gap(i) for i in range(3)], [prediction(i) for i in range(3)] + stray)
    assert done.exit_code == 2 and "[E212]" in done.output and "Traceback" not in done.output
    assert "preds.jsonl has predictions for 2 id(s)" in done.output and "'elsewhere:1'" in done.output
    assert not (tmp_path / "report").exists()  # nothing computed, nothing written


def test_predictions_of_exactly_the_gaps_are_scored_with_their_times(tmp_path):
    done = evaluate(tmp_path, [gap(i) for i in range(3)], [prediction(i) for i in range(3)])
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "report" / "metrics.json").read_text())["meta"]["ms_per_gap"] == 3.0


# -- tune: a prepared corpus that cannot be read ---------------------------------------------


def _tune(model: Path, prepared: Path):
    args = ["tune", "--model", str(model), "--prepared", str(prepared), "--what", "calibration", "--force"]
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize("damage", ["missing", "garbage", "truncated", "empty", "folder", "no columns"])
def test_tune_on_a_prepared_corpus_that_cannot_be_read_is_E705(tmp_path, tiny_prepared, damage):
    documents = tiny_prepared / "documents.parquet"
    whole = documents.read_bytes()
    if damage == "missing":
        documents.unlink()
    elif damage == "garbage":
        documents.write_bytes(b"PAR1 not a parquet file at all" * 10)
    elif damage == "truncated":
        documents.write_bytes(whole[: len(whole) // 2])
    elif damage == "empty":
        documents.write_bytes(b"")
    elif damage == "folder":
        documents.unlink()
        documents.mkdir()
    else:
        table = pa.table({"id": ["a"]}).replace_schema_metadata({"normaliser": NORMALISER})
        pq.write_table(table, documents)
    model = shutil.copytree(DEFAULT_MODEL, tmp_path / "model-copy")
    calibration = (model / "calibration.json").read_bytes()
    done = _tune(model, tiny_prepared)
    assert done.exit_code == 2 and "[E705]" in done.output and "Traceback" not in done.output, done.output
    assert "cannot read the prepared corpus" in done.output and "documents.parquet" in done.output
    assert "apollo-restore prepare" in done.output
    assert (model / "calibration.json").read_bytes() == calibration  # nothing fitted, nothing written


# -- predict: a resume after the calibration changed -----------------------------------------


def test_a_resume_after_the_calibration_was_fitted_again_is_E209_naming_it(tmp_path, restorers, folder):
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap_row(i) for i in range(6)])
    out = tmp_path / "preds.jsonl"
    (folder / "calibration.json").write_text('{"conditions": {}, "fitted": 1}')
    restorers.queue = [Reading(stop_after=2), Reading()]
    assert predict("--gaps", gaps, "--out", out, "--model", folder).exit_code == 130
    record = json.loads(out.with_name("preds.jsonl.partial.json").read_text())["settings"]
    assert record["calibration"] != "none" and record["version"] == __version__
    assert record["edition forms"] == probability_files(folder)["edition forms"]
    (folder / "calibration.json").write_text('{"conditions": {}, "fitted": 2}')  # tune --force, in between
    refused = predict("--gaps", gaps, "--out", out, "--model", folder)
    assert refused.exit_code == 2 and "[E209]" in refused.output and "Traceback" not in refused.output
    assert f"calibration={record['calibration']}" in refused.output
    assert "model fingerprint=" not in refused.output  # only what differs is named
    assert len(lines(out.with_name("preds.jsonl.partial"))) == 2  # untouched
    (folder / "calibration.json").unlink()  # a calibration taken away changes the probabilities too
    assert "calibration=none" in predict("--gaps", gaps, "--out", out, "--model", folder).output


def test_a_resume_with_the_same_calibration_continues(tmp_path, restorers, folder):
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap_row(i) for i in range(6)])
    out = tmp_path / "preds.jsonl"
    restorers.queue = [Reading(stop_after=2), Reading()]
    assert predict("--gaps", gaps, "--out", out, "--model", folder).exit_code == 130
    finished = predict("--gaps", gaps, "--out", out, "--model", folder)
    assert finished.exit_code == 0 and "resuming: 2 of 6" in finished.output


def test_the_probability_files_digest_follows_the_calibration_bytes(tmp_path):
    assert probability_files(tmp_path)["calibration"] == "none"
    (tmp_path / "calibration.json").write_text("{}")
    first = probability_files(tmp_path)["calibration"]
    (tmp_path / "calibration.json").write_text("{ }")
    assert first != probability_files(tmp_path)["calibration"] != "none"


# -- train --probe: settings out of their bounds ---------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--setting", "batch_size=100000000"], "--setting 'batch_size=100000000' sets batch_size = 100000000"),
        (["--setting", "batch_size=2", "--setting", "block_size=100000"], "sets block_size = 100000"),
        (["--setting", "grad_accum=5000"], "sets grad_accum = 5000"),
        (["--setting", "num_workers=500"], "sets num_workers = 500"),
        (["--setting", "eval_rows=10000000"], "sets eval_rows = 10000000"),
        (["--setting", "lr=1e9"], "sets lr = 1000000000.0"),
        (["batch_size=100000"], "the config (--config and its key=value options) sets batch_size = 100000"),
    ],
    ids=["batch", "block", "accum", "workers", "eval rows", "lr", "config"],
)
def test_a_probe_setting_out_of_its_bounds_is_E602_before_any_step(tiny_prepared, tmp_path, args, says):
    common = ["train", f"prepared={tiny_prepared}", f"out={tmp_path / 'run'}", "size=tiny", "device=cpu"]
    done = CliRunner().invoke(app, [*common, "--probe", "1", *args])
    assert done.exit_code == 2 and "[E602]" in done.output and says in done.output, done.output
    assert "it must be" in done.output and "Traceback" not in done.output
    assert "Throughput probe" not in done.output and not (tmp_path / "run").exists()  # nothing ran


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["batch_size=100000000"], "sets batch_size = 100000000"),
        (["block_size=100000"], "sets block_size = 100000"),
        (["eval_rows=10000000"], "sets eval_rows = 10000000"),
    ],
    ids=["batch", "block", "eval rows"],
)
def test_a_training_setting_out_of_its_bounds_is_E602_without_probe_too(tmp_path, args, says):
    """The bounds ``--probe`` checks hold for every run, before any data is read: here there is
    none (no prepared corpus), and the setting is still what is refused."""
    done = CliRunner().invoke(app, ["train", f"prepared={tmp_path / 'none'}", f"out={tmp_path / 'run'}", *args])
    assert done.exit_code == 2 and "[E602] train: the config" in done.output and says in done.output, done.output
    assert "Traceback" not in done.output and not (tmp_path / "run").exists()
    with pytest.raises(SettingError, match=r"\[E602\]"):  # the library's door, the same check
        train(TrainConfig.from_dict(load_config(None, [f"prepared={tmp_path}", f"out={tmp_path / 'run'}", *args])))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("made", [False, True], ids=["no folder", "empty folder"])
def test_train_without_prepared_data_is_E610_not_a_traceback(tmp_path, made):
    prepared = tmp_path / "prepared"
    if made:
        prepared.mkdir()
    done = CliRunner().invoke(app, ["train", f"prepared={prepared}", f"out={tmp_path / 'run'}", "size=tiny"])
    assert done.exit_code == 2 and done.exception.__class__ is SystemExit, done.output
    assert f"[E610] train: no prepared corpus at prepared={prepared}" in done.output and "prepare --out" in done.output
    assert ("holds no documents.parquet" if made else "no such folder") in done.output
    assert "Traceback" not in done.output and not (tmp_path / "run").exists()
    with pytest.raises(FileError, match=r"\[E610\]"):
        train(TrainConfig(prepared=str(prepared), out=str(tmp_path / "run"), size="tiny"))
    assert not (tmp_path / "run").exists()  # refused before anything was written


@pytest.mark.parametrize("seconds", ["601", "1e9", "inf", "nan", "-1"])
def test_probe_seconds_are_bounded(tmp_path, seconds, cli_error):
    done = CliRunner().invoke(app, ["train", f"out={tmp_path / 'run'}", "--probe", seconds])
    assert done.exit_code == 2 and "--probe" in cli_error(done)


def test_the_largest_settings_a_gpu_run_uses_are_within_the_bounds(tmp_path):
    cfg = TrainConfig(prepared=str(tmp_path), batch_size=4096, block_size=8192, num_workers=64, grad_accum=64)
    assert cfg.batch_size == 4096  # made, so within its bounds
    with pytest.raises(SettingError, match=r"\[E602\] .*--setting 'batch_size=4097' sets batch_size = 4097"):
        setting_config(cfg, "batch_size=4097")


# -- gap sets and predictions: one line each, declared ---------------------------------------


def _read(tmp_path, reader, row: dict | str):
    path = tmp_path / "lines.jsonl"
    path.write_text((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n", encoding="utf-8")
    return reader(path)


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"prefix": "α" * 1_000_001}, "field 'prefix' is 'ααα"),
        ({"suffix": 7}, "field 'suffix' is 7; it must be text of at most 1,000,000 characters"),
        ({"id": "g" * 301}, "it must be text of 1 to 300 characters"),
        ({"id": ""}, "field 'id' is ''; it must be text of 1 to 300 characters"),
        ({"doc": None}, "field 'doc' is None"),
        ({"hint": 2000}, "field 'hint' is 2000; it must be null, a letter count from 1 to 1000"),
        ({"hint": [3, 1001]}, "field 'hint' is [3, 1001]"),
        ({"hint": True}, "field 'hint' is True"),
        ({"hint": 2.5}, "field 'hint' is 2.5"),
        ({"kind": "silver"}, "field 'kind' is 'silver'; it must be \"synthetic\" or \"true\""),
    ],
    ids=[
        "long prefix",
        "suffix number",
        "long id",
        "empty id",
        "doc null",
        "hint",
        "hint range",
        "hint bool",
        "hint float",
        "kind",
    ],  # fmt: skip
)
def test_a_gap_line_the_schema_refuses_is_E201_naming_the_field(tmp_path, changes, says):
    with pytest.raises(FormatError, match=r"\[E201\] .*lines\.jsonl, line 1: ") as info:
        _read(tmp_path, read_gapset, {**gap_row(0), **changes})
    assert says in str(info.value)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ({"id": "g0", "candidates": [{"text": "α", "prob": 0.5}] * 1001}, "field 'candidates' is"),
        ({"id": "g0", "candidates": {"text": "α"}}, "it must be a list of at most 1,000 candidates"),
        ({"id": "g0", "candidates": [{"text": "α" * 1001}]}, "candidate 1: each candidate must be an object"),
        ({"id": "g0", "candidates": [{"prob": 0.5}]}, "candidate 1: each candidate must be an object"),
        ({"id": "g0", "candidates": [{"text": "α", "prob": True}]}, "candidate 1: field 'prob' is True; it must"),
        ({"id": "g0", "candidates": [], "ms": 1e10}, "field 'ms' is 10000000000.0; it must be a number in [0, 1e+09]"),
        ({"id": "g0", "candidates": [], "ms": -1}, "field 'ms' is -1"),
        ({"candidates": []}, "missing field 'id'"),
        ({"id": "g0"}, "missing field 'candidates'"),
    ],
    ids=[
        "1001 candidates",
        "not a list",
        "long text",
        "no text",
        "prob bool",
        "ms huge",
        "ms negative",
        "no id",
        "no candidates",
    ],  # fmt: skip
)
def test_a_prediction_line_the_schema_refuses_is_E201_naming_the_field(tmp_path, line, says):
    with pytest.raises(FormatError, match=r"\[E201\] .*lines\.jsonl, line 1: ") as info:
        _read(tmp_path, read_predictions, line)
    assert says in str(info.value)


def test_lines_keep_what_they_always_could(tmp_path):
    row = {**gap_row(0), "hint": [1, 1000], "kind": "true", "prefix": "", "period": "II BC", "target": "α" * 1000}
    (read,) = _read(tmp_path, read_gapset, row)  # an extra key is ignored, an empty context fair
    assert read.hint == Hint.span(1, 1000) and read.kind == "true" and read.prefix == ""
    unanswered = {key: value for key, value in gap_row(0).items() if key not in ("target", "hint", "kind")}
    (read,) = _read(tmp_path, lambda path: read_gapset(path, need_target=False), unanswered)
    assert (read.target, read.hint, read.kind) == ("", NO_HINT, "synthetic")
    line = {"id": "g0", "candidates": [{"text": "α", "prob": 1}, {"text": "", "prob": None}, {"text": "β"}], "ms": 84}
    (prediction,) = _read(tmp_path, read_predictions, {**line, "model": "peer-7b"})
    assert prediction.candidates == [("α", 1.0), ("", None), ("β", None)] and prediction.ms == 84
    assert json.dumps(prediction.to_dict()["ms"]) == "84"  # written back as it was
    (prediction,) = _read(tmp_path, read_predictions, {"id": "g0", "candidates": []})
    assert prediction.candidates == [] and prediction.ms is None
