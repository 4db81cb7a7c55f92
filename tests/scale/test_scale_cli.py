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


@pytest.mark.parametrize(
    "args, message",
    [
        (["finetune", "--model", "m", "--shards", "s", "steps=abc"], "[E602] finetune: the config (--config and its "
         "key=value options) sets steps = 'abc'; it must be a whole number from 1 to 1000000000"),
        (["train-fsdp", "model=m", "shards=s", "bf16=maybe"], "[E602] train-fsdp: the config (--config and its "
         "key=value options) sets bf16 = 'maybe'; it must be true or false"),
        (["train-fsdp", "stepz=3"], "sets model = 'missing'; it must be text"),
        (["train-fsdp", "model=m", "shards=s", "stepz=3"], "sets stepz = 3; it must be one of out, steps,"),
    ],
)  # fmt: skip
def test_scale_settings_the_schema_refuses_are_E602(args, message, runner):
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output, result.output


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
