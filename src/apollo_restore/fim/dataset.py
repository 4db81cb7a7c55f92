"""Packed streams of FIM training rows, deterministic by (seed, rank, row index).

Row ``i`` of rank ``r`` is built from its own generator ``default_rng([seed, r, i])``, so a
resumed run regenerates exactly the rows it has not yet seen: the data position is just the
number of rows consumed. Documents are drawn with probability ∝ letters × source weight (the
paper upsamples documentary papyri 3×); examples are packed into rows of ``block_size`` tokens
with no padding except the tail that no window fits into.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from apollo_restore.fim.examples import MIN_WINDOW, FimConfig, sample_example
from apollo_restore.fim.layout import DEFAULT_LAYOUT, IGNORE_INDEX, FimLayout
from apollo_restore.fim.tokenizer import CharTokenizer


@dataclass
class Corpus:
    """Training texts with their sources, and the sampling distribution over them."""

    texts: list[str]
    sources: list[str]
    weights: dict[str, float]

    def __post_init__(self) -> None:
        if not self.texts:
            raise ValueError("the training corpus is empty")
        mass = np.array([len(t) * self.weights.get(s, 1.0) for t, s in zip(self.texts, self.sources)], dtype=np.float64)
        if mass.sum() <= 0:
            raise ValueError(f"source weights {self.weights} give every document zero probability")
        self._cdf = np.cumsum(mass) / mass.sum()

    def characters(self) -> dict[str, dict[str, float]]:
        """The data mix: per source, its documents, characters and share of the samples
        (∝ characters × weight), e.g. ``{"ddb": {"documents": 70000, "characters": 3.1e7, "share": 0.8}}``."""
        mix: dict[str, dict[str, float]] = {}
        for text, source in zip(self.texts, self.sources):
            cell = mix.setdefault(source, {"documents": 0, "characters": 0})
            cell["documents"] += 1
            cell["characters"] += len(text)
        mass = {s: c["characters"] * self.weights.get(s, 1.0) for s, c in mix.items()}
        total = sum(mass.values()) or 1.0
        return {s: {**mix[s], "share": round(mass[s] / total, 4)} for s in sorted(mix)}

    def sample(self, rng: np.random.Generator) -> str:
        """A document text, drawn ∝ length × source weight."""
        return self.texts[min(int(np.searchsorted(self._cdf, rng.random())), len(self.texts) - 1)]


class PackedFimStream:
    """Rows of packed FIM examples.

    Args:
        corpus: what to sample from.
        tok: tokenizer.
        cfg: the gap/hint recipe.
        block_size: tokens per row ``T``.
        seed, rank: with the row index, fix every random choice.
        layout: how an example becomes tokens.
    """

    def __init__(
        self,
        corpus: Corpus,
        tok: CharTokenizer,
        cfg: FimConfig,
        block_size: int,
        seed: int = 0,
        rank: int = 0,
        layout: FimLayout = DEFAULT_LAYOUT,
    ):
        if block_size < MIN_WINDOW + layout.overhead:
            raise ValueError(f"block_size {block_size} cannot hold a {MIN_WINDOW}-character window")
        self.corpus, self.tok, self.cfg, self.layout = corpus, tok, cfg, layout
        self.block_size, self.seed, self.rank = block_size, seed, rank

    def row(self, index: int) -> tuple[list[int], list[int]]:
        """Token ids and labels of row ``index``, each of length ``block_size``."""
        rng = np.random.default_rng([self.seed, self.rank, index])
        ids: list[int] = []
        labels: list[int] = []
        for _ in range(64):
            room = self.block_size - len(ids) - self.layout.overhead
            if room < MIN_WINDOW:
                break
            ex = sample_example(self.corpus.sample(rng), rng, max_len=room)
            if ex is None:
                continue
            ex_ids, ex_labels = self.layout.encode(self.tok, ex.prefix, ex.middle, ex.suffix, ex.hint, self.cfg.loss)
            ids += ex_ids
            labels += ex_labels
        pad = self.block_size - len(ids)
        return ids + [self.tok.pad_id] * pad, labels + [IGNORE_INDEX] * pad

    def batch(self, start: int, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows ``start .. start+size-1`` as ``(input_ids, labels)``, each ``(size, T)`` int64."""
        rows = [self.row(i) for i in range(start, start + size)]
        ids = torch.from_numpy(np.array([r[0] for r in rows], dtype=np.int64).reshape(size, self.block_size))
        labels = torch.from_numpy(np.array([r[1] for r in rows], dtype=np.int64).reshape(size, self.block_size))
        return ids, labels
