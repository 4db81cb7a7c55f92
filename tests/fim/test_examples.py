"""FIM example builder: proportions of gaps and hints, sequence layout, loss masks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apollo_restore.fim.examples import (
    IGNORE_INDEX,
    FimConfig,
    FimExample,
    encode_example,
    format_hint,
    letter_count,
    sample_example,
    sample_hint,
)
from apollo_restore.fim.tokenizer import CharTokenizer

TEXT = ("κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν· ομολογω πεπρακεναι σοι καμηλον θηλειαν "
        "δευτεροβολον πυρραν κεχαραγμενην δεξιαι σιαγονι ταυτην αναπορριφον και απεχω την τιμην ") * 6
TEXT = TEXT.strip()
CFG = FimConfig()


def _examples(n: int, text: str = TEXT, seed: int = 0) -> list[FimExample]:
    rng = np.random.default_rng(seed)
    out = [sample_example(text, rng, CFG) for _ in range(n)]
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
        assert 0.7 * CFG.window - 45 <= len(window) <= 1.3 * CFG.window + 1
        assert not window.startswith(" ") and not window.endswith(" ")


def test_hint_proportions_and_wrongness():
    rng = np.random.default_rng(1)
    draws = [(n, *sample_hint(n, rng, CFG)) for n in rng.integers(1, 26, size=20000).tolist()]
    exact = [d for d in draws if isinstance(d[1], int)]
    ranges = [d for d in draws if isinstance(d[1], tuple)]
    none = [d for d in draws if d[1] is None]
    assert abs(len(exact) / len(draws) - 0.4) < 0.015
    assert abs(len(ranges) / len(draws) - 0.4) < 0.015
    assert abs(len(none) / len(draws) - 0.2) < 0.015
    given_hints = exact + ranges
    wrong = [d for d in given_hints if not d[2]]
    assert abs(len(wrong) / len(given_hints) - 0.15) < 0.015
    for n, hint, correct in exact:
        assert (hint == n) == correct and hint >= 0
    for n, (lo, hi), correct in ranges:
        assert lo <= hi and (lo <= n <= hi) == correct and lo >= 0


def test_hint_format():
    assert format_hint(7) == "[7]" and format_hint((5, 8)) == "[5-8]" and format_hint(None) == ""


def test_encode_example_layout_and_middle_loss():
    tok = CharTokenizer()
    ex = FimExample("και ", "του", " θεου", 3)
    ids, labels = encode_example(tok, ex, loss="middle")
    text = tok.decode(ids)
    assert ids[:2] == [tok.bos_id, tok.suffix_id] and ids[-1] == tok.eos_id
    assert text == " θεου" + "και " + "[3]" + "του"
    targets = [tok.id_to_token[t] for t in labels if t != IGNORE_INDEX]
    assert targets == ["τ", "ο", "υ", "[EOS]"]


def test_encode_example_all_positions_never_targets_control_or_hint():
    tok = CharTokenizer()
    ids, labels = encode_example(tok, FimExample("και ", "του", " θεου", (2, 4)), loss="all")
    targets = [tok.id_to_token[t] for t in labels if t != IGNORE_INDEX]
    assert "".join(t for t in targets if t != "[EOS]") == " θεου" + "και " + "του"
    assert targets[-1] == "[EOS]" and not {"[", "]", "2", "4", "[MIDDLE]", "[PREFIX]"} & set(targets)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="αβγδεζηθικλμνξοπρστυφχψως ·-…", min_size=60, max_size=700), st.integers(0, 2**32 - 1))
def test_masked_span_never_in_its_own_position(text, seed):
    rng = np.random.default_rng(seed)
    ex = sample_example(text, rng, CFG)
    if ex is None:
        return
    tok = CharTokenizer()
    ids, labels = encode_example(tok, ex)
    middle_at = ids.index(tok.middle_id)
    context = tok.decode(ids[:middle_at])
    # the context is exactly suffix, prefix and hint: the middle is cut out, not kept
    assert context == ex.suffix + ex.prefix + format_hint(ex.hint)
    assert "-" not in ex.middle and "…" not in ex.middle
    if ex.middle:
        assert ex.middle[0] not in " ·" and ex.middle[-1] not in " ·"


def test_config_rejects_bad_values():
    with pytest.raises(ValueError):
        FimConfig(loss="everything")
    with pytest.raises(ValueError):
        FimConfig(p_exact=0.7, p_range=0.4)
