"""Calibrated probabilities: how often a reading shown at p is the edition's reading.

A filler's own probabilities are normalised over the readings it returns, so they sum to 1
even when none is right. The calibration maps them, per hint condition (exact, range, none),
to probabilities fitted on validation gaps, with room for "none of these":

    z_i = a · log q_i − δ · [reading i makes a word the editions never spell]
    p_i = exp(z_i) / (Σ_j exp(z_j) + exp(b − c · max_j z_j))

``q_i`` is the filler's normalised probability, ``a`` a temperature (``1/T``), ``b`` the
weight of "the right reading is not in the list" when the filler is sure of its best reading
(``max z = 0``), ``c ≥ 0`` how much that weight grows as it is less sure, ``δ`` the demotion of
readings that leave an unknown word (e.g. a truncated word where the gap ends at a word
boundary). The shown probabilities then sum to the chance that the list holds the right reading.

The parameters live in ``calibration.json`` in the model folder, written by
``scripts/fit_calibration.py`` (rerun it whenever the model changes); a folder without one
gives the filler's probabilities unchanged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from apollo_restore.hint import Hint
from apollo_restore.model.verify import read_json
from apollo_restore.restore.types import Candidate

log = logging.getLogger(__name__)
CALIBRATION_FILE = "calibration.json"
FORMAT = "apollo_restore calibration.v1"
CONDITIONS = ("exact", "range", "none")


def fingerprint(folder: str | Path) -> str:
    """Identity of a model folder's scores: SHA-256 (16 hex digits) of its ``apollo_restore.json``
    and the names and sizes of its other files (the calibration itself left out)."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.name != CALIBRATION_FILE and path.is_file():
            digest.update(f"{path.name}:{path.stat().st_size};".encode())
            if path.suffix == ".json":
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def load_for(folder: str | Path) -> Calibration | None:
    """The calibration of a model folder, or ``None`` when it has none or it was fitted on a
    different model (then a warning says to rerun ``scripts/fit_calibration.py``)."""
    path = Path(folder) / CALIBRATION_FILE
    if not path.exists():
        return None
    cal = Calibration.load(path)
    if cal.info.get("model_fingerprint") not in (None, fingerprint(folder)):
        log.warning(
            "%s was fitted on another model: probabilities left uncalibrated; rerun scripts/fit_calibration.py", path
        )
        return None
    return cal


@dataclass(frozen=True)
class Scaling:
    """One condition's parameters: ``a`` (inverse temperature), ``b`` and ``c`` (log-weight of
    "none of these" and its growth with uncertainty)."""

    a: float = 1.0
    b: float = -math.inf
    c: float = 0.0


@dataclass
class Calibration:
    """Per-condition scaling and the unknown-word demotion (see the module docstring).

    Attributes:
        conditions: ``exact``/``range``/``none`` → :class:`Scaling`.
        unknown_word_penalty: ``δ`` (nats).
        info: what it was fitted on and its measured effect (free-form, for reports).
    """

    conditions: dict[str, Scaling]
    unknown_word_penalty: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        """Read ``calibration.json`` (a file, or a model folder holding one).

        Raises:
            ModelFolderError: not a JSON object (``E503``, ``E504``).
            ValueError: not a calibration file of this format.
        """
        path = Path(path)
        path = path / CALIBRATION_FILE if path.is_dir() else path
        data = read_json(path)
        if data.get("format") != FORMAT:
            raise ValueError(f"{path}: not an {FORMAT} file")
        conditions = {name: Scaling(**value) for name, value in data["conditions"].items()}
        return cls(conditions, data.get("unknown_word_penalty", 0.0), data.get("info", {}))

    @property
    def k(self) -> int:
        """Readings per gap the filler returned when the calibration was fitted."""
        return int(self.info.get("k", 20))

    def save(self, path: str | Path) -> None:
        data = {
            "format": FORMAT,
            "conditions": {k: asdict(v) for k, v in self.conditions.items()},
            "unknown_word_penalty": self.unknown_word_penalty,
            "info": self.info,
        }
        Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")

    def apply(self, candidates: list[Candidate], hint: Hint) -> list[Candidate]:
        """Candidates re-ranked by ``z`` with calibrated ``prob`` (``calibrated=True``);
        ``log_score`` and the rest unchanged."""
        if not candidates:
            return []
        scale = self.conditions.get(hint.kind, Scaling())
        q = np.array([max(c.prob, 1e-12) for c in candidates])
        unknown = np.array([bool(c.unknown_words) for c in candidates], dtype=float)
        probs = calibrated(np.log(q)[None], unknown[None], scale.a, scale.b, self.unknown_word_penalty, scale.c)[0]
        order = np.argsort(-probs, kind="stable")
        return [replace(candidates[i], prob=float(probs[i]), calibrated=True) for i in order]


def calibrated(logq: np.ndarray, unknown: np.ndarray, a: float, b: float, penalty: float, c: float = 0.0) -> np.ndarray:
    """``p`` of the module docstring for a batch: ``logq``/``unknown`` are ``(G, K)`` (pad
    missing readings with ``logq = -inf``); returns ``(G, K)``."""
    z = a * logq - penalty * unknown
    zmax = z.max(axis=1, keepdims=True)
    none = b - c * zmax
    top = np.maximum(zmax, none)
    w = np.exp(z - top)
    return w / (w.sum(axis=1, keepdims=True) + np.exp(none - top))


def fit(
    logq: np.ndarray,
    unknown: np.ndarray,
    truth: np.ndarray,
    conditions: Sequence[str],
    penalties: Sequence[float] = (0.0, 0.5, 1.0, 2.0, 4.0),
) -> Calibration:
    """Maximum-likelihood parameters on gaps with known answers, by grid search.

    Args:
        logq, unknown: ``(G, K)`` log normalised probabilities (``-inf`` padding) and
            unknown-word flags of each gap's readings.
        truth: ``(G,)`` index of the right reading, ``-1`` when it is not among them.
        conditions: ``(G,)`` hint condition of each gap.
        penalties: values of ``δ`` tried (shared by all conditions).

    Returns:
        The calibration with the smallest total negative log-likelihood.
    """
    conditions = np.asarray(conditions)
    a_grid = np.round(np.arange(0.1, 3.01, 0.1), 2)
    b_grid = np.arange(-8.0, 6.01, 0.5)
    c_grid = np.arange(0.0, 3.01, 0.25)
    best: tuple[float, Calibration] | None = None
    for penalty in penalties:
        scalings, total = {}, 0.0
        for cond in CONDITIONS:
            rows = conditions == cond
            if not rows.any():
                continue
            nll, a, b, c = min(
                (_nll(logq[rows], unknown[rows], truth[rows], a, b, penalty, c), a, b, c)
                for a in a_grid
                for b in b_grid
                for c in c_grid
            )
            scalings[cond], total = Scaling(float(a), float(b), float(c)), total + nll
        if best is None or total < best[0]:
            best = (total, Calibration(scalings, float(penalty)))
    return best[1]


def _nll(
    logq: np.ndarray, unknown: np.ndarray, truth: np.ndarray, a: float, b: float, penalty: float, c: float
) -> float:
    p = calibrated(logq, unknown, a, b, penalty, c)
    hit = truth >= 0
    right = np.where(hit, p[np.arange(len(truth)), np.maximum(truth, 0)], 1.0 - p.sum(axis=1))
    return float(-np.log(np.clip(right, 1e-12, 1.0)).sum())
