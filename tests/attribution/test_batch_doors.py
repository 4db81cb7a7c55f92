"""Issue 63's probes of ``attribute --texts IN --out OUT``: it resumes as ``predict`` does (one
machinery, :meth:`~apollo_restore.data.outputs.LineJob.done`), so another model folder, a partial
file with a repeated, non-JSON or id-less line, a lone surrogate, ``--out .`` and a damaged or
overflowing model are each a numbered refusal (exit 2), never a traceback, a mixed output or an
un-coded error line with exit 0.

    python -m pytest -q tests/attribution/test_batch_doors.py
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file
from typer.testing import CliRunner

from apollo_restore.attribution.folder import LABELS_FILE, WEIGHTS_FILE
from apollo_restore.cli.app import app
from apollo_restore.data.outputs import PARTIAL_SUFFIX
from tests.attribution.test_doors import LONG

runner = CliRunner()


def _texts(tmp_path: Path, rows: list[dict] | None = None) -> Path:
    texts = tmp_path / "texts.jsonl"
    rows = rows or [{"id": "a", "text": LONG}, {"id": "b", "text": LONG[:80]}, {"id": "c", "text": LONG[20:]}]
    texts.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return texts


def _run(texts: Path, out: Path, folder: Path, *more: str):
    args = ["attribute", "--texts", str(texts), "--out", str(out), "--model", str(folder), "--no-parallels", *more]
    return runner.invoke(app, args)


def _stopped_after_one_line(texts: Path, out: Path, folder: Path) -> Path:
    """The partial file a run killed after its first line leaves (made by a run that finishes,
    then turned back into an unfinished one: the same files a kill leaves)."""
    done = _run(texts, out, folder)
    assert done.exit_code == 0, done.output
    partial = out.with_name(out.name + PARTIAL_SUFFIX)
    first = out.read_text(encoding="utf-8").splitlines()[0]
    out.unlink()
    partial.write_text(first + "\n", encoding="utf-8")
    record = partial.with_name(partial.name + ".json")
    record.write_text(json.dumps({"settings": _settings(texts, folder)}), encoding="utf-8")
    return partial


def _settings(texts: Path, folder: Path) -> dict[str, str]:
    """What the job records (the same as the command's: the texts, the folder's fingerprint)."""
    from apollo_restore.attribution.batch import read_texts
    from apollo_restore.attribution.folder import fingerprint
    from apollo_restore.data.formats import jsonl_line
    from apollo_restore.inputs import digest

    return {"texts": digest(jsonl_line({"texts": read_texts(texts)})), "model": fingerprint(folder),
            "parallels": "False"}  # fmt: skip


def test_a_resumed_run_continues_only_with_the_same_folder(tiny_attribution, tmp_path):
    texts, out = _texts(tmp_path), tmp_path / "out.jsonl"
    _stopped_after_one_line(texts, out, tiny_attribution)
    other = Path(shutil.copytree(tiny_attribution, tmp_path / "other"))  # another folder: its labels differ
    (other / LABELS_FILE).write_bytes((tiny_attribution / LABELS_FILE).read_bytes()[:-8] + b"\0" * 8)
    done = _run(texts, out, other)
    assert done.exit_code == 2 and done.output.startswith("error: [E209]") and "model=" in done.output, done.output
    assert not out.exists()
    done = _run(texts, out, tiny_attribution)  # the same folder continues
    assert done.exit_code == 0 and "resuming: 1 of 3" in done.output, done.output
    assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["a", "b", "c"]


PARTIAL_LINES = {
    "a repeated line": lambda first: [first, first],
    "a line that is not JSON": lambda first: [first, '{"id": "b", "date": '],
    "a line with no id": lambda first: [first, json.dumps({"date": {"year": 1}, "places": []})],
}


@pytest.mark.parametrize("probe", list(PARTIAL_LINES))
def test_a_partial_file_with_a_line_that_is_not_an_answer_is_E201(tiny_attribution, tmp_path, probe):
    texts, out = _texts(tmp_path), tmp_path / "out.jsonl"
    partial = _stopped_after_one_line(texts, out, tiny_attribution)
    first = partial.read_text(encoding="utf-8").splitlines()[0]
    partial.write_text("\n".join(PARTIAL_LINES[probe](first)) + "\n", encoding="utf-8")
    done = _run(texts, out, tiny_attribution)
    assert done.exit_code == 2 and done.output.startswith("error: [E201]"), done.output
    assert str(partial) in done.output and "line 2" in done.output and not out.exists()


def _nan_weights(tiny: Path, tmp_path: Path) -> Path:
    folder = Path(shutil.copytree(tiny, tmp_path / "model"))
    arrays = load_file(str(folder / WEIGHTS_FILE))
    arrays["place.weight"] = np.full_like(arrays["place.weight"], np.nan)
    save_file(arrays, str(folder / WEIGHTS_FILE))
    return folder


def _overflowing(tiny: Path, tmp_path: Path) -> Path:
    """A folder within its bounds whose place logits overflow: a temperature of 10⁻⁴⁰ (above 0,
    as the schema asks) divides them into infinities."""
    folder = Path(shutil.copytree(tiny, tmp_path / "model"))
    config = json.loads((folder / "attribution.json").read_text(encoding="utf-8"))
    config["temperature"]["place"] = [1e-40] * len(config["bands"])
    (folder / "attribution.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_a_nan_model_stops_the_job_with_its_number(tiny_attribution, tmp_path):
    texts, out = _texts(tmp_path), tmp_path / "out.jsonl"
    done = _run(texts, out, _nan_weights(tiny_attribution, tmp_path))
    assert done.exit_code == 2 and done.output.startswith("error: [E518]") and "place.weight" in done.output
    assert not out.exists()


def test_a_model_that_overflows_stops_the_job_never_writing_an_uncoded_line(tiny_attribution, tmp_path):
    texts, out = _texts(tmp_path), tmp_path / "out.jsonl"
    done = _run(texts, out, _overflowing(tiny_attribution, tmp_path))
    assert done.exit_code == 2 and done.output.startswith("error: [E803]"), done.output
    assert "Traceback" not in done.output and not out.exists()


def test_a_wrong_shaped_model_is_its_numbered_error(tiny_attribution, tmp_path):
    folder = Path(shutil.copytree(tiny_attribution, tmp_path / "model"))
    arrays = load_file(str(folder / WEIGHTS_FILE))
    arrays["date.weight"] = arrays["date.weight"][:, :10].copy()
    save_file(arrays, str(folder / WEIGHTS_FILE))
    done = _run(_texts(tmp_path), tmp_path / "out.jsonl", folder)
    assert done.exit_code == 2 and done.output.startswith("error: [E509]") and "date.weight" in done.output


def test_lone_surrogates_are_numbered(tiny_attribution, tmp_path):
    out = tmp_path / "out.jsonl"
    texts = tmp_path / "texts.jsonl"
    texts.write_text('{"id": "a\\ud800", "text": "κομων μουσαιου"}\n', encoding="utf-8")
    done = _run(texts, out, tiny_attribution)
    assert done.exit_code == 2 and done.output.startswith("error: [E201]") and "line 1" in done.output, done.output
    texts.write_text(f'{{"id": "a", "text": "{LONG} \\udc80"}}\n{{"id": "b", "text": "{LONG}"}}\n', encoding="utf-8")
    done = _run(texts, out, tiny_attribution)
    assert done.exit_code == 0, done.output
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["error"].startswith("[E309]") and rows[1]["places"]


def test_out_a_folder_is_E205(tiny_attribution, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = _run(_texts(tmp_path), Path("."), tiny_attribution)
    assert done.exit_code == 2 and done.output.startswith("error: [E205]") and "folder" in done.output, done.output


def test_predict_resumes_and_refuses_alike(tmp_path, monkeypatch):
    """The one machinery: ``predict --out .`` is E205 as ``attribute --out .`` is, before any model."""
    from apollo_restore.errors import FileError
    from apollo_restore.restoration.predict import PredictJob

    monkeypatch.chdir(tmp_path)
    gaps = Path(__file__).resolve().parents[2] / "benchmarks" / "guard-gaps.jsonl"
    with pytest.raises(FileError) as err:
        PredictJob.open(gaps, Path("."))
    assert err.value.code == "E205" and "folder" in str(err.value)
