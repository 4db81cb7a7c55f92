"""Fit the calibration of a model folder on validation gaps and write its ``calibration.json``.

    python scripts/fit_calibration.py --prepared data/prepared [--model src/apollo_restore/models/default] \\
        [--sources ddb=15] [--limit 600] [--cache ~/.cache/apollo-restore/calibration-pool.jsonl] \\
        [--plots docs] [--out calibration.json]

Rerun it whenever the model (neural weights, n-grams, ensemble weights) changes: the fitted
parameters describe one model's scores. Steps: synthetic gaps of the **validation** split
(lengths 1–20, hint conditions exact / range / none, the same spans under each, in a shuffled
order); the model folder's filler gives each gap its whole ranked pool as the calibration will
receive it (cached in ``--cache``, appended gap by gap, so an interrupted run resumes and a
refit is instant); then :func:`apollo_restore.restore.calibration.fit` by maximum likelihood
(L-BFGS). Before/after is measured by two-fold cross-fitting (fit on half of the documents,
measure on the other half), then the shipped parameters are fitted on all gaps. Prints Markdown
tables for MODEL_CARD.md (ECE, Top-1, the share of gaps whose top reading is shown above 80 %
and how often it is right, the held-out log-likelihood with and without the gap-length term)
and writes the reliability diagrams as PNGs (``--plots``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import zlib
from pathlib import Path

import numpy as np

from apollo_restore.data.formats import GapExample
from apollo_restore.data.orthography import default_forms
from apollo_restore.data.prepare import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic, condition_of
from apollo_restore.evaluate.metrics import agnostic, reliability
from apollo_restore.evaluate.report import plot_reliability
from apollo_restore.hint import Hint
from apollo_restore.restore.calibration import (
    CALIBRATION_FILE,
    TERMS,
    Calibration,
    calibrated,
    fingerprint,
    fingerprint_parts,
    fit,
    gap_letters,
)
from apollo_restore.restore.candidates import WHOLE_POOL
from apollo_restore.restore.config import DEFAULT_MODEL
from apollo_restore.restore.load import load_filler
from apollo_restore.restore.present import Presented
from apollo_restore.restore.types import Candidate

CONDITIONS = ("exact", "range", "none")
SHOWN = 20  # readings a list shows by default (k): the "top-20" reliability is over them
SURE = 0.8  # a top reading shown above this is "sure"


def predictions(args: argparse.Namespace) -> list[dict]:
    """One record per gap: id, doc, condition, hint, truth index (-1: not in the pool), and the
    whole ranked pool as the calibration receives it (:class:`Presented` without a calibration:
    readings, log q normalised over the pool after the truncation demotion, unknown-word flags,
    the first reading's log-score).

    Gaps run in a shuffled order (any first part is a sample over lengths and conditions) and
    each record is appended to ``--cache`` as it is made; a rerun reads the cache and restores
    only the gaps it lacks, so ``--limit`` and interruptions cost nothing."""
    done = {}
    if args.cache and args.cache.exists():
        done = {r["id"]: r for r in map(json.loads, args.cache.open())}
    gaps = []
    for spec in args.sources.split(","):
        source, per_length = spec.split("=")
        table = load_documents(args.prepared, "validation", [source])
        gaps += build_synthetic(table, source, "validation", int(per_length), CONDITIONS, seed=args.seed)
    np.random.default_rng(args.seed).shuffle(gaps)
    gaps = gaps[: args.limit]
    # gaps restored before the top reading's score was cached only need that score
    todo = [g for g in gaps if g.id in done and "top_score" not in done[g.id]] + [g for g in gaps if g.id not in done]
    if todo:
        filler = Presented(load_filler(args.model, present=False), default_forms(), None)
        started = time.perf_counter()
        with args.cache.open("a") if args.cache else open(os.devnull, "w") as out:
            for i, gap in enumerate(todo):
                if gap.id in done:
                    top = done[gap.id]["texts"][0]
                    done[gap.id]["top_score"] = filler.score_readings(gap.prefix, gap.suffix, gap.hint, [top])[0]
                else:
                    done[gap.id] = record(gap, filler.candidates(gap.prefix, gap.suffix, gap.hint, WHOLE_POOL))
                out.write(json.dumps(done[gap.id], ensure_ascii=False) + "\n")
                out.flush()
                if (i + 1) % 20 == 0:
                    print(f"{i + 1}/{len(todo)} gaps in {time.perf_counter() - started:.0f} s", flush=True)
    return [done[g.id] for g in gaps]


def record(gap: GapExample, cands: list[Candidate]) -> dict:
    """A gap's cache record (see :func:`predictions`) from its whole ranked pool."""
    keys = [agnostic(c.text) for c in cands]
    target = agnostic(gap.target)
    return {
        "id": gap.id, "doc": gap.doc, "condition": condition_of(gap), "hint": gap.hint.to_json(),
        "truth": keys.index(target) if target in keys else -1, "texts": [c.text for c in cands],
        "logq": [float(np.log(max(c.prob, 1e-12))) for c in cands], "unknown": [bool(c.unknown_words) for c in cands],
        "top_score": cands[0].log_score,
    }  # fmt: skip


def arrays(records: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``(G, K)`` log q (``-inf`` padded) and unknown flags, ``(G,)`` gap letters, ``(G,)`` first
    reading's log-score, ``(G,)`` truth, conditions (``K``: the largest pool): :func:`fit`'s arguments."""
    width = max(len(r["logq"]) for r in records)
    logq = np.full((len(records), width), -np.inf)
    unknown = np.zeros((len(records), width))
    for i, r in enumerate(records):
        logq[i, : len(r["logq"])] = r["logq"]
        unknown[i, : len(r["unknown"])] = r["unknown"]
    letters = np.array([gap_letters(r["texts"][0], Hint.from_json(r["hint"])) for r in records])
    top_score = np.array([r["top_score"] for r in records])
    return logq, unknown, letters, top_score, np.array([r["truth"] for r in records]), [r["condition"] for r in records]


def shown(records: list[dict], cal: Calibration | None) -> tuple[np.ndarray, np.ndarray]:
    """``(G, K)`` probabilities as shown (raw, or calibrated) and ``(G, K)`` correctness, both in
    the displayed order (calibration may demote readings)."""
    logq, unknown, letters, top_score, truth, conds = arrays(records)
    probs = np.exp(logq)
    if cal is not None:
        for cond in set(conds):
            rows = np.array([c == cond for c in conds])
            s = cal.conditions[cond]
            probs[rows] = calibrated(
                logq[rows], unknown[rows], letters[rows], top_score[rows], s, cal.unknown_word_penalty
            )
    right = np.zeros_like(probs, dtype=bool)
    right[truth >= 0, truth[truth >= 0]] = True
    probs = np.where(np.isfinite(logq), probs, 0.0)
    order = np.argsort(-probs, axis=1, kind="stable")
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


def folds(records: list[dict]) -> list[list[dict]]:
    """Two halves of the records, split by document."""
    return [[r for r in records if zlib.crc32(r["doc"].encode()) % 2 == f] for f in (0, 1)]


def cross_fitted(records: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Shown probabilities of each half of the documents under the calibration fitted on the other."""
    halves = folds(records)
    parts = [shown(halves[f], fit(*arrays(halves[1 - f]))) for f in (0, 1)]
    width = max(p.shape[1] for p, _ in parts)  # the halves' largest pools differ

    def padded(a: np.ndarray, value: float | bool) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=value)

    return np.concatenate([padded(p, 0.0) for p, _ in parts]), np.concatenate([padded(r, False) for _, r in parts])


def held_out_nll(records: list[dict], terms: tuple[str, ...]) -> float:
    """Mean negative log-likelihood (nats per gap) of each half under the fit on the other, with
    only ``terms`` of the "none of these" features (:data:`~apollo_restore.restore.calibration.TERMS`;
    none: the family before issue 23)."""
    total, count = 0.0, 0
    halves = folds(records)
    for f in (0, 1):
        cal = fit(*arrays(halves[1 - f]), terms=terms)
        logq, unknown, letters, top_score, truth, conds = arrays(halves[f])
        for cond in set(conds):
            rows = np.array([c == cond for c in conds])
            s = cal.conditions[cond]
            p = calibrated(logq[rows], unknown[rows], letters[rows], top_score[rows], s, cal.unknown_word_penalty)
            t = truth[rows]
            right = np.where(t >= 0, p[np.arange(len(t)), np.maximum(t, 0)], 1.0 - p.sum(axis=1))
            total -= float(np.log(np.clip(right, 1e-12, 1.0)).sum())
            count += len(t)
    return total / count


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--sources", default="ddb=15", help="SOURCE=SPANS_PER_LENGTH, comma-separated")
    parser.add_argument("--limit", type=int, help="restore only the first LIMIT gaps of the shuffled set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cache",
        type=Path,
        help="pools JSONL: read, and extended with the gaps it lacks (delete it when the model changes)",
    )
    parser.add_argument("--plots", type=Path, help="folder for reliability_before.png / reliability_after.png")
    parser.add_argument("--out", type=Path, help=f"file to write (default: the model folder's {CALIBRATION_FILE})")
    args = parser.parse_args()
    records = predictions(args)
    before = measures(*shown(records, None))
    after = measures(*cross_fitted(records))
    cal = fit(*arrays(records))
    by_cond = {}
    for cond in CONDITIONS:
        rows = [r for r in records if r["condition"] == cond]
        by_cond[cond] = (measures(*shown(rows, None)), measures(*shown(rows, cal)))
    ablations = [TERMS, ("letters", "margin"), ("letters",), ()]
    nll = {" + ".join(terms) or "neither": held_out_nll(records, terms) for terms in ablations}
    cal.info = {
        "fitted_by": "scripts/fit_calibration.py", "split": "validation", "sources": args.sources, "seed": args.seed,
        "gaps": len(records), "model_fingerprint": fingerprint(args.model),
        "model_fingerprint_parts": fingerprint_parts(args.model), "nll": cal.info["nll"],
        "held_out_nll": {k: round(v, 4) for k, v in nll.items()},
        "ece_before": {"top1": before["top1"]["ece"], "top20": before["top20"]["ece"]},
        "ece_after_cross_fitted": {"top1": after["top1"]["ece"], "top20": after["top20"]["ece"]},
        "top1_before": round(before["top1_acc"], 4), "top1_after_cross_fitted": round(after["top1_acc"], 4),
        "above_80_after_cross_fitted": {"share": round(after["sure_share"], 4), "right": after["sure_right"]},
    }  # fmt: skip
    out = args.out or args.model / CALIBRATION_FILE
    cal.save(out)
    if args.plots:
        args.plots.mkdir(parents=True, exist_ok=True)
        plot_reliability(before, args.plots / "reliability_before.png", "before calibration (validation)")
        plot_reliability(after, args.plots / "reliability_after.png", "after calibration (validation, cross-fitted)")
    params = {k: {f: round(x, 3) for f, x in vars(v).items()} for k, v in cal.conditions.items()}
    print(f"wrote {out}: {json.dumps(params)}, unknown-word penalty {cal.unknown_word_penalty:.3f}\n")
    print(f"{len(records)} validation gaps ({args.sources} spans per length 1–20, × 3 hint conditions)\n")
    print("held-out NLL (nats/gap, two-fold by document) by the terms of 'none of these':")
    print(", ".join(f"{terms} {value:.3f}" for terms, value in nll.items()) + "\n")
    print(
        "| hint | gaps | ECE top-1 before | after | ECE top-20 before | after | Top-1 | "
        "top > 80 % before | after | right when > 80 % before | after |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = [("all (cross-fitted)", before, after)] + [(f"{c} (in-sample)", b, a) for c, (b, a) in by_cond.items()]
    for name, b, a in rows:
        print(
            f"| {name} | {b['top1']['n']} | {b['top1']['ece']:.3f} | {a['top1']['ece']:.3f} | "
            f"{b['top20']['ece']:.3f} | {a['top20']['ece']:.3f} | {a['top1_acc']:.3f} | "
            f"{_pct(b['sure_share'])} | {_pct(a['sure_share'])} | {_pct(b['sure_right'])} | {_pct(a['sure_right'])} |"
        )


if __name__ == "__main__":
    main()
