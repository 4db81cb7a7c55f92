"""Run a gap set through a restorer and write predictions (the interchange format), as a durable job.

    job = PredictJob.open(Path("gaps.jsonl"), Path("preds.jsonl"), k=20)   # every check; no model yet
    job.run(restorer, batch=256)                                             # resumes, then replaces

:meth:`PredictJob.open` checks everything before a model is loaded: ``k``, the gap set (read
through the input layer; every gap through the request check
:func:`~apollo_restore.restoration.request.check_gap`; ids unique) and the output (not an input, its
folder there and writable, not already there unless ``force``). Gaps are searched ``batch`` at a
time (:func:`predict`); their predictions are appended to ``OUT.partial`` one flushed line per gap
as each batch is done (:class:`~apollo_restore.data.outputs.LineJob`); a run that
is killed or fails leaves that file, and the next run with the same output continues after the
gaps it holds (``restart`` begins again), but only for the same gap set (:func:`gapset_digest`),
``k`` and settings, recorded when the job starts (``E209`` names what differs). When every gap
is predicted the file is renamed over ``OUT``: gap-set order, every gap exactly once.

With :class:`Workers` the gaps are shared among processes that each build their own restorer
(``job.run(None, workers=Workers(make, 4))``): each gap gets what it gets in one process, and
the predictions are still written in gap-set order, each as soon as it and all before it are done.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.connection
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

from tqdm.auto import tqdm

from apollo_restore.data.formats import GapExample, Prediction, jsonl_line, read_gapset, read_predictions
from apollo_restore.data.outputs import LineJob
from apollo_restore.inputs import digest
from apollo_restore.restoration.presentation.present import Presented
from apollo_restore.restoration.ranking.calibration import gap_kind
from apollo_restore.restoration.request import check_gap, check_k, cut_context
from apollo_restore.restoration.restorer import Restorer, candidates_many
from apollo_restore.restoration.text_kind import kind_of_source
from apollo_restore.restoration.threads import use_threads
from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS, RequestLimits


def predict(
    restorer: Restorer | None,
    gaps: Iterable[GapExample],
    k: int = 20,
    progress: bool = True,
    limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
    batch: int = 1,
    workers: Workers | None = None,
) -> Iterator[Prediction]:
    """Predictions for each gap, in order, with the milliseconds each took.

    ``batch`` gaps are restored at a time, searched together where the restorer can
    (:func:`~apollo_restore.restoration.restorer.candidates_many`; on a GPU, many gaps fill one batch);
    each gets the candidates it would get alone, and the batch's time shared evenly. With
    ``workers`` (then ``restorer`` is not used) the batches are shared among processes.

    Raises:
        RequestError: ``k`` beyond ``limits``, or a gap :func:`check_gap` refuses (every gap is
            checked before any search, so that a bad one fails at once).
    """
    check_k(k, limits)
    yield from _predictions(restorer, [check_gap(gap, limits) for gap in gaps], k, progress, batch, workers)


def _predictions(
    restorer: Restorer | None, gaps: list[GapExample], k: int, progress: bool, batch: int = 1,
    workers: Workers | None = None,
) -> Iterator[Prediction]:  # fmt: skip
    """The predictions of :func:`predict` for gaps already checked, ``batch`` gaps at a time (by
    ``workers``' processes when given)."""
    if workers is not None:
        yield from _predictions_in_workers(workers, gaps, k, progress, batch)
        return
    with tqdm(total=len(gaps), desc="predict", unit="gap", disable=not progress) as bar:
        for start in range(0, len(gaps), batch):
            chunk = gaps[start : start + batch]
            started = time.perf_counter()
            found = _by_kind(restorer, chunk, k)
            ms = round((time.perf_counter() - started) * 1000 / len(chunk), 1)
            for gap, cands in zip(chunk, found):
                yield Prediction(gap.id, [(c.text, round(c.prob, 6)) for c in cands], ms)
            bar.update(len(chunk))


def _by_kind(restorer: Restorer, chunk: list[GapExample], k: int) -> list[list]:
    """Each gap's candidates, the gaps of each kind (a synthetic gap, a real lacuna: the gap's
    ``kind``; of a kind of text: its ``source``'s, :func:`~.text_kind.kind_of_source`) presented
    with their kind's calibration when ``restorer`` presents
    (:meth:`~apollo_restore.restoration.presentation.present.Presented.for_gap_kind`); a restorer
    that does not present shows its own probabilities, whatever the kind."""
    found: list[list] = [[] for _ in chunk]
    kinds = [(gap_kind(gap.kind), kind_of_source(gap.source)) for gap in chunk]
    for kind in dict.fromkeys(kinds):
        idx = [i for i, other in enumerate(kinds) if other == kind]
        shown = restorer.for_gap_kind(kind[0]).for_text_kind(kind[1]) if isinstance(restorer, Presented) else restorer
        for i, cands in zip(idx, candidates_many(shown, [_gap(chunk[i]) for i in idx], k)):
            found[i] = cands
    return found


def _gap(gap: GapExample) -> tuple:
    return gap.prefix, gap.suffix, gap.hint


@dataclass(frozen=True)
class Workers:
    """Processes that each build their own restorer and restore a share of the gaps.

    Attributes:
        make: builds the restorer, once in each process; picklable (a module-level function or a
            ``functools.partial`` of one), since the processes are started fresh (``spawn``).
        count: processes.
        threads: torch threads in each process.
    """

    make: Callable[[], Restorer]
    count: int
    threads: int = 1


#: the restorer of this worker process, built once by :func:`_start_worker`
_worker_restorer: Restorer | None = None


def _start_worker(make: Callable[[], Restorer], threads: int) -> None:
    global _worker_restorer
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    use_threads(threads)
    _worker_restorer = make()


def _exit_with_parent() -> None:
    """End this worker as soon as the process that started it ends, however it ends (a killed
    ``predict`` would otherwise leave its workers waiting for work, each holding a model)."""
    multiprocessing.connection.wait([multiprocessing.parent_process().sentinel])
    os._exit(1)


def _predict_chunk(chunk: list[GapExample], k: int) -> list[Prediction]:
    """One worker's predictions for ``chunk``, its gaps searched together."""
    return list(_predictions(_worker_restorer, chunk, k, progress=False, batch=len(chunk)))


def _predictions_in_workers(
    workers: Workers, gaps: list[GapExample], k: int, progress: bool, batch: int
) -> Iterator[Prediction]:
    """The predictions of :func:`predict` for gaps already checked, ``batch`` gaps to a task, the
    tasks shared among ``workers``; yielded in gap order as each task and those before it end."""
    chunks = [gaps[start : start + batch] for start in range(0, len(gaps), batch)]
    pool = ProcessPoolExecutor(
        workers.count, multiprocessing.get_context("spawn"), _start_worker, (workers.make, workers.threads)
    )
    try:
        with tqdm(total=len(gaps), desc="predict", unit="gap", disable=not progress) as bar:
            for found in pool.map(_predict_chunk, chunks, repeat(k)):
                yield from found
                bar.update(len(found))
    finally:  # stopped early (a failure, ^C): drop the tasks not started rather than wait for them
        pool.shutdown(wait=False, cancel_futures=True)


def gapset_digest(gaps: Iterable[GapExample]) -> str:
    """Identity of a gap set's content, in order: ``sha256:`` and the fingerprint
    (:func:`~apollo_restore.inputs.digest`) of every gap as canonical JSON (keys sorted), one a
    line. The file's spacing and key order do not count; any gap's id, context, hint, answer or
    place does."""
    lines = (json.dumps(gap.to_dict(), sort_keys=True, ensure_ascii=False).encode() + b"\n" for gap in gaps)
    return f"sha256:{digest(lines)}"


@dataclass
class PredictJob:
    """A checked gap set and the output its predictions go to (see the module docstring).

    Attributes:
        todo: the gaps still to predict, in gap-set order.
        total: gaps in the gap set.
        k: candidates per gap.
        output: the line job writing the predictions.
    """

    todo: list[GapExample]
    total: int
    k: int
    output: LineJob

    @classmethod
    def open(
        cls,
        gapset: Path,
        out: Path,
        k: int = 20,
        force: bool = False,
        restart: bool = False,
        limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
        settings: Mapping[str, str] | None = None,
    ) -> PredictJob:
        """Check everything and open the job (no model is needed).

        Args:
            gapset: the gap-set JSONL.
            out: the predictions JSONL to write.
            k: candidates per gap.
            force: replace an existing ``out`` (kept until the new one is complete).
            restart: discard an unfinished run's predictions instead of continuing them.
            limits: the request limits each gap is checked against.
            settings: what else the predictions depend on (the model, its fingerprint, its
                options), by name; with ``k`` and the gap set's :func:`gapset_digest` they are
                recorded, and an unfinished run is continued only with the same
                (:class:`~apollo_restore.data.outputs.LineJob`).

        Raises:
            RequestError: ``E305`` for ``k``.
            FileError: the gap set cannot be read (``E202``–``E204``), or ``out`` cannot be
                written (``E205``–``E207``, a partial file that is a symbolic link), or the
                unfinished file holds ids the gap set has not or has no settings record
                (``E208``), or was made with another gap set or other settings (``E209``), or
                another run is writing ``out`` (``E210``).
            FormatError: a malformed gap-set line, a repeated id, or a gap the request check
                refuses (file and line in the message).
        """
        check_k(k, limits)
        # each gap checked as it is read (file and line in a refusal); the record hashes the gaps as
        # written, then their contexts are cut
        read = read_gapset(gapset, check=lambda gap: check_gap(gap, limits), need_target=False)
        recorded = {"gap set": gapset_digest(read), "k": str(k), **(settings or {})}
        gaps = [cut_context(gap) for gap in read]
        output = LineJob.open(out, {"gap set": gapset}, force, restart, recorded)
        done = output.done(lambda partial: [p.id for p in read_predictions(partial)], [g.id for g in gaps], gapset)
        return cls([gap for gap in gaps if gap.id not in done], len(gaps), k, output)

    def run(
        self, restorer: Restorer | None, progress: bool = True, batch: int = 1, workers: Workers | None = None
    ) -> int:
        """Predict the gaps still to do, ``batch`` at a time (see :func:`predict`), then make the
        output; returns the gaps in the gap set.

        Each batch's predictions are appended to the partial file as soon as the batch is done: a
        failure (or a kill) leaves the predictions made so far there for the next run, and any
        earlier output untouched. With ``workers`` (then ``restorer`` is not used) the batches are
        shared among processes and their predictions appended in gap-set order.

        Raises:
            FileError: ``E205`` a line cannot be written (a full disk): the next run resumes.
        """
        found = _predictions(restorer, self.todo, self.k, progress, batch, workers)  # checked by open()
        try:
            for prediction in found:
                self.output.append(jsonl_line(prediction.to_dict()))
            self.output.finish()
        finally:
            found.close()  # with workers: stops them
            self.output.close()
        return self.total
