"""Prepare every shared corpus and report documents/s, letters/s and the corpus statistics.

    python benchmarks/prepare.py --out /tmp/prepared-bench [--workers 2]

Prints a Markdown section for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import glob
import time
from pathlib import Path

from apollo_restore.data.prepare import CorpusSpec, format_stats, prepare

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


def shared_corpora(root: Path = SHARED) -> list[CorpusSpec]:
    """Every training corpus in ``../shared/corpora`` (the idp-sample DDB files duplicate DDB-TM)."""
    specs = [
        CorpusSpec("ddb", root / "ddb-trismegistos-2016.tar.xz"),
        CorpusSpec("literary", root / "tesserae-grc.tar.xz"),
        CorpusSpec("dclp", root / "idp-sample" / "DCLP"),
    ]
    specs += [CorpusSpec("inscription", Path(p)) for p in sorted(glob.glob(str(root / "inscriptions" / "*.tar.xz")))]
    return specs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    report = prepare(shared_corpora(), args.out, workers=args.workers, progress=False)
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
