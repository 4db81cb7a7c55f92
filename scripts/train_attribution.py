"""Train the attribution model (dates and places) and write its folder.

    python scripts/train_attribution.py --prepared data/prepared --corpora corpora \
        --out src/apollo_restore/models/attribution

Reads the prepared corpus's train split (fit) and validation split (choice of epoch, calibration);
never the test split. Seeded: the same inputs give the same folder. About 10 minutes on 2 cores.
``--formulae-only`` fits only the letter model and the reader of dating formulae anew into an
existing folder (its last steps, a few minutes: the DDB editions are read for proper names).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from apollo_restore.attribution.train import refit_formulae, train_attribution


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, required=True, help="folder with documents.parquet")
    parser.add_argument(
        "--corpora", type=Path, required=True, help="folder with hgv-places-dates.tsv and inscriptions/"
    )
    parser.add_argument("--out", type=Path, required=True, help="model folder to write")
    parser.add_argument("--buckets", type=int, default=2**17)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--fill", type=float, default=0.5, help="share of training documents with supplements filled in"
    )
    parser.add_argument("--cache", type=Path, default=None, help="folder keeping the texts' features between runs")
    parser.add_argument(
        "--formulae-only", action="store_true", help="fit only the letter model and the formula reader into --out"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args.formulae_only:
        found = refit_formulae(args.out, args.prepared, args.corpora, args.seed)
        print(json.dumps({k: found[k] for k in ("prior", "calibration")} | {"eras": len(found["eras"])}))
        return
    config = train_attribution(
        args.prepared, args.corpora, args.out, args.buckets, args.dim, args.epochs, args.seed, args.fill, args.cache
    )
    print(json.dumps({k: config[k] for k in ("buckets", "dim", "bands", "temperature", "trained")}, ensure_ascii=False))


if __name__ == "__main__":
    main()
