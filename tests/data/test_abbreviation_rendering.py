"""An abbreviation reads the same in a user's text as in the training text (issue 36, item 1): the
editor's expansion dropped, the written letters kept (``Ὀξυρυγχ(ιτῶν)`` → ``οξυρυγχ``). The two
renderings were compared on validation gaps next to abbreviations (``benchmarks/abbreviations.py``,
BENCHMARKS.md "Abbreviations in the context"); this pins the one chosen, on every path."""

from __future__ import annotations

from apollo_restore.data.document import Document, Text, render
from apollo_restore.data.readers.ddb import parse_original
from apollo_restore.data.readers.epidoc import parse_epidoc_file
from apollo_restore.data.readers.leiden import parse_leiden
from apollo_restore.restoration.context import GapContexts
from apollo_restore.restoration.request import RestoreRequest

WORDS = ["τῇ", "λαμπρᾷ", "Ὀξυρυγχ(ιτῶν)", "πόλει", "διὰ", "Μηνᾶ"]
RENDERED = "τηι λαμπραι οξυρυγχ πολει δια μηνα"


def _training(words: list[str]) -> str:
    """The DDB reader's rendering of ``words`` (one token each), as the training text has it."""
    segments, in_supplied = [], False
    for word in words:
        if segments:
            segments.append(Text(" "))
        parsed, in_supplied = parse_original(word, in_supplied)
        segments.extend(parsed)
    return render(Document("d", "ddb", segments)).text


def test_training_and_input_drop_the_expansion_alike():
    assert _training(WORDS) == RENDERED
    assert render(parse_leiden(" ".join(WORDS))).text == RENDERED


def test_epidoc_expansion_renders_the_same():
    tei = "http://www.tei-c.org/ns/1.0"
    xml = (
        f'<TEI xmlns="{tei}"><text><body><div type="edition" xml:lang="grc"><ab>τῇ λαμπρᾷ '
        "<expan>Ὀξυρυγχ<ex>ιτῶν</ex></expan> πόλει διὰ Μηνᾶ</ab></div></body></text></TEI>"
    )
    assert render(parse_epidoc_file(xml.encode(), "t.xml", "user")).text == RENDERED


def test_the_model_sees_the_written_letters_before_a_gap():
    request = RestoreRequest(" ".join(WORDS) + " [.7] ἐπερωτῶντος καὶ").validate()
    prefix, suffix = GapContexts(request.document.segments).context(0, [])
    assert prefix.endswith(RENDERED + " ") and suffix.startswith(" επερωτωντος")
