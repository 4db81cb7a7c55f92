"""Line files written as durable jobs (issue #24): the paths are checked before any work, lines are
flushed one by one, a torn last line is cut, and the output appears whole or not at all."""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest

from apollo_restore.data.outputs import LineJob
from apollo_restore.errors import FileError, FormatError


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "gaps.jsonl"
    path.write_text('{"id": "g1"}\n')
    return path


def test_lines_reach_the_partial_file_at_once_and_the_output_at_the_end(tmp_path, source):
    out = tmp_path / "out.jsonl"
    job = LineJob.open(out, {"gap set": source})
    job.append('{"id": "g1"}')
    assert job.partial.read_text() == '{"id": "g1"}\n' and not out.exists()  # flushed, not yet the output
    job.finish()
    assert out.read_text() == '{"id": "g1"}\n' and not job.partial.exists()


def test_a_torn_last_line_is_cut_and_the_complete_ones_resume(tmp_path, source):
    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.partial").write_bytes(b'{"id": "a"}\n{"id": "b"}\n{"id": "c", "cand')
    (tmp_path / "out.jsonl.partial.json").write_text('{"settings": {}}')  # what the killed run recorded
    job = LineJob.open(out, {"gap set": source})
    assert job.resumed == 2 and job.partial.read_bytes() == b'{"id": "a"}\n{"id": "b"}\n'
    job.append('{"id": "c"}')
    job.finish()
    assert out.read_text().splitlines() == ['{"id": "a"}', '{"id": "b"}', '{"id": "c"}']


def test_restart_discards_the_unfinished_file(tmp_path, source):
    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.partial").write_text('{"id": "a"}\n')
    assert LineJob.open(out, {"gap set": source}, restart=True).resumed == 0
    assert not (tmp_path / "out.jsonl.partial").exists()


def test_an_existing_output_is_refused_without_force_and_kept_until_the_end(tmp_path, source):
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    with pytest.raises(FileError, match=r"E207\] .*out\.jsonl already exists: give --force"):
        LineJob.open(out, {"gap set": source})
    job = LineJob.open(out, {"gap set": source}, force=True)
    job.append("new")
    job.close()  # a run that stops here
    assert out.read_text() == "old\n"
    job = LineJob.open(out, {"gap set": source}, force=True)
    job.finish()
    assert out.read_text() == "new\n"


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink", "partial"])
def test_the_output_may_not_be_an_input(tmp_path, source, how):
    out = tmp_path / "out.jsonl"
    if how == "same":
        out = source
    elif how == "symlink":
        out.symlink_to(source)
    elif how == "hardlink":
        os.link(source, out)
    else:  # the unfinished file beside the output would be the input
        source.rename(tmp_path / "out.jsonl.partial")
        source = tmp_path / "out.jsonl.partial"
    with pytest.raises(FileError, match=r"E206\] .* is the input gap set .*gaps\.jsonl|E206\] .* is the input gap set"):
        LineJob.open(out, {"gap set": source}, force=True, restart=True)
    assert source.read_text() == '{"id": "g1"}\n'


def test_a_missing_folder_or_a_folder_as_output_is_E205(tmp_path, source):
    with pytest.raises(FileError, match=r"E205\] cannot write .*: there is no folder .*missing; create it first"):
        LineJob.open(tmp_path / "missing" / "out.jsonl", {"gap set": source})
    with pytest.raises(FileError, match=r"E205\] .*it is a folder"):
        LineJob.open(tmp_path, {"gap set": source})


def test_the_settings_are_recorded_and_a_run_with_others_is_refused(tmp_path, source):
    out = tmp_path / "out.jsonl"
    job = LineJob.open(out, {"gap set": source}, settings={"k": "20", "model": "default"})
    job.append('{"id": "a"}')
    job.close()  # killed here
    with pytest.raises(FileError, match=r"E209\] .*out\.jsonl\.partial .* made with k=20, this run asks k=50"):
        LineJob.open(out, {"gap set": source}, settings={"k": "50", "model": "default"})
    job = LineJob.open(out, {"gap set": source}, settings={"k": "20", "model": "default"})
    assert job.resumed == 1
    job.finish()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gaps.jsonl", "out.jsonl"]  # record and lock gone


def test_restart_records_the_new_settings(tmp_path, source):
    out = tmp_path / "out.jsonl"
    job = LineJob.open(out, {"gap set": source}, settings={"k": "20"})
    job.append('{"id": "a"}')
    job.close()
    LineJob.open(out, {"gap set": source}, restart=True, settings={"k": "5"}).close()
    job = LineJob.open(out, {"gap set": source}, settings={"k": "5"})
    assert job.resumed == 0
    job.close()


def test_a_partial_file_with_no_settings_record_is_refused(tmp_path, source):
    """Nothing proves what made it (an older version's, or one copied in): continuing it could
    mix two runs' lines (issue 35)."""
    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.partial").write_text('{"id": "a"}\n')  # no settings record beside it
    with pytest.raises(FileError, match=r"E208\] .*out\.jsonl\.partial .*nothing records what it was made with"):
        LineJob.open(out, {"gap set": source}, settings={"k": "20"})
    assert (tmp_path / "out.jsonl.partial").read_text() == '{"id": "a"}\n'  # kept, untouched
    job = LineJob.open(out, {"gap set": source}, restart=True, settings={"k": "20"})
    assert job.resumed == 0
    job.close()


def test_a_broken_settings_record_is_a_numbered_error(tmp_path, source):
    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.partial").write_text('{"id": "a"}\n')
    (tmp_path / "out.jsonl.partial.json").write_text("{not json")
    with pytest.raises(FormatError, match=r"E201\] .*out\.jsonl\.partial\.json, line 1: not a settings record"):
        LineJob.open(out, {"gap set": source}, settings={"k": "20"})


def test_a_second_run_on_the_same_output_is_refused_while_the_first_is_open(tmp_path, source):
    out = tmp_path / "out.jsonl"
    first = LineJob.open(out, {"gap set": source})
    script = (
        "import sys; from pathlib import Path; from apollo_restore.data.outputs import LineJob\n"
        "LineJob.open(Path(sys.argv[1]), {'gap set': Path(sys.argv[2])})"
    )
    other = subprocess.run([sys.executable, "-c", script, str(out), str(source)], capture_output=True, text=True)
    assert other.returncode != 0 and "E210] another run is writing" in other.stderr
    first.close()
    again = subprocess.run([sys.executable, "-c", script, str(out), str(source)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr


def test_a_file_system_without_locks_runs_the_job_unguarded(tmp_path, source, monkeypatch):
    from apollo_restore.data import outputs

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(outputs.fcntl, "flock", no_locks)
    job = LineJob.open(tmp_path / "out.jsonl", {"gap set": source})
    job.append('{"id": "a"}')
    job.finish()
    assert (tmp_path / "out.jsonl").read_text() == '{"id": "a"}\n'


def test_a_job_closed_before_its_first_line_leaves_no_file(tmp_path, source):
    """E.g. its model failed to load: nothing to resume, so no record or lock is left behind
    (a job closed after a line keeps both, for the next run to continue)."""
    out = tmp_path / "out.jsonl"
    LineJob.open(out, {"gap set": source}, settings={"k": "20"}).close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gaps.jsonl"]
    job = LineJob.open(out, {"gap set": source}, settings={"k": "20"})
    job.append('{"id": "a"}')
    job.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "gaps.jsonl", "out.jsonl.partial", "out.jsonl.partial.json", "out.jsonl.partial.lock",
    ]  # fmt: skip
