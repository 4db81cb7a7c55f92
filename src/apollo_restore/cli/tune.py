"""``apollo-restore tune``: fit a model folder's settings on validation gaps and write them into it.

apollo-restore tune --model my-model --prepared data/prepared --force
apollo-restore tune --model my-model --prepared data/prepared --what calibration --per-length 15 --force
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from apollo_restore.cli.common import MAX_SEED, fail, require_extra, threads_option

STEPS = ("weights", "demotions", "calibration")  # apollo_restore.restoration.ranking.order.FITTED_STAGES, without torch
MIN_GAPS = 50  # apollo_restore.tune.run.MIN_GAPS, without importing torch
REAL_LACUNAE = 100  # apollo_restore.tune.run.REAL_LACUNAE


def _steps(value: str) -> list[str]:
    steps = [s.strip() for s in value.split(",") if s.strip()]
    bad = [s for s in steps if s not in STEPS]
    if bad or not steps:
        raise typer.BadParameter(f"{', '.join(bad) or 'nothing'}: choose from {', '.join(STEPS)}", param_hint="--what")
    return steps


def tune_command(
    model: Path = typer.Option(..., "--model", help="Model folder to fit and write into (copy it first to keep it)."),
    prepared: Path = typer.Option(..., "--prepared", help="Prepared corpus; only its validation split is read."),
    what: str = typer.Option(
        ",".join(STEPS),
        "--what",
        help="What to fit, comma-separated: the ranking's stages weights (ensemble member weights and hint "
        "slack), demotions (factors of doubtful readings), calibration. Each step uses the ones before it.",
    ),
    source: list[str] = typer.Option(["ddb"], "--source", help="Source(s) of the validation gaps (repeat)."),
    per_length: int = typer.Option(5, "--per-length", min=1, max=10_000, help="Gaps per letter count 1–20 and source."),
    slack: list[int] = typer.Option(
        [], "--slack", min=0, max=20, help="Hint slack to try with the weights besides the folder's (repeat)."
    ),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Fixes the gaps, their hints and their order."),
    limit: int = typer.Option(None, "--limit", min=1, help="Fit on the first LIMIT gaps of the shuffled set only."),
    plots: Path = typer.Option(
        None, "--plots", help="Folder for the calibration's reliability diagrams (PNG; needs the [train] extra)."
    ),
    force: bool = typer.Option(False, "--force", help="Replace the values the folder already holds."),
    min_gaps: int = typer.Option(
        MIN_GAPS,
        "--min-gaps",
        min=1,
        max=100_000,
        help="Fewest gaps under each hint condition a calibration is fitted on.",
    ),
    real_lacunae: int = typer.Option(
        REAL_LACUNAE,
        "--real-lacunae",
        min=0,
        max=100_000,
        help="Editor supplements of each source's validation documents (each with its exact count, a range and "
        "no count) the calibration of real lacunae is fitted on; 0: the synthetic gaps' calibration serves them.",
    ),
    threads: int = threads_option("Torch threads (default: the cores idle now, at most 2)."),
) -> None:
    """Fit a model folder's ensemble weights, demotions and calibration on VALIDATION gaps of a
    prepared corpus (synthetic gaps of 1–20 letters under exact, range and no hints; for the
    calibration of real lacunae, the editors' supplements of its validation documents) and write
    them into the folder: apollo_restore.json and calibration.json, each replaced whole. A folder
    that already holds what is fitted is refused unless --force is given. Shows progress on a
    terminal; prints what changed and the validation figures before and after."""
    steps = _steps(what)
    if plots is not None:
        require_extra("tune --plots", "matplotlib")  # E606 without [train]: before the fit, not after it
    from apollo_restore.errors import ModelFolderError, RequestError
    from apollo_restore.tune.folder import TuneError
    from apollo_restore.tune.run import tune

    try:
        result = tune(
            model,
            prepared,
            steps,
            dict.fromkeys(source, per_length),
            seed,
            limit,
            slack,
            force,
            plots,
            sys.stderr.isatty(),
            min_gaps,
            real_lacunae,
            threads,
        )
    except (TuneError, ModelFolderError, RequestError, FileNotFoundError, ValueError) as err:
        fail(err)
    typer.echo("\n".join(result.lines()))


def register(app: typer.Typer) -> None:
    app.command("tune")(tune_command)
