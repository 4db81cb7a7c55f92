"""The restoration engine: load a model once, restore many texts (DESIGN §6; paper App. F).

from apollo_restore.restore.engine import Restorer
from apollo_restore.restore.driver import restore_text
r = Restorer.load()                       # the embedded default model
result = restore_text(r, "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου")
print(result.gaps[0].candidates[0].text)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch
from transformers import DynamicCache

from apollo_restore.fim.examples import letter_count
from apollo_restore.fim.layout import DEFAULT_LAYOUT, FimLayout
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.model.checkpoint import layout_of, load_model
from apollo_restore.restore.beam import Beam, LengthBound, beam_search
from apollo_restore.restore.candidates import merge_equivalent, to_candidates
from apollo_restore.restore.config import (
    DEFAULT_MODEL,
    DEFAULT_RESTORE_CONFIG,
    RestoreConfig,
    hint_slack,
    search_chars,
)
from apollo_restore.restore.filler import LanguageModel
from apollo_restore.restore.types import Candidate


def _bound(hint: Hint, cfg: RestoreConfig) -> LengthBound:
    """The beam's length bound: the hint's letter budget (:meth:`Hint.letters`) with its slack,
    in at most :func:`search_chars` characters."""
    if not hint.given:
        return LengthBound(cfg.max_chars)
    lo, hi = hint.letters(cfg.max_chars)
    return LengthBound(
        max_chars=search_chars(hint, cfg), lo=lo, hi=hi, slack=hint_slack(hint, cfg), penalty=cfg.hint_penalty
    )


class Restorer:
    """The neural gap filler: a loaded model and its tokenizer, searched by KV-cached beam search.

    Args:
        model: a causal LM in eval mode.
        tok: its :class:`CharTokenizer`.
        name: shown in results.
        layout: the FIM layout the model was trained with.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        tok: CharTokenizer,
        name: str = "",
        config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
        layout: FimLayout = DEFAULT_LAYOUT,
    ):
        self.model, self.tok, self.name, self.config, self.layout = model, tok, name, config, layout

    @classmethod
    def load(
        cls,
        folder: str | Path | None = None,
        config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
        threads: int | None = None,
    ) -> Restorer:
        """Load a model folder (default: the embedded model shipped in the package).

        Raises:
            FileNotFoundError: no model there.
        """
        if threads:
            torch.set_num_threads(threads)
        path = Path(folder) if folder else DEFAULT_MODEL
        model, tok, meta = load_model(path)
        return cls(model, tok, name=path.name, config=config, layout=layout_of(meta))

    def _prompt_and_join(self, prefix: str, suffix: str, hint: Hint) -> tuple[list[int], list[int]]:
        """The layout's prompt and join tokens for a gap (context cut to ``context_chars``)."""
        n, j = self.config.context_chars, self.config.join_chars
        layout = self.layout if j is None else replace(self.layout, join_chars=min(j, self.layout.join_chars))
        return layout.prompt(self.tok, prefix[-n:], suffix[:n], hint), layout.join(self.tok, suffix[:n])

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """Ranked readings for one gap given normalised context (the gap-set interface).

        Args:
            prefix, suffix: ``norm.v1`` text before and after the gap (other gaps as ``-``/``…``).
            hint: letters in the gap.
            k: candidates wanted (default: the config's).

        Returns:
            Up to ``k`` candidates, best first, probabilities normalised over them.
        """
        k = k or self.config.k
        prompt, join = self._prompt_and_join(prefix, suffix, hint)
        beams: list[Beam] = beam_search(self.model, self.tok, prompt, join, k=k, bound=_bound(hint, self.config))
        readings = merge_equivalent([(self.tok.decode(list(b.ids)).strip(), b.score) for b in beams])
        return to_candidates(readings)

    @torch.no_grad()
    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """Log-probability (nats) the model gives to each reading as the gap's middle, the
        join with the suffix and the hint's length penalty included: the quantity beam search
        ranks by (a reading the search would not allow still gets a finite score).

        The prompt runs once; its KV cache is repeated for all readings, which run as one
        right-padded batch (causal attention keeps padding out of every real position).

        Returns:
            One score per reading, in order.
        """
        if not readings:
            return []
        device = next(self.model.parameters()).device
        prompt, join = self._prompt_and_join(prefix, suffix, hint)
        bound = _bound(hint, self.config)
        cache = DynamicCache()
        out = self.model(input_ids=torch.tensor([prompt], device=device), past_key_values=cache, use_cache=True)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)  # (V,): the reading's first token
        bodies = [self.tok.encode(r) + join for r in readings]
        width = max(len(b) for b in bodies)
        ids = torch.full((len(bodies), width), self.tok.pad_id, dtype=torch.long, device=device)
        for i, body in enumerate(bodies):
            ids[i, : len(body)] = torch.tensor(body)
        cache.batch_repeat_interleave(len(bodies))
        logp = torch.log_softmax(
            self.model(input_ids=ids, past_key_values=cache, use_cache=True).logits.float(), dim=-1
        )  # (R, W, V)
        scores = []
        for i, body in enumerate(bodies):
            rest = logp[i, torch.arange(len(body) - 1), torch.tensor(body[1:])].sum() if len(body) > 1 else 0.0
            scores.append(float(first[body[0]] + rest) + bound.penalty_of(letter_count(readings[i])))
        return scores

    def language_model(self) -> LanguageModel:
        """The model and its tokenizer (bits per character)."""
        return LanguageModel(self.model, self.tok)
