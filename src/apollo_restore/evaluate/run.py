"""``apollo-restore evaluate`` as a library call: the gap set (read or built), the predictions
scored or a model loaded, the peers, and the report folder written.

    from apollo_restore.evaluate.run import run_evaluation
    from apollo_restore.schema.evaluation import Evaluation
    done = run_evaluation(Evaluation(out=Path("reports/ddb"), gaps=Path("gaps/ddb-test.jsonl")))
    done.metrics["gaps"], done.missing     # gaps scored; ids --predictions had no line for

Everything given is checked before a model loads or a gap is built (``k``, the report folder),
then each file as it is read (the gap set, the peers, the predictions: ``E211``, ``E212``).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from apollo_restore.data.formats import GapExample, Prediction, read_predictions
from apollo_restore.data.table import load_documents
from apollo_restore.errors import FileError
from apollo_restore.evaluate.gapsets import build_from_prepared, load_gaps
from apollo_restore.evaluate.peers import load_peer, read_ithaca_input_ids
from apollo_restore.evaluate.pipeline import evaluate_to_folder
from apollo_restore.evaluate.report import NO_PLOTS, can_plot
from apollo_restore.restoration import load
from apollo_restore.restoration.config import RestoreConfig, batch_size
from apollo_restore.restoration.loading import load_with_threads
from apollo_restore.restoration.request import check_k
from apollo_restore.schema.evaluation import Evaluation
from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS

#: The report's note where bits per character are not measured for want of the ``[train]`` extra
#: (the Hugging Face model runs them); the rest of the report is written.
NO_BPC = "not measured: transformers is not installed (pip install 'apollo-restore[train]')"


@dataclass(frozen=True)
class Evaluated:
    """What an evaluation wrote: ``metrics`` (``metrics.json``), its gap set's size, and the ids
    of the gaps ``--predictions`` had no line for (scored as wrong, with ``allow_missing``)."""

    metrics: dict[str, Any]
    total: int
    missing: list[str]


def run_evaluation(asked: Evaluation, note: Callable[[str], None] = lambda _: None) -> Evaluated:
    """Score ``asked`` and write its report folder (:func:`~apollo_restore.evaluate.pipeline.evaluate_to_folder`).

    Args:
        note: told, before the work starts, what the report leaves out here (bits per
            character without the ``[train]`` extra, plots without matplotlib).

    Raises:
        RequestError: ``E3xx``: ``k`` out of range; FileError: ``E205`` the report folder,
            ``E211``, ``E212`` predictions without their gaps or gaps without their
            predictions, an unreadable file; FormatError: a malformed file;
            FileNotFoundError, ValueError: no prepared corpus, a source without documents, a
            broken model folder (``E5xx``).
    """
    check_k(asked.k, DEFAULT_REQUEST_LIMITS)
    check_report_folder(asked.out)
    gap_set = load_gaps(asked.gaps) if asked.gaps else _build(asked)
    peers = _peers(asked, gap_set)
    ours = read_predictions(asked.predictions) if asked.predictions else None
    check_unknown(gap_set, ours, asked.predictions, asked.gaps)
    missing = missing_predictions(gap_set, ours, asked.predictions, asked.gaps, asked.allow_missing)
    restorer, name, pool = None, "predictions", None
    if not asked.predictions:
        config = RestoreConfig(k=asked.k, context_chars=asked.context_chars, exact_length=asked.exact_length)
        make = partial(load.load_restorer, asked.model, config=config, neural_only=asked.neural_only,
                       device=asked.device)  # fmt: skip
        restorer, pool = load_with_threads(make, asked.threads, asked.workers)
        name = restorer.name
    bpc_table = (
        load_documents(asked.prepared, asked.split, list(asked.sources) or None)
        if asked.prepared and restorer is not None
        else None
    )
    meta = {"gap_set": _gap_set_name(asked), "exact_length": asked.exact_length, "context_chars": asked.context_chars}
    # the package alone (no [train] extra): the report without what needs it, said now and in its header
    if bpc_table is not None and asked.bpc_windows > 0 and importlib.util.find_spec("transformers") is None:
        bpc_table, meta["bpc_skipped"] = None, NO_BPC
        note(f"bits per character {NO_BPC}")
    if not can_plot():
        note(f"plots {NO_PLOTS}")
    if missing:
        meta["MISSING PREDICTIONS"] = f"{len(missing):,} of the {len(gap_set):,} gaps have none: scored as wrong"
    metrics = evaluate_to_folder(
        asked.out, restorer, gap_set, asked.k, ours, peers, bpc_table, asked.bpc_windows, asked.bpc_mode, name,
        meta, seed=asked.seed, batch=batch_size(asked.batch, asked.device), workers=pool,
    )  # fmt: skip
    return Evaluated(metrics, len(gap_set), missing)


def _build(asked: Evaluation) -> list[GapExample]:
    """The gap set ``asked`` builds from its prepared corpus."""
    excluded = ["exact"] if asked.uncertain_excluded and "exact" in asked.conditions else []
    return build_from_prepared(
        asked.prepared, asked.split, list(asked.sources), asked.per_length, list(asked.conditions),
        asked.true_lacunae, asked.seed, asked.context_chars, excluded,
    )  # fmt: skip


def _peers(asked: Evaluation, gap_set: list[GapExample]) -> dict[str, list[Prediction]]:
    """Each peer's predictions, joined to ``gap_set``'s ids."""
    ids = read_ithaca_input_ids(asked.ithaca_ids) if asked.peers and asked.ithaca_ids else None
    return {name: load_peer(path, gap_set, ids) for name, path in asked.peers.items()}


def _gap_set_name(asked: Evaluation) -> str:
    """The gap set as the report's header names it: its file, or how it was built."""
    if asked.gaps:
        return str(asked.gaps)
    return f"{asked.prepared} {asked.split} {','.join(asked.sources)} per-length {asked.per_length} seed {asked.seed}"


