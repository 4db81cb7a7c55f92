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

from apollo_restore.data.normalise import letter_count
from apollo_restore.fim.layout import DEFAULT_LAYOUT, FimLayout
from apollo_restore.fim.tokenizer import TOKENIZER_FILE, CharTokenizer
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.model.checkpoint import load_model  # imports transformers only when called
from apollo_restore.model.folder import layout_of, read_meta
from apollo_restore.model.lean import LeanModel, Prompt
from apollo_restore.model.verify import check_vocabulary
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
        model: a Hugging Face causal LM in eval mode (``None`` with ``lean`` given: it is
            loaded from ``folder`` only if someone asks for :attr:`model`).
        tok: its :class:`CharTokenizer`.
        name: shown in results.
        layout: the FIM layout the model was trained with.
        lean: the same weights for inference (default: wrapping ``model``).
        folder: the model folder (to load :attr:`model` from when it was not given).

    The last gap's prompt is kept after a search, with the log-probabilities of the readings
    the search found, so that scoring that gap's readings next (an ensemble does) neither runs
    the prompt again nor re-scores what the search already scored.
    """

    def __init__(
        self,
        model: torch.nn.Module | None,
        tok: CharTokenizer,
        name: str = "",
        config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
        layout: FimLayout = DEFAULT_LAYOUT,
        lean: LeanModel | None = None,
        folder: Path | None = None,
    ):
        self._model, self.tok, self.name, self.config, self.layout = model, tok, name, config, layout
        self._lean, self._folder = lean, folder
        self._last: tuple[Prompt, dict[str, float]] | None = None  # prompt; reading → log P(m + join)

    @classmethod
    def load(
        cls,
        folder: str | Path | None = None,
        config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
        threads: int | None = None,
    ) -> Restorer:
        """Load a model folder (default: the embedded model shipped in the package) for
        restoring: its weights are read straight from safetensors (no ``transformers``).

        Raises:
            FileNotFoundError: no model there.
            ModelFolderError: a broken file, or files that do not belong together (``E503``–``E512``).
            ValueError: it was trained with another normaliser or FIM layout.
        """
        if threads:
            torch.set_num_threads(threads)
        path = Path(folder) if folder else DEFAULT_MODEL
        meta = read_meta(path)
        tok = CharTokenizer.load(path)
        lean = LeanModel.load(path)
        check_vocabulary(path / TOKENIZER_FILE, len(tok), {"vocab_size": lean.embed.shape[0]})
        return cls(None, tok, name=path.name, config=config, layout=layout_of(meta), lean=lean, folder=path)

    @property
    def model(self) -> torch.nn.Module:
        """The Hugging Face model (bits per character uses it); loaded from the folder on first
        use when only the lean weights were loaded."""
        if self._model is None and self._folder is not None:
            self._model = load_model(self._folder)[0]
        return self._model

    @property
    def lean(self) -> LeanModel:
        """The weights as the search uses them."""
        if self._lean is None:
            self._lean = LeanModel.from_hf(self.model)
        return self._lean

    def _prompt_and_join(self, prefix: str, suffix: str, hint: Hint) -> tuple[list[int], list[int]]:
        """The layout's prompt and join tokens for a gap (context cut to ``context_chars``)."""
        n, j = self.config.context_chars, self.config.join_chars
        layout = self.layout if j is None else replace(self.layout, join_chars=min(j, self.layout.join_chars))
        return layout.prompt(self.tok, prefix[-n:], suffix[:n], hint), layout.join(self.tok, suffix[:n])

    def _run(self, ids: list[int]) -> tuple[Prompt, dict[str, float]]:
        """The prompt run (once per gap: kept from the last call) and the readings scored after it."""
        if self._last is None or self._last[0].ids != tuple(ids):
            self._last = (self.lean.prompt(ids), {})
        return self._last

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """Ranked readings for one gap given normalised context (the gap-set interface).

        Args:
            prefix, suffix: ``norm.v1`` text before and after the gap (other gaps as ``-``/``…``).
            hint: letters in the gap.
            k: candidates wanted (default: the config's); it only cuts the list.

        Returns:
            Up to ``k`` candidates, best first: the first of the ``config.pool`` beams (the
            search width, whatever ``k``), probabilities normalised over all of them.
        """
        k = k or self.config.k
        ids, join = self._prompt_and_join(prefix, suffix, hint)
        prompt, found = self._run(ids)
        bound = _bound(hint, self.config)
        beams: list[Beam] = beam_search(self.lean, self.tok, prompt, join, k=self.config.pool, bound=bound)
        texts = [(self.tok.decode(list(b.ids)).strip(), b.score) for b in beams]
        for text, score in texts:
            found.setdefault(text, score - bound.penalty_of(letter_count(text)))
        return to_candidates(merge_equivalent(texts), k)

    @torch.inference_mode()
    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """Log-probability (nats) the model gives to each reading as the gap's middle, the
        join with the suffix and the hint's length penalty included: the quantity beam search
        ranks by (a reading the search would not allow still gets a finite score).

        The prompt runs once per gap (kept from the search); readings the search already
        scored are not run again; the others run as one right-padded batch after the prompt
        (causal attention keeps padding out of every real position).

        Returns:
            One score per reading, in order.
        """
        if not readings:
            return []
        ids, join = self._prompt_and_join(prefix, suffix, hint)
        prompt, found = self._run(ids)
        todo = [r for r in dict.fromkeys(readings) if r not in found]
        if todo:
            found.update(zip(todo, self._score_after(prompt, [self.tok.encode(r) + join for r in todo])))
        bound = _bound(hint, self.config)
        return [found[r] + bound.penalty_of(letter_count(r)) for r in readings]

    def _score_after(self, prompt: Prompt, bodies: list[list[int]]) -> list[float]:
        """``log P(body | prompt)`` (nats) of each token list, as one right-padded batch."""
        first = torch.log_softmax(prompt.logits[0].float(), dim=-1)  # (V,): each body's first token
        width = max(len(b) for b in bodies)
        ids = torch.full((len(bodies), width), self.tok.pad_id, dtype=torch.long, device=self.lean.device)
        for i, body in enumerate(bodies):
            ids[i, : len(body)] = torch.tensor(body)
        logp = torch.log_softmax(self.lean.continue_rows(prompt, ids).float(), dim=-1)  # (R, W, V)
        scores = []
        for i, body in enumerate(bodies):
            rest = logp[i, torch.arange(len(body) - 1), torch.tensor(body[1:])].sum() if len(body) > 1 else 0.0
            scores.append(float(first[body[0]] + rest))
        return scores

    def language_model(self) -> LanguageModel:
        """The model and its tokenizer (bits per character)."""
        return LanguageModel(self.model, self.tok)
