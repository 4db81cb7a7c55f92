"""A guard for tests of a door that must never wait on a FIFO: a regression fails, never hangs.

    with unblocking(fifo):          # after 30 s, a writer opens the FIFO (again and again): a
        door(fifo)                  # reader blocked on it finds the end of the file instead

The writer is another process: an alarm signal may be delivered to another thread (torch's, a
pool's) and leave the main thread blocked in ``open``, and a thread of this process cannot run
while a library blocked in ``open`` holds the interpreter's lock (safetensors does).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Seconds a door may take before the FIFOs are unblocked.
GUARD_SECONDS = 30.0
_WRITER = """
import os, sys, time
time.sleep(float(sys.argv[1]))
while True:
    for fifo in sys.argv[2:]:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader yet (ENXIO), or no FIFO there
            pass
    time.sleep(0.2)
"""


@contextmanager
def unblocking(*fifos: Path, seconds: float = GUARD_SECONDS) -> Iterator[None]:
    """Run the block; after ``seconds``, a writer process opens each of ``fifos`` and closes it at
    once, every 0.2 s until the block ends (a reader waiting for a writer then reads nothing)."""
    if not fifos:
        yield
        return
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(seconds), *map(str, fifos)])
    try:
        yield
    finally:
        writer.kill()
        writer.wait()
