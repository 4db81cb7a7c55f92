"""A log-linear ensemble of gap fillers (e.g. the neural FIM model and the n-gram model).

Each member proposes candidates; the union (merged by :func:`match_key`) is re-scored by every
member, and readings are ranked by ``Σ wᵢ · log pᵢ(reading)``. The weights are chosen on the
validation split (``benchmarks/ensemble_weights.py``), never on test gaps.

    from apollo_restore.restore.ensemble import Ensemble
    ens = Ensemble([(neural, 1.0), (ngram, 0.6)])
    ens.candidates(prefix, suffix, hint=7)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from apollo_restore.data.document import Document
from apollo_restore.fim.examples import Hint, letter_count
from apollo_restore.restore.common import (
    DEFAULT_MODEL,
    DEFAULT_RESTORE_CONFIG,
    RestoreConfig,
    match_key,
    restore_text,
    to_candidates,
)
from apollo_restore.restore.types import Candidate, Restoration

if TYPE_CHECKING:
    from apollo_restore.restore.engine import Restorer
    from apollo_restore.restore.present import Presented

META_FILE = "apollo_restore.json"  # = model.checkpoint.META_FILE, without importing torch


class ScoringFiller(Protocol):
    """A gap filler that can also score given readings (log-probabilities, nats)."""

    def candidates(self, prefix: str, suffix: str, hint: Hint = None, k: int | None = None) -> list[Candidate]: ...

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]: ...


class LengthPrior:
    """A soft length hint as an ensemble member: each reading scores minus the number of
    letters by which it misses the hinted count or range (0 with no hint). It proposes no
    candidates; its weight in the ensemble sets how firmly hints are followed."""

    name = "length-prior"

    def candidates(self, prefix: str, suffix: str, hint: Hint = None, k: int | None = None) -> list[Candidate]:
        return []

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        if hint is None:
            return [0.0] * len(readings)
        lo, hi = hint if isinstance(hint, tuple) else (hint, hint)
        return [-float(max(lo - n, n - hi, 0)) for n in map(letter_count, readings)]


def widen(hint: Hint, slack: int) -> Hint:
    """The hint with ``slack`` letters of room either side (``None`` stays ``None``)."""
    if hint is None or slack <= 0:
        return hint
    lo, hi = hint if isinstance(hint, tuple) else (hint, hint)
    return (max(1, lo - slack), hi + slack)


class Ensemble:
    """Weighted product of experts over gap fillers.

    Args:
        members: ``(filler, weight)`` pairs; weights multiply each member's log-score.
        name: shown in results.
        config: ``k`` (candidates returned) is read from here.
        neural: the folder's neural model, for reports, whether or not it is a member; or a
            function that loads it when first asked (a member weighted 0 is never loaded
            for restoring, which spares importing torch).
        hint_slack: members search ``slack`` letters beyond the hint either side; the
            :class:`LengthPrior` member then decides how firmly the hint holds.
    """

    def __init__(
        self,
        members: list[tuple[ScoringFiller, float]],
        name: str = "ensemble",
        config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
        neural: Restorer | Callable[[], Restorer] | None = None,
        hint_slack: int = 0,
    ):
        if not members:
            raise ValueError("an ensemble needs at least one member")
        self.members, self.name, self.config, self.hint_slack = members, name, config, hint_slack
        self._neural = neural

    @property
    def neural(self) -> Restorer | None:
        """The neural language model of the model folder (bits-per-character reports use it),
        whether or not it is a member; loaded on first use."""
        if callable(self._neural):
            self._neural = self._neural()
        return self._neural

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """``Σ wᵢ · log pᵢ(reading) / Σ wᵢ`` for each reading (the language models' weights in
        the denominator): the weighted mean, on the scale of one model's log-probability, and
        the ``log_score`` of :meth:`candidates`."""
        totals = [0.0] * len(readings)
        for filler, weight in self.members:
            for i, score in enumerate(filler.score_readings(prefix, suffix, hint, readings)):
                totals[i] += weight * score
        scale = sum(w for filler, w in self.members if not isinstance(filler, LengthPrior)) or 1.0
        return [t / scale for t in totals]

    def candidates(self, prefix: str, suffix: str, hint: Hint = None, k: int | None = None) -> list[Candidate]:
        """The union of the members' candidates, re-ranked by the weighted score.

        Probabilities are normalised over the returned list; ``log_score`` is the weighted
        mean ``Σ wᵢ log pᵢ / Σ wᵢ`` (language models' weights in the denominator).
        """
        k = k or self.config.k
        pool: dict[str, str] = {}
        search_hint = widen(hint, self.hint_slack)  # so that a wrong hint can be survived
        for filler, _ in self.members:
            for cand in filler.candidates(prefix, suffix, search_hint, k):
                pool.setdefault(match_key(cand.text), cand.text)
        readings = list(pool.values())
        # weighted mean rather than sum: the same ranking, and the probabilities of a geometric
        # mean rather than of a product, which would be overconfident
        scored = sorted(zip(readings, self.score_readings(prefix, suffix, hint, readings)), key=lambda item: -item[1])
        return to_candidates(scored[:k])

    def restore(
        self,
        text: str | Document,
        hints: dict[int, Hint] | None = None,
        pins: dict[int, str] | None = None,
        k: int | None = None,
    ) -> Restoration:
        """Every lacuna of a Leiden text, left to right (see :func:`restore_text`)."""
        return restore_text(self, text, hints, pins, self.config.k if k is None else k, self.name)


def load_filler(
    folder: str | Path | None = None,
    config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
    use_ngram: bool = True,
    threads: int | None = None,
    present: bool = True,
) -> Presented | Restorer | Ensemble:
    """The restorer a model folder describes (default: the embedded model).

    With ``present`` (the default) it is wrapped in :class:`Presented`: readings carry their
    edition form (the package's form table) and, when the folder has a ``calibration.json``
    fitted on this very model, calibrated probabilities; ``present=False`` gives the bare
    filler (for fitting).

    A folder whose ``apollo_restore.json`` has an ``ensemble`` entry, e.g.
    ``{"ngram": "ngram.npz", "backward": "ngram-backward.npz", "weights": {"neural": 0.5,
    "ngram": 1.0, "backward": 1.0, "length": 2.0}}``, gives an :class:`Ensemble` of its neural
    model, those n-gram files (forward and, optionally, right-to-left) and a
    :class:`LengthPrior`; any other folder (or ``use_ngram=False``) gives the plain neural
    :class:`Restorer`.

    Bare, a folder whose ``apollo_restore.json`` has an ``ensemble`` entry gives an :class:`Ensemble`
    of its neural model, classical members and a :class:`LengthPrior`; the classical members are
    either the unbounded-order models on the packaged text index (``"infini": {model options}``,
    weights ``infini`` and ``infini_backward``), e.g. ``{"infini": {"discount": 0.6},
    "weights": {"neural": 0.0, "infini": 1.0, "infini_backward": 1.0, "length": 4.0}}``, or
    n-gram files in the folder (``"ngram": "ngram.npz", "backward": "ngram-backward.npz"``,
    weights ``ngram`` and ``backward``). Any other folder (or ``use_ngram=False``) gives the
    plain neural :class:`Restorer`. A member weighted 0 is left out (its search would change
    no ranking).
    """
    path = Path(folder) if folder else DEFAULT_MODEL
    filler = _load_bare(path, config, use_ngram, threads)
    if not present:
        return filler
    from apollo_restore.data.orthography import default_forms
    from apollo_restore.restore.calibration import load_for
    from apollo_restore.restore.present import Presented

    return Presented(filler, default_forms(), load_for(path))


def _load_bare(path: Path, config: RestoreConfig, use_ngram: bool, threads: int | None) -> Restorer | Ensemble:
    """The folder's filler without presentation (see :func:`load_filler`)."""

    def load_neural() -> Restorer:
        from apollo_restore.restore.engine import Restorer  # torch: only when the neural model is needed

        return Restorer.load(path, config=config, threads=threads)

    meta_file = path / META_FILE
    spec = json.loads(meta_file.read_text()).get("ensemble") if meta_file.exists() else None
    if not (use_ngram and spec):
        return load_neural()
    weights = spec["weights"]
    neural = load_neural() if weights["neural"] > 0 else load_neural
    members: list[tuple[ScoringFiller, float]] = [(neural, weights["neural"])]
    if "infini" in spec:
        from apollo_restore.ngram.infini_fill import load_infini

        for direction, name in (("forward", "infini"), ("backward", "infini_backward")):
            if weights.get(name, 0.0) > 0:
                members.append((load_infini(direction, **spec["infini"]), weights[name]))
    elif (path / spec["ngram"]).exists():
        from apollo_restore.ngram.fill import load_ngram

        members.append((load_ngram(path / spec["ngram"]), weights["ngram"]))
        if spec.get("backward"):
            members.append((load_ngram(path / spec["backward"]), weights["backward"]))
    else:
        return load_neural()
    members.append((LengthPrior(), weights.get("length", 0.0)))
    members = [(filler, w) for filler, w in members if w > 0]
    label = "+".join(name for name, w in weights.items() if w > 0)
    return Ensemble(
        members, name=f"{path.name} ({label})", config=config, neural=neural, hint_slack=spec.get("hint_slack", 0)
    )
