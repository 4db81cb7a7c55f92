"""Texts from places the model cannot name: how often the answer is sure of a wrong place without saying so.

    python benchmarks/attribution_elsewhere.py --prepared data/prepared --corpora corpora \
        --split validation [--model FOLDER]

**Leaving one corpus out, by its classes**: for each inscription region, its validation
inscriptions are attributed with the region's places (its settlements and the region) taken out
of the answer (their probability and their neighbours' votes; the rest renormalised), as if the
model had never heard of them: to it they come from elsewhere. A proxy, not a model retrained
without the corpus: the bag still learnt the region's words. Each is counted as the answer would
give it (:meth:`~apollo_restore.attribution.model.AttributionModel.predict`): *warned* where its
first place is an inscription's (``W802``: it may come from elsewhere), *sure
unwarned* where its first place is a papyrus place above 50 %. The literary texts of the split
(``literary``, ``dclp``: no place label) are counted the same way with nothing taken out.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from apollo_restore.attribution.features import letters
from apollo_restore.attribution.labels import read_labels
from apollo_restore.attribution.model import AttributionModel
from apollo_restore.attribution.train import MAX_CHARS, examples, mask_supplied
from apollo_restore.data.table import load_documents


def verdict(model: AttributionModel, place_probs: np.ndarray) -> str:
    """``"warned"`` (first place an inscription's: W802), ``"sure"`` (a papyrus place above 50 %)
    or ``"unsure"``."""
    if not model.reads_formulae(place_probs):
        return "warned"
    return "sure" if place_probs.max() > 0.5 else "unsure"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, required=True)
    parser.add_argument("--corpora", type=Path, required=True)
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--model", type=Path, default=None)
    args = parser.parse_args()
    model = AttributionModel.load(args.model)
    labels = read_labels(args.corpora)
    index = {p: i for i, p in enumerate(model.places)}
    of_region: dict[str, set[int]] = defaultdict(set)
    for (source, _), label in labels.items():
        if source == "inscription" and label.region:
            of_region[label.region] |= {index[p] for p in (label.place, label.region) if p in index}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    items = [e for e in examples(args.prepared, args.corpora, args.split, seed=0, crops=0, fill=0.0)
             if e.source == "inscription" and e.label.region in of_region]  # fmt: skip
    for e in items:
        _, place_probs = model.probabilities(e.text, e.letters)
        kept = place_probs.copy()
        kept[sorted(of_region[e.label.region])] = 0.0
        kept /= max(kept.sum(), 1e-12)
        counts[e.label.region][verdict(model, kept)] += 1
        counts["inscriptions at home (nothing taken out)"][verdict(model, place_probs)] += 1
    table = load_documents(args.prepared, split=args.split, sources=["literary", "dclp"])
    for source, text, starts, ends in zip(*(table.column(c).to_pylist() for c in
                                            ("source", "text", "supplied_start", "supplied_end"))):  # fmt: skip
        shown = mask_supplied(text, starts, ends)[:MAX_CHARS]
        n = letters(shown)
        if n >= 10:
            counts[f"{source} (no place label)"][verdict(model, model.probabilities(shown, n)[1])] += 1
    print(f"{args.split}: W802 says a text placed first among inscriptions may come from elsewhere\n")
    print("| texts | n | warned (W802) | sure of a papyrus place, unwarned | neither |")
    print("|---|---:|---:|---:|---:|")
    for name, c in sorted(counts.items()):
        n = sum(c.values())
        print(f"| {name} | {n} | {c['warned'] / n:.3f} | {c['sure'] / n:.3f} | {c['unsure'] / n:.3f} |")


if __name__ == "__main__":
    main()
