"""Measure the demotion of readings that repeat the context or miss an exact hint, on validation.

(``apollo-restore tune --what demotions`` fits the factors into a model folder; this script
measures a grid of them, the notes' repeat length and the ECE under the shipped calibration.)

    python benchmarks/list_notes.py pools --prepared /work/data/prepared-f1k --per-length 5 \\
        --out /tmp/list-notes-pools.jsonl          # the shipped default, once (resumable)
    python benchmarks/list_notes.py pools ... --per-length 10 --out /tmp/list-notes-pools.jsonl  # more gaps
    python benchmarks/list_notes.py choose --pools /tmp/list-notes-pools.jsonl
    python benchmarks/list_notes.py pools ... --per-length 3 --conditions wrong100 --out /tmp/wrong.jsonl
    python benchmarks/list_notes.py choose --pools /tmp/wrong.jsonl   # every exact hint wrong

``pools`` runs the shipped default (:func:`~apollo_restore.restoration.load.load_restorer`) ONCE over
ddb **validation** gaps (lengths 1–20, ``--per-length`` spans each, hint conditions exact and
none, seed 21) and appends each gap's whole ranked pool, as the presentation layer receives it
from the ensemble (readings, restorer probabilities normalised over the pool, log-scores), to a
JSONL file, one gap a line; a rerun restores only the gaps the file lacks.

With ``--conditions wrong100`` every gap gets a wrong exact hint
(:func:`~apollo_restore.evaluate.gapsets.hints_for`): ``choose`` then prints W.Top-1/W.Top-20 per
hint-miss factor on those gaps, whether demoting a missed hint costs the gaps whose hint is wrong.

``choose`` re-ranks the saved pools offline exactly as
:class:`~apollo_restore.restoration.presentation.present.Presented` would for each pair of
factors (repeat, hint miss): annotate, demote truncated readings by
:data:`~apollo_restore.schema.folder.TRUNCATED_FACTOR` and flagged ones by the
factors, then apply the shipped calibration. It prints Markdown: per factor pair the uniform-weighted Top-1 and
Top-20 per condition, the share of shown (top-20) readings carrying each note (a missed hint:
of the exact-hint gaps' readings), the gaps whose first reading repeats the context or misses an
exact hint, and (a table before the grid) the mean shown probability of the first reading and of
the top 20 against how often they are right, before and with the shipped factors; and the ECE of the
top-1 and top-20 probabilities (:func:`~apollo_restore.evaluate.metrics.reliability`) under the
shipped calibration (fitted before these demotions).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from apollo_restore.data.orthography import default_forms
from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic, parse_gap_id
from apollo_restore.evaluate.metrics import agnostic, reliability, score_gap, uniform
from apollo_restore.hint import Hint
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.load import calibration_for, load_restorer, scoring_of
from apollo_restore.restoration.presentation.notes import notes_for
from apollo_restore.restoration.presentation.present import Presented, annotate
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.doubts import doubts, repeats
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.restoration.ranking.pool import WHOLE_POOL
from apollo_restore.schema.folder import TRUNCATED_FACTOR
from apollo_restore.schema.restoration import Candidate

SHOWN = 20  # readings a list shows by default
NONE = Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None)


def pools(args: argparse.Namespace) -> None:
    """Append each validation gap's whole pool to ``args.out`` (see the module docstring)."""
    torch.set_num_threads(1)
    table = load_documents(args.prepared, "validation", ["ddb"])
    conditions = args.conditions.split(",")
    gaps = build_synthetic(table, "ddb", "validation", args.per_length, conditions=conditions, seed=21)
    done = {json.loads(line)["id"] for line in args.out.open(encoding="utf-8")} if args.out.exists() else set()
    todo = [g for g in gaps if g.id not in done]
    print(f"{len(gaps)} gaps, {len(todo)} to restore", flush=True)
    restorer = Presented(load_restorer(present=False), default_forms(), Ranking(NONE))
    started = time.perf_counter()
    with args.out.open("a", encoding="utf-8") as out:
        for i, gap in enumerate(todo):
            cands = restorer.candidates(gap.prefix, gap.suffix, gap.hint, WHOLE_POOL)
            row = gap.to_dict() | {"pool": [[c.text, c.prob, c.log_score] for c in cands]}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            if (i + 1) % 10 == 0:
                print(f"{i + 1}/{len(todo)} in {time.perf_counter() - started:.0f} s", flush=True)


def annotated(path: Path) -> list[dict]:
    """The saved gaps, each with its pool annotated (display, unknown words, notes) and the
    :func:`~apollo_restore.restoration.ranking.doubts.doubts` of each reading."""
    gaps = []
    for row in map(json.loads, path.open(encoding="utf-8")):
        hint = Hint.from_json(row["hint"])
        pool = [Candidate(text, prob, score) for text, prob, score in row["pool"]]
        cands = annotate(pool, default_forms(), row["prefix"], row["suffix"], hint)
        flags = [doubts(c, row["prefix"], row["suffix"], hint) for c in cands]
        gaps.append(row | {"hint": hint, "cands": cands, "flags": flags})
    return gaps


