"""``apollo-restore train``: FIM training on one device, resumed from the run's checkpoint;
``apollo-restore train-attribution``: the attribution model (dates and places)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from apollo_restore.cli.common import fail, finite, require_extra

#: Most seconds ``--probe`` times one setting (its warm-up and compilation come on top).
MAX_PROBE_SECONDS = 600.0


def train_command(
    config: Path = typer.Option(None, "--config", help="YAML or JSON file of TrainConfig fields."),
    override: list[str] = typer.Argument(None, help="key=value overrides, e.g. steps=2000 size=tiny"),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    probe: float = typer.Option(
        0.0,
        "--probe",
        min=0.0,
        max=MAX_PROBE_SECONDS,
        callback=finite,
        help="Train nothing: time this many seconds (at most 600) of steps per --setting and print tokens/s and MFU.",
    ),
    setting: list[str] = typer.Option(
        None,
        "--setting",
        help='With --probe: one candidate, space-separated key=value overrides ("batch_size=128 grad_accum=2"); '
        "repeat it. Default: micro-batches of 64, 128 and 256 at 256 rows an optimiser step.",
    ),
) -> None:
    """Train or resume a model (every option: apollo_restore.schema.training.TrainConfig and its
    base, RecipeConfig; docs/model-folders.md lists them), or, with --probe, time candidate settings."""
    require_extra("train", "transformers", "tokenizers", "yaml")  # E606 without [train]
    from apollo_restore.config import load_config
    from apollo_restore.errors import FileError
    from apollo_restore.schema.training import SettingError
    from apollo_restore.train.loop import TrainConfig, check_run, train

    try:
        values = load_config(config, override or [], TrainConfig)
    except ValueError as err:  # not a file of options, or not key=value
        raise typer.BadParameter(str(err)) from err
    try:  # every value against its field, the names, and the data, before anything is read
        cfg = TrainConfig.from_dict(values)
        check_run(cfg)
    except (SettingError, FileError) as err:
        fail(err)
    if probe:
        _probe(cfg, probe, setting or [])
        return
    if setting:
        raise typer.BadParameter("--setting is a candidate of --probe SECONDS: give --probe too")
    validate = None
    if cfg.val_gaps:
        from apollo_restore.evaluate.selection import restoration_validator

        validate = restoration_validator(cfg.val_gaps)
    result = train(cfg, progress=not quiet, validate=validate)
    typer.echo(json.dumps({k: result[k] for k in ("step", "tokens", "seconds", "best_val")}))


def _probe(cfg, seconds: float, settings: list[str]) -> None:
    """Print the probe's table (:mod:`apollo_restore.train.probe`) of ``settings`` (default: its
    micro-batches of 64, 128 and 256)."""
    from apollo_restore.schema.training import SettingError
    from apollo_restore.train.probe import DEFAULT_SETTINGS, probe, probe_heading, probe_row, setting_config

    settings = settings or list(DEFAULT_SETTINGS)
    for candidate in settings:  # every one read, and checked against its bounds, before any runs
        try:
            setting_config(cfg, candidate)
        except SettingError as err:
            fail(err)
        except ValueError as err:
            raise typer.BadParameter(f"--setting {candidate!r}: {err}") from err
    typer.echo(probe_heading(cfg, seconds))
    probe(cfg, settings, seconds, on_result=lambda result: typer.echo(probe_row(result)))


def train_attribution_command(
    config: Path = typer.Option(None, "--config", help="YAML or JSON file of AttributionTrainConfig fields."),
    override: list[str] = typer.Argument(None, help="key=value overrides, e.g. out=runs/attribution epochs=2"),
    formulae_only: bool = typer.Option(
        False, "--formulae-only", help="Fit only the letter model and the formula reader anew into the folder `out`."
    ),
    districts_only: bool = typer.Option(
        False, "--districts-only", help="Write only the places' districts (HGV's hierarchy) into `out`'s config."
    ),
) -> None:
    """Train the attribution model (dates and places) and write its folder: fit on the prepared
    corpus's train split, choose the epoch and calibrate on its validation split, never the test
    split (every option: apollo_restore.schema.training.AttributionTrainConfig; docs/model-folders.md).
    Seeded: the same inputs give the same folder."""
    require_extra("train-attribution", "yaml")  # E606 without [train]
    from apollo_restore.attribution.train import refit_districts, refit_formulae, run_config
    from apollo_restore.config import load_config
    from apollo_restore.errors import FileError
    from apollo_restore.schema.training import AttributionTrainConfig, SettingError

    try:
        values = load_config(config, override or [], AttributionTrainConfig)
    except ValueError as err:  # not a file of options, or not key=value
        raise typer.BadParameter(str(err)) from err
    try:
        cfg = AttributionTrainConfig.from_dict(values)
        if districts_only:
            placed = refit_districts(Path(cfg.out), Path(cfg.corpora))
            typer.echo(json.dumps({"places": len(placed), "districts": len(set(placed))}))
            return
        if formulae_only:
            found = refit_formulae(Path(cfg.out), Path(cfg.prepared), Path(cfg.corpora), cfg.seed)
            typer.echo(json.dumps({k: found[k] for k in ("prior", "calibration")} | {"eras": len(found["eras"])}))
            return
        written = run_config(cfg)
    except (SettingError, FileError) as err:
        fail(err)
    shown = {k: written[k] for k in ("buckets", "dim", "bands", "temperature", "trained")}
    typer.echo(json.dumps(shown, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    app.command("train")(train_command)
    app.command("train-attribution")(train_attribution_command)
