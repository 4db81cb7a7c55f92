"""``predict`` as a durable job (issue #24): everything checked before the model loads, a killed
run resumes and finishes with every gap exactly once, an existing output is never lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.data.formats import read_gapset
from apollo_restore.errors import FileError, FormatError
from apollo_restore.restoration import load
from apollo_restore.restoration.predict import PredictJob, Workers, gapset_digest
from apollo_restore.schema.restoration import Candidate

from ..gapfiles import PREFIX, gap, write_gaps
from ..ranking import assert_same_ranking


class Counting:
    """A restorer that answers every gap at once and records which it was asked."""

    batches = False

    name = "counting"

    def __init__(self, fail_at: int | None = None, error: type[BaseException] = RuntimeError) -> None:
        self.asked: list[str] = []
        self.fail_at, self.error = fail_at, error

    def candidates(self, prefix, suffix, hint, k=None):
        if len(self.asked) == self.fail_at:
            raise self.error("the restorer stops here")
        self.asked.append(prefix)
        return [Candidate("αβγ", 0.75, -0.3), Candidate("δεζ", 0.25, -1.4)]


@pytest.fixture
def gapset(tmp_path) -> Path:
    return write_gaps(tmp_path / "gaps.jsonl", [gap(i) for i in range(10)])


def ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


KILLED_RUN = """
import os, signal, sys
from pathlib import Path
from apollo_restore.restoration.predict import PredictJob
from apollo_restore.schema.restoration import Candidate

class Dying:
    name = "dying"
    batches = False
    calls = 0

    def candidates(self, prefix, suffix, hint, k=None):
        Dying.calls += 1
        if Dying.calls > int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)
        return [Candidate("αβγ", 1.0, 0.0)]

