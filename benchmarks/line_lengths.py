"""The line-length estimate of a lost extent, measured on ddb VALIDATION documents (issue 22).

    python benchmarks/line_lengths.py --prepared data/prepared \\
        --corpus ../shared/corpora/ddb-trismegistos-2016.tar.xz --per-doc 3

The DDB token XML keeps each word's row, so its documents have their lines. For each validation
document, up to ``--per-doc`` intact lines of ≥ 6 letters are cut: the last (or, at random, the
first) ``m`` letters, ``m`` uniform in 1..min(20, letters − 1), become a lacuna of unknown extent,
and :func:`~apollo_restore.restore.line_lengths.line_estimates` estimates ``m`` from the
document's other lines. Printed per band of ``m``: the share of cuts with an estimate, the share
whose range holds ``m``, and the mean signed and absolute error of the range's middle (letters).
"""

from __future__ import annotations

import argparse
import statistics
import zlib
from pathlib import Path

import numpy as np

from apollo_restore.data.document import Lacuna, LineBreak, Segment, Text
from apollo_restore.data.normalise import NOT_LETTERS, normalise
from apollo_restore.data.readers.archive import SkipLog, iter_files
from apollo_restore.data.readers.ddb import parse_file
from apollo_restore.data.table import load_documents
from apollo_restore.errors import CorpusError
from apollo_restore.restore.line_lengths import line_estimates, lines_of

BANDS = ((1, 4), (5, 8), (9, 12), (13, 16), (17, 20))


def cut(lines: list[list[Segment]], row: int, lost: int, at_start: bool) -> tuple[list[Segment], int]:
    """The document's segments with ``lost`` letters of line ``row`` replaced by a lacuna of
    unknown extent (at the line's start or end), and that lacuna's index."""
    text = normalise("".join(seg.text for seg in lines[row]))
    at = [i for i, ch in enumerate(text) if ch not in NOT_LETTERS]
    if at_start:
        line: list[Segment] = [Lacuna(None), Text(text[at[lost - 1] + 1 :])]
    else:
        line = [Text(text[: at[-lost]]), Lacuna(None)]
    segments: list[Segment] = []
    index = sum(isinstance(seg, Lacuna) for ln in lines[:row] for seg in ln)
    for i, ln in enumerate(lines):
        segments += (line if i == row else ln) + [LineBreak(False)]
    return segments[:-1], index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--corpus", type=Path, required=True, help="the DDB-TM archive")
    parser.add_argument("--per-doc", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    wanted = set(load_documents(args.prepared, split="validation", sources=["ddb"]).column("id").to_pylist())
    rng = np.random.default_rng(args.seed)
    results: list[tuple[int, tuple[int, int] | None]] = []
    docs = 0
    for name, content in iter_files(args.corpus, (".xml",), SkipLog()):
        stem = name.rsplit("/", 1)[-1].removesuffix("_lemmatized.xml")
        if stem not in wanted:
            continue
        try:
            doc = parse_file(content, name)
        except CorpusError:
            continue
        lines = lines_of(doc.segments)
        candidates = [
            i
            for i, ln in enumerate(lines)
            if all(isinstance(seg, Text) for seg in ln)
            and sum(ch not in NOT_LETTERS for ch in normalise("".join(s.text for s in ln))) >= 6
        ]
        if not candidates:
            continue
        docs += 1
        for row in rng.permutation(candidates)[: args.per_doc]:
            letters = sum(ch not in NOT_LETTERS for ch in normalise("".join(s.text for s in lines[row])))
            lost = int(rng.integers(1, min(20, letters - 1) + 1))
            segments, index = cut(lines, int(row), lost, bool(zlib.crc32(f"{name}{row}".encode()) % 2))
            est = line_estimates(segments)[index]
            results.append((lost, None if est is None else (est.lo, est.hi)))
    print(f"## Line-length estimates on ddb validation ({docs} documents, {len(results)} cut lines)\n")
    print("| letters lost | cuts | with an estimate | range holds it | middle − truth | abs error |")
    print("|---|---:|---:|---:|---:|---:|")
    for lo, hi in (*BANDS, (1, 20)):
        group = [(m, e) for m, e in results if lo <= m <= hi]
        given = [(m, e) for m, e in group if e is not None]
        if not given:
            continue
        errors = [(e[0] + e[1]) / 2 - m for m, e in given]
        held = statistics.mean(e[0] <= m <= e[1] for m, e in given)
        print(
            f"| {'all' if (lo, hi) == (1, 20) else f'{lo}–{hi}'} | {len(group)} | {len(given) / len(group):.2f} | "
            f"{held:.2f} | {statistics.mean(errors):+.1f} | {statistics.mean(map(abs, errors)):.1f} |"
        )


if __name__ == "__main__":
    main()
