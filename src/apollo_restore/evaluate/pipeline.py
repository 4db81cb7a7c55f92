"""One evaluation run from gaps to report folder: predict, score, peers, bpc, write.

    from apollo_restore.evaluate.pipeline import evaluate_to_folder
    evaluate_to_folder(Path("reports/ddb"), load_restorer(), gaps, k=20)

Writes into ``out``: ``gaps.jsonl`` (the gap set), ``predictions.jsonl`` (ours),
``metrics.json``, ``report.md`` and the per-length PNGs (:mod:`apollo_restore.evaluate.report`).
"""

from __future__ import annotations

import platform
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from apollo_restore.data.formats import GapExample, Prediction, write_gapset, write_predictions
from apollo_restore.evaluate.harness import bpc_by_period, evaluate
from apollo_restore.evaluate.peers import side_by_side
from apollo_restore.evaluate.report import write_report
from apollo_restore.restoration.predict import Workers
from apollo_restore.restoration.restorer import Restorer

GAPS_FILE, PREDICTIONS_FILE = "gaps.jsonl", "predictions.jsonl"


def evaluate_to_folder(
    out: Path, restorer: Restorer | None, gaps: list[GapExample], k: int = 20,
    predictions: list[Prediction] | None = None, peers: dict[str, list[Prediction]] | None = None,
    bpc_table: pa.Table | None = None, bpc_windows: int = 64, bpc_mode: str = "prefix",
    name: str = "apollo", meta: dict[str, Any] | None = None, progress: bool = True, seed: int = 0,
    batch: int = 1, workers: Workers | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Evaluate ``restorer`` (or given ``predictions``) on ``gaps`` and write the report folder.

    Args:
        out: report folder (created).
        restorer: any :class:`~apollo_restore.restoration.restorer.Restorer`; ``None`` with ``predictions``.
        predictions: score these instead of running the restorer.
        peers: other systems' predictions (ids already joined to ``gaps``) for the side-by-side.
        bpc_table: held-out documents for bits per character of the restorer's
            :meth:`~apollo_restore.restoration.restorer.Restorer.language_model` (an ensemble's is its
            neural member's; a restorer with none gets ``bpc_skipped`` in the report's header);
            ``None`` skips it.
        name: our system's name in the side-by-side.
        meta: extra facts for the report header.
        batch: gaps the restorer searches together (:func:`~apollo_restore.restoration.predict.predict`).
        workers: processes that restore the gaps instead of ``restorer`` (which still gives the
            bits per character).

    Returns:
        The metrics written to ``metrics.json``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    write_gapset(out / GAPS_FILE, gaps)
    predictions, metrics = evaluate(restorer, gaps, k, predictions, progress, batch, workers)
    write_predictions(out / PREDICTIONS_FILE, predictions)
    ms = [p.ms for p in predictions if p.ms is not None]
    info: dict[str, Any] = {
        "model": name, **(meta or {}),
        "ms_per_gap": round(sum(ms) / len(ms), 1) if ms else None,
        "machine": f"{platform.machine()} {platform.system()}",
    }  # fmt: skip
    if bpc_table is not None and bpc_windows > 0:
        lm = restorer.language_model() if restorer is not None else None
        if lm is None:
            info["bpc_skipped"] = "no neural language model behind these predictions"
        else:
            metrics["bpc"] = bpc_by_period(lm.model, lm.tokenizer, bpc_table, bpc_windows, seed=seed, mode=bpc_mode)
            info["bpc_mode"] = bpc_mode
    if peers:
        metrics["peers"] = side_by_side(gaps, {name: predictions, **peers}, k)
    info["seconds"] = round(time.perf_counter() - started, 1)
    metrics = {"meta": info, **metrics}
    write_report(out, metrics)
    return metrics


__all__ = ["GAPS_FILE", "PREDICTIONS_FILE", "evaluate_to_folder"]
