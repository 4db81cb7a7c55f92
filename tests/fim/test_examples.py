"""FIM example builder: proportions of gaps and hints (layouts: tests/fim/test_layout.py)."""

from __future__ import annotations

import numpy as np
import pytest

from apollo_restore.data.normalise import letter_count
from apollo_restore.fim.examples import JITTER, WINDOW, FimConfig, FimExample, sample_example, sample_hint

TEXT = (
    "κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν· ομολογω πεπρακεναι σοι καμηλον θηλειαν "
    "δευτεροβολον πυρραν κεχαραγμενην δεξιαι σιαγονι ταυτην αναπορριφον και απεχω την τιμην "
) * 6
TEXT = TEXT.strip()


def _examples(n: int, text: str = TEXT, seed: int = 0) -> list[FimExample]:
    rng = np.random.default_rng(seed)
    out = [sample_example(text, rng) for _ in range(n)]
    return [e for e in out if e is not None]


def test_examples_gap_and_suffix_proportions():
    examples = _examples(4000)
    n = len(examples)
    empty_middle = sum(e.middle == "" for e in examples) / n
    empty_suffix = sum(e.suffix == "" for e in examples) / n
    assert abs(empty_middle - 0.10) < 0.02
    assert abs(empty_suffix - 0.10) < 0.02
    lengths = [letter_count(e.middle) for e in examples if e.middle]
    assert min(lengths) == 1 and max(lengths) == 25
    counts = np.bincount(lengths, minlength=26)[1:]
    assert counts.min() > 0.6 * counts.mean()  # roughly uniform on 1..25


def test_examples_window_length_and_cut_at_spaces():
    for e in (e for e in _examples(500) if e.suffix):  # an empty suffix drops the window's end
        window = e.prefix + e.middle + e.suffix
        assert (1 - JITTER) * WINDOW - 45 <= len(window) <= (1 + JITTER) * WINDOW + 1
        assert not window.startswith(" ") and not window.endswith(" ")


def test_hint_proportions_and_wrongness():
    rng = np.random.default_rng(1)
    draws = [(n, *sample_hint(n, rng)) for n in rng.integers(1, 26, size=20000).tolist()]
    exact = [d for d in draws if d[1].kind == "exact"]
    ranges = [d for d in draws if d[1].kind == "range"]
    none = [d for d in draws if d[1].kind == "none"]
    assert abs(len(exact) / len(draws) - 0.4) < 0.015
    assert abs(len(ranges) / len(draws) - 0.4) < 0.015
    assert abs(len(none) / len(draws) - 0.2) < 0.015
    given_hints = exact + ranges
    wrong = [d for d in given_hints if not d[2]]
    assert abs(len(wrong) / len(given_hints) - 0.15) < 0.015
    for n, hint, correct in exact:
        assert (hint.lo == n) == correct and hint.lo >= 0
    for n, hint, correct in ranges:
        assert hint.lo < hint.hi and hint.contains(n) == correct and hint.lo >= 0


def test_config_rejects_bad_values():
    with pytest.raises(ValueError):
        FimConfig(loss="everything")
