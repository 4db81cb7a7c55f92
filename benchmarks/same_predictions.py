"""Whether two prediction files of one gap set give the same readings in the same order with the
same probabilities: the check of a change that must not move what the product shows (a refactor
of the ranking, of loading, of the search).

    apollo-restore predict --gaps GAPS.jsonl --out before.jsonl --threads 1   # on the old tree
    apollo-restore predict --gaps GAPS.jsonl --out after.jsonl --threads 1    # on the new one
    python benchmarks/same_predictions.py before.jsonl after.jsonl [--tol 1e-5]

Prints, over the gaps of both files: how many have the same readings in the same order, how many
differ only by near ties swapped (probabilities within ``--tie`` of each other), how many have the
same first reading, and the largest probability difference of a reading in both. Exit status 1
when any gap differs beyond ties or a probability differs by more than ``--tol``; the timings
(``ms``) are not compared.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from apollo_restore.data.formats import read_predictions
from apollo_restore.errors import FileError, FormatError


def swapped_ties(a: list[tuple[str, float]], b: list[tuple[str, float]], tie: float) -> bool:
    """Whether ``b`` is ``a`` with readings of near-equal probability (within ``tie``) reordered:
    the same readings, position by position the same probability within ``tie``."""
    return sorted(t for t, _ in a) == sorted(t for t, _ in b) and all(
        abs(pa - pb) <= tie for (_, pa), (_, pb) in zip(a, b)
    )


def compare(before: Path, after: Path, tol: float, tie: float) -> tuple[dict[str, float], bool]:
    """The counts the module docstring names, and whether the two files agree."""
    a = {p.id: p.candidates for p in read_predictions(before)}
    b = {p.id: p.candidates for p in read_predictions(after)}
    ids = [i for i in a if i in b]
    same = [i for i in ids if [t for t, _ in a[i]] == [t for t, _ in b[i]]]
    ties = [i for i in ids if i not in same and swapped_ties(a[i], b[i], tie)]
    first = [i for i in ids if a[i][:1] and b[i][:1] and a[i][0][0] == b[i][0][0]]
    diffs = [
        abs((pa or 0.0) - (dict(b[i])[t] or 0.0)) for i in ids for t, pa in a[i] if t in dict(b[i])
    ]  # a reading in both lists, wherever it stands
    counts = {
        "gaps in both": len(ids),
        "only in one file": len(set(a) ^ set(b)),
        "same readings, same order": len(same),
        "near ties swapped": len(ties),
        "same first reading": len(first),
        "largest probability difference": max(diffs, default=0.0),
    }
    agree = (
        not counts["only in one file"]
        and len(same) + len(ties) == len(ids)
        and counts["largest probability difference"] <= tol
    )
    return counts, agree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tol", type=float, default=1e-5, help="largest probability difference allowed")
    parser.add_argument("--tie", type=float, default=1e-4, help="probabilities this close may swap places")
    args = parser.parse_args()
    try:
        counts, agree = compare(args.before, args.after, args.tol, args.tie)
    except (FileError, FormatError) as err:  # a missing or damaged file: its numbered message, no traceback
        print(f"error: {err}", file=sys.stderr)
        return 2
    for name, value in counts.items():
        print(f"{name}: {value:g}" if isinstance(value, float) else f"{name}: {value}")
    print("the same" if agree else "they differ")
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
