"""The place mixture per length band: the wide model, the bag's places and the nearest documents' votes.

    from apollo_restore.attribution.calibrate_wide import choose, mixture
    settings = choose(scores, parts, valid, places)   # on validation
    probs = mixture(scores, parts, settings)          # (n, P)

Per band of :data:`BANDS` (letters), the wide model's scores ``(n, P)`` (:mod:`.wide`) go through
a softmax of their own temperature (least NLL), are mixed linearly with the bag model's place
probabilities and the nearest documents' votes, and the mixture gets a final temperature (a
softmax over its log) of least top-1 ECE; the wide temperature (the least-NLL one, or 2, 4 or 8
times flatter) and the weights (:data:`GRID`) are those giving the most validation papyri right
first (then in the first three) among the settings whose ECE stays within :data:`MAX_ECE`
(least NLL alone left the bands of ≥ 200 letters over-confident:
docs/notes/2026-12-04-wide-places.md). :func:`evaluate` reports by band and weighted as the
published test papyri are (:data:`WEIGHTS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from apollo_restore.attribution.districts import class_districts, district_of, district_probs, nome_of
from apollo_restore.attribution.wide import combine, softmax
from apollo_restore.evaluate.attribution import ece

#: Lower letter bounds of the place mixture's length bands.
BANDS = (0, 50, 200, 500, 1000)
#: Share of each band (≥ 50 letters) among the published test papyri (the weighted figures).
WEIGHTS = {1: 0.35, 2: 0.28, 3: 0.27, 4: 0.10}
TEMPERATURES = np.geomspace(0.01, 10, 70)
#: Final temperatures tried, and the top-1 ECE a band's setting must keep on validation (the
#: most right first among those that do; the least ECE where none does).
FINAL, MAX_ECE = np.geomspace(0.25, 4, 25), 0.04
#: ``(bag, votes)`` weights tried; the wide model has the rest (the bag's at least 0.05: the places
#: the wide model has no column for have only the bag's and the votes' probability).
GRID = [(a, b) for a in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5) for b in (0.0, 0.1, 0.2, 0.3)]


def band_of(letters: np.ndarray) -> np.ndarray:
    """Index into :data:`BANDS` of each text's letters ``(n,)``."""
    return np.searchsorted(BANDS, letters, side="right") - 1


def _nll(probs: np.ndarray, y: np.ndarray) -> float:
    return float(-np.log(probs[np.arange(len(y)), y] + 1e-12).mean())


def _ece(probs: np.ndarray, y: np.ndarray) -> float:
    """Top-1 ECE (:func:`~apollo_restore.evaluate.attribution.ece`) of ``probs`` ``(n, P)``."""
    return ece(probs.max(axis=1), (probs.argmax(axis=1) == y).astype(float))


def choose(scores: np.ndarray, parts: dict[str, np.ndarray], items: list[Any], places: list[str]) -> dict[str, Any]:
    """Per band: ``t_wide``, ``weights`` ``(bag, votes)`` and ``t_final`` (see the module
    docstring), chosen on ``items``' papyri (``scores`` ``(n, P)``; ``parts``: ``probs`` and
    ``votes`` ``(n, P)`` of the bag model)."""
    y = true_classes(items, places)
    band = band_of(np.asarray([e.letters for e in items]))
    papyri = np.asarray([e.source == "ddb" for e in items])
    out: dict[str, Any] = {"bands": list(BANDS), "t_wide": [], "weights": [], "t_final": []}
    for b in range(len(BANDS)):
        rows = np.flatnonzero((band == b) & papyri & (y >= 0))
        if not len(rows):
            out["t_wide"].append(1.0), out["weights"].append([0.0, 0.0]), out["t_final"].append(1.0)
            continue
        yb = y[rows]
        every = np.flatnonzero((band == b) & papyri & (y != -2))  # with those whose place is no class: misses
        own = np.isfinite(scores[rows, yb])  # the true place is one of the wide model's
        t_nll = float(min(TEMPERATURES, key=lambda t: _nll(softmax(scores[rows[own]], t), yb[own])))
        found = []  # (top-1, top-3, ECE, t_wide, weights, t_final)
        for t in (t_nll, 2 * t_nll, 4 * t_nll, 8 * t_nll):  # a flatter wide softmax calibrates better
            wide = softmax(scores[every], t)
            for w in GRID:
                p = combine(wide, parts["probs"][every], parts["votes"][every], w, 1.0)
                order = np.argsort(-p, axis=1)[:, :3]
                t_final = float(min(FINAL, key=lambda tf: _ece(softmax(np.log(p + 1e-12), tf), y[every])))
                gap = _ece(softmax(np.log(p + 1e-12), t_final), y[every])
                found.append((float((order[:, 0] == y[every]).mean()),
                              float((order == y[every][:, None]).any(axis=1).mean()), gap, t, w, t_final))  # fmt: skip
        calibrated = [f for f in found if f[2] <= MAX_ECE] or [min(found, key=lambda f: f[2])]
        _, _, _, t_wide, best, t_final = max(calibrated, key=lambda f: (f[0], f[1]))
        out["t_wide"].append(t_wide)
        out["weights"].append([float(best[0]), float(best[1])])
        out["t_final"].append(t_final)
    return out


