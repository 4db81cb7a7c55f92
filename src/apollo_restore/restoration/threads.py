"""How many torch threads a restoration runs on: the one choice the CLI and the Python API share.

    from apollo_restore.restoration.threads import use_threads
    use_threads()    # the cores idle now, at most 2 (what `apollo-restore restore` does)
    use_threads(1)   # one thread

One gap's matrices are small: on an idle 2-core machine a second torch thread saves ≈ 0.2 s of
a restoration, on a busy one its spinning costs more than it gives (BENCHMARKS.md, "CLI
latency"); torch's own default (every core) made the Python API 5–20× slower than the CLI
on a busy machine (issue 23). Torch's thread count is process-wide: set here, it holds for
everything that runs after.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from apollo_restore.errors import RequestError

LOADAVG = Path("/proc/loadavg")
#: Most threads chosen when the caller names none.
DEFAULT_LIMIT = 2


def idle_cores(limit: int = DEFAULT_LIMIT) -> int:
    """Cores no other task is running on now, between 1 and ``limit``: the CPU count less the
    runnable tasks of ``/proc/loadavg`` (this process excepted); 1 where that file is missing.
    The runnable count is read at this instant, unlike the load averages, which lag a minute
    behind."""
    try:
        runnable = int(LOADAVG.read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return 1
    return max(1, min(limit, (os.cpu_count() or 1) - (runnable - 1)))


def choose_threads(threads: Any = None) -> int:
    """``threads`` when given, else :func:`idle_cores`.

    Raises:
        RequestError: ``E311``: not a whole number from 1 to the machine's CPU count.
    """
    if threads is None:
        return idle_cores()
    cores = os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= cores:
        raise RequestError("E311", threads=threads, limit=cores)
    return threads


def use_threads(threads: Any = None) -> int:
    """Set torch's intra-op threads to :func:`choose_threads` of ``threads``; returns the count.

    Raises:
        RequestError: ``E311`` (see :func:`choose_threads`).
    """
    n = choose_threads(threads)
    torch.set_num_threads(n)
    return n
