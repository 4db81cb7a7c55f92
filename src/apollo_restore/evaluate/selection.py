"""Model selection on what users get: restoration accuracy of the neural member alone on a
fixed validation gap set, scored during training (the ``validate`` callback of
:func:`apollo_restore.train.loop.train`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from apollo_restore.evaluate.gapsets import condition_of, load_gaps
from apollo_restore.evaluate.harness import run
from apollo_restore.evaluate.metrics import score_gap, uniform
from apollo_restore.fim.layout import FimLayout
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.restoration.config import RestoreConfig, batch_size
from apollo_restore.restoration.members.neural import NeuralMember


def restoration_validator(
    gaps_path: str | Path, k: int = 20, batch: int | None = None
) -> Callable[[torch.nn.Module, FimLayout], dict[str, float]]:
    """A callback scoring a model on the gap set at ``gaps_path``, ``batch`` gaps searched
    together (default: 1 on the CPU, 256 on a GPU; the readings do not depend on it).

    The callback returns ``{"score": …, "w_top1_<condition>": …, "w_top20_<condition>": …}``:
    uniform-weighted Top-1/Top-20 (lengths 1–20) per hint condition, and ``score``, their Top-1
    mean over conditions (what chooses the shipped checkpoint).
    """
    gaps = load_gaps(Path(gaps_path))
    tok = CharTokenizer()

    def validate(model: torch.nn.Module, layout: FimLayout) -> dict[str, float]:
        restorer = NeuralMember(model, tok, config=RestoreConfig(k=k), layout=layout)
        # searched together on a GPU (one gap's rows leave it idle: a pass of 200 gaps one at a
        # time took ~100 s on an H100 for the `large` model)
        together = batch_size(batch, next(model.parameters()).device.type)
        by_condition: dict[str, list] = {}
        with torch.no_grad():
            predictions = run(restorer, gaps, k, progress=False, batch=together)  # what `evaluate` runs
        for gap, prediction in zip(gaps, predictions):
            texts = [text for text, _ in prediction.candidates]
            by_condition.setdefault(condition_of(gap), []).append(score_gap(gap.target, texts, k))
        record: dict[str, float] = {}
        for condition, scores in sorted(by_condition.items()):
            summary = uniform(scores)
            record[f"w_top1_{condition}"] = round(summary.top1 or 0.0, 4)
            record[f"w_top20_{condition}"] = round(summary.top20 or 0.0, 4)
        top1 = [v for key, v in record.items() if key.startswith("w_top1_")]
        record["score"] = round(sum(top1) / max(len(top1), 1), 4)
        return record

    return validate
