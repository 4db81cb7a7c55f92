"""``apollo-restore restore`` shows its progress per gap on a terminal's standard error, and
nothing more when standard error is piped or with ``--json`` (issue 36, item 6)."""

from __future__ import annotations

import io
import json

import pytest
from typer.testing import CliRunner

from apollo_restore.cli import progress as cli_progress
from apollo_restore.cli import restore as cli_restore
from apollo_restore.cli.app import app
from apollo_restore.cli.progress import gap_progress
from apollo_restore.restoration.driver import restore_text
from tests.stubs import FixedReadings

TEXT = "ἔτους [.8] Ἀντωνίνου Καίσαρος [.3] κυρίου Τῦβι [.2] ἔλαβον παρὰ σοῦ"


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def counting() -> FixedReadings:
    """Fixed readings; counts the gaps it was asked for (``calls``)."""
    return FixedReadings([("δευτερου", -1.0), ("τριτου", -2.0)], name="counting", k=2)


def test_restore_text_reports_each_gap():
    seen = []
    restore_text(counting(), TEXT, k=2, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_the_bar_counts_gaps_on_a_terminal():
    stream = Terminal()
    with gap_progress(stream=stream) as progress:
        assert progress is not None
        progress(0, 40)
        progress(1, 40)
        assert "restoring gap 2 of 40" in stream.getvalue()


@pytest.mark.parametrize("stream,enabled", [(io.StringIO(), True), (Terminal(), False)])
def test_no_bar_when_piped_or_disabled(stream, enabled):
    with gap_progress(enabled=enabled, stream=stream) as progress:
        assert progress is None
    assert stream.getvalue() == ""


@pytest.fixture
def terminal_stderr(monkeypatch):
    """The CLI with a stand-in as its model and a terminal as its standard error."""
    stream = Terminal()
    monkeypatch.setattr(cli_progress, "_stderr", lambda: stream)
    restorer = counting()
    monkeypatch.setattr(cli_restore, "_load", lambda *args, **kwargs: (restorer, None))
    return stream, restorer


def test_cli_shows_progress_on_a_terminal(terminal_stderr):
    stream, restorer = terminal_stderr
    result = CliRunner().invoke(app, ["restore", TEXT])
    assert result.exit_code == 0, result.output
    assert restorer.calls == 3 and "restoring gap 3 of 3" in stream.getvalue()
    assert "restoring" not in result.stdout  # the results stay clean


def test_cli_json_shows_no_progress(terminal_stderr):
    stream, _ = terminal_stderr
    result = CliRunner().invoke(app, ["restore", TEXT, "--json"])
    assert result.exit_code == 0, result.output
    assert stream.getvalue() == "" and len(json.loads(result.stdout)["gaps"]) == 3


def test_cli_piped_writes_nothing_extra_to_stderr(monkeypatch):
    monkeypatch.setattr(cli_restore, "_load", lambda *args, **kwargs: (counting(), None))
    result = CliRunner().invoke(app, ["restore", TEXT])  # the runner's stderr is no terminal
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
