"""Scale-out commands: ``shards``, ``finetune``, ``train-fsdp`` and ``consolidate``.

    apollo-restore shards --prepared data/prepared --out data/shards/mistral \\
        --tokenizer /models/Mistral-Small-24B-Base-2503 --rows 160000 --block-size 4096
    apollo-restore finetune --model /models/Mistral-Small-24B-Base-2503 \\
        --shards data/shards/mistral --out runs/lora lora=true steps=2000 bf16=true
    torchrun --nproc_per_node 8 -m apollo_restore train-fsdp --config configs/large_fsdp.yaml
    apollo-restore consolidate runs/large/checkpoints/latest runs/large/model --dtype bfloat16

The modules behind them (:mod:`apollo_restore.scale`) import torch, transformers and peft, so
each command imports them only when it runs: ``apollo-restore --help`` stays fast. Each needs the
``[train]`` extra (LoRA: ``[scale]``) and says so (``E606``, ``E607``) when it is not installed.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import typer

from apollo_restore.cli.common import MAX_SEED, SCALE_MODULES, fail, finite, require_extra


def shards_command(
    prepared: Path = typer.Option(..., "--prepared", help="Folder written by `apollo-restore prepare`."),
    out: Path = typer.Option(..., "--out", help="Shard folder to write."),
    tokenizer: str = typer.Option("char", "--tokenizer", help='"char" or a local tokenizer/model folder.'),
    rows: int = typer.Option(
        ..., "--rows", min=1, max=10**9, help="Packed rows in all (steps × global batch for one pass)."
    ),
    block_size: int = typer.Option(4096, "--block-size", min=16, max=2**20, help="Tokens per row."),
    rows_per_shard: int = typer.Option(4096, "--rows-per-shard", min=1, max=10**7, help="Rows per Parquet file."),
    split: str = typer.Option("train", "--split", help="Split of the prepared documents."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED),
    weight: list[str] = typer.Option(None, "--weight", metavar="SOURCE=W", help="Source weight, e.g. ddb=3 (repeat)."),
    loss: str = typer.Option("middle", "--loss", help="middle (fine-tuning) or all (FIM pretraining)."),
    text_column: str = typer.Option("text", "--text-column", help="text or text_uncertain_excluded."),
) -> None:
    """Export packed FIM rows of a prepared split as streaming Parquet shards (tokenised once)."""
    require_extra("shards", "transformers", "tokenizers")  # E606 without [train]
    from apollo_restore.fim.examples import FimConfig
    from apollo_restore.scale.shards import export_shards
    from apollo_restore.schema.training import SOURCE_WEIGHTS

    weights = dict(SOURCE_WEIGHTS)
    for item in weight or []:
        source, _, value = item.partition("=")
        try:
            weights[source] = finite(float(value))
        except ValueError:
            raise typer.BadParameter(f"{item!r} is not SOURCE=WEIGHT", param_hint="--weight") from None
        if weights[source] < 0:
            raise typer.BadParameter(f"{item!r}: a weight is not negative", param_hint="--weight")
    if text_column not in ("text", "text_uncertain_excluded"):
        raise typer.BadParameter("choose text or text_uncertain_excluded", param_hint="--text-column")
    try:
        fim = FimConfig(loss=loss)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--loss") from err
    logging.basicConfig(level=logging.INFO, format="%(message)s", force=True)
    manifest = export_shards(
        prepared,
        out,
        tokenizer,
        rows,
        block_size,
        rows_per_shard,
        split=split,
        seed=seed,
        weights=weights,
        fim=fim,
        text_column=text_column,
    )
    typer.echo(
        f"{manifest['rows']} rows, {manifest['tokens']} tokens ({manifest['labelled_tokens']} labelled) "
        f"in {len(manifest['shards'])} shards → {out}"
    )


def finetune_command(
    override: list[str] = typer.Argument(None, help="key=value overrides of FinetuneConfig, e.g. lora=true steps=2000"),
    config: Path = typer.Option(None, "--config", help="YAML or JSON file of FinetuneConfig fields."),
    model: str = typer.Option(None, "--model", help="Local Hugging Face model folder."),
    shards: str = typer.Option(None, "--shards", help="Shard folder (apollo-restore shards)."),
    out: str = typer.Option(None, "--out", help="Run folder."),
) -> None:
    """Fine-tune a Hugging Face causal LM on FIM shards in one process: full or LoRA."""
    require_extra("finetune", "transformers", "tokenizers", "yaml")  # E606 without [train]
    from apollo_restore.config import load_config
    from apollo_restore.scale.finetune import FinetuneConfig, finetune
    from apollo_restore.schema.training import SettingError

    try:
        values = load_config(config, override or [], FinetuneConfig)
        values.update({k: v for k, v in (("model", model), ("shards", shards), ("out", out)) if v})
        cfg = FinetuneConfig.from_dict(values)
    except SettingError as err:
        fail(err)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from err
    if cfg.lora:
        require_extra("finetune lora=true", *SCALE_MODULES)  # E607 without [scale]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S", force=True)
    record = finetune(cfg)
    saved = record.get("model_dir") or Path(cfg.out) / "adapter"
    typer.echo(f"{record['step']} steps, final loss {record['losses'][-1]:.4f}; saved {saved}")


def train_fsdp_command(
    override: list[str] = typer.Argument(None, help="key=value overrides of FsdpConfig, e.g. steps=40"),
    config: Path = typer.Option(None, "--config", help="YAML file of FsdpConfig options."),
) -> None:
    """Distributed FIM fine-tuning with FSDP2, one process per device (torchrun -m apollo_restore train-fsdp)."""
    require_extra("train-fsdp", "transformers", "tokenizers", "yaml")  # E606 without [train]
    import torch.distributed as dist

    from apollo_restore.config import load_config
    from apollo_restore.scale.train_fsdp import FsdpConfig, FsdpRecipe
    from apollo_restore.schema.training import SettingError

    try:  # fails before any process group is started
        cfg = FsdpConfig.from_dict(load_config(config, override or [], FsdpConfig))
    except SettingError as err:
        fail(err)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from err
    rank = int(os.environ.get("RANK", 0))
    logging.basicConfig(
        level=logging.INFO if rank == 0 else logging.WARNING,
        format=f"[rank {rank}] %(asctime)s %(message)s",
        datefmt="%H:%M:%S",
        force=True,
    )
    try:
        FsdpRecipe(cfg).train()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def consolidate_command(
    checkpoint: Path = typer.Argument(..., help="A step-* folder, a run's checkpoints/ folder or its latest file."),
    out: Path = typer.Argument(..., help="Model folder to write."),
    dtype: str = typer.Option("bfloat16", "--dtype", help="float32, bfloat16 or float16."),
    max_shard_gb: float = typer.Option(
        0.0, "--max-shard-gb", min=0.0, callback=finite, help="Split the weights into files of at most this size."
    ),
) -> None:
    """Turn a sharded FSDP checkpoint into one safetensors model folder (one process, no GPU)."""
    require_extra("consolidate", "transformers", "tokenizers")  # E606 without [train]
    from apollo_restore.scale.fsdp import consolidate
    from apollo_restore.scale.hf_model import DTYPES

    if dtype not in DTYPES:
        raise typer.BadParameter(f"choose one of {', '.join(sorted(DTYPES))}", param_hint="--dtype")
    typer.echo(str(consolidate(checkpoint, out, DTYPES[dtype], max_shard_bytes=int(max_shard_gb * 2**30) or None)))


def register(app: typer.Typer) -> None:
    app.command("shards")(shards_command)
    app.command("finetune")(finetune_command)
    app.command("train-fsdp")(train_fsdp_command)
    app.command("consolidate")(consolidate_command)
