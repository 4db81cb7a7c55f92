"""Run a gap set through a restorer and write predictions (the interchange format)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from tqdm.auto import tqdm

from apollo_restore.data.formats import GapExample, Prediction, read_gapset, write_predictions
from apollo_restore.restore.filler import GapFiller, candidates_many
from apollo_restore.restore.request import DEFAULT_REQUEST_LIMITS, RequestLimits, check_hint, check_k


def predict(
    filler: GapFiller,
    gaps: Iterable[GapExample],
    k: int = 20,
    progress: bool = True,
    limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
    batch: int = 1,
) -> Iterator[Prediction]:
    """Predictions for each gap, in order, with the milliseconds each took.

    ``batch`` gaps are restored at a time, searched together where the filler can
    (:func:`~apollo_restore.restore.filler.candidates_many`; on a GPU, many gaps fill one batch);
    each gets the candidates it would get alone, and the batch's time shared evenly.

    Raises:
        RequestError: ``k`` or a gap's hint beyond ``limits`` (checked for every gap before
            any search, so that a bad line fails at once).
    """
    check_k(k, limits)
    gaps = list(gaps)
    for gap in gaps:
        check_hint(gap.hint, gap.id, limits)
    with tqdm(total=len(gaps), desc="predict", unit="gap", disable=not progress) as bar:
        for start in range(0, len(gaps), batch):
            chunk = gaps[start : start + batch]
            started = time.perf_counter()
            found = candidates_many(filler, [(gap.prefix, gap.suffix, gap.hint) for gap in chunk], k)
            ms = round((time.perf_counter() - started) * 1000 / len(chunk), 1)
            for gap, cands in zip(chunk, found):
                yield Prediction(gap.id, [(c.text, round(c.prob, 6)) for c in cands], ms)
            bar.update(len(chunk))


def predict_file(filler: GapFiller, gapset: Path, out: Path, k: int = 20, progress: bool = True, batch: int = 1) -> int:
    """Read a gap-set JSONL, write a predictions JSONL; returns the number of gaps."""
    return write_predictions(out, predict(filler, read_gapset(gapset), k, progress, batch=batch))
