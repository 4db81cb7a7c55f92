"""Load and prediction time of two attribution folders side by side (one thread, interleaved).

    python benchmarks/attribution_speed.py --prepared data/prepared --corpora corpora \
        --a OLD_FOLDER [--b NEW_FOLDER] [--texts 300]

Each folder is loaded ``--loads`` times (alternating) and predicts the same validation documents
(alternating text by text); prints the median load seconds and the mean milliseconds a text of
each, and their ratios (the machine is shared: only the ratios mean much).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from apollo_restore.attribution.model import AttributionModel  # noqa: E402
from apollo_restore.attribution.train import examples  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, required=True)
    parser.add_argument("--corpora", type=Path, required=True)
    parser.add_argument("--a", type=Path, required=True)
    parser.add_argument("--b", type=Path, default=None, help="default: the packaged folder")
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args()
    folders = {"a": args.a, "b": args.b}
    loads: dict[str, list[float]] = {"a": [], "b": []}
    models = {}
    for _ in range(args.loads):
        for name, folder in folders.items():
            started = time.perf_counter()
            models[name] = AttributionModel.load(folder)
            loads[name].append(time.perf_counter() - started)
    items = examples(args.prepared, args.corpora, "validation", 0, crops=0, fill=0.0)[: args.texts]
    spent = {"a": 0.0, "b": 0.0}
    for e in items:
        for name, model in models.items():
            started = time.perf_counter()
            model.predict(e.text, e.letters)
            spent[name] += time.perf_counter() - started
    load = {k: statistics.median(v) for k, v in loads.items()}
    per = {k: 1000 * v / len(items) for k, v in spent.items()}
    mean_letters = sum(e.letters for e in items) / len(items)
    print(f"{len(items)} validation texts (mean {mean_letters:.0f} letters), one thread")
    print(f"load: a {load['a']:.2f} s, b {load['b']:.2f} s (b/a {load['b'] / load['a']:.1f}×)")
    print(f"a text: a {per['a']:.1f} ms, b {per['b']:.1f} ms (b/a {per['b'] / per['a']:.1f}×)")


if __name__ == "__main__":
    main()
