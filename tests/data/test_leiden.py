"""Leiden plain text → segments, renderings, gap markers and located errors."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from apollo_restore.data.document import (
    Document,
    Editorial,
    Lacuna,
    LineBreak,
    Supplied,
    Text,
    Vacat,
    render,
    to_leiden,
)
from apollo_restore.data.readers.leiden import find_gaps, parse_leiden, parse_leiden_with_gaps, tidy_segments
from apollo_restore.errors import LeidenError
from apollo_restore.hint import NO_HINT, Hint

T = Text
U = lambda s: Text(s, uncertain=True)  # noqa: E731
S = Supplied


def E(text: str) -> Text:
    """An expansion's letters (``στρ(ατηγῷ)``: ``ατηγῷ``)."""
    return Text(text, expansion=True)


L = Lacuna
BR = LineBreak(False)
BRW = LineBreak(True)

CASES = [
    # (leiden, segments, rendered training text)
    ("[αβγ]δε", [S("αβγ"), T("δε")], "αβγδε"),
    ("ου[κ] ἔρχεται", [T("ου"), S("κ"), T(" ἔρχεται")], "ουκ ερχεται"),
    ("αβ [.5] γδ", [T("αβ "), L(5), T(" γδ")], "αβ ----- γδ"),
    ("αβ [.....] γδ", [T("αβ "), L(5), T(" γδ")], "αβ ----- γδ"),
    ("αβ [.1]γδ", [T("αβ "), L(1), T("γδ")], "αβ -γδ"),
    ("αβ[ca.5]", [T("αβ"), L(5, approximate=True)], "αβ-----"),
    ("αβ[c. 5]", [T("αβ"), L(5, approximate=True)], "αβ-----"),
    ("αβ [.5-8]", [T("αβ "), L(5, length_max=8)], "αβ …"),
    ("αβ [- - -]", [T("αβ "), L(None)], "αβ …"),
    ("αβ [---]", [T("αβ "), L(None)], "αβ …"),
    ("αβ [...]", [T("αβ "), L(3)], "αβ ---"),
    ("αβ [..]γ", [T("αβ "), L(2), T("γ")], "αβ --γ"),
    ("αβ […]", [T("αβ "), L(None)], "αβ …"),
    ("αβ [ - - - ] γ", [T("αβ "), L(None), T(" γ")], "αβ … γ"),
    ("[αβ .3]", [S("αβ"), T(" "), L(3)], "αβ ---"),
    ("[αβ- - -]", [S("αβ"), L(None)], "αβ…"),
    ("[- - -]ου[.2 ω]", [L(None), T("ου"), L(2), T(" "), S("ω")], "…ου-- ω"),
    ("χαι???ν", [T("χαι"), L(3), T("ν")], "χαι---ν"),
    ("κα\u0323ι\u0323 ὁ", [T("κ"), U("αι"), T(" ὁ")], "και ο"),
    ("στρ(ατηγῷ) ἀρ(τάβας)", [T("στρ"), E("ατηγῷ"), T(" ἀρ"), E("τάβας")], "στρατηγωι αρταβας"),
    (
        "ἀπὸ(?) στρ(ατηγοῦ?)",
        [T("ἀπὸ", doubt=True), T(" στρ"), Text("ατηγοῦ", expansion=True, doubt=True)],
        "απο στρατηγου",
    ),  # fmt: skip
    ("δρ((δραχμαὶ)) ι", [T("δρ"), Editorial("δραχμαὶ", "symbol"), T(" ι")], "δρ ι"),
    ("αβ⟦γδ⟧ε", [T("αβ"), Editorial("γδ", "deleted"), T("ε")], "αβε"),
    ("αβ{γδ}ε", [T("αβ"), Text("γδ", mark="surplus"), T("ε")], "αβγδε"),
    ("αβ\\γδ/ε", [T("αβ"), Text("γδ", mark="above"), T("ε")], "αβγδε"),
    ("αβ<γδ>ε ⟨ζ⟩η", [T("αβ"), Editorial("γδ"), T("ε "), Editorial("ζ"), T("η")], "αβε η"),
    ("1 αβγ\n2 δεζ", [T("αβγ"), BR, T("δεζ")], "αβγ δεζ"),
    ("5. αβγ\n10 δεζ\n", [T("αβγ"), BR, T("δεζ")], "αβγ δεζ"),
    ("ἔρχε-\nται", [T("ἔρχε"), BRW, T("ται")], "ερχεται"),
    ("ἔρχε=\n3 ται", [T("ἔρχε"), BRW, T("ται")], "ερχεται"),
    ("αβγ | δεζ", [T("αβγ"), BR, T("δεζ")], "αβγ δεζ"),
    ("αβγ vac. δεζ vacat", [T("αβγ "), Vacat(), T(" δεζ"), Vacat()], "αβγ δεζ"),
    ("αβγ vac.3 δεζ", [T("αβγ "), Vacat(3), T(" δεζ")], "αβγ δεζ"),
    ("[στρ(ατηγῷ)] αβ", [S("στρ"), E("ατηγῷ"), T(" αβ")], "στρατηγωι αβ"),
    ("[τῷ πα]-\nτρί", [S("τῷ πα"), BRW, T("τρί")], "τωι πατρι"),
    ("αβς [γ]", [T("αβς "), S("γ")], "αβς γ"),
    ("αβ\r\nγδ", [T("αβ"), BR, T("γδ")], "αβ γδ"),
    ("[ἔδοξεν.] [.]α", [S("ἔδοξεν."), T(" "), L(1), T("α")], "εδοξεν· -α"),
]


