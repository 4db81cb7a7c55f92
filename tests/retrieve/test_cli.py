"""``apollo-restore index`` and ``apollo-restore parallels`` on the toy corpus."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from apollo_restore.cli.app import app


def test_cli_index_and_parallels(prepared: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "ix"
    done = runner.invoke(app, ["index", "--prepared", str(prepared), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "indexed 7 train documents" in done.output
    assert json.loads((out / "meta.json").read_text())["splits"] == ["train"]

    done = runner.invoke(app, ["parallels", "αὐτοκράτορος Καίσαρος [.8] Σεβαστοῦ", "--index", str(out)])
    assert done.exit_code == 0, done.output
    assert "3× τραιανου" in done.output and "ddb:a, ddb:b, ddb:d" in done.output

    done = runner.invoke(app, ["parallels", "Καίσαρος Τραιανοῦ", "--index", str(out), "--json"])
    assert done.exit_code == 0 and json.loads(done.output)["count"] == 3

    done = runner.invoke(app, ["parallels", "αὐτοκράτορος [.8", "--index", str(out)])
    assert done.exit_code == 2 and "E001" in done.output
    done = runner.invoke(app, ["parallels", "κα σεβαστου", "--index", str(tmp_path / "missing")])
    assert done.exit_code == 2 and "E404" in done.output
