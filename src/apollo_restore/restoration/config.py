"""The one search-settings object of the restorers (:class:`RestoreConfig`: ``k``, ``pool``,
the longest readings, ``hint_slack``, ``beam_width``, ``precision``; a model folder's
``"search"`` entry sets the last three) and where the embedded default model lives."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from apollo_restore.errors import RequestError
from apollo_restore.hint import Hint
from apollo_restore.schema.base import SchemaError, check
from apollo_restore.schema.search import SearchSettings

#: The model folder shipped in the package (the default of every loader).
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "default"


@dataclass(frozen=True)
class RestoreConfig:
    """The search settings, shared by every restorer (each member's own config holds only what is
    its own: beam sizes, smoothing).

    Attributes:
        k: candidates per gap (the default of every restorer's ``candidates``): it only cuts the
            ranked pool.
        pool: readings each restorer proposes to a gap's ranked pool, whatever ``k``: the neural
            beam width, and the count each ensemble member adds to the union. Fixed, so that the
            ranking and its probabilities never depend on ``k`` (a larger ``k`` than the pool
            holds gives the whole pool).
        context_chars: characters of prefix and of suffix given to the model, each side
            (the model was trained on windows of about 500 characters in all).
        max_chars: longest middle the neural model searches when there is no hint (characters,
            spaces included).
        max_letters: longest reading the classical and document members search or propose
            when there is no hint (letters).
        exact_length: force candidates to the hinted letter count (only for exact hints);
            for comparisons with systems that need the gap length.
        hint_slack: letters beyond the hint still searched, so a wrong hint is survived.
        beam_width: free rows (middles still being written) the neural beam keeps per step
            (``None``: ``pool``); it still finishes up to ``pool`` readings.
        precision: the neural model's matrix products on a CPU, ``"fp32"`` or ``"int8"`` (int8
            weights with a scale per output row, activations quantised per token:
            :class:`~apollo_restore.model.lean.Int8Weight`); ``None``: the model folder's
            setting, else ``"fp32"``. A GPU always runs the weights as loaded.
    """

    k: int = 20
    pool: int = 20
    context_chars: int = 250
    max_chars: int = 40
    max_letters: int = 25
    exact_length: bool = False
    hint_slack: int = 2
    beam_width: int | None = None
    precision: str | None = None

    def __post_init__(self) -> None:
        """Every setting within its bounds (:class:`~apollo_restore.schema.search.SearchSettings`):
        a beam of a billion rows or a slack of a million letters is refused here, before any search.

        Raises:
            RequestError: ``E310`` naming the setting, what it must be and what it is.
        """
        try:
            check(SearchSettings, asdict(self))
        except SchemaError as err:
            p = err.problem
            raise RequestError("E310", name=f"RestoreConfig.{p.field}", expected=p.expected, value=p.value) from None


#: Nats the neural beam charges a reading per letter outside the hint (within the slack).
HINT_PENALTY = 3.0

#: The search settings used when a caller gives none.
DEFAULT_RESTORE_CONFIG = RestoreConfig()


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
