"""Fit the ranking's stage ``calibration`` (:mod:`apollo_restore.restoration.calibration`) on validation gaps.

    records = [record(gap, pool) for gap, pool in zip(gaps, shown_pools)]   # pools as calibration gets them
    calibration = fit_calibration(records)                                  # info: measured before/after

A record holds one gap's whole ranked pool as the calibration receives it (annotated, doubtful
readings demoted, probabilities normalised over the pool), the gap's kind (``real``: an editor's
supplement; ``synthetic``) and where the edition's reading is in it. The parameters of each kind
are fitted by maximum likelihood on all records (:func:`~apollo_restore.restoration.calibration.fit`,
``δ`` shared); their effect is measured by two-fold cross-fitting over documents (fit on one half,
measure on the other) when both halves hold every hint condition of each kind, and recorded in
the calibration's ``info``: the figures of real lacunae (what every restored text has) under
``ece_after_cross_fitted`` and ``above_90_after_cross_fitted``, those of synthetic gaps under
``synthetic``.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from apollo_restore.data.formats import GapExample
from apollo_restore.evaluate.gapsets import condition_of
from apollo_restore.evaluate.metrics import agnostic, reliability
from apollo_restore.evaluate.report import plot_reliability
from apollo_restore.hint import Hint
from apollo_restore.restoration.calibration import Calibration, calibrated, fit, gap_kind, gap_letters
from apollo_restore.restoration.ranking import best_first
from apollo_restore.restoration.types import FILL_THRESHOLD, Candidate

SHOWN = 20  # readings a list shows by default (k): the "top-20" reliability is over them
SURE = FILL_THRESHOLD  # a top reading shown above this is "sure": written into a restored text


def record(gap: GapExample, cands: list[Candidate]) -> dict:
    """A gap's record: id, doc, condition, kind (``real``, ``synthetic``), hint, truth index (-1:
    not in the pool), the pool's texts, log q, unknown-word flags and the first reading's log-score."""
    keys = [agnostic(c.text) for c in cands]
    target = agnostic(gap.target)
    return {
        "id": gap.id, "doc": gap.doc, "condition": condition_of(gap), "kind": gap_kind(gap.kind),
        "hint": gap.hint.to_json(),
        "truth": keys.index(target) if target in keys else -1, "texts": [c.text for c in cands],
        "logq": [float(np.log(max(c.prob, 1e-12))) for c in cands], "unknown": [bool(c.unknown_words) for c in cands],
        "top_score": cands[0].log_score if cands else 0.0,
    }  # fmt: skip


def arrays(records: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``(G, K)`` log q (``-inf`` padded) and unknown flags, ``(G,)`` gap letters, ``(G,)`` first
    reading's log-score, ``(G,)`` truth, conditions (``K``: the largest pool): :func:`fit`'s arguments."""
    width = max(1, max(len(r["logq"]) for r in records))
    logq = np.full((len(records), width), -np.inf)
    unknown = np.zeros((len(records), width))
    for i, r in enumerate(records):
        logq[i, : len(r["logq"])] = r["logq"]
        unknown[i, : len(r["unknown"])] = r["unknown"]
    letters = np.array([gap_letters(r["texts"][0] if r["texts"] else "", Hint.from_json(r["hint"])) for r in records])
    top_score = np.array([r["top_score"] for r in records])
    return logq, unknown, letters, top_score, np.array([r["truth"] for r in records]), [r["condition"] for r in records]


def kinds_of(records: list[dict]) -> list[str]:
    """Each record's kind (``real``, ``synthetic``; a record without one: ``synthetic``)."""
    return [r.get("kind", "synthetic") for r in records]


def shown(records: list[dict], cal: Calibration | None) -> tuple[np.ndarray, np.ndarray]:
    """``(G, K)`` probabilities as shown (raw, or calibrated) and ``(G, K)`` correctness, both in
    the order shown (the ranking's :func:`~apollo_restore.restoration.ranking.best_first` by ``p``
    over the records' order, which is the order before calibration)."""
    logq, unknown, letters, top_score, truth, conds = arrays(records)
    groups = list(zip(kinds_of(records), conds))
    probs = np.exp(logq)
    if cal is not None:
        for kind, cond in set(groups):
            rows = np.array([g == (kind, cond) for g in groups])
            s = cal.for_kind(kind)[cond]
            probs[rows] = calibrated(
                logq[rows], unknown[rows], letters[rows], top_score[rows], s, cal.unknown_word_penalty
            )
    right = np.zeros_like(probs, dtype=bool)
    right[truth >= 0, truth[truth >= 0]] = True
    probs = np.where(np.isfinite(logq), probs, 0.0)
    order = np.array([best_first(row) for row in probs.tolist()], dtype=int).reshape(probs.shape)
    return np.take_along_axis(probs, order, 1), np.take_along_axis(right, order, 1)


