"""FIM layouts: how a gap's prefix, middle, suffix and hint become one token sequence.

One :class:`FimLayout` object per versioned format computes the prompt, the scored join, the
training labels and the packing overhead; training, packing, scoring, beam search and the
Hugging Face path all ask it, so the layout lives in exactly one place (docs/design.md, *FIM rules*).

``fim.join.v2`` (the character model's default; suffix first, the middle continues the prefix,
the join scored explicitly)::

    [BOS][SUFFIX] s [PREFIX] p m s[:J]          (s[:J] + [EOS] when the suffix is shorter than J)

``fim.sentinel.v2`` (the same, with the hint before the suffix and one sentinel before the middle)::

    [BOS] ⟨hint⟩ [SUFFIX] s [PREFIX] p [MIDDLE] m s[:J]

``fim.spm.v1`` (Mistral's reserved tokens for large pretrained models; loss on the middle)::

    [BOS][SUFFIX] s [PREFIX] p ⟨hint⟩ [MIDDLE] m [EOS]

In the two ``v2`` layouts the tokens after the middle are the first ``J`` characters of the
suffix again: the model, which has read the suffix, learns "the text now meets the suffix" as a
copy it can check, and a candidate middle ``m`` is scored by ``log P(m + join | prompt)``, so
readings of different lengths compete on how well they lead into the text after the gap. With
the every-position loss each prefix character is a left-to-right prediction with the suffix in
view, which is exactly the skill the middle needs. ``fim.join.v2`` carries no hint in the
sequence: the model cannot tell where the prefix ends, so the search enforces the hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from apollo_restore.hint import Hint

IGNORE_INDEX = -100
#: the longest hint the packer must leave room for: ``[25-31]``
_MAX_HINT_TOKENS = 7


class FimVocabulary(Protocol):
    """What a layout needs of a tokenizer: control ids and a text encoder."""

    bos_id: int
    eos_id: int
    prefix_id: int
    suffix_id: int
    middle_id: int

    def encode(self, text: str) -> list[int]: ...


def format_hint(hint: Hint) -> str:
    """The hint as the model reads it: exactly 7 → ``[7]``; 5–8 → ``[5-8]``; none → ``""``."""
    if not hint.given:
        return ""
    return f"[{hint.lo}]" if hint.is_exact else f"[{hint.lo}-{hint.hi}]"


@dataclass(frozen=True)
class FimLayout:
    """One versioned FIM layout (see the module docstring).

    Attributes:
        name: the versioned format name recorded in every model folder.
        join_chars: suffix characters scored after the middle (0: ``[EOS]`` ends the middle).
        hint_first: the hint goes before the suffix (else between prefix and middle).
        sentinel: a ``[MIDDLE]`` token separates prefix and middle.
        hint_in_sequence: the model is shown the hint at all.
    """

    name: str
    join_chars: int
    hint_first: bool
    sentinel: bool
    hint_in_sequence: bool = True

    @property
    def overhead(self) -> int:
        """Tokens one example adds beyond its window's characters (packing budget)."""
        return 4 + _MAX_HINT_TOKENS + self.join_chars + 1  # controls, hint, join + [EOS]

    def _pieces(self, vocab: FimVocabulary, prefix: str, suffix: str, hint: Hint) -> list[tuple[list[int], bool]]:
        """The prompt as ``(ids, is_text)`` pieces, in order; text pieces may carry loss."""
        hint_ids = vocab.encode(format_hint(hint)) if self.hint_in_sequence else []
        bos = [vocab.bos_id] if vocab.bos_id is not None else []
        pieces = [(bos, False), (hint_ids if self.hint_first else [], False), ([vocab.suffix_id], False)]
        pieces += [(vocab.encode(suffix), True), ([vocab.prefix_id], False), (vocab.encode(prefix), True)]
        pieces += [([] if self.hint_first else hint_ids, False), ([vocab.middle_id] if self.sentinel else [], False)]
        return pieces

    def prompt(self, vocab: FimVocabulary, prefix: str, suffix: str, hint: Hint) -> list[int]:
        """Token ids the model reads before it writes the middle's first character."""
        return [i for ids, _ in self._pieces(vocab, prefix, suffix, hint) for i in ids]

    def join(self, vocab: FimVocabulary, suffix: str) -> list[int]:
        """Token ids scored after the middle: ``s[:J]``, with ``[EOS]`` when the suffix ends
        within them (only ``[EOS]`` when ``join_chars`` is 0 or the suffix is empty)."""
        ends = self.join_chars == 0 or len(suffix) <= self.join_chars
        return vocab.encode(suffix[: self.join_chars]) + ([vocab.eos_id] if ends else [])

    def encode(
        self, vocab: FimVocabulary, prefix: str, middle: str, suffix: str, hint: Hint, loss: str
    ) -> tuple[list[int], list[int]]:
        """Token ids and next-token labels of one training example.

        Returns:
            ``(ids, labels)``, both of length ``T``; ``labels[t]`` is the target of the
            prediction made *at* ``t`` (``ids[t + 1]``) or :data:`IGNORE_INDEX`. The middle and
            the join are always targets; with ``loss="all"`` every suffix and prefix character
            too. Control and hint tokens are never targets.
        """
        ids: list[int] = []
        targets: list[int] = []  # each prompt token as a target: itself, or IGNORE_INDEX
        for piece, is_text in self._pieces(vocab, prefix, suffix, hint):
            ids += piece
            targets += piece if is_text and loss == "all" else [IGNORE_INDEX] * len(piece)
        written = vocab.encode(middle) + self.join(vocab, suffix)
        # the prediction at t targets token t + 1: the prompt's targets after its first token,
        # then the middle and the join, and nothing after the last token
        return ids + written, targets[1:] + written + [IGNORE_INDEX]


#: the character model's layouts, by versioned name
JOIN_V2 = FimLayout(
    "apollo_restore fim.join.v2", join_chars=16, hint_first=True, sentinel=False, hint_in_sequence=False
)
SENTINEL_V2 = FimLayout("apollo_restore fim.sentinel.v2", join_chars=16, hint_first=True, sentinel=True)
#: the large-model path (Mistral's FIM tokens), and the character model before v2
SPM_V1 = FimLayout("apollo_restore fim.spm.v1", join_chars=0, hint_first=False, sentinel=True)
LAYOUTS = {layout.name: layout for layout in (JOIN_V2, SENTINEL_V2, SPM_V1)}
SHORT_NAMES = {"join": JOIN_V2, "sentinel": SENTINEL_V2, "spm": SPM_V1}
DEFAULT_LAYOUT = JOIN_V2


def layout_named(name: str) -> FimLayout:
    """The layout of a versioned name (``"apollo_restore fim.join.v2"``) or short name (``"join"``).

    Raises:
        ValueError: no such layout.
    """
    found = LAYOUTS.get(name) or SHORT_NAMES.get(name)
    if found is None:
        raise ValueError(f"unknown FIM layout {name!r}; known: {', '.join(list(SHORT_NAMES) + list(LAYOUTS))}")
    return found
