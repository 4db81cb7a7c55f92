"""Restoration latency: the neural beam search (lean step, join scored) and the shipped ensemble.

    python benchmarks/restore.py [--model DIR] [--gaps 10] [--threads 1]

For gaps of 1, 5, 10 and 20 letters cut from ddb validation documents with 250 characters of
context each side (500 in all), k = 20, exact hints: p50/p95 latency of ``NeuralMember.candidates``
(the neural model alone) and of the shipped restorer (``load_restorer``), in wall and in CPU
milliseconds (process time: on a shared machine, less sensitive to the other jobs than wall
time; with one thread the two agree on an idle machine). Prints Markdown. Compare rows of one
run, not runs; to compare two source trees, run this file with ``PYTHONPATH`` set to each.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members.neural import NeuralMember


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--gaps", type=int, default=10, help="gaps per length")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--k", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    neural_member = NeuralMember.load(args.model)
    shipped = load_restorer(args.model)
    table = load_documents(args.prepared, split="validation", sources=["ddb"])
    print(
        f"## Restoration latency: neural `{neural_member.name}` "
        f"({neural_member.layout.name}) "
        f"and shipped `{shipped.name}`, k = {args.k}, {args.threads} thread(s), 500-character context\n"
    )
    print("| gap letters | neural p50 ms | p95 ms | CPU p50 ms | shipped p50 ms | p95 ms | CPU p50 ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for length in (1, 5, 10, 20):
        gaps = build_synthetic(table, "ddb", "validation", args.gaps, conditions=("exact",), lengths=[length], seed=7)
        neural, ens, neural_cpu, ens_cpu = [], [], [], []
        for gap in gaps:
            for restorer, wall, cpu in ((neural_member, neural, neural_cpu), (shipped, ens, ens_cpu)):
                started, started_cpu = time.perf_counter(), time.process_time()
                restorer.candidates(gap.prefix, gap.suffix, gap.hint, args.k)
                wall.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - started_cpu) * 1000)
        print(
            f"| {length} | {percentile(neural, 50):.0f} | {percentile(neural, 95):.0f} | "
            f"{percentile(neural_cpu, 50):.0f} | {percentile(ens, 50):.0f} | {percentile(ens, 95):.0f} | "
            f"{percentile(ens_cpu, 50):.0f} |"
        )


if __name__ == "__main__":
    main()
