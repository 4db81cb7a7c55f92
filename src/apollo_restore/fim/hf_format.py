"""FIM sequences for any Hugging Face tokenizer (docs/design.md, *FIM rules*, *Models and model
folders*; paper §3.1, App. G).

    from transformers import AutoTokenizer
    from apollo_restore.fim.hf_format import HfFim
    fim = HfFim(AutoTokenizer.from_pretrained("path/to/Mistral-Small-24B-Base-2503"))
    ids, labels = fim.encode_example(example)          # same layout as fim.examples

The layout is :data:`~apollo_restore.fim.layout.SPM_V1` (``fim.spm.v1``), Mistral's::

    [BOS][SUFFIX] s [PREFIX] p ⟨hint⟩ [MIDDLE] m [EOS]

Control tokens: Mistral's tokenizers (Tekken, and the v3 SentencePiece ones) already hold
``[PREFIX]``, ``[SUFFIX]`` and ``[MIDDLE]`` as reserved special tokens; the paper uses them and
does not grow the vocabulary. Where a tokenizer lacks them they are added as special tokens
and :attr:`HfFim.added` names them: the model's embedding must then be resized
(``model.resize_token_embeddings(len(tokenizer))``) before training.

Each piece (suffix, prefix, hint, middle) is encoded on its own with ``add_special_tokens=False``
so a prompt at inference has exactly the tokens the model saw in training. SentencePiece
tokenizers that prepend ``▁`` to every piece do so in training and inference alike.
:class:`HfFimPacker` packs examples into fixed-length rows, deterministic by (seed, rank, row).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from apollo_restore.fim.dataset import Corpus
from apollo_restore.fim.examples import MIN_WINDOW, FimConfig, FimExample, sample_example
from apollo_restore.fim.layout import IGNORE_INDEX, SPM_V1
from apollo_restore.fim.tokenizer import CharTokenizer, to_hf_tokenizer
from apollo_restore.hint import Hint

FIM_TOKEN_NAMES = {"prefix": "[PREFIX]", "suffix": "[SUFFIX]", "middle": "[MIDDLE]"}
#: other spellings of the same control tokens, tried in order after Mistral's
FIM_TOKEN_ALIASES = {
    "prefix": ("<|fim_prefix|>", "<fim_prefix>"),
    "suffix": ("<|fim_suffix|>", "<fim_suffix>"),
    "middle": ("<|fim_middle|>", "<fim_middle>"),
}
FALLBACK_EOS = "[EOS]"


def _token_id(tokenizer, token: str) -> int | None:
    """Id of ``token`` if it is one whole token of ``tokenizer`` (vocabulary or added tokens)."""
    vocab = tokenizer.get_vocab()
    if token in vocab:
        return int(vocab[token])
    return None


@dataclass
class HfFim:
    """FIM encoder over a Hugging Face tokenizer.

    Args:
        tokenizer: a ``PreTrainedTokenizer(Fast)``; modified in place when control tokens must
            be added.
        add_missing: add absent control tokens (else raise).
        aliases: also accept the ``<|fim_prefix|>``-style spellings other families reserve.

    Attributes:
        prefix_id, suffix_id, middle_id, bos_id, eos_id, pad_id: control token ids
            (``bos_id`` is ``None`` for tokenizers without a BOS token: then none is written).
        added: tokens this object added to the tokenizer (empty for Mistral's): when not
            empty, resize the model's embeddings to ``len(tokenizer)``.

    Raises:
        ValueError: a control token is missing and ``add_missing`` is false.
    """

    tokenizer: object
    add_missing: bool = True
    aliases: bool = True
    added: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        tok = self.tokenizer
        ids: dict[str, int] = {}
        for role, name in FIM_TOKEN_NAMES.items():
            candidates = (name,) + (FIM_TOKEN_ALIASES[role] if self.aliases else ())
            found = next((i for i in (_token_id(tok, c) for c in candidates) if i is not None), None)
            if found is None:
                if not self.add_missing:
                    raise ValueError(f"tokenizer has no {name} token (nor an alias); pass add_missing=True to add it")
                tok.add_special_tokens({"additional_special_tokens": [name]}, replace_extra_special_tokens=False)
                self.added.append(name)
                found = _token_id(tok, name)
            ids[role] = int(found)
        if tok.eos_token_id is None:
            tok.add_special_tokens({"eos_token": FALLBACK_EOS})
            self.added.append(FALLBACK_EOS)
        self.prefix_id, self.suffix_id, self.middle_id = ids["prefix"], ids["suffix"], ids["middle"]
        self.bos_id: int | None = tok.bos_token_id
        self.eos_id: int = tok.eos_token_id
        self.pad_id: int = tok.pad_token_id if tok.pad_token_id is not None else self.eos_id

    @property
    def needs_resize(self) -> bool:
        """True when tokens were added: the embedding matrix must grow to ``len(tokenizer)``."""
        return bool(self.added)

    def describe(self) -> dict:
        """JSON-ready record of the control tokens (written into shard manifests)."""
        return {
            "vocab_size": len(self.tokenizer),
            "bos_id": self.bos_id,
            "eos_id": self.eos_id,
            "pad_id": self.pad_id,
            "prefix_id": self.prefix_id,
            "suffix_id": self.suffix_id,
            "middle_id": self.middle_id,
            "added": list(self.added),
        }

    def encode_text(self, text: str) -> list[int]:
        """Ids of ``text`` with no special tokens (``[]`` for ``""``)."""
        return list(self.tokenizer.encode(text, add_special_tokens=False)) if text else []

    def decode(self, ids: list[int]) -> str:
        """Text of ``ids``, special tokens dropped."""
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def encode(self, text: str) -> list[int]:
        """Ids of ``text`` (the layout's vocabulary interface; same as :meth:`encode_text`)."""
        return self.encode_text(text)

    def encode_prompt(self, prefix: str, suffix: str, hint: Hint) -> list[int]:
        """Ids of ``[BOS][SUFFIX] s [PREFIX] p ⟨hint⟩ [MIDDLE]`` (:data:`SPM_V1`)."""
        return SPM_V1.prompt(self, prefix, suffix, hint)

    def encode_example(self, ex: FimExample, loss: str = "middle") -> tuple[list[int], list[int]]:
        """Ids and next-token labels of one example in :data:`SPM_V1` (see
        :meth:`~apollo_restore.fim.layout.FimLayout.encode`)."""
        return SPM_V1.encode(self, ex.prefix, ex.middle, ex.suffix, ex.hint, loss)


class HfFimPacker:
    """Rows of packed FIM examples for any tokenizer, like
    :class:`~apollo_restore.fim.dataset.PackedFimStream`.

    Row ``i`` draws every choice from ``default_rng([seed, rank, i])``. The window is cut in
    characters, so for each example the character budget starts at the tokens left in the row
    and is halved until the encoded example fits (a tokenizer may spend several tokens on one
    Greek letter).

    Args:
        corpus: training texts and their sampling weights.
        fim: the encoder.
        cfg: the gap/hint recipe.
        block_size: tokens per row.
    """

    def __init__(self, corpus: Corpus, fim: HfFim, cfg: FimConfig, block_size: int, seed: int = 0, rank: int = 0):
        overhead = len(fim.encode_prompt("", "", Hint.span(25, 31))) + 1  # + [EOS]
        if block_size < MIN_WINDOW + overhead:
            raise ValueError(f"block_size {block_size} cannot hold a {MIN_WINDOW}-character window")
        self.corpus, self.fim, self.cfg = corpus, fim, cfg
        self.block_size, self.seed, self.rank, self.overhead = block_size, seed, rank, overhead

    def row(self, index: int) -> tuple[list[int], list[int]]:
        """Token ids and labels of row ``index``, each of length ``block_size``."""
        rng = np.random.default_rng([self.seed, self.rank, index])
        ids: list[int] = []
        labels: list[int] = []
        for _ in range(64):
            room = self.block_size - len(ids)
            budget = room - self.overhead
            if budget < MIN_WINDOW:
                break
            ex = sample_example(self.corpus.sample(rng), rng, max_len=budget)
            if ex is None:
                continue
            ex_ids, ex_labels = self.fim.encode_example(ex, self.cfg.loss)
            while len(ex_ids) > room and budget // 2 >= MIN_WINDOW:
                budget //= 2
                ex = sample_example(self.corpus.sample(rng), rng, max_len=budget)
                if ex is None:
                    break
                ex_ids, ex_labels = self.fim.encode_example(ex, self.cfg.loss)
            if ex is None or len(ex_ids) > room:
                break
            ids += ex_ids
            labels += ex_labels
        pad = self.block_size - len(ids)
        return ids + [self.fim.pad_id] * pad, labels + [IGNORE_INDEX] * pad


CHAR_TOKENIZER = "char"


def load_tokenizer(spec: str):
    """A Hugging Face tokenizer: ``"char"`` is the package's character tokenizer
    (:func:`~apollo_restore.fim.tokenizer.to_hf_tokenizer`); anything else is a local folder
    (a model folder or a saved tokenizer) read with ``AutoTokenizer`` (no download).
    """
    if spec == CHAR_TOKENIZER:
        return to_hf_tokenizer(CharTokenizer())
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(spec, local_files_only=True)
