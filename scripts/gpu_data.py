"""The training text for a lent GPU: packed here, unpacked there (``scripts/gpu_train.sh``).

    python scripts/gpu_data.py pack --prepared data/prepared --out gpu-pack [--shard auto]   # here
    python scripts/gpu_data.py unpack --pack gpu-pack --out data/gpu/prepared               # on the GPU

A device call carries at most 64 MiB, the tracked tree (the shipped model and the packaged train
text, ``models/corpus/train-text.tsv.xz``, among it) included, and the corpora stay behind. So:

- the **curated** sources' train split (ddb, dclp, inscription, Tesserae) is not packed again: it
  travels as the packaged train text (read with ``read_packed``);
- **First1KGreek**'s train works (already masked by ``prepare`` against held-out text) do not fit
  whole: they are cut into shards of what fits beside the tree (``--budget-mib``, by default
  64 MiB − the tracked tree − the rest of the pack − 1.5 MiB), by SHA-1 of the document id, and
  one shard is packed (``pack_train_text``'s ``id<TAB>source<TAB>text`` lines, xz). ``--shard
  auto`` takes the shard after the one the model it continues from (``--model``) was last trained
  on (its ``apollo_restore.json`` ``training.history`` counts the sessions; shard 0 from scratch),
  so successive GPU sessions read every work;
- the **validation** split of every source (validation loss, and the gap set the run is scored on)
  is packed as Parquet, with ``val_gaps.jsonl`` built from it.

``manifest.json`` says what was packed (documents and letters per source, the shard, sizes); the
training run records it in its model folder (``config.prepared`` points at the unpacked folder,
whose ``pack.json`` is this manifest).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from apollo_restore.data.formats import write_gapset
from apollo_restore.data.normalise import NORMALISER, letter_count
from apollo_restore.data.splits import SPLITTER
from apollo_restore.data.table import DOCUMENTS_FILE, load_documents
from apollo_restore.data.textindex import PACKED_TEXT, pack_train_text, read_packed
from apollo_restore.evaluate.gapsets import build_synthetic
from apollo_restore.model.folder import read_meta

LIMIT_MIB = 64.0  # what one device call carries
MARGIN_MIB = 1.5  # this script, the logs and what the session adds to the tree meanwhile
FIRST1K = "first1k"  # the pack's file stem; the documents keep source "literary"
BITS_PER_LETTER = 2.5  # xz -9e on norm.v1 text, measured on First1K (22.2 MB for 71.8 M letters)


def tracked_mib(root: Path) -> float:
    """MiB of the files git tracks under ``root`` (what every device call carries)."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    return sum((root / n).stat().st_size for n in names.decode().split("\0") if n and (root / n).is_file()) / 2**20


def shard_of(doc_id: str, shards: int) -> int:
    """The shard a document falls into: SHA-1 of its id, modulo ``shards`` (stable everywhere)."""
    return int.from_bytes(hashlib.sha1(doc_id.encode()).digest()[:8], "big") % shards


def sessions_behind(model: Path) -> int:
    """How many training runs the model folder's weights went through (its recorded history + 1)."""
    training = read_meta(model).get("training", {})
    return len(training.get("history", [])) + 1


def not_packaged(table: pa.Table) -> pa.Table:
    """The train rows the packaged train text does not hold (First1K's, once ``prepare`` reads it)."""
    packed = set(read_packed(PACKED_TEXT)[0])
    return table.filter(pa.array([doc_id not in packed for doc_id in table["id"].to_pylist()]))


