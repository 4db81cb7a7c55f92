"""Regression guard: the shipped restorer on a fixed validation sample, W.Top-1 per source
against the recorded figures; run before any change to normalisation, contexts, search or ranking
(``scripts/check.sh`` runs it in CI; ``tests/evaluate/test_guard.py`` is its slow test).

    python benchmarks/guard.py            # exit status 1 when a source's W.Top-1 drops by more than one gap's worth
    python benchmarks/guard.py --record   # write today's figures into benchmarks/guard.json (a change that moves them)

The sample, ``benchmarks/guard-gaps.jsonl``: 140 validation gaps with exact hints (ddb 3 per
letter count 1–20, inscriptions and literary 2), made once by ``apollo-restore gaps --prepared
data/prepared --split validation --source SOURCE --per-length N --conditions exact --seed 555
--no-uncertain-excluded`` and their contexts written in ``norm.v1``. One gap's worth of W.Top-1
(uniform over the 20 letter counts) is ``1 / gaps`` of the source. Prints a Markdown table;
about 2 minutes on 2 cores (two processes, one torch thread each).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

from apollo_restore.data.formats import read_gapset
from apollo_restore.evaluate.harness import run, score_predictions
from apollo_restore.evaluate.metrics import uniform
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.predict import Workers

HERE = Path(__file__).resolve().parent
GAPS = HERE / "guard-gaps.jsonl"
RECORD = HERE / "guard.json"


def measure(gaps: Path = GAPS, workers: int = 2) -> dict[str, dict[str, float]]:
    """``{source: {"gaps", "w_top1", "w_top20"}}`` of the shipped restorer on ``gaps``."""
    sample = list(read_gapset(gaps))
    pool = Workers(partial(load_restorer, None), workers, 1) if workers > 1 else None
    predictions = run(None if pool else load_restorer(None), sample, progress=False, workers=pool)
    scored = score_predictions(sample, predictions)
    out = {}
    for source in sorted({s.source for s in scored}):
        summary = uniform(s.score for s in scored if s.source == source)
        out[source] = {"gaps": summary.n, "w_top1": round(summary.top1, 4), "w_top20": round(summary.top20, 4)}
    return out


def drops(recorded: dict[str, dict[str, float]], measured: dict[str, dict[str, float]]) -> list[str]:
    """The sources whose W.Top-1 fell by more than one gap's worth (``1 / gaps``) below the record,
    each as a line naming both figures; a recorded source missing from ``measured`` is a drop."""
    out = []
    for source, want in sorted(recorded.items()):
        got = measured.get(source)
        if got is None:
            out.append(f"{source}: not measured (recorded W.Top-1 {want['w_top1']:.3f})")
        elif got["w_top1"] < want["w_top1"] - 1 / want["gaps"] - 1e-9:
            out.append(
                f"{source}: W.Top-1 {got['w_top1']:.3f} < recorded {want['w_top1']:.3f} "
                f"- one gap's worth (1/{want['gaps']})"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="write the figures into benchmarks/guard.json")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    measured = measure(workers=args.workers)
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))["sources"] if RECORD.exists() else {}
    print("| source | gaps | W.Top-1 | W.Top-20 | recorded W.Top-1 |\n|---|---:|---:|---:|---:|")
    for source, got in measured.items():
        was = recorded.get(source, {}).get("w_top1")
        print(f"| {source} | {got['gaps']} | {got['w_top1']:.3f} | {got['w_top20']:.3f} | "
              f"{'–' if was is None else f'{was:.3f}'} |")  # fmt: skip
    if args.record:
        record = {"command": "python benchmarks/guard.py --record", "gaps": GAPS.name, "sources": measured}
        RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"recorded in {RECORD}")
        return
    failed = drops(recorded, measured)
    for line in failed:
        print(f"guard: {line}", file=sys.stderr)
    print("guard: " + ("FAILED" if failed else "every source within one gap's worth of the record"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
