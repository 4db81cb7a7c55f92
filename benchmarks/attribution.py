"""Dates and places of the prepared corpus's documents, scored against their own (HGV, EpiDoc headers).

    python benchmarks/attribution.py --prepared data/prepared --corpora corpora \
        --split validation [--model FOLDER] [--out report.json]

Each papyrus (ddb) and inscription of the split with a date or a place is read as the artifact
has it (the editor's supplements as lost letters, first 4,000 characters) and attributed by the
model (default: the packaged one); prints :func:`apollo_restore.evaluate.attribution.report_markdown`
(deviation in years from the true range, 80 % interval coverage, places top-1/top-3 and ECE, the
first place's nome and the first district, per source and length band, and the bands of ≥ 50
letters weighted as the published test papyri are) and the speed. Choose on ``validation``; run
``test`` once per change.
The same as ``apollo-restore evaluate --task attribution`` (:mod:`apollo_restore.attribution.evaluation`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from apollo_restore.attribution.evaluation import evaluate_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, required=True)
    parser.add_argument("--corpora", type=Path, required=True)
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--model", type=Path, default=None, help="attribution folder (default: the packaged one)")
    parser.add_argument("--out", type=Path, default=None, help="write the report as JSON here")
    args = parser.parse_args()
    done = evaluate_split(args.prepared, args.corpora, args.split, args.model)
    print(done.markdown())
    if args.out:
        args.out.write_text(json.dumps(done.report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
