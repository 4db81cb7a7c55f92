"""Pick demonstration texts from the DDB test split and report, good or bad, how the shipped
model restores them (the table in MODEL_CARD.md, "Evaluation", and the web page's default example).

    python scripts/demo_examples.py --corpus corpora/ddb-trismegistos-2016.tar.xz [--n 6]

Documents are taken in a fixed order (SHA-1 of the id) among **test-split** DDB documents whose
Leiden text is 150–450 characters long and has at least two editor's supplements that are whole
words of 4–10 letters. In each, the first two such supplements become lacunae ``[.n]`` (``n`` =
letters as an editor counts them: an iota subscript is not a letter); the editor's supplement is
the answer. Prints each text, the top readings (edition form, calibrated probability) and the
rank of the edition's reading (``—``: not among the 20).
"""

from __future__ import annotations

import argparse
import hashlib
import unicodedata
from pathlib import Path

from apollo_restore.data.document import Lacuna, LineBreak, Supplied, Text, to_leiden
from apollo_restore.data.normalise import normalise
from apollo_restore.data.prepare import CorpusSpec, reader_for
from apollo_restore.data.readers.archive import SkipLog, iter_files
from apollo_restore.data.splits import split_of
from apollo_restore.evaluate.metrics import agnostic
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.load import load_restorer
from apollo_restore.schema.restoration import percent


def letters(text: str) -> int:
    """Letters as an editor counts them (NFC, iota subscript not counted)."""
    return sum(ch.isalpha() for ch in unicodedata.normalize("NFC", text))


def _boundary(seg, at_end: bool) -> bool:
    if seg is None or isinstance(seg, LineBreak):
        return True
    if not isinstance(seg, Text):
        return False
    ch = seg.text[-1:] if at_end else seg.text[:1]
    return not ch or not ch.isalpha()


def demo_of(doc) -> tuple[str, list[str]] | None:
    """``(leiden with two lacunae, answers)`` or ``None`` when the document does not qualify."""
    segs = doc.segments
    picks = []
    for i, seg in enumerate(segs):
        if isinstance(seg, Supplied) and 4 <= letters(seg.text) <= 10 and " " not in seg.text.strip():
            before, after = segs[i - 1] if i else None, segs[i + 1] if i + 1 < len(segs) else None
            if _boundary(before, True) and _boundary(after, False) and normalise(seg.text).isalpha():
                picks.append(i)
    if len(picks) < 2 or any(isinstance(s, Lacuna) for s in segs):
        return None
    chosen = picks[:2]
    out = [Lacuna(letters(s.text)) if i in chosen else s for i, s in enumerate(segs)]
    leiden = to_leiden(out).strip()
    if not 150 <= len(leiden) <= 450:
        return None
    return leiden, [segs[i].text for i in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="the DDB-TM archive (docs/training.md)")
    parser.add_argument("--n", type=int, default=6)
    args = parser.parse_args()
    found = []
    spec = CorpusSpec("ddb", args.corpus)
    parse, suffixes = reader_for(spec)
    for name, content in iter_files(spec.path, suffixes, SkipLog()):
        try:
            doc = parse(content, name, spec.source)
        except Exception:  # noqa: BLE001 - a file the reader cannot parse is no demonstration
            continue
        if split_of(doc.group) == "test" and (demo := demo_of(doc)):
            found.append((hashlib.sha1(doc.id.encode()).hexdigest(), doc.id, *demo))
    restorer = load_restorer()
    print(f"{len(found)} qualifying test documents; the first {args.n} by SHA-1 of the id:\n")
    for _, doc_id, leiden, answers in sorted(found)[: args.n]:
        result = restore_text(restorer, leiden, k=20)
        print(f"### {doc_id}\n\n```\n{leiden}\n```\n")
        print("| gap | edition | model's top 3 (probability) | edition's rank |")
        print("|---|---|---|---:|")
        for gap, answer in zip(result.gaps, answers):
            keys = [agnostic(c.text) for c in gap.candidates]
            rank = keys.index(agnostic(answer)) + 1 if agnostic(answer) in keys else "—"
            top = ", ".join(f"{c.display or c.text} ({percent(c.prob)})" for c in gap.candidates[:3])
            print(f"| {gap.number} | {answer} | {top} | {rank} |")
        print()


if __name__ == "__main__":
    main()
