"""Prepare every training corpus but First1KGreek and report documents/s, letters/s and the corpus statistics.

    python benchmarks/prepare.py --corpora corpora --out /tmp/prepared-bench [--workers 2]

Prints a Markdown section for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from apollo_restore.data.prepare import format_stats, prepare, training_corpora


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpora",
        type=Path,
        required=True,
        help=(
            "a folder of the corpora (docs/training.md, *Training data*): ddb-trismegistos-2016.tar.xz, "
            "tesserae-grc.tar.xz, idp-sample/DCLP, inscriptions/*.tar.xz"
        ),
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    report = prepare(training_corpora(args.corpora), args.out, workers=args.workers, progress=False)
    seconds = time.perf_counter() - started
    files = report.documents + len(report.skipped)
    print(f"## Corpus preparation ({args.workers} workers)\n")
    print(
        f"{seconds:.0f} s wall: {report.documents / seconds:,.0f} documents/s, {files / seconds:,.0f} files/s, "
        f"{report.letters / seconds:,.0f} letters/s\n"
    )
    print(format_stats(report))


if __name__ == "__main__":
    main()
