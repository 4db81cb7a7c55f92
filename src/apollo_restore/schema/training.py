"""The settings a training run takes, declared once with their defaults and bounds:
:class:`RecipeConfig` (what every recipe shares: the optimiser step, its schedule, the run),
:class:`TrainConfig` (the single-device recipe; the scale recipes extend ``RecipeConfig`` in
:mod:`apollo_restore.scale`) and :class:`AttributionTrainConfig` (the attribution model's run). Every
value is checked when a config is made, by pydantic, so a refusal comes before any data is read,
as a numbered error naming where it was given:

    TrainConfig.from_dict({"batch_size": 100000000})   # SettingError: [E602] train: ... batch_size ...
    TrainConfig.from_dict(overrides, where="--setting 'batch_size=4097'")
    cfg.model_dump()                                   # what a checkpoint records

Each number is bounded: the bounds let a real GPU run through (micro-batches up to 4,096 rows,
blocks up to 8,192 tokens, 64 data workers) and refuse what could only exhaust memory or time.
What only the layers above know (a model size, a FIM layout) is checked by
:func:`~apollo_restore.train.loop.check_run`, with the same error, before any data is read.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from apollo_restore.errors import Errors
from apollo_restore.schema.base import Problem, SchemaError, Settings, number, problem_of, text, whole

#: Most rows of a micro-batch (per device).
MAX_BATCH_ROWS = 4096
#: Most tokens of a row.
MAX_BLOCK = 8192
#: Most steps, rows or seconds a run may count (about 30 years of seconds).
MAX_COUNT = 1_000_000_000
PATH = text(4096, "a path")
NAME = text(100, "a name")
SECONDS = number(0, MAX_COUNT, "seconds", above=True)
SOURCE = Annotated[str, Field(min_length=1, max_length=100)]
# the bounded types of the fields a recipe re-states with its own default (pydantic re-declares a
# field with its annotation)
STEPS = whole(1, MAX_COUNT, "optimiser steps in all")
BATCH = whole(1, MAX_BATCH_ROWS, "rows a micro-step")
LR = number(0, 1, "the peak learning rate", above=True)
MIN_LR = number(0, 1, "the final learning rate")
WARMUP = whole(0, MAX_COUNT, "linear warm-up steps")
WORKERS = whole(0, 64, "DataLoader worker processes")
SEED = whole(0, 2**32 - 1, "the seed")
FLAG = Annotated[bool, Field(description="true or false")]
#: Where a run trains: ``"auto"`` is CUDA when available, else the CPU.
DEVICES = ("auto", "cpu", "cuda")
#: What a row's loss counts: every text position (FIM pretraining), or the middle and EOS only.
LOSS_MODES = ("all", "middle")
#: The modes of ``torch.compile`` a run may name.
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
#: source → sampling weight multiplier on letter counts (documentary papyri 3×, as in the paper);
#: the default of every training recipe.
SOURCE_WEIGHTS: dict[str, float] = {"ddb": 3.0, "dclp": 3.0, "inscription": 1.0, "literary": 0.3}
#: Where a config's values came from, in its refusals, unless the caller says (``--setting ...``).
THE_CONFIG = "the config (--config and its key=value options)"


class SettingError(ValueError):
    """A training setting the schema refuses (``E602``), naming the command, where it was given
    and the field.

    Attributes:
        code: ``"E602"``.
        problem: the schema's :class:`~apollo_restore.schema.base.Problem`.
    """

    def __init__(self, where: str, err: SchemaError, command: str = "train") -> None:
        p = err.problem
        if p.unknown is not None:  # a key the schema does not declare
            field, value, expected = f"{p.unknown}", p.value, f"one of {p.known}"
        else:
            field, value, expected = p.field, p.value, p.expected
        message = Errors.E602.format(command=command, where=where, field=field, value=value, expected=expected)
        super().__init__(message)
        self.code, self.problem = "E602", p


class RunSettings(Settings):
    """The settings of a command's run (``train``, ``train-attribution``): made from a mapping (a
    YAML file and its ``key=value`` overrides), each value checked against its field, a refusal
    an ``E602`` naming the command, where the values came from and the field.

    Raises:
        SettingError: ``E602`` on construction, the first value refused.
    """

    #: the command whose settings these are, in refusals
    command: ClassVar[str] = "train"

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as err:
            raise SettingError(THE_CONFIG, SchemaError(problem_of(err, type(self))), self.command) from None

    @classmethod
    def from_dict(cls, values: Any, where: str = THE_CONFIG) -> Self:
        """The config a mapping (a YAML file and its ``key=value`` overrides) gives, each value
        checked against its field; ``where`` names what the values came from, in refusals.

        Raises:
            SettingError: ``E602``, the first value refused (an unknown key, a value of another
                type or out of its bounds).
        """
        if not isinstance(values, dict) or not all(isinstance(key, str) for key in values):
            raise SettingError(where, SchemaError(Problem("the options", values, "a mapping of names")), cls.command)
        try:
            return cls(**values)  # pydantic validates through __init__
        except SettingError as err:
            raise SettingError(where, SchemaError(err.problem), cls.command) from None


class RecipeConfig(RunSettings):
    """Options of any training run; checked when made, saved with the run.

    Attributes:
        out: run folder (``metrics.jsonl``, checkpoints, model folders).
        steps: optimiser steps in all (a resumed run continues to this number).
        batch_size: rows per micro-step (per rank); grad_accum: micro-steps per optimiser step.
        lr, min_lr, warmup: peak and final learning rate (``min_lr`` ≤ ``lr``), linear-warmup
            steps (then cosine; :func:`~apollo_restore.train.schedule.lr_at`).
        weight_decay: AdamW decay of the matrices (vectors never decay).
        grad_clip: the global gradient norm is clipped to this.
        bf16: bf16 autocast of the forward pass (over fp32 weights).
        log_every: steps between training rows of ``metrics.jsonl`` (the first and last step
            always get one).
        num_workers: DataLoader worker processes making batches (0: the training process).
        seed: seeds the model's initialisation and the data order.
        threads: torch intra-op threads (0 = torch's default).

    Raises:
        SettingError: ``E602`` on construction, the first value refused.
    """

    out: PATH = "runs/default"
    steps: STEPS = 20000
    batch_size: BATCH = 8
    grad_accum: whole(1, 1024, "micro-steps an optimiser step") = 1
    lr: LR = 2e-3
    min_lr: MIN_LR = 2e-4
    warmup: WARMUP = 200
    weight_decay: number(0, 10, "AdamW decay") = 0.1
    grad_clip: number(0, 1e6, "the largest global gradient norm") = 1.0
    bf16: FLAG = True
    log_every: whole(1, MAX_COUNT, "steps between metrics rows") = 10
    num_workers: WORKERS = 0
    seed: SEED = 1337
    threads: whole(0, 1024, "torch threads; 0: its default") = 0

    @model_validator(mode="after")
    def _schedule(self) -> Self:
        if self.min_lr > self.lr:
            raise PydanticCustomError("order", f"at most lr ({self.lr:g})", {"field": "min_lr", "value": self.min_lr})
        return self


class TrainConfig(RecipeConfig):
    """Everything a single-device training run needs; saved in every checkpoint. The optimiser,
    schedule and run options (``out``, ``steps``, ``batch_size``, ``grad_accum``, ``lr``, …) are
    those of ``RecipeConfig``, with its defaults.

    Attributes:
        prepared: folder written by ``apollo-restore prepare``.
        size: named model size (:data:`~apollo_restore.model.builders.SIZES`).
        init_from: model folder to start from (warm restart); ignored when ``out`` holds a checkpoint.
        block_size: tokens per row.
        weights: source → sampling weight multiplier on letter counts.
        loss: "all" (FIM pretraining) or "middle" (middle + EOS only).
        eval_every: steps between validation passes; eval_rows: validation rows per pass.
        checkpoint_every: seconds between checkpoints.
        layout: FIM layout, short or versioned name (:mod:`apollo_restore.fim.layout`).
        device: ``"auto"`` (CUDA when available), ``"cpu"`` or ``"cuda"``.
        compile: run the model through ``torch.compile``.
        compile_mode: its mode (:data:`COMPILE_MODES`): ``"default"``, ``"reduce-overhead"``
            (CUDA graphs: no kernel-launch gaps), ``"max-autotune"``, ``"max-autotune-no-cudagraphs"``
            (the GEMMs tuned at compile time: minutes); one for ``train --probe`` to compare.
        max_seconds: stop after this much training time; the LR schedule then runs on time.
        time_limit: stop this process after this many wall-clock seconds of its loop (training,
            validation passes and checkpoints), the time of the last validation pass kept in
            reserve so that the final one and its ``best/`` fit inside; checkpoint written. For a
            job with a wall-time limit (a batch scheduler's, a preemptible machine's): the next
            ``train`` with the same ``out`` resumes from the checkpoint, and the schedule still
            runs on ``max_seconds`` of all the processes together.
        val_gaps: a gap-set JSONL scored by the ``validate`` callback (restoration accuracy).
        teacher: a model folder of the same tokenizer to distil from
            (:class:`~apollo_restore.train.step.Teacher`: its next-token distributions computed on
            the fly, bf16 like the student's forward); ``None``: plain cross-entropy.
        distill_weight: the distillation term's share of the loss (0–1).
        distill_temperature: the softening of both distributions (> 0).
    """

    prepared: PATH = "data/prepared"
    size: NAME = "small"
    init_from: PATH | None = None
    block_size: whole(8, MAX_BLOCK, "tokens a row") = 512
    weights: Annotated[dict[SOURCE, number(0, 1000, "a sampling weight")], Field(max_length=100)] = Field(
        default_factory=lambda: dict(SOURCE_WEIGHTS)
    )
    loss: Literal[LOSS_MODES] = Field("all", description='"all" or "middle"')
    eval_every: whole(1, MAX_COUNT, "steps between validation passes") = 200
    eval_rows: whole(0, 65_536, "validation rows a pass") = 64
    checkpoint_every: number(0, 1e10, "seconds between checkpoints") = 300.0
    layout: NAME = "join"
    device: Literal[DEVICES] = Field("auto", description='"auto", "cpu" or "cuda"')
    compile: FLAG = False
    compile_mode: Literal[COMPILE_MODES] = Field("default", description=f"one of {', '.join(COMPILE_MODES)}")
    max_seconds: SECONDS | None = None
    time_limit: SECONDS | None = None
    val_gaps: PATH | None = None
    teacher: PATH | None = None
    distill_weight: number(0, 1, "the distillation's share of the loss") = 0.5
    distill_temperature: number(0, 100, "the distillation's temperature", above=True) = 1.0


class AttributionTrainConfig(RunSettings):
    """An attribution training run (``apollo-restore train-attribution``: ``attribution/train.py``).

    Attributes:
        prepared: folder written by ``apollo-restore prepare`` (its train and validation splits).
        corpora: folder holding ``hgv-places-dates.tsv`` and ``inscriptions/`` (the labels).
        out: the model folder written.
        buckets: rows of the hashed n-gram embedding; dim: its width.
        epochs: passes over the training texts (the one of least validation loss is kept).
        seed: seeds the crops, the fills, the initialisation and the order.
        fill: share of the training documents read with their supplements filled in.
        cache: a folder keeping the texts' features between runs (``None``: none).
        neighbours: index the training documents and mix their votes in (:mod:`~apollo_restore.attribution.neighbours`).
    """

    command: ClassVar[str] = "train-attribution"

    prepared: PATH = "data/prepared"
    corpora: PATH = "corpora"
    out: PATH = "runs/attribution"
    buckets: whole(256, 2**20, "rows of the hashed n-gram embedding") = 2**17
    dim: whole(2, 256, "the embedding's width") = 128
    epochs: whole(1, 50, "passes over the training texts") = 1
    seed: SEED = 0
    fill: number(0, 1, "share of training documents with their supplements filled in") = 0.5
    cache: PATH | None = None
    neighbours: FLAG = True


def refused(cfg: RecipeConfig, field: str, expected: str, where: str = THE_CONFIG) -> SettingError:
    """The ``E602`` refusing ``cfg``'s ``field`` (a check only a layer above can make: a model
    size, a FIM layout), saying what it must be."""
    return SettingError(where, SchemaError(Problem(field, getattr(cfg, field), expected)), cfg.command)


__all__ = [
    "AttributionTrainConfig",
    "COMPILE_MODES",
    "DEVICES",
    "LOSS_MODES",
    "MAX_BATCH_ROWS",
    "MAX_BLOCK",
    "SOURCE_WEIGHTS",
    "THE_CONFIG",
    "RecipeConfig",
    "RunSettings",
    "SettingError",
    "TrainConfig",
    "refused",
]
