"""A progress bar per gap for ``apollo-restore restore``, on standard error, only on a terminal.

    with gap_progress(enabled=not as_json) as progress:      # None when piped or with --json
        result = restore_text(restorer, request, progress=progress)

A long text (40 gaps: about a minute on a laptop) would otherwise run without a word. Nothing is
written when standard error is not a terminal (a pipe, a file, a CI log) or with ``--json``, so
what scripts read stays as it was; the bar is removed when the restoration ends.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO


def _stderr() -> TextIO:
    """The stream the bar goes to (looked up on each call: a test may replace it)."""
    return sys.stderr


@contextmanager
def gap_progress(enabled: bool = True, stream: TextIO | None = None) -> Iterator[Callable[[int, int], None] | None]:
    """Yields ``progress(done, total)`` (:func:`~apollo_restore.restoration.driver.restore_text`'s
    callback) drawing ``restoring gap 3 of 40`` with a bar on ``stream`` (standard error), or
    ``None`` when not ``enabled`` or ``stream`` is not a terminal."""
    stream = stream or _stderr()
    if not enabled or not stream.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=stream, force_terminal=True)
    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("restoring", total=None)

        def update(done: int, total: int) -> None:
            now = min(done + 1, total)
            label = f"restoring gap {now} of {total}" if done < total else f"restored {total} gaps"
            bar.update(task, completed=done, total=total, description=label)
            bar.refresh()

        yield update
