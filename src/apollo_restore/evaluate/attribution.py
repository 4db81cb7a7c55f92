"""Scores of dates and places against the documents' own (docs/design.md, *Evaluation*).

    from apollo_restore.evaluate.attribution import attribution_report
    report = attribution_report(rows)   # rows: dicts with true lo/hi/place and the model's answer

A date is scored by its **deviation**: years from the point estimate to the true range (0 inside
it, as the published papyri model is scored), and by whether the 80 % interval **covers** the
true date (the interval meets the true range). A place by top-1 / top-3 (the true place among
the first one or three) and the **ECE** of the top-1 probability (10 equal-width bins: the mean
gap between stated probability and accuracy, weighted by the bins' sizes). Every figure is also
given per source and per length band.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from apollo_restore.evaluate.metrics import ece

#: Length bands of the report (lower bounds, letters).
LENGTH_BANDS = (0, 50, 200, 500, 1000)
#: Share of each band of ≥ 50 letters among the published test papyri (the ``weighted`` scores).
PUBLISHED_WEIGHTS = {"50-199": 0.35, "200-499": 0.28, "500-999": 0.27, "≥1000": 0.10}
#: The year that parts Ptolemaic from Roman Egypt (a point across it from the true range is a *crossing*).
ROMAN = -30


def deviation(year: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Years from each point estimate to its true range ``[lo, hi]`` (0 inside); all ``(n,)``."""
    return np.maximum(np.maximum(lo - year, year - hi), 0)


