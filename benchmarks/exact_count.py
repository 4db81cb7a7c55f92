"""Choose how an exact count holds the top of a list, on validation gaps with right and wrong counts.

    python benchmarks/exact_count.py pools --prepared data/prepared --per-length 6 \\
        --out /tmp/exact-count-pools.jsonl     # the shipped default, once per condition (resumable)
    python benchmarks/exact_count.py example --out /tmp/exact-count-example.jsonl   # issue 36's example
    python benchmarks/exact_count.py choose --pools /tmp/exact-count-pools.jsonl \\
        --example /tmp/exact-count-example.jsonl

``pools`` takes ddb **validation** gaps (lengths 1–20, ``--per-length`` spans each, seed 36) and
restores each ONCE under two conditions: the right count (``[.n]``) and a wrong one (``n`` ± 1–3
letters, the side drawn at random, never below 1). It runs the shipped default
(:func:`~apollo_restore.restoration.load.load_restorer`) with no demotion and no calibration, and appends
each gap's whole ranked pool (readings, restorer probabilities normalised over the pool, log-scores),
one gap a line; a rerun restores only the gaps the file lacks.

``choose`` re-ranks the saved pools offline as :class:`~apollo_restore.restoration.presentation.present.Presented`
would under each treatment of a missed count — the hint-miss factor alone (0.01 was shipped), a
smaller factor, or :func:`~apollo_restore.restoration.ranking.demotions.hold_count` with a floor (every reading
that misses the count goes below every right-length reading the restorer rates at least the floor)
— then applies the shipped calibration, and prints Markdown: uniform-weighted Top-1 / Top-20 per
condition, the gaps whose first reading misses the count, and the mean shown probability of the
first reading against how often it is right; with ``--example``, the first reading of each saved
example (``example`` saves the pool of issue 36's text, :data:`EXAMPLE`, the same way).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from apollo_restore.data.orthography import default_forms
from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic
from apollo_restore.evaluate.metrics import agnostic, score_gap, uniform
from apollo_restore.hint import Hint
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.context import GapContexts
from apollo_restore.restoration.load import calibration_for, load_restorer, scoring_of
from apollo_restore.restoration.presentation.present import Presented, annotate
from apollo_restore.restoration.ranking.demotions import Demotions, hold_count
from apollo_restore.restoration.ranking.doubts import doubts
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.restoration.ranking.pool import WHOLE_POOL
from apollo_restore.restoration.request import validate
from apollo_restore.schema.restoration import Candidate, RestoreRequest

SHOWN = 20  # readings a list shows by default
#: issue 36's reproduction: the edition reads οἰκέτου (7 letters)
EXAMPLE = (
    "Φλαυίῳ Ἀπίωνι τῷ πανευφήμῳ καὶ ὑπερφυεστάτῳ ἀπὸ ὑπάτων γεουχοῦντι καὶ ἐνταῦθα τῇ λαμπρᾷ "
    "Ὀξυρυγχ(ιτῶν) πόλει διὰ Μηνᾶ [.7] ἐπερωτῶντος καὶ"
)
SEED = 36
NONE = Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None)
#: the treatments compared: (label, hint-miss factor, floor of hold_count or None, floor on the share of
#: the right-length readings (True; "known": and only readings without unknown words rated) or of the pool)
TREATMENTS = [
    ("factor 0.01 (shipped before)", 0.01, None, True),
    ("factor 0.001", 0.001, None, True),
    ("factor 0.0001", 0.0001, None, True),
    ("hold, pool share ≥ 0.01", 0.01, 0.01, False),
    ("hold, pool share ≥ 0.001", 0.01, 0.001, False),
    ("hold, pool share ≥ 0.0001", 0.01, 0.0001, False),
    ("hold, share of right lengths ≥ 0.95", 0.01, 0.95, True),
    ("hold, share of right lengths ≥ 0.9", 0.01, 0.9, True),
    ("hold, share of right lengths ≥ 0.8", 0.01, 0.8, True),
    ("hold, share of right lengths ≥ 0.6", 0.01, 0.6, True),
    ("hold, share of right lengths ≥ 0.4", 0.01, 0.4, True),
    ("hold, every right length", 0.01, 0.0, True),
    ("hold, known words, share of right lengths ≥ 0.95", 0.01, 0.95, "known"),
    ("hold, known words, share of right lengths ≥ 0.9", 0.01, 0.9, "known"),
    ("hold, known words, share of right lengths ≥ 0.5", 0.01, 0.5, "known"),
    ("hold, known words, share of right lengths ≥ 0.2", 0.01, 0.2, "known"),
    ("hold, known words, any right length", 0.01, 0.0, "known"),
]


def wrong_count(n: int, rng: np.random.Generator) -> int:
    """``n`` off by 1–3 letters, below or above at random (above when below would leave none)."""
    off = int(rng.integers(1, 4))
    return n - off if n - off >= 1 and rng.random() < 0.5 else n + off


def pools(args: argparse.Namespace) -> None:
    """Append each validation gap's whole pool, per condition, to ``args.out``."""
    torch.set_num_threads(1)
    table = load_documents(args.prepared, "validation", ["ddb"])
    gaps = build_synthetic(table, "ddb", "validation", args.per_length, conditions=["exact"], seed=SEED)
    rng = np.random.default_rng(SEED)
    todo = []
    for gap in gaps:
        n = gap.hint.lo
        todo += [("right", gap, Hint.exact(n)), ("wrong", gap, Hint.exact(wrong_count(n, rng)))]
    done = set()
    if args.out.exists():
        done = {(r["condition"], r["id"]) for r in map(json.loads, args.out.open(encoding="utf-8"))}
    todo = [t for t in todo if (t[0], t[1].id) not in done]
    print(f"{2 * len(gaps)} restorations, {len(todo)} to run", flush=True)
    restorer = Presented(load_restorer(present=False), default_forms(), Ranking(NONE))
    started = time.perf_counter()
    with args.out.open("a", encoding="utf-8") as out:
        for i, (condition, gap, hint) in enumerate(todo):
            cands = restorer.candidates(gap.prefix, gap.suffix, hint, WHOLE_POOL)
            row = gap.to_dict() | {"condition": condition, "hint": hint.to_json()}
            row["pool"] = [[c.text, c.prob, c.log_score] for c in cands]
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            if (i + 1) % 10 == 0:
                print(f"{i + 1}/{len(todo)} in {time.perf_counter() - started:.0f} s", flush=True)


