"""Pack a model folder's weights into ≤ 15 MiB parts to carry to a GPU machine or bring back, and
unpack them into a model folder (:mod:`apollo_restore.model.transport`).

    python scripts/transport.py pack FOLDER OUT [--form int8|bf16] [--part-mib 15]
    python scripts/transport.py unpack PACK OUT [--dtype float32|bfloat16]

A damaged or missing part, or a broken folder, is a numbered error (``E5xx``) on stderr, exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from apollo_restore.errors import ModelFolderError
from apollo_restore.model.transport import FORMS, pack, unpack_folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("pack", help="model folder → manifest + parts")
    p.add_argument("folder", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--form", choices=FORMS, default="int8")
    p.add_argument("--part-mib", type=float, default=15.0)
    u = verbs.add_parser("unpack", help="manifest + parts → model folder")
    u.add_argument("pack", type=Path)
    u.add_argument("out", type=Path)
    u.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    args = parser.parse_args(argv)
    try:
        if args.verb == "pack":
            if args.part_mib <= 0:
                parser.error(f"--part-mib must be above 0, got {args.part_mib}")
            written = pack(args.folder, args.out, args.form, int(args.part_mib * 2**20))
            for path in written:
                print(f"{path}\t{path.stat().st_size:,} bytes")
        else:
            unpack_folder(args.pack, args.out, getattr(torch, args.dtype))
            print(args.out)
    except (ModelFolderError, OSError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
