"""Issue 56's probe of the notes: the example docs/usage.md gives of ``leaves a non-word`` is a
note the product writes for ``Κόμων Μουσαίου [.4] χαίρειν``, and the abbreviations it says get no
note (``γεωρ``, ``Φοιβ``, the ``κ`` of ``τοῦ κ``: spelled so in the editions) get none."""

from __future__ import annotations

import re
from pathlib import Path

from apollo_restore.data.orthography import default_forms
from apollo_restore.hint import Hint
from apollo_restore.restoration.presentation.notes import notes_for
from apollo_restore.schema.restoration import Candidate

USAGE = Path(__file__).resolve().parents[2] / "docs" / "usage.md"
PREFIX, SUFFIX = "κομων μουσαιου ", " χαιρειν"


def _notes(reading: str) -> list[str]:
    forms = default_forms()
    candidate = Candidate(reading, 0.5, -1.0, unknown_words=forms.unknown_words(reading, PREFIX, SUFFIX))
    return notes_for(candidate, PREFIX, SUFFIX, Hint.exact(4))


def test_the_documented_non_word_note_is_one_the_product_writes():
    example = re.search(r"\| `leaves a non-word: (\w+)` \|", USAGE.read_text(encoding="utf-8")).group(1)
    assert _notes(example) == [f"leaves a non-word: {example}"]


def test_the_abbreviations_the_documentation_names_get_no_note():
    row = next(line for line in USAGE.read_text(encoding="utf-8").splitlines() if "leaves a non-word:" in line)
    assert all(word in row for word in ("γεωρ", "Φοιβ", "τοῦ κ"))
    for reading in ("γεωρ", "φοιβ", "του κ"):
        assert _notes(reading) == []
