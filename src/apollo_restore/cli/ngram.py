"""``apollo-restore ngram``: count a character n-gram model from a prepared corpus.

    apollo-restore ngram --prepared data/prepared --source ddb --order 8 --out data/ngram.npz

The counting is :func:`apollo_restore.ngram.build.build_from_prepared`.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

import typer


def ngram_command(
    prepared: Path = typer.Option(..., "--prepared", help="Folder written by `apollo-restore prepare`."),
    out: Path = typer.Option(..., "--out", help="Model file to write (.npz)."),
    source: list[str] = typer.Option(["ddb"], "--source", help="Source(s) to count (repeat)."),
    order: int = typer.Option(8, "--order", min=1, max=10, help="Highest n-gram order (≤ 10)."),
    min_count: int = typer.Option(
        1, "--min-count", min=1, max=2**31 - 1, help="Drop n-grams of order ≥ 3 seen fewer times."
    ),
    split: str = typer.Option("train", "--split", help="Split to count."),
    backward: bool = typer.Option(False, "--backward", help="Count right to left (texts reversed)."),
) -> None:
    """Count a character n-gram model (modified Kneser-Ney) and save it."""
    from apollo_restore.ngram.build import build_from_prepared

    started = time.perf_counter()
    try:
        model = build_from_prepared(prepared, source, order, min_count, split, backward)
    except (FileNotFoundError, ValueError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from err
    size = model.save(out)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    typer.echo(
        f"{out}: order {order}, min_count {min_count}, {model.meta['characters']:,} characters, "
        f"{sum(model.meta['ngrams']):,} n-grams, {size / 1e6:.1f} MB, "
        f"{time.perf_counter() - started:.1f} s, peak RSS {peak_mb:.0f} MB"
    )


def register(app: typer.Typer) -> None:
    app.command("ngram")(ngram_command)
