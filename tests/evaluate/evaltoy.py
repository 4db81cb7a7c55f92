"""Toy documents for the evaluation tests: lacunae, supplements and uncertain letters."""

from __future__ import annotations

PASSAGE_A = "κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν· ομολογω πεπρακεναι σοι καμηλον θηλειαν"
PASSAGE_B = "ετους δευτερου και εικοστου αντωνινου καισαρος του κυριου τυβι· ελαβον παρα σου τας δραχμας"
# "δευτερου" and "αντωνινου" are editor supplements; "τυβι" is read uncertainly
TOY_TEXT = "ετους δευτερου και εικοστου αντωνινου καισαρος του κυριου τυβι· ελαβον παρα σου --- δραχμας … " + PASSAGE_A
SUPPLIED = ("δευτερου", "αντωνινου")


def toy_row(doc_id: str, text: str, source: str = "ddb", split: str = "test", **extra) -> dict:
    row = {"id": doc_id, "source": source, "split": split, "group": f"{source}:{doc_id}", "tm": None, "date": None,
           "text": text, "text_uncertain_excluded": text, "supplied_start": [], "supplied_end": [],
           "letters": sum(c.isalpha() for c in text), "lacunae": text.count("…")}  # fmt: skip
    row.update(extra)
    return row


def toy_rows() -> list[dict]:
    starts = [TOY_TEXT.index(w) for w in SUPPLIED]
    ends = [s + len(w) for s, w in zip(starts, SUPPLIED)]
    ue = TOY_TEXT.replace("τυβι·", "----").replace("ετους", "ετ--ς")  # one dropped '·': offsets shift
    return [
        toy_row("d0", TOY_TEXT, text_uncertain_excluded=ue, supplied_start=starts, supplied_end=ends),
        toy_row("d1", PASSAGE_B + " " + PASSAGE_A, date=-120),
        toy_row("d2", PASSAGE_A + " … " + PASSAGE_B, date=250),
        toy_row("i0", PASSAGE_A, source="inscription", date=400),
    ]
