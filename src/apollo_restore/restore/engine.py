"""The restoration engine: load a model once, restore many texts (DESIGN §6; paper App. F).

    from apollo_restore import Restorer
    r = Restorer.load()                       # the embedded default model
    result = r.restore("ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου")
    print(result.gaps[0].candidates[0].text)

Gaps are filled left to right: for gap *i*, earlier gaps hold their pinned or best reading,
later ones are shown as ``…`` (unknown extent), as in training.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from transformers import DynamicCache

from apollo_restore.data.document import Document
from apollo_restore.errors import RestoreStopped
from apollo_restore.fim.examples import Hint, letter_count
from apollo_restore.fim.layout import DEFAULT_LAYOUT, FimLayout
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.checkpoint import layout_of, load_model
from apollo_restore.restore.beam import Beam, LengthBound, beam_search
from apollo_restore.restore.context import GapContexts, context_of  # noqa: F401  (context_of: its old home)
from apollo_restore.restore.request import RequestLimits, RestoreRequest, check_k
from apollo_restore.restore.types import Candidate, GapResult, Restoration

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "default"
_NON_LETTERS = re.compile(r"[\s·.,;:'\"\-…]+")


@dataclass(frozen=True)
class RestoreConfig:
    """Search settings.

    Attributes:
        k: candidates per gap.
        context_chars: characters of prefix and of suffix given to the model, each side
            (the model was trained on windows of about 500 characters in all).
        max_chars: longest middle searched when there is no hint (characters, spaces included).
        exact_length: force candidates to the hinted letter count (only for exact hints);
            for comparisons with systems that need the gap length.
        hint_slack: letters beyond the hint still searched, so a wrong hint is survived.
        hint_penalty: nats charged per letter outside the hint.
        join_chars: suffix characters scored after the middle (at most the layout's; ``None``:
            the layout's).
    """

    k: int = 20
    context_chars: int = 250
    max_chars: int = 40
    exact_length: bool = False
    hint_slack: int = 2
    hint_penalty: float = 3.0
    join_chars: int | None = None


def match_key(text: str) -> str:
    """Space-agnostic identity of a reading: letters only, final sigma folded to σ."""
    return _NON_LETTERS.sub("", text).replace("ς", "σ")


def merge_equivalent(beams: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Merge readings equal up to spaces and punctuation: probabilities add (log-sum-exp),
    the best-scoring spelling is kept. Input and output are ``(text, log_score)``, best first."""
    merged: dict[str, tuple[str, float]] = {}
    for text, score in beams:
        key = match_key(text)
        if key in merged:
            best_text, total = merged[key]
            merged[key] = (best_text, max(total, score) + math.log1p(math.exp(-abs(total - score))))
        else:
            merged[key] = (text, score)
    return sorted(merged.values(), key=lambda item: -item[1])


def _bound(hint: Hint, cfg: RestoreConfig) -> LengthBound:
    if hint is None:
        return LengthBound(cfg.max_chars)
    lo, hi = hint if isinstance(hint, tuple) else (hint, hint)
    slack = 0 if cfg.exact_length and not isinstance(hint, tuple) else cfg.hint_slack
    return LengthBound(max_chars=max(4, 2 * (hi + slack) + 2), lo=max(1, lo), hi=max(1, hi), slack=slack, penalty=cfg.hint_penalty)


class Restorer:
    """A loaded model and its tokenizer; :meth:`restore` fills the gaps of Leiden texts.

    Args:
        model: a causal LM in eval mode.
        tok: its :class:`CharTokenizer`.
        name: shown in results.
        layout: the FIM layout the model was trained with.
    """

    def __init__(
        self, model: torch.nn.Module, tok: CharTokenizer, name: str = "", config: RestoreConfig = RestoreConfig(),
        layout: FimLayout = DEFAULT_LAYOUT,
    ):
        self.model, self.tok, self.name, self.config, self.layout = model, tok, name, config, layout

    @classmethod
    def load(cls, folder: str | Path | None = None, config: RestoreConfig = RestoreConfig(), threads: int | None = None) -> "Restorer":
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
        logp = torch.log_softmax(self.model(input_ids=ids, past_key_values=cache, use_cache=True).logits.float(), dim=-1)  # (R, W, V)
        scores = []
        for i, body in enumerate(bodies):
            rest = logp[i, torch.arange(len(body) - 1), torch.tensor(body[1:])].sum() if len(body) > 1 else 0.0
            scores.append(float(first[body[0]] + rest) + bound.penalty_of(letter_count(readings[i])))
        return scores

    def restore(
        self, text: str | Document, hints: dict[int, Hint] | None = None, pins: dict[int, str] | None = None, k: int | None = None
    ) -> Restoration:
        """Restore every lacuna of a Leiden text, left to right (see :func:`restore_text`)."""
        return restore_text(self, text, hints, pins, self.config.k if k is None else k, self.name)


def restore_text(
    filler,
    text: str | Document | RestoreRequest,
    hints: dict[int, Hint] | None = None,
    pins: dict[int, str] | None = None,
    k: int = 20,
    name: str = "",
    limits: RequestLimits = RequestLimits(),
) -> Restoration:
    """Restore every lacuna of a Leiden text, left to right, with any gap filler.

    Args:
        filler: anything with ``candidates(prefix, suffix, hint, k)`` (the neural
            :class:`Restorer`, an ensemble, retrieval-augmented search).
        text: Leiden text (``[.5]``, ``[ca.5]``, ``[.5-8]``, ``[- - -]``, ``???`` ...), a
            parsed :class:`Document`, or a request already validated (then ``hints``,
            ``pins`` and ``k`` are its own).
        hints: per-gap hint overrides (0-based gap index → hint); ``None`` as a value
            removes the hint the text gives.
        pins: per-gap readings fixed by the caller; those gaps are not searched.
        k: candidates per gap.
        name: model name recorded in the result.
        limits: what the request may ask (:class:`RequestLimits`).

    Raises:
        RequestError: the request is out of limits, not Greek enough, or has no gap.
        LeidenError: the text is not well-formed Leiden.
        RestoreStopped: the request's ``should_stop`` answered true before a gap.
    """
    started = time.perf_counter()
    if isinstance(text, RestoreRequest) and text.document is not None:
        request = text
    elif isinstance(text, Document):
        request = RestoreRequest(text.id, hints, pins, k).with_document(text, [], check_k(k, limits), limits)
    else:
        request = RestoreRequest(text, hints, pins, k).validate(limits)
    spans = [(m.start, m.end) for m in request.markers]
    contexts = GapContexts(request.document.segments)
    fills: list[str] = []
    gaps: list[GapResult] = []
    for i in range(len(contexts)):
        if request.should_stop is not None and request.should_stop():
            raise RestoreStopped(f"stopped before gap {i + 1} of {len(contexts)}")
        gap_started = time.perf_counter()
        hint = request.hints[i]
        prefix, suffix = contexts.context(i, fills)
        pinned = request.pins.get(i)
        cands = [] if pinned is not None else filler.candidates(prefix, suffix, hint, request.k)
        gap = GapResult(i, hint, prefix, suffix, cands, pinned, spans[i] if i < len(spans) else None)
        gap.ms = round((time.perf_counter() - gap_started) * 1000, 1)
        gaps.append(gap)
        fills.append(gap.best)
    prefix, suffix = GapContexts(request.document.segments, window=None).context(len(fills) - 1, fills)
    ms = round((time.perf_counter() - started) * 1000, 1)
    return Restoration(request.text, gaps, name, ms, prefix + fills[-1] + suffix, request.warnings)


def to_candidates(readings: list[tuple[str, float]]) -> list[Candidate]:
    """``(text, log_score)`` pairs, best first → candidates with probabilities normalised
    over the list."""
    if not readings:
        return []
    top = readings[0][1]
    weights = [math.exp(score - top) for _, score in readings]
    total = sum(weights)
    return [Candidate(text, w / total, score) for (text, score), w in zip(readings, weights)]
