"""The document's own next character, mixed into the neural beam search (a cache model).

Documents repeat themselves: a name lost in a gap often stands in full a line later
(``ομολ[ογει παυσιρ]ιων … του παυσιριωνος``). While the beam writes a middle, each row's last
characters (the prefix's, then the row's own) are looked up in the gap's visible context;
where the longest such run of at least ``min_chars`` characters occurs elsewhere, the
characters that follow it there give ``P_doc``, and the search ranks the row's next character
by ``log((1 − λ)·P_model + λ·P_doc)`` (rows with no such run: ``log P_model``, unchanged).

The model's own log-probability is kept beside the search score and is what every reading is
scored by: the document only steers which readings the search finds (the ensemble's
``DocumentCopy`` member weighs the document's evidence in the ranking). The gap itself is never
part of its own context: the context is the prefix, a break, and the suffix.

    cache = DocumentCache("ομολογει παυσ", " απολλωνιου του παυσιριωνος", tok, mix=0.3, min_chars=4)
    cache.next_chars("ομολογει παυσ")            # Counter({'ι': 1}): 'παυσ' continues as 'παυσι'
"""

from __future__ import annotations

import math
from collections import Counter

import torch

from apollo_restore.data.normalise import GREEK_LETTERS, MIDDLE_DOT
from apollo_restore.fim.tokenizer import CharTokenizer

#: Stands between prefix and suffix: no run crosses it and nothing follows it.
_BREAK = "|"


class DocumentCache:
    """Next-character counts from the gap's visible context, and their mixture with the model's.

    Args:
        prefix, suffix: the gap's normalised context (the whole visible text on each side).
        tok: the model's tokenizer (character → token id).
        mix: ``λ``, the document's share of the mixture where a run matches (0 < λ < 1).
        min_chars: shortest run (characters, spaces included) that counts as the document
            repeating itself.
        max_chars: longest run looked up.
    """

    def __init__(self, prefix: str, suffix: str, tok: CharTokenizer, mix: float, min_chars: int, max_chars: int = 40):
        if not 0.0 < mix < 1.0 or min_chars < 1:
            raise ValueError(f"DocumentCache needs 0 < mix < 1 and min_chars ≥ 1, got {mix}, {min_chars}")
        self.doc = prefix + _BREAK + suffix
        self.start = prefix[-max_chars:]  # the history of a middle not yet begun
        self.min_chars, self.max_chars = min_chars, max_chars
        self.log_keep, self.log_mix = math.log1p(-mix), math.log(mix)
        self.ids = {ch: tok.vocab[ch] for ch in GREEK_LETTERS + " " + MIDDLE_DOT}
        self._runs: dict[str, list[int]] = {}  # a min_chars run → where it ends in the document

    def _ends(self, run: str) -> list[int]:
        """Offsets just after each occurrence of ``run`` that a middle character follows."""
        if run not in self._runs:
            doc, ends, at = self.doc, [], self.doc.find(run)
            while at >= 0:
                end = at + len(run)
                if end < len(doc) and doc[end] in self.ids:
                    ends.append(end)
                at = doc.find(run, at + 1)
            self._runs[run] = ends
        return self._runs[run]

    def next_chars(self, history: str) -> Counter | None:
        """The characters that follow, elsewhere in the document, the longest run of at least
        ``min_chars`` that ends ``history`` (``None``: no such run)."""
        m = self.min_chars
        if len(history) < m or any(ch not in self.ids for ch in history[-m:]):
            return None
        ends = self._ends(history[-m:])
        length = m
        while ends and length < min(self.max_chars, len(history)):
            ch = history[-length - 1]
            if ch not in self.ids:
                break
            longer = [e for e in ends if e - length - 1 >= 0 and self.doc[e - length - 1] == ch]
            if not longer:
                break
            ends, length = longer, length + 1
        return Counter(self.doc[e] for e in ends) if ends else None

    def mix_rows(self, logp: torch.Tensor, histories: list[str]) -> torch.Tensor:
        """The search's next-token log-probabilities ``(R, V)``: each row's model
        log-probabilities ``logp`` mixed with the document's next characters after its history
        (the rows with no matching run unchanged)."""
        matched = [(r, counts) for r, h in enumerate(histories) if (counts := self.next_chars(h))]
        if not matched:
            return logp
        rows = torch.tensor([r for r, _ in matched])
        doc = torch.zeros(len(matched), logp.size(-1))
        for i, (_, counts) in enumerate(matched):
            n = sum(counts.values())
            for ch, c in counts.items():
                doc[i, self.ids[ch]] = c / n
        out = logp.clone()
        out[rows] = torch.logaddexp(logp[rows] + self.log_keep, doc.log() + self.log_mix)
        return out
