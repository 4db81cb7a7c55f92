"""Whether a guess for lost lines or a gap of unknown extent should feed the next gap (issue 64).

    python benchmarks/gap_neighbours.py collect --prepared PREPARED --source ddb --per-band 25 --out N.jsonl
    python benchmarks/gap_neighbours.py report N.jsonl

Passages: the editors' supplements (1–20 letters) of **validation** documents whose model window
(the 250 characters before the gap) holds exactly one lacuna of unknown extent or lost lines (``…``),
up to ``--per-band`` of each length band (1–5, 6–10, 11–20 letters), drawn by ``--seed``. Each
supplement is asked with its exact count under two policies, everything else equal:

- **before** (the driver before issue 64): the ``…`` holds the first reading of a search of it
  with no count (its own context: the text before it, and after it up to the supplement, which
  reads as ``…``, as later gaps do);
- **after** (what ships): the ``…`` stays ``…``.

Other gaps in the window stay as the gap set writes them (``-`` per letter) under both policies.
Each line of the output is one passage (resumable: a rerun skips the ids done). ``report`` prints
Top-1 and Top-20 of each policy by length band, and how many passages each policy alone gets right.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path

import numpy as np

WINDOW = 250  # characters of context the model reads each side
BANDS = ((1, 5), (6, 10), (11, 20))
UNKNOWN = "…"


def band_of(n: int) -> str:
    return next(f"{lo}-{hi}" for lo, hi in BANDS if lo <= n <= hi)


def passages(prepared: Path, source: str, per_band: int, seed: int) -> list:
    """Supplements whose model window before the gap holds exactly one ``…`` (see the docstring)."""
    from apollo_restore.data.table import load_documents
    from apollo_restore.evaluate.gapsets import build_true_lacunae
    from apollo_restore.evaluate.metrics import agnostic

    table = load_documents(prepared, "validation", [source])
    gaps = [
        g
        for g in build_true_lacunae(table, source, "validation")
        if g.prefix[-WINDOW:].count(UNKNOWN) == 1 and agnostic(g.prefix[-WINDOW:].split(UNKNOWN)[-1]).strip()
    ]
    rng = np.random.default_rng(seed)
    out = []
    for lo, hi in BANDS:
        inside = [g for g in gaps if lo <= g.hint.lo <= hi]
        keep = rng.choice(len(inside), size=min(per_band, len(inside)), replace=False) if inside else []
        out += [inside[int(i)] for i in sorted(keep)]
    return sorted(out, key=lambda g: zlib.crc32(g.id.encode()))  # bands interleaved: a part run holds each


def collect(args: argparse.Namespace) -> None:
    import torch

    from apollo_restore.evaluate.metrics import agnostic
    from apollo_restore.hint import NO_HINT
    from apollo_restore.restoration.load import load_restorer

    torch.set_num_threads(args.threads)
    out = Path(args.out)
    done = {json.loads(line)["id"] for line in out.open()} if out.exists() else set()
    todo = [g for g in passages(Path(args.prepared), args.source, args.per_band, args.seed) if g.id not in done]
    print(f"{len(todo)} passages to do", file=sys.stderr)
    restorer = load_restorer()
    with out.open("a") as fh:
        for g in todo:
            cut = g.prefix.rindex(UNKNOWN)
            before_u, after_u = g.prefix[:cut], g.prefix[cut + 1 :]
            guess = restorer.candidates(before_u, after_u + UNKNOWN + g.suffix, NO_HINT, 1)
            u = guess[0].text if guess else ""
            row = {"id": g.id, "doc": g.doc, "letters": g.hint.lo, "target": g.target, "guess": u}
            for policy, prefix in (("before", before_u + u + after_u), ("after", g.prefix)):
                cands = restorer.candidates(prefix, g.suffix, g.hint, 20)
                keys = [agnostic(c.text) for c in cands]
                target = agnostic(g.target)
                row[policy] = {
                    "rank": keys.index(target) if target in keys else -1,
                    "first": cands[0].text if cands else "",
                    "prob": cands[0].prob if cands else 0.0,
                }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()


def report(rows: list[dict]) -> None:
    print(f"{len(rows)} passages (validation supplements after one lost extent)\n")
    print("| letters | passages | Top-1 before | after | Top-20 before | after | right only before | only after |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in [f"{lo}-{hi}" for lo, hi in BANDS] + ["all"]:
        rs = [r for r in rows if name in ("all", band_of(r["letters"]))]
        if not rs:
            continue
        t1 = {p: np.mean([r[p]["rank"] == 0 for r in rs]) for p in ("before", "after")}
        t20 = {p: np.mean([r[p]["rank"] >= 0 for r in rs]) for p in ("before", "after")}
        only_b = sum(r["before"]["rank"] == 0 and r["after"]["rank"] != 0 for r in rs)
        only_a = sum(r["after"]["rank"] == 0 and r["before"]["rank"] != 0 for r in rs)
        print(
            f"| {name} | {len(rs)} | {t1['before']:.3f} | {t1['after']:.3f} | {t20['before']:.3f} | "
            f"{t20['after']:.3f} | {only_b} | {only_a} |"
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--prepared", required=True)
    c.add_argument("--source", default="ddb")
    c.add_argument("--per-band", type=int, default=25)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--threads", type=int, default=1)
    c.add_argument("--out", required=True)
    r = sub.add_parser("report")
    r.add_argument("rows", nargs="+")
    args = ap.parse_args(argv)
    if args.cmd == "collect":
        collect(args)
    else:
        rows = {}
        for path in args.rows:
            for line in Path(path).open():
                row = json.loads(line)
                rows[row["id"]] = row
        report(list(rows.values()))


if __name__ == "__main__":
    main()