def covered(low: np.ndarray, high: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Whether each interval ``[low, high]`` meets its true range ``[lo, hi]``; all ``(n,)``."""
    return (low <= hi) & (high >= lo)


def _scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    dated = [r for r in rows if r.get("lo") is not None]
    placed = [r for r in rows if r.get("place")]
    out: dict[str, Any] = {"documents": len(rows), "dated": len(dated), "placed": len(placed)}
    if dated:
        year, low, high, lo, hi = (
            np.asarray([r[k] for r in dated], float) for k in ("year", "low", "high", "lo", "hi")
        )
        dev = deviation(year, lo, hi)
        out |= {"date_mean": float(dev.mean()), "date_median": float(np.median(dev)),
                "date_inside": float((dev == 0).mean()), "date_within1": float((dev <= 1).mean()),
                "crossings": int((((hi < ROMAN) & (year >= ROMAN)) | ((lo >= ROMAN) & (year < ROMAN))).sum()),
                "coverage80": float(covered(low, high, lo, hi).mean()),
                "interval_width": float(np.median(high - low))}  # fmt: skip
    read = [r for r in dated if r.get("formula_year") is not None]
    out["formula_read"] = len(read) / len(dated) if dated else 0.0
    if read:
        fy, flo, fhi = (np.asarray([r[k] for r in read], float) for k in ("formula_year", "lo", "hi"))
        out["formula_right"] = float((deviation(fy, flo, fhi) <= 1).mean())
    if placed:
        ranks = np.asarray([next((i for i, p in enumerate(r["places"]) if p == r["place"]), 99) for r in placed])
        conf = np.asarray([r["place_probs"][0] for r in placed], float)
        out |= {"top1": float((ranks == 0).mean()), "top3": float((ranks < 3).mean()),
                "top10": float((ranks < 10).mean()), "ece": ece(conf, (ranks == 0).astype(float))}  # fmt: skip
    nomed = [r for r in placed if "nome_right" in r]
    if nomed:
        right = np.asarray([r["district_right"] for r in nomed], float)
        out |= {"nome1": float(np.mean([r["nome_right"] for r in nomed])), "district1": float(right.mean()),
                "district_ece": ece(np.asarray([r["district_prob"] for r in nomed], float), right)}  # fmt: skip
    return out


def weighted(by_length: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The scores of the bands of ≥ 50 letters averaged with :data:`PUBLISHED_WEIGHTS` (the
    published test papyri's lengths); only the keys every such band has."""
    bands = [by_length.get(b, {}) for b in PUBLISHED_WEIGHTS]
    keys = [k for k in ("top1", "top3", "ece", "nome1", "district1", "district_ece", "date_mean", "date_median",
                        "date_inside", "coverage80") if all(k in s for s in bands)]  # fmt: skip
    return {k: float(sum(w * s[k] for w, s in zip(PUBLISHED_WEIGHTS.values(), bands))) for k in keys}


def band_of(letters: int) -> str:
    """The report's name of a length band (``"50-199"``, ``"≥1000"``)."""
    bounds = list(LENGTH_BANDS)
    k = max(i for i, b in enumerate(bounds) if letters >= b)
    return f"≥{bounds[k]}" if k == len(bounds) - 1 else f"{bounds[k]}-{bounds[k + 1] - 1}"


def attribution_report(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Scores overall, per source and per length band.

    Args:
        rows: one per document: ``source``, ``letters``, the true ``lo``/``hi`` (``None``:
            undated) and ``place`` (``""``: unknown), the model's ``year``/``low``/``high``,
            ``places`` (names, most probable first) and ``place_probs`` (their probabilities).

    Returns:
        ``{"all": scores, "by_source": {source: scores}, "by_length": {band: scores}}``; scores
        hold ``documents``, ``dated``, ``placed``, ``formula_read`` (the dated texts' share with a
        dating formula read) and, where any, ``date_mean``, ``date_median``, ``date_inside``,
        ``coverage80``, ``interval_width`` (years), ``formula_right`` (the formulae's years
        within a year of the true range), ``top1``, ``top3``, ``top10``, ``ece`` and, where the
        rows carry them (``attribution.evaluation.score_documents`` with ``nomes``), ``nome1`` (the first place in
        the true place's nome by HGV's record), ``district1`` and ``district_ece`` (the answer's
        first district); ``weighted``: per source, the bands of ≥ 50 letters weighted as
        :data:`PUBLISHED_WEIGHTS`.
    """
    rows = list(rows)
    sources = sorted({r["source"] for r in rows})
    bands = [band_of(b) for b in LENGTH_BANDS]
    by_source_length = {
        f"{s} {b}": _scores([r for r in rows if r["source"] == s and band_of(r["letters"]) == b])
        for s in sources
        for b in bands
    }
    return {
        "all": _scores(rows),
        "weighted": {s: weighted({b: by_source_length[f"{s} {b}"] for b in bands}) for s in sources},
        "by_source": {s: _scores([r for r in rows if r["source"] == s]) for s in sources},
        "by_length": {b: _scores([r for r in rows if band_of(r["letters"]) == b]) for b in bands},
        "by_source_length": by_source_length,
    }


def report_markdown(report: dict[str, Any]) -> str:
    """The report as a Markdown table, one row per group."""
    head = ("| group | docs | dated | date mean | median | inside | ≤ 1 | crossings | 80 % cover | width "
            "| formula read | right | placed | top-1 | top-3 | ECE | first place's nome | first district "
            "| district ECE |")  # fmt: skip
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def cell(s: dict[str, Any], key: str, fmt: str) -> str:
        return format(s[key], fmt) if key in s else "–"

    groups = [("all", report["all"])] + list(report["by_source"].items()) + list(report["by_source_length"].items())
    for name, s in groups:
        if not s["documents"]:
            continue
        lines.append(
            f"| {name} | {s['documents']} | {s['dated']} | {cell(s, 'date_mean', '.1f')} "
            f"| {cell(s, 'date_median', '.0f')} "
            f"| {cell(s, 'date_inside', '.3f')} | {cell(s, 'date_within1', '.3f')} | {cell(s, 'crossings', 'd')} "
            f"| {cell(s, 'coverage80', '.2f')} | {cell(s, 'interval_width', '.0f')} "
            f"| {cell(s, 'formula_read', '.2f')} | {cell(s, 'formula_right', '.2f')} "
            f"| {s['placed']} | {cell(s, 'top1', '.3f')} | {cell(s, 'top3', '.3f')} | {cell(s, 'ece', '.3f')} "
            f"| {cell(s, 'nome1', '.3f')} | {cell(s, 'district1', '.3f')} | {cell(s, 'district_ece', '.3f')} |"
        )
    for source, s in report.get("weighted", {}).items():
        if s:
            lines.append(f"\n{source}, ≥ 50 letters weighted as the published test papyri: "
                         + ", ".join(f"{k} {v:.3f}" for k, v in s.items()))  # fmt: skip
    return "\n".join(lines)