def check_report_folder(out: Path) -> None:
    """``out`` names a folder that is there or can be made: not a file, nor inside one, its
    nearest existing folder writable.

    Raises:
        FileError: ``E205`` naming the path.
    """
    if out.exists() and not out.is_dir():
        raise FileError("E205", str(out), reason="it is a file; --out names the report folder to write")
    there = next((p for p in (out, *out.parents) if p.exists()), Path("."))
    if not there.is_dir():
        raise FileError("E205", str(out), reason=f"{there} is a file, not a folder")
    if there != out and not os.access(there, os.W_OK | os.X_OK):
        raise FileError("E205", str(out), reason=f"the folder {there} is not writable")


def check_unknown(gap_set, ours, predictions: Path | None, gaps: Path | None) -> None:
    """Refuse a ``--predictions`` file with lines for ids that are no gap of ``gap_set``: scored
    against nothing, and their milliseconds folded into the report's time a gap.

    Raises:
        FileError: ``E212`` naming how many such ids and the first.
    """
    if ours is None:
        return
    ids = {gap.id for gap in gap_set}
    unknown = [p.id for p in ours if p.id not in ids]
    if unknown:
        where = str(gaps) if gaps else "the gap set built"
        raise FileError("E212", str(predictions), unknown=len(unknown), gapset=where, first=unknown[0])


def missing_predictions(gap_set, ours, predictions: Path | None, gaps: Path | None, allow_missing: bool) -> list[str]:
    """The ids of the gaps ``ours`` (the ``--predictions`` read) has no prediction for.

    Raises:
        FileError: ``E211`` some are missing and ``allow_missing`` is not given.
    """
    if ours is None:
        return []
    have = {p.id for p in ours}
    missing = [gap.id for gap in gap_set if gap.id not in have]
    if missing and not allow_missing:
        where = str(gaps) if gaps else "the gap set built"
        raise FileError("E211", str(predictions), missing=len(missing), total=len(gap_set), gapset=where,
                        first=missing[0])  # fmt: skip
    return missing


__all__ = ["NO_BPC", "Evaluated", "Evaluation", "check_report_folder", "run_evaluation"]
