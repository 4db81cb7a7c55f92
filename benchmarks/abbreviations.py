"""How to render an abbreviation ``Ὀξυρυγχ(ιτῶν)`` in the context a gap is restored with, on validation.

    python benchmarks/abbreviations.py --prepared data/prepared \\
        --corpus corpora/ddb-trismegistos-2016.tar.xz --gaps 32
    python benchmarks/abbreviations.py ... --gaps 32 --skip 32 --out /tmp/abbr.jsonl   # the next 32

Training text drops an editor's expansion (docs/design.md, *Documents*: only the written letters, ``οξυρυγχ``). Is
that the better rendering of a user's context, or does the expanded word (``οξυρυγχιτων``) help
the model (the packaged text also holds editions that write the word in full)? (It does: a user's
text now keeps expansions, BENCHMARKS.md "Abbreviations in the context".)

The script reads the ddb **validation** documents (the prepared table's ids) from the DDB-TM
archive, and takes up to ``--gaps`` gaps, one per document (documents in a fixed hashed order): a
plain word of 1–20 letters within two words of an abbreviated word (a token with ``( )``). Each gap
is restored by the shipped default (calibrated list of 20) with its context rendered twice —
expansions dropped (as training does) and expanded (the parentheses removed, their letters
kept) — under an exact count and no count, and the script prints Top-1 / Top-20 per rendering and
condition (exact-match letters, spaces ignored).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time
from pathlib import Path

import torch
from lxml import etree

from apollo_restore.data.document import Document, Text, render
from apollo_restore.data.normalise import letter_count
from apollo_restore.data.readers.archive import iter_files
from apollo_restore.data.readers.ddb import parse_original
from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.metrics import agnostic
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.load import load_restorer

CONTEXT = 250  # characters of context either side, as gap sets have
NEAR = 2  # words between the gap and an abbreviation, at most
_PLAIN = re.compile(r"^[^\W\d_]+$")  # a word of letters alone: no brackets, gaps, expansions, underdots


def tokens(content: bytes) -> list[str]:
    """The ``original`` forms of a DDB-TM file's words, in order."""
    return [w.get("original") for w in etree.fromstring(content).iter("word") if w.get("original")]


def rendered(words: list[str], expand: bool) -> str:
    """``norm.v1`` text of ``words`` joined by spaces, each read as the DDB reader reads it; with
    ``expand``, an expansion's letters are kept (its parentheses removed)."""
    segments = []
    in_supplied = False
    for word in words:
        if segments:
            segments.append(Text(" "))
        parsed, in_supplied = parse_original(word.replace("(", "").replace(")", "") if expand else word, in_supplied)
        segments.extend(parsed)
    return render(Document("d", "ddb", segments)).text if segments else ""


def gap_of(words: list[str]) -> int | None:
    """Index of the first plain word of 1–20 letters within :data:`NEAR` words of an
    abbreviation, not in a supplement (no ``[`` open before it in the file)."""
    open_brackets = 0
    for i, word in enumerate(words):
        if open_brackets <= 0 and _PLAIN.match(word) and 1 <= letter_count(agnostic(word)) <= 20:
            near = words[max(0, i - NEAR) : i] + words[i + 1 : i + 1 + NEAR]
            if any("(" in w and ")" in w for w in near):
                return i
        open_brackets += word.count("[") - word.count("]")
    return None


def gaps(prepared: Path, corpus: Path, wanted: int, skip: int = 0) -> list[dict]:
    """Up to ``wanted`` gaps of ddb validation documents (after the first ``skip``), each with both
    renderings' contexts."""
    table = load_documents(prepared, "validation", ["ddb"])
    ids = set(table.column("id").to_pylist())
    found = {}
    for name, content in iter_files(corpus, (".xml",)):
        doc_id = Path(name.split(":")[-1]).name.removesuffix(".xml").removesuffix("_lemmatized")
        if doc_id not in ids:
            continue
        words = tokens(content)
        i = gap_of(words)
        if i is None:
            continue
        gap = {"doc": doc_id, "target": rendered([words[i]], False)}
        for expand in (False, True):
            key = "expanded" if expand else "dropped"
            gap[key] = (rendered(words[:i], expand)[-CONTEXT:] + " ", " " + rendered(words[i + 1 :], expand)[:CONTEXT])
        found[doc_id] = gap
    order = sorted(found, key=lambda d: hashlib.sha256(d.encode()).hexdigest())
    return [found[d] for d in order[skip : skip + wanted]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True, help="the DDB-TM archive")
    parser.add_argument("--gaps", type=int, default=32)
    parser.add_argument("--skip", type=int, default=0, help="leave out the first SKIP gaps (a second sample)")
    parser.add_argument("--out", type=Path, help="append each gap's outcomes here (JSON lines)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    started = time.perf_counter()
    chosen = gaps(args.prepared, args.corpus, args.gaps, args.skip)
    print(f"{len(chosen)} gaps near an abbreviation ({time.perf_counter() - started:.0f} s to read)", flush=True)
    restorer = load_restorer()
    hits: dict[tuple[str, str], list[tuple[bool, bool]]] = {}
    for gap in chosen:
        truth = agnostic(gap["target"])
        outcome = {"doc": gap["doc"], "target": gap["target"]}
        for rendering in ("dropped", "expanded"):
            prefix, suffix = gap[rendering]
            for condition, hint in (("exact", Hint.exact(letter_count(gap["target"]))), ("none", NO_HINT)):
                keys = [agnostic(c.text) for c in restorer.candidates(prefix, suffix, hint, 20)]
                hits.setdefault((rendering, condition), []).append((keys[:1] == [truth], truth in keys))
                outcome[f"{rendering} {condition}"] = [keys[:1] == [truth], truth in keys]
        if args.out:
            with args.out.open("a", encoding="utf-8") as out:
                out.write(json.dumps(outcome, ensure_ascii=False) + "\n")
    print(f"\n{len(chosen)} gaps, {time.perf_counter() - started:.0f} s in all\n")
    print("| context rendering | exact Top-1 | exact Top-20 | none Top-1 | none Top-20 |\n|---|---:|---:|---:|---:|")
    for rendering in ("dropped", "expanded"):
        cells = []
        for condition in ("exact", "none"):
            rows = hits[(rendering, condition)]
            cells += [f"{sum(r[0] for r in rows) / len(rows):.3f}", f"{sum(r[1] for r in rows) / len(rows):.3f}"]
        print(f"| {rendering} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