def repeat_table(gaps: list[dict]) -> None:
    """Per least repeat length: the gaps whose answer would be called a repeat (a wrong note)
    and the share of the shipped top 20 (truncation demoted, calibrated) that would be."""
    calibration = calibration_for(DEFAULT_MODEL, scoring_of(DEFAULT_MODEL))
    print("| repeat over ≥ N letters | answers called a repeat | top-20 readings called a repeat |")
    print("|---:|---:|---:|")
    shown = {}
    for g in gaps:
        factors = [
            Demotions(truncated=TRUNCATED_FACTOR, repeat=1.0, hint_miss=1.0, count_floor=None).factor(f)
            for f in g["flags"]
        ]
        shown[g["id"]] = Ranking(calibration=calibration).rank_factored(g["cands"], factors, g["hint"])[:SHOWN]
    for least in (2, 3, 4, 5, 6):
        wrong = sum(repeats(g["target"], g["prefix"], g["suffix"], least) is not None for g in gaps)
        flagged = [repeats(c.text, g["prefix"], g["suffix"], least) is not None for g in gaps for c in shown[g["id"]]]
        print(f"| {least} | {wrong} of {len(gaps)} | {sum(flagged) / len(flagged):.1%} |")
    print()


def measure(gaps: list[dict], demotions: Demotions) -> dict:
    """W.Top-1/W.Top-20 per condition, the share of shown readings with each note, ECE (top-1,
    top-20) under the shipped calibration, for one set of factors."""
    calibration = calibration_for(DEFAULT_MODEL, scoring_of(DEFAULT_MODEL))
    scores: dict[str, list] = {"exact": [], "none": []}
    noted = {"hint": 0, "repeat": 0, "word": 0, "any": 0, "shown": 0, "exact": 0, "first repeat": 0, "first miss": 0}
    top1, top20 = ([], []), ([], [])
    for g in gaps:
        shown = Ranking(calibration=calibration).rank_factored(
            g["cands"], [demotions.factor(f) for f in g["flags"]], g["hint"]
        )[:SHOWN]
        target = agnostic(g["target"])
        scores[g["hint"].kind].append(score_gap(g["target"], [c.text for c in shown], SHOWN))
        for c in shown:
            noted["shown"] += 1
            noted["exact"] += g["hint"].is_exact
            noted["any"] += bool(c.notes)
            noted["hint"] += any(n.endswith(f"hint {g['hint'].lo}") for n in c.notes)
            noted["repeat"] += any(n.startswith("repeats") for n in c.notes)
            noted["word"] += any(n.startswith("leaves") for n in c.notes)
        first = doubts(shown[0], g["prefix"], g["suffix"], g["hint"]) if shown else (False, False, False)
        noted["first repeat"] += first[1]
        noted["first miss"] += first[2]
        right = [agnostic(c.text) == target for c in shown]
        top1[0].append(shown[0].prob if shown else 0.0), top1[1].append(bool(right) and right[0])
        top20[0].append(min(1.0, sum(c.prob for c in shown))), top20[1].append(any(right))
    out = {f"{kind} {m}": getattr(uniform(s), m) for kind, s in scores.items() for m in ("top1", "top20")}
    out |= {key: noted[key] / noted["shown"] for key in ("repeat", "word", "any")}
    out["hint"] = noted["hint"] / noted["exact"]
    out |= {key: noted[key] for key in ("first repeat", "first miss")}
    return out | {"ece1": reliability(*top1)["ece"], "ece20": reliability(*top20)["ece"]}


def calibration_table(gaps: list[dict]) -> None:
    """Per condition, before (truncation alone demoted) and with the shipped factors: the mean
    shown probability of the first reading and of the top 20 against how often they are right."""
    calibration = calibration_for(DEFAULT_MODEL, scoring_of(DEFAULT_MODEL))
    print("| demotions | condition | top-1 shown | top-1 right | top-20 shown (sum) | top-20 right |")
    print("|---|---|---:|---:|---:|---:|")
    for name, demotions in (
        ("truncated only", Demotions(truncated=TRUNCATED_FACTOR, repeat=1.0, hint_miss=1.0, count_floor=None)),
        ("shipped", Demotions()),
    ):
        for kind in ("exact", "none"):
            rows = []
            for g in (g for g in gaps if g["hint"].kind == kind):
                shown = Ranking(calibration=calibration).rank_factored(
                    g["cands"], [demotions.factor(f) for f in g["flags"]], g["hint"]
                )[:SHOWN]
                right = [agnostic(c.text) == agnostic(g["target"]) for c in shown]
                rows.append((shown[0].prob, right[0], sum(c.prob for c in shown), any(right)))
            means = [sum(r[i] for r in rows) / len(rows) for i in range(4)]
            print(
                f"| {name} {demotions.repeat:g}/{demotions.hint_miss:g} | {kind} | "
                + " | ".join(f"{m:.3f}" for m in means)
                + " |"
            )
    print()


