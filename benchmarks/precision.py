"""CPU time of the neural model's calls in fp32 and int8, per model size, side by side (issue 34,
item 3: what a larger model would cost users).

    python benchmarks/precision.py --sizes medium large --repeats 20

For each size (``medium`` is the shipped one's shape; weights at random, which does not change
the arithmetic) and precision (``fp32``; ``int8``: :meth:`LeanModel.int8`), times on one thread
the three kinds of call a restoration makes, in the shapes of a typical gap: the prompt (500
tokens, once a gap), a beam step (40 rows after that prompt, 12 tokens of tail each; ~20 a gap)
and a re-scoring batch (40 readings of 12 tokens after the prompt). Settings take turns within
each repeat, so that a shared machine's load falls on all alike; prints the median CPU
milliseconds and the ratio to ``medium`` in fp32 as Markdown.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.model.lean import LeanDecoder, LeanModel

PROMPT, ROWS, TAIL = 500, 40, 12


def calls(lean: LeanModel, vocab: int) -> dict[str, callable]:
    """The three kinds of call, each a function of no arguments."""
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(8, vocab, (PROMPT,), generator=gen).tolist()
    rows = torch.randint(8, vocab, (ROWS, TAIL), generator=gen)
    prompt = lean.prompt(ids)

    def step() -> None:  # the 12th step of a beam: every row already has an 11-token tail
        decoder = LeanDecoder(lean, [prompt])
        decoder.step(rows[:1, 0], torch.zeros(1, dtype=torch.long))
        for t in range(1, TAIL):
            decoder.step(rows[:, t], torch.zeros(ROWS, dtype=torch.long) if t == 1 else torch.arange(ROWS))

    return {
        "prompt (500 tokens)": lambda: lean.prompt(ids),
        f"beam ({TAIL} steps × {ROWS} rows)": step,
        f"re-scoring ({ROWS} × {TAIL} tokens)": lambda: lean.continue_rows(prompt, rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["medium", "large"])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    tok = CharTokenizer()
    settings = {}
    for size in args.sizes:
        lean = LeanModel.from_hf(build_model(size, tok).eval())
        settings[(size, "fp32")] = calls(lean, len(tok))
        settings[(size, "int8")] = calls(lean.int8(), len(tok))
    kinds = list(next(iter(settings.values())))
    times = {key: {kind: [] for kind in kinds} for key in settings}
    keys = list(settings)
    for r in range(args.repeats + 1):
        for key in keys[r % len(keys) :] + keys[: r % len(keys)]:
            for kind, call in settings[key].items():
                start = time.process_time()
                call()
                if r:  # the first round warms up
                    times[key][kind].append(time.process_time() - start)
    base = keys[0]
    print(f"## CPU ms per call, one thread ({torch.backends.cpu.get_cpu_capability()}), median of {args.repeats}\n")
    print("| size | precision | " + " | ".join(kinds) + " | all three, ratio to " + " ".join(base) + " |")
    print("|---|---|" + "---:|" * (len(kinds) + 1))
    total_base = sum(statistics.median(times[base][k]) for k in kinds)
    for key in keys:
        medians = [statistics.median(times[key][k]) for k in kinds]
        cells = " | ".join(f"{m * 1000:.1f}" for m in medians)
        print(f"| {key[0]} | {key[1]} | {cells} | {sum(medians) / total_base:.2f} |")


if __name__ == "__main__":
    main()
