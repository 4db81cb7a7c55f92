"""FSDP2 under torchrun on CPU (gloo, 2 ranks): train from streaming shards, resume,
consolidate, restore through the single-process neural member."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from apollo_restore.hint import Hint
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.scale.fsdp import consolidate, latest_checkpoint
from apollo_restore.scale.shards import export_shards
from apollo_restore.scale.train_fsdp import FsdpConfig

ROOT = Path(__file__).resolve().parents[2]
TORCHRUN = Path(sys.executable).with_name("torchrun")


def _torchrun(run: Path, *overrides: str) -> subprocess.CompletedProcess:
    cmd = [
        str(TORCHRUN),
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "apollo_restore",
        "train-fsdp",
        "--config",
        str(ROOT / "configs" / "tiny_fsdp.yaml"),
        *overrides,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=150)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    return proc


def _metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "out" / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.distributed
def test_fsdp_torchrun_trains_resumes_consolidates_and_restores(prepared, tiny_model_folder, tmp_path):
    export_shards(
        prepared, tmp_path / "shards", "char", rows=256, block_size=256, rows_per_shard=64, seed=0, progress=False
    )
    common = [f"model={tiny_model_folder}", "shards=shards", "out=out"]

    _torchrun(tmp_path, *common, "steps=16", "checkpoint_steps=8", "consolidate=false")
    losses = [m["loss"] for m in _metrics(tmp_path) if "loss" in m]
    assert losses[-1] < losses[0] - 0.5, losses
    ckpt = latest_checkpoint(tmp_path / "out")
    assert ckpt is not None and ckpt.name == "step-0000016"
    assert sorted(p.name for p in ckpt.glob("*.distcp")) == ["__0_0.distcp", "__1_0.distcp"]  # one file per rank
    trainer = json.loads((ckpt / "trainer.json").read_text())
    assert trainer["step"] == 16 and trainer["rows"] == 16 * 4  # rank-local data position

    # relaunch with more steps: resumes from step 16 (model, optimiser, data position), validates, consolidates
    proc = _torchrun(tmp_path, *common, "steps=20", "val_shards=shards", "eval_every=20")
    assert "resumed from" in proc.stderr + proc.stdout
    steps = [m["step"] for m in _metrics(tmp_path) if "loss" in m]
    assert steps[-1] == 20 and steps.count(5) == 1  # continued at 17, did not start over
    assert any("val_loss" in m for m in _metrics(tmp_path))
    model_dir = tmp_path / "out" / "model"
    assert {"config.json", "model.safetensors", "tokenizer.json", "apollo_restore.json"} <= {
        p.name for p in model_dir.iterdir()
    }

    restorer = NeuralMember.load(model_dir)
    cands = restorer.candidates("κομων μουσαιου του ", "κλειτου χαιρειν", Hint.exact(3), k=5)
    assert cands and all(isinstance(c.text, str) for c in cands)

    # the same checkpoint split over several safetensors files loads to the same weights
    split = consolidate(
        tmp_path / "out" / "checkpoints" / "latest", tmp_path / "split", torch.float32, max_shard_bytes=100_000
    )
    assert (split / "model.safetensors.index.json").exists()
    from transformers import AutoModelForCausalLM

    ids = torch.tensor([[1, 5, 10, 11, 4, 12, 6]])
    a = AutoModelForCausalLM.from_pretrained(str(split)).eval()(input_ids=ids).logits
    b = restorer.model(input_ids=ids).logits
    assert torch.allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("name", ["tiny_fsdp.yaml", "large_fsdp.yaml"])
def test_fsdp_shipped_configs_load(name):
    text = (ROOT / "configs" / name).read_text()
    assert "torchrun" in text.splitlines()[1] or "torchrun" in text.splitlines()[2]
    cfg = FsdpConfig.from_dict(yaml.safe_load(text))
    assert cfg.grad_clip == 1.0 and cfg.weight_decay == 0.1


def test_fsdp_config_rejects_unknown_keys():
    with pytest.raises(ValueError, match="learning_rate"):
        FsdpConfig.from_dict({"model": "m", "shards": "s", "learning_rate": 1e-5})
