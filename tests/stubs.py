"""The tests' stand-in restorers, in one home: any object with ``candidates`` (and, for an
ensemble member, ``kind``, ``score_readings`` and ``language_model``) is a restorer, so a test
that needs known readings builds one of these instead of a model.

- :class:`FixedReadings`: the same pool for every gap (``(text, log-score)`` pairs, best first, or
  ready :class:`~apollo_restore.restoration.types.Candidate` s), optionally after a pause; it
  counts its calls and keeps the contexts it was given.
- :class:`Scored`: a member of a given kind with fixed log-scores per reading.
- :func:`shipped_model_copy` and :func:`edit_json`: a copy of the shipped model folder with one
  file changed, for the probes of a folder as files.

A stand-in whose behaviour is its test's subject (one that fails at the n-th gap, reads the gap
back, knows the answers) stays beside its test.
"""

from __future__ import annotations

import copy
import json
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from apollo_restore.hint import NO_HINT
from apollo_restore.restoration.config import DEFAULT_MODEL, RestoreConfig
from apollo_restore.restoration.ranking.pool import to_candidates
from apollo_restore.schema.restoration import Candidate


class FixedReadings:
    """The same readings for every gap, the first ``k`` of them (``k`` given or the config's).

    Args:
        pool: ``(text, log_score)`` pairs, best first (probabilities normalised over the whole
            pool, :func:`~apollo_restore.restoration.ranking.pool.to_candidates`), or
            candidates (copied on each call, so that what a caller writes on one does not leak).
        name: the restorer's name.
        k: the config's ``k`` (the default number of readings); ``None``: all of the pool.
        seconds: a pause per gap (for tests of time limits and admission).
        kind: the member kind, for an ensemble member (``None``: not a member).
    """

    batches = False

    def __init__(
        self,
        pool: list[tuple[str, float]] | list[Candidate],
        *,
        name: str = "fixed",
        k: int | None = None,
        seconds: float = 0.0,
        kind: str | None = None,
    ) -> None:
        self.pool, self.name, self.seconds = list(pool), name, seconds
        self.config = RestoreConfig(k=k or max(len(self.pool), 1))
        if kind is not None:
            self.kind = kind
        self.calls = 0
        self.seen: list[tuple[str, str]] = []
        self._lock = threading.Lock()  # the web serves gaps from several threads

    def candidates(self, prefix, suffix, hint=NO_HINT, k=None) -> list[Candidate]:
        with self._lock:
            self.calls += 1
            self.seen.append((prefix, suffix))
        if self.seconds:
            time.sleep(self.seconds)
        return self._pool()[: k or self.config.k]

    def _pool(self) -> list[Candidate]:
        if self.pool and isinstance(self.pool[0], Candidate):
            return copy.deepcopy(self.pool)
        return to_candidates(self.pool)

    def score_readings(self, prefix, suffix, hint, readings) -> list[float]:
        """Each reading's log-score in the pool (``-20`` for one not in it)."""
        scores = {c.text: c.log_score for c in self._pool()}
        return [scores.get(r, -20.0) for r in readings]

    def language_model(self):
        return None


class Scored(FixedReadings):
    """A member of ``kind`` with fixed log-scores per reading, its pool those readings best first;
    a reading it does not know scores ``unknown`` (nats)."""

    def __init__(
        self, scores: dict[str, float], *, name: str = "fixed", kind: str = "classical", unknown: float = -30.0
    ):
        super().__init__(sorted(scores.items(), key=lambda kv: -kv[1]), name=name, kind=kind, k=20)
        self.scores, self.unknown = scores, unknown

    def score_readings(self, prefix, suffix, hint, readings) -> list[float]:
        return [self.scores.get(r, self.unknown) for r in readings]


def first_reading_at(
    prob: float = 0.9,
    reading: str = "δευτερον",
    display: str = "δεύτερον",
    *,
    calibrated: bool = True,
    unknown: tuple[str, ...] = (),
    name: str = "fixed",
) -> FixedReadings:
    """``reading`` first at the (calibrated) probability ``prob``, ``κάμηλον`` second at half the
    rest, for every gap (``k`` 2); ``unknown``: the words the first reading leaves unknown."""
    top = Candidate(reading, prob, -1.0, display=display, calibrated=calibrated, unknown_words=list(unknown))
    other = Candidate("καμηλον", (1 - prob) / 2, -2.0, display="κάμηλον", calibrated=calibrated)
    return FixedReadings([top, other], name=name, k=2)


def shipped_model_copy(tmp_path: Path) -> Path:
    """A copy of the shipped model folder under ``tmp_path`` (``model/``), to change."""
    return Path(shutil.copytree(DEFAULT_MODEL, tmp_path / "model"))


def edit_json(folder: Path, name: str, edit: Callable[[Any], None]) -> None:
    """Rewrite ``folder/name`` (JSON) after ``edit`` changed its parsed value in place."""
    path = folder / name
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
