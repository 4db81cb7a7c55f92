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

#: Length bands of the report (lower bounds, letters).
LENGTH_BANDS = (0, 50, 200, 500, 1000)
#: The year that parts Ptolemaic from Roman Egypt (a point across it from the true range is a *crossing*).
ROMAN = -30


def deviation(year: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Years from each point estimate to its true range ``[lo, hi]`` (0 inside); all ``(n,)``."""
    return np.maximum(np.maximum(lo - year, year - hi), 0)


def covered(low: np.ndarray, high: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Whether each interval ``[low, high]`` meets its true range ``[lo, hi]``; all ``(n,)``."""
    return (low <= hi) & (high >= lo)


def ece(confidence: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error of top-1 probabilities ``confidence`` against ``correct`` (0/1)."""
    if not len(confidence):
        return float("nan")
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            total += inside.sum() * abs(confidence[inside].mean() - correct[inside].mean())
    return float(total / len(confidence))


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
    return out


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
        within a year of the true range), ``top1``, ``top3``, ``top10``, ``ece``.
    """
    rows = list(rows)
    sources = sorted({r["source"] for r in rows})
    bands = [band_of(b) for b in LENGTH_BANDS]
    return {
        "all": _scores(rows),
        "by_source": {s: _scores([r for r in rows if r["source"] == s]) for s in sources},
        "by_length": {b: _scores([r for r in rows if band_of(r["letters"]) == b]) for b in bands},
        "by_source_length": {
            f"{s} {b}": _scores([r for r in rows if r["source"] == s and band_of(r["letters"]) == b])
            for s in sources
            for b in bands
        },
    }


def report_markdown(report: dict[str, Any]) -> str:
    """The report as a Markdown table, one row per group."""
    head = ("| group | docs | dated | date mean | median | inside | ≤ 1 | crossings | 80 % cover | width "
            "| formula read | right | placed | top-1 | top-3 | ECE |")  # fmt: skip
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

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
            f"| {s['placed']} | {cell(s, 'top1', '.3f')} | {cell(s, 'top3', '.3f')} | {cell(s, 'ece', '.3f')} |"
        )
    return "\n".join(lines)


def score_documents(model: Any, items: Iterable[Any]) -> list[dict[str, Any]]:
    """One :func:`attribution_report` row per document, from an
    :class:`~apollo_restore.attribution.model.AttributionModel` and labelled texts (objects with
    ``source``, ``text``, ``letters`` and ``label``: ``lo``, ``hi``, ``place``, ``region``). The
    true place is the label's place where it is one of the model's, else its region where that
    is (an inscription's rare settlement), else the place itself (never predicted: a miss)."""
    known = set(model.places)
    rows = []
    for item in items:
        found = model.predict(item.text, item.letters)
        label = item.label
        place = label.place if label.place in known or label.region not in known else label.region
        names, probs = [p["place"] for p in found.places], [p["prob"] for p in found.places]
        rows.append({"source": item.source, "letters": item.letters, "lo": label.lo, "hi": label.hi,
                     "place": place, "year": found.year, "low": found.low, "high": found.high,
                     "places": names, "place_probs": probs,
                     "formula_year": found.formula["year"] if found.formula else None})  # fmt: skip
    return rows
