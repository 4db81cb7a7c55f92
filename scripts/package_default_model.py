"""Copy a trained model folder and its classical members into the package as the embedded default.

    python scripts/package_default_model.py --model runs/gpu/export-join --ensemble ensemble.json
    python scripts/package_default_model.py --model runs/default/best --ensemble ensemble.json \\
        --member-file data/ngram-8-min4.npz

``--ensemble`` is the folder's ``ensemble`` entry (a JSON file, or the JSON itself): its members
by registered name with their weights and options, its search settings and a ``chosen_by``
pointer (``docs/model-folders.md``; the shipped one is the example); it is checked as a load
checks it (:func:`~apollo_restore.restoration.members.registry.member_entries`) before anything is replaced.
``--member-file`` copies a file a member names (an n-gram member's ``"file"``) into the folder.
The unbounded-order members read the packaged text index (``models/corpus``): no file to copy.
The weights, demotions and calibration must be fitted afterwards on the validation split
(``apollo-restore tune --model src/apollo_restore/models/default --force``): the calibration is
tied to the model it was fitted on.

Only weights, tokenizer and JSON go in (no optimiser state).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from apollo_restore.model.folder import META_FILE
from apollo_restore.restoration.config import DEFAULT_MODEL, RestoreConfig
from apollo_restore.restoration.load import search_settings
from apollo_restore.restoration.members.registry import member_entries

KEEP = (
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    META_FILE,
)


def _json(value: str) -> dict:
    """The JSON ``value`` holds, or that of the file it names."""
    return json.loads(Path(value).read_text(encoding="utf-8") if Path(value).is_file() else value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--ensemble", type=_json, default=None, help="the ensemble entry (JSON, or a JSON file)")
    parser.add_argument("--member-file", type=Path, action="append", default=[], help="a member's file to copy")
    parser.add_argument("--out", type=Path, default=DEFAULT_MODEL)
    args = parser.parse_args()
    tmp = args.out.with_name(args.out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in KEEP:
        if (args.model / name).exists():
            shutil.copy(args.model / name, tmp / name)
    for file in args.member_file:
        shutil.copy(file, tmp / file.name)
    meta = json.loads((tmp / META_FILE).read_text())
    if args.ensemble is not None:
        member_entries(tmp, args.ensemble, search_settings(tmp, args.ensemble, RestoreConfig()))  # or a numbered error
        meta["ensemble"] = args.ensemble
    (tmp / META_FILE).write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n")
    shutil.rmtree(args.out, ignore_errors=True)
    tmp.rename(args.out)
    size = sum(f.stat().st_size for f in args.out.iterdir())
    print(f"packaged {args.model} into {args.out}: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