def mixture(scores: np.ndarray, parts: dict[str, np.ndarray], settings: dict[str, Any],
            letters: np.ndarray | None = None, items: list[Any] | None = None) -> np.ndarray:  # fmt: skip
    """The mixed place probabilities ``(n, P)`` of ``scores`` ``(n, P)`` and ``parts`` under
    ``settings`` (:func:`choose`), each row by its band (``letters`` ``(n,)``, or ``items``')."""
    if letters is None:
        letters = np.asarray([e.letters for e in items or []])
    band = band_of(letters)
    out = np.zeros_like(parts["probs"], dtype=np.float64)
    for b in range(len(BANDS)):
        rows = np.flatnonzero(band == b)
        wide = softmax(scores[rows], settings["t_wide"][b])
        out[rows] = combine(wide, parts["probs"][rows], parts["votes"][rows],
                            tuple(settings["weights"][b]), settings["t_final"][b])  # fmt: skip
    return out


def true_classes(items: list[Any], places: list[str]) -> np.ndarray:
    """Each item's true place class (``score_documents``' rule: its place, else its region), −1 none."""
    index = {p: i for i, p in enumerate(places)}
    out = []
    for e in items:
        place = e.label.place if e.label.place in index or e.label.region not in index else e.label.region
        out.append(index.get(place, -1) if place else -2)
    return np.asarray(out)


def evaluate(probs: np.ndarray, items: list[Any], places: list[str], nomes: dict[str, str], source: str,
             inscription_classes: set[int]) -> str:  # fmt: skip
    """A Markdown table of places top-1 / top-3 / ECE, the first place in the right nome (HGV's
    record; a place without one its own) and the first district right with its ECE (the answer's
    districts), per band and weighted (:data:`WEIGHTS`), over ``items`` of ``source`` with a place
    (a true place the model cannot name counts as a miss)."""
    y = true_classes(items, places)
    truth = [e.label.place if y[i] == -1 else places[y[i]] if y[i] >= 0 else "" for i, e in enumerate(items)]
    of = class_districts(places, nomes, inscription_classes)
    keep = np.flatnonzero(np.asarray([e.source == source for e in items]) & (y != -2))
    band = band_of(np.asarray([e.letters for e in items]))
    first = probs.argmax(axis=1)
    order = np.argsort(-probs, axis=1)[:, :3]
    names, dprobs = district_probs(probs, of)
    lines = ["| band | texts | top-1 | top-3 | ECE | first place's nome | first district | district ECE |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    rows_by_band = {}
    for b in range(len(BANDS)):
        rows = keep[band[keep] == b]
        if not len(rows):
            continue
        top1 = first[rows] == y[rows]
        top3 = (order[rows] == y[rows, None]).any(axis=1)
        nome = np.asarray([nome_of(places[first[r]], nomes) == nome_of(truth[r], nomes) for r in rows])
        true_d = [of[y[r]] if y[r] >= 0 else district_of(truth[r], nomes, source == "inscription") for r in rows]
        dfirst = dprobs[rows].argmax(axis=1)
        dright = np.asarray([names[d] == t for d, t in zip(dfirst, true_d)])
        stats = [len(rows), top1.mean(), top3.mean(), ece(probs[rows].max(axis=1), top1.astype(float)),
                 nome.mean(), dright.mean(), ece(dprobs[rows].max(axis=1), dright.astype(float))]  # fmt: skip
        rows_by_band[b] = stats
        label = f"≥{BANDS[b]}" if b == len(BANDS) - 1 else f"{BANDS[b]}–{BANDS[b + 1] - 1}"
        lines.append(f"| {label} | {stats[0]} | " + " | ".join(f"{v:.3f}" for v in stats[1:]) + " |")
    if all(b in rows_by_band for b in WEIGHTS):
        w = np.asarray([WEIGHTS[b] for b in WEIGHTS])
        avg = (w[:, None] * np.asarray([rows_by_band[b][1:] for b in WEIGHTS])).sum(axis=0)
        lines.append("| weighted ≥ 50 | – | " + " | ".join(f"{v:.3f}" for v in avg) + " |")
    return "\n".join(lines)
