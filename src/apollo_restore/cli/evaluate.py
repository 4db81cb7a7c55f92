"""``apollo-restore evaluate`` and ``apollo-restore gaps``.

    apollo-restore gaps --prepared data/prepared --split test --source ddb --per-length 50 \\
        --true-lacunae 500 --out gaps/ddb-test.jsonl --cullhed-out gaps/ddb-test.cullhed.jsonl
    apollo-restore evaluate --prepared data/prepared --split test --source ddb --per-length 50 \\
        --true-lacunae 500 --out reports/ddb-test
    apollo-restore evaluate --gaps gaps/ddb-test.jsonl --out reports/ddb-test \\
        --peer cullhed=cullhed-preds.jsonl
"""

from __future__ import annotations

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
from apollo_restore.errors import FileError
from apollo_restore.schema.search import RestoreConfig

_CONDITIONS = "exact,range,wrong10,wrong50,wrong100,none"
#: Most gaps (or windows) one option may ask per source, length or period.
MAX_GAPS = 1_000_000
PER_LENGTH_OPTION = typer.Option(50, "--per-length", min=0, max=MAX_GAPS, help="Synthetic gaps per letter count 1–20.")
SEED_OPTION = typer.Option(0, "--seed", min=0, max=MAX_SEED)
CONTEXT_OPTION = setting_option(RestoreConfig, "context_chars", "--context-chars", help="Context given to the model")


def _conditions(value: str) -> list[str]:
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
    task: str = typer.Option(
        "restoration",
        "--task",
        help="restoration (gaps, the default) or attribution (dates and places of --prepared's --split, "
        "labelled from --corpora; --model: the attribution folder).",
    ),
    corpora: Path = typer.Option(
        None, "--corpora", help="With --task attribution: the folder holding hgv-places-dates.tsv and inscriptions/."
    ),
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
    from apollo_restore.evaluate.peers import parse_peer_arg
    from apollo_restore.evaluate.run import run_evaluation
    from apollo_restore.schema.evaluation import Evaluation

    if task not in ("restoration", "attribution"):
        raise typer.BadParameter(f"{task!r}: choose restoration or attribution", param_hint="--task")
    if task == "attribution":
        _evaluate_attribution(out, prepared, corpora, split, model)
        return
    if gaps is None and prepared is None:
        raise typer.BadParameter("give --gaps FILE or --prepared DIR with --source", param_hint="--gaps")
    if bpc_mode not in ("prefix", "middle"):
        raise typer.BadParameter(f"{bpc_mode!r}: choose prefix or middle", param_hint="--bpc-mode")
    if gaps is None and not source:
        raise typer.BadParameter("give at least one --source", param_hint="--source")
    try:
        peers = dict(parse_peer_arg(arg) for arg in peer or [])
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--peer") from err
    asked = Evaluation(
        out=out, gaps=gaps, prepared=prepared, split=split, sources=tuple(source or ()), per_length=per_length,
        conditions=tuple(_conditions(conditions)) if gaps is None else (), true_lacunae=true_lacunae, seed=seed,
        context_chars=context_chars, uncertain_excluded=uncertain_excluded, model=model, k=k,
        exact_length=exact_length, predictions=predictions, peers=peers, ithaca_ids=ithaca_ids,
        bpc_windows=bpc_windows, bpc_mode=bpc_mode, threads=threads, device=device, batch=batch,
        neural_only=neural_only, workers=workers, allow_missing=allow_missing,
    )  # fmt: skip
    try:
        done = run_evaluation(asked, note=lambda line: typer.echo(f"note: {line}", err=True))
    except (FileNotFoundError, ValueError) as err:  # numbered: E205, E211, E212, E3xx, E5xx; a source without documents
        fail(err)
    typer.echo(f"{done.metrics['gaps']} gaps scored; report in {out / 'report.md'}")
    if done.missing:
        typer.echo(
            f"error: {len(done.missing):,} of the {done.total:,} gaps have no prediction in {predictions} "
            f"(the first: {done.missing[0]!r}); they were scored as wrong (--allow-missing)",
            err=True,
        )
        raise typer.Exit(1)


def _evaluate_attribution(
    out: Path, prepared: Path | None, corpora: Path | None, split: str, model: Path | None
) -> None:
    """``evaluate --task attribution``: the attribution model's report of ``split`` in ``out``."""
    from apollo_restore.attribution.evaluation import evaluate_split
    from apollo_restore.attribution.labels import HGV_FILE
    from apollo_restore.data.table import DOCUMENTS_FILE

    if prepared is None or corpora is None:
        raise typer.BadParameter("--task attribution takes --prepared DIR and --corpora DIR", param_hint="--corpora")
    if split not in ("validation", "test"):
        raise typer.BadParameter(f"{split!r}: choose validation or test", param_hint="--split")
    for folder, name in ((prepared, DOCUMENTS_FILE), (corpora, HGV_FILE)):
        if not (folder / name).is_file():
            fail(FileError("E202", str(folder / name), reason="no such file"))
    from apollo_restore.errors import AttributionError

    try:
        done = evaluate_split(prepared, corpora, split, model)
        done.write(out)
    except (AttributionError, OSError) as err:
        fail(err if isinstance(err, AttributionError) else FileError("E205", str(out), reason=str(err)))
    typer.echo(done.markdown())
    typer.echo(f"{done.documents} documents scored; report in {out / 'report.md'}")


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate_command)
    app.command("gaps")(gaps_command)
