"""Copy a trained model folder and its classical members into the package as the embedded default.

    python scripts/package_default_model.py --model runs/gpu/export-join \\
        --infini '{"discount": 0.6, "max_context": 40}' \\
        --weights '{"neural": 1.0, "infini": 1.0, "infini_backward": 1.0, "length": 8.0}' --hint-slack 2 \\
        --chosen-by "apollo-restore tune ..."
    python scripts/package_default_model.py --model runs/default/best \\
        --ngram data/ngram-8-min4.npz --backward data/ngram-8-min4-bwd.npz \\
        --weights '{"neural": 0.0, "ngram": 1.0, "backward": 1.0, "length": 4.0}' --hint-slack 2

The unbounded-order members read the packaged text index (``models/corpus``), so ``--infini``
copies no file. The weights, demotions and calibration must be fitted afterwards on the
validation split (``apollo-restore tune --model src/apollo_restore/models/default --force``): the
calibration is tied to the model it was fitted on.

Only weights, tokenizer and JSON go in (no optimiser state).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from apollo_restore.model.folder import META_FILE
from apollo_restore.restore.config import DEFAULT_MODEL

KEEP = (
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    META_FILE,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--ngram", type=Path)
    parser.add_argument("--backward", type=Path)
    parser.add_argument("--weights", type=json.loads, default=None)
    parser.add_argument("--hint-slack", type=int, default=0)
    parser.add_argument("--infini", type=json.loads, default=None, help="options of the unbounded-order members")
    parser.add_argument("--chosen-by", default="", help="how the weights were chosen (recorded)")
    parser.add_argument("--out", type=Path, default=DEFAULT_MODEL)
    args = parser.parse_args()
    tmp = args.out.with_name(args.out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in KEEP:
        if (args.model / name).exists():
            shutil.copy(args.model / name, tmp / name)
    meta = json.loads((tmp / META_FILE).read_text())
    if args.ngram:
        shutil.copy(args.ngram, tmp / "ngram.npz")
        meta["ensemble"] = {"ngram": "ngram.npz", "weights": args.weights, "hint_slack": args.hint_slack}
        if args.backward:
            shutil.copy(args.backward, tmp / "ngram-backward.npz")
            meta["ensemble"]["backward"] = "ngram-backward.npz"
    if args.infini is not None:
        meta["ensemble"] = {"infini": args.infini, "weights": args.weights, "hint_slack": args.hint_slack}
    if "ensemble" in meta and args.chosen_by:
        meta["ensemble"]["chosen_by"] = args.chosen_by
    (tmp / META_FILE).write_text(json.dumps(meta, ensure_ascii=False, indent=1))
    shutil.rmtree(args.out, ignore_errors=True)
    tmp.rename(args.out)
    size = sum(f.stat().st_size for f in args.out.iterdir())
    print(f"packaged {args.model} into {args.out}: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
