"""How to search a gap of unknown extent (``[- - -]``) given its line-length estimate (issue 64),
measured on the cut lines of ddb VALIDATION documents (:mod:`line_lengths`).

    python benchmarks/unknown_extent.py cuts --prepared PREPARED --corpus DDB.tar.xz --per-band 12 --out C.json
    python benchmarks/unknown_extent.py collect C.json --out R.jsonl --widen 3 [--limit N]
    python benchmarks/unknown_extent.py report R.jsonl

``cuts`` makes the cut lines as ``line_lengths.py --restore`` does (the same seed, the same first
``--per-band`` cuts of each band of 1–20 letters lost) and prints how often the estimate's range,
widened ``k`` letters either side, holds the letters lost. ``collect`` (resumable: a rerun skips
the cuts done; ``--limit`` cuts a run short) searches each cut with the default model, bare (no
calibration), twice: with no hint (today) and with the estimate widened by ``--widen`` as a range
hint; and scores the union of both pools with no hint. ``report`` ranks each cut's readings under
each policy and prints W.Top-1 / W.Top-20 / W.Δlen by band:

- **no hint**: today's search;
- **range ±k**: the widened estimate searched as a range hint;
- **range if hi − lo ≤ s** / **range if lo ≥ m**: the range where the estimate is narrow, or
  says at least ``m`` letters are lost; no hint elsewhere;
- **range if lo ≥ 8: its first 10, then no hint**: two searches; the range's ten best readings,
  then the no-hint search's readings after them;
- **union, prior λ**: both pools' readings ranked by their no-hint score minus ``λ`` nats per
  letter by which a reading misses the widened estimate (λ = 0: the model's own no-hint order).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

BANDS = ((1, 4), (5, 8), (9, 12), (13, 16), (17, 20))
WIDENINGS = (0, 1, 2, 3, 4, 6, 8)
PRIORS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
SPREADS = (2, 4, 6)
LEASTS = (5, 8, 10, 12)


def make_cuts(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from line_lengths import validation_cuts

    from apollo_restore.data.normalise import letter_count
    from apollo_restore.restoration.context import context_of

    docs, results, cuts = validation_cuts(args.prepared, args.corpus, args.per_doc, args.seed)
    given = [(m, e) for m, e in results if e is not None]
    print(f"{docs} documents, {len(results)} cuts, {len(given)} with an estimate; range ±k holds it:")
    for lo, hi in (*BANDS, (1, 20)):
        group = [(m, e) for m, e in given if lo <= m <= hi]
        held = [sum(max(1, e[0] - k) <= m <= e[1] + k for m, e in group) / len(group) for k in WIDENINGS]
        print(f"  {lo}-{hi} ({len(group)}): " + " ".join(f"±{k} {h:.2f}" for k, h in zip(WIDENINGS, held)))
    chosen = []
    for lo, hi in BANDS:
        chosen += list(enumerate([c for c in cuts if lo <= letter_count(c[2]) <= hi][: args.per_band]))
    out = []
    for i, (rank, (segments, index, target, est)) in enumerate(chosen):
        prefix, suffix = context_of(segments, index, [])
        out.append(
            {"id": i, "letters": letter_count(target), "target": target, "prefix": prefix[-250:],
             "suffix": suffix[:250], "lo": est.lo, "hi": est.hi, "lines": est.lines, "rank": rank}
        )  # fmt: skip
    # bands interleaved, the first 12 of each band first (line_lengths.py --restore 12's cuts)
    out.sort(key=lambda c: (c["rank"] >= 12, zlib.crc32(f"{c['id']}".encode())))
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False))
    print(f"{len(out)} cuts written to {args.out}")


def widened(cut: dict, k: int):
    from apollo_restore.hint import Hint

    return Hint.span(max(1, cut["lo"] - k), cut["hi"] + k)


def collect(args: argparse.Namespace) -> None:
    import torch

    from apollo_restore.hint import NO_HINT
    from apollo_restore.restoration.load import load_restorer

    torch.set_num_threads(args.threads)
    out = Path(args.out)
    done = {row["id"] for row in records([out])} if out.exists() else set()
    todo = [c for c in json.loads(Path(args.cuts).read_text()) if c["id"] not in done][: args.limit]
    print(f"{len(todo)} cuts to do", file=sys.stderr)
    restorer = load_restorer(present=False)
    with out.open("a") as fh:
        for c in todo:
            hint = widened(c, args.widen)
            started = time.perf_counter()
            ranged = restorer.candidates(c["prefix"], c["suffix"], hint, 1000)
            middle = time.perf_counter()
            bare = restorer.candidates(c["prefix"], c["suffix"], NO_HINT, 1000)
            seconds = {"range": middle - started, "none": time.perf_counter() - middle}
            union = list(dict.fromkeys([x.text for x in bare] + [x.text for x in ranged]))
            scores = restorer.score_readings(c["prefix"], c["suffix"], NO_HINT, union)
            row = {
                "id": c["id"], "letters": c["letters"], "target": c["target"], "lo": c["lo"], "hi": c["hi"],
                "lines": c["lines"], "widen": args.widen,
                "none": [[x.text, x.log_score] for x in bare], "range": [[x.text, x.log_score] for x in ranged],
                "union": [[t, s] for t, s in zip(union, scores)], "seconds": seconds,
            }  # fmt: skip
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
            print(f"cut {c['id']} ({c['letters']} letters) done", file=sys.stderr)


def records(paths: list) -> list[dict]:
    """The collected cuts of ``paths`` (a line cut short by a stopped run is skipped: it is done again)."""
    rows = []
    for path in paths:
        for line in Path(path).open():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def policies(row: dict) -> dict[str, list[str]]:
    """Each policy's readings of one collected cut, best first."""
    from apollo_restore.data.normalise import letter_count
    from apollo_restore.hint import Hint

    hint = Hint.span(max(1, row["lo"] - row["widen"]), row["hi"] + row["widen"])
    bare, ranged = [t for t, _ in row["none"]], [t for t, _ in row["range"]]
    out = {"no hint": bare, f"range ±{row['widen']}": ranged}
    for spread in SPREADS:  # the range only where the estimate is narrow
        out[f"range if hi − lo ≤ {spread}"] = ranged if row["hi"] - row["lo"] <= spread else bare
    for least in LEASTS:  # the range only where the estimate says many letters are lost
        out[f"range if lo ≥ {least}"] = ranged if row["lo"] >= least else bare
    mixed = list(dict.fromkeys(ranged[:10] + bare))  # the range's first ten readings, then today's: two searches
    out["range if lo ≥ 8: its first 10, then no hint"] = mixed if row["lo"] >= 8 else bare
    for lam in PRIORS:
        ranked = sorted(row["union"], key=lambda r: -(r[1] - lam * hint.distance(letter_count(r[0]))))
        out[f"union, prior {lam:g}"] = [t for t, _ in ranked]
    return out