@pytest.mark.parametrize(("leiden", "segments", "rendered"), CASES, ids=[c[0] for c in CASES])
def test_leiden_segments_and_rendering(leiden, segments, rendered):
    doc = parse_leiden(leiden)
    assert doc.segments == segments
    assert render(doc).text == rendered


def test_leiden_document_fields():
    doc = parse_leiden("αβ", doc_id="x1", source="user")
    assert (doc.id, doc.source) == ("x1", "user")


def test_leiden_supplied_spans_are_silver_labels():
    rendering = render(parse_leiden("κομων [μουσαιου] του"))
    assert [sp.text for sp in rendering.supplied] == ["μουσαιου"]


@pytest.mark.parametrize(
    ("leiden", "spans", "hints"),
    [
        ("αβ [.5] γδ", [(3, 7)], [Hint.exact(5)]),
        ("αβ [- - -] γδ", [(3, 10)], [NO_HINT]),
        ("[αβ .3]", [(4, 6)], [Hint.exact(3)]),
        ("χαι???ν [.5-8]", [(3, 6), (8, 14)], [Hint.exact(3), Hint.span(5, 8)]),
        ("[ca.10]", [(0, 7)], [Hint.span(8, 12)]),
        ("[ca.3]", [(0, 6)], [Hint.span(2, 4)]),
        ("[αβγ] δ", [], []),
    ],
)
def test_leiden_find_gaps_spans_and_hints(leiden, spans, hints):
    gaps = find_gaps(leiden)
    assert [(g.start, g.end) for g in gaps] == spans
    assert [g.hint for g in gaps] == hints


@pytest.mark.parametrize(
    ("leiden", "position", "line", "column", "needle"),
    [
        ("αβ\nγδ [εζ", 6, 2, 4, "unclosed '['"),
        ("αβ]", 2, 1, 3, "stray ']'"),
        ("[αβ [γ]]", 4, 1, 5, "nested"),
        ("αβ []", 3, 1, 4, "empty brackets"),
        ("αβ [ ]", 3, 1, 4, "empty brackets"),
        ("[.0]", 2, 1, 3, "bad lacuna length"),
        ("[.8-5]", 1, 1, 2, "bad lacuna range"),
        ("στρ(ατηγῷ", 3, 1, 4, "unclosed '('"),
        ("αβ)", 2, 1, 3, "stray ')'"),
        ("⟦αβ", 0, 1, 1, "unclosed '⟦'"),
        ("{αβ", 0, 1, 1, "unclosed '{'"),
        ("αβ}", 2, 1, 3, "stray '}'"),
        ("{α{β}}", 2, 1, 3, "nested"),
        ("[.99999]", 2, 1, 3, "too long"),
    ],
)
def test_leiden_errors_locate_the_problem(leiden, position, line, column, needle):
    with pytest.raises(LeidenError) as info:
        parse_leiden(leiden)
    err = info.value
    assert (err.position, err.line, err.column) == (position, line, column)
    assert needle in str(err)
    assert str(err).startswith("[E0")


def test_leiden_error_message_names_line_and_column():
    with pytest.raises(LeidenError, match=r"unclosed '\[' opened at line 2, column 15"):
        parse_leiden("1 αβγ\n2 καὶ τῷ δήμῳ [ἐπαινέσαι")


