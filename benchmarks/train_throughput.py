"""Training throughput of a model size on this machine: fp32 vs bf16 autocast (and torch.compile).

    python benchmarks/train_throughput.py --size small --threads 2 [--compile]

Times optimiser steps (forward, backward, AdamW) on random token batches of the shipped shape
(8 × 512) after warm-up steps, and prints tokens/s and the ratio to fp32 as Markdown.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.train.step import fim_loss


def tokens_per_second(size: str, bf16: bool, compile_model: bool, steps: int, batch: int, block: int) -> float:
    tok = CharTokenizer()
    model = build_model(size, tok)
    model.train()
    if compile_model:
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(7, len(tok), (batch, block), generator=gen)
    times = []
    for i in range(steps + 2):
        started = time.perf_counter()
        loss = fim_loss(model, ids, ids, bf16)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i >= 2:  # warm-up (and compilation) excluded
            times.append(time.perf_counter() - started)
    return batch * block / statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--block", type=int, default=512)
    parser.add_argument("--compile", action="store_true", help="also time torch.compile")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    variants = [("fp32", False, False), ("bf16 autocast", True, False)]
    if args.compile:
        variants += [("bf16 autocast + torch.compile", True, True)]
    results = [
        (name, tokens_per_second(args.size, bf16, comp, args.steps, args.batch, args.block))
        for name, bf16, comp in variants
    ]
    base = results[0][1]
    print(f"## Training throughput: `{args.size}`, batch {args.batch}×{args.block}, {args.threads} threads\n")
    print("| precision | tokens/s | ratio to fp32 |\n|---|---:|---:|")
    for name, tps in results:
        print(f"| {name} | {tps:,.0f} | {tps / base:.2f}× |")


if __name__ == "__main__":
    main()