PredictJob.open(Path(sys.argv[1]), Path(sys.argv[2]), k=5).run(Dying(), progress=False)
"""


@pytest.mark.parametrize("killed_after", [0, 4])
@pytest.mark.slow
def test_a_killed_run_resumes_and_finishes_with_every_gap_exactly_once(tmp_path, gapset, killed_after):
    out = tmp_path / "preds.jsonl"
    run = subprocess.run([sys.executable, "-c", KILLED_RUN, gapset, out, str(killed_after)], capture_output=True)
    assert run.returncode == -signal.SIGKILL, run.stderr.decode()
    partial = tmp_path / "preds.jsonl.partial"
    kept = ids(partial) if partial.exists() else []  # the partial file is made by the first prediction
    assert not out.exists() and kept == [f"g{i}" for i in range(killed_after)]  # every finished gap kept
    job = PredictJob.open(gapset, out, k=5)
    restorer = Counting()
    assert job.run(restorer, progress=False) == 10
    assert len(restorer.asked) == 10 - killed_after  # the kept gaps are not asked again
    assert ids(out) == [f"g{i}" for i in range(10)] and not partial.exists()


def test_an_existing_output_survives_a_failed_run_and_a_resumed_one_replaces_it(tmp_path, gapset):
    out = tmp_path / "preds.jsonl"
    out.write_text("an earlier run's predictions\n")
    job = PredictJob.open(gapset, out, k=5, force=True)
    with pytest.raises(RuntimeError):
        job.run(Counting(fail_at=3), progress=False)
    assert out.read_text() == "an earlier run's predictions\n"
    assert ids(tmp_path / "preds.jsonl.partial") == ["g0", "g1", "g2"]
    PredictJob.open(gapset, out, k=5, force=True).run(Counting(), progress=False)
    assert ids(out) == [f"g{i}" for i in range(10)]


class Batching(Counting):
    """A restorer that searches gaps together, and records the batches it was asked."""

    batches = True

    def __init__(self, fail_at_batch: int | None = None) -> None:
        super().__init__()
        self.sizes: list[int] = []  # of the batches asked
        self.fail_at_batch = fail_at_batch

    def candidates_many(self, gaps, k=None):
        if len(self.sizes) == self.fail_at_batch:
            raise RuntimeError("the restorer stops here")
        self.sizes.append(len(gaps))
        return [self.candidates(prefix, suffix, hint, k) for prefix, suffix, hint in gaps]


def test_a_batched_run_keeps_each_finished_batch_and_resumes_after_it(tmp_path, gapset):
    out = tmp_path / "preds.jsonl"
    with pytest.raises(RuntimeError):
        PredictJob.open(gapset, out, k=5).run(Batching(fail_at_batch=2), progress=False, batch=4)
    assert ids(tmp_path / "preds.jsonl.partial") == [f"g{i}" for i in range(8)]  # two whole batches
    restorer = Batching()
    assert PredictJob.open(gapset, out, k=5).run(restorer, progress=False, batch=4) == 10
    assert restorer.sizes == [2] and ids(out) == [f"g{i}" for i in range(10)]


def test_restart_begins_again(tmp_path, gapset):
    out = tmp_path / "preds.jsonl"
    with pytest.raises(RuntimeError):
        PredictJob.open(gapset, out, k=5).run(Counting(fail_at=3), progress=False)
    restorer = Counting()
    PredictJob.open(gapset, out, k=5, restart=True).run(restorer, progress=False)
    assert len(restorer.asked) == 10 and ids(out) == [f"g{i}" for i in range(10)]


def test_an_unfinished_file_of_another_gap_set_is_refused(tmp_path, gapset):
    out = tmp_path / "preds.jsonl"
    (tmp_path / "preds.jsonl.partial").write_text('{"id": "elsewhere", "candidates": [], "ms": 1}\n')
    digest = gapset_digest(read_gapset(gapset))
    record = tmp_path / "preds.jsonl.partial.json"
    record.write_text(json.dumps({"settings": {"gap set": "sha256:0123456789abcdef", "k": "20"}}))
    with pytest.raises(FileError, match=r"E209\] .*partial .*made with gap set=sha256:0123456789abcdef, this run"):
        PredictJob.open(gapset, out)
    record.write_text(json.dumps({"settings": {"gap set": digest, "k": "20"}}))  # a record that lies
    with pytest.raises(FileError, match=r"E208\] .*partial .*1 of its ids are not in .*'elsewhere'"):
        PredictJob.open(gapset, out)


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([gap(0), gap(1), gap(0)], r"line 3: id 'g0' is already on line 1"),
        ([gap(0), gap(1, prefix="lorem ipsum dolor sit ", suffix=" amet consectetur")], r"line 2: \[E308\].*Latin"),
        ([gap(0, suffix=" και\x07 του")], r"line 1: \[E309\] unreadable character U\+0007 .*suffix of gap 'g0'"),
        ([gap(0, hint=500)], r"line 1: \[E304\] gap g0 asks for 500 letters"),
        ([gap(0, prefix="")], None),  # a short context is a fair test item
    ],
)
def test_every_gap_goes_through_the_request_check(tmp_path, rows, match):
    path = write_gaps(tmp_path / "gaps.jsonl", rows)
    if match is None:
        assert PredictJob.open(path, tmp_path / "out.jsonl").total == len(rows)
        return
    with pytest.raises(FormatError, match=match):
        PredictJob.open(path, tmp_path / "out.jsonl")


# -- through the command line: every refusal comes before the model loads ------------------


@pytest.fixture
def no_model(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(load, "load_restorer", refuse)


def predict(*args: str | Path):
    return CliRunner().invoke(app, ["predict", *map(str, args)])


def test_cli_out_equal_to_gaps_is_refused_before_the_model_loads(gapset, no_model):
    before = gapset.read_bytes()
    result = predict("--gaps", gapset, "--out", gapset, "--force")
    assert result.exit_code == 2 and "E206" in result.output and "Traceback" not in result.output
    assert gapset.read_bytes() == before


def test_cli_missing_out_folder_is_refused_before_the_model_loads(tmp_path, gapset, no_model):
    result = predict("--gaps", gapset, "--out", tmp_path / "nowhere" / "preds.jsonl")
    assert result.exit_code == 2 and "E205" in result.output and "there is no folder" in result.output


def test_cli_existing_out_survives_a_run_that_fails_validation(tmp_path, no_model):
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap(0), gap(1, hint=500)])
    out = tmp_path / "preds.jsonl"
    out.write_text("kept\n")
    result = predict("--gaps", gaps, "--out", out, "--force")
    assert result.exit_code == 2 and "E304" in result.output and out.read_text() == "kept\n"
    write_gaps(gaps, [gap(0), gap(1)])
    result = predict("--gaps", gaps, "--out", out)
    assert result.exit_code == 2 and "E207" in result.output and out.read_text() == "kept\n"


@pytest.mark.parametrize(
    ("content", "code"),
    [(b'{"id": "g0", "prefix": "\xce"}\n', "E203"), (b"", None), (b"[1, 2]\n", "E201")],
)
def test_cli_unreadable_gap_sets_are_numbered_errors(tmp_path, no_model, content, code):
    gaps = tmp_path / "gaps.jsonl"
    gaps.write_bytes(content)
    if code is None:  # a folder, not a file
        gaps.unlink()
        gaps.mkdir()
        code = "E202"
    result = predict("--gaps", gaps, "--out", tmp_path / "preds.jsonl")
    assert result.exit_code == 2 and code in result.output and "Traceback" not in result.output


def test_cli_runs_resumes_and_stops_cleanly(tmp_path, gapset, monkeypatch):
    restorers = iter([Counting(fail_at=4, error=KeyboardInterrupt), Counting()])
    monkeypatch.setattr(load, "load_restorer", lambda *args, **kwargs: next(restorers))
    out = tmp_path / "preds.jsonl"
    stopped = predict("--gaps", gapset, "--out", out)
    assert stopped.exit_code == 130 and "run the same command again" in stopped.output and not out.exists()
    finished = predict("--gaps", gapset, "--out", out)
    assert finished.exit_code == 0, finished.output
    assert "resuming: 4 of 10 gaps" in finished.output and ids(out) == [f"g{i}" for i in range(10)]
    assert sorted(os.listdir(tmp_path)) == ["gaps.jsonl", "preds.jsonl"]  # no partial file left


def test_cli_refuses_to_continue_a_run_made_with_another_k(tmp_path, gapset, monkeypatch):
    restorers = iter([Counting(fail_at=4, error=KeyboardInterrupt), Counting(), Counting()])
    monkeypatch.setattr(load, "load_restorer", lambda *args, **kwargs: next(restorers))
    out = tmp_path / "preds.jsonl"
    assert predict("--gaps", gapset, "--out", out, "--k", 20).exit_code == 130
    other = predict("--gaps", gapset, "--out", out, "--k", 5)
    assert other.exit_code == 2 and "E209" in other.output and "k=20" in other.output and "k=5" in other.output
    assert len(ids(out.with_name("preds.jsonl.partial"))) == 4  # untouched
    restarted = predict("--gaps", gapset, "--out", out, "--k", 5, "--restart")
    assert restarted.exit_code == 0, restarted.output
    assert ids(out) == [f"g{i}" for i in range(10)]


class Echo:
    """A restorer whose first reading is drawn from the gap and whose second names its process."""

    batches = False

    name = "echo"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def candidates(self, prefix, suffix, hint, k=None):
        time.sleep(self.seconds)  # long enough that every worker gets some gaps
        return [Candidate(prefix.split()[-1], 0.75, -0.3), Candidate(f"pid{os.getpid()}", 0.25, -1.4)]


@pytest.mark.slow
def test_workers_restore_every_gap_once_in_order_in_other_processes(tmp_path):
    names = "αβγδεζηθ"  # Greek: a context reaches the restorer normalised (digits dropped)
    gaps = write_gaps(tmp_path / "gaps.jsonl", [gap(i, prefix=f"{PREFIX}λ{names[i]} ") for i in range(8)])
    alone, shared = tmp_path / "alone.jsonl", tmp_path / "shared.jsonl"
    PredictJob.open(gaps, alone, k=5).run(Echo(0.0), progress=False)
    PredictJob.open(gaps, shared, k=5).run(None, progress=False, workers=Workers(partial(Echo, 0.2), 2))
    rows = [json.loads(line) for line in shared.read_text().splitlines()]
    assert [r["id"] for r in rows] == [f"g{i}" for i in range(8)]
    firsts = [json.loads(line)["candidates"][0] for line in alone.read_text().splitlines()]
    assert [r["candidates"][0] for r in rows] == firsts == [{"text": f"λ{n}", "prob": 0.75} for n in names]
    pids = {r["candidates"][1]["text"] for r in rows}
    assert len(pids) == 2 and f"pid{os.getpid()}" not in pids


@pytest.mark.slow
def test_cli_workers_give_the_readings_of_one_process(tmp_path):
    # the embedded model, neural member alone, in two spawned processes against one
    rows = [gap(0), gap(1, prefix="και ομολογει ο", suffix="ν απο κωμης", hint=4), gap(2, hint=None)]
    gaps = write_gaps(tmp_path / "gaps.jsonl", rows)
    runs = {}
    for workers in (1, 2):
        out = tmp_path / f"preds-{workers}.jsonl"
        result = predict("--gaps", gaps, "--out", out, "--neural-only", "--k", 5, "--workers", workers)
        assert result.exit_code == 0, result.output
        runs[workers] = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in runs[2]] == [r["id"] for r in runs[1]] and len(runs[1]) == 3
    for shared, alone in zip(runs[2], runs[1]):  # one torch thread per worker: near ties may swap (tests/ranking.py)
        assert_same_ranking(*[[(c["text"], c["prob"]) for c in r["candidates"]] for r in (shared, alone)])


def test_cli_workers_beyond_the_cores_are_a_numbered_usage_error(gapset, tmp_path, no_model):
    result = predict("--gaps", gapset, "--out", tmp_path / "p.jsonl", "--workers", (os.cpu_count() or 1) + 1)
    assert result.exit_code == 2 and "E601" in result.output and "--workers" in result.output


WORKERS_RUN = """
import sys
from functools import partial
from pathlib import Path
from apollo_restore.data.formats import read_gapset
from apollo_restore.restoration.predict import PredictJob, Workers, gapset_digest
from tests.restoration.test_predict_job import Echo

workers = Workers(partial(Echo, 0.3), 2)
PredictJob.open(Path(sys.argv[1]), Path(sys.argv[2]), k=5).run(None, progress=False, workers=workers)
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.slow
def test_workers_end_when_their_predict_is_killed(tmp_path, gapset):
    out, root = tmp_path / "preds.jsonl", Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "src")])}
    run = subprocess.Popen([sys.executable, "-c", WORKERS_RUN, gapset, out], cwd=root, env=env)
    partial_file, deadline = tmp_path / "preds.jsonl.partial", time.monotonic() + 120
    while (
        time.monotonic() < deadline and len(partial_file.read_text().splitlines() if partial_file.exists() else []) < 2
    ):
        time.sleep(0.1)
    pids = {int(json.loads(line)["candidates"][1]["text"][3:]) for line in partial_file.read_text().splitlines()}
    assert pids and all(_alive(pid) for pid in pids)
    run.kill()
    run.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    left = [pid for pid in pids if _alive(pid)]
    for pid in left:  # not to leave them behind when this fails
        os.kill(pid, signal.SIGKILL)
    assert not left, "workers outlived their killed predict"
