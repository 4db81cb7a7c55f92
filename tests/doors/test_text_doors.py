"""Issue 63's probes of the text argument at the command's doors: a FIFO that nothing writes
into is ``E202`` (never a wait for ever; a pipe being written, ``<(…)``, is read), and an empty
text is the same ``E300`` at ``restore``, ``attribute`` and ``provenance`` as the Python API
gives, never "E202 cannot read :" (an empty name read as the current folder).

    python -m pytest -q tests/doors/test_text_doors.py
"""

from __future__ import annotations

import os
import threading

import pytest
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.errors import RequestError
from apollo_restore.inputs import read_text
from tests.guards import unblocking

runner = CliRunner()


@pytest.mark.parametrize("command", ["restore", "attribute", "provenance"])
def test_a_fifo_nothing_writes_into_is_E202(tmp_path, command):
    from apollo_restore.cli.app import app

    fifo = tmp_path / "text.fifo"
    os.mkfifo(fifo)
    with unblocking(fifo):
        done = runner.invoke(app, [command, str(fifo)])
    assert done.exit_code == 2 and done.output.startswith(f"error: [E202] cannot read {fifo}"), done.output
    assert "named pipe" in done.output and "Traceback" not in done.output


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="pipes named by /proc/self/fd (Linux)")
def test_a_pipe_being_written_is_read():
    text = "Κόμων [.4] χαίρειν\n"
    r, w = os.pipe()  # written before it is read, the writer gone: its bytes are there
    os.write(w, text.encode())
    os.close(w)
    assert read_text(f"/proc/self/fd/{r}") == text
    os.close(r)
    r, w = os.pipe()  # a writer that writes later (as <(…) does): the read waits for it

    def write() -> None:
        threading.Event().wait(0.3)
        os.write(w, text.encode())
        os.close(w)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert read_text(f"/proc/self/fd/{r}") == text
    writer.join()
    os.close(r)


@pytest.mark.parametrize("command", ["restore", "attribute", "provenance"])
def test_an_empty_text_is_E300_at_the_command_as_in_python(command):
    from apollo_restore.cli.app import app

    with pytest.raises(RequestError) as err:
        getattr(apollo_restore, command)("")
    assert err.value.code == "E300"
    done = runner.invoke(app, [command, ""])
    assert done.exit_code == 2 and done.output.startswith("error: [E300]"), done.output
