"""The neural member: load a model once, restore many texts (docs/design.md, *Restoration*; paper App. F).

from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.driver import restore_text
r = NeuralMember.load()                       # the embedded default model
result = restore_text(r, "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου")
print(result.gaps[0].candidates[0].text)
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from apollo_restore.data.normalise import letter_count
from apollo_restore.errors import Errors, ModelFolderError
from apollo_restore.fim.layout import DEFAULT_LAYOUT, FimLayout
from apollo_restore.fim.tokenizer import TOKENIZER_FILE, CharTokenizer
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.model.checkpoint import load_model  # imports transformers only when called
from apollo_restore.model.folder import layout_of, read_meta
from apollo_restore.model.lean import Int8Weight, LeanModel, Prompt
from apollo_restore.model.verify import check_vocabulary
from apollo_restore.restoration.config import (
    DEFAULT_MODEL,
    DEFAULT_RESTORE_CONFIG,
    GPU_BATCH,
    HINT_PENALTY,
    RestoreConfig,
    hint_slack,
    search_chars,
)
from apollo_restore.restoration.members.beam import LengthBound, beam_search_many
from apollo_restore.restoration.ranking.pool import merge_equivalent, to_candidates
from apollo_restore.restoration.restorer import LanguageModel
from apollo_restore.schema.folder import PRECISIONS, NoOptions
from apollo_restore.schema.restoration import Candidate

log = logging.getLogger(__name__)
#: The probe every loaded model is run on (``norm.v1`` prefix and suffix of a gap of 6 letters).
PROBE_TEXT = ("ετους δευτερου αυτοκρατορος καισαρος τιτου αιλιου αδριανου αντωνινου σεβαστου ευσεβους του ", " μηνος")


#: Most gaps' prompts one thread keeps (:class:`_PromptCache`): a batch's prompts are kept from its
#: search for its scoring (an ensemble scores the batch's readings right after), up to a batch of
#: the GPU's default size (:data:`~apollo_restore.restoration.config.GPU_BATCH`); a larger batch's
#: first prompts run again when scored (the same scores, later).
MAX_KEPT_PROMPTS = GPU_BATCH

#: One gap's prompt run and the log P(middle + join) of the readings scored after it so far.
_Run = tuple[Prompt, dict[str, float]]


@dataclass
class _PromptCache:
    """One thread's most recently used gaps' prompts: prompt ids → :data:`_Run`, at most ``kept``
    (the size of the thread's last batch, at most :data:`MAX_KEPT_PROMPTS`), the least recently
    used dropped first. A pure memo: what it holds is what running the prompt and scoring the
    readings gives (up to float rounding), so a score never depends on what ran before."""

    runs: OrderedDict[tuple[int, ...], _Run] = field(default_factory=OrderedDict)
    kept: int = 1

    def keep(self, gaps: int) -> None:
        """Keep the prompts of a batch of ``gaps`` gaps (at most :data:`MAX_KEPT_PROMPTS`)."""
        self.kept = max(1, min(gaps, MAX_KEPT_PROMPTS))
        self._trim()

    def run(self, key: tuple[int, ...], make: Callable[[], Prompt]) -> _Run:
        """The run of prompt ``key``: kept, or made now (and kept)."""
        if key in self.runs:
            self.runs.move_to_end(key)
        else:
            self.runs[key] = (make(), {})
            self._trim()
        return self.runs[key]

    def _trim(self) -> None:
        while len(self.runs) > self.kept:
            self.runs.popitem(last=False)  # the least recently used


def in_precision(lean: LeanModel, precision: str | None) -> LeanModel:
    """``lean`` with its matrix products in ``precision`` (:data:`PRECISIONS`; ``None``: ``"fp32"``):
    ``"int8"`` on a CPU is :meth:`LeanModel.int8`; on a GPU, or where PyTorch has no int8 kernel
    (a logged warning), the weights stay as loaded."""
    if precision is not None and precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if precision in (None, "fp32") or lean.device.type != "cpu":
        return lean
    try:
        return lean.int8()
    except RuntimeError as error:  # a PyTorch built without fbgemm/oneDNN/qnnpack
        log.warning("int8 matrix products unavailable here (%s): the neural model runs in float", error)
        return lean


def _bound(hint: Hint, cfg: RestoreConfig) -> LengthBound:
    """The beam's length bound: the hint's letter budget (:meth:`Hint.letters`) with its slack,
    in at most :func:`search_chars` characters."""
    if not hint.given:
        return LengthBound(cfg.max_chars)
    lo, hi = hint.letters(cfg.max_chars)
    return LengthBound(
        max_chars=search_chars(hint, cfg), lo=lo, hi=hi, slack=hint_slack(hint, cfg), penalty=HINT_PENALTY
    )


class NeuralMember:
    """The neural member: a loaded model and its tokenizer, searched by KV-cached beam search.

    Args:
        model: a Hugging Face causal LM in eval mode (``None`` with ``lean`` given: it is
            loaded from ``folder`` only if someone asks for :attr:`model`).
        tok: its :class:`CharTokenizer`.
        name: shown in results.
        layout: the FIM layout the model was trained with.
        lean: the same weights for inference (default: wrapping ``model``).
        folder: the model folder (to load :attr:`model` from when it was not given).

    The last gap's prompt is kept after a search (the last batch's, after
    :meth:`candidates_many`, up to :data:`MAX_KEPT_PROMPTS`), with the log-probabilities of the
    readings the search found, so that scoring that gap's readings next (an ensemble does) neither
    runs the prompt again nor re-scores what the search already scored: only faster, since the
    search's score of a reading is the quantity :meth:`score_readings` computes (equal up to float
    rounding). It is kept per thread (:class:`threading.local`): two threads restoring with one
    loaded model (the web server's workers) never evict or read each other's prompts.
    """

    kind = "neural"  # as an ensemble member: the one that searches beyond the hint itself
    batches = True  # candidates_many: one beam search over several gaps
    options = NoOptions  # what a model folder's entry of it may set
    in_words = "a neural network"  # what it is, for people (the model's label)

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
        self._lean, self._folder = None if lean is None else in_precision(lean, config.precision), folder
        self._local = threading.local()  # each thread's _PromptCache

    @classmethod
    def load(
        cls,
        folder: str | Path | None = None,
        config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
        device: str = "cpu",
    ) -> NeuralMember:
        """Load a model folder (default: the embedded model shipped in the package) for
        restoring on ``device`` (``"cpu"``, ``"cuda"``): its weights are read straight from
        safetensors (no ``transformers``).

        Raises:
            FileNotFoundError: no model there.
            ModelFolderError: a broken file, or files that do not belong together (``E503``–``E512``).
            ValueError: it was trained with another normaliser or FIM layout, or ``device`` is a
                GPU this PyTorch cannot see (E513).
        """
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ValueError(Errors.E513.format(device=device))
        path = Path(folder) if folder else DEFAULT_MODEL
        meta = read_meta(path)
        tok = CharTokenizer.load(path)
        lean = LeanModel.load(path, device=device)
        check_vocabulary(path / TOKENIZER_FILE, len(tok), {"vocab_size": lean.embed.shape[0]})
        member = cls(None, tok, name=path.name, config=config, layout=layout_of(meta), lean=lean, folder=path)
        member.check_finite_scores(path)
        return member

    @property
    def precision(self) -> str:
        """The arithmetic the search and the scoring run in: ``"int8"`` or ``"fp32"`` on the CPU
        (int8 asked for where PyTorch has no int8 kernel runs in fp32), ``"gpu"`` on a GPU."""
        lean = self.lean
        if lean.device.type != "cpu":
            return "gpu"
        return "int8" if isinstance(lean.head, Int8Weight) else "fp32"

    @torch.inference_mode()
    def check_finite_scores(self, folder: Path) -> None:
        """Run the model once on :data:`PROBE_TEXT` (a gap between two phrases of a papyrus) in the
        arithmetic it will restore in: every log-probability must be a finite number. Finite
        weights can still overflow (a weight near the bf16 maximum, in fp32 or in int8's scales),
        which would rank readings in no order and show NaN probabilities.

        Raises:
            ModelFolderError: ``E529`` naming the folder and the arithmetic.
        """
        prefix, suffix = PROBE_TEXT
        ids = self.layout.prompt(self.tok, prefix, suffix, Hint.exact(5)) + self.tok.encode("κυριου")
        tokens = torch.tensor([ids], device=self.lean.device)
        try:
            logits, _ = self.lean.forward(tokens, torch.zeros(1, dtype=torch.long, device=tokens.device), None, None)
            finite = bool(torch.isfinite(torch.log_softmax(logits.float(), dim=-1)).all())
            reason = "NaN or infinity among them"
        except RuntimeError as err:  # int8 quantisation of activations that overflow
            finite, reason = False, str(err).splitlines()[0][:100]
        if not finite:
            raise ModelFolderError("E529", folder, folder=folder, precision=self.precision, reason=reason)

    @property
    def model(self) -> torch.nn.Module:
        """The Hugging Face model (bits per character uses it); loaded from the folder on first
        use when only the lean weights were loaded."""
        if self._model is None and self._folder is not None:
            self._model = load_model(self._folder)[0]
        return self._model

    @property
    def lean(self) -> LeanModel:
        """The weights as the search and the scoring use them (``config.precision``)."""
        if self._lean is None:
            self._lean = in_precision(LeanModel.from_hf(self.model), self.config.precision)
        return self._lean

    def _prompt_and_join(self, prefix: str, suffix: str, hint: Hint) -> tuple[list[int], list[int]]:
        """The layout's prompt and join tokens for a gap (context cut to ``context_chars``)."""
        n = self.config.context_chars
        return self.layout.prompt(self.tok, prefix[-n:], suffix[:n], hint), self.layout.join(self.tok, suffix[:n])

    def _cache(self) -> _PromptCache:
        """This thread's kept prompts."""
        cache = getattr(self._local, "cache", None)
        if cache is None:
            cache = self._local.cache = _PromptCache()
        return cache

    def _run(self, ids: list[int]) -> _Run:
        """The prompt run (once per gap: kept from this thread's last batch) and the readings
        scored after it."""
        return self._cache().run(tuple(ids), lambda: self.lean.prompt(ids))

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
        return self.candidates_many([(prefix, suffix, hint)], k)[0]

    def candidates_many(self, gaps: list[tuple[str, str, Hint]], k: int | None = None) -> list[list[Candidate]]:
        """:meth:`candidates` for several gaps ``(prefix, suffix, hint)``, searched together
        (:func:`~apollo_restore.restoration.members.beam.beam_search_many`: one batch per step on the
        model's device); each gap's candidates are those :meth:`candidates` gives it alone."""
        k = k or self.config.k
        self._cache().keep(len(gaps))
        pieces = [self._prompt_and_join(prefix, suffix, hint) for prefix, suffix, hint in gaps]
        runs = [self._run(ids) for ids, _ in pieces]
        bounds = [_bound(hint, self.config) for _, _, hint in gaps]
        prompts, joins = [p for p, _ in runs], [j for _, j in pieces]
        pool = self.config.pool  # the readings found, whatever k
        found = beam_search_many(self.lean, self.tok, prompts, joins, pool, bounds, self.config.beam_width)
        out = []
        for beams, (_, scored), bound in zip(found, runs, bounds):
            texts = [(self.tok.decode(list(b.ids)).strip(), b.score) for b in beams]
            for text, score in texts:
                scored.setdefault(text, score - bound.penalty_of(letter_count(text)))
            out.append(to_candidates(merge_equivalent(texts), k))
        return out

    @torch.inference_mode()
    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """Log-probability (nats) the model gives to each reading as the gap's middle, the
        join with the suffix and the hint's length penalty included: the quantity beam search
        ranks by (a reading the search would not allow still gets a finite score).

        The prompt runs once per gap (kept from the search); readings the search already
        scored are not run again; the others run in right-padded batches after the prompt
        (causal attention keeps padding out of every real position).

        Returns:
            One score per reading, in order.
        """
        if not readings:
            return []
        ids, join = self._prompt_and_join(prefix, suffix, hint)
        prompt, found = self._run(ids)
        bound = _bound(hint, self.config)
        penalties = [bound.penalty_of(letter_count(r)) for r in readings]
        todo = list(dict.fromkeys(r for r in readings if r not in found))
        if todo:
            found.update(zip(todo, self._score_after(prompt, [self.tok.encode(r) + join for r in todo])))
        return [found.get(r, float("-inf")) + penalty for r, penalty in zip(readings, penalties)]

    def _score_after(self, prompt: Prompt, bodies: list[list[int]]) -> list[float]:
        """``log P(body | prompt)`` (nats) of each token list, in right-padded batches of bodies
        of like length (:func:`length_batches`)."""
        first = torch.log_softmax(prompt.logits[0].float(), dim=-1)  # (V,): each body's first token
        scores = [0.0] * len(bodies)
        for batch in length_batches([len(b) for b in bodies]):
            width = max(len(bodies[i]) for i in batch)
            ids = torch.full((len(batch), width), self.tok.pad_id, dtype=torch.long, device=self.lean.device)
            for row, i in enumerate(batch):
                ids[row, : len(bodies[i])] = torch.tensor(bodies[i])
            logp = torch.log_softmax(self.lean.continue_rows(prompt, ids).float(), dim=-1)  # (R, W, V)
            for row, i in enumerate(batch):
                body = bodies[i]
                rest = logp[row, torch.arange(len(body) - 1), torch.tensor(body[1:])].sum() if len(body) > 1 else 0.0
                scores[i] = float(first[body[0]] + rest)
        return scores

    def language_model(self) -> LanguageModel:
        """The model and its tokenizer (bits per character)."""
        return LanguageModel(self.model, self.tok)


#: a batch's fixed cost, in padded tokens (one model call over the prompt's keys and values)
BATCH_COST = 64


def length_batches(lengths: list[int], batch_cost: int = BATCH_COST) -> list[list[int]]:
    """Indices of ``lengths`` in batches of like length, shortest first: the split of the sorted
    lengths that pads least, each batch costing its rows × its longest plus ``batch_cost``
    (dynamic programming over the split points; a body's score does not depend on its batch)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    sorted_lengths = [lengths[i] for i in order]
    best = [0] + [0] * len(order)  # best[j]: cost of the first j bodies
    cut = [0] * (len(order) + 1)  # cut[j]: where the last batch of the first j starts
    for j in range(1, len(order) + 1):
        best[j], cut[j] = min((best[i] + (j - i) * sorted_lengths[j - 1] + batch_cost, i) for i in range(j))
    batches, j = [], len(order)
    while j:
        batches.append(order[cut[j] : j])
        j = cut[j]
    return batches[::-1]
