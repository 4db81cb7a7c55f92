"""A guard for tests of a door that must never wait on a FIFO: a regression fails, never hangs.

    with unblocking(fifo):          # after 30 s, a writer opens the FIFO (again and again): a
        door(fifo)                  # reader blocked on it finds the end of the file instead

An alarm signal cannot do this: it may be delivered to another thread (torch's, a pool's), and the
main thread stays blocked in ``open``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Seconds a door may take before the FIFOs are unblocked.
GUARD_SECONDS = 30.0


@contextmanager
def unblocking(*fifos: Path, seconds: float = GUARD_SECONDS) -> Iterator[None]:
    """Run the block; after ``seconds``, open each of ``fifos`` for writing and close it at once,
    every 0.2 s until the block ends (a reader waiting for a writer then reads nothing)."""
    done = threading.Event()

    def writer() -> None:
        if done.wait(seconds):
            return
        while not done.is_set():
            for fifo in fifos:
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:  # no reader yet (ENXIO), or no FIFO there
                    pass
            done.wait(0.2)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
