"""Build an n-gram model from a prepared corpus.

    python -m apollo_restore.ngram.build --prepared data/prepared --sources ddb \\
        --order 8 --out ddb-8.npz [--min-count 2] [--split train]
"""

from __future__ import annotations

import logging
import resource
import time
from pathlib import Path

import typer

from apollo_restore.data.table import load_documents
from apollo_restore.ngram.model import NgramModel

log = logging.getLogger(__name__)


def build_from_prepared(
    prepared: Path, sources: list[str] | None, order: int = 8, min_count: int = 1, split: str = "train", backward: bool = False
) -> NgramModel:
    """An :class:`NgramModel` over the ``text`` column of one split of ``documents.parquet``;
    ``backward`` counts the texts reversed (a right-to-left model, see ``fill.ReversedFiller``)."""
    table = load_documents(Path(prepared), split=split, sources=sources or None)
    texts = table["text"].to_pylist()
    model = NgramModel.build([t[::-1] for t in texts] if backward else texts, order=order, min_count=min_count)
    model.meta["direction"] = "backward" if backward else "forward"
    return model


def main(
    prepared: Path = typer.Option(..., help="folder written by `apollo-restore prepare`"),
    out: Path = typer.Option(..., help="model file to write (.npz)"),
    sources: list[str] = typer.Option(["ddb"], help="sources to count (repeatable)"),
    order: int = typer.Option(8, help="highest n-gram order (≤ 10)"),
    min_count: int = typer.Option(1, help="drop n-grams of order ≥ 3 seen fewer times"),
    split: str = typer.Option("train", help="split to count"),
    backward: bool = typer.Option(False, help="count right to left (texts reversed)"),
) -> None:
    """Count a character n-gram model and save it."""
    started = time.perf_counter()
    model = build_from_prepared(prepared, sources, order, min_count, split, backward)
    size = model.save(out)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{out}: order {order}, min_count {min_count}, {model.meta['characters']:,} characters, "
        f"{sum(model.meta['ngrams']):,} n-grams, {size / 1e6:.1f} MB, "
        f"{time.perf_counter() - started:.1f} s, peak RSS {peak_mb:.0f} MB"
    )


if __name__ == "__main__":
    typer.run(main)
