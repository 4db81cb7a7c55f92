"""Distributed FIM fine-tuning of any Hugging Face causal LM with FSDP2, under torchrun.

    torchrun --nproc_per_node 8 -m apollo_restore train-fsdp --config configs/large_fsdp.yaml
    torchrun --nproc_per_node 2 -m apollo_restore train-fsdp --config configs/tiny_fsdp.yaml steps=40

Multi-node: the same command on every node with ``--nnodes N --rdzv-backend c10d
--rdzv-endpoint HOST:29500`` (see ``scripts/slurm/train_fsdp.sbatch``). On CPU the process
group is gloo, on GPU NCCL, one GPU per process.

Recipe (paper App. G): the shared optimiser step (:func:`~apollo_restore.train.step.train_step`:
AdamW (0.9, 0.95), ε 1e-8, weight decay 0.1 on matrices, global-norm clipping, gradient
accumulation), linear warmup then cosine to ``min_lr``, fp32 master weights with bf16 compute,
activation checkpointing, FSDP2 per decoder layer (HSDP with ``shard_size``), data from
pre-tokenised Parquet shards (:mod:`apollo_restore.scale.shards`), each rank its own rows.
Rank 0 logs and writes ``metrics.jsonl`` (:mod:`apollo_restore.train.metrics`). Sharded DCP
checkpoints every ``checkpoint_steps`` steps and at the end; a re-launched run resumes from
``out/checkpoints/latest`` (model, optimiser, step, data position). At the end rank 0
consolidates the last checkpoint into ``out/model`` (``config.json``, ``model.safetensors``,
tokenizer), which ``transformers``, vLLM and — for character-tokenizer models —
:class:`~apollo_restore.restoration.members.neural.NeuralMember` load.

The single-process recipe is :mod:`apollo_restore.scale.finetune` (LoRA lives there).

Trade-offs: every rank reads the full model from the folder before sharding, in ``load_dtype``
(CPU memory per node while loading = local ranks × model size: 8 × 48 GB for 24B in bf16;
load-on-rank-0-and-broadcast from the meta device is not implemented); the loss is
averaged per rank, then gradients across ranks, so rows with more labelled tokens weigh no more.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from pathlib import Path
from typing import Any, ClassVar, Literal

import torch
import torch.distributed as dist

from apollo_restore.scale import fsdp
from apollo_restore.scale.hf_model import (
    DTYPE_NAMES,
    DTYPES,
    HfRecipeConfig,
    enable_activation_checkpointing,
    load_causal_lm,
    shard_tokenizer,
)
from apollo_restore.scale.shards import ShardLoader, ShardReader
from apollo_restore.schema.training import FLAG, LR, MIN_LR, PATH, STEPS, WARMUP, WORKERS
from apollo_restore.train.metrics import METRICS_FILE, MetricsLog, logs_at, train_row
from apollo_restore.train.schedule import lr_at
from apollo_restore.train.step import make_optimizer, train_step, validation_loss

log = logging.getLogger("apollo_restore.train_fsdp")

MODEL_DIR = "model"


class FsdpConfig(HfRecipeConfig):
    """Options of a distributed run; saved in every checkpoint. Those of
    :class:`~apollo_restore.scale.hf_model.HfRecipeConfig` (``out``, ``steps``, ``lr``,
    ``min_lr``, ``warmup``, ``num_workers`` and ``activation_checkpointing`` defaults re-stated
    here; ``batch_size`` is per rank: global batch = ``batch_size × grad_accum × world_size``
    rows; ``bf16`` is bf16 compute over fp32 master weights, false on CPU gloo) and

    Attributes:
        val_shards: optional validation shard folder.
        load_dtype: dtype the weights are read in before sharding (``bfloat16`` halves the CPU
            memory every rank needs while loading; the shards are then upcast to fp32 masters).
        shard_size: 0 = shard over all ranks (FSDP); k = shard within groups of k, replicate
            across groups (HSDP).
        reshard_after_forward: free each layer's gathered weights after its forward.
        checkpoint_steps: steps between sharded checkpoints; keep_checkpoints: how many kept.
        eval_every, eval_rows: validation every so many steps on so many rows per rank.
        consolidate: write ``out/model`` from the last checkpoint at the end (rank 0).
        consolidate_dtype: dtype of the consolidated weights.
    """

    command: ClassVar[str] = "train-fsdp"

    out: PATH = "runs/fsdp"
    steps: STEPS = 10000
    lr: LR = 1e-5
    min_lr: MIN_LR = 1e-7
    warmup: WARMUP = 1500
    num_workers: WORKERS = 2
    activation_checkpointing: FLAG = True
    val_shards: str | None = None
    load_dtype: Literal[DTYPE_NAMES] = "bfloat16"
    shard_size: int = 0
    reshard_after_forward: bool = True
    checkpoint_steps: int = 2000
    keep_checkpoints: int = 2
    eval_every: int = 500
    eval_rows: int = 64
    consolidate: bool = True
    consolidate_dtype: Literal[DTYPE_NAMES] = "bfloat16"


class FsdpRecipe:
    """Set up once (model, optimiser, data, resume), then :meth:`train`."""

    def __init__(self, cfg: FsdpConfig):
        self.cfg = cfg
        self.env = fsdp.init_distributed()
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        self.out = Path(cfg.out)
        if self.env.is_main:
            self.out.mkdir(parents=True, exist_ok=True)
        self._setup_model()
        self._setup_optimizer()
        self._setup_data()
        self.trainer: dict[str, Any] = {"step": 0, "rows": 0, "tokens": 0, "seconds": 0.0, "config": cfg.model_dump()}
        resume = fsdp.latest_checkpoint(self.out)
        if resume is not None:
            saved = fsdp.load_sharded(resume, self.model, self.optimizer)
            self.trainer.update({k: saved[k] for k in ("step", "rows", "tokens", "seconds")})
            self.loader.load_state_dict({"rows": saved["rows"]})
            log.info("resumed from %s at step %d", resume, self.trainer["step"])
        self.metrics = MetricsLog(self.out / METRICS_FILE, self.trainer["step"]) if self.env.is_main else None

    def _setup_model(self) -> None:
        self.tokenizer, self.fim, self.manifest = shard_tokenizer(Path(self.cfg.shards))
        model = load_causal_lm(self.cfg.model, self.tokenizer, DTYPES[self.cfg.load_dtype])
        if self.cfg.activation_checkpointing:
            enable_activation_checkpointing(model)
        model.config.use_cache = False
        self.mesh = fsdp.build_mesh(self.env, self.cfg.shard_size)
        self.model = fsdp.shard_model(model, self.mesh, self.cfg.bf16, self.cfg.reshard_after_forward)
        self.model.to(torch.float32)  # fp32 master weights, cast shard by shard (after sharding: less memory)
        self.model.train()
        n = sum(p.numel() for p in self.model.parameters())
        log.info("model %s: %.1fM parameters, sharded over %d ranks", self.cfg.model, n / 1e6, self.env.world_size)

    def _setup_optimizer(self) -> None:
        self.optimizer = make_optimizer(self.model, self.cfg.lr, self.cfg.weight_decay)

    def _setup_data(self) -> None:
        cfg, env = self.cfg, self.env
        reader = ShardReader(Path(cfg.shards), env.rank, env.world_size, cfg.batch_size, epochs=None)
        self.loader = ShardLoader(reader, num_workers=cfg.num_workers)
        needed = cfg.steps * cfg.grad_accum * cfg.batch_size
        if needed > reader.rows_per_rank and env.is_main:
            log.warning(
                "%d rows per rank for %d needed: the shards will repeat %.1f times",
                reader.rows_per_rank,
                needed,
                needed / reader.rows_per_rank,
            )
        self.val_reader = (
            ShardReader(Path(cfg.val_shards), env.rank, env.world_size, cfg.batch_size, epochs=1)
            if cfg.val_shards
            else None
        )

    def _all_mean(self, value: float) -> float:
        tensor = torch.tensor([value], dtype=torch.float64, device=self.env.device)
        dist.all_reduce(tensor)
        return float(tensor.item()) / self.env.world_size

    def validate(self) -> float:
        """Mean validation loss over ``eval_rows`` rows per rank (all ranks averaged).

        bf16 autocast as in training: FSDP2's ``MixedPrecisionPolicy`` already casts inside the
        layers; autocast also covers the ops outside them."""
        loader = torch.utils.data.DataLoader(self.val_reader, batch_size=self.cfg.batch_size)
        batches = itertools.islice(loader, math.ceil(self.cfg.eval_rows / self.cfg.batch_size))
        pairs = ((batch["input_ids"], batch["labels"]) for batch in batches)
        return self._all_mean(validation_loss(self.model, pairs, self.env.device, self.cfg.bf16))

    def _log(self, record: dict[str, Any]) -> None:
        if self.metrics is not None:
            self.metrics.write(record)
            log.info(" ".join(f"{k}={v}" for k, v in record.items()))

    def _checkpoint(self) -> Path:
        trainer = {
            **self.trainer,
            "rows": self.loader.state_dict()["rows"],
            "manifest": {k: self.manifest[k] for k in ("fim_format", "normaliser", "gap_sampler", "seed", "tokenizer")},
        }
        return fsdp.save_sharded(
            self.out,
            self.trainer["step"],
            self.model,
            self.optimizer,
            trainer,
            self.env,
            self.model.config,
            self.tokenizer,
            self.cfg.keep_checkpoints,
        )

    def train(self) -> dict[str, Any]:
        """Run to ``cfg.steps``; returns the trainer record (step, rows, tokens, seconds)."""
        cfg, env = self.cfg, self.env
        batches = iter(self.loader)
        last_saved = self.trainer["step"]
        while self.trainer["step"] < cfg.steps:
            started = time.perf_counter()
            lr = lr_at(self.trainer["step"], cfg.lr, cfg.min_lr, cfg.warmup, cfg.steps)
            result = train_step(
                self.model,
                self.optimizer,
                batches,
                cfg,
                lr=lr,
                device=env.device,
                pad_id=self.fim.pad_id,
                step=self.trainer["step"],
            )
            elapsed = time.perf_counter() - started
            self.trainer["step"] += 1
            self.trainer["tokens"] += result.tokens * env.world_size
            self.trainer["seconds"] += elapsed
            step = self.trainer["step"]
            if logs_at(step, cfg.log_every, step == cfg.steps):
                mean_loss = self._all_mean(result.loss.item())
                self._log(train_row(self.trainer, result, mean_loss, lr, elapsed, env.world_size))
            if self.val_reader is not None and (step % cfg.eval_every == 0 or step == cfg.steps):
                val = self.validate()
                self._log({"step": step, "val_loss": round(val, 4), "val_bpt": round(val / math.log(2), 4)})
            if step % cfg.checkpoint_steps == 0 or step == cfg.steps:
                self._checkpoint()
                last_saved = step
        if last_saved != self.trainer["step"]:
            self._checkpoint()
        if cfg.consolidate and env.is_main:
            folder = fsdp.consolidate(
                self.out / fsdp.CHECKPOINTS_DIR, self.out / MODEL_DIR, DTYPES[cfg.consolidate_dtype]
            )
            log.info("consolidated model folder: %s", folder)
        dist.barrier()
        return self.trainer
