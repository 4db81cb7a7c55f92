"""Record the shipped default model's restorations of a fixed small gap set (a regression fixture).

    PYTHONPATH=src python scripts/record_restorations.py            # writes the fixture
    PYTHONPATH=src python scripts/record_restorations.py --check    # compares, exit 1 on a change

The model is loaded the way the CLI loads it (:func:`load_restorer` with no folder: the embedded
model, its ensemble members, edition forms and calibration). Its unbounded-order members read a
text index; to keep the check fast and independent of the user's cache, the index is built over
the first :data:`INDEX_DOCUMENTS` documents of the packaged training text (about a second).

Each Leiden text below holds one short gap: exact hints (``[.n]``), a circa hint (``[ca.n]``),
a range (``[.n-m]``) and no hint (``[- - -]``). For each, the top :data:`TOP` readings (normalised
text, edition form) and their probabilities rounded to 4 decimals are recorded in
``tests/fixtures/restorations/default_model.json``; ``tests/restoration/test_regression.py`` compares.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import sys
import tempfile
from pathlib import Path

from apollo_restore.data.textindex import PACKED_TEXT, build_text_index
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.load import load_restorer

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "restorations" / "default_model.json"
INDEX_DOCUMENTS = 2000
K = 5
TOP = 5
TEXTS = [
    "ἔτους δευτέρου καὶ εἰκοστοῦ Ἀντωνίνου Καίσαρος τοῦ [.6] Τῦβι",
    "Αὐρήλιος Σαραπίων [.3]ρος τῆς μητρὸς Ταείους",
    "ὁμολογῶ πεπρακέναι σοι κάμηλον [.7] λευκὴν",
    "χαίρειν. γινώσκειν σε θέλω ὅτι [.4] ἔλαβον παρὰ σοῦ",
    "ἔρρωσθαί σε εὔχομαι [ca.6] πολλοῖς χρόνοις",
    "τῶν ὑπαρχόντων αὐτῷ περὶ κώμην [.5-7] τοῦ Ἀρσινοίτου νομοῦ",
    "ἀπέχω παρὰ σοῦ τὸν φόρον [- - -] μηνὸς Φαῶφι",
    "καὶ ὁ [.2] τῆς κώμης κωμογραμματεύς",
]


def build_index(out: Path) -> Path:
    """A text index over the first :data:`INDEX_DOCUMENTS` documents of the packaged train text."""
    ids, sources, texts = [], [], []
    with lzma.open(PACKED_TEXT, "rt", encoding="utf-8") as lines:
        next(lines)  # the format line
        for line in lines:
            doc_id, source, text = line.rstrip("\n").split("\t", 2)
            ids.append(doc_id)
            sources.append(source)
            texts.append(text)
            if len(ids) == INDEX_DOCUMENTS:
                break
    build_text_index(ids, sources, texts, out, origin=f"first {INDEX_DOCUMENTS} documents of {PACKED_TEXT.name}")
    return out


def load(index_dir: Path):
    """The default model as the CLI loads it, its text-index members over ``index_dir``."""
    before = os.environ.get("APOLLO_RESTORE_INDEX")
    os.environ["APOLLO_RESTORE_INDEX"] = str(index_dir)
    try:
        return load_restorer()
    finally:
        if before is None:
            del os.environ["APOLLO_RESTORE_INDEX"]
        else:
            os.environ["APOLLO_RESTORE_INDEX"] = before


def restoration(restorer, text: str) -> dict:
    """``{"text", "hint", "candidates": [[normalised, edition form, prob], ...]}`` for a one-gap text."""
    gap = restore_text(restorer, text, k=K).gaps[0]
    cands = [[c.text, c.display, round(c.prob, 4)] for c in gap.candidates[:TOP]]
    return {"text": text, "hint": gap.label, "candidates": cands}


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the fixture instead of writing it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        restorer = load(build_index(Path(tmp) / "index"))
        records = [restoration(restorer, text) for text in TEXTS]
    if args.check:
        expected = json.loads(FIXTURE.read_text(encoding="utf-8"))["restorations"]
        same = expected == records
        print("same restorations" if same else "restorations changed")
        return 0 if same else 1
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    payload = {"k": K, "index_documents": INDEX_DOCUMENTS, "restorations": records}
    _write_atomic(FIXTURE, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
    for record in records:
        print(record["text"], "|", record["hint"], "|", ", ".join(f"{c[0]} {c[2]:.4f}" for c in record["candidates"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
