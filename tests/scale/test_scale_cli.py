"""The scale-out subcommands of ``apollo-restore``: shards, finetune, train-fsdp, consolidate."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.scale.shards import read_manifest


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.mark.slow
def test_shards_command_exports_with_weights(prepared, tmp_path, runner):
    out = tmp_path / "shards"
    args = [
        "shards",
        "--prepared",
        str(prepared),
        "--out",
        str(out),
        "--rows",
        "8",
        "--block-size",
        "256",
        "--rows-per-shard",
        "4",
        "--weight",
        "ddb=2",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert manifest["rows"] == 8 and len(manifest["shards"]) == 2
    assert manifest["weights"]["ddb"] == 2.0 and manifest["weights"]["literary"] == 0.3  # the defaults are kept
    assert result.output.endswith(f"in 2 shards → {out}\n")


@pytest.mark.parametrize(
    "args, message",
    [
        (["shards", "--weight", "ddb"], "Invalid value for --weight: 'ddb' is not SOURCE=WEIGHT"),
        (
            ["shards", "--loss", "some"],
            "Invalid value for --loss: FimConfig.loss must be 'middle' or 'all', got 'some'",
        ),
        (
            ["finetune", "--model", "m", "--shards", "s", "steps=abc"],
            "Invalid value: option 'steps' expects int, got 'abc'",
        ),
        (["train-fsdp", "model=m", "shards=s", "bf16=maybe"], "Invalid value: option 'bf16' expects bool, got 'maybe'"),
        (["train-fsdp", "stepz=3"], "Invalid value: unknown option(s): stepz"),
        (
            ["consolidate", "ckpt", "out", "--dtype", "int4"],
            "Invalid value for --dtype: choose one of bfloat16, float16, float32",
        ),
    ],
)
def test_scale_commands_refuse_bad_options(args, message, tmp_path, runner, cli_error):
    if args[0] == "shards":
        args = [*args, "--prepared", str(tmp_path), "--out", str(tmp_path / "s"), "--rows", "4"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert cli_error(result) == message


def test_scale_modules_have_no_mains():
    import apollo_restore.ngram.build
    import apollo_restore.scale.finetune
    import apollo_restore.scale.fsdp
    import apollo_restore.scale.shards
    import apollo_restore.scale.train_fsdp

    for module in (
        apollo_restore.ngram.build,
        apollo_restore.scale.finetune,
        apollo_restore.scale.fsdp,
        apollo_restore.scale.shards,
        apollo_restore.scale.train_fsdp,
    ):
        assert not hasattr(module, "main"), f"{module.__name__}: entry points live in apollo_restore.cli"