def measures(probs: np.ndarray, right: np.ndarray) -> dict:
    """Top-1/top-20 reliability, Top-1 accuracy, and the share of gaps whose top reading is shown
    above :data:`SURE` with the fraction of those that are right."""
    sure = probs[:, 0] > SURE
    return {
        "top1": reliability(probs[:, 0], right[:, 0]),
        "top20": reliability(np.minimum(1, probs[:, :SHOWN].sum(1)), right[:, :SHOWN].any(1)),
        "top1_acc": float(right[:, 0].mean()),
        "sure_share": float(sure.mean()),
        "sure_right": float(right[sure, 0].mean()) if sure.any() else None,
    }


def fitted(records: list[dict]) -> Calibration:
    """The calibration of each kind the records hold, fitted on them."""
    return fit(*arrays(records), kinds=kinds_of(records))


def folds(records: list[dict]) -> list[list[dict]]:
    """Two halves of the records, split by document."""
    return [[r for r in records if zlib.crc32(r["doc"].encode()) % 2 == f] for f in (0, 1)]


def cross_fitted(records: list[dict]) -> tuple[np.ndarray, np.ndarray] | None:
    """Shown probabilities of each half of the documents under the calibration fitted on the
    other (``None`` when a half lacks a hint condition the other has: nothing to measure it with)."""
    halves = folds(records)
    groups = lambda rs: set(zip(kinds_of(rs), (r["condition"] for r in rs)))  # noqa: E731
    if any(groups(h) != groups(records) for h in halves):
        return None
    parts = [shown(halves[f], fitted(halves[1 - f])) for f in (0, 1)]
    width = max(p.shape[1] for p, _ in parts)  # the halves' largest pools differ

    def padded(a: np.ndarray, value: float | bool) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=value)

    return np.concatenate([padded(p, 0.0) for p, _ in parts]), np.concatenate([padded(r, False) for _, r in parts])


def fit_calibration(records: list[dict], plots: Path | None = None) -> Calibration:
    """The calibration fitted on all ``records`` (each kind its own parameters), its ``info``
    holding the gaps, the fit's NLL and ECE / Top-1 / the share above :data:`SURE` before and
    (cross-fitted) after — of the real lacunae when there are any (what a restored text has), and
    of the synthetic gaps under ``synthetic`` —; with ``plots``, ``reliability_before.png`` and
    ``reliability_after.png`` (of the real lacunae when there are any) written there."""
    cal = fitted(records)
    crossed = cross_fitted(records)
    kinds = kinds_of(records)
    crossed_kinds = np.array(kinds_of([r for half in folds(records) for r in half]))  # cross_fitted's order
    info: dict = {"gaps": len(records), "nll": cal.info["nll"]}
    before = after = None
    for kind in ("synthetic", "real"):  # the real lacunae's figures at the top, the synthetic gaps' beside them
        rows = np.array([k == kind for k in kinds])
        if not rows.any():
            continue
        before = measures(*shown([r for r, k in zip(records, kinds) if k == kind], None))
        figures = {"gaps": int(rows.sum()), "ece_before": _ece(before), "top1_before": round(before["top1_acc"], 4)}
        mine = crossed_kinds == kind
        after = measures(crossed[0][mine], crossed[1][mine]) if crossed is not None else None
        if after is not None:
            figures |= {
                "ece_after_cross_fitted": _ece(after), "top1_after_cross_fitted": round(after["top1_acc"], 4),
                "above_90_after_cross_fitted": {"share": round(after["sure_share"], 4), "right": after["sure_right"]},
            }  # fmt: skip
        if kind == "synthetic" and "real" in kinds:
            info["synthetic"] = figures
        else:
            info |= {k: v for k, v in figures.items() if k != "gaps"}
    if plots is not None:
        plots.mkdir(parents=True, exist_ok=True)
        plot_reliability(before, plots / "reliability_before.png", "before calibration (validation)")
        if after is not None:
            plot_reliability(after, plots / "reliability_after.png", "after calibration (validation, cross-fitted)")
    cal.info = info
    return cal


def _ece(m: dict) -> dict[str, float]:
    return {"top1": round(float(m["top1"]["ece"]), 4), "top20": round(float(m["top20"]["ece"]), 4)}
