"""The line-length estimate of a lost extent, measured on ddb VALIDATION documents (issue 22).

    python benchmarks/line_lengths.py --prepared data/prepared \\
        --corpus corpora/ddb-trismegistos-2016.tar.xz --per-doc 3

The DDB token XML keeps each word's row, so its documents have their lines. For each validation
document, up to ``--per-doc`` intact lines of ≥ 6 letters are cut: the last (or, at random, the
first) ``m`` letters, ``m`` uniform in 1..min(20, letters − 1), become a lacuna of unknown extent,
and :func:`~apollo_restore.restoration.line_lengths.line_estimates` estimates ``m`` from the
document's other lines. Printed per band of ``m``: the share of cuts with an estimate, the share
whose range holds ``m``, and the mean signed and absolute error of the range's middle (letters).
With ``--restore N``, the default model (bare: no calibration) restores ``N`` cuts per band of
``m`` with no hint, with the estimate as a range hint, and with the true length.
"""

from __future__ import annotations

import argparse
import statistics
import zlib
from pathlib import Path

import numpy as np
from tqdm import tqdm

from apollo_restore.data.document import Lacuna, LineBreak, Segment, Text
from apollo_restore.data.normalise import NOT_LETTERS, letter_count, normalise
from apollo_restore.data.readers.archive import SkipLog, iter_files
from apollo_restore.data.readers.ddb import parse_file
from apollo_restore.data.table import load_documents
from apollo_restore.errors import CorpusError
from apollo_restore.evaluate.metrics import score_gap, uniform
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.context import context_of
from apollo_restore.restoration.line_lengths import line_estimates, lines_of
from apollo_restore.restoration.load import load_restorer
from apollo_restore.schema.restoration import LengthEstimate

BANDS = ((1, 4), (5, 8), (9, 12), (13, 16), (17, 20))


def cut(lines: list[list[Segment]], row: int, lost: int, at_start: bool) -> tuple[list[Segment], int, str]:
    """The document's segments with ``lost`` letters of line ``row`` replaced by a lacuna of
    unknown extent (at the line's start or end), that lacuna's index and the letters cut."""
    text = normalise("".join(seg.text for seg in lines[row]))
    at = [i for i, ch in enumerate(text) if ch not in NOT_LETTERS]
    if at_start:
        line: list[Segment] = [Lacuna(None), Text(text[at[lost - 1] + 1 :])]
        target = text[: at[lost - 1] + 1]
    else:
        line = [Text(text[: at[-lost]]), Lacuna(None)]
        target = text[at[-lost] :]
    segments: list[Segment] = []
    index = sum(isinstance(seg, Lacuna) for ln in lines[:row] for seg in ln)
    for i, ln in enumerate(lines):
        segments += (line if i == row else ln) + [LineBreak(False)]
    return segments[:-1], index, target


def restore_cuts(cuts: list[tuple[list[Segment], int, str, LengthEstimate]], per_band: int) -> None:
    """Top-1 and Δlen of the default model on ``per_band`` cuts per band of lost letters, with
    no hint, the estimate as a range hint, and the true length."""
    restorer = load_restorer(present=False)
    chosen = []
    for lo, hi in BANDS:
        chosen += [c for c in cuts if lo <= letter_count(c[2]) <= hi][:per_band]
    hints = {"no hint": lambda c: NO_HINT, "line estimate": lambda c: c[3].hint,
             "true length": lambda c: Hint.exact(letter_count(c[2]))}  # fmt: skip
    scores: dict[str, list] = {name: [] for name in hints}
    for c in tqdm(chosen, desc="restore"):
        prefix, suffix = context_of(c[0], c[1], [])
        for name, hint in hints.items():
            found = restorer.candidates(prefix[-250:], suffix[:250], hint(c), 20)
            scores[name].append(score_gap(c[2], [x.text for x in found]))
    print(f"\n### The default model on {len(chosen)} cut lines ({per_band} per band): W.Top-1 / W.Δlen\n")
    print("| hint | W.Top-1 | W.Top-20 | W.Δlen |")
    print("|---|---:|---:|---:|")
    for name, got in scores.items():
        u = uniform(got)
        print(f"| {name} | {u.top1:.3f} | {u.top20:.3f} | {u.dlen:+.1f} |")


def validation_cuts(
    prepared: Path, corpus: Path, per_doc: int, seed: int
) -> tuple[int, list[tuple[int, tuple[int, int] | None]], list[tuple[list[Segment], int, str, LengthEstimate]]]:
    """The cut lines of ddb validation documents (see the module docstring): the documents with a
    line to cut, each cut's letters lost and estimate range (``None``: none), and the cuts with an
    estimate ``(segments, lacuna index, letters cut, estimate)``."""
    wanted = set(load_documents(prepared, split="validation", sources=["ddb"]).column("id").to_pylist())
    rng = np.random.default_rng(seed)
    results: list[tuple[int, tuple[int, int] | None]] = []
    docs = 0
    cuts: list[tuple[list[Segment], int, str, LengthEstimate]] = []
    for name, content in iter_files(corpus, (".xml",), SkipLog()):
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
        for row in rng.permutation(candidates)[:per_doc]:
            letters = sum(ch not in NOT_LETTERS for ch in normalise("".join(s.text for s in lines[row])))
            lost = int(rng.integers(1, min(20, letters - 1) + 1))
            segments, index, target = cut(lines, int(row), lost, bool(zlib.crc32(f"{name}{row}".encode()) % 2))
            est = line_estimates(segments)[index]
            results.append((lost, None if est is None else (est.lo, est.hi)))
            if est is not None:
                cuts.append((segments, index, target, est))
    return docs, results, cuts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--corpus", type=Path, required=True, help="the DDB-TM archive")
    parser.add_argument("--per-doc", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--restore", type=int, default=0, help="also restore this many cuts per band (3 hints)")
    args = parser.parse_args()
    docs, results, cuts = validation_cuts(args.prepared, args.corpus, args.per_doc, args.seed)
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
    if args.restore:
        restore_cuts(cuts, args.restore)


if __name__ == "__main__":
    main()
