"""Readings made of the document's own words (issue 22): pool coverage, ranking and cost, on ddb VALIDATION.

    python benchmarks/document_words.py --prepared data/prepared --out /tmp/pools-words.jsonl
    python benchmarks/document_words.py --offline --out /tmp/pools-words.jsonl   # re-rank only
    python benchmarks/document_words.py --prepared data/prepared --timing 40     # CPU per gap

Two gap sets, each asked with an exact hint and with none:

- ``sample``: ``--per-length`` synthetic spans per length 1–20 (seed 11), as any benchmark draws;
- ``targeted``: spans of 4–20 letters drawn ``--draw`` per length (seed 23), of which up to
  ``--keep`` per length whose answer (or one of its words of ≥ 5 letters) stands in the visible
  context, and as many of the same length whose answer does not: a same-length comparison.

For each gap the shipped members (neural, infini, infini_backward; hint widened by ``--slack``)
and the proposal sources that read the document — :class:`DocumentCopy` (spans of the context),
:class:`DocumentWords` (its words, ``restoration/members/document_words.py``) and the vocabulary completions
(:class:`Vocabulary` over the edition-forms keys) — each propose 20 readings; the union is
scored by every scoring member and appended to ``--out`` (a rerun resumes). Offline, pools are
restricted to the readings some chosen sources proposed (a member's score of a reading does not
depend on the rest of the pool), and ranked by the shipped weights plus ``copy`` ×
DocumentCopy's evidence plus ``words`` × :func:`document_letters`; the two weights are chosen
on a grid by mean W.Top-1 (exact, none) of the ``sample`` gaps, out of fold by document (chosen
on one half of the documents, scored on the other).

``--timing N`` runs the shipped default (:func:`load_restorer`, bare) and the same ensemble (its
own copy: no prompt run is shared) with the document members added (weights ``--copy``,
``--words``), one after the other on the same N sample gaps (exact and none; which goes
first alternates), and prints CPU ms per gap, p50 and p95 (``time.process_time``, one torch
thread).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import zlib
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from apollo_restore.data.formats import write_gapset
from apollo_restore.data.normalise import letter_count
from apollo_restore.data.orthography import default_forms
from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic, condition_of
from apollo_restore.evaluate.metrics import agnostic, answer_in_context, score_gap, uniform
from apollo_restore.restoration.config import DEFAULT_RESTORE_CONFIG
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members.document_copy import DocumentCopy
from apollo_restore.restoration.members.document_words import DocumentWords, Vocabulary, WordConfig, document_letters
from apollo_restore.restoration.members.ensemble import Ensemble, LengthPrior
from apollo_restore.restoration.members.infini import load_infini
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.ranking.pool import union

SHIPPED = {"neural": 1.0, "infini": 1.0, "infini_backward": 0.5, "length": 8.0}
BASE = ("neural", "infini", "infini_backward")
POOLS = {
    "shipped": BASE,
    "+copy": (*BASE, "copy"),
    "+words": (*BASE, "words"),
    "+copy+words": (*BASE, "copy", "words"),
    "+copy+words+vocab": (*BASE, "copy", "words", "vocab"),
}
COPY_WEIGHTS = (0.0, 0.1, 0.2, 0.3)
WORD_WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8)
FEATURES = {"letters ≥4, stems": (4, 2), "letters ≥4, exact": (4, 0), "letters ≥5, stems": (5, 2)}


def in_context(gap: dict) -> bool:
    """Whether the answer, or one of its words of ≥ 5 letters, stands in the visible context."""
    return answer_in_context(gap["prefix"], gap["suffix"], gap["target"])


def gap_sets(args) -> list[tuple[str, object]]:
    """``(set name, GapExample)`` of the sample and targeted sets (see the module docstring)."""
    table = load_documents(args.prepared, split="validation", sources=["ddb"])
    conds = ("exact", "none")
    out = [("sample", g) for g in build_synthetic(table, "ddb", "validation", args.per_length, conds, seed=11)]
    drawn = build_synthetic(table, "ddb", "validation", args.draw, conds, lengths=range(4, 21), seed=23)
    spans: dict[str, list] = {}
    for g in drawn:
        spans.setdefault(g.id.rsplit(":", 1)[0], []).append(g)
    kept: dict[tuple[int, bool], int] = {}
    for same in spans.values():
        g = same[0]
        key = (letter_count(g.target), in_context({"prefix": g.prefix, "suffix": g.suffix, "target": g.target}))
        if kept.get(key, 0) < args.keep:
            kept[key] = kept.get(key, 0) + 1
            out += [("targeted", s) for s in same]
    return out


def collect(args) -> None:
    """Append each gap's scored pool to ``--out`` (gaps already there are skipped)."""
    done = {json.loads(line)["id"] for line in args.out.read_text().splitlines()} if args.out.exists() else set()
    gaps = [(name, g) for name, g in gap_sets(args) if f"{name}/{g.id}" not in done]
    vocabulary = Vocabulary(default_forms().keys)
    proposers = {
        "neural": NeuralMember.load(args.model, config=DEFAULT_RESTORE_CONFIG.replace(hint_slack=args.slack)),
        "infini": load_infini("forward", discount=0.6, max_context=40),
        "infini_backward": load_infini("backward", discount=0.6, max_context=40),
        "copy": DocumentCopy(),
        "words": DocumentWords(),
    }
    scorers = {name: proposers[name] for name in (*BASE, "copy")} | {"length": LengthPrior()}
    with args.out.open("a") as out:
        for name, gap in tqdm(gaps, desc="pools"):
            hint = gap.hint.widen(args.slack)
            proposed = {  # as the shipped ensemble: the neural member widens the hint itself
                m: [c.text for c in f.candidates(gap.prefix, gap.suffix, gap.hint if m == "neural" else hint, 20)]
                for m, f in proposers.items()
            }
            proposed["vocab"] = vocabulary.completions(gap.prefix, gap.suffix, hint, WordConfig(vocabulary_limit=20))
            readings, origins = union(proposed.items())
            row = {
                "id": f"{name}/{gap.id}", "set": name, "doc": gap.doc, "condition": condition_of(gap),
                "prefix": gap.prefix, "suffix": gap.suffix, "target": gap.target, "readings": readings,
                "origin": origins,
            }  # fmt: skip
            for member, restorer in scorers.items():
                row[member] = restorer.score_readings(gap.prefix, gap.suffix, gap.hint, readings)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()


