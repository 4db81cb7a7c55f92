"""Plot a training run's loss curve (train loss and validation bits per middle character).

python benchmarks/loss_curve.py runs/default/metrics.jsonl [runs/default-middle/metrics.jsonl] \\
    --out docs/notes/runs/loss_curve.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metrics", type=Path, nargs="+", help="metrics.jsonl of each phase, in order")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    fig, (ax_train, ax_val) = plt.subplots(1, 2, figsize=(11, 4))
    offset = 0
    for path in args.metrics:
        records = [json.loads(line) for line in path.read_text().splitlines()]
        train = [(r["tokens"] + offset, r["loss"]) for r in records if "loss" in r]
        val = [(r["tokens"] + offset, r["val_bpc"]) for r in records if "val_bpc" in r]
        label = path.parent.name
        ax_train.plot([t / 1e6 for t, _ in train], [v for _, v in train], label=label, lw=0.8)
        ax_val.plot([t / 1e6 for t, _ in val], [v for _, v in val], "o-", label=label)
        offset = max(offset, train[-1][0] if train else offset)
    ax_train.set(xlabel="tokens seen (millions)", ylabel="training loss (nats/token)", title="training loss")
    ax_val.set(
        xlabel="tokens seen (millions)", ylabel="bits per middle character", title="validation (middle + EOS only)"
    )
    for ax in (ax_train, ax_val):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
