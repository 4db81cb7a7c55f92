"""Issue 35's probes of ``predict``, as quick tests: a resumed job proves it continues the same
work (the gap set's content and the model folder's fingerprint are recorded, anything else is
``E209``), a partial file with no record or that is a link is refused, a full disk is a numbered
error after which the resume is right, a line nested 100,000 deep is ``E201``, and a gap needs
no answer to be predicted. No model is trained: the restorers are stand-ins."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.data import outputs
from apollo_restore.data.formats import read_gapset
from apollo_restore.errors import FileError, FormatError
from apollo_restore.restoration.predict import PredictJob, gapset_digest
from apollo_restore.schema.restoration import Candidate

from ..gapfiles import gap, write_gaps


class Reading:
    """A restorer that reads each gap's prefix back (so a line shows which gap set made it), and
    stops with ``error`` after ``stop_after`` gaps."""

    batches = False

    name = "reading"

    def __init__(self, stop_after: int | None = None, error: type[BaseException] = KeyboardInterrupt) -> None:
        self.done, self.stop_after, self.error = 0, stop_after, error

    def candidates(self, prefix, suffix, hint, k=None):
        if self.done == self.stop_after:
            raise self.error()
        self.done += 1
        return [Candidate(prefix.split()[0], 0.75, -0.3), Candidate("δεζ", 0.25, -1.4)]


def predict(*args) -> object:
    return CliRunner().invoke(app, ["predict", *map(str, args)])


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_resume_with_another_gap_set_of_the_same_ids_is_E209(tmp_path, restorers, folder):
    """The issue's reproduction: gap set B has A's ids and other contexts."""
    a = write_gaps(tmp_path / "a.jsonl", [gap(i) for i in range(12)])
    b = write_gaps(tmp_path / "b.jsonl", [gap(i, prefix="μουσαιου του ηρακλειτου ") for i in range(12)])
    out = tmp_path / "preds.jsonl"
    restorers.queue = [Reading(stop_after=4), Reading()]
    assert predict("--gaps", a, "--out", out, "--model", folder).exit_code == 130
    refused = predict("--gaps", b, "--out", out, "--model", folder)
    assert refused.exit_code == 2 and "E209" in refused.output and "gap set=sha256:" in refused.output
    assert "Traceback" not in refused.output and "k=" not in refused.output  # only what differs is named
    assert len(lines(out.with_name("preds.jsonl.partial"))) == 4  # untouched
    finished = predict("--gaps", a, "--out", out, "--model", folder)  # the same work continues
    assert finished.exit_code == 0 and "resuming: 4 of 12" in finished.output
    assert [row["candidates"][0]["text"] for row in lines(out)] == ["ετους"] * 12


def test_a_resume_with_other_weights_behind_the_same_model_path_is_E209(tmp_path, restorers, folder):
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap(i) for i in range(6)])
    out = tmp_path / "preds.jsonl"
    restorers.queue = [Reading(stop_after=2)]
    assert predict("--gaps", gaps, "--out", out, "--model", folder).exit_code == 130
    (folder / "model.safetensors").write_bytes(b"\1" * 64)  # the same size, other weights
    refused = predict("--gaps", gaps, "--out", out, "--model", folder)
    assert refused.exit_code == 2 and "E209" in refused.output and "model fingerprint=" in refused.output


def test_an_unrelated_file_in_the_model_folder_does_not_stop_a_resume(tmp_path, restorers, folder):
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap(i) for i in range(6)])
    out = tmp_path / "preds.jsonl"
    restorers.queue = [Reading(stop_after=2), Reading()]
    assert predict("--gaps", gaps, "--out", out, "--model", folder).exit_code == 130
    (folder / "junk.bin").write_bytes(b"junk")
    (folder / "README.md").write_text("notes")
    assert predict("--gaps", gaps, "--out", out, "--model", folder).exit_code == 0


def test_the_gap_set_digest_is_its_content_not_its_spelling(tmp_path):
    rows = [gap(i) for i in range(3)]
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("".join(json.dumps(dict(reversed(row.items())), indent=None) + "\n\n" for row in rows))
    plain = write_gaps(tmp_path / "plain.jsonl", rows)
    digest = gapset_digest
    assert digest(read_gapset(spaced)) == digest(read_gapset(plain))
    for changed in ([*rows[:2], gap(2, hint=4)], [rows[1], rows[0], rows[2]], rows[:2]):
        assert digest(read_gapset(write_gaps(tmp_path / "other.jsonl", changed))) != digest(read_gapset(plain))


def test_a_partial_file_with_no_record_is_refused_and_kept(tmp_path, restorers):
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap(i) for i in range(3)])
    out = tmp_path / "preds.jsonl"
    partial = tmp_path / "preds.jsonl.partial"
    partial.write_text('{"id": "g0", "candidates": [{"text": "μουσαιου", "prob": 1.0}], "ms": 1.0}\n')
    result = predict("--gaps", gaps, "--out", out)
    assert result.exit_code == 2 and "E208" in result.output and "nothing records" in result.output
    assert partial.read_text().startswith('{"id": "g0"') and not out.exists()


def test_a_partial_file_that_is_a_link_is_refused_and_its_target_kept(tmp_path, restorers):
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap(i) for i in range(3)])
    precious = tmp_path / "precious.txt"
    precious.write_text("a scholar's notes, no newline at the end")  # a torn line would be cut
    (tmp_path / "preds.jsonl.partial").symlink_to(precious)
    result = predict("--gaps", gaps, "--out", tmp_path / "preds.jsonl")
    assert result.exit_code == 2 and "E205" in result.output and "symbolic link" in result.output
    assert precious.read_text() == "a scholar's notes, no newline at the end"


class _FullDisk:
    """A file whose writes fail with ENOSPC once ``room`` characters are written (a part of the
    line that overflows reaches the file, as on a real disk)."""

    def __init__(self, real, room: int) -> None:
        self.real, self.room = real, room

    def write(self, text: str) -> int:
        if len(text) > self.room:
            self.real.write(text[: self.room])
            self.real.flush()
            self.room = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(text)
        return self.real.write(text)

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_a_full_disk_is_E205_and_the_resume_after_it_is_right(tmp_path, monkeypatch):
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap(i) for i in range(8)])
    out = tmp_path / "preds.jsonl"
    real_open = open
    monkeypatch.setattr(outputs, "open", lambda *a, **kw: _FullDisk(real_open(*a, **kw), 300), raising=False)
    job = PredictJob.open(gaps, out, k=5)
    with pytest.raises(FileError, match=r"E205\] cannot write .*preds\.jsonl\.partial: No space left on device"):
        job.run(Reading(), progress=False)
    kept = out.with_name("preds.jsonl.partial").read_bytes()
    assert not kept.endswith(b"\n") and not out.exists()  # a torn line, for the resume to cut
    monkeypatch.undo()  # room again
    job = PredictJob.open(gaps, out, k=5)
    assert 0 < job.output.resumed < 8
    job.run(Reading(), progress=False)
    assert [row["id"] for row in lines(out)] == [f"g{i}" for i in range(8)]


def test_a_gap_line_nested_100000_deep_is_E201_not_a_crash(tmp_path, restorers):
    gaps = tmp_path / "gaps.jsonl"
    gaps.write_text(json.dumps(gap(0)) + "\n" + '{"id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(FormatError, match=r"E201\] .*gaps\.jsonl, line 2: values nested more than"):
        PredictJob.open(gaps, tmp_path / "preds.jsonl")
    result = predict("--gaps", gaps, "--out", tmp_path / "preds.jsonl")
    assert result.exit_code == 2 and "E201" in result.output and "Traceback" not in result.output


def test_gaps_without_their_answer_are_predicted(tmp_path, restorers):
    rows = [{key: value for key, value in gap(i).items() if key != "target"} for i in range(3)]
    gaps = write_gaps(tmp_path / "gaps.jsonl", rows)
    restorers.queue = [Reading()]
    result = predict("--gaps", gaps, "--out", tmp_path / "preds.jsonl")
    assert result.exit_code == 0, result.output
    assert [row["id"] for row in lines(tmp_path / "preds.jsonl")] == ["g0", "g1", "g2"]


def test_a_full_disk_before_the_first_line_is_E205_and_leaves_no_file(tmp_path, monkeypatch):
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap(0)])

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outputs, "write_atomic", full)
    with pytest.raises(FileError, match=r"E205\] cannot write .*preds\.jsonl\.partial\.json: No space left"):
        PredictJob.open(gaps, tmp_path / "preds.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gaps.jsonl"]