_SOUP = st.lists(
    st.sampled_from(list("αβγ σς.0123456789-=?|/\\[](){}<>⟦⟧⟨⟩…\n\u0323ca") + ["vac.", "[.5]", "[- - -]", "(("]),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), _SOUP))
def test_leiden_random_input_raises_only_leiden_error(text):
    try:
        doc = parse_leiden(text)
    except LeidenError as err:
        assert 0 <= err.position <= len(text)
        return
    render(doc)
    for gap in find_gaps(text):
        assert 0 <= gap.start < gap.end <= len(text)


# -- Leiden written back (issue #13: /api/epidoc output must always restore) -------------------

_CHARS = st.sampled_from(list("αβγ δεσ[](){}<>⟦⟧\\/|?=…-–.·,12 vacat\x01\x85\u2028ά") + ["vac.", "ca.5", "[.3]"])
_WORDS = st.lists(_CHARS, min_size=1, max_size=8).map("".join)
_SEGMENTS = st.lists(
    st.one_of(
        st.builds(Text, _WORDS, st.booleans()),
        st.builds(Supplied, _WORDS),
        st.builds(Lacuna, st.one_of(st.none(), st.integers(1, 1000))),
        st.builds(Lacuna, st.integers(1, 5), st.integers(6, 9)),
        st.builds(LineBreak, st.booleans()),
    ),
    max_size=12,
)


def _letters(segments) -> str:
    return "".join(ch for ch in render(Document("d", "user", segments)).text if ch.isalpha())


@settings(max_examples=300, deadline=None)
@given(_SEGMENTS)
@example([Text("σ \x01"), LineBreak(True), Text("α")])  # a space, then a control character, at an in-word break
def test_leiden_written_from_any_edition_parses_back_with_the_same_gaps(segments):
    segments = tidy_segments(segments)
    back = parse_leiden(to_leiden(segments)).segments
    assert sum(isinstance(s, Lacuna) for s in back) == sum(isinstance(s, Lacuna) for s in segments)
    assert _letters(back) == _letters(segments)


def _parse_seconds(text: str) -> float:
    """Best of two runs (the machine is shared)."""
    import time

    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        parse_leiden(text)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("unit", ["α̣β̣γ̣ ", "αβ [γδ] ε̣ ", "λόγος ἐστὶν [.3] ἐν ἀρχῇ\n", "α" * 40])
def test_parsing_time_is_linear(unit):
    """800k characters took 20.7 s before (merge_texts re-concatenated); now linear."""
    small, large = (_parse_seconds(unit * (n // len(unit))) for n in (20_000, 160_000))
    assert large < 24 * small + 0.2  # 8× the text: linear ~8×, quadratic ~64×


@pytest.mark.parametrize("text", ["αβ [" + "." * 10_000 + "] γδ", "αβ " + "?" * 10_000 + " γδ"])
def test_runs_of_dots_or_queries_are_capped_like_stated_lengths(text):
    with pytest.raises(LeidenError, match=r"^\[E007\]"):
        parse_leiden(text)


@pytest.mark.parametrize(
    "leiden, lacuna, marker",
    [
        ("ἔτους [.?] Ἀντωνίνου", Lacuna(None), "[.?]"),
        ("ἔτους [ca.?] Ἀντωνίνου", Lacuna(None), "[ca.?]"),
        ("ἔτους .3 Ἀντωνίνου", Lacuna(3, reason="illegible"), ".3"),
        ("ἔτους .? Ἀντωνίνου", Lacuna(None, reason="illegible"), ".?"),
        ("ἔτους\nlost.?lin\nἈντωνίνου", Lacuna(None, lines=-1), "lost.?lin"),
        ("ἔτους\nlost.3lin\nἈντωνίνου", Lacuna(None, lines=3), "lost.3lin"),
    ],
)
def test_leiden_plus_gap_conventions(leiden, lacuna, marker):
    doc, gaps = parse_leiden_with_gaps(leiden)
    assert [s for s in doc.segments if isinstance(s, Lacuna)] == [lacuna]
    assert [leiden[g.start : g.end] for g in gaps] == [marker]


def test_leiden_plus_keeps_full_stops_and_line_numbers():
    assert not find_gaps("ἔδοξεν. καὶ [ἔδοξεν.]")
    assert [g.hint for g in find_gaps("5. καὶ [.3]")] == [Hint.exact(3)]
