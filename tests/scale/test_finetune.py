"""Single-process fine-tuning of a Hugging Face causal LM (apollo_restore.scale.finetune)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from apollo_restore.hint import Hint
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.scale.finetune import FinetuneConfig, finetune
from apollo_restore.scale.shards import export_shards


@pytest.fixture(scope="module")
def shards(prepared, tmp_path_factory):
    out = tmp_path_factory.mktemp("ft_shards")
    export_shards(prepared, out, "char", rows=128, block_size=256, rows_per_shard=64, seed=1, progress=False)
    return out


def _config(model, shards, out, **kw) -> FinetuneConfig:
    base = dict(
        model=str(model), shards=str(shards), out=str(out), batch_size=4, warmup=3, bf16=False, threads=1, log_every=5
    )
    return FinetuneConfig(**{**base, **kw})


@pytest.mark.slow
def test_finetune_lora_loss_falls_and_model_loads(tiny_model_folder, shards, tmp_path):
    cfg = _config(
        tiny_model_folder, shards, tmp_path, lora=True, lora_r=8, lora_alpha=16, steps=40, lr=2e-2, min_lr=2e-3
    )
    record = finetune(cfg, progress=False)
    losses = record["losses"]
    assert len(losses) == 40 and np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.1
    total = sum(p.numel() for p in NeuralMember.load(tmp_path / "model").model.parameters())
    assert 0 < record["trainable"] < total / 2  # only adapters trained
    assert (tmp_path / "adapter" / "adapter_model.safetensors").exists()
    restorer = NeuralMember.load(tmp_path / "model")
    pool = restorer.candidates("κομων μουσαιου του ", "κλειτου χαιρειν", Hint.exact(3), k=200)  # the whole pool
    assert pool and abs(sum(c.prob for c in pool) - 1) < 1e-6
    assert restorer.candidates("κομων μουσαιου του ", "κλειτου χαιρειν", Hint.exact(3), k=5) == pool[:5]  # k cuts


def test_finetune_full_saves_loadable_folder(tiny_model_folder, shards, tmp_path):
    from transformers import AutoModelForCausalLM

    record = finetune(
        _config(tiny_model_folder, shards, tmp_path, lora=False, steps=4, lr=1e-3, activation_checkpointing=True),
        progress=False,
    )
    assert record["step"] == 4 and all(np.isfinite(record["losses"]))
    model = AutoModelForCausalLM.from_pretrained(str(tmp_path / "model"))
    before = AutoModelForCausalLM.from_pretrained(str(tiny_model_folder))
    assert not torch.equal(model.model.layers[0].mlp.up_proj.weight, before.model.layers[0].mlp.up_proj.weight)


def test_finetune_config_rejects_unknown_keys():
    with pytest.raises(ValueError, match="lora_rank"):
        FinetuneConfig.from_dict({"model": "m", "shards": "s", "lora_rank": 8})
    with pytest.raises(ValueError, match=r"\[E602\] finetune: .* sets model = 'missing'"):
        FinetuneConfig()
