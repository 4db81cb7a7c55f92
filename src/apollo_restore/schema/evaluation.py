"""What one evaluation asks (the options of ``apollo-restore evaluate``, parsed), declared once
with its types and bounds and checked when made.

    from apollo_restore.schema.evaluation import Evaluation
    asked = Evaluation(out=Path("reports/ddb"), gaps=Path("gaps/ddb-test.jsonl"))
    run_evaluation(asked)                     # apollo_restore.evaluate.run

What only the layers above know is checked by :func:`~apollo_restore.evaluate.run.run_evaluation`
before any work, with its numbered error (``k`` against the request limits: ``E3xx``; the report
folder: ``E205``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from apollo_restore.schema.base import Settings, text, whole
from apollo_restore.schema.search import RestoreConfig

#: The hint conditions a gap is asked under (:mod:`apollo_restore.evaluate.gapsets`).
CONDITIONS = ("exact", "range", "wrong10", "wrong50", "wrong100", "none")
_SEARCH = RestoreConfig()  # the search's defaults
#: Most gaps (or windows) one option may ask per source, length or period.
MAX_GAPS = 1_000_000


class Evaluation(Settings):
    """What one evaluation asks (the options of ``apollo-restore evaluate``, parsed).

    Attributes:
        out: the report folder to write.
        gaps: a gap-set file (ours or Cullhed chat JSONL); ``None``: built from ``prepared``.
        prepared: a prepared corpus: the gaps are built from it (without ``gaps``), bits per
            character measured on it (with a model).
        split, sources, per_length, conditions, true_lacunae, seed, context_chars,
            uncertain_excluded: how the gaps are built (:func:`~apollo_restore.evaluate.gapsets.build_from_prepared`;
            ``context_chars`` is also the restorer's context, in characters a side).
        model: the model folder (``None``: the embedded model).
        k: candidates a gap (checked against the request limits when the evaluation runs).
        predictions: our predictions to score instead of running a model.
        peers: other systems' prediction files by name; ``ithaca_ids``: the gap id of each line
            of an Ithaca file (the input file we exported).
        bpc_windows: held-out windows a source and period for bits per character (0: none);
            ``bpc_mode``: ``"prefix"`` or ``"middle"``.
        threads, device, batch, neural_only, workers: how the model runs
            (:func:`~apollo_restore.restoration.loading.load_with_threads`).
        allow_missing: score the gaps ``predictions`` has no line for as wrong instead of
            refusing them (``E211``).
    """

    out: Path
    gaps: Path | None = None
    prepared: Path | None = None
    split: text(100, "a split: validation or test") = "test"
    sources: tuple[str, ...] = ()
    per_length: whole(0, MAX_GAPS, "synthetic gaps per letter count") = 50
    conditions: tuple[Literal[CONDITIONS], ...] = CONDITIONS
    true_lacunae: whole(0, MAX_GAPS, "silver gaps per source") = 0
    seed: whole(0, 2**32 - 1, "the seed") = 0
    context_chars: whole(1, 100_000, "characters of context each side") = _SEARCH.context_chars
    uncertain_excluded: bool = True
    model: Path | None = None
    k: int = _SEARCH.k
    exact_length: bool = _SEARCH.exact_length
    predictions: Path | None = None
    peers: dict[str, Path] = Field(default_factory=dict)
    ithaca_ids: Path | None = None
    bpc_windows: whole(0, MAX_GAPS, "held-out windows a source and period") = 64
    bpc_mode: Literal["prefix", "middle"] = "prefix"
    threads: whole(0, 1024, "torch threads") | None = None
    device: text(20, "a device: cpu, cuda, auto") = "cpu"
    batch: whole(1, MAX_GAPS, "gaps a batch") | None = None
    neural_only: bool = False
    workers: whole(1, 1024, "worker processes") = 1
    allow_missing: bool = False