def wins(gaps: list[dict]) -> None:
    """Gaps whose first reading turns right / wrong with the shipped factors (vs truncation alone)."""
    calibration = calibration_for(DEFAULT_MODEL, scoring_of(DEFAULT_MODEL))
    won = lost = 0
    for g in gaps:
        right = []
        for demotions in (
            Demotions(truncated=TRUNCATED_FACTOR, repeat=1.0, hint_miss=1.0, count_floor=None),
            Demotions(),
        ):
            factors = [demotions.factor(f) for f in g["flags"]]
            shown = Ranking(calibration=calibration).rank_factored(g["cands"], factors, g["hint"])
            right.append(bool(shown) and agnostic(shown[0].text) == agnostic(g["target"]))
        won, lost = won + (right[1] and not right[0]), lost + (right[0] and not right[1])
    print(f"Shipped factors vs truncation alone: first reading right on {won} more gaps, wrong on {lost} more.\n")


def note_cost(gaps: list[dict]) -> None:
    """Milliseconds per gap that the notes and the doubts of a whole pool add (one thread)."""
    started = time.perf_counter()
    for g in gaps:
        for c in g["cands"]:
            notes_for(c, g["prefix"], g["suffix"], g["hint"]), doubts(c, g["prefix"], g["suffix"], g["hint"])
    ms = (time.perf_counter() - started) * 1000 / len(gaps)
    print(f"Notes and doubts of a whole pool: {ms:.1f} ms per gap.\n")


def wrong_hints(gaps: list[dict], factors: list[float]) -> None:
    """W.Top-1/W.Top-20 of gaps whose exact hint is wrong, per hint-miss factor (the shipped
    truncation and repeat factors): what the demotion of a missed hint costs when the hint is wrong."""
    calibration = calibration_for(DEFAULT_MODEL, scoring_of(DEFAULT_MODEL))
    print(f"{len(gaps)} gaps with a wrong exact hint:\n")
    print("| hint-miss factor | W.Top-1 | W.Top-20 |\n|---:|---:|---:|")
    for miss in factors:
        demotions = Demotions(hint_miss=miss, count_floor=None)
        scores = []
        for g in gaps:
            shown = Ranking(calibration=calibration).rank_factored(
                g["cands"], [demotions.factor(f) for f in g["flags"]], g["hint"]
            )[:SHOWN]
            scores.append(score_gap(g["target"], [c.text for c in shown], SHOWN))
        summary = uniform(scores)
        print(f"| {miss:g} | {summary.top1:.3f} | {summary.top20:.3f} |")
    print()


def choose(args: argparse.Namespace) -> None:
    """Print the Markdown tables of the module docstring."""
    gaps = annotated(args.pools)
    wrong = [g for g in gaps if parse_gap_id(g["id"]).condition.startswith("wrong")]
    if wrong:
        wrong_hints(wrong, [float(f) for f in args.factors.split(",")])
        gaps = [g for g in gaps if g not in wrong]
        if not gaps:
            return
    in_pool = sum(agnostic(g["target"]) in {agnostic(c.text) for c in g["cands"]} for g in gaps)
    print(f"{args.pools}: {len(gaps)} gaps, the answer in the whole pool for {in_pool}\n")
    repeat_table(gaps)
    calibration_table(gaps)
    wins(gaps)
    note_cost(gaps)
    print(
        "| repeat factor | hint-miss factor | exact W.Top-1 | exact W.Top-20 | none W.Top-1 | none W.Top-20 "
        "| top 20: missed hint (exact) | repeat | non-word | any note | first reading: repeat | missed hint "
        "| ECE top-1 | ECE top-20 |"
    )
    print("|" + "---:|" * 14)
    factors = [float(f) for f in args.factors.split(",")]
    for repeat in factors:
        for miss in factors:
            m = measure(gaps, Demotions(truncated=TRUNCATED_FACTOR, repeat=repeat, hint_miss=miss, count_floor=None))
            print(
                f"| {repeat:g} | {miss:g} | {m['exact top1']:.3f} | {m['exact top20']:.3f} | {m['none top1']:.3f} "
                f"| {m['none top20']:.3f} | {m['hint']:.1%} | {m['repeat']:.1%} | {m['word']:.1%} | {m['any']:.1%} "
                f"| {m['first repeat']} | {m['first miss']} "
                f"| {m['ece1']:.3f} | {m['ece20']:.3f} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("pools", help="save the shipped default's whole pools on validation gaps")
    run.add_argument("--prepared", type=Path, required=True)
    run.add_argument("--per-length", type=int, default=5)
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--conditions", default="exact,none", help="hint conditions, comma-separated")
    pick = sub.add_parser("choose", help="re-rank the saved pools under each pair of factors")
    pick.add_argument("--pools", type=Path, required=True)
    pick.add_argument("--factors", default="1,0.3,0.1,0.03,0.01,0.001")
    args = parser.parse_args()
    (pools if args.command == "pools" else choose)(args)


if __name__ == "__main__":
    main()
