"""``apollo-restore train``: FIM training on one device; resumes from the run's checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def train_command(
    config: Path = typer.Option(None, "--config", help="YAML or JSON file of TrainConfig fields."),
    override: list[str] = typer.Argument(None, help="key=value overrides, e.g. steps=2000 size=tiny"),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """Train or resume a model (every option: apollo_restore.train.loop.TrainConfig and its base,
    apollo_restore.train.recipe.RecipeConfig)."""
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.config import load_config
    from apollo_restore.train.loop import TrainConfig, train

    try:
        cfg = TrainConfig.from_dict(load_config(config, override or [], TrainConfig))
    except ValueError as err:
        raise typer.BadParameter(str(err)) from err
    validate = None
    if cfg.val_gaps:
        # imported here, not at the top, to keep `apollo-restore --help` fast
        from apollo_restore.evaluate.selection import restoration_validator

        validate = restoration_validator(cfg.val_gaps)
    result = train(cfg, progress=not quiet, validate=validate)
    typer.echo(json.dumps({k: result[k] for k in ("step", "tokens", "seconds", "best_val")}))


def register(app: typer.Typer) -> None:
    app.command("train")(train_command)
