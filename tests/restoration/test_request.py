"""The one validated restoration request: limits, numbered errors, Greek-enough input, the
public function, and linear-time contexts (issue #13)."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apollo_restore.data.readers.leiden import parse_leiden
from apollo_restore.errors import LeidenError, RequestError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.context import GapContexts, context_of
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.request import parse_hint_value, validate
from apollo_restore.schema.limits import RequestLimits
from apollo_restore.schema.restoration import Candidate, RestoreRequest
from tests.stubs import FixedReadings

GREEK = "ἔτους δευτέρου Ἀντωνίνου Καίσαρος τοῦ κυρίου [.5] Τῦβι ἔλαβον παρὰ σοῦ"


def code_of(call) -> str:
    with pytest.raises(RequestError) as info:
        call()
    return info.value.code


@pytest.mark.parametrize(
    "kwargs,code",
    [
        ({"hints": {1: 10**9}}, "E304"),  # --hint 1=1000000 ran until killed
        ({"hints": {1: "ca.7x"}}, "E306"),  # "invalid literal for int()"
        ({"hints": {3: 5}}, "E306"),  # out-of-range gap numbers were silently ignored
        ({"hints": {0: 5}}, "E306"),  # gaps are numbered from 1
        ({"hints": {"0\x1f": None}}, "E306"),  # str.strip() takes \x1f, int() did not: ValueError
        ({"pins": {3: "αβ"}}, "E307"),
        ({"pins": {1: "abc"}}, "E307"),  # a Latin pin made the reading vanish
        ({"pins": {1: ""}}, "E307"),
        ({"k": 0}, "E305"),  # --k 0 gave 20
        ({"k": -1}, "E305"),  # --k -1 gave 197
        ({"k": -100}, "E305"),  # k=-100 gave no candidates
        ({"k": 10_000}, "E305"),  # 147 s and 2.4 GB
        ({"k": True}, "E305"),
    ],
)
def test_request_refuses_out_of_limit_arguments(kwargs, code):
    assert code_of(lambda: validate(RestoreRequest(GREEK, **kwargs))) == code


@pytest.mark.parametrize(
    "text,code",
    [
        ("", "E300"),
        ("   \n", "E300"),
        ("ἔτους δευτέρου Ἀντωνίνου", "E301"),  # no gap: exit 0 and an empty reading before
        ("zenoni tou [.3] chairein kai", "E308"),  # transliteration
        ("Zenoni salutem dicit [.3] Marcus", "E308"),  # Latin
        ("Зенону привет [.3] от Марка", "E308"),  # Cyrillic
        ("לזנון שלום [.3] ממרקוס", "E308"),  # Hebrew
        ("😀😀😀 [.3] 😀😀", "E308"),  # emoji
        ("ἔτους\x00 [.5] Ἀντωνίνου Καίσαρος", "E309"),
        ("ἔτους\ud800 [.5] Ἀντωνίνου Καίσαρος", "E309"),
        ("ἔτους [" + "." * 250 + "] Ἀντωνίνου", "E304"),  # dots bypassed the letter check
        ("ἔτους " + "?" * 300 + " Ἀντωνίνου", "E304"),
        ("ἔτους [ca.500] Ἀντωνίνου", "E304"),
    ],
)
def test_request_refuses_text_that_cannot_be_restored(text, code):
    assert code_of(lambda: validate(RestoreRequest(text))) == code


def test_request_errors_are_numbered_and_name_the_gap():
    with pytest.raises(RequestError, match=r"^\[E304\] gap 1 asks for 1,000,000 letters"):
        validate(RestoreRequest(GREEK, hints={1: 1_000_000}))


def test_gaps_are_numbered_from_1_in_requests_and_their_errors():
    """Gap 1 is the first gap, as every display counts: no message mixes both conventions."""
    two = GREEK + " [.3] Μάρκου"
    req = validate(RestoreRequest(two, hints={2: 9}, pins={1: "αβγ"}))
    assert req.hints[1] == Hint.exact(9) and req.pins == {0: "αβγ"}
    with pytest.raises(RequestError) as info:
        validate(RestoreRequest(two, hints={4: 5}))
    assert str(info.value).startswith("[E306] hint for gap 4:") and "2 gaps, numbered from 1" in str(info.value)
    assert "from 0" not in str(info.value)
    with pytest.raises(RequestError, match="numbered from 1"):
        validate(RestoreRequest(two, pins={0: "αβγ"}))


def test_request_resolves_every_hint_and_warns_on_foreign_letters():
    req = validate(RestoreRequest(GREEK + " [- - -] Marcus", hints={"1": "ca.7"}))
    assert req.hints == {0: Hint.span(5, 9), 1: NO_HINT}
    assert any(w.startswith("[W301]") and "Latin" in w for w in req.warnings)
    assert validate(RestoreRequest(GREEK)).warnings == []


def test_request_limits_are_configurable():
    strict = RequestLimits(max_text_chars=20)
    assert code_of(lambda: validate(RestoreRequest(GREEK), strict)) == "E302"
    assert code_of(lambda: validate(RestoreRequest(GREEK + " [.3] " * 3), RequestLimits(max_gaps=2))) == "E303"
    with pytest.raises(ValueError):
        RequestLimits(max_k=-1)


@pytest.mark.parametrize(
    "value,hint",
    [
        (None, NO_HINT),
        ("none", NO_HINT),
        (7, Hint.exact(7)),
        ("7", Hint.exact(7)),
        ("5-8", Hint.span(5, 8)),
        ([5, 8], Hint.span(5, 8)),
        ("ca.10", Hint.span(8, 12)),
        ([4, 4], Hint.exact(4)),
        (Hint.span(2, 3), Hint.span(2, 3)),
    ],
)
def test_hint_values_in_every_form(value, hint):
    assert parse_hint_value(value, 1) == hint


hint_values = st.one_of(
    st.none(),
    st.integers(-(10**12), 10**12),
    st.text(max_size=8),
    st.booleans(),
    st.floats(allow_nan=True),
    st.lists(st.one_of(st.integers(-5, 10**6), st.text(max_size=2)), max_size=3),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(st.text(max_size=60), st.sampled_from([GREEK, GREEK + " [.3]", "[.5]", "???"])),
    hints=st.one_of(
        st.none(), st.dictionaries(st.one_of(st.integers(-3, 5), st.text(max_size=2)), hint_values, max_size=3)
    ),
    pins=st.one_of(
        st.none(), st.dictionaries(st.integers(-3, 5), st.one_of(st.text(max_size=6), st.integers()), max_size=3)
    ),
    k=st.one_of(st.integers(-(10**6), 10**6), st.none(), st.floats(), st.text(max_size=3)),
)
def test_random_requests_raise_only_the_projects_errors(text, hints, pins, k):
    try:
        req = validate(RestoreRequest(text, hints, pins, k))
    except (RequestError, LeidenError):
        return
    assert set(req.hints) == set(range(len(req.hints))) and 1 <= req.k <= RequestLimits().max_k


def test_a_superscript_digit_as_gap_number_is_a_numbered_error():
    """'¹' passes str.isdigit() but not int(): it must be refused as E310-family, not crash."""
    with pytest.raises(RequestError):
        validate(RestoreRequest(GREEK, {"¹": 5}, None, 5))


def test_restore_text_validates_and_never_reads_silently():
    restorer = FixedReadings([Candidate("αβγ", 1.0, 0.0)], name="echo")
    for bad in ("", "ἔτους δευτέρου", "abc [.3] def"):
        with pytest.raises(RequestError):
            restore_text(restorer, bad)
    assert restorer.calls == 0
    result = restore_text(restorer, GREEK + " καὶ [.3] Marcus", k=1)
    assert result.restored_text.count("αβγ") == 2 and result.warnings


def test_public_restore_is_a_function_beside_the_restoration_subpackage():
    import apollo_restore.restoration.driver

    assert callable(apollo_restore.restore) and apollo_restore.restore.__name__ == "restore"
    assert apollo_restore.restoration.driver.restore_text is restore_text


# -- contexts -------------------------------------------------------------------------------------


def test_windowed_contexts_equal_the_whole_rendering_near_the_gap():
    text = " ".join(f"λόγος{i % 7} ἐστὶν [.{i % 9 + 1}] ἐν ἀρχῇ ABC \n" for i in range(120))
    segments = parse_leiden(text).segments
    fast, whole = GapContexts(segments, window=100), GapContexts(segments, window=None)
    fills: list[str] = []
    for i in range(len(fast)):
        p, s = fast.context(i, fills)
        wp, ws = whole.context(i, fills)
        assert p == wp[-100:] and s == ws[:100]
        fills.append("θεος")
    assert context_of(segments, 2, fills) == whole.context(2, fills)


def _context_seconds(gaps: int) -> float:
    """Best of two runs (the machine is shared)."""
    segments = parse_leiden(" ".join(f"λόγος ἐστὶν [.{i % 9 + 1}] ἐν ἀρχῇ" for i in range(gaps))).segments
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        contexts, fills = GapContexts(segments), []
        for i in range(len(contexts)):
            contexts.context(i, fills)
            fills.append("αβγ")
        best = min(best, time.perf_counter() - started)
    return best


def test_context_building_is_linear_in_the_gaps():
    """4,000 gaps took 44 s before (each context rendered the whole text)."""
    small, large = _context_seconds(100), _context_seconds(800)
    assert large < 20 * small + 0.3  # 8× the gaps: linear ~8×, quadratic ~64×


@pytest.mark.parametrize(
    "kwargs,code",
    [
        ({"k": "5"}, "E305"),
        ({"k": 2.0}, "E305"),
        ({"hints": {1: 7.5}}, "E306"),
        ({"hints": {1: {"lo": 5}}}, "E306"),
        ({"hints": {"x": 5}}, "E306"),
        ({"hints": [5]}, "E310"),
        ({"pins": {1: 5}}, "E307"),
        ({"pins": {"one": "αβ"}}, "E307"),
        ({"only": "2"}, "E310"),
        ({"only": ["2"]}, "E327"),
        ({"fills": {"x": "α"}}, "E328"),
        ({"fills": {1: None}}, "E307"),
        ({"kind": "poetry"}, "E310"),
        ({"colour": "red"}, "E310"),
    ],
)
def test_the_declared_request_refuses_a_python_value_with_its_numbered_error(kwargs, code):
    """The one declaration (a web body refused there is H002) names the field's E3xx at the
    Python API and the CLI, never pydantic's ValidationError."""
    assert code_of(lambda: RestoreRequest(GREEK, **kwargs)) == code


def test_a_request_that_is_not_text_is_refused_by_number():
    with pytest.raises(RequestError, match=r"^\[E310\] text must be a string, not 'bytes'"):
        RestoreRequest(GREEK.encode())
