"""The restoration engine: load a model once, restore many texts (DESIGN §6; paper App. F).

    from apollo_restore import Restorer
    r = Restorer.load()                       # the embedded default model
    result = r.restore("ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου")
    print(result.gaps[0].candidates[0].text)

Gaps are filled left to right: for gap *i*, earlier gaps hold their pinned or best reading,
later ones are shown as ``…`` (unknown extent), as in training.
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import DynamicCache

from apollo_restore.data.document import Document
from apollo_restore.fim.examples import Hint, encode_prompt
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.checkpoint import load_model
from apollo_restore.restore.beam import Beam, LengthBound, beam_search
from apollo_restore.restore.common import (  # noqa: F401  (re-exported: the engine's public names)
    DEFAULT_MODEL,
    RestoreConfig,
    context_of,
    match_key,
    merge_equivalent,
    restore_text,
    to_candidates,
)
from apollo_restore.restore.types import Candidate, Restoration


def _bound(hint: Hint, cfg: RestoreConfig) -> LengthBound:
    if hint is None:
        return LengthBound(cfg.max_chars)
    top = hint[1] if isinstance(hint, tuple) else hint
    exact = hint if cfg.exact_length and isinstance(hint, int) else None
    return LengthBound(max_chars=max(4, top + top // 2 + 4), exact_letters=exact)


class Restorer:
    """A loaded model and its tokenizer; :meth:`restore` fills the gaps of Leiden texts.

    Args:
        model: a causal LM in eval mode.
        tok: its :class:`CharTokenizer`.
        name: shown in results.
    """

    def __init__(self, model: torch.nn.Module, tok: CharTokenizer, name: str = "", config: RestoreConfig = RestoreConfig()):
        self.model, self.tok, self.name, self.config = model, tok, name, config

    @classmethod
    def load(cls, folder: str | Path | None = None, config: RestoreConfig = RestoreConfig(), threads: int | None = None) -> "Restorer":
        """Load a model folder (default: the embedded model shipped in the package).

        Raises:
            FileNotFoundError: no model there.
        """
        if threads:
            torch.set_num_threads(threads)
        path = Path(folder) if folder else DEFAULT_MODEL
        model, tok, _ = load_model(path)
        return cls(model, tok, name=path.name, config=config)

    def candidates(self, prefix: str, suffix: str, hint: Hint = None, k: int | None = None) -> list[Candidate]:
        """Ranked readings for one gap given normalised context (the gap-set interface).

        Args:
            prefix, suffix: ``norm.v1`` text before and after the gap (other gaps as ``-``/``…``).
            hint: letters in the gap: exact ``int``, range ``(lo, hi)`` or ``None``.
            k: candidates wanted (default: the config's).

        Returns:
            Up to ``k`` candidates, best first, probabilities normalised over them.
        """
        k = k or self.config.k
        n = self.config.context_chars
        prompt = encode_prompt(self.tok, prefix[-n:], suffix[:n], hint)
        beams: list[Beam] = beam_search(self.model, self.tok, prompt, k=k, bound=_bound(hint, self.config))
        readings = merge_equivalent([(self.tok.decode(list(b.ids)).strip(), b.score) for b in beams])
        return to_candidates(readings)

    @torch.no_grad()
    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """Log-probability (nats) the model gives to each reading as the gap's middle,
        ``[EOS]`` included: the same quantity beam search ranks by.

        The prompt runs once; its KV cache is repeated for all readings, which run as one
        right-padded batch (causal attention keeps padding out of every real position).

        Returns:
            One score per reading, in order.
        """
        if not readings:
            return []
        n = self.config.context_chars
        device = next(self.model.parameters()).device
        prompt = encode_prompt(self.tok, prefix[-n:], suffix[:n], hint)
        cache = DynamicCache()
        out = self.model(input_ids=torch.tensor([prompt], device=device), past_key_values=cache, use_cache=True)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)  # (V,): the reading's first token
        bodies = [self.tok.encode(r) + [self.tok.eos_id] for r in readings]
        width = max(len(b) for b in bodies)
        ids = torch.full((len(bodies), width), self.tok.pad_id, dtype=torch.long, device=device)
        for i, body in enumerate(bodies):
            ids[i, : len(body)] = torch.tensor(body)
        cache.batch_repeat_interleave(len(bodies))
        logp = torch.log_softmax(self.model(input_ids=ids, past_key_values=cache, use_cache=True).logits.float(), dim=-1)  # (R, W, V)
        scores = []
        for i, body in enumerate(bodies):
            rest = logp[i, torch.arange(len(body) - 1), torch.tensor(body[1:])].sum() if len(body) > 1 else 0.0
            scores.append(float(first[body[0]] + rest))
        return scores

    def restore(
        self, text: str | Document, hints: dict[int, Hint] | None = None, pins: dict[int, str] | None = None, k: int | None = None
    ) -> Restoration:
        """Restore every lacuna of a Leiden text, left to right (see :func:`restore_text`)."""
        return restore_text(self, text, hints, pins, k or self.config.k, self.name)


