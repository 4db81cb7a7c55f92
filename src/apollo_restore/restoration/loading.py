"""Load a restorer as every door does: torch's threads chosen first, then the restorer built,
and with ``workers`` the processes that each build their own (``restore``, ``predict``,
``evaluate``, ``serve`` and the Python API all load through :func:`load_with_threads`).

    from functools import partial
    from apollo_restore.restoration.load import load_restorer
    from apollo_restore.restoration.loading import load_with_threads
    restorer, pool = load_with_threads(partial(load_restorer, None))   # the cores idle now, at most 2
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apollo_restore.restoration.predict import Workers
from apollo_restore.restoration.restorer import Restorer
from apollo_restore.restoration.threads import use_threads


def load_with_threads(
    make: Callable[[], Restorer], threads: Any = None, workers: int = 1
) -> tuple[Restorer, Workers | None]:
    """``(make(), the worker processes or None)``, torch's threads set before ``make`` runs.

    Args:
        make: builds the restorer; picklable when ``workers > 1`` (a module-level function or a
            ``functools.partial`` of one): each worker process builds its own with it.
        threads: torch threads of this process (process-wide) and of each worker; ``None``: the
            cores idle now, at most 2 (:func:`~apollo_restore.restoration.threads.use_threads`),
            or 1 each with more than one worker: torch's own default (every core) spins on a busy
            machine, 3–7× slower a gap (docs/notes/2026-11-27-cpu-speed.md).
        workers: processes that restore; 1: none (``make()``'s restorer does).

    Raises:
        RequestError: ``E311``: ``threads`` not a whole number from 1 to the CPU count; and what
            ``make`` raises (a broken folder: ``FileNotFoundError``, ``ValueError``).
    """
    threads = use_threads(threads if threads or workers == 1 else 1)
    restorer = make()
    return restorer, (Workers(make, workers, threads) if workers > 1 else None)
