"""``apollo-restore evaluate`` and ``apollo-restore gaps``.

    apollo-restore gaps --prepared data/prepared --split test --source ddb --per-length 50 \\
        --true-lacunae 500 --out gaps/ddb-test.jsonl --cullhed-out gaps/ddb-test.cullhed.jsonl
    apollo-restore evaluate --prepared data/prepared --split test --source ddb --per-length 50 \\
        --true-lacunae 500 --out reports/ddb-test
    apollo-restore evaluate --gaps gaps/ddb-test.jsonl --out reports/ddb-test \\
        --peer cullhed=cullhed-preds.jsonl
"""

from __future__ import annotations

import importlib.util
import os
from functools import partial
from pathlib import Path

import typer

from apollo_restore.cli.common import MAX_SEED, fail, setting_option, threads_option
from apollo_restore.cli.restore import (
    BATCH_OPTION,
    DEVICE_OPTION,
    EXACT_LENGTH_OPTION,
    K_OPTION,
    NEURAL_ONLY_OPTION,
    WORKERS_OPTION,
)
from apollo_restore.errors import FileError, FormatError, RequestError
from apollo_restore.schema.search import RestoreConfig

_CONDITIONS = "exact,range,wrong10,wrong50,wrong100,none"
#: Most gaps (or windows) one option may ask per source, length or period.
MAX_GAPS = 1_000_000
PER_LENGTH_OPTION = typer.Option(50, "--per-length", min=0, max=MAX_GAPS, help="Synthetic gaps per letter count 1–20.")
SEED_OPTION = typer.Option(0, "--seed", min=0, max=MAX_SEED)
CONTEXT_OPTION = setting_option(RestoreConfig, "context_chars", "--context-chars", help="Context given to the model")
#: The report's note where bits per character are not measured for want of the ``[train]`` extra
#: (the Hugging Face model runs them); the rest of the report is written.
NO_BPC = "not measured: transformers is not installed (pip install 'apollo-restore[train]')"


def _conditions(value: str) -> list[str]:
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.evaluate.gapsets import CONDITIONS

    conds = [c.strip() for c in value.split(",") if c.strip()]
    bad = [c for c in conds if c not in CONDITIONS]
    if bad:
        raise typer.BadParameter(
            f"unknown condition(s) {', '.join(bad)}; choose from {', '.join(CONDITIONS)}", param_hint="--conditions"
        )
    return conds


