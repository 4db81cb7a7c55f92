"""Stage 4 of the ranking (:mod:`apollo_restore.restoration.ranking`): calibrated probabilities,
how often a reading shown at p is the edition's reading.

A restorer's own probabilities are normalised over its ranked pool, so they sum to 1 even when
no reading is right. The calibration maps them, per hint condition (exact, range, none), to
probabilities fitted on validation gaps, with room for "none of these":

    z_i    = a · exp(g · log n + h · min(m, 10)) · log q_i − δ · [reading i makes a word the editions never spell]
                                                        − μ · [reading i misses the count given]
    none   = b − c · max_j z_j + d · log n + e · m + f · s
    p_i    = exp(z_i) / (Σ_j exp(z_j) + exp(none))

``q_i`` is the reading's probability after the demotions (stage 3: normalised over the restorer's
whole pool, which does not depend on ``k``, so neither does any ``p_i``), ``a`` a temperature
(``1/T``), ``b`` the log-weight of "the right reading is not in the list" when the restorer is sure
of its best reading (``max z = 0``) for a one-letter gap, ``c`` how much that weight grows as the
restorer is less sure, and ``d``, ``e``, ``f`` how it moves with three things the restorer knows of
the gap: the log of its letters ``n`` (the best reading's letters held within the hint: an exact
count itself, :func:`gap_letters`), the margin ``m = log q_(1) − log q_(2)`` (nats) by which the
best reading stands above the runner-up, and ``s``, the restorer's own log-score of its best
reading (nats, ≤ 0: how probable it is in absolute terms, where ``q`` only says how much more
than the others; a formula the model knows by heart scores near 0). ``g`` and ``h`` let the
temperature itself move with the gap's letters and the margin (capped at :data:`MARGIN_CAP`
nats: beyond it a runner-up is out of sight): on real lacunae a short gap's readings were
surer, and a long gap's less sure, than one temperature makes them (issue 45). The best reading is the one
of highest ``q`` (:class:`~apollo_restore.restoration.ranking.order.Ranking` names it). ``δ`` is the
demotion of readings that leave an unknown word (e.g. a truncated word where the gap ends at a
word boundary). The shown probabilities then sum to the chance that the list holds the right
reading. ``b`` is not bounded: a sure restorer on a short gap can be shown near 100 %.

This module applies a calibration with NumPy alone, computes numbers and never orders readings:
the ranking sorts once, by ``p``. Each condition's parameters are
:class:`~apollo_restore.schema.folder.Scaling` (declared once, with their bounds, where
``calibration.json`` is); the fit (torch, L-BFGS) is :mod:`apollo_restore.tune.calibration`'s.

Real lacunae and synthetic gaps each have their own parameters (``a`` to ``h`` per hint condition;
``δ`` is shared): a restorer is surer, and more often right, on the letters an editor supplied than
on letters cut out of text the editor read, so one fit cannot hold for both (issue 45,
``benchmarks/real_lacunae_calibration.py``). Every text restored through the CLI, the API or the
web page has real lacunae (``kind="real"``, the default); a gap set's gaps say which they are
(``kind`` "true": real, "synthetic": synthetic; :func:`gap_kind`).

The parameters live in ``calibration.json`` in the model folder, written by
``apollo-restore tune --what calibration`` (rerun it whenever the model changes); a folder without one
gives the restorer's probabilities unchanged.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from apollo_restore.data.normalise import letter_count
from apollo_restore.data.outputs import write_atomic
from apollo_restore.errors import ModelFolderError
from apollo_restore.hint import Hint
from apollo_restore.model.folder import fingerprint_parts
from apollo_restore.model.verify import read_json
from apollo_restore.schema.base import SchemaError, check, folder_error
from apollo_restore.schema.folder import (
    BACKWARD,
    CALIBRATION_FORMAT,
    CONDITIONS,
    GAP_KINDS,
    TEXT_KINDS,
    CalibrationFile,
    Scaling,
)
from apollo_restore.schema.restoration import Candidate

CALIBRATION_FILE = "calibration.json"
FORMAT = CALIBRATION_FORMAT
#: The format before real lacunae had their own fit (refused with ``E530``: fit it again).
OLD_FORMAT = "apollo_restore calibration.v1"
#: Largest margin (nats) the temperature reads: a runner-up e^10 ≈ 22,000 times less probable.
MARGIN_CAP = 10.0
#: Smallest probability a reading is taken to have (its log is finite).
FLOOR = 1e-12


@dataclass(frozen=True)
class Scoring:
    """What produces the scores a calibration maps, as recorded in its ``info`` and compared at
    every load: a calibration fitted for other scores is not applied.

    Attributes:
        fingerprint: the model folder's (:func:`~apollo_restore.model.folder.fingerprint`).
        members: the members that score, by label, joined with ``+`` (``neural+infini+length``;
            ``neural`` for the neural model alone).
        precision: the neural model's arithmetic: ``"fp32"``, ``"int8"`` (on the CPU) or ``"gpu"``
            (the weights as loaded on a GPU).
    """

    fingerprint: str
    members: str
    precision: str

    def record(self) -> dict[str, str]:
        """What each kind's ``fitted_for`` records of these scores
        (:class:`~apollo_restore.schema.folder.FittedOn`)."""
        return {"model_fingerprint": self.fingerprint, "members": self.members, "precision": self.precision}

    def info(self, folder: str | Path) -> dict[str, Any]:
        """The fields a calibration's ``info`` records of these scores (and the folder's parts)."""
        return {
            "model_fingerprint": self.fingerprint,
            "model_fingerprint_parts": fingerprint_parts(folder),
            "members": self.members,
            "precision": self.precision,
        }


def mismatch(cal: Calibration, folder: str | Path, scoring: Scoring) -> str | None:
    """Why ``cal`` (the folder's ``calibration.json``) does not describe ``scoring``'s scores, in
    words, or ``None`` when it does: a hint condition it lacks, no record of what it was fitted
    on, another folder (naming the parts that changed), other members, another precision."""
    for kind in GAP_KINDS:
        lacking = [cond for cond in CONDITIONS if cond not in cal.for_kind(kind)]
        if lacking:
            return f"it has no parameters for the hint condition(s) {', '.join(lacking)} of {kind} gaps"
    for text, block in cal.texts.items():
        lacking = [cond for cond in CONDITIONS if cond not in block]
        if lacking:
            return f"it has no parameters for the hint condition(s) {', '.join(lacking)} of {text} texts"
    info = cal.info
    recorded = info.get("model_fingerprint")
    if recorded is None:
        return "it records no model fingerprint (what it was fitted on is unknown)"
    if recorded != scoring.fingerprint:
        changed = _changed(info.get("model_fingerprint_parts"), fingerprint_parts(folder))
        return f"it was fitted on a model folder whose {changed} differ from {folder}'s now"
    if _spelled(info.get("members")) != scoring.members:
        fitted = info.get("members") or "unrecorded members"
        return f"it was fitted on the scores of {fitted}, these are {scoring.members}'s"
    if info.get("precision") != scoring.precision:
        return f"it was fitted on {info.get('precision') or 'unrecorded'} scores, these are {scoring.precision}"
    for kind in (*GAP_KINDS, *cal.texts):  # each kind's parameters on their own: a copied block is not applied
        fitted = cal.fitted.get(kind)
        if fitted is None:
            return f"its {kind} parameters record no fitted_for (what they were fitted on is unknown)"
        differ = [
            f"{key} {fitted.get(key)!r}" for key, now in scoring.record().items() if _spelled(fitted.get(key)) != now
        ]
        if differ:
            return f"its {kind} parameters were fitted on other scores ({', '.join(differ)}; these: {scoring.record()})"
    return None


def _spelled(recorded: Any) -> Any:
    """A recorded members' label as folders spell it now: ``infini_backward`` (the member's run
    name was once ``infini-backward``: a calibration fitted then still reads)."""
    return (
        recorded.replace(f"infini-{BACKWARD.lstrip('_')}", f"infini{BACKWARD}")
        if isinstance(recorded, str)
        else recorded
    )


def _changed(was: Any, now: dict[str, str]) -> str:
    """The parts of a model folder that differ from a recorded :func:`fingerprint_parts` (all
    four named when none was recorded)."""
    if isinstance(was, dict):
        differ = [part for part in now if was.get(part) != now[part]]
        if differ:
            return " and ".join(differ)
    return "weights, config, tokenizer or scoring settings"


def gap_kind(kind: str) -> str:
    """The calibration's kind (:data:`~apollo_restore.schema.folder.GAP_KINDS`) of a gap set's gap
    ``kind``: ``"synthetic"`` for a synthetic gap, ``"real"`` for any other (``"true"``, a lacuna)."""
    return "synthetic" if kind == "synthetic" else "real"


@dataclass
class Calibration:
    """Per-condition scaling of each kind of gap and the unknown-word demotion (see the module docstring).

    Attributes:
        conditions: ``exact``/``range``/``none`` → :class:`Scaling` of real lacunae (every restore).
        unknown_word_penalty: ``δ`` (nats).
        info: what it was fitted on and its measured effect (free-form, for reports).
        synthetic: the same of synthetic gaps; ``None``: ``conditions`` serve them too.
        fitted: kind → what its parameters were fitted on (``model_fingerprint``, ``members``,
            ``precision``: each kind's ``fitted_for``); a kind missing here is saved with
            ``info``'s record of them.
        texts: ``literary``/``inscription`` → the conditions' scaling of real lacunae of texts of
            that kind, where fitted on their own (a kind absent: ``conditions`` serve it).
        miss_penalty: ``μ`` (nats): ``z`` of a reading whose letters miss the count given (its note
            says so: ``5 letters, hint 6``) is lowered by it, fitted on validation.
    """

    conditions: dict[str, Scaling]
    unknown_word_penalty: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    synthetic: dict[str, Scaling] | None = None
    fitted: dict[str, dict[str, str]] = field(default_factory=dict)
    texts: dict[str, dict[str, Scaling]] = field(default_factory=dict)
    miss_penalty: float = 0.0

    def for_kind(self, kind: str, text: str = "documentary") -> dict[str, Scaling]:
        """The conditions' scaling of gaps of ``kind`` (``"real"`` or ``"synthetic"``) of a text of
        kind ``text`` (:data:`~apollo_restore.schema.folder.TEXT_KINDS`; only real lacunae have
        parameters by kind of text)."""
        if kind == "synthetic":
            return self.synthetic if self.synthetic is not None else self.conditions
        return self.texts.get(text, self.conditions)

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        """Read ``calibration.json`` (a file, or a model folder holding one), as the schema
        declares it (:class:`~apollo_restore.schema.folder.CalibrationFile`).

        Raises:
            ModelFolderError: not a JSON object (``E503``, ``E504``, ``E517``), or a field the
                schema refuses (``E505`` naming it: the format, kinds ``real`` and ``synthetic``,
                each of conditions ``exact``, ``range``, ``none`` of parameters ``a``–``h`` within
                their bounds, the penalty; ``E522`` a key it does not declare); ``E530`` a file of
                the format before ``calibration.v2`` (one fit of synthetic gaps: fit it again).
        """
        path = Path(path)
        path = path / CALIBRATION_FILE if path.name != CALIBRATION_FILE and path.is_dir() else path
        data = read_json(path)
        if data.get("format") == OLD_FORMAT:
            raise ModelFolderError("E530", path, found=OLD_FORMAT, expected=FORMAT)
        try:
            declared = check(CalibrationFile, data)
        except SchemaError as err:
            raise folder_error(path, err) from None
        kinds = {
            kind: {name: getattr(conditions, name) for name in CONDITIONS if getattr(conditions, name) is not None}
            for kind, conditions in declared.kinds
            if conditions is not None
        }
        texts = {kind: scaling for kind, scaling in kinds.items() if kind in TEXT_KINDS}
        fitted = {kind: c.fitted_for.model_dump() for kind, c in declared.kinds if c and c.fitted_for is not None}
        info = declared.info.model_dump(exclude_none=True) | dict(declared.info.model_extra or {})
        return cls(
            kinds["real"], declared.unknown_word_penalty, info, kinds["synthetic"], fitted, texts, declared.miss_penalty
        )

    def to_json(self) -> bytes:
        """The file :meth:`save` writes, once the schema reads it back as :meth:`load` does.

        Raises:
            SchemaError: a value the schema would refuse at load (the file is then not written).
        """
        recorded = {key: self.info[key] for key in ("model_fingerprint", "members", "precision") if key in self.info}
        kinds = {}
        blocks = {"real": self.conditions, "synthetic": self.for_kind("synthetic")} | self.texts
        for kind, block in blocks.items():
            kinds[kind] = {c: v.model_dump() for c, v in block.items()}
            fitted = self.fitted.get(kind) or (recorded if len(recorded) == 3 else None)
            if fitted is not None:
                kinds[kind]["fitted_for"] = fitted
        data = {"format": FORMAT, "kinds": kinds, "unknown_word_penalty": self.unknown_word_penalty}
        if self.miss_penalty:
            data["miss_penalty"] = self.miss_penalty
        data["info"] = self.info
        raw = (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode()
        check(CalibrationFile, json.loads(raw))
        return raw

    def save(self, path: str | Path) -> None:
        """Write ``calibration.json`` whole (atomically), only once it would load.

        Raises:
            ModelFolderError: ``E505``/``E522`` what the schema would refuse (nothing written).
        """
        try:
            raw = self.to_json()
        except SchemaError as err:
            raise folder_error(path, err) from None
        write_atomic(Path(path), raw)

    def probabilities(
        self,
        q: list[float],
        unknown: list[bool],
        best: Candidate,
        hint: Hint,
        kind: str = "real",
        text: str = "documentary",
        misses: list[bool] | None = None,
    ) -> list[float] | None:
        """``p`` of each reading (in the order given) whose probability after the demotions is
        ``q``, which leaves an unknown word where ``unknown`` and misses the count given where
        ``misses``; ``best`` is the reading of highest ``q`` (``n`` and ``s`` of the module
        docstring are read from it), the gap of ``kind`` (``"real"``: a lacuna, ``"synthetic"``)
        in a text of kind ``text``. ``None`` under a hint condition it has no parameters for (a
        folder's calibration lacking one is not loaded at all: :func:`mismatch`)."""
        s = self.for_kind(kind, text).get(hint.kind)
        if not q or s is None:  # a condition not fitted: left uncalibrated (calibrated=False)
            return None
        logq = np.log(np.maximum(np.array(q, dtype=float), FLOOR))
        flags = np.array(unknown, dtype=float)
        missed = np.array(misses if misses is not None else [False] * len(q), dtype=float)
        n = np.array([gap_letters(best.text, hint)])
        top_score = np.array([best.log_score])
        return calibrated(
            logq[None], flags[None], n, top_score, s, self.unknown_word_penalty, missed[None], self.miss_penalty
        )[0].tolist()


def gap_letters(best: str, hint: Hint) -> int:
    """``n`` of the module docstring: the letters of the restorer's best reading ``best`` held
    within the hint's range (an exact hint: its count; no hint: the reading's; at least 1).

    Not the range's middle: a one-letter reading under ``1–7`` was then taken for a four-letter
    gap, and on real lacunae the same reading came out less probable with the range than with
    no count at all (validation, ``benchmarks/real_lacunae_calibration.py``)."""
    n = letter_count(best)
    return max(1, min(max(n, hint.lo), hint.hi) if hint.given else n)


def calibrated(
    logq: np.ndarray,
    unknown: np.ndarray,
    letters: np.ndarray,
    top_score: np.ndarray,
    s: Scaling,
    penalty: float,
    misses: np.ndarray | None = None,
    miss_penalty: float = 0.0,
) -> np.ndarray:
    """``p`` of the module docstring for a batch: ``logq``/``unknown``/``misses`` are ``(G, K)``, in
    any order (pad missing readings with ``logq = -inf``), ``letters`` (``n``) and ``top_score``
    (``s``, nats) ``(G,)``; returns ``(G, K)`` in the same order."""
    x = features(logq, letters, top_score)
    params = np.array([s.a, s.b, s.c, s.d, s.e, s.f, s.g, s.h])
    flagged = penalty * unknown if misses is None else penalty * unknown + miss_penalty * misses
    return calibrated_by(logq, flagged, x, params, 1.0, temperature_features(x))


def calibrated_by(
    logq: np.ndarray,
    unknown: np.ndarray,
    x: np.ndarray,
    params: np.ndarray,
    penalty: float,
    t: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`calibrated` with any features of "none of these" and of the temperature: ``x`` is
    ``(G, F)``, ``t`` ``(G, T)`` (``None``: none), ``params`` ``(3 + F + T,)`` for every gap or
    ``(G, 3 + F + T)`` one row a gap: ``a``, ``b``, ``c``, a weight a feature of ``x`` (``d``,
    ``e``, ``f`` for :func:`features`') and one of ``t`` (``g``, ``h`` for
    :func:`temperature_features`'); returns ``(G, K)``."""
    t = np.zeros((len(logq), 0)) if t is None else t
    width = 3 + x.shape[1]
    rows = np.broadcast_to(params, (len(logq), params.shape[-1]))
    a = rows[:, :1] * np.exp((t * rows[:, width:]).sum(axis=1, keepdims=True))
    z = a * logq - penalty * unknown
    zmax = z.max(axis=1, keepdims=True)
    none = rows[:, 1:2] - rows[:, 2:3] * zmax + (x * rows[:, 3:width]).sum(axis=1, keepdims=True)
    top = np.maximum(zmax, none)
    w = np.exp(z - top)
    return w / (w.sum(axis=1, keepdims=True) + np.exp(none - top))


def features(logq: np.ndarray, letters: np.ndarray, top_score: np.ndarray) -> np.ndarray:
    """``(G, 3)``: ``log n``, the margin ``m`` and ``s`` of each gap (see the module docstring):
    the margin is read off the two highest ``logq`` of a row, wherever they stand; a missing
    runner-up counts as probability :data:`FLOOR`."""
    highest = -np.sort(-logq, axis=1)  # each row best first
    second = highest[:, 1] if logq.shape[1] > 1 else np.full(len(logq), -np.inf)
    margin = highest[:, 0] - np.maximum(second, math.log(FLOOR))
    return np.stack([np.log(letters), margin, top_score], axis=1)


def temperature_features(x: np.ndarray) -> np.ndarray:
    """``(G, 2)``: ``log n`` and the margin capped at :data:`MARGIN_CAP`, from :func:`features`' ``x``."""
    return np.stack([x[:, 0], np.minimum(x[:, 1], MARGIN_CAP)], axis=1)
