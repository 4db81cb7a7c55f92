"""Run a gap set through a restorer and write predictions (the interchange format)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from tqdm.auto import tqdm

from apollo_restore.data.formats import GapExample, Prediction, read_gapset, write_predictions
from apollo_restore.restore.filler import GapFiller
from apollo_restore.restore.request import DEFAULT_REQUEST_LIMITS, RequestLimits, check_hint, check_k


def predict(
    filler: GapFiller,
    gaps: Iterable[GapExample],
    k: int = 20,
    progress: bool = True,
    limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
) -> Iterator[Prediction]:
    """Predictions for each gap, in order, with the milliseconds each took.

    Raises:
        RequestError: ``k`` or a gap's hint beyond ``limits`` (checked for every gap before
            any search, so that a bad line fails at once).
    """
    check_k(k, limits)
    gaps = list(gaps)
    for gap in gaps:
        check_hint(gap.hint, gap.id, limits)
    for gap in tqdm(gaps, desc="predict", unit="gap", disable=not progress):
        started = time.perf_counter()
        cands = filler.candidates(gap.prefix, gap.suffix, gap.hint, k)
        ms = round((time.perf_counter() - started) * 1000, 1)
        yield Prediction(gap.id, [(c.text, round(c.prob, 6)) for c in cands], ms)


def predict_file(filler: GapFiller, gapset: Path, out: Path, k: int = 20, progress: bool = True) -> int:
    """Read a gap-set JSONL, write a predictions JSONL; returns the number of gaps."""
    return write_predictions(out, predict(filler, read_gapset(gapset), k, progress))
