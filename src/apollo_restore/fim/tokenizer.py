"""Character tokenizer with FIM control tokens, saved as a Hugging Face ``tokenizer.json``.

One token per character of ``norm.v1`` text (Greek letters, space, ``·``), the gap markers
``-`` and ``…``, and the characters of length hints (``[``, ``]``, digits). Special tokens:
``[PAD] [BOS] [EOS] [UNK] [PREFIX] [SUFFIX] [MIDDLE]``. :class:`CharTokenizer` encodes fast
with a dict; :func:`to_hf_tokenizer` gives the same ids through ``transformers``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from apollo_restore.data.normalise import GAP_CHAR, GREEK_LETTERS, MIDDLE_DOT, UNKNOWN_GAP
from apollo_restore.inputs import MAX_SETTINGS_BYTES, read_regular

PAD, BOS, EOS, UNK = "[PAD]", "[BOS]", "[EOS]", "[UNK]"
PREFIX, SUFFIX, MIDDLE = "[PREFIX]", "[SUFFIX]", "[MIDDLE]"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK, PREFIX, SUFFIX, MIDDLE)
CHARACTERS = GREEK_LETTERS + " " + MIDDLE_DOT + GAP_CHAR + UNKNOWN_GAP + "[]0123456789"
TOKENIZER_FILE = "tokenizer.json"


class CharTokenizer:
    """Maps characters to ids and back; ids of :data:`SPECIAL_TOKENS` come first.

    Attributes:
        vocab: token → id, for every special token and character.
    """

    def __init__(self, vocab: dict[str, int] | None = None):
        self.vocab = vocab or {tok: i for i, tok in enumerate(SPECIAL_TOKENS + tuple(CHARACTERS))}
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.unk_id = self.vocab[UNK]
        self.pad_id, self.bos_id, self.eos_id = self.vocab[PAD], self.vocab[BOS], self.vocab[EOS]
        self.prefix_id, self.suffix_id, self.middle_id = self.vocab[PREFIX], self.vocab[SUFFIX], self.vocab[MIDDLE]
        self.special_ids = frozenset(self.vocab[t] for t in SPECIAL_TOKENS)
        #: ids of characters that may appear in a restored middle (letters, space, ·)
        self.middle_char_ids = [self.vocab[c] for c in GREEK_LETTERS + " " + MIDDLE_DOT]
        # the id of every code point up to the highest character token's, then [UNK] (for encode)
        chars = {ord(token): i for token, i in self.vocab.items() if len(token) == 1}
        self._ids = np.full(max(chars, default=0) + 2, self.unk_id, dtype=np.int64)
        self._ids[list(chars)] = list(chars.values())

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> list[int]:
        """Ids of the characters of ``text`` (unknown characters → ``[UNK]``), one table look-up
        per code point (training builds rows from it: issue 34)."""
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        return self._ids[np.minimum(points, len(self._ids) - 1)].tolist()

    def decode(self, ids: list[int]) -> str:
        """Characters of ``ids``, special tokens dropped."""
        return "".join(self.id_to_token[i] for i in ids if i not in self.special_ids)

    def save(self, folder: Path) -> None:
        """Write ``tokenizer.json`` (+ HF tokenizer_config) into ``folder``."""
        to_hf_tokenizer(self).save_pretrained(str(folder))

    @classmethod
    def load(cls, folder: Path) -> CharTokenizer:
        """Read the vocabulary from ``folder/tokenizer.json``.

        Raises:
            ValueError: the file is not a character tokenizer with the FIM control tokens.
            FileError: ``E220`` not a regular file, ``E204`` more than
                :data:`~apollo_restore.inputs.MAX_SETTINGS_BYTES`.
        """
        data = json.loads(read_regular(Path(folder) / TOKENIZER_FILE, MAX_SETTINGS_BYTES).decode("utf-8"))
        vocab = dict(data["model"]["vocab"])
        missing = [t for t in SPECIAL_TOKENS if t not in vocab]
        if missing:
            raise ValueError(f"{folder}/{TOKENIZER_FILE} lacks the control tokens {missing}")
        return cls(vocab)


def to_hf_tokenizer(tok: CharTokenizer):
    """A ``PreTrainedTokenizerFast`` with exactly the ids of ``tok``.

    A BPE model with no merges and no pre-tokenizer splits any string into its characters,
    spaces included.
    """
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE(vocab=dict(tok.vocab), merges=[], unk_token=UNK))
    core.add_special_tokens(list(SPECIAL_TOKENS))
    core.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=UNK,
        additional_special_tokens=[PREFIX, SUFFIX, MIDDLE],
    )