def _build(prepared: Path, split: str, sources: list[str], per_length: int, conditions: str, true_lacunae: int,
           seed: int, context_chars: int, uncertain_excluded: bool):  # fmt: skip
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.evaluate.gapsets import build_from_prepared

    if not sources:
        raise typer.BadParameter("give at least one --source", param_hint="--source")
    conds = _conditions(conditions)
    excluded = ["exact"] if uncertain_excluded and "exact" in conds else []
    try:
        return build_from_prepared(
            prepared, split, sources, per_length, conds, true_lacunae, seed, context_chars, excluded
        )
    except (FileNotFoundError, ValueError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from err


def gaps_command(
    prepared: Path = typer.Option(..., "--prepared", help="Prepared corpus folder (documents.parquet)."),
    split: str = typer.Option("test", "--split", help="validation or test."),
    source: list[str] = typer.Option(None, "--source", help="Source(s) to sample from (repeat)."),
    per_length: int = PER_LENGTH_OPTION,
    conditions: str = typer.Option(_CONDITIONS, "--conditions", help="Hint conditions, comma-separated."),
    true_lacunae: int = typer.Option(
        0, "--true-lacunae", min=0, max=MAX_GAPS, help="Editor-supplied spans per source (silver gaps)."
    ),
    seed: int = SEED_OPTION,
    context_chars: int = CONTEXT_OPTION,
    uncertain_excluded: bool = typer.Option(
        True, help="Also write exact-hint gaps with uncertain-excluded context (:ue)."
    ),
    out: Path = typer.Option(..., "--out", help="Gap-set JSONL to write."),
    cullhed_out: Path = typer.Option(None, "--cullhed-out", help="Also write the gaps as Cullhed chat JSONL."),
    ithaca_out: Path = typer.Option(None, "--ithaca-out", help="Also write Ithaca inputs ('?' placeholders) as JSONL."),
) -> None:
    """Build synthetic and true-lacuna gap sets from a prepared split and write them."""
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.data.formats import write_gapset
    from apollo_restore.data.outputs import check_writable
    from apollo_restore.evaluate.peers import export_cullhed, write_ithaca_inputs

    for path in (p for p in (out, cullhed_out, ithaca_out) if p):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            check_writable(path)
        except OSError as err:
            fail(FileError("E205", str(path), reason=f"cannot make the folder {path.parent}: {err.strerror or err}"))
        except FileError as err:
            fail(err)
    gaps = _build(
        prepared, split, source, per_length, conditions, true_lacunae, seed, context_chars, uncertain_excluded
    )
    typer.echo(f"wrote {write_gapset(out, gaps)} gaps to {out}")
    if cullhed_out:
        typer.echo(f"wrote {export_cullhed(cullhed_out, gaps)} Cullhed chat lines to {cullhed_out}")
    if ithaca_out:
        typer.echo(f"wrote {write_ithaca_inputs(ithaca_out, gaps)} Ithaca inputs to {ithaca_out}")


def evaluate_command(
    out: Path = typer.Option(..., "--out", help="Report folder to write."),
    gaps: Path = typer.Option(
        None,
        "--gaps",
        exists=True,
        dir_okay=False,
        help="Gap set (ours or Cullhed chat JSONL) instead of building one.",
    ),
    prepared: Path = typer.Option(
        None, "--prepared", help="Prepared corpus: gaps are built from it (without --gaps) and bpc measured on it."
    ),
    split: str = typer.Option("test", "--split"),
    source: list[str] = typer.Option(None, "--source", help="Source(s) (repeat)."),
    per_length: int = PER_LENGTH_OPTION,
    conditions: str = typer.Option(_CONDITIONS, "--conditions", help="Hint conditions, comma-separated."),
    true_lacunae: int = typer.Option(0, "--true-lacunae", min=0, max=MAX_GAPS, help="Silver gaps per source."),
    seed: int = SEED_OPTION,
    context_chars: int = CONTEXT_OPTION,
    uncertain_excluded: bool = typer.Option(True, help="Also ask exact-hint gaps with uncertain-excluded context."),
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    k: int = K_OPTION,
    exact_length: bool = EXACT_LENGTH_OPTION,
    predictions: Path = typer.Option(
        None,
        "--predictions",
        exists=True,
        dir_okay=False,
        help="Score these predictions (our JSONL) instead of running a model.",
    ),
    peer: list[str] = typer.Option(
        None, "--peer", help="NAME=FILE peer predictions (ours, Cullhed's or Ithaca's format), repeatable."
    ),
    ithaca_ids: Path = typer.Option(
        None,
        "--ithaca-ids",
        exists=True,
        dir_okay=False,
        help="Ithaca input JSONL we exported: gives the gap id of each Ithaca prediction line.",
    ),
    bpc_windows: int = typer.Option(
        64,
        "--bpc-windows",
        min=0,
        max=MAX_GAPS,
        help="Held-out windows per source and period for bits per character (0: skip).",
    ),
    bpc_mode: str = typer.Option("prefix", "--bpc-mode", help="prefix (every-position LM) or middle."),
    threads: int = threads_option("Torch threads (default: the cores idle now, at most 2; 1 each with --workers)."),
    device: str = DEVICE_OPTION,
    batch: int | None = BATCH_OPTION,
    neural_only: bool = NEURAL_ONLY_OPTION,
    workers: int = WORKERS_OPTION,
    allow_missing: bool = typer.Option(
        False,
        "--allow-missing",
        help="Score the gaps --predictions has no line for as wrong (their count in the report, exit status 1) "
        "instead of refusing them (E211).",
    ),
) -> None:
    """Evaluate a model on a prepared split or a gap-set file; write report.md, metrics.json, plots.

    Scoring a --predictions file, every gap must have its prediction (E211 names how many have
    none; --allow-missing scores them as wrong, says so in the report and exits with status 1)
    and every prediction its gap (E212 names how many have none);
    every prediction is checked (probabilities from 0 to 1, milliseconds a number).
    """
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.data.formats import read_predictions
    from apollo_restore.data.table import load_documents
    from apollo_restore.evaluate.gapsets import load_gaps
    from apollo_restore.evaluate.peers import load_peer, parse_peer_arg, read_ithaca_input_ids
    from apollo_restore.evaluate.pipeline import evaluate_to_folder
    from apollo_restore.evaluate.report import NO_PLOTS, can_plot
    from apollo_restore.restoration.request import DEFAULT_REQUEST_LIMITS, check_k

    if gaps is None and prepared is None:
        raise typer.BadParameter("give --gaps FILE or --prepared DIR with --source", param_hint="--gaps")
    if bpc_mode not in ("prefix", "middle"):
        raise typer.BadParameter(f"{bpc_mode!r}: choose prefix or middle", param_hint="--bpc-mode")
    try:
        check_k(k, DEFAULT_REQUEST_LIMITS)
        _check_report_folder(out)
    except (RequestError, FileError) as err:
        fail(err)
    try:
        gap_set = (
            load_gaps(gaps)
            if gaps
            else _build(
                prepared, split, source, per_length, conditions, true_lacunae, seed, context_chars, uncertain_excluded
            )
        )
        peers = {}
        for arg in peer or []:
            try:
                name, path = parse_peer_arg(arg)
            except ValueError as err:
                raise typer.BadParameter(str(err), param_hint="--peer") from err
            peers[name] = load_peer(path, gap_set, read_ithaca_input_ids(ithaca_ids) if ithaca_ids else None)
        ours = read_predictions(predictions) if predictions else None
        _check_unknown(gap_set, ours, predictions, gaps)
        missing = _missing(gap_set, ours, predictions, gaps, allow_missing)
    except (FileError, FormatError) as err:
        fail(err)
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.restoration.config import batch_size

    restorer, name, pool = None, "predictions", None
    if not predictions:
        # the model's imports (torch) only when a model restores: scoring a predictions file needs none
        from apollo_restore.restoration.load import load_restorer
        from apollo_restore.restoration.predict import Workers
        from apollo_restore.restoration.threads import use_threads

        options = {
            "config": RestoreConfig(k=k, context_chars=context_chars, exact_length=exact_length),
            "neural_only": neural_only, "device": device,
        }  # fmt: skip
        try:
            # as `predict` chooses: torch's own default (every core) spins on a busy machine, 3–7×
            # slower per gap (docs/notes/2026-11-27-cpu-speed.md)
            threads = use_threads(threads if threads or workers == 1 else 1)
            restorer = load_restorer(model, **options)
        except (FileNotFoundError, ValueError) as err:  # E501–E513: a broken folder, or a GPU where there is none
            fail(err)
        name = restorer.name
        pool = Workers(partial(load_restorer, model, **options), workers, threads) if workers > 1 else None
    bpc_table = load_documents(prepared, split, source or None) if prepared and restorer is not None else None
    gap_set_name = str(gaps) if gaps else f"{prepared} {split} {','.join(source)} per-length {per_length} seed {seed}"
    meta = {"gap_set": gap_set_name, "exact_length": exact_length, "context_chars": context_chars}
    # the package alone (no [train] extra): the report without what needs it, said now and in its header
    if bpc_table is not None and bpc_windows > 0 and importlib.util.find_spec("transformers") is None:
        bpc_table, meta["bpc_skipped"] = None, NO_BPC
        typer.echo(f"note: bits per character {NO_BPC}", err=True)
    if not can_plot():
        typer.echo(f"note: plots {NO_PLOTS}", err=True)
    if missing:
        meta["MISSING PREDICTIONS"] = f"{len(missing):,} of the {len(gap_set):,} gaps have none: scored as wrong"
    metrics = evaluate_to_folder(
        out,
        restorer,
        gap_set,
        k,
        ours,
        peers,
        bpc_table,
        bpc_windows,
        bpc_mode,
        name,
        meta,
        seed=seed,
        batch=batch_size(batch, device),
        workers=pool,
    )
    typer.echo(f"{metrics['gaps']} gaps scored; report in {out / 'report.md'}")
    if missing:
        typer.echo(
            f"error: {len(missing):,} of the {len(gap_set):,} gaps have no prediction in {predictions} "
            f"(the first: {missing[0]!r}); they were scored as wrong (--allow-missing)",
            err=True,
        )
        raise typer.Exit(1)


def _check_report_folder(out: Path) -> None:
    """``--out`` names a folder that is there or can be made: not a file, nor inside one, its
    nearest existing folder writable.

    Raises:
        FileError: ``E205`` naming the path.
    """
    if out.exists() and not out.is_dir():
        raise FileError("E205", str(out), reason="it is a file; --out names the report folder to write")
    there = next((p for p in (out, *out.parents) if p.exists()), Path("."))
    if not there.is_dir():
        raise FileError("E205", str(out), reason=f"{there} is a file, not a folder")
    if there != out and not os.access(there, os.W_OK | os.X_OK):
        raise FileError("E205", str(out), reason=f"the folder {there} is not writable")


def _check_unknown(gap_set, ours, predictions: Path | None, gaps: Path | None) -> None:
    """Refuse a ``--predictions`` file with lines for ids that are no gap of ``gap_set``: scored
    against nothing, and their milliseconds folded into the report's time a gap.

    Raises:
        FileError: ``E212`` naming how many such ids and the first.
    """
    if ours is None:
        return
    ids = {gap.id for gap in gap_set}
    unknown = [p.id for p in ours if p.id not in ids]
    if unknown:
        where = str(gaps) if gaps else "the gap set built"
        raise FileError("E212", str(predictions), unknown=len(unknown), gapset=where, first=unknown[0])


def _missing(gap_set, ours, predictions: Path | None, gaps: Path | None, allow_missing: bool) -> list[str]:
    """The ids of the gaps ``ours`` (the ``--predictions`` read) has no prediction for.

    Raises:
        FileError: ``E211`` some are missing and ``allow_missing`` is not given.
    """
    if ours is None:
        return []
    have = {p.id for p in ours}
    missing = [gap.id for gap in gap_set if gap.id not in have]
    if missing and not allow_missing:
        where = str(gaps) if gaps else "the gap set built"
        raise FileError("E211", str(predictions), missing=len(missing), total=len(gap_set), gapset=where,
                        first=missing[0])  # fmt: skip
    return missing


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate_command)
    app.command("gaps")(gaps_command)