def report(args: argparse.Namespace) -> None:
    from apollo_restore.evaluate.metrics import score_gap, uniform

    rows = records(args.records)
    scored: dict[str, dict[str, list]] = {}
    for row in rows:
        for name, readings in policies(row).items():
            band = next(f"{lo}–{hi}" for lo, hi in BANDS if lo <= row["letters"] <= hi)
            got = score_gap(row["target"], readings)
            for key in ("all", band, "≥ 15" if row["letters"] >= 15 else None):
                if key is not None:
                    scored.setdefault(name, {}).setdefault(key, []).append(got)
    keys = ["all", *(f"{lo}–{hi}" for lo, hi in BANDS), "≥ 15"]
    print(f"{len(rows)} cut lines of ddb validation; W.Top-1 / W.Top-20 (W.Δlen overall)\n")
    counts = next(iter(scored.values()))
    print("| policy | " + " | ".join(f"{k} (n={len(counts.get(k, []))})" for k in keys) + " | W.Δlen |")
    print("|---|" + "---:|" * (len(keys) + 1))
    for name, by in scored.items():
        cells = []
        for key in keys:
            got = by.get(key, [])
            u = uniform(got) if got else None
            cells.append("—" if u is None else f"{u.top1:.3f} / {u.top20:.3f}")
        print(f"| {name} | " + " | ".join(cells) + f" | {uniform(by['all']).dlen:+.1f} |")
    print("\nEvery cut and the long losses (≥ 15 letters): W.Top-1 / W.Top-20 / W.char accuracy / W.Δlen\n")
    print("| policy | all | ≥ 15 |")
    print("|---|---:|---:|")
    for name, by in scored.items():
        cells = [uniform(by.get(key, [])) for key in ("all", "≥ 15")]
        text = [f"{u.top1:.3f} / {u.top20:.3f} / {u.char_acc:.3f} / {u.dlen:+.1f}" for u in cells]
        print(f"| {name} | " + " | ".join(text) + " |")
    print()
    timing(rows)


def timing(rows: list[dict]) -> None:
    """The range search's time over the no-hint search's, side by side in one run (the cuts
    collected with timings), all cuts and those whose estimate is at least 8 letters."""
    timed = [row for row in rows if "seconds" in row]
    for name, group in (("all", timed), ("estimate ≥ 8 letters", [r for r in timed if r["lo"] >= 8])):
        if group:
            ratio = sum(r["seconds"]["range"] for r in group) / sum(r["seconds"]["none"] for r in group)
            print(f"time of the range search / no hint, {name} ({len(group)} cuts): {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("cuts")
    p.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--per-doc", type=int, default=3)
    p.add_argument("--per-band", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    p = sub.add_parser("collect")
    p.add_argument("cuts")
    p.add_argument("--out", required=True)
    p.add_argument("--widen", type=int, default=3)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--threads", type=int, default=1)
    p = sub.add_parser("report")
    p.add_argument("records", nargs="+")
    args = parser.parse_args()
    {"cuts": make_cuts, "collect": collect, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
