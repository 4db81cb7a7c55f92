"""Torch threads: the CLI and the Python API choose them in one place (issue 23)."""

from __future__ import annotations

import os

import pytest
import torch

import apollo_restore
from apollo_restore.errors import RequestError
from apollo_restore.restoration import threads


@pytest.mark.parametrize(
    ("line", "cores", "want"),
    [
        ("0.10 0.20 0.30 1/120 4242", 2, 2),  # only this process runs: both cores
        ("0.10 0.20 0.30 1/120 4242", 16, 2),  # never more than 2
        ("2.50 2.00 1.00 2/120 4242", 2, 1),  # one other task running
        ("7.90 8.00 8.10 9/120 4242", 2, 1),  # a busy machine: one thread, never 0
    ],
)
def test_idle_cores_counts_the_tasks_running_now(tmp_path, monkeypatch, line, cores, want) -> None:
    (tmp_path / "loadavg").write_text(line + "\n")
    monkeypatch.setattr(threads, "LOADAVG", tmp_path / "loadavg")
    monkeypatch.setattr(threads.os, "cpu_count", lambda: cores)
    assert threads.idle_cores() == want
    assert threads.choose_threads() == want  # no number given: the idle cores


def test_idle_cores_is_one_without_a_load_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(threads, "LOADAVG", tmp_path / "missing")
    assert threads.idle_cores() == 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, (os.cpu_count() or 1) + 1])
def test_a_bad_thread_count_is_a_numbered_error(bad) -> None:
    with pytest.raises(RequestError, match=r"\[E311\]"):
        threads.choose_threads(bad)


def test_use_threads_sets_torchs_threads() -> None:
    before = torch.get_num_threads()
    try:
        assert threads.use_threads(1) == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_the_python_api_checks_threads_before_loading_a_model(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(apollo_restore, "_load", refuse)
    with pytest.raises(RequestError, match=r"\[E311\]"):
        apollo_restore.restore("ἔτους δευτέρου Ἀντωνίνου [.5] Καίσαρος τοῦ κυρίου", threads=0)
    with pytest.raises(RequestError, match=r"\[E311\]"):
        apollo_restore.load_restorer(threads="two")