def add_features(rows: list[dict]) -> None:
    """Each row's :func:`document_letters` under every variant of :data:`FEATURES`."""
    for row in rows:
        for name, (min_word, ending) in FEATURES.items():
            row[name] = document_letters(row["prefix"], row["suffix"], row["readings"], min_word, ending)


def scored(
    row: dict, sources: tuple[str, ...], copy: float, words: float, feature: str
) -> tuple[list[str], np.ndarray]:
    """The readings some of ``sources`` proposed, and their weighted sums of member scores ``(R,)``."""
    keep = [i for i, o in enumerate(row["origin"]) if set(o) & set(sources)]
    weights = {**SHIPPED, "copy": copy, feature: words}
    scores = sum(w * np.asarray(row[m], dtype=np.float64)[keep] for m, w in weights.items())
    return [row["readings"][i] for i in keep], scores


def ranking(row: dict, sources: tuple[str, ...], copy: float, words: float, feature: str) -> list[str]:
    """The readings some of ``sources`` proposed, best first."""
    readings, scores = scored(row, sources, copy, words, feature)
    return [readings[i] for i in np.argsort(-scores, kind="stable")]


def fold_of(row: dict) -> int:
    return zlib.crc32(row["doc"].encode()) % 2


def w_top(rows: list[dict], rank) -> dict[str, tuple[float, float, float]]:
    """Per condition: W.Top-1, W.Top-20 and pool coverage (truth anywhere in the ranked pool)."""
    out = {}
    for cond in ("exact", "none"):
        group = [r for r in rows if r["condition"] == cond]
        scores = [score_gap(r["target"], rank(r)) for r in group]
        cover = [score_gap(r["target"], rank(r), k=10_000).top20 for r in group]
        out[cond] = (uniform(scores).top1, uniform(scores).top20, float(np.mean(cover)))
    return out


def choose(rows: list[dict], sources: tuple[str, ...], feature: str) -> dict[int, tuple[float, float]]:
    """For each fold of documents, the (copy, words) weights best on the *other* fold's sample
    gaps (mean W.Top-1 of exact and none; ties: the smaller weights, listed first)."""
    sample = [r for r in rows if r["set"] == "sample"]
    best = {}
    for half in (0, 1):
        train = [r for r in sample if fold_of(r) != half]
        scored = []
        for c in COPY_WEIGHTS:
            for w in WORD_WEIGHTS:
                res = w_top(train, lambda r: ranking(r, sources, c, w, feature))
                scored.append((statistics.mean(v[0] for v in res.values()), -c - w, c, w))
        _, _, c, w = max(scored)
        best[half] = (c, w)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="neural model folder (default: the embedded one)")
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--per-length", type=int, default=3)
    parser.add_argument("--draw", type=int, default=25, help="targeted set: spans drawn per length")
    parser.add_argument("--keep", type=int, default=3, help="targeted set: spans kept per length and kind")
    parser.add_argument("--slack", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("/tmp/pools-words.jsonl"))
    parser.add_argument("--offline", action="store_true", help="only re-rank the gaps already in --out")
    parser.add_argument("--timing", type=int, default=0, help="time the shipped ensemble on N sample gaps, then stop")
    parser.add_argument("--copy", type=float, default=0.2, help="--timing: DocumentCopy's weight")
    parser.add_argument("--words", type=float, default=0.2, help="--timing: DocumentWords' weight")
    parser.add_argument("--write-gaps", type=Path, help="write the targeted set as a gap-set JSONL, then stop")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.timing:
        return timing(args)
    if args.write_gaps:
        n = write_gapset(args.write_gaps, [g for name, g in gap_sets(args) if name == "targeted"])
        return print(f"{n} targeted gaps → {args.write_gaps}")
    if not args.offline:
        collect(args)
    rows = [json.loads(line) for line in args.out.read_text().splitlines()]
    add_features(rows)
    report(rows)


