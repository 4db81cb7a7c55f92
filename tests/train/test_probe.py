"""The throughput probe (``train --probe``): a few seconds of real steps per candidate setting,
tokens/s per setting, no MFU without a known peak (CPU), nothing written, bad settings refused
before any runs."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.schema.training import SettingError
from apollo_restore.train.loop import TrainConfig
from apollo_restore.train.probe import (
    DEFAULT_SETTINGS,
    ProbeResult,
    probe,
    probe_heading,
    probe_row,
    setting_config,
)


def _cfg(prepared, out) -> TrainConfig:
    return TrainConfig(
        prepared=str(prepared),
        out=str(out),
        size="tiny",
        batch_size=2,
        block_size=128,
        threads=1,
        warmup=2,
        device="cpu",
        bf16=False,
    )


@pytest.mark.slow
def test_probe_times_each_setting_with_its_rows_and_writes_nothing(tiny_prepared, tmp_path):
    cfg = _cfg(tiny_prepared, tmp_path / "run")
    settings = ["", "batch_size=4 grad_accum=2", "num_workers=1"]
    shown = []
    results = probe(cfg, settings, seconds=0.3, warmup_steps=1, on_result=shown.append)
    assert [r.setting for r in results] == settings and shown == results
    assert [r.rows_per_step for r in results] == [2, 8, 2]
    for r in results:
        assert r.error is None and r.steps >= 2 and r.tokens_per_s > 0
        assert r.mfu is None and r.peak_gib is None  # the CPU: no peak to divide by
        assert 0 <= r.data_wait < 1 and r.warmup_s > 0
    heading = probe_heading(cfg, 0.3)
    assert "attention sdpa" in heading and "not known: no MFU" in heading
    assert probe_row(results[1]).startswith("| batch_size=4 grad_accum=2 | 8 |")
    assert re.fullmatch(
        r"\| \(config\) \| 2 \| \d+ \| [\d.]+ M \| – \| \d+% \| – \| [\d.]+ s \|", probe_row(results[0])
    )
    assert not (tmp_path / "run").exists()


def test_probe_settings_are_checked_and_default_to_matched_rows_a_step(tmp_path):
    cfg = _cfg(tmp_path, tmp_path / "run")
    assert {setting_config(cfg, s).batch_size * setting_config(cfg, s).grad_accum for s in DEFAULT_SETTINGS} == {256}
    with pytest.raises(SettingError, match=r"\[E602\] train: --setting 'batch=64' sets batch = 64; it must be one of"):
        setting_config(cfg, "batch=64")
    with pytest.raises(ValueError, match="key=value"):
        setting_config(cfg, "batch_size")


def test_probe_cli_prints_the_table_and_refuses_a_bad_setting(tiny_prepared, tmp_path, cli_error):
    common = ["train", f"prepared={tiny_prepared}", f"out={tmp_path / 'run'}", "size=tiny", "block_size=128"]
    common += ["device=cpu", "bf16=false", "threads=1"]
    result = CliRunner().invoke(app, [*common, "--probe", "0.2", "--setting", "batch_size=2"])
    assert result.exit_code == 0, result.output
    assert "## Throughput probe: `tiny`" in result.output and "| batch_size=2 | 2 |" in result.output
    result = CliRunner().invoke(app, [*common, "--probe", "0.2", "--setting", "batch_size=2", "--setting", "lr=fast"])
    assert result.exit_code == 2 and "[E602] train: --setting 'lr=fast' sets lr = 'fast'" in result.output
    assert "Throughput probe" not in result.output  # refused before any setting ran
    result = CliRunner().invoke(app, [*common, "--setting", "batch_size=2"])
    assert result.exit_code == 2 and "give --probe too" in cli_error(result)
    assert not (tmp_path / "run").exists()


def test_probe_rows_show_mfu_memory_and_errors():
    done = ProbeResult(
        "batch_size=128", 128, 40, tokens_per_s=2.1e6, mfu=0.2346, data_wait=0.01, warmup_s=31.2, peak_gib=12.34
    )
    assert probe_row(done) == "| batch_size=128 | 128 | 40 | 2.100 M | 23.5% | 1% | 12.3 GiB | 31.2 s |"
    assert probe_row(ProbeResult("batch_size=512", 512, error="out of GPU memory")).startswith(
        "| batch_size=512 | 512 | – | out of GPU memory |"
    )


@pytest.mark.slow
def test_probe_a_failing_setting_gets_its_row_and_the_next_runs(tiny_prepared, tmp_path, monkeypatch):
    import apollo_restore.train.probe as probe_module

    real = probe_module.train_step

    def fails_at_three_rows(model, optimizer, batches, cfg, **kw):
        if cfg.batch_size == 3:
            raise RuntimeError("CUDA graphs cannot capture this\nsecond line")
        return real(model, optimizer, batches, cfg, **kw)

    monkeypatch.setattr(probe_module, "train_step", fails_at_three_rows)
    failed, ran = probe(_cfg(tiny_prepared, tmp_path / "run"), ["batch_size=3", ""], seconds=0.2, warmup_steps=1)
    assert failed.error == "RuntimeError: CUDA graphs cannot capture this" and failed.tokens_per_s is None
    assert ran.error is None and ran.steps >= 2
    assert "| batch_size=3 | 3 | – | RuntimeError: CUDA graphs cannot capture this |" in probe_row(failed)


def test_compile_mode_is_checked(tmp_path):
    with pytest.raises(ValueError, match="sets compile_mode = 'fast'; it must be one of default, reduce-overhead"):
        TrainConfig(prepared=str(tmp_path), compile_mode="fast")