def example(args: argparse.Namespace) -> None:
    """Save the whole pool of :data:`EXAMPLE`'s gap (as ``pools`` saves a gap's) to ``args.out``."""
    torch.set_num_threads(1)
    request = validate(RestoreRequest(EXAMPLE))
    prefix, suffix = GapContexts(request.document.segments).context(0, [])
    restorer = Presented(load_restorer(present=False), default_forms(), Ranking(NONE))
    cands = restorer.candidates(prefix, suffix, request.hints[0], WHOLE_POOL)
    row = {"id": "issue36", "prefix": prefix, "suffix": suffix, "target": "οικετου", "condition": "right"}
    row |= {"hint": request.hints[0].to_json(), "pool": [[c.text, c.prob, c.log_score] for c in cands]}
    args.out.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")


def annotated(path: Path) -> list[dict]:
    """The saved gaps, each pool annotated (display, unknown words, notes) with its :func:`doubts`."""
    gaps = []
    for row in map(json.loads, path.open(encoding="utf-8")):
        hint = Hint.from_json(row["hint"])
        pool = [Candidate(text, prob, score) for text, prob, score in row["pool"]]
        cands = annotate(pool, default_forms(), row["prefix"], row["suffix"], hint)
        flags = [doubts(c, row["prefix"], row["suffix"], hint) for c in cands]
        gaps.append(row | {"hint": hint, "cands": cands, "flags": flags})
    return gaps


def shown(gap: dict, miss: float, floor: float | None, of_count: bool | str, calibration) -> list[Candidate]:
    """A gap's list as :meth:`Presented.present` would show it under one treatment."""
    demotions = Demotions(hint_miss=miss, count_floor=floor)
    factors = [demotions.factor(f) for f in gap["flags"]]
    if floor is not None:
        missed = [f[2] for f in gap["flags"]]
        factors = hold_count(gap["cands"], factors, missed, floor, bool(of_count), of_count == "known")
    return Ranking(calibration=calibration).rank_factored(gap["cands"], factors, gap["hint"])[:SHOWN]


def choose(args: argparse.Namespace) -> None:
    """Print the Markdown table of the module docstring."""
    gaps = annotated(args.pools)
    calibration = calibration_for(DEFAULT_MODEL, scoring_of(DEFAULT_MODEL))
    counts = {c: sum(g["condition"] == c for g in gaps) for c in ("right", "wrong")}
    print(f"{args.pools}: {counts['right']} gaps with the right count, {counts['wrong']} with a wrong one\n")
    examples = annotated(args.example) if args.example else []
    print(
        "| treatment | right W.Top-1 | right W.Top-20 | wrong W.Top-1 | wrong W.Top-20 "
        "| first misses the count (right / wrong) | first shown / right (right count) |"
        + "".join(f" {e['id']} first |" for e in examples)
    )
    print("|---|---:|---:|---:|---:|---:|---:|" + "---|" * len(examples))
    for label, miss, floor, of_count in TREATMENTS:
        scores: dict[str, list] = {"right": [], "wrong": []}
        firsts = {"right": 0, "wrong": 0}
        top1 = []
        for g in gaps:
            out = shown(g, miss, floor, of_count, calibration)
            scores[g["condition"]].append(score_gap(g["target"], [c.text for c in out], SHOWN))
            if out:
                firsts[g["condition"]] += doubts(out[0], g["prefix"], g["suffix"], g["hint"])[2]
                if g["condition"] == "right":
                    top1.append((out[0].prob, agnostic(out[0].text) == agnostic(g["target"])))
        m = {c: uniform(s) for c, s in scores.items()}
        mean_p, mean_right = (sum(x[i] for x in top1) / max(1, len(top1)) for i in (0, 1))
        print(
            f"| {label} | {m['right'].top1:.3f} | {m['right'].top20:.3f} | {m['wrong'].top1:.3f} "
            f"| {m['wrong'].top20:.3f} | {firsts['right']} / {firsts['wrong']} | {mean_p:.3f} / {mean_right:.3f} |"
            + "".join(f" {shown(e, miss, floor, of_count, calibration)[0].display} |" for e in examples),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("pools", help="save the shipped default's whole pools, right and wrong counts")
    run.add_argument("--prepared", type=Path, required=True)
    run.add_argument("--per-length", type=int, default=6)
    run.add_argument("--out", type=Path, required=True)
    pick = sub.add_parser("choose", help="re-rank the saved pools under each treatment")
    pick.add_argument("--pools", type=Path, required=True)
    pick.add_argument("--example", type=Path, help="a file `example` wrote: its first reading per treatment")
    one = sub.add_parser("example", help="save the whole pool of issue 36's example")
    one.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    {"pools": pools, "choose": choose, "example": example}[args.command](args)


if __name__ == "__main__":
    main()
