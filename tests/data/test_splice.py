"""Readings spliced into a Leiden text as the user gave it: the export and the restored text
keep every editorial mark, and a machine reading is never written inside the editor's ``[ ]``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from apollo_restore.data.document import Supplied
from apollo_restore.data.readers.leiden import find_gaps, parse_leiden
from apollo_restore.data.splice import Fill, splice
from apollo_restore.restoration.export import MachineReading, export_leiden, marker

ISSUE_TEXT = (
    "1 Εὔτυχος πρεσβύτερος καὶ Εὔτυχος τρίτος\n"
    "2 πράσιν ταύτην ἀπὸ τῆς [.9] ἡμέρας ἐπὶ τὸν ἅπαντα χρόνον . ἀπὸ τῶν ὑπαρχόντων vac. ἐκ τοῦ πρὸς "
    "<τῶν> ἡμῶν [---]\n"
    "3 μέρ[ο]υς, αὐτόθεν οὖν"
)

WORDS = ["καὶ", "τοῦ", "Αὐρήλιος", "ἔτους", "χαίρειν", "κυρίῳ", "ἡμέρας", "Τῦβι"]
EDITORIAL = [
    "[αβ]",  # the editor's supplement
    "<τῶν>",
    "⟨καὶ⟩",
    "{ου}",
    "⟦δε⟧",
    "στρ(ατηγῷ)",
    "κα̣ὶ",  # an underdotted letter
    "ἐ̣π̣ὶ",
    "vac.",
    "vacat",
    ".",
    ",",
    "·",
    ";",
    "μέρ[ο]υς",
]
GAPS = ["[.5]", "[ca.5]", "[c.7]", "[.5-8]", "[---]", "[- - -]", "[.....]", "[...]", "[.12]", "[ca.3-4]"]


@st.composite
def leiden_texts(draw) -> str:
    """Leiden text with every construct the reader accepts, line numbers included."""
    lines = []
    numbered = draw(st.booleans())
    for n in range(1, draw(st.integers(1, 4)) + 1):
        tokens = draw(st.lists(st.sampled_from(WORDS + EDITORIAL + GAPS), min_size=1, max_size=8))
        line = " ".join(tokens)
        lines.append(f"{n} {line}" if numbered else line)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines) + draw(st.sampled_from(["", newline]))


@settings(max_examples=200, deadline=None)
@given(leiden_texts())
def test_export_without_readings_is_the_input(text):
    assert export_leiden(text, {}, "m") == text


@settings(max_examples=200, deadline=None)
@given(leiden_texts(), st.data())
def test_export_replaces_exactly_the_chosen_gaps(text, data):
    gaps = find_gaps(text)
    chosen = data.draw(st.sets(st.integers(1, len(gaps)), max_size=len(gaps))) if gaps else set()
    readings = {n: MachineReading(n, "κυρίου", 0.5) for n in chosen}
    out = export_leiden(text, readings, "m")
    expected, at, k = [], 0, 0
    for n, gap in enumerate(gaps, 1):
        if n in chosen:
            k += 1
            expected += [text[at : gap.start], f"⁅κυρίου⁆{marker(k)}"]
            at = gap.end
    body = "".join(expected) + text[at:]
    if not chosen:
        assert out == text
        return
    assert out.startswith(body)
    apparatus = out[len(body) :].lstrip("\r\n").splitlines()
    assert apparatus[0].startswith("⁽ᵐ⁾ Machine-proposed readings") and len(apparatus) == 1 + len(chosen)


def test_export_of_the_issue_text_is_the_text_byte_for_byte():
    assert export_leiden(ISSUE_TEXT, {}, "m") == ISSUE_TEXT
    out = export_leiden(ISSUE_TEXT, {1: MachineReading(1, "πρώτης", 0.5)}, "m")
    assert out.startswith(ISSUE_TEXT.replace("[.9]", "⁅πρώτης⁆⁽ᵐ¹⁾") + "\n\n")
    assert "⁽ᵐ¹⁾ gap 1, line 2, [.9]: πρώτης (50 %)" in out


LINES = "1 ἔτους δευτέρου καὶ εἰκοστοῦ\n2 Ἀντωνίνου Καίσαρος τοῦ [...-\n3 ...] Τῦβι"


def test_machine_reading_across_a_line_break_stays_outside_the_editors_brackets():
    gaps = find_gaps(LINES)
    out = splice(LINES, gaps, {0: Fill("κυρ"), 1: Fill("ίου")})
    assert out == "1 ἔτους δευτέρου καὶ εἰκοστοῦ\n2 Ἀντωνίνου Καίσαρος τοῦ ⁅κυρ-\n3 ίου⁆ Τῦβι"
    assert splice(LINES, gaps, {1: Fill("ίου")}).endswith("τοῦ [...]-\n3 ⁅ίου⁆ Τῦβι")
    marked = splice(LINES, gaps, {0: Fill("κυρ", mark="¹"), 1: Fill("ίου", mark="²")})
    assert marked.endswith("τοῦ ⁅κυρ⁆¹-\n3 ⁅ίου⁆² Τῦβι")


def test_readings_in_a_shared_bracket_are_written_apart_from_the_editors_letters():
    text = "τοῦ [αβ .3 γδ] καὶ"
    gaps = find_gaps(text)
    assert gaps[0].bracket == (4, 14)
    assert splice(text, gaps, {0: Fill("κυρ")}) == "τοῦ [αβ ]⁅κυρ⁆[ γδ] καὶ"
    assert splice(text, gaps, {0: Fill("κυρ", machine=False)}) == "τοῦ [αβ κυρ γδ] καὶ"  # the caller's own
    assert splice(text, gaps, {}) == text
    # the letters the editor supplied stay supplied; the machine's are no supplement
    segments = parse_leiden(splice(text, gaps, {0: Fill("κυρ")})).segments
    supplied = [seg.text for seg in segments if isinstance(seg, Supplied)]
    assert supplied == ["αβ", "γδ"]


def test_a_gap_without_brackets_is_filled_in_place():
    text = "καὶ ??? τοῦ"
    assert splice(text, find_gaps(text), {0: Fill("ἐπί")}) == "καὶ ⁅ἐπί⁆ τοῦ"
    assert splice(text, find_gaps(text), {0: Fill("ἐπί", machine=False)}) == "καὶ [ἐπί] τοῦ"
