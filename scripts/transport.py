"""Pack a model folder's weights into ≤ 15 MiB parts to carry to a GPU machine or bring back, and
unpack them into a model folder (:mod:`apollo_restore.model.transport`).

    python scripts/transport.py pack FOLDER OUT [--form int8|bf16] [--part-mib 15]
    python scripts/transport.py unpack PACK OUT [--dtype float32|bfloat16]

``OUT`` is replaced whole, and only when all went well; it may not be, lie inside or hold the
folder read from, nor be a folder of other files. ``--part-mib`` is from 1/64 to 2048. A damaged
or missing part, a broken folder or manifest, an output refused, is a numbered error (``E5xx``)
on stderr, exit 1; nothing is written then.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from apollo_restore.errors import ModelFolderError
from apollo_restore.model.transport import FORMS, pack, part_bytes_of_mib, unpack_folder


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` by default).

    Returns:
        The exit status: 0 done, 1 a numbered error or a file that cannot be read or written
        (on stderr), 2 a malformed command line (argparse).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("pack", help="model folder → manifest + parts")
    p.add_argument("folder", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--form", choices=FORMS, default="int8")
    p.add_argument("--part-mib", type=float, default=15.0, help="the most MiB of a part, from 1/64 to 2048")
    u = verbs.add_parser("unpack", help="manifest + parts → model folder")
    u.add_argument("pack", type=Path)
    u.add_argument("out", type=Path)
    u.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    args = parser.parse_args(argv)
    try:
        if args.verb == "pack":
            written = pack(args.folder, args.out, args.form, part_bytes_of_mib(args.part_mib, args.out))
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
