"""Whether a change leaves the attribution answers as they were: the shipped folder's answers to
validation texts, written once (before the change) and compared after it.

    python benchmarks/same_attributions.py --prepared /work/data/prepared --write before.jsonl
    # ... change the code or the folder's settings ...
    python benchmarks/same_attributions.py --prepared /work/data/prepared --compare before.jsonl

The texts are the first :data:`PER_SOURCE` validation papyri (``ddb``) and inscriptions of the
prepared corpus in id order, each read as the artifact has it (the editor's supplements as lost
letters, as ``benchmarks/attribution.py`` reads them; first 4,000 characters), each given to
:func:`apollo_restore.attribution.attribute.attribute` (``--parallels``: with the dated parallels,
which build the text index on first use). Two answers are the same when their years, interval,
places, formula and parallels are equal and every probability agrees within ``1e-6`` (no
bit-exact floats). Prints how many differ and the first few.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pyarrow.parquet as pq

from apollo_restore.attribution.attribute import attribute
from apollo_restore.attribution.train import MAX_CHARS, mask_supplied

#: Validation texts of each source (``ddb``, ``inscription``).
PER_SOURCE = {"ddb": 400, "inscription": 150}
TOLERANCE = 1e-6


def texts(prepared: Path) -> list[tuple[str, str]]:
    """``(source/id, text)`` of the validation texts compared (see the module docstring)."""
    table = pq.read_table(prepared / "documents.parquet", columns=["id", "source", "split", "text",
                                                                    "supplied_start", "supplied_end"])  # fmt: skip
    rows = [r for r in table.to_pylist() if r["split"] == "validation" and r["source"] in PER_SOURCE]
    out = []
    for source, n in PER_SOURCE.items():
        chosen = sorted((r for r in rows if r["source"] == source), key=lambda r: r["id"])[:n]
        for r in chosen:
            text = mask_supplied(r["text"], r["supplied_start"] or [], r["supplied_end"] or [])[:MAX_CHARS]
            out.append((f"{source}/{r['id']}", text))
    return out


def answers(prepared: Path, parallels: bool) -> dict[str, dict]:
    """Each text's answer (its JSON form), or ``{"error": message}``."""
    out = {}
    for key, text in texts(prepared):
        try:
            out[key] = attribute(text, parallels=parallels).to_dict()
        except ValueError as err:
            out[key] = {"error": str(err)}
    return out


def same(a: object, b: object) -> bool:
    """Equal, floats within :data:`TOLERANCE`."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, abs_tol=TOLERANCE)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, required=True)
    parser.add_argument("--parallels", action="store_true", help="with the dated parallels (the text index)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", type=Path, help="write the answers here (JSONL)")
    what.add_argument("--compare", type=Path, help="compare with the answers written here")
    args = parser.parse_args()
    found = answers(args.prepared, args.parallels)
    if args.write:
        lines = [json.dumps({"key": k, "answer": v}, ensure_ascii=False) for k, v in found.items()]
        args.write.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {len(found)} answers to {args.write}")
        return
    before = {
        row["key"]: row["answer"] for row in map(json.loads, args.compare.read_text(encoding="utf-8").splitlines())
    }
    differ = [k for k in before.keys() | found.keys() if not same(before.get(k), found.get(k))]
    errors = sum(1 for v in found.values() if "error" in v)
    print(f"{len(found)} texts ({errors} refused), {len(differ)} answers differ")
    for k in sorted(differ)[:5]:
        print(f"  {k}: before {json.dumps(before.get(k))[:200]}")
        print(f"  {k}: now    {json.dumps(found.get(k))[:200]}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
