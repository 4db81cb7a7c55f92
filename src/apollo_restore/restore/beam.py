"""Beam search over the middle of a FIM prompt, with a KV cache and all beams batched.

The prompt (``[BOS][SUFFIX] s [PREFIX] p ⟨hint⟩ [MIDDLE]``) is run once; each step then feeds
one token per live beam, ``(beams, 1)``, reusing the cached keys and values. A beam ends when
it emits ``[EOS]``. Scores are summed log-probabilities (``[EOS]`` included), so candidates of
different lengths compete on the probability the model gives to the whole middle.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from apollo_restore.fim.tokenizer import CharTokenizer


@dataclass(frozen=True)
class Beam:
    """A finished hypothesis: token ids of the middle (no EOS) and its log-probability."""

    ids: tuple[int, ...]
    score: float


@dataclass(frozen=True)
class LengthBound:
    """Letters the middle may hold. ``exact`` forces EOS exactly at ``n`` letters (the
    length-bound mode used to compare with systems that need the gap length)."""

    max_chars: int
    exact_letters: int | None = None


def _allowed_mask(tok: CharTokenizer, vocab_size: int) -> torch.Tensor:
    mask = torch.full((vocab_size,), float("-inf"))
    mask[tok.middle_char_ids] = 0.0
    mask[tok.eos_id] = 0.0
    return mask


@torch.no_grad()
def beam_search(
    model: torch.nn.Module, tok: CharTokenizer, prompt: list[int], k: int = 20, bound: LengthBound = LengthBound(40)
) -> list[Beam]:
    """The ``k`` most probable middles for ``prompt``.

    Args:
        model: a causal LM returning ``logits`` of shape ``(B, T, V)`` and a KV cache.
        tok: its tokenizer.
        prompt: ids of the FIM prompt, ending with ``[MIDDLE]``.
        k: beams kept and candidates returned.
        bound: maximum length and optional exact letter count.

    Returns:
        Up to ``k`` beams, best first, each with at least one letter. Beams cut by
        ``max_chars`` (scored without ``[EOS]``) fill the list only when fewer than ``k``
        beams finished.
    """
    device = next(model.parameters()).device
    cache = DynamicCache()
    out = model(input_ids=torch.tensor([prompt], device=device), past_key_values=cache, use_cache=True)
    logits = out.logits[:, -1, :].float()  # (1, V)
    allowed = _allowed_mask(tok, logits.size(-1)).to(device)
    letter = torch.zeros(logits.size(-1), dtype=torch.long, device=device)
    letter[tok.middle_char_ids[:-2]] = 1  # every middle char but space and '·' is a letter
    separator = 1 - letter - (torch.arange(logits.size(-1), device=device) == tok.eos_id).long()
    separator[[i for i in range(logits.size(-1)) if i not in tok.middle_char_ids]] = 0  # space, '·'
    after_separator = torch.ones(1, dtype=torch.bool, device=device)  # the middle starts on a letter
    scores = torch.zeros(1, device=device)  # (beams,)
    letters = torch.zeros(1, dtype=torch.long, device=device)  # letters so far, per beam
    seqs: list[tuple[int, ...]] = [()]
    finished: list[Beam] = []
    for _ in range(bound.max_chars + 1):
        logp = torch.log_softmax(logits, dim=-1) + allowed  # (beams, V)
        logp[letters == 0, tok.eos_id] = float("-inf")  # a lacuna holds at least one letter
        logp[after_separator[:, None] & separator.bool()[None, :]] = float("-inf")  # no "  ", no leading space
        if bound.exact_letters is not None:
            done = letters >= bound.exact_letters
            logp[~done, tok.eos_id] = float("-inf")
            logp[done] = torch.where(
                torch.arange(logp.size(-1), device=device) == tok.eos_id, logp[done], torch.tensor(float("-inf"), device=device)
            )
        total = (scores[:, None] + logp).view(-1)  # (beams * V,)
        top_scores, top_idx = total.topk(min(2 * k, int(torch.isfinite(total).sum())))
        beam_idx, token_idx = top_idx // logp.size(-1), top_idx % logp.size(-1)
        keep_beam, keep_tok, keep_score = [], [], []
        for s, b, t in zip(top_scores.tolist(), beam_idx.tolist(), token_idx.tolist()):
            if t == tok.eos_id:
                finished.append(Beam(seqs[b], s))
            elif len(keep_beam) < k:
                keep_beam.append(b)
                keep_tok.append(t)
                keep_score.append(s)
        finished.sort(key=lambda beam: -beam.score)
        del finished[k:]
        if not keep_beam or (len(finished) >= k and keep_score[0] < finished[-1].score):
            break
        if len(seqs[0]) >= bound.max_chars:
            break
        index = torch.tensor(keep_beam, device=device)
        cache.reorder_cache(index)
        seqs = [seqs[b] + (t,) for b, t in zip(keep_beam, keep_tok)]
        scores = torch.tensor(keep_score, device=device)
        new_tokens = torch.tensor(keep_tok, device=device)
        letters = letters[index] + letter[new_tokens]
        after_separator = separator[new_tokens].bool()
        out = model(input_ids=new_tokens[:, None], past_key_values=cache, use_cache=True)
        logits = out.logits[:, -1, :].float()
    if len(finished) < k:  # the length guard cut the search: return the live beams too
        finished += [Beam(seq, score) for seq, score, n in zip(seqs, scores.tolist(), letters.tolist()) if n > 0]
        finished.sort(key=lambda beam: -beam.score)
    return finished[:k]
