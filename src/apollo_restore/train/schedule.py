"""Learning-rate schedule: linear warmup, then cosine decay to a floor."""

from __future__ import annotations

import math


def lr_at(step: int, peak: float, floor: float, warmup: int, total: int) -> float:
    """Learning rate for optimiser step ``step`` (0-based).

    Linear from ``peak/warmup`` to ``peak`` over ``warmup`` steps, then cosine from ``peak``
    to ``floor`` at ``total``; ``floor`` after that.
    """
    if step < warmup:
        return peak * (step + 1) / warmup
    if step >= total:
        return floor
    progress = (step - warmup) / max(1, total - warmup)
    return floor + 0.5 * (peak - floor) * (1 + math.cos(math.pi * progress))
