"""Issue 35's probes of ``evaluate --predictions``, as quick tests (no model: a predictions file
is scored): missing predictions are refused (``E211``, the count named) or, with
``--allow-missing``, scored as wrong and reported loudly (the report and exit status 1); a
probability NaN, infinite, negative or above 1, ``ms`` not a number, ``kind`` not a string and
nested predictions are ``E201`` naming the line and field; ``--out`` an existing file is ``E205``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app

TARGETS = ["αβγ", "δεζ", "ηθι", "κλμ", "νξο", "πρσ", "τυφ", "χψω", "αδη", "κνπ", "τχβ", "εθλ"]


def gap(i: int, **changes) -> dict:
    row = {
        "id": f"g{i}", "source": "ddb", "doc": f"d{i}", "prefix": "ετους δευτερου και ", "suffix": " καισαρος",
        "target": TARGETS[i], "hint": 3, "kind": "synthetic",
    }  # fmt: skip
    return {**row, **changes}


def prediction(i: int, prob: object = 0.5, **changes) -> dict:
    row = {"id": f"g{i}", "candidates": [{"text": TARGETS[i], "prob": prob}, {"text": "ωωω", "prob": 0.1}], "ms": 3.0}
    return {**row, **changes}


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path


def evaluate(tmp_path: Path, gaps: list[dict], predictions: list[dict] | str, *more: str):
    g = write(tmp_path / "gaps.jsonl", gaps)
    p = tmp_path / "preds.jsonl"
    if isinstance(predictions, str):
        p.write_text(predictions)
    else:
        write(p, predictions)
    args = ["evaluate", "--gaps", str(g), "--predictions", str(p), "--out", str(tmp_path / "report"), *more]
    return CliRunner().invoke(app, args)


def test_every_prediction_there_is_scored(tmp_path):
    done = evaluate(tmp_path, [gap(i) for i in range(12)], [prediction(i) for i in range(12)])
    assert done.exit_code == 0, done.output
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())
    assert metrics["gaps"] == 12 and "MISSING PREDICTIONS" not in metrics["meta"]


def test_predictions_for_6_of_12_gaps_are_refused_naming_how_many(tmp_path):
    done = evaluate(tmp_path, [gap(i) for i in range(12)], [prediction(i) for i in range(0, 12, 2)])
    assert done.exit_code == 2 and "E211" in done.output and "no prediction for 6 of the 12 gaps" in done.output
    assert "'g1'" in done.output and "Traceback" not in done.output
    assert not (tmp_path / "report").exists()  # nothing written


def test_allow_missing_scores_them_as_wrong_and_says_so_loudly(tmp_path):
    done = evaluate(tmp_path, [gap(i) for i in range(12)], [prediction(i) for i in range(0, 12, 2)], "--allow-missing")
    assert done.exit_code == 1 and "6 of the 12 gaps have no prediction" in done.output
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())
    assert metrics["meta"]["MISSING PREDICTIONS"].startswith("6 of the 12 gaps have none")
    assert "MISSING PREDICTIONS: 6 of the 12" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ('{"id": "g1", "candidates": [{"text": "δεζ", "prob": NaN}], "ms": 3}', "field 'prob' is nan"),
        ('{"id": "g1", "candidates": [{"text": "δεζ", "prob": Infinity}], "ms": 3}', "field 'prob' is inf"),
        ('{"id": "g1", "candidates": [{"text": "δεζ", "prob": -5}], "ms": 3}', "field 'prob' is -5"),
        ('{"id": "g1", "candidates": [{"text": "δεζ", "prob": 7.5}], "ms": 3}', "field 'prob' is 7.5"),
        ('{"id": "g1", "candidates": [{"text": "δεζ", "prob": "0.5"}], "ms": 3}', "field 'prob' is '0.5'"),
        ('{"id": "g1", "candidates": [{"text": "δεζ", "prob": 0.5}], "ms": "fast"}', "field 'ms' is 'fast'"),
        ('{"id": "g1", "candidates": [{"text": "δεζ", "prob": 0.5}], "ms": NaN}', "field 'ms' is nan"),
        ('{"id": "g1", "candidates": [[{"text": "δεζ", "prob": 0.5}]], "ms": 3}', "candidate 1: each candidate"),
        ('{"id": "g1", "candidates": [{"text": {"text": "δεζ"}, "prob": 0.5}], "ms": 3}', "candidate 1: each"),
        ('{"id": "g1", "candidates": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than"),
    ],
    ids=["nan", "infinity", "negative", "above 1", "string", "ms string", "ms nan", "nested", "text object", "deep"],
)
def test_malformed_predictions_are_E201_naming_line_and_field(tmp_path, bad, says):
    lines = json.dumps(prediction(0), ensure_ascii=False) + "\n" + bad + "\n"
    done = evaluate(tmp_path, [gap(0), gap(1)], lines)
    assert done.exit_code == 2 and "E201" in done.output and "preds.jsonl, line 2" in done.output, done.output
    assert says in done.output and "Traceback" not in done.output


def test_a_gap_whose_kind_is_not_a_string_is_E201(tmp_path):
    done = evaluate(tmp_path, [gap(0), gap(1, kind=["synthetic"])], [prediction(0), prediction(1)])
    assert done.exit_code == 2 and "E201" in done.output and "gaps.jsonl, line 2" in done.output
    assert "field 'kind' is ['synthetic']; it must be \"synthetic\" or \"true\"" in done.output


def test_out_an_existing_file_is_E205_and_the_file_is_kept(tmp_path):
    (tmp_path / "report").write_text("a file the scholar keeps")
    done = evaluate(tmp_path, [gap(0)], [prediction(0)])
    assert done.exit_code == 2 and "E205" in done.output and "it is a file" in done.output
    assert "Traceback" not in done.output and (tmp_path / "report").read_text() == "a file the scholar keeps"


def test_out_inside_a_file_is_E205(tmp_path):
    (tmp_path / "report").write_text("a file the scholar keeps")
    g, p = write(tmp_path / "gaps.jsonl", [gap(0)]), write(tmp_path / "preds.jsonl", [prediction(0)])
    args = ["evaluate", "--gaps", str(g), "--predictions", str(p), "--out", str(tmp_path / "report" / "sub")]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2 and "E205" in done.output and "is a file, not a folder" in done.output
