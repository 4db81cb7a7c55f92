"""What the restorers derive from their one search-settings object
(:class:`~apollo_restore.schema.search.RestoreConfig`, declared with its bounds in the schema:
``k``, ``pool``, the longest readings, ``hint_slack``, ``beam_width``, ``precision``; a model
folder's ``"search"`` entry sets the last three), and where the embedded default model lives."""

from __future__ import annotations

from pathlib import Path

from apollo_restore.hint import Hint
from apollo_restore.schema.search import RestoreConfig

#: The model folder shipped in the package (the default of every loader).
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "default"

#: Nats the neural beam charges a reading per letter outside the hint (within the slack).
HINT_PENALTY = 3.0

#: The search settings used when a caller gives none.
DEFAULT_RESTORE_CONFIG = RestoreConfig()

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_RESTORE_CONFIG",
    "GPU_BATCH",
    "HINT_PENALTY",
    "RestoreConfig",
    "batch_size",
    "hint_slack",
    "search_chars",
]


def hint_slack(hint: Hint, cfg: RestoreConfig) -> int:
    """Letters searched beyond the hint either side: ``hint_slack``, or none for an exact hint
    under ``exact_length``."""
    return 0 if cfg.exact_length and hint.is_exact else cfg.hint_slack


def search_chars(hint: Hint, cfg: RestoreConfig) -> int:
    """Longest middle a neural search tries (characters, spaces included): ``max_chars`` with no
    hint; else two characters per letter of the hint's budget (:meth:`Hint.letters`) with its
    slack, plus two."""
    if not hint.given:
        return cfg.max_chars
    return max(4, 2 * (hint.letters(cfg.max_chars)[1] + hint_slack(hint, cfg)) + 2)


#: Gaps searched together on a GPU by default (:func:`batch_size`).
GPU_BATCH = 256


def batch_size(batch: int | None, device: str) -> int:
    """Gaps searched together: ``batch``, or by default 1 on the CPU (one gap's rows already fill
    its matrices) and :data:`GPU_BATCH` on a GPU (which one gap's rows leave nearly idle)."""
    return batch or (1 if device == "cpu" else GPU_BATCH)
