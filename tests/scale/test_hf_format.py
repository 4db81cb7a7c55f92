"""FIM encoding for any Hugging Face tokenizer (apollo_restore.fim.hf_format)."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from apollo_restore.fim.dataset import Corpus
from apollo_restore.fim.examples import FimConfig, FimExample
from apollo_restore.fim.hf_format import HfFim, HfFimPacker
from apollo_restore.fim.layout import IGNORE_INDEX, SPM_V1
from apollo_restore.fim.tokenizer import CharTokenizer, to_hf_tokenizer
from apollo_restore.hint import NO_HINT, Hint

EXAMPLES = [
    FimExample("κομων μουσαιου του ", "ηρακλ", "ειτου χαιρειν", Hint.exact(5)),
    FimExample("ετους τριτου ", "και εικοστου", " μαρκου αυρηλιου", Hint.span(9, 12)),
    FimExample("", "", "ομολογω πεπρακεναι", NO_HINT),
    FimExample("απιωνι βασιλ", "γρα", "", Hint.span(1, 4), hint_correct=False),
]


def _word_tokenizer(
    extra_special: list[str] = (), eos: str | None = "</s>", bos: str | None = "<s>"
) -> PreTrainedTokenizerFast:
    """A whitespace word-level tokenizer standing in for a big model's (no download)."""
    words = ["[UNK]", "<s>", "</s>", "κομων", "του", "ηρακλ", "ειτου"]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", bos_token=bos, eos_token=eos)
    if extra_special:
        tok.add_special_tokens({"additional_special_tokens": list(extra_special)})
    return tok


@pytest.mark.parametrize("loss", ["middle", "all"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_hf_format_matches_char_tokenizer(example, loss):
    char = CharTokenizer()
    fim = HfFim(to_hf_tokenizer(char))
    assert fim.added == []
    assert fim.encode_example(example, loss) == SPM_V1.encode(
        char, example.prefix, example.middle, example.suffix, example.hint, loss
    )
    assert fim.encode_prompt(example.prefix, example.suffix, example.hint) == SPM_V1.prompt(
        char, example.prefix, example.suffix, example.hint
    )


def test_hf_format_finds_reserved_mistral_tokens():
    tok = _word_tokenizer(["[PREFIX]", "[SUFFIX]", "[MIDDLE]"])
    size = len(tok)
    fim = HfFim(tok)
    assert fim.added == [] and not fim.needs_resize and len(tok) == size
    vocab = tok.get_vocab()
    assert (fim.prefix_id, fim.suffix_id, fim.middle_id) == (vocab["[PREFIX]"], vocab["[SUFFIX]"], vocab["[MIDDLE]"])


def test_hf_format_accepts_fim_aliases():
    tok = _word_tokenizer(["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"])
    fim = HfFim(tok)
    assert fim.added == [] and fim.prefix_id == tok.get_vocab()["<|fim_prefix|>"]
    with pytest.raises(ValueError, match=r"\[PREFIX\]"):
        HfFim(_word_tokenizer(["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"]), aliases=False, add_missing=False)


def test_hf_format_adds_missing_tokens_and_reports_resize():
    tok = _word_tokenizer()
    size = len(tok)
    with pytest.raises(ValueError, match="add_missing"):
        HfFim(_word_tokenizer(), add_missing=False)
    fim = HfFim(tok)
    assert fim.added == ["[PREFIX]", "[SUFFIX]", "[MIDDLE]"] and fim.needs_resize
    assert len(tok) == size + 3
    ids, _ = fim.encode_example(FimExample("κομων του", "ηρακλ", "ειτου", Hint.exact(5)))
    assert ids[:2] == [fim.bos_id, fim.suffix_id] and fim.prefix_id in ids and fim.middle_id in ids
    assert fim.describe()["added"] == fim.added


def test_hf_format_without_bos_or_eos():
    tok = _word_tokenizer(eos=None, bos=None)
    fim = HfFim(tok)
    assert fim.bos_id is None and "[EOS]" in fim.added and fim.eos_id == tok.get_vocab()["[EOS]"]
    ids, labels = fim.encode_example(FimExample("κομων του", "ηρακλ", "ειτου", NO_HINT))
    assert ids[0] == fim.suffix_id and ids[-1] == fim.eos_id and labels[-2] == fim.eos_id


def test_hf_format_loss_on_middle_and_eos_only():
    tok = _word_tokenizer(["[PREFIX]", "[SUFFIX]", "[MIDDLE]"])
    fim = HfFim(tok)
    ids, labels = fim.encode_example(FimExample("κομων του", "ηρακλ", "ειτου", Hint.exact(5)))
    targets = [t for t in labels if t != IGNORE_INDEX]
    assert targets == fim.encode_text("ηρακλ") + [fim.eos_id]
    # labels are shifted: the target at t is the token at t + 1
    assert all(labels[t] == ids[t + 1] for t in range(len(ids) - 1) if labels[t] != IGNORE_INDEX)


def test_hf_packer_rows_deterministic_and_full(prepared):
    from apollo_restore.data.table import load_documents

    table = load_documents(prepared, split="train")
    corpus = Corpus(table.column("text").to_pylist(), table.column("source").to_pylist(), {})
    packer = HfFimPacker(corpus, HfFim(to_hf_tokenizer(CharTokenizer())), FimConfig(), block_size=300, seed=3)
    ids, labels = packer.row(5)
    assert (ids, labels) == packer.row(5) and ids != packer.row(6)[0]
    assert len(ids) == len(labels) == 300
    assert sum(t != IGNORE_INDEX for t in labels) > 0
    with pytest.raises(ValueError, match="block_size"):
        HfFimPacker(corpus, packer.fim, FimConfig(), block_size=40)
