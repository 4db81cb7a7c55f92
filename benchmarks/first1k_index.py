"""First1KGreek in the text index: read, normalise, cut out held-out text, build the index.

    python benchmarks/first1k_index.py --corpus corpora/first1k-grc.tar.xz \\
        --prepared /work/data/prepared --out /work/data/first1k            # heldout-index, index-plus
    python benchmarks/first1k_index.py ... --pack                         # then: what shipping would cost
    APOLLO_RESTORE_INDEX=/work/data/first1k/index-plus apollo-restore evaluate ...   # then evaluate

Steps (each timed; prints Markdown):

1. every ``first1k-grc/*.txt`` of the archive, read in place, normalised with ``norm.v1``; files
   that are not UTF-8 or hold no Greek are reported and skipped, and so is the earlier copy of a
   work id the archive holds twice;
2. an index over the **validation and test** documents of every source of ``--prepared``
   (``heldout-index``), and every run of ``--min-run`` letters a First1K work shares with it cut
   out (:class:`~apollo_restore.data.overlap.OverlapMask`): what is left of a work is indexed as
   separate documents ``first1k:<work id>#<piece>``, so no held-out run of that length enters;
3. the index over the packaged train text plus the masked First1K text (``index-plus``);
4. with ``--pack`` (after a build): the masked First1K text packed as the package packs its
   train text (xz, ``pack_train_text``) and unpacked again, both timed: what shipping it would cost;
5. with ``--leak-check`` (after a build): how many of the evaluation's validation answers, with
   ``--context`` letters either side (10), stand in the First1K part of ``index-plus``, or its train part;
6. ``--compare A B``: two evaluation folders on the same gaps, gap by gap (right in one only).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from apollo_restore.data.normalise import letter_count, normalise
from apollo_restore.data.overlap import MIN_RUN, OverlapMask
from apollo_restore.data.readers.archive import SkipLog, iter_files
from apollo_restore.data.table import load_documents
from apollo_restore.data.textindex import PACKED_TEXT, TextIndex, build_text_index, pack_train_text, read_packed
from apollo_restore.evaluate.gapsets import build_synthetic, condition_of, load_gaps
from apollo_restore.evaluate.metrics import score_gap

SOURCE = "first1k"


def read_first1k(corpus: Path, skips: SkipLog) -> dict[str, str]:
    """Work id → ``norm.v1`` text of every readable work of the archive (or folder); a work id met
    twice keeps its later text (the earlier one is recorded in ``skips``)."""
    works: dict[str, str] = {}
    for name, content in iter_files(corpus, (".txt",), skips):
        work = Path(name.split(":")[-1]).name.removesuffix(".txt")
        try:
            text = normalise(content.decode("utf-8"))
        except UnicodeDecodeError as err:
            skips.add(name, f"not UTF-8: {err}")
            continue
        if not letter_count(text):
            skips.add(name, "no Greek letters")
            continue
        if work in works:  # the archive holds 16 ids twice, each time with (nearly) the same text
            skips.add(name, "work id seen before: this later copy replaces the earlier one")
        works[work] = text
    return works


def held_out(prepared: Path) -> tuple[list[str], list[str], list[str]]:
    """``(ids, sources, texts)`` of the validation and test documents of every source."""
    ids, sources, texts = [], [], []
    for split in ("validation", "test"):
        table: pa.Table = load_documents(prepared, split=split)
        ids += table.column("id").to_pylist()
        sources += table.column("source").to_pylist()
        texts += table.column("text").to_pylist()
    return ids, sources, texts


def _row(name: str, value: str) -> None:
    print(f"| {name} | {value} |", flush=True)


def build(args: argparse.Namespace) -> None:
    """Steps 1–3: read, mask, write the masked text (``first1k-masked.parquet``) and ``index-plus``."""
    started = time.perf_counter()
    skips = SkipLog()
    works = read_first1k(args.corpus, skips)
    letters = sum(letter_count(t) for t in works.values())
    for skipped in skips.items:
        print(f"skipped {skipped.path}: {skipped.reason}")
    print("| step | value |\n|---|---:|")
    _row("First1K works read / skipped", f"{len(works):,} / {len(skips.items)}")
    _row("First1K letters (norm.v1)", f"{letters:,}")
    _row("read + normalise s", f"{time.perf_counter() - started:.0f}")

    started = time.perf_counter()
    heldout = build_text_index(*held_out(args.prepared), out=args.out / "heldout-index", origin=str(args.prepared))
    _row("held-out index (validation + test, all sources)", f"{heldout.documents:,} docs, {heldout.letters:,} letters")
    mask = OverlapMask(TextIndex.open(heldout.path), min_run=args.min_run)
    ids, texts, masked, touched = [], [], 0, {}
    for work, text in works.items():
        pieces, cut = mask.pieces(text)
        masked += cut
        if cut:
            touched[work] = cut
        for k, piece in enumerate(pieces):
            ids.append(f"{SOURCE}:{work}#{k}")
            texts.append(piece)
    _row(f"letters cut out (runs ≥ {args.min_run} shared with held-out)", f"{masked:,} ({masked / letters:.2%})")
    _row("works touched / pieces indexed", f"{len(touched):,} / {len(ids):,}")
    _row("held-out index + mask s", f"{time.perf_counter() - started:.0f}")
    top = dict(sorted(touched.items(), key=lambda kv: -kv[1]))
    (args.out / "masked-works.json").write_text(json.dumps(top, indent=0))
    pq.write_table(pa.table({"id": ids, "text": texts}), args.out / "first1k-masked.parquet", compression="zstd")

    train = read_packed(PACKED_TEXT)
    plus = build_text_index(
        train[0] + ids,
        train[1] + [SOURCE] * len(ids),
        train[2] + texts,
        out=args.out / "index-plus",
        origin=f"{PACKED_TEXT.name} + {args.corpus.name} (masked)",
    )
    _row("index-plus documents / letters", f"{plus.documents:,} / {plus.letters:,}")
    _row("index-plus build s / MB", f"{plus.seconds} / {plus.megabytes}")


def pack(args: argparse.Namespace) -> None:
    """Step 4: the masked text packed as the package would ship it, and its unpacking timed."""
    table = pq.read_table(args.out / "first1k-masked.parquet")
    ids, texts = table.column("id").to_pylist(), table.column("text").to_pylist()
    packed = args.out / "first1k-masked.tsv.xz"
    print("| step | value |\n|---|---:|")
    started = time.perf_counter()
    size = pack_train_text(ids, [SOURCE] * len(ids), texts, ["train"] * len(ids), packed)
    _row("masked First1K packed (xz -9e) MB / s", f"{size / 1e6:.1f} / {time.perf_counter() - started:.0f}")
    _row("packaged train text (xz) MB, for comparison", f"{PACKED_TEXT.stat().st_size / 1e6:.1f}")
    started = time.perf_counter()
    read_packed(PACKED_TEXT)
    read_packed(packed)
    _row("unpack both s (first use: + the index-plus build)", f"{time.perf_counter() - started:.1f}")


def leak_check(args: argparse.Namespace) -> None:
    """Validation gaps of ``--source`` (seed 0, 5 per length: the evaluation's) whose answer, with
    ``--context`` letters either side, stands in the First1K part of ``index-plus``, or in its train part."""
    table = load_documents(args.prepared, split="validation", sources=[args.source])
    gaps = build_synthetic(table, args.source, "validation", 5, conditions=["exact"], seed=0)
    index, context = TextIndex.open(args.out / "index-plus"), args.context
    found = {"first1k": 0, "train": 0, "first1k only": 0}
    for gap in gaps:
        left = TextIndex.pattern(gap.prefix)
        window = (
            left[max(len(left) - context, 0) :]
            + TextIndex.pattern(gap.target)
            + TextIndex.pattern(gap.suffix)[:context]
        )
        where = {index.doc_sources[d] == SOURCE for d in index.doc_of(index.occurrences(window)).tolist()}
        found["first1k"] += True in where
        found["train"] += False in where
        found["first1k only"] += where == {True}
    print(f"| {args.source} validation gaps ({len(gaps)}): answer ± {context} letters found in | gaps |\n|---|---:|")
    for name, count in found.items():
        print(f"| {name} | {count} |")


def compare(args: argparse.Namespace) -> None:
    """Paired comparison of two ``apollo-restore evaluate --out`` folders run on the same gaps:
    per hint condition, gaps whose top-1 (top-20) reading is right in one run only."""
    first, second = args.compare
    gaps = {g.id: g for g in load_gaps(first / "gaps.jsonl")}
    if {g.id for g in load_gaps(second / "gaps.jsonl")} != set(gaps):
        raise SystemExit(f"{first} and {second} were run on different gaps")
    runs = []
    for folder in (first, second):
        with open(folder / "predictions.jsonl", encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        runs.append({r["id"]: score_gap(gaps[r["id"]].target, [c["text"] for c in r["candidates"]]) for r in rows})
    print(f"| condition | gaps | top-1 right in {first.name} only / {second.name} only | sign test p | top-20 same |")
    print("|---|---:|---:|---:|---:|")
    for cond in sorted({condition_of(g) for g in gaps.values()}):
        ids = [i for i, g in gaps.items() if condition_of(g) == cond]
        one = [sum(runs[a][i].top1 and not runs[b][i].top1 for i in ids) for a, b in ((0, 1), (1, 0))]
        twenty = [sum(runs[a][i].top20 and not runs[b][i].top20 for i in ids) for a, b in ((0, 1), (1, 0))]
        print(f"| {cond} | {len(ids)} | {one[0]} / {one[1]} | {sign_test(*one):.2f} | {twenty[0]} / {twenty[1]} |")


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test: the chance of a split at least this uneven if either run were
    as likely to win each gap where they differ."""
    n, k = wins + losses, min(wins, losses)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, required=True, help="the First1KGreek plain-text archive (docs/training.md)"
    )
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--out", type=Path, required=True, help="folder for heldout-index, index-plus, masked text")
    parser.add_argument("--min-run", type=int, default=MIN_RUN, help="shortest held-out run cut out (letters)")
    parser.add_argument("--pack", action="store_true", help="only pack the masked text of an earlier run (xz)")
    parser.add_argument("--leak-check", action="store_true", help="only look validation answers up in index-plus")
    parser.add_argument("--source", default="literary", help="gaps of --leak-check")
    parser.add_argument("--context", type=int, default=10, help="letters either side of --leak-check answers")
    parser.add_argument("--compare", type=Path, nargs=2, help="only compare two evaluate --out folders, gap by gap")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    (compare if args.compare else pack if args.pack else leak_check if args.leak_check else build)(args)


if __name__ == "__main__":
    main()
