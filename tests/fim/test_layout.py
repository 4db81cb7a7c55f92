"""FIM layouts: prompts, joins, labels, and that a middle continues its prefix."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apollo_restore.fim.examples import sample_example
from apollo_restore.fim.layout import IGNORE_INDEX, JOIN_V2, SENTINEL_V2, SPM_V1, format_hint, layout_named
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.hint import NO_HINT, Hint

TOK = CharTokenizer()


def _targets(labels: list[int]) -> list[str]:
    return [TOK.id_to_token[t] for t in labels if t != IGNORE_INDEX]


def test_hint_format():
    assert format_hint(Hint.exact(7)) == "[7]" and format_hint(Hint.span(5, 8)) == "[5-8]"
    assert format_hint(NO_HINT) == ""


def test_join_layout_middle_continues_prefix_then_meets_suffix():
    ids, labels = JOIN_V2.encode(TOK, "και ", "του", " θεου", Hint.exact(3), loss="middle")
    prompt = JOIN_V2.prompt(TOK, "και ", " θεου", Hint.exact(3))
    assert ids[: len(prompt)] == prompt and prompt[-1] == TOK.vocab[" "]  # the prefix's last char, no sentinel
    assert prompt[:2] == [TOK.bos_id, TOK.suffix_id] and "[3]" not in TOK.decode(ids)
    # the middle, then the whole (short) suffix again, then EOS
    assert _targets(labels) == list("του") + list(" θεου") + ["[EOS]"]
    assert TOK.decode(ids) == " θεου" + "και " + "του" + " θεου"


def test_join_is_cut_at_join_chars_without_eos():
    suffix = " και του θεου μεγιστου"
    join = JOIN_V2.join(TOK, suffix)
    assert TOK.decode(join) == suffix[:16] and TOK.eos_id not in join
    assert JOIN_V2.join(TOK, "") == [TOK.eos_id]


def test_sentinel_layout_puts_hint_first_and_one_sentinel_before_middle():
    ids, labels = SENTINEL_V2.encode(TOK, "και ", "του", " θεου", Hint.span(2, 4), loss="all")
    assert ids[:7] == [TOK.bos_id] + TOK.encode("[2-4]") + [TOK.suffix_id]
    assert ids[ids.index(TOK.middle_id) + 1 :] == TOK.encode("του θεου") + [TOK.eos_id]
    targets = _targets(labels)
    assert "".join(t for t in targets if t != "[EOS]") == " θεου" + "και " + "του" + " θεου"
    assert not {"[", "]", "2", "4", "[MIDDLE]", "[PREFIX]"} & set(targets)


def test_spm_v1_is_the_large_model_layout():
    ids, labels = SPM_V1.encode(TOK, "και ", "του", " θεου", Hint.exact(3), loss="middle")
    assert TOK.decode(ids) == " θεου" + "και " + "[3]" + "του"
    assert ids[-1] == TOK.eos_id and _targets(labels) == ["τ", "ο", "υ", "[EOS]"]


def test_every_position_loss_labels_each_text_character_once():
    ids, labels = JOIN_V2.encode(TOK, "και ", "του", " θεου", NO_HINT, loss="all")
    assert len(ids) == len(labels) and labels[-1] == IGNORE_INDEX
    for t, label in enumerate(labels[:-1]):
        assert label in (IGNORE_INDEX, ids[t + 1])
    assert "".join(_targets(labels)[:-1]) == " θεου" + "και " + "του" + " θεου"


def test_layout_names():
    assert layout_named("join") is JOIN_V2 and layout_named(JOIN_V2.name) is JOIN_V2
    with pytest.raises(ValueError, match="unknown FIM layout"):
        layout_named("psm")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="αβγδεζηθικλμνξοπρστυφχψως ·-…", min_size=60, max_size=700), st.integers(0, 2**32 - 1))
def test_masked_span_never_in_its_own_context(text, seed):
    ex = sample_example(text, np.random.default_rng(seed))
    if ex is None:
        return
    for layout in (JOIN_V2, SENTINEL_V2):
        ids, _ = layout.encode(TOK, ex.prefix, ex.middle, ex.suffix, ex.hint, "all")
        prompt = layout.prompt(TOK, ex.prefix, ex.suffix, ex.hint)
        # the context is exactly suffix, prefix (and hint): the middle is cut out, not kept
        assert TOK.decode(prompt) == (format_hint(ex.hint) if layout.hint_in_sequence else "") + ex.suffix + ex.prefix
        assert ids[len(prompt) : len(prompt) + len(ex.middle)] == TOK.encode(ex.middle)
    assert "-" not in ex.middle and "…" not in ex.middle
    if ex.middle:
        assert ex.middle[0] not in " ·" and ex.middle[-1] not in " ·"


def _encode_token_by_token(layout, prefix, middle, suffix, hint, loss):
    """The layout's labels by their definition, one token at a time: each prompt token after the
    first is the target of the prediction before it when it is text under the every-position
    loss; every middle and join token is one; the last token predicts nothing."""
    ids: list[int] = []
    labels: list[int] = []
    for piece, is_text in layout._pieces(TOK, prefix, suffix, hint):
        for token in piece:
            if ids:
                labels.append(token if is_text and loss == "all" else IGNORE_INDEX)
            ids.append(token)
    for token in TOK.encode(middle) + layout.join(TOK, suffix):
        labels.append(token)
        ids.append(token)
    return ids, labels + [IGNORE_INDEX]


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet="αβγ ·-[]", max_size=30),
    st.text(alphabet="αβγ ·", max_size=10),
    st.text(alphabet="αβγ ·-", max_size=30),
    st.sampled_from([NO_HINT, Hint.exact(3), Hint.span(2, 6)]),
    st.sampled_from(["all", "middle"]),
)
def test_encode_matches_the_token_by_token_definition(prefix, middle, suffix, hint, loss):
    for layout in (JOIN_V2, SENTINEL_V2, SPM_V1):
        assert layout.encode(TOK, prefix, middle, suffix, hint, loss) == _encode_token_by_token(
            layout, prefix, middle, suffix, hint, loss
        )
