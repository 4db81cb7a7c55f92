"""vLLM restoration backend: beam search (20 candidates) on a GPU, same results as the neural member.

    pip install "apollo-restore[vllm]"          # on a machine with a CUDA GPU
    from apollo_restore.scale.vllm_backend import VllmRestorer
    r = VllmRestorer("runs/large/model", tensor_parallel_size=1)
    result = restore_text(r, "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου")  # a Restoration
    batch = r.candidates_many([(prefix, suffix, Hint.exact(7)), ...])       # one vLLM call

:class:`VllmRestorer` is a :class:`~apollo_restore.restoration.restorer.Restorer` whose per-gap search
runs ``vllm.LLM.beam_search`` (``BeamSearchParams(beam_width=k, max_tokens=…,
length_penalty=0)``, so beams rank by summed log-probability, ``[EOS]`` included, like the
neural member). Prompts are token ids in the FIM layout built by
:class:`~apollo_restore.fim.hf_format.HfFim` from the model folder's own tokenizer, so the
backend serves both the character models and a fine-tuned Mistral. Everything after the search
is shared with the neural member: equivalent readings merged, probabilities normalised over the
returned candidates, multi-gap texts filled left to right, the same ``Candidate`` /
``GapResult`` / ``Restoration`` types.

Differences from the neural member: vLLM's beam search cannot mask the vocabulary, so a
reading holding characters outside the middle alphabet (Greek letters, space, ``·``), a double
space, or no letter at all is dropped after the search instead of never being proposed (fewer
than ``k`` candidates may remain); ``score_readings`` is not available.

Importing this module never needs vLLM; constructing a backend without it (or without a GPU)
raises :class:`VllmUnavailable` saying what to install. Not run here: this machine has no GPU
and vLLM is not installed; the tests drive the class with a fake ``LLM`` object.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apollo_restore.data.normalise import GREEK_LETTERS, MIDDLE_DOT, letter_count
from apollo_restore.fim.hf_format import HfFim, load_tokenizer
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.config import DEFAULT_RESTORE_CONFIG, RestoreConfig, search_chars
from apollo_restore.restoration.ranking.pool import merge_equivalent, to_candidates
from apollo_restore.schema.restoration import Candidate

MIDDLE_ALPHABET = frozenset(GREEK_LETTERS + " " + MIDDLE_DOT)
INSTALL_HINT = (
    "the vLLM backend needs the optional extra and a CUDA GPU: pip install 'apollo-restore[vllm]' on a machine "
    "with an NVIDIA GPU (vLLM does not run this model on CPU); use apollo_restore.NeuralMember on CPU"
)


class VllmUnavailable(RuntimeError):
    """vLLM is not installed or there is no GPU to run it on."""


@dataclass(frozen=True)
class _BeamParams:
    """Stand-in for ``vllm.sampling_params.BeamSearchParams`` when a fake LLM is injected."""

    beam_width: int
    max_tokens: int
    ignore_eos: bool = False
    temperature: float = 0.0
    length_penalty: float = 0.0


def beam_params(k: int, max_tokens: int) -> Any:
    """``BeamSearchParams`` for ``k`` beams of at most ``max_tokens`` new tokens, ranked by
    summed log-probability (``length_penalty=0``)."""
    try:
        from vllm.sampling_params import BeamSearchParams
    except ImportError:
        return _BeamParams(beam_width=k, max_tokens=max_tokens)
    return BeamSearchParams(beam_width=k, max_tokens=max_tokens, length_penalty=0.0, temperature=0.0)


def _check_vllm() -> None:
    if importlib.util.find_spec("vllm") is None:
        raise VllmUnavailable(f"vllm is not installed: {INSTALL_HINT}")
    import torch

    if not torch.cuda.is_available():
        raise VllmUnavailable(f"no CUDA GPU found: {INSTALL_HINT}")


def beams_to_readings(output: Any, prompt_len: int, fim: HfFim, k: int) -> list[tuple[str, float]]:
    """One ``BeamSearchOutput`` → up to ``k`` ``(text, log_score)`` readings, best first.

    Beams cut by ``max_tokens`` (no ``[EOS]``) are returned only when fewer than ``k`` beams
    finished, as in the neural member; the caller ranks everything by score after merging.
    ``sequence.tokens`` holds the prompt too, so the middle is ``tokens[prompt_len:]``.
    """
    finished, cut = [], []
    for seq in output.sequences:
        middle = list(seq.tokens[prompt_len:])
        done = bool(middle) and middle[-1] == fim.eos_id
        text = fim.decode(middle[:-1] if done else middle).strip()
        if not set(text) <= MIDDLE_ALPHABET or "  " in text or letter_count(text) == 0:
            continue  # what the neural member's masked search never proposes: other characters, no letter
        (finished if done else cut).append((text, float(seq.cum_logprob)))
    ranked = sorted(finished, key=lambda r: -r[1])[:k]
    if len(ranked) < k:
        ranked += sorted(cut, key=lambda r: -r[1])[: k - len(ranked)]
    return sorted(ranked, key=lambda r: -r[1])


class VllmRestorer:
    """A restorer whose beam search runs in vLLM (the neural member's search settings and results).

    Args:
        model: local model folder (``config.json``, safetensors, tokenizer files).
        config: search settings (``k`` = 20 by default).
        llm: an object with vLLM's ``beam_search(prompts, params)`` (tests pass a fake); when
            ``None``, ``vllm.LLM(model, **llm_kwargs)`` is built.
        tokenizer: the tokenizer for prompts (default: the folder's).
        llm_kwargs: passed to ``vllm.LLM`` (``tensor_parallel_size``, ``dtype``, ``max_model_len`` ...).

    Raises:
        VllmUnavailable: no ``llm`` given and vLLM or a GPU is missing.

    It declares no ensemble ``kind``: it cannot score readings it did not propose, so an
    :class:`~apollo_restore.restoration.members.ensemble.Ensemble` refuses it as a member.
    """

    batches = True  # candidates_many: one beam_search call over the gaps

    def __init__(
        self,
        model: str | Path,
        config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
        llm: Any = None,
        tokenizer: Any = None,
        name: str = "",
        **llm_kwargs,
    ):
        if llm is None:
            _check_vllm()
            from vllm import LLM

            llm_kwargs.setdefault("dtype", "bfloat16")
            llm = LLM(model=str(model), tokenizer=str(model), **llm_kwargs)
        fim = HfFim(tokenizer if tokenizer is not None else load_tokenizer(str(model)), add_missing=False)
        self.name, self.config = name or Path(model).name, config
        self.llm, self.fim = llm, fim

    def prompt(self, prefix: str, suffix: str, hint: Hint) -> list[int]:
        """Token ids of the FIM prompt for one gap (context cut to ``config.context_chars``)."""
        n = self.config.context_chars
        return self.fim.encode_prompt(prefix[-n:], suffix[:n], hint)

    def candidates_many(self, gaps: Sequence[tuple[str, str, Hint]], k: int | None = None) -> list[list[Candidate]]:
        """Candidates for many gaps in one ``beam_search`` call (vLLM batches the beams).

        Args:
            gaps: ``(prefix, suffix, hint)`` per gap, normalised text.
        """
        k = k or self.config.k
        prompts = [self.prompt(p, s, h) for p, s, h in gaps]
        # vLLM ranks within one call with a single max_tokens: use the longest bound of the batch
        max_tokens = max(search_chars(h, self.config) for _, _, h in gaps) + 1 if gaps else 1
        outputs = self.llm.beam_search([{"prompt_token_ids": p} for p in prompts], beam_params(k, max_tokens))
        return [
            to_candidates(merge_equivalent(beams_to_readings(out, len(p), self.fim, k)))
            for out, p in zip(outputs, prompts)
        ]

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """Ranked readings for one gap (same contract as
        :meth:`~apollo_restore.restoration.members.neural.NeuralMember.candidates`)."""
        return self.candidates_many([(prefix, suffix, hint)], k)[0]

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """Not available: vLLM's beam search gives no scores for readings it did not propose
        (an ensemble or retrieval needs the neural member,
        :class:`~apollo_restore.restoration.members.neural.NeuralMember`)."""
        raise NotImplementedError(
            "score_readings needs the neural member (apollo_restore.restoration.members.neural.NeuralMember)"
        )

    def language_model(self) -> None:
        """None: the model runs inside vLLM, not as a torch module bits per character can read."""
        return None
