"""Fit the calibration of a model folder on validation gaps and write its ``calibration.json``.

    python scripts/fit_calibration.py --prepared data/prepared [--model src/apollo_restore/models/default] \\
        [--per-length 8] [--sources ddb=8,inscription=2] [--cache /tmp/calibration-preds.jsonl]

Rerun it whenever the model (neural weights, n-grams, ensemble weights) changes: the fitted
parameters describe one model's scores. Steps: synthetic gaps of the **validation** split
(lengths 1–20, hint conditions exact / range / none, the same spans under each); the model
folder's bare filler proposes k = 20 readings each (cached in ``--cache``, so refitting is
cheap); then :func:`apollo_restore.restore.calibration.fit` by maximum likelihood. The ECE
before/after is measured by two-fold cross-fitting (fit on half of the documents, measure on
the other half), then the shipped parameters are fitted on all gaps. Prints a Markdown table
for MODEL_CARD.md and writes the reliability diagrams as PNGs (``--plots``).
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from pathlib import Path

import numpy as np

from apollo_restore.data.orthography import default_forms
from apollo_restore.data.prepare import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic, condition_of
from apollo_restore.evaluate.metrics import agnostic, reliability
from apollo_restore.evaluate.report import plot_reliability
from apollo_restore.restore.calibration import CALIBRATION_FILE, Calibration, calibrated, fingerprint, fit
from apollo_restore.restore.config import DEFAULT_MODEL
from apollo_restore.restore.load import load_filler
from apollo_restore.restore.present import Presented
from apollo_restore.restore.types import Candidate

K = 20
EDGE = 60  # context characters kept per side in the cache: enough for the words touching the gap
CONDITIONS = ("exact", "range", "none")


def predictions(args: argparse.Namespace) -> list[dict]:
    """One record per gap: condition, doc, truth index (-1: not listed), log q, readings and the
    context edges (for the unknown-word flags, computed by :func:`flag_unknown`)."""
    if args.cache and args.cache.exists():
        return [json.loads(line) for line in args.cache.open()]
    filler = load_filler(args.model, present=False)
    records = []
    for spec in args.sources.split(","):
        source, per_length = spec.split("=")
        table = load_documents(args.prepared, "validation", [source])
        gaps = build_synthetic(table, source, "validation", int(per_length), CONDITIONS, seed=args.seed)
        started = time.perf_counter()
        for gap in gaps:
            cands = filler.candidates(gap.prefix, gap.suffix, gap.hint, K)
            keys = [agnostic(c.text) for c in cands]
            target = agnostic(gap.target)
            records.append({
                "id": gap.id, "doc": gap.doc, "condition": condition_of(gap),
                "truth": keys.index(target) if target in keys else -1,
                "logq": [float(np.log(max(c.prob, 1e-12))) for c in cands], "texts": [c.text for c in cands],
                "prefix": gap.prefix[-EDGE:], "suffix": gap.suffix[:EDGE],
            })  # fmt: skip
        print(f"{source}: {len(gaps)} gaps in {time.perf_counter() - started:.0f} s", flush=True)
    if args.cache:
        args.cache.write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


def flag_unknown(records: list[dict]) -> None:
    """Add each record's ``unknown`` flags: the reading leaves a word no training edition spells."""
    forms = Presented(None, default_forms(), None)
    for r in records:
        cands = forms.annotate([Candidate(t, 0.0, 0.0) for t in r["texts"]], r["prefix"], r["suffix"])
        r["unknown"] = [bool(c.unknown_words) for c in cands]


