"""The unbounded-order model on the text index: build time and size, latency, accuracy.

    python benchmarks/infini.py --build                          # first-use build into a fresh cache dir
    python benchmarks/infini.py --ngram /tmp/ngram/ddb-8-min1.npz --per-length 10 --split validation
    python benchmarks/infini.py --ngram /tmp/ngram/ddb-8-min1.npz --per-length 10 --split test   # once

Gaps: synthetic gaps of the chosen split and ``--source`` (default ddb; ``build_synthetic``, seed 11,
``--per-length`` per letter count 1–20), exact hint and no hint. The index is the default one, or
the folder ``$APOLLO_RESTORE_INDEX`` names (e.g. one with First1K: ``benchmarks/first1k_index.py``).
Rows: each restorer alone on its own beam, the forward + backward members as an
:class:`~apollo_restore.restoration.members.ensemble.Ensemble` (weights 1, 1), and the
shipped default (``load_restorer()``: what ``apollo-restore restore`` runs, all its members).
W.Top-1 / W.Top-20 are uniform-weighted over lengths 1–20 (``evaluate.metrics.uniform``); ms are
per gap, p50 and p95, wall-clock, and the p50 of the process's CPU time per gap (less sensitive
to other jobs on the machine; NumPy runs single-threaded here). Prints Markdown.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from apollo_restore.data.prepare import load_documents
from apollo_restore.data.textindex import PACKED_TEXT, TextIndex, build_text_index, read_packed
from apollo_restore.evaluate.gapsets import build_synthetic, condition_of
from apollo_restore.evaluate.metrics import score_gap, uniform
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members.ensemble import Ensemble
from apollo_restore.restoration.members.infini import InfiniConfig, load_infini
from apollo_restore.restoration.members.ngram import load_ngram


def build_row() -> None:
    """Time a first-use build (unpacking included) into a fresh folder."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        docs = read_packed(PACKED_TEXT)
        unpacked = time.perf_counter() - started
        report = build_text_index(*docs, out=Path(tmp) / "ix")
        total = time.perf_counter() - started
    print(
        "| packed text MB | documents | letters | unpack s | build s | total s | index MB |\n"
        "|---:|---:|---:|---:|---:|---:|---:|"
    )
    print(f"| {PACKED_TEXT.stat().st_size / 1e6:.1f} | {report.documents:,} | {report.letters:,} | {unpacked:.1f} | "
          f"{report.seconds:.1f} | {total:.1f} | {report.megabytes * 1.048576:.0f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true", help="time a first-use build and stop")
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--split", default="validation")
    parser.add_argument("--source", default="ddb", help="corpus whose gaps are scored (ddb, literary, inscription)")
    parser.add_argument("--per-length", type=int, default=10)
    parser.add_argument(
        "--ngram", type=Path, action="append", default=[], help="n-gram files to compare (forward or backward)"
    )
    parser.add_argument("--conditions", default="exact,none")
    parser.add_argument("--discount", default="0.6,1.0,1.3", help="D, or D1,D2,D3 (counts 1, 2, 3+)")
    parser.add_argument("--max-context", type=int, default=40)
    parser.add_argument("--beam", type=int, default=InfiniConfig.beam)
    parser.add_argument("--suffix-chars", type=int, default=InfiniConfig.suffix_chars)
    parser.add_argument("--close", type=int, default=InfiniConfig.close)
    parser.add_argument("--pool", type=int, default=InfiniConfig.pool)
    parser.add_argument("--only", default="", help="comma-separated row names to run (default: all)")
    args = parser.parse_args()
    if args.build:
        build_row()
        return
    conds = args.conditions.split(",")
    table = load_documents(args.prepared, split=args.split, sources=[args.source])
    gaps = build_synthetic(table, args.source, args.split, args.per_length, conditions=conds, seed=11)
    index = TextIndex.open(progress=print)
    config = InfiniConfig(beam=args.beam, suffix_chars=args.suffix_chars, close=args.close, pool=args.pool)
    discount = [float(x) for x in args.discount.split(",")]
    options = {"discount": discount[0] if len(discount) == 1 else discount, "max_context": args.max_context}
    fwd = load_infini("forward", index, config, **options)
    bwd = load_infini("backward", index, config, **options)

    def ngram_pair() -> Ensemble:
        pair = [load_ngram(p) for p in args.ngram]
        return Ensemble([(pair[0], 1.0), (pair[1], 1.0)])

    # (name, factory): a row's restorer is loaded only when the row runs (--only)
    rows = [("unbounded forward", lambda: fwd), ("unbounded backward", lambda: bwd),
            ("unbounded forward + backward", lambda: Ensemble([(fwd, 1.0), (bwd, 1.0)])),
            ("shipped default (load_restorer)", load_restorer)]  # fmt: skip
    rows += [(f"n-gram {p.stem}", lambda p=p: load_ngram(p)) for p in args.ngram]
    if len(args.ngram) == 2:
        rows.append(("n-gram forward + backward", ngram_pair))
    if args.only:
        rows = [(name, make) for name, make in rows if name in args.only.split(",")]
    print(f"## {args.source} {args.split}: {len(gaps)} gaps ({args.per_length} per length 1–20 and condition), "
          f"D = {args.discount}, max context {args.max_context}, beam {args.beam}, suffix {args.suffix_chars}, "
          f"close {args.close}, pool {args.pool}, "
          f"{os.cpu_count()} cores\n")  # fmt: skip
    print("| restorer | " + " | ".join(f"{c} W.Top-1 / W.Top-20" for c in conds) + " | ms p50 | ms p95 | CPU ms p50 |")
    print("|---|" + "---:|" * (len(conds) + 3))
    for name, make in rows:
        restorer = make()
        scores: dict[str, list] = {c: [] for c in conds}
        ms, cpu = [], []
        for gap in gaps:
            started, cpu_started = time.perf_counter(), time.process_time()
            cands = restorer.candidates(gap.prefix, gap.suffix, gap.hint, 20)
            ms.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu_started) * 1000)
            scores[condition_of(gap)].append(score_gap(gap.target, [c.text for c in cands]))
        cells = [f"{uniform(scores[c]).top1:.3f} / {uniform(scores[c]).top20:.3f}" for c in conds]
        q = statistics.quantiles(ms, n=20)
        print(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {statistics.median(ms):.0f} | {q[18]:.0f} | {statistics.median(cpu):.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
