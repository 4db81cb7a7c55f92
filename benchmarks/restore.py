"""Restoration latency of the KV-cached beam search vs transformers ``generate``.

    python benchmarks/restore.py [--model DIR] [--gaps 10] [--threads 2]

For gaps of 1, 5, 10 and 20 letters cut from ddb validation documents with 250 characters of
context each side (500 in all), k = 20, exact hints: p50/p95 latency of
``Restorer.candidates`` and of ``model.generate(num_beams=20, num_return_sequences=20,
length_penalty=0)`` on the same prompts with the same allowed characters, and how often their
top candidates agree; and the latency of the shipped ensemble (``load_filler``). Prints Markdown.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from transformers import LogitsProcessor, LogitsProcessorList

from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic
from apollo_restore.restore.engine import Restorer, match_key
from apollo_restore.restore.ensemble import load_filler


class AllowedTokens(LogitsProcessor):
    """Restricts generation to the characters a middle may hold, and [EOS] — as our search does."""

    def __init__(self, allowed: list[int]):
        self.allowed = torch.tensor(allowed)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        mask = torch.full_like(scores, float("-inf"))
        mask[:, self.allowed] = 0
        return scores + mask


def generate_top(restorer: Restorer, prefix: str, suffix: str, hint, k: int) -> list[str]:
    tok = restorer.tok
    prompt = torch.tensor([restorer.layout.prompt(tok, prefix, suffix, hint)])
    out = restorer.model.generate(
        prompt, num_beams=k, num_return_sequences=k, max_new_tokens=40, length_penalty=0.0, do_sample=False,
        eos_token_id=tok.eos_id, pad_token_id=tok.pad_id, early_stopping=True,
        logits_processor=LogitsProcessorList([AllowedTokens(tok.middle_char_ids + [tok.eos_id])]),
    )
    return [tok.decode(seq[prompt.size(1):].tolist()).strip() for seq in out]


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--gaps", type=int, default=10, help="gaps per length")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--k", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    restorer = Restorer.load(args.model)
    shipped = load_filler(args.model)
    table = load_documents(args.prepared, split="validation", sources=["ddb"])
    print(f"## Restoration latency: neural `{restorer.name}` and shipped `{shipped.name}`, k = {args.k}, "
          f"{args.threads} threads, 500-character context\n")
    print("| gap letters | neural beam p50 ms | p95 ms | generate p50 ms | p95 ms | speed-up (p50) | top-1 agree | top-5 overlap | shipped p50 ms | p95 ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for length in (1, 5, 10, 20):
        gaps = build_synthetic(table, "ddb", "validation", args.gaps, conditions=("exact",), lengths=[length], seed=7)
        ours, theirs, agree, overlap, ens = [], [], 0, [], []
        for gap in gaps:
            started = time.perf_counter()
            shipped.candidates(gap.prefix, gap.suffix, gap.hint, args.k)
            ens.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            cands = restorer.candidates(gap.prefix, gap.suffix, gap.hint, args.k)
            ours.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            gen = generate_top(restorer, gap.prefix[-250:], gap.suffix[:250], gap.hint, args.k)
            theirs.append((time.perf_counter() - started) * 1000)
            agree += match_key(cands[0].text) == match_key(gen[0])
            overlap.append(len({match_key(c.text) for c in cands[:5]} & {match_key(g) for g in gen[:5]}) / 5)
        print(f"| {length} | {percentile(ours, 50):.0f} | {percentile(ours, 95):.0f} | {percentile(theirs, 50):.0f} | "
              f"{percentile(theirs, 95):.0f} | {statistics.median(theirs) / statistics.median(ours):.1f}× | "
              f"{agree}/{len(gaps)} | {statistics.mean(overlap):.2f} | {percentile(ens, 50):.0f} | {percentile(ens, 95):.0f} |")


if __name__ == "__main__":
    main()
