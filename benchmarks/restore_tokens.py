"""Model tokens, arithmetic and CPU time per gap of the shipped default, by kind (issue 21):
where a faster restore must cut, and how close to this CPU's matrix rate it already runs.

    python benchmarks/restore_tokens.py --prepared data/prepared --every 4

Restores every ``--every``-th ddb validation gap (1 per length, exact hint and no hint, seed 21)
with ``load_restorer()`` on one torch thread and counts, per gap: the prompt's tokens, the neural
beam's row-steps (joining rows, forced through the join characters, and free rows, still
writing the middle) and the padded tokens of the re-scoring of the other members' readings.
It also times each kind of model call (CPU seconds) and counts its arithmetic from the model's
shapes: per token, ``2 ×`` the weights of the layers and the head, plus the attention's
``4 × heads × head_dim`` per layer and position read (the gap's prompt and the row's own
tail). The rate in GFLOP/s of each kind is set beside this CPU's rate on one large fp32 matrix
product (``2048 × 2048``, one thread): a kind that runs near it can only get faster by doing
fewer operations, not by running them differently.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter
from pathlib import Path

import torch

from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic
from apollo_restore.model import lean
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members import beam

PROMPT, JOINING, FREE, RESCORE = "prompt", "beam joining row-steps", "beam free row-steps", "re-scoring (padded)"


class Arithmetic:
    """Floating-point operations per token of a :class:`~apollo_restore.model.lean.LeanModel`."""

    def __init__(self, model: lean.LeanModel):
        matrices = [m for layer in model.layers for m in (layer.qkv, layer.o, layer.gate_up, layer.down)]
        weights = sum(math.prod(m.shape) for m in [*matrices, model.head])  # float or Int8Weight
        self.linear = 2 * weights  # operations per token, matrix products
        self.per_position = 4 * model.n_heads * model.head_dim * len(model.layers)  # FLOP per position attended

    def tokens(self, count: int, attended: float) -> float:
        """FLOP of ``count`` tokens each attending ``attended`` positions on average."""
        return count * (self.linear + self.per_position * attended)


def counting(tally: Counter, seconds: Counter, flop: Counter) -> None:
    """Wrap the beam's step, the prompt, the decoder's step and the re-scoring so that each adds
    its tokens to ``tally``, its CPU seconds to ``seconds`` and its FLOP to ``flop``."""
    advance, continue_rows, prompt = beam._Search.advance, lean.LeanModel.continue_rows, lean.LeanModel.prompt
    step = lean.LeanDecoder.step
    state: dict = {"prompt": 0, "arith": None, "tail": 0}

    def timed(kind, fn, *args):
        start = time.process_time()
        out = fn(*args)
        seconds[kind] += time.process_time() - start
        return out

    def counted_advance(self, logp):
        items = advance(self, logp)
        tally[JOINING] += sum(row.join_at is not None for row, _, _ in items)
        tally[FREE] += sum(row.join_at is None for row, _, _ in items)
        return items

    def counted_step(self, tokens, parents):
        state["tail"] += 1
        flop["beam (both kinds)"] += state["arith"].tokens(len(tokens), state["prompt"] + state["tail"])
        return timed("beam (both kinds)", step, self, tokens, parents)

    def counted_rows(self, run, rows):
        tally[RESCORE] += rows.numel()
        flop[RESCORE] += state["arith"].tokens(rows.numel(), len(run.ids) + rows.size(1) / 2)
        return timed(RESCORE, continue_rows, self, run, rows)

    def counted_prompt(self, ids):
        state["arith"] = state["arith"] or Arithmetic(self)
        state["prompt"], state["tail"] = len(ids), 0
        tally[PROMPT] += len(ids)
        flop[PROMPT] += state["arith"].tokens(len(ids), len(ids) / 2)
        return timed(PROMPT, prompt, self, ids)

    beam._Search.advance, lean.LeanModel.continue_rows, lean.LeanModel.prompt = (
        counted_advance, counted_rows, counted_prompt
    )  # fmt: skip
    lean.LeanDecoder.step = counted_step


def matrix_rate(n: int = 2048, repeats: int = 5) -> float:
    """GFLOP/s of one ``n × n`` fp32 matrix product on this thread (best of ``repeats``)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--every", type=int, default=4, help="restore every n-th gap")
    args = parser.parse_args()
    torch.set_num_threads(1)
    table = load_documents(args.prepared, split="validation", sources=["ddb"])
    gaps = build_synthetic(table, "ddb", "validation", 1, conditions=("exact", "none"), seed=21)[:: args.every]
    restorer = load_restorer()
    tally: Counter = Counter()
    seconds: Counter = Counter()
    flop: Counter = Counter()
    counting(tally, seconds, flop)
    total = 0.0
    for gap in gaps:
        start = time.process_time()
        restorer.candidates(gap.prefix, gap.suffix, gap.hint, 20)
        total += time.process_time() - start
    n = len(gaps)
    print(f"| per gap ({n} ddb validation gaps) | tokens |\n|---|---:|")
    for name, count in tally.items():
        print(f"| {name} | {count / n:.0f} |")
    peak = matrix_rate()
    print(f"\none 2048 × 2048 fp32 matrix product, one thread: {peak:.1f} GFLOP/s\n")
    print("| per gap | CPU ms | GFLOP | GFLOP/s | share of the large product's rate |\n|---|---:|---:|---:|---:|")
    for kind in (PROMPT, "beam (both kinds)", RESCORE):
        rate = flop[kind] / seconds[kind] / 1e9
        print(
            f"| {kind} | {1000 * seconds[kind] / n:.0f} | {flop[kind] / n / 1e9:.2f} | {rate:.1f} | {rate / peak:.2f} |"
        )
    model = sum(seconds.values())
    print(f"| the neural model's calls | {1000 * model / n:.0f} | {sum(flop.values()) / n / 1e9:.2f} | "
          f"{sum(flop.values()) / model / 1e9:.1f} | {sum(flop.values()) / model / 1e9 / peak:.2f} |")  # fmt: skip
    print(f"| the whole restoration | {1000 * total / n:.0f} | | | |")


if __name__ == "__main__":
    main()
