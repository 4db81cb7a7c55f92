"""The three recipes' options share one base (:class:`RecipeConfig`): the same fields, the same
type checks, each recipe's own defaults."""

from __future__ import annotations

import pytest

from apollo_restore.scale.finetune import FinetuneConfig
from apollo_restore.scale.train_fsdp import FsdpConfig
from apollo_restore.train.loop import TrainConfig
from apollo_restore.train.recipe import RecipeConfig

REQUIRED = {TrainConfig: {}, FinetuneConfig: {"model": "m", "shards": "s"}, FsdpConfig: {"model": "m", "shards": "s"}}
#: (out, steps, batch_size, lr, min_lr, warmup, seed, num_workers) of each recipe
DEFAULTS = {
    TrainConfig: ("runs/default", 20000, 8, 2e-3, 2e-4, 200, 1337, 0),
    FinetuneConfig: ("runs/finetune", 1000, 2, 1e-4, 1e-6, 100, 0, 0),
    FsdpConfig: ("runs/fsdp", 10000, 2, 1e-5, 1e-7, 1500, 0, 2),
}


@pytest.mark.parametrize("cls", list(REQUIRED))
def test_recipe_configs_share_the_base_fields_and_keep_their_defaults(cls):
    assert issubclass(cls, RecipeConfig)
    assert set(RecipeConfig.model_fields) <= set(cls.model_fields)
    for name, field in RecipeConfig.model_fields.items():  # each recipe keeps the base's bounds
        assert cls.model_fields[name].metadata == field.metadata, name
    cfg = cls.from_dict(REQUIRED[cls])
    keys = ("out", "steps", "batch_size", "lr", "min_lr", "warmup", "seed", "num_workers")
    assert tuple(getattr(cfg, k) for k in keys) == DEFAULTS[cls]
    assert (cfg.grad_accum, cfg.weight_decay, cfg.grad_clip, cfg.bf16, cfg.log_every) == (1, 0.1, 1.0, True, 10)


@pytest.mark.parametrize("cls", list(REQUIRED))
@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"lr": "fast"}, "sets lr = 'fast'; it must be a number in"),
        ({"grad_accum": 1.5}, "sets grad_accum = 1.5; it must be a whole number"),
        ({"bf16": "maybe"}, "sets bf16 = 'maybe'; it must be true or false"),
        ({"grad_accum": 0}, "sets grad_accum = 0"),
        ({"min_lr": 1.0, "lr": 0.1}, r"sets min_lr = 1.0; it must be at most lr \(0.1\)"),
    ],
)
def test_recipe_configs_reject_wrong_types_and_values(cls, values, message):
    with pytest.raises(ValueError, match=r"\[E602\] .*" + message):
        cls.from_dict({**REQUIRED[cls], **values})