def arrays(records: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``(G, K)`` log q (``-inf`` padded) and unknown flags, ``(G,)`` truth, conditions."""
    logq = np.full((len(records), K), -np.inf)
    unknown = np.zeros((len(records), K))
    for i, r in enumerate(records):
        logq[i, : len(r["logq"])] = r["logq"]
        unknown[i, : len(r["unknown"])] = r["unknown"]
    return logq, unknown, np.array([r["truth"] for r in records]), [r["condition"] for r in records]


def shown(records: list[dict], cal: Calibration | None) -> tuple[np.ndarray, np.ndarray]:
    """``(G, K)`` probabilities as shown (raw, or calibrated) and ``(G, K)`` correctness, both in
    the displayed order (calibration may demote readings)."""
    logq, unknown, truth, conds = arrays(records)
    probs = np.exp(logq)
    if cal is not None:
        for cond in set(conds):
            rows = np.array([c == cond for c in conds])
            s = cal.conditions[cond]
            probs[rows] = calibrated(logq[rows], unknown[rows], s.a, s.b, cal.unknown_word_penalty, s.c)
    right = np.zeros_like(probs, dtype=bool)
    right[truth >= 0, truth[truth >= 0]] = True
    probs = np.where(np.isfinite(logq), probs, 0.0)
    order = np.argsort(-probs, axis=1, kind="stable")
    return np.take_along_axis(probs, order, 1), np.take_along_axis(right, order, 1)


def measures(probs: np.ndarray, right: np.ndarray) -> dict:
    """Top-1/top-20 reliability and accuracy of probabilities in displayed order."""
    return {
        "top1": reliability(probs[:, 0], right[:, 0]),
        "top20": reliability(np.minimum(1, probs.sum(1)), right.any(1)),
        "top1_acc": float(right[:, 0].mean()),
    }


def cross_fitted(records: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Shown probabilities of each half of the documents under the calibration fitted on the other."""
    folds = [[r for r in records if zlib.crc32(r["doc"].encode()) % 2 == f] for f in (0, 1)]
    parts = [shown(folds[f], fit(*arrays(folds[1 - f]))) for f in (0, 1)]
    return np.concatenate([p for p, _ in parts]), np.concatenate([r for _, r in parts])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--sources", default="ddb=8,inscription=2", help="SOURCE=SPANS_PER_LENGTH, comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cache",
        type=Path,
        help="predictions JSONL: read if it exists, else written (delete it when the model changes)",
    )
    parser.add_argument("--plots", type=Path, help="folder for reliability_before.png / reliability_after.png")
    args = parser.parse_args()
    records = predictions(args)
    flag_unknown(records)
    before = measures(*shown(records, None))
    after = measures(*cross_fitted(records))
    cal = fit(*arrays(records))
    by_cond = {}
    for cond in CONDITIONS:
        rows = [r for r in records if r["condition"] == cond]
        by_cond[cond] = (measures(*shown(rows, None)), measures(*shown(rows, cal)))
    cal.info = {
        "fitted_by": "scripts/fit_calibration.py", "split": "validation", "sources": args.sources, "seed": args.seed,
        "gaps": len(records), "k": K, "model_fingerprint": fingerprint(args.model),
        "ece_before": {"top1": before["top1"]["ece"], "top20": before["top20"]["ece"]},
        "ece_after_cross_fitted": {"top1": after["top1"]["ece"], "top20": after["top20"]["ece"]},
        "top1_before": round(before["top1_acc"], 4), "top1_after_cross_fitted": round(after["top1_acc"], 4),
    }  # fmt: skip
    cal.save(args.model / CALIBRATION_FILE)
    if args.plots:
        args.plots.mkdir(parents=True, exist_ok=True)
        plot_reliability(before, args.plots / "reliability_before.png", "before calibration (validation)")
        plot_reliability(after, args.plots / "reliability_after.png", "after calibration (validation, cross-fitted)")
    print(
        f"wrote {args.model / CALIBRATION_FILE}: {json.dumps({k: vars(v) for k, v in cal.conditions.items()})}, "
        f"unknown-word penalty {cal.unknown_word_penalty}\n"
    )
    print(f"{len(records)} validation gaps ({args.sources} spans per length 1–20, × 3 hint conditions)\n")
    print("| hint | gaps | ECE top-1 before | after | ECE top-20 before | after | Top-1 before | after |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| all (cross-fitted) | {len(records)} | {before['top1']['ece']:.3f} | {after['top1']['ece']:.3f} | "
        f"{before['top20']['ece']:.3f} | {after['top20']['ece']:.3f} | "
        f"{before['top1_acc']:.3f} | {after['top1_acc']:.3f} |"
    )
    for cond, (b, a) in by_cond.items():
        print(
            f"| {cond} (in-sample) | {b['top1']['n']} | {b['top1']['ece']:.3f} | {a['top1']['ece']:.3f} | "
            f"{b['top20']['ece']:.3f} | {a['top20']['ece']:.3f} | {b['top1_acc']:.3f} | {a['top1_acc']:.3f} |"
        )


if __name__ == "__main__":
    main()
