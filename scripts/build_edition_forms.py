"""Build the edition-form table shipped in the package, and measure it on validation words.

    python scripts/build_edition_forms.py --corpora corpora [--min-count 2] \\
        [--out src/apollo_restore/data/forms/edition_forms.txt.gz] [--workers 2]

Reads every training corpus in place (the readers of ``prepare``; ``--corpora`` holds them as
:func:`~apollo_restore.data.prepare.training_corpora` names them, docs/training.md says where each
comes from), counts the accented form of each whole word of the **train** split (words touching a
lacuna left out), keeps for each normalised word the most frequent form (a final-syllable acute
before punctuation counted as the running-text grave), and keeps words seen at least ``--min-count`` times of which some
edition writes a form with an accent or breathing (a word only ever written bare is mostly an
abbreviation, see :func:`~apollo_restore.data.orthography.is_edition_form`: it is shown as its
letters and does not count as a known word). Then prints how
often the chosen form (with its grave/acute by context) equals the edition's on the words of
the **validation** split, per source: the figure in MODEL_CARD.md.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict, deque
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from apollo_restore.data.orthography import FORMS_FILE, EditionForms, edition_words, final_accent, is_edition_form
from apollo_restore.data.prepare import CorpusSpec, _chunks, reader_for, training_corpora
from apollo_restore.data.readers.archive import iter_files
from apollo_restore.data.splits import split_of
from apollo_restore.errors import CorpusError


def count_chunk(spec: CorpusSpec, items: list[tuple[str, bytes]]) -> tuple[Counter, list[tuple[str, str, bool]]]:
    """Worker: train ``Counter[(key, running form)]`` and validation ``(key, form, stop)`` words."""
    parse, _ = reader_for(spec)
    train: Counter = Counter()
    held: list[tuple[str, str, bool]] = []
    for name, content in items:
        try:
            doc = parse(content, name, spec.source)
        except CorpusError:
            continue
        split = split_of(doc.group)
        if split == "train":
            train.update((key, final_accent(form, False) if stop else form) for key, form, stop in edition_words(doc))
        elif split == "validation":
            held.extend(edition_words(doc))
    return train, held


def merge(result: tuple[Counter, list], counts: dict[str, Counter], held: list) -> None:
    """Add one chunk's train counts and validation words to the running totals."""
    train, words = result
    for (key, form), n in train.items():
        counts[key][form] += n
    held.extend(words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpora",
        type=Path,
        required=True,
        help=(
            "a folder of the corpora (docs/training.md, *Training data*): ddb-trismegistos-2016.tar.xz, "
            "tesserae-grc.tar.xz, idp-sample/DCLP, inscriptions/*.tar.xz"
        ),
    )
    parser.add_argument("--min-count", type=int, default=2)
    parser.add_argument("--out", type=Path, default=FORMS_FILE)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    counts: dict[str, Counter] = defaultdict(Counter)
    held: dict[str, list[tuple[str, str, bool]]] = defaultdict(list)
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for spec in training_corpora(args.corpora):
            _, suffixes = reader_for(spec)
            pending: deque = deque()
            for chunk in _chunks(iter_files(spec.path, suffixes), 256):
                pending.append(pool.submit(count_chunk, spec, chunk))
                while len(pending) > 2 * args.workers or (pending and pending[0].done()):
                    merge(pending.popleft().result(), counts, held[spec.source])
            while pending:
                merge(pending.popleft().result(), counts, held[spec.source])
            print(f"{spec.path.name}: {time.perf_counter() - started:.0f} s, {len(counts):,} words so far", flush=True)
    kept = {
        key: forms.most_common(1)[0][0]
        for key, forms in counts.items()
        if sum(forms.values()) >= args.min_count and any(is_edition_form(key, form) for form in forms)
    }
    table = EditionForms(kept)
    size = table.save(args.out)
    print(
        f"\n{len(kept):,} of {len(counts):,} normalised words (seen ≥ {args.min_count}×) → {args.out}: "
        f"{size / 1e6:.2f} MB, "
        f"{time.perf_counter() - started:.0f} s\n"
    )
    table = EditionForms.load(args.out)
    print("| validation source | words | in table | chosen form = edition's | same up to case | among words in table |")
    print("|---|---:|---:|---:|---:|---:|")
    for source, words in sorted(held.items()):
        if not words:
            continue
        known = [w for w in words if w[0] in table]
        right = sum(table.form(key, stop) == form for key, form, stop in words)
        caseless = sum(table.form(key, stop).lower() == form.lower() for key, form, stop in words)
        right_known = sum(table.form(key, stop) == form for key, form, stop in known)
        n = len(words)
        print(
            f"| {source} | {n:,} | {len(known) / n:.3f} | {right / n:.3f} | {caseless / n:.3f} "
            f"| {right_known / max(1, len(known)):.3f} |"
        )


if __name__ == "__main__":
    main()
