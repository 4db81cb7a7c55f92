"""The single-GPU recipe's code paths, run on CPU with a tiny config: DataLoader workers, the
time budget, and ``best/`` chosen by restoration accuracy on a fixed gap set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apollo_restore.config import load_config
from apollo_restore.data.formats import GapExample, write_gapset
from apollo_restore.evaluate.selection import restoration_validator
from apollo_restore.fim.layout import JOIN_V2
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.model.checkpoint import load_model
from apollo_restore.model.folder import layout_of
from apollo_restore.train.loop import BEST_DIR, TrainConfig, train
from apollo_restore.train.metrics import METRICS_FILE

from ..conftest import MEMORISED

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.mark.parametrize("name", ["gpu_medium", "gpu_medium_middle", "gpu_large", "gpu_distill"])
def test_gpu_configs_are_valid_training_configs(name):
    cfg = TrainConfig.from_dict(load_config(CONFIGS / f"{name}.yaml", [], TrainConfig))
    assert (cfg.layout, cfg.compile, cfg.device, cfg.block_size) == ("join", True, "auto", 1024)
    # the shipped size is the one that can continue in a later session (gpu_train.sh's INIT=auto)
    assert cfg.size == ("large" if name == "gpu_large" else "medium")


def test_tiny_run_with_workers_and_accuracy_selection(tiny_prepared, tmp_path):
    gaps = [
        GapExample(f"g{i}", "ddb", "d", p, s, m, Hint.exact(len(m)), "synthetic")
        for i, (p, m, s) in enumerate(MEMORISED)
    ]
    write_gapset(tmp_path / "gaps.jsonl", gaps)
    cfg = TrainConfig(
        prepared=str(tiny_prepared),
        out=str(tmp_path / "run"),
        size="tiny",
        steps=6,
        batch_size=2,
        block_size=256,
        num_workers=2,
        max_seconds=600,
        eval_every=3,
        eval_rows=2,
        threads=1,
        checkpoint_every=1e9,
        log_every=1,
        val_gaps=str(tmp_path / "gaps.jsonl"),
    )
    result = train(cfg, progress=False, validate=restoration_validator(tmp_path / "gaps.jsonl", k=5))
    assert result["step"] == 6 and "best_score" in result
    records = [json.loads(line) for line in (tmp_path / "run" / METRICS_FILE).read_text().splitlines()]
    scored = [r for r in records if "score" in r]
    assert [r["step"] for r in scored] == [3, 6] and all("w_top1_exact" in r for r in scored)
    meta = json.loads((tmp_path / "run" / BEST_DIR / "apollo_restore.json").read_text())
    assert meta["fim_format"] == JOIN_V2.name and meta["training"]["score"] == max(r["score"] for r in scored)


def test_validator_scores_the_same_one_gap_at_a_time_and_batched(memorised_model, tmp_path):
    # on a GPU the validation gaps are searched together (256 at a time): the score must not move
    gaps = [
        GapExample(f"g{i}{h}", "ddb", "d", p, s, m, hint, "synthetic")
        for i, (p, m, s) in enumerate(MEMORISED)
        for h, hint in enumerate([Hint.exact(len(m)), NO_HINT, Hint.exact(len(m) + 1)])
    ]
    write_gapset(tmp_path / "gaps.jsonl", gaps)
    model, _, meta = load_model(memorised_model)
    layout = layout_of(meta)
    alone = restoration_validator(tmp_path / "gaps.jsonl", k=5, batch=1)(model.eval(), layout)
    together = restoration_validator(tmp_path / "gaps.jsonl", k=5, batch=4)(model, layout)
    assert alone == together and alone["w_top1_exact"] > 0


def test_the_shipped_folders_training_record_is_a_config_of_today():
    """The shipped folder records the run that trained it: every key one ``TrainConfig`` has
    (no ``workers`` of an older trainer), within the bounds a run checks."""
    from apollo_restore.model.folder import read_meta
    from apollo_restore.restoration.config import DEFAULT_MODEL

    record = read_meta(DEFAULT_MODEL)["config"]
    cfg = TrainConfig.from_dict(record)  # every key known, each within its bounds
    assert cfg.num_workers == record["num_workers"] == 7
