"""Choose the ensemble weights on the VALIDATION split (never on test gaps).

    python benchmarks/ensemble_weights.py --model runs/default/best --infini \\
        --per-length 8 --conditions exact,none,wrong50 --out /tmp/ensemble-val.jsonl
    python benchmarks/ensemble_weights.py --model runs/default/best --ngram data/ngram.npz --backward data/ngram-bwd.npz

For each validation gap, the neural beam and the forward and backward classical members' beams
(the unbounded-order models on the packaged text index with ``--infini``, n-gram files otherwise)
each propose 20 readings; the union is scored by every member (and the length prior) once, and
saved. A grid of weights is then scored offline: Top-1/Top-20 (uniform-weighted over lengths
1–20) per hint condition, each member alone on its own beam included; ``letters`` is a per-letter
bonus where no hint is given (nats per letter, a pseudo-member). Prints Markdown and the best
weights, named as in ``apollo_restore.json``'s ensemble section.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from apollo_restore.data.normalise import letter_count
from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic, condition_of
from apollo_restore.evaluate.metrics import score_gap, uniform
from apollo_restore.restore.candidates import union
from apollo_restore.restore.config import DEFAULT_RESTORE_CONFIG
from apollo_restore.restore.engine import Restorer
from apollo_restore.restore.ensemble import LengthPrior
from apollo_restore.restore.infini_fill import load_infini
from apollo_restore.restore.ngram_fill import load_ngram
from apollo_restore.restore.threads import use_threads


def collect(args) -> list[dict]:
    table = load_documents(args.prepared, split="validation", sources=["ddb"])
    gaps = build_synthetic(table, "ddb", "validation", args.per_length, conditions=args.conditions.split(","), seed=11)
    if args.infini:
        discount = [float(x) for x in args.discount.split(",")]
        options = {"discount": discount[0] if len(discount) == 1 else discount}
        members = {
            "infini": load_infini("forward", **options),
            "infini_backward": load_infini("backward", **options),
            "length": LengthPrior(),
        }
    else:
        members = {"ngram": load_ngram(args.ngram), "backward": load_ngram(args.backward), "length": LengthPrior()}
    if not args.no_neural:
        # searched as in the shipped ensemble: the hint as given, --slack letters beyond it searched
        search = replace(DEFAULT_RESTORE_CONFIG, hint_slack=args.slack)
        use_threads(args.threads)
        members["neural"] = Restorer.load(args.model, config=search)
    rows = []
    for gap in tqdm(gaps, desc="score pool"):
        hint = gap.hint.widen(args.slack)  # as the shipped ensemble: the neural member widens it itself
        readings, origins = union(
            (
                name,
                [c.text for c in filler.candidates(gap.prefix, gap.suffix, gap.hint if name == "neural" else hint, 20)],
            )
            for name, filler in members.items()
        )
        scores = {
            name: filler.score_readings(gap.prefix, gap.suffix, gap.hint, readings) for name, filler in members.items()
        }
        rows.append({
            "id": gap.id, "condition": condition_of(gap), "target": gap.target, "readings": readings,
            "origin": origins,
            # letters of each reading where no hint is given: a per-letter bonus, as a member
            "letters": [letter_count(r) if not gap.hint.given else 0 for r in readings], **scores,
        })  # fmt: skip
    return rows


def ranked(row: dict, weights: dict[str, float], only: str | None = None) -> list[str]:
    items = [
        (r, sum(w * row[m][i] for m, w in weights.items()))
        for i, r in enumerate(row["readings"])
        if only is None or only in row["origin"][i]
    ]
    return [r for r, _ in sorted(items, key=lambda item: -item[1])]


def table(rows: list[dict], weights: dict[str, float], only: str | None = None) -> dict[str, tuple[float, float]]:
    out = {}
    for cond in sorted({r["condition"] for r in rows}):
        scores = [score_gap(r["target"], ranked(r, weights, only)) for r in rows if r["condition"] == cond]
        summary = uniform(scores)
        out[cond] = (summary.top1, summary.top20)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="neural model folder (default: the embedded one)")
    parser.add_argument(
        "--infini", action="store_true", help="classical members: the unbounded-order models (packaged text index)"
    )
    parser.add_argument("--ngram", type=Path, help="forward n-gram file (without --infini)")
    parser.add_argument("--backward", type=Path, help="backward n-gram file (without --infini)")
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--per-length", type=int, default=8)
    parser.add_argument("--conditions", default="exact,none,wrong50")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--discount", default="0.6,1.0,1.3", help="unbounded-order models' D, or D1,D2,D3 (counts 1, 2, 3+)"
    )
    parser.add_argument("--slack", type=int, default=0, help="members search this many letters beyond the hint")
    parser.add_argument("--no-neural", action="store_true", help="leave the neural model out (scores and pool)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/ensemble-val.jsonl"))
    args = parser.parse_args()
    if args.out.exists():
        rows = [json.loads(line) for line in args.out.read_text().splitlines()]
    else:
        rows = collect(args)
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    conds = sorted({r["condition"] for r in rows})
    fwd, bwd = ("infini", "infini_backward") if "infini" in rows[0] else ("ngram", "backward")
    candidates = [("neural only (its own beam)", {"neural": 1.0}, "neural")] if "neural" in rows[0] else []
    candidates += [(f"{fwd} only (its own beam)", {fwd: 1.0}, fwd), (f"{bwd} only (its own beam)", {bwd: 1.0}, bwd)]
    neural_weights = (0.0,) if "neural" not in rows[0] else (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
    letters = (0.0,) if "letters" not in rows[0] else (0.0, 0.5, 1.0, 2.0)
    grid = itertools.product(neural_weights, (1.0,), (0.0, 0.5, 1.0), (0.0, 0.5, 1.0, 2.0, 4.0, 8.0), letters)
    for w_neural, w_fwd, w_bwd, w_len, w_letters in grid:
        weights = {"neural": w_neural, fwd: w_fwd, bwd: w_bwd, "length": w_len, "letters": w_letters}
        if "neural" not in rows[0]:
            del weights["neural"]
        if "letters" not in rows[0]:
            del weights["letters"]
        candidates.append((" + ".join(f"{k} {v}" for k, v in weights.items()), weights, None))
    print(
        f"## Ensemble weights on ddb validation ({len(rows)} gaps, {args.per_length} per length and condition, "
        f"search slack {args.slack})\n"
    )
    print("| members | " + " | ".join(f"{c} Top-1 / Top-20" for c in conds) + " | mean Top-1 |")
    print("|---|" + "---:|" * (len(conds) + 1))
    best = None
    for label, weights, only in candidates:
        res = table(rows, weights, only)
        mean = statistics.mean(v[0] for v in res.values())
        print(f"| {label} | " + " | ".join(f"{res[c][0]:.3f} / {res[c][1]:.3f}" for c in conds) + f" | {mean:.3f} |")
        if only is None and (best is None or mean > best[0]):
            best = (mean, weights)
    print(f"\nbest (mean uniform Top-1 over conditions): {json.dumps(best[1])} → {best[0]:.3f}")
    print(f"(pool: union of the {'neural, ' if 'neural' in rows[0] else ''}{fwd} and {bwd} beams; rows re-rank it)")


if __name__ == "__main__":
    main()
