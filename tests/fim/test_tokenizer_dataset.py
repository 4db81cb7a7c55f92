"""Character tokenizer (HF-compatible) and the packed, deterministic training stream."""

from __future__ import annotations

import hashlib
import json

import pytest
from transformers import AutoTokenizer

from apollo_restore.fim.dataset import Corpus, PackedFimStream
from apollo_restore.fim.examples import FimConfig
from apollo_restore.fim.layout import IGNORE_INDEX, layout_named
from apollo_restore.fim.tokenizer import CharTokenizer

from ..conftest import PASSAGE_1, PASSAGE_2


def test_tokenizer_hf_roundtrip_same_ids(tmp_path):
    tok = CharTokenizer()
    tok.save(tmp_path)
    hf = AutoTokenizer.from_pretrained(str(tmp_path))
    text = "και ο κυριος [5-8] --- …· "
    assert hf(text, add_special_tokens=False)["input_ids"] == tok.encode(text)
    assert hf.convert_tokens_to_ids(["[PREFIX]", "[SUFFIX]", "[MIDDLE]"]) == [
        tok.prefix_id,
        tok.suffix_id,
        tok.middle_id,
    ]
    assert hf.decode(tok.encode(text)) == text
    assert CharTokenizer.load(tmp_path).vocab == tok.vocab


def test_stream_rows_are_packed_and_deterministic():
    corpus = Corpus([PASSAGE_1 * 8, PASSAGE_2 * 8], ["ddb", "literary"], {"ddb": 3.0})
    tok = CharTokenizer()
    stream = PackedFimStream(corpus, tok, FimConfig(loss="all"), block_size=512, seed=3)
    ids, labels = stream.batch(10, 4)
    again, _ = PackedFimStream(corpus, tok, FimConfig(loss="all"), block_size=512, seed=3).batch(12, 1)
    assert ids.shape == (4, 512) and labels.shape == (4, 512)
    assert ids[2].tolist() == again[0].tolist()  # row 12 is row 12, whatever batch asks for it
    padding = (ids == tok.pad_id).float().mean().item()
    assert padding < 0.15  # windows are fitted to the room left in a row
    assert ((ids == tok.bos_id).sum(dim=1) >= 1).all()
    assert (labels[ids == tok.pad_id] == IGNORE_INDEX).all()


def test_corpus_weights_favour_upweighted_source():
    import numpy as np

    corpus = Corpus(["α" * 100, "β" * 100], ["ddb", "literary"], {"ddb": 3.0, "literary": 1.0})
    rng = np.random.default_rng(0)
    share = sum(corpus.sample(rng) == "α" * 100 for _ in range(4000)) / 4000
    assert abs(share - 0.75) < 0.03


def test_tokenizer_encode_is_a_lookup_per_character_unknowns_unk():
    tok = CharTokenizer()
    # letters, gap marks, hint characters, and characters that are no token: Latin, a combining
    # accent, a character above every token's code point and one outside the first plane
    text = "και [5-8] --- …·" + "Ab\u0301\uffff𐅀" + "ω"
    assert tok.encode(text) == [tok.vocab.get(ch, tok.unk_id) for ch in text]
    assert tok.encode(text).count(tok.unk_id) == 5 and tok.encode("") == []
    assert all(type(i) is int for i in tok.encode(text))


@pytest.mark.parametrize(
    ("layout", "loss", "digest"), [("join", "all", "f64d10b9a84a827b"), ("sentinel", "middle", "e6ceef3fe5f7a742")]
)
def test_stream_rows_are_the_rows_runs_were_trained_on(layout, loss, digest):
    """Row i of a seed is fixed forever: a resumed or continued run counts on it. The digests
    were taken with the row builder before its numpy rewrite (issue 34); gap markers included."""
    corpus = Corpus([PASSAGE_1 * 8, PASSAGE_2 * 8, "-".join([PASSAGE_2] * 3)], ["ddb", "literary", "ddb"], {"ddb": 3.0})
    stream = PackedFimStream(corpus, CharTokenizer(), FimConfig(loss=loss), 512, seed=5, layout=layout_named(layout))
    rows = [stream.row(i) for i in range(20)]
    assert hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16] == digest