def origins_table(rows: list[dict]) -> None:
    """Where the truth is in the pool: any source, each document source, only a document source."""
    print(
        "| set | condition | answer in context | gaps | truth in pool | by copy | by words | by vocab | only by these |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name in ("sample", "targeted"):
        for cond in ("exact", "none"):
            for flag in (True, False):
                group = [r for r in rows if r["set"] == name and r["condition"] == cond]
                group = [r for r in group if (letter_count(r["target"]) >= 4 and in_context(r)) == flag]
                found = []
                for r in group:
                    truth = agnostic(r["target"])
                    found.append(
                        next((set(o) for x, o in zip(r["readings"], r["origin"]) if agnostic(x) == truth), set())
                    )
                cells = [sum(bool(o) for o in found)] + [sum(m in o for o in found) for m in ("copy", "words", "vocab")]
                cells.append(sum(bool(o) and o <= {"copy", "words", "vocab"} for o in found))
                label = "yes (≥ 4 letters)" if flag else "no"
                print(f"| {name} | {cond} | {label} | {len(group)} | " + " | ".join(map(str, cells)) + " |")


def context_top1(rows: list[dict], rank) -> dict[str, tuple[float, float]]:
    """Per condition, on the targeted gaps of ≥ 4 letters: Top-1 of those whose answer is in
    the context, and of the others weighted to the same lengths."""
    out = {}
    for cond in ("exact", "none"):
        group = [r for r in rows if r["set"] == "targeted" and r["condition"] == cond]
        group = [r for r in group if letter_count(r["target"]) >= 4]
        top = {r["id"]: score_gap(r["target"], rank(r)).top1 for r in group}
        by_len: dict[int, list[float]] = {}
        for r in group:
            if not in_context(r):
                by_len.setdefault(letter_count(r["target"]), []).append(top[r["id"]])
        yes = [r for r in group if in_context(r) and letter_count(r["target"]) in by_len]
        matched = float(np.mean([np.mean(by_len[letter_count(r["target"])]) for r in yes]))
        out[cond] = (float(np.mean([top[r["id"]] for r in yes])), matched)
    return out


def report(rows: list[dict]) -> None:
    """The Markdown tables of BENCHMARKS.md."""
    sample = [r for r in rows if r["set"] == "sample"]
    targeted = [r for r in rows if r["set"] == "targeted"]
    print(f"## Document words on ddb validation ({len(sample)} sample gaps, {len(targeted)} targeted)\n")
    print("### Where the truth is in the pool (gaps)\n")
    origins_table(rows)
    print("\n### Pools and weights, chosen out of fold by document on the sample gaps\n")
    cells = " | ".join(f"{c} W.Top-1 / W.Top-20 / coverage" for c in ("exact", "none"))
    print(f"| pool | feature | weights (fold 0 / 1) | {cells} | in context / others (targeted, exact; none) |")
    print("|---|---|---|---:|---:|---:|")
    for pool, sources in POOLS.items():
        for feature in FEATURES if "words" in sources else list(FEATURES)[:1]:
            best = {0: (0.0, 0.0), 1: (0.0, 0.0)} if pool == "shipped" else choose(rows, sources, feature)

            def rank(r, sources=sources, best=best, feature=feature):
                c, w = best[fold_of(r)]
                return ranking(r, sources, c, w, feature)

            res = w_top(sample, rank)
            cells = " | ".join(f"{t1:.3f} / {t20:.3f} / {cov:.3f}" for t1, t20, cov in res.values())
            ctx = "; ".join(f"{a:.3f} / {b:.3f}" for a, b in context_top1(rows, rank).values())
            label = " / ".join(f"copy {c}, words {w}" for c, w in best.values())
            print(f"| {pool} | {feature if 'words' in sources else '–'} | {label} | {cells} | {ctx} |")
    feature = list(FEATURES)[0]
    print(f"\n### Fixed weights, all document sources ({feature})\n")
    print("| copy | words | exact W.Top-1 / W.Top-20 | none W.Top-1 / W.Top-20 | in context / others, exact | none |")
    print("|---:|---:|---:|---:|---:|---:|")
    for c in COPY_WEIGHTS:
        for w in WORD_WEIGHTS:

            def rank(r, c=c, w=w):
                return ranking(r, POOLS["+copy+words+vocab"], c, w, feature)

            res = w_top(sample, rank)
            ctx = context_top1(rows, rank)
            cells = " | ".join(f"{t1:.3f} / {t20:.3f}" for t1, t20, _ in res.values())
            print(f"| {c} | {w} | {cells} | " + " | ".join(f"{a:.3f} / {b:.3f}" for a, b in ctx.values()) + " |")
    print("\n### No hint: the letter count with the most pooled probability first\n")
    bands = " | ".join(f"{b} Δlen / Top-1" for b in ("1–4", "5–8", "9–12", "13–16", "17–20"))
    print(f"| temperature | sample W.Top-1 | {bands} | targeted W.Top-1 | {bands} |")
    print("|---|" + "---:|" * 12)
    for temperature in (0.0, 1.0, 2.0):
        length_by_marginal(rows, temperature)


def length_by_marginal(rows: list[dict], temperature: float) -> None:
    """One row of the no-hint length table: the shipped weights, the first reading taken from
    the letter count with the largest pooled probability ``Σ_{|m|=n} exp(s(m) / T)`` (``T`` 0:
    the best reading, as shipped), per set: W.Top-1 and, by band of true letters, Δlen / Top-1."""
    feature, bands = list(FEATURES)[0], ((1, 4), (5, 8), (9, 12), (13, 16), (17, 20))

    language_models = SHIPPED["neural"] + SHIPPED["infini"] + SHIPPED["infini_backward"]

    def rank(r: dict) -> list[str]:
        readings, scores = scored(r, POOLS["+copy+words+vocab"], 0.2, 0.1, feature)
        order = [readings[i] for i in np.argsort(-scores, kind="stable")]
        if not temperature:
            return order
        scores = scores / language_models  # the ensemble's weighted mean
        letters = np.array([letter_count(x) for x in readings])
        mass = {n: np.logaddexp.reduce(scores[letters == n] / temperature) for n in set(letters.tolist())}
        best = max(mass, key=mass.get)
        first = next(x for x in order if letter_count(x) == best)
        return [first, *(x for x in order if x != first)]

    cells = []
    for name in ("sample", "targeted"):
        group = [r for r in rows if r["set"] == name and r["condition"] == "none"]
        scores = [score_gap(r["target"], rank(r)) for r in group]
        by_band = []
        for lo, hi in bands:
            band = [sc for sc, r in zip(scores, group) if lo <= letter_count(r["target"]) <= hi]
            by_band.append(f"{np.mean([x.dlen for x in band]):+.1f} / {np.mean([x.top1 for x in band]):.2f}")
        cells.append(f"{uniform(scores).top1:.3f} | " + " | ".join(by_band))
    print(f"| {temperature or 'best reading (shipped)'} | " + " | ".join(cells) + " |")


def timing(args) -> None:
    """CPU ms per gap of the shipped ensemble before and after adding the document members."""
    table = load_documents(args.prepared, split="validation", sources=["ddb"])
    gaps = build_synthetic(table, "ddb", "validation", args.per_length, ("exact", "none"), seed=11)
    gaps = gaps[:: max(1, len(gaps) // args.timing)][: args.timing]
    shipped = load_restorer(args.model, present=False)
    base = load_restorer(args.model, present=False)  # its own neural model: no prompt shared
    after = Ensemble(
        [*base.members, (DocumentCopy(), args.copy), (DocumentWords(), args.words)],
        config=base.config,
        neural=base.neural,
    )
    restorers = {"shipped": shipped, "with document words": after}
    for restorer in restorers.values():  # warm up
        restorer.candidates(gaps[0].prefix, gaps[0].suffix, gaps[0].hint)
    times: dict[str, list[float]] = {name: [] for name in restorers}
    for n, gap in enumerate(tqdm(gaps, desc="timing")):
        for name in list(restorers)[:: 1 if n % 2 else -1]:  # alternate which goes first
            start = time.process_time()
            restorers[name].candidates(gap.prefix, gap.suffix, gap.hint)
            times[name].append(1000 * (time.process_time() - start))
    print("| restorer | gaps | CPU ms p50 | p95 |\n|---|---:|---:|---:|")
    for name, ms in times.items():
        print(f"| {name} | {len(ms)} | {np.percentile(ms, 50):.0f} | {np.percentile(ms, 95):.0f} |")
    ratio = np.array(times["with document words"]) / np.array(times["shipped"])
    print(f"\nratio per gap: p50 {np.percentile(ratio, 50):.2f}, p95 {np.percentile(ratio, 95):.2f}")


if __name__ == "__main__":
    main()