def pack(args: argparse.Namespace) -> None:
    """Here: validation Parquet + gap set, and one First1K shard that fits beside the tree."""
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    heldout = load_documents(args.prepared, split="validation")  # read once: packed text and gap set
    validation = heldout.select(["id", "source", "split", "text"])
    pq.write_table(
        validation.replace_schema_metadata({"normaliser": NORMALISER, "splitter": SPLITTER}),
        args.out / "validation.parquet",
        compression="brotli",
        compression_level=11,
    )
    gaps = build_synthetic(
        heldout,  # its ddb rows (build_synthetic takes one source's rows)
        "ddb",
        "validation",
        args.val_per_length,
        conditions=["exact", "none"],
        seed=0,
    )
    write_gapset(args.out / "val_gaps.jsonl", gaps)
    rest = sum(p.stat().st_size for p in args.out.iterdir() if not p.name.startswith(FIRST1K)) / 2**20
    budget = args.budget_mib if args.budget_mib is not None else LIMIT_MIB - tracked_mib(args.root) - rest - MARGIN_MIB
    if budget <= 0:
        raise SystemExit(f"no room for First1K beside the tree ({budget:.1f} MiB left): nothing to pack")
    train = not_packaged(load_documents(args.prepared, split="train"))
    letters = sum(letter_count(t) for t in train["text"].to_pylist())
    shards = max(1, -(-int(letters * BITS_PER_LETTER / 8) // int(budget * 2**20)))
    auto = sessions_behind(args.model) if args.model else 0
    shard = (auto if args.shard == "auto" else int(args.shard)) % shards
    ids = train["id"].to_pylist()
    chosen = train.filter(pa.array([shard_of(i, shards) == shard for i in ids]))
    for old in args.out.glob(f"{FIRST1K}*"):
        old.unlink()
    path = args.out / f"{FIRST1K}-train.tsv.xz"
    columns = [chosen[c].to_pylist() for c in ("id", "source", "text", "split")]
    size = pack_train_text(*columns, out=path)
    manifest = {
        "first1k": {
            "shard": shard,
            "shards": shards,
            "documents": chosen.num_rows,
            "letters": sum(map(letter_count, columns[2])),
            "mib": round(size / 2**20, 2),
            "budget_mib": round(budget, 2),
        },
        "curated_train": str(PACKED_TEXT.name),
        "validation": {"documents": validation.num_rows, "gaps": len(gaps)},
        "seconds": round(time.perf_counter() - started, 1),
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(json.dumps(manifest, indent=1))
    if size / 2**20 > budget:
        raise SystemExit(
            f"the First1K shard is {size / 2**20:.1f} MiB, over its {budget:.1f} MiB: pack again with --budget-mib"
        )


def unpack(args: argparse.Namespace) -> None:
    """On the GPU: packaged train text + First1K shard + validation → one prepared folder."""
    ids, sources, texts = read_packed(PACKED_TEXT)
    extra = read_packed(args.pack / f"{FIRST1K}-train.tsv.xz")
    train = pa.table(
        {
            "id": ids + extra[0],
            "source": sources + extra[1],
            "split": ["train"] * (len(ids) + len(extra[0])),
            "text": texts + extra[2],
        }
    )
    validation = pq.read_table(args.pack / "validation.parquet")
    table = pa.concat_tables([train, validation.select(train.column_names).cast(train.schema)])
    args.out.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        table.replace_schema_metadata({"normaliser": NORMALISER, "splitter": SPLITTER}), args.out / DOCUMENTS_FILE
    )
    manifest = json.loads((args.pack / "manifest.json").read_text())
    unpacked: dict[str, int] = {}
    for split, source, text in zip(*(table[c].to_pylist() for c in ("split", "source", "text"))):
        unpacked[f"{split}/{source}"] = unpacked.get(f"{split}/{source}", 0) + len(text)
    manifest["unpacked"] = dict(sorted(unpacked.items()))
    (args.out / "pack.json").write_text(json.dumps(manifest, indent=1))
    print(json.dumps(manifest["unpacked"], indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("pack", help="here: build the pack")
    p.add_argument("--prepared", type=Path, required=True)
    p.add_argument("--out", type=Path, default=Path("gpu-pack"))
    p.add_argument("--shard", default="auto", help="First1K shard number, or auto (the one after the shipped model's)")
    p.add_argument("--budget-mib", type=float, default=None, help="MiB for the First1K shard (default: what fits)")
    p.add_argument("--model", type=Path, default=None, help="model folder the run continues from (none: scratch)")
    p.add_argument("--val-per-length", type=int, default=10, help="validation gaps per length 1-20 and condition")
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    u = sub.add_parser("unpack", help="on the GPU: build the prepared folder")
    u.add_argument("--pack", type=Path, default=Path("gpu-pack"))
    u.add_argument("--out", type=Path, default=Path("data/gpu/prepared"))
    args = parser.parse_args()
    pack(args) if args.verb == "pack" else unpack(args)


if __name__ == "__main__":
    main()
