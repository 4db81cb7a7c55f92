"""An abbreviation in a user's text (issue 36, item 1): the model reads the word with the editor's
expansion (``Ὀξυρυγχ(ιτῶν)`` → ``οξυρυγχιτων``), on every way a text comes in (Leiden, EpiDoc), while
line lengths count only the written letters. Chosen on validation gaps next to abbreviations
(``benchmarks/abbreviations.py``, BENCHMARKS.md "Abbreviations in the context": expanded right more
often than dropped, exact count and none). The training readers keep only the written letters."""

from __future__ import annotations

from apollo_restore.data.document import Document, Text, render
from apollo_restore.data.readers.ddb import parse_original
from apollo_restore.data.readers.epidoc import parse_epidoc_file
from apollo_restore.data.readers.leiden import parse_leiden
from apollo_restore.data.readers.typed import as_leiden
from apollo_restore.restoration.context import GapContexts
from apollo_restore.restoration.line_lengths import line_estimates
from apollo_restore.restoration.request import validate
from apollo_restore.schema.restoration import RestoreRequest

WORDS = ["τῇ", "λαμπρᾷ", "Ὀξυρυγχ(ιτῶν)", "πόλει", "διὰ", "Μηνᾶ"]
EXPANDED = "τηι λαμπραι οξυρυγχιτων πολει δια μηνα"
WRITTEN = "τηι λαμπραι οξυρυγχ πολει δια μηνα"
TEI = "http://www.tei-c.org/ns/1.0"
XML = (
    f'<TEI xmlns="{TEI}"><text><body><div type="edition" xml:lang="grc"><ab>τῇ λαμπρᾷ '
    "<expan>Ὀξυρυγχ<ex>ιτῶν</ex></expan> πόλει διὰ Μηνᾶ</ab></div></body></text></TEI>"
)


def _training(words: list[str]) -> str:
    """The DDB reader's rendering of ``words`` (one token each), as the training text has it."""
    segments, in_supplied = [], False
    for word in words:
        if segments:
            segments.append(Text(" "))
        parsed, in_supplied = parse_original(word, in_supplied)
        segments.extend(parsed)
    return render(Document("d", "ddb", segments)).text


def test_a_users_leiden_keeps_the_expansion_and_training_the_written_letters():
    assert render(parse_leiden(" ".join(WORDS))).text == EXPANDED
    assert _training(WORDS) == WRITTEN
    assert render(parse_epidoc_file(XML.encode(), "t.xml", "corpus")).text == WRITTEN


def test_a_users_epidoc_keeps_the_expansion_as_leiden_does():
    leiden, kind = as_leiden(XML, "t.xml")
    assert kind == "epidoc" and "Ὀξυρυγχ(ιτῶν)" in leiden
    assert render(parse_leiden(leiden)).text == EXPANDED


def test_the_model_sees_the_expanded_word_before_a_gap():
    request = validate(RestoreRequest(" ".join(WORDS) + " [.7] ἐπερωτῶντος καὶ"))
    prefix, suffix = GapContexts(request.document.segments).context(0, [])
    assert prefix.endswith(EXPANDED + " ") and suffix.startswith(" επερωτωντος")


def test_line_lengths_count_only_the_written_letters():
    lines = ["αβγδεζηθικ", "αβγδεζηθικ", "αβγδεζηθικ", "αβγ[---]"]
    plain = line_estimates(parse_leiden("|".join(lines)).segments)[0]
    abbreviated = ["αβγδεζη(θικλμνξοπ)θικ"] * 3 + ["αβγ(δεζηθικλμνξ)[---]"]
    assert line_estimates(parse_leiden("|".join(abbreviated)).segments)[0] == plain
