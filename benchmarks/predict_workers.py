"""``predict --workers N`` against one process: wall time of a whole gap set, and equal readings (issue 21).

    python benchmarks/predict_workers.py --prepared data/prepared --per-length 1 --workers 2

Writes a gap set of ddb **validation** gaps (lengths 1–20, exact hint and none, seed 21), then runs
``apollo-restore predict`` on it as a user would (the shipped default, k = 20), once with one
process (``--threads`` left to the command: the cores idle now) and once per ``--workers`` count
(one torch thread each), one after the other, the order reversed on the second ``--rounds``.
Prints Markdown: the wall seconds of each run (model loading included), gaps per second, the
ratio to one process, and whether every gap got the same readings and probabilities.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from apollo_restore.data.formats import write_gapset
from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic


def validation_gapset(prepared: Path, per_length: int, path: Path) -> int:
    table = load_documents(prepared, split="validation", sources=["ddb"])
    return write_gapset(path, build_synthetic(table, "ddb", "validation", per_length, ("exact", "none"), seed=21))


def run(gaps: Path, out: Path, workers: int) -> tuple[float, list[dict]]:
    """Wall seconds of one ``predict`` run and its predictions without their milliseconds."""
    command = [sys.executable, "-m", "apollo_restore", "predict", "--gaps", str(gaps), "--out", str(out), "--force"]
    started = time.perf_counter()
    subprocess.run([*command, "--workers", str(workers)], check=True, capture_output=True)
    seconds = time.perf_counter() - started
    return seconds, [{**json.loads(line), "ms": None} for line in out.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--per-length", type=int, default=1, help="gaps per letter count and condition")
    parser.add_argument("--workers", type=int, action="append", help="worker counts to compare (repeatable)")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    counts = [1, *(args.workers or [2])]
    with tempfile.TemporaryDirectory() as tmp:
        gaps = Path(tmp) / "gaps.jsonl"
        n = validation_gapset(args.prepared, args.per_length, gaps)
        times: dict[int, list[float]] = {c: [] for c in counts}
        readings: dict[int, list[dict]] = {}
        for round_ in range(args.rounds):
            for c in counts if round_ % 2 == 0 else counts[::-1]:
                seconds, readings[c] = run(gaps, Path(tmp) / f"preds-{c}.jsonl", c)
                times[c].append(seconds)
                print(f"workers {c}: {seconds:.0f} s", file=sys.stderr, flush=True)
    one = min(times[1])
    print(f"## `predict`, the shipped default, {n} ddb validation gaps (exact + no hint), k = 20\n")
    print("| processes | wall s (best of rounds) | gaps/s | wall ratio to one | same readings as one |")
    print("|---:|---:|---:|---:|---:|")
    for c in counts:
        same = sum(a == b for a, b in zip(readings[1], readings[c]))
        best = min(times[c])
        print(f"| {c} | {best:.0f} | {n / best:.2f} | {best / one:.2f} | {same}/{n} |")


if __name__ == "__main__":
    main()
