"""How many readings of a predictions file are shown in an edition form Greek does not allow, with
today's accent rules (``valid_accents``) and without them: a circumflex on ε or ο, or more than one
accent in a word (an enclitic after it aside).

    python benchmarks/edition_accents.py --gaps GAPS.jsonl --predictions PREDS.jsonl[.xz]

Every reading of every gap is put in edition form with its gap's context, once as the product does
and once with the accent rules switched off (the forms as the table gives them); prints the counts.
"""

from __future__ import annotations

import argparse
import lzma
import tempfile
import unicodedata
from pathlib import Path
from unittest import mock

from apollo_restore.data import orthography
from apollo_restore.data.formats import read_gapset, read_predictions
from apollo_restore.data.orthography import default_forms

ACCENTS = "\u0300\u0301\u0342"  # grave, acute, circumflex (NFD)
ENCLITICS = {"τις", "τι", "τινος", "τινι", "τινα", "μου", "μοι", "με", "σου", "σοι", "σε", "εστι", "εστιν", "γε"}


def invalid(form: str) -> tuple[bool, bool]:
    """Whether ``form`` has a circumflex on ε/ο, and a word with two accents (not before an enclitic)."""
    nfd = unicodedata.normalize("NFD", form)
    short = any(base in "εοΕΟ" and mark == "\u0342" for base, mark in zip(nfd, nfd[1:]))
    words = nfd.split()
    two = any(
        sum(ch in ACCENTS for ch in word) > 1 and not (i + 1 < len(words) and _bare(words[i + 1]) in ENCLITICS)
        for i, word in enumerate(words)
    )
    return short, two


def _bare(word: str) -> str:
    return "".join(ch for ch in word if not unicodedata.combining(ch)).lower()


def counts(gaps: dict, predictions: list, forms) -> dict[str, int]:
    out = {"readings": 0, "circumflex on ε/ο": 0, "two accents in a word": 0}
    for prediction in predictions:
        gap = gaps[prediction.id]
        for text, _ in prediction.candidates:
            short, two = invalid(forms.display(text, gap.prefix, gap.suffix))
            out["readings"] += 1
            out["circumflex on ε/ο"] += short
            out["two accents in a word"] += two
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gaps", type=Path, required=True)
    parser.add_argument("--predictions", type=Path, required=True)
    args = parser.parse_args()
    gaps = {g.id: g for g in read_gapset(args.gaps, need_target=False)}
    path = args.predictions
    with tempfile.TemporaryDirectory() as tmp:
        if path.suffix == ".xz":
            plain = Path(tmp) / path.stem
            plain.write_bytes(lzma.decompress(path.read_bytes()))
            path = plain
        predictions = [p for p in read_predictions(path) if p.id in gaps]
    forms = default_forms()
    after = counts(gaps, predictions, forms)
    with mock.patch.object(orthography, "valid_accents", lambda form, enclitic=False: form):
        before = counts(gaps, predictions, forms)
    print(f"{len(predictions)} gaps, {after['readings']} readings")
    for key in ("circumflex on ε/ο", "two accents in a word"):
        print(f"{key}: {before[key]} without the accent rules, {after[key]} with them")


if __name__ == "__main__":
    main()
